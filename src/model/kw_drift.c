/* kw_drift.c - stage 4: emulate a block's numerics as the candidate computes
 * them, against an fp64 reference, on a bounded seeded sample.
 *
 * What is emulated (src/model-facts.md#precision)
 *   - GEMM/conv (conv as implicit GEMM, K = kh*kw*in_c): operands rounded to
 *     `precision`; bf16/fp16/fp32 unscaled; fp8 with one per-tensor scale
 *     amax/fmt_max per operand (Transformer Engine's per-tensor scaling,
 *     arXiv 2209.05433 section 4); int8 with a per-tensor activation scale and
 *     per-output-channel weight scales (TensorRT's default scheme), summed
 *     exactly (int32: K*127^2 < 2^31 for K < 133k) and dequantised in fp32.
 *     Products are exact; sums are rounded once per addition to
 *     `accum_precision`, in tile_k chunks whose sums are added to their split-K
 *     part, the split_k parts reduced at the end (blocked summation, Higham,
 *     "Accuracy and Stability of Numerical Algorithms" 2nd ed. section 4.2).
 *     Outputs are stored in the activation format: `precision` for fp32/bf16/
 *     fp16, bf16 for fp8/int8 (8-bit GEMMs write 16-bit outputs).
 *   - 2:4 sparsity: in every 4 consecutive weights along K the 2 smallest in
 *     magnitude are zeroed before rounding; the reference stays dense, so the
 *     pruning shows up like a precision change. Synthetic dense weights lose
 *     about a tenth of their energy, so 2:4 fails the default budget: the
 *     honest answer for weights that were not trained sparse.
 *   - attention (per sampled head): QK^T over head_dim in tile_k chunks;
 *     logits scaled in fp32, stored in the activation format when softmax is a
 *     separate kernel (fuse_attention=none), then softmax in
 *     `softmax_precision` (max, exp, sum, divide each rounded); P, a tensor
 *     in memory, rounded to the operand format (fp8 with the static scale
 *     fmt_max, since P <= 1) and PV summed over the context in tile_k chunks.
 *     Under flash the unnormalised P stays in registers and is rounded
 *     unscaled (its values are <= 1, FlashAttention-3's fp8 path). flash: FlashAttention-2's online softmax (arXiv 2307.08691
 *     Algorithm 1) over KV blocks of the attention group's tile_n: running
 *     max, correction exp(m_old - m_new) applied to the running sum and to the
 *     accumulator, normalisation at the end. int8 candidates run attention in
 *     fp16 (int8 kernels quantise the linear layers only).
 *   - norm (RMSNorm, eps 1e-5 as Llama-2's config), residual add and the
 *     activation (SiLU, times the up projection when gated) are computed in
 *     fp32 and stored in the activation format.
 *
 * The sample, and what it means for the estimate
 *   Exact emulation of a 7B attention block at seq 8192 is ~10^11 MACs; the
 *   check must cost at most 5 ms. Every dot product keeps its full K (the
 *   accumulation length drives the error), but each op is emulated on a
 *   sample: KW_DRIFT_ROWS tokens x KW_DRIFT_COLS output columns per GEMM,
 *   KW_DRIFT_HEADS heads x KW_DRIFT_QROWS query tokens attending over a
 *   context capped at KW_DRIFT_CTX_MAX tokens (so PV sums at most that many
 *   terms; long-context accumulation error beyond the cap is not seen).
 *   Ops are chained exactly where the producer computed what the consumer
 *   reads (norm -> GEMM, GEMM -> elementwise act/residual on the same
 *   columns). Where a consumer needs values the sample did not compute (the
 *   other 4080 inputs of the output projection, the K/V of the other context
 *   tokens), they are synthesised: reference values with the RMS of the
 *   producer's sampled reference outputs, and the candidate's values carrying
 *   an error with the RMS the producer's sample measured (Gaussian). So each
 *   op's arithmetic is emulated exactly and errors propagate at their measured
 *   size; what is lost is the correlation of errors across ops.
 *   The judged figure is the block's output before the final residual add
 *   (the branch): including the skip, whose values both sides share, would
 *   divide the error by ||x||/||branch||, a property of the layer's depth, not
 *   of the candidate. rel_rms_stream reports it with the skip.
 *   The judged sample is 8 x 16 = 128 values: the relative standard error of
 *   an RMS over n roughly Gaussian errors is about 1/sqrt(2n) = 6%, so a
 *   figure within ~15% of the budget can flip with the seed; the seed is
 *   fixed per run so every candidate sees the same data. (Measured over six
 *   seeds on the 7B attention block the spread is larger, 10-12% for plain
 *   precision changes and up to 20% with 2:4 sparsity: the synthesised
 *   inputs and the outlier channels change with the seed too.)
 *
 * Data: seeded Gaussians (ziggurat over a GSL-seeded sequence, see "Gaussian
 *   draws" below). Block input: N(0,1) with
 *   KW_DRIFT_OUTLIERS outlier channels scaled by KW_DRIFT_OUTLIER_GAIN
 *   (LLM.int8(), Dettmers et al. arXiv 2208.07339: a handful of hidden
 *   dimensions carry values ~20x the rest); weights N(0,1)/sqrt(K); conv
 *   inputs N(0,1). The random numbers depend only on the block, the shape's
 *   context and the seed, so they are drawn once onto a tape that the cache
 *   keeps; every candidate replays the same tape, together with the fp64
 *   reference outputs of the GEMM and attention ops (also candidate-free).
 *
 * Cost (2-core AMD EPYC VM shared with other jobs, thread CPU time, -O2;
 * `make bench KW_BENCH_FLAGS='--only speed'`, the median over 24 random
 * mappings of the worst of default.xml's shapes): 7B attention block
 * (q/k/v/o 4096x4096, 32x128 heads, seq 8192) about 10 ms for the first
 * check of a shape, which draws its ~490k Gaussians with GSL (about 7 ms of
 * it) and computes the fp64 reference; 2.7 ms per new candidate once the
 * cache holds the shape's data; a cached result 0.5 us. The emulation is
 * 2.1M emulated MACs of the GEMMs (each rounded as the candidate rounds
 * them), the same in fp64 for the reference, operand rounding, 65k MACs of
 * attention. What made it fast: the sums in GCC vector lanes with an AVX2
 * clone (bit-identical to the scalar code, see below), fp32 accumulation of
 * 8/16-bit operands in float lanes, and q/k/v's shared input rounded once.
 * The draws stay GSL's (a hand-written generator halved the first check but
 * is not worth leaving GSL for: a tuning run pays it once per shape).
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_drift.h"
#include "kw_error.h"
#include "kw_mapping.h"
#include "kw_mix.h"
#include "kw_numfmt.h"

/* Sample sizes (see the header comment for their effect on the estimate). */
#define KW_DRIFT_ROWS 8        /* tokens per GEMM/norm/elementwise op */
#define KW_DRIFT_COLS 16       /* output columns per GEMM */
#define KW_DRIFT_HEADS 1       /* attention heads emulated */
#define KW_DRIFT_QROWS 2       /* query tokens per head */
#define KW_DRIFT_CTX_MAX 256   /* attention context cap: 2 KV blocks at tile_n = 128 */
#define KW_DRIFT_COLS_MAX 256  /* widest dot-product fan-out (context cap, head_dim) */
#define KW_DRIFT_DIM_MAX 65536 /* largest K/width accepted */
#define KW_DRIFT_OUTLIERS 6    /* LLM.int8(): outliers concentrate in ~6 hidden dims */
#define KW_DRIFT_OUTLIER_GAIN 20.0
#define KW_DRIFT_NORM_EPS 1e-5 /* Llama-2 config.json rms_norm_eps */
#define KW_DRIFT_RUN_ALLOCS 512

enum { KW_ACC_EXACT = KW_PREC_COUNT }; /* int8 x int8 summed in int32 */

/* ---------------- the tape of random numbers ---------------- */

/* Memory that never moves: a list of chunks, each take contiguous in one
 * chunk. A take that does not fit the rest of the current chunk moves on to
 * the next chunk that holds it, or adds one at least twice the last; chunks
 * are given back only with the list. Used twice: for the tape (a build draws
 * straight onto it and hands out pointers into it, no scratch copy to fault
 * in and copy over) and for the per-thread arena (see kw_arena). */
#define KW_CHUNKS_MAX 24

typedef struct kw_chunks {
    struct {
        char *base;
        size_t cap, used; /* bytes */
    } c[KW_CHUNKS_MAX];
    int n, cur; /* chunks held; the one being filled */
} kw_chunks;

static void kw_chunks_free(kw_chunks *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->c[i].base);
    memset(a, 0, sizeof *a);
}

/* bytes from the list, the first chunk `first` bytes (NULL: out of memory or chunks) */
static void *kw_chunks_take(kw_chunks *a, size_t bytes, size_t first)
{
    for (; a->cur < a->n; a->cur++)
        if (a->c[a->cur].used + bytes <= a->c[a->cur].cap) {
            char *p = a->c[a->cur].base + a->c[a->cur].used;
            a->c[a->cur].used += bytes;
            return p;
        }
    if (a->n == KW_CHUNKS_MAX)
        return NULL;
    size_t cap = a->n ? 2 * a->c[a->n - 1].cap : first;
    if (cap < bytes)
        cap = bytes;
    char *base = malloc(cap);
    if (!base)
        return NULL;
    a->c[a->n].base = base;
    a->c[a->n].cap = cap;
    a->c[a->n].used = bytes;
    a->cur = a->n++;
    return base;
}

/* The draws are taken from chunks in request order; a replay, making the same
 * requests in the same order, steps to the next chunk at the same points (a
 * chunk's used bytes say where its requests end). */
#define KW_TAPE_FIRST ((size_t)1 << 18) /* bytes: 64k draws */

typedef struct kw_tape {
    kw_chunks z; /* float draws: float halves the memory a check streams through; N(0,1) draws need no more */
    double *ref; /* the fp64 reference outputs of the GEMM and attention ops, in op order: */
    size_t nref, refcap; /* candidate-independent, so a replay skips computing them */
} kw_tape;

static void kw_tape_clear(kw_tape *t)
{
    kw_chunks_free(&t->z);
    free(t->ref);
    memset(t, 0, sizeof *t);
}

/* Vector types for the kernels (GCC vector extensions; see "the GEMM
 * sample's fan-out" below for why they are bit-identical to scalar code). */
typedef double kw_vd __attribute__((vector_size(32)));
typedef uint64_t kw_vu __attribute__((vector_size(32)));
typedef float kw_vf __attribute__((vector_size(16)));
#define KW_VL 4 /* lanes */
#define KW_VANY(m) ((m)[0] | (m)[1] | (m)[2] | (m)[3])
#if defined(__x86_64__) && defined(__linux__) && (defined(__clang__) || __GNUC__ >= 6) && \
    !defined(KW_NO_SIMD_CLONES) /* -DKW_NO_SIMD_CLONES: the plain build only */
#define KW_SIMD __attribute__((target_clones("avx2", "default")))
#else
#define KW_SIMD
#endif

