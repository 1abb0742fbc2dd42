/* kw_cost.c - stage 1 of the evaluator: the kernel plan of one batch and the
 * cost of each kernel, from first principles.
 *
 * Design choice: an analytic model, one pass over the block's operators, no
 * allocation and no intermediate plan array. Fusion knobs decide which
 * operators become one kernel; each kernel is then costed in closed form:
 *
 *   GEMM-like kernels (GEMM, implicit-GEMM conv, attention's QK and PV)
 *     FLOPs 2MNK; DRAM traffic from the output-stationary tiled GEMM of
 *     src/model-facts.md#gemm-traffic: MNK(1/Tn + 1/Tm) + MN elements, with the loop
 *     order deciding which operand a resident panel saves, K-outer partial
 *     sums, split-K partials, DRAM bursts; compute time from the roofline
 *     peak of the precision derated for array padding and partial waves.
 *   Flash attention: FlashAttention-2 schedule (Dao, arXiv 2307.08691,
 *     Alg. 1: query blocks outer, K/V streamed), traffic per FlashAttention
 *     Theorem 2 (Dao et al., arXiv 2205.14135): Theta(N^2 d^2 / M) when the
 *     query block is the largest that fits in M.
 *   Elementwise kernels (norm, residual, activation, softmax, unfused
 *     epilogue, split-K reduction): memory-bound, one read and one write of
 *     each tensor, at the accelerator's elementwise fraction of bandwidth.
 *
 * Rules this file commits to (each is tested in tests/test_cost.c):
 *   - kernel time = max(compute, memory) when double-buffered (the next
 *     chunk's load overlaps the current chunk's maths), compute + memory
 *     otherwise; memory = bytes / bandwidth + first-byte latency per kernel.
 *   - kernels run one after another on one stream: batch latency = sum of
 *     kernel times (+ one graph replay cost in graph mode). Launch overhead
 *     is not hidden behind the previous kernel (conservative; the CPU-side
 *     figures of src/model-facts.md#launch are per kernel).
 *   - DRAM bandwidth of the whole chip is available to the kernel whatever
 *     `cores` is; contention between cores is the serving simulation's job.
 *   - without a storage hierarchy in the accelerator file, no cache between
 *     DRAM and the units' SRAM is modelled: every tile comes from DRAM.
 *   - with one (<storage>, <rates>, <accumulate>):
 *     accumulators and score tiles count against the register file where the
 *     registers hold them, SRAM holds the staged operands, one copy per
 *     pipeline stage (`stages`, double_buffer = 2); the units read their tiles
 *     from the largest shared level (L2, VMEM) and DRAM sees compulsory
 *     traffic when the operands in flight fit it, one read of each wave's
 *     panels when the wave's chunks in flight fit (kw_shared_ab; the waves
 *     follow the launch order: row-major, or swizzle groups of M tiles, or of
 *     N tiles with swizzle_n), else every tile read; a cluster of tiles
 *     multicasts each B tile (each A tile with multicast_a); memory time is
 *     the slower of DRAM (at its achieved fraction) and the shared level;
 *     matrix work runs at the precision's achievable fraction, a pipelined
 *     tile pays one chunk of fill (the overlapped attention schedule, a
 *     persistent kernel that loads the next tile's first block under this
 *     one, once per unit; and, on that schedule,
 *     whose pipeline drains at every tile, a memory-bound tile's last block of
 *     maths after its last load; a flash tile of one key block, no pipeline,
 *     its load and then all its maths) and stores its output after its mainloop
 *     (the epilogue, C bytes / DRAM bandwidth, not overlapped; with
 *     store_overlap, a persistent kernel's stores under its next tile, only
 *     one wave's C bytes exposed); attention's softmax (exp on the special
 *     units, vector instructions) adds to the matrix time (serial schedule)
 *     or hides under it (overlap); a precision pair the matrix units do not
 *     offer is an input error, which the evaluator names `infeasible`;
 *     the serial (synchronous mma) attention schedule's matrix work is held
 *     to the bytes its warps load from SRAM over the SRAM level's gb_s, where
 *     the file gives one (each warp its Q rows and the whole K and V blocks);
 *     attention's schedule hides a share h of the shorter of matrix and
 *     softmax time under the longer, max(M, X) + (1 - h) min(M, X), h per
 *     schedule from the accelerator (softmax_hidden_serial / _overlap; unset:
 *     0 and 1); every kernel pays the accelerator's kernel_fixed_us once
 *     (timed alone or launched eagerly: added to its work; inside a CUDA
 *     graph it is part of the node cost, kw_cost_graph_node_us).
 *   - a weight operand is kept N x K (PyTorch nn.Linear's weight is
 *     (out_features, in_features); DeepGEMM's rhs is [n, k]): its tile rows
 *     run along K and round to bursts there.
 *   - an fp8 GEMM writes its output in bf16 (kw_gemm_out_bytes).
 *   - fallback: a kernel whose working set does not fit sram_bytes_per_unit,
 *     whose tile_k exceeds its K per split, or whose split leaves a split
 *     without work, runs on the accelerator's generic kernel (see
 *     kw_gemm_generic). Counted and reported, never repaired.
 *   - a tile larger than the problem is padding waste: the array executes
 *     full tiles (decode M=1 with tile_m=128 executes 128 rows).
 *   - attention: tile_m/tile_n of the attention group are the query block Br
 *     and KV block Bc (flash) or the QK/PV GEMM tiles (unfused). A fused
 *     QK+softmax kernel holds its Tm x N score rows on chip (softmax needs
 *     whole rows) and falls back when they do not fit. Causal prefill skips
 *     tiles above the diagonal ((N+1)/2N of the work); the unfused path still
 *     materialises the full N x N scores. On a hierarchy a flash kernel's
 *     causal tiles, of unequal length, go to the units in launch order,
 *     lightest first, and the last, heaviest one leaves a tail
 *     (kw_causal_list_eff replaces the equal-tile wave efficiency). Prefill runs one instance per query
 *     head (GQA K/V re-read per query head); decode packs the query heads of a
 *     KV group into one instance so the KV cache is read once per KV head.
 *   - split-K has its own reduction kernel (one more launch); merging GEMMs
 *     also merges their reductions and epilogues.
 *   - one storage precision for the block's tensors (the `precision` knob):
 *     weights, activations and KV cache; scores/probabilities in
 *     softmax_precision; partial sums in accum_precision. Quantisation and
 *     scale kernels are not modelled.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "kw_cost.h"
#include "kw_cost_cpu.h"
#include "kw_cost_hook.h"
#include "kw_error.h"
#include "kw_kv.h"
#include "kw_mapping.h"
#include "kw_moe.h"
#include "kw_tp.h"

/* Dependent reads before a paged decode CTA's first K block can be issued and
 * arrive: the sequence length, the page-table entry, the block itself
 * (Dao-AILab/flash-attention c92ca63268836a6ea519e9892eda4895fc31811d
 * csrc/flash_attn/src/flash_fwd_kernel.h compute_attn_1rowblock_splitkv:
 * BlockInfo reads cu_seqlens_k[bidb] (block_info.h; Varlen as the call gives
 * per-sequence lengths), n_block_max follows from it, block_table
 * [block_table_idx] from that, row_offset_k from the entry, and the first gemm
 * waits for the K copy (cp_async_wait<0>); FlashAttention-3 at
 * 4d9ba4f018cca5c8ca6c6f1df08fea75f119b06d hopper/mainloop_fwd_sm90_tma_gmma_ws
 * .hpp load(): n_block_max from the sequence's length, load_page_table before
 * load_K) [S]. */
#define KW_PAGED_CHAIN_READS 3.0
/* FlashAttention-2's split-KV decode CTAs resident per SM: "We multiply number
 * of SMs by 2 to hard-code the fact that we're using 128 threads per block"
 * (flash_api.cpp set_params_splitkv at c92ca632, the SM count its split
 * heuristic fills) [S]. */
#define KW_SPLITKV_CTAS_PER_UNIT 2.0

#define KW_US_PER_S 1e6
#define KW_J_PER_PJ 1e-12
/* kw_model.h: pj_per_flop is given at bf16; other precisions scale with element bytes. */
#define KW_PJ_REF_ELEM_BYTES 2.0
/* 2:4 structured sparsity keeps 2 of every 4 weights plus a 2-bit index per kept
 * value, i.e. 1 bit of metadata per dense element (NVIDIA A100 Tensor Core GPU
 * Architecture whitepaper, "Fine-Grained Structured Sparsity"). */
#define KW_SPARSE_KEPT_FRACTION 0.5
#define KW_SPARSE_META_BYTES_PER_ELEM 0.125
/* fuse_norm_gemm: one fp32 statistic per row (1/rms(x)); RMSNorm kernels
 * compute it in fp32 whatever the storage precision (vLLM's and FlashInfer's
 * rms_norm accumulate in float). */
#define KW_ROWSTAT_BYTES 4.0
/* FlashAttention keeps two statistics per query row (running max m and sum l;
 * arXiv 2205.14135 Alg. 1), in accumulation precision. */
#define KW_FLASH_ROW_STATS 2.0
/* FlashAttention-2 splits the query block across 4 warps, K and V shared by all
 * (Dao, arXiv 2307.08691 section 3.3); an mma.sync tile is 16 rows (PTX ISA,
 * mma.m16n8k16), the fewest rows a warp takes. */
#define KW_FLASH_SYNC_WARPS 4.0
#define KW_FLASH_SYNC_MMA_M 16.0

static const char *const kw_bound_names[KW_BOUND_COUNT] = {"compute", "memory", "launch",
                                                           "fallback"};

const char *kw_cost_bound_name(kw_bound b)
{
    return (unsigned)b < KW_BOUND_COUNT ? kw_bound_names[b] : "?";
}

/* Everything the kernel costing needs, derived once per evaluation. */
typedef struct kw_ctx {
    const kw_accel *a;
    const kw_mapping *m;
    kw_cost *out;
    double peak_flops;    /* dense peak of the mapping precision, share of the chip given */
    double units;         /* compute units given: cores x units_per_core */
    double bw_bytes_per_us;
    double lat_us;
    double burst_bytes;
    double sram_bytes;
    double in_bytes, acc_bytes, sm_bytes;
    double launch_us;     /* per kernel: eager launch or graph node */
    int sparse;           /* 2:4 sparsity asked for and supported */
    /* the storage hierarchy and achievable rates (all neutral when the
     * accelerator declares none: no registers, no shared level, fractions 1) */
    int hier;             /* a <storage> hierarchy is declared: fill rule applies */
    double reg_bytes;     /* register file per unit */
    unsigned reg_holds;   /* what the registers may keep (KW_HOLD_*) */
    double shared_cap_bytes;       /* the shared operand level (L2, VMEM); 0 = none */
    double shared_bytes_per_us;    /* its bandwidth; 0 = not a bound */
    double sram_bytes_per_us;      /* the units' SRAM, whole chip (<level kind="sram" gb_s>); 0 = not a bound */
    double matrix_frac;   /* achievable fraction of the matrix peak, this precision */
    double dram_eff_bytes_per_us;  /* DRAM bandwidth times its achieved fraction */
    double kernel_fixed_us;        /* device-side fixed time per kernel (hierarchy only) */
    double gather_eff_bytes_per_us; /* DRAM rate of a paged-KV gather (kw_flash) */
    double gather_fixed_us;         /* fixed time of a kernel that gathers its paged K/V */
    double hidden_serial, hidden_overlap; /* softmax share hidden under matrix work */
} kw_ctx;

