/* kw_rsynth.h - a synthetic evaluator and a miniature one-knob sweep for the
 * results tests, so they do not depend on the model or the engine.
 *
 * The synthetic model is additive with one planted interaction, so every
 * expected number has a closed form the tests compute independently:
 *   p95(shape, c) = base[shape] + sum_k contrib[shape][k][c_k]
 *                 + (fuse_attention=flash and attn.tile_m=256 ? inter[shape] : 0)
 *   p50 = 0.7 p95, p99 = 1.2 p95, p99.9 = 1.4 p95, interval p95 +- 1%.
 * Planted facts:
 *   - placement=stream_affinity makes p95 40% of the base worse (the
 *     regression audit must name);
 *   - precision=fp8_e4m3 fails the drift guard on every shape;
 *   - max_batch=8 fails the throttle guard on shape decode_c16 only, while it
 *     is the best batch on prefill_s512 (so prefill's winner is not portable);
 *   - attn.tile_m=256 with attn.tile_k=64 breaks constraint tile_too_big.
 * Header-only (static functions) so each test program stays one file.
 */
#ifndef KW_RSYNTH_H
#define KW_RSYNTH_H

#include <math.h>
#include <string.h>

#include "kw_evidence.h"
#include "kw_runsum.h"

enum { SY_TILE_M, SY_TILE_K, SY_FUSE, SY_PREC, SY_BATCH, SY_PLACE, SY_NKNOBS };
enum { SY_S0, SY_S1, SY_S2, SY_NSHAPES };

static const char *const sy_shape_names[SY_NSHAPES] = {"decode_b1", "prefill_s512",
                                                       "decode_c16"};
static const char *const sy_metric_names[] = {
    "p50_us",       "p95_us",       "p99_us",  "p999_us",    "mean_us",    "launches",
    "reuse_ratio",  "dram_mb",      "quality_cos", "quality_rel_rms", "throttle_pct",
    "fallback_pct", "samples",      "p_ci_lo_us",  "p_ci_hi_us"};
#define SY_NMETRICS ((int)(sizeof sy_metric_names / sizeof sy_metric_names[0]))
enum { SYM_P50, SYM_P95, SYM_P99, SYM_P999, SYM_MEAN, SYM_LAUNCHES, SYM_REUSE, SYM_DRAM,
       SYM_COS, SYM_RMS, SYM_THROTTLE, SYM_FALLBACK, SYM_SAMPLES, SYM_CILO, SYM_CIHI };

static const double sy_base[SY_NSHAPES] = {100.0, 400.0, 200.0};
/* contrib[shape][knob][value] in microseconds; unused values are 0 */
static const double sy_contrib[SY_NSHAPES][SY_NKNOBS][4] = {
    {{10, 0, -5, 2}, {3, 0, -2, 0}, {0, -8, -15, 0}, {20, 0, -10, 0}, {0, -2, -3, -4}, {0, -3, 40, 0}},
    {{40, 0, -30, -50}, {12, 0, -8, 0}, {0, -30, -60, 0}, {80, 0, -40, 0}, {0, -10, -20, -40},
     {0, -12, 160, 0}},
    {{10, 0, -8, -4}, {6, 0, -4, 0}, {0, -12, -20, 0}, {40, 0, -20, 0}, {0, -20, -30, -45},
     {0, -6, 80, 0}},
};
static const double sy_inter[SY_NSHAPES] = {25.0, 100.0, 50.0};

static int sy_plant_interaction = 1; /* tests may switch the interaction off */

