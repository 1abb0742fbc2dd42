/* test_calib.c - `knobwise calibrate`: the fit recovers known
 * parameters from times generated with them; its fit of the shipped H100
 * measurements satisfies what a least-squares fit must (no worse than the
 * start, a local minimum of the squared log errors, finite uncertainties);
 * under-determined fits are refused; -o is never replaced without --force. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kw_calib.h"
#include "kw_error.h"
#include "kw_load.h"
#include "kw_sbuf.h"
#include "lib/kw_tl.h"

TestSuite(calib);

static kw_accel acc;
static kw_fid_set *set;

static void load_shipped(void)
{
    char ap[1024], mp[1024];
    snprintf(ap, sizeof ap, "%s/spaces/accel/h100.xml", kw_tl_src());
    snprintf(mp, sizeof mp, "%s/spaces/measured/h100_published.csv", kw_tl_src());
    cr_assert_eq(kw_load_accel(&acc, ap), 0, "%s", kw_error_last());
    set = malloc(sizeof *set);
    cr_assert_eq(kw_fidelity_load(set, mp), 0, "%s", kw_error_last());
}

static double chi2(const kw_accel *a)
{
    double s = 0.0;
    for (int i = 0; i < set->n; i++) {
        double us;
        kw_bound b;
        cr_assert_eq(kw_fidelity_predict(&us, &b, NULL, a, &set->c[i]), 0);
        double r = log(us / set->c[i].measured_us);
        s += r * r;
    }
    return s;
}

#define WANT3 ((1u << KW_CAL_MATRIX) | (1u << KW_CAL_SYNC_MATRIX) | (1u << KW_CAL_SOFTMAX_OPS))

/* The shipped cases' times replaced by the model's at matrix 0.71, sync MMA
 * 0.58 and 7.5 softmax instructions (both recovery tests below). */
/* Every case's measured time replaced by the model's on truth. */
static void times_from(const kw_accel *truth)
{
    for (int i = 0; i < set->n; i++) {
        double us;
        kw_bound b;
        cr_assert_eq(kw_fidelity_predict(&us, &b, NULL, truth, &set->c[i]), 0);
        set->c[i].measured_us = us;
    }
}

static void generate_known3(void)
{
    kw_accel truth = acc;
    kw_calib_set(&truth, KW_CAL_MATRIX, 0.71, set);
    kw_calib_set(&truth, KW_CAL_SYNC_MATRIX, 0.58, set);
    kw_calib_set(&truth, KW_CAL_SOFTMAX_OPS, 7.5, set);
    times_from(&truth);
}

/* A fit of generate_known3's times came back to its parameters, every case exact. */
static void assert_known3(const kw_calib *cal)
{
    cr_assert(fabs(cal->p[KW_CAL_MATRIX].after - 0.71) < 1e-5, "%g", cal->p[KW_CAL_MATRIX].after);
    cr_assert(fabs(cal->p[KW_CAL_SYNC_MATRIX].after - 0.58) < 1e-5, "%g",
              cal->p[KW_CAL_SYNC_MATRIX].after);
    cr_assert(fabs(cal->p[KW_CAL_SOFTMAX_OPS].after - 7.5) < 1e-3, "%g",
              cal->p[KW_CAL_SOFTMAX_OPS].after);
    cr_assert(cal->chi2_after < 1e-12, "%g", cal->chi2_after);
    for (int i = 0; i < set->n; i++)
        cr_assert(fabs(cal->after_ratio[i] - 1.0) < 1e-5);
}

/* n copies of the shipped CSV's row g, measured us[0..n-1]; the caller frees it. */
static kw_fid_set *copies(int g, int n, const double *us)
{
    cr_assert_geq(g, 0);
    kw_fid_set *out = malloc(sizeof *out);
    cr_assert_not_null(out);
    out->n = n;
    for (int i = 0; i < n; i++) {
        out->c[i] = set->c[g];
        out->c[i].measured_us = us[i];
    }
    return out;
}

/* n copies of the shipped CSV's graph_node row (its time is the node cost). */
static kw_fid_set *graph_rows(int n, const double *us)
{
    int g = -1;
    for (int i = 0; i < set->n && g < 0; i++)
        if (set->c[i].kind == KW_FID_GRAPH_NODE)
            g = i;
    return copies(g, n, us);
}

Test(calib, recovers_known_parameters_from_times_generated_with_them)
{
    load_shipped();
    generate_known3();
    kw_calib cal;
    kw_accel start = acc; /* the shipped values */
    cr_assert_eq(kw_calib_fit(&cal, &start, set, NULL, WANT3, 1), 0, "%s", kw_error_last());
    assert_known3(&cal);
    free(set);
}

/* A prior of infinite width is no prior: the MAP fit recovers the
 * parameters the times were generated with, as the plain fit does; so does a
 * prior a million times wider than a case's weight (its rows are in the fit
 * and pull by 1e-14 of a case). */
Test(calib, a_prior_of_infinite_width_recovers_known_parameters)
{
    load_shipped();
    generate_known3();
    static const double widths[2] = {INFINITY, 1e6};
    for (int k = 0; k < 2; k++) {
        kw_calib_prior pr = {.row_width = KW_CAL_ROW_WIDTH};
        for (int id = 0; id < KW_CAL_COUNT; id++)
            pr.width[id] = widths[k];
        kw_calib cal;
        kw_accel start = acc;
        cr_assert_eq(kw_calib_fit_prior(&cal, &start, set, NULL, WANT3, 1, &pr), 0, "%s",
                     kw_error_last());
        assert_known3(&cal);
        cr_assert_eq(cal.p[KW_CAL_MATRIX].prior_width, k == 0 ? 0.0 : 1e6);
    }
    free(set);
}

/* One case, one parameter, a prior: the graph_node row's time is the node
 * cost itself (no kernel fixed time), so its log residual is linear in
 * log(graph_node_us), and the MAP solution is the weighted mean of the logs,
 * by hand: log g = (log m / s^2 + log g0 / w^2) / (1 / s^2 + 1 / w^2), with
 * m the measured time, s the case's width, g0 and w the prior's centre and
 * width. It moved (log g - log g0) / w prior widths. Without the prior one
 * case for one parameter is refused, as before. */
Test(calib, one_case_and_a_prior_give_the_weighted_mean)
{
    load_shipped();
    static const double m[1] = {1.5};
    kw_fid_set *one = graph_rows(1, m);
    kw_accel a = acc;
    a.kernel_fixed_us = 0.0;
    a.graph_node_us = 1.0;
    double us;
    kw_bound b;
    cr_assert_eq(kw_fidelity_predict(&us, &b, NULL, &a, &one->c[0]), 0);
    cr_assert_float_eq(us, 1.0, 1e-12, "the case is not the node cost alone: %g", us);
    const double s = 0.1, w = 0.2;
    kw_calib_prior pr = {.row_width = s};
    pr.width[KW_CAL_GRAPH_NODE] = w;
    kw_calib cal;
    cr_assert_eq(kw_calib_fit_prior(&cal, &a, one, NULL, 1u << KW_CAL_GRAPH_NODE, 1, &pr), 0, "%s",
                 kw_error_last());
    double lg = (log(1.5) / (s * s) + log(1.0) / (w * w)) / (1.0 / (s * s) + 1.0 / (w * w));
    cr_assert(fabs(log(cal.p[KW_CAL_GRAPH_NODE].after) - lg) < 1e-6, "%g, want %g",
              cal.p[KW_CAL_GRAPH_NODE].after, exp(lg));
    cr_assert(fabs(a.graph_node_us - exp(lg)) < 1e-6);
    cr_assert(fabs(cal.p[KW_CAL_GRAPH_NODE].pull - lg / w) < 1e-5, "%g, want %g",
              cal.p[KW_CAL_GRAPH_NODE].pull, lg / w);
    cr_assert(cal.p[KW_CAL_GRAPH_NODE].sigma > 0.0 && isfinite(cal.p[KW_CAL_GRAPH_NODE].sigma));
    a = acc;
    a.kernel_fixed_us = 0.0;
    cr_assert_eq(kw_calib_fit(&cal, &a, one, NULL, 1u << KW_CAL_GRAPH_NODE, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "more cases than parameters"), "%s", kw_error_last());
    free(one);
    free(set);
}

/* A parameter no case depends on stays at its prior's centre (the file's
 * figure) when the fit is not strict, and is refused by name when it is: a
 * prior makes the fit non-singular, not the parameter determined. */
