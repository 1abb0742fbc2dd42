/* test_cost.c - stage 1 cost model against closed forms and published bounds.
 *
 * Every expectation is computed here from the formula it validates
 * (src/model-facts.md#gemm-traffic, FlashAttention Theorem 2, the roofline, the
 * accelerator's own launch figures), never copied from the model's output.
 * Accelerators, blocks, shapes and mappings are built by hand so the tests
 * do not depend on shipped XML files.
 */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "kw_cost.h"
#include "kw_error.h"
#include "lib/kw_tl_model.h"

static kw_accel acc;
static kw_block blk;
static kw_shape shp;
static kw_mapping map;
static kw_cost cost;

/* Round figures so closed forms stay readable (kw_tl_round_chip: 4 cores x
 * 8 units, 16^3 array, 256 KiB SRAM per unit, 1 TB/s, 64 B bursts, no
 * first-byte latency), with every precision, 2:4 sparsity and launch costs. */
static void setup(void)
{
    kw_tl_round_chip(&acc, "testchip");
    acc.peak_flops[KW_PREC_FP16] = 100e12;
    acc.peak_flops[KW_PREC_FP8_E4M3] = 200e12;
    acc.peak_flops[KW_PREC_FP8_E5M2] = 200e12;
    acc.peak_flops[KW_PREC_INT8] = 200e12;
    acc.sparsity_2_4 = 1;
    kw_tl_chip_launches(&acc);

    memset(&blk, 0, sizeof blk);
    snprintf(blk.name, sizeof blk.name, "testblock");
    kw_tl_shape(&shp, KW_PHASE_PREFILL, 1, 1024);
    kw_tl_mapping(&map, (kw_tiling){128, 128, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0}, KW_PREC_BF16);
    map.fuse_attention = KW_ATTN_NONE;
}

TestSuite(cost, .init = setup);

static int add_group(const char *g) { return kw_tl_block_group(&blk, &map, g); }

static kw_op *add_op(const char *name, kw_op_kind kind, const char *group)
{
    return kw_tl_block_op(&blk, &map, name, kind, group);
}

static kw_op *add_gemm(const char *name, const char *group, uint64_t n, uint64_t k)
{
    kw_op *op = add_op(name, KW_OP_GEMM, group);
    op->n = n;
    op->k = k;
    op->weights = 1;
    return op;
}

static kw_op *add_attn(const char *name, int heads, int kv_heads, int d, int causal)
{
    kw_op *op = add_op(name, KW_OP_ATTENTION, "attn");
    op->heads = heads;
    op->kv_heads = kv_heads;
    op->head_dim = d;
    op->causal = causal;
    return op;
}

static kw_op *add_elem(const char *name, kw_op_kind kind, uint64_t width)
{
    kw_op *op = add_op(name, kind, NULL);
    op->width = width;
    return op;
}

static kw_tiling *tiling(const char *group)
{
    return &map.tiling[add_group(group)];
}

static void eval(int requests, int cores)
{
    int rc = kw_cost_eval(&cost, &acc, &blk, &shp, &map, requests, cores);
    cr_assert_eq(rc, 0, "kw_cost_eval: %s", kw_error_last());
}

/* Tiled GEMM, output-stationary, no resident panel, divisible shape:
 * MNK(1/Tn + 1/Tm) + MN elements (src/model-facts.md#gemm-traffic). */
static double tiled_elems(double m, double n, double k, double tm, double tn)
{
    return m * n * k * (1.0 / tn + 1.0 / tm) + m * n;
}

Test(cost, tiled_gemm_traffic_closed_form)
{
    /* K = 8192: the A panel (Tm x K) and B panel (K x Tn) are 2 MiB, far over 256 KiB. */
    const double M = 1024, N = 2048, K = 8192;
    add_gemm("proj", "g", (uint64_t)N, (uint64_t)K);
    shp.seq = (int)M;
    const int tms[] = {128, 64, 256}, tns[] = {128, 256, 64};
    for (int lo = KW_LOOP_MNK; lo <= KW_LOOP_NMK; lo++) {
        for (int i = 0; i < 3; i++) {
            *tiling("g") = (kw_tiling){tms[i], tns[i], 32, 1, (kw_loop)lo, 1, 0, 0, 0, 0, 0, 0};
            eval(1, acc.cores);
            double want = tiled_elems(M, N, K, tms[i], tns[i]) * 2.0; /* bf16 */
            cr_assert_eq(cost.n_kernels, 1);
            cr_assert_eq(cost.fallbacks, 0);
            cr_assert(fabs(cost.dram_bytes - want) <= 1e-9 * want, "loop %d tile %dx%d: %g vs %g",
                      lo, tms[i], tns[i], cost.dram_bytes, want);
            cr_assert(fabs(cost.flops - 2 * M * N * K) < 1.0);
            /* reuse = 2MNK / traffic (elements) */
            double reuse = 2 * M * N * K / tiled_elems(M, N, K, tms[i], tns[i]);
            cr_assert(fabs(cost.reuse_ratio - reuse) <= 1e-9 * reuse);
        }
    }
}

