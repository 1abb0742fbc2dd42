/* test_eval.c - the model evaluator's guard and bottleneck rules
 * (kw_eval_judge, src/model/kw_eval.c), each at its boundary.
 *
 * The rules are comparisons with the space's thresholds, so the closed form
 * of each is its boundary: a figure equal to the threshold passes (the rules
 * are strict), the next double beyond it fails, and the guard names come in
 * the documented order. The classes: stage 1's bound unless contention takes
 * more than KW_EVAL_CONTENTION_CLASS_PCT % or else the p95 queue wait exceeds
 * KW_EVAL_QUEUEING_SHARE of the p95; thermal over those; saturated over all.
 * Last, the same boundaries through a real evaluation of the embedded default,
 * so the evaluator is shown to apply the rules to the figures it reports.
 */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <string.h>

#include "kw_error.h"
#include "kw_eval.h"
#include "kw_load.h"
#include "lib/kw_tl.h"

/* each test's hang guard (KW_TL_HANG_GUARD, not Criterion's .timeout) */
static void kw_eval_guard(void) { KW_TL_HANG_GUARD(120); }
TestSuite(eval, .init = kw_eval_guard);

/* Space-like thresholds, none of them special values. */
static kw_guards guards(void)
{
    kw_guards g = {.drift_min_cos = 0.999, .drift_max_rel_rms = 0.02, .max_throttle_pct = 5.0,
                   .max_fallback_pct = 10.0, .sla_p99_us = 800.0,
                   .max_long_window_drift_pct = 15.0};
    return g;
}

/* Facts under which every guard passes and the class is the bound's. */
static kw_eval_facts healthy(void)
{
    kw_eval_facts f = {.drift_cos = 1.0, .p99_us = 100.0, .simulated = 1, .p95_us = 90.0,
                       .wait_p95_us = 10.0, .contention_pct = 1.0, .bound = KW_BOUND_MEMORY};
    return f;
}

static kw_metrics judge(const kw_guards *g, const kw_eval_facts *f)
{
    kw_metrics m;
    memset(&m, 0x5a, sizeof m); /* stale text must not survive */
    kw_eval_judge(&m, g, f);
    return m;
}

static const char *guards_of(const kw_guards *g, const kw_eval_facts *f)
{
    static kw_metrics m;
    m = judge(g, f);
    return m.guards;
}

static const char *class_of(const kw_guards *g, const kw_eval_facts *f)
{
    static kw_metrics m;
    m = judge(g, f);
    return m.klass;
}

static double above(double x) { return nextafter(x, INFINITY); }
static double below(double x) { return nextafter(x, -INFINITY); }

Test(eval, healthy_facts_pass_every_guard)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    cr_expect_str_eq(guards_of(&g, &f), "");
    cr_expect_str_eq(class_of(&g, &f), "memory");
}

Test(eval, drift_guards_fail_strictly_beyond_their_bounds_when_drift_failed)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    f.drift_failed = 1;
    f.drift_cos = g.drift_min_cos;
    f.drift_rel_rms = g.drift_max_rel_rms;
    cr_expect_str_eq(guards_of(&g, &f), "", "at the bounds both pass");
    f.drift_cos = below(g.drift_min_cos);
    cr_expect_str_eq(guards_of(&g, &f), "drift_cos");
    f.drift_cos = g.drift_min_cos;
    f.drift_rel_rms = above(g.drift_max_rel_rms);
    cr_expect_str_eq(guards_of(&g, &f), "drift_rel_rms");
    f.drift_cos = below(g.drift_min_cos);
    cr_expect_str_eq(guards_of(&g, &f), "drift_cos;drift_rel_rms");
}

Test(eval, drift_figures_alone_fail_nothing_when_the_drift_check_passed)
{
    /* the drift stage's own verdict decides (it judges more than cos and
     * rel_rms, e.g. the fallback precision); the figures only name why. */
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    f.drift_cos = 0.5;
    f.drift_rel_rms = 1.0;
    cr_expect_str_eq(guards_of(&g, &f), "");
}

