/* kw_worker.c - a worker process and its line channel (see kw_worker.h).
 *
 * Design choices:
 * - One AF_UNIX stream socket pair is the worker's stdin AND stdout: knobwise
 *   writes with send(MSG_NOSIGNAL), so a worker that died never raises
 *   SIGPIPE in knobwise (rejected: ignoring SIGPIPE process-wide, which a
 *   library must not do), and a dead worker reads as EOF.
 * - The worker runs in its own process group (setpgid) so a hang is ended by
 *   killing the group: /bin/sh and whatever it started.
 * - The environment is built before fork and handed to execve: between fork
 *   and exec in a threaded process only async-signal-safe calls are allowed.
 * - Deadlines use CLOCK_MONOTONIC and poll(); nothing blocks without one.
 * - The worker's stderr is a pipe of knobwise's, drained into a capped sink
 *   (kw_worker_sink) wherever knobwise waits on the worker and when it is
 *   reaped, then closed. Rejected: handing the worker knobwise's stderr (a
 *   grandchild that leaves the process group with setsid held a caller's
 *   capture pipe open after knobwise exited, and the caller waited) or the
 *   log file itself (a worker flooding stderr filled the disk, the journal's
 *   next write failed, and every resume filled it again).
 * - The worker dies with knobwise (Linux): the process knobwise forks is a
 *   small guardian, the process group's leader, which forks /bin/sh -c CMD and
 *   waits. It asks the kernel (prctl PR_SET_PDEATHSIG) for a signal when its
 *   parent goes and then checks getppid(): if knobwise died (SIGKILL, the OOM
 *   killer) it kills its whole group, the worker and whatever the worker
 *   started in it. Why not PR_SET_PDEATHSIG on the worker itself: the death
 *   signal is cleared at fork, so it reaches /bin/sh only (dash 0.5.12 does not
 *   exec the last command of `sh -c`: the kernel process a worker runs is a
 *   grandchild), and it follows the THREAD that forked (workers are started
 *   from evaluation threads, which end before the process does): the
 *   guardian tells the two apart by getppid() (a thread's end leaves the
 *   process as its parent). The death signal survives execve (the guardian
 *   does not exec) but is cleared by a set-user-ID program's exec or a change
 *   of credentials; processes that leave the group (setsid) are not reached:
 *   the protocol asks a worker to exit at the end of its input (README, Stop).
 *   The guardian passes the worker's exit status or signal on as its own, so
 *   knobwise reads it as before. Measured with a worker that ignores EOF and
 *   SIGTERM: main left it running after `kill -9` of tune.
 * - Both forks are _Fork (glibc 2.34, as close_range below), not fork: no
 *   pthread_atfork handler runs. Under mpirun, Open MPI registers one that
 *   prints "An MPI process has executed an operation involving a call to the
 *   fork() system call..." where its transport (openib, verbs) cannot
 *   survive a fork, and UCX and libfabric register their own, which take their
 *   locks in a process whose evaluation threads may be inside MPI. The
 *   children need none of it: they make async-signal-safe calls only (the
 *   guardian's own fork included, so glibc's locks are never needed and
 *   _Fork leaves them as they were), and the worker's side execs /bin/sh at
 *   once. Memory: the guardian never touches knobwise's pages (it waits on
 *   signals with its stack alone), so pages an RDMA transport registered are
 *   not written by it; where the transport needs it, Open MPI's verbs
 *   components mark them MADV_DONTFORK (ibv_fork_init) and the guardian does
 *   not have them at all, and Linux 5.9+ copies pinned pages at the fork
 *   instead of sharing them. Rejected: posix_spawn of a separate guardian
 *   program (a second installed binary that the library's callers, tests
 *   included, would have to find; a fork child that only waits on signals
 *   needs no exec). Measured: `mpirun -n 2 knobwise tune` with a measuring
 *   worker on both ranks (Open MPI 4.1.4, vader/self, 2026-12-07): no warning
 *   with fork or _Fork there; tests/test_worker's atfork test shows the
 *   handlers that ran before.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "kw_error.h"
#include "kw_worker.h"

extern char **environ;

/* fork without the pthread_atfork handlers (see the file's comment) */
static pid_t kw_w_fork(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return _Fork();
#else
    return fork();
#endif
}

