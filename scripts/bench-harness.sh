#!/usr/bin/env bash
# Runs the shared MCP-toolkit benchmark harness (../shared/bench, read-only) with this project's
# toolkit as a third contender next to the hand-written floor and rmcp, in a scratch copy.
# Arguments go to the harness's run.sh, e.g.
#   scripts/bench-harness.sh --only dispatch,stdio,expand --rounds 3
#   COMPILE_N=10,50,200 scripts/bench-harness.sh --only compile,expand
# Release builds and the runs take 15-30 minutes on 2 cores; the table is printed at the end.
. "$(dirname "$0")/lib/prelude.sh"
shared="${SHARED_BENCH:-$root/../shared/bench}"
if [ ! -f "$shared/run.sh" ]; then
    echo "the shared benchmark harness is not at $shared: put it there, or set SHARED_BENCH=dir" >&2
    exit 1
fi
work="${BENCH_WORK:-$(mktemp -d)}"
mkdir -p "$work"
# A fresh copy of the harness, keeping the build cache of an earlier run in the same BENCH_WORK.
[ -d "$work/bench/target" ] && mv "$work/bench/target" "$work/target.keep"
rm -rf "$work/bench" && cp -r "$shared" "$work/bench" && chmod -R u+w "$work/bench"
[ -d "$work/target.keep" ] && mv "$work/target.keep" "$work/bench/target"
ln -sfn "$root" "$work/crates"
python3 "$root/scripts/harness/add_toolkit.py" "$work/bench"
cd "$work/bench"
CONTENDERS="${CONTENDERS:-floor,rmcp,toolkit}" ./run.sh "$@"
