#!/usr/bin/env bash
# Benchmark of `vaultbench publish` (not a test; nothing here is committed output).
#
#   benches/publish.sh            # RUNS=7 by default
#
# 1. full build of our docs/ with the reference harness's 2 baselines
# 2. full build of our docs/ with 200 synthetic baselines of realistic size
#    (copies of those baselines under new model names, made in a temp folder)
# 3. the reference project's docs corpus (32 pages) with its baselines, cold
#    (no cache of highlighted code blocks) and warm, and mdBook 0.5.4 on the
#    same pages (a temporary install under /tmp/mdbook)
# 4. --watch: rebuild time after the debounce for a page edit and a new
#    baseline, as the watcher reports it, and edit-to-served-page latency
# 5. the explorer figure: our docs + the reference harness's 2 baselines +
#    ours with its evidence archive (a page per task, per transcript, per
#    pair), full build, and the --watch rebuild after one baseline changes
#
#   SECTIONS="3 5" benches/publish.sh   # only some sections (default: all)
#
# Medians of RUNS runs (hyperfine when installed, else a date loop), peak
# memory from /usr/bin/time -v. Needs ../shared/upstream (the corpus).
#
# Measured 2026-11-26 (2-core machine, RUNS=15, section 3, the same run):
# warm 60.6 ms (pages left as the last build wrote them, highlight cache),
# cold 191 ms (new output folder, no cache), mdBook 431 ms: 7.1x warm, 2.3x
# cold. Before warm builds kept unchanged pages: warm 72-104 ms, cold 166
# ms, mdBook 302-449 ms: 4.2-4.3x warm, 2.2-2.7x cold.
#
# Measured earlier (shared 2-core machine under other load: mdBook took 482 ms on
# the 32 pages it builds in 275 ms when quiet; RUNS=15, sections 3 and 5):
#   5. full build 141 ms (mdBook on the 6 docs pages alone: 175 ms); --watch
#      rebuild after one baseline changed 50 ms (41-60)
#   3. the 32 reference pages + 2 baselines: warm 88 ms, cold 155 ms;
#      mdBook 482 ms: 5.5x faster warm, 3.1x cold (cold is mostly the
#      TypeScript grammar's compilation)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-7}"
UP="$(cd ../shared/upstream 2>/dev/null && pwd)" || { echo "the upstream corpus (../shared/upstream) is needed" >&2; exit 1; }
ROOT="$(pwd)"
BIN="$ROOT/target/release/vaultbench"
cargo build --release --quiet
WORK="$(mktemp -d)"
trap 'kill "${WATCH_PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT

# shellcheck source=benches/lib.sh
source "$ROOT/benches/lib.sh"

# Size of a built site's search index, raw and gzipped.
index_size() {
    printf '%-58s %s KiB (%s KiB gzipped)\n' "search index: $1" \
        "$(( $(stat -c %s "$2/search-index.js") / 1024 ))" "$(( $(gzip -9c "$2/search-index.js" | wc -c) / 1024 ))"
}

SECTIONS="${SECTIONS:-1 2 3 4 5}"
want() { [[ " $SECTIONS " == *" $1 "* ]]; }
med() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; print m}'; }
# start_watch DIR SUITE LOG: `publish --watch` in DIR, waiting until it serves.
start_watch() {
    (cd "$1" && exec "$BIN" publish --watch --suite "$2" > "$3" 2>&1) &
    WATCH_PID=$!
    for _ in $(seq 100); do grep -q "Serving the site at" "$3" 2>/dev/null && break; sleep 0.1; done
}
stop_watch() { kill -INT "$WATCH_PID"; wait "$WATCH_PID" 2>/dev/null || true; WATCH_PID=""; }
# mdbook_book SRC DIR TITLE: an mdBook in DIR of the pages of SRC, every page in its summary.
mdbook_book() {
    mkdir -p "$2"
    cp -r "$1" "$2/src"
    chmod -R u+w "$2/src"
    printf '[book]\ntitle = "%s"\n\n[output.html]\n' "$3" > "$2/book.toml"
    {
        echo "# Summary"
        echo
        (cd "$2/src" && find . -name '*.md' ! -name SUMMARY.md | sort | sed 's|^\./||') |
            while read -r page; do echo "- [$page]($page)"; done
    } > "$2/src/SUMMARY.md"
}
echo "machine: $(nproc) cores; runs per figure: $RUNS; sections: $SECTIONS"

