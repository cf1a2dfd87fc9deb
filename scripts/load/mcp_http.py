"""Small MCP-over-HTTP helpers for the load scripts (standard library only)."""
import http.client
import json

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "load", "version": "0"}}}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def post(conn, message, session=None):
    headers = dict(HEADERS)
    if session:
        headers["Mcp-Session-Id"] = session
        headers["Mcp-Protocol-Version"] = "2025-11-25"
    conn.request("POST", "/mcp", json.dumps(message), headers)
    r = conn.getresponse()
    return r.status, r.getheader("mcp-session-id"), r.read().decode()


def open_session(host, port):
    conn = http.client.HTTPConnection(host, port, timeout=30)
    status, session, body = post(conn, INIT)
    assert status == 200, (status, body)
    status, _, _ = post(conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert status == 202, status
    return conn, session


def call(conn, session, a=2, b=3):
    """Whether the call was answered with its sum; `None` when the session is gone (404)."""
    status, _, body = post(conn, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                  "params": {"name": "tambah", "arguments": {"a": a, "b": b}}}, session)
    if status == 404:
        return None
    return status == 200 and str(a + b) in body


def rss_kib(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


if __name__ == "__main__":
    import sys
    _, session = open_session(sys.argv[1], int(sys.argv[2]))
    print(session)
