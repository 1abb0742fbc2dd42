/* kw_kern.c - the CPU kernels of kw_kern.h: a tiled, packed or direct GEMM
 * core under a register micro-kernel, the GEMM + epilogue operator, attention
 * unfused / QK+softmax / flash, and their fp64 references.
 *
 * Design choice: one GEMM core serves every product (the operator GEMM,
 * attention's QK^T and PV, flash's block products), so a knob means the same
 * thing everywhere and one micro-kernel carries the speed. The micro-kernel is
 * written with GCC vector extensions (16-float vectors, no intrinsics) and
 * compiled three times with target_clones (AVX-512, AVX2+FMA, baseline x86-64)
 * where the compiler supports it, so one binary runs fast on this host and
 * correctly on any other; elsewhere the vectors lower to whatever the target
 * has. Intrinsics were rejected: they would tie the file to one ISA.
 *
 * What the knobs do here (and why it costs what it costs):
 *   tile_m/tile_n/tile_k  the cache blocking of C tiles and K panels;
 *   loop_order  mnk / nmk: C tile stationary, k innermost, m or n tiles
 *               outermost (which operand the walk re-reads); kmn: k panels
 *               outermost, C accumulated in memory across panels;
 *   split_k     K cut into split_k ranges, each a partial C in fp32 that a
 *               reduction pass sums in a fixed order (deterministic);
 *   double_buffer  on: A and B panels packed contiguous (converted to fp32 on
 *               the way) with the next rows prefetched; off: the micro-kernel
 *               reads the operands where they lie, converting bf16 per load;
 *   fuse_epilogue  bias + activation applied in the GEMM's store (or the
 *               reduction), else a separate pass over C;
 *   fuse_attention none: S = QK^T written whole, softmax pass, PV;
 *               qk_softmax: softmax of each query block's score rows while hot,
 *               P written, PV; flash: online softmax (Milakov & Gimelshein,
 *               arXiv 1805.02867; Dao et al., arXiv 2205.14135 Alg. 1) over KV
 *               blocks, nothing of size N x N written. Decode (one query)
 *               packs the query heads sharing a KV head as the rows of one
 *               instance, so K and V are read once per KV head.
 * Threads split independent work items (C tiles x K splits, attention
 * instances x query blocks) in contiguous ranges; every item is computed by
 * one thread in a fixed order, so results do not depend on the thread count.
 *
 * The reference: every output element in fp64 from the same stored inputs,
 * with a rounding-error bound from Higham, "Accuracy and Stability of
 * Numerical Algorithms" (2nd ed.), eq. 3.5: |fl(x.y) - x.y| <= gamma_k |x|.|y|,
 * gamma_k = k u / (1 - k u), u = 2^-24 for fp32. A kernel outside its bound
 * is wrong, whatever the cause.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "kw_error.h"
#include "kw_kern.h"

#define MR KW_KERN_MR
#define NR KW_KERN_NR

/* fp32 unit roundoff (IEEE 754 binary32, round to nearest) and bf16's (8 significant bits). */
#define KW_U_FP32 (1.0 / 16777216.0)
#define KW_U_BF16 (1.0 / 256.0)
/* Evaluation error of the activations in fp32 ulps: the vector exp (Cephes
 * expf, about 1 ulp), one add, one division and the cubic around it; 8
 * leaves room for all of them. */
#define KW_MATHF_ULPS 8.0
/* Largest slope of the activations, the factor an error in the pre-activation
 * grows by: GELU (tanh form) 1.129 at x ~ 1.5, SiLU 1.100 at x ~ 2.4 (both from
 * the maximum of the closed-form derivative). */
#define KW_ACT_LIPSCHITZ 1.13
/* GELU, tanh approximation (Hendrycks & Gimpel, arXiv 1606.08415, section 2). */
#define KW_GELU_C 0.7978845608028654 /* sqrt(2/pi) */
#define KW_GELU_A 0.044715
/* Inputs: uniform in [-1, 1); GEMM weights scaled by 1/sqrt(K) and the bias
 * to [-0.5, 0.5) so pre-activations are O(1), where GELU/SiLU bend. */
#define KW_BIAS_SCALE 0.5
/* Rows of C one job slice of the elementwise passes covers. */
#define KW_ROWS_PER_SLICE 8
/* Rows ahead the packing loop prefetches (the next panel's first rows). */
#define KW_PREFETCH_ROWS 4

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#define KW_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KW_CLONES
#endif

/* 16-float vectors passed between static functions of this file only: the
 * ABI note GCC gives for them (-Wpsabi) concerns calls across objects. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float v16f __attribute__((vector_size(64)));
typedef float v16fu __attribute__((vector_size(64), aligned(4), may_alias));
typedef unsigned int v16u __attribute__((vector_size(64)));
typedef unsigned short v16hu __attribute__((vector_size(32), aligned(2), may_alias));

uint16_t kw_kern_to_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u) /* inf / NaN: truncate, keep NaN quiet */
        return (uint16_t)((u >> 16) | ((u & 0xffffu) ? 0x40u : 0u));
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float kw_kern_from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline float kw_ld(const void *p, kw_kdt dt, long i)
{
    return dt == KW_KDT_F32 ? ((const float *)p)[i] : kw_kern_from_bf16(((const uint16_t *)p)[i]);
}

static inline void kw_st(void *p, kw_kdt dt, long i, float x)
{
    if (dt == KW_KDT_F32)
        ((float *)p)[i] = x;
    else
        ((uint16_t *)p)[i] = kw_kern_to_bf16(x);
}

static inline v16f kw_ld16(const void *p, kw_kdt dt, long i)
{
    if (dt == KW_KDT_F32)
        return *(const v16fu *)((const float *)p + i);
    v16u w = __builtin_convertvector(*(const v16hu *)((const uint16_t *)p + i), v16u) << 16;
    return (v16f)w;
}

static size_t kw_dt_bytes(kw_kdt dt) { return dt == KW_KDT_F32 ? 4 : 2; }

typedef int v16i __attribute__((vector_size(64)));
typedef unsigned short v16h __attribute__((vector_size(32)));

static inline void kw_st16(void *p, kw_kdt dt, long i, v16f x)
{
    if (dt == KW_KDT_F32) {
        *(v16fu *)((float *)p + i) = x;
        return;
    }
    v16u u = (v16u)x; /* round to nearest even, as kw_kern_to_bf16 (inputs are finite) */
    u = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    *(v16hu *)((uint16_t *)p + i) = __builtin_convertvector(u, v16h);
}

static inline v16f kw_vsel(v16i mask, v16f a, v16f b) /* mask ? a : b, lane by lane */
{
    return (v16f)(((v16i)a & mask) | ((v16i)b & ~mask));
}

/* expf in vectors: Cephes expf (S. Moshier, cephes/single/expf.c): x = n ln2 + r,
 * |r| <= ln2/2, degree-5 minimax polynomial, 2^n through the exponent bits;
 * about 1 ulp. The input is clamped to [-87, 88] where 2^n stays a normal
 * number (the activations only need exp of large |x| to be huge or tiny). */
