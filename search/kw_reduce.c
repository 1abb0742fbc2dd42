/* kw_reduce.c - the journal reducer and the mean rule (see kw_reduce.h for
 * the rules and why they have one home).
 *
 * Configurations sit in one open-addressing table keyed by (shape, id),
 * each holding its repetitions' primary values by repetition index, so a
 * mean is summed in repetition order whatever order the records came in
 * (the engine writes them in order; a reader must not assume it). A query
 * (kw_reduce_result) walks the shape's moving steps or its configurations
 * once: O(steps + configs log configs), paid once per shape per reader. */
#include <math.h>
#include <stddef.h>

#include <gsl/gsl_cdf.h>
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"
#include "kw_mix.h"
#include "kw_reduce.h"

/* ------------------------------------------------------------------ mean rule */

void kw_reduce_repstat_init(kw_repstat *s)
{
    s->n = 0;
    s->sum = 0.0;
    s->ok = 1;
    s->guards = "";
}

void kw_reduce_repstat_add(kw_repstat *s, double primary, const char *guards, int rc)
{
    if (s->n < KW_REPSTAT_MAX)
        s->x[s->n] = primary;
    s->sum += primary;
    s->n++;
    if (((guards && guards[0]) || rc != 0) && s->ok) {
        s->ok = 0;
        s->guards = guards && guards[0] ? guards : "error";
    }
}

double kw_reduce_repstat_mean(const kw_repstat *s)
{
    return s->n > 0 ? s->sum / s->n : NAN;
}

double kw_reduce_repstat_sd(const kw_repstat *s)
{
    int nv = s->n < KW_REPSTAT_MAX ? s->n : KW_REPSTAT_MAX;
    if (nv < 2)
        return 0.0;
    double mean = kw_reduce_repstat_mean(s), ss = 0;
    for (int i = 0; i < nv; i++)
        ss += (s->x[i] - mean) * (s->x[i] - mean);
    return sqrt(ss / (nv - 1));
}

void kw_reduce_pair_delta(kw_pairdelta *out, const double *pick, const double *nb, int n)
{
    memset(out, 0, sizeof *out);
    out->pick_mean = out->nb_mean = out->delta_pct = out->lo_pct = out->hi_pct = NAN;
    if (n <= 0)
        return;
    double sp = 0, sn = 0, sd = 0;
    for (int r = 0; r < n; r++) {
        sp += pick[r];
        sn += nb[r];
        sd += nb[r] - pick[r];
    }
    double md = sd / n, ss = 0;
    for (int r = 0; r < n; r++)
        ss += (nb[r] - pick[r] - md) * (nb[r] - pick[r] - md);
    out->n = n;
    out->pick_mean = sp / n;
    out->nb_mean = sn / n;
    out->delta_pct = md / out->pick_mean * 100.0;
    if (n >= 2) {
        double half = gsl_cdf_tdist_Pinv(0.975, n - 1) * sqrt(ss / (n - 1)) / sqrt((double)n);
        out->lo_pct = (md - half) / out->pick_mean * 100.0;
        out->hi_pct = (md + half) / out->pick_mean * 100.0;
    }
}

/* ------------------------------------------------------------------ tables */

/* One configuration of one shape. */
typedef struct kw_rcfg {
    uint64_t id;
    int shape;
    int used;
    long rep0;            /* record of repetition 0, 0 until seen */
    kw_cand cand;
    double *val;          /* primary by repetition index (repeats of them) */
    unsigned char *seen;  /* 0 none, 1 passed, 2 failed a guard or returned an error */
} kw_rcfg;

/* A moving step, without its strings. */
typedef struct kw_rmove {
    kw_jstep st;
} kw_rmove;

typedef struct kw_rshape {
    long evals, controls, pairs, aliases;
    int steps;
    int has_done;
    kw_jdone done;
    kw_rmove *moves;
    size_t n_moves, cap_moves;
} kw_rshape;

struct kw_reduce {
    const kw_jheader *h;
    int n_shapes;         /* h->n_shapes, kept: kw_reduce_free reads no header */
    int repeats;
    kw_rcfg *t;
    size_t n, cap;        /* cap 0 or a power of two */
    kw_rshape *shapes;    /* h->n_shapes */
};

