/* test_kern.c - the worker's CPU kernels (src/worker/kw_kern.c) against their
 * fp64 references: random shapes, ragged ones included (M, N, K and sequence
 * lengths not multiples of any tile, tiles larger than the problem), every
 * value of every knob the shipped CPU spaces list, both storage precisions,
 * 1 and 2 threads. Also: a corrupted output fails the check (the check can
 * fail), results are bit-identical whatever the thread count, and cases with
 * closed forms (GELU/SiLU at known points through a 1x1x1 GEMM, attention
 * over one key returning V). No test looks at a time. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "kw_error.h"
#include "kw_kern.h"
#include "kw_pool.h"

/* The domains of spaces/cpu_gemm_epilogue.xml and spaces/cpu_attention.xml
 * plus values off the micro-tile grid (ragged tiles). */
static const int tile_ms[] = {4, 16, 32, 64, 128, 7};
static const int tile_ns[] = {32, 64, 128, 256, 40};
static const int tile_ks[] = {32, 64, 128, 256, 5};
static const int splits[] = {1, 2, 4, 3};
#define N_OF(a) ((int)(sizeof a / sizeof a[0]))

static kw_pool *pool;

static void setup(void)
{
    cr_assert_eq(kw_pool_create(&pool, 2), 0);
}

static void teardown(void)
{
    kw_pool_free(pool);
}

TestSuite(kern, .init = setup, .fini = teardown);

static int rnd(gsl_rng *r, int lo, int hi)
{
    return lo + (int)gsl_rng_uniform_int(r, (unsigned long)(hi - lo + 1));
}

static kw_ktiling random_tiling(gsl_rng *r)
{
    kw_ktiling t = {.tile_m = tile_ms[rnd(r, 0, N_OF(tile_ms) - 1)],
                    .tile_n = tile_ns[rnd(r, 0, N_OF(tile_ns) - 1)],
                    .tile_k = tile_ks[rnd(r, 0, N_OF(tile_ks) - 1)],
                    .split_k = splits[rnd(r, 0, N_OF(splits) - 1)],
                    .order = (kw_korder)rnd(r, 0, 2),
                    .dbuf = rnd(r, 0, 1)};
    return t;
}

/* Run and check one GEMM configuration; the message names it on failure. */
static void gemm_case(const kw_kgemm_shape *s, const kw_ktiling *t, int fuse, int threads)
{
    kw_kgemm *g;
    cr_assert_eq(kw_kern_gemm_create(&g, s, 7), 0, "%s", kw_error_last());
    cr_assert_eq(kw_kern_gemm_run(g, t, fuse, pool, threads), 0, "%s", kw_error_last());
    int rc = kw_kern_gemm_check(g);
    cr_expect_eq(rc, 0,
                 "gemm %dx%dx%d %s epi=%d act=%d: tiles %d/%d/%d split %d order %d dbuf %d fuse %d "
                 "threads %d: %s",
                 s->m, s->n, s->k, s->dt == KW_KDT_BF16 ? "bf16" : "fp32", s->epilogue, (int)s->act,
                 t->tile_m, t->tile_n, t->tile_k, t->split_k, (int)t->order, t->dbuf, fuse, threads,
                 kw_error_last());
    kw_kern_gemm_free(g);
}

Test(kern, gemm_every_knob_value_on_ragged_shapes)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 16);
    /* Each knob swept over its values, the others random, on a fresh ragged shape. */
    for (int knob = 0; knob < 9; knob++) {
        int nvals[] = {N_OF(tile_ms), N_OF(tile_ns), N_OF(tile_ks), N_OF(splits), 3, 2, 2, 2, 2};
        for (int v = 0; v < nvals[knob]; v++) {
            kw_kgemm_shape s = {.m = rnd(r, 1, 150), .n = rnd(r, 1, 300), .k = rnd(r, 1, 300),
                                .dt = (kw_kdt)rnd(r, 0, 1), .epilogue = rnd(r, 0, 1),
                                .act = (kw_kact)rnd(r, 0, 1)};
            kw_ktiling t = random_tiling(r);
            int fuse = rnd(r, 0, 1), threads = rnd(r, 1, 2);
            switch (knob) {
            case 0: t.tile_m = tile_ms[v]; break;
            case 1: t.tile_n = tile_ns[v]; break;
            case 2: t.tile_k = tile_ks[v]; break;
            case 3: t.split_k = splits[v]; break;
            case 4: t.order = (kw_korder)v; break;
            case 5: t.dbuf = v; break;
            case 6: fuse = v; s.epilogue = 1; break;
            case 7: s.dt = (kw_kdt)v; break;
            default: threads = v + 1; break;
            }
            gemm_case(&s, &t, fuse, threads);
        }
    }
    gsl_rng_free(r);
}