/* GEMM-like kernel, per instance; `count` independent instances (heads x sequences). */
typedef struct kw_gemm {
    double m, n, k, count;
    double a_bytes, b_bytes, c_bytes; /* DRAM bytes per element of A, B (may be fractional), C */
    double out_n;                     /* output columns written (a fused gated act halves them) */
    double extra_read_bytes;          /* per instance: epilogue side input */
    double extra_sram_bytes;          /* e.g. the score row a fused QK+softmax holds */
    int b_kmajor;                     /* B stored N x K, K contiguous (weights as nn.Linear keeps them) */
    double work_frac;                 /* share of A/B tiles visited (causal skips); 1 = dense */
    int sparse;                       /* 2:4 weights: doubled peak */
    int product;                      /* attention's QK/PV: a product inside the attention
                                       * (CPU rules: kw_cost_cpu.h); 0 for a GEMM operator */
    double exps;                      /* softmax exponentials in the kernel (CPU rules only) */
} kw_gemm;

/* Attention, per instance: mq query rows against lk keys of head dim d. */
typedef struct kw_attn {
    double inst, mq, lk, d;
    int causal;
    double table_bytes;   /* paged KV: the block table one K/V stream reads (kw_kv.h) */
    double page;          /* paged KV: tokens per page (decode; 0 = contiguous) */
} kw_attn;

static double kw_rup(double x, double g) { return g > 1.0 ? ceil(x / g) * g : x; }

/* DRAM moves whole bursts: a tile row of row_bytes costs ceil(row/burst) bursts
 * (src/model-facts.md#accelerators: 32 B L2 sectors, 128 B lines; Vela: 128 B DRAM bursts). */
static double kw_burst(const kw_ctx *c, double row_bytes)
{
    if (c->burst_bytes <= 1.0 || row_bytes <= 0.0)
        return 1.0;
    return ceil(row_bytes / c->burst_bytes) * c->burst_bytes / row_bytes;
}

static void kw_name(char *dst, const char *a, const char *b)
{
    size_t la = strnlen(a, KW_NAME_MAX - 1);
    memcpy(dst, a, la);
    size_t lb = b ? strnlen(b, KW_NAME_MAX - 1 - la) : 0;
    if (lb)
        memcpy(dst + la, b, lb);
    dst[la + lb] = '\0';
}

static kw_kernel *kw_emit(kw_ctx *c, const char *name, const char *suffix, kw_prec prec)
{
    kw_cost *o = c->out;
    if (o->n_kernels >= KW_KERNEL_MAX)
        return NULL;
    kw_kernel *k = &o->kernels[o->n_kernels++];
    memset(k, 0, sizeof *k);
    kw_name(k->name, name, suffix);
    k->prec = prec;
    k->pad_efficiency = 1.0;
    k->wave_efficiency = 1.0;
    return k;
}

static int kw_overflow(void)
{
    return kw_error_set(KW_EMODEL, "kernel plan needs more than %d kernels", KW_KERNEL_MAX);
}

/* The device-side fixed time of every kernel: kernel_fixed_us where the
 * accelerator declares a storage hierarchy (the rates came with it), else 0. */
static double kw_fixed_us(const kw_accel *a)
{
    return a->n_levels > 0 ? a->kernel_fixed_us : 0.0;
}

double kw_cost_graph_node_us(const kw_accel *a)
{
    return fmax(a->graph_node_us, kw_fixed_us(a));
}

/* Close a costed kernel: time, launch, bound class, batch totals. */
static void kw_finish(kw_ctx *c, kw_kernel *k, int overlap)
{
    kw_cost *o = c->out;
    double work = overlap ? fmax(k->compute_us, k->memory_us + k->drain_us)
                          : k->compute_us + k->memory_us;
    work += k->epilogue_us + c->kernel_fixed_us;
    k->launch_us = c->launch_us;
    k->time_us = work + k->launch_us;
    k->dram_bytes_per_us = work > 0.0 ? k->dram_bytes / work : 0.0;
    kw_bound work_class = k->fallback ? KW_BOUND_FALLBACK
                          : k->compute_us >= k->memory_us ? KW_BOUND_COMPUTE
                                                          : KW_BOUND_MEMORY;
    k->bound = (!k->fallback && k->launch_us > work) ? KW_BOUND_LAUNCH : work_class;
    o->bound_us[work_class] += work;
    o->bound_us[KW_BOUND_LAUNCH] += k->launch_us;
    o->latency_us += k->time_us;
    o->launch_us += k->launch_us;
    o->flops += k->flops;
    o->dram_bytes += k->dram_bytes;
    o->operand_bytes += k->operand_bytes;
    o->shared_bytes += k->shared_bytes;
    o->fallbacks += k->fallback;
    if (k->dram_bytes_per_us > o->peak_dram_bytes_per_us)
        o->peak_dram_bytes_per_us = k->dram_bytes_per_us;
    o->energy_j += (k->exec_flops * c->a->pj_per_flop * kw_prec_bytes(k->prec) /
                        KW_PJ_REF_ELEM_BYTES +
                    k->dram_bytes * c->a->pj_per_dram_byte) *
                   KW_J_PER_PJ;
}

/* Memory-bound kernel: reads and writes each byte once, at the accelerator's
 * elementwise fraction of DRAM bandwidth (STREAM-style kernels reach a fixed
 * fraction of peak bandwidth; the fraction is the accelerator file's). */
static int kw_elementwise_exp(kw_ctx *c, const char *name, const char *suffix, double read_bytes,
                              double write_bytes, kw_prec prec, double exps)
{
    kw_kernel *k = kw_emit(c, name, suffix, prec);
    if (!k)
        return kw_overflow();
    /* a CPU's softmax pass is scalar exp, not bandwidth (0 elsewhere) */
    k->compute_us = kw_cost_cpu_exp_us(c->a, exps, (int)c->units);
    k->dram_bytes = read_bytes + write_bytes;
    k->operand_bytes = read_bytes;
    k->memory_us = k->dram_bytes / (c->bw_bytes_per_us * c->a->elementwise_efficiency) + c->lat_us;
    k->dram_us = k->memory_us - c->lat_us;
    k->shared_bytes = c->shared_cap_bytes > 0.0 ? k->dram_bytes : 0.0;
    kw_finish(c, k, 1);
    return 0;
}

static int kw_elementwise(kw_ctx *c, const char *name, const char *suffix, double read_bytes,
                          double write_bytes, kw_prec prec)
{
    return kw_elementwise_exp(c, name, suffix, read_bytes, write_bytes, prec, 0.0);
}

/* Partial waves: `tiles` work items over the units given run in ceil(tiles/units)
 * waves; the last wave leaves units idle (wave quantisation, as in NVIDIA's
 * "Matrix Multiplication Background" performance guide). */
static double kw_wave_eff(const kw_ctx *c, double tiles)
{
    if (tiles <= 0.0)
        return 1.0;
    double waves = ceil(tiles / c->units);
    return tiles / (waves * c->units);
}

/* Operand pipeline stages: the stages knob, else double_buffer's 2 or 1. */
static double kw_stages(const kw_tiling *t)
{
    return t->stages > 0 ? (double)t->stages : t->double_buffer ? 2.0 : 1.0;
}

/* Memory time over the hierarchy: DRAM and the shared level stream at the same
 * time (bytes from DRAM pass through the shared level on their way), so the
 * slower of the two bounds the kernel: max(dram / bw_dram, shared / bw_shared)
 * + first-byte latency. Without a shared level this is today's bytes / bw. */
static void kw_levels_time(const kw_ctx *c, kw_kernel *k)
{
    k->dram_us = k->dram_bytes / c->dram_eff_bytes_per_us;
    k->shared_us = c->shared_bytes_per_us > 0.0 ? k->shared_bytes / c->shared_bytes_per_us : 0.0;
    k->memory_us = fmax(k->dram_us, k->shared_us) + c->lat_us;
}

/* Pipeline fill (hierarchy only): a tile's first operand chunk is loaded
 * before any maths, so a pipelined tile of n chunks takes n + 1 chunk-times
 * (the standard prologue of a multistage mainloop, CUTLASS "Efficient GEMM"
 * doc, software pipelining). Charged to compute: factor (n + 1) / n. */
static double kw_fill(const kw_ctx *c, double stages, double chunks)
{
    return (c->hier && stages >= 2.0 && chunks >= 1.0) ? (chunks + 1.0) / chunks : 1.0;
}

static int kw_tiling_ok(const kw_tiling *t, const char *what)
{
    if (t->tile_m < 1 || t->tile_n < 1 || t->tile_k < 1 || t->split_k < 1)
        return kw_error_set(KW_EINPUT, "%s: tiles and split_k must be >= 1 (got %dx%dx%d, split %d)",
                            what, t->tile_m, t->tile_n, t->tile_k, t->split_k);
    return 0;
}

/* The accelerator's generic kernel after a fallback. The accelerator file gives
 * it one figure, its fraction of peak. Its traffic is that of a square tile T
 * sized to fill the SRAM single-buffered (T^2 acc + T^2 (a + b) <= S), no panel
 * residency: a valid schedule, so it respects the Hong-Kung bound. Split-K and
 * the candidate's loop order are ignored (no reduction kernel). */
static void kw_gemm_generic(kw_ctx *c, kw_kernel *k, const kw_gemm *g, double peak, double macs)
{
    double t = floor(sqrt(c->sram_bytes / (c->acc_bytes + g->a_bytes + g->b_bytes)));
    if (t < 1.0)
        t = 1.0;
    double wf = g->work_frac;
    double per = g->m * g->k * ceil(g->n / t) * g->a_bytes * wf +
                 g->k * g->n * ceil(g->m / t) * g->b_bytes * wf + g->m * g->out_n * g->c_bytes +
                 g->extra_read_bytes;
    k->fallback = 1;
    k->dram_bytes = per * g->count;
    k->exec_flops = 2.0 * macs;
    k->compute_us = 2.0 * macs / (peak * c->a->fallback_efficiency) * KW_US_PER_S;
    k->matrix_us = k->compute_us;
    k->shared_bytes = c->shared_cap_bytes > 0.0 ? k->dram_bytes : 0.0;
    kw_levels_time(c, k);
    kw_finish(c, k, 1);
}

