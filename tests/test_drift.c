/* test_drift.c - stage 4: the accumulation emulation against its error bounds,
 * the ordering of formats on hand-built 7B blocks, fp32 at round-off level,
 * fallback, and the cache.
 *
 * Closed forms used (src/model-facts.md#precision): recursive summation of K
 * products in a format with unit roundoff u errs by at most
 * gamma_K * sum|x_i y_i|, gamma_K = K u / (1 - K u) (Higham, Accuracy and
 * Stability, 2nd ed., eq. 3.5); for random data its typical size grows like
 * sqrt(K) u (Higham & Mary 2019; Ipsen & Zhou arXiv 1906.10465).
 * The blocks are built here (Llama-2-7B figures from src/model-facts.md#shapes),
 * not read from the shipped XML.
 */
#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "kw_drift.h"
#include "kw_error.h"
#include "kw_numfmt.h"

static void setup(void)
{
    gsl_set_error_handler_off();
}

TestSuite(drift, .init = setup);

static kw_op *tb_op(kw_block *b, const char *name, kw_op_kind kind, const char *group)
{
    kw_op *op = &b->ops[b->n_ops++];
    memset(op, 0, sizeof *op);
    snprintf(op->name, sizeof op->name, "%s", name);
    op->kind = kind;
    snprintf(op->group, sizeof op->group, "%s", group);
    if (group[0]) {
        int found = 0;
        for (int g = 0; g < b->n_groups; g++)
            found |= strcmp(b->groups[g], group) == 0;
        if (!found)
            snprintf(b->groups[b->n_groups++], KW_NAME_MAX, "%s", group);
    }
    return op;
}
static void tb_attention_7b(kw_block *b)
{
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "llama7b_attention");
    tb_op(b, "attn_norm", KW_OP_NORM, "")->width = 4096;
    const char *qkv[] = {"q_proj", "k_proj", "v_proj"};
    for (int i = 0; i < 3; i++) {
        kw_op *op = tb_op(b, qkv[i], KW_OP_GEMM, "qkv");
        op->n = 4096; op->k = 4096; op->weights = 1;
        snprintf(op->merge, sizeof op->merge, "qkv");
    }
    kw_op *a = tb_op(b, "attention", KW_OP_ATTENTION, "attn");
    a->heads = 32; a->kv_heads = 32; a->head_dim = 128; a->causal = 1;
    kw_op *o = tb_op(b, "o_proj", KW_OP_GEMM, "o");
    o->n = 4096; o->k = 4096; o->weights = 1;
    tb_op(b, "residual", KW_OP_RESIDUAL, "")->width = 4096;
}
static void tb_mlp_7b(kw_block *b)
{
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "llama7b_mlp");
    tb_op(b, "mlp_norm", KW_OP_NORM, "")->width = 4096;
    const char *gu[] = {"gate_proj", "up_proj"};
    for (int i = 0; i < 2; i++) {
        kw_op *op = tb_op(b, gu[i], KW_OP_GEMM, "gate_up");
        op->n = 11008; op->k = 4096; op->weights = 1;
        snprintf(op->merge, sizeof op->merge, "gate_up");
    }
    tb_op(b, "silu_mul", KW_OP_ACT, "")->width = 11008;
    kw_op *d = tb_op(b, "down_proj", KW_OP_GEMM, "down");
    d->n = 4096; d->k = 11008; d->weights = 1;
    tb_op(b, "residual", KW_OP_RESIDUAL, "")->width = 4096;
}
static void tb_mapping(kw_mapping *m, const kw_block *b, kw_prec p)
{
    memset(m, 0, sizeof *m);
    m->n_groups = b->n_groups;
    for (int g = 0; g < KW_GROUP_MAX; g++) {
        m->tiling[g].tile_m = 128; m->tiling[g].tile_n = 128; m->tiling[g].tile_k = 32;
        m->tiling[g].split_k = 1; m->tiling[g].double_buffer = 1;
    }
    m->precision = p;
    m->accum_precision = KW_PREC_FP32;
    m->softmax_precision = KW_PREC_FP32;
    m->fuse_attention = KW_ATTN_NONE;
    m->max_batch = 1; m->cores_per_request = 1;
}
static void tb_shape(kw_shape *s, kw_phase ph, int seq, int kv)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "s");
    s->phase = ph; s->batch = 1; s->seq = seq; s->kv_len = kv; s->streams = 1;
}

