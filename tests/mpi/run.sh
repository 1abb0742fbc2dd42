#!/bin/sh
# run.sh - the MPI tests of `mpirun -n N knobwise tune` (TAP, run by make check).
#
#   1 every shipped space at a small budget: the files of mpirun -n 1, 2 and
#     4 (oversubscribed on loopback) equal a one-process run's byte for byte
#     (tests/same_results.sh, the run folder's path aside). KW_MPI_QUICK=1
#     (make check: seconds, not a minute) takes the two quickest spaces;
#     `make check-mpi` and .ci/run take all;
#   2 a rank killed with SIGKILL mid-run ends the job; the journal verifies
#     up to its last complete record; resumed with 2 ranks and then with no
#     MPI at all, the files equal an uninterrupted run's (nothing measured twice:
#     the journals are equal);
#   3 bad input under mpirun: exit status 2, one message, nothing written;
#   4 the measuring evaluator: each rank starts its own worker, which sees its
#     rank's local index in KW_WORKER_INDEX, and the files equal a
#     one-process run's (the test worker's times are a function of the config);
#     every repetition of a control or pairing block (rep >= the repeats:
#     rounds whose order is a design) is measured by rank 0's worker alone
#     (the counts per rank are printed);
#   5 a rank whose input is not rank 0's (its worker program, found on its own
#     $PATH) refuses to evaluate: the run fails naming the rank and the file,
#     exit 2, no run folder made;
#   6 progress comes from rank 0 only: under mpirun -n 2 each finished shape
#     is said once, followed by the job's and each rank's evaluations/s;
#   7 SIGTERM to mpirun mid-run, with its default odls_base_sigkill_timeout
#     (the ranks get the signal 1 s later and SIGKILL 1 s after that): rank 0
#     journals the pause and writes the results the journal proves, evaluating
#     nothing more (no <recheck>), before the SIGKILL; the files are valid
#     (verify, xmllint), the journal verifies, and the resumed run's files
#     equal an uninterrupted run's;
#   8 a rank other than 0 given other options (mpirun's MPMD form: --budget
#     30 where rank 0 has 20) follows rank 0's run, as before, and says so on
#     its stderr, naming its rank and the option; the files equal a
#     one-process run with rank 0's options (before: nothing was said);
#   9 SIGHUP to every rank mid-run (a closed terminal's hangup reaches each
#     process of its group): rank 0 journals the pause and writes the results
#     the journal proves, exit 129; no rank dies of it (main's ranks other than
#     0 did, and mpirun then aborted the job while rank 0 wrote its pause: no
#     Q record, no result files), the run verifies, and the resumed run's
#     files equal an uninterrupted run's;
#  10 the wall clock stepped an hour back (tests/mpi/clock_back.c, an
#     LD_PRELOAD shim built here with $CC: CLOCK_REALTIME read an hour ahead):
#     mpirun -n 2 finishes and its files equal a one-process run's (main's
#     ranks timed their poll waits on the wall clock: each lasted the hour,
#     killed at the 120 s bound with nothing but the journal's header);
#  11 a resume after a time-limit pause that kept nothing (idle=1) makes its
#     first round whole on every rank, and the rounds after it end at the
#     limit on every rank: each rank's worker measures fast until 0.6 s, then
#     takes 40 s a measurement (tests/kw_tworker.c --sleep-after); with
#     --time-limit 2.5 the job ends in seconds and keeps its progress (main
#     52bf866's other ranks had no limit after a whole round: the job ran
#     41 s, one measurement past the limit on rank 1); the run then ends
#     with files equal to an uninterrupted one-process run's.
#  13 SIGTERM to rank 1 alone mid-search (a batch system signalling one
#     process, a user's kill of the wrong pid): rank 0 pauses, its search not
#     finished, and makes no evidence of it (main 880a621 ran the evidence
#     phase on the search so far and kept it in RUN/evidence; the resumed
#     run's evidence then held those stale records first and differed from an
#     uninterrupted run's); the resume without MPI gives an uninterrupted
#     run's files. Rank 0 says "paused: rank 1 stopped (SIGTERM)" (main
#     144d89f said "interrupted (SIGINT)", a signal it never got).
#
# Configured without --with-mpi (KW_MPIRUN empty) it prints why it skips:
# the feature is not built. Everything is written under one mktemp folder.
B=${KW_BUILDDIR:-.}
S=${KW_SRCDIR:-.}
K=${KW_BIN:-$B/knobwise}
if [ -z "${KW_MPIRUN:-}" ]; then
    echo "1..0 # SKIP knobwise was configured without --with-mpi: no MPI support is built"
    exit 0
