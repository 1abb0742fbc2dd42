/* kw_calib.c - fit the accelerator's rate parameters to measured kernel times
 * by nonlinear least squares (GSL gsl_multifit_nlinear, trust region with
 * Levenberg-Marquardt steps, finite-difference Jacobian).
 *
 * Design choice: the residual of case i is log(predicted_i / measured_i), so
 * a 10% miss weighs the same on a 10 us kernel as on a 10 ms one; the
 * parameters are fitted as their logarithms (fractions
 * through the logistic function so they stay in (0, 1)). Predictions come from kw_cost_eval through
 * kw_fidelity_predict: the fit tunes exactly the model the tuner uses.
 * Uncertainty: the covariance (J^T J)^-1 scaled by chi^2 / (n - p), the usual
 * least-squares estimate, carried to each value as sigma_v = |dv/dx| sigma_x.
 * Alternative rejected: a hand-written Gauss-Newton (STYLE: GSL for fitting).
 *
 * Priors (kw_calib_fit_prior): a maximum a posteriori fit, the prior of each
 * parameter appended to the residuals as row_width * log(v / centre) / width
 * (kw_calib.h states the rule). The prior is on log v for every parameter,
 * fractions included, so its width is relative whatever the transform the
 * fit moves the parameter by. With priors the uncertainty is the same
 * estimate over all residuals, data and prior: (J^T J)^-1 chi^2 / (n + q - p)
 * with q prior rows. Alternative rejected: a penalty on the fitted variable x
 * (logit of a fraction): its width would mean a different relative width at
 * 0.3 and at 0.9. Default widths per class (kw_calib_class_width): a sourced
 * figure [S] is a measurement carried over to this model, 10%; a derived
 * figure [D] a stated calculation on sourced ones, 25%; an unsourced
 * estimate [U] a factor e (log width 1); a fitted figure no prior.
 *
 * Robust loss (kw_calib_fit_loss; the rule in kw_calib.h): iteratively
 * reweighted least squares, each round one weighted gsl_multifit_nlinear fit
 * (winit) from where the last stopped. Alternatives rejected: a hand-written
 * robust solver (STYLE: GSL for fitting); GSL's gsl_multifit_robust (linear
 * models only); a loss in GSL's trust region itself (it has none). The
 * default stays ls: on the shipped and the second table both robust losses
 * held out fewer rows (README #15, "Robust loss").
 */
#include "kw_calib.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_permutation.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"

#define KW_CAL_MAX_ITER 200
#define KW_CAL_XTOL 1e-10
#define KW_CAL_GTOL 1e-10
#define KW_CAL_FTOL 0.0
#define KW_CAL_PROBE 1e-3      /* relative bump used to test a parameter's influence */
#define KW_CAL_INFLUENCE 1e-7  /* below this change of any log ratio: not determined */
#define KW_CAL_RCOND 1e-12     /* relative pivot of a singular J^T J */

static const char *const kw_cal_names[KW_CAL_COUNT] = {
    "matrix_fraction", "matrix_fraction_fp8", "sync_matrix_fraction", "dram_fraction", "shared_gb_s",
    "softmax_vector_ops", "softmax_hidden_serial", "softmax_hidden_overlap", "kernel_fixed_us",
    "graph_node_us", "gather_dram_fraction", "gather_fixed_us"};

/* The precisions each matrix parameter sets. */
static int kw_cal_prec_of(int id, int p)
{
    if (id == KW_CAL_MATRIX)
        return p == KW_PREC_BF16 || p == KW_PREC_FP16;
    if (id == KW_CAL_MATRIX_FP8)
        return p == KW_PREC_FP8_E4M3 || p == KW_PREC_FP8_E5M2;
    return 0;
}

/* Fractions are fitted through the logistic function (always in (0, 1),
 * smooth at the cap), the other figures through exp (always positive). */
static int kw_cal_is_fraction(int id)
{
    return id == KW_CAL_MATRIX || id == KW_CAL_MATRIX_FP8 || id == KW_CAL_SYNC_MATRIX ||
           id == KW_CAL_DRAM || id == KW_CAL_HIDDEN_SERIAL || id == KW_CAL_HIDDEN_OVERLAP ||
           id == KW_CAL_GATHER_DRAM;
}

/* Parameters whose file value may be 0 (a share hiding nothing, no fixed
 * time): the fit starts them just inside their range. */
static int kw_cal_may_be_zero(int id)
{
    return id == KW_CAL_HIDDEN_SERIAL || id == KW_CAL_HIDDEN_OVERLAP || id == KW_CAL_KERNEL_FIXED ||
           id == KW_CAL_GRAPH_NODE || id == KW_CAL_GATHER_FIXED;
}

static double kw_cal_from_x(int id, double x)
{
    return kw_cal_is_fraction(id) ? 1.0 / (1.0 + exp(-x)) : exp(x);
}

