/* kw_tp.h - tensor parallelism: a block split over p devices (Megatron-LM
 * column/row parallel GEMMs, heads split) and the all-reduce that sums the
 * row-parallel outputs, costed on the accelerator's declared interconnect.
 *
 *   kw_tp_allreduce_us  closed-form time of one all-reduce (ring or tree)
 *   kw_tp_split         one device's slice of a block, all-reduces marked
 *   kw_tp_overlap_exposed_us  what a chunked GEMM + all-reduce pipeline exposes
 *   kw_tp_allreduce     the all-reduce kernel in a plan (kw_cost_eval)
 */
#ifndef KW_TP_H
#define KW_TP_H

#include "kw_cost_hook.h"
#include "kw_model.h"

typedef enum { KW_ALLREDUCE_RING, KW_ALLREDUCE_TREE } kw_allreduce_algo;

/* Seconds-free closed forms, microseconds out, bytes the buffer on each device:
 *   ring: 2(p-1)/p x bytes / bw + 2(p-1) x latency
 *   tree: 2 x bytes / bw + 2 ceil(log2 p) x latency
 * 0 for p <= 1. Sources next to the code (kw_tp.c). */
double kw_tp_allreduce_us(kw_allreduce_algo algo, double bytes, int p, double link_bytes_per_s,
                          double latency_us);

/* out = block b as each of p devices runs it. KW_EINPUT when p does not divide
 * the heads, the column-parallel N, the row-parallel K or the experts' FFN
 * width, when the block has a convolution, or when a has no interconnect. */
int kw_tp_split(kw_block *out, const kw_block *b, int p, const kw_accel *a);

/* The communication a pipeline of `chunks` (GEMM chunk, all-reduce chunk)
 * pairs leaves exposed beyond the GEMM's gemm_us: with g = gemm_us / chunks
 * and a = bw_part_us / chunks + lat_part_us,
 *   g + a + (chunks - 1) max(g, a) - gemm_us;
 * chunks <= 1: bw_part_us + lat_part_us (no overlap). */
double kw_tp_overlap_exposed_us(double gemm_us, double bw_part_us, double lat_part_us, int chunks);

/* An all-reduce of `bytes` per device over p devices after an operator whose
 * op_kernels kernels took work_us, as one kernel line: its exposed time
 * (the accelerator's base_us per call, the mapping's tp_overlap_chunks),
 * plus the extra chunk launches. */
int kw_tp_allreduce(kw_cost_ctx *c, const char *name, double bytes, int p, double work_us,
                    int op_kernels);

#endif
