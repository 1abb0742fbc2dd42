/* kw_tp.c - tensor parallelism over p devices (see kw_tp.h).
 *
 * Design choice: the split is a rewrite of the block (each device's slice),
 * so the GEMM, attention and MoE rules of stage 1 cost each slice unchanged;
 * the only new cost is the all-reduce, costed in closed form on the links the
 * accelerator file declares. The split follows Megatron-LM (Shoeybi et al.,
 * arXiv 1909.08053, sec. 3, Fig. 3): a GEMM whose input is replicated is
 * column parallel (N / p: Q, K, V; gate and up), the GEMM that consumes the
 * split activation is row parallel (K / p: o_proj, down) and its partial
 * outputs are summed by one all-reduce; attention splits its heads (KV heads
 * too, or replicated when there are fewer KV heads than devices, as vLLM
 * does); an MoE splits each expert's FFN width and sums after its down GEMMs.
 *
 * Overlap (knob tp_overlap_chunks = c): the all-reduce's output is the next
 * operator's input (the "g" operator of Fig. 3), so unchunked it is on the
 * critical path. What the schedule allows is decomposition: the row-parallel
 * GEMM is split along its rows (tokens) into c chunks, and chunk i's
 * all-reduce runs while chunk i+1 computes (Wang et al., "Overlap
 * communication with dependent computation via decomposition in large deep
 * learning models", ASPLOS 2023, sec. 3-4; TransformerEngine's userbuffer
 * TP-comm overlap in Megatron-Core splits the GEMM the same way). A two-stage
 * pipeline of c items, GEMM chunk g = G / c, all-reduce chunk a = (bandwidth
 * part) / c + (latency part, paid by every chunk's call):
 *   T = g + a + (c - 1) max(g, a)
 * so the exposed communication is T - G (c = 1: the whole all-reduce; a <= g:
 * one chunk's a); each extra chunk adds one GEMM launch per kernel of the op
 * and one all-reduce launch. Not modelled: the GEMM's efficiency at c times
 * fewer rows (its waves; Wang et al. measure that loss) and the units and DRAM
 * bandwidth the communication kernel takes from the concurrent GEMM chunk.
 *
 * Times:
 * Every call also pays the accelerator's base_us, a fixed cost per collective
 * (NCCL's own cost model: latency = baseLat + nsteps x hwLat,
 * src/graph/tuning.cc).
 *   ring  - reduce-scatter then all-gather, each p-1 steps moving bytes/p per
 *           device: 2(p-1)/p x bytes / bw + 2(p-1) x latency (Patarasuk and
 *           Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
 *           workstations", JPDC 69(2), 2009, sec. 3; NCCL's documented ring
 *           algorithm bandwidth factor 2(n-1)/n, NCCL tests doc PERFORMANCE.md
 *           "busBw").
 *   tree  - pipelined reduce up and broadcast down a binary tree: every byte
 *           crosses a link twice, 2 ceil(log2 p) latency steps (Sanders,
 *           Speck, Traeff, "Two-tree algorithms for full bandwidth broadcast,
 *           reduction and scan", Parallel Computing 35(12), 2009; NCCL's
 *           double binary tree).
 */
#include <math.h>
#include <string.h>

#include "kw_error.h"
#include "kw_tp.h"

#define KW_US_PER_S 1e6

/* The all-reduce's two parts: on the links (scales with bytes) and latency. */
static void kw_tp_parts(double *bw_part_us, double *lat_part_us, kw_allreduce_algo algo,
                        double bytes, int p, double link_bytes_per_s, double latency_us)
{
    double bw_us = bytes / link_bytes_per_s * KW_US_PER_S;
    if (algo == KW_ALLREDUCE_TREE) {
        *bw_part_us = 2.0 * bw_us;
        *lat_part_us = 2.0 * ceil(log2((double)p)) * latency_us;
    } else {
        *bw_part_us = 2.0 * (p - 1.0) / p * bw_us;
        *lat_part_us = 2.0 * (p - 1.0) * latency_us;
    }
}

double kw_tp_allreduce_us(kw_allreduce_algo algo, double bytes, int p, double link_bytes_per_s,
                          double latency_us)
{
    if (p <= 1 || !(link_bytes_per_s > 0.0))
        return 0.0;
    double b, l;
    kw_tp_parts(&b, &l, algo, bytes, p, link_bytes_per_s, latency_us);
    return b + l;
}

double kw_tp_overlap_exposed_us(double gemm_us, double bw_part_us, double lat_part_us, int chunks)
{
    if (chunks <= 1)
        return bw_part_us + lat_part_us;
    double c = chunks, g = gemm_us / c, a = bw_part_us / c + lat_part_us;
    double t = g + a + (c - 1.0) * fmax(g, a);
    return t - gemm_us;
}

