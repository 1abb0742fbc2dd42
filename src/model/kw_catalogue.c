/* kw_catalogue.c - the knob catalogue table (see kw_catalogue.h).
 *
 * Design choice: one table of plain data, read by everything that needs a
 * knob's name, domain or meaning: the decoder (kw_mapping.c turns a matched
 * entry into a field of kw_mapping by its id), the loader's checks, `show
 * --catalogue` and the documentation test. Before it, names lived in a chain
 * of strcmp() calls in kw_mapping.c and in prose in the design notes and README, and
 * nothing kept the three equal. Ranges are the decoder's former limits; what
 * "uses" a knob follows how kw_cost.c, kw_sim.c and kw_drift.c read the
 * mapping (named next to each predicate below).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_catalogue.h"
#include "kw_mapping.h"
#include "kw_num.h"
#include "kw_suggest.h"

#define KW_CAT_TILE_MAX 65536       /* largest tile edge the decoder accepts */
#define KW_CAT_SPLIT_K_MAX 256
#define KW_CAT_MAX_BATCH_MAX 1024
#define KW_CAT_TIMEOUT_US_MAX 1e9
#define KW_CAT_CORES_MAX 4096
#define KW_CAT_ORDINAL_MAX 64       /* stages, swizzle and cluster (the decoder's former bound) */
#define KW_CAT_TP_MAX 64            /* devices of one tensor-parallel group (8 per NVLink domain today) */
#define KW_CAT_PAGE_MAX 65536       /* tokens per KV page */
#define KW_CAT_CHUNKS_MAX 64        /* chunks of a pipelined GEMM + all-reduce */
#define KW_CAT_TOKENS_MAX 1000000   /* tokens per continuous-batching iteration */

static const kw_cat_value kw_cat_onoff[] = {
    {"off", "not fused: separate kernels"},
    {"on", "fused into one kernel"},
};
static const kw_cat_value kw_cat_db[] = {
    {"off", "one buffer per operand: load, then compute"},
    {"on", "two buffers: the next K chunk loads while this one computes (doubles input SRAM)"},
};
static const kw_cat_value kw_cat_loop[] = {
    {"mnk", "M outer: the A panel stays resident, B is re-read per row block"},
    {"nmk", "N outer: the B panel stays resident, A is re-read per column block"},
    {"kmn", "K outer: partial output tiles are re-read and re-written per K chunk"},
};
static const kw_cat_value kw_cat_attn[] = {
    {"none", "QK^T, softmax and PV as three kernels; scores go through DRAM"},
    {"qk_softmax", "QK^T and softmax fused; PV separate"},
    {"flash", "QK^T, softmax and PV fused with online softmax (FlashAttention)"},
};
/* names as kw_prec.c spells them */
static const kw_cat_value kw_cat_prec[] = {
    {"fp32", "IEEE binary32"},
    {"bf16", "bfloat16 (8-bit exponent, 7-bit mantissa)"},
    {"fp16", "IEEE binary16"},
    {"fp8_e4m3", "OCP FP8 E4M3, per-tensor scale"},
    {"fp8_e5m2", "OCP FP8 E5M2, per-tensor scale"},
    {"int8", "8-bit integers, per-channel scales"},
};
static const kw_cat_value kw_cat_accum[] = {
    {"fp32", "IEEE binary32"},
    {"bf16", "bfloat16"},
    {"fp16", "IEEE binary16"},
};
static const kw_cat_value kw_cat_sparsity[] = {
    {"dense", "every weight kept"},
    {"2_4", "2:4 structured sparsity: two of every four weights pruned (needs accelerator support)"},
};
static const kw_cat_value kw_cat_launch[] = {
    {"eager", "each kernel launched by the host (per-kernel launch cost)"},
    {"graph", "the block's kernels captured as one graph (fixed + per-node cost)"},
};
static const kw_cat_value kw_cat_place[] = {
    {"round_robin", "batches go to cores in turn"},
    {"least_loaded", "a batch goes to the core that frees first"},
    {"stream_affinity", "each stream keeps its core"},
};

/* serial = the softmax runs between the matrix steps (FlashAttention-2);
 * overlap = it runs under them (FlashAttention-3's ping-pong and
 * intra-warpgroup pipelining, arXiv 2407.08608 section 3.1). */
static const kw_cat_value kw_cat_sched[] = {
    {"serial", "softmax between the matrix steps (FlashAttention-2)"},
    {"overlap", "softmax hidden under the matrix work (FlashAttention-3 ping-pong)"},
};

