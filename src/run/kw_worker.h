/* kw_worker.h - one long-lived worker process speaking the worker protocol
 * (README "The worker protocol (measuring evaluator, version 1)"): start and
 * handshake, one request line out and one answer line back under a deadline,
 * kill and reap. It knows lines, not measurements: kw_exec.c builds the
 * requests and reads the answers.
 *
 * Not thread-safe: one caller at a time per worker (kw_exec holds a mutex).
 */
#ifndef KW_WORKER_H
#define KW_WORKER_H

#include <signal.h>

#include <stddef.h>

#define KW_WORKER_LINE_MAX 65536 /* protocol: a line is at most this many bytes */
#define KW_WORKER_PROTOCOL 1

typedef enum {
    KW_WORKER_OK = 0,
    KW_WORKER_TIMEOUT,  /* no full line before the deadline */
    KW_WORKER_CRASH,    /* the worker exited or closed its stdout */
    KW_WORKER_PROTOCOL_ERR, /* a line too long or not text */
    KW_WORKER_STOPPED       /* *stop was set while waiting (tune: SIGINT/SIGTERM) */
} kw_worker_fault;

typedef struct kw_worker kw_worker;

/* Where a worker's stderr goes. The worker never gets knobwise's own stderr:
 * it writes into a pipe that knobwise drains while it waits on the worker
 * (and when it reaps it), writing at most cap bytes into fd in all; the rest
 * is counted, not kept. One sink outlives the workers restarted into it. */
#define KW_WORKER_LOG_CAP (4LL << 20)       /* RUN/worker.log: 4 MiB */
#define KW_WORKER_STDERR_CAP (64LL << 10)   /* forwarded to knobwise's stderr: 64 KiB */
typedef struct kw_worker_sink {
    int fd;            /* RUN/worker.log, or 2 (knobwise's stderr) */
    long long used;    /* bytes in fd so far (a log's size when it was opened) */
    long long cap;     /* no more than this (used may start above it) */
    long long dropped; /* bytes read past the cap */
    const char *what;  /* for the notes: "worker.log", "forwarding" (to stderr) */
} kw_worker_sink;

/* The closing note of a sink that dropped bytes ("knobwise: worker.log cap of
 * N bytes reached, M bytes of the worker's stderr dropped"), written into it;
 * then dropped is 0 again. Nothing when none were dropped. */
void kw_worker_sink_close(kw_worker_sink *s);

typedef struct kw_worker_opts {
    const char *cmd;        /* run through /bin/sh -c */
    double start_timeout_s; /* for the `ready` answer */
    int index;              /* KW_WORKER_INDEX */
    kw_worker_sink *err;    /* the worker's stderr (borrowed, outlives the worker); NULL: dropped */
} kw_worker_opts;

/* Start cmd and complete the handshake. KW_EINPUT (exit 2) when /bin/sh cannot
 * run cmd (status 127 or 126 before any answer); KW_EIO (exit 1) when the worker
 * runs and then exits, stays silent past the start timeout or answers anything
 * but `ready protocol=1 ...` (the message says which and quotes the answer), and
 * for resources; KW_ENOMEM. On failure nothing is left running. */
int kw_worker_start(kw_worker **out, const kw_worker_opts *o);

/* Send `line` (no newline) and read one answer line into ans (NUL-terminated,
 * newline stripped) within timeout_s. Returns a kw_worker_fault; on a fault
 * the worker is killed and must be freed (kw_worker_free) and started again.
 * stop (NULL: never): looked at every KW_WORKER_STOP_POLL_MS while waiting;
 * once it is non-zero the request ends, KW_WORKER_STOPPED. */
#define KW_WORKER_STOP_POLL_MS 100
kw_worker_fault kw_worker_request(kw_worker *w, const char *line, char *ans, size_t cap,
                                  double timeout_s, const volatile sig_atomic_t *stop);

/* The worker's `name=` from its ready line (static storage of w). */
const char *kw_worker_name(const kw_worker *w);

/* Send `quit`, wait up to a short grace period for the exit, then kill the
 * process group; reap it; free. NULL is fine. */
void kw_worker_free(kw_worker *w);

#endif
