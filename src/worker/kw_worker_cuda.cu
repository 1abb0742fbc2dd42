/* kw_worker_cuda.cu - knobwise-worker-cuda: the worker protocol of README.md
 * ("The worker protocol (measuring evaluator, version 1)") driving CUDA
 * versions of the shipped worker's kernels, built only by
 * `./configure --with-cuda` (nvcc). Same requests, same knobs, same answers
 * as knobwise-worker, so the shipped spaces tune a GPU unchanged.
 *
 * Kernels: a tiled GEMM C = act(A B + bias) (tile_m x tile_n output tiles
 * of one 16 x 16 thread block, each thread a register block of
 * (tile_m/16) x (tile_n/16) outputs, K staged through shared memory in
 * tile_k chunks; split_k partial sums over gridDim.z reduced in a fixed
 * order by a second kernel that applies the epilogue when fused; otherwise
 * the epilogue is its own kernel), and attention: none (scores written,
 * softmax kernel, PV kernel), qk_softmax (scores and softmax of a row in one
 * kernel, P written, PV), flash (one kernel per query row, online softmax
 * over key blocks of tile_n, nothing of size N x N written). fp32 or bf16
 * storage (cuda_bf16.h conversions), fp32 accumulation. Every request first
 * runs once and is compared with an fp64 host reference of the same stored
 * inputs (relative tolerance per precision); a wrong result is
 * `error reason=wrong_result`, never a time. Times: cudaEvent around each of
 * `reps` executions after `warmup` discarded ones.
 *
 * No device (cudaGetDeviceCount fails or finds none): the answer to `hello`
 * is `error id=0 reason=unsupported message=no CUDA device: ...` and the
 * worker exits 1, so knobwise reports a worker that did not start, before
 * anything is written (tests/test_cuda.c, which needs no GPU).
 *
 * Design choice: one self-contained file compiled by nvcc alone (no C
 * object of the project linked in), so an nvcc/host-compiler mismatch cannot
 * break the C build; the line parsing is the protocol's few rules
 * (tokens, key=value, op token's name:value list), kept short. Tiles must be
 * multiples of 16 up to 128 and tile_k 8..64 (other values: unsupported).
 * Written and compiled on a host without a GPU: the kernels have not been
 * run here (README says so).
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#define KW_C_LINE_MAX 65536
#define KW_C_BLOCK 16        /* threads per block side */
#define KW_C_TILE_MAX 128    /* output tile side: 8 x 8 register block per thread */
#define KW_C_TK_MAX 64
#define KW_C_REPS_MAX 4000
#define KW_C_GELU_C 0.7978845608028654f /* sqrt(2/pi), tanh GELU */
#define KW_C_GELU_A 0.044715f
#define KW_C_TOL_F32 1e-3    /* relative to the reference's scale */
#define KW_C_TOL_BF16 3e-2
#define KW_C_SEED 20261202u

typedef std::vector<std::pair<std::string, std::string>> kw_toks;

static const char *kw_get(const kw_toks &t, const char *key)
{
    for (const auto &p : t)
        if (p.first == key)
            return p.second.c_str();
    return NULL;
}

static long kw_long(const char *s, long dflt)
{
    if (!s)
        return dflt;
    char *e;
    long v = strtol(s, &e, 10);
    return (e == s || *e) ? -1 : v;
}

/* "name:value" in an op token "kind,name:value,..." */
static long kw_op_long(const std::string &spec, const char *key, long dflt)
{
    std::string k = std::string(",") + key + ":";
    size_t p = spec.find(k);
    if (p == std::string::npos)
        return dflt;
    return strtol(spec.c_str() + p + k.size(), NULL, 10);
}

static void kw_err(long id, const char *reason, const char *msg)
{
    printf("error id=%ld reason=%s message=", id, reason);
    for (const char *p = msg; *p; p++)
        putchar((unsigned char)*p < ' ' ? ' ' : *p);
    putchar('\n');
    fflush(stdout);
}

