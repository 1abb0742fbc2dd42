/* kw_moe.c - mixture-of-experts operators: routing imbalance and the kernel
 * plan (see kw_moe.h).
 *
 * Design choice: an MoE operator is one element of the block, planned here
 * and costed by stage 1's own GEMM and elementwise rules (kw_cost_hook.h),
 * so tiling, traffic, fallback and launch rules are the same as a dense
 * GEMM's. The plan, for T tokens of width K, top-k routing over E experts of
 * FFN width N (gated: gate and up, N columns each, then down):
 *
 *   router    GEMM T x E x K (the gating logits; softmax/top-k not costed)
 *   dispatch  the T x K activations permuted into expert order, T k rows out
 *   experts   gate_up (2N columns) and down (K columns) over each expert's
 *             rows; the SiLU(gate)*up act between them is its own kernel
 *             unless fuse_epilogue puts it in gate_up's epilogue. moe_kernel:
 *             grouped     one kernel for all experts, each its own rows
 *                         (Gale et al., "MegaBlocks", MLSys 2023, block-sparse
 *                         grouped GEMM: no padding, no dropped tokens);
 *             batched     one kernel, every expert padded to the busiest
 *                         expert's rows (the capacity-padded batched GEMM of
 *                         GShard, Lepikhin et al. arXiv 2006.16668, sec. 2.2);
 *             per_expert  one GEMM per expert that received tokens (each its
 *                         own launch; folded into one line of the plan).
 *   shared    S shared experts see every token: one dense gated FFN of S x
 *             N_shared columns (DeepSeekMoE, Dai et al. arXiv 2401.06066,
 *             "shared expert isolation").
 *   combine   the T k expert outputs weighted (fp32 gate weights) and summed
 *             back into T x K.
 *
 * Routing: expert i's expected share p_i of the T k routed slots is uniform
 * (1/E), Zipf (i^-s / H(E,s), H the generalised harmonic number) or a
 * replayed trace. A token takes each expert at most once, so expert i's
 * tokens are modelled as Binomial(T, k p_i) (independent across experts:
 * the exact marginal when each token's choices are fixed-size with inclusion
 * probability k p_i; the correlation between experts is not modelled). The
 * cost uses the busiest-first order statistics averaged over KW_MOE_DRAWS
 * draws from a GSL stream seeded by the inputs, so the busiest expert's
 * excess over the mean sets the batched kernel and the per-expert tail.
 * Capacity (Switch Transformer, Fedus et al. arXiv 2101.03961, eq. 3):
 * C = ceil(cf x T k / E) tokens per expert; tokens past C are dropped
 * (cost excludes them, kw_cost.moe_dropped_frac reports their share).
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"
#include "kw_mapping.h"
#include "kw_mix.h"
#include "kw_moe.h"

/* The router's top-k weights, one per routed slot, kept in fp32 (vLLM
 * fused_moe: topk_weights float32) and read by the combine kernel. */
#define KW_MOE_GATE_WEIGHT_BYTES 4.0
/* Seed of the routing draws (a constant: the draws depend only on the inputs). */
#define KW_MOE_SEED 0x6d6f6552ULL
/* An expert is launched when it expects at least half a token (the expected
 * launches of experts that receive tokens in some draws and not in others). */
#define KW_MOE_ACTIVE_TOKENS 0.5

int kw_moe_shares(double *share, const kw_op *op, const kw_block *b)
{
    int E = op->experts;
    if (E < 1 || E > KW_EXPERT_MAX || op->top_k < 1 || op->top_k > E)
        return kw_error_set(KW_EINPUT, "moe '%s': needs 1 <= top_k <= experts <= %d", op->name,
                            KW_EXPERT_MAX);
    double sum = 0.0;
    for (int i = 0; i < E; i++) {
        switch (op->routing) {
        case KW_ROUTE_ZIPF: share[i] = pow((double)(i + 1), -op->zipf_s); break;
        case KW_ROUTE_TRACE:
            if (!b || b->n_route != E)
                return kw_error_set(KW_EINPUT, "moe '%s': the routing trace has %d experts, the "
                                    "operator %d", op->name, b ? b->n_route : 0, E);
            share[i] = b->route_share[i];
            break;
        default: share[i] = 1.0; break;
        }
        sum += share[i];
    }
    if (!(sum > 0.0))
        return kw_error_set(KW_EINPUT, "moe '%s': the routing gives no expert any token", op->name);
    for (int i = 0; i < E; i++) {
        share[i] /= sum;
        if (share[i] * op->top_k > 1.0 + 1e-12)
            return kw_error_set(KW_EINPUT,
                                "moe '%s': expert %d's routing share %.3g x top_k %d exceeds 1 "
                                "(a token takes an expert at most once)",
                                op->name, i, share[i], op->top_k);
    }
    return 0;
}

