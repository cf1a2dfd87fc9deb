#!/usr/bin/env bash
# Runs the shared MCP-toolkit benchmark harness (../shared/bench, read-only) with this project's
# toolkit as a third contender next to the hand-written floor and rmcp, in a scratch copy.
# Arguments go to the harness's run.sh, e.g.
#   scripts/bench-harness.sh --only dispatch,stdio,expand --rounds 3
#   COMPILE_N=10,50,200 scripts/bench-harness.sh --only compile-full,compile-incremental
# Release builds and the runs take 15-30 minutes on 2 cores; the table is printed at the end.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
shared="${SHARED_BENCH:-$root/../shared/bench}"
work="${BENCH_WORK:-$(mktemp -d)}"
mkdir -p "$work"
rm -rf "$work/bench" && cp -r "$shared" "$work/bench" && chmod -R u+w "$work/bench"
ln -sfn "$root" "$work/crates"
python3 "$root/scripts/harness/add_toolkit.py" "$work/bench"
cd "$work/bench"
CONTENDERS="${CONTENDERS:-floor,rmcp,toolkit}" ./run.sh "$@"
