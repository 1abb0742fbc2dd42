/* fidelity.c - `make bench`'s fidelity table: every published H100
 * case of spaces/measured/h100_published.csv, its measured time, the model's
 * prediction on spaces/accel/h100.xml, their ratio and both bound classes.
 * Prints the share within 25% and whether every bound class is right; rows
 * marked FIT gave a figure of the accelerator file and are counted apart.
 * Usage: fidelity ACCEL.xml MEASURED.csv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_calib.h"
#include "kw_error.h"
#include "kw_fidelity.h"
#include "kw_load.h"

#define KW_FID_TOL 0.25
/* the citation column: the source's first clause, cut to this many characters */
#define KW_FID_CITE_CHARS 58
#define KW_FID_HELD_TOL 0.10

/* Held-out calibration, by cross-validation: every case is held out exactly
 * once; fold f calibrates (all parameters, kw_calib_fit) on the cases whose
 * fold is not f and judges the cases whose fold is f. Two assignments:
 *   - stratified k-fold: strata by kind (gemm, prefill attention, decode),
 *     fp8 or not, and the measured bound class; inside a stratum the cases in
 *     order of measured time, case r of it to fold r mod k. Not the CSV's row
 *     order (which follows each source's own table: the old even/odd split put
 *     every DeepGEMM K = 7168 narrow-tile row on one side), and each fold
 *     sees every stratum that has k cases or more.
 *   - leave one source out: the fold is the source's identity
 *     (kw_fidelity_source_key: the arXiv id, or owner/repo of a repository
 *     citation, else the citation's first clause);
 *     a parameter no remaining case depends on stays at the shipped value. */
#define KW_FID_FOLDS 5
#define KW_FID_SRC_MAX 16

static int kw_fid_stratum(const kw_fid_case *c)
{
    int fp8 = c->precision == KW_PREC_FP8_E4M3 || c->precision == KW_PREC_FP8_E5M2;
    return ((int)c->kind * 2 + fp8) * 2 + (c->bound == KW_BOUND_MEMORY);
}

static void kw_fid_folds_stratified(int *fold, const kw_fid_set *set, int k)
{
    for (int i = 0; i < set->n; i++) {
        int rank = 0, si = kw_fid_stratum(&set->c[i]);
        for (int j = 0; j < set->n; j++) {
            const kw_fid_case *o = &set->c[j];
            if (j != i && kw_fid_stratum(o) == si &&
                (o->measured_us < set->c[i].measured_us ||
                 (o->measured_us == set->c[i].measured_us && j < i)))
                rank++;
        }
        fold[i] = rank % k;
    }
}

/* returns the number of sources; names[f] fold f's source key */
static int kw_fid_folds_by_source(int *fold, char names[][KW_FID_KEY_MAX], const kw_fid_set *set)
{
    int n = 0;
    for (int i = 0; i < set->n; i++) {
        const char *w = set->c[i].source_key;
        int f = 0;
        while (f < n && strcmp(names[f], w) != 0)
            f++;
        if (f == n && n < KW_FID_SRC_MAX)
            snprintf(names[n++], KW_FID_KEY_MAX, "%s", w);
        fold[i] = f < n ? f : n - 1;
    }
    return n;
}

/* What a held-out miss rests on: the fold's fitted parameters its prediction
 * depends on (a 1% move of the value, down for a fraction at 1, changes it),
 * each as file -> fold; into buf. A miss whose parameters sit near the file's
 * figures is the model's (its rules cannot meet the case at any figures the
 * other cases allow); one whose parameters moved far is the fold's fit. */
#define KW_FID_DEPS_CHARS 320
static void kw_fid_depends(char *buf, size_t cap, const kw_accel *fitted, const kw_calib *cal,
                           const kw_fid_set *set, int i)
{
    double us0 = 0.0;
    kw_bound b;
    size_t len = 0;
    buf[0] = '\0';
    if (kw_fidelity_predict(&us0, &b, NULL, fitted, &set->c[i]) != 0 || !(us0 > 0.0))
        return;
    kw_accel *w = malloc(sizeof *w);
    if (!w)
        return;
    for (int id = 0; id < KW_CAL_COUNT && len + 1 < cap; id++) {
        const kw_calib_param *p = &cal->p[id];
        double us1 = 0.0;
        if (!p->fitted)
            continue;
        *w = *fitted;
        kw_calib_set(w, id, p->after * (p->after >= 0.99 && p->after <= 1.0 ? 0.99 : 1.01), set);
        if (kw_fidelity_predict(&us1, &b, NULL, w, &set->c[i]) != 0 ||
            !(fabs(us1 / us0 - 1.0) > 1e-6))
            continue;
        int k = snprintf(buf + len, cap - len, " %s %.4g->%.4g", p->name, p->before, p->after);
        len = k > 0 && (size_t)k < cap - len ? len + (size_t)k : cap - 1;
    }
    free(w);
}

