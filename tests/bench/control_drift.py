#!/usr/bin/python3
"""control_drift.py - the control (README, "The control") against a device
that drifts: the measuring evaluator drives the test worker
(tests/kw_tworker, times a function of the knobs, 5% noise drawn from the
request, and --drift PCT: request i takes 1 + PCT/100 x i times longer) over
tests/data/exec/small.xml (36 configurations), one-knob search, one thread,
for 20 noise seeds, with each knobwise binary given. Each recommendation is
scored by its p95 in an exhaustive sweep with the same worker without noise
or drift (the truth), against that sweep's optimum. Reports, asserts nothing.

usage: control_drift.py --knobwise BIN [--knobwise BIN2 ...] [--drift PCT ...]
                        [--builddir DIR] [--srcdir DIR] [--seeds N]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile


def primaries(journal):
    """Mean primary of every config over its repetitions 0..repeats-1."""
    reps, metric, prim, m = None, None, None, {}
    for line in open(journal):
        if line.startswith("H "):
            reps = int(re.search(r" repeats=(\d+)", line).group(1))
            metric = re.search(r" metric=(\S+)", line).group(1)
        elif line.startswith("M "):
            prim = line.split()[1][len("names="):].split(",").index(metric)
        elif line.startswith("E "):
            if int(re.search(r" rep=(\d+)", line).group(1)) >= reps:
                continue  # a control re-measurement
            c = re.search(r" c=(\S+)", line).group(1)
            m.setdefault(c, []).append(float(re.search(r" m=(\S+)", line).group(1).split(",")[prim]))
    return {c: statistics.mean(v) for c, v in m.items()}


def recommended(journal):
    for line in open(journal):
        if line.startswith("D "):
            return re.search(r" c=(\S+)", line).group(1)
    return None


def tune(binary, space, worker, out, extra=()):
    r = subprocess.run([binary, "tune", "--space", space, "--evaluator", f"exec:{worker}",
                        "--out", out, "--quiet", "--threads", "1", *extra],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{binary} tune failed: {r.stderr}")
    return os.path.join(out, "journal")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--knobwise", action="append", required=True)
    ap.add_argument("--drift", action="append", default=None)
    ap.add_argument("--builddir", default=".")
    ap.add_argument("--srcdir", default=".")
    ap.add_argument("--seeds", type=int, default=20)
    a = ap.parse_args()
    worker = os.path.abspath(os.path.join(a.builddir, "tests", "kw_tworker"))
    space = os.path.abspath(os.path.join(a.srcdir, "tests", "data", "exec", "small.xml"))
    tmp = tempfile.mkdtemp(prefix="kw-drift.")
    try:
        truth = primaries(tune(a.knobwise[-1], space, worker, os.path.join(tmp, "truth"),
                               ("--strategy", "exhaustive")))
        opt = min(truth.values())
        print(f"truth: {len(truth)} configs, optimum p95 {opt:.1f} us")
        print(f"{'drift %/req':>11}  {'knobwise':<40} within 5%  median gap  max gap  evals (median)")
        for d in a.drift or ["0", "0.3", "1"]:
            for b in a.knobwise:
                gaps, evals = [], []
                for seed in range(1, a.seeds + 1):
                    out = os.path.join(tmp, f"run{seed}")
                    shutil.rmtree(out, ignore_errors=True)
                    j = tune(b, space, f"{worker} --noise 0.05 --seed {seed} --drift {d}", out)
                    gaps.append((truth[recommended(j)] / opt - 1) * 100)
                    evals.append(sum(1 for line in open(j) if line.startswith("E ")))
                print(f"{d:>11}  {b:<40} {sum(g <= 5 for g in gaps):3d}/{a.seeds:<5} "
                      f"{statistics.median(gaps):9.1f}% {max(gaps):7.1f}%  {statistics.median(evals):6.0f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
