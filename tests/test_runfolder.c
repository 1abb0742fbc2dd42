/* test_runfolder.c - run-folder safety end to end, on the built
 * knobwise binary through kw_tl_proc.h (no shell, timeouts, peak RSS):
 *   - an output path (-o) that is a run's own file, a folder, a FIFO, a
 *     symbolic link to a device, or an existing file without --force is
 *     refused with exit 2 and nothing written;
 *   - one writer per run folder: a second tune / resume is refused while
 *     the first runs, readers keep working on a consistent prefix;
 *   - every input that affects a result is hashed: a changed workload trace
 *     stops a resume, naming the file;
 *   - paths are never truncated; a symbolic link at RUN/journal is refused;
 *   - stale .NAME.tmp.XXXXXX files are removed on resume;
 *   - every journal reader applies the header checks; an empty journal says
 *     "nothing was run"; a huge record costs no memory.
 * The semantic cases carry their expected message in tests/data/bad/HOSTILE
 * (HOW = runfolder), read by the runfolder_manifest test.
 *
 * Design choice: each case builds its own small run (spaces/validate_small.xml,
 * a budget of 20: ~0.1 s) in a temp folder, so cases never share state.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kw_journal.h"
#include "lib/kw_tl.h"

/* each test's hang guard (KW_TL_HANG_GUARD, not Criterion's .timeout) */
static void kw_runfolder_guard(void) { KW_TL_HANG_GUARD(240); }
TestSuite(runfolder, .init = kw_runfolder_guard);

#define KW_RF_TIMEOUT_S 60
#define KW_RF_BIG_RECORD_BYTES (48u << 20) /* one hostile journal record */
#define KW_RF_BIG_RECORD_RSS_KB (32 * 1024) /* a reader's peak RSS allowed on it */



static kw_tl_opts kw_rf_opts(const char *cwd)
{
    kw_tl_opts o = {.timeout_s = KW_RF_TIMEOUT_S, .cwd = cwd};
    return o;
}


static char *kw_rf_slurp(const char *path, size_t *n)
{
    char *b = kw_tl_slurp_n(path, n);
    cr_assert(b != NULL, "%s", path);
    return b;
}

static void kw_rf_put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f != NULL, "%s", path);
    cr_assert(fputs(text, f) >= 0 && fclose(f) == 0);
}

/* Moves DIR/RUNFILE to DIR/MOVED and leaves a symbolic link to it in its place. */
static void kw_rf_link_out(const char *dir, const char *runfile, const char *moved)
{
    char p[4300], q[4300];
    snprintf(p, sizeof p, "%s/%s", dir, runfile);
    snprintf(q, sizeof q, "%s/%s", dir, moved);
    cr_assert_eq(rename(p, q), 0, "%s", p);
    cr_assert_eq(symlink(q, p), 0, "%s", p);
}

/* A finished small run at DIR/run (returns DIR, a fresh temp folder). */
static char *kw_rf_run(void)
{
    char *dir = kw_tl_tmpdir("kwrunfolder");
    cr_assert(dir);
    char space[4200];
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    kw_tl_opts o = kw_rf_opts(dir);
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", space, "--budget", "20", "--out",
                         "run", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "tune: %s", r.err);
    kw_tl_free(&r);
    return dir;
}

/* argv (KW_TL_MAXARGS + 2 entries) = knobwise ARGS, NULL-terminated. */
static void kw_rf_argv(const char **argv, const char *const *args)
{
    int n = 0;
    argv[n++] = kw_tl_bin();
    for (int i = 0; args[i] && n < KW_TL_MAXARGS; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
}

/* Run `knobwise ARGS` in dir; expect exit `want`, and `sub` (if any) on stderr. */
static void kw_rf_expect(const char *dir, int want, const char *sub, const char *const *args)
{
    const char *argv[KW_TL_MAXARGS + 2];
    kw_rf_argv(argv, args);
    kw_tl_opts o = kw_rf_opts(dir);
    kw_tl_proc r = kw_tl_runv(&o, argv);
    char what[1024] = "";
    for (int i = 0; args[i]; i++)
        snprintf(what + strlen(what), sizeof what - strlen(what), " %.200s", args[i]);
    cr_assert(!r.timed_out, "%s: hung", what);
    cr_assert_eq(r.status, want, "%s: exit %d (want %d): %s%s", what, r.status, want, r.out, r.err);
    if (sub)
        cr_assert(strstr(r.err, sub) != NULL, "%s: want '%s' in: %s", what, sub, r.err);
    kw_tl_free(&r);
}

#define KW_RF_ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ---- 1. output paths ---- */

Test(runfolder, report_and_recommend_refuse_the_runs_own_files)
{
    char *dir = kw_rf_run();
    char jp[4300], other[4300];
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    size_t n0;
    char *before = kw_rf_slurp(jp, &n0);
    int entries = kw_tl_entries(dir), run_entries;
    snprintf(other, sizeof other, "%s/run", dir);
    run_entries = kw_tl_entries(other);
    kw_rf_expect(dir, 2, "journal", KW_RF_ARGS("report", "run", "-o", "run/journal"));
    kw_rf_expect(dir, 2, "journal", KW_RF_ARGS("report", "run", "-o", "run/./journal", "--force"));
    kw_rf_expect(dir, 2, "results.xml", KW_RF_ARGS("report", "run", "-o", "run/results.xml",
                                                   "--force"));
    kw_rf_expect(dir, 2, "journal", KW_RF_ARGS("recommend", "run", "--all", "-o", "run/journal",
                                               "--force"));
    kw_rf_expect(dir, 2, "ranked.csv", KW_RF_ARGS("recommend", "run", "--all", "-o",
                                                  "./run/../run/ranked.csv", "--force"));
    /* a hard link to the journal is the journal */
    snprintf(other, sizeof other, "%s/linked", dir);
    cr_assert_eq(link(jp, other), 0);
    kw_rf_expect(dir, 2, "journal", KW_RF_ARGS("report", "run", "-o", "linked", "--force"));
    unlink(other);
    size_t n1;
    char *after = kw_rf_slurp(jp, &n1);
    cr_assert(n0 == n1 && memcmp(before, after, n0) == 0, "the journal changed");
    free(before);
    free(after);
    cr_assert_eq(kw_tl_entries(dir), entries, "something was written next to the run");
    snprintf(other, sizeof other, "%s/run", dir);
    cr_assert_eq(kw_tl_entries(other), run_entries, "something was written into the run");
    /* the verification still holds */
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("verify", "run", "--no-eval"));
    kw_tl_rmrf(dir);
}

/* A run folder's own files are never an output, whatever run the verb read
 * and --force or not: probe and calibrate read no run (probe -o RUN/journal
 * --force replaced the journal with an accelerator file, calibrate too), and
 * report of one run wrote over another run's journal. The check is the one
 * of every -o (kw_runfolder_output): a folder holding a journal is a run. */
Test(runfolder, no_output_replaces_a_run_folders_own_files)
{
    char *dir = kw_rf_run();
    char space[4200];
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("tune", "--space", space, "--budget", "10", "--out",
                                          "other", "--quiet"));
    char jp[4300], rp[4300], ap[4300], mp[4300], link_p[4300];
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    snprintf(rp, sizeof rp, "%s/run/results.xml", dir);
    snprintf(ap, sizeof ap, "%s/spaces/accel/h100.xml", kw_tl_src());
    snprintf(mp, sizeof mp, "%s/spaces/measured/h100_published.csv", kw_tl_src());
    size_t nj, nr;
    char *journal = kw_rf_slurp(jp, &nj), *results = kw_rf_slurp(rp, &nr);
    int run_entries;
    snprintf(link_p, sizeof link_p, "%s/run", dir);
    run_entries = kw_tl_entries(link_p);
    static const char *const outs[] = {"run/journal", "run/./results.xml", "run/ranked.csv",
                                       "run/report.html", "run/.lock"};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        const char *base = strrchr(outs[i], '/') + 1;
        kw_rf_expect(dir, 2, base, KW_RF_ARGS("probe", "--quick", "-o", outs[i], "--force"));
        kw_rf_expect(dir, 2, base, KW_RF_ARGS("calibrate", "--accel", ap, "--measured", mp, "-o",
                                              outs[i], "--force"));
        kw_rf_expect(dir, 2, base, KW_RF_ARGS("report", "other", "-o", outs[i], "--force",
                                              "--no-portability"));
        kw_rf_expect(dir, 2, base, KW_RF_ARGS("recommend", "other", "--all", "-o", outs[i],
                                              "--force"));
        kw_rf_expect(dir, 2, base, KW_RF_ARGS("export", "other", "--format", "json", "-o",
                                              outs[i], "--force"));
    }
    /* a hard link to a run's journal in the run folder is its journal */
    snprintf(link_p, sizeof link_p, "%s/run/j2", dir);
    cr_assert_eq(link(jp, link_p), 0);
    kw_rf_expect(dir, 2, "journal", KW_RF_ARGS("probe", "--quick", "-o", "run/j2", "--force"));
    cr_assert_eq(unlink(link_p), 0);
    size_t n;
    char *now = kw_rf_slurp(jp, &n);
    cr_assert(n == nj && memcmp(now, journal, n) == 0, "the journal changed");
    free(now);
    now = kw_rf_slurp(rp, &n);
    cr_assert(n == nr && memcmp(now, results, n) == 0, "results.xml changed");
    free(now);
    free(journal);
    free(results);
    snprintf(link_p, sizeof link_p, "%s/run", dir);
    cr_assert_eq(kw_tl_entries(link_p), run_entries, "something was written into the run");
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("verify", "run", "--no-eval"));
    kw_tl_rmrf(dir);
}

/* `knobwise ARGS` as a user who cannot write dir/run (made read-only; as
 * root, the test runs it as nobody, uid 65534, for whom root's 0555 is read-
 * only); exit status, stderr into err. */
/* A copy of the knobwise binary in dir (mode 0755), for a child that drops to
 * uid 65534: the build tree may sit in a folder only root can enter (a clone
 * under /root: execv then fails with exit 127, not the behaviour tested). */
static void kw_rf_copy_bin(const char *dir, char *out, size_t len)
{
    snprintf(out, len, "%s/knobwise-bin", dir);
    if (access(out, X_OK) == 0)
        return;
    int in = open(kw_tl_bin(), O_RDONLY);
    int fd = open(out, O_WRONLY | O_CREAT | O_EXCL, 0755);
    cr_assert(in >= 0 && fd >= 0, "cannot copy %s to %s", kw_tl_bin(), out);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        cr_assert_eq(write(fd, buf, (size_t)n), n);
    cr_assert_eq(n, 0);
    close(in);
    cr_assert_eq(close(fd), 0);
}

static int kw_rf_readonly(const char *dir, char *err, size_t len, const char *const *args)
{
    const char *argv[KW_TL_MAXARGS + 2];
    kw_rf_argv(argv, args);
    char bin[4300];
    if (geteuid() == 0) {
        kw_rf_copy_bin(dir, bin, sizeof bin);
        argv[0] = bin;
    }
    int efd = kw_tl_tmpfile();
    cr_assert(efd >= 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(efd, 2);
        if (chdir(dir) != 0)
            _exit(126);
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
                               setuid(65534) != 0))
            _exit(125);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int to = 0;
    long rss = 0;
    int st = kw_tl_wait(pid, kw_tl_now() + KW_RF_TIMEOUT_S, &to, &rss);
    lseek(efd, 0, SEEK_SET);
    char *e = kw_tl_slurp_fd(efd);
    close(efd);
    snprintf(err, len, "%s", e ? e : "");
    free(e);
    cr_assert(!to, "%s: hung", args[0]);
    return st;
}