Test(calib, a_parameter_without_cases_stays_at_its_prior)
{
    load_shipped();
    int bf16[KW_FID_MAX] = {0};
    for (int i = 0; i < set->n; i++)
        bf16[i] = set->c[i].precision == KW_PREC_BF16;
    kw_calib_prior pr = {.row_width = KW_CAL_ROW_WIDTH};
    for (int id = 0; id < KW_CAL_COUNT; id++)
        pr.width[id] = kw_calib_class_width('D');
    unsigned want = (1u << KW_CAL_MATRIX) | (1u << KW_CAL_MATRIX_FP8);
    kw_calib cal;
    kw_accel a = acc;
    cr_assert_eq(kw_calib_fit_prior(&cal, &a, set, bf16, want, 0, &pr), 0, "%s", kw_error_last());
    cr_assert(cal.p[KW_CAL_MATRIX].fitted);
    cr_assert(!cal.p[KW_CAL_MATRIX_FP8].fitted);
    cr_assert_eq(a.matrix_fraction[KW_PREC_FP8_E4M3], acc.matrix_fraction[KW_PREC_FP8_E4M3]);
    cr_assert_eq(cal.p[KW_CAL_MATRIX_FP8].after, cal.p[KW_CAL_MATRIX_FP8].before);
    a = acc;
    cr_assert_eq(kw_calib_fit_prior(&cal, &a, set, bf16, want, 1, &pr), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "under-determined") &&
                  strstr(kw_error_last(), "matrix_fraction_fp8"),
              "%s", kw_error_last());
    cr_assert_eq(kw_calib_class_width('S'), 0.10);
    cr_assert_eq(kw_calib_class_width('F'), 0.0);
    cr_assert_eq(kw_calib_class_width('x'), -1.0);
    free(set);
}

#define WANT_GATHER ((1u << KW_CAL_GATHER_DRAM) | (1u << KW_CAL_GATHER_FIXED))

/* The paged-decode gather figures: only the decode rows (page 8) depend on
 * them, so they are recovered from those alone, and a fit without those rows
 * is refused as under-determined. */
Test(calib, recovers_the_gather_figures_from_the_paged_decode_rows)
{
    load_shipped();
    kw_accel truth = acc;
    kw_calib_set(&truth, KW_CAL_GATHER_DRAM, 0.55, set);
    kw_calib_set(&truth, KW_CAL_GATHER_FIXED, 9.0, set);
    int use[KW_FID_MAX], ndec = 0;
    for (int i = 0; i < set->n; i++) {
        double us;
        kw_bound b;
        cr_assert_eq(kw_fidelity_predict(&us, &b, NULL, &truth, &set->c[i]), 0);
        set->c[i].measured_us = us;
        use[i] = set->c[i].kind != KW_FID_DECODE;
        ndec += !use[i];
    }
    cr_assert_geq(ndec, 3);
    kw_calib cal;
    kw_accel start = acc; /* unset: the ordinary DRAM fraction, no fixed time */
    start.gather_dram_fraction = 0.0;
    start.gather_fixed_us = 0.0;
    kw_accel unset = start;
    cr_assert_eq(kw_calib_fit(&cal, &start, set, NULL, WANT_GATHER, 1), 0, "%s", kw_error_last());
    cr_assert(fabs(cal.p[KW_CAL_GATHER_DRAM].after - 0.55) < 1e-5, "%g",
              cal.p[KW_CAL_GATHER_DRAM].after);
    cr_assert(fabs(cal.p[KW_CAL_GATHER_FIXED].after - 9.0) < 1e-3, "%g",
              cal.p[KW_CAL_GATHER_FIXED].after);
    cr_assert(cal.chi2_after < 1e-10, "%g", cal.chi2_after);
    cr_assert(fabs(cal.p[KW_CAL_GATHER_DRAM].before - acc.dram_fraction) < 1e-12, "%g",
              cal.p[KW_CAL_GATHER_DRAM].before);
    start = unset;
    cr_assert_eq(kw_calib_fit(&cal, &start, set, use, WANT_GATHER, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "under-determined"), "%s", kw_error_last());
    free(set);
}

/* The file's figures file[j] of parameters ids[j] (j < nid) are the fit of
 * its FIT rows of one kind (kw_calib_fit of those parameters, each started at
 * from[j], all else as shipped): each agrees with the fit to its 1-sigma, and
 * the fit leaves those rows within 1%. load_shipped() first. */
static void assert_file_is_the_fit(kw_fid_kind kind, int rows, const int *ids, const double *from,
                                   const double *file, int nid)
{
    int use[KW_FID_MAX], n = 0;
    unsigned want = 0;
    for (int i = 0; i < set->n; i++) {
        use[i] = set->c[i].fit && set->c[i].kind == kind;
        n += use[i];
    }
    cr_assert_eq(n, rows);
    kw_accel start = acc;
    for (int j = 0; j < nid; j++) {
        want |= 1u << ids[j];
        kw_calib_set(&start, ids[j], from[j], set);
    }
    kw_calib cal;
    cr_assert_eq(kw_calib_fit(&cal, &start, set, use, want, 1), 0, "%s", kw_error_last());
    for (int j = 0; j < nid; j++) {
        double fit = cal.p[ids[j]].after, sd = cal.p[ids[j]].sigma;
        cr_assert(file[j] > 0.0, "%d: %g", ids[j], file[j]);
        cr_assert(sd > 0.0 && isfinite(sd), "%d: %g", ids[j], sd);
        cr_assert(fabs(file[j] - fit) <= sd, "%d: file %g, fit %g +- %g", ids[j], file[j], fit,
                  sd);
    }
    for (int i = 0; i < set->n; i++)
        if (use[i])
            cr_assert(fabs(cal.after_ratio[i] - 1.0) < 0.01, "%s: %g", set->c[i].name,
                      cal.after_ratio[i]);
    free(set);
}

/* h100.xml's gather DRAM fraction is the one `calibrate` fits to its FIT
 * rows (the FIT decode rows: the two long-context FA3 paged decode rows, whose
 * sources say "FIT: h100.xml gather_dram_fraction"), from the unset start
 * (two rows, one parameter: the rate, not a fudge per row). */
Test(calib, shipped_gather_fraction_is_the_fit_of_its_fit_rows)
{
    load_shipped();
    const int ids[] = {KW_CAL_GATHER_DRAM};
    const double from[] = {0.0}, file[] = {acc.gather_dram_fraction};
    assert_file_is_the_fit(KW_FID_DECODE, 2, ids, from, file, 1);
}

/* h100.xml's synchronous-MMA fraction and the two softmax hidden shares are
 * the ones `calibrate` fits to their FIT rows (the four FA2/FA3 prefill rows
 * at 8k, whose sources say "FIT: h100.xml sync_matrix_fraction and
 * softmax_hidden_serial/overlap"), from a start away from the file's figures. */
Test(calib, shipped_attention_rates_are_the_fit_of_their_fit_rows)
{
    load_shipped();
    const int ids[] = {KW_CAL_SYNC_MATRIX, KW_CAL_HIDDEN_SERIAL, KW_CAL_HIDDEN_OVERLAP};
    const double from[] = {0.3, 0.3, 0.5};
    const double file[] = {acc.sync_matrix_fraction, acc.softmax_hidden_serial,
                           acc.softmax_hidden_overlap};
    assert_file_is_the_fit(KW_FID_ATTENTION, 4, ids, from, file, 3);
}

#define WANT_NEW                                                                               \
    ((1u << KW_CAL_HIDDEN_SERIAL) | (1u << KW_CAL_HIDDEN_OVERLAP) | (1u << KW_CAL_KERNEL_FIXED))

Test(calib, recovers_hidden_shares_and_the_kernel_fixed_time)
{
    load_shipped();
    kw_accel truth = acc;
    kw_calib_set(&truth, KW_CAL_HIDDEN_SERIAL, 0.4, set);
    kw_calib_set(&truth, KW_CAL_HIDDEN_OVERLAP, 0.9, set);
    kw_calib_set(&truth, KW_CAL_KERNEL_FIXED, 1.5, set);
    times_from(&truth);
    kw_calib cal;
    kw_accel start = acc; /* the shipped shares and no fixed time */
    cr_assert_eq(kw_calib_fit(&cal, &start, set, NULL, WANT_NEW, 1), 0, "%s", kw_error_last());
    cr_assert(fabs(cal.p[KW_CAL_HIDDEN_SERIAL].after - 0.4) < 1e-4, "%g",
              cal.p[KW_CAL_HIDDEN_SERIAL].after);
    cr_assert(fabs(cal.p[KW_CAL_HIDDEN_OVERLAP].after - 0.9) < 1e-4, "%g",
              cal.p[KW_CAL_HIDDEN_OVERLAP].after);
    cr_assert(fabs(cal.p[KW_CAL_KERNEL_FIXED].after - 1.5) < 1e-3, "%g",
              cal.p[KW_CAL_KERNEL_FIXED].after);
    cr_assert(cal.chi2_after < 1e-10, "%g", cal.chi2_after);
    free(set);
}