Test(eval, thermal_guards_at_their_bounds)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    f.thermal_ran = 1;
    f.throttled_pct = g.max_throttle_pct;
    f.long_window_drift_pct = g.max_long_window_drift_pct;
    cr_expect_str_eq(guards_of(&g, &f), "");
    f.throttled_pct = above(g.max_throttle_pct);
    cr_expect_str_eq(guards_of(&g, &f), "throttle");
    f.throttled_pct = g.max_throttle_pct;
    f.long_window_drift_pct = above(g.max_long_window_drift_pct);
    cr_expect_str_eq(guards_of(&g, &f), "long_window");
    f.long_window_drift_pct = 0.0;
    f.thermal_shutdown = 1;
    cr_expect_str_eq(guards_of(&g, &f), "thermal_shutdown");
}

Test(eval, thermal_long_window_guard_is_not_judged_when_the_window_did_not_run)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    f.long_window_drift_pct = 1000.0;
    f.thermal_shutdown = 1;
    cr_expect_str_eq(guards_of(&g, &f), "");
}

Test(eval, fallback_guard_at_its_bound)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    f.fallback_pct = g.max_fallback_pct;
    cr_expect_str_eq(guards_of(&g, &f), "");
    f.fallback_pct = above(g.max_fallback_pct);
    cr_expect_str_eq(guards_of(&g, &f), "fallback");
}

Test(eval, sla_guard_at_its_bound_and_off_at_zero)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    f.p99_us = g.sla_p99_us;
    cr_expect_str_eq(guards_of(&g, &f), "");
    f.p99_us = above(g.sla_p99_us);
    cr_expect_str_eq(guards_of(&g, &f), "sla_p99");
    g.sla_p99_us = 0.0; /* no SLA: any p99 passes */
    f.p99_us = 1e12;
    cr_expect_str_eq(guards_of(&g, &f), "");
}

Test(eval, saturated_guard_only_from_a_simulation)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    f.saturated = 1;
    cr_expect_str_eq(guards_of(&g, &f), "saturated");
    cr_expect_str_eq(class_of(&g, &f), "saturated");
    f.simulated = 0; /* a worker measured serving: no simulation to saturate */
    cr_expect_str_eq(guards_of(&g, &f), "");
    cr_expect_str_eq(class_of(&g, &f), "memory");
}

Test(eval, every_guard_failing_in_the_documented_order)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    f.drift_failed = 1;
    f.drift_cos = 0.0;
    f.drift_rel_rms = 1.0;
    f.thermal_ran = 1;
    f.throttled_pct = 100.0;
    f.long_window_drift_pct = 100.0;
    f.thermal_shutdown = 1;
    f.fallback_pct = 100.0;
    f.p99_us = 1e9;
    f.saturated = 1;
    cr_expect_str_eq(guards_of(&g, &f), "drift_cos;drift_rel_rms;throttle;long_window;"
                                        "thermal_shutdown;fallback;sla_p99;saturated");
}

Test(eval, a_workers_numerics_check_replaces_the_emulated_drift)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    f.drift_failed = 1;
    f.drift_cos = 0.0;
    f.worker_quality = 1;
    f.worker_cos = g.drift_min_cos;
    f.worker_rel_rms = g.drift_max_rel_rms;
    cr_expect_str_eq(guards_of(&g, &f), "", "the worker's figures at the bounds pass");
    f.worker_cos = below(g.drift_min_cos);
    cr_expect_str_eq(guards_of(&g, &f), "drift_cos");
    f.worker_cos = 1.0;
    f.worker_rel_rms = above(g.drift_max_rel_rms);
    cr_expect_str_eq(guards_of(&g, &f), "drift_rel_rms");
    /* the guards after it are still judged */
    f.worker_rel_rms = 0.0;
    f.fallback_pct = above(g.max_fallback_pct);
    cr_expect_str_eq(guards_of(&g, &f), "fallback");
}

