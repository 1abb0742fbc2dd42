#!/bin/sh
# wgmma_drain.sh - the per-K-block drain of a waited WGMMA chain on an H100,
# in one call (doc/fidelity-log.md, issue #15: what the one-wave DeepGEMM rows need and no
# published figure gives). Run from the repository root on a machine with
# nvcc and an sm_90 device; it needs nothing else built. Writes under $OUT
# (default /tmp/kw-wgmma-drain):
#   device.txt   date, nvidia-smi -L, nvcc --version, the flags, the clocks,
#                power and temperature before and after
#   nvcc.log     the compile (ptxas -v: registers, spills, any wait the
#                compiler injects)
#   drain.csv    tests/cuda/wgmma_drain.py's kernels: cycles and ns of each
#                (dtype, N, schedule, warpgroups, nk) on every SM, median CTA
#                of the median of 5 runs
#   clocks.csv   nvidia-smi's SM clock and power every 100 ms during the run
#   summary.txt  per K block (slope between nk 56 and 512): cycles and ns of
#                each schedule, drain = wait - chain, promotion =
#                wait_promote - wait
# KW_DRAIN_COMPILE_ONLY=1 stops after the compile (how it was checked without
# a GPU: nvcc 13.0, no spill, no injected warpgroup.wait); KW_DRAIN_CSV=FILE
# only writes summary.txt from FILE (a drain.csv of an earlier run). Exit 0
# when the kernels compiled, ran and gave zeros (nonzero_ctas 0 everywhere).
set -u
OUT=${OUT:-/tmp/kw-wgmma-drain}
mkdir -p "$OUT"
CSV=${KW_DRAIN_CSV:-$OUT/drain.csv}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
NVFLAGS=${NVCCFLAGS:--O3 -gencode arch=compute_90a,code=sm_90a}
summarise() {
    # per K block: the slope between the two loop lengths, then the differences
    awk -F, 'NR > 1 {
        key = $1 "," $2 "," $4; c[key "," $3 "," $5] = $6; t[key "," $3 "," $5] = $9; k[key] = 1
        bad += $10
    }
    END {
        split("wait_promote wait chain", m, " ")
        for (key in k) {
            for (i = 1; i <= 3; i++) {
                s[i] = (c[key "," m[i] ",512"] - c[key "," m[i] ",56"]) / 456
                n[i] = (t[key "," m[i] ",512"] - t[key "," m[i] ",56"]) / 456
            }
            printf "%s,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f\n", key, s[1], s[2], s[3], s[2] - s[3],
                   s[1] - s[2], n[2] - n[3], n[1] - n[2]
        }
        if (bad)
            print "nonzero results in " bad " rows: a descriptor reads outside the zeros" > "/dev/stderr"
        exit bad != 0
    }' "$CSV" >"$T/rows"
    status=$?
    {
        echo "dtype,n,warpgroups,cyc_wait_promote,cyc_wait,cyc_chain,drain_cyc,promotion_cyc,drain_ns,promotion_ns"
        sort -t, -k1,1 -k2,2n -k3,3n "$T/rows"
    } >"$OUT/summary.txt"
    cat "$OUT/summary.txt"
    exit $status
}
if [ -n "${KW_DRAIN_CSV:-}" ]; then
    summarise
fi
SMI="nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv"
{
    date -u
    nvidia-smi -L 2>&1
    nvcc --version 2>&1 | tail -2
    echo "NVCCFLAGS=$NVFLAGS"
    $SMI 2>&1
} >"$OUT/device.txt"
python3 tests/cuda/wgmma_drain.py >"$T/drain.cu" || exit 1
if ! nvcc $NVFLAGS -Xptxas -v -o "$T/drain" "$T/drain.cu" >"$OUT/nvcc.log" 2>&1; then
    echo "wgmma_drain: nvcc failed (nvcc.log)" >&2
    exit 1
fi
grep -E 'spill stores|C7517' "$OUT/nvcc.log" | sort | uniq -c
[ "${KW_DRAIN_COMPILE_ONLY:-0}" = 1 ] && exit 0
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv -lms 100 >"$OUT/clocks.csv" 2>&1 &
SMIPID=$!
timeout 300 "$T/drain" >"$OUT/drain.csv"
status=$?
kill "$SMIPID" 2>/dev/null
wait "$SMIPID" 2>/dev/null
$SMI >>"$OUT/device.txt" 2>&1
[ $status -eq 0 ] || { echo "wgmma_drain: the run failed (exit $status)" >&2; exit 1; }
summarise
