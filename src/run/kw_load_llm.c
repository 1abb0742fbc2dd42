/* kw_load_llm.c - LLM-serving inputs from XML (see kw_load_llm.h).
 *
 * Design choice: every element and attribute is optional and its absence
 * means "as before" (no interconnect: one device; no capacity: memory is not
 * a bound; no <moe>, no <layer>), so every file written before them loads
 * with the same figures. A <layer> is a block built from blocks: the cost
 * model, the knobs and the results need nothing new to tune a whole layer,
 * and fusion across the block boundary (the attention's residual with the
 * MLP's norm) is the fusion rules' ordinary "next operator". Rejected: a
 * second level of nesting in the cost model (every stage would learn it).
 *
 * The routing trace is a CSV file "expert,tokens" (a header, then one row
 * per expert 0..E-1 with the tokens it received in the recorded run); its
 * shares are what kw_moe.c draws expert loads from.
 */
#include "kw_load_llm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_input.h"
#include "kw_num.h"
#include "kw_tp.h"

#define KW_GIBI (1024.0 * 1024.0 * 1024.0)
#define KW_GIGA 1e9
#define KW_TRACE_LINE_MAX 256
/* a routing trace: a line per expert (at most KW_EXPERT_MAX); 1 MiB is
 * hundreds of times that, and bounds what a wrong file costs */
#define KW_ROUTE_MAX_BYTES (1u << 20)
#define KW_PATH_TEXT_MAX 1000

static const char *const kw_allreduce_names[] = {"ring", "tree"}; /* kw_allreduce_algo order */

const char *kw_load_llm_allreduce_name(int algo)
{
    return algo >= 0 && algo < 2 ? kw_allreduce_names[algo] : NULL;
}

int kw_load_llm_allreduce_parse(const char *name)
{
    for (int i = 0; i < 2; i++)
        if (strcmp(name, kw_allreduce_names[i]) == 0)
            return i;
    return -1;
}

int kw_load_llm_accel_elem(kw_accel *a, const xmlNode *n, const char *file, kw_xml_problems *p)
{
    if (!kw_xml_is(n, "interconnect"))
        return 0;
    long line = kw_xml_line(n);
    a->interconnect_line = (int)line;
    double bw = 0.0, lat = 0.0;
    if (kw_xml_attr_double(&bw, n, "link_gb_s", file, p) != 1 || !(bw > 0.0))
        kw_xml_problem(p, file, line, "<interconnect> needs link_gb_s > 0 (per-device link "
                       "bandwidth, one direction)");
    if (kw_xml_attr_double(&lat, n, "latency_us", file, p) != 1 || !(lat >= 0.0))
        kw_xml_problem(p, file, line, "<interconnect> needs latency_us >= 0 (per algorithm step)");
    a->link_bytes_per_s = bw * KW_GIGA;
    a->link_latency_us = lat;
    double base = 0.0;
    if (kw_xml_attr_double(&base, n, "base_us", file, p) == 1 && !(base >= 0.0))
        kw_xml_problem(p, file, line, "<interconnect> base_us must be >= 0 (fixed cost per "
                       "collective), not %g", base);
    a->link_base_us = base >= 0.0 ? base : 0.0;
    char algo[32] = "ring";
    kw_xml_attr_str(algo, sizeof algo, n, "algorithm", file, p);
    int ai = kw_load_llm_allreduce_parse(algo);
    if (ai < 0)
        kw_xml_problem(p, file, line, "all-reduce algorithm must be ring or tree, not '%s'", algo);
    a->allreduce_algo = ai < 0 ? 0 : ai;
    return 1;
}

void kw_load_llm_memory(kw_accel *a, const xmlNode *n, const char *file, kw_xml_problems *p)
{
    double gib = 0.0;
    if (kw_xml_attr_double(&gib, n, "dram_gib", file, p) == 1) {
        if (!(gib > 0.0))
            kw_xml_problem(p, file, kw_xml_line(n), "dram_gib must be positive, not %g", gib);
        else
            a->dram_capacity_bytes = (uint64_t)(gib * KW_GIBI);
    }
}