Test(eval, class_is_the_stage1_bound_when_serving_is_not_the_limit)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    const char *names[] = {"compute", "memory", "launch", "fallback"};
    for (int b = 0; b < KW_BOUND_COUNT; b++) {
        f.bound = (kw_bound)b;
        cr_expect_str_eq(class_of(&g, &f), names[b]);
    }
}

Test(eval, contention_class_strictly_beyond_its_share)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    f.contention_pct = KW_EVAL_CONTENTION_CLASS_PCT;
    cr_expect_str_eq(class_of(&g, &f), "memory");
    f.contention_pct = above(KW_EVAL_CONTENTION_CLASS_PCT);
    cr_expect_str_eq(class_of(&g, &f), "contention");
    /* contention wins over queueing */
    f.wait_p95_us = f.p95_us;
    cr_expect_str_eq(class_of(&g, &f), "contention");
    /* no simulation, no contention class */
    f.simulated = 0;
    cr_expect_str_eq(class_of(&g, &f), "memory");
}

Test(eval, queueing_class_strictly_beyond_its_share_of_the_p95)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    f.p95_us = 400.0;
    f.wait_p95_us = KW_EVAL_QUEUEING_SHARE * f.p95_us;
    cr_expect_str_eq(class_of(&g, &f), "memory");
    f.wait_p95_us = above(KW_EVAL_QUEUEING_SHARE * f.p95_us);
    cr_expect_str_eq(class_of(&g, &f), "queueing");
}

Test(eval, thermal_class_over_serving_classes_and_saturated_over_all)
{
    kw_guards g = guards();
    kw_eval_facts f = healthy();
    f.contention_pct = 90.0;
    f.thermal_ran = 1;
    f.throttled_pct = g.max_throttle_pct;
    cr_expect_str_eq(class_of(&g, &f), "contention", "at the throttle bound: not thermal");
    f.throttled_pct = above(g.max_throttle_pct);
    cr_expect_str_eq(class_of(&g, &f), "thermal");
    f.saturated = 1;
    cr_expect_str_eq(class_of(&g, &f), "saturated");
}

/* ---- through the evaluator ------------------------------------------------ */

static kw_config *cfg;
static kw_model_eval *ev;

static void eval_setup(void)
{
    gsl_set_error_handler_off();
    cr_assert_eq(kw_load_config_default(&cfg), 0, "%s", kw_error_last());
    kw_model_opts o = {.sim_requests = 400, .drift = 0, .seed = 7};
    cr_assert_eq(kw_eval_new(&ev, cfg, &o), 0, "%s", kw_error_last());
}

static void eval_teardown(void)
{
    kw_eval_free(ev);
    kw_load_config_free(cfg);
}

static int has_guard(const kw_metrics *m, const char *name)
{
    char list[KW_GUARDS_LEN + 2];
    char want[64];
    snprintf(list, sizeof list, ";%s;", m->guards);
    snprintf(want, sizeof want, ";%s;", name);
    return strstr(list, want) != NULL;
}