/* A fraction of exactly 1 starts just below it (the logistic never reaches 1),
 * a share of 0 just above it, a fixed time of 0 at 10 ns. */
#define KW_CAL_FRACTION_START_MAX 0.999
#define KW_CAL_FRACTION_START_MIN 0.001
#define KW_CAL_FIXED_START_US 0.01

static double kw_cal_to_x(int id, double v)
{
    if (!kw_cal_is_fraction(id))
        return log(id == KW_CAL_KERNEL_FIXED || id == KW_CAL_GRAPH_NODE || id == KW_CAL_GATHER_FIXED
                       ? fmax(v, KW_CAL_FIXED_START_US)
                       : v);
    v = fmax(fmin(v, KW_CAL_FRACTION_START_MAX), KW_CAL_FRACTION_START_MIN);
    return log(v / (1.0 - v));
}

/* dv/dx at value v, for the uncertainty. */
static double kw_cal_dvdx(int id, double v)
{
    return kw_cal_is_fraction(id) ? v * (1.0 - v) : v;
}

const char *kw_calib_param_name(int id)
{
    return id >= 0 && id < KW_CAL_COUNT ? kw_cal_names[id] : NULL;
}

int kw_calib_param_id(const char *name)
{
    for (int id = 0; id < KW_CAL_COUNT; id++)
        if (strcmp(name, kw_cal_names[id]) == 0)
            return id;
    return -1;
}

kw_level *kw_calib_shared_level(kw_accel *a)
{
    kw_level *best = NULL;
    for (int i = 0; i < a->n_levels && i < KW_LEVEL_MAX; i++) {
        kw_level *l = &a->levels[i];
        if (l->kind == KW_LEVEL_SHARED && (l->holds & KW_HOLD_OPERANDS) && (!best || l->bytes > best->bytes))
            best = l;
    }
    return best;
}

static int kw_cal_prec_used(const kw_fid_set *set, int p)
{
    for (int i = 0; i < set->n; i++)
        if ((int)set->c[i].precision == p)
            return 1;
    return 0;
}

/* One parameter's value on a (value in the file's unit). */
static double kw_calib_get(const kw_accel *a, int id, const kw_fid_set *set)
{
    switch (id) {
    case KW_CAL_MATRIX:
    case KW_CAL_MATRIX_FP8:
        for (int p = 0; p < KW_PREC_COUNT; p++)
            if (kw_cal_prec_of(id, p) && kw_cal_prec_used(set, p))
                return a->matrix_fraction[p] > 0.0 ? a->matrix_fraction[p] : 1.0;
        return 1.0;
    case KW_CAL_SYNC_MATRIX:
        return a->sync_matrix_fraction > 0.0 ? a->sync_matrix_fraction
                                             : kw_calib_get(a, KW_CAL_MATRIX, set);
    case KW_CAL_DRAM:
        return a->dram_fraction > 0.0 ? a->dram_fraction : 1.0;
    case KW_CAL_SHARED_BW: {
        kw_level *l = kw_calib_shared_level((kw_accel *)a);
        return l ? l->bw_bytes_per_s / 1e9 : 0.0;
    }
    case KW_CAL_SOFTMAX_OPS:
        return a->softmax_vector_ops;
    case KW_CAL_HIDDEN_SERIAL:
        return a->softmax_hidden_set ? a->softmax_hidden_serial : 0.0;
    case KW_CAL_HIDDEN_OVERLAP:
        return a->softmax_hidden_set ? a->softmax_hidden_overlap : 1.0;
    case KW_CAL_KERNEL_FIXED:
        return a->kernel_fixed_us;
    case KW_CAL_GRAPH_NODE:
        return a->graph_node_us;
    case KW_CAL_GATHER_DRAM: /* unset: the ordinary DRAM fraction, as kw_cost.c charges it */
        return a->gather_dram_fraction > 0.0 ? a->gather_dram_fraction
                                             : kw_calib_get(a, KW_CAL_DRAM, set);
    case KW_CAL_GATHER_FIXED:
        return a->gather_fixed_us;
    }
    return 0.0;
}