Test(cost, resident_panel_follows_loop_order)
{
    /* K = 256: A panel 128x256 bf16 = 64 KiB fits, so mnk reads A once and nmk reads B once. */
    const double M = 2048, N = 2048, K = 256, T = 128;
    add_gemm("proj", "g", (uint64_t)N, (uint64_t)K);
    shp.seq = (int)M;
    *tiling("g") = (kw_tiling){128, 128, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0};
    eval(1, acc.cores);
    double want = (M * K + K * N * (M / T) + M * N) * 2.0;
    cr_assert(fabs(cost.dram_bytes - want) <= 1e-9 * want, "mnk %g vs %g", cost.dram_bytes, want);
    tiling("g")->loop = KW_LOOP_NMK;
    eval(1, acc.cores);
    want = (M * K * (N / T) + K * N + M * N) * 2.0;
    cr_assert(fabs(cost.dram_bytes - want) <= 1e-9 * want, "nmk %g vs %g", cost.dram_bytes, want);
    /* kmn: A once, B per M tile, C partial sums (fp32) written and read back per K chunk but the last */
    tiling("g")->loop = KW_LOOP_KMN;
    eval(1, acc.cores);
    want = (M * K + K * N * (M / T) + M * N) * 2.0 + 2.0 * (K / 32 - 1) * M * N * 4.0;
    cr_assert(fabs(cost.dram_bytes - want) <= 1e-9 * want, "kmn %g vs %g", cost.dram_bytes, want);
}

Test(cost, no_mapping_beats_hong_kung_bound)
{
    /* Smith et al. (arXiv 1702.02017): any schedule moves >= 2MNK/sqrt(S) words,
     * S = fast-memory words. All fp32 so bytes/4 = words; 4 B bursts waste nothing. */
    gsl_set_error_handler_off();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 20240611UL);
    map.precision = KW_PREC_FP32;
    map.accum_precision = KW_PREC_FP32;
    acc.dram_burst_bytes = 4;
    add_gemm("proj", "g", 1, 1);
    const int tiles[] = {16, 32, 48, 64, 96, 128, 192, 256, 512};
    const int splits[] = {1, 2, 4, 8};
    const uint64_t srams[] = {32 * 1024, 96 * 1024, 256 * 1024, 1024 * 1024};
    int fallbacks = 0;
    for (int it = 0; it < 4000; it++) {
        blk.ops[0].n = 16 + gsl_rng_uniform_int(r, 4096);
        blk.ops[0].k = 16 + gsl_rng_uniform_int(r, 4096);
        shp.seq = 16 + (int)gsl_rng_uniform_int(r, 4096);
        acc.sram_bytes_per_unit = srams[gsl_rng_uniform_int(r, 4)];
        *tiling("g") = (kw_tiling){tiles[gsl_rng_uniform_int(r, 9)], tiles[gsl_rng_uniform_int(r, 9)],
                                   tiles[gsl_rng_uniform_int(r, 9)], splits[gsl_rng_uniform_int(r, 4)],
                                   (kw_loop)gsl_rng_uniform_int(r, 3), (int)gsl_rng_uniform_int(r, 2), 0, 0, 0, 0, 0, 0};
        eval(1, acc.cores);
        fallbacks += cost.fallbacks;
        double m = shp.seq, n = (double)blk.ops[0].n, k = (double)blk.ops[0].k;
        double s_words = (double)acc.sram_bytes_per_unit / 4.0;
        double bound = 2.0 * m * n * k / sqrt(s_words);
        double words = cost.dram_bytes / 4.0;
        cr_assert(words >= bound, "it %d: %g words < bound %g (M=%g N=%g K=%g tile %dx%dx%d s%d loop %d)",
                  it, words, bound, m, n, k, map.tiling[0].tile_m, map.tiling[0].tile_n,
                  map.tiling[0].tile_k, map.tiling[0].split_k, map.tiling[0].loop);
        /* compulsory traffic too: every operand and the output at least once */
        cr_assert(words >= m * k + k * n + m * n - 1e-6);
    }
    cr_assert(fallbacks > 0 && fallbacks < 4000, "the sample should hold both kinds (%d)", fallbacks);
    gsl_rng_free(r);
}

Test(cost, roofline_flips_at_ridge_point)
{
    /* 2048^3 with 128^2 tiles: 256 tiles over 32 units = 8 full waves, tiles
     * aligned to the 16^3 array, so compute = 2MNK / peak exactly. */
    const double M = 2048, N = 2048, K = 8192;
    acc.launch_eager_us = 0.0;
    add_gemm("proj", "g", (uint64_t)N, (uint64_t)K);
    shp.seq = (int)M;
    double bytes = tiled_elems(M, N, K, 128, 128) * 2.0;
    double ai = 2 * M * N * K / bytes; /* FLOP per byte */
    double peak = acc.peak_flops[KW_PREC_BF16];
    /* ridge = peak / bandwidth just above the kernel's intensity: memory-bound */
    acc.dram_bw_bytes_per_s = peak / (ai * 1.02);
    eval(1, acc.cores);
    cr_assert_eq(cost.kernels[0].bound, KW_BOUND_MEMORY);
    cr_assert_eq(cost.bound, KW_BOUND_MEMORY);
    double t_mem = bytes / acc.dram_bw_bytes_per_s * 1e6;
    cr_assert(fabs(cost.latency_us - t_mem) <= 1e-9 * t_mem);
    /* just below: compute-bound, time = 2MNK / peak */
    acc.dram_bw_bytes_per_s = peak / (ai * 0.98);
    eval(1, acc.cores);
    cr_assert_eq(cost.kernels[0].bound, KW_BOUND_COMPUTE);
    double t_cmp = 2 * M * N * K / peak * 1e6;
    cr_assert(fabs(cost.latency_us - t_cmp) <= 1e-9 * t_cmp);
    /* without double buffering the transfer does not hide: compute + memory */
    tiling("g")->double_buffer = 0;
    eval(1, acc.cores);
    double t_sum = t_cmp + bytes / acc.dram_bw_bytes_per_s * 1e6;
    cr_assert(fabs(cost.latency_us - t_sum) <= 1e-9 * t_sum);
}

