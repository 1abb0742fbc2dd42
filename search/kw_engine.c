/* kw_engine.c - the one-knob-at-a-time search engine, its random and exhaustive
 * baselines, memoised parallel evaluation and journal replay (see kw_engine.h).
 *
 * Design: every shape is a small state machine (baseline -> main -> probes ->
 * excursion -> backtrack -> settle -> bounded fix -> finish) that PLANS a batch of
 * candidates and later DECIDES on their results. The run loop advances all
 * shapes in lock-step rounds: plan all, evaluate the union on a thread pool,
 * decide all in shape order. The decisions and the journal are therefore a pure
 * function of the evaluation results, never of thread timing, and a resumed run
 * can regenerate the journal record by record (the writer compares checksums)
 * while taking evaluations from the journal. Rejected alternative: one thread
 * per shape writing as it goes - simpler code, but the journal order would
 * depend on timing and could not be replayed or compared byte for byte.
 *
 * Threads only ever run evaluator calls; they take jobs with one atomic
 * increment each and write into their own job slot, so there is no lock on the
 * hot path (the pool's mutex is touched twice per round).
 */
#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <limits.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kw_engine.h"

#define KW_RANDOM_BATCH 64     /* new configs a random shape plans per round */
#define KW_EXHAUST_BATCH 256   /* configs an exhaustive shape plans per round */
#define KW_RANDOM_STALL 10000  /* draws without a new valid config before random stops */
#define KW_PROBE_CHUNK 16      /* new evaluations a probe round may plan: small rounds let a
                                * found pair return to the main phase before the budget is
                                * spent on the rest of the probe list (a fixed number, never
                                * the thread count: the journal must not depend on it) */
#define KW_PROBE_CHUNK_ITEMS 64 /* items (memo hits and constraint breakers included) per round */
#define KW_REASON_LEN 256

/* ------------------------------------------------------------------ small helpers */

static uint64_t kw_mix64(uint64_t k)
{
    /* splitmix64 finaliser (Steele, Lea, Flood 2014): a well-spread hash of k */
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ULL;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebULL;
    k ^= k >> 31;
    return k;
}

static uint64_t kw_key(int shape, uint64_t id, int rep)
{
    return kw_mix64(id ^ kw_mix64(((uint64_t)(unsigned)shape << 32) | (unsigned)rep));
}

static double kw_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ interned strings */

typedef struct kw_intern {
    char **slot;
    size_t cap, n;
} kw_intern;

static uint64_t kw_str_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

static const char *kw_intern_get(kw_intern *t, const char *s)
{
    if (!s[0])
        return "";
    if (t->n * 2 + 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        char **ns = calloc(cap, sizeof *ns);
        if (!ns)
            return NULL;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slot[i]) {
                size_t h = kw_str_hash(t->slot[i]) & (cap - 1);
                while (ns[h])
                    h = (h + 1) & (cap - 1);
                ns[h] = t->slot[i];
            }
        free(t->slot);
        t->slot = ns;
        t->cap = cap;
    }
    size_t h = kw_str_hash(s) & (t->cap - 1);
    while (t->slot[h]) {
        if (strcmp(t->slot[h], s) == 0)
            return t->slot[h];
        h = (h + 1) & (t->cap - 1);
    }
    t->slot[h] = strdup(s);
    if (!t->slot[h])
        return NULL;
    t->n++;
    return t->slot[h];
}

static void kw_intern_free(kw_intern *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slot[i]);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------ memo */

enum { KW_MEMO_EMPTY, KW_MEMO_JOURNAL, KW_MEMO_PENDING, KW_MEMO_DONE };

/* One evaluation as the engine remembers it: only what decisions need. */
typedef struct kw_memo_ent {
    uint64_t id;
    int32_t shape, rep;
    int32_t state;
    int32_t rc;
    double primary;
    const char *guards;   /* effective guards ("" = pass), interned or journal-owned */
    const kw_jeval *je;   /* KW_MEMO_JOURNAL: the journal's record */
} kw_memo_ent;

typedef struct kw_memo {
    kw_memo_ent *t;
    size_t cap, n;
} kw_memo;

static kw_memo_ent *kw_memo_find(const kw_memo *m, int shape, uint64_t id, int rep)
{
    if (!m->cap)
        return NULL;
    size_t h = kw_key(shape, id, rep) & (m->cap - 1);
    while (m->t[h].state != KW_MEMO_EMPTY) {
        kw_memo_ent *e = &m->t[h];
        if (e->id == id && e->shape == shape && e->rep == rep)
            return e;
        h = (h + 1) & (m->cap - 1);
    }
    return NULL;
}

/* Find or insert (state EMPTY -> caller sets it). NULL on out of memory.
 * Pointers are invalidated by the next insert. */
static kw_memo_ent *kw_memo_put(kw_memo *m, int shape, uint64_t id, int rep)
{
    kw_memo_ent *e = kw_memo_find(m, shape, id, rep);
    if (e)
        return e;
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        kw_memo_ent *nt = calloc(cap, sizeof *nt);
        if (!nt)
            return NULL;
        for (size_t i = 0; i < m->cap; i++) {
            if (m->t[i].state == KW_MEMO_EMPTY)
                continue;
            size_t h = kw_key(m->t[i].shape, m->t[i].id, m->t[i].rep) & (cap - 1);
            while (nt[h].state != KW_MEMO_EMPTY)
                h = (h + 1) & (cap - 1);
            nt[h] = m->t[i];
        }
        free(m->t);
        m->t = nt;
        m->cap = cap;
    }
    size_t h = kw_key(shape, id, rep) & (m->cap - 1);
    while (m->t[h].state != KW_MEMO_EMPTY)
        h = (h + 1) & (m->cap - 1);
    e = &m->t[h];
    memset(e, 0, sizeof *e);
    e->id = id;
    e->shape = shape;
    e->rep = rep;
    e->guards = "";
    m->n++;
    return e;
}

/* Remove an entry (backward-shift deletion: linear probing stays valid). */
static void kw_memo_del(kw_memo *m, kw_memo_ent *e)
{
    size_t mask = m->cap - 1, i = (size_t)(e - m->t), j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (m->t[j].state == KW_MEMO_EMPTY)
            break;
        size_t home = kw_key(m->t[j].shape, m->t[j].id, m->t[j].rep) & mask;
        /* the entry at j may move to the hole at i unless its home lies in (i, j] */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            m->t[i] = m->t[j];
            i = j;
        }
    }
    memset(&m->t[i], 0, sizeof m->t[i]);
    m->n--;
}

/* ------------------------------------------------------------------ jobs and pool */

typedef struct kw_job {
    kw_cand cand;
    uint64_t id;
    int shape, rep;
    int live;                 /* call the evaluator (else replayed from je) */
    int screened;             /* live, but screened out: recorded as guard "screened" */
    int primary;              /* the primary metric's index (for a screened job) */
    const kw_jeval *je;
    int rc;
    double dur_s;             /* wall time of the call (scheduling only, never journalled) */
    kw_metrics m;
    char err[KW_GUARDS_LEN];  /* evaluator's message when rc != 0 */
} kw_job;

typedef struct kw_pool {
    pthread_t *tids;
    int n;                    /* worker threads (the caller is one more) */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned gen;
    int quit, busy;
    kw_job *jobs;
    const size_t *live;
    size_t n_live;
    size_t next;              /* atomic */
    const kw_evaluator *ev;
} kw_pool;

static void kw_job_run(kw_job *j, const kw_evaluator *ev)
{
    memset(&j->m, 0, sizeof j->m);
    kw_error_clear();
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (j->screened) {
        /* opts.screen: not evaluated; every metric 0 but the primary, +inf */
        j->rc = 0;
        j->m.v[j->primary] = HUGE_VAL;
        snprintf(j->m.guards, sizeof j->m.guards, "screened");
        snprintf(j->m.klass, sizeof j->m.klass, "screened");
        clock_gettime(CLOCK_MONOTONIC, &b);
        j->dur_s = 0;
        return;
    }
    j->rc = ev->eval(ev->ctx, &j->cand, j->shape, j->rep, &j->m);
    clock_gettime(CLOCK_MONOTONIC, &b);
    j->dur_s = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
    j->m.guards[KW_GUARDS_LEN - 1] = '\0';
    j->m.klass[sizeof j->m.klass - 1] = '\0';
    if (j->rc != 0)
        snprintf(j->err, sizeof j->err, "%s", kw_error_last());
}

static void kw_pool_drain(kw_pool *p)
{
    for (;;) {
        size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->n_live)
            return;
        kw_job_run(&p->jobs[p->live[i]], p->ev);
    }
}

static void *kw_pool_main(void *arg)
{
    kw_pool *p = arg;
    unsigned seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        kw_pool_drain(p);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int kw_pool_start(kw_pool *p, int threads, const kw_evaluator *ev)
{
    memset(p, 0, sizeof *p);
    p->ev = ev;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    if (threads <= 1)
        return 0;
    p->tids = calloc((size_t)threads - 1, sizeof *p->tids);
    if (!p->tids)
        return kw_error_set(KW_ENOMEM, "out of memory starting threads");
    for (int i = 0; i < threads - 1; i++) {
        if (pthread_create(&p->tids[i], NULL, kw_pool_main, p) != 0)
            return kw_error_set(KW_ENOMEM, "cannot start evaluation thread %d of %d", i + 2, threads);
        p->n++;
    }
    return 0;
}

static void kw_pool_run(kw_pool *p, kw_job *jobs, const size_t *live, size_t n_live)
{
    p->jobs = jobs;
    p->live = live;
    p->n_live = n_live;
    __atomic_store_n(&p->next, 0, __ATOMIC_RELAXED);
    if (p->n > 0 && n_live > 1) {
        pthread_mutex_lock(&p->mu);
        p->busy = p->n;
        p->gen++;
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
        kw_pool_drain(p);
        pthread_mutex_lock(&p->mu);
        while (p->busy > 0)
            pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    } else {
        kw_pool_drain(p);
    }
}

static void kw_pool_stop(kw_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++)
        pthread_join(p->tids[i], NULL);
    free(p->tids);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
}

/* ------------------------------------------------------------------ shape state */

typedef enum {
    ST_BASE,      /* evaluate the baseline */
    ST_MAIN,      /* sweep / greedy steps */
    ST_PROBE,     /* two-step probes at a local optimum */
    ST_EXPLORE,   /* tabu excursion */
    ST_BACKTRACK, /* walk back from a failed excursion */
    ST_SETTLE,    /* noiseless: walk to the best config evaluated, then the fix */
    ST_FIX,       /* bounded fix */
    ST_RANDOM,
    ST_EXHAUST,
    ST_FINISH,    /* write the shape-done record */
    ST_DONE
} kw_st;

/* One planned candidate. */
typedef struct kw_item {
    kw_cand cand;
    uint64_t id;
    int con;      /* constraint broken, -1 if none */
    int group;    /* probe: index of its first step */
    int dropped;  /* not evaluated: the budget ran out */
} kw_item;

typedef struct kw_sstate {
    int shape;                /* evaluator shape index */
    kw_st st;
    kw_cand base, pos;        /* baseline and incumbent (current position) */
    kw_cand ref;              /* excursion: its start B; fix: the converged config F0 */
    long evals;               /* evaluations journalled for this shape */
    int step;                 /* steps journalled */
    int budget_hit;
    /* main */
    int cursor, no_accept;
    int screened;             /* sweep: the first round (every neighbour) is done */
    int order[KW_KNOB_MAX];   /* sweep: knob order, largest screening gain first */
    int last_knob_accepted;   /* sweep: its other values were just evaluated */
    /* probes */
    int probed;
    uint64_t probed_at;
    int n_first;
    int n_blocked;            /* first[0..n_blocked): guard-failing "blocked gains" */
    int n_faded;              /* then n_faded guard-passing "faded gains" */
    kw_cand first[KW_PROBE_MAX];
    long evals_first_opt;     /* progress: evaluations when it first left the sweep (0: not yet) */
    int plist_ready;          /* the probe list of this local optimum is built */
    kw_item *plist;           /* second steps, most promising first (kw_build_probe_list) */
    int n_plist, cap_plist, pcur;
    /* knob k at value v was once an acceptable step (improving, guard-passing) from some
     * incumbent: when it later fails a guard, another knob's change blocks it (an
     * interaction) and a probe tries to repair it first */
    uint8_t improved[KW_KNOB_MAX][KW_VALUE_MAX];
    /* excursion */
    int n_path;
    kw_cand path[KW_TABU_MAX + 1];
    int moves_left, last_knob;
    /* settle (noiseless OFAT only): every config evaluated, in journal order */
    int settle;               /* this shape settles on the best config evaluated */
    int settled_moved;        /* the last settle moved the incumbent */
    kw_cand *seen;
    int n_seen, cap_seen;
    /* fix */
    int fix_knob;
    int fix_reverts;          /* changes the current fix dropped */
    int post_fix;             /* main resumed after a fix that dropped changes */
    int accepts_since_fix;
    /* random / exhaustive */
    gsl_rng *rng;
    int exhausted;
    kw_cand next;
    int have_best;
    kw_cand rbest;
    double rbest_mean;
    /* this round */
    kw_item *items;
    int n_items, cap_items;
    size_t job0, job1;
} kw_sstate;

