/* test_tp.c - tensor parallelism against closed forms: the ring all-reduce
 * time 2(p-1)/p x bytes / bw + 2(p-1) x latency (Patarasuk and Yuan 2009) and
 * the tree's 2 x bytes / bw + 2 ceil(log2 p) x latency, worked by hand below;
 * the Megatron split halving every GEMM and attention's FLOPs at p = 2 with
 * one all-reduce after each row-parallel GEMM of the activation's bytes; the
 * refusals (p not dividing heads, no interconnect). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kw_cost.h"
#include "kw_error.h"
#include "kw_load_llm.h"
#include "kw_tp.h"

TestSuite(tp);

/* bytes 1e9, bw 1e11 B/s: bytes / bw = 10,000 us; latency 2 us.
 * ring p=4: 2 x 3/4 x 10,000 + 2 x 3 x 2 = 15,000 + 12 = 15,012 us
 * ring p=8: 2 x 7/8 x 10,000 + 2 x 7 x 2 = 17,500 + 28 = 17,528 us
 * tree p=4: 2 x 10,000 + 2 x 2 x 2 = 20,008 us; p=5: 20,000 + 2 x 3 x 2 = 20,012 us */
Test(tp, allreduce_closed_forms)
{
    cr_expect_float_eq(kw_tp_allreduce_us(KW_ALLREDUCE_RING, 1e9, 4, 1e11, 2.0), 15012.0, 1e-6);
    cr_expect_float_eq(kw_tp_allreduce_us(KW_ALLREDUCE_RING, 1e9, 8, 1e11, 2.0), 17528.0, 1e-6);
    cr_expect_float_eq(kw_tp_allreduce_us(KW_ALLREDUCE_TREE, 1e9, 4, 1e11, 2.0), 20008.0, 1e-6);
    cr_expect_float_eq(kw_tp_allreduce_us(KW_ALLREDUCE_TREE, 1e9, 5, 1e11, 2.0), 20012.0, 1e-6);
    cr_expect_eq(kw_tp_allreduce_us(KW_ALLREDUCE_RING, 1e9, 1, 1e11, 2.0), 0.0);
    cr_expect_str_eq(kw_load_llm_allreduce_name(KW_ALLREDUCE_TREE), "tree");
    cr_expect_eq(kw_load_llm_allreduce_parse("ring"), KW_ALLREDUCE_RING);
    cr_expect_eq(kw_load_llm_allreduce_parse("mesh"), -1);
}

static kw_accel acc;
static kw_block blk;
static kw_shape shp;
static kw_mapping map;
static kw_cost cost;

static kw_op *op_add(const char *name, kw_op_kind kind, const char *group)
{
    kw_op *op = &blk.ops[blk.n_ops++];
    memset(op, 0, sizeof *op);
    snprintf(op->name, sizeof op->name, "%s", name);
    op->kind = kind;
    if (group) {
        snprintf(op->group, sizeof op->group, "%s", group);
        int g = -1;
        for (int i = 0; i < blk.n_groups; i++)
            if (strcmp(blk.groups[i], group) == 0)
                g = i;
        if (g < 0)
            snprintf(blk.groups[blk.n_groups++], KW_NAME_MAX, "%s", group);
    }
    return op;
}

static kw_op *gemm(const char *name, const char *group, const char *merge, uint64_t n, uint64_t k)
{
    kw_op *op = op_add(name, KW_OP_GEMM, group);
    snprintf(op->merge, sizeof op->merge, "%s", merge);
    op->n = n;
    op->k = k;
    op->weights = 1;
    return op;
}

/* A GQA attention block and a gated MLP, d = 1024, 16 heads / 4 KV heads of 64. */
static void layer_setup(void)
{
    memset(&acc, 0, sizeof acc);
    snprintf(acc.name, sizeof acc.name, "testchip");
    acc.cores = 4;
    acc.units_per_core = 8;
    acc.peak_flops[KW_PREC_BF16] = 100e12;
    acc.peak_flops[KW_PREC_FP32] = 25e12;
    acc.sram_bytes_per_unit = 256 * 1024;
    acc.dram_bw_bytes_per_s = 1e12;
    acc.dram_burst_bytes = 64;
    acc.array_m = acc.array_n = acc.array_k = 16;
    acc.launch_eager_us = 5.0;
    acc.fallback_efficiency = 0.3;
    acc.elementwise_efficiency = 0.8;
    acc.link_bytes_per_s = 450e9;
    acc.link_latency_us = 3.0;
    acc.allreduce_algo = KW_ALLREDUCE_RING;
    memset(&blk, 0, sizeof blk);
    op_add("norm1", KW_OP_NORM, NULL)->width = 1024;
    gemm("q", "qkv", "qkv", 1024, 1024);
    gemm("k", "qkv", "qkv", 256, 1024);
    gemm("v", "qkv", "qkv", 256, 1024);
    kw_op *a = op_add("attn", KW_OP_ATTENTION, "attn");
    a->heads = 16;
    a->kv_heads = 4;
    a->head_dim = 64;
    a->causal = 1;
    gemm("o", "o", "", 1024, 1024);
    op_add("res1", KW_OP_RESIDUAL, NULL)->width = 1024;
    op_add("norm2", KW_OP_NORM, NULL)->width = 1024;
    gemm("gate", "gate_up", "gate_up", 4096, 1024);
    gemm("up", "gate_up", "gate_up", 4096, 1024);
    op_add("act", KW_OP_ACT, NULL)->width = 4096;
    gemm("down", "down", "", 1024, 4096);
    op_add("res2", KW_OP_RESIDUAL, NULL)->width = 1024;
    memset(&shp, 0, sizeof shp);
    snprintf(shp.name, sizeof shp.name, "s");
    shp.phase = KW_PHASE_PREFILL;
    shp.batch = 2;
    shp.seq = 256;
    shp.streams = 1;
    memset(&map, 0, sizeof map);
    for (int g = 0; g < KW_GROUP_MAX; g++)
        map.tiling[g] = (kw_tiling){64, 64, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0};
    map.n_groups = blk.n_groups;
    map.precision = KW_PREC_BF16;
    map.accum_precision = KW_PREC_FP32;
    map.softmax_precision = KW_PREC_FP32;
    map.fuse_attention = KW_ATTN_FLASH;
    map.max_batch = 1;
    map.cores_per_request = 1;
}

