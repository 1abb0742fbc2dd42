#!/bin/sh
# same_results.sh - do two knobwise binaries give the same results?
#
# Tunes every shipped space (spaces/*.xml; not those that name a measuring
# evaluator, whose times are real measurements) at a small budget with binary A and
# binary B, same seed, and compares each run's journal and result files byte
# for byte after removing what is meant to differ (the version string and the
# run folder's own path). A refactor that claims "behaviour unchanged" passes
# this; a model change does not, and the diff shows where.
#
#   tests/same_results.sh OLD_KNOBWISE NEW_KNOBWISE [BUDGET [THREADS]]
#
# THREADS (default 2) is passed to both; KW_TUNE_ARGS adds tune options to
# both (e.g. "--strategy random", "--policy greedy"); KW_SPACES replaces the
# list of space files (e.g. a copy of a space made noisy).
#
# Exit 0 when every space gives identical files, 1 otherwise (the differing
# files are listed), 2 on usage errors. Everything is written under one
# mktemp folder, removed at the end unless KW_KEEP=1.
set -u
[ $# -ge 2 ] || { echo "usage: $0 OLD_KNOBWISE NEW_KNOBWISE [BUDGET [THREADS]]" >&2; exit 2; }
old=$1 new=$2 budget=${3:-40} threads=${4:-2}
for b in "$old" "$new"; do
    [ -x "$b" ] || { echo "$0: $b is not an executable" >&2; exit 2; }
done
srcdir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kw-same.XXXXXX") || exit 1
[ "${KW_KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

# Lines that name the binary's version or the run folder differ by design.
normalise() {
    sed -e 's/version=[^ ]*/version=V/g' -e 's/version="[^"]*"/version="V"/g' \
        -e "s#$work/[ab]/#RUN/#g" "$1"
}

status=0 spaces=0 measured=0
for space in ${KW_SPACES:-"$srcdir"/spaces/*.xml}; do
    name=$(basename "$space" .xml)
    # A space that names a measuring evaluator (<evaluator command=...>) times
    # real kernels: two runs never give the same figures, so it is not compared.
    if grep -q '<evaluator[[:space:]]' "$space"; then
        echo "$name: skipped (a measuring evaluator: measured times differ from run to run)"
        measured=$((measured + 1))
        continue
    fi
    for side in a b; do
        bin=$old; [ "$side" = b ] && bin=$new
        mkdir -p "$work/$side"
        "$bin" tune --space "$space" --budget "$budget" --seed 7 --threads "$threads" \
            ${KW_TUNE_ARGS:-} --out "$work/$side/$name" --quiet >"$work/$side/$name.out" 2>&1
        echo "exit=$?" >>"$work/$side/$name.out"
    done
    spaces=$((spaces + 1))
    if ! cmp -s "$work/a/$name.out" "$work/b/$name.out"; then
        echo "$name: tune's exit status or output differs"
        status=1
    fi
    for f in "$work/a/$name"/*; do
        [ -f "$f" ] || continue
        g="$work/b/$name/$(basename "$f")"
        if [ ! -f "$g" ]; then
            echo "$name: $(basename "$f") only from $old"; status=1; continue
        fi
        normalise "$f" >"$work/a.norm"
        normalise "$g" >"$work/b.norm"
        if ! cmp -s "$work/a.norm" "$work/b.norm"; then
            echo "$name: $(basename "$f") differs"; status=1
        fi
    done
done
[ "$status" = 0 ] && echo "same results on all $spaces spaces (budget $budget, seed 7, threads $threads${KW_TUNE_ARGS:+, $KW_TUNE_ARGS}; $measured measuring spaces skipped)"
exit $status
