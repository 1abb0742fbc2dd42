/* kw_sim.c - stage 2: discrete-event simulation of the serving runtime.
 *
 * Design: an event-driven simulation with two binary heaps and one sorted
 * array. Arrivals are an open loop (they never depend on the service), so all
 * of them are drawn before the run and read in order from an array. Batch
 * timeouts and ends of kernel launches sit in one heap keyed by wall time (at
 * most groups + queues live entries). Kernel executions sit in a second heap
 * keyed by VIRTUAL time: all kernels running at once are slowed by the same
 * contention factor, so one virtual clock V (dV/dt = 1 / slowdown) orders
 * every execution's end and a change of slowdown costs O(1) instead of
 * rescaling every running kernel. Each kernel's execution time and DRAM demand
 * at the run's clock are memoised in the service table. When a group moves
 * on to its next kernel at the end of an event, a launch or execution that
 * would be the very next event anyway is run to its end in place instead of
 * through a heap (kw_begin_kernel, kw_begin_exec): same order, same
 * arithmetic, fewer heap operations. Each run allocates its arrays once; the
 * event loop never allocates.
 *
 * The model, precisely:
 *
 * Arrivals. Every stream has its own GSL random stream (taus2, seeded with
 * splitmix64(seed, stream index)). Poisson: exponential gaps at rate_per_s.
 * Bursty: a two-state Markov-modulated Poisson process (MMPP-2, Fischer &
 * Meier-Hellstern 1993): on and off periods are exponential with means
 * burst_on_ms and burst_off_ms, arrivals at rate x burst_factor while on and
 * none while off; each stream starts in its stationary state. Trace: the
 * trace's rows (of the chosen shape) at their times, relative to the first
 * row; a trace shorter than the sample is replayed again, shifted by its span
 * plus one mean gap. Request ids are given in arrival order.
 *
 * Queues. round_robin and least_loaded share one FIFO request queue;
 * stream_affinity pins stream s to group s mod G and gives each group its own
 * FIFO (G = cores / cores_per_request groups; left-over cores idle).
 *
 * Batcher. A batch closes from a queue, taking its oldest min(len, max_batch)
 * requests, as soon as one of these holds:
 *   (a) the queue holds max_batch requests;
 *   (b) batch_timeout_us > 0 and its oldest request has waited batch_timeout_us;
 *   (c) batch_timeout_us == 0 and the group the dispatcher would choose is idle
 *       (Triton's default dynamic batcher: as large as possible, no delay).
 * With a timeout, a batch never closes early because a core is idle: the
 * timeout is the price paid to fill batches.
 *
 * Dispatcher. A closed batch is bound at once to one group, which runs its
 * bound batches in FIFO order:
 *   round_robin     the next group in cyclic order, busy or not;
 *   least_loaded    the group with the least estimated outstanding work:
 *                   idle groups first (the one idle longest), else the
 *                   earliest estimated free time (uncontended table times: what
 *                   a runtime can know). Without contention this is
 *                   join-least-work, whose waits equal the central-queue
 *                   M/G/c FCFS waits, which is what the Erlang C test checks;
 *   stream_affinity the group its queue belongs to.
 *
 * Service. A batch of r requests runs service[r-1]'s kernels in order. Each
 * kernel is a launch part (launch_us: host side, not slowed by clock or
 * contention, no DRAM demand) then an execution part (time_us - launch_us)
 * divided by the clock factor, with DRAM demand dram_bytes_per_us x clock
 * factor (same bytes over a longer time). All requests of a batch complete
 * when its last kernel ends.
 *
 * DRAM contention (fluid model, src/model-facts.md#queueing: n cores demanding b_i
 * over bandwidth B stretch by max(1, sum b_i / B); Baskett & Smith CACM 1976):
 * while the executing kernels' summed demand D exceeds B, every executing
 * kernel progresses at 1/s of its speed, s = max(1, D / B), so the DRAM
 * delivers exactly B. Lost time = sum over kernels of (wall - work) time.
 * Compute-bound kernels are slowed too; the model is deliberately simple (a
 * shared-bandwidth bottleneck), and "Bandwidth Bandit" (ISPASS'12) shows
 * real slowdowns start even earlier, so it errs on the optimistic side.
 *
 * Measurement. The first `warmup` arrivals are simulated but not measured.
 * The window runs from the first measured arrival to the last completion;
 * busy time, contention and activity are integrated over it. Latency =
 * completion - arrival; queue wait = start of service of its batch - arrival.
 * Each measured request leaves two sort keys (latency with its stream, wait)
 * and its sums; no other per-request record is kept.
 * Quantiles: GSL's definition (gsl_stats_quantile_from_sorted_data: linear
 * between order statistics) on radix-sorted keys; per-stream order
 * statistics are read from the same sorted keys (kw_stats).
 * Saturation. A queue whose arrivals exceed what the mapping can serve has no
 * steady state: its backlog, and so every percentile, grows with the length of
 * the simulated window, and a p95 read from it is an artefact of the sample
 * size. Two tests name it. (1) Offered utilisation, closed form: the measured
 * arrival rate lambda = (R - 1) / (last - first measured arrival) against the
 * uncontended capacity of the groups that serve it, c = max over r <= max_batch
 * of r / T(r) per group (T = a batch's launch + execution time at this clock);
 * per queue (stream_affinity has one per group), rho = lambda x share / (groups
 * x c), and rho >= 1 of any queue is saturated (for one core, max_batch 1:
 * rho = rate x service time). (2) Backlog growth, for what contention adds:
 * when the backlog left at the last arrival takes more than
 * KW_SIM_SATURATED_DRAIN_FRAC of the arrival span to drain (a stable queue
 * drains in about one busy period, a small fraction of any window of
 * KW_SIM_SATURATION_MIN_REQUESTS or more requests), the queue grew.
 *
 * Confidence intervals of p95/p99 (kw_simci.h): the union of the
 * distribution-free order-statistic interval [x_(l), x_(u)], l, u =
 * n p -/+ 1.96 sqrt(n p (1 - p)) (Hahn & Meeker, Statistical Intervals,
 * 1991), which assumes independent samples, and the batch-quantile interval
 * (Seila 1982; Asmussen & Glynn 2007, sectioning and batch means): the
 * measured latencies in arrival order cut into k contiguous batches, the
 * quantile of each, the whole sample's quantile -/+ t_{k-1} S / sqrt(k).
 * Queueing latencies are positively correlated (a backlog delays a run of
 * requests), which only the batches see: on a bursty shape the batch interval
 * is many times the order-statistic one, on independent samples about equal.
 */
#define HAVE_INLINE 1 /* GSL's inline gsl_rng_uniform_pos on the arrival path */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_rng.h>

#include "kw_error.h"
#include "kw_mix.h"
#include "kw_sim.h"
#include "kw_simci.h"

#define KW_SIM_DEFAULT_REQUESTS 20000
#define KW_US_PER_S 1e6
#define KW_US_PER_MS 1e3
#define KW_MAX(a, b) ((a) > (b) ? (a) : (b))
#define KW_HOT static inline __attribute__((always_inline)) /* the per-event path */
#define KW_PREC_REF_BYTES 2.0        /* FLOP weights relative to bf16 elements (kw_accel.pj_per_flop) */
/* Backlog growth (see "Saturation" above): the drain after the last arrival
 * above this share of the arrival span means the backlog grew: a stable
 * M/M/1 at rho = 0.95 holds rho/(1-rho) = 19 requests on average, 1% of a
 * 2,000-request window; rho = 1.05 leaves about 5% of the requests behind. */
#define KW_SIM_SATURATED_DRAIN_FRAC 0.05
/* Below this many measured requests one ordinary busy period can be a large
 * share of the window, so only the closed-form test (1) applies. */
