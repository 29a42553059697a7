#!/usr/bin/env bash
# Peak memory and wall time of vaultbench against a hostile model and hostile
# tasks (not a test; nothing here is committed output).
#
#   benches/hostile.sh                    # every scenario, with target/release/vaultbench
#   BIN=/path/to/vaultbench benches/hostile.sh yaml-update regex-tool
#
# Scenarios (see benches/hostile_model.py for what each one does):
#   yaml-update yaml-assert yaml-session yaml-skill yaml-publish
#       frontmatter nested 2000 levels deep, reached from update_frontmatter,
#       a frontmatterEquals assertion, recall_sessions, a seeded skill, publish
#   regex-tool regex-matcher regex-assertion rescore
#       catastrophic patterns ((a+)+$, (a|a)*b) in find_files_by_content, a task
#       regex matcher, a fileMatches assertion, and `rescore` of a result whose recorded answer meets one
#   giant-write big-write many-reads many-searches deep-args
#       an OpenAI-compatible loopback model: one 200 MB (and one 3 MB) write_file, 300 reads of
#       a 2 MB note in one reply, 10,000 searches in one reply, deeply nested arguments,
#       and `mixed`: 8 tasks of all of it at once (JOBS=8 runs them together)
#
# For each: exit status, peak RSS (/usr/bin/time -v), wall time, the bytes
# written under the results folder and the temporary vaults left behind in
# the scenario's own TMPDIR. Tasks have timeoutMs = 3000 (60000 where a
# transfer takes seconds); a scenario is stopped after LIMIT seconds (default
# 300). JOBS (default 1, as for any local server) sets --jobs of the model scenarios.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
BIN="${BIN:-$ROOT/target/release/vaultbench}"
LIMIT="${LIMIT:-300}"
[ -x "$BIN" ] || { echo "no binary at $BIN (cargo build --release)" >&2; exit 1; }
WORK="$(mktemp -d)"
SERVER_PID=""
trap 'if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; fi; rm -rf "$WORK"' EXIT
python3 benches/hostile_model.py suite "$WORK"

ALL=(yaml-update yaml-assert yaml-session yaml-skill yaml-publish regex-tool regex-matcher regex-assertion rescore
    giant-write big-write many-reads many-searches deep-args mixed)
SCENARIOS=("$@")
[ ${#SCENARIOS[@]} -eq 0 ] && SCENARIOS=("${ALL[@]}")

printf '%-16s %5s %10s %9s %12s %7s\n' scenario exit peak_MB wall_s results_MB vaults
for s in "${SCENARIOS[@]}"; do
    dir="$WORK/$s"
    tmp="$WORK/tmp-$s"
    mkdir -p "$tmp"
    env_args=(TMPDIR="$tmp")
    case "$s" in
        yaml-publish)
            cmd=("$BIN" publish --docs "$dir/docs" --baselines "$dir/baselines" --out "$dir/site") ;;
        rescore)
            (cd "$dir" && "$BIN" run --suite evals --results evals/results --provider reference >/dev/null 2>&1)
            result="$(ls "$dir"/evals/results/*.json | head -1)"
            python3 - "$result" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["tasks"][0]["runs"][0]["response_text"] = "a" * 30
json.dump(r, open(sys.argv[1], "w"), indent=2)
PY
            cmd=("$BIN" rescore "$result") ;;
        giant-write | big-write | many-reads | many-searches | deep-args | mixed)
            python3 benches/hostile_model.py serve "$s" "$WORK/port-$s" &
            SERVER_PID=$!
            for _ in $(seq 600); do [ -s "$WORK/port-$s" ] && break; sleep 0.1; done
            env_args+=(OPENAI_BASE_URL="http://127.0.0.1:$(cat "$WORK/port-$s")/v1")
            cmd=("$BIN" run --suite "$dir/evals" --results "$dir/evals/results" --provider openai --model hostile
                --jobs "${JOBS:-1}") ;;
        *)
            cmd=("$BIN" run --suite "$dir/evals" --results "$dir/evals/results" --provider reference) ;;
    esac
    (cd "$dir" && env "${env_args[@]}" /usr/bin/time -v timeout "$LIMIT" "${cmd[@]}" >"$WORK/$s.out" 2>"$WORK/$s.err")
    code=$?
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""; fi
    peak_kb="$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/$s.err")"
    wall="$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/$s.err")"
    wall_s="$(python3 -c "p='$wall'.split(':');print(f'{sum(float(x)*60**i for i,x in enumerate(reversed(p))):.2f}')" 2>/dev/null || echo '?')"
    results_mb="$(du -sm "$dir/evals/results" 2>/dev/null | cut -f1)"
    vaults="$(find "$tmp" -mindepth 1 -maxdepth 2 -name 'vaultbench-*' -type d | wc -l)"
    printf '%-16s %5s %10s %9s %12s %7s\n' "$s" "$code" "$(( ${peak_kb:-0} / 1024 ))" "$wall_s" "${results_mb:--}" "$vaults"
    if [ -n "${VERBOSE:-}" ]; then tail -5 "$WORK/$s.out"; grep -v '^\s' "$WORK/$s.err" | tail -5; fi
done
