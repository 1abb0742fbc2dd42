/* kw_mapping.c - the one place the knob catalogue's names are interpreted.
 *
 * A candidate is value indices over the space's knobs; the model wants typed
 * decisions. Decoding starts from defaults (every knob a block does not list
 * keeps them) and applies each knob by name: "<group>.<field>" for tiling,
 * plain names for fusion, precision and runtime. Unknown names are an input
 * error, so a misspelt knob never silently does nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kw_mapping.h"

static const char *const kw_loop_names[] = {"mnk", "nmk", "kmn"};
static const char *const kw_attn_names[] = {"none", "qk_softmax", "flash"};
static const char *const kw_place_names[] = {"round_robin", "least_loaded", "stream_affinity"};
/* attention_schedule: serial = the softmax runs between the matrix steps
 * (FlashAttention-2); overlap = it runs under them (FlashAttention-3's
 * ping-pong and intra-warpgroup pipelining, arXiv 2407.08608 section 3.1). */
static const char *const kw_sched_names[] = {"serial", "overlap"};
/* Upper bound of the stages, swizzle and cluster knobs' values. */
#define KW_TILING_ORDINAL_MAX 64

const char *kw_loop_name(kw_loop l) { return (unsigned)l < 3 ? kw_loop_names[l] : "?"; }
const char *kw_attn_fusion_name(kw_attn_fusion f) { return (unsigned)f < 3 ? kw_attn_names[f] : "?"; }
const char *kw_placement_name(kw_placement p) { return (unsigned)p < 3 ? kw_place_names[p] : "?"; }

static int kw_pick(const char *const *names, int n, const char *text)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], text) == 0)
            return i;
    return -1;
}

