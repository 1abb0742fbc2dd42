#!/usr/bin/python3
"""exec_ab.py - measure the recommended mappings of several runs against each
other on the same worker, interleaved, so that run-to-run differences of the
arrival rate or of a shared host's load do not decide the comparison.

Each run folder's recommendation is read from its mappings.csv (`knobwise
recommend RUN --all -o FILE`; the knob columns sit between borrowed_from and
phase). Every round measures every mapping once (`reps` samples after
`warmup` runs, one worker process for all, the order rotated each round so
drift hits every mapping alike) and keeps each mapping's median sample; the
report is, per mapping, the median of its round medians, their range, and its
ratio to the first mapping's: the median of the per-round ratios (each round's
two medians were measured next to each other, so load that changes between
rounds cancels) with its distribution-free 95% interval (binomial order
statistics of the rounds' ratios, Hahn & Meeker 1991, 5.2: needs 6 rounds or
more; fewer print "-"), and the load average before and after. Used by README's
"A real tuning run" to hold a one-knob search's pick against an exhaustive
sweep's best. Reports, asserts nothing.

usage: exec_ab.py --worker CMD --ops 'op.fc=gemm,n:3072,k:768,epilogue:1'
                  [--rounds 10] [--reps 15] [--warmup 2] [--json FILE] NAME=MAPPINGS.csv ...
"""
import argparse
import csv
import json
import math
import os
import shlex
import statistics
import subprocess
import sys


def read_mapping(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{path}: no mapping")
    row = rows[0]
    cols = list(row.keys())
    knobs = cols[cols.index("borrowed_from") + 1:cols.index("phase")]
    shape = {k: row[k] for k in ("phase", "batch", "seq", "kv_len")}
    return row["config_id"], shape, {k: row[k] for k in knobs}


def median_ci(xs, conf=0.95):
    """(median, lo, hi) of xs, lo/hi the distribution-free interval of the
    median: order statistics x(k) and x(n+1-k), k the largest with
    P(k <= B < n+1-k) >= conf, B ~ Binomial(n, 1/2); None, None when n is too
    small for any such k."""
    v = sorted(xs)
    n = len(v)
    m = statistics.median(v)
    best = None
    for k in range(1, n // 2 + 1):
        cover = sum(math.comb(n, i) for i in range(k, n + 1 - k)) / 2.0 ** n
        if cover >= conf:
            best = k
    if best is None:
        return m, None, None
    return m, v[best - 1], v[n - best]


def ratio_line(meds, name, ref):
    """Per-round ratio of name's medians to ref's: (median, lo, hi) in percent."""
    r = [100.0 * (a / b - 1.0) for a, b in zip(meds[name], meds[ref])]
    return median_ci(r)


def fmt_ci(m, lo, hi):
    return f"{m:+.1f}% [{lo:+.1f}, {hi:+.1f}]" if lo is not None else f"{m:+.1f}% [-]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", required=True)
    ap.add_argument("--ops", required=True, help="op.NAME=KIND,... tokens, space separated")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--json", help="write every round's median per mapping to FILE")
    ap.add_argument("runs", nargs="+", help="NAME=MAPPINGS.csv")
    a = ap.parse_args()
    load0 = os.getloadavg()
    maps = []
    for r in a.runs:
        name, path = r.split("=", 1)
        cid, shape, knobs = read_mapping(path)
        maps.append((name, cid, shape, knobs))
    w = subprocess.Popen(shlex.split(a.worker), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, bufsize=1)
    w.stdin.write("hello protocol=1\n")
    print("worker:", w.stdout.readline().strip())
    meds = {m[0]: [] for m in maps}
    rid = 0
    for rnd in range(a.rounds):
        order = maps[rnd % len(maps):] + maps[:rnd % len(maps)]
        for name, cid, shape, knobs in order:
            rid += 1
            req = (f"measure id={rid} phase={shape['phase']} batch={shape['batch']} "
                   f"seq={max(1, int(shape['seq'] or 0))} kv_len={shape['kv_len'] or 0} "
                   f"warmup={a.warmup} reps={a.reps} {a.ops} "
                   + " ".join(f"knob.{k}={v}" for k, v in knobs.items()))
            w.stdin.write(req + "\n")
            ans = w.stdout.readline().split()
            if not ans or ans[0] != "ok":
                sys.exit(f"{name}: worker answered {' '.join(ans)}")
            s = [float(x) for x in dict(t.split("=", 1) for t in ans[1:])["samples_us"].split(",")]
            meds[name].append(statistics.median(s))
    w.stdin.write("quit\n")
    w.stdin.close()
    w.wait()
    load1 = os.getloadavg()
    ref = statistics.median(meds[maps[0][0]])
    print(f"{'run':12} {'config':18} {'median_us':>10} {'min_us':>10} {'max_us':>10} {'vs_first':>9} "
          f"{'paired vs first [95% CI]':>26}  knobs")
    for name, cid, shape, knobs in maps:
        m = statistics.median(meds[name])
        print(f"{name:12} {cid:18} {m:10.1f} {min(meds[name]):10.1f} {max(meds[name]):10.1f} "
              f"{100.0 * (m / ref - 1.0):+8.1f}% {fmt_ci(*ratio_line(meds, name, maps[0][0])):>26}  "
              + " ".join(f"{k}={v}" for k, v in knobs.items()))
    print(f"{a.rounds} rounds of {a.reps} samples; load average {load0[0]:.1f} before, "
          f"{load1[0]:.1f} after")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rounds": a.rounds, "reps": a.reps, "load": [load0[0], load1[0]],
                       "maps": [{"name": n, "config_id": c, "knobs": k, "medians": meds[n]}
                                for n, c, _, k in maps]}, f, indent=1)


if __name__ == "__main__":
    main()
