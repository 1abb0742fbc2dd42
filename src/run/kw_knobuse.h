/* kw_knobuse.h - which knobs of a space its block can use at all: a knob the
 * model never reads for this block (fuse_residual_norm on a block without a
 * residual followed by a norm, batch_timeout_us while max_batch can only be 1)
 * changes nothing, and every evaluation spent on it is wasted. `knobwise
 * validate` warns about each (a warning, not an error: the space is still
 * valid); the results flag, after the fact, the knobs that measured no effect
 * (kw_netpath.h sensitivity). The rules read the same block structure the cost
 * model does (src/model/kw_cost.c, kw_sim.c): each names the code it mirrors. */
#ifndef KW_KNOBUSE_H
#define KW_KNOBUSE_H

#include "kw_model.h"

#define KW_KNOBUSE_MSG_LEN 256

typedef struct kw_knobuse {
    int knob;                      /* index into cfg->space.knobs */
    int line;                      /* the knob's line in the space file (0 when unknown) */
    char why[KW_KNOBUSE_MSG_LEN];  /* "block 'llama7b_attn' has no residual followed by a norm" */
} kw_knobuse;

/* The knobs of cfg's space that its block cannot use, at most max of them into
 * out (knob order). Returns how many there are (may exceed max), or a negative
 * code when the space's block is not in the workload. */
int kw_knobuse_check(kw_knobuse *out, int max, const kw_config *cfg);

/* Which knobs each merge knob of cfg's space fuses (engine opts.fuses, search/kw_ofat.c's
 * fusion pairs): bit j of fuses[f] is set when knob f (fuse_qkv, fuse_gate_up) merges the
 * gemms of the tiling group whose knob j is (kw_catalogue_fuses: the block's gemms with
 * f's merge tag, whatever their group is named). fuses has KW_KNOB_MAX entries; all 0
 * when the space's block is not in the workload. */
void kw_knobuse_fuses(uint64_t *fuses, const kw_config *cfg);

/* The knobs of cfg's space that the serving simulation reads and no kernel does
 * (engine opts.queue, search/kw_ofat.c's queue pairs): bit k is set when knob k is
 * max_batch, batch_timeout_us, placement or cores_per_request (the batcher and the
 * dispatcher of src/model/kw_sim.c), or the continuous batcher's prefill_chunk_tokens,
 * token_budget or max_seqs (kw_sim_cb.c). 0 when the space's block is not in the
 * workload. */
uint64_t kw_knobuse_queue(const kw_config *cfg);

#endif
