/* kw_kv.h - the KV cache as device memory sees it: paged (tokens per page,
 * the kv_page_tokens knob) or contiguous, and whether a batch's KV cache and
 * the weights fit the device memory the accelerator file declares.
 *
 *   kw_kv_read_tokens tokens a decode kernel reads from a sequence's cache
 *                     (whole pages, or up to the sequence end for a flash
 *                     kernel; the cache itself occupies whole pages)
 *   kw_kv_table_bytes its block table's bytes
 *   kw_kv_batch_bytes KV bytes of a batch and the block's weight bytes
 *   kw_kv_check       KW_EINPUT when they do not fit (the candidate is refused)
 */
#ifndef KW_KV_H
#define KW_KV_H

#include "kw_model.h"

/* Tokens of a ctx-token cache (pages of page_tokens; 0 = contiguous) that a
 * decode attention kernel reads: whole
 * pages (vLLM's paged_attention iterates over whole blocks) unless
 * stops_at_end, where the kernel stops at the sequence end inside its last
 * page (FlashAttention-2/-3; see kw_kv.c). */
double kw_kv_read_tokens(double ctx, int page_tokens, int stops_at_end);

/* Bytes of one sequence's block table for ctx tokens: 4 B per page (0 when
 * contiguous). */
double kw_kv_table_bytes(double ctx, int page_tokens);

/* Per device (b is the tensor-parallel slice), over b->layers layers:
 * *kv_bytes for requests x s->batch sequences of the shape's context (decode:
 * kv_len + the new token; prefill: seq), *weight_bytes every weight operand,
 * in the mapping's storage precision. */
void kw_kv_batch_bytes(double *kv_bytes, double *weight_bytes, const kw_block *b,
                       const kw_shape *s, const kw_mapping *m, int requests);

/* 0 when the accelerator declares no capacity or the batch fits (with dec
 * not NULL: its sequences' caches beside, one pass of both); otherwise
 * KW_EINPUT naming the bytes needed and available. */
int kw_kv_check(const kw_accel *a, const kw_block *b, const kw_shape *s, const kw_shape *dec,
                const kw_mapping *m, int requests);

#endif