/* ---------------- Gaussian draws ----------------
 * GSL's gsl_ran_gaussian_ziggurat (Marsaglia & Tsang, J. Stat. Software 5(8),
 * 2000, with Doornik's 2005 fix of the layer/value bit sharing) on a taus2
 * stream seeded with the data seed. It is the check's largest single cost
 * (about 12 ns a draw here, ~490k draws when a shape's data is first drawn),
 * paid once per (block, shape, seed): the tape of draws is kept in the cache
 * and replayed for every later candidate. The state is per run. */
typedef struct kw_gstate {
    gsl_rng *rng;
} kw_gstate;

static void kw_gauss_fill(float *out, size_t n, kw_gstate *g)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (float)gsl_ran_gaussian_ziggurat(g->rng, 1.0);
}

static int kw_gauss_start(kw_gstate *g, uint64_t seed)
{
    g->rng = gsl_rng_alloc(gsl_rng_taus2);
    if (!g->rng)
        return -1;
    gsl_rng_set(g->rng, (unsigned long)seed);
    return 0;
}

static void kw_gauss_stop(kw_gstate *g)
{
    gsl_rng_free(g->rng);
    g->rng = NULL;
}

int kw_drift_gaussians(float *out, size_t n, uint64_t seed)
{
    kw_gstate st;
    if (kw_gauss_start(&st, seed) != 0)
        return kw_error_set(KW_ENOMEM, "drift: out of memory");
    kw_gauss_fill(out, n, &st);
    kw_gauss_stop(&st);
    return 0;
}

/* ---------------- one emulation run ---------------- */

typedef struct kw_tens {
    int rows, width, ncols; /* sample rows x present columns of a width-wide tensor */
    double *ref, *cand;     /* rows x ncols; column c is logical column c*(width/ncols) */
} kw_tens;

/* Per-thread scratch reused between runs: a check allocates a few MB of
 * arrays, and fresh pages from the kernel cost as much as the arithmetic (on
 * the shared VM a first touch costs more than the check's sums: a run that
 * reused nothing took 30 ms of CPU where one on touched pages took 1 ms). So
 * the arena is a chunk list kept while the thread lives: a run takes its
 * arrays from it in order, and every page is faulted in once per thread, not
 * once per run or per growth. */
#define KW_ARENA_FIRST ((size_t)1 << 20) /* bytes */

typedef kw_chunks kw_arena;

static pthread_key_t kw_arena_key;
static pthread_once_t kw_arena_once = PTHREAD_ONCE_INIT;
static int kw_arena_ok;

static void kw_arena_destroy(void *p)
{
    if (p)
        kw_chunks_free(p);
    free(p);
}

static void kw_arena_init(void)
{
    kw_arena_ok = pthread_key_create(&kw_arena_key, kw_arena_destroy) == 0;
}

static kw_arena *kw_arena_get(void)
{
    pthread_once(&kw_arena_once, kw_arena_init);
    if (!kw_arena_ok)
        return NULL;
    kw_arena *a = pthread_getspecific(kw_arena_key);
    if (!a) {
        a = calloc(1, sizeof *a);
        if (a && pthread_setspecific(kw_arena_key, a) != 0) {
            free(a);
            a = NULL;
        }
    }
    return a;
}

/* Where the arena stands, to give back what was taken after it (an op's
 * scratch arrays, dead once the op's outputs are computed). */
typedef struct kw_arena_mark {
    int cur;
    size_t used;
} kw_arena_mark;

static kw_arena_mark kw_arena_at(const kw_arena *a)
{
    kw_arena_mark m = {0, 0};
    if (a) { /* chunks past cur are unused in this run: takes only move forward */
        m.cur = a->cur;
        m.used = a->cur < a->n ? a->c[a->cur].used : 0;
    }
    return m;
}

static void kw_arena_back(kw_arena *a, kw_arena_mark m)
{
    if (!a)
        return;
    for (int i = m.cur; i < a->n; i++)
        a->c[i].used = i == m.cur ? m.used : 0;
    a->cur = m.cur;
}

/* Before and after a run: every chunk free again, its pages kept. */
static void kw_arena_reset(kw_arena *a)
{
    if (!a)
        return;
    for (int i = 0; i < a->n; i++)
        a->c[i].used = 0;
    a->cur = 0;
}

typedef struct kw_run {
    kw_arena *arena;
    const kw_block *b;
    const kw_mapping *m;
    const kw_tape *replay; /* replaying a built tape ... */
    int seg;               /* at byte cur of draw chunk seg, reference value rcur */
    size_t cur, rcur;
    kw_tape *build;        /* ... or drawing a new one */
    kw_gstate zs; /* state of the Gaussian sequence when drawing */
    const double *qa_src; /* the GEMM input last rounded to the operand format, */
    size_t qa_n;          /* its size, */
    double *qa, qa_s;     /* the rounded values and their scale */
    const double *qa_f_src; /* qa narrowed to float (kw_narrow), */
    float *qa_f;
    int qa_f_ok;            /* and whether its values allow the float kernel */
    void *allocs[KW_DRIFT_RUN_ALLOCS];
    int n_allocs;
    int failed;
    kw_prec in_p, acc_p, sm_p, store_p, attn_p;
    int ctx, decode;
    uint64_t seed;
} kw_run;

static double *kw_alloc(kw_run *r, size_t n)
{
    if (r->failed)
        return NULL;
    n = (n + 7u) & ~(size_t)7u; /* 64-byte aligned blocks */
    double *p = r->arena ? kw_chunks_take(r->arena, n * sizeof *p, KW_ARENA_FIRST) : NULL;
    if (p)
        return p;
    if (r->n_allocs >= KW_DRIFT_RUN_ALLOCS) {
        r->failed = 1;
        return NULL;
    }
    p = malloc(n * sizeof *p);
    if (!p) {
        r->failed = 1;
        return NULL;
    }
    r->allocs[r->n_allocs++] = p;
    return p;
}

/* n standard normals (stored as float): drawn (onto the tape when building
 * one) or replayed. */
static const float *kw_z(kw_run *r, size_t n)
{
    if (r->failed)
        return NULL;
    if (r->replay) {
        const kw_chunks *t = &r->replay->z;
        size_t bytes = n * sizeof(float);
        if (r->seg < t->n && r->cur + bytes > t->c[r->seg].used && r->cur == t->c[r->seg].used) {
            r->seg++; /* the build went on to the next chunk here */
            r->cur = 0;
        }
        if (r->seg >= t->n || r->cur + bytes > t->c[r->seg].used) {
            r->failed = 2;
            return NULL;
        }
        const float *p = (const float *)(t->c[r->seg].base + r->cur);
        r->cur += bytes;
        return p;
    }
    float *out = r->build ? kw_chunks_take(&r->build->z, n * sizeof *out, KW_TAPE_FIRST)
                          : (float *)kw_alloc(r, (n + 1) / 2);
    if (!out) {
        r->failed = 1;
        return NULL;
    }
    kw_gauss_fill(out, n, &r->zs);
    return out;
}

/* An op's reference output: copied from the tape when replaying (returns 1),
 * else 0 and the caller computes it and hands it to kw_ref_keep. */
static int kw_ref_replay(kw_run *r, double *dst, size_t n)
{
    if (!r->replay || r->failed)
        return 0;
    if (r->rcur + n > r->replay->nref) {
        r->failed = 2;
        return 0;
    }
    memcpy(dst, r->replay->ref + r->rcur, n * sizeof *dst);
    r->rcur += n;
    return 1;
}

static void kw_ref_keep(kw_run *r, const double *src, size_t n)
{
    kw_tape *t = r->build;
    if (!t || r->failed)
        return;
    if (t->nref + n > t->refcap) {
        size_t cap = t->refcap ? t->refcap : 1024;
        while (cap < t->nref + n)
            cap *= 2;
        double *p = realloc(t->ref, cap * sizeof *p);
        if (!p) {
            r->failed = 1;
            return;
        }
        t->ref = p;
        t->refcap = cap;
    }
    memcpy(t->ref + t->nref, src, n * sizeof *src);
    t->nref += n;
}

static int kw_tens_alloc(kw_run *r, kw_tens *t, int rows, int width, int ncols)
{
    t->rows = rows;
    t->width = width;
    t->ncols = ncols;
    t->ref = kw_alloc(r, (size_t)rows * ncols);
    t->cand = kw_alloc(r, (size_t)rows * ncols);
    return r->failed ? -1 : 0;
}

static void kw_tens_stats(const kw_tens *t, double *ref_rms, double *err_rms)
{
    double s = 0.0, e = 0.0;
    size_t n = (size_t)t->rows * t->ncols;
    for (size_t i = 0; i < n; i++) {
        s += t->ref[i] * t->ref[i];
        e += (t->cand[i] - t->ref[i]) * (t->cand[i] - t->ref[i]);
    }
    *ref_rms = n ? sqrt(s / n) : 1.0;
    *err_rms = n ? sqrt(e / n) : 0.0;
}

/* ref[i] = sigma z1[i], cand[i] = ref[i] + err z2[i]: a synthesised
 * reference and the candidate's copy carrying an error of RMS err. */
KW_SIMD static void kw_synth(double *ref, double *cand, const float *z1, const float *z2,
                             size_t n, double sigma, double err)
{
    size_t i = 0;
    for (; i + KW_VL <= n; i += KW_VL) {
        kw_vf a, b;
        memcpy(&a, z1 + i, sizeof a);
        memcpy(&b, z2 + i, sizeof b);
        kw_vd rv = sigma * __builtin_convertvector(a, kw_vd);
        kw_vd cv = rv + err * __builtin_convertvector(b, kw_vd);
        memcpy(ref + i, &rv, sizeof rv);
        memcpy(cand + i, &cv, sizeof cv);
    }
    for (; i < n; i++) {
        ref[i] = sigma * z1[i];
        cand[i] = ref[i] + err * z2[i];
    }
}

/* A complete rows x width tensor for a consumer: t itself when it holds all of
 * it, else synthesised with t's reference RMS and measured error RMS (t NULL:
 * N(0,1), no error). */
static int kw_full(kw_run *r, kw_tens *out, const kw_tens *t, int rows, int width)
{
    if (t && t->ref && t->ncols == width && t->width == width && t->rows >= rows) {
        *out = *t;
        out->rows = rows;
        return 0;
    }
    double sigma = 1.0, err = 0.0;
    if (t && t->ref)
        kw_tens_stats(t, &sigma, &err);
    if (!isfinite(err))
        err = INFINITY;
    size_t n = (size_t)rows * width;
    const float *z1 = kw_z(r, n), *z2 = kw_z(r, n);
    if (kw_tens_alloc(r, out, rows, width, width) != 0 || !z1 || !z2)
        return -1;
    kw_synth(out->ref, out->cand, z1, z2, n, sigma, err);
    return 0;
}