fi
# mpirun refuses root unless told (CI runs as root)
if [ "$(id -u)" = 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/kw-mpi.XXXXXX") || exit 1
[ "${KW_KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
# a limit on every mpirun, so a hang fails the test instead of the suite
T="timeout 300"
mpi() { n=$1; shift; $T "$KW_MPIRUN" --oversubscribe -n "$n" "$@"; }
# wrappers that are a knobwise binary to tests/same_results.sh
for n in 1 2 4; do
    printf '#!/bin/sh\nexec %s "%s" --oversubscribe -n %s "%s" "$@"\n' "$T" "$KW_MPIRUN" "$n" "$K" \
        >"$work/mpi$n"
    chmod +x "$work/mpi$n"
done
echo "1..13"
t0=$(date +%s)
lap() { t1=$(date +%s); echo "# ($((t1 - t0)) s)"; t0=$t1; }

# 1 -------------------------------------------------------------- identical files
ok=1
which="every shipped space"
if [ "${KW_MPI_QUICK:-0}" = 1 ]; then
    KW_SPACES="$S/spaces/validate_small.xml $S/spaces/cpu_gemm_epilogue.xml"
    export KW_SPACES
    which="two shipped spaces (quick)"
fi
for n in 1 2 4; do
    if out=$(sh "$S/tests/same_results.sh" "$K" "$work/mpi$n" 12 2>&1); then
        echo "# mpirun -n $n: $out"
    else
        echo "$out" | sed "s/^/# mpirun -n $n: /"
        ok=0
    fi
done
unset KW_SPACES
if [ $ok = 1 ]; then echo "ok 1 - mpirun -n 1, 2, 4: $which, files equal the one-process run's"
else echo "not ok 1 - mpirun -n 1, 2, 4 give other files than one process"; fi

# the run folders' contents, with the folder's own path made neutral
same_dirs() {
    st=0
    for f in "$1"/*; do
        [ -f "$f" ] || continue
        g="$2/$(basename "$f")"
        sed -e "s#$1#RUN#g" "$f" >"$work/x.a"
        sed -e "s#$2#RUN#g" "$g" >"$work/x.b" 2>/dev/null || { echo "# $(basename "$f") missing"; st=1; continue; }
        cmp -s "$work/x.a" "$work/x.b" || { echo "# $(basename "$f") differs"; st=1; }
    done
    return $st
}

# the measured runs' journal, results.xml and ranked.csv (their other files
# name the worker's requests, which may differ by rank), the same way
same_measured() {
    st=0
    for f in journal results.xml ranked.csv; do
        sed -e "s#$1#RUN#g" "$1/$f" >"$work/x.a" 2>/dev/null
        sed -e "s#$2#RUN#g" "$2/$f" >"$work/x.b" 2>/dev/null
        cmp -s "$work/x.a" "$work/x.b" || { echo "# $f differs"; st=1; }
    done
    return $st
}

# victim= the pid of rank RANK of `tune ARGS --out RUN` once RUN/journal
# holds more than LINES lines (empty when not found in TRIES polls of 50 ms);
# lines= the journal's lines then
rank_once_journaled() {
    victim=
    for i in $(seq 1 "$5"); do
        lines=0
        [ -f "$3/journal" ] && lines=$(wc -l <"$3/journal")
        if [ "${lines:-0}" -gt "$2" ]; then
            for p in $(pgrep -f "tune $4 --out $3" 2>/dev/null); do
                if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
                    victim=$p
                    break
                fi
            done
            [ -n "$victim" ] && break
        fi
        sleep 0.05
    done
}

lap
# 2 -------------------------------------------------------------- a rank killed
ok=1
args="--budget 150 --seed 5 --threads 1 --quiet"
mkdir -p "$work/ref" "$work/kill"
"$K" tune $args --out "$work/ref/run" >/dev/null 2>&1 || { echo "# reference run failed"; ok=0; }
mpi 3 "$K" tune $args --out "$work/kill/run" >"$work/kill.out" 2>&1 &
mp=$!
# wait for evaluations in the journal, then SIGKILL rank 1
rank_once_journaled 1 200 "$work/kill/run" "$args" 200
if [ -n "$victim" ]; then
    kill -KILL "$victim"
    wait "$mp"
    st=$?
    echo "# killed rank 1 (pid $victim) after $lines journal lines; mpirun exit $st"
    [ "$st" -ne 0 ] || { echo "# the job did not fail"; ok=0; }
    "$K" verify "$work/kill/run" >"$work/verify.out" 2>&1
    vs=$?
    if grep -q 'run complete' "$work/verify.out"; then
        echo "# the run finished before the kill: the test proves nothing"; ok=0
    fi
    sed 's/^/# verify: /' "$work/verify.out" | head -5
    grep -q 'journal checksums: .* intact' "$work/verify.out" || { echo "# verify: journal not intact (exit $vs)"; ok=0; }
    # resume with 2 ranks under a time limit, then without MPI to the end
    mpi 2 "$K" tune --resume "$work/kill/run" --time-limit 0.5 --quiet >"$work/resume1.out" 2>&1
    "$K" tune --resume "$work/kill/run" --quiet >"$work/resume2.out" 2>&1 || { echo "# resume failed"; cat "$work/resume2.out" | sed 's/^/#   /'; ok=0; }
    same_dirs "$work/ref/run" "$work/kill/run" || ok=0
else
    echo "# could not find rank 1 while the run was going"
    wait "$mp"
    ok=0
fi
if [ $ok = 1 ]; then echo "ok 2 - a rank killed mid-run: the journal verifies and the resumed run's files equal an uninterrupted run's"
else echo "not ok 2 - a rank killed mid-run"; fi

lap
# 3 -------------------------------------------------------------- bad input
ok=1
mkdir -p "$work/bad"
mpi 2 "$K" tune --budget nope --out "$work/bad/run" >"$work/bad.out" 2>&1
st=$?
n=$(grep -c 'knobwise tune: --budget' "$work/bad.out")
[ "$st" = 2 ] || { echo "# exit $st, not 2"; ok=0; }
[ "$n" = 1 ] || { echo "# the message came $n times"; ok=0; }
[ ! -e "$work/bad/run" ] || { echo "# a run folder was written"; ok=0; }
sed 's/^/# /' "$work/bad.out" | head -3
if [ $ok = 1 ]; then echo "ok 3 - bad input under mpirun: exit 2, one message, nothing written"
else echo "not ok 3 - bad input under mpirun"; fi

lap
# 4 -------------------------------------------------------------- one worker per rank
ok=1
TW="$B/tests/kw_tworker"
cat >"$work/w.sh" <<EOF
#!/bin/sh
echo "\$KW_WORKER_INDEX" >>"$work/ranks"
exec "$TW" --count "$work/req.\$KW_WORKER_INDEX" "\$@"
EOF
chmod +x "$work/w.sh"
xargs_="--space $S/tests/data/exec/small.xml --evaluator exec:$work/w.sh --budget 20 --seed 2 --threads 1 --quiet"
mkdir -p "$work/x1" "$work/x3"
"$K" tune $xargs_ --out "$work/x1/run" >"$work/x1.out" 2>&1 || { echo "# one-process exec run failed"; sed 's/^/#   /' "$work/x1.out"; ok=0; }
reps=$(sed -n 's/^H .* repeats=\([0-9]*\) .*/\1/p' "$work/x1/run/journal")
: >"$work/ranks"
rm -f "$work"/req.*
mpi 3 "$K" tune $xargs_ --out "$work/x3/run" >"$work/x3.out" 2>&1 || { echo "# mpirun -n 3 exec run failed"; sed 's/^/#   /' "$work/x3.out"; ok=0; }
seen=$(sort -u "$work/ranks" | tr '\n' ' ')
echo "# workers started with KW_WORKER_INDEX: $seen"
[ "$seen" = "0 1 2 " ] || ok=0
# requests per rank: all, and those of a re-measured block (rep >= repeats)
blocks() { sed -n 's/.* rep=\([0-9]*\) .*/\1/p' "$1" 2>/dev/null | awk -v r="${reps:-0}" '$1 >= r' | wc -l; }
for i in 0 1 2; do
    n=$(cat "$work/req.$i" 2>/dev/null | grep -c '^measure')
    eval "all$i=$n blk$i=$(blocks "$work/req.$i")"
done
echo "# requests by rank 0/1/2: $all0/$all1/$all2, of re-measured blocks (rep >= ${reps:-?}): $blk0/$blk1/$blk2"
[ "${reps:-0}" -gt 0 ] && [ "$blk0" -gt 0 ] || { echo "# no control or pairing block measured"; ok=0; }
[ "$blk1" = 0 ] && [ "$blk2" = 0 ] || { echo "# a control or pairing block measured off rank 0"; ok=0; }
same_measured "$work/x1/run" "$work/x3/run" || ok=0
if [ $ok = 1 ]; then echo "ok 4 - exec evaluator: a worker per rank, told its local rank (KW_WORKER_INDEX); a one-shape run's controls and pairs all on rank 0's (shape 0's device); files equal one process's"
else echo "not ok 4 - exec evaluator under mpirun"; fi

# 5 -------------------------------------------------------------- inputs differ
ok=1
mkdir -p "$work/p1" "$work/p2" "$work/mm"
for d in p1 p2; do
    printf '#!/bin/sh\n# the worker as %s sees it\nexec "%s" "$@"\n' "$d" "$TW" >"$work/$d/kwtw"
    chmod +x "$work/$d/kwtw"
done
xa="--space $S/tests/data/exec/small.xml --evaluator exec:kwtw --budget 5 --threads 1 --quiet"
$T "$KW_MPIRUN" --oversubscribe -n 1 env PATH="$work/p1:$PATH" "$K" tune $xa --out "$work/mm/run" : \
    -n 1 env PATH="$work/p2:$PATH" "$K" tune $xa --out "$work/mm/run" >"$work/mm.out" 2>&1
st=$?
grep "cannot evaluate" "$work/mm.out" | sed 's/^/# /'
grep -q "rank 1 (.*) cannot evaluate: $work/p2/kwtw: not the file rank 0 loaded" "$work/mm.out" ||
    { echo "# no message naming rank 1 and its file"; ok=0; }
[ "$st" = 2 ] || { echo "# exit $st, not 2"; ok=0; }
[ ! -e "$work/mm/run" ] || { echo "# a run folder was made"; ok=0; }
if [ $ok = 1 ]; then echo "ok 5 - a rank whose input differs from rank 0's: named, exit 2, nothing written"
else echo "not ok 5 - a rank whose input differs from rank 0's"; fi

# 6 -------------------------------------------------------------- progress
ok=1
mkdir -p "$work/pg"
mpi 2 "$K" tune --space "$S/spaces/validate_small.xml" --budget 12 --threads 1 \
    --out "$work/pg/run" >"$work/pg.out" 2>"$work/pg.err" || { echo "# the run failed"; ok=0; }
done_lines=$(grep -c "^knobwise tune: shape .* done:" "$work/pg.err")
rate_lines=$(grep -c "^knobwise tune: 2 ranks: [0-9.]* evals/s (r0 [0-9.]* r1 [0-9.]*/s)$" "$work/pg.err")
sed 's/^/# /' "$work/pg.err" | head -4
# validate_small tunes 2 shapes: each said once, each followed by the rates
[ "$done_lines" = 2 ] || { echo "# $done_lines shape lines, not 2"; ok=0; }
[ "$rate_lines" = 2 ] || { echo "# $rate_lines rate lines, not 2"; ok=0; }
grep -q "^knobwise tune: 2 ranks: " "$work/pg.out" || { echo "# no rate line in the summary"; ok=0; }
if [ $ok = 1 ]; then echo "ok 6 - progress from rank 0 only, with the job's and each rank's evaluations/s"
else echo "not ok 6 - progress under mpirun"; fi
lap

# 7 -------------------------------------------------------------- SIGTERM to mpirun
ok=1
unset OMPI_MCA_odls_base_sigkill_timeout # mpirun's default: 1 s
targs="--space $S/tests/data/signal/search_slow.xml --budget 200 --seed 5 --threads 1 --quiet"
mkdir -p "$work/tref" "$work/term"
"$K" tune $targs --out "$work/tref/run" >/dev/null 2>&1 || { echo "# reference run failed"; ok=0; }
$T "$KW_MPIRUN" --oversubscribe -n 2 "$K" tune $targs --out "$work/term/run" >"$work/term.out" 2>&1 &
tp=$!
mp=
for i in $(seq 1 400); do
    lines=0
    [ -f "$work/term/run/journal" ] && lines=$(wc -l <"$work/term/run/journal")
    [ "${lines:-0}" -gt 40 ] && mp=$(pgrep -P "$tp" 2>/dev/null | head -1) && [ -n "$mp" ] && break
    sleep 0.05
done
if [ -n "$mp" ]; then
    kill -TERM "$mp"
    wait "$tp"
    echo "# SIGTERM to mpirun (pid $mp) after $lines journal lines; mpirun exit $?"
    sed 's/^/# tune: /' "$work/term.out" | grep -i 'interrupted\|killed' | head -3
    last=$(tail -n 1 "$work/term/run/journal" | cut -c1-17)
    [ "$last" = "Q why=interrupted" ] || { echo "# the journal does not end with the pause: $last"; ok=0; }
    for f in results.xml ranked.csv audit.csv portability.csv; do
        [ -f "$work/term/run/$f" ] || { echo "# no $f after the signal"; ok=0; }
    done
    if command -v xmllint >/dev/null 2>&1 && [ -f "$work/term/run/results.xml" ]; then
        xmllint --noout --schema "$S/results/results.xsd" "$work/term/run/results.xml" >"$work/xl.out" 2>&1 ||
            { sed 's/^/# xmllint: /' "$work/xl.out" | head -3; ok=0; }
    fi
    ! grep -q '<recheck' "$work/term/run/results.xml" 2>/dev/null ||
        { echo "# a re-check was evaluated after the signal"; ok=0; }
    "$K" verify "$work/term/run" >"$work/tverify.out" 2>&1 || { echo "# verify failed"; ok=0; }
    sed 's/^/# verify: /' "$work/tverify.out" | head -5
    grep -q 'journal checksums: .* intact' "$work/tverify.out" || ok=0
    grep -q 'ok   results follow from the journal: 3 result files agree' "$work/tverify.out" || ok=0
    "$K" tune --resume "$work/term/run" --quiet >"$work/tresume.out" 2>&1 ||
        { echo "# resume failed"; sed 's/^/#   /' "$work/tresume.out"; ok=0; }
    same_dirs "$work/tref/run" "$work/term/run" || ok=0
else
    echo "# could not find mpirun while the run was going"
    wait "$tp"
    ok=0
fi
if [ $ok = 1 ]; then echo "ok 7 - SIGTERM to mpirun (default sigkill timeout): results so far valid, journal verifies, resume equals an uninterrupted run"
else echo "not ok 7 - SIGTERM to mpirun mid-run"; fi
lap

# 8 -------------------------------------------------------------- options differ
ok=1
mkdir -p "$work/o1" "$work/o2"
oa="--space $S/spaces/validate_small.xml --seed 3 --threads 1 --quiet"
"$K" tune $oa --budget 20 --out "$work/o1/run" >/dev/null 2>&1 || { echo "# one-process run failed"; ok=0; }
$T "$KW_MPIRUN" --oversubscribe -n 1 "$K" tune $oa --budget 20 --out "$work/o2/run" : \
    -n 1 "$K" tune $oa --budget 30 --out "$work/o2/run" >"$work/o2.out" 2>&1 ||
    { echo "# mpirun failed"; sed 's/^/#   /' "$work/o2.out"; ok=0; }
grep "warning" "$work/o2.out" | sed 's/^/# /'
n=$(grep -c "^knobwise tune: warning: rank 1: its option '--budget 30' is not rank 0's ('--budget 20')" "$work/o2.out")
[ "$n" = 1 ] || { echo "# $n warnings naming rank 1 and --budget, not 1"; ok=0; }
same_dirs "$work/o1/run" "$work/o2/run" || ok=0
if [ $ok = 1 ]; then echo "ok 8 - a rank given other options follows rank 0's and says so, naming its rank and the option"
else echo "not ok 8 - a rank given other options"; fi
lap

# 9 -------------------------------------------------------------- SIGHUP to the ranks
ok=1
mkdir -p "$work/hup"
# run under nohup (CI), the ranks would inherit SIGHUP ignored, and keep it:
# mpirun starts with it at its default (a shell cannot undo an inherited ignore)
dfl="env --default-signal=HUP"
$dfl true 2>/dev/null || dfl=env
$T $dfl "$KW_MPIRUN" --oversubscribe -n 2 "$K" tune $targs --out "$work/hup/run" >"$work/hup.out" 2>&1 &
tp=$!
ranks=
for i in $(seq 1 400); do
    lines=0
    [ -f "$work/hup/run/journal" ] && lines=$(wc -l <"$work/hup/run/journal")
    if [ "${lines:-0}" -gt 40 ]; then
        for p in $(pgrep -f "tune $targs --out $work/hup/run" 2>/dev/null); do
            tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -q '^OMPI_COMM_WORLD_RANK=' &&
                ranks="$ranks $p"
        done
        [ -n "$ranks" ] && break
    fi
    sleep 0.05
done
if [ -n "$ranks" ]; then
    kill -HUP $ranks
    wait "$tp"
    echo "# SIGHUP to the ranks ($ranks) after $lines journal lines; mpirun exit $?"
    grep -i 'interrupted\|aborted' "$work/hup.out" | head -3 | sed 's/^/# tune: /'
    last=$(tail -n 1 "$work/hup/run/journal" | cut -c1-17)
    [ "$last" = "Q why=interrupted" ] || { echo "# the journal does not end with the pause: $last"; ok=0; }
    grep -q 'interrupted (SIGHUP)' "$work/hup.out" || { echo "# rank 0 did not say the SIGHUP"; ok=0; }
    for f in results.xml ranked.csv audit.csv portability.csv; do
        [ -f "$work/hup/run/$f" ] || { echo "# no $f after the signal"; ok=0; }
    done
    "$K" verify "$work/hup/run" >"$work/hverify.out" 2>&1 || { echo "# verify failed"; ok=0; }
    "$K" tune --resume "$work/hup/run" --quiet >"$work/hresume.out" 2>&1 ||
        { echo "# resume failed"; sed 's/^/#   /' "$work/hresume.out"; ok=0; }
    same_dirs "$work/tref/run" "$work/hup/run" || ok=0
else
    echo "# could not find the ranks while the run was going"
    wait "$tp"
    ok=0
fi
if [ $ok = 1 ]; then echo "ok 9 - SIGHUP to every rank: rank 0 pauses and writes the results, no rank dies of it, resume equals an uninterrupted run"
else echo "not ok 9 - SIGHUP to every rank mid-run"; fi
lap

# 10 ------------------------------------------------------------- the wall clock stepped back
ok=1
mkdir -p "$work/cb1" "$work/cb2"
ca="--space $S/spaces/validate_small.xml --budget 20 --seed 3 --threads 1 --quiet"
if ${CC:-cc} -shared -fPIC -o "$work/clock_back.so" "$S/tests/mpi/clock_back.c" -ldl \
    >"$work/cc.out" 2>&1; then
    "$K" tune $ca --out "$work/cb1/run" >/dev/null 2>&1 || { echo "# one-process run failed"; ok=0; }
    # an AddressSanitizer build wants its runtime first: the shim comes first here
    as="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
    timeout 120 "$KW_MPIRUN" --oversubscribe -x LD_PRELOAD="$work/clock_back.so" \
        -x ASAN_OPTIONS="$as" -n 2 "$K" tune $ca --out "$work/cb2/run" >"$work/cb.out" 2>&1
    st=$?
    [ $st = 0 ] || { echo "# mpirun exit $st (124: timed out, a wait on the wall clock)"; \
        sed 's/^/#   /' "$work/cb.out" | head -5; ok=0; }
    same_dirs "$work/cb1/run" "$work/cb2/run" || ok=0
else
    echo "# cannot build the shim with ${CC:-cc}:"; sed 's/^/#   /' "$work/cc.out" | head -3; ok=0
fi
if [ $ok = 1 ]; then echo "ok 10 - the wall clock an hour back: the ranks' waits are on the monotonic clock, the files equal a one-process run's"
else echo "not ok 10 - the wall clock stepped back"; fi
lap

# 11 ------------------------------------------------------------- the whole round and the limit
ok=1
mkdir -p "$work/wr1" "$work/wr2"
cat >"$work/w11.sh" <<EOF
#!/bin/sh
case "\${KW_T_SLOW:-}" in
fresh) set -- --sleep 0.5 "\$@" ;;
resume) set -- --sleep 0.05 --sleep-after 0.6,40 "\$@" ;;
esac
exec "$TW" "\$@"
EOF
chmod +x "$work/w11.sh"
wa="--space $S/tests/data/exec/small.xml --evaluator exec:$work/w11.sh --timeout 60 --budget 60 --seed 2 --threads 1 --quiet --no-estimate --strategy random"
"$K" tune $wa --out "$work/wr1/run" >/dev/null 2>&1 || { echo "# one-process run failed"; ok=0; }
# the baselines (one 0.5 s measurement) fit in 1.5 s, the first round (5 x 0.5 s) does not
KW_T_SLOW=fresh "$K" tune $wa --time-limit 1.5 --out "$work/wr2/run" >"$work/wr.out" 2>&1
tail -n 1 "$work/wr2/run/journal" 2>/dev/null | grep -q '^Q why=time_limit idle=1 ' ||
    { echo "# the first tune did not pause idle:"; sed 's/^/#   /' "$work/wr.out" | head -5; ok=0; }
timeout 25 "$KW_MPIRUN" --oversubscribe -x KW_T_SLOW=resume -n 2 "$K" tune --resume "$work/wr2/run" \
    --threads 1 --time-limit 2.5 >"$work/wr2.out" 2>&1
st=$?
[ $st = 0 ] || { echo "# mpirun exit $st (124: still measuring 25 s after a 2.5 s limit)"; \
    sed 's/^/#   /' "$work/wr2.out" | tail -5; ok=0; }
grep -q 'first round was made whole' "$work/wr2.out" || { echo "# no whole first round"; ok=0; }
tail -n 1 "$work/wr2/run/journal" | grep -q '^Q why=time_limit idle=0 ' ||
    { echo "# the resume did not keep a round: $(tail -n 1 "$work/wr2/run/journal" | cut -c1-40)"; ok=0; }
"$K" tune --resume "$work/wr2/run" --quiet >"$work/wr3.out" 2>&1 ||
    { echo "# the last resume failed"; sed 's/^/#   /' "$work/wr3.out" | head -3; ok=0; }
same_dirs "$work/wr1/run" "$work/wr2/run" || ok=0
if [ $ok = 1 ]; then echo "ok 11 - a whole-round resume under mpirun: whole on every rank, then the limit on every rank; files equal a one-process run's"
else echo "not ok 11 - the whole-round resume under mpirun and the time limit"; fi
lap

# 12 ------------------------------------------------------------- designed rounds spread by shape
# A measured one-knob run's controls and pairs (the re-measured blocks, rep >= the
# repeats) ran on rank 0's device alone until 2026-12-07, the other ranks idle; now
# each shape's designed rounds keep to one rank's device (shape i on rank i % N):
# every block of a shape from one rank, the two shapes' from two ranks, the files
# a one-process run's.
ok=1
mkdir -p "$work/d1" "$work/d2"
cat >"$work/w12.sh" <<EOF
#!/bin/sh
exec "$TW" --count "$work/q12.\$KW_WORKER_INDEX" "\$@"
EOF
chmod +x "$work/w12.sh"
da="--space $S/tests/data/exec/two_shapes.xml --evaluator exec:$work/w12.sh --budget 20 --seed 2 --threads 1 --quiet"
"$K" tune $da --out "$work/d1/run" >"$work/d1.out" 2>&1 || { echo "# one-process run failed"; sed 's/^/#   /' "$work/d1.out"; ok=0; }
reps12=$(sed -n 's/^H .* repeats=\([0-9]*\) .*/\1/p' "$work/d1/run/journal")
rm -f "$work"/q12.*
mpi 2 "$K" tune $da --out "$work/d2/run" >"$work/d2.out" 2>&1 || { echo "# mpirun -n 2 run failed"; sed 's/^/#   /' "$work/d2.out"; ok=0; }
# "RANK SHAPE" for each request of a re-measured block
for i in 0 1; do
    sed -n 's/.* shape=\([^ ]*\) .* rep=\([0-9]*\) .*/\2 \1/p' "$work/q12.$i" 2>/dev/null |
        awk -v r="${reps12:-0}" -v k="$i" '$1 >= r { print k, $2 }'
done | sort | uniq -c >"$work/blocks12"
sed 's/^/#   blocks by rank and shape: /' "$work/blocks12"
nshapes=$(awk '{ print $3 }' "$work/blocks12" | sort -u | wc -l)
nranks=$(awk '{ print $2 }' "$work/blocks12" | sort -u | wc -l)
[ "${reps12:-0}" -gt 0 ] && [ "$nshapes" = 2 ] || { echo "# not both shapes had a re-measured block"; ok=0; }
[ "$(wc -l <"$work/blocks12")" = "$nshapes" ] || { echo "# a shape's blocks came from two ranks"; ok=0; }
[ "$nranks" = 2 ] || { echo "# the blocks came from $nranks rank(s), not 2"; ok=0; }
same_measured "$work/d1/run" "$work/d2/run" || ok=0
if [ $ok = 1 ]; then echo "ok 12 - a measured run's designed rounds: each shape's on one rank's device, the shapes on two; files equal one process's"
else echo "not ok 12 - a measured run's designed rounds under mpirun -n 2"; fi
lap

# 13 ------------------------------------------------------------- SIGTERM to one rank
ok=1
args="--space $S/spaces/validate_small.xml --budget 3000 --strategy random --no-estimate --seed 5 --threads 1 --quiet"
mkdir -p "$work/t13ref" "$work/t13"
"$K" tune $args --out "$work/t13ref/run" >/dev/null 2>&1 || { echo "# reference run failed"; ok=0; }
mpi 3 "$K" tune $args --out "$work/t13/run" >"$work/t13.out" 2>&1 &
mp=$!
rank_once_journaled 1 300 "$work/t13/run" "$args" 400
if [ -n "$victim" ]; then
    kill -TERM "$victim"
    wait "$mp"
    st=$?
    echo "# SIGTERM to rank 1 (pid $victim) after $lines journal lines; mpirun exit $st"
    sed -n 's/^/# rank 0: /p' "$work/t13.out" | grep 'knobwise tune: ' | head -3
    # rank 0 says what paused it: no signal reached it (main said "interrupted (SIGINT)")
    grep -q 'knobwise tune: paused: rank 1 stopped (SIGTERM); ' "$work/t13.out" ||
        { echo "# rank 0 did not say that rank 1 stopped on SIGTERM"; ok=0; }
    if grep -q 'interrupted (SIG' "$work/t13.out"; then
        echo "# rank 0 said it was interrupted by a signal it never got"; ok=0
    fi
    if grep -q '^Z ' "$work/t13/run/journal"; then
        echo "# the search finished before the signal: the test proves nothing"; ok=0
    elif [ -s "$work/t13/run/evidence" ]; then
        echo "# RUN/evidence made of a search that did not finish"; ok=0
    fi
    "$K" tune --resume "$work/t13/run" --quiet >"$work/t13r.out" 2>&1 || { echo "# resume failed"; sed 's/^/#   /' "$work/t13r.out"; ok=0; }
    same_dirs "$work/t13ref/run" "$work/t13/run" || ok=0
else
    echo "# could not find rank 1 while the run was going"
    wait "$mp"
    ok=0
fi
if [ $ok = 1 ]; then echo "ok 13 - SIGTERM to one rank: no evidence of an unfinished search; the resumed run's files equal an uninterrupted run's"
else echo "not ok 13 - SIGTERM to one rank mid-search"; fi
lap
