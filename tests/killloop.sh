#!/bin/sh
# killloop.sh - SIGKILL at random times (`make kill-loop`, not part of make
# check: a minute or more). test_crash kills tune at seeded journal record
# counts; this kills by the clock, so a kill also lands in the start-up, in
# the final results writing and in the readers' output commits:
#   1. tune, killed at a random time, then --resume killed again at random
#      times (up to 6 tries), then one --resume to the end: the run's five
#      files must be byte-identical to an uninterrupted run with the same
#      seed, and no temp file may be left in the run folder;
#   2. report -o, recommend --all -o, export -o and calibrate -o (its temp
#      file was its own, OUT.tmp.XXXXXX, never swept, until 2026-12-07),
#      each killed at a random time and run again (--force): the output
#      byte-identical to an uninterrupted one, no temp file left beside it.
# A journal the first kill left empty or cut in its header record is a run
# that never started: it is removed and started again, as the message for it
# says (README).
#
# RUN/evidence (a pure function of the journal and the inputs) must be the
# uninterrupted run's too. KILL_SPACE, KILL_BUDGET, KILL_SEARCH_SEED and
# KILL_WINDOW (the kill delays are drawn below it, seconds) pick the run:
# by default validate_small.xml --budget 60 (0.7 s: kills land in the start-
# up, the search and the evidence alike); `make kill-evidence` takes
# tests/data/signal/final_slow.xml --budget 30, whose evidence is ~90% of
# its ~11 s (8 re-checks of a million requests), with a 12 s window, so most
# kills land in the evidence phase, its slices' fsyncs and the end record.
#
# usage: KW_BIN=/abs/knobwise KW_SRCDIR=/abs/src KILL_LOOPS=N KILL_SEED=S tests/killloop.sh OUTDIR
set -u
out=${1:-killloop}
bin=${KW_BIN:-./knobwise}
src=${KW_SRCDIR:-.}
loops=${KILL_LOOPS:-20}
seed=${KILL_SEED:-1}
space=${KILL_SPACE:-$src/spaces/validate_small.xml}
budget=${KILL_BUDGET:-60}
sseed=${KILL_SEARCH_SEED:-3}
window=${KILL_WINDOW:-0.6}
files="results.xml ranked.csv audit.csv portability.csv journal evidence"
bad=0
n_rand=0
kills=0 late=0 killed=0 # kills of tune; of those, after its search ended (a Z record)

rand() { # a seeded delay in seconds, below $1
    n_rand=$((n_rand + 1))
    awk -v s="$seed" -v n="$n_rand" -v m="$1" 'BEGIN { srand(s * 100003 + n); print rand() * m }'
}

killed_after() { # killed_after DELAY CMD...: run CMD, SIGKILL it after DELAY s
    d=$1
    shift
    "$@" >/dev/null 2>&1 &
    p=$!
    sleep "$d"
    kill -9 "$p" 2>/dev/null
    wait "$p" 2>/dev/null
    killed=$? # 137 when the kill ended it (not when it had ended before)
}

tally() { # after killed_after of tune: count a kill, and whether its search had ended
    [ "$killed" -eq 137 ] || return 0
    kills=$((kills + 1))
    if [ -f k/journal ] && grep -q '^Z ' k/journal; then late=$((late + 1)); fi
}

# (killed_after is given the fresh run's command line, not this function: a
# function put in the background runs in a subshell, whose SIGKILL left the
# tune inside it running; until 2026-12-07 every kill of a fresh run here
# missed the tune, and the resumes after it met "another knobwise is writing")
fresh() { "$bin" tune --space "$space" --budget "$budget" --seed "$sseed" --out k --quiet; }

rm -rf "$out"
mkdir -p "$out/ref" || exit 1
cd "$out" || exit 1
(cd ref && fresh >/dev/null 2>&1) || { echo "killloop: the reference run failed"; exit 1; }
accel=$src/spaces/accel/h100.xml
measured=$src/spaces/measured/h100_published.csv
(cd ref && "$bin" report k -o r.html >/dev/null && "$bin" recommend k --all -o m.csv >/dev/null &&
    "$bin" export k --format json -o e.json >/dev/null 2>&1 &&
    "$bin" calibrate --accel "$accel" --measured "$measured" -o c.xml >/dev/null) ||
    { echo "killloop: the reference outputs failed"; exit 1; }

i=0
while [ "$i" -lt "$loops" ]; do
    i=$((i + 1))
    rm -rf k
    killed_after "$(rand "$window")" "$bin" tune --space "$space" --budget "$budget" --seed "$sseed" --out k --quiet
    tally
    j=0
    while [ "$j" -lt 6 ]; do
        j=$((j + 1))
        if [ -s k/journal ] && [ "$(wc -l <k/journal)" -gt 0 ]; then
            killed_after "$(rand "$window")" "$bin" tune --resume k --quiet
            tally
        else
            rm -rf k
            killed_after "$(rand "$window")" "$bin" tune --space "$space" --budget "$budget" --seed "$sseed" --out k --quiet
            tally
        fi
    done
    if [ -s k/journal ] && [ "$(wc -l <k/journal)" -gt 0 ]; then
        "$bin" tune --resume k --quiet >/dev/null 2>err.txt ||
            { echo "tune loop $i: the last resume failed: $(cat err.txt)"; bad=1; }
    else
        rm -rf k
        fresh >/dev/null 2>&1
    fi
    for f in $files; do
        cmp -s "k/$f" "ref/k/$f" || { echo "tune loop $i: $f differs from the uninterrupted run's"; bad=1; }
    done
    if ls -a k | grep -q '\.tmp\.'; then echo "tune loop $i: a temp file is left in the run folder"; bad=1; fi
done

rm -rf k
cp -r ref/k k
i=0
while [ "$i" -lt "$loops" ]; do
    i=$((i + 1))
    for v in report recommend export calibrate; do
        case $v in
        report) o=r.html; set -- report k -o r.html --force ;;
        recommend) o=m.csv; set -- recommend k --all -o m.csv --force ;;
        export) o=e.json; set -- export k --format json -o e.json --force ;;
        calibrate) o=c.xml; set -- calibrate --accel "$accel" --measured "$measured" -o c.xml --force ;;
        esac
        rm -f "$o"
        killed_after "$(rand 0.15)" "$bin" "$@"
        "$bin" "$@" >/dev/null 2>err.txt || { echo "$v loop $i: the run after the kill failed: $(cat err.txt)"; bad=1; }
        cmp -s "$o" "ref/$o" || { echo "$v loop $i: $o differs from the uninterrupted one"; bad=1; }
        if ls -a | grep -q '\.tmp\.'; then echo "$v loop $i: a temp file is left beside $o"; bad=1; fi
    done
done
echo "killloop: $kills kills of tune ($late after its search ended: in the evidence or the final files)"
echo "killloop: $loops tune runs killed and resumed, $loops kills of each of report, recommend, export, calibrate: $([ $bad -eq 0 ] && echo all identical || echo FAILED)"
exit $bad
