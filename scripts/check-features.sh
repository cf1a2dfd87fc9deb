#!/usr/bin/env bash
# Each published crate built alone (as a user's build sees it), with no features, with each
# feature alone and with its defaults (all of them together is CI's clippy step); then the
# dependency rules of the crate split:
# - the core (`tool-runtime`) pulls in no async runtime, HTTP stack, database or rig;
# - no toolkit crate turns on a serde_json feature that changes its behaviour in a user's
#   program (preserve_order, float_roundtrip, raw_value, arbitrary_precision).
# `cargo check` only: nothing is linked or run.
#
#   bash scripts/check-features.sh           every crate with no features, each feature alone,
#                                           its defaults; then the rules (~3 minutes on 2 cores)
#   bash scripts/check-features.sh --rules   the dependency rules alone, read from `cargo tree`
#                                           without compiling anything (CI, seconds)
. "$(dirname "$0")/lib/prelude.sh"
rules_only=
if [ "${1:-}" = "--rules" ]; then rules_only=1; fi
crates=(tool-runtime-macros tool-runtime tool-runtime-mcp tool-runtime-sqlite tool-runtime-postgres tool-runtime-rig tool-runtime-otel)
metadata="$(mktemp)"
on_exit 'rm -f "$metadata"'
cargo metadata -q --format-version 1 --no-deps > "$metadata"
# The features a check turns on, as one sorted key (the default's members included).
cargo_features() { # crate args...
    local crate=$1
    shift
    python3 -c "
import json, sys
args = sys.argv[1:]
p = next(p for p in json.load(open('$metadata'))['packages'] if p['name'] == '$crate')
on = set()
if '--all-features' in args:
    on = set(p['features']) - {'default'}
else:
    todo = [] if '--no-default-features' in args else ['default']
    if '--features' in args:
        todo.append(args[args.index('--features') + 1])
    while todo:
        f = todo.pop()
        if f in p['features'] and f not in on:
            on.add(f)
            todo.extend(x for x in p['features'][f] if ':' not in x and '/' not in x)
    on.discard('default')
print(','.join(sorted(on)) or '(none)')" "$@"
}
features() {
    python3 -c "
import json, sys
for p in json.load(open('$metadata'))['packages']:
    if p['name'] == '$1':
        print(' '.join(f for f in p['features'] if f != 'default'))"
}
# A warning fails the check (code only one feature set compiles goes unused in another): read
# from cargo's output, as `RUSTFLAGS=-D warnings` would rebuild every dependency. A feature set
# already checked (a crate's default is often none or all) is not asked again.
declare -A checked=()
check() { # crate args...
    local crate=$1 out key
    shift
    key="$crate $(cargo_features "$crate" "$@")"
    if [ -n "${checked[$key]:-}" ]; then return; fi
    checked[$key]=1
    local start=$SECONDS
    out="$(cargo check -q -p "$crate" --lib "$@" 2>&1)" || { echo "$out" >&2; exit 1; }
    echo "== $key ($((SECONDS - start)) s)"
    if grep -q '^warning' <<<"$out"; then
        echo "$out" >&2
        echo "$crate ($*): warnings" >&2
        exit 1
    fi
}
for crate in "${crates[@]}"; do
    if [ -n "$rules_only" ]; then break; fi
    check "$crate" --no-default-features
    for feature in $(features "$crate"); do
        check "$crate" --no-default-features --features "$feature"
    done
    check "$crate"
    # All features together: clippy checks every crate so (workspace-wide, -D warnings); here
    # only where they unify differently from there, which the features alone already cover.
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
if [ -n "$rules_only" ]; then
    echo "the dependency rules hold (the builds of each crate and feature: without --rules)"
else
    echo "every crate builds alone and with each feature; the dependency rules hold"
fi