/* report and recommend --all without -o on a run folder the user cannot
 * write: exit 2 naming the folder and the file, before any work, nothing
 * written. The old binary computed the report, then failed to create its
 * temp file: exit 1 ("cannot create a file there: Permission denied"). */
Test(runfolder, a_run_folder_the_user_cannot_write_is_bad_input)
{
    char *dir = kw_rf_run();
    char run[4300], err[4096];
    snprintf(run, sizeof run, "%s/run", dir);
    int before = kw_tl_entries(run);
    cr_assert_eq(chmod(dir, 0755), 0);
    cr_assert_eq(chmod(run, 0555), 0);
    static const char *const want[2] = {"report.html", "mappings.csv"};
    const char *const *cmds[2] = {KW_RF_ARGS("report", "run"),
                                  KW_RF_ARGS("recommend", "run", "--all")};
    for (int i = 0; i < 2; i++) {
        int st = kw_rf_readonly(dir, err, sizeof err, cmds[i]);
        cr_expect_eq(st, 2, "%s: exit %d: %s", cmds[i][0], st, err);
        char sub[200];
        snprintf(sub, sizeof sub, "run: the run folder is not writable (Permission denied), so "
                 "%s cannot be put there", want[i]);
        cr_expect(strstr(err, sub) != NULL, "%s: want '%s' in: %s", cmds[i][0], sub, err);
    }
    /* a new run under it, or into it (an empty folder the user cannot
     * write): exit 2 before anything is made, as report says it (main:
     * exit 1, "cannot create the run folder: Permission denied") */
    char empty[4400];
    snprintf(empty, sizeof empty, "%s/empty", run);
    cr_assert_eq(chmod(run, 0755), 0);
    cr_assert_eq(mkdir(empty, 0555), 0);
    cr_assert_eq(chmod(run, 0555), 0);
    const char *const *tunes[2] = {KW_RF_ARGS("tune", "--budget", "2", "--out", "run/new", "--quiet"),
                                   KW_RF_ARGS("tune", "--budget", "2", "--out", "run/empty", "--quiet")};
    static const char *const twant[2] = {"run/new: cannot create the run folder: Permission denied",
                                         "run/empty: cannot write into the run folder: Permission denied"};
    for (int i = 0; i < 2; i++) {
        int st = kw_rf_readonly(dir, err, sizeof err, tunes[i]);
        cr_expect_eq(st, 2, "%s: exit %d: %s", tunes[i][4], st, err);
        cr_expect(strstr(err, twant[i]) != NULL, "want '%s' in: %s", twant[i], err);
    }
    cr_assert_eq(chmod(run, 0755), 0);
    cr_assert_eq(kw_tl_entries(empty), 0, "something was written into run/empty");
    cr_assert_eq(rmdir(empty), 0);
    cr_expect_eq(kw_tl_entries(run), before, "something was written into the run");
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("verify", "run", "--no-eval"));
    kw_tl_rmrf(dir);
}

/* Make dir/run/NAME one the user of kw_rf_readonly cannot write while the
 * rest of the run is its own: as root, the run is chowned to uid 65534 and
 * NAME stays root's (0644); as anyone else NAME is made 0444. */
static void kw_rf_not_yours(const char *dir, const char *name)
{
    char p[4300];
    const char *f[] = {"", "/journal", "/results.xml", "/ranked.csv", "/audit.csv",
                       "/portability.csv", "/.lock"};
    for (size_t i = 0; geteuid() == 0 && i < sizeof f / sizeof f[0]; i++) {
        snprintf(p, sizeof p, "%s/run%s", dir, f[i]);
        if (access(p, F_OK) == 0)
            cr_assert_eq(chown(p, 65534, 65534), 0, "%s", p);
    }
    snprintf(p, sizeof p, "%s/run/%s", dir, name);
    if (access(p, F_OK) != 0)
        kw_rf_put(p, "");
    cr_assert_eq(geteuid() == 0 ? chown(p, 0, 0) : chmod(p, 0444), 0, "%s", p);
}

/* tune --resume of a run whose lock file or journal the user cannot write:
 * exit 2 naming the file, before the lock is taken or anything is written.
 * The old binary: an unwritable .lock was exit 1 ("cannot open the run
 * folder's lock file: Permission denied"); an unwritable journal exit 1
 * after creating the .lock. */
Test(runfolder, a_resume_the_user_cannot_write_is_bad_input)
{
    static const char *const names[2] = {".lock", "journal"};
    for (int i = 0; i < 2; i++) {
        char *dir = kw_rf_run();
        char run[4300], p[4400], err[4096], want[256];
        snprintf(run, sizeof run, "%s/run", dir);
        cr_assert_eq(chmod(dir, 0755), 0);
        snprintf(p, sizeof p, "%s/.lock", run);
        unlink(p);
        kw_rf_not_yours(dir, names[i]);
        int before = kw_tl_entries(run);
        int st = kw_rf_readonly(dir, err, sizeof err, KW_RF_ARGS("tune", "--resume", "run",
                                                                 "--quiet"));
        cr_expect_eq(st, 2, "%s: exit %d: %s", names[i], st, err);
        snprintf(want, sizeof want, "run/%s: the run's %s is not writable (Permission denied), "
                 "so the run cannot be resumed", names[i], i == 0 ? "lock file" : "journal");
        cr_expect(strstr(err, want) != NULL, "want '%s' in: %s", want, err);
        cr_expect_eq(kw_tl_entries(run), before, "%s: something was written into the run",
                     names[i]);
        kw_tl_rmrf(dir);
    }
}

/* tune --out DIR into an existing folder that holds no run but a file by a
 * name a run writes (the user's own results.xml, report.html): refused, exit
 * 2, nothing written; tune renamed its results over them (exit 0). A folder
 * with other files is still a fine --out. */
Test(runfolder, a_new_run_never_replaces_files_it_did_not_write)
{
    char *dir = kw_tl_tmpdir("kwrunfolder");
    char space[4200], p[4300];
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    static const char *const names[] = {"results.xml", "ranked.csv", "report.html",
                                        "mappings.csv"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/mine", dir);
        cr_assert_eq(mkdir(p, 0700), 0);
        snprintf(p, sizeof p, "%s/mine/%s", dir, names[i]);
        kw_rf_put(p, "the user's own\n");
        kw_rf_expect(dir, 2, names[i], KW_RF_ARGS("tune", "--space", space, "--budget", "5",
                                                  "--out", "mine", "--quiet"));
        size_t n;
        char *kept = kw_rf_slurp(p, &n);
        cr_assert_str_eq(kept, "the user's own\n", "%s replaced", names[i]);
        free(kept);
        snprintf(p, sizeof p, "%s/mine", dir);
        cr_assert_eq(kw_tl_entries(p), 1, "%s: something was written beside it", names[i]);
        kw_tl_rm_tree(p);
    }
    /* an existing empty folder is taken (a folder holding any other file of
     * the user's is refused: out_into_a_folder_holding_the_users_files_...) */
    snprintf(p, sizeof p, "%s/mine", dir);
    cr_assert_eq(mkdir(p, 0700), 0);
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("tune", "--space", space, "--budget", "5", "--out",
                                          "mine", "--quiet"));
    kw_tl_rmrf(dir);
}

