/* test_numfmt.c - rounding to the knob precisions is bit-exact.
 *
 * fp16 is checked against the compiler's own _Float16 conversion (an
 * independent implementation, libgcc __truncsfhf2/__truncdfhf2 or F16C) over
 * a few million seeded values and the special cases; bf16, E4M3 and E5M2
 * against vectors derived by hand from the format definitions (derivations in
 * the comments); int8 against its half-step error bound.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "kw_numfmt.h"

static void setup(void)
{
    gsl_set_error_handler_off();
}

TestSuite(numfmt, .init = setup);

static uint16_t half_bits(_Float16 h)
{
    uint16_t b;
    memcpy(&b, &h, sizeof b);
    return b;
}

static float f32_of_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* A seeded float: half the draws are raw random bit patterns (every exponent,
 * NaN, inf, subnormals of fp32), half land near fp16's range (2^-27..2^17) so
 * most exercise fp16's normal/subnormal rounding. */
static float draw_float(gsl_rng *r, int i)
{
    uint32_t bits = (uint32_t)gsl_rng_get(r);
    if (i & 1)
        return f32_of_bits(bits);
    int e = (int)gsl_rng_uniform_int(r, 45) - 27;
    float m = f32_of_bits(0x3F800000u | (bits & 0x007FFFFFu)); /* [1,2) with random mantissa */
    float x = ldexpf(m, e);
    return (bits & 0x80000000u) ? -x : x;
}

Test(numfmt, fp16_matches_compiler_float_conversion)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 20240611);
    const int n = 2000000;
    int mismatches = 0;
    for (int i = 0; i < n; i++) {
        float x = draw_float(r, i);
        _Float16 h = (_Float16)x;
        float want = (float)h;
        float got = kw_numfmt_round(KW_PREC_FP16, x);
        if (isnan(want)) {
            if (!isnan(got))
                mismatches++;
            continue;
        }
        uint32_t wb, gb;
        memcpy(&wb, &want, 4);
        memcpy(&gb, &got, 4);
        if (wb != gb || kw_numfmt_encode(KW_PREC_FP16, x) != half_bits(h)) {
            if (mismatches < 5)
                cr_log_error("x=%a want %a got %a", (double)x, (double)want, (double)got);
            mismatches++;
        }
    }
    gsl_rng_free(r);
    cr_assert_eq(mismatches, 0, "%d of %d values differ from _Float16", mismatches, n);
}

/* From double directly: values with bits below float's precision catch a
 * double rounding through float (x = fp16 midpoint - tiny rounds down, but
 * through float the tiny part is lost and the tie goes to even). */
Test(numfmt, fp16_from_double_matches_compiler_without_double_rounding)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    const int n = 1000000;
    int mismatches = 0;
    for (int i = 0; i < n; i++) {
        double x;
        if (i % 3 == 0) {
            /* an exact fp16 midpoint nudged by one double ulp either way */
            double h = kw_numfmt_decode(KW_PREC_FP16, (uint32_t)gsl_rng_uniform_int(r, 0x7C00));
            int e;
            frexp(h == 0.0 ? 0x1p-24 : h, &e);
            double half_ulp = ldexp(1.0, (e - 1 < -14 ? -14 : e - 1) - 11);
            x = nextafter(h + half_ulp, (i & 2) ? INFINITY : 0.0);
        } else {
            x = ldexp(gsl_rng_uniform(r) + 1.0, (int)gsl_rng_uniform_int(r, 45) - 27);
        }
        if (gsl_rng_uniform(r) < 0.5)
            x = -x;
        _Float16 h = (_Float16)x;
        if (kw_numfmt_round_d(KW_PREC_FP16, x) != (double)h ||
            kw_numfmt_encode(KW_PREC_FP16, x) != half_bits(h))
            mismatches++;
    }
    gsl_rng_free(r);
    cr_assert_eq(mismatches, 0, "%d of %d doubles differ from _Float16", mismatches, n);
}

