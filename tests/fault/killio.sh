#!/bin/sh
# killio.sh - SIGKILL at every I/O call of a tune, then resume (`make kill-io`,
# not part of make check: minutes).
#
# tests/killloop.sh kills by the clock, so where a kill lands is luck; here
# fault/knobwise-fault (tests/fault/kw_fault.c) with KW_FAULT_IO=N
# KW_FAULT_SIGNAL=9 kills the tune just before its Nth I/O call (write,
# fsync, rename, fwrite, fflush, ftruncate of knobwise's own code), for every
# N of a clean run (KILLIO_STEP: every STEP-th), so each journal append, each
# directory fsync, each result file's temp write and rename, each RUN/evidence
# slice and its end record is the last thing a killed run did once. Then the
# product binary resumes it (a journal the kill left empty or cut inside its
# header is a run that never started: the message says so, it is removed and
# started again, as README says), and:
#   - the resume exits 0 and the run's files (results.xml, ranked.csv,
#     audit.csv, portability.csv, journal, evidence) are byte for byte an
#     uninterrupted run's;
#   - `knobwise verify` passes;
#   - no temp file is left in the run folder, nothing is written beside it.
# Then the same for the resume itself: a run killed at a point N, resumed by
# the fault binary killed at its Mth I/O call (M drawn from KILLIO_SEED), then
# resumed to the end (KILLIO_TWICE such pairs).
#
# usage: killio.sh FAULT_BIN GOOD_BIN SRCDIR WORKDIR
set -u
FAULT=$1 GOOD=$2 S=$3 W=$4
step=${KILLIO_STEP:-1}
twice=${KILLIO_TWICE:-40}
seed=${KILLIO_SEED:-1}
space=${KILLIO_SPACE:-$S/spaces/validate_small.xml}
budget=${KILLIO_BUDGET:-20}
files="results.xml ranked.csv audit.csv portability.csv journal evidence"
rm -rf "$W"
mkdir -p "$W/ref" "$W/bin" || exit 1
# private copies: a rebuild during the sweep (minutes) must not swap them
cp "$FAULT" "$W/bin/knobwise-fault" && cp "$GOOD" "$W/bin/knobwise" || exit 1
FAULT=$W/bin/knobwise-fault GOOD=$W/bin/knobwise
bad=0
note() { echo "killio: $*"; }
tune() { # BIN DIR ARGS...: a tune in DIR (the run folder is DIR/run)
    b=$1 d=$2
    shift 2
    (cd "$d" && "$b" tune "$@" --threads 1 --quiet) >>"$d/log" 2>&1
}
(cd "$W/ref" && "$GOOD" tune --space "$space" --budget "$budget" --out run --threads 1 --quiet) \
    >"$W/ref.log" 2>&1 || { note "the reference tune failed"; cat "$W/ref.log"; exit 1; }
mkdir -p "$W/count"
(cd "$W/count" && KW_FAULT_REPORT=1 "$FAULT" tune --space "$space" --budget "$budget" --out run \
    --threads 1 --quiet) >"$W/count.log" 2>&1 || { note "the clean fault-binary run failed"; exit 1; }
ios=$(sed -n 's/.*kw_fault: allocs=[0-9]* io=\([0-9]*\).*/\1/p' "$W/count.log")
[ -n "$ios" ] || { note "no I/O count"; exit 1; }
for f in $files; do
    cmp -s "$W/ref/run/$f" "$W/count/run/$f" || { note "the fault binary's clean run differs in $f"; exit 1; }
done

# check D WHAT: the resumed run in D/run against the reference
check() {
    d=$1 what=$2
    for f in $files; do
        if ! cmp -s "$W/ref/run/$f" "$d/run/$f"; then
            note "$what: $f differs from the uninterrupted run's"
            bad=$((bad + 1))
            cp -r "$d" "$W/failed-$(echo "$what" | tr ' /=' '___')" 2>/dev/null
            return
        fi
    done
    if ls -a "$d/run" | grep -q '\.tmp\.'; then
        note "$what: a temp file was left: $(ls -a "$d/run" | grep '\.tmp\.')"
        bad=$((bad + 1))
    fi
    extra=$(ls -a "$d" | grep -v -x -e . -e .. -e run -e log)
    if [ -n "$extra" ]; then
        note "$what: written beside the run folder: $extra"
        bad=$((bad + 1))
    fi
    if ! (cd "$d" && "$GOOD" verify run) >"$d/verify.log" 2>&1; then
        note "$what: verify failed: $(tail -2 "$d/verify.log")"
        bad=$((bad + 1))
    fi
}