Test(runfolder, outputs_that_are_not_new_regular_files_are_refused)
{
    char *dir = kw_rf_run();
    char p[4300];
    snprintf(p, sizeof p, "%s/fifo", dir);
    cr_assert_eq(mkfifo(p, 0600), 0);
    snprintf(p, sizeof p, "%s/null", dir);
    cr_assert_eq(symlink("/dev/null", p), 0); /* never the real /dev/null as the target */
    snprintf(p, sizeof p, "%s/sub", dir);
    cr_assert_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/old.html", dir);
    kw_rf_put(p, "keep me\n");
    int entries = kw_tl_entries(dir);
    const char *verbs[2][4] = {{"report", "run", NULL, NULL}, {"recommend", "run", "--all", NULL}};
    for (int v = 0; v < 2; v++) {
        const char *a[8];
        int k = 0;
        for (int i = 0; verbs[v][i]; i++)
            a[k++] = verbs[v][i];
        a[k] = "-o";
        a[k + 2] = "--force";
        a[k + 3] = NULL;
        a[k + 1] = "fifo";
        kw_rf_expect(dir, 2, "not a regular file", a);
        a[k + 1] = "null";
        kw_rf_expect(dir, 2, "symbolic link", a);
        a[k + 1] = "sub";
        kw_rf_expect(dir, 2, "folder", a);
        a[k + 1] = "sub/";
        kw_rf_expect(dir, 2, "not a file name", a);
        a[k + 2] = NULL; /* without --force an existing file is kept */
        a[k + 1] = "old.html";
        kw_rf_expect(dir, 2, "--force", a);
    }
    struct stat st;
    snprintf(p, sizeof p, "%s/fifo", dir);
    cr_assert(lstat(p, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");
    snprintf(p, sizeof p, "%s/null", dir);
    cr_assert(lstat(p, &st) == 0 && S_ISLNK(st.st_mode), "the symbolic link was replaced");
    snprintf(p, sizeof p, "%s/old.html", dir);
    size_t n;
    char *keep = kw_rf_slurp(p, &n);
    cr_assert_str_eq(keep, "keep me\n");
    free(keep);
    cr_assert_eq(kw_tl_entries(dir), entries, "something was written");
    /* --force replaces only the verb's own output: "keep me" stays (it may
     * be another run's input); a report report wrote is replaced */
    kw_rf_expect(dir, 2, "not a file knobwise report wrote",
                 KW_RF_ARGS("report", "run", "-o", "old.html", "--force"));
    keep = kw_rf_slurp(p, &n);
    cr_assert_str_eq(keep, "keep me\n");
    free(keep);
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("report", "run", "-o", "new.html"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("report", "run", "-o", "new.html", "--force"));
    snprintf(p, sizeof p, "%s/new.html", dir);
    keep = kw_rf_slurp(p, &n);
    cr_assert(strstr(keep, "<!DOCTYPE") != NULL, "%.80s", keep);
    free(keep);
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("recommend", "run", "--all", "-o", "maps.csv"));
    /* the default outputs inside the run folder are the verbs' own: rewritten freely */
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("report", "run"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("report", "run"));
    kw_tl_rmrf(dir);
}

/* -o FILE --force replaces only a file the verb wrote (a mark at its start,
 * checked by kw_runfolder_output): outside every run folder a file may be another
 * run's input, and no registry of runs says which. `export run -o b.xml
 * --force` replaced a copy of spaces/accel/h100.xml; so did report,
 * recommend --all and calibrate. The copy is kept, exit 2; each verb's own
 * earlier output is replaced. */
Test(runfolder, force_replaces_only_the_verbs_own_output)
{
    char *dir = kw_rf_run();
    char h100[4200], csv[4200], p[4300];
    snprintf(h100, sizeof h100, "%s/spaces/accel/h100.xml", kw_tl_src());
    snprintf(csv, sizeof csv, "%s/spaces/measured/h100_published.csv", kw_tl_src());
    size_t n0;
    char *shipped = kw_rf_slurp(h100, &n0);
    const char *const *verbs[] = {
        KW_RF_ARGS("export", "run", "--format", "json", "-o"),
        KW_RF_ARGS("export", "run", "--format", "c-header", "-o"),
        KW_RF_ARGS("report", "run", "-o"),
        KW_RF_ARGS("recommend", "run", "--all", "-o"),
        KW_RF_ARGS("calibrate", "--accel", h100, "--measured", csv, "-o")};
    const char *said[] = {"knobwise export wrote", "knobwise export wrote",
                          "knobwise report wrote", "knobwise recommend --all wrote",
                          "knobwise calibrate wrote"};
    for (int v = 0; v < 5; v++) {
        const char *a[16];
        int k = 0;
        for (; verbs[v][k]; k++)
            a[k] = verbs[v][k];
        a[k] = "h100.xml";
        a[k + 1] = "--force";
        a[k + 2] = NULL;
        snprintf(p, sizeof p, "%s/h100.xml", dir);
        kw_rf_put(p, shipped);
        int entries = kw_tl_entries(dir);
        kw_rf_expect(dir, 2, said[v], a);
        size_t n;
        char *kept = kw_rf_slurp(p, &n);
        cr_assert(n == n0 && memcmp(kept, shipped, n) == 0, "%s replaced h100.xml", said[v]);
        free(kept);
        cr_assert_eq(kw_tl_entries(dir), entries, "%s wrote something", said[v]);
        /* the verb's own earlier output: replaced */
        a[k] = "mine";
        a[k + 1] = NULL;
        kw_rf_expect(dir, 0, NULL, a);
        a[k + 1] = "--force";
        kw_rf_expect(dir, 0, NULL, a);
        snprintf(p, sizeof p, "%s/mine", dir);
        cr_assert_eq(unlink(p), 0);
    }
    free(shipped);
    kw_tl_rmrf(dir);
}

Test(runfolder, out_naming_a_file_or_too_long_is_bad_input)
{
    char *dir = kw_tl_tmpdir("kwrunfolder");
    char p[4300];
    snprintf(p, sizeof p, "%s/afile", dir);
    kw_rf_put(p, "x\n");
    char space[4200];
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    kw_rf_expect(dir, 2, "afile", KW_RF_ARGS("tune", "--space", space, "--budget", "5", "--out",
                                             "afile", "--quiet"));
    kw_rf_expect(dir, 2, "afile", KW_RF_ARGS("tune", "--space", space, "--budget", "5", "--out",
                                             "afile/run", "--quiet"));
    /* 1100 characters in components of 100: the run must not land in a shorter folder */
    char longp[1300] = "";
    for (int i = 0; i < 11; i++) {
        char comp[102];
        memset(comp, 'a' + i, 100);
        comp[100] = '/';
        comp[101] = '\0';
        strcat(longp, comp);
    }
    strcat(longp, "run");
    kw_rf_expect(dir, 2, "too long", KW_RF_ARGS("tune", "--space", space, "--budget", "5", "--out",
                                                longp, "--quiet"));
    cr_assert_eq(kw_tl_entries(dir), 1, "a folder was created for a path that does not fit");
    kw_tl_rmrf(dir);
}

/* A new run goes into a new or empty folder: --out . in a folder of the
 * user's (a source tree, /etc as root) used to scatter a run's seven files
 * among the user's, since none of their names collided. Refused, exit 2,
 * nothing added; the stub a run cut before its first record leaves (its
 * .lock and an empty journal) is still taken. */
Test(runfolder, out_into_a_folder_holding_the_users_files_is_refused)
{
    char *dir = kw_tl_tmpdir("kwrunfolder");
    char p[4300], space[4200];
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    snprintf(p, sizeof p, "%s/notes.txt", dir);
    kw_rf_put(p, "mine\n");
    kw_rf_expect(dir, 2, "'notes.txt', which no run writes",
                 KW_RF_ARGS("tune", "--space", space, "--budget", "5", "--out", ".", "--quiet"));
    cr_assert_eq(kw_tl_entries(dir), 1, "the refused run left something beside the user's file");
    snprintf(p, sizeof p, "%s/stub", dir);
    cr_assert_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/stub/.lock", dir);
    kw_rf_put(p, "");
    snprintf(p, sizeof p, "%s/stub/journal", dir);
    kw_rf_put(p, "");
    kw_rf_expect(dir, 0, NULL,
                 KW_RF_ARGS("tune", "--space", space, "--budget", "5", "--out", "stub", "--quiet"));
    kw_tl_rmrf(dir);
}

/* ---- 4. no symbolic link is followed out of the run folder ---- */

/* A file-size limit as a shell's `ulimit -f` sets it (SIGXFSZ at its default)
 * is a write error like a full disk: exit 1 naming the file, no temp file left
 * beside the output, and a tune cut short by it resumes. SIGXFSZ used to kill
 * knobwise mid-write (status 128 + 25, no message, .r.html.tmp.XXXXXX left). */
Test(runfolder, file_size_limit_is_a_clean_write_error)
{
    char *dir = kw_rf_run();
    kw_tl_opts o = kw_rf_opts(dir);
    o.fsize_limit_kb = 8;
    o.fsize_as_shell = 1;
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "report", "run", "-o", "r.html", "--no-portability",
                             NULL);
    cr_assert_eq(r.status, 1, "report under ulimit -f: exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "r.html") != NULL, "%s", r.err);
    kw_tl_free(&r);
    cr_assert_eq(kw_tl_entries(dir), 1, "report left files beside run/ in %s", dir);
    char space[4200];
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", space, "--budget", "40", "--out", "cut",
                  "--quiet", NULL);
    cr_assert_eq(r.status, 1, "tune under ulimit -f: exit %d: %s", r.status, r.err);
    kw_tl_free(&r);
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("tune", "--resume", "cut", "--quiet"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("verify", "cut", "--no-eval"));
    kw_tl_rmrf(dir);
}

/* A finished run with a result file deleted is not "verified" (it was: only the
 * files present were compared); resume writes the file again. */
Test(runfolder, complete_run_missing_a_result_file_does_not_verify)
{
    static const char *const names[] = {"results.xml", "ranked.csv", "audit.csv"};
    char *dir = kw_rf_run();
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[4300];
        snprintf(p, sizeof p, "%s/run/%s", dir, names[i]);
        cr_assert_eq(unlink(p), 0, "%s", p);
        snprintf(p, sizeof p, "run/%s: missing from a complete run", names[i]);
        kw_rf_expect(dir, 1, p, KW_RF_ARGS("verify", "run", "--no-eval"));
        kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("tune", "--resume", "run", "--quiet"));
        kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("verify", "run", "--no-eval"));
    }
    kw_tl_rmrf(dir);
}

/* How many times the files of folder dir named `name` were opened while
 * `knobwise ARGS` ran there (inotify on the folder; the kernel queues the
 * events, so the count is exact once the command has ended). */
static int kw_rf_opens(const char *dir, const char *sub, const char *name, int want,
                       const char *const *args)
{
    char d[4300];
    snprintf(d, sizeof d, "%s/%s", dir, sub);
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    cr_assert(fd >= 0, "inotify_init1");
    /* IN_CLOSE too: the kernel merges an event into an identical last one, so
     * open, open with nothing between would count once */
    cr_assert(inotify_add_watch(fd, d, IN_OPEN | IN_CLOSE) >= 0, "inotify_add_watch %s", d);
    kw_rf_expect(dir, want, NULL, args);
    int opens = 0;
    char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *e = (const struct inotify_event *)p;
            cr_assert(!(e->mask & IN_Q_OVERFLOW), "inotify queue overflow");
            opens += (e->mask & IN_OPEN) && e->len > 0 && strcmp(e->name, name) == 0;
            p += sizeof *e + e->len;
        }
    close(fd);
    return opens;
}

/* verify reads results.xml once: the schema checks the document parsed from
 * those bytes. It opened the file a second time by path for the schema
 * (kw_load_validate_file), so a file swapped in between was the one the
 * schema checked (2 opens on the old binary). A results.xml that is some
 * other knobwise file is named as such (it was validated as that file). */
Test(runfolder, verify_reads_results_xml_once)
{
    char *dir = kw_rf_run();
    int opens = kw_rf_opens(dir, "run", "results.xml", 0, KW_RF_ARGS("verify", "run", "--no-eval"));
    cr_assert_eq(opens, 1, "verify opened run/results.xml %d times", opens);
    char p[4300];
    snprintf(p, sizeof p, "%s/run/results.xml", dir);
    cr_assert_eq(unlink(p), 0);
    char src[4300];
    snprintf(src, sizeof src, "%s/spaces/accel/h100.xml", kw_tl_src());
    size_t n;
    char *acc = kw_rf_slurp(src, &n);
    kw_rf_put(p, acc);
    free(acc);
    kw_rf_expect(dir, 1, "run/results.xml:", KW_RF_ARGS("verify", "run", "--no-eval"));
    kw_rf_expect(dir, 1, "root element is 'accelerator', expected 'results'",
                 KW_RF_ARGS("verify", "run", "--no-eval"));
    kw_tl_rmrf(dir);
}

/* -o naming a file the run read (its space, the accelerator and workload the
 * space names) is refused by report, recommend and export even with --force:
 * it was replaced, and the run could then neither resume nor verify. */
Test(runfolder, outputs_never_replace_the_runs_inputs)
{
    char *dir = kw_tl_tmpdir("kwrunfolder");
    cr_assert(dir);
    static const char *const copies[][2] = {{"spaces/validate_small.xml", "s.xml"},
                                            {"spaces/accel/h100.xml", "a.xml"},
                                            {"spaces/workloads/llama7b.xml", "w.xml"}};
    char *before[3];
    for (int i = 0; i < 3; i++) {
        char from[4300], to[4300];
        snprintf(from, sizeof from, "%s/%s", kw_tl_src(), copies[i][0]);
        snprintf(to, sizeof to, "%s/%s", dir, copies[i][1]);
        char *text = kw_rf_slurp(from, &(size_t){0});
        if (i == 0) { /* the space names the copies beside it */
            char *t = strstr(text, "accel/h100.xml"), *u;
            memmove(t, "a.xml\"/>", 8);
            memmove(t + 8, strchr(t + 8, '\n'), strlen(strchr(t + 8, '\n')) + 1);
            u = strstr(text, "workloads/llama7b.xml");
            memmove(u, "w.xml\"/>", 8);
            memmove(u + 8, strchr(u + 8, '\n'), strlen(strchr(u + 8, '\n')) + 1);
        }
        kw_rf_put(to, text);
        before[i] = text;
    }
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("tune", "--space", "s.xml", "--budget", "10", "--out",
                                          "run", "--quiet"));
    for (int i = 0; i < 3; i++) {
        const char *f = copies[i][1];
        kw_rf_expect(dir, 2, "is an input of the run",
                     KW_RF_ARGS("report", "run", "-o", f, "--force", "--no-portability"));
        kw_rf_expect(dir, 2, "is an input of the run",
                     KW_RF_ARGS("recommend", "run", "--all", "-o", f, "--force"));
        kw_rf_expect(dir, 2, "is an input of the run",
                     KW_RF_ARGS("export", "run", "--format", "json", "-o", f, "--force"));
        char p[4300];
        snprintf(p, sizeof p, "%s/%s", dir, f);
        char *now = kw_rf_slurp(p, &(size_t){0});
        cr_assert_str_eq(now, before[i], "%s changed", f);
        free(now);
    }
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("verify", "run", "--no-eval"));
    for (int i = 0; i < 3; i++)
        free(before[i]);
    kw_tl_rmrf(dir);
}

/* Nor a file the verb itself reads through its own options: report and
 * recommend --all with --space/--accel/--workload (recommend RUN --all
 * --space S -o S --force replaced S), export of a mappings.csv outside any
 * run folder onto itself. */