#define KW_EXP_HI 88.0f
#define KW_EXP_LO -87.0f
#define KW_LOG2E 1.44269504088896341f
#define KW_LN2_HI 0.693359375f
#define KW_LN2_LO -2.12194440e-4f
static inline v16f kw_vexp(v16f x)
{
    v16f hi = (v16f){0} + KW_EXP_HI, lo = (v16f){0} + KW_EXP_LO;
    x = kw_vsel(x > hi, hi, x);
    x = kw_vsel(x < lo, lo, x);
    v16f fx = x * KW_LOG2E + 0.5f;
    v16i ni = __builtin_convertvector(fx, v16i); /* truncates: floor for fx >= 0 */
    ni += (v16i)(__builtin_convertvector(ni, v16f) > fx); /* -1 where it rounded up */
    v16f n = __builtin_convertvector(ni, v16f);
    v16f r = x - n * KW_LN2_HI - n * KW_LN2_LO;
    v16f p = r * 1.9875691500e-4f + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    v16f y = p * r * r + r + 1.0f;
    return y * (v16f)((ni + 127) << 23);
}

/* Both activations as x sigma(k): SiLU k = x; GELU's tanh form
 * 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)), z = sqrt(2/pi) (x + 0.044715 x^3). */
static inline v16f kw_vact(kw_kact a, v16f x)
{
    v16f k = a == KW_ACT_SILU ? x : 2.0f * (float)KW_GELU_C * (x + (float)KW_GELU_A * x * x * x);
    return x / (1.0f + kw_vexp(-k));
}

/* One row segment of n values: dst = epi ? act(src + bias) : src, each array
 * in its own storage precision (pointers already at the segment). The tail
 * goes through a padded vector so every element takes the same arithmetic. */
KW_CLONES static void kw_epi_row(const void *src, kw_kdt sdt, void *dst, kw_kdt ddt,
                                 const void *bias, kw_kdt bdt, int n, int epi, kw_kact act)
{
    int q = 0;
    for (; q + 16 <= n; q += 16) {
        v16f x = kw_ld16(src, sdt, q);
        if (epi)
            x = kw_vact(act, x + kw_ld16(bias, bdt, q));
        kw_st16(dst, ddt, q, x);
    }
    if (q == n)
        return;
    float xs[16] = {0}, bs[16] = {0}, ys[16];
    for (int i = 0; q + i < n; i++) {
        xs[i] = kw_ld(src, sdt, q + i);
        bs[i] = epi ? kw_ld(bias, bdt, q + i) : 0.0f;
    }
    v16f x = *(v16fu *)xs;
    if (epi)
        x = kw_vact(act, x + *(v16fu *)bs);
    *(v16fu *)ys = x;
    for (int i = 0; q + i < n; i++)
        kw_st(dst, ddt, q + i, ys[i]);
}

static const void *kw_at(const void *p, kw_kdt dt, long i)
{
    return (const char *)p + i * (long)kw_dt_bytes(dt);
}

static double kw_actd(kw_kact a, double x)
{
    if (a == KW_ACT_SILU)
        return x / (1.0 + exp(-x));
    return 0.5 * x * (1.0 + tanh(KW_GELU_C * (x + KW_GELU_A * x * x * x)));
}

static double kw_gamma(double k) { return k * KW_U_FP32 / (1.0 - k * KW_U_FP32); }

/* ---------------- micro-kernels: c[MR][NR] (leading dim ldc) += A B over kc ---------------- */

/* Packed operands: ap[kc][MR], bp[kc][NR], both fp32 and contiguous. */
KW_CLONES static void kw_uk_packed(int kc, const float *restrict ap, const float *restrict bp,
                                   float *restrict c, long ldc)
{
    v16f c00 = *(v16fu *)(c), c01 = *(v16fu *)(c + 16);
    v16f c10 = *(v16fu *)(c + ldc), c11 = *(v16fu *)(c + ldc + 16);
    v16f c20 = *(v16fu *)(c + 2 * ldc), c21 = *(v16fu *)(c + 2 * ldc + 16);
    v16f c30 = *(v16fu *)(c + 3 * ldc), c31 = *(v16fu *)(c + 3 * ldc + 16);
    for (int p = 0; p < kc; p++) {
        v16f b0 = *(const v16fu *)bp, b1 = *(const v16fu *)(bp + 16);
        float a0 = ap[0], a1 = ap[1], a2 = ap[2], a3 = ap[3];
        c00 += a0 * b0; c01 += a0 * b1;
        c10 += a1 * b0; c11 += a1 * b1;
        c20 += a2 * b0; c21 += a2 * b1;
        c30 += a3 * b0; c31 += a3 * b1;
        ap += MR;
        bp += NR;
    }
    *(v16fu *)(c) = c00; *(v16fu *)(c + 16) = c01;
    *(v16fu *)(c + ldc) = c10; *(v16fu *)(c + ldc + 16) = c11;
    *(v16fu *)(c + 2 * ldc) = c20; *(v16fu *)(c + 2 * ldc + 16) = c21;
    *(v16fu *)(c + 3 * ldc) = c30; *(v16fu *)(c + 3 * ldc + 16) = c31;
}

/* Direct operands where they lie: A row-major (lda), B row-major (ldb), each
 * fp32 or bf16 (converted per load). One body, instantiated per type pair so
 * the conversion is chosen outside the loop. */
#define KW_UK_DIRECT(NAME, ADT, BDT)                                                               \
    KW_CLONES static void NAME(int kc, const void *restrict a, long lda, const void *restrict b,   \
                               long ldb, float *restrict c, long ldc)                              \
    {                                                                                              \
        v16f c00 = *(v16fu *)(c), c01 = *(v16fu *)(c + 16);                                        \
        v16f c10 = *(v16fu *)(c + ldc), c11 = *(v16fu *)(c + ldc + 16);                            \
        v16f c20 = *(v16fu *)(c + 2 * ldc), c21 = *(v16fu *)(c + 2 * ldc + 16);                    \
        v16f c30 = *(v16fu *)(c + 3 * ldc), c31 = *(v16fu *)(c + 3 * ldc + 16);                    \
        for (int p = 0; p < kc; p++) {                                                             \
            v16f b0 = kw_ld16(b, BDT, (long)p * ldb), b1 = kw_ld16(b, BDT, (long)p * ldb + 16);    \
            float a0 = kw_ld(a, ADT, p), a1 = kw_ld(a, ADT, lda + p);                              \
            float a2 = kw_ld(a, ADT, 2 * lda + p), a3 = kw_ld(a, ADT, 3 * lda + p);                \
            c00 += a0 * b0; c01 += a0 * b1;                                                        \
            c10 += a1 * b0; c11 += a1 * b1;                                                        \
            c20 += a2 * b0; c21 += a2 * b1;                                                        \
            c30 += a3 * b0; c31 += a3 * b1;                                                        \
        }                                                                                          \
        *(v16fu *)(c) = c00; *(v16fu *)(c + 16) = c01;                                             \
        *(v16fu *)(c + ldc) = c10; *(v16fu *)(c + ldc + 16) = c11;                                 \
        *(v16fu *)(c + 2 * ldc) = c20; *(v16fu *)(c + 2 * ldc + 16) = c21;                         \
        *(v16fu *)(c + 3 * ldc) = c30; *(v16fu *)(c + 3 * ldc + 16) = c31;                         \
    }
KW_UK_DIRECT(kw_uk_ff, KW_KDT_F32, KW_KDT_F32)
KW_UK_DIRECT(kw_uk_fb, KW_KDT_F32, KW_KDT_BF16)
KW_UK_DIRECT(kw_uk_bf, KW_KDT_BF16, KW_KDT_F32)
KW_UK_DIRECT(kw_uk_bb, KW_KDT_BF16, KW_KDT_BF16)

