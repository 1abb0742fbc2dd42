#!/bin/sh
# sweep.sh - the fault-injection sweep behind `make fault` (mk/fault.am).
#
# usage: sweep.sh FAULT_BIN GOOD_BIN SRCDIR WORKDIR [RUNS] [SCENARIOS]
#
# For each scenario (a small tune, a resume, an eval and each reader verb) a
# clean run first counts the allocations and I/O calls knobwise makes
# (KW_FAULT_REPORT=1); then up to RUNS injection points per kind, spread
# evenly over that count (every point when the count is smaller), are run
# with KW_FAULT_ALLOC=N, then KW_FAULT_IO=N. Every outcome must be
#   - no crash, no hang (60 s), no sanitizer report;
#   - exit 0 (the fault was absorbed: a fallback, or a call whose failure
#     changes nothing: then the output -- stdout, the -o file, or the
#     journal and result files -- must be byte-identical to the clean run's,
#     except for the time-limited bigresume), or exit 1/2 with a "knobwise VERB: ..." or
#     "FILE:LINE: ..." message and no raw libxml2 "I/O error";
#   - a failed reader wrote nothing (its -o file does not exist);
#   - afterwards the run folder verifies (readers) or, for the writers,
#     resumes and verifies with the ordinary binary (a tune that failed
#     before its first record left no journal, or an empty one that every
#     verb calls "nothing was run": counted as not started).
# Prints one line per scenario and kind, and exits 1 when any outcome broke
# a rule (the offending runs are listed in WORKDIR/failures.log).
set -u
FAULT=$1
GOOD=$2
SRC=$3
WORK=$4
RUNS=${5:-150}
SCENARIOS=${6:-"tune resume bigresume eval verify audit report recommend"}
SPACE=$SRC/spaces/validate_small.xml
TIMEOUT_S=60

rm -rf "$WORK"
mkdir -p "$WORK" || exit 1
FAILS=$WORK/failures.log
: > "$FAILS"
bad_total=0

# a finished run the readers and the resume work on
( cd "$WORK" && "$GOOD" tune --space "$SPACE" --budget 10 --out good --quiet --threads 1 ) \
    > "$WORK/good.log" 2>&1 || { echo "sweep: the reference tune failed"; cat "$WORK/good.log"; exit 1; }

# a run whose results.xml outgrows the results writer's chunk (256 KiB), so
# results.xml is written through libxml2's output buffer while it runs: the
# embedded default job, paused after 2 s (IO faults only: its clean run
# makes ~40,000 allocations)
case " $SCENARIOS " in *" bigresume "*)
    ( cd "$WORK" && "$GOOD" tune --out big --quiet --threads 1 --time-limit 2 ) \
        > "$WORK/big.log" 2>&1 || { echo "sweep: the big reference tune failed"; cat "$WORK/big.log"; exit 1; } ;;
esac

# Set up a fresh case folder $1 for scenario $2; print the command (one word
# per line would be safer, but every argument here is a plain word).
setup() {
    d=$1
    rm -rf "$d"
    mkdir -p "$d/out"
    case $2 in
    tune|eval) ;;
    bigresume) cp -R "$WORK/big" "$d/run" ;;
    *) cp -R "$WORK/good" "$d/run" ;;
    esac
}

command_of() {
    case $1 in
    tune) echo "tune --space $SPACE --budget 10 --out run --quiet --threads 1" ;;
    resume) echo "tune --resume run --quiet --threads 1" ;;
    bigresume) echo "tune --resume run --quiet --threads 1 --time-limit 0.01" ;;
    eval) echo "eval --space $SPACE --format csv" ;;
    verify) echo "verify run" ;;
    audit) echo "audit run" ;;
    report) echo "report run -o out/r.html" ;;
    recommend) echo "recommend run --all -o out/m.csv" ;;
    esac
}