Test(runfolder, outputs_never_replace_a_file_the_verb_reads)
{
    char *dir = kw_rf_run();
    char src[4300];
    static const char *const copies[][2] = {{"spaces/validate_small.xml", "s.xml"},
                                            {"spaces/accel/h100.xml", "a.xml"},
                                            {"spaces/workloads/llama7b.xml", "w.xml"}};
    char *before[3];
    for (int i = 0; i < 3; i++) {
        char to[4300];
        snprintf(src, sizeof src, "%s/%s", kw_tl_src(), copies[i][0]);
        snprintf(to, sizeof to, "%s/%s", dir, copies[i][1]);
        before[i] = kw_rf_slurp(src, &(size_t){0});
        kw_rf_put(to, before[i]);
    }
    static const char *const opt[3] = {"--space", "--accel", "--workload"};
    for (int i = 0; i < 3; i++) {
        const char *f = copies[i][1];
        kw_rf_expect(dir, 2, "file itself, read by this command",
                     KW_RF_ARGS("report", "run", opt[i], f, "-o", f, "--force"));
        kw_rf_expect(dir, 2, "file itself, read by this command",
                     KW_RF_ARGS("recommend", "run", "--all", opt[i], f, "-o", f, "--force"));
        char p[4300];
        snprintf(p, sizeof p, "%s/%s", dir, f);
        char *now = kw_rf_slurp(p, &(size_t){0});
        cr_assert_str_eq(now, before[i], "%s changed", f);
        free(now);
        free(before[i]);
    }
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("recommend", "run", "--all", "-o", "m.csv"));
    char mp[4300];
    snprintf(mp, sizeof mp, "%s/m.csv", dir);
    size_t n0, n1;
    char *m0 = kw_rf_slurp(mp, &n0);
    kw_rf_expect(dir, 2, "file itself, read by this command",
                 KW_RF_ARGS("export", "m.csv", "--format", "json", "-o", "m.csv", "--force"));
    char *m1 = kw_rf_slurp(mp, &n1);
    cr_assert(n0 == n1 && memcmp(m0, m1, n0) == 0, "export replaced the mappings.csv it read");
    free(m0);
    free(m1);
    kw_tl_rmrf(dir);
}

Test(runfolder, symlink_at_the_journal_is_refused_not_followed)
{
    char *dir = kw_tl_tmpdir("kwrunfolder");
    char p[4300], target[4300];
    snprintf(p, sizeof p, "%s/run", dir);
    cr_assert_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/run/journal", dir);
    snprintf(target, sizeof target, "%s/outside", dir);
    cr_assert_eq(symlink(target, p), 0); /* dangling */
    char space[4200];
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    kw_rf_expect(dir, 2, "journal", KW_RF_ARGS("tune", "--space", space, "--budget", "5", "--out",
                                               "run", "--quiet"));
    struct stat st;
    cr_assert(lstat(target, &st) != 0, "the journal was written outside the run folder");
    /* a link to a real journal is refused by the readers and by resume too */
    kw_tl_rmrf(dir);
    dir = kw_rf_run();
    char real[4300];
    snprintf(real, sizeof real, "%s/run/journal", dir);
    snprintf(target, sizeof target, "%s/elsewhere", dir);
    cr_assert_eq(rename(real, target), 0);
    cr_assert_eq(symlink(target, real), 0);
    size_t n0;
    char *before = kw_rf_slurp(target, &n0);
    kw_rf_expect(dir, 2, "symbolic link", KW_RF_ARGS("tune", "--resume", "run", "--quiet"));
    kw_rf_expect(dir, 2, "symbolic link", KW_RF_ARGS("verify", "run", "--no-eval"));
    size_t n1;
    char *after = kw_rf_slurp(target, &n1);
    cr_assert(n0 == n1 && memcmp(before, after, n0) == 0);
    free(before);
    free(after);
    kw_tl_rmrf(dir);
}

/* The one rule for links (kw_runfile.h): a run folder's own files are never
 * read through one, by any verb and however named (the manifest rows
 * rf_*_symlink*); a link a person made elsewhere to a run's files is an input
 * like any other and is followed: export and validate of it work. */
Test(runfolder, a_link_the_user_made_is_followed_a_run_folders_own_is_not)
{
    char *dir = kw_rf_run();
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("recommend", "run", "--all"));
    char p[4300];
    snprintf(p, sizeof p, "%s/current.xml", dir);
    cr_assert_eq(symlink("run/results.xml", p), 0);
    snprintf(p, sizeof p, "%s/current.csv", dir);
    cr_assert_eq(symlink("run/mappings.csv", p), 0);
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("export", "current.xml", "--format", "json"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("export", "current.csv", "--format", "c-header"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("validate", "current.xml"));
    /* the same files named in the run folder are read too: they are files */
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("export", "run/results.xml", "--format", "json"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("export", "run/mappings.csv", "--format", "json"));
    /* a run folder's own file swapped for a link to another of its files is
     * still a link: refused */
    snprintf(p, sizeof p, "%s/run/results.xml", dir);
    char q[4300];
    snprintf(q, sizeof q, "%s/run/kept.xml", dir);
    cr_assert_eq(rename(p, q), 0);
    cr_assert_eq(symlink("kept.xml", p), 0);
    kw_rf_expect(dir, 2, "run/results.xml: is a symbolic link",
                 KW_RF_ARGS("export", "run", "--format", "json"));
    kw_rf_expect(dir, 2, "run/results.xml: is a symbolic link",
                 KW_RF_ARGS("verify", "run", "--no-eval"));
    kw_tl_rmrf(dir);
}

/* A run's results.xml over the 4 MiB limit for input files is still read by
 * verify and export (a run of 49 shapes writes 4.4 MB; both said "over the 4
 * MiB limit for input files", exit 2): the limit for files knobwise writes is
 * KW_XML_MAX_OUTPUT_BYTES. Whitespace after the root element makes the file
 * big without changing the document. */
Test(runfolder, results_over_the_input_limit_are_still_read)
{
    char *dir = kw_rf_run();
    char p[4300];
    snprintf(p, sizeof p, "%s/run/results.xml", dir);
    FILE *f = fopen(p, "ab");
    cr_assert(f);
    for (int i = 0; i < (5 << 20) / 64; i++)
        fputs("                                                               \n", f);
    cr_assert_eq(fclose(f), 0);
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("verify", "run", "--no-eval"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("export", "run", "--format", "json", "-o", "e.json"));
    /* validate opens it once: libxml2 finds the root in the first 4 KiB read
     * from the one descriptor (the old binary opened it 5 times: a
     * hand-written prolog scanner's peek, the read, then three tries to load
     * it as a workload and a space for the deep checks), and a UTF-8 byte
     * order mark, which libxml2 reads and the scanner did not, does not hide
     * the root (the old binary: "over the 4 MiB limit for input files", 2) */
    int opens = kw_rf_opens(dir, "run", "results.xml", 0, KW_RF_ARGS("validate", "run/results.xml"));
    cr_assert_eq(opens, 1, "validate opened run/results.xml %d times", opens);
    size_t rn;
    char *rx = kw_rf_slurp(p, &rn);
    char b[4300];
    snprintf(b, sizeof b, "%s/bom.xml", dir);
    FILE *bf = fopen(b, "wb");
    cr_assert(bf);
    cr_assert_eq(fwrite("\xEF\xBB\xBF", 1, 3, bf), 3u);
    cr_assert_eq(fwrite(rx, 1, rn, bf), rn);
    cr_assert_eq(fclose(bf), 0);
    free(rx);
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("validate", "bom.xml"));
    /* any other file over the input limit is still refused unread */
    char q[4300];
    snprintf(q, sizeof q, "%s/big.xml", dir);
    FILE *g = fopen(q, "wb");
    cr_assert(g);
    fputs("<?xml version=\"1.0\"?>\n<!-- <results> -->\n<space/>\n", g);
    for (int i = 0; i < (5 << 20) / 64; i++)
        fputs("                                                               \n", g);
    cr_assert_eq(fclose(g), 0);
    kw_rf_expect(dir, 2, "big.xml:1: file is", KW_RF_ARGS("validate", "big.xml"));
    kw_rf_expect(dir, 2, "over the 4 MiB limit for input files", KW_RF_ARGS("validate", "big.xml"));
    kw_tl_rmrf(dir);
}

/* ---- 5. stale temp files ---- */

Test(runfolder, resume_removes_stale_temp_files)
{
    char *dir = kw_rf_run();
    char p[4300], keep[4300];
    snprintf(p, sizeof p, "%s/run/.results.xml.tmp.Ab12Cd", dir);
    kw_rf_put(p, "<results half written");
    snprintf(keep, sizeof keep, "%s/run/.notes.tmp.Ab12Cd", dir); /* not ours: kept */
    kw_rf_put(keep, "user's\n");
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("tune", "--resume", "run", "--quiet"));
    struct stat st;
    cr_assert(lstat(p, &st) != 0, "the stale temp file is still there");
    cr_assert(lstat(keep, &st) == 0, "a file that is not ours was removed");
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("verify", "run", "--no-eval"));
    kw_tl_rmrf(dir);
}

/* A temp file that a SIGKILL left beside report.html or mappings.csv (in the
 * run folder or beside -o) is removed by the next write of the same output
 * (kw_tmpfile_sweep); they stayed for ever (only tune --resume swept, its own
 * four names). Planted as a kill leaves them: named .NAME.tmp.XXXXXX, no
 * writer's lock on them. One a live writer holds (its OFD lock, as
 * kw_tmpfile_open takes it) is kept, as are another output's temps and files
 * that only look alike. */
static int kw_rf_lock_temp(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    cr_assert(fd >= 0, "%s", path);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    cr_assert_eq(fcntl(fd, F_OFD_SETLK, &fl), 0);
    return fd;
}

Test(runfolder, a_killed_writers_temp_is_swept_by_the_next_write_of_that_output)
{
    char *dir = kw_rf_run();
    const char *stale[] = {"run/.report.html.tmp.Ab12Cd", "run/.mappings.csv.tmp.x9Y8z7",
                           ".r.html.tmp.QwErTy", ".m.csv.tmp.000000"};
    const char *kept[] = {"run/.report.html.tmp.Ab12C",  /* five random characters: not a temp */
                          "run/.report.html.tmp.Ab12Cde", /* seven */
                          "run/report.html.tmp.Ab12Cd",   /* not hidden */
                          "run/.notes.tmp.Ab12Cd",        /* another name */
                          ".report.html.tmp.Ab12Cd"};     /* report.html's, but -o is r.html */
    char p[4400];
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, stale[i]);
        kw_rf_put(p, "half writ");
    }
    for (size_t i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, kept[i]);
        kw_rf_put(p, "user's\n");
    }
    char live[4400];
    snprintf(live, sizeof live, "%s/run/.report.html.tmp.L1veW7", dir);
    int hold = kw_rf_lock_temp(live); /* a report writing now */
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("report", "run", "--no-portability"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("recommend", "run", "--all"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("report", "run", "-o", "r.html", "--no-portability"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("recommend", "run", "--all", "-o", "m.csv"));
    struct stat st;
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, stale[i]);
        cr_expect(lstat(p, &st) != 0, "%s: a killed writer's temp file is still there", stale[i]);
    }
    for (size_t i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, kept[i]);
        cr_expect(lstat(p, &st) == 0, "%s: a file knobwise did not make was removed", kept[i]);
    }
    cr_expect(lstat(live, &st) == 0, "a live writer's temp file was removed");
    close(hold);
    kw_tl_rmrf(dir);
}

/* A run killed while writing its journal's header (nothing evaluated yet):
 * resume said "start it again in a new folder", exit 1. Once the header
 * holds every A record (the run's options), resume rebuilds the rest from
 * the run's inputs and the journal comes out byte for byte the uninterrupted
 * run's; cut before that, it is exit 2 saying what happened and how to start
 * again, with the journal untouched. */
