/* kw_calib.h - fit an accelerator's rate parameters to measured kernel times
 * (`knobwise calibrate`): nonlinear least squares on the relative
 * error log(predicted / measured) of each case, GSL's gsl_multifit_nlinear.
 *
 * Parameters (KW_CAL_*): the achievable matrix fraction of bf16/fp16 and of fp8, the synchronous-MMA fraction, the achieved DRAM fraction, the
 * shared level's bandwidth, the vector instructions per attention score, the
 * softmax share each attention schedule hides under its matrix work, and the
 * device-side fixed time of a kernel (grid dispatch, prologue, first fill, drain),
 * and the per-kernel cost inside a CUDA graph (graph_node_us, the fixed time
 * inside it: kw_cost_graph_node_us), which only graph_node cases and calls
 * replayed in a graph (graph_nodes > 0) depend on; and the DRAM fraction and fixed time of a decode
 * kernel that gathers a paged K/V cache (gather_dram_fraction, gather_fixed_us),
 * which only decode cases with such a page size depend on. The eager launch and the graph replay's fixed
 * cost are not fitted: no case kind measures them (kernel times back to back
 * do not depend on them).
 *
 * Priors (kw_calib_fit_prior, a maximum a posteriori fit): each parameter may
 * carry a prior centred on the accelerator file's figure, a Gaussian in the
 * log of the value with a relative width set by how the file sources that
 * figure (kw_calib_class_width: [S] sourced 0.10, [D] derived 0.25, [U]
 * unsourced 1.0, fitted: none), overridable per parameter. The prior enters
 * the least squares as one pseudo-residual per parameter,
 * row_width * log(v / centre) / width, beside the cases' log(predicted /
 * measured), each case weighing as a log error of row_width: so the fit
 * minimises sum_i (r_i / row_width)^2 + sum_j (log(v_j / c_j) / w_j)^2.
 * A prior makes no fit singular, so the refusal does not rest on it: a
 * parameter no fitted case depends on is still refused (strict) or kept
 * (not strict), prior or not; a prior stands in for missing cases only in
 * the count of residuals against parameters.
 *
 * Loss (kw_calib_fit_loss, `calibrate --loss`): plain least squares (ls), or
 * a robust M-estimate by iteratively reweighted least squares around the same
 * GSL fit (gsl_multifit_nlinear_winit weights), so that a case the model
 * cannot explain does not pull every other figure toward it. Round k fits
 * with weights w_i, then from the residuals r_i = log(predicted / measured)
 * sets the scale s = 1.4826 median |r_i - median r| (the MAD, a normal
 * sigma), floored at KW_CAL_SCALE_MIN, and the weights for u = r_i / s:
 *   huber  (c 1.345): w = 1 for |u| <= c, c / |u| beyond;
 *   cauchy (c 2.385): w = 1 / (1 + (u / c)^2);
 * the constants of Holland & Welsch (1977), 95% efficiency on normal errors
 * (also GSL gsl_multifit_robust's and MATLAB robustfit's defaults). Until
 * no weight moves by KW_CAL_IRLS_TOL, at most KW_CAL_IRLS_MAX rounds.
 * Prior rows keep weight 1 (they are not measurements). A case is
 * down-weighted (reported: calibrate's "cases the model cannot explain")
 * when |r_i| > c s: huber's weight is below 1 there, cauchy's below 1/2.
 * Uncertainty with weights: (J^T W J)^-1 sum_i w_i r_i^2 / (n + q - p) at
 * the final weights, the weights held fixed (the weighted least-squares
 * estimate; it does not count the uncertainty of the weights themselves). */
#ifndef KW_CALIB_H
#define KW_CALIB_H

#include "kw_fidelity.h"

