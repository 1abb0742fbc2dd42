/* kw_cost.h - stage 1: kernel plan and cost of one batch on an accelerator.
 *
 * kw_cost_eval turns a block's operator graph, a shape and a mapping into the
 * list of kernels the mapping launches (fusion decides the list), and costs
 * each from first principles: roofline compute per precision derated for
 * array padding and partial waves, DRAM traffic from the tiling (loop order,
 * panel residency, split-K, bursts), SRAM working set (fallback when it does
 * not fit), launch overhead (eager or graph). The model, its rules and their
 * sources are in kw_cost.c. Pure: no allocation, no I/O, thread-safe.
 */
#ifndef KW_COST_H
#define KW_COST_H

#include "kw_model.h"

#define KW_KERNEL_MAX 48

typedef enum { KW_BOUND_COMPUTE, KW_BOUND_MEMORY, KW_BOUND_LAUNCH, KW_BOUND_FALLBACK } kw_bound;
#define KW_BOUND_COUNT 4
/* "compute", "memory", "launch", "fallback" ("?" otherwise). Static storage. */
const char *kw_cost_bound_name(kw_bound b);

typedef struct kw_kernel {
    char name[KW_NAME_MAX];     /* e.g. "qkv", "attn_flash", "o_proj_epilogue" */
    double flops;               /* useful FLOPs: 2 x MACs of the maths (padding excluded) */
    double dram_bytes;          /* moved between DRAM and chip, bursts included */
    double operand_bytes;       /* operand bytes consumed by compute (for reuse):
                                 * GEMM: one A and one B element per MAC;
                                 * elementwise: every byte read */
    uint64_t sram_bytes;        /* working set per unit */
    double compute_us, memory_us, launch_us;
    double time_us;             /* this kernel's share of the batch latency, launch included */
    double dram_bytes_per_us;   /* demand while it runs: dram_bytes / (time_us - launch_us) */
    kw_bound bound;
    int fallback;               /* ran on the generic kernel */
    kw_prec prec;
    /* --- appended by the cost area --- */
    double exec_flops;          /* FLOPs the array executes, padding included (energy) */
    double pad_efficiency;      /* useful / executed MACs (array granule and tile padding) */
    double wave_efficiency;     /* tiles / (waves x units) */
    double tiles;               /* parallel work items (output tiles x split x instances) */
    /* --- appended by the model area: the storage hierarchy --- */
    double shared_bytes;        /* moved between the shared level (L2) and the units; 0 without one */
    double dram_us, shared_us;  /* each level's bytes over its achievable bandwidth */
    double matrix_us;           /* matrix work alone (attention: without the softmax) */
    double nonmatrix_us;        /* non-matrix work of the kernel (attention's softmax) */
    uint64_t reg_bytes;         /* register working set per unit (accumulators, scores) */
    double epilogue_us;         /* output stores after each tile's mainloop, not overlapped */
    double drain_us;            /* maths after a tile's last load, not overlapped (kw_flash) */
    double sram_us;             /* operand bytes through the units' SRAM over its bandwidth;
                                 * 0 where not modelled (kw_flash's serial schedule only) */
} kw_kernel;

typedef struct kw_cost {
    int n_kernels;
    kw_kernel kernels[KW_KERNEL_MAX];
    double latency_us;          /* one batch, end to end, on the given cores */
    double flops;
    double launch_us;           /* launch overhead in latency_us */
    int launches;
    double dram_bytes;
    double operand_bytes;
    double reuse_ratio;         /* operand_bytes / dram_bytes */
    double peak_dram_bytes_per_us;
    double energy_j;            /* 0 when the accelerator gives no energies */
    int fallbacks;              /* kernels on the fallback path */
    kw_bound bound;             /* class of the batch as a whole */
    /* --- appended by the cost area --- */
    double bound_us[KW_BOUND_COUNT]; /* latency split by class: each kernel's launch part
                                      * to launch, its work to its class; bound = argmax */
    /* --- appended by the model area --- */
    double shared_bytes;        /* summed over kernels */
    /* --- appended by the llm area --- */
    int folded;                 /* kernels folded into another's record (per-expert GEMMs): in launches */
    double moe_dropped_frac;    /* share of routed token slots over expert capacity (dropped) */
    double comm_us;             /* tensor-parallel all-reduce time in latency_us */
} kw_cost;

/* Cost of one batch of `requests` requests of shape s (each of s->batch sequences)
 * mapped by m on `cores` scheduling cores of a (1 <= cores <= a->cores).
 * Returns 0, KW_EINPUT for an impossible input (message says which), or
 * KW_EMODEL when the plan needs more than KW_KERNEL_MAX kernels.
 * Cost: O(ops); no allocation; safe to call from many threads at once. */
int kw_cost_eval(kw_cost *out, const kw_accel *a, const kw_block *b, const kw_shape *s,
                 const kw_mapping *m, int requests, int cores);

/* One iteration of continuous batching as one packed pass (TensorRT-LLM's
 * in-flight batching: context and generation sequences in one input tensor,
 * nvidia.github.io/TensorRT-LLM/features/paged-attention-ifb-scheduler.html):
 * the prefill shape's prompt tokens and the decode shape's sequences go
 * through every GEMM, norm and MoE as one activation (the weights read once),
 * and each part's attention is its own kernel (the decode one named
 * <op>_decode) over its own context. One request of each; KW_EINPUT as
 * kw_cost_eval, or when the parts' phases are not prefill and decode. */
int kw_cost_eval_mixed(kw_cost *out, const kw_accel *a, const kw_block *b, const kw_shape *prefill,
                       const kw_shape *decode, const kw_mapping *m, int cores);

/* What one kernel costs beside its work inside a replayed CUDA graph, us:
 * graph_node_us, a whole kernel's cost in the graph, its device-side setup and
 * teardown included (its sources time whole kernels: CUDA.jl's graphs page,
 * 80 small kernels in 70 us; Hazy Research, about 1.3 us per kernel of setup
 * and teardown with CUDA graphs; src/model-facts.md#launch). So the kernel's
 * device-side fixed time (kernel_fixed_us, charged where the accelerator has a
 * storage hierarchy) is part of it, never added to it, and a node never costs
 * less than that fixed time: max(graph_node_us, kernel_fixed_us). */
double kw_cost_graph_node_us(const kw_accel *a);

#endif
