/* kw_load_hier.c - the accelerator's storage hierarchy, achievable rates and
 * supported precision pairs, from XML into kw_accel.
 *
 * Design choice: every new element is optional and absent means "as before"
 * (no shared level, accumulators in SRAM, rates at the peak, every precision
 * pair allowed), so files written before the hierarchy keep loading and keep
 * their figures. What the schema cannot say is checked here with the line of
 * the element: one level of each per-unit kind, the capacity attribute that
 * fits the kind, an SRAM level that agrees with <memory>, pairs whose input
 * precision the accelerator supports, no pair twice. Alternative rejected:
 * replacing <memory> with the hierarchy (every old file and test would break).
 */
#include "kw_load_hier.h"
#include "kw_calib.h"

#include <stdio.h>
#include <string.h>

#define KW_TERA 1e12
#define KW_GIGA 1e9
#define KW_KIB 1024.0
#define KW_MIB (1024.0 * 1024.0)
/* a kernel's device-side fixed time beyond 1 ms is no kernel the model describes */
#define KW_KERNEL_FIXED_MAX_US 1000.0

static const char *const kw_level_kinds[KW_LEVEL_KIND_COUNT] = {"registers", "sram", "shared"};

const char *kw_load_hier_level_kind_name(kw_level_kind k)
{
    return (unsigned)k < KW_LEVEL_KIND_COUNT ? kw_level_kinds[k] : "?";
}

static unsigned kw_holds_parse(const char *text)
{
    unsigned h = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *t = strtok_r(buf, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
        if (strcmp(t, "accumulators") == 0)
            h |= KW_HOLD_ACCUMULATORS;
        else if (strcmp(t, "scores") == 0)
            h |= KW_HOLD_SCORES;
        else if (strcmp(t, "operands") == 0)
            h |= KW_HOLD_OPERANDS;
    }
    return h;
}

static void kw_level_parse(kw_accel *a, const xmlNode *n, const char *file, kw_xml_problems *p)
{
    long line = kw_xml_line(n);
    if (a->n_levels == KW_LEVEL_MAX) {
        kw_xml_problem(p, file, line, "more than %d storage levels", KW_LEVEL_MAX);
        return;
    }
    kw_level *l = &a->levels[a->n_levels];
    memset(l, 0, sizeof *l);
    l->line = (int)line;
    char kind[KW_NAME_MAX] = "", holds[256] = "";
    kw_xml_attr_str(l->name, sizeof l->name, n, "name", file, p);
    kw_xml_attr_str(kind, sizeof kind, n, "kind", file, p);
    int k = -1;
    for (int i = 0; i < KW_LEVEL_KIND_COUNT; i++)
        if (strcmp(kind, kw_level_kinds[i]) == 0)
            k = i;
    if (k < 0) {
        kw_xml_problem(p, file, line, "level '%s': unknown kind '%s' (registers, sram or shared)",
                       l->name, kind);
        return;
    }
    l->kind = (kw_level_kind)k;
    long kib = 0;
    double mib = 0.0, gbs = 0.0;
    int has_kib = kw_xml_attr_long(&kib, n, "kib_per_unit", 1, 1L << 30, file, p);
    int has_mib = kw_xml_attr_double(&mib, n, "mib", file, p);
    if (l->kind == KW_LEVEL_SHARED) {
        if (has_kib == 1)
            kw_xml_problem(p, file, line, "shared level '%s' takes mib (whole chip), not kib_per_unit",
                           l->name);
        if (has_mib != 1 || !(mib > 0.0))
            kw_xml_problem(p, file, line, "shared level '%s' needs a positive mib", l->name);
        else
            l->bytes = (uint64_t)(mib * KW_MIB);
    } else {
        if (has_mib == 1)
            kw_xml_problem(p, file, line, "%s level '%s' takes kib_per_unit, not mib",
                           kw_level_kinds[k], l->name);
        if (has_kib != 1)
            kw_xml_problem(p, file, line, "%s level '%s' needs kib_per_unit", kw_level_kinds[k],
                           l->name);
        else
            l->bytes = (uint64_t)kib * (uint64_t)KW_KIB;
    }
    if (kw_xml_attr_double(&gbs, n, "gb_s", file, p) == 1) {
        if (!(gbs >= 0.0))
            kw_xml_problem(p, file, line, "level '%s': gb_s must not be negative", l->name);
        l->bw_bytes_per_s = gbs * KW_GIGA;
    }
    kw_xml_attr_str(holds, sizeof holds, n, "holds", file, p);
    l->holds = kw_holds_parse(holds);
    if (!l->holds)
        kw_xml_problem(p, file, line, "level '%s' holds nothing (accumulators, scores, operands)",
                       l->name);
    for (int i = 0; i < a->n_levels; i++) {
        if (strcmp(a->levels[i].name, l->name) == 0)
            kw_xml_problem(p, file, line, "storage level '%s' is declared twice", l->name);
        else if (l->kind != KW_LEVEL_SHARED && a->levels[i].kind == l->kind)
            kw_xml_problem(p, file, line, "more than one %s level ('%s' and '%s')",
                           kw_level_kinds[k], a->levels[i].name, l->name);
    }
    a->n_levels++;
}

