/* test_audit.c - which knob caused which change: the planted regression is
 * named, rejected steps are blamed on their knob, knob families, effects by
 * family add up to the path's change, and bisection's contributions sum to
 * the total change and match the additive model's closed form. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "kw_audit.h"
#include "kw_engine.h"
#include "kw_netpath.h"
#include "kw_results.h"
#include "kw_rsynth.h"
#include "lib/kw_tl.h"

static void setup(void) { gsl_set_error_handler_off(); }

TestSuite(audit, .init = setup);
TestSuite(bisect, .init = setup);

Test(audit, families_follow_the_catalogue)
{
    cr_assert_eq(kw_audit_knob_family("qkv.tile_m"), KW_FAMILY_TILING);
    cr_assert_eq(kw_audit_knob_family("mlp.split_k"), KW_FAMILY_TILING);
    cr_assert_eq(kw_audit_knob_family("attn.double_buffer"), KW_FAMILY_TILING);
    cr_assert_eq(kw_audit_knob_family("fuse_attention"), KW_FAMILY_FUSION);
    cr_assert_eq(kw_audit_knob_family("fuse_residual_norm"), KW_FAMILY_FUSION);
    cr_assert_eq(kw_audit_knob_family("accum_precision"), KW_FAMILY_PRECISION);
    cr_assert_eq(kw_audit_knob_family("sparsity"), KW_FAMILY_PRECISION);
    cr_assert_eq(kw_audit_knob_family("max_batch"), KW_FAMILY_BATCHING);
    cr_assert_eq(kw_audit_knob_family("batch_timeout_us"), KW_FAMILY_BATCHING);
    cr_assert_eq(kw_audit_knob_family("placement"), KW_FAMILY_PLACEMENT);
    cr_assert_eq(kw_audit_knob_family("cores_per_request"), KW_FAMILY_PLACEMENT);
    cr_assert_eq(kw_audit_knob_family("launch_mode"), KW_FAMILY_PLACEMENT);
    cr_assert_eq(kw_audit_knob_family("something_new"), KW_FAMILY_OTHER);
    cr_assert_str_eq(kw_audit_family_name(KW_FAMILY_BATCHING), "batching");
}

/* The planted regression: placement=stream_affinity adds 40% of the base. */
Test(audit, planted_regression_is_named)
{
    kw_runsum *rs = sy_run();
    for (int s = 0; s < SY_NSHAPES; s++) {
        int step;
        int k = kw_audit_worst_knob(rs, s, &step);
        cr_assert_eq(k, SY_PLACE, "shape %s blames knob %d", sy_shape_names[s], k);
        cr_assert_eq(rs->shapes[s].steps[step].cand.v[SY_PLACE], 2);
        kw_sbuf b = {0};
        cr_assert_eq(kw_audit_render(&b, rs, s, "knobwise eval --seed 1"), 0);
        cr_assert(strstr(kw_sbuf_cstr(&b), "largest regression: placement=stream_affinity") != NULL,
                  "%s", kw_sbuf_cstr(&b));
        kw_sbuf_free(&b);
    }
    kw_runsum_free(rs);
}

Test(audit, rejected_steps_are_blamed_on_their_knob)
{
    kw_runsum *rs = sy_run();
    kw_knob_blame bl[SY_NKNOBS];
    cr_assert_eq(kw_audit_blame(bl, rs, SY_S0), 0);
    /* fp8 is refused by the drift guard, tile_m=256 with tile_k=64 by the constraint */
    cr_assert_geq(bl[SY_PREC].n_guard, 1);
    cr_assert(strstr(bl[SY_PREC].guards, "drift") != NULL);
    cr_assert_geq(bl[SY_TILE_M].n_constraint + bl[SY_TILE_K].n_constraint, 1);
    /* decode_b1's worst: least_loaded (-3 us) -> stream_affinity (+40 us) tried
     * from the converged 71 us in the second round: +43 us */
    cr_assert_float_eq(bl[SY_PLACE].worst_pct, 43.0 / 71.0 * 100.0, 1e-9);
    /* accepted steps: fuse_attention none -> flash was taken once */
    cr_assert_eq(bl[SY_FUSE].n_accepted, 1);
    kw_runsum_free(rs);
}

