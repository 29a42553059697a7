#!/usr/bin/env bash
# What hostile docs pages and evidence archives cost `vaultbench publish`:
# wall time and peak memory of a build of one generated page (or archive) at
# two sizes, the second ten times the first. Linear work shows a ratio near
# 10 (a build's fixed cost makes the small one's share larger, so a little
# under 10 is usual); n² would show near 100. Not a test; nothing here is
# committed output.
#
#   benches/publish_inputs.sh                 # every shape, target/release/vaultbench
#   BIN=/path/to/vaultbench benches/publish_inputs.sh headings containers
#
# Shapes (N is the larger size, the one each was reported at):
#   headings    N identical headings               (N = 30,000, 0.7 MB)
#   references  N link reference definitions, each used once (N = 100,000)
#   anchors     N links to one heading's anchor    (N = 200,000)
#   broken      N links to missing pages           (N = 100,000)
#   containers  N nested `::: tip` containers      (N = 20,000, 240 KB)
# and two evidence archives of 1.6 MB that claim 1.5 GiB in one header
# (longname: a GNU long name; pax: a pax extended header), which must be
# refused with an error naming the archive, at once and in little memory.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
BIN="${BIN:-$ROOT/target/release/vaultbench}"
[ -x "$BIN" ] || { echo "no binary at $BIN (cargo build --release)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 1; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

ALL=(headings references anchors broken containers longname pax)
SHAPES=("$@")
[ ${#SHAPES[@]} -eq 0 ] && SHAPES=("${ALL[@]}")

# page SHAPE N FILE: write the page of SHAPE at size N.
page() {
    python3 - "$1" "$2" "$3" <<'PY'
import sys
shape, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(out, "w") as f:
    f.write("# Hostile\n\n")
    if shape == "headings":
        f.write("## Same\n\n" * n)
    elif shape == "references":
        f.writelines(f"[x][r{i}] " for i in range(n))
        f.write("\n\n")
        f.writelines(f"[r{i}]: https://example.org/{i}\n" for i in range(n))
    elif shape == "anchors":
        f.writelines("[x](#hostile) " for _ in range(n))
    elif shape == "broken":
        f.writelines(f"[x](missing{i}.md) " for i in range(n))
    elif shape == "containers":
        f.write("::: tip\n" * n + "x\n" + ":::\n" * n)
PY
}

# archive KIND CLAIM DIR: a baseline in DIR whose evidence archive holds one
# header of KIND claiming CLAIM bytes, followed by that many zero bytes.
archive() {
    python3 - "$1" "$2" "$3" "$ROOT/evals/baselines/openai-smollm2-135m-instruct.json" <<'PY'
import gzip, json, os, sys, tarfile
kind, claim, out, real = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
# A real baseline (its runs name transcripts, so publish opens the archive),
# under the name m.json, with the hostile archive as its evidence.
result = json.load(open(real))
run_id = result["run_id"].replace(":", "-").replace(".", "-")
os.makedirs(f"{out}/evidence/m", exist_ok=True)
json.dump(result, open(f"{out}/m.json", "w"))
info = tarfile.TarInfo("././@LongLink" if kind == "longname" else "./PaxHeaders/x")
info.size = claim
info.type = tarfile.GNUTYPE_LONGNAME if kind == "longname" else tarfile.XHDTYPE
header = info.tobuf(format=tarfile.GNU_FORMAT if kind == "longname" else tarfile.USTAR_FORMAT)
with gzip.open(f"{out}/evidence/m/{run_id}.tar.gz", "wb", compresslevel=9) as gz:
    gz.write(header)
    block = bytes(1 << 20)
    left = claim
    while left > 0:
        gz.write(block[: min(left, len(block))])
        left -= len(block)
PY
}

# measure DOCS BASELINES: "exit wall_s peak_MB" of one build.
measure() {
    local out="$WORK/site-$RANDOM"
    /usr/bin/time -f "%x %e %M" -o "$WORK/time" "$BIN" publish --docs "$1" --baselines "$2" --suite "$WORK/none" \
        --out "$out" >"$WORK/log" 2>&1
    read -r code wall kib <"$WORK/time"
    rm -rf "$out"
    echo "$code $wall $((kib / 1024))"
}

printf '%-11s %9s %8s %8s %9s %8s %8s %6s\n' shape N/10 wall_s peak_MB N wall_s peak_MB ratio
for shape in "${SHAPES[@]}"; do
    case "$shape" in
        headings) big=30000 ;;
        references | broken) big=100000 ;;
        anchors) big=200000 ;;
        containers) big=20000 ;;
        longname | pax)
            dir="$WORK/$shape"
            mkdir -p "$dir/docs"
            echo "# Home" >"$dir/docs/index.md"
            archive "$shape" $((1536 * 1024 * 1024)) "$dir/baselines"
            size=$(du -k "$dir"/baselines/evidence/m/*.tar.gz | cut -f1)
            read -r code wall mb < <(measure "$dir/docs" "$dir/baselines")
            printf '%-11s %9s %8s %8s  archive of %s KiB claiming 1.5 GiB: exit %s; %s\n' "$shape" - - - "$size" "$code" \
                "$(grep -o 'evidence[^;]*' "$WORK/log" | head -1 | cut -c1-90)"
            printf '%-11s %9s %8s %8s %9s %8s %8s\n' "" "" "" "" "" "$wall" "$mb"
            continue ;;
        *) echo "unknown shape $shape" >&2; exit 2 ;;
    esac
    row=()
    for n in $((big / 10)) "$big"; do
        dir="$WORK/$shape-$n"
        mkdir -p "$dir/docs" "$dir/baselines"
        page "$shape" "$n" "$dir/docs/index.md"
        # The median of three builds.
        runs=()
        for _ in 1 2 3; do runs+=("$(measure "$dir/docs" "$dir/baselines")"); done
        median="$(printf '%s\n' "${runs[@]}" | sort -k2 -n | sed -n 2p)"
        read -r code wall mb <<<"$median"
        [ "$code" = 0 ] || echo "$shape at $n: exit $code: $(tail -2 "$WORK/log")" >&2
        row+=("$n" "$wall" "$mb")
    done
    ratio="$(python3 -c "print(f'{$(echo "${row[4]}") / max($(echo "${row[1]}"), 0.01):.1f}')")"
    printf '%-11s %9s %8s %8s %9s %8s %8s %6s\n' "$shape" "${row[@]}" "$ratio"
done