/* ---------------- accumulation ---------------- */

static double exact_dot(const double *x, const double *y, int k, double *abs_sum, double *l2)
{
    long double s = 0.0L;
    double a = 0.0, q = 0.0;
    for (int i = 0; i < k; i++) {
        s += (long double)x[i] * y[i];
        a += fabs(x[i] * y[i]);
        q += x[i] * y[i] * x[i] * y[i];
    }
    *abs_sum = a;
    *l2 = sqrt(q);
    return (double)s;
}

static void draw_fp16(gsl_rng *r, double *v, int k)
{
    for (int i = 0; i < k; i++)
        v[i] = kw_numfmt_round_d(KW_PREC_FP16, gsl_ran_gaussian_ziggurat(r, 1.0));
}

/* The data generator draws N(0,1): Kolmogorov-Smirnov distance to the normal
 * CDF below the 0.1% critical value 1.95/sqrt(n) (Stephens 1974's asymptotic
 * table), the tail beyond the ziggurat's R = 3.4426 (drawn by its own
 * algorithm) with probability 2 Phi(-R) and the variance (standard error
 * sqrt(2/n)) within 5 standard deviations, lag-1
 * correlation within 5/sqrt(n) of zero; the same seed gives the same draws, a
 * different seed different ones. */
Test(drift, gaussians_are_standard_normal)
{
    enum { N = 1 << 20 };
    static float z[N], z2[N];
    static double v[N];
    cr_assert_eq(kw_drift_gaussians(z, N, 5), 0);
    double tail = 0, lag = 0, ss = 0;
    for (int i = 0; i < N; i++) {
        v[i] = z[i];
        tail += fabs(v[i]) > 3.442619855899;
        ss += v[i] * v[i];
        if (i > 0)
            lag += v[i] * v[i - 1];
    }
    gsl_sort(v, 1, N);
    double d = 0;
    for (int i = 0; i < N; i++) {
        double f = gsl_cdf_ugaussian_P(v[i]);
        double lo = f - (double)i / N, hi = (double)(i + 1) / N - f;
        d = fmax(d, fmax(lo, hi));
    }
    cr_assert_lt(d, 1.95 / sqrt((double)N), "KS distance %g", d);
    double p_tail = 2.0 * gsl_cdf_ugaussian_Q(3.442619855899);
    cr_assert_lt(fabs(tail - N * p_tail), 5.0 * sqrt(N * p_tail), "tail count %g, expected %g",
                 tail, N * p_tail);
    cr_assert_lt(fabs(ss / N - 1.0), 5.0 * sqrt(2.0 / N), "variance %g", ss / N); /* Var(s^2) = 2/n */
    cr_assert_lt(fabs(lag / ss), 5.0 / sqrt((double)N), "lag-1 correlation %g", lag / ss);
    cr_assert_eq(kw_drift_gaussians(z2, N, 5), 0);
    cr_assert_eq(memcmp(z, z2, sizeof z), 0, "same seed, same draws");
    cr_assert_eq(kw_drift_gaussians(z2, 16, 6), 0);
    cr_assert_neq(memcmp(z, z2, 16 * sizeof *z), 0, "another seed, other draws");
}

/* The emulation sums many columns at once in vector kernels (16 for the GEMM
 * sample, 128 or 256 in attention): they must give bit for bit what the
 * one-column kernel (checked against gamma_K above and below) gives, also
 * where rounding leaves the fast path: fp16 sums in the subnormal range,
 * overflow to inf, NaN, bf16 subnormals, zeros. */
