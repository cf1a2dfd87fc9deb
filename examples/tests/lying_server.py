"""An MCP server (the official Python SDK's low-level server) that lies, for the remote-tools
tests: argv[1] picks how; over stdio, or over Streamable HTTP on 127.0.0.1 when argv[3] is a
port.

- `many`: lists 10,001 tools.
- `endless`: every page of its tool list is empty and names a next page.
- `silent`: never answers `tools/list`.
- `mixed`: lists one good tool, two tools of one name, a tool whose schema refers to itself
  without end, a tool whose schema uses `allOf`, a tool whose pattern needs backtracking (with
  the example that keeps it busy), a tool whose results break its output schema, a
  tool that answers 20 MB (100 MB over HTTP), a tool that closes the connection in the middle of a call, and a
  slow tool that logs when the client cancels it.
Every call it receives is appended to the file named by argv[2]."""
import os
import sys

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

MODE, LOG = sys.argv[1], sys.argv[2]
PORT = int(sys.argv[3]) if len(sys.argv) > 3 else None
server = Server("lying-server")

OBJ = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def tool(name, schema=OBJ, output=None):
    return types.Tool(name=name, description=f"{name}: returns a number.", inputSchema=schema,
                      outputSchema=output, annotations=types.ToolAnnotations(readOnlyHint=True))


@server.list_tools()
async def list_tools():
    if MODE == "many":
        return [tool(f"t{i}") for i in range(10_001)]
    if MODE == "endless":
        return types.ListToolsResult(tools=[], nextCursor="more")
    if MODE == "silent":
        await anyio.sleep(3600)
    return [
        tool("good"),
        tool("dup"),
        tool("dup"),
        tool("cycle", {"type": "object", "properties": {"x": {"$ref": "#/$defs/A"}},
                       "$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}]}}}),
        tool("all_of", {"type": "object", "allOf": [OBJ]}),
        # A pattern only a backtracking engine runs, with the example that keeps it busy.
        tool("backtracks", {"type": "object", "properties": {"s": {
            "type": "string", "pattern": "^(?=a)(a+)+$", "examples": ["a" * 40 + "!"]}}}),
        tool("wrong_output", output={"type": "object", "properties": {"n": {"type": "integer"}},
                                     "required": ["n"]}),
        tool("huge"),
        tool("hang_up"),
        tool("slow"),
    ]


@server.call_tool(validate_input=False)
async def call_tool(name, arguments):
    with open(LOG, "a") as log:
        log.write(f"{name} {arguments}\n")
    if name == "wrong_output":
        return types.CallToolResult(content=[types.TextContent(type="text", text="{}")],
                                    structuredContent={"n": "not a number"})
    if name == "huge":
        return [types.TextContent(type="text", text="x" * ((100 if PORT else 20) << 20))]
    if name == "slow":
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            with open(LOG, "a") as log:
                log.write("slow cancelled\n")
            raise
    if name == "hang_up":
        # The process ends at once (closing `sys.stdout` would not: the file descriptor stays
        # open while a thread still reads stdin, and the client would wait out its time limit).
        os._exit(0)
    return [types.TextContent(type="text", text=str(arguments.get("n", 0) + 1))]


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http():
    import contextlib

    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    manager = StreamableHTTPSessionManager(app=server)

    class Endpoint:
        async def __call__(self, scope, receive, send):
            await manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async with manager.run():
            yield

    app = Starlette(routes=[Route("/mcp", Endpoint(), methods=["GET", "POST", "DELETE"])],
                    lifespan=lifespan)
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")


if PORT:
    serve_http()
else:
    anyio.run(main)