/* The fold's cases the robust loss down-weighted (kw_calib.h: |log error| >
 * c s), each with its weight: the rows this fold's fit could not explain. */
static void kw_fid_outliers(const kw_calib *cal, const kw_fid_set *set)
{
    int k = 0;
    for (int i = 0; i < set->n; i++)
        if (cal->outlier[i])
            printf("%s %s %.3f (w %.2f)", k++ ? "," : "    down-weighted (ratio, weight):",
                   set->c[i].name, cal->after_ratio[i], cal->weight[i]);
    if (k)
        printf("; scale %.4f\n", cal->scale);
}

/* Cross-validation by loss; quiet: the summary line alone. Returns the
 * held-out rows within 10%. */
static int kw_fid_cv(const kw_accel *a, const kw_fid_set *set, const int *fold, int nfold,
                     char names[][KW_FID_KEY_MAX], const char *label, const kw_calib_prior *prior,
                     kw_calib_loss loss, int quiet)
{
    double after[KW_FID_MAX], before[KW_FID_MAX];
    int done[KW_FID_MAX] = {0};
    kw_calib *cal = malloc(sizeof *cal);
    char(*deps)[KW_FID_DEPS_CHARS] = malloc(sizeof(*deps) * KW_FID_MAX);
    if (!cal || !deps) {
        free(cal);
        free(deps);
        return 0;
    }
    if (!quiet)
        printf("\n%s (loss %s): calibrate on all folds but one, judge the held-out fold\n", label,
               kw_calib_loss_name(loss));
    for (int f = 0; f < nfold; f++) {
        int use[KW_FID_MAX] = {0}, held = 0;
        for (int i = 0; i < set->n; i++) {
            use[i] = fold[i] >= 0 && fold[i] != f; /* fold -1: neither fitted nor judged */
            held += fold[i] == f;
        }
        if (held == 0)
            continue;
        kw_accel fitted = *a;
        char what[KW_FID_KEY_MAX + 16];
        if (names)
            snprintf(what, sizeof what, "%.26s", names[f]); /* the column's width */
        else
            snprintf(what, sizeof what, "fold %d", f + 1);
        if (kw_calib_fit_loss(cal, &fitted, set, use, (1u << KW_CAL_COUNT) - 1u, 0, prior, loss) !=
            0) {
            printf("  %-26s held out %2d: calibrate failed: %s\n", what, held, kw_error_last());
            continue;
        }
        for (int i = 0; i < set->n; i++)
            if (fold[i] == f) {
                after[i] = cal->after_ratio[i];
                before[i] = cal->before_ratio[i];
                done[i] = 1;
                if (!quiet)
                    kw_fid_depends(deps[i], KW_FID_DEPS_CHARS, &fitted, cal, set, i);
            }
        if (quiet)
            continue;
        printf("  %-26s held out %2d, fitted on %2d:", what, held, cal->n_used);
        for (int id = 0; id < KW_CAL_COUNT; id++)
            if (cal->p[id].fitted)
                printf(" %s %.4g", cal->p[id].name, cal->p[id].after);
        printf("\n");
        kw_fid_outliers(cal, set);
        /* the parameters this fold did not fit to a point: driven to 1 and
         * kept there, set aside at the file's figure (the fit drove them to
         * where no case depends on them, or the cases cannot tell them from
         * the others), or no case it fits depends on them (kw_calib_fit) */
        int kept = 0;
        for (int id = 0; id < KW_CAL_COUNT; id++)
            if (cal->p[id].applicable && (!cal->p[id].fitted || cal->p[id].at_bound))
                printf("%s %s (%s)", kept++ ? "," : "    not fitted to a point:", cal->p[id].name,
                       cal->p[id].at_bound     ? "driven to 1, kept there"
                       : cal->p[id].determined ? "set aside: flat, or not told apart; file's figure"
                                               : "no fitted case depends on it, file's figure");
        if (kept)
            printf("\n");
    }
    int n = 0, in10 = 0, nind = 0, in10ind = 0;
    for (int i = 0; i < set->n; i++) {
        if (!done[i])
            continue;
        int ok = fabs(after[i] - 1.0) <= KW_FID_HELD_TOL;
        n++;
        in10 += ok;
        if (!set->c[i].fit) {
            nind++;
            in10ind += ok;
        }
        if (quiet)
            continue;
        if (!ok || getenv("KW_FID_VERBOSE"))
            printf("  %-26s before %7.3f after %7.3f %s%s\n", set->c[i].name, before[i], after[i],
                   ok ? "" : "MISS", set->c[i].fit ? " (FIT row)" : "");
        if (!ok)
            printf("    rests on (file->fold):%s\n", deps[i][0] ? deps[i] : " no fitted parameter");
    }
    printf("%s%s (loss %s): held-out within 10%% %d of %d (independent rows %d of %d)\n",
           quiet ? "  " : "", label, kw_calib_loss_name(loss), in10, n, in10ind, nind);
    free(cal);
    free(deps);
    return in10;
}

