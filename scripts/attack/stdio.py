"""Attack 7 on a stdio MCP server (argv: lines, then the server's command): a client pipelines a
mix of lines (calls, malformed lines with an id, lines that are not JSON, pings) as fast as it can
while reading the answers; every line that deserves an answer must get exactly one, and the
server's read-ahead window (how many requests it reads ahead of its answers, measured with a
client that stops reading) must be the same after the run as before it, within the few lines the
pipes' buffering moves it. Standard library only."""
import json
import subprocess
import sys
import threading
import time

lines, command = int(sys.argv[1]), sys.argv[2:]
INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "attack", "version": "0"}}})
CALL = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"cek-sisa-cuti","arguments":{}}}\n'


def mixed(i):
    """The i-th line of the mix, and whether its answer carries its id (None: no answer)."""
    kind = i % 10
    if kind < 5:
        return CALL % i, True
    if kind < 7:
        return '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"cek-sisa-cuti","arguments":7}}\n' % i, True
    if kind == 7:
        return "this is not json {\n", False
    if kind == 8:
        return '{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i, True
    return '{"jsonrpc":"2.0","id":%d,"method":5}\n' % i, True


p = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
p.stdin.write((INIT + "\n" + '{"jsonrpc":"2.0","method":"notifications/initialized"}\n').encode())
p.stdout.readline()
out = p.stdout


def window(first_id):
    """Writes calls without reading until the server stops reading: how many it took (its
    read-ahead, plus what the pipe holds). Then every answer is read, each id once."""
    progress, stop = [0], threading.Event()

    def write():
        n = 0
        while not stop.is_set():
            n += 1
            p.stdin.write((CALL % (first_id + n)).encode())
            progress[0] = n

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    last = -1
    while progress[0] != last:
        last = progress[0]
        time.sleep(1.0)
    stop.set()
    seen = set()
    while writer.is_alive() or len(seen) < progress[0]:
        m = json.loads(out.readline())
        assert m["id"] not in seen, m
        seen.add(m["id"])
    return last


before = window(10_000_000)
expected_ids, expected_anonymous = set(), 0
for i in range(1, lines + 1):
    text, has_id = mixed(i)
    if has_id:
        expected_ids.add(i)
    else:
        expected_anonymous += 1


def write_mix():
    for i in range(1, lines + 1):
        p.stdin.write(mixed(i)[0].encode())


t0 = time.perf_counter()
threading.Thread(target=write_mix, daemon=True).start()
seen, anonymous, twice = set(), 0, 0
while len(seen) < len(expected_ids) or anonymous < expected_anonymous:
    line = out.readline()
    if not line:
        break
    m = json.loads(line)
    if m.get("id") is None:
        anonymous += 1
    elif m["id"] in seen:
        twice += 1
    else:
        seen.add(m["id"])
elapsed = time.perf_counter() - t0
after = window(20_000_000)
# The stall point also counts what the pipes and the server's 8 KiB read buffer hold, which moves
# by up to one buffer of lines from one measurement to the next; each request place lost for
# good would lower it by one (the bug this guards against lost 192 in 300,000 lines), so only a
# fall counts: a rise is the pipe holding more at that moment (seen: 81 lines). Every lost
# answer is caught exactly by the count above.
noise = 8192 // len(CALL % 20_000_000)
ok = (seen == expected_ids and anonymous == expected_anonymous and twice == 0
      and before - after <= noise)
print(f"  {lines} mixed lines: {len(seen)} of {len(expected_ids)} ids answered once, {anonymous} of "
      f"{expected_anonymous} lines without an id answered, {twice} twice, in {elapsed:.1f} s; read-ahead "
      f"{before} lines before, {after} after (buffers move it by up to {noise}) -> {'ok' if ok else 'FAILED'}")
p.stdin.close()
p.wait()
sys.exit(0 if ok else 1)