typedef struct kw_eng {
    const kw_knobspace *ks;
    const kw_evaluator *ev;
    kw_engine_opts o;
    const kw_run_info *info;
    int primary, reps;
    int n_shapes;
    int shapes[KW_JOURNAL_SHAPE_MAX];
    kw_sstate *S;
    kw_jwriter *w;
    kw_journal *j;            /* resume: the journal being replayed */
    kw_memo memo;
    kw_intern strs;
    kw_pool pool;
    int pool_up;
    kw_job *jobs;
    size_t n_jobs, cap_jobs;
    size_t *live;
    size_t cap_live;
    kw_jbuf rec;
    double t0;
    double shape_cost_s[KW_JOURNAL_SHAPE_MAX]; /* running mean of an evaluation's time */
    kw_engine_summary sum;
    /* progress: what the callback last saw, and when the live (not replayed) part began */
    kw_progress_shape *ps;
    double t_live;            /* end of the replay (t0 for a fresh run) */
    long evals_live0;         /* sum.evals at t_live */
    int replay_over;          /* the replay is over (or there was none) */
    double last_report;
    int last_done;
    long replay_total;        /* resume: journal records to replay */
} kw_eng;

/* Longest expected job first (LPT): shapes differ a lot in evaluation cost
 * (prefill vs decode), and starting the long ones first shortens a round's
 * tail. Only the order in which threads pick jobs changes, never a result. */
static int kw_lpt_cmp(const void *a, const void *b, void *arg)
{
    const kw_eng *E = arg;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double cx = E->shape_cost_s[E->jobs[x].shape];
    double cy = E->shape_cost_s[E->jobs[y].shape];
    if (cx != cy)
        return cx > cy ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Statistics of a config's primary over its journalled repetitions. Computed
 * exactly as kw_journal_stats() does (same order of summation) so `verify`
 * can recompute every recorded figure bit for bit. */
typedef struct kw_cst {
    int n;
    double mean, sd;
    int ok;                   /* evaluated and every repetition passes every guard */
    const char *guards;
} kw_cst;

static void kw_stats(kw_eng *E, int shape, uint64_t id, kw_cst *o)
{
    double x[1024];
    double sum = 0;
    memset(o, 0, sizeof *o);
    o->guards = "";
    o->ok = 1;
    for (int r = 0; r < E->reps; r++) {
        const kw_memo_ent *e = kw_memo_find(&E->memo, shape, id, r);
        if (!e || e->state != KW_MEMO_DONE)
            continue;
        if (o->n < 1024)
            x[o->n] = e->primary;
        sum += e->primary;
        o->n++;
        if ((e->guards[0] || e->rc != 0) && o->ok) {
            o->ok = 0;
            o->guards = e->guards[0] ? e->guards : "error";
        }
    }
    if (o->n == 0) {
        o->ok = 0;
        o->mean = NAN;
        return;
    }
    o->mean = sum / o->n;
    double ss = 0;
    int nv = o->n < 1024 ? o->n : 1024;
    for (int i = 0; i < nv; i++)
        ss += (x[i] - o->mean) * (x[i] - o->mean);
    o->sd = nv > 1 ? sqrt(ss / (nv - 1)) : 0.0;
}

static void kw_stats_c(kw_eng *E, kw_sstate *s, const kw_cand *c, kw_cst *o)
{
    kw_stats(E, s->shape, kw_cand_id(E->ks, c), o);
}

/* ------------------------------------------------------------------ judging */

double kw_engine_welch_p(double mean_a, double sd_a, int n_a, double mean_b, double sd_b, int n_b)
{
    if (n_a < 2 || n_b < 2)
        return NAN;
    double va = sd_a * sd_a / n_a, vb = sd_b * sd_b / n_b, se2 = va + vb;
    if (!(se2 > 0))
        return mean_b < mean_a ? 0.0 : 1.0;
    double t = (mean_a - mean_b) / sqrt(se2);
    /* Welch-Satterthwaite degrees of freedom (Welch 1947). */
    double den = 0;
    if (va > 0)
        den += va * va / (n_a - 1);
    if (vb > 0)
        den += vb * vb / (n_b - 1);
    double df = se2 * se2 / den;
    return gsl_cdf_tdist_Q(t, df);
}

typedef struct kw_verdict {
    int ok;        /* acceptable */
    double gain;   /* % improvement of the primary over the reference (positive = better) */
    double p;      /* adjusted p-value or NAN */
    char why[KW_REASON_LEN];
} kw_verdict;

static double kw_gain_pct(double ref, double x)
{
    if (ref == 0)
        return x < 0 ? INFINITY : (x > 0 ? -INFINITY : 0.0);
    return (ref - x) / fabs(ref) * 100.0;
}

/* The acceptance rule: c against the reference config ref; m candidates are
 * compared in the decision (Bonferroni). prefix names the reference in reasons. */
static void kw_judge(kw_eng *E, const kw_cst *ref, const kw_cst *c, int m, const char *prefix,
                     kw_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->p = NAN;
    v->gain = kw_gain_pct(ref->mean, c->mean);
    if (c->n == 0) {
        snprintf(v->why, sizeof v->why, "not evaluated");
        return;
    }
    if (!c->ok) {
        snprintf(v->why, sizeof v->why, "guard %s", c->guards);
        return;
    }
    if (!isfinite(c->mean)) {
        snprintf(v->why, sizeof v->why, "primary metric not finite");
        return;
    }
    if (!ref->ok) {
        v->ok = 1;
        snprintf(v->why, sizeof v->why, "%srepairs failing guards (%s)", prefix, ref->guards);
        return;
    }
    if (!(v->gain >= E->o.min_effect_pct)) {
        if (v->gain < 0)
            snprintf(v->why, sizeof v->why, "%sworse by %.2f%%", prefix, -v->gain);
        else if (v->gain == 0)
            snprintf(v->why, sizeof v->why, "%sno change", prefix);
        else
            snprintf(v->why, sizeof v->why, "%sgain %.2f%% below the minimum effect %.2f%%", prefix,
                     v->gain, E->o.min_effect_pct);
        return;
    }
    if (E->ev->noisy) {
        double p = kw_engine_welch_p(ref->mean, ref->sd, ref->n, c->mean, c->sd, c->n);
        v->p = isnan(p) ? 1.0 : fmin(1.0, p * (m > 0 ? m : 1));
        if (!(v->p < E->o.alpha)) {
            snprintf(v->why, sizeof v->why, "%sgain %.2f%% not significant (p %.3g >= alpha %.3g)",
                     prefix, v->gain, v->p, E->o.alpha);
            return;
        }
        v->ok = 1;
        snprintf(v->why, sizeof v->why, "%sgain %.2f%% (p %.3g)", prefix, v->gain, v->p);
        return;
    }
    v->ok = 1;
    snprintf(v->why, sizeof v->why, "%sgain %.2f%%", prefix, v->gain);
}

/* ------------------------------------------------------------------ records */

static int kw_add(kw_eng *E)
{
    if (E->rec.oom)
        return kw_error_set(KW_ENOMEM, "out of memory formatting a journal record");
    int rc = kw_jwriter_add(E->w, E->rec.s);
    kw_jbuf_reset(&E->rec);
    return rc;
}

static void kw_id(kw_jbuf *b, const char *key, uint64_t id)
{
    kw_jbuf_printf(b, " %s=%016llx", key, (unsigned long long)id);
}

static int kw_emit_header(kw_eng *E)
{
    kw_jbuf *b = &E->rec;
    const kw_knobspace *ks = E->ks;
    int rc;
    kw_jbuf_printf(b, "H format=%d", KW_JOURNAL_FORMAT);
    kw_jbuf_str(b, "version", E->info->version ? E->info->version : "");
    kw_jbuf_printf(b, " seed=%llu strategy=%s policy=%s budget=%ld",
                   (unsigned long long)E->o.seed, kw_strategy_name(E->o.strategy),
                   kw_policy_name(E->o.policy), E->o.budget);
    kw_jbuf_str(b, "metric", E->o.metric);
    kw_jbuf_dbl(b, "min_effect", E->o.min_effect_pct);
    kw_jbuf_dbl(b, "alpha", E->o.alpha);
    kw_jbuf_printf(b, " repeats=%d noisy=%d tabu=%d probes=%d tuned=", E->reps,
                   E->ev->noisy ? 1 : 0, E->o.tabu, E->o.probes);
    for (int i = 0; i < E->n_shapes; i++)
        kw_jbuf_printf(b, i ? ",%d" : "%d", E->shapes[i]);
    if ((rc = kw_add(E)) != 0)
        return rc;
    for (int i = 0; i < E->info->n_attrs; i++) {
        kw_jbuf_printf(b, "A");
        kw_jbuf_str(b, "key", E->info->attr_keys[i]);
        kw_jbuf_str(b, "value", E->info->attr_values[i]);
        if ((rc = kw_add(E)) != 0)
            return rc;
    }
    for (int i = 0; i < E->info->n_inputs; i++) {
        kw_jbuf_printf(b, "I");
        kw_jbuf_str(b, "name", E->info->input_names[i]);
        kw_jbuf_str(b, "hash", E->info->input_hashes[i]);
        if ((rc = kw_add(E)) != 0)
            return rc;
    }
    for (int i = 0; i < ks->n_knobs; i++) {
        const kw_knob *k = &ks->knobs[i];
        kw_jbuf_printf(b, "K i=%d", i);
        kw_jbuf_str(b, "name", k->name);
        kw_jbuf_printf(b, " base=%d", k->baseline);
        for (int v = 0; v < k->n_values; v++) {
            if (v == 0) {
                kw_jbuf_str(b, "values", k->values[v]);
            } else {
                kw_jbuf_printf(b, ",");
                kw_jbuf_str(b, NULL, k->values[v]);
            }
        }
        if ((rc = kw_add(E)) != 0)
            return rc;
    }
    for (int i = 0; i < ks->n_constraints; i++) {
        const kw_constraint *c = &ks->constraints[i];
        kw_jbuf_printf(b, "C i=%d", i);
        kw_jbuf_str(b, "name", c->name);
        kw_jbuf_printf(b, " terms=");
        for (int t = 0; t < c->n_terms; t++)
            kw_jbuf_printf(b, "%s%d:%llx", t ? "," : "", c->terms[t].knob,
                           (unsigned long long)c->terms[t].mask);
        if ((rc = kw_add(E)) != 0)
            return rc;
    }
    kw_jbuf_printf(b, "M names=");
    for (int i = 0; i < E->ev->n_metrics; i++) {
        if (i)
            kw_jbuf_printf(b, ",");
        kw_jbuf_str(b, NULL, E->ev->metric_names[i]);
    }
    if ((rc = kw_add(E)) != 0)
        return rc;
    for (int i = 0; i < E->ev->n_shapes; i++) {
        kw_jbuf_printf(b, "S i=%d", i);
        kw_jbuf_str(b, "name", E->ev->shape_names[i]);
        if ((rc = kw_add(E)) != 0)
            return rc;
    }
    return 0;
}

static int kw_emit_eval(kw_eng *E, int shape, uint64_t id, int rep, const kw_cand *c, int rc_eval,
                        const double *m, const char *guards, const char *klass)
{
    kw_jbuf *b = &E->rec;
    kw_jbuf_printf(b, "E s=%d", shape);
    kw_id(b, "id", id);
    kw_jbuf_printf(b, " rep=%d", rep);
    kw_jbuf_cand(b, "c", E->ks, c);
    kw_jbuf_printf(b, " rc=%d m=", rc_eval);
    for (int i = 0; i < E->ev->n_metrics; i++) {
        if (i)
            kw_jbuf_printf(b, ",");
        kw_jbuf_dbl(b, NULL, m[i]);
    }
    kw_jbuf_str(b, "g", guards);
    kw_jbuf_str(b, "k", klass);
    return kw_add(E);
}

int kw_engine_step_check(int *knob, const kw_knobspace *ks, const kw_cand *from, const kw_cand *to)
{
    int n = 0, first = -1;
    char names[512] = "";
    size_t used = 0;
    for (int i = 0; i < ks->n_knobs; i++) {
        if (from->v[i] == to->v[i])
            continue;
        if (first < 0)
            first = i;
        n++;
        int w = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                         ks->knobs[i].name);
        if (w > 0 && (size_t)w < sizeof names - used)
            used += (size_t)w;
    }
    if (n != 1)
        return kw_error_set(KW_ESTATE, "refused step: it changes %d knobs%s%s%s (exactly one allowed)",
                            n, n ? " (" : "", names, n ? ")" : "");
    if (knob)
        *knob = first;
    return 0;
}

static int kw_is_move(kw_decision d)
{
    return d == KW_DECIDE_ACCEPT || d == KW_DECIDE_EXPLORE || d == KW_DECIDE_REVERT;
}

/* THE step function: every step of every phase goes through here. It refuses
 * (KW_ESTATE, nothing journalled) a step that does not change exactly one knob
 * of the incumbent, journals the decision, and moves the incumbent on ACCEPT,
 * EXPLORE and REVERT. */
