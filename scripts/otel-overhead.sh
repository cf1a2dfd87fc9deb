#!/usr/bin/env bash
# What exporting to OpenTelemetry costs a server: stateless `tools/call` over Streamable HTTP
# (the sync sum of scripts/http-throughput.sh), calls/s and p50 with wrk on 1 and 50 connections,
# for the same server seven ways, each row run ROUNDS times (default 2) in turn so the machine's
# drift falls on every row alike; each row's mean, and its ratio to the first:
#   no subscriber     http-load-server built without `--features otel`
#   subscriber        built with `tool-runtime-otel` (`--features otel`, W3C propagator set), OTEL_* unset: its
#                     usual subscriber (logs at `error`), nothing exported
#   OTLP export       the same binary with OTEL_EXPORTER_OTLP_ENDPOINT set: every call's
#                     server span, execute_tool span and both histograms exported over
#                     OTLP/HTTP (batched) to a local receiver that answers 200 to each batch
#   OTLP, one span    the same with TOOL_RUNTIME_OTEL_ONE_SPAN_PER_CALL=true: each call recorded
#                     on its `tools/call` span, one span a call, not two
#   OTLP 10% traces   the same with OTEL_TRACES_SAMPLER=traceidratio, OTEL_TRACES_SAMPLER_ARG=0.1
#                     (one call in ten traced; the histograms still count every call)
#   no trace kept     the same with OTEL_TRACES_SAMPLER=always_off: what a request outside the
#                     sample costs, with the histograms
#   metrics only      OTEL_TRACES_EXPORTER=none: the two histograms, no span made
# Each row also gives the server's CPU time per call (its threads' user and system time from
# /proc over the calls wrk made): on a shared 2-core machine the calls/s of one row move by 10 to
# 20% between rounds, the CPU per call by a few percent.
# Release code (`--profile perf`); SECONDS_EACH (default 10) per row. Installs wrk (Debian).
# First, instructions per call (callgrind, as the speed gate counts them): a dispatched call of the
# three example tools, and a stateless HTTP call (server and client in one process), with no
# subscriber and with tool-runtime-otel's layer recording everything, every span handed to a
# processor that drops it (`perf-probe`, PROBE_TRACING=otel), and for the HTTP call also with no
# trace kept (PROBE_SAMPLER=off: what a request outside a 10% sample costs).
. "$(dirname "$0")/lib/prelude.sh"
seconds="${SECONDS_EACH:-10}"
command -v wrk >/dev/null || (apt-get install -y -qq wrk >/dev/null)
plain="$target/perf/http-load-server"
with_otel="$target/perf/http-load-server-otel"
cargo build -q --profile perf -p benches --bin http-load-server --bin perf-probe --features otel
cp "$plain" "$with_otel"
probe="$target/perf/perf-probe-otel"
cp "$target/perf/perf-probe" "$probe"
cargo build -q --profile perf -p benches --bin http-load-server
valgrind="$(bash scripts/provision.sh valgrind)"
count() { # VAR=value... (the probe runs with probe_args)
    local out
    out="$(mktemp)"
    env "$@" "$valgrind" --tool=callgrind --callgrind-out-file="$out" "$probe" "${probe_args[@]}" 2>&1 \
        | awk '/Collected :/ {print $4}'
    rm -f "$out"
}
http_calls() { # env...
    probe_args=(http 2000); local a; a=$(count "$@")
    probe_args=(http 0); local b; b=$(count "$@")
    echo $(( (a - b) / 2000 ))
}
plain_n=$(http_calls PROBE_TRACING=none)
traced_n=$(http_calls PROBE_TRACING=otel)
unsampled_n=$(http_calls PROBE_TRACING=otel PROBE_SAMPLER=off)
printf 'http stateless call               instructions/call: no subscriber %6s, spans and histograms recorded %7s (%s x), trace not sampled %7s (%s x)\n' \
    "$plain_n" "$traced_n" "$(python3 -c "print(round($traced_n / $plain_n, 2))")" \
    "$unsampled_n" "$(python3 -c "print(round($unsampled_n / $plain_n, 2))")"