/* DRAM bytes of A and B (one instance) when a shared level of capacity C sits
 * between DRAM and the units, `unit_ab` being what the units read from it.
 *   - every operand is read from DRAM at least once (compulsory traffic), and
 *     when the operands of the instances in flight all fit in C, once only;
 *   - else one instance runs in waves of p = units / split_k output tiles; a
 *     wave touches fm tile rows and fn tile columns (launch order row-major
 *     over the output, or `swizzle` rows at a time as CUTLASS's threadblock
 *     swizzle and Triton's GROUP_M order them). The tiles of a wave start
 *     together and walk K in step, so what must stay in C for the wave's
 *     tiles to share their chunks is the chunks in flight: (fm Tm + fn Tn) Tk
 *     elements per stage. When they fit, each wave reads its fm A panels and
 *     fn B panels from DRAM once: waves x (fm Tm + fn Tn) K, bounded below by
 *     compulsory and above by unit_ab;
 *   - when they do not fit, the shared level does not help: unit_ab.
 * Conservative: panels reused by consecutive waves are charged again. */
static double kw_shared_ab(const kw_ctx *c, const kw_tiling *t, const kw_gemm *g, double nm,
                           double nn, double unit_ab, double fa, double fb)
{
    double cap = c->shared_cap_bytes, wf = g->work_frac;
    double comp = (g->m * g->k * g->a_bytes * fa + g->k * g->n * g->b_bytes * fb) * wf;
    double tiles = nm * nn, s = t->split_k;
    /* instances in flight: as many as the units hold at once, never more than
     * there are (one GEMM of few tiles is one instance, not units / tiles) */
    double conc = fmin(floor(c->units / (tiles * s)), g->count);
    if (conc < 1.0)
        conc = 1.0;
    if (conc * comp <= cap)
        return fmin(comp, unit_ab);
    if (conc > 1.0)
        return unit_ab;
    double p = fmax(1.0, fmin(tiles, floor(c->units / s)));
    double w = t->swizzle > 1 ? (double)t->swizzle : 1.0;
    /* rows: the dimension the launch order walks slowest (M for mnk/kmn, N for
     * nmk or a kernel whose swizzle groups run along N: DeepGEMM's scheduler
     * groups N blocks when it multicasts A, deep_gemm/include/deep_gemm/
     * scheduler/gemm.cuh get_swizzled_block_idx at deepseek-ai/DeepGEMM
     * 88965b078186ee7510ab9fc4f1d5ebc19adfa8d1, and always at a6d97a1c's
     * scheduler.cuh, kNumNBlocksPerGroup) */
    int n_outer = t->loop == KW_LOOP_NMK || t->swizzle_n;
    double rows = n_outer ? nn : nm, cols = n_outer ? nm : nn;
    double fr, fc;
    if (w * cols >= p) {
        fr = fmin(w, rows);
        fc = fmin(cols, ceil(p / fr));
    } else {
        fc = cols;
        fr = fmin(rows, ceil(p / cols));
    }
    double fm = n_outer ? fc : fr, fn = n_outer ? fr : fc;
    double panel_elems = fm * t->tile_m * g->a_bytes * fa + fn * t->tile_n * g->b_bytes * fb;
    double in_flight = panel_elems * t->tile_k * kw_stages(t);
    if (in_flight > cap)
        return unit_ab;
    return fmin(unit_ab, fmax(comp, ceil(tiles / p) * panel_elems * g->k * wf));
}

/* One tiled GEMM kernel (+ its split-K reduction kernel). */
static int kw_gemm_cost(kw_ctx *c, const kw_tiling *t, const kw_gemm *g, const char *name)
{
    int rc = kw_tiling_ok(t, name);
    if (rc != 0)
        return rc;
    kw_kernel *k = kw_emit(c, name, NULL, c->m->precision);
    if (!k)
        return kw_overflow();
    const kw_accel *a = c->a;
    double tm = t->tile_m, tn = t->tile_n, tk = t->tile_k, s = t->split_k;
    double dbuf = kw_stages(t); /* double_buffer generalised: operand stages */
    double acc = c->acc_bytes;
    double kp = ceil(g->k / s); /* K per split */
    /* SRAM per unit: C tile in accumulation precision + A and B chunks, one per
     * stage (src/model-facts.md#gemm-traffic). When the accelerator keeps accumulators
     * in registers (GPU: 256 KB per SM, wgmma accumulates in registers, PTX
     * ISA), the C tile counts against the register file instead. */
    double acc_tile = tm * tn * acc;
    int acc_regs = (c->reg_holds & KW_HOLD_ACCUMULATORS) != 0;
    double acc_sram = acc_regs ? 0.0 : acc_tile;
    double regs = acc_regs ? acc_tile : 0.0;
    double ws = acc_sram + tk * (tm * g->a_bytes + tn * g->b_bytes) * dbuf + g->extra_sram_bytes;
    double macs = g->m * g->n * g->k * g->count * g->work_frac;
    double peak = c->peak_flops * (g->sparse ? 2.0 : 1.0);
    k->sram_bytes = (uint64_t)ws;
    k->reg_bytes = (uint64_t)regs;
    k->flops = 2.0 * macs;                        /* 2MNK */
    k->operand_bytes = macs * (g->a_bytes + g->b_bytes); /* one A and one B element per MAC */
    if (a->cpu) {
        /* A CPU: cache-blocked products on its cores (kw_cost_cpu.h); no
         * fallback, split-K only for a GEMM operator. */
        kw_cpu_mm mm = {.m = g->m, .n = g->n, .k = g->k, .count = g->count, .a_bytes = g->a_bytes,
                        .b_bytes = g->b_bytes, .c_bytes = g->c_bytes, .prec = c->m->precision,
                        .product = g->product};
        kw_cost_cpu_mm(k, a, t, &mm, (int)c->units);
        k->compute_us += kw_cost_cpu_exp_us(a, g->exps, (int)c->units);
        kw_finish(c, k, 1);
        if (s > 1.0 && !g->product && g->k >= s)
            return kw_elementwise(c, name, "_reduce", s * g->m * g->n * acc * g->count,
                                  g->m * g->out_n * g->c_bytes * g->count, c->m->accum_precision);
        return 0;
    }
    if (ws > c->sram_bytes || regs > c->reg_bytes || tk > kp || s > g->k) {
        kw_gemm_generic(c, k, g, peak, macs);
        return 0;
    }
    double nm = ceil(g->m / tm), nn = ceil(g->n / tn), nk = ceil(kp / tk);
    double a_reads, b_reads, partial_rw = 0.0, panel;
    switch (t->loop) {
    case KW_LOOP_NMK:
        /* N outer: the B column panel (K x Tn) stays resident across the M tiles
         * when it fits, so B is read once; A is re-read per N tile. */
        panel = kp * tn * g->b_bytes + acc_sram + tk * tm * g->a_bytes * dbuf +
                g->extra_sram_bytes;
        b_reads = panel <= c->sram_bytes ? 1.0 : nm;
        a_reads = nn;
        break;
    case KW_LOOP_KMN:
        /* K outer, M, then N inner: each A chunk is reused across the N loop (A read
         * once), B is re-read per M tile, and the C partial sums are written and
         * read back once per K chunk but the last (2 (K/Tk - 1) MN per split). */
        a_reads = 1.0;
        b_reads = nm;
        partial_rw = 2.0 * (nk - 1.0) * s;
        break;
    default:
        /* M outer (output-stationary): A row panel (Tm x K) resident across the N
         * tiles when it fits, else A re-read per N tile; B re-read per M tile. */
        panel = tm * kp * g->a_bytes + acc_sram + tk * tn * g->b_bytes * dbuf +
                g->extra_sram_bytes;
        a_reads = panel <= c->sram_bytes ? 1.0 : nn;
        b_reads = nm;
        break;
    }
    /* Divisible shapes, no panel: MK (N/Tn) + KN (M/Tm) + MN = MNK(1/Tn + 1/Tm) + MN
     * (src/model-facts.md#gemm-traffic). Each tile row rounds up to DRAM bursts. */
    double row_n = fmin(tn, g->n);
    double fa = kw_burst(c, fmin(tk, kp) * g->a_bytes);
    /* a B tile row runs along N (K x N row-major) or, for weights kept N x K
     * (PyTorch nn.Linear's (out_features, in_features); DeepGEMM's "NT"
     * rhs [n, k]), along K */
    double fb = kw_burst(c, (g->b_kmajor ? fmin(tk, kp) : row_n) * g->b_bytes);
    double fc = kw_burst(c, fmin(tn, g->out_n) * g->c_bytes);
    double facc = kw_burst(c, row_n * acc);
    double mn = g->m * g->n;
    double a_unit = g->m * g->k * a_reads * g->a_bytes * fa * g->work_frac;
    double b_unit = g->k * g->n * b_reads * g->b_bytes * fb * g->work_frac;
    double rest = partial_rw * mn * acc * facc + g->extra_read_bytes;
    /* Split-K, parallel form (CUTLASS GemmSplitKParallel): each split writes its
     * MN partial in accumulation precision; a reduction kernel reads the split_k
     * partials and writes the output (and applies the epilogue). */
    rest += s > 1.0 ? s * mn * acc * facc : g->m * g->out_n * g->c_bytes * fc;
    k->dram_bytes = (a_unit + b_unit + rest) * g->count;
    if (c->shared_cap_bytes > 0.0) {
        /* Multicast (Hopper thread-block clusters, TMA multicast; CUDA
         * programming guide "Thread Block Clusters"): `cluster` tiles adjacent
         * along M share each B tile, read once from the shared level for all;
         * with multicast_a the tiles lie along N and share each A tile
         * (DeepGEMM's cluster_n, kIsTMAMulticastOnA: sm90_bf16_gemm.cuh at
         * 88965b07 multicasts the A copy to kNumTMAMulticast CTAs). */
        double cl = t->cluster > 1 ? fmin((double)t->cluster, (double)c->a->multicast_max) : 1.0;
        if (cl < 1.0)
            cl = 1.0;
        double unit_ab = t->multicast_a ? a_unit / cl + b_unit : a_unit + b_unit / cl;
        k->shared_bytes = (unit_ab + rest) * g->count;
        k->dram_bytes = (kw_shared_ab(c, t, g, nm, nn, unit_ab, fa, fb) + rest) * g->count;
    }
    /* Array padding: every tile pads up to the array granule and edge tiles run
     * whole, so the array executes nm*ceil(Tm)_am x nn*ceil(Tn)_an x s*nk*ceil(Tk)_ak. */
    double exec_macs = nm * kw_rup(tm, a->array_m) * nn * kw_rup(tn, a->array_n) * s * nk *
                       kw_rup(tk, a->array_k) * g->count * g->work_frac;
    k->tiles = ceil(nm * nn * s * g->count * g->work_frac);
    k->wave_efficiency = kw_wave_eff(c, k->tiles);
    k->pad_efficiency = exec_macs > 0.0 ? macs / exec_macs : 1.0;
    k->exec_flops = 2.0 * exec_macs;
    /* Roofline (Williams, Waterman, Patterson, CACM 2009) with the derates:
     * flops / (peak x units share x pad_eff x wave_eff). */
    k->matrix_us = k->exec_flops / (peak * c->matrix_frac * k->wave_efficiency) * KW_US_PER_S;
    k->compute_us = k->matrix_us * kw_fill(c, dbuf, nk);
    kw_levels_time(c, k);
    /* Epilogue (hierarchy only): a tile stores its output after its last K
     * chunk, and the next tile on the unit starts after it, so the stores of
     * every wave add C bytes / DRAM bandwidth to the kernel (CUTLASS's
     * non-persistent mainloop + epilogue).
     * store_overlap: a persistent kernel that waits for a tile's TMA store
     * only before the next tile's epilogue reuses its staging buffer runs
     * that store under the next tile's mainloop (DeepGEMM's bf16 GEMM,
     * deep_gemm/include/deep_gemm/impls/sm90_bf16_gemm.cuh at 88965b07:
     * tma_store_wait<0>() before the STSM writes of the next tile, none after
     * tma_store_arrive(); its fp8 GEMM at a6d97a1c waits right after the
     * arrive, fp8_gemm.cuh, so its stores stay exposed). Only each unit's
     * last store is then exposed: one wave's C bytes, C / waves, with
     * waves = ceil(tiles / units). The bytes still count in the DRAM time. */
    if (c->hier) {
        double waves = t->store_overlap ? ceil(k->tiles / c->units) : 1.0;
        k->epilogue_us = (s > 1.0 ? s * mn * acc * facc : g->m * g->out_n * g->c_bytes * fc) *
                         g->count / c->dram_eff_bytes_per_us / fmax(waves, 1.0);
    }
    kw_finish(c, k, dbuf >= 2.0);
    if (s > 1.0)
        return kw_elementwise(c, name, "_reduce", s * mn * acc * g->count,
                              g->m * g->out_n * g->c_bytes * g->count, c->m->accum_precision);
    return 0;
}