Test(cost, compute_scales_with_cores_given)
{
    const double M = 2048, N = 2048, K = 4096;
    acc.launch_eager_us = 0.0;
    acc.dram_bw_bytes_per_s = 1e15; /* make it compute-bound */
    add_gemm("proj", "g", (uint64_t)N, (uint64_t)K);
    shp.seq = (int)M;
    eval(1, 1); /* 256 tiles over 8 units: 32 full waves at a quarter of the peak */
    double want = 2 * M * N * K / (acc.peak_flops[KW_PREC_BF16] / acc.cores) * 1e6;
    cr_assert(fabs(cost.kernels[0].compute_us - want) <= 1e-9 * want);
}

Test(cost, partial_waves_derate_compute)
{
    /* 1024x1024 with 128^2 tiles = 64 tiles over 24 units (3 cores): 3 waves, 64/72 busy. */
    const double M = 1024, N = 1024, K = 4096;
    add_gemm("proj", "g", (uint64_t)N, (uint64_t)K);
    shp.seq = (int)M;
    eval(1, 3);
    double eff = 64.0 / (3.0 * 24.0);
    double want = 2 * M * N * K / (acc.peak_flops[KW_PREC_BF16] * 3.0 / 4.0 * eff) * 1e6;
    cr_assert(fabs(cost.kernels[0].wave_efficiency - eff) < 1e-12);
    cr_assert(fabs(cost.kernels[0].compute_us - want) <= 1e-9 * want);
}

Test(cost, padding_waste_when_tiles_do_not_match_array)
{
    /* 24x24 tiles on a 16x16 array execute 32x32: (24/32)^2 of the work is useful.
     * 960 = 40 x 24, so 1600 tiles = 50 full waves over 32 units. */
    const double M = 960, N = 960, K = 1024;
    acc.dram_bw_bytes_per_s = 1e15;
    add_gemm("proj", "g", (uint64_t)N, (uint64_t)K);
    shp.seq = (int)M;
    *tiling("g") = (kw_tiling){24, 24, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0};
    eval(1, acc.cores);
    double pad = (24.0 / 32.0) * (24.0 / 32.0);
    cr_assert(fabs(cost.kernels[0].pad_efficiency - pad) < 1e-12, "%g", cost.kernels[0].pad_efficiency);
    double want = 2 * M * N * K / (acc.peak_flops[KW_PREC_BF16] * pad) * 1e6;
    cr_assert(fabs(cost.kernels[0].compute_us - want) <= 1e-9 * want);
    /* matching tiles: no waste */
    *tiling("g") = (kw_tiling){32, 32, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0};
    eval(1, acc.cores);
    cr_assert(fabs(cost.kernels[0].pad_efficiency - 1.0) < 1e-12);
}

Test(cost, decode_tile_larger_than_problem_is_padding_not_fallback)
{
    const double N = 4096, K = 4096;
    add_gemm("proj", "g", (uint64_t)N, (uint64_t)K);
    shp.phase = KW_PHASE_DECODE;
    shp.kv_len = 512;
    eval(1, acc.cores); /* M = 1 with tile_m = 128 */
    cr_assert_eq(cost.fallbacks, 0);
    cr_assert(fabs(cost.kernels[0].pad_efficiency - 1.0 / 128.0) < 1e-12);
    double want = (1 * K * (N / 128) + K * N + N) * 2.0; /* weights read once */
    cr_assert(fabs(cost.dram_bytes - want) <= 1e-9 * want, "%g vs %g", cost.dram_bytes, want);
    double padded = cost.kernels[0].compute_us;
    /* tile_m at the array granule: 16 rows executed instead of 128, and the
     * weight stream bounds it (decode is memory-bound when tiled for it) */
    tiling("g")->tile_m = 16;
    eval(1, acc.cores);
    cr_assert_eq(cost.fallbacks, 0);
    cr_assert(fabs(padded / cost.kernels[0].compute_us - 128.0 / 16.0) < 1e-9);
    cr_assert_eq(cost.kernels[0].bound, KW_BOUND_MEMORY);
}

