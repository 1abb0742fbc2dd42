/* kw_calib_cpu.c - fit a CPU accelerator file's rates to measured mappings
 * (kw_calib_cpu.h says what and why).
 *
 * Design choice: the same method as kw_calib.c (residual log(predicted /
 * measured), parameters fitted as logarithms or, for a fraction, through the
 * logistic function; GSL's trust-region least squares with a finite-
 * difference Jacobian), but over a space's mappings rather than published
 * kernel cases: a CPU's measurements are whole mappings of the shipped
 * spaces, with every knob the model ranks. Predictions come from
 * kw_cost_eval through kw_mapping_decode, exactly as the model evaluator's
 * `latency_us`, so the fit tunes the model the tuner uses. kw_calib.c's
 * case format (one kernel, a few tiling columns) cannot name a loop order, a
 * split or a packing choice, hence a second reader; the fitter is small
 * enough that sharing kw_calib.c's would have cost more than it saves.
 */
#include "kw_calib_cpu.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_calib.h"
#include "kw_cost.h"
#include "kw_error.h"
#include "kw_input.h"
#include "kw_load.h"
#include "kw_mapping.h"
#include "kw_num.h"

#define KW_CCAL_MAX_ITER 200
#define KW_CCAL_XTOL 1e-8
#define KW_CCAL_GTOL 1e-8
#define KW_CCAL_PROBE 1e-3     /* relative bump testing a parameter's influence */
#define KW_CCAL_INFLUENCE 1e-7 /* below this change of every log ratio: not determined */
#define KW_CCAL_FRACTION_MAX 0.999
#define KW_CCAL_LINE 4096
#define KW_CCAL_BYTES_MAX (64u << 20) /* a measured-mappings CSV */
#define KW_CCAL_HEADER "shape,config_id,predicted_us,measured_us,knobs"
#define KW_CCAL_US_MIN 1e-9 /* measured_us, as a kernel case's (kw_fidelity.c) */
#define KW_CCAL_US_MAX 1e12

static const char *const kw_ccal_names[KW_CCAL_COUNT] = {
    "fp32_tflops", "bf16_tflops", "fallback", "sram_gb_s", "shared_gb_s", "exp_mops_per_core",
    "l1_gb_s"};
/* file unit per internal unit: TFLOP/s, fraction, GB/s, GB/s, M/s, GB/s */
static const double kw_ccal_unit[KW_CCAL_COUNT] = {1e-12, 1e-12, 1.0, 1e-9, 1e-9, 1e-6, 1e-9};

const char *kw_calib_cpu_name(int id)
{
    return id >= 0 && id < KW_CCAL_COUNT ? kw_ccal_names[id] : NULL;
}

/* The parameter's storage in a (NULL when the file has no such figure). */
static double *kw_ccal_slot(kw_accel *a, int id)
{
    kw_level *l;
    switch (id) {
    case KW_CCAL_FP32: return &a->peak_flops[KW_PREC_FP32];
    case KW_CCAL_BF16: return a->peak_flops[KW_PREC_BF16] > 0.0 ? &a->peak_flops[KW_PREC_BF16] : NULL;
    case KW_CCAL_FALLBACK: return &a->fallback_efficiency;
    case KW_CCAL_SRAM_BW: return a->sram_bw_bytes_per_s > 0.0 ? &a->sram_bw_bytes_per_s : NULL;
    case KW_CCAL_SHARED_BW:
        l = kw_calib_shared_level(a);
        return l && l->bw_bytes_per_s > 0.0 ? &l->bw_bytes_per_s : NULL;
    case KW_CCAL_EXP: return a->cpu_exp_per_s > 0.0 ? &a->cpu_exp_per_s : NULL;
    case KW_CCAL_L1_BW: return a->cpu_l1_bw_bytes_per_s > 0.0 ? &a->cpu_l1_bw_bytes_per_s : NULL;
    }
    return NULL;
}

static double kw_ccal_from_x(int id, double x)
{
    return id == KW_CCAL_FALLBACK ? 1.0 / (1.0 + exp(-x)) : exp(x);
}

static double kw_ccal_to_x(int id, double v)
{
    if (id != KW_CCAL_FALLBACK)
        return log(v);
    v = fmin(v, KW_CCAL_FRACTION_MAX);
    return log(v / (1.0 - v));
}

