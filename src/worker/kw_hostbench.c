/* kw_hostbench.c - the timed loops of kw_hostbench.h.
 *
 * Design choice: peak-seeking loops written the way the kernels are written
 * (GCC vectors, target_clones), not vendor peak figures: the model compared
 * with these kernels should see the rates these kernels can reach here.
 * 12 accumulators cover FMA latency x issue width of current x86 cores (4
 * cycles x 2 pipes = 8 in flight; Agner Fog, instruction tables), so the FMA
 * loop is throughput-bound, not latency-bound.
 */
#include <math.h>
#include <string.h>

#include "kw_hostbench.h"
#include "kw_kern.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#define KW_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KW_CLONES
#endif

#pragma GCC diagnostic ignored "-Wpsabi" /* vectors stay inside this file */
typedef float v16f __attribute__((vector_size(64)));
typedef float v16fu __attribute__((vector_size(64), aligned(4), may_alias));
typedef unsigned int v16u __attribute__((vector_size(64)));
typedef unsigned short v16hu __attribute__((vector_size(32), aligned(2), may_alias));

/* Multipliers the FMA loop cycles through: a small L1-resident array. */
#define KW_FMA_TABLE 64

KW_CLONES static double kw_fma_vec(long iters, const float *mf, const uint16_t *mh, int bf16)
{
    v16f a0 = {0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0,
         a9 = a0, a10 = a0, a11 = a0;
    v16f x = *(const v16fu *)mf;
    for (long i = 0; i < iters; i++) {
        int j = (int)(i & (KW_FMA_TABLE / 16 - 1)) * 16;
        v16f m;
        if (bf16)
            m = (v16f)(__builtin_convertvector(*(const v16hu *)(mh + j), v16u) << 16);
        else
            m = *(const v16fu *)(mf + j);
        a0 = a0 * m + x; a1 = a1 * m + x; a2 = a2 * m + x; a3 = a3 * m + x;
        a4 = a4 * m + x; a5 = a5 * m + x; a6 = a6 * m + x; a7 = a7 * m + x;
        a8 = a8 * m + x; a9 = a9 * m + x; a10 = a10 * m + x; a11 = a11 * m + x;
    }
    v16f s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
    double t = 0.0;
    for (int i = 0; i < 16; i++)
        t += s[i];
    return t;
}

static double kw_fma_scalar(long iters, const float *mf)
{
    float a[12] = {0};
    float x = mf[1];
    for (long i = 0; i < iters; i++) {
        float m = mf[i & (KW_FMA_TABLE - 1)];
        for (int k = 0; k < 12; k++)
            a[k] = a[k] * m + x;
    }
    double t = 0.0;
    for (int k = 0; k < 12; k++)
        t += a[k];
    return t;
}

double kw_hostbench_fma(long iters, int bf16, int scalar)
{
    float mf[KW_FMA_TABLE];
    uint16_t mh[KW_FMA_TABLE];
    /* multipliers just below 1 and a small addend: the accumulators converge
     * to x / (1 - m) and never overflow or go subnormal */
    for (int i = 0; i < KW_FMA_TABLE; i++) {
        mf[i] = 0.5f + (float)i / (4.0f * KW_FMA_TABLE);
        uint32_t u;
        memcpy(&u, &mf[i], sizeof u);
        mh[i] = (uint16_t)(u >> 16);
    }
    return scalar ? kw_fma_scalar(iters, mf) : kw_fma_vec(iters, mf, mh, bf16);
}

KW_CLONES double kw_hostbench_stream(float *y, const float *x, size_t n, float s)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        *(v16fu *)(y + i) = *(const v16fu *)(x + i) * s + *(v16fu *)(y + i);
    for (; i < n; i++)
        y[i] = x[i] * s + y[i];
    return y[n / 2];
}

double kw_hostbench_epilogue(float *x, size_t n, const float *bias, size_t nb)
{
    kw_kern_epilogue_f32(x, n, bias, nb, KW_ACT_GELU);
    return x[n / 2];
}

double kw_hostbench_exp(float *y, const float *x, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        y[i] = expf(x[i]);
        sum += y[i];
    }
    return sum;
}

size_t kw_hostbench_chase(const uint32_t *next, long steps)
{
    size_t p = 0;
    for (long i = 0; i < steps; i++)
        p = next[p];
    return p;
}