# Judge one finished run: $1 scenario, $2 case folder, $3 exit status, $4 label.
# Echoes "ok", "absorbed", "notstarted" or a reason for failure.
judge() {
    sc=$1 d=$2 st=$3
    err=$d/stderr
    if [ "$st" -ge 124 ]; then echo "crash or hang (exit $st)"; return; fi
    if grep -q -e 'Sanitizer' -e 'runtime error' "$err"; then echo "sanitizer report"; return; fi
    if grep -q 'I/O error' "$err"; then echo "raw libxml2 message"; return; fi
    if [ "$st" -ne 0 ]; then
        if [ "$st" -ne 1 ] && [ "$st" -ne 2 ]; then echo "exit $st"; return; fi
        if ! grep -q -e '^knobwise\( [a-z]*\)\{0,1\}: ' -e '^[^ :]*:[0-9][0-9]*: ' "$err"; then
            echo "no clear error message"; return
        fi
    fi
    case $sc in
    report|recommend)
        # the one failure after the rename: the file is in place, the folder's
        # fsync failed, and the error says so
        if [ "$st" -ne 0 ] && [ -n "$(ls -A "$d/out")" ] && ! grep -q 'cannot sync the folder' "$err"; then
            echo "a failed reader wrote a file"; return
        fi ;;
    esac
    case $sc in
    tune|resume|bigresume)
        if [ ! -e "$d/run/journal" ]; then
            [ "$st" -ne 0 ] && { echo notstarted; return; }
            echo "exit 0 without a journal"; return
        fi
        if [ ! -s "$d/run/journal" ]; then
            ( cd "$d" && "$GOOD" verify run --no-eval ) > "$d/check" 2>&1
            if grep -q 'nothing was run' "$d/check"; then echo notstarted; return; fi
            echo "empty journal not reported as such"; return
        fi
        if ! ( cd "$d" && "$GOOD" tune --resume run --quiet --threads 1 --time-limit 0.01 ) > "$d/check" 2>&1; then
            echo "the run folder does not resume: $(tail -1 "$d/check")"; return
        fi
        if ! ( cd "$d" && "$GOOD" verify run --no-eval ) > "$d/check" 2>&1; then
            echo "the resumed run does not verify: $(tail -1 "$d/check")"; return
        fi ;;
    verify|audit|report|recommend)
        if ! ( cd "$d" && "$GOOD" verify run --no-eval ) > "$d/check" 2>&1; then
            echo "a reader damaged the run folder"; return
        fi ;;
    esac
    if [ "$st" -eq 0 ]; then
        # absorbed only if nothing changed: the same output as the clean run
        ref=$WORK/$sc.count
        case $sc in
        eval|verify|audit)
            cmp -s "$d/stdout" "$ref/stdout" || { echo "exit 0 with other output than the clean run"; return; } ;;
        report|recommend)
            for f in "$ref"/out/*; do
                cmp -s "$f" "$d/out/$(basename "$f")" || { echo "exit 0 with another $(basename "$f")"; return; }
            done ;;
        tune|resume)
            for f in journal results.xml ranked.csv audit.csv portability.csv; do
                cmp -s "$ref/run/$f" "$d/run/$f" || { echo "exit 0 with another $f than the clean run"; return; }
            done ;;
        esac
        echo absorbed
    else
        echo ok
    fi
}

for sc in $SCENARIOS; do
    cmd=$(command_of "$sc")
    d=$WORK/$sc.count
    setup "$d" "$sc"
    # shellcheck disable=SC2086
    ( cd "$d" && KW_FAULT_REPORT=1 "$FAULT" $cmd ) > "$d/stdout" 2> "$d/stderr"
    counts=$(grep '^kw_fault:' "$d/stderr" | tail -1)
    allocs=$(echo "$counts" | sed 's/.*allocs=\([0-9]*\).*/\1/')
    ios=$(echo "$counts" | sed 's/.* io=\([0-9]*\).*/\1/')
    [ -n "$allocs" ] && [ -n "$ios" ] || { echo "sweep: $sc: no counts ($counts)"; exit 1; }
    kinds="ALLOC IO"
    [ "$sc" = bigresume ] && kinds=IO
    for kind in $kinds; do
        if [ $kind = ALLOC ]; then total=$allocs; else total=$ios; fi
        n_ok=0 n_abs=0 n_ns=0 n_bad=0 runs=0
        k=0
        npts=$RUNS
        [ "$total" -lt "$npts" ] && npts=$total
        while [ "$k" -lt "$npts" ]; do
            if [ "$npts" -le 1 ]; then n=1; else n=$((1 + k * (total - 1) / (npts - 1))); fi
            k=$((k + 1))
            d=$WORK/$sc.$kind.$n
            setup "$d" "$sc"
            # shellcheck disable=SC2086
            ( cd "$d" && env KW_FAULT_$kind=$n timeout -s KILL $TIMEOUT_S "$FAULT" $cmd ) \
                > "$d/stdout" 2> "$d/stderr"
            st=$?
            [ $st -eq 137 ] && st=124
            verdict=$(judge "$sc" "$d" "$st")
            runs=$((runs + 1))
            case $verdict in
            ok) n_ok=$((n_ok + 1)); rm -rf "$d" ;;
            absorbed) n_abs=$((n_abs + 1)); rm -rf "$d" ;;
            notstarted) n_ns=$((n_ns + 1)); rm -rf "$d" ;;
            *) n_bad=$((n_bad + 1))
               echo "$sc KW_FAULT_$kind=$n: $verdict (exit $st; kept in $d): $(grep -v '^kw_fault' "$d/stderr" | head -2 | tr '\n' ' ')" >> "$FAILS" ;;
            esac
        done
        bad_total=$((bad_total + n_bad))
        printf '%-10s %-5s calls=%-7s runs=%-4s clean-error=%-4s absorbed=%-4s not-started=%-4s BROKEN=%s\n' \
            "$sc" "$kind" "$total" "$runs" "$n_ok" "$n_abs" "$n_ns" "$n_bad"
    done
done
if [ "$bad_total" -ne 0 ]; then
    echo "fault sweep: $bad_total outcomes broke a rule (first ones below; all in $FAILS)"
    head -20 "$FAILS"
    exit 1
fi
echo "fault sweep: every injected fault gave a clean outcome"