static size_t kw_r_home(const kw_reduce *r, int shape, uint64_t id)
{
    return (size_t)kw_mix_final(id ^ kw_mix_splitmix64((uint64_t)(unsigned)shape)) & (r->cap - 1);
}

static kw_rcfg *kw_r_find(const kw_reduce *r, int shape, uint64_t id)
{
    if (r->cap == 0)
        return NULL;
    for (size_t k = kw_r_home(r, shape, id); r->t[k].used; k = (k + 1) & (r->cap - 1))
        if (r->t[k].id == id && r->t[k].shape == shape)
            return &r->t[k];
    return NULL;
}

static void kw_r_place(kw_reduce *r, const kw_rcfg *c)
{
    size_t k = kw_r_home(r, c->shape, c->id);
    while (r->t[k].used)
        k = (k + 1) & (r->cap - 1);
    r->t[k] = *c;
}

/* The entry of (shape, id), created when absent; NULL when out of memory. */
static kw_rcfg *kw_r_get(kw_reduce *r, int shape, uint64_t id, const kw_cand *cand)
{
    kw_rcfg *c = kw_r_find(r, shape, id);
    if (c)
        return c;
    if (2 * (r->n + 1) > r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        kw_rcfg *t = calloc(cap, sizeof *t), *old = r->t;
        size_t old_cap = r->cap;
        if (!t)
            return NULL;
        r->t = t;
        r->cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].used)
                kw_r_place(r, &old[i]);
        free(old);
    }
    kw_rcfg nc;
    memset(&nc, 0, sizeof nc);
    nc.id = id;
    nc.shape = shape;
    nc.used = 1;
    nc.cand = *cand;
    nc.val = malloc((size_t)r->repeats * sizeof *nc.val);
    nc.seen = calloc((size_t)r->repeats, 1);
    if (!nc.val || !nc.seen) {
        free(nc.val);
        free(nc.seen);
        return NULL;
    }
    kw_r_place(r, &nc);
    r->n++;
    return kw_r_find(r, shape, id);
}

/* ------------------------------------------------------------------ life */

int kw_reduce_new(kw_reduce **out, const kw_jheader *h)
{
    *out = NULL;
    kw_reduce *r = calloc(1, sizeof *r);
    if (!r)
        return kw_error_set(KW_ENOMEM, "out of memory for the journal reducer");
    r->h = h;
    r->n_shapes = h->n_shapes;
    r->repeats = h->repeats > 0 ? h->repeats : 1;
    r->shapes = calloc((size_t)(h->n_shapes > 0 ? h->n_shapes : 1), sizeof *r->shapes);
    if (!r->shapes) {
        free(r);
        return kw_error_set(KW_ENOMEM, "out of memory for the journal reducer");
    }
    *out = r;
    return 0;
}

void kw_reduce_free(kw_reduce *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->cap; i++)
        if (r->t[i].used) {
            free(r->t[i].val);
            free(r->t[i].seen);
        }
    free(r->t);
    for (int s = 0; r->shapes && s < r->n_shapes; s++)
        free(r->shapes[s].moves);
    free(r->shapes);
    free(r);
}

static int kw_r_oom(void)
{
    return kw_error_set(KW_ENOMEM, "out of memory reducing the journal");
}

static int kw_r_eval(kw_reduce *r, const kw_jeval *e)
{
    r->shapes[e->shape].evals++;
    r->shapes[e->shape].aliases += e->alias != 0;
    if (e->rep < 0 || e->rep >= r->repeats) {
        /* a control re-measurement, or after the shape's D record the
         * pairing's: outside the statistics (kw_journal_stats reads
         * 0..repeats-1), counted apart */
        kw_rshape *s = &r->shapes[e->shape];
        if (s->has_done)
            s->pairs += e->rep >= r->repeats;
        else
            s->controls += e->rep >= r->repeats;
        return 0;
    }
    kw_rcfg *c = kw_r_get(r, e->shape, e->id, &e->cand);
    if (!c)
        return kw_r_oom();
    if (c->seen[e->rep])
        return 0; /* a repeated record: the first one counts, as the journal's index finds it */
    c->val[e->rep] = e->m ? e->m[r->h->primary] : NAN;
    c->seen[e->rep] = (e->guards && e->guards[0]) || e->rc != 0 ? 2 : 1;
    if (e->rep == 0)
        c->rep0 = e->record;
    return 0;
}

