#!/bin/sh
# valgrind-wrap.sh - run one test program under valgrind memcheck for
# `make check-valgrind` (mk/reliability.am), following every process it starts:
# Criterion's test workers (BoxFort re-executes the program) and the knobwise
# binaries of the end-to-end tests. Each process logs to its own file; the
# wrapper fails (exit 1, logs shown as TAP comments) if any process reported a
# memory error or a definite/indirect leak. Needed because Criterion takes a
# worker's verdict from its protocol, not from its exit status, so valgrind's
# --error-exitcode alone would let a leaking test pass.
# usage: valgrind-wrap.sh PROGRAM [ARGS...]
logs=$(mktemp -d "${TMPDIR:-/tmp}/kwvg.XXXXXX") || exit 1
${VALGRIND:-valgrind} --tool=memcheck --leak-check=full \
    --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
    --error-exitcode=97 --trace-children=yes \
    --suppressions="$(dirname "$0")/valgrind.supp" \
    --trace-children-skip='*/rm,*/mkdir,*/cp,*/cat,*/cmp,*/diff,*/sed,*/grep,*/unshare,*/mount' \
    --log-file="$logs/vg.%p.log" ${VALGRIND_EXTRA:-} "$@"
rc=$?
bad=$(grep -l -E 'ERROR SUMMARY: [1-9]' "$logs"/vg.*.log 2>/dev/null)
if [ -n "$bad" ]; then
    for f in $bad; do
        echo "# valgrind found errors in a process of $1 ($f):"
        sed 's/^/# /' "$f"
    done
    [ "$rc" -eq 0 ] && rc=1
fi
rm -rf "$logs"
exit $rc