Test(drift, wide_kernels_match_single_dots)
{
    enum { K = 300, NCMAX = 128 };
    static double x[K], w[K * NCMAX], col[K], out[NCMAX];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    const kw_prec accs[] = {KW_PREC_FP32, KW_PREC_BF16, KW_PREC_FP16};
    const int tiles[][2] = {{1 << 20, 1}, {32, 1}, {16, 4}, {7, 3}};
    const int ncs[] = {16, 128, 12};
    /* column scales: ordinary, fp16-subnormal sums, fp16 overflow, and bf16
     * subnormals in the last trials (they send a whole bf16 row to the scalar
     * path, which would hide a wrong vector result in the others) */
    for (size_t c = 0; c < sizeof ncs / sizeof ncs[0]; c++)
        for (int trial = 0; trial < 8; trial++) {
            const int NC = ncs[c];
            for (int i = 0; i < K; i++)
                x[i] = kw_numfmt_round_d(KW_PREC_FP16, gsl_ran_gaussian_ziggurat(r, 1.0));
            for (int i = 0; i < K * NC; i++) {
                const double scale[] = {1.0, 1e-4, 1e4, trial >= 6 ? 1e-39 : 1.0};
                double v = gsl_ran_gaussian_ziggurat(r, scale[(i % NC) % 4]);
                w[i] = (i / NC) % 4 == 0 && (i % NC) >= 12 ? 0.0 : v; /* some zeros */
            }
            if (trial == 3)
                w[5 * NC + 7] = NAN;
            if (trial == 4)
                for (int i = 0; i < K; i += 3)
                    w[i * NC + 6] = 3e38; /* past bf16's and fp32's largest value */
            if (trial == 5)
                x[9] = INFINITY;
            for (size_t a = 0; a < 3; a++)
                for (size_t t = 0; t < 4; t++) {
                    cr_assert_eq(kw_drift_dot_cols(out, x, w, K, (size_t)NC, accs[a], tiles[t][0],
                                                   tiles[t][1]), 0);
                    for (int j = 0; j < NC; j++) {
                        for (int i = 0; i < K; i++)
                            col[i] = w[i * NC + j];
                        double want = kw_drift_dot(x, col, K, accs[a], tiles[t][0], tiles[t][1]);
                        cr_assert(memcmp(&want, &out[j], sizeof want) == 0 ||
                                      (isnan(want) && isnan(out[j])),
                                  "%s %d columns, tile %d split %d trial %d column %d: %a, one column %a",
                                  kw_prec_name(accs[a]), NC, tiles[t][0], tiles[t][1], trial, j,
                                  out[j], want);
                    }
                }
        }
    cr_assert_eq(kw_drift_dot_cols(out, x, w, K, 0, KW_PREC_FP32, 32, 1), KW_EINPUT);
    cr_assert_eq(kw_drift_dot_cols(out, x, w, K, 257, KW_PREC_FP32, 32, 1), KW_EINPUT);
    gsl_rng_free(r);
}

/* |fl(x.y) - x.y| <= gamma_K sum|x_i y_i| wherever K u < 1, for every chunking. */
Test(drift, dot_never_exceeds_gamma_bound)
{
    static double x[2048], y[2048];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    const kw_prec accs[] = {KW_PREC_FP16, KW_PREC_BF16, KW_PREC_FP32};
    const int ks[] = {16, 64, 128, 256, 1024, 2000};
    const int tiles[][2] = {{1 << 20, 1}, {32, 1}, {16, 4}, {7, 3}};
    for (size_t a = 0; a < 3; a++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            int k = ks[ki];
            double u = kw_numfmt_unit_roundoff(accs[a]);
            if (k * u >= 1.0)
                continue; /* the bound is vacuous */
            double gamma = k * u / (1.0 - k * u);
            for (int seed = 0; seed < 20; seed++)
                for (size_t t = 0; t < 4; t++) {
                    draw_fp16(r, x, k);
                    draw_fp16(r, y, k);
                    double abs_sum, l2;
                    double ex = exact_dot(x, y, k, &abs_sum, &l2);
                    double got = kw_drift_dot(x, y, (size_t)k, accs[a], tiles[t][0], tiles[t][1]);
                    cr_assert_leq(fabs(got - ex), gamma * abs_sum, "%s K=%d tile %d split %d",
                                  kw_prec_name(accs[a]), k, tiles[t][0], tiles[t][1]);
                }
        }
    gsl_rng_free(r);
}

