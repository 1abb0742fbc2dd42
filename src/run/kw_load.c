/* kw_load.c - the three knobwise inputs (space, accelerator, workload) from
 * XML into the plain structs of kw_model.h, with every check that a schema
 * cannot express (see kw_load.h).
 *
 * Design choice: report everything, stop nothing early. One collection of
 * problems (kw_xml_problems) runs through a whole configuration load: the
 * accelerator and workload are checked even when the other is broken, the
 * space's own problems are reported alongside, and checks that need a valid
 * accelerator or workload are skipped rather than guessed. Each problem is
 * "FILE:LINE: message"; the caller gets one KW_EINPUT with all of them.
 * Nothing here trusts the schema for memory safety: every count is bounded
 * against the struct capacities again, and every number checked finite.
 *
 * Files come from disk or from the table compiled into the binary (the
 * embedded default: "spaces/default.xml" and the files it names, resolved
 * relative to "spaces/"). Each input's bytes are hashed (kw_hash.h, the one
 * hash helper) so a run records exactly which inputs it read.
 */
#include "kw_load.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kw_drift.h"
#include "kw_embed.h"
#include "kw_hash.h"
#include "kw_exec.h"
#include "kw_input.h"
#include "kw_limits.h"
#include "kw_load_cpu.h"
#include "kw_load_hier.h"
#include "kw_load_llm.h"
#include "kw_mapping.h"
#include "kw_physical.h"
#include "kw_xml.h"

#define KW_SCHEMA_SPACE "spaces/space.xsd"
#define KW_SCHEMA_ACCEL "spaces/accelerator.xsd"
#define KW_SCHEMA_WORKLOAD "spaces/workload.xsd"
#define KW_SCHEMA_RESULTS "results/results.xsd"

/* Space defaults (the guards element of spaces/space.xsd; kw_model.h comments). */
#define KW_DEF_DRIFT_MIN_COS 0.999
#define KW_DEF_DRIFT_MAX_REL_RMS 0.02
#define KW_DEF_MAX_THROTTLE_PCT 5.0
#define KW_DEF_MAX_FALLBACK_PCT 0.0
#define KW_DEF_SLA_P99_US 0.0
#define KW_DEF_MAX_LONG_WINDOW_DRIFT_PCT 10.0
#define KW_DEF_MIN_EFFECT_PCT 1.0
#define KW_DEF_ALPHA 0.05
#define KW_DEF_NOISE_PCT 0.0
#define KW_DEF_SIM_REQUESTS 2000
#define KW_DEF_FINAL_REQUESTS 20000

/* Unit conversions of the accelerator file's attributes. */
#define KW_TERA 1e12
#define KW_GIGA 1e9
#define KW_KIB 1024u

/* ---------------- sources: disk or embedded ---------------- */

typedef struct kw_src {
    char label[KW_PATH_MAX];  /* the name in messages: the path, or the embedded name */
    char *owned;              /* bytes read from disk (free), or NULL */
    const char *buf;
    size_t len;
    int embedded;
    char hash[KW_HASH_HEX_LEN];
} kw_src;

/* output 1: a file that may be one knobwise wrote (validate's file): read as
 * an input, or, when it is over the input limit and its root is <results> (a
 * run's results.xml, which a run of many shapes writes over 4 MiB: 49 shapes
 * of spaces/validate_small.xml, 4.4 MB), up to KW_XML_MAX_OUTPUT_BYTES as
 * verify and export read it; *big says which (kw_xml_read_input_or: one open,
 * the root found by libxml2). */
static int kw_src_open_ex(kw_src *s, const char *name, int embedded, int output, int *big,
                          kw_xml_problems *p)
{
    memset(s, 0, sizeof *s);
    snprintf(s->label, sizeof s->label, "%s", name);
    s->embedded = embedded;
    if (embedded) {
        const kw_embedded_file *f = kw_embedded_find(name);
        if (!f) {
            kw_xml_problem(p, name, 0, "not among the files built into this knobwise");
            return KW_EINPUT;
        }
        s->buf = (const char *)f->data;
        s->len = f->len;
    } else {
        int rc = output ? kw_xml_read_input_or(&s->owned, &s->len, name, "results", big, p)
                        : kw_xml_read_file(&s->owned, &s->len, name, p);
        if (rc != 0)
            return rc;
        s->buf = s->owned;
    }
    kw_hash_hex_of(s->hash, s->buf, s->len);
    return 0;
}

static int kw_src_open(kw_src *s, const char *name, int embedded, kw_xml_problems *p)
{
    return kw_src_open_ex(s, name, embedded, 0, NULL, p);
}

static void kw_src_close(kw_src *s)
{
    free(s->owned);
    s->owned = NULL;
}

/* Collapse "." and "dir/.." segments lexically (embedded names only: they
 * are table keys, not file system paths, so symlinks do not matter). */