Test(audit, render_has_path_reproduction_and_bottlenecks)
{
    kw_runsum *rs = sy_run();
    kw_sbuf b = {0};
    cr_assert_eq(kw_audit_render(&b, rs, SY_S0, "knobwise eval --seed 1"), 0);
    const char *t = kw_sbuf_cstr(&b);
    cr_assert(strstr(t, "reproduce: knobwise eval --seed 1 --shape decode_b1 --set attn.tile_m=128\n"));
    cr_assert(strstr(t, "launch -> memory") != NULL, "%s", t); /* fusing flash changes the class */
    cr_assert(strstr(t, "precision [precision]: ") != NULL);
    cr_assert(strstr(t, "(drift)") != NULL);
    /* a noiseless run's sensitivity carries no warning; a measured one's does */
    cr_assert(strstr(t, "\n  sensitivity: ") != NULL, "%s", t);
    cr_assert(strstr(t, "(a measured run:") == NULL, "%s", t);
    kw_sbuf_free(&b);
    rs->info.noisy = 1;
    kw_sbuf m = {0};
    cr_assert_eq(kw_audit_render(&m, rs, SY_S0, "knobwise eval --seed 1"), 0);
    t = kw_sbuf_cstr(&m);
    const char *sens = strstr(t, "\n  sensitivity: "), *warn = strstr(t, "(a measured run:");
    cr_assert(sens && warn && warn > sens, "the warning follows the sensitivity heading: %s", t);
    cr_assert(strstr(t, "not paired") != NULL, "%s", t);
    kw_sbuf_free(&m);

    /* the pairing's pairs (N records) replace the unpaired cells: one pair
     * first (its cell reads the pair's figure and interval, the note says
     * which cells are paired), then one per evaluated neighbour (every cell
     * paired, no "not paired") */
    kw_sens sn[SY_NKNOBS];
    cr_assert_eq(kw_netpath_sensitivity(sn, rs, SY_S0), 0);
    int n_sides = 0;
    for (int k = 0; k < rs->ks.n_knobs; k++)
        for (int side = 0; side < 2; side++) {
            if (sn[k].side[side].state != KW_SENS_EVALUATED)
                continue;
            kw_rs_pair p = {.knob = k, .value = sn[k].side[side].value, .n = 5,
                            .delta_pct = 2.5 + n_sides, .lo_pct = 1.0 + n_sides,
                            .hi_pct = 4.0 + n_sides};
            cr_assert_eq(kw_runsum_add_pair(rs, SY_S0, &p), 0);
            if (n_sides++ > 0)
                continue;
            kw_sbuf one = {0};
            cr_assert_eq(kw_audit_render(&one, rs, SY_S0, "knobwise eval --seed 1"), 0);
            t = kw_sbuf_cstr(&one);
            char cell[200];
            snprintf(cell, sizeof cell, " %s +2.50%% [+1.00%%, +4.00%%]",
                     rs->ks.knobs[k].values[sn[k].side[side].value]);
            cr_assert(strstr(t, cell) != NULL, "no cell '%s': %s", cell, t);
            cr_assert(strstr(t, "(a measured run: 1 of the ") != NULL, "%s", t);
            cr_assert(strstr(t, " cells with a figure are paired (those with an interval)") != NULL,
                      "%s", t);
            cr_assert(strstr(t, "come from different rounds and are not paired") != NULL, "%s", t);
            kw_sbuf_free(&one);
        }
    cr_assert_gt(n_sides, 1);
    kw_sbuf all = {0};
    cr_assert_eq(kw_audit_render(&all, rs, SY_S0, "knobwise eval --seed 1"), 0);
    t = kw_sbuf_cstr(&all);
    cr_assert(strstr(t, "(a measured run: every cell is paired") != NULL, "%s", t);
    cr_assert(strstr(t, "not paired") == NULL, "%s", t);
    /* every interval above (lo 1.0 + i > 0): no neighbour is called faster */
    cr_assert(strstr(t, "faster than the recommendation") == NULL, "%s", t);
    kw_sbuf_free(&all);
    /* a later pair of the last neighbour, its interval wholly below 0 (the
     * last pair of a neighbour counts): named as faster than what ships; one
     * whose interval reaches 0 is not */
    kw_rs_pair last = rs->shapes[SY_S0].pairs[rs->shapes[SY_S0].n_pairs - 1];
    last.delta_pct = -6.0;
    last.lo_pct = -9.0;
    last.hi_pct = -3.0;
    cr_assert_eq(kw_runsum_add_pair(rs, SY_S0, &last), 0);
    kw_sbuf fast = {0};
    cr_assert_eq(kw_audit_render(&fast, rs, SY_S0, "knobwise eval --seed 1"), 0);
    t = kw_sbuf_cstr(&fast);
    char named[200];
    snprintf(named, sizeof named, "faster than the recommendation, paired (the whole 95%% interval "
             "below 0): %s=%s;", rs->ks.knobs[last.knob].name, rs->ks.knobs[last.knob].values[last.value]);
    cr_assert(strstr(t, named) != NULL, "no '%s': %s", named, t);
    kw_sbuf_free(&fast);
    last.hi_pct = 0.0;
    cr_assert_eq(kw_runsum_add_pair(rs, SY_S0, &last), 0);
    kw_sbuf edge = {0};
    cr_assert_eq(kw_audit_render(&edge, rs, SY_S0, "knobwise eval --seed 1"), 0);
    cr_assert(strstr(kw_sbuf_cstr(&edge), "faster than the recommendation") == NULL);
    kw_sbuf_free(&edge);
    kw_runsum_free(rs);
}

