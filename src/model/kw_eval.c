/* kw_eval.c - the model evaluator: stages 1-4 behind the engine's interface.
 *
 * One evaluation of (candidate, shape):
 *   1. decode the candidate into a mapping and cost one batch of every size
 *      1..max_batch on cores_per_request cores (kw_cost_eval);
 *   2. serve the shape's arrivals through the batcher and dispatcher with those
 *      service times (kw_sim) -> latency percentiles, fairness, contention;
 *   3. optionally the long thermal window (kw_thermal) for final rankings;
 *   4. emulate the numerics against fp64 (kw_drift), cached per numerics key;
 * then apply the space's guards.
 *
 * Design choices:
 * - Arrival rates are fixed per shape when the evaluator is created, from the
 *   shape's load under the BASELINE mapping (kw_sim_rate_for_load): every
 *   candidate faces the same offered traffic, so a faster mapping shows up as
 *   a shorter queue, not as more traffic.
 * - Common random numbers: the arrival streams of a shape are seeded from
 *   (seed, shape) only, never from the candidate, so two candidates differ in
 *   their tails only through their mappings. This is what makes one-knob
 *   comparisons meaningful at a small sample size.
 * - Optional measurement noise (space noise_pct) is a seeded multiplicative
 *   factor per (candidate, shape, rep): the engine's significance test then
 *   has real work to do, as it will on hardware.
 * - Everything is a pure function of (candidate, shape, rep, seed), so the
 *   engine may call it from any thread.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_rng.h>

#include "kw_drift.h"
#include "kw_estimate.h"
#include "kw_eval.h"
#include "kw_eval_cb.h"
#include "kw_moe.h"
#include "kw_limits.h"
#include "kw_mapping.h"
#include "kw_mix.h"
#include "kw_sim.h"
#include "kw_simci.h"
#include "kw_thermal.h"
#include "kw_trace.h"

/* A paired comparison's side kept for the next (kw_eval_seq_kept): one config's
 * simulation of a shape at a sample, what the comparison reads of it. */
typedef struct kw_eval_kept {
    int shape;
    long samples;
    uint64_t id;
    unsigned long used;                    /* last use (0: empty) */
    double *lat;                           /* [n] latencies in arrival order */
    int n, saturated;
    double p95_us, p99_us, fallback_pct;
} kw_eval_kept;

/* The sides kept: the re-rank compares one leader with each rival in turn at its first
 * look, and a rival that does not decide there doubles its sample up to KW_RERANK_CAP
 * (kw_ofat.c "the re-rank": 4 looks for p95, each with both sides), after which the next
 * rival meets the leader's first look again: 8 sides hold a whole sequence. Sides longer
 * than the re-rank's cap (the evidence's verdict looks go to 1,000,000) are not kept:
 * at most 8 x 262,144 latencies (16 MiB) per evaluator. */
#define KW_EVAL_KEPT_SEQS 8
#define KW_EVAL_KEPT_MAX_SAMPLES KW_RERANK_CAP

struct kw_model_eval {
    const kw_config *cfg;
    kw_model_opts opts;
    kw_evaluator iface;
    const char *shape_names[KW_SHAPE_MAX];
    double rate_per_s[KW_SHAPE_MAX];
    kw_trace *trace;                       /* --trace, shared by the shapes it names */
    kw_trace *shape_trace[KW_SHAPE_MAX];   /* a shape's own trace file (arrival="trace") */
    const kw_trace *use_trace[KW_SHAPE_MAX];
    int trace_shape[KW_SHAPE_MAX];
    kw_drift_cache *drift;                 /* thread-safe; the search pays once per numerics key */
    unsigned prec_mask;                    /* precisions the space offers and the chip supports */
    int traces_borrowed;                   /* trace/shape_trace belong to opts.borrow_from */
    int drift_borrowed;                    /* drift belongs to opts.borrow_from */
    pthread_mutex_t kept_mu;               /* guards kept, kept_tick, paired_requests */
    kw_eval_kept kept[KW_EVAL_KEPT_SEQS];
    unsigned long kept_tick;
    long paired_requests;                  /* requests the paired comparisons simulated */
};

static const kw_shape *kw_eval_shape(const kw_model_eval *e, int shape)
{
    return &e->cfg->workload.shapes[e->cfg->space.shapes[shape]];
}

int kw_eval_cost(kw_cost *out, const kw_model_eval *e, const kw_cand *c, int shape)
{
    const kw_shape *s = kw_eval_shape(e, shape);
    const kw_block *b = &e->cfg->workload.blocks[s->block];
    kw_mapping m;
    int rc = kw_mapping_decode(&m, &e->cfg->space, b, c);
    if (rc != 0)
        return rc;
    return kw_cost_eval(out, &e->cfg->accel, b, s, &m, 1, m.cores_per_request);
}


/* Service table: one kw_cost per batch size 1..max_batch (caller frees). */
static int kw_eval_service(kw_cost **out, const kw_model_eval *e, const kw_shape *s,
                           const kw_block *b, const kw_mapping *m)
{
    kw_cost *svc = malloc(sizeof *svc * (size_t)m->max_batch);
    if (!svc)
        return kw_error_set(KW_ENOMEM, "out of memory for a service table of %d batch sizes",
                            m->max_batch);
    for (int r = 1; r <= m->max_batch; r++) {
        int rc = kw_cost_eval(&svc[r - 1], &e->cfg->accel, b, s, m, r, m->cores_per_request);
        if (rc != 0) {
            free(svc);
            return rc;
        }
    }
    *out = svc;
    return 0;
}

/* The serving simulation of shape `shape` under mapping m with service table
 * svc, and its options: one home for both, so the latencies a report plots
 * are those of the evaluation the journal recorded. */
static kw_sim_input kw_eval_sim_input(const kw_model_eval *e, int shape, const kw_mapping *m,
                                      const kw_cost *svc)
{
    kw_sim_input in = {
        .accel = &e->cfg->accel, .shape = kw_eval_shape(e, shape), .mapping = m, .service = svc,
        .rate_per_s = e->rate_per_s[shape], .trace = e->use_trace[shape],
        .trace_shape = e->trace_shape[shape], .clock_factor = 1.0,
    };
    return in;
}

static kw_sim_opts kw_eval_sim_opts(const kw_model_eval *e, int shape)
{
    kw_sim_opts so = {
        .requests = e->opts.sim_requests > 0 ? e->opts.sim_requests : e->cfg->space.sim_requests,
        .warmup = 0,
        .seed = kw_mix_splitmix64(e->opts.seed * 1000003ULL + (uint64_t)shape),
        .no_contention = e->opts.no_contention,
        .stop = e->opts.stop,
        .deadline_s = e->opts.deadline_s ? *e->opts.deadline_s : 0.0,
    };
    so.warmup = so.requests / KW_SIM_WARMUP_DIV;
    return so;
}

static void kw_guard_add(kw_metrics *out, const char *name)
{
    size_t used = strlen(out->guards);
    snprintf(out->guards + used, sizeof out->guards - used, "%s%s", used ? ";" : "", name);
}

/* The guards and the bottleneck class of one evaluation, from its facts
 * (kw_eval.h). Guards in this order, each added when it fails:
 *   drift_cos, drift_rel_rms  emulated drift failed and cos < drift_min_cos /
 *                             rel_rms > drift_max_rel_rms;
 *   throttle, long_window, thermal_shutdown  the long thermal window (when
 *                             run): throttled share > max_throttle_pct,
 *                             long-window drift > max_long_window_drift_pct,
 *                             the chip hit its shutdown temperature;
 *   (a worker's own numerics check, when given, replaces all of the above
 *    with its drift_cos / drift_rel_rms, judged on its figures alone;)
 *   fallback                  fallback share > max_fallback_pct;
 *   sla_p99                   an SLA is set (> 0) and p99 > sla_p99_us;
 *   saturated                 the serving simulation could not keep up.
 * The class: stage 1's bound, unless the simulation ran and contention
 * exceeds KW_EVAL_CONTENTION_CLASS_PCT ("contention") or else queue wait's
 * p95 exceeds KW_EVAL_QUEUEING_SHARE of the latency p95 ("queueing"); then
 * "thermal" when the throttled share is over the guard, and "saturated" over
 * all when the simulation saturated. */
