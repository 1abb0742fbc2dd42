/* test_cost_cpu.c - stage 1's CPU rules (src/model/kw_cost_cpu.c) against closed
 * forms, and the rule that only an accelerator file with <cpu> gets them.
 *
 * Every expectation is computed here from the rule it checks (per-core
 * vector rate x threads, contiguous ranges of work items, scalar code at
 * in-place ragged edges, zero-padded micro-tiles and packing traffic for
 * packed operands, rows that exist rather than full tiles, exp at the
 * scalar rate), never copied from the model's output. The accelerator is
 * built by hand with round figures.
 */
#include <criterion/criterion.h>
#include <libxml/xpath.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_cost.h"
#include "kw_error.h"
#include "kw_load.h"
#include "kw_xml.h"
#include "lib/kw_tl.h"
#include "lib/kw_tl_model.h"

static kw_accel acc;
static kw_block blk;
static kw_shape shp;
static kw_mapping map;
static kw_cost cost;

#define P_CORE 100e9      /* fp32 FLOP/s per core */
#define CORES 2
#define FALLBACK 0.01     /* scalar / vector */
#define SRAM_BW 100e9     /* private cache, all cores */
#define EXP_PER_S 100e6   /* per core */
#define LAUNCH_US 10.0
#define MR 4
#define NR 32

/* 2 cores of 100 GFLOP/s fp32 (bf16 storage half that), a 4 x 32 micro-tile,
 * 1 MiB private cache at 100 GB/s, a 32 MiB shared level at 50 GB/s, DRAM
 * 20 GB/s, thread wake-up 10 us. */
static void setup(void)
{
    memset(&acc, 0, sizeof acc);
    snprintf(acc.name, sizeof acc.name, "testcpu");
    acc.cores = CORES;
    acc.units_per_core = 1;
    acc.clock_ghz = 1.0;
    acc.peak_flops[KW_PREC_FP32] = P_CORE * CORES;
    acc.peak_flops[KW_PREC_BF16] = P_CORE * CORES / 2.0;
    acc.sram_bytes_per_unit = 1024 * 1024;
    acc.sram_bw_bytes_per_s = SRAM_BW;
    acc.dram_bw_bytes_per_s = 20e9;
    acc.dram_burst_bytes = 64;
    acc.array_m = MR;
    acc.array_n = NR;
    acc.array_k = 1;
    acc.launch_eager_us = LAUNCH_US;
    acc.graph_node_us = LAUNCH_US;
    acc.fallback_efficiency = FALLBACK;
    acc.elementwise_efficiency = 1.0;
    acc.pj_per_flop = 1.0;
    acc.pj_per_dram_byte = 1.0;
    acc.n_levels = 1;
    snprintf(acc.levels[0].name, sizeof acc.levels[0].name, "L3");
    acc.levels[0].kind = KW_LEVEL_SHARED;
    acc.levels[0].bytes = 32u << 20;
    acc.levels[0].bw_bytes_per_s = 50e9;
    acc.levels[0].holds = KW_HOLD_OPERANDS;
    acc.cpu = 1;
    acc.cpu_scalar_edges = 1;
    acc.cpu_exp_per_s = EXP_PER_S;

    memset(&blk, 0, sizeof blk);
    snprintf(blk.name, sizeof blk.name, "b");
    kw_tl_shape(&shp, KW_PHASE_PREFILL, 1, 256);
    kw_tl_mapping(&map, (kw_tiling){64, 64, 64, 1, KW_LOOP_MNK, 0, 0, 0, 0, 0, 0, 0}, KW_PREC_FP32);
}

TestSuite(cost_cpu, .init = setup);

static void gemm(uint64_t n, uint64_t k)
{
    kw_op *op = &blk.ops[blk.n_ops++];
    memset(op, 0, sizeof *op);
    snprintf(op->name, sizeof op->name, "fc");
    snprintf(op->group, sizeof op->group, "fc");
    op->kind = KW_OP_GEMM;
    op->n = n;
    op->k = k;
    op->weights = 1;
    snprintf(blk.groups[0], KW_NAME_MAX, "fc");
    blk.n_groups = 1;
    map.n_groups = 1;
}

static void eval(int cores)
{
    int rc = kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, cores);
    cr_assert_eq(rc, 0, "kw_cost_eval: %s", kw_error_last());
}

static double us(double flops, double rate) { return flops / rate * 1e6; }

/* Divisible, in place, compute-bound: 2MNK at the per-core rate; one
 * thread has no wake-up. */
