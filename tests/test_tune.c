/* test_tune.c - `knobwise tune` end to end on the built binary: usage errors,
 * SIGINT/SIGTERM/SIGHUP pause with results and a resume hint (exit 130/143/129), a
 * SIGTERM while the results are written, the time limit (the evidence phase included), the periodic best-so-far rewrite, plain lines (and a periodic progress line) instead of the
 * progress line when stderr is not a terminal, and a resume that equals the
 * uninterrupted run. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <ftw.h>
#include <stdint.h>

#include "lib/kw_tl.h"

/* each test's hang guard (KW_TL_HANG_GUARD, not Criterion's .timeout) */
static void kw_tune_guard(void) { KW_TL_HANG_GUARD(300); }
TestSuite(tune, .init = kw_tune_guard);

static const char *bin(void)
{
    const char *b = getenv("KW_BIN");
    return b ? b : "./knobwise";
}

static const char *space(void)
{
    static char p[4096];
    const char *s = getenv("KW_SRCDIR");
    snprintf(p, sizeof p, "%s/spaces/validate_small.xml", s ? s : ".");
    return p;
}

static int rm1(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static char *tmpdir(void)
{
    char *d = strdup("/tmp/kwtune.XXXXXX");
    cr_assert(d && mkdtemp(d));
    return d;
}

static void rmrf(char *d)
{
    nftw(d, rm1, 16, FTW_DEPTH | FTW_PHYS);
    free(d);
}

static char *slurp(const char *dir, const char *name, long *len)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
    fclose(f);
    if (len)
        *len = (long)got;
    return b;
}

static long lines_of(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    long n = 0;
    int c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* The last line of the journal (without its checksum). */
static void last_record(const char *run, char *out, size_t n)
{
    long len;
    char *b = slurp(run, "journal", &len);
    cr_assert_not_null(b);
    long end = len - 1, start = end;
    while (start > 0 && b[start - 1] != '\n')
        start--;
    snprintf(out, n, "%.*s", (int)(end - start), b + start);
    free(b);
}

Test(tune, usage_errors_exit_2_and_write_nothing)
{
    char *d = tmpdir();
    kw_tl_opts o = {.timeout_s = 60, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--resume", "run", "--seed", "3", NULL);
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strstr(r.err, "--resume takes only"), "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--strategy", "random", "--out", "x", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "needs --budget"), "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--shape", "nope", "--out", "x", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "unknown shape 'nope'") && strstr(r.err, "attn_decode_kv2048_b32_c16"),
              "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "tune", "--metric", "p50", NULL);
    cr_assert_eq(r.status, 2);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "tune", "--resume", "nothing_here", NULL);
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strstr(r.err, "not a run folder"), "%s", r.err);
    kw_tl_free(&r);
    char x[4200];
    snprintf(x, sizeof x, "%s/x", d);
    cr_assert(access(x, F_OK) != 0, "a refused run created its folder");
    rmrf(d);
}

/* A log (stderr not a terminal) gets a progress line every
 * KNOBWISE_PROGRESS_EVERY seconds while shapes run: shapes run in
 * interleaved rounds and finish together, so main's binary wrote nothing
 * before the first shape's line (default job at --budget 1500: 45 s of an
 * empty log). With the interval at a nanosecond every round writes one, so
 * the first comes before any shape is done; its content is the terminal
 * line's (evaluations against the budget, best against the baseline) and
 * the elapsed time; never in a result file; 0 turns it off. */
Test(tune, a_log_gets_a_periodic_progress_line)
{
    char *d = tmpdir();
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    setenv("KNOBWISE_PROGRESS_EVERY", "1e-9", 1);
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--budget", "30", "--seed", "3",
                             "--threads", "1", "--out", "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *first = strstr(r.err, "knobwise tune: progress: shapes 0/2 done  evals ");
    const char *done = strstr(r.err, " done: p95 ");
    cr_assert(first && done && first < done, "%s", r.err);
    cr_assert(strstr(first, "attn_prefill_s2048_b1_c2 ") && strstr(first, "/30 evals p95 ") &&
              strstr(first, " | elapsed "), "%s", r.err);
    kw_tl_free(&r);
    const char *files[] = {"journal", "results.xml", "ranked.csv", "audit.csv", "portability.csv"};
    char run[4200];
    snprintf(run, sizeof run, "%s/run", d);
    for (int i = 0; i < 5; i++) {
        char *x = slurp(run, files[i], NULL);
        cr_assert(x && !strstr(x, "progress:") && !strstr(x, "elapsed"), "%s", files[i]);
        free(x);
    }
    setenv("KNOBWISE_PROGRESS_EVERY", "0", 1);
    r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--budget", "30", "--seed", "3",
                  "--threads", "1", "--out", "run0", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_null(strstr(r.err, "progress:"), "%s", r.err);
    kw_tl_free(&r);
    setenv("KNOBWISE_PROGRESS_EVERY", "0x10", 1);
    r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--budget", "3", "--out", "run1", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "warning: KNOBWISE_PROGRESS_EVERY=0x10 is not a number of seconds"),
              "%s", r.err);
    kw_tl_free(&r);
    rmrf(d);
}

Test(tune, runs_quietly_on_a_pipe_and_refuses_to_overwrite_a_run)
{
    char *d = tmpdir();
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--budget", "20", "--seed", "3",
                         "--metric", "p99", "--out", "run", "--owner", "ops team", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* stderr is not a terminal: no redrawn progress line, one plain line per shape */
    cr_assert_null(strchr(r.err, '\r'), "%s", r.err);
    cr_assert(strstr(r.err, "knobwise tune: shape attn_prefill_s2048_b1_c2 done: p99 "), "%s", r.err);
    cr_assert(strstr(r.out, "attn_prefill_s2048_b1_c2") && strstr(r.out, "p99"), "%s", r.out);
    kw_tl_free(&r);
    char run[4200];
    snprintf(run, sizeof run, "%s/run", d);
    char *j = slurp(run, "journal", NULL);
    cr_assert(strstr(j, " metric=p99_us ") && strstr(j, "A key=owner value=ops%20team "), "%.300s", j);
    free(j);
    char *x = slurp(run, "results.xml", NULL);
    cr_assert_not_null(x);
    free(x);
    r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--budget", "20", "--out", "run", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "already holds a run"), "%s", r.err);
    kw_tl_free(&r);
    /* resuming a finished run changes nothing and succeeds */
    long l1, l2;
    char *before = slurp(run, "journal", &l1);
    r = kw_tl_run(&o, bin(), "tune", "--resume", "run", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    char *after = slurp(run, "journal", &l2);
    cr_assert(l1 == l2 && memcmp(before, after, (size_t)l1) == 0);
    free(before);
    free(after);
    rmrf(d);
}

/* Stop the run; 0 if it had ended instead (then reaped). */
static int stop_run(pid_t pid)
{
    int st;
    kill(pid, SIGSTOP);
    return waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st);
}

/* Wait (at most bound_s) for a run kw_tl_spawn started with stdout ofd and
 * stderr efd; its exit status, its stderr in *err (when err is not NULL),
 * whether the bound passed in *timed_out (when not NULL); both closed. */
static int run_ended(pid_t pid, int ofd, int efd, double bound_s, char **err, int *timed_out)
{
    int to = 0;
    long rss;
    int status = kw_tl_wait(pid, kw_tl_now() + bound_s, &to, &rss);
    if (err)
        *err = kw_tl_slurp_fd(efd);
    close(efd);
    close(ofd);
    if (timed_out)
        *timed_out = to;
    return status;
}

/* Start an exhaustive run, signal it once its journal holds `records`
 * records, return its exit status and stderr. The run goes on only in short
 * slices (SIGCONT, 2 ms, SIGSTOP) between two looks at its journal, and the
 * signal is sent while it is stopped: however late this process is scheduled
 * under load, the run cannot finish between the look and the signal (it
 * did, twice, under a loaded `make check`, when the run went on freely). */