static void kw_path_normalize(char *path)
{
    char *seg[KW_PATH_MAX / 2];
    int n = 0;
    char tmp[KW_PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *save = NULL, *t = strtok_r(tmp, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (strcmp(t, ".") == 0)
            continue;
        if (strcmp(t, "..") == 0 && n > 0 && strcmp(seg[n - 1], "..") != 0) {
            n--;
            continue;
        }
        seg[n++] = t;
    }
    char out[KW_PATH_MAX] = "";
    size_t used = 0;
    for (int i = 0; i < n; i++)
        used += (size_t)snprintf(out + used, sizeof out - used, "%s%s", i ? "/" : "", seg[i]);
    snprintf(path, KW_PATH_MAX, "%s", out);
}

/* rel resolved against the folder of `base` (a file path or embedded name). */
static int kw_path_resolve(char *out, const char *base, const char *rel, int embedded)
{
    if (rel[0] == '/' && !embedded)
        return snprintf(out, KW_PATH_MAX, "%s", rel) < KW_PATH_MAX ? 0 : -1;
    const char *slash = strrchr(base, '/');
    int k = slash ? snprintf(out, KW_PATH_MAX, "%.*s/%s", (int)(slash - base), base, rel)
                  : snprintf(out, KW_PATH_MAX, "%s", rel);
    if (k < 0 || k >= KW_PATH_MAX)
        return -1;
    if (embedded)
        kw_path_normalize(out);
    return 0;
}

/* ---------------- small checks ---------------- */

/* Attribute getters that also check a range; the schema normally catches
 * these first, so the messages name the rule plainly. */
static void kw_get_pos(double *out, const xmlNode *n, const char *attr, const char *file,
                       kw_xml_problems *p)
{
    if (kw_xml_attr_double(out, n, attr, file, p) == 1 && !(*out > 0.0))
        kw_xml_problem(p, file, kw_xml_line(n), "attribute '%s' must be positive, not %g", attr,
                       *out);
}

static void kw_get_nonneg(double *out, const xmlNode *n, const char *attr, const char *file,
                          kw_xml_problems *p)
{
    if (kw_xml_attr_double(out, n, attr, file, p) == 1 && !(*out >= 0.0))
        kw_xml_problem(p, file, kw_xml_line(n), "attribute '%s' must not be negative, not %g",
                       attr, *out);
}

static void kw_get_range(double *out, const xmlNode *n, const char *attr, double lo, double hi,
                         int lo_open, const char *file, kw_xml_problems *p)
{
    if (kw_xml_attr_double(out, n, attr, file, p) == 1 &&
        !((lo_open ? *out > lo : *out >= lo) && *out <= hi))
        kw_xml_problem(p, file, kw_xml_line(n), "attribute '%s' must be in %s%g, %g], not %g",
                       attr, lo_open ? "(" : "[", lo, hi, *out);
}

static void kw_get_int(int *out, const xmlNode *n, const char *attr, long min, long max,
                       const char *file, kw_xml_problems *p)
{
    long v;
    if (kw_xml_attr_long(&v, n, attr, min, max, file, p) == 1)
        *out = (int)v;
}

static void kw_need(const xmlNode *n, const char *attr, const char *file, kw_xml_problems *p)
{
    if (!xmlHasProp((xmlNodePtr)n, BAD_CAST attr))
        kw_xml_problem(p, file, kw_xml_line(n), "<%s> needs the attribute '%s'",
                       (const char *)n->name, attr);
}

/* ---------------- accelerator ---------------- */

static void kw_accel_from_doc(kw_accel *a, xmlNode *root, const char *file, kw_xml_problems *p)
{
    memset(a, 0, sizeof *a);
    a->line = (int)kw_xml_line(root);
    kw_xml_attr_str(a->name, sizeof a->name, root, "name", file, p);
    int seen_peak[KW_PREC_COUNT] = {0};
    int seen_compute = 0, seen_memory = 0, seen_array = 0, seen_launch = 0, seen_eff = 0,
        seen_power = 0, seen_thermal = 0;
    for (xmlNode *n = kw_xml_elem(root->children); n; n = kw_xml_elem(n->next)) {
        long line = kw_xml_line(n);
        if (kw_xml_is(n, "source")) {
            xmlChar *t = xmlNodeGetContent(n);
            snprintf(a->source, sizeof a->source, "%s", t ? (const char *)t : "");
            xmlFree(t);
        } else if (kw_xml_is(n, "compute")) {
            seen_compute = 1;
            kw_need(n, "cores", file, p);
            kw_need(n, "units_per_core", file, p);
            kw_need(n, "clock_ghz", file, p);
            kw_get_int(&a->cores, n, "cores", 1, 65536, file, p);
            kw_get_int(&a->units_per_core, n, "units_per_core", 1, 65536, file, p);
            kw_get_pos(&a->clock_ghz, n, "clock_ghz", file, p);
            kw_xml_attr_bool(&a->sparsity_2_4, n, "sparsity_2_4", file, p);
        } else if (kw_xml_is(n, "peak")) {
            char prec[KW_NAME_MAX] = "";
            double tf = 0.0;
            kw_xml_attr_str(prec, sizeof prec, n, "precision", file, p);
            int pi = kw_prec_parse(prec);
            if (pi < 0) {
                kw_xml_problem(p, file, line, "unknown precision '%s'", prec);
                continue;
            }
            if (seen_peak[pi]++)
                kw_xml_problem(p, file, line, "precision '%s' has more than one peak", prec);
            kw_need(n, "tflops", file, p);
            kw_get_nonneg(&tf, n, "tflops", file, p);
            a->peak_flops[pi] = tf * KW_TERA;
        } else if (kw_xml_is(n, "memory")) {
            seen_memory = 1;
            long kib = 0;
            double bw = 0.0, dbw = 0.0;
            kw_need(n, "sram_kib_per_unit", file, p);
            kw_need(n, "dram_bw_gb_s", file, p);
            kw_need(n, "dram_burst_bytes", file, p);
            kw_need(n, "dram_latency_us", file, p);
            if (kw_xml_attr_long(&kib, n, "sram_kib_per_unit", 1, 1L << 30, file, p) == 1)
                a->sram_bytes_per_unit = (uint64_t)kib * KW_KIB;
            kw_get_nonneg(&bw, n, "sram_bw_gb_s", file, p);
            a->sram_bw_bytes_per_s = bw * KW_GIGA;
            kw_get_pos(&dbw, n, "dram_bw_gb_s", file, p);
            a->dram_bw_bytes_per_s = dbw * KW_GIGA;
            long burst = 0;
            if (kw_xml_attr_long(&burst, n, "dram_burst_bytes", 1, 65536, file, p) == 1)
                a->dram_burst_bytes = (uint64_t)burst;
            kw_get_nonneg(&a->dram_latency_us, n, "dram_latency_us", file, p);
            kw_load_llm_memory(a, n, file, p);
        } else if (kw_xml_is(n, "array")) {
            seen_array = 1;
            kw_get_int(&a->array_m, n, "m", 1, 65536, file, p);
            kw_get_int(&a->array_n, n, "n", 1, 65536, file, p);
            kw_get_int(&a->array_k, n, "k", 1, 65536, file, p);
        } else if (kw_xml_is(n, "launch")) {
            seen_launch = 1;
            kw_get_nonneg(&a->launch_eager_us, n, "eager_us", file, p);
            kw_get_nonneg(&a->graph_fixed_us, n, "graph_fixed_us", file, p);
            kw_get_nonneg(&a->graph_node_us, n, "graph_node_us", file, p);
        } else if (kw_xml_is(n, "efficiency")) {
            seen_eff = 1;
            kw_get_range(&a->fallback_efficiency, n, "fallback", 0.0, 1.0, 1, file, p);
            kw_get_range(&a->elementwise_efficiency, n, "elementwise", 0.0, 1.0, 1, file, p);
        } else if (kw_xml_is(n, "power")) {
            seen_power = 1;
            kw_get_nonneg(&a->idle_w, n, "idle_w", file, p);
            kw_get_pos(&a->tdp_w, n, "tdp_w", file, p);
            kw_get_pos(&a->pj_per_flop, n, "pj_per_flop", file, p);
            kw_get_pos(&a->pj_per_dram_byte, n, "pj_per_dram_byte", file, p);
            if (a->idle_w >= a->tdp_w && a->tdp_w > 0.0)
                kw_xml_problem(p, file, line, "idle power %g W must be below the TDP %g W",
                               a->idle_w, a->tdp_w);
        } else if (kw_load_hier_elem(a, n, file, p)) {
            /* <storage>, <rates>, <accumulate> (kw_load_hier.c) */
        } else if (kw_load_llm_accel_elem(a, n, file, p)) {
            /* <interconnect> (kw_load_llm.c) */
        } else if (kw_load_cpu_elem(a, n, file, p)) {
            /* <cpu> (kw_load_cpu.c) */
        } else if (kw_xml_is(n, "thermal")) {
            seen_thermal = 1;
            kw_get_range(&a->t_ambient_c, n, "ambient_c", -50.0, 200.0, 0, file, p);
            kw_get_pos(&a->r_th_c_per_w, n, "r_c_per_w", file, p);
            kw_get_pos(&a->tau_s, n, "tau_s", file, p);
            kw_get_range(&a->t_shutdown_c, n, "shutdown_c", -50.0, 200.0, 0, file, p);
            for (xmlNode *t = kw_xml_elem(n->children); t; t = kw_xml_elem(t->next)) {
                if (!kw_xml_is(t, "throttle"))
                    continue;
                long tl = kw_xml_line(t);
                if (a->n_throttle == KW_THROTTLE_MAX) {
                    kw_xml_problem(p, file, tl, "more than %d throttle steps", KW_THROTTLE_MAX);
                    break;
                }
                kw_throttle_step *s = &a->throttle[a->n_throttle];
                kw_get_range(&s->temp_c, t, "temp_c", -50.0, 200.0, 0, file, p);
                kw_get_range(&s->clock_factor, t, "clock_factor", 0.0, 1.0, 1, file, p);
                if (a->n_throttle > 0) {
                    const kw_throttle_step *prev = &a->throttle[a->n_throttle - 1];
                    if (!(s->temp_c > prev->temp_c))
                        kw_xml_problem(p, file, tl,
                                       "throttle steps must be in ascending temperature: %g C "
                                       "follows %g C",
                                       s->temp_c, prev->temp_c);
                    else if (s->clock_factor > prev->clock_factor)
                        kw_xml_problem(p, file, tl,
                                       "a hotter throttle step must not run faster: %g after %g",
                                       s->clock_factor, prev->clock_factor);
                }
                if (s->temp_c <= a->t_ambient_c)
                    kw_xml_problem(p, file, tl, "throttle temperature %g C is not above ambient %g C",
                                   s->temp_c, a->t_ambient_c);
                a->n_throttle++;
            }
            double top = a->n_throttle ? a->throttle[a->n_throttle - 1].temp_c : a->t_ambient_c;
            if (!(a->t_shutdown_c > top))
                kw_xml_problem(p, file, line,
                               "shutdown temperature %g C must be above %g C (ambient and every "
                               "throttle step)",
                               a->t_shutdown_c, top);
        }
    }
    long rl = kw_xml_line(root);
    static const char *const parts[] = {"compute", "memory", "array", "launch",
                                        "efficiency", "power", "thermal"};
    int seen[] = {seen_compute, seen_memory, seen_array, seen_launch, seen_eff, seen_power,
                  seen_thermal};
    for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++)
        if (!seen[i])
            kw_xml_problem(p, file, rl, "accelerator has no <%s>", parts[i]);
    int any = 0;
    for (int i = 0; i < KW_PREC_COUNT; i++)
        any |= a->peak_flops[i] > 0.0;
    if (!any)
        kw_xml_problem(p, file, rl, "accelerator supports no precision: every peak is 0");
    kw_load_hier_check(a, file, rl, p);
    kw_physical_check_accel(root, file, p);
}

/* ---------------- workload ---------------- */

