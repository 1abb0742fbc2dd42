/* test_netpath.c - the net path (kw_netpath.h): the one-knob chain from the
 * baseline to the recommendation without the exploration behind it, its
 * fallback when no direct chain was evaluated, the check verify runs on it,
 * the exploration summary and the per-knob sensitivity around the winner.
 * Hand-built summaries whose expected paths follow from how they were built,
 * and the synthetic sweep of kw_rsynth.h (closed-form metrics). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kw_audit.h"
#include "kw_netpath.h"
#include "kw_sbuf.h"
#include "kw_rsynth.h"

/* Three knobs with four values each; p95 = 100 + 10 a - 5 b (knob c inert). */
static void np_space(kw_knobspace *ks)
{
    memset(ks, 0, sizeof *ks);
    sy_add_knob(ks, "a", "0 1 2 3", 0);
    sy_add_knob(ks, "b", "0 1 2 3", 0);
    sy_add_knob(ks, "c", "0 1 2 3", 1);
}

static double np_p95(const kw_cand *c) { return 100.0 + 10.0 * c->v[0] - 5.0 * c->v[1]; }

/* Evaluate c on the hand-built run with the given p95, launches and guards. */
static void np_put(kw_runsum *rs, const kw_cand *c, double p, double launches, const char *guards)
{
    kw_metrics m;
    memset(&m, 0, sizeof m);
    for (int i = 0; i < SY_NMETRICS; i++)
        m.v[i] = 1.0;
    m.v[SYM_P95] = p;
    m.v[SYM_P50] = 0.5 * p;
    m.v[SYM_P99] = 2.0 * p;
    m.v[SYM_LAUNCHES] = launches;
    snprintf(m.guards, sizeof m.guards, "%s", guards);
    cr_assert_eq(kw_runsum_add_eval(rs, 0, c, &m), 0);
}

static void np_eval(kw_runsum *rs, const kw_cand *c)
{
    np_put(rs, c, np_p95(c), 10 - c->v[1], c->v[0] == 3 ? "drift" : "");
}

/* A journaled step from parent to c (evaluated before). */
static void np_add_step(kw_runsum *rs, const kw_cand *parent, const kw_cand *c, kw_decision d,
                        const char *phase)
{
    kw_rs_step st;
    memset(&st, 0, sizeof st);
    st.parent = *parent;
    st.cand = *c;
    st.decision = d;
    st.p_value = NAN;
    snprintf(st.phase, sizeof st.phase, "%s", phase);
    cr_assert_eq(kw_runsum_add_step(rs, 0, &st), 0);
}

/* Step from *inc to inc with knob k = v, evaluated; taken ones move *inc. */
static void np_step(kw_runsum *rs, kw_cand *inc, int k, int v, kw_decision d, const char *phase)
{
    kw_cand c = *inc;
    c.v[k] = (uint8_t)v;
    np_eval(rs, &c);
    np_add_step(rs, inc, &c, d, phase);
    if (kw_journal_decision_taken(d))
        *inc = c;
}

/* The end of a hand-built search: its incumbent is the recommendation, as
 * the engine's shape-done record names it, then the summary is finished. */
static void np_finish(kw_runsum *rs, const kw_cand *inc)
{
    kw_runsum_set_best(rs, 0, kw_knobs_cand_id(&rs->ks, inc));
    cr_assert_eq(kw_runsum_finish(rs), 0);
}

/* The hand-built run of one shape "s" over np_space, minimum effect 1%;
 * *inc its baseline (not evaluated). */
static kw_runsum *np_empty(kw_cand *inc)
{
    kw_knobspace ks;
    np_space(&ks);
    kw_runsum *rs = NULL;
    cr_assert_eq(kw_runsum_new(&rs, &ks, SY_NMETRICS, sy_metric_names, "p95_us"), 0);
    rs->limits.min_effect_pct = 1.0;
    cr_assert_geq(kw_runsum_shape(rs, "s"), 0);
    kw_knobs_cand_baseline(inc, &rs->ks);
    return rs;
}

static kw_runsum *np_new(kw_cand *inc)
{
    kw_runsum *rs = np_empty(inc);
    np_eval(rs, inc);
    return rs;
}

TestSuite(netpath);

