#!/usr/bin/python3
"""calib_holdout.py - the model against measurement before and after
`knobwise calibrate --space`, the calibration fitted on other mappings.

Input: the CSV `tests/bench/model_vs_measured --csv` writes for a space (one
measured mapping a row: shape,config_id,predicted_us,measured_us,knobs). The
rows are split by position: even rows fit the accelerator file (knobwise
calibrate --space S --accel A --measured FIT -o CAL), odd rows are held out.
On the held-out rows of each shape it reports Spearman's rank correlation of
predicted and measured time and the regret of the model's choice (the
measured time of the held-out mapping the model ranks first, against the
best measured held-out time), before (the uncalibrated file A) and after
(the calibrated one). The regret is judged as model_vs_measured judges it, by
model_vs_measured itself (--from-csv HELD --accel FILE: one home for the
rule): the model's pick and the 3 held-out mappings the CSV measured fastest
are measured again in interleaved rounds, the reference is the one of the 3
with the lowest median, the regret the median of the per-round paired ratios
with its 95% interval. The regret against the CSV's single measurements
(the best of 100 noisy minima is a lucky one: biased upwards) is printed
beside it. Reports, asserts nothing; it measures (seconds per shape), so run
it under the same care as model_vs_measured.

usage: calib_holdout.py --knobwise BIN --space S --accel A --csv MVM.csv [--keep DIR]
       [--bench tests/bench/model_vs_measured] [--worker BIN] [--bench-flags "..."]
"""
import argparse
import csv
import os
import re
import shlex
import subprocess
import sys
import tempfile


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va > 0 and vb > 0 else float("nan")


def regret(pred, meas):
    pick = min(range(len(pred)), key=lambda i: pred[i])
    return 100.0 * (meas[pick] / min(meas) - 1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--knobwise", default="./knobwise")
    ap.add_argument("--space", required=True)
    ap.add_argument("--accel", required=True)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--keep", help="folder for the fit CSV and the calibrated file")
    ap.add_argument("--bench", default="./tests/bench/model_vs_measured")
    ap.add_argument("--worker", default="./knobwise-worker")
    ap.add_argument("--bench-flags", default="--warmup 1",
                    help="more model_vs_measured options for the re-measure")
    a = ap.parse_args()
    with open(a.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    fit, held = rows[0::2], rows[1::2]
    d = a.keep or tempfile.mkdtemp(prefix="kw-calib-")
    os.makedirs(d, exist_ok=True)
    fit_csv, cal = os.path.join(d, "fit.csv"), os.path.join(d, "calibrated.xml")
    held_csv = os.path.join(d, "held.csv")
    for path, part in ((fit_csv, fit), (held_csv, held)):
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(part)
    if os.path.exists(cal):
        os.remove(cal)
    r = subprocess.run([a.knobwise, "calibrate", "--space", a.space, "--accel", a.accel,
                        "--measured", fit_csv, "-o", cal], capture_output=True, text=True)
    print(r.stdout, end="")
    if r.returncode != 0:
        sys.exit("calibrate failed: " + r.stderr)
    lines = "".join(f"{h['shape']} {h['knobs'].replace(';', ' ')}\n" for h in held)
    e = subprocess.run([a.knobwise, "eval", "--space", a.space, "--accel", cal, "--stdin"],
                       input=lines, capture_output=True, text=True)
    if e.returncode != 0:
        sys.exit("eval failed: " + e.stderr)
    out = list(csv.DictReader(e.stdout.splitlines()))
    if len(out) != len(held):
        sys.exit(f"eval gave {len(out)} rows for {len(held)} mappings")
    paired = {}
    for when, accel in (("before", a.accel), ("after", cal)):
        cmd = [a.bench, "--knobwise", a.knobwise, "--worker", a.worker, "--space", a.space,
               "--accel", accel, "--from-csv", held_csv] + shlex.split(a.bench_flags)
        r = subprocess.run(cmd, capture_output=True, text=True)
        print(f"# {when}: {' '.join(cmd)}")
        print(r.stdout, end="")
        if r.returncode != 0:
            sys.exit(f"{a.bench} failed: " + r.stderr)
        shape = None
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) == 7 and not line.startswith(" ") and f[1].isdigit():
                shape = f[0]
            m = re.match(r"\s+regret (\S+)%, 95% interval \[(\S+)%, (\S+)%\]", line)
            if m and shape:
                paired[(shape, when)] = tuple(float(x) for x in m.groups())
    print(f"{len(fit)} mappings fitted, {len(held)} held out")
    print(f"{'shape':26} {'n':>4} {'spearman before':>16} {'after':>7} "
          f"{'paired regret% before [95%]':>30} {'after [95%]':>26} {'single before':>14} {'after':>7}")
    for shape in sorted(set(h["shape"] for h in held)):
        idx = [i for i, h in enumerate(held) if h["shape"] == shape]
        meas = [float(held[i]["measured_us"]) for i in idx]
        before = [float(held[i]["predicted_us"]) for i in idx]
        after = [float(out[i]["latency_us"]) for i in idx]
        pb = paired.get((shape, "before"), (float("nan"),) * 3)
        pa = paired.get((shape, "after"), (float("nan"),) * 3)
        print(f"{shape:26} {len(idx):4d} {spearman(before, meas):16.3f} {spearman(after, meas):7.3f} "
              f"{pb[0]:9.1f} [{pb[1]:7.1f}, {pb[2]:7.1f}]    {pa[0]:9.1f} [{pa[1]:7.1f}, {pa[2]:7.1f}] "
              f"{regret(before, meas):14.1f} {regret(after, meas):7.1f}")


if __name__ == "__main__":
    main()