/* Read the routing trace into b->route_share; problems name the CSV's lines. */
static void kw_route_trace(kw_block *b, int experts, const char *path, const char *file, long line,
                           kw_xml_problems *p)
{
    /* the one safe open: a FIFO blocked fopen, /dev/zero was read forever */
    FILE *f = kw_input_fopen(path, KW_ROUTE_MAX_BYTES);
    if (!f) {
        kw_xml_problem(p, file, line, "cannot read the routing trace %s", kw_error_last());
        kw_error_clear();
        return;
    }
    char buf[KW_TRACE_LINE_MAX];
    long ln = 0;
    int seen[KW_EXPERT_MAX] = {0}, flags;
    size_t len;
    double tok[KW_EXPERT_MAX] = {0}, sum = 0.0;
    /* fgets split a long line in two (the error named the line after it) and
     * ended a line at a NUL byte (the rest dropped, the row accepted) */
    while (kw_input_line(f, buf, sizeof buf, &len, &flags) == 1) {
        ln++;
        if (flags & KW_INPUT_LINE_NUL) {
            kw_xml_problem(p, path, ln, "NUL byte in line (not a text file?)");
            continue;
        }
        if (flags & KW_INPUT_LINE_LONG) {
            kw_xml_problem(p, path, ln, "line longer than %d bytes", KW_TRACE_LINE_MAX - 1);
            continue;
        }
        if (ln == 1) {
            if (strcmp(buf + kw_input_bom(buf), "expert,tokens") != 0)
                kw_xml_problem(p, path, ln, "the routing trace's header must be 'expert,tokens'");
            continue;
        }
        if (!buf[0])
            continue;
        char *comma = strchr(buf, ',');
        long e = -1;
        double t = -1.0;
        if (comma) {
            *comma = '\0';
            if (kw_num_long(&e, buf, 0, experts - 1) != 0 || kw_num_double(&t, comma + 1) != 0)
                e = -1;
        }
        if (e < 0 || !(t >= 0.0) || t > 1e15) {
            kw_xml_problem(p, path, ln, "want 'expert,tokens' with expert 0..%d and tokens >= 0",
                           experts - 1);
            continue;
        }
        if (seen[e]++)
            kw_xml_problem(p, path, ln, "expert %ld is listed twice", e);
        tok[e] = t;
        sum += t;
    }
    fclose(f);
    if (ln == 0) { /* said "no row for expert 0" at no line */
        kw_xml_problem(p, path, 1, "empty file (want the header 'expert,tokens', then a row "
                       "per expert)");
        return;
    }
    for (int e = 0; e < experts; e++)
        if (!seen[e]) {
            kw_xml_problem(p, path, ln, "the routing trace has no row for expert %d", e);
            return;
        }
    if (!(sum > 0.0)) {
        kw_xml_problem(p, path, ln, "the routing trace routes no token");
        return;
    }
    b->n_route = experts;
    for (int e = 0; e < experts; e++)
        b->route_share[e] = (float)(tok[e] / sum);
}