static void kw_fraction(double *out, const xmlNode *n, const char *attr, const char *file,
                        kw_xml_problems *p)
{
    double v;
    if (kw_xml_attr_double(&v, n, attr, file, p) != 1)
        return;
    if (!(v > 0.0 && v <= 1.0))
        kw_xml_problem(p, file, kw_xml_line(n), "attribute '%s' must be in (0, 1], not %g", attr, v);
    else
        *out = v;
}

/* A fixed time per kernel in [0, KW_KERNEL_FIXED_MAX_US] us (kernel_fixed_us,
 * gather_fixed_us); *out untouched when absent or out of range. */
static void kw_fixed_us(double *out, const xmlNode *n, const char *attr, const char *file,
                        kw_xml_problems *p)
{
    double v;
    if (kw_xml_attr_double(&v, n, attr, file, p) != 1)
        return;
    if (!(v >= 0.0 && v <= KW_KERNEL_FIXED_MAX_US))
        kw_xml_problem(p, file, kw_xml_line(n), "%s must be in [0, %g], not %g", attr,
                       KW_KERNEL_FIXED_MAX_US, v);
    else
        *out = v;
}

/* A share in [0, 1] (0 allowed, unlike a fraction); 1 when the attribute was given. */
static int kw_share(double *out, const xmlNode *n, const char *attr, const char *file,
                    kw_xml_problems *p)
{
    double v;
    if (kw_xml_attr_double(&v, n, attr, file, p) != 1)
        return 0;
    if (!(v >= 0.0 && v <= 1.0)) {
        kw_xml_problem(p, file, kw_xml_line(n), "attribute '%s' must be in [0, 1], not %g", attr, v);
        return 0;
    }
    *out = v;
    return 1;
}

static void kw_positive(double *out, const xmlNode *n, const char *attr, double scale,
                        const char *file, kw_xml_problems *p)
{
    double v;
    if (kw_xml_attr_double(&v, n, attr, file, p) != 1)
        return;
    if (!(v > 0.0))
        kw_xml_problem(p, file, kw_xml_line(n), "attribute '%s' must be positive, not %g", attr, v);
    else
        *out = v * scale;
}

static int kw_prec_attr(kw_prec *out, const xmlNode *n, const char *attr, const char *file,
                        kw_xml_problems *p)
{
    char name[KW_NAME_MAX] = "";
    kw_xml_attr_str(name, sizeof name, n, attr, file, p);
    int pi = kw_prec_parse(name);
    if (pi < 0) {
        kw_xml_problem(p, file, kw_xml_line(n), "unknown precision '%s'", name);
        return -1;
    }
    *out = (kw_prec)pi;
    return 0;
}

/* <rates><prior param= class= width=>: the class (and width) of a figure
 * calibrate may fit; the parameter by calibrate's name, once each. */
static void kw_prior_parse(kw_accel *a, const xmlNode *c, const char *file, kw_xml_problems *p)
{
    char name[KW_NAME_MAX] = "", cls[4] = "";
    long line = kw_xml_line(c);
    if (kw_xml_attr_str(name, sizeof name, c, "param", file, p) != 1 ||
        kw_xml_attr_str(cls, sizeof cls, c, "class", file, p) != 1)
        return;
    int id = kw_calib_param_id(name);
    if (id < 0) {
        kw_xml_problem(p, file, line, "prior for unknown parameter '%s' (one of calibrate's --fit names)",
                       name);
        return;
    }
    if (cls[1] || kw_calib_class_width(cls[0]) < 0.0) {
        kw_xml_problem(p, file, line, "prior class '%s' is not S, D, U or F", cls);
        return;
    }
    if (a->prior_class[id]) {
        kw_xml_problem(p, file, line, "parameter '%s' has more than one prior", name);
        return;
    }
    a->prior_class[id] = cls[0];
    kw_positive(&a->prior_width[id], c, "width", 1.0, file, p);
}

