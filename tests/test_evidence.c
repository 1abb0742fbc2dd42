/* test_evidence.c - the evidence phase (src/kw_evidence.c) on the process's
 * evaluation pool: what it adds to a summary is the synthetic evaluator's
 * closed form (tests/kw_rsynth.h), the same on the caller alone, on a pool of
 * several threads and on part of one (kw_evpool_run_width), and a failure is
 * the first in job order whichever thread met it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "kw_evidence.h"
#include "kw_evpool.h"
#include "kw_rsynth.h"

TestSuite(evidence);

#define TE_THREADS 4

/* Each cell of the portability matrix is the winner of shape i evaluated on
 * shape j: p95 from sy_p95's closed form. */
static void te_check_portability(const kw_runsum *rs)
{
    int n = rs->n_shapes;
    for (int i = 0; i < n; i++) {
        int w = kw_runsum_winner(rs, i);
        cr_assert_geq(w, 0);
        for (int j = 0; j < n; j++) {
            cr_assert(rs->port_ok[i * n + j], "cell %d,%d: %s", i, j, rs->port[i * n + j].guards);
            double want = sy_p95(&rs->shapes[i].configs[w].cand, j);
            cr_assert_float_eq(rs->port[i * n + j].v[SYM_P95], want, 1e-12, "cell %d,%d", i, j);
        }
    }
}

Test(evidence, portability_is_the_closed_form_on_any_number_of_threads)
{
    kw_evaluator ev = sy_evaluator();
    kw_runsum *rs = sy_run(); /* its matrix by the caller alone (pool NULL) */
    cr_assert_not_null(rs);
    te_check_portability(rs);
    kw_evpool pool;
    cr_assert_eq(kw_evpool_start(&pool, TE_THREADS), 0);
    for (int width = 0; width <= TE_THREADS; width++) {
        kw_runsum *rp = sy_run();
        kw_evidence_pool p = {.pool = &pool, .width = width};
        cr_assert_eq(kw_evidence_portability(rp, &ev, &p), 0, "%s", kw_error_last());
        te_check_portability(rp);
        int n = rs->n_shapes;
        for (int k = 0; k < n * n; k++) {
            cr_assert_eq(memcmp(rp->port[k].v, rs->port[k].v, sizeof rs->port[k].v), 0);
            cr_assert_str_eq(rp->port[k].guards, rs->port[k].guards);
            cr_assert_str_eq(rp->port[k].klass, rs->port[k].klass);
        }
        kw_runsum_free(rp);
    }
    kw_evpool_stop(&pool);
    kw_runsum_free(rs);
}

Test(evidence, recheck_measures_the_baseline_and_the_top_of_each_ranking)
{
    kw_evaluator ev = sy_evaluator();
    kw_runsum *rs = sy_run();
    kw_evpool pool;
    cr_assert_eq(kw_evpool_start(&pool, TE_THREADS), 0);
    kw_evidence_pool p = {.pool = &pool, .width = 0};
    cr_assert_eq(kw_evidence_recheck(rs, &ev, 2, &p), 0, "%s", kw_error_last());
    kw_evpool_stop(&pool);
    for (int i = 0; i < rs->n_shapes; i++) {
        const kw_rs_shape *s = &rs->shapes[i];
        cr_assert_geq(s->baseline, 0);
        for (int r = -1; r < 2 && r < s->n_ranked; r++) {
            int c = r < 0 ? s->baseline : s->ranked[r];
            cr_assert_not_null(s->configs[c].recheck, "shape %d rank %d", i, r);
            cr_assert_float_eq(s->configs[c].recheck->v[SYM_P95], sy_p95(&s->configs[c].cand, i),
                               1e-12);
        }
        for (int r = 2; r < s->n_ranked; r++)
            if (s->ranked[r] != s->baseline)
                cr_assert_null(s->configs[s->ranked[r]].recheck, "shape %d rank %d", i, r);
    }
    kw_runsum_free(rs);
}