Test(numfmt, fp16_special_cases)
{
    const double cases[] = {
        0.0, -0.0, 1.0, -1.0,
        0x1p-24,                /* smallest subnormal */
        0x1p-25,                /* half of it: tie between 0 and 2^-24 -> 0 (even) */
        0x1.8p-25,              /* 3*2^-26 is not a tie: rounds up to 2^-24 */
        0x1.8p-24,              /* 1.5 * 2^-24: tie between 1 and 2 units -> 2 units (even) */
        0x1.ff8p-15,            /* largest subnormal 1023*2^-24 */
        0x1.ffcp-15,            /* between largest subnormal and 2^-14: tie -> 2^-14 (even) */
        0x1p-14,                /* smallest normal */
        1.0 + 0x1p-11,          /* tie -> 1.0 */
        1.0 + 0x1.8p-10,        /* tie between 1+2^-10 (odd) and 1+2^-9 -> 1+2^-9 */
        65504.0, 65519.0, 65520.0, -65520.0, 1e9, (double)FLT_MAX, INFINITY, -INFINITY, NAN,
        0x1p-30, 1e-40,
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float xf = (float)cases[i];
        _Float16 h = (_Float16)cases[i];
        if (isnan(cases[i])) {
            cr_assert(isnan(kw_numfmt_round_d(KW_PREC_FP16, cases[i])));
            cr_assert(isnan(kw_numfmt_round(KW_PREC_FP16, xf)));
            cr_assert_eq(kw_numfmt_encode(KW_PREC_FP16, cases[i]) & 0x7FFFu, 0x7E00u);
            continue;
        }
        cr_assert_eq(kw_numfmt_encode(KW_PREC_FP16, cases[i]), half_bits(h), "x=%a", cases[i]);
        double got = kw_numfmt_round_d(KW_PREC_FP16, cases[i]);
        cr_assert(got == (double)h && signbit(got) == signbit((double)h), "x=%a", cases[i]);
        cr_assert_eq(kw_numfmt_round(KW_PREC_FP16, xf), (float)(_Float16)xf, "x=%a", cases[i]);
    }
    /* hand-checked anchors, so the comparison above is not only self-consistent */
    cr_assert_eq(kw_numfmt_encode(KW_PREC_FP16, 65504.0), 0x7BFFu);
    cr_assert_eq(kw_numfmt_encode(KW_PREC_FP16, 65520.0), 0x7C00u);
    cr_assert_eq(kw_numfmt_encode(KW_PREC_FP16, 0x1p-24), 0x0001u);
    cr_assert_eq(kw_numfmt_encode(KW_PREC_FP16, 0x1p-25), 0x0000u);
    cr_assert_eq(kw_numfmt_encode(KW_PREC_FP16, -0.0), 0x8000u);
    /* every fp16 pattern decodes to the compiler's value and encodes back */
    for (uint32_t b = 0; b < 0x10000u; b++) {
        _Float16 h;
        uint16_t b16 = (uint16_t)b;
        memcpy(&h, &b16, 2);
        double v = kw_numfmt_decode(KW_PREC_FP16, b);
        if (isnan((double)h)) {
            cr_assert(isnan(v));
            continue;
        }
        cr_assert(v == (double)h, "bits %04x", b);
        cr_assert_eq(kw_numfmt_encode(KW_PREC_FP16, v), b);
    }
}

typedef struct vec {
    double x;
    uint32_t bits;
} vec;

static void check_vectors(kw_prec p, const vec *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t got = kw_numfmt_encode(p, v[i].x);
        cr_assert_eq(got, v[i].bits, "%s: x=%a -> %#x, want %#x", kw_prec_name(p), v[i].x, got,
                     v[i].bits);
        double want = kw_numfmt_decode(p, v[i].bits);
        double gd = kw_numfmt_round_d(p, v[i].x);
        float gf = kw_numfmt_round(p, (float)v[i].x);
        if (isnan(want)) {
            cr_assert(isnan(gd) && isnan(gf));
            continue;
        }
        cr_assert(gd == want && signbit(gd) == signbit(want), "%s: x=%a", kw_prec_name(p), v[i].x);
        /* vectors are exact in float, so the float path must agree */
        if ((double)(float)v[i].x == v[i].x || isinf(v[i].x))
            cr_assert((double)gf == want, "%s float path: x=%a got %a", kw_prec_name(p), v[i].x,
                      (double)gf);
    }
}

