/* kw_mapping.c - the one place knob values become model decisions.
 *
 * A candidate is value indices over the space's knobs; the model wants typed
 * decisions. Decoding starts from defaults (every knob a block does not list
 * keeps them) and applies each knob by its catalogue entry (kw_catalogue.c:
 * "<group>.<field>" for tiling, plain names for fusion, precision and
 * runtime; names, domains and ranges live only there). Unknown names are an
 * input error, so a misspelt knob never silently does nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "kw_catalogue.h"
#include "kw_mapping.h"

/* Value names come from the catalogue (kw_catalogue.c), in enum order. */
static const char *kw_enum_name(kw_cat_id id, int v)
{
    const kw_cat_knob *k = &kw_catalogue()[id];
    return v >= 0 && v < k->n_values ? k->values[v].name : "?";
}

const char *kw_mapping_loop_name(kw_loop l) { return kw_enum_name(KW_CAT_LOOP_ORDER, (int)l); }
const char *kw_mapping_attn_fusion_name(kw_attn_fusion f)
{
    return kw_enum_name(KW_CAT_FUSE_ATTENTION, (int)f);
}
const char *kw_mapping_placement_name(kw_placement p)
{
    return kw_enum_name(KW_CAT_PLACEMENT, (int)p);
}

int kw_mapping_block_group(const kw_block *b, const char *group)
{
    for (int i = 0; i < b->n_groups; i++)
        if (strcmp(b->groups[i], group) == 0)
            return i;
    return -1;
}

static void kw_mapping_defaults(kw_mapping *m, const kw_block *b)
{
    memset(m, 0, sizeof *m);
    m->n_groups = b ? b->n_groups : 0;
    for (int g = 0; g < KW_GROUP_MAX; g++) {
        m->tiling[g].tile_m = KW_DEFAULT_TILE_M;
        m->tiling[g].tile_n = KW_DEFAULT_TILE_N;
        m->tiling[g].tile_k = KW_DEFAULT_TILE_K;
        m->tiling[g].split_k = 1;
        m->tiling[g].loop = KW_LOOP_MNK;
        m->tiling[g].double_buffer = 1;
    }
    m->fuse_attention = KW_ATTN_NONE;
    m->precision = KW_PREC_BF16;
    m->accum_precision = KW_PREC_FP32;
    m->softmax_precision = KW_PREC_FP32;
    m->max_batch = KW_DEFAULT_MAX_BATCH;
    m->batch_timeout_us = KW_DEFAULT_BATCH_TIMEOUT_US;
    m->placement = KW_PLACE_ROUND_ROBIN;
    m->cores_per_request = 1;
}

/* Apply one knob=value to m. Returns 0, 1 when the name is not a catalogue
 * knob, -1 when the value does not parse for it. Names, domains and ranges
 * are the catalogue's; this only says which field each entry sets. */
static int kw_mapping_apply(kw_mapping *m, const kw_block *b, const char *knob, const char *val)
{
    int g = -1;
    const kw_cat_knob *k = kw_catalogue_find(knob, b, &g);
    if (!k)
        return 1;
    double v;
    if (kw_catalogue_value(k, val, &v) != 0)
        return -1;
    int iv = (int)v;
    kw_tiling *t = g >= 0 ? &m->tiling[g] : NULL;
    switch (k->id) {
    case KW_CAT_TILE_M: t->tile_m = iv; break;
    case KW_CAT_TILE_N: t->tile_n = iv; break;
    case KW_CAT_TILE_K: t->tile_k = iv; break;
    case KW_CAT_SPLIT_K: t->split_k = iv; break;
    case KW_CAT_LOOP_ORDER: t->loop = (kw_loop)iv; break;
    case KW_CAT_DOUBLE_BUFFER: t->double_buffer = iv; break;
    case KW_CAT_STAGES: t->stages = iv; break;
    case KW_CAT_SWIZZLE: t->swizzle = iv; break;
    case KW_CAT_CLUSTER: t->cluster = iv; break;
    case KW_CAT_ATTENTION_SCHEDULE: m->attn_overlap = iv; break;
    case KW_CAT_FUSE_QKV: m->fuse_qkv = iv; break;
    case KW_CAT_FUSE_ATTENTION: m->fuse_attention = (kw_attn_fusion)iv; break;
    case KW_CAT_FUSE_EPILOGUE: m->fuse_epilogue = iv; break;
    case KW_CAT_FUSE_GATE_UP: m->fuse_gate_up = iv; break;
    case KW_CAT_FUSE_RESIDUAL_NORM: m->fuse_residual_norm = iv; break;
    /* precision value indices are kw_prec values (the catalogue lists them in enum order) */
    case KW_CAT_PRECISION: m->precision = (kw_prec)iv; break;
    case KW_CAT_ACCUM_PRECISION: m->accum_precision = (kw_prec)iv; break;
    case KW_CAT_SOFTMAX_PRECISION: m->softmax_precision = (kw_prec)iv; break;
    case KW_CAT_SPARSITY: m->sparsity_2_4 = iv; break;
    case KW_CAT_LAUNCH_MODE: m->graph_mode = iv; break;
    case KW_CAT_MAX_BATCH: m->max_batch = iv; break;
    case KW_CAT_BATCH_TIMEOUT_US: m->batch_timeout_us = v; break;
    case KW_CAT_PLACEMENT: m->placement = (kw_placement)iv; break;
    case KW_CAT_CORES_PER_REQUEST: m->cores_per_request = iv; break;
    case KW_CAT_MOE_KERNEL: m->moe_kernel = iv; break;
    case KW_CAT_TP_DEGREE: m->tp_degree = iv; break;
    case KW_CAT_KV_PAGE_TOKENS: m->kv_page_tokens = iv; break;
    case KW_CAT_PREFILL_CHUNK_TOKENS: m->prefill_chunk_tokens = iv; break;
    case KW_CAT_TOKEN_BUDGET: m->token_budget = iv; break;
    case KW_CAT_MAX_SEQS: m->max_seqs = iv; break;
    case KW_CAT_FUSE_NORM_GEMM: m->fuse_norm_gemm = iv; break;
    case KW_CAT_TP_OVERLAP_CHUNKS: m->tp_overlap_chunks = iv; break;
    case KW_CAT_COUNT: return 1;
    }
    return 0;
}