Test(cost_cpu, one_thread_runs_at_the_per_core_rate)
{
    gemm(256, 256);
    eval(1);
    double want = us(2.0 * 256 * 256 * 256, P_CORE);
    cr_assert_eq(cost.n_kernels, 1);
    cr_assert_float_eq(cost.kernels[0].compute_us, want, 1e-9 * want);
    cr_assert_float_eq(cost.latency_us, want, 1e-9 * want, "%g vs %g", cost.latency_us, want);
    cr_assert_eq(cost.kernels[0].fallback, 0);
    cr_assert_float_eq(cost.kernels[0].pad_efficiency, 1.0, 1e-12);
}

/* Two threads split 16 tiles evenly: half the time, plus one wake-up. */
Test(cost_cpu, two_threads_halve_it_and_pay_a_wake_up)
{
    gemm(256, 256);
    eval(2);
    double want = us(2.0 * 256 * 256 * 256, 2.0 * P_CORE);
    cr_assert_float_eq(cost.kernels[0].compute_us, want, 1e-9 * want);
    cr_assert_float_eq(cost.latency_us, want + LAUNCH_US, 1e-9 * want);
}

/* Three tiles on two threads: contiguous ranges of 2 and 1, the larger
 * decides: 2/3 of the single-thread time, not 1/2. */
Test(cost_cpu, uneven_items_wait_for_the_largest_range)
{
    shp.seq = 192;
    gemm(64, 256);
    eval(2);
    double one = us(2.0 * 192 * 64 * 256, P_CORE);
    cr_assert_float_eq(cost.kernels[0].compute_us, one * 2.0 / 3.0, 1e-9 * one);
    cr_assert_float_eq(cost.kernels[0].wave_efficiency, 0.75, 1e-12);
}

/* tile_n 16 < the micro-tile's 32 columns with operands in place: every
 * micro-tile is partial, so all of it runs scalar code. */
Test(cost_cpu, in_place_ragged_micro_tiles_run_scalar)
{
    gemm(256, 256);
    map.tiling[0].tile_n = 16;
    eval(1);
    double want = us(2.0 * 256 * 256 * 256, P_CORE * FALLBACK);
    cr_assert_float_eq(cost.kernels[0].compute_us, want, 1e-9 * want);
}

/* Packing, in series with the micro-kernel: each of the (M/Tm)(N/Tn) tiles
 * packs its A rows (Tm x K) with a scalar loop, one scalar MAC's time per
 * element (2 FLOP at the scalar rate), and its B columns padded to 32 (K x
 * 32) with vector copies: the source bytes at the bandwidth of the level
 * the operands live in (A + B + C = 768 KiB: the private cache, one core's
 * share) and 4 bytes written per element to the private cache. */
static double pack_us(double pack_a, double pack_b, double b_bytes)
{
    double scalar = P_CORE * FALLBACK, private_core = SRAM_BW / CORES;
    return (pack_a * 2.0 / scalar + pack_b * b_bytes / private_core + pack_b * 4.0 / private_core) *
           1e6;
}

/* The same tile packed: micro-tiles zero-padded to 32 columns (twice the
 * MACs) at the vector rate, plus the packing. */
Test(cost_cpu, packed_ragged_tiles_pad_and_pay_the_packing)
{
    gemm(256, 256);
    map.tiling[0].tile_n = 16;
    map.tiling[0].double_buffer = 1;
    eval(1);
    double tiles = (256.0 / 64) * (256.0 / 16);
    double want = us(2.0 * 256 * 512 * 256, P_CORE) + pack_us(tiles * 64.0 * 256, tiles * 256.0 * NR, 4.0);
    cr_assert_float_eq(cost.kernels[0].compute_us, want, 1e-9 * want);
    cr_assert_float_eq(cost.kernels[0].pad_efficiency, 0.5, 1e-12);
}

/* Packed panels are fp32: a packed product runs at the fp32 rate even with
 * bf16 storage; in place it runs at the bf16 storage's rate. */
Test(cost_cpu, packed_products_run_at_the_fp32_rate)
{
    gemm(256, 256);
    map.precision = KW_PREC_BF16;
    eval(1);
    double direct = us(2.0 * 256 * 256 * 256, P_CORE / 2.0);
    cr_assert_float_eq(cost.kernels[0].compute_us, direct, 1e-9 * direct);
    map.tiling[0].double_buffer = 1;
    eval(1);
    double tiles = 16.0;
    double packed = us(2.0 * 256 * 256 * 256, P_CORE) + pack_us(tiles * 64.0 * 256, tiles * 256.0 * 64, 2.0);
    cr_assert_float_eq(cost.kernels[0].compute_us, packed, 1e-9 * packed);
}

/* A tile taller than the problem computes the rows that exist (16 decode
 * rows with tile_m 128 cost what tile_m 16 costs), unlike the GPU rule of
 * full tiles, which the same accelerator without <cpu> still follows. */
