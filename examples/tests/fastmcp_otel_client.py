"""FastMCP's client (PyPI), traced by OpenTelemetry's SDK and exporting to the test's OTLP
receiver, calls the gateway inside one span of its own: an HR tool (the gateway's stdio remote),
a tool of the HTTP remote, a call the tool refuses (`isError`) and an unknown tool (a JSON-RPC
error). FastMCP writes each request's trace context into `params._meta`. Prints the trace id and
the root span's id as JSON.

    python fastmcp_otel_client.py GATEWAY_URL OTLP_BASE_URL
"""
import asyncio
import json
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

URL, OTLP = sys.argv[1], sys.argv[2]
provider = TracerProvider(resource=Resource.create({"service.name": "fastmcp-client"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{OTLP}/v1/traces")))
trace.set_tracer_provider(provider)

from fastmcp import Client  # noqa: E402 (after the provider, which FastMCP's tracer uses)


async def main():
    tracer = trace.get_tracer("telemetry-test")
    with tracer.start_as_current_span("invoke_agent hr") as root:
        async with Client(URL) as client:
            names = [t.name for t in await client.list_tools()]
            assert "hr_cek-sisa-cuti" in names and "remote_cek-sisa-cuti" in names, names
            stdio = await client.call_tool("hr_cek-sisa-cuti", {})
            assert not stdio.is_error, stdio
            http = await client.call_tool("remote_cek-sisa-cuti", {})
            assert not http.is_error, http
            refused = await client.call_tool("pesan-katering", {"jumlah_peserta": "25"}, raise_on_error=False)
            assert refused.is_error, refused
            try:
                await client.call_tool("tidak-ada", {})
            except Exception as e:  # the JSON-RPC error, as FastMCP raises it
                assert "tidak-ada" in str(e), repr(e)
            else:
                raise AssertionError("an unknown tool was answered")
        context = root.get_span_context()
    provider.shutdown()
    print(json.dumps({"trace_id": format(context.trace_id, "032x"), "root": format(context.span_id, "016x")}))


asyncio.run(main())
