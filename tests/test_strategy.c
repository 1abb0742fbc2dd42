/* test_strategy.c - the engine core's strategy interface (kw_strategy.h),
 * driven by a tiny strategy of the test's own: "scan" walks the values of
 * knob 0 in order, one candidate per round, and accepts a value when the
 * core's acceptance rule says it improves on the incumbent. Its result is
 * known in closed form from the synthetic evaluator's weights (kw_synth.h),
 * so each test checks what the CORE does with a strategy it has never seen:
 * the baseline round, the budget, the memo, the journal's records, thread-count
 * determinism, resume by replay, the shape-done record, and the one-knob rule
 * refusing a step a strategy got wrong. */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>

#include "kw_strategy.h"
#include "kw_synth.h"

static void suite_init(void) { gsl_set_error_handler_off(); }
TestSuite(strategy, .init = suite_init);

/* ------------------------------------------------------------------ the test strategy */

typedef struct scan_state {
    int next;        /* next value of knob 0 to try */
    int two_knobs;   /* misbehave: step to a config that changes two knobs */
} scan_state;

static int scan_misbehave;

static int scan_init(kw_eng *E, kw_shape *s)
{
    (void)E;
    scan_state *q = calloc(1, sizeof *q);
    if (!q)
        return kw_error_set(KW_ENOMEM, "out of memory");
    q->two_knobs = scan_misbehave;
    s->st = q;
    return 0;
}

static int scan_plan(kw_eng *E, kw_shape *s)
{
    scan_state *q = s->st;
    const kw_knob *k0 = &E->ks->knobs[0];
    while (q->next < k0->n_values && q->next == s->pos.v[0])
        q->next++;
    if (q->next >= k0->n_values)
        return 0; /* nothing left: decide says finished */
    kw_cand c = s->pos;
    c.v[0] = (uint8_t)q->next++;
    return kw_engine_item_add(E, s, &c, 0);
}

static int scan_decide(kw_eng *E, kw_shape *s)
{
    scan_state *q = s->st;
    if (s->n_items == 0 || s->items[0].dropped)
        return KW_SHAPE_FINISHED;
    const kw_item *it = &s->items[0];
    kw_cst inc, c;
    kw_verdict v;
    kw_engine_stats_c(E, s, &s->pos, &inc);
    kw_engine_stats(E, s->shape, it->id, &c);
    kw_engine_judge(E, &inc, &c, NULL, 1, "", &v);
    kw_cand to = it->cand;
    if (q->two_knobs)
        to.v[1] = (uint8_t)((to.v[1] + 1) % E->ks->knobs[1].n_values);
    return kw_engine_step(E, s, &to, v.ok ? KW_DECIDE_ACCEPT : KW_DECIDE_REJECT, KW_STEP_MAIN,
                          v.p, -1, v.why);
}

static void scan_done(kw_eng *E, kw_shape *s, kw_cand *best, const char **why)
{
    (void)E;
    *best = s->pos;
    *why = s->budget_hit ? "budget" : "converged";
}

static void scan_free(kw_shape *s)
{
    free(s->st);
    s->st = NULL;
}

static const char *scan_phase(const kw_shape *s)
{
    (void)s;
    return "scan";
}

static const kw_cand *scan_best(const kw_shape *s)
{
    return &s->pos;
}

static long scan_estimate(const kw_eng *E, const kw_shape *s, double mean_ratio)
{
    (void)mean_ratio;
    (void)s;
    return E->ks->knobs[0].n_values;
}

static const kw_strategy_ops scan_ops = {
    KW_STRATEGY_OFAT, scan_init, scan_plan, scan_decide, scan_done, scan_free,
    scan_phase, scan_best, scan_estimate,
};

/* ------------------------------------------------------------------ helpers */

/* knob 0 weights {0, -8, 3, -2, -12}: from v0 the scan accepts v1 (-8), rejects
 * v2 and v3 (worse than -8), accepts v4 (-12); the other knobs never move. */
static void scan_space(kw_synth *s, int n_shapes)
{
    int nv[] = {5, 3, 2};
    kw_synth_init(s, 3, nv, n_shapes);
    double w0[] = {0, -8, 3, -2, -12};
    for (int v = 0; v < 5; v++)
        s->w[0][v] = w0[v];
    s->w[1][1] = -30; /* a better knob the scan never looks at */
}

static int scan_run(kw_synth *s, const kw_engine_opts *o, const char *jp, int resume)
{
    kw_run_info in = kw_synth_info(jp);
    return kw_engine_run_with(NULL, &scan_ops, &s->ks, &s->ev, o, &in, resume);
}

static kw_engine_opts scan_opts(void)
{
    kw_engine_opts o;
    kw_engine_opts_init(&o);
    o.seed = 3;
    return o;
}

/* ------------------------------------------------------------------ tests */