int kw_calib_cpu_load(kw_ccal_set *out, const char *path, const kw_config *cfg)
{
    out->n = 0;
    FILE *f = kw_input_fopen(path, KW_CCAL_BYTES_MAX); /* a FIFO blocked fopen forever */
    if (!f)
        return kw_error_code();
    char line[KW_CCAL_LINE];
    int ln = 0, rc = 0, header = 0, flags;
    size_t len;
    while (rc == 0 && kw_input_line(f, line, sizeof line, &len, &flags) == 1) {
        ln++;
        if (flags & KW_INPUT_LINE_LONG) {
            rc = kw_error_set(KW_EINPUT, "%s:%d: line longer than %d bytes", path, ln,
                              KW_CCAL_LINE - 1);
            break;
        }
        if (flags & KW_INPUT_LINE_NUL) { /* fgets said "line longer than" of it */
            rc = kw_error_set(KW_EINPUT, "%s:%d: NUL byte in line (not a text file?)", path, ln);
            break;
        }
        if (ln == 1 && kw_input_bom(line)) /* a spreadsheet's byte order mark */
            memmove(line, line + 3, strlen(line + 3) + 1);
        if (line[0] == '#' || line[0] == '\0')
            continue;
        if (!header) {
            if (strcmp(line, KW_CCAL_HEADER) != 0)
                rc = kw_error_set(KW_EINPUT, "%s:%d: header must be '%s' (model_vs_measured --csv)",
                                  path, ln, KW_CCAL_HEADER);
            header = 1;
            continue;
        }
        char *fld[5], *p = line;
        int nf = 0;
        for (; nf < 4; nf++) {
            fld[nf] = p;
            char *c = strchr(p, ',');
            if (!c)
                break;
            *c = '\0';
            p = c + 1;
        }
        if (nf < 4) {
            rc = kw_error_set(KW_EINPUT, "%s:%d: expected 5 columns (%s)", path, ln, KW_CCAL_HEADER);
            break;
        }
        fld[4] = p;
        if (out->n == KW_CCAL_ROWS_MAX) {
            rc = kw_error_set(KW_EINPUT, "%s:%d: more than %d rows", path, ln, KW_CCAL_ROWS_MAX);
            break;
        }
        kw_ccal_row *r = &out->r[out->n];
        r->line = ln;
        r->shape = kw_load_config_shape(cfg, fld[0]);
        int num = kw_num_double(&r->measured_us, fld[3]);
        /* the kernel cases' range (kw_fidelity.c): 1e300 us crashed the fit,
         * which drove a rate to 0 (until 2026-12-07) */
        if (num == 0 && !(r->measured_us >= KW_CCAL_US_MIN && r->measured_us <= KW_CCAL_US_MAX))
            num = -1;
        if (r->shape < 0) {
            rc = kw_error_set(KW_EINPUT, "%s:%d: shape '%s' is not one of the space's", path, ln, fld[0]);
            break;
        }
        if (num != 0 || !(r->measured_us > 0.0)) {
            rc = kw_error_set(KW_EINPUT, "%s:%d: measured_us '%s' is not a number of microseconds "
                              "from %g to %g", path, ln, fld[3], KW_CCAL_US_MIN, KW_CCAL_US_MAX);
            break;
        }
        for (char *q = fld[4]; *q; q++)
            if (*q == ';')
                *q = ' ';
        if (kw_knobs_cand_parse(&r->cand, &cfg->space.knobs, fld[4]) != 0) {
            rc = kw_error_set(KW_EINPUT, "%s:%d: %s", path, ln, kw_error_last());
            break;
        }
        out->n++;
    }
    if (rc == 0 && ferror(f))
        rc = kw_error_set(KW_EIO, "%s: read error", path);
    if (rc == 0 && !header)
        rc = kw_error_set(KW_EINPUT, "%s:%d: no header (%s)", path, ln, KW_CCAL_HEADER);
    fclose(f);
    return rc;
}

int kw_calib_cpu_predict(double *us, const kw_config *cfg, const kw_accel *a, const kw_ccal_row *r)
{
    const kw_shape *s = &cfg->workload.shapes[cfg->space.shapes[r->shape]];
    const kw_block *b = &cfg->workload.blocks[s->block];
    kw_mapping m;
    kw_cost c;
    int rc = kw_mapping_decode(&m, &cfg->space, b, &r->cand);
    if (rc == 0)
        rc = kw_cost_eval(&c, a, b, s, &m, 1, m.cores_per_request);
    *us = rc == 0 ? c.latency_us : NAN;
    return rc;
}

typedef struct kw_ccal_ctx {
    kw_accel a;
    const kw_config *cfg;
    const kw_ccal_set *set;
    int ids[KW_CCAL_COUNT], np;
    int failed;
} kw_ccal_ctx;

static double kw_ccal_chi2(kw_ccal_ctx *cx, gsl_vector *f)
{
    double chi2 = 0.0;
    for (int i = 0; i < cx->set->n; i++) {
        double us;
        if (kw_calib_cpu_predict(&us, cx->cfg, &cx->a, &cx->set->r[i]) != 0 || !(us > 0.0)) {
            cx->failed = 1;
            return NAN;
        }
        double r = log(us / cx->set->r[i].measured_us);
        if (f)
            gsl_vector_set(f, (size_t)i, r);
        chi2 += r * r;
    }
    return chi2;
}