/* ---------------- the GEMM core ---------------- */

/* One product C (+)= alpha A B, A m x k (lda), B k x n (ldb). */
typedef struct kw_mm {
    int m, n, k;
    const void *a;
    long lda;
    kw_kdt at;
    const void *b;
    long ldb;
    kw_kdt bt;
} kw_mm;

/* Per-thread scratch, sized for one tiling (kw_scratch_need). */
typedef struct kw_scratch {
    float *acc; /* tile_m x tile_n C tile */
    float *pa;  /* packed A panel: ceil(tile_m/MR) strips x tile_k x MR */
    float *pb;  /* packed B panel: ceil(tile_n/NR) strips x tile_k x NR */
    float *edge; /* one MR x NR micro-tile for ragged edges of packed panels */
} kw_scratch;

static long kw_rup(long x, long g) { return (x + g - 1) / g * g; }

static size_t kw_scratch_floats(const kw_ktiling *t)
{
    return (size_t)t->tile_m * t->tile_n + (size_t)kw_rup(t->tile_m, MR) * t->tile_k +
           (size_t)t->tile_k * kw_rup(t->tile_n, NR) + (size_t)MR * NR;
}

static void kw_scratch_carve(kw_scratch *s, float *base, const kw_ktiling *t)
{
    s->acc = base;
    s->pa = s->acc + (size_t)t->tile_m * t->tile_n;
    s->pb = s->pa + (size_t)kw_rup(t->tile_m, MR) * t->tile_k;
    s->edge = s->pb + (size_t)t->tile_k * kw_rup(t->tile_n, NR);
}

/* acc[mi x nj] (ldacc) += A[i0:i0+mi, k0:k0+kk] B[k0:k0+kk, j0:j0+nj], in
 * chunks of tile_k; packed or direct per t->dbuf. */
static void kw_mm_block(const kw_mm *mm, const kw_ktiling *t, int i0, int mi, int j0, int nj, int k0,
                        int kk, float *acc, long ldacc, kw_scratch *s)
{
    for (int kc0 = k0; kc0 < k0 + kk; kc0 += t->tile_k) {
        int kc = k0 + kk - kc0 < t->tile_k ? k0 + kk - kc0 : t->tile_k;
        if (t->dbuf) {
            /* Pack A into MR-row strips and B into NR-column strips, zero-padded. */
            for (int ir = 0; ir < mi; ir += MR)
                for (int p = 0; p < kc; p++)
                    for (int r = 0; r < MR; r++) {
                        int i = ir + r;
                        s->pa[(long)ir * kc + p * MR + r] =
                            i < mi ? kw_ld(mm->a, mm->at, (long)(i0 + i) * mm->lda + kc0 + p) : 0.0f;
                    }
            for (int jr = 0; jr < nj; jr += NR) {
                int w = nj - jr < NR ? nj - jr : NR;
                float *dst = s->pb + (long)jr * kc;
                for (int p = 0; p < kc; p++) {
                    long row = (long)(kc0 + p) * mm->ldb + j0 + jr;
                    if (p + KW_PREFETCH_ROWS < kc)
                        __builtin_prefetch((const char *)mm->b +
                                           (row + KW_PREFETCH_ROWS * mm->ldb) * (long)kw_dt_bytes(mm->bt));
                    if (w == NR) {
                        *(v16fu *)(dst + p * NR) = kw_ld16(mm->b, mm->bt, row);
                        *(v16fu *)(dst + p * NR + 16) = kw_ld16(mm->b, mm->bt, row + 16);
                    } else {
                        for (int c = 0; c < NR; c++)
                            dst[p * NR + c] = c < w ? kw_ld(mm->b, mm->bt, row + c) : 0.0f;
                    }
                }
            }
            for (int ir = 0; ir < mi; ir += MR) {
                int h = mi - ir < MR ? mi - ir : MR;
                for (int jr = 0; jr < nj; jr += NR) {
                    int w = nj - jr < NR ? nj - jr : NR;
                    float *c = acc + (long)ir * ldacc + jr;
                    if (h == MR && w == NR) {
                        kw_uk_packed(kc, s->pa + (long)ir * kc, s->pb + (long)jr * kc, c, ldacc);
                        continue;
                    }
                    memset(s->edge, 0, sizeof(float) * MR * NR);
                    kw_uk_packed(kc, s->pa + (long)ir * kc, s->pb + (long)jr * kc, s->edge, NR);
                    for (int r = 0; r < h; r++)
                        for (int q = 0; q < w; q++)
                            c[(long)r * ldacc + q] += s->edge[r * NR + q];
                }
            }
        } else {
            for (int ir = 0; ir < mi; ir += MR) {
                int h = mi - ir < MR ? mi - ir : MR;
                for (int jr = 0; jr < nj; jr += NR) {
                    int w = nj - jr < NR ? nj - jr : NR;
                    float *c = acc + (long)ir * ldacc + jr;
                    long ao = (long)(i0 + ir) * mm->lda + kc0, bo = (long)kc0 * mm->ldb + j0 + jr;
                    if (h == MR && w == NR) {
                        size_t ab = kw_dt_bytes(mm->at), bb = kw_dt_bytes(mm->bt);
                        const char *ap = (const char *)mm->a + ao * (long)ab;
                        const char *bp = (const char *)mm->b + bo * (long)bb;
                        if (mm->at == KW_KDT_F32 && mm->bt == KW_KDT_F32)
                            kw_uk_ff(kc, ap, mm->lda, bp, mm->ldb, c, ldacc);
                        else if (mm->at == KW_KDT_F32)
                            kw_uk_fb(kc, ap, mm->lda, bp, mm->ldb, c, ldacc);
                        else if (mm->bt == KW_KDT_F32)
                            kw_uk_bf(kc, ap, mm->lda, bp, mm->ldb, c, ldacc);
                        else
                            kw_uk_bb(kc, ap, mm->lda, bp, mm->ldb, c, ldacc);
                        continue;
                    }
                    for (int r = 0; r < h; r++)
                        for (int q = 0; q < w; q++) {
                            float sum = c[(long)r * ldacc + q];
                            for (int p = 0; p < kc; p++)
                                sum += kw_ld(mm->a, mm->at, ao + (long)r * mm->lda + p) *
                                       kw_ld(mm->b, mm->bt, bo + (long)p * mm->ldb + q);
                            c[(long)r * ldacc + q] = sum;
                        }
                }
            }
        }
    }
}

/* The whole product on the calling thread, tiles walked in t->order:
 * out[m x n] (ldo) = alpha A B, or += when accumulate. */