#define KW_WORKER_QUIT_GRACE_S 1.0 /* a worker told to quit gets this long to exit */
#define KW_WORKER_DRAIN_MAX (1 << 20) /* stderr bytes one drain reads before the
                                       * channel gets its turn again */

struct kw_worker {
    pid_t pid;
    int fd;
    int errfd;            /* the read end of the worker's stderr; -1: closed */
    kw_worker_sink *sink; /* NULL: the stderr is read and dropped */
    char *buf; /* bytes read past the last line */
    size_t len;
    int dead;
    char name[128];
};

static double kw_w_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Write all of buf to fd; a failure (a full disk) only loses log text. */
static void kw_w_put(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, buf, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        buf += k;
        n -= (size_t)k;
    }
}

static void kw_w_sink(kw_worker_sink *s, const char *buf, size_t n)
{
    if (!s || n == 0)
        return;
    long long room = s->cap - s->used;
    size_t m = room <= 0 ? 0 : (long long)n < room ? n : (size_t)room;
    kw_w_put(s->fd, buf, m);
    s->used += (long long)m;
    if (m < n) {
        if (s->dropped == 0) {
            char note[200];
            int l = snprintf(note, sizeof note, "%sknobwise: %s cap of %lld bytes reached; the "
                             "worker's further stderr is dropped\n",
                             m > 0 && buf[m - 1] != '\n' ? "\n" : "", s->what, s->cap);
            kw_w_put(s->fd, note, (size_t)l);
        }
        s->dropped += (long long)(n - m);
    }
}

void kw_worker_sink_close(kw_worker_sink *s)
{
    if (!s || s->dropped == 0)
        return;
    char note[200];
    int l = snprintf(note, sizeof note, "knobwise: %lld bytes of the worker's stderr dropped over "
                     "the %s cap (%lld bytes)\n", s->dropped, s->what, s->cap);
    kw_w_put(s->fd, note, (size_t)l);
    s->dropped = 0;
}

/* Read what the worker's stderr holds now (at most KW_WORKER_DRAIN_MAX bytes)
 * into the sink; at its end (every writer gone) close it. */