static int signal_run(const char *cwd, int sig, long records, const char *every, char **err)
{
    char run[4200];
    snprintf(run, sizeof run, "%s/run/journal", cwd);
    kw_tl_opts o = {.timeout_s = 120, .cwd = cwd};
    int efd = kw_tl_tmpfile(), ofd = kw_tl_tmpfile();
    const char *argv[] = {bin(), "tune", "--space", space(), "--strategy", "exhaustive",
                          "--seed", "5", "--threads", "1", "--out", "run", "--results-every",
                          every, NULL};
    pid_t pid = kw_tl_spawn(argv, &o, ofd, efd);
    cr_assert_gt(pid, 0);
    double deadline = kw_tl_now() + 100;
    cr_assert(stop_run(pid), "the run ended before it could be signalled");
    while (lines_of(run) < records && kw_tl_now() < deadline) {
        kill(pid, SIGCONT);
        usleep(2000);
        cr_assert(stop_run(pid), "the run ended before it could be signalled");
    }
    kill(pid, sig); /* pending until it goes on (SIGKILL ends it stopped) */
    kill(pid, SIGCONT);
    return run_ended(pid, ofd, efd, 100, err, NULL);
}

Test(tune, sigint_sigterm_and_sighup_pause_write_results_and_resume_identically)
{
    char *ref = tmpdir();
    kw_tl_opts o = {.timeout_s = 200, .cwd = ref};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--strategy", "exhaustive",
                         "--seed", "5", "--threads", "2", "--out", "run", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    char refrun[4200];
    snprintf(refrun, sizeof refrun, "%s/run", ref);
    long ref_len;
    char *ref_j = slurp(refrun, "journal", &ref_len);
    char *ref_x = slurp(refrun, "results.xml", NULL);

    /* SIGHUP too (an ssh session dropped under an interactive run): main's
     * binary died of it, no pause record, no word on how to resume */
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    const char *names[] = {"(SIGINT)", "(SIGTERM)", "(SIGHUP)"};
    for (int i = 0; i < 3; i++) {
        char *d = tmpdir(), *err = NULL;
        /* the run must not inherit an ignore from whoever started the tests
         * (a test run under nohup ignores SIGHUP, a shell's background job
         * SIGINT): tune keeps an inherited ignore, as the next test checks */
        signal(sigs[i], SIG_DFL);
        int st = signal_run(d, sigs[i], 400, "300", &err);
        cr_assert_eq(st, 128 + sigs[i], "exit %d: %s", st, err);
        cr_assert(strstr(err, names[i]) && strstr(err, "resume with: knobwise tune --resume run"),
                  "%s", err);
        free(err);
        char run[4200], last[256];
        snprintf(run, sizeof run, "%s/run", d);
        last_record(run, last, sizeof last);
        cr_assert(strncmp(last, "Q why=interrupted", 17) == 0, "%s", last);
        char *x = slurp(run, "results.xml", NULL);
        cr_assert_not_null(x, "no results so far after the signal");
        free(x);
        kw_tl_opts o2 = {.timeout_s = 200, .cwd = d};
        r = kw_tl_run(&o2, bin(), "tune", "--resume", "run", "--threads", "2", "--quiet", NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        kw_tl_free(&r);
        long len;
        char *j = slurp(run, "journal", &len);
        cr_assert(len == ref_len && memcmp(j, ref_j, (size_t)len) == 0,
                  "the resumed journal differs from the uninterrupted one");
        x = slurp(run, "results.xml", NULL);
        cr_assert_str_eq(x, ref_x);
        free(x);
        free(j);
        rmrf(d);
    }
    free(ref_j);
    free(ref_x);
    rmrf(ref);
}

/* The signal bit of sig in field ("SigCgt:", "ShdPnd:", "SigPnd:") of
 * /proc/PID/status. */
static int proc_sig_bit(pid_t pid, const char *field, int sig)
{
    char p[64], line[256];
    snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f);
    unsigned long long mask = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, strlen(field)) == 0)
            mask = strtoull(line + strlen(field), NULL, 16);
    fclose(f);
    return (int)((mask >> (sig - 1)) & 1);
}

/* A terminal that closes sends SIGHUP twice (the kernel to the foreground
 * process group, then the interactive shell to its jobs): the second must
 * not kill the pause the first began. The run is stopped, sent one SIGHUP,
 * let go only until that one is delivered, stopped again: it must still
 * catch SIGHUP; then the second, and the run ends as after one: exit 129, a
 * pause record, every result file. main's handler was one-shot
 * (SA_RESETHAND): SIGHUP no longer caught, and by hand (two SIGHUPs 10 ms
 * apart, search_slow.xml) the second killed it after results.xml, before
 * ranked.csv, audit.csv and portability.csv. */
Test(tune, a_second_sighup_does_not_kill_the_pause)
{
    char *d = tmpdir(), run[4200], last[256];
    snprintf(run, sizeof run, "%s/run/journal", d);
    signal(SIGHUP, SIG_DFL); /* not inherited as ignored (CI may run under nohup) */
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    int efd = kw_tl_tmpfile(), ofd = kw_tl_tmpfile();
    const char *argv[] = {bin(), "tune", "--space", space(), "--strategy", "exhaustive",
                          "--seed", "5", "--threads", "1", "--out", "run", NULL};
    pid_t pid = kw_tl_spawn(argv, &o, ofd, efd);
    cr_assert_gt(pid, 0);
    double deadline = kw_tl_now() + 100;
    cr_assert(stop_run(pid), "the run ended before it could be signalled");
    while (lines_of(run) < 400 && kw_tl_now() < deadline) {
        kill(pid, SIGCONT);
        usleep(2000);
        cr_assert(stop_run(pid), "the run ended before it could be signalled");
    }
    kill(pid, SIGHUP);
    while (proc_sig_bit(pid, "ShdPnd:", SIGHUP) || proc_sig_bit(pid, "SigPnd:", SIGHUP)) {
        cr_assert(kw_tl_now() < deadline, "the SIGHUP was never delivered");
        kill(pid, SIGCONT);
        cr_assert(stop_run(pid), "the run ended before the second SIGHUP");
    }
    int caught = proc_sig_bit(pid, "SigCgt:", SIGHUP);
    kill(pid, caught ? SIGHUP : SIGKILL); /* never a stopped run left behind */
    kill(pid, SIGCONT);
    char *err;
    int status = run_ended(pid, ofd, efd, 100, &err, NULL);
    cr_assert(caught, "after one SIGHUP the run no longer catches SIGHUP: a second kills its pause");
    cr_assert_eq(status, 128 + SIGHUP, "exit %d: %s", status, err);
    cr_assert(strstr(err, "interrupted (SIGHUP)"), "%s", err);
    free(err);
    snprintf(run, sizeof run, "%s/run", d);
    last_record(run, last, sizeof last);
    cr_assert(strncmp(last, "Q why=interrupted", 17) == 0, "%s", last);
    const char *const files[] = {"results.xml", "ranked.csv", "audit.csv", "portability.csv"};
    for (int i = 0; i < 4; i++) {
        char *x = slurp(run, files[i], NULL);
        cr_assert_not_null(x, "no %s after the pause", files[i]);
        free(x);
    }
    rmrf(d);
}

/* A SIGINT inherited as ignored stays ignored (the POSIX convention for a
 * background job a script starts): tune installed its handler anyway, so a
 * Ctrl-C meant for the script paused the run (exit 130). Now the run goes on
 * to the end: exit 0, the journal closed as complete (Z why=complete). So
 * does a SIGHUP under nohup, now that tune catches SIGHUP. */
Test(tune, sigint_and_sighup_inherited_as_ignored_stay_ignored)
{
    int sigs[] = {SIGINT, SIGHUP};
    for (int i = 0; i < 2; i++) {
        char *d = tmpdir(), *err = NULL;
        signal(sigs[i], SIG_IGN); /* this test's own process: kept across fork and exec */
        int st = signal_run(d, sigs[i], 400, "300", &err);
        cr_assert_eq(st, 0, "exit %d: %s", st, err);
        free(err);
        char run[4200], last[256];
        snprintf(run, sizeof run, "%s/run", d);
        last_record(run, last, sizeof last);
        cr_assert(strncmp(last, "Z why=complete", 14) == 0, "%s", last);
        rmrf(d);
    }
}

/* A SIGTERM while a finished search's results are being written: the final
 * re-checks of tests/data/signal/final_slow.xml (a million requests an
 * evaluation) take seconds, the signal is sent once the journal holds its end
 * record. The re-checks are given up, the files say what the journal proves
 * (verify agrees, no <recheck>), and tune exits 143 saying how to resume;
 * a handler already gone would let the signal kill the writer instead. */