void kw_eval_judge(kw_metrics *out, const kw_guards *g, const kw_eval_facts *f)
{
    out->guards[0] = '\0';
    if (f->drift_failed) {
        if (f->drift_cos < g->drift_min_cos)
            kw_guard_add(out, "drift_cos");
        if (f->drift_rel_rms > g->drift_max_rel_rms)
            kw_guard_add(out, "drift_rel_rms");
    }
    if (f->thermal_ran) {
        if (f->throttled_pct > g->max_throttle_pct)
            kw_guard_add(out, "throttle");
        if (f->long_window_drift_pct > g->max_long_window_drift_pct)
            kw_guard_add(out, "long_window");
        if (f->thermal_shutdown)
            kw_guard_add(out, "thermal_shutdown");
    }
    if (f->worker_quality) {
        out->guards[0] = '\0';
        if (f->worker_cos < g->drift_min_cos)
            kw_guard_add(out, "drift_cos");
        if (f->worker_rel_rms > g->drift_max_rel_rms)
            kw_guard_add(out, "drift_rel_rms");
    }
    if (f->fallback_pct > g->max_fallback_pct)
        kw_guard_add(out, "fallback");
    if (g->sla_p99_us > 0.0 && f->p99_us > g->sla_p99_us)
        kw_guard_add(out, "sla_p99");
    if (f->continuous && g->sla_ttft_p99_us > 0.0 && f->ttft_p99_us > g->sla_ttft_p99_us)
        kw_guard_add(out, "sla_ttft");
    if (f->continuous && g->sla_tpot_p99_us > 0.0 && f->tpot_p99_us > g->sla_tpot_p99_us)
        kw_guard_add(out, "sla_tpot");
    /* Arrivals beyond what the mapping can serve (kw_sim.c "Saturation"):
     * its percentiles only measure how long the window was. */
    if (f->simulated && f->saturated)
        kw_guard_add(out, "saturated");
    snprintf(out->klass, sizeof out->klass, "%s", kw_cost_bound_name(f->bound));
    if (f->simulated && f->contention_pct > KW_EVAL_CONTENTION_CLASS_PCT)
        snprintf(out->klass, sizeof out->klass, "contention");
    else if (f->simulated && f->wait_p95_us > KW_EVAL_QUEUEING_SHARE * f->p95_us)
        snprintf(out->klass, sizeof out->klass, "queueing");
    if (f->throttled_pct > g->max_throttle_pct)
        snprintf(out->klass, sizeof out->klass, "thermal");
    if (f->simulated && f->saturated)
        snprintf(out->klass, sizeof out->klass, "saturated");
}

/* Stage 4 of (m, shape): quality drift against fp64, from the cache when the
 * numerics key was seen, into v[] (quality_cos, quality_rel_rms,
 * quality_max_abs, drift_fallback) and the facts the guards are judged on.
 * with_fallback: a failing mapping also names the lowest precision that
 * passes (drift_fallback; more drift checks, so predict() leaves it out).
 * Off (opts.drift 0): cos 1, no fallback, nothing failed. */
static int kw_eval_drift(const kw_model_eval *e, const kw_block *b, const kw_shape *s,
                         const kw_mapping *m, double *v, kw_eval_facts *facts, int with_fallback)
{
    const kw_guards *g = &e->cfg->space.guards;
    v[KW_M_DRIFT_FALLBACK] = -1.0;
    v[KW_M_QUALITY_COS] = 1.0;
    if (!e->opts.drift)
        return 0;
    kw_drift d;
    uint64_t dseed = kw_mix_splitmix64(e->opts.seed ^ 0x64726966ULL);
    kw_block moe_view; /* an MoE computes as one of its experts (kw_moe.c) */
    const kw_block *db = kw_moe_numerics_view(&moe_view, b);
    int rc = kw_drift_cache_get(&d, e->drift, db, s, m, g, dseed);
    if (rc != 0)
        return rc;
    v[KW_M_QUALITY_COS] = d.cos;
    v[KW_M_QUALITY_REL_RMS] = d.rel_rms;
    v[KW_M_QUALITY_MAX_ABS] = d.max_abs;
    facts->drift_failed = !d.pass;
    facts->drift_cos = d.cos;
    facts->drift_rel_rms = d.rel_rms;
    if (!d.pass && with_fallback) {
        kw_mapping fb;
        kw_drift ev;
        if (kw_drift_fallback(&fb, &ev, e->drift, db, s, m, g, dseed, e->prec_mask) == 0)
            v[KW_M_DRIFT_FALLBACK] = fb.precision;
        else
            kw_error_clear(); /* nothing passes: recorded as no fallback (-1) */
    }
    return 0;
}

/* Rescale a service table to a measured one-request time (kw_stage1_measured). */
static void kw_eval_rescale(kw_cost *svc, int n, double f)
{
    for (int r = 0; r < n; r++) {
        kw_cost *k = &svc[r];
        for (int i = 0; i < k->n_kernels; i++) {
            k->kernels[i].time_us *= f;
            k->kernels[i].launch_us *= f;
            k->kernels[i].compute_us *= f;
            k->kernels[i].memory_us *= f;
            k->kernels[i].dram_bytes_per_us /= f;
        }
        k->latency_us *= f;
        k->launch_us *= f;
        k->peak_dram_bytes_per_us /= f;
        for (int b = 0; b < KW_BOUND_COUNT; b++)
            k->bound_us[b] *= f;
    }
}

/* Percentiles of measured whole-request latencies (sorted), with the 95%
 * order-statistic interval of p95 and p99 (kw_sim's rule, kw_simci_iid_ranks:
 * its own copy here took each rank one too high). */
static void kw_eval_from_requests(double *v, const double *x, int n)
{
    size_t N = (size_t)n;
    v[KW_M_P50_US] = gsl_stats_quantile_from_sorted_data(x, 1, N, 0.50);
    v[KW_M_P95_US] = gsl_stats_quantile_from_sorted_data(x, 1, N, 0.95);
    v[KW_M_P99_US] = gsl_stats_quantile_from_sorted_data(x, 1, N, 0.99);
    v[KW_M_P999_US] = gsl_stats_quantile_from_sorted_data(x, 1, N, 0.999);
    v[KW_M_MEAN_US] = gsl_stats_mean(x, 1, N);
    v[KW_M_SAMPLES] = n;
    const double q[2] = {0.95, 0.99};
    const int lo[2] = {KW_M_P_CI_LO_US, KW_M_P99_CI_LO_US}, hi[2] = {KW_M_P_CI_HI_US, KW_M_P99_CI_HI_US};
    for (int t = 0; t < 2; t++) {
        size_t l, h;
        kw_simci_iid_ranks(&l, &h, N, q[t]);
        v[lo[t]] = x[l];
        v[hi[t]] = x[h];
    }
}

static int kw_model_eval_one(void *ctx, const kw_cand *c, int shape, int rep, kw_metrics *out)
{
    return kw_eval_measured(ctx, c, shape, rep, NULL, out);
}

/* The model cannot run this mapping on this accelerator (e.g. more cores per
 * request than it has): a guard failure the journal keeps, not a crash of the
 * run. Every metric 0 and the latencies infinite, so no ranking prefers it;
 * the model's message is dropped. Both places kw_eval_measured meets it
 * (stage 1, continuous batching) use this one rule. */
static void kw_eval_infeasible(kw_metrics *out)
{
    double *v = out->v;
    snprintf(out->guards, sizeof out->guards, "infeasible");
    snprintf(out->klass, sizeof out->klass, "infeasible");
    for (int i = 0; i < KW_M_COUNT; i++)
        v[i] = 0.0;
    v[KW_M_P50_US] = v[KW_M_P95_US] = v[KW_M_P99_US] = v[KW_M_P999_US] = v[KW_M_MEAN_US] = HUGE_VAL;
    kw_error_clear();
}

