/* kw_numfmt.c - software rounding to the knob precisions (see kw_numfmt.h).
 *
 * Design: one generic rounding on the bit pattern of the wider type, with the
 * target described by (explicit mantissa bits, smallest normal, largest finite,
 * saturating or not); kw_numfmt_round/kw_numfmt_round_d switch on the format outside the
 * arithmetic so each case inlines into straight-line code. Method from
 * src/model-facts.md#precision: in the target's normal range, round to nearest even
 * by adding (half - 1 + lsb) to the magnitude bits and masking the dropped
 * mantissa bits (a carry into the exponent is the correct round-up); in the
 * target's subnormal range the spacing is fixed, q = 2^(emin - m), so
 * x = rne(x/q) * q (x/q is exact because q is a power of two; rne is
 * nearbyint in the default mode, or (y + 2^52) - 2^52 in the inline double
 * form). Rejected: converting through _Float16 or F16C (not available for
 * bf16/fp8, and the tests use the compiler's conversion as the independent
 * reference for fp16).
 */
#include <math.h>
#include <string.h>

#include "kw_numfmt.h"

/* Target descriptions (src/model-facts.md#precision; OCP OFP8 spec arXiv 2209.05433). */
typedef struct kw_fmt {
    int ebits, mbits, bias; /* storage layout */
    int emin;               /* exponent of the smallest normal = 1 - bias */
    double maxv;            /* largest finite */
    int saturate;           /* overflow -> +-maxv instead of +-inf */
    int ieee_special;       /* all-ones exponent means inf/NaN (false for E4M3) */
    uint32_t nan_bits;      /* canonical quiet NaN without sign */
} kw_fmt;

static const kw_fmt kw_fmts[KW_PREC_COUNT] = {
    [KW_PREC_FP32] = {8, 23, 127, -126, 0x1.fffffep127, 0, 1, 0x7FC00000u},
    [KW_PREC_BF16] = {8, 7, 127, -126, 0x1.fep127, 0, 1, 0x7FC0u},
    [KW_PREC_FP16] = {5, 10, 15, -14, 65504.0, 0, 1, 0x7E00u},
    /* E4M3: exponent 1111 is a normal binade except mantissa 111 (NaN): max 1.75*2^8 = 448 */
    [KW_PREC_FP8_E4M3] = {4, 3, 7, -6, 448.0, 1, 0, 0x7Fu},
    [KW_PREC_FP8_E5M2] = {5, 2, 15, -14, 57344.0, 0, 1, 0x7Eu},
    [KW_PREC_INT8] = {0, 0, 0, 0, 127.0, 1, 0, 0u},
};

#define KW_F32_ABS 0x7FFFFFFFu
#define KW_F32_INF 0x7F800000u

static inline float kw_rnd_f(float x, int mbits, int emin, float maxv, int saturate)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint32_t a = u & KW_F32_ABS;
    if (a >= KW_F32_INF) {
        if (a > KW_F32_INF)
            return x;
        return saturate ? copysignf(maxv, x) : x;
    }
    float r;
    /* A target whose emin is fp32's (bf16) has fp32's subnormal spacing
     * shifted by whole bits, so the bit rounding below is exact there too. */
    if (emin > -126 && fabsf(x) < ldexpf(1.0f, emin)) {
        r = nearbyintf(x * ldexpf(1.0f, mbits - emin)) * ldexpf(1.0f, emin - mbits);
    } else {
        int shift = 23 - mbits;
        uint32_t lsb = (a >> shift) & 1u;
        a += (1u << (shift - 1)) - 1u + lsb;
        a &= ~((1u << shift) - 1u);
        a |= u & ~KW_F32_ABS;
        memcpy(&r, &a, sizeof r);
    }
    if (fabsf(r) > maxv)
        return saturate ? copysignf(maxv, x) : copysignf(INFINITY, x);
    return r;
}

float kw_numfmt_round(kw_prec p, float x)
{
    switch (p) {
    case KW_PREC_FP32:
        return x;
    case KW_PREC_BF16:
        return kw_rnd_f(x, 7, -126, 0x1.fep127f, 0);
    case KW_PREC_FP16:
        return kw_rnd_f(x, 10, -14, 65504.0f, 0);
    case KW_PREC_FP8_E4M3:
        return kw_rnd_f(x, 3, -6, 448.0f, 1);
    case KW_PREC_FP8_E5M2:
        return kw_rnd_f(x, 2, -14, 57344.0f, 0);
    case KW_PREC_INT8:
        return (float)kw_numfmt_int8_rne(x);
    default:
        return x;
    }
}

double kw_numfmt_round_d(kw_prec p, double x)
{
    return kw_round_d_inline(p, x);
}

