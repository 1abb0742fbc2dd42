#!/bin/sh
# check_names.sh - the exported-name audit behind `make check-names`.
#
# Reads the symbol tables (nm) of every object of the internal libraries
# (libkw*.a) and of the knobwise program, and reports:
#   name   an exported function whose name is not kw_<module>_<verb> (or the
#          bare kw_<module>) after the file it is defined in: kw_cost.c
#          exports kw_cost_*; cli_tune.c exports kw_cli_tune*; main.c main;
#   unused an exported function that no other object of the build refers to
#          (not the program, another library, a test or a benchmark): it
#          should be static, or it is dead;
#   tests  an exported function only tests and benchmarks refer to (listed,
#          not a failure: a module's test seam).
# Exit 0 when there is no name or unused row, 1 otherwise, 2 on usage errors.
# Run in the build tree after `make` and `make check` (so the test objects
# exist): `make check-names`. Not part of make check: it lists the names that
# break the rule today (89 names, 13 unused when it was written), which wait
# for their modules' owners.
#
# Design choice: nm over the built objects rather than parsing headers: it
# sees what the linker sees (a static inline in a header is no export, a
# function declared nowhere but defined non-static is).
set -u
build=${1:-.}
cd "$build" || exit 2
ls libkw*.a >/dev/null 2>&1 || { echo "$0: no libkw*.a in $build: run make first" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kw-names.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# Defined functions: "OBJECT SYMBOL" (OBJECT the source's base name).
# (libkwtl.a is the tests' own helper library; knobwise_* is libknobwise's
# public API, named by its own rule and exported by src/lib/knobwise.map.)
for a in libkw*.a; do
    [ "$a" = libkwtl.a ] && continue
    nm -A -g --defined-only "$a" 2>/dev/null
done | awk '$2 == "T" && $3 !~ /^knobwise_/ { split($1, p, ":"); print p[2], $3 }' >"$tmp/defs.raw"
for o in src/cli/*.o; do
    [ -f "$o" ] && nm -A -g --defined-only "$o" 2>/dev/null
done | awk '$2 == "T" { split($1, p, ":"); n = split(p[1], q, "/"); print q[n], $3 }' >>"$tmp/defs.raw"
# strip automake's per-target prefix (libkwsearch_a-kw_engine.o) and .o
sed -e 's/^[A-Za-z0-9_]*_a-//' -e 's/\.o / /' "$tmp/defs.raw" | sort -u >"$tmp/defs"

# References: "OBJECT SYMBOL" for every undefined symbol of every object of
# the build (libraries, program, tests, benchmarks), same naming.
find . -name '*.o' -not -path './fuzz/*' -not -path './_*' -not -path './knobwise-*' \
    -not -path '*/.libs/*' | while read -r o; do
    nm -u "$o" 2>/dev/null | awk -v o="$o" '{ print o, $NF }'
done | sed -e 's|^\./||' >"$tmp/refs.raw"
awk '{ n = split($1, q, "/"); b = q[n]; sub(/^[A-Za-z0-9_]*_a-/, "", b); sub(/^[A-Za-z0-9_]*-/, "", b);
       sub(/\.o$/, "", b); t = ($1 ~ /^tests\//) ? "test" : "prog"; print b, t, $2 }' \
    "$tmp/refs.raw" | sort -u >"$tmp/refs"

bad=0
while read -r obj sym; do
    case $obj in
    main) [ "$sym" = main ] && continue; want=kw_main ;;
    cli_*) want=kw_$obj ;;
    kw_cli) want=kw_cli ;;
    kw_*) want=$obj ;;
    *) want=kw_$obj ;;
    esac
    case $sym in
    "$want" | "$want"_*) ;;
    *) echo "name   $obj.c: $sym (want $want""_VERB)"; bad=1 ;;
    esac
    users=$(awk -v s="$sym" -v o="$obj" '$3 == s && $1 != o { print $2 }' "$tmp/refs" | sort -u | tr '\n' ' ')
    case $users in
    "") echo "unused $obj.c: $sym (no other object refers to it)"; bad=1 ;;
    "test ") echo "tests  $obj.c: $sym (only tests and benchmarks call it)" ;;
    esac
done <"$tmp/defs"
n=$(wc -l <"$tmp/defs")
echo "check-names: $n exported functions read"
exit $bad
