/* kw_model.h - the plain data every evaluator stage reads: accelerator,
 * workload (blocks as operator graphs, shapes), space settings, and the
 * mapping decoded from a candidate.
 *
 * The loaders (kw_load.c) fill these from XML; the stages (cost, sim, thermal,
 * drift) only read them. Plain structs with fixed capacities so a config can
 * be shared read-only between threads without locks. Units are in the names.
 */
#ifndef KW_MODEL_H
#define KW_MODEL_H

#include <stdint.h>

#include "kw_search.h"

#define KW_PATH_MAX 1024
#define KW_SOURCE_MAX 512   /* a "where this figure comes from" note */
#define KW_OP_MAX 32        /* operators in one block */
#define KW_BLOCK_MAX 16     /* blocks in one workload */
#define KW_SHAPE_MAX 64     /* shapes in one workload */
#define KW_GROUP_MAX 8      /* GEMM tiling groups in one block */
#define KW_THROTTLE_MAX 4   /* thermal throttle steps */
#define KW_LEVEL_MAX 8      /* storage levels in an accelerator's hierarchy */
#define KW_PAIR_MAX 16      /* supported (input, accumulation) precision pairs */
#define KW_EXPERT_MAX 256   /* routed experts of one mixture-of-experts operator */

/* ---------------- precision ---------------- */
typedef enum {
    KW_PREC_FP32,
    KW_PREC_BF16,
    KW_PREC_FP16,
    KW_PREC_FP8_E4M3,
    KW_PREC_FP8_E5M2,
    KW_PREC_INT8,
    KW_PREC_COUNT
} kw_prec;

/* "fp32", "bf16", ... -> kw_prec, or -1. */
int kw_prec_parse(const char *name);
const char *kw_prec_name(kw_prec p);
/* Bytes per element in DRAM and SRAM (fp32 4, bf16/fp16 2, fp8/int8 1). */
int kw_prec_bytes(kw_prec p);

/* ---------------- accelerator ---------------- */
typedef struct kw_throttle_step {
    double temp_c;       /* at or above this die temperature ... */
    double clock_factor; /* ... the clock runs at this fraction of nominal */
} kw_throttle_step;

/* One level of the storage hierarchy (accelerator <storage>, spaces/accelerator.xsd).
 * Per-unit levels (registers, SRAM) have a capacity per compute unit; shared
 * levels (L2, global buffer, VMEM) one capacity for the chip; DRAM is <memory>'s. */
typedef enum { KW_LEVEL_REGISTERS, KW_LEVEL_SRAM, KW_LEVEL_SHARED, KW_LEVEL_KIND_COUNT } kw_level_kind;
/* What may live in a level (bit set). */
#define KW_HOLD_ACCUMULATORS 1u /* GEMM/attention output accumulators */
#define KW_HOLD_SCORES 2u       /* attention score/probability tiles */
#define KW_HOLD_OPERANDS 4u     /* staged operand tiles (and their pipeline stages) */

typedef struct kw_level {
    char name[KW_NAME_MAX];
    kw_level_kind kind;
    uint64_t bytes;             /* per unit (registers, sram) or whole chip (shared) */
    double bw_bytes_per_s;      /* whole chip; 0 = not a bound */
    unsigned holds;             /* KW_HOLD_* */
    int line;
} kw_level;

typedef struct kw_prec_pair {
    kw_prec input, accum;
} kw_prec_pair;