static int kw_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

int kw_moe_loads(double *loads, double *dropped_frac, const kw_op *op, const kw_block *b,
                 double tokens)
{
    double share[KW_EXPERT_MAX], draw[KW_EXPERT_MAX];
    int rc = kw_moe_shares(share, op, b);
    if (rc != 0)
        return rc;
    int E = op->experts;
    double slots = tokens * op->top_k;
    double cap = op->capacity_factor > 0.0 ? ceil(op->capacity_factor * slots / E) : HUGE_VAL;
    unsigned int T = tokens >= 4294967295.0 ? 4294967295u : (unsigned int)llround(tokens);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    if (!r)
        return kw_error_set(KW_ENOMEM, "moe '%s': out of memory for the routing stream", op->name);
    uint64_t seed = KW_MOE_SEED ^ kw_mix_final((uint64_t)T << 20 ^ (uint64_t)E << 8 ^
                                              (uint64_t)op->top_k);
    gsl_rng_set(r, (unsigned long)kw_mix_final(seed));
    for (int i = 0; i < E; i++)
        loads[i] = 0.0;
    double dropped = 0.0;
    for (int d = 0; d < KW_MOE_DRAWS; d++) {
        for (int i = 0; i < E; i++) {
            double pi = share[i] * op->top_k;
            draw[i] = pi >= 1.0 ? (double)T : (double)gsl_ran_binomial(r, pi, T);
        }
        qsort(draw, (size_t)E, sizeof draw[0], kw_desc);
        for (int i = 0; i < E; i++) {
            double kept = fmin(draw[i], cap);
            dropped += draw[i] - kept;
            loads[i] += kept / KW_MOE_DRAWS;
        }
    }
    gsl_rng_free(r);
    *dropped_frac = slots > 0.0 ? dropped / KW_MOE_DRAWS / slots : 0.0;
    return 0;
}

static void kw_moe_name(char *dst, const char *base, const char *suffix)
{
    size_t ls = strlen(suffix), lb = strnlen(base, KW_NAME_MAX - 1 - ls);
    memcpy(dst, base, lb);
    memcpy(dst + lb, suffix, ls + 1);
}

/* The routed experts' gate_up or down GEMMs as moe_kernel plans them. */
static int kw_moe_experts(kw_cost_ctx *c, const kw_block *b, const kw_op *op, const double *loads,
                          double n, double k, double out_n, const char *name)
{
    int E = op->experts, active = 0;
    double rows = 0.0;
    for (int i = 0; i < E; i++)
        if (loads[i] >= KW_MOE_ACTIVE_TOKENS) {
            active++;
            rows += loads[i];
        }
    if (active == 0)
        return 0;
    switch ((kw_moe_kernel)kw_cost_hook_mapping(c)->moe_kernel) {
    case KW_MOE_BATCHED:
        return kw_cost_hook_gemm(c, b, op, fmax(loads[0], 1.0), n, k, E, out_n, name);
    case KW_MOE_PER_EXPERT: {
        int first = kw_cost_hook_n_kernels(c);
        for (int i = 0; i < E; i++) {
            if (loads[i] < KW_MOE_ACTIVE_TOKENS)
                continue;
            /* a launched expert computes at least one row */
            int rc = kw_cost_hook_gemm(c, b, op, fmax(loads[i], 1.0), n, k, 1.0, out_n, name);
            if (rc != 0)
                return rc;
            kw_cost_hook_fold(c, first);
        }
        return 0;
    }
    default: /* grouped: each expert's own rows; the mean rows per active expert */
        return kw_cost_hook_gemm(c, b, op, fmax(rows / active, 1.0), n, k, active, out_n, name);
    }
}