Test(calib, fit_of_the_shipped_measurements_is_a_least_squares_minimum)
{
    load_shipped();
    kw_accel a = acc;
    kw_calib cal;
    cr_assert_eq(kw_calib_fit(&cal, &a, set, NULL, (1u << KW_CAL_COUNT) - 1u, 0), 0, "%s",
                 kw_error_last());
    cr_assert(cal.chi2_after <= cal.chi2_before, "%g > %g", cal.chi2_after, cal.chi2_before);
    cr_assert(fabs(chi2(&a) - cal.chi2_after) <= 1e-9 * cal.chi2_after);
    int fitted = 0;
    for (int id = 0; id < KW_CAL_COUNT; id++) {
        if (!cal.p[id].fitted)
            continue;
        fitted++;
        cr_assert(isfinite(cal.p[id].sigma) && cal.p[id].sigma > 0.0, "%s sigma %g", cal.p[id].name,
                  cal.p[id].sigma);
        /* no 1% move of one parameter lowers the squared log errors */
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            kw_accel b = a;
            double v = cal.p[id].after * (1.0 + 0.01 * sgn);
            if (v > 1.0 && id != KW_CAL_SOFTMAX_OPS && id != KW_CAL_SHARED_BW &&
                id != KW_CAL_KERNEL_FIXED && id != KW_CAL_GRAPH_NODE)
                continue;
            kw_calib_set(&b, id, v, set);
            cr_assert(chi2(&b) >= cal.chi2_after * (1.0 - 1e-6), "%s %+d%%: %g < %g", cal.p[id].name,
                      sgn, chi2(&b), cal.chi2_after);
        }
    }
    cr_assert_geq(fitted, 3);
    free(set);
}

/* A share whose least-squares value is its end of range: times generated
 * with the serial schedule hiding all of its softmax (share 1) and a sync
 * fraction of 0.40. From the file's 0.553 the fit drives the share toward 1,
 * where no case depends on it any more; it stays there (at_bound, no sigma)
 * and the sync fraction comes back with every case exact. Kept at the file's
 * 0.553 instead, the FA2 rows would be charged part of their softmax again
 * and the sync fraction fitted to make up for it. Strict, the same share is
 * refused by name. */
Test(calib, a_share_the_fit_drives_to_one_stays_at_one)
{
    load_shipped();
    kw_accel truth = acc;
    kw_calib_set(&truth, KW_CAL_HIDDEN_SERIAL, 1.0, set);
    kw_calib_set(&truth, KW_CAL_SYNC_MATRIX, 0.40, set);
    times_from(&truth);
    unsigned want = (1u << KW_CAL_SYNC_MATRIX) | (1u << KW_CAL_HIDDEN_SERIAL);
    kw_calib cal;
    kw_accel a = acc;
    cr_assert_eq(kw_calib_fit(&cal, &a, set, NULL, want, 0), 0, "%s", kw_error_last());
    cr_assert(cal.p[KW_CAL_HIDDEN_SERIAL].at_bound && cal.p[KW_CAL_HIDDEN_SERIAL].fitted);
    cr_assert_eq(cal.p[KW_CAL_HIDDEN_SERIAL].after, 1.0);
    cr_assert_eq(a.softmax_hidden_serial, 1.0);
    cr_assert(fabs(cal.p[KW_CAL_HIDDEN_SERIAL].before - 0.553) < 1e-12, "%g",
              cal.p[KW_CAL_HIDDEN_SERIAL].before);
    cr_assert(fabs(cal.p[KW_CAL_SYNC_MATRIX].after - 0.40) < 1e-5, "%g",
              cal.p[KW_CAL_SYNC_MATRIX].after);
    cr_assert(cal.chi2_after < 1e-10, "%g", cal.chi2_after);
    /* before: the file's figures, not the bound */
    cr_assert(fabs(cal.chi2_before - chi2(&acc)) <= 1e-9 * cal.chi2_before);
    a = acc;
    cr_assert_eq(kw_calib_fit(&cal, &a, set, NULL, want, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "softmax_hidden_serial"), "%s", kw_error_last());
    free(set);
}

/* The graph-node cost is seen only by the graph_node row, where it adds to
 * the kernel fixed time; the fixed time is also seen by every other kernel,
 * so the two are told apart and both come back from times made with them. */
Test(calib, recovers_the_graph_node_cost_beside_the_kernel_fixed_time)
{
    load_shipped();
    kw_accel truth = acc;
    kw_calib_set(&truth, KW_CAL_GRAPH_NODE, 0.8, set);
    kw_calib_set(&truth, KW_CAL_KERNEL_FIXED, 0.4, set);
    int graph_rows = 0;
    for (int i = 0; i < set->n; i++) {
        double us;
        kw_bound b;
        cr_assert_eq(kw_fidelity_predict(&us, &b, NULL, &truth, &set->c[i]), 0);
        set->c[i].measured_us = us;
        graph_rows += set->c[i].kind == KW_FID_GRAPH_NODE;
    }
    cr_assert_geq(graph_rows, 1);
    kw_calib cal;
    kw_accel start = acc;
    unsigned want = (1u << KW_CAL_GRAPH_NODE) | (1u << KW_CAL_KERNEL_FIXED);
    cr_assert_eq(kw_calib_fit(&cal, &start, set, NULL, want, 1), 0, "%s", kw_error_last());
    cr_assert(fabs(cal.p[KW_CAL_GRAPH_NODE].after - 0.8) < 1e-4, "%g",
              cal.p[KW_CAL_GRAPH_NODE].after);
    cr_assert(fabs(cal.p[KW_CAL_KERNEL_FIXED].after - 0.4) < 1e-4, "%g",
              cal.p[KW_CAL_KERNEL_FIXED].after);
    cr_assert(fabs(start.graph_node_us - 0.8) < 1e-4);
    /* without a graph_node row or a call replayed in a graph (graph_nodes)
     * nothing depends on it: refused, by name */
    int no_graph[KW_FID_MAX] = {0};
    for (int i = 0; i < set->n; i++)
        no_graph[i] = set->c[i].kind != KW_FID_GRAPH_NODE && set->c[i].graph_nodes == 0;
    start = acc;
    cr_assert_eq(kw_calib_fit(&cal, &start, set, no_graph, 1u << KW_CAL_GRAPH_NODE, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "graph_node_us"), "%s", kw_error_last());
    free(set);
}

/* A paged decode row timed alone (graph_nodes 0) sees the kernel fixed time
 * and the gather's fixed time only as their sum: three copies of one row,
 * each measured 3 us above the row's time with neither (W), make the two
 * columns of J proportional (the same measured time in each copy: the
 * finite-difference Jacobian's rounding is then the same in every row too).
 * Strict: refused, naming one of them; not strict: that one is kept at the
 * file's value and the other fitted, the two summing to 3 us. (Graph rows
 * were this example while the node cost and the fixed time added up; the
 * node includes the fixed time now.) */
Test(calib, parameters_the_cases_cannot_tell_apart_are_named_and_kept)
{
    load_shipped();
    int g = -1;
    for (int i = 0; i < set->n && g < 0; i++)
        if (strcmp(set->c[i].name, "decode_fa2_ort_b64_kv256") == 0)
            g = i;
    cr_assert_geq(g, 0);
    kw_accel a = acc;
    a.kernel_fixed_us = 0.0;
    a.gather_fixed_us = 0.0;
    double w;
    kw_bound b;
    cr_assert_eq(kw_fidelity_predict(&w, &b, NULL, &a, &set->c[g]), 0);
    const double us[3] = {w + 3.0, w + 3.0, w + 3.0};
    kw_fid_set *three = copies(g, 3, us);
    unsigned want = (1u << KW_CAL_GATHER_FIXED) | (1u << KW_CAL_KERNEL_FIXED);
    kw_calib cal;
    a = acc;
    a.kernel_fixed_us = 0.2;
    cr_assert_eq(kw_calib_fit(&cal, &a, three, NULL, want, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "cannot tell"), "%s", kw_error_last());
    cr_assert(strstr(kw_error_last(), "gather_fixed_us") || strstr(kw_error_last(), "kernel_fixed_us"),
              "%s", kw_error_last());
    a = acc;
    a.kernel_fixed_us = 0.2;
    cr_assert_eq(kw_calib_fit(&cal, &a, three, NULL, want, 0), 0, "%s", kw_error_last());
    cr_assert_eq(cal.p[KW_CAL_GATHER_FIXED].fitted + cal.p[KW_CAL_KERNEL_FIXED].fitted, 1);
    cr_assert(fabs(a.gather_fixed_us + a.kernel_fixed_us - 3.0) < 1e-6, "%g + %g", a.gather_fixed_us,
              a.kernel_fixed_us);
    free(three);
    free(set);
}

/* A trust-region step that overflows a figure is rejected, not a failed fit:
 * without the DeepGEMM and decode rows no short kernel pins the fixed time
 * (the graph row sees the node cost, not it), the scaled step takes
 * exp(x) of it to infinity and the time to NaN; that step must cost more
 * than any real one, the region shrink, and the fit end below its start. */
Test(calib, a_step_that_overflows_a_figure_is_rejected_not_fatal)
{
    load_shipped();
    int use[KW_FID_MAX] = {0}, n = 0;
    for (int i = 0; i < set->n; i++) {
        use[i] = set->c[i].kind != KW_FID_DECODE && strcmp(set->c[i].source_key, "deepseek-ai/DeepGEMM") != 0;
        n += use[i];
    }
    cr_assert_gt(n, 20);
    kw_calib cal;
    kw_accel a = acc;
    cr_assert_eq(kw_calib_fit(&cal, &a, set, use, (1u << KW_CAL_COUNT) - 1u, 0), 0, "%s",
                 kw_error_last());
    cr_assert(isfinite(cal.chi2_after) && cal.chi2_after < cal.chi2_before, "%g -> %g",
              cal.chi2_before, cal.chi2_after);
    cr_assert(isfinite(a.kernel_fixed_us) && a.kernel_fixed_us <= 1e3, "%g", a.kernel_fixed_us);
    free(set);
}

