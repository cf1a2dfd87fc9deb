"""Drives a stdio MCP server (argv: calls, then the server's command) twice: pipelined calls
read as fast as they come, then a client that writes without reading until the server stops
reading, and only then reads. Checks every request is answered exactly once; prints calls/s
and the server's memory."""
import json
import subprocess
import sys
import threading
import time

from mcp_http import rss_kib

calls, command = int(sys.argv[1]), sys.argv[2:]
INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "load", "version": "0"}}})
LINE = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tambah","arguments":{"a":%d,"b":1}}}\n'


def start():
    p = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    p.stdin.write((INIT + "\n" + '{"jsonrpc":"2.0","method":"notifications/initialized"}\n').encode())
    p.stdout.readline()
    return p


def read_all(p, n):
    seen = bytearray(n + 1)
    out = p.stdout
    for _ in range(n):
        line = out.readline()
        if not line:
            break
        m = json.loads(line)
        i = m["id"]
        assert not seen[i], f"{i} answered twice"
        assert m["result"]["structuredContent"]["result"] == i + 1, m
        seen[i] = 1
    return sum(seen)


def write_all(p, n, progress):
    try:
        for i in range(1, n + 1):
            p.stdin.write((LINE % (i, i)).encode())
            progress[0] = i
    except BrokenPipeError:
        pass


# Pipelined: one thread writes, this one reads.
p = start()
progress = [0]
t = time.perf_counter()
w = threading.Thread(target=write_all, args=(p, calls, progress)); w.start()
answered = read_all(p, calls)
elapsed = time.perf_counter() - t
w.join()
assert answered == calls, f"pipelined: {answered} of {calls} answered"
print(f"stdio pipelined: {answered} of {calls} answered once each, {answered / elapsed:,.0f} calls/s, "
      f"server peak memory {rss_kib(p.pid, 'VmHWM') / 1024:.1f} MiB")
p.stdin.close(); p.wait()

# A client that does not read: the writer blocks once the server stops reading.
p = start()
progress = [0]
w = threading.Thread(target=write_all, args=(p, calls, progress), daemon=True); w.start()
last = -1
while progress[0] != last:
    last = progress[0]
    time.sleep(1.0)
held = rss_kib(p.pid)
assert last < calls, "the server kept reading from a client that does not read"
print(f"stdio non-reading client: the server stopped reading after {last} of {calls} requests; "
      f"server memory {held / 1024:.1f} MiB")
answered = read_all(p, calls)
w.join()
print(f"stdio non-reading client, then reading: {answered} of {calls} answered once each, "
      f"server peak memory {rss_kib(p.pid, 'VmHWM') / 1024:.1f} MiB")
p.stdin.close(); p.wait()
assert answered == calls
