/* kw_kern.h - the CPU kernels the shipped worker (knobwise-worker) times: a
 * tiled GEMM with a bias + GELU/SiLU epilogue and an attention block, each in
 * fp32 or bf16 storage with fp32 accumulation, each checked against an fp64
 * reference of the same inputs.
 *
 * A kernel object owns its seeded inputs, its output, its workspace and (once
 * the first check asks for it) its fp64 reference with a per-element error
 * bound. Running it with a set of knobs overwrites the output; checking
 * compares the output with the reference. The knobs are those of the knob catalogue (src/model/kw_catalogue.c)
 * ("Names in the shipped spaces") so the model can evaluate the same spaces:
 * GROUP.tile_m/tile_n/tile_k/split_k/loop_order/double_buffer, fuse_epilogue,
 * fuse_attention, precision, cores_per_request. */
#ifndef KW_KERN_H
#define KW_KERN_H

#include <stddef.h>
#include <stdint.h>

#include "kw_pool.h"

typedef enum { KW_KDT_F32, KW_KDT_BF16 } kw_kdt;           /* storage precision */
typedef enum { KW_ACT_GELU, KW_ACT_SILU } kw_kact;         /* epilogue activation */
typedef enum { KW_ORDER_MNK, KW_ORDER_NMK, KW_ORDER_KMN } kw_korder;
typedef enum { KW_ATTN_NONE, KW_ATTN_QK_SOFTMAX, KW_ATTN_FLASH } kw_kattn_mode;

/* Register micro-tile of the GEMM core: MR rows x NR columns of fp32
 * accumulators (4 x 32 = eight 16-lane vectors, the FMA latency x throughput
 * of a 2-FMA-pipe AVX-512 core; Goto & van de Geijn, ACM TOMS 34(3), 2008,
 * section 6). Tiles need not be multiples: ragged edges take a scalar path. */
#define KW_KERN_MR 4
#define KW_KERN_NR 32

/* Loop tiling of one GEMM (or of attention's QK/PV products and blocks). */
typedef struct kw_ktiling {
    int tile_m, tile_n, tile_k;
    int split_k;        /* K split into this many partial sums (then reduced) */
    kw_korder order;    /* tile loop order: m, n outer (mnk/nmk) or k outer (kmn) */
    int dbuf;           /* double_buffer: pack A/B panels contiguous (fp32) + prefetch the next */
} kw_ktiling;

/* ---------------- GEMM + epilogue ---------------- */
typedef struct kw_kgemm_shape {
    int m, n, k;
    kw_kdt dt;          /* storage of A, B, bias and C */
    int epilogue;       /* C = act(A B + bias), else C = A B */
    kw_kact act;
} kw_kgemm_shape;

typedef struct kw_kgemm kw_kgemm;

/* Allocate and fill (seeded, GSL mt19937) the inputs. *out owned by the caller. */
int kw_kern_gemm_create(kw_kgemm **out, const kw_kgemm_shape *s, unsigned long seed);
/* One execution with these knobs on `threads` threads of pool. fuse: the
 * epilogue in the GEMM's store (or the split-K reduction), else its own pass. */
int kw_kern_gemm_run(kw_kgemm *g, const kw_ktiling *t, int fuse, kw_pool *pool, int threads);
/* Compare the output with the fp64 reference (computed at the first call).
 * 0 when every element is within its bound; KW_EMODEL with the worst element
 * in the message otherwise. */
int kw_kern_gemm_check(kw_kgemm *g);
/* Test hook: change one output element so that the next check must fail. */
void kw_kern_gemm_corrupt(kw_kgemm *g);
/* The output (M x N row-major in the storage precision) and its size in bytes. */
const void *kw_kern_gemm_output(const kw_kgemm *g, size_t *bytes);
void kw_kern_gemm_free(kw_kgemm *g);

/* ---------------- attention ---------------- */
typedef struct kw_kattn_shape {
    int batch, heads, kv_heads, head_dim;
    int mq, lk;         /* query rows and keys per sequence (prefill mq = lk = seq; decode mq = 1) */
    int causal;         /* query i attends keys j <= i + lk - mq */
    kw_kdt dt;          /* storage of Q, K, V and O */
} kw_kattn_shape;

typedef struct kw_kattn kw_kattn;

int kw_kern_attn_create(kw_kattn **out, const kw_kattn_shape *s, unsigned long seed);
/* tile_m is the query block (flash Br, or the QK/PV tile), tile_n the KV block
 * (flash Bc, or the QK tile's key columns); tile_k chunks head_dim in QK. */
int kw_kern_attn_run(kw_kattn *a, const kw_ktiling *t, kw_kattn_mode mode, kw_pool *pool,
                     int threads);
int kw_kern_attn_check(kw_kattn *a);
void kw_kern_attn_corrupt(kw_kattn *a);
/* The output O ([batch][heads][mq][head_dim] in the storage precision) and its size. */
const void *kw_kern_attn_output(const kw_kattn *a, size_t *bytes);
void kw_kern_attn_free(kw_kattn *a);

/* The unfused fp32 epilogue pass: x[i] = act(x[i] + bias[i % nb]) (also
 * timed by `knobwise probe` as the host's elementwise rate). */
void kw_kern_epilogue_f32(float *x, size_t n, const float *bias, size_t nb, kw_kact act);

/* bf16 <-> fp32 (round to nearest even), exposed for the tests and probe. */
uint16_t kw_kern_to_bf16(float x);
float kw_kern_from_bf16(uint16_t h);

#endif
