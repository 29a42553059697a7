#!/usr/bin/env bash
# Benchmark of the file side under hostile or heavy input (not a test).
#
#   benches/files.sh              # RUNS=3 by default
#   BIN=/path/to/vaultbench benches/files.sh   # another build, to compare
#
# 1. bless of a result whose 180 transcripts weigh about 100 MB (the archive
#    is streamed to disk: memory should not grow with it)
# 2. publish of a docs folder holding a 512 MiB asset: first build and an
#    unchanged rebuild (copies are compared and written in chunks)
# 3. suite check with a task file that is a link to /dev/zero (refused at
#    once, never read)
# 4. six `run`s started together into one results folder, TRIALS times:
#    how many trials lost a sweep (two sweeps sharing one run id)
#
# Medians of RUNS runs, peak memory from /usr/bin/time -v.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-3}"
TRIALS="${TRIALS:-20}"
ROOT="$(pwd)"
if [ -z "${BIN:-}" ]; then
    cargo build --release --quiet
    BIN="$ROOT/target/release/vaultbench"
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=benches/lib.sh
source "$ROOT/benches/lib.sh"
echo "machine: $(nproc) cores; runs per figure: $RUNS; binary: $BIN"

# 1. bless with large transcripts: the committed baseline as a result, its
#    transcripts unpacked beside it, 20 of them padded with 5 MB of base64.
STEM=2026-11-22T01-39-07-811Z
mkdir -p "$WORK/bless/results/$STEM"
cp evals/baselines/openai-smollm2-135m-instruct.json "$WORK/bless/results/$STEM.json"
tar xzf "evals/baselines/evidence/openai-smollm2-135m-instruct/$STEM.tar.gz" -C "$WORK/bless/results/$STEM"
python3 - "$WORK/bless/results/$STEM" <<'PY'
import base64, json, os, sys
folder = sys.argv[1]
for name in sorted(os.listdir(folder))[:20]:
    path = os.path.join(folder, name)
    t = json.load(open(path))
    t["pad"] = base64.b64encode(os.urandom(4 * 1024 * 1024)).decode()
    json.dump(t, open(path, "w"))
PY
echo "transcripts: $(du -sh "$WORK/bless/results/$STEM" | cut -f1)"
report "bless, 180 transcripts (~100 MB)" \
    "cd $WORK/bless && rm -rf b && $BIN bless --baselines b results/$STEM.json"

# 2. publish with a 512 MiB asset.
mkdir -p "$WORK/pub/docs"
echo "# Home" > "$WORK/pub/docs/index.md"
head -c $((512 * 1024 * 1024)) /dev/urandom > "$WORK/pub/docs/big.bin"
report "publish, 512 MiB asset, first build" \
    "cd $WORK/pub && rm -rf site && $BIN publish --baselines none --suite none"
report "publish, 512 MiB asset, unchanged rebuild" \
    "cd $WORK/pub && $BIN publish --baselines none --suite none"

# 3. a task that never ends.
cp -r evals "$WORK/suite"
ln -s /dev/zero "$WORK/suite/tasks/zero.json"
report "suite check, a task linked to /dev/zero (10 s cap)" \
    "cd $WORK && timeout 10 $BIN suite check --suite suite; true"
rm "$WORK/suite/tasks/zero.json"

# 4. concurrent sweeps into one results folder.
lost=0
for _ in $(seq "$TRIALS"); do
    rm -rf "$WORK/suite/results"
    for _ in 1 2 3 4 5 6; do
        (cd "$WORK" && "$BIN" run --provider reference --suite suite --results suite/results --task carrow --jobs 1 >/dev/null 2>&1) &
    done
    wait
    [ "$(ls "$WORK/suite/results" | grep -c '\.json$')" -lt 6 ] && lost=$((lost + 1))
done
echo "six concurrent runs into one folder: $lost of $TRIALS trials lost a sweep"