Test(netpath, probes_and_reverts_drop_out_of_the_net_path)
{
    kw_cand inc;
    kw_runsum *rs = np_new(&inc);
    np_step(rs, &inc, 1, 1, KW_DECIDE_ACCEPT, "main");   /* b 0->1: -5 */
    np_step(rs, &inc, 0, 1, KW_DECIDE_REJECT, "main");   /* a 0->1: worse */
    np_step(rs, &inc, 2, 2, KW_DECIDE_EXPLORE, "probe"); /* c 1->2: no effect, explored */
    np_step(rs, &inc, 2, 1, KW_DECIDE_REVERT, "probe");  /* back */
    np_step(rs, &inc, 2, 2, KW_DECIDE_EXPLORE, "probe"); /* the same probe again */
    np_step(rs, &inc, 2, 1, KW_DECIDE_REVERT, "probe");
    np_step(rs, &inc, 1, 2, KW_DECIDE_ACCEPT, "main");   /* b 1->2: -5 */
    np_finish(rs, &inc);
    const kw_rs_shape *s = &rs->shapes[0];
    cr_assert_eq(s->n_path, 6, "the accepted path keeps every taken step");

    kw_netpath p;
    cr_assert_eq(kw_netpath_build(&p, rs, 0), 0);
    /* baseline b=0, shipped b=2, and both were evaluated: one net step, b
     * 0->2, though the search took it in two and probed c twice between */
    cr_assert_eq(p.kind, KW_NET_DIRECT);
    cr_assert_eq(p.n, 1);
    cr_assert_eq(p.steps[0].knob, 1);
    cr_assert_eq(p.steps[0].before, s->baseline);
    cr_assert_eq(p.steps[0].after, s->final);
    cr_assert_eq(p.steps[0].step, -1, "no journaled step went from b=0 to b=2 directly");
    cr_assert_eq(kw_netpath_check(rs, 0, &p), 0, "%s", kw_error_last());
    /* its effect on p95 against the closed form: 100 -> 90 */
    cr_assert_float_eq(kw_netpath_effect(rs, 0, &p.steps[0], rs->primary), -10.0, 1e-9);
    char moved[256];
    kw_netpath_moved(moved, sizeof moved, rs, 0, &p.steps[0]);
    /* p50 and p99 move with p95 (-10%), launches 10 -> 8 (-20%) */
    cr_assert(strstr(moved, "p50_us -10.0%") && strstr(moved, "launches -20.0%"), "%s", moved);
    cr_assert_null(strstr(moved, "p95_us"), "the primary is not repeated: %s", moved);

    kw_explore_sum e;
    kw_netpath_explore_sum(&e, rs, 0, &p);
    cr_assert_eq(e.steps, 7);
    cr_assert_eq(e.accepts, 2);
    cr_assert_eq(e.explores, 2);
    cr_assert_eq(e.reverts, 2);
    cr_assert_eq(e.rejects, 1);
    cr_assert_eq(e.probes, 4);
    cr_assert_eq(e.net, 1);
    cr_assert_eq(e.evaluations, 8);
    cr_assert_float_eq(e.best_pct, -10.0, 1e-9);
    char line[512];
    kw_netpath_explore_line(line, sizeof line, rs, &e);
    cr_assert(strstr(line, "8 evaluations") && strstr(line, "shipped in 1 one-knob step"), "%s",
              line);
    kw_netpath_free(&p);
    kw_runsum_free(rs);
}

