#!/usr/bin/env bash
# What `vaultbench publish` costs as baselines add up: wall time, peak memory
# and site size for N baselines of 54 tasks x 5 runs (the reference harness's
# two published baselines, copied under N model names), for N = 50, 100 and
# 200 by default. Linear time shows as time/N steady; bounded memory as a peak
# that grows with the parsed baselines only. Not a test; nothing here is
# committed output.
#
#   benches/publish_scale.sh               # N = 50 100 200, target/release/vaultbench
#   BIN=... RUNS=3 benches/publish_scale.sh 200
#
# Measured 2026-11-26, 2-core machine, N = 200 (124 MB of baselines, a 242 MB
# site), one run each, A/B in one session: peak 322-323 MB before the run
# pages shared each task's check words, 297-302 MB after, 5.4-5.6 s either way
# (596 MB and 18.6 s before this round's streaming write stage). Later the
# same day, one run each in one session: 301 MB before the build kept
# records of its pages for the next one, 304-305 MB after (a 247 MB site
# with its 10,800 page records, which share their search sections with the
# index); 4.2-7.3 s either way on a machine busy with other work.
#
# Needs the reference corpus at ../shared/upstream (its baselines are read in
# place, never copied into the project) and /usr/bin/time.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
BIN="${BIN:-$ROOT/target/release/vaultbench}"
RUNS="${RUNS:-3}"
UP="${UPSTREAM:-$ROOT/../shared/upstream}"
[ -x "$BIN" ] || { echo "no binary at $BIN (cargo build --release)" >&2; exit 1; }
[ -d "$UP/baselines" ] || { echo "skipping: the reference corpus is not at $UP" >&2; exit 0; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 1; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/docs"
echo "# Scale" >"$WORK/docs/index.md"

SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(50 100 200)

printf '%5s %9s %8s %9s %10s %9s\n' N input_MB wall_s ms_per_N peak_MB site_MB
for n in "${SIZES[@]}"; do
    dir="$WORK/baselines-$n"
    mkdir -p "$dir"
    python3 - "$UP/baselines" "$dir" "$n" <<'PY'
import json, os, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted(f for f in os.listdir(src) if f.endswith(".json"))
texts = [open(os.path.join(src, f)).read() for f in files]
for i in range(n):
    r = json.loads(texts[i % len(texts)])
    r["model"] = f"{r['model']}-copy-{i:03d}"
    json.dump(r, open(os.path.join(out, f"gemini-copy-{i:03d}.json"), "w"), indent=2)
PY
    input_mb=$(du -sm "$dir" | cut -f1)
    walls=()
    peak=0
    for _ in $(seq "$RUNS"); do
        rm -rf "$WORK/site"
        /usr/bin/time -f "%e %M" -o "$WORK/time" "$BIN" publish --docs "$WORK/docs" --baselines "$dir" \
            --suite "$WORK/none" --out "$WORK/site" >"$WORK/log" 2>&1 || { tail -3 "$WORK/log" >&2; exit 1; }
        read -r wall kib <"$WORK/time"
        walls+=("$wall")
        [ $((kib / 1024)) -gt "$peak" ] && peak=$((kib / 1024))
    done
    median="$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")"
    site_mb=$(du -sm "$WORK/site" | cut -f1)
    per=$(python3 -c "print(f'{$median * 1000 / $n:.1f}')")
    printf '%5s %9s %8s %9s %10s %9s\n' "$n" "$input_mb" "$median" "$per" "$peak" "$site_mb"
    rm -rf "$dir" "$WORK/site"
done
