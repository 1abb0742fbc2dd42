/* kw_tl.h - the test helper library (libkwtl.a, built by make check): what
 * the test programs share instead of each keeping a copy.
 *
 *   paths      kw_tl_bin, kw_tl_src       the built knobwise, the source tree
 *   folders    kw_tl_tmpdir, kw_tl_rm_tree, kw_tl_rmrf, kw_tl_entries,
 *              kw_tl_exists
 *   files      kw_tl_slurp, kw_tl_slurp_n, kw_tl_slurp_fd, kw_tl_write, kw_tl_tmpfile,
 *              kw_tl_cut_last_line, kw_tl_tune_evidence_cut
 *   processes  kw_tl_run, kw_tl_runv      fork/exec, no shell: exit status,
 *                                         stdout, stderr, timeout, limits
 *              kw_tl_sh                   `knobwise ARGS` through /bin/sh
 *   tables     kw_tl_csv_col              a column of a CSV's first row
 *   manifests  kw_tl_manifest_*           tab-separated rows, '#' comments
 *
 * Design choices: plain C with no Criterion in it, so a test asserts on what
 * a helper returns and a helper never ends a test behind its back; every
 * returned string is malloc'ed and never NULL where a test would print it
 * (a missing file reads as ""), so a failing test reports instead of
 * crashing. The process runner uses fork/exec rather than system(): a shell
 * in between would hide the child's signals and resource use, and quoting
 * hostile file names through a shell is a bug of its own (kw_tl_sh exists
 * for the tests whose cases are written as shell words).
 */
#ifndef KW_TL_H
#define KW_TL_H

/* What the tests that run processes and read files use beside these helpers
 * (the headers the old per-test copies brought with them). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
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

#define KW_TL_MAXARGS 64       /* arguments kw_tl_run takes */

/* A hang guard for a test that would block for ever on a broken binary:
 * SIGALRM after s seconds (30 times that under valgrind) ends the test
 * process, which Criterion reports as a crash. Not Criterion's .timeout: its
 * runner now and then leaks 48 bytes when timed tests overlap, and
 * LeakSanitizer then fails the whole sanitizer suite. */
#define KW_TL_HANG_GUARD(s) alarm(getenv("KW_VALGRIND") ? 30u * (s) : (s))
#define KW_TL_TIMEOUT_S 60     /* a run's timeout when the options give none */
#define KW_TL_VALGRIND_SLOWDOWN 30 /* timeouts stretch this much under valgrind */

/* 1 under `make check-valgrind` (KW_VALGRIND set and not "0"). */
int kw_tl_valgrind(void);
/* CLOCK_MONOTONIC in seconds. */
double kw_tl_now(void);

/* The built knobwise (KW_BIN, else ./knobwise) and the source tree
 * (KW_SRCDIR, else .) as absolute paths (tests change folder); static
 * storage, valid for the process. */
const char *kw_tl_bin(void);
const char *kw_tl_src(void);

/* A fresh folder /tmp/PREFIX.XXXXXX (malloc'ed name; NULL on failure). */
char *kw_tl_tmpdir(const char *prefix);
/* Remove a folder and everything in it (no shell, links not followed):
 * 0, or -1 when something could not be removed. */
int kw_tl_rm_tree(const char *dir);
/* kw_tl_rm_tree, then free the name; NULL is a no-op. */
void kw_tl_rmrf(char *dir);
/* Entries of a folder other than . and .. (-1 if it cannot be opened): a
 * refused command must leave its folder as it found it. */
int kw_tl_entries(const char *dir);
/* 1 when path exists (stat follows links). */
int kw_tl_exists(const char *path);

/* A whole file, NUL-terminated (malloc'ed; "" when it cannot be read). */
char *kw_tl_slurp(const char *path);
/* A whole file, NUL-terminated, its length in *n (malloc'ed; NULL when it
 * cannot be opened or read, *n 0). */
char *kw_tl_slurp_n(const char *path, size_t *n);
/* What fd holds, from offset 0 (malloc'ed; "" on error). */
char *kw_tl_slurp_fd(int fd);
/* Write text to path (created or truncated): 0, or -1 with errno. */
int kw_tl_write(const char *path, const char *text);
/* Cut path's last line off when it begins with prefix (the last record a
 * kill would have kept the writer from writing: RUN/evidence's "F n="). 0
 * when cut; -1 when the file cannot be read or written, or its last line is
 * another one. */