Test(netpath, without_a_direct_chain_the_shortest_evaluated_chain_ships)
{
    kw_cand inc;
    kw_runsum *rs = np_new(&inc);
    np_step(rs, &inc, 1, 1, KW_DECIDE_ACCEPT, "main");   /* b 0->1 */
    np_step(rs, &inc, 2, 2, KW_DECIDE_EXPLORE, "probe"); /* c 1->2 */
    np_step(rs, &inc, 2, 1, KW_DECIDE_REVERT, "probe");  /* back: a loop */
    np_step(rs, &inc, 2, 2, KW_DECIDE_EXPLORE, "probe"); /* c 1->2 again */
    np_step(rs, &inc, 1, 2, KW_DECIDE_ACCEPT, "probe");  /* b 1->2 */
    np_finish(rs, &inc);
    const kw_rs_shape *s = &rs->shapes[0];
    kw_netpath p;
    cr_assert_eq(kw_netpath_build(&p, rs, 0), 0);
    /* shipped b=2,c=2; neither b=2 alone nor c=2 alone was evaluated, so no
     * two-step chain exists; the shortest through evaluated configurations:
     * b 0->1, c 1->2, b 1->2 (the probe's loop gone) */
    cr_assert_eq(p.kind, KW_NET_SHORTEST);
    cr_assert_eq(p.n, 3);
    cr_assert_eq(p.steps[0].knob, 1);
    cr_assert_eq(p.steps[1].knob, 2);
    cr_assert_eq(p.steps[2].knob, 1);
    cr_assert_eq(p.steps[2].after, s->final);
    for (int i = 0; i < p.n; i++)
        cr_assert_geq(p.steps[i].step, 0, "each link is a journaled step");
    cr_assert_eq(kw_netpath_check(rs, 0, &p), 0, "%s", kw_error_last());
    kw_netpath_free(&p);
    /* audit says a step's effect on such a chain is the order's (b set
     * twice here), and where each change's own is read (main: nothing) */
    kw_sbuf b = {0};
    cr_assert_eq(kw_audit_render(&b, rs, 0, "knobwise eval"), 0, "%s", kw_error_last());
    cr_assert(strstr(kw_sbuf_cstr(&b), "shortest chain through configurations it evaluated.\n  A step's "
                                      "effect here depends on the chain's order; each change's own, "
                                      "reverted alone at the recommendation: knobwise recommend RUN "
                                      "--shape NAME; each knob walked once: knobwise bisect "
                                      "RUN:baseline RUN:best --shape NAME\n"), "%s", kw_sbuf_cstr(&b));
    kw_sbuf_free(&b);
    kw_runsum_free(rs);
}

Test(netpath, a_direct_chain_sets_each_knob_once)
{
    kw_cand inc;
    kw_runsum *rs = np_new(&inc);
    /* the search wanders: b 0->1, b 1->2, then a probe sets c, reverts */
    np_step(rs, &inc, 1, 1, KW_DECIDE_ACCEPT, "main");
    np_step(rs, &inc, 1, 2, KW_DECIDE_ACCEPT, "main");
    np_step(rs, &inc, 2, 0, KW_DECIDE_ACCEPT, "main");   /* c 1->0: no effect, but taken */
    kw_cand base;
    kw_knobs_cand_baseline(&base, &rs->ks);
    kw_cand probe = base; /* a sweep from the baseline had evaluated b=2 directly */
    np_step(rs, &probe, 1, 2, KW_DECIDE_REJECT, "main");
    np_finish(rs, &inc);
    const kw_rs_shape *s = &rs->shapes[0];
    kw_netpath p;
    cr_assert_eq(kw_netpath_build(&p, rs, 0), 0);
    /* baseline (b=0,c=1) -> shipped (b=2,c=0): two knobs differ, and
     * baseline -> b=2 -> b=2,c=0 was evaluated: two steps, one per knob */
    cr_assert_eq(p.kind, KW_NET_DIRECT);
    cr_assert_eq(p.n, kw_knobs_cand_distance(&rs->ks, &s->configs[s->baseline].cand,
                                             &s->configs[s->final].cand));
    cr_assert_eq(p.n, 2);
    cr_assert_eq(p.steps[0].knob, 1);
    cr_assert_eq(p.steps[1].knob, 2);
    cr_assert_eq(kw_netpath_check(rs, 0, &p), 0, "%s", kw_error_last());
    /* the first link was a journaled step; the second was evaluated by the
     * c step from b=2 (the same transition) */
    cr_assert_geq(p.steps[0].step, 0);
    cr_assert_geq(p.steps[1].step, 0);

    /* a tampered chain is refused, naming the broken link */
    p.steps[1].before = p.steps[0].before;
    cr_assert_eq(kw_netpath_check(rs, 0, &p), KW_ECORRUPT);
    cr_assert(strstr(kw_error_last(), "net step 2") != NULL, "%s", kw_error_last());
    kw_netpath_free(&p);
    /* a direct chain: each step's effect is its knob's on that path, no caveat */
    kw_sbuf b = {0};
    cr_assert_eq(kw_audit_render(&b, rs, 0, "knobwise eval"), 0, "%s", kw_error_last());
    cr_assert(strstr(kw_sbuf_cstr(&b), "depends on the chain's order") == NULL, "%s", kw_sbuf_cstr(&b));
    kw_sbuf_free(&b);
    kw_runsum_free(rs);
}