void kw_calib_set(kw_accel *a, int id, double v, const kw_fid_set *set)
{
    double f = v > 1.0 ? 1.0 : v;
    switch (id) {
    case KW_CAL_MATRIX:
    case KW_CAL_MATRIX_FP8:
        for (int p = 0; p < KW_PREC_COUNT; p++)
            if (kw_cal_prec_of(id, p) && kw_cal_prec_used(set, p))
                a->matrix_fraction[p] = f;
        break;
    case KW_CAL_SYNC_MATRIX:
        a->sync_matrix_fraction = f;
        break;
    case KW_CAL_DRAM:
        a->dram_fraction = f;
        break;
    case KW_CAL_SHARED_BW: {
        kw_level *l = kw_calib_shared_level(a);
        if (l)
            l->bw_bytes_per_s = v * 1e9;
        break;
    }
    case KW_CAL_SOFTMAX_OPS:
        a->softmax_vector_ops = v;
        break;
    case KW_CAL_HIDDEN_SERIAL:
    case KW_CAL_HIDDEN_OVERLAP:
        if (!a->softmax_hidden_set) { /* the unset defaults, made explicit */
            a->softmax_hidden_serial = 0.0;
            a->softmax_hidden_overlap = 1.0;
            a->softmax_hidden_set = 1;
        }
        if (id == KW_CAL_HIDDEN_SERIAL)
            a->softmax_hidden_serial = f;
        else
            a->softmax_hidden_overlap = f;
        break;
    case KW_CAL_KERNEL_FIXED:
        a->kernel_fixed_us = v;
        break;
    case KW_CAL_GRAPH_NODE:
        a->graph_node_us = v;
        break;
    case KW_CAL_GATHER_DRAM:
        a->gather_dram_fraction = f;
        break;
    case KW_CAL_GATHER_FIXED:
        a->gather_fixed_us = v;
        break;
    }
}

static int kw_cal_applicable(const kw_accel *a, int id)
{
    switch (id) {
    case KW_CAL_SHARED_BW: {
        kw_level *l = kw_calib_shared_level((kw_accel *)a);
        return l && l->bw_bytes_per_s > 0.0;
    }
    case KW_CAL_SOFTMAX_OPS:
        return a->vector_ops_per_s > 0.0;
    case KW_CAL_KERNEL_FIXED: /* charged only with a storage hierarchy (kw_cost.c) */
        return a->n_levels > 0;
    }
    return 1;
}

typedef struct kw_cal_ctx {
    kw_accel a;               /* scratch copy the parameters are set on */
    const kw_fid_set *set;
    int ids[KW_CAL_COUNT];    /* fitted parameter ids, x index order */
    int np;
    double pw[KW_CAL_COUNT];  /* prior width of fitted parameter j (0: none) */
    double pc[KW_CAL_COUNT];  /* log of its prior centre */
    double row_width;
    int npr;                  /* prior rows after the nr case rows */
    int rows[KW_FID_MAX];     /* case index of each residual */
    int nr;
    int failed;
} kw_cal_ctx;

/* A trial point where a figure overflows (exp(x) of a nearly flat fixed time
 * stepped far by the trust region's scaling) and a time comes out infinite or
 * not a number: that case's residual is this log ratio, worse than any real
 * one, so the trust region rejects the step and shrinks. */
#define KW_CAL_NONFINITE_RESIDUAL 1e3

static int kw_cal_residuals(kw_cal_ctx *cx, const double *x, double *r)
{
    for (int j = 0; j < cx->np; j++)
        kw_calib_set(&cx->a, cx->ids[j], kw_cal_from_x(cx->ids[j], x[j]), cx->set);
    for (int i = 0; i < cx->nr; i++) {
        const kw_fid_case *c = &cx->set->c[cx->rows[i]];
        double us;
        kw_bound b;
        if (kw_fidelity_predict(&us, &b, NULL, &cx->a, c) != 0 || us <= 0.0) {
            cx->failed = 1;
            return -1;
        }
        r[i] = isfinite(us) ? log(us / c->measured_us) : KW_CAL_NONFINITE_RESIDUAL;
    }
    return 0;
}

static int kw_cal_f(const gsl_vector *x, void *params, gsl_vector *f)
{
    kw_cal_ctx *cx = params;
    double xs[KW_CAL_COUNT], r[KW_FID_MAX];
    for (int j = 0; j < cx->np; j++)
        xs[j] = gsl_vector_get(x, (size_t)j);
    if (kw_cal_residuals(cx, xs, r) != 0)
        return GSL_EDOM;
    for (int i = 0; i < cx->nr; i++)
        gsl_vector_set(f, (size_t)i, r[i]);
    int k = cx->nr;
    for (int j = 0; j < cx->np; j++)
        if (cx->pw[j] > 0.0)
            gsl_vector_set(f, (size_t)k++,
                           cx->row_width * (log(kw_cal_from_x(cx->ids[j], xs[j])) - cx->pc[j]) /
                               cx->pw[j]);
    return GSL_SUCCESS;
}

static void kw_cal_ratios(double *ratio, const kw_accel *a, const kw_fid_set *set)
{
    for (int i = 0; i < set->n; i++) {
        double us = 0.0;
        kw_bound b;
        ratio[i] = kw_fidelity_predict(&us, &b, NULL, a, &set->c[i]) == 0
                       ? us / set->c[i].measured_us
                       : NAN;
    }
}

/* The column of J (n x np) that the other columns explain best: the last
 * pivot of a column-pivoted QR, when its R diagonal is below KW_CAL_DEP_TOL of
 * the first (the columns are then dependent to working precision: the covariance
 * GSL returns for them is a pseudo-inverse, not an uncertainty). -1 when none
 * is, or the decomposition fails. */
