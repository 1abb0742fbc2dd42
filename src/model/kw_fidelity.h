/* kw_fidelity.h - published kernel measurements and the model's prediction of
 * each: the fidelity table of `make bench` and the data
 * `knobwise calibrate` fits.
 *
 * A measurement file is CSV (spaces/measured/h100_published.csv): '#' comment
 * lines, a header naming the columns below in this order, one kernel a row:
 *   case,kind,m,n,k,batch,seq,heads,kv_heads,page,head_dim,causal,tile_m,tile_n,
 *   tile_k,stages,cluster,order,graph_nodes,schedule,precision,accum,measured_us,bound,source
 * kind is gemm (m x n x k), attention (flash prefill: batch sequences of seq
 * tokens, heads of head_dim, causal 0/1) or decode (flash decode: batch
 * sequences each adding one query token against a KV cache of seq tokens) or
 * graph_node (an empty kernel's marginal time inside a replayed CUDA graph);
 * kv_heads 0 means as many as heads (GQA: heads a multiple of it); page the
 * tokens per page of a paged KV cache (decode only; 0 = contiguous);
 * graph_nodes the kernels of the timed call when the benchmark replays it in
 * a CUDA graph (0: kernels timed back to back, or one launch between events;
 * the graph_node kind is one node by itself and takes 0); schedule
 * serial|overlap (attention: softmax under the matrix work of the other
 * warpgroup; gemm: a tile's output store runs under the unit's next tile, a
 * persistent kernel that waits for its store only before the next epilogue);
 * cluster N (N tiles along M share each B tile) or MxN written cluster_m x
 * cluster_n (1xN: N tiles along N share each A tile); order the launch order
 * of the output tiles: row (row-major, M walked slowest), mG (groups of G M
 * tiles, the group's tiles launched before the next group's) or nG (the same
 * along N); bound the measured kernel's class (compute|memory|launch); source
 * everything after the 24th comma.
 *
 * A row's source identity (kw_fidelity_source_key, the one home of the rule;
 * leave-one-source-out cross-validation folds by it): "arXiv:ID" for a source
 * that opens "arXiv ID" or "arXiv:ID" (the id without its version suffix); the
 * repository "owner/repo" for one whose first word (up to a space, ';', ',' or
 * '(') is owner/repo, whatever of it is cited (README, commit, issue, PR);
 * otherwise the citation's first clause (up to the first '(' or ';', spaces
 * trimmed: author and title). */
#ifndef KW_FIDELITY_H
#define KW_FIDELITY_H

#include "kw_cost.h"

#define KW_FID_MAX 256
#define KW_FID_KEY_MAX 160 /* a source key: owner/repo is at most 39 + 1 + 100 */

/* graph_node: one empty kernel inside a replayed CUDA graph, its marginal time
 * per kernel (the dimension and tile columns are not read; tiles and stages 1) */
typedef enum { KW_FID_GEMM, KW_FID_ATTENTION, KW_FID_DECODE, KW_FID_GRAPH_NODE } kw_fid_kind;

typedef struct kw_fid_case {
    char name[KW_NAME_MAX];
    kw_fid_kind kind;
    int attention;               /* kind is attention or decode */
    double m, n, k;
    int batch, seq, heads, kv_heads, head_dim, causal; /* decode: seq = KV-cache tokens */
    int page;                    /* decode: KV-cache tokens per page; 0 = contiguous */
    int graph_nodes;             /* kernels of the timed call replayed in a CUDA graph; 0 = none */
    kw_tiling tiling;
    int overlap;                 /* schedule=overlap */
    kw_prec precision, accum;
    double measured_us;
    kw_bound bound;              /* measured class */
    int fit;                     /* the source says FIT: a figure of the accelerator file came from it */
    char source[KW_SOURCE_MAX];
    char source_key[KW_FID_KEY_MAX]; /* kw_fidelity_source_key of source */
    int line;
} kw_fid_case;

typedef struct kw_fid_set {
    int n;
    kw_fid_case c[KW_FID_MAX];
} kw_fid_set;

/* Read path into out. KW_EINPUT with "FILE:LINE: message" for a bad row,
 * KW_EIO when the file cannot be read. */
int kw_fidelity_load(kw_fid_set *out, const char *path);

/* The source identity of a source column (the rule above) into key (n
 * bytes, cut to fit); returns its length, 0 when the column has none (a row
 * without one is refused by kw_fidelity_load). */
size_t kw_fidelity_source_key(char *key, size_t n, const char *source);

/* The model's kernel for one case on the whole of a (one request, every core):
 * its work time (launch excluded: the published figures time kernels back to
 * back; a graph_node case is the launch-side time itself; a case with
 * graph_nodes N adds the kernel's node cost and N - 1 empty nodes) into *us, its bound
 * class into *bound, the kernel into *detail (may be NULL). */
int kw_fidelity_predict(double *us, kw_bound *bound, kw_kernel *detail, const kw_accel *a,
                        const kw_fid_case *c);

#endif