/* Recursive fp16 summation of random products: the error relative to the
 * result's scale ||x o y||_2 grows like sqrt(K) u. Fit log(mean error) against
 * log K over K = 64..16384 (32 seeds each): slope 0.5 within 0.1, and the
 * constant of order one. */
Test(drift, dot_typical_error_grows_like_sqrt_k)
{
    static double x[16384], y[16384];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2024);
    double lk[9], le[9];
    const double u = kw_numfmt_unit_roundoff(KW_PREC_FP16);
    int n = 0;
    for (int k = 64; k <= 16384; k *= 2, n++) {
        double sum = 0.0;
        const int seeds = 32;
        for (int sd = 0; sd < seeds; sd++) {
            draw_fp16(r, x, k);
            draw_fp16(r, y, k);
            double abs_sum, l2;
            double ex = exact_dot(x, y, k, &abs_sum, &l2);
            double got = kw_drift_dot(x, y, (size_t)k, KW_PREC_FP16, k, 1);
            sum += fabs(got - ex) / l2;
        }
        double mean = sum / seeds;
        double c = mean / (sqrt((double)k) * u);
        cr_assert(c > 0.05 && c < 2.0, "K=%d: error %.3g is %.3g sqrt(K) u", k, mean, c);
        lk[n] = log((double)k);
        le[n] = log(mean);
    }
    double c0, c1, cov00, cov01, cov11, sumsq;
    cr_assert_eq(gsl_fit_linear(lk, 1, le, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq), 0);
    cr_log_info("fp16 recursive summation: log-log slope %.3f, error at K=16384 %.2f sqrt(K) u",
                c1, exp(le[n - 1]) / (sqrt(16384.0) * u));
    cr_assert(fabs(c1 - 0.5) < 0.1, "slope %.3f", c1);
    gsl_rng_free(r);
}

/* Blocked summation (tile_k chunks) beats recursive summation on average
 * (Higham section 4.2: error bound (K/b + b) u instead of K u). */
Test(drift, tile_k_chunks_reduce_the_error)
{
    static double x[4096], y[4096];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    double rec = 0.0, blk = 0.0;
    for (int sd = 0; sd < 16; sd++) {
        draw_fp16(r, x, 4096);
        draw_fp16(r, y, 4096);
        double a, l2, ex = exact_dot(x, y, 4096, &a, &l2);
        rec += fabs(kw_drift_dot(x, y, 4096, KW_PREC_FP16, 4096, 1) - ex);
        blk += fabs(kw_drift_dot(x, y, 4096, KW_PREC_FP16, 64, 1) - ex);
    }
    cr_assert_lt(blk, rec);
    gsl_rng_free(r);
}

/* ---------------- blocks ---------------- */

static const kw_guards default_guards = {.drift_min_cos = 0.999, .drift_max_rel_rms = 0.02};

static kw_drift eval_ok(const kw_block *b, const kw_shape *s, const kw_mapping *m)
{
    kw_drift d;
    int rc = kw_drift_eval(&d, b, s, m, &default_guards, 42);
    cr_assert_eq(rc, 0, "%s", kw_error_last());
    return d;
}

