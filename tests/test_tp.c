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
#include "kw_kv.h"
#include "kw_load_llm.h"
#include "kw_tp.h"
#include "lib/kw_tl_model.h"

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

/* map.n_groups is set once the block is built (layer_setup) */
static kw_op *op_add(const char *name, kw_op_kind kind, const char *group)
{
    return kw_tl_block_op(&blk, NULL, name, kind, group);
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
    kw_tl_round_chip(&acc, "testchip");
    acc.launch_eager_us = 5.0;
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
    kw_tl_shape(&shp, KW_PHASE_PREFILL, 2, 256);
    kw_tl_mapping(&map, (kw_tiling){64, 64, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0}, KW_PREC_BF16);
    map.n_groups = blk.n_groups;
    map.fuse_attention = KW_ATTN_FLASH;
}

static double kernel_flops(const char *name)
{
    const kw_kernel *k = kw_tl_kernel(&cost, name);
    cr_assert_not_null(k, "no kernel %s", name);
    return k->flops;
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
 * moves exactly the contiguous cache's bytes plus the block table; with a
 * partial last page the unfused kernels move what a contiguous cache of the
 * next whole page would (vLLM reads whole blocks), the flash kernel what a
 * contiguous cache of the same length would (FlashAttention stops at the
 * sequence end: kw_kv.c), plus the table. The table, by hand: 4 sequences x 4 KV heads = 16
 * instances (GQA packing: 4 query rows each, one query block of 64), each
 * K/V stream reading its sequence's row of int32 page numbers: 1024 / 16 =
 * 64 pages = 256 B per instance; flash streams K and V together (one read,
 * 16 x 256 = 4096 B), the unfused QK and PV each read it (8192 B). */
Test(tp, paged_traffic_is_contiguous_plus_block_table, .init = layer_setup)
{
    shp.phase = KW_PHASE_DECODE;
    shp.seq = 1;
    shp.batch = 4;
    static const kw_attn_fusion fus[] = {KW_ATTN_NONE, KW_ATTN_FLASH};
    static const double streams[] = {2.0, 1.0}; /* table reads per instance */
    static const int read_len[] = {1008, 1000}; /* 63 whole pages; the sequence itself */
    for (int f = 0; f < 2; f++) {
        map.fuse_attention = fus[f];
        map.kv_page_tokens = 0;
        shp.kv_len = 1024;
        cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
        double contiguous = cost.dram_bytes;
        map.kv_page_tokens = 16; /* 1024 = 64 pages */
        cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
        cr_expect_float_eq(cost.dram_bytes - contiguous, streams[f] * 16.0 * 64.0 * 4.0, 1e-6,
                           "fusion %d: %.1f vs %.1f", f, cost.dram_bytes, contiguous);
        shp.kv_len = 1000; /* 63 pages, the last one partial: 1008 slots */
        cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
        double paged = cost.dram_bytes;
        map.kv_page_tokens = 0;
        shp.kv_len = read_len[f];
        cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
        cr_expect_float_eq(paged - cost.dram_bytes, streams[f] * 16.0 * 63.0 * 4.0, 1e-6);
    }
    cr_expect_float_eq(kw_kv_table_bytes(1000.0, 16), 63.0 * 4.0, 1e-12);
    cr_expect_eq(kw_kv_table_bytes(1000.0, 0), 0.0);
}

static const kw_kernel *kernel(const char *name)
{
    const kw_kernel *k = kw_tl_kernel(&cost, name);
    cr_assert_not_null(k, "no kernel %s", name);
    return k;
}

/* One packed pass of a continuous-batching iteration (kw_cost_eval_mixed):
 * P prompt tokens and D decoding sequences go through every GEMM as one
 * activation of P + D rows, so each GEMM kernel is exactly the kernel of a
 * prefill of P + D tokens (same M, same weights read once), and each part's
 * attention is the kernel it would be alone. Against running the two passes
 * one after the other, the mixed pass saves at least one read of the
 * weights minus what the bigger M's extra tiles cost: checked here as
 * "fewer DRAM bytes than the two passes", the weights being 2 x 12 MiB. */
Test(tp, mixed_pass_reads_the_weights_once, .init = layer_setup)
{
    kw_shape pf = shp, dec = shp, all = shp;
    pf.batch = 1;
    pf.seq = 192;
    dec.phase = KW_PHASE_DECODE;
    dec.batch = 64;
    dec.seq = 1;
    dec.kv_len = 512;
    all.batch = 1;
    all.seq = 192 + 64;
    static const char *const gemms[] = {"q", "k", "v", "o", "gate", "up", "down"};
    kw_kernel want[7];
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &all, &map, 1, 4), 0, "%s", kw_error_last());
    for (int i = 0; i < 7; i++)
        want[i] = *kernel(gemms[i]);
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &pf, &map, 1, 4), 0, "%s", kw_error_last());
    kw_kernel pf_attn = *kernel("attn_flash");
    double sep_bytes = cost.dram_bytes, sep_us = cost.latency_us;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &dec, &map, 1, 4), 0, "%s", kw_error_last());
    kw_kernel dec_attn = *kernel("attn_flash");
    sep_bytes += cost.dram_bytes;
    sep_us += cost.latency_us;
    cr_assert_eq(kw_cost_eval_mixed(&cost, &acc, &blk, &pf, &dec, &map, 4), 0, "%s",
                 kw_error_last());
    for (int i = 0; i < 7; i++) {
        const kw_kernel *k = kernel(gemms[i]);
        cr_expect_float_eq(k->flops, want[i].flops, 1e-9 * want[i].flops, "%s", gemms[i]);
        cr_expect_float_eq(k->dram_bytes, want[i].dram_bytes, 1e-9 * want[i].dram_bytes, "%s",
                           gemms[i]);
        cr_expect_float_eq(k->time_us, want[i].time_us, 1e-9 * want[i].time_us, "%s", gemms[i]);
    }
    cr_expect_float_eq(kernel("attn_flash")->dram_bytes, pf_attn.dram_bytes, 1e-9);
    cr_expect_float_eq(kernel("attn_decode_flash")->dram_bytes, dec_attn.dram_bytes, 1e-9);
    cr_expect_float_eq(kernel("attn_decode_flash")->time_us, dec_attn.time_us, 1e-9);
    cr_expect_lt(cost.dram_bytes, sep_bytes);
    cr_expect_lt(cost.latency_us, sep_us);
    /* the parts' phases are checked */
    cr_expect_eq(kw_cost_eval_mixed(&cost, &acc, &blk, &dec, &pf, &map, 4), KW_EINPUT);
    /* the KV check holds both parts' caches: 64 x 513 decode tokens fit alone,
     * not beside the prompt's 192 */
    double kv_tok = 2.0 * 4 * 64 * 2; /* bytes per token of context */
    double w = (1024.0 * 1024 + 256.0 * 1024 * 2 + 1024.0 * 1024 + 4096.0 * 1024 * 2 +
                1024.0 * 4096) * 2;
    acc.dram_capacity_bytes = (uint64_t)(w + kv_tok * (64.0 * 513 + 191.0));
    cr_expect_eq(kw_cost_eval(&cost, &acc, &blk, &dec, &map, 1, 4), 0, "%s", kw_error_last());
    cr_expect_eq(kw_cost_eval_mixed(&cost, &acc, &blk, &pf, &dec, &map, 4), KW_EINPUT);
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