Test(eval, evaluator_applies_the_sla_and_fallback_bounds_to_its_own_figures,
     .init = eval_setup, .fini = eval_teardown)
{
    kw_guards *g = &cfg->space.guards;
    kw_cand c;
    kw_metrics m;
    kw_knobs_cand_baseline(&c, &cfg->space.knobs);
    g->sla_p99_us = 0.0;
    cr_assert_eq(kw_eval_measured(ev, &c, 0, 0, NULL, &m), 0, "%s", kw_error_last());
    double p99 = m.v[KW_M_P99_US], fb = m.v[KW_M_FALLBACK_PCT];
    cr_assert(isfinite(p99) && p99 > 0.0, "p99 %g", p99);
    cr_expect(!has_guard(&m, "sla_p99"), "no SLA set, yet '%s'", m.guards);

    g->sla_p99_us = p99; /* p99 at the SLA passes */
    cr_assert_eq(kw_eval_measured(ev, &c, 0, 0, NULL, &m), 0);
    cr_expect(!has_guard(&m, "sla_p99"), "p99 %.17g at SLA %.17g: '%s'", p99, g->sla_p99_us,
              m.guards);
    g->sla_p99_us = below(p99); /* just under it fails */
    cr_assert_eq(kw_eval_measured(ev, &c, 0, 0, NULL, &m), 0);
    cr_expect(has_guard(&m, "sla_p99"), "p99 %.17g over SLA %.17g: '%s'", p99, g->sla_p99_us,
              m.guards);
    g->sla_p99_us = 0.0;

    g->max_fallback_pct = fb;
    cr_assert_eq(kw_eval_measured(ev, &c, 0, 0, NULL, &m), 0);
    cr_expect(!has_guard(&m, "fallback"), "fallback %g at its bound: '%s'", fb, m.guards);
    g->max_fallback_pct = below(fb);
    cr_assert_eq(kw_eval_measured(ev, &c, 0, 0, NULL, &m), 0);
    cr_expect(has_guard(&m, "fallback"), "fallback %g over %g: '%s'", fb, g->max_fallback_pct,
              m.guards);
}

/* predict() runs the same drift check as the full evaluation (exact, cached
 * per numerics key), so its drift guards are the evaluation's: a precision
 * the drift guards refuse is refused before its full evaluation. Every value
 * of `precision` on the default space's first shape, drift on; at least one
 * of them must fail (else the test shows nothing). */
Test(eval, predict_judges_the_drift_guards_as_the_full_evaluation_does)
{
    gsl_set_error_handler_off();
    kw_config *dc = NULL;
    kw_model_eval *de = NULL;
    cr_assert_eq(kw_load_config_default(&dc), 0, "%s", kw_error_last());
    kw_model_opts o = {.sim_requests = 400, .drift = 1, .seed = 7};
    cr_assert_eq(kw_eval_new(&de, dc, &o), 0, "%s", kw_error_last());
    const kw_evaluator *it = kw_eval_iface(de);
    cr_assert(it->predict != NULL);
    const kw_knobspace *ks = &dc->space.knobs;
    int k = kw_knobs_find(ks, "precision");
    cr_assert(k >= 0);
    int failed = 0;
    for (int v = 0; v < ks->knobs[k].n_values; v++) {
        kw_cand c;
        kw_metrics full, est;
        kw_knobs_cand_baseline(&c, ks);
        c.v[k] = (uint8_t)v;
        cr_assert_eq(it->eval(it->ctx, &c, 0, 0, &full), 0, "%s", kw_error_last());
        cr_assert_eq(it->predict(it->ctx, &c, 0, &est), 0, "%s", kw_error_last());
        const char *names[] = {"drift_cos", "drift_rel_rms"};
        for (int i = 0; i < 2; i++)
            cr_expect_eq(has_guard(&est, names[i]), has_guard(&full, names[i]),
                         "precision %s: %s in the evaluation '%s', the estimate '%s'",
                         ks->knobs[k].values[v], names[i], full.guards, est.guards);
        failed += has_guard(&full, "drift_cos") || has_guard(&full, "drift_rel_rms");
    }
    cr_expect(failed > 0, "no precision of the default space fails the drift guards");
    kw_eval_free(de);
    kw_load_config_free(dc);
}

/* tune's re-check evaluator borrows the search evaluator's drift cache
 * (borrow_from): its drift figures and guards must be exactly those of an
 * evaluator that runs its own checks, whichever of the two evaluated a
 * candidate first, and freeing the borrower leaves the lender's cache whole.
 * Every value of `precision` on the default space's first shape, drift on,
 * the lender at 400 simulated requests, borrower and control at 200 with the
 * thermal window (the re-check's options differ from the search's). */