/* Generic attention after a fused attention kernel falls back: the standard
 * algorithm's traffic, Theta(Nd + N^2) (FlashAttention Theorem 2): Q, K, V read
 * and O written once, the score matrix written and read once. */
static void kw_attn_generic(kw_ctx *c, kw_kernel *k, const kw_attn *at, double macs)
{
    double per = (2.0 * at->mq * at->d + 2.0 * at->lk * at->d) * c->in_bytes +
                 2.0 * at->mq * at->lk * c->sm_bytes + at->table_bytes;
    k->fallback = 1;
    k->dram_bytes = per * at->inst;
    k->exec_flops = 2.0 * macs;
    k->compute_us = 2.0 * macs / (c->peak_flops * c->a->fallback_efficiency) * KW_US_PER_S;
    k->matrix_us = k->compute_us;
    k->shared_bytes = c->shared_cap_bytes > 0.0 ? k->dram_bytes : 0.0;
    kw_levels_time(c, k);
    kw_finish(c, k, 1);
}

/* Causal query block i (of Br rows) sees keys [0, min(N, (i+1) Br)): summed over
 * the nq = ceil(N/Br) blocks, Br nq (nq - 1) / 2 + N keys (the last block is cut at N). */
static double kw_causal_keys(double br, double nq, double n) { return br * nq * (nq - 1.0) / 2.0 + n; }

/* Causal tiles differ in length: query block m (of Br rows) visits
 * L_m = min(nkb, ceil((m + 1) Br / Bc)) key blocks. Both FlashAttention
 * kernels hand them to the units in launch order, query blocks fastest, so
 * each head's lightest tile first and the last head's heaviest tile last:
 * FlashAttention-2's grid is (num_m_block, b, h) with m_block = blockIdx.x
 * (csrc/flash_attn/src/flash_fwd_launch_template.h run_flash_fwd and
 * flash_fwd_kernel.h compute_attn, Dao-AILab/flash-attention 7f67966c),
 * and FlashAttention-3's causal kernel takes the next tile from an atomic
 * counter whose index has m_block fastest (hopper/tile_scheduler.hpp
 * DynamicPersistentTileScheduler, prefetch_next_work and get_block_coord,
 * and flash_fwd_launch_template.h at 74b0761f). A unit that frees takes the
 * next tile (list scheduling in launch order). When the last, heaviest tile
 * starts, the other units are partway through tiles of the same mix, each
 * with E[L^2] / (2 E[L]) blocks left on average (the mean residual life of
 * a renewal process), so the kernel spans W / P + L_max - E[L^2] / (2 E[L])
 * block-times, W the blocks of all inst instances and P the units, and at
 * least L_max. Returned as the efficiency (W / P) / span, which replaces the
 * equal-tile wave efficiency. */
static double kw_causal_list_eff(double br, double bc, double nq, double nkb, double inst,
                                 double units)
{
    double s1 = 0.0, s2 = 0.0, lmax = 0.0;
    for (double m = 0.0; m < nq; m += 1.0) {
        double l = fmin(nkb, ceil((m + 1.0) * br / bc));
        s1 += l;
        s2 += l * l;
        lmax = fmax(lmax, l);
    }
    if (s1 <= 0.0 || units <= 0.0)
        return 1.0;
    double per_unit = s1 * inst / units;
    return per_unit / fmax(lmax, per_unit + lmax - s2 / (2.0 * s1));
}

/* Flash attention: one kernel, FlashAttention-2 schedule (query block Br =
 * tile_m outer, K/V blocks of Bc = tile_n streamed, online softmax); split_k
 * splits the keys (Flash-Decoding, Dao et al. 2023) with a reduction kernel. */
