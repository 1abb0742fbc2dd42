/* kw_runsum.c - the in-memory run summary every results writer reads.
 *
 * Built incrementally (evaluations, refusals, steps in journal order), then
 * kw_runsum_finish() derives the accepted path, the final incumbent, the
 * ranking and the rejected list in one pass each. Configurations are found by
 * id through a per-shape open-addressing table, so replaying a journal of n
 * evaluations costs O(n), not O(n^2); every derived list is a plain int array.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_journal.h" /* kw_decision_name */
#include "kw_runsum.h"

/* Lineage recursion bound: a lineage deeper than every knob changed this many
 * times over is a damaged journal, not a run (verify reports it). */
#define KW_RS_LINEAGE_DEPTH 4096

int kw_decision_taken(kw_decision d)
{
    return d == KW_DECIDE_ACCEPT || d == KW_DECIDE_EXPLORE || d == KW_DECIDE_REVERT;
}

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
        for (int c = 0; c < s->n_configs; c++)
            free(s->configs[c].recheck);
        free(s->configs);
        free(s->steps);
        free(s->hash);
        free(s->path);
        free(s->ranked);
        free(s->rejected);
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

/* Config index of c on s, adding an empty record when absent. */
static int kw_rs_config_of(kw_runsum *rs, kw_rs_shape *s, const kw_cand *c)
{
    uint64_t id = kw_cand_id(&rs->ks, c);
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

int kw_runsum_add_eval(kw_runsum *rs, int shape, const kw_cand *c, const kw_metrics *m)
{
    if (shape < 0 || shape >= rs->n_shapes)
        return kw_error_set(KW_ESTATE, "evaluation for unknown shape index %d", shape);
    kw_rs_shape *s = &rs->shapes[shape];
    int i = kw_rs_config_of(rs, s, c);
    if (i < 0)
        return i;
    kw_rs_config *cf = &s->configs[i];
    cf->reps++;
    /* running mean: exact for one repetition, order-deterministic for more */
    for (int k = 0; k < rs->n_metrics; k++)
        cf->m.v[k] += (m->v[k] - cf->m.v[k]) / cf->reps;
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

int kw_runsum_add_step(kw_runsum *rs, int shape, const kw_rs_step *in)
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
    st.parent_id = kw_cand_id(&rs->ks, &st.parent);
    st.id = kw_cand_id(&rs->ks, &st.cand);
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
        int c = kw_cand_violates(&rs->ks, &st.cand);
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

/* ---- derived views ---- */

double kw_runsum_primary(const kw_runsum *rs, int shape, int config)
{
    if (config < 0)
        return NAN;
    return rs->shapes[shape].configs[config].m.v[rs->primary];
}

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
    return kw_cand_distance(&rs->ks, &s->configs[s->baseline].cand, &c->cand);
}

/* qsort has no context argument; ranking is single-threaded, so a file-scope
 * pointer is the smallest honest way to pass it. */
static const kw_runsum *kw_rs_sort_rs;
static const kw_rs_shape *kw_rs_sort_shape;

int kw_runsum_rank_order(double primary_a, int changed_a, uint64_t id_a, double primary_b,
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
    kw_cand_baseline(&base, &rs->ks);
    s->baseline = kw_rs_lookup(s, kw_cand_id(&rs->ks, &base));
    free(s->path);
    free(s->ranked);
    free(s->rejected);
    s->path = s->ranked = s->rejected = NULL;
    s->n_path = s->n_ranked = s->n_rejected = 0;
    /* a pulled-in probe step may appear besides every taken step: 2n bounds the path */
    size_t np = (size_t)(s->n_steps > 0 ? 2 * s->n_steps : 1);
    size_t nc = (size_t)(s->n_configs > 0 ? s->n_configs : 1);
    s->path = malloc(np * sizeof *s->path);
    s->ranked = malloc(nc * sizeof *s->ranked);
    s->rejected = malloc(nc * sizeof *s->rejected);
    if (!s->path || !s->ranked || !s->rejected)
        return kw_error_set(KW_ENOMEM, "out of memory ranking shape %s", s->name);

    /* The accepted path: every taken step in journal order. A taken step whose
     * parent is not the incumbent (the second half of a two-step probe) pulls
     * in the step that led from the incumbent to that parent. */
    uint64_t inc = s->baseline >= 0 ? s->configs[s->baseline].id : kw_cand_id(&rs->ks, &base);
    for (int i = 0; i < s->n_steps; i++) {
        const kw_rs_step *st = &s->steps[i];
        if (!kw_decision_taken(st->decision))
            continue;
        if (st->parent_id != inc)
            for (int j = i - 1; j >= 0; j--)
                if (s->steps[j].parent_id == inc && s->steps[j].id == st->parent_id &&
                    s->n_path < 2 * s->n_steps) {
                    s->path[s->n_path++] = j;
                    break;
                }
        if (s->n_path < 2 * s->n_steps)
            s->path[s->n_path++] = i;
        inc = st->id;
    }
    if (s->has_best && kw_rs_lookup(s, s->best_id) >= 0)
        s->final = kw_rs_lookup(s, s->best_id);
    else if (s->n_steps > 0)
        s->final = kw_rs_lookup(s, inc);
    else
        s->final = -1; /* strategies without steps (random, exhaustive): the best wins */

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
        s->evals_total = 0;
        for (int c = 0; c < s->n_configs; c++)
            s->evals_total += s->configs[c].reps;
        s->configs_total = s->n_configs;
        s->ranked_total = s->n_ranked;
        s->rejected_total = s->n_rejected;
    }
    return 0;
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
