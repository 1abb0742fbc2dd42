/* kw_numfmt.h - number formats of the precision knobs, emulated in software.
 *
 * Rounding of a double or float to the value set of fp32, bf16, fp16, fp8 E4M3
 * and fp8 E5M2 (round to nearest, ties to even, on the bit pattern; subnormals
 * as each format defines them; NaN passes through), and int8 symmetric
 * quantisation with per-tensor or per-channel scales. A rounded value is
 * returned in the wider type (the emulation computes in double/float and only
 * restricts the value set), plus encoders/decoders to the storage bits so
 * tests can check patterns against hand-derived vectors.
 *
 * Formats (src/model-facts.md#precision; OCP 8-bit FP spec, arXiv 2209.05433):
 *   fp32 binary32     p=24  emin=-126  max 3.4028e38   overflow -> inf
 *   bf16              p=8   emin=-126  max 3.3895e38   overflow -> inf
 *   fp16 binary16     p=11  emin=-14   max 65504       overflow -> inf
 *   fp8 E4M3          p=4   emin=-6    max 448         saturates to +-448, no infinity
 *                                                      (+-inf saturates too, NaN stays NaN)
 *   fp8 E5M2          p=3   emin=-14   max 57344       overflow -> inf
 *   int8              -128..127 integers; kw_numfmt_round(KW_PREC_INT8, x) is the unit-scale
 *                     quantiser rne(clip(x, -128, 127)), callers divide by the scale.
 * All functions are pure and thread-safe.
 */
#ifndef KW_NUMFMT_H
#define KW_NUMFMT_H

#include <math.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>

#include "kw_model.h"

/* x rounded to the value set of p (see table above). Cost: a few integer
 * operations on the bit pattern; subnormal targets one integer rounding. */
float kw_numfmt_round(kw_prec p, float x);
/* The same from a double, rounded once (no double rounding through float). */
double kw_numfmt_round_d(kw_prec p, double x);
/* dst[i] = kw_numfmt_round(p, src[i]); dst may equal src. */
void kw_numfmt_round_array(kw_prec p, float *dst, const float *src, size_t n);
void kw_numfmt_round_array_d(kw_prec p, double *dst, const double *src, size_t n);

/* Unit roundoff u = 2^-p of a float format (fp32 2^-24 ... E5M2 2^-3); int8 1/2
 * of a unit step, i.e. 0.5 (relative to its scale). */
double kw_numfmt_unit_roundoff(kw_prec p);
/* Largest finite value of a format (int8: 127). */
double kw_numfmt_max(kw_prec p);

/* Storage bits of x rounded to p: fp32 32 bits, bf16/fp16 16, fp8 8 (low bits of
 * the result), int8 the two's-complement byte of rne(clip(x)). NaN encodes as
 * the sign plus the format's canonical quiet NaN (fp32 0x7FC00000, bf16 0x7FC0,
 * fp16 0x7E00, E4M3 0x7F, E5M2 0x7E). */
uint32_t kw_numfmt_encode(kw_prec p, double x);
/* Value of storage bits of format p. */
double kw_numfmt_decode(kw_prec p, uint32_t bits);

/* ---- int8 symmetric quantisation (TensorRT convention, src/model-facts.md#precision) ----
 * s = max|x| / 127, q = rne(clip(x / s, -128, 127)), x ~ q * s with |x - q s| <= s/2.
 * An all-zero (or empty) tensor gets s = 0 and q = 0. The scale is kept in
 * double (real kernels keep it in fp32: a 2^-24 relative difference). NaN in x
 * makes the scale NaN; callers feed finite data. */
/* One scale for the n values of x: *scale_out = s, q[i]. */
void kw_numfmt_int8_quantize(int8_t *q, double *scale_out, const double *x, size_t n);
/* One scale per row of a row-major rows x cols matrix (a channel is a row:
 * store a K x N weight transposed, N rows of K, for per-output-channel scales). */
void kw_numfmt_int8_quantize_rows(int8_t *q, double *scales, const double *x, size_t rows,
                                  size_t cols);
/* Fake quantisation: dst[i] = rne(clip(x[i]/s)) * s with s = max|x|/127 (per tensor);
 * returns s. dst may equal x. */
double kw_numfmt_int8_fake_quant(double *dst, const double *x, size_t n);

/* ---- inline forms for inner loops (same results as kw_numfmt_round_d) ---- */
#define KW_F64_ABS 0x7FFFFFFFFFFFFFFFull
#define KW_F64_INF 0x7FF0000000000000ull

/* Round x to the format with mbits explicit mantissa bits, smallest normal
 * 2^emin, largest finite maxv; saturate or overflow to inf. */
static inline double kw_numfmt_rnd_d(double x, int mbits, int emin, double maxv, int saturate)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    uint64_t a = u & KW_F64_ABS;
    if (a >= KW_F64_INF) {
        if (a > KW_F64_INF)
            return x; /* NaN passes through */
        return saturate ? copysign(maxv, x) : x;
    }
    double r;
    if (fabs(x) < ldexp(1.0, emin)) {
        /* target subnormal range: fixed spacing q = 2^(emin - mbits). y = |x|/q < 2^mbits
         * is exact; (y + 2^52) - 2^52 rounds it to an integer, ties to even, in the
         * default rounding mode (no libm call in inner loops). */
        double y = fabs(x) * ldexp(1.0, mbits - emin);
        y = (y + 0x1p52) - 0x1p52;
        r = copysign(y * ldexp(1.0, emin - mbits), x);
    } else {
        int shift = 52 - mbits;
        uint64_t lsb = (a >> shift) & 1u;
        a += ((uint64_t)1 << (shift - 1)) - 1u + lsb;
        a &= ~(((uint64_t)1 << shift) - 1u);
        a |= u & ~KW_F64_ABS;
        memcpy(&r, &a, sizeof r);
    }
    if (fabs(r) > maxv)
        return saturate ? copysign(maxv, x) : copysign(INFINITY, x);
    return r;
}

static inline double kw_numfmt_int8_rne(double x)
{
    if (isnan(x))
        return x;
    if (x > 127.0)
        x = 127.0;
    else if (x < -128.0)
        x = -128.0;
    double y = (fabs(x) + 0x1p52) - 0x1p52; /* ties to even, as above */
    return copysign(y, x);
}

static inline double kw_round_d_inline(kw_prec p, double x)
{
    switch (p) {
    case KW_PREC_FP32:
        return (double)(float)x; /* the C conversion is IEEE round-to-nearest-even */
    case KW_PREC_BF16:
        return kw_numfmt_rnd_d(x, 7, -126, 0x1.fep127, 0);
    case KW_PREC_FP16:
        return kw_numfmt_rnd_d(x, 10, -14, 65504.0, 0);
    case KW_PREC_FP8_E4M3:
        return kw_numfmt_rnd_d(x, 3, -6, 448.0, 1);
    case KW_PREC_FP8_E5M2:
        return kw_numfmt_rnd_d(x, 2, -14, 57344.0, 0);
    case KW_PREC_INT8:
        return kw_numfmt_int8_rne(x);
    default:
        return x;
    }
}

#endif
