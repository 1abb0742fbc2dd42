/* kw_tl.c - the test helper library (interface and design in kw_tl.h).
 *
 * Gathered from the copies the test programs kept (tests/kw_proc.h's
 * hostile-process runner, tests/kw_testutil.h's shell runner, and the temp
 * folder, slurp and manifest loops of test_cli, test_hostile, test_load and
 * test_runfolder); each function behaves as the copy it replaces.
 */
#include "kw_tl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KW_TL_POLL_US 2000     /* how often kw_tl_wait looks at its child */
#define KW_TL_NFTW_FDS 16      /* folders kw_tl_rmrf keeps open at once */
#define KW_TL_LINE_MAX 8192    /* longest manifest line */
#define KW_TL_LIVE_MAX 64      /* children a test holds at once (kw_tl_live) */

int kw_tl_valgrind(void)
{
    const char *v = getenv("KW_VALGRIND");
    return v && *v && strcmp(v, "0") != 0;
}

double kw_tl_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const char *kw_tl_abs(char *buf, size_t len, const char *env, const char *dflt)
{
    if (!buf[0]) {
        const char *v = getenv(env);
        if (!realpath(v ? v : dflt, buf))
            snprintf(buf, len, "%s", v ? v : dflt);
    }
    return buf;
}

const char *kw_tl_bin(void)
{
    static char abs_bin[4096];
    return kw_tl_abs(abs_bin, sizeof abs_bin, "KW_BIN", "./knobwise");
}

const char *kw_tl_src(void)
{
    static char abs_src[4096];
    return kw_tl_abs(abs_src, sizeof abs_src, "KW_SRCDIR", ".");
}

char *kw_tl_tmpdir(const char *prefix)
{
    char *d = malloc(strlen(prefix) + 16);
    if (!d)
        return NULL;
    sprintf(d, "/tmp/%s.XXXXXX", prefix);
    if (!mkdtemp(d)) {
        free(d);
        return NULL;
    }
    return d;
}

static int kw_tl_rm1(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

int kw_tl_rm_tree(const char *dir)
{
    return nftw(dir, kw_tl_rm1, KW_TL_NFTW_FDS, FTW_DEPTH | FTW_PHYS);
}

void kw_tl_rmrf(char *dir)
{
    if (dir)
        kw_tl_rm_tree(dir);
    free(dir);
}

int kw_tl_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

int kw_tl_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

char *kw_tl_slurp_n(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long len = ftell(f);
        if (len >= 0 && fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)len + 1)) != NULL) {
            *n = fread(b, 1, (size_t)len, f);
            b[*n] = '\0';
        }
    }
    fclose(f);
    return b;
}

char *kw_tl_slurp(const char *path)
{
    size_t n;
    char *b = kw_tl_slurp_n(path, &n);
    return b ? b : strdup("");
}

char *kw_tl_slurp_fd(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return strdup("");
    char *b = malloc((size_t)st.st_size + 1);
    if (!b)
        return strdup("");
    ssize_t got = pread(fd, b, (size_t)st.st_size, 0);
    b[got > 0 ? got : 0] = '\0';
    return b;
}

int kw_tl_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n;
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

int kw_tl_cut_last_line(const char *path, const char *prefix)
{
    char *text = kw_tl_slurp(path);
    if (!text)
        return -1;
    size_t n = strlen(text);
    int rc = -1;
    if (n > 0 && text[n - 1] == '\n') {
        char *last = text + n - 1;
        while (last > text && last[-1] != '\n')
            last--;
        if (strncmp(last, prefix, strlen(prefix)) == 0) {
            *last = '\0';
            rc = kw_tl_write(path, text);
        }
    }
    free(text);
    return rc;
}

int kw_tl_tune_evidence_cut(const char *run, char *err, size_t n)
{
    char sp[4200], p[4200];
    snprintf(sp, sizeof sp, "%s/spaces/validate_small.xml", kw_tl_src());
    kw_tl_proc r = kw_tl_run(NULL, kw_tl_bin(), "tune", "--space", sp, "--budget", "6", "--out",
                             run, "--quiet", NULL);
    int rc = r.status == 0 ? 0 : -1;
    snprintf(err, n, "tune: exit %d: %s", r.status, r.err);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/evidence", run);
    if (rc == 0 && (rc = kw_tl_cut_last_line(p, "F n=")) != 0)
        snprintf(err, n, "the finished run's evidence %s does not end with its end record", p);
    return rc;
}

