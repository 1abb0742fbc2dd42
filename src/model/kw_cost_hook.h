/* kw_cost_hook.h - what stage 1 (kw_cost.c) lends the plans that live in
 * their own files: the mixture-of-experts plan (kw_moe.c) and the tensor-
 * parallel all-reduce (kw_tp.c).
 *
 * Design choice: the costing context stays opaque and the GEMM and
 * elementwise rules stay in kw_cost.c, so a plan outside it emits kernels
 * through the same rules (tiling, traffic, fallback, launch, totals) instead
 * of a copy of them. Rejected: exposing kw_ctx and kw_gemm in a header (every
 * change to the GEMM rules would then be a change to this interface).
 * Internal to the cost library; not installed.
 */
#ifndef KW_COST_HOOK_H
#define KW_COST_HOOK_H

#include "kw_cost.h"

typedef struct kw_ctx kw_cost_ctx;

/* A tiled GEMM kernel for operator op of block b (its group's tiling): count
 * instances of [m x k] x [k x n], B a weight operand, every operand in the
 * mapping's precision, out_n of the n columns written (a fused gated
 * activation writes half; 0 = n). Emits the kernel (+ its split-K reduction). */
int kw_cost_hook_gemm(kw_cost_ctx *c, const kw_block *b, const kw_op *op, double m, double n,
                      double k, double count, double out_n, const char *name);
/* A memory-bound kernel reading and writing these bytes (mapping precision). */
int kw_cost_hook_elementwise(kw_cost_ctx *c, const char *name, const char *suffix,
                             double read_bytes, double write_bytes);
/* A collective on the interconnect: time_us on the links (no compute), plus the
 * local DRAM read and write of the buffer (bytes each way), one launch plus
 * extra_launches more (chunked kernels recorded on this one line). */
int kw_cost_hook_comm(kw_cost_ctx *c, const char *name, double time_us, double buffer_bytes,
                      int extra_launches);
/* Fold every kernel emitted after index `into` into that kernel's record: one
 * line in the plan, each folded kernel still counted as a launch. */
void kw_cost_hook_fold(kw_cost_ctx *c, int into);

int kw_cost_hook_n_kernels(const kw_cost_ctx *c);
const kw_mapping *kw_cost_hook_mapping(const kw_cost_ctx *c);
const kw_accel *kw_cost_hook_accel(const kw_cost_ctx *c);
double kw_cost_hook_elem_bytes(const kw_cost_ctx *c);   /* bytes per element, mapping precision */
kw_cost *kw_cost_hook_out(kw_cost_ctx *c);

#endif