static void kw_w_drain(kw_worker *w)
{
    char buf[16384];
    size_t total = 0;
    while (w->errfd >= 0 && total < KW_WORKER_DRAIN_MAX) {
        ssize_t k = read(w->errfd, buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (k <= 0) {
            close(w->errfd);
            w->errfd = -1;
            return;
        }
        kw_w_sink(w->sink, buf, (size_t)k);
        total += (size_t)k;
    }
}

/* The worker is gone (or killed): what it left in the pipe goes to the sink,
 * and the pipe is closed, so nothing it started keeps anything of knobwise's
 * (a descendant still writing gets EPIPE). */
static void kw_w_close_err(kw_worker *w)
{
    kw_w_drain(w);
    if (w->errfd >= 0) {
        close(w->errfd);
        w->errfd = -1;
    }
}

/* poll() the channel for events and the stderr pipe for input: > 0 when the
 * channel is ready, 0 when not, < 0 on a poll error; stderr is drained on the
 * way. */
static int kw_w_poll(kw_worker *w, short events, int ms)
{
    /* events 0: the channel is not watched (a hung-up socket would wake
     * poll at once, every time) */
    struct pollfd p[2] = {{.fd = events ? w->fd : -1, .events = events},
                          {.fd = w->errfd, .events = POLLIN}};
    int r = poll(p, w->errfd >= 0 ? 2 : 1, ms);
    if (r < 0)
        return errno == EINTR ? 0 : -1;
    if (w->errfd >= 0 && p[1].revents)
        kw_w_drain(w);
    return p[0].revents != 0;
}

static void kw_w_kill(kw_worker *w)
{
    if (w->pid > 0) {
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
        while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        w->pid = -1;
    }
    kw_w_close_err(w);
    w->dead = 1;
}

/* Status text of an exited worker, reaping it if it has exited. */
static int kw_w_exit_text(kw_worker *w, char *buf, size_t len)
{
    int st;
    snprintf(buf, len, "closed its output");
    for (int i = 0; i < 50 && w->pid > 0; i++) {
        pid_t r = waitpid(w->pid, &st, WNOHANG);
        if (r == w->pid) {
            w->pid = -1;
            if (WIFEXITED(st)) {
                snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
                return WEXITSTATUS(st);
            }
            if (WIFSIGNALED(st))
                snprintf(buf, len, "was killed by signal %d", WTERMSIG(st));
            return -1;
        }
        kw_w_drain(w);
        usleep(2000);
    }
    return -1;
}

/* The poll wait until deadline, at most KW_WORKER_STOP_POLL_MS when a stop
 * flag is watched; KW_WORKER_STOPPED once it is set. */
static kw_worker_fault kw_w_wait_ms(int *ms, double deadline, const volatile sig_atomic_t *stop)
{
    if (stop && *stop)
        return KW_WORKER_STOPPED;
    double left = deadline - kw_w_now();
    if (left <= 0)
        return KW_WORKER_TIMEOUT;
    *ms = left > 1e6 ? 1000000000 : (int)(left * 1000.0) + 1;
    if (stop && *ms > KW_WORKER_STOP_POLL_MS)
        *ms = KW_WORKER_STOP_POLL_MS;
    return KW_WORKER_OK;
}

/* Send one line by the deadline (kw_w_now() seconds): the socket is written
 * without blocking and polled for room, so a worker that stops reading its
 * input while it goes on answering (its socket buffer full, ~200 KB of
 * requests) is a timeout, not a send() that never returns (a tune stuck for
 * good, deaf to SIGTERM: its handler only asks the run to stop). */
static kw_worker_fault kw_w_write(kw_worker *w, const char *line, double deadline,
                                  const volatile sig_atomic_t *stop)
{
    size_t n = strlen(line);
    char *msg = malloc(n + 2);
    if (!msg)
        return KW_WORKER_CRASH;
    memcpy(msg, line, n);
    msg[n++] = '\n';
    size_t off = 0;
    kw_worker_fault f = KW_WORKER_OK;
    while (off < n) {
        ssize_t k = send(w->fd, msg + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            off += (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            f = KW_WORKER_CRASH;
            break;
        }
        int ms;
        if ((f = kw_w_wait_ms(&ms, deadline, stop)) != KW_WORKER_OK)
            break;
        if (kw_w_poll(w, POLLOUT, ms) < 0) {
            f = KW_WORKER_CRASH;
            break;
        }
    }
    free(msg);
    return f;
}

static kw_worker_fault kw_w_readline(kw_worker *w, char *ans, size_t cap, double timeout_s,
                                     const volatile sig_atomic_t *stop)
{
    double deadline = kw_w_now() + timeout_s;
    for (;;) {
        char *nl = memchr(w->buf, '\n', w->len);
        if (nl) {
            size_t l = (size_t)(nl - w->buf);
            if (l >= cap)
                return KW_WORKER_PROTOCOL_ERR;
            memcpy(ans, w->buf, l);
            ans[l] = '\0';
            memmove(w->buf, nl + 1, w->len - l - 1);
            w->len -= l + 1;
            /* every byte up to the LF (README: ASCII, LF-terminated): a CR
             * before it was dropped and a NUL ended the line, the rest unread
             * (`ok ... samples_us=100\0 junk` measured 100 us; until
             * 2026-12-07) */
            for (size_t i = 0; i < l; i++)
                if ((unsigned char)ans[i] < 0x20 && ans[i] != '\t')
                    return KW_WORKER_PROTOCOL_ERR;
            return KW_WORKER_OK;
        }
        if (w->len >= KW_WORKER_LINE_MAX)
            return KW_WORKER_PROTOCOL_ERR;
        int ms;
        kw_worker_fault f = kw_w_wait_ms(&ms, deadline, stop);
        if (f != KW_WORKER_OK)
            return f;
        int r = kw_w_poll(w, POLLIN, ms);
        if (r < 0)
            return KW_WORKER_CRASH;
        if (r == 0)
            continue; /* the deadline check above decides */
        ssize_t k = read(w->fd, w->buf + w->len, KW_WORKER_LINE_MAX - w->len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return KW_WORKER_CRASH;
        w->len += (size_t)k;
    }
}

/* The value of key= in a protocol line (into out), 1 if found. */
static int kw_w_get(const char *line, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += kl) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            const char *v = p + kl + 1;
            size_t l = strcspn(v, " ");
            if (l >= cap)
                l = cap - 1;
            memcpy(out, v, l);
            out[l] = '\0';
            return 1;
        }
    }
    return 0;
}

