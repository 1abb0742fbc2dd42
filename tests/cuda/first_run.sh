#!/bin/sh
# first_run.sh - the CUDA worker's first run on a GPU, in one call (README,
# "The CUDA worker"): run from the repository root on a machine with nvcc and
# a CUDA device; it needs nothing else built. Writes under $OUT (default
# /tmp/kw-cuda-first-run), every file named below:
#   device.txt     nvidia-smi -L, nvcc --version, the flags used
#   nvcc.log       the worker's compile (NVCCFLAGS, default -O2 -arch=sm_90)
#   requests.csv   tests/cuda/first_run.py: every knob value the worker takes
#                  on regular and ragged shapes, each checked by the worker
#                  against its fp64 reference before it is timed
#   tune.txt       when a knobwise binary runs here (./knobwise, with the
#                  libraries carried in .gpu/lib: tests/cuda/carry.sh): a
#                  measured one-knob run and an exhaustive sweep of a 48-config
#                  GEMM space with the worker: each one's recommendation, the
#                  verify and audit exit codes, the journal's E records
#   audit_ofat.txt, audit_exhaustive.txt, ranked_ofat.csv, ranked_exhaustive.csv
# Without a GPU it stops at the worker's handshake ("no CUDA device").
# Exit 0 only when the worker compiled, started and gave no wrong_result,
# internal or missing answer; the tune part reports what it could not do.
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/kw-cuda-first-run}
mkdir -p "$OUT"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
NVFLAGS=${NVCCFLAGS:--O2 -arch=sm_90}
{
    date -u
    nvidia-smi -L 2>&1
    nvcc --version 2>&1 | tail -2
    echo "NVCCFLAGS=$NVFLAGS"
} >"$OUT/device.txt"
# KW_FIRST_RUN_WORKER=CMD: another worker instead of the compiled one (the
# script checked without a GPU: KW_FIRST_RUN_WORKER=./knobwise-worker)
W=${KW_FIRST_RUN_WORKER:-$T/knobwise-worker-cuda}
if [ -z "${KW_FIRST_RUN_WORKER:-}" ] &&
    ! nvcc $NVFLAGS -o "$W" src/worker/kw_worker_cuda.cu >"$OUT/nvcc.log" 2>&1; then
    echo "first_run: nvcc failed (nvcc.log)" >&2
    exit 1
fi
status=0
timeout 480 python3 tests/cuda/first_run.py "$W" >"$OUT/requests.csv" 2>>"$OUT/nvcc.log" || status=1
grep '^#' "$OUT/requests.csv"

# The measured run: knobwise itself, where it runs here.
KW="$ROOT/knobwise"
[ -d "$ROOT/.gpu/lib" ] && export LD_LIBRARY_PATH="$ROOT/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -x "$ROOT/.gpu/knobwise" ] && KW="$ROOT/.gpu/knobwise"
{
    if ! "$KW" --version >/dev/null 2>&1; then
        echo "no knobwise runs here ($KW: $("$KW" --version 2>&1 | head -1)); carry it: tests/cuda/carry.sh"
        exit 0
    fi
    # cpu_gemm_small's GEMM over the tiles the CUDA worker takes (48 configurations)
    SP="$ROOT/tests/cuda/gemm_space.xml"
    for mode in ofat exhaustive; do
        echo "== tune --strategy $mode"
        "$KW" tune --space "$SP" --evaluator "exec:$W" --strategy $mode --out "$T/$mode" --quiet 2>&1
        echo "tune exit $?"
        "$KW" recommend "$T/$mode" --shape fc_decode_b16 2>&1
        "$KW" verify "$T/$mode" >/dev/null 2>&1; echo "verify exit $?"
        "$KW" audit "$T/$mode" >"$OUT/audit_$mode.txt" 2>&1; echo "audit exit $?"
        grep -c '^E ' "$T/$mode/journal" | sed 's/^/journal E records: /'
        cp "$T/$mode/ranked.csv" "$OUT/ranked_$mode.csv" 2>/dev/null
    done
} >"$OUT/tune.txt" 2>&1
cat "$OUT/tune.txt"
exit $status