Test(netpath, sensitivity_names_the_knob_that_does_nothing)
{
    kw_cand inc;
    kw_runsum *rs = np_new(&inc);
    np_step(rs, &inc, 1, 1, KW_DECIDE_ACCEPT, "main"); /* ship a=0, b=1, c=1 */
    kw_cand w = inc;
    np_step(rs, &w, 0, 1, KW_DECIDE_REJECT, "main");   /* a up: +10 */
    w = inc;
    np_step(rs, &w, 1, 0, KW_DECIDE_REJECT, "main");   /* b down: +5 */
    w = inc;
    np_step(rs, &w, 2, 0, KW_DECIDE_REJECT, "main");   /* c down: nothing */
    w = inc;
    np_step(rs, &w, 2, 2, KW_DECIDE_REJECT, "main");   /* c up: nothing */
    np_finish(rs, &inc);
    kw_sens sn[3];
    cr_assert_eq(kw_netpath_sensitivity(sn, rs, 0), 0);
    /* a: 0 is the bottom of its domain; up one costs 10/95 */
    cr_assert_eq(sn[0].side[0].state, KW_SENS_EDGE);
    cr_assert_eq(sn[0].side[1].state, KW_SENS_EVALUATED);
    cr_assert_float_eq(sn[0].side[1].pct, 10.0 / 95.0 * 100.0, 1e-9);
    cr_assert(!kw_netpath_sens_inert(&sn[0]));
    /* b: down evaluated (+5/95), up never evaluated */
    cr_assert_float_eq(sn[1].side[0].pct, 5.0 / 95.0 * 100.0, 1e-9);
    cr_assert_eq(sn[1].side[1].state, KW_SENS_MISSING);
    cr_assert_float_eq(kw_netpath_sens_magnitude(&sn[1]), 5.0 / 95.0 * 100.0, 1e-9);
    /* c: both sides identical to the winner: no effect */
    cr_assert(kw_netpath_sens_inert(&sn[2]));
    cr_assert_float_eq(kw_netpath_sens_magnitude(&sn[2]), 0.0, 1e-12);
    kw_runsum_free(rs);
}

Test(netpath, the_synthetic_sweep_ships_one_step_per_changed_knob)
{
    kw_runsum *rs = sy_run();
    cr_assert_not_null(rs);
    for (int sh = 0; sh < rs->n_shapes; sh++) {
        const kw_rs_shape *s = &rs->shapes[sh];
        kw_netpath p;
        cr_assert_eq(kw_netpath_build(&p, rs, sh), 0);
        cr_assert_eq(kw_netpath_check(rs, sh, &p), 0, "%s", kw_error_last());
        int d = kw_knobs_cand_distance(&rs->ks, &s->configs[s->baseline].cand,
                                       &s->configs[s->final].cand);
        cr_assert_eq(p.kind, KW_NET_DIRECT, "shape %s", s->name);
        cr_assert_eq(p.n, d, "shape %s: %d net steps for %d changed knobs", s->name, p.n, d);
        /* the steps' effects compose to the total change (closed-form p95) */
        double prod = 1.0;
        for (int i = 0; i < p.n; i++)
            prod *= 1.0 + kw_netpath_effect(rs, sh, &p.steps[i], rs->primary) / 100.0;
        double want = sy_p95(&s->configs[s->final].cand, sh) / sy_p95(&s->configs[s->baseline].cand, sh);
        cr_assert_float_eq(prod, want, 1e-9, "shape %s", s->name);
        kw_netpath_free(&p);
    }
    kw_runsum_free(rs);
}

Test(netpath, saturated_guard_is_matched_by_name)
{
    cr_assert(kw_guards_saturated("saturated"));
    cr_assert(kw_guards_saturated("drift_cos;saturated"));
    cr_assert(kw_guards_saturated("saturated;fallback"));
    cr_assert(!kw_guards_saturated("unsaturated"));
    cr_assert(!kw_guards_saturated(""));
    cr_assert(!kw_guards_saturated(NULL));
}

