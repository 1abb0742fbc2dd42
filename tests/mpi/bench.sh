#!/bin/sh
# bench.sh - `make bench-mpi`: what `mpirun -n N knobwise tune` buys.
#
#   A  the whole default job (`knobwise tune`, --threads 1 per rank) without
#      mpirun and under mpirun -n 1, 2, 4: wall time and the CPU time of all
#      processes. On a machine with fewer cores than ranks the ranks are
#      oversubscribed (said in the output): the model evaluator is CPU-bound,
#      so wall time cannot fall below CPU time / cores.
#   B  a device stand-in: the measuring evaluator with the test worker
#      sleeping KW_BENCH_SLEEP_S (0.05 s) per measurement, an exhaustive run
#      of tests/data/mpi/bench.xml (144 configurations, one rank thread
#      each), for 1..8 ranks: the evaluations per second of the whole job that
#      rank 0 reports (over the engine's run: the serial start-up and the
#      result files' re-check are not in it), the speedup against 1 rank and
#      that speedup over the ideal N. The exhaustive strategy evaluates the
#      baseline alone first, so the best possible at 8 ranks is
#      144 / (1 + 143/8) = 7.66, 0.96 x N.
#
#   tests/mpi/bench.sh KNOBWISE MPIRUN SRCDIR TWORKER
set -u
[ $# -eq 4 ] || { echo "usage: $0 KNOBWISE MPIRUN SRCDIR TWORKER" >&2; exit 2; }
K=$1 MPIRUN=$2 S=$3 TW=$4
[ -n "$MPIRUN" ] || { echo "$0: knobwise was configured without --with-mpi: nothing to measure" >&2; exit 2; }
SLEEP=${KW_BENCH_SLEEP_S:-0.05}
if [ "$(id -u)" = 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/kw-bench-mpi.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cores=$(nproc)
echo "bench-mpi: $cores cores online; load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"

# run LABEL CMD...: wall seconds, user+sys CPU seconds of CMD and its children
run() {
    label=$1
    shift
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >"$work/out" 2>"$work/err"
    st=$?
    set -- $(tail -1 "$work/time")
    cpu=$(echo "$2 + $3" | bc)
    if [ "$st" -ne 0 ]; then
        echo "  $label: FAILED (exit $st)"
        tail -5 "$work/err" | sed 's/^/    /'
        return 1
    fi
    printf "  %-28s wall %7.2f s   cpu %7.2f s\n" "$label" "$1" "$cpu"
    wall=$1
}

echo "A. the default job (knobwise tune, --threads 1 per rank)"
run "one process (no mpirun)" "$K" tune --threads 1 --quiet --out "$work/a0" || exit 1
base=$wall
for n in 1 2 4; do
    over=""
    [ "$n" -gt "$cores" ] && over=" (oversubscribed: $n ranks on $cores cores)"
    run "mpirun -n $n$over" "$MPIRUN" --oversubscribe -n "$n" "$K" tune --threads 1 --quiet \
        --out "$work/a$n" || exit 1
    cmp -s "$work/a0/journal" "$work/a$n/journal" || echo "    (journal differs from the one-process run!)"
    echo "    wall vs one process: $(echo "scale=2; $wall / $base" | bc)x"
done

echo "B. a device stand-in: the test worker sleeps $SLEEP s per measurement"
echo "   (exhaustive, 144 configurations; evaluations/s over the engine's run, from rank 0)"
printf "  %5s %10s %9s %9s %12s\n" ranks "evals/s" speedup ideal "vs ideal"
r1=
for n in 1 2 3 4 5 6 7 8; do
    "$MPIRUN" --oversubscribe -n "$n" "$K" tune --space "$S/tests/data/mpi/bench.xml" \
        --evaluator "exec:$TW --flat --sleep $SLEEP" --strategy exhaustive --threads 1 \
        --out "$work/b$n" >"$work/b$n.out" 2>"$work/b$n.err" || {
        echo "  $n: FAILED"; tail -5 "$work/b$n.err"; exit 1; }
    rate=$(sed -n 's/^knobwise tune: [0-9]* ranks*: \([0-9.]*\) evals\/s.*/\1/p' "$work/b$n.out")
    [ -n "$rate" ] || { echo "  $n: no rate line"; cat "$work/b$n.out"; exit 1; }
    [ -n "$r1" ] || r1=$rate
    sp=$(echo "scale=2; $rate / $r1" | bc)
    printf "  %5d %10s %9s %9d %11sx\n" "$n" "$rate" "$sp" "$n" "$(echo "scale=3; $sp / $n" | bc)"
done
echo "target: >= 0.9 x N at 8 ranks"
echo "bench-mpi: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
