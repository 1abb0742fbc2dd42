/* kw_sample.c - the sampling strategies: random and exhaustive (see
 * kw_strategy.h for the interface, kw_engine.h for what they do).
 *
 * Both are baselines for OFAT, run through the same evaluator, memo and
 * journal; neither takes steps: each round plans a batch of configs, and the
 * decision only journals constraint breakers (V records) and tracks the best
 * guard-passing config. They share everything but the plan, so they share
 * one file; each is a row in the core's strategy table.
 *
 *   random      uniform draws over valid configs without replacement (GSL
 *               mt19937, one stream per shape seeded from the run seed and
 *               the shape) until the budget;
 *   exhaustive  every config in mixed-radix order (last knob fastest); it
 *               never revisits a config, so it forgets every evaluation but
 *               the baseline's and the best's and memory stays flat.
 */
#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kw_mix.h"
#include "kw_strategy.h"

#define KW_RANDOM_BATCH 64     /* new configs a random shape plans per round */
#define KW_EXHAUST_BATCH 256   /* configs an exhaustive shape plans per round */
#define KW_RANDOM_STALL 10000  /* draws without a new valid config before random stops */
#define KW_SEED32_MASK 0xffffffffUL /* gsl_rng_set takes an unsigned long; mt19937 uses 32 bits */

typedef struct kw_sample {
    int exhaustive;           /* the exhaustive strategy (else random) */
    gsl_rng *rng;             /* random: the shape's stream */
    int exhausted;            /* no config left to draw */
    kw_cand next;             /* exhaustive: the next config in mixed radix */
    int have_best;
    kw_cand best;             /* best guard-passing config evaluated */
    double best_mean;
} kw_sample;

static void kw_sample_track_best(kw_eng *E, kw_shape *s, const kw_cand *c)
{
    kw_sample *q = s->st;
    kw_cst cs;
    kw_engine_stats_c(E, s, c, &cs);
    if (cs.n != E->reps || !cs.ok || !isfinite(cs.mean))
        return;
    if (!q->have_best || cs.mean < q->best_mean) {
        q->have_best = 1;
        q->best = *c;
        q->best_mean = cs.mean;
    }
}

static int kw_sample_init_common(kw_eng *E, kw_shape *s, int exhaustive)
{
    kw_sample *q = calloc(1, sizeof *q);
    if (!q)
        return kw_error_set(KW_ENOMEM, "out of memory");
    s->st = q;
    q->exhaustive = exhaustive;
    kw_sample_track_best(E, s, &s->base);
    if (exhaustive)
        return 0;
    q->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!q->rng)
        return kw_error_set(KW_ENOMEM, "out of memory for the random stream");
    /* one stream per shape, seeded from the run seed and the shape */
    uint64_t seed = kw_mix_final(E->o.seed ^ kw_mix_final((uint64_t)s->shape + 1));
    gsl_rng_set(q->rng, (unsigned long)(seed & KW_SEED32_MASK));
    return 0;
}

static int kw_sample_init_random(kw_eng *E, kw_shape *s)
{
    return kw_sample_init_common(E, s, 0);
}

static int kw_sample_init_exhaustive(kw_eng *E, kw_shape *s)
{
    return kw_sample_init_common(E, s, 1);
}

static int kw_sample_in_items(const kw_shape *s, uint64_t id)
{
    for (int i = 0; i < s->n_items; i++)
        if (s->items[i].id == id)
            return 1;
    return 0;
}

static int kw_sample_plan_random(kw_eng *E, kw_shape *s)
{
    kw_sample *q = s->st;
    long planned = 0;
    int fresh = 0;
    long stall = 0;
    s->reserve = 0;
    while (fresh < KW_RANDOM_BATCH) {
        if (E->o.budget > 0 && s->evals + planned + E->reps > E->o.budget) {
            s->budget_hit = 1;
            break;
        }
        if (stall >= KW_RANDOM_STALL) {
            q->exhausted = 1;
            break;
        }
        kw_cand c;
        memset(&c, 0, sizeof c);
        for (int k = 0; k < E->ks->n_knobs; k++)
            c.v[k] = (uint8_t)gsl_rng_uniform_int(q->rng, (unsigned long)E->ks->knobs[k].n_values);
        uint64_t id = kw_knobs_cand_id(E->ks, &c);
        if (kw_knobs_cand_violates(E->ks, &c) >= 0) {
            stall++;
            int rc = kw_engine_item_add(E, s, &c, 0);
            if (rc != 0)
                return rc;
            continue;
        }
        if (kw_engine_cost(E, s, id) < E->reps || kw_sample_in_items(s, id)) {
            stall++; /* drawn before: without replacement, draw again */
            continue;
        }
        stall = 0;
        int rc = kw_engine_item_add(E, s, &c, 0);
        if (rc != 0)
            return rc;
        planned += E->reps;
        fresh++;
    }
    return 0;
}