static void kw_mm_serial(const kw_mm *mm, const kw_ktiling *t, float *out, long ldo, float alpha,
                         int accumulate, kw_scratch *s)
{
    int tm = t->tile_m, tn = t->tile_n;
    if (t->order == KW_ORDER_KMN) {
        /* K panels outermost. Overwriting: out itself accumulates across the
         * panels, scaled by alpha at the end. Accumulating into an old out:
         * each panel's tile product is added to it (a rounding more per panel). */
        if (accumulate) {
            for (int k0 = 0; k0 < mm->k; k0 += t->tile_k) {
                int kk = mm->k - k0 < t->tile_k ? mm->k - k0 : t->tile_k;
                for (int i0 = 0; i0 < mm->m; i0 += tm)
                    for (int j0 = 0; j0 < mm->n; j0 += tn) {
                        int mi = mm->m - i0 < tm ? mm->m - i0 : tm, nj = mm->n - j0 < tn ? mm->n - j0 : tn;
                        for (int r = 0; r < mi; r++)
                            memset(s->acc + (long)r * tn, 0, sizeof(float) * nj);
                        kw_mm_block(mm, t, i0, mi, j0, nj, k0, kk, s->acc, tn, s);
                        for (int r = 0; r < mi; r++)
                            for (int q = 0; q < nj; q++)
                                out[(long)(i0 + r) * ldo + j0 + q] += alpha * s->acc[(long)r * tn + q];
                    }
            }
            return;
        }
        for (int r = 0; r < mm->m; r++)
            memset(out + (long)r * ldo, 0, sizeof(float) * mm->n);
        for (int k0 = 0; k0 < mm->k; k0 += t->tile_k) {
            int kk = mm->k - k0 < t->tile_k ? mm->k - k0 : t->tile_k;
            for (int i0 = 0; i0 < mm->m; i0 += tm)
                for (int j0 = 0; j0 < mm->n; j0 += tn) {
                    int mi = mm->m - i0 < tm ? mm->m - i0 : tm, nj = mm->n - j0 < tn ? mm->n - j0 : tn;
                    kw_mm_block(mm, t, i0, mi, j0, nj, k0, kk, out + (long)i0 * ldo + j0, ldo, s);
                }
        }
        if (alpha != 1.0f)
            for (int r = 0; r < mm->m; r++)
                for (int q = 0; q < mm->n; q++)
                    out[(long)r * ldo + q] *= alpha;
        return;
    }
    int nti = (mm->m + tm - 1) / tm, ntj = (mm->n + tn - 1) / tn;
    for (int outer = 0; outer < (t->order == KW_ORDER_MNK ? nti : ntj); outer++)
        for (int inner = 0; inner < (t->order == KW_ORDER_MNK ? ntj : nti); inner++) {
            int ti = t->order == KW_ORDER_MNK ? outer : inner, tj = t->order == KW_ORDER_MNK ? inner : outer;
            int i0 = ti * tm, j0 = tj * tn;
            int mi = mm->m - i0 < tm ? mm->m - i0 : tm, nj = mm->n - j0 < tn ? mm->n - j0 : tn;
            for (int r = 0; r < mi; r++)
                memset(s->acc + (long)r * tn, 0, sizeof(float) * nj);
            kw_mm_block(mm, t, i0, mi, j0, nj, 0, mm->k, s->acc, tn, s);
            for (int r = 0; r < mi; r++) {
                float *o = out + (long)(i0 + r) * ldo + j0;
                const float *a = s->acc + (long)r * tn;
                if (accumulate)
                    for (int q = 0; q < nj; q++)
                        o[q] += alpha * a[q];
                else
                    for (int q = 0; q < nj; q++)
                        o[q] = alpha * a[q];
            }
        }
}

static int kw_tiling_check(const kw_ktiling *t)
{
    if (t->tile_m < 1 || t->tile_n < 1 || t->tile_k < 1 || t->split_k < 1 ||
        (unsigned)t->order > KW_ORDER_KMN)
        return kw_error_set(KW_EINPUT, "tiling: tiles and split_k must be >= 1");
    return 0;
}

/* Per-thread scratch of `threads` x floats_each, grown on demand. */
typedef struct kw_arena {
    float *base;
    size_t floats;
} kw_arena;

static int kw_arena_need(kw_arena *ar, size_t floats)
{
    if (floats <= ar->floats)
        return 0;
    float *p = malloc(floats * sizeof(float));
    if (!p)
        return kw_error_set(KW_ENOMEM, "kernel workspace: cannot allocate %zu MiB",
                            floats * sizeof(float) >> 20);
    free(ar->base);
    ar->base = p;
    ar->floats = floats;
    return 0;
}

static int kw_threads_check(kw_pool *pool, int threads)
{
    if (threads < 1 || !pool || threads > kw_pool_size(pool))
        return kw_error_set(KW_EINPUT, "%d threads asked, the pool has %d", threads, kw_pool_size(pool));
    return 0;
}

static void kw_fill(gsl_rng *r, void *p, kw_kdt dt, long n, double scale)
{
    for (long i = 0; i < n; i++)
        kw_st(p, dt, i, (float)((2.0 * gsl_rng_uniform(r) - 1.0) * scale));
}

/* ---------------- GEMM + epilogue ---------------- */

struct kw_kgemm {
    kw_kgemm_shape s;
    void *a, *b, *bias, *c;
    kw_arena work;    /* split-K partials or the kmn accumulator: fp32 */
    kw_arena scratch; /* per-thread tiles and panels */
    double *ref, *tol; /* fp64 reference and per-element bound, at the first check */
};

int kw_kern_gemm_create(kw_kgemm **out, const kw_kgemm_shape *s, unsigned long seed)
{
    *out = NULL;
    if (s->m < 1 || s->n < 1 || s->k < 1)
        return kw_error_set(KW_EINPUT, "gemm: empty shape %d x %d x %d", s->m, s->n, s->k);
    int rc = 0;
    gsl_rng *r = NULL;
    kw_kgemm *g = calloc(1, sizeof *g);
    if (!g)
        return kw_error_set(KW_ENOMEM, "gemm: out of memory");
    g->s = *s;
    size_t eb = kw_dt_bytes(s->dt);
    g->a = malloc(eb * s->m * s->k);
    g->b = malloc(eb * s->k * s->n);
    g->bias = malloc(eb * s->n);
    g->c = malloc(eb * s->m * s->n);
    r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!g->a || !g->b || !g->bias || !g->c || !r) {
        rc = kw_error_set(KW_ENOMEM, "gemm %d x %d x %d: out of memory", s->m, s->n, s->k);
        goto done;
    }
    gsl_rng_set(r, seed);
    kw_fill(r, g->a, s->dt, (long)s->m * s->k, 1.0);
    kw_fill(r, g->b, s->dt, (long)s->k * s->n, 1.0 / sqrt((double)s->k));
    kw_fill(r, g->bias, s->dt, s->n, KW_BIAS_SCALE);
done:
    gsl_rng_free(r);
    if (rc != 0)
        kw_kern_gemm_free(g);
    else
        *out = g;
    return rc;
}

void kw_kern_gemm_free(kw_kgemm *g)
{
    if (!g)
        return;
    free(g->a);
    free(g->b);
    free(g->bias);
    free(g->c);
    free(g->work.base);
    free(g->scratch.base);
    free(g->ref);
    free(g->tol);
    free(g);
}

void kw_kern_epilogue_f32(float *x, size_t n, const float *bias, size_t nb, kw_kact act)
{
    for (size_t i = 0; i < n; i += nb) {
        int w = n - i < nb ? (int)(n - i) : (int)nb;
        kw_epi_row(x + i, KW_KDT_F32, x + i, KW_KDT_F32, bias, KW_KDT_F32, w, 1, act);
    }
}

typedef struct kw_gjob {
    kw_kgemm *g;
    const kw_ktiling *t;
    kw_mm mm;
    int fuse;       /* apply the epilogue where C is stored */
    int nti, ntj;
    long items;     /* split_k x nti x ntj */
    size_t scratch_each;
} kw_gjob;

