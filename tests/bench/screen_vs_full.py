#!/usr/bin/python3
"""screen_vs_full.py - `make bench-cpu-screen`: what the model's screen saves
on a real measured tuning run, and at what quality.

The same small measured space (default spaces/cpu_gemm_small.xml, 64
configurations, one thread, the worker's CPU-time clock) is tuned three
times with the same seed and repetitions: an exhaustive measured sweep (the
reference best), the one-knob search measuring every candidate, and the
one-knob search with `--screen K` (the model ranks each round's new configs,
only its best K are measured). Per run it counts, from the run's journal,
the measured evaluations (E records that reached the worker) and the
screened ones (E records with the guard `screened`, never measured), then
measures the three recommendations against each other interleaved in one
worker (tests/bench/exec_ab.py: rounds of every mapping in rotated order,
median sample per round, median of the rounds), so a shared host's drift
hits all three alike. Out come the measured evaluations saved by the screen
against measure-everything and each recommendation's kernel time against
the sweep's best. Reports, asserts nothing.

usage: screen_vs_full.py [--knobwise BIN] [--worker BIN] [--space S] [--repeats R]
                         [--screen K] [--rounds N] [--reps N] [--keep DIR]
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time


def journal_counts(run):
    """(measured, screened) evaluation records of RUN/journal."""
    measured = screened = 0
    with open(os.path.join(run, "journal")) as f:
        for line in f:
            if not line.startswith("E "):
                continue
            if re.search(r" g=screened( |$)", line):
                screened += 1
            else:
                measured += 1
    return measured, screened


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--knobwise", default="./knobwise")
    ap.add_argument("--worker", default="./knobwise-worker")
    ap.add_argument("--space", default="spaces/cpu_gemm_small.xml")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--screen", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--ops", default="op.fc=gemm,n:3072,k:768,epilogue:1",
                    help="the space's operators as worker tokens (exec_ab.py --ops)")
    ap.add_argument("--keep", help="folder for the three run folders (default: a temp folder)")
    a = ap.parse_args()
    d = a.keep or tempfile.mkdtemp(prefix="kw-screen-")
    os.makedirs(d, exist_ok=True)
    worker = f"{os.path.abspath(a.worker)} --clock cpu"
    runs = [("exhaustive", ["--strategy", "exhaustive"]), ("ofat", []),
            (f"ofat_screen{a.screen}", ["--screen", str(a.screen)])]
    rows = []
    for name, extra in runs:
        out = os.path.join(d, name)
        if os.path.exists(out):
            sys.exit(f"{out} exists: give --keep a new folder")
        cmd = [a.knobwise, "tune", "--space", a.space, "--evaluator", "exec:" + worker,
               "--threads", "1", "--repeats", str(a.repeats), "--out", out] + extra
        t0 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.monotonic() - t0
        if r.returncode != 0:
            sys.exit(f"{' '.join(shlex.quote(c) for c in cmd)}: exit {r.returncode}\n{r.stderr}")
        rec = out + ".csv"
        r = subprocess.run([a.knobwise, "recommend", out, "--all", "-o", rec], capture_output=True,
                           text=True)
        if r.returncode != 0:
            sys.exit(f"recommend {out}: {r.stderr}")
        m, s = journal_counts(out)
        rows.append((name, m, s, wall, rec))
        print(f"{name}: {m} measured evaluations, {s} screened, {wall:.0f} s "
              f"({' '.join(shlex.quote(c) for c in cmd)})", flush=True)
    ab = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "exec_ab.py"),
                         "--worker", worker, "--ops", a.ops, "--rounds", str(a.rounds),
                         "--reps", str(a.reps)] + [f"{n}={rec}" for n, _, _, _, rec in rows],
                        capture_output=True, text=True)
    if ab.returncode != 0:
        sys.exit("exec_ab.py: " + ab.stderr)
    print(ab.stdout, end="")
    med = {}
    for line in ab.stdout.splitlines():
        f = line.split()
        if len(f) >= 6 and f[0] in {n for n, *_ in rows}:
            med[f[0]] = float(f[2])
    full, scr = rows[1], rows[2]
    print(f"\n{'run':16} {'measured':>8} {'screened':>8} {'wall_s':>7} {'median_us':>10} "
          f"{'vs_sweep_best':>13}")
    for name, m, s, wall, _ in rows:
        print(f"{name:16} {m:8d} {s:8d} {wall:7.0f} {med[name]:10.1f} "
              f"{100.0 * (med[name] / med['exhaustive'] - 1.0):+12.1f}%")
    print(f"screen {a.screen}: {full[1] - scr[1]} measured evaluations saved against measuring "
          f"everything ({scr[1]} against {full[1]}, {100.0 * (1.0 - scr[1] / full[1]):.0f}% fewer); "
          f"its recommendation {100.0 * (med[scr[0]] / med[full[0]] - 1.0):+.1f}% against the "
          f"measure-everything run's (interleaved medians)")


if __name__ == "__main__":
    main()