Test(eval, a_borrowed_drift_cache_answers_as_an_own_one)
{
    gsl_set_error_handler_off();
    kw_config *dc = NULL;
    kw_model_eval *lender = NULL, *borrower = NULL, *own = NULL;
    cr_assert_eq(kw_load_config_default(&dc), 0, "%s", kw_error_last());
    kw_model_opts o = {.sim_requests = 400, .drift = 1, .seed = 7};
    cr_assert_eq(kw_eval_new(&lender, dc, &o), 0, "%s", kw_error_last());
    kw_model_opts fo = o;
    fo.sim_requests = 200;
    fo.thermal = 1;
    kw_model_opts bo = fo;
    bo.borrow_from = lender;
    cr_assert_eq(kw_eval_new(&borrower, dc, &bo), 0, "%s", kw_error_last());
    cr_assert_eq(kw_eval_new(&own, dc, &fo), 0, "%s", kw_error_last());
    const kw_knobspace *ks = &dc->space.knobs;
    int k = kw_knobs_find(ks, "precision");
    cr_assert(k >= 0);
    for (int v = 0; v < ks->knobs[k].n_values; v++) {
        kw_cand c;
        kw_metrics a, b, want;
        kw_knobs_cand_baseline(&c, ks);
        c.v[k] = (uint8_t)v;
        if (v % 2 == 0) /* the lender first: the borrower answers from the cache */
            cr_assert_eq(kw_eval_measured(lender, &c, 0, 0, NULL, &a), 0, "%s", kw_error_last());
        cr_assert_eq(kw_eval_measured(borrower, &c, 0, 0, NULL, &b), 0, "%s", kw_error_last());
        cr_assert_eq(kw_eval_measured(own, &c, 0, 0, NULL, &want), 0, "%s", kw_error_last());
        cr_expect(memcmp(b.v, want.v, KW_M_COUNT * sizeof *b.v) == 0, "precision %s: figures differ",
                  ks->knobs[k].values[v]);
        cr_expect_str_eq(b.guards, want.guards, "precision %s", ks->knobs[k].values[v]);
    }
    kw_eval_free(borrower);
    kw_cand c;
    kw_metrics a;
    kw_knobs_cand_baseline(&c, ks);
    cr_assert_eq(kw_eval_measured(lender, &c, 0, 0, NULL, &a), 0, "%s", kw_error_last());
    cr_expect(a.v[KW_M_QUALITY_COS] > 0.0 && a.v[KW_M_QUALITY_COS] <= 1.0);
    kw_eval_free(own);
    kw_eval_free(lender);
    kw_load_config_free(dc);
}

/* The model's paired comparison on a continuous-batching shape (kw_evaluator
 * paired): both mappings serve the same requests (arrivals and lengths from
 * the shape's seed), so it gives an interval (main: 1, cannot pair, and the
 * ranking verdict fell back to the continuous shape's separate intervals,
 * which have zero width), and its two figures are exactly what eval() gives
 * each mapping at that sample; and each figure has an interval of its own
 * (main: zero width). Llama-3-8B layer's served shape, max_seqs 32
 * (the baseline) against 128, 40,000 requests (p95's paired minimum). */
