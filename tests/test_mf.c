/* test_mf.c - the multi-fidelity screening rules (search/kw_mf.c): the error
 * bound from pairs, the early stop that never skips a candidate whose
 * estimate within the bound could gain, and the evaluation order. */
#include <criterion/criterion.h>
#include <math.h>

#include "kw_mf.h"

TestSuite(mf);

Test(mf, the_bound_is_the_range_of_full_over_estimate)
{
    kw_mf_bound b;
    kw_mf_bound_init(&b);
    cr_expect_eq(kw_mf_bound_add(&b, 100.0, 150.0), 1);
    cr_expect_eq(kw_mf_bound_add(&b, 200.0, 180.0), 1);
    cr_expect_eq(kw_mf_bound_add(&b, INFINITY, 180.0), 0, "an infinite estimate is no pair");
    cr_expect_eq(kw_mf_bound_add(&b, 100.0, NAN), 0);
    cr_expect_eq(kw_mf_bound_add(&b, 0.0, 1.0), 0);
    cr_expect_eq(b.n_pairs, 2);
    cr_expect_float_eq(b.min_ratio, 0.9, 1e-12);
    cr_expect_float_eq(b.max_ratio, 1.5, 1e-12);
}

Test(mf, nothing_is_skipped_before_enough_pairs)
{
    kw_mf_bound b;
    kw_mf_bound_init(&b);
    for (int i = 0; i < KW_MF_MIN_PAIRS - 1; i++)
        kw_mf_bound_add(&b, 100.0, 100.0);
    cr_expect_eq(kw_mf_can_gain(&b, 1e9, 100.0, 1.0), 1);
    cr_expect_eq(kw_mf_can_gain(&b, INFINITY, 100.0, 1.0), 1);
    kw_mf_bound_add(&b, 100.0, 100.0);
    cr_expect_eq(kw_mf_can_gain(&b, 1e9, 100.0, 1.0), 0);
    cr_expect_eq(kw_mf_can_gain(&b, INFINITY, 100.0, 1.0), 0);
}

Test(mf, a_candidate_that_could_gain_within_the_bound_is_never_skipped)
{
    /* ratios 0.8..1.2 seen; incumbent 100, min effect 1%: a candidate whose
     * true figure could be est x 0.8 x (1 - safety) < 99 must be kept; sweep
     * the estimate across the boundary and check both sides */
    kw_mf_bound b;
    kw_mf_bound_init(&b);
    for (int i = 0; i < KW_MF_MIN_PAIRS; i++)
        kw_mf_bound_add(&b, 100.0, i % 2 ? 80.0 : 120.0);
    double edge = 99.0 / (0.8 * (1.0 - KW_MF_SAFETY));
    for (double est = 50.0; est < 300.0; est += 0.5) {
        int could = est * 0.8 * (1.0 - KW_MF_SAFETY) < 99.0;
        cr_expect_eq(kw_mf_can_gain(&b, est, 100.0, 1.0), could, "est %g (edge %g)", est, edge);
    }
    /* every pair the bound has seen would itself have been kept had it been
     * a candidate against an incumbent it beats by the minimum effect */
    cr_expect_eq(kw_mf_can_gain(&b, 100.0 / 0.8 * 0.98, 100.0, 1.0), 1);
}

Test(mf, the_bound_widens_as_pairs_arrive)
{
    kw_mf_bound b;
    kw_mf_bound_init(&b);
    for (int i = 0; i < KW_MF_MIN_PAIRS; i++)
        kw_mf_bound_add(&b, 100.0, 100.0);
    cr_expect_eq(kw_mf_can_gain(&b, 200.0, 100.0, 1.0), 0);
    kw_mf_bound_add(&b, 100.0, 30.0); /* the estimate overshot 3x once */
    cr_expect_eq(kw_mf_can_gain(&b, 200.0, 100.0, 1.0), 1, "a wider bound keeps it");
}

Test(mf, order_is_passing_by_estimate_then_failing_then_unknown)
{
    double est[6] = {5.0, INFINITY, 1.0, 3.0, 1.0, 2.0};
    int fails[6] = {0, 0, 1, 0, 0, 0};
    int order[6];
    kw_mf_order(order, est, fails, 6);
    int want[6] = {4, 5, 3, 0, 2, 1};
    for (int i = 0; i < 6; i++)
        cr_expect_eq(order[i], want[i], "position %d: %d, want %d", i, order[i], want[i]);
}
