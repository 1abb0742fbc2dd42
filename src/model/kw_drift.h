/* kw_drift.h - stage 4: quality drift of a candidate against an fp64 reference.
 *
 * The block is computed the way the candidate would compute it (input
 * precision with the scaling a real kernel uses, accumulation precision in
 * tile_k chunks with split_k partial sums, softmax precision, online softmax
 * for flash attention, 2:4 pruning) on seeded synthetic data, next to an fp64
 * reference, on a bounded sample so a check costs milliseconds. kw_drift.c's
 * header comment documents the sample and what it means for the estimate.
 *
 * Table of contents
 *   kw_drift_eval       one check, everything regenerated from the seed
 *   kw_drift_op_check   whether an operator's dimensions fit the emulation
 *   kw_drift_cache_*    the same, cached by the knobs that affect numerics
 *   kw_drift_fallback   the lowest precision setting that passes
 *   kw_drift_dot        the accumulation emulation on its own (for tests)
 */
#ifndef KW_DRIFT_H
#define KW_DRIFT_H

#include <stddef.h>
#include <stdint.h>

#include "kw_model.h"

#define KW_DRIFT_FAIL_MAX 160

/* Default drift budget (cos >= 0.999 and rel_rms <= 0.02 against fp64; the space file may override). */
#define KW_DRIFT_DEFAULT_MIN_COS 0.999
#define KW_DRIFT_DEFAULT_MAX_REL_RMS 0.02

typedef struct kw_drift {
    double rel_rms;        /* ||out - ref||_2 / ||ref||_2 over the judged sample */
    double max_abs;        /* max |out - ref| over the judged sample */
    double cos;            /* <out, ref> / (||out|| ||ref||) */
    double rel_rms_stream; /* the same including the residual skip (informational) */
    int pass;              /* 1 when cos >= min_cos and rel_rms <= max_rel_rms */
    int rows, cols;        /* judged sample: tokens x output columns */
    int samples;           /* rows * cols values compared */
    int ctx;               /* attention context emulated (capped), 0 without attention */
    char fail[KW_DRIFT_FAIL_MAX]; /* "" or "quality_cos=...<...;quality_rel_rms=...>..." */
} kw_drift;

/* Check mapping m of block b on shape s against guards g (NULL = defaults).
 * seed picks the synthetic data (the same seed gives the same data for every
 * candidate, so candidates are compared on equal terms). Pure function of its
 * arguments; thread-safe. KW_EINPUT for a block or mapping it cannot emulate
 * (message says why), KW_ENOMEM. Cost: see kw_drift.c (a 7B attention block:
 * ~4 ms with its data cached, ~10 ms standalone since the data is drawn too;
 * use the cache in a search). */
int kw_drift_eval(kw_drift *out, const kw_block *b, const kw_shape *s, const kw_mapping *m,
                  const kw_guards *g, uint64_t seed);

/* Whether the numerics stage can emulate op: its dimensions within the
 * emulation's limits (K and widths up to 65536, head_dim up to 256; a moe by
 * the GEMMs it is emulated as). 0, or -1 with the reason in why. The one home
 * of these limits: kw_drift_eval refuses a block by it, and the workload
 * loader refuses the operator at its FILE:LINE (kw_load.c). */
int kw_drift_op_check(const kw_op *op, char *why, size_t n);

/* Results cache, keyed by the block, the shape's context (phase and length),
 * the seed and the knobs that affect numerics: precision, accum_precision,
 * softmax_precision, sparsity, fuse_attention (blocks with attention) and, per
 * tiling group, tile_k and split_k (GEMM/conv groups) or tile_k and, under
 * flash, tile_n (attention group). The pass verdict is re-judged against the
 * guards on every get. It also keeps the generated data per block and shape,
 * so a miss costs only the emulation. Thread-safe (one mutex; emulation runs
 * outside it). Owned by the caller: free with kw_drift_cache_free. */
typedef struct kw_drift_cache kw_drift_cache;
int kw_drift_cache_new(kw_drift_cache **out);
void kw_drift_cache_free(kw_drift_cache *c); /* NULL ok */
/* Like kw_drift_eval, from the cache when the numerics key was seen. */
int kw_drift_cache_get(kw_drift *out, kw_drift_cache *c, const kw_block *b, const kw_shape *s,
                       const kw_mapping *m, const kw_guards *g, uint64_t seed);
/* Lookups answered from the cache and emulations run. */
void kw_drift_cache_stats(const kw_drift_cache *c, uint64_t *hits, uint64_t *misses);

/* The lowest precision setting that passes for this shape, starting from m:
 *   1. `precision` walked from the cheapest upward with m's accumulation,
 *      softmax and sparsity: int8, fp8_e5m2, fp8_e4m3, bf16, fp16, fp32
 *      ("lowest" = fewest element bytes, then the coarser format first:
 *      int8's uniform grid is the coarsest for small values, bf16's 8-bit
 *      significand is coarser than fp16's 11);
 *   2. if none passes, the same walk with accum_precision and
 *      softmax_precision raised to fp32;
 *   3. if none passes, the same with sparsity off (dense).
 * prec_mask limits `precision` to the bits (1u << kw_prec) set (the space's
 * domain and what the accelerator supports); 0 = all. The other knobs keep m's
 * values. out_fallback gets the first setting that passes and out_evidence
 * its figures; when m itself passes, out_fallback = *m. c may be NULL (no
 * caching). KW_EMODEL when nothing passes (the message names the best tried). */
int kw_drift_fallback(kw_mapping *out_fallback, kw_drift *out_evidence, kw_drift_cache *c,
                      const kw_block *b, const kw_shape *s, const kw_mapping *m,
                      const kw_guards *g, uint64_t seed, unsigned prec_mask);

/* Dot product of k values already in the kernel's operand format, as the
 * emulation sums it: exact products, summed in `accum` (fp32, bf16 or fp16;
 * each addition rounded once) in tile_k chunks, each chunk's sum added to
 * its split-K part, the split_k parts (contiguous K ranges) added at the end.
 * tile_k >= k and split_k = 1 is recursive summation. */
double kw_drift_dot(const double *x, const double *y, size_t k, kw_prec accum, int tile_k,
                    int split_k);
/* nc such dot products of x with the columns of the k x nc matrix w (stored
 * k-major: w[i*nc + j]), into out[0..nc), as the GEMM emulation runs them
 * side by side (16 columns, the GEMM sample's fan-out, take a vector kernel
 * that must agree with kw_drift_dot bit for bit). nc 1..256, k at most 65536:
 * else KW_EINPUT. */
int kw_drift_dot_cols(double *out, const double *x, const double *w, size_t k, size_t nc,
                      kw_prec accum, int tile_k, int split_k);

/* The generator of the check's data: n standard normal draws for a seed
 * (GSL's gsl_ran_gaussian_ziggurat on a taus2 stream seeded with it).
 * Deterministic per seed, thread-safe; exposed for its tests.
 * 0 or KW_ENOMEM. */
int kw_drift_gaussians(float *out, size_t n, uint64_t seed);

#endif
