/* kw_catalogue.h - the knob catalogue: every knob the model understands, in
 * one table. The mapping decoder (kw_mapping.c) looks names and values up
 * here, the space loader and `knobwise validate` check against it (with "did
 * you mean" for a misspelt name), `knobwise show --catalogue` prints it, and
 * README's catalogue section is compared with it by tests/test_docs.c. */
#ifndef KW_CATALOGUE_H
#define KW_CATALOGUE_H

#include "kw_model.h"

typedef enum {
    KW_CAT_TILE_M, KW_CAT_TILE_N, KW_CAT_TILE_K, KW_CAT_SPLIT_K, KW_CAT_LOOP_ORDER,
    KW_CAT_DOUBLE_BUFFER, KW_CAT_FUSE_QKV, KW_CAT_FUSE_ATTENTION, KW_CAT_FUSE_EPILOGUE,
    KW_CAT_FUSE_GATE_UP, KW_CAT_FUSE_RESIDUAL_NORM, KW_CAT_PRECISION, KW_CAT_ACCUM_PRECISION,
    KW_CAT_SOFTMAX_PRECISION, KW_CAT_SPARSITY, KW_CAT_LAUNCH_MODE, KW_CAT_MAX_BATCH,
    KW_CAT_BATCH_TIMEOUT_US, KW_CAT_PLACEMENT, KW_CAT_CORES_PER_REQUEST,
    /* pipeline stages, launch-order swizzle, multicast cluster, softmax schedule */
    KW_CAT_STAGES, KW_CAT_SWIZZLE, KW_CAT_CLUSTER, KW_CAT_ATTENTION_SCHEDULE,
    /* LLM serving: MoE expert kernels, tensor parallelism, paged KV cache */
    KW_CAT_MOE_KERNEL, KW_CAT_TP_DEGREE, KW_CAT_KV_PAGE_TOKENS,
    /* continuous batching: prompt chunk and token budget per iteration */
    KW_CAT_PREFILL_CHUNK_TOKENS, KW_CAT_TOKEN_BUDGET, KW_CAT_MAX_SEQS,
    /* the norm folded into the next GEMM; the TP all-reduce overlapped in chunks */
    KW_CAT_FUSE_NORM_GEMM, KW_CAT_TP_OVERLAP_CHUNKS, KW_CAT_COUNT
} kw_cat_id;

typedef enum {
    KW_CAT_INT,   /* an integer in [min, max] */
    KW_CAT_REAL,  /* a decimal in [min, max] */
    KW_CAT_ENUM   /* one of values[] (the value's index is what the model gets) */
} kw_cat_kind;

typedef struct kw_cat_value {
    const char *name;
    const char *meaning;
} kw_cat_value;

typedef struct kw_cat_knob {
    kw_cat_id id;
    const char *name;          /* per-group knobs: the field ("tile_m"), named GROUP.tile_m */
    int per_group;
    const char *family;        /* tiling, fusion, precision, runtime */
    const char *meaning;
    kw_cat_kind kind;
    double min, max;           /* INT and REAL */
    const char *unit;          /* INT and REAL: what the number counts */
    int n_values;              /* ENUM */
    const kw_cat_value *values;
    const char *used_by;       /* which blocks use it, in words (kw_catalogue_uses decides) */
} kw_cat_knob;

/* The table, KW_CAT_COUNT entries in kw_cat_id order. */
const kw_cat_knob *kw_catalogue(void);

/* The entry for a space knob name and, for a per-group knob, the index of
 * its group in b (*group, -1 otherwise). NULL when the name is not a
 * catalogue knob for block b (a per-group knob needs b and a group of b). */
const kw_cat_knob *kw_catalogue_find(const char *name, const kw_block *b, int *group);

/* Parse text as a value of k: *out is the number (INT, REAL) or the value's
 * index (ENUM). 0, or -1 when it is not a valid value. */
int kw_catalogue_value(const kw_cat_knob *k, const char *text, double *out);

/* 1 when block b has an operator the knob acts on (see used_by), else 0.
 * For a per-group knob, group is the group's name. */
int kw_catalogue_uses(const kw_cat_knob *k, const kw_block *b, const char *group);

/* Does merge knob k (fuse_qkv, fuse_gate_up) fuse the gemms of b's tiling group
 * `group`: b uses k and a gemm of that group carries k's merge tag, so the merged
 * GEMM takes tiles from the knobs group.* (kw_cost.c). 0 for every other knob. */
int kw_catalogue_fuses(const kw_cat_knob *k, const kw_block *b, const char *group);

/* The valid values of k in words: "mnk|nmk|kmn" or "integer 1..65536". */
void kw_catalogue_domain(char *buf, size_t size, const kw_cat_knob *k);

/* " (did you mean 'qkv.tile_m'?)" among the catalogue knobs block b has
 * (every group's tiling knobs and the plain ones), or "". */
void kw_catalogue_hint(char *buf, size_t size, const kw_block *b, const char *name);

#endif