Test(cost, tile_over_sram_falls_back_fitting_tile_does_not)
{
    add_gemm("proj", "g", 4096, 4096);
    /* 512x512 fp32 accumulator alone is 1 MiB > 256 KiB */
    *tiling("g") = (kw_tiling){512, 512, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0};
    eval(1, acc.cores);
    cr_assert_eq(cost.fallbacks, 1);
    cr_assert_eq(cost.kernels[0].fallback, 1);
    cr_assert_eq(cost.kernels[0].bound, KW_BOUND_FALLBACK);
    cr_assert_eq(cost.bound, KW_BOUND_FALLBACK);
    cr_assert(cost.kernels[0].sram_bytes > acc.sram_bytes_per_unit);
    /* generic kernel at fallback_efficiency of peak */
    double want = 2.0 * 1024 * 4096 * 4096 / (acc.peak_flops[KW_PREC_BF16] * acc.fallback_efficiency) * 1e6;
    cr_assert(fabs(cost.kernels[0].compute_us - want) <= 1e-9 * want);
    /* 128x128x32 double-buffered: 64 KiB + 32 KiB fits */
    *tiling("g") = (kw_tiling){128, 128, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0};
    eval(1, acc.cores);
    cr_assert_eq(cost.fallbacks, 0);
    cr_assert_eq(cost.kernels[0].sram_bytes, 128 * 128 * 4 + 32 * (128 + 128) * 2 * 2);
    /* double buffering is what tips it: 128x256x128 is 128 KiB + 96 KiB (single) / 192 KiB (double) */
    *tiling("g") = (kw_tiling){128, 256, 128, 1, KW_LOOP_MNK, 0, 0, 0, 0, 0, 0, 0};
    eval(1, acc.cores);
    cr_assert_eq(cost.fallbacks, 0);
    tiling("g")->double_buffer = 1;
    eval(1, acc.cores);
    cr_assert_eq(cost.fallbacks, 1);
    /* tile_k larger than K (per split) cannot serve the shape */
    *tiling("g") = (kw_tiling){128, 128, 32, 256, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0}; /* 4096/256 = 16 < 32 */
    eval(1, acc.cores);
    cr_assert_eq(cost.fallbacks, 1);
}

Test(cost, split_k_adds_partial_sum_traffic)
{
    const double M = 1024, N = 1024, K = 16384;
    add_gemm("proj", "g", (uint64_t)N, (uint64_t)K);
    shp.seq = (int)M;
    eval(1, acc.cores);
    double base = cost.dram_bytes;
    int base_launches = cost.launches;
    cr_assert(fabs(base - tiled_elems(M, N, K, 128, 128) * 2.0) <= 1e-9 * base);
    for (int s = 2; s <= 8; s *= 2) {
        tiling("g")->split_k = s;
        eval(1, acc.cores);
        /* s partial MN outputs in fp32 written, read back by the reduction kernel,
         * replacing the bf16 output write of the GEMM (the reduction writes it). */
        double want = base + 2.0 * s * M * N * 4.0;
        cr_assert(fabs(cost.dram_bytes - want) <= 1e-9 * want, "split %d: %g vs %g", s,
                  cost.dram_bytes, want);
        cr_assert_eq(cost.launches, base_launches + 1);
    }
}

Test(cost, lower_precision_lowers_bytes_by_element_ratio)
{
    const double M = 1024, N = 2048, K = 16384;
    acc.dram_burst_bytes = 32; /* fp8 tile rows of 32 elements are whole bursts */
    add_gemm("proj", "g", (uint64_t)N, (uint64_t)K);
    shp.seq = (int)M;
    map.precision = KW_PREC_FP32;
    eval(1, acc.cores);
    double b32 = cost.dram_bytes, c32 = cost.kernels[0].compute_us;
    map.precision = KW_PREC_BF16;
    eval(1, acc.cores);
    double b16 = cost.dram_bytes, c16 = cost.kernels[0].compute_us;
    map.precision = KW_PREC_FP8_E4M3;
    eval(1, acc.cores);
    double b8 = cost.dram_bytes, c8 = cost.kernels[0].compute_us;
    /* fp8 GEMMs write a bf16 output (kw_gemm_out_bytes): the operand traffic
     * halves from bf16 to fp8, the M x N output stays at 2 bytes */
    double out16 = M * N * 2.0;
    cr_assert(fabs(b32 / b16 - 2.0) < 1e-12, "%g %g", b32, b16);
    cr_assert(fabs((b16 - out16) / (b8 - out16) - 2.0) < 1e-12, "%g %g %g", b16, b8, out16);
    /* and each precision runs at its own peak */
    cr_assert(fabs(c32 / c16 - acc.peak_flops[KW_PREC_BF16] / acc.peak_flops[KW_PREC_FP32]) < 1e-9);
    cr_assert(fabs(c16 / c8 - acc.peak_flops[KW_PREC_FP8_E4M3] / acc.peak_flops[KW_PREC_BF16]) < 1e-9);
}

Test(cost, sparsity_doubles_peak_only_when_supported)
{
    acc.dram_bw_bytes_per_s = 1e15;
    add_gemm("proj", "g", 2048, 4096);
    shp.seq = 2048;
    eval(1, acc.cores);
    double dense = cost.kernels[0].compute_us;
    map.sparsity_2_4 = 1;
    eval(1, acc.cores);
    cr_assert(fabs(dense / cost.kernels[0].compute_us - 2.0) < 1e-9);
    acc.sparsity_2_4 = 0;
    eval(1, acc.cores);
    cr_assert(fabs(dense / cost.kernels[0].compute_us - 1.0) < 1e-9);
}