enum {
    KW_CAL_MATRIX,           /* bf16 and fp16 (one tensor-core path) */
    KW_CAL_MATRIX_FP8,       /* fp8_e4m3 and fp8_e5m2 */
    KW_CAL_SYNC_MATRIX,
    KW_CAL_DRAM,
    KW_CAL_SHARED_BW,
    KW_CAL_SOFTMAX_OPS,
    KW_CAL_HIDDEN_SERIAL,    /* softmax share a serial schedule hides under matrix work */
    KW_CAL_HIDDEN_OVERLAP,   /* the same for the overlapped (ping-pong) schedule */
    KW_CAL_KERNEL_FIXED,     /* device-side fixed time per kernel, us */
    KW_CAL_GRAPH_NODE,       /* launch cost of a kernel inside a CUDA graph, us (graph_node rows) */
    KW_CAL_GATHER_DRAM,      /* DRAM fraction of a decode kernel gathering paged K/V */
    KW_CAL_GATHER_FIXED,     /* fixed time of such a kernel, us */
    KW_CAL_COUNT
};

typedef struct kw_calib_param {
    const char *name;        /* as --fit names it */
    int applicable;          /* the accelerator has the figure */
    int determined;          /* some case's time depends on it */
    int fitted;
    int at_bound;            /* fitted, and at the end of its range the fit drove it to (no sigma) */
    double before, after, sigma; /* value in the file's unit; sigma: 1-sigma uncertainty */
    double prior_width;      /* relative width of its prior (log of the value); 0: no prior */
    double pull;             /* log(after / before) / prior_width: prior widths moved (0 without) */
} kw_calib_param;

typedef struct kw_calib {
    kw_calib_param p[KW_CAL_COUNT];
    int n_used;              /* cases fitted */
    double before_ratio[KW_FID_MAX], after_ratio[KW_FID_MAX]; /* predicted / measured per case */
    int used[KW_FID_MAX];
    double chi2_before, chi2_after; /* sum of squared log ratios over the fitted cases */
    int iterations;          /* GSL iterations, all rounds together */
    int loss;                /* kw_calib_loss the fit used */
    int rounds;              /* reweighting rounds (ls: 1) */
    int converged;           /* the weights settled before KW_CAL_IRLS_MAX (ls: 1) */
    double scale;            /* robust: the scale s of the final weights (ls: 0) */
    double weight[KW_FID_MAX]; /* the final fit's weight of each fitted case (ls: 1) */
    int outlier[KW_FID_MAX]; /* robust: fitted and |log ratio| > c s */
    int n_outliers;
} kw_calib;

typedef enum kw_calib_loss {
    KW_CAL_LOSS_LS,
    KW_CAL_LOSS_HUBER,
    KW_CAL_LOSS_CAUCHY,
    KW_CAL_LOSS_COUNT
} kw_calib_loss;
/* calibrate's default loss (and the fidelity bench's headline figures) */
#define KW_CAL_LOSS_DEFAULT KW_CAL_LOSS_LS
#define KW_CAL_SCALE_MIN 1e-3 /* 0.1%: under the rounding of a 3-digit published time */
#define KW_CAL_IRLS_TOL 1e-6
#define KW_CAL_IRLS_MAX 50

/* "ls", "huber", "cauchy"; NULL for another value. */
const char *kw_calib_loss_name(int loss);
/* The loss called name, or -1. */
int kw_calib_loss_id(const char *name);
/* The tuning constant c of a robust loss (0 for ls). */
double kw_calib_loss_tuning(int loss);
/* The weight of a residual of u scale units under loss (1 for ls). */
double kw_calib_loss_weight(int loss, double u);

/* Name of parameter id ("matrix_fraction", ...), or NULL. */
const char *kw_calib_param_name(int id);
/* Id of the parameter called name, or -1. */
int kw_calib_param_id(const char *name);

/* Fit the parameters in `want` (bit set of 1 << KW_CAL_*) of *a to the cases
 * of set with use[i] != 0 (use NULL: all). On success *a holds the fitted
 * values. Refuses (KW_EINPUT, message names the reason) an under-determined
 * fit: a wanted parameter the accelerator lacks or no case depends on
 * (`strict`), none left to fit, fewer cases than parameters, or a singular
 * fit. Without `strict` undetermined parameters are left as they are, and one
 * the fit drives to where no case depends on it is set aside and the rest
 * refitted: a fraction or share driven toward 1 at 1 (p[].at_bound; the
 * least-squares minimum lies there), anything else at the file's figure. */