int kw_eval_measured(const kw_model_eval *e, const kw_cand *c, int shape, int rep,
                     const kw_stage1_measured *ms, kw_metrics *out)
{
    const kw_config *cfg = e->cfg;
    const kw_shape *s = kw_eval_shape(e, shape);
    const kw_block *b = &cfg->workload.blocks[s->block];
    const kw_guards *g = &cfg->space.guards;
    kw_cost *svc = NULL;
    kw_sim_result *sim = NULL;
    kw_mapping m;
    kw_eval_facts facts = {0};
    double *v = out->v;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = kw_mapping_decode(&m, &cfg->space, b, c)) != 0)
        return rc;
    rc = kw_eval_service(&svc, e, s, b, &m);
    if (rc == KW_EINPUT || rc == KW_EMODEL) {
        kw_eval_infeasible(out);
        return 0;
    }
    if (rc != 0)
        return rc;
    if (ms && ms->kernel_us > 0.0 && svc[0].latency_us > 0.0)
        kw_eval_rescale(svc, m.max_batch, ms->kernel_us / svc[0].latency_us);
    const kw_cost *one = &svc[0];
    v[KW_M_LATENCY_US] = one->latency_us;
    v[KW_M_LAUNCH_US] = one->launch_us;
    v[KW_M_LAUNCHES] = one->launches;
    v[KW_M_REUSE_RATIO] = one->reuse_ratio;
    v[KW_M_DRAM_MB] = one->dram_bytes / 1e6;

    if (ms && ms->n_request > 0) {
        /* unit=request: the worker measured serving itself. */
        kw_eval_from_requests(v, ms->request_us, ms->n_request);
        int fb = 0;
        for (int i = 0; i < one->n_kernels; i++)
            fb += one->kernels[i].fallback;
        v[KW_M_FALLBACK_PCT] = one->n_kernels ? 100.0 * fb / one->n_kernels : 0.0;
        v[KW_M_ENERGY_MJ] = one->energy_j * 1e3;
    }
    /* Stage 2: the serving simulation (not when the worker measured serving). */
    int by_worker = ms && ms->n_request > 0;
    int cb_saturated = 0; /* continuous batching served fewer requests than arrived */
    kw_sim_input in = kw_eval_sim_input(e, shape, &m, svc);
    kw_sim_opts so = kw_eval_sim_opts(e, shape);
    if (ms && ms->kernel_scale && ms->n_kernel_scale > 0) {
        /* the measured spread: each simulated batch draws its time from it */
        so.service_scale = ms->kernel_scale;
        so.n_service_scale = ms->n_kernel_scale;
    }
    if (!by_worker && s->continuous) {
        /* continuous (iteration-level) batching: kw_eval_cb.c */
        double served = 1.0;
        rc = kw_eval_cb(v, &served, &cfg->accel, b, s, &m, e->rate_per_s[shape], so.requests,
                        so.seed, NULL);
        if (rc == KW_EINPUT || rc == KW_EMODEL) {
            kw_eval_infeasible(out);
            rc = 0;
            goto done;
        }
        if (rc != 0)
            goto done;
        /* arrivals beyond what the schedule serves: the tail measures the window */
        cb_saturated = served < KW_CB_SATURATED_FRACTION;
    } else if (!by_worker) {
        sim = malloc(sizeof *sim);
        if (!sim) {
            rc = kw_error_set(KW_ENOMEM, "out of memory for the serving simulation");
            goto done;
        }
        if ((rc = kw_sim_run(sim, &in, &so)) != 0)
            goto done;
        v[KW_M_P50_US] = sim->p50_us;
        v[KW_M_P95_US] = sim->p95_us;
        v[KW_M_P99_US] = sim->p99_us;
        v[KW_M_P999_US] = sim->p999_us;
        v[KW_M_MEAN_US] = sim->mean_us;
        v[KW_M_QUEUE_P95_US] = sim->wait_p95_us;
        v[KW_M_FAIRNESS] = sim->fairness;
        v[KW_M_IMBALANCE] = sim->imbalance;
        v[KW_M_THROUGHPUT_RPS] = sim->throughput_rps;
        v[KW_M_CONTENTION_PCT] = sim->contention_pct;
        v[KW_M_FALLBACK_PCT] = sim->fallback_pct;
        v[KW_M_SAMPLES] = sim->samples;
        v[KW_M_P_CI_LO_US] = sim->p95_ci_lo_us;
        v[KW_M_P_CI_HI_US] = sim->p95_ci_hi_us;
        v[KW_M_P99_CI_LO_US] = sim->p99_ci_lo_us;
        v[KW_M_P99_CI_HI_US] = sim->p99_ci_hi_us;
    }

    /* Optional seeded measurement noise, as a real device would show. */
    if (cfg->space.noise_pct > 0.0 && !ms) {
        gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
        if (!r) {
            rc = kw_error_set(KW_ENOMEM, "out of memory for the noise stream");
            goto done;
        }
        gsl_rng_set(r, (unsigned long)kw_mix_splitmix64(kw_knobs_cand_id(&cfg->space.knobs, c) ^
                                               kw_mix_splitmix64(((uint64_t)shape << 32) | (uint64_t)rep) ^
                                               e->opts.seed));
        double f = 1.0 + gsl_ran_gaussian(r, cfg->space.noise_pct / 100.0);
        gsl_rng_free(r);
        if (f < 0.5)
            f = 0.5;
        for (int i = KW_M_P50_US; i <= KW_M_MEAN_US; i++)
            v[i] *= f;
        v[KW_M_P_CI_LO_US] *= f;
        v[KW_M_P_CI_HI_US] *= f;
        v[KW_M_P99_CI_LO_US] *= f;
        v[KW_M_P99_CI_HI_US] *= f;
    }

    v[KW_M_ENERGY_MJ] = one->energy_j * 1e3;

    /* Stage 4: quality drift against fp64, from the cache when seen. */
    if ((rc = kw_eval_drift(e, b, s, &m, v, &facts, 1)) != 0)
        goto done;

    /* Stage 3: the long thermal window, for final rankings (it costs one
     * simulation per clock level visited). */
    if (e->opts.thermal && !by_worker) {
        kw_thermal_result th;
        kw_thermal_opts to = {0};
        if ((rc = kw_thermal_window(&th, &in, &so, &to)) != 0)
            goto done;
        v[KW_M_THROTTLE_PCT] = th.throttled_pct;
        v[KW_M_LONG_P99_US] = th.long_p99_us;
        v[KW_M_STEADY_TEMP_C] = th.steady_temp_c;
        facts.thermal_ran = 1;
        facts.throttled_pct = th.throttled_pct;
        facts.long_window_drift_pct = th.drift_pct;
        facts.thermal_shutdown = th.shutdown;
    }

    /* The worker's own numerics check replaces the emulation when given. */
    if (ms && isfinite(ms->quality_rel_rms) && isfinite(ms->quality_cos)) {
        v[KW_M_QUALITY_COS] = ms->quality_cos;
        v[KW_M_QUALITY_REL_RMS] = ms->quality_rel_rms;
        facts.worker_quality = 1;
        facts.worker_cos = ms->quality_cos;
        facts.worker_rel_rms = ms->quality_rel_rms;
    }
    facts.fallback_pct = v[KW_M_FALLBACK_PCT];
    facts.p99_us = v[KW_M_P99_US];
    if (sim) {
        facts.simulated = 1;
        facts.saturated = sim->saturated;
        facts.contention_pct = sim->contention_pct;
        facts.wait_p95_us = sim->wait_p95_us;
        facts.p95_us = sim->p95_us;
    }
    if (s->continuous && !by_worker) { /* continuous batching (kw_eval_cb.c) */
        facts.simulated = 1;
        facts.saturated = cb_saturated;
        facts.continuous = 1;
        facts.ttft_p99_us = v[KW_M_TTFT_P99_US];
        facts.tpot_p99_us = v[KW_M_TPOT_P99_US];
    }
    facts.bound = one->bound;
    kw_eval_judge(out, g, &facts);
    rc = 0;