#define KW_PRIOR_MAX 16 /* calibrate parameters an accelerator may state a prior for */
typedef struct kw_accel {
    char name[KW_NAME_MAX];
    char source[KW_SOURCE_MAX];     /* datasheets the figures come from */
    /* Scheduling cores: the units the serving simulation places batches on
     * (GPU: SM partitions; TPU: TensorCores; NPU: cores). */
    int cores;
    int units_per_core;             /* compute units (SMs, MXUs...) per scheduling core */
    double clock_ghz;
    double peak_flops[KW_PREC_COUNT]; /* dense, whole chip, FLOP/s; 0 = precision unsupported */
    int sparsity_2_4;               /* structured 2:4 sparsity doubles the GEMM peak */
    uint64_t sram_bytes_per_unit;   /* on-chip memory one unit's tiles can use */
    double sram_bw_bytes_per_s;     /* on-chip (L2/VMEM/SRAM) bandwidth, whole chip; 0 = unknown */
    double dram_bw_bytes_per_s;     /* whole chip, shared by all cores */
    uint64_t dram_burst_bytes;      /* DRAM transaction size: transfers round up to it */
    double dram_latency_us;         /* first-byte latency per kernel */
    int array_m, array_n, array_k;  /* compute-array granule: tiles pad up to multiples */
    double launch_eager_us;         /* per kernel launched eagerly */
    double graph_fixed_us;          /* per captured-graph replay */
    double graph_node_us;           /* per kernel inside a graph */
    double fallback_efficiency;     /* generic kernel's fraction of peak when a mapping falls back */
    double elementwise_efficiency;  /* fraction of DRAM bandwidth elementwise kernels reach */
    /* power and thermal (HotSpot-style lumped RC) */
    double idle_w;
    double tdp_w;
    double pj_per_flop;             /* at bf16; other precisions scale with element bytes */
    double pj_per_dram_byte;
    double t_ambient_c;
    double r_th_c_per_w;            /* junction-to-ambient thermal resistance */
    double tau_s;                   /* thermal time constant R*C */
    int n_throttle;
    kw_throttle_step throttle[KW_THROTTLE_MAX]; /* ascending temp_c */
    double t_shutdown_c;
    int line;
    /* --- appended by the model area; all zero = the model before it --- */
    int n_levels;
    kw_level levels[KW_LEVEL_MAX];  /* <storage>: registers, SRAM, shared levels */
    double matrix_fraction[KW_PREC_COUNT]; /* achievable fraction of the matrix peak; 0 = 1 */
    double sync_matrix_fraction;    /* matrix fraction of a synchronous-MMA schedule; 0 = same */
    double dram_fraction;           /* achieved fraction of DRAM bandwidth; 0 = 1 */
    double special_ops_per_s;       /* whole chip: exp etc. on the special-function units; 0 = free */
    double vector_ops_per_s;        /* whole chip: fp32 non-matrix instructions; 0 = free */
    double softmax_vector_ops;      /* fp32 vector instructions per attention score */
    /* share of attention's non-matrix (softmax) time hidden under its matrix
     * work, per schedule: serial (FlashAttention-2: only other warps' MMAs
     * overlap a warp's softmax) and overlap (FlashAttention-3 ping-pong);
     * unset (softmax_hidden_set 0) = 0 and 1, the model before them */
    int softmax_hidden_set;
    double softmax_hidden_serial;
    double softmax_hidden_overlap;
    double kernel_fixed_us;         /* device-side fixed time of every kernel; 0 = none */
    int multicast_max;              /* units an operand tile may be multicast to; 0/1 = none */
    int n_pairs;                    /* 0 = every (input, accumulation) pair allowed */
    kw_prec_pair pairs[KW_PAIR_MAX];
    /* a decode kernel that gathers its paged K/V (no bulk tile copy: FlashAttention-3
     * uses TMA for a paged KV only when page_size % kBlockN == 0 and the packed query
     * rows exceed kBlockM, Dao-AILab/flash-attention hopper/flash_api.cpp
     * get_pagedkv_tma): its achieved DRAM fraction (0 = dram_fraction) and its own
     * fixed time (0 = none). No shipped accelerator declares them: calibrate fits them. */
    double gather_dram_fraction;
    double gather_fixed_us;
    /* <rates><prior param= class= width=>: how each figure calibrate may fit is
     * sourced, indexed by calibrate's parameter id (kw_calib.h): 'S' sourced,
     * 'D' derived, 'U' unsourced, 'F' fitted, 0 not stated; width 0 = the
     * class's default (kw_calib_class_width) */
    char prior_class[KW_PRIOR_MAX];
    double prior_width[KW_PRIOR_MAX];
    /* --- appended by the llm area: serving at scale (all zero = not declared) --- */
    uint64_t dram_capacity_bytes;   /* device memory (<memory dram_gib=>); 0 = not a bound */
    double link_bytes_per_s;        /* <interconnect>: per-device link bandwidth, one direction */
    double link_latency_us;         /* per step of the collective algorithm */
    int allreduce_algo;             /* kw_allreduce_algo (kw_tp.h) */
    int interconnect_line;          /* line of <interconnect> (0: none) */
    double link_base_us;            /* fixed latency of one collective call (<interconnect base_us=>) */
    /* --- appended by the exec area: <cpu> (kw_cost_cpu.h); all zero = not a CPU --- */
    int cpu;                        /* costed by the CPU rules of kw_cost_cpu.c */
    int cpu_scalar_edges;           /* in-place operands: a partial micro-tile runs scalar code */
    double cpu_exp_per_s;           /* scalar exp per second on one core (softmax); 0 = free */
    double cpu_l1_bw_bytes_per_s;   /* first data cache, streaming, all cores (<cpu l1_gb_s>);
                                     * 0 = not given: the private cache's figure stands in */
} kw_accel;

