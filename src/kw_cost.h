/* kw_cost.h - stage 1: kernel plan and cost of one batch on an accelerator.
 * (Implemented in kw_cost.c; see that file for the model and its sources.) */
#ifndef KW_COST_H
#define KW_COST_H

#include "kw_model.h"

#define KW_KERNEL_MAX 48

typedef enum { KW_BOUND_COMPUTE, KW_BOUND_MEMORY, KW_BOUND_LAUNCH, KW_BOUND_FALLBACK } kw_bound;
const char *kw_bound_name(kw_bound b);

typedef struct kw_kernel {
    char name[KW_NAME_MAX];     /* e.g. "qkv_proj", "attn_flash" */
    double flops;
    double dram_bytes;          /* moved between DRAM and chip, bursts included */
    double operand_bytes;       /* operand bytes consumed by compute (for reuse) */
    uint64_t sram_bytes;        /* working set per unit */
    double compute_us, memory_us, launch_us;
    double time_us;             /* this kernel's share of the batch latency, launch included */
    double dram_bytes_per_us;   /* demand while it runs: dram_bytes / (time_us - launch_us) */
    kw_bound bound;
    int fallback;               /* ran on the generic kernel */
    kw_prec prec;
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
} kw_cost;

/* Cost of one batch of `requests` requests of shape s (each of s->batch sequences)
 * mapped by m on `cores` scheduling cores of a. */
int kw_cost_eval(kw_cost *out, const kw_accel *a, const kw_block *b, const kw_shape *s,
                 const kw_mapping *m, int requests, int cores);

#endif
