/* bench_cost.c - stage-1 evaluations per second of a Llama-2-7B attention block.
 *
 * Not a test: a timing loop for the cost model's speed target (>= 500,000
 * evaluations per second per core). Accelerator figures are the H100-SXM5
 * ones of src/model-facts.md#accelerators and #launch; block shapes of #shapes. Structs are
 * built by hand so the benchmark needs no XML. Each iteration changes the
 * mapping (tiles, loop, fusion, precision) so nothing is constant across calls.
 * Usage: bench_cost [evaluations]   (prints evals/s and ns/eval)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kw_cost.h"
#include "kw_error.h"

static void h100(kw_accel *a)
{
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "h100-like");
    a->cores = 4;
    a->units_per_core = 33;
    a->peak_flops[KW_PREC_FP32] = 67e12;
    a->peak_flops[KW_PREC_BF16] = a->peak_flops[KW_PREC_FP16] = 989.4e12;
    a->peak_flops[KW_PREC_FP8_E4M3] = a->peak_flops[KW_PREC_FP8_E5M2] = 1978.9e12;
    a->peak_flops[KW_PREC_INT8] = 1978.9e12;
    a->sparsity_2_4 = 1;
    a->sram_bytes_per_unit = 228 * 1024;
    a->dram_bw_bytes_per_s = 3.35e12;
    a->dram_burst_bytes = 32;
    a->dram_latency_us = 0.6;
    a->array_m = 64;
    a->array_n = 8;
    a->array_k = 16;
    a->launch_eager_us = 5.0;
    a->graph_fixed_us = 15.0;
    a->graph_node_us = 0.58;
    a->fallback_efficiency = 0.3;
    a->elementwise_efficiency = 0.8;
    a->pj_per_flop = 0.4;
    a->pj_per_dram_byte = 7.0;
}

static kw_op *op(kw_block *b, const char *name, kw_op_kind kind, const char *group)
{
    kw_op *o = &b->ops[b->n_ops++];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", name);
    o->kind = kind;
    if (group) {
        snprintf(o->group, sizeof o->group, "%s", group);
        int g = 0;
        while (g < b->n_groups && strcmp(b->groups[g], group) != 0)
            g++;
        if (g == b->n_groups)
            snprintf(b->groups[b->n_groups++], KW_NAME_MAX, "%s", group);
    }
    return o;
}

static void attn_7b(kw_block *b)
{
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "llama7b_attention");
    op(b, "ln1", KW_OP_NORM, NULL)->width = 4096;
    const char *qkv[] = {"q_proj", "k_proj", "v_proj"};
    for (int i = 0; i < 3; i++) {
        kw_op *o = op(b, qkv[i], KW_OP_GEMM, "qkv");
        o->n = o->k = 4096;
        o->weights = 1;
        snprintf(o->merge, sizeof o->merge, "qkv");
    }
    kw_op *at = op(b, "attn", KW_OP_ATTENTION, "attn");
    at->heads = at->kv_heads = 32;
    at->head_dim = 128;
    at->causal = 1;
    kw_op *o = op(b, "o_proj", KW_OP_GEMM, "o_proj");
    o->n = o->k = 4096;
    o->weights = 1;
    o->epilogue = 1;
    op(b, "residual", KW_OP_RESIDUAL, NULL)->width = 4096;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    static kw_accel a;
    static kw_block b;
    static kw_cost cost;
    h100(&a);
    attn_7b(&b);
    kw_shape s[2];
    memset(s, 0, sizeof s);
    s[0].phase = KW_PHASE_PREFILL;
    s[0].batch = 1;
    s[0].seq = 2048;
    s[1].phase = KW_PHASE_DECODE;
    s[1].batch = 8;
    s[1].kv_len = 2048;
    kw_mapping m[16];
    const int tiles[] = {64, 128, 256, 32};
    for (int i = 0; i < 16; i++) {
        memset(&m[i], 0, sizeof m[i]);
        m[i].n_groups = b.n_groups;
        for (int g = 0; g < KW_GROUP_MAX; g++)
            m[i].tiling[g] = (kw_tiling){tiles[i & 3], tiles[(i >> 1) & 3], 32, 1 + (i & 1),
                                         (kw_loop)(i % 3), (i >> 2) & 1, 0, 0, 0, 0, 0, 0};
        m[i].fuse_qkv = i & 1;
        m[i].fuse_attention = (kw_attn_fusion)(i % 3);
        m[i].fuse_epilogue = (i >> 1) & 1;
        m[i].fuse_residual_norm = 0;
        m[i].precision = (i & 4) ? KW_PREC_FP8_E4M3 : KW_PREC_BF16;
        m[i].accum_precision = KW_PREC_FP32;
        m[i].softmax_precision = KW_PREC_FP32;
        m[i].graph_mode = (i >> 3) & 1;
        m[i].cores_per_request = 1;
    }
    double sink = 0.0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        int rc = kw_cost_eval(&cost, &a, &b, &s[i & 1], &m[(i >> 1) & 15], 1 + (int)(i & 3), 1 + (int)((i >> 2) & 3));
        if (rc != 0) {
            fprintf(stderr, "bench_cost: %s\n", kw_error_last());
            return 1;
        }
        sink += cost.latency_us;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("bench_cost: %ld evaluations of the 7B attention block in %.3f s: %.0f evals/s, %.0f ns/eval (checksum %.6g)\n",
           n, sec, n / sec, 1e9 * sec / n, sink);
    return 0;
}