done:
    if (sim)
        kw_sim_result_clear(sim);
    free(sim);
    free(svc);
    return rc;
}

/* The service key (kw_evaluator.service_key; the engine's aliases, search/kw_engine.c):
 * the bytes of everything kw_eval_measured (ms NULL) reads once c is decoded, so that
 * two candidates of a shape with equal keys get results equal bit for bit. It reads:
 *   - the arrivals and the simulation's options, fixed per (evaluator, shape): the
 *     shape, the seed, the sample, the rate, the trace, the counterfactual switch,
 *     whether the thermal window and the drift check run;
 *   - the four mapping fields the serving simulation reads (kw_sim.c kw_st_init,
 *     kw_check_input; the thermal window runs that simulation at lower clocks):
 *     max_batch, placement, cores_per_request, batch_timeout_us; at key level 2
 *     (kw_skey.level, since stop 48) the two the simulation provably cannot read
 *     are left out: batch_timeout_us when max_batch is 1 (kw_try_dispatch closes a
 *     batch once the queue holds max_batch requests, before it reads the timeout)
 *     and placement when cores / cores_per_request is 1 (one group: kw_place, the
 *     queues and the saturation check give every placement the same; measured on
 *     the growth bench's 26-knob journals, 42 and 18 full evaluations per shape
 *     whose results repeated another's bit for bit under a key that differed);
 *   - the service table for every batch size 1..max_batch, each field the
 *     simulation reads (per batch: kernels, fallbacks; per kernel: launch, time, DRAM
 *     demand, FLOPs executed and useful, precision, fallback), and what the
 *     evaluation reads of one request (latency, launch, launches, reuse, DRAM bytes,
 *     energy, bound class);
 *   - the drift stage's outputs as the evaluation records them (cos, rel RMS, max
 *     abs, the fallback precision, pass) rather than the knobs behind them: a key of
 *     precision/fusion/tile_k/split_k values aliased evaluations whose quality_cos
 *     differs (stop 45, doc/search-log.md "growth-phases").
 * A mapping stage 1 cannot serve is infeasible whatever else it sets: one key per
 * shape. No key (1): a noisy space (noise depends on the candidate), a continuous-
 * batching shape (kw_eval_cb reads the whole mapping), a config the decoder refuses
 * or the drift check fails on (the evaluation's error is its own). A field added to
 * what the simulation or the guards read must be added here: tests/test_alias.c
 * evaluates every config of a space both ways. */
static int kw_model_eval_key(void *ctx, const kw_cand *c, int shape, kw_skey *k)
{
    const kw_model_eval *e = ctx;
    const kw_config *cfg = e->cfg;
    const kw_shape *s = kw_eval_shape(e, shape);
    const kw_block *b = &cfg->workload.blocks[s->block];
    if (cfg->space.noise_pct > 0.0 || s->continuous)
        return 1;
    kw_mapping m;
    int rc = kw_mapping_decode(&m, &cfg->space, b, c);
    if (rc != 0) {
        kw_error_clear();
        return 1;
    }
    kw_sim_opts so = kw_eval_sim_opts(e, shape);
    struct {
        char tag[8];
        int32_t shape, requests, warmup, thermal, drift, no_contention, traced, trace_shape;
        uint64_t seed, sim_seed;
        double rate;
    } hd;
    memset(&hd, 0, sizeof hd);
    memcpy(hd.tag, "kwsk1", 5);
    hd.shape = shape;
    hd.requests = so.requests;
    hd.warmup = so.warmup;
    hd.thermal = e->opts.thermal != 0;
    hd.drift = e->opts.drift != 0;
    hd.no_contention = e->opts.no_contention != 0;
    hd.traced = e->use_trace[shape] != NULL;
    hd.trace_shape = e->trace_shape[shape];
    hd.seed = e->opts.seed;
    hd.sim_seed = so.seed;
    hd.rate = e->rate_per_s[shape];
    if ((rc = kw_memo_skey_put(k, &hd, sizeof hd)) != 0)
        return rc;
    kw_cost *svc = NULL;
    rc = kw_eval_service(&svc, e, s, b, &m);
    if (rc == KW_EINPUT || rc == KW_EMODEL) { /* kw_eval_infeasible: one result */
        kw_error_clear();
        return kw_memo_skey_put(k, "infeasible", 10);
    }
    if (rc != 0)
        return rc;
    struct {
        int32_t max_batch, placement, cores, launches, bound, n_kernels;
        double timeout_us, latency_us, launch_us, reuse, dram_bytes, energy_j;
    } mp;
    memset(&mp, 0, sizeof mp);
    mp.max_batch = m.max_batch;
    mp.placement = (int32_t)m.placement;
    mp.cores = m.cores_per_request;
    mp.launches = svc[0].launches;
    mp.bound = (int32_t)svc[0].bound;
    mp.n_kernels = svc[0].n_kernels;
    mp.timeout_us = m.batch_timeout_us;
    if (k->level >= 2) { /* what kw_sim.c provably never reads */
        if (m.max_batch == 1)
            mp.timeout_us = 0; /* every batch closes at one request: the timeout is never read */
        if (cfg->accel.cores / m.cores_per_request == 1)
            mp.placement = 0; /* one group: every placement binds every batch to it */
    }
    mp.latency_us = svc[0].latency_us;
    mp.launch_us = svc[0].launch_us;
    mp.reuse = svc[0].reuse_ratio;
    mp.dram_bytes = svc[0].dram_bytes;
    mp.energy_j = svc[0].energy_j;
    rc = kw_memo_skey_put(k, &mp, sizeof mp);
    for (int r = 0; rc == 0 && r < m.max_batch; r++) {
        const kw_cost *co = &svc[r];
        int32_t nb[2] = {co->n_kernels, co->fallbacks};
        rc = kw_memo_skey_put(k, nb, sizeof nb);
        for (int i = 0; rc == 0 && i < co->n_kernels; i++) {
            const kw_kernel *q = &co->kernels[i];
            struct {
                double launch_us, time_us, demand, exec_flops, flops;
                int32_t prec, fallback;
            } kk;
            memset(&kk, 0, sizeof kk);
            kk.launch_us = q->launch_us;
            kk.time_us = q->time_us;
            kk.demand = q->dram_bytes_per_us;
            kk.exec_flops = q->exec_flops;
            kk.flops = q->flops;
            kk.prec = (int32_t)q->prec;
            kk.fallback = q->fallback;
            rc = kw_memo_skey_put(k, &kk, sizeof kk);
        }
    }
    free(svc);
    if (rc != 0)
        return rc;
    double v[KW_METRIC_MAX];
    kw_eval_facts facts;
    memset(v, 0, sizeof v);
    memset(&facts, 0, sizeof facts);
    if ((rc = kw_eval_drift(e, b, s, &m, v, &facts, 1)) != 0) {
        if (rc == KW_ENOMEM)
            return rc;
        kw_error_clear();
        return 1;
    }
    double dq[5] = {v[KW_M_QUALITY_COS], v[KW_M_QUALITY_REL_RMS], v[KW_M_QUALITY_MAX_ABS],
                    v[KW_M_DRIFT_FALLBACK], (double)facts.drift_failed};
    return kw_memo_skey_put(k, dq, sizeof dq);
}

/* predict(): the cheap stage (kw_estimate.h) - stage 1 and a closed-form
 * queue instead of the serving simulation, plus the drift check, which is
 * exact and cached per numerics key (a few numerics keys per space, so the
 * search pays each once, evaluated or only estimated). Guards it judges:
 * infeasible, drift_cos / drift_rel_rms (as the full evaluation does, by
 * kw_eval_judge), fallback, saturated; the SLA needs the simulated tail.
 * Measured: without the drift check the screen ranked fp8/int8 neighbours
 * best (their stage 1 is 2-3x faster) and the search spent 2 of
 * validate_small_mlp's 12 evaluations at 1% of the space on drift failures. */
