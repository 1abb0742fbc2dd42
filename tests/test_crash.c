/* test_crash.c - crash, disk and determinism safety of `knobwise tune`, end to
 * end on the built binary: SIGKILL at seeded points of a small run and
 * --resume give results byte-identical to an uninterrupted run with the same
 * seed, with no evaluation lost or counted twice; a torn or corrupted last
 * journal record is reported and truncated; corruption in the middle is
 * refused with its record number and the journal left untouched; a full file
 * system (RLIMIT_FSIZE with SIGXFSZ ignored, and a tiny tmpfs when a mount
 * namespace is available) or an unwritable folder gives a clear error, a
 * non-zero exit, a journal that still resumes and previous results intact;
 * thread counts 1 and 2 and repeated runs give identical files.
 *
 * Design choice: the kill points are journal record counts drawn from a
 * seeded generator over the uninterrupted run's record count; the test polls
 * the journal and kills as soon as it holds that many records, so the kill
 * lands wherever the run happens to be (mid-evaluation, mid-write, mid-fsync,
 * mid-results). The run is the small validation space with a small budget. */
#include <criterion/criterion.h>

#include <dirent.h>

#include "lib/kw_tl.h"

static void kw_c_ref_cleanup(void);
/* each test's hang guard (KW_TL_HANG_GUARD, not Criterion's .timeout) */
static void kw_crash_guard(void) { KW_TL_HANG_GUARD(600); }
TestSuite(crash, .init = kw_crash_guard, .fini = kw_c_ref_cleanup);
TestSuite(determinism, .init = kw_crash_guard, .fini = kw_c_ref_cleanup);

#define KW_C_SEED "7"
#define KW_C_BUDGET "40"     /* evaluations per shape: a run of a few hundred records */
#define KW_C_KILLS 6         /* independent kill points (>= 5 must land) */
#define KW_C_TIMEOUT_S 120

static const char *const kw_c_files[] = {"results.xml", "ranked.csv", "audit.csv",
                                          "portability.csv", "journal"};
#define KW_C_NFILES (sizeof kw_c_files / sizeof kw_c_files[0])

/* Absolute (the runs change folder): KW_BIN, else ./knobwise. */
static const char *kw_c_bin(void)
{
    static char abs_bin[4096];
    if (!abs_bin[0]) {
        const char *b = getenv("KW_BIN");
        if (!realpath(b ? b : "./knobwise", abs_bin))
            snprintf(abs_bin, sizeof abs_bin, "%s", b ? b : "./knobwise");
    }
    return abs_bin;
}

static const char *kw_c_space(void)
{
    static char p[4096];
    const char *s = getenv("KW_SRCDIR");
    snprintf(p, sizeof p, "%s/spaces/validate_small.xml", s ? s : ".");
    return p;
}

static kw_tl_opts kw_c_opts(const char *cwd)
{
    kw_tl_opts o = {.timeout_s = KW_C_TIMEOUT_S, .cwd = cwd};
    return o;
}

static char *kw_c_tmpdir(void)
{
    char *d = kw_tl_tmpdir("kwcrash");
    cr_assert(d, "mkdtemp");
    return d;
}

typedef struct kw_blob {
    char *b;
    size_t n;
    int ok;
} kw_blob;

static kw_blob kw_c_read(const char *dir, const char *rel)
{
    kw_blob r = {NULL, 0, 0};
    char p[4300];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    r.b = kw_tl_slurp_n(p, &r.n);
    r.ok = r.b != NULL;
    return r;
}

static void kw_c_write(const char *dir, const char *rel, const char *b, size_t n)
{
    char p[4300];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "wb");
    cr_assert(f != NULL, "%s", p);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

/* tune must work for the crash cases to mean anything: a broken verb fails
 * them, never skips them (a skipped safety suite reads as green). */
static int kw_c_have_tune(void)
{
    kw_tl_opts o = kw_c_opts(NULL);
    kw_tl_proc r = kw_tl_run(&o, kw_c_bin(), "tune", "--help", NULL);
    int have = r.status == 0;
    kw_tl_free(&r);
    return have;
}