/* Store rows [i0, i0+mi) x cols [j0, j0+nj) of an fp32 source into C, with
 * the epilogue when asked. */
static void kw_gemm_store(const kw_kgemm *g, const float *src, long lds, int i0, int mi, int j0,
                          int nj, int epi)
{
    const kw_kgemm_shape *s = &g->s;
    for (int r = 0; r < mi; r++)
        kw_epi_row(src + (long)r * lds, KW_KDT_F32,
                   (void *)kw_at(g->c, s->dt, (long)(i0 + r) * s->n + j0), s->dt,
                   kw_at(g->bias, s->dt, j0), s->dt, nj, epi, s->act);
}

static void kw_split_range(const kw_kgemm *g, int split, int splits, int *k0, int *kk)
{
    int per = (g->s.k + splits - 1) / splits;
    int lo = split * per, hi = lo + per < g->s.k ? lo + per : g->s.k;
    *k0 = lo;
    *kk = hi > lo ? hi - lo : 0;
}

/* Item it = (split, outer, inner) with m/n outer per the loop order. */
static void kw_item(const kw_gjob *j, long it, int *split, int *ti, int *tj)
{
    long per = (long)j->nti * j->ntj;
    *split = (int)(it / per);
    long r = it % per;
    if (j->t->order == KW_ORDER_NMK) {
        *tj = (int)(r / j->nti);
        *ti = (int)(r % j->nti);
    } else {
        *ti = (int)(r / j->ntj);
        *tj = (int)(r % j->ntj);
    }
}

static void kw_gemm_job(void *arg, int tid, int n)
{
    kw_gjob *j = arg;
    kw_kgemm *g = j->g;
    const kw_ktiling *t = j->t;
    kw_scratch sc;
    kw_scratch_carve(&sc, g->scratch.base + (size_t)tid * j->scratch_each, t);
    long lo = j->items * tid / n, hi = j->items * (tid + 1) / n;
    int tm = t->tile_m, tn = t->tile_n, M = g->s.m, N = g->s.n, S = t->split_k;
    if (t->order != KW_ORDER_KMN) {
        for (long it = lo; it < hi; it++) {
            int sp, ti, tj, k0, kk;
            kw_item(j, it, &sp, &ti, &tj);
            kw_split_range(g, sp, S, &k0, &kk);
            int i0 = ti * tm, j0 = tj * tn;
            int mi = M - i0 < tm ? M - i0 : tm, nj = N - j0 < tn ? N - j0 : tn;
            for (int r = 0; r < mi; r++)
                memset(sc.acc + (long)r * tn, 0, sizeof(float) * nj);
            if (kk > 0)
                kw_mm_block(&j->mm, t, i0, mi, j0, nj, k0, kk, sc.acc, tn, &sc);
            if (S == 1) {
                kw_gemm_store(g, sc.acc, tn, i0, mi, j0, nj, j->fuse);
            } else {
                float *part = g->work.base + (size_t)sp * M * N;
                for (int r = 0; r < mi; r++)
                    memcpy(part + (long)(i0 + r) * N + j0, sc.acc + (long)r * tn, sizeof(float) * nj);
            }
        }
        return;
    }
    /* kmn: per split, K panels outermost over this thread's C tiles, which
     * accumulate in the fp32 workspace (that split's partial). */
    long per = (long)j->nti * j->ntj;
    for (long a = lo; a < hi;) {
        int sp = (int)(a / per);
        long b = (sp + 1) * per < hi ? (sp + 1) * per : hi;
        int k0, kk;
        kw_split_range(g, sp, S, &k0, &kk);
        float *w = g->work.base + (size_t)sp * M * N;
        for (long it = a; it < b; it++) {
            int s2, ti, tj;
            kw_item(j, it, &s2, &ti, &tj);
            int i0 = ti * tm, j0 = tj * tn, mi = M - i0 < tm ? M - i0 : tm, nj = N - j0 < tn ? N - j0 : tn;
            for (int r = 0; r < mi; r++)
                memset(w + (long)(i0 + r) * N + j0, 0, sizeof(float) * nj);
        }
        for (int kc0 = k0; kc0 < k0 + kk; kc0 += t->tile_k) {
            int kc = k0 + kk - kc0 < t->tile_k ? k0 + kk - kc0 : t->tile_k;
            for (long it = a; it < b; it++) {
                int s2, ti, tj;
                kw_item(j, it, &s2, &ti, &tj);
                int i0 = ti * tm, j0 = tj * tn, mi = M - i0 < tm ? M - i0 : tm, nj = N - j0 < tn ? N - j0 : tn;
                kw_mm_block(&j->mm, t, i0, mi, j0, nj, kc0, kc, w + (long)i0 * N + j0, N, &sc);
            }
        }
        if (S == 1)
            for (long it = a; it < b; it++) {
                int s2, ti, tj;
                kw_item(j, it, &s2, &ti, &tj);
                int i0 = ti * tm, j0 = tj * tn, mi = M - i0 < tm ? M - i0 : tm, nj = N - j0 < tn ? N - j0 : tn;
                kw_gemm_store(g, w + (long)i0 * N + j0, N, i0, mi, j0, nj, j->fuse);
            }
        a = b;
    }
}

/* Split-K reduction: C = sum of the partials in split order (+ fused epilogue). */
static void kw_reduce_job(void *arg, int tid, int n)
{
    kw_gjob *j = arg;
    kw_kgemm *g = j->g;
    int M = g->s.m, N = g->s.n, S = j->t->split_k;
    long lo = (long)M * tid / n, hi = (long)M * (tid + 1) / n;
    float *row = g->scratch.base + (size_t)tid * j->scratch_each;
    for (long i = lo; i < hi; i++) {
        memcpy(row, g->work.base + i * N, sizeof(float) * N);
        for (int sp = 1; sp < S; sp++) {
            const float *p = g->work.base + (size_t)sp * M * N + i * N;
            for (int q = 0; q < N; q++)
                row[q] += p[q];
        }
        kw_gemm_store(g, row, N, (int)i, 1, 0, N, j->fuse);
    }
}

/* Unfused epilogue: its own pass reading and writing C. */
static void kw_epilogue_job(void *arg, int tid, int n)
{
    kw_gjob *j = arg;
    kw_kgemm *g = j->g;
    const kw_kgemm_shape *s = &g->s;
    long r0 = (long)s->m * tid / n, r1 = (long)s->m * (tid + 1) / n;
    for (long i = r0; i < r1; i++) {
        void *row = (void *)kw_at(g->c, s->dt, i * s->n);
        kw_epi_row(row, s->dt, row, s->dt, g->bias, s->dt, s->n, 1, s->act);
    }
}