/* In the forked child (async-signal-safe calls only): exec /bin/sh -c cmd. */
static void kw_w_exec(const char *cmd, char **envp)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    char *argv[] = {(char *)"sh", (char *)"-c", (char *)cmd, NULL};
    execve("/bin/sh", argv, envp);
    _exit(127);
}

#ifdef PR_SET_PDEATHSIG
#define KW_WORKER_PDEATH_SIG SIGUSR1 /* the guardian's "parent gone" signal (blocked, waited for) */

/* Make the guardian's own death say what the worker's said: its exit status,
 * or its signal (raised again with the default action, no core file). */
static void kw_w_guard_mirror(int st)
{
    if (WIFEXITED(st))
        _exit(WEXITSTATUS(st));
    int sig = WTERMSIG(st);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(sig, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    kill(getpid(), sig);
    _exit(128 + sig); /* a signal whose default is to go on (SIGCHLD, SIGUSR1 blocked) */
}
#endif

/* The forked child, leader of the worker's process group (see the file's
 * comment): start the worker, wait for it, and kill the group when knobwise
 * (parent) has died. Async-signal-safe calls only; never returns. Without
 * PR_SET_PDEATHSIG (not Linux): exec the worker directly. */
static void kw_w_guard(const char *cmd, char **envp, pid_t parent)
{
#ifdef PR_SET_PDEATHSIG
    /* knobwise's handlers (SIGTERM, SIGINT, SIGHUP) are not the guardian's;
     * ignored signals stay ignored for the worker (nohup) */
    int chld_ignored = 0;
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) != 0)
            continue;
        if (sig == SIGCHLD && sa.sa_handler == SIG_IGN)
            chld_ignored = 1; /* SIG_IGN would reap the worker for us */
        if (sa.sa_handler != SIG_IGN || sig == SIGCHLD) {
            struct sigaction dfl = {.sa_handler = SIG_DFL};
            sigaction(sig, &dfl, NULL);
        }
    }
    sigset_t watch;
    sigemptyset(&watch);
    sigaddset(&watch, SIGCHLD);
    sigaddset(&watch, KW_WORKER_PDEATH_SIG);
    sigprocmask(SIG_SETMASK, &watch, NULL);
    /* the signal follows the thread that forked; checked against the
     * process below. The check after prctl closes the race with a parent
     * that died before it. */
    if (prctl(PR_SET_PDEATHSIG, KW_WORKER_PDEATH_SIG) != 0)
        kw_w_exec(cmd, envp); /* no guardian possible: the worker as before */
    if (getppid() != parent)
        _exit(1);
    (void)prctl(PR_SET_NAME, "knobwise-guard");
    pid_t b = kw_w_fork(); /* a syscall: no lock of the parent's threads is needed */
    if (b < 0) {
        static const char msg[] = "knobwise: cannot fork the worker\n";
        ssize_t wr = write(2, msg, sizeof msg - 1);
        (void)wr;
        _exit(1);
    }
    if (b == 0) {
        if (chld_ignored) {
            struct sigaction ign = {.sa_handler = SIG_IGN};
            sigaction(SIGCHLD, &ign, NULL);
        }
        kw_w_exec(cmd, envp);
    }
    /* the channel and the stderr pipe are the worker's alone: its EOF is
     * knobwise's, as without a guardian */
    close(0);
    close(1);
    close(2);
    for (;;) {
        int sig = sigwaitinfo(&watch, NULL);
        if (sig == KW_WORKER_PDEATH_SIG) {
            if (getppid() == parent)
                continue; /* only the thread that started us ended */
            kill(0, SIGKILL); /* knobwise is gone: the group, this process too */
            _exit(1);
        }
        int st;
        if (sig == SIGCHLD && waitpid(b, &st, WNOHANG) == b)
            kw_w_guard_mirror(st);
    }
