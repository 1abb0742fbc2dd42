/* kw_knobuse.c - knobs a block cannot use (kw_knobuse.h).
 *
 * Design: structural rules, one per knob the model reads only when the block
 * has the operators it acts on, instead of evaluating the baseline with every
 * value of every knob: the rules cost nothing, need no evaluator (validate
 * runs before any run exists) and say why, in the block's own terms. A knob
 * that the structure allows but that happens to change nothing for a shape is
 * what the measured sensitivity (kw_netpath.h) reports instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"
#include "kw_knobuse.h"

static int kw_ku_count(const kw_block *b, kw_op_kind kind)
{
    int n = 0;
    for (int i = 0; i < b->n_ops; i++)
        n += b->ops[i].kind == kind;
    return n;
}

/* GEMMs sharing merge tag `tag` with the same K (kw_cost.c merges them so). */
static int kw_ku_mergeable(const kw_block *b, const char *tag)
{
    for (int i = 0; i < b->n_ops; i++) {
        const kw_op *a = &b->ops[i];
        if (a->kind != KW_OP_GEMM || strcmp(a->merge, tag) != 0)
            continue;
        for (int j = i + 1; j < b->n_ops; j++)
            if (b->ops[j].kind == KW_OP_GEMM && strcmp(b->ops[j].merge, tag) == 0 &&
                b->ops[j].k == a->k)
                return 1;
    }
    return 0;
}

/* A residual directly followed by a norm (kw_cost.c fuses exactly that pair). */
static int kw_ku_residual_norm(const kw_block *b)
{
    for (int i = 0; i + 1 < b->n_ops; i++)
        if (b->ops[i].kind == KW_OP_RESIDUAL && b->ops[i + 1].kind == KW_OP_NORM)
            return 1;
    return 0;
}

/* An epilogue to fuse: a GEMM or conv with a bias+activation epilogue, or a
 * GEMM directly followed by a standalone activation (kw_cost.c). */
static int kw_ku_epilogue(const kw_block *b)
{
    for (int i = 0; i < b->n_ops; i++) {
        const kw_op *o = &b->ops[i];
        if ((o->kind == KW_OP_GEMM || o->kind == KW_OP_CONV) && o->epilogue)
            return 1;
        if (o->kind == KW_OP_GEMM && i + 1 < b->n_ops && b->ops[i + 1].kind == KW_OP_ACT)
            return 1;
    }
    return 0;
}

/* Is every value of knob `name` in the space equal to `value`? (-1: no such knob) */
static int kw_ku_only(const kw_knobspace *ks, const char *name, int value, int *max_value)
{
    int k = kw_knobspace_find(ks, name);
    if (k < 0)
        return -1;
    int all = 1;
    *max_value = 0;
    for (int i = 0; i < ks->knobs[k].n_values; i++) {
        int v = atoi(ks->knobs[k].values[i]);
        if (v > *max_value)
            *max_value = v;
        all &= v == value;
    }
    return all;
}

int kw_knobuse_check(kw_knobuse *out, int max, const kw_config *cfg)
{
    const kw_space *sp = &cfg->space;
    const kw_knobspace *ks = &sp->knobs;
    const kw_block *b = NULL;
    for (int i = 0; i < cfg->workload.n_blocks; i++)
        if (strcmp(cfg->workload.blocks[i].name, sp->block) == 0)
            b = &cfg->workload.blocks[i];
    if (!b)
        return kw_error_set(KW_EINPUT, "space '%s': block '%s' is not in the workload", sp->name,
                            sp->block);
    int n = 0;
    for (int k = 0; k < ks->n_knobs; k++) {
        const char *name = ks->knobs[k].name;
        char why[KW_KNOBUSE_MSG_LEN] = "";
        int mv = 0;
        if (strcmp(name, "fuse_residual_norm") == 0 && !kw_ku_residual_norm(b))
            snprintf(why, sizeof why, "block '%s' has no residual followed by a norm to fuse", b->name);
        else if (strcmp(name, "fuse_qkv") == 0 && !kw_ku_mergeable(b, "qkv"))
            snprintf(why, sizeof why, "block '%s' has no two GEMMs with merge=\"qkv\" and the same K",
                     b->name);
        else if (strcmp(name, "fuse_gate_up") == 0 && !kw_ku_mergeable(b, "gate_up"))
            snprintf(why, sizeof why,
                     "block '%s' has no two GEMMs with merge=\"gate_up\" and the same K", b->name);
        else if (strcmp(name, "fuse_epilogue") == 0 && !kw_ku_epilogue(b))
            snprintf(why, sizeof why, "block '%s' has no GEMM epilogue or activation to fuse", b->name);
        else if ((strcmp(name, "fuse_attention") == 0 || strcmp(name, "softmax_precision") == 0) &&
                 kw_ku_count(b, KW_OP_ATTENTION) == 0)
            snprintf(why, sizeof why, "block '%s' has no attention operator", b->name);
        else if (strcmp(name, "batch_timeout_us") == 0 && kw_ku_only(ks, "max_batch", 1, &mv) == 1)
            /* kw_sim.c batcher: a batch closes as soon as the queue holds
             * max_batch requests, so with max_batch 1 nobody waits for the timeout */
            snprintf(why, sizeof why, "max_batch can only be 1, so no batch ever waits for the timeout");
        else if (strcmp(name, "placement") == 0) {
            /* kw_sim.c dispatcher: one group of cores (cores / cores_per_request
             * = 1) leaves every placement the same choice */
            int only = kw_ku_only(ks, "cores_per_request", cfg->accel.cores, &mv);
            if (only == 1 || (only < 0 && cfg->accel.cores == 1))
                snprintf(why, sizeof why, "the accelerator's %d core%s form a single group, so every "
                         "placement is the same", cfg->accel.cores, cfg->accel.cores == 1 ? "" : "s");
        }
        if (!why[0])
            continue;
        if (n < max) {
            out[n].knob = k;
            out[n].line = ks->knobs[k].line;
            snprintf(out[n].why, sizeof out[n].why, "%s", why);
        }
        n++;
    }
    return n;
}