#define KW_C_NEED_TUNE()                                                                       \
    do {                                                                                       \
        cr_assert(kw_c_have_tune(), "knobwise tune --help failed: the tune verb is broken");  \
    } while (0)

/* The uninterrupted reference run, made once per test process. */
typedef struct kw_ref {
    char *dir;
    kw_blob f[KW_C_NFILES];
    long records, evals;
} kw_ref;

/* Journal facts: records (lines), E records, and whether any (s,id,rep) repeats. */
static void kw_c_journal_facts(const kw_blob *j, long *records, long *evals, int *dups)
{
    *records = *evals = 0;
    *dups = 0;
    size_t cap = 1024, n = 0;
    char **keys = malloc(cap * sizeof *keys);
    for (const char *s = j->b; s && *s;) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        (*records)++;
        if (len > 2 && s[0] == 'E' && s[1] == ' ') {
            (*evals)++;
            /* key: the fields s= id= rep= (everything before " c=") */
            const char *c = strstr(s, " c=");
            size_t kl = c && c < s + len ? (size_t)(c - s) : len;
            char *k = strndup(s, kl);
            for (size_t i = 0; i < n; i++)
                if (strcmp(keys[i], k) == 0)
                    *dups = 1;
            if (n == cap)
                keys = realloc(keys, (cap *= 2) * sizeof *keys);
            keys[n++] = k;
        }
        s = e ? e + 1 : s + len;
    }
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
}

static kw_tl_proc kw_c_tune(const char *cwd, const char *threads)
{
    kw_tl_opts o = kw_c_opts(cwd);
    return kw_tl_run(&o, kw_c_bin(), "tune", "--space", kw_c_space(), "--seed", KW_C_SEED,
                    "--budget", KW_C_BUDGET, "--threads", threads, "--out", "run", "--quiet",
                    NULL);
}

static kw_tl_proc kw_c_resume(const char *cwd, long fsize_kb)
{
    kw_tl_opts o = kw_c_opts(cwd);
    o.fsize_limit_kb = fsize_kb;
    return kw_tl_run(&o, kw_c_bin(), "tune", "--resume", "run", "--quiet", NULL);
}

static kw_ref kw_c_the_ref;

static void kw_c_ref_cleanup(void)
{
    for (size_t i = 0; i < KW_C_NFILES; i++)
        free(kw_c_the_ref.f[i].b);
    if (kw_c_the_ref.dir)
        kw_tl_rmrf(kw_c_the_ref.dir);
    memset(&kw_c_the_ref, 0, sizeof kw_c_the_ref);
}

static const kw_ref *kw_c_ref(void)
{
    if (kw_c_the_ref.dir)
        return &kw_c_the_ref;
    kw_c_the_ref.dir = kw_c_tmpdir();
    kw_tl_proc r = kw_c_tune(kw_c_the_ref.dir, "1");
    cr_assert_eq(r.status, 0, "reference run: exit %d: %s", r.status, r.err);
    kw_tl_free(&r);
    char run[4200];
    snprintf(run, sizeof run, "%s/run", kw_c_the_ref.dir);
    for (size_t i = 0; i < KW_C_NFILES; i++) {
        kw_c_the_ref.f[i] = kw_c_read(run, kw_c_files[i]);
        cr_assert(kw_c_the_ref.f[i].ok, "the run wrote no %s", kw_c_files[i]);
    }
    int dups;
    kw_c_journal_facts(&kw_c_the_ref.f[KW_C_NFILES - 1], &kw_c_the_ref.records, &kw_c_the_ref.evals, &dups);
    cr_assert_eq(dups, 0, "the uninterrupted run journalled an evaluation twice");
    cr_assert_gt(kw_c_the_ref.records, 20, "the reference run is too short to kill: %ld records",
                 kw_c_the_ref.records);
    return &kw_c_the_ref;
}

/* The run in cwd/run equals the reference: every file byte for byte, every
 * evaluation journalled exactly once, and verify passes. */