Test(cost_cpu, a_tile_larger_than_the_problem_is_not_padded)
{
    shp.phase = KW_PHASE_DECODE;
    shp.batch = 16;
    shp.kv_len = 64;
    gemm(256, 256);
    map.tiling[0].tile_m = 16;
    eval(1);
    double small = cost.latency_us;
    map.tiling[0].tile_m = 128;
    eval(1);
    double want = us(2.0 * 16 * 256 * 256, P_CORE);
    cr_assert_float_eq(small, want, 1e-9 * want);
    cr_assert_float_eq(cost.latency_us, want, 1e-9 * want);
    cr_assert_float_eq(cost.kernels[0].pad_efficiency, 1.0, 1e-12);
    acc.cpu = 0; /* the GPU rules: the array executes the whole 128-row tile */
    eval(1);
    cr_assert_float_eq(cost.kernels[0].pad_efficiency, 16.0 / 128.0, 1e-12);
}

/* A CPU has no scratchpad: tile_k above K is clamped, not a fallback (the
 * GPU rules send it to the generic kernel). */
Test(cost_cpu, tile_k_above_k_is_clamped_not_a_fallback)
{
    gemm(256, 64);
    map.tiling[0].tile_k = 256;
    eval(1);
    cr_assert_eq(cost.fallbacks, 0);
    double want = us(2.0 * 256 * 256 * 64, P_CORE);
    cr_assert_float_eq(cost.latency_us, want, 1e-9 * want);
    acc.cpu = 0;
    eval(1);
    cr_assert_eq(cost.fallbacks, 1);
}

/* Unfused attention on a CPU: the softmax pass is exp-bound, one exp per
 * score at the scalar rate; its memory time is below that here. */
Test(cost_cpu, the_softmax_pass_is_exp_bound)
{
    kw_op *op = &blk.ops[blk.n_ops++];
    memset(op, 0, sizeof *op);
    snprintf(op->name, sizeof op->name, "attn");
    snprintf(op->group, sizeof op->group, "attn");
    op->kind = KW_OP_ATTENTION;
    op->heads = op->kv_heads = 2;
    op->head_dim = 64;
    snprintf(blk.groups[0], KW_NAME_MAX, "attn");
    blk.n_groups = map.n_groups = 1;
    shp.seq = 256;
    eval(1);
    cr_assert_eq(cost.n_kernels, 3);
    const kw_kernel *sm = &cost.kernels[1];
    cr_assert(strstr(sm->name, "softmax") != NULL, "%s", sm->name);
    double want = 2.0 * 256 * 256 / EXP_PER_S * 1e6;
    cr_assert_float_eq(sm->compute_us, want, 1e-9 * want);
    cr_assert_float_eq(sm->time_us, want, 1e-9 * want, "memory %g", sm->memory_us);
}

/* Flash, one instance, 128 queries (one block) over 128 keys in KV blocks of
 * 64, head dim 64, in place: 2 blocks of QK^T (128 x 64 x 64) and PV (128 x
 * 64 x 64) MACs on vectors; one exp per score and one per row and KV block
 * (the rescale factor); per KV block the 128 x 64 O block rescaled (one
 * scalar FLOP per element) and PV's partial added into it (one scalar MAC,
 * two FLOPs, per element): 3 scalar FLOPs per element per block. */
Test(cost_cpu, flash_in_closed_form)
{
    kw_op *op = &blk.ops[blk.n_ops++];
    memset(op, 0, sizeof *op);
    snprintf(op->name, sizeof op->name, "attn");
    snprintf(op->group, sizeof op->group, "attn");
    op->kind = KW_OP_ATTENTION;
    op->heads = op->kv_heads = 1;
    op->head_dim = 64;
    snprintf(blk.groups[0], KW_NAME_MAX, "attn");
    blk.n_groups = map.n_groups = 1;
    shp.phase = KW_PHASE_PREFILL;
    shp.seq = 128;
    map.fuse_attention = KW_ATTN_FLASH;
    map.tiling[0].tile_m = 128; /* one query block of all 128 rows */
    map.tiling[0].tile_n = 64;
    eval(1);
    cr_assert_eq(cost.n_kernels, 1);
    double macs = 2.0 * (128.0 * 64 * 64) * 2.0; /* 2 KV blocks x (QK + PV) */
    double want = us(2.0 * macs, P_CORE) + 128.0 * (128 + 2) / EXP_PER_S * 1e6 +
                  3.0 * 2 * 128 * 64 / (P_CORE * FALLBACK) * 1e6;
    cr_assert_float_eq(cost.kernels[0].compute_us, want, 1e-9 * want);
}

/* Only a file with <cpu> gets the CPU rules: the shipped GPU, TPU and NPU
 * files load without it (so their figures are today's, held by
 * tests/test_cost.c and the fidelity table), the probed host with it. */