static int kw_model_eval_predict(void *ctx, const kw_cand *c, int shape, kw_metrics *out)
{
    const kw_model_eval *e = ctx;
    const kw_shape *s = kw_eval_shape(e, shape);
    const kw_block *b = &e->cfg->workload.blocks[s->block];
    kw_cost *svc = NULL;
    kw_mapping m;
    memset(out, 0, sizeof *out);
    int rc = kw_mapping_decode(&m, &e->cfg->space, b, c);
    if (rc == 0)
        rc = kw_eval_service(&svc, e, s, b, &m);
    if (rc == KW_EINPUT || rc == KW_EMODEL) {
        snprintf(out->guards, sizeof out->guards, "infeasible");
        for (int i = KW_M_P50_US; i <= KW_M_MEAN_US; i++)
            out->v[i] = HUGE_VAL;
        kw_error_clear();
        return 0;
    }
    if (rc != 0)
        return rc;
    kw_estimate est;
    if ((rc = kw_estimate_tail(&est, &e->cfg->accel, s, &m, svc, e->rate_per_s[shape])) == 0) {
        double *v = out->v;
        v[KW_M_P50_US] = est.p50_us;
        v[KW_M_P95_US] = est.p95_us;
        v[KW_M_P99_US] = est.p99_us;
        v[KW_M_P999_US] = est.p99_us;
        v[KW_M_MEAN_US] = est.mean_us;
        v[KW_M_QUEUE_P95_US] = est.wait_p95_us;
        v[KW_M_LATENCY_US] = svc[0].latency_us;
        v[KW_M_LAUNCH_US] = svc[0].launch_us;
        v[KW_M_LAUNCHES] = svc[0].launches;
        v[KW_M_REUSE_RATIO] = svc[0].reuse_ratio;
        v[KW_M_DRAM_MB] = svc[0].dram_bytes / 1e6;
        int fb = 0;
        for (int i = 0; i < svc[0].n_kernels; i++)
            fb += svc[0].kernels[i].fallback;
        v[KW_M_FALLBACK_PCT] = fb > 0 ? 100.0 : 0.0; /* as the simulation counts it: every batch runs the fallback */
        kw_eval_facts facts;
        memset(&facts, 0, sizeof facts);
        facts.fallback_pct = v[KW_M_FALLBACK_PCT];
        /* the drift check is exact and cached per numerics key: a precision the
         * drift guards refuse is known before its full evaluation */
        if ((rc = kw_eval_drift(e, b, s, &m, v, &facts, 0)) != 0) {
            free(svc);
            return rc;
        }
        kw_eval_judge(out, &e->cfg->space.guards, &facts); /* drift, fallback (no SLA: p99 is 0) */
        if (est.saturated)
            kw_guard_add(out, "saturated");
        snprintf(out->klass, sizeof out->klass, "%s", est.saturated ? "saturated" : "estimate");
    }
    free(svc);
    return rc;
}

int kw_eval_latencies(double **out, int *n, const kw_model_eval *e, const kw_cand *c,
                      int shape)
{
    *out = NULL;
    *n = 0;
    const kw_shape *s = kw_eval_shape(e, shape);
    const kw_block *b = &e->cfg->workload.blocks[s->block];
    kw_cost *svc = NULL;
    kw_sim_result *sim = NULL;
    kw_mapping m;
    int rc = kw_mapping_decode(&m, &e->cfg->space, b, c);
    if (rc != 0 || (rc = kw_eval_service(&svc, e, s, b, &m)) != 0)
        return rc;
    sim = calloc(1, sizeof *sim);
    if (!sim) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for the serving simulation");
        goto done;
    }
    kw_sim_input in = kw_eval_sim_input(e, shape, &m, svc);
    kw_sim_opts so = kw_eval_sim_opts(e, shape);
    so.keep_latencies = 1;
    if ((rc = kw_sim_run(sim, &in, &so)) != 0)
        goto done;
    *out = sim->lat_sorted_us; /* ownership moves to the caller */
    *n = sim->samples;
    sim->lat_sorted_us = NULL;
done:
    if (sim)
        kw_sim_result_clear(sim);
    free(sim);
    free(svc);
    return rc;
}

/* The serving simulation of c on shape at `samples` measured requests (the
 * evaluation's seed and arrivals: only the sample size is the caller's), its
 * latencies kept in arrival order (sim->lat_seq_us). 1 when c is no
 * mapping the model can serve (its evaluation is infeasible). */
static int kw_eval_seq(kw_sim_result *sim, const kw_model_eval *e, const kw_cand *c, int shape,
                       long samples)
{
    const kw_shape *s = kw_eval_shape(e, shape);
    const kw_block *b = &e->cfg->workload.blocks[s->block];
    kw_cost *svc = NULL;
    kw_mapping m;
    int rc = kw_mapping_decode(&m, &e->cfg->space, b, c);
    if (rc == 0)
        rc = kw_eval_service(&svc, e, s, b, &m);
    if (rc == KW_EINPUT || rc == KW_EMODEL) {
        kw_error_clear();
        return 1;
    }
    if (rc != 0)
        return rc;
    kw_sim_input in = kw_eval_sim_input(e, shape, &m, svc);
    kw_sim_opts so = kw_eval_sim_opts(e, shape);
    so.requests = (int)samples;
    so.warmup = so.requests / KW_SIM_WARMUP_DIV;
    so.keep_order = 1;
    rc = kw_sim_run(sim, &in, &so);
    free(svc);
    return rc;
}

/* Whether a paired comparison's simulation of one side fails a guard its sample decides
 * (kw_eval_judge on the sample's facts alone: the fallback share, the latency SLAs,
 * saturation; the drift and thermal guards are the config's, judged by its evaluation):
 * the re-rank leads with no config that fails one on the long sample (kw_paired). */
static int kw_eval_sample_fails(const kw_model_eval *e, const kw_eval_facts *f)
{
    kw_metrics m;
    kw_eval_judge(&m, &e->cfg->space.guards, f);
    return m.guards[0] != '\0';
}

/* The continuous-batching simulation of c on shape at `samples` requests
 * (the evaluation's seed, so the same requests for every mapping), its
 * latencies in arrival order into lat[0..samples) and its metrics into v.
 * 1 when c is no mapping the model can serve. */
static int kw_eval_cb_seq(double *v, double *lat, int *fails, const kw_model_eval *e,
                          const kw_cand *c, int shape, long samples)
{
    const kw_shape *s = kw_eval_shape(e, shape);
    const kw_block *b = &e->cfg->workload.blocks[s->block];
    kw_mapping m;
    double served = 1.0;
    int rc = kw_mapping_decode(&m, &e->cfg->space, b, c);
    if (rc == 0)
        rc = kw_eval_cb(v, &served, &e->cfg->accel, b, s, &m, e->rate_per_s[shape], (int)samples,
                        kw_eval_sim_opts(e, shape).seed, lat);
    if (rc == KW_EINPUT || rc == KW_EMODEL) {
        kw_error_clear();
        return 1;
    }
    if (rc == 0)
        *fails = kw_eval_sample_fails(e, &(kw_eval_facts){
                                              .fallback_pct = v[KW_M_FALLBACK_PCT],
                                              .p99_us = v[KW_M_P99_US],
                                              .simulated = 1,
                                              .saturated = served < KW_CB_SATURATED_FRACTION,
                                              .continuous = 1,
                                              .ttft_p99_us = v[KW_M_TTFT_P99_US],
                                              .tpot_p99_us = v[KW_M_TPOT_P99_US]});
    return rc;
}

/* kw_evaluator.paired on a continuous-batching shape: both mappings serve
 * the same requests (arrivals and lengths from the shape's seed), paired
 * request by request in arrival order. The sample is the whole run (the
 * evaluation keeps no warm-up here either: kw_eval_cb). */