Test(kern, gemm_full_micro_tiles_and_edges)
{
    /* Multiples of the 4 x 32 micro-tile (the vector path) and one past them
     * (the scalar edge), each loop order, packed and direct, both precisions. */
    int dims[][3] = {{64, 128, 96}, {65, 129, 97}, {4, 32, 1}, {1, 1, 1}, {3, 33, 300}};
    for (int d = 0; d < 5; d++)
        for (int o = 0; o < 3; o++)
            for (int db = 0; db < 2; db++)
                for (int dt = 0; dt < 2; dt++) {
                    kw_kgemm_shape s = {.m = dims[d][0], .n = dims[d][1], .k = dims[d][2],
                                        .dt = (kw_kdt)dt, .epilogue = 1, .act = KW_ACT_GELU};
                    kw_ktiling t = {.tile_m = 32, .tile_n = 64, .tile_k = 64, .split_k = 2,
                                    .order = (kw_korder)o, .dbuf = db};
                    gemm_case(&s, &t, 1, 2);
                }
}

Test(kern, gemm_check_fails_on_a_corrupted_output)
{
    kw_kgemm_shape s = {.m = 33, .n = 70, .k = 45, .dt = KW_KDT_BF16, .epilogue = 1, .act = KW_ACT_SILU};
    kw_ktiling t = {.tile_m = 16, .tile_n = 32, .tile_k = 32, .split_k = 1, .dbuf = 1};
    kw_kgemm *g;
    cr_assert_eq(kw_kern_gemm_create(&g, &s, 3), 0);
    cr_assert_eq(kw_kern_gemm_run(g, &t, 1, pool, 1), 0);
    cr_assert_eq(kw_kern_gemm_check(g), 0, "%s", kw_error_last());
    kw_kern_gemm_corrupt(g);
    cr_assert_eq(kw_kern_gemm_check(g), KW_EMODEL);
    cr_assert(strstr(kw_error_last(), "fp64 reference") != NULL, "%s", kw_error_last());
    /* A fresh run overwrites the corruption and passes again. */
    cr_assert_eq(kw_kern_gemm_run(g, &t, 1, pool, 1), 0);
    cr_assert_eq(kw_kern_gemm_check(g), 0);
    kw_kern_gemm_free(g);
}

Test(kern, gemm_bit_identical_for_one_and_two_threads)
{
    kw_kgemm_shape s = {.m = 77, .n = 150, .k = 201, .dt = KW_KDT_F32, .epilogue = 1};
    for (int o = 0; o < 3; o++) {
        kw_ktiling t = {.tile_m = 16, .tile_n = 64, .tile_k = 32, .split_k = 3, .order = (kw_korder)o,
                        .dbuf = 1};
        kw_kgemm *a, *b;
        cr_assert_eq(kw_kern_gemm_create(&a, &s, 5), 0);
        cr_assert_eq(kw_kern_gemm_create(&b, &s, 5), 0);
        cr_assert_eq(kw_kern_gemm_run(a, &t, 1, pool, 1), 0);
        cr_assert_eq(kw_kern_gemm_run(b, &t, 1, pool, 2), 0);
        size_t na, nb;
        const void *pa = kw_kern_gemm_output(a, &na), *pb = kw_kern_gemm_output(b, &nb);
        cr_assert_eq(na, nb);
        cr_assert_eq(memcmp(pa, pb, na), 0, "order %d differs between 1 and 2 threads", o);
        kw_kern_gemm_free(a);
        kw_kern_gemm_free(b);
    }
}

/* Closed forms: a 1x1x1 GEMM is act(a b + bias); with the inputs read back
 * through the output of an epilogue-free run, GELU and SiLU at that point must
 * match their formulas (Hendrycks & Gimpel arXiv 1606.08415; SiLU x sigma(x)). */