/* ---------------- device code ---------------- */
template <typename T> __device__ float kw_ld(const T *p, long i);
template <> __device__ float kw_ld<float>(const float *p, long i) { return p[i]; }
template <> __device__ float kw_ld<__nv_bfloat16>(const __nv_bfloat16 *p, long i)
{
    return __bfloat162float(p[i]);
}
template <typename T> __device__ void kw_st(T *p, long i, float v);
template <> __device__ void kw_st<float>(float *p, long i, float v) { p[i] = v; }
template <> __device__ void kw_st<__nv_bfloat16>(__nv_bfloat16 *p, long i, float v)
{
    p[i] = __float2bfloat16(v);
}

__device__ float kw_act(float x)
{
    return 0.5f * x * (1.0f + tanhf(KW_C_GELU_C * (x + KW_C_GELU_A * x * x * x)));
}

/* C[z] (fp32 partial, or T output with the epilogue when z splits == 1 and
 * fuse) = A[m x k] B[k x n] over this split's K range. */
template <typename T>
__global__ void kw_gemm(const T *a, const T *b, const T *bias, T *c, float *part, int m, int n,
                        int k, int tm, int tn, int tk, int splits, int epi)
{
    extern __shared__ float sh[];
    float *sa = sh, *sb = sh + tm * tk;
    int rm = tm / KW_C_BLOCK, rn = tn / KW_C_BLOCK;
    int i0 = blockIdx.y * tm, j0 = blockIdx.x * tn;
    int per = (k + splits - 1) / splits, k0 = blockIdx.z * per, k1 = min(k, k0 + per);
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * KW_C_BLOCK + tx;
    float acc[KW_C_TILE_MAX / KW_C_BLOCK][KW_C_TILE_MAX / KW_C_BLOCK];
    for (int r = 0; r < rm; r++)
        for (int q = 0; q < rn; q++)
            acc[r][q] = 0.0f;
    for (int kc = k0; kc < k1; kc += tk) {
        int kk = min(tk, k1 - kc);
        for (int e = tid; e < tm * tk; e += KW_C_BLOCK * KW_C_BLOCK) {
            int r = e / tk, p = e % tk;
            sa[e] = (i0 + r < m && p < kk) ? kw_ld(a, (long)(i0 + r) * k + kc + p) : 0.0f;
        }
        for (int e = tid; e < tk * tn; e += KW_C_BLOCK * KW_C_BLOCK) {
            int p = e / tn, q = e % tn;
            sb[e] = (p < kk && j0 + q < n) ? kw_ld(b, (long)(kc + p) * n + j0 + q) : 0.0f;
        }
        __syncthreads();
        for (int p = 0; p < kk; p++)
            for (int r = 0; r < rm; r++) {
                float x = sa[(ty + r * KW_C_BLOCK) * tk + p];
                for (int q = 0; q < rn; q++)
                    acc[r][q] += x * sb[p * tn + tx + q * KW_C_BLOCK];
            }
        __syncthreads();
    }
    for (int r = 0; r < rm; r++)
        for (int q = 0; q < rn; q++) {
            int i = i0 + ty + r * KW_C_BLOCK, j = j0 + tx + q * KW_C_BLOCK;
            if (i >= m || j >= n)
                continue;
            if (splits > 1)
                part[((long)blockIdx.z * m + i) * n + j] = acc[r][q];
            else
                kw_st(c, (long)i * n + j, epi ? kw_act(acc[r][q] + kw_ld(bias, j)) : acc[r][q]);
        }
}

template <typename T>
__global__ void kw_reduce(const float *part, const T *bias, T *c, int m, int n, int splits, int epi)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long)m * n)
        return;
    float s = 0.0f;
    for (int z = 0; z < splits; z++)
        s += part[(long)z * m * n + i];
    kw_st(c, i, epi ? kw_act(s + kw_ld(bias, i % n)) : s);
}

template <typename T> __global__ void kw_epilogue(T *c, const T *bias, int m, int n)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (long)m * n)
        kw_st(c, i, kw_act(kw_ld(c, i) + kw_ld(bias, i % n)));
}

