#!/usr/bin/env python3
"""wgmma_drain.py - writes the CUDA source of the per-K-block drain
measurement (doc/fidelity-log.md, issue #15: the DeepGEMM one-wave rows) to stdout.

What it measures: one warpgroup per SM (one CTA on every SM, 128 threads,
sm_90a), both operands resident in shared memory (zeros: no operand load, no
power throttling by data), a loop of nk K blocks, each block 4 WGMMAs of K 32
(e4m3, DeepGEMM's BLOCK_K 128) or of K 16 (bf16, K 64 per block) into one
fp32 accumulator of m64nN, then one commit. Three schedules per N:
  wait_promote  wait_group 0 after each block, then the promotion DeepGEMM's
                fp8 GEMM does there (a6d97a1c fp8_gemm.cuh: two scale loads
                from shared memory, N/2 FFMA per thread into a second
                accumulator; the WGMMA accumulator restarts each block)
  wait          wait_group 0 after each block, no promotion (the WGMMA
                accumulator carries on)
  chain         no wait in the loop: one wait_group 0 after it
Each CTA times its loop with clock64 and %globaltimer. The cycles per K
block come from two loop lengths (slope between nk 56 and 512, so the fixed
part cancels); the waited drain per block is slope(wait) - slope(chain), the
promotion slope(wait_promote) - slope(wait).

The WGMMA instructions are written out per N because an inline PTX operand
list names each accumulator register (N/2 of them). Usage:
  wgmma_drain.py > drain.cu && nvcc -O3 -arch=sm_90a -o drain drain.cu
  ./drain > drain.csv     (tests/cuda/wgmma_drain.sh does all of it)
"""
import sys

# (input type, K per instruction, Ns): e4m3 at DeepGEMM's one-wave BLOCK_N
# (16, 32), its 7168-wide 56, its 4096x2112x7168 block 112, and wider; bf16
# for the bf16 rows, with the 128x144 and 128x176 blocks of DeepGEMM's bf16
# GEMM (4096x576x7168 and 4096x2112x7168): with two warpgroups one's wait
# hides under the other's batch of 4 x N/2 cycles unless it is longer
# (doc/fidelity-log.md, the two-warpgroup reading), so 144 against 176 is its test.
# N stops at 176: the promotion's second accumulator doubles the registers
# (N at 256 would need 256 per thread and spill).
SHAPES = [("e4m3", 32, [16, 32, 56, 64, 112, 128]), ("bf16", 16, [16, 64, 128, 144, 176])]


def wgmma_fn(dtype, k, n):
    """A device function issuing one m64nNkK WGMMA, scale-d a register."""
    r = n // 2
    regs = ", ".join(f"%{i}" for i in range(r))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(r))
    if dtype == "e4m3":
        tail = f"%{r}, %{r + 1}, p, 1, 1;"
    else:  # bf16: imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b (K-major: 0)
        tail = f"%{r}, %{r + 1}, p, 1, 1, 0, 0;"
    return f"""
__device__ __forceinline__ void wgmma_{dtype}_n{n}(float (&d)[{r}], uint64_t da, uint64_t db, int scale_d)
{{
    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{r + 2}, 0;\\n"
                 "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{dtype}.{dtype} "
                 "{{{regs}}}, {tail}\\n}}\\n"
                 : {outs}
                 : "l"(da), "l"(db), "r"(scale_d));
}}
"""


def kernel(dtype, n):
    r = n // 2
    return f"""
template <int MODE>
__global__ void __launch_bounds__(256, 1) drain_{dtype}_n{n}(int nk, unsigned long long *out)
{{
    extern __shared__ __align__(1024) unsigned char smem[];
    for (int i = threadIdx.x; i < KW_SMEM_OPERANDS / 4; i += blockDim.x)
        ((uint32_t *)smem)[i] = 0u;
    float *scales = (float *)(smem + KW_SMEM_OPERANDS);
    for (int i = threadIdx.x; i < 128; i += blockDim.x)
        scales[i] = 1.0f;
    __syncthreads();
    uint64_t da = kw_desc(smem), db = kw_desc(smem + 8192);
    float acc[{r}], fin[{r}];
    for (int i = 0; i < {r}; i++)
        acc[i] = fin[i] = 0.0f;
    asm volatile("bar.sync 0;" ::: "memory");
    unsigned long long c0 = clock64(), t0 = kw_globaltimer();
#pragma unroll 1
    for (int kb = 0; kb < nk; kb++) {{
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        wgmma_{dtype}_n{n}(acc, da, db, MODE == 0 ? 0 : 1);
        wgmma_{dtype}_n{n}(acc, da, db, 1);
        wgmma_{dtype}_n{n}(acc, da, db, 1);
        wgmma_{dtype}_n{n}(acc, da, db, 1);
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        if (MODE != 2)
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        if (MODE == 0) {{
            for (int i = 0; i < {r}; i++)
                asm volatile("" : "+f"(acc[i])::"memory");
            /* DeepGEMM's promotion: scale_a of this thread's rows times
             * scale_b of the block, then N/2 FFMA */
            float s = scales[(threadIdx.x / 4) & 63] * scales[64 + (kb & 63)];
#pragma unroll
            for (int i = 0; i < {r}; i++)
                fin[i] = fmaf(s, acc[i], fin[i]);
        }}
    }}
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    for (int i = 0; i < {r}; i++) /* nothing reads acc before the wait */
        asm volatile("" : "+f"(acc[i])::"memory");
    unsigned long long c1 = clock64(), t1 = kw_globaltimer();
    float keep = 0.0f;
    for (int i = 0; i < {r}; i++)
        keep += acc[i] + fin[i];
    if (threadIdx.x == 0) {{
        out[3 * blockIdx.x] = c1 - c0;
        out[3 * blockIdx.x + 1] = t1 - t0;
        out[3 * blockIdx.x + 2] = keep != 0.0f; /* zeros in, zeros out */
    }}
}}
"""