for case in pesan-katering buat-laporan-penjualan buat-tiket; do
    per_call() { # env...
        probe_args=(dispatch "$case" toolkit 10000); local a; a=$(count "$@")
        probe_args=(dispatch "$case" toolkit 0); local b; b=$(count "$@")
        echo $(( (a - b) / 10000 ))
    }
    plain_n=$(per_call PROBE_TRACING=none)
    traced_n=$(per_call PROBE_TRACING=otel)
    printf 'dispatch %-24s instructions/call: no subscriber %6s, spans and histograms recorded %7s (%s x)\n' \
        "$case" "$plain_n" "$traced_n" "$(python3 -c "print(round($traced_n / $plain_n, 1))")"
done
sink_port=18980
python3 - "$sink_port" <<'PY' &
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
PY
wait_port "$sink_port"
rounds="${ROUNDS:-2}"
results="$(mktemp)"
cpu_ticks() { # pid: user + system time of all its threads, in clock ticks
    awk '{print $14 + $15}' "/proc/$1/stat"
}
ticks_per_second=$(getconf CLK_TCK)
row() { # label server [env...]
    local label=$1 server=$2 port=18981 pid
    shift 2
    env "$@" "$server" toolkit 127.0.0.1:$port & pid=$!
    wait_port $port
    for c in 1 50; do
        local out before after
        before=$(cpu_ticks $pid)
        out=$(TOOL=tambah wrk -t"$([ $c = 1 ] && echo 1 || echo 2)" -c$c -d"${seconds}s" --latency \
            -s scripts/load/call2026.lua "http://127.0.0.1:$port/mcp" 2>&1)
        if grep -q "unexpected answer" <<<"$out"; then echo "$out"; exit 1; fi
        after=$(cpu_ticks $pid)
        printf '%s|%s|%s|%s|%s|%s\n' "$label" $c "$(awk '/Requests\/sec/ {print $2}' <<<"$out")" \
            "$(awk '$1=="50%" {print $2}' <<<"$out")" $((after - before)) \
            "$(awk '/requests in/ {print $1}' <<<"$out")" >>"$results"
    done
    kill $pid
    wait $pid 2>/dev/null || true
}
export_to=(OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$sink_port OTEL_SERVICE_NAME=load)
for _ in $(seq "$rounds"); do
    row "no subscriber" "$plain"
    row "subscriber" "$with_otel"
    row "OTLP export" "$with_otel" "${export_to[@]}"
    row "OTLP, one span" "$with_otel" "${export_to[@]}" TOOL_RUNTIME_OTEL_ONE_SPAN_PER_CALL=true
    row "OTLP 10% traces" "$with_otel" "${export_to[@]}" \
        OTEL_TRACES_SAMPLER=traceidratio OTEL_TRACES_SAMPLER_ARG=0.1
    row "no trace kept" "$with_otel" "${export_to[@]}" OTEL_TRACES_SAMPLER=always_off
    row "metrics only" "$with_otel" "${export_to[@]}" OTEL_TRACES_EXPORTER=none
done
python3 - "$results" "$rounds" "$ticks_per_second" <<'PY'
import sys
tick_us = 1e6 / int(sys.argv[3])
rows = {}
for line in open(sys.argv[1]):
    label, c, rate, p50, ticks, calls = line.rstrip("\n").split("|")
    cpu = int(ticks) * tick_us / max(int(calls), 1)
    rows.setdefault((label, int(c)), []).append((float(rate), p50, cpu))
def mean(v, i):
    return sum(r[i] for r in v) / len(v)
base = {c: v for (label, c), v in rows.items() if label == "no subscriber"}
for (label, c), v in rows.items():
    rate, cpu = mean(v, 0), mean(v, 2)
    each = ", ".join(f"{r[0]:.0f}" for r in v)
    print(f"{label:16} {c:2} connection(s): {rate:10.0f} calls/s ({each}; p50 {v[-1][1]})  "
          f"{rate / mean(base[c], 0):.2f}x; server CPU {cpu:5.1f} us/call ({cpu / mean(base[c], 2):.2f}x)")
PY