/* bf16 = sign, 8 exponent bits (bias 127), 7 mantissa bits: the top half of fp32.
 *  1.0 = 0 01111111 0000000 = 0x3F80.
 *  1 + 2^-8 is halfway between 1.0 (mantissa 0, even) and 1 + 2^-7 -> 0x3F80.
 *  1 + 3*2^-8 is halfway between 1+2^-7 (mantissa 1, odd) and 1+2^-6 (mantissa 2) -> 0x3F82.
 *  1 + 2^-8 + 2^-20 is above the tie -> 1 + 2^-7 = 0x3F81.
 *  max = (2 - 2^-7) * 2^127 = 0 11111110 1111111 = 0x7F7F; FLT_MAX = (2 - 2^-23)*2^127 lies
 *  above the midpoint (2 - 2^-8)*2^127 to 2^128 -> overflow -> inf 0x7F80; the midpoint itself
 *  ties to even = 2^128 -> inf as well.
 *  subnormals: spacing 2^(-126-7) = 2^-133: 2^-133 = 0x0001; 2^-134 ties to 0;
 *  3*2^-134 = 1.5 units ties to 2 units = 0x0002; smallest normal 2^-126 = 0x0080.
 *  NaN -> 0x7FC0; -0 -> 0x8000; -inf -> 0xFF80.
 */
Test(numfmt, bf16_hand_vectors)
{
    const vec v[] = {
        {1.0, 0x3F80}, {1.0 + 0x1p-8, 0x3F80}, {1.0 + 0x1.8p-7, 0x3F82},
        {1.0 + 0x1p-8 + 0x1p-20, 0x3F81}, {-2.0, 0xC000}, {0x1.fep127, 0x7F7F},
        {(double)FLT_MAX, 0x7F80}, {0x1.ffp127, 0x7F80}, {0x1p-133, 0x0001}, {0x1p-134, 0x0000},
        {0x1.8p-133, 0x0002}, {0x1p-126, 0x0080}, {-0.0, 0x8000}, {INFINITY, 0x7F80},
        {-INFINITY, 0xFF80}, {NAN, 0x7FC0},
    };
    check_vectors(KW_PREC_BF16, v, sizeof v / sizeof v[0]);
}

/* E4M3 = sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinity; S.1111.111 is NaN.
 *  1.0 = 0 0111 000 = 0x38. Mantissa step at 1.0 is 2^-3.
 *  1 + 2^-4: tie between 1.0 (000, even) and 1.125 -> 0x38.
 *  1 + 3*2^-4 = 1.1875: tie between 1.125 (001) and 1.25 (010, even) -> 0x3A.
 *  max = 1.110b * 2^8 = 448 = 0 1111 110 = 0x7E; 1.111b*2^8 = 480 would be the NaN pattern.
 *  464 (tie 448/480), 500, 1e6 and +inf saturate to 448 = 0x7E; -inf -> 0xFE.
 *  smallest normal 2^-6 = 0 0001 000 = 0x08; subnormal spacing 2^(-6-3) = 2^-9:
 *  2^-9 = 0x01, largest subnormal 7*2^-9 = 0x07; 2^-10 ties to 0; 3*2^-10 (1.5 units) ties
 *  to 2 units = 0x02; 15*2^-10 (7.5 units) ties to 8 units = 2^-6 = 0x08.
 *  NaN -> 0x7F; -0 -> 0x80.
 */