int kw_moe_plan(kw_cost_ctx *c, const kw_block *b, const kw_op *op, double tokens)
{
    double loads[KW_EXPERT_MAX], dropped;
    int rc = kw_moe_loads(loads, &dropped, op, b, tokens);
    if (rc != 0)
        return rc;
    const kw_mapping *m = kw_cost_hook_mapping(c);
    double in = kw_cost_hook_elem_bytes(c);
    double K = (double)op->k, N = (double)op->n, routed = 0.0;
    for (int i = 0; i < op->experts; i++)
        routed += loads[i];
    char nm[KW_NAME_MAX];
    kw_cost_hook_out(c)->moe_dropped_frac = dropped;

    kw_moe_name(nm, op->name, "_router");
    if ((rc = kw_cost_hook_gemm(c, b, op, tokens, op->experts, K, 1.0, 0.0, nm)) != 0)
        return rc;
    if ((rc = kw_cost_hook_elementwise(c, op->name, "_dispatch", tokens * K * in, routed * K * in)) != 0)
        return rc;
    /* gated: gate and up as one GEMM of 2N columns (the fused w13 of every MoE
     * kernel); with fuse_epilogue the SiLU(gate)*up product is all it writes */
    int gated = op->gated != 0, fused = gated && m->fuse_epilogue;
    double up_n = gated ? 2.0 * N : N;
    kw_moe_name(nm, op->name, gated ? "_gate_up" : "_up");
    if ((rc = kw_moe_experts(c, b, op, loads, up_n, K, fused ? N : 0.0, nm)) != 0)
        return rc;
    if (gated && !fused &&
        (rc = kw_cost_hook_elementwise(c, op->name, "_act", routed * 2.0 * N * in, routed * N * in)) != 0)
        return rc;
    kw_moe_name(nm, op->name, "_down");
    if ((rc = kw_moe_experts(c, b, op, loads, K, N, 0.0, nm)) != 0)
        return rc;
    if (op->shared_experts > 0) {
        double sn = (double)op->shared_experts * (double)(op->shared_n ? op->shared_n : op->n);
        kw_moe_name(nm, op->name, gated ? "_shared_gate_up" : "_shared_up");
        if ((rc = kw_cost_hook_gemm(c, b, op, tokens, gated ? 2.0 * sn : sn, K, 1.0,
                                    fused ? sn : 0.0, nm)) != 0)
            return rc;
        if (gated && !fused &&
            (rc = kw_cost_hook_elementwise(c, op->name, "_shared_act", tokens * 2.0 * sn * in,
                                           tokens * sn * in)) != 0)
            return rc;
        kw_moe_name(nm, op->name, "_shared_down");
        if ((rc = kw_cost_hook_gemm(c, b, op, tokens, K, sn, 1.0, 0.0, nm)) != 0)
            return rc;
    }
    return kw_cost_hook_elementwise(c, op->name, "_combine",
                                    routed * (K * in + KW_MOE_GATE_WEIGHT_BYTES), tokens * K * in);
}

const kw_block *kw_moe_numerics_view(kw_block *view, const kw_block *b)
{
    int moes = 0;
    for (int i = 0; i < b->n_ops; i++)
        moes += b->ops[i].kind == KW_OP_MOE;
    if (moes == 0 || b->n_ops + 3 * moes > KW_OP_MAX)
        return b; /* the loader refuses a block without room for the view */
    *view = *b;
    view->n_ops = 0;
    for (int i = 0; i < b->n_ops; i++) {
        const kw_op *op = &b->ops[i];
        if (op->kind != KW_OP_MOE) {
            view->ops[view->n_ops++] = *op;
            continue;
        }
        kw_op g = *op;
        g.kind = KW_OP_GEMM;
        g.weights = 1;
        g.experts = g.top_k = g.shared_experts = 0;
        kw_op up = g, act = g, down = g;
        if (op->gated) {
            snprintf(g.merge, sizeof g.merge, "gate_up");
            kw_moe_name(g.name, op->name, "_gate");
            view->ops[view->n_ops++] = g;
            up.merge[0] = '\0';
            snprintf(up.merge, sizeof up.merge, "gate_up");
        }
        kw_moe_name(up.name, op->name, "_up");
        view->ops[view->n_ops++] = up;
        if (op->gated) {
            act.kind = KW_OP_ACT;
            act.width = op->n;
            act.group[0] = '\0';
            act.merge[0] = '\0';
            kw_moe_name(act.name, op->name, "_act");
            view->ops[view->n_ops++] = act;
        }
        down.merge[0] = '\0';
        down.n = op->k;
        down.k = op->n;
        kw_moe_name(down.name, op->name, "_down");
        view->ops[view->n_ops++] = down;
    }
    return view;
}
