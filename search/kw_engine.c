/* kw_engine.c - the engine core: rounds, memo, thread pool, journal records,
 * resume by replay and the determinism guarantee (see kw_engine.h); the
 * strategies behind it are in kw_ofat.c and kw_sample.c (kw_strategy.h).
 *
 * Design: every shape is driven by its strategy, which PLANS a batch of
 * candidates and later DECIDES on their results. The run loop advances all
 * shapes in lock-step rounds: plan all, evaluate the union on a thread pool,
 * decide all in shape order. The decisions and the journal are therefore a pure
 * function of the evaluation results, never of thread timing, and a resumed run
 * can regenerate the journal record by record (the writer compares checksums)
 * while taking evaluations from the journal. Rejected alternative: one thread
 * per shape writing as it goes - simpler code, but the journal order would
 * depend on timing and could not be replayed or compared byte for byte.
 *
 * The core evaluates every shape's baseline itself (the first round), then
 * hands the shape to its strategy (init); a strategy's decide says when the
 * shape is finished and the core writes its shape-done record. Every step of
 * every strategy goes through kw_engine_step (the one-knob rule), every
 * candidate through the budget and memo here.
 */
#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kw_grow.h"
#include "kw_guards.h"
#include "kw_reduce.h"
#include "kw_strategy.h"

/* The strategy table: one row per kw_strategy (adding a strategy: its file
 * and its row). */
static const kw_strategy_ops *const kw_strategies[] = {
    [KW_STRATEGY_OFAT] = &kw_ofat_ops,
    [KW_STRATEGY_RANDOM] = &kw_sample_random_ops,
    [KW_STRATEGY_EXHAUSTIVE] = &kw_sample_exhaustive_ops,
};
#define KW_N_STRATEGIES ((int)(sizeof kw_strategies / sizeof kw_strategies[0]))

/* ------------------------------------------------------------------ small helpers */

static double kw_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

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

/* A designed round (in_order) on an evaluator whose readings come from several
 * devices (ev->devices > 1: mpirun, a worker per rank): live's jobs regrouped
 * into one lane per device, shape s's on device s % devices for the whole
 * run, each lane in job order (a counting sort: stable), and the lanes run
 * at once. A shape's pairs and controls then compare readings of one device,
 * as on one machine, while the other shapes' designed rounds use the other
 * devices (until 2026-12-07 every designed round ran on rank 0's device
 * alone: on a measured one-knob run the other ranks idled, 4 of 81 requests).
 * Which device a shape gets never shows in a decision: the decisions are this
 * process's, from the readings; with a worker whose readings are a function
 * of the request the files equal a one-process run's. 1: run; 0: no lanes
 * here (one device), the caller runs the round in order on one thread; or an
 * error. */
static int kw_run_lanes(kw_eng *E, size_t n_live)
{
    int nd = E->ev->devices;
    if (nd <= 1 || !E->ev->eval_on || n_live == 0)
        return 0;
    /* at: each device's first job in the regrouped live (a prefix sum);
     * put: where the next one goes, then the lanes' offsets; tmp: live regrouped */
    size_t *at = calloc(2 * ((size_t)nd + 1) + n_live, sizeof *at);
    if (!at)
        return kw_error_set(KW_ENOMEM, "out of memory queueing evaluations");
    size_t *put = at + nd + 1, *tmp = put + nd + 1;
    for (size_t i = 0; i < n_live; i++) {
        kw_job *j = &E->jobs[E->live[i]];
        j->device = j->shape % nd;
        at[j->device + 1]++;
    }
    for (int d = 0; d < nd; d++)
        at[d + 1] += at[d];
    memcpy(put, at, (size_t)nd * sizeof *put);
    for (size_t i = 0; i < n_live; i++)
        tmp[put[E->jobs[E->live[i]].device]++] = E->live[i];
    memcpy(E->live, tmp, n_live * sizeof *tmp);
    size_t n_lanes = 0; /* the lanes that hold a job, as offsets into live */
    for (int d = 0; d < nd; d++)
        if (at[d + 1] > at[d])
            put[n_lanes++] = at[d];
    put[n_lanes] = n_live;
    kw_evpool_run_lanes(E->pool, E->ev, E->jobs, E->live, put, n_lanes);
    free(at);
    return 1;
}

/* The one mean rule (kw_repstat, search/kw_reduce.h), which verify and the
 * journal readers use too, over the memo's finished repetitions in order. */
void kw_engine_stats(kw_eng *E, int shape, uint64_t id, kw_cst *o)
{
    kw_repstat st;
    kw_reduce_repstat_init(&st);
    for (int r = 0; r < E->reps; r++) {
        const kw_memo_ent *e = kw_memo_find(&E->memo, shape, id, r);
        if (e && e->state == KW_MEMO_DONE)
            kw_reduce_repstat_add(&st, e->primary, e->guards, e->rc);
    }
    memset(o, 0, sizeof *o);
    o->n = st.n;
    o->ok = st.n > 0 && st.ok;
    o->guards = st.guards;
    o->mean = kw_reduce_repstat_mean(&st);
    o->sd = kw_reduce_repstat_sd(&st);
}

void kw_engine_stats_c(kw_eng *E, const kw_shape *s, const kw_cand *c, kw_cst *o)
{
    kw_engine_stats(E, s->shape, kw_knobs_cand_id(E->ks, c), o);
}

double kw_engine_half(kw_eng *E, const kw_shape *s, const kw_cand *c)
{
    const kw_memo_ent *e = kw_memo_find(&E->memo, s->shape, kw_knobs_cand_id(E->ks, c), 0);
    return e && e->state == KW_MEMO_DONE ? e->half : NAN;
}

