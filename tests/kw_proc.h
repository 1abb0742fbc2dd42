/* kw_proc.h - run the built knobwise binary the hostile way: no shell, a
 * wall-clock timeout (SIGKILL), an address-space limit (RLIMIT_AS), a file
 * size limit (RLIMIT_FSIZE, with SIGXFSZ ignored so writes fail with EFBIG),
 * and the child's peak resident memory (wait4's ru_maxrss). Used by the
 * reliability tests (test_hostile.c, test_crash.c).
 *
 * Design choice: fork/exec rather than system(): a shell in between would hide
 * the child's own signal and resource usage, and quoting hostile file names
 * through a shell is a bug of its own. Header-only so each test stays one file.
 */
#ifndef KW_PROC_H
#define KW_PROC_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* In a sanitizer build (./configure --enable-sanitizers) ASan reserves
 * terabytes of virtual address space for its shadow, so RLIMIT_AS cannot be
 * used; under `make check-valgrind` (KW_VALGRIND=1) neither, and everything
 * runs about 30x slower. Peak RSS is still measured. */
#if defined(__SANITIZE_ADDRESS__)
#define KW_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KW_SANITIZED 1
#endif
#endif
#ifndef KW_SANITIZED
#define KW_SANITIZED 0
#endif

static inline int kw_p_valgrind(void)
{
    const char *v = getenv("KW_VALGRIND");
    return v && *v && strcmp(v, "0") != 0;
}

#define KW_P_MAXARGS 64

typedef struct kw_proc_opts {
    int timeout_s;        /* SIGKILL after this many seconds (0: 60) */
    long as_limit_mb;     /* RLIMIT_AS in MiB (0: none; ignored in sanitizer builds) */
    long fsize_limit_kb;  /* RLIMIT_FSIZE in KiB (0: none), SIGXFSZ ignored */
    const char *cwd;      /* working folder of the child (NULL: inherit) */
    const char *stdin_path; /* NULL: /dev/null */
} kw_proc_opts;

typedef struct kw_proc {
    int status;       /* exit status, or 128 + signal */
    int timed_out;    /* killed by the timeout */
    long maxrss_kb;   /* peak resident set of the child */
    char *out, *err;  /* stdout, stderr (malloc, NUL-terminated) */
} kw_proc;

static inline char *kw_p_slurp_fd(int fd)
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

static inline double kw_p_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Start `prog argv...` with the options, stdout/stderr captured into the two
 * fds. Returns the pid (or -1). */
static inline pid_t kw_p_spawn(const char *const *argv, const kw_proc_opts *o, int ofd, int efd)
{
    pid_t pid = fork();
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
    if (o->as_limit_mb > 0 && !KW_SANITIZED && !kw_p_valgrind()) {
        struct rlimit rl = {(rlim_t)o->as_limit_mb << 20, (rlim_t)o->as_limit_mb << 20};
        setrlimit(RLIMIT_AS, &rl);
    }
    if (o->fsize_limit_kb > 0) {
        signal(SIGXFSZ, SIG_IGN); /* stays ignored across exec: writes fail with EFBIG */
        struct rlimit rl = {(rlim_t)o->fsize_limit_kb << 10, (rlim_t)o->fsize_limit_kb << 10};
        setrlimit(RLIMIT_FSIZE, &rl);
    }
    setpgid(0, 0);
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

/* Wait for pid until the deadline, SIGKILL after it. */
static inline int kw_p_wait(pid_t pid, double deadline, int *timed_out, long *maxrss_kb)
{
    int st = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    for (;;) {
        pid_t r = wait4(pid, &st, WNOHANG, &ru);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return -1;
        if (kw_p_now() > deadline) {
            kill(pid, SIGKILL);
            *timed_out = 1;
            wait4(pid, &st, 0, &ru);
            break;
        }
        usleep(2000);
    }
    *maxrss_kb = ru.ru_maxrss;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static inline int kw_p_tmpfile(void)
{
    char t[] = "/tmp/kwproc.XXXXXX";
    int fd = mkstemp(t);
    if (fd >= 0)
        unlink(t);
    return fd;
}

/* Run argv (argv[0] an absolute path, NULL-terminated list). */
static inline kw_proc kw_p_runv(const kw_proc_opts *o, const char *const *argv)
{
    kw_proc r = {0};
    int ofd = kw_p_tmpfile(), efd = kw_p_tmpfile();
    double deadline = kw_p_now() + (o->timeout_s > 0 ? o->timeout_s : 60) * (kw_p_valgrind() ? 30 : 1);
    pid_t pid = kw_p_spawn(argv, o, ofd, efd);
    if (pid < 0) {
        r.status = -1;
    } else {
        r.status = kw_p_wait(pid, deadline, &r.timed_out, &r.maxrss_kb);
    }
    r.out = kw_p_slurp_fd(ofd);
    r.err = kw_p_slurp_fd(efd);
    close(ofd);
    close(efd);
    return r;
}

/* Run `knobwise ARG...` (NULL-terminated) with the options. */
static inline kw_proc kw_p_run(const kw_proc_opts *o, const char *bin, ...)
{
    const char *argv[KW_P_MAXARGS + 2];
    int n = 0;
    argv[n++] = bin;
    va_list ap;
    va_start(ap, bin);
    const char *a;
    while (n < KW_P_MAXARGS && (a = va_arg(ap, const char *)) != NULL)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    return kw_p_runv(o, argv);
}

/* The built knobwise (KW_BIN, else ./knobwise) and the source tree
 * (KW_SRCDIR, else .) as absolute paths: the runs change folder. */
static inline const char *kw_p_abs(char *buf, size_t len, const char *env, const char *dflt)
{
    if (!buf[0]) {
        const char *v = getenv(env);
        if (!realpath(v ? v : dflt, buf))
            snprintf(buf, len, "%s", v ? v : dflt);
    }
    return buf;
}

static inline const char *kw_p_bin(void)
{
    static char abs_bin[4096];
    return kw_p_abs(abs_bin, sizeof abs_bin, "KW_BIN", "./knobwise");
}

static inline const char *kw_p_src(void)
{
    static char abs_src[4096];
    return kw_p_abs(abs_src, sizeof abs_src, "KW_SRCDIR", ".");
}

/* Entries in a folder other than . and .. (-1 if it cannot be opened): a
 * refused command must leave its folder as it found it. */
static inline int kw_p_entries(const char *dir)
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

/* A fresh folder /tmp/PREFIX.XXXXXX (malloc'd name; NULL on failure). */
static inline char *kw_p_tmpdir(const char *prefix)
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

static inline int kw_p_rm1(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

/* Remove a folder and everything in it (no shell), and free its name. */
static inline void kw_p_rmrf(char *dir)
{
    if (dir)
        nftw(dir, kw_p_rm1, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

static inline void kw_p_free(kw_proc *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

#endif