/* kw_moe.c: how the routed experts' GEMMs become kernels, in kw_moe_kernel order */
static const kw_cat_value kw_cat_moe[] = {
    {"grouped", "one grouped GEMM over all experts, each with its own rows (MegaBlocks)"},
    {"batched", "one batched GEMM, every expert padded to the busiest expert's rows"},
    {"per_expert", "one GEMM kernel per expert that received tokens"},
};

#define KW_N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define KW_ENUM(a) KW_CAT_ENUM, 0, 0, NULL, KW_N(a), a

static const kw_cat_knob kw_cat_table[KW_CAT_COUNT] = {
    {KW_CAT_TILE_M, "tile_m", 1, "tiling", "output tile rows (M) of the group's kernels",
     KW_CAT_INT, 1, KW_CAT_TILE_MAX, "rows", 0, NULL, "blocks with that tiling group"},
    {KW_CAT_TILE_N, "tile_n", 1, "tiling", "output tile columns (N)",
     KW_CAT_INT, 1, KW_CAT_TILE_MAX, "columns", 0, NULL, "blocks with that tiling group"},
    {KW_CAT_TILE_K, "tile_k", 1, "tiling", "K chunk streamed per step (and summed per chunk)",
     KW_CAT_INT, 1, KW_CAT_TILE_MAX, "elements", 0, NULL, "blocks with that tiling group"},
    {KW_CAT_SPLIT_K, "split_k", 1, "tiling", "K split into partial sums reduced by an extra kernel",
     KW_CAT_INT, 1, KW_CAT_SPLIT_K_MAX, "parts", 0, NULL, "blocks with that tiling group"},
    {KW_CAT_LOOP_ORDER, "loop_order", 1, "tiling", "which operand panel stays resident",
     KW_ENUM(kw_cat_loop), "blocks with that tiling group"},
    {KW_CAT_DOUBLE_BUFFER, "double_buffer", 1, "tiling", "overlap loads with compute",
     KW_ENUM(kw_cat_db), "blocks with that tiling group"},
    {KW_CAT_FUSE_QKV, "fuse_qkv", 0, "fusion", "merge the Q, K and V projections into one GEMM",
     KW_ENUM(kw_cat_onoff), "blocks with two or more gemm merge=\"qkv\" sharing K"},
    {KW_CAT_FUSE_ATTENTION, "fuse_attention", 0, "fusion", "how attention is split into kernels",
     KW_ENUM(kw_cat_attn), "blocks with an attention operator"},
    {KW_CAT_FUSE_EPILOGUE, "fuse_epilogue", 0, "fusion",
     "bias + activation in the GEMM's epilogue instead of their own kernel",
     KW_ENUM(kw_cat_onoff), "blocks with a gemm/conv epilogue or a gemm followed by act"},
    {KW_CAT_FUSE_GATE_UP, "fuse_gate_up", 0, "fusion", "merge the MLP's gate and up GEMMs",
     KW_ENUM(kw_cat_onoff), "blocks with two or more gemm merge=\"gate_up\""},
    {KW_CAT_FUSE_RESIDUAL_NORM, "fuse_residual_norm", 0, "fusion",
     "residual add and the norm after it as one kernel",
     KW_ENUM(kw_cat_onoff), "blocks with a residual followed by a norm"},
    {KW_CAT_PRECISION, "precision", 0, "precision", "GEMM input precision (weights, activations)",
     KW_ENUM(kw_cat_prec), "every block"},
    {KW_CAT_ACCUM_PRECISION, "accum_precision", 0, "precision", "GEMM accumulation precision",
     KW_ENUM(kw_cat_accum), "every block"},
    {KW_CAT_SOFTMAX_PRECISION, "softmax_precision", 0, "precision", "softmax arithmetic precision",
     KW_ENUM(kw_cat_accum), "blocks with an attention operator"},
    {KW_CAT_SPARSITY, "sparsity", 0, "precision", "structured sparsity of weight operands",
     KW_ENUM(kw_cat_sparsity), "blocks with a weight gemm or conv"},
    {KW_CAT_LAUNCH_MODE, "launch_mode", 0, "runtime", "how kernels are launched",
     KW_ENUM(kw_cat_launch), "every block"},
    {KW_CAT_MAX_BATCH, "max_batch", 0, "runtime", "most requests the batcher puts in one batch",
     KW_CAT_INT, 1, KW_CAT_MAX_BATCH_MAX, "requests", 0, NULL, "every block"},
    {KW_CAT_BATCH_TIMEOUT_US, "batch_timeout_us", 0, "runtime",
     "how long a batch waits for more requests before it is dispatched",
     KW_CAT_REAL, 0, KW_CAT_TIMEOUT_US_MAX, "microseconds", 0, NULL,
     "every block (no effect when max_batch is 1)"},
    {KW_CAT_PLACEMENT, "placement", 0, "runtime", "which core a batch runs on",
     KW_ENUM(kw_cat_place), "every block"},
    {KW_CAT_CORES_PER_REQUEST, "cores_per_request", 0, "runtime", "cores one batch is spread over",
     KW_CAT_INT, 1, KW_CAT_CORES_MAX, "cores", 0, NULL, "every block"},
    {KW_CAT_STAGES, "stages", 1, "tiling",
     "operand pipeline stages (default: 2 with double_buffer on, else 1)",
     KW_CAT_INT, 1, KW_CAT_ORDINAL_MAX, "stages", 0, NULL, "blocks with that tiling group"},
    {KW_CAT_SWIZZLE, "swizzle", 1, "tiling",
     "tile rows grouped in the launch order (rasterisation) for shared-level reuse",
     KW_CAT_INT, 1, KW_CAT_ORDINAL_MAX, "rows", 0, NULL, "blocks with that tiling group"},
    {KW_CAT_CLUSTER, "cluster", 1, "tiling", "units sharing one operand tile by multicast",
     KW_CAT_INT, 1, KW_CAT_ORDINAL_MAX, "units", 0, NULL, "blocks with that tiling group"},
    {KW_CAT_ATTENTION_SCHEDULE, "attention_schedule", 0, "fusion",
     "how attention's softmax is scheduled against its matrix work",
     KW_ENUM(kw_cat_sched), "blocks with an attention operator"},
    {KW_CAT_MOE_KERNEL, "moe_kernel", 0, "fusion", "how the routed experts' GEMMs become kernels",
     KW_ENUM(kw_cat_moe), "blocks with a moe operator"},
    {KW_CAT_TP_DEGREE, "tp_degree", 0, "runtime",
     "tensor-parallel devices: heads and FFN columns split, all-reduce after each row-parallel GEMM",
     KW_CAT_INT, 1, KW_CAT_TP_MAX, "devices", 0, NULL,
     "blocks without a conv (needs the accelerator's interconnect)"},
    {KW_CAT_KV_PAGE_TOKENS, "kv_page_tokens", 0, "runtime",
     "paged KV cache: tokens per page (unfused decode reads whole pages, flash stops at the sequence end)",
     KW_CAT_INT, 1, KW_CAT_PAGE_MAX, "tokens", 0, NULL, "blocks with an attention operator"},
    {KW_CAT_PREFILL_CHUNK_TOKENS, "prefill_chunk_tokens", 0, "runtime",
     "continuous batching: most prompt tokens of one request per iteration (0: the whole prompt)",
     KW_CAT_INT, 0, KW_CAT_TOKENS_MAX, "tokens", 0, NULL, "every block (continuous-batching shapes)"},
    {KW_CAT_TOKEN_BUDGET, "token_budget", 0, "runtime",
     "continuous batching: most tokens (prompt chunks + one per decoding sequence) per iteration",
     KW_CAT_INT, 1, KW_CAT_TOKENS_MAX, "tokens", 0, NULL, "every block (continuous-batching shapes)"},
    {KW_CAT_MAX_SEQS, "max_seqs", 0, "runtime",
     "continuous batching: most sequences running at once (default: max_batch)",
     KW_CAT_INT, 1, KW_CAT_TOKENS_MAX, "sequences", 0, NULL, "every block (continuous-batching shapes)"},
    {KW_CAT_FUSE_NORM_GEMM, "fuse_norm_gemm", 0, "fusion",
     "RMSNorm folded into the next GEMM: its gain in the weights, 1/rms(x) a row scale in the epilogue",
     KW_ENUM(kw_cat_onoff), "blocks with a norm followed by a weight gemm"},
    {KW_CAT_TP_OVERLAP_CHUNKS, "tp_overlap_chunks", 0, "runtime",
     "tensor parallelism: each row-parallel GEMM and its all-reduce pipelined in this many chunks (1: none)",
     KW_CAT_INT, 1, KW_CAT_CHUNKS_MAX, "chunks", 0, NULL,
     "blocks without a conv (with tp_degree above 1)"},
};

