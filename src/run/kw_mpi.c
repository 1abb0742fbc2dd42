/* kw_mpi.c - one tune run over MPI ranks (see kw_mpi.h for the design).
 *
 * Rank 0: the engine's pool threads call kw_mpi_eval; a call takes one of
 * rank 0's own slots when one is free, else it is queued and waits. One
 * dispatcher thread makes every MPI call of rank 0: it sends the oldest
 * queued candidate to a rank with a free slot and receives results, so MPI
 * needs only MPI_THREAD_SERIALIZED. Other ranks: the main thread makes the
 * MPI calls, `threads` evaluation threads take jobs from a small queue.
 *
 * Waiting polls with MPI_Iprobe and a condition-variable sleep that doubles
 * from KW_MPI_POLL_MIN_NS to KW_MPI_POLL_MAX_NS while nothing happens: Open
 * MPI's blocking receive spins on a core, which on an oversubscribed node
 * (more ranks than cores) takes the CPU from the evaluations; new work from
 * the engine wakes the dispatcher at once (condition signal). Rejected: a
 * blocking MPI_Recv per rank in its own thread (MPI_THREAD_MULTIPLE, and a
 * spinning thread per rank).
 *
 * Without --with-mpi (KW_HAVE_MPI undefined) only the one-process case is
 * compiled: rank 0 of 1.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kw_mpi.h"

#ifndef KW_HAVE_MPI

int kw_mpi_init(void) { return 0; }
void kw_mpi_set_args(int argc, char *const *argv)
{
    (void)argc;
    (void)argv;
}
int kw_mpi_args_differ(const kw_mpi_job_spec *js, char *msg, size_t len)
{
    (void)js;
    if (len)
        msg[0] = '\0';
    return 0;
}
int kw_mpi_rank(void) { return 0; }
int kw_mpi_launched(void) { return 0; }
int kw_mpi_local_rank(void) { return 0; }
void kw_mpi_finish(void) {}

int kw_mpi_pool_start(kw_mpi_pool **out, const kw_mpi_spec *spec, const kw_evaluator *local,
                      int local_slots, const volatile sig_atomic_t *stop)
{
    (void)spec;
    (void)local;
    (void)local_slots;
    (void)stop;
    *out = NULL;
    return kw_error_set(KW_ESTATE, "knobwise was built without MPI (./configure --with-mpi)");
}
const kw_evaluator *kw_mpi_pool_iface(kw_mpi_pool *p)
{
    (void)p;
    return NULL;
}
int kw_mpi_pool_slots(const kw_mpi_pool *p)
{
    (void)p;
    return 0;
}
void kw_mpi_pool_format(const kw_mpi_pool *p, char *buf, size_t len)
{
    (void)p;
    if (len)
        buf[0] = '\0';
}
void kw_mpi_pool_free(kw_mpi_pool *p) { (void)p; }
int kw_mpi_pool_stopped_by(const kw_mpi_pool *p, int *sig)
{
    (void)p;
    *sig = 0;
    return 0;
}
int kw_mpi_spec_recv(kw_mpi_job_spec **out)
{
    *out = NULL;
    return kw_error_set(KW_ESTATE, "knobwise was built without MPI (./configure --with-mpi)");
}
const kw_mpi_spec *kw_mpi_spec_of(const kw_mpi_job_spec *js)
{
    (void)js;
    return NULL;
}
void kw_mpi_spec_free(kw_mpi_job_spec *js) { (void)js; }
int kw_mpi_serve(const kw_evaluator *ev, int threads, int setup_rc, double *deadline_s,
                 const volatile sig_atomic_t *stop)
{
    (void)ev;
    (void)threads;
    (void)setup_rc;
    (void)deadline_s;
    (void)stop;
    return kw_error_set(KW_ESTATE, "knobwise was built without MPI (./configure --with-mpi)");
}

#else /* KW_HAVE_MPI */

#include <mpi.h>

enum {
    KW_MPI_TAG_SPEC = 1,   /* 0 -> r: the run description */
    KW_MPI_TAG_QUIT,       /* 0 -> r: no run (rank 0 ended before starting one) */
    KW_MPI_TAG_HELLO,      /* r -> 0: setup status and slots */
    KW_MPI_TAG_JOB,        /* 0 -> r: evaluate one candidate */
    KW_MPI_TAG_RESULT,     /* r -> 0: its metrics */
    KW_MPI_TAG_STOP        /* 0 -> r: the run is over */
};

/* The poll sleep's bounds: the longest a message waits to be noticed is
 * KW_MPI_POLL_MAX_NS (0.2 ms, under a third of one model evaluation of the
 * default job: 1,300-1,600 evaluations/s per core, README "make bench");
 * 5,000 wake-ups a second cost an idle rank well under 1% of a core. */
#define KW_MPI_POLL_MIN_NS 1000L
#define KW_MPI_POLL_MAX_NS 200000L
#define KW_MPI_HOST_LEN 64
#define KW_MPI_MSG_LEN 1024

/* left_s: the seconds rank 0's deadline leaves when the job is sent
 * (KW_MPI_LEFT_NONE: no deadline, KW_MPI_LEFT_KEEP: the rank keeps its own) */