/* Attention layout: Q, O [inst][mq][d]; K, V [kvinst][lk][d]; inst = b * heads + h. */
__device__ long kw_kvi(int inst, int heads, int kvh)
{
    return (long)(inst / heads) * kvh + (inst % heads) / (heads / kvh);
}

__device__ int kw_kend(int i, int mq, int lk, int causal) { return causal ? i + (lk - mq) + 1 : lk; }

/* One thread per score S[inst][i][j] = q_i . k_j / sqrt(d) (masked: -inf). */
template <typename T>
__global__ void kw_scores(const T *q, const T *kt, float *s, int inst, int heads, int kvh, int mq,
                          int lk, int d, int causal)
{
    long e = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (long)inst * mq * lk)
        return;
    int j = (int)(e % lk), i = (int)((e / lk) % mq), h = (int)(e / ((long)lk * mq));
    const long qo = ((long)h * mq + i) * d, ko = (kw_kvi(h, heads, kvh) * lk + j) * d;
    float acc = 0.0f;
    for (int c = 0; c < d; c++)
        acc += kw_ld(q, qo + c) * kw_ld(kt, ko + c);
    s[e] = j < kw_kend(i, mq, lk, causal) ? acc * rsqrtf((float)d) : -INFINITY;
}

/* Softmax of one row per block (one thread walks the row: rows are short). */
__global__ void kw_softmax(float *s, long rows, int lk)
{
    long r = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float *x = s + r * lk, mx = -INFINITY, sum = 0.0f;
    for (int j = 0; j < lk; j++)
        mx = fmaxf(mx, x[j]);
    for (int j = 0; j < lk; j++) {
        x[j] = x[j] == -INFINITY ? 0.0f : expf(x[j] - mx);
        sum += x[j];
    }
    for (int j = 0; j < lk; j++)
        x[j] /= sum;
}

/* qk_softmax: one thread per query row computes its scores and softmax. */
template <typename T>
__global__ void kw_qk_softmax(const T *q, const T *kt, float *s, int inst, int heads, int kvh,
                              int mq, int lk, int d, int causal)
{
    long r = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= (long)inst * mq)
        return;
    int i = (int)(r % mq), h = (int)(r / mq);
    float *x = s + r * lk, mx = -INFINITY, sum = 0.0f;
    int kend = kw_kend(i, mq, lk, causal);
    for (int j = 0; j < lk; j++) {
        float acc = 0.0f;
        for (int c = 0; c < d; c++)
            acc += kw_ld(q, r * d + c) * kw_ld(kt, (kw_kvi(h, heads, kvh) * lk + j) * d + c);
        x[j] = j < kend ? acc * rsqrtf((float)d) : -INFINITY;
        mx = fmaxf(mx, x[j]);
    }
    for (int j = 0; j < lk; j++) {
        x[j] = x[j] == -INFINITY ? 0.0f : expf(x[j] - mx);
        sum += x[j];
    }
    for (int j = 0; j < lk; j++)
        x[j] /= sum;
}

/* O = P V, one thread per output element. */
template <typename T>
__global__ void kw_pv(const float *p, const T *v, T *o, int inst, int heads, int kvh, int mq, int lk,
                      int d)
{
    long e = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (long)inst * mq * d)
        return;
    int c = (int)(e % d);
    long r = e / d;
    int h = (int)(r / mq);
    float acc = 0.0f;
    for (int j = 0; j < lk; j++)
        acc += p[r * lk + j] * kw_ld(v, (kw_kvi(h, heads, kvh) * lk + j) * d + c);
    kw_st(o, e, acc);
}

/* Flash: one block of d threads per query row; key blocks of bc staged in
 * shared memory, online softmax (Milakov & Gimelshein, arXiv 1805.02867). */