static void check_ordering(const kw_block *b, const kw_shape *s, kw_attn_fusion f)
{
    const kw_prec order[] = {KW_PREC_FP32, KW_PREC_FP16, KW_PREC_BF16, KW_PREC_FP8_E4M3,
                             KW_PREC_FP8_E5M2};
    double prev = -1.0;
    for (int i = 0; i < 5; i++) {
        kw_mapping m;
        tb_mapping(&m, b, order[i]);
        m.fuse_attention = f;
        kw_drift d = eval_ok(b, s, &m);
        cr_assert(d.rel_rms > prev, "%s: %s rel %.3g not above %.3g", b->name,
                  kw_prec_name(order[i]), d.rel_rms, prev);
        /* input rounding alone bounds the order of magnitude: a few u */
        if (order[i] != KW_PREC_FP32)
            cr_assert(d.rel_rms < 8.0 * kw_numfmt_unit_roundoff(order[i]), "%s %s rel %.3g",
                      b->name, kw_prec_name(order[i]), d.rel_rms);
        prev = d.rel_rms;
    }
}

Test(drift, ordering_on_7b_attention_block)
{
    kw_block b;
    kw_shape s;
    tb_attention_7b(&b);
    tb_shape(&s, KW_PHASE_PREFILL, 2048, 0);
    check_ordering(&b, &s, KW_ATTN_NONE);
    check_ordering(&b, &s, KW_ATTN_FLASH);
}

Test(drift, ordering_on_7b_gated_mlp_block)
{
    kw_block b;
    kw_shape s;
    tb_mlp_7b(&b);
    tb_shape(&s, KW_PHASE_PREFILL, 512, 0);
    check_ordering(&b, &s, KW_ATTN_NONE);
}

/* An fp32 candidate is still emulated, and its error is fp32 round-off: above
 * zero, below 4 sqrt(K_max) u_fp32 (the typical dot-product error of the
 * longest accumulation, K = 11008 in the MLP). */
Test(drift, fp32_candidate_at_round_off_level)
{
    kw_block blocks[2];
    tb_attention_7b(&blocks[0]);
    tb_mlp_7b(&blocks[1]);
    kw_shape s;
    tb_shape(&s, KW_PHASE_PREFILL, 8192, 0);
    const double u = kw_numfmt_unit_roundoff(KW_PREC_FP32);
    for (int i = 0; i < 2; i++)
        for (int f = KW_ATTN_NONE; f <= KW_ATTN_FLASH; f++) {
            kw_mapping m;
            tb_mapping(&m, &blocks[i], KW_PREC_FP32);
            m.fuse_attention = (kw_attn_fusion)f;
            kw_drift d = eval_ok(&blocks[i], &s, &m);
            cr_assert(d.rel_rms > u / 4.0, "%s: rel %.3g: not emulated?", blocks[i].name, d.rel_rms);
            cr_assert(d.rel_rms < 4.0 * sqrt(11008.0) * u, "%s: rel %.3g", blocks[i].name,
                      d.rel_rms);
            cr_assert(d.cos > 1.0 - 1e-9);
            cr_assert(d.pass);
            cr_assert_eq(d.samples, d.rows * d.cols);
            cr_assert_geq(d.samples, 64);
        }
}

/* A failing candidate gets a fallback that passes; every cheaper precision in
 * the walk fails; only precision knobs differ from the candidate. */
