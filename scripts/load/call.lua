-- wrk: every request is one MCP tools/call of `tambah` in the session named by $MCP_SESSION,
-- each with its own JSON-RPC id (ids in flight in one session must differ).
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

local n = 0
local headers = {
  ["Content-Type"] = "application/json",
  ["Accept"] = "application/json, text/event-stream",
  ["Mcp-Session-Id"] = os.getenv("MCP_SESSION"),
  ["Mcp-Protocol-Version"] = "2025-11-25",
}

function request()
  n = n + 1
  local body = string.format(
    '{"jsonrpc":"2.0","id":"%s-%d","method":"tools/call","params":{"name":"tambah","arguments":{"a":2,"b":3}}}',
    tid, n)
  return wrk.format("POST", nil, headers, body)
end

function response(status, headers, body)
  if status ~= 200 or not (string.find(body, '"text":"5"', 1, true) or string.find(body, '\\"result\\":5', 1, true)) then
    io.stderr:write("unexpected answer: " .. status .. " " .. body .. "\n")
    wrk.thread:stop()
  end
end
