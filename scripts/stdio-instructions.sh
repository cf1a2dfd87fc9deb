#!/usr/bin/env bash
# Instructions executed by the MCP stdio servers of this toolkit and of rmcp (`stdio_pipes`) for
# the same 20,000 `tools/call` requests, counted by callgrind: repeatable on a noisy machine.
# Uses the servers the shared harness builds (scripts/bench-harness.sh, BENCH_WORK); builds them
# first when they are missing. Needs valgrind.
. "$(dirname "$0")/lib/prelude.sh"
export BENCH_WORK="${BENCH_WORK:-$root/target/bench-work}"
bin="$BENCH_WORK/bench/target/release"
if [ ! -x "$bin/toolkit_n50_stdio" ] || [ ! -x "$bin/rmcp_n50_stdio" ]; then
    "$root/scripts/bench-harness.sh" --only stdio --rounds 1 >/dev/null
fi
requests="$(mktemp)"
python3 - "$requests" <<'PY'
import json, sys
modes = ["alpha", "beta", "gamma", "delta"]
lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "p", "version": "0"}}},
         {"jsonrpc": "2.0", "method": "notifications/initialized"}]
for i in range(1, 20001):
    lines.append({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                  "params": {"name": "tool_%03d" % (i % 50),
                             "arguments": {"count": i % 1000, "mode": modes[i % 4], "label": "l%d" % i}}})
open(sys.argv[1], "w").write("".join(json.dumps(l) + "\n" for l in lines))
PY
count() {
    local out; out="$(mktemp)"
    # The input stays open a moment so every answer is written before the server sees its end.
    (cat "$requests"; sleep 3) | valgrind --tool=callgrind --callgrind-out-file="$out" "$@" 2>/dev/null \
        | grep -c '"result"' >/dev/null
    callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
    rm -f "$out"
}
toolkit=$(count "$bin/toolkit_n50_stdio")
rmcp=$(count "$bin/rmcp_n50_stdio" --pipes)
python3 -c "
t, r = $toolkit, $rmcp
print(f'toolkit      {t / 20000:9.0f} instructions per call')
print(f'rmcp pipes   {r / 20000:9.0f} instructions per call')
print(f'ratio        {t / r:9.2f}x rmcp')
"
rm -f "$requests"
