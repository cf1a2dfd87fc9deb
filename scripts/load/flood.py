"""Floods a toolkit HTTP server (argv: host port server-pid sessions slow-connections seconds)
while an ordinary client keeps calling a tool, and prints what the server held and how the
ordinary client fared. Standard library only."""
import resource
import socket
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import http.client

from mcp_http import INIT, call, open_session, post, rss_kib

host, port, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# The flood comes from another loopback address than the ordinary client: the server gives
# each caller (here, each address) its own share.
FLOODER = "127.0.0.2"
sessions, slow, seconds = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Ordinary(threading.Thread):
    """A client with a session opened before the flood, calling the tool over and over (on a new
    connection whenever one is cut off); latencies of the calls answered, and the failures."""

    def __init__(self, session):
        super().__init__(daemon=True)
        self.session = session
        self.stop = threading.Event()
        self.latencies, self.failures, self.reopened = [], 0, 0

    def run(self):
        conn, session = None, self.session
        while not self.stop.is_set():
            start = time.perf_counter()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(host, port, timeout=30)
                ok = call(conn, session)
                if ok is None:
                    # Its session was closed to make room for a newer one of the same caller
                    # (the flood comes from the same address): a client opens another.
                    conn, session = open_session(host, port)
                    self.reopened += 1
                    ok = call(conn, session)
            except (OSError, http.client.HTTPException, AssertionError):
                ok, conn = False, None
            if ok:
                self.latencies.append(time.perf_counter() - start)
            else:
                self.failures += 1
                time.sleep(0.05)
            time.sleep(0.01)

    def report(self):
        lat = sorted(self.latencies)
        if not lat:
            return f"ordinary client: 0 calls answered, {self.failures} failed"
        p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000
        return (f"ordinary client: {len(lat)} calls answered, {self.failures} failed, "
                f"{self.reopened} sessions reopened, p50 {p(0.5):.1f} ms, p99 {p(0.99):.1f} ms")


def flood_sessions():
    codes = {}
    lock = threading.Lock()

    def one(_):
        try:
            c = http.client.HTTPConnection(host, port, timeout=30, source_address=(FLOODER, 0))
            status, _, _ = post(c, INIT)
            c.close()
        except OSError as e:
            status = type(e).__name__
        with lock:
            codes[status] = codes.get(status, 0) + 1

    with ThreadPoolExecutor(32) as pool:
        list(pool.map(one, range(sessions)))
    return codes


def slow_headers():
    socks = []
    for _ in range(slow):
        s = socket.socket()
        try:
            s.bind((FLOODER, 0))
            s.connect((host, port))
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            socks.append(s)
        except OSError:
            s.close()
    deadline = time.time() + seconds
    while time.time() < deadline:
        for s in socks:
            try:
                s.send(b"a")
            except OSError:
                pass
        time.sleep(1)
    open_at_end = 0
    for s in socks:
        try:
            s.send(b"a")
            open_at_end += 1
        except OSError:
            pass
        s.close()
    return len(socks), open_at_end


MEMORY_CAP_MIB = 256


def check(o, phase):
    """The ordinary client kept being served, and the server's memory stayed under the cap."""
    assert o.latencies and o.failures <= len(o.latencies) // 10, f"{phase}: {o.report()}"
    peak = rss_kib(pid, "VmHWM") / 1024
    assert peak < MEMORY_CAP_MIB, f"{phase}: server peak memory {peak:.1f} MiB"


base = rss_kib(pid)
print(f"server memory at rest: {base / 1024:.1f} MiB")
_, session = open_session(host, port)
o = Ordinary(session); o.start()
t = time.time()
codes = flood_sessions()
print(f"{sessions} initialize requests in {time.time() - t:.1f} s: {codes}; "
      f"server memory {rss_kib(pid) / 1024:.1f} MiB (peak {rss_kib(pid, 'VmHWM') / 1024:.1f} MiB)")
o.stop.set(); o.join(); print(o.report())
check(o, "session flood")

o = Ordinary(session); o.start()
opened, still = slow_headers()
print(f"{slow} slow-header connections ({opened} opened) held {seconds:.0f} s, {still} still open at the end; "
      f"server memory {rss_kib(pid) / 1024:.1f} MiB (peak {rss_kib(pid, 'VmHWM') / 1024:.1f} MiB)")
o.stop.set(); o.join(); print(o.report())
check(o, "slow-header connections")