static int kw_div(uint64_t *v, int p, const kw_op *op, const char *what)
{
    if (*v % (uint64_t)p != 0)
        return kw_error_set(KW_EINPUT, "tp_degree %d does not divide %s '%s' %s %llu", p,
                            op->kind == KW_OP_MOE ? "moe" : "gemm", op->name, what,
                            (unsigned long long)*v);
    *v /= (uint64_t)p;
    return 0;
}

int kw_tp_split(kw_block *out, const kw_block *b, int p, const kw_accel *a)
{
    if (!(a->link_bytes_per_s > 0.0))
        return kw_error_set(KW_EINPUT, "tp_degree %d needs the accelerator's <interconnect> "
                            "(accelerator '%s' declares none)", p, a->name);
    *out = *b;
    int split = 0;         /* the activation is split over the devices */
    int prev_col = -1;     /* index of the last column-parallel GEMM */
    for (int i = 0; i < out->n_ops; i++) {
        kw_op *op = &out->ops[i];
        int rc = 0;
        switch (op->kind) {
        case KW_OP_GEMM: {
            /* a GEMM reading the same input as the column-parallel GEMM before it
             * (q, k, v; gate, up) is column parallel too */
            const kw_op *pc = prev_col == i - 1 ? &b->ops[prev_col] : NULL;
            int same_input = pc && ((op->merge[0] && strcmp(op->merge, pc->merge) == 0) ||
                                    (pc->k == op->k && pc->n != op->k));
            if (!split || same_input) {
                rc = kw_div(&op->n, p, op, "n");
                split = 1;
                prev_col = i;
            } else {
                rc = kw_div(&op->k, p, op, "k");
                op->tp_allreduce = 1;
                split = 0;
            }
            break;
        }
        case KW_OP_ATTENTION:
            if (op->heads % p != 0)
                return kw_error_set(KW_EINPUT, "tp_degree %d does not divide attention '%s' heads %d",
                                    p, op->name, op->heads);
            op->heads /= p;
            if (op->kv_heads % p == 0)
                op->kv_heads /= p;
            else if (p % op->kv_heads == 0)
                op->kv_heads = 1; /* each device keeps a copy of its KV head */
            else
                return kw_error_set(KW_EINPUT, "tp_degree %d and attention '%s' kv_heads %d: "
                                    "neither divides the other", p, op->name, op->kv_heads);
            split = 1;
            break;
        case KW_OP_ACT:
            if (split && op->width % (uint64_t)p == 0)
                op->width /= (uint64_t)p;
            else if (split)
                return kw_error_set(KW_EINPUT, "tp_degree %d does not divide act '%s' width %llu",
                                    p, op->name, (unsigned long long)op->width);
            break;
        case KW_OP_MOE:
            if ((rc = kw_div(&op->n, p, op, "n")) == 0 && op->shared_n)
                rc = kw_div(&op->shared_n, p, op, "shared_n");
            op->tp_allreduce = 1;
            split = 0;
            break;
        case KW_OP_CONV:
            return kw_error_set(KW_EINPUT, "tp_degree %d: block '%s' has a convolution; tensor "
                                "parallelism here splits transformer blocks", p, b->name);
        default:
            break;
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

int kw_tp_allreduce(kw_cost_ctx *c, const char *name, double bytes, int p, double work_us,
                    int op_kernels)
{
    const kw_accel *a = kw_cost_hook_accel(c);
    const kw_mapping *m = kw_cost_hook_mapping(c);
    double t = 0.0;
    int chunks = m->tp_overlap_chunks > 1 ? m->tp_overlap_chunks : 1;
    if (p > 1 && a->link_bytes_per_s > 0.0) {
        double bw_part, lat_part;
        kw_tp_parts(&bw_part, &lat_part, (kw_allreduce_algo)a->allreduce_algo, bytes, p,
                    a->link_bytes_per_s, a->link_latency_us);
        t = kw_tp_overlap_exposed_us(work_us, bw_part, lat_part + a->link_base_us, chunks);
    }
    char nm[KW_NAME_MAX];
    static const char suffix[] = "_allreduce";
    size_t lb = strnlen(name, KW_NAME_MAX - sizeof suffix);
    memcpy(nm, name, lb);
    memcpy(nm + lb, suffix, sizeof suffix);
    return kw_cost_hook_comm(c, nm, t, bytes, (chunks - 1) * (op_kernels + 1));
}
