#!/bin/sh
# syncdir.sh - a new run's names survive a power loss, not only a kill (TAP):
# fsync of a file does not persist its directory entry (Linux fsync(2)), so
# tune syncs the folder that holds each name it creates: the run folder's
# parent after mkdir, the run folder after the journal and after RUN/evidence
# are created. fault/knobwise-fault's KW_FAULT_TRACE lists each fsync of a
# folder and each rename in call order; before the first rename into the run
# folder (results.xml's commit) the run folder must have been synced twice
# (journal, evidence) and its parent once. main's binary (7180046) synced the
# run folder only after the result files' renames: none before.
B=${KW_BUILDDIR:-.}
S=${KW_SRCDIR:-.}
echo "1..1"
work=$(mktemp -d "${TMPDIR:-/tmp}/kw-syncdir.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/runs"
run="$work/runs/run"
if ! KW_FAULT_TRACE="$work/trace" "$B/fault/knobwise-fault" tune --space "$S/tests/data/signal/final_slow.xml" \
        --budget 4 --threads 1 --quiet --out "$run" >"$work/out" 2>&1; then
    sed 's/^/# /' "$work/out"
    echo "not ok 1 - tune failed"
    exit 0
fi
real=$(cd "$run" && pwd -P)
parent=$(cd "$work/runs" && pwd -P)
# the lines before the first rename into the run folder
before=$(awk -v r="$real/" 'index($0, "rename " r) == 1 { exit } { print }' "$work/trace")
n_run=$(printf '%s\n' "$before" | grep -cx "fsync-dir $real")
n_parent=$(printf '%s\n' "$before" | grep -cx "fsync-dir $parent")
if [ "$n_run" -ge 2 ] && [ "$n_parent" -ge 1 ]; then
    echo "ok 1 - the run folder synced $n_run times and its parent $n_parent before the first result file"
else
    sed 's/^/# /' "$work/trace"
    echo "not ok 1 - before the first result file: run folder synced $n_run times (want 2: journal, evidence), its parent $n_parent (want 1)"
fi