Test(runfolder, a_run_killed_while_writing_its_header_resumes_or_says_how_to_restart)
{
    char *dir = kw_rf_run();
    char jp[4300], cut[4300];
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    size_t n;
    char *full = kw_rf_slurp(jp, &n);
    /* where the A records end, and the K record after them */
    const char *last_a = NULL, *k = strstr(full, "\nK ");
    for (const char *p = strstr(full, "\nA "); p; p = strstr(p + 1, "\nA "))
        last_a = p;
    cr_assert(last_a && k && k > last_a);
    size_t after_a = (size_t)(strchr(last_a + 1, '\n') + 1 - full);
    size_t cuts[] = {after_a, after_a + 7, (size_t)(k - full) + 1 + 9}; /* whole, torn I, torn K */
    for (int i = 0; i < 3; i++) {
        snprintf(cut, sizeof cut, "%s/cut%d", dir, i);
        cr_assert_eq(mkdir(cut, 0755), 0);
        snprintf(cut, sizeof cut, "%s/cut%d/journal", dir, i);
        FILE *f = fopen(cut, "wb");
        cr_assert(f && fwrite(full, 1, cuts[i], f) == cuts[i] && fclose(f) == 0);
        char name[64];
        snprintf(name, sizeof name, "cut%d", i);
        kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("tune", "--resume", name, "--quiet"));
        size_t m;
        char *again = kw_rf_slurp(cut, &m);
        cr_expect(m == n && memcmp(again, full, n) == 0, "cut at %zu: the resumed journal differs",
                  cuts[i]);
        free(again);
        kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("verify", name, "--no-eval"));
    }
    /* cut inside the A records: the options are not all there */
    size_t early = (size_t)(strstr(full, "\nA ") - full) + 1;
    cr_assert_eq(mkdir(strcat(strcpy(cut, dir), "/early"), 0755), 0);
    strcat(cut, "/journal");
    FILE *f = fopen(cut, "wb");
    cr_assert(f && fwrite(full, 1, early, f) == early && fclose(f) == 0);
    kw_rf_expect(dir, 2, "cannot be resumed and nothing is lost",
                 KW_RF_ARGS("tune", "--resume", "early", "--quiet"));
    size_t m;
    char *kept = kw_rf_slurp(cut, &m);
    cr_expect(m == early && memcmp(kept, full, early) == 0, "the cut journal was changed");
    free(kept);
    /* the readers say the same, exit 2 (they said "header: header names no knobs", exit 1) */
    kw_rf_expect(dir, 2, "stopped while writing its journal's header", KW_RF_ARGS("audit", "early"));
    kw_rf_expect(dir, 2, "stopped while writing its journal's header",
                 KW_RF_ARGS("verify", "early", "--no-eval"));
    snprintf(cut, sizeof cut, "%s/early", dir);
    cr_expect_eq(kw_tl_entries(cut), 2, "resume left files beside the journal and the lock");
    free(full);
    kw_tl_rmrf(dir);
}

/* A run killed while writing its journal's very first record (the file is
 * one line, cut short): nothing was evaluated, as when the header is cut
 * later, so every verb says so, exit 2, the journal untouched (they said "no
 * journal record (the first record is torn)", exit 1). A one-line file that
 * is not a journal's beginning: the test below. */
Test(runfolder, a_run_killed_while_writing_its_first_record_says_how_to_restart)
{
    char *dir = kw_rf_run();
    char jp[4300], cut[4300];
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    size_t n;
    char *full = kw_rf_slurp(jp, &n);
    size_t first = (size_t)(strchr(full, '\n') - full);
    size_t cuts[] = {1, first / 2, first}; /* "H", mid-line, all but its newline */
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "first%d", i);
        snprintf(cut, sizeof cut, "%s/%s", dir, name);
        cr_assert_eq(mkdir(cut, 0755), 0);
        strcat(cut, "/journal");
        FILE *f = fopen(cut, "wb");
        cr_assert(f && fwrite(full, 1, cuts[i], f) == cuts[i] && fclose(f) == 0);
        kw_rf_expect(dir, 2, "its first record is torn",
                     KW_RF_ARGS("tune", "--resume", name, "--quiet"));
        kw_rf_expect(dir, 2, "cannot be resumed and nothing is lost",
                     KW_RF_ARGS("tune", "--resume", name, "--quiet"));
        kw_rf_expect(dir, 2, "stopped while writing its journal's header",
                     KW_RF_ARGS("audit", name));
        kw_rf_expect(dir, 2, "stopped while writing its journal's header",
                     KW_RF_ARGS("verify", name, "--no-eval"));
        kw_rf_expect(dir, 2, "stopped while writing its journal's header",
                     KW_RF_ARGS("report", name));
        size_t m;
        char *kept = kw_rf_slurp(cut, &m);
        cr_expect(m == cuts[i] && memcmp(kept, full, m) == 0, "cut at %zu: the journal was changed",
                  cuts[i]);
        free(kept);
        snprintf(cut, sizeof cut, "%s/%s", dir, name);
        cr_expect_eq(kw_tl_entries(cut), 2, "files beside the journal and the lock");
    }
    free(full);
    kw_tl_rmrf(dir);
}

/* A journal that is another file, or a damaged one, is bad input: every verb
 * names the file and its line, exit 2, and nothing is written (not even the
 * lock file). main's binary said exit 1, read another file's many lines as
 * "record 1: ... corruption in the middle of the journal", and tune --resume
 * left a .lock in a folder that held no run. verify keeps its verdict on a
 * damaged journal of a run (FAIL, exit 1); on another file it is exit 2. */
Test(runfolder, a_foreign_or_damaged_journal_is_bad_input_naming_its_line)
{
    char *dir = kw_rf_run();
    static const char *const other[] = {"shape,id,time", "shape,id,time\n1,2,3\n4,5,6\n"};
    for (int i = 0; i < 2; i++) {
        char name[32], p[4300];
        snprintf(name, sizeof name, "other%d", i);
        snprintf(p, sizeof p, "%s/%s", dir, name);
        cr_assert_eq(mkdir(p, 0755), 0);
        strcat(p, "/journal");
        FILE *f = fopen(p, "wb");
        cr_assert(f && fputs(other[i], f) >= 0 && fclose(f) == 0);
        const char *want = i ? "/journal:1: not a knobwise journal" : "/journal:1: no journal record";
        kw_rf_expect(dir, 2, want, KW_RF_ARGS("tune", "--resume", name, "--quiet"));
        kw_rf_expect(dir, 2, want, KW_RF_ARGS("audit", name));
        kw_rf_expect(dir, 2, want, KW_RF_ARGS("report", name));
        kw_rf_expect(dir, 2, want, KW_RF_ARGS("recommend", name, "--all"));
        kw_rf_expect(dir, 2, want, KW_RF_ARGS("verify", name, "--no-eval"));
        snprintf(p, sizeof p, "%s/%s", dir, name);
        cr_expect_eq(kw_tl_entries(p), 1, "%s: files written beside the file", name);
    }
    /* a run's journal damaged at its 5th line */
    char jp[4300];
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    size_t n;
    char *b = kw_rf_slurp(jp, &n);
    char *at = b;
    for (int line = 1; line < 5; line++)
        at = strchr(at, '\n') + 1;
    at[2] ^= 0x01;
    FILE *f = fopen(jp, "wb");
    cr_assert(f && fwrite(b, 1, n, f) == n && fclose(f) == 0);
    kw_rf_expect(dir, 2, "run/journal:5: ", KW_RF_ARGS("tune", "--resume", "run", "--quiet"));
    kw_rf_expect(dir, 2, "run/journal:5: ", KW_RF_ARGS("audit", "run"));
    kw_rf_expect(dir, 2, "run/journal:5: ", KW_RF_ARGS("recommend", "run", "--all"));
    kw_rf_expect(dir, 1, "run/journal:5: ", KW_RF_ARGS("verify", "run", "--no-eval"));
    size_t m;
    char *kept = kw_rf_slurp(jp, &m);
    cr_expect(m == n && memcmp(kept, b, n) == 0, "the damaged journal was changed");
    free(kept);
    free(b);
    kw_tl_rmrf(dir);
}

/* ---- 2. one writer per run folder ---- */

Test(runfolder, second_writer_refused_readers_keep_working)
{
    char *dir = kw_tl_tmpdir("kwrunfolder");
    kw_tl_opts o = kw_rf_opts(dir);
    /* the embedded default job with one thread runs for the whole time limit */
    const char *argv[] = {kw_tl_bin(), "tune", "--out", "run", "--quiet", "--threads", "1",
                          "--time-limit", "4", NULL};
    int ofd = kw_tl_tmpfile(), efd = kw_tl_tmpfile();
    pid_t pid = kw_tl_spawn(argv, &o, ofd, efd);
    cr_assert(pid > 0);
    char jp[4300];
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    struct stat st;
    double t0 = kw_tl_now();
    while ((stat(jp, &st) != 0 || st.st_size < 4096) && kw_tl_now() - t0 < 20)
        usleep(10000);
    cr_assert(st.st_size >= 4096, "the first tune did not start");
    kw_rf_expect(dir, 2, "another knobwise", KW_RF_ARGS("tune", "--resume", "run", "--quiet"));
    char space[4200];
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    kw_rf_expect(dir, 2, NULL, KW_RF_ARGS("tune", "--out", "run", "--quiet"));
    int reads = 0;
    /* WNOWAIT: the writer is only looked at here, reaped by kw_tl_wait below
     * (a plain WNOHANG reaped a writer that had just ended, and the wait then
     * returned -1) */
    siginfo_t si;
    while (reads < 6 && (memset(&si, 0, sizeof si),
                         waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0) &&
           si.si_pid == 0) {
        kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("verify", "run", "--no-eval"));
        kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("audit", "run"));
        reads++;
    }
    cr_assert_gt(reads, 0, "the writer ended before any reader ran");
    int status;
    int timed_out = 0;
    long rss;
    status = kw_tl_wait(pid, kw_tl_now() + 60, &timed_out, &rss);
    cr_assert_eq(status, 0, "the first tune: %d", status);
    close(ofd);
    close(efd);
    /* no interleaving: the journal verifies, and the next resume is allowed */
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("verify", "run", "--no-eval"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("tune", "--resume", "run", "--quiet", "--threads", "1",
                                          "--time-limit", "1"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("verify", "run", "--no-eval"));
    kw_tl_rmrf(dir);
}

/* ---- 3. every input hashed ---- */