/* The block input: N(0,1) with a few outlier channels, exactly fp32 on both sides. */
static int kw_block_input(kw_run *r, kw_tens *out, int rows, int width)
{
    const float *z = kw_z(r, (size_t)rows * width);
    if (kw_tens_alloc(r, out, rows, width, width) != 0 || !z)
        return -1;
    for (size_t i = 0; i < (size_t)rows * width; i++)
        out->ref[i] = z[i];
    for (int i = 0; i < KW_DRIFT_OUTLIERS && width > 2 * KW_DRIFT_OUTLIERS; i++) {
        int c = (int)(kw_mix_splitmix64(r->seed + 0x51u + (uint64_t)i) % (uint64_t)width);
        for (int row = 0; row < rows; row++)
            out->ref[(size_t)row * width + c] *= KW_DRIFT_OUTLIER_GAIN;
    }
    for (size_t i = 0; i < (size_t)rows * width; i++)
        out->cand[i] = out->ref[i] = (double)(float)out->ref[i];
    return 0;
}

/* ---------------- summation emulation ---------------- */

static inline __attribute__((always_inline)) double kw_acc_rnd(int p, double x)
{
    if (p == KW_PREC_FP32)
        return (double)(float)x;
    if (p == KW_ACC_EXACT)
        return x;
    return kw_round_d_inline((kw_prec)p, x);
}

/* The blocked summation's shape (kw_drift_dot): tile_k at least 1 (set in
 * place), and the length of each of the split_k contiguous K ranges. */
static inline int kw_blocking(int K, int *tile_k, int split_k)
{
    if (*tile_k < 1)
        *tile_k = 1;
    if (split_k < 1)
        split_k = 1;
    int per = (K + split_k - 1) / split_k;
    return per < 1 ? 1 : per;
}

/* out[j] = sum_k a[k] * w[k*nc + j] for j < nc (w k-major), summed as
 * kw_drift_dot documents. nc independent chains run side by side. */
static inline __attribute__((always_inline)) void kw_dot_cols_t(double *out, const double *a,
                                                                 const double *w, int K, int nc,
                                                                 int p, int tile_k, int split_k)
{
    double tot[KW_DRIFT_COLS_MAX], part[KW_DRIFT_COLS_MAX], chunk[KW_DRIFT_COLS_MAX];
    int per = kw_blocking(K, &tile_k, split_k);
    for (int j = 0; j < nc; j++)
        tot[j] = 0.0;
    for (int k0 = 0; k0 < K; k0 += per) {
        int k1 = k0 + per < K ? k0 + per : K;
        for (int j = 0; j < nc; j++)
            part[j] = 0.0;
        for (int c0 = k0; c0 < k1; c0 += tile_k) {
            int c1 = c0 + tile_k < k1 ? c0 + tile_k : k1;
            for (int j = 0; j < nc; j++)
                chunk[j] = 0.0;
            for (int k = c0; k < c1; k++) {
                double av = a[k];
                const double *row = w + (size_t)k * nc;
                for (int j = 0; j < nc; j++)
                    chunk[j] = kw_acc_rnd(p, chunk[j] + av * row[j]);
            }
            for (int j = 0; j < nc; j++)
                part[j] = kw_acc_rnd(p, part[j] + chunk[j]);
        }
        for (int j = 0; j < nc; j++)
            tot[j] = kw_acc_rnd(p, tot[j] + part[j]);
    }
    memcpy(out, tot, (size_t)nc * sizeof *out);
}

/* ---- the GEMM sample's fan-out, KW_DRIFT_COLS columns, in vectors ----
 * The same summation as kw_dot_cols_t, four columns per vector (GCC vector
 * extensions: pairs of SSE2 registers on plain x86-64; an AVX2 clone of each
 * kernel, chosen at load time, where the CPU has it), so the results are
 * bit-identical on either: each lane does the scalar code's IEEE operations in
 * the same order, and products of operands of at most 24 significant bits are
 * exact, so contracting them into an FMA would change nothing (the clones are
 * AVX2 without FMA anyway). Rounding to the accumulator is kw_numfmt_rnd_d's
 * on the bit pattern, branch-free; a lane that is NaN or infinite, or would
 * overflow, or (for bf16) falls in the target's subnormal range, is only
 * flagged, and the caller redoes those values with the scalar code: rare in
 * practice, so the vector path is all that usually runs. */
/* x rounded to mbits explicit mantissa bits, smallest normal 2^emin; lanes
 * with |x| >= ovf_at (where rounding passes the largest finite value), NaN
 * or inf are flagged in *special. sub: round the target's subnormals here
 * (fixed spacing 2^(emin - mbits), ties to even by adding 2^52), else flag
 * them too. */
static inline __attribute__((always_inline)) void kw_vrnd(kw_vd *xp, int mbits, int emin,
                                                           double ovf_at, int sub, kw_vu *special)
{
    kw_vd x = *xp;
    const int shift = 52 - mbits;
    kw_vu u = (kw_vu)x;
    /* the sign bit rides along: a finite magnitude never carries into it */
    kw_vu r = (u + ((((uint64_t)1 << (shift - 1)) - 1u) + ((u >> shift) & 1u))) &
               ~(((uint64_t)1 << shift) - 1u);
    kw_vd ax = (kw_vd)(u & KW_F64_ABS);
    kw_vu bad = (kw_vu)(~(ax < ovf_at));
    kw_vu tiny = (kw_vu)(ax < ldexp(1.0, emin));
    if (sub) {
        kw_vd y = ax * ldexp(1.0, mbits - emin);
        y = ((y + 0x1p52) - 0x1p52) * ldexp(1.0, emin - mbits);
        kw_vu ys = (kw_vu)y | (u & ~KW_F64_ABS);
        r = (r & ~tiny) | (ys & tiny);
    } else {
        bad |= tiny & (kw_vu)(ax != 0.0);
    }
    *special |= bad;
    *xp = (kw_vd)r;
}

/* Where rounding to a format overflows: its largest finite value plus half
 * an ulp of it (the tie rounds up: the largest value's mantissa is odd). */
#define KW_BF16_OVF (0x1.fep127 + 0x1p119)
#define KW_FP16_OVF (65504.0 + 16.0)
#define KW_E5M2_OVF (57344.0 + 4096.0)

static inline __attribute__((always_inline)) void kw_vacc(int p, kw_vd *x, kw_vu *special)
{
    if (p == KW_PREC_FP32)
        *x = __builtin_convertvector(__builtin_convertvector(*x, kw_vf), kw_vd);
    else if (p == KW_PREC_BF16)
        kw_vrnd(x, 7, -126, KW_BF16_OVF, 0, special);
    else if (p == KW_PREC_FP16)
        kw_vrnd(x, 10, -14, KW_FP16_OVF, 1, special);
    /* KW_ACC_EXACT: as it is */
}

/* nc a multiple of KW_VL, at most KW_DRIFT_COLS_MAX (a constant 16 keeps the
 * sums in registers) */
static inline __attribute__((always_inline)) void kw_dotv_t(double *out, const double *a,
                                                             const double *w, int K, int nc,
                                                             int p, int tile_k, int split_k)
{
    kw_vd tot[KW_DRIFT_COLS_MAX / KW_VL], part[KW_DRIFT_COLS_MAX / KW_VL];
    kw_vd chunk[KW_DRIFT_COLS_MAX / KW_VL];
    const int nv = nc / KW_VL;
    kw_vu special = {0};
    int per = kw_blocking(K, &tile_k, split_k);
    for (int v = 0; v < nv; v++)
        tot[v] = (kw_vd){0};
    for (int k0 = 0; k0 < K; k0 += per) {
        int k1 = k0 + per < K ? k0 + per : K;
        for (int v = 0; v < nv; v++)
            part[v] = (kw_vd){0};
        for (int c0 = k0; c0 < k1; c0 += tile_k) {
            int c1 = c0 + tile_k < k1 ? c0 + tile_k : k1;
            for (int v = 0; v < nv; v++)
                chunk[v] = (kw_vd){0};
            for (int k = c0; k < c1; k++) {
                double av = a[k];
                const double *row = w + (size_t)k * nc;
#pragma GCC unroll 4
                for (int v = 0; v < nv; v++) {
                    kw_vd wv;
                    memcpy(&wv, row + KW_VL * v, sizeof wv);
                    chunk[v] += av * wv;
                    kw_vacc(p, &chunk[v], &special);
                }
            }
            for (int v = 0; v < nv; v++) {
                part[v] += chunk[v];
                kw_vacc(p, &part[v], &special);
            }
        }
        for (int v = 0; v < nv; v++) {
            tot[v] += part[v];
            kw_vacc(p, &tot[v], &special);
        }
    }
    if (KW_VANY(special)) /* NaN, overflow or a bf16 subnormal on the way */
        kw_dot_cols_t(out, a, w, K, nc, p, tile_k, split_k);
    else
        memcpy(out, tot, (size_t)nc * sizeof *out);
}

/* fp32 accumulation of operands that are exact in fewer than 12 significant
 * bits (bf16, fp16, fp8): the same sums as kw_dotv_t's in float lanes, eight
 * to a vector. Bit-identical: the products are exact in float, and rounding the
 * double sum of two floats to float equals rounding the exact sum (double has
 * at least 2 x 24 + 2 bits; Figueroa, "When is double rounding innocuous?",
 * SIGNUM Newsl. 1995). The caller makes sure no product or sum can leave
 * float's range. */
typedef float kw_vf8 __attribute__((vector_size(32)));
#define KW_FCOLS (KW_DRIFT_COLS / 8)

KW_SIMD static void kw_dot16f(double *out, const float *a, const float *w, int K, int tile_k,
                              int split_k)
{
    kw_vf8 tot[KW_FCOLS] = {{0}}, part[KW_FCOLS], chunk[KW_FCOLS];
    int per = kw_blocking(K, &tile_k, split_k);
    for (int k0 = 0; k0 < K; k0 += per) {
        int k1 = k0 + per < K ? k0 + per : K;
        for (int v = 0; v < KW_FCOLS; v++)
            part[v] = (kw_vf8){0};
        for (int c0 = k0; c0 < k1; c0 += tile_k) {
            int c1 = c0 + tile_k < k1 ? c0 + tile_k : k1;
            for (int v = 0; v < KW_FCOLS; v++)
                chunk[v] = (kw_vf8){0};
            for (int k = c0; k < c1; k++) {
                float av = a[k];
                for (int v = 0; v < KW_FCOLS; v++) {
                    kw_vf8 wv;
                    memcpy(&wv, w + (size_t)k * KW_DRIFT_COLS + 8 * v, sizeof wv);
                    chunk[v] += av * wv;
                }
            }
            for (int v = 0; v < KW_FCOLS; v++)
                part[v] += chunk[v];
        }
        for (int v = 0; v < KW_FCOLS; v++)
            tot[v] += part[v];
    }
    float o[KW_DRIFT_COLS];
    memcpy(o, tot, sizeof o);
    for (int j = 0; j < KW_DRIFT_COLS; j++)
        out[j] = o[j];
}

/* One entry for both kernels, the accumulator format a constant in each case
 * so everything inlines. */
static inline __attribute__((always_inline)) void kw_dot_any_t(double *out, const double *a,
                                                               const double *w, int K, int nc,
                                                               int p, int tile_k, int split_k)
{
    if (nc == KW_DRIFT_COLS)
        kw_dotv_t(out, a, w, K, KW_DRIFT_COLS, p, tile_k, split_k);
    else if (nc % KW_VL == 0 && nc <= KW_DRIFT_COLS_MAX)
        kw_dotv_t(out, a, w, K, nc, p, tile_k, split_k);
    else
        kw_dot_cols_t(out, a, w, K, nc, p, tile_k, split_k);
}