static const struct {
    const char *tag;
    kw_op_kind kind;
} kw_op_tags[] = {
    {"gemm", KW_OP_GEMM},   {"attention", KW_OP_ATTENTION}, {"conv", KW_OP_CONV},
    {"norm", KW_OP_NORM},   {"residual", KW_OP_RESIDUAL},   {"act", KW_OP_ACT},
    {"moe", KW_OP_MOE},
};

static int kw_op_has_group(kw_op_kind k)
{
    return k == KW_OP_GEMM || k == KW_OP_ATTENTION || k == KW_OP_CONV || k == KW_OP_MOE;
}

static const char *kw_op_kind_name(kw_op_kind k);

static void kw_op_from_node(kw_op *op, kw_block *b, xmlNode *n, kw_op_kind kind,
                            const char *file, kw_xml_problems *p)
{
    long line = kw_xml_line(n);
    int problems = p->n;
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->line = (int)line;
    kw_need(n, "name", file, p);
    kw_xml_attr_str(op->name, sizeof op->name, n, "name", file, p);
    long v;
    switch (kind) {
    case KW_OP_GEMM:
        kw_xml_attr_str(op->merge, sizeof op->merge, n, "merge", file, p);
        if (op->merge[0] && strcmp(op->merge, "qkv") != 0 && strcmp(op->merge, "gate_up") != 0)
            kw_xml_problem(p, file, line, "merge must be 'qkv' or 'gate_up', not '%s'", op->merge);
        kw_need(n, "n", file, p);
        kw_need(n, "k", file, p);
        if (kw_xml_attr_long(&v, n, "n", 1, 1L << 20, file, p) == 1)
            op->n = (uint64_t)v;
        if (kw_xml_attr_long(&v, n, "k", 1, 1L << 20, file, p) == 1)
            op->k = (uint64_t)v;
        op->weights = 1;
        kw_xml_attr_bool(&op->weights, n, "weights", file, p);
        kw_xml_attr_bool(&op->epilogue, n, "epilogue", file, p);
        break;
    case KW_OP_ATTENTION:
        kw_need(n, "heads", file, p);
        kw_need(n, "kv_heads", file, p);
        kw_need(n, "head_dim", file, p);
        kw_get_int(&op->heads, n, "heads", 1, 4096, file, p);
        kw_get_int(&op->kv_heads, n, "kv_heads", 1, 4096, file, p);
        kw_get_int(&op->head_dim, n, "head_dim", 1, 4096, file, p);
        kw_xml_attr_bool(&op->causal, n, "causal", file, p);
        if (op->heads > 0 && op->kv_heads > 0 && op->heads % op->kv_heads != 0)
            kw_xml_problem(p, file, line,
                           "heads (%d) must be a multiple of kv_heads (%d): each KV head serves "
                           "a whole group of query heads",
                           op->heads, op->kv_heads);
        break;
    case KW_OP_CONV:
        op->stride = 1;
        static const char *const need[] = {"in_h", "in_w", "in_c", "out_c", "kh", "kw"};
        for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
            kw_need(n, need[i], file, p);
        kw_get_int(&op->in_h, n, "in_h", 1, 4096, file, p);
        kw_get_int(&op->in_w, n, "in_w", 1, 4096, file, p);
        kw_get_int(&op->in_c, n, "in_c", 1, 1L << 20, file, p);
        kw_get_int(&op->out_c, n, "out_c", 1, 1L << 20, file, p);
        kw_get_int(&op->kh, n, "kh", 1, 4096, file, p);
        kw_get_int(&op->kw, n, "kw", 1, 4096, file, p);
        kw_get_int(&op->stride, n, "stride", 1, 4096, file, p);
        kw_get_int(&op->pad, n, "pad", 0, 4096, file, p);
        op->weights = 1;
        kw_xml_attr_bool(&op->weights, n, "weights", file, p);
        kw_xml_attr_bool(&op->epilogue, n, "epilogue", file, p);
        if (op->in_h + 2 * op->pad < op->kh || op->in_w + 2 * op->pad < op->kw)
            kw_xml_problem(p, file, line,
                           "the %dx%d kernel does not fit the %dx%d input with padding %d",
                           op->kh, op->kw, op->in_h, op->in_w, op->pad);
        break;
    case KW_OP_MOE:
        kw_load_llm_moe(op, b, n, file, p);
        break;
    default:
        kw_need(n, "width", file, p);
        if (kw_xml_attr_long(&v, n, "width", 1, 1L << 30, file, p) == 1)
            op->width = (uint64_t)v;
        break;
    }
    char why[160];
    if (p->n == problems && kw_drift_op_check(op, why, sizeof why) != 0)
        kw_xml_problem(p, file, line, "%s '%s': %s", kw_op_kind_name(kind), op->name, why);
    if (kw_op_has_group(kind)) {
        kw_need(n, "group", file, p);
        kw_xml_attr_str(op->group, sizeof op->group, n, "group", file, p);
        if (op->group[0] && strchr(op->group, '.'))
            kw_xml_problem(p, file, line, "group '%s' must not contain '.'", op->group);
        if (op->group[0] && kw_mapping_block_group(b, op->group) < 0) {
            if (b->n_groups == KW_GROUP_MAX)
                kw_xml_problem(p, file, line, "block '%s' has more than %d tiling groups",
                               b->name, KW_GROUP_MAX);
            else
                memcpy(b->groups[b->n_groups++], op->group, sizeof op->group);
        }
    }
}

static const char *kw_op_kind_name(kw_op_kind k)
{
    for (size_t i = 0; i < sizeof kw_op_tags / sizeof kw_op_tags[0]; i++)
        if (kw_op_tags[i].kind == k)
            return kw_op_tags[i].tag;
    return "?";
}

static void kw_block_check(const kw_block *b, const char *file, kw_xml_problems *p)
{
    int moes = 0;
    for (int i = 0; i < b->n_ops; i++)
        moes += b->ops[i].kind == KW_OP_MOE;
    if (moes > 0 && b->n_ops + 3 * moes > KW_OP_MAX) /* the drift stage's view (kw_moe.c) */
        kw_xml_problem(p, file, b->line, "block '%s': %d operators and %d moe need %d slots of "
                       "the %d a block has (each moe is emulated as four)",
                       b->name, b->n_ops, moes, b->n_ops + 3 * moes, KW_OP_MAX);
    for (int i = 0; i < b->n_ops; i++) {
        const kw_op *o = &b->ops[i];
        for (int j = 0; j < i; j++) {
            const kw_op *q = &b->ops[j];
            if (strcmp(o->name, q->name) == 0)
                kw_xml_problem(p, file, o->line, "operator '%s' is already defined in block '%s' (line %d)",
                               o->name, b->name, q->line);
            if (o->group[0] && strcmp(o->group, q->group) == 0 && o->kind != q->kind)
                kw_xml_problem(p, file, o->line,
                               "group '%s' mixes a %s with a %s: one group is tiled one way",
                               o->group, kw_op_kind_name(o->kind), kw_op_kind_name(q->kind));
            if (o->merge[0] && strcmp(o->merge, q->merge) == 0 &&
                (strcmp(o->group, q->group) != 0 || o->k != q->k))
                kw_xml_problem(p, file, o->line,
                               "GEMMs merged as '%s' must share their group and k (see '%s')",
                               o->merge, q->name);
        }
    }
}

static int kw_block_has_attention(const kw_block *b)
{
    for (int i = 0; i < b->n_ops; i++)
        if (b->ops[i].kind == KW_OP_ATTENTION)
            return 1;
    return 0;
}