# finish D WHAT: resume D/run to the end with the product binary
finish() {
    d=$1 what=$2
    if ! tune "$GOOD" "$d" --resume run; then
        if grep -q -e "stopped while writing its journal's header" -e "no journal to resume" \
            -e "not a run folder" -e "the journal is empty" "$d/log"; then
            rm -rf "$d/run" # never started: README's advice
            started_again=$((started_again + 1))
            tune "$GOOD" "$d" --space "$space" --budget "$budget" --out run ||
                { note "$what: the fresh start failed: $(tail -3 "$d/log")"; bad=$((bad + 1)); return 1; }
        else
            note "$what: the resume failed: $(tail -3 "$d/log")"
            bad=$((bad + 1))
            return 1
        fi
    fi
    return 0
}

killed=0 finished=0 started_again=0 points=0
n=1
while [ "$n" -le "$ios" ]; do
    d="$W/k"
    rm -rf "$d" && mkdir -p "$d"
    points=$((points + 1))
    (cd "$d" && KW_FAULT_IO=$n KW_FAULT_SIGNAL=9 timeout -s KILL 120 "$FAULT" tune --space "$space" \
        --budget "$budget" --out run --threads 1 --quiet) >>"$d/log" 2>&1
    st=$?
    case $st in
    0) finished=$((finished + 1)) ;;
    137) killed=$((killed + 1)) ;;
    *) note "kill at I/O $n: tune exited $st: $(tail -2 "$d/log")"; bad=$((bad + 1)) ;;
    esac
    if [ ! -d "$d/run" ]; then
        tune "$GOOD" "$d" --space "$space" --budget "$budget" --out run ||
            { note "kill at I/O $n: no run folder, and a fresh start failed"; bad=$((bad + 1)); }
        started_again=$((started_again + 1))
    elif [ "$st" -ne 0 ]; then
        finish "$d" "kill at I/O $n" || { n=$((n + step)); continue; }
    fi
    check "$d" "kill at I/O $n"
    n=$((n + step))
done
note "tune: $ios I/O calls, $points kill points ($killed killed, $finished ran to the end first), $started_again started again (killed before the header held the options); $bad failures"

# a kill during the resume too
r=$seed
i=0 pairs=0
while [ "$i" -lt "$twice" ]; do
    i=$((i + 1))
    r=$(((r * 1103515245 + 12345) % 2147483648))
    n=$((r % ios + 1))
    d="$W/k2"
    rm -rf "$d" && mkdir -p "$d"
    (cd "$d" && KW_FAULT_IO=$n KW_FAULT_SIGNAL=9 "$FAULT" tune --space "$space" \
        --budget "$budget" --out run --threads 1 --quiet) >>"$d/log" 2>&1
    [ -f "$d/run/journal" ] && [ -s "$d/run/journal" ] || continue
    rios=$( (cd "$d" && cp -r run run.count && KW_FAULT_REPORT=1 "$FAULT" tune --resume run.count \
        --threads 1 --quiet) 2>&1 | sed -n 's/.*kw_fault: allocs=[0-9]* io=\([0-9]*\).*/\1/p')
    rm -rf "$d/run.count"
    [ -n "$rios" ] && [ "$rios" -gt 0 ] || continue
    r=$(((r * 1103515245 + 12345) % 2147483648))
    m=$((r % rios + 1))
    (cd "$d" && KW_FAULT_IO=$m KW_FAULT_SIGNAL=9 timeout -s KILL 120 "$FAULT" tune --resume run \
        --threads 1 --quiet) >>"$d/log" 2>&1
    pairs=$((pairs + 1))
    finish "$d" "kill at I/O $n, its resume killed at I/O $m" || continue
    check "$d" "kill at I/O $n, its resume killed at I/O $m"
done
note "resume: $pairs runs killed again while resuming; $bad failures in all"
[ "$bad" -eq 0 ]