static int kw_ccal_f(const gsl_vector *x, void *params, gsl_vector *f)
{
    kw_ccal_ctx *cx = params;
    for (int j = 0; j < cx->np; j++) {
        /* a step to a rate of 0 or infinity (exp under- or overflowing) is
         * outside the model's domain: stored, its slot read as "no such
         * figure" (NULL) at the next step, a segfault (until 2026-12-07) */
        double v = kw_ccal_from_x(cx->ids[j], gsl_vector_get(x, (size_t)j));
        if (!(v > 0.0 && isfinite(v)))
            return GSL_EDOM;
        *kw_ccal_slot(&cx->a, cx->ids[j]) = v;
    }
    return isfinite(kw_ccal_chi2(cx, f)) ? GSL_SUCCESS : GSL_EDOM;
}

int kw_calib_cpu_fit(kw_ccal *out, kw_accel *a, const kw_config *cfg, const kw_ccal_set *set)
{
    memset(out, 0, sizeof *out);
    if (!a->cpu)
        return kw_error_set(KW_EINPUT, "accelerator '%s' is not a CPU file (no <cpu>): calibrate it "
                                       "without --space, against kernel cases", a->name);
    kw_ccal_ctx *cx = calloc(1, sizeof *cx);
    if (!cx)
        return kw_error_set(KW_ENOMEM, "out of memory for the fit");
    cx->cfg = cfg;
    cx->set = set;
    cx->a = *a;
    int rc = 0;
    gsl_multifit_nlinear_workspace *w = NULL;
    out->chi2_before = kw_ccal_chi2(cx, NULL);
    if (cx->failed) {
        rc = kw_error_set(KW_EMODEL, "a measured mapping cannot be costed: %s", kw_error_last());
        goto done;
    }
    /* the parameters some row depends on */
    for (int id = 0; id < KW_CCAL_COUNT; id++) {
        double *v = kw_ccal_slot(&cx->a, id);
        if (!v)
            continue;
        out->before[id] = out->after[id] = *v * kw_ccal_unit[id];
        double keep = *v;
        *v = kw_ccal_from_x(id, kw_ccal_to_x(id, keep) + KW_CCAL_PROBE);
        double bumped = kw_ccal_chi2(cx, NULL);
        *v = keep;
        if (isfinite(bumped) && fabs(bumped - out->chi2_before) > KW_CCAL_INFLUENCE)
            cx->ids[cx->np++] = id;
    }
    if (cx->np == 0 || set->n <= cx->np) {
        rc = kw_error_set(KW_EINPUT, "under-determined fit: %d measured mappings for %d parameters",
                          set->n, cx->np);
        goto done;
    }
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, (size_t)set->n, (size_t)cx->np);
    if (!w) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for the fit");
        goto done;
    }
    gsl_multifit_nlinear_fdf fdf = {.f = kw_ccal_f, .n = (size_t)set->n, .p = (size_t)cx->np,
                                    .params = cx};
    double x0[KW_CCAL_COUNT];
    for (int j = 0; j < cx->np; j++)
        x0[j] = kw_ccal_to_x(cx->ids[j], *kw_ccal_slot(&cx->a, cx->ids[j]));
    gsl_vector_view xv = gsl_vector_view_array(x0, (size_t)cx->np);
    int info = 0, st = gsl_multifit_nlinear_init(&xv.vector, &fdf, w);
    if (st == GSL_SUCCESS)
        st = gsl_multifit_nlinear_driver(KW_CCAL_MAX_ITER, KW_CCAL_XTOL, KW_CCAL_GTOL, 0.0, NULL, NULL,
                                         &info, w);
    if (cx->failed || (st != GSL_SUCCESS && st != GSL_EMAXITER)) {
        rc = kw_error_set(KW_EMODEL, "the fit failed: %s",
                          cx->failed ? "a mapping could not be costed" : gsl_strerror(st));
        goto done;
    }
    out->iterations = (int)gsl_multifit_nlinear_niter(w);
    gsl_vector *x = gsl_multifit_nlinear_position(w);
    for (int j = 0; j < cx->np; j++) /* the same domain at the end */
        if (!(kw_ccal_from_x(cx->ids[j], gsl_vector_get(x, (size_t)j)) > 0.0 &&
              isfinite(kw_ccal_from_x(cx->ids[j], gsl_vector_get(x, (size_t)j))))) {
            rc = kw_error_set(KW_EMODEL, "the fit failed: %s went to 0 or infinity",
                              kw_ccal_names[cx->ids[j]]);
            goto done;
        }
    for (int j = 0; j < cx->np; j++) {
        int id = cx->ids[j];
        double v = kw_ccal_from_x(id, gsl_vector_get(x, (size_t)j));
        *kw_ccal_slot(a, id) = v;
        *kw_ccal_slot(&cx->a, id) = v;
        out->after[id] = v * kw_ccal_unit[id];
        out->fitted[id] = 1;
    }
    out->chi2_after = kw_ccal_chi2(cx, NULL);
done:
    gsl_multifit_nlinear_free(w);
    free(cx);
    return rc;
}