/* ---------------- workload ---------------- */
typedef enum {
    KW_OP_GEMM,      /* [M x K] x [K x N]; M = tokens of the shape */
    KW_OP_ATTENTION, /* QK^T, softmax, PV over heads; fusion decides the kernels */
    KW_OP_CONV,      /* implicit GEMM: M = batch*out_h*out_w, N = out_c, K = kh*kw*in_c */
    KW_OP_NORM,      /* layer/RMS norm over width, one read one write */
    KW_OP_RESIDUAL,  /* residual add over width */
    KW_OP_ACT,       /* standalone elementwise activation (e.g. SiLU*mul of gated MLP) */
    KW_OP_MOE        /* mixture of experts: router, routed expert FFNs, shared experts (kw_moe.c) */
} kw_op_kind;

/* How tokens are spread over the routed experts (kw_moe.c). */
typedef enum { KW_ROUTE_UNIFORM, KW_ROUTE_ZIPF, KW_ROUTE_TRACE } kw_routing;

typedef struct kw_op {
    char name[KW_NAME_MAX];
    kw_op_kind kind;
    char group[KW_NAME_MAX];  /* tiling group (gemm, conv, attention): knobs <group>.tile_m ... */
    char merge[KW_NAME_MAX];  /* gemm: "qkv" (merged by fuse_qkv) or "gate_up" (fuse_gate_up); "" */
    int epilogue;             /* gemm/conv: bias+activation epilogue, fused by fuse_epilogue */
    int weights;              /* gemm/conv: the K x N operand is a weight read from DRAM */
    uint64_t n, k;            /* gemm */
    int heads, kv_heads, head_dim, causal; /* attention */
    int in_h, in_w, in_c, out_c, kh, kw, stride, pad; /* conv (per image; batch from the shape) */
    uint64_t width;           /* norm, residual, act: elements per token */
    int line;
    /* --- appended by the llm area --- */
    /* moe: k = model width, n = one routed expert's FFN width; gated (SwiGLU)
     * experts have gate and up GEMMs of n columns each, then down (n -> k). */
    int experts, top_k, shared_experts, gated;
    uint64_t shared_n;        /* one shared expert's FFN width (0 = n) */
    kw_routing routing;
    double zipf_s;            /* routing=zipf: share of expert rank r proportional to r^-s */
    double capacity_factor;   /* expert capacity = ceil(cf x tokens x top_k / experts); 0 = dropless */
    int tp_allreduce;         /* tensor parallel: an all-reduce follows this op (kw_tp.c) */
} kw_op;