Test(kern, gemm_epilogue_matches_the_activation_formulas)
{
    for (int act = 0; act < 2; act++) {
        kw_kgemm_shape plain = {.m = 1, .n = 1, .k = 1, .dt = KW_KDT_F32, .epilogue = 0};
        kw_kgemm_shape epi = plain;
        epi.epilogue = 1;
        epi.act = (kw_kact)act;
        kw_ktiling t = {.tile_m = 4, .tile_n = 32, .tile_k = 32, .split_k = 1};
        kw_kgemm *g0, *g1;
        cr_assert_eq(kw_kern_gemm_create(&g0, &plain, 11), 0);
        cr_assert_eq(kw_kern_gemm_create(&g1, &epi, 11), 0);
        cr_assert_eq(kw_kern_gemm_run(g0, &t, 0, pool, 1), 0);
        cr_assert_eq(kw_kern_gemm_run(g1, &t, 1, pool, 1), 0);
        size_t n;
        double ab = *(const float *)kw_kern_gemm_output(g0, &n);
        double y = *(const float *)kw_kern_gemm_output(g1, &n);
        /* Same seed, same inputs: y = act(a b + bias) with the bias drawn in
         * [-0.5, 0.5]; the activation is monotone there (|a b| <= 1), so y must
         * lie between the formula at the two ends of the bias range. */
        double lo, hi;
        if (act == KW_ACT_SILU) {
            lo = (ab - 0.5) / (1.0 + exp(-(ab - 0.5)));
            hi = (ab + 0.5) / (1.0 + exp(-(ab + 0.5)));
        } else {
            double x0 = ab - 0.5, x1 = ab + 0.5;
            lo = 0.5 * x0 * (1.0 + tanh(sqrt(2.0 / M_PI) * (x0 + 0.044715 * x0 * x0 * x0)));
            hi = 0.5 * x1 * (1.0 + tanh(sqrt(2.0 / M_PI) * (x1 + 0.044715 * x1 * x1 * x1)));
        }
        cr_expect(y >= fmin(lo, hi) - 1e-6 && y <= fmax(lo, hi) + 1e-6,
                  "act %d: y %g not in [%g, %g] for a b = %g", act, y, lo, hi, ab);
        cr_expect_eq(kw_kern_gemm_check(g1), 0, "%s", kw_error_last());
        kw_kern_gemm_free(g0);
        kw_kern_gemm_free(g1);
    }
}

static void attn_case(const kw_kattn_shape *s, const kw_ktiling *t, kw_kattn_mode mode, int threads)
{
    kw_kattn *a;
    cr_assert_eq(kw_kern_attn_create(&a, s, 9), 0, "%s", kw_error_last());
    cr_assert_eq(kw_kern_attn_run(a, t, mode, pool, threads), 0, "%s", kw_error_last());
    cr_expect_eq(kw_kern_attn_check(a), 0,
                 "attention b%d h%d/%d d%d mq%d lk%d causal %d %s mode %d tiles %d/%d/%d order %d "
                 "dbuf %d threads %d: %s",
                 s->batch, s->heads, s->kv_heads, s->head_dim, s->mq, s->lk, s->causal,
                 s->dt == KW_KDT_BF16 ? "bf16" : "fp32", (int)mode, t->tile_m, t->tile_n, t->tile_k,
                 (int)t->order, t->dbuf, threads, kw_error_last());
    kw_kern_attn_free(a);
}

Test(kern, attention_every_mode_and_knob_value_on_ragged_shapes)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    static const int heads[][2] = {{4, 4}, {4, 2}, {6, 1}};
    for (int mode = 0; mode < 3; mode++)
        for (int knob = 0; knob < 7; knob++) {
            int nvals[] = {N_OF(tile_ms), N_OF(tile_ns), 3, 2, 2, 2, 2};
            for (int v = 0; v < nvals[knob]; v++) {
                int h = rnd(r, 0, 2), decode = rnd(r, 0, 3) == 0;
                int lk = rnd(r, 1, 200);
                kw_kattn_shape s = {.batch = rnd(r, 1, 2), .heads = heads[h][0],
                                    .kv_heads = heads[h][1], .head_dim = rnd(r, 0, 1) ? 64 : rnd(r, 1, 80),
                                    .mq = decode ? 1 : lk, .lk = lk, .causal = !decode && rnd(r, 0, 1),
                                    .dt = (kw_kdt)rnd(r, 0, 1)};
                kw_ktiling t = random_tiling(r);
                t.split_k = 1;
                int threads = rnd(r, 1, 2);
                switch (knob) {
                case 0: t.tile_m = tile_ms[v]; break;
                case 1: t.tile_n = tile_ns[v]; break;
                case 2: t.order = (kw_korder)v; break;
                case 3: t.dbuf = v; break;
                case 4: s.dt = (kw_kdt)v; break;
                case 5: s.causal = v; s.mq = s.lk; break;
                default: threads = v + 1; break;
                }
                attn_case(&s, &t, (kw_kattn_mode)mode, threads);
            }
        }
    gsl_rng_free(r);
}