#define KW_CAL_DEP_TOL 1e-7
static int kw_cal_dependent(const gsl_matrix *J, int np)
{
    int dep = -1;
    gsl_matrix *qr = gsl_matrix_alloc(J->size1, J->size2);
    gsl_vector *tau = gsl_vector_alloc((size_t)np < J->size1 ? (size_t)np : J->size1);
    gsl_vector *norm = gsl_vector_alloc((size_t)np);
    gsl_permutation *perm = gsl_permutation_alloc((size_t)np);
    int sign = 0;
    if (qr && tau && norm && perm) {
        gsl_matrix_memcpy(qr, J);
        if (gsl_linalg_QRPT_decomp(qr, tau, perm, &sign, norm) == GSL_SUCCESS &&
            (size_t)np <= J->size1 &&
            fabs(gsl_matrix_get(qr, (size_t)np - 1, (size_t)np - 1)) <=
                KW_CAL_DEP_TOL * fabs(gsl_matrix_get(qr, 0, 0)))
            dep = (int)gsl_permutation_get(perm, (size_t)np - 1);
    }
    gsl_matrix_free(qr);
    gsl_vector_free(tau);
    gsl_vector_free(norm);
    gsl_permutation_free(perm);
    return dep;
}

_Static_assert(KW_CAL_COUNT <= KW_PRIOR_MAX, "kw_accel's prior arrays hold every parameter");

void kw_calib_prior_from_accel(kw_calib_prior *pr, const kw_accel *a)
{
    for (int id = 0; id < KW_CAL_COUNT; id++) {
        double w = a->prior_class[id] ? kw_calib_class_width(a->prior_class[id]) : 0.0;
        pr->width[id] = a->prior_class[id] && a->prior_width[id] > 0.0 ? a->prior_width[id]
                                                                      : (w > 0.0 ? w : 0.0);
    }
}

double kw_calib_class_width(char cls)
{
    switch (cls) {
    case 'S': return 0.10;
    case 'D': return 0.25;
    case 'U': return 1.0;
    case 'F': return 0.0;
    }
    return -1.0;
}

static const char *const kw_cal_loss_names[KW_CAL_LOSS_COUNT] = {"ls", "huber", "cauchy"};

const char *kw_calib_loss_name(int loss)
{
    return loss >= 0 && loss < KW_CAL_LOSS_COUNT ? kw_cal_loss_names[loss] : NULL;
}

int kw_calib_loss_id(const char *name)
{
    for (int l = 0; l < KW_CAL_LOSS_COUNT; l++)
        if (strcmp(name, kw_cal_loss_names[l]) == 0)
            return l;
    return -1;
}

/* Holland & Welsch (1977): 95% asymptotic efficiency on normal errors. */
double kw_calib_loss_tuning(int loss)
{
    return loss == KW_CAL_LOSS_HUBER ? 1.345 : loss == KW_CAL_LOSS_CAUCHY ? 2.385 : 0.0;
}

double kw_calib_loss_weight(int loss, double u)
{
    double c = kw_calib_loss_tuning(loss), au = fabs(u);
    if (loss == KW_CAL_LOSS_HUBER)
        return au <= c ? 1.0 : c / au;
    if (loss == KW_CAL_LOSS_CAUCHY)
        return 1.0 / (1.0 + (u / c) * (u / c));
    return 1.0;
}

/* 1.4826 median |r - median r| of r[0..n-1] (the MAD scaled to a normal
 * sigma, 1 / Phi^-1(3/4)), floored at KW_CAL_SCALE_MIN; tmp holds n. */
static double kw_cal_scale(const double *r, int n, double *tmp)
{
    memcpy(tmp, r, sizeof *tmp * (size_t)n);
    gsl_sort(tmp, 1, (size_t)n);
    double med = gsl_stats_median_from_sorted_data(tmp, 1, (size_t)n);
    for (int i = 0; i < n; i++)
        tmp[i] = fabs(r[i] - med);
    gsl_sort(tmp, 1, (size_t)n);
    return fmax(1.4826 * gsl_stats_median_from_sorted_data(tmp, 1, (size_t)n), KW_CAL_SCALE_MIN);
}

/* One weighted least-squares fit from x0 (weights wts, n residuals; NULL: all 1). */
static int kw_cal_solve(gsl_multifit_nlinear_workspace *w, gsl_multifit_nlinear_fdf *fdf,
                        double *x0, int np, const double *wts, size_t n, int *iterations)
{
    gsl_vector_view xv = gsl_vector_view_array(x0, (size_t)np);
    gsl_vector_const_view wv = gsl_vector_const_view_array(wts ? wts : x0, wts ? n : 1);
    int st = wts ? gsl_multifit_nlinear_winit(&xv.vector, &wv.vector, fdf, w)
                 : gsl_multifit_nlinear_init(&xv.vector, fdf, w);
    int info = 0;
    if (st == GSL_SUCCESS)
        st = gsl_multifit_nlinear_driver(KW_CAL_MAX_ITER, KW_CAL_XTOL, KW_CAL_GTOL, KW_CAL_FTOL, NULL,
                                         NULL, &info, w);
    *iterations += (int)gsl_multifit_nlinear_niter(w);
    return st;
}