int kw_load_hier_elem(kw_accel *a, const xmlNode *n, const char *file, kw_xml_problems *p)
{
    long line = kw_xml_line(n);
    if (kw_xml_is(n, "storage")) {
        long mc = 0;
        if (kw_xml_attr_long(&mc, n, "multicast_max", 1, 65536, file, p) == 1)
            a->multicast_max = (int)mc;
        for (const xmlNode *c = kw_xml_elem(n->children); c; c = kw_xml_elem(c->next))
            if (kw_xml_is(c, "level"))
                kw_level_parse(a, c, file, p);
        return 1;
    }
    if (kw_xml_is(n, "rates")) {
        kw_fraction(&a->sync_matrix_fraction, n, "sync_matrix_fraction", file, p);
        kw_fraction(&a->dram_fraction, n, "dram_fraction", file, p);
        kw_positive(&a->special_ops_per_s, n, "special_tops", KW_TERA, file, p);
        kw_positive(&a->vector_ops_per_s, n, "vector_tops", KW_TERA, file, p);
        double ops = 0.0;
        if (kw_xml_attr_double(&ops, n, "softmax_vector_ops", file, p) == 1) {
            if (!(ops >= 0.0))
                kw_xml_problem(p, file, line, "softmax_vector_ops must not be negative, not %g", ops);
            else
                a->softmax_vector_ops = ops;
        }
        int hs = kw_share(&a->softmax_hidden_serial, n, "softmax_hidden_serial", file, p);
        a->softmax_hidden_overlap = 1.0;
        int ho = kw_share(&a->softmax_hidden_overlap, n, "softmax_hidden_overlap", file, p);
        a->softmax_hidden_set = hs == 1 || ho == 1;
        kw_fixed_us(&a->kernel_fixed_us, n, "kernel_fixed_us", file, p);
        kw_fraction(&a->gather_dram_fraction, n, "gather_dram_fraction", file, p);
        kw_fixed_us(&a->gather_fixed_us, n, "gather_fixed_us", file, p);
        int seen[KW_PREC_COUNT] = {0};
        for (const xmlNode *c = kw_xml_elem(n->children); c; c = kw_xml_elem(c->next)) {
            kw_prec pr;
            if (kw_xml_is(c, "prior")) {
                kw_prior_parse(a, c, file, p);
                continue;
            }
            if (!kw_xml_is(c, "matrix") || kw_prec_attr(&pr, c, "precision", file, p) != 0)
                continue;
            if (seen[pr]++)
                kw_xml_problem(p, file, kw_xml_line(c), "precision '%s' has more than one matrix rate",
                               kw_prec_name(pr));
            kw_fraction(&a->matrix_fraction[pr], c, "fraction", file, p);
        }
        return 1;
    }
    if (kw_xml_is(n, "accumulate")) {
        kw_prec_pair pr;
        if (kw_prec_attr(&pr.input, n, "input", file, p) != 0 ||
            kw_prec_attr(&pr.accum, n, "accum", file, p) != 0)
            return 1;
        for (int i = 0; i < a->n_pairs; i++)
            if (a->pairs[i].input == pr.input && a->pairs[i].accum == pr.accum) {
                kw_xml_problem(p, file, line, "precision pair %s/%s is listed twice",
                               kw_prec_name(pr.input), kw_prec_name(pr.accum));
                return 1;
            }
        if (a->n_pairs == KW_PAIR_MAX) {
            kw_xml_problem(p, file, line, "more than %d precision pairs", KW_PAIR_MAX);
            return 1;
        }
        if (kw_prec_bytes(pr.accum) < kw_prec_bytes(pr.input))
            kw_xml_problem(p, file, line, "precision pair %s/%s accumulates in fewer bytes than its input",
                           kw_prec_name(pr.input), kw_prec_name(pr.accum));
        a->pairs[a->n_pairs++] = pr;
        return 1;
    }
    return 0;
}

void kw_load_hier_check(kw_accel *a, const char *file, long root_line, kw_xml_problems *p)
{
    for (int i = 0; i < a->n_levels; i++) {
        const kw_level *l = &a->levels[i];
        if (l->kind == KW_LEVEL_SRAM && a->sram_bytes_per_unit && l->bytes != a->sram_bytes_per_unit)
            kw_xml_problem(p, file, l->line,
                           "sram level '%s' has %llu KiB per unit but <memory> says %llu KiB", l->name,
                           (unsigned long long)(l->bytes / 1024),
                           (unsigned long long)(a->sram_bytes_per_unit / 1024));
        if (l->kind == KW_LEVEL_SRAM && !(l->holds & KW_HOLD_OPERANDS))
            kw_xml_problem(p, file, l->line, "sram level '%s' must hold operands", l->name);
    }
    for (int i = 0; i < a->n_pairs; i++)
        if (!(a->peak_flops[a->pairs[i].input] > 0.0))
            kw_xml_problem(p, file, root_line,
                           "precision pair %s/%s: the accelerator has no %s peak",
                           kw_prec_name(a->pairs[i].input), kw_prec_name(a->pairs[i].accum),
                           kw_prec_name(a->pairs[i].input));
}