Test(calib, under_determined_fits_are_refused)
{
    load_shipped();
    kw_calib cal;
    kw_accel a = acc;
    /* the bf16 cases alone (no DeepGEMM FP8 shapes) do not depend on the fp8 fraction */
    int cb[KW_FID_MAX] = {0};
    for (int i = 0; i < set->n; i++)
        cb[i] = set->c[i].precision == KW_PREC_BF16;
    cr_assert_eq(kw_calib_fit(&cal, &a, set, cb, 1u << KW_CAL_MATRIX_FP8, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "under-determined"), "%s", kw_error_last());
    int use[KW_FID_MAX] = {0};
    use[0] = use[1] = 1; /* two GEMMs: no attention case for the softmax figure */
    a = acc;
    cr_assert_eq(kw_calib_fit(&cal, &a, set, use, WANT3, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "softmax_vector_ops") || strstr(kw_error_last(), "sync"), "%s",
              kw_error_last());
    use[1] = 0; /* one case for one parameter */
    a = acc;
    cr_assert_eq(kw_calib_fit(&cal, &a, set, use, 1u << KW_CAL_MATRIX, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "more cases than parameters"), "%s", kw_error_last());
    free(set);
}

/* The shipped measured CSV (the caller frees it), its gemm4096_cublas row
 * and that row's line. */
static char *kw_t_shipped_row(const char **row, int *line)
{
    char mp[1024];
    snprintf(mp, sizeof mp, "%s/spaces/measured/h100_published.csv", kw_tl_src());
    char *text = kw_tl_slurp(mp);
    cr_assert_not_null(text);
    *row = strstr(text, "\ngemm4096_cublas,") + 1;
    *line = 1;
    for (const char *c = text; c < *row; c++)
        *line += *c == '\n';
    return text;
}

/* A case listed twice is refused at its second line: the fit weighed it
 * twice, silently. */
Test(calib, a_case_listed_twice_is_refused_at_its_line)
{
    char *dir = kw_tl_tmpdir("kwcalib"), dup[1200];
    cr_assert_not_null(dir);
    snprintf(dup, sizeof dup, "%s/dup.csv", dir);
    const char *row;
    int line;
    char *text = kw_t_shipped_row(&row, &line);
    const char *end = strchr(row, '\n') + 1;
    FILE *f = fopen(dup, "w");
    cr_assert_not_null(f);
    fwrite(text, 1, (size_t)(end - text), f);
    fwrite(row, 1, (size_t)(end - row), f); /* the row again, right after itself */
    fputs(end, f);
    cr_assert_eq(fclose(f), 0);
    kw_fid_set *s = malloc(sizeof *s);
    cr_assert_eq(kw_fidelity_load(s, dup), KW_EINPUT);
    char want[256];
    snprintf(want, sizeof want, "dup.csv:%d: case 'gemm4096_cublas' is already listed (line %d)",
             line + 1, line);
    cr_assert(strstr(kw_error_last(), want) != NULL, "want '%s' in '%s'", want, kw_error_last());
    free(s);
    free(text);
    kw_tl_rmrf(dir);
}

/* A measured row holding a NUL byte is refused at its line as such: fgets
 * ended the line at the NUL and the reader said "line longer than 4095
 * bytes" of a 200-byte row (and a last row without a final newline was taken
 * cut at the NUL). Fails on the code before 2026-12-07 (the message). */
Test(calib, a_row_holding_a_nul_byte_is_refused_as_such_at_its_line)
{
    char *dir = kw_tl_tmpdir("kwcalib"), bad[1200];
    cr_assert_not_null(dir);
    snprintf(bad, sizeof bad, "%s/nul.csv", dir);
    const char *row;
    int line;
    char *text = kw_t_shipped_row(&row, &line);
    const char *end = strchr(row, '\n');
    kw_fid_set *s = malloc(sizeof *s);
    cr_assert_not_null(s);
    for (int last = 0; last < 2; last++) { /* the row inside the file, then last without '\n' */
        FILE *f = fopen(bad, "w");
        cr_assert_not_null(f);
        fwrite(text, 1, (size_t)(end - text), f);
        fwrite("\0junk", 1, 5, f);
        if (!last)
            fputs(end, f);
        cr_assert_eq(fclose(f), 0);
        cr_assert_eq(kw_fidelity_load(s, bad), KW_EINPUT, "last %d: accepted", last);
        char want[256];
        snprintf(want, sizeof want, "nul.csv:%d: NUL byte in line", line);
        cr_assert(strstr(kw_error_last(), want) != NULL, "want '%s' in '%s'", want,
                  kw_error_last());
    }
    free(s);
    free(text);
    kw_tl_rmrf(dir);
}

/* A cluster written MxN longer than the reader's 31-byte copy with its 'x'
 * past the cut: the copy held no 'x' and the reader stored through NULL
 * (SIGSEGV, exit 139, in calibrate and the fidelity bench). Found by
 * fuzz/fuzz_measured; the load crashes on main ee68dbf's code. */
Test(calib, a_long_cluster_field_is_refused_at_its_line)
{
    char *dir = kw_tl_tmpdir("kwcalib");
    cr_assert_not_null(dir);
    char p[1200];
    snprintf(p, sizeof p, "%s/cluster.csv", dir);
    cr_assert_eq(kw_tl_write(p, "case,kind,m,n,k,batch,seq,heads,kv_heads,page,head_dim,causal,"
                                "tile_m,tile_n,tile_k,stages,cluster,order,graph_nodes,schedule,"
                                "precision,accum,measured_us,bound,source\n"
                                "g,gemm,4096,4096,4096,1,4096,0,0,0,0,0,128,256,64,4,"
                                "00000000000000000000000000000000001x1,row,0,serial,bf16,fp32,"
                                "191.954,compute,pranjalssh/fast.cu README\n"), 0);
    kw_fid_set *s = malloc(sizeof *s);
    cr_assert_not_null(s);
    cr_assert_eq(kw_fidelity_load(s, p), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "cluster.csv:2: cluster '000") != NULL, "%s", kw_error_last());
    free(s);
    kw_tl_rmrf(dir);
}

/* -o naming one of calibrate's own inputs is refused even with --force, by
 * device and inode (a hard link too): --force replaced the measured CSV with
 * the accelerator file, or the accelerator file read. Both stay as they were. */
Test(calib, output_never_replaces_its_own_inputs)
{
    char *dir = kw_tl_tmpdir("kwtest");
    cr_assert_not_null(dir);
    char src_a[1200], src_m[1200], a[1200], m[1200], link_m[1200];
    snprintf(src_a, sizeof src_a, "%s/spaces/accel/h100.xml", kw_tl_src());
    snprintf(src_m, sizeof src_m, "%s/spaces/measured/h100_published.csv", kw_tl_src());
    snprintf(a, sizeof a, "%s/a.xml", dir);
    snprintf(m, sizeof m, "%s/m.csv", dir);
    snprintf(link_m, sizeof link_m, "%s/m_link.csv", dir);
    char *a0 = kw_tl_slurp(src_a), *m0 = kw_tl_slurp(src_m);
    cr_assert(a0 && m0);
    FILE *f = fopen(a, "w");
    cr_assert(f && fputs(a0, f) >= 0 && fclose(f) == 0);
    f = fopen(m, "w");
    cr_assert(f && fputs(m0, f) >= 0 && fclose(f) == 0);
    cr_assert_eq(link(m, link_m), 0);
    static const char *const outs[][2] = {
        {"m.csv", "is the --measured file itself"},
        {"m_link.csv", "is the --measured file itself"},
        {"a.xml", "is the --accel file itself"},
        {"./a.xml", "is the --accel file itself"},
    };
    kw_tl_opts o = {.timeout_s = 60, .cwd = dir};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "calibrate", "--accel", "a.xml", "--measured",
                                 "m.csv", "-o", outs[i][0], "--force", NULL);
        cr_assert_eq(r.status, 2, "-o %s: exit %d: %s", outs[i][0], r.status, r.err);
        cr_assert(strstr(r.err, outs[i][1]), "-o %s: %s", outs[i][0], r.err);
        kw_tl_free(&r);
        char *a1 = kw_tl_slurp(a), *m1 = kw_tl_slurp(m);
        cr_assert(strcmp(a0, a1) == 0 && strcmp(m0, m1) == 0, "-o %s changed an input",
                  outs[i][0]);
        free(a1);
        free(m1);
    }
    free(a0);
    free(m0);
    kw_tl_rmrf(dir);
}