KW_SIMD static void kw_dot_cols(double *out, const double *a, const double *w, int K, int nc,
                                int p, int tile_k, int split_k)
{
    switch (p) {
    case KW_PREC_FP32:
        kw_dot_any_t(out, a, w, K, nc, KW_PREC_FP32, tile_k, split_k);
        break;
    case KW_PREC_BF16:
        kw_dot_any_t(out, a, w, K, nc, KW_PREC_BF16, tile_k, split_k);
        break;
    case KW_PREC_FP16:
        kw_dot_any_t(out, a, w, K, nc, KW_PREC_FP16, tile_k, split_k);
        break;
    case KW_ACC_EXACT:
        kw_dot_any_t(out, a, w, K, nc, KW_ACC_EXACT, tile_k, split_k);
        break;
    default: /* not an accumulator format: the scalar rounding handles any */
        kw_dot_cols_t(out, a, w, K, nc, p, tile_k, split_k);
        break;
    }
}

int kw_drift_dot_cols(double *out, const double *x, const double *w, size_t k, size_t nc,
                      kw_prec accum, int tile_k, int split_k)
{
    if (nc < 1 || nc > KW_DRIFT_COLS_MAX || k > (size_t)KW_DRIFT_DIM_MAX)
        return kw_error_set(KW_EINPUT, "drift: dot of %zu columns of length %zu (at most %d of %d)",
                            nc, k, KW_DRIFT_COLS_MAX, KW_DRIFT_DIM_MAX);
    kw_dot_cols(out, x, w, (int)k, (int)nc, accum, tile_k, split_k);
    return 0;
}

double kw_drift_dot(const double *x, const double *y, size_t k, kw_prec accum, int tile_k,
                    int split_k)
{
    double out;
    kw_dot_cols(&out, x, y, (int)k, 1, accum, tile_k, split_k);
    return out;
}

/* ---------------- operands ---------------- */

/* max |x[i * stride]| over i < n; NaN when one is NaN. */
KW_SIMD static double kw_absmax(const double *x, size_t n, size_t stride)
{
    double m = 0.0;
    int nan = 0;
    size_t i = 0;
    if (stride == 1) {
        kw_vd mv = {0};
        kw_vu nv = {0};
        for (; i + KW_VL <= n; i += KW_VL) {
            kw_vd v;
            memcpy(&v, x + i, sizeof v);
            kw_vd a = (kw_vd)((kw_vu)v & KW_F64_ABS);
            kw_vu up = (kw_vu)(a > mv);
            mv = (kw_vd)(((kw_vu)a & up) | ((kw_vu)mv & ~up));
            nv |= (kw_vu)(a != a);
        }
        nan = KW_VANY(nv) != 0;
        for (int l = 0; l < KW_VL; l++)
            m = mv[l] > m ? mv[l] : m;
    }
    for (; i < n; i++) {
        double a = fabs(x[i * stride]);
        m = a > m ? a : m;
        nan |= a != a;
    }
    return nan ? NAN : m;
}

/* x rounded to operand format p, two lanes at a time: the same value set and
 * ties as kw_round_d_inline; lanes it would saturate, overflow or clip, and
 * NaN/inf, are flagged in *special for the scalar code. */
static inline __attribute__((always_inline)) void kw_vfmt(kw_prec p, kw_vd *x, kw_vu *special)
{
    switch (p) {
    case KW_PREC_FP32:
        *x = __builtin_convertvector(__builtin_convertvector(*x, kw_vf), kw_vd);
        break;
    case KW_PREC_BF16: /* its subnormals (below 2^-126) only flagged */
        kw_vrnd(x, 7, -126, KW_BF16_OVF, 0, special);
        break;
    case KW_PREC_FP16:
        kw_vrnd(x, 10, -14, KW_FP16_OVF, 1, special);
        break;
    case KW_PREC_FP8_E4M3: /* saturating: everything from the largest value up is flagged */
        kw_vrnd(x, 3, -6, 448.0, 1, special);
        break;
    case KW_PREC_FP8_E5M2:
        kw_vrnd(x, 2, -14, KW_E5M2_OVF, 1, special);
        break;
    default: { /* int8: rne(x) for |x| <= 127 (kw_numfmt_int8_rne) */
        kw_vu u = (kw_vu)*x;
        kw_vd ax = (kw_vd)(u & KW_F64_ABS);
        *special |= (kw_vu)(~(ax <= 127.0));
        kw_vd y = (ax + 0x1p52) - 0x1p52;
        *x = (kw_vd)((kw_vu)y | (u & ~KW_F64_ABS));
        break;
    }
    }
}

/* dst[i] = round_p(src[i] * inv[i % ninv]) for i < n (n a multiple of ninv):
 * one scale (ninv 1) or one per column of a k-major matrix. In blocks of
 * KW_RBLOCK values; a block with a flagged lane is redone in scalar. */
#define KW_RBLOCK 32
static inline __attribute__((always_inline)) void kw_round_n(double *dst, const double *src,
                                                              size_t n, const double *inv,
                                                              size_t ninv, kw_prec p)
{
    size_t i = 0, j = 0;
    kw_vd s1 = (kw_vd){0} + inv[0];
    if (ninv == 1 || ninv % KW_VL == 0) /* a vector never straddles two rows of scales */
        for (; i + KW_RBLOCK <= n; i += KW_RBLOCK) {
            kw_vu special = {0};
            for (size_t b = 0; b < KW_RBLOCK; b += KW_VL) {
                kw_vd x, s = s1;
                if (ninv > 1) {
                    memcpy(&s, inv + j, sizeof s);
                    j = j + KW_VL == ninv ? 0 : j + KW_VL;
                }
                memcpy(&x, src + i + b, sizeof x);
                x *= s;
                kw_vfmt(p, &x, &special);
                memcpy(dst + i + b, &x, sizeof x);
            }
            if (KW_VANY(special))
                for (size_t b = 0; b < KW_RBLOCK; b++)
                    dst[i + b] = kw_round_d_inline(p, src[i + b] * inv[(i + b) % ninv]);
        }
    for (; i < n; i++)
        dst[i] = kw_round_d_inline(p, src[i] * inv[i % ninv]);
}

KW_SIMD static void kw_round_to(double *dst, const double *src, size_t n, const double *inv,
                                size_t ninv, kw_prec p)
{
    switch (p) {
    case KW_PREC_FP32:
        kw_round_n(dst, src, n, inv, ninv, KW_PREC_FP32);
        break;
    case KW_PREC_BF16:
        kw_round_n(dst, src, n, inv, ninv, KW_PREC_BF16);
        break;
    case KW_PREC_FP16:
        kw_round_n(dst, src, n, inv, ninv, KW_PREC_FP16);
        break;
    case KW_PREC_FP8_E4M3:
        kw_round_n(dst, src, n, inv, ninv, KW_PREC_FP8_E4M3);
        break;
    case KW_PREC_FP8_E5M2:
        kw_round_n(dst, src, n, inv, ninv, KW_PREC_FP8_E5M2);
        break;
    default:
        kw_round_n(dst, src, n, inv, ninv, KW_PREC_INT8);
        break;
    }
}

static double kw_scale_of(double amax, kw_prec p)
{
    return amax > 0.0 && isfinite(amax) ? amax / kw_numfmt_max(p) : 1.0;
}

static int kw_is_scaled(kw_prec p)
{
    return p == KW_PREC_FP8_E4M3 || p == KW_PREC_FP8_E5M2 || p == KW_PREC_INT8;
}

/* n values into operand format p; returns the dequantisation scale (1 for
 * unscaled formats; see the file comment for the schemes). */
static double kw_operand(double *dst, const double *src, size_t n, kw_prec p)
{
    double s = kw_is_scaled(p) ? kw_scale_of(kw_absmax(src, n, 1), p) : 1.0;
    double inv = 1.0 / s; /* x * (1/s) instead of x / s: the scale's own rounding is immaterial */
    kw_round_to(dst, src, n, &inv, 1, p);
    return s;
}

/* A k-major K x nc weight into format p with one scale per column (output
 * channel) into s[j]. */
static void kw_operand_cols(double *dst, double *s, const double *src, int K, int nc, kw_prec p)
{
    double inv[KW_DRIFT_COLS_MAX];
    for (int j = 0; j < nc; j++) {
        s[j] = kw_scale_of(kw_absmax(src + j, (size_t)K, (size_t)nc), p);
        inv[j] = 1.0 / s[j];
    }
    kw_round_to(dst, src, (size_t)K * nc, inv, (size_t)nc, p);
}

static double kw_store(const kw_run *r, double v)
{
    return kw_round_d_inline(r->store_p, (double)(float)v);
}

/* ---------------- ops ---------------- */

static void kw_group_tiling(const kw_run *r, const kw_op *op, int *tile_k, int *split_k,
                            int *tile_n)
{
    int g = kw_mapping_block_group(r->b, op->group);
    const kw_tiling *t = g >= 0 && g < r->m->n_groups ? &r->m->tiling[g] : NULL;
    *tile_k = t && t->tile_k > 0 ? t->tile_k : KW_DEFAULT_TILE_K;
    *split_k = t && t->split_k > 0 ? t->split_k : 1;
    *tile_n = t && t->tile_n > 0 ? t->tile_n : KW_DEFAULT_TILE_N;
}

/* 2:4 structured pruning along K of a k-major K x nc weight: keep the two
 * largest magnitudes of every 4 (NVIDIA Ampere sparse tensor cores' pattern);
 * of equal magnitudes the earlier one counts as the smaller. Each value's rank
 * among its four is counted with six comparisons, four columns a vector; a
 * value with fewer than two smaller than it is pruned. (Weights are finite.) */
