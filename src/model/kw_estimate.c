/* kw_estimate.c - closed-form tail of a serving queue (kw_estimate.h).
 *
 * Design: the serving simulation's structure (kw_sim.c) read as a queue of
 * batches, evaluated in closed form per arrival regime and mixed.
 * - Regimes. Poisson shapes have one: all streams at their rate. Bursty
 *   shapes are independent on/off streams (MMPP-2 with no arrivals while off,
 *   kw_sim.c); with bursts long against a service time, the queue follows the
 *   number k of streams that are on (Binomial(n, on / (on + off))) quasi-
 *   statically [the quasi-static/fluid approximation for slowly modulated
 *   queues, e.g. D. Anick, D. Mitra, M. Sondhi, "Stochastic theory of a
 *   data-handling system with multiple sources", Bell Syst. Tech. J. 61
 *   (1982)], so regime k sees Poisson arrivals at k x the on-rate and holds
 *   the share k P(k) / E[k] of the requests.
 * - Batching. The dynamic batcher grows batches only as far as the queue
 *   needs: the smallest r <= max_batch whose utilisation lambda T(r) / (r c)
 *   stays below 1 (else max_batch), T(r) with the other groups' DRAM
 *   contention in it; with a batch timeout, the size the timeout fills
 *   (1 + lambda x timeout, capped) with its fill time added.
 *   Batches then queue at lambda / r with ca2 = 1 / r (r Poisson arrivals
 *   merged: Erlang-r gaps). Without a timeout the batcher takes what has
 *   queued when a group frees (kw_sim.c, Batcher (c); the bulk-service queue
 *   of N. T. J. Bailey, J. R. Stat. Soc. B 16 (1954)), so a queue never
 *   grows towards the utilisation at r but towards the one at the batcher's
 *   capacity, rho_B = lambda T(max_batch) / (max_batch c), as the
 *   simulation's offered load counts it: the wait is the smaller of the
 *   fixed-batch one and Kingman's G/G/1 form with that utilisation,
 *   P(wait) x T(r) / (2 (1 - rho_B)) per server (cs2 = 0, ca2 = 1: P-K when
 *   batching gains nothing, rho_B = rho_r; when a batch costs no more than
 *   one request, the batcher's exact wait u T / 2 (renewal reward and PASTA)
 *   times at most 1 / (1 - rho_B)).
 * - Servers. c = cores / cores_per_request groups: one G/G/c queue for
 *   least_loaded (the simulation's join-least-work equals a central FCFS
 *   queue), c G/G/1 queues at lambda / c for round_robin and stream_affinity
 *   (each group keeps its own backlog). Service is deterministic in the table.
 * - A regime that cannot keep up (utilisation u >= 1 at max_batch) builds a
 *   backlog for as long as it lasts: a request that arrives a time A into it
 *   waits (u - 1) A; the regime's age at an arrival is exponential with the
 *   regime's mean sojourn 1 / (k / on + (n - k) / off).
 * - DRAM contention: the simulation's fluid rule with the other groups busy
 *   at the regime's utilisation, each at its average demand.
 * A latency quantile is the batch's service time plus the wait quantile of
 * the mixture, found by bisection. Left out on purpose, and so part of the
 * error the engine measures: the timing of contention (the average stands for
 * it), the backlog a burst leaves for the next, batch sizes that vary, the
 * finite sample. */
#include <math.h>

#include "kw_error.h"
#include "kw_estimate.h"
#include "kw_limits.h"
#include "kw_queue.h"

#define KW_US_PER_S 1e6
#define KW_US_PER_MS 1e3
#define KW_ESTIMATE_CS2 0.0      /* service times are deterministic in the stage-1 table */
#define KW_ESTIMATE_BISECT 80    /* bisection steps of a quantile (relative precision ~1e-12) */
#define KW_ESTIMATE_CONTENTION_PASSES 2 /* fixed-point passes of utilisation and contention */
#define KW_ESTIMATE_MIN_WEIGHT 1e-12 /* regimes holding fewer requests than this are dropped */

static double kw_est_service_us(const kw_cost *c)
{
    double t = 0.0;
    for (int i = 0; i < c->n_kernels; i++)
        t += c->kernels[i].time_us;
    return t > 0.0 ? t : c->latency_us;
}

/* A batch's time when `others` other groups run kernels beside it: the
 * simulation's fluid contention (kw_sim.c: every running kernel stretches by
 * max(1, summed DRAM demand / bandwidth)), with the others' demand taken at
 * their average over the batch (dram_bytes / service time). */
static double kw_est_contended_us(const kw_cost *c, double others, const kw_accel *a)
{
    double t = kw_est_service_us(c);
    double bw_per_us = a->dram_bw_bytes_per_s / KW_US_PER_S;
    if (!(others > 0.0) || !(bw_per_us > 0.0) || !(t > 0.0))
        return t;
    double other_demand = others * c->dram_bytes / t;
    double s = 0.0;
    for (int i = 0; i < c->n_kernels; i++) {
        const kw_kernel *k = &c->kernels[i];
        double exec = k->time_us - k->launch_us;
        double f = (k->dram_bytes_per_us + other_demand) / bw_per_us;
        s += k->launch_us + exec * (f > 1.0 ? f : 1.0);
    }
    return s > 0.0 ? s : t;
}

