"""A small OTLP/HTTP receiver for the telemetry test: decodes what exporters POST to /v1/traces
and /v1/metrics (protobuf, by OpenTelemetry's own generated types) and appends one JSON line per
span and per metric data point to the file given. Prints `port N` once it listens.

    python otlp_receiver.py OUT.jsonl
"""
import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest, ExportMetricsServiceResponse)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest, ExportTraceServiceResponse)

OUT = sys.argv[1]
LOCK = threading.Lock()
KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


def value(v):
    which = v.WhichOneof("value")
    if which == "array_value":
        return [value(x) for x in v.array_value.values]
    if which in (None, "kvlist_value", "bytes_value"):
        return None
    return getattr(v, which)


def attributes(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def service(resource):
    return attributes(resource.attributes).get("service.name")


def traces(body):
    request = ExportTraceServiceRequest.FromString(body)
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            for s in ss.spans:
                yield {
                    "signal": "span",
                    "service": service(rs.resource),
                    "trace_id": s.trace_id.hex(),
                    "span_id": s.span_id.hex(),
                    "parent_span_id": s.parent_span_id.hex(),
                    "name": s.name,
                    "kind": KINDS.get(s.kind, str(s.kind)),
                    "status": STATUS.get(s.status.code, str(s.status.code)),
                    "attributes": attributes(s.attributes),
                    "events": [e.name for e in s.events],
                }


def metrics(body):
    request = ExportMetricsServiceRequest.FromString(body)
    for rm in request.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                for point in getattr(m, kind).data_points:
                    yield {
                        "signal": "metric",
                        "service": service(rm.resource),
                        "name": m.name,
                        "kind": kind,
                        "unit": m.unit,
                        "count": getattr(point, "count", None),
                        "bounds": list(getattr(point, "explicit_bounds", [])),
                        "attributes": attributes(point.attributes),
                    }


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if self.path == "/v1/traces":
            records, response = list(traces(body)), ExportTraceServiceResponse()
        elif self.path == "/v1/metrics":
            records, response = list(metrics(body)), ExportMetricsServiceResponse()
        else:
            self.send_response(404)
            self.end_headers()
            return
        with LOCK, open(OUT, "a") as out:
            for record in records:
                out.write(json.dumps(record) + "\n")
        payload = response.SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"port {server.server_address[1]}", flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    # The test stops the receiver with SIGINT once it has read what was exported.
    pass