typedef int64_t kw_vi __attribute__((vector_size(32)));
KW_SIMD static void kw_prune_2_4(double *w, int K, int nc)
{
    for (int k0 = 0; k0 + 4 <= K; k0 += 4) {
        double *r0 = w + (size_t)k0 * nc;
        int j = 0;
        if (nc % KW_VL == 0)
            for (; j < nc; j += KW_VL) {
                kw_vd v0, v1, v2, v3;
                memcpy(&v0, r0 + j, sizeof v0);
                memcpy(&v1, r0 + (size_t)nc + j, sizeof v1);
                memcpy(&v2, r0 + (size_t)2 * nc + j, sizeof v2);
                memcpy(&v3, r0 + (size_t)3 * nc + j, sizeof v3);
                kw_vd a0 = (kw_vd)((kw_vu)v0 & KW_F64_ABS), a1 = (kw_vd)((kw_vu)v1 & KW_F64_ABS);
                kw_vd a2 = (kw_vd)((kw_vu)v2 & KW_F64_ABS), a3 = (kw_vd)((kw_vu)v3 & KW_F64_ABS);
                /* mEO: E counts as smaller than O (-1) */
                kw_vi m01 = (kw_vi)(a0 <= a1), m02 = (kw_vi)(a0 <= a2), m03 = (kw_vi)(a0 <= a3);
                kw_vi m12 = (kw_vi)(a1 <= a2), m13 = (kw_vi)(a1 <= a3), m23 = (kw_vi)(a2 <= a3);
                /* minus the number of values smaller than each */
                kw_vi c0 = ~m01 + ~m02 + ~m03, c1 = m01 + ~m12 + ~m13;
                kw_vi c2 = m02 + m12 + ~m23, c3 = m03 + m13 + m23;
                v0 = (kw_vd)((kw_vu)v0 & ~(kw_vu)(c0 > -2));
                v1 = (kw_vd)((kw_vu)v1 & ~(kw_vu)(c1 > -2));
                v2 = (kw_vd)((kw_vu)v2 & ~(kw_vu)(c2 > -2));
                v3 = (kw_vd)((kw_vu)v3 & ~(kw_vu)(c3 > -2));
                memcpy(r0 + j, &v0, sizeof v0);
                memcpy(r0 + (size_t)nc + j, &v1, sizeof v1);
                memcpy(r0 + (size_t)2 * nc + j, &v2, sizeof v2);
                memcpy(r0 + (size_t)3 * nc + j, &v3, sizeof v3);
            }
        for (; j < nc; j++) {
            int i1 = -1, i2 = -1; /* smallest and second smallest magnitude, ties by index */
            for (int k = k0; k < k0 + 4; k++) {
                double v = fabs(w[(size_t)k * nc + j]);
                if (i1 < 0 || v < fabs(w[(size_t)i1 * nc + j])) {
                    i2 = i1;
                    i1 = k;
                } else if (i2 < 0 || v < fabs(w[(size_t)i2 * nc + j])) {
                    i2 = k;
                }
            }
            w[(size_t)i1 * nc + j] = 0.0;
            w[(size_t)i2 * nc + j] = 0.0;
        }
    }
}

/* o[i*nc + j] = sum_k a[i*K + k] w[k*nc + j] in fp64 (the reference), R rows. */
KW_SIMD static void kw_ref_rows(double *o, const double *a, int R, const double *w, int K, int nc)
{
    int i = 0;
    if (nc % (2 * KW_VL) == 0) { /* two rows (or the last one) by eight columns, in registers */
        for (; i < R; i += 2) {
            int two = i + 1 < R;
            const double *a0 = a + (size_t)i * K, *a1 = two ? a0 + K : a0;
            for (int h = 0; h < nc; h += 2 * KW_VL) {
                kw_vd acc0[2] = {{0}}, acc1[2] = {{0}};
                for (int k = 0; k < K; k++) {
                    const double *row = w + (size_t)k * nc + h;
                    double x0 = a0[k], x1 = a1[k];
                    for (int v = 0; v < 2; v++) {
                        kw_vd wv;
                        memcpy(&wv, row + KW_VL * v, sizeof wv);
                        acc0[v] += x0 * wv;
                        acc1[v] += x1 * wv;
                    }
                }
                memcpy(o + (size_t)i * nc + h, acc0, sizeof acc0);
                if (two)
                    memcpy(o + (size_t)(i + 1) * nc + h, acc1, sizeof acc1);
            }
        }
    }
    for (; i < R; i++) {
        double acc[KW_DRIFT_COLS_MAX];
        for (int j = 0; j < nc; j++)
            acc[j] = 0.0;
        for (int k = 0; k < K; k++) {
            double av = a[(size_t)i * K + k];
            const double *row = w + (size_t)k * nc;
            for (int j = 0; j < nc; j++)
                acc[j] += av * row[j];
        }
        memcpy(o + (size_t)i * nc, acc, (size_t)nc * sizeof *o);
    }
}

/* dst[i] = z[i] * scale, float draws widened */
KW_SIMD static void kw_widen(double *dst, const float *z, size_t n, double scale)
{
    size_t i = 0;
    for (; i + KW_VL <= n; i += KW_VL) {
        kw_vf zv;
        memcpy(&zv, z + i, sizeof zv);
        kw_vd d = __builtin_convertvector(zv, kw_vd) * scale;
        memcpy(dst + i, &d, sizeof d);
    }
    for (; i < n; i++)
        dst[i] = (double)z[i] * scale;
}

/* dst[i] = (float)x[i], for values already exact in float; 1 when every
 * value is zero or of magnitude 2^-60..2^40 (KW_NARROW_LO..HI), else 0. */
#define KW_NARROW_LO 0x1p-60
#define KW_NARROW_HI 0x1p40
KW_SIMD static int kw_narrow(float *dst, const double *x, size_t n)
{
    kw_vu bad = {0};
    size_t i = 0;
    for (; i + KW_VL <= n; i += KW_VL) {
        kw_vd d;
        memcpy(&d, x + i, sizeof d);
        kw_vd ax = (kw_vd)((kw_vu)d & KW_F64_ABS);
        bad |= ~(((kw_vu)(ax >= KW_NARROW_LO) & (kw_vu)(ax <= KW_NARROW_HI)) | (kw_vu)(ax == 0.0));
        kw_vf f = __builtin_convertvector(d, kw_vf);
        memcpy(dst + i, &f, sizeof f);
    }
    int ok = !KW_VANY(bad);
    for (; i < n; i++) {
        double ax = fabs(x[i]);
        ok &= (ax >= KW_NARROW_LO && ax <= KW_NARROW_HI) || ax == 0.0;
        dst[i] = (float)x[i];
    }
    return ok;
}

static int kw_op_gemm(kw_run *r, kw_tens *out, const kw_op *op, const kw_tens *in, int K, int N)
{
    const int R = KW_DRIFT_ROWS, nc = N < KW_DRIFT_COLS ? N : KW_DRIFT_COLS;
    kw_tens a;
    if (kw_full(r, &a, in, R, K) != 0)
        return -1;
    const float *zw = kw_z(r, (size_t)K * nc);
    if (kw_tens_alloc(r, out, R, N, nc) != 0 || !zw)
        return -1;
    /* the candidate's input; q/k/v (gate/up) read the same input: round it once */
    if (r->qa_src != a.cand || r->qa_n != (size_t)R * K) {
        r->qa = kw_alloc(r, (size_t)R * K);
        if (!r->qa)
            return -1;
        r->qa_s = kw_operand(r->qa, a.cand, (size_t)R * K, r->in_p);
        r->qa_src = a.cand;
        r->qa_n = (size_t)R * K;
    }
    const double *qa = r->qa, sa = r->qa_s;
    int acc = r->in_p == KW_PREC_INT8 ? KW_ACC_EXACT : (int)r->acc_p;
    /* float lanes where they give the same sums (kw_dot16f): operands of at
     * most 11 significant bits, fp32 accumulation, and operands that are zero
     * or within 2^-60..2^40, so that no nonzero product leaves float's normal
     * range and no partial sum (at most K 2^80 <= 2^96) overflows */
    int lanes = nc == KW_DRIFT_COLS && acc == KW_PREC_FP32 && r->in_p != KW_PREC_FP32 &&
                kw_numfmt_unit_roundoff(r->in_p) >= 0x1p-11;
    if (lanes && r->qa_f_src != qa) { /* the shared input, narrowed once */
        r->qa_f = (float *)kw_alloc(r, ((size_t)R * K + 1) / 2);
        if (!r->qa_f)
            return -1;
        r->qa_f_ok = kw_narrow(r->qa_f, qa, (size_t)R * K);
        r->qa_f_src = qa;
    }
    /* the weights in their three forms are this op's scratch: given back at
     * the end, so the next GEMM reuses the pages (fewer first touches) */
    kw_arena_mark mark = kw_arena_at(r->arena);
    int rc = -1;
    double *w = kw_alloc(r, (size_t)K * nc), *qw = kw_alloc(r, (size_t)K * nc);
    float *w32 = lanes ? (float *)kw_alloc(r, ((size_t)K * nc + 1) / 2) : NULL;
    if (!w || !qw || (lanes && !w32))
        goto done;
    kw_widen(w, zw, (size_t)K * nc, 1.0 / sqrt((double)K));
    /* reference: fp64, dense */
    if (!kw_ref_replay(r, out->ref, (size_t)R * nc)) {
        kw_ref_rows(out->ref, a.ref, R, w, K, nc);
        kw_ref_keep(r, out->ref, (size_t)R * nc);
    }
    if (r->m->sparsity_2_4)
        kw_prune_2_4(w, K, nc);
    double sw[KW_DRIFT_COLS];
    if (r->in_p == KW_PREC_INT8) {
        kw_operand_cols(qw, sw, w, K, nc, r->in_p); /* per output channel */
    } else {
        double s = kw_operand(qw, w, (size_t)K * nc, r->in_p);
        for (int j = 0; j < nc; j++)
            sw[j] = s;
    }
    int tile_k, split_k, tile_n;
    kw_group_tiling(r, op, &tile_k, &split_k, &tile_n);
    const float *fa = NULL, *fw = NULL;
    if (lanes && r->qa_f_ok && kw_narrow(w32, qw, (size_t)K * nc)) {
        fa = r->qa_f;
        fw = w32;
    }
    double acc_out[KW_DRIFT_COLS];
    for (int i = 0; i < R; i++) {
        if (fa)
            kw_dot16f(acc_out, fa + (size_t)i * K, fw, K, tile_k, split_k);
        else
            kw_dot_cols(acc_out, qa + (size_t)i * K, qw, K, nc, acc, tile_k, split_k);
        for (int j = 0; j < nc; j++)
            out->cand[(size_t)i * nc + j] = kw_store(r, acc_out[j] * sa * sw[j]);
    }
    rc = 0;
done:
    kw_arena_back(r->arena, mark);
    return rc;
}

static inline double kw_sm(const kw_run *r, double x)
{
    return kw_round_d_inline(r->sm_p, x);
}