const kw_cat_knob *kw_catalogue(void) { return kw_cat_table; }

const kw_cat_knob *kw_catalogue_find(const char *name, const kw_block *b, int *group)
{
    int g = -1;
    const char *field = name;
    const char *dot = strchr(name, '.');
    if (dot) {
        char gname[KW_NAME_MAX];
        size_t gl = (size_t)(dot - name);
        if (gl == 0 || gl >= sizeof gname || !b)
            return NULL;
        memcpy(gname, name, gl);
        gname[gl] = '\0';
        if ((g = kw_mapping_block_group(b, gname)) < 0)
            return NULL;
        field = dot + 1;
    }
    for (int i = 0; i < KW_CAT_COUNT; i++)
        if (kw_cat_table[i].per_group == (dot != NULL) && strcmp(kw_cat_table[i].name, field) == 0) {
            if (group)
                *group = g;
            return &kw_cat_table[i];
        }
    return NULL;
}

int kw_catalogue_value(const kw_cat_knob *k, const char *text, double *out)
{
    if (k->kind == KW_CAT_ENUM) {
        for (int i = 0; i < k->n_values; i++)
            if (strcmp(k->values[i].name, text) == 0) {
                *out = i;
                return 0;
            }
        return -1;
    }
    double v;
    long w;
    if (k->kind == KW_CAT_INT ? kw_num_long(&w, text, LONG_MIN, LONG_MAX) != 0
                              : kw_num_double(&v, text) != 0)
        return -1;
    if (k->kind == KW_CAT_INT)
        v = (double)w;
    if (!(v >= k->min && v <= k->max))
        return -1;
    *out = v;
    return 0;
}