int kw_kern_gemm_run(kw_kgemm *g, const kw_ktiling *t, int fuse, kw_pool *pool, int threads)
{
    int rc;
    if ((rc = kw_tiling_check(t)) != 0 || (rc = kw_threads_check(pool, threads)) != 0)
        return rc;
    const kw_kgemm_shape *s = &g->s;
    kw_gjob j = {.g = g, .t = t, .fuse = s->epilogue && fuse};
    j.mm = (kw_mm){.m = s->m, .n = s->n, .k = s->k, .a = g->a, .lda = s->k, .at = s->dt,
                   .b = g->b, .ldb = s->n, .bt = s->dt};
    j.nti = (s->m + t->tile_m - 1) / t->tile_m;
    j.ntj = (s->n + t->tile_n - 1) / t->tile_n;
    j.items = (long)t->split_k * j.nti * j.ntj;
    j.scratch_each = kw_scratch_floats(t);
    if (j.scratch_each < (size_t)s->n)
        j.scratch_each = (size_t)s->n; /* the reduction's row */
    int need_work = t->split_k > 1 || t->order == KW_ORDER_KMN;
    if ((rc = kw_arena_need(&g->scratch, j.scratch_each * threads)) != 0 ||
        (need_work && (rc = kw_arena_need(&g->work, (size_t)t->split_k * s->m * s->n)) != 0))
        return rc;
    kw_pool_run(pool, threads, kw_gemm_job, &j);
    if (t->split_k > 1)
        kw_pool_run(pool, threads, kw_reduce_job, &j);
    if (s->epilogue && !fuse)
        kw_pool_run(pool, threads, kw_epilogue_job, &j);
    return 0;
}

static double kw_u_out(kw_kdt dt) { return dt == KW_KDT_BF16 ? KW_U_BF16 : 0.0; }

static int kw_kgemm_reference(kw_kgemm *g)
{
    const kw_kgemm_shape *s = &g->s;
    size_t mn = (size_t)s->m * s->n;
    g->ref = malloc(mn * sizeof(double));
    g->tol = malloc(mn * sizeof(double));
    double *ad = malloc(sizeof(double) * s->k);
    if (!g->ref || !g->tol || !ad) {
        free(ad);
        free(g->ref);
        free(g->tol);
        g->ref = g->tol = NULL;
        return kw_error_set(KW_ENOMEM, "gemm reference: out of memory");
    }
    double uo = kw_u_out(s->dt);
    /* split_k adds at most split_k - 1 additions per element; bound it by k. */
    double gk = kw_gamma((double)s->k + s->k + 2.0);
    for (int i = 0; i < s->m; i++) {
        for (int p = 0; p < s->k; p++)
            ad[p] = kw_ld(g->a, s->dt, (long)i * s->k + p);
        for (int q = 0; q < s->n; q++) {
            double sum = 0.0, mag = 0.0;
            for (int p = 0; p < s->k; p++) {
                double b = kw_ld(g->b, s->dt, (long)p * s->n + q);
                sum += ad[p] * b;
                mag += fabs(ad[p] * b);
            }
            double y = sum, tol;
            if (s->epilogue) {
                double bias = kw_ld(g->bias, s->dt, q);
                double pre = sum + bias;
                y = kw_actd(s->act, pre);
                /* GEMM error (+ the product rounded to storage before an unfused
                 * epilogue adds the bias, + the bias add), through the
                 * activation's slope; then its own evaluation and the output
                 * rounding. */
                tol = KW_ACT_LIPSCHITZ * (gk * (mag + fabs(bias)) + (uo + KW_U_FP32) * (fabs(sum) + fabs(pre))) +
                      (KW_MATHF_ULPS * KW_U_FP32 + uo) * (fabs(y) + fabs(pre));
            } else {
                tol = gk * mag + uo * fabs(y);
            }
            g->ref[(size_t)i * s->n + q] = y;
            g->tol[(size_t)i * s->n + q] = tol + DBL_MIN;
        }
    }
    free(ad);
    return 0;
}

int kw_kern_gemm_check(kw_kgemm *g)
{
    int rc;
    if (!g->ref && (rc = kw_kgemm_reference(g)) != 0)
        return rc;
    const kw_kgemm_shape *s = &g->s;
    size_t mn = (size_t)s->m * s->n, worst = 0;
    double worst_x = 0.0;
    for (size_t i = 0; i < mn; i++) {
        double got = kw_ld(g->c, s->dt, (long)i);
        double x = fabs(got - g->ref[i]) / g->tol[i];
        if (!(x <= worst_x)) { /* NaN counts as the worst */
            worst_x = isnan(x) ? INFINITY : x;
            worst = i;
        }
    }
    if (worst_x > 1.0)
        return kw_error_set(KW_EMODEL,
                            "C[%zu,%zu] = %.9g, fp64 reference %.9g, bound %.3g (%.3g x the bound)",
                            worst / s->n, worst % s->n, kw_ld(g->c, s->dt, (long)worst), g->ref[worst],
                            g->tol[worst], worst_x);
    return 0;
}

void kw_kern_gemm_corrupt(kw_kgemm *g)
{
    long i = (long)(g->s.m / 2) * g->s.n + g->s.n / 2;
    kw_st(g->c, g->s.dt, i, kw_ld(g->c, g->s.dt, i) + 1.0f);
}

const void *kw_kern_gemm_output(const kw_kgemm *g, size_t *bytes)
{
    *bytes = kw_dt_bytes(g->s.dt) * g->s.m * g->s.n;
    return g->c;
}

/* ---------------- attention ---------------- */

struct kw_kattn {
    kw_kattn_shape s;
    void *q, *kt, *v, *o; /* Q [inst][mq][d], K^T [kv inst][d][lk], V [kv inst][lk][d], O like Q */
    float *sbuf;          /* materialised scores / probabilities [inst][mq][lk] (none, qk_softmax) */
    size_t sbuf_floats;
    kw_arena scratch;
    double *ref, *tol;
};

static long kw_inst(const kw_kattn_shape *s) { return (long)s->batch * s->heads; }

int kw_kern_attn_create(kw_kattn **out, const kw_kattn_shape *s, unsigned long seed)
{
    *out = NULL;
    if (s->batch < 1 || s->heads < 1 || s->kv_heads < 1 || s->head_dim < 1 || s->mq < 1 ||
        s->lk < 1 || s->mq > s->lk)
        return kw_error_set(KW_EINPUT, "attention: bad shape (batch, heads, kv_heads, head_dim, "
                                       "queries <= keys must be >= 1)");
    if (s->heads % s->kv_heads != 0)
        return kw_error_set(KW_EINPUT, "attention: heads %d not a multiple of kv_heads %d", s->heads,
                            s->kv_heads);
    int rc = 0;
    gsl_rng *r = NULL;
    kw_kattn *a = calloc(1, sizeof *a);
    if (!a)
        return kw_error_set(KW_ENOMEM, "attention: out of memory");
    a->s = *s;
    size_t eb = kw_dt_bytes(s->dt);
    size_t qn = (size_t)kw_inst(s) * s->mq * s->head_dim;
    size_t kvn = (size_t)s->batch * s->kv_heads * s->lk * s->head_dim;
    a->q = malloc(eb * qn);
    a->o = malloc(eb * qn);
    a->kt = malloc(eb * kvn);
    a->v = malloc(eb * kvn);
    r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!a->q || !a->o || !a->kt || !a->v || !r) {
        rc = kw_error_set(KW_ENOMEM, "attention: out of memory");
        goto done;
    }
    gsl_rng_set(r, seed);
    kw_fill(r, a->q, s->dt, (long)qn, 1.0);
    kw_fill(r, a->kt, s->dt, (long)kvn, 1.0);
    kw_fill(r, a->v, s->dt, (long)kvn, 1.0);
done:
    gsl_rng_free(r);
    if (rc != 0)
        kw_kern_attn_free(a);
    else
        *out = a;
    return rc;
}

