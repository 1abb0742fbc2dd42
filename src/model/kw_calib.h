/* kw_calib.h - fit an accelerator's rate parameters to measured kernel times
 * (`knobwise calibrate`): nonlinear least squares on the relative
 * error log(predicted / measured) of each case, GSL's gsl_multifit_nlinear.
 *
 * Parameters (KW_CAL_*): the achievable matrix fraction of bf16/fp16 and of fp8, the synchronous-MMA fraction, the achieved DRAM fraction, the
 * shared level's bandwidth, the vector instructions per attention score, the
 * softmax share each attention schedule hides under its matrix work, and the
 * device-side fixed time of a kernel (grid dispatch, prologue, first fill, drain),
 * and the per-kernel cost inside a CUDA graph (graph_node_us), which only
 * graph_node cases depend on; and the DRAM fraction and fixed time of a decode
 * kernel that gathers a paged K/V cache (gather_dram_fraction, gather_fixed_us),
 * which only decode cases with such a page size depend on. The eager launch and the graph replay's fixed
 * cost are not fitted: no case kind measures them (kernel times back to back
 * do not depend on them). */
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
    double before, after, sigma; /* value in the file's unit; sigma: 1-sigma uncertainty */
} kw_calib_param;

typedef struct kw_calib {
    kw_calib_param p[KW_CAL_COUNT];
    int n_used;              /* cases fitted */
    double before_ratio[KW_FID_MAX], after_ratio[KW_FID_MAX]; /* predicted / measured per case */
    int used[KW_FID_MAX];
    double chi2_before, chi2_after; /* sum of squared log ratios over the fitted cases */
    int iterations;
} kw_calib;

/* Name of parameter id ("matrix_fraction", ...), or NULL. */
const char *kw_calib_param_name(int id);

/* Fit the parameters in `want` (bit set of 1 << KW_CAL_*) of *a to the cases
 * of set with use[i] != 0 (use NULL: all). On success *a holds the fitted
 * values. Refuses (KW_EINPUT, message names the reason) an under-determined
 * fit: a wanted parameter the accelerator lacks or no case depends on
 * (`strict`), none left to fit, fewer cases than parameters, or a singular
 * fit. Without `strict` undetermined parameters are left as they are. */
int kw_calib_fit(kw_calib *out, kw_accel *a, const kw_fid_set *set, const int *use, unsigned want,
                 int strict);

/* Set one parameter's value on a (value in the file's unit). */
void kw_calib_set(kw_accel *a, int id, double v, const kw_fid_set *set);

/* The storage level whose bandwidth "shared_gb_s" means: the largest shared
 * level that holds operands (a CPU's last-level cache); NULL when a has
 * none. Points into a. Both fits (this one and kw_calib_cpu's) use it, so
 * they calibrate the same level. */
kw_level *kw_calib_shared_level(kw_accel *a);

#endif