int kw_tl_cut_last_line(const char *path, const char *prefix);
/* A finished run of spaces/validate_small.xml (--budget 6) made at run whose
 * RUN/evidence lost its end record (F n=), as a kill just before writing it
 * leaves it: 0, or -1 with what failed in err. */
int kw_tl_tune_evidence_cut(const char *run, char *err, size_t n);
/* An unlinked temporary file open for read and write (-1 on failure). */
int kw_tl_tmpfile(void);

typedef struct kw_tl_opts {
    int timeout_s;          /* SIGKILL after this many seconds (0: KW_TL_TIMEOUT_S) */
    long as_limit_mb;       /* RLIMIT_AS in MiB (0: none; ignored in sanitizer builds) */
    long fsize_limit_kb;    /* RLIMIT_FSIZE in KiB (0: none), SIGXFSZ ignored */
    int fsize_as_shell;     /* with fsize_limit_kb: SIGXFSZ left at its default, as a
                               shell's `ulimit -f` leaves it */
    const char *cwd;        /* working folder of the child (NULL: inherit) */
    const char *stdin_path; /* NULL: /dev/null */
} kw_tl_opts;

typedef struct kw_tl_proc {
    int status;       /* exit status, or 128 + signal; -1 if it could not start */
    int timed_out;    /* killed by the timeout */
    long maxrss_kb;   /* peak resident set of the child */
    char *out, *err;  /* stdout, stderr (malloc'ed, NUL-terminated) */
} kw_tl_proc;

/* Start argv (argv[0] a path, NULL-terminated) with the options, stdout and
 * stderr into the two fds, in a process group of its own. Returns the pid
 * (or -1). */
pid_t kw_tl_spawn(const char *const *argv, const kw_tl_opts *o, int ofd, int efd);
/* Wait for pid until deadline (kw_tl_now() seconds), SIGKILL after it;
 * returns the exit status or 128 + signal (-1 on a wait error). */
int kw_tl_wait(pid_t pid, double deadline, int *timed_out, long *maxrss_kb);
/* Run argv (argv[0] a path, NULL-terminated) with the options (NULL: none). */
kw_tl_proc kw_tl_runv(const kw_tl_opts *o, const char *const *argv);
/* Run `bin ARG...` (a NULL-terminated list) with the options. */
kw_tl_proc kw_tl_run(const kw_tl_opts *o, const char *bin, ...);
/* Run `knobwise ARGS` through /bin/sh (args are shell words), stdin from
 * stdin_text (NULL: empty). Only status, out and err are set.
 * Every child these start (kw_tl_spawn, kw_tl_runv, kw_tl_run, kw_tl_sh) is
 * in a process group of its own and dies with the test: SIGKILL to its group
 * when the hang guard's SIGALRM ends the test, SIGKILL to it when the test
 * process dies otherwise (PR_SET_PDEATHSIG). Start them from the test's own
 * thread (the death signal follows the thread that forked). */
kw_tl_proc kw_tl_sh(const char *args, const char *stdin_text);
/* Free a run's output (the struct itself is the caller's). */
void kw_tl_free(kw_tl_proc *r);

/* Column `name` of the first data row of a header + rows CSV (no quoted
 * fields), copied into buf. Returns the header's column count, with buf ""
 * when the column is absent. */
int kw_tl_csv_col(const char *csv, const char *name, char *buf, size_t len);

/* Manifests: text files of rows, fields separated by tabs; blank lines and
 * lines starting with '#' are comments. */
#define KW_TL_FIELDS_MAX 16
typedef struct kw_tl_row {
    int line;                         /* line number in the file, from 1 */
    int n;                            /* fields in this row */
    const char *f[KW_TL_FIELDS_MAX];  /* the fields; f[i] "" for i >= n */
} kw_tl_row;
typedef struct kw_tl_manifest kw_tl_manifest;
/* Open a manifest (NULL when it cannot be read). */
kw_tl_manifest *kw_tl_manifest_open(const char *path);
/* The next row: 1, or 0 at the end. The row's strings stay valid until the
 * next call. */
int kw_tl_manifest_next(kw_tl_manifest *m, kw_tl_row *row);
void kw_tl_manifest_close(kw_tl_manifest *m);

#endif