static int kw_model_eval_paired_cb(const kw_model_eval *e, const kw_cand *a, const kw_cand *b, int shape,
                                   double p, long samples, kw_paired *out)
{
    double *lat = malloc(2 * (size_t)samples * sizeof *lat);
    double va[KW_METRIC_MAX], vb[KW_METRIC_MAX];
    if (!lat)
        return kw_error_set(KW_ENOMEM, "out of memory for %ld paired latencies", samples);
    memset(va, 0, sizeof va);
    memset(vb, 0, sizeof vb);
    int rc = kw_eval_cb_seq(va, lat, &out->a_guard, e, a, shape, samples);
    if (rc == 0)
        rc = kw_eval_cb_seq(vb, lat + samples, &out->b_guard, e, b, shape, samples);
    if (rc == 0) {
        double d;
        rc = kw_simci_paired(&d, &out->half, &out->batches, lat, lat + samples, (size_t)samples, p);
        out->a = p >= 0.99 ? va[KW_M_P99_US] : va[KW_M_P95_US];
        out->b = p >= 0.99 ? vb[KW_M_P99_US] : vb[KW_M_P95_US];
        out->samples = samples;
    }
    free(lat);
    return rc;
}

/* One side of a paired comparison, c on shape at `samples` requests, into *out (its
 * latencies a copy the caller frees): from the kept sides when the same config was
 * simulated at the same sample (the simulation is a pure function of the config, the
 * shape and the sample: the arrivals are the shape's), else simulated and kept in place
 * of the least recently used. The same figures bit for bit, and the leader that the
 * re-rank compares with each rival in turn is simulated once per sample, not once per
 * rival (stop 45: on the validation spaces that leader's repeats were ~40% of the
 * re-rank's requests). 1 when c is no mapping the model can serve. */
static int kw_eval_seq_kept(kw_eval_kept *out, kw_model_eval *e, const kw_cand *c, int shape,
                            long samples)
{
    uint64_t id = kw_knobs_cand_id(&e->cfg->space.knobs, c);
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&e->kept_mu);
    for (int i = 0; i < KW_EVAL_KEPT_SEQS; i++) {
        kw_eval_kept *k = &e->kept[i];
        if (!k->used || k->shape != shape || k->samples != samples || k->id != id)
            continue;
        *out = *k;
        out->lat = malloc((size_t)k->n * sizeof *out->lat);
        if (out->lat)
            memcpy(out->lat, k->lat, (size_t)k->n * sizeof *out->lat);
        k->used = ++e->kept_tick;
        pthread_mutex_unlock(&e->kept_mu);
        return out->lat ? 0 : kw_error_set(KW_ENOMEM, "out of memory for %d paired latencies", k->n);
    }
    pthread_mutex_unlock(&e->kept_mu);
    kw_sim_result sim;
    memset(&sim, 0, sizeof sim);
    int rc = kw_eval_seq(&sim, e, c, shape, samples);
    if (rc == 0) {
        *out = (kw_eval_kept){.shape = shape, .samples = samples, .id = id, .lat = sim.lat_seq_us,
                              .n = sim.samples, .saturated = sim.saturated, .p95_us = sim.p95_us,
                              .p99_us = sim.p99_us, .fallback_pct = sim.fallback_pct};
        sim.lat_seq_us = NULL; /* the caller's now */
    }
    kw_sim_result_clear(&sim);
    if (rc != 0)
        return rc;
    double *keep = samples <= KW_EVAL_KEPT_MAX_SAMPLES /* not kept when it fails: made again */
                       ? malloc((size_t)out->n * sizeof *keep)
                       : NULL;
    pthread_mutex_lock(&e->kept_mu);
    e->paired_requests += samples;
    if (keep) {
        kw_eval_kept *k = &e->kept[0];
        for (int i = 1; i < KW_EVAL_KEPT_SEQS; i++)
            if (e->kept[i].used < k->used)
                k = &e->kept[i];
        free(k->lat);
        *k = *out;
        k->lat = memcpy(keep, out->lat, (size_t)out->n * sizeof *keep);
        k->used = ++e->kept_tick;
    }
    pthread_mutex_unlock(&e->kept_mu);
    return 0;
}

long kw_eval_paired_requests(const kw_model_eval *e)
{
    pthread_mutex_lock((pthread_mutex_t *)&e->kept_mu);
    long n = e->paired_requests;
    pthread_mutex_unlock((pthread_mutex_t *)&e->kept_mu);
    return n;
}

/* kw_evaluator.paired: a and b simulated on the same arrivals (the seed is
 * the shape's, not the candidate's), their latencies paired request by
 * request (kw_simci_paired); a continuous-batching shape's on the same
 * requests (kw_model_eval_paired_cb). Not for a noisy model (each figure
 * carries its own seeded noise, which the pairing would not see). */
static int kw_model_eval_paired(void *ctx, const kw_cand *a, const kw_cand *b, int shape, double p,
                                long samples, kw_paired *out)
{
    kw_model_eval *e = ctx;
    if (e->cfg->space.noise_pct > 0.0 || samples <= 0 || samples > KW_SIM_MAX_REQUESTS)
        return 1;
    if (kw_eval_shape(e, shape)->continuous)
        return kw_model_eval_paired_cb(e, a, b, shape, p, samples, out);
    kw_eval_kept sim[2];
    memset(sim, 0, sizeof sim);
    int rc = kw_eval_seq_kept(&sim[0], e, a, shape, samples);
    if (rc == 0)
        rc = kw_eval_seq_kept(&sim[1], e, b, shape, samples);
    if (rc == 0 && sim[0].n != sim[1].n)
        rc = 1; /* not one request per element: nothing to pair */
    if (rc == 0) {
        double d;
        rc = kw_simci_paired(&d, &out->half, &out->batches, sim[0].lat, sim[1].lat,
                             (size_t)sim[0].n, p);
        out->a = p >= 0.99 ? sim[0].p99_us : sim[0].p95_us;
        out->b = p >= 0.99 ? sim[1].p99_us : sim[1].p95_us;
        out->samples = sim[0].n;
        for (int i = 0; i < 2; i++)
            (i ? &out->b_guard : &out->a_guard)[0] = kw_eval_sample_fails(
                e, &(kw_eval_facts){.fallback_pct = sim[i].fallback_pct, .p99_us = sim[i].p99_us,
                                    .simulated = 1, .saturated = sim[i].saturated});
    }
    free(sim[0].lat);
    free(sim[1].lat);
    return rc;
}

/* The clock check (kw_limits.h): the span a shape's simulation covers must
 * keep its shortest duration (one request's baseline service time t1_us, a
 * burst's on-period) exact to KW_SIM_CLOCK_REL_TOL. Refused as
 * "WORKLOAD:LINE: shape 'S': ..." naming the attribute to change and the value
 * that would fit, so validate, eval and tune refuse it before any run starts.
 * Spans: Poisson N / (streams x rate); bursty the same at the mean rate
 * (rate x factor x on / (on + off)) and at least one on/off cycle; a trace
 * its largest time and the span of the replays the sample needs. */