int kw_calib_fit(kw_calib *out, kw_accel *a, const kw_fid_set *set, const int *use, unsigned want,
                 int strict);

/* The prior of a maximum a posteriori fit (see the top of this file). */
typedef struct kw_calib_prior {
    double width[KW_CAL_COUNT]; /* relative width, sigma of log(value / file figure); 0: none */
    double row_width;           /* sigma of one case's log(predicted / measured); > 0 */
} kw_calib_prior;

/* Default relative width of a figure of class cls: 'S' sourced, 'D' derived
 * from sourced figures, 'U' unsourced estimate, 'F' fitted to measurements
 * (0: no prior: the measurements it came from are counted where they are
 * given, not twice). -1 for an unknown class. */
double kw_calib_class_width(char cls);
#define KW_CAL_ROW_WIDTH 0.10 /* default row_width */

/* The widths the accelerator states (<rates><prior>): its width, else its
 * class's default; 0 (no prior) where none is stated or the class is F. The
 * row width is left as it is. */
void kw_calib_prior_from_accel(kw_calib_prior *pr, const kw_accel *a);

/* kw_calib_fit with priors (prior NULL: kw_calib_fit). A parameter whose file
 * value is 0 (an unset share or fixed time) has no relative prior: its width
 * is ignored. Refusals as kw_calib_fit, except that a parameter with a prior
 * counts as one residual when cases are counted against parameters. */
int kw_calib_fit_prior(kw_calib *out, kw_accel *a, const kw_fid_set *set, const int *use,
                       unsigned want, int strict, const kw_calib_prior *prior);

/* kw_calib_fit_prior by the given loss (KW_CAL_LOSS_LS: the same fit). */
int kw_calib_fit_loss(kw_calib *out, kw_accel *a, const kw_fid_set *set, const int *use,
                      unsigned want, int strict, const kw_calib_prior *prior, kw_calib_loss loss);

/* Cases the model cannot tell apart, and what that costs any fit. Two cases
 * are twins when their predictions agree (relative 1e-9) at a's figures and
 * with each parameter calibrate may fit on a moved in turn, one step of
 * KW_CAL_TWIN_STEP either way in the fit's coordinate (logit of a fraction,
 * log of anything else): a fit cannot separate them, so one prediction p
 * serves them all. group[i] (set->n entries) is the index of the first case
 * of i's group (i itself when it has no twin). Returns the number of groups
 * of two or more cases. */
#define KW_CAL_TWIN_STEP 0.3
int kw_calib_find_twins(int *group, const kw_accel *a, const kw_fid_set *set);

/* The cases in g's group when g is its first case (group[g] == g), else 0
 * (a group is reported once, at its first case). */
int kw_calib_count_twins(const int *group, int n, int g);

/* The least worst relative error |p / measured - 1| that one prediction p
 * can give every case of group g (kw_calib_find_twins): with the group's
 * fastest and slowest measured times lo < hi, p = 2 lo hi / (lo + hi) makes
 * the two errors equal, (hi - lo) / (hi + lo), and any other p makes one of
 * them larger. A group whose figure exceeds a target tolerance holds at least
 * one case no calibration can bring within it: a disagreement of the data,
 * not of the fit. *lo, *hi (may be NULL) get those cases' indices. */
double kw_calib_bound_error(const int *group, const kw_fid_set *set, int g, int *lo, int *hi);

/* Set one parameter's value on a (value in the file's unit). */
void kw_calib_set(kw_accel *a, int id, double v, const kw_fid_set *set);

/* The storage level whose bandwidth "shared_gb_s" means: the largest shared
 * level that holds operands (a CPU's last-level cache); NULL when a has
 * none. Points into a. Both fits (this one and kw_calib_cpu's) use it, so
 * they calibrate the same level. */
kw_level *kw_calib_shared_level(kw_accel *a);

#endif
