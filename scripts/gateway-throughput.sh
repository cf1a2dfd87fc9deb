#!/usr/bin/env bash
# What a gateway adds: stateless 2026-07-28 `tools/call` of `tambah_cepat` with wrk on 1 and 50
# kept-alive connections, straight to the tool server (`http-load-server toolkit`) and through a
# gateway in front of it (`http-load-server gateway`, the same tool as `remote_tambah_cepat`,
# over one rmcp client connection). Release code (`--profile perf`); SECONDS_EACH (default 10)
# per row; ROUNDS (default 3) runs of each row. Prints calls/s, p50 and the gateway's p50 over
# the direct p50 of the same round. Installs wrk (Debian).
. "$(dirname "$0")/lib/prelude.sh"
seconds="${SECONDS_EACH:-10}"
rounds="${ROUNDS:-3}"
cargo build -q --profile perf -p benches --features gateway --bin http-load-server
command -v wrk >/dev/null || (apt-get install -y -qq wrk >/dev/null)
server="${CARGO_TARGET_DIR:-$root/target}/perf/http-load-server"
"$server" toolkit 127.0.0.1:18991 & wait_port 18991
"$server" gateway 127.0.0.1:18992 http://127.0.0.1:18991/mcp & wait_port 18992
measure() { # port tool connections -> "calls/s p50"
    local out
    out=$(TOOL=$2 wrk -t"$([ "$3" = 1 ] && echo 1 || echo 2)" -c"$3" -d"${seconds}s" --latency \
        -s scripts/load/call2026.lua "http://127.0.0.1:$1/mcp" 2>&1)
    if grep -q "unexpected answer" <<<"$out"; then echo "$out" >&2; exit 1; fi
    echo "$(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="50%" {print $2}' <<<"$out")"
}
us() { # wrk latency (e.g. 148.00us, 2.21ms) in microseconds
    awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /ms$/) n *= 1000; else if (v ~ /[^u]s$/) n *= 1000000; print n }'
}
for round in $(seq "$rounds"); do
    for c in 1 50; do
        read -r d_rate d_p50 <<<"$(measure 18991 tambah_cepat $c)"
        read -r g_rate g_p50 <<<"$(measure 18992 remote_tambah_cepat $c)"
        printf 'round %s, %2s connection(s): direct %9s calls/s p50 %9s | gateway %9s calls/s p50 %9s | p50 x%s\n' \
            "$round" "$c" "$d_rate" "$d_p50" "$g_rate" "$g_p50" \
            "$(awk -v g="$(us "$g_p50")" -v d="$(us "$d_p50")" 'BEGIN { printf "%.2f", g / d }')"
    done
done