template <typename T>
__global__ void kw_flash(const T *q, const T *kt, const T *v, T *o, int inst, int heads, int kvh,
                         int mq, int lk, int d, int causal, int bc)
{
    extern __shared__ float sh[];
    float *qs = sh, *sc = sh + d;
    long r = blockIdx.x;
    int i = (int)(r % mq), h = (int)(r / mq), c = threadIdx.x;
    long kv = kw_kvi(h, heads, kvh) * lk;
    qs[c] = kw_ld(q, r * d + c);
    __syncthreads();
    float m = -INFINITY, l = 0.0f, acc = 0.0f;
    int kend = kw_kend(i, mq, lk, causal);
    for (int j0 = 0; j0 < kend; j0 += bc) {
        int w = min(bc, kend - j0);
        for (int j = c; j < w; j += blockDim.x) {
            float s = 0.0f;
            for (int t = 0; t < d; t++)
                s += qs[t] * kw_ld(kt, (kv + j0 + j) * d + t);
            sc[j] = s * rsqrtf((float)d);
        }
        __syncthreads();
        float mx = m;
        for (int j = 0; j < w; j++)
            mx = fmaxf(mx, sc[j]);
        float alpha = m == -INFINITY ? 0.0f : expf(m - mx), sum = 0.0f, pv = 0.0f;
        for (int j = 0; j < w; j++) {
            float p = expf(sc[j] - mx);
            sum += p;
            pv += p * kw_ld(v, (kv + j0 + j) * d + c);
        }
        l = l * alpha + sum;
        acc = acc * alpha + pv;
        m = mx;
        __syncthreads();
    }
    kw_st(o, r * d + c, acc / l);
}

/* ---------------- host side ---------------- */
struct kw_buf {
    void *p = NULL;
    size_t bytes = 0;
};

static int kw_alloc(kw_buf &b, size_t bytes)
{
    if (b.bytes >= bytes)
        return 0;
    cudaFree(b.p);
    b.p = NULL;
    b.bytes = 0;
    if (cudaMalloc(&b.p, bytes) != cudaSuccess)
        return -1;
    b.bytes = bytes;
    return 0;
}

/* Inputs seeded on the host (fp64 reference reads the same stored values). */
static float kw_rand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u; /* Numerical Recipes LCG: inputs only, not statistics */
    return ((float)(*s >> 8) / 16777216.0f) - 0.5f;
}

static float kw_round(float x, int bf16)
{
    return bf16 ? __bfloat162float(__float2bfloat16(x)) : x;
}

