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
the sweep's best.

The sweep's best is not its first-ranked config: an exhaustive sweep
measures its configs one after another (mixed-radix order), so on a shared
host the load of the moment decides as much as the config, and the minimum
of 64 noisy means is a lucky one. The reference is instead the best, by
interleaved median, of the sweep's --top ranked configs (ranked.csv)
re-measured in the same interleaved series as the picks, and every pick is
judged by its paired per-round ratio to that reference with a 95%
distribution-free interval (exec_ab.py). Reports, asserts nothing.

usage: screen_vs_full.py [--knobwise BIN] [--worker BIN] [--space S] [--repeats R]
                         [--screen K] [--top K] [--rounds N] [--reps N] [--keep DIR]
                         [--remeasure]
--remeasure: the three run folders already in --keep DIR are measured again
(interleaved series only; wall times print as 0).
"""
import argparse
import csv
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exec_ab import fmt_ci, median_ci  # noqa: E402


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


def sweep_top(space, exh_csv, ranked, k, d):
    """Mapping CSVs (exec_ab.py's input) for the first k rows of the sweep's
    ranked.csv: the space's baseline with each row's knobs_changed applied,
    in the layout of the sweep's own recommendation file exh_csv."""
    base = {n.get("name"): n.get("baseline") for n in ET.parse(space).getroot().iter("knob")}
    with open(exh_csv, newline="") as f:
        rd = csv.DictReader(f)
        cols, row0 = rd.fieldnames, next(rd)
    out = []
    with open(ranked, newline="") as f:
        for r in list(csv.DictReader(f))[:k]:
            row = dict(row0, config_id=r["config_id"])
            for n in base:
                row[n] = base[n]
            for kv in filter(None, r["knobs_changed"].split(";")):
                n, v = kv.split("=", 1)
                row[n] = v
            path = os.path.join(d, f"sweep{r['rank']}.csv")
            with open(path, "w", newline="") as g:
                w = csv.DictWriter(g, fieldnames=cols)
                w.writeheader()
                w.writerow(row)
            out.append((f"sweep{r['rank']}", path))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--knobwise", default="./knobwise")
    ap.add_argument("--worker", default="./knobwise-worker")
    ap.add_argument("--space", default="spaces/cpu_gemm_small.xml")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--screen", type=int, default=2)
    ap.add_argument("--top", type=int, default=5,
                    help="the sweep's first K ranked configs re-measured as the reference")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--ops", default="op.fc=gemm,n:3072,k:768,epilogue:1",
                    help="the space's operators as worker tokens (exec_ab.py --ops)")
    ap.add_argument("--keep", help="folder for the three run folders (default: a temp folder)")
    ap.add_argument("--remeasure", action="store_true",
                    help="re-measure the run folders already in --keep (no tuning)")
    a = ap.parse_args()
    d = a.keep or tempfile.mkdtemp(prefix="kw-screen-")
    os.makedirs(d, exist_ok=True)
    worker = f"{os.path.abspath(a.worker)} --clock cpu"
    runs = [("exhaustive", ["--strategy", "exhaustive"]), ("ofat", []),
            (f"ofat_screen{a.screen}", ["--screen", str(a.screen)])]
    rows = []
    print(f"load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    for name, extra in runs:
        out = os.path.join(d, name)
        if a.remeasure:
            m, s = journal_counts(out)
            rows.append((name, m, s, 0.0, out + ".csv"))
            continue
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
    top = sweep_top(a.space, rows[0][4], os.path.join(d, "exhaustive", "ranked.csv"), a.top, d)
    abjson = os.path.join(d, "ab.json")
    ab = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "exec_ab.py"),
                         "--worker", worker, "--ops", a.ops, "--rounds", str(a.rounds),
                         "--reps", str(a.reps), "--json", abjson]
                        + [f"{n}={p}" for n, p in top]
                        + [f"{n}={rec}" for n, _, _, _, rec in rows[1:]],
                        capture_output=True, text=True)
    if ab.returncode != 0:
        sys.exit("exec_ab.py: " + ab.stderr)
    print(ab.stdout, end="")
    with open(abjson) as f:
        res = json.load(f)
    meds = {m["name"]: m["medians"] for m in res["maps"]}
    med = {n: statistics.median(v) for n, v in meds.items()}
    ref = min((n for n, _ in top), key=lambda n: med[n])
    med["exhaustive"] = med["sweep1"]
    meds["exhaustive"] = meds["sweep1"]

    def paired(n):
        return median_ci([100.0 * (x / y - 1.0) for x, y in zip(meds[n], meds[ref])])

    print(f"\nreference: {ref} (the best interleaved median of the sweep's first {len(top)} ranked)")
    print(f"{'run':16} {'measured':>8} {'screened':>8} {'wall_s':>7} {'median_us':>10} "
          f"{'vs reference, paired [95% CI]':>30}")
    for name, m, s_, wall, _ in rows:
        print(f"{name:16} {m:8d} {s_:8d} {wall:7.0f} {med[name]:10.1f} {fmt_ci(*paired(name)):>30}")
    full, scr = rows[1], rows[2]
    sc = median_ci([100.0 * (x / y - 1.0) for x, y in zip(meds[scr[0]], meds[full[0]])])
    print(f"screen {a.screen}: {full[1] - scr[1]} measured evaluations saved against measuring "
          f"everything ({scr[1]} against {full[1]}, {100.0 * (1.0 - scr[1] / full[1]):.0f}% fewer); "
          f"its recommendation {fmt_ci(*sc)} against the measure-everything run's (paired)")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
