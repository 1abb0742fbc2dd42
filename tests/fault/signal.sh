#!/bin/sh
# signal.sh - a signal typed while a verb commits its output leaves no temp
# file and no half-written output (TAP, in `make check`).
#
# fault/knobwise-fault with KW_FAULT_IO=N KW_FAULT_SIGNAL=S raises signal S at
# its Nth I/O call (tests/fault/kw_fault.c), so "SIGINT between the temp file
# and its rename" is hit every time, not by luck. For each verb that writes
# through a temp file (report and recommend --all: kw_results_commit;
# calibrate: kw_xml_save_atomic) and each I/O call of a clean run, with
# SIGINT and SIGTERM: the process ends by the signal or exits 0, no
# *.tmp.* file is left in the output's folder, and the output is absent or
# byte-identical to the clean run's. `report` left RUN/.report.html.tmp.XXXXXX.
B=$(cd "${KW_BUILDDIR:-.}" && pwd)
S=$(cd "${KW_SRCDIR:-.}" && pwd)
FAULT=$B/fault/knobwise-fault
GOOD=$B/knobwise
WORK=$B/fault/signal
echo "1..1"
rm -rf "$WORK"
mkdir -p "$WORK/o" || exit 1
fail=0
note() { echo "# $*"; }
( cd "$WORK" && "$GOOD" tune --space "$S/spaces/validate_small.xml" --budget 6 --out run \
    --quiet --threads 1 ) > "$WORK/tune.log" 2>&1 || { note "reference tune failed"; fail=1; }

# scenario NAME OUTPUT_FILE ARGS...: the verb is run in $WORK
scenario() {
    name=$1 out=$2
    shift 2
    rm -f "$out"
    ( cd "$WORK" && KW_FAULT_REPORT=1 "$FAULT" "$@" ) > "$WORK/clean.log" 2>&1 ||
        { note "$name: the clean run failed"; fail=1; return; }
    cp "$out" "$WORK/clean.out"
    ios=$(sed -n 's/.*kw_fault: allocs=[0-9]* io=\([0-9]*\).*/\1/p' "$WORK/clean.log")
    [ -n "$ios" ] || { note "$name: no I/O count"; fail=1; return; }
    hit=0
    for sig in 2 15; do
        n=1
        while [ "$n" -le "$ios" ]; do
            rm -f "$out"
            ( cd "$WORK" && KW_FAULT_IO=$n KW_FAULT_SIGNAL=$sig "$FAULT" "$@" ) \
                > "$WORK/case.log" 2>&1
            rc=$?
            if [ "$rc" -ne 0 ] && [ "$rc" -ne $((128 + sig)) ]; then
                note "$name: signal $sig at I/O $n: exit $rc"; fail=1
            fi
            [ "$rc" -eq $((128 + sig)) ] && hit=$((hit + 1))
            left=$(find "$WORK" -name '*.tmp.*' | head -1)
            if [ -n "$left" ]; then
                note "$name: signal $sig at I/O $n left $left"; fail=1
                find "$WORK" -name '*.tmp.*' -exec rm -f {} +
            fi
            if [ -e "$out" ] && ! cmp -s "$out" "$WORK/clean.out"; then
                note "$name: signal $sig at I/O $n: $out differs from the clean run's"; fail=1
            fi
            n=$((n + 1))
        done 2>/dev/null # the shell's own "Terminated" when a case ends by SIGTERM
    done
    [ "$hit" -gt 0 ] || { note "$name: no signal ended a run"; fail=1; }
    note "$name: $ios I/O calls, SIGINT and SIGTERM at each, $hit ended by the signal"
}

scenario report "$WORK/o/r.html" report run -o o/r.html --no-portability
scenario report-in-run "$WORK/run/report.html" report run --no-portability
scenario recommend "$WORK/o/m.csv" recommend run --all -o o/m.csv
scenario calibrate "$WORK/o/c.xml" calibrate --accel "$S/spaces/accel/h100.xml" \
    --measured "$S/spaces/measured/h100_published.csv" -o o/c.xml
if [ "$fail" -eq 0 ]; then
    echo "ok 1 - a signal during an output's commit leaves no temp file and no partial output"
else
    echo "not ok 1 - a signal during an output's commit"
fi