void kw_kern_attn_free(kw_kattn *a)
{
    if (!a)
        return;
    free(a->q);
    free(a->kt);
    free(a->v);
    free(a->o);
    free(a->sbuf);
    free(a->scratch.base);
    free(a->ref);
    free(a->tol);
    free(a);
}

typedef struct kw_ajob {
    kw_kattn *a;
    const kw_ktiling *t;
    kw_kattn_mode mode;
    int phase;          /* unfused: 0 scores, 1 softmax pass, 2 PV */
    int grp;            /* decode: query heads sharing a KV head, packed as the rows of one
                         * instance (K/V read once per KV head, as the model plans it); else 1 */
    int rows;           /* query rows per instance: grp (decode) or mq */
    int nqb;            /* query blocks per instance */
    long items;         /* instances x query blocks */
    size_t scratch_each;
    float scale;
} kw_ajob;

static long kw_kv_inst(const kw_kattn_shape *s, long inst)
{
    long b = inst / s->heads, h = inst % s->heads;
    return b * s->kv_heads + h / (s->heads / s->kv_heads);
}

/* Last key query row i may attend (exclusive bound). */
static int kw_key_end(const kw_kattn_shape *s, int i)
{
    return s->causal ? i + (s->lk - s->mq) + 1 : s->lk;
}

/* Key end of row i of an instance: packed decode rows are all query 0. */
static int kw_row_end(const kw_ajob *j, const kw_kattn_shape *s, int i)
{
    return kw_key_end(s, j->grp > 1 ? 0 : i);
}

/* Softmax of row x[0..n) over its first `valid` entries; the rest become 0. */
static void kw_softmax_row(float *x, int n, int valid)
{
    float mx = -INFINITY, sum = 0.0f;
    for (int j = 0; j < valid; j++)
        mx = x[j] > mx ? x[j] : mx;
    for (int j = 0; j < valid; j++) {
        x[j] = expf(x[j] - mx);
        sum += x[j];
    }
    float inv = 1.0f / sum;
    for (int j = 0; j < valid; j++)
        x[j] *= inv;
    for (int j = valid; j < n; j++)
        x[j] = 0.0f;
}

/* Scratch layout per thread: the GEMM core's, then rows for scores (tile_m x
 * lk or tile_m x tile_n), the flash accumulator (tile_m x d) and row stats. */
static size_t kw_attn_scratch(const kw_kattn_shape *s, const kw_ktiling *t)
{
    return kw_scratch_floats(t) + (size_t)t->tile_m * (s->lk > t->tile_n ? s->lk : t->tile_n) +
           (size_t)t->tile_m * s->head_dim + 2 * (size_t)t->tile_m;
}

static void kw_attn_job(void *arg, int tid, int n)
{
    kw_ajob *j = arg;
    kw_kattn *a = j->a;
    const kw_kattn_shape *s = &a->s;
    const kw_ktiling *t = j->t;
    kw_scratch sc;
    float *base = a->scratch.base + (size_t)tid * j->scratch_each;
    kw_scratch_carve(&sc, base, t);
    float *rows = base + kw_scratch_floats(t);
    float *oacc = rows + (size_t)t->tile_m * (s->lk > t->tile_n ? s->lk : t->tile_n);
    float *mrow = oacc + (size_t)t->tile_m * s->head_dim, *lrow = mrow + t->tile_m;
    int d = s->head_dim, lk = s->lk, rq = j->rows;
    long lo = j->items * tid / n, hi = j->items * (tid + 1) / n;
    for (long it = lo; it < hi; it++) {
        /* Query rows of one instance are contiguous (stride d) in Q, O and the
         * scores: a head's mq rows, or (packed decode) the grp heads of a KV group. */
        long inst = it / j->nqb, kvi = j->grp > 1 ? inst : kw_kv_inst(s, inst);
        long row0 = inst * rq;
        int i0 = (int)(it % j->nqb) * t->tile_m, mi = rq - i0 < t->tile_m ? rq - i0 : t->tile_m;
        size_t eb = kw_dt_bytes(s->dt);
        const char *q = (const char *)a->q + ((size_t)row0 + i0) * d * eb;
        const char *kt = (const char *)a->kt + (size_t)kvi * d * lk * eb;
        const char *v = (const char *)a->v + (size_t)kvi * lk * d * eb;
        long orow = row0 + i0;
        float *sb = a->sbuf ? a->sbuf + ((size_t)row0 + i0) * lk : NULL;
        if (j->mode == KW_ATTN_FLASH) {
            for (int r = 0; r < mi; r++) {
                mrow[r] = -INFINITY;
                lrow[r] = 0.0f;
            }
            memset(oacc, 0, sizeof(float) * mi * d);
            int kend = kw_row_end(j, s, i0 + mi - 1);
            for (int j0 = 0; j0 < kend; j0 += t->tile_n) {
                int bc = kend - j0 < t->tile_n ? kend - j0 : t->tile_n;
                kw_mm qk = {.m = mi, .n = bc, .k = d, .a = q, .lda = d, .at = s->dt,
                            .b = kt + (size_t)j0 * eb, .ldb = lk, .bt = s->dt};
                kw_mm_serial(&qk, t, rows, bc, j->scale, 0, &sc);
                for (int r = 0; r < mi; r++) {
                    float *x = rows + (long)r * bc;
                    int valid = kw_row_end(j, s, i0 + r) - j0;
                    valid = valid < 0 ? 0 : valid > bc ? bc : valid;
                    float mx = mrow[r];
                    for (int c = 0; c < valid; c++)
                        mx = x[c] > mx ? x[c] : mx;
                    float alpha = mrow[r] == -INFINITY ? 0.0f : expf(mrow[r] - mx), sum = 0.0f;
                    for (int c = 0; c < valid; c++) {
                        x[c] = expf(x[c] - mx);
                        sum += x[c];
                    }
                    for (int c = valid; c < bc; c++)
                        x[c] = 0.0f;
                    if (valid > 0) {
                        lrow[r] = lrow[r] * alpha + sum;
                        mrow[r] = mx;
                        for (int c = 0; c < d; c++)
                            oacc[(long)r * d + c] *= alpha;
                    }
                }
                kw_mm pv = {.m = mi, .n = d, .k = bc, .a = rows, .lda = bc, .at = KW_KDT_F32,
                            .b = v + (size_t)j0 * d * eb, .ldb = d, .bt = s->dt};
                kw_mm_serial(&pv, t, oacc, d, 1.0f, 1, &sc);
            }
            for (int r = 0; r < mi; r++)
                for (int c = 0; c < d; c++)
                    kw_st(a->o, s->dt, (orow + r) * d + c, oacc[(long)r * d + c] / lrow[r]);
            continue;
        }
        if (j->phase == 0) {
            /* Scores of this query block (qk_softmax: softmax while the rows are hot). */
            kw_mm qk = {.m = mi, .n = lk, .k = d, .a = q, .lda = d, .at = s->dt, .b = kt, .ldb = lk,
                        .bt = s->dt};
            if (j->mode == KW_ATTN_QK_SOFTMAX) {
                kw_mm_serial(&qk, t, rows, lk, j->scale, 0, &sc);
                for (int r = 0; r < mi; r++)
                    kw_softmax_row(rows + (long)r * lk, lk, kw_row_end(j, s, i0 + r));
                memcpy(sb, rows, sizeof(float) * mi * lk);
            } else {
                kw_mm_serial(&qk, t, sb, lk, j->scale, 0, &sc);
            }
        } else if (j->phase == 1) {
            for (int r = 0; r < mi; r++)
                kw_softmax_row(sb + (long)r * lk, lk, kw_row_end(j, s, i0 + r));
        } else {
            kw_mm pv = {.m = mi, .n = d, .k = lk, .a = sb, .lda = lk, .at = KW_KDT_F32, .b = v,
                        .ldb = d, .bt = s->dt};
            kw_mm_serial(&pv, t, oacc, d, 1.0f, 0, &sc);
            for (int r = 0; r < mi; r++)
                for (int c = 0; c < d; c++)
                    kw_st(a->o, s->dt, (orow + r) * d + c, oacc[(long)r * d + c]);
        }
    }
}

