#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance, Streamable
# HTTP) against the HR example server and against this toolkit's fixture tools. The suite needs
# Node 22, which npm installs as the `node` package next to it (no system Node change).
# Prints one line per scenario and exits non-zero if any fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
(cd "$work" && npm install --silent --no-audit --no-fund @modelcontextprotocol/conformance@0.1.16 node@22 >/dev/null)
export PATH="$work/node_modules/.bin:$PATH"
cargo build -q -p examples --bin hr-mcp --bin mcp-conformance
HR_DB="$work/hr.sqlite" "$root/target/debug/hr-mcp" --http 127.0.0.1:18941 2>/dev/null &
"$root/target/debug/mcp-conformance" 127.0.0.1:18942 2>/dev/null &
sleep 1
failed=0
run() { # url scenario
    if out=$(conformance server --url "$1" --scenario "$2" 2>&1) && grep -q ", 0 failed" <<<"$out"; then
        echo "conformance $2: passed ($(grep -o 'Passed: [0-9]*/[0-9]*' <<<"$out"))"
    else
        echo "conformance $2: FAILED"; echo "$out" | tail -20; failed=1
    fi
}
for s in server-initialize ping tools-list dns-rebinding-protection; do run http://127.0.0.1:18941/mcp "$s"; done
for s in tools-call-simple-text tools-call-error; do run http://127.0.0.1:18942/mcp "$s"; done
exit $failed
