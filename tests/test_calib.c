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

#include "kw_calib.h"
#include "kw_error.h"
#include "kw_load.h"
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

Test(calib, recovers_known_parameters_from_times_generated_with_them)
{
    load_shipped();
    kw_accel truth = acc;
    kw_calib_set(&truth, KW_CAL_MATRIX, 0.71, set);
    kw_calib_set(&truth, KW_CAL_SYNC_MATRIX, 0.58, set);
    kw_calib_set(&truth, KW_CAL_SOFTMAX_OPS, 7.5, set);
    for (int i = 0; i < set->n; i++) {
        double us;
        kw_bound b;
        cr_assert_eq(kw_fidelity_predict(&us, &b, NULL, &truth, &set->c[i]), 0);
        set->c[i].measured_us = us;
    }
    kw_calib cal;
    kw_accel start = acc; /* 0.806, 0.667, 11: the shipped values */
    cr_assert_eq(kw_calib_fit(&cal, &start, set, NULL, WANT3, 1), 0, "%s", kw_error_last());
    cr_assert(fabs(cal.p[KW_CAL_MATRIX].after - 0.71) < 1e-5, "%g", cal.p[KW_CAL_MATRIX].after);
    cr_assert(fabs(cal.p[KW_CAL_SYNC_MATRIX].after - 0.58) < 1e-5, "%g",
              cal.p[KW_CAL_SYNC_MATRIX].after);
    cr_assert(fabs(cal.p[KW_CAL_SOFTMAX_OPS].after - 7.5) < 1e-3, "%g",
              cal.p[KW_CAL_SOFTMAX_OPS].after);
    cr_assert(cal.chi2_after < 1e-12, "%g", cal.chi2_after);
    for (int i = 0; i < set->n; i++)
        cr_assert(fabs(cal.after_ratio[i] - 1.0) < 1e-5);
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

/* h100.xml's gather DRAM fraction is the one `calibrate` fits to its FIT
 * rows (the FIT decode rows: the two long-context FA3 paged decode rows, whose
 * sources say "FIT: h100.xml gather_dram_fraction"), from the unset start, all else as shipped:
 * the file's figure agrees with that fit to its 1-sigma, and the fit leaves
 * those rows within 1% (two rows, one parameter: the rate, not a fudge per row). */
Test(calib, shipped_gather_fraction_is_the_fit_of_its_fit_rows)
{
    load_shipped();
    int use[KW_FID_MAX], n = 0;
    for (int i = 0; i < set->n; i++) {
        use[i] = set->c[i].fit && set->c[i].kind == KW_FID_DECODE;
        n += use[i];
    }
    cr_assert_eq(n, 2);
    kw_accel start = acc;
    start.gather_dram_fraction = 0.0;
    kw_calib cal;
    cr_assert_eq(kw_calib_fit(&cal, &start, set, use, 1u << KW_CAL_GATHER_DRAM, 1), 0, "%s",
                 kw_error_last());
    double fit = cal.p[KW_CAL_GATHER_DRAM].after, sd = cal.p[KW_CAL_GATHER_DRAM].sigma;
    cr_assert(acc.gather_dram_fraction > 0.0);
    cr_assert(sd > 0.0 && isfinite(sd), "%g", sd);
    cr_assert(fabs(acc.gather_dram_fraction - fit) <= sd, "file %g, fit %g +- %g",
              acc.gather_dram_fraction, fit, sd);
    for (int i = 0; i < set->n; i++)
        if (use[i])
            cr_assert(fabs(cal.after_ratio[i] - 1.0) < 0.01, "%s: %g", set->c[i].name,
                      cal.after_ratio[i]);
    free(set);
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
    for (int i = 0; i < set->n; i++) {
        double us;
        kw_bound b;
        cr_assert_eq(kw_fidelity_predict(&us, &b, NULL, &truth, &set->c[i]), 0);
        set->c[i].measured_us = us;
    }
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

/* Graph-node rows alone see the node cost and the fixed time only as their
 * sum: the two columns of J are equal. Strict: refused, naming one of them;
 * not strict: that one is kept at the file's value and the other fitted, to
 * the least-squares sum (the mean log of the measured times). */
Test(calib, parameters_the_cases_cannot_tell_apart_are_named_and_kept)
{
    load_shipped();
    int g = -1;
    for (int i = 0; i < set->n && g < 0; i++)
        if (set->c[i].kind == KW_FID_GRAPH_NODE)
            g = i;
    cr_assert_geq(g, 0);
    kw_fid_set *three = malloc(sizeof *three);
    three->n = 3;
    static const double us[3] = {1.2, 1.3, 1.4};
    for (int i = 0; i < 3; i++) {
        three->c[i] = set->c[g];
        three->c[i].measured_us = us[i];
    }
    unsigned want = (1u << KW_CAL_GRAPH_NODE) | (1u << KW_CAL_KERNEL_FIXED);
    kw_calib cal;
    kw_accel a = acc;
    a.kernel_fixed_us = 0.2;
    cr_assert_eq(kw_calib_fit(&cal, &a, three, NULL, want, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "cannot tell"), "%s", kw_error_last());
    cr_assert(strstr(kw_error_last(), "graph_node_us") || strstr(kw_error_last(), "kernel_fixed_us"),
              "%s", kw_error_last());
    a = acc;
    a.kernel_fixed_us = 0.2;
    cr_assert_eq(kw_calib_fit(&cal, &a, three, NULL, want, 0), 0, "%s", kw_error_last());
    cr_assert_eq(cal.p[KW_CAL_GRAPH_NODE].fitted + cal.p[KW_CAL_KERNEL_FIXED].fitted, 1);
    double want_sum = exp((log(1.2) + log(1.3) + log(1.4)) / 3.0);
    cr_assert(fabs(a.graph_node_us + a.kernel_fixed_us - want_sum) < 1e-6, "%g + %g",
              a.graph_node_us, a.kernel_fixed_us);
    free(three);
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
    cr_assert(strstr(r.err, "refusing"), "%s", r.err);
    char *kept = kw_tl_slurp(out);
    cr_assert_str_eq(kept, "keep me\n");
    free(kept);
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
    cr_assert(strstr(r.out, "shared_gb_s") && !strstr(r.out, "shared_gb_s  (not determined"), "%s",
              r.out);
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