/* toward the guards (kw_engine_judge): a list within another, by whole names */
Test(netpath, a_guard_list_is_within_another_by_whole_names)
{
    cr_assert(kw_guards_within("sla_p99", "sla_p99"));
    cr_assert(kw_guards_within("sla_p99", "drift_cos;sla_p99"));
    cr_assert(kw_guards_within("drift_rel_rms;drift_cos", "drift_cos;drift_rel_rms;saturated"));
    cr_assert(!kw_guards_within("sla_p99;drift_cos", "sla_p99"), "a guard traded for another");
    cr_assert(!kw_guards_within("drift", "drift_cos"), "a prefix is not the name");
    cr_assert(!kw_guards_within("drift_cos", "drift"));
    cr_assert(!kw_guards_within("error:timeout", "error:timeout"), "an error is no guard");
    cr_assert(!kw_guards_within("", "sla_p99"));
    cr_assert(!kw_guards_within("sla_p99", ""));
    cr_assert(!kw_guards_within(NULL, "sla_p99"));
}

Test(netpath, a_stepless_search_has_no_net_path_and_nothing_to_prove)
{
    kw_cand inc;
    kw_runsum *rs = np_new(&inc);
    /* random search: evaluations, no steps; the best is the recommendation */
    kw_cand c = inc;
    c.v[1] = 3;
    c.v[2] = 0;
    np_eval(rs, &c);
    cr_assert_eq(kw_runsum_finish(rs), 0);
    const kw_rs_shape *s = &rs->shapes[0];
    cr_assert_eq(s->configs[s->final].id, kw_knobs_cand_id(&rs->ks, &c));
    kw_netpath p;
    cr_assert_eq(kw_netpath_build(&p, rs, 0), 0);
    cr_assert_eq(p.kind, KW_NET_NONE);
    cr_assert_eq(p.n, 0);
    cr_assert_eq(kw_netpath_check(rs, 0, &p), 0, "%s", kw_error_last());
    kw_netpath_free(&p);
    kw_runsum_free(rs);
}

/* The evidence phase fills every neighbour the search did not evaluate,
 * through the run's evaluator; effects follow the synthetic closed form. */
Test(netpath, evidence_fills_the_missing_neighbours)
{
    kw_knobspace ks;
    sy_space(&ks);
    kw_runsum *rs = NULL;
    cr_assert_eq(kw_runsum_new(&rs, &ks, SY_NMETRICS, sy_metric_names, "p95_us"), 0);
    for (int s = 0; s < SY_NSHAPES; s++)
        cr_assert_geq(kw_runsum_shape(rs, sy_shape_names[s]), 0);
    kw_cand base;
    kw_knobs_cand_baseline(&base, &rs->ks);
    kw_metrics m;
    sy_eval(NULL, &base, SY_S1, 0, &m);
    cr_assert_eq(kw_runsum_add_eval(rs, SY_S1, &base, &m), 0);
    cr_assert_eq(kw_runsum_finish(rs), 0); /* only the baseline: it is the recommendation */
    kw_sens sn[SY_NKNOBS];
    cr_assert_eq(kw_netpath_sensitivity(sn, rs, SY_S1), 0);
    int missing = 0;
    for (int k = 0; k < SY_NKNOBS; k++)
        for (int d = 0; d < 2; d++)
            missing += sn[k].side[d].state == KW_SENS_MISSING;
    /* every knob's baseline has both neighbours but fuse_attention, max_batch
     * and placement (baseline index 0) have only an upper one: 3 x 2 + 3 */
    cr_assert_eq(missing, 9);
    kw_evaluator ev = sy_evaluator();
    int added = -1;
    cr_assert_eq(kw_evidence_neighbours(rs, &ev, NULL, &added), 0, "%s", kw_error_last());
    cr_assert_eq(added, 9);
    cr_assert_eq(kw_netpath_sensitivity(sn, rs, SY_S1), 0);
    const kw_rs_shape *s = &rs->shapes[SY_S1];
    for (int k = 0; k < SY_NKNOBS; k++)
        for (int d = 0; d < 2; d++) {
            const kw_sens_side *o = &sn[k].side[d];
            if (o->state == KW_SENS_EDGE)
                continue;
            cr_assert_eq(o->state, KW_SENS_EVALUATED, "knob %d side %d", k, d);
            cr_assert(o->evidence);
            kw_cand c = base;
            c.v[k] = (uint8_t)o->value;
            double want = (sy_p95(&c, SY_S1) - sy_p95(&base, SY_S1)) / sy_p95(&base, SY_S1) * 100.0;
            cr_assert_float_eq(o->pct, want, 1e-9, "knob %d side %d", k, d);
        }
    /* evidence never enters the ranking or the net path */
    cr_assert_eq(s->n_ranked, 1);
    kw_netpath p;
    cr_assert_eq(kw_netpath_build(&p, rs, SY_S1), 0);
    cr_assert_eq(p.n, 0);
    kw_netpath_free(&p);
    /* a second pass has nothing left to do */
    cr_assert_eq(kw_evidence_neighbours(rs, &ev, NULL, &added), 0);
    cr_assert_eq(added, 0);
    kw_runsum_free(rs);
}