static int kw_op_attention(kw_run *r, kw_tens *out, const kw_op *op, const kw_tens *run, int n_run)
{
    const int hd = op->head_dim, H = op->heads, Hs = H < KW_DRIFT_HEADS ? H : KW_DRIFT_HEADS;
    const int C = r->ctx, Ra = C < KW_DRIFT_QROWS ? C : KW_DRIFT_QROWS;
    const kw_tens *tq = n_run > 0 ? &run[0] : NULL;
    const kw_tens *tk = n_run > 1 ? &run[1] : tq, *tv = n_run > 2 ? &run[2] : tk;
    double sq = 1.0, eq = 0.0, sk = 1.0, ek = 0.0, sv = 1.0, ev = 0.0;
    if (tq)
        kw_tens_stats(tq, &sq, &eq);
    if (tk)
        kw_tens_stats(tk, &sk, &ek);
    if (tv)
        kw_tens_stats(tv, &sv, &ev);
    if (kw_tens_alloc(r, out, Ra, H * hd, Hs * hd) != 0)
        return -1;
    int tile_k, split_k, tile_n;
    kw_group_tiling(r, op, &tile_k, &split_k, &tile_n);
    const double inv_sqrt_d = 1.0 / sqrt((double)hd);
    size_t nq = (size_t)Ra * hd, nkv = (size_t)C * hd;
    double *q = kw_alloc(r, nq), *qc = kw_alloc(r, nq), *k = kw_alloc(r, nkv);
    double *kc = kw_alloc(r, nkv), *v = kw_alloc(r, nkv), *vc = kw_alloc(r, nkv);
    double *kt = kw_alloc(r, nkv), *vo = kw_alloc(r, nkv), *qo = kw_alloc(r, nq);
    double *s = kw_alloc(r, C), *pr = kw_alloc(r, C);
    if (r->failed)
        return -1;
    int have_ref = kw_ref_replay(r, out->ref, (size_t)Ra * Hs * hd);
    for (int h = 0; h < Hs; h++) {
        const float *z[6] = {kw_z(r, nq), kw_z(r, nq), kw_z(r, nkv),
                              kw_z(r, nkv), kw_z(r, nkv), kw_z(r, nkv)};
        for (int i = 0; i < 6; i++)
            if (!z[i])
                return -1;
        kw_synth(q, qc, z[0], z[1], nq, sq, eq);
        /* K is drawn transposed, hd x C (k-major for the QK dot); V is C x hd */
        kw_synth(k, kc, z[2], z[3], nkv, sk, ek);
        kw_synth(v, vc, z[4], z[5], nkv, sv, ev);
        /* candidate operands */
        double s_q = kw_operand(qo, qc, nq, r->attn_p);
        double s_k = kw_operand(kt, kc, nkv, r->attn_p);
        double s_v = kw_operand(vo, vc, nkv, r->attn_p);
        for (int i = 0; i < Ra; i++) {
            int n_allowed = (op->causal && !r->decode) ? C - Ra + i + 1 : C;
            double *oref = out->ref + (size_t)i * out->ncols + (size_t)h * hd;
            double *ocand = out->cand + (size_t)i * out->ncols + (size_t)h * hd;
            if (!have_ref) { /* reference: fp64 softmax attention */
                double mx = -INFINITY, l = 0.0;
                kw_ref_rows(s, q + (size_t)i * hd, 1, k, hd, C); /* all C logits; n_allowed used */
                for (int t = 0; t < n_allowed; t++) {
                    s[t] *= inv_sqrt_d;
                    mx = s[t] > mx ? s[t] : mx;
                }
                for (int t = 0; t < n_allowed; t++)
                    l += (pr[t] = exp(s[t] - mx));
                for (int t = 0; t < n_allowed; t++)
                    pr[t] /= l; /* sum_t (p_t / l) v_t, as the unfused kernel's P */
                kw_ref_rows(oref, pr, 1, v, n_allowed, hd);
            }
            /* candidate logits */
            kw_dot_cols(s, qo + (size_t)i * hd, kt, hd, C, r->acc_p, tile_k, 1);
            for (int t = 0; t < n_allowed; t++) {
                double x = (double)(float)(s[t] * s_q * s_k * inv_sqrt_d);
                if (r->m->fuse_attention == KW_ATTN_NONE)
                    x = kw_store(r, x); /* S goes through memory */
                s[t] = kw_sm(r, x);
            }
            double o[KW_DRIFT_COLS_MAX];
            if (r->m->fuse_attention != KW_ATTN_FLASH) {
                double m = -INFINITY, sum = 0.0;
                for (int t = 0; t < n_allowed; t++)
                    m = s[t] > m ? s[t] : m;
                for (int t = 0; t < n_allowed; t++) {
                    pr[t] = kw_sm(r, exp(kw_sm(r, s[t] - m)));
                    sum = kw_sm(r, sum + pr[t]);
                }
                /* P is a tensor in memory here: an fp8 kernel stores it with a static
                 * per-tensor scale, P <= 1 mapped to the format's max */
                double p_scale = kw_prec_bytes(r->attn_p) == 1 ? kw_numfmt_max(r->attn_p) : 1.0;
                for (int t = 0; t < n_allowed; t++)
                    pr[t] = kw_round_d_inline(r->attn_p, kw_sm(r, pr[t] / sum) * p_scale);
                kw_dot_cols(o, pr, vo, n_allowed, hd, r->acc_p, tile_k, 1);
                for (int d = 0; d < hd; d++)
                    o[d] /= p_scale;
            } else {
                /* FlashAttention-2 Algorithm 1, one query row, KV blocks of tile_n */
                double m = -INFINITY, sum = 0.0, blk[KW_DRIFT_COLS_MAX];
                for (int d = 0; d < hd; d++)
                    o[d] = 0.0;
                for (int t0 = 0; t0 < n_allowed; t0 += tile_n) {
                    int t1 = t0 + tile_n < n_allowed ? t0 + tile_n : n_allowed;
                    double mn = m;
                    for (int t = t0; t < t1; t++)
                        mn = s[t] > mn ? s[t] : mn;
                    double corr = m == -INFINITY ? 0.0 : kw_sm(r, exp(kw_sm(r, m - mn)));
                    double bsum = 0.0;
                    for (int t = t0; t < t1; t++) {
                        pr[t] = kw_sm(r, exp(kw_sm(r, s[t] - mn)));
                        bsum = kw_sm(r, bsum + pr[t]);
                        pr[t] = kw_round_d_inline(r->attn_p, pr[t]);
                    }
                    sum = kw_sm(r, kw_sm(r, sum * corr) + bsum);
                    kw_dot_cols(blk, pr + t0, vo + (size_t)t0 * hd, t1 - t0, hd, r->acc_p,
                                t1 - t0, 1);
                    for (int d = 0; d < hd; d++)
                        o[d] = kw_acc_rnd(r->acc_p, kw_acc_rnd(r->acc_p, o[d] * corr) + blk[d]);
                    m = mn;
                }
                for (int d = 0; d < hd; d++)
                    o[d] = kw_acc_rnd(r->acc_p, o[d] / sum);
            }
            for (int d = 0; d < hd; d++)
                ocand[d] = kw_store(r, o[d] * s_v);
        }
    }
    if (!have_ref)
        kw_ref_keep(r, out->ref, (size_t)Ra * Hs * hd);
    return 0;
}

static inline double kw_silu(double x)
{
    return x / (1.0 + exp(-x));
}

static inline float kw_silu_f(float x)
{
    return x / (1.0f + expf(-x));
}

static int kw_op_act(kw_run *r, kw_tens *out, const kw_op *op, const kw_tens *run, int n_run,
                     const kw_tens *cur)
{
    kw_tens x, y;
    int gated = n_run >= 2 && run[0].ncols == run[1].ncols && run[0].rows == run[1].rows;
    if (n_run >= 1) {
        x = run[0];
    } else if (kw_full(r, &x, cur, KW_DRIFT_ROWS, (int)op->width) != 0) {
        return -1;
    }
    y = gated ? run[1] : x;
    if (kw_tens_alloc(r, out, x.rows, x.width, x.ncols) != 0)
        return -1;
    for (size_t i = 0; i < (size_t)x.rows * x.ncols; i++) {
        double rv = kw_silu(x.ref[i]);
        float cv = kw_silu_f((float)x.cand[i]);
        if (gated) {
            rv *= y.ref[i];
            cv *= (float)y.cand[i];
        }
        out->ref[i] = rv;
        out->cand[i] = kw_store(r, cv);
    }
    return 0;
}

static int kw_op_norm(kw_run *r, kw_tens *out, const kw_tens *in, int width)
{
    double *y = kw_alloc(r, (size_t)width), one = 1.0;
    if (kw_tens_alloc(r, out, in->rows, width, width) != 0 || !y)
        return -1;
    for (int i = 0; i < in->rows; i++) {
        const double *xr = in->ref + (size_t)i * width, *xc = in->cand + (size_t)i * width;
        double ss = 0.0;
        float ssf = 0.0f;
        for (int c = 0; c < width; c++) {
            ss += xr[c] * xr[c];
            ssf += (float)xc[c] * (float)xc[c];
        }
        double inv = 1.0 / sqrt(ss / width + KW_DRIFT_NORM_EPS);
        float invf = 1.0f / sqrtf(ssf / (float)width + (float)KW_DRIFT_NORM_EPS);
        for (int c = 0; c < width; c++) {
            out->ref[(size_t)i * width + c] = xr[c] * inv;
            y[c] = (float)xc[c] * invf;
        }
        /* = kw_store(r, y[c]) for each c (y is already a float), in vectors */
        kw_round_to(out->cand + (size_t)i * width, y, (size_t)width, &one, 1, r->store_p);
    }
    return 0;
}

static int kw_op_residual(kw_run *r, kw_tens *out, const kw_tens *branch, const kw_tens *skip)
{
    kw_tens sk;
    int rows = branch->rows;
    if (kw_full(r, &sk, skip, rows, branch->width) != 0)
        return -1;
    if (kw_tens_alloc(r, out, rows, branch->width, branch->ncols) != 0)
        return -1;
    int stride = branch->width / branch->ncols;
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < branch->ncols; c++) {
            size_t bi = (size_t)i * branch->ncols + c, si = (size_t)i * sk.width + (size_t)c * stride;
            out->ref[bi] = sk.ref[si] + branch->ref[bi];
            out->cand[bi] = kw_store(r, (float)sk.cand[si] + (float)branch->cand[bi]);
        }
    return 0;
}

/* ---------------- the block ---------------- */

static int kw_op_dims(const kw_op *op, int *K, int *N)
{
    if (op->kind == KW_OP_CONV) {
        /* in 64 bits: kh x kw x in_c reaches 2^44 (the loader's bounds), which
         * wrapped in an int to a K that looked valid */
        int64_t k = (int64_t)op->kh * op->kw * op->in_c;
        *K = k < 1 || k > KW_DRIFT_DIM_MAX ? 0 : (int)k;
        *N = op->out_c;
    } else {
        *K = (int)(op->k > KW_DRIFT_DIM_MAX ? 0 : op->k);
        *N = (int)(op->n > (1u << 24) ? 0 : op->n);
    }
    return *K >= 1 && *K <= KW_DRIFT_DIM_MAX && *N >= 1 ? 0 : -1;
}

int kw_drift_op_check(const kw_op *op, char *why, size_t n)
{
    int K, N;
    switch (op->kind) {
    case KW_OP_GEMM:
    case KW_OP_CONV:
        if (kw_op_dims(op, &K, &N) != 0) {
            snprintf(why, n, "%s (the reduction length) must be 1..%d and %s 1..%d for the "
                     "numerics stage", op->kind == KW_OP_CONV ? "kh x kw x in_c" : "k",
                     KW_DRIFT_DIM_MAX, op->kind == KW_OP_CONV ? "out_c" : "n", 1 << 24);
            return -1;
        }
        return 0;
    case KW_OP_MOE: /* emulated as GEMMs of K = k and K = n, and an act of width n (kw_moe.c) */
        if (op->k < 1 || op->k > KW_DRIFT_DIM_MAX || op->n < 1 || op->n > KW_DRIFT_DIM_MAX) {
            snprintf(why, n, "n and k must be 1..%d for the numerics stage", KW_DRIFT_DIM_MAX);
            return -1;
        }
        return 0;
    case KW_OP_ATTENTION:
        if (op->heads < 1 || op->head_dim < 1 || op->head_dim > KW_DRIFT_COLS_MAX) {
            snprintf(why, n, "needs heads >= 1 and head_dim 1..%d for the numerics stage",
                     KW_DRIFT_COLS_MAX);
            return -1;
        }
        return 0;
    case KW_OP_NORM:
    case KW_OP_RESIDUAL:
    case KW_OP_ACT:
        if (op->width < 1 || op->width > KW_DRIFT_DIM_MAX) {
            snprintf(why, n, "width must be 1..%d for the numerics stage", KW_DRIFT_DIM_MAX);
            return -1;
        }
        return 0;
    default:
        snprintf(why, n, "an unknown kind of operator");
        return -1;
    }
}