/* A batch of r's service time with the other groups contending: they are busy
 * a share u of the time; two fixed-point passes (u from the contended time)
 * settle it to a few percent. 0 for a zero service time. */
static double kw_est_batch_us(const kw_accel *a, const kw_cost *svc, double lambda_per_us, int used,
                              int r)
{
    double t_us = kw_est_service_us(&svc[r - 1]);
    if (!(t_us > 0.0))
        return 0.0;
    for (int pass = 0; pass < KW_ESTIMATE_CONTENTION_PASSES; pass++) {
        double u = fmin(1.0, lambda_per_us * t_us / (r * (double)used));
        t_us = kw_est_contended_us(&svc[r - 1], u * (used - 1), a);
    }
    return t_us;
}

/* One arrival regime, solved. */
typedef struct kw_est_regime {
    double weight;      /* share of requests */
    double base_us;     /* service of its batch + fill time */
    kw_queue_est q;     /* u < 1 */
    double grow_us;     /* u >= 1: (u - 1) x mean age of the regime; wait ~ Exp(grow_us) */
    int batch;
    double rho;
} kw_est_regime;

/* Without a batch timeout, the greedy batcher's wait (file header, Batching):
 * the fixed-batch queue's unless Kingman's form at the capacity's utilisation
 * is smaller. */
static void kw_est_greedy_wait(kw_queue_est *q, const kw_accel *a, const kw_mapping *m,
                               const kw_cost *svc, double lambda_per_us, int used, int r, double t_us)
{
    if (q->saturated || m->max_batch < 2)
        return;
    double t_max = kw_est_batch_us(a, svc, lambda_per_us, used, m->max_batch);
    double rho_cap = lambda_per_us * t_max / (m->max_batch * (double)used);
    if (!(rho_cap < 1.0))
        return;
    /* an arrival waits when the servers are busy: P(wait) of the fixed-batch
     * queue at r = 1, always once one request per batch cannot keep up */
    double p_wait = r == 1 ? q->p_wait : 1.0;
    double per = m->placement == KW_PLACE_LEAST_LOADED ? (double)used : 1.0;
    double cond_us = t_us / (2.0 * per * (1.0 - rho_cap));
    if (p_wait * cond_us < q->wait_mean_us) {
        q->p_wait = p_wait;
        q->cond_wait_mean_us = cond_us;
        q->wait_mean_us = p_wait * cond_us;
    }
}

static int kw_est_solve(kw_est_regime *g, const kw_accel *a, const kw_mapping *m, const kw_cost *svc,
                        double lambda_per_us, int used, double sojourn_us)
{
    int shared = m->placement == KW_PLACE_LEAST_LOADED;
    int r = 1;
    double fill_us = 0.0, t_us;
    if (m->batch_timeout_us > 0.0) {
        double want = 1.0 + lambda_per_us * m->batch_timeout_us;
        r = want >= m->max_batch ? m->max_batch : (int)want;
        /* the oldest request waits for r - 1 more arrivals or the timeout */
        fill_us = fmin(m->batch_timeout_us, (r - 1) / lambda_per_us);
        t_us = kw_est_batch_us(a, svc, lambda_per_us, used, r);
    } else {
        /* the batch grows until the groups keep up at the contended service time:
         * chosen on the uncontended time, busy decode regimes kept r = 1 and
         * saturated once contention stretched the batch */
        t_us = kw_est_batch_us(a, svc, lambda_per_us, used, r);
        while (t_us > 0.0 && r < m->max_batch && lambda_per_us * t_us / (r * (double)used) >= 1.0)
            t_us = kw_est_batch_us(a, svc, lambda_per_us, used, ++r);
    }
    if (!(t_us > 0.0))
        return kw_error_set(KW_EINPUT, "estimate: zero service time");
    double batch_rate = lambda_per_us / r;
    int rc = shared ? kw_queue_ggc(&g->q, batch_rate, t_us, used, 1.0 / r, KW_ESTIMATE_CS2)
                    : kw_queue_ggc(&g->q, batch_rate / used, t_us, 1, 1.0 / r, KW_ESTIMATE_CS2);
    if (rc != 0)
        return rc;
    if (m->batch_timeout_us <= 0.0)
        kw_est_greedy_wait(&g->q, a, m, svc, lambda_per_us, used, r, t_us);
    g->batch = r;
    g->rho = g->q.rho;
    g->base_us = t_us + fill_us;
    g->grow_us = g->q.saturated ? (g->q.rho - 1.0) * sojourn_us : 0.0;
    return 0;
}

/* P(wait > t) of one regime. */
static double kw_est_tail(const kw_est_regime *g, double t_us)
{
    if (g->q.saturated)
        return isfinite(g->grow_us) && g->grow_us > 0.0 ? exp(-t_us / g->grow_us) : 1.0;
    if (!(g->q.cond_wait_mean_us > 0.0))
        return 0.0;
    return g->q.p_wait * exp(-t_us / g->q.cond_wait_mean_us);
}

