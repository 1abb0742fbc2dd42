/* kw_runsum.c - the in-memory run summary every results writer reads, and
 * the one builder that makes it from a journal.
 *
 * Built incrementally (evaluations, refusals, steps in journal order), then
 * kw_runsum_finish() derives the accepted path, the final incumbent, the
 * ranking and the rejected list in one pass each. The builder
 * (kw_runsum_build, below) feeds every record to the journal reducer too and
 * takes each shape's best from it; the path follows the reducer's rule
 * (kw_reduce_path_len), so no rule of a shape's result lives here. Configurations are found by
 * id through a per-shape open-addressing table, so replaying a journal of n
 * evaluations costs O(n), not O(n^2); every derived list is a plain int array.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_grow.h"
#include "kw_idmap.h"
#include "kw_reduce.h" /* the journal reducer: statistics, best, the net path rule */
#include "kw_run.h"    /* kw_run_attr_get: the journal's attribute keys */
#include "kw_runsum.h"

/* The most configurations a live summary holds (kw_runsum_live: ~0.8 KB
 * each, so ~200 MB): an overnight OFAT journal of 57 MB holds 41,303; an
 * exhaustive run of a million (KW_RUN_EXHAUSTIVE_MAX) would need 0.8 GB per
 * shape, where the file's streamed summary keeps only what the files list.
 * Past it the live summary gives up and the files are made from the file. */
#define KW_RS_LIVE_CONFIGS_MAX 250000

/* Lineage recursion bound: a lineage deeper than every knob changed this many
 * times over is a damaged journal, not a run (verify reports it). */
#define KW_RS_LINEAGE_DEPTH 4096

int kw_runsum_new(kw_runsum **out, const kw_knobspace *ks, int n_metrics,
                  const char *const *metric_names, const char *primary)
{
    if (n_metrics <= 0 || n_metrics > KW_METRIC_MAX)
        return kw_error_set(KW_EINPUT, "a run needs 1 to %d metrics, not %d", KW_METRIC_MAX,
                            n_metrics);
    kw_runsum *rs = calloc(1, sizeof *rs);
    if (!rs)
        return kw_error_set(KW_ENOMEM, "out of memory for the run summary");
    rs->ks = *ks;
    rs->n_metrics = n_metrics;
    rs->primary = -1;
    for (int i = 0; i < n_metrics; i++) {
        snprintf(rs->metric_names[i], KW_NAME_MAX, "%s", metric_names[i]);
        if (primary && strcmp(metric_names[i], primary) == 0)
            rs->primary = i;
    }
    if (rs->primary < 0) {
        free(rs);
        return kw_error_set(KW_EINPUT, "the primary metric '%s' is not one the evaluator reports",
                            primary ? primary : "(none)");
    }
    rs->limits.min_effect_pct = 1.0;
    rs->limits.alpha = 0.05;
    *out = rs;
    return 0;
}

void kw_runsum_free(kw_runsum *rs)
{
    if (!rs)
        return;
    for (int i = 0; i < rs->n_shapes; i++) {
        kw_rs_shape *s = &rs->shapes[i];
        for (int c = 0; c < s->n_configs; c++) {
            free(s->configs[c].recheck);
            free(s->configs[c].sum);
        }
        free(s->configs);
        free(s->steps);
        free(s->hash);
        free(s->path);
        free(s->ranked);
        free(s->rejected);
        free(s->pairs);
    }
    free(rs->shapes);
    free(rs->port);
    free(rs->port_ok);
    free(rs);
}

int kw_runsum_find_shape(const kw_runsum *rs, const char *name)
{
    for (int i = 0; i < rs->n_shapes; i++)
        if (strcmp(rs->shapes[i].name, name) == 0)
            return i;
    return -1;
}

int kw_runsum_shape(kw_runsum *rs, const char *name)
{
    int i = kw_runsum_find_shape(rs, name);
    if (i >= 0)
        return i;
    if (strlen(name) >= KW_NAME_MAX)
        return kw_error_set(KW_EINPUT, "shape name '%.20s...' is too long", name);
    kw_rs_shape *ns = realloc(rs->shapes, (size_t)(rs->n_shapes + 1) * sizeof *ns);
    if (!ns)
        return kw_error_set(KW_ENOMEM, "out of memory for shapes");
    rs->shapes = ns;
    kw_rs_shape *s = &ns[rs->n_shapes];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->baseline = s->final = -1;
    s->verdict_rival = -1;
    return rs->n_shapes++;
}

int kw_runsum_metric(const kw_runsum *rs, const char *name)
{
    for (int i = 0; i < rs->n_metrics; i++)
        if (strcmp(rs->metric_names[i], name) == 0)
            return i;
    return -1;
}

double kw_runsum_value(const kw_runsum *rs, const kw_metrics *m, const char *name)
{
    int i = kw_runsum_metric(rs, name);
    return i >= 0 ? m->v[i] : NAN;
}

/* ---- id index ---- */

static uint32_t kw_rs_slot(uint64_t id, int size)
{
    /* ids are FNV hashes already; fold the high half in for tables < 2^32 */
    return (uint32_t)((id ^ (id >> 32)) & (uint64_t)(size - 1));
}

static int kw_rs_rehash(kw_rs_shape *s, int size)
{
    int *h = malloc((size_t)size * sizeof *h);
    if (!h)
        return kw_error_set(KW_ENOMEM, "out of memory for the configuration index");
    for (int i = 0; i < size; i++)
        h[i] = -1;
    for (int c = 0; c < s->n_configs; c++) {
        uint32_t k = kw_rs_slot(s->configs[c].id, size);
        while (h[k] >= 0)
            k = (k + 1) & (uint32_t)(size - 1);
        h[k] = c;
    }
    free(s->hash);
    s->hash = h;
    s->hash_size = size;
    return 0;
}

static int kw_rs_lookup(const kw_rs_shape *s, uint64_t id)
{
    if (s->hash_size == 0)
        return -1;
    uint32_t k = kw_rs_slot(id, s->hash_size);
    while (s->hash[k] >= 0) {
        if (s->configs[s->hash[k]].id == id)
            return s->hash[k];
        k = (k + 1) & (uint32_t)(s->hash_size - 1);
    }
    return -1;
}

int kw_runsum_find_config(const kw_runsum *rs, int shape, uint64_t id)
{
    if (shape < 0 || shape >= rs->n_shapes)
        return -1;
    return kw_rs_lookup(&rs->shapes[shape], id);
}

/* Config index of c (whose id is id) on s, adding an empty record when
 * absent. */
static int kw_rs_config_at(kw_rs_shape *s, const kw_cand *c, uint64_t id)
{
    int i = kw_rs_lookup(s, id);
    if (i >= 0)
        return i;
    if (s->n_configs == s->cap_configs) {
        int cap = s->cap_configs ? 2 * s->cap_configs : 64;
        kw_rs_config *nc = realloc(s->configs, (size_t)cap * sizeof *nc);
        if (!nc)
            return kw_error_set(KW_ENOMEM, "out of memory for configurations");
        s->configs = nc;
        s->cap_configs = cap;
    }
    kw_rs_config *cf = &s->configs[s->n_configs];
    memset(cf, 0, sizeof *cf);
    cf->cand = *c;
    cf->id = id;
    cf->constraint = -1;
    cf->step = -1;
    s->n_configs++;
    if (2 * s->n_configs > s->hash_size) {
        int rc = kw_rs_rehash(s, s->hash_size ? 2 * s->hash_size : 128);
        if (rc != 0) {
            s->n_configs--;
            return rc;
        }
    } else {
        uint32_t k = kw_rs_slot(id, s->hash_size);
        while (s->hash[k] >= 0)
            k = (k + 1) & (uint32_t)(s->hash_size - 1);
        s->hash[k] = s->n_configs - 1;
    }
    return s->n_configs - 1;
}

