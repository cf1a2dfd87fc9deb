#!/usr/bin/env bash
# The build checks too long for every CI run (CI runs the dependency rules alone, from `cargo
# tree`): each published crate built alone with no features, each feature alone and its
# defaults (scripts/check-features.sh); the cargo-fuzz target compiling on stable; and a crate
# outside the workspace made with the README's `cargo add` lines (scripts/outside-crate.sh).
# About 3.5 minutes on 2 cores after the test command's build. Exits non-zero at the first
# check that fails.
#
#   bash scripts/long-checks.sh
. "$(dirname "$0")/lib/prelude.sh"
timed() { # name command...
    local name=$1 start=$SECONDS
    shift
    echo "== $name" >&2
    "$@"
    echo "== $name: $((SECONDS - start)) s" >&2
}
timed "each crate and feature alone" bash scripts/check-features.sh
# Without libFuzzer's C++ build, which only `cargo fuzz` needs; into the shared target dir.
timed "the fuzz target" cargo check --quiet --locked --no-default-features \
    --manifest-path fuzz/Cargo.toml --target-dir "$target"
timed "a crate outside the workspace" bash scripts/outside-crate.sh
echo "every long check passed"