Test(drift, failing_candidate_gets_a_passing_fallback)
{
    kw_block b;
    kw_shape s;
    tb_attention_7b(&b);
    tb_shape(&s, KW_PHASE_PREFILL, 4096, 0);
    kw_mapping m, fb;
    tb_mapping(&m, &b, KW_PREC_FP8_E4M3);
    m.tiling[0].tile_k = 64;
    m.max_batch = 8;
    kw_drift d = eval_ok(&b, &s, &m), ev;
    cr_assert(!d.pass);
    cr_assert(strstr(d.fail, "quality_") != NULL, "%s", d.fail);
    kw_drift_cache *c;
    cr_assert_eq(kw_drift_cache_new(&c), 0);
    cr_assert_eq(kw_drift_fallback(&fb, &ev, c, &b, &s, &m, &default_guards, 42, 0), 0, "%s",
                 kw_error_last());
    cr_assert(ev.pass);
    cr_assert_leq(ev.rel_rms, default_guards.drift_max_rel_rms);
    cr_assert_geq(ev.cos, default_guards.drift_min_cos);
    kw_drift again = eval_ok(&b, &s, &fb);
    cr_assert(again.pass && again.rel_rms == ev.rel_rms, "evidence is the fallback's own figure");
    kw_mapping rest = fb;
    rest.precision = m.precision;
    rest.accum_precision = m.accum_precision;
    rest.softmax_precision = m.softmax_precision;
    cr_assert(memcmp(&rest, &m, sizeof m) == 0, "only precision knobs change");
    const kw_prec walk[] = {KW_PREC_INT8, KW_PREC_FP8_E5M2, KW_PREC_FP8_E4M3, KW_PREC_BF16,
                            KW_PREC_FP16, KW_PREC_FP32};
    for (int i = 0; i < 6 && walk[i] != fb.precision; i++) {
        kw_mapping t = m;
        t.precision = walk[i];
        cr_assert(!eval_ok(&b, &s, &t).pass, "%s passes but was skipped", kw_prec_name(walk[i]));
    }
    /* a candidate that passes is its own fallback */
    kw_mapping ok;
    tb_mapping(&ok, &b, KW_PREC_BF16);
    cr_assert_eq(kw_drift_fallback(&fb, &ev, c, &b, &s, &ok, &default_guards, 42, 0), 0);
    cr_assert(memcmp(&fb, &ok, sizeof ok) == 0 && ev.pass);
    /* nothing allowed passes: KW_EMODEL, best effort reported */
    unsigned only_fp8 = (1u << KW_PREC_FP8_E4M3) | (1u << KW_PREC_FP8_E5M2);
    cr_assert_eq(kw_drift_fallback(&fb, &ev, c, &b, &s, &m, &default_guards, 42, only_fp8),
                 KW_EMODEL);
    cr_assert(strstr(kw_error_last(), "no precision setting") != NULL);
    kw_drift_cache_free(c);
}

/* 2:4 pruning of dense weights is measured like a precision change: it fails
 * the budget, and the fallback turns sparsity off. */
Test(drift, sparsity_2_4_is_measured_and_falls_back_to_dense)
{
    kw_block b;
    kw_shape s;
    tb_mlp_7b(&b);
    tb_shape(&s, KW_PHASE_PREFILL, 512, 0);
    kw_mapping m, fb;
    tb_mapping(&m, &b, KW_PREC_BF16);
    kw_drift dense = eval_ok(&b, &s, &m);
    m.sparsity_2_4 = 1;
    kw_drift sparse = eval_ok(&b, &s, &m), ev;
    cr_assert(dense.pass && !sparse.pass);
    cr_assert_gt(sparse.rel_rms, 10.0 * dense.rel_rms);
    cr_assert_eq(kw_drift_fallback(&fb, &ev, NULL, &b, &s, &m, NULL, 42, 0), 0, "%s",
                 kw_error_last());
    cr_assert_eq(fb.sparsity_2_4, 0);
    cr_assert(ev.pass);
}

/* The cache answers exactly what a fresh evaluation answers, counts hits, and
 * keys only on knobs that affect numerics. A tape drawn for one candidate and
 * replayed for another gives bit-identical figures to a fresh draw. */