static void kw_c_same_as_ref(const char *cwd, const char *what)
{
    const kw_ref *ref = kw_c_ref();
    char run[4200];
    snprintf(run, sizeof run, "%s/run", cwd);
    for (size_t i = 0; i < KW_C_NFILES; i++) {
        kw_blob b = kw_c_read(run, kw_c_files[i]);
        cr_assert(b.ok, "%s: no %s", what, kw_c_files[i]);
        cr_assert(b.n == ref->f[i].n && memcmp(b.b, ref->f[i].b, b.n) == 0,
                  "%s: %s differs from the uninterrupted run (%zu vs %zu bytes)", what,
                  kw_c_files[i], b.n, ref->f[i].n);
        if (i == KW_C_NFILES - 1) {
            long rec, ev;
            int dups;
            kw_c_journal_facts(&b, &rec, &ev, &dups);
            cr_assert_eq(dups, 0, "%s: an evaluation was journalled twice", what);
            cr_assert_eq(ev, ref->evals, "%s: %ld evaluations, uninterrupted %ld", what, ev,
                         ref->evals);
        }
        free(b.b);
    }
    kw_tl_opts o = kw_c_opts(cwd);
    kw_tl_proc v = kw_tl_run(&o, kw_c_bin(), "verify", "run", NULL);
    cr_assert_eq(v.status, 0, "%s: verify: exit %d: %s%s", what, v.status, v.out, v.err);
    kw_tl_free(&v);
}

static long kw_c_lines(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    long n = 0;
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < got; i++)
            n += buf[i] == '\n';
    fclose(f);
    return n;
}

/* Start the run (or its resume) in cwd and SIGKILL it as soon as its journal
 * holds `at` records. Returns 1 when killed, 0 when it finished first. */
static int kw_c_kill_at(const char *cwd, long at, int resume)
{
    char journal[4300];
    snprintf(journal, sizeof journal, "%s/run/journal", cwd);
    int ofd = kw_tl_tmpfile(), efd = kw_tl_tmpfile();
    kw_tl_opts o = kw_c_opts(cwd);
    const char *fresh[] = {kw_c_bin(), "tune", "--space", kw_c_space(), "--seed", KW_C_SEED,
                           "--budget", KW_C_BUDGET, "--threads", "2", "--out", "run",
                           "--quiet", NULL};
    const char *again[] = {kw_c_bin(), "tune", "--resume", "run", "--quiet", NULL};
    pid_t pid = kw_tl_spawn(resume ? again : fresh, &o, ofd, efd);
    cr_assert_gt(pid, 0);
    int killed = 0, st = 0;
    double deadline = kw_tl_now() + KW_C_TIMEOUT_S;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            break;
        if (kw_c_lines(journal) >= at || kw_tl_now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
            break;
        }
        usleep(200);
    }
    if (!killed && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        char *err = kw_tl_slurp_fd(efd);
        cr_assert_fail("run ended with status %d before the kill: %s", st, err);
    }
    close(ofd);
    close(efd);
    return killed;
}

/* Tiny seeded generator (the kill points are part of the test, fixed). */
static unsigned long kw_c_rng = 20261130UL;
static long kw_c_draw(long lo, long hi)
{
    kw_c_rng = kw_c_rng * 6364136223846793005UL + 1442695040888963407UL;
    return lo + (long)((kw_c_rng >> 33) % (unsigned long)(hi - lo + 1));
}

Test(crash, sigkill_at_seeded_points_then_resume_is_identical)
{
    KW_C_NEED_TUNE();
    const kw_ref *ref = kw_c_ref();
    int kills = 0;
    for (int i = 0; i < KW_C_KILLS; i++) {
        char *dir = kw_c_tmpdir();
        long at = kw_c_draw(1, ref->records - 1);
        int killed = kw_c_kill_at(dir, at, 0);
        kills += killed;
        kw_tl_proc r = kw_c_resume(dir, 0);
        if (killed) {
            cr_assert_eq(r.status, 0, "resume after a kill at %ld records: exit %d: %s", at,
                         r.status, r.err);
        }
        kw_tl_free(&r);
        char what[64];
        snprintf(what, sizeof what, "kill at record %ld", at);
        kw_c_same_as_ref(dir, what);
        kw_tl_rmrf(dir);
    }
    /* plain stderr (a TAP comment): cr_log_info leaks 48 bytes inside Criterion 2.4.1 */
    fprintf(stderr, "# %d of %d kills landed before the run finished\n", kills, KW_C_KILLS);
    cr_assert_geq(kills, 5, "only %d kills landed", kills);
}