/* The note counts what it says: cells with a figure, of them the paired
 * ones, and a measured run's cells without a figure (not measured) apart;
 * an edge (no value that way) is no cell. Sides made by hand: 2 paired,
 * 1 evaluated unpaired, 1 missing without a pair, 1 edge. */
Test(audit, sensitivity_note_counts_paired_and_unmeasured_cells)
{
    kw_runsum *rs = sy_run();
    rs->info.noisy = 1;
    kw_rs_pair pr = {.knob = 0, .value = 1, .n = 5, .delta_pct = 1.0, .lo_pct = 0.5, .hi_pct = 1.5};
    kw_sens sn[3];
    memset(sn, 0, sizeof sn);
    sn[0].side[0] = (kw_sens_side){.state = KW_SENS_EVALUATED, .pair = &pr};
    sn[0].side[1] = (kw_sens_side){.state = KW_SENS_EVALUATED, .pair = &pr};
    sn[1].side[0] = (kw_sens_side){.state = KW_SENS_MISSING, .config = -1};
    sn[1].side[1] = (kw_sens_side){.state = KW_SENS_EDGE, .config = -1};
    sn[2].side[0] = (kw_sens_side){.state = KW_SENS_EDGE, .config = -1};
    sn[2].side[1] = (kw_sens_side){.state = KW_SENS_EDGE, .config = -1};
    char note[600];
    /* a model run's missing side is "not evaluated", not "not measured": every cell paired */
    rs->info.measured = 0;
    kw_netpath_sens_note(note, sizeof note, rs, sn, 3, "cell");
    cr_assert(strstr(note, "a measured run: every cell is paired: ") == note, "%s", note);
    cr_assert(strstr(note, "no figure") == NULL, "%s", note);
    /* measured: the missing side has no figure and is counted apart */
    rs->info.measured = 1;
    kw_netpath_sens_note(note, sizeof note, rs, sn, 3, "cell");
    cr_assert(strstr(note, "a measured run: every cell with a figure (2) is paired: ") == note, "%s",
              note);
    cr_assert(strstr(note, "; 1 cell has no figure (not measured)") != NULL, "%s", note);
    cr_assert(strstr(note, "every cell is paired") == NULL, "%s", note);
    /* one evaluated side without a pair: 2 of the 3 with a figure */
    sn[2].side[0] = (kw_sens_side){.state = KW_SENS_EVALUATED, .config = 0};
    kw_netpath_sens_note(note, sizeof note, rs, sn, 3, "bar");
    cr_assert(strstr(note, "a measured run: 2 of the 3 bars with a figure are paired") == note, "%s",
              note);
    cr_assert(strstr(note, "the other 1 come from different rounds") != NULL, "%s", note);
    cr_assert(strstr(note, "; 1 bar has no figure (not measured)") != NULL, "%s", note);
    /* none paired: says so, and still counts the one without a figure */
    sn[0].side[0].pair = sn[0].side[1].pair = NULL;
    sn[1].side[1] = (kw_sens_side){.state = KW_SENS_MISSING, .config = -1};
    kw_netpath_sens_note(note, sizeof note, rs, sn, 3, "cell");
    cr_assert(strstr(note, "each cell with a figure and the shipped figure come from different "
                           "rounds and are not paired") != NULL, "%s", note);
    cr_assert(strstr(note, "; 2 cells have no figure (not measured)") != NULL, "%s", note);
    kw_runsum_free(rs);
}