#define KW_SIM_SATURATION_MIN_REQUESTS 1000

enum { KW_SRC_POISSON, KW_SRC_BURSTY, KW_SRC_TRACE };

/* real-time event: the end of group idx's launch (tag < 0) or the batch
 * timeout of queue idx armed for request tag */
typedef struct kw_rev { double t; int32_t idx, tag; } kw_rev;
typedef struct kw_vev { double v; int32_t g; } kw_vev; /* also (time, stream) when merging arrivals */

typedef struct kw_sk {              /* one kernel of the table */
    double launch_us, exec_us, demand;
    double work_us, demand_c;       /* exec_us / clock and demand x clock: the execution at this
                                     * run's clock, memoised (batches of scale 1, i.e. all but the
                                     * test-only exponential service) */
} kw_sk;
typedef struct kw_sb {              /* one batch size of the table */
    int first, n;                   /* kernels [first, first + n) of kw_st.sk */
    double launch_us, exec_us;      /* sums */
    double flop_w, dram_bytes;      /* activity of one batch */
    int fallback;
} kw_sb;

typedef struct kw_batch {
    int head, r;                    /* first request (chain by next[]), size */
    int next;                       /* next batch bound to the same group / free list */
    double scale, start_us;
} kw_batch;

typedef struct kw_group {
    int cur, kernel;
    int nk;                         /* kernels of the current batch, at kp[0..nk) */
    const kw_sk *kp;
    double demand;
    int bhead, btail;               /* bound batches, FIFO */
    double est_free_us, last_end_us, busy_us;
} kw_group;

typedef struct kw_queue { int head, tail, len; int64_t armed; } kw_queue;

typedef struct kw_src {
    gsl_rng *rng;
    int kind, on;
    double mean_gap_us, state_end_us, on_mean_us, off_mean_us;
} kw_src;

typedef struct kw_st {
    /* inputs, digested */
    int G, mb, S, Q, affinity, placement, exp_service; /* exp_service: batches carry a scale */
    const double *emp;              /* opts.service_scale (sorted), n_emp of them */
    int n_emp;
    double timeout_us, clock, bw;   /* bw in bytes/us; 0 = unlimited */
    kw_sb sb[KW_SIM_BATCH_MAX];
    kw_sk *sk;
    int ntot, warm;
    /* trace replay */
    const kw_trace *trace;
    int trace_shape;
    size_t tcur;
    double tfirst, tspan, toffset;
    /* state */
    double t, V, s, D;
    double rate, lost_k, cflag;     /* 1/s = dV/dt, 1 - 1/s, and 1 while s > 1 (else 1, 0,
                                     * 0): kept with s so kw_advance does not branch */
    double inv_bw;                  /* 1 / bw */
    int nexec;
    kw_rev *rh; int rn, rcap;
    kw_vev *vh; int vn;
    kw_src *src;
    gsl_rng *svc_rng;
    kw_group *grp;
    kw_queue *q;
    int rr;
    kw_batch *bat; int bfree, bused;
    double *arr; int *next; uint8_t *strm; /* streams < KW_SIM_STREAM_MAX = 256 */
    int narrived, ndone;
    /* measurement */
    double t_warm, lost_us, contended_us, flop_w, dram_bytes;
    uint64_t *lat_key, *wait_key;  /* [R] kw_key of each measured latency (payload: its
                                     * stream) and queue wait, in arrival order (index id - warm) */
    double lat_sum, wait_sum;       /* full precision, for the means */
    double stream_sum[KW_SIM_STREAM_MAX];
    int stream_n[KW_SIM_STREAM_MAX];
    uint64_t wait_hist[KW_SIM_HIST_BINS];
    long nfb;                       /* measured requests whose batch had a fallback */
    int nmeas;
    long batches_meas, batch_reqs_meas;
} kw_st;

/* ---------------- heaps ---------------- */

KW_HOT void kw_rh_push(kw_st *st, double t, int idx, int tag)
{
    int i = st->rn++;
    kw_rev e = {t, idx, tag};
    while (i > 0) {
        int p = (i - 1) >> 1;
        if (st->rh[p].t <= t)
            break;
        st->rh[i] = st->rh[p];
        i = p;
    }
    st->rh[i] = e;
}

KW_HOT kw_rev kw_rh_pop(kw_st *st)
{
    kw_rev top = st->rh[0];
    kw_rev last = st->rh[--st->rn];
    int n = st->rn, i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && st->rh[c + 1].t < st->rh[c].t)
            c++;
        if (last.t <= st->rh[c].t)
            break;
        st->rh[i] = st->rh[c];
        i = c;
    }
    if (n > 0)
        st->rh[i] = last;
    return top;
}

KW_HOT void kw_vh_push(kw_vev *h, int *hn, double v, int g)
{
    int i = (*hn)++;
    kw_vev e = {v, g};
    while (i > 0) {
        int p = (i - 1) >> 1;
        if (h[p].v <= v)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

/* Remove the top and put e in its place (pop then push, one sift). */
KW_HOT void kw_vh_replace_top(kw_vev *h, int n, kw_vev e)
{
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1].v < h[c].v)
            c++;
        if (e.v <= h[c].v)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

KW_HOT kw_vev kw_vh_pop(kw_vev *h, int *hn)
{
    kw_vev top = h[0];
    int n = --(*hn);
    if (n > 0)
        kw_vh_replace_top(h, n, h[n]);
    return top;
}

/* ---------------- arrivals ---------------- */

/* Exp(mean) from a GSL uniform in (0, 1): the inverse CDF, as
 * gsl_ran_exponential does, without its two calls per draw. */
static inline double kw_exp(gsl_rng *r, double mean)
{
    return -mean * log(gsl_rng_uniform_pos(r));
}

/* Next arrival of a Poisson or MMPP-2 stream after time t, into *next.
 * Progress-checked: every on/off period's mean must move the clock (a period
 * lost in rounding, t + on == t, would loop forever; a single short draw lost
 * so is a zero-length period, not an error), and a stream whose cycles keep
 * ending empty is refused after KW_SIM_MAX_EMPTY_CYCLES (kw_limits.h).
 * Returns 0 or KW_EINPUT. */
static int kw_src_next(kw_src *s, double t, double *next)
{
    if (s->kind == KW_SRC_POISSON) {
        *next = t + kw_exp(s->rng, s->mean_gap_us);
        return 0;
    }
    for (long empty = 0;; empty++) {
        if (empty >= KW_SIM_MAX_EMPTY_CYCLES)
            return kw_error_set(KW_EINPUT, "simulation: bursty arrivals: %ld on/off cycles in a row "
                                "without an arrival (on %g us, off %g us, gap %g us while on): the "
                                "bursts are far shorter than the gaps between requests",
                                empty, s->on_mean_us, s->off_mean_us, s->mean_gap_us);
        if (!s->on) {
            t = s->state_end_us;
            s->on = 1;
            s->state_end_us = t + kw_exp(s->rng, s->on_mean_us);
            /* judged by the mean: one short draw lost in rounding is an
             * empty on-period, which the empty-cycle bound counts; only a
             * mean the clock cannot hold would spin */
            if (!(t + s->on_mean_us > t))
                return kw_error_set(KW_EINPUT, "simulation: bursty arrivals: an on-period (mean %g us) "
                                    "is lost in rounding at t = %g us: the clock cannot represent it",
                                    s->on_mean_us, t);
        }
        double g = kw_exp(s->rng, s->mean_gap_us);
        if (t + g < s->state_end_us) {
            *next = t + g;
            return 0;
        }
        t = s->state_end_us;
        s->on = 0;
        s->state_end_us = t + kw_exp(s->rng, s->off_mean_us);
        if (!(t + s->off_mean_us > t) && s->off_mean_us > 0)
            return kw_error_set(KW_EINPUT, "simulation: bursty arrivals: an off-period (mean %g us) "
                                "is lost in rounding at t = %g us: the clock cannot represent it",
                                s->off_mean_us, t);
    }
}

/* Cancellation (kw_sim_opts.stop, deadline_s): 1 when the run must stop. */
static int kw_cancelled(const kw_sim_opts *o)
{
    if (!o)
        return 0;
    if (o->stop && *o->stop)
        return 1;
    if (o->deadline_s > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 >= o->deadline_s)
            return 1;
    }
    return 0;
}