typedef struct kw_mpi_wjob {
    int32_t id, shape, rep, pad;
    double left_s;
    kw_cand cand;
} kw_mpi_wjob;
#define KW_MPI_LEFT_NONE 0.0
#define KW_MPI_LEFT_KEEP (-1.0)
/* a deadline already past when the job is sent: the rank stops at once */
#define KW_MPI_LEFT_PAST 1e-9

/* sig: the rank's stop flag (the signal it got) when its evaluation
 * returned KW_EINTERRUPTED because of it; else 0 */
typedef struct kw_mpi_wres {
    int32_t id, rc, sig, pad;
    kw_metrics m;
    char err[KW_GUARDS_LEN];
} kw_mpi_wres;

typedef struct kw_mpi_hello {
    int32_t rc, slots;
    char host[KW_MPI_HOST_LEN];
    char msg[KW_MPI_MSG_LEN];
} kw_mpi_hello;

typedef struct kw_mpi_whead {
    int32_t n_attrs, n_inputs, threads, n_args; /* n_args: rank 0's options, after the pairs */
    double time_limit_s;
    uint64_t seed;
} kw_mpi_whead;

static int kw_mpi_on;      /* MPI_Init was called (started by mpirun) */
static int kw_mpi_me, kw_mpi_n = 1;
static int kw_mpi_local;   /* index among the ranks of this node */
static int kw_mpi_sent;    /* rank 0: the run description went out */
static int kw_mpi_argc;    /* this rank's options (kw_mpi_set_args) */
static char *const *kw_mpi_argv;

static int kw_mpi_err(int mpi_rc, const char *what, int peer)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "MPI error %d", mpi_rc);
    return kw_error_set(KW_EIO, "MPI: %s rank %d: %s (a rank died or its connection was lost)",
                        what, peer, s);
}

/* The poll waits are timed on CLOCK_MONOTONIC (kw_mpi_cond_init): on the
 * wall clock a step back (NTP, a VM resumed, date -s) made every wait last
 * the step, so a run stalled as long (an hour back: an hour without
 * evaluations) until 2026-12-06. */
static void kw_mpi_cond_init(pthread_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}

static void kw_mpi_deadline(struct timespec *ts, long ns)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_nsec += ns;
    while (ts->tv_nsec >= 1000000000L) {
        ts->tv_nsec -= 1000000000L;
        ts->tv_sec++;
    }
}

static double kw_mpi_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int kw_mpi_init(void)
{
    /* Only a process mpirun started joins a job: a plain `knobwise tune` of
     * an MPI build makes no MPI call at all (no singleton start-up). */
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK"))
        return 0;
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
        return kw_error_set(KW_EIO, "MPI: MPI_Init_thread failed");
    kw_mpi_on = 1;
    if (provided < MPI_THREAD_SERIALIZED)
        return kw_error_set(KW_EIO, "MPI: the library gives thread level %d, knobwise needs "
                            "MPI_THREAD_SERIALIZED (%d)", provided, MPI_THREAD_SERIALIZED);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &kw_mpi_me);
    MPI_Comm_size(MPI_COMM_WORLD, &kw_mpi_n);
    /* the rank's index among the ranks of its node: which device its worker uses */
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, kw_mpi_me, MPI_INFO_NULL,
                            &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &kw_mpi_local);
        MPI_Comm_free(&node);
    }
    return 0;
}

void kw_mpi_set_args(int argc, char *const *argv)
{
    kw_mpi_argc = argc > 0 && argv ? argc : 0;
    kw_mpi_argv = argv;
}

int kw_mpi_rank(void) { return kw_mpi_me; }
int kw_mpi_launched(void) { return kw_mpi_on; }
int kw_mpi_local_rank(void) { return kw_mpi_local; }

void kw_mpi_finish(void)
{
    if (!kw_mpi_on)
        return;
    if (kw_mpi_me == 0 && !kw_mpi_sent)
        for (int r = 1; r < kw_mpi_n; r++)
            MPI_Send(NULL, 0, MPI_BYTE, r, KW_MPI_TAG_QUIT, MPI_COMM_WORLD);
    kw_mpi_sent = 1;
    MPI_Finalize();
    kw_mpi_on = 0;
}

/* ------------------------------------------------------------------ rank 0 */

typedef struct kw_mpi_req {
    const kw_cand *cand;
    int shape, rep;
    kw_metrics *out;
    int rc, done, rank;
    int pin; /* the rank that must evaluate it (kw_mpi_eval_on), else -1 */
    char err[KW_GUARDS_LEN];
    struct kw_mpi_req *next;
} kw_mpi_req;

struct kw_mpi_pool {
    kw_evaluator iface;
    const kw_evaluator *local;
    const volatile sig_atomic_t *stop;
    const double *deadline_s; /* kw_mpi_spec.deadline_s */
    int n;                   /* ranks */
    int *slots, *busy;       /* per rank */
    long *evals;             /* per rank, finished */
    int total_slots, remote_slots, local_free, next_rank;
    kw_mpi_req **inflight;   /* remote_slots entries, indexed by job id */
    kw_mpi_req *head, *tail; /* queued, oldest first */
    pthread_mutex_t mu;
    pthread_cond_t kick, done;
    pthread_t tid;
    int running, quit, failed;
    char fail_msg[KW_GUARDS_LEN];
    double t0;
    int stopped_rank, stopped_sig; /* the first rank whose signal stopped an evaluation */
};