static int kw_calib_fit_once(kw_calib *out, kw_accel *a, const kw_fid_set *set, const int *use,
                             unsigned want, int strict, const kw_calib_prior *prior, int *flat_id,
                             kw_calib_loss loss)
{
    memset(out, 0, sizeof *out);
    kw_cal_ctx *cx = malloc(sizeof *cx);
    if (!cx)
        return kw_error_set(KW_ENOMEM, "out of memory for the fit");
    memset(cx, 0, sizeof *cx);
    cx->a = *a;
    cx->set = set;
    for (int i = 0; i < set->n; i++) {
        out->used[i] = use ? use[i] != 0 : 1;
        if (out->used[i])
            cx->rows[cx->nr++] = i;
    }
    out->n_used = cx->nr;
    kw_cal_ratios(out->before_ratio, a, set);
    for (int i = 0; i < set->n; i++)
        if (out->used[i] && isfinite(out->before_ratio[i]))
            out->chi2_before += log(out->before_ratio[i]) * log(out->before_ratio[i]);

    int rc = 0;
    gsl_multifit_nlinear_workspace *w = NULL;
    gsl_matrix *covar = NULL;
    /* Which wanted parameters can the measurements determine? */
    double base[KW_FID_MAX], bumped[KW_FID_MAX];
    for (int id = 0; id < KW_CAL_COUNT; id++) {
        kw_calib_param *p = &out->p[id];
        p->name = kw_cal_names[id];
        p->before = p->after = kw_calib_get(a, id, set);
        p->applicable = kw_cal_applicable(a, id);
        if (!(want & (1u << id)))
            continue;
        if (p->applicable && cx->nr > 0 && (p->before > 0.0 || kw_cal_may_be_zero(id))) {
            double x0 = kw_cal_to_x(id, p->before);
            cx->np = 1;
            cx->ids[0] = id;
            cx->a = *a;
            if (kw_cal_residuals(cx, &x0, base) == 0) {
                double x1 = x0 + KW_CAL_PROBE;
                cx->a = *a;
                if (kw_cal_residuals(cx, &x1, bumped) == 0)
                    for (int i = 0; i < cx->nr; i++)
                        p->determined |= fabs(bumped[i] - base[i]) > KW_CAL_INFLUENCE;
                /* a fraction at 1 whose only move is down still counts as determined */
                x1 = x0 - KW_CAL_PROBE;
                cx->a = *a;
                if (!p->determined && kw_cal_residuals(cx, &x1, bumped) == 0)
                    for (int i = 0; i < cx->nr; i++)
                        p->determined |= fabs(bumped[i] - base[i]) > KW_CAL_INFLUENCE;
            }
        }
        if (strict && !p->applicable) {
            rc = kw_error_set(KW_EINPUT, "cannot fit %s: accelerator '%s' has no such figure",
                              p->name, a->name);
            goto done;
        }
        if (strict && !p->determined) {
            rc = kw_error_set(KW_EINPUT,
                              "under-determined fit: no measured case depends on %s (every case is "
                              "bound by something else); drop it from --fit or add cases it bounds",
                              p->name);
            goto done;
        }
    }
    cx->np = 0;
    cx->a = *a;
    cx->row_width = prior ? prior->row_width : 1.0;
    for (int id = 0; id < KW_CAL_COUNT; id++)
        if ((want & (1u << id)) && out->p[id].determined && out->p[id].applicable) {
            /* a relative prior needs a nonzero centre: an unset share or fixed time has none */
            double pwid = prior && out->p[id].before > 0.0 ? prior->width[id] : 0.0;
            cx->pw[cx->np] = pwid > 0.0 && isfinite(pwid) ? pwid : 0.0;
            cx->pc[cx->np] = cx->pw[cx->np] > 0.0 ? log(out->p[id].before) : 0.0;
            out->p[id].prior_width = cx->pw[cx->np];
            cx->npr += cx->pw[cx->np] > 0.0;
            cx->ids[cx->np++] = id;
        }
    if (cx->np == 0) {
        rc = kw_error_set(KW_EINPUT, "under-determined fit: no wanted parameter is determined by the "
                                     "%d measured cases", cx->nr);
        goto done;
    }
    if (cx->nr + cx->npr <= cx->np) {
        rc = kw_error_set(KW_EINPUT,
                          "under-determined fit: %d measured cases and %d priors for %d parameters "
                          "(need more cases than parameters without a prior)",
                          cx->nr, cx->npr, cx->np);
        goto done;
    }
    size_t nres = (size_t)(cx->nr + cx->npr);

    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, nres, (size_t)cx->np);
    covar = gsl_matrix_alloc((size_t)cx->np, (size_t)cx->np);
    if (!w || !covar) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for the fit");
        goto done;
    }
    gsl_multifit_nlinear_fdf fdf = {.f = kw_cal_f, .df = NULL, .fvv = NULL, .n = nres,
                                    .p = (size_t)cx->np, .params = cx};
    double x0[KW_CAL_COUNT];
    for (int j = 0; j < cx->np; j++)
        x0[j] = kw_cal_to_x(cx->ids[j], out->p[cx->ids[j]].before);
    /* wts: the case rows' weights, then the prior rows' (1); ls: one plain fit */
    double wts[KW_FID_MAX + KW_CAL_COUNT], wnew[KW_FID_MAX], r[KW_FID_MAX], tmp[KW_FID_MAX];
    for (size_t k = 0; k < nres; k++)
        wts[k] = 1.0;
    double c = kw_calib_loss_tuning(loss), s_used = 0.0;
    int st = kw_cal_solve(w, &fdf, x0, cx->np, NULL, nres, &out->iterations);
    out->rounds = 1;
    out->converged = 1;
    while (loss != KW_CAL_LOSS_LS && !cx->failed && (st == GSL_SUCCESS || st == GSL_EMAXITER)) {
        gsl_vector *xw = gsl_multifit_nlinear_position(w);
        for (int j = 0; j < cx->np; j++)
            x0[j] = gsl_vector_get(xw, (size_t)j);
        cx->a = *a;
        if (kw_cal_residuals(cx, x0, r) != 0)
            break;
        double sc = kw_cal_scale(r, cx->nr, tmp), moved = 0.0;
        for (int i = 0; i < cx->nr; i++) {
            wnew[i] = kw_calib_loss_weight(loss, r[i] / sc);
            moved = fmax(moved, fabs(wnew[i] - wts[i]));
        }
        if (out->rounds > 1 && moved < KW_CAL_IRLS_TOL)
            break;
        if (out->rounds > KW_CAL_IRLS_MAX) {
            out->converged = 0;
            break;
        }
        memcpy(wts, wnew, sizeof *wts * (size_t)cx->nr);
        s_used = sc;
        st = kw_cal_solve(w, &fdf, x0, cx->np, wts, nres, &out->iterations);
        out->rounds++;
    }
    if (cx->failed || (st != GSL_SUCCESS && st != GSL_EMAXITER)) {
        rc = kw_error_set(KW_EMODEL, "the fit failed: %s", cx->failed ? "a case could not be costed"
                                                                       : gsl_strerror(st));
        goto done;
    }
    out->loss = loss;
    out->scale = s_used;
    for (int i = 0; i < set->n; i++)
        out->weight[i] = 0.0;
    for (int i = 0; i < cx->nr; i++)
        out->weight[cx->rows[i]] = wts[i];
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    /* singular J^T J: two parameters the cases cannot tell apart */
    gsl_matrix *jtj = gsl_matrix_alloc((size_t)cx->np, (size_t)cx->np);
    if (!jtj) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for the fit");
        goto done;
    }
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, J, J, 0.0, jtj);
    double dmax = 0.0;
    for (int j = 0; j < cx->np; j++)
        dmax = fmax(dmax, gsl_matrix_get(jtj, (size_t)j, (size_t)j));
    gsl_matrix_free(jtj);
    st = gsl_multifit_nlinear_covar(J, KW_CAL_RCOND, covar);
    gsl_vector *fres = gsl_multifit_nlinear_residual(w);
    double chi2 = 0.0;
    gsl_blas_ddot(fres, fres, &chi2);
    double dof = (double)(cx->nr + cx->npr - cx->np);
    int dep = cx->np > 1 ? kw_cal_dependent(J, cx->np) : -1;
    int singular = st != GSL_SUCCESS || !(dmax > 0.0) || dep >= 0;
    for (int j = 0; j < cx->np && !singular; j++)
        singular |= !(gsl_matrix_get(covar, (size_t)j, (size_t)j) > 0.0) ||
                    !isfinite(gsl_matrix_get(covar, (size_t)j, (size_t)j));
    if (singular) {
        /* name the parameter that stopped mattering, if one did */
        const char *flat = NULL;
        for (int j = 0; j < cx->np && !flat; j++) {
            double norm = 0.0;
            for (int i = 0; i < cx->nr; i++)
                norm += gsl_matrix_get(J, (size_t)i, (size_t)j) * gsl_matrix_get(J, (size_t)i, (size_t)j);
            if (!(norm > KW_CAL_INFLUENCE * KW_CAL_INFLUENCE)) {
                flat = kw_cal_names[cx->ids[j]];
                *flat_id = cx->ids[j];
                /* where the fit left it, for kw_cal_flat_bound */
                out->p[cx->ids[j]].after = kw_cal_from_x(
                    cx->ids[j], gsl_vector_get(gsl_multifit_nlinear_position(w), (size_t)j));
            }
        }
        if (flat)
            rc = kw_error_set(KW_EINPUT,
                              "under-determined fit: at the fitted point no measured case depends "
                              "on %s any more; drop it from --fit",
                              flat);
        else {
            /* Two or more parameters move the cases alike. Column-pivoted QR
             * of J (gsl_linalg_QRPT_decomp) orders the columns so that the
             * last pivot is the one the others explain best: name it, and
             * without `strict` the caller keeps it at the file's value. */
            if (dep >= 0) {
                *flat_id = cx->ids[dep];
                rc = kw_error_set(KW_EINPUT,
                                  "under-determined fit: the measured cases cannot tell %s apart "
                                  "from the other fitted parameters; drop it from --fit",
                                  kw_cal_names[cx->ids[dep]]);
            } else
                rc = kw_error_set(KW_EINPUT, "under-determined fit: the measured cases cannot tell "
                                             "the fitted parameters apart (singular normal matrix)");
        }
        goto done;
    }
    gsl_vector *x = gsl_multifit_nlinear_position(w);
    for (int j = 0; j < cx->np; j++) {
        kw_calib_param *p = &out->p[cx->ids[j]];
        double v = kw_cal_from_x(cx->ids[j], gsl_vector_get(x, (size_t)j));
        kw_calib_set(a, cx->ids[j], v, set);
        p->after = kw_calib_get(a, cx->ids[j], set);
        p->fitted = 1;
        p->sigma = kw_cal_dvdx(cx->ids[j], v) *
                   sqrt(gsl_matrix_get(covar, (size_t)j, (size_t)j) * chi2 / dof);
        p->pull = cx->pw[j] > 0.0 ? (log(v) - cx->pc[j]) / cx->pw[j] : 0.0;
    }
    kw_cal_ratios(out->after_ratio, a, set);
    for (int i = 0; i < set->n; i++)
        if (out->used[i] && isfinite(out->after_ratio[i]))
            out->chi2_after += log(out->after_ratio[i]) * log(out->after_ratio[i]);
    for (int i = 0; i < set->n && loss != KW_CAL_LOSS_LS; i++) {
        out->outlier[i] = out->used[i] && !(fabs(log(out->after_ratio[i])) <= c * s_used);
        out->n_outliers += out->outlier[i];
    }