/* The chunked pipeline by hand (kw_tp.h): G = 100 us of GEMM in 4 chunks,
 * g = 25. Links 40 us, latency 2 us: a = 40/4 + 2 = 12 <= g, so T = 25 + 12 +
 * 3 x 25 = 112 and only the last chunk's 12 us show. Links 400 us: a = 102 >
 * g, T = 25 + 102 + 3 x 102 = 433, 333 exposed (against 402 unchunked: the
 * chunks' latency is paid four times, the GEMM hidden). */
Test(tp, overlap_pipeline_closed_form)
{
    cr_expect_float_eq(kw_tp_overlap_exposed_us(100.0, 40.0, 2.0, 4), 12.0, 1e-9);
    cr_expect_float_eq(kw_tp_overlap_exposed_us(100.0, 400.0, 2.0, 4), 333.0, 1e-9);
    cr_expect_float_eq(kw_tp_overlap_exposed_us(100.0, 400.0, 2.0, 1), 402.0, 1e-9);
    cr_expect_float_eq(kw_tp_overlap_exposed_us(100.0, 400.0, 2.0, 0), 402.0, 1e-9);
}

/* In the plan: tp_degree 2, 4 chunks, a base latency of 10 us per call. The
 * all-reduce after o sums 512 tokens x 1024 x 2 B; its line shows the exposed
 * time of the pipeline over o's own kernel time, plus 1 + 3 x (1 + 1) launches
 * (the all-reduce, and per extra chunk one o GEMM and one all-reduce). */