/* Finish a request (mu held). */
static void kw_mpi_complete(kw_mpi_pool *p, kw_mpi_req *q, int rc, const char *err)
{
    q->rc = rc;
    snprintf(q->err, sizeof q->err, "%s", err ? err : "");
    q->done = 1;
    (void)p;
}

/* An MPI call failed (mu held): every queued and in-flight evaluation fails
 * with the message, and so does every later one. */
static void kw_mpi_fail(kw_mpi_pool *p, const char *msg)
{
    if (!p->failed)
        snprintf(p->fail_msg, sizeof p->fail_msg, "%s", msg);
    p->failed = 1;
    for (int i = 0; i < p->remote_slots; i++)
        if (p->inflight[i]) {
            kw_mpi_complete(p, p->inflight[i], KW_EIO, p->fail_msg);
            p->inflight[i] = NULL;
        }
    for (kw_mpi_req *q = p->head; q; q = q->next)
        kw_mpi_complete(p, q, KW_EIO, p->fail_msg);
    p->head = p->tail = NULL;
    pthread_cond_broadcast(&p->done);
}

/* The next rank (round robin from the last one given work) with a free
 * slot, or -1. */
static int kw_mpi_free_rank(kw_mpi_pool *p)
{
    for (int k = 0; k < p->n - 1; k++) {
        int r = 1 + (p->next_rank + k) % (p->n - 1);
        if (p->busy[r] < p->slots[r]) {
            p->next_rank = r % (p->n - 1);
            return r;
        }
    }
    return -1;
}

/* What a job carries of rank 0's deadline (kw_mpi_wjob.left_s). */
static double kw_mpi_left(const double *deadline_s)
{
    if (!deadline_s)
        return KW_MPI_LEFT_KEEP;
    double d = *deadline_s;
    if (!(d > 0))
        return KW_MPI_LEFT_NONE;
    double left = d - kw_mpi_now_s();
    return left > KW_MPI_LEFT_PAST ? left : KW_MPI_LEFT_PAST;
}

