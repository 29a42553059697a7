#!/usr/bin/env bash
# The commands of the sweep and docs workflows (.github/workflows/), one
# subcommand per workflow step, so that the workflows and their test
# (tests/ci_workflows.rs, which runs these steps as the workflow declares
# them) cannot drift apart. Settings come from the environment, as the
# workflow's `env:` blocks set them; nothing from a workflow input is ever
# pasted into a command line.
#
#   plan          MODELS (comma-separated ids), SHARDS (1-64)
#                 -> GITHUB_OUTPUT: models=[{"id":..,"slug":..}], shards=[1..N]
#   shard         PROVIDER, MODEL, K, OUT; the shard from VAULTBENCH_SHARD_INDEX
#                 and VAULTBENCH_SHARD_COUNT (the matrix); SUITE (default evals)
#   merge-bless   PROVIDER, MODEL, IN (one folder per downloaded shard
#                 artifact), OUT, BASELINES: merge the shards, then bless the
#                 merged result into BASELINES (with its evidence)
#   apply         IN (the merge-bless outputs of every model), BASELINES:
#                 each model's baseline, and its evidence folder in place of
#                 the old one (so the old archive's removal is committed too)
#   publish       BASELINES (default evals/baselines), SITE (default site);
#                 BASE_PATH and REPOSITORY override vaultbench.toml's
#                 site.base_path and site.repository (GitHub Pages)
#   pull-request  BRANCH, TITLE: commit evals/baselines on BRANCH and open a
#                 pull request (needs git, gh and GH_TOKEN)
#
# VAULTBENCH names the binary (default target/release/vaultbench).
set -euo pipefail

VAULTBENCH="${VAULTBENCH:-target/release/vaultbench}"

die() {
    echo "ci-sweep: $*" >&2
    exit 1
}

need() {
    for name in "$@"; do
        [ -n "${!name:-}" ] || die "$name is not set"
    done
}

# A model id as vaultbench names its baseline: characters outside
# [A-Za-z0-9._-] become '-' (gemma4:e4b -> gemma4-e4b).
slug() {
    printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '-'
}

cmd="${1:-}"
case "$cmd" in
plan)
    need MODELS SHARDS
    [[ "$SHARDS" =~ ^[0-9]+$ ]] && [ "$SHARDS" -ge 1 ] && [ "$SHARDS" -le 64 ] \
        || die "SHARDS is '$SHARDS': give a whole number from 1 to 64"
    models="["
    sep=""
    IFS=',' read -r -a ids <<<"$MODELS"
    for raw in "${ids[@]}"; do
        id="$(printf '%s' "$raw" | tr -d '[:space:]')"
        [ -n "$id" ] || continue
        # Ids go into JSON and artifact names: a conservative alphabet.
        [[ "$id" =~ ^[A-Za-z0-9._:/-]+$ ]] || die "model id '$id' has characters other than letters, digits and ._:/-"
        models+="$sep{\"id\":\"$id\",\"slug\":\"$(slug "$id")\"}"
        sep=","
    done
    models+="]"
    [ "$models" != "[]" ] || die "MODELS names no model"
    shards="[$(seq -s, 1 "$SHARDS")]"
    {
        echo "models=$models"
        echo "shards=$shards"
    } >>"${GITHUB_OUTPUT:-/dev/stdout}"
    ;;
shard)
    need PROVIDER MODEL K OUT VAULTBENCH_SHARD_INDEX VAULTBENCH_SHARD_COUNT
    # --shard alone reads the shard from VAULTBENCH_SHARD_INDEX/COUNT.
    "$VAULTBENCH" run --provider "$PROVIDER" --model "$MODEL" --repeat "$K" --shard \
        --suite "${SUITE:-evals}" --results "$OUT"
    ;;
merge-bless)
    need PROVIDER MODEL IN OUT BASELINES
    shopt -s nullglob
    # One folder per shard artifact, each holding <run-id>.json and <run-id>/.
    parts=("$IN"/*/*.json)
    [ "${#parts[@]}" -gt 0 ] || die "no shard result under $IN"
    mkdir -p "$OUT"
    merged="$OUT/$PROVIDER-$(slug "$MODEL").json"
    "$VAULTBENCH" merge "${parts[@]}" --out "$merged"
    "$VAULTBENCH" bless "$merged" --results "$OUT" --baselines "$BASELINES"
    # What changed, for the pull request: the baseline and its evidence folder.
    stem="$PROVIDER-$(slug "$MODEL")"
    mkdir -p "$OUT/baseline/evidence"
    cp "$BASELINES/$stem.json" "$OUT/baseline/"
    if [ -d "$BASELINES/evidence/$stem" ]; then
        cp -R "$BASELINES/evidence/$stem" "$OUT/baseline/evidence/"
    fi
    ;;
apply)
    need IN BASELINES
    shopt -s nullglob
    baselines=("$IN"/*.json)
    [ "${#baselines[@]}" -gt 0 ] || die "no blessed baseline under $IN"
    mkdir -p "$BASELINES/evidence"
    for file in "${baselines[@]}"; do
        stem="$(basename "$file" .json)"
        cp "$file" "$BASELINES/$stem.json"
        rm -rf "${BASELINES:?}/evidence/$stem"
        if [ -d "$IN/evidence/$stem" ]; then
            cp -R "$IN/evidence/$stem" "$BASELINES/evidence/$stem"
        fi
        echo "ci-sweep: $BASELINES/$stem.json"
    done
    ;;
publish)
    config="vaultbench.toml"
    if [ -n "${BASE_PATH:-}${REPOSITORY:-}" ]; then
        # vaultbench.toml with [site] base_path and repository replaced.
        config="$(mktemp)"
        {
            echo "[site]"
            [ -z "${BASE_PATH:-}" ] || echo "base_path = \"${BASE_PATH%/}/\""
            [ -z "${REPOSITORY:-}" ] || echo "repository = \"$REPOSITORY\""
            if [ -f vaultbench.toml ]; then
                grep -Ev '^[[:space:]]*(\[site\]|base_path|repository)[[:space:]=]' vaultbench.toml | grep -Ev '^[[:space:]]*\[site\][[:space:]]*$' || true
            fi
        } >"$config"
    fi
    "$VAULTBENCH" publish --baselines "${BASELINES:-evals/baselines}" --out "${SITE:-site}" --config "$config"
    ;;
pull-request)
    need BRANCH TITLE
    git switch -c "$BRANCH"
    git add evals/baselines
    if git diff --cached --quiet; then
        echo "ci-sweep: no baseline changed; no pull request"
        exit 0
    fi
    git -c user.name="vaultbench sweep" -c user.email="vaultbench-sweep@users.noreply.github.com" \
        commit -m "$TITLE"
    git push origin "$BRANCH"
    gh pr create --title "$TITLE" --body "Baselines blessed by the sweep workflow (run ${GITHUB_RUN_ID:-?}): \
review the figures and the evidence archives before merging." --head "$BRANCH"
    ;;
*)
    die "usage: ci-sweep.sh plan|shard|merge-bless|publish|pull-request (settings from the environment)"
    ;;
esac