Test(calib, output_is_never_replaced_without_force)
{
    char *dir = kw_tl_tmpdir("kwtest");
    char out[1024], cmd[4096];
    snprintf(out, sizeof out, "%s/cal.xml", dir);
    FILE *f = fopen(out, "w");
    fputs("keep me\n", f);
    fclose(f);
    const char *args = "calibrate --accel %s/spaces/accel/h100.xml --measured "
                       "%s/spaces/measured/h100_published.csv -o %s%s";
    snprintf(cmd, sizeof cmd, args, kw_tl_src(), kw_tl_src(), out, "");
    kw_tl_proc r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 2, "%s", r.out);
    cr_assert(strstr(r.err, "give --force"), "%s", r.err);
    char *kept = kw_tl_slurp(out);
    cr_assert_str_eq(kept, "keep me\n");
    free(kept);
    kw_tl_free(&r);
    /* nor with --force: "keep me" is no file calibrate wrote (it may be
     * another run's input) */
    snprintf(cmd, sizeof cmd, args, kw_tl_src(), kw_tl_src(), out, " --force");
    r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 2, "%s", r.out);
    cr_assert(strstr(r.err, "not a file knobwise calibrate wrote"), "%s", r.err);
    kept = kw_tl_slurp(out);
    cr_assert_str_eq(kept, "keep me\n");
    free(kept);
    kw_tl_free(&r);
    /* calibrate's own output: replaced with --force */
    cr_assert_eq(unlink(out), 0);
    snprintf(cmd, sizeof cmd, args, kw_tl_src(), kw_tl_src(), out, "");
    r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    snprintf(cmd, sizeof cmd, args, kw_tl_src(), kw_tl_src(), out, " --force");
    r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "1-sigma"));
    char *xml = kw_tl_slurp(out);
    cr_assert(strstr(xml, "fitted to"), "no 'fitted to' source");
    free(xml);
    kw_accel a;
    cr_assert_eq(kw_load_accel(&a, out), 0, "%s", kw_error_last());
    /* the written file carries the fitted node cost, not the shipped one:
     * the value the fit printed (4 decimals) */
    const char *line = strstr(r.out, "\ngraph_node_us");
    cr_assert_not_null(line, "%s", r.out);
    double before, fitted;
    cr_assert_eq(sscanf(line, " graph_node_us %lf %lf", &before, &fitted), 2, "%.80s", line);
    cr_assert(fabs(before - fitted) > 1e-3, "node cost not fitted: %g", fitted);
    cr_assert(fabs(a.graph_node_us - fitted) < 1e-4, "%g written, %g fitted", a.graph_node_us,
              fitted);
    kw_tl_free(&r);
    /* an under-determined fit writes nothing: the bf16 GEMM rows alone
     * cannot determine the fp8 fraction */
    char out2[1024], csv[1024], mp[1024];
    snprintf(out2, sizeof out2, "%s/none.xml", dir);
    snprintf(csv, sizeof csv, "%s/gemm.csv", dir);
    snprintf(mp, sizeof mp, "%s/spaces/measured/h100_published.csv", kw_tl_src());
    snprintf(cmd, sizeof cmd, "grep -E '^(case,|gemm)' '%s' > '%s'", mp, csv);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "calibrate --accel %s/spaces/accel/h100.xml --measured %s -o %s --fit matrix_fraction_fp8",
             kw_tl_src(), csv, out2);
    r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 2, "%s", r.out);
    cr_assert(strstr(r.err, "under-determined"), "%s", r.err);
    cr_assert(!kw_tl_exists(out2));
    kw_tl_free(&r);
    /* not a regular file: refused even with --force */
    snprintf(cmd, sizeof cmd, args, kw_tl_src(), kw_tl_src(), dir, " --force");
    r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 2);
    kw_tl_free(&r);
    free(dir);
}

/* A fit to times the model cannot reach (five copies of the 4096^3 cuBLAS row
 * at 1e12 us: the fitted matrix fraction is 1.6e-10, written as 0.000000)
 * gives a file the loader refuses: exit 2, naming it, and nothing written; an
 * earlier calibrate output given with --force is kept as it was. main's
 * binary renamed the refused file over OUT first (exit 2, OUT left holding a
 * file its own schema refuses). */
Test(calib, a_fit_the_loader_would_refuse_writes_nothing)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest");
    char out[1024], csv[1024], mp[1024], cmd[4096];
    snprintf(out, sizeof out, "%s/cal.xml", dir);
    snprintf(csv, sizeof csv, "%s/absurd.csv", dir);
    snprintf(mp, sizeof mp, "%s/spaces/measured/h100_published.csv", kw_tl_src());
    char *all = kw_tl_slurp(mp);
    cr_assert_not_null(all);
    char *head = strstr(all, "\ncase,"), *row = head ? strstr(head + 1, "\ngemm4096_cublas,") : NULL;
    cr_assert(head && row, "%s: no header or gemm4096_cublas row", mp);
    char *at = strstr(row, ",191.954,");
    cr_assert_not_null(at, "gemm4096_cublas measures 191.954 us");
    FILE *f = fopen(csv, "w");
    cr_assert_not_null(f);
    fprintf(f, "%.*s\n", (int)(strchr(head + 1, '\n') - head - 1), head + 1);
    for (int i = 0; i < 5; i++)
        fprintf(f, "c%d%.*s,1e12,%.*s\n", i, (int)(at - row - 1 - strlen("gemm4096_cublas")),
                row + 1 + strlen("gemm4096_cublas"), (int)strcspn(at + 9, "\n"), at + 9);
    cr_assert_eq(fclose(f), 0);
    free(all);
    /* an earlier output of calibrate, then the absurd fit over it with --force */
    snprintf(cmd, sizeof cmd, "calibrate --accel %s/spaces/accel/h100.xml --measured %s -o %s",
             kw_tl_src(), mp, out);
    kw_tl_proc r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    char *before = kw_tl_slurp(out);
    cr_assert_not_null(before);
    snprintf(cmd, sizeof cmd, "calibrate --accel %s/spaces/accel/h100.xml --measured %s -o %s "
             "--fit matrix_fraction --force", kw_tl_src(), csv, out);
    r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "the calibrated file would not load, so ") &&
              strstr(r.err, "cal.xml is not written"), "%s", r.err);
    kw_tl_free(&r);
    char *after = kw_tl_slurp(out);
    cr_assert_str_eq(after, before, "the earlier output was replaced");
    free(after);
    free(before);
    kw_tl_rmrf(dir);
}

/* shared_gb_s is written to the level the fit tuned (the largest shared level
 * holding operands, kw_calib_shared_level), not to the first shared level the
 * file lists: a small shared level put before the L2 keeps its figure. */
Test(calib, shared_bandwidth_is_written_to_the_level_it_was_fitted_for)
{
    char *dir = kw_tl_tmpdir("kwtest");
    char in[1024], out[1024], cmd[4096];
    snprintf(in, sizeof in, "%s/two_shared.xml", dir);
    snprintf(out, sizeof out, "%s/cal.xml", dir);
    snprintf(cmd, sizeof cmd,
             "sed 's|<level name=\"l2\" kind=\"shared\"|<level name=\"dsm\" kind=\"shared\" mib=\"1\" "
             "gb_s=\"1000\" holds=\"operands\" source=\"test\"/><level name=\"l2\" kind=\"shared\"|' "
             "'%s/spaces/accel/h100.xml' > '%s'",
             kw_tl_src(), in);
    cr_assert_eq(system(cmd), 0);
    kw_accel before;
    cr_assert_eq(kw_load_accel(&before, in), 0, "%s", kw_error_last());
    cr_assert_eq(before.n_levels, 4, "the test file must list two shared levels");
    snprintf(cmd, sizeof cmd, "calibrate --accel %s --measured %s/spaces/measured/h100_published.csv -o %s",
             in, kw_tl_src(), out);
    kw_tl_proc r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* its line in the parameter table is a fitted one, not a kept one */
    const char *line = strstr(r.out, "\nshared_gb_s ");
    cr_assert_not_null(line, "%s", r.out);
    const char *eol = strchr(line + 1, '\n');
    cr_assert(!memmem(line, eol ? (size_t)(eol - line) : strlen(line), "kept", 4), "%s", r.out);
    kw_tl_free(&r);
    kw_accel a;
    cr_assert_eq(kw_load_accel(&a, out), 0, "%s", kw_error_last());
    const kw_level *dsm = NULL, *l2 = NULL;
    for (int i = 0; i < a.n_levels; i++) {
        if (strcmp(a.levels[i].name, "dsm") == 0)
            dsm = &a.levels[i];
        if (strcmp(a.levels[i].name, "l2") == 0)
            l2 = &a.levels[i];
    }
    cr_assert(dsm && l2);
    cr_assert_float_eq(dsm->bw_bytes_per_s, 1000e9, 1.0, "the small level's figure was replaced");
    char *xml = kw_tl_slurp(out);
    const char *l2e = strstr(xml, "<level name=\"l2\"");
    cr_assert(l2e, "%s", xml);
    const char *end = strchr(l2e, '>'), *fit = strstr(l2e, "fitted to");
    cr_assert(fit && end && fit < end, "the fitted level does not say it was fitted: %.300s", l2e);
    free(xml);
    free(dir);
}

/* --prior on the command line: a width by number or by class; each prior's
 * line prints its width and how far the parameter moved in widths,
 * log(fitted / before) / width; a bad --prior is a usage error that writes
 * nothing. */