Test(drift, cache_returns_identical_results)
{
    kw_block b;
    kw_shape s;
    tb_attention_7b(&b);
    tb_shape(&s, KW_PHASE_PREFILL, 1024, 0);
    kw_drift_cache *c;
    cr_assert_eq(kw_drift_cache_new(&c), 0);
    const kw_prec ps[] = {KW_PREC_BF16, KW_PREC_FP8_E4M3, KW_PREC_FP16, KW_PREC_INT8};
    for (int i = 0; i < 4; i++)
        for (int f = 0; f < 3; f++) {
            kw_mapping m;
            tb_mapping(&m, &b, ps[i]);
            m.fuse_attention = (kw_attn_fusion)f;
            m.tiling[1].tile_n = 64;
            kw_drift fresh = eval_ok(&b, &s, &m), got;
            cr_assert_eq(kw_drift_cache_get(&got, c, &b, &s, &m, &default_guards, 42), 0, "%s",
                         kw_error_last());
            cr_assert(memcmp(&fresh, &got, sizeof got) == 0, "%s fusion %d", kw_prec_name(ps[i]), f);
            cr_assert_eq(kw_drift_cache_get(&got, c, &b, &s, &m, &default_guards, 42), 0);
            cr_assert(memcmp(&fresh, &got, sizeof got) == 0);
        }
    uint64_t hits, misses;
    kw_drift_cache_stats(c, &hits, &misses);
    cr_assert_eq(misses, 12);
    cr_assert_eq(hits, 12);
    /* a knob without numerical effect hits; one with an effect misses */
    kw_mapping m, m2;
    tb_mapping(&m, &b, KW_PREC_BF16);
    m2 = m;
    m2.max_batch = 16;
    m2.graph_mode = 1;
    m2.tiling[0].tile_m = 64;
    kw_drift d1, d2;
    cr_assert_eq(kw_drift_cache_get(&d1, c, &b, &s, &m2, NULL, 42), 0);
    kw_drift_cache_stats(c, &hits, &misses);
    cr_assert_eq(misses, 12);
    m2.tiling[0].tile_k = 128;
    cr_assert_eq(kw_drift_cache_get(&d2, c, &b, &s, &m2, NULL, 42), 0);
    kw_drift_cache_stats(c, &hits, &misses);
    cr_assert_eq(misses, 13);
    /* guards are re-judged on a hit */
    kw_guards strict = {.drift_min_cos = 0.999, .drift_max_rel_rms = d1.rel_rms / 2.0};
    cr_assert_eq(kw_drift_cache_get(&d2, c, &b, &s, &m, &strict, 42), 0);
    cr_assert(d1.pass && !d2.pass && d2.rel_rms == d1.rel_rms);
    kw_drift_cache_free(c);
    kw_drift_cache_free(NULL);
}

typedef struct worker {
    kw_drift_cache *c;
    const kw_block *b;
    const kw_shape *s;
    int first;
    kw_drift out[6];
} worker;

static void *run_worker(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < 6; i++) {
        kw_mapping m;
        tb_mapping(&m, w->b, (kw_prec)((w->first + i) % KW_PREC_COUNT));
        if (kw_drift_cache_get(&w->out[(w->first + i) % 6], w->c, w->b, w->s, &m, NULL, 7) != 0)
            return arg;
    }
    return NULL;
}

Test(drift, cache_is_thread_safe)
{
    kw_block b;
    kw_shape s;
    tb_mlp_7b(&b);
    tb_shape(&s, KW_PHASE_DECODE, 1, 300);
    kw_drift_cache *c;
    cr_assert_eq(kw_drift_cache_new(&c), 0);
    static worker w[2];
    for (int i = 0; i < 2; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].c = c;
        w[i].b = &b;
        w[i].s = &s;
        w[i].first = 3 * i;
    }
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, run_worker, &w[i]), 0);
    for (int i = 0; i < 2; i++) {
        void *res;
        pthread_join(t[i], &res);
        cr_assert_null(res);
    }
    for (int p = 0; p < 6; p++) {
        kw_mapping m;
        tb_mapping(&m, &b, (kw_prec)p);
        kw_drift d;
        cr_assert_eq(kw_drift_eval(&d, &b, &s, &m, NULL, 7), 0);
        cr_assert(memcmp(&d, &w[0].out[p], sizeof d) == 0 && memcmp(&d, &w[1].out[p], sizeof d) == 0);
    }
    kw_drift_cache_free(c);
}

