#!/bin/sh
# slice.sh - a few seconds of `make fault` inside `make check` (TAP): the
# sweep of tests/fault/sweep.sh over a small tune, a resume, an eval and
# audit at 4 injection points per scenario and kind. The full sweep is
# `make fault`.
B=${KW_BUILDDIR:-.}
S=${KW_SRCDIR:-.}
echo "1..1"
if out=$(sh "$S/tests/fault/sweep.sh" "$B/fault/knobwise-fault" "${KW_BIN:-$B/knobwise}" "$S" \
        "$B/fault/slice" 4 "tune resume eval audit" 2>&1); then
    echo "$out" | sed 's/^/# /'
    echo "ok 1 - fault injection slice: every injected fault gave a clean outcome"
else
    echo "$out" | sed 's/^/# /'
    echo "not ok 1 - fault injection slice"
fi