void kw_numfmt_round_array(kw_prec p, float *dst, const float *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = kw_numfmt_round(p, src[i]);
}

void kw_numfmt_round_array_d(kw_prec p, double *dst, const double *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = kw_numfmt_round_d(p, src[i]);
}

double kw_numfmt_unit_roundoff(kw_prec p)
{
    if (p < 0 || p >= KW_PREC_COUNT)
        return 0.0;
    if (p == KW_PREC_INT8)
        return 0.5;
    return ldexp(1.0, -(kw_fmts[p].mbits + 1));
}

double kw_numfmt_max(kw_prec p)
{
    return (p >= 0 && p < KW_PREC_COUNT) ? kw_fmts[p].maxv : 0.0;
}

uint32_t kw_numfmt_encode(kw_prec p, double x)
{
    if (p < 0 || p >= KW_PREC_COUNT)
        return 0;
    if (p == KW_PREC_INT8) {
        double r = kw_numfmt_int8_rne(x);
        return isnan(r) ? 0u : (uint32_t)(uint8_t)(int8_t)r;
    }
    if (p == KW_PREC_FP32) {
        float f = (float)x;
        uint32_t b;
        memcpy(&b, &f, sizeof b);
        if (isnan(f))
            b = (b & 0x80000000u) | kw_fmts[p].nan_bits;
        return b;
    }
    const kw_fmt *f = &kw_fmts[p];
    double r = kw_numfmt_round_d(p, x);
    int width = 1 + f->ebits + f->mbits;
    uint32_t sign = signbit(r) ? (1u << (width - 1)) : 0u;
    if (isnan(r))
        return sign | f->nan_bits;
    if (isinf(r))
        return sign | (((1u << f->ebits) - 1u) << f->mbits);
    double a = fabs(r);
    if (a == 0.0)
        return sign;
    int e;
    frexp(a, &e);
    int ex = e - 1; /* a = 1.m * 2^ex */
    if (ex < f->emin)
        return sign | (uint32_t)ldexp(a, f->mbits - f->emin); /* subnormal: a / q */
    uint32_t mant = (uint32_t)((ldexp(a, -ex) - 1.0) * (double)(1u << f->mbits));
    return sign | ((uint32_t)(ex + f->bias) << f->mbits) | mant;
}

double kw_numfmt_decode(kw_prec p, uint32_t bits)
{
    if (p < 0 || p >= KW_PREC_COUNT)
        return NAN;
    if (p == KW_PREC_INT8)
        return (double)(int8_t)(uint8_t)bits;
    if (p == KW_PREC_FP32) {
        float v;
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    const kw_fmt *f = &kw_fmts[p];
    int width = 1 + f->ebits + f->mbits;
    uint32_t emask = (1u << f->ebits) - 1u, mmask = (1u << f->mbits) - 1u;
    double sign = (bits >> (width - 1)) & 1u ? -1.0 : 1.0;
    uint32_t e = (bits >> f->mbits) & emask, m = bits & mmask;
    if (e == emask) {
        if (f->ieee_special)
            return m == 0 ? sign * INFINITY : NAN;
        if (m == mmask)
            return NAN; /* E4M3: S.1111.111 is the only NaN */
    }
    if (e == 0)
        return sign * ldexp((double)m, f->emin - f->mbits);
    return sign * ldexp(1.0 + (double)m / (double)(1u << f->mbits), (int)e - f->bias);
}

/* ---- int8 ---- */

static double kw_amax(const double *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double a = fabs(x[i]);
        if (a > m || isnan(a))
            m = a;
    }
    return m;
}

/* s = max|x|/127 and q = rne(clip(x/s, -128, 127)) [S TensorRT developer guide,
 * "Quantization Scheme"; src/model-facts.md#precision]. */
void kw_numfmt_int8_quantize(int8_t *q, double *scale_out, const double *x, size_t n)
{
    double s = kw_amax(x, n) / 127.0;
    *scale_out = s;
    for (size_t i = 0; i < n; i++)
        q[i] = s > 0.0 ? (int8_t)kw_numfmt_int8_rne(x[i] / s) : 0;
}

void kw_numfmt_int8_quantize_rows(int8_t *q, double *scales, const double *x, size_t rows,
                                  size_t cols)
{
    for (size_t r = 0; r < rows; r++)
        kw_numfmt_int8_quantize(q + r * cols, &scales[r], x + r * cols, cols);
}

double kw_numfmt_int8_fake_quant(double *dst, const double *x, size_t n)
{
    double s = kw_amax(x, n) / 127.0;
    for (size_t i = 0; i < n; i++)
        dst[i] = s > 0.0 ? kw_numfmt_int8_rne(x[i] / s) * s : 0.0;
    return s;
}