/* The exploration line counts a measured run's measurement-only evaluations
 * (controls, pairing) apart from the search's; a model run's line is as before. */
Test(audit, exploration_line_splits_measurement_only_evaluations)
{
    kw_runsum *rs = sy_run();
    kw_explore_sum e;
    memset(&e, 0, sizeof e);
    e.evaluations = 100;
    e.configs = 40;
    e.best_pct = NAN;
    char line[1024];
    kw_netpath_explore_line(line, sizeof line, rs, &e);
    cr_assert(strstr(line, "100 evaluations of 40 configurations in 0 steps") == line, "%s", line);
    cr_assert(strstr(line, "measurement-only") == NULL, "%s", line);
    e.remeasured = 30;
    kw_netpath_explore_line(line, sizeof line, rs, &e);
    cr_assert(strstr(line, "70 search evaluations of 40 configurations and 30 measurement-only (the "
                           "controls' and the pairing's re-measurements) in 0 steps") == line,
              "%s", line);
    kw_runsum_free(rs);
}

Test(audit, family_effects_add_up_to_the_path)
{
    kw_runsum *rs = sy_run();
    for (int s = 0; s < SY_NSHAPES; s++) {
        const kw_rs_shape *sh = &rs->shapes[s];
        double fe[KW_FAMILY_COUNT];
        int n[KW_FAMILY_COUNT];
        kw_audit_family_effect(fe, n, rs, s);
        double sum = 0;
        for (int f = 0; f < KW_FAMILY_COUNT; f++)
            sum += fe[f];
        double base = sh->configs[sh->baseline].m.v[SYM_P95];
        double fin = sh->configs[sh->final].m.v[SYM_P95];
        cr_assert_float_eq(sum, (fin - base) / base * 100.0, 1e-9);
    }
    /* decode_b1: fusion took 15 of 100 us (additive model) */
    double fe[KW_FAMILY_COUNT];
    kw_audit_family_effect(fe, NULL, rs, SY_S0);
    cr_assert_float_eq(fe[KW_FAMILY_FUSION], -15.0, 1e-9);
    kw_runsum_free(rs);
}

