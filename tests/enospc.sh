#!/bin/sh
# enospc.sh - a full disk for real (`make enospc`, not part of make check;
# needs root: it mounts tmpfs). For each size from ENOSPC_FROM to ENOSPC_TO
# KiB in steps of ENOSPC_STEP, a run folder on a tmpfs of that size, so the
# journal, RUN/evidence, the results' temp files and their renames each meet
# ENOSPC at some size: `tune` (validate_small.xml --budget 60 --seed 3) must
# exit 0, or 1 with a "knobwise tune: ..." message (never a crash, a hang or
# 2); the tmpfs is then grown and `tune --resume` (a fresh run when the
# first left no run folder: a folder left must resume) must end with the six
# files byte-identical to a run on a roomy disk, and no temp file left.
#
# usage: KW_BIN=/abs/knobwise KW_SRCDIR=/abs/src tests/enospc.sh OUTDIR
set -u
out=${1:-enospc}
bin=${KW_BIN:-./knobwise}
src=${KW_SRCDIR:-.}
from=${ENOSPC_FROM:-4}
to=${ENOSPC_TO:-400}
step=${ENOSPC_STEP:-4}
space="$src/spaces/validate_small.xml"
files="results.xml ranked.csv audit.csv portability.csv journal evidence"
fresh() { timeout 120 "$bin" tune --space "$space" --budget 60 --seed 3 --out run --quiet; }

[ "$(id -u)" -eq 0 ] || { echo "enospc: needs root (it mounts a tmpfs)"; exit 1; }
rm -rf "$out"
mkdir -p "$out/ref" "$out/mnt" || exit 1
out=$(cd "$out" && pwd)
(cd "$out/ref" && fresh) || { echo "enospc: the reference run failed"; exit 1; }
trap 'umount "$out/mnt" 2>/dev/null' EXIT
bad=0 n=0 full=0
kb=$from
while [ "$kb" -le "$to" ]; do
    n=$((n + 1))
    mount -t tmpfs -o size=${kb}k tmpfs "$out/mnt" || exit 1
    (cd "$out/mnt" && fresh) >/dev/null 2>"$out/err"
    rc=$?
    msg=$(grep -m1 -v '^try' "$out/err" | cut -c1-120)
    mount -o remount,size=8m "$out/mnt"
    then="" stub=0
    if [ ! -e "$out/mnt/run" ]; then
        then="started again (no run folder left)"
        (cd "$out/mnt" && fresh) >/dev/null 2>&1
    elif (cd "$out/mnt" && timeout 120 "$bin" tune --resume run --quiet) >/dev/null 2>"$out/err2"; then
        then="resumed"
    else
        # a folder left must resume (a run that failed before its journal
        # held a header removes what it made: 2026-12-07)
        stub=1
        then="a folder that does not resume ($(head -c 80 "$out/err2" 2>/dev/null))"
        rm -rf "$out/mnt/run"
        (cd "$out/mnt" && fresh) >/dev/null 2>&1
    fi
    diff=""
    for f in $files; do
        cmp -s "$out/mnt/run/$f" "$out/ref/run/$f" || diff="$diff $f"
    done
    tmp=$(ls -a "$out/mnt/run" | grep -c '\.tmp\.')
    ok=1
    [ "$rc" -eq 0 ] || { [ "$rc" -eq 1 ] && case $msg in "knobwise tune: "*) true ;; *) false ;; esac; } || ok=0
    [ -z "$diff" ] && [ "$tmp" -eq 0 ] && [ "$stub" -eq 0 ] || ok=0
    [ "$rc" -ne 0 ] && full=$((full + 1))
    [ $ok -eq 1 ] || bad=$((bad + 1))
    echo "${kb} KiB: exit $rc${msg:+ [$msg]}; $then${diff:+; differs:$diff}$([ "$tmp" -eq 0 ] || echo "; $tmp temp files")$([ $ok -eq 1 ] || echo ' BROKEN')"
    umount "$out/mnt"
    kb=$((kb + step))
done
echo "enospc: $n sizes, $full met a full disk, $bad broken"
[ "$bad" -eq 0 ]