static int kw_cancel_error(void)
{
    return kw_error_set(KW_EINTERRUPTED, "simulation stopped: interrupted or out of time");
}

/* Next trace row of the replayed shape: its time and stream, or -1 when the trace is empty. */
static int kw_trace_next(kw_st *st, double *t, int *stream)
{
    const kw_trace *tr = st->trace;
    for (int pass = 0; pass < 2; pass++) {
        while (st->tcur < tr->n) {
            size_t i = st->tcur++;
            if (st->trace_shape >= 0 && tr->shape[i] != st->trace_shape)
                continue;
            *t = tr->time_us[i] - st->tfirst + st->toffset;
            *stream = tr->stream[i];
            return 0;
        }
        st->tcur = 0;
        st->toffset += st->tspan;
    }
    return -1;
}

/* ---------------- samples ---------------- */

/* Sort keys: a non-negative double's IEEE-754 bits order like its value.
 * Latencies and waits are kept to 28 mantissa bits (relative 4e-9, far below
 * any statistical error here), which frees the low KW_KEY_DROP_BITS bits of
 * the key to carry the request's stream: one sort then yields the overall
 * and every per-stream order. */
#define KW_KEY_DROP_BITS 24
#define KW_KEY_LOW_MASK ((UINT64_C(1) << KW_KEY_DROP_BITS) - 1)

static uint64_t kw_key(double v, unsigned payload)
{
    uint64_t k;
    v = v > 0 ? v : 0.0; /* also turns -0 into +0 */
    memcpy(&k, &v, sizeof k);
    return (k & ~KW_KEY_LOW_MASK) | payload;
}

static double kw_key_value(uint64_t k)
{
    double v;
    k &= ~KW_KEY_LOW_MASK;
    memcpy(&v, &k, sizeof v);
    return v;
}

double kw_sim_hist_edge_us(int k)
{
    return k <= 0 ? 0.0 : ldexp(1.0, k - 1);
}

static int kw_hist_bin(double w)
{
    if (!(w >= 1.0))
        return 0;
    uint64_t b;
    memcpy(&b, &w, sizeof b);
    int e = (int)(b >> 52) - 1022; /* w in [2^(e-1), 2^e) */
    return e < KW_SIM_HIST_BINS ? e : KW_SIM_HIST_BINS - 1;
}

/* ---------------- batcher and dispatcher ---------------- */

static int kw_place(const kw_st *st, int qi)
{
    if (st->affinity)
        return qi;
    if (st->placement == KW_PLACE_ROUND_ROBIN)
        return st->rr;
    int best = 0;
    double bkey = 0;
    int bidle = 0;
    for (int g = 0; g < st->G; g++) {
        const kw_group *gr = &st->grp[g];
        int idle = gr->cur < 0;
        double key = idle ? gr->last_end_us : KW_MAX(gr->est_free_us, st->t);
        if (g == 0 || (idle && !bidle) || (idle == bidle && key < bkey)) {
            best = g;
            bkey = key;
            bidle = idle;
        }
    }
    return best;
}

/* tail: the caller does nothing after the call, so time may move on inside it */
static void kw_begin_kernel(kw_st *st, int g, int tail);

/* Make the group's first bound batch its current one (kernel 0, now). */
static void kw_take_batch(kw_st *st, int g)
{
    kw_group *gr = &st->grp[g];
    int b = gr->bhead;
    gr->bhead = st->bat[b].next;
    if (gr->bhead < 0)
        gr->btail = -1;
    gr->cur = b;
    gr->kernel = 0;
    gr->kp = &st->sk[st->sb[st->bat[b].r - 1].first];
    gr->nk = st->sb[st->bat[b].r - 1].n;
    st->bat[b].start_us = st->t;
    if (st->t >= st->t_warm) {
        st->batches_meas++;
        st->batch_reqs_meas += st->bat[b].r;
    }
}

static void kw_start_batch(kw_st *st, int g)
{
    kw_take_batch(st, g);
    kw_begin_kernel(st, g, 0);
}

static void kw_try_dispatch(kw_st *st, int qi)
{
    kw_queue *q = &st->q[qi];
    while (q->len > 0) {
        int g = kw_place(st, qi);
        int close;
        if (q->len >= st->mb)
            close = 1;
        else if (st->timeout_us > 0)
            close = st->t >= st->arr[q->head] + st->timeout_us;
        else
            close = st->grp[g].cur < 0;
        if (!close) {
            if (st->timeout_us > 0 && q->armed != q->head) {
                kw_rh_push(st, st->arr[q->head] + st->timeout_us, qi, q->head);
                q->armed = q->head;
            }
            return;
        }
        int r = q->len < st->mb ? q->len : st->mb;
        int b = st->bfree;
        if (b >= 0)
            st->bfree = st->bat[b].next;
        else
            b = st->bused++; /* pool grows lazily: untouched pages stay unmapped */
        kw_batch *bt = &st->bat[b];
        bt->head = q->head;
        bt->r = r;
        bt->next = -1;
        bt->scale = !st->exp_service ? 1.0
                    : st->n_emp > 0 ? gsl_stats_quantile_from_sorted_data(
                                          st->emp, 1, (size_t)st->n_emp, gsl_rng_uniform(st->svc_rng))
                                    : gsl_ran_exponential(st->svc_rng, 1.0);
        int last = q->head;
        for (int i = 1; i < r; i++)
            last = st->next[last];
        q->head = st->next[last];
        st->next[last] = -1;
        q->len -= r;
        if (q->len == 0)
            q->tail = -1;
        const kw_sb *sb = &st->sb[r - 1];
        double est = bt->scale * (sb->launch_us + sb->exec_us / st->clock);
        kw_group *gr = &st->grp[g];
        gr->est_free_us = (gr->cur < 0 ? st->t : KW_MAX(gr->est_free_us, st->t)) + est;
        if (gr->btail >= 0)
            st->bat[gr->btail].next = b;
        else
            gr->bhead = b;
        gr->btail = b;
        if (st->placement == KW_PLACE_ROUND_ROBIN)
            st->rr = (st->rr + 1) % st->G;
        if (gr->cur < 0)
            kw_start_batch(st, g);
    }
}

/* Complete the group's current batch. Returns 1 when, in tail position, it
 * made the group's next bound batch current for the caller to run (a loop
 * there, not a recursion: a backlog of bound batches can be long). */