static int kw_eval_clock_check(const kw_model_eval *e, int i, const kw_shape *s, double t1_us)
{
    const kw_config *cfg = e->cfg;
    long req = e->opts.sim_requests > 0 ? e->opts.sim_requests : cfg->space.sim_requests;
    double n = (double)kw_sim_total_requests(req);
    const double max_ratio = KW_SIM_CLOCK_MAX_RATIO;
    const char *wl = cfg->space.workload_path;
    if (!(t1_us > 0))
        return 0; /* nothing to resolve: the simulator refuses a zero service time itself */
    if (e->use_trace[i]) {
        const kw_trace *t = e->use_trace[i];
        size_t rows = 0;
        double first = 0, last = 0;
        for (size_t r = 0; r < t->n; r++) {
            if (e->trace_shape[i] >= 0 && t->shape[r] != e->trace_shape[i])
                continue;
            if (rows++ == 0)
                first = t->time_us[r];
            last = t->time_us[r];
        }
        if (rows == 0)
            return 0; /* the simulator names the missing rows */
        double span = (last - first) + (rows > 1 ? (last - first) / (double)(rows - 1) : 1.0);
        double passes = ceil(n / (double)rows);
        double h = fmax(last, passes * span);
        if (h / t1_us > max_ratio)
            return kw_error_set(KW_EINPUT, "%s:%d: shape '%s': its trace %s spans %.3g us over the "
                                "%.0f simulated requests (largest time %.3g us), more than %.2g "
                                "times the %.3g us service time of one request: the simulation's "
                                "clock would lose it in rounding; trace times must stay below "
                                "%.3g us (or the sample smaller)", wl, s->line, s->name, t->path,
                                passes * span, n, last, max_ratio, t1_us, t1_us * max_ratio);
        return 0;
    }
    double rate = e->rate_per_s[i];
    if (!(rate > 0) || !isfinite(rate))
        return 0; /* the simulator names a missing rate */
    double mean_rate = rate, cycle_us = 0, on_us = INFINITY;
    if (s->arrival == KW_ARRIVAL_BURSTY) {
        on_us = s->burst_on_ms * 1e3;
        cycle_us = (s->burst_on_ms + s->burst_off_ms) * 1e3;
        mean_rate = rate * s->burst_factor * s->burst_on_ms / (s->burst_on_ms + s->burst_off_ms);
    }
    if (s->arrival == KW_ARRIVAL_BURSTY) {
        /* the simulator gives up on a stream after KW_SIM_MAX_EMPTY_CYCLES
         * on/off cycles in a row without an arrival (kw_limits.h): the mean
         * arrivals of one on-period must make that unlikely over the n
         * arrivals of the run, or a run stops half-way with exit 1 */
        double a = rate * s->burst_factor * on_us * 1e-6;
        double a_min = expm1(log(n / KW_SIM_EMPTY_RISK) / (double)KW_SIM_MAX_EMPTY_CYCLES);
        if (a < a_min)
            return kw_error_set(KW_EINPUT, "%s:%d: shape '%s': its bursts are too sparse for the "
                                "simulation: an on-period holds %.3g arrivals on average (%.3g per "
                                "s per stream x burst_factor %.3g x burst_on_ms %.3g), and the "
                                "simulation gives up after %ld on/off cycles in a row without an "
                                "arrival; it needs at least %.3g at this sample size: burst_on_ms "
                                "must be at least %.3g ms here (or burst_factor or the rate higher)",
                                wl, s->line, s->name, a, rate, s->burst_factor, s->burst_on_ms,
                                KW_SIM_MAX_EMPTY_CYCLES, a_min, s->burst_on_ms * a_min / a);
    }
    double h_us = n / ((double)s->streams * mean_rate) * 1e6;
    double d_us = fmin(t1_us, on_us);
    double span_us = fmax(h_us, cycle_us);
    if (!(span_us / d_us > max_ratio))
        return 0;
    if (on_us < t1_us)
        return kw_error_set(KW_EINPUT, "%s:%d: shape '%s': burst_on_ms %.3g is too short for the "
                            "simulation's clock: %.0f requests span %.3g us, more than %.2g times "
                            "the on-period; burst_on_ms must be at least %.3g ms here", wl, s->line,
                            s->name, s->burst_on_ms, n, span_us, max_ratio,
                            span_us / max_ratio / 1e3);
    if (cycle_us > h_us && cycle_us / d_us > max_ratio)
        return kw_error_set(KW_EINPUT, "%s:%d: shape '%s': one on/off cycle (burst_on_ms + "
                            "burst_off_ms = %.3g ms) is more than %.2g times the %.3g us the "
                            "simulation must resolve: its clock would lose the bursts in rounding; "
                            "burst_off_ms must be at most %.3g ms here", wl, s->line, s->name,
                            cycle_us / 1e3, max_ratio, d_us, d_us * max_ratio / 1e3);
    /* the span is the sample over the rate: a rate (or load) too small */
    double need = span_us / d_us / max_ratio;
    if (s->load > 0)
        return kw_error_set(KW_EINPUT, "%s:%d: shape '%s': load %.3g is too small for the "
                            "simulation's clock: %.0f requests span %.3g us, more than %.2g times "
                            "the %.3g us service time of one request, which rounding would then "
                            "distort; load must be in [%.3g, 1) at this sample size", wl, s->line,
                            s->name, s->load, n, span_us, max_ratio, t1_us, s->load * need);
    return kw_error_set(KW_EINPUT, "%s:%d: shape '%s': rate_per_s %.3g is too small for the "
                        "simulation's clock: %.0f requests span %.3g us, more than %.2g times the "
                        "%.3g us service time of one request, which rounding would then distort; "
                        "rate_per_s must be at least %.3g at this sample size", wl, s->line,
                        s->name, s->rate_per_s, n, span_us, max_ratio, t1_us, s->rate_per_s * need);
}

/* A shape's per-stream rate from its load under the baseline mapping, whose
 * modelled stage-1 times are scaled by time_factor (1: the model's; the
 * measuring evaluator passes measured / modelled). */
static int kw_eval_base_rate(kw_model_eval *e, int i, double time_factor)
{
    const kw_config *cfg = e->cfg;
    const kw_shape *s = kw_eval_shape(e, i);
    const kw_block *b = &cfg->workload.blocks[s->block];
    kw_cand base;
    kw_knobs_cand_baseline(&base, &cfg->space.knobs);
    kw_mapping m;
    kw_cost *svc = NULL;
    int rc;
    if (s->continuous) { /* its rate is the shape's own (no static service to derive it from) */
        e->rate_per_s[i] = s->rate_per_s;
        return 0;
    }
    if ((rc = kw_mapping_decode(&m, &cfg->space, b, &base)) != 0)
        return rc;
    if ((rc = kw_eval_service(&svc, e, s, b, &m)) != 0) /* at the shape's line, as the clock's */
        return kw_error_set(rc, "%s:%d: shape '%s': the baseline mapping cannot be evaluated: %s",
                            cfg->space.workload_path, s->line, s->name, kw_error_last());
    if (time_factor != 1.0)
        kw_eval_rescale(svc, m.max_batch, time_factor);
    rc = kw_sim_rate_for_load(&e->rate_per_s[i], &cfg->accel, s, &m, svc);
    if (rc == 0 && s->load > 0) { /* a rate_per_s is the user's own: taken as given */
        /* kw_sim_rate_for_load counts compute capacity with every core
         * busy; when those cores together would ask DRAM for more than it
         * delivers, the chip's real capacity is the bandwidth's. Scale the
         * rate down so `load` means utilisation of the binding resource
         * (otherwise a memory-bound baseline at load 0.6 is overloaded
         * and its tail only measures the sample size). */
        const kw_cost *full = &svc[m.max_batch - 1];
        double groups = (double)(cfg->accel.cores / m.cores_per_request);
        double compute_rps = groups * m.max_batch / (full->latency_us * 1e-6);
        double dram_rps = full->dram_bytes > 0.0 && cfg->accel.dram_bw_bytes_per_s > 0.0
                              ? cfg->accel.dram_bw_bytes_per_s * m.max_batch / full->dram_bytes
                              : compute_rps;
        if (dram_rps < compute_rps)
            e->rate_per_s[i] *= dram_rps / compute_rps;
    }
    free(svc);
    return rc;
}

/* One request of shape i alone under the baseline mapping (stage 1), in us. */
static int kw_eval_base_t1(double *t1_us, const kw_model_eval *e, int i)
{
    const kw_config *cfg = e->cfg;
    const kw_shape *s = kw_eval_shape(e, i);
    const kw_block *b = &cfg->workload.blocks[s->block];
    kw_cand base;
    kw_knobs_cand_baseline(&base, &cfg->space.knobs);
    kw_mapping m;
    kw_cost one;
    int rc;
    *t1_us = 0;
    if ((rc = kw_mapping_decode(&m, &cfg->space, b, &base)) != 0)
        return rc;
    if ((rc = kw_cost_eval(&one, &cfg->accel, b, s, &m, 1, m.cores_per_request)) != 0)
        return kw_error_set(rc, "%s:%d: shape '%s': the baseline mapping cannot be evaluated: %s",
                            cfg->space.workload_path, s->line, s->name, kw_error_last());
    *t1_us = one.latency_us;
    return 0;
}