static void kw_shape_from_node(kw_shape *s, xmlNode *n, const kw_workload *w, const char *file,
                               kw_xml_problems *p)
{
    long line = kw_xml_line(n);
    memset(s, 0, sizeof *s);
    s->line = (int)line;
    s->block = -1;
    s->streams = 1;
    kw_need(n, "name", file, p);
    kw_xml_attr_str(s->name, sizeof s->name, n, "name", file, p);
    char buf[KW_NAME_MAX] = "";
    kw_need(n, "block", file, p);
    if (kw_xml_attr_str(buf, sizeof buf, n, "block", file, p) == 1) {
        for (int i = 0; i < w->n_blocks; i++)
            if (strcmp(w->blocks[i].name, buf) == 0)
                s->block = i;
        if (s->block < 0)
            kw_xml_problem(p, file, line, "shape '%s' names an unknown block '%s'", s->name, buf);
    }
    buf[0] = '\0';
    kw_need(n, "phase", file, p);
    kw_xml_attr_str(buf, sizeof buf, n, "phase", file, p);
    if (strcmp(buf, "prefill") == 0)
        s->phase = KW_PHASE_PREFILL;
    else if (strcmp(buf, "decode") == 0)
        s->phase = KW_PHASE_DECODE;
    else if (buf[0])
        kw_xml_problem(p, file, line, "phase must be prefill or decode, not '%s'", buf);
    kw_need(n, "batch", file, p);
    kw_get_int(&s->batch, n, "batch", 1, 4096, file, p);
    int has_seq = xmlHasProp(n, BAD_CAST "seq") != NULL;
    int has_kv = xmlHasProp(n, BAD_CAST "kv_len") != NULL;
    kw_get_int(&s->seq, n, "seq", 1, 1L << 20, file, p);
    kw_get_int(&s->kv_len, n, "kv_len", 1, 1L << 20, file, p);
    if (s->phase == KW_PHASE_PREFILL && !has_seq)
        kw_xml_problem(p, file, line, "prefill shape '%s' needs seq (tokens per sequence)",
                       s->name);
    if (s->phase == KW_PHASE_PREFILL && has_kv)
        kw_xml_problem(p, file, line, "prefill shape '%s' gives kv_len, which only a decode shape "
                       "uses (a prefill attends to its own seq tokens): remove it", s->name);
    if (s->phase == KW_PHASE_DECODE) {
        /* kv_len is the attention's: a block without one (an MLP, an MoE) does
         * not see the KV length, so its decode shapes need not give it. */
        if (!has_kv && (s->block < 0 || kw_block_has_attention(&w->blocks[s->block])))
            kw_xml_problem(p, file, line, "decode shape '%s' needs kv_len (KV-cache length): "
                           "its block has an attention",
                           s->name);
        if (has_seq)
            kw_xml_problem(p, file, line, "decode shape '%s' gives seq, which only a prefill shape "
                           "uses (a decode step is one new token per sequence): remove it",
                           s->name);
        s->seq = 1; /* one new token per sequence and step */
    }
    kw_get_int(&s->streams, n, "streams", 1, 4096, file, p);
    kw_load_llm_shape(s, n, file, p); /* batching="continuous" (kw_load_llm.c) */
    if (s->streams > KW_SIM_STREAM_MAX)
        kw_xml_problem(p, file, line, "shape '%s': streams %d is more than the %d request streams "
                       "the serving simulation runs (kw_limits.h)", s->name, s->streams,
                       KW_SIM_STREAM_MAX);

    buf[0] = '\0';
    s->arrival = KW_ARRIVAL_POISSON;
    if (kw_xml_attr_str(buf, sizeof buf, n, "arrival", file, p) == 1) {
        if (strcmp(buf, "poisson") == 0)
            s->arrival = KW_ARRIVAL_POISSON;
        else if (strcmp(buf, "bursty") == 0)
            s->arrival = KW_ARRIVAL_BURSTY;
        else if (strcmp(buf, "trace") == 0)
            s->arrival = KW_ARRIVAL_TRACE;
        else
            kw_xml_problem(p, file, line, "arrival must be poisson, bursty or trace, not '%s'",
                           buf);
    }
    int has_load = xmlHasProp(n, BAD_CAST "load") != NULL;
    int has_rate = xmlHasProp(n, BAD_CAST "rate_per_s") != NULL;
    if (kw_xml_attr_double(&s->load, n, "load", file, p) == 1 && !(s->load > 0.0 && s->load < 1.0))
        kw_xml_problem(p, file, line, "load must be between 0 and 1 (exclusive), not %g", s->load);
    kw_get_pos(&s->rate_per_s, n, "rate_per_s", file, p);
    if (has_load && has_rate)
        kw_xml_problem(p, file, line, "shape '%s' gives both load and rate_per_s: give one",
                       s->name);
    if (s->arrival != KW_ARRIVAL_TRACE && !has_load && !has_rate)
        kw_xml_problem(p, file, line,
                       "shape '%s' needs load (utilisation of the baseline, 0..1) or rate_per_s "
                       "(per stream)",
                       s->name);
    int has_burst = 0;
    static const char *const burst[] = {"burst_on_ms", "burst_off_ms", "burst_factor"};
    double *bv[] = {&s->burst_on_ms, &s->burst_off_ms, &s->burst_factor};
    for (int i = 0; i < 3; i++) {
        has_burst |= xmlHasProp(n, BAD_CAST burst[i]) != NULL;
        kw_get_pos(bv[i], n, burst[i], file, p);
    }
    if (s->arrival == KW_ARRIVAL_BURSTY) {
        for (int i = 0; i < 3; i++)
            if (!xmlHasProp(n, BAD_CAST burst[i]))
                kw_xml_problem(p, file, line, "bursty shape '%s' needs %s", s->name, burst[i]);
    } else if (has_burst) {
        kw_xml_problem(p, file, line, "burst_* attributes apply to arrival=\"bursty\" only");
    }
    char trace[KW_PATH_MAX] = "";
    int has_trace = kw_xml_attr_str(trace, sizeof trace, n, "trace", file, p) == 1;
    if (s->arrival == KW_ARRIVAL_TRACE && !has_trace)
        kw_xml_problem(p, file, line, "shape '%s' with arrival=\"trace\" needs trace=\"FILE\"",
                       s->name);
    if (s->arrival != KW_ARRIVAL_TRACE && has_trace)
        kw_xml_problem(p, file, line, "trace=\"%s\" needs arrival=\"trace\"", trace);
    /* Resolved relative to the workload file; existence is the simulator's check. */
    if (has_trace && trace[0] && kw_path_resolve(s->trace, file, trace, 0) != 0)
        kw_xml_problem(p, file, line, "trace path is too long");
    if (s->block >= 0 && s->phase == KW_PHASE_DECODE) {
        const kw_block *b = &w->blocks[s->block];
        for (int i = 0; i < b->n_ops; i++)
            if (b->ops[i].kind == KW_OP_CONV) {
                kw_xml_problem(p, file, line,
                               "shape '%s': block '%s' is a convolution block and has no decode "
                               "phase",
                               s->name, b->name);
                break;
            }
    }
}

static void kw_workload_from_doc(kw_workload *w, xmlNode *root, const char *file,
                                 kw_xml_problems *p)
{
    memset(w, 0, sizeof *w);
    kw_xml_attr_str(w->name, sizeof w->name, root, "name", file, p);
    for (xmlNode *n = kw_xml_elem(root->children); n; n = kw_xml_elem(n->next)) {
        long line = kw_xml_line(n);
        if (kw_xml_is(n, "source")) {
            xmlChar *t = xmlNodeGetContent(n);
            snprintf(w->source, sizeof w->source, "%s", t ? (const char *)t : "");
            xmlFree(t);
        } else if (kw_xml_is(n, "block")) {
            if (w->n_blocks == KW_BLOCK_MAX) {
                kw_xml_problem(p, file, line, "more than %d blocks", KW_BLOCK_MAX);
                continue;
            }
            kw_block *b = &w->blocks[w->n_blocks];
            memset(b, 0, sizeof *b);
            b->line = (int)line;
            kw_need(n, "name", file, p);
            kw_xml_attr_str(b->name, sizeof b->name, n, "name", file, p);
            for (int i = 0; i < w->n_blocks; i++)
                if (strcmp(w->blocks[i].name, b->name) == 0)
                    kw_xml_problem(p, file, line, "block '%s' is already defined (line %d)",
                                   b->name, w->blocks[i].line);
            for (xmlNode *o = kw_xml_elem(n->children); o; o = kw_xml_elem(o->next)) {
                if (kw_xml_is(o, "source")) {
                    xmlChar *t = xmlNodeGetContent(o);
                    snprintf(b->source, sizeof b->source, "%s", t ? (const char *)t : "");
                    xmlFree(t);
                    continue;
                }
                int kind = -1;
                for (size_t k = 0; k < sizeof kw_op_tags / sizeof kw_op_tags[0]; k++)
                    if (kw_xml_is(o, kw_op_tags[k].tag))
                        kind = (int)kw_op_tags[k].kind;
                if (kind < 0) {
                    kw_xml_problem(p, file, kw_xml_line(o), "unknown operator <%s>",
                                   (const char *)o->name);
                    continue;
                }
                if (b->n_ops == KW_OP_MAX) {
                    kw_xml_problem(p, file, kw_xml_line(o), "block '%s' has more than %d operators",
                                   b->name, KW_OP_MAX);
                    break;
                }
                kw_op_from_node(&b->ops[b->n_ops++], b, o, (kw_op_kind)kind, file, p);
            }
            if (b->n_ops == 0)
                kw_xml_problem(p, file, line, "block '%s' has no operators", b->name);
            kw_block_check(b, file, p);
            w->n_blocks++;
        } else if (kw_xml_is(n, "layer")) {
            int before = w->n_blocks;
            kw_load_llm_layer(w, n, file, p); /* blocks chained into a layer (kw_load_llm.c) */
            if (w->n_blocks > before)
                kw_block_check(&w->blocks[w->n_blocks - 1], file, p);
        } else if (kw_xml_is(n, "shape")) {
            if (w->n_shapes == KW_SHAPE_MAX) {
                kw_xml_problem(p, file, line, "more than %d shapes", KW_SHAPE_MAX);
                continue;
            }
            kw_shape *s = &w->shapes[w->n_shapes];
            kw_shape_from_node(s, n, w, file, p);
            for (int i = 0; i < w->n_shapes; i++)
                if (strcmp(w->shapes[i].name, s->name) == 0)
                    kw_xml_problem(p, file, line, "shape '%s' is already defined (line %d)",
                                   s->name, w->shapes[i].line);
            w->n_shapes++;
        }
    }
    if (w->n_blocks == 0)
        kw_xml_problem(p, file, kw_xml_line(root), "workload has no blocks");
    if (w->n_shapes == 0)
        kw_xml_problem(p, file, kw_xml_line(root), "workload has no shapes");
}