done:
    gsl_multifit_nlinear_free(w);
    gsl_matrix_free(covar);
    free(cx);
    return rc;
}

/* Every case's prediction on a into us; 0 when all could be costed. */
static int kw_cal_predict_all(double *us, const kw_accel *a, const kw_fid_set *set)
{
    for (int i = 0; i < set->n; i++) {
        kw_bound b;
        if (kw_fidelity_predict(&us[i], &b, NULL, a, &set->c[i]) != 0)
            return -1;
    }
    return 0;
}

int kw_calib_find_twins(int *group, const kw_accel *a, const kw_fid_set *set)
{
    double *base = malloc(sizeof(double) * KW_FID_MAX), *moved = malloc(sizeof(double) * KW_FID_MAX);
    kw_accel *w = malloc(sizeof *w);
    int *same = calloc((size_t)KW_FID_MAX * KW_FID_MAX, sizeof *same);
    int groups = 0;
    for (int i = 0; i < set->n; i++)
        group[i] = i;
    if (!base || !moved || !w || !same || kw_cal_predict_all(base, a, set) != 0)
        goto done;
    /* same[i][j]: i and j agreed at every point tried so far */
    for (int i = 0; i < set->n; i++)
        for (int j = 0; j < set->n; j++)
            same[i * KW_FID_MAX + j] = fabs(base[i] - base[j]) <= 1e-9 * fmax(base[i], base[j]);
    for (int id = 0; id < KW_CAL_COUNT; id++) {
        double v = kw_calib_get(a, id, set);
        if (!kw_cal_applicable(a, id) || (v <= 0.0 && !kw_cal_may_be_zero(id)))
            continue;
        for (int side = -1; side <= 1; side += 2) {
            *w = *a;
            kw_calib_set(w, id, kw_cal_from_x(id, kw_cal_to_x(id, v) + side * KW_CAL_TWIN_STEP), set);
            if (kw_cal_predict_all(moved, w, set) != 0)
                goto done;
            for (int i = 0; i < set->n; i++)
                for (int j = 0; j < set->n; j++)
                    same[i * KW_FID_MAX + j] &=
                        fabs(moved[i] - moved[j]) <= 1e-9 * fmax(moved[i], moved[j]);
        }
    }
    for (int i = 0; i < set->n; i++) {
        for (int j = 0; j < i; j++)
            if (same[i * KW_FID_MAX + j] && group[j] == j) {
                group[i] = j;
                break;
            }
    }
    for (int g = 0; g < set->n; g++)
        groups += kw_calib_count_twins(group, set->n, g) >= 2;
done:
    free(base);
    free(moved);
    free(w);
    free(same);
    return groups;
}