/* Config index of c on s, adding an empty record when absent. */
static int kw_rs_config_of(kw_runsum *rs, kw_rs_shape *s, const kw_cand *c)
{
    return kw_rs_config_at(s, c, kw_knobs_cand_id(&rs->ks, c));
}

int kw_runsum_add_eval(kw_runsum *rs, int shape, const kw_cand *c, const kw_metrics *m)
{
    if (shape < 0 || shape >= rs->n_shapes)
        return kw_error_set(KW_ESTATE, "evaluation for unknown shape index %d", shape);
    kw_rs_shape *s = &rs->shapes[shape];
    int i = kw_rs_config_of(rs, s, c);
    if (i < 0)
        return i;
    kw_rs_config *cf = &s->configs[i];
    /* the mean rule of kw_repstat (search/kw_reduce.h), for every metric:
     * summed in the order added (the journal's repetition order), divided by
     * the count; one repetition is its own mean, so a sum is kept only from
     * the second on */
    if (++cf->reps == 1) {
        for (int k = 0; k < rs->n_metrics; k++)
            cf->m.v[k] = m->v[k];
    } else {
        if (!cf->sum) {
            if (!(cf->sum = malloc((size_t)rs->n_metrics * sizeof *cf->sum))) {
                cf->reps--;
                return kw_error_set(KW_ENOMEM, "out of memory for repetitions");
            }
            for (int k = 0; k < rs->n_metrics; k++)
                cf->sum[k] = 0.0 + cf->m.v[k];
        }
        for (int k = 0; k < rs->n_metrics; k++) {
            cf->sum[k] += m->v[k];
            cf->m.v[k] = cf->sum[k] / cf->reps;
        }
    }
    if (cf->m.guards[0] == '\0' && m->guards[0] != '\0')
        snprintf(cf->m.guards, sizeof cf->m.guards, "%s", m->guards);
    if (cf->reps == 1)
        snprintf(cf->m.klass, sizeof cf->m.klass, "%s", m->klass);
    return 0;
}

int kw_runsum_add_refused(kw_runsum *rs, int shape, const kw_cand *c, int constraint)
{
    if (shape < 0 || shape >= rs->n_shapes)
        return kw_error_set(KW_ESTATE, "refusal for unknown shape index %d", shape);
    if (constraint < 0 || constraint >= rs->ks.n_constraints)
        return kw_error_set(KW_EINPUT, "constraint index %d is not in the space", constraint);
    kw_rs_shape *s = &rs->shapes[shape];
    int i = kw_rs_config_of(rs, s, c);
    if (i < 0)
        return i;
    kw_rs_config *cf = &s->configs[i];
    cf->constraint = constraint;
    snprintf(cf->m.guards, sizeof cf->m.guards, "constraint:%s",
             rs->ks.constraints[constraint].name);
    return 0;
}

int kw_runsum_add_pair(kw_runsum *rs, int shape, const kw_rs_pair *p)
{
    if (shape < 0 || shape >= rs->n_shapes)
        return kw_error_set(KW_ESTATE, "pair for unknown shape index %d", shape);
    kw_rs_shape *s = &rs->shapes[shape];
    if (s->n_pairs == s->cap_pairs) {
        int cap = s->cap_pairs ? 2 * s->cap_pairs : 16;
        kw_rs_pair *q = realloc(s->pairs, (size_t)cap * sizeof *q);
        if (!q)
            return kw_error_set(KW_ENOMEM, "out of memory for the pairs");
        s->pairs = q;
        s->cap_pairs = cap;
    }
    s->pairs[s->n_pairs++] = *p;
    return 0;
}

const kw_rs_pair *kw_runsum_find_pair(const kw_runsum *rs, int shape, int knob, int value)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    for (int i = s->n_pairs - 1; i >= 0; i--)
        if (s->pairs[i].knob == knob && s->pairs[i].value == value)
            return &s->pairs[i];
    return NULL;
}

/* A step; its ids given (ids: in's parent_id and id are its candidates'),
 * else computed: a candidate's id hashes every knob's name and value, the
 * largest cost of adding the 94,383 steps of a 57 MB journal. */
static int kw_rs_add_step(kw_runsum *rs, int shape, const kw_rs_step *in, int ids)
{
    if (shape < 0 || shape >= rs->n_shapes)
        return kw_error_set(KW_ESTATE, "step for unknown shape index %d", shape);
    kw_rs_shape *s = &rs->shapes[shape];
    if (s->n_steps == s->cap_steps) {
        int cap = s->cap_steps ? 2 * s->cap_steps : 64;
        kw_rs_step *ns = realloc(s->steps, (size_t)cap * sizeof *ns);
        if (!ns)
            return kw_error_set(KW_ENOMEM, "out of memory for steps");
        s->steps = ns;
        s->cap_steps = cap;
    }
    kw_rs_step st = *in;
    if (!ids) {
        st.parent_id = kw_knobs_cand_id(&rs->ks, &st.parent);
        st.id = kw_knobs_cand_id(&rs->ks, &st.cand);
    }
    st.knob = -1;
    st.n_changed = 0;
    for (int k = 0; k < rs->ks.n_knobs; k++)
        if (st.parent.v[k] != st.cand.v[k]) {
            if (st.knob < 0)
                st.knob = k;
            st.n_changed++;
        }
    if (st.num <= 0)
        st.num = s->n_steps + 1;
    st.before = kw_rs_lookup(s, st.parent_id);
    st.after = kw_rs_lookup(s, st.id);
    if (st.after < 0 && st.decision == KW_DECIDE_CONSTRAINT) {
        int c = kw_knobs_cand_violates(&rs->ks, &st.cand);
        if (c >= 0) {
            int rc = kw_runsum_add_refused(rs, shape, &st.cand, c);
            if (rc != 0)
                return rc;
            st.after = kw_rs_lookup(s, st.id);
        }
    }
    s->steps[s->n_steps] = st;
    if (st.after >= 0 && s->configs[st.after].step < 0)
        s->configs[st.after].step = s->n_steps;
    s->n_steps++;
    return 0;
}

int kw_runsum_add_step(kw_runsum *rs, int shape, const kw_rs_step *in)
{
    return kw_rs_add_step(rs, shape, in, 0);
}

/* ---- derived views ---- */

double kw_runsum_step_effect(const kw_runsum *rs, int shape, int step, int metric)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    const kw_rs_step *st = &s->steps[step];
    if (st->before < 0 || st->after < 0 || metric < 0)
        return NAN;
    const kw_rs_config *b = &s->configs[st->before], *a = &s->configs[st->after];
    if (b->reps == 0 || a->reps == 0 || b->m.v[metric] == 0.0)
        return NAN;
    return (a->m.v[metric] - b->m.v[metric]) / b->m.v[metric] * 100.0;
}