int kw_eval_rescale_load(kw_model_eval *e, int shape, double time_factor)
{
    const kw_shape *s = kw_eval_shape(e, shape);
    if (e->use_trace[shape] || !(s->load > 0.0))
        return 0;
    if (!(time_factor > 0.0) || !isfinite(time_factor))
        return kw_error_set(KW_EINPUT, "shape '%s': time factor %g is not a positive number",
                            s->name, time_factor);
    int rc = kw_eval_base_rate(e, shape, time_factor);
    return rc != 0 ? rc : 1;
}

/* A clock refusal names the workload's shape line and ends "at this sample
 * size"; the sample size is the space's (or the command's --requests): say
 * which and where, "SPACE:LINE: final_requests 5000 (+500 warm-up)", so the
 * other way out (a smaller sample) is found without reading the source
 * (validate named only the workload's line until 2026-12-06). Returns rc. */
static int kw_eval_sample_note(const kw_model_eval *e, int rc)
{
    const kw_space *sp = &e->cfg->space;
    int req = e->opts.sim_requests > 0 ? e->opts.sim_requests : sp->sim_requests;
    const char *attr = req == sp->sim_requests     ? "sim_requests"
                       : req == sp->final_requests ? "final_requests"
                                                   : NULL;
    char msg[2048], where[KW_PATH_MAX + 64];
    snprintf(msg, sizeof msg, "%s", kw_error_last());
    if (sp->tuning_line > 0)
        snprintf(where, sizeof where, "%s:%d", sp->path, sp->tuning_line);
    else
        snprintf(where, sizeof where, "%s (no <tuning>: the default)", sp->path);
    if (attr)
        return kw_error_set(rc, "%s (the sample size: %s %s %d, +%d warm-up)", msg, where, attr,
                            req, (int)(kw_sim_total_requests(req) - req));
    return kw_error_set(rc, "%s (the sample size: --requests %d, +%d warm-up)", msg, req,
                        (int)(kw_sim_total_requests(req) - req));
}

/* Resolve each shape's arrivals: its trace (the --trace file when it names the
 * shape, else its own), and its per-stream rate from load under the baseline;
 * then check the clock can simulate it (kw_eval_clock_check). */
static int kw_model_eval_arrivals(kw_model_eval *e)
{
    const kw_config *cfg = e->cfg;
    int max_streams = 1;
    for (int i = 0; i < cfg->space.n_shapes; i++)
        if (kw_eval_shape(e, i)->streams > max_streams)
            max_streams = kw_eval_shape(e, i)->streams;
    int rc;
    const kw_model_eval *from = e->opts.borrow_from;
    if (from && from->cfg != cfg)
        return kw_error_set(KW_ESTATE, "traces borrowed from an evaluator of another configuration");
    if (from) {
        /* the same files for the same configuration: borrow, never load twice
         * (a 10^7-row trace is ~160 MB loaded) */
        e->traces_borrowed = 1;
        e->trace = from->trace;
        for (int i = 0; i < cfg->space.n_shapes; i++)
            e->shape_trace[i] = from->shape_trace[i];
    }
    if (!from && e->opts.trace_path &&
        (rc = kw_trace_load(&e->trace, e->opts.trace_path, max_streams, e->shape_names,
                            cfg->space.n_shapes)) != 0)
        return rc;
    for (int i = 0; i < cfg->space.n_shapes; i++) {
        const kw_shape *s = kw_eval_shape(e, i);
        e->trace_shape[i] = -1;
        if (e->trace && kw_trace_count(e->trace, i) > 0) {
            if (s->arrival != KW_ARRIVAL_TRACE)
                return kw_error_set(KW_EINPUT, "%s: the trace names shape '%s', whose arrivals "
                                    "are given by %s in %s:%d; --trace replays only shapes with "
                                    "arrival=\"trace\"", e->opts.trace_path, s->name,
                                    s->load > 0 ? "load=" : "rate_per_s=",
                                    cfg->space.workload_path, s->line);
            e->use_trace[i] = e->trace;
            e->trace_shape[i] = i;
        } else if (s->arrival == KW_ARRIVAL_TRACE) {
            const char *one[1] = {s->name};
            if (!from && (rc = kw_trace_load(&e->shape_trace[i], s->trace, s->streams, one, 1)) != 0)
                return rc;
            e->use_trace[i] = e->shape_trace[i];
            e->trace_shape[i] = 0;
        }
        /* the baseline's one-request time: what the clock must resolve */
        double t1_us = 0;
        if ((rc = kw_eval_base_t1(&t1_us, e, i)) != 0)
            return rc;
        if (e->use_trace[i]) {
            if ((rc = kw_eval_clock_check(e, i, s, t1_us)) != 0)
                return kw_eval_sample_note(e, rc);
            continue; /* replayed arrivals: no rate to derive */
        }
        if ((rc = kw_eval_base_rate(e, i, 1.0)) != 0)
            return rc;
        if ((rc = kw_eval_clock_check(e, i, s, t1_us)) != 0)
            return kw_eval_sample_note(e, rc);
    }
    return 0;
}

int kw_eval_new(kw_model_eval **out, const kw_config *cfg, const kw_model_opts *opts)
{
    *out = NULL;
    kw_model_eval *e = calloc(1, sizeof *e);
    if (!e)
        return kw_error_set(KW_ENOMEM, "out of memory creating the evaluator");
    e->cfg = cfg;
    pthread_mutex_init(&e->kept_mu, NULL);
    if (opts)
        e->opts = *opts;
    for (int i = 0; i < cfg->space.n_shapes; i++)
        e->shape_names[i] = cfg->workload.shapes[cfg->space.shapes[i]].name;
    int pk = kw_knobs_find(&cfg->space.knobs, "precision");
    for (int p = 0; p < KW_PREC_COUNT; p++)
        if (cfg->accel.peak_flops[p] > 0.0 &&
            (pk < 0 || kw_knobs_value(&cfg->space.knobs.knobs[pk], kw_prec_name((kw_prec)p)) >= 0))
            e->prec_mask |= 1u << p;
    int rc = 0;
    if (e->opts.borrow_from) { /* a borrow from another cfg is refused below */
        e->drift = e->opts.borrow_from->drift;
        e->drift_borrowed = 1;
    } else {
        rc = kw_drift_cache_new(&e->drift);
    }
    if (rc == 0)
        rc = kw_model_eval_arrivals(e);
    if (rc != 0) {
        kw_eval_free(e);
        return rc;
    }
    e->iface.ctx = e;
    e->iface.n_metrics = KW_M_COUNT;
    e->iface.metric_names = kw_model_metric_names;
    e->iface.n_shapes = cfg->space.n_shapes;
    e->iface.shape_names = e->shape_names;
    e->iface.noisy = cfg->space.noise_pct > 0.0;
    e->iface.eval = kw_model_eval_one;
    e->iface.predict = kw_model_eval_predict;
    e->iface.paired = kw_model_eval_paired;
    e->iface.service_key = e->iface.noisy ? NULL : kw_model_eval_key;
    *out = e;
    return 0;
}

void kw_eval_free(kw_model_eval *e)
{
    if (!e)
        return;
    if (!e->traces_borrowed) {
        kw_trace_free(e->trace);
        for (int i = 0; i < KW_SHAPE_MAX; i++)
            kw_trace_free(e->shape_trace[i]);
    }
    if (!e->drift_borrowed)
        kw_drift_cache_free(e->drift);
    for (int i = 0; i < KW_EVAL_KEPT_SEQS; i++)
        free(e->kept[i].lat);
    pthread_mutex_destroy(&e->kept_mu);
    free(e);
}

const char *kw_eval_shape_trace(const kw_model_eval *e, int shape)
{
    if (shape < 0 || shape >= e->cfg->space.n_shapes || !e->use_trace[shape] ||
        e->use_trace[shape] != e->shape_trace[shape])
        return NULL;
    return kw_eval_shape(e, shape)->trace;
}

const kw_evaluator *kw_eval_iface(const kw_model_eval *e) { return &e->iface; }