/* ---------------- space ---------------- */

/* Split a whitespace-separated list of values into vals; returns the count,
 * or -1 after recording a problem (too many, too long). */
static int kw_split_values(char vals[][KW_VALUE_LEN], int max, const char *text, const char *what,
                           const char *file, long line, kw_xml_problems *p)
{
    int n = 0;
    const char *s = text;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
            s++;
        if (!*s)
            break;
        size_t l = strcspn(s, " \t\n\r");
        if (n == max) {
            kw_xml_problem(p, file, line, "%s has more than %d values", what, max);
            return -1;
        }
        if (l >= KW_VALUE_LEN) {
            kw_xml_problem(p, file, line, "%s: value '%.*s' is longer than %d characters", what,
                           (int)l, s, KW_VALUE_LEN - 1);
            return -1;
        }
        memcpy(vals[n], s, l);
        vals[n][l] = '\0';
        n++;
        s += l;
    }
    return n;
}

/* Two spellings of one number ("128", "0128", "+128", "128.0"): the mapping
 * reads them as the same value, so a domain listing both would make two
 * configurations (two config ids) of one mapping. */
static int kw_same_number(const char *a, const char *b)
{
    char *ea, *eb;
    errno = 0;
    double x = strtod(a, &ea);
    double y = strtod(b, &eb);
    return errno == 0 && ea != a && eb != b && *ea == '\0' && *eb == '\0' && isfinite(x) &&
           x == y;
}

static void kw_knob_from_node(kw_knob *k, xmlNode *n, const char *file, kw_xml_problems *p)
{
    long line = kw_xml_line(n);
    memset(k, 0, sizeof *k);
    k->line = (int)line;
    k->baseline = -1;
    kw_need(n, "name", file, p);
    kw_xml_attr_str(k->name, sizeof k->name, n, "name", file, p);
    xmlChar *v = xmlGetNoNsProp(n, BAD_CAST "values");
    char what[KW_NAME_MAX + 8];
    snprintf(what, sizeof what, "knob '%s'", k->name);
    int cnt = v ? kw_split_values(k->values, KW_VALUE_MAX, (const char *)v, what, file, line, p) : 0;
    xmlFree(v);
    if (cnt < 0)
        return;
    k->n_values = cnt;
    if (cnt == 0) {
        kw_xml_problem(p, file, line, "knob '%s' has an empty domain", k->name);
        return;
    }
    for (int i = 0; i < cnt; i++)
        for (int j = 0; j < i; j++) {
            if (strcmp(k->values[i], k->values[j]) == 0) {
                kw_xml_problem(p, file, line, "knob '%s' lists the value '%s' twice", k->name,
                               k->values[i]);
                break;
            }
            if (kw_same_number(k->values[i], k->values[j])) {
                kw_xml_problem(p, file, line, "knob '%s' lists the value '%s' twice: '%s' is the "
                               "same number", k->name, k->values[j], k->values[i]);
                break;
            }
        }
    char base[KW_VALUE_LEN] = "";
    kw_need(n, "baseline", file, p);
    if (kw_xml_attr_str(base, sizeof base, n, "baseline", file, p) == 1) {
        for (int i = 0; i < cnt; i++)
            if (strcmp(k->values[i], base) == 0)
                k->baseline = i;
        if (k->baseline < 0) {
            char dom[KW_VALUE_MAX * KW_VALUE_LEN] = "";
            size_t used = 0;
            for (int i = 0; i < cnt && used < sizeof dom; i++)
                used += (size_t)snprintf(dom + used, sizeof dom - used, "%s%s", i ? " " : "",
                                         k->values[i]);
            kw_xml_problem(p, file, line, "knob '%s': baseline '%s' is not in its domain {%s}",
                           k->name, base, dom);
        }
    }
}

static int kw_value_index(const kw_knob *k, const char *text)
{
    for (int i = 0; i < k->n_values; i++)
        if (strcmp(k->values[i], text) == 0)
            return i;
    return -1;
}

static int kw_space_knob_index(const kw_knobspace *ks, const char *name)
{
    for (int i = 0; i < ks->n_knobs; i++)
        if (strcmp(ks->knobs[i].name, name) == 0)
            return i;
    return -1;
}

static void kw_constraint_from_node(kw_constraint *c, xmlNode *n, const kw_knobspace *ks,
                                    const char *file, kw_xml_problems *p)
{
    long line = kw_xml_line(n);
    memset(c, 0, sizeof *c);
    c->line = (int)line;
    kw_need(n, "name", file, p);
    kw_xml_attr_str(c->name, sizeof c->name, n, "name", file, p);
    int bad = 0;
    for (xmlNode *t = kw_xml_elem(n->children); t; t = kw_xml_elem(t->next)) {
        if (!kw_xml_is(t, "when"))
            continue;
        long tl = kw_xml_line(t);
        if (c->n_terms == KW_TERM_MAX) {
            kw_xml_problem(p, file, tl, "constraint '%s' has more than %d terms", c->name,
                           KW_TERM_MAX);
            bad = 1;
            break;
        }
        char knob[KW_NAME_MAX] = "";
        kw_need(t, "knob", file, p);
        kw_xml_attr_str(knob, sizeof knob, t, "knob", file, p);
        int ki = kw_space_knob_index(ks, knob);
        if (ki < 0) {
            char hint[512];
            kw_knobs_hint_name(hint, sizeof hint, ks, knob);
            kw_xml_problem(p, file, tl, "constraint '%s' names an unknown knob '%s'%s", c->name,
                           knob, hint);
            bad = 1;
            continue;
        }
        for (int i = 0; i < c->n_terms; i++)
            if (c->terms[i].knob == ki) {
                kw_xml_problem(p, file, tl, "constraint '%s' names knob '%s' twice", c->name,
                               knob);
                bad = 1;
            }
        const kw_knob *k = &ks->knobs[ki];
        char vals[KW_VALUE_MAX][KW_VALUE_LEN];
        xmlChar *v = xmlGetNoNsProp(t, BAD_CAST "in");
        char what[KW_NAME_MAX * 2 + 32];
        snprintf(what, sizeof what, "constraint '%s', knob '%s'", c->name, knob);
        int cnt = v ? kw_split_values(vals, KW_VALUE_MAX, (const char *)v, what, file, tl, p) : 0;
        xmlFree(v);
        if (cnt <= 0) {
            if (cnt == 0)
                kw_xml_problem(p, file, tl, "%s: no values in 'in'", what);
            bad = 1;
            continue;
        }
        uint64_t mask = 0;
        for (int i = 0; i < cnt; i++) {
            int vi = kw_value_index(k, vals[i]);
            if (vi < 0) {
                char hint[512];
                kw_knobs_hint_value(hint, sizeof hint, k, vals[i]);
                kw_xml_problem(p, file, tl, "constraint '%s': '%s' is not a value of knob '%s'%s",
                               c->name, vals[i], knob, hint);
                bad = 1;
                continue;
            }
            mask |= 1ULL << vi;
        }
        c->terms[c->n_terms].knob = ki;
        c->terms[c->n_terms].mask = mask;
        c->n_terms++;
    }
    if (bad)
        return;
    if (c->n_terms == 0) {
        kw_xml_problem(p, file, line, "constraint '%s' has no <when> terms", c->name);
        return;
    }
    /* Every term covering its knob's whole domain forbids every configuration. */
    int all = 1;
    for (int i = 0; i < c->n_terms; i++) {
        int nv = ks->knobs[c->terms[i].knob].n_values;
        uint64_t full = nv >= 64 ? ~0ULL : (1ULL << nv) - 1;
        if (c->terms[i].mask != full)
            all = 0;
    }
    if (all)
        kw_xml_problem(p, file, line,
                       "constraint '%s' is unsatisfiable: each term covers its knob's whole "
                       "domain, so every configuration is forbidden",
                       c->name);
}