Test(eval, a_continuous_batching_shape_is_paired_on_the_same_requests)
{
    gsl_set_error_handler_off();
    char path[4096];
    snprintf(path, sizeof path, "%s/spaces/llama3_8b_layer.xml", kw_tl_src());
    kw_config *c = NULL;
    cr_assert_eq(kw_load_config(&c, path, NULL, NULL), 0, "%s", kw_error_last());
    int sh = kw_load_config_shape(c, "serve_cb_p256_1024_o64_256");
    cr_assert_geq(sh, 0);
    kw_model_opts o = {.sim_requests = 40000, .drift = 0, .seed = 7};
    kw_model_eval *me = NULL;
    cr_assert_eq(kw_eval_new(&me, c, &o), 0, "%s", kw_error_last());
    const kw_evaluator *it = kw_eval_iface(me);
    cr_assert_not_null(it->paired);
    kw_cand a, b;
    kw_knobs_cand_baseline(&a, &c->space.knobs);
    b = a;
    int k = 0;
    while (k < c->space.knobs.n_knobs && strcmp(c->space.knobs.knobs[k].name, "max_seqs") != 0)
        k++;
    cr_assert_lt(k, c->space.knobs.n_knobs);
    cr_assert_str_eq(c->space.knobs.knobs[k].values[2], "128");
    b.v[k] = 2;
    kw_paired v;
    memset(&v, 0, sizeof v);
    cr_assert_eq(it->paired(it->ctx, &a, &b, sh, 0.95, 40000, &v), 0, "%s", kw_error_last());
    kw_metrics ma, mb;
    cr_assert_eq(kw_eval_measured(me, &a, sh, 0, NULL, &ma), 0, "%s", kw_error_last());
    cr_assert_eq(kw_eval_measured(me, &b, sh, 0, NULL, &mb), 0, "%s", kw_error_last());
    cr_log_info("continuous: p95 %.1f vs %.1f us, paired difference %.1f +- %.1f us (%d batches)", v.a, v.b,
                v.a - v.b, v.half, v.batches);
    cr_expect_eq(v.samples, 40000);
    cr_expect_eq(v.a, ma.v[KW_M_P95_US], "rank 1's figure is eval's: %.6f vs %.6f", v.a, ma.v[KW_M_P95_US]);
    cr_expect_eq(v.b, mb.v[KW_M_P95_US], "the rival's figure is eval's: %.6f vs %.6f", v.b, mb.v[KW_M_P95_US]);
    cr_expect(isfinite(v.half) && v.half > 0 && v.batches >= 5, "half %g, %d batches", v.half, v.batches);
    /* each figure's own interval has a width (main: both ends were the figure) */
    const int q[2][3] = {{KW_M_P_CI_LO_US, KW_M_P95_US, KW_M_P_CI_HI_US},
                         {KW_M_P99_CI_LO_US, KW_M_P99_US, KW_M_P99_CI_HI_US}};
    for (int i = 0; i < 2; i++)
        cr_expect(ma.v[q[i][0]] < ma.v[q[i][1]] && ma.v[q[i][1]] < ma.v[q[i][2]], "p%d interval [%g, %g] around %g",
                  i ? 99 : 95, ma.v[q[i][0]], ma.v[q[i][2]], ma.v[q[i][1]]);
    kw_eval_free(me);
    kw_load_config_free(c);
}

/* The model's paired comparison says which side fails, on its own sample, a guard that
 * sample decides (kw_paired a_guard / b_guard; the re-rank leads with no config failing
 * one there, stop 45): the SLA on p99 read at that sample. The default job's first shape,
 * the baseline against max_batch's last value, 40,000 requests, p99 (so a and b are the
 * sample's p99s): with no SLA neither fails; with the SLA between the two p99s only the
 * slower fails; below both, both. Fails on main (no such fields). */