static int kw_upload(kw_buf &b, const std::vector<float> &h, int bf16)
{
    size_t n = h.size();
    if (kw_alloc(b, n * (bf16 ? 2 : 4)) != 0)
        return -1;
    if (!bf16)
        return cudaMemcpy(b.p, h.data(), n * 4, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
    std::vector<__nv_bfloat16> t(n);
    for (size_t i = 0; i < n; i++)
        t[i] = __float2bfloat16(h[i]);
    return cudaMemcpy(b.p, t.data(), n * 2, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
}

static int kw_download(std::vector<float> &h, const kw_buf &b, size_t n, int bf16)
{
    h.resize(n);
    if (!bf16)
        return cudaMemcpy(h.data(), b.p, n * 4, cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
    std::vector<__nv_bfloat16> t(n);
    if (cudaMemcpy(t.data(), b.p, n * 2, cudaMemcpyDeviceToHost) != cudaSuccess)
        return -1;
    for (size_t i = 0; i < n; i++)
        h[i] = __bfloat162float(t[i]);
    return 0;
}

struct kw_op {
    std::string name;
    int attn = 0;
    long n = 0, k = 0, epi = 0;                   /* gemm */
    long heads = 0, kvh = 0, d = 0, causal = 0;   /* attention */
    long tm = 64, tn = 64, tk = 32, split = 1;
    kw_buf a, b, bias, c, part, s, v;
    std::vector<float> ref;                       /* fp64 reference, stored as float */
};

struct kw_req {
    long m = 0, mq = 0, lk = 0, batch = 0;
    int bf16 = 0, fuse_epi = 0, mode = 0;         /* mode: 0 none, 1 qk_softmax, 2 flash */
};

template <typename T> static void kw_run_gemm(kw_op &o, const kw_req &r)
{
    dim3 blk(KW_C_BLOCK, KW_C_BLOCK);
    dim3 grid((unsigned)((o.n + o.tn - 1) / o.tn), (unsigned)((r.m + o.tm - 1) / o.tm), (unsigned)o.split);
    size_t sh = (size_t)(o.tm * o.tk + o.tk * o.tn) * sizeof(float);
    int fused = o.epi && r.fuse_epi;
    kw_gemm<T><<<grid, blk, sh>>>((const T *)o.a.p, (const T *)o.b.p, (const T *)o.bias.p, (T *)o.c.p,
                                  (float *)o.part.p, (int)r.m, (int)o.n, (int)o.k, (int)o.tm, (int)o.tn,
                                  (int)o.tk, (int)o.split, fused);
    long mn = r.m * o.n;
    unsigned nb = (unsigned)((mn + 255) / 256);
    if (o.split > 1)
        kw_reduce<T><<<nb, 256>>>((const float *)o.part.p, (const T *)o.bias.p, (T *)o.c.p, (int)r.m,
                                  (int)o.n, (int)o.split, fused);
    if (o.epi && !r.fuse_epi)
        kw_epilogue<T><<<nb, 256>>>((T *)o.c.p, (const T *)o.bias.p, (int)r.m, (int)o.n);
}

template <typename T> static void kw_run_attn(kw_op &o, const kw_req &r)
{
    int inst = (int)(r.batch * o.heads), kvh = (int)o.kvh;
    long rows = (long)inst * r.mq;
    const T *q = (const T *)o.a.p, *kt = (const T *)o.b.p, *v = (const T *)o.v.p;
    T *out = (T *)o.c.p;
    float *s = (float *)o.s.p;
    if (r.mode == 2) {
        size_t sh = (size_t)(o.d + o.tn) * sizeof(float);
        kw_flash<T><<<(unsigned)rows, (unsigned)o.d, sh>>>(q, kt, v, out, inst, (int)o.heads, kvh,
                                                           (int)r.mq, (int)r.lk, (int)o.d,
                                                           (int)o.causal, (int)o.tn);
        return;
    }
    if (r.mode == 1) {
        kw_qk_softmax<T><<<(unsigned)((rows + 127) / 128), 128>>>(q, kt, s, inst, (int)o.heads, kvh,
                                                                 (int)r.mq, (int)r.lk, (int)o.d,
                                                                 (int)o.causal);
    } else {
        long ns = rows * r.lk;
        kw_scores<T><<<(unsigned)((ns + 255) / 256), 256>>>(q, kt, s, inst, (int)o.heads, kvh,
                                                            (int)r.mq, (int)r.lk, (int)o.d,
                                                            (int)o.causal);
        kw_softmax<<<(unsigned)((rows + 127) / 128), 128>>>(s, rows, (int)r.lk);
    }
    long no = rows * o.d;
    kw_pv<T><<<(unsigned)((no + 255) / 256), 256>>>(s, v, out, inst, (int)o.heads, kvh, (int)r.mq,
                                                    (int)r.lk, (int)o.d);
}

static void kw_run(std::vector<kw_op> &ops, const kw_req &r)
{
    for (auto &o : ops) {
        if (o.attn)
            r.bf16 ? kw_run_attn<__nv_bfloat16>(o, r) : kw_run_attn<float>(o, r);
        else
            r.bf16 ? kw_run_gemm<__nv_bfloat16>(o, r) : kw_run_gemm<float>(o, r);
    }
}

static double kw_gelu_d(double x)
{
    return 0.5 * x * (1.0 + tanh(KW_C_GELU_C * (x + KW_C_GELU_A * x * x * x)));
}

/* Seeded inputs uploaded, the fp64 reference of the stored values kept. */
static int kw_prepare(kw_op &o, const kw_req &r)
{
    unsigned seed = KW_C_SEED;
    for (char ch : o.name)
        seed = seed * 31u + (unsigned char)ch;
    if (!o.attn) {
        std::vector<float> a((size_t)(r.m * o.k)), b((size_t)(o.k * o.n)), bias((size_t)o.n);
        for (auto &x : a) x = kw_round(kw_rand(&seed), r.bf16);
        for (auto &x : b) x = kw_round(kw_rand(&seed), r.bf16);
        for (auto &x : bias) x = kw_round(kw_rand(&seed), r.bf16);
        if (kw_upload(o.a, a, r.bf16) || kw_upload(o.b, b, r.bf16) || kw_upload(o.bias, bias, r.bf16) ||
            kw_alloc(o.c, (size_t)(r.m * o.n) * 4) ||
            kw_alloc(o.part, (size_t)(o.split * r.m * o.n) * 4 + 4))
            return -1;
        o.ref.assign((size_t)(r.m * o.n), 0.0f);
        for (long i = 0; i < r.m; i++)
            for (long j = 0; j < o.n; j++) {
                double s = 0.0;
                for (long p = 0; p < o.k; p++)
                    s += (double)a[i * o.k + p] * b[p * o.n + j];
                o.ref[i * o.n + j] = (float)(o.epi ? kw_gelu_d(s + bias[j]) : s);
            }
        return 0;
    }
    long inst = r.batch * o.heads, kvinst = r.batch * o.kvh;
    std::vector<float> q((size_t)(inst * r.mq * o.d)), k((size_t)(kvinst * r.lk * o.d)), v(k.size());
    for (auto &x : q) x = kw_round(kw_rand(&seed), r.bf16);
    for (auto &x : k) x = kw_round(kw_rand(&seed), r.bf16);
    for (auto &x : v) x = kw_round(kw_rand(&seed), r.bf16);
    if (kw_upload(o.a, q, r.bf16) || kw_upload(o.b, k, r.bf16) || kw_upload(o.v, v, r.bf16) ||
        kw_alloc(o.c, q.size() * 4) || kw_alloc(o.s, (size_t)(inst * r.mq * r.lk) * 4))
        return -1;
    o.ref.assign(q.size(), 0.0f);
    std::vector<double> sc((size_t)r.lk);
    for (long h = 0; h < inst; h++) {
        long kv = ((h / o.heads) * o.kvh + (h % o.heads) / (o.heads / o.kvh)) * r.lk;
        for (long i = 0; i < r.mq; i++) {
            long kend = o.causal ? i + (r.lk - r.mq) + 1 : r.lk;
            double mx = -INFINITY, sum = 0.0;
            for (long j = 0; j < kend; j++) {
                double s = 0.0;
                for (long c = 0; c < o.d; c++)
                    s += (double)q[(h * r.mq + i) * o.d + c] * k[(kv + j) * o.d + c];
                sc[j] = s / sqrt((double)o.d);
                mx = fmax(mx, sc[j]);
            }
            for (long j = 0; j < kend; j++)
                sum += (sc[j] = exp(sc[j] - mx));
            for (long c = 0; c < o.d; c++) {
                double acc = 0.0;
                for (long j = 0; j < kend; j++)
                    acc += sc[j] * v[(kv + j) * o.d + c];
                o.ref[(h * r.mq + i) * o.d + c] = (float)(acc / sum);
            }
        }
    }
    return 0;
}

static int kw_check(const kw_op &o, const kw_req &r, char *msg, size_t size)
{
    std::vector<float> out;
    if (kw_download(out, o.c, o.ref.size(), r.bf16) != 0) {
        snprintf(msg, size, "operator %s: cannot read the output back", o.name.c_str());
        return -1;
    }
    double scale = 0.0;
    for (float x : o.ref)
        scale = fmax(scale, fabs((double)x));
    double tol = (r.bf16 ? KW_C_TOL_BF16 : KW_C_TOL_F32) * (scale > 0.0 ? scale : 1.0);
    for (size_t i = 0; i < out.size(); i++)
        if (!(fabs((double)out[i] - o.ref[i]) <= tol)) {
            snprintf(msg, size, "operator %s: element %zu = %.6g, fp64 reference %.6g", o.name.c_str(),
                     i, out[i], o.ref[i]);
            return 1;
        }
    return 0;
}

static long kw_knob(const kw_toks &t, const std::string &group, const char *name, long dflt)
{
    return kw_long(kw_get(t, ("knob." + group + "." + name).c_str()), dflt);
}

static void kw_measure(const kw_toks &t)
{
    long id = kw_long(kw_get(t, "id"), 0);
    const char *ph = kw_get(t, "phase");
    kw_req r;
    r.batch = kw_long(kw_get(t, "batch"), -1);
    long seq = kw_long(kw_get(t, "seq"), 1), kv = kw_long(kw_get(t, "kv_len"), 0);
    long warm = kw_long(kw_get(t, "warmup"), 0), reps = kw_long(kw_get(t, "reps"), -1);
    int decode = ph && strcmp(ph, "decode") == 0;
    if (!ph || (!decode && strcmp(ph, "prefill") != 0) || r.batch < 1 || warm < 0 ||
        warm > KW_C_REPS_MAX || reps < 1 || reps > KW_C_REPS_MAX || (decode && kv < 1) || seq < 1) {
        kw_err(id, "internal", "measure needs phase, batch, seq or kv_len, warmup and reps");
        return;
    }
    r.m = decode ? r.batch : r.batch * seq;
    r.mq = decode ? 1 : seq;
    r.lk = decode ? kv : seq;
    const char *prec = kw_get(t, "knob.precision"), *fe = kw_get(t, "knob.fuse_epilogue"),
               *fa = kw_get(t, "knob.fuse_attention"), *acc = kw_get(t, "knob.accum_precision");
    if ((prec && strcmp(prec, "fp32") && strcmp(prec, "bf16")) || (acc && strcmp(acc, "fp32"))) {
        kw_err(id, "unsupported", "precision fp32|bf16 with fp32 accumulation only");
        return;
    }
    r.bf16 = prec && !strcmp(prec, "bf16");
    r.fuse_epi = fe && !strcmp(fe, "on");
    r.mode = !fa || !strcmp(fa, "none") ? 0 : !strcmp(fa, "qk_softmax") ? 1 : !strcmp(fa, "flash") ? 2 : -1;
    if (r.mode < 0) {
        kw_err(id, "unsupported", "fuse_attention none|qk_softmax|flash");
        return;
    }
    static std::vector<kw_op> ops; /* kept while the request's operators stay the same */
    static std::string last_key;
    std::string key = std::string(ph) + "|" + std::to_string(r.m) + "|" + std::to_string(r.lk) + "|" +
                      (r.bf16 ? "bf16" : "fp32");
    std::vector<kw_op> want;
    for (const auto &p : t) {
        if (p.first.compare(0, 3, "op.") != 0)
            continue;
        kw_op o;
        o.name = p.first.substr(3);
        const std::string &spec = p.second;
        o.attn = spec.compare(0, 9, "attention") == 0;
        if (!o.attn && spec.compare(0, 4, "gemm") != 0) {
            kw_err(id, "unsupported", ("operator " + o.name + ": only gemm and attention").c_str());
            return;
        }
        o.n = kw_op_long(spec, "n", 0);
        o.k = kw_op_long(spec, "k", 0);
        o.epi = kw_op_long(spec, "epilogue", 0);
        o.heads = kw_op_long(spec, "heads", 0);
        o.kvh = kw_op_long(spec, "kv_heads", o.heads);
        o.d = kw_op_long(spec, "head_dim", 0);
        o.causal = kw_op_long(spec, "causal", 0);
        std::string g = o.name;
        o.tm = kw_knob(t, g, "tile_m", 64);
        o.tn = kw_knob(t, g, "tile_n", 64);
        o.tk = kw_knob(t, g, "tile_k", 32);
        o.split = kw_knob(t, g, "split_k", 1);
        if (o.tm < KW_C_BLOCK || o.tm > KW_C_TILE_MAX || o.tm % KW_C_BLOCK || o.tn < KW_C_BLOCK ||
            o.tn > KW_C_TILE_MAX || o.tn % KW_C_BLOCK || o.tk < 8 || o.tk > KW_C_TK_MAX || o.split < 1 ||
            o.split > 64) {
            kw_err(id, "unsupported", "tiles must be multiples of 16 up to 128, tile_k 8..64, split_k 1..64");
            return;
        }
        if ((!o.attn && (o.n < 1 || o.k < 1)) ||
            (o.attn && (o.heads < 1 || o.kvh < 1 || o.heads % o.kvh || o.d < 1 || o.d > 1024))) {
            kw_err(id, "internal", ("operator " + o.name + ": bad dimensions").c_str());
            return;
        }
        key += "|" + p.first + "=" + spec;
        want.push_back(o);
    }
    if (want.empty()) {
        kw_err(id, "unsupported", "the block has no operator this worker runs");
        return;
    }
    if (key != last_key) {
        for (auto &o : ops)
            for (kw_buf *b : {&o.a, &o.b, &o.bias, &o.c, &o.part, &o.s, &o.v})
                cudaFree(b->p);
        ops = want;
        last_key = key;
        for (auto &o : ops)
            if (kw_prepare(o, r) != 0) {
                last_key.clear();
                kw_err(id, "resource", "out of device memory");
                return;
            }
    }
    for (size_t i = 0; i < ops.size(); i++) { /* this request's tiling on the kept inputs */
        ops[i].tm = want[i].tm;
        ops[i].tn = want[i].tn;
        ops[i].tk = want[i].tk;
        ops[i].split = want[i].split;
        if (!ops[i].attn && kw_alloc(ops[i].part, (size_t)(ops[i].split * r.m * ops[i].n) * 4 + 4)) {
            kw_err(id, "resource", "out of device memory");
            return;
        }
    }
    char msg[512];
    kw_run(ops, r);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        kw_err(id, "internal", cudaGetErrorString(e));
        return;
    }
    for (auto &o : ops) {
        int c = kw_check(o, r, msg, sizeof msg);
        if (c != 0) {
            kw_err(id, c > 0 ? "wrong_result" : "internal", msg);
            return;
        }
    }
    for (long i = 0; i < warm; i++)
        kw_run(ops, r);
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    std::vector<float> ms((size_t)reps);
    for (long i = 0; i < reps; i++) {
        cudaEventRecord(t0);
        kw_run(ops, r);
        cudaEventRecord(t1);
        cudaEventSynchronize(t1);
        cudaEventElapsedTime(&ms[i], t0, t1);
    }
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    if ((e = cudaGetLastError()) != cudaSuccess) {
        kw_err(id, "internal", cudaGetErrorString(e));
        return;
    }
    printf("ok id=%ld unit=kernel samples_us=", id);
    for (long i = 0; i < reps; i++)
        printf(i ? ",%.3f" : "%.3f", ms[i] * 1000.0);
    putchar('\n');
    fflush(stdout);
}

int main(void)
{
    static char line[KW_C_LINE_MAX + 2];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        kw_toks t;
        std::string cmd;
        for (char *p = strtok(line, " "); p; p = strtok(NULL, " ")) {
            char *eq = strchr(p, '=');
            if (cmd.empty() && !eq) {
                cmd = p;
                continue;
            }
            if (eq) {
                *eq = '\0';
                t.emplace_back(p, eq + 1);
            }
        }
        if (cmd == "hello") {
            if (kw_long(kw_get(t, "protocol"), 0) != 1) {
                kw_err(0, "unsupported", "this worker speaks protocol=1");
                continue;
            }
            int n = 0;
            cudaError_t e = cudaGetDeviceCount(&n);
            if (e != cudaSuccess || n < 1) {
                char msg[256];
                snprintf(msg, sizeof msg, "no CUDA device: %s",
                         e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found none");
                kw_err(0, "unsupported", msg);
                return 1;
            }
            const char *idx = getenv("KW_WORKER_INDEX");
            int dev = idx ? atoi(idx) % n : 0;
            cudaSetDevice(dev);
            cudaDeviceProp prop;
            cudaGetDeviceProperties(&prop, dev);
            std::string name = prop.name;
            for (auto &ch : name)
                if (ch == ' ' || ch == '=')
                    ch = '_';
            printf("ready protocol=1 name=knobwise-cuda device=%s\n", name.c_str());
            fflush(stdout);
        } else if (cmd == "measure") {
            kw_measure(t);
        } else if (cmd == "quit") {
            return 0;
        } else if (!cmd.empty()) {
            kw_err(0, "internal", "unknown command (hello, measure, quit)");
        }
    }
    return 0;
}