Test(runfolder, changed_workload_trace_stops_resume_naming_it)
{
    char *dir = kw_tl_tmpdir("kwrunfolder");
    char p[4300];
    snprintf(p, sizeof p, "%s/t.csv", dir);
    kw_rf_put(p, "time_us,stream,shape\n0,0,t\n100,1,t\n250,2,t\n400,3,t\n900,0,t\n");
    snprintf(p, sizeof p, "%s/wl.xml", dir);
    kw_rf_put(p, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<workload name=\"tw\">\n"
                 "  <source>runfolder trace test</source>\n"
                 "  <block name=\"b\"><gemm name=\"q\" group=\"qkv\" n=\"256\" k=\"256\"/></block>\n"
                 "  <shape name=\"t\" block=\"b\" phase=\"decode\" kv_len=\"128\" batch=\"1\" "
                 "streams=\"4\" arrival=\"trace\" trace=\"t.csv\"/>\n</workload>\n");
    snprintf(p, sizeof p, "%s/space.xml", dir);
    FILE *f = fopen(p, "w");
    cr_assert(f != NULL);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<space name=\"ts\" block=\"b\">\n"
               "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n  <workload file=\"wl.xml\"/>\n"
               "  <knob name=\"qkv.tile_m\" values=\"64 128\" baseline=\"64\"/>\n"
               "  <tuning sim_requests=\"50\" final_requests=\"100\"/>\n</space>\n",
            kw_tl_src());
    cr_assert_eq(fclose(f), 0);
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("tune", "--space", "space.xml", "--out", "run",
                                          "--quiet"));
    kw_rf_expect(dir, 0, NULL, KW_RF_ARGS("tune", "--resume", "run", "--quiet"));
    snprintf(p, sizeof p, "%s/t.csv", dir);
    kw_rf_put(p, "time_us,stream,shape\n0,0,t\n10,1,t\n20,2,t\n30,3,t\n40,0,t\n");
    char jp[4300];
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    size_t n0;
    char *before = kw_rf_slurp(jp, &n0);
    kw_rf_expect(dir, 2, "t.csv", KW_RF_ARGS("tune", "--resume", "run", "--quiet"));
    size_t n1;
    char *after = kw_rf_slurp(jp, &n1);
    cr_assert(n0 == n1 && memcmp(before, after, n0) == 0, "a refused resume changed the journal");
    free(before);
    free(after);
    /* the I record names the trace, so verify's re-evaluation is refused too */
    kw_rf_expect(dir, 1, "t.csv", KW_RF_ARGS("verify", "run"));
    kw_tl_rmrf(dir);
}

/* ---- 6. every reader checks the header; empty journals; record bound ---- */

/* Set field KEY of record 1 (the H record) to value and reseal the checksums
 * (kw_journal_reseal: the edit is then invisible to the checksums, only the
 * header checks can catch it). */
/* The journal jp written again as b (n bytes, freed here) with [at, end)
 * replaced by value, then resealed (kw_journal_reseal). */
static void kw_rf_splice_reseal(const char *jp, char *b, size_t n, const char *at, const char *end,
                                const char *value)
{
    cr_assert(end);
    FILE *f = fopen(jp, "wb");
    cr_assert(f);
    fwrite(b, 1, (size_t)(at - b), f);
    fputs(value, f);
    fwrite(end, 1, n - (size_t)(end - b), f);
    cr_assert_eq(fclose(f), 0);
    free(b);
    cr_assert_eq(kw_journal_reseal(jp), 0);
}

static void kw_rf_edit_header(const char *jp, const char *key, const char *value)
{
    size_t n;
    char *b = kw_rf_slurp(jp, &n);
    char *nl = strchr(b, '\n');
    cr_assert(nl);
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", key);
    char *at = strstr(b, pat);
    cr_assert(at && at < nl, "no '%s' in the header", key);
    at += strlen(pat);
    kw_rf_splice_reseal(jp, b, n, at, strchr(at, ' '), value);
}

/* want: every reader's exit status but verify's; a damaged journal (want 2
 * with verify_fails) is verify's FAIL verdict, exit 1. */
static void kw_rf_every_reader(const char *dir, int want, int verify_fails, const char *sub)
{
    kw_rf_expect(dir, verify_fails ? 1 : want, sub, KW_RF_ARGS("verify", "run", "--no-eval"));
    kw_rf_expect(dir, want, sub, KW_RF_ARGS("audit", "run"));
    kw_rf_expect(dir, want, sub, KW_RF_ARGS("report", "run", "-o", "r.html"));
    kw_rf_expect(dir, want, sub, KW_RF_ARGS("recommend", "run", "--all", "-o", "m.csv"));
    kw_rf_expect(dir, want, sub, KW_RF_ARGS("tune", "--resume", "run", "--quiet"));
}

Test(runfolder, resealed_header_edits_refused_by_every_reader)
{
    static const char *const edits[][3] = {
        {"version", "9.9.9", "9.9.9"},     /* newer than any knobwise that reads it */
        {"repeats", "1000000", "repeats"}, /* the engine runs at most 1024 */
        {"tabu", "9999", "tabu"},          /* the engine allows 0..KW_TABU_MAX */
        {"alpha", "7", "alpha"},           /* a p-value threshold in (0, 1) */
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *dir = kw_rf_run();
        char jp[4300];
        snprintf(jp, sizeof jp, "%s/run/journal", dir);
        kw_rf_edit_header(jp, edits[i][0], edits[i][1]);
        /* damage: exit 2 since 2026-12-06 (was 1), verify's verdict FAIL */
        kw_rf_every_reader(dir, 2, 1, edits[i][2]);
        struct stat st;
        char p[4300];
        snprintf(p, sizeof p, "%s/r.html", dir);
        cr_assert(stat(p, &st) != 0, "report wrote a file from a refused journal");
        kw_tl_rmrf(dir);
    }
}

/* The journal jp as a knobwise with `drop` fewer metrics at the end of the
 * model's table wrote it (before stop 48: without the TTFT/TPOT p99
 * intervals): the M record's last names and every E record's last values
 * dropped, resealed. */
static void kw_rf_drop_metrics(const char *jp, int drop)
{
    size_t n, at = 0;
    char *b = kw_rf_slurp(jp, &n), *out = malloc(n + 1); /* only shorter */
    cr_assert(out);
    for (const char *l = b; *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l + 1) : strlen(l);
        const char *list = strncmp(l, "M names=", 8) == 0 ? l + 8
                           : strncmp(l, "E ", 2) == 0     ? strstr(l, " m=") + 3
                                                          : NULL;
        const char *cut = l + len, *end = l + len;
        if (list) {
            end = list + strcspn(list, " \n");
            cut = end;
            for (int k = 0; k < drop; k++) {
                while (cut > list && *--cut != ',')
                    ;
            }
            cr_assert(cut > list);
        }
        memcpy(out + at, l, (size_t)(cut - l));
        at += (size_t)(cut - l);
        memcpy(out + at, end, len - (size_t)(end - l));
        at += len - (size_t)(end - l);
        l += len;
    }
    out[at] = '\0';
    free(b);
    kw_rf_put(jp, out);
    free(out);
    cr_assert_eq(kw_journal_reseal(jp), 0);
}

/* A run whose journal names other metrics than this knobwise's (one written
 * before stop 48 added the TTFT/TPOT p99 intervals at the table's end) is
 * refused by tune --resume, exit 2, with its folder as it was: until stop
 * 48 the refusal came from the engine after RUN/evidence's end record was
 * cut, and the finished run then read as stopped before its evidence
 * (recommend's warning, whose `tune --resume` was refused). Its verify still
 * passes. Fails on main (evidence changed). */
Test(runfolder, a_run_of_another_versions_metrics_is_refused_on_resume_as_it_was)
{
    char *dir = kw_rf_run();
    char jp[4300], ep[4300], rp[4300];
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    snprintf(ep, sizeof ep, "%s/run/evidence", dir);
    snprintf(rp, sizeof rp, "%s/run/results.xml", dir);
    kw_rf_drop_metrics(jp, 4);
    kw_tl_opts o = kw_rf_opts(dir);
    kw_tl_proc v = kw_tl_run(&o, kw_tl_bin(), "verify", "run", NULL);
    cr_expect_eq(v.status, 0, "%s%s", v.out, v.err);
    kw_tl_free(&v);
    const char *path[3] = {jp, ep, rp};
    char *before[3];
    size_t n0[3];
    for (int i = 0; i < 3; i++)
        before[i] = kw_rf_slurp(path[i], &n0[i]);
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "tune", "--resume", "run", "--quiet", NULL);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect(strstr(r.err, "cannot be resumed") != NULL, "%s", r.err);
    kw_tl_free(&r);
    for (int i = 0; i < 3; i++) {
        size_t n1;
        char *after = kw_rf_slurp(path[i], &n1);
        cr_expect(n0[i] == n1 && memcmp(before[i], after, n1) == 0, "the refused resume changed %s",
                  path[i]);
        free(after);
        free(before[i]);
    }
    kw_tl_rmrf(dir);
}

/* An A record's value replaced (the journal resealed): "A key=KEY value=V". */
static void kw_rf_edit_attr(const char *jp, const char *key, const char *value)
{
    size_t n;
    char *b = kw_rf_slurp(jp, &n);
    char pat[96];
    snprintf(pat, sizeof pat, "\nA key=%s value=", key);
    char *at = strstr(b, pat);
    cr_assert(at, "no attribute '%s' in the journal", key);
    at += strlen(pat);
    char *end = strstr(at, " crc=");
    cr_assert(end);
    kw_rf_splice_reseal(jp, b, n, at, end, value);
}

/* The run's numeric attributes follow the header's rule: a value tune never
 * writes, resealed, is refused by every reader and by resume (main 52bf866
 * read them with atoi: sim_requests 'abc', -1 or 2^31 as the space's own
 * sample, verify "verified" and resume went on; 10^11 wrapped). The same
 * for a measured run's timeout and rate factors, read with atof and strtod
 * until 2026-12-07 (the rows from exec_timeout_s on fail on main 099d4d6):
 * exec_timeout_s=1e300 took the worker's timeout away on resume, -5 or abc
 * read as the space's, and every reader passed them. Values as the journal
 * holds them (%2C a comma). */
Test(runfolder, resealed_attribute_edits_refused_by_every_reader)
{
    static const char *const edits[][3] = {
        {"sim_requests", "abc", "attribute sim_requests=abc is not a whole number"},
        {"sim_requests", "-1", "attribute sim_requests=-1 is not a whole number"},
        {"sim_requests", "2147483648", "attribute sim_requests=2147483648 is not a whole number"},
        {"thermal", "2", "attribute thermal=2 is not a whole number"},
        {"drift", "x", "attribute drift=x is not a whole number"},
        {"model_seed", "-5", "attribute model_seed=-5 is not a whole number"},
        {"exec_timeout_s", "1e300", "exec_timeout_s=1e300 is not 0 nor a number of seconds"},
        {"exec_timeout_s", "-5", "exec_timeout_s=-5 is not 0 nor a number of seconds"},
        {"exec_timeout_s", "abc", "exec_timeout_s=abc is not 0 nor a number of seconds"},
        {"exec_timeout_s", "0x10", "exec_timeout_s=0x10 is not 0 nor a number of seconds"},
        {"exec_rate_scale", "abc", "exec_rate_scale=abc is not decimal numbers over 0"},
        {"exec_rate_scale", "1%2C-1", "exec_rate_scale=1,-1 is not decimal numbers over 0"},
        {"exec_rate_scale", "1%2C", "exec_rate_scale=1, is not decimal numbers over 0"},
        {"exec_rate_scale", "nan", "exec_rate_scale=nan is not decimal numbers over 0"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *dir = kw_rf_run();
        char jp[4300];
        snprintf(jp, sizeof jp, "%s/run/journal", dir);
        kw_rf_edit_attr(jp, edits[i][0], edits[i][1]);
        kw_rf_every_reader(dir, 2, 0, edits[i][2]);
        kw_tl_rmrf(dir);
    }
}

Test(runfolder, empty_journal_says_nothing_was_run)
{
    char *dir = kw_rf_run();
    char jp[4300];
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    kw_rf_put(jp, "");
    kw_rf_every_reader(dir, 2, 0, "nothing was run; start again");
    kw_tl_rmrf(dir);
}

Test(runfolder, huge_journal_record_bounded_memory_with_its_number)
{
    char *dir = kw_rf_run();
    char jp[4300];
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    size_t n;
    char *j = kw_rf_slurp(jp, &n);
    size_t off = 0;
    for (int rec = 1; rec < 30; rec++)
        off = (size_t)(strchr(j + off, '\n') - j) + 1;
    FILE *f = fopen(jp, "wb");
    cr_assert(f);
    fwrite(j, 1, off, f);
    char *fill = malloc(1 << 20);
    memset(fill, 'E', 1 << 20);
    for (unsigned i = 0; i < KW_RF_BIG_RECORD_BYTES >> 20; i++)
        fwrite(fill, 1, 1 << 20, f);
    fputc('\n', f);
    fwrite(j + off, 1, n - off, f);
    cr_assert_eq(fclose(f), 0);
    free(fill);
    free(j);
    kw_tl_opts o = kw_rf_opts(dir);
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "verify", "run", "--no-eval", NULL);
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert(strstr(r.err, "record 30") && strstr(r.err, "longer than"), "%s", r.err);
    cr_assert_lt(r.maxrss_kb, KW_RF_BIG_RECORD_RSS_KB, "verify peak RSS %ld KiB", r.maxrss_kb);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* ---- 7. memory bounded per input, not per option ---- */

/* A space over one shape "t" (4 streams) whose arrivals replay trace file
 * `trace` (relative to dir); written as dir/space_TAG.xml. */
static void kw_rf_trace_space(const char *dir, const char *tag, const char *trace)
{
    char p[4300];
    snprintf(p, sizeof p, "%s/wl_%s.xml", dir, tag);
    FILE *f = fopen(p, "w");
    cr_assert(f != NULL);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<workload name=\"tw\">\n"
               "  <source>runfolder trace test</source>\n"
               "  <block name=\"b\"><gemm name=\"q\" group=\"qkv\" n=\"256\" k=\"256\"/></block>\n"
               "  <shape name=\"t\" block=\"b\" phase=\"decode\" kv_len=\"128\" batch=\"1\" "
               "streams=\"4\" arrival=\"trace\" trace=\"%s\"/>\n</workload>\n", trace);
    cr_assert_eq(fclose(f), 0);
    snprintf(p, sizeof p, "%s/space_%s.xml", dir, tag);
    f = fopen(p, "w");
    cr_assert(f != NULL);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<space name=\"ts\" block=\"b\">\n"
               "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n  <workload file=\"wl_%s.xml\"/>\n"
               "  <knob name=\"qkv.tile_m\" values=\"64 128\" baseline=\"64\"/>\n"
               "  <tuning sim_requests=\"50\" final_requests=\"100\"/>\n</space>\n",
            kw_tl_src(), tag);
    cr_assert_eq(fclose(f), 0);
}