static int kw_check_block(const kw_block *b, int *has_attn)
{
    *has_attn = 0;
    if (b->n_ops < 1 || b->n_ops > KW_OP_MAX)
        return kw_error_set(KW_EINPUT, "drift: block '%s' has no operators", b->name);
    for (int i = 0; i < b->n_ops; i++) {
        const kw_op *op = &b->ops[i];
        char why[160];
        if (op->kind == KW_OP_MOE) /* kw_moe_numerics_view expands it before this */
            return kw_error_set(KW_EINPUT, "drift: op '%s' has an unknown kind", op->name);
        if (kw_drift_op_check(op, why, sizeof why) != 0)
            return kw_error_set(KW_EINPUT, "drift: op '%s' of block '%s': %s", op->name, b->name,
                                why);
        *has_attn |= op->kind == KW_OP_ATTENTION;
    }
    return 0;
}

static int kw_is_accum(kw_prec p)
{
    return p == KW_PREC_FP32 || p == KW_PREC_BF16 || p == KW_PREC_FP16;
}

static int kw_shape_ctx(const kw_shape *s, int *decode)
{
    *decode = s->phase == KW_PHASE_DECODE;
    int ctx = *decode ? s->kv_len + 1 : s->seq;
    if (ctx < 1)
        ctx = 1;
    return ctx;
}

static void kw_judge(kw_drift *d, const kw_tens *t, double *max_abs)
{
    double num = 0.0, den = 0.0, dot = 0.0, cc = 0.0, mx = 0.0;
    size_t n = (size_t)t->rows * t->ncols;
    for (size_t i = 0; i < n; i++) {
        double e = t->cand[i] - t->ref[i];
        num += e * e;
        den += t->ref[i] * t->ref[i];
        dot += t->cand[i] * t->ref[i];
        cc += t->cand[i] * t->cand[i];
        if (fabs(e) > mx || isnan(e))
            mx = fabs(e);
    }
    d->rel_rms = den > 0.0 ? sqrt(num / den) : (num > 0.0 ? INFINITY : 0.0);
    d->cos = den > 0.0 && cc > 0.0 ? dot / sqrt(den * cc) : (num == 0.0 ? 1.0 : 0.0);
    if (isnan(num) || isnan(dot)) {
        d->rel_rms = NAN;
        d->cos = NAN;
    }
    *max_abs = mx;
}

static void kw_verdict(kw_drift *d, const kw_guards *g)
{
    double min_cos = g ? g->drift_min_cos : KW_DRIFT_DEFAULT_MIN_COS;
    double max_rel = g ? g->drift_max_rel_rms : KW_DRIFT_DEFAULT_MAX_REL_RMS;
    int cos_ok = d->cos >= min_cos, rel_ok = d->rel_rms <= max_rel;
    d->pass = cos_ok && rel_ok;
    d->fail[0] = '\0';
    if (!cos_ok)
        snprintf(d->fail, sizeof d->fail, "quality_cos=%.6g<%.6g", d->cos, min_cos);
    if (!rel_ok) {
        size_t l = strlen(d->fail);
        snprintf(d->fail + l, sizeof d->fail - l, "%squality_rel_rms=%.4g>%.4g", l ? ";" : "",
                 d->rel_rms, max_rel);
    }
}

/* Walk the block once. The tape is replayed from `replay` or, when NULL,
 * drawn from the seed (and copied into `build` when not NULL). */
static int kw_drift_run(kw_drift *out, const kw_block *b, const kw_shape *s, const kw_mapping *m,
                        const kw_guards *g, uint64_t seed, uint64_t data_seed,
                        const kw_tape *replay, kw_tape *build)
{
    int has_attn, rc = kw_check_block(b, &has_attn);
    if (rc != 0)
        return rc;
    if (m->precision < 0 || m->precision >= KW_PREC_COUNT)
        return kw_error_set(KW_EINPUT, "drift: precision out of range");
    if (!kw_is_accum(m->accum_precision))
        return kw_error_set(KW_EINPUT, "drift: accum_precision '%s' is not an accumulator format "
                                       "(fp32, bf16, fp16)", kw_prec_name(m->accum_precision));
    if (!kw_is_accum(m->softmax_precision))
        return kw_error_set(KW_EINPUT, "drift: softmax_precision '%s' is not one of fp32, bf16, fp16",
                            kw_prec_name(m->softmax_precision));
    kw_run *r = calloc(1, sizeof *r);
    if (!r)
        return kw_error_set(KW_ENOMEM, "drift: out of memory");
    r->arena = kw_arena_get();
    kw_arena_reset(r->arena);
    r->b = b;
    r->m = m;
    r->replay = replay;
    r->build = build;
    r->seed = seed;
    r->in_p = m->precision;
    r->acc_p = m->accum_precision;
    r->sm_p = m->softmax_precision;
    int eight_bit = kw_prec_bytes(m->precision) == 1;
    r->store_p = eight_bit ? KW_PREC_BF16 : m->precision;
    r->attn_p = m->precision == KW_PREC_INT8 ? KW_PREC_FP16 : m->precision;
    int ctx = kw_shape_ctx(s, &r->decode);
    r->ctx = ctx < KW_DRIFT_CTX_MAX ? ctx : KW_DRIFT_CTX_MAX;
    if (!replay) {
        if (kw_gauss_start(&r->zs, data_seed) != 0) {
            free(r);
            return kw_error_set(KW_ENOMEM, "drift: out of memory");
        }
    }

    kw_tens cur = {0}, stream = {0}, judged = {0}, run_in = {0};
    kw_tens run[KW_OP_MAX];
    int n_run = 0, have_judged = 0;
    const kw_op *first = &b->ops[0];
    int w0 = (int)first->width, K0, N0;
    if (first->kind == KW_OP_GEMM || first->kind == KW_OP_CONV) {
        kw_op_dims(first, &K0, &N0);
        w0 = K0;
    } else if (first->kind == KW_OP_ATTENTION) {
        w0 = first->heads * first->head_dim;
    }
    if (w0 > KW_DRIFT_DIM_MAX)
        w0 = KW_DRIFT_DIM_MAX;
    if (kw_block_input(r, &cur, KW_DRIFT_ROWS, w0) != 0)
        goto fail;
    stream = cur;
    for (int i = 0; i < b->n_ops; i++) {
        const kw_op *op = &b->ops[i];
        const kw_op *prev = i > 0 ? &b->ops[i - 1] : NULL;
        kw_tens o = {0};
        switch (op->kind) {
        case KW_OP_NORM: {
            kw_tens in;
            if (kw_full(r, &in, &cur, KW_DRIFT_ROWS, (int)op->width) != 0)
                goto fail;
            stream = in;
            if (kw_op_norm(r, &o, &in, (int)op->width) != 0)
                goto fail;
            n_run = 0;
            break;
        }
        case KW_OP_GEMM:
        case KW_OP_CONV: {
            int K, N;
            kw_op_dims(op, &K, &N);
            /* q/k/v and gate/up read the same input (merge tag shared, or the
             * previous GEMM's output does not fit this K but its input does) */
            int shares = prev && prev->kind == op->kind && n_run > 0 &&
                         ((op->merge[0] && strcmp(op->merge, prev->merge) == 0) ||
                          (prev->n != op->k && prev->k == op->k));
            if (!shares) {
                run_in = cur;
                n_run = 0;
            }
            if (kw_op_gemm(r, &o, op, &run_in, K, N) != 0)
                goto fail;
            run[n_run++] = o;
            break;
        }
        case KW_OP_ATTENTION:
            if (kw_op_attention(r, &o, op, run, n_run) != 0)
                goto fail;
            n_run = 0;
            break;
        case KW_OP_ACT:
            if (kw_op_act(r, &o, op, run, n_run, &cur) != 0)
                goto fail;
            n_run = 0;
            break;
        case KW_OP_RESIDUAL:
            judged = cur;
            have_judged = (i == b->n_ops - 1);
            if (kw_op_residual(r, &o, &cur, &stream) != 0)
                goto fail;
            n_run = 0;
            break;
        case KW_OP_MOE: /* not reached: kw_check_block refuses it (kw_moe_numerics_view expands it) */
            goto fail;
        }
        cur = o;
    }
    if (r->replay && (r->seg != (r->replay->z.n ? r->replay->z.n - 1 : 0) ||
                      r->cur != (r->replay->z.n ? r->replay->z.c[r->seg].used : 0) ||
                      r->rcur != r->replay->nref))
        r->failed = 2;
    if (r->failed)
        goto fail;

    memset(out, 0, sizeof *out);
    if (!have_judged)
        judged = cur;
    kw_judge(out, &judged, &out->max_abs);
    kw_drift tmp;
    double mx;
    kw_judge(&tmp, &cur, &mx);
    out->rel_rms_stream = tmp.rel_rms;
    out->rows = judged.rows;
    out->cols = judged.ncols;
    out->samples = judged.rows * judged.ncols;
    out->ctx = has_attn ? r->ctx : 0;
    kw_verdict(out, g);
    rc = 0;
    goto done;
fail:
    rc = r->failed == 2 ? kw_error_set(KW_ESTATE, "drift: data tape does not match the block")
                        : kw_error_set(KW_ENOMEM, "drift: out of memory");
done:
    for (int i = 0; i < r->n_allocs; i++)
        free(r->allocs[i]);
    kw_arena_reset(r->arena);
    kw_gauss_stop(&r->zs);
    free(r);
    return rc;
}

/* ---------------- identity of a block and of the numerics ---------------- */

/* Word-at-a-time hash (one multiply per word; a cached lookup must stay far
 * below a microsecond). */
static uint64_t kw_hash_words(uint64_t h, const uint64_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ w[i]) * 0x100000001B3ull + (h >> 29);
    return h;
}

static uint64_t kw_hash_str(uint64_t h, const char *str, size_t max)
{
    uint64_t w[KW_NAME_MAX / 8 + 1] = {0};
    size_t n = strnlen(str, max);
    memcpy(w, str, n < sizeof w ? n : sizeof w);
    return kw_hash_words(h, w, (n + 7) / 8 + 1);
}

static uint64_t kw_block_hash(const kw_block *b)
{
    uint64_t h = 0xCBF29CE484222325ull ^ (uint64_t)b->n_ops;
    for (int i = 0; i < b->n_ops && i < KW_OP_MAX; i++) {
        const kw_op *op = &b->ops[i];
        uint64_t f[] = {(uint64_t)op->kind, op->n, op->k, (uint64_t)op->heads,
                        (uint64_t)op->kv_heads, (uint64_t)op->head_dim, (uint64_t)op->causal,
                        (uint64_t)op->in_h << 32 | (uint32_t)op->in_w,
                        (uint64_t)op->in_c << 32 | (uint32_t)op->out_c,
                        (uint64_t)op->kh << 32 | (uint32_t)op->kw,
                        (uint64_t)op->stride << 32 | (uint32_t)op->pad, op->width};
        h = kw_hash_words(h, f, sizeof f / sizeof f[0]);
        h = kw_hash_str(h, op->group, sizeof op->group);
        h = kw_hash_str(h, op->merge, sizeof op->merge);
    }
    return kw_mix_splitmix64(h);
}