typedef struct kw_block {
    char name[KW_NAME_MAX];
    char source[KW_SOURCE_MAX];
    int n_ops;
    kw_op ops[KW_OP_MAX];     /* in execution (topological) order */
    int n_groups;
    char groups[KW_GROUP_MAX][KW_NAME_MAX]; /* distinct tiling groups, in first-use order */
    int line;
    /* --- appended by the llm area --- */
    int n_route;              /* routing=trace: experts in the replayed routing (= experts) */
    float route_share[KW_EXPERT_MAX]; /* each expert's share of the routed token slots, sum 1 */
    int layers;               /* a <layer>: identical layers of the model it stands for; 0/1 = one */
} kw_block;

typedef enum { KW_PHASE_PREFILL, KW_PHASE_DECODE } kw_phase;
typedef enum { KW_ARRIVAL_POISSON, KW_ARRIVAL_BURSTY, KW_ARRIVAL_TRACE } kw_arrival;

typedef struct kw_shape {
    char name[KW_NAME_MAX];
    int block;                /* index into kw_workload.blocks */
    kw_phase phase;
    int batch;                /* sequences (or images) per request */
    int seq;                  /* prefill: tokens per sequence */
    int kv_len;               /* decode: KV-cache length attended to */
    int streams;              /* concurrent request streams */
    kw_arrival arrival;
    double rate_per_s;        /* per stream; 0 when load is given */
    double load;              /* per-accelerator utilisation of the baseline mapping, (0,1); 0 when rate given */
    double burst_on_ms, burst_off_ms, burst_factor; /* bursty: rate*factor while on, 0 while off */
    char trace[KW_PATH_MAX];  /* replayed arrivals (CSV time_us,stream,shape), resolved path */
    int line;
    /* --- appended by the llm area: continuous batching (kw_sim_cb.c) --- */
    int continuous;           /* batching="continuous": requests of seq..seq_max prompt tokens */
    int seq_max;              /* prompt tokens uniform in [seq, seq_max] (= seq when not given) */
    int output_tokens, output_max; /* output tokens uniform in [output_tokens, output_max] */
} kw_shape;

typedef struct kw_workload {
    char name[KW_NAME_MAX];
    char source[KW_SOURCE_MAX];
    int n_blocks;
    kw_block blocks[KW_BLOCK_MAX];
    int n_shapes;
    kw_shape shapes[KW_SHAPE_MAX];
} kw_workload;

/* ---------------- space settings beyond the knobs ---------------- */
typedef struct kw_guards {
    double drift_min_cos;       /* default 0.999 */
    double drift_max_rel_rms;   /* default 0.02 */
    double max_throttle_pct;    /* share of the long window spent throttled */
    double max_fallback_pct;    /* share of kernels (per request) on the fallback path */
    double sla_p99_us;          /* 0 = no SLA guard */
    double max_long_window_drift_pct; /* long-window p99 over short-window p99 */
    /* --- appended by the llm area (continuous-batching shapes; 0 = no guard) --- */
    double sla_ttft_p99_us;     /* time to first token, p99 */
    double sla_tpot_p99_us;     /* time per output token, p99 */
} kw_guards;

typedef struct kw_space {
    char name[KW_NAME_MAX];
    char path[KW_PATH_MAX];
    char accel_path[KW_PATH_MAX];    /* resolved relative to the space file */
    char workload_path[KW_PATH_MAX];
    char block[KW_NAME_MAX];         /* the block this space tunes */
    int n_shapes;                    /* shapes of the workload this space tunes ... */
    int shapes[KW_SHAPE_MAX];        /* ... as indices into kw_workload.shapes */
    kw_knobspace knobs;
    kw_guards guards;
    double min_effect_pct;           /* a step must earn at least this (default 1.0) */
    double alpha;                    /* significance level when noisy (default 0.05) */
    double noise_pct;                /* optional seeded measurement noise of the model (0 = off) */
    int sim_requests;                /* serving-simulation sample size while tuning */
    int final_requests;              /* sample size of the re-check of ranked configs */
    /* the measuring evaluator (<evaluator>, src/run/kw_exec.c); exec_cmd "" = the model */
    char exec_cmd[KW_PATH_MAX];
    int exec_line;                   /* line of <evaluator> (0: none) */
    double exec_timeout_s, exec_start_timeout_s;
    int exec_warmup, exec_reps, exec_max_reps;
    double exec_target_ci_pct;
    int exec_anchor;                 /* bracket each measurement with the baseline */
    int tuning_line;                 /* line of <tuning> (0: none, the default sample sizes) */
} kw_space;