Test(audit, engine_run_names_the_planted_regression)
{
    kw_knobspace ks;
    sy_space(&ks);
    kw_evaluator ev = sy_evaluator();
    kw_engine_opts o;
    kw_engine_opts_init(&o);
    o.threads = 1;
    char *dir = kw_tl_tmpdir("kwtest");
    char jp[4096];
    snprintf(jp, sizeof jp, "%s/journal", dir);
    kw_run_info info = {.journal_path = jp, .version = "test", .no_sync = 1};
    cr_assert_eq(kw_engine_run(NULL, &ks, &ev, &o, &info), 0, "%s", kw_error_last());
    kw_journal *j = NULL;
    cr_assert_eq(kw_journal_load(&j, jp), 0);
    kw_runsum *rs = NULL;
    cr_assert_eq(kw_runsum_build(&rs, j), 0, "%s", kw_error_last());
    for (int s = 0; s < SY_NSHAPES; s++)
        cr_assert_eq(kw_audit_worst_knob(rs, s, NULL), SY_PLACE, "shape %s", sy_shape_names[s]);
    kw_runsum_free(rs);
    kw_journal_free(j);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

/* ---- bisect ---- */

static kw_cand cand_of(int tm, int tk, int fuse, int prec, int batch, int place)
{
    kw_cand c;
    memset(&c, 0, sizeof c);
    c.v[SY_TILE_M] = (uint8_t)tm;
    c.v[SY_TILE_K] = (uint8_t)tk;
    c.v[SY_FUSE] = (uint8_t)fuse;
    c.v[SY_PREC] = (uint8_t)prec;
    c.v[SY_BATCH] = (uint8_t)batch;
    c.v[SY_PLACE] = (uint8_t)place;
    return c;
}

static void check_sums(const kw_bisect *r)
{
    for (int m = 0; m < r->n_metrics; m++) {
        double sum = 0;
        for (int i = 0; i < r->n_knobs; i++)
            sum += r->mean[i][m];
        cr_assert_float_eq(sum, r->b[m] - r->a[m], 1e-9 * (1 + fabs(r->b[m])),
                           "metric %s: %g vs %g", sy_metric_names[m], sum, r->b[m] - r->a[m]);
    }
}

Test(bisect, contributions_sum_to_the_total_and_match_the_model)
{
    sy_plant_interaction = 0;
    kw_knobspace ks;
    sy_space(&ks);
    kw_evaluator ev = sy_evaluator();
    kw_cand a = cand_of(1, 1, 0, 1, 0, 0), b = cand_of(2, 0, 2, 0, 3, 1);
    kw_bisect r;
    cr_assert_eq(kw_audit_bisect(&r, &ks, &ev, SY_S1, &a, &b, 5, 11), 0, "%s", kw_error_last());
    cr_assert_eq(r.n_knobs, 6);
    cr_assert_eq(r.orders, 5);
    check_sums(&r);
    /* additive model: each knob's contribution is its own table difference, in every order */
    for (int i = 0; i < r.n_knobs; i++) {
        int k = r.knobs[i];
        double want = sy_contrib[SY_S1][k][b.v[k]] - sy_contrib[SY_S1][k][a.v[k]];
        cr_assert_float_eq(r.mean[i][SYM_P95], want, 1e-9, "knob %d", k);
        cr_assert_float_eq(r.max[i][SYM_P95] - r.min[i][SYM_P95], 0.0, 1e-9);
    }
    sy_plant_interaction = 1;
}

Test(bisect, interaction_shows_as_spread_across_orders)
{
    sy_plant_interaction = 1;
    kw_knobspace ks;
    sy_space(&ks);
    kw_evaluator ev = sy_evaluator();
    /* flash and tile_m=256 together cost inter[shape] extra; walking either first changes who pays */
    kw_cand a = cand_of(1, 1, 0, 1, 0, 0), b = cand_of(3, 1, 2, 1, 0, 0);
    kw_bisect r;
    cr_assert_eq(kw_audit_bisect(&r, &ks, &ev, SY_S0, &a, &b, 20, 5), 0, "%s", kw_error_last());
    check_sums(&r);
    for (int i = 0; i < r.n_knobs; i++)
        cr_assert_float_eq(r.max[i][SYM_P95] - r.min[i][SYM_P95], sy_inter[SY_S0], 1e-9);
    /* the knob-order walk (tile_m first) gives the interaction to fuse_attention */
    cr_assert_eq(r.first_order[0], SY_TILE_M);
}

Test(bisect, walk_steps_around_a_constraint)
{
    kw_knobspace ks;
    sy_space(&ks);
    kw_evaluator ev = sy_evaluator();
    /* tile_m first would give 256 with tile_k 64: tile_too_big */
    kw_cand a = cand_of(1, 2, 0, 1, 0, 0), b = cand_of(3, 0, 0, 1, 0, 0);
    kw_bisect r;
    cr_assert_eq(kw_audit_bisect(&r, &ks, &ev, SY_S0, &a, &b, 1, 1), 0, "%s", kw_error_last());
    cr_assert_eq(r.first_order[0], SY_TILE_K);
    cr_assert_eq(r.first_order[1], SY_TILE_M);
    check_sums(&r);
}

Test(bisect, stuck_walk_is_refused_by_name)
{
    kw_knobspace ks;
    sy_space(&ks);
    kw_constraint *c = &ks.constraints[ks.n_constraints++];
    snprintf(c->name, sizeof c->name, "small_k_small_m");
    c->n_terms = 2;
    c->terms[0].knob = SY_TILE_M;
    c->terms[0].mask = 1u << 1;
    c->terms[1].knob = SY_TILE_K;
    c->terms[1].mask = 1u << 0;
    kw_evaluator ev = sy_evaluator();
    kw_cand a = cand_of(1, 2, 0, 1, 0, 0), b = cand_of(3, 0, 0, 1, 0, 0);
    kw_bisect r;
    cr_assert_eq(kw_audit_bisect(&r, &ks, &ev, SY_S0, &a, &b, 1, 1), KW_ECONSTRAINT);
    cr_assert(strstr(kw_error_last(), "tile_too_big") != NULL, "%s", kw_error_last());
}

Test(bisect, bad_orders_and_broken_endpoints_are_refused)
{
    kw_knobspace ks;
    sy_space(&ks);
    kw_evaluator ev = sy_evaluator();
    kw_cand a = cand_of(1, 1, 0, 1, 0, 0), bad = cand_of(3, 2, 0, 1, 0, 0);
    kw_bisect r;
    cr_assert_eq(kw_audit_bisect(&r, &ks, &ev, SY_S0, &a, &a, 0, 1), KW_EINPUT);
    cr_assert_eq(kw_audit_bisect(&r, &ks, &ev, SY_S0, &a, &bad, 1, 1), KW_ECONSTRAINT);
    /* identical configurations: nothing to walk, zero change */
    cr_assert_eq(kw_audit_bisect(&r, &ks, &ev, SY_S0, &a, &a, 3, 1), 0);
    cr_assert_eq(r.n_knobs, 0);
}

/* A step that lands on a configuration whose arrivals exceed what it can
 * serve prints "saturated", never a percentage of an unbounded backlog. */
Test(audit, saturated_steps_print_saturated_not_a_percentage)
{
    kw_runsum *rs = sy_run();
    /* mark decode_b1's largest regression (placement=stream_affinity) saturated */
    int step;
    cr_assert_geq(kw_audit_worst_knob(rs, SY_S0, &step), 0);
    kw_rs_shape *s = &rs->shapes[SY_S0];
    kw_rs_config *af = &s->configs[s->steps[step].after];
    af->m.v[SYM_P95] = 1e9; /* what a backlog grown over the window reads */
    snprintf(af->m.guards, sizeof af->m.guards, "saturated");
    kw_sbuf b = {0};
    cr_assert_eq(kw_audit_render(&b, rs, SY_S0, "knobwise eval --seed 1"), 0);
    const char *t = kw_sbuf_cstr(&b);
    cr_assert(strstr(t, "largest regression: placement=stream_affinity made p95_us saturated") != NULL,
              "%s", t);
    cr_assert(strstr(t, "worst: placement=stream_affinity p95_us saturated") != NULL, "%s", t);
    cr_assert_null(strstr(t, "+99999"), "%s", t);
    kw_sbuf_free(&b);
    kw_runsum_free(rs);
}