/* The q-quantile of latency (base + wait) over the mixture. */
static double kw_est_quantile(const kw_est_regime *g, int n, double q)
{
    double lo = INFINITY, hi = 0.0;
    for (int i = 0; i < n; i++) {
        lo = fmin(lo, g[i].base_us);
        double w = g[i].q.saturated ? g[i].grow_us * 60.0 : g[i].q.cond_wait_mean_us * 60.0;
        hi = fmax(hi, g[i].base_us + (isfinite(w) ? w : HUGE_VAL));
    }
    if (!isfinite(hi))
        return HUGE_VAL;
    for (int it = 0; it < KW_ESTIMATE_BISECT; it++) {
        double mid = 0.5 * (lo + hi), above = 0.0;
        for (int i = 0; i < n; i++)
            above += g[i].weight * (mid < g[i].base_us ? 1.0 : kw_est_tail(&g[i], mid - g[i].base_us));
        if (above > 1.0 - q)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

int kw_estimate_tail(kw_estimate *out, const kw_accel *a, const kw_shape *s, const kw_mapping *m,
                     const kw_cost *svc, double rate_per_s)
{
    int groups = m->cores_per_request > 0 ? a->cores / m->cores_per_request : 0;
    double lambda_per_us = s->streams * rate_per_s / KW_US_PER_S;
    if (!(lambda_per_us > 0.0) || !isfinite(lambda_per_us) || groups < 1 || m->max_batch < 1 ||
        s->streams < 1 || s->streams > KW_SIM_STREAM_MAX)
        return kw_error_set(KW_EINPUT, "estimate: shape %s: arrival rate %g /s over %d groups",
                            s->name, rate_per_s, groups);
    int used = groups;
    if (m->placement == KW_PLACE_STREAM_AFFINITY && s->streams < groups)
        used = s->streams; /* streams pin to groups: the others idle */
    kw_est_regime g[KW_SIM_STREAM_MAX + 1];
    int n = 0, rc;
    int bursty = s->arrival == KW_ARRIVAL_BURSTY && s->burst_on_ms > 0.0 && s->burst_off_ms > 0.0;
    if (!bursty) {
        g[0].weight = 1.0;
        if ((rc = kw_est_solve(&g[0], a, m, svc, lambda_per_us, used, HUGE_VAL)) != 0)
            return rc;
        n = 1;
    } else {
        double on_us = s->burst_on_ms * KW_US_PER_MS, off_us = s->burst_off_ms * KW_US_PER_MS;
        double p = on_us / (on_us + off_us);
        double on_rate = rate_per_s * s->burst_factor / KW_US_PER_S; /* one stream while on */
        int ns = s->streams;
        double mean_k = ns * p;
        for (int k = 1; k <= ns; k++) {
            /* Binomial(ns, p) at k, by logs (ns up to the stream limit) */
            double lp = lgamma(ns + 1.0) - lgamma(k + 1.0) - lgamma(ns - k + 1.0) + k * log(p) +
                        (ns - k) * log1p(-p);
            double w = k * exp(lp) / mean_k;
            if (w < KW_ESTIMATE_MIN_WEIGHT)
                continue;
            double sojourn_us = 1.0 / (k / on_us + (ns - k) / off_us);
            g[n].weight = w;
            if ((rc = kw_est_solve(&g[n], a, m, svc, k * on_rate, used, sojourn_us)) != 0)
                return rc;
            n++;
        }
    }
    /* the mean utilisation decides saturation, as the simulation's offered load does */
    double wsum = 0.0, base = 0.0, mean_wait = 0.0, rho = 0.0;
    int batch = 0;
    for (int i = 0; i < n; i++) {
        wsum += g[i].weight;
        base += g[i].weight * g[i].base_us;
        mean_wait += g[i].weight * (g[i].q.saturated ? g[i].grow_us : g[i].q.wait_mean_us);
        if (g[i].weight > 0 && g[i].batch > batch)
            batch = g[i].batch;
    }
    for (int i = 0; i < n; i++)
        g[i].weight /= wsum;
    /* the mean utilisation at max_batch decides saturation, as the
     * simulation's offered load against capacity does */
    double duty = bursty ? s->burst_factor * s->burst_on_ms / (s->burst_on_ms + s->burst_off_ms) : 1.0;
    rho = lambda_per_us * duty * kw_est_service_us(&svc[m->max_batch - 1]) /
          (m->max_batch * (double)used);
    out->batch = batch;
    out->rho = rho;
    out->saturated = rho >= 1.0;
    if (out->saturated) {
        out->p50_us = out->p95_us = out->p99_us = out->mean_us = out->wait_p95_us = HUGE_VAL;
        return 0;
    }
    out->p50_us = kw_est_quantile(g, n, 0.50);
    out->p95_us = kw_est_quantile(g, n, 0.95);
    out->p99_us = kw_est_quantile(g, n, 0.99);
    out->mean_us = (base + mean_wait) / wsum;
    out->wait_p95_us = fmax(0.0, out->p95_us - base / wsum);
    return 0;
}