/* Everything one run reads: owned together, freed by kw_load_config_free (kw_load.h). */
typedef struct kw_config {
    kw_space space;
    kw_accel accel;
    kw_workload workload;
    char input_hash[3][17];          /* hex FNV-1a of the space, accelerator and workload bytes */
} kw_config;

/* ---------------- the mapping a candidate means ---------------- */
typedef enum { KW_LOOP_MNK, KW_LOOP_NMK, KW_LOOP_KMN } kw_loop;
typedef enum { KW_ATTN_NONE, KW_ATTN_QK_SOFTMAX, KW_ATTN_FLASH } kw_attn_fusion;
typedef enum { KW_PLACE_ROUND_ROBIN, KW_PLACE_LEAST_LOADED, KW_PLACE_STREAM_AFFINITY } kw_placement;

typedef struct kw_tiling {
    int tile_m, tile_n, tile_k; /* output tile Tm x Tn, K streamed in Tk chunks */
    int split_k;                /* K split into this many partial sums, reduced at the end */
    kw_loop loop;               /* mnk: M outer (A panel reused), nmk: N outer, kmn: K outer */
    int double_buffer;          /* overlap the next K chunk's load with compute; doubles input SRAM */
    /* --- appended by the model area --- */
    int stages;                 /* operand pipeline stages; 0 = from double_buffer (2 or 1) */
    int swizzle;                /* tile rows grouped in the launch order (rasterisation); 0/1 = row-major */
    int cluster;                /* units sharing one operand tile by multicast; 0/1 = none */
    /* --- a kernel's own schedule, not knobs: set by a measured row (kw_fidelity) --- */
    int swizzle_n;              /* the launch order walks N tiles slowest (swizzle groups of N tiles) */
    int multicast_a;            /* the cluster's tiles lie along N and share each A tile (not B) */
    int store_overlap;          /* a tile's output store overlaps the unit's next tile (persistent) */
} kw_tiling;

typedef struct kw_mapping {
    int n_groups;
    kw_tiling tiling[KW_GROUP_MAX];   /* parallel to kw_block.groups */
    int fuse_qkv, fuse_epilogue, fuse_gate_up, fuse_residual_norm;
    kw_attn_fusion fuse_attention;
    kw_prec precision, accum_precision, softmax_precision;
    int sparsity_2_4;
    int graph_mode;                   /* launch_mode=graph */
    int max_batch;                    /* requests merged into one batch by the batcher */
    double batch_timeout_us;
    kw_placement placement;
    int cores_per_request;
    /* --- appended by the model area --- */
    int attn_overlap;                 /* attention_schedule=overlap: softmax hidden under matrix work */
    /* --- appended by the llm area --- */
    int moe_kernel;                   /* kw_moe_kernel (kw_moe.h): grouped, batched, per_expert */
    int tp_degree;                    /* tensor-parallel devices; 0/1 = one device */
    int kv_page_tokens;               /* paged KV cache: tokens per page; 0 = contiguous */
    int prefill_chunk_tokens;         /* continuous batching: prompt tokens per iteration; 0 = whole */
    int token_budget;                 /* continuous batching: tokens per iteration; 0 = default */
    int max_seqs;                     /* continuous batching: running sequences; 0 = max_batch */
    int fuse_norm_gemm;               /* RMSNorm folded into the next GEMM (kw_cost.c) */
    int tp_overlap_chunks;            /* row-parallel GEMM + all-reduce pipelined in chunks; 0/1 = none */
} kw_mapping;

/* Defaults a block uses for a knob its space does not list. */
#define KW_DEFAULT_TILE_M 128
#define KW_DEFAULT_TILE_N 128
#define KW_DEFAULT_TILE_K 32
#define KW_DEFAULT_MAX_BATCH 1
#define KW_DEFAULT_BATCH_TIMEOUT_US 0.0

#endif