static int kw_rs_passes(const kw_rs_config *c)
{
    return c->reps > 0 && c->constraint < 0 && c->m.guards[0] == '\0';
}

static int kw_rs_changed(const kw_runsum *rs, const kw_rs_shape *s, const kw_rs_config *c)
{
    if (s->baseline < 0)
        return 0;
    return kw_knobs_cand_distance(&rs->ks, &s->configs[s->baseline].cand, &c->cand);
}

/* qsort has no context argument; ranking is single-threaded, so a file-scope
 * pointer is the smallest honest way to pass it. */
static const kw_runsum *kw_rs_sort_rs;
static const kw_rs_shape *kw_rs_sort_shape;

/* The ranking order of two guard-passing configurations other than the
 * recommendation: the primary metric, then fewer knobs changed from the
 * baseline, then id (< 0: a first, 0, > 0). kw_runsum_finish sorts by it, and
 * the listed builder picks the top of the ranking by it. */
static int kw_runsum_rank_order(double primary_a, int changed_a, uint64_t id_a, double primary_b,
                                int changed_b, uint64_t id_b)
{
    if (primary_a < primary_b)
        return -1;
    if (primary_a > primary_b)
        return 1;
    if (changed_a != changed_b)
        return changed_a < changed_b ? -1 : 1;
    return id_a < id_b ? -1 : id_a > id_b;
}

int kw_runsum_reject_order(int has_a, double v_a, uint64_t id_a, int has_b, double v_b,
                           uint64_t id_b)
{
    if (has_a != has_b)
        return has_a ? -1 : 1;
    if (has_a && v_a != v_b)
        return v_a < v_b ? -1 : 1;
    return id_a < id_b ? -1 : id_a > id_b;
}

static int kw_rs_rank_cmp(const void *pa, const void *pb)
{
    const kw_rs_config *a = &kw_rs_sort_shape->configs[*(const int *)pa];
    const kw_rs_config *b = &kw_rs_sort_shape->configs[*(const int *)pb];
    return kw_runsum_rank_order(a->m.v[kw_rs_sort_rs->primary],
                            kw_rs_changed(kw_rs_sort_rs, kw_rs_sort_shape, a), a->id,
                            b->m.v[kw_rs_sort_rs->primary],
                            kw_rs_changed(kw_rs_sort_rs, kw_rs_sort_shape, b), b->id);
}

static int kw_rs_finish_shape(kw_runsum *rs, kw_rs_shape *s)
{
    kw_cand base;
    kw_knobs_cand_baseline(&base, &rs->ks);
    s->baseline = kw_rs_lookup(s, kw_knobs_cand_id(&rs->ks, &base));
    free(s->path);
    free(s->ranked);
    free(s->rejected);
    s->path = s->ranked = s->rejected = NULL;
    s->n_path = s->n_ranked = s->n_rejected = 0;
    size_t np = (size_t)(s->n_steps > 0 ? s->n_steps : 1);
    size_t nc = (size_t)(s->n_configs > 0 ? s->n_configs : 1);
    s->path = malloc(np * sizeof *s->path);
    s->ranked = malloc(nc * sizeof *s->ranked);
    s->rejected = malloc(nc * sizeof *s->rejected);
    uint64_t *moves = malloc(np * sizeof *moves);
    if (!s->path || !s->ranked || !s->rejected || !moves) {
        free(moves);
        return kw_error_set(KW_ENOMEM, "out of memory ranking shape %s", s->name);
    }

    /* The recommendation is the shape's best (the journal reducer's, set by
     * the builder); a shape without one (a summary made by hand with no
     * steps) takes the top of its ranking, below. */
    s->final = s->has_best ? kw_rs_lookup(s, s->best_id) : -1;
    /* The accepted path, by the reducer's one rule (kw_reduce_path_len):
     * the moving steps in journal order up to the last that stands on the
     * recommendation. */
    for (int i = 0; i < s->n_steps; i++)
        if (kw_journal_decision_taken(s->steps[i].decision)) {
            moves[s->n_path] = s->steps[i].id;
            s->path[s->n_path++] = i;
        }
    s->n_path = s->final >= 0 ? (int)kw_reduce_path_len(moves, (size_t)s->n_path, sizeof *moves,
                                                         0, s->configs[s->final].id)
                              : 0;
    free(moves);

    for (int c = 0; c < s->n_configs; c++) {
        if (kw_rs_passes(&s->configs[c])) {
            if (c != s->final)
                s->ranked[s->n_ranked++] = c;
        } else {
            s->rejected[s->n_rejected++] = c;
        }
    }
    kw_rs_sort_rs = rs;
    kw_rs_sort_shape = s;
    qsort(s->ranked, (size_t)s->n_ranked, sizeof *s->ranked, kw_rs_rank_cmp);
    if (s->final >= 0 && kw_rs_passes(&s->configs[s->final])) {
        memmove(s->ranked + 1, s->ranked, (size_t)s->n_ranked * sizeof *s->ranked);
        s->ranked[0] = s->final;
        s->n_ranked++;
    } else if (s->final < 0 && s->n_ranked > 0) {
        s->final = s->ranked[0];
    }
    /* Rejected configs are listed in the order they were first evaluated
     * (configs are stored in that order already). */
    if (!rs->partial) {
        s->evals_total = s->remeasured;
        for (int c = 0; c < s->n_configs; c++)
            s->evals_total += s->configs[c].reps;
        s->configs_total = s->n_configs;
        s->ranked_total = s->n_ranked;
        s->rejected_total = s->n_rejected;
    }
    return 0;
}

void kw_runsum_set_best(kw_runsum *rs, int shape, uint64_t id)
{
    if (shape < 0 || shape >= rs->n_shapes)
        return;
    rs->shapes[shape].has_best = 1;
    rs->shapes[shape].best_id = id;
}