Test(eval, a_paired_comparison_says_which_side_fails_the_sla_on_its_sample)
{
    gsl_set_error_handler_off();
    kw_config *c = NULL;
    cr_assert_eq(kw_load_config_default(&c), 0, "%s", kw_error_last());
    kw_model_opts o = {.sim_requests = 2000, .drift = 0, .seed = 3};
    kw_model_eval *me = NULL;
    cr_assert_eq(kw_eval_new(&me, c, &o), 0, "%s", kw_error_last());
    const kw_evaluator *it = kw_eval_iface(me);
    kw_cand a, b;
    kw_knobs_cand_baseline(&a, &c->space.knobs);
    b = a;
    int k = 0;
    while (k < c->space.knobs.n_knobs && strcmp(c->space.knobs.knobs[k].name, "max_batch") != 0)
        k++;
    cr_assert_lt(k, c->space.knobs.n_knobs);
    b.v[k] = (uint8_t)(c->space.knobs.knobs[k].n_values - 1);
    double sla[3];
    kw_paired v;
    for (int i = 0; i < 3; i++) {
        if (i == 0)
            c->space.guards.sla_p99_us = 0.0;
        else
            c->space.guards.sla_p99_us = sla[i];
        memset(&v, 0, sizeof v);
        cr_assert_eq(it->paired(it->ctx, &a, &b, 0, 0.99, 40000, &v), 0, "%s", kw_error_last());
        if (i == 0) {
            cr_assert(v.a != v.b, "the two configs read the same p99 (%g): pick another", v.a);
            cr_expect(!v.a_guard && !v.b_guard, "no SLA, yet a fails %d, b fails %d", v.a_guard,
                      v.b_guard);
            sla[1] = 0.5 * (v.a + v.b);
            sla[2] = 0.5 * (v.a < v.b ? v.a : v.b);
            continue;
        }
        cr_expect_eq(v.a_guard, v.a > sla[i], "SLA %g: a (p99 %g) fails %d", sla[i], v.a, v.a_guard);
        cr_expect_eq(v.b_guard, v.b > sla[i], "SLA %g: b (p99 %g) fails %d", sla[i], v.b, v.b_guard);
    }
    kw_eval_free(me);
    kw_load_config_free(c);
}

/* The paired comparisons keep their last sides (kw_eval_seq_kept): the re-rank compares one
 * leader B with each rival in turn at the same sample. A against B, C against B, A against
 * B again at 40,000 requests: the figures are those of a fresh evaluator's comparison of
 * each pair (bit for bit: the simulation is a pure function of config, shape and sample),
 * and the requests simulated are 2 x 40,000, then 40,000 (B kept), then none. */
Test(eval, a_paired_side_simulated_before_at_the_same_sample_is_read_not_simulated)
{
    gsl_set_error_handler_off();
    kw_config *c = NULL;
    cr_assert_eq(kw_load_config_default(&c), 0, "%s", kw_error_last());
    kw_model_opts o = {.sim_requests = 2000, .drift = 0, .seed = 5};
    kw_model_eval *me = NULL;
    cr_assert_eq(kw_eval_new(&me, c, &o), 0, "%s", kw_error_last());
    const kw_evaluator *it = kw_eval_iface(me);
    kw_cand a, b, x;
    kw_knobs_cand_baseline(&b, &c->space.knobs);
    a = x = b;
    int k = kw_knobs_find(&c->space.knobs, "max_batch");
    cr_assert_geq(k, 0);
    a.v[k] = (uint8_t)(b.v[k] ? 0 : 1);
    x.v[k] = (uint8_t)(c->space.knobs.knobs[k].n_values - 1);
    const kw_cand *rival[3] = {&a, &x, &a};
    const long want[3] = {80000, 120000, 120000};
    for (int i = 0; i < 3; i++) {
        kw_paired v, fresh;
        memset(&v, 0, sizeof v);
        memset(&fresh, 0, sizeof fresh);
        cr_assert_eq(it->paired(it->ctx, rival[i], &b, 1, 0.95, 40000, &v), 0, "%s", kw_error_last());
        cr_expect_eq(kw_eval_paired_requests(me), want[i], "comparison %d: %ld requests simulated",
                     i, kw_eval_paired_requests(me));
        kw_model_eval *f = NULL;
        cr_assert_eq(kw_eval_new(&f, c, &o), 0, "%s", kw_error_last());
        const kw_evaluator *fi = kw_eval_iface(f);
        cr_assert_eq(fi->paired(fi->ctx, rival[i], &b, 1, 0.95, 40000, &fresh), 0, "%s",
                     kw_error_last());
        cr_expect(memcmp(&v, &fresh, sizeof v) == 0,
                  "comparison %d: %.17g %.17g %.17g vs a fresh evaluator's %.17g %.17g %.17g", i, v.a,
                  v.b, v.half, fresh.a, fresh.b, fresh.half);
        kw_eval_free(f);
    }
    kw_eval_free(me);
    kw_load_config_free(c);
}
