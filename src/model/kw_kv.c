/* kw_kv.c - paged KV cache and device memory capacity (see kw_kv.h).
 *
 * Design choice: paging changes what the attention reads and what memory
 * holds, nothing else. A sequence's cache occupies whole pages (PagedAttention,
 * Kwon et al., SOSP 2023, sec. 4.1: KV blocks of a fixed number of tokens),
 * and vLLM's decode kernel reads and computes its last page whole, masking
 * the unused slots (its paged_attention kernel iterates over whole blocks),
 * so with pages that divide the context the traffic is the contiguous
 * cache's. A flash decode kernel stops at the sequence end instead
 * (kw_kv_read_tokens): FlashAttention-3 visits ceil(seqlen_k / kBlockN) key
 * blocks (Dao-AILab/flash-attention hopper/block.h get_n_block_min_max at
 * 4d9ba4f018cca5c8ca6c6f1df08fea75f119b06d, seqlen_k from cache_seqlens) and
 * loads no row at or past seqlen_k (hopper/paged_kv.h, Seqlenk_mask: the
 * page-table entry and the row copy are predicated off); FlashAttention-2's
 * split-KV kernel does the same (csrc/flash_attn/src/flash_fwd_kernel.h,
 * n_block_max = ceil_div(actual_seqlen_k, kBlockN), predicated copies). Its
 * traffic is the contiguous cache's whatever the page size;
 * every key row stays one contiguous d-element run, so the model's per-row
 * DRAM burst rounding is unchanged by the page size. The block table: a
 * sequence's row of int32 physical page numbers (vLLM's paged-attention op
 * takes block_tables [num_seqs, max_num_blocks_per_seq] of int), read by every K/V
 * stream of a decode kernel, ceil(ctx / page) x 4 B (kw_kv_table_bytes; a
 * prompt's attention reads its own K/V from the QKV GEMM and pays none). Not
 * counted: the benefit paging has over a contiguous cache reserved at the
 * maximum length (a shape has one length).
 *
 * Capacity: a batch is served only if its KV cache (2 x kv_heads x head_dim
 * per token per attention per layer) and the weights fit the device memory;
 * otherwise the candidate is refused (the evaluator names it infeasible),
 * never silently served.
 */
#include <math.h>

#include "kw_error.h"
#include "kw_kv.h"

#define KW_GIB (1024.0 * 1024.0 * 1024.0)
#define KW_KV_TENSORS 2.0   /* K and V */
/* One block-table entry: an int32 physical block number (vLLM block_tables). */
#define KW_KV_TABLE_ENTRY_BYTES 4.0
/* Gated experts hold gate, up and down matrices; ungated up and down. */
#define KW_MOE_GATED_MATRICES 3.0
#define KW_MOE_PLAIN_MATRICES 2.0

/* ctx tokens in pages of page_tokens (0 = contiguous: ctx itself). */
static double kw_kv_tokens(double ctx, int page_tokens)
{
    return page_tokens > 0 ? ceil(ctx / page_tokens) * page_tokens : ctx;
}

double kw_kv_read_tokens(double ctx, int page_tokens, int stops_at_end)
{
    return stops_at_end ? ctx : kw_kv_tokens(ctx, page_tokens);
}

double kw_kv_table_bytes(double ctx, int page_tokens)
{
    return page_tokens > 0 ? ceil(ctx / page_tokens) * KW_KV_TABLE_ENTRY_BYTES : 0.0;
}

void kw_kv_batch_bytes(double *kv_bytes, double *weight_bytes, const kw_block *b,
                       const kw_shape *s, const kw_mapping *m, int requests)
{
    double in = kw_prec_bytes(m->precision);
    double seqs = (double)requests * s->batch;
    double ctx = s->phase == KW_PHASE_DECODE ? s->kv_len + 1.0 : (double)s->seq;
    double L = b->layers > 1 ? b->layers : 1.0;
    double kv = 0.0, w = 0.0;
    for (int i = 0; i < b->n_ops; i++) {
        const kw_op *op = &b->ops[i];
        switch (op->kind) {
        case KW_OP_ATTENTION:
            kv += KW_KV_TENSORS * (op->kv_heads > 0 ? op->kv_heads : op->heads) * op->head_dim *
                  kw_kv_tokens(ctx, m->kv_page_tokens) * in;
            break;
        case KW_OP_GEMM:
            if (op->weights)
                w += (double)op->n * (double)op->k * in;
            break;
        case KW_OP_CONV:
            if (op->weights)
                w += (double)op->kh * op->kw * op->in_c * op->out_c * in;
            break;
        case KW_OP_MOE: {
            double mats = op->gated ? KW_MOE_GATED_MATRICES : KW_MOE_PLAIN_MATRICES;
            double sn = op->shared_experts * (double)(op->shared_n ? op->shared_n : op->n);
            w += (op->experts * (double)op->n + sn) * (double)op->k * mats * in +
                 (double)op->experts * op->k * in; /* router */
            break;
        }
        default:
            break;
        }
    }
    *kv_bytes = kv * seqs * L;
    *weight_bytes = w * L;
}

int kw_kv_check(const kw_accel *a, const kw_block *b, const kw_shape *s, const kw_shape *dec,
                const kw_mapping *m, int requests)
{
    if (a->dram_capacity_bytes == 0)
        return 0;
    double kv, w;
    kw_kv_batch_bytes(&kv, &w, b, s, m, requests);
    if (dec) { /* a mixed pass: the packed decode sequences' caches too */
        double kv_dec, w_again;
        kw_kv_batch_bytes(&kv_dec, &w_again, b, dec, m, 1);
        kv += kv_dec;
    }
    double cap = (double)a->dram_capacity_bytes;
    if (kv + w > cap)
        return kw_error_set(KW_EINPUT,
                            "shape '%s': %d request(s) of %d sequences need %.2f GiB of KV cache "
                            "and %.2f GiB of weights per device; accelerator '%s' has %.2f GiB",
                            s->name, requests, s->batch, kv / KW_GIB, w / KW_GIB, a->name,
                            cap / KW_GIB);
    return 0;
}