static int kw_r_step(kw_reduce *r, const kw_jstep *t)
{
    kw_rshape *s = &r->shapes[t->shape];
    s->steps++;
    if (!kw_journal_decision_taken(t->decision))
        return 0;
    if (s->n_moves == s->cap_moves) {
        size_t cap = s->cap_moves ? 2 * s->cap_moves : 64;
        kw_rmove *m = realloc(s->moves, cap * sizeof *m);
        if (!m)
            return kw_r_oom();
        s->moves = m;
        s->cap_moves = cap;
    }
    kw_jstep *st = &s->moves[s->n_moves++].st;
    *st = *t;
    st->guards = st->constraint = st->reason = "";
    return 0;
}

int kw_reduce_add(kw_reduce *r, const kw_jrec *rec)
{
    int n = r->h->n_shapes;
    switch (rec->type) {
    case 'E':
        return rec->e.shape >= 0 && rec->e.shape < n ? kw_r_eval(r, &rec->e) : 0;
    case 'T':
        return rec->t.shape >= 0 && rec->t.shape < n ? kw_r_step(r, &rec->t) : 0;
    case 'D':
        if (rec->d.shape >= 0 && rec->d.shape < n) {
            r->shapes[rec->d.shape].has_done = 1;
            r->shapes[rec->d.shape].done = rec->d; /* the last D of a shape counts */
        }
        return 0;
    default:
        return 0;
    }
}

/* ------------------------------------------------------------------ queries */

/* The statistics of c over its repetitions in repetition order. */
static void kw_r_stat(kw_repstat *st, const kw_reduce *r, const kw_rcfg *c)
{
    kw_reduce_repstat_init(st);
    for (int k = 0; c && k < r->repeats; k++)
        if (c->seen[k])
            kw_reduce_repstat_add(st, c->val[k], c->seen[k] == 2 ? "fail" : "", 0);
}

int kw_reduce_stats(kw_jstats *out, const kw_reduce *r, int shape, uint64_t id)
{
    memset(out, 0, sizeof *out);
    out->guards = "";
    out->klass = "";
    out->guards_ok = 1;
    const kw_rcfg *c = kw_r_find(r, shape, id);
    kw_repstat st;
    kw_r_stat(&st, r, c);
    if (st.n == 0)
        return kw_error_set(KW_EINPUT, "config %016llx was not evaluated on shape %d",
                            (unsigned long long)id, shape);
    out->n = st.n;
    out->mean = kw_reduce_repstat_mean(&st);
    out->sd = kw_reduce_repstat_sd(&st);
    out->guards_ok = st.ok;
    out->guards = st.guards;
    return 0;
}

static int kw_r_rep0_cmp(const void *pa, const void *pb)
{
    const kw_rcfg *a = *(const kw_rcfg *const *)pa, *b = *(const kw_rcfg *const *)pb;
    return a->rep0 < b->rep0 ? -1 : a->rep0 > b->rep0;
}

/* Random/exhaustive without a D record: the complete, guard-passing config
 * of lowest mean, the first by repetition 0's record among equals. */
static int kw_r_sample_best(kw_jresult *out, const kw_reduce *r, int shape)
{
    const kw_rcfg **by = malloc((r->n ? r->n : 1) * sizeof *by);
    if (!by)
        return kw_r_oom();
    size_t nb = 0;
    for (size_t i = 0; i < r->cap; i++)
        if (r->t[i].used && r->t[i].shape == shape && r->t[i].rep0 > 0)
            by[nb++] = &r->t[i];
    qsort(by, nb, sizeof *by, kw_r_rep0_cmp);
    double best = INFINITY;
    for (size_t i = 0; i < nb; i++) {
        kw_repstat st;
        kw_r_stat(&st, r, by[i]);
        double m = kw_reduce_repstat_mean(&st);
        if (st.n == r->repeats && st.ok && m < best) {
            best = m;
            out->best = by[i]->cand;
            out->best_id = by[i]->id;
            out->best_primary = m;
        }
    }
    free(by);
    return 0;
}

