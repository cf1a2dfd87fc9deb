#!/usr/bin/env python3
"""The speed gate: instructions per call, counted by valgrind's callgrind (repeatable on a noisy
machine, unlike wall time), of the workloads of `benches/src/bin/perf-probe.rs`, against the
baselines committed in `benches/perf-baseline.json`. Fails when one rises more than 3%.

    python3 scripts/perf-gate.py                  # measure and compare (CI)
    python3 scripts/perf-gate.py --update "why"   # measure and write the baselines

Raising a baseline is a reviewed commit that says why (the reason is kept in the file). Each
workload runs twice, with N calls and with none, so start-up is not counted:
(instructions(N) - instructions(0)) / N. Dispatch is also shown next to the hand-written floor.
Installs valgrind (Debian) when it is missing; builds with `--profile perf` (release code)."""
import argparse, json, os, re, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINES = os.path.join(ROOT, "benches", "perf-baseline.json")
TOLERANCE = 0.03
CASES = ["pesan-katering", "buat-laporan-penjualan", "buat-tiket"]
# name -> (probe arguments before N, N)
WORKLOADS = {f"dispatch/{c}": (["dispatch", c, "toolkit"], 10_000) for c in CASES}
WORKLOADS["stdio/20k-calls"] = (["stdio"], 20_000)
WORKLOADS["http/stateless-call"] = (["http"], 1_000)
# A call with telemetry recording (tool-runtime-otel's layer: its span and histogram recorded,
# the span handed to a processor that drops it): shown against the same call without one.
WORKLOADS["dispatch-otel/pesan-katering"] = (["dispatch", "pesan-katering", "otel"], 10_000)
FLOORS = {f"dispatch/{c}": (["dispatch", c, "floor"], 10_000) for c in CASES}


def instructions(valgrind, probe, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([valgrind, "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out", probe, *args],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"perf-probe {' '.join(args)} failed:\n{out.stderr[-3000:]}")
        m = re.search(r"Collected : (\d+)", out.stderr)
        if not m:
            sys.exit(f"no instruction count from callgrind for perf-probe {' '.join(args)}:\n{out.stderr[-3000:]}")
        return int(m.group(1))


def per_call(valgrind, probe, args, n):
    return (instructions(valgrind, probe, args + [str(n)]) - instructions(valgrind, probe, args + ["0"])) / n


def main():
    ap = argparse.ArgumentParser(description="The speed gate: instructions per call against the committed baselines.")
    ap.add_argument("--update", metavar="WHY", help="write the measured counts as the new baselines, with the reason")
    update = ap.parse_args().update
    if update is not None and not update.strip():
        sys.exit('--update needs the reason, e.g. --update "the context step reads the session once"')
    provisioned = subprocess.run(["bash", os.path.join(ROOT, "scripts/provision.sh"), "valgrind"],
                                 stdout=subprocess.PIPE, text=True)
    if provisioned.returncode != 0:
        sys.exit("perf gate: valgrind is needed (see the message above)")
    valgrind = provisioned.stdout.strip()
    # The probe alone, with telemetry built in (a subscriber is set only for the `otel` row).
    # (CI's short load run uses the test command's debug build of the load server: building it
    # here too added about 50 s of release code generation to CI.)
    started = time.monotonic()
    subprocess.run(["cargo", "build", "-q", "--profile", "perf", "-p", "benches", "--bin", "perf-probe",
                    "--features", "otel-probe"], cwd=ROOT, check=True)
    target = os.path.join(ROOT, os.environ.get("CARGO_TARGET_DIR", "target"))
    probe = os.path.join(target, "perf", "perf-probe")
    built = time.monotonic()
    print(f"perf gate: release build {built - started:.0f} s", flush=True)
    now = {name: per_call(valgrind, probe, args, n) for name, (args, n) in WORKLOADS.items()}
    floors = {name: per_call(valgrind, probe, args, n) for name, (args, n) in FLOORS.items()}
    print(f"perf gate: measured in {time.monotonic() - built:.0f} s", flush=True)
    traced, plain = now["dispatch-otel/pesan-katering"], now["dispatch/pesan-katering"]
    print(f"telemetry recording on: {traced / plain:.1f}x the instructions of the same call without a subscriber")
    base = {}
    if os.path.exists(BASELINES):
        try:
            base = json.load(open(BASELINES))["instructions_per_call"]
        except (ValueError, KeyError, TypeError) as e:
            sys.exit(f"perf gate: {os.path.relpath(BASELINES, ROOT)} is not a baseline file ({e!r}); rewrite it with --update")
    print(f"{'workload':32} {'baseline':>10} {'now':>10} {'change':>8}   vs floor")
    risen, fallen, missing = [], [], []
    for name, value in now.items():
        b = base.get(name)
        if not isinstance(b, (int, float)) or b <= 0:
            missing.append(name)
            b = None
        change = None if b is None else value / b - 1
        floor = f"{value / floors[name]:.2f}x ({floors[name]:.0f})" if name in floors else ""
        print(f"{name:32} {'-' if b is None else b:>10} {value:10.0f} "
              f"{'' if change is None else f'{change:+.1%}':>8}   {floor}")
        if change is not None and change > TOLERANCE:
            risen.append(f"{name}: {b} -> {value:.0f} instructions per call ({change:+.1%})")
        if change is not None and change < -TOLERANCE:
            fallen.append(name)
    stale = [n for n in base if n not in now]
    if update is not None:
        with open(BASELINES, "w") as f:
            f.write(json.dumps({"why": update, "instructions_per_call": {k: round(v) for k, v in now.items()}},
                               indent=2) + "\n")
        print(f"baselines written to {os.path.relpath(BASELINES, ROOT)}; commit them with the reason")
        return
    if fallen:
        print(f"faster than the baseline by more than {TOLERANCE:.0%}: {', '.join(fallen)}; lock the gain in with "
              f"`python3 scripts/perf-gate.py --update \"why\"`")
    problems = []
    if risen:
        problems.append(f"more than {TOLERANCE:.0%} more instructions than the committed baseline\n  "
                        + "\n  ".join(risen)
                        + "\nFind the cause (callgrind_annotate on `valgrind --tool=callgrind target/perf/perf-probe ...`),"
                        " or, if the cost is wanted, raise the baseline in a commit that says why (--update \"why\").")
    if missing:
        problems.append(f"no baseline for {', '.join(missing)}; write them with --update")
    if stale:
        problems.append(f"baselines for workloads that no longer exist: {', '.join(stale)}; rewrite them with --update")
    if problems:
        sys.exit("perf gate FAILED: " + "\nperf gate FAILED: ".join(problems))
    print("perf gate passed")


main()