static int kw_finish_batch(kw_st *st, int g, int tail)
{
    kw_group *gr = &st->grp[g];
    kw_batch *bt = &st->bat[gr->cur];
    const kw_sb *sb = &st->sb[bt->r - 1];
    double t = st->t;
    if (t > st->t_warm) {
        double from = KW_MAX(bt->start_us, st->t_warm);
        gr->busy_us += t - from;
        double share = t > bt->start_us ? (t - from) / (t - bt->start_us) : 0.0;
        st->flop_w += share * sb->flop_w;
        st->dram_bytes += share * sb->dram_bytes;
    }
    for (int id = bt->head; id >= 0; id = st->next[id]) {
        st->ndone++;
        if (id >= st->warm) {
            /* kept in arrival order (the batch-quantile interval's time
             * order, aligned across mappings: common random numbers) */
            int m = id - st->warm;
            st->nmeas++;
            unsigned sid = st->strm[id];
            double lat = t - st->arr[id], wait = bt->start_us - st->arr[id];
            st->lat_key[m] = kw_key(lat, sid);
            st->wait_key[m] = kw_key(wait, 0);
            st->lat_sum += lat;
            st->wait_sum += wait;
            st->stream_sum[sid] += lat;
            st->stream_n[sid]++;
            st->wait_hist[kw_hist_bin(wait)]++;
            st->nfb += sb->fallback;
        }
    }
    bt->next = st->bfree;
    st->bfree = gr->cur;
    gr->cur = -1;
    if (gr->bhead >= 0) {
        if (tail) {
            kw_take_batch(st, g);
            return 1;
        }
        kw_start_batch(st, g);
        return 0;
    }
    gr->last_end_us = t;
    gr->est_free_us = t;
    kw_try_dispatch(st, st->affinity ? g : 0);
    return 0;
}

KW_HOT void kw_set_slowdown(kw_st *st)
{
    if (st->nexec == 0)
        st->D = 0.0;
    st->s = 1.0;
    if (st->bw > 0 && st->D > st->bw)
        st->s = st->D * st->inv_bw;
    if (st->s > 1.0) {
        /* one division per change of demand; the clock's advance and the lost
         * time then multiply (kw_advance runs once per event) */
        st->rate = st->bw / st->D;
        st->lost_k = 1.0 - st->rate;
        st->cflag = 1.0;
    } else {
        st->rate = 1.0;
        st->lost_k = 0.0;
        st->cflag = 0.0;
    }
}

KW_HOT void kw_advance(kw_st *st, double t);

/* Start the execution part of the group's current kernel: 0 if it has none,
 * 1 when it waits in the heap. In tail position (see kw_begin_kernel) an
 * execution that would end strictly first among the executions, and no later
 * than every real-time event, is the next event anyway: it is run to its end
 * at once, exactly as the event loop would (returns 2, time has moved). */
KW_HOT int kw_begin_exec(kw_st *st, int g, int tail)
{
    kw_group *gr = &st->grp[g];
    const kw_sk *k = &gr->kp[gr->kernel];
    double work, demand;
    if (!st->exp_service) {
        work = k->work_us;
        demand = k->demand_c;
    } else {
        double scale = st->bat[gr->cur].scale;
        work = k->exec_us * scale / st->clock;
        demand = k->demand * st->clock / scale;
    }
    if (work <= 0)
        return 0;
    gr->demand = demand;
    st->D += demand;
    st->nexec++;
    kw_set_slowdown(st);
    double v = st->V + work;
    if (tail && (st->vn == 0 || v < st->vh[0].v)) {
        double tv = st->t + (v - st->V) * st->s;
        if (tv < st->t)
            tv = st->t;
        if (tv <= st->arr[st->narrived] && (st->rn == 0 || tv <= st->rh[0].t)) {
            kw_advance(st, tv);
            st->V = v;
            st->D -= demand;
            st->nexec--;
            kw_set_slowdown(st);
            return 2;
        }
    }
    kw_vh_push(st->vh, &st->vn, v, g);
    return 1;
}

/* Time of the next pending event (execution end, launch end or timeout, arrival). */
KW_HOT double kw_next_event(const kw_st *st)
{
    double t = st->arr[st->narrived]; /* arr[ntot] = INFINITY */
    if (st->rn && st->rh[0].t < t)
        t = st->rh[0].t;
    if (st->vn) {
        double tv = st->t + (st->vh[0].v - st->V) * st->s;
        if (tv < t)
            t = tv < st->t ? st->t : tv;
    }
    return t;
}

/* Run the group's current batch from its current kernel until it waits for
 * an event. A launch that ends strictly before every pending event would be
 * the next event anyway: in tail position it is taken at once instead of
 * going through the heap (same order, same arithmetic). */
static void kw_begin_kernel(kw_st *st, int g, int tail)
{
    kw_group *gr = &st->grp[g];
    do {
        for (; gr->kernel < gr->nk; gr->kernel++) {
            const kw_sk *k = &gr->kp[gr->kernel];
            if (k->launch_us > 0) {
                double launch = st->exp_service ? k->launch_us * st->bat[gr->cur].scale : k->launch_us;
                double te = st->t + launch;
                if (!tail || !(te < kw_next_event(st))) {
                    kw_rh_push(st, te, g, -1);
                    return;
                }
                kw_advance(st, te);
            }
            if (kw_begin_exec(st, g, tail) == 1)
                return;
        }
    } while (kw_finish_batch(st, g, tail)); /* its next bound batch, in tail position */
}

/* ---------------- the event loop ---------------- */

KW_HOT void kw_advance(kw_st *st, double t)
{
    double dt = t - st->t;
    if (dt <= 0)
        return;
    /* measured part of the step; the uncontended state adds exact zeros and
     * advances V by dt x 1 */
    double w = t - KW_MAX(st->t, st->t_warm);
    w = w > 0 ? w : 0.0;
    st->lost_us += st->nexec * w * st->lost_k;
    st->contended_us += w * st->cflag;
    st->V += dt * st->rate;
    st->t = t;
}

/* The next request (its time and stream were drawn by kw_gen_arrivals) joins its queue. */
static void kw_arrive(kw_st *st)
{
    int id = st->narrived++;
    st->next[id] = -1;
    if (id == st->warm)
        st->t_warm = st->arr[id];
    int qi = st->affinity ? st->strm[id] % st->G : 0;
    kw_queue *q = &st->q[qi];
    if (q->tail >= 0)
        st->next[q->tail] = id;
    else
        q->head = id;
    q->tail = id;
    q->len++;
    kw_try_dispatch(st, qi);
}

/* Events at equal times: ends of executions first, then launch ends and
 * timeouts (in heap order), then the arrival. */
/* Returns 0, or KW_EINTERRUPTED when opts asked to stop (checked every
 * KW_SIM_CHECK_EVERY events). */
static int kw_event_loop(kw_st *st, const kw_sim_opts *o)
{
    unsigned events = 0;
    while (st->ndone < st->ntot) {
        if ((++events & (KW_SIM_CHECK_EVERY - 1)) == 0 && kw_cancelled(o))
            return kw_cancel_error();
        double ta = st->arr[st->narrived]; /* arr[ntot] = INFINITY */
        double tr = st->rn ? st->rh[0].t : INFINITY;
        double tv = INFINITY;
        if (st->vn) {
            tv = st->t + (st->vh[0].v - st->V) * st->s;
            if (tv < st->t)
                tv = st->t;
        }
        if (tv <= tr && tv <= ta) {
            kw_vev e = kw_vh_pop(st->vh, &st->vn);
            kw_advance(st, tv);
            st->V = e.v;
            kw_group *gr = &st->grp[e.g];
            st->D -= gr->demand;
            st->nexec--;
            kw_set_slowdown(st);
            gr->kernel++;
            kw_begin_kernel(st, e.g, 1);
            continue;
        }
        if (tr > ta) {
            kw_advance(st, ta);
            kw_arrive(st);
            continue;
        }
        kw_rev e = kw_rh_pop(st);
        kw_advance(st, e.t);
        if (e.tag >= 0) { /* batch timeout */
            if (st->q[e.idx].len > 0 && st->q[e.idx].head == e.tag)
                kw_try_dispatch(st, e.idx);
        } else if (kw_begin_exec(st, e.idx, 1) != 1) { /* launch end */
            st->grp[e.idx].kernel++;
            kw_begin_kernel(st, e.idx, 1);
        }
    }
    return 0;
}

/* ---------------- statistics ---------------- */

