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
 * Formats (model-facts.md section 5; OCP 8-bit FP spec, arXiv 2209.05433):
 *   fp32 binary32     p=24  emin=-126  max 3.4028e38   overflow -> inf
 *   bf16              p=8   emin=-126  max 3.3895e38   overflow -> inf
 *   fp16 binary16     p=11  emin=-14   max 65504       overflow -> inf
 *   fp8 E4M3          p=4   emin=-6    max 448         saturates to +-448, no infinity
 *                                                      (+-inf saturates too, NaN stays NaN)
 *   fp8 E5M2          p=3   emin=-14   max 57344       overflow -> inf
 *   int8              -128..127 integers; kw_round(KW_PREC_INT8, x) is the unit-scale
 *                     quantiser rne(clip(x, -128, 127)), callers divide by the scale.
 * All functions are pure and thread-safe.
 */
#ifndef KW_NUMFMT_H
#define KW_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

#include "kw_model.h"

/* x rounded to the value set of p (see table above). Cost: a few integer
 * operations on the bit pattern; subnormal targets take one nearbyint. */
float kw_round(kw_prec p, float x);
/* The same from a double, rounded once (no double rounding through float). */
double kw_round_d(kw_prec p, double x);
/* dst[i] = kw_round(p, src[i]); dst may equal src. */
void kw_round_array(kw_prec p, float *dst, const float *src, size_t n);
void kw_round_array_d(kw_prec p, double *dst, const double *src, size_t n);

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

/* ---- int8 symmetric quantisation (TensorRT convention, model-facts.md 5) ----
 * s = max|x| / 127, q = rne(clip(x / s, -128, 127)), x ~ q * s with |x - q s| <= s/2.
 * An all-zero (or empty) tensor gets s = 0 and q = 0. The scale is kept in
 * double (real kernels keep it in fp32: a 2^-24 relative difference). NaN in x
 * makes the scale NaN; callers feed finite data. */
/* One scale for the n values of x: *scale_out = s, q[i]. */
void kw_int8_quantize(int8_t *q, double *scale_out, const double *x, size_t n);
/* One scale per row of a row-major rows x cols matrix (a channel is a row:
 * store a K x N weight transposed, N rows of K, for per-output-channel scales). */
void kw_int8_quantize_rows(int8_t *q, double *scales, const double *x, size_t rows, size_t cols);
/* Fake quantisation: dst[i] = rne(clip(x[i]/s)) * s with s = max|x|/127 (per tensor);
 * returns s. dst may equal x. */
double kw_int8_fake_quant(double *dst, const double *x, size_t n);

#endif