static void *kw_mpi_dispatch(void *arg)
{
    kw_mpi_pool *p = arg;
    long sleep_ns = KW_MPI_POLL_MIN_NS;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        int did = 0;
        if (p->stop && *p->stop && p->head) {
            /* stopped: what no rank has started is not started */
            for (kw_mpi_req *q = p->head; q; q = q->next)
                kw_mpi_complete(p, q, KW_EINTERRUPTED, "stopped before it was evaluated");
            p->head = p->tail = NULL;
            pthread_cond_broadcast(&p->done);
        }
        while (p->head && !p->failed) {
            /* the oldest queued request a rank can take now: a pinned one
             * waits for its own rank's slot, without holding up the others */
            kw_mpi_req *q = p->head, *before = NULL;
            int r = -1;
            for (; q; before = q, q = q->next) {
                r = q->pin > 0 ? (p->busy[q->pin] < p->slots[q->pin] ? q->pin : -1)
                               : kw_mpi_free_rank(p);
                if (r > 0)
                    break;
            }
            if (!q)
                break;
            int id = 0;
            while (p->inflight[id])
                id++; /* a free entry exists: busy < slots for r */
            if (before)
                before->next = q->next;
            else
                p->head = q->next;
            if (p->tail == q)
                p->tail = before;
            q->rank = r;
            p->inflight[id] = q;
            p->busy[r]++;
            kw_mpi_wjob w = {.id = id, .shape = q->shape, .rep = q->rep,
                             .left_s = kw_mpi_left(p->deadline_s), .cand = *q->cand};
            pthread_mutex_unlock(&p->mu);
            int mrc = MPI_Send(&w, (int)sizeof w, MPI_BYTE, r, KW_MPI_TAG_JOB, MPI_COMM_WORLD);
            pthread_mutex_lock(&p->mu);
            if (mrc != MPI_SUCCESS) {
                kw_mpi_err(mrc, "sending a candidate to", r);
                kw_mpi_fail(p, kw_error_last());
            }
            did = 1;
        }
        int in_flight = 0;
        for (int r = 1; r < p->n; r++)
            in_flight += p->busy[r];
        if (in_flight && !p->failed) {
            pthread_mutex_unlock(&p->mu);
            int flag = 0, mrc;
            MPI_Status st;
            kw_mpi_wres res;
            mrc = MPI_Iprobe(MPI_ANY_SOURCE, KW_MPI_TAG_RESULT, MPI_COMM_WORLD, &flag, &st);
            if (mrc == MPI_SUCCESS && flag)
                mrc = MPI_Recv(&res, (int)sizeof res, MPI_BYTE, st.MPI_SOURCE, KW_MPI_TAG_RESULT,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            pthread_mutex_lock(&p->mu);
            if (mrc != MPI_SUCCESS) {
                kw_mpi_err(mrc, "receiving a result from", flag ? st.MPI_SOURCE : -1);
                kw_mpi_fail(p, kw_error_last());
            } else if (flag) {
                int src = st.MPI_SOURCE;
                kw_mpi_req *q = res.id >= 0 && res.id < p->remote_slots ? p->inflight[res.id]
                                                                       : NULL;
                if (!q || q->rank != src) {
                    char m[128];
                    snprintf(m, sizeof m, "MPI: rank %d answered a job it was not given (%d)",
                             src, (int)res.id);
                    kw_mpi_fail(p, m);
                } else {
                    *q->out = res.m;
                    res.err[sizeof res.err - 1] = '\0';
                    if (res.rc == KW_EINTERRUPTED && res.sig > 0 && !p->stopped_rank) {
                        /* the pause's cause, for rank 0's last word: no
                         * signal reached rank 0 (it said "interrupted
                         * (SIGINT)" until 2026-12-07) */
                        p->stopped_rank = src;
                        p->stopped_sig = res.sig;
                    }
                    kw_mpi_complete(p, q, res.rc, res.err);
                    p->inflight[res.id] = NULL;
                    p->busy[src]--;
                    p->evals[src]++;
                    pthread_cond_broadcast(&p->done);
                }
                did = 1;
            }
            in_flight = 0;
            for (int r = 1; r < p->n; r++)
                in_flight += p->busy[r];
        }
        if (p->quit && !p->head && (!in_flight || p->failed))
            break;
        if (did) {
            sleep_ns = KW_MPI_POLL_MIN_NS;
            continue;
        }
        struct timespec ts;
        kw_mpi_deadline(&ts, in_flight ? sleep_ns : KW_MPI_POLL_MAX_NS);
        pthread_cond_timedwait(&p->kick, &p->mu, &ts);
        if (sleep_ns < KW_MPI_POLL_MAX_NS)
            sleep_ns *= 2;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* c on rank `pin` (0: rank 0's own slot, waiting for one; > 0: that rank's,
 * queued for it), or on any rank (pin < 0: rank 0's own slot when one is
 * free, else queued for the first free slot of any rank). */
static int kw_mpi_eval_pinned(kw_mpi_pool *p, int pin, const kw_cand *c, int shape, int rep,
                              kw_metrics *out)
{
    pthread_mutex_lock(&p->mu);
    while (pin == 0 && p->local_free == 0 && !p->failed)
        pthread_cond_wait(&p->done, &p->mu);
    if (pin <= 0 && p->local_free > 0) {
        p->local_free--;
        pthread_mutex_unlock(&p->mu);
        int rc = p->local->eval(p->local->ctx, c, shape, rep, out);
        pthread_mutex_lock(&p->mu);
        p->local_free++;
        p->evals[0]++;
        pthread_cond_broadcast(&p->done); /* a slot for a pinned caller waiting */
        pthread_mutex_unlock(&p->mu);
        return rc;
    }
    if (p->failed) {
        pthread_mutex_unlock(&p->mu);
        return kw_error_set(KW_EIO, "%s", p->fail_msg);
    }
    kw_mpi_req q = {.cand = c, .shape = shape, .rep = rep, .out = out, .pin = pin};
    if (p->tail)
        p->tail->next = &q;
    else
        p->head = &q;
    p->tail = &q;
    pthread_cond_signal(&p->kick);
    while (!q.done)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    if (q.rc != 0)
        return kw_error_set(q.rc, "%s", q.err);
    return 0;
}

static int kw_mpi_eval(void *ctx, const kw_cand *c, int shape, int rep, kw_metrics *out)
{
    return kw_mpi_eval_pinned(ctx, -1, c, shape, rep, out);
}

/* Device d is rank d (every rank evaluates: one that cannot fails the start). */
static int kw_mpi_eval_on(void *ctx, int device, const kw_cand *c, int shape, int rep,
                          kw_metrics *out)
{
    kw_mpi_pool *p = ctx;
    if (device < 0 || device >= p->n)
        return kw_error_set(KW_ESTATE, "MPI: no rank %d of %d to evaluate on", device, p->n);
    return kw_mpi_eval_pinned(p, device, c, shape, rep, out);
}

static int kw_mpi_predict(void *ctx, const kw_cand *c, int shape, kw_metrics *out)
{
    const kw_mpi_pool *p = ctx;
    return p->local->predict(p->local->ctx, c, shape, out);
}

/* The service key on rank 0 (a pure function of its arguments, as every rank's
 * evaluation is: the engine's aliases are the same whatever the rank count). */
static int kw_mpi_service_key(void *ctx, const kw_cand *c, int shape, kw_skey *out)
{
    const kw_mpi_pool *p = ctx;
    return p->local->service_key(p->local->ctx, c, shape, out);
}

/* On rank 0 (a pure function of its arguments: the same as a single
 * process's). */
static int kw_mpi_paired(void *ctx, const kw_cand *a, const kw_cand *b, int shape, double p,
                         long samples, kw_paired *out)
{
    const kw_mpi_pool *p0 = ctx;
    return p0->local->paired(p0->local->ctx, a, b, shape, p, samples, out);
}

/* The run description as bytes: kw_mpi_whead, then every string with its NUL
 * (attribute key, value, ..., input name, hash, ...). */
static char *kw_mpi_pack(const kw_mpi_spec *s, size_t *len_out)
{
    size_t len = sizeof(kw_mpi_whead);
    for (int i = 0; i < s->n_attrs; i++)
        len += strlen(s->attr_keys[i]) + strlen(s->attr_values[i]) + 2;
    for (int i = 0; i < s->n_inputs; i++)
        len += strlen(s->input_names[i]) + strlen(s->input_hashes[i]) + 2;
    for (int i = 0; i < kw_mpi_argc; i++)
        len += strlen(kw_mpi_argv[i]) + 1;
    char *buf = malloc(len);
    if (!buf)
        return NULL;
    kw_mpi_whead h = {.n_attrs = s->n_attrs, .n_inputs = s->n_inputs, .threads = s->threads,
                      .n_args = kw_mpi_argc, .time_limit_s = s->time_limit_s, .seed = s->seed};
    memcpy(buf, &h, sizeof h);
    char *w = buf + sizeof h;
    for (int i = 0; i < s->n_attrs + s->n_inputs; i++) {
        const char *a = i < s->n_attrs ? s->attr_keys[i] : s->input_names[i - s->n_attrs];
        const char *b = i < s->n_attrs ? s->attr_values[i] : s->input_hashes[i - s->n_attrs];
        size_t la = strlen(a) + 1, lb = strlen(b) + 1;
        memcpy(w, a, la);
        memcpy(w + la, b, lb);
        w += la + lb;
    }
    for (int i = 0; i < kw_mpi_argc; i++) {
        size_t la = strlen(kw_mpi_argv[i]) + 1;
        memcpy(w, kw_mpi_argv[i], la);
        w += la;
    }
    *len_out = len;
    return buf;
}

int kw_mpi_pool_start(kw_mpi_pool **out, const kw_mpi_spec *spec, const kw_evaluator *local,
                      int local_slots, const volatile sig_atomic_t *stop)
{
    *out = NULL;
    int rc = 0;
    size_t len = 0;
    char *buf = NULL;
    kw_mpi_pool *p = calloc(1, sizeof *p);
    if (!p)
        return kw_error_set(KW_ENOMEM, "out of memory starting the MPI pool");
    p->n = kw_mpi_n;
    p->slots = calloc((size_t)p->n, sizeof *p->slots);
    p->busy = calloc((size_t)p->n, sizeof *p->busy);
    p->evals = calloc((size_t)p->n, sizeof *p->evals);
    int *ok = calloc((size_t)p->n, sizeof *ok);
    buf = kw_mpi_pack(spec, &len);
    if (!p->slots || !p->busy || !p->evals || !ok || !buf) {
        rc = kw_error_set(KW_ENOMEM, "out of memory starting the MPI pool");
        goto fail;
    }
    pthread_mutex_init(&p->mu, NULL);
    kw_mpi_cond_init(&p->kick);
    kw_mpi_cond_init(&p->done);
    kw_mpi_sent = 1;
    for (int r = 1; r < p->n; r++) {
        int mrc = MPI_Send(buf, (int)len, MPI_BYTE, r, KW_MPI_TAG_SPEC, MPI_COMM_WORLD);
        if (mrc != MPI_SUCCESS) {
            rc = kw_mpi_err(mrc, "sending the run to", r);
            goto fail;
        }
    }
    /* every rank's answer, in rank order; the first failure is the message */
    char first[KW_MPI_MSG_LEN + 128] = "";
    int first_rc = 0;
    for (int r = 1; r < p->n; r++) {
        kw_mpi_hello h;
        int mrc = MPI_Recv(&h, (int)sizeof h, MPI_BYTE, r, KW_MPI_TAG_HELLO, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE);
        if (mrc != MPI_SUCCESS) {
            rc = kw_mpi_err(mrc, "waiting for", r);
            goto fail;
        }
        h.host[sizeof h.host - 1] = h.msg[sizeof h.msg - 1] = '\0';
        if (h.rc != 0 && !first_rc) {
            first_rc = h.rc;
            snprintf(first, sizeof first, "rank %d (%s) cannot evaluate: %s", r, h.host, h.msg);
        }
        ok[r] = h.rc == 0;
        p->slots[r] = h.rc == 0 && h.slots > 0 ? h.slots : 0;
        p->remote_slots += p->slots[r];
    }
    if (first_rc) {
        rc = kw_error_set(first_rc, "%s", first);
        goto fail;
    }
    p->slots[0] = local_slots > 0 ? local_slots : 1;
    p->local_free = p->slots[0];
    p->total_slots = p->slots[0] + p->remote_slots;
    p->inflight = calloc((size_t)(p->remote_slots > 0 ? p->remote_slots : 1), sizeof *p->inflight);
    if (!p->inflight) {
        rc = kw_error_set(KW_ENOMEM, "out of memory starting the MPI pool");
        goto fail;
    }
    p->local = local;
    p->stop = stop;
    p->deadline_s = spec->deadline_s;
    p->iface = *local;
    p->iface.ctx = p;
    p->iface.eval = kw_mpi_eval;
    /* readings that drift: a shape's designed rounds stay on one rank's
     * device, the shapes spread over the ranks (kw_evaluator.devices) */
    p->iface.devices = local->drifts && p->n > 1 ? p->n : 0;
    p->iface.eval_on = p->iface.devices ? kw_mpi_eval_on : NULL;
    p->iface.predict = local->predict ? kw_mpi_predict : NULL;
    p->iface.paired = local->paired ? kw_mpi_paired : NULL;
    p->iface.service_key = local->service_key ? kw_mpi_service_key : NULL;
    p->t0 = kw_mpi_now_s();
    if (pthread_create(&p->tid, NULL, kw_mpi_dispatch, p) != 0) {
        rc = kw_error_set(KW_ENOMEM, "cannot start the MPI dispatcher thread");
        goto fail;
    }
    p->running = 1;
    free(ok);
    free(buf);
    *out = p;
    return 0;
fail:
    /* the ranks that are ready wait for work: the run is over for them */
    for (int r = 1; ok && r < p->n; r++)
        if (ok[r])
            MPI_Send(NULL, 0, MPI_BYTE, r, KW_MPI_TAG_STOP, MPI_COMM_WORLD);
    free(ok);
    free(buf);
    free(p->inflight);
    p->inflight = NULL;
    for (int r = 1; r < p->n; r++)
        p->slots[r] = 0; /* told already: kw_mpi_pool_free sends nothing more */
    p->n = 0;
    kw_mpi_pool_free(p);
    return rc;
}

const kw_evaluator *kw_mpi_pool_iface(kw_mpi_pool *p) { return &p->iface; }
int kw_mpi_pool_slots(const kw_mpi_pool *p) { return p->total_slots; }

/* Evaluations finished by each rank since the start and their rate per
 * second of wall time: fills up to max entries, returns the rank count. */
static int kw_mpi_pool_rates(const kw_mpi_pool *p, long *evals, double *per_s, int max)
{
    kw_mpi_pool *mp = (kw_mpi_pool *)p; /* the mutex; nothing else is changed */
    double dt = kw_mpi_now_s() - p->t0;
    pthread_mutex_lock(&mp->mu);
    for (int r = 0; r < p->n && r < max; r++) {
        evals[r] = p->evals[r];
        per_s[r] = dt > 0 ? (double)p->evals[r] / dt : 0.0;
    }
    pthread_mutex_unlock(&mp->mu);
    return p->n;
}

void kw_mpi_pool_format(const kw_mpi_pool *p, char *buf, size_t len)
{
    enum { KW_MPI_SHOW_MAX = 64 }; /* ranks named one by one; the total covers all */
    long ev[KW_MPI_SHOW_MAX];
    double ps[KW_MPI_SHOW_MAX];
    int n = kw_mpi_pool_rates(p, ev, ps, KW_MPI_SHOW_MAX);
    double dt = kw_mpi_now_s() - p->t0, total = 0;
    pthread_mutex_lock(&((kw_mpi_pool *)p)->mu);
    for (int r = 0; r < n; r++)
        total += (double)p->evals[r];
    pthread_mutex_unlock(&((kw_mpi_pool *)p)->mu);
    size_t used = (size_t)snprintf(buf, len, "%d rank%s: %.1f evals/s (", n, n == 1 ? "" : "s",
                                   dt > 0 ? total / dt : 0.0);
    for (int r = 0; r < n && r < KW_MPI_SHOW_MAX && used < len; r++)
        used += (size_t)snprintf(buf + used, len - used, "%sr%d %.1f", r ? " " : "", r, ps[r]);
    if (used < len)
        snprintf(buf + used, len - used, "%s/s)", n > KW_MPI_SHOW_MAX ? " ..." : "");
}

int kw_mpi_pool_stopped_by(const kw_mpi_pool *p, int *sig)
{
    *sig = 0;
    if (!p)
        return 0;
    pthread_mutex_lock((pthread_mutex_t *)&p->mu);
    int rank = p->stopped_rank;
    *sig = p->stopped_sig;
    pthread_mutex_unlock((pthread_mutex_t *)&p->mu);
    return rank;
}

void kw_mpi_pool_free(kw_mpi_pool *p)
{
    if (!p)
        return;
    if (p->running) {
        pthread_mutex_lock(&p->mu);
        p->quit = 1;
        pthread_cond_signal(&p->kick);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->tid, NULL);
        for (int r = 1; r < p->n; r++)
            if (p->slots[r] > 0)
                MPI_Send(NULL, 0, MPI_BYTE, r, KW_MPI_TAG_STOP, MPI_COMM_WORLD);
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->kick);
        pthread_cond_destroy(&p->done);
    }
    free(p->slots);
    free(p->busy);
    free(p->evals);
    free(p->inflight);
    free(p);
}

