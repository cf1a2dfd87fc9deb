#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance, Streamable
# HTTP) against the HR example server and against this toolkit's fixture tools, for both protocol
# eras: 0.1.16 for 2025-11-25 and the 0.2.0 pre-release for 2026-07-28 (stateless requests,
# subscriptions, header validation, caching hints), with the checks a tools-only server cannot
# pass listed, with reasons, in conformance-2026-expected.yaml. The suite needs Node 22, which
# npm installs as the `node` package next to it (no system Node change).
# The HR server requires access tokens, which the suite cannot send: it reaches the server
# through scripts/token-proxy.js, which adds one minted with a secret made here (and passes the
# suite's forged Host/Origin headers through unchanged, for dns-rebinding-protection).
# Prints one line per scenario and exits non-zero if any fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
(cd "$work" && npm install --silent --no-audit --no-fund @modelcontextprotocol/conformance@0.1.16 node@22 >/dev/null)
mkdir -p "$work/next" && echo "{}" > "$work/next/package.json"
(cd "$work/next" && npm install --silent --no-audit --no-fund @modelcontextprotocol/conformance@0.2.0-alpha.12 >/dev/null)
export PATH="$work/node_modules/.bin:$PATH"
cargo build -q -p examples --bin hr-mcp --bin mcp-conformance
secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
HR_DB="$work/hr.sqlite" HR_OAUTH_ISSUER=https://login.conformance.test HR_OAUTH_HS256_SECRET="$secret" \
    "$root/target/debug/hr-mcp" --http 127.0.0.1:18940 2>/dev/null &
node "$root/scripts/token-proxy.js" 18941 18940 "$secret" https://login.conformance.test \
    http://127.0.0.1:18940/mcp K-001 "hr hr.cuti.baca hr.reimburse.baca hr.cuti.ajukan" &
"$root/target/debug/mcp-conformance" 127.0.0.1:18942 2>/dev/null &
sleep 1
# Without the proxy, the HR server refuses: no token, 401.
status=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' \
    -d '{"jsonrpc":"2.0","id":1,"method":"ping"}' http://127.0.0.1:18940/mcp)
[ "$status" = 401 ] || { echo "the HR server answered $status without a token"; exit 1; }
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
# 2026-07-28: every server scenario a tools server can take part in.
next="$work/next/node_modules/.bin/conformance"
run_2026() { # url scenario baseline
    if out=$("$next" server --url "$1" --scenario "$2" --spec-version 2026-07-28 \
            --expected-failures "$root/scripts/$3" 2>&1); then
        echo "conformance 2026-07-28 $2: passed ($(grep -o 'Passed: [0-9]*/[0-9]*' <<<"$out" | head -1)$(grep -q 'Expected failures' <<<"$out" && echo ', expected failures listed in the baseline'))"
    else
        echo "conformance 2026-07-28 $2: FAILED"; echo "$out" | tail -25; failed=1
    fi
}
for s in server-stateless tools-list dns-rebinding-protection caching http-header-validation; do
    run_2026 http://127.0.0.1:18941/mcp "$s" conformance-2026-expected-hr.yaml
done
for s in server-stateless tools-call-simple-text tools-call-error server-sse-multiple-streams \
    caching http-header-validation; do
    run_2026 http://127.0.0.1:18942/mcp "$s" conformance-2026-expected.yaml
done
exit $failed
