/* kw_fidelity.c - published kernel measurements and the model's predictions
 * of them (see kw_fidelity.h for the file format).
 *
 * Design choice: each case is costed through kw_cost_eval itself, on a
 * one-operator block built here (a GEMM, or flash attention), so the table
 * judges exactly the model the tuner uses; no second formula to drift from
 * it. Alternative rejected: a separate closed-form predictor per kind.
 */
#include "kw_fidelity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"

#define KW_FID_COLS 21
#define KW_FID_LINE_MAX 4096

static const char *const kw_fid_header =
    "case,kind,m,n,k,batch,seq,heads,head_dim,causal,tile_m,tile_n,tile_k,stages,cluster,"
    "schedule,precision,accum,measured_us,bound,source";

static int kw_num(double *out, const char *t, double lo, double hi)
{
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    if (errno != 0 || end == t || *end != '\0' || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
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
        c->attention = 0;
    else if (strcmp(f[1], "attention") == 0)
        c->attention = 1;
    else
        return kw_error_set(KW_EINPUT, "%s:%d: kind '%s' is not gemm or attention", path, ln, f[1]);
    double v[15];
    static const double hi[15] = {1e9, 1e9, 1e9, 1e6, 1e9, 4096, 4096, 1, 65536, 65536, 65536, 64, 64};
    static const char *const names[] = {"m", "n", "k", "batch", "seq", "heads", "head_dim", "causal",
                                        "tile_m", "tile_n", "tile_k", "stages", "cluster"};
    for (int i = 0; i < 13; i++)
        if (kw_num(&v[i], f[2 + i], 0.0, hi[i]) != 0 || v[i] != (double)(long)v[i])
            return kw_error_set(KW_EINPUT, "%s:%d: %s '%s' is not an integer in [0, %g]", path, ln,
                                names[i], f[2 + i], hi[i]);
    c->m = v[0];
    c->n = v[1];
    c->k = v[2];
    c->batch = (int)v[3];
    c->seq = (int)v[4];
    c->heads = (int)v[5];
    c->head_dim = (int)v[6];
    c->causal = (int)v[7];
    c->tiling.tile_m = (int)v[8];
    c->tiling.tile_n = (int)v[9];
    c->tiling.tile_k = (int)v[10];
    c->tiling.split_k = 1;
    c->tiling.loop = KW_LOOP_MNK;
    c->tiling.stages = (int)v[11];
    c->tiling.double_buffer = c->tiling.stages >= 2;
    c->tiling.cluster = (int)v[12];
    if (c->tiling.tile_m < 1 || c->tiling.tile_n < 1 || c->tiling.tile_k < 1 || c->tiling.stages < 1)
        return kw_error_set(KW_EINPUT, "%s:%d: tiles and stages must be >= 1", path, ln);
    if (c->attention ? (c->batch < 1 || c->seq < 1 || c->heads < 1 || c->head_dim < 1)
                     : (c->m < 1 || c->n < 1 || c->k < 1))
        return kw_error_set(KW_EINPUT, "%s:%d: empty %s", path, ln, f[1]);
    if (strcmp(f[15], "serial") == 0)
        c->overlap = 0;
    else if (strcmp(f[15], "overlap") == 0)
        c->overlap = 1;
    else
        return kw_error_set(KW_EINPUT, "%s:%d: schedule '%s' is not serial or overlap", path, ln,
                            f[15]);
    int pi = kw_prec_parse(f[16]), ai = kw_prec_parse(f[17]);
    if (pi < 0 || ai < 0)
        return kw_error_set(KW_EINPUT, "%s:%d: unknown precision '%s' or '%s'", path, ln, f[16], f[17]);
    c->precision = (kw_prec)pi;
    c->accum = (kw_prec)ai;
    if (kw_num(&c->measured_us, f[18], 1e-9, 1e12) != 0)
        return kw_error_set(KW_EINPUT, "%s:%d: measured_us '%s' is not a positive number", path, ln,
                            f[18]);
    if (strcmp(f[19], "compute") == 0)
        c->bound = KW_BOUND_COMPUTE;
    else if (strcmp(f[19], "memory") == 0)
        c->bound = KW_BOUND_MEMORY;
    else
        return kw_error_set(KW_EINPUT, "%s:%d: bound '%s' is not compute or memory", path, ln, f[19]);
    size_t sl = strcspn(f[20], "\r\n");
    f[20][sl] = '\0';
    snprintf(c->source, sizeof c->source, "%s", f[20]);
    c->fit = strstr(f[20], "FIT:") != NULL;
    return 0;
}

int kw_fid_load(kw_fid_set *out, const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return kw_error_set(KW_EIO, "%s: cannot read: %s", path, strerror(errno));
    int rc = 0, ln = 0, header = 0;
    char line[KW_FID_LINE_MAX];
    out->n = 0;
    while (fgets(line, sizeof line, fp)) {
        ln++;
        if (!strchr(line, '\n') && !feof(fp)) {
            rc = kw_error_set(KW_EINPUT, "%s:%d: line longer than %d bytes", path, ln,
                              KW_FID_LINE_MAX - 1);
            goto done;
        }
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

int kw_fid_predict(double *us, kw_bound *bound, kw_kernel *detail, const kw_accel *a,
                   const kw_fid_case *c)
{
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
        op->heads = op->kv_heads = c->heads;
        op->head_dim = c->head_dim;
        op->causal = c->causal;
        s.batch = c->batch;
        s.seq = c->seq;
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
        *us = k->time_us - k->launch_us;
        if (detail)
            *detail = *k;
        *bound = k->fallback ? KW_BOUND_FALLBACK
                 : k->compute_us >= k->memory_us ? KW_BOUND_COMPUTE : KW_BOUND_MEMORY;
    }
    free(cost);
    return rc;
}