/* The gated MLP's tape (about half a million draws, requests of up to
 * 11008 x 16 values) spans several of the tape's segments, and each GEMM gives
 * its weight scratch back to the arena for the next: replaying the tape for
 * candidates that take every GEMM kernel (float lanes for bf16/fp8, the double
 * lanes for fp16 accumulation, exact int8 sums, fp32 operands), with split-K
 * and 2:4 sparsity, gives bit-identical figures to a fresh draw, on a cache
 * and in a thread whose arena earlier checks already used. */
Test(drift, replayed_mlp_tape_matches_fresh_draws)
{
    kw_drift_cache *c = NULL;
    cr_assert_eq(kw_drift_cache_new(&c), 0);
    kw_block b;
    tb_mlp_7b(&b);
    kw_shape s;
    tb_shape(&s, KW_PHASE_PREFILL, 512, 0);
    const kw_prec ps[] = {KW_PREC_BF16, KW_PREC_FP8_E4M3, KW_PREC_FP16, KW_PREC_INT8, KW_PREC_FP32};
    for (int i = 0; i < 5; i++)
        for (int v = 0; v < 3; v++) {
            kw_mapping m;
            tb_mapping(&m, &b, ps[i]);
            if (v == 1) {
                m.tiling[1].split_k = 4;
                m.accum_precision = KW_PREC_FP16;
            }
            m.sparsity_2_4 = v == 2;
            kw_drift got, fresh;
            cr_assert_eq(kw_drift_cache_get(&got, c, &b, &s, &m, &default_guards, 42), 0, "%s",
                         kw_error_last());
            fresh = eval_ok(&b, &s, &m);
            cr_assert(memcmp(&fresh, &got, sizeof got) == 0, "%s variant %d", kw_prec_name(ps[i]), v);
        }
    uint64_t hits, misses;
    kw_drift_cache_stats(c, &hits, &misses);
    cr_assert_eq(misses, 15);
    kw_drift_cache_free(c);
}

Test(drift, decode_shape_caps_the_context)
{
    kw_block b;
    kw_shape s;
    tb_attention_7b(&b);
    tb_shape(&s, KW_PHASE_DECODE, 1, 100);
    kw_mapping m;
    tb_mapping(&m, &b, KW_PREC_BF16);
    cr_assert_eq(eval_ok(&b, &s, &m).ctx, 101);
    s.kv_len = 8191;
    cr_assert_eq(eval_ok(&b, &s, &m).ctx, 256);
}

Test(drift, bad_input_is_refused_with_a_message)
{
    kw_block b;
    kw_shape s;
    kw_mapping m;
    kw_drift d;
    tb_attention_7b(&b);
    tb_shape(&s, KW_PHASE_PREFILL, 128, 0);
    tb_mapping(&m, &b, KW_PREC_BF16);
    m.accum_precision = KW_PREC_FP8_E4M3;
    cr_assert_eq(kw_drift_eval(&d, &b, &s, &m, NULL, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "accum_precision") != NULL);
    tb_mapping(&m, &b, KW_PREC_BF16);
    m.softmax_precision = KW_PREC_INT8;
    cr_assert_eq(kw_drift_eval(&d, &b, &s, &m, NULL, 1), KW_EINPUT);
    m.softmax_precision = KW_PREC_FP32;
    b.ops[4].head_dim = 0;
    cr_assert_eq(kw_drift_eval(&d, &b, &s, &m, NULL, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "head_dim") != NULL);
    tb_attention_7b(&b);
    b.ops[1].k = 0;
    cr_assert_eq(kw_drift_eval(&d, &b, &s, &m, NULL, 1), KW_EINPUT);
    b.n_ops = 0;
    cr_assert_eq(kw_drift_eval(&d, &b, &s, &m, NULL, 1), KW_EINPUT);
    cr_assert_eq(kw_drift_eval(NULL, &b, &s, &m, NULL, 1), KW_ESTATE);
}
