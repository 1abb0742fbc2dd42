/* kw_calib_cpu.h - fit a CPU accelerator file's rates (<cpu>, kw_cost_cpu.h)
 * to measured mappings of a space: `knobwise calibrate --space S --measured
 * CSV`, the CSV being what `make bench-cpu` (tests/bench/model_vs_measured
 * --csv) writes, one measured mapping a row:
 *   shape,config_id,predicted_us,measured_us,knobs
 * with knobs "knob=value;knob=value;...". The prediction of a row is the
 * model's one-request stage-1 time of that mapping on that shape (the
 * `latency_us` of `knobwise eval`), on the cores its cores_per_request asks.
 *
 * Fitted (least squares on log(predicted / measured), GSL
 * gsl_multifit_nlinear, as kw_calib.c): the achievable fp32 and bf16 vector
 * rates (<peak tflops>: probe's FMA loop is an upper bound the kernels do not
 * reach in the same ratio), the scalar fraction (<efficiency fallback>), the
 * private cache's bandwidth (<memory sram_bw_gb_s>, which prices packing), the
 * shared level's (<storage><level gb_s>), the scalar exp rate (<cpu
 * exp_mops_per_core>) and the first data cache's (<cpu l1_gb_s>, which prices
 * the in-place micro-kernel's strided re-reads). A parameter no row depends
 * on is left as it is. */
#ifndef KW_CALIB_CPU_H
#define KW_CALIB_CPU_H

#include "kw_model.h"

#define KW_CCAL_ROWS_MAX 8192

enum {
    KW_CCAL_FP32,      /* peak_flops[fp32] */
    KW_CCAL_BF16,      /* peak_flops[bf16] */
    KW_CCAL_FALLBACK,  /* fallback_efficiency */
    KW_CCAL_SRAM_BW,   /* sram_bw_bytes_per_s */
    KW_CCAL_SHARED_BW, /* the largest shared operand level's bandwidth */
    KW_CCAL_EXP,       /* cpu_exp_per_s */
    KW_CCAL_L1_BW,     /* cpu_l1_bw_bytes_per_s (in-place strided re-reads) */
    KW_CCAL_COUNT
};

typedef struct kw_ccal_row {
    int shape;          /* index into the space's shapes */
    kw_cand cand;
    double measured_us;
    int line;
} kw_ccal_row;

typedef struct kw_ccal_set {
    int n;
    kw_ccal_row r[KW_CCAL_ROWS_MAX];
} kw_ccal_set;

typedef struct kw_ccal {
    int fitted[KW_CCAL_COUNT];
    double before[KW_CCAL_COUNT], after[KW_CCAL_COUNT]; /* in the file's units */
    double chi2_before, chi2_after; /* sum of squared log ratios */
    int iterations;
} kw_ccal;

/* Read the CSV against cfg's space (shapes and knobs by name). KW_EINPUT with
 * "FILE:LINE: message" for a bad row, KW_EIO when unreadable. */
int kw_calib_cpu_load(kw_ccal_set *out, const char *path, const kw_config *cfg);
/* The model's prediction of row i under accelerator a (us), 0 or an error. */
int kw_calib_cpu_predict(double *us, const kw_config *cfg, const kw_accel *a, const kw_ccal_row *r);
/* Fit cfg's accelerator copy *a (must be a CPU file) to the rows; on success *a
 * holds the fitted rates. KW_EINPUT when a is not a CPU file or there are no
 * more rows than parameters. */
int kw_calib_cpu_fit(kw_ccal *out, kw_accel *a, const kw_config *cfg, const kw_ccal_set *set);
/* "fp32_tflops", "bf16_tflops", "fallback", "sram_gb_s", "shared_gb_s",
 * "exp_mops_per_core", "l1_gb_s"; NULL out of range. */
const char *kw_calib_cpu_name(int id);

#endif