/* LSD radix sort on key bits 24..63 in four digits of 11, 11, 11 and 7 bits,
 * all histograms counted in one read, passes where every key shares the digit
 * skipped (the top digit, sign and high exponent bits, for any sample within
 * one 2^32 range: in practice three passes). O(n); qsort of the doubles was
 * about 10x slower at 500k samples and dominated the run; 8-bit digits
 * needed four passes. Returns the sorted buffer (k or tmp). */
static uint64_t *kw_sort(uint64_t *k, uint64_t *tmp, size_t n)
{
    enum { PASSES = 4, BITS = 11, RADIX = 1 << BITS };
    _Static_assert(KW_KEY_DROP_BITS + (PASSES - 1) * BITS < 64 &&
                   KW_KEY_DROP_BITS + PASSES * BITS >= 64, "four digits cover the key");
    uint32_t cnt[PASSES][RADIX];
    if (n < 2)
        return k;
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = k[i] >> KW_KEY_DROP_BITS;
        cnt[0][x & (RADIX - 1)]++;
        cnt[1][(x >> BITS) & (RADIX - 1)]++;
        cnt[2][(x >> (2 * BITS)) & (RADIX - 1)]++;
        cnt[3][x >> (3 * BITS)]++;
    }
    for (int p = 0; p < PASSES; p++) {
        int sh = KW_KEY_DROP_BITS + BITS * p;
        uint32_t *c = cnt[p];
        if (c[(k[0] >> sh) & (RADIX - 1)] == n)
            continue;
        uint32_t sum = 0;
        for (int d = 0; d < RADIX; d++) {
            uint32_t v = c[d];
            c[d] = sum;
            sum += v;
        }
        for (size_t i = 0; i < n; i++)
            tmp[c[(k[i] >> sh) & (RADIX - 1)]++] = k[i];
        uint64_t *x = k;
        k = tmp;
        tmp = x;
    }
    return k;
}

/* The p-quantile of n sorted samples whose ranks lhs = (int)(p (n - 1)) and
 * lhs + 1 hold lo and hi: GSL's definition (gsl_stats_quantile_from_sorted_data,
 * linear interpolation between order statistics; Hyndman & Fan 1996 type 7),
 * written out so it can read sorted keys and per-stream ranks in place. */
static size_t kw_q_rank(size_t n, double p)
{
    return (size_t)(int)(p * (n - 1));
}

static double kw_q_mix(size_t n, double p, double lo, double hi)
{
    double index = p * (n - 1);
    size_t lhs = (size_t)(int)index;
    double delta = index - lhs;
    return lhs == n - 1 ? lo : (1 - delta) * lo + delta * hi;
}

static double kw_q(const uint64_t *sorted, size_t n, double p)
{
    if (n == 0)
        return 0.0;
    size_t l = kw_q_rank(n, p);
    return kw_q_mix(n, p, kw_key_value(sorted[l]), l + 1 < n ? kw_key_value(sorted[l + 1]) : 0.0);
}

/* Order-statistic confidence interval of the p-quantile (kw_simci_iid_ranks). */
static void kw_ci(const uint64_t *sorted, size_t n, double p, double *lo, double *hi)
{
    if (n == 0) {
        *lo = *hi = 0;
        return;
    }
    size_t l, u;
    kw_simci_iid_ranks(&l, &u, n, p);
    *lo = kw_key_value(sorted[l]);
    *hi = kw_key_value(sorted[u]);
}

/* Half-width of the batch-quantile interval of the p-quantile of keys[0..n)
 * in arrival order (kw_simci.h): each batch's keys copied to work and
 * radix-sorted with tmp (both hold n / KW_SIMCI_MIN_BATCHES + 1 keys),
 * the batch count halved while the batch quantiles are serially correlated
 * (kw_simci_correlated); keys are left as they are. 0 when the sample is
 * too small for batches. */
static double kw_ci_batch_half(const uint64_t *keys, size_t n, double p, uint64_t *work, uint64_t *tmp)
{
    int k = kw_simci_batches(n, p);
    double bq[KW_SIMCI_MAX_BATCHES];
    for (int next = k; next > 0; next = kw_simci_correlated(bq, k) ? kw_simci_fewer(k) : 0) {
        k = next;
        for (int j = 0; j < k; j++) {
            size_t s = kw_simci_batch_start(n, k, j), m = kw_simci_batch_start(n, k, j + 1) - s;
            memcpy(work, keys + s, m * sizeof *work);
            bq[j] = kw_q(kw_sort(work, tmp, m), m, p);
        }
    }
    return kw_simci_halfwidth(bq, k);
}

/* Per-stream quantiles read in one pass over the overall sorted keys: a
 * stream's samples appear there in their own sorted order, so its r-th sample
 * is the r-th key carrying its payload; only the ranks the quantiles need
 * are kept. */
#define KW_SIM_NQ 3
static const double kw_stream_q[KW_SIM_NQ] = {0.50, 0.95, 0.99};

typedef struct kw_sq {
    size_t n, seen, want;           /* samples, seen so far, next rank to keep */
    size_t rank[KW_SIM_NQ];
    double lo[KW_SIM_NQ], hi[KW_SIM_NQ];
} kw_sq;

/* The smallest rank >= from that a quantile reads (rank[j] or rank[j] + 1). */
static size_t kw_sq_next(const kw_sq *q, size_t from)
{
    size_t best = SIZE_MAX;
    for (int j = 0; j < KW_SIM_NQ; j++) {
        if (q->rank[j] >= from && q->rank[j] < best)
            best = q->rank[j];
        if (q->rank[j] + 1 >= from && q->rank[j] + 1 < best)
            best = q->rank[j] + 1;
    }
    return best;
}