static int kw_step(kw_eng *E, kw_sstate *s, const kw_cand *to, kw_decision d, kw_step_phase ph,
                   double p, int con, const char *why)
{
    int knob;
    int rc = kw_engine_step_check(&knob, E->ks, &s->pos, to);
    if (rc != 0)
        return rc;
    if (kw_is_move(d) && con >= 0)
        return kw_error_set(KW_ESTATE, "refused step: moving to a config that breaks a constraint");
    const kw_knob *k = &E->ks->knobs[knob];
    kw_cst a, c;
    kw_stats_c(E, s, &s->pos, &a);
    if (con >= 0) {
        memset(&c, 0, sizeof c);
        c.mean = NAN;
    } else {
        kw_stats_c(E, s, to, &c);
    }
    if (kw_is_move(d) && c.n == 0)
        return kw_error_set(KW_ESTATE, "refused step: moving to a config never evaluated");
    char g[KW_GUARDS_LEN + 80];
    if (con >= 0)
        snprintf(g, sizeof g, "constraint:%s", E->ks->constraints[con].name);
    else
        snprintf(g, sizeof g, "%s", c.guards);
    double delta = (a.mean != 0 && isfinite(a.mean) && isfinite(c.mean))
                       ? (c.mean - a.mean) / fabs(a.mean) * 100.0
                       : NAN;
    kw_jbuf *b = &E->rec;
    s->step++;
    kw_jbuf_printf(b, "T s=%d step=%d phase=%s d=%s", s->shape, s->step, kw_step_phase_name(ph),
                   kw_decision_name(d));
    kw_id(b, "parent", kw_cand_id(E->ks, &s->pos));
    kw_id(b, "id", kw_cand_id(E->ks, to));
    kw_jbuf_str(b, "knob", k->name);
    kw_jbuf_str(b, "old", k->values[s->pos.v[knob]]);
    kw_jbuf_str(b, "new", k->values[to->v[knob]]);
    kw_jbuf_dbl(b, "before", a.mean);
    kw_jbuf_dbl(b, "after", c.mean);
    kw_jbuf_dbl(b, "delta", delta);
    kw_jbuf_dbl(b, "p", p);
    kw_jbuf_printf(b, " nb=%d na=%d", a.n, c.n);
    kw_jbuf_str(b, "g", g);
    kw_jbuf_str(b, "con", con >= 0 ? E->ks->constraints[con].name : "");
    kw_jbuf_cand(b, "c", E->ks, to);
    kw_jbuf_str(b, "why", why);
    if ((rc = kw_add(E)) != 0)
        return rc;
    if (kw_is_move(d))
        s->pos = *to;
    return 0;
}

static int kw_emit_viol(kw_eng *E, kw_sstate *s, const kw_item *it, const char *why)
{
    kw_jbuf *b = &E->rec;
    kw_jbuf_printf(b, "V s=%d", s->shape);
    kw_id(b, "id", it->id);
    kw_jbuf_cand(b, "c", E->ks, &it->cand);
    kw_jbuf_str(b, "con", E->ks->constraints[it->con].name);
    kw_jbuf_str(b, "why", why);
    return kw_add(E);
}

static int kw_emit_done(kw_eng *E, kw_sstate *s, const kw_cand *best, const char *why)
{
    kw_cst bs, bb;
    kw_stats_c(E, s, &s->base, &bs);
    kw_stats_c(E, s, best, &bb);
    kw_jbuf *b = &E->rec;
    kw_jbuf_printf(b, "D s=%d", s->shape);
    kw_jbuf_str(b, "why", why);
    kw_id(b, "base", kw_cand_id(E->ks, &s->base));
    kw_jbuf_dbl(b, "base_p", bs.mean);
    kw_id(b, "best", kw_cand_id(E->ks, best));
    kw_jbuf_dbl(b, "best_p", bb.mean);
    kw_jbuf_cand(b, "c", E->ks, best);
    kw_jbuf_printf(b, " evals=%ld steps=%d", s->evals, s->step);
    return kw_add(E);
}

/* ------------------------------------------------------------------ planning */

static int kw_item_add(kw_eng *E, kw_sstate *s, const kw_cand *c, int group)
{
    if (s->n_items == s->cap_items) {
        int cap = s->cap_items ? s->cap_items * 2 : 64;
        kw_item *n = realloc(s->items, (size_t)cap * sizeof *n);
        if (!n)
            return kw_error_set(KW_ENOMEM, "out of memory planning candidates");
        s->items = n;
        s->cap_items = cap;
    }
    kw_item *it = &s->items[s->n_items++];
    it->cand = *c;
    it->id = kw_cand_id(E->ks, c);
    it->con = kw_cand_violates(E->ks, c);
    it->group = group;
    it->dropped = 0;
    return 0;
}