typedef struct kw_drift_key {
    uint64_t block_hash, seed;
    int32_t phase, ctx;
    int32_t prec, accum, softmax, sparse, attn;
    int32_t tile_k[KW_GROUP_MAX], split_k[KW_GROUP_MAX], tile_n[KW_GROUP_MAX];
} kw_drift_key;

static void kw_key_make(kw_drift_key *k, const kw_block *b, const kw_shape *s, const kw_mapping *m,
                        uint64_t seed)
{
    memset(k, 0, sizeof *k);
    k->block_hash = kw_block_hash(b);
    k->seed = seed;
    int has_attn = 0;
    for (int i = 0; i < b->n_ops && i < KW_OP_MAX; i++) {
        const kw_op *op = &b->ops[i];
        int g = kw_mapping_block_group(b, op->group);
        const kw_tiling *t = g >= 0 && g < m->n_groups && g < KW_GROUP_MAX ? &m->tiling[g] : NULL;
        if (op->kind == KW_OP_ATTENTION) {
            has_attn = 1;
            if (t) {
                k->tile_k[g] = t->tile_k;
                if (m->fuse_attention == KW_ATTN_FLASH)
                    k->tile_n[g] = t->tile_n;
            }
        } else if ((op->kind == KW_OP_GEMM || op->kind == KW_OP_CONV) && t) {
            k->tile_k[g] = t->tile_k;
            k->split_k[g] = t->split_k;
        }
    }
    if (has_attn) { /* the data and the emulation depend on the context only through attention */
        int decode;
        k->ctx = kw_shape_ctx(s, &decode);
        if (k->ctx > KW_DRIFT_CTX_MAX)
            k->ctx = KW_DRIFT_CTX_MAX;
        k->phase = decode;
        k->attn = m->fuse_attention;
        k->softmax = m->softmax_precision;
    }
    k->prec = m->precision;
    k->accum = m->accum_precision;
    k->sparse = m->sparsity_2_4;
}

static uint64_t kw_data_seed(const kw_drift_key *k)
{
    return kw_mix_splitmix64(k->seed ^ kw_mix_splitmix64(k->block_hash ^ ((uint64_t)k->ctx << 1 | (uint64_t)k->phase)));
}

int kw_drift_eval(kw_drift *out, const kw_block *b, const kw_shape *s, const kw_mapping *m,
                  const kw_guards *g, uint64_t seed)
{
    if (!out || !b || !s || !m)
        return kw_error_set(KW_ESTATE, "drift: NULL argument");
    kw_drift_key k;
    kw_key_make(&k, b, s, m, seed);
    return kw_drift_run(out, b, s, m, g, seed, kw_data_seed(&k), NULL, NULL);
}

/* ---------------- cache ---------------- */

#define KW_DRIFT_BUCKETS 1024

typedef struct kw_centry {
    kw_drift_key key;
    kw_drift val;
    double min_cos, max_rel; /* the guards val's verdict was judged against */
    struct kw_centry *next;
} kw_centry;

typedef struct kw_cdata {
    uint64_t block_hash, seed;
    int32_t phase, ctx;
    kw_tape tape;
    struct kw_cdata *next;
} kw_cdata;

struct kw_drift_cache {
    pthread_mutex_t mu;
    kw_centry *buckets[KW_DRIFT_BUCKETS];
    kw_cdata *data;
    uint64_t hits, misses;
};

int kw_drift_cache_new(kw_drift_cache **out)
{
    kw_drift_cache *c = calloc(1, sizeof *c);
    if (!c)
        return kw_error_set(KW_ENOMEM, "drift: out of memory");
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return kw_error_set(KW_ENOMEM, "drift: cannot create the cache mutex");
    }
    *out = c;
    return 0;
}

void kw_drift_cache_free(kw_drift_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < KW_DRIFT_BUCKETS; i++)
        for (kw_centry *e = c->buckets[i], *n; e; e = n) {
            n = e->next;
            free(e);
        }
    for (kw_cdata *d = c->data, *n; d; d = n) {
        n = d->next;
        kw_tape_clear(&d->tape);
        free(d);
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void kw_drift_cache_stats(const kw_drift_cache *c, uint64_t *hits, uint64_t *misses)
{
    pthread_mutex_lock((pthread_mutex_t *)&c->mu);
    *hits = c->hits;
    *misses = c->misses;
    pthread_mutex_unlock((pthread_mutex_t *)&c->mu);
}

static kw_cdata *kw_cdata_find(kw_drift_cache *c, const kw_drift_key *k)
{
    for (kw_cdata *d = c->data; d; d = d->next)
        if (d->block_hash == k->block_hash && d->seed == k->seed && d->phase == k->phase &&
            d->ctx == k->ctx)
            return d;
    return NULL;
}

int kw_drift_cache_get(kw_drift *out, kw_drift_cache *c, const kw_block *b, const kw_shape *s,
                       const kw_mapping *m, const kw_guards *g, uint64_t seed)
{
    if (!c)
        return kw_drift_eval(out, b, s, m, g, seed);
    if (!out || !b || !s || !m)
        return kw_error_set(KW_ESTATE, "drift: NULL argument");
    kw_drift_key k;
    kw_key_make(&k, b, s, m, seed);
    double min_cos = g ? g->drift_min_cos : KW_DRIFT_DEFAULT_MIN_COS;
    double max_rel = g ? g->drift_max_rel_rms : KW_DRIFT_DEFAULT_MAX_REL_RMS;
    _Static_assert(sizeof k % 8 == 0, "key hashed as words");
    uint64_t kw[sizeof k / 8];
    memcpy(kw, &k, sizeof k);
    unsigned bucket = (unsigned)(kw_mix_splitmix64(kw_hash_words(0, kw, sizeof k / 8)) % KW_DRIFT_BUCKETS);
    pthread_mutex_lock(&c->mu);
    for (kw_centry *e = c->buckets[bucket]; e; e = e->next)
        if (memcmp(&e->key, &k, sizeof k) == 0) {
            *out = e->val;
            int same = e->min_cos == min_cos && e->max_rel == max_rel;
            c->hits++;
            pthread_mutex_unlock(&c->mu);
            if (!same)
                kw_verdict(out, g);
            return 0;
        }
    c->misses++;
    kw_cdata *d = kw_cdata_find(c, &k);
    pthread_mutex_unlock(&c->mu);

    /* Emulate outside the lock. A tape, once in the cache, is never changed. */
    int rc;
    if (d) {
        rc = kw_drift_run(out, b, s, m, g, seed, 0, &d->tape, NULL);
    } else {
        kw_cdata *nd = calloc(1, sizeof *nd);
        if (!nd)
            return kw_error_set(KW_ENOMEM, "drift: out of memory");
        rc = kw_drift_run(out, b, s, m, g, seed, kw_data_seed(&k), NULL, &nd->tape);
        if (rc != 0) {
            kw_tape_clear(&nd->tape);
            free(nd);
            return rc;
        }
        nd->block_hash = k.block_hash;
        nd->seed = k.seed;
        nd->phase = k.phase;
        nd->ctx = k.ctx;
        pthread_mutex_lock(&c->mu);
        if (kw_cdata_find(c, &k)) { /* another thread drew the same tape first */
            kw_tape_clear(&nd->tape);
            free(nd);
        } else {
            nd->next = c->data;
            c->data = nd;
        }
        pthread_mutex_unlock(&c->mu);
    }
    if (rc != 0)
        return rc;
    kw_centry *e = malloc(sizeof *e);
    if (!e)
        return kw_error_set(KW_ENOMEM, "drift: out of memory");
    e->key = k;
    e->val = *out;
    e->min_cos = min_cos;
    e->max_rel = max_rel;
    pthread_mutex_lock(&c->mu);
    e->next = c->buckets[bucket];
    c->buckets[bucket] = e;
    pthread_mutex_unlock(&c->mu);
    return 0;
}

/* ---------------- fallback ---------------- */

/* Cheapest first: element bytes, then the coarser format (kw_drift.h). */
static const kw_prec kw_fallback_order[] = {
    KW_PREC_INT8, KW_PREC_FP8_E5M2, KW_PREC_FP8_E4M3, KW_PREC_BF16, KW_PREC_FP16, KW_PREC_FP32,
};

int kw_drift_fallback(kw_mapping *out_fallback, kw_drift *out_evidence, kw_drift_cache *c,
                      const kw_block *b, const kw_shape *s, const kw_mapping *m,
                      const kw_guards *g, uint64_t seed, unsigned prec_mask)
{
    if (!out_fallback || !out_evidence || !b || !s || !m)
        return kw_error_set(KW_ESTATE, "drift: NULL argument");
    kw_drift d;
    int rc = kw_drift_cache_get(&d, c, b, s, m, g, seed);
    if (rc != 0)
        return rc;
    if (d.pass) {
        *out_fallback = *m;
        *out_evidence = d;
        return 0;
    }
    if (prec_mask == 0)
        prec_mask = (1u << KW_PREC_COUNT) - 1u;
    kw_drift best = d;
    kw_mapping best_m = *m;
    for (int stage = 0; stage < 3; stage++) {
        kw_mapping t = *m;
        if (stage >= 1) {
            t.accum_precision = KW_PREC_FP32;
            t.softmax_precision = KW_PREC_FP32;
        }
        if (stage >= 2)
            t.sparsity_2_4 = 0;
        if ((stage == 1 && t.accum_precision == m->accum_precision &&
             t.softmax_precision == m->softmax_precision) ||
            (stage == 2 && !m->sparsity_2_4))
            continue; /* the same walk as before */
        for (size_t i = 0; i < sizeof kw_fallback_order / sizeof kw_fallback_order[0]; i++) {
            kw_prec p = kw_fallback_order[i];
            if (!(prec_mask & (1u << p)))
                continue;
            t.precision = p;
            if (t.precision == m->precision && t.accum_precision == m->accum_precision &&
                t.softmax_precision == m->softmax_precision && t.sparsity_2_4 == m->sparsity_2_4)
                continue; /* the candidate itself failed */
            rc = kw_drift_cache_get(&d, c, b, s, &t, g, seed);
            if (rc != 0)
                return rc;
            if (d.pass) {
                *out_fallback = t;
                *out_evidence = d;
                return 0;
            }
            if (!(d.rel_rms >= best.rel_rms)) { /* NaN-safe: a number beats NaN */
                best = d;
                best_m = t;
            }
        }
    }
    *out_fallback = best_m;
    *out_evidence = best;
    return kw_error_set(KW_EMODEL,
                        "drift: no precision setting passes the budget; best tried precision=%s "
                        "accum=%s: %s",
                        kw_prec_name(best_m.precision), kw_prec_name(best_m.accum_precision),
                        best.fail);
}