/* Fails every evaluation of shape 1 or 2, naming the shape and the tile. */
static int te_fail_eval(void *ctx, const kw_cand *c, int shape, int rep, kw_metrics *out)
{
    if (shape >= SY_S1)
        return kw_error_set(KW_EMODEL, "failing shape %d tile %d", shape, c->v[SY_TILE_M]);
    return sy_eval(ctx, c, shape, rep, out);
}

Test(evidence, the_first_failure_in_job_order_is_reported_on_a_pool)
{
    kw_evaluator ev = sy_evaluator();
    ev.eval = te_fail_eval;
    kw_runsum *rs = sy_run();
    const kw_rs_shape *s1 = &rs->shapes[SY_S1];
    char want[128];
    /* jobs are listed shape by shape, baseline first: shape 1's baseline */
    snprintf(want, sizeof want, "failing shape 1 tile %d", s1->configs[s1->baseline].cand.v[SY_TILE_M]);
    kw_evpool pool;
    cr_assert_eq(kw_evpool_start(&pool, TE_THREADS), 0);
    kw_evidence_pool p = {.pool = &pool, .width = 0};
    for (int round = 0; round < 20; round++) {
        cr_assert_eq(kw_evidence_recheck(rs, &ev, 3, &p), KW_EMODEL);
        cr_assert_str_eq(kw_error_last(), want);
    }
    kw_evpool_stop(&pool);
    kw_runsum_free(rs);
}

Test(evidence, neighbours_are_added_in_knob_order_whatever_the_threads)
{
    kw_evaluator ev = sy_evaluator();
    kw_runsum *one = NULL, *many = NULL;
    kw_knobspace ks;
    sy_space(&ks);
    kw_runsum **sums[2] = {&one, &many};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(kw_runsum_new(sums[k], &ks, SY_NMETRICS, sy_metric_names, "p95_us"), 0);
        for (int s = 0; s < SY_NSHAPES; s++)
            cr_assert_geq(kw_runsum_shape(*sums[k], sy_shape_names[s]), 0);
        kw_cand base;
        kw_knobs_cand_baseline(&base, &ks);
        for (int s = 0; s < SY_NSHAPES; s++) { /* only baselines: every neighbour is missing */
            kw_metrics m;
            sy_eval(NULL, &base, s, 0, &m);
            cr_assert_eq(kw_runsum_add_eval(*sums[k], s, &base, &m), 0);
        }
        cr_assert_eq(kw_runsum_finish(*sums[k]), 0);
    }
    int added_one = -1, added_many = -1;
    cr_assert_eq(kw_evidence_neighbours(one, &ev, NULL, &added_one), 0, "%s", kw_error_last());
    kw_evpool pool;
    cr_assert_eq(kw_evpool_start(&pool, TE_THREADS), 0);
    kw_evidence_pool p = {.pool = &pool, .width = 3};
    cr_assert_eq(kw_evidence_neighbours(many, &ev, &p, &added_many), 0, "%s", kw_error_last());
    kw_evpool_stop(&pool);
    /* 3 knobs with both neighbours, 3 with an upper one only, per shape */
    cr_assert_eq(added_one, 9 * SY_NSHAPES);
    cr_assert_eq(added_many, added_one);
    for (int s = 0; s < SY_NSHAPES; s++) {
        cr_assert_eq(one->shapes[s].n_configs, many->shapes[s].n_configs);
        for (int c = 0; c < one->shapes[s].n_configs; c++) {
            const kw_rs_config *a = &one->shapes[s].configs[c], *b = &many->shapes[s].configs[c];
            cr_assert_eq(a->id, b->id, "shape %d config %d", s, c);
            cr_assert_eq(a->evidence, b->evidence);
            cr_assert_float_eq(b->m.v[SYM_P95], sy_p95(&b->cand, s), 1e-12);
        }
    }
    kw_runsum_free(one);
    kw_runsum_free(many);
}
