# Shared by the benchmark scripts (sourced, not run): medians of RUNS runs
# (hyperfine when installed, else a date loop) and peak memory from
# /usr/bin/time -v. The caller sets RUNS and WORK (a scratch folder).

# Median wall time (ms) of a command, run RUNS times after one warm-up.
median_ms() {
    if command -v hyperfine >/dev/null 2>&1; then
        hyperfine --warmup 1 --runs "$RUNS" --export-json "$WORK/h.json" --style none "$1" >/dev/null 2>&1
        python3 -c "import json;r=json.load(open('$WORK/h.json'))['results'][0];print(f\"{r['median']*1000:.1f}\")"
    else
        bash -c "$1" >/dev/null 2>&1
        local times=()
        for _ in $(seq "$RUNS"); do
            local s e
            s=$(date +%s%N); bash -c "$1" >/dev/null 2>&1; e=$(date +%s%N)
            times+=($(( (e - s) / 1000 )))
        done
        printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f\n", m/1000}'
    fi
}

# Peak resident memory (MB) of one run.
peak_mb() {
    /usr/bin/time -v bash -c "$1" 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ {printf "%.1f\n", $2/1024}'
}

# Prints a figure; its median stays in LAST_MS for ratios.
report() {
    LAST_MS="$(median_ms "$2")"
    printf '%-58s median %8s ms   peak %7s MB\n' "$1" "$LAST_MS" "$(peak_mb "$2")"
}