/* A search that wandered (b 0->1->2, then c, then b 2->3) ships b 0->3 and c
 * 1->2 when only b=3,c=2 and the wandering configurations were evaluated:
 * the shortest chain jumps b 0->2 (both evaluated, one knob apart). */
Test(netpath, the_shortest_chain_skips_a_detour)
{
    kw_cand inc;
    kw_runsum *rs = np_new(&inc);
    np_step(rs, &inc, 1, 1, KW_DECIDE_ACCEPT, "main");   /* b 0->1 */
    np_step(rs, &inc, 1, 2, KW_DECIDE_ACCEPT, "main");   /* b 1->2 */
    np_step(rs, &inc, 2, 2, KW_DECIDE_EXPLORE, "probe"); /* c 1->2 */
    np_step(rs, &inc, 1, 3, KW_DECIDE_ACCEPT, "probe");  /* b 2->3 */
    np_finish(rs, &inc);
    kw_netpath p;
    cr_assert_eq(kw_netpath_build(&p, rs, 0), 0);
    cr_assert_eq(p.kind, KW_NET_SHORTEST);
    cr_assert_eq(p.n, 3, "%d steps", p.n); /* b 0->2, c 1->2, b 2->3: the accepted path has 4 */
    cr_assert_eq(rs->shapes[0].n_path, 4);
    cr_assert_eq(p.steps[0].knob, 1);
    cr_assert_eq(p.steps[0].step, -1, "b 0->2 was never a journaled step");
    cr_assert_eq(kw_netpath_check(rs, 0, &p), 0, "%s", kw_error_last());
    kw_netpath_free(&p);
    kw_runsum_free(rs);
}

/* ---- changes that do not earn their place (kw_netpath_unearned) ---- */

/* A rejected step from inc to inc with knob k = v (the revert's evaluation). */
static void ue_probe(kw_runsum *rs, const kw_cand *inc, int k, int v, double p95, const char *guards)
{
    kw_cand c = *inc;
    c.v[k] = (uint8_t)v;
    np_put(rs, &c, p95, 1.0, guards);
    np_add_step(rs, inc, &c, KW_DECIDE_REJECT, "main");
}

/* Baseline a=0 b=0 c=1 (p95 100) ships a=1 b=2 c=2 (p95 79.2). Reverting
 * one knob alone: a -> 0 reads 79.6 (+0.505%: under the 1% minimum effect,
 * the change does not earn its place), b -> 0 reads 99 (+25%: it does),
 * c -> 1 reads 79.3 but fails a guard (keeping the guard is its place).
 * Built the way a search leaves it: accepted steps, then the neighbours. */
