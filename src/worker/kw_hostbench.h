/* kw_hostbench.h - the loops `knobwise probe` times to describe this host:
 * an FMA loop per storage precision, a streaming read/write loop, the
 * worker's own elementwise epilogue pass, and a dependent pointer chase.
 *
 * They live beside the kernels (src/worker/) because they must measure what
 * the kernels do: the same 16-float vectors, the same bf16 conversion on load,
 * the same target_clones dispatch. Each returns a value derived from its work
 * so the compiler cannot drop the loop. */
#ifndef KW_HOSTBENCH_H
#define KW_HOSTBENCH_H

#include <stddef.h>
#include <stdint.h>

/* FLOPs one call of kw_hostbench_fma performs per iteration. */
#define KW_HOSTBENCH_FMA_FLOPS_PER_ITER (12.0 * 16.0 * 2.0)

/* iters x 12 independent 16-lane FMAs on register accumulators. bf16 != 0:
 * each iteration's multiplier vector is loaded from a small bf16 array and
 * converted first, as the kernels' direct path does. scalar != 0: the same
 * 12 chains one lane wide (the unvectorised code a ragged edge runs). */
double kw_hostbench_fma(long iters, int bf16, int scalar);
/* FLOPs per iteration of the scalar variant. */
#define KW_HOSTBENCH_SCALAR_FLOPS_PER_ITER (12.0 * 2.0)

/* One streaming pass y[i] = x[i] * s + y[i] over n floats (reads 8 bytes and
 * writes 4 per element). Returns a checksum. */
double kw_hostbench_stream(float *y, const float *x, size_t n, float s);
/* The epilogue pass the worker runs unfused in fp32 (kw_kern_epilogue_f32, GELU). */
double kw_hostbench_epilogue(float *x, size_t n, const float *bias, size_t nb);
/* Scalar expf of each of x[0..n) into y (the worker's softmax calls expf one
 * score at a time). Returns a checksum. */
double kw_hostbench_exp(float *y, const float *x, size_t n);
/* Follow next[] from 0 for `steps` loads; returns the final index. */
size_t kw_hostbench_chase(const uint32_t *next, long steps);

#endif