Test(numfmt, e4m3_hand_vectors)
{
    const vec v[] = {
        {1.0, 0x38}, {1.0 + 0x1p-4, 0x38}, {1.1875, 0x3A}, {-1.1875, 0xBA}, {448.0, 0x7E},
        {464.0, 0x7E}, {500.0, 0x7E}, {1e6, 0x7E}, {-1e6, 0xFE}, {INFINITY, 0x7E},
        {-INFINITY, 0xFE}, {0x1p-6, 0x08}, {0x1p-9, 0x01}, {7 * 0x1p-9, 0x07}, {0x1p-10, 0x00},
        {3 * 0x1p-10, 0x02}, {15 * 0x1p-10, 0x08}, {NAN, 0x7F}, {-0.0, 0x80}, {240.0, 0x77},
    };
    check_vectors(KW_PREC_FP8_E4M3, v, sizeof v / sizeof v[0]);
    cr_assert(isnan(kw_numfmt_decode(KW_PREC_FP8_E4M3, 0xFF)));
    cr_assert_eq(kw_numfmt_decode(KW_PREC_FP8_E4M3, 0x78), 256.0); /* exponent 1111 is normal */
}

/* E5M2 = sign, 5 exponent bits (bias 15), 2 mantissa bits; IEEE-like inf/NaN.
 *  1.0 = 0 01111 00 = 0x3C. Mantissa step at 1.0 is 2^-2.
 *  1.125: tie between 1.0 (00, even) and 1.25 -> 0x3C; 1.375: tie between 1.25 (01) and
 *  1.5 (10, even) -> 0x3E.
 *  max = 1.11b * 2^15 = 57344 = 0 11110 11 = 0x7B. 61440 is the midpoint to 2^16 (the
 *  overflow threshold); ties to even rounds it up -> inf 0x7C; just below stays 0x7B.
 *  smallest normal 2^-14 = 0x04; subnormal spacing 2^(-14-2) = 2^-16 = 0x01; 2^-17 ties
 *  to 0; 3*2^-17 ties to 2 units = 0x02; largest subnormal 3*2^-16 = 0x03.
 *  NaN -> 0x7E; -inf -> 0xFC.
 */
Test(numfmt, e5m2_hand_vectors)
{
    const vec v[] = {
        {1.0, 0x3C}, {1.125, 0x3C}, {1.375, 0x3E}, {-1.375, 0xBE}, {57344.0, 0x7B},
        {61439.0, 0x7B}, {61440.0, 0x7C}, {1e9, 0x7C}, {-1e9, 0xFC}, {INFINITY, 0x7C},
        {-INFINITY, 0xFC}, {0x1p-14, 0x04}, {0x1p-16, 0x01}, {0x1p-17, 0x00}, {3 * 0x1p-17, 0x02},
        {3 * 0x1p-16, 0x03}, {NAN, 0x7E}, {-0.0, 0x80},
    };
    check_vectors(KW_PREC_FP8_E5M2, v, sizeof v / sizeof v[0]);
}

/* Every fp8 pattern decodes and re-encodes to itself (round-trip of the value set). */
Test(numfmt, fp8_value_sets_round_trip)
{
    for (int p = KW_PREC_FP8_E4M3; p <= KW_PREC_FP8_E5M2; p++)
        for (uint32_t b = 0; b < 256; b++) {
            double v = kw_numfmt_decode((kw_prec)p, b);
            if (isnan(v) || isinf(v))
                continue;
            cr_assert_eq(kw_numfmt_encode((kw_prec)p, v), b, "%s %#x", kw_prec_name(p), b);
            cr_assert_eq(kw_numfmt_round_d((kw_prec)p, v), v);
        }
}

Test(numfmt, unit_roundoff_and_max_match_model_facts)
{
    cr_assert_eq(kw_numfmt_unit_roundoff(KW_PREC_FP32), 0x1p-24);
    cr_assert_eq(kw_numfmt_unit_roundoff(KW_PREC_FP16), 0x1p-11);
    cr_assert_eq(kw_numfmt_unit_roundoff(KW_PREC_BF16), 0x1p-8);
    cr_assert_eq(kw_numfmt_unit_roundoff(KW_PREC_FP8_E4M3), 0x1p-4);
    cr_assert_eq(kw_numfmt_unit_roundoff(KW_PREC_FP8_E5M2), 0x1p-3);
    cr_assert_eq(kw_numfmt_max(KW_PREC_FP16), 65504.0);
    cr_assert_eq(kw_numfmt_max(KW_PREC_FP8_E4M3), 448.0);
    cr_assert_eq(kw_numfmt_max(KW_PREC_FP8_E5M2), 57344.0);
}