#else
    (void)parent;
    kw_w_exec(cmd, envp);
#endif
}

int kw_worker_start(kw_worker **out, const kw_worker_opts *o)
{
    *out = NULL;
    int rc = 0, sv[2] = {-1, -1}, ep[2] = {-1, -1};
    char **envp = NULL, *ans = NULL;
    char proto[32], idx[32];
    kw_worker *w = calloc(1, sizeof *w);
    if (!w || !(w->buf = malloc(KW_WORKER_LINE_MAX + 1)))
        return free(w), kw_error_set(KW_ENOMEM, "out of memory starting a worker");
    w->pid = -1;
    w->fd = -1;
    w->errfd = -1;
    w->sink = o->err;
    size_t ne = 0;
    while (environ && environ[ne])
        ne++;
    envp = calloc(ne + 3, sizeof *envp);
    if (!envp) {
        rc = kw_error_set(KW_ENOMEM, "out of memory starting a worker");
        goto fail;
    }
    size_t k = 0;
    for (size_t i = 0; i < ne; i++)
        if (strncmp(environ[i], "KW_WORKER_PROTOCOL=", 19) != 0 &&
            strncmp(environ[i], "KW_WORKER_INDEX=", 16) != 0)
            envp[k++] = environ[i];
    snprintf(proto, sizeof proto, "KW_WORKER_PROTOCOL=%d", KW_WORKER_PROTOCOL);
    snprintf(idx, sizeof idx, "KW_WORKER_INDEX=%d", o->index);
    envp[k++] = proto;
    envp[k++] = idx;
    envp[k] = NULL;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        rc = kw_error_set(KW_EIO, "worker '%s': cannot make its channel: %s", o->cmd,
                          strerror(errno));
        goto fail;
    }
    /* the stderr pipe: its write end above 2, so that the child's dup2 onto
     * 0 and 1 cannot overwrite it (knobwise started with those closed) */
    if (pipe2(ep, O_CLOEXEC) != 0) {
        rc = kw_error_set(KW_EIO, "worker '%s': cannot make its stderr pipe: %s", o->cmd,
                          strerror(errno));
        goto fail;
    }
    for (int i = 0; i < 2; i++)
        if (ep[i] < 3) {
            int nfd = fcntl(ep[i], F_DUPFD_CLOEXEC, 3);
            if (nfd < 0) {
                rc = kw_error_set(KW_EIO, "worker '%s': cannot make its stderr pipe: %s",
                                  o->cmd, strerror(errno));
                goto fail;
            }
            close(ep[i]);
            ep[i] = nfd;
        }
    pid_t parent = getpid();
    pid_t pid = kw_w_fork();
    if (pid < 0) {
        rc = kw_error_set(KW_EIO, "worker '%s': cannot fork: %s", o->cmd, strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        /* child: async-signal-safe calls only */
        setpgid(0, 0);
        dup2(sv[1], 0);
        dup2(sv[1], 1);
        dup2(ep[1], 2);
        /* nothing of knobwise's but stdin, stdout and stderr (a journal or
         * another worker's channel opened without O_CLOEXEC stays ours) */
        close_range(3, ~0U, 0);
        kw_w_guard(o->cmd, envp, parent);
    }
    setpgid(pid, pid); /* both sides set it: no race with an early kill */
    w->pid = pid;
    close(sv[1]);
    sv[1] = -1;
    w->fd = sv[0];
    sv[0] = -1;
    close(ep[1]);
    ep[1] = -1;
    (void)fcntl(ep[0], F_SETFL, O_NONBLOCK);
    w->errfd = ep[0];
    ep[0] = -1;
    /* a whole protocol line (README: up to 65,536 bytes): a ready line with a
     * long device= text was refused as "not a protocol line" at 512 */
    if (!(ans = malloc(KW_WORKER_LINE_MAX + 1))) {
        rc = kw_error_set(KW_ENOMEM, "out of memory starting a worker");
        goto fail;
    }
    kw_worker_fault f = kw_w_write(w, "hello protocol=1", kw_w_now() + o->start_timeout_s, NULL);
    /* read its answer even when the hello could not be sent: a worker that
     * answers and exits at once (`echo nope`) may be gone before the hello
     * reaches it, its line still waiting in the socket; the message then
     * depended on who ran first ("exited with status 0" or "answered 'nope'") */
    kw_worker_fault fr = kw_w_readline(w, ans, KW_WORKER_LINE_MAX + 1, o->start_timeout_s,
                                       NULL);
    if (f == KW_WORKER_OK || fr == KW_WORKER_OK)
        f = fr;
    /* Exit statuses (README "The worker protocol", Start): a command /bin/sh cannot
     * run (its status 127, not found, or 126, not executable) is bad input, exit 2; a
     * worker that runs and then fails the handshake (exits, stays silent, answers
     * anything but ready) is a runtime failure, exit 1. */
    if (f != KW_WORKER_OK) {
        char why[160];
        int code = KW_EIO;
        if (f == KW_WORKER_TIMEOUT)
            snprintf(why, sizeof why, "no answer to 'hello protocol=1' within %g s",
                     o->start_timeout_s);
        else if (f == KW_WORKER_PROTOCOL_ERR)
            snprintf(why, sizeof why, "its first line is not a protocol line");
        else {
            char st[64];
            int x = kw_w_exit_text(w, st, sizeof st);
            if (x == 126 || x == 127)
                code = KW_EINPUT;
            snprintf(why, sizeof why, "it %s before answering 'ready'%s", st,
                     x == 127 ? " (/bin/sh: command not found)"
                     : x == 126 ? " (/bin/sh: command not executable)" : "");
        }
        rc = kw_error_set(code, "worker '%s' did not start: %s", o->cmd, why);
        goto fail;
    }
    char pv[16] = "";
    if (strncmp(ans, "ready ", 6) != 0 || !kw_w_get(ans, "protocol", pv, sizeof pv) ||
        strcmp(pv, "1") != 0) {
        rc = kw_error_set(KW_EIO,
                          "worker '%s' did not start: it answered '%.120s' instead of "
                          "'ready protocol=1 name=NAME'", o->cmd, ans);
        goto fail;
    }
    if (!kw_w_get(ans, "name", w->name, sizeof w->name))
        snprintf(w->name, sizeof w->name, "unnamed");
    free(ans);
    free(envp);
    *out = w;
    return 0;
fail:
    free(ans);
    if (sv[0] >= 0)
        close(sv[0]);
    if (sv[1] >= 0)
        close(sv[1]);
    for (int i = 0; i < 2; i++)
        if (ep[i] >= 0)
            close(ep[i]);
    free(envp);
    kw_w_kill(w);
    if (w->fd >= 0)
        close(w->fd);
    free(w->buf);
    free(w);
    return rc;
}

