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
#   C  SIGTERM during a large job (tests/data/mpi/overnight.xml, the default
#      job over 7 shapes with --probes 64 --tabu 40: a 57 MB journal at its
#      end), sent once the journal has grown past each of KW_BENCH_TERM_MB
#      (2 7 20 50) megabytes: to mpirun -n 2 (--threads 1 per rank, mpirun's
#      default odls_base_sigkill_timeout: the ranks get SIGTERM 1 s after
#      mpirun and SIGKILL 1 s after that), and to one process without mpirun
#      (--threads 1). The journal's size at the pause, when the pause was
#      journaled (its mtime), when results.xml and audit.csv (the last file
#      written) were renamed into place (their ctime: a rename sets it, the
#      mtime is when the temp file was last written), in seconds after the
#      signal was sent, or that the SIGKILL came first. Signalled at a size,
#      not a time, so the rows mean the same on a loaded machine.
#
#   D  a measured one-knob run (the default strategy, whose controls and
#      pairs are designed rounds, each shape's kept on one rank's device)
#      of tests/data/mpi/shapes4.xml (four shapes, --budget 20), the worker
#      sleeping KW_BENCH_SLEEP_S per measurement, at 1, 2 and 4 ranks: wall
#      seconds, the speedup against 1 rank, and the measurements each rank's
#      worker took (journals identical in every row, checked).
#
#   KW_BENCH_PARTS (default "A B C D") picks the parts.
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

# part X: is part X of KW_BENCH_PARTS (default "A B C D") to be run?
part() {
    case " ${KW_BENCH_PARTS:-A B C D} " in *" $1 "*) return 0 ;; esac
    return 1
}

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

if part A; then
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

fi
if part B; then
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

fi
if part C; then
echo "C. SIGTERM during a large job ($S/tests/data/mpi/overnight.xml --probes 64 --tabu 40)"
echo "   once the journal is past N MB; seconds after the signal was sent"
printf "  %-30s %8s %10s %9s %12s %12s\n" "signalled" "at" "journal" "pause" "results.xml" \
    "audit.csv"
# term LABEL MB DIR CMD...: CMD in the background, SIGTERM to it once DIR's
# journal is past MB megabytes, then the row
term() {
    label=$1 mb=$2 d=$3
    shift 3
    (unset OMPI_MCA_odls_base_sigkill_timeout; exec "$@" >"$d.out" 2>&1) &
    cp=$!
    want=$(echo "$mb * 1000000 / 1" | bc)
    while kill -0 "$cp" 2>/dev/null; do
        sz=$(stat -c %s "$d/journal" 2>/dev/null || echo 0)
        [ "$sz" -ge "$want" ] && break
        sleep 0.05
    done
    ts=$(date +%s.%N)
    kill -TERM "$cp" 2>/dev/null
    wait "$cp"
    j=$d/journal
    [ "$(tail -n 1 "$j" | cut -c1-17)" = "Q why=interrupted" ] || {
        printf "  %-30s %5s MB   the run did not pause (%s)\n" "$label" "$mb" \
            "$(tail -n 1 "$j" | cut -c1-30)"
        return 0; }
    jmb=$(echo "scale=1; $(stat -c %s "$j") / 1000000" | bc)
    pause=$(echo "$(stat -c %.9Y "$j") - $ts" | bc)
    for f in results.xml audit.csv; do
        if [ -f "$d/$f" ]; then
            t=$(printf "%.2f" "$(echo "$(stat -c %.9Z "$d/$f") - $ts" | bc)")
        else
            t="killed first"
        fi
        [ "$f" = results.xml ] && res=$t || aud=$t
    done
    printf "  %-30s %5s MB %7s MB %7.2f s %12s %12s\n" "$label" "$mb" "$jmb" "$pause" "$res" "$aud"
}
OV="--space $S/tests/data/mpi/overnight.xml --probes 64 --tabu 40 --threads 1 --quiet"
for mb in ${KW_BENCH_TERM_MB:-2 7 20 50}; do
    term "mpirun -n 2 (default timeout)" "$mb" "$work/c$mb" \
        "$MPIRUN" --oversubscribe -n 2 "$K" tune $OV --out "$work/c$mb"
    term "one process" "$mb" "$work/p$mb" "$K" tune $OV --out "$work/p$mb"
done
fi
if part D; then
echo "D. a measured one-knob run over 4 shapes ($S/tests/data/mpi/shapes4.xml, --budget 20):"
echo "   the test worker sleeps $SLEEP s per measurement; measurements by rank"
printf "  %5s %9s %9s  %s\n" ranks "wall s" speedup "measurements by rank 0/1/.."
printf '#!/bin/sh\nexec "%s" --count "%s/d.$KW_WORKER_INDEX" --sleep %s "$@"\n' "$TW" "$work" \
    "$SLEEP" >"$work/dw.sh"
chmod +x "$work/dw.sh"
w1=
for n in 1 2 4; do
    rm -f "$work"/d.*
    t0=$(date +%s.%N)
    "$MPIRUN" --oversubscribe -n "$n" "$K" tune --space "$S/tests/data/mpi/shapes4.xml" \
        --evaluator "exec:$work/dw.sh" --budget 20 --seed 1 --threads 1 --quiet \
        --out "$work/d$n" >"$work/d$n.out" 2>"$work/d$n.err" || {
        echo "  $n: FAILED"; tail -5 "$work/d$n.err"; exit 1; }
    wall=$(echo "$(date +%s.%N) - $t0" | bc)
    [ -n "$w1" ] || w1=$wall
    by=
    for i in $(seq 0 $((n - 1))); do by="$by$(grep -c '^measure' "$work/d.$i" 2>/dev/null || echo 0) "; done
    sed "s#$work/d$n#RUN#g" "$work/d$n/journal" >"$work/dj$n"
    same=same
    cmp -s "$work/dj1" "$work/dj$n" || same="JOURNAL DIFFERS from 1 rank's"
    printf "  %5d %9.2f %9.2f  %s %s\n" "$n" "$wall" "$(echo "scale=2; $w1 / $wall" | bc)" "$by" "$same"
done
fi
echo "bench-mpi: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