/* Attention block: one attention op over 8 heads of d = 128. */
static void attn_only(int causal)
{
    add_attn("attn", 8, 8, 128, causal);
}

Test(cost, unfused_attention_traffic_grows_as_n_squared_independent_of_sram)
{
    attn_only(0);
    *tiling("attn") = (kw_tiling){64, 64, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0};
    map.fuse_attention = KW_ATTN_NONE;
    double prev = 0.0;
    for (int n = 4096; n <= 16384; n *= 2) {
        shp.seq = n;
        eval(1, acc.cores);
        cr_assert_eq(cost.fallbacks, 0);
        cr_assert_eq(cost.launches, 3);
        if (prev > 0.0) {
            double ratio = cost.dram_bytes / prev;
            cr_assert(ratio > 3.8 && ratio <= 4.0, "N doubled: traffic x%g", ratio);
        }
        prev = cost.dram_bytes;
    }
    /* Theta(Nd + N^2) does not involve M: the same mapping moves the same bytes
     * with 4x and 8x the SRAM (the P row panel, 64 x N fp32 = 4 MiB, fits in none). */
    double base = prev;
    for (uint64_t sram = 128 * 1024; sram <= 1024 * 1024; sram *= 2) {
        acc.sram_bytes_per_unit = sram;
        eval(1, acc.cores);
        cr_assert_eq(cost.dram_bytes, base, "sram %lu: %g vs %g", (unsigned long)sram, cost.dram_bytes, base);
    }
}

/* Largest query block Br (multiple of the array granule) for which the flash
 * kernel does not fall back, with the KV block at the granule; FlashAttention
 * sizes Br ~ M / d the same way. Found by asking the model whether it fits. */
static int largest_flash_br(void)
{
    int best = 0;
    for (int br = 16; br <= shp.seq; br += 16) {
        *tiling("attn") = (kw_tiling){br, 16, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0};
        eval(1, acc.cores);
        if (cost.fallbacks)
            break;
        best = br;
    }
    return best;
}

Test(cost, flash_traffic_falls_as_one_over_sram)
{
    attn_only(0);
    shp.seq = 16384;
    map.fuse_attention = KW_ATTN_FLASH;
    double prev = 0.0;
    for (uint64_t sram = 128 * 1024; sram <= 2 * 1024 * 1024; sram *= 2) {
        acc.sram_bytes_per_unit = sram;
        int br = largest_flash_br();
        cr_assert(br > 0);
        *tiling("attn") = (kw_tiling){br, 16, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0};
        eval(1, acc.cores);
        cr_assert_eq(cost.launches, 1);
        /* Theorem 2 schedule: Q read and O written once, K and V once per query block */
        double n = shp.seq, d = 128, h = 8;
        double want = h * (2 * n * d * ceil(n / br) + 2 * n * d) * 2.0;
        cr_assert(fabs(cost.dram_bytes - want) <= 1e-9 * want, "sram %lu br %d", (unsigned long)sram, br);
        if (prev > 0.0) {
            double ratio = prev / cost.dram_bytes;
            cr_assert(ratio > 1.6 && ratio < 2.5, "SRAM doubled to %lu: traffic fell x%g only",
                      (unsigned long)sram, ratio);
        }
        prev = cost.dram_bytes;
    }
}

Test(cost, flash_beats_unfused_for_long_sequences)
{
    attn_only(1);
    *tiling("attn") = (kw_tiling){128, 64, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0};
    for (int n = 2048; n <= 16384; n *= 2) {
        shp.seq = n;
        map.fuse_attention = KW_ATTN_NONE;
        eval(1, acc.cores);
        double unfused = cost.dram_bytes;
        map.fuse_attention = KW_ATTN_QK_SOFTMAX;
        eval(1, acc.cores);
        double qks = cost.dram_bytes;
        int qks_fallback = cost.fallbacks;
        map.fuse_attention = KW_ATTN_FLASH;
        eval(1, acc.cores);
        cr_assert_eq(cost.fallbacks, 0);
        cr_assert(cost.dram_bytes < unfused / 4, "N=%d flash %g unfused %g", n, cost.dram_bytes, unfused);
        /* fusing QK with softmax saves the S write+read of the softmax kernel */
        if (!qks_fallback)
            cr_assert(qks < unfused);
        /* causal: half the score pairs (plus the diagonal) */
        double want = 8.0 * 4.0 * 128.0 * n * (n + 1.0) / 2.0;
        cr_assert(fabs(cost.flops - want) <= 1e-9 * want);
    }
}