Test(calib, prior_option_prints_the_move_in_prior_widths)
{
    char *dir = kw_tl_tmpdir("kwtest");
    char out[1024], cmd[4096];
    snprintf(out, sizeof out, "%s/cal.xml", dir);
    const char *args = "calibrate --accel %s/spaces/accel/h100.xml --measured "
                       "%s/spaces/measured/h100_published.csv -o %s --prior %s";
    snprintf(cmd, sizeof cmd, args, kw_tl_src(), kw_tl_src(), out,
             "softmax_vector_ops=D,graph_node_us=0.5");
    kw_tl_proc r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "prior-width"), "%s", r.out);
    static const char *const names[2] = {"\nsoftmax_vector_ops", "\ngraph_node_us"};
    static const double widths[2] = {0.25, 0.5};
    for (int k = 0; k < 2; k++) {
        const char *line = strstr(r.out, names[k]);
        cr_assert_not_null(line, "%s", r.out);
        char name[64];
        double before, fitted, sigma, width, moved;
        cr_assert_eq(sscanf(line, " %63s %lf %lf %lf %lf %lf", name, &before, &fitted, &sigma, &width,
                            &moved),
                     6, "%.120s", line);
        cr_assert_float_eq(width, widths[k], 1e-9);
        cr_assert(fabs(moved - log(fitted / before) / width) < 0.01, "%s moved %g, want %g", name,
                  moved, log(fitted / before) / width);
    }
    cr_assert(strstr(r.out, "\ndram_fraction") && strstr(strstr(r.out, "\ndram_fraction"), "none"),
              "a parameter without a prior says so: %s", r.out);
    kw_tl_free(&r);
    /* the written file marks every fitted figure's prior F (fitted): with
     * --prior file it then has none */
    kw_accel w;
    cr_assert_eq(kw_load_accel(&w, out), 0, "%s", kw_error_last());
    cr_assert_eq(w.prior_class[KW_CAL_GRAPH_NODE], 'F');
    cr_assert_eq(w.prior_class[KW_CAL_DRAM], 'F');
    cr_assert_eq(w.prior_width[KW_CAL_GRAPH_NODE], 0.0);
    char out3[1024];
    snprintf(out3, sizeof out3, "%s/cal3.xml", dir);
    snprintf(cmd, sizeof cmd,
             "calibrate --accel %s --measured %s/spaces/measured/h100_published.csv -o %s --prior file",
             out, kw_tl_src(), out3);
    r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *gl = strstr(r.out, "\ngraph_node_us");
    cr_assert(gl && strstr(gl, "none") && strstr(gl, "none") < strchr(gl + 1, '\n'), "%s", r.out);
    kw_tl_free(&r);
    static const char *const bad[3] = {"nosuch=D", "graph_node_us=0", "graph_node_us"};
    for (int k = 0; k < 3; k++) {
        char out2[1024];
        snprintf(out2, sizeof out2, "%s/bad%d.xml", dir, k);
        snprintf(cmd, sizeof cmd, args, kw_tl_src(), kw_tl_src(), out2, bad[k]);
        r = kw_tl_sh(cmd, NULL);
        cr_assert_eq(r.status, 2, "%s: %s", bad[k], r.out);
        cr_assert(strstr(r.err, "--prior"), "%s", r.err);
        cr_assert(!kw_tl_exists(out2));
        kw_tl_free(&r);
    }
    free(dir);
}

/* The widths an accelerator states: its own width where it gives one, else
 * its class's default; none for class F or where nothing is stated. */
Test(calib, the_file_priors_give_class_defaults_and_overrides)
{
    kw_accel a;
    memset(&a, 0, sizeof a);
    a.prior_class[KW_CAL_MATRIX] = 'D';
    a.prior_class[KW_CAL_DRAM] = 'F';
    a.prior_class[KW_CAL_SHARED_BW] = 'F';
    a.prior_width[KW_CAL_SHARED_BW] = 0.3;
    a.prior_class[KW_CAL_SOFTMAX_OPS] = 'S';
    a.prior_width[KW_CAL_SOFTMAX_OPS] = 0.05;
    a.prior_class[KW_CAL_GRAPH_NODE] = 'U';
    kw_calib_prior pr = {.row_width = 0.2};
    kw_calib_prior_from_accel(&pr, &a);
    cr_assert_eq(pr.width[KW_CAL_MATRIX], 0.25);
    cr_assert_eq(pr.width[KW_CAL_DRAM], 0.0);
    cr_assert_eq(pr.width[KW_CAL_SHARED_BW], 0.3);
    cr_assert_eq(pr.width[KW_CAL_SOFTMAX_OPS], 0.05);
    cr_assert_eq(pr.width[KW_CAL_GRAPH_NODE], 1.0);
    cr_assert_eq(pr.width[KW_CAL_SYNC_MATRIX], 0.0);
    cr_assert_eq(pr.row_width, 0.2);
}

/* <rates><prior>: an unknown parameter, a second prior for one parameter and
 * a class outside S D U F are refused with the file's name and line. */
Test(calib, bad_file_priors_are_refused_with_file_and_line)
{
    char *dir = kw_tl_tmpdir("kwtest");
    static const char *const bad[3][2] = {
        {"<prior param=\"nosuch\" class=\"D\"/>", "unknown parameter"},
        {"<prior param=\"graph_node_us\" class=\"U\"/>", "more than one prior"},
        {"<prior param=\"dram_fraction\" class=\"X\"/>", "class"},
    };
    for (int k = 0; k < 3; k++) {
        char in[1024], cmd[4096];
        snprintf(in, sizeof in, "%s/bad%d.xml", dir, k);
        snprintf(cmd, sizeof cmd,
                 "sed 's|<prior param=\"graph_node_us\"|%s<prior param=\"graph_node_us\"|' "
                 "'%s/spaces/accel/h100.xml' > '%s'",
                 bad[k][0], kw_tl_src(), in);
        cr_assert_eq(system(cmd), 0);
        kw_accel a;
        cr_assert_neq(kw_load_accel(&a, in), 0, "%s loaded", bad[k][0]);
        char where[1100];
        snprintf(where, sizeof where, "bad%d.xml:", k);
        cr_assert(strstr(kw_error_last(), where) && strstr(kw_error_last(), bad[k][1]), "%s",
                  kw_error_last());
    }
    free(dir);
}

static int case_index(const kw_fid_set *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->c[i].name, name) == 0)
            return i;
    cr_assert_fail("no case %s", name);
    return -1;
}

/* The two campaigns' FA3 head-dim-64 2k rows run the same kernel shape and
 * tiles (fp16 against bf16, one rate in h100.xml): one prediction serves both,
 * and the best it can do is the closed form (hi - lo) / (hi + lo) of their
 * published times, over the 10% held-out target. Their 8k rows form another
 * group, and a row of another shape is in neither. */
Test(calib, twins_share_one_prediction_and_their_spread_bounds_any_fit)
{
    load_shipped();
    int group[KW_FID_MAX], lo, hi;
    cr_assert_geq(kw_calib_find_twins(group, &acc, set), 2);
    int p2 = case_index(set, "fa3_d64_2k"), t2 = case_index(set, "fa3_d64_2k_torchbench");
    int p8 = case_index(set, "fa3_d64_8k"), t8 = case_index(set, "fa3_d64_8k_torchbench");
    int other = case_index(set, "fa3_d128_2k");
    cr_assert_eq(group[t2], group[p2]);
    cr_assert_eq(group[t8], group[p8]);
    cr_assert_neq(group[p2], group[p8]);
    cr_assert_neq(group[other], group[p2]);
    double e = kw_calib_bound_error(group, set, group[p2], &lo, &hi);
    cr_assert_eq(lo, p2);
    cr_assert_eq(hi, t2);
    /* the CSV's figures: 597.561 us (the paper, 460 TFLOPS) and 732.287 us (tritonbench, 375.4) */
    cr_assert(fabs(e - (732.287 - 597.561) / (732.287 + 597.561)) < 1e-12, "%g", e);
    cr_assert_gt(e, 0.10);
    free(set);
}

/* Three copies of one GEMM row measured 100, 130 and 120 us are one group
 * whose least worst error is 30 / 230 (p = 2 * 100 * 130 / 230 = 113.04 us:
 * 13.04% over the first, 13.04% under the second); a fourth copy with twice
 * the K is a different kernel and stands alone. */
Test(calib, least_worst_error_of_a_group_is_the_closed_form)
{
    load_shipped();
    kw_fid_set *s = malloc(sizeof *s);
    cr_assert_not_null(s);
    s->n = 4;
    int g = case_index(set, "gemm4096_cublas");
    static const double us[4] = {100.0, 130.0, 120.0, 100.0};
    for (int i = 0; i < 4; i++) {
        s->c[i] = set->c[g];
        s->c[i].measured_us = us[i];
    }
    s->c[3].k *= 2.0;
    int group[KW_FID_MAX], lo, hi;
    cr_assert_eq(kw_calib_find_twins(group, &acc, s), 1);
    cr_assert_eq(group[0], 0);
    cr_assert_eq(group[1], 0);
    cr_assert_eq(group[2], 0);
    cr_assert_eq(group[3], 3);
    cr_assert_eq(kw_calib_count_twins(group, 4, 0), 3);
    cr_assert_eq(kw_calib_count_twins(group, 4, 1), 0); /* reported at its first case */
    cr_assert_eq(kw_calib_count_twins(group, 4, 3), 1);
    double e = kw_calib_bound_error(group, s, 0, &lo, &hi);
    cr_assert(fabs(e - 30.0 / 230.0) < 1e-12, "%g", e);
    cr_assert_eq(lo, 0);
    cr_assert_eq(hi, 1);
    double p = 2.0 * 100.0 * 130.0 / 230.0;
    cr_assert(fabs((p / 100.0 - 1.0) - e) < 1e-12 && fabs((1.0 - p / 130.0) - e) < 1e-12);
    cr_assert_eq(kw_calib_bound_error(group, s, 3, NULL, NULL), 0.0);
    free(s);
    free(set);
}