static double kernel_flops(const char *name)
{
    for (int i = 0; i < cost.n_kernels; i++)
        if (strcmp(cost.kernels[i].name, name) == 0)
            return cost.kernels[i].flops;
    cr_assert_fail("no kernel %s", name);
    return 0.0;
}

Test(tp, split_halves_the_work_and_adds_two_allreduces, .init = layer_setup)
{
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
    static const char *const names[] = {"q", "k", "v", "attn_flash", "o", "gate", "up", "down"};
    double one[8];
    for (int i = 0; i < 8; i++)
        one[i] = kernel_flops(names[i]);
    int n1 = cost.n_kernels;
    map.tp_degree = 2;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
    for (int i = 0; i < 8; i++)
        cr_expect_float_eq(kernel_flops(names[i]), one[i] / 2.0, 1e-6 * one[i], "%s", names[i]);
    cr_expect_eq(cost.n_kernels, n1 + 2); /* after o and after down */
    /* each all-reduce sums the T x d activation: 512 tokens x 1024 x 2 bytes */
    double bytes = 2.0 * 256 * 1024 * 2;
    double ring = 2.0 * (2 - 1) / 2.0 * bytes / 450e9 * 1e6 + 2.0 * (2 - 1) * 3.0;
    int seen = 0;
    for (int i = 0; i < cost.n_kernels; i++)
        if (strstr(cost.kernels[i].name, "_allreduce")) {
            cr_expect_float_eq(cost.kernels[i].time_us, ring + acc.launch_eager_us, 1e-9);
            seen++;
        }
    cr_expect_eq(seen, 2);
    cr_expect_float_eq(cost.comm_us, 2.0 * ring, 1e-9);
}

Test(tp, refusals, .init = layer_setup)
{
    map.tp_degree = 3; /* 16 heads, 1024 columns: 3 divides neither */
    cr_expect_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), KW_EINPUT);
    map.tp_degree = 8; /* 4 KV heads on 8 devices: each keeps a copy */
    cr_expect_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
    acc.link_bytes_per_s = 0.0;
    cr_expect_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), KW_EINPUT);
    cr_expect(strstr(kw_error_last(), "interconnect") != NULL, "%s", kw_error_last());
}

/* Paged KV cache: with pages that divide the KV length the decode attention
 * moves exactly the contiguous cache's bytes; with a partial last page it
 * moves what a contiguous cache of the next whole page would. */
Test(tp, paged_traffic_equals_contiguous_when_pages_divide, .init = layer_setup)
{
    shp.phase = KW_PHASE_DECODE;
    shp.seq = 1;
    shp.batch = 4;
    static const kw_attn_fusion fus[] = {KW_ATTN_NONE, KW_ATTN_FLASH};
    for (int f = 0; f < 2; f++) {
        map.fuse_attention = fus[f];
        map.kv_page_tokens = 0;
        shp.kv_len = 1024;
        cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
        double contiguous = cost.dram_bytes;
        map.kv_page_tokens = 16; /* 1024 = 64 pages */
        cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
        cr_expect_float_eq(cost.dram_bytes, contiguous, 1e-9 * contiguous);
        shp.kv_len = 1000; /* 63 pages, the last one partial: 1008 slots */
        cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
        double paged = cost.dram_bytes;
        map.kv_page_tokens = 0;
        shp.kv_len = 1008;
        cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
        cr_expect_float_eq(paged, cost.dram_bytes, 1e-9 * paged);
    }
}

/* Device memory: KV 2 x kv_heads x d x ctx x bytes per sequence plus the
 * weights, per device. At exactly the capacity it fits; a byte less refuses. */
Test(tp, kv_cache_that_does_not_fit_is_refused, .init = layer_setup)
{
    shp.phase = KW_PHASE_DECODE;
    shp.seq = 1;
    shp.batch = 8;
    shp.kv_len = 2047; /* context 2048 with the new token */
    double kv = 8.0 * 2.0 * 4 * 64 * 2048 * 2;
    double w = (1024.0 * 1024 + 256.0 * 1024 * 2 + 1024.0 * 1024 + 4096.0 * 1024 * 2 +
                1024.0 * 4096) * 2;
    acc.dram_capacity_bytes = (uint64_t)(kv + w);
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
    acc.dram_capacity_bytes -= 1;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), KW_EINPUT);
    cr_expect(strstr(kw_error_last(), "GiB of KV cache") != NULL, "%s", kw_error_last());
    /* two devices each hold half the heads and half the weights: it fits again */
    map.tp_degree = 2;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
}