static int kw_sample_plan_exhaustive(kw_eng *E, kw_shape *s)
{
    kw_sample *q = s->st;
    long planned = 0;
    int n = 0;
    s->reserve = 0;
    while (n < KW_EXHAUST_BATCH && !q->exhausted) {
        kw_cand c = q->next;
        uint64_t id = kw_knobs_cand_id(E->ks, &c);
        int cost = kw_knobs_cand_violates(E->ks, &c) >= 0 ? 0 : kw_engine_cost(E, s, id);
        if (E->o.budget > 0 && s->evals + planned + cost > E->o.budget) {
            s->budget_hit = 1;
            break;
        }
        int rc = kw_engine_item_add(E, s, &c, 0);
        if (rc != 0)
            return rc;
        planned += cost;
        n++;
        /* next in mixed radix, last knob fastest */
        int k = E->ks->n_knobs - 1;
        for (; k >= 0; k--) {
            if (++q->next.v[k] < E->ks->knobs[k].n_values)
                break;
            q->next.v[k] = 0;
        }
        if (k < 0)
            q->exhausted = 1;
    }
    return 0;
}

/* Exhaustive never revisits a config: forget every evaluation but the
 * baseline's and the best's. */
static void kw_sample_forget(kw_eng *E, kw_shape *s, const kw_cand *c)
{
    kw_sample *q = s->st;
    if (memcmp(c, &s->base, sizeof *c) == 0 || (q->have_best && memcmp(c, &q->best, sizeof *c) == 0))
        return;
    uint64_t id = kw_knobs_cand_id(E->ks, c);
    for (int r = 0; r < E->reps; r++) {
        kw_memo_ent *e = kw_memo_find(&E->memo, s->shape, id, r);
        if (e && e->state == KW_MEMO_DONE)
            kw_memo_del(&E->memo, e);
    }
}

static int kw_sample_decide(kw_eng *E, kw_shape *s)
{
    kw_sample *q = s->st;
    const char *kind = q->exhaustive ? "exhaustive" : "random";
    int had_best = q->have_best;
    kw_cand old_best = q->best;
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        if (it->con >= 0) {
            int rc = kw_engine_emit_viol(E, s, it, kind);
            if (rc != 0)
                return rc;
        } else if (!it->dropped) {
            kw_sample_track_best(E, s, &it->cand);
        }
    }
    if (q->exhaustive) {
        for (int i = 0; i < s->n_items; i++)
            if (s->items[i].con < 0 && !s->items[i].dropped)
                kw_sample_forget(E, s, &s->items[i].cand);
        if (had_best)
            kw_sample_forget(E, s, &old_best);
    }
    return s->budget_hit || q->exhausted ? KW_SHAPE_FINISHED : 0;
}

static void kw_sample_done(kw_eng *E, kw_shape *s, kw_cand *best, const char **why)
{
    (void)E;
    const kw_sample *q = s->st;
    *best = q->have_best ? q->best : s->base;
    *why = s->budget_hit ? "budget" : "exhausted";
}

static void kw_sample_free(kw_shape *s)
{
    kw_sample *q = s->st;
    if (!q)
        return;
    if (q->rng)
        gsl_rng_free(q->rng);
    free(q);
    s->st = NULL;
}

static const char *kw_sample_phase(const kw_shape *s)
{
    const kw_sample *q = s->st;
    return q->exhaustive ? "exhaustive" : "random";
}

static const kw_cand *kw_sample_best(const kw_shape *s)
{
    const kw_sample *q = s->st;
    return q->have_best ? &q->best : &s->base;
}

/* Random: the budget (it has no end of its own); exhaustive: the space's size. */
static long kw_sample_estimate(const kw_eng *E, const kw_shape *s, double mean_ratio)
{
    (void)mean_ratio;
    const kw_sample *q = s->st;
    if (!q->exhaustive)
        return E->o.budget > 0 ? E->o.budget : -1;
    uint64_t size = kw_knobs_size(E->ks);
    return size > (uint64_t)LONG_MAX / 2 ? LONG_MAX / 2 : (long)size;
}

const kw_strategy_ops kw_sample_random_ops = {
    KW_STRATEGY_RANDOM, kw_sample_init_random, kw_sample_plan_random, kw_sample_decide,
    kw_sample_done, kw_sample_free, kw_sample_phase, kw_sample_best, kw_sample_estimate,
};

const kw_strategy_ops kw_sample_exhaustive_ops = {
    KW_STRATEGY_EXHAUSTIVE, kw_sample_init_exhaustive, kw_sample_plan_exhaustive,
    kw_sample_decide, kw_sample_done, kw_sample_free, kw_sample_phase, kw_sample_best,
    kw_sample_estimate,
};