int kw_calib_count_twins(const int *group, int n, int g)
{
    int members = 0;
    if (group[g] != g)
        return 0;
    for (int i = g; i < n; i++)
        members += group[i] == g;
    return members;
}

double kw_calib_bound_error(const int *group, const kw_fid_set *set, int g, int *lo, int *hi)
{
    int l = g, h = g;
    for (int i = g; i < set->n; i++) {
        if (group[i] != g)
            continue;
        if (set->c[i].measured_us < set->c[l].measured_us)
            l = i;
        if (set->c[i].measured_us > set->c[h].measured_us)
            h = i;
    }
    if (lo)
        *lo = l;
    if (hi)
        *hi = h;
    double a = set->c[l].measured_us, b = set->c[h].measured_us;
    return (b - a) / (b + a);
}

int kw_calib_fit(kw_calib *out, kw_accel *a, const kw_fid_set *set, const int *use, unsigned want,
                 int strict)
{
    return kw_calib_fit_prior(out, a, set, use, want, strict, NULL);
}

/* A fraction or hidden share driven flat toward 1, where the least-squares
 * minimum then lies: a share of 1 hides all of the shorter term, and no
 * value between where the fit stopped and 1 changes any fitted case. *bound
 * gets 1. Figures fitted through their log (times, counts, bandwidths) have no
 * such end: one raised until nothing is bound by it has no finite figure, and
 * a time driven to 0 can leave a case with no time at all (the graph row sees
 * the node cost and the fixed time only as their sum): those keep the file's
 * figure, as before. */