static int kw_stats(kw_sim_result *out, kw_st *st, int R, int keep, int keep_order)
{
    uint64_t *tmp = malloc((size_t)R * sizeof *tmp);
    kw_sq *sq = calloc((size_t)st->S, sizeof *sq);
    int rc = 0;
    if (!tmp || !sq) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for %d simulated latencies", R);
        goto done;
    }
    out->samples = R;
    out->mean_us = st->lat_sum / R;
    out->wait_mean_us = st->wait_sum / R;
    out->fallback_pct = 100.0 * st->nfb / R;
    memcpy(out->wait_hist, st->wait_hist, sizeof out->wait_hist);

    if (keep_order) { /* before the sort below reorders the keys */
        out->lat_seq_us = malloc((size_t)R * sizeof *out->lat_seq_us);
        if (!out->lat_seq_us) {
            rc = kw_error_set(KW_ENOMEM, "out of memory for %d simulated latencies", R);
            goto done;
        }
        for (int i = 0; i < R; i++)
            out->lat_seq_us[i] = kw_key_value(st->lat_key[i]);
    }
    /* batch quantiles first, from the keys in arrival order (the sort
     * below reorders them); tmp's two halves hold one batch and its sort */
    size_t half_n = (size_t)R / 2;
    double h95 = kw_ci_batch_half(st->lat_key, (size_t)R, 0.95, tmp, tmp + half_n);
    double h99 = kw_ci_batch_half(st->lat_key, (size_t)R, 0.99, tmp, tmp + half_n);

    /* latencies: one keyed sort; per-stream order statistics picked on the way */
    const uint64_t *sk = kw_sort(st->lat_key, tmp, (size_t)R);
    for (int s = 0; s < st->S; s++) {
        kw_sq *q = &sq[s];
        q->n = (size_t)st->stream_n[s];
        for (int j = 0; j < KW_SIM_NQ; j++)
            q->rank[j] = q->n ? kw_q_rank(q->n, kw_stream_q[j]) : 0;
        q->want = q->n ? kw_sq_next(q, 0) : SIZE_MAX;
    }
    for (int i = 0; i < R; i++) {
        kw_sq *q = &sq[sk[i] & KW_KEY_LOW_MASK];
        size_t r = q->seen++;
        if (r != q->want)
            continue;
        double v = kw_key_value(sk[i]);
        for (int j = 0; j < KW_SIM_NQ; j++) {
            if (q->rank[j] == r)
                q->lo[j] = v;
            if (q->rank[j] + 1 == r)
                q->hi[j] = v;
        }
        q->want = kw_sq_next(q, r + 1);
    }
    double jsum = 0, jsq = 0;
    int jn = 0;
    out->n_streams = st->S;
    for (int s = 0; s < st->S; s++) {
        const kw_sq *q = &sq[s];
        kw_sim_stream *o = &out->stream[s];
        o->samples = (int)q->n;
        if (!q->n)
            continue;
        o->mean_us = st->stream_sum[s] / (double)q->n;
        o->p50_us = kw_q_mix(q->n, 0.50, q->lo[0], q->hi[0]);
        o->p95_us = kw_q_mix(q->n, 0.95, q->lo[1], q->hi[1]);
        o->p99_us = kw_q_mix(q->n, 0.99, q->lo[2], q->hi[2]);
        jsum += o->p95_us;
        jsq += o->p95_us * o->p95_us;
        jn++;
    }
    /* Jain, Chiu & Hawe (DEC-TR-301, 1984): (sum x)^2 / (n sum x^2). */
    out->fairness = jsq > 0 ? jsum * jsum / (jn * jsq) : 1.0;
    out->p50_us = kw_q(sk, (size_t)R, 0.50);
    out->p95_us = kw_q(sk, (size_t)R, 0.95);
    out->p99_us = kw_q(sk, (size_t)R, 0.99);
    out->p999_us = kw_q(sk, (size_t)R, 0.999);
    kw_ci(sk, (size_t)R, 0.95, &out->p95_ci_lo_us, &out->p95_ci_hi_us);
    kw_ci(sk, (size_t)R, 0.99, &out->p99_ci_lo_us, &out->p99_ci_hi_us);
    kw_simci_join(&out->p95_ci_lo_us, &out->p95_ci_hi_us, out->p95_us, h95);
    kw_simci_join(&out->p99_ci_lo_us, &out->p99_ci_hi_us, out->p99_us, h99);
    out->max_us = kw_key_value(sk[R - 1]);
    if (keep) {
        out->lat_sorted_us = malloc((size_t)R * sizeof *out->lat_sorted_us);
        if (!out->lat_sorted_us) {
            rc = kw_error_set(KW_ENOMEM, "out of memory for %d simulated latencies", R);
            goto done;
        }
        for (int i = 0; i < R; i++)
            out->lat_sorted_us[i] = kw_key_value(sk[i]);
    }

    /* waits: the buffer not holding sk is free for the sort */
    uint64_t *spare = sk == tmp ? st->lat_key : tmp;
    const uint64_t *sw = kw_sort(st->wait_key, spare, (size_t)R);
    out->wait_p50_us = kw_q(sw, (size_t)R, 0.50);
    out->wait_p95_us = kw_q(sw, (size_t)R, 0.95);
    out->wait_p99_us = kw_q(sw, (size_t)R, 0.99);
done:
    free(tmp);
    free(sq);
    return rc;
}

/* ---------------- setup ---------------- */

static int kw_check_input(const kw_sim_input *in, const kw_sim_opts *o)
{
    if (!in || !o || !in->accel || !in->shape || !in->mapping || !in->service)
        return kw_error_set(KW_EINPUT, "simulation: missing accelerator, shape, mapping or service table");
    const kw_accel *a = in->accel;
    const kw_mapping *m = in->mapping;
    const kw_shape *s = in->shape;
    if (a->cores < 1)
        return kw_error_set(KW_EINPUT, "simulation: accelerator has %d cores", a->cores);
    if (m->cores_per_request < 1 || m->cores_per_request > a->cores)
        return kw_error_set(KW_EINPUT, "simulation: cores_per_request %d outside [1, %d]",
                            m->cores_per_request, a->cores);
    if (m->max_batch < 1 || m->max_batch > KW_SIM_BATCH_MAX)
        return kw_error_set(KW_EINPUT, "simulation: max_batch %d outside [1, %d]", m->max_batch,
                            KW_SIM_BATCH_MAX);
    if (!(m->batch_timeout_us >= 0) || !isfinite(m->batch_timeout_us))
        return kw_error_set(KW_EINPUT, "simulation: batch_timeout_us %g is not >= 0",
                            m->batch_timeout_us);
    if (m->placement < KW_PLACE_ROUND_ROBIN || m->placement > KW_PLACE_STREAM_AFFINITY)
        return kw_error_set(KW_EINPUT, "simulation: unknown placement %d", (int)m->placement);
    if (s->streams < 1 || s->streams > KW_SIM_STREAM_MAX)
        return kw_error_set(KW_EINPUT, "simulation: shape %s has %d streams (1..%d)", s->name,
                            s->streams, KW_SIM_STREAM_MAX);
    if (!(a->dram_bw_bytes_per_s >= 0))
        return kw_error_set(KW_EINPUT, "simulation: negative DRAM bandwidth");
    if (in->clock_factor < 0 || in->clock_factor > 1 || !isfinite(in->clock_factor))
        return kw_error_set(KW_EINPUT, "simulation: clock factor %g outside (0, 1]", in->clock_factor);
    if (o->requests < 0 || o->warmup < 0 ||
        (long)o->requests + o->warmup > KW_SIM_MAX_REQUESTS)
        return kw_error_set(KW_EINPUT, "simulation: requests %d + warm-up %d outside [1, %d]",
                            o->requests, o->warmup, KW_SIM_MAX_REQUESTS);
    for (int r = 1; r <= m->max_batch; r++) {
        const kw_cost *c = &in->service[r - 1];
        double tot = 0;
        if (c->n_kernels < 1 || c->n_kernels > KW_KERNEL_MAX)
            return kw_error_set(KW_EINPUT, "simulation: service table for batch %d has %d kernels",
                                r, c->n_kernels);
        for (int i = 0; i < c->n_kernels; i++) {
            const kw_kernel *k = &c->kernels[i];
            if (!(k->time_us >= 0) || !isfinite(k->time_us) || !(k->launch_us >= 0) ||
                k->launch_us > k->time_us || !(k->dram_bytes_per_us >= 0) ||
                !isfinite(k->dram_bytes_per_us))
                return kw_error_set(KW_EINPUT,
                                    "simulation: batch %d kernel %d (%s): bad time %g us, launch %g us "
                                    "or DRAM demand %g B/us", r, i, k->name, k->time_us, k->launch_us,
                                    k->dram_bytes_per_us);
            tot += k->time_us;
        }
        if (!(tot > 0))
            return kw_error_set(KW_EINPUT, "simulation: batch %d has zero service time", r);
    }
    return 0;
}

/* Draw every arrival before the simulation starts: arrivals are an open loop
 * (they never depend on the service), so the event loop reads the next one
 * from arr[]/strm[] instead of keeping one heap entry per stream, and its heap
 * holds only launch ends and timeouts (at most groups + queues live ones).
 * Each stream still draws from its own random stream in its own order; the
 * streams are merged by time with a heap of one entry per stream. */