void kw_load_llm_moe(kw_op *op, kw_block *b, const xmlNode *n, const char *file, kw_xml_problems *p)
{
    long line = kw_xml_line(n), v;
    static const char *const need[] = {"experts", "top_k", "n", "k"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!xmlHasProp((xmlNodePtr)n, BAD_CAST need[i]))
            kw_xml_problem(p, file, line, "<moe> needs the attribute '%s'", need[i]);
    if (kw_xml_attr_long(&v, n, "experts", 1, KW_EXPERT_MAX, file, p) == 1)
        op->experts = (int)v;
    if (kw_xml_attr_long(&v, n, "top_k", 1, KW_EXPERT_MAX, file, p) == 1)
        op->top_k = (int)v;
    if (kw_xml_attr_long(&v, n, "n", 1, 1L << 20, file, p) == 1)
        op->n = (uint64_t)v;
    if (kw_xml_attr_long(&v, n, "k", 1, 1L << 20, file, p) == 1)
        op->k = (uint64_t)v;
    if (kw_xml_attr_long(&v, n, "shared_experts", 0, KW_EXPERT_MAX, file, p) == 1)
        op->shared_experts = (int)v;
    if (kw_xml_attr_long(&v, n, "shared_n", 1, 1L << 20, file, p) == 1)
        op->shared_n = (uint64_t)v;
    op->gated = 1;
    op->weights = 1;
    kw_xml_attr_bool(&op->gated, n, "gated", file, p);
    if (op->experts > 0 && op->top_k > op->experts)
        kw_xml_problem(p, file, line, "moe '%s': top_k %d is more than its %d experts", op->name,
                       op->top_k, op->experts);
    if (op->shared_n && op->shared_experts == 0)
        kw_xml_problem(p, file, line, "moe '%s': shared_n without shared_experts", op->name);
    if (kw_xml_attr_double(&op->capacity_factor, n, "capacity_factor", file, p) == 1 &&
        !(op->capacity_factor > 0.0))
        kw_xml_problem(p, file, line, "capacity_factor must be positive, not %g",
                       op->capacity_factor);
    char routing[16] = "uniform";
    kw_xml_attr_str(routing, sizeof routing, n, "routing", file, p);
    int has_s = xmlHasProp((xmlNodePtr)n, BAD_CAST "zipf_s") != NULL;
    int has_trace = xmlHasProp((xmlNodePtr)n, BAD_CAST "trace") != NULL;
    if (strcmp(routing, "uniform") == 0) {
        op->routing = KW_ROUTE_UNIFORM;
    } else if (strcmp(routing, "zipf") == 0) {
        op->routing = KW_ROUTE_ZIPF;
        if (!has_s)
            kw_xml_problem(p, file, line, "moe '%s': routing=\"zipf\" needs zipf_s", op->name);
    } else if (strcmp(routing, "trace") == 0) {
        op->routing = KW_ROUTE_TRACE;
        if (!has_trace)
            kw_xml_problem(p, file, line, "moe '%s': routing=\"trace\" needs trace=\"FILE\"",
                           op->name);
    } else {
        kw_xml_problem(p, file, line, "routing must be uniform, zipf or trace, not '%s'", routing);
    }
    if (has_s && op->routing != KW_ROUTE_ZIPF)
        kw_xml_problem(p, file, line, "zipf_s applies to routing=\"zipf\" only");
    if (has_trace && op->routing != KW_ROUTE_TRACE)
        kw_xml_problem(p, file, line, "trace=\"...\" needs routing=\"trace\"");
    if (has_s && kw_xml_attr_double(&op->zipf_s, n, "zipf_s", file, p) == 1 &&
        !(op->zipf_s >= 0.0 && op->zipf_s <= 16.0))
        kw_xml_problem(p, file, line, "zipf_s must be in [0, 16], not %g", op->zipf_s);
    /* a token takes an expert at most once: top_k x the busiest share <= 1 */
    if (op->routing == KW_ROUTE_ZIPF && op->experts > 0 && op->top_k > 0) {
        double h = 0.0;
        for (int i = 1; i <= op->experts; i++)
            h += pow((double)i, -op->zipf_s);
        if (op->top_k / h > 1.0 + 1e-12)
            kw_xml_problem(p, file, line,
                           "moe '%s': Zipf(%g) gives expert 0 a share %.3g, times top_k %d above "
                           "1 (a token takes an expert at most once)",
                           op->name, op->zipf_s, 1.0 / h, op->top_k);
    }
    if (op->routing == KW_ROUTE_TRACE && has_trace && op->experts > 0) {
        if (b->n_route > 0)
            kw_xml_problem(p, file, line, "block '%s' has a second routing trace: one moe with "
                           "routing=\"trace\" per block", b->name);
        char rel[KW_PATH_TEXT_MAX + 1] = "", path[KW_PATH_MAX];
        kw_xml_attr_str(rel, sizeof rel, n, "trace", file, p);
        const char *slash = strrchr(file, '/');
        if (rel[0] == '/' || !slash)
            snprintf(path, sizeof path, "%s", rel);
        else if (snprintf(path, sizeof path, "%.*s/%s", (int)(slash - file), file, rel) >=
                 (int)sizeof path)
            path[0] = '\0';
        if (!path[0])
            kw_xml_problem(p, file, line, "routing trace path is too long");
        else
            kw_route_trace(b, op->experts, path, file, line, p);
    }
}