Test(strategy, core_drives_a_strategy_from_baseline_to_its_done_record)
{
    kw_synth s;
    scan_space(&s, 2);
    kw_engine_opts o = scan_opts();
    char dir[64], jp[96];
    kw_synth_tmp(dir, sizeof dir, jp, sizeof jp);
    cr_assert_eq(scan_run(&s, &o, jp, 0), 0, "%s", kw_error_last());
    kw_journal *j = NULL;
    cr_assert_eq(kw_journal_load(&j, jp), 0, "%s", kw_error_last());
    cr_assert_eq(j->n_done, 2);
    for (size_t d = 0; d < j->n_done; d++) {
        const kw_jdone *r = &j->done[d];
        /* baseline + the 4 other values of knob 0, each evaluated once */
        cr_expect_eq(r->evals, 5, "shape %d: %ld evaluations", r->shape, r->evals);
        cr_expect_eq(r->steps, 4);
        cr_expect_eq(r->best.v[0], 4, "best k0 = v%d, the closed form says v4", r->best.v[0]);
        cr_expect_eq(r->best.v[1], 0);
        cr_expect_str_eq(r->why, "converged");
        double scale = s.shape_scale[r->shape];
        cr_expect_float_eq(r->baseline_primary, 100.0 * scale, 1e-9);
        cr_expect_float_eq(r->best_primary, (100.0 - 12.0) * scale, 1e-9);
    }
    long accepts = 0, rejects = 0;
    for (size_t i = 0; i < j->n_steps; i++) {
        const kw_jstep *t = &j->steps[i];
        cr_expect_eq(t->knob, 0, "the scan only ever changes knob 0");
        accepts += t->decision == KW_DECIDE_ACCEPT;
        rejects += t->decision == KW_DECIDE_REJECT;
    }
    cr_expect_eq(accepts, 2 * 2, "v1 and v4 on each shape");
    cr_expect_eq(rejects, 2 * 2, "v2 and v3 on each shape");
    kw_journal_free(j);
    kw_synth_rmdir(dir);
}

Test(strategy, budget_is_the_cores_and_cuts_the_strategy)
{
    kw_synth s;
    scan_space(&s, 1);
    kw_engine_opts o = scan_opts();
    o.budget = 3; /* baseline + v1 + v2 */
    char dir[64], jp[96];
    kw_synth_tmp(dir, sizeof dir, jp, sizeof jp);
    cr_assert_eq(scan_run(&s, &o, jp, 0), 0, "%s", kw_error_last());
    kw_journal *j = NULL;
    cr_assert_eq(kw_journal_load(&j, jp), 0, "%s", kw_error_last());
    cr_assert_eq(j->n_done, 1);
    cr_expect_eq(j->done[0].evals, 3);
    cr_expect_str_eq(j->done[0].why, "budget");
    cr_expect_eq(j->done[0].best.v[0], 1, "v4 lies beyond the budget: v1 is the best seen");
    cr_expect_eq(s.calls, 3, "the evaluator was called %ld times", s.calls);
    kw_journal_free(j);
    kw_synth_rmdir(dir);
}

Test(strategy, journal_is_the_same_for_any_thread_count_and_after_resume)
{
    kw_synth s;
    scan_space(&s, 3);
    kw_engine_opts o = scan_opts();
    char dir[64], jp[96];
    long len1 = 0, len4 = 0, lenr = 0;
    kw_synth_tmp(dir, sizeof dir, jp, sizeof jp);
    o.threads = 1;
    cr_assert_eq(scan_run(&s, &o, jp, 0), 0, "%s", kw_error_last());
    char *one = kw_synth_slurp(jp, &len1);
    kw_synth_rmdir(dir);
    kw_synth_tmp(dir, sizeof dir, jp, sizeof jp);
    o.threads = 4;
    cr_assert_eq(scan_run(&s, &o, jp, 0), 0, "%s", kw_error_last());
    char *four = kw_synth_slurp(jp, &len4);
    cr_assert(one && four && len1 > 0);
    cr_expect(len1 == len4 && memcmp(one, four, (size_t)len1) == 0,
              "1 and 4 threads wrote different journals");
    /* cut the journal mid-way (a kill) and resume: the replay regenerates it */
    cr_assert_eq(kw_synth_spit(jp, one, len1 / 2), 0);
    long calls = s.calls;
    cr_assert_eq(scan_run(&s, &o, jp, 1), 0, "resume: %s", kw_error_last());
    char *res = kw_synth_slurp(jp, &lenr);
    cr_expect(lenr == len1 && memcmp(one, res, (size_t)len1) == 0,
              "the resumed journal differs from the uninterrupted one");
    cr_expect_lt(s.calls - calls, 15, "resume re-evaluated what the journal held");
    free(one);
    free(four);
    free(res);
    kw_synth_rmdir(dir);
}

Test(strategy, core_refuses_a_step_that_changes_two_knobs)
{
    kw_synth s;
    scan_space(&s, 1);
    kw_engine_opts o = scan_opts();
    char dir[64], jp[96];
    kw_synth_tmp(dir, sizeof dir, jp, sizeof jp);
    scan_misbehave = 1;
    int rc = scan_run(&s, &o, jp, 0);
    scan_misbehave = 0;
    cr_expect_eq(rc, KW_ESTATE, "rc %d: %s", rc, kw_error_last());
    cr_expect(strstr(kw_error_last(), "changes 2 knobs") != NULL, "%s", kw_error_last());
    kw_journal *j = NULL;
    cr_assert_eq(kw_journal_load(&j, jp), 0, "%s", kw_error_last());
    cr_expect_eq(j->n_steps, 0, "the refused step was journalled");
    cr_expect_eq(j->n_done, 0);
    kw_journal_free(j);
    kw_synth_rmdir(dir);
}