int kw_tl_tmpfile(void)
{
    char t[] = "/tmp/kwproc.XXXXXX";
    int fd = mkstemp(t);
    if (fd >= 0)
        unlink(t);
    return fd;
}

/* ------------------------------------------------- children die with the test
 *
 * A test ended by its hang guard (SIGALRM, KW_TL_HANG_GUARD) or killed
 * otherwise left the knobwise it was waiting for running (a hung tune, its
 * shell, a worker's sleep) until someone killed it. Each child is started in
 * a process group of its own and kept in kw_tl_live until reaped: SIGALRM
 * kills those groups before it ends the test as before; and each child gets
 * SIGKILL when the test process dies of anything (PR_SET_PDEATHSIG), which
 * also covers a process group the child's own children left. */
static volatile sig_atomic_t kw_tl_live[KW_TL_LIVE_MAX]; /* process groups; 0: free slot */

static void kw_tl_on_alarm(int sig)
{
    for (int i = 0; i < KW_TL_LIVE_MAX; i++)
        if (kw_tl_live[i] > 0)
            kill(-(pid_t)kw_tl_live[i], SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig); /* the test ends as the guard ends it: a crash */
}

static void kw_tl_live_add(pid_t pid)
{
    struct sigaction old;
    if (sigaction(SIGALRM, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
        signal(SIGALRM, kw_tl_on_alarm);
    for (int i = 0; i < KW_TL_LIVE_MAX; i++)
        if (kw_tl_live[i] == 0) {
            kw_tl_live[i] = (sig_atomic_t)pid;
            return;
        }
}

static void kw_tl_live_drop(pid_t pid)
{
    for (int i = 0; i < KW_TL_LIVE_MAX; i++)
        if (kw_tl_live[i] == (sig_atomic_t)pid)
            kw_tl_live[i] = 0;
}

/* In a child just forked: its own process group, and SIGKILL when the test
 * (pid parent) dies. */
static void kw_tl_child_tie(pid_t parent)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the test died before prctl */
        _exit(125);
}

/* fork, the child tied to the test (kw_tl_child_tie), the parent keeping it
 * in kw_tl_live; setpgid in both, so the group exists whichever runs first. */
static pid_t kw_tl_fork(void)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        kw_tl_child_tie(parent);
    } else if (pid > 0) {
        setpgid(pid, pid);
        kw_tl_live_add(pid);
    }
    return pid;
}