static int kw_cat_count_merge(const kw_block *b, const char *merge, int same_k)
{
    int best = 0;
    for (int i = 0; i < b->n_ops; i++) {
        if (b->ops[i].kind != KW_OP_GEMM || strcmp(b->ops[i].merge, merge) != 0)
            continue;
        int n = 0;
        for (int j = 0; j < b->n_ops; j++)
            n += b->ops[j].kind == KW_OP_GEMM && strcmp(b->ops[j].merge, merge) == 0 &&
                 (!same_k || b->ops[j].k == b->ops[i].k);
        if (n > best)
            best = n;
    }
    return best;
}

/* The merge tag of the gemms a merge knob fuses (kw_cost.c: fuse_qkv merges the
 * gemms with merge="qkv", fuse_gate_up those with merge="gate_up"), NULL for
 * every other knob. */
static const char *kw_cat_merge_tag(const kw_cat_knob *k)
{
    return k->id == KW_CAT_FUSE_QKV ? "qkv" : k->id == KW_CAT_FUSE_GATE_UP ? "gate_up" : NULL;
}

int kw_catalogue_fuses(const kw_cat_knob *k, const kw_block *b, const char *group)
{
    const char *tag = kw_cat_merge_tag(k);
    if (!tag || !group || !kw_catalogue_uses(k, b, NULL))
        return 0;
    for (int i = 0; i < b->n_ops; i++)
        if (b->ops[i].kind == KW_OP_GEMM && strcmp(b->ops[i].merge, tag) == 0 &&
            strcmp(b->ops[i].group, group) == 0)
            return 1;
    return 0;
}

static int kw_cat_has(const kw_block *b, kw_op_kind kind)
{
    for (int i = 0; i < b->n_ops; i++)
        if (b->ops[i].kind == kind)
            return 1;
    return 0;
}

/* op i followed (next in execution order) by an op of kind next */
static int kw_cat_followed(const kw_block *b, kw_op_kind kind, kw_op_kind next)
{
    for (int i = 0; i + 1 < b->n_ops; i++)
        if (b->ops[i].kind == kind && b->ops[i + 1].kind == next)
            return 1;
    return 0;
}