HEAD = r"""// generated by tests/cuda/wgmma_drain.py: do not edit
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>

#define KW_SMEM_OPERANDS 16384 /* A at 0 (64 x K bytes), B at 8192 (N x K), all zeros */
#define KW_SMEM_BYTES (KW_SMEM_OPERANDS + 512 + 120 * 1024) /* > half of 228 KB: one CTA per SM */

/* A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format" of
 * wgmma): start address >> 4 in bits 0-13, leading byte offset >> 4 in
 * 16-29, stride byte offset >> 4 in 32-45, no swizzle (bits 62-63 zero).
 * K-major core matrices of 8 rows x 16 bytes: the next core along K 128 bytes
 * on, the next 8 rows 256 bytes on. The operands are zeros: the layout only
 * has to stay inside the buffer. */
__device__ __forceinline__ uint64_t kw_desc(const void *p)
{
    uint64_t a = (uint64_t)__cvta_generic_to_shared(p);
    return ((a >> 4) & 0x3FFF) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
}

__device__ __forceinline__ unsigned long long kw_globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
"""

MAIN = r"""
static const char *KW_MODES[3] = {"wait_promote", "wait", "chain"};

static void kw_check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "drain: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

/* Run one kernel at nk blocks on every SM with wgs warpgroups per CTA (each
 * runs the loop; 2 is DeepGEMM's BLOCK_M 128: two math warpgroups), 5 times
 * after a warm-up; print the median over CTAs of each run's cycles and ns
 * (warpgroup 0's), the median run. */
template <typename K>
static void kw_run(K kern, const char *dtype, int n, int mode, int wgs, int nk, int sms,
                   unsigned long long *dev)
{
    kw_check(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, KW_SMEM_BYTES),
             "cudaFuncSetAttribute");
    std::vector<unsigned long long> h(3 * sms);
    std::vector<double> cyc, ns;
    int bad = 0;
    for (int rep = 0; rep < 6; rep++) {
        kern<<<sms, 128 * wgs, KW_SMEM_BYTES>>>(nk, dev);
        kw_check(cudaGetLastError(), "launch");
        kw_check(cudaDeviceSynchronize(), "kernel");
        kw_check(cudaMemcpy(h.data(), dev, 3 * sms * sizeof h[0], cudaMemcpyDeviceToHost), "copy");
        if (rep == 0)
            continue;
        std::vector<double> c(sms), t(sms);
        for (int b = 0; b < sms; b++) {
            c[b] = (double)h[3 * b];
            t[b] = (double)h[3 * b + 1];
            bad += h[3 * b + 2] != 0;
        }
        std::nth_element(c.begin(), c.begin() + sms / 2, c.end());
        std::nth_element(t.begin(), t.begin() + sms / 2, t.end());
        cyc.push_back(c[sms / 2]);
        ns.push_back(t[sms / 2]);
    }
    std::sort(cyc.begin(), cyc.end());
    std::sort(ns.begin(), ns.end());
    printf("%s,%d,%s,%d,%d,%.0f,%.0f,%.0f,%.0f,%d\n", dtype, n, KW_MODES[mode], wgs, nk, cyc[2],
           cyc.front(), cyc.back(), ns[2], bad);
}

int main(void)
{
    int dev_id = 0, sms = 0;
    cudaDeviceProp p;
    kw_check(cudaGetDevice(&dev_id), "cudaGetDevice");
    kw_check(cudaGetDeviceProperties(&p, dev_id), "cudaGetDeviceProperties");
    sms = p.multiProcessorCount;
    setvbuf(stdout, nullptr, _IOLBF, 0); /* rows survive a run cut short by the timeout */
    fprintf(stderr, "drain: %s, %d SMs, sm_%d%d\n", p.name, sms, p.major, p.minor);
    unsigned long long *dev = nullptr;
    kw_check(cudaMalloc(&dev, 3 * sms * sizeof *dev), "cudaMalloc");
    printf("dtype,n,mode,warpgroups,nk,cycles_median,cycles_min,cycles_max,ns_median,nonzero_ctas\n");
    const int nks[2] = {56, 512};
"""


def main():
    out = [HEAD]
    for dtype, k, ns in SHAPES:
        for n in ns:
            out.append(wgmma_fn(dtype, k, n))
            out.append(kernel(dtype, n))
    out.append(MAIN)
    for dtype, _, ns in SHAPES:
        for n in ns:
            for mode in range(3):
                out.append(f"    for (int w = 1; w <= 2; w++)\n"
                           f"        for (int j = 0; j < 2; j++)\n"
                           f"            kw_run(drain_{dtype}_n{n}<{mode}>, \"{dtype}\", {n}, {mode}, w, nks[j], "
                           f"sms, dev);\n")
    out.append("    cudaFree(dev);\n    return 0;\n}\n")
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