static int kw_flash(kw_ctx *c, const kw_tiling *t, const kw_attn *at, const char *name)
{
    int rc = kw_tiling_ok(t, name);
    if (rc != 0)
        return rc;
    kw_kernel *k = kw_emit(c, name, "_flash", c->m->precision);
    if (!k)
        return kw_overflow();
    const kw_accel *a = c->a;
    double br = t->tile_m, bc = t->tile_n, s = t->split_k, d = at->d;
    double dbuf = kw_stages(t);
    double in = c->in_bytes, acc = c->acc_bytes;
    /* SRAM: Q block, K and V blocks (one per stage), the Br x Bc score/probability
     * tile, the O accumulator and the row statistics. Where the accelerator keeps
     * scores and accumulators in registers (FlashAttention-3, arXiv 2407.08608
     * section 3: S and O live in registers; only Q, K and V are staged in shared
     * memory), those count against the register file instead. */
    double score = br * bc * c->sm_bytes;
    double oacc = br * d * acc + KW_FLASH_ROW_STATS * br * acc;
    int sc_regs = (c->reg_holds & KW_HOLD_SCORES) != 0;
    int acc_regs = (c->reg_holds & KW_HOLD_ACCUMULATORS) != 0;
    double ws = br * d * in + 2.0 * bc * d * in * dbuf + (sc_regs ? 0.0 : score) +
                (acc_regs ? 0.0 : oacc);
    double regs = (sc_regs ? score : 0.0) + (acc_regs ? oacc : 0.0);
    double pairs = at->causal ? at->mq * (at->mq + 1.0) / 2.0 : at->mq * at->lk;
    double macs = 2.0 * pairs * d * at->inst; /* QK^T and PV: d MACs per score each */
    k->sram_bytes = (uint64_t)ws;
    k->reg_bytes = (uint64_t)regs;
    k->flops = 2.0 * macs;
    k->operand_bytes = macs * 2.0 * in;
    if (a->cpu) { /* a CPU's flash loop (kw_cost_cpu.h); split_k does not apply */
        kw_cost_cpu_flash(k, a, t, at->inst, at->mq, at->lk, d, at->causal, in, c->m->precision,
                          (int)c->units);
        kw_finish(c, k, 1);
        return 0;
    }
    double nkb = ceil(at->lk / bc);
    if (ws > c->sram_bytes || regs > c->reg_bytes || s > nkb) {
        kw_attn_generic(c, k, at, macs);
        return 0;
    }
    double nq = ceil(at->mq / br);
    /* FlashAttention Theorem 2 (arXiv 2205.14135): K and V are streamed once per
     * query block, Q read and O written once: 2 d N (N / Br) + 2 N d elements;
     * with Br ~ M / d that is Theta(N^2 d^2 / M). Causal blocks stop at the diagonal. */
    double keys = at->causal ? kw_causal_keys(br, nq, at->lk) : nq * at->lk;
    double frow = kw_burst(c, d * in);
    /* paged KV: each query block's K/V stream looks its pages up in the block table */
    double per = 2.0 * keys * d * in * frow + at->mq * d * in * frow + nq * at->table_bytes;
    double fpart = kw_burst(c, d * acc);
    double out = s > 1.0 ? s * at->mq * (d + KW_FLASH_ROW_STATS) * acc * fpart : at->mq * d * in * frow;
    per += out;
    k->dram_bytes = per * at->inst;
    if (c->shared_cap_bytes > 0.0) {
        /* The query blocks of one head are launched together (grid: query
         * blocks fastest) and all stream the same K and V: when the K/V of the
         * heads in flight fit in the shared level, DRAM sees each once
         * (compulsory: Q, K, V read and O written once); otherwise every query
         * block's stream reaches DRAM, as without the level. */
        double tiles_inst = nq * s;
        double heads = fmax(1.0, ceil(c->units / tiles_inst));
        double kv = 2.0 * at->lk * d * in * frow;
        k->shared_bytes = k->dram_bytes;
        if (heads * kv <= c->shared_cap_bytes)
            k->dram_bytes = (kv + at->mq * d * in * frow + out + nq * at->table_bytes) * at->inst;
    }
    /* Executed MACs: every visited (query block, key block) pair runs a padded
     * QK^T tile (Br x Bc x d) and a padded PV tile (Br x d x Bc). */
    double blocks;
    if (at->causal)
        blocks = fmod(br, bc) == 0.0 ? (br / bc) * nq * (nq - 1.0) / 2.0 + nkb
                                     : keys / bc + 0.5 * nq;
    else
        blocks = nq * s * ceil(ceil(at->lk / s) / bc);
    double rbr = kw_rup(br, a->array_m);
    double per_block = rbr * kw_rup(bc, a->array_n) * kw_rup(d, a->array_k) +
                       rbr * kw_rup(d, a->array_n) * kw_rup(bc, a->array_k);
    double exec_macs = blocks * per_block * at->inst;
    if (exec_macs < macs)
        exec_macs = macs; /* the causal approximation never claims less than the maths */
    k->tiles = nq * s * at->inst;
    k->wave_efficiency = kw_wave_eff(c, k->tiles);
    /* causal tiles of unequal length, dispatched in launch order (hierarchy only) */
    if (at->causal && s <= 1.0 && c->hier)
        k->wave_efficiency = kw_causal_list_eff(br, bc, nq, nkb, at->inst, c->units);
    k->pad_efficiency = macs / exec_macs;
    k->exec_flops = 2.0 * exec_macs;
    /* Matrix work at the achievable fraction of the peak; a serial schedule
     * (FlashAttention-2: synchronous mma, about 2/3 of Hopper's peak,
     * arXiv 2407.08608 section 2) at most the synchronous-MMA fraction. */
    double frac = c->matrix_frac;
    if (!c->m->attn_overlap && c->a->sync_matrix_fraction > 0.0)
        frac = fmin(frac, c->a->sync_matrix_fraction);
    k->matrix_us = k->exec_flops / (c->peak_flops * frac * k->wave_efficiency) * KW_US_PER_S;
    /* A serial schedule's synchronous mma (mma.sync) takes its operands from
     * registers, each warp loading its own from SRAM: FlashAttention-2 splits
     * the query block over KW_FLASH_SYNC_WARPS warps that all read the whole
     * K and V blocks (arXiv 2307.08691 section 3.3), and its kernels keep Q in
     * shared memory, not registers (Flash_fwd_kernel_traits<..., Is_Q_in_regs
     * = false, ...> in every run_mha_fwd_hdim* of Dao-AILab/flash-attention
     * csrc/flash_attn/src/flash_fwd_launch_template.h). So per key block the
     * SRAM serves each warp its Q rows, K block and V block, besides the K and
     * V written into it (the copy takes the same banks). Where the accelerator
     * gives its SRAM bandwidth, the matrix work runs no faster than those
     * bytes: max(matrix, SRAM bytes / bandwidth). Fewer rows a warp, more
     * bytes a FLOP: 16-row warps (head dim 256 at 64 x 64 on H100) move twice
     * the bytes of 32-row ones. The overlap schedule (wgmma, a warpgroup of
     * 64 rows reading its shared operands in place) is not held to it. */
    if (!c->m->attn_overlap && c->sram_bytes_per_us > 0.0) {
        double wrows = fmax(br / KW_FLASH_SYNC_WARPS, KW_FLASH_SYNC_MMA_M);
        double warps = ceil(br / wrows);
        double sram_block = (warps * (wrows * d + 2.0 * bc * d) + 2.0 * bc * d) * in;
        double chip_units = (double)c->a->cores * c->a->units_per_core;
        k->sram_us = blocks * at->inst * sram_block /
                     (c->sram_bytes_per_us * c->units / chip_units * k->wave_efficiency);
        k->matrix_us = fmax(k->matrix_us, k->sram_us);
    }
    /* Softmax: one exp per executed score on the special-function units and
     * softmax_vector_ops fp32 instructions (scale, max, sum, convert) on the
     * vector units (FlashAttention-3 section 3.1: 3.9 TFLOPS of exp against
     * 989 TFLOPS of matmul). serial: matrix + softmax; overlap: the softmax of
     * one warpgroup runs under the other's matrix work, max(matrix, softmax). */
    double scores = blocks * br * bc * at->inst;
    double nonm = 0.0;
    if (c->a->special_ops_per_s > 0.0)
        nonm += scores / c->a->special_ops_per_s;
    if (c->a->vector_ops_per_s > 0.0)
        nonm += scores * c->a->softmax_vector_ops / c->a->vector_ops_per_s;
    /* the rates are the whole chip's; the batch runs on c->units of them */
    double chip_units = (double)c->a->cores * c->a->units_per_core;
    k->nonmatrix_us = nonm * chip_units / c->units / k->wave_efficiency * KW_US_PER_S;
    /* The schedule hides a share h of the shorter of the two under the longer:
     * max(M, X) + (1 - h) min(M, X); h = 0 is fully serial, 1 fully overlapped. */
    double h = c->m->attn_overlap ? c->hidden_overlap : c->hidden_serial;
    k->compute_us = fmax(k->matrix_us, k->nonmatrix_us) +
                    (1.0 - h) * fmin(k->matrix_us, k->nonmatrix_us);
    double unfilled_us = k->compute_us;
    double tile_blocks = blocks / (nq * s);
    /* A tile of one key block is not a pipeline: its one K/V load precedes
     * all its maths (FlashAttention-2's split-KV decode,
     * csrc/flash_attn/src/flash_fwd_kernel.h compute_attn_1rowblock_splitkv
     * at Dao-AILab/flash-attention 3cea2fb6: Q and K are copied, then
     * cp_async_wait<0> before the first gemm; V's copy is issued after it and
     * waited for before the PV gemm; the block loop runs once when
     * ceil(seqlen_k / kBlockN) = 1). Both branches of the pipeline's closed
     * form, max(n m + c, n c + m), are then c + m: the kernel's memory time
     * plus its maths, charged below as the drain on every schedule, not as a
     * fill that doubles the maths. */
    int one_block = c->hier && dbuf >= 2.0 && tile_blocks <= 1.0;
    /* FlashAttention-3's forward (the overlap schedule) is persistent: one CTA
     * per SM loops over tiles (hopper/flash_fwd_launch_template.h: grid =
     * Scheduler::get_grid_dim(..., 132) of StaticPersistentTileScheduler;
     * tile_scheduler.hpp get_next_work: tile_idx + gridDim.x; Dao-AILab/
     * flash-attention 7f67966c, the paper's release). Its producer warp loads
     * the next tile's first K block as soon as a stage frees and its Q once
     * the consumers say smem_q is free, which they do before the tile's last
     * PV GEMM (mainloop_fwd_sm90_tma_gmma_ws.hpp load() lines 238-254, mma()
     * lines 493-494), so a tile's first block is in shared memory when its
     * maths start: the pipeline fills once per unit, not once per tile (the
     * same order at 74b0761f and 4d9ba4f, whose consumer also fetches the next
     * tile "before the epilogue so that the next tile is ready to go",
     * flash_fwd_kernel_sm90.h). Its O store still precedes the next tile's
     * other K and V loads (the producer waits on barrier_O, load() line 259,
     * which the consumers arrive on only after tma_store_wait, mma() lines
     * 399-408): the epilogue below stays per tile. */
    double tile_fill = kw_fill(c, dbuf, tile_blocks);
    double unit_chunks = tile_blocks * ceil(k->tiles / c->units);
    if (!one_block)
        k->compute_us *= c->m->attn_overlap ? kw_fill(c, dbuf, unit_chunks) : tile_fill;
    /* FlashAttention-3's forward (the overlap schedule) keeps its O tile in
     * the shared memory of V (hopper/flash_fwd_kernel_sm90.h SharedStorage:
     * smem_o lines up with smem_v) and its producer loads a tile's first V
     * block only after the previous tile's O is stored (mainloop_fwd_sm90_
     * tma_gmma_ws.hpp load(): barrier_O.wait), both at Dao-AILab/flash-attention
     * 4d9ba4f018cca5c8ca6c6f1df08fea75f119b06d. So the pipeline drains at every
     * tile: a memory-bound tile's last block of maths follows its last load
     * (the memory-bound branch of a software pipeline's n m + c; the
     * compute-bound branch, m + n c, is the fill above). One block per tile
     * round: a tile's fill share, charged after the memory time. */
    if (one_block)
        k->drain_us = unfilled_us;
    else if (c->m->attn_overlap)
        k->drain_us = unfilled_us * (tile_fill - 1.0);
    kw_levels_time(c, k);
    if (c->hier) /* the O tile's store after the last K/V block, as a GEMM's epilogue */
        k->epilogue_us = out * at->inst / c->dram_eff_bytes_per_us;
    /* Paged K/V without a bulk tile copy (src/model-facts.md#paged-kv-gather):
     * FlashAttention-3 copies a paged K/V block by TMA only when the page holds
     * whole key blocks and the packed query rows fill more than one query block
     * (Dao-AILab/flash-attention hopper/flash_api.cpp get_pagedkv_tma:
     * page_size % kBlockN == 0 && seqlen_q * h / h_k > kBlockM); otherwise each
     * row is gathered through the page table (cp.async). Such a kernel streams at
     * the accelerator's gather DRAM fraction and pays its gather fixed time once;
     * both default to the ordinary figures (dram_fraction, none). */
    if (at->page > 0.0 && (fmod(at->page, bc) != 0.0 || at->mq <= br)) {
        k->dram_us = k->dram_bytes / c->gather_eff_bytes_per_us;
        k->memory_us = fmax(k->dram_us, k->shared_us) + c->lat_us;
        k->epilogue_us += c->gather_fixed_us;
    }
    /* Paged K/V: a decode CTA's first K block waits for two dependent reads
     * (src/model-facts.md#paged-kv-chain): its sequence's length, which bounds
     * its key blocks, then the page-table entry of its first block, whose
     * index that bound gives; only then can the block's address be formed.
     * So the first-byte latency is paid KW_PAGED_CHAIN_READS times in a row.
     * The serial schedule's kernel (FlashAttention-2's split-KV decode) is not
     * persistent: one CTA per tile, KW_SPLITKV_CTAS_PER_UNIT of them resident
     * on a unit, so every round of tiles pays the chain again. The overlap
     * schedule's (FlashAttention-3's) is persistent, and its producer fetches
     * a later tile's length, page table and K while this tile computes (as it
     * fills its pipeline once per unit, above): the chain once. */
    if (c->hier && at->page > 0.0) {
        double rounds = c->m->attn_overlap
                            ? 1.0
                            : ceil(k->tiles / (KW_SPLITKV_CTAS_PER_UNIT * c->units));
        k->memory_us += (KW_PAGED_CHAIN_READS * rounds - 1.0) * c->lat_us;
    }
    kw_finish(c, k, dbuf >= 2.0);
    if (s > 1.0)
        return kw_elementwise(c, name, "_reduce",
                              s * at->mq * (d + KW_FLASH_ROW_STATS) * acc * at->inst,
                              at->mq * d * in * at->inst, c->m->accum_precision);
    return 0;
}

static const kw_tiling kw_default_tiling = {KW_DEFAULT_TILE_M, KW_DEFAULT_TILE_N, KW_DEFAULT_TILE_K,
                                            1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0};

static const kw_tiling *kw_tiling_of(const kw_ctx *c, const kw_block *b, const kw_op *op)
{
    int g = kw_mapping_block_group(b, op->group);
    return (g >= 0 && g < KW_GROUP_MAX) ? &c->m->tiling[g] : &kw_default_tiling;
}

/* Attention as the fusion knob plans it: none = QK, softmax, PV kernels with
 * the N x N scores written and read back; qk_softmax = QK+softmax in one kernel
 * (P written once, read by PV); flash = one kernel. */
