/* kw_cost_cpu.h - stage 1's rules for a CPU (an accelerator file with a
 * <cpu> element, as `knobwise probe` writes it): the cost of one tiled
 * product, or of one flash-attention kernel, as cache-blocked kernels under a
 * register micro-tile run on a CPU's cores.
 *
 * kw_cost.c calls these in place of its GPU rules when a->cpu is set, and
 * only then: an accelerator file without <cpu> is costed exactly as before
 * (tests/test_cost.c holds the GPU figures; tests/test_cost_cpu.c these).
 * What differs on a CPU, each a general rule stated by the accelerator file:
 *   - the per-core vector FMA rate (peak / cores) on the cores the kernel's
 *     threads use, work items split in contiguous ranges (the largest range
 *     decides); no waves of a fixed array;
 *   - the micro-tile (<array> m x n): a partial micro-tile at a tile's edge
 *     either runs zero-padded (packed operands) or, with operands read in
 *     place, on scalar code (<cpu scalar_edges="true">) at the fallback
 *     fraction of the vector rate; a tile larger than the problem computes
 *     only the rows and columns that exist (no full-tile padding);
 *   - packing (double_buffer=on): each tile's A and B chunks copied to fp32
 *     panels in series with the micro-kernel: A by a scalar loop (one scalar
 *     MAC's time per element at the fallback fraction), B by vector copies
 *     (its bytes from the level the operands live in, 4 bytes per element
 *     written to the private cache); packed panels are fp32, so packed
 *     products run at the fp32 rate whatever the storage;
 *   - in place with B's rows a page or more apart (a GEMM's weights), the
 *     micro-kernel's strided B rows, re-read by every MR-row strip, are
 *     beyond the hardware prefetchers and cost in series at the first data
 *     cache's per-core rate (<cpu l1_gb_s>);
 *   - operand traffic from the level the operands fit in (private cache
 *     <memory sram_kib_per_unit>, the shared level of <storage>, else DRAM),
 *     overlapped with compute (out-of-order cores and hardware prefetch);
 *   - no scratchpad: a tile never "falls back" for its working set, and a
 *     tile_k above K is clamped, as a CPU loop is;
 *   - softmax's exp on scalar code at <cpu exp_mops_per_core>;
 *   - thread wake-up as the launch (kw_cost.c: none on a single thread).
 */
#ifndef KW_COST_CPU_H
#define KW_COST_CPU_H

#include "kw_cost.h"
#include "kw_mapping.h"

/* One product of the kernel (or `count` independent ones of this shape):
 * A m x k (a_bytes per element), B k x n (b_bytes), C m x n (c_bytes). */
typedef struct kw_cpu_mm {
    double m, n, k, count;
    double a_bytes, b_bytes, c_bytes;
    kw_prec prec;     /* storage precision: the rate of in-place (unpacked) products */
    int product;      /* 1: a product inside another kernel (attention): its query
                       * blocks (m tiles) are the threads' items, split_k does not
                       * apply; 0: a GEMM operator, items are split x m x n tiles */
} kw_cpu_mm;

/* Cost of the product on `threads` cores into k (compute_us, memory_us,
 * matrix_us, dram/shared bytes and times, exec_flops, tiles, pad and wave
 * efficiency). The caller sets flops and operand_bytes and finishes k. */
void kw_cost_cpu_mm(kw_kernel *k, const kw_accel *a, const kw_tiling *t, const kw_cpu_mm *mm,
                    int threads);

/* Flash attention as the CPU runs it: per (instance, query block of tile_m
 * rows), the KV blocks of tile_n keys each a QK^T product, an online softmax
 * and a PV product; causal blocks stop at their last row's diagonal. inst
 * instances of mq query rows over lk keys of head dim d, storage bytes
 * in_bytes (precision prec). Same outputs as kw_cost_cpu_mm. */
void kw_cost_cpu_flash(kw_kernel *k, const kw_accel *a, const kw_tiling *t, double inst,
                       double mq, double lk, double d, int causal, double in_bytes, kw_prec prec,
                       int threads);

/* Scalar-code time of `exps` exponentials (softmax) on `threads` cores; 0
 * when the accelerator gives no rate. */
double kw_cost_cpu_exp_us(const kw_accel *a, double exps, int threads);

#endif