export VAULTBENCH_CACHE_DIR="$WORK/cache"
# 1. Our docs + the upstream baselines.
if want 1; then
mkdir -p "$WORK/p1"
report "our docs + 2 upstream baselines" \
    "cd $WORK/p1 && $BIN publish --docs $ROOT/docs --baselines $UP/baselines --suite $UP --out site"
index_size "our docs + 2 upstream baselines" "$WORK/p1/site"
fi

# 2. Our docs + 200 synthetic baselines.
if want 2; then
mkdir -p "$WORK/b200" "$WORK/p2"
i=0
for n in $(seq 100); do
    for f in "$UP"/baselines/*.json; do
        i=$((i + 1))
        sed "0,/\"model\": \"[^\"]*\"/s//\"model\": \"synthetic-$i\"/" "$f" > "$WORK/b200/synthetic-$i.json"
    done
done
echo "synthetic baselines: $(ls "$WORK/b200" | wc -l) files, $(du -sh "$WORK/b200" | cut -f1)"
report "our docs + 200 synthetic baselines" \
    "cd $WORK/p2 && $BIN publish --docs $ROOT/docs --baselines $WORK/b200 --suite $UP --out site"
report "our docs + 200 synthetic baselines, one parsing thread" \
    "cd $WORK/p2 && VAULTBENCH_PARSE_THREADS=1 $BIN publish --docs $ROOT/docs --baselines $WORK/b200 --suite $UP --out site"
echo "pages written: $(find "$WORK/p2/site" -name '*.html' | wc -l), $(du -sh "$WORK/p2/site" | cut -f1)"
rm -rf "$WORK/p2" "$WORK/b200"
fi

# 3. The upstream docs corpus, and mdBook on the same pages.
MDBOOK=/tmp/mdbook/bin/mdbook
if want 3 || want 5; then
if ! "$MDBOOK" --version 2>/dev/null | grep -q ' v0\.5\.4$'; then
    cargo install mdbook --version 0.5.4 --locked --force --root /tmp/mdbook --quiet || true
fi
fi
if want 3; then
mkdir -p "$WORK/p3"
# Cold: no cache of highlighted code blocks, every grammar compiled afresh,
# and a new output folder, so no page is left from a last build (its
# removal is timed with it).
report "upstream docs (32 pages) + 2 baselines: vaultbench, cold" \
    "cd $WORK/p3 && rm -rf cold && VAULTBENCH_CACHE_DIR= $BIN publish --docs $UP/docs --baselines $UP/baselines --suite $UP --out cold"
COLD_MS="$LAST_MS"
# Warm: the highlighted blocks of the previous build are reused, and the
# pages whose data did not change are left as it wrote them (the usual
# rebuild).
report "upstream docs (32 pages) + 2 baselines: vaultbench, warm" \
    "cd $WORK/p3 && VAULTBENCH_CACHE_DIR=$WORK/cache $BIN publish --docs $UP/docs --baselines $UP/baselines --suite $UP --out site"
OURS_MS="$LAST_MS"
index_size "upstream docs (32 pages) + 2 baselines" "$WORK/p3/site"
# The peer is pinned: mdBook 0.5.4, installed outside the repository.
if [ -x "$MDBOOK" ]; then
    mdbook_book "$UP/docs" "$WORK/book" corpus
    echo "mdBook: $($MDBOOK --version)"
    report "upstream docs (32 pages): mdBook (no generated table)" "cd $WORK/book && $MDBOOK build -d $WORK/book/out"
    python3 -c "print(f'vaultbench publishes the 32 pages {$LAST_MS / $OURS_MS:.1f}x faster than mdBook warm, {$LAST_MS / $COLD_MS:.1f}x cold (medians, same run)')"
else
    echo "mdBook could not be installed; skipping the peer comparison"
fi
fi

# 4. --watch rebuild latency.
if want 4; then
mkdir -p "$WORK/w/evals/baselines"
cp -r "$ROOT/docs" "$WORK/w/docs"
ln -s "$UP"/baselines/*.json "$WORK/w/evals/baselines/"
start_watch "$WORK/w" "$UP" "$WORK/watch.log"
URL=$(grep -o 'http://127.0.0.1:[0-9]*/' "$WORK/watch.log" | head -1)
edit_latencies=()
for n in $(seq "$RUNS"); do
    start=$(date +%s%N)
    sed -i "s/^# The vault tools.*/# The vault tools $n/" "$WORK/w/docs/tools.md"
    until curl -s "${URL}tools.html" | grep -q "The vault tools $n"; do sleep 0.005; done
    end=$(date +%s%N)
    edit_latencies+=($(( (end - start) / 1000000 )))
    sleep 0.3