static int kw_gen_arrivals(kw_st *st, const kw_sim_opts *o)
{
    int n = st->ntot;
    st->arr[n] = INFINITY; /* sentinel: no arrival after the last */
    if (st->trace) {
        for (int id = 0; id < n; id++) {
            int stream;
            if (kw_trace_next(st, &st->arr[id], &stream) != 0) /* NEVER: init checked rows exist */
                return kw_error_set(KW_EINPUT, "simulation: trace has no rows to replay");
            st->strm[id] = (uint8_t)stream;
        }
        return 0;
    }
    kw_vev *h = malloc((size_t)st->S * sizeof *h);
    if (!h)
        return kw_error_set(KW_ENOMEM, "out of memory for arrival streams");
    int hn = 0, rc = 0;
    for (int i = 0; i < st->S && rc == 0; i++) {
        double t0;
        if ((rc = kw_src_next(&st->src[i], 0.0, &t0)) == 0)
            kw_vh_push(h, &hn, t0, i);
    }
    for (int id = 0; id < n && rc == 0; id++) {
        if ((id & (KW_SIM_CHECK_EVERY - 1)) == 0 && kw_cancelled(o)) {
            rc = kw_cancel_error();
            break;
        }
        kw_vev e = h[0];
        st->arr[id] = e.v;
        st->strm[id] = (uint8_t)e.g;
        double tn;
        if ((rc = kw_src_next(&st->src[e.g], e.v, &tn)) == 0)
            kw_vh_replace_top(h, hn, (kw_vev){tn, e.g});
    }
    free(h);
    return rc;
}

static void kw_st_free(kw_st *st)
{
    if (st->src)
        for (int i = 0; i < st->S; i++)
            gsl_rng_free(st->src[i].rng);
    if (st->svc_rng)
        gsl_rng_free(st->svc_rng);
    free(st->src);
    free(st->sk);
    free(st->rh);
    free(st->vh);
    free(st->grp);
    free(st->q);
    free(st->bat);
    free(st->arr);
    free(st->next);
    free(st->strm);
    free(st->lat_key);
    free(st->wait_key);
}

static int kw_st_init(kw_st *st, const kw_sim_input *in, const kw_sim_opts *o)
{
    const kw_accel *a = in->accel;
    const kw_mapping *m = in->mapping;
    const kw_shape *sh = in->shape;
    int R = o->requests ? o->requests : KW_SIM_DEFAULT_REQUESTS;
    st->G = a->cores / m->cores_per_request;
    st->mb = m->max_batch;
    st->S = sh->streams;
    st->affinity = m->placement == KW_PLACE_STREAM_AFFINITY;
    st->placement = m->placement;
    st->Q = st->affinity ? st->G : 1;
    st->timeout_us = m->batch_timeout_us;
    st->clock = in->clock_factor > 0 ? in->clock_factor : 1.0;
    st->bw = o->no_contention ? 0.0 : a->dram_bw_bytes_per_s / KW_US_PER_S;
    st->inv_bw = st->bw > 0 ? 1.0 / st->bw : 0.0;
    st->exp_service = o->exp_service || (o->service_scale && o->n_service_scale > 0);
    st->emp = o->service_scale;
    st->n_emp = o->service_scale ? o->n_service_scale : 0;
    st->warm = o->warmup;
    st->ntot = R + o->warmup;
    st->s = 1.0;
    st->rate = 1.0; /* lost_k, cflag: 0 */
    st->t_warm = INFINITY;
    st->bfree = -1;

    int nk = 0;
    for (int r = 1; r <= st->mb; r++)
        nk += in->service[r - 1].n_kernels;
    size_t N = (size_t)st->ntot;
    st->sk = malloc((size_t)nk * sizeof *st->sk);
    st->src = calloc((size_t)st->S, sizeof *st->src);
    st->rcap = 2 * st->G + st->Q + st->ntot + 8; /* live launches, stale and live timeouts */
    st->rh = malloc((size_t)st->rcap * sizeof *st->rh);
    st->vh = malloc((size_t)st->G * sizeof *st->vh);
    st->grp = malloc((size_t)st->G * sizeof *st->grp);
    st->q = malloc((size_t)st->Q * sizeof *st->q);
    st->bat = malloc(N * sizeof *st->bat);
    st->arr = malloc((N + 1) * sizeof *st->arr);
    st->next = malloc(N * sizeof *st->next);
    st->strm = malloc(N * sizeof *st->strm);
    st->lat_key = malloc((size_t)R * sizeof *st->lat_key);
    st->wait_key = malloc((size_t)R * sizeof *st->wait_key);
    if (!st->sk || !st->src || !st->rh || !st->vh || !st->grp || !st->q || !st->bat || !st->arr ||
        !st->next || !st->strm || !st->lat_key || !st->wait_key)
        return kw_error_set(KW_ENOMEM, "out of memory for a simulation of %d requests", st->ntot);

    nk = 0;
    for (int r = 1; r <= st->mb; r++) {
        const kw_cost *c = &in->service[r - 1];
        kw_sb *sb = &st->sb[r - 1];
        memset(sb, 0, sizeof *sb);
        sb->first = nk;
        sb->n = c->n_kernels;
        sb->fallback = c->fallbacks > 0;
        for (int i = 0; i < c->n_kernels; i++) {
            const kw_kernel *k = &c->kernels[i];
            kw_sk *x = &st->sk[nk++];
            x->launch_us = k->launch_us;
            x->exec_us = k->time_us - k->launch_us;
            x->demand = k->dram_bytes_per_us;
            x->work_us = x->exec_us / st->clock;
            x->demand_c = x->demand * st->clock;
            sb->launch_us += x->launch_us;
            sb->exec_us += x->exec_us;
            double fl = k->exec_flops > 0 ? k->exec_flops : k->flops;
            int eb = kw_prec_bytes(k->prec);
            sb->flop_w += fl * (eb > 0 ? eb : KW_PREC_REF_BYTES) / KW_PREC_REF_BYTES;
            sb->dram_bytes += x->demand * x->exec_us;
            sb->fallback |= k->fallback != 0;
        }
    }
    for (int g = 0; g < st->G; g++) {
        kw_group *gr = &st->grp[g];
        memset(gr, 0, sizeof *gr);
        gr->cur = -1;
        gr->bhead = gr->btail = -1;
    }
    for (int i = 0; i < st->Q; i++)
        st->q[i] = (kw_queue){-1, -1, 0, -1};

    /* arrival sources */
    double rate = in->rate_per_s > 0 ? in->rate_per_s : sh->rate_per_s;
    if (sh->arrival == KW_ARRIVAL_TRACE) {
        if (!in->trace)
            return kw_error_set(KW_EINPUT, "simulation: shape %s replays a trace but none was loaded",
                                sh->name);
        st->trace = in->trace;
        st->trace_shape = in->trace_shape;
        size_t n = 0;
        double first = 0, last = 0;
        for (size_t i = 0; i < in->trace->n; i++) {
            if (in->trace_shape >= 0 && in->trace->shape[i] != in->trace_shape)
                continue;
            if (in->trace->stream[i] < 0 || in->trace->stream[i] >= st->S)
                return kw_error_set(KW_EINPUT, "simulation: trace %s row %zu: stream %d outside [0, %d)",
                                    in->trace->path, i + 1, in->trace->stream[i], st->S);
            if (n++ == 0)
                first = in->trace->time_us[i];
            last = in->trace->time_us[i];
        }
        if (n == 0)
            return kw_error_set(KW_EINPUT, "simulation: trace %s has no rows for shape %s",
                                in->trace->path, sh->name);
        st->tfirst = first;
        st->tspan = (last - first) + (n > 1 ? (last - first) / (double)(n - 1) : 1.0);
        if (!(st->tspan > 0))
            st->tspan = 1.0;
    } else if (!(rate > 0) || !isfinite(rate)) {
        return kw_error_set(KW_EINPUT, "simulation: shape %s has no arrival rate (%g per s)",
                            sh->name, rate);
    } else if (sh->arrival == KW_ARRIVAL_BURSTY &&
               !(sh->burst_on_ms > 0 && sh->burst_off_ms >= 0 && sh->burst_factor > 0)) {
        return kw_error_set(KW_EINPUT, "simulation: shape %s: bursty needs burst_on_ms > 0, "
                            "burst_off_ms >= 0, burst_factor > 0", sh->name);
    }
    for (int i = 0; i < st->S; i++) {
        kw_src *s = &st->src[i];
        s->rng = gsl_rng_alloc(gsl_rng_taus2);
        if (!s->rng)
            return kw_error_set(KW_ENOMEM, "out of memory for random streams");
        gsl_rng_set(s->rng, (unsigned long)kw_mix_splitmix64(o->seed ^ kw_mix_splitmix64((uint64_t)i + 1)));
        s->kind = sh->arrival == KW_ARRIVAL_BURSTY ? KW_SRC_BURSTY : KW_SRC_POISSON;
        s->mean_gap_us = KW_US_PER_S / rate;
        if (s->kind == KW_SRC_BURSTY) {
            s->mean_gap_us /= sh->burst_factor;
            s->on_mean_us = sh->burst_on_ms * KW_US_PER_MS;
            s->off_mean_us = sh->burst_off_ms * KW_US_PER_MS;
            double p_on = s->on_mean_us / (s->on_mean_us + s->off_mean_us);
            s->on = gsl_rng_uniform(s->rng) < p_on;
            s->state_end_us = gsl_ran_exponential(s->rng, s->on ? s->on_mean_us : s->off_mean_us);
        }
    }
    if (st->exp_service) {
        st->svc_rng = gsl_rng_alloc(gsl_rng_taus2);
        if (!st->svc_rng)
            return kw_error_set(KW_ENOMEM, "out of memory for random streams");
        gsl_rng_set(st->svc_rng, (unsigned long)kw_mix_splitmix64(o->seed ^ kw_mix_splitmix64((uint64_t)st->S + 1)));
    }
    return kw_gen_arrivals(st, o);
}