/* Under AddressSanitizer freed blocks wait in a quarantine (256 MB by default)
 * and count in the RSS as if still held: a trace loaded, freed and loaded
 * again would read as held twice. Peak-RSS checks turn the quarantine off in
 * the child (no effect on a build without ASan). */
static void kw_rf_no_quarantine(void)
{
    const char *o = getenv("ASAN_OPTIONS");
    if (o && strstr(o, "quarantine_size_mb=0"))
        return;
    char buf[2048];
    snprintf(buf, sizeof buf, "%s%squarantine_size_mb=0", o ? o : "", o && *o ? ":" : "");
    setenv("ASAN_OPTIONS", buf, 1);
}

static long kw_rf_tune_rss(const char *dir, const char *out, const char *threads, const char *space_tag)
{
    kw_rf_no_quarantine();
    char space[4200];
    if (space_tag)
        snprintf(space, sizeof space, "%s/space_%s.xml", dir, space_tag);
    else
        snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    kw_tl_opts o = kw_rf_opts(dir);
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", space, "--budget", "20", "--out",
                         out, "--threads", threads, NULL);
    cr_assert_eq(r.status, 0, "tune --threads %s: %s", threads, r.err);
    long rss = r.maxrss_kb;
    if (!space_tag && strcmp(threads, "256") == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (cpus < 256)
            cr_assert(strstr(r.err, "CPUs online") != NULL, "no note on --threads: %s", r.err);
    }
    kw_tl_free(&r);
    return rss;
}

Test(runfolder, threads_beyond_the_cpus_cost_no_memory)
{
    char *dir = kw_tl_tmpdir("kwrunfolder");
    char cpus[32];
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(cpus, sizeof cpus, "%ld", n < 1 ? 1 : n);
    long base = kw_rf_tune_rss(dir, "a", cpus, NULL);
    long many = kw_rf_tune_rss(dir, "b", "256", NULL);
    /* 256 threads ran as many as there are CPUs: within noise of that run */
    cr_assert_lt(many, base + base / 4 + 8192, "--threads 256: %ld KiB, --threads %s: %ld KiB",
                 many, cpus, base);
    kw_tl_rmrf(dir);
}

/* A trace of KW_RF_TRACE_ROWS rows is held once (16 bytes a row: time,
 * stream, shape), not once per evaluator (tune's search and its re-check). */
#define KW_RF_TRACE_ROWS 2000000
#define KW_RF_TRACE_ROW_BYTES 16
static void kw_rf_write_trace(const char *path, int rows)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("time_us,stream,shape\n", f);
    for (int i = 0; i < rows; i++)
        fprintf(f, "%d,%d,t\n", i * 100, i % 4);
    cr_assert_eq(fclose(f), 0);
}

Test(runfolder, a_big_trace_is_loaded_once)
{
    char *dir = kw_tl_tmpdir("kwrunfolder");
    char p[4300];
    snprintf(p, sizeof p, "%s/small.csv", dir);
    kw_rf_write_trace(p, 1000);
    snprintf(p, sizeof p, "%s/big.csv", dir);
    kw_rf_write_trace(p, KW_RF_TRACE_ROWS);
    kw_rf_trace_space(dir, "small", "small.csv");
    kw_rf_trace_space(dir, "big", "big.csv");
    long base = kw_rf_tune_rss(dir, "s", "1", "small");
    long with = kw_rf_tune_rss(dir, "b", "1", "big");
    long once_kb = (long)KW_RF_TRACE_ROWS * KW_RF_TRACE_ROW_BYTES / 1024;
    cr_assert_lt(with - base, once_kb + once_kb / 2,
                 "a %d-row trace added %ld KiB (held once: %ld KiB)", KW_RF_TRACE_ROWS,
                 with - base, once_kb);
    kw_tl_rmrf(dir);
}

/* ---- the corpus manifest: tests/data/bad/HOSTILE rows with HOW = runfolder ---- */

/* Build case `name` in dir (which holds the finished run "run"); fill argv
 * (NULL-terminated) with the refused command and *want with its exit status.
 * *lock_fd gets a descriptor to close afterwards (-1: none). 0 if unknown. */
