/* kw_fault.c - fault injection in the SQLite manner (test/malloc*.test,
 * ioerr*.test): fail the Nth allocation, or the Nth write / fsync / rename /
 * fwrite / fflush / ftruncate, and see that knobwise gives a clean error.
 *
 * Linked only into fault/knobwise-fault (`make fault`, mk/fault.am): the
 * objects of the ordinary build are linked again with -Wl,--wrap=SYM for each
 * function below, so every call knobwise's own code makes goes through these
 * hooks and nothing else changes (no #ifdef in the product, no second
 * compile; with ./configure --enable-sanitizers the same link runs under
 * ASan/LSan, whose malloc is then __real_malloc). Calls made inside libc,
 * libxml2 and GSL are not hooked (as SQLite hooks only its own allocator).
 *
 * Control (environment, read once at start):
 *   KW_FAULT_ALLOC=N   the Nth allocation (malloc, calloc, realloc, strdup;
 *                      counted from 1 over the whole process) returns NULL
 *                      with errno ENOMEM; only that one (a one-shot fault)
 *   KW_FAULT_IO=N      the Nth I/O call (write to a descriptor above 2,
 *                      fsync, rename, fwrite/fflush to a stream other than
 *                      stdout/stderr, ftruncate) fails with EIO
 *   KW_FAULT_SIGNAL=S  with KW_FAULT_IO=N: the Nth I/O call raises signal S
 *                      (a SIGINT typed at that moment), then goes on unfailed
 *   KW_FAULT_TRACE=FILE  append "fsync-dir PATH" for each fsync of a folder
 *                      and "rename TO" for each rename to FILE, in call order
 *                      (tests/fault/syncdir.sh: which folders are synced when)
 *   KW_FAULT_REPORT=1  at exit, "kw_fault: allocs=A io=I fired=F" on stderr:
 *                      the counts a clean run makes (the sweep's range) and
 *                      whether the fault was reached
 * Counters are atomic (tune's evaluation threads allocate too); the sweep
 * runs with --threads 1 so that N names the same call every time.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
ssize_t __real_write(int fd, const void *buf, size_t n);
int __real_fsync(int fd);
int __real_rename(const char *from, const char *to);
size_t __real_fwrite(const void *buf, size_t size, size_t n, FILE *f);
int __real_fflush(FILE *f);
int __real_ftruncate(int fd, off_t len);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
int __wrap_fsync(int fd);
int __wrap_rename(const char *from, const char *to);
size_t __wrap_fwrite(const void *buf, size_t size, size_t n, FILE *f);
int __wrap_fflush(FILE *f);
int __wrap_ftruncate(int fd, off_t len);

static long kw_fault_alloc_at = -1, kw_fault_io_at = -1, kw_fault_signal = -1;
static int kw_fault_report;
static atomic_long kw_fault_allocs, kw_fault_ios;
static atomic_int kw_fault_fired;

static long kw_fault_env(const char *name)
{
    const char *v = getenv(name); /* getenv does not allocate */
    if (!v || !*v)
        return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return *end == '\0' && x > 0 ? x : -1;
}

static int kw_fault_trace_fd = -1;

/* One line "WHAT PATH\n" to the trace file (a single write: O_APPEND keeps
 * the lines of threads whole). */
static void kw_fault_trace(const char *what, const char *path)
{
    if (kw_fault_trace_fd < 0)
        return;
    char line[4200];
    int n = snprintf(line, sizeof line, "%s %s\n", what, path);
    if (n > 0 && (size_t)n < sizeof line && __real_write(kw_fault_trace_fd, line, (size_t)n) < 0) {
    }
}

__attribute__((constructor)) static void kw_fault_init(void)
{
    const char *tr = getenv("KW_FAULT_TRACE");
    if (tr && *tr)
        kw_fault_trace_fd = open(tr, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    kw_fault_alloc_at = kw_fault_env("KW_FAULT_ALLOC");
    kw_fault_io_at = kw_fault_env("KW_FAULT_IO");
    kw_fault_signal = kw_fault_env("KW_FAULT_SIGNAL");
    kw_fault_report = kw_fault_env("KW_FAULT_REPORT") > 0;
}

__attribute__((destructor)) static void kw_fault_fini(void)
{
    if (!kw_fault_report)
        return;
    char line[128];
    int n = snprintf(line, sizeof line, "kw_fault: allocs=%ld io=%ld fired=%d\n",
                     atomic_load(&kw_fault_allocs), atomic_load(&kw_fault_ios),
                     atomic_load(&kw_fault_fired));
    if (n > 0 && __real_write(2, line, (size_t)n) < 0) { /* nothing to do */
    }
}

static int kw_fault_alloc_hit(void)
{
    long k = atomic_fetch_add(&kw_fault_allocs, 1) + 1;
    if (k != kw_fault_alloc_at)
        return 0;
    atomic_store(&kw_fault_fired, 1);
    errno = ENOMEM;
    return 1;
}

static int kw_fault_io_hit(void)
{
    long k = atomic_fetch_add(&kw_fault_ios, 1) + 1;
    if (k != kw_fault_io_at)
        return 0;
    atomic_store(&kw_fault_fired, 1);
    if (kw_fault_signal > 0) {
        raise((int)kw_fault_signal);
        return 0;
    }
    errno = EIO;
    return 1;
}

void *__wrap_malloc(size_t n) { return kw_fault_alloc_hit() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size)
{
    return kw_fault_alloc_hit() ? NULL : __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t n) { return kw_fault_alloc_hit() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return kw_fault_alloc_hit() ? NULL : __real_strdup(s); }

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
    if (fd > 2 && kw_fault_io_hit())
        return -1;
    return __real_write(fd, buf, n);
}
int __wrap_fsync(int fd)
{
    struct stat st;
    if (kw_fault_trace_fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        char link[64], path[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, path, sizeof path - 1);
        path[n > 0 ? n : 0] = '\0';
        kw_fault_trace("fsync-dir", path);
    }
    return kw_fault_io_hit() ? -1 : __real_fsync(fd);
}
int __wrap_rename(const char *from, const char *to)
{
    kw_fault_trace("rename", to);
    return kw_fault_io_hit() ? -1 : __real_rename(from, to);
}
size_t __wrap_fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
    if (f != stdout && f != stderr && kw_fault_io_hit())
        return 0;
    return __real_fwrite(buf, size, n, f);
}
int __wrap_fflush(FILE *f)
{
    if (f && f != stdout && f != stderr && kw_fault_io_hit())
        return EOF;
    return __real_fflush(f);
}
int __wrap_ftruncate(int fd, off_t len) { return kw_fault_io_hit() ? -1 : __real_ftruncate(fd, len); }