static int kw_attention(kw_ctx *c, const kw_block *b, const kw_op *op, const kw_shape *s,
                        double seqs)
{
    if (op->heads < 1 || op->head_dim < 1)
        return kw_error_set(KW_EINPUT, "attention '%s': heads and head_dim must be >= 1", op->name);
    int kvh = op->kv_heads > 0 ? op->kv_heads : op->heads;
    if (op->heads % kvh != 0)
        return kw_error_set(KW_EINPUT, "attention '%s': heads %d not a multiple of kv_heads %d",
                            op->name, op->heads, kvh);
    kw_attn at;
    at.d = op->head_dim;
    if (s->phase == KW_PHASE_DECODE) {
        /* One new query per sequence and head; the heads of a KV group share their
         * K/V cache rows (GQA packing), so one instance per (sequence, KV head)
         * with heads/kv_heads query rows. The cache is read from DRAM. */
        at.inst = seqs * kvh;
        at.mq = op->heads / kvh;
        /* whole pages, or up to the sequence end for a flash kernel (kw_kv.c) */
        at.lk = kw_kv_read_tokens(s->kv_len, c->m->kv_page_tokens,
                                  c->m->fuse_attention == KW_ATTN_FLASH);
        at.causal = 0;
        at.table_bytes = kw_kv_table_bytes(s->kv_len, c->m->kv_page_tokens);
        at.page = c->m->kv_page_tokens;
    } else {
        at.inst = seqs * op->heads;
        at.mq = s->seq;
        at.lk = s->seq;
        at.causal = op->causal != 0;
        at.table_bytes = 0.0; /* a prompt's own K/V come from the QKV GEMM, not the cache */
        at.page = 0.0;
    }
    const kw_tiling *t = kw_tiling_of(c, b, op);
    if (c->m->fuse_attention == KW_ATTN_FLASH)
        return kw_flash(c, t, &at, op->name);
    /* Causal kernels skip tiles above the diagonal: (N+1)/2N of the work and of
     * the operand reads; the materialised score matrix stays N x N (masked
     * entries are written for the softmax to read). */
    double wf = at.causal ? (at.mq + 1.0) / (2.0 * at.mq) : 1.0;
    int fused = c->m->fuse_attention == KW_ATTN_QK_SOFTMAX;
    char nm[KW_NAME_MAX];
    kw_gemm qk = {.m = at.mq, .n = at.lk, .k = at.d, .count = at.inst, .a_bytes = c->in_bytes,
                  .b_bytes = c->in_bytes, .c_bytes = c->sm_bytes, .out_n = at.lk, .work_frac = wf,
                  .extra_read_bytes = at.table_bytes}; /* K through the block table */
    if (fused) /* softmax needs the whole score row: Tm x N held on chip */
        qk.extra_sram_bytes = t->tile_m * at.lk * c->sm_bytes;
    qk.product = 1;
    qk.exps = fused ? at.mq * at.lk * at.inst : 0.0;
    kw_name(nm, op->name, fused ? "_qk_softmax" : "_qk");
    int rc = kw_gemm_cost(c, t, &qk, nm);
    if (rc != 0)
        return rc;
    if (!fused) {
        double sbytes = at.mq * at.lk * c->sm_bytes * at.inst;
        if ((rc = kw_elementwise_exp(c, op->name, "_softmax", sbytes, sbytes,
                                     c->m->softmax_precision, at.mq * at.lk * at.inst)) != 0)
            return rc;
    }
    kw_gemm pv = {.m = at.mq, .n = at.d, .k = at.lk, .count = at.inst, .a_bytes = c->sm_bytes,
                  .b_bytes = c->in_bytes, .c_bytes = c->in_bytes, .out_n = at.d, .work_frac = wf,
                  .product = 1, .extra_read_bytes = at.table_bytes}; /* V through the table */
    kw_name(nm, op->name, "_pv");
    return kw_gemm_cost(c, t, &pv, nm);
}

static int kw_next_unused(const kw_block *b, int i, uint32_t used)
{
    for (int j = i + 1; j < b->n_ops; j++)
        if (!(used & (1u << j)))
            return j;
    return -1;
}

/* Planning state carried from operator to operator. */
typedef struct kw_plan {
    double rows;      /* rows of the current activation (tokens, or conv pixels) */
    double cols;      /* columns of the last GEMM/conv output */
    int gated;        /* the last GEMM kernel belongs to a gate_up pair */
    uint32_t used;    /* operators already folded into an earlier kernel */
    double rowscale_k; /* fuse_norm_gemm: GEMMs of this K read the un-normalised input
                        * and scale their rows by 1/rms (0: none) */
    int stat_ready;   /* the kernel just emitted wrote the next norm's row statistics */
} kw_plan;

/* fuse_norm_gemm: op j is a norm whose output only a weight GEMM reads, so it
 * folds into that GEMM. RMSNorm is y = x / rms(x) * gamma: gamma is a
 * per-input-feature scale and folds into the next weights once, offline
 * (W' = W diag(gamma): SliceGPT, Ashkboos et al., ICLR 2024, arXiv 2401.15024,
 * sec. 3, "absorb" the RMSNorm scale into the following linear layer); 1/rms(x)
 * is one scalar per row, and a row scale commutes with the GEMM, so it is
 * applied to the accumulator in the epilogue (as per-token activation scales
 * are in per-token quantised GEMMs: SmoothQuant, Xiao et al., ICML 2023,
 * sec. 4). The norm's kernel (read x, write y) disappears; what it costs: the
 * row statistic (4 B per row) is written by the kernel that produced x (the
 * residual add before it, which reads x anyway) or, with none, by a row-
 * statistics kernel that reads x; each GEMM reading x reads the statistic.
 * Not modelled: the rounding-order change (the scale applied after the
 * accumulation instead of before the input rounding; the drift stage does not
 * emulate it). */
static int kw_norm_folds(const kw_block *b, const kw_mapping *m, int j)
{
    return m->fuse_norm_gemm && j >= 0 && j + 1 < b->n_ops && b->ops[j].kind == KW_OP_NORM &&
           b->ops[j + 1].kind == KW_OP_GEMM && b->ops[j + 1].weights;
}

/* In a model of L layers the last residual of one layer produces the next
 * layer's input: it writes the statistics of the norm that opens the block. */
static int kw_wraps_to_fold(const kw_block *b, const kw_mapping *m, int i)
{
    return b->layers > 1 && i == b->n_ops - 1 && b->ops[i].kind == KW_OP_RESIDUAL &&
           kw_norm_folds(b, m, 0);
}

/* Bytes per output element of a GEMM. An fp8 GEMM accumulates in fp32 and
 * writes a 16-bit output (DeepGEMM gemm_fp8_fp8_bf16_nt, deepseek-ai/DeepGEMM
 * deep_gemm/jit_kernels/gemm.py at a6d97a1c: its README's GB/s figures count
 * a bf16 D; cuBLASLt's FP8 matmuls take a bf16/fp16 D as the usual output):
 * its output is bf16. Other precisions write what they read. */
static double kw_gemm_out_bytes(const kw_ctx *c)
{
    kw_prec p = c->m->precision;
    if (p == KW_PREC_FP8_E4M3 || p == KW_PREC_FP8_E5M2)
        return kw_prec_bytes(KW_PREC_BF16);
    return c->in_bytes;
}

/* GEMM or conv operator at index i, with the merges and epilogue fusion it takes. */
static int kw_gemm_op(kw_ctx *c, const kw_block *b, int i, kw_plan *p, double seqs)
{
    const kw_op *op = &b->ops[i];
    const kw_mapping *m = c->m;
    double in = c->in_bytes;
    kw_gemm g = {.count = 1.0, .a_bytes = in, .b_bytes = in, .c_bytes = kw_gemm_out_bytes(c),
                 .work_frac = 1.0, .b_kmajor = op->weights};
    if (op->kind == KW_OP_CONV) {
        /* Implicit GEMM (cuDNN; Chetlur et al. arXiv 1410.0759): M = images x out
         * pixels, N = out_c, K = kh kw in_c. With K ordered (r, s, c), an A tile at
         * fixed (r, s) touches Tm distinct input pixels, so without a cache the A
         * traffic is exactly the im2col matrix's. */
        int st = op->stride > 0 ? op->stride : 1;
        int oh = (op->in_h + 2 * op->pad - op->kh) / st + 1;
        int ow = (op->in_w + 2 * op->pad - op->kw) / st + 1;
        if (oh < 1 || ow < 1 || op->in_c < 1 || op->out_c < 1)
            return kw_error_set(KW_EINPUT, "conv '%s': empty output", op->name);
        g.m = seqs * oh * ow;
        g.n = op->out_c;
        g.k = (double)op->kh * op->kw * op->in_c;
    } else {
        g.m = p->rows;
        g.n = (double)op->n;
        g.k = (double)op->k;
    }
    if (g.m < 1.0 || g.n < 1.0 || g.k < 1.0)
        return kw_error_set(KW_EINPUT, "op '%s': empty GEMM (%g x %g x %g)", op->name, g.m, g.n, g.k);
    const char *name = op->name;
    int epilogue = op->epilogue;
    int gated = strcmp(op->merge, "gate_up") == 0;
    int merged = 0;
    if ((m->fuse_qkv && strcmp(op->merge, "qkv") == 0) || (m->fuse_gate_up && gated)) {
        /* One GEMM with N summed over the operators sharing the input (same K). */
        for (int j = i + 1; j < b->n_ops; j++) {
            const kw_op *o = &b->ops[j];
            if ((p->used & (1u << j)) || o->kind != KW_OP_GEMM || strcmp(o->merge, op->merge) != 0 ||
                o->k != op->k)
                continue;
            g.n += (double)o->n;
            epilogue |= o->epilogue;
            p->used |= 1u << j;
            merged = 1;
        }
        if (merged)
            name = op->merge;
    }
    g.out_n = g.n;
    int act = 0;
    int j = kw_next_unused(b, i, p->used);
    if (m->fuse_epilogue && j >= 0 && b->ops[j].kind == KW_OP_ACT) {
        /* The activation runs in this GEMM's epilogue. Gated (SiLU(gate) * up):
         * merged gate_up writes only the product (half the columns); the up
         * GEMM of an unmerged pair reads the gate output in its epilogue. */
        double w = b->ops[j].width ? (double)b->ops[j].width : g.n;
        p->used |= 1u << j;
        act = 1;
        if (gated && merged)
            g.out_n = fmin(w, g.n);
        else if (gated)
            g.extra_read_bytes = g.m * w * in;
    }
    if (op->weights && c->sparse) {
        g.sparse = 1;
        g.b_bytes = in * KW_SPARSE_KEPT_FRACTION + KW_SPARSE_META_BYTES_PER_ELEM;
    }
    if (p->rowscale_k > 0.0 && g.k == p->rowscale_k) /* the folded norm's 1/rms per row */
        g.extra_read_bytes += g.m * KW_ROWSTAT_BYTES;
    int rc = kw_gemm_cost(c, kw_tiling_of(c, b, op), &g, name);
    if (rc != 0)
        return rc;
    if (epilogue && !m->fuse_epilogue) {
        /* Unfused bias + activation: its own kernel reads and writes the output. */
        double y = g.m * g.out_n * in;
        if ((rc = kw_elementwise(c, name, "_epilogue", y + g.out_n * in, y, m->precision)) != 0)
            return rc;
    }
    p->rows = g.m;
    p->cols = act && gated && merged ? g.out_n : g.n;
    p->gated = gated;
    return 0;
}