int kw_runsum_finish(kw_runsum *rs)
{
    for (int i = 0; i < rs->n_shapes; i++) {
        int rc = kw_rs_finish_shape(rs, &rs->shapes[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------- journal */


/* A configuration offered to a listing's top (kw_runsum_build_listed). */
typedef struct kw_rs_key {
    int has;  /* measured: repetitions and a finite primary */
    double v; /* the primary */
    uint64_t id;
    int c;    /* knobs changed from the baseline (the ranked top) */
} kw_rs_key;

static int kw_rs_key_cmp(const void *pa, const void *pb)
{
    const kw_rs_key *a = pa, *b = pb;
    return kw_runsum_reject_order(a->has, a->v, a->id, b->has, b->v, b->id);
}

/* Input hashes are recorded by name; accept the names tune may use. */
static int kw_input_slot(const char *name)
{
    if (strstr(name, "space"))
        return 0;
    if (strstr(name, "accel"))
        return 1;
    if (strstr(name, "workload"))
        return 2;
    return -1;
}

/* Summary shape index of every evaluator shape of j (-1: not tuned), in the
 * order kw_runsum_build adds the tuned shapes. Returns the number of tuned shapes. */
static int kw_rs_map(int map[KW_JOURNAL_SHAPE_MAX], const kw_journal *j)
{
    const kw_jheader *h = &j->h;
    int n = 0;
    for (int i = 0; i < KW_JOURNAL_SHAPE_MAX; i++)
        map[i] = -1;
    for (int t = 0; t < h->n_tuned; t++) {
        int es = h->tuned[t];
        if (es < 0 || es >= h->n_shapes || map[es] >= 0)
            continue;
        /* kw_runsum_shape merges tuned shapes of the same name */
        int same = -1;
        for (int u = 0; u < t; u++)
            if (h->tuned[u] >= 0 && h->tuned[u] < h->n_shapes && map[h->tuned[u]] >= 0 &&
                strcmp(h->shape_names[h->tuned[u]], h->shape_names[es]) == 0)
                same = map[h->tuned[u]];
        map[es] = same >= 0 ? same : n++;
    }
    return n;
}

static int kw_in(int es, const int *map)
{
    return es >= 0 && es < KW_JOURNAL_SHAPE_MAX && map[es] >= 0;
}

/* A new summary from a journal's header (the records come next): run info,
 * limits, the tuned shapes; map[] gets every evaluator shape's summary shape
 * (-1: not tuned). */
static int kw_rs_begin(kw_runsum **out, int map[KW_JOURNAL_SHAPE_MAX], const kw_journal *j)
{
    const kw_jheader *h = &j->h;
    const char *names[KW_METRIC_MAX];
    for (int i = 0; i < h->n_metrics; i++)
        names[i] = h->metric_names[i];
    kw_runsum *rs = NULL;
    int rc = kw_runsum_new(&rs, &h->space, h->n_metrics, names, h->metric);
    if (rc != 0)
        return rc;
    kw_rs_info *in = &rs->info;
    const char *slash = strrchr(j->path, '/');
    if (slash) {
        /* the run id is the run folder's name */
        const char *start = slash;
        while (start > j->path && start[-1] != '/')
            start--;
        snprintf(in->run_id, sizeof in->run_id, "%.*s", (int)(slash - start), start);
    }
    if (in->run_id[0] == '\0')
        snprintf(in->run_id, sizeof in->run_id, "run");
    snprintf(in->version, sizeof in->version, "%s", h->version);
    snprintf(in->strategy, sizeof in->strategy, "%s", kw_journal_strategy_name(h->strategy));
    in->seed = h->seed;
    in->budget = h->budget;
    in->noisy = h->noisy;
    const char *a;
    if ((a = kw_run_attr_get(j, KW_RUN_OWNER)) != NULL)
        snprintf(in->owner, sizeof in->owner, "%s", a);
    if ((a = kw_run_attr_get(j, KW_RUN_SPACE)) != NULL)
        snprintf(in->space_path, sizeof in->space_path, "%s", a);
    in->measured = (a = kw_run_attr_get(j, KW_RUN_EVALUATOR)) != NULL && a[0] != '\0';
    for (int i = 0; i < 3; i++)
        in->input_hash[i][0] = '\0';
    for (int i = 0; i < h->n_inputs; i++) {
        int slot = kw_input_slot(h->inputs[i].name);
        if (slot >= 0 && strlen(h->inputs[i].hash) == 16)
            snprintf(in->input_hash[slot], 17, "%s", h->inputs[i].hash);
    }
    rs->limits.min_effect_pct = h->min_effect_pct;
    rs->limits.alpha = h->alpha;

    /* summary shape index of every evaluator shape (-1: not tuned) */
    for (int i = 0; i < KW_JOURNAL_SHAPE_MAX; i++)
        map[i] = -1;
    for (int t = 0; t < h->n_tuned; t++) {
        int es = h->tuned[t];
        if (es < 0 || es >= h->n_shapes)
            continue;
        if ((rc = kw_runsum_shape(rs, h->shape_names[es])) < 0)
            goto fail;
        map[es] = rc;
    }
    *out = rs;
    return 0;
fail:
    kw_runsum_free(rs);
    return rc;
}

/* One evaluation into the summary (its shape tuned). */
static int kw_rs_add_jeval(kw_runsum *rs, const int *map, const kw_jeval *e)
{
    kw_metrics m;
    memset(&m, 0, sizeof m);
    for (int k = 0; k < rs->n_metrics; k++)
        m.v[k] = e->m ? e->m[k] : NAN;
    snprintf(m.guards, sizeof m.guards, "%s", e->guards ? e->guards : "");
    if (e->rc != 0 && m.guards[0] == '\0')
        snprintf(m.guards, sizeof m.guards, "error");
    snprintf(m.klass, sizeof m.klass, "%s", e->klass ? e->klass : "");
    return kw_runsum_add_eval(rs, map[e->shape], &e->cand, &m);
}

/* A step record as the summary holds it. */
static void kw_rs_step_of(kw_rs_step *st, const kw_jstep *t)
{
    memset(st, 0, sizeof *st);
    st->seq = t->record;
    st->num = t->step;
    st->parent = t->parent;
    st->cand = t->cand;
    st->decision = t->decision;
    st->p_value = t->p_value;
    snprintf(st->phase, sizeof st->phase, "%s", kw_journal_step_phase_name(t->phase));
    snprintf(st->reason, sizeof st->reason, "%s", t->reason ? t->reason : "");
}

/* ---- the tops of the listings ---- */

static int kw_rank_key_cmp(const void *pa, const void *pb)
{
    const kw_rs_key *a = pa, *b = pb;
    return kw_runsum_rank_order(a->v, a->c, a->id, b->v, b->c, b->id);
}

/* Offer k to a sorted top of at most cap entries. */
static void kw_top_offer(kw_rs_key *top, int *n, int cap, const kw_rs_key *k,
                         int (*cmp)(const void *, const void *))
{
    if (cap <= 0 || (*n == cap && cmp(k, &top[*n - 1]) >= 0))
        return;
    int i = *n < cap ? *n : *n - 1;
    while (i > 0 && cmp(k, &top[i - 1]) < 0) {
        top[i] = top[i - 1];
        i--;
    }
    top[i] = *k;
    if (*n < cap)
        (*n)++;
}

/* ---- the one builder of a run summary ----
 *
 * Every summary of a journal is built here, from its body records one at a
 * time in journal order, each of them also fed to the journal reducer
 * (search/kw_reduce.h), which alone says each shape's statistics, best
 * configuration and net path. Two ways to read, one code:
 * - every configuration (kw_runsum_build: verify, audit, report,
 *   recommend): one walk of the loaded journal, every record into the
 *   summary;
 * - what the result files list (kw_runsum_build_listed: tune's results):
 *   the journal file is streamed twice (kw_journal_scan, never loaded).
 *   Read 1 feeds the reducer, the refusals, the baseline's presence and the
 *   configurations steps name; the tops of the ranked and rejected listings
 *   are then taken from the reducer's configurations (its mean, its guard
 *   rule). Read 2 replays only the kept configurations into the summary.
 *   Memory: the reducer, the tops, the kept configurations, the steps and
 *   the refused ids; no summary entry per evaluation.
 * Either way the summary gets, in this order, every (kept) evaluation, then
 * every (kept) refusal, then every step, so a step finds the configurations
 * it names, then each tuned shape's best from the reducer. */

typedef struct kw_sshape {
    long evals, configs, ranked;
    kw_rs_key *top_r, *top_x;
    int n_r, n_x;
    /* the ranked top as it is when the baseline is never seen (knobs changed
     * count as 0) */
    kw_rs_key *top_r0;
    int n_r0;
    kw_idmap refused, keep;
    kw_idmap picked; /* what kw_build_keep adds to keep: the tops, the
                      * baseline, the best (a live summary makes it anew
                      * each time; keep only grows with the records) */
    kw_cand base;
    uint64_t base_id;
    int base_seen;
} kw_sshape;

typedef struct kw_sstep {
    int es;
    kw_rs_step st;
} kw_sstep;

typedef struct kw_sviol {
    int es;
    kw_cand cand;
} kw_sviol;

typedef struct kw_spair {
    int es;
    kw_rs_pair p;
} kw_spair;

typedef struct kw_build {
    const kw_jheader *h;    /* the journal's header (set by kw_build_init) */
    kw_spair *pairs;
    size_t n_pairs, cap_pairs;
    int ready;
    int map[KW_JOURNAL_SHAPE_MAX];
    int n;                  /* summary shapes */
    int listed;             /* 1: only what the files list (two reads), 0: everything */
    int live;               /* 1: a live summary (kw_runsum_live): one read, as the
                             * journal grows; rs holds every configuration */
    int keep_all;           /* live, while records come in: every record into rs */
    long live_configs;      /* live: configurations in rs */
    int top_ranked, top_rejected; /* listed: the listings' lengths */
    int read;               /* 1 or 2 (listed), 0 (everything: one read) */
    long limit;             /* records of read 1: read 2 stops there */
    int stopped;
    kw_sshape *ps;
    kw_reduce *red;         /* fed every record of the first read */
    kw_runsum *rs;
    kw_sstep *steps;
    size_t n_steps, cap_steps;
    kw_sviol *viols;
    size_t n_viols, cap_viols;
} kw_build;

static int kw_build_oom(void)
{
    return kw_error_set(KW_ENOMEM, "out of memory replaying the journal");
}

/* Read 1 of a listed summary: refusals, the baseline's presence, the
 * configurations steps name. */
static int kw_build_scout(kw_build *B, const kw_jrec *r)
{
    const kw_jheader *h = B->h;
    switch (r->type) {
    case 'V': {
        const kw_jviol *v = &r->v;
        if (!kw_in(v->shape, B->map) || kw_knobs_cand_violates(&h->space, &v->cand) < 0)
            return 0;
        kw_sshape *p = &B->ps[B->map[v->shape]];
        uint64_t id = kw_knobs_cand_id(&h->space, &v->cand);
        p->base_seen |= id == p->base_id;
        return kw_idmap_add(&p->refused, id, 0, NULL);
    }
    case 'E': {
        const kw_jeval *e = &r->e;
        if (kw_in(e->shape, B->map) &&
            kw_knobs_cand_id(&h->space, &e->cand) == B->ps[B->map[e->shape]].base_id)
            B->ps[B->map[e->shape]].base_seen = 1;
        return 0;
    }
    case 'T': {
        const kw_jstep *t = &r->t;
        if (!kw_in(t->shape, B->map))
            return 0;
        kw_sshape *p = &B->ps[B->map[t->shape]];
        uint64_t cid = kw_knobs_cand_id(&h->space, &t->cand);
        if (t->decision == KW_DECIDE_CONSTRAINT && cid == p->base_id &&
            kw_knobs_cand_violates(&h->space, &t->cand) >= 0)
            p->base_seen = 1;
        int rc = kw_idmap_add(&p->keep, kw_knobs_cand_id(&h->space, &t->parent), 0, NULL);
        return rc != 0 ? rc : kw_idmap_add(&p->keep, cid, 0, NULL);
    }
    default:
        return 0;
    }
}

/* Is the configuration (evaluator shape es, id) one the summary holds? */
static int kw_build_keeps(const kw_build *B, int es, uint64_t id)
{
    const kw_sshape *p = B->listed ? &B->ps[B->map[es]] : NULL;
    return !p || B->keep_all || kw_idmap_has(&p->keep, id) || kw_idmap_has(&p->picked, id);
}

/* A record into the summary: evaluations at once, refusals and steps
 * buffered until every evaluation is in. */
static int kw_build_replay(kw_build *B, const kw_jrec *r)
{
    const kw_jheader *h = B->h;
    switch (r->type) {
    case 'E': {
        const kw_jeval *e = &r->e;
        if (!kw_in(e->shape, B->map))
            return 0;
        /* the one mean rule (search/kw_reduce.h): a config's figures are over
         * its repetitions 0..repeats-1; the re-measured blocks (the control's,
         * which decide steps, and after the shape's D record the pairing's,
         * figures of their pairs) enter no figure and count as evaluations only,
         * every one of them, whether or not a listed summary keeps the config */
        if (e->rep >= h->repeats) {
            B->rs->shapes[B->map[e->shape]].remeasured++;
            return 0;
        }
        if (!kw_build_keeps(B, e->shape, kw_knobs_cand_id(&h->space, &e->cand)))
            return 0;
        return kw_rs_add_jeval(B->rs, B->map, e);
    }
    case 'N': {
        const kw_jpair *x = &r->n;
        if (!kw_in(x->shape, B->map))
            return 0;
        kw_spair *np = kw_grow_array(B->pairs, &B->cap_pairs, B->n_pairs, sizeof *B->pairs);
        if (!np)
            return kw_build_oom();
        B->pairs = np;
        kw_spair *q = &B->pairs[B->n_pairs++];
        memset(q, 0, sizeof *q);
        q->es = x->shape;
        q->p.knob = x->knob;
        q->p.value = x->value;
        q->p.nb_id = x->nb_id;
        q->p.n = x->n;
        q->p.delta_pct = x->delta_pct;
        q->p.lo_pct = x->lo_pct;
        q->p.hi_pct = x->hi_pct;
        snprintf(q->p.guards, sizeof q->p.guards, "%s", x->guards ? x->guards : "");
        return 0;
    }
    case 'V': {
        const kw_jviol *v = &r->v;
        if (!kw_in(v->shape, B->map) ||
            !kw_build_keeps(B, v->shape, kw_knobs_cand_id(&h->space, &v->cand)))
            return 0;
        kw_sviol *nv = kw_grow_array(B->viols, &B->cap_viols, B->n_viols, sizeof *B->viols);
        if (!nv)
            return kw_build_oom();
        B->viols = nv;
        B->viols[B->n_viols].es = v->shape;
        B->viols[B->n_viols++].cand = v->cand;
        return 0;
    }
    case 'T': {
        const kw_jstep *t = &r->t;
        if (!kw_in(t->shape, B->map))
            return 0;
        kw_sstep *ns = kw_grow_array(B->steps, &B->cap_steps, B->n_steps, sizeof *B->steps);
        if (!ns)
            return kw_build_oom();
        B->steps = ns;
        kw_sstep *s = &B->steps[B->n_steps++];
        s->es = t->shape;
        kw_rs_step_of(&s->st, t);
        /* the ids now, once (a live summary: during the run, not at the stop) */
        s->st.parent_id = kw_knobs_cand_id(&h->space, &t->parent);
        s->st.id = kw_knobs_cand_id(&h->space, &t->cand);
        return 0;
    }
    default:
        return 0;
    }
}

/* Set up from the journal's header (its first record, or its end). */
static int kw_build_init(kw_build *B, const kw_journal *j)
{
    const kw_jheader *h = &j->h;
    B->ready = 1;
    B->h = h;
    B->n = kw_rs_map(B->map, j);
    int rc = kw_reduce_new(&B->red, h);
    if (rc == 0)
        rc = kw_rs_begin(&B->rs, B->map, j);
    if (rc != 0 || !B->listed)
        return rc;
    B->ps = calloc((size_t)(B->n > 0 ? B->n : 1), sizeof *B->ps);
    if (!B->ps)
        return kw_build_oom();
    for (int i = 0; i < B->n; i++) {
        kw_sshape *p = &B->ps[i];
        p->top_r = malloc((size_t)(B->top_ranked + 2) * sizeof *p->top_r);
        p->top_r0 = malloc((size_t)(B->top_ranked + 2) * sizeof *p->top_r0);
        p->top_x = malloc((size_t)(B->top_rejected + 1) * sizeof *p->top_x);
        if (!p->top_r || !p->top_r0 || !p->top_x)
            return kw_build_oom();
        kw_knobs_cand_baseline(&p->base, &h->space);
        p->base_id = kw_knobs_cand_id(&h->space, &p->base);
    }
    return 0;
}

static int kw_build_fn(void *ctx, const kw_journal *j, const kw_jrec *r)
{
    kw_build *B = ctx;
    if (!B->ready) {
        int rc = kw_build_init(B, j);
        if (rc != 0)
            return rc;
    }
    if (B->live) {
        /* read 1 and read 2 at once: the reducer and the scout as read 1,
         * every record into rs; kw_runsum_live_summary keeps what read 2
         * would have kept */
        int rc = kw_reduce_add(B->red, r);
        if (rc == 0)
            rc = kw_build_scout(B, r);
        if (rc != 0 || r->type != 'E' || !kw_in(r->e.shape, B->map))
            return rc == 0 ? kw_build_replay(B, r) : rc;
        int had = B->rs->shapes[B->map[r->e.shape]].n_configs;
        if ((rc = kw_build_replay(B, r)) != 0)
            return rc;
        B->live_configs += B->rs->shapes[B->map[r->e.shape]].n_configs - had;
        if (B->live_configs > KW_RS_LIVE_CONFIGS_MAX)
            return kw_error_set(KW_ENOMEM, "the live summary holds %d configurations: the result "
                                "files are made from the journal file instead",
                                KW_RS_LIVE_CONFIGS_MAX);
        return 0;
    }
    if (B->limit > 0 && r->record > B->limit) {
        B->stopped = 1; /* the journal grew after read 1: read what read 1 read */
        return KW_ESTATE;
    }
    if (B->read == 2)
        return kw_build_replay(B, r);
    int rc = kw_reduce_add(B->red, r);
    if (rc == 0)
        rc = B->read == 1 ? kw_build_scout(B, r) : kw_build_replay(B, r);
    return rc;
}

/* One read of the records: the loaded journal j, or the file at path
 * (*jout then gets its header, no records). */
static int kw_build_read(kw_build *B, const kw_journal *j, const char *path, kw_journal **jout)
{
    if (j) {
        int rc = kw_journal_each(j, kw_build_fn, B);
        return rc == 0 && !B->ready ? kw_build_init(B, j) : rc;
    }
    kw_journal *sj = NULL;
    B->stopped = 0;
    int rc = kw_journal_scan(&sj, path, kw_build_fn, B);
    if (rc != 0 && B->stopped) {
        rc = 0;
        kw_error_clear();
    }
    if (rc == 0 && !B->ready)
        rc = kw_build_init(B, sj);
    if (rc == 0 && jout && !*jout) {
        *jout = sj;
        sj = NULL;
    }
    kw_journal_free(sj);
    return rc;
}

/* One configuration of the reducer offered to the tops of its shape. */
typedef struct kw_build_top {
    const kw_build *B;
    kw_sshape *p;
} kw_build_top;

static int kw_build_offer(void *ctx, const kw_rconfig *c)
{
    kw_build_top *t = ctx;
    kw_sshape *p = t->p;
    p->configs++;
    if (c->ok && !kw_idmap_has(&p->refused, c->id)) {
        p->ranked++;
        kw_rs_key k = {1, c->mean, c->id,
                       kw_knobs_cand_distance(&t->B->h->space, &p->base, c->cand)};
        kw_top_offer(p->top_r, &p->n_r, t->B->top_ranked + 1, &k, kw_rank_key_cmp);
        k.c = 0;
        kw_top_offer(p->top_r0, &p->n_r0, t->B->top_ranked + 1, &k, kw_rank_key_cmp);
    } else {
        kw_rs_key k = {isfinite(c->mean), isfinite(c->mean) ? c->mean : 0.0, c->id, 0};
        kw_top_offer(p->top_x, &p->n_x, t->B->top_rejected, &k, kw_rs_key_cmp);
    }
    return 0;
}

/* After read 1: what to keep of summary shape i (evaluator shape es): the
 * tops, the baseline, the recommendation (the configurations steps name are
 * in keep already). */
static int kw_build_keep(kw_build *B, int i, int es, uint64_t best)
{
    kw_sshape *p = &B->ps[i];
    kw_build_top t = {B, p};
    kw_jresult r;
    int rc = kw_reduce_result(&r, B->red, es);
    p->evals += r.evals;
    kw_journal_result_clear(&r);
    if (rc == 0)
        rc = kw_reduce_each(B->red, es, kw_build_offer, &t);
    if (rc != 0)
        return rc;
    if (!p->base_seen) {
        kw_rs_key *x = p->top_r;
        p->top_r = p->top_r0;
        p->top_r0 = x;
        p->n_r = p->n_r0;
    }
    /* refused draws never evaluated are rejected configurations too (in slot order:
     * kw_rs_key_cmp orders the tops totally, by id last) */
    for (size_t k = 0; k < p->refused.cap; k++) {
        kw_jstats st;
        if (!p->refused.used[k] || kw_reduce_stats(&st, B->red, es, p->refused.id[k]) == 0)
            continue;
        p->configs++;
        kw_rs_key key = {0, 0.0, p->refused.id[k], 0};
        kw_top_offer(p->top_x, &p->n_x, B->top_rejected, &key, kw_rs_key_cmp);
    }
    kw_error_clear();
    rc = kw_idmap_add(&p->picked, p->base_id, 0, NULL);
    for (int k = 0; k < p->n_r && rc == 0; k++)
        rc = kw_idmap_add(&p->picked, p->top_r[k].id, 0, NULL);
    for (int k = 0; k < p->n_x && rc == 0; k++)
        rc = kw_idmap_add(&p->picked, p->top_x[k].id, 0, NULL);
    return rc == 0 ? kw_idmap_add(&p->picked, best, 0, NULL) : rc;
}

/* The summary's counts over every configuration, for a listed summary
 * (kw_runsum_finish counts only what it holds). */
static void kw_build_totals(kw_build *B, kw_runsum *rs)
{
    rs->partial = 1;
    for (int i = 0; i < rs->n_shapes && i < B->n; i++) {
        kw_rs_shape *sh = &rs->shapes[i];
        sh->evals_total = B->ps[i].evals;
        long only_steps = 0;
        for (int c = 0; c < sh->n_configs; c++)
            only_steps += sh->configs[c].reps == 0 &&
                          !kw_idmap_has(&B->ps[i].refused, sh->configs[c].id);
        sh->configs_total = B->ps[i].configs + only_steps;
        sh->ranked_total = B->ps[i].ranked;
        sh->rejected_total = sh->configs_total - sh->ranked_total;
    }
}

static void kw_build_free(kw_build *B)
{
    for (int i = 0; B->ps && i < B->n; i++) {
        free(B->ps[i].top_r);
        free(B->ps[i].top_r0);
        free(B->ps[i].top_x);
        kw_idmap_free(&B->ps[i].refused);
        kw_idmap_free(&B->ps[i].keep);
        kw_idmap_free(&B->ps[i].picked);
    }
    free(B->ps);
    kw_reduce_free(B->red);
    kw_runsum_free(B->rs);
    free(B->steps);
    free(B->viols);
    free(B->pairs);
}

/* The evaluator shapes with a summary shape, each once, in tuning order,
 * and each one's best from the reducer. Returns 0 or a negative code. */
static int kw_build_tuned(const kw_build *B, int *n_tuned, int tuned[KW_JOURNAL_SHAPE_MAX],
                          uint64_t best[KW_JOURNAL_SHAPE_MAX], unsigned char done[KW_JOURNAL_SHAPE_MAX])
{
    const kw_jheader *h = B->h;
    unsigned char seen[KW_JOURNAL_SHAPE_MAX] = {0};
    int rc = 0;
    *n_tuned = 0;
    for (int t = 0; t < h->n_tuned; t++)
        if (kw_in(h->tuned[t], B->map) && !seen[h->tuned[t]]) {
            seen[h->tuned[t]] = 1;
            tuned[(*n_tuned)++] = h->tuned[t];
        }
    for (int t = 0; t < *n_tuned && rc == 0; t++) {
        kw_jresult r;
        if ((rc = kw_reduce_result(&r, B->red, tuned[t])) == 0) {
            best[t] = r.best_id;
            done[t] = (unsigned char)(r.done != 0);
        }
        kw_journal_result_clear(&r);
    }
    return rc;
}

/* After the evaluations are in rs: the (kept) refusals, every step, each
 * tuned shape's best, the derived views, the totals of a listed summary. */
static int kw_build_end(kw_build *B, kw_runsum *rs, int n_tuned, const int *tuned,
                        const uint64_t *best, const unsigned char *done)
{
    const kw_jheader *h = B->h;
    int rc = 0;
    for (size_t i = 0; i < B->n_viols && rc == 0; i++) {
        if (!kw_build_keeps(B, B->viols[i].es,
                            kw_knobs_cand_id(&h->space, &B->viols[i].cand)))
            continue;
        int c = kw_knobs_cand_violates(&h->space, &B->viols[i].cand);
        if (c >= 0)
            rc = kw_runsum_add_refused(rs, B->map[B->viols[i].es], &B->viols[i].cand, c);
    }
    for (size_t i = 0; i < B->n_steps && rc == 0; i++)
        rc = kw_rs_add_step(rs, B->map[B->steps[i].es], &B->steps[i].st, 1);
    for (size_t i = 0; i < B->n_pairs && rc == 0; i++)
        rc = kw_runsum_add_pair(rs, B->map[B->pairs[i].es], &B->pairs[i].p);
    for (int t = 0; t < n_tuned && rc == 0; t++) {
        kw_runsum_set_best(rs, B->map[tuned[t]], best[t]);
        rs->shapes[B->map[tuned[t]]].stopped = !done[t];
    }
    if (rc != 0 || (rc = kw_runsum_finish(rs)) != 0)
        return rc;
    if (B->listed)
        kw_build_totals(B, rs);
    return 0;
}

/* Each summary shape's aliases, from the journal reader's count (both readers count
 * them as they parse). */
static void kw_build_aliases(const kw_build *B, kw_runsum *rs, const kw_journal *j)
{
    for (int i = 0; i < rs->n_shapes; i++)
        rs->shapes[i].aliases_total = 0;
    for (int es = 0; es < j->h.n_shapes && es < KW_JOURNAL_SHAPE_MAX; es++)
        if (B->map[es] >= 0 && B->map[es] < rs->n_shapes)
            rs->shapes[B->map[es]].aliases_total += j->n_alias[es];
}

/* The builder behind both entries: j, or the file at path listed. */
static int kw_build_run(kw_runsum **out, kw_journal **jout, const kw_journal *j, const char *path,
                        int top_ranked, int top_rejected)
{
    kw_build B;
    memset(&B, 0, sizeof B);
    B.listed = j == NULL;
    B.read = B.listed ? 1 : 0;
    B.top_ranked = top_ranked > 0 ? top_ranked : 0;
    B.top_rejected = top_rejected > 0 ? top_rejected : 0;
    *out = NULL;
    if (jout)
        *jout = NULL;
    kw_journal *hj = NULL; /* the streamed journal's header */
    int rc = kw_build_read(&B, j, path, &hj);
    if (rc != 0)
        goto done;
    const kw_journal *src = j ? j : hj;
    int n_tuned, tuned[KW_JOURNAL_SHAPE_MAX];
    uint64_t best[KW_JOURNAL_SHAPE_MAX];
    unsigned char done[KW_JOURNAL_SHAPE_MAX];
    if ((rc = kw_build_tuned(&B, &n_tuned, tuned, best, done)) != 0)
        goto done;
    if (B.listed) {
        for (int t = 0; t < n_tuned && rc == 0; t++)
            rc = kw_build_keep(&B, B.map[tuned[t]], tuned[t], best[t]);
        if (rc != 0)
            goto done;
        B.read = 2;
        B.limit = src->n_records;
        if ((rc = kw_build_read(&B, NULL, path, NULL)) != 0)
            goto done;
    }
    if ((rc = kw_build_end(&B, B.rs, n_tuned, tuned, best, done)) != 0)
        goto done;
    kw_build_aliases(&B, B.rs, src);
    *out = B.rs;
    B.rs = NULL;
    if (jout) {
        *jout = hj;
        hj = NULL;
    }
done:
    kw_build_free(&B);
    kw_journal_free(hj);
    return rc;
}

int kw_runsum_build(kw_runsum **out, const kw_journal *j)
{
    return kw_build_run(out, NULL, j, NULL, 0, 0);
}

int kw_runsum_build_listed(kw_runsum **out, kw_journal **hdr, const char *path, int top_ranked,
                           int top_rejected)
{
    return kw_build_run(out, hdr, NULL, path, top_ranked, top_rejected);
}

/* ---- the live summary ----
 *
 * The stop path's summary without reading the journal: rank 0 (or the one
 * process) follows its own journal as the engine appends it
 * (kw_journal_follow: the same parser and checksum chain as the streamed
 * reads), so each record is read once, during the run, by the same
 * kw_build_fn as the two reads of kw_runsum_build_listed: to the reducer
 * and the scout as read 1, and into a summary of every configuration (in
 * place of read 2). kw_runsum_live_summary then picks what read 2 would
 * have kept (the same kw_build_keep over the same reducer) and copies those
 * configurations, in their order, into a new listed summary; the refusals,
 * steps and the end are kw_build_end's, as for the file. Cost: one parse of
 * every record during the run (the reads' cost, moved off the stop path)
 * and a summary entry per configuration, not per evaluation, in memory;
 * the stop path only copies and serialises. Rejected: feeding the engine's
 * records to the builder as structures (a second path from the engine into
 * the summary, with its own chance to differ from what the journal
 * proves). */
struct kw_runsum_live {
    kw_jfollow *f;
    kw_build B;
};

int kw_runsum_live_new(kw_runsum_live **out, const char *path, int top_ranked, int top_rejected)
{
    *out = NULL;
    kw_runsum_live *lv = calloc(1, sizeof *lv);
    if (!lv)
        return kw_build_oom();
    kw_build *B = &lv->B;
    B->listed = 1;
    B->live = 1;
    B->keep_all = 1;
    B->top_ranked = top_ranked > 0 ? top_ranked : 0;
    B->top_rejected = top_rejected > 0 ? top_rejected : 0;
    int rc = kw_journal_follow_open(&lv->f, path, kw_build_fn, B);
    if (rc != 0) {
        free(lv);
        return rc;
    }
    *out = lv;
    return 0;
}

int kw_runsum_live_update(kw_runsum_live *lv)
{
    return kw_journal_follow(lv->f);
}

/* A copy of configuration src into s (a new entry, found by id). */
static int kw_rs_config_copy(kw_runsum *rs, kw_rs_shape *s, const kw_rs_config *src)
{
    int i = kw_rs_config_at(s, &src->cand, src->id);
    if (i < 0)
        return i;
    kw_rs_config *cf = &s->configs[i];
    *cf = *src;
    cf->sum = NULL;
    cf->recheck = NULL;
    if (src->sum) {
        if (!(cf->sum = malloc((size_t)rs->n_metrics * sizeof *cf->sum)))
            return kw_error_set(KW_ENOMEM, "out of memory for repetitions");
        memcpy(cf->sum, src->sum, (size_t)rs->n_metrics * sizeof *cf->sum);
    }
    return 0;
}

int kw_runsum_live_summary(kw_runsum **out, const kw_journal **hdr, kw_runsum_live *lv)
{
    *out = NULL;
    *hdr = NULL;
    kw_build *B = &lv->B;
    int rc = kw_runsum_live_update(lv);
    if (rc != 0)
        return rc;
    const kw_journal *j = kw_journal_follow_journal(lv->f);
    if (!B->ready || !j)
        return kw_error_set(KW_ESTATE, "the journal has no record after its header yet");
    int n_tuned, tuned[KW_JOURNAL_SHAPE_MAX];
    uint64_t best[KW_JOURNAL_SHAPE_MAX];
    unsigned char done[KW_JOURNAL_SHAPE_MAX];
    if ((rc = kw_build_tuned(B, &n_tuned, tuned, best, done)) != 0)
        return rc;
    /* what read 2 keeps, made anew from the records so far */
    for (int i = 0; i < B->n; i++) {
        kw_sshape *p = &B->ps[i];
        p->evals = p->configs = p->ranked = 0;
        p->n_r = p->n_x = p->n_r0 = 0;
        kw_idmap_free(&p->picked);
    }
    for (int t = 0; t < n_tuned && rc == 0; t++)
        rc = kw_build_keep(B, B->map[tuned[t]], tuned[t], best[t]);
    kw_runsum *rs = NULL;
    int map[KW_JOURNAL_SHAPE_MAX];
    if (rc == 0)
        rc = kw_rs_begin(&rs, map, j);
    /* the kept configurations in the order read 2 adds them: the order of
     * their first evaluation, as in the summary of every one */
    for (int i = 0; rc == 0 && i < rs->n_shapes && i < B->rs->n_shapes; i++) {
        const kw_rs_shape *from = &B->rs->shapes[i];
        const kw_sshape *p = &B->ps[i];
        for (int c = 0; c < from->n_configs && rc == 0; c++)
            if (kw_idmap_has(&p->keep, from->configs[c].id) ||
                kw_idmap_has(&p->picked, from->configs[c].id))
                rc = kw_rs_config_copy(rs, &rs->shapes[i], &from->configs[c]);
    }
    if (rc == 0) {
        B->keep_all = 0;
        rc = kw_build_end(B, rs, n_tuned, tuned, best, done);
        B->keep_all = 1;
        if (rc == 0)
            kw_build_aliases(B, rs, j);
    }
    if (rc != 0) {
        kw_runsum_free(rs);
        return rc;
    }
    *out = rs;
    *hdr = j;
    return 0;
}

void kw_runsum_live_free(kw_runsum_live *lv)
{
    if (!lv)
        return;
    kw_journal_follow_free(lv->f);
    kw_build_free(&lv->B);
    free(lv);
}

int kw_runsum_winner(const kw_runsum *rs, int shape)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    return s->n_ranked > 0 ? s->ranked[0] : -1;
}

static int kw_rs_lineage_rec(const kw_runsum *rs, int shape, int config, int *steps, int max,
                             int depth)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    if (config < 0 || config == s->baseline || depth > KW_RS_LINEAGE_DEPTH)
        return 0;
    /* on the accepted path: the path's prefix up to its first arrival there */
    for (int p = 0; p < s->n_path; p++)
        if (s->steps[s->path[p]].after == config) {
            int n = p + 1 < max ? p + 1 : max;
            memcpy(steps, s->path, (size_t)n * sizeof *steps);
            return n;
        }
    int st = s->configs[config].step;
    if (st < 0)
        return 0;
    int parent = s->steps[st].before;
    int n = 0;
    if (parent >= 0 && parent != s->baseline) {
        /* the parent's place on the path at the time of this step, else its own lineage */
        int at = -1;
        for (int p = 0; p < s->n_path && s->path[p] < st; p++)
            if (s->steps[s->path[p]].after == parent)
                at = p;
        if (at >= 0) {
            n = at + 1 < max ? at + 1 : max;
            memcpy(steps, s->path, (size_t)n * sizeof *steps);
        } else if (parent != config) {
            n = kw_rs_lineage_rec(rs, shape, parent, steps, max, depth + 1);
        }
    }
    if (n < max)
        steps[n++] = st;
    return n;
}

int kw_runsum_lineage(const kw_runsum *rs, int shape, int config, int *steps, int max)
{
    if (shape < 0 || shape >= rs->n_shapes || max <= 0)
        return 0;
    return kw_rs_lineage_rec(rs, shape, config, steps, max, 0);
}

int kw_runsum_knob_step(const kw_runsum *rs, int shape, const int *lineage, int n_lineage, int knob)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    int found = -1;
    for (int i = 0; i < n_lineage; i++) {
        const kw_rs_step *st = &s->steps[lineage[i]];
        if (st->parent.v[knob] != st->cand.v[knob])
            found = lineage[i];
    }
    return found;
}