Test(cost_cpu, only_cpu_files_take_the_cpu_rules)
{
    const char *src = kw_tl_src();
    const char *files[] = {"h100.xml", "h100_flat.xml", "tpu_v5e.xml", "edge_npu.xml", "cpu_host.xml"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/spaces/accel/%s", src, files[i]);
        static kw_accel a;
        int rc = kw_load_accel(&a, path);
        cr_assert_eq(rc, 0, "%s: %s", path, kw_error_last());
        int want = strcmp(files[i], "cpu_host.xml") == 0;
        cr_assert_eq(a.cpu, want, "%s: cpu %d", files[i], a.cpu);
        if (want) {
            cr_assert(a.cpu_scalar_edges && a.cpu_exp_per_s > 0.0);
            /* <cpu l1_gb_s> in GB/s as the file writes it (whatever host
             * `knobwise probe` last measured for it), read through libxml2
             * (the project's one XML reader, kw_xml.h), loaded in bytes per s */
            char *buf = NULL;
            size_t len = 0;
            kw_xml_problems p = {0};
            xmlDocPtr doc = NULL;
            cr_assert_eq(kw_xml_read_file(&buf, &len, path, &p), 0, "%s", path);
            cr_assert_eq(kw_xml_parse(&doc, path, buf, len, &p), 0, "%s", path);
            xmlXPathContextPtr xc = xmlXPathNewContext(doc);
            cr_assert_not_null(xc);
            xmlXPathObjectPtr r =
                xmlXPathEvalExpression(BAD_CAST "number(//*[local-name()='cpu']/@l1_gb_s)", xc);
            cr_assert_not_null(r);
            double gb_s = r->floatval;
            xmlXPathFreeObject(r);
            xmlXPathFreeContext(xc);
            xmlFreeDoc(doc);
            free(buf);
            cr_assert_gt(gb_s, 0.0, "%s: no positive <cpu l1_gb_s>", path);
            cr_assert_float_eq(a.cpu_l1_bw_bytes_per_s, gb_s * 1e9, 1.0);
        }
    }
}

/* In place with B's rows a page or more apart (N = 2048 fp32: 8 KiB), every
 * MR-row strip of every tile reads its tile's B chunk row by row outside the
 * prefetchers' reach: M/MR strips x K x N elements of 4 bytes, in series,
 * at one core's share of the first data cache's streaming rate. A and B
 * (4 MiB) and C live in the shared level, so the operand stream itself is
 * overlapped as before and does not decide. */
Test(cost_cpu, in_place_rows_a_page_apart_are_read_in_series_from_l1)
{
    gemm(2048, 256);
    acc.cpu_l1_bw_bytes_per_s = 400e9;
    eval(1);
    double macs = 256.0 * 2048 * 256;
    double strided = (256.0 / MR) * 256 * 2048 * 4.0 / (400e9 / CORES) * 1e6;
    double want = us(2.0 * macs, P_CORE) + strided;
    cr_assert_float_eq(cost.kernels[0].compute_us, want, 1e-9 * want);
    cr_assert_lt(cost.kernels[0].memory_us, cost.kernels[0].compute_us);
    /* without l1_gb_s the private cache's figure stands in */
    acc.cpu_l1_bw_bytes_per_s = 0.0;
    eval(1);
    want = us(2.0 * macs, P_CORE) + (256.0 / MR) * 256 * 2048 * 4.0 / (SRAM_BW / CORES) * 1e6;
    cr_assert_float_eq(cost.kernels[0].compute_us, want, 1e-9 * want);
}

/* Rows closer than a page (N = 512 fp32: 2 KiB) stream like a panel: no
 * strided term, and packing removes it whatever the stride. */
Test(cost_cpu, rows_under_a_page_or_packed_pay_no_strided_term)
{
    gemm(512, 256);
    acc.cpu_l1_bw_bytes_per_s = 400e9;
    eval(1);
    double want = us(2.0 * 256 * 512 * 256, P_CORE);
    cr_assert_float_eq(cost.kernels[0].compute_us, want, 1e-9 * want);
    blk.n_ops = 0;
    gemm(2048, 256);
    map.tiling[0].double_buffer = 1;
    eval(1);
    double tiles = (256.0 / 64) * (2048.0 / 64);
    /* A + B + C = 4.25 MiB: B's source bytes come from the shared level */
    double pack = (tiles * 64.0 * 256 * 2.0 / (P_CORE * FALLBACK) + tiles * 256.0 * 64 * 4.0 / 50e9 +
                   tiles * 256.0 * 64 * 4.0 / (SRAM_BW / CORES)) * 1e6;
    want = us(2.0 * 256 * 2048 * 256, P_CORE) + pack;
    cr_assert_float_eq(cost.kernels[0].compute_us, want, 1e-9 * want);
}