Test(cost, decode_attention_reads_the_kv_cache)
{
    /* GQA 32 query heads over 8 KV heads: per (sequence, KV head) the 4 query rows
     * read the K and V cache once: 2 kv_len d + 2 x 4 d elements. */
    add_attn("attn", 32, 8, 128, 1);
    shp.phase = KW_PHASE_DECODE;
    shp.batch = 3;
    shp.kv_len = 4096;
    map.fuse_attention = KW_ATTN_FLASH;
    *tiling("attn") = (kw_tiling){16, 64, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0};
    eval(2, acc.cores);
    double want = 2 * 3 * 8 * (2.0 * 4096 * 128 + 2.0 * 4 * 128) * 2.0;
    cr_assert(fabs(cost.dram_bytes - want) <= 1e-9 * want, "%g vs %g", cost.dram_bytes, want);
    cr_assert_eq(cost.kernels[0].bound, KW_BOUND_MEMORY);
    /* Flash-Decoding: split the keys 4 ways, partial O + stats in fp32, one reduction */
    tiling("attn")->split_k = 4;
    eval(2, acc.cores);
    cr_assert_eq(cost.launches, 2);
    double part = 2 * 3 * 8 * 4.0 * 4 * (128 + 2) * 4.0;
    double want_s = want - 2 * 3 * 8 * 4 * 128 * 2.0 + part + part + 2 * 3 * 8 * 4 * 128 * 2.0;
    cr_assert(fabs(cost.dram_bytes - want_s) <= 1e-9 * want_s, "%g vs %g", cost.dram_bytes, want_s);
}

Test(cost, fusion_lowers_launches_by_kernels_merged)
{
    /* pre-norm attention block, no epilogues (so only the knob under test merges) */
    add_elem("ln1", KW_OP_NORM, 1024);
    kw_op *q = add_gemm("q", "qkv", 1024, 1024);
    kw_op *k = add_gemm("k", "qkv", 1024, 1024);
    kw_op *v = add_gemm("v", "qkv", 1024, 1024);
    snprintf(q->merge, KW_NAME_MAX, "qkv");
    snprintf(k->merge, KW_NAME_MAX, "qkv");
    snprintf(v->merge, KW_NAME_MAX, "qkv");
    add_attn("attn", 8, 8, 128, 1);
    add_gemm("o", "o", 1024, 1024);
    add_elem("res1", KW_OP_RESIDUAL, 1024);
    add_elem("ln2", KW_OP_NORM, 1024);
    kw_op *g = add_gemm("gate", "mlp", 2816, 1024);
    kw_op *u = add_gemm("up", "mlp", 2816, 1024);
    snprintf(g->merge, KW_NAME_MAX, "gate_up");
    snprintf(u->merge, KW_NAME_MAX, "gate_up");
    add_elem("silu_mul", KW_OP_ACT, 2816);
    kw_op *dn = add_gemm("down", "down", 1024, 2816);
    add_elem("res2", KW_OP_RESIDUAL, 1024);
    shp.seq = 512;
    /* unfused: 1 norm + 3 + 3 attention + o + res + norm + gate + up + act + down + res */
    eval(1, acc.cores);
    const int base = 15;
    cr_assert_eq(cost.launches, base);
    map.fuse_qkv = 1; /* 3 GEMMs -> 1 */
    eval(1, acc.cores);
    cr_assert_eq(cost.launches, base - 2);
    map.fuse_qkv = 0;
    map.fuse_attention = KW_ATTN_QK_SOFTMAX; /* QK + softmax -> 1 */
    eval(1, acc.cores);
    cr_assert_eq(cost.launches, base - 1);
    map.fuse_attention = KW_ATTN_FLASH; /* 3 -> 1 */
    eval(1, acc.cores);
    cr_assert_eq(cost.launches, base - 2);
    map.fuse_attention = KW_ATTN_NONE;
    map.fuse_residual_norm = 1; /* res1 + ln2 (res2 has no norm after it) */
    eval(1, acc.cores);
    cr_assert_eq(cost.launches, base - 1);
    map.fuse_residual_norm = 0;
    map.fuse_gate_up = 1; /* gate + up -> 1 */
    eval(1, acc.cores);
    cr_assert_eq(cost.launches, base - 1);
    map.fuse_gate_up = 0;
    /* epilogues: 2 bias/act epilogues as their own kernels, then folded; the
     * activation that follows the up GEMM is folded too */
    q->epilogue = 1;
    dn->epilogue = 1;
    eval(1, acc.cores);
    cr_assert_eq(cost.launches, base + 2);
    map.fuse_epilogue = 1;
    eval(1, acc.cores);
    cr_assert_eq(cost.launches, base - 1);
    /* everything on */
    map.fuse_qkv = map.fuse_gate_up = map.fuse_residual_norm = 1;
    map.fuse_attention = KW_ATTN_FLASH;
    eval(1, acc.cores);
    cr_assert_eq(cost.launches, base - 1 - 2 - 2 - 1 - 1);
    cr_assert_eq(cost.launches, cost.n_kernels);
}