/* Offered utilisation and backlog growth (see "Saturation" at the top). */
static int kw_saturation(kw_sim_result *out, const kw_st *st, int R)
{
    double span_us = R > 1 ? st->arr[st->ntot - 1] - st->arr[st->warm] : 0.0;
    double cap_per_us = 0.0; /* one group, best batch size */
    for (int r = 1; r <= st->mb; r++) {
        const kw_sb *b = &st->sb[r - 1];
        double t_us = b->launch_us + b->exec_us / st->clock;
        if (t_us > 0 && r / t_us > cap_per_us)
            cap_per_us = r / t_us;
    }
    out->capacity_rps = cap_per_us * st->G * KW_US_PER_S;
    out->drain_us = st->t - st->arr[st->ntot - 1];
    if (!(span_us > 0) || !(cap_per_us > 0))
        return 0;
    double lambda_per_us = (R - 1) / span_us;
    out->offered_rps = lambda_per_us * KW_US_PER_S;
    int *cnt = calloc((size_t)st->Q, sizeof *cnt);
    if (!cnt)
        return kw_error_set(KW_ENOMEM, "out of memory for the saturation check");
    for (int id = st->warm; id < st->ntot; id++)
        cnt[st->affinity ? st->strm[id] % st->G : 0]++;
    double servers = st->affinity ? 1.0 : st->G;
    for (int q = 0; q < st->Q; q++) {
        double rho = lambda_per_us * ((double)cnt[q] / R) / (servers * cap_per_us);
        if (rho > out->offered_util)
            out->offered_util = rho;
    }
    free(cnt);
    out->saturated = out->offered_util >= 1.0 ||
                     (R >= KW_SIM_SATURATION_MIN_REQUESTS &&
                      out->drain_us > KW_SIM_SATURATED_DRAIN_FRAC * span_us);
    return 0;
}

int kw_sim_run(kw_sim_result *out, const kw_sim_input *in, const kw_sim_opts *opts)
{
    if (!out)
        return kw_error_set(KW_EINPUT, "simulation: no result");
    memset(out, 0, sizeof *out);
    int rc = kw_check_input(in, opts);
    if (rc)
        return rc;
    kw_st st;
    memset(&st, 0, sizeof st);
    rc = kw_st_init(&st, in, opts);
    if (rc)
        goto done;
    if ((rc = kw_event_loop(&st, opts)) != 0)
        goto done;

    int R = st.ntot - st.warm;
    rc = kw_stats(out, &st, R, opts->keep_latencies, opts->keep_order);
    if (rc)
        goto done;
    out->n_groups = st.G;
    double window = st.t - st.t_warm;
    out->window_us = window;
    double bmax = 0, bsum = 0;
    for (int g = 0; g < st.G; g++) {
        bmax = KW_MAX(bmax, st.grp[g].busy_us);
        bsum += st.grp[g].busy_us;
    }
    out->imbalance = bsum > 0 ? bmax / (bsum / st.G) : 1.0;
    out->utilisation = window > 0 ? bsum / (st.G * window) : 0.0;
    out->contention_lost_us = st.lost_us;
    out->contended_us = st.contended_us;
    out->contention_pct = bsum > 0 ? 100.0 * st.lost_us / bsum : 0.0;
    out->mean_batch = st.batches_meas ? (double)st.batch_reqs_meas / st.batches_meas : 0.0;
    out->throughput_rps = window > 0 ? R / (window / KW_US_PER_S) : 0.0;
    out->flop_rate_per_s = window > 0 ? st.flop_w / (window / KW_US_PER_S) : 0.0;
    out->dram_rate_bytes_per_s = window > 0 ? st.dram_bytes / (window / KW_US_PER_S) : 0.0;
    rc = kw_saturation(out, &st, R);
done:
    kw_st_free(&st);
    return rc;
}

void kw_sim_result_clear(kw_sim_result *r)
{
    if (!r)
        return;
    free(r->lat_sorted_us);
    r->lat_sorted_us = NULL;
    free(r->lat_seq_us);
    r->lat_seq_us = NULL;
}

int kw_sim_rate_for_load(double *rate_per_s, const kw_accel *a, const kw_shape *s,
                         const kw_mapping *m, const kw_cost *service)
{
    *rate_per_s = 0;
    if (s->load <= 0) {
        if (!(s->rate_per_s > 0))
            return kw_error_set(KW_EINPUT, "shape %s gives neither load nor rate_per_s", s->name);
        *rate_per_s = s->rate_per_s;
        return 0;
    }
    if (a->cores < 1 || m->cores_per_request < 1 || m->cores_per_request > a->cores ||
        m->max_batch < 1 || s->streams < 1)
        return kw_error_set(KW_EINPUT, "shape %s: cannot derive a rate (cores %d, cores_per_request %d, "
                            "max_batch %d, streams %d)", s->name, a->cores, m->cores_per_request,
                            m->max_batch, s->streams);
    const kw_cost *c = &service[m->max_batch - 1];
    double t_us = 0;
    for (int i = 0; i < c->n_kernels; i++)
        t_us += c->kernels[i].time_us;
    if (!(t_us > 0))
        t_us = c->latency_us;
    if (!(t_us > 0))
        return kw_error_set(KW_EINPUT, "shape %s: baseline batch has zero service time", s->name);
    double groups = a->cores / m->cores_per_request;
    double capacity = groups * m->max_batch / (t_us / KW_US_PER_S);
    double duty = 1.0;
    if (s->arrival == KW_ARRIVAL_BURSTY) {
        if (!(s->burst_on_ms > 0 && s->burst_off_ms >= 0 && s->burst_factor > 0))
            return kw_error_set(KW_EINPUT, "shape %s: bad burst parameters", s->name);
        duty = s->burst_factor * s->burst_on_ms / (s->burst_on_ms + s->burst_off_ms);
    }
    *rate_per_s = s->load * capacity / s->streams / duty;
    return 0;
}