/* The calibrated accelerator file is for people and other tools to read, like
 * every result file (0644 less the umask, as the journal): kw_xml_save_atomic
 * renamed mkstemp's 0600 file into place, so a new file was 0600 and --force
 * turned a 0644 file into a 0600 one. */
/* knobwise calibrate of the shipped H100 file and measurements into out,
 * extra options after; must exit 0. */
static void kw_t_calibrate_ok(const char *out, const char *extra)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "calibrate --accel %s/spaces/accel/h100.xml --measured "
             "%s/spaces/measured/h100_published.csv -o %s%s", kw_tl_src(), kw_tl_src(), out, extra);
    kw_tl_proc r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 0, "%s: %s", cmd, r.err);
    kw_tl_free(&r);
}

Test(calib, the_written_file_is_readable_by_others)
{
    char *dir = kw_tl_tmpdir("kwtest");
    char out[1024];
    snprintf(out, sizeof out, "%s/cal.xml", dir);
    mode_t um = umask(022); /* the usual one; hostile/outputs_follow_the_umask tries 077 */
    for (int force = 0; force < 2; force++) {
        kw_t_calibrate_ok(out, force ? " --force" : "");
        struct stat st;
        cr_assert_eq(stat(out, &st), 0);
        cr_assert_eq(st.st_mode & 0777, 0644, "%s: mode %o", force ? "replaced" : "new",
                     (unsigned)(st.st_mode & 0777));
    }
    umask(um);
    kw_tl_rmrf(dir);
}

/* The fitted figures' source notes quote the --measured path and keep the
 * file's own citations: a path holding '&' emptied the file's <source> (its
 * datasheets lost; libxml2 printed "unterminated entity reference"), and a
 * Latin-1 byte in the path or an accelerator whose <source> holds a UTF-8
 * character across byte 300 (cut in two by "%.300s") made a file the loader
 * refuses: exit 2, "a fit to times the model cannot reach". Each case is
 * written, loads, and keeps the beginning of its <source>; fails on the code
 * before 2026-12-07 in all three. */
Test(calib, source_notes_keep_the_citations_whatever_bytes_the_paths_hold)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest");
    cr_assert_not_null(dir);
    char p[1200], *shipped_m, *shipped_a;
    snprintf(p, sizeof p, "%s/spaces/measured/h100_published.csv", kw_tl_src());
    shipped_m = kw_tl_slurp(p);
    snprintf(p, sizeof p, "%s/spaces/accel/h100.xml", kw_tl_src());
    shipped_a = kw_tl_slurp(p);
    cr_assert(shipped_m && shipped_a);
    /* an accelerator whose <source> is 299 ASCII bytes, then 'é' (2 bytes) */
    const char *open_tag = strstr(shipped_a, "<source>"), *close_tag = strstr(shipped_a, "</source>");
    cr_assert(open_tag && close_tag);
    char *long_a = malloc(strlen(shipped_a) + 400);
    cr_assert_not_null(long_a);
    int head = (int)(open_tag - shipped_a) + (int)strlen("<source>");
    snprintf(long_a, strlen(shipped_a) + 400, "%.*s%0299d\xc3\xa9 and more%s", head, shipped_a, 0,
             close_tag);
    static const struct {
        const char *csv, *accel, *source_starts, *path_as;
    } cases[] = {
        {"m&x.csv", "a.xml", "NVIDIA H100 Tensor Core GPU datasheet", "fitted to m&x.csv"},
        {"m\xe9.csv", "a.xml", "NVIDIA H100 Tensor Core GPU datasheet", "fitted to m?.csv"},
        {"m.csv", "long.xml", "0000000000", "fitted to m.csv"},
    };
    snprintf(p, sizeof p, "%s/a.xml", dir);
    cr_assert_eq(kw_tl_write(p, shipped_a), 0);
    snprintf(p, sizeof p, "%s/long.xml", dir);
    cr_assert_eq(kw_tl_write(p, long_a), 0);
    kw_tl_opts o = {.timeout_s = 100, .cwd = dir};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, cases[i].csv);
        cr_assert_eq(kw_tl_write(p, shipped_m), 0);
        kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "calibrate", "--accel", cases[i].accel,
                                 "--measured", cases[i].csv, "-o", "out.xml", NULL);
        cr_assert_eq(r.status, 0, "case %zu: exit %d: %s", i, r.status, r.err);
        cr_assert(strstr(r.err, "entity") == NULL, "case %zu: libxml2 spoke: %s", i, r.err);
        kw_tl_free(&r);
        snprintf(p, sizeof p, "%s/out.xml", dir);
        kw_accel a;
        cr_assert_eq(kw_load_accel(&a, p), 0, "case %zu: %s", i, kw_error_last());
        cr_assert(strncmp(a.source, cases[i].source_starts, strlen(cases[i].source_starts)) == 0,
                  "case %zu: the file's own <source> is lost: '%s'", i, a.source);
        cr_assert(strstr(a.source, cases[i].path_as) != NULL, "case %zu: no '%s' in '%s'", i,
                  cases[i].path_as, a.source);
        cr_assert_eq(unlink(p), 0);
    }
    free(long_a);
    free(shipped_a);
    free(shipped_m);
    kw_tl_rmrf(dir);
}

/* A measured case the model cannot cost (a GEMM of 409,600 cubed: 312 GiB of
 * weights on an 80 GiB H100) is refused at its line with the model's reason;
 * every trial step of the fit failed on it, and calibrate said
 * "under-determined fit: no wanted parameter is determined by the 74
 * measured cases" of the whole file (main ee68dbf's binary). */
Test(calib, a_case_the_model_cannot_cost_is_refused_at_its_line)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwcalib");
    cr_assert_not_null(dir);
    char p[1200];
    snprintf(p, sizeof p, "%s/spaces/measured/h100_published.csv", kw_tl_src());
    char *text = kw_tl_slurp(p);
    cr_assert_not_null(text);
    int lines = 0;
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    kw_sbuf b = {0};
    kw_sbuf_puts(&b, text);
    kw_sbuf_puts(&b, "gemm_huge,gemm,409600,409600,409600,1,4096,0,0,0,0,0,128,256,64,4,2,row,0,"
                     "serial,bf16,fp32,191.954,compute,pranjalssh/fast.cu README\n");
    snprintf(p, sizeof p, "%s/huge.csv", dir);
    cr_assert_eq(kw_tl_write(p, kw_sbuf_cstr(&b)), 0);
    kw_sbuf_free(&b);
    free(text);
    char accel_path[1200];
    snprintf(accel_path, sizeof accel_path, "%s/spaces/accel/h100.xml", kw_tl_src());
    kw_tl_opts o = {.timeout_s = 100, .cwd = dir};
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "calibrate", "--accel", accel_path, "--measured", "huge.csv",
                             "-o", "out.xml", NULL);
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    char want[200];
    snprintf(want, sizeof want, "huge.csv:%d: case 'gemm_huge': the model cannot cost it", lines + 1);
    cr_assert(strstr(r.err, want) != NULL, "want '%s' in: %s", want, r.err);
    cr_assert(strstr(r.err, "GiB of weights") != NULL, "the model's reason is lost: %s", r.err);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/out.xml", dir);
    cr_assert(!kw_tl_exists(p), "written");
    kw_tl_rmrf(dir);
}

/* Robust loss (kw_calib_fit_loss). n copies of the shipped graph_node row,
 * whose time is the node cost g itself (kernel fixed time 0, as
 * one_case_and_a_prior_give_the_weighted_mean checks), so each residual is
 * log(g / g_true) + log(g_true / m_i): a location problem in
 * t = log(g / g_true). Times generated at g_true 1.3 us, the last copy
 * measured twice as slow (L = log 2): the outlier.
 *   ls:     n t - L = 0, t = L / n (the outlier pulls g up by e^(L/n) - 1).
 *   huber:  the inliers' residuals agree (t), so the MAD is 0 and the scale
 *           its floor s; (n - 1) t / s - c = 0, t = c s / (n - 1).
 *   cauchy: the outlier's influence is at most c / 2, t <= c s / (2 (n - 1)).
 * Fails on main: no kw_calib_fit_loss. */