Test(cost, fused_residual_norm_saves_one_read)
{
    add_elem("res", KW_OP_RESIDUAL, 4096);
    add_elem("ln", KW_OP_NORM, 4096);
    shp.seq = 1000;
    eval(1, acc.cores);
    double x = 1000.0 * 4096 * 2; /* one activation tensor, bf16 */
    double w = 4096.0 * 2;
    cr_assert(fabs(cost.dram_bytes - (3 * x + 2 * x + w)) < 1.0);
    map.fuse_residual_norm = 1;
    eval(1, acc.cores);
    cr_assert(fabs(cost.dram_bytes - (4 * x + w)) < 1.0);
    /* elementwise kernels reach elementwise_efficiency of bandwidth */
    double t = (4 * x + w) / (acc.dram_bw_bytes_per_s * acc.elementwise_efficiency) * 1e6;
    cr_assert(fabs(cost.kernels[0].memory_us - t) <= 1e-9 * t);
    cr_assert_eq(cost.kernels[0].bound, KW_BOUND_MEMORY);
}

Test(cost, graph_mode_lowers_launch_overhead_by_accel_figures)
{
    add_elem("ln1", KW_OP_NORM, 64);
    add_gemm("a", "g", 64, 64);
    add_elem("act", KW_OP_ACT, 64);
    add_gemm("b", "g", 64, 64);
    add_elem("res", KW_OP_RESIDUAL, 64);
    shp.seq = 16;
    eval(1, acc.cores);
    int n = cost.launches;
    cr_assert_eq(n, 5);
    double eager = cost.latency_us;
    cr_assert(fabs(cost.launch_us - n * acc.launch_eager_us) < 1e-9);
    /* tiny kernels: launch dominates */
    cr_assert_eq(cost.bound, KW_BOUND_LAUNCH);
    cr_assert_eq(cost.kernels[0].bound, KW_BOUND_LAUNCH);
    map.graph_mode = 1;
    eval(1, acc.cores);
    double graph = acc.graph_fixed_us + n * acc.graph_node_us;
    cr_assert(fabs(cost.launch_us - graph) < 1e-9);
    cr_assert(fabs((eager - cost.latency_us) - (n * acc.launch_eager_us - graph)) < 1e-9);
    /* latency is the sum of the kernels plus the replay */
    double sum = acc.graph_fixed_us;
    for (int i = 0; i < cost.n_kernels; i++)
        sum += cost.kernels[i].time_us;
    cr_assert(fabs(sum - cost.latency_us) < 1e-9);
}

Test(cost, energy_and_dram_demand)
{
    const double M = 1024, N = 1024, K = 8192;
    acc.launch_eager_us = 2.0;
    add_gemm("proj", "g", (uint64_t)N, (uint64_t)K);
    shp.seq = (int)M;
    eval(1, acc.cores);
    double bytes = tiled_elems(M, N, K, 128, 128) * 2.0;
    /* aligned tiles: executed = useful FLOPs; bf16 is the pJ reference precision */
    double e = (2 * M * N * K * acc.pj_per_flop + bytes * acc.pj_per_dram_byte) * 1e-12;
    cr_assert(fabs(cost.energy_j - e) <= 1e-9 * e);
    const kw_kernel *k = &cost.kernels[0];
    cr_assert(fabs(cost.peak_dram_bytes_per_us - bytes / (k->time_us - k->launch_us)) <= 1e-6);
    acc.pj_per_flop = acc.pj_per_dram_byte = 0.0;
    eval(1, acc.cores);
    cr_assert_eq(cost.energy_j, 0.0);
}

Test(cost, conv_is_implicit_gemm)
{
    /* ResNet-50 conv2_x 3x3 (src/model-facts.md#shapes): M = 3136 x batch, N = 64, K = 576 */
    kw_op *op = add_op("conv", KW_OP_CONV, "conv");
    op->in_h = op->in_w = 56;
    op->in_c = op->out_c = 64;
    op->kh = op->kw = 3;
    op->stride = op->pad = 1;
    op->weights = 1;
    shp.batch = 2;
    eval(1, acc.cores);
    cr_assert(fabs(cost.flops - 2.0 * 3136 * 2 * 64 * 576) < 1.0);
    cr_assert(fabs(cost.flops / 2 / 2 - 115.6e6) < 0.1e6); /* 115.6M MAC per image */
}

Test(cost, bad_inputs_are_errors)
{
    add_gemm("proj", "g", 64, 64);
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, acc.cores + 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "cores") != NULL);
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 0, 1), KW_EINPUT);
    cr_assert_eq(kw_cost_eval(NULL, &acc, &blk, &shp, &map, 1, 1), KW_EINPUT);
    acc.peak_flops[KW_PREC_INT8] = 0.0;
    map.precision = KW_PREC_INT8;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "int8") != NULL);
    map.precision = KW_PREC_BF16;
    tiling("g")->tile_m = 0;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 1), KW_EINPUT);
    tiling("g")->tile_m = 64;
    shp.seq = 0;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 1), KW_EINPUT);
    shp.seq = 16;
    add_attn("attn", 6, 4, 64, 1);
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 1), KW_EINPUT);
}

Test(cost, bound_names)
{
    cr_assert_str_eq(kw_cost_bound_name(KW_BOUND_COMPUTE), "compute");
    cr_assert_str_eq(kw_cost_bound_name(KW_BOUND_MEMORY), "memory");
    cr_assert_str_eq(kw_cost_bound_name(KW_BOUND_LAUNCH), "launch");
    cr_assert_str_eq(kw_cost_bound_name(KW_BOUND_FALLBACK), "fallback");
    cr_assert_str_eq(kw_cost_bound_name((kw_bound)99), "?");
}