int kw_catalogue_uses(const kw_cat_knob *k, const kw_block *b, const char *group)
{
    if (!b)
        return 0;
    switch (k->id) {
    case KW_CAT_TILE_M: case KW_CAT_TILE_N: case KW_CAT_TILE_K: case KW_CAT_SPLIT_K:
    case KW_CAT_LOOP_ORDER: case KW_CAT_DOUBLE_BUFFER: case KW_CAT_STAGES: case KW_CAT_SWIZZLE:
    case KW_CAT_CLUSTER:
        return group && kw_mapping_block_group(b, group) >= 0;
    case KW_CAT_FUSE_QKV: case KW_CAT_FUSE_GATE_UP: /* kw_cost.c: merges gemms of its tag, equal K */
        return kw_cat_count_merge(b, kw_cat_merge_tag(k), 1) >= 2;
    case KW_CAT_FUSE_ATTENTION: case KW_CAT_SOFTMAX_PRECISION: /* kw_cost.c attention kernels */
    case KW_CAT_ATTENTION_SCHEDULE: case KW_CAT_KV_PAGE_TOKENS:
        return kw_cat_has(b, KW_OP_ATTENTION);
    case KW_CAT_FUSE_EPILOGUE: /* kw_cost.c: an epilogue kernel, or act after a gemm */
        for (int i = 0; i < b->n_ops; i++)
            if ((b->ops[i].kind == KW_OP_GEMM || b->ops[i].kind == KW_OP_CONV) && b->ops[i].epilogue)
                return 1;
        return kw_cat_followed(b, KW_OP_GEMM, KW_OP_ACT);
    case KW_CAT_FUSE_RESIDUAL_NORM: /* kw_cost.c: residual then norm */
        return kw_cat_followed(b, KW_OP_RESIDUAL, KW_OP_NORM);
    case KW_CAT_SPARSITY: /* kw_cost.c: weight operands only */
        for (int i = 0; i < b->n_ops; i++)
            if ((b->ops[i].kind == KW_OP_GEMM || b->ops[i].kind == KW_OP_CONV) && b->ops[i].weights)
                return 1;
        return 0;
    case KW_CAT_PRECISION: case KW_CAT_ACCUM_PRECISION: case KW_CAT_LAUNCH_MODE:
    case KW_CAT_MAX_BATCH: case KW_CAT_BATCH_TIMEOUT_US: case KW_CAT_PLACEMENT:
    case KW_CAT_CORES_PER_REQUEST: case KW_CAT_PREFILL_CHUNK_TOKENS: case KW_CAT_TOKEN_BUDGET:
    case KW_CAT_MAX_SEQS:
        return 1;
    case KW_CAT_MOE_KERNEL: /* kw_moe.c */
        return kw_cat_has(b, KW_OP_MOE);
    case KW_CAT_TP_DEGREE: case KW_CAT_TP_OVERLAP_CHUNKS: /* kw_tp.c refuses a conv block */
        return !kw_cat_has(b, KW_OP_CONV);
    case KW_CAT_FUSE_NORM_GEMM: /* kw_cost.c: a norm whose output only a weight gemm reads */
        for (int i = 0; i + 1 < b->n_ops; i++)
            if (b->ops[i].kind == KW_OP_NORM && b->ops[i + 1].kind == KW_OP_GEMM &&
                b->ops[i + 1].weights)
                return 1;
        return 0;
    case KW_CAT_COUNT:
        break;
    }
    return 0;
}

void kw_catalogue_domain(char *buf, size_t size, const kw_cat_knob *k)
{
    if (size == 0)
        return;
    buf[0] = '\0';
    if (k->kind != KW_CAT_ENUM) {
        snprintf(buf, size, "%s %g..%g (%s)", k->kind == KW_CAT_INT ? "integer" : "decimal", k->min,
                 k->max, k->unit);
        return;
    }
    size_t u = 0;
    for (int i = 0; i < k->n_values && u < size; i++)
        u += (size_t)snprintf(buf + u, size - u, "%s%s", i ? "|" : "", k->values[i].name);
}

void kw_catalogue_hint(char *buf, size_t size, const kw_block *b, const char *name)
{
    kw_suggest s;
    kw_suggest_init(&s, name);
    const kw_cat_knob *t = kw_catalogue();
    for (int i = 0; i < KW_CAT_COUNT; i++) {
        if (!t[i].per_group) {
            kw_suggest_add(&s, t[i].name);
            continue;
        }
        for (int g = 0; b && g < b->n_groups; g++) {
            char full[KW_SUGGEST_NAME_LEN];
            snprintf(full, sizeof full, "%s.%s", b->groups[g], t[i].name);
            kw_suggest_add(&s, full);
        }
    }
    kw_suggest_format(&s, buf, size);
}