done
for n in $(seq "$RUNS"); do
    ln -s "$UP/baselines/gemini-gemini-2.5-flash.json" "$WORK/w/evals/baselines/extra-$n.json"
    sleep 0.4
done
sleep 0.5
stop_watch
echo "watch rebuild after the debounce, page edit:    median $(grep '^Changed content' "$WORK/watch.log" | grep -o 'in [0-9]* ms' | awk '{print $2}' | med) ms"
echo "watch rebuild after the debounce, new baseline: median $(grep '^Changed baselines' "$WORK/watch.log" | grep -o 'in [0-9]* ms' | awk '{print $2}' | med) ms"
echo "edit to served page (100 ms debounce included): median $(printf '%s\n' "${edit_latencies[@]}" | med) ms"
fi

# 5. Our docs + the 2 upstream baselines + ours with its evidence archive.
if want 5; then
mkdir -p "$WORK/b5" "$WORK/p5"
# The reference baselines are read in place (linked); ours is copied, since
# the watch figure rewrites it.
ln -s "$UP"/baselines/*.json "$WORK/b5/"
cp -r "$ROOT"/evals/baselines/. "$WORK/b5/"
report "our docs + 2 upstream + ours with evidence" \
    "cd $WORK/p5 && $BIN publish --docs $ROOT/docs --baselines $WORK/b5 --suite $ROOT/evals --out site"
EXPLORER_MS="$LAST_MS"
echo "pages written: $(find "$WORK/p5/site" -name '*.html' | wc -l) ($(find "$WORK/p5/site/baselines" -name 'run-*.html' | wc -l) transcripts), $(du -sh "$WORK/p5/site" | cut -f1)"
index_size "our docs + 2 upstream + ours with evidence" "$WORK/p5/site"
if [ -x "$MDBOOK" ]; then
    mdbook_book "$ROOT/docs" "$WORK/book5" ours
    report "our docs: mdBook (no generated pages)" "cd $WORK/book5 && $MDBOOK build -d $WORK/book5/out"
    python3 -c "print(f'mdBook on our 6 docs pages alone: {$LAST_MS:.1f} ms; vaultbench with every generated page: {$EXPLORER_MS:.1f} ms ({$EXPLORER_MS / $LAST_MS:.2f}x)')"
fi
# --watch: one baseline changes (our own, rewritten with another commit).
mkdir -p "$WORK/w5/evals/baselines"
cp -r "$ROOT/docs" "$WORK/w5/docs"
cp -a "$WORK/b5/." "$WORK/w5/evals/baselines/"
start_watch "$WORK/w5" "$ROOT/evals" "$WORK/watch5.log"
OURS="$WORK/w5/evals/baselines/openai-smollm2-135m-instruct.json"
for n in $(seq "$RUNS"); do
    sed -i "s/\"git_sha\": \"[^\"]*\"/\"git_sha\": \"bench$n\"/" "$OURS"
    sleep 0.6
done
sleep 0.5
stop_watch
# `sed -i` writes a temporary file and renames it: the watcher may see that
# as two changes, the second a rebuild that finds nothing new (0 written).
# Only the rebuilds that wrote the changed pages count.
grep '^Changed baselines' "$WORK/watch5.log" | grep -v '(0 written' > "$WORK/watch5.real" || true
echo "watch rebuild after the debounce, one baseline changed (3 baselines, evidence): median $(grep -o 'in [0-9]* ms' "$WORK/watch5.real" | awk '{print $2}' | med) ms over $(wc -l < "$WORK/watch5.real") rebuilds (range $(grep -o 'in [0-9]* ms' "$WORK/watch5.real" | awk '{print $2}' | sort -n | sed -n '1p;$p' | paste -sd-) ms)"
fi