Test(cost, gated_act_fused_into_merged_gate_up_writes_half)
{
    /* SwiGLU MLP up half: gate and up (N = w each) then SiLU(gate) * up.
     * Panels do not fit (K = 8192), tiles divide, bursts align. */
    const double M = 1024, W = 2048, K = 8192;
    kw_op *g = add_gemm("gate", "mlp", (uint64_t)W, (uint64_t)K);
    kw_op *u = add_gemm("up", "mlp", (uint64_t)W, (uint64_t)K);
    snprintf(g->merge, KW_NAME_MAX, "gate_up");
    snprintf(u->merge, KW_NAME_MAX, "gate_up");
    add_elem("silu_mul", KW_OP_ACT, (uint64_t)W);
    shp.seq = (int)M;
    map.fuse_gate_up = 1;
    eval(1, acc.cores);
    /* merged GEMM (N = 2W) + a standalone gated act reading both halves */
    double gemm = tiled_elems(M, 2 * W, K, 128, 128);
    double act = 2 * M * W + M * W;
    cr_assert_eq(cost.launches, 2);
    cr_assert(fabs(cost.dram_bytes - (gemm + act) * 2.0) <= 1e-9 * cost.dram_bytes);
    /* act in the epilogue: one kernel that writes only the product (M x W) */
    map.fuse_epilogue = 1;
    eval(1, acc.cores);
    cr_assert_eq(cost.launches, 1);
    double want = (gemm - 2 * M * W + M * W) * 2.0;
    cr_assert(fabs(cost.dram_bytes - want) <= 1e-9 * want, "%g vs %g", cost.dram_bytes, want);
    /* unmerged: the up GEMM's epilogue reads the gate output instead */
    map.fuse_gate_up = 0;
    eval(1, acc.cores);
    cr_assert_eq(cost.launches, 2);
    want = (2 * tiled_elems(M, W, K, 128, 128) + M * W) * 2.0;
    cr_assert(fabs(cost.dram_bytes - want) <= 1e-9 * want, "%g vs %g", cost.dram_bytes, want);
}

Test(cost, unfused_epilogue_reads_and_writes_the_output)
{
    const double M = 1024, N = 1024, K = 8192;
    kw_op *op = add_gemm("proj", "g", (uint64_t)N, (uint64_t)K);
    op->epilogue = 1;
    shp.seq = (int)M;
    eval(1, acc.cores);
    cr_assert_eq(cost.launches, 2);
    double gemm = tiled_elems(M, N, K, 128, 128) * 2.0;
    double epi = (2 * M * N + N) * 2.0; /* read y and the bias, write y */
    cr_assert(fabs(cost.dram_bytes - (gemm + epi)) <= 1e-9 * (gemm + epi));
    cr_assert(fabs(cost.kernels[1].dram_bytes - epi) < 1e-6);
    map.fuse_epilogue = 1;
    eval(1, acc.cores);
    cr_assert_eq(cost.launches, 1);
    cr_assert(fabs(cost.dram_bytes - gemm) <= 1e-9 * gemm);
}

Test(cost, qk_softmax_needs_the_score_row_on_chip)
{
    /* The fused QK+softmax kernel holds a Tm x N row block of scores (fp32):
     * 16 x 1024 x 4 = 64 KiB fits beside its 16x64 tile; 128 x 1024 x 4 = 512 KiB does not. */
    attn_only(0);
    shp.seq = 1024;
    map.fuse_attention = KW_ATTN_QK_SOFTMAX;
    *tiling("attn") = (kw_tiling){16, 64, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0};
    eval(1, acc.cores);
    cr_assert_eq(cost.fallbacks, 0);
    cr_assert_eq(cost.launches, 2);
    tiling("attn")->tile_m = 128;
    eval(1, acc.cores);
    cr_assert_eq(cost.fallbacks, 1);
    cr_assert_eq(cost.kernels[0].fallback, 1);
    cr_assert_eq(cost.launches, 2, "a fallback replaces the kernel, it does not change the plan");
}

Test(cost, plan_larger_than_kernel_table_is_an_error)
{
    /* 32 GEMMs, each with split-K and an unfused epilogue: 96 kernels > KW_KERNEL_MAX */
    for (int i = 0; i < KW_OP_MAX; i++) {
        char name[16];
        snprintf(name, sizeof name, "g%d", i);
        add_gemm(name, "g", 128, 1024)->epilogue = 1;
    }
    tiling("g")->split_k = 2;
    shp.seq = 128;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 1), KW_EMODEL);
    cr_assert(strstr(kw_error_last(), "kernels") != NULL);
}

/* A decode shape without kv_len costs an MLP block (no attention reads it):
 * M = batch rows, FLOPs 2 M N K. */
Test(cost, decode_without_kv_len_costs_a_block_without_attention)
{
    add_gemm("up", "up", 512, 256);
    shp.phase = KW_PHASE_DECODE;
    shp.seq = 1;
    shp.kv_len = 0;
    shp.batch = 8;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 1), 0, "%s", kw_error_last());
    cr_assert_float_eq(cost.flops, 2.0 * 8 * 512 * 256, 1e-6);
}
