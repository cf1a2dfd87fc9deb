#!/usr/bin/env bash
# Stateless 2026-07-28 `tools/call` over Streamable HTTP, calls/s and p50 with wrk on 1 and 50
# kept-alive connections (the README's Speed figures), for:
#   toolkit           HttpServer with its defaults (authorization off: loopback), a sync tool
#                     (the default: on a blocking thread until its calls prove fast, then on
#                     the worker, one worker kept free)
#   toolkit nonblock  the same server, the same sum declared `#[tool(blocking = false)]`
#   rmcp              rmcp's own StreamableHttpService in axum, with TCP_NODELAY
# Release code (`--profile perf`); SECONDS_EACH (default 10) per row. Installs wrk (Debian).
. "$(dirname "$0")/lib/prelude.sh"
seconds="${SECONDS_EACH:-10}"
cargo build -q --profile perf -p benches --bin http-load-server
command -v wrk >/dev/null || (apt-get install -y -qq wrk >/dev/null)
server="${CARGO_TARGET_DIR:-$root/target}/perf/http-load-server"
"$server" toolkit 127.0.0.1:18971 & wait_port 18971
"$server" rmcp 127.0.0.1:18972 & wait_port 18972
row() { # label port tool
    for c in 1 50; do
        local out
        out=$(TOOL=$3 wrk -t"$([ $c = 1 ] && echo 1 || echo 2)" -c$c -d"${seconds}s" --latency \
            -s scripts/load/call2026.lua "http://127.0.0.1:$2/mcp" 2>&1)
        if grep -q "unexpected answer" <<<"$out"; then echo "$out"; exit 1; fi
        printf '%-17s %2s connection(s): %10s calls/s  p50 %9s\n' "$1" $c \
            "$(awk '/Requests\/sec/ {print $2}' <<<"$out")" "$(awk '$1=="50%" {print $2}' <<<"$out")"
    done
}
row toolkit 18971 tambah
row "toolkit nonblock" 18971 tambah_cepat
row rmcp 18972 tambah