pid_t kw_tl_spawn(const char *const *argv, const kw_tl_opts *o, int ofd, int efd)
{
    pid_t pid = kw_tl_fork();
    if (pid != 0)
        return pid;
    /* child */
    int in = open(o->stdin_path ? o->stdin_path : "/dev/null", O_RDONLY);
    if (in >= 0)
        dup2(in, 0);
    dup2(ofd, 1);
    dup2(efd, 2);
    if (o->cwd && chdir(o->cwd) != 0)
        _exit(126);
    if (o->as_limit_mb > 0 && !KW_SANITIZED && !kw_tl_valgrind()) {
        struct rlimit rl = {(rlim_t)o->as_limit_mb << 20, (rlim_t)o->as_limit_mb << 20};
        setrlimit(RLIMIT_AS, &rl);
    }
    if (o->fsize_limit_kb > 0) {
        if (!o->fsize_as_shell)
            signal(SIGXFSZ, SIG_IGN); /* stays ignored across exec: writes fail with EFBIG */
        struct rlimit rl = {(rlim_t)o->fsize_limit_kb << 10, (rlim_t)o->fsize_limit_kb << 10};
        setrlimit(RLIMIT_FSIZE, &rl);
    }
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

int kw_tl_wait(pid_t pid, double deadline, int *timed_out, long *maxrss_kb)
{
    int st = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    for (;;) {
        pid_t r = wait4(pid, &st, WNOHANG, &ru);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            kw_tl_live_drop(pid);
            return -1;
        }
        if (kw_tl_now() > deadline) {
            kill(pid, SIGKILL);
            *timed_out = 1;
            wait4(pid, &st, 0, &ru);
            break;
        }
        usleep(KW_TL_POLL_US);
    }
    kw_tl_live_drop(pid);
    *maxrss_kb = ru.ru_maxrss;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

kw_tl_proc kw_tl_runv(const kw_tl_opts *o, const char *const *argv)
{
    static const kw_tl_opts none;
    kw_tl_proc r = {0};
    if (!o)
        o = &none;
    int ofd = kw_tl_tmpfile(), efd = kw_tl_tmpfile();
    double deadline = kw_tl_now() + (o->timeout_s > 0 ? o->timeout_s : KW_TL_TIMEOUT_S) *
                                        (kw_tl_valgrind() ? KW_TL_VALGRIND_SLOWDOWN : 1);
    pid_t pid = kw_tl_spawn(argv, o, ofd, efd);
    if (pid < 0)
        r.status = -1;
    else
        r.status = kw_tl_wait(pid, deadline, &r.timed_out, &r.maxrss_kb);
    r.out = kw_tl_slurp_fd(ofd);
    r.err = kw_tl_slurp_fd(efd);
    close(ofd);
    close(efd);
    return r;
}

kw_tl_proc kw_tl_run(const kw_tl_opts *o, const char *bin, ...)
{
    const char *argv[KW_TL_MAXARGS + 2];
    int n = 0;
    argv[n++] = bin;
    va_list ap;
    va_start(ap, bin);
    const char *a;
    while (n < KW_TL_MAXARGS && (a = va_arg(ap, const char *)) != NULL)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    return kw_tl_runv(o, argv);
}

kw_tl_proc kw_tl_sh(const char *args, const char *stdin_text)
{
    kw_tl_proc r = {0};
    char *dir = kw_tl_tmpdir("kwtest");
    char cmd[8192], o[256], e[256], i[256];
    if (!dir) {
        r.status = -1;
        r.out = strdup("");
        r.err = strdup("kw_tl_sh: no temporary folder");
        return r;
    }
    snprintf(o, sizeof o, "%s/out", dir);
    snprintf(e, sizeof e, "%s/err", dir);
    snprintf(i, sizeof i, "%s/in", dir);
    if (kw_tl_write(i, stdin_text ? stdin_text : "") != 0) { /* read as empty */ }
    snprintf(cmd, sizeof cmd, "'%s' %s <'%s' >'%s' 2>'%s'", kw_tl_bin(), args, i, o, e);
    /* system(), but the shell tied to the test (kw_tl_fork): a test ended
     * by its hang guard took none of what the shell started with it */
    int st = -1;
    pid_t pid = kw_tl_fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (pid > 0)
        kw_tl_live_drop(pid);
    r.status = pid < 0 || st < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = kw_tl_slurp(o);
    r.err = kw_tl_slurp(e);
    kw_tl_rmrf(dir);
    return r;
}

void kw_tl_free(kw_tl_proc *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

int kw_tl_csv_col(const char *csv, const char *name, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *data = strchr(csv, '\n');
    if (!data)
        return 0;
    data++;
    int cols = 0;
    const char *h = csv, *d = data;
    while (h < data - 1) {
        size_t hl = strcspn(h, ",\n"), dl = d ? strcspn(d, ",\n") : 0;
        if (d && hl == strlen(name) && strncmp(h, name, hl) == 0)
            snprintf(buf, len, "%.*s", (int)dl, d);
        cols++;
        h += hl + 1;
        d = d && d[dl] == ',' ? d + dl + 1 : NULL;
    }
    return cols;
}

struct kw_tl_manifest {
    FILE *f;
    int line;
    char buf[KW_TL_LINE_MAX];
};

kw_tl_manifest *kw_tl_manifest_open(const char *path)
{
    kw_tl_manifest *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    if (!(m->f = fopen(path, "r"))) {
        free(m);
        return NULL;
    }
    return m;
}

int kw_tl_manifest_next(kw_tl_manifest *m, kw_tl_row *row)
{
    while (fgets(m->buf, sizeof m->buf, m->f)) {
        m->line++;
        if (m->buf[0] == '#' || m->buf[0] == '\n')
            continue;
        m->buf[strcspn(m->buf, "\n")] = '\0';
        memset(row, 0, sizeof *row);
        row->line = m->line;
        char *save = NULL, *tok = strtok_r(m->buf, "\t", &save);
        while (tok && row->n < KW_TL_FIELDS_MAX) {
            row->f[row->n++] = tok;
            tok = strtok_r(NULL, "\t", &save);
        }
        for (int i = row->n; i < KW_TL_FIELDS_MAX; i++)
            row->f[i] = "";
        return 1;
    }
    return 0;
}

void kw_tl_manifest_close(kw_tl_manifest *m)
{
    if (!m)
        return;
    fclose(m->f);
    free(m);
}