Test(tune, sigterm_while_the_results_are_written_keeps_them)
{
    char *d = tmpdir(), sp[4096], run[4200], journal[4300];
    snprintf(sp, sizeof sp, "%s/tests/data/signal/final_slow.xml", kw_tl_src());
    snprintf(run, sizeof run, "%s/run", d);
    snprintf(journal, sizeof journal, "%s/journal", run);
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    int efd = kw_tl_tmpfile(), ofd = kw_tl_tmpfile();
    const char *argv[] = {bin(), "tune", "--space", sp, "--budget", "30", "--seed", "5",
                          "--threads", "1", "--out", "run", NULL};
    pid_t pid = kw_tl_spawn(argv, &o, ofd, efd);
    cr_assert_gt(pid, 0);
    double deadline = kw_tl_now() + 100;
    char last[256] = "";
    while (kw_tl_now() < deadline) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            cr_assert_fail("the run ended before it could be signalled");
        if (kw_tl_exists(journal)) {
            last_record(run, last, sizeof last);
            if (strncmp(last, "Z why=", 6) == 0)
                break;
        }
        usleep(2000);
    }
    cr_assert(strncmp(last, "Z why=", 6) == 0, "the search did not end: %s", last);
    kill(pid, SIGTERM);
    char *err;
    int status = run_ended(pid, ofd, efd, 100, &err, NULL);
    cr_assert_eq(status, 143, "exit %d: %s", status, err);
    cr_assert(strstr(err, "interrupted (SIGTERM)") && strstr(err, "--resume run"), "%s", err);
    free(err);
    char *x = slurp(run, "results.xml", NULL);
    cr_assert_not_null(x, "the signal lost the results");
    cr_assert_null(strstr(x, "<recheck"), "a re-check was evaluated after the signal");
    free(x);
    kw_tl_proc r = kw_tl_run(&o, bin(), "verify", "run", NULL);
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_assert(strstr(r.out, "ok   results follow from the journal: 3 result files agree"), "%s",
              r.out);
    kw_tl_free(&r);
    rmrf(d);
}

/* With --time-limit, the phase after the search (the final re-check and the
 * portability matrix) is announced on stderr: main's binary said nothing
 * before 1bea20a, its progress line left at "ETA ~0s" for as long as that
 * phase takes (final_requests 3,000,000: 58 s past --time-limit 3). Not said
 * with --quiet, nor without a time limit. */
/* Each of files in run is byte for byte the same file in refrun (an
 * uninterrupted run), results.xml (files[0]) with its re-checks. */
/* `tune --resume run --quiet --threads T` in o->cwd must exit 0 and leave
 * run_dir/evidence byte for byte ev (what: the case, for the message). */