#define ROBUST_N 8
#define ROBUST_TRUE 1.3
static kw_fid_set *robust_rows(kw_accel *a)
{
    double us[ROBUST_N];
    for (int i = 0; i < ROBUST_N; i++)
        us[i] = i == ROBUST_N - 1 ? 2.0 * ROBUST_TRUE : ROBUST_TRUE;
    kw_fid_set *out = graph_rows(ROBUST_N, us);
    *a = acc;
    a->kernel_fixed_us = 0.0;
    a->graph_node_us = 1.0;
    double p;
    kw_bound b;
    cr_assert_eq(kw_fidelity_predict(&p, &b, NULL, a, &out->c[0]), 0);
    cr_assert_float_eq(p, 1.0, 1e-12, "the case is not the node cost alone: %g", p);
    for (int i = 0; i < ROBUST_N; i++)
        snprintf(out->c[i].name, sizeof out->c[i].name, "robust_g%d", i);
    return out;
}

Test(calib, a_robust_loss_recovers_known_parameters_despite_one_gross_outlier)
{
    load_shipped();
    kw_accel start;
    kw_fid_set *rows = robust_rows(&start);
    const double L = log(2.0), n = ROBUST_N, s = KW_CAL_SCALE_MIN;
    for (int loss = 0; loss < KW_CAL_LOSS_COUNT; loss++) {
        kw_accel a = start;
        kw_calib cal;
        cr_assert_eq(kw_calib_fit_loss(&cal, &a, rows, NULL, 1u << KW_CAL_GRAPH_NODE, 1, NULL,
                                       (kw_calib_loss)loss),
                     0, "%s", kw_error_last());
        double t = log(cal.p[KW_CAL_GRAPH_NODE].after / ROBUST_TRUE), c = kw_calib_loss_tuning(loss);
        if (loss == KW_CAL_LOSS_LS) {
            cr_assert(fabs(t - L / n) < 1e-6, "ls: t %g, want L / n %g", t, L / n);
            cr_assert_eq(cal.n_outliers, 0);
            continue;
        }
        double bound = loss == KW_CAL_LOSS_HUBER ? c * s / (n - 1.0) : c * s / (2.0 * (n - 1.0));
        cr_assert(t >= -1e-9 && t <= bound * (1.0 + 1e-3) + 1e-9, "%s: t %g, bound %g",
                  kw_calib_loss_name(loss), t, bound);
        if (loss == KW_CAL_LOSS_HUBER) /* the closed form itself */
            cr_assert(fabs(t - bound) < 1e-3 * bound + 1e-9, "huber: t %g, want %g", t, bound);
        cr_assert(fabs(cal.scale - s) < 1e-12, "the scale is the floor: %g", cal.scale);
        cr_assert(cal.converged);
        cr_assert_eq(cal.n_outliers, 1, "%s: %d outliers", kw_calib_loss_name(loss), cal.n_outliers);
        cr_assert(cal.outlier[ROBUST_N - 1]);
        cr_assert(cal.weight[ROBUST_N - 1] < 0.01, "%g", cal.weight[ROBUST_N - 1]);
        if (loss == KW_CAL_LOSS_HUBER)
            for (int i = 0; i < ROBUST_N - 1; i++)
                cr_assert_eq(cal.weight[i], 1.0, "inlier %d weight %g", i, cal.weight[i]);
        cr_assert(isfinite(cal.p[KW_CAL_GRAPH_NODE].sigma) && cal.p[KW_CAL_GRAPH_NODE].sigma > 0.0);
    }
    free(rows);
    free(set);
}

/* Without an outlier the robust fits are the least-squares fit: times
 * generated at known figures come back, nothing is down-weighted. */
Test(calib, a_robust_loss_on_clean_data_recovers_the_parameters_and_names_no_case)
{
    load_shipped();
    generate_known3();
    for (int loss = KW_CAL_LOSS_HUBER; loss < KW_CAL_LOSS_COUNT; loss++) {
        kw_calib cal;
        kw_accel start = acc;
        cr_assert_eq(kw_calib_fit_loss(&cal, &start, set, NULL, WANT3, 1, NULL, (kw_calib_loss)loss),
                     0, "%s", kw_error_last());
        assert_known3(&cal);
        cr_assert_eq(cal.n_outliers, 0, "%s: %d", kw_calib_loss_name(loss), cal.n_outliers);
    }
    free(set);
}

/* Holland & Welsch's weights at their tuning constants, by hand. */
Test(calib, robust_weights_are_the_closed_forms)
{
    cr_assert_float_eq(kw_calib_loss_tuning(KW_CAL_LOSS_HUBER), 1.345, 1e-12);
    cr_assert_float_eq(kw_calib_loss_tuning(KW_CAL_LOSS_CAUCHY), 2.385, 1e-12);
    cr_assert_eq(kw_calib_loss_weight(KW_CAL_LOSS_HUBER, 1.0), 1.0);
    cr_assert_float_eq(kw_calib_loss_weight(KW_CAL_LOSS_HUBER, -2.69), 0.5, 1e-12);
    cr_assert_float_eq(kw_calib_loss_weight(KW_CAL_LOSS_CAUCHY, 2.385), 0.5, 1e-12);
    cr_assert_float_eq(kw_calib_loss_weight(KW_CAL_LOSS_CAUCHY, 0.0), 1.0, 1e-12);
    cr_assert_eq(kw_calib_loss_weight(KW_CAL_LOSS_LS, 100.0), 1.0);
    cr_assert_eq(kw_calib_loss_id("huber"), KW_CAL_LOSS_HUBER);
    cr_assert_eq(kw_calib_loss_id("Huber"), -1);
}

/* `calibrate --loss huber` names the case it cannot explain (the outlier
 * above, written as a CSV with an accelerator whose kernel fixed time is 0),
 * with its line, and no other, and fits the node cost back; the default loss
 * (ls) prints no such list; the written file's sources say the loss. A bad
 * --loss is exit 2 with nothing written (tests/cli.manifest). */
Test(calib, loss_option_names_the_case_the_model_cannot_explain)
{
    load_shipped();
    kw_accel start;
    kw_fid_set *rows = robust_rows(&start);
    char *dir = kw_tl_tmpdir("kwtest");
    char csv[1024], out[1024], out2[1024], mp[1024], cmd[4096];
    snprintf(csv, sizeof csv, "%s/robust.csv", dir);
    snprintf(out, sizeof out, "%s/cal.xml", dir);
    snprintf(out2, sizeof out2, "%s/cal2.xml", dir);
    snprintf(mp, sizeof mp, "%s/spaces/measured/h100_published.csv", kw_tl_src());
    char *text = kw_tl_slurp(mp);
    cr_assert_not_null(text);
    const char *hdr = strstr(text, "\ncase,") + 1, *row = strstr(text, "\ngraph_node_");
    cr_assert(hdr && row, "no header or graph_node row");
    row++;
    FILE *f = fopen(csv, "w");
    cr_assert_not_null(f);
    fwrite(hdr, 1, (size_t)(strchr(hdr, '\n') + 1 - hdr), f);
    /* the row's fields 2..22 (kind .. accum), then measured, bound, source */
    const char *kind = strchr(row, ',') + 1, *p = kind;
    for (int k = 0; k < 21; k++)
        p = strchr(p, ',') + 1;
    const char *bound = strchr(p, ',') + 1;
    for (int i = 0; i < ROBUST_N; i++)
        fprintf(f, "robust_g%d,%.*s%.6f,%.*sgenerated at 1.3 us%s\n", i, (int)(p - kind), kind,
                rows->c[i].measured_us, (int)(strchr(bound, ',') + 1 - bound), bound,
                i == ROBUST_N - 1 ? " then doubled" : "");
    cr_assert_eq(fclose(f), 0);
    free(text);
    snprintf(cmd, sizeof cmd,
             "calibrate --accel %s/spaces/accel/h100.xml --measured %s -o %s --fit graph_node_us "
             "--loss huber",
             kw_tl_src(), csv, out);
    kw_tl_proc r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *list = strstr(r.out, "cases the model cannot explain at the fitted figures");
    cr_assert_not_null(list, "%s", r.out);
    cr_assert(strstr(list, "): 1\n"), "%s", list);
    char want[64];
    snprintf(want, sizeof want, "robust_g%d (line %d)", ROBUST_N - 1, ROBUST_N + 1);
    cr_assert(strstr(list, want), "want '%s' in %s", want, list);
    cr_assert(!strstr(list, "robust_g0 ("), "%s", list);
    double fitted = 0.0;
    const char *gl = strstr(r.out, "\ngraph_node_us ");
    cr_assert(gl && sscanf(gl, " graph_node_us %*f %lf", &fitted) == 1, "%s", r.out);
    cr_assert(fabs(fitted - ROBUST_TRUE) < 1e-3, "%g", fitted);
    kw_tl_free(&r);
    char *written = kw_tl_slurp(out);
    cr_assert(written && strstr(written, "by knobwise calibrate --loss huber"), "%s", written);
    free(written);
    snprintf(cmd, sizeof cmd,
             "calibrate --accel %s/spaces/accel/h100.xml --measured %s -o %s --fit graph_node_us",
             kw_tl_src(), csv, out2);
    r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(!strstr(r.out, "cannot explain"), "%s", r.out);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
    free(rows);
    free(set);
}