/* ------------------------------------------------------------------ other ranks */

struct kw_mpi_job_spec {
    kw_mpi_spec s;
    char *buf;
    const char **strs;
    int n_args;        /* rank 0's options */
    const char **args;
};

int kw_mpi_spec_recv(kw_mpi_job_spec **out)
{
    *out = NULL;
    MPI_Status st;
    int mrc = MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    if (mrc != MPI_SUCCESS)
        return kw_mpi_err(mrc, "waiting for", 0);
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (st.MPI_TAG != KW_MPI_TAG_SPEC) {
        char dummy;
        MPI_Recv(&dummy, 0, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return 1;
    }
    kw_mpi_job_spec *js = calloc(1, sizeof *js);
    char *buf = malloc(count > 0 ? (size_t)count + 1 : 1);
    if (!js || !buf) {
        free(js);
        free(buf);
        return kw_error_set(KW_ENOMEM, "out of memory receiving the run");
    }
    js->buf = buf;
    mrc = MPI_Recv(buf, count, MPI_BYTE, 0, KW_MPI_TAG_SPEC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (mrc != MPI_SUCCESS) {
        kw_mpi_spec_free(js);
        return kw_mpi_err(mrc, "receiving the run from", 0);
    }
    buf[count] = '\0';
    kw_mpi_whead h;
    if ((size_t)count < sizeof h) {
        kw_mpi_spec_free(js);
        return kw_error_set(KW_ECORRUPT, "MPI: rank 0's run description is %d bytes", count);
    }
    memcpy(&h, buf, sizeof h);
    int n_str = 2 * (h.n_attrs + h.n_inputs);
    js->strs = calloc(n_str > 0 ? (size_t)n_str : 1, sizeof *js->strs);
    js->args = calloc(h.n_args > 0 ? (size_t)h.n_args : 1, sizeof *js->args);
    if (!js->strs || !js->args || h.n_attrs < 0 || h.n_inputs < 0 || h.n_args < 0) {
        kw_mpi_spec_free(js);
        return kw_error_set(KW_ENOMEM, "out of memory receiving the run");
    }
    const char *r = buf + sizeof h, *end = buf + count;
    for (int i = 0; i < n_str; i++) {
        if (r >= end) {
            kw_mpi_spec_free(js);
            return kw_error_set(KW_ECORRUPT, "MPI: rank 0's run description is cut short");
        }
        js->strs[i] = r;
        r += strlen(r) + 1;
    }
    for (int i = 0; i < h.n_args; i++) {
        if (r >= end) {
            kw_mpi_spec_free(js);
            return kw_error_set(KW_ECORRUPT, "MPI: rank 0's run description is cut short");
        }
        js->args[i] = r;
        r += strlen(r) + 1;
    }
    js->n_args = h.n_args;
    /* keys and values alternate: split into the spec's parallel arrays */
    const char **keys = calloc((size_t)(n_str > 0 ? n_str : 1), sizeof *keys);
    if (!keys) {
        kw_mpi_spec_free(js);
        return kw_error_set(KW_ENOMEM, "out of memory receiving the run");
    }
    for (int i = 0; i < n_str / 2; i++) {
        keys[i] = js->strs[2 * i];
        keys[n_str / 2 + i] = js->strs[2 * i + 1];
    }
    free(js->strs);
    js->strs = keys;
    int na = h.n_attrs, half = n_str / 2;
    js->s.n_attrs = na;
    js->s.attr_keys = keys;
    js->s.attr_values = keys + half;
    js->s.n_inputs = h.n_inputs;
    js->s.input_names = keys + na;
    js->s.input_hashes = keys + half + na;
    js->s.threads = h.threads;
    js->s.time_limit_s = h.time_limit_s;
    js->s.seed = h.seed;
    *out = js;
    return 0;
}

const kw_mpi_spec *kw_mpi_spec_of(const kw_mpi_job_spec *js) { return &js->s; }

void kw_mpi_spec_free(kw_mpi_job_spec *js)
{
    if (!js)
        return;
    free(js->strs);
    free(js->args);
    free(js->buf);
    free(js);
}

/* "'--budget 30'": argument i of v (n of them) with its option when it is an
 * option's value, or "no option" past the end. */
static void kw_mpi_arg_at(char *out, size_t len, const char *const *v, int n, int i)
{
    if (i >= n)
        snprintf(out, len, "no option there");
    else if (i > 0 && v[i][0] != '-' && v[i - 1][0] == '-' && !strchr(v[i - 1], '='))
        snprintf(out, len, "'%.200s %.200s'", v[i - 1], v[i]);
    else if (v[i][0] == '-' && i + 1 < n && v[i + 1][0] != '-' && !strchr(v[i], '='))
        snprintf(out, len, "'%.200s %.200s'", v[i], v[i + 1]);
    else
        snprintf(out, len, "'%.200s'", v[i]);
}

int kw_mpi_args_differ(const kw_mpi_job_spec *js, char *msg, size_t len)
{
    const char *const *mine = (const char *const *)kw_mpi_argv;
    int i = 0;
    while (i < js->n_args && i < kw_mpi_argc && strcmp(js->args[i], mine[i]) == 0)
        i++;
    if (i == js->n_args && i == kw_mpi_argc) {
        if (len)
            msg[0] = '\0';
        return 0;
    }
    char a[420], b[420];
    kw_mpi_arg_at(a, sizeof a, mine, kw_mpi_argc, i);
    kw_mpi_arg_at(b, sizeof b, js->args, js->n_args, i);
    snprintf(msg, len, "rank %d: its option %s is not rank 0's (%s): the run follows rank 0's "
             "options, this rank's are ignored", kw_mpi_me, a, b);
    return 1;
}

typedef struct kw_mpi_server {
    const kw_evaluator *ev;
    const volatile sig_atomic_t *stop; /* this rank's stop flag (its signal) */
    pthread_mutex_t mu;
    pthread_cond_t work, res;
    kw_mpi_wjob *jobs;  /* ring of `cap` */
    kw_mpi_wres *outs;  /* ring of `cap` */
    int cap, j_head, j_n, o_head, o_n, quit;
} kw_mpi_server;

static void *kw_mpi_server_thread(void *arg)
{
    kw_mpi_server *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->quit && s->j_n == 0)
            pthread_cond_wait(&s->work, &s->mu);
        if (s->quit)
            break;
        kw_mpi_wjob j = s->jobs[s->j_head];
        s->j_head = (s->j_head + 1) % s->cap;
        s->j_n--;
        pthread_mutex_unlock(&s->mu);
        kw_mpi_wres r;
        memset(&r, 0, sizeof r);
        r.id = j.id;
        kw_error_clear();
        r.rc = s->ev->eval(s->ev->ctx, &j.cand, j.shape, j.rep, &r.m);
        if (r.rc != 0)
            snprintf(r.err, sizeof r.err, "%s", kw_error_last());
        if (r.rc == KW_EINTERRUPTED && s->stop && *s->stop)
            r.sig = *s->stop;
        pthread_mutex_lock(&s->mu);
        s->outs[(s->o_head + s->o_n) % s->cap] = r;
        s->o_n++;
        pthread_cond_signal(&s->res);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int kw_mpi_serve(const kw_evaluator *ev, int threads, int setup_rc, double *deadline_s,
                 const volatile sig_atomic_t *stop)
{
    kw_mpi_hello h;
    memset(&h, 0, sizeof h);
    h.rc = setup_rc;
    h.slots = threads > 0 ? threads : 1;
    if (gethostname(h.host, sizeof h.host - 1) != 0)
        snprintf(h.host, sizeof h.host, "?");
    if (setup_rc)
        snprintf(h.msg, sizeof h.msg, "%s", kw_error_last());
    int mrc = MPI_Send(&h, (int)sizeof h, MPI_BYTE, 0, KW_MPI_TAG_HELLO, MPI_COMM_WORLD);
    if (mrc != MPI_SUCCESS)
        return kw_mpi_err(mrc, "answering", 0);
    if (setup_rc)
        return setup_rc;
    int rc = 0, started = 0;
    kw_mpi_server s;
    memset(&s, 0, sizeof s);
    s.ev = ev;
    s.stop = stop;
    /* rank 0 never has more jobs out at this rank than its slots */
    s.cap = h.slots;
    s.jobs = calloc((size_t)s.cap, sizeof *s.jobs);
    s.outs = calloc((size_t)s.cap, sizeof *s.outs);
    pthread_t *tids = calloc((size_t)s.cap, sizeof *tids);
    pthread_mutex_init(&s.mu, NULL);
    kw_mpi_cond_init(&s.work);
    kw_mpi_cond_init(&s.res);
    if (!s.jobs || !s.outs || !tids) {
        rc = kw_error_set(KW_ENOMEM, "out of memory starting the evaluation threads");
        goto done;
    }
    for (; started < s.cap; started++)
        if (pthread_create(&tids[started], NULL, kw_mpi_server_thread, &s) != 0) {
            rc = kw_error_set(KW_ENOMEM, "cannot start evaluation thread %d", started + 1);
            goto done;
        }
    long sleep_ns = KW_MPI_POLL_MIN_NS;
    for (;;) {
        int did = 0, flag = 0;
        MPI_Status st;
        mrc = MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (mrc != MPI_SUCCESS) {
            rc = kw_mpi_err(mrc, "waiting for", 0);
            goto done;
        }
        if (flag && st.MPI_TAG == KW_MPI_TAG_JOB) {
            kw_mpi_wjob j;
            mrc = MPI_Recv(&j, (int)sizeof j, MPI_BYTE, 0, KW_MPI_TAG_JOB, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE);
            if (mrc != MPI_SUCCESS) {
                rc = kw_mpi_err(mrc, "receiving a candidate from", 0);
                goto done;
            }
            /* rank 0's deadline as this rank's clock reads it; a job comes
             * only between or within rounds, never while a job of another
             * round runs here (the engine's rounds end when every result is
             * in), so a round's jobs share one deadline */
            if (deadline_s && j.left_s >= 0)
                *deadline_s = j.left_s > 0 ? kw_mpi_now_s() + j.left_s : 0.0;
            pthread_mutex_lock(&s.mu);
            if (s.j_n == s.cap) {
                pthread_mutex_unlock(&s.mu);
                rc = kw_error_set(KW_ESTATE, "MPI: rank 0 sent more jobs than this rank's %d "
                                  "slots", s.cap);
                goto done;
            }
            s.jobs[(s.j_head + s.j_n) % s.cap] = j;
            s.j_n++;
            pthread_cond_signal(&s.work);
            pthread_mutex_unlock(&s.mu);
            did = 1;
        } else if (flag) {
            MPI_Recv(NULL, 0, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            break; /* STOP: the run is over */
        }
        pthread_mutex_lock(&s.mu);
        while (s.o_n > 0) {
            kw_mpi_wres r = s.outs[s.o_head];
            s.o_head = (s.o_head + 1) % s.cap;
            s.o_n--;
            pthread_mutex_unlock(&s.mu);
            mrc = MPI_Send(&r, (int)sizeof r, MPI_BYTE, 0, KW_MPI_TAG_RESULT, MPI_COMM_WORLD);
            if (mrc != MPI_SUCCESS) {
                rc = kw_mpi_err(mrc, "sending a result to", 0);
                goto done;
            }
            pthread_mutex_lock(&s.mu);
            did = 1;
        }
        if (did) {
            sleep_ns = KW_MPI_POLL_MIN_NS;
        } else {
            struct timespec ts;
            kw_mpi_deadline(&ts, sleep_ns);
            pthread_cond_timedwait(&s.res, &s.mu, &ts);
            if (sleep_ns < KW_MPI_POLL_MAX_NS)
                sleep_ns *= 2;
        }
        pthread_mutex_unlock(&s.mu);
    }
done:
    pthread_mutex_lock(&s.mu);
    s.quit = 1;
    pthread_cond_broadcast(&s.work);
    pthread_mutex_unlock(&s.mu);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.work);
    pthread_cond_destroy(&s.res);
    free(tids);
    free(s.jobs);
    free(s.outs);
    return rc;
}

#endif /* KW_HAVE_MPI */
