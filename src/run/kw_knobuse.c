/* kw_knobuse.c - knobs a block cannot use (kw_knobuse.h).
 *
 * Design: structural rules (the knob catalogue's kw_catalogue_uses, one per
 * knob the model reads only when the block has the operators it acts on)
 * plus the rules that depend on the space's other knobs, instead of
 * evaluating the baseline with every value of every knob: the rules cost nothing, need no evaluator (validate
 * runs before any run exists) and say why, in the block's own terms. A knob
 * that the structure allows but that happens to change nothing for a shape is
 * what the measured sensitivity (kw_netpath.h) reports instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_catalogue.h"
#include "kw_error.h"
#include "kw_knobuse.h"

/* Why block b cannot use catalogue knob k, in the block's own terms. */
static void kw_ku_why(char *why, size_t n, const kw_cat_knob *k, const kw_block *b)
{
    switch (k->id) {
    case KW_CAT_FUSE_RESIDUAL_NORM:
        snprintf(why, n, "block '%s' has no residual followed by a norm to fuse", b->name);
        break;
    case KW_CAT_FUSE_NORM_GEMM:
        snprintf(why, n, "block '%s' has no norm followed by a weight GEMM", b->name);
        break;
    case KW_CAT_FUSE_QKV:
        snprintf(why, n, "block '%s' has no two GEMMs with merge=\"qkv\" and the same K", b->name);
        break;
    case KW_CAT_FUSE_GATE_UP:
        snprintf(why, n, "block '%s' has no two GEMMs with merge=\"gate_up\" and the same K", b->name);
        break;
    case KW_CAT_FUSE_EPILOGUE:
        snprintf(why, n, "block '%s' has no GEMM epilogue or activation to fuse", b->name);
        break;
    case KW_CAT_FUSE_ATTENTION: case KW_CAT_SOFTMAX_PRECISION: case KW_CAT_ATTENTION_SCHEDULE:
        snprintf(why, n, "block '%s' has no attention operator", b->name);
        break;
    default:
        snprintf(why, n, "block '%s' is not one of the %s", b->name, k->used_by);
        break;
    }
}

/* Is every value of knob `name` in the space equal to `value`? (-1: no such knob) */
static int kw_ku_only(const kw_knobspace *ks, const char *name, int value, int *max_value)
{
    int k = kw_knobs_find(ks, name);
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

/* The space's block in the workload, or NULL. */
static const kw_block *kw_ku_block(const kw_config *cfg)
{
    for (int i = 0; i < cfg->workload.n_blocks; i++)
        if (strcmp(cfg->workload.blocks[i].name, cfg->space.block) == 0)
            return &cfg->workload.blocks[i];
    return NULL;
}

void kw_knobuse_fuses(uint64_t *fuses, const kw_config *cfg)
{
    const kw_knobspace *ks = &cfg->space.knobs;
    const kw_block *b = kw_ku_block(cfg);
    memset(fuses, 0, KW_KNOB_MAX * sizeof *fuses);
    for (int f = 0; b && f < ks->n_knobs && f < 64; f++) {
        int gf = -1;
        const kw_cat_knob *cf = kw_catalogue_find(ks->knobs[f].name, b, &gf);
        for (int j = 0; cf && j < ks->n_knobs && j < 64; j++) {
            int g = -1;
            const kw_cat_knob *cj = kw_catalogue_find(ks->knobs[j].name, b, &g);
            if (cj && cj->per_group && g >= 0 && kw_catalogue_fuses(cf, b, b->groups[g]))
                fuses[f] |= 1ULL << j;
        }
    }
}

uint64_t kw_knobuse_queue(const kw_config *cfg)
{
    const kw_knobspace *ks = &cfg->space.knobs;
    const kw_block *b = kw_ku_block(cfg);
    uint64_t q = 0;
    for (int k = 0; b && k < ks->n_knobs && k < 64; k++) {
        int g = -1;
        const kw_cat_knob *c = kw_catalogue_find(ks->knobs[k].name, b, &g);
        if (!c)
            continue;
        switch (c->id) {
        case KW_CAT_MAX_BATCH: case KW_CAT_BATCH_TIMEOUT_US: case KW_CAT_PLACEMENT:
        case KW_CAT_CORES_PER_REQUEST: case KW_CAT_PREFILL_CHUNK_TOKENS: case KW_CAT_TOKEN_BUDGET:
        case KW_CAT_MAX_SEQS:
            q |= 1ULL << k;
            break;
        default:
            break;
        }
    }
    return q;
}

int kw_knobuse_check(kw_knobuse *out, int max, const kw_config *cfg)
{
    const kw_space *sp = &cfg->space;
    const kw_knobspace *ks = &sp->knobs;
    const kw_block *b = kw_ku_block(cfg);
    if (!b)
        return kw_error_set(KW_EINPUT, "space '%s': block '%s' is not in the workload", sp->name,
                            sp->block);
    int n = 0;
    for (int k = 0; k < ks->n_knobs; k++) {
        const char *name = ks->knobs[k].name;
        char why[KW_KNOBUSE_MSG_LEN] = "";
        int mv = 0;
        /* structure: the catalogue's rule for the knob (kw_catalogue_uses, the
         * one home of "which blocks use it", also shown by show --catalogue) */
        int g = -1;
        const kw_cat_knob *ce = kw_catalogue_find(name, b, &g);
        if (ce && !kw_catalogue_uses(ce, b, g >= 0 ? b->groups[g] : NULL))
            kw_ku_why(why, sizeof why, ce, b);
        else if (strcmp(name, "batch_timeout_us") == 0 && kw_ku_only(ks, "max_batch", 1, &mv) == 1)
            /* kw_sim.c batcher: a batch closes as soon as the queue holds
             * max_batch requests, so with max_batch 1 nobody waits for the timeout */
            snprintf(why, sizeof why, "max_batch can only be 1, so no batch ever waits for the timeout");
        else if (strcmp(name, "tp_overlap_chunks") == 0 &&
                 kw_ku_only(ks, "tp_degree", 1, &mv) != 0)
            /* kw_tp.c: without a second device there is no all-reduce to overlap */
            snprintf(why, sizeof why, "tp_degree is only ever 1, so there is no all-reduce to overlap");
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
