-- wrk: every request is one stateless 2026-07-28 MCP tools/call of `tambah` (no session: any
-- replica can answer it), the protocol version and client capabilities in `_meta`.
-- $TOOL names another tool taking `a` and `b` (this toolkit's `tambah_cepat`: the same sum,
-- declared `blocking = false`).
local tool = os.getenv("TOOL") or "tambah"
local n = 0
local headers = {
  ["Content-Type"] = "application/json",
  ["Accept"] = "application/json, text/event-stream",
  ["Mcp-Protocol-Version"] = "2026-07-28",
  ["Mcp-Method"] = "tools/call",
  ["Mcp-Name"] = tool,
}

function request()
  n = n + 1
  local body = string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"%s","arguments":{"a":2,"b":3}}}',
    n, tool)
  return wrk.format("POST", nil, headers, body)
end

function response(status, headers, body)
  if status ~= 200 or not (string.find(body, '"text":"5"', 1, true) or string.find(body, '\\"result\\":5', 1, true)) then
    io.stderr:write("unexpected answer: " .. status .. " " .. body .. "\n")
    wrk.thread:stop()
  end
end
