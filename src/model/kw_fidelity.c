/* kw_fidelity.c - published kernel measurements and the model's predictions
 * of them (see kw_fidelity.h for the file format).
 *
 * Design choice: each case is costed through kw_cost_eval itself, on a
 * one-operator block built here (a GEMM, flash attention prefill or decode),
 * so the table judges exactly the model the tuner uses; no second formula to
 * drift from it. Alternative rejected: a separate closed-form predictor per
 * kind. The one exception is graph_node (an empty kernel): it has no operator
 * to cost, so it reads what kw_cost.c charges every kernel in graph mode
 * beside its work (kw_cost_graph_node_us) directly.
 */
#include "kw_fidelity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"
#include "kw_input.h"
#include "kw_num.h"

#define KW_FID_BYTES_MAX (16u << 20) /* a measured CSV: KW_FID_MAX rows and their comments */

#define KW_FID_COLS 25
#define KW_FID_LINE_MAX 4096

static const char *const kw_fid_header =
    "case,kind,m,n,k,batch,seq,heads,kv_heads,page,head_dim,causal,tile_m,tile_n,tile_k,stages,"
    "cluster,order,graph_nodes,schedule,precision,accum,measured_us,bound,source";

static int kw_num(double *out, const char *t, double lo, double hi)
{
    double v;
    if (kw_num_double(&v, t) != 0 || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}

/* the rule is stated once, in kw_fidelity.h */
size_t kw_fidelity_source_key(char *key, size_t n, const char *source)
{
    const char *s = source + strspn(source, " ");
    size_t len;
    if (strncmp(s, "arXiv", 5) == 0 && (s[5] == ' ' || s[5] == ':') &&
        strspn(s + 6, "0123456789") > 0) {
        const char *id = s + 6;
        size_t il = strspn(id, "0123456789.");
        while (il > 0 && id[il - 1] == '.')
            il--;
        len = (size_t)snprintf(key, n, "arXiv:%.*s", (int)il, id);
    } else {
        size_t wl = strcspn(s, " ;,(");
        const char *slash = memchr(s, '/', wl);
        size_t after = slash ? wl - (size_t)(slash + 1 - s) : 0; /* the word after the '/' */
        if (slash && slash > s && after > 0 && !memchr(slash + 1, '/', after)) {
            len = (size_t)snprintf(key, n, "%.*s", (int)wl, s);
        } else {
            size_t cl = strcspn(s, "(;");
            while (cl > 0 && s[cl - 1] == ' ')
                cl--;
            len = (size_t)snprintf(key, n, "%.*s", (int)cl, s);
        }
    }
    return len < n ? len : (n > 0 ? n - 1 : 0);
}

static int kw_fid_row(kw_fid_case *c, char *line, const char *path, int ln)
{
    char *f[KW_FID_COLS];
    int n = 0;
    char *p = line;
    while (n < KW_FID_COLS - 1) {
        char *comma = strchr(p, ',');
        if (!comma)
            break;
        *comma = '\0';
        f[n++] = p;
        p = comma + 1;
    }
    f[n++] = p; /* source: the rest of the line */
    if (n != KW_FID_COLS)
        return kw_error_set(KW_EINPUT, "%s:%d: %d columns, expected %d", path, ln, n, KW_FID_COLS);
    memset(c, 0, sizeof *c);
    c->line = ln;
    snprintf(c->name, sizeof c->name, "%s", f[0]);
    if (strcmp(f[1], "gemm") == 0)
        c->kind = KW_FID_GEMM;
    else if (strcmp(f[1], "attention") == 0)
        c->kind = KW_FID_ATTENTION;
    else if (strcmp(f[1], "decode") == 0)
        c->kind = KW_FID_DECODE;
    else if (strcmp(f[1], "graph_node") == 0)
        c->kind = KW_FID_GRAPH_NODE;
    else
        return kw_error_set(KW_EINPUT,
                            "%s:%d: kind '%s' is not gemm, attention, decode or graph_node", path, ln,
                            f[1]);
    c->attention = c->kind == KW_FID_ATTENTION || c->kind == KW_FID_DECODE;
    /* columns 2..16 and 18 are integers (16, the cluster, may be written MxN); 17 is the order */
    enum { NUMS = 16 };
    double v[NUMS];
    static const double hi[NUMS] = {1e9,  1e9,   1e9, 1e6,   1e9,   4096,  4096, 65536,
                                    4096, 1,     65536, 65536, 65536, 64,  64,   64};
    static const char *const names[NUMS] = {"m",      "n",        "k",        "batch",  "seq",
                                            "heads",  "kv_heads", "page",     "head_dim", "causal",
                                            "tile_m", "tile_n",   "tile_k",   "stages", "cluster",
                                            "graph_nodes"};
    int multicast_a = 0;
    for (int i = 0; i < NUMS; i++) {
        const char *t = i == NUMS - 1 ? f[3 + i] : f[2 + i];
        char buf[32];
        if (i == 14 && strchr(t, 'x')) { /* cluster written cluster_m x cluster_n */
            char *x;
            /* the copy holds the 'x' (a longer field cut it off, and the store
             * below went through NULL: calibrate died of SIGSEGV, found by
             * fuzz/fuzz_measured) */
            int fits = snprintf(buf, sizeof buf, "%s", t) < (int)sizeof buf;
            x = fits ? strchr(buf, 'x') : NULL;
            if (x)
                *x = '\0';
            double cm, cn;
            if (!x || kw_num(&cm, buf, 1.0, hi[i]) != 0 || kw_num(&cn, x + 1, 1.0, hi[i]) != 0 ||
                cm != (double)(long)cm || cn != (double)(long)cn || (cm > 1.0 && cn > 1.0))
                return kw_error_set(KW_EINPUT,
                                    "%s:%d: cluster '%s' is not an integer N or MxN with M or N 1",
                                    path, ln, t);
            v[i] = cm * cn;
            multicast_a = cn > 1.0;
            continue;
        }
        if (kw_num(&v[i], t, 0.0, hi[i]) != 0 || v[i] != (double)(long)v[i])
            return kw_error_set(KW_EINPUT, "%s:%d: %s '%s' is not an integer in [0, %g]", path, ln,
                                names[i], t, hi[i]);
    }
    c->m = v[0];
    c->n = v[1];
    c->k = v[2];
    c->batch = (int)v[3];
    c->seq = (int)v[4];
    c->heads = (int)v[5];
    c->kv_heads = v[6] > 0.0 ? (int)v[6] : c->heads;
    c->page = (int)v[7];
    c->head_dim = (int)v[8];
    c->causal = (int)v[9];
    c->tiling.tile_m = (int)v[10];
    c->tiling.tile_n = (int)v[11];
    c->tiling.tile_k = (int)v[12];
    c->tiling.split_k = 1;
    c->tiling.loop = KW_LOOP_MNK;
    c->tiling.stages = (int)v[13];
    c->tiling.double_buffer = c->tiling.stages >= 2;
    c->tiling.cluster = (int)v[14];
    c->tiling.multicast_a = multicast_a;
    c->graph_nodes = (int)v[15];
    /* order: row (row-major, M slowest), mG or nG (groups of G M or N tiles) */
    if (strcmp(f[17], "row") != 0) {
        double g;
        if ((f[17][0] != 'm' && f[17][0] != 'n') || kw_num(&g, f[17] + 1, 1.0, 64.0) != 0 ||
            g != (double)(long)g)
            return kw_error_set(KW_EINPUT,
                                "%s:%d: order '%s' is not row, mG or nG (G an integer in [1, 64])",
                                path, ln, f[17]);
        c->tiling.swizzle = (int)g;
        c->tiling.swizzle_n = f[17][0] == 'n';
    }
    if (c->tiling.tile_m < 1 || c->tiling.tile_n < 1 || c->tiling.tile_k < 1 || c->tiling.stages < 1)
        return kw_error_set(KW_EINPUT, "%s:%d: tiles and stages must be >= 1", path, ln);
    if (c->kind == KW_FID_GRAPH_NODE ? 0
        : c->attention               ? (c->batch < 1 || c->seq < 1 || c->heads < 1 || c->head_dim < 1)
                                     : (c->m < 1 || c->n < 1 || c->k < 1))
        return kw_error_set(KW_EINPUT, "%s:%d: empty %s", path, ln, f[1]);
    if (c->attention && c->heads % c->kv_heads != 0)
        return kw_error_set(KW_EINPUT, "%s:%d: heads %d not a multiple of kv_heads %d", path, ln,
                            c->heads, c->kv_heads);
    if (c->page > 0 && c->kind != KW_FID_DECODE)
        return kw_error_set(KW_EINPUT, "%s:%d: page must be 0 for %s (only a decode reads a paged KV cache)",
                            path, ln, f[1]);
    if (c->kind == KW_FID_DECODE && c->causal)
        return kw_error_set(KW_EINPUT, "%s:%d: causal must be 0 for decode (one new token attends to the whole cache)",
                            path, ln);
    if (c->graph_nodes > 0 && c->kind == KW_FID_GRAPH_NODE)
        return kw_error_set(KW_EINPUT, "%s:%d: graph_nodes must be 0 for graph_node (the row is one node)",
                            path, ln);
    if (strcmp(f[19], "serial") == 0)
        c->overlap = 0;
    else if (strcmp(f[19], "overlap") == 0)
        c->overlap = 1;
    else
        return kw_error_set(KW_EINPUT, "%s:%d: schedule '%s' is not serial or overlap", path, ln,
                            f[19]);
    /* a GEMM's overlap schedule: its tile stores overlap the next tile (kw_fidelity.h) */
    c->tiling.store_overlap = c->kind == KW_FID_GEMM && c->overlap;
    int pi = kw_prec_parse(f[20]), ai = kw_prec_parse(f[21]);
    if (pi < 0 || ai < 0)
        return kw_error_set(KW_EINPUT, "%s:%d: unknown precision '%s' or '%s'", path, ln, f[20], f[21]);
    c->precision = (kw_prec)pi;
    c->accum = (kw_prec)ai;
    if (kw_num(&c->measured_us, f[22], 1e-9, 1e12) != 0)
        return kw_error_set(KW_EINPUT, "%s:%d: measured_us '%s' is not a positive number", path, ln,
                            f[22]);
    if (strcmp(f[23], "compute") == 0)
        c->bound = KW_BOUND_COMPUTE;
    else if (strcmp(f[23], "memory") == 0)
        c->bound = KW_BOUND_MEMORY;
    else if (strcmp(f[23], "launch") == 0)
        c->bound = KW_BOUND_LAUNCH;
    else
        return kw_error_set(KW_EINPUT, "%s:%d: bound '%s' is not compute, memory or launch", path, ln,
                            f[23]);
    size_t sl = strcspn(f[24], "\r\n");
    f[24][sl] = '\0';
    snprintf(c->source, sizeof c->source, "%s", f[24]);
    if (kw_fidelity_source_key(c->source_key, sizeof c->source_key, c->source) == 0)
        return kw_error_set(KW_EINPUT, "%s:%d: source '%s' names no source (an arXiv id, "
                            "owner/repo or a citation before '(' or ';')", path, ln, f[24]);
    c->fit = strstr(f[24], "FIT:") != NULL;
    return 0;
}

int kw_fidelity_load(kw_fid_set *out, const char *path)
{
    FILE *fp = kw_input_fopen(path, KW_FID_BYTES_MAX); /* a FIFO blocked fopen forever */
    if (!fp)
        return kw_error_code();
    int rc = 0, ln = 0, header = 0, flags;
    char line[KW_FID_LINE_MAX];
    size_t len;
    out->n = 0;
    while (kw_input_line(fp, line, sizeof line, &len, &flags) == 1) {
        ln++;
        if (flags & KW_INPUT_LINE_LONG) {
            rc = kw_error_set(KW_EINPUT, "%s:%d: line longer than %d bytes", path, ln,
                              KW_FID_LINE_MAX - 1);
            goto done;
        }
        if (flags & KW_INPUT_LINE_NUL) { /* fgets said "line longer than" of it */
            rc = kw_error_set(KW_EINPUT, "%s:%d: NUL byte in line (not a text file?)", path, ln);
            goto done;
        }
        if (ln == 1 && kw_input_bom(line)) /* a spreadsheet's byte order mark */
            memmove(line, line + 3, strlen(line + 3) + 1);
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
            continue;
        if (!header) {
            line[strcspn(line, "\r\n")] = '\0';
            if (strcmp(line, kw_fid_header) != 0) {
                rc = kw_error_set(KW_EINPUT, "%s:%d: header must be '%s'", path, ln, kw_fid_header);
                goto done;
            }
            header = 1;
            continue;
        }
        if (out->n == KW_FID_MAX) {
            rc = kw_error_set(KW_EINPUT, "%s:%d: more than %d cases", path, ln, KW_FID_MAX);
            goto done;
        }
        if ((rc = kw_fid_row(&out->c[out->n], line, path, ln)) != 0)
            goto done;
        for (int i = 0; i < out->n; i++) /* a repeated row weighed twice in the fit, silently */
            if (strcmp(out->c[i].name, out->c[out->n].name) == 0) {
                rc = kw_error_set(KW_EINPUT, "%s:%d: case '%s' is already listed (line %d)", path,
                                  ln, out->c[i].name, out->c[i].line);
                goto done;
            }
        out->n++;
    }
    if (ferror(fp))
        rc = kw_error_set(KW_EIO, "%s: read error", path);
    else if (!header)
        rc = kw_error_set(KW_EINPUT, "%s:%d: no header line", path, ln);
done:
    fclose(fp);
    return rc;
}

int kw_fidelity_predict(double *us, kw_bound *bound, kw_kernel *detail, const kw_accel *a,
                        const kw_fid_case *c)
{
    if (c->kind == KW_FID_GRAPH_NODE) {
        /* an empty kernel replayed inside a CUDA graph: no work, its time the
         * node cost, the device-side fixed time included (kw_cost.h) */
        *us = kw_cost_graph_node_us(a);
        *bound = KW_BOUND_LAUNCH;
        if (detail) {
            memset(detail, 0, sizeof *detail);
            detail->launch_us = *us;
            detail->time_us = *us;
            detail->bound = KW_BOUND_LAUNCH;
        }
        return 0;
    }
    kw_block b;
    kw_shape s;
    kw_mapping m;
    kw_cost *cost = malloc(sizeof *cost);
    if (!cost)
        return kw_error_set(KW_ENOMEM, "out of memory for a cost");
    memset(&b, 0, sizeof b);
    memset(&s, 0, sizeof s);
    memset(&m, 0, sizeof m);
    snprintf(b.name, sizeof b.name, "fidelity");
    b.n_ops = 1;
    b.n_groups = 1;
    snprintf(b.groups[0], sizeof b.groups[0], "g");
    kw_op *op = &b.ops[0];
    snprintf(op->name, sizeof op->name, "%s", c->attention ? "attn" : "gemm");
    snprintf(op->group, sizeof op->group, "g");
    snprintf(s.name, sizeof s.name, "%s", c->name);
    s.phase = KW_PHASE_PREFILL;
    s.streams = 1;
    if (c->attention) {
        op->kind = KW_OP_ATTENTION;
        op->heads = c->heads;
        op->kv_heads = c->kv_heads;
        op->head_dim = c->head_dim;
        op->causal = c->causal;
        s.batch = c->batch;
        s.seq = c->seq;
        if (c->kind == KW_FID_DECODE) {
            /* one new query token per sequence against a cache of `seq` tokens */
            s.phase = KW_PHASE_DECODE;
            s.seq = 1;
            s.kv_len = c->seq;
            m.kv_page_tokens = c->page;
        }
        m.fuse_attention = KW_ATTN_FLASH;
    } else {
        op->kind = KW_OP_GEMM;
        op->weights = 1; /* B is the weight, kept N x K (cuBLAS "TN", DeepGEMM "NT") */
        op->n = (uint64_t)c->n;
        op->k = (uint64_t)c->k;
        s.batch = 1;
        s.seq = (int)c->m;
    }
    m.n_groups = 1;
    m.tiling[0] = c->tiling;
    m.precision = c->precision;
    m.accum_precision = c->accum;
    m.softmax_precision = KW_PREC_FP32;
    m.max_batch = 1;
    m.cores_per_request = a->cores;
    m.attn_overlap = c->overlap;
    m.graph_mode = 1;
    int rc = kw_cost_eval(cost, a, &b, &s, &m, 1, a->cores);
    if (rc == 0) {
        const kw_kernel *k = &cost->kernels[0];
        /* Timed alone (events around one launch, or back to back): its work
         * and its device-side fixed time, the launch (the node's cost beyond
         * that fixed time: graph_mode is on) excluded. A call replayed in a
         * CUDA graph of graph_nodes kernels: the modelled kernel with its node
         * (time_us: work + node cost, the fixed time inside it), and every
         * other kernel of the call as an empty node. */
        *us = c->graph_nodes > 0 ? k->time_us + (c->graph_nodes - 1) * kw_cost_graph_node_us(a)
                                 : k->time_us - k->launch_us;
        if (detail)
            *detail = *k;
        *bound = k->fallback ? KW_BOUND_FALLBACK
                 : k->compute_us >= k->memory_us ? KW_BOUND_COMPUTE : KW_BOUND_MEMORY;
    }
    free(cost);
    return rc;
}