kw_worker_fault kw_worker_request(kw_worker *w, const char *line, char *ans, size_t cap,
                                  double timeout_s, const volatile sig_atomic_t *stop)
{
    if (w->dead)
        return KW_WORKER_CRASH;
    /* one deadline for the request and its answer */
    double deadline = kw_w_now() + timeout_s;
    kw_worker_fault f = kw_w_write(w, line, deadline, stop);
    if (f == KW_WORKER_OK)
        f = kw_w_readline(w, ans, cap, deadline - kw_w_now(), stop);
    if (f != KW_WORKER_OK)
        kw_w_kill(w);
    return f;
}

const char *kw_worker_name(const kw_worker *w) { return w->name; }

void kw_worker_free(kw_worker *w)
{
    if (!w)
        return;
    if (!w->dead && w->pid > 0) {
        double end = kw_w_now() + KW_WORKER_QUIT_GRACE_S;
        kw_w_write(w, "quit", end, NULL);
        while (kw_w_now() < end) {
            if (waitpid(w->pid, NULL, WNOHANG) == w->pid) {
                w->pid = -1;
                break;
            }
            if (w->errfd >= 0)
                (void)kw_w_poll(w, 0, 1); /* its last words while it exits */
            else
                usleep(1000);
        }
    }
    kw_w_kill(w);
    if (w->fd >= 0)
        close(w->fd);
    free(w->buf);
    free(w);
}