static double kw_width(const kw_op *op, const kw_plan *p)
{
    return op->width ? (double)op->width : p->cols;
}

static int kw_check(const kw_accel *a, const kw_block *b, const kw_shape *s, const kw_mapping *m,
                    int requests, int cores)
{
    if (requests < 1)
        return kw_error_set(KW_EINPUT, "cost: requests must be >= 1 (got %d)", requests);
    if (a->cores < 1 || a->units_per_core < 1)
        return kw_error_set(KW_EINPUT, "accelerator '%s': cores and units_per_core must be >= 1",
                            a->name);
    if (cores < 1 || cores > a->cores)
        return kw_error_set(KW_EINPUT, "cost: %d cores asked, accelerator '%s' has %d", cores,
                            a->name, a->cores);
    if ((unsigned)m->precision >= KW_PREC_COUNT || (unsigned)m->accum_precision >= KW_PREC_COUNT ||
        (unsigned)m->softmax_precision >= KW_PREC_COUNT)
        return kw_error_set(KW_EINPUT, "cost: precision out of range");
    if (!(a->peak_flops[m->precision] > 0.0))
        return kw_error_set(KW_EINPUT, "accelerator '%s' does not support precision %s", a->name,
                            kw_prec_name(m->precision));
    if (a->n_pairs > 0) {
        /* Supported (input, accumulation) pairs of the matrix units: outside
         * them the candidate is infeasible (kw_eval names it so). */
        int ok = 0;
        for (int i = 0; i < a->n_pairs && i < KW_PAIR_MAX; i++)
            ok |= a->pairs[i].input == m->precision && a->pairs[i].accum == m->accum_precision;
        if (!ok)
            return kw_error_set(KW_EINPUT,
                                "accelerator '%s' does not accumulate %s inputs in %s "
                                "(unsupported precision pair)",
                                a->name, kw_prec_name(m->precision),
                                kw_prec_name(m->accum_precision));
    }
    if (!(a->dram_bw_bytes_per_s > 0.0) || a->sram_bytes_per_unit == 0)
        return kw_error_set(KW_EINPUT, "accelerator '%s': DRAM bandwidth and SRAM must be > 0",
                            a->name);
    if (!(a->fallback_efficiency > 0.0 && a->fallback_efficiency <= 1.0) ||
        !(a->elementwise_efficiency > 0.0 && a->elementwise_efficiency <= 1.0))
        return kw_error_set(KW_EINPUT,
                            "accelerator '%s': fallback and elementwise efficiencies must be in (0, 1]",
                            a->name);
    if (b->n_ops < 0 || b->n_ops > KW_OP_MAX)
        return kw_error_set(KW_EINPUT, "block '%s': %d operators", b->name, b->n_ops);
    int attn = 0; /* kv_len is required of a decode shape only where an attention reads it */
    for (int i = 0; i < b->n_ops; i++)
        attn |= b->ops[i].kind == KW_OP_ATTENTION;
    if (s->batch < 1 || (s->phase == KW_PHASE_PREFILL && s->seq < 1) ||
        (s->phase == KW_PHASE_DECODE && attn && s->kv_len < 1))
        return kw_error_set(KW_EINPUT, "shape '%s': batch, seq (prefill) and kv_len (decode) must be >= 1",
                            s->name);
    return 0;
}

/* One pass over the block: shape s, and when dec is not NULL its decode
 * sequences packed into the same pass (kw_cost_eval_mixed). */
static int kw_cost_run(kw_cost *out, const kw_accel *a, const kw_block *b, const kw_shape *s,
                       const kw_shape *dec, const kw_mapping *m, int requests, int cores)
{
    if (!out || !a || !b || !s || !m)
        return kw_error_set(KW_EINPUT, "kw_cost_eval: NULL argument");
    int rc = kw_check(a, b, s, m, requests, cores);
    if (rc == 0 && dec)
        rc = dec->phase == KW_PHASE_DECODE ? kw_check(a, b, dec, m, 1, cores)
                                           : kw_error_set(KW_EINPUT, "mixed pass: the packed "
                                                          "part must be a decode shape");
    if (rc != 0)
        return rc;
    kw_block tp_block; /* tensor parallel: this device's slice of the block (kw_tp.c) */
    if (m->tp_degree > 1) {
        if ((rc = kw_tp_split(&tp_block, b, m->tp_degree, a)) != 0)
            return rc;
        b = &tp_block;
    }
    if ((rc = kw_kv_check(a, b, s, dec, m, requests)) != 0) /* KV cache and weights fit */
        return rc;
    memset(out, 0, offsetof(kw_cost, kernels));
    memset((char *)out + offsetof(kw_cost, latency_us), 0, sizeof *out - offsetof(kw_cost, latency_us));

    kw_ctx c;
    c.a = a;
    c.m = m;
    c.out = out;
    /* Peak per core = peak / cores: the batch gets cores/a->cores of the chip. */
    c.peak_flops = a->peak_flops[m->precision] * cores / a->cores;
    c.units = (double)cores * a->units_per_core;
    c.bw_bytes_per_us = a->dram_bw_bytes_per_s / KW_US_PER_S;
    c.lat_us = a->dram_latency_us;
    c.burst_bytes = (double)a->dram_burst_bytes;
    c.sram_bytes = (double)a->sram_bytes_per_unit;
    c.in_bytes = kw_prec_bytes(m->precision);
    c.acc_bytes = kw_prec_bytes(m->accum_precision);
    c.sm_bytes = kw_prec_bytes(m->softmax_precision);
    /* Launch overhead (src/model-facts.md#launch): eager pays launch_eager_us per
     * kernel (a host-side figure) besides the kernel's fixed time; a captured
     * graph pays graph_fixed_us per replay + the node cost per kernel, which
     * includes the kernel's fixed time (kw_cost_graph_node_us): launch_us is
     * what a kernel pays beyond the fixed time kw_finish adds to its work. */
    c.kernel_fixed_us = kw_fixed_us(a);
    c.launch_us = m->graph_mode ? fmax(a->graph_node_us - c.kernel_fixed_us, 0.0) : a->launch_eager_us;
    if (a->cpu && cores == 1)
        c.launch_us = 0.0; /* a CPU kernel on one thread runs on the caller: no wake-up */
    c.sparse = m->sparsity_2_4 && a->sparsity_2_4;
    c.hier = a->n_levels > 0;
    c.reg_bytes = 0.0;
    c.reg_holds = 0;
    c.shared_cap_bytes = 0.0;
    c.shared_bytes_per_us = 0.0;
    c.sram_bytes_per_us = 0.0;
    for (int i = 0; i < a->n_levels && i < KW_LEVEL_MAX; i++) {
        const kw_level *l = &a->levels[i];
        if (l->kind == KW_LEVEL_REGISTERS) {
            c.reg_bytes = (double)l->bytes;
            c.reg_holds = l->holds;
        } else if (l->kind == KW_LEVEL_SRAM) {
            c.sram_bytes_per_us = l->bw_bytes_per_s / KW_US_PER_S;
        } else if (l->kind == KW_LEVEL_SHARED && (l->holds & KW_HOLD_OPERANDS) &&
                   (double)l->bytes > c.shared_cap_bytes) {
            /* the largest shared level that keeps operands decides reuse */
            c.shared_cap_bytes = (double)l->bytes;
            c.shared_bytes_per_us = l->bw_bytes_per_s / KW_US_PER_S;
        }
    }
    c.matrix_frac = a->matrix_fraction[m->precision] > 0.0 ? a->matrix_fraction[m->precision] : 1.0;
    c.dram_eff_bytes_per_us = c.bw_bytes_per_us * (a->dram_fraction > 0.0 ? a->dram_fraction : 1.0);
    c.gather_eff_bytes_per_us = a->gather_dram_fraction > 0.0
                                    ? c.bw_bytes_per_us * a->gather_dram_fraction
                                    : c.dram_eff_bytes_per_us;
    c.gather_fixed_us = a->gather_fixed_us;
    c.hidden_serial = a->softmax_hidden_set ? a->softmax_hidden_serial : 0.0;
    c.hidden_overlap = a->softmax_hidden_set ? a->softmax_hidden_overlap : 1.0;

    double seqs = (double)requests * s->batch;
    kw_plan p = {.rows = s->phase == KW_PHASE_DECODE ? seqs : seqs * s->seq};
    if (dec) /* the decode tokens follow the prompt tokens in one packed activation */
        p.rows += dec->batch;
    for (int i = 0; i < b->n_ops; i++) { /* a conv block's activations are pixels */
        const kw_op *op = &b->ops[i];
        if (op->kind == KW_OP_CONV) {
            p.rows = seqs * op->in_h * op->in_w;
            p.cols = op->in_c;
            break;
        }
    }
    for (int i = 0; i < b->n_ops && rc == 0; i++) {
        if (p.used & (1u << i))
            continue;
        const kw_op *op = &b->ops[i];
        double in = c.in_bytes, w, x;
        int j, k0 = out->n_kernels;
        int stat_ready = p.stat_ready;
        p.stat_ready = 0;
        if (op->kind != KW_OP_GEMM && op->kind != KW_OP_NORM)
            p.rowscale_k = 0.0;
        switch (op->kind) {
        case KW_OP_GEMM:
        case KW_OP_CONV:
            rc = kw_gemm_op(&c, b, i, &p, seqs);
            break;
        case KW_OP_ATTENTION:
            rc = kw_attention(&c, b, op, s, seqs);
            if (rc == 0 && dec) {
                /* the packed decode sequences' attention: its own kernel over
                 * their KV cache (TensorRT-LLM's attention runs the context and
                 * the generation sequences of one batch as separate kernels) */
                kw_op dop = *op;
                kw_name(dop.name, op->name, "_decode");
                rc = kw_attention(&c, b, &dop, dec, (double)dec->batch);
            }
            p.cols = (double)op->heads * op->head_dim;
            p.gated = 0;
            break;
        case KW_OP_ACT:
            /* Gated activation after a gate_up pair reads both halves. */
            w = kw_width(op, &p);
            x = p.rows * w * in;
            rc = kw_elementwise(&c, op->name, NULL, x * (p.gated ? 2.0 : 1.0), x, m->precision);
            p.cols = w;
            p.gated = 0;
            break;
        case KW_OP_RESIDUAL:
            w = kw_width(op, &p);
            x = p.rows * w * in;
            j = kw_next_unused(b, i, p.used);
            if ((j >= 0 && kw_norm_folds(b, m, j)) || (j < 0 && kw_wraps_to_fold(b, m, i))) {
                /* the sum and the next norm's row statistics (fuse_norm_gemm) */
                rc = kw_elementwise(&c, op->name, "+rms", 2.0 * x, x + p.rows * KW_ROWSTAT_BYTES,
                                    m->precision);
                p.stat_ready = 1;
            } else if (m->fuse_residual_norm && j >= 0 && b->ops[j].kind == KW_OP_NORM) {
                /* One kernel: reads both inputs and the norm weights, writes the sum
                 * (the next residual needs it) and the normalised output; saves the
                 * norm's re-read of the sum and one launch. */
                char nm[KW_NAME_MAX];
                kw_name(nm, op->name, "+");
                p.used |= 1u << j;
                rc = kw_elementwise(&c, nm, b->ops[j].name, 2.0 * x + w * in, 2.0 * x, m->precision);
            } else {
                rc = kw_elementwise(&c, op->name, NULL, 2.0 * x, x, m->precision);
            }
            p.cols = w;
            break;
        case KW_OP_NORM:
            w = kw_width(op, &p);
            x = p.rows * w * in;
            if (kw_norm_folds(b, m, i)) {
                /* folded into the next GEMM: only the row statistics, unless the
                 * kernel before (or the layer's last residual) wrote them */
                if (!stat_ready && !(i == 0 && kw_wraps_to_fold(b, m, b->n_ops - 1)))
                    rc = kw_elementwise(&c, op->name, "_rms", x, p.rows * KW_ROWSTAT_BYTES,
                                        m->precision);
                p.rowscale_k = w;
            } else {
                p.rowscale_k = 0.0;
                rc = kw_elementwise(&c, op->name, NULL, x + w * in, x, m->precision);
            }
            p.cols = w;
            break;
        case KW_OP_MOE: /* router, dispatch, routed and shared experts, combine: kw_moe.c */
            rc = kw_moe_plan(&c, b, op, p.rows);
            p.cols = (double)op->k;
            p.gated = 0;
            break;
        default:
            rc = kw_error_set(KW_EINPUT, "op '%s': unknown kind %d", op->name, (int)op->kind);
        }
        if (rc == 0 && op->tp_allreduce) { /* the row-parallel output summed over devices */
            double work_us = 0.0; /* the op's kernels, which a chunked all-reduce overlaps */
            for (int q = k0; q < out->n_kernels; q++)
                work_us += out->kernels[q].time_us - out->kernels[q].launch_us;
            rc = kw_tp_allreduce(&c, op->name, p.rows * p.cols * in, m->tp_degree, work_us,
                                 out->n_kernels - k0);
        }
    }
    if (rc != 0)
        return rc;

    out->launches = out->n_kernels + out->folded;
    if (b->layers > 1) {
        /* a <layer> of a model of L identical layers: each kernel line is that
         * kernel in all L layers (its work and launches times L; the serving
         * simulation replays the lines), the totals the model's; one graph
         * captures the whole model */
        double L = b->layers;
        for (int i = 0; i < out->n_kernels; i++) {
            kw_kernel *k = &out->kernels[i];
            k->flops *= L;
            k->exec_flops *= L;
            k->dram_bytes *= L;
            k->operand_bytes *= L;
            k->shared_bytes *= L;
            k->compute_us *= L;
            k->memory_us *= L;
            k->launch_us *= L;
            k->time_us *= L;
            k->dram_us *= L;
            k->shared_us *= L;
            k->matrix_us *= L;
            k->nonmatrix_us *= L;
            k->epilogue_us *= L;
            k->tiles *= L;
        }
        out->latency_us *= L;
        out->flops *= L;
        out->launch_us *= L;
        out->launches *= b->layers;
        out->folded *= b->layers;
        out->fallbacks *= b->layers;
        out->dram_bytes *= L;
        out->operand_bytes *= L;
        out->shared_bytes *= L;
        out->energy_j *= L;
        out->comm_us *= L;
        for (int k = 0; k < KW_BOUND_COUNT; k++)
            out->bound_us[k] *= L;
    }
    if (m->graph_mode && out->n_kernels > 0) {
        out->latency_us += a->graph_fixed_us;
        out->launch_us += a->graph_fixed_us;
        out->bound_us[KW_BOUND_LAUNCH] += a->graph_fixed_us;
    }
    out->reuse_ratio = out->dram_bytes > 0.0 ? out->operand_bytes / out->dram_bytes : 0.0;
    int best = KW_BOUND_COMPUTE;
    for (int k = 1; k < KW_BOUND_COUNT; k++)
        if (out->bound_us[k] > out->bound_us[best])
            best = k;
    out->bound = (kw_bound)best;
    return 0;
}