/* The first constraint the space's baseline breaks, or -1. A baseline that
 * did not parse (-1, already reported) matches no term. */
static int kw_baseline_violates(const kw_knobspace *ks)
{
    kw_cand base;
    kw_knobs_cand_baseline(&base, ks);
    return kw_knobs_cand_violates(ks, &base);
}

static void kw_space_defaults(kw_space *s)
{
    memset(s, 0, sizeof *s);
    s->guards.drift_min_cos = KW_DEF_DRIFT_MIN_COS;
    s->guards.drift_max_rel_rms = KW_DEF_DRIFT_MAX_REL_RMS;
    s->guards.max_throttle_pct = KW_DEF_MAX_THROTTLE_PCT;
    s->guards.max_fallback_pct = KW_DEF_MAX_FALLBACK_PCT;
    s->guards.sla_p99_us = KW_DEF_SLA_P99_US;
    s->guards.max_long_window_drift_pct = KW_DEF_MAX_LONG_WINDOW_DRIFT_PCT;
    s->min_effect_pct = KW_DEF_MIN_EFFECT_PCT;
    s->alpha = KW_DEF_ALPHA;
    s->noise_pct = KW_DEF_NOISE_PCT;
    s->sim_requests = KW_DEF_SIM_REQUESTS;
    s->final_requests = KW_DEF_FINAL_REQUESTS;
    s->exec_timeout_s = KW_EXEC_DEF_TIMEOUT_S;
    s->exec_start_timeout_s = KW_EXEC_DEF_START_TIMEOUT_S;
    s->exec_warmup = KW_EXEC_DEF_WARMUP;
    s->exec_reps = KW_EXEC_DEF_REPS;
    s->exec_max_reps = KW_EXEC_DEF_MAX_REPS;
    s->exec_target_ci_pct = KW_EXEC_DEF_TARGET_CI_PCT;
    s->exec_anchor = 1;
}

/* Fill s from a validated space document. a or w may be NULL when they did
 * not load: the checks that need them are skipped (their own problems are
 * already reported). */
static void kw_space_from_doc(kw_space *s, xmlNode *root, const char *file, const kw_accel *a,
                              const kw_workload *w, kw_xml_problems *p)
{
    long rl = kw_xml_line(root);
    kw_xml_attr_str(s->name, sizeof s->name, root, "name", file, p);
    kw_need(root, "block", file, p);
    kw_xml_attr_str(s->block, sizeof s->block, root, "block", file, p);
    const kw_block *blk = NULL;
    int bi = -1;
    if (w) {
        for (int i = 0; i < w->n_blocks; i++)
            if (strcmp(w->blocks[i].name, s->block) == 0)
                bi = i;
        if (bi < 0)
            kw_xml_problem(p, file, rl, "block '%s' is not in the workload '%s'", s->block,
                           w->name);
        else
            blk = &w->blocks[bi];
    }
    kw_knobspace *ks = &s->knobs;
    for (xmlNode *n = kw_xml_elem(root->children); n; n = kw_xml_elem(n->next)) {
        long line = kw_xml_line(n);
        if (kw_xml_is(n, "shape")) {
            char ref[KW_NAME_MAX] = "";
            kw_xml_attr_str(ref, sizeof ref, n, "ref", file, p);
            if (!w)
                continue;
            int si = -1;
            for (int i = 0; i < w->n_shapes; i++)
                if (strcmp(w->shapes[i].name, ref) == 0)
                    si = i;
            if (si < 0) {
                kw_xml_problem(p, file, line, "shape '%s' is not in the workload '%s'", ref,
                               w->name);
                continue;
            }
            if (bi >= 0 && w->shapes[si].block != bi) {
                kw_xml_problem(p, file, line, "shape '%s' belongs to block '%s', not '%s'", ref,
                               w->blocks[w->shapes[si].block].name, s->block);
                continue;
            }
            int dup = 0;
            for (int i = 0; i < s->n_shapes; i++)
                dup |= s->shapes[i] == si;
            if (dup) {
                kw_xml_problem(p, file, line, "shape '%s' is listed twice", ref);
                continue;
            }
            if (s->n_shapes == KW_SHAPE_MAX) {
                kw_xml_problem(p, file, line, "more than %d shapes", KW_SHAPE_MAX);
                continue;
            }
            s->shapes[s->n_shapes++] = si;
        } else if (kw_xml_is(n, "knob")) {
            if (ks->n_knobs == KW_KNOB_MAX) {
                kw_xml_problem(p, file, line, "more than %d knobs", KW_KNOB_MAX);
                continue;
            }
            kw_knob *k = &ks->knobs[ks->n_knobs];
            int before = p->n;
            kw_knob_from_node(k, n, file, p);
            int ki = kw_space_knob_index(ks, k->name);
            if (ki >= 0) {
                kw_xml_problem(p, file, line, "knob '%s' is already defined (line %d)", k->name,
                               ks->knobs[ki].line);
                continue;
            }
            if (blk && p->n == before && kw_mapping_knob_check(blk, k, a) != 0)
                kw_xml_problem(p, file, line, "%s", kw_error_last());
            if (strcmp(k->name, "max_batch") == 0)
                for (int v = 0; v < k->n_values; v++)
                    if (atol(k->values[v]) > KW_SIM_BATCH_MAX)
                        kw_xml_problem(p, file, line, "knob 'max_batch': value '%s' is more than "
                                       "the %d requests per batch the serving simulation runs",
                                       k->values[v], KW_SIM_BATCH_MAX);
            ks->n_knobs++;
        } else if (kw_xml_is(n, "constraint")) {
            if (ks->n_constraints == KW_CONSTRAINT_MAX) {
                kw_xml_problem(p, file, line, "more than %d constraints", KW_CONSTRAINT_MAX);
                continue;
            }
            kw_constraint *c = &ks->constraints[ks->n_constraints];
            int before = p->n;
            kw_constraint_from_node(c, n, ks, file, p);
            for (int i = 0; i < ks->n_constraints; i++)
                if (strcmp(ks->constraints[i].name, c->name) == 0)
                    kw_xml_problem(p, file, line, "constraint '%s' is already defined (line %d)",
                                   c->name, ks->constraints[i].line);
            if (p->n == before)
                ks->n_constraints++;
        } else if (kw_xml_is(n, "guards")) {
            kw_guards *g = &s->guards;
            kw_get_range(&g->drift_min_cos, n, "drift_min_cos", 0.0, 1.0, 1, file, p);
            kw_get_pos(&g->drift_max_rel_rms, n, "drift_max_rel_rms", file, p);
            kw_get_range(&g->max_throttle_pct, n, "max_throttle_pct", 0.0, 100.0, 0, file, p);
            kw_get_range(&g->max_fallback_pct, n, "max_fallback_pct", 0.0, 100.0, 0, file, p);
            kw_get_nonneg(&g->sla_p99_us, n, "sla_p99_us", file, p);
            kw_get_nonneg(&g->max_long_window_drift_pct, n, "max_long_window_drift_pct", file, p);
            kw_get_nonneg(&g->sla_ttft_p99_us, n, "sla_ttft_p99_us", file, p);
            kw_get_nonneg(&g->sla_tpot_p99_us, n, "sla_tpot_p99_us", file, p);
        } else if (kw_xml_is(n, "tuning")) {
            s->tuning_line = (int)line;
            kw_get_range(&s->min_effect_pct, n, "min_effect_pct", 0.0, 100.0, 0, file, p);
            double alpha = s->alpha;
            if (kw_xml_attr_double(&alpha, n, "alpha", file, p) == 1) {
                if (!(alpha > 0.0 && alpha < 1.0))
                    kw_xml_problem(p, file, line, "alpha must be between 0 and 1 (exclusive), not %g",
                                   alpha);
                s->alpha = alpha;
            }
            kw_get_range(&s->noise_pct, n, "noise_pct", 0.0, 100.0, 0, file, p);
            kw_get_int(&s->sim_requests, n, "sim_requests", 1, 100000000, file, p);
            kw_get_int(&s->final_requests, n, "final_requests", 1, 100000000, file, p);
            /* the simulator's limit, warm-up included: the final re-check
             * must be able to run what the search finds */
            static const char *const req_attr[2] = {"sim_requests", "final_requests"};
            int req_val[2] = {s->sim_requests, s->final_requests};
            for (int r = 0; r < 2; r++)
                if (kw_sim_total_requests(req_val[r]) > KW_SIM_MAX_REQUESTS)
                    kw_xml_problem(p, file, line, "%s %d plus its %d warm-up requests is more "
                                   "than the %d requests one simulation runs: %s must be at most "
                                   "%ld", req_attr[r], req_val[r], req_val[r] / KW_SIM_WARMUP_DIV,
                                   KW_SIM_MAX_REQUESTS, req_attr[r], kw_sim_max_sample());
        } else if (kw_xml_is(n, "evaluator")) {
            /* the measuring evaluator's settings (kw_exec.h) */
            s->exec_line = (int)line;
            kw_need(n, "command", file, p);
            kw_xml_attr_str(s->exec_cmd, sizeof s->exec_cmd, n, "command", file, p);
            kw_get_pos(&s->exec_timeout_s, n, "timeout_s", file, p);
            kw_get_pos(&s->exec_start_timeout_s, n, "start_timeout_s", file, p);
            kw_get_int(&s->exec_warmup, n, "warmup", 0, 1000000, file, p);
            kw_get_int(&s->exec_reps, n, "reps", 1, KW_EXEC_SAMPLES_MAX, file, p);
            kw_get_int(&s->exec_max_reps, n, "max_reps", 1, KW_EXEC_SAMPLES_MAX, file, p);
            kw_get_range(&s->exec_target_ci_pct, n, "target_ci_pct", 0.0, 100.0, 0, file, p);
            kw_xml_attr_bool(&s->exec_anchor, n, "anchor", file, p);
            if (s->exec_max_reps < s->exec_reps)
                kw_xml_problem(p, file, line, "max_reps (%d) is below reps (%d)",
                               s->exec_max_reps, s->exec_reps);
        }
    }
    if (ks->n_knobs == 0)
        kw_xml_problem(p, file, rl, "space has no knobs");
    int c = kw_baseline_violates(ks);
    if (c >= 0)
        kw_xml_problem(p, file, ks->constraints[c].line,
                       "the baseline violates constraint '%s': the configuration to roll back "
                       "to must be allowed",
                       ks->constraints[c].name);
    /* No <shape ref>: every shape of the block. */
    if (w && bi >= 0 && s->n_shapes == 0) {
        int listed = 0;
        for (xmlNode *n = kw_xml_elem(root->children); n; n = kw_xml_elem(n->next))
            listed |= kw_xml_is(n, "shape");
        if (!listed) {
            for (int i = 0; i < w->n_shapes; i++)
                if (w->shapes[i].block == bi)
                    s->shapes[s->n_shapes++] = i;
            if (s->n_shapes == 0)
                kw_xml_problem(p, file, rl, "the workload has no shapes for block '%s'", s->block);
        }
    }
}