Test(kern, attention_over_one_key_returns_v_and_modes_agree)
{
    /* Softmax over one key is 1: O = V exactly (fp32 storage, any mode). */
    kw_kattn_shape s = {.batch = 1, .heads = 2, .kv_heads = 1, .head_dim = 48, .mq = 1, .lk = 1,
                        .dt = KW_KDT_F32};
    kw_ktiling t = {.tile_m = 16, .tile_n = 32, .tile_k = 32, .split_k = 1, .dbuf = 1};
    for (int mode = 0; mode < 3; mode++) {
        kw_kattn *a, *b;
        cr_assert_eq(kw_kern_attn_create(&a, &s, 4), 0);
        cr_assert_eq(kw_kern_attn_run(a, &t, (kw_kattn_mode)mode, pool, 1), 0);
        cr_assert_eq(kw_kern_attn_check(a), 0, "%s", kw_error_last());
        /* O of both query heads equals the one KV head's V row: the same 48 values twice. */
        size_t n;
        const float *o = kw_kern_attn_output(a, &n);
        cr_assert_eq(n, 2 * 48 * sizeof(float));
        cr_expect_eq(memcmp(o, o + 48, 48 * sizeof(float)), 0);
        /* A different seed gives different values (O is V, not a constant). */
        cr_assert_eq(kw_kern_attn_create(&b, &s, 5), 0);
        cr_assert_eq(kw_kern_attn_run(b, &t, (kw_kattn_mode)mode, pool, 1), 0);
        const float *o2 = kw_kern_attn_output(b, &n);
        cr_expect_neq(memcmp(o, o2, 48 * sizeof(float)), 0);
        kw_kern_attn_corrupt(a);
        cr_expect_eq(kw_kern_attn_check(a), KW_EMODEL);
        kw_kern_attn_free(a);
        kw_kern_attn_free(b);
    }
}

Test(kern, attention_bit_identical_for_one_and_two_threads)
{
    kw_kattn_shape s = {.batch = 2, .heads = 4, .kv_heads = 2, .head_dim = 32, .mq = 70, .lk = 70,
                        .causal = 1, .dt = KW_KDT_BF16};
    kw_ktiling t = {.tile_m = 16, .tile_n = 32, .tile_k = 32, .split_k = 1, .dbuf = 0};
    for (int mode = 0; mode < 3; mode++) {
        kw_kattn *a, *b;
        cr_assert_eq(kw_kern_attn_create(&a, &s, 8), 0);
        cr_assert_eq(kw_kern_attn_create(&b, &s, 8), 0);
        cr_assert_eq(kw_kern_attn_run(a, &t, (kw_kattn_mode)mode, pool, 1), 0);
        cr_assert_eq(kw_kern_attn_run(b, &t, (kw_kattn_mode)mode, pool, 2), 0);
        size_t na, nb;
        const void *pa = kw_kern_attn_output(a, &na), *pb = kw_kern_attn_output(b, &nb);
        cr_assert_eq(memcmp(pa, pb, na), 0, "mode %d differs between 1 and 2 threads", mode);
        kw_kern_attn_free(a);
        kw_kern_attn_free(b);
    }
}

Test(kern, bad_arguments_are_errors)
{
    kw_kgemm *g;
    kw_kgemm_shape bad = {.m = 0, .n = 4, .k = 4};
    cr_expect_eq(kw_kern_gemm_create(&g, &bad, 1), KW_EINPUT);
    kw_kgemm_shape s = {.m = 4, .n = 4, .k = 4};
    cr_assert_eq(kw_kern_gemm_create(&g, &s, 1), 0);
    kw_ktiling t = {.tile_m = 0, .tile_n = 32, .tile_k = 32, .split_k = 1};
    cr_expect_eq(kw_kern_gemm_run(g, &t, 0, pool, 1), KW_EINPUT);
    t.tile_m = 4;
    cr_expect_eq(kw_kern_gemm_run(g, &t, 0, pool, 3), KW_EINPUT); /* pool of 2 */
    kw_kern_gemm_free(g);
    kw_kattn *a;
    kw_kattn_shape as = {.batch = 1, .heads = 3, .kv_heads = 2, .head_dim = 8, .mq = 1, .lk = 4};
    cr_expect_eq(kw_kern_attn_create(&a, &as, 1), KW_EINPUT);
}

Test(kern, bf16_rounds_to_nearest_even)
{
    /* 1 + 2^-8 is halfway between bf16 neighbours 1 and 1 + 2^-7: ties go to even (1). */
    cr_expect_eq(kw_kern_to_bf16(1.0f + 1.0f / 256.0f), 0x3f80);
    cr_expect_eq(kw_kern_to_bf16(1.0f + 3.0f / 256.0f), 0x3f82); /* tie up to even */
    cr_expect_eq(kw_kern_to_bf16(-2.0f), 0xc000);
    cr_expect(kw_kern_from_bf16(0x3f80) == 1.0f);
}