static kw_runsum *ue_run(kw_cand *F)
{
    kw_cand inc;
    kw_runsum *rs = np_empty(&inc);
    np_put(rs, &inc, 100.0, 1.0, "");
    const struct { int k, v; double p95; } path[] = {{1, 2, 80.0}, {0, 1, 79.6}, {2, 2, 79.2}};
    for (int i = 0; i < 3; i++) {
        kw_cand c = inc;
        c.v[path[i].k] = (uint8_t)path[i].v;
        np_put(rs, &c, path[i].p95, 1.0, "");
        np_add_step(rs, &inc, &c, KW_DECIDE_ACCEPT, "main");
        inc = c;
    }
    ue_probe(rs, &inc, 0, 0, 79.6, "");
    ue_probe(rs, &inc, 1, 0, 99.0, "");
    ue_probe(rs, &inc, 2, 1, 79.3, "drift");
    np_finish(rs, &inc);
    *F = inc;
    return rs;
}

Test(netpath, a_change_whose_revert_costs_less_than_the_minimum_effect_does_not_earn_its_place)
{
    kw_cand F;
    kw_runsum *rs = ue_run(&F);
    const kw_rs_shape *s = &rs->shapes[0];
    cr_assert_eq(kw_runsum_find_config(rs, 0, kw_knobs_cand_id(&rs->ks, &F)), s->final);
    kw_unearned u[3];
    int n = kw_netpath_unearned(u, rs, 0, s->final);
    cr_assert_eq(n, 1);
    cr_assert_eq(u[0].knob, 0);
    cr_assert_float_eq(u[0].pct, (79.6 - 79.2) / 79.2 * 100.0, 1e-9);
    cr_assert_null(u[0].pair);
    char t[1024];
    kw_netpath_unearned_text(t, sizeof t, rs, 0, s->final, u, n);
    cr_assert(strstr(t, "reverting it alone costs less than the run's minimum effect of 1.00% on "
                        "p95_us"), "%s", t);
    cr_assert(strstr(t, "a=1 +0.51%; the baseline's a=0 serves as well"), "%s", t);
    /* a larger minimum effect takes in b's +25% too; a smaller one none */
    rs->limits.min_effect_pct = 30.0;
    cr_assert_eq(kw_netpath_unearned(u, rs, 0, s->final), 2);
    cr_assert_eq(u[1].knob, 1);
    cr_assert_float_eq(u[1].pct, (99.0 - 79.2) / 79.2 * 100.0, 1e-9);
    rs->limits.min_effect_pct = 0.5;
    cr_assert_eq(kw_netpath_unearned(u, rs, 0, s->final), 0);
    /* the baseline has no change to judge */
    rs->limits.min_effect_pct = 1.0;
    cr_assert_eq(kw_netpath_unearned(u, rs, 0, s->baseline), 0);
    kw_runsum_free(rs);
}

Test(netpath, a_measured_run_judges_unearned_changes_by_the_pairing_only)
{
    kw_cand F;
    kw_runsum *rs = ue_run(&F);
    rs->info.noisy = 1;
    const kw_rs_shape *s = &rs->shapes[0];
    kw_unearned u[3];
    /* unpaired figures of different rounds: no evidence of a small effect */
    cr_assert_eq(kw_netpath_unearned(u, rs, 0, s->final), 0);
    /* a's revert paired: +0.4% [-0.2%, +0.9%], wholly under 1%: unearned;
     * c's revert paired +0.3% [-0.6%, +1.2%]: the interval reaches 1% */
    kw_rs_pair pa = {.knob = 0, .value = 0, .n = 8, .delta_pct = 0.4, .lo_pct = -0.2, .hi_pct = 0.9};
    kw_rs_pair pc = {.knob = 2, .value = 1, .n = 8, .delta_pct = 0.3, .lo_pct = -0.6, .hi_pct = 1.2};
    cr_assert_eq(kw_runsum_add_pair(rs, 0, &pa), 0);
    cr_assert_eq(kw_runsum_add_pair(rs, 0, &pc), 0);
    int n = kw_netpath_unearned(u, rs, 0, s->final);
    cr_assert_eq(n, 1);
    cr_assert_eq(u[0].knob, 0);
    cr_assert_float_eq(u[0].pct, 0.4, 1e-12);
    cr_assert_not_null(u[0].pair);
    char t[1024];
    kw_netpath_unearned_text(t, sizeof t, rs, 0, s->final, u, n);
    cr_assert(strstr(t, "(paired with the recommendation, 95% intervals): a=1 +0.40% [-0.20%, +0.90%]"),
              "%s", t);
    kw_runsum_free(rs);
}