/* ---------------- loading whole files ---------------- */

/* Non-input failures (out of memory, a broken embedded schema) abort the
 * load; input problems are collected and the load goes on. */
#define KW_FATAL(rc) ((rc) != 0 && (rc) != KW_EINPUT)

static int kw_accel_load_src(kw_accel *a, const kw_src *src, kw_xml_problems *p)
{
    xmlDocPtr doc = NULL;
    int rc = kw_xml_load(&doc, src->label, src->buf, src->len, "accelerator", KW_SCHEMA_ACCEL, p);
    if (rc != 0)
        return rc;
    int before = p->n;
    kw_accel_from_doc(a, xmlDocGetRootElement(doc), src->label, p);
    xmlFreeDoc(doc);
    return p->n > before ? KW_EINPUT : 0;
}

static int kw_workload_load_src(kw_workload *w, const kw_src *src, kw_xml_problems *p)
{
    xmlDocPtr doc = NULL;
    int rc = kw_xml_load(&doc, src->label, src->buf, src->len, "workload", KW_SCHEMA_WORKLOAD, p);
    if (rc != 0)
        return rc;
    int before = p->n;
    kw_workload_from_doc(w, xmlDocGetRootElement(doc), src->label, p);
    xmlFreeDoc(doc);
    return p->n > before ? KW_EINPUT : 0;
}

/* The file a space names in <accelerator file=...> or <workload file=...>:
 * the override when given, else resolved against the space file. */
static int kw_space_ref(kw_src *out, char *resolved, const xmlNode *root, const char *elem,
                        const kw_src *space, const char *override, kw_xml_problems *p)
{
    if (override) {
        snprintf(resolved, KW_PATH_MAX, "%s", override);
        return kw_src_open(out, override, 0, p);
    }
    const xmlNode *n = NULL;
    for (xmlNode *c = kw_xml_elem(root->children); c; c = kw_xml_elem(c->next))
        if (kw_xml_is(c, elem))
            n = c;
    char rel[KW_PATH_MAX] = "";
    if (!n || kw_xml_attr_str(rel, sizeof rel, n, "file", space->label, p) != 1 || !rel[0]) {
        kw_xml_problem(p, space->label, kw_xml_line(n ? n : root), "no <%s file=\"...\"/>", elem);
        return KW_EINPUT;
    }
    if (kw_path_resolve(resolved, space->label, rel, space->embedded) != 0) {
        kw_xml_problem(p, space->label, kw_xml_line(n), "%s path is too long", elem);
        return KW_EINPUT;
    }
    kw_xml_problems sub = {0};
    int rc = kw_src_open(out, resolved, space->embedded, &sub);
    if (rc != 0) {
        /* Point at the line naming the file: that is where the fix goes. */
        kw_xml_problem(p, space->label, kw_xml_line(n), "%s file '%s' (%s): %s", elem, rel,
                       resolved, strchr(sub.text, ' ') ? strchr(sub.text, ' ') + 1 : sub.text);
    }
    return rc;
}

/* A named file had problems: say so at the line of the space that names it
 * (where a reader of the space looks first), then list the file's own. */
static void kw_space_ref_problems(kw_xml_problems *p, const kw_xml_problems *sub,
                                  const xmlNode *root, const char *elem, const kw_src *space,
                                  const char *override)
{
    if (sub->n == 0)
        return;
    const xmlNode *n = root;
    for (xmlNode *c = kw_xml_elem(root->children); c; c = kw_xml_elem(c->next))
        if (kw_xml_is(c, elem))
            n = c;
    if (override)
        kw_xml_problem(p, space->label, kw_xml_line(n), "the %s file given instead (%s) is not valid:",
                       elem, override);
    else
        kw_xml_problem(p, space->label, kw_xml_line(n), "the %s file named here is not valid:", elem);
    kw_xml_problems_merge(p, sub);
}

static int kw_config_load_src(kw_config *c, const kw_src *space, const char *accel_override,
                              const char *workload_override, kw_xml_problems *p)
{
    xmlDocPtr doc = NULL;
    kw_src asrc = {0}, wsrc = {0};
    int rc = kw_xml_load(&doc, space->label, space->buf, space->len, "space", KW_SCHEMA_SPACE, p);
    if (rc != 0)
        return rc;
    xmlNode *root = xmlDocGetRootElement(doc);
    kw_space_defaults(&c->space);
    snprintf(c->space.path, sizeof c->space.path, "%s", space->label);
    snprintf(c->input_hash[0], sizeof c->input_hash[0], "%s", space->hash);

    kw_xml_problems sub = {0};
    int arc = kw_space_ref(&asrc, c->space.accel_path, root, "accelerator", space, accel_override, p);
    if (arc == 0) {
        arc = kw_accel_load_src(&c->accel, &asrc, &sub);
        snprintf(c->input_hash[1], sizeof c->input_hash[1], "%s", asrc.hash);
        kw_space_ref_problems(p, &sub, root, "accelerator", space, accel_override);
    }
    if (KW_FATAL(arc)) {
        rc = arc;
        goto done;
    }
    memset(&sub, 0, sizeof sub);
    int wrc = kw_space_ref(&wsrc, c->space.workload_path, root, "workload", space,
                           workload_override, p);
    if (wrc == 0) {
        wrc = kw_workload_load_src(&c->workload, &wsrc, &sub);
        snprintf(c->input_hash[2], sizeof c->input_hash[2], "%s", wsrc.hash);
        kw_space_ref_problems(p, &sub, root, "workload", space, workload_override);
    }
    if (KW_FATAL(wrc)) {
        rc = wrc;
        goto done;
    }
    kw_space_from_doc(&c->space, root, space->label, arc == 0 ? &c->accel : NULL,
                      wrc == 0 ? &c->workload : NULL, p);
    rc = p->n > 0 ? KW_EINPUT : 0;
done:
    kw_src_close(&asrc);
    kw_src_close(&wsrc);
    xmlFreeDoc(doc);
    return rc;
}