/* The primary's interval half-width from an evaluation's metrics (kw_eng ci_lo/ci_hi). */
static double kw_half_of(const kw_eng *E, const double *m)
{
    return E->ci_lo >= 0 ? (m[E->ci_hi] - m[E->ci_lo]) / 2.0 : NAN;
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
double kw_engine_gain_pct(double ref, double x)
{
    if (ref == 0)
        return x < 0 ? INFINITY : (x > 0 ? -INFINITY : 0.0);
    return (ref - x) / fabs(ref) * 100.0;
}

/* ------------------------------------------------------------------ the control
 *
 * A noisy OFAT round re-measures the config its challengers are judged
 * against (the incumbent; an excursion's start; the fix's converged config)
 * beside them, and each challenger measured in the round is judged against
 * those same-round repetitions. Why: a measuring evaluator on a shared host
 * drifts with the load, and an incumbent measured once, in the round that
 * accepted it, and held against every later challenger blocks real gains
 * whenever that round was a lucky one (doc/measuring-log.md, "Why the one-knob search
 * misses": its neighbours read 119-138% worse against its stale samples and
 * 12-27% faster interleaved). The control's repetitions get fresh indices,
 * block k = 1, 2, ... of the config being repetitions k*reps .. k*reps+reps-1
 * (the memo key and the E record's rep=), so no record is overwritten, the
 * mean rule (repetitions 0..reps-1) is untouched, and a resumed run finds
 * the same block: k is the first block not yet journalled in this process,
 * which during a replay is the journal's block of that round. The control's
 * jobs come first in each repetition of the round (kw_interleave_reps), so
 * control repetition r and a challenger's repetition r are measured in the
 * same sweep (on a drifting evaluator the round is measured in that order
 * on one thread: kw_loop). Controls are real measurements: they count against the budget
 * (reserved with the round's first candidate) and are reported apart
 * (kw_engine_summary.controls, the reducer's per-shape count). */

/* The control block of s this round, or 0: only a noisy evaluator, only a
 * round whose strategy named a reference and that measures something. */
static int kw_ctl_on(const kw_eng *E, const kw_shape *s)
{
    return E->ev->noisy && !E->o.no_control && s->ctl_want && s->phase == KW_SHAPE_RUNNING;
}

int kw_engine_pair(kw_eng *E, const kw_shape *s, const kw_cand *ref, uint64_t id, kw_pair *out)
{
    if (s->ctl_k == 0 || kw_knobs_cand_id(E->ks, ref) != s->ctl_id || id == s->ctl_id)
        return 0;
    if (s->ctl_k < 0)
        return -1; /* a round that measured nothing: no control, no same-round evidence */
    kw_repstat st;
    kw_reduce_repstat_init(&st);
    for (int r = 0; r < E->reps; r++) {
        const kw_memo_ent *a = kw_memo_find(&E->memo, s->shape, s->ctl_id, s->ctl_k * E->reps + r);
        if (!a || a->state != KW_MEMO_DONE || a->round != E->round)
            return 0; /* not reached: the round was planned without it */
        if (a->rc != 0 || (a->guards && a->guards[0]) || !isfinite(a->primary))
            return -1; /* the control failed: no same-round evidence this round */
        out->a[r] = a->primary;
        kw_reduce_repstat_add(&st, a->primary, a->guards, a->rc);
    }
    for (int r = 0; r < E->reps; r++) {
        const kw_memo_ent *c = kw_memo_find(&E->memo, s->shape, id, r);
        if (!c || c->state != KW_MEMO_DONE)
            return 0;
        if (c->round != E->round)
            return -1;
        out->c[r] = c->primary;
    }
    out->n = E->reps;
    out->k = s->ctl_k;
    out->ref_id = s->ctl_id;
    out->ref_mean = kw_reduce_repstat_mean(&st);
    return 1;
}

/* Paired, not Welch on the same-round samples: pair r shares its
 * repetition's sweep of the round, so load that changes between sweeps
 * moves both of its members and cancels in their difference, where a
 * two-sample test would carry it into both variances (the paired comparison
 * design: Student 1908; Montgomery, Design and Analysis of Experiments, 8th
 * ed., 2.5.1). The statistic is Student's t of the mean difference
 * d_r = a_r + margin - c_r with n-1 degrees of freedom (GSL's CDF); margin 0
 * tests a gain, margin > 0 non-inferiority (the bounded fix). */
double kw_engine_paired_p(const kw_pair *pr, double margin)
{
    int n = pr->n;
    if (n < 2)
        return NAN;
    double sum = 0;
    for (int r = 0; r < n; r++)
        sum += pr->a[r] + margin - pr->c[r];
    double mean = sum / n, ss = 0;
    for (int r = 0; r < n; r++) {
        double d = pr->a[r] + margin - pr->c[r] - mean;
        ss += d * d;
    }
    double sd = sqrt(ss / (n - 1));
    if (!isfinite(mean) || !isfinite(sd))
        return 1.0;
    if (!(sd > 0))
        return mean > 0 ? 0.0 : 1.0;
    return gsl_cdf_tdist_Q(mean / (sd / sqrt((double)n)), n - 1);
}

/* kw_engine_judge past the guards: the gain over the minimum effect and, when
 * noisy, significant. */
static void kw_engine_judge_gain(kw_eng *E, const kw_cst *ref, const kw_cst *c, const kw_pair *pr,
                                 int m, const char *prefix, kw_verdict *v)
{
    const char *tag = pr ? "paired " : "";
    const char *same = pr ? " against the control of the round" : "";
    if (!(v->gain >= E->o.min_effect_pct)) {
        if (v->gain < 0)
            snprintf(v->why, sizeof v->why, "%sworse by %.2f%%%s", prefix, -v->gain, same);
        else if (v->gain == 0)
            snprintf(v->why, sizeof v->why, "%sno change%s", prefix, same);
        else
            snprintf(v->why, sizeof v->why, "%sgain %.2f%% below the minimum effect %.2f%%%s",
                     prefix, v->gain, E->o.min_effect_pct, same);
        return;
    }
    if (E->ev->noisy) {
        double p = pr ? kw_engine_paired_p(pr, 0.0)
                      : kw_engine_welch_p(ref->mean, ref->sd, ref->n, c->mean, c->sd, c->n);
        v->p = isnan(p) ? 1.0 : fmin(1.0, p * (m > 0 ? m : 1));
        if (!(v->p < E->o.alpha)) {
            snprintf(v->why, sizeof v->why, "%sgain %.2f%% not significant (%sp %.3g >= alpha %.3g)",
                     prefix, v->gain, tag, v->p, E->o.alpha);
            return;
        }
        v->ok = 1;
        snprintf(v->why, sizeof v->why, "%sgain %.2f%% (%sp %.3g)", prefix, v->gain, tag, v->p);
        return;
    }
    v->ok = 1;
    snprintf(v->why, sizeof v->why, "%sgain %.2f%%", prefix, v->gain);
}

/* The acceptance rule: c against the reference config ref (or, with pr, its
 * control of this round); m candidates are compared in the decision
 * (Bonferroni). prefix names the reference in reasons. */
void kw_engine_judge(kw_eng *E, const kw_cst *ref, const kw_cst *c, const kw_pair *pr, int m,
                     const char *prefix, kw_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->p = NAN;
    v->ref_mean = NAN;
    double ref_mean = ref->mean;
    if (pr) {
        v->ctl = pr->k;
        v->ref_id = pr->ref_id;
        v->ref_mean = ref_mean = pr->ref_mean;
    }
    v->gain = kw_engine_gain_pct(ref_mean, c->mean);
    if (c->n == 0) {
        snprintf(v->why, sizeof v->why, "not evaluated");
        return;
    }
    /* Toward the guards: the reference fails guards (a baseline outside an SLA)
     * and c fails only guards the reference fails too. Only a repair (c passes)
     * led out before, and from a baseline whose every one-knob neighbour still
     * fails the SLA nothing did (validate_resnet_npu conv_b8_c4: three one-knob
     * steps, each lowering p95 and p99, reach it). c is judged on the primary
     * as a passing pair would be; kw_ofat_judge_items prefers any repair. */
    int toward = !c->ok && !ref->ok && ref->n > 0 && kw_guards_within(c->guards, ref->guards);
    if (!c->ok && !toward) {
        snprintf(v->why, sizeof v->why, "guard %s", c->guards);
        return;
    }
    if (toward && !(isfinite(c->mean) && isfinite(ref_mean))) {
        snprintf(v->why, sizeof v->why, "guard %s", c->guards);
        return;
    }
    if (!isfinite(c->mean)) {
        snprintf(v->why, sizeof v->why, "primary metric not finite");
        return;
    }
    if (!ref->ok && !toward) {
        v->ok = 1;
        snprintf(v->why, sizeof v->why, "%srepairs failing guards (%s)", prefix, ref->guards);
        return;
    }
    if (toward) {
        kw_engine_judge_gain(E, ref, c, pr, m, prefix, v);
        if (v->ok && isnan(v->p))
            snprintf(v->why, sizeof v->why, "%sgain %.2f%% toward the guards (fails %s, as the "
                     "reference does)", prefix, v->gain, c->guards);
        else if (v->ok)
            snprintf(v->why, sizeof v->why, "%sgain %.2f%% (p %.3g) toward the guards (fails %s, "
                     "as the reference does)", prefix, v->gain, v->p, c->guards);
        else
            snprintf(v->why, sizeof v->why, "guard %s", c->guards);
        return;
    }
    kw_engine_judge_gain(E, ref, c, pr, m, prefix, v);
}

/* ------------------------------------------------------------------ records */

/* Pairing on for this run (kw_engine.c "the pairing"). */
static int kw_pair_on(const kw_eng *E)
{
    return E->ev->noisy && E->o.pair > 0;
}

static int kw_add(kw_eng *E);
static void kw_id(kw_jbuf *b, const char *key, uint64_t id);

double kw_engine_rerank_p(const kw_eng *E)
{
    if (E->o.rerank < 2 || E->ev->noisy || !E->ev->paired || E->o.strategy != KW_STRATEGY_OFAT)
        return 0;
    return strcmp(E->o.metric, "p95_us") == 0 ? 0.95 : strcmp(E->o.metric, "p99_us") == 0 ? 0.99 : 0;
}

int kw_engine_rerank_get(kw_eng *E, const kw_shape *s, const kw_cand *a, const kw_cand *b, long n,
                         kw_paired *out)
{
    uint64_t ida = kw_knobs_cand_id(E->ks, a), idb = kw_knobs_cand_id(E->ks, b);
    if (E->j && E->rr_next < E->j->n_reranks) {
        const kw_jrerank *x = &E->j->reranks[E->rr_next];
        if (x->shape == s->shape && x->id == ida && x->rid == idb && x->n == n) {
            /* resume: the journal's figures (the writer compares the record all the same) */
            E->rr_next++;
            *out = (kw_paired){.a = x->a, .b = x->b, .half = x->half, .batches = x->batches,
                               .samples = n, .a_guard = x->a_guard, .b_guard = x->b_guard};
            return 0;
        }
    }
    memset(out, 0, sizeof *out);
    double t = kw_now_s();
    int rc = E->ev->paired(E->ev->ctx, a, b, s->shape, kw_engine_rerank_p(E), n, out);
    E->rr_s += kw_now_s() - t; /* the progress's re-rank rate (kw_report) */
    E->rr_live_requests += 2 * n;
    return rc;
}

int kw_engine_rerank_emit(kw_eng *E, const kw_shape *s, uint64_t ida, uint64_t idb, long n,
                          const kw_paired *v)
{
    kw_jbuf *bf = &E->rec;
    kw_journal_buf_printf(bf, "R s=%d", s->shape);
    kw_id(bf, "id", ida);
    kw_id(bf, "rid", idb);
    kw_journal_buf_printf(bf, " n=%ld", n);
    kw_journal_buf_dbl(bf, "a", v->a);
    kw_journal_buf_dbl(bf, "b", v->b);
    kw_journal_buf_dbl(bf, "half", v->half);
    kw_journal_buf_printf(bf, " k=%d", v->batches);
    if (v->a_guard)
        kw_journal_buf_printf(bf, " ga=1");
    if (v->b_guard)
        kw_journal_buf_printf(bf, " gb=1");
    E->sum.reranks++;
    E->sum.rerank_requests += 2 * n;
    E->S[s - E->S].rr_requests += 2 * n; /* the progress (kw_report) */
    return kw_add(E);
}

int kw_engine_predict(kw_eng *E, const kw_cand *c, int shape, kw_metrics *m)
{
    int rc = E->ev->predict(E->ev->ctx, c, shape, m);
    if ((rc == KW_ENOMEM || rc == KW_EIO || rc == KW_EINTERRUPTED) && !E->predict_rc) {
        E->predict_rc = rc;
        snprintf(E->predict_err, sizeof E->predict_err, "%s", kw_error_last());
    }
    return rc;
}

static int kw_add(kw_eng *E)
{
    if (E->predict_rc) {
        kw_journal_buf_reset(&E->rec);
        return kw_error_set(E->predict_rc, "estimating a candidate: %s", E->predict_err);
    }
    if (E->rec.oom)
        return kw_error_set(KW_ENOMEM, "out of memory formatting a journal record");
    int rc = kw_journal_writer_add(E->w, E->rec.s);
    kw_journal_buf_reset(&E->rec);
    return rc;
}

static void kw_id(kw_jbuf *b, const char *key, uint64_t id)
{
    kw_journal_buf_printf(b, " %s=%016llx", key, (unsigned long long)id);
}

static int kw_emit_header(kw_eng *E)
{
    kw_jbuf *b = &E->rec;
    const kw_knobspace *ks = E->ks;
    int rc;
    kw_journal_buf_printf(b, "H format=%d", KW_JOURNAL_FORMAT);
    kw_journal_buf_str(b, "version", E->info->version ? E->info->version : "");
    kw_journal_buf_printf(b, " seed=%llu strategy=%s policy=%s budget=%ld",
                          (unsigned long long)E->o.seed, kw_journal_strategy_name(E->o.strategy),
                          kw_journal_policy_name(E->o.policy), E->o.budget);
    kw_journal_buf_str(b, "metric", E->o.metric);
    kw_journal_buf_dbl(b, "min_effect", E->o.min_effect_pct);
    kw_journal_buf_dbl(b, "alpha", E->o.alpha);
    kw_journal_buf_printf(b, " repeats=%d noisy=%d tabu=%d probes=%d%s tuned=", E->reps,
                          E->ev->noisy ? 1 : 0, E->o.tabu, E->o.probes,
                          E->ev->noisy && !E->o.no_control ? " control=1" : "");
    for (int i = 0; i < E->n_shapes; i++)
        kw_journal_buf_printf(b, i ? ",%d" : "%d", E->shapes[i]);
    if (kw_pair_on(E))
        kw_journal_buf_printf(b, " pair=%ld", E->o.pair);
    if (kw_engine_rerank_p(E) > 0)
        kw_journal_buf_printf(b, " rerank=%d", E->o.rerank);
    if (E->alias_on)
        kw_journal_buf_printf(b, " alias=%d", E->alias_on);
    if ((rc = kw_add(E)) != 0)
        return rc;
    for (int i = 0; i < E->info->n_attrs; i++) {
        kw_journal_buf_printf(b, "A");
        kw_journal_buf_str(b, "key", E->info->attr_keys[i]);
        kw_journal_buf_str(b, "value", E->info->attr_values[i]);
        if ((rc = kw_add(E)) != 0)
            return rc;
    }
    for (int i = 0; i < E->info->n_inputs; i++) {
        kw_journal_buf_printf(b, "I");
        kw_journal_buf_str(b, "name", E->info->input_names[i]);
        kw_journal_buf_str(b, "hash", E->info->input_hashes[i]);
        if ((rc = kw_add(E)) != 0)
            return rc;
    }
    for (int i = 0; i < ks->n_knobs; i++) {
        const kw_knob *k = &ks->knobs[i];
        kw_journal_buf_printf(b, "K i=%d", i);
        kw_journal_buf_str(b, "name", k->name);
        kw_journal_buf_printf(b, " base=%d", k->baseline);
        for (int v = 0; v < k->n_values; v++) {
            if (v == 0) {
                kw_journal_buf_str(b, "values", k->values[v]);
            } else {
                kw_journal_buf_printf(b, ",");
                kw_journal_buf_str(b, NULL, k->values[v]);
            }
        }
        if ((rc = kw_add(E)) != 0)
            return rc;
    }
    for (int i = 0; i < ks->n_constraints; i++) {
        const kw_constraint *c = &ks->constraints[i];
        kw_journal_buf_printf(b, "C i=%d", i);
        kw_journal_buf_str(b, "name", c->name);
        kw_journal_buf_printf(b, " terms=");
        for (int t = 0; t < c->n_terms; t++)
            kw_journal_buf_printf(b, "%s%d:%llx", t ? "," : "", c->terms[t].knob,
                                  (unsigned long long)c->terms[t].mask);
        if ((rc = kw_add(E)) != 0)
            return rc;
    }
    kw_journal_buf_printf(b, "M names=");
    for (int i = 0; i < E->ev->n_metrics; i++) {
        if (i)
            kw_journal_buf_printf(b, ",");
        kw_journal_buf_str(b, NULL, E->ev->metric_names[i]);
    }
    if ((rc = kw_add(E)) != 0)
        return rc;
    for (int i = 0; i < E->ev->n_shapes; i++) {
        kw_journal_buf_printf(b, "S i=%d", i);
        kw_journal_buf_str(b, "name", E->ev->shape_names[i]);
        if ((rc = kw_add(E)) != 0)
            return rc;
    }
    return 0;
}

static int kw_emit_eval(kw_eng *E, int shape, uint64_t id, int rep, const kw_cand *c, int rc_eval,
                        const double *m, const char *guards, const char *klass,
                        const uint64_t *alias_of)
{
    kw_jbuf *b = &E->rec;
    kw_journal_buf_printf(b, "E s=%d", shape);
    kw_id(b, "id", id);
    kw_journal_buf_printf(b, " rep=%d", rep);
    kw_journal_buf_cand(b, "c", E->ks, c);
    kw_journal_buf_printf(b, " rc=%d m=", rc_eval);
    for (int i = 0; i < E->ev->n_metrics; i++) {
        if (i)
            kw_journal_buf_printf(b, ",");
        kw_journal_buf_dbl(b, NULL, m[i]);
    }
    kw_journal_buf_str(b, "g", guards);
    kw_journal_buf_str(b, "k", klass);
    if (alias_of)
        kw_id(b, "a", *alias_of);
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
static int kw_step(kw_eng *E, kw_shape *s, const kw_cand *to, kw_decision d, kw_step_phase ph,
                   double p, int con, const char *why, const kw_verdict *v)
{
    int knob;
    int rc = kw_engine_step_check(&knob, E->ks, &s->pos, to);
    if (rc != 0)
        return rc;
    if (kw_is_move(d) && con >= 0)
        return kw_error_set(KW_ESTATE, "refused step: moving to a config that breaks a constraint");
    const kw_knob *k = &E->ks->knobs[knob];
    kw_cst a, c;
    kw_engine_stats_c(E, s, &s->pos, &a);
    if (con >= 0) {
        memset(&c, 0, sizeof c);
        c.mean = NAN;
    } else {
        kw_engine_stats_c(E, s, to, &c);
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
    kw_journal_buf_printf(b, "T s=%d step=%d phase=%s d=%s", s->shape, s->step,
                          kw_journal_step_phase_name(ph), kw_journal_decision_name(d));
    kw_id(b, "parent", kw_knobs_cand_id(E->ks, &s->pos));
    kw_id(b, "id", kw_knobs_cand_id(E->ks, to));
    kw_journal_buf_str(b, "knob", k->name);
    kw_journal_buf_str(b, "old", k->values[s->pos.v[knob]]);
    kw_journal_buf_str(b, "new", k->values[to->v[knob]]);
    kw_journal_buf_dbl(b, "before", a.mean);
    kw_journal_buf_dbl(b, "after", c.mean);
    kw_journal_buf_dbl(b, "delta", delta);
    kw_journal_buf_dbl(b, "p", p);
    kw_journal_buf_printf(b, " nb=%d na=%d", a.n, c.n);
    kw_journal_buf_str(b, "g", g);
    kw_journal_buf_str(b, "con", con >= 0 ? E->ks->constraints[con].name : "");
    kw_journal_buf_cand(b, "c", E->ks, to);
    kw_journal_buf_str(b, "why", why);
    if (v && v->ctl > 0) {
        kw_id(b, "ref", v->ref_id);
        kw_journal_buf_printf(b, " ctl=%d", v->ctl);
        kw_journal_buf_dbl(b, "rmean", v->ref_mean);
    }
    if ((rc = kw_add(E)) != 0)
        return rc;
    if (kw_is_move(d))
        s->pos = *to;
    return 0;
}

int kw_engine_step(kw_eng *E, kw_shape *s, const kw_cand *to, kw_decision d, kw_step_phase ph,
                   double p, int con, const char *why)
{
    return kw_step(E, s, to, d, ph, p, con, why, NULL);
}

int kw_engine_step_judged(kw_eng *E, kw_shape *s, const kw_cand *to, kw_decision d,
                          kw_step_phase ph, const kw_verdict *v, const char *why)
{
    return kw_step(E, s, to, d, ph, v->p, -1, why, v);
}

int kw_engine_emit_viol(kw_eng *E, kw_shape *s, const kw_item *it, const char *why)
{
    kw_jbuf *b = &E->rec;
    kw_journal_buf_printf(b, "V s=%d", s->shape);
    kw_id(b, "id", it->id);
    kw_journal_buf_cand(b, "c", E->ks, &it->cand);
    kw_journal_buf_str(b, "con", E->ks->constraints[it->con].name);
    kw_journal_buf_str(b, "why", why);
    return kw_add(E);
}

static int kw_emit_done(kw_eng *E, kw_shape *s, const kw_cand *best, const char *why)
{
    kw_cst bs, bb;
    kw_engine_stats_c(E, s, &s->base, &bs);
    kw_engine_stats_c(E, s, best, &bb);
    kw_jbuf *b = &E->rec;
    kw_journal_buf_printf(b, "D s=%d", s->shape);
    kw_journal_buf_str(b, "why", why);
    kw_id(b, "base", kw_knobs_cand_id(E->ks, &s->base));
    kw_journal_buf_dbl(b, "base_p", bs.mean);
    kw_id(b, "best", kw_knobs_cand_id(E->ks, best));
    kw_journal_buf_dbl(b, "best_p", bb.mean);
    kw_journal_buf_cand(b, "c", E->ks, best);
    kw_journal_buf_printf(b, " evals=%ld steps=%d", s->evals, s->step);
    if (E->alias_on) /* since stop 47: evals counts full evaluations, aliases beside */
        kw_journal_buf_printf(b, " aliases=%ld", s->aliases);
    return kw_add(E);
}

/* ------------------------------------------------------------------ planning */

int kw_engine_item_add(kw_eng *E, kw_shape *s, const kw_cand *c, int group)
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
    it->id = kw_knobs_cand_id(E->ks, c);
    it->con = kw_knobs_cand_violates(E->ks, c);
    it->group = group;
    it->dropped = 0;
    it->estimated = it->est_fails = it->skipped = 0;
    it->est = NAN;
    it->known = NAN;
    return 0;
}

/* Memo cost of a candidate this round: repetitions not yet journalled or pending. */
int kw_engine_cost(kw_eng *E, const kw_shape *s, uint64_t id)
{
    int n = 0;
    for (int r = 0; r < E->reps; r++) {
        const kw_memo_ent *e = kw_memo_find(&E->memo, s->shape, id, r);
        n += !e || (e->state != KW_MEMO_DONE && e->state != KW_MEMO_PENDING);
    }
    return n;
}

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

static int kw_screen_items(kw_eng *E, kw_shape *s, unsigned char *keep)
{
    int n = 0;
    kw_scr *v = malloc((size_t)(s->n_items > 0 ? s->n_items : 1) * sizeof *v);
    if (!v)
        return kw_error_set(KW_ENOMEM, "out of memory screening candidates");
    for (int i = 0; i < s->n_items; i++) {
        keep[i] = 1;
        kw_item *it = &s->items[i];
        if (it->con >= 0 || kw_engine_cost(E, s, it->id) == 0)
            continue;
        kw_metrics m;
        memset(&m, 0, sizeof m);
        int rc = kw_engine_predict(E, &it->cand, s->shape, &m);
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

/* Turn a shape's plan into jobs: memo hits cost nothing, journal entries are
 * replayed, the rest is evaluated. Items beyond the budget (less the
 * strategy's reserve) are dropped. */
/* Multi-fidelity screening of a round the strategy marked (s->mf_round):
 * every candidate still to be evaluated gets the evaluator's cheap estimate;
 * a candidate that cannot gain the minimum effect over the incumbent within
 * the shape's measured error bound is skipped (kw_mf_can_gain), and order[]
 * is the order the budget takes the rest in (best estimate first, plan order
 * when the round has no estimates; a strategy's forecast from full evaluations,
 * kw_item.known, before the estimate). Deterministic: estimates are pure
 * functions of (candidate, shape), the bound of journaled pairs. */
static int kw_mf_screen(kw_eng *E, kw_shape *s, int *order)
{
    int n = s->n_items;
    for (int i = 0; i < n; i++)
        order[i] = i;
    if (!s->mf_round || !E->o.estimate || !E->ev->predict || E->o.screen > 0 || n == 0)
        return 0;
    double *est = malloc((size_t)n * sizeof *est);
    int *fails = malloc((size_t)n * sizeof *fails);
    if (!est || !fails) {
        free(est);
        free(fails);
        return kw_error_set(KW_ENOMEM, "out of memory screening candidates");
    }
    kw_cst inc;
    kw_engine_stats_c(E, s, &s->pos, &inc);
    double inc_p = inc.ok && inc.n > 0 ? inc.mean : INFINITY;
    for (int i = 0; i < n; i++) {
        kw_item *it = &s->items[i];
        est[i] = -INFINITY; /* free or refused items first: they cost nothing */
        fails[i] = 0;
        if (it->con >= 0 || kw_engine_cost(E, s, it->id) == 0)
            continue;
        kw_metrics m;
        memset(&m, 0, sizeof m);
        int rc = kw_engine_predict(E, &it->cand, s->shape, &m);
        if (rc != 0) {
            kw_error_clear(); /* no estimate: the candidate is evaluated, last */
            est[i] = INFINITY;
            continue;
        }
        it->estimated = 1;
        it->est = m.v[E->primary];
        it->est_fails = m.guards[0] != '\0';
        est[i] = isfinite(it->est) ? it->est : INFINITY;
        fails[i] = it->est_fails;
        s->estimates++;
        E->sum.estimates++;
        if (s->mf_round != KW_MF_ROUND_CHECK &&
            !kw_mf_can_gain(&s->mfb, it->est, inc_p, E->o.min_effect_pct)) {
            it->skipped = 1;
            it->dropped = 1;
            E->sum.screened_out++;
        }
    }
    /* a forecast from full evaluations outranks the estimate, which is scaled into the
     * same units by the middle of the shape's measured ratio range: on bursty decode
     * shapes the estimate ranks configs badly (Spearman 0.14-0.30 over the space, `make
     * bench` screen), and at validate_small_mlp decode seed 11, 2% budget, it sent the
     * probe rounds to pairs with gate_up.tile_m=256 (each measured +10-33% alone) while
     * the pair of the two least-bad changes (+1.3% and +1.8% alone), the exhaustive
     * optimum's, was never evaluated */
    int n_known = 0;
    for (int i = 0; i < n; i++)
        n_known += s->items[i].estimated && isfinite(s->items[i].known);
    double mid = s->mfb.n_pairs > 0 ? sqrt(s->mfb.min_ratio * s->mfb.max_ratio) : 1.0;
    for (int i = 0; i < n && n_known > 0; i++) {
        const kw_item *it = &s->items[i];
        if (!it->estimated)
            continue;
        if (isfinite(it->known)) {
            est[i] = it->known;
            fails[i] = 0; /* its two changes alone passed every guard */
        } else if (isfinite(est[i])) {
            est[i] *= mid;
        }
    }
    kw_mf_order(order, est, fails, n);
    if (s->mf_round == KW_MF_ROUND_FIRST && s->mfb.n_pairs < KW_MF_MIN_PAIRS) {
        /* a round the strategy may cut (its first sweep): while the bound is not
         * trusted, evaluate only the best-estimated candidates that make it so, and
         * under a budget at most 1/KW_MF_FIRST_SHARE of it; the rest wait for the
         * rounds that follow, screened */
        int room = KW_MF_MIN_PAIRS - s->mfb.n_pairs;
        if (E->o.budget > 0 && room > E->o.budget / KW_MF_FIRST_SHARE)
            room = (int)(E->o.budget / KW_MF_FIRST_SHARE);
        for (int oi = 0; oi < n; oi++) {
            kw_item *it = &s->items[order[oi]];
            if (!it->estimated || it->skipped)
                continue;
            if (room > 0) {
                room--;
                continue;
            }
            it->skipped = KW_MF_DEFERRED;
            it->dropped = 1;
        }
    }
    free(est);
    free(fails);
    return 0;
}

/* The round's estimates as P records, in plan order, before its E records. */
static int kw_emit_preds(kw_eng *E, kw_shape *s)
{
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        if (!it->estimated)
            continue;
        kw_jbuf *b = &E->rec;
        kw_journal_buf_printf(b, "P s=%d", s->shape);
        kw_id(b, "id", it->id);
        kw_journal_buf_cand(b, "c", E->ks, &it->cand);
        kw_journal_buf_dbl(b, "est", it->est);
        kw_journal_buf_str(b, "g", it->est_fails ? "estimate" : "");
        kw_journal_buf_printf(b, " skip=%d", it->skipped);
        int rc = kw_add(E);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The round's pairs (estimated and evaluated, both guard-passing) into the
 * shape's error bound. */
static void kw_mf_learn(kw_eng *E, kw_shape *s)
{
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        if (!it->estimated || it->dropped || it->est_fails)
            continue;
        kw_cst c;
        kw_engine_stats(E, s->shape, it->id, &c);
        if (c.ok && c.n == E->reps)
            kw_mf_bound_add(&s->mfb, it->est, c.mean);
    }
}

/* A noisy round's jobs in repetition-major order: every candidate's first
 * repetition, then every candidate's second, ... (stable: plan order within a
 * repetition). Jobs run and are journalled in this order, so a measuring
 * evaluator on a drifting device measures the round's candidates A/B/A/B
 * rather than each one's repetitions back to back: load that changes during
 * the round spreads over all of them instead of deciding which candidate
 * reads fast. Measured (doc/measuring-log.md, "A real tuning run"): in candidate-major
 * order an exhaustive measured sweep read the configs it measured first, at
 * load 2.7, up to 3x faster than those it measured last, at load 4.9, which
 * decided its ranking. A pure function of the plan: the journal stays the same
 * for any thread count and resume. Noiseless runs have one repetition and
 * keep their order. */
static int kw_queue(kw_eng *E, const kw_cand *c, uint64_t id, int shape, int rep,
                    const kw_memo_ent *e, int screened)
{
    kw_job *nj = kw_grow_array(E->jobs, &E->cap_jobs, E->n_jobs, sizeof *nj);
    if (!nj)
        return kw_error_set(KW_ENOMEM, "out of memory queueing evaluations");
    E->jobs = nj;
    kw_job *j = &E->jobs[E->n_jobs++];
    j->cand = *c;
    j->id = id;
    j->shape = shape;
    j->rep = rep;
    j->rc = 0;
    j->live = e->state != KW_MEMO_JOURNAL;
    j->je = e->state == KW_MEMO_JOURNAL ? e->je : NULL;
    j->screened = j->live && screened;
    j->primary = E->primary;
    j->alias = 0;
    j->alias_ent = -1;
    return 0;
}

/* ------------------------------------------------------------------ aliases
 *
 * A noiseless evaluator that names a candidate's service (kw_evaluator.service_key:
 * the bytes of everything its evaluation reads past the candidate's own stage)
 * lets the engine skip evaluations whose result is known: a candidate whose key
 * equals the key of an earlier full evaluation of the same shape gets that
 * evaluation's result (metrics, guards, class, rc) without an evaluator call. Its
 * E record is an ordinary one with a=ID, the original's config id, at the end; the
 * budget counts full evaluations only (an alias costs 0 when the round is planned).
 * Stop 45 measured (doc/search-log.md "growth-phases") that 36-49% of the growth
 * bench's evaluations repeated a service bit for bit: a change of a knob that
 * reaches nothing at that config (o.tile_k at a fused o-projection, ...).
 *
 * Determinism: keys are made while planning, on the calling thread, in the order
 * the round's jobs are queued (= journal order); the first full evaluation of a
 * key in journal order is its original, earlier rounds' or earlier in this round's
 * jobs (then filled when its record is written, before the alias's). Thread and
 * rank counts never enter. A resumed run makes the keys again from the replayed
 * candidates, so the table is the uninterrupted run's; a replayed record whose
 * alias mark disagrees with the key is refused (KW_ECORRUPT).
 * Exactness: a hash finds entries, then the entry's key is made again from its
 * config and the bytes compared: keys that share a hash never alias.
 * On when opts.alias, the evaluator gives service_key and is noiseless; recorded in
 * the header (alias=N, N the key's level, kw_skey), so a journal from before stays
 * without aliases on resume and one of stop 47 keeps its level 1. */

static int kw_alias_on(const kw_eng *E)
{
    return E->ev->service_key && !E->ev->noisy && E->reps == 1 ? E->o.alias : 0;
}

/* c's key on shape into E->key: 0 with *hash set and *ent the entry whose key is
 * the same (-1: none), 1 when c has no key (evaluated in full, never an original),
 * or a fatal error. */
static int kw_alias_find(kw_eng *E, int shape, const kw_cand *c, uint64_t *hash, long *ent)
{
    *ent = -1;
    E->key.n = 0;
    int rc = E->ev->service_key(E->ev->ctx, c, shape, &E->key);
    if (rc == KW_ENOMEM || rc == KW_EIO || rc == KW_EINTERRUPTED)
        return rc;
    if (rc != 0) {
        kw_error_clear(); /* no key: the full evaluation meets the error itself */
        return 1;
    }
    *hash = kw_memo_alias_hash(&E->key);
    size_t pos = 0;
    long i;
    while ((i = kw_memo_alias_next(&E->alias, shape, *hash, &pos)) >= 0) {
        E->key2.n = 0;
        rc = E->ev->service_key(E->ev->ctx, &E->alias.e[i].cand, shape, &E->key2);
        if (rc == KW_ENOMEM || rc == KW_EIO || rc == KW_EINTERRUPTED)
            return rc;
        if (rc != 0)
            return kw_error_set(KW_ESTATE, "the service key of config %016llx on shape '%s' "
                                "changed within the run", (unsigned long long)E->alias.e[i].id,
                                E->ev->shape_names[shape]);
        if (E->key2.n == E->key.n && memcmp(E->key2.b, E->key.b, E->key.n) == 0) {
            *ent = i;
            return 0;
        }
    }
    return 0;
}

/* Queue item it of shape s as an alias of entry ent (its memo entry e). */
static int kw_queue_alias(kw_eng *E, kw_shape *s, const kw_item *it, kw_memo_ent *e, long ent)
{
    int rc = kw_queue(E, &it->cand, it->id, s->shape, 0, e, 0);
    if (rc != 0)
        return rc;
    kw_job *j = &E->jobs[E->n_jobs - 1];
    j->alias = 1;
    j->alias_ent = ent;
    j->live = j->live && E->o.alias_check; /* the check evaluates it beside */
    e->state = KW_MEMO_PENDING;
    return 0;
}

/* The next block k >= 1 of (shape, id): the first one not journalled in
 * this process (during a replay, the journal's block of this round). */
static int kw_next_block(kw_eng *E, int shape, uint64_t id, int *k_out)
{
    int k = 1;
    for (;; k++) {
        const kw_memo_ent *e = kw_memo_find(&E->memo, shape, id, k * E->reps);
        if (!e || e->state == KW_MEMO_JOURNAL)
            break;
        if (k >= KW_CTL_BLOCK_MAX)
            return kw_error_set(KW_ESTATE, "more than %d re-measured blocks of one config",
                                KW_CTL_BLOCK_MAX);
    }
    *k_out = k;
    return 0;
}

/* Queue repetition r of block k of c (id) on shape. */
static int kw_queue_block(kw_eng *E, const kw_cand *c, uint64_t id, int shape, int k, int r)
{
    kw_memo_ent *e = kw_memo_put(&E->memo, shape, id, k * E->reps + r);
    if (!e)
        return kw_error_set(KW_ENOMEM, "out of memory in the evaluation memo");
    int rc = kw_queue(E, c, id, shape, k * E->reps + r, e, 0);
    if (rc == 0)
        e->state = KW_MEMO_PENDING; /* kw_queue inserts nothing: e is still valid */
    return rc;
}

/* The round's control (see "the control"): the reference's next block. */
static int kw_queue_control(kw_eng *E, kw_shape *s)
{
    uint64_t id = kw_knobs_cand_id(E->ks, &s->ctl_cand);
    int k, rc = kw_next_block(E, s->shape, id, &k);
    for (int r = 0; rc == 0 && r < E->reps; r++)
        rc = kw_queue_block(E, &s->ctl_cand, id, s->shape, k, r);
    if (rc != 0)
        return rc;
    s->ctl_k = k;
    s->ctl_id = id;
    return 0;
}
static int kw_interleave_reps(kw_eng *E, const kw_shape *s)
{
    size_t n = s->job1 - s->job0;
    if (!E->ev->noisy || E->reps < 2 || n < 2)
        return 0;
    kw_job *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return kw_error_set(KW_ENOMEM, "out of memory ordering evaluations");
    size_t k = 0;
    /* the control's repetition r (rep k*reps + r) opens sweep r (see "the control") */
    for (int r = 0; r < E->reps; r++)
        for (int ctl = 1; ctl >= 0; ctl--)
            for (size_t i = s->job0; i < s->job1; i++)
                if (E->jobs[i].rep % E->reps == r && (E->jobs[i].rep >= E->reps) == ctl)
                    tmp[k++] = E->jobs[i];
    /* every job's rep modulo reps is in [0, reps): the copy is a permutation */
    memcpy(E->jobs + s->job0, tmp, k * sizeof *tmp);
    free(tmp);
    /* a round with a control: pair r is the control's repetition r and a
     * candidate's, measured in sweep r (kw_engine_paired_p) */
    if (s->ctl_k > 0)
        E->in_order = 1;
    return 0;
}

static int kw_build_jobs(kw_eng *E, kw_shape *s)
{
    s->job0 = E->n_jobs;
    s->ctl_k = 0;
    long limit = E->o.budget > 0 ? E->o.budget - s->reserve : -1;
    long planned = 0, measured = 0;
    long ctl_cost = kw_ctl_on(E, s) ? E->reps : 0; /* the control's, reserved with the first */
    unsigned char *keep = NULL;
    int *order = malloc((size_t)(s->n_items > 0 ? s->n_items : 1) * sizeof *order);
    if (!order)
        return kw_error_set(KW_ENOMEM, "out of memory ordering candidates");
    int mrc = kw_mf_screen(E, s, order);
    if (mrc != 0) {
        free(order);
        return mrc;
    }
    if (E->o.screen > 0 && E->ev->predict && s->n_items > E->o.screen) {
        keep = malloc((size_t)s->n_items);
        if (!keep)
            return kw_error_set(KW_ENOMEM, "out of memory screening candidates");
        int rc = kw_screen_items(E, s, keep);
        if (rc != 0) {
            free(keep);
            free(order);
            return rc;
        }
    }
    for (int oi = 0; oi < s->n_items; oi++) {
        int i = order[oi];
        kw_item *it = &s->items[i];
        if (it->con >= 0 || it->skipped)
            continue;
        int cost = kw_engine_cost(E, s, it->id);
        uint64_t khash = 0;
        long ent = -1;
        int keyed = 0;
        if (cost > 0 && E->alias_on && !(keep && !keep[i])) {
            int krc = kw_alias_find(E, s->shape, &it->cand, &khash, &ent);
            if (krc != 0 && krc != 1) {
                free(keep);
                free(order);
                return krc;
            }
            keyed = krc == 0;
        }
        if (ent >= 0) { /* an alias: no evaluation, nothing of the budget */
            kw_memo_ent *e = kw_memo_put(&E->memo, s->shape, it->id, 0);
            int rc = e ? kw_queue_alias(E, s, it, e, ent)
                       : kw_error_set(KW_ENOMEM, "out of memory in the evaluation memo");
            if (rc != 0) {
                free(keep);
                free(order);
                return rc;
            }
            continue;
        }
        if (limit >= 0 && cost > 0 && s->evals + planned + cost + ctl_cost > limit) {
            it->dropped = 1;
            s->budget_hit = 1;
            continue;
        }
        planned += cost;
        measured += cost > 0 && !(keep && !keep[i]);
        for (int r = 0; r < E->reps; r++) {
            kw_memo_ent *e = kw_memo_put(&E->memo, s->shape, it->id, r);
            if (!e) {
                free(keep);
                free(order);
                return kw_error_set(KW_ENOMEM, "out of memory in the evaluation memo");
            }
            if (e->state == KW_MEMO_DONE || e->state == KW_MEMO_PENDING)
                continue;
            int rc = kw_queue(E, &it->cand, it->id, s->shape, r, e, keep && !keep[i]);
            if (rc != 0) {
                free(keep);
                free(order);
                return rc;
            }
            e->state = KW_MEMO_PENDING; /* kw_queue inserts nothing: e is still valid */
            if (keyed) { /* the first full evaluation of its key: the original */
                long a = kw_memo_alias_add(&E->alias, s->shape, khash, it->id, &it->cand);
                if (a < 0) {
                    free(keep);
                    free(order);
                    return kw_error_set(KW_ENOMEM, "out of memory recording a service key");
                }
                E->jobs[E->n_jobs - 1].alias_ent = a;
            }
        }
    }
    free(keep);
    free(order);
    if (ctl_cost > 0 && measured > 0) {
        int rc = kw_queue_control(E, s);
        if (rc != 0)
            return rc;
    } else if (ctl_cost > 0) {
        /* a round of memo hits only: nothing is measured beside the reference,
         * so nothing of it has same-round evidence (kw_engine_pair: -1) */
        s->ctl_k = -1;
        s->ctl_id = kw_knobs_cand_id(E->ks, &s->ctl_cand);
    }
    s->job1 = E->n_jobs;
    return kw_interleave_reps(E, s);
}

/* ------------------------------------------------------------------ deciding */

static int kw_fatal(int rc)
{
    return rc == KW_ENOMEM || rc == KW_EIO || rc == KW_EINTERRUPTED;
}

/* An alias's record (see "aliases"): its original's result, from the entry (filled
 * when the original's record was written, in an earlier round or earlier in this
 * one), or, resuming, the journal's record, which must name the same original.
 * Under opts.alias_check its own full evaluation is compared with it. */
static int kw_emit_alias(kw_eng *E, kw_shape *s, const kw_job *j)
{
    const kw_alias_ent *a = &E->alias.e[j->alias_ent];
    int n = E->ev->n_metrics, rc;
    if (!a->done)
        return kw_error_set(KW_ESTATE, "an alias of %016llx before its original's record",
                            (unsigned long long)a->id);
    if (j->je) {
        const kw_jeval *je = j->je;
        if (!je->alias || je->alias_of != a->id)
            return kw_error_set(KW_ECORRUPT, "%s: record %ld: %s where this run's service key "
                                "makes it an alias of %016llx", E->info->journal_path, je->record,
                                je->alias ? "an alias of another config" : "a full evaluation",
                                (unsigned long long)a->id);
        rc = kw_emit_eval(E, je->shape, je->id, je->rep, &je->cand, je->rc, je->m, je->guards,
                          je->klass, &je->alias_of);
        E->sum.replayed++;
    } else {
        if (j->live && (j->rc != a->rc || memcmp(j->m.v, a->m, sizeof(double) * (size_t)n) != 0 ||
                        strcmp(j->m.guards, a->guards) != 0 || strcmp(j->m.klass, a->klass) != 0)) {
            E->sum.alias_mismatches++;
            fprintf(stderr, "knobwise: alias check: config %016llx on shape '%s' differs from its "
                    "original %016llx\n", (unsigned long long)j->id, E->ev->shape_names[j->shape],
                    (unsigned long long)a->id);
        }
        rc = kw_emit_eval(E, j->shape, j->id, 0, &j->cand, a->rc, a->m, a->guards, a->klass, &a->id);
    }
    if (rc != 0)
        return rc;
    kw_memo_ent *e = kw_memo_find(&E->memo, j->shape, j->id, 0);
    e->state = KW_MEMO_DONE;
    e->rc = a->rc;
    e->guards = a->guards;
    e->primary = a->m[E->primary];
    e->half = kw_half_of(E, a->m);
    e->round = (int32_t)E->round;
    s->aliases++;
    E->sum.aliases++;
    return 0;
}

/* Journal this shape's evaluations of the round and put them in the memo. */
static int kw_emit_evals(kw_eng *E, kw_shape *s)
{
    for (size_t i = s->job0; i < s->job1; i++) {
        kw_job *j = &E->jobs[i];
        int rc;
        int rc_eval;
        const char *g;
        double primary, half;
        if (j->alias) {
            if ((rc = kw_emit_alias(E, s, j)) != 0)
                return rc;
            continue;
        }
        if (j->je && j->je->alias)
            return kw_error_set(KW_ECORRUPT, "%s: record %ld: an alias where this run evaluates "
                                "in full (the service key differs)", E->info->journal_path,
                                j->je->record);
        if (j->live) {
            char eg[KW_GUARDS_LEN];
            if (j->rc != 0 && !j->m.guards[0])
                snprintf(eg, sizeof eg, "error:%.200s", j->err[0] ? j->err : "evaluation failed");
            else
                snprintf(eg, sizeof eg, "%s", j->m.guards);
            rc = kw_emit_eval(E, j->shape, j->id, j->rep, &j->cand, j->rc, j->m.v, eg, j->m.klass,
                              NULL);
            g = kw_intern_get(&E->strs, eg);
            if (!g)
                return kw_error_set(KW_ENOMEM, "out of memory");
            if (rc == 0 && j->alias_ent >= 0) {
                const char *k = kw_intern_get(&E->strs, j->m.klass);
                rc = k ? kw_memo_alias_fill(&E->alias, j->alias_ent, j->rc, j->m.v,
                                            E->ev->n_metrics, g, k)
                       : kw_error_set(KW_ENOMEM, "out of memory");
            }
            rc_eval = j->rc;
            primary = j->m.v[E->primary];
            half = kw_half_of(E, j->m.v);
            E->sum.evals++;
        } else {
            const kw_jeval *je = j->je;
            rc = kw_emit_eval(E, je->shape, je->id, je->rep, &je->cand, je->rc, je->m, je->guards,
                              je->klass, NULL);
            if (rc == 0 && j->alias_ent >= 0)
                rc = kw_memo_alias_fill(&E->alias, j->alias_ent, je->rc, je->m, E->ev->n_metrics,
                                   je->guards, je->klass);
            g = je->guards;
            rc_eval = je->rc;
            primary = je->m[E->primary];
            half = kw_half_of(E, je->m);
            E->sum.replayed++;
        }
        if (rc != 0)
            return rc;
        kw_memo_ent *e = kw_memo_find(&E->memo, j->shape, j->id, j->rep);
        e->state = KW_MEMO_DONE;
        e->rc = rc_eval;
        e->guards = g;
        e->primary = primary;
        e->half = half;
        e->round = (int32_t)E->round;
        s->evals++;
        if (j->rep >= E->reps && s->phase == KW_SHAPE_PAIR) {
            s->pairs++;
            E->sum.pairs += j->live;
        } else if (j->rep >= E->reps) {
            s->controls++;
            E->sum.controls += j->live;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ the pairing
 *
 * A noisy run's figures of different configurations come from different
 * rounds, so drift between rounds reads as an effect: on a measured run
 * (README, 2026-12-05) the audit's sensitivity table, which compares the
 * recommendation with each one-knob neighbour by their own means, read a
 * neighbour as 11.6% better where an interleaved series put the
 * recommendation within 1.1% of the best. So once a noisy shape is done (its
 * D record written: the recommendation no longer moves), the pairing
 * re-measures the recommendation P beside each of its one-knob neighbours N
 * in turn, one neighbour per round: a fresh block of each (repetitions
 * k*reps .., as the control's: no record is overwritten, no mean changes),
 * alternating P N, N P, P N, ... so that a device drifting linearly over the
 * pair adds as much to P as to N (the crossover order of the paired
 * comparison design: Montgomery, Design and Analysis of Experiments, 8th ed.,
 * 4.3). Pair r is P's and N's repetition r; the figure is the mean paired
 * difference N - P in percent of P's mean, with its 95% Student t interval
 * (kw_reduce_pair_delta: the same paired-t model as kw_engine_paired_p),
 * journaled as an N record after its E records. Neighbours go in knob order,
 * one value down then up; a frozen knob, the end of a domain and a
 * constraint are skipped; the shape's pairing stops when the next pair
 * would take it past opts.pair evaluations. It is a pure function of the
 * recommendation, so a resumed run replays it byte for byte; the time limit
 * pauses it between rounds like any round. It never moves the
 * recommendation: it is evidence for the audit and the report, and a
 * noiseless run (whose figures are exact) never pairs. */

/* Move s->pair_next to the next neighbour to pair (see above): 1 with
 * pair_nb and pair_knob set, 0 when none is left or the budget is spent. */
static int kw_pair_next(kw_eng *E, kw_shape *s)
{
    const kw_knobspace *ks = E->ks;
    for (; s->pair_next < 2 * ks->n_knobs; s->pair_next++) {
        int k = s->pair_next / 2, v = s->pair_pick.v[k] + (s->pair_next % 2 ? 1 : -1);
        if (v < 0 || v >= ks->knobs[k].n_values || (k < 64 && (E->o.frozen >> k & 1u)))
            continue;
        kw_cand c = s->pair_pick;
        c.v[k] = (uint8_t)v;
        if (kw_knobs_cand_violates(ks, &c) >= 0)
            continue;
        if (s->pair_spent + 2L * E->reps > E->o.pair)
            return 0;
        s->pair_nb = c;
        s->pair_knob = k;
        return 1;
    }
    return 0;
}

/* A finished shape: pair its recommendation when the run pairs and the
 * recommendation passes its guards (else there is no figure to pair). */
static void kw_pair_start(kw_eng *E, kw_shape *s, const kw_cand *best)
{
    kw_cst b;
    kw_engine_stats_c(E, s, best, &b);
    if (!kw_pair_on(E) || !b.ok)
        return;
    s->pair_pick = *best;
    s->pair_next = 0;
    s->pair_spent = 0;
    if (kw_pair_next(E, s))
        s->phase = KW_SHAPE_PAIR;
}

/* The round's jobs of a pairing shape: P and N alternating (see above). */
static int kw_pair_jobs(kw_eng *E, kw_shape *s)
{
    s->job0 = E->n_jobs;
    s->ctl_k = 0;
    s->n_items = 0;
    uint64_t pid = kw_knobs_cand_id(E->ks, &s->pair_pick), nid = kw_knobs_cand_id(E->ks, &s->pair_nb);
    int rc = kw_next_block(E, s->shape, pid, &s->pair_kp);
    if (rc == 0)
        rc = kw_next_block(E, s->shape, nid, &s->pair_kn);
    for (int r = 0; rc == 0 && r < E->reps; r++)
        for (int t = 0; rc == 0 && t < 2; t++) {
            int nb = (t == 1) == (r % 2 == 0); /* r even: P then N; odd: N then P */
            rc = nb ? kw_queue_block(E, &s->pair_nb, nid, s->shape, s->pair_kn, r)
                    : kw_queue_block(E, &s->pair_pick, pid, s->shape, s->pair_kp, r);
        }
    s->job1 = E->n_jobs;
    E->in_order = 1; /* the crossover order */
    return rc;
}

/* The N record of the round's pair (its E records are journalled). */
static int kw_emit_pair(kw_eng *E, kw_shape *s)
{
    uint64_t pid = kw_knobs_cand_id(E->ks, &s->pair_pick), nid = kw_knobs_cand_id(E->ks, &s->pair_nb);
    double a[KW_REPEATS_MAX], c[KW_REPEATS_MAX];
    const char *g = "";
    for (int r = 0; r < E->reps; r++) {
        const kw_memo_ent *ea = kw_memo_find(&E->memo, s->shape, pid, s->pair_kp * E->reps + r);
        const kw_memo_ent *ec = kw_memo_find(&E->memo, s->shape, nid, s->pair_kn * E->reps + r);
        a[r] = ea->primary;
        c[r] = ec->primary;
        if (!g[0])
            g = ea->guards[0] ? ea->guards : ec->guards;
    }
    kw_pairdelta pd;
    kw_reduce_pair_delta(&pd, a, c, g[0] ? 0 : E->reps);
    const kw_knob *kn = &E->ks->knobs[s->pair_knob];
    kw_jbuf *b = &E->rec;
    kw_journal_buf_printf(b, "N s=%d", s->shape);
    kw_id(b, "id", pid);
    kw_journal_buf_printf(b, " k=%d", s->pair_kp);
    kw_id(b, "nb", nid);
    kw_journal_buf_printf(b, " nk=%d", s->pair_kn);
    kw_journal_buf_str(b, "knob", kn->name);
    kw_journal_buf_str(b, "new", kn->values[s->pair_nb.v[s->pair_knob]]);
    kw_journal_buf_cand(b, "c", E->ks, &s->pair_nb);
    kw_journal_buf_printf(b, " n=%d", pd.n);
    kw_journal_buf_dbl(b, "pm", pd.pick_mean);
    kw_journal_buf_dbl(b, "nm", pd.nb_mean);
    kw_journal_buf_dbl(b, "delta", pd.delta_pct);
    kw_journal_buf_dbl(b, "lo", pd.lo_pct);
    kw_journal_buf_dbl(b, "hi", pd.hi_pct);
    kw_journal_buf_str(b, "g", g);
    return kw_add(E);
}

/* A pairing shape's round: its evaluations, its N record, the next pair. */
static int kw_pair_decide(kw_eng *E, kw_shape *s)
{
    int rc = kw_emit_evals(E, s);
    if (rc == 0)
        rc = kw_emit_pair(E, s);
    s->pair_spent += 2L * E->reps;
    s->pair_next++;
    if (!kw_pair_next(E, s))
        s->phase = KW_SHAPE_DONE;
    return rc;
}

/* ------------------------------------------------------------------ a shape's round */

/* Plan the shape's next batch: the baseline, or what its strategy plans. */
static int kw_plan(kw_eng *E, kw_shape *s)
{
    s->n_items = 0;
    s->reserve = 0;
    s->mf_round = 0;
    s->ctl_want = 0;
    if (s->phase == KW_SHAPE_BASELINE)
        return kw_engine_item_add(E, s, &s->base, 0);
    return E->strat->plan(E, s);
}

/* Journal the round's evaluations, then let the strategy decide; when it
 * says the shape is finished, write the shape-done record. */
static int kw_decide(kw_eng *E, kw_shape *s)
{
    if (s->phase == KW_SHAPE_PAIR)
        return kw_pair_decide(E, s);
    int rc = kw_emit_preds(E, s);
    if (rc == 0)
        rc = kw_emit_evals(E, s);
    if (rc != 0)
        return rc;
    kw_mf_learn(E, s);
    if (s->phase == KW_SHAPE_BASELINE) {
        s->pos = s->base;
        s->phase = KW_SHAPE_RUNNING;
        return E->strat->init(E, s);
    }
    rc = E->strat->decide(E, s);
    if (rc != KW_SHAPE_FINISHED)
        return rc;
    kw_cand best;
    const char *why;
    E->strat->done(E, s, &best, &why);
    s->phase = KW_SHAPE_DONE;
    if ((rc = kw_emit_done(E, s, &best, why)) != 0)
        return rc;
    kw_pair_start(E, s, &best);
    return 0;
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
    o->estimate = 1;
    o->probes = 32;
    o->pair = KW_PAIR_DEFAULT;
    o->rerank = KW_RERANK_DEFAULT; /* where the sample cannot rank a shape (kw_ofat.c, doc/search-log.md) */
    o->alias = KW_ALIAS_LEVEL;
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
    o->no_control = h->noisy && !h->control;
    o->pair = h->pair;
    o->rerank = h->rerank;
    o->alias = h->alias;
    for (int i = 0; i < h->n_tuned; i++)
        shapes_buf[i] = h->tuned[i];
    o->n_shapes = h->n_tuned;
    o->shapes = shapes_buf;
}

/* The evaluations of one candidate: 1 for an exact evaluator, else the
 * repeats asked (0: the default 5, 1: 2). */
static int kw_engine_repeats(int repeats, int noisy)
{
    return noisy ? (repeats >= 2 ? repeats : (repeats == 0 ? KW_ENGINE_DEFAULT_REPEATS : 2)) : 1;
}

int kw_engine_budget_check(long budget, int repeats, int noisy)
{
    int reps = kw_engine_repeats(repeats, noisy);
    if (reps > KW_REPEATS_MAX)
        return kw_error_set(KW_EINPUT, "at most %d repeats", KW_REPEATS_MAX);
    if (budget > 0 && budget < reps)
        return kw_error_set(KW_EINPUT, "a budget of %ld evaluations cannot even evaluate the "
                            "baseline (%d repeats)", budget, reps);
    return 0;
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
    kw_knobs_cand_baseline(&base, ks);
    int c = kw_knobs_cand_violates(ks, &base);
    if (c >= 0)
        return kw_error_set(KW_EINPUT, "the baseline breaks constraint '%s'", ks->constraints[c].name);
    E->primary = -1;
    for (int i = 0; o->metric && i < ev->n_metrics; i++)
        if (strcmp(ev->metric_names[i], o->metric) == 0)
            E->primary = i;
    if (E->primary < 0)
        return kw_error_set(KW_EINPUT, "the evaluator has no metric '%s'", o->metric ? o->metric : "");
    E->ci_lo = E->ci_hi = -1;
    {
        int p99 = strcmp(o->metric, "p99_us") == 0;
        const char *lo = p99 ? "p99_ci_lo_us" : "p_ci_lo_us", *hi = p99 ? "p99_ci_hi_us" : "p_ci_hi_us";
        int il = -1, ih = -1;
        for (int i = 0; (p99 || strcmp(o->metric, "p95_us") == 0) && i < ev->n_metrics; i++) {
            il = strcmp(ev->metric_names[i], lo) == 0 ? i : il;
            ih = strcmp(ev->metric_names[i], hi) == 0 ? i : ih;
        }
        if (il >= 0 && ih >= 0)
            E->ci_lo = il, E->ci_hi = ih;
    }
    if ((int)o->strategy < 0 || (int)o->strategy >= KW_N_STRATEGIES ||
        !kw_strategies[o->strategy] || o->policy < KW_POLICY_SWEEP || o->policy > KW_POLICY_GREEDY)
        return kw_error_set(KW_EINPUT, "unknown strategy or policy");
    E->strat = kw_strategies[o->strategy];
    if (o->budget < 0 || !(o->min_effect_pct >= 0) || !(o->alpha > 0 && o->alpha < 1) ||
        o->repeats < 0 || o->tabu < 0 || o->tabu > KW_TABU_MAX || o->probes < 0 ||
        o->probes > KW_PROBE_MAX || !(o->time_limit_s >= 0) || o->pair < 0 || o->pair > KW_PAIR_BUDGET_MAX)
        return kw_error_set(KW_EINPUT, "bad engine options (budget >= 0, min effect >= 0, "
                            "0 < alpha < 1, tabu 0..%d, probes 0..%d, pair 0..%ld)", KW_TABU_MAX,
                            KW_PROBE_MAX, KW_PAIR_BUDGET_MAX);
    E->reps = kw_engine_repeats(o->repeats, ev->noisy);
    int rc = kw_engine_budget_check(o->budget, o->repeats, ev->noisy);
    if (rc != 0)
        return rc;
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
    else if (h->control != (E->ev->noisy && !o->no_control ? 1 : 0))
        what = "control setting";
    else if (h->pair != (kw_pair_on(E) ? o->pair : 0))
        what = "pairing budget";
    else if (h->rerank != (kw_engine_rerank_p(E) > 0 ? o->rerank : 0))
        what = "re-rank setting";
    else if (h->alias != E->alias_on)
        what = "alias setting";
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

static const char *kw_phase_label(const kw_eng *E, const kw_shape *s)
{
    if (s->phase == KW_SHAPE_BASELINE)
        return "baseline";
    if (s->phase == KW_SHAPE_DONE)
        return "done";
    if (s->phase == KW_SHAPE_PAIR)
        return "pairing";
    return E->strat->phase(s);
}

/* Estimated evaluations shape s will have made when it stops (see
 * kw_progress_shape.evals_est): its strategy's estimate (mean_ratio: the
 * finished shapes' mean ratio of total evaluations to first local optimum,
 * 0 while none has finished), capped by the budget, never below what it has
 * made; -1 when unknown. */
static long kw_evals_est(const kw_eng *E, const kw_shape *s, double mean_ratio)
{
    long budget = E->o.budget;
    if (s->phase >= KW_SHAPE_PAIR)
        return s->evals;
    long est = s->phase == KW_SHAPE_RUNNING ? E->strat->estimate(E, s, mean_ratio) : -1;
    if (budget > 0 && (est < 0 || est > budget))
        est = budget;
    if (est >= 0 && est < s->evals)
        est = s->evals;
    return est;
}

/* The requests the unfinished shapes' re-ranks are still expected to cost
 * (kw_eta_rerank_left), while a shape's re-rank runs (kw_engine_rerank_progress):
 * each unfinished shape counts the expected mean, less the shapes that have made
 * theirs this round (journalled at its decide, after the plans), and the one
 * running counts its rivals left (the one in progress included) at that mean
 * spread over its rivals, at least one comparison of 2 x n0 requests each. Not
 * this shape's own mean per rival so far: the rivals go best first, so the first
 * ones, closest to the leader, take the doublings (default job seed 7, the last
 * shape: 9 rivals of 31 took 4.6 s, the other 22 1.2 s), and that mean read 2.6-6.5x
 * the time left. */
static double kw_rerank_left_now(const kw_eng *E, double left)
{
    int n_unf = 0, n_made = 0;
    for (int i = 0; i < E->n_shapes; i++) {
        if (E->ps[i].done)
            continue;
        n_unf++;
        n_made += E->rr_round[i] == E->round;
    }
    double one = n_unf > 0 ? left / n_unf : 0.0;
    left -= one * n_made; /* the running one's included: counted below */
    long n0 = KW_RERANK_N0 * (kw_engine_rerank_p(E) > 0.98 ? 5 : 1);
    double per = one / E->rr_total;
    if (per < 2.0 * n0)
        per = 2.0 * n0;
    return (left > 0 ? left : 0.0) + per * (E->rr_total - E->rr_done);
}

/* The progress as the callback sees it, into *p (per_shape: E->ps). between: from
 * inside a shape's plan, between the re-rank's comparisons (kw_engine_rerank_progress):
 * the estimate's state is left as the last report fed it (nothing was evaluated
 * since), only the time and the re-rank's requests move. */
static void kw_report_fill(kw_eng *E, int replaying, int between, kw_progress *p_out)
{
    double now = kw_now_s();
    int n_done = 0;
    for (int i = 0; i < E->n_shapes; i++)
        n_done += E->S[i].phase >= KW_SHAPE_PAIR;
    int refresh = !between && (E->last_report == 0 || now - E->last_report >= KW_REPORT_EST_S ||
                               n_done != E->last_done);
    if (refresh) {
        E->last_report = now;
        E->last_done = n_done;
    }
    kw_progress p;
    memset(&p, 0, sizeof p);
    int at = E->n_shapes - 1;
    for (int i = 0; i < E->n_shapes; i++)
        if (E->S[i].phase < KW_SHAPE_PAIR) {
            at = i;
            break;
        }
    double sum_ratio = 0;
    int n_ratio = 0;
    for (int i = 0; i < E->n_shapes; i++) {
        const kw_shape *s = &E->S[i];
        if (s->phase >= KW_SHAPE_PAIR && s->evals_first_opt > 0) {
            sum_ratio += (double)s->evals / (double)s->evals_first_opt;
            n_ratio++;
        }
    }
    double mean_ratio = n_ratio > 0 ? sum_ratio / n_ratio : 0.0;
    long left_est = 0, left_budget = 0;
    int est_known = 1;
    for (int i = 0; i < E->n_shapes; i++) {
        kw_shape *s = &E->S[i];
        kw_progress_shape *q = &E->ps[i];
        q->shape = s->shape;
        q->done = s->phase >= KW_SHAPE_PAIR;
        q->step = s->step;
        q->evals = s->evals;
        q->phase = kw_phase_label(E, s);
        kw_cst a, b;
        kw_engine_stats_c(E, s, &s->base, &a);
        kw_engine_stats_c(E, s, s->phase == KW_SHAPE_BASELINE ? &s->base : E->strat->best(s), &b);
        q->baseline_primary = a.mean;
        q->best_primary = b.mean;
        q->baseline_guards = a.guards;
        q->best_guards = b.guards;
        if (replaying)
            q->evals_est = -1;
        else if (between)
            ; /* the estimate as the last report left it */
        else if (E->o.strategy == KW_STRATEGY_OFAT) {
            /* the bound if the current optimum is the last (no ratio): kw_eta adds the
             * proofs still expected from the shapes' own cycles and scales them by
             * the full evaluations their candidates became (kw_eta.h) */
            kw_eta_feed(&E->eta, i, s->evals, kw_evals_est(E, s, 0.0), q->done);
            kw_eta_rerank(&E->eta, i, s->rr_requests);
        }
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
    int eta_bound = 0; /* before any first optimum: a lower bound (kw_eta_evidence) */
    double left_cost = 0, cost_all = 0, n_all = 0; /* evaluation seconds (thread time) */
    if (!replaying && E->o.strategy == KW_STRATEGY_OFAT) {
        left_est = 0;
        eta_bound = !kw_eta_evidence(&E->eta);
        for (int i = 0; i < E->n_shapes; i++) {
            cost_all += E->eval_s[E->S[i].shape];
            n_all += (double)E->eval_n[E->S[i].shape];
        }
        for (int i = 0; i < E->n_shapes; i++) {
            kw_progress_shape *q = &E->ps[i];
            long more = kw_eta_shape_left(&E->eta, i, E->o.budget);
            if (between && E->rr_round[i] == E->round)
                more = 0; /* at its finish: its search is over, its re-rank counted below */
            q->evals_est = q->done ? q->evals : q->evals + more;
            q->evals_est_bound = eta_bound && !q->done;
            left_est += q->done ? 0 : more;
            int sh = E->S[i].shape;
            if (!q->done && more > 0) /* a shape's evaluations cost what its own did */
                left_cost += (double)more * (E->eval_n[sh] > 0 ? E->eval_s[sh] / (double)E->eval_n[sh]
                                             : n_all > 0 ? cost_all / n_all : 0.0);
        }
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
    p.replay_done = E->w ? kw_journal_writer_records(E->w) : 0;
    p.replay_total = E->replay_total;
    /* the rate of full evaluations (an alias costs none) over the time spent
     * evaluating: the re-rank's paired comparisons (no evaluation) are timed apart
     * and counted in the convergence ETA at their own rate (kw_eta_rerank_left) */
    double el = now - E->t_live - E->rr_s;
    long live_evals = E->sum.evals - E->evals_live0;
    p.evals_per_s = !replaying && el > 0 ? live_evals / el : 0;
    p.eta_budget_s = p.evals_per_s > 0 && E->o.budget > 0 ? left_budget / p.evals_per_s : -1;
    p.eta_converge_s = p.evals_per_s > 0 && est_known ? left_est / p.evals_per_s : -1;
    if (p.eta_converge_s >= 0 && !replaying && E->o.strategy == KW_STRATEGY_OFAT) {
        if (cost_all > 0) /* the shapes' evaluation cost at the wall time it took */
            p.eta_converge_s = left_cost * (el / cost_all);
        /* the re-ranks still to come (an estimate: none in the first sweeps' lower
         * bound), at the seconds per request timed, else a comparison of 2 x n0
         * requests at KW_ETA_RERANK_CMP_EVALS evaluations' time */
        double per_req = E->rr_live_requests > 0 ? E->rr_s / (double)E->rr_live_requests
                         : KW_ETA_RERANK_CMP_EVALS / (2.0 * KW_RERANK_N0 * p.evals_per_s);
        double rr_left = kw_eta_rerank_left(&E->eta);
        if (between)
            rr_left = kw_rerank_left_now(E, rr_left);
        if (!eta_bound)
            p.eta_converge_s += rr_left * per_req;
    }
    p.eta_converge_bound = eta_bound;
    p.eta_s = p.eta_converge_s >= 0 ? p.eta_converge_s : p.eta_budget_s;
    if (p.eta_budget_s >= 0 && p.eta_s > p.eta_budget_s)
        p.eta_s = p.eta_budget_s;
    *p_out = p;
}

static void kw_report(kw_eng *E, int replaying)
{
    if (!E->o.progress)
        return;
    kw_progress p;
    kw_report_fill(E, replaying, 0, &p);
    E->o.progress(E->o.progress_ud, &p);
}

void kw_engine_rerank_progress(kw_eng *E, const kw_shape *s, int done, int total)
{
    int i = (int)(s - E->S);
    /* live only: a replayed comparison is the journal's figure, read at once */
    if (!E->o.rerank_progress || total <= 0 || kw_journal_writer_replaying(E->w) ||
        !E->replay_over)
        return;
    E->rr_round[i] = E->round; /* its re-rank is made this round (kw_rerank_left_now) */
    E->rr_done = done;
    E->rr_total = total;
    kw_progress p;
    kw_report_fill(E, 0, 1, &p);
    const char *ph = E->ps[i].phase;
    E->ps[i].phase = "re-rank";
    p.rerank_shape = i;
    p.rerank_done = done;
    p.rerank_total = total;
    E->o.rerank_progress(E->o.progress_ud, &p);
    E->ps[i].phase = ph;
}

/* 1 once this process has added a record past the header and past the
 * records it replayed: it kept a round. */
static int kw_kept_round(const kw_eng *E)
{
    long n = E->w ? kw_journal_writer_records(E->w) : 0;
    return n > E->replay_total && n > E->rec0;
}

/* The limit and progress: the time limit drops a round it cuts (its records
 * are written only whole), so a limit shorter than one round would pause
 * every resume with nothing kept, for ever: an unattended job resuming the
 * run under the same limit never finishes. The evidence phase already makes
 * its first evaluation of each process whole for that reason (kw_run.c). The
 * search's rule: a time_limit pause records idle=K, the processes in a row
 * (this one included) that the limit stopped before they kept a round; a
 * resume of a run paused with idle >= 1 makes its first round whole (the
 * limit neither pauses before it nor cuts its evaluations: the engine lifts
 * the evaluators' deadline, opts.deadline_s, for that round) and then keeps
 * the limit again. So the limit holds to the second on every process after
 * one that made progress, and a run still ends under any limit; a stop
 * (SIGINT/SIGTERM) still cuts the round. The pause record is dropped when
 * the run resumes, so the journal of a finished run holds none of this. */
static int kw_whole_round(const kw_eng *E)
{
    return E->idle_in > 0 && !kw_kept_round(E);
}

static int kw_pause(kw_eng *E, const char *why)
{
    kw_journal_buf_printf(&E->rec, "Q");
    kw_journal_buf_str(&E->rec, "why", why);
    if (strcmp(why, "time_limit") == 0) {
        E->sum.idle = kw_kept_round(E) ? 0 : E->idle_in + 1;
        kw_journal_buf_printf(&E->rec, " idle=%d", E->sum.idle);
    }
    int rc = kw_add(E);
    return rc ? rc : kw_journal_writer_commit(E->w);
}

static int kw_loop(kw_eng *E)
{
    int rc;
    if ((rc = kw_emit_header(E)) != 0 || (rc = kw_journal_writer_commit(E->w)) != 0)
        return rc;
    E->rec0 = kw_journal_writer_records(E->w);
    for (;;) {
        int active = 0;
        for (int i = 0; i < E->n_shapes; i++)
            active += E->S[i].phase != KW_SHAPE_DONE;
        if (!active) {
            kw_journal_buf_printf(&E->rec, "Z why=complete");
            if ((rc = kw_add(E)) != 0 || (rc = kw_journal_writer_commit(E->w)) != 0)
                return rc;
            E->sum.stop = KW_STOP_DONE;
            return 0;
        }
        if (!kw_journal_writer_replaying(E->w)) {
            if (E->o.stop && *E->o.stop) {
                E->sum.stop = KW_STOP_SIGNAL;
                if ((rc = kw_pause(E, "interrupted")) != 0)
                    return rc;
                return kw_error_set(KW_EINTERRUPTED, "interrupted: the journal is complete up to "
                                    "the last step; resume to continue");
            }
            if (E->o.time_limit_s > 0 && kw_now_s() - E->t0 >= E->o.time_limit_s &&
                !kw_whole_round(E)) {
                E->sum.stop = KW_STOP_TIME;
                return kw_pause(E, "time_limit");
            }
        }
        E->n_jobs = 0;
        E->in_order = 0;
        E->round++;
        int interrupted = 0;
        /* a round made whole (kw_pause) is whole from its plans: the re-rank's paired
         * simulations (kw_ofat.c) run there */
        int whole_plan = kw_whole_round(E) && E->o.deadline_s && *E->o.deadline_s > 0;
        double plan_deadline = whole_plan ? *E->o.deadline_s : 0;
        if (whole_plan)
            *E->o.deadline_s = 0;
        for (int i = 0; i < E->n_shapes && !interrupted; i++) {
            kw_shape *s = &E->S[i];
            if (s->phase == KW_SHAPE_DONE)
                continue;
            rc = s->phase == KW_SHAPE_PAIR ? kw_pair_jobs(E, s) : kw_plan(E, s);
            if (rc == 0 && s->phase != KW_SHAPE_PAIR)
                rc = kw_build_jobs(E, s);
            if (rc == KW_EINTERRUPTED)
                interrupted = 1; /* a plan's own simulation (the re-rank's, kw_ofat.c) stopped */
            else if (rc != 0)
                break;
        }
        if (whole_plan)
            *E->o.deadline_s = plan_deadline;
        if (rc != 0 && rc != KW_EINTERRUPTED)
            return rc;
        if (interrupted)
            E->n_jobs = 0; /* the round is dropped whole, as an interrupted evaluation drops it */
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
        /* A round whose job order is a design (E->in_order: the control's
         * sweeps, "the control"; the pairing's crossover P N, N P, ..., "the
         * pairing") on an evaluator whose readings depend on when they are
         * taken (ev->drifts) is evaluated by the calling thread alone, in job
         * order: neither sorted longest first nor raced for by the pool's
         * threads (a measuring evaluator measures one job at a time anyway,
         * under its worker's lock, but threads would race for the order).
         * Under mpirun (ev->devices > 1) it runs as one such lane per device,
         * a shape's jobs always on the same device (kw_run_lanes). A model,
         * noisy or not, keeps every thread. */
        int in_order = E->in_order && E->ev->drifts;
        if (E->pool->n > 0 && n_live > 1 && !in_order)
            qsort_r(E->live, n_live, sizeof *E->live, kw_lpt_cmp, E);
        int whole = kw_whole_round(E) && E->o.deadline_s && *E->o.deadline_s > 0;
        if (whole) { /* kw_pause: this round is made whole */
            E->held_deadline = *E->o.deadline_s;
            *E->o.deadline_s = 0;
            E->sum.whole = 1;
        }
        int laned = in_order ? kw_run_lanes(E, n_live) : 0;
        if (laned == 0)
            kw_evpool_run_width(E->pool, E->ev, E->jobs, E->live, n_live, in_order ? 1 : 0);
        if (whole)
            *E->o.deadline_s = E->held_deadline;
        if (laned < 0)
            return laned;
        for (size_t i = 0; i < n_live; i++) {
            const kw_job *j = &E->jobs[E->live[i]];
            double *c = &E->shape_cost_s[j->shape];
            *c = *c == 0 ? j->dur_s : 0.8 * *c + 0.2 * j->dur_s;
            E->eval_s[j->shape] += j->dur_s;
            E->eval_n[j->shape]++;
        }
        const kw_job *stopped = NULL;
        for (size_t i = 0; i < n_live; i++) {
            const kw_job *j = &E->jobs[E->live[i]];
            if (j->rc == KW_EINTERRUPTED) {
                interrupted = 1;
                stopped = stopped ? stopped : j;
                continue;
            }
            if (kw_fatal(j->rc))
                return kw_error_set(j->rc, "evaluating %s on shape '%s': %s",
                                    "a candidate", E->ev->shape_names[j->shape], j->err);
        }
        if (interrupted) {
            /* An evaluation stopped inside (the evaluator reads the stop flag
             * and the time limit during long evaluations), or a plan's paired
             * simulation (the re-rank): the round is dropped whole, nothing of
             * it journaled, and the run pauses as it would between rounds;
             * resume evaluates the round again. */
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
            /* stopped by a signal elsewhere (mpirun: another rank's; its
             * evaluation's message says what): a stop, as far as this
             * summary goes, where it said KW_STOP_DONE until 2026-12-07 */
            E->sum.stop = KW_STOP_SIGNAL;
            return kw_error_set(KW_EINTERRUPTED, "an evaluation was stopped without a stop "
                                "request or time limit here (%s)",
                                stopped && stopped->err[0] ? stopped->err : "no reason given");
        }
        for (int i = 0; i < E->n_shapes; i++) {
            kw_shape *s = &E->S[i];
            if (s->phase == KW_SHAPE_DONE)
                continue;
            if ((rc = kw_decide(E, s)) != 0)
                return rc;
        }
        if ((rc = kw_journal_writer_commit(E->w)) != 0)
            return rc;
        E->sum.rounds++;
        int replaying = kw_journal_writer_replaying(E->w);
        if (!replaying && !E->replay_over) {
            /* the replay just ended: rates count from here */
            E->replay_over = 1;
            E->t_live = kw_now_s();
            E->evals_live0 = E->sum.evals;
        }
        kw_report(E, replaying);
    }
}

/* Resume: load the journal, drop a torn last record and a trailing pause,
 * check its header against this run, and put every journalled evaluation in
 * the memo; *old and *n_old are the records' checksums for the replay. */
static int kw_resume_load(kw_eng *E, const uint32_t **old, size_t *n_old)
{
    const char *path = E->info->journal_path;
    int rc;
    if ((rc = kw_journal_load_ex(&E->j, path, 1)) != 0) {
        if (rc == KW_EINPUT)
            rc = kw_error_set(KW_EINPUT, "%s: no journal to resume", path);
        return rc;
    }
    kw_journal *j = E->j;
    if (j->torn) {
        E->sum.torn = 1;
        snprintf(E->sum.torn_msg, sizeof E->sum.torn_msg, "%s", j->torn_msg);
        if ((rc = kw_journal_truncate(path, j->good_bytes, j)) != 0)
            return rc;
    }
    *n_old = (size_t)j->n_records;
    if (strcmp(j->paused, "time_limit") == 0)
        E->idle_in = j->paused_idle;
    if (j->paused[0]) {
        if ((rc = kw_journal_truncate(path, j->last_start, j)) != 0)
            return rc;
        (*n_old)--;
    }
    /* A header cut short (killed while starting) holds no evaluation: the
     * replay's checksum comparison alone decides whether it is ours. */
    if (!j->header_incomplete && (rc = kw_check_header(E, &j->h)) != 0)
        return rc;
    *old = kw_journal_crcs(j);
    for (size_t i = 0; i < j->n_evals; i++) {
        const kw_jeval *je = &j->evals[i];
        kw_memo_ent *e = kw_memo_put(&E->memo, je->shape, je->id, je->rep);
        if (!e)
            return kw_error_set(KW_ENOMEM, "out of memory loading the memo");
        e->state = KW_MEMO_JOURNAL;
        e->je = je;
    }
    return 0;
}

/* A fresh run: the journal must not exist, or be empty (then it is removed). */
static int kw_fresh_check(kw_eng *E)
{
    const char *path = E->info->journal_path;
    struct stat st;
    if (lstat(path, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_size > 0)) {
        return kw_error_set(KW_EINPUT, S_ISREG(st.st_mode)
                                           ? "%s: a journal already exists: resume it or choose "
                                             "another run folder"
                                           : "%s: is not a regular file (a symbolic link is never "
                                             "followed out of the run folder)", path);
    }
    /* an empty journal (a run killed before its first byte) is replaced:
     * the writer creates the journal exclusively (O_EXCL) */
    if (lstat(path, &st) == 0 && unlink(path) != 0) {
        return kw_error_set(KW_EIO, "%s: cannot replace the empty journal: %s", path,
                            strerror(errno));
    }
    return 0;
}

int kw_engine_run_with(kw_engine_summary *out, const kw_strategy_ops *ops, const kw_knobspace *ks,
                       const kw_evaluator *ev, const kw_engine_opts *opts, const kw_run_info *info,
                       int resume)
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
    E->alias_on = kw_alias_on(E);
    E->key.level = E->key2.level = E->alias_on; /* the key's level (kw_skey) */
    if (ops)
        E->strat = ops;
    const char *path = info->journal_path;
    size_t n_old = 0;
    const uint32_t *old = NULL;
    if ((rc = resume ? kw_resume_load(E, &old, &n_old) : kw_fresh_check(E)) != 0)
        goto done;
    /* a resume appends to the file it read and checked, not to one put in its place since */
    if ((rc = kw_journal_writer_open(&E->w, path, resume ? E->j : NULL, old, n_old,
                                     info->no_sync)) != 0)
        goto done;
    E->replay_total = (long)n_old;
    E->S = calloc((size_t)E->n_shapes, sizeof *E->S);
    E->ps = calloc((size_t)E->n_shapes, sizeof *E->ps);
    E->t_live = E->t0;
    E->replay_over = !resume;
    if (!E->S || !E->ps || kw_eta_init(&E->eta, E->n_shapes) != 0) {
        rc = kw_error_set(KW_ENOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < E->n_shapes; i++) {
        kw_shape *s = &E->S[i];
        s->shape = E->shapes[i];
        s->phase = KW_SHAPE_BASELINE;
        kw_mf_bound_init(&s->mfb);
        kw_knobs_cand_baseline(&s->base, ks);
        s->pos = s->base;
    }
    if (kw_engine_rerank_p(E) > 0) { /* the progress's re-rank estimate (kw_eta.h) */
        long nb = 0;
        for (int k = 0; k < ks->n_knobs; k++)
            nb += ks->knobs[k].n_values - 1;
        kw_eta_rerank_prior(&E->eta, nb, KW_RERANK_N0 * (kw_engine_rerank_p(E) > 0.98 ? 5 : 1));
    }
    E->pool = E->o.pool;
    if (!E->pool) {
        E->pool = &E->own_pool;
        E->pool_up = 1;
        if ((rc = kw_evpool_start(E->pool, E->o.threads)) != 0)
            goto done;
    }
    rc = kw_loop(E);
done:
    E->sum.records = E->w ? kw_journal_writer_records(E->w) : 0;
    E->sum.elapsed_s = kw_now_s() - E->t0;
    if (out)
        *out = E->sum;
    if (E->pool_up)
        kw_evpool_stop(&E->own_pool);
    for (int i = 0; E->S && i < E->n_shapes; i++) {
        E->strat->free(&E->S[i]);
        free(E->S[i].items);
    }
    free(E->S);
    free(E->ps);
    kw_eta_free(&E->eta);
    kw_journal_writer_free(E->w);
    kw_journal_free(E->j);
    kw_memo_free(&E->memo);
    kw_memo_alias_free(&E->alias);
    free(E->key.b);
    free(E->key2.b);
    kw_intern_free(&E->strs);
    free(E->jobs);
    free(E->live);
    kw_journal_buf_free(&E->rec);
    free(E);
    return rc;
}

int kw_engine_run(kw_engine_summary *out, const kw_knobspace *ks, const kw_evaluator *ev,
                  const kw_engine_opts *opts, const kw_run_info *info)
{
    return kw_engine_run_with(out, NULL, ks, ev, opts, info, 0);
}

int kw_engine_resume(kw_engine_summary *out, const kw_knobspace *ks, const kw_evaluator *ev,
                     const kw_engine_opts *opts, const kw_run_info *info)
{
    return kw_engine_run_with(out, NULL, ks, ev, opts, info, 1);
}