/* Rows the model cannot tell apart (kw_calib_find_twins) and the least worst
 * error one prediction leaves them (kw_calib_bound_error): a group over the
 * held-out target holds a row no calibration brings within it, whatever the
 * folds, so the held-out counts below can reach at most the rows less one per
 * such group. */
static void kw_fid_twins(const kw_accel *a, const kw_fid_set *set)
{
    int group[KW_FID_MAX], over = 0;
    int ng = kw_calib_find_twins(group, a, set);
    printf("\nrows the model cannot tell apart: %d groups; least worst error of one prediction for "
           "all\n", ng);
    for (int g = 0; g < set->n; g++) {
        int lo, hi;
        if (kw_calib_count_twins(group, set->n, g) < 2)
            continue;
        double e = kw_calib_bound_error(group, set, g, &lo, &hi);
        int bad = e > KW_FID_HELD_TOL;
        over += bad;
        printf("  %-26s %8.1f us .. %-30s %8.1f us: %5.1f%%%s\n", set->c[lo].name,
               set->c[lo].measured_us, set->c[hi].name, set->c[hi].measured_us, 100.0 * e,
               bad ? "  CONTRADICTION: no fit puts both within 10%" : "");
    }
    printf("groups over the 10%% held-out target: %d (held-out within 10%% at most %d of %d)\n", over,
           set->n - over, set->n);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fidelity ACCEL.xml MEASURED.csv\n");
        return 2;
    }
    kw_accel a;
    kw_fid_set *set = malloc(sizeof *set);
    if (!set)
        return 1;
    if (kw_load_accel(&a, argv[1]) != 0 || kw_fidelity_load(set, argv[2]) != 0) {
        fprintf(stderr, "%s\n", kw_error_last());
        free(set);
        return 2;
    }
    printf("fidelity: %s against %s\n", argv[1], argv[2]);
    printf("%-26s %12s %12s %7s %-8s %-8s %-9s %s\n", "case", "measured_us", "predicted_us", "ratio",
           "bound", "model", "note", "source");
    int n = 0, within = 0, bound_ok = 0, nfit = 0;
    for (int i = 0; i < set->n; i++) {
        const kw_fid_case *c = &set->c[i];
        double us = 0.0;
        kw_bound b = KW_BOUND_COMPUTE;
        kw_kernel kd;
        if (kw_fidelity_predict(&us, &b, &kd, &a, c) != 0) {
            printf("%-26s %12.1f %12s %7s %-8s %-8s %s\n", c->name, c->measured_us, "-", "-",
                   kw_cost_bound_name(c->bound), "error", kw_error_last());
            n++;
            continue;
        }
        double r = us / c->measured_us;
        int ok = fabs(r - 1.0) <= KW_FID_TOL;
        char note[16];
        snprintf(note, sizeof note, "%s%s", ok ? "" : "MISS ", c->fit ? "FIT" : "");
        printf("%-26s %12.1f %12.1f %7.3f %-8s %-8s %-9s %.*s\n", c->name, c->measured_us, us, r,
               kw_cost_bound_name(c->bound), kw_cost_bound_name(b), note,
               (int)fmin((double)strcspn(c->source, ";"), KW_FID_CITE_CHARS), c->source);
        if (getenv("KW_FID_VERBOSE"))
            printf("    matrix %.1f nonmatrix %.1f compute %.1f | dram %.1f us (%.6g GB) shared %.1f us "
                   "(%.6g GB) | sram %llu B regs %llu B wave %.3f pad %.3f\n",
                   kd.matrix_us, kd.nonmatrix_us, kd.compute_us, kd.dram_us, kd.dram_bytes / 1e9,
                   kd.shared_us, kd.shared_bytes / 1e9, (unsigned long long)kd.sram_bytes,
                   (unsigned long long)kd.reg_bytes, kd.wave_efficiency, kd.pad_efficiency);
        if (c->fit) {
            nfit++;
            continue;
        }
        n++;
        within += ok;
        bound_ok += b == c->bound;
    }
    printf("independent cases %d (+%d FIT): within 25%% %d (%.0f%%), bound class right %d of %d\n", n,
           nfit, within, n ? 100.0 * within / n : 0.0, bound_ok, n);
    kw_fid_twins(&a, set);
    int fold[KW_FID_MAX];
    char names[KW_FID_SRC_MAX][KW_FID_KEY_MAX];
    const kw_calib_loss dl = KW_CAL_LOSS_DEFAULT; /* calibrate's default --loss */
    kw_fid_folds_stratified(fold, set, KW_FID_FOLDS);
    kw_fid_cv(&a, set, fold, KW_FID_FOLDS, NULL, "stratified 5-fold cross-validation", NULL, dl, 0);
    int ns = kw_fid_folds_by_source(fold, names, set);
    kw_fid_cv(&a, set, fold, ns, names, "leave one source out", NULL, dl, 0);
    /* the same two by every loss (calibrate --loss; how the default was chosen: kw_calib.h) */
    printf("\nby each loss (calibrate --loss):\n");
    for (int l = 0; l < KW_CAL_LOSS_COUNT; l++) {
        kw_fid_folds_stratified(fold, set, KW_FID_FOLDS);
        kw_fid_cv(&a, set, fold, KW_FID_FOLDS, NULL, "stratified 5-fold", NULL, (kw_calib_loss)l, 1);
        kw_fid_folds_by_source(fold, names, set);
        kw_fid_cv(&a, set, fold, ns, names, "leave one source out", NULL, (kw_calib_loss)l, 1);
    }
    /* the same two by the maximum a posteriori fit with the file's priors
     * (calibrate --prior file): a figure of class F, fitted to rows of this
     * CSV, has none, so no held-out row reaches a fold through a prior */
    kw_calib_prior prior = {.row_width = KW_CAL_ROW_WIDTH};
    kw_calib_prior_from_accel(&prior, &a);
    printf("\npriors (calibrate --prior file):");
    for (int id = 0; id < KW_CAL_COUNT; id++)
        if (prior.width[id] > 0.0)
            printf(" %s %.3g", kw_calib_param_name(id), prior.width[id]);
    printf("; a case weighs %.3g\n", prior.row_width);
    kw_fid_folds_stratified(fold, set, KW_FID_FOLDS);
    kw_fid_cv(&a, set, fold, KW_FID_FOLDS, NULL, "stratified 5-fold, MAP with the file's priors",
              &prior, dl, 0);
    kw_fid_cv(&a, set, fold, kw_fid_folds_by_source(fold, names, set), names,
              "leave one source out, MAP with the file's priors", &prior, dl, 0);
    /* the same two without the decode rows (their achieved DRAM rate, 1.8-1.9
     * TB/s, pulls the one DRAM fraction below what DeepGEMM's TMA streams reach) */
    kw_fid_set *pre = malloc(sizeof *pre);
    if (pre) {
        pre->n = 0;
        for (int i = 0; i < set->n; i++)
            if (set->c[i].kind != KW_FID_DECODE)
                pre->c[pre->n++] = set->c[i];
        kw_fid_folds_stratified(fold, pre, KW_FID_FOLDS);
        kw_fid_cv(&a, pre, fold, KW_FID_FOLDS, NULL, "stratified 5-fold, without the decode rows",
                  NULL, dl, 0);
        ns = kw_fid_folds_by_source(fold, names, pre);
        kw_fid_cv(&a, pre, fold, ns, names, "leave one source out, without the decode rows", NULL,
                  dl, 0);
        free(pre);
    }
    free(set);
    return 0;
}