int kw_cost_eval(kw_cost *out, const kw_accel *a, const kw_block *b, const kw_shape *s,
                 const kw_mapping *m, int requests, int cores)
{
    return kw_cost_run(out, a, b, s, NULL, m, requests, cores);
}

int kw_cost_eval_mixed(kw_cost *out, const kw_accel *a, const kw_block *b, const kw_shape *prefill,
                       const kw_shape *decode, const kw_mapping *m, int cores)
{
    if (!prefill || !decode)
        return kw_error_set(KW_EINPUT, "kw_cost_eval_mixed: NULL argument");
    if (prefill->phase != KW_PHASE_PREFILL)
        return kw_error_set(KW_EINPUT, "mixed pass: the first part must be a prefill shape");
    return kw_cost_run(out, a, b, prefill, decode, m, 1, cores);
}

/* ---------------- hooks for plans in their own files (kw_cost_hook.h) ---------------- */

int kw_cost_hook_gemm(kw_ctx *c, const kw_block *b, const kw_op *op, double m, double n, double k,
                      double count, double out_n, const char *name)
{
    if (m < 1.0 || n < 1.0 || k < 1.0 || count < 1.0)
        return kw_error_set(KW_EINPUT, "op '%s': empty GEMM (%g x %g x %g, %g instances)", name, m,
                            n, k, count);
    double in = c->in_bytes;
    kw_gemm g = {.m = m, .n = n, .k = k, .count = count, .a_bytes = in, .b_bytes = in,
                 .c_bytes = in, .out_n = out_n > 0.0 ? out_n : n, .work_frac = 1.0};
    if (c->sparse) {
        g.sparse = 1;
        g.b_bytes = in * KW_SPARSE_KEPT_FRACTION + KW_SPARSE_META_BYTES_PER_ELEM;
    }
    return kw_gemm_cost(c, kw_tiling_of(c, b, op), &g, name);
}

int kw_cost_hook_elementwise(kw_ctx *c, const char *name, const char *suffix, double read_bytes,
                             double write_bytes)
{
    return kw_elementwise(c, name, suffix, read_bytes, write_bytes, c->m->precision);
}

int kw_cost_hook_comm(kw_ctx *c, const char *name, double time_us, double buffer_bytes,
                      int extra_launches)
{
    kw_kernel *k = kw_emit(c, name, NULL, c->m->precision);
    if (!k)
        return kw_overflow();
    /* the links bound it: its time is memory-class work, the local buffer's
     * DRAM traffic (read to send, write of the sum) counts for contention */
    k->dram_bytes = 2.0 * buffer_bytes;
    k->operand_bytes = buffer_bytes;
    k->memory_us = time_us;
    kw_finish(c, k, 1);
    c->out->comm_us += time_us;
    if (extra_launches > 0) { /* chunk kernels recorded on this line, each a launch */
        double l = extra_launches * (c->launch_us + c->kernel_fixed_us);
        k->launch_us += l;
        k->time_us += l;
        c->out->latency_us += l;
        c->out->launch_us += l;
        c->out->bound_us[KW_BOUND_LAUNCH] += l;
        c->out->folded += extra_launches;
    }
    return 0;
}

void kw_cost_hook_fold(kw_ctx *c, int into)
{
    kw_cost *o = c->out;
    if (into < 0 || into >= o->n_kernels)
        return;
    kw_kernel *d = &o->kernels[into];
    for (int i = into + 1; i < o->n_kernels; i++) {
        const kw_kernel *k = &o->kernels[i];
        double t0 = d->time_us, t1 = k->time_us;
        d->flops += k->flops;
        d->exec_flops += k->exec_flops;
        d->dram_bytes += k->dram_bytes;
        d->operand_bytes += k->operand_bytes;
        d->shared_bytes += k->shared_bytes;
        d->compute_us += k->compute_us;
        d->memory_us += k->memory_us;
        d->launch_us += k->launch_us;
        d->time_us += k->time_us;
        d->dram_us += k->dram_us;
        d->shared_us += k->shared_us;
        d->matrix_us += k->matrix_us;
        d->nonmatrix_us += k->nonmatrix_us;
        d->epilogue_us += k->epilogue_us;
        d->tiles += k->tiles;
        d->fallback |= k->fallback;
        if (k->sram_bytes > d->sram_bytes)
            d->sram_bytes = k->sram_bytes;
        if (k->reg_bytes > d->reg_bytes)
            d->reg_bytes = k->reg_bytes;
        /* efficiencies: weighted by each part's time */
        if (t0 + t1 > 0.0) {
            d->pad_efficiency = (d->pad_efficiency * t0 + k->pad_efficiency * t1) / (t0 + t1);
            d->wave_efficiency = (d->wave_efficiency * t0 + k->wave_efficiency * t1) / (t0 + t1);
        }
        o->folded++;
    }
    o->n_kernels = into + 1;
    double work = d->time_us - d->launch_us;
    d->dram_bytes_per_us = work > 0.0 ? d->dram_bytes / work : 0.0;
    kw_bound wc = d->fallback ? KW_BOUND_FALLBACK
                  : d->compute_us >= d->memory_us ? KW_BOUND_COMPUTE
                                                  : KW_BOUND_MEMORY;
    d->bound = (!d->fallback && d->launch_us > work) ? KW_BOUND_LAUNCH : wc;
}

int kw_cost_hook_n_kernels(const kw_ctx *c) { return c->out->n_kernels; }
const kw_mapping *kw_cost_hook_mapping(const kw_ctx *c) { return c->m; }
const kw_accel *kw_cost_hook_accel(const kw_ctx *c) { return c->a; }
double kw_cost_hook_elem_bytes(const kw_ctx *c) { return c->in_bytes; }
kw_cost *kw_cost_hook_out(kw_ctx *c) { return c->out; }