/* Every single-knob neighbour of `from`, knob by knob, values ascending. */
static int kw_add_neighbours(kw_eng *E, kw_sstate *s, const kw_cand *from, int skip_knob, int group)
{
    for (int k = 0; k < E->ks->n_knobs; k++) {
        if (k == skip_knob)
            continue;
        for (int v = 0; v < E->ks->knobs[k].n_values; v++) {
            if (v == from->v[k])
                continue;
            kw_cand c = *from;
            c.v[k] = (uint8_t)v;
            int rc = kw_item_add(E, s, &c, group);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

static void kw_enter_fix(kw_sstate *s)
{
    if (s->settle && s->st != ST_SETTLE) {
        s->st = ST_SETTLE;
        return;
    }
    s->ref = s->pos;
    s->fix_knob = 0;
    s->fix_reverts = 0;
    s->st = ST_FIX;
}

static void kw_enter_explore(kw_eng *E, kw_sstate *s)
{
    if (E->o.tabu <= 0 || s->budget_hit) {
        kw_enter_fix(s);
        return;
    }
    s->ref = s->pos;
    s->n_path = 1;
    s->path[0] = s->pos;
    s->moves_left = E->o.tabu;
    s->last_knob = -1;
    s->st = ST_EXPLORE;
}

static void kw_after_main(kw_eng *E, kw_sstate *s)
{
    if (s->post_fix && s->accepts_since_fix == 0) {
        s->st = ST_FINISH; /* nothing new after the fix: done */
        return;
    }
    s->post_fix = 0;
    uint64_t here = kw_cand_id(E->ks, &s->pos);
    if (E->o.probes > 0 && !s->budget_hit && !(s->probed && s->probed_at == here))
        s->st = ST_PROBE;
    else
        kw_enter_explore(E, s);
}

/* A probe first step's class: 0 a blocked gain (fails a guard now, but the same
 * knob value was an acceptable step from an earlier incumbent: a later change
 * blocks it, so a second knob may repair it), 1 a faded gain (passes, was
 * acceptable earlier, now worse by at least min_effect: a later change turned
 * the gain into a loss, so changing one of the changed knobs again may bring it
 * back), 2 another guard-passing one, 3 another guard failure; -1 not usable
 * (not fully evaluated, evaluator error, not finite). */
static int kw_first_class(kw_eng *E, kw_sstate *s, const kw_cand *c, int k, kw_cst *cs)
{
    kw_stats_c(E, s, c, cs);
    if (cs->n != E->reps || !isfinite(cs->mean))
        return -1;
    if (cs->ok) {
        kw_cst inc;
        kw_stats_c(E, s, &s->pos, &inc);
        return s->improved[k][c->v[k]] && -kw_gain_pct(inc.mean, cs->mean) >= E->o.min_effect_pct
                   ? 1 : 2;
    }
    if (strncmp(cs->guards, "error", 5) == 0)
        return -1;
    return s->improved[k][c->v[k]] ? 0 : 3;
}

/* Pick the probes' first steps among the incumbent's evaluated single-knob
 * neighbours (a local optimum has none acceptable): blocked gains, faded gains
 * (most faded first), other guard-passing ones, other guard failures; least bad
 * first within a class (stable: earlier knob/value wins ties). A guard-failing first step is never
 * taken for itself: only a pair that passes every guard and beats the
 * incumbent is accepted, so the second step must repair the guard. */
static void kw_pick_firsts(kw_eng *E, kw_sstate *s)
{
    int cls[KW_PROBE_MAX];
    double mean[KW_PROBE_MAX];
    s->n_first = 0;
    s->n_blocked = 0;
    s->n_faded = 0;
    int want = E->o.probes < KW_PROBE_MAX ? E->o.probes : KW_PROBE_MAX;
    for (int k = 0; k < E->ks->n_knobs; k++)
        for (int v = 0; v < E->ks->knobs[k].n_values; v++) {
            if (v == s->pos.v[k])
                continue;
            kw_cand c = s->pos;
            c.v[k] = (uint8_t)v;
            if (kw_cand_violates(E->ks, &c) >= 0)
                continue;
            kw_cst cs;
            int cl = kw_first_class(E, s, &c, k, &cs);
            if (cl < 0)
                continue;
            double key = cl == 1 ? -cs.mean : cs.mean; /* faded gains: most faded first */
            int at = s->n_first;
            while (at > 0 && (cl < cls[at - 1] || (cl == cls[at - 1] && key < mean[at - 1])))
                at--;
            if (at >= want)
                continue;
            int last = s->n_first < want ? s->n_first : want - 1;
            for (int i = last; i > at; i--) {
                s->first[i] = s->first[i - 1];
                cls[i] = cls[i - 1];
                mean[i] = mean[i - 1];
            }
            s->first[at] = c;
            cls[at] = cl;
            mean[at] = key;
            if (s->n_first < want)
                s->n_first++;
        }
    for (int i = 0; i < s->n_first; i++) {
        s->n_blocked += cls[i] == 0;
        s->n_faded += cls[i] == 1;
    }
}

static int kw_reserve(kw_eng *E, kw_sstate *s)
{
    if (s->st == ST_MAIN || s->st == ST_PROBE)
        return E->reps * kw_cand_distance(E->ks, &s->pos, &s->base);
    if (s->st == ST_EXPLORE)
        return E->reps * kw_cand_distance(E->ks, &s->ref, &s->base);
    return 0;
}

/* Memo cost of a candidate this round: repetitions not yet journalled or pending. */
static int kw_cost(kw_eng *E, kw_sstate *s, uint64_t id)
{
    int n = 0;
    for (int r = 0; r < E->reps; r++) {
        const kw_memo_ent *e = kw_memo_find(&E->memo, s->shape, id, r);
        n += !e || (e->state != KW_MEMO_DONE && e->state != KW_MEMO_PENDING);
    }
    return n;
}

static int kw_in_items(const kw_sstate *s, uint64_t id)
{
    for (int i = 0; i < s->n_items; i++)
        if (s->items[i].id == id)
            return 1;
    return 0;
}

static int kw_plan_random(kw_eng *E, kw_sstate *s)
{
    long planned = 0;
    int fresh = 0;
    long stall = 0;
    while (fresh < KW_RANDOM_BATCH) {
        if (E->o.budget > 0 && s->evals + planned + E->reps > E->o.budget) {
            s->budget_hit = 1;
            break;
        }
        if (stall >= KW_RANDOM_STALL) {
            s->exhausted = 1;
            break;
        }
        kw_cand c;
        memset(&c, 0, sizeof c);
        for (int k = 0; k < E->ks->n_knobs; k++)
            c.v[k] = (uint8_t)gsl_rng_uniform_int(s->rng, (unsigned long)E->ks->knobs[k].n_values);
        uint64_t id = kw_cand_id(E->ks, &c);
        if (kw_cand_violates(E->ks, &c) >= 0) {
            stall++;
            int rc = kw_item_add(E, s, &c, 0);
            if (rc != 0)
                return rc;
            continue;
        }
        if (kw_cost(E, s, id) < E->reps || kw_in_items(s, id)) {
            stall++; /* drawn before: without replacement, draw again */
            continue;
        }
        stall = 0;
        int rc = kw_item_add(E, s, &c, 0);
        if (rc != 0)
            return rc;
        planned += E->reps;
        fresh++;
    }
    return 0;
}

static int kw_plan_exhaust(kw_eng *E, kw_sstate *s)
{
    long planned = 0;
    int n = 0;
    while (n < KW_EXHAUST_BATCH && !s->exhausted) {
        kw_cand c = s->next;
        uint64_t id = kw_cand_id(E->ks, &c);
        int cost = kw_cand_violates(E->ks, &c) >= 0 ? 0 : kw_cost(E, s, id);
        if (E->o.budget > 0 && s->evals + planned + cost > E->o.budget) {
            s->budget_hit = 1;
            break;
        }
        int rc = kw_item_add(E, s, &c, 0);
        if (rc != 0)
            return rc;
        planned += cost;
        n++;
        /* next in mixed radix, last knob fastest */
        int k = E->ks->n_knobs - 1;
        for (; k >= 0; k--) {
            if (++s->next.v[k] < E->ks->knobs[k].n_values)
                break;
            s->next.v[k] = 0;
        }
        if (k < 0)
            s->exhausted = 1;
    }
    return 0;
}

static int kw_items_push(kw_eng *E, kw_item **arr, int *n, int *cap, const kw_cand *c, int group)
{
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 256;
        kw_item *a = realloc(*arr, (size_t)nc * sizeof *a);
        if (!a)
            return kw_error_set(KW_ENOMEM, "out of memory planning probes");
        *arr = a;
        *cap = nc;
    }
    kw_item *it = &(*arr)[(*n)++];
    it->cand = *c;
    it->id = kw_cand_id(E->ks, c);
    it->con = kw_cand_violates(E->ks, c);
    it->group = group;
    it->dropped = 0;
    return 0;
}

/* A set of config ids (open addressing; 0 is never a config id in practice,
 * and a collision with it only costs a duplicate probe). */
typedef struct kw_idset {
    uint64_t *t;
    size_t cap;
} kw_idset;

static int kw_idset_add(kw_idset *set, uint64_t id)
{
    size_t h = kw_mix64(id) & (set->cap - 1);
    while (set->t[h]) {
        if (set->t[h] == id)
            return 0;
        h = (h + 1) & (set->cap - 1);
    }
    set->t[h] = id;
    return 1;
}

typedef struct kw_second {
    int knob, value, order;
    double key;
} kw_second;

static int kw_second_cmp(const void *a, const void *b)
{
    const kw_second *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->order - y->order;
}

/* Every neighbour of first step g along another knob, ordered by what the same
 * change did alone from the incumbent (key[k][v], least bad first: a change
 * that costs nothing alone is the likeliest repair or partner). */
static int kw_probe_neighbours(kw_eng *E, kw_sstate *s, int g, double key[][KW_VALUE_MAX],
                               kw_second *buf, kw_idset *seen, int changed_only)
{
    const kw_knobspace *ks = E->ks;
    int fk;
    kw_engine_step_check(&fk, ks, &s->pos, &s->first[g]);
    int n = 0;
    for (int k = 0; k < ks->n_knobs; k++) {
        if (k == fk || (changed_only && s->pos.v[k] == s->base.v[k]))
            continue;
        for (int v = 0; v < ks->knobs[k].n_values; v++) {
            if (v == s->pos.v[k])
                continue;
            buf[n].knob = k;
            buf[n].value = v;
            buf[n].order = n;
            buf[n].key = key[k][v];
            n++;
        }
    }
    qsort(buf, (size_t)n, sizeof *buf, kw_second_cmp);
    for (int i = 0; i < n; i++) {
        kw_cand c = s->first[g];
        c.v[buf[i].knob] = (uint8_t)buf[i].value;
        if (!kw_idset_add(seen, kw_cand_id(ks, &c)))
            continue;
        int rc = kw_items_push(E, &s->plist, &s->n_plist, &s->cap_plist, &c, g);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The probe list of a local optimum, most promising first, so that the budget
 * (spent KW_PROBE_CHUNK evaluations per round) goes to the likeliest pairs:
 * (1) every neighbour of each blocked gain (the repair of a guard that a later
 * change made fail); (1b) each faded gain with every other value of the knobs
 * changed from the baseline (the culprit is among them: a few evaluations);
 * (2) pairs of two other first steps (two near-neutral
 * changes combined: the typical interaction, one evaluation per pair), by rank
 * sum; (3) every other neighbour of each other first step. Items carry their
 * first step's group. */
static int kw_build_probe_list(kw_eng *E, kw_sstate *s)
{
    const kw_knobspace *ks = E->ks;
    int rc = 0;
    s->n_plist = 0;
    s->pcur = 0;
    double key[KW_KNOB_MAX][KW_VALUE_MAX];
    int n_nb = 0;
    for (int k = 0; k < ks->n_knobs; k++)
        for (int v = 0; v < ks->knobs[k].n_values; v++) {
            key[k][v] = INFINITY;
            if (v == s->pos.v[k])
                continue;
            n_nb++;
            kw_cand c = s->pos;
            c.v[k] = (uint8_t)v;
            kw_cst cs;
            kw_stats_c(E, s, &c, &cs);
            if (cs.n == E->reps && cs.ok && isfinite(cs.mean))
                key[k][v] = cs.mean;
        }
    kw_idset seen = {NULL, 1};
    while (seen.cap < (size_t)(s->n_first + 1) * (size_t)(n_nb + 1) * 2)
        seen.cap *= 2;
    seen.t = calloc(seen.cap, sizeof *seen.t);
    kw_second *buf = malloc((size_t)(n_nb + 1) * sizeof *buf);
    if (!seen.t || !buf) {
        rc = kw_error_set(KW_ENOMEM, "out of memory planning probes");
        goto done;
    }
    int knob[KW_PROBE_MAX];
    for (int i = 0; i < s->n_first; i++)
        kw_engine_step_check(&knob[i], ks, &s->pos, &s->first[i]);
    for (int g = 0; g < s->n_blocked && rc == 0; g++)
        rc = kw_probe_neighbours(E, s, g, key, buf, &seen, 0);
    for (int g = s->n_blocked; g < s->n_blocked + s->n_faded && rc == 0; g++)
        rc = kw_probe_neighbours(E, s, g, key, buf, &seen, 1);
    int lo = s->n_blocked, hi = s->n_first;
    for (int sum = 2 * lo + 1; sum <= 2 * hi - 3 && rc == 0; sum++)
        for (int i = lo; i < hi && rc == 0; i++) {
            int j = sum - i;
            if (j <= i)
                break;
            if (j >= hi || knob[j] == knob[i])
                continue;
            kw_cand c = s->first[i];
            c.v[knob[j]] = s->first[j].v[knob[j]];
            if (kw_idset_add(&seen, kw_cand_id(ks, &c)))
                rc = kw_items_push(E, &s->plist, &s->n_plist, &s->cap_plist, &c, i);
        }
    for (int g = lo; g < hi && rc == 0; g++)
        rc = kw_probe_neighbours(E, s, g, key, buf, &seen, 0);
    if (rc == 0)
        s->plist_ready = 1;
done:
    free(seen.t);
    free(buf);
    return rc;
}

/* This round's share of the probe list: up to KW_PROBE_CHUNK configs not yet
 * evaluated (memo hits and constraint breakers ride along for free). */
static int kw_plan_probe_chunk(kw_eng *E, kw_sstate *s)
{
    int fresh = 0;
    while (s->pcur < s->n_plist && s->n_items < KW_PROBE_CHUNK_ITEMS) {
        const kw_item *p = &s->plist[s->pcur];
        int costs = p->con < 0 && kw_cost(E, s, p->id) > 0;
        if (costs && fresh >= KW_PROBE_CHUNK)
            break;
        int rc = kw_item_add(E, s, &p->cand, p->group);
        if (rc != 0)
            return rc;
        fresh += costs;
        s->pcur++;
    }
    return 0;
}

/* Plan the shape's next batch (possibly empty for decide-only states). */
static int kw_plan(kw_eng *E, kw_sstate *s)
{
    s->n_items = 0;
    const kw_knobspace *ks = E->ks;
    for (int guard = 0; guard < 4 * KW_KNOB_MAX + 16; guard++) {
        switch (s->st) {
        case ST_BASE:
            return kw_item_add(E, s, &s->base, 0);
        case ST_MAIN:
            if (s->budget_hit) {
                kw_enter_fix(s);
                continue;
            }
            if (E->o.policy == KW_POLICY_SWEEP) {
                if (s->no_accept >= ks->n_knobs) {
                    kw_after_main(E, s);
                    continue;
                }
                if (!s->screened)
                    return kw_add_neighbours(E, s, &s->pos, -1, 0);
                int k = s->order[s->cursor];
                if (ks->knobs[k].n_values < 2 || k == s->last_knob_accepted) {
                    s->cursor = (s->cursor + 1) % ks->n_knobs;
                    s->no_accept++;
                    continue;
                }
                for (int v = 0; v < ks->knobs[k].n_values; v++) {
                    if (v == s->pos.v[k])
                        continue;
                    kw_cand c = s->pos;
                    c.v[k] = (uint8_t)v;
                    int rc = kw_item_add(E, s, &c, 0);
                    if (rc != 0)
                        return rc;
                }
                return 0;
            }
            return kw_add_neighbours(E, s, &s->pos, -1, 0);
        case ST_PROBE:
            if (s->budget_hit) {
                s->plist_ready = 0;
                kw_enter_fix(s);
                continue;
            }
            if (!s->plist_ready) {
                kw_pick_firsts(E, s);
                int rc = s->n_first > 0 ? kw_build_probe_list(E, s) : 0;
                if (rc != 0)
                    return rc;
            }
            if (s->n_first == 0 || s->pcur >= s->n_plist) {
                s->plist_ready = 0;
                s->probed = 1;
                s->probed_at = kw_cand_id(ks, &s->pos);
                kw_enter_explore(E, s);
                continue;
            }
            return kw_plan_probe_chunk(E, s);
        case ST_EXPLORE:
            if (s->budget_hit) {
                if (s->n_path > 1)
                    s->st = ST_BACKTRACK;
                else
                    kw_enter_fix(s);
                continue;
            }
            return kw_add_neighbours(E, s, &s->pos, -1, 0);
        case ST_BACKTRACK:
        case ST_SETTLE:
        case ST_FINISH:
        case ST_DONE:
            return 0;
        case ST_FIX: {
            int k = s->fix_knob;
            while (k < ks->n_knobs && s->pos.v[k] == s->base.v[k])
                k++;
            if (k >= ks->n_knobs) {
                if ((s->fix_reverts > 0 || s->settled_moved) && !s->budget_hit) {
                    /* dropping a change or settling moved the incumbent: search
                     * on from there. A settle strictly improves the incumbent;
                     * after a fix that only dropped changes the shape finishes
                     * unless main accepts a step (each such cycle gains at
                     * least min_effect^2, or min_effect when noiseless), so it ends */
                    s->st = ST_MAIN;
                    s->no_accept = 0;
                    s->last_knob_accepted = -1;
                    s->post_fix = !s->settled_moved;
                    s->accepts_since_fix = 0;
                    s->settled_moved = 0;
                    continue;
                }
                s->st = ST_FINISH;
                return 0;
            }
            s->fix_knob = k;
            kw_cand c = s->pos;
            c.v[k] = s->base.v[k];
            return kw_item_add(E, s, &c, 0);
        }
        case ST_RANDOM:
            return kw_plan_random(E, s);
        case ST_EXHAUST:
            return kw_plan_exhaust(E, s);
        }
    }
    return kw_error_set(KW_ESTATE, "engine planning does not converge (state %d)", (int)s->st);
}

/* Turn a shape's plan into jobs: memo hits cost nothing, journal entries are
 * replayed, the rest is evaluated. Items beyond the budget are dropped. */
/* opts.screen: rank the round's new configs by the evaluator's prediction
 * (guard-passing first, then by predicted primary, then plan order) and mark
 * all but the best `screen` in keep[] as 0. Deterministic. */
typedef struct kw_scr {
    int item, fails;
    double pred;
} kw_scr;

static int kw_scr_cmp(const void *a, const void *b)
{
    const kw_scr *x = a, *y = b;
    if (x->fails != y->fails)
        return x->fails - y->fails;
    if (x->pred != y->pred)
        return x->pred < y->pred ? -1 : 1;
    return x->item - y->item;
}

static int kw_screen_items(kw_eng *E, kw_sstate *s, unsigned char *keep)
{
    int n = 0;
    kw_scr *v = malloc((size_t)(s->n_items > 0 ? s->n_items : 1) * sizeof *v);
    if (!v)
        return kw_error_set(KW_ENOMEM, "out of memory screening candidates");
    for (int i = 0; i < s->n_items; i++) {
        keep[i] = 1;
        kw_item *it = &s->items[i];
        if (it->con >= 0 || kw_cost(E, s, it->id) == 0)
            continue;
        kw_metrics m;
        memset(&m, 0, sizeof m);
        int rc = E->ev->predict(E->ev->ctx, &it->cand, s->shape, &m);
        v[n].item = i;
        v[n].fails = rc != 0 || m.guards[0] != '\0';
        v[n].pred = rc == 0 && isfinite(m.v[E->primary]) ? m.v[E->primary] : HUGE_VAL;
        kw_error_clear();
        n++;
    }
    qsort(v, (size_t)n, sizeof *v, kw_scr_cmp);
    for (int k = E->o.screen; k < n; k++)
        keep[v[k].item] = 0;
    free(v);
    return 0;
}

static int kw_build_jobs(kw_eng *E, kw_sstate *s)
{
    s->job0 = E->n_jobs;
    long limit = E->o.budget > 0 ? E->o.budget - kw_reserve(E, s) : -1;
    long planned = 0;
    unsigned char *keep = NULL;
    if (E->o.screen > 0 && E->ev->predict && s->n_items > E->o.screen) {
        keep = malloc((size_t)s->n_items);
        if (!keep)
            return kw_error_set(KW_ENOMEM, "out of memory screening candidates");
        int rc = kw_screen_items(E, s, keep);
        if (rc != 0) {
            free(keep);
            return rc;
        }
    }
    for (int i = 0; i < s->n_items; i++) {
        kw_item *it = &s->items[i];
        if (it->con >= 0)
            continue;
        int cost = kw_cost(E, s, it->id);
        if (limit >= 0 && cost > 0 && s->evals + planned + cost > limit) {
            it->dropped = 1;
            s->budget_hit = 1;
            continue;
        }
        planned += cost;
        for (int r = 0; r < E->reps; r++) {
            kw_memo_ent *e = kw_memo_put(&E->memo, s->shape, it->id, r);
            if (!e) {
                free(keep);
                return kw_error_set(KW_ENOMEM, "out of memory in the evaluation memo");
            }
            if (e->state == KW_MEMO_DONE || e->state == KW_MEMO_PENDING)
                continue;
            if (E->n_jobs == E->cap_jobs) {
                size_t cap = E->cap_jobs ? E->cap_jobs * 2 : 256;
                kw_job *nj = realloc(E->jobs, cap * sizeof *nj);
                if (!nj) {
                    free(keep);
                    return kw_error_set(KW_ENOMEM, "out of memory queueing evaluations");
                }
                E->jobs = nj;
                E->cap_jobs = cap;
            }
            kw_job *j = &E->jobs[E->n_jobs++];
            j->cand = it->cand;
            j->id = it->id;
            j->shape = s->shape;
            j->rep = r;
            j->rc = 0;
            j->live = e->state != KW_MEMO_JOURNAL;
            j->je = e->state == KW_MEMO_JOURNAL ? e->je : NULL;
            j->screened = j->live && keep && !keep[i];
            j->primary = E->primary;
            e->state = KW_MEMO_PENDING;
        }
    }
    free(keep);
    s->job1 = E->n_jobs;
    return 0;
}

/* ------------------------------------------------------------------ deciding */

static int kw_fatal(int rc)
{
    return rc == KW_ENOMEM || rc == KW_EIO || rc == KW_EINTERRUPTED;
}

/* Journal this shape's evaluations of the round and put them in the memo. */
static int kw_emit_evals(kw_eng *E, kw_sstate *s)
{
    for (size_t i = s->job0; i < s->job1; i++) {
        kw_job *j = &E->jobs[i];
        int rc;
        int rc_eval;
        const char *g;
        double primary;
        if (j->live) {
            char eg[KW_GUARDS_LEN];
            if (j->rc != 0 && !j->m.guards[0])
                snprintf(eg, sizeof eg, "error:%.200s", j->err[0] ? j->err : "evaluation failed");
            else
                snprintf(eg, sizeof eg, "%s", j->m.guards);
            rc = kw_emit_eval(E, j->shape, j->id, j->rep, &j->cand, j->rc, j->m.v, eg, j->m.klass);
            g = kw_intern_get(&E->strs, eg);
            if (!g)
                return kw_error_set(KW_ENOMEM, "out of memory");
            rc_eval = j->rc;
            primary = j->m.v[E->primary];
            E->sum.evals++;
        } else {
            const kw_jeval *je = j->je;
            rc = kw_emit_eval(E, je->shape, je->id, je->rep, &je->cand, je->rc, je->m, je->guards,
                              je->klass);
            g = je->guards;
            rc_eval = je->rc;
            primary = je->m[E->primary];
            E->sum.replayed++;
        }
        if (rc != 0)
            return rc;
        if (s->settle && j->rep == 0) {
            if (s->n_seen == s->cap_seen) {
                int cap = s->cap_seen ? s->cap_seen * 2 : 256;
                kw_cand *ns = realloc(s->seen, (size_t)cap * sizeof *ns);
                if (!ns)
                    return kw_error_set(KW_ENOMEM, "out of memory");
                s->seen = ns;
                s->cap_seen = cap;
            }
            s->seen[s->n_seen++] = j->cand;
        }
        kw_memo_ent *e = kw_memo_find(&E->memo, j->shape, j->id, j->rep);
        e->state = KW_MEMO_DONE;
        e->rc = rc_eval;
        e->guards = g;
        e->primary = primary;
        s->evals++;
    }
    return 0;
}

/* Judge items [from, to) (skipping constraint/dropped ones) against ref; the
 * winner is the acceptable one with the lowest mean (first on ties). */
static int kw_judge_items(kw_eng *E, kw_sstate *s, int from, int to, const kw_cst *ref,
                          const char *prefix, int m, kw_verdict *v)
{
    int win = -1;
    double win_mean = 0;
    for (int i = from; i < to; i++) {
        kw_item *it = &s->items[i];
        if (it->con >= 0 || it->dropped)
            continue;
        kw_cst c;
        kw_stats(E, s->shape, it->id, &c);
        kw_judge(E, ref, &c, m, prefix, &v[i]);
        if (v[i].ok && (win < 0 || c.mean < win_mean)) {
            win = i;
            win_mean = c.mean;
        }
    }
    return win;
}

static int kw_count_evaluated(const kw_sstate *s, int from, int to)
{
    int m = 0;
    for (int i = from; i < to; i++)
        m += s->items[i].con < 0 && !s->items[i].dropped;
    return m;
}

/* Journal the non-winning items of [from, to) (of one probe group, or all
 * when group < 0) as CONSTRAINT or REJECT steps. */
static int kw_emit_rejects(kw_eng *E, kw_sstate *s, int from, int to, int win, kw_step_phase ph,
                           const kw_verdict *v, int group)
{
    for (int i = from; i < to; i++) {
        const kw_item *it = &s->items[i];
        int rc = 0;
        if (it->dropped || i == win || (group >= 0 && it->group != group))
            continue;
        if (it->con >= 0) {
            char why[KW_REASON_LEN];
            snprintf(why, sizeof why, "breaks constraint %s", E->ks->constraints[it->con].name);
            rc = kw_step(E, s, &it->cand, KW_DECIDE_CONSTRAINT, ph, NAN, it->con, why);
        } else if (v[i].ok) {
            char why[KW_REASON_LEN + 64];
            snprintf(why, sizeof why, "%s, but not the best of the step", v[i].why);
            rc = kw_step(E, s, &it->cand, KW_DECIDE_REJECT, ph, v[i].p, -1, why);
        } else {
            rc = kw_step(E, s, &it->cand, KW_DECIDE_REJECT, ph, v[i].p, -1, v[i].why);
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Sweep order from the screening round: knobs by their best single-knob gain
 * from the baseline, largest first (ties: knob order). Knobs whose every
 * alternative failed a guard or a constraint come last. The big levers are
 * then settled first, which matters most when the budget is small. */
static void kw_screen_order(kw_eng *E, kw_sstate *s, const kw_verdict *v)
{
    double gain[KW_KNOB_MAX];
    int n = E->ks->n_knobs;
    for (int k = 0; k < n; k++)
        gain[k] = -INFINITY;
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        if (it->con >= 0 || it->dropped || !(isfinite(v[i].gain)))
            continue;
        kw_cst c;
        kw_stats(E, s->shape, it->id, &c);
        if (!c.ok)
            continue;
        int k;
        kw_engine_step_check(&k, E->ks, &s->base, &it->cand);
        if (v[i].gain > gain[k])
            gain[k] = v[i].gain;
    }
    for (int k = 0; k < n; k++)
        s->order[k] = k;
    for (int i = 1; i < n; i++) /* stable insertion sort, descending gain */
        for (int j = i; j > 0 && gain[s->order[j]] > gain[s->order[j - 1]]; j--) {
            int t = s->order[j];
            s->order[j] = s->order[j - 1];
            s->order[j - 1] = t;
        }
    s->screened = 1;
    s->cursor = 0;
}

static int kw_decide_main(kw_eng *E, kw_sstate *s, kw_verdict *v)
{
    kw_cst inc;
    kw_stats_c(E, s, &s->pos, &inc);
    int m = kw_count_evaluated(s, 0, s->n_items);
    int win = kw_judge_items(E, s, 0, s->n_items, &inc, "", m, v);
    for (int i = 0; i < s->n_items; i++) {
        int k;
        if (v[i].ok && kw_engine_step_check(&k, E->ks, &s->pos, &s->items[i].cand) == 0)
            s->improved[k][s->items[i].cand.v[k]] = 1;
    }
    kw_error_clear();
    int rc = kw_emit_rejects(E, s, 0, s->n_items, win, KW_STEP_MAIN, v, -1);
    int win_knob = -1;
    if (rc == 0 && win >= 0) {
        kw_engine_step_check(&win_knob, E->ks, &s->pos, &s->items[win].cand);
        rc = kw_step(E, s, &s->items[win].cand, KW_DECIDE_ACCEPT, KW_STEP_MAIN, v[win].p, -1,
                     v[win].why);
        s->accepts_since_fix++;
    }
    if (rc != 0)
        return rc;
    if (E->o.policy == KW_POLICY_SWEEP && !s->screened) {
        kw_screen_order(E, s, v);
        s->last_knob_accepted = win_knob;
        s->no_accept = win >= 0 ? 0 : E->ks->n_knobs;
        return 0;
    }
    if (E->o.policy == KW_POLICY_SWEEP) {
        s->last_knob_accepted = win >= 0 ? win_knob : s->last_knob_accepted;
        if (s->n_items > 0) {
            s->no_accept = win >= 0 ? 0 : s->no_accept + 1;
            s->cursor = (s->cursor + 1) % E->ks->n_knobs;
        }
    } else if (win < 0) {
        kw_after_main(E, s);
    }
    return 0;
}

static int kw_decide_probe(kw_eng *E, kw_sstate *s, kw_verdict *v)
{
    kw_cst inc;
    kw_stats_c(E, s, &s->pos, &inc);
    kw_cand start = s->pos;
    int m = kw_count_evaluated(s, 0, s->n_items);
    int win = kw_judge_items(E, s, 0, s->n_items, &inc, "pair vs incumbent: ", m, v);
    int win_group = win >= 0 ? s->items[win].group : -1;
    for (int pass = 0; pass < 2; pass++) {
        for (int g = 0; g < s->n_first; g++) {
            if ((pass == 0) == (g == win_group))
                continue; /* failed probes first, the winning one last */
            int tried = 0;
            for (int i = 0; i < s->n_items && !tried; i++)
                tried = s->items[i].group == g && s->items[i].con < 0 && !s->items[i].dropped;
            if (!tried)
                continue; /* the budget cut this probe before any evaluation */
            kw_cst fs;
            kw_stats_c(E, s, &s->first[g], &fs);
            char why[KW_REASON_LEN];
            if (fs.ok)
                snprintf(why, sizeof why, "probe: first step (alone %+.2f%%, not accepted) tried "
                         "with a second knob", -kw_gain_pct(inc.mean, fs.mean));
            else
                snprintf(why, sizeof why, "probe: first step (alone %+.2f%%, guard %.80s%s) tried "
                         "with a second knob that may repair the guard", -kw_gain_pct(inc.mean, fs.mean),
                         fs.guards, g < s->n_blocked ? "; an earlier incumbent gained from it" : "");
            int rc = kw_step(E, s, &s->first[g], KW_DECIDE_EXPLORE, KW_STEP_PROBE, NAN, -1, why);
            if (rc == 0)
                rc = kw_emit_rejects(E, s, 0, s->n_items, win, KW_STEP_PROBE, v, g);
            if (rc == 0 && g == win_group)
                rc = kw_step(E, s, &s->items[win].cand, KW_DECIDE_ACCEPT, KW_STEP_PROBE, v[win].p,
                             -1, v[win].why);
            if (rc == 0 && g != win_group)
                rc = kw_step(E, s, &start, KW_DECIDE_REVERT, KW_STEP_PROBE, NAN, -1,
                             "probe found no pair that beats the incumbent: step back");
            if (rc != 0)
                return rc;
        }
    }
    if (win >= 0) {
        s->plist_ready = 0;
        s->st = ST_MAIN;
        s->no_accept = 0;
        s->accepts_since_fix++;
        s->last_knob_accepted = -1;
    }
    /* else: the next round plans the list's next chunk, or leaves the phase */
    return 0;
}

static int kw_in_path(const kw_sstate *s, const kw_cand *c)
{
    for (int i = 0; i < s->n_path; i++)
        if (memcmp(&s->path[i], c, sizeof *c) == 0)
            return 1;
    return 0;
}

static int kw_decide_explore(kw_eng *E, kw_sstate *s, kw_verdict *v)
{
    kw_cst best;
    kw_stats_c(E, s, &s->ref, &best);
    int m = kw_count_evaluated(s, 0, s->n_items);
    int win = kw_judge_items(E, s, 0, s->n_items, &best, "vs best: ", m, v);
    int rc;
    if (win >= 0) {
        if ((rc = kw_emit_rejects(E, s, 0, s->n_items, win, KW_STEP_EXPLORE, v, -1)) != 0)
            return rc;
        char why[KW_REASON_LEN + 64];
        snprintf(why, sizeof why, "%s after %d exploratory steps", v[win].why, s->n_path - 1);
        if ((rc = kw_step(E, s, &s->items[win].cand, KW_DECIDE_ACCEPT, KW_STEP_EXPLORE, v[win].p,
                          -1, why)) != 0)
            return rc;
        s->st = ST_MAIN;
        s->no_accept = 0;
        s->accepts_since_fix++;
        s->last_knob_accepted = -1;
        return 0;
    }
    /* next exploratory move: best guard-passing neighbour off the tabu list */
    int mv = -1;
    double mv_mean = 0;
    if (s->moves_left > 0) {
        for (int i = 0; i < s->n_items; i++) {
            const kw_item *it = &s->items[i];
            if (it->con >= 0 || it->dropped || kw_in_path(s, &it->cand))
                continue;
            int knob;
            kw_engine_step_check(&knob, E->ks, &s->pos, &it->cand);
            if (knob == s->last_knob)
                continue;
            kw_cst c;
            kw_stats(E, s->shape, it->id, &c);
            if (c.n != E->reps || !c.ok || !isfinite(c.mean))
                continue;
            if (mv < 0 || c.mean < mv_mean) {
                mv = i;
                mv_mean = c.mean;
            }
        }
    }
    if ((rc = kw_emit_rejects(E, s, 0, s->n_items, mv, KW_STEP_EXPLORE, v, -1)) != 0)
        return rc;
    if (mv < 0) {
        s->st = s->n_path > 1 ? ST_BACKTRACK : ST_FIX;
        if (s->st == ST_FIX)
            kw_enter_fix(s);
        return 0;
    }
    char why[KW_REASON_LEN];
    snprintf(why, sizeof why, "exploratory: best neighbour off the tabu list, %.2f%% from the best",
             -v[mv].gain);
    int knob;
    kw_engine_step_check(&knob, E->ks, &s->pos, &s->items[mv].cand);
    if ((rc = kw_step(E, s, &s->items[mv].cand, KW_DECIDE_EXPLORE, KW_STEP_EXPLORE, NAN, -1, why)) != 0)
        return rc;
    s->path[s->n_path++] = s->pos;
    s->moves_left--;
    s->last_knob = knob;
    return 0;
}

static int kw_decide_backtrack(kw_eng *E, kw_sstate *s)
{
    for (int i = s->n_path - 1; i > 0; i--) {
        int rc = kw_step(E, s, &s->path[i - 1], KW_DECIDE_REVERT, KW_STEP_BACKTRACK, NAN, -1,
                         "the excursion found nothing better: step back towards the best");
        if (rc != 0)
            return rc;
    }
    s->n_path = 1;
    kw_enter_fix(s);
    return 0;
}

/* Settle (noiseless evaluator): the best guard-passing config evaluated so far
 * may beat the incumbent by less than the minimum effect (a step that small was
 * never accepted) or sit one probe or excursion away. Walk there one knob at a
 * time through evaluated configs (breadth-first over the configs evaluated: the
 * shortest such walk; one always exists because every evaluated config is a
 * neighbour of a config the walk stood on), EXPLORE on the way, ACCEPT onto it.
 * No evaluation is spent. With a noisy evaluator the best mean of many
 * candidates is biased low (the winner's curse) and a difference below the
 * minimum effect is not evidence, so noisy runs do not settle. */
static int kw_decide_settle(kw_eng *E, kw_sstate *s)
{
    const kw_knobspace *ks = E->ks;
    int rc = 0;
    s->settled_moved = 0;
    kw_cst inc;
    kw_stats_c(E, s, &s->pos, &inc);
    int best = -1;
    double best_mean = inc.ok && isfinite(inc.mean) ? inc.mean : INFINITY;
    for (int i = 0; i < s->n_seen; i++) {
        kw_cst c;
        kw_stats_c(E, s, &s->seen[i], &c);
        if (c.n == E->reps && c.ok && isfinite(c.mean) && c.mean < best_mean) {
            best = i;
            best_mean = c.mean;
        }
    }
    int *from = NULL, *queue = NULL;
    kw_idset map = {NULL, 1};
    uint64_t *ids = NULL;
    if (best < 0)
        goto done;
    /* id -> index of seen[] (open addressing over indices + 1) */
    while (map.cap < (size_t)s->n_seen * 2 + 2)
        map.cap *= 2;
    map.t = calloc(map.cap, sizeof *map.t);
    ids = malloc((size_t)s->n_seen * sizeof *ids);
    from = malloc((size_t)s->n_seen * sizeof *from);
    queue = malloc((size_t)s->n_seen * sizeof *queue);
    if (!map.t || !ids || !from || !queue) {
        rc = kw_error_set(KW_ENOMEM, "out of memory settling");
        goto done;
    }
    int start = -1;
    uint64_t here = kw_cand_id(ks, &s->pos);
    for (int i = 0; i < s->n_seen; i++) {
        ids[i] = kw_cand_id(ks, &s->seen[i]);
        size_t h = kw_mix64(ids[i]) & (map.cap - 1);
        while (map.t[h])
            h = (h + 1) & (map.cap - 1);
        map.t[h] = (uint64_t)i + 1;
        from[i] = -2; /* unvisited */
        if (start < 0 && ids[i] == here)
            start = i;
    }
    if (start < 0)
        goto done; /* the incumbent is always evaluated; defensive */
    int qh = 0, qt = 0;
    queue[qt++] = start;
    from[start] = -1;
    while (qh < qt && from[best] == -2) {
        int u = queue[qh++];
        for (int k = 0; k < ks->n_knobs && from[best] == -2; k++)
            for (int v = 0; v < ks->knobs[k].n_values; v++) {
                if (v == s->seen[u].v[k])
                    continue;
                kw_cand c = s->seen[u];
                c.v[k] = (uint8_t)v;
                uint64_t id = kw_cand_id(ks, &c);
                size_t h = kw_mix64(id) & (map.cap - 1);
                int w = -1;
                for (; map.t[h]; h = (h + 1) & (map.cap - 1))
                    if (ids[map.t[h] - 1] == id) {
                        w = (int)map.t[h] - 1;
                        break;
                    }
                if (w < 0 || from[w] != -2)
                    continue;
                kw_cst cs;
                kw_stats_c(E, s, &s->seen[w], &cs);
                if (cs.n != E->reps)
                    continue;
                from[w] = u;
                queue[qt++] = w;
            }
    }
    if (from[best] == -2)
        goto done; /* unreachable through evaluated configs; defensive */
    int n_path = 0;
    for (int u = best; u != start; u = from[u])
        queue[n_path++] = u; /* reversed walk, reusing the queue */
    double gain = kw_gain_pct(inc.mean, best_mean);
    for (int i = n_path - 1; i >= 0 && rc == 0; i--) {
        char why[KW_REASON_LEN];
        if (i > 0) {
            snprintf(why, sizeof why, "settle: on the way to the best config evaluated (%d of %d "
                     "steps)", n_path - i, n_path);
            rc = kw_step(E, s, &s->seen[queue[i]], KW_DECIDE_EXPLORE, KW_STEP_SETTLE, NAN, -1, why);
        } else {
            snprintf(why, sizeof why, "settle: the best config evaluated, %.3f%% better than the "
                     "incumbent (the evaluator is noiseless: every gain is real; steps below the "
                     "minimum effect %.2f%% are not taken during the search)", gain,
                     E->o.min_effect_pct);
            rc = kw_step(E, s, &s->seen[queue[i]], KW_DECIDE_ACCEPT, KW_STEP_SETTLE, NAN, -1, why);
        }
    }
    if (rc == 0)
        s->settled_moved = 1;
done:
    free(map.t);
    free(ids);
    free(from);
    free(queue);
    if (rc == 0)
        kw_enter_fix(s); /* st is ST_SETTLE: goes on to the fix */
    return rc;
}

static int kw_decide_fix(kw_eng *E, kw_sstate *s)
{
    if (s->n_items != 1) {
        s->st = ST_FINISH;
        return 0;
    }
    const kw_item *it = &s->items[0];
    const kw_knob *k = &E->ks->knobs[s->fix_knob];
    char why[KW_REASON_LEN];
    int rc;
    s->fix_knob++;
    if (it->con >= 0) {
        snprintf(why, sizeof why, "reverting %s would break constraint %s: kept", k->name,
                 E->ks->constraints[it->con].name);
        return kw_step(E, s, &it->cand, KW_DECIDE_CONSTRAINT, KW_STEP_FIX, NAN, it->con, why);
    }
    if (it->dropped)
        return kw_step(E, s, &it->cand, KW_DECIDE_KEEP, KW_STEP_FIX, NAN, -1,
                       "budget exhausted: kept unchecked");
    kw_cst f0, r;
    kw_stats_c(E, s, &s->ref, &f0);
    kw_stats(E, s->shape, it->id, &r);
    double loss = -kw_gain_pct(f0.mean, r.mean); /* % the config gets worse without the change */
    double p = NAN;
    int earns;
    if (f0.ok && !r.ok) {
        earns = 1;
        snprintf(why, sizeof why, "without %s=%s guard %s fails: kept", k->name,
                 k->values[s->pos.v[s->fix_knob - 1]], r.guards);
    } else if (!isfinite(r.mean)) {
        earns = 1;
        snprintf(why, sizeof why, "without the change the primary is not finite: kept");
    } else if (!E->ev->noisy) {
        /* noiseless: every measured gain is real, so a change is dropped only
         * when the config is at least as good without it (a free
         * simplification); the loss of the fix is then nil, not min_effect */
        earns = loss > 0;
        if (earns)
            snprintf(why, sizeof why, "the change earns %.3f%%: kept", loss);
        else
            snprintf(why, sizeof why, "the change earns nothing (%.3f%%): dropped", loss);
    } else {
        earns = loss >= E->o.min_effect_pct;
        if (earns && E->ev->noisy) {
            p = kw_engine_welch_p(r.mean, r.sd, r.n, f0.mean, f0.sd, f0.n);
            if (isnan(p))
                p = 1.0;
            earns = p < E->o.alpha;
        }
        if (earns)
            snprintf(why, sizeof why, "the change earns %.2f%% (>= %.2f%%): kept", loss,
                     E->o.min_effect_pct);
        else if (!isnan(p))
            snprintf(why, sizeof why, "the change earns %.2f%%, not significant (p %.3g): dropped",
                     loss, p);
        else
            snprintf(why, sizeof why, "the change earns only %.2f%% (< %.2f%%): dropped", loss,
                     E->o.min_effect_pct);
    }
    rc = kw_step(E, s, &it->cand, earns ? KW_DECIDE_KEEP : KW_DECIDE_REVERT, KW_STEP_FIX, p, -1,
                 why);
    s->fix_reverts += !earns;
    return rc;
}

static void kw_track_best(kw_eng *E, kw_sstate *s, const kw_cand *c)
{
    kw_cst cs;
    kw_stats_c(E, s, c, &cs);
    if (cs.n != E->reps || !cs.ok || !isfinite(cs.mean))
        return;
    if (!s->have_best || cs.mean < s->rbest_mean) {
        s->have_best = 1;
        s->rbest = *c;
        s->rbest_mean = cs.mean;
    }
}

/* Exhaustive never revisits a config: forget every evaluation but the
 * baseline's and the best's, so memory stays flat over millions of them. */
static void kw_forget(kw_eng *E, kw_sstate *s, const kw_cand *c)
{
    if (memcmp(c, &s->base, sizeof *c) == 0 || (s->have_best && memcmp(c, &s->rbest, sizeof *c) == 0))
        return;
    uint64_t id = kw_cand_id(E->ks, c);
    for (int r = 0; r < E->reps; r++) {
        kw_memo_ent *e = kw_memo_find(&E->memo, s->shape, id, r);
        if (e && e->state == KW_MEMO_DONE)
            kw_memo_del(&E->memo, e);
    }
}

static int kw_decide_sample(kw_eng *E, kw_sstate *s)
{
    const char *kind = s->st == ST_RANDOM ? "random" : "exhaustive";
    int had_best = s->have_best;
    kw_cand old_best = s->rbest;
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        if (it->con >= 0) {
            int rc = kw_emit_viol(E, s, it, kind);
            if (rc != 0)
                return rc;
        } else if (!it->dropped) {
            kw_track_best(E, s, &it->cand);
        }
    }
    if (s->st == ST_EXHAUST) {
        for (int i = 0; i < s->n_items; i++)
            if (s->items[i].con < 0 && !s->items[i].dropped)
                kw_forget(E, s, &s->items[i].cand);
        if (had_best)
            kw_forget(E, s, &old_best);
    }
    if (s->budget_hit || s->exhausted) {
        s->st = ST_DONE;
        return kw_emit_done(E, s, s->have_best ? &s->rbest : &s->base,
                            s->budget_hit ? "budget" : "exhausted");
    }
    return 0;
}

static int kw_decide(kw_eng *E, kw_sstate *s)
{
    int rc = kw_emit_evals(E, s);
    if (rc != 0)
        return rc;
    kw_verdict *v = NULL;
    if (s->n_items > 0) {
        v = calloc((size_t)s->n_items, sizeof *v);
        if (!v)
            return kw_error_set(KW_ENOMEM, "out of memory deciding");
    }
    switch (s->st) {
    case ST_BASE:
        s->pos = s->base;
        if (E->o.strategy == KW_STRATEGY_OFAT) {
            s->st = ST_MAIN;
        } else {
            kw_track_best(E, s, &s->base);
            if (E->o.strategy == KW_STRATEGY_RANDOM) {
                s->rng = gsl_rng_alloc(gsl_rng_mt19937);
                if (!s->rng) {
                    rc = kw_error_set(KW_ENOMEM, "out of memory for the random stream");
                    break;
                }
                /* one stream per shape, seeded from the run seed and the shape */
                gsl_rng_set(s->rng, (unsigned long)(kw_mix64(E->o.seed ^ kw_mix64((uint64_t)s->shape + 1)) &
                                                    0xffffffffUL));
                s->st = ST_RANDOM;
            } else {
                s->st = ST_EXHAUST;
            }
        }
        break;
    case ST_MAIN:
        rc = kw_decide_main(E, s, v);
        break;
    case ST_PROBE:
        rc = kw_decide_probe(E, s, v);
        break;
    case ST_EXPLORE:
        rc = kw_decide_explore(E, s, v);
        break;
    case ST_BACKTRACK:
        rc = kw_decide_backtrack(E, s);
        break;
    case ST_SETTLE:
        rc = kw_decide_settle(E, s);
        break;
    case ST_FIX:
        rc = kw_decide_fix(E, s);
        break;
    case ST_RANDOM:
    case ST_EXHAUST:
        rc = kw_decide_sample(E, s);
        break;
    case ST_FINISH:
        s->st = ST_DONE;
        rc = kw_emit_done(E, s, &s->pos, s->budget_hit ? "budget" : "converged");
        break;
    case ST_DONE:
        break;
    }
    free(v);
    return rc;
}

/* ------------------------------------------------------------------ options */

void kw_engine_opts_init(kw_engine_opts *o)
{
    memset(o, 0, sizeof *o);
    o->strategy = KW_STRATEGY_OFAT;
    o->policy = KW_POLICY_SWEEP;
    o->metric = "p95_us";
    o->min_effect_pct = 1.0;
    o->alpha = 0.05;
    o->repeats = KW_ENGINE_DEFAULT_REPEATS;
    o->seed = 1;
    o->threads = 1;
    o->tabu = 3;
    o->probes = 32;
}

void kw_engine_opts_from_header(kw_engine_opts *o, int *shapes_buf, const kw_jheader *h)
{
    o->strategy = h->strategy;
    o->policy = h->policy;
    o->budget = h->budget;
    o->metric = h->metric;
    o->min_effect_pct = h->min_effect_pct;
    o->alpha = h->alpha;
    o->repeats = h->repeats;
    o->seed = h->seed;
    o->tabu = h->tabu;
    o->probes = h->probes;
    for (int i = 0; i < h->n_tuned; i++)
        shapes_buf[i] = h->tuned[i];
    o->n_shapes = h->n_tuned;
    o->shapes = shapes_buf;
}

static int kw_check_inputs(kw_eng *E)
{
    const kw_knobspace *ks = E->ks;
    const kw_evaluator *ev = E->ev;
    const kw_engine_opts *o = &E->o;
    if (!E->info || !E->info->journal_path)
        return kw_error_set(KW_EINPUT, "no journal path");
    if (!ev || !ev->eval || ev->n_metrics <= 0 || ev->n_metrics > KW_METRIC_MAX || ev->n_shapes <= 0 ||
        ev->n_shapes > KW_JOURNAL_SHAPE_MAX)
        return kw_error_set(KW_EINPUT, "the evaluator has no metrics or no shapes");
    if (ks->n_knobs <= 0 || ks->n_knobs > KW_KNOB_MAX)
        return kw_error_set(KW_EINPUT, "the knob space has %d knobs (1..%d allowed)", ks->n_knobs,
                            KW_KNOB_MAX);
    for (int i = 0; i < ks->n_knobs; i++) {
        const kw_knob *k = &ks->knobs[i];
        if (k->n_values <= 0 || k->n_values > KW_VALUE_MAX || k->baseline < 0 ||
            k->baseline >= k->n_values)
            return kw_error_set(KW_EINPUT, "knob '%s': bad domain or baseline", k->name);
    }
    for (int i = 0; i < ks->n_constraints; i++)
        for (int t = 0; t < ks->constraints[i].n_terms; t++)
            if (ks->constraints[i].terms[t].knob < 0 || ks->constraints[i].terms[t].knob >= ks->n_knobs)
                return kw_error_set(KW_EINPUT, "constraint '%s' names knob %d of %d",
                                    ks->constraints[i].name, ks->constraints[i].terms[t].knob,
                                    ks->n_knobs);
    kw_cand base;
    kw_cand_baseline(&base, ks);
    int c = kw_cand_violates(ks, &base);
    if (c >= 0)
        return kw_error_set(KW_EINPUT, "the baseline breaks constraint '%s'", ks->constraints[c].name);
    E->primary = -1;
    for (int i = 0; o->metric && i < ev->n_metrics; i++)
        if (strcmp(ev->metric_names[i], o->metric) == 0)
            E->primary = i;
    if (E->primary < 0)
        return kw_error_set(KW_EINPUT, "the evaluator has no metric '%s'", o->metric ? o->metric : "");
    if (o->strategy < KW_STRATEGY_OFAT || o->strategy > KW_STRATEGY_EXHAUSTIVE ||
        o->policy < KW_POLICY_SWEEP || o->policy > KW_POLICY_GREEDY)
        return kw_error_set(KW_EINPUT, "unknown strategy or policy");
    if (o->budget < 0 || !(o->min_effect_pct >= 0) || !(o->alpha > 0 && o->alpha < 1) ||
        o->repeats < 0 || o->tabu < 0 || o->tabu > KW_TABU_MAX || o->probes < 0 ||
        o->probes > KW_PROBE_MAX || !(o->time_limit_s >= 0))
        return kw_error_set(KW_EINPUT, "bad engine options (budget >= 0, min effect >= 0, "
                            "0 < alpha < 1, tabu 0..%d, probes 0..%d)", KW_TABU_MAX, KW_PROBE_MAX);
    E->reps = ev->noisy ? (o->repeats >= 2 ? o->repeats : (o->repeats == 0 ? KW_ENGINE_DEFAULT_REPEATS : 2)) : 1;
    if (E->reps > KW_REPEATS_MAX)
        return kw_error_set(KW_EINPUT, "at most %d repeats", KW_REPEATS_MAX);
    if (o->budget > 0 && o->budget < E->reps)
        return kw_error_set(KW_EINPUT, "a budget of %ld evaluations cannot even evaluate the "
                            "baseline (%d repeats)", o->budget, E->reps);
    if (o->strategy == KW_STRATEGY_RANDOM && o->budget == 0)
        return kw_error_set(KW_EINPUT, "the random strategy needs a budget");
    if (o->n_shapes > 0) {
        if (!o->shapes || o->n_shapes > ev->n_shapes)
            return kw_error_set(KW_EINPUT, "bad shape list");
        for (int i = 0; i < o->n_shapes; i++) {
            if (o->shapes[i] < 0 || o->shapes[i] >= ev->n_shapes)
                return kw_error_set(KW_EINPUT, "shape index %d out of range", o->shapes[i]);
            for (int k = 0; k < i; k++)
                if (o->shapes[k] == o->shapes[i])
                    return kw_error_set(KW_EINPUT, "shape '%s' listed twice",
                                        ev->shape_names[o->shapes[i]]);
            E->shapes[i] = o->shapes[i];
        }
        E->n_shapes = o->n_shapes;
    } else {
        for (int i = 0; i < ev->n_shapes; i++)
            E->shapes[i] = i;
        E->n_shapes = ev->n_shapes;
    }
    if (E->o.threads < 1)
        E->o.threads = 1;
    if (E->o.threads > 256)
        E->o.threads = 256;
    return 0;
}

/* Refuse to resume against anything that changed, saying what. */
static int kw_check_header(kw_eng *E, const kw_jheader *h)
{
    const kw_run_info *in = E->info;
    const char *path = in->journal_path;
    const char *ver = in->version ? in->version : "";
    if (strcmp(h->version, ver) != 0)
        return kw_error_set(KW_EINPUT, "%s: written by knobwise %s, this is %s: refusing to resume",
                            path, h->version, ver);
    if (h->n_inputs != in->n_inputs)
        return kw_error_set(KW_EINPUT, "%s: the run had %d input files, now %d: refusing to resume",
                            path, h->n_inputs, in->n_inputs);
    for (int i = 0; i < h->n_inputs; i++)
        if (strcmp(h->inputs[i].name, in->input_names[i]) != 0 ||
            strcmp(h->inputs[i].hash, in->input_hashes[i]) != 0)
            return kw_error_set(KW_EINPUT, "%s: input '%s' changed since the run started (hash %s, "
                                "now %s '%s'): refusing to resume", path, h->inputs[i].name,
                                h->inputs[i].hash, in->input_names[i], in->input_hashes[i]);
    const kw_knobspace *a = &h->space, *b = E->ks;
    if (a->n_knobs != b->n_knobs)
        return kw_error_set(KW_EINPUT, "%s: the knob space changed (%d knobs, now %d): refusing to "
                            "resume", path, a->n_knobs, b->n_knobs);
    for (int i = 0; i < a->n_knobs; i++) {
        const kw_knob *x = &a->knobs[i], *y = &b->knobs[i];
        int same = strcmp(x->name, y->name) == 0 && x->n_values == y->n_values &&
                   x->baseline == y->baseline;
        for (int v = 0; same && v < x->n_values; v++)
            same = strcmp(x->values[v], y->values[v]) == 0;
        if (!same)
            return kw_error_set(KW_EINPUT, "%s: the knob space changed at knob %d ('%s'): refusing "
                                "to resume", path, i, x->name);
    }
    if (a->n_constraints != b->n_constraints)
        return kw_error_set(KW_EINPUT, "%s: the constraints changed: refusing to resume", path);
    for (int i = 0; i < a->n_constraints; i++) {
        const kw_constraint *x = &a->constraints[i], *y = &b->constraints[i];
        int same = strcmp(x->name, y->name) == 0 && x->n_terms == y->n_terms;
        for (int t = 0; same && t < x->n_terms; t++)
            same = x->terms[t].knob == y->terms[t].knob && x->terms[t].mask == y->terms[t].mask;
        if (!same)
            return kw_error_set(KW_EINPUT, "%s: constraint '%s' changed: refusing to resume", path,
                                x->name);
    }
    if (h->n_metrics != E->ev->n_metrics || h->n_shapes != E->ev->n_shapes)
        return kw_error_set(KW_EINPUT, "%s: the evaluator's metrics or shapes changed: refusing to "
                            "resume", path);
    for (int i = 0; i < h->n_metrics; i++)
        if (strcmp(h->metric_names[i], E->ev->metric_names[i]) != 0)
            return kw_error_set(KW_EINPUT, "%s: metric %d was '%s', now '%s': refusing to resume",
                                path, i, h->metric_names[i], E->ev->metric_names[i]);
    for (int i = 0; i < h->n_shapes; i++)
        if (strcmp(h->shape_names[i], E->ev->shape_names[i]) != 0)
            return kw_error_set(KW_EINPUT, "%s: shape %d was '%s', now '%s': refusing to resume",
                                path, i, h->shape_names[i], E->ev->shape_names[i]);
    const kw_engine_opts *o = &E->o;
    int same_shapes = h->n_tuned == E->n_shapes;
    for (int i = 0; same_shapes && i < h->n_tuned; i++)
        same_shapes = h->tuned[i] == E->shapes[i];
    const char *what = NULL;
    if (h->seed != o->seed)
        what = "seed";
    else if (h->strategy != o->strategy)
        what = "strategy";
    else if (h->policy != o->policy)
        what = "policy";
    else if (h->budget != o->budget)
        what = "budget";
    else if (strcmp(h->metric, o->metric) != 0)
        what = "metric";
    else if (h->min_effect_pct != o->min_effect_pct)
        what = "minimum effect";
    else if (h->alpha != o->alpha)
        what = "alpha";
    else if (h->repeats != E->reps || h->noisy != (E->ev->noisy ? 1 : 0))
        what = "repeats or noise";
    else if (h->tabu != o->tabu || h->probes != o->probes)
        what = "tabu or probes";
    else if (!same_shapes)
        what = "shape list";
    if (what)
        return kw_error_set(KW_EINPUT, "%s: the %s differs from the run's: refusing to resume", path,
                            what);
    if (h->n_attrs != in->n_attrs)
        return kw_error_set(KW_EINPUT, "%s: the run attributes differ: refusing to resume", path);
    for (int i = 0; i < h->n_attrs; i++)
        if (strcmp(h->attrs[i].key, in->attr_keys[i]) != 0 ||
            strcmp(h->attrs[i].value, in->attr_values[i]) != 0)
            return kw_error_set(KW_EINPUT, "%s: run attribute '%s' differs ('%s', now '%s'): "
                                "refusing to resume", path, h->attrs[i].key, h->attrs[i].value,
                                in->attr_values[i]);
    return 0;
}

/* ------------------------------------------------------------------ the run loop */

/* Progress is reported after every round (callers throttle their drawing);
 * the convergence estimates, which cost a memo probe per neighbour, are
 * refreshed at most every KW_REPORT_EST_S seconds and whenever a shape finishes. */
#define KW_REPORT_EST_S 0.1

static const char *kw_st_label(kw_st st)
{
    switch (st) {
    case ST_BASE: return "baseline";
    case ST_MAIN: return "sweep";
    case ST_PROBE: return "probe";
    case ST_EXPLORE: return "excursion";
    case ST_BACKTRACK: return "backtrack";
    case ST_SETTLE: return "settle";
    case ST_FIX: return "fix";
    case ST_RANDOM: return "random";
    case ST_EXHAUST: return "exhaustive";
    case ST_FINISH: return "finish";
    case ST_DONE: return "done";
    }
    return "?";
}

/* One-knob neighbours of s's incumbent not evaluated yet (constraint-breaking
 * ones are never evaluated, so they do not count). OFAT stops only after a
 * sweep of the incumbent's neighbours finds no gain, so these are evaluations
 * the shape still needs at least (each costs E->reps when noisy). Cost: one
 * candidate hash and memo probe per neighbour (27 knobs: ~100 neighbours). */
static long kw_unseen_neighbours(const kw_eng *E, const kw_sstate *s)
{
    long n = 0;
    for (int k = 0; k < E->ks->n_knobs; k++)
        for (int v = 0; v < E->ks->knobs[k].n_values; v++) {
            if (v == s->pos.v[k])
                continue;
            kw_cand c = s->pos;
            c.v[k] = (uint8_t)v;
            if (kw_cand_violates(E->ks, &c) >= 0)
                continue;
            if (!kw_memo_find(&E->memo, s->shape, kw_cand_id(E->ks, &c), 0))
                n++;
        }
    return n;
}

/* Estimated evaluations shape s will have made when it stops (see
 * kw_progress_shape.evals_est). OFAT: at least its evaluations so far plus
 * the unseen neighbours of its incumbent and the probes left in the current
 * probe list; and, once some shape has finished, its first local optimum
 * (the evaluations when it first left the sweep, or the bound above while it
 * is still in it) times the finished shapes' mean ratio of total evaluations
 * to first local optimum (on the default job that ratio is 9-28: the probes
 * and excursions after the first sweep are most of a shape's work, so the
 * ratio is a rough guide, not a promise). Random: the budget; exhaustive: the
 * space's size. The budget caps every estimate. */
static long kw_evals_est(const kw_eng *E, const kw_sstate *s, double mean_ratio)
{
    long budget = E->o.budget;
    if (s->st == ST_DONE || s->st == ST_FINISH)
        return s->evals;
    long est;
    if (E->o.strategy == KW_STRATEGY_RANDOM) {
        est = budget > 0 ? budget : -1;
    } else if (E->o.strategy == KW_STRATEGY_EXHAUSTIVE) {
        uint64_t size = kw_knobspace_size(E->ks);
        est = size > (uint64_t)LONG_MAX / 2 ? LONG_MAX / 2 : (long)size;
    } else {
        /* what the current local optimum still costs, if nothing improves:
         * the sweep's unseen neighbours, the probe list (its last size, or
         * one pair per neighbour before the first), the excursion's moves
         * (each a sweep of neighbours) */
        long reps = E->reps > 0 ? E->reps : 1;
        long nb = 0;
        for (int k = 0; k < E->ks->n_knobs; k++)
            nb += E->ks->knobs[k].n_values - 1;
        est = s->evals + kw_unseen_neighbours(E, s) * reps;
        if (s->st == ST_PROBE && s->plist_ready && s->pcur < s->n_plist)
            est += (s->n_plist - s->pcur) * reps;
        else if (s->st == ST_MAIN && E->o.probes > 0)
            est += (s->n_plist > 0 ? s->n_plist : nb) * reps;
        if (s->st == ST_MAIN || s->st == ST_PROBE)
            est += (long)E->o.tabu * nb * reps;
        else if (s->st == ST_EXPLORE)
            est += (long)s->moves_left * nb * reps;
        double first = s->evals_first_opt > 0 ? (double)s->evals_first_opt : (double)est;
        if (mean_ratio > 0 && first * mean_ratio > est)
            est = (long)ceil(first * mean_ratio);
    }
    if (budget > 0 && (est < 0 || est > budget))
        est = budget;
    if (est >= 0 && est < s->evals)
        est = s->evals;
    return est;
}

static void kw_report(kw_eng *E, int replaying)
{
    if (!E->o.progress)
        return;
    double now = kw_now_s();
    int n_done = 0;
    for (int i = 0; i < E->n_shapes; i++)
        n_done += E->S[i].st == ST_DONE;
    int refresh = E->last_report == 0 || now - E->last_report >= KW_REPORT_EST_S ||
                  n_done != E->last_done;
    if (refresh) {
        E->last_report = now;
        E->last_done = n_done;
    }
    kw_progress p;
    memset(&p, 0, sizeof p);
    int at = E->n_shapes - 1;
    for (int i = 0; i < E->n_shapes; i++)
        if (E->S[i].st != ST_DONE) {
            at = i;
            break;
        }
    double sum_ratio = 0;
    int n_ratio = 0;
    for (int i = 0; i < E->n_shapes; i++) {
        kw_sstate *s = &E->S[i];
        if (s->evals_first_opt == 0 && s->st != ST_BASE && s->st != ST_MAIN)
            s->evals_first_opt = s->evals > 0 ? s->evals : 1;
        if (s->st == ST_DONE && s->evals_first_opt > 0) {
            sum_ratio += (double)s->evals / (double)s->evals_first_opt;
            n_ratio++;
        }
    }
    double mean_ratio = n_ratio > 0 ? sum_ratio / n_ratio : 0.0;
    long left_est = 0, left_budget = 0;
    int est_known = 1;
    for (int i = 0; i < E->n_shapes; i++) {
        kw_sstate *s = &E->S[i];
        kw_progress_shape *q = &E->ps[i];
        q->shape = s->shape;
        q->done = s->st == ST_DONE;
        q->step = s->step;
        q->evals = s->evals;
        q->phase = kw_st_label(s->st);
        kw_cst a, b;
        kw_stats_c(E, s, &s->base, &a);
        kw_stats_c(E, s, E->o.strategy == KW_STRATEGY_OFAT ? &s->pos
                                                           : (s->have_best ? &s->rbest : &s->base),
                   &b);
        if (E->o.strategy == KW_STRATEGY_OFAT && s->st == ST_EXPLORE)
            kw_stats_c(E, s, &s->ref, &b);
        q->baseline_primary = a.mean;
        q->best_primary = b.mean;
        if (replaying)
            q->evals_est = -1;
        else if (refresh || q->evals_est < s->evals)
            q->evals_est = kw_evals_est(E, s, mean_ratio);
        p.evals += s->evals;
        if (q->evals_est < 0)
            est_known = 0;
        else
            left_est += q->evals_est - s->evals;
        if (E->o.budget > 0 && !q->done)
            left_budget += E->o.budget > s->evals ? E->o.budget - s->evals : 0;
    }
    const kw_progress_shape *cur = &E->ps[at];
    p.shape = at;
    p.n_shapes = E->n_shapes;
    p.step = cur->step;
    p.baseline_primary = cur->baseline_primary;
    p.best_primary = cur->best_primary;
    p.per_shape = E->ps;
    p.n_done = n_done;
    p.budget = E->o.budget;
    p.evals_total_budget = E->o.budget > 0 ? E->o.budget * E->n_shapes : 0;
    p.replaying = replaying;
    p.replay_done = E->w ? kw_jwriter_records(E->w) : 0;
    p.replay_total = E->replay_total;
    double el = now - E->t_live;
    long live_evals = E->sum.evals - E->evals_live0;
    p.evals_per_s = !replaying && el > 0 ? live_evals / el : 0;
    p.eta_budget_s = p.evals_per_s > 0 && E->o.budget > 0 ? left_budget / p.evals_per_s : -1;
    p.eta_converge_s = p.evals_per_s > 0 && est_known ? left_est / p.evals_per_s : -1;
    p.eta_converge_bound = n_done == 0 && E->o.strategy == KW_STRATEGY_OFAT;
    p.eta_s = p.eta_converge_s >= 0 ? p.eta_converge_s : p.eta_budget_s;
    if (p.eta_budget_s >= 0 && p.eta_s > p.eta_budget_s)
        p.eta_s = p.eta_budget_s;
    E->o.progress(E->o.progress_ud, &p);
}

static int kw_pause(kw_eng *E, const char *why)
{
    kw_jbuf_printf(&E->rec, "Q");
    kw_jbuf_str(&E->rec, "why", why);
    int rc = kw_add(E);
    return rc ? rc : kw_jwriter_commit(E->w);
}

static int kw_loop(kw_eng *E)
{
    int rc;
    if ((rc = kw_emit_header(E)) != 0 || (rc = kw_jwriter_commit(E->w)) != 0)
        return rc;
    for (;;) {
        int active = 0;
        for (int i = 0; i < E->n_shapes; i++)
            active += E->S[i].st != ST_DONE;
        if (!active) {
            kw_jbuf_printf(&E->rec, "Z why=complete");
            if ((rc = kw_add(E)) != 0 || (rc = kw_jwriter_commit(E->w)) != 0)
                return rc;
            E->sum.stop = KW_STOP_DONE;
            return 0;
        }
        if (!kw_jwriter_replaying(E->w)) {
            if (E->o.stop && *E->o.stop) {
                E->sum.stop = KW_STOP_SIGNAL;
                if ((rc = kw_pause(E, "interrupted")) != 0)
                    return rc;
                return kw_error_set(KW_EINTERRUPTED, "interrupted: the journal is complete up to "
                                    "the last step; resume to continue");
            }
            if (E->o.time_limit_s > 0 && kw_now_s() - E->t0 >= E->o.time_limit_s) {
                E->sum.stop = KW_STOP_TIME;
                return kw_pause(E, "time_limit");
            }
        }
        E->n_jobs = 0;
        for (int i = 0; i < E->n_shapes; i++) {
            kw_sstate *s = &E->S[i];
            if (s->st == ST_DONE)
                continue;
            if ((rc = kw_plan(E, s)) != 0 || (rc = kw_build_jobs(E, s)) != 0)
                return rc;
        }
        size_t n_live = 0;
        if (E->n_jobs > E->cap_live) {
            size_t *nl = realloc(E->live, E->n_jobs * sizeof *nl);
            if (!nl)
                return kw_error_set(KW_ENOMEM, "out of memory queueing evaluations");
            E->live = nl;
            E->cap_live = E->n_jobs;
        }
        for (size_t i = 0; i < E->n_jobs; i++)
            if (E->jobs[i].live)
                E->live[n_live++] = i;
        if (E->pool.n > 0 && n_live > 1)
            qsort_r(E->live, n_live, sizeof *E->live, kw_lpt_cmp, E);
        kw_pool_run(&E->pool, E->jobs, E->live, n_live);
        for (size_t i = 0; i < n_live; i++) {
            const kw_job *j = &E->jobs[E->live[i]];
            double *c = &E->shape_cost_s[j->shape];
            *c = *c == 0 ? j->dur_s : 0.8 * *c + 0.2 * j->dur_s;
        }
        int interrupted = 0;
        for (size_t i = 0; i < n_live; i++) {
            const kw_job *j = &E->jobs[E->live[i]];
            if (j->rc == KW_EINTERRUPTED) {
                interrupted = 1;
                continue;
            }
            if (kw_fatal(j->rc))
                return kw_error_set(j->rc, "evaluating %s on shape '%s': %s",
                                    "a candidate", E->ev->shape_names[j->shape], j->err);
        }
        if (interrupted) {
            /* An evaluation stopped inside (the evaluator reads the stop flag
             * and the time limit during long evaluations): the round is
             * dropped whole, nothing of it journaled, and the run pauses as it
             * would between rounds; resume evaluates the round again. */
            if (E->o.stop && *E->o.stop) {
                E->sum.stop = KW_STOP_SIGNAL;
                if ((rc = kw_pause(E, "interrupted")) != 0)
                    return rc;
                return kw_error_set(KW_EINTERRUPTED, "interrupted during an evaluation: the "
                                    "journal is complete up to the last step; resume to continue");
            }
            if (E->o.time_limit_s > 0) {
                E->sum.stop = KW_STOP_TIME;
                return kw_pause(E, "time_limit");
            }
            return kw_error_set(KW_EINTERRUPTED, "an evaluation was stopped without a stop "
                                "request or time limit");
        }
        for (int i = 0; i < E->n_shapes; i++) {
            kw_sstate *s = &E->S[i];
            if (s->st == ST_DONE)
                continue;
            if ((rc = kw_decide(E, s)) != 0)
                return rc;
        }
        if ((rc = kw_jwriter_commit(E->w)) != 0)
            return rc;
        E->sum.rounds++;
        int replaying = kw_jwriter_replaying(E->w);
        if (!replaying && !E->replay_over) {
            /* the replay just ended: rates count from here */
            E->replay_over = 1;
            E->t_live = kw_now_s();
            E->evals_live0 = E->sum.evals;
        }
        kw_report(E, replaying);
    }
}

static int kw_engine_go(kw_engine_summary *out, const kw_knobspace *ks, const kw_evaluator *ev,
                        const kw_engine_opts *opts, const kw_run_info *info, int resume)
{
    kw_eng *E = calloc(1, sizeof *E);
    if (!E)
        return kw_error_set(KW_ENOMEM, "out of memory starting the engine");
    int rc = 0;
    E->ks = ks;
    E->ev = ev;
    E->o = *opts;
    E->info = info;
    E->t0 = kw_now_s();
    if ((rc = kw_check_inputs(E)) != 0)
        goto done;
    const char *path = info->journal_path;
    size_t n_old = 0;
    const uint32_t *old = NULL;
    if (resume) {
        if ((rc = kw_journal_load_ex(&E->j, path, 1)) != 0) {
            if (rc == KW_EINPUT)
                rc = kw_error_set(KW_EINPUT, "%s: no journal to resume", path);
            goto done;
        }
        kw_journal *j = E->j;
        if (j->torn) {
            E->sum.torn = 1;
            snprintf(E->sum.torn_msg, sizeof E->sum.torn_msg, "%s", j->torn_msg);
            if ((rc = kw_journal_truncate(path, j->good_bytes)) != 0)
                goto done;
        }
        n_old = (size_t)j->n_records;
        if (j->paused[0]) {
            if ((rc = kw_journal_truncate(path, j->last_start)) != 0)
                goto done;
            n_old--;
        }
        /* A header cut short (killed while starting) holds no evaluation: the
         * replay's checksum comparison alone decides whether it is ours. */
        if (!j->header_incomplete && (rc = kw_check_header(E, &j->h)) != 0)
            goto done;
        old = kw_journal_crcs(j);
        for (size_t i = 0; i < j->n_evals; i++) {
            const kw_jeval *je = &j->evals[i];
            kw_memo_ent *e = kw_memo_put(&E->memo, je->shape, je->id, je->rep);
            if (!e) {
                rc = kw_error_set(KW_ENOMEM, "out of memory loading the memo");
                goto done;
            }
            e->state = KW_MEMO_JOURNAL;
            e->je = je;
        }
    } else {
        struct stat st;
        if (lstat(path, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_size > 0)) {
            rc = kw_error_set(KW_EINPUT, S_ISREG(st.st_mode)
                                             ? "%s: a journal already exists: resume it or choose "
                                               "another run folder"
                                             : "%s: is not a regular file (a symbolic link is never "
                                               "followed out of the run folder)", path);
            goto done;
        }
        /* an empty journal (a run killed before its first byte) is replaced:
         * the writer creates the journal exclusively (O_EXCL) */
        if (lstat(path, &st) == 0 && unlink(path) != 0) {
            rc = kw_error_set(KW_EIO, "%s: cannot replace the empty journal: %s", path,
                              strerror(errno));
            goto done;
        }
    }
    if ((rc = kw_jwriter_open(&E->w, path, old, n_old, info->no_sync)) != 0)
        goto done;
    E->replay_total = (long)n_old;
    E->S = calloc((size_t)E->n_shapes, sizeof *E->S);
    E->ps = calloc((size_t)E->n_shapes, sizeof *E->ps);
    E->t_live = E->t0;
    E->replay_over = !resume;
    if (!E->S || !E->ps) {
        rc = kw_error_set(KW_ENOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < E->n_shapes; i++) {
        kw_sstate *s = &E->S[i];
        s->shape = E->shapes[i];
        s->st = ST_BASE;
        kw_cand_baseline(&s->base, ks);
        s->pos = s->base;
        s->last_knob = -1;
        s->last_knob_accepted = -1;
        s->settle = E->o.strategy == KW_STRATEGY_OFAT && !ev->noisy;
    }
    if ((rc = kw_pool_start(&E->pool, E->o.threads, ev)) != 0) {
        E->pool_up = 1;
        goto done;
    }
    E->pool_up = 1;
    rc = kw_loop(E);
done:
    E->sum.records = E->w ? kw_jwriter_records(E->w) : 0;
    E->sum.elapsed_s = kw_now_s() - E->t0;
    if (out)
        *out = E->sum;
    if (E->pool_up)
        kw_pool_stop(&E->pool);
    for (int i = 0; E->S && i < E->n_shapes; i++) {
        if (E->S[i].rng)
            gsl_rng_free(E->S[i].rng);
        free(E->S[i].items);
        free(E->S[i].plist);
        free(E->S[i].seen);
    }
    free(E->S);
    free(E->ps);
    kw_jwriter_free(E->w);
    kw_journal_free(E->j);
    free(E->memo.t);
    kw_intern_free(&E->strs);
    free(E->jobs);
    free(E->live);
    kw_jbuf_free(&E->rec);
    free(E);
    return rc;
}

int kw_engine_run(kw_engine_summary *out, const kw_knobspace *ks, const kw_evaluator *ev,
                  const kw_engine_opts *opts, const kw_run_info *info)
{
    return kw_engine_go(out, ks, ev, opts, info, 0);
}

int kw_engine_resume(kw_engine_summary *out, const kw_knobspace *ks, const kw_evaluator *ev,
                     const kw_engine_opts *opts, const kw_run_info *info)
{
    return kw_engine_go(out, ks, ev, opts, info, 1);
}