int kw_kern_attn_run(kw_kattn *a, const kw_ktiling *t, kw_kattn_mode mode, kw_pool *pool,
                     int threads)
{
    int rc;
    if ((rc = kw_tiling_check(t)) != 0 || (rc = kw_threads_check(pool, threads)) != 0)
        return rc;
    if ((unsigned)mode > KW_ATTN_FLASH)
        return kw_error_set(KW_EINPUT, "attention: unknown fusion mode %d", (int)mode);
    const kw_kattn_shape *s = &a->s;
    kw_ajob j = {.a = a, .t = t, .mode = mode};
    j.grp = s->mq == 1 ? s->heads / s->kv_heads : 1;
    j.rows = s->mq == 1 ? j.grp : s->mq;
    j.nqb = (j.rows + t->tile_m - 1) / t->tile_m;
    j.items = kw_inst(s) / j.grp * j.nqb;
    j.scratch_each = kw_attn_scratch(s, t);
    j.scale = (float)(1.0 / sqrt((double)s->head_dim));
    if ((rc = kw_arena_need(&a->scratch, j.scratch_each * threads)) != 0)
        return rc;
    if (mode == KW_ATTN_FLASH) {
        kw_pool_run(pool, threads, kw_attn_job, &j);
        return 0;
    }
    size_t need = (size_t)kw_inst(s) * s->mq * s->lk;
    if (need > a->sbuf_floats) {
        float *p = malloc(need * sizeof(float));
        if (!p)
            return kw_error_set(KW_ENOMEM, "attention: cannot allocate the %zu MiB score matrix",
                                need * sizeof(float) >> 20);
        free(a->sbuf);
        a->sbuf = p;
        a->sbuf_floats = need;
    }
    for (j.phase = 0; j.phase < 3; j.phase++) {
        if (j.phase == 1 && mode == KW_ATTN_QK_SOFTMAX)
            continue;
        kw_pool_run(pool, threads, kw_attn_job, &j);
    }
    return 0;
}

static int kw_kattn_reference(kw_kattn *a)
{
    const kw_kattn_shape *s = &a->s;
    int d = s->head_dim, lk = s->lk, mq = s->mq;
    size_t on = (size_t)kw_inst(s) * mq * d;
    a->ref = malloc(on * sizeof(double));
    a->tol = malloc(on * sizeof(double));
    double *sc = malloc(sizeof(double) * lk), *mag = malloc(sizeof(double) * lk);
    if (!a->ref || !a->tol || !sc || !mag) {
        free(sc);
        free(mag);
        free(a->ref);
        free(a->tol);
        a->ref = a->tol = NULL;
        return kw_error_set(KW_ENOMEM, "attention reference: out of memory");
    }
    double scale = 1.0 / sqrt((double)d), uo = kw_u_out(s->dt);
    for (long inst = 0; inst < kw_inst(s); inst++) {
        long kvi = kw_kv_inst(s, inst);
        for (int i = 0; i < mq; i++) {
            int kend = kw_key_end(s, i);
            double mx = -INFINITY, dmax = 0.0;
            for (int jj = 0; jj < kend; jj++) {
                double dot = 0.0, m = 0.0;
                for (int c = 0; c < d; c++) {
                    double x = (double)kw_ld(a->q, s->dt, ((long)inst * mq + i) * d + c) *
                               kw_ld(a->kt, s->dt, (kvi * d + c) * lk + jj);
                    dot += x;
                    m += fabs(x);
                }
                sc[jj] = dot * scale;
                mag[jj] = m * scale;
                mx = sc[jj] > mx ? sc[jj] : mx;
                dmax = mag[jj] > dmax ? mag[jj] : dmax;
            }
            double sum = 0.0;
            for (int jj = 0; jj < kend; jj++) {
                sc[jj] = exp(sc[jj] - mx);
                sum += sc[jj];
            }
            /* Score error <= gamma_(d+2) sum|q k| scale (Higham 3.5, +scale and
             * max subtraction); softmax of perturbed scores moves each p by at
             * most 2 ds relatively (numerator and normaliser); exp's own error,
             * the online rescaling (one multiply per KV block, at most lk) and
             * PV's sum add gamma_(lk) + ulps; all of it weighted by sum p|v|. */
            double ds = kw_gamma((double)d + 2.0) * dmax;
            double rel = 4.0 * ds + kw_gamma(2.0 * lk + 4.0) + 2.0 * KW_MATHF_ULPS * KW_U_FP32;
            for (int c = 0; c < d; c++) {
                double o = 0.0, w = 0.0;
                for (int jj = 0; jj < kend; jj++) {
                    double vv = kw_ld(a->v, s->dt, (kvi * lk + jj) * d + c);
                    o += sc[jj] * vv;
                    w += sc[jj] * fabs(vv);
                }
                o /= sum;
                w /= sum;
                size_t idx = ((size_t)inst * mq + i) * d + c;
                a->ref[idx] = o;
                a->tol[idx] = rel * w + uo * fabs(o) + DBL_MIN;
            }
        }
    }
    free(sc);
    free(mag);
    return 0;
}

int kw_kern_attn_check(kw_kattn *a)
{
    int rc;
    if (!a->ref && (rc = kw_kattn_reference(a)) != 0)
        return rc;
    const kw_kattn_shape *s = &a->s;
    size_t on = (size_t)kw_inst(s) * s->mq * s->head_dim, worst = 0;
    double worst_x = 0.0;
    for (size_t i = 0; i < on; i++) {
        double got = kw_ld(a->o, s->dt, (long)i);
        double x = fabs(got - a->ref[i]) / a->tol[i];
        if (!(x <= worst_x)) {
            worst_x = isnan(x) ? INFINITY : x;
            worst = i;
        }
    }
    if (worst_x > 1.0)
        return kw_error_set(KW_EMODEL, "O[%zu] = %.9g, fp64 reference %.9g, bound %.3g (%.3g x the bound)",
                            worst, kw_ld(a->o, s->dt, (long)worst), a->ref[worst], a->tol[worst],
                            worst_x);
    return 0;
}

void kw_kern_attn_corrupt(kw_kattn *a)
{
    kw_st(a->o, a->s.dt, 0, kw_ld(a->o, a->s.dt, 0) + 1.0f);
}

const void *kw_kern_attn_output(const kw_kattn *a, size_t *bytes)
{
    *bytes = kw_dt_bytes(a->s.dt) * (size_t)kw_inst(&a->s) * a->s.mq * a->s.head_dim;
    return a->o;
}
