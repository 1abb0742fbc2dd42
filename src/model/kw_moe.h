/* kw_moe.h - mixture-of-experts operators: routing imbalance and the kernel
 * plan of one MoE layer (router, token dispatch, routed expert FFNs, shared
 * experts, combine), costed through stage 1's rules (kw_cost_hook.h).
 *
 *   kw_moe_shares   each expert's expected share of the routed token slots
 *   kw_moe_loads    tokens per expert, busiest first, averaged over seeded
 *                   draws, with the capacity cut and the dropped share
 *   kw_moe_plan     the kernels of one MoE operator (called by kw_cost_eval)
 *   kw_moe_numerics_view  the block as the drift stage computes it
 */
#ifndef KW_MOE_H
#define KW_MOE_H

#include "kw_cost_hook.h"
#include "kw_model.h"

/* How the routed experts' GEMMs become kernels (the moe_kernel knob). */
typedef enum {
    KW_MOE_GROUPED,    /* one grouped GEMM over all experts, each its own rows (MegaBlocks) */
    KW_MOE_BATCHED,    /* one batched GEMM, every expert padded to the busiest one's rows */
    KW_MOE_PER_EXPERT  /* one GEMM kernel per expert that received tokens */
} kw_moe_kernel;

/* Draws averaged by kw_moe_loads (each a vector of per-expert binomials). */
#define KW_MOE_DRAWS 16

/* share[i], i < op->experts: expert i's expected share of the tokens x top_k
 * routed slots (sum 1); uniform 1/E, Zipf i^-s / H(E, s), or the block's
 * replayed trace. KW_EINPUT when a share times top_k exceeds 1 (an expert
 * would need more than every token). */
int kw_moe_shares(double *share, const kw_op *op, const kw_block *b);

/* Expected tokens per expert for `tokens` tokens, sorted busiest first
 * (mean order statistics over KW_MOE_DRAWS seeded draws: expert i receives
 * Binomial(tokens, top_k x share[i]) tokens, at most one slot per token),
 * each cut at the expert capacity when op->capacity_factor > 0;
 * *dropped_frac is the mean share of routed slots over capacity.
 * Deterministic for given inputs; no allocation beyond the GSL stream. */
int kw_moe_loads(double *loads, double *dropped_frac, const kw_op *op, const kw_block *b,
                 double tokens);

/* Kernels of MoE operator op for `tokens` rows of width op->k. */
int kw_moe_plan(kw_cost_ctx *c, const kw_block *b, const kw_op *op, double tokens);

/* The block as the quality-drift stage emulates it: each MoE operator becomes
 * one routed expert's FFN (gate, up, act, down), whose numerics stand for
 * every expert's. Returns b itself when it has no MoE (view untouched). */
const kw_block *kw_moe_numerics_view(kw_block *view, const kw_block *b);

#endif