static int kw_rf_case(const char *name, const char *dir, const char **argv, int *want,
                      int *lock_fd)
{
    static char p[4300], q[4300], longp[1300];
    *want = 2;
    *lock_fd = -1;
    int n = 0;
#define KW_RF_A(x) (argv[n++] = (x))
    if (strcmp(name, "rf_report_onto_journal") == 0) {
        KW_RF_A("report"), KW_RF_A("run"), KW_RF_A("-o"), KW_RF_A("run/journal");
    } else if (strcmp(name, "rf_report_onto_dot_journal") == 0) {
        KW_RF_A("report"), KW_RF_A("run"), KW_RF_A("-o"), KW_RF_A("run/./journal"),
            KW_RF_A("--force");
    } else if (strcmp(name, "rf_recommend_onto_results") == 0) {
        KW_RF_A("recommend"), KW_RF_A("run"), KW_RF_A("--all"), KW_RF_A("-o"),
            KW_RF_A("run/results.xml"), KW_RF_A("--force");
    } else if (strcmp(name, "rf_output_hard_link_to_journal") == 0) {
        snprintf(p, sizeof p, "%s/run/journal", dir);
        snprintf(q, sizeof q, "%s/hl", dir);
        cr_assert_eq(link(p, q), 0);
        KW_RF_A("report"), KW_RF_A("run"), KW_RF_A("-o"), KW_RF_A("hl"), KW_RF_A("--force");
    } else if (strcmp(name, "rf_output_fifo") == 0) {
        snprintf(p, sizeof p, "%s/fifo", dir);
        cr_assert_eq(mkfifo(p, 0600), 0);
        KW_RF_A("report"), KW_RF_A("run"), KW_RF_A("-o"), KW_RF_A("fifo"), KW_RF_A("--force");
    } else if (strcmp(name, "rf_output_symlink_to_device") == 0) {
        snprintf(p, sizeof p, "%s/null", dir);
        cr_assert_eq(symlink("/dev/null", p), 0);
        KW_RF_A("recommend"), KW_RF_A("run"), KW_RF_A("--all"), KW_RF_A("-o"), KW_RF_A("null"),
            KW_RF_A("--force");
    } else if (strcmp(name, "rf_output_folder") == 0) {
        KW_RF_A("report"), KW_RF_A("run"), KW_RF_A("-o"), KW_RF_A("run");
    } else if (strcmp(name, "rf_output_exists") == 0) {
        snprintf(p, sizeof p, "%s/old.html", dir);
        kw_rf_put(p, "keep\n");
        KW_RF_A("report"), KW_RF_A("run"), KW_RF_A("-o"), KW_RF_A("old.html");
    } else if (strcmp(name, "rf_out_name_too_long") == 0) {
        /* one folder name over the file system's 255 bytes: exit 1 as if the
         * disk had failed; it is the name given */
        memset(longp, 'o', 256);
        longp[256] = '\0';
        KW_RF_A("tune"), KW_RF_A("--budget"), KW_RF_A("5"), KW_RF_A("--out"), KW_RF_A(longp),
            KW_RF_A("--quiet");
    } else if (strcmp(name, "rf_output_name_too_long") == 0) {
        /* a name the file system takes (250 bytes), but not with the 12 its
         * temp file adds: report computed everything, then failed, exit 1 */
        memset(longp, 'n', 250);
        longp[250] = '\0';
        KW_RF_A("report"), KW_RF_A("run"), KW_RF_A("-o"), KW_RF_A(longp);
    } else if (strcmp(name, "rf_out_is_a_file") == 0) {
        snprintf(p, sizeof p, "%s/afile", dir);
        kw_rf_put(p, "x\n");
        KW_RF_A("tune"), KW_RF_A("--budget"), KW_RF_A("5"), KW_RF_A("--out"), KW_RF_A("afile"),
            KW_RF_A("--quiet");
    } else if (strcmp(name, "rf_out_too_long") == 0) {
        memset(longp, 'x', 1100);
        longp[1100] = '\0';
        for (int i = 100; i < 1100; i += 101)
            longp[i] = '/';
        KW_RF_A("tune"), KW_RF_A("--budget"), KW_RF_A("5"), KW_RF_A("--out"), KW_RF_A(longp),
            KW_RF_A("--quiet");
    } else if (strcmp(name, "rf_resume_the_journal_file") == 0) {
        /* the journal named instead of its folder (main: "run/journal: not a
         * run folder (no journal to resume)", as if it were missing) */
        KW_RF_A("tune"), KW_RF_A("--resume"), KW_RF_A("run/journal"), KW_RF_A("--quiet");
    } else if (strcmp(name, "rf_audit_the_results_file") == 0) {
        KW_RF_A("audit"), KW_RF_A("run/results.xml");
    } else if (strcmp(name, "rf_out_dangling_symlink") == 0 ||
               strcmp(name, "rf_out_through_dangling_symlink") == 0) {
        /* --out a symbolic link to nothing, or a folder under one: exit 2
         * naming the link (main: exit 1, "cannot write into the run folder:
         * No such file or directory" / "cannot create the run folder") */
        snprintf(p, sizeof p, "%s/gone", dir);
        cr_assert_eq(symlink("outside", p), 0);
        KW_RF_A("tune"), KW_RF_A("--budget"), KW_RF_A("5"), KW_RF_A("--out"),
            KW_RF_A(strcmp(name, "rf_out_dangling_symlink") == 0 ? "gone" : "gone/run"),
            KW_RF_A("--quiet");
    } else if (strcmp(name, "rf_journal_dangling_symlink") == 0) {
        snprintf(p, sizeof p, "%s/new", dir);
        cr_assert_eq(mkdir(p, 0700), 0);
        snprintf(p, sizeof p, "%s/new/journal", dir);
        cr_assert_eq(symlink("../outside", p), 0);
        KW_RF_A("tune"), KW_RF_A("--budget"), KW_RF_A("5"), KW_RF_A("--out"), KW_RF_A("new"),
            KW_RF_A("--quiet");
    } else if (strcmp(name, "rf_journal_symlink") == 0 ||
               strcmp(name, "rf_report_journal_symlink") == 0 ||
               strcmp(name, "rf_recommend_journal_symlink") == 0 ||
               strcmp(name, "rf_verify_journal_symlink") == 0) {
        /* every verb reading a run reads its journal through the one reader */
        kw_rf_link_out(dir, "run/journal", "moved");
        if (strcmp(name, "rf_report_journal_symlink") == 0)
            KW_RF_A("report"), KW_RF_A("run"), KW_RF_A("-o"), KW_RF_A("r.html");
        else if (strcmp(name, "rf_recommend_journal_symlink") == 0)
            KW_RF_A("recommend"), KW_RF_A("run"), KW_RF_A("--all");
        else if (strcmp(name, "rf_verify_journal_symlink") == 0)
            KW_RF_A("verify"), KW_RF_A("run"), KW_RF_A("--no-eval");
        else
            KW_RF_A("audit"), KW_RF_A("run");
    } else if (strcmp(name, "rf_results_fifo") == 0 ||
               strcmp(name, "rf_results_dev_zero") == 0) {
        /* verify read the result files with fopen: it waited on the FIFO
         * forever, and read /dev/zero until memory ran out */
        snprintf(p, sizeof p, "%s/run/%s", dir,
                 strcmp(name, "rf_results_fifo") == 0 ? "results.xml" : "ranked.csv");
        cr_assert_eq(unlink(p), 0);
        if (strcmp(name, "rf_results_fifo") == 0)
            cr_assert_eq(mkfifo(p, 0600), 0);
        else
            cr_assert_eq(symlink("/dev/zero", p), 0);
        /* no file verify can read: bad input, exit 2 (was 1, as for damage) */
        KW_RF_A("verify"), KW_RF_A("run"), KW_RF_A("--no-eval");
    } else if (strcmp(name, "rf_results_symlink_out") == 0 ||
               strcmp(name, "rf_export_results_symlink_out") == 0 ||
               strcmp(name, "rf_export_results_file_symlink_out") == 0 ||
               strcmp(name, "rf_validate_results_symlink_out") == 0) {
        /* verify and export read RUN/results.xml through a link out of the
         * run folder (the journal reader refuses one); named as a file (not
         * as the run folder), export and validate still did */
        kw_rf_link_out(dir, "run/results.xml", "elsewhere.xml");
        if (strcmp(name, "rf_export_results_symlink_out") == 0)
            KW_RF_A("export"), KW_RF_A("run"), KW_RF_A("--format"), KW_RF_A("json");
        else if (strcmp(name, "rf_export_results_file_symlink_out") == 0)
            KW_RF_A("export"), KW_RF_A("run/results.xml"), KW_RF_A("--format"), KW_RF_A("json");
        else if (strcmp(name, "rf_validate_results_symlink_out") == 0)
            KW_RF_A("validate"), KW_RF_A("run/results.xml");
        else
            KW_RF_A("verify"), KW_RF_A("run"), KW_RF_A("--no-eval");
    } else if (strcmp(name, "rf_export_mappings_symlink_out") == 0) {
        /* a run folder's mappings.csv (recommend --all writes it there) as a
         * link out of the folder to a mappings file elsewhere */
        snprintf(p, sizeof p, "%s/elsewhere.csv", dir);
        KW_RF_A("recommend"), KW_RF_A("run"), KW_RF_A("--all"), KW_RF_A("-o"), KW_RF_A(p);
        argv[n] = NULL;
        kw_rf_expect(dir, 0, NULL, argv);
        n = 0;
        snprintf(q, sizeof q, "%s/run/mappings.csv", dir);
        cr_assert_eq(symlink(p, q), 0);
        KW_RF_A("export"), KW_RF_A("run/mappings.csv"), KW_RF_A("--format"), KW_RF_A("c-header");
    } else if (strcmp(name, "rf_results_folder") == 0 ||
               strcmp(name, "rf_results_not_xml") == 0) {
        /* verify said exit 1 (damage) for both: bad input, exit 2, naming
         * the file (and libxml2's line when it is not XML) */
        snprintf(p, sizeof p, "%s/run/results.xml", dir);
        cr_assert_eq(unlink(p), 0);
        if (strcmp(name, "rf_results_folder") == 0)
            cr_assert_eq(mkdir(p, 0700), 0);
        else
            kw_rf_put(p, "\nnot XML at all\n");
        KW_RF_A("verify"), KW_RF_A("run"), KW_RF_A("--no-eval");
    } else if (strcmp(name, "rf_report_empty_space") == 0) {
        /* an input the user named is no recorded input gone: report went on
         * without it ("writing the report without portability", exit 0) */
        KW_RF_A("report"), KW_RF_A("run"), KW_RF_A("--space"), KW_RF_A(""), KW_RF_A("-o"),
            KW_RF_A("r.html");
    } else if (strcmp(name, "rf_journal_empty") == 0) {
        snprintf(p, sizeof p, "%s/run/journal", dir);
        kw_rf_put(p, "");
        KW_RF_A("tune"), KW_RF_A("--resume"), KW_RF_A("run"), KW_RF_A("--quiet");
    } else if (strncmp(name, "rf_journal_", 11) == 0 && strcmp(name, "rf_journal_huge_record")) {
        static const char *const edits[][3] = {{"rf_journal_version_newer", "version", "9.9.9"},
                                               {"rf_journal_repeats", "repeats", "1000000"},
                                               {"rf_journal_tabu", "tabu", "9999"},
                                               {"rf_journal_alpha", "alpha", "7"}};
        int found = 0;
        for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++)
            if (strcmp(name, edits[i][0]) == 0) {
                snprintf(p, sizeof p, "%s/run/journal", dir);
                kw_rf_edit_header(p, edits[i][1], edits[i][2]);
                found = 1;
            }
        if (!found)
            return 0;
        *want = 2; /* a damaged journal is bad input (exit 1 until 2026-12-06) */
        KW_RF_A("audit"), KW_RF_A("run");
    } else if (strcmp(name, "rf_journal_huge_record") == 0) {
        snprintf(p, sizeof p, "%s/run/journal", dir);
        FILE *f = fopen(p, "ab");
        cr_assert(f);
        for (int i = 0; i < 100000; i++)
            fputc('E', f);
        fputs("\nZ why=complete crc=00000000\n", f);
        cr_assert_eq(fclose(f), 0);
        *want = 2; /* damage in the middle: bad input (exit 1 until 2026-12-06) */
        KW_RF_A("report"), KW_RF_A("run"), KW_RF_A("-o"), KW_RF_A("r.html");
    } else if (strcmp(name, "rf_resume_results_folder") == 0) {
        /* tune --resume ran, then said "cannot rename into place: Is a
         * directory" (exit 1) and to resume again, which failed the same way */
        snprintf(p, sizeof p, "%s/run/ranked.csv", dir);
        cr_assert_eq(unlink(p), 0);
        cr_assert_eq(mkdir(p, 0700), 0);
        KW_RF_A("tune"), KW_RF_A("--resume"), KW_RF_A("run"), KW_RF_A("--quiet");
    } else if (strcmp(name, "rf_report_own_folder") == 0 ||
               strcmp(name, "rf_recommend_own_folder") == 0) {
        /* a folder where the verb's own file goes (no -o): refused before
         * anything is computed, exit 2; it computed everything, then said
         * "cannot rename into place: Is a directory", exit 1 */
        int rep = strcmp(name, "rf_report_own_folder") == 0;
        snprintf(p, sizeof p, "%s/run/%s", dir, rep ? "report.html" : "mappings.csv");
        cr_assert_eq(mkdir(p, 0700), 0);
        if (rep)
            KW_RF_A("report"), KW_RF_A("run");
        else
            KW_RF_A("recommend"), KW_RF_A("run"), KW_RF_A("--all");
    } else if (strcmp(name, "rf_lock_folder") == 0) {
        /* a folder where the lock file goes: bad input like a FIFO there
         * (exit 2); it said "cannot open ...: Is a directory", exit 1 */
        snprintf(p, sizeof p, "%s/run/.lock", dir);
        unlink(p);
        cr_assert_eq(mkdir(p, 0700), 0);
        KW_RF_A("tune"), KW_RF_A("--resume"), KW_RF_A("run"), KW_RF_A("--quiet");
    } else if (strcmp(name, "rf_second_writer") == 0) {
        /* this process holds the writer lock, as a running tune does */
        snprintf(p, sizeof p, "%s/run/.lock", dir);
        int fd = open(p, O_RDWR | O_CREAT, 0644);
        cr_assert(fd >= 0);
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        cr_assert_eq(fcntl(fd, F_OFD_SETLK, &fl), 0);
        *lock_fd = fd;
        KW_RF_A("tune"), KW_RF_A("--resume"), KW_RF_A("run"), KW_RF_A("--quiet");
    } else {
        return 0;
    }
#undef KW_RF_A
    argv[n] = NULL;
    return 1;
}

Test(runfolder, manifest_cases_give_their_message)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/tests/data/bad/HOSTILE", kw_tl_src());
    kw_tl_manifest *m = kw_tl_manifest_open(path);
    cr_assert(m != NULL, "no manifest %s", path);
    kw_tl_row row;
    int cases = 0;
    while (kw_tl_manifest_next(m, &row)) {
        const char *name = row.f[0], *how = row.f[1], *sub = row.f[2];
        if (row.n < 3 || strcmp(how, "runfolder") != 0)
            continue;
        char *dir = kw_rf_run();
        const char *args[16];
        int want, lock_fd;
        cr_assert(kw_rf_case(name, dir, args, &want, &lock_fd), "manifest case %s is unknown",
                  name);
        char jp[4300];
        snprintf(jp, sizeof jp, "%s/run/journal", dir);
        struct stat st0, st1;
        int had = lstat(jp, &st0) == 0;
        kw_rf_expect(dir, want, sub, args);
        if (lock_fd >= 0)
            close(lock_fd);
        /* nothing written: the journal as it was, no output file */
        int has = lstat(jp, &st1) == 0;
        cr_assert_eq(had, has, "%s: the journal appeared or went away", name);
        if (had)
            cr_assert(st0.st_size == st1.st_size && st0.st_mtime == st1.st_mtime,
                      "%s: the journal changed", name);
        char p[4300];
        snprintf(p, sizeof p, "%s/r.html", dir);
        cr_assert(lstat(p, &st1) != 0, "%s: an output was written", name);
        snprintf(p, sizeof p, "%s/outside", dir);
        cr_assert(lstat(p, &st1) != 0, "%s: a file was written outside the run folder", name);
        kw_tl_rmrf(dir);
        cases++;
    }
    kw_tl_manifest_close(m);
    cr_assert_geq(cases, 22, "only %d runfolder rows in the manifest", cases);
}