static int kw_parse_int(long *out, const char *text, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static int kw_onoff(const char *text)
{
    if (strcmp(text, "on") == 0)
        return 1;
    if (strcmp(text, "off") == 0)
        return 0;
    return -1;
}

int kw_block_group(const kw_block *b, const char *group)
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
 * knob, -1 when the value does not parse for it. */
static int kw_mapping_apply(kw_mapping *m, const kw_block *b, const char *knob, const char *val)
{
    long iv;
    int e;
    const char *dot = strchr(knob, '.');
    if (dot) {
        char group[KW_NAME_MAX];
        size_t gl = (size_t)(dot - knob);
        if (gl == 0 || gl >= sizeof group)
            return 1;
        memcpy(group, knob, gl);
        group[gl] = '\0';
        int g = b ? kw_block_group(b, group) : -1;
        if (g < 0)
            return 1;
        kw_tiling *t = &m->tiling[g];
        const char *f = dot + 1;
        if (strcmp(f, "tile_m") == 0 || strcmp(f, "tile_n") == 0 || strcmp(f, "tile_k") == 0) {
            if (kw_parse_int(&iv, val, 1, 1 << 16) != 0)
                return -1;
            if (f[5] == 'm')
                t->tile_m = (int)iv;
            else if (f[5] == 'n')
                t->tile_n = (int)iv;
            else
                t->tile_k = (int)iv;
            return 0;
        }
        if (strcmp(f, "split_k") == 0) {
            if (kw_parse_int(&iv, val, 1, 256) != 0)
                return -1;
            t->split_k = (int)iv;
            return 0;
        }
        if (strcmp(f, "loop_order") == 0) {
            if ((e = kw_pick(kw_loop_names, 3, val)) < 0)
                return -1;
            t->loop = (kw_loop)e;
            return 0;
        }
        /* Issue 15: pipeline stages, launch-order swizzle, multicast cluster. */
        int *ival = strcmp(f, "stages") == 0    ? &t->stages
                    : strcmp(f, "swizzle") == 0 ? &t->swizzle
                    : strcmp(f, "cluster") == 0 ? &t->cluster
                                                : NULL;
        if (ival) {
            if (kw_parse_int(&iv, val, 1, KW_TILING_ORDINAL_MAX) != 0)
                return -1;
            *ival = (int)iv;
            return 0;
        }
        if (strcmp(f, "double_buffer") == 0) {
            if ((e = kw_onoff(val)) < 0)
                return -1;
            t->double_buffer = e;
            return 0;
        }
        return 1;
    }
    int *flag = NULL;
    if (strcmp(knob, "fuse_qkv") == 0)
        flag = &m->fuse_qkv;
    else if (strcmp(knob, "fuse_epilogue") == 0)
        flag = &m->fuse_epilogue;
    else if (strcmp(knob, "fuse_gate_up") == 0)
        flag = &m->fuse_gate_up;
    else if (strcmp(knob, "fuse_residual_norm") == 0)
        flag = &m->fuse_residual_norm;
    if (flag) {
        if ((e = kw_onoff(val)) < 0)
            return -1;
        *flag = e;
        return 0;
    }
    if (strcmp(knob, "fuse_attention") == 0) {
        if ((e = kw_pick(kw_attn_names, 3, val)) < 0)
            return -1;
        m->fuse_attention = (kw_attn_fusion)e;
        return 0;
    }
    kw_prec *prec = NULL;
    if (strcmp(knob, "precision") == 0)
        prec = &m->precision;
    else if (strcmp(knob, "accum_precision") == 0)
        prec = &m->accum_precision;
    else if (strcmp(knob, "softmax_precision") == 0)
        prec = &m->softmax_precision;
    if (prec) {
        if ((e = kw_prec_parse(val)) < 0)
            return -1;
        *prec = (kw_prec)e;
        return 0;
    }
    if (strcmp(knob, "sparsity") == 0) {
        if (strcmp(val, "dense") == 0)
            m->sparsity_2_4 = 0;
        else if (strcmp(val, "2_4") == 0)
            m->sparsity_2_4 = 1;
        else
            return -1;
        return 0;
    }
    if (strcmp(knob, "attention_schedule") == 0) {
        if ((e = kw_pick(kw_sched_names, 2, val)) < 0)
            return -1;
        m->attn_overlap = e;
        return 0;
    }
    if (strcmp(knob, "launch_mode") == 0) {
        if (strcmp(val, "eager") == 0)
            m->graph_mode = 0;
        else if (strcmp(val, "graph") == 0)
            m->graph_mode = 1;
        else
            return -1;
        return 0;
    }
    if (strcmp(knob, "max_batch") == 0) {
        if (kw_parse_int(&iv, val, 1, 1024) != 0)
            return -1;
        m->max_batch = (int)iv;
        return 0;
    }
    if (strcmp(knob, "batch_timeout_us") == 0) {
        char *end;
        errno = 0;
        double d = strtod(val, &end);
        if (errno != 0 || end == val || *end != '\0' || !(d >= 0.0 && d <= 1e9))
            return -1;
        m->batch_timeout_us = d;
        return 0;
    }
    if (strcmp(knob, "placement") == 0) {
        if ((e = kw_pick(kw_place_names, 3, val)) < 0)
            return -1;
        m->placement = (kw_placement)e;
        return 0;
    }
    if (strcmp(knob, "cores_per_request") == 0) {
        if (kw_parse_int(&iv, val, 1, 4096) != 0)
            return -1;
        m->cores_per_request = (int)iv;
        return 0;
    }
    return 1;
}

int kw_mapping_knob_known(const kw_block *b, const char *knob)
{
    kw_mapping m;
    kw_mapping_defaults(&m, b);
    /* A name is known when some value could be applied to it: probe with a
     * value that parses for every kind of knob family in turn. */
    static const char *const probes[] = {"1", "on", "none", "fp32", "dense", "eager", "mnk",
                                         "round_robin", "serial"};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        if (kw_mapping_apply(&m, b, knob, probes[i]) == 0)
            return 1;
    return 0;
}

int kw_mapping_knob_check(const kw_block *b, const kw_knob *k, const kw_accel *a)
{
    kw_mapping m;
    kw_mapping_defaults(&m, b);
    if (!kw_mapping_knob_known(b, k->name))
        return kw_error_set(KW_EINPUT, "unknown knob '%s' for block '%s'", k->name,
                            b ? b->name : "?");
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