int kw_mapping_knob_known(const kw_block *b, const char *knob)
{
    return kw_catalogue_find(knob, b, NULL) != NULL;
}

int kw_mapping_knob_check(const kw_block *b, const kw_knob *k, const kw_accel *a)
{
    kw_mapping m;
    kw_mapping_defaults(&m, b);
    if (!kw_mapping_knob_known(b, k->name)) {
        char hint[256];
        kw_catalogue_hint(hint, sizeof hint, b, k->name);
        return kw_error_set(KW_EINPUT, "unknown knob '%s' for block '%s'%s (knobwise show "
                            "--catalogue lists every knob)", k->name, b ? b->name : "?", hint);
    }
    int is_prec = strcmp(k->name, "precision") == 0 || strcmp(k->name, "accum_precision") == 0 ||
                  strcmp(k->name, "softmax_precision") == 0;
    for (int i = 0; i < k->n_values; i++) {
        if (kw_mapping_apply(&m, b, k->name, k->values[i]) != 0)
            return kw_error_set(KW_EINPUT, "knob '%s': value '%s' is not valid for this knob",
                                k->name, k->values[i]);
        if (a && is_prec) {
            int p = kw_prec_parse(k->values[i]);
            if (strcmp(k->name, "precision") == 0 && a->peak_flops[p] <= 0.0)
                return kw_error_set(KW_EINPUT,
                                    "knob '%s': accelerator '%s' does not support precision '%s'",
                                    k->name, a->name, k->values[i]);
        }
        if (a && strcmp(k->name, "sparsity") == 0 && strcmp(k->values[i], "2_4") == 0 &&
            !a->sparsity_2_4)
            return kw_error_set(KW_EINPUT,
                                "knob 'sparsity': accelerator '%s' does not support 2:4 sparsity",
                                a->name);
        if (a && strcmp(k->name, "tp_degree") == 0 && atoi(k->values[i]) > 1 &&
            !(a->link_bytes_per_s > 0.0))
            return kw_error_set(KW_EINPUT,
                                "knob 'tp_degree': value %s needs the accelerator's <interconnect> "
                                "(accelerator '%s' declares none)",
                                k->values[i], a->name);
        if (a && strcmp(k->name, "cores_per_request") == 0 && atoi(k->values[i]) > a->cores)
            return kw_error_set(KW_EINPUT,
                                "knob 'cores_per_request': value %s exceeds the accelerator's %d cores",
                                k->values[i], a->cores);
    }
    return 0;
}

int kw_mapping_decode(kw_mapping *out, const kw_space *space, const kw_block *b, const kw_cand *c)
{
    kw_mapping_defaults(out, b);
    const kw_knobspace *ks = &space->knobs;
    for (int i = 0; i < ks->n_knobs; i++) {
        const kw_knob *k = &ks->knobs[i];
        int vi = c->v[i];
        if (vi < 0 || vi >= k->n_values)
            return kw_error_set(KW_EINPUT, "knob '%s': value index %d out of its domain", k->name, vi);
        int r = kw_mapping_apply(out, b, k->name, k->values[vi]);
        if (r == 1)
            return kw_error_set(KW_EINPUT, "unknown knob '%s'", k->name);
        if (r < 0)
            return kw_error_set(KW_EINPUT, "knob '%s': value '%s' is not valid", k->name,
                                k->values[vi]);
    }
    return 0;
}