Test(numfmt, arrays_match_scalars_and_fp32_is_ieee)
{
    double src[] = {1.0 + 0x1p-30, -3.3, 1e-45, 1e39, NAN, 0.1};
    double dst[6];
    kw_numfmt_round_array_d(KW_PREC_FP32, dst, src, 6);
    for (int i = 0; i < 6; i++) {
        if (isnan(src[i]))
            cr_assert(isnan(dst[i]));
        else
            cr_assert_eq(dst[i], (double)(float)src[i]);
    }
    float fs[] = {1.5f, 0.1f, -7e-5f, 70000.0f};
    float fd[4];
    kw_numfmt_round_array(KW_PREC_FP16, fd, fs, 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(fd[i], kw_numfmt_round(KW_PREC_FP16, fs[i]));
    cr_assert(isinf(fd[3]));
}

Test(numfmt, int8_unit_quantiser)
{
    cr_assert_eq(kw_numfmt_round_d(KW_PREC_INT8, 2.5), 2.0);  /* tie to even */
    cr_assert_eq(kw_numfmt_round_d(KW_PREC_INT8, 3.5), 4.0);
    cr_assert_eq(kw_numfmt_round_d(KW_PREC_INT8, -2.5), -2.0);
    cr_assert_eq(kw_numfmt_round_d(KW_PREC_INT8, 300.0), 127.0);
    cr_assert_eq(kw_numfmt_round_d(KW_PREC_INT8, -300.0), -128.0);
    cr_assert_eq(kw_numfmt_encode(KW_PREC_INT8, -1.0), 0xFFu);
    cr_assert_eq(kw_numfmt_decode(KW_PREC_INT8, 0x80u), -128.0);
    cr_assert(isnan(kw_numfmt_round_d(KW_PREC_INT8, NAN)));
}

/* |x - q s| <= s/2 for every element (TensorRT symmetric scheme), per tensor and
 * per channel, on data with outlier channels; and max|x| maps to +-127. */
Test(numfmt, int8_error_never_exceeds_half_step)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 99);
    enum { ROWS = 64, COLS = 257 };
    static double x[ROWS * COLS], fq[ROWS * COLS];
    static int8_t q[ROWS * COLS];
    double scales[ROWS];
    for (int trial = 0; trial < 20; trial++) {
        for (int i = 0; i < ROWS * COLS; i++) {
            x[i] = gsl_ran_gaussian_ziggurat(r, 1.0);
            if (i % COLS == 5)
                x[i] *= 60.0; /* an outlier channel */
        }
        double s;
        kw_numfmt_int8_quantize(q, &s, x, ROWS * COLS);
        cr_assert(s > 0.0);
        int hit_max = 0;
        for (int i = 0; i < ROWS * COLS; i++) {
            cr_assert_leq(fabs(x[i] - q[i] * s), 0.5 * s * (1.0 + 1e-12), "i=%d", i);
            cr_assert(q[i] >= -127 && q[i] <= 127);
            hit_max |= (q[i] == 127 || q[i] == -127);
        }
        cr_assert(hit_max);
        kw_numfmt_int8_quantize_rows(q, scales, x, ROWS, COLS);
        for (int rr = 0; rr < ROWS; rr++)
            for (int c = 0; c < COLS; c++) {
                double e = fabs(x[rr * COLS + c] - q[rr * COLS + c] * scales[rr]);
                cr_assert_leq(e, 0.5 * scales[rr] * (1.0 + 1e-12));
            }
        double sf = kw_numfmt_int8_fake_quant(fq, x, ROWS * COLS);
        cr_assert_eq(sf, s);
        for (int i = 0; i < ROWS * COLS; i++)
            cr_assert_leq(fabs(x[i] - fq[i]), 0.5 * s * (1.0 + 1e-12));
    }
    double zero[4] = {0, 0, 0, 0}, s0;
    int8_t q0[4] = {1, 1, 1, 1};
    kw_numfmt_int8_quantize(q0, &s0, zero, 4);
    cr_assert_eq(s0, 0.0);
    cr_assert_eq(q0[0], 0);
    gsl_rng_free(r);
}