Test(tp, overlap_chunks_in_the_plan, .init = layer_setup)
{
    map.tp_degree = 2;
    acc.link_base_us = 10.0;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
    double bytes = 512.0 * 1024 * 2;
    double bw_part = 2.0 * (2 - 1) / 2.0 * bytes / 450e9 * 1e6, lat = 2.0 * (2 - 1) * 3.0 + 10.0;
    cr_expect_float_eq(kernel("o_allreduce")->time_us, bw_part + lat + acc.launch_eager_us, 1e-9);
    int launches = cost.launches;
    map.tp_overlap_chunks = 4;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
    const kw_kernel *o = kernel("o");
    double g_us = o->time_us - o->launch_us, g = g_us / 4.0, a = bw_part / 4.0 + lat;
    double exposed = g + a + 3.0 * fmax(g, a) - g_us;
    cr_expect_float_eq(kernel("o_allreduce")->time_us, exposed + 7.0 * acc.launch_eager_us, 1e-9);
    /* here the 16 us of latency dominate 2.3 us on the links: four chunks pay
     * it four times, and chunking loses */
    cr_expect_gt(exposed, bw_part + lat);
    /* down's all-reduce likewise; the extra launches are counted */
    cr_expect_eq(cost.launches, launches + 2 * 6);
    /* with a 0.1 us step and no base latency the links' 2.3 us dominate the
     * latency, each chunk's share fits under a GEMM chunk, and the pipeline
     * hides all but the last chunk's */
    acc.link_latency_us = 0.1;
    acc.link_base_us = 0.0;
    lat = 2.0 * (2 - 1) * 0.1;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
    o = kernel("o");
    g_us = o->time_us - o->launch_us;
    g = g_us / 4.0;
    a = bw_part / 4.0 + lat;
    exposed = g + a + 3.0 * fmax(g, a) - g_us;
    cr_expect_float_eq(kernel("o_allreduce")->time_us, exposed + 7.0 * acc.launch_eager_us, 1e-9);
    cr_expect_lt(exposed, bw_part + lat);
}

/* fuse_norm_gemm by hand, T = 512 tokens, d = 1024 bf16 (x = T d 2 B), the
 * QKV and gate_up GEMMs merged. Unfused the three elementwise kernels move
 * norm1: x + 2d read, x written; res1: 2x, x; norm2: x + 2d, x = 7x + 4d.
 * Folded: norm1 becomes a row-statistics kernel (x read, 4T written), res1
 * writes the sum and norm2's statistics (3x + 4T), norm2 has no kernel, and
 * the QKV and gate_up GEMMs read 4T each: 4x + 16T. In a model of two layers
 * the last residual writes the next layer's norm1 statistics: norm1's kernel
 * goes too, res2 writes 4T more. */
Test(tp, norm_folded_into_the_next_gemm, .init = layer_setup)
{
    map.fuse_qkv = map.fuse_gate_up = 1;
    double T = 512.0, x = T * 1024 * 2, d = 1024.0;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
    double off_bytes = cost.dram_bytes;
    int off_kernels = cost.n_kernels;
    cr_expect_float_eq(kernel("norm1")->dram_bytes + kernel("res1")->dram_bytes +
                       kernel("norm2")->dram_bytes, 7.0 * x + 4.0 * d, 1e-6);
    map.fuse_norm_gemm = 1;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
    cr_expect_float_eq(kernel("norm1_rms")->dram_bytes, x + 4.0 * T, 1e-6);
    cr_expect_float_eq(kernel("res1+rms")->dram_bytes, 3.0 * x + 4.0 * T, 1e-6);
    cr_expect_eq(cost.n_kernels, off_kernels - 1);
    cr_expect_float_eq(off_bytes - cost.dram_bytes, (7.0 * x + 4.0 * d) - (4.0 * x + 16.0 * T),
                       1e-6);
    for (int i = 0; i < cost.n_kernels; i++)
        cr_expect(strcmp(cost.kernels[i].name, "norm2") != 0, "norm2 still has a kernel");
    blk.layers = 2;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 4), 0, "%s", kw_error_last());
    cr_expect_eq(cost.n_kernels, off_kernels - 2);
    cr_expect_float_eq(kernel("res2+rms")->dram_bytes, 2.0 * (3.0 * x + 4.0 * T), 1e-6);
}