static void sy_add_knob(kw_knobspace *ks, const char *name, const char *values, int baseline)
{
    kw_knob *k = &ks->knobs[ks->n_knobs++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", values);
    char *save = NULL;
    for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
        snprintf(k->values[k->n_values++], KW_VALUE_LEN, "%s", t);
    k->baseline = baseline;
}

static void sy_space(kw_knobspace *ks)
{
    memset(ks, 0, sizeof *ks);
    sy_add_knob(ks, "attn.tile_m", "32 64 128 256", 1);
    sy_add_knob(ks, "attn.tile_k", "16 32 64", 1);
    sy_add_knob(ks, "fuse_attention", "none qk_softmax flash", 0);
    sy_add_knob(ks, "precision", "fp32 bf16 fp8_e4m3", 1);
    sy_add_knob(ks, "max_batch", "1 2 4 8", 0);
    sy_add_knob(ks, "placement", "round_robin least_loaded stream_affinity", 0);
    kw_constraint *c = &ks->constraints[ks->n_constraints++];
    snprintf(c->name, sizeof c->name, "tile_too_big");
    c->n_terms = 2;
    c->terms[0].knob = SY_TILE_M;
    c->terms[0].mask = 1u << 3;
    c->terms[1].knob = SY_TILE_K;
    c->terms[1].mask = 1u << 2;
}

static double sy_p95(const kw_cand *c, int shape)
{
    double p = sy_base[shape];
    for (int k = 0; k < SY_NKNOBS; k++)
        p += sy_contrib[shape][k][c->v[k]];
    if (sy_plant_interaction && c->v[SY_FUSE] == 2 && c->v[SY_TILE_M] == 3)
        p += sy_inter[shape];
    return p;
}

static int sy_eval(void *ctx, const kw_cand *c, int shape, int rep, kw_metrics *out)
{
    (void)ctx;
    (void)rep;
    memset(out, 0, sizeof *out);
    if (shape < 0 || shape >= SY_NSHAPES)
        return kw_error_set(KW_EINPUT, "synthetic: no shape %d", shape);
    double p95 = sy_p95(c, shape);
    double *v = out->v;
    v[SYM_P95] = p95;
    v[SYM_P50] = 0.7 * p95;
    v[SYM_P99] = 1.2 * p95;
    v[SYM_P999] = 1.4 * p95;
    v[SYM_MEAN] = 0.75 * p95;
    v[SYM_LAUNCHES] = 12 - 3 * c->v[SY_FUSE];
    v[SYM_REUSE] = 4.0 + c->v[SY_TILE_M];
    v[SYM_DRAM] = 10.0 - c->v[SY_TILE_M];
    v[SYM_COS] = c->v[SY_PREC] == 2 ? 0.995 : 0.99995;
    v[SYM_RMS] = c->v[SY_PREC] == 2 ? 0.05 : 0.0004;
    v[SYM_THROTTLE] = (shape == SY_S2 && c->v[SY_BATCH] == 3) ? 12.0 : 0.0;
    v[SYM_FALLBACK] = 0.0;
    v[SYM_SAMPLES] = 2000;
    v[SYM_CILO] = 0.99 * p95;
    v[SYM_CIHI] = 1.01 * p95;
    char g[KW_GUARDS_LEN] = "";
    if (c->v[SY_PREC] == 2)
        snprintf(g, sizeof g, "drift");
    if (v[SYM_THROTTLE] > 5.0)
        snprintf(g + strlen(g), sizeof g - strlen(g), "%sthrottle", g[0] ? ";" : "");
    snprintf(out->guards, sizeof out->guards, "%s", g);
    snprintf(out->klass, sizeof out->klass, "%s",
             c->v[SY_FUSE] == 0 ? "launch" : (shape == SY_S1 ? "compute" : "memory"));
    return 0;
}

static kw_evaluator sy_evaluator(void)
{
    kw_evaluator e;
    memset(&e, 0, sizeof e);
    e.n_metrics = SY_NMETRICS;
    e.metric_names = sy_metric_names;
    e.n_shapes = SY_NSHAPES;
    e.shape_names = sy_shape_names;
    e.eval = sy_eval;
    return e;
}

/* A miniature sweep (the engine's rules, simplified): per knob evaluate every
 * other value from the incumbent, accept the best guard-passing one when it
 * improves p95 by at least min_effect %, then the bounded fix. Records every
 * evaluation and step in rs, numbering steps from *seq. */
static long sy_seq;

static void sy_record(kw_runsum *rs, int shape, const kw_cand *parent, const kw_cand *c,
                      kw_decision d, const char *phase, const char *reason)
{
    kw_rs_step st;
    memset(&st, 0, sizeof st);
    st.seq = ++sy_seq;
    st.parent = *parent;
    st.cand = *c;
    st.decision = d;
    st.p_value = NAN;
    snprintf(st.phase, sizeof st.phase, "%s", phase);
    snprintf(st.reason, sizeof st.reason, "%s", reason);
    kw_runsum_add_step(rs, shape, &st);
}

static int sy_eval_into(kw_runsum *rs, int shape, const kw_cand *c, kw_metrics *m)
{
    int broken = kw_knobs_cand_violates(&rs->ks, c);
    if (broken >= 0) {
        kw_runsum_add_refused(rs, shape, c, broken);
        return -1;
    }
    sy_eval(NULL, c, shape, 0, m);
    kw_runsum_add_eval(rs, shape, c, m);
    return 0;
}

static void sy_tune_shape(kw_runsum *rs, int shape, double min_effect)
{
    kw_cand inc, base;
    kw_knobs_cand_baseline(&inc, &rs->ks);
    base = inc;
    kw_metrics im, m;
    sy_eval_into(rs, shape, &inc, &im);
    for (int round = 0; round < 3; round++) {
        int moved = 0;
        for (int k = 0; k < rs->ks.n_knobs; k++) {
            kw_cand cands[KW_VALUE_MAX];
            kw_metrics ms[KW_VALUE_MAX];
            int ok[KW_VALUE_MAX], n = 0, best = -1;
            for (int v = 0; v < rs->ks.knobs[k].n_values; v++) {
                if (v == inc.v[k])
                    continue;
                cands[n] = inc;
                cands[n].v[k] = (uint8_t)v;
                ok[n] = sy_eval_into(rs, shape, &cands[n], &ms[n]) == 0;
                if (ok[n] && ms[n].guards[0] == '\0' &&
                    (best < 0 || ms[n].v[SYM_P95] < ms[best].v[SYM_P95]))
                    best = n;
                n++;
            }
            int take = best >= 0 &&
                       ms[best].v[SYM_P95] <= im.v[SYM_P95] * (1.0 - min_effect / 100.0);
            for (int i = 0; i < n; i++) {
                if (!ok[i])
                    sy_record(rs, shape, &inc, &cands[i], KW_DECIDE_CONSTRAINT, "sweep",
                              "breaks a constraint");
                else if (i == best && take)
                    sy_record(rs, shape, &inc, &cands[i], KW_DECIDE_ACCEPT, "sweep", "improves");
                else if (ms[i].guards[0])
                    sy_record(rs, shape, &inc, &cands[i], KW_DECIDE_REJECT, "sweep",
                              ms[i].guards);
                else if (ms[i].v[SYM_P95] > im.v[SYM_P95])
                    sy_record(rs, shape, &inc, &cands[i], KW_DECIDE_REJECT, "sweep",
                              "p95 worse than the incumbent");
                else
                    sy_record(rs, shape, &inc, &cands[i], KW_DECIDE_REJECT, "sweep",
                              i == best ? "below the minimum effect" : "not the best value");
            }
            if (take) {
                inc = cands[best];
                im = ms[best];
                moved = 1;
            }
        }
        if (!moved)
            break;
    }
    /* bounded fix: revert each change alone; drop it when it does not earn min_effect */
    for (int k = 0; k < rs->ks.n_knobs; k++) {
        if (inc.v[k] == base.v[k])
            continue;
        kw_cand r = inc;
        r.v[k] = base.v[k];
        if (sy_eval_into(rs, shape, &r, &m) != 0)
            continue;
        if (m.guards[0] == '\0' && m.v[SYM_P95] <= im.v[SYM_P95] * (1.0 + min_effect / 100.0)) {
            sy_record(rs, shape, &inc, &r, KW_DECIDE_REVERT, "fix", "change did not earn its place");
            inc = r;
            im = m;
        } else {
            sy_record(rs, shape, &inc, &r, KW_DECIDE_KEEP, "fix", "change kept");
        }
    }
    /* the shape-done record: the incumbent is the recommendation */
    kw_runsum_set_best(rs, shape, kw_knobs_cand_id(&rs->ks, &inc));
}

/* A finished run summary over the synthetic model; portability included. */
static kw_runsum *sy_run(void)
{
    kw_knobspace ks;
    sy_space(&ks);
    kw_runsum *rs = NULL;
    if (kw_runsum_new(&rs, &ks, SY_NMETRICS, sy_metric_names, "p95_us") != 0)
        return NULL;
    snprintf(rs->info.run_id, sizeof rs->info.run_id, "synthetic-1");
    snprintf(rs->info.space, sizeof rs->info.space, "synthetic");
    snprintf(rs->info.strategy, sizeof rs->info.strategy, "ofat");
    snprintf(rs->info.owner, sizeof rs->info.owner, "perf-team@example.com");
    snprintf(rs->info.input_hash[0], 17, "0123456789abcdef");
    snprintf(rs->info.input_hash[1], 17, "0123456789abcdef");
    snprintf(rs->info.input_hash[2], 17, "0123456789abcdef");
    rs->info.seed = 7;
    rs->info.budget = 200;
    rs->limits.min_effect_pct = 1.0;
    rs->limits.alpha = 0.05;
    rs->limits.drift_min_cos = 0.999;
    rs->limits.drift_max_rel_rms = 0.02;
    rs->limits.max_throttle_pct = 5.0;
    rs->limits.max_fallback_pct = 10.0;
    rs->limits.final_requests = 20000;
    sy_seq = 0;
    for (int s = 0; s < SY_NSHAPES; s++) {
        kw_runsum_shape(rs, sy_shape_names[s]);
        sy_tune_shape(rs, s, rs->limits.min_effect_pct);
    }
    kw_runsum_finish(rs);
    kw_evaluator ev = sy_evaluator();
    kw_evidence_portability(rs, &ev, NULL);
    return rs;
}

#endif
