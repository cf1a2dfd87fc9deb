#!/usr/bin/env bash
# Load runs of the MCP servers (figures in the README's "Deploying" section):
#  1. HTTP calls/s and p50/p99 with wrk, 1 kept-alive connection and 200 concurrent ones, of this
#     toolkit's HttpServer and of rmcp's own Streamable HTTP setup serving the same tool;
#  2. a flood of initialize requests and of slow-header connections against HttpServer (default
#     limits, 1,024 file descriptors), with an ordinary client calling throughout;
#  3. pipelined stdio calls and a stdio client that never reads;
#  4. stateless 2026-07-28 calls (no session) on one server, and on two replicas sharing the
#     load evenly (a wrk per replica, as a balancer would split it; both on this machine).
# `scripts/load.sh` runs the full version on a release build (about 3 minutes);
# `scripts/load.sh --short` a quick one on the debug build (CI: the one the test command built).
. "$(dirname "$0")/lib/prelude.sh"
if [ "${1:-}" = "--short" ]; then
    profile=debug; seconds=2; sessions=1500; slow=600; hold=3; calls=20000
    # In CI the test command has built it (`benches` has integration tests, so its binaries
    # are built with them), with every feature: `otel` too, whose subscriber exports nothing
    # while no OTEL_* variable asks (unset below).
    if [ -z "${TOOLKIT_PREBUILT:-}" ] || [ ! -x "$target/debug/http-load-server" ]; then
        cargo build -q -p benches --bin http-load-server
    fi
else
    profile=release; seconds=10; sessions=10000; slow=2000; hold=15; calls=300000
    cargo build -q --release -p benches --bin http-load-server
fi
command -v wrk >/dev/null || (apt-get install -y -qq wrk >/dev/null)
# The servers export no telemetry, whatever this shell's environment says.
while read -r variable; do unset "$variable"; done < <(compgen -e | grep '^OTEL_' || true)
server="$target/$profile/http-load-server"

measure() { # name port
    local session
    session=$(python3 scripts/load/mcp_http.py 127.0.0.1 "$2")
    for c in 1 200; do
        local out
        out=$(MCP_SESSION=$session wrk -t"$([ $c = 1 ] && echo 1 || echo 2)" -c$c -d${seconds}s --latency \
            -s scripts/load/call.lua "http://127.0.0.1:$2/mcp" 2>&1)
        if grep -q "unexpected answer" <<<"$out"; then echo "$out"; exit 1; fi
        printf '%-8s %3s connection(s): %10s calls/s  p50 %9s  p99 %9s\n' "$1" $c \
            "$(awk '/Requests\/sec/ {print $2}' <<<"$out")" \
            "$(awk '$1=="50%" {print $2}' <<<"$out")" "$(awk '$1=="99%" {print $2}' <<<"$out")"
    done
}

echo "== HTTP: calls/s and latency (wrk, ${seconds}s each)"
"$server" toolkit 127.0.0.1:18961 & wait_port 18961
"$server" rmcp 127.0.0.1:18962 & wait_port 18962
measure toolkit 18961
measure rmcp 18962
kill %1 %2; wait 2>/dev/null || true

echo "== HTTP: stateless 2026-07-28 calls, one server and two replicas (200 connections in all)"
stateless() { # label port... : 200 connections and 2 wrk threads split across the ports,
    # calls/s summed, worst p99
    local n=$(( 200 / ($# - 1) )) t=$(( 2 / ($# - 1) )) label=$1; shift
    local outs=() pids=() i=0
    for port in "$@"; do
        outs[$i]=$(mktemp)
        wrk -t$t -c$n -d${seconds}s --latency -s scripts/load/call2026.lua "http://127.0.0.1:$port/mcp" >"${outs[$i]}" 2>&1 &
        pids[$i]=$!; i=$((i + 1))
    done
    wait "${pids[@]}"
    if grep -q "unexpected answer" "${outs[@]}"; then cat "${outs[@]}"; exit 1; fi
    printf '%-22s %10s calls/s  worst p99 %9s\n' "$label" \
        "$(cat "${outs[@]}" | awk '/Requests\/sec/ {s += $2} END {printf "%.0f", s}')" \
        "$(cat "${outs[@]}" | awk '$1=="99%" {print $2}' | sort -h | tail -1)"
    rm -f "${outs[@]}"
}
"$server" toolkit 127.0.0.1:18964 & wait_port 18964
"$server" toolkit 127.0.0.1:18965 & wait_port 18965
stateless "one server" 18964
stateless "two replicas" 18964 18965
kill %1 %2; wait 2>/dev/null || true

echo "== HTTP: floods against the toolkit's HttpServer (default limits, ulimit -n 1024)"
(ulimit -n 1024; exec "$server" toolkit 127.0.0.1:18963) & pid=$!
wait_port 18963
(cd scripts/load && python3 flood.py 127.0.0.1 18963 "$pid" "$sessions" "$slow" "$hold")
kill "$pid"; wait 2>/dev/null || true

echo "== stdio"
(cd scripts/load && python3 stdio.py "$calls" "$server" stdio)
