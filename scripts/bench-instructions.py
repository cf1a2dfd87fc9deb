#!/usr/bin/env python3
"""Instructions per call of each benchmark in `tool-runtime/benches/dispatch.rs`, counted by
valgrind's callgrind: repeatable on a noisy machine, unlike wall time. Prints the toolkit/baseline
ratio per tool. Usage: python3 scripts/bench-instructions.py (needs valgrind)."""
import glob, os, re, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
subprocess.run(["cargo", "bench", "-p", "tool-runtime", "--bench", "dispatch", "--no-run"], cwd=root, check=True,
               stderr=subprocess.DEVNULL)
binary = max((p for p in glob.glob(os.path.join(root, "target/release/deps/dispatch-*")) if not p.endswith(".d")),
             key=os.path.getmtime)
# The function each benchmark times, as callgrind names it.
TOOLS = {"pesan-katering": "baseline::katering", "buat-laporan-penjualan": "baseline::penjualan",
         "buat-tiket": "baseline::buat_tiket"}
TOOLKIT = "dispatch::toolkit"


def per_call(bench, function):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "--bench",
                        "--profile-time", "1", f"^{bench}$"], check=True, capture_output=True)
        lines = open(out).read().split("\n")
    names, calls, cost, current = {}, 0, 0, None
    for line in lines:
        m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
        if m and m.group(2):
            names[m.group(1)] = m.group(2)
        m = re.match(r"cfn=\((\d+)\)", line)
        if m:
            current = names.get(m.group(1), "")
    for i, line in enumerate(lines):
        m = re.match(r"cfn=\((\d+)\)", line)
        if m:
            current = names.get(m.group(1), "")
        if line.startswith("calls=") and current and function in current:
            calls += int(line.split("=")[1].split()[0])
            cost += int(lines[i + 1].split()[1])
    return cost / calls if calls else float("nan")


for tool, baseline in TOOLS.items():
    base = per_call(f"{tool}/baseline", baseline)
    ours = per_call(f"{tool}/toolkit", TOOLKIT)
    print(f"{tool:24} baseline {base:7.0f} instr/call   toolkit {ours:7.0f} instr/call   ratio {ours / base:.2f}x")
