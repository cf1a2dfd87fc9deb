#!/usr/bin/env bash
# Each published crate built alone (as a user's build sees it), with no features, with each
# feature alone and with all of them; then the dependency rules of the crate split:
# - the core (`tool-runtime`) pulls in no async runtime, HTTP stack, database or rig;
# - no toolkit crate turns on a serde_json feature that changes its behaviour in a user's
#   program (preserve_order, float_roundtrip, raw_value, arbitrary_precision).
# `cargo check` only: nothing is linked or run. Usage: bash scripts/check-features.sh
. "$(dirname "$0")/lib/prelude.sh"
crates=(tool-runtime-macros tool-runtime tool-runtime-mcp tool-runtime-sqlite tool-runtime-postgres tool-runtime-rig)
features() {
    cargo metadata -q --format-version 1 --no-deps | python3 -c "
import json, sys
for p in json.load(sys.stdin)['packages']:
    if p['name'] == '$1':
        print(' '.join(f for f in p['features'] if f != 'default'))"
}
for crate in "${crates[@]}"; do
    echo "== $crate: no features"
    cargo check -q -p "$crate" --lib --no-default-features
    for feature in $(features "$crate"); do
        echo "== $crate: --features $feature"
        cargo check -q -p "$crate" --lib --no-default-features --features "$feature"
    done
    echo "== $crate: default and all features"
    cargo check -q -p "$crate" --lib
    cargo check -q -p "$crate" --lib --all-features
done
echo "== the core's dependencies"
core="$(cargo tree -q -e normal -p tool-runtime --all-features --prefix none | awk '{print $1}' | sort -u)"
for banned in tokio rmcp axum hyper rusqlite tokio-postgres rig-core; do
    if grep -qx "$banned" <<<"$core"; then
        echo "tool-runtime depends on $banned: the core must not" >&2
        exit 1
    fi
done
echo "== serde_json features turned on by toolkit crates"
for crate in "${crates[@]}"; do
    for f in preserve_order float_roundtrip raw_value arbitrary_precision; do
        # Who turns the feature on in this crate's own build (default features).
        if cargo tree -q -e normal,features -i serde_json -p "$crate" 2>/dev/null \
            | awk -v f="serde_json feature \"$f\"" 'index($0, f) { on = 1; next } on && /serde_json feature/ { on = 0 } on' \
            | grep -E '── tool-runtime' >/dev/null; then
            echo "$crate turns on serde_json's $f" >&2
            exit 1
        fi
    done
done
echo "every crate builds alone and with each feature; the dependency rules hold"