/* Killed again while resuming, three times over, then finished. */
Test(crash, killed_while_resuming_repeatedly)
{
    KW_C_NEED_TUNE();
    const kw_ref *ref = kw_c_ref();
    char *dir = kw_c_tmpdir();
    long at = ref->records / 5;
    int kills = kw_c_kill_at(dir, at, 0);
    for (int i = 0; i < 3; i++) {
        at += ref->records / 5;
        kills += kw_c_kill_at(dir, at, 1);
    }
    kw_tl_proc r = kw_c_resume(dir, 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    kw_c_same_as_ref(dir, "repeated kills");
    cr_assert_geq(kills, 2, "only %d kills landed", kills);
    kw_tl_rmrf(dir);
}

/* A prefix of the reference journal of `records` whole records, plus `tail`
 * bytes of the next one, in cwd/run/journal (as a kill mid-write leaves it). */
static size_t kw_c_plant_prefix(const char *cwd, long records, size_t tail)
{
    const kw_ref *ref = kw_c_ref();
    const kw_blob *j = &ref->f[KW_C_NFILES - 1];
    size_t off = 0;
    for (long i = 0; i < records && off < j->n; i++)
        off = (size_t)(strchr(j->b + off, '\n') - j->b) + 1;
    char run[4200];
    snprintf(run, sizeof run, "%s/run", cwd);
    mkdir(run, 0700);
    kw_c_write(run, "journal", j->b, off + tail);
    return off;
}

Test(crash, torn_last_record_reported_and_truncated)
{
    KW_C_NEED_TUNE();
    const kw_ref *ref = kw_c_ref();
    for (int variant = 0; variant < 2; variant++) {
        char *dir = kw_c_tmpdir();
        long keep = ref->records / 2;
        size_t off = kw_c_plant_prefix(dir, keep, variant == 0 ? 17 : 0);
        if (variant == 1) {
            /* a whole last record whose checksum is wrong (bit rot, not a tear) */
            char run[4200];
            snprintf(run, sizeof run, "%s/run", dir);
            kw_blob b = kw_c_read(run, "journal");
            cr_assert(off > 10);
            b.b[off - 4] = b.b[off - 4] == '0' ? '1' : '0';
            kw_c_write(run, "journal", b.b, b.n);
            free(b.b);
        }
        kw_tl_proc r = kw_c_resume(dir, 0);
        cr_assert_eq(r.status, 0, "resume of a torn journal: exit %d: %s", r.status, r.err);
        char rec[32];
        snprintf(rec, sizeof rec, "%ld", variant == 0 ? keep + 1 : keep);
        cr_assert(strstr(r.err, "record") != NULL && strstr(r.err, rec) != NULL,
                  "the torn record %s is not reported: %s", rec, r.err);
        kw_tl_free(&r);
        kw_c_same_as_ref(dir, variant == 0 ? "torn last record" : "corrupt last record");
        kw_tl_rmrf(dir);
    }
}

Test(crash, corruption_in_the_middle_refused_with_record_number)
{
    KW_C_NEED_TUNE();
    const kw_ref *ref = kw_c_ref();
    char *dir = kw_c_tmpdir(), run[4200];
    snprintf(run, sizeof run, "%s/run", dir);
    long keep = ref->records / 2, bad = keep / 2;
    kw_c_plant_prefix(dir, keep, 0);
    kw_blob b = kw_c_read(run, "journal");
    /* flip one character in the middle of record `bad` */
    size_t off = 0;
    for (long i = 1; i < bad; i++)
        off = (size_t)(strchr(b.b + off, '\n') - b.b) + 1;
    size_t len = (size_t)(strchr(b.b + off, '\n') - (b.b + off));
    char *c = b.b + off + len / 2;
    *c = *c == 'x' ? 'y' : 'x';
    kw_c_write(run, "journal", b.b, b.n);
    char rec[64];
    snprintf(rec, sizeof rec, "record %ld", bad);
    kw_tl_proc r = kw_c_resume(dir, 0);
    cr_assert(r.status != 0 && r.status < 128, "resume of a corrupt journal: exit %d",
              r.status);
    cr_assert(strstr(r.err, rec) != NULL, "want '%s' in: %s", rec, r.err);
    kw_tl_free(&r);
    kw_blob after = kw_c_read(run, "journal");
    cr_assert(after.n == b.n && memcmp(after.b, b.b, b.n) == 0,
              "the refused journal was modified");
    kw_tl_opts o = kw_c_opts(dir);
    r = kw_tl_run(&o, kw_c_bin(), "verify", "run", NULL);
    cr_assert(r.status != 0 && r.status < 128, "verify of a corrupt journal: exit %d",
              r.status);
    cr_assert(strstr(r.err, rec) != NULL || strstr(r.out, rec) != NULL, "want '%s' in: %s%s",
              rec, r.out, r.err);
    kw_tl_free(&r);
    free(after.b);
    free(b.b);
    kw_tl_rmrf(dir);
}

/* No leftovers of an atomic write (NAME.tmp.XXXXXX) in a run folder. */
static int kw_c_tmp_leftovers(const char *run)
{
    DIR *d = opendir(run);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp") != NULL;
    closedir(d);
    return n;
}

/* The file-size limit (EFBIG, as a full disk gives ENOSPC): a fresh run fails
 * clearly, its journal still resumes to the reference; a finished run's files
 * survive a failed rewrite. */
Test(crash, disk_full_fails_clearly_and_keeps_work)
{
    KW_C_NEED_TUNE();
    kw_c_ref();
    char *dir = kw_c_tmpdir(), run[4200];
    snprintf(run, sizeof run, "%s/run", dir);
    kw_tl_opts o = kw_c_opts(dir);
    o.fsize_limit_kb = 12;
    kw_tl_proc r = kw_tl_run(&o, kw_c_bin(), "tune", "--space", kw_c_space(), "--seed", KW_C_SEED,
                         "--budget", KW_C_BUDGET, "--threads", "1", "--out", "run", "--quiet",
                         NULL);
    cr_assert(r.status != 0 && r.status < 128, "tune into a full disk: exit %d: %s", r.status,
              r.err);
    cr_assert(strstr(r.err, "File too large") != NULL || strstr(r.err, "No space") != NULL,
              "no clear error: %s", r.err);
    kw_tl_free(&r);
    r = kw_c_resume(dir, 0);
    cr_assert_eq(r.status, 0, "resume after the disk filled: exit %d: %s", r.status, r.err);
    kw_tl_free(&r);
    kw_c_same_as_ref(dir, "disk full, then resumed");

    /* rewriting the finished run's results with no room: they stay intact */
    r = kw_c_resume(dir, 1);
    cr_assert(r.status < 128, "resume of a finished run, no room: died %d", r.status);
    kw_tl_free(&r);
    kw_c_same_as_ref(dir, "finished run after a failed rewrite");
    cr_assert_eq(kw_c_tmp_leftovers(run), 0, "temporary files left in %s", run);
    kw_tl_rmrf(dir);
}

/* A real full file system: a 16 KiB tmpfs in a private mount namespace
 * (unshare -rm). Skipped where user namespaces are not allowed. */
Test(crash, tiny_tmpfs_fails_clearly_and_keeps_work)
{
    KW_C_NEED_TUNE();
    kw_c_ref();
    if (access("/usr/bin/unshare", X_OK) != 0)
        cr_skip_test("no unshare(1)");
    char *dir = kw_c_tmpdir(), script[16384];
    snprintf(script, sizeof script,
             "mkdir -p '%s/mnt' '%s/copy' && mount -t tmpfs -o size=16k tmpfs '%s/mnt' || exit 77\n"
             "cd '%s/mnt' && '%s' tune --space '%s' --seed " KW_C_SEED " --budget " KW_C_BUDGET
             " --threads 1 --out run --quiet\n"
             "rc=$?; cp -a '%s/mnt/run' '%s/copy/' 2>/dev/null; exit $rc\n",
             dir, dir, dir, dir, kw_c_bin(), kw_c_space(), dir, dir);
    kw_tl_opts o = kw_c_opts(dir);
    kw_tl_proc r = kw_tl_run(&o, "/usr/bin/unshare", "-rm", "/bin/sh", "-c", script, NULL);
    if (r.status == 77) {
        kw_tl_free(&r);
        kw_tl_rmrf(dir);
        cr_skip_test("cannot mount a tmpfs here");
    }
    cr_assert(r.status != 0 && r.status < 128, "tune into a full tmpfs: exit %d: %s", r.status,
              r.err);
    cr_assert(strstr(r.err, "No space") != NULL, "no clear error: %s", r.err);
    kw_tl_free(&r);
    char copy[4200];
    snprintf(copy, sizeof copy, "%s/copy", dir);
    r = kw_c_resume(copy, 0);
    cr_assert_eq(r.status, 0, "resume of the full tmpfs's journal: exit %d: %s", r.status,
                 r.err);
    kw_tl_free(&r);
    kw_c_same_as_ref(copy, "tmpfs full, then resumed");
    kw_tl_rmrf(dir);
}

/* --out where nothing can be written: under a regular file, and in a
 * read-only folder (chmod for users; a read-only bind mount for root, who
 * ignores permission bits). A clear error, a non-zero exit. */
Test(crash, unwritable_output_folder)
{
    KW_C_NEED_TUNE();
    char *dir = kw_c_tmpdir(), file[4200], out[4400];
    snprintf(file, sizeof file, "%s/afile", dir);
    kw_c_write(dir, "afile", "x", 1);
    snprintf(out, sizeof out, "%s/run", file);
    kw_tl_opts o = kw_c_opts(dir);
    kw_tl_proc r = kw_tl_run(&o, kw_c_bin(), "tune", "--space", kw_c_space(), "--budget", "5",
                         "--out", out, "--quiet", NULL);
    cr_assert(r.status != 0 && r.status < 128, "tune --out under a file: exit %d", r.status);
    cr_assert(strstr(r.err, out) != NULL || strstr(r.err, file) != NULL,
              "the error does not name the folder: %s", r.err);
    kw_tl_free(&r);

    char ro[256], script[20000];
    snprintf(ro, sizeof ro, "%.200s/ro", dir);
    mkdir(ro, 0755);
    if (geteuid() != 0) {
        chmod(ro, 0555);
        snprintf(out, sizeof out, "%s/run", ro);
        r = kw_tl_run(&o, kw_c_bin(), "tune", "--space", kw_c_space(), "--budget", "5", "--out",
                     out, "--quiet", NULL);
    } else {
        snprintf(script, sizeof script,
                 "mount --bind '%s' '%s' && mount -o remount,bind,ro '%s' || exit 77\n"
                 "exec '%s' tune --space '%s' --budget 5 --out '%s/run' --quiet\n",
                 ro, ro, ro, kw_c_bin(), kw_c_space(), ro);
        r = kw_tl_run(&o, "/usr/bin/unshare", "-m", "/bin/sh", "-c", script, NULL);
        if (r.status == 77) {
            kw_tl_free(&r);
            kw_tl_rmrf(dir);
            cr_skip_test("cannot make a read-only folder as root here");
        }
    }
    cr_assert(r.status != 0 && r.status < 128, "tune into a read-only folder: exit %d: %s",
              r.status, r.err);
    cr_assert(strstr(r.err, "Read-only") != NULL || strstr(r.err, "ermission") != NULL,
              "no clear error: %s", r.err);
    kw_tl_free(&r);
    chmod(ro, 0755);
    kw_tl_rmrf(dir);
}

/* Same inputs and seed: byte-identical files across runs and for 1 and 2 threads. */
Test(determinism, runs_and_thread_counts_give_identical_files)
{
    KW_C_NEED_TUNE();
    kw_c_ref(); /* threads 1 */
    static const char *threads[] = {"2", "1", "2"};
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        char *dir = kw_c_tmpdir();
        kw_tl_proc r = kw_c_tune(dir, threads[i]);
        cr_assert_eq(r.status, 0, "threads %s: exit %d: %s", threads[i], r.status, r.err);
        kw_tl_free(&r);
        char what[64];
        snprintf(what, sizeof what, "run %zu with --threads %s", i + 2, threads[i]);
        kw_c_same_as_ref(dir, what);
        kw_tl_rmrf(dir);
    }
}