static void resume_keeps_evidence(const kw_tl_opts *o, const char *threads, const char *run_dir,
                                  const char *ev, long ev_len, const char *what)
{
    kw_tl_proc r = kw_tl_run(o, bin(), "tune", "--resume", "run", "--quiet", "--threads", threads,
                             NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    long b_len = -1;
    char *b = slurp(run_dir, "evidence", &b_len);
    cr_assert(b && b_len == ev_len && memcmp(b, ev, (size_t)ev_len) == 0,
              "RUN/evidence %s: %ld bytes, not the uninterrupted run's %ld", what, b_len, ev_len);
    free(b);
}

static void same_as_uninterrupted(const char *refrun, const char *run, const char *const *files,
                                  int n)
{
    for (int i = 0; i < n; i++) {
        long a_len = -1, b_len = -2;
        char *a = slurp(refrun, files[i], &a_len), *b = slurp(run, files[i], &b_len);
        cr_assert(a && b && a_len == b_len && memcmp(a, b, (size_t)a_len) == 0,
                  "%s: the resumed run's differs from the uninterrupted run's", files[i]);
        if (i == 0)
            cr_assert_not_null(strstr(b, "<recheck"), "the resume did not add the re-checks");
        free(a);
        free(b);
    }
}

Test(tune, the_evidence_after_a_time_limited_search_is_announced)
{
    char *d = tmpdir();
    kw_tl_opts o = {.timeout_s = 200, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--budget", "3",
                             "--time-limit", "600", "--out", "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "knobwise tune: search done; now the evidence: each shape's "
                            "recommendation re-checked at the space's final sample, and the "
                            "portability matrix (within --time-limit"), "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--budget", "3", "--out", "run2", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_null(strstr(r.err, "now the evidence"), "%s", r.err);
    kw_tl_free(&r);
    rmrf(d);
}

/* A run the time limit stops before a shape's first evaluation: the summary says the
 * shape was not evaluated, not "p95 nan -> nan us (fails guards)" (what it printed
 * before: no figure, and no guard had failed). */
Test(tune, a_shape_stopped_before_its_first_evaluation_is_said_not_evaluated)
{
    char *d = tmpdir();
    kw_tl_opts o = {.timeout_s = 200, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--budget", "3",
                             "--time-limit", "0.000001", "--out", "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "no evaluation finished within the time limit"), "%s", r.err);
    cr_assert(strstr(r.out, "not evaluated yet: the run stopped before this shape's first "
                            "evaluation"),
              "%s", r.out);
    cr_assert_null(strstr(r.out, "nan"), "%s", r.out);
    cr_assert_null(strstr(r.out, "fails guards"), "%s", r.out);
    kw_tl_free(&r);
    rmrf(d);
}

/* Lines of DIR/journal: the records kept (a run's journal is one record a line). */
static long journal_lines(const char *dir, char *last, size_t n_last)
{
    long len = -1, lines = 0;
    char *b = slurp(dir, "journal", &len);
    cr_assert_not_null(b, "%s/journal", dir);
    const char *from = b;
    for (long i = 0; i < len; i++)
        if (b[i] == '\n') {
            lines++;
            if (i + 1 < len)
                from = b + i + 1;
        }
    snprintf(last, n_last, "%.*s", (int)strcspn(from, "\n"), from);
    free(b);
    return lines;
}

/* The limit and progress (kw_pause, search/kw_engine.c): a --time-limit
 * shorter than one round drops every round it cuts, so before 2026-12-07 each
 * `tune --resume RUN --time-limit S` under the same limit paused with nothing
 * kept, for ever (an unattended job resuming it nightly never finished: main
 * 093310e kept no record on any resume). A pause records idle=K, the tunes in
 * a row that kept nothing; the resume after one with idle >= 1 makes its first
 * round whole, the next keeps the limit to the second again, and the run
 * still ends, its files those of an uninterrupted run. */
Test(tune, a_time_limit_shorter_than_a_round_still_lets_each_second_resume_progress, .timeout = 400)
{
    char *d = tmpdir();
    kw_tl_opts o = {.timeout_s = 200, .cwd = d};
    char run[4200], ref[4200], last[512];
    snprintf(run, sizeof run, "%s/run", d);
    snprintf(ref, sizeof ref, "%s/ref", d);
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--budget", "3", "--quiet",
                             "--time-limit", "0.000001", "--out", "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "no evaluation finished within the time limit"), "%s", r.err);
    kw_tl_free(&r);
    long n0 = journal_lines(run, last, sizeof last);
    cr_assert(strncmp(last, "Q why=time_limit idle=1 ", 24) == 0, "last record: %s", last);
    /* the resume after a pause that kept nothing keeps a round */
    r = kw_tl_run(&o, bin(), "tune", "--resume", "run", "--quiet", "--time-limit", "0.000001",
                  NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    long n1 = journal_lines(run, last, sizeof last);
    cr_assert_gt(n1, n0 + 1, "the resume kept no round (%ld records, %ld before it)", n1, n0);
    cr_assert(strncmp(last, "Q why=time_limit idle=0 ", 24) == 0, "last record: %s", last);
    /* the next one keeps the limit: nothing kept, idle=1 again */
    r = kw_tl_run(&o, bin(), "tune", "--resume", "run", "--quiet", "--time-limit", "0.000001",
                  NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    cr_assert_eq(journal_lines(run, last, sizeof last), n1, "a strict resume kept a record");
    cr_assert(strncmp(last, "Q why=time_limit idle=1 ", 24) == 0, "last record: %s", last);
    /* and the run ends (47 tunes on 093310e's search + evidence, 2026-12-07) */
    int done = 0;
    for (int i = 0; i < 200 && !done; i++) {
        r = kw_tl_run(&o, bin(), "tune", "--resume", "run", "--quiet", "--time-limit",
                      "0.000001", NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        done = !strstr(r.err, "continue with");
        kw_tl_free(&r);
    }
    cr_assert(done, "200 resumes under the limit did not end the run");
    cr_assert_eq(mkdir(ref, 0755), 0);
    kw_tl_opts ro = {.timeout_s = 200, .cwd = ref}; /* the same folder name: results.xml names it */
    r = kw_tl_run(&ro, bin(), "tune", "--space", space(), "--budget", "3", "--quiet", "--out",
                  "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    strcat(ref, "/run");
    const char *files[] = {"results.xml", "journal", "evidence", "ranked.csv", "audit.csv"};
    same_as_uninterrupted(ref, run, files, 5);
    rmrf(d);
}

/* The resume command tune prints is pasted into a shell: the run folder is
 * one shell word (kw_sbuf_shell) whatever its name holds. The code before
 * printed "knobwise tune --resume my run;x", which a shell runs as a resume
 * of "my" and a command "x". The printed command, pasted, resumes the run. */
Test(tune, the_resume_command_it_prints_is_one_shell_word_for_the_folder)
{
    char *d = tmpdir();
    kw_tl_opts o = {.timeout_s = 200, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--budget", "3",
                             "--time-limit", "0.000001", "--out", "my run;x", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *c = strstr(r.err, "continue with: knobwise tune --resume 'my run;x'\n");
    cr_assert_not_null(c, "%s", r.err);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %.*s --time-limit 0.000001", bin(),
             (int)strcspn(c + strlen("continue with: knobwise "), "\n"),
             c + strlen("continue with: knobwise "));
    kw_tl_free(&r);
    r = kw_tl_run(&o, "/bin/sh", "-c", cmd, NULL);
    cr_assert_eq(r.status, 0, "%s: %s", cmd, r.err);
    cr_assert(strstr(r.err, "continue with: knobwise tune --resume 'my run;x'"), "%s", r.err);
    kw_tl_free(&r);
    /* recommend's warning about the stopped run gives the same command (main:
     * "`knobwise tune --resume my run;x` finishes it") */
    r = kw_tl_run(&o, bin(), "recommend", "my run;x", "--all", "-o", "-", NULL);
    cr_assert(strstr(r.err, "`knobwise tune --resume 'my run;x'` finishes it"), "%s", r.err);
    kw_tl_free(&r);
    rmrf(d);
}

/* --time-limit bounds the whole run (DESIGN.md), the evidence phase after
 * the search included. tests/data/signal/final_huge.xml re-checks each
 * recommendation at 45 million requests (the whole evidence phase would take
 * three minutes or more; main's binary ran it to its end under --time-limit
 * 2: killed at this test's 60 s bound). Cut by the limit, it stops as a stop
 * does: exit 0, the time limit said with the resume, the files say what the
 * journal proves (no <recheck>, and verify agrees). */
Test(tune, the_time_limit_cuts_the_evidence_phase)
{
    char *d = tmpdir(), sp[4096], run[4200];
    snprintf(sp, sizeof sp, "%s/tests/data/signal/final_huge.xml", kw_tl_src());
    snprintf(run, sizeof run, "%s/run", d);
    kw_tl_opts o = {.timeout_s = 60, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", sp, "--budget", "30", "--seed", "5",
                             "--time-limit", "2", "--out", "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "knobwise tune: time limit reached") &&
              strstr(r.err, "without the evidence") &&
              strstr(r.err, "continue with: knobwise tune --resume run"), "%s", r.err);
    /* the summary's figures are the search's, and it says so (no re-check to lead with) */
    cr_assert(strstr(r.out, "(p95 at the search's sample (") &&
                  strstr(r.out, " requests): no re-check at the final sample in results.xml)\n"),
              "%s", r.out);
    kw_tl_free(&r);
    char *x = slurp(run, "results.xml", NULL);
    cr_assert_not_null(x, "no results after the time limit");
    cr_assert_null(strstr(x, "<recheck"), "a re-check was evaluated past the time limit");
    free(x);
    r = kw_tl_run(&o, bin(), "verify", "run", NULL);
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_assert(strstr(r.out, "no evidence (a stopped run)"), "%s", r.out);
    kw_tl_free(&r);
    rmrf(d);
}

/* ... and a resume completes it: tests/data/signal/final_slow.xml (one
 * shape: about 2 s on one core, mostly its re-checks) under --time-limit 0.5 ends
 * without the evidence (main's binary wrote the re-checks past the limit),
 * and `tune --resume` without a limit writes result files byte for byte an
 * uninterrupted run's, re-checks included. */
Test(tune, a_resume_completes_the_evidence_the_time_limit_cut)
{
    char *ref = tmpdir(), *d = tmpdir(), sp[4096], refrun[4200], run[4200];
    const char *shape = "attn_prefill_s2048_b1_c2"; /* one shape: half the evidence's time */
    snprintf(sp, sizeof sp, "%s/tests/data/signal/final_slow.xml", kw_tl_src());
    snprintf(refrun, sizeof refrun, "%s/run", ref);
    snprintf(run, sizeof run, "%s/run", d);
    kw_tl_opts o = {.timeout_s = 200, .cwd = ref};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", sp, "--shape", shape, "--budget", "30",
                             "--seed", "5", "--threads", "1", "--out", "run", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    o.cwd = d;
    r = kw_tl_run(&o, bin(), "tune", "--space", sp, "--shape", shape, "--budget", "30", "--seed",
                  "5", "--threads", "1", "--time-limit", "0.5", "--out", "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "time limit reached") && strstr(r.err, "without the evidence"),
              "%s", r.err);
    kw_tl_free(&r);
    char *x = slurp(run, "results.xml", NULL);
    cr_assert_not_null(x);
    cr_assert_null(strstr(x, "<recheck"), "a re-check was evaluated past the time limit");
    free(x);
    r = kw_tl_run(&o, bin(), "tune", "--resume", "run", "--threads", "2", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    const char *const files[] = {"results.xml", "ranked.csv", "audit.csv", "portability.csv"};
    same_as_uninterrupted(refrun, run, files, 4);
    rmrf(ref);
    rmrf(d);
}

/* The value of attribute name in the first start tag of element el at or
 * after from and before end, into out ("" when absent). */
static void attr_after(char *out, size_t n, const char *from, const char *end, const char *el,
                       const char *name)
{
    out[0] = '\0';
    char tag[64], at[64];
    snprintf(tag, sizeof tag, "<%s ", el);
    snprintf(at, sizeof at, " %s=\"", name);
    const char *t = strstr(from, tag);
    if (!t || t >= end)
        return;
    const char *close = strchr(t, '>');
    const char *a = strstr(t, at);
    if (!a || !close || a > close)
        return;
    a += strlen(at);
    snprintf(out, n, "%.*s", (int)(strchr(a, '"') - a), a);
}

/* tune's summary leads each shape with its claim at the final re-check, as
 * results.xml states it (baseline and recommendation at final_requests, the
 * change), says so under it with the search's own figures, and names the
 * recommend command when the re-check left the ranking unresolved. main
 * printed the search's figures only: on the default job's bursty decode
 * shape -46.3% where the re-check says -31.5%, with nothing to say the
 * ranking was not resolved; stop 42 put the re-check second. */
Test(tune, the_summary_gives_each_shapes_recheck_as_results_xml_states_it)
{
    char *d = tmpdir(), sp[4096];
    snprintf(sp, sizeof sp, "%s/spaces/validate_small.xml", kw_tl_src());
    kw_tl_opts o = {.timeout_s = 200, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", sp, "--budget", "30", "--out", "run",
                             NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *xml = slurp(d, "run/results.xml", NULL);
    cr_assert_not_null(xml);
    int shapes = 0, unresolved = 0, named = 0;
    for (const char *sh = strstr(xml, "<shape "); sh; sh = strstr(sh + 1, "<shape ")) {
        const char *end = strstr(sh + 1, "<shape ");
        if (!end)
            end = sh + strlen(sh);
        char name[128], samples[32], b95[32], r95[32], rk[32];
        attr_after(name, sizeof name, sh, end, "shape", "name");
        attr_after(rk, sizeof rk, sh, end, "shape", "ranking");
        char note[2048];
        attr_after(note, sizeof note, sh, end, "shape", "ranking_note");
        const char *base = strstr(sh, "<baseline "), *rec = strstr(sh, "recommended=\"true\"");
        cr_assert(base && rec && base < end && rec < end, "shape %s", name);
        attr_after(b95, sizeof b95, base, end, "recheck", "p95_us");
        attr_after(samples, sizeof samples, rec, end, "recheck", "samples");
        attr_after(r95, sizeof r95, rec, end, "recheck", "p95_us");
        cr_assert(samples[0] && b95[0] && r95[0], "shape %s has no re-check", name);
        double b = strtod(b95, NULL), v = strtod(r95, NULL);
        /* the shape's own line: the re-check's figures */
        char head[256], figs[256];
        snprintf(head, sizeof head, "  %-32s p95 %10.1f -> %10.1f us (%+6.1f%%)", name, b, v,
                 (v - b) / b * 100.0);
        const char *line = strstr(r.out, head);
        cr_assert_not_null(line, "no '%s' in:\n%s", head, r.out);
        /* under it, their source and the search's */
        char want[1024];
        snprintf(want, sizeof want, "(p95 at the re-check (%s requests); on the search's sample (",
                 samples);
        const char *nl = strchr(line, '\n');
        cr_assert(nl && strncmp(nl + 1 + strspn(nl + 1, " "), want, strlen(want)) == 0,
                  "no '%s' under shape %s's line: %s", want, name, r.out);
        const char *eol = strchr(nl + 1, '\n');
        /* the note's lead: rank 1 ahead with only its gain imprecise, or not ranked */
        int ahead = strncmp(note, "rank 1 ahead, its gain not resolved: ", 37) == 0;
        cr_assert(!rk[0] || ahead || strncmp(note, "not resolved: ", 14) == 0, "%s", note);
        /* the changes that do not earn their place, as recommend counts them */
        kw_tl_proc q = kw_tl_run(&o, bin(), "recommend", "run", "--shape", name, NULL);
        cr_assert_eq(q.status, 0, "%s", q.err);
        int n_ue = 0, n_ch = 0;
        const char *am = strstr(q.out, "  already met for ");
        if (am)
            cr_assert_eq(sscanf(am, "  already met for %d of its %d changes", &n_ue, &n_ch), 2);
        kw_tl_free(&q);
        char ue[128] = "";
        if (n_ue > 0)
            snprintf(ue, sizeof ue, "; %d of the %d changes do not earn their place%s", n_ue, n_ch,
                     rk[0] ? "" : ": ");
        snprintf(figs, sizeof figs, "%s%s%s%s", ue, rk[0] ? ahead ? "; rank 1 ahead, its gain "
                 "not resolved: " : "; ranking not resolved: " : n_ue ? "" : ")",
                 rk[0] || n_ue ? "knobwise recommend run --shape " : "", rk[0] || n_ue ? name : "");
        named += n_ue > 0;
        cr_assert(eol && (size_t)(eol - nl) > strlen(figs) &&
                      strncmp(eol - strlen(figs), figs, strlen(figs)) == 0,
                  "shape %s: the line under it does not end '%s': %s", name, figs, r.out);
        shapes++;
        unresolved += rk[0] != 0;
    }
    cr_assert_gt(shapes, 0);
    cr_assert_gt(named, 0, "validate_small names no change that does not earn its place");
    cr_log_info("%d shapes, %d unresolved", shapes, unresolved);
    free(xml);
    kw_tl_free(&r);
    rmrf(d);
}

/* A resume of a run that was never cut (its evidence finished: RUN/evidence
 * ends with its end record) reads the evidence back and says where it came
 * from without claiming a cut: main's binary said "(made before the cut)"
 * for a run nothing had cut. */
Test(tune, a_resume_of_a_finished_run_does_not_speak_of_a_cut)
{
    char *d = tmpdir(), sp[4096];
    snprintf(sp, sizeof sp, "%s/spaces/validate_small.xml", kw_tl_src());
    kw_tl_opts o = {.timeout_s = 200, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", sp, "--budget", "30", "--out", "run",
                             "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "tune", "--resume", "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *l = strstr(r.err, "knobwise tune: evidence: ");
    cr_assert(l && strstr(l, " evaluations read back from run/evidence (kept by an earlier tune "
                             "of this run, not evaluated again)\n"), "%s", r.err);
    cr_assert_null(strstr(r.err, "cut"), "%s", r.err);
    kw_tl_free(&r);
    rmrf(d);
}

/* The evidence is kept as it is evaluated (RUN/evidence), so a resume
 * continues it where a cut fell: before, every resume started the re-checks
 * over, and a resume under the same too-short --time-limit never finished.
 * Where a cut falls is timing, so the test plants the cut: the run folder of
 * a time-limited run gets the first two kept evaluations of an
 * uninterrupted run's RUN/evidence and a torn third (a kill mid-write); the
 * resume must say it read two back, cut the torn tail, and end with result
 * files and a RUN/evidence byte for byte the uninterrupted run's (at another
 * thread count). A log also sees the evidence's progress
 * (KNOBWISE_PROGRESS_EVERY). main's binary keeps no RUN/evidence, says
 * nothing of the evidence's progress and reads nothing back. */
Test(tune, a_resume_continues_the_evidence_from_its_kept_evaluations)
{
    char *ref = tmpdir(), *d = tmpdir(), sp[4096], refrun[4200], run[4200], path[4300];
    const char *shape = "attn_prefill_s2048_b1_c2";
    snprintf(sp, sizeof sp, "%s/tests/data/signal/final_slow.xml", kw_tl_src());
    snprintf(refrun, sizeof refrun, "%s/run", ref);
    snprintf(run, sizeof run, "%s/run", d);
    kw_tl_opts o = {.timeout_s = 200, .cwd = ref};
    setenv("KNOBWISE_PROGRESS_EVERY", "1e-9", 1);
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", sp, "--shape", shape, "--budget", "30",
                             "--seed", "5", "--threads", "1", "--out", "run", NULL);
    unsetenv("KNOBWISE_PROGRESS_EVERY");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "knobwise tune: evidence: re-checks 0/4 evaluations") &&
                  strstr(r.err, "knobwise tune: evidence: re-checks 4/4 evaluations"),
              "the log shows no progress of the evidence:\n%s", r.err);
    kw_tl_free(&r);
    long ev_len = -1;
    char *ev = slurp(refrun, "evidence", &ev_len);
    cr_assert_not_null(ev, "no RUN/evidence kept");
    o.cwd = d;
    r = kw_tl_run(&o, bin(), "tune", "--space", sp, "--shape", shape, "--budget", "30", "--seed",
                  "5", "--threads", "1", "--time-limit", "0.5", "--out", "run", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    /* the cut: header + two records, and half of the third */
    char *p = ev;
    for (int line = 0; line < 3; line++)
        p = strchr(p, '\n') + 1;
    const char *third_end = strchr(p, '\n');
    cr_assert_not_null(third_end);
    snprintf(path, sizeof path, "%s/evidence", run);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fwrite(ev, 1, (size_t)(p - ev) + (size_t)(third_end - p) / 2, f);
    fclose(f);
    r = kw_tl_run(&o, bin(), "tune", "--resume", "run", "--threads", "2", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "evidence: 2 evaluations read back from run/evidence"), "%s", r.err);
    kw_tl_free(&r);
    const char *const files[] = {"results.xml", "ranked.csv", "audit.csv", "portability.csv",
                                 "evidence"};
    same_as_uninterrupted(refrun, run, files, 5);
    /* a file larger than any run's evidence (sparse, 300 MiB) is not read
     * into memory: emptied, the evidence made again, the same bytes */
    cr_assert_eq(truncate(path, 300L << 20), 0);
    resume_keeps_evidence(&o, "1", run, ev, ev_len, "after a 300 MiB file");
    free(ev);
    rmrf(ref);
    rmrf(d);
}

/* An uninterrupted run of final_slow.xml's one shape in ref/run (--threads 1,
 * seed 5, budget 30), and d/run holding only its journal: a finished search
 * whose evidence is still to make (a resume's planted cut). */
static void finished_search_only(const char *ref, const char *d)
{
    char sp[4096], refrun[4200], path[4300];
    snprintf(sp, sizeof sp, "%s/tests/data/signal/final_slow.xml", kw_tl_src());
    snprintf(refrun, sizeof refrun, "%s/run", ref);
    kw_tl_opts o = {.timeout_s = 200, .cwd = ref};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", sp, "--shape",
                             "attn_prefill_s2048_b1_c2", "--budget", "30", "--seed", "5",
                             "--threads", "1", "--out", "run", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    long j_len = -1;
    char *j = slurp(refrun, "journal", &j_len);
    cr_assert_not_null(j);
    snprintf(path, sizeof path, "%s/run", d);
    cr_assert_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/run/journal", d);
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(j, 1, (size_t)j_len, f) == (size_t)j_len && fclose(f) == 0);
    free(j);
}

/* A --time-limit shorter than one evidence evaluation still ends the run
 * over resumes: each resume keeps the first evidence evaluation it makes
 * (made whole past the limit) and says so. The cut is planted: the journal
 * of an uninterrupted run (its search done) alone in a folder, resumed under
 * --time-limit 0.001 (shorter than any evaluation, and than the replay)
 * until the evidence is whole. main's binary started no evidence past the
 * limit and kept nothing: never ended (no RUN/evidence after 40 resumes).
 * The files and RUN/evidence are byte for byte the uninterrupted run's. */
Test(tune, a_time_limit_shorter_than_one_evidence_evaluation_still_ends_over_resumes)
{
    char *ref = tmpdir(), *d = tmpdir(), refrun[4200], run[4200];
    snprintf(refrun, sizeof refrun, "%s/run", ref);
    snprintf(run, sizeof run, "%s/run", d);
    finished_search_only(ref, d);
    kw_tl_opts o = {.timeout_s = 200, .cwd = d};
    kw_tl_proc r;
    int resumes = 0, whole = 0;
    for (;;) {
        r = kw_tl_run(&o, bin(), "tune", "--resume", "run", "--threads", "2", "--time-limit",
                      "0.001", NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        resumes++;
        int cut = strstr(r.err, "without the evidence") != NULL;
        whole += strstr(r.err, "first evidence evaluation was finished") != NULL;
        kw_tl_free(&r);
        if (!cut)
            break;
        cr_assert(resumes < 40, "40 resumes under --time-limit 0.001 and the evidence is not done");
    }
    cr_assert(resumes > 2 && whole >= resumes - 1, "%d resumes, %d said the whole evaluation",
              resumes, whole);
    const char *const files[] = {"results.xml", "ranked.csv", "audit.csv", "portability.csv",
                                 "evidence"};
    same_as_uninterrupted(refrun, run, files, 5);
    rmrf(ref);
    rmrf(d);
}

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32()) chained from crc: the
 * checksum of RUN/evidence's records (src/run/kw_evcache.h). */
static uint32_t crc32_of(uint32_t crc, const char *p, size_t n)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= (unsigned char)p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

/* Write lines (each a record's payload) as an evidence file at path, each
 * followed by its chained " crc=XXXXXXXX". */
static void write_sealed(const char *path, const char *const *lines, int n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    uint32_t crc = 0;
    for (int i = 0; i < n; i++) {
        crc = crc32_of(crc32_of(crc, lines[i], strlen(lines[i])), "\n", 1);
        fprintf(f, "%s crc=%08x\n", lines[i], (unsigned)crc);
    }
    cr_assert_eq(fclose(f), 0);
}

/* RUN/evidence says whether the evidence phase ended (its end record, F,
 * written after results.xml), so recommend need not trust results.xml for
 * it. A finished search resumed under --time-limit 0.001 keeps one evidence
 * evaluation and is cut: its results.xml edited to drop evidence="..." (a
 * stale or copied file), recommend still says the evidence is missing, from
 * RUN/evidence. Resumed to the end: the file is the uninterrupted run's byte
 * for byte (its end record included), and a resume of the finished run adds
 * no second one; one killed after its first partial rewrite of results.xml
 * (--results-every) leaves none. A format-1 file (before the end record) says nothing: a
 * finished run's results.xml is read as before, no warning. verify refuses
 * the cut run's results.xml put in the finished run's folder. main's binary:
 * no end record, recommend silent on the edited cut run, verify passes the
 * cut results.xml (it matches the journal with no evidence). */
Test(tune, the_evidence_file_says_whether_the_evidence_phase_ended)
{
    char *ref = tmpdir(), *d = tmpdir(), refrun[4200], run[4200], path[4300];
    const char *shape = "attn_prefill_s2048_b1_c2";
    snprintf(refrun, sizeof refrun, "%s/run", ref);
    snprintf(run, sizeof run, "%s/run", d);
    finished_search_only(ref, d);
    long ev_len = -1;
    char *ev = slurp(refrun, "evidence", &ev_len);
    cr_assert(ev && ev_len > 0 && ev[ev_len - 1] == '\n');
    char *last = ev + ev_len - 1;
    while (last > ev && last[-1] != '\n')
        last--;
    int n_r = 0;
    for (char *q = ev; (q = strstr(q, "\nR e=")) != NULL; q++)
        n_r++;
    char want_end[64];
    snprintf(want_end, sizeof want_end, "F n=%d crc=", n_r);
    cr_assert(strncmp(ev, "X format=2 ", 11) == 0, "header: %.40s", ev);
    cr_assert(strncmp(last, want_end, strlen(want_end)) == 0,
              "the finished run's evidence ends with %.60s, not '%s...'", last, want_end);

    kw_tl_opts o = {.timeout_s = 200, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--resume", "run", "--threads", "1",
                             "--time-limit", "0.001", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "without the evidence"), "the resume was not cut: %s", r.err);
    kw_tl_free(&r);
    char *cut = slurp(run, "evidence", NULL);
    cr_assert(cut && !strstr(cut, "\nF "), "a cut evidence has an end record: %s", cut);
    free(cut);
    snprintf(path, sizeof path, "%s/results.xml", run);
    char *xml = kw_tl_slurp(path), *at, *cut_xml = strdup(xml);
    cr_assert(xml && (at = strstr(xml, " evidence=\"")) != NULL, "results.xml says no cut");
    char *close_q = strchr(at + 11, '"');
    memmove(at, close_q + 1, strlen(close_q + 1) + 1);
    cr_assert_eq(kw_tl_write(path, xml), 0);
    free(xml);
    r = kw_tl_run(&o, bin(), "recommend", "run", "--shape", shape, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "stopped before its evidence was made") &&
                  strstr(r.err, "RUN/evidence has no end record"),
              "recommend trusted the edited results.xml: %s", r.err);
    kw_tl_free(&r);

    resume_keeps_evidence(&o, "2", run, ev, ev_len, "resumed to the end");
    resume_keeps_evidence(&o, "2", run, ev, ev_len, "after one more resume");
    r = kw_tl_run(&o, bin(), "recommend", "run", "--shape", shape, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(!strstr(r.err, "evidence"), "the finished run: %s", r.err);
    kw_tl_free(&r);
    /* verify: the cut run's results.xml in the finished run's folder */
    snprintf(path, sizeof path, "%s/results.xml", run);
    cr_assert_eq(kw_tl_write(path, cut_xml), 0);
    free(cut_xml);
    r = kw_tl_run(&o, bin(), "verify", "run", NULL);
    cr_assert_eq(r.status, 1, "verify took a cut run's results.xml for a finished run's: %s%s",
                 r.out, r.err);
    cr_assert(strstr(r.out, "end record") || strstr(r.err, "end record"), "%s%s", r.out, r.err);
    kw_tl_free(&r);
    /* ... its advice names the folder as one shell word (main printed
     * `knobwise tune --resume my run;x`, which runs x when pasted) */
    char moved[4300];
    snprintf(moved, sizeof moved, "%s/my run;x", d);
    cr_assert_eq(rename(run, moved), 0);
    r = kw_tl_run(&o, bin(), "verify", "my run;x", NULL);
    cr_assert_eq(r.status, 1, "%s%s", r.out, r.err);
    cr_assert(strstr(r.err, "`knobwise tune --resume 'my run;x'` writes it again"), "%s%s",
              r.out, r.err);
    kw_tl_free(&r);
    cr_assert_eq(rename(moved, run), 0);

    /* a resume of the finished run cuts the end record before it rewrites
     * results.xml (--results-every: the portability matrix alone), so a kill
     * after such a rewrite leaves no file saying the phase ended; the next
     * resume puts it back, nothing evaluated again */
    snprintf(path, sizeof path, "%s/results.xml", run);
    int efd = kw_tl_tmpfile(), ofd = kw_tl_tmpfile();
    const char *argv[] = {bin(), "tune", "--resume", "run", "--threads", "1", "--results-every",
                          "1e-9", "--quiet", NULL};
    pid_t pid = kw_tl_spawn(argv, &o, ofd, efd);
    cr_assert_gt(pid, 0);
    double deadline = kw_tl_now() + 100;
    cr_assert(stop_run(pid), "the resume ended before it could be stopped");
    for (;;) {
        char *x = kw_tl_slurp(path);
        int partial = x && strstr(x, " evidence=\"portability\"") != NULL;
        free(x);
        if (partial)
            break;
        cr_assert(kw_tl_now() < deadline, "the resume never rewrote results.xml");
        kill(pid, SIGCONT);
        usleep(2000);
        cr_assert(stop_run(pid), "the resume ended before its first rewrite was seen");
    }
    kill(pid, SIGKILL);
    run_ended(pid, ofd, efd, 30, NULL, NULL);
    cut = slurp(run, "evidence", NULL);
    cr_assert(cut && !strstr(cut, "\nF "), "killed after a partial rewrite, RUN/evidence still "
              "says the phase ended");
    free(cut);
    r = kw_tl_run(&o, bin(), "recommend", "run", "--shape", shape, NULL);
    cr_assert(strstr(r.err, "RUN/evidence has no end record"), "%s", r.err);
    kw_tl_free(&r);
    resume_keeps_evidence(&o, "1", run, ev, ev_len, "after the kill and a resume");

    /* format 1: the same records, header format=1, no end record */
    const char *lines[64];
    int n = 0;
    for (char *q = ev, *next; q < last && n < 64; q = next) {
        next = strchr(q, '\n') + 1;
        *strstr(q, " crc=") = '\0';
        lines[n++] = q;
    }
    cr_assert(n < 64);
    char *hdr = strdup(lines[0]);
    hdr[9] = '1'; /* "X format=2" */
    lines[0] = hdr;
    snprintf(path, sizeof path, "%s/evidence", refrun);
    write_sealed(path, lines, n);
    o.cwd = ref;
    r = kw_tl_run(&o, bin(), "recommend", "run", "--shape", shape, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(!strstr(r.err, "evidence"), "a format-1 file of a finished run: %s", r.err);
    kw_tl_free(&r);
    free(hdr);
    free(ev);
    rmrf(ref);
    rmrf(d);
}

/* A run folder renamed and replaced by a symbolic link while tune runs (here
 * in its evidence phase, the run stopped while it is done): tune writes
 * nothing through the link (exit 1, saying the folder was moved or
 * replaced), and the folder as moved resumes to the uninterrupted run's
 * files. The run goes on in 2 ms slices between looks at the folder, so the
 * swap lands in the evidence however this process is scheduled. main's
 * binary wrote results.xml, ranked.csv, audit.csv and portability.csv into
 * the link's target, outside the run, and exited 0; the run folder had none. */
Test(tune, a_run_folder_replaced_by_a_link_while_tune_runs_gets_nothing_written_through_it)
{
    char *d = tmpdir(), sp[4096], path[4300], moved[4300], outside[4300];
    snprintf(sp, sizeof sp, "%s/tests/data/signal/final_slow.xml", kw_tl_src());
    kw_tl_opts o = {.timeout_s = 200, .cwd = d};
    snprintf(outside, sizeof outside, "%s/outside", d);
    cr_assert_eq(mkdir(outside, 0755), 0);
    int efd = kw_tl_tmpfile(), ofd = kw_tl_tmpfile();
    const char *argv[] = {bin(), "tune", "--space", sp, "--shape", "attn_prefill_s2048_b1_c2",
                          "--budget", "30", "--seed", "5", "--threads", "1", "--out", "run",
                          "--quiet", NULL};
    pid_t pid = kw_tl_spawn(argv, &o, ofd, efd);
    cr_assert_gt(pid, 0);
    double deadline = kw_tl_now() + 100;
    snprintf(path, sizeof path, "%s/run/evidence", d);
    struct stat st;
    cr_assert(stop_run(pid), "the run ended before it could be stopped");
    while (lstat(path, &st) != 0) {
        cr_assert(kw_tl_now() < deadline, "the run never began its evidence");
        kill(pid, SIGCONT);
        usleep(2000);
        cr_assert(stop_run(pid), "the run ended before its evidence was seen");
    }
    snprintf(path, sizeof path, "%s/run", d);
    snprintf(moved, sizeof moved, "%s/moved", d);
    cr_assert_eq(rename(path, moved), 0);
    cr_assert_eq(symlink("outside", path), 0);
    kill(pid, SIGCONT);
    char *err;
    int timed_out;
    int status = run_ended(pid, ofd, efd, 150, &err, &timed_out);
    cr_assert(!timed_out, "%s", err);
    cr_assert_eq(status, 1, "exit %d: %s", status, err);
    cr_assert(strstr(err, "moved or replaced"), "%s", err);
    free(err);
    DIR *dd = opendir(outside);
    cr_assert_not_null(dd);
    for (struct dirent *e; (e = readdir(dd)) != NULL;)
        cr_assert(!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."),
                  "%s was written through the link, outside the run", e->d_name);
    closedir(dd);

    cr_assert_eq(unlink(path), 0);
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--resume", "moved", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "verify", "moved", "--no-eval", NULL);
    cr_assert_eq(r.status, 0, "the folder as moved, resumed: %s%s", r.out, r.err);
    kw_tl_free(&r);
    char *ev = slurp(moved, "evidence", NULL);
    cr_assert(ev && strstr(ev, "\nF n="), "the resumed evidence did not end: %s", ev);
    free(ev);
    rmrf(d);
}

/* The best-so-far rewrites (--results-every) read the portability cells
 * RUN/evidence keeps instead of evaluating them again. Planted: the journal
 * of a finished search and an evidence file holding only its portability
 * cell, resealed with a p95 of 7777.25 us that no evaluation gives. The
 * resume (--results-every 1e-9: a rewrite after every replayed round) is
 * run in 2 ms slices, stopped between them; once it says the evidence
 * begins (the rewrites are over, the re-checks not yet made), its
 * portability.csv must hold the kept figure. main's binary evaluated the
 * cell in each rewrite (1940.81 us there). */
Test(tune, the_best_so_far_rewrites_read_the_kept_evidence)
{
    char *ref = tmpdir(), *d = tmpdir(), refrun[4200], run[4200], path[4300];
    snprintf(refrun, sizeof refrun, "%s/run", ref);
    snprintf(run, sizeof run, "%s/run", d);
    finished_search_only(ref, d);
    kw_tl_opts o = {.timeout_s = 200, .cwd = d};
    char *ev = slurp(refrun, "evidence", NULL);
    cr_assert_not_null(ev);
    /* the header and the p record (the portability cell), its p95 (m's
     * second figure) planted */
    char *hdr = ev, *rec = strstr(ev, "\nR e=p s=0 ");
    cr_assert_not_null(rec, "no portability record in %s", ev);
    *strstr(hdr, " crc=") = '\0';
    rec++;
    *strstr(rec, " crc=") = '\0';
    char *m = strstr(rec, " m="), *c1 = strchr(m, ','), *c2 = strchr(c1 + 1, ',');
    char planted[4096];
    snprintf(planted, sizeof planted, "%.*s7777.25%s", (int)(c1 + 1 - rec), rec, c2);
    const char *const lines[] = {hdr, planted};
    snprintf(path, sizeof path, "%s/evidence", run);
    write_sealed(path, lines, 2);
    free(ev);

    char errp[4300];
    snprintf(errp, sizeof errp, "%s/err.txt", d);
    int efd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644), ofd = kw_tl_tmpfile();
    cr_assert(efd >= 0);
    const char *argv[] = {bin(), "tune", "--resume", "run", "--threads", "1", "--results-every",
                          "1e-9", "--time-limit", "600", NULL};
    pid_t pid = kw_tl_spawn(argv, &o, ofd, efd);
    cr_assert_gt(pid, 0);
    double deadline = kw_tl_now() + 100;
    char *err = NULL;
    cr_assert(stop_run(pid), "the resume ended before it could be stopped");
    for (;;) {
        free(err);
        err = kw_tl_slurp(errp);
        if (err && strstr(err, "now the evidence"))
            break;
        cr_assert(kw_tl_now() < deadline, "the resume never began the evidence: %s", err);
        kill(pid, SIGCONT);
        usleep(2000);
        cr_assert(stop_run(pid), "the resume ended before its evidence was seen: %s", err);
    }
    char *port = slurp(run, "portability.csv", NULL);
    kill(pid, SIGKILL);
    kill(pid, SIGCONT);
    run_ended(pid, ofd, efd, 100, NULL, NULL);
    cr_assert_not_null(port, "no best-so-far rewrite before the evidence");
    cr_assert_not_null(strstr(port, "7777.2"), "the rewrite evaluated the kept cell again:\n%s",
                       port);
    free(port);
    free(err);
    rmrf(ref);
    rmrf(d);
}

Test(tune, time_limit_pauses_with_exit_0_and_periodic_results_appear)
{
    char *d = tmpdir();
    kw_tl_opts o = {.timeout_s = 200, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", space(), "--strategy", "exhaustive",
                         "--time-limit", "0.2", "--out", "run", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "time limit reached") && strstr(r.err, "--resume run"), "%s", r.err);
    kw_tl_free(&r);
    char run[4200], last[256];
    snprintf(run, sizeof run, "%s/run", d);
    last_record(run, last, sizeof last);
    cr_assert(strncmp(last, "Q why=time_limit", 16) == 0, "%s", last);
    rmrf(d);

    /* a run killed outright still leaves the best-so-far results of the last rewrite */
    d = tmpdir();
    char *err = NULL;
    int st = signal_run(d, SIGKILL, 600, "0.001", &err);
    cr_assert_eq(st, 128 + SIGKILL);
    free(err);
    snprintf(run, sizeof run, "%s/run", d);
    char *x = slurp(run, "results.xml", NULL);
    cr_assert_not_null(x, "no periodic results");
    free(x);
    rmrf(d);
}

/* ---- --rerank K|off (the re-rank: search/kw_ofat.c; the journal header's rerank=K) ---- */

/* The journal in RUN/journal, each line without its checksum, into a buffer. */
static char *journal_nocrc(const char *run)
{
    long len;
    char *b = slurp(run, "journal", &len);
    cr_assert_not_null(b, "%s: no journal", run);
    char *o = malloc((size_t)len + 1), *w = o;
    for (char *p = b; *p;) {
        char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *c = memmem(p, n, " crc=", 5);
        size_t keep = c ? (size_t)(c - p) : n;
        memcpy(w, p, keep);
        w += keep;
        *w++ = '\n';
        p += n + (nl ? 1 : 0);
    }
    *w = '\0';
    free(b);
    return o;
}

/* Drops from journal text J (journal_nocrc) the lines that start with one of the
 * prefixes DROP or contain NEEDLE, and the header's " rerank=K". */
static void journal_drop(char *j, const char *const *drop, int n_drop, const char *needle)
{
    char *w = j;
    for (char *p = j; *p;) {
        char *nl = strchr(p, '\n');
        size_t n = (size_t)(nl - p) + 1;
        int skip = needle && memmem(p, n, needle, strlen(needle)) != NULL;
        for (int i = 0; i < n_drop && !skip; i++)
            skip = strncmp(p, drop[i], strlen(drop[i])) == 0;
        if (!skip) {
            memmove(w, p, n);
            w += n;
        }
        p += n;
    }
    *w = '\0';
    char *rr = strstr(j, " rerank=");
    if (rr && rr < strchr(j, '\n')) {
        size_t k = strspn(rr + 8, "0123456789");
        memmove(rr, rr + 8 + k, strlen(rr + 8 + k) + 1);
    }
}

static int count_lines_starting(const char *j, const char *prefix)
{
    int n = 0;
    for (const char *p = j; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += strncmp(p, prefix, strlen(prefix)) == 0;
    return n;
}

/* validate_small at a budget of 40: its decode shape's sample (p95 interval far wider
 * than 1%) cannot rank it, so the default re-ranks it (R records, rerank=4). --rerank
 * off gives the search without the re-rank: no rerank= in the header, no R record, no
 * re-rank step, and every other record (evaluations, steps) as the default's (the
 * re-rank adds no evaluation; the D records, which say where each shape ended, may
 * differ). --rerank 3 is recorded as rerank=3 and a resume from a journal cut after
 * its first R record takes it from there: byte-identical to the uninterrupted run. An
 * explicit --rerank on a resume is refused (exit 2), the journal untouched. Fails on
 * main (no --rerank: unknown option). */
Test(tune, the_rerank_option_is_recorded_off_gives_the_search_without_it_and_resume_keeps_it)
{
    char *d = tmpdir();
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    const char *runs[] = {"on", "off", "r3"}, *vals[] = {NULL, "off", "3"};
    for (int i = 0; i < 3; i++) {
        kw_tl_proc r = vals[i]
            ? kw_tl_run(&o, bin(), "tune", "--space", space(), "--budget", "40", "--threads", "1",
                        "--quiet", "--out", runs[i], "--rerank", vals[i], NULL)
            : kw_tl_run(&o, bin(), "tune", "--space", space(), "--budget", "40", "--threads", "1",
                        "--quiet", "--out", runs[i], NULL);
        cr_assert_eq(r.status, 0, "%s: %s", runs[i], r.err);
        kw_tl_free(&r);
    }
    char p_on[4200], p_off[4200], p_r3[4200];
    snprintf(p_on, sizeof p_on, "%s/on", d);
    snprintf(p_off, sizeof p_off, "%s/off", d);
    snprintf(p_r3, sizeof p_r3, "%s/r3", d);
    char *on = journal_nocrc(p_on), *off = journal_nocrc(p_off), *r3 = journal_nocrc(p_r3);
    cr_assert(strstr(on, " rerank=4") && strstr(on, " rerank=4") < strchr(on, '\n'),
              "the default's header has no rerank=4:\n%.300s", on);
    cr_assert_gt(count_lines_starting(on, "R "), 0, "the default re-ranked nothing");
    cr_assert(strstr(r3, " rerank=3") && strstr(r3, " rerank=3") < strchr(r3, '\n'),
              "--rerank 3 is not in the header:\n%.300s", r3);
    cr_assert_gt(count_lines_starting(r3, "R "), 0);
    cr_assert_null(strstr(off, "rerank="), "--rerank off: rerank= in the journal");
    cr_assert_eq(count_lines_starting(off, "R "), 0, "--rerank off: R records");
    cr_assert_null(strstr(off, "phase=rerank"));
    const char *drop[] = {"R ", "D "};
    journal_drop(on, drop, 2, "phase=rerank");
    journal_drop(off, drop + 1, 1, NULL);
    cr_assert_str_eq(off, on, "--rerank off is not the default's search without its re-rank");

    /* a resume takes rerank=3 from the journal: cut after the first R record */
    long len;
    char *full = slurp(p_r3, "journal", &len);
    char *cut = strstr(full, "\nR ");
    cr_assert_not_null(cut);
    cut = strchr(cut + 1, '\n') + 1;
    char path[4300];
    snprintf(path, sizeof path, "%s/journal", p_r3);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fwrite(full, 1, (size_t)(cut - full), f);
    fclose(f);
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--resume", "r3", "--rerank", "4", NULL);
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strstr(r.err, "--resume takes only"), "%s", r.err);
    kw_tl_free(&r);
    long cut_len;
    char *after = slurp(p_r3, "journal", &cut_len);
    cr_assert(cut_len == (long)(cut - full) && memcmp(after, full, (size_t)cut_len) == 0,
              "a refused resume wrote to the journal");
    free(after);
    r = kw_tl_run(&o, bin(), "tune", "--resume", "r3", "--threads", "2", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    long len2;
    char *again = slurp(p_r3, "journal", &len2);
    cr_assert(len2 == len && memcmp(again, full, (size_t)len) == 0,
              "the resumed --rerank 3 journal differs from the uninterrupted one");
    free(again);
    free(full);
    free(on);
    free(off);
    free(r3);
    rmrf(d);
}