void kw_load_llm_layer(kw_workload *w, const xmlNode *n, const char *file, kw_xml_problems *p)
{
    long line = kw_xml_line(n);
    if (w->n_blocks == KW_BLOCK_MAX) {
        kw_xml_problem(p, file, line, "more than %d blocks (a layer is one)", KW_BLOCK_MAX);
        return;
    }
    kw_block *l = &w->blocks[w->n_blocks];
    memset(l, 0, sizeof *l);
    l->line = (int)line;
    l->layers = 1;
    kw_xml_attr_str(l->name, sizeof l->name, n, "name", file, p);
    long layers = 1;
    if (kw_xml_attr_long(&layers, n, "layers", 1, 4096, file, p) == 1)
        l->layers = (int)layers;
    for (int i = 0; i < w->n_blocks; i++)
        if (strcmp(w->blocks[i].name, l->name) == 0)
            kw_xml_problem(p, file, line, "block '%s' is already defined (line %d)", l->name,
                           w->blocks[i].line);
    char list[1024] = "";
    if (kw_xml_attr_str(list, sizeof list, n, "blocks", file, p) != 1) {
        kw_xml_problem(p, file, line, "<layer> needs the attribute 'blocks' (names of blocks "
                       "defined above, in execution order)");
        return;
    }
    int used = 0;
    for (char *save = NULL, *t = strtok_r(list, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
        int bi = -1;
        for (int i = 0; i < w->n_blocks; i++)
            if (strcmp(w->blocks[i].name, t) == 0)
                bi = i;
        if (bi < 0) {
            kw_xml_problem(p, file, line, "layer '%s' names '%s', which is not a block defined "
                           "above it", l->name, t);
            continue;
        }
        const kw_block *b = &w->blocks[bi];
        if (b->layers > 1) {
            kw_xml_problem(p, file, line, "layer '%s': '%s' is itself a layer", l->name, t);
            continue;
        }
        if (b->n_route > 0) { /* one routing trace per block */
            if (l->n_route > 0)
                kw_xml_problem(p, file, line, "layer '%s': two blocks with routing traces", l->name);
            l->n_route = b->n_route;
            memcpy(l->route_share, b->route_share, sizeof l->route_share);
        }
        for (int o = 0; o < b->n_ops; o++) {
            if (l->n_ops == KW_OP_MAX) {
                kw_xml_problem(p, file, line, "layer '%s' has more than %d operators", l->name,
                               KW_OP_MAX);
                return;
            }
            kw_op *op = &l->ops[l->n_ops++];
            *op = b->ops[o];
            /* BLOCK.OP: the per-block results of eval --kernels and the audit */
            char nm[KW_NAME_MAX];
            snprintf(nm, sizeof nm, "%.31s.%.31s", b->name, b->ops[o].name);
            memcpy(op->name, nm, sizeof nm);
            if (!op->group[0])
                continue;
            int g = -1;
            for (int i = 0; i < l->n_groups; i++)
                if (strcmp(l->groups[i], op->group) == 0)
                    g = i;
            if (g < 0) {
                if (l->n_groups == KW_GROUP_MAX) {
                    kw_xml_problem(p, file, line, "layer '%s' has more than %d tiling groups",
                                   l->name, KW_GROUP_MAX);
                    return;
                }
                memcpy(l->groups[l->n_groups++], op->group, sizeof op->group);
            }
        }
        used++;
    }
    char src[KW_SOURCE_MAX];
    snprintf(src, sizeof src, "a layer of %d block(s), repeated %d times", used, l->layers);
    memcpy(l->source, src, sizeof src);
    if (used == 0)
        kw_xml_problem(p, file, line, "layer '%s' has no blocks", l->name);
    w->n_blocks++;
}

void kw_load_llm_shape(kw_shape *s, const xmlNode *n, const char *file, kw_xml_problems *p)
{
    long line = kw_xml_line(n), v;
    char mode[16] = "static";
    kw_xml_attr_str(mode, sizeof mode, n, "batching", file, p);
    static const char *const cb_attrs[] = {"seq_max", "output_tokens", "output_tokens_max"};
    if (strcmp(mode, "continuous") != 0) {
        if (strcmp(mode, "static") != 0)
            kw_xml_problem(p, file, line, "batching must be static or continuous, not '%s'", mode);
        for (size_t i = 0; i < sizeof cb_attrs / sizeof cb_attrs[0]; i++)
            if (xmlHasProp((xmlNodePtr)n, BAD_CAST cb_attrs[i]))
                kw_xml_problem(p, file, line, "%s applies to batching=\"continuous\" only",
                               cb_attrs[i]);
        return;
    }
    s->continuous = 1;
    /* a request is one sequence: its prompt is seq (.. seq_max) tokens, then
     * output_tokens (.. output_tokens_max) tokens are generated */
    if (s->phase != KW_PHASE_PREFILL || s->batch != 1)
        kw_xml_problem(p, file, line, "continuous shape '%s' is written phase=\"prefill\" "
                       "batch=\"1\" with seq the prompt tokens (each request is one sequence)",
                       s->name);
    if (!xmlHasProp((xmlNodePtr)n, BAD_CAST "output_tokens"))
        kw_xml_problem(p, file, line, "continuous shape '%s' needs output_tokens", s->name);
    if (!xmlHasProp((xmlNodePtr)n, BAD_CAST "rate_per_s"))
        kw_xml_problem(p, file, line, "continuous shape '%s' needs rate_per_s (requests per second "
                       "per stream; load is a static batcher's utilisation)", s->name);
    if (s->arrival != KW_ARRIVAL_POISSON && xmlHasProp((xmlNodePtr)n, BAD_CAST "arrival")) {
        char arr[16] = "";
        kw_xml_attr_str(arr, sizeof arr, n, "arrival", file, p);
        if (strcmp(arr, "poisson") != 0)
            kw_xml_problem(p, file, line, "continuous shape '%s': arrivals are poisson", s->name);
    }
    s->seq_max = s->seq;
    if (kw_xml_attr_long(&v, n, "seq_max", 1, 1L << 20, file, p) == 1)
        s->seq_max = (int)v;
    if (kw_xml_attr_long(&v, n, "output_tokens", 1, 1L << 20, file, p) == 1)
        s->output_tokens = (int)v;
    s->output_max = s->output_tokens;
    if (kw_xml_attr_long(&v, n, "output_tokens_max", 1, 1L << 20, file, p) == 1)
        s->output_max = (int)v;
    if (s->seq_max < s->seq || s->output_max < s->output_tokens)
        kw_xml_problem(p, file, line, "shape '%s': seq_max and output_tokens_max must not be "
                       "below seq and output_tokens", s->name);
}