size_t kw_reduce_path_len(const void *moves, size_t n, size_t stride, size_t id_offset,
                          uint64_t best_id)
{
    size_t keep = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t id;
        memcpy(&id, (const char *)moves + i * stride + id_offset, sizeof id);
        if (id == best_id)
            keep = i + 1;
    }
    return keep;
}

int kw_reduce_each(const kw_reduce *r, int shape, kw_reduce_fn fn, void *ctx)
{
    for (size_t i = 0; i < r->cap; i++) {
        const kw_rcfg *c = &r->t[i];
        if (!c->used || c->shape != shape)
            continue;
        kw_repstat st;
        kw_r_stat(&st, r, c);
        kw_rconfig v = {c->id, &c->cand, st.n, kw_reduce_repstat_mean(&st), st.ok};
        int rc = fn(ctx, &v);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int kw_reduce_result(kw_jresult *out, const kw_reduce *r, int shape)
{
    memset(out, 0, sizeof *out);
    const kw_jheader *h = r->h;
    const kw_knobspace *ks = &h->space;
    if (shape < 0 || shape >= h->n_shapes)
        return kw_error_set(KW_EINPUT, "no shape %d in the journal", shape);
    const kw_rshape *s = &r->shapes[shape];
    out->shape = shape;
    out->evals = s->evals;
    out->controls = s->controls;
    out->pairs = s->pairs;
    out->aliases = s->aliases;
    out->steps = s->steps;
    kw_knobs_cand_baseline(&out->baseline, ks);
    out->baseline_id = kw_knobs_cand_id(ks, &out->baseline);
    kw_repstat st;
    kw_r_stat(&st, r, kw_r_find(r, shape, out->baseline_id));
    out->baseline_primary = kw_reduce_repstat_mean(&st);
    snprintf(out->why, sizeof out->why, "incomplete");

    out->best = out->baseline;
    out->best_id = out->baseline_id;
    out->best_primary = out->baseline_primary;
    if (s->has_done) {
        out->done = 1;
        snprintf(out->why, sizeof out->why, "%s", s->done.why);
        out->best = s->done.best;
        out->best_id = s->done.best_id;
        out->best_primary = s->done.best_primary;
    } else if (h->strategy == KW_STRATEGY_OFAT) {
        double best = st.n > 0 && st.ok ? kw_reduce_repstat_mean(&st) : INFINITY;
        for (size_t i = 0; i < s->n_moves; i++) {
            const kw_jstep *m = &s->moves[i].st;
            kw_r_stat(&st, r, kw_r_find(r, shape, m->id));
            if (st.n > 0 && st.ok && kw_reduce_repstat_mean(&st) < best) {
                best = kw_reduce_repstat_mean(&st);
                out->best = m->cand;
                out->best_id = m->id;
                out->best_primary = best;
            }
        }
    } else {
        int rc = kw_r_sample_best(out, r, shape);
        if (rc != 0)
            return rc;
    }

    if (h->strategy == KW_STRATEGY_OFAT && s->n_moves > 0) {
        out->path = malloc(s->n_moves * sizeof *out->path);
        if (!out->path)
            return kw_r_oom();
        for (size_t i = 0; i < s->n_moves; i++)
            out->path[i] = &s->moves[i].st;
        out->n_path = kw_reduce_path_len(s->moves, s->n_moves, sizeof *s->moves,
                                         offsetof(kw_jstep, id), out->best_id);
    }
    for (int k = 0; k < ks->n_knobs; k++) {
        if (out->best.v[k] == out->baseline.v[k])
            continue;
        kw_jchange *c = &out->changes[out->n_changes++];
        c->knob = k;
        c->from_v = out->baseline.v[k];
        c->to_v = out->best.v[k];
        for (size_t i = 0; i < out->n_path; i++)
            if (out->path[i]->knob == k && out->path[i]->new_v == c->to_v)
                c->step = out->path[i];
    }
    return 0;
}