static int kw_cal_flat_bound(int id, double before, double v, double *bound)
{
    if (kw_cal_is_fraction(id) && v > before && v > 0.5) {
        *bound = 1.0;
        return 1;
    }
    return 0;
}

int kw_calib_fit_prior(kw_calib *out, kw_accel *a, const kw_fid_set *set, const int *use,
                       unsigned want, int strict, const kw_calib_prior *prior)
{
    return kw_calib_fit_loss(out, a, set, use, want, strict, prior, KW_CAL_LOSS_LS);
}

int kw_calib_fit_loss(kw_calib *out, kw_accel *a, const kw_fid_set *set, const int *use,
                      unsigned want, int strict, const kw_calib_prior *prior, kw_calib_loss loss)
{
    /* Without `strict`, a parameter the fit drives to where no case depends on
     * it is set aside and the rest fitted again: a fraction or share driven to
     * 1 at 1 (kw_cal_flat_bound: the least-squares minimum lies there, and
     * resetting it to the file's figure would make the others fit a point the
     * cases moved away from), anything else (a bandwidth raised until nothing
     * is bound by it, a time driven to 0, parameters the cases cannot tell
     * apart) at the file's value. */
    kw_accel base = *a;
    double bound[KW_CAL_COUNT];
    unsigned at_bound = 0, dropped = 0;
    for (;;) {
        int flat = -1;
        kw_accel work = base;
        int rc = kw_calib_fit_once(out, &work, set, use, want, strict, prior, &flat, loss);
        if (rc == 0) {
            if (at_bound) { /* report against the file's figures, not base's */
                kw_cal_ratios(out->before_ratio, a, set);
                out->chi2_before = 0.0;
                for (int i = 0; i < set->n; i++)
                    if (out->used[i] && isfinite(out->before_ratio[i]))
                        out->chi2_before += log(out->before_ratio[i]) * log(out->before_ratio[i]);
                for (int id = 0; id < KW_CAL_COUNT; id++) {
                    out->p[id].before = kw_calib_get(a, id, set);
                    if (at_bound & (1u << id)) {
                        out->p[id].after = bound[id];
                        out->p[id].fitted = out->p[id].at_bound = 1;
                        out->p[id].sigma = 0.0;
                    }
                }
            }
            for (int id = 0; id < KW_CAL_COUNT; id++) /* fitted once, so determined then */
                out->p[id].determined |= (dropped >> id) & 1u;
            *a = work;
            return 0;
        }
        if (strict || flat < 0)
            return rc;
        want &= ~(1u << flat);
        dropped |= 1u << flat;
        if (!(at_bound & (1u << flat)) &&
            kw_cal_flat_bound(flat, out->p[flat].before, out->p[flat].after, &bound[flat])) {
            kw_calib_set(&base, flat, bound[flat], set);
            at_bound |= 1u << flat;
        }
        kw_error_clear();
    }
}