/* Turn a load's outcome into the error object: fatal codes keep their own
 * message, input problems become one KW_EINPUT listing them all. */
static int kw_load_finish(int rc, const kw_xml_problems *p)
{
    if (KW_FATAL(rc))
        return rc;
    if (p->n > 0)
        return kw_xml_problems_finish(p);
    return rc;
}

/* ---------------- public API ---------------- */

int kw_load_accel(kw_accel *out, const char *path)
{
    kw_xml_problems p = {0};
    kw_src src;
    int rc = kw_src_open(&src, path, 0, &p);
    if (rc == 0)
        rc = kw_accel_load_src(out, &src, &p);
    kw_src_close(&src);
    return kw_load_finish(rc, &p);
}

int kw_load_accel_buf(kw_accel *out, const char *label, const char *buf, size_t len)
{
    kw_xml_problems p = {0};
    kw_src src;
    memset(&src, 0, sizeof src);
    snprintf(src.label, sizeof src.label, "%s", label);
    src.buf = buf;
    src.len = len;
    kw_hash_hex_of(src.hash, buf, len);
    return kw_load_finish(kw_accel_load_src(out, &src, &p), &p);
}

int kw_load_workload(kw_workload *out, const char *path)
{
    kw_xml_problems p = {0};
    kw_src src;
    int rc = kw_src_open(&src, path, 0, &p);
    if (rc == 0)
        rc = kw_workload_load_src(out, &src, &p);
    kw_src_close(&src);
    return kw_load_finish(rc, &p);
}

int kw_load_space(kw_space *out, const char *path, const kw_accel *a, const kw_workload *w)
{
    kw_xml_problems p = {0};
    kw_src src;
    xmlDocPtr doc = NULL;
    int rc = kw_src_open(&src, path, 0, &p);
    if (rc == 0)
        rc = kw_xml_load(&doc, src.label, src.buf, src.len, "space", KW_SCHEMA_SPACE, &p);
    if (rc == 0) {
        xmlNode *root = xmlDocGetRootElement(doc);
        kw_space_defaults(out);
        snprintf(out->path, sizeof out->path, "%s", path);
        for (xmlNode *c = kw_xml_elem(root->children); c; c = kw_xml_elem(c->next)) {
            char rel[KW_PATH_MAX] = "";
            if (kw_xml_is(c, "accelerator") &&
                kw_xml_attr_str(rel, sizeof rel, c, "file", path, &p) == 1 &&
                kw_path_resolve(out->accel_path, path, rel, 0) != 0)
                kw_xml_problem(&p, path, kw_xml_line(c), "accelerator path is too long");
            if (kw_xml_is(c, "workload") &&
                kw_xml_attr_str(rel, sizeof rel, c, "file", path, &p) == 1 &&
                kw_path_resolve(out->workload_path, path, rel, 0) != 0)
                kw_xml_problem(&p, path, kw_xml_line(c), "workload path is too long");
        }
        kw_space_from_doc(out, root, src.label, a, w, &p);
    }
    xmlFreeDoc(doc);
    kw_src_close(&src);
    return kw_load_finish(rc, &p);
}

static int kw_config_load_any(kw_config **out, const char *space_path, int embedded,
                              const char *accel_override, const char *workload_override)
{
    *out = NULL;
    kw_xml_problems p = {0};
    kw_config *c = calloc(1, sizeof *c);
    if (!c)
        return kw_error_set(KW_ENOMEM, "out of memory loading %s", space_path);
    kw_src src;
    int rc = kw_src_open(&src, space_path, embedded, &p);
    if (rc == 0)
        rc = kw_config_load_src(c, &src, accel_override, workload_override, &p);
    kw_src_close(&src);
    rc = kw_load_finish(rc, &p);
    if (rc != 0) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int kw_load_config(kw_config **out, const char *space_path, const char *accel_override,
                   const char *workload_override)
{
    /* "" is no file (kw_input_named): report went on without the input it was given */
    static const char *const opt[3] = {"--space", "--accel", "--workload"};
    const char *given[3] = {space_path, accel_override, workload_override};
    for (int i = 0; i < 3; i++)
        if (kw_input_named(opt[i], given[i]) != 0)
            return KW_EINPUT;
    if (space_path == NULL)
        return kw_config_load_any(out, KW_DEFAULT_SPACE, 1, accel_override, workload_override);
    return kw_config_load_any(out, space_path, 0, accel_override, workload_override);
}

int kw_load_config_default(kw_config **out)
{
    return kw_config_load_any(out, KW_DEFAULT_SPACE, 1, NULL, NULL);
}

void kw_load_config_free(kw_config *c) { free(c); }

int kw_load_config_shape(const kw_config *c, const char *name)
{
    if (!c || !name)
        return -1;
    for (int i = 0; i < c->space.n_shapes; i++) {
        int si = c->space.shapes[i];
        if (si >= 0 && si < c->workload.n_shapes && strcmp(c->workload.shapes[si].name, name) == 0)
            return i;
    }
    return -1;
}

int kw_load_validate_file(const char *path) { return kw_load_validate_file_root(path, NULL, 0); }

int kw_load_validate_file_root(const char *path, char *root_out, size_t root_len)
{
    if (root_out && root_len > 0)
        root_out[0] = '\0';
    kw_xml_problems p = {0};
    kw_src src;
    xmlDocPtr doc = NULL;
    int output = 0;
    int rc = kw_src_open_ex(&src, path, 0, 1, &output, &p);
    if (rc == 0)
        rc = output ? kw_xml_parse_output(&doc, src.label, src.buf, src.len, &p)
                    : kw_xml_parse(&doc, src.label, src.buf, src.len, &p);
    if (rc != 0)
        goto done;
    xmlNode *root = xmlDocGetRootElement(doc);
    char rname[KW_NAME_MAX];
    snprintf(rname, sizeof rname, "%s", (const char *)root->name);
    long rline = kw_xml_line(root);
    int has_ns = root->ns != NULL;
    if (root_out && root_len > 0)
        snprintf(root_out, root_len, "%s", rname);
    if (has_ns) {
        kw_xml_problem(&p, path, rline, "root element '%s' has a namespace: knobwise files use none",
                       rname);
        rc = KW_EINPUT;
    } else if (output && strcmp(rname, "results") != 0) { /* NEVER: libxml2's peek saw <results> */
        kw_xml_problem(&p, path, 1, "file is over the %u MiB limit for input files",
                       KW_XML_MAX_BYTES >> 20);
        rc = KW_EINPUT;
    } else if (strcmp(rname, "space") == 0) {
        kw_config *c = calloc(1, sizeof *c);
        if (!c) {
            rc = kw_error_set(KW_ENOMEM, "out of memory validating %s", path);
            goto done;
        }
        rc = kw_config_load_src(c, &src, NULL, NULL, &p);
        free(c);
    } else if (strcmp(rname, "accelerator") == 0) {
        kw_accel a;
        rc = kw_accel_load_src(&a, &src, &p);
    } else if (strcmp(rname, "workload") == 0) {
        kw_workload *w = calloc(1, sizeof *w);
        if (!w) {
            rc = kw_error_set(KW_ENOMEM, "out of memory validating %s", path);
            goto done;
        }
        rc = kw_workload_load_src(w, &src, &p);
        free(w);
    } else if (strcmp(rname, "results") == 0) {
        if (!kw_embedded_find(KW_SCHEMA_RESULTS)) {
            kw_xml_problem(&p, path, rline,
                           "cannot check a results file: this knobwise has no results schema "
                           "(%s is not built in)",
                           KW_SCHEMA_RESULTS);
            rc = KW_EINPUT;
        } else {
            rc = kw_xml_validate(doc, path, KW_SCHEMA_RESULTS, &p);
        }
    } else {
        kw_xml_problem(&p, path, rline,
                       "root element is '%s': expected space, accelerator, workload or results",
                       rname);
        rc = KW_EINPUT;
    }
done:
    xmlFreeDoc(doc);
    kw_src_close(&src);
    return kw_load_finish(rc, &p);
}
