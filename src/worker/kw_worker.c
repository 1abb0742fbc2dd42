/* kw_worker.c - knobwise-worker, the shipped measuring worker: real CPU
 * kernels (kw_kern.c) behind the worker protocol of README.md ("The worker
 * protocol (measuring evaluator, version 1)"), read on stdin, answered on
 * stdout, diagnostics on stderr.
 *
 * Design choice: the worker keeps each operator's prepared kernel (seeded
 * inputs, output, fp64 reference) across requests, keyed by everything that
 * decides its inputs (operator token, rows, precision), so tuning one shape
 * pays the inputs and the reference once, and every request still checks its
 * own output against that reference before any time is reported (a wrong
 * result is `error reason=wrong_result`, never a time). Timing is
 * CLOCK_MONOTONIC around one execution of all the block's operators, after the
 * checked run and the warm-up runs.
 *
 * What it runs: `gemm` operators (n, k, epilogue: bias + GELU, or SiLU when
 * the token carries act:silu or the operator's name contains "silu") and
 * `attention` operators (heads, kv_heads, head_dim, causal); any other kind,
 * and any knob value it cannot honour (a fusion it does not implement,
 * precisions other than fp32/bf16, accumulation other than fp32, 2:4
 * sparsity, more threads than online CPUs), is `error reason=unsupported`.
 * Serving knobs (max_batch, batch_timeout_us, placement, launch_mode) do not
 * change a kernel and are ignored: the serving simulation above uses them.
 * A tiling knob is looked up as GROUP.NAME, GROUP from the token's group:
 * key or else the operator's name; absent, it takes the default below.
 *
 * Test hook: KW_WORKER_INJECT=wrong_result corrupts one output element of
 * every run before its check (tests/test_worker.c asserts the error).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "kw_error.h"
#include "kw_kern.h"
#include "kw_pool.h"

#define KW_W_PROTOCOL 1
#define KW_W_LINE_MAX 65536       /* README: lines are at most 65,536 bytes */
#define KW_W_TOKENS_MAX 4096
#define KW_W_CACHE_MAX 16         /* prepared kernels kept */
/* Operators of one request: no more than the cache holds, so a request never
 * evicts its own kernels (a workload block has at most 32, kw_model.h). */
#define KW_W_OPS_MAX KW_W_CACHE_MAX
#define KW_W_ROWS_MAX (1L << 24)  /* GEMM rows (batch x seq) the int-indexed kernels take */
/* Samples per answer: 4,000 of at most 13 characters keep the answer line
 * under the protocol's 65,536 bytes. */
#define KW_W_REPS_MAX 4000
#define KW_W_TILE_MAX 4096
#define KW_W_SPLIT_MAX 64
#define KW_W_DIM_MAX (1L << 20)   /* as workload.xsd's dim */
/* Tiling when the space has no knob for it: the middle of the shipped domains. */
#define KW_W_DEFAULT_TILE 64
#define KW_W_SEED 20261202UL      /* inputs: seed mixed with the operator's key */

typedef struct kw_tok {
    char *key, *val;
} kw_tok;

typedef struct kw_req {
    kw_tok t[KW_W_TOKENS_MAX];
    int n;
} kw_req;

typedef enum { KW_W_GEMM, KW_W_ATTN } kw_wkind;

typedef struct kw_centry {
    char key[512];
    kw_wkind kind;
    kw_kgemm *g;
    kw_kattn *a;
    unsigned long last_use;
} kw_centry;

typedef struct kw_worker {
    kw_pool *pool;
    int ncpu;
    kw_centry cache[KW_W_CACHE_MAX];
    unsigned long clock;
    int inject_wrong;
    int cpu_clock;      /* KW_WORKER_CLOCK=cpu: samples are kw_pool_cpu_us differences */
    int hello;
} kw_worker;

/* One operator of the request, resolved. */
typedef struct kw_wop {
    char name[64];
    kw_centry *e;
    kw_ktiling t;
} kw_wop;

static const char *kw_get(const kw_req *r, const char *key)
{
    for (int i = 0; i < r->n; i++)
        if (r->t[i].key && strcmp(r->t[i].key, key) == 0)
            return r->t[i].val;
    return NULL;
}

/* "name:value" inside an op token's comma list. */
static const char *kw_op_get(const char *spec, const char *key, char *buf, size_t size)
{
    size_t kl = strlen(key);
    const char *p = strchr(spec, ',');
    while (p) {
        p++;
        if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
            const char *v = p + kl + 1, *e = strchr(v, ',');
            size_t n = e ? (size_t)(e - v) : strlen(v);
            if (n >= size)
                n = size - 1;
            memcpy(buf, v, n);
            buf[n] = '\0';
            return buf;
        }
        p = strchr(p, ',');
    }
    return NULL;
}

static int kw_parse_long(long *out, const char *s, long min, long max)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static void kw_answer_error(long id, const char *reason, const char *msg)
{
    printf("error id=%ld reason=%s message=", id, reason);
    for (const char *p = msg; *p; p++) /* one line: no control characters */
        putchar((unsigned char)*p < ' ' ? ' ' : *p);
    putchar('\n');
    fflush(stdout);
}

static unsigned long kw_hash(const char *s)
{
    unsigned long h = 1469598103934665603UL; /* FNV-1a 64 */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211UL;
    return h;
}

static void kw_centry_clear(kw_centry *e)
{
    kw_kern_gemm_free(e->g);
    kw_kern_attn_free(e->a);
    memset(e, 0, sizeof *e);
}

/* The cached kernel for key, or a new one made by the caller into the slot returned. */
static kw_centry *kw_cache_slot(kw_worker *w, const char *key, int *found)
{
    kw_centry *victim = &w->cache[0];
    for (int i = 0; i < KW_W_CACHE_MAX; i++) {
        kw_centry *e = &w->cache[i];
        if (e->key[0] && strcmp(e->key, key) == 0) {
            e->last_use = ++w->clock;
            *found = 1;
            return e;
        }
        if (!e->key[0] || e->last_use < victim->last_use)
            victim = e;
        if (!e->key[0])
            break;
    }
    kw_centry_clear(victim);
    *found = 0;
    return victim;
}

static int kw_knob_long(const kw_req *r, const char *group, const char *name, long dflt, long max,
                        long *out, char *err, size_t errsz)
{
    char key[256];
    snprintf(key, sizeof key, "knob.%s.%s", group, name);
    const char *v = kw_get(r, key);
    if (!v) {
        *out = dflt;
        return 0;
    }
    if (kw_parse_long(out, v, 1, max) != 0) {
        snprintf(err, errsz, "%s=%s: a whole number from 1 to %ld is needed", key + 5, v, max);
        return -1;
    }
    return 0;
}

static int kw_tiling_of(const kw_req *r, const char *group, kw_ktiling *t, char *err, size_t errsz)
{
    long v;
    if (kw_knob_long(r, group, "tile_m", KW_W_DEFAULT_TILE, KW_W_TILE_MAX, &v, err, errsz))
        return -1;
    t->tile_m = (int)v;
    if (kw_knob_long(r, group, "tile_n", KW_W_DEFAULT_TILE, KW_W_TILE_MAX, &v, err, errsz))
        return -1;
    t->tile_n = (int)v;
    if (kw_knob_long(r, group, "tile_k", KW_W_DEFAULT_TILE, KW_W_TILE_MAX, &v, err, errsz))
        return -1;
    t->tile_k = (int)v;
    if (kw_knob_long(r, group, "split_k", 1, KW_W_SPLIT_MAX, &v, err, errsz))
        return -1;
    t->split_k = (int)v;
    char key[256];
    snprintf(key, sizeof key, "knob.%s.loop_order", group);
    const char *o = kw_get(r, key);
    if (!o || strcmp(o, "mnk") == 0)
        t->order = KW_ORDER_MNK;
    else if (strcmp(o, "nmk") == 0)
        t->order = KW_ORDER_NMK;
    else if (strcmp(o, "kmn") == 0)
        t->order = KW_ORDER_KMN;
    else {
        snprintf(err, errsz, "%s=%s: mnk, nmk or kmn", key + 5, o);
        return -1;
    }
    snprintf(key, sizeof key, "knob.%s.double_buffer", group);
    o = kw_get(r, key);
    if (!o || strcmp(o, "on") == 0)
        t->dbuf = 1;
    else if (strcmp(o, "off") == 0)
        t->dbuf = 0;
    else {
        snprintf(err, errsz, "%s=%s: off or on", key + 5, o);
        return -1;
    }
    return 0;
}

/* A knob that must be absent or take one of the values this worker runs. */
static int kw_knob_allowed(const kw_req *r, const char *name, const char *const *ok, int *index,
                           char *err, size_t errsz)
{
    char key[128];
    snprintf(key, sizeof key, "knob.%s", name);
    const char *v = kw_get(r, key);
    *index = 0;
    if (!v)
        return 0;
    for (int i = 0; ok[i]; i++)
        if (strcmp(v, ok[i]) == 0) {
            *index = i;
            return 0;
        }
    snprintf(err, errsz, "%s=%s is not implemented by this worker", name, v);
    return -1;
}

static double kw_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The sample clock: wall time (CLOCK_MONOTONIC), or with KW_WORKER_CLOCK=cpu
 * the kernels' critical path in CPU time (kw_pool.h), which leaves out the
 * time another process held the core. */
static double kw_sample_clock_us(const kw_worker *w)
{
    return w->cpu_clock ? kw_pool_cpu_us(w->pool) : kw_now_us();
}

static int kw_run_ops(kw_worker *w, kw_wop *ops, int n_ops, int fuse_epi, kw_kattn_mode mode,
                      int threads)
{
    for (int i = 0; i < n_ops; i++) {
        int rc = ops[i].e->kind == KW_W_GEMM
                     ? kw_kern_gemm_run(ops[i].e->g, &ops[i].t, fuse_epi, w->pool, threads)
                     : kw_kern_attn_run(ops[i].e->a, &ops[i].t, mode, w->pool, threads);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void kw_measure(kw_worker *w, const kw_req *r)
{
    static const char *const precisions[] = {"fp32", "bf16", NULL};
    static const char *const fp32_only[] = {"fp32", NULL};
    static const char *const off_only[] = {"off", NULL};
    static const char *const off_on[] = {"off", "on", NULL};
    static const char *const attn_modes[] = {"none", "qk_softmax", "flash", NULL};
    static const char *const dense_only[] = {"dense", NULL};
    char err[512] = "", key[512], buf[64];
    long id, batch, seq = 0, kv = 0, warm, reps;
    if (kw_parse_long(&id, kw_get(r, "id"), 0, 0x7fffffffffffL) != 0) {
        kw_answer_error(0, "internal", "measure without a valid id=N");
        return;
    }
    if (!w->hello) {
        kw_answer_error(id, "internal", "measure before hello");
        return;
    }
    const char *phase = kw_get(r, "phase");
    int decode = phase && strcmp(phase, "decode") == 0;
    if (!phase || (!decode && strcmp(phase, "prefill") != 0) ||
        kw_parse_long(&batch, kw_get(r, "batch"), 1, KW_W_DIM_MAX) != 0 ||
        (!decode && kw_parse_long(&seq, kw_get(r, "seq"), 1, KW_W_DIM_MAX) != 0) ||
        (decode && kw_parse_long(&kv, kw_get(r, "kv_len"), 1, KW_W_DIM_MAX) != 0) ||
        kw_parse_long(&warm, kw_get(r, "warmup"), 0, KW_W_REPS_MAX) != 0 ||
        kw_parse_long(&reps, kw_get(r, "reps"), 1, KW_W_REPS_MAX) != 0) {
        kw_answer_error(id, "internal",
                        "measure needs phase=prefill|decode, batch, seq (prefill) or kv_len "
                        "(decode), warmup 0..4000 and reps 1..4000");
        return;
    }
    int prec, idx, fuse_epi, mode;
    if (kw_knob_allowed(r, "precision", precisions, &prec, err, sizeof err) ||
        kw_knob_allowed(r, "accum_precision", fp32_only, &idx, err, sizeof err) ||
        kw_knob_allowed(r, "softmax_precision", fp32_only, &idx, err, sizeof err) ||
        kw_knob_allowed(r, "sparsity", dense_only, &idx, err, sizeof err) ||
        kw_knob_allowed(r, "fuse_qkv", off_only, &idx, err, sizeof err) ||
        kw_knob_allowed(r, "fuse_gate_up", off_only, &idx, err, sizeof err) ||
        kw_knob_allowed(r, "fuse_residual_norm", off_only, &idx, err, sizeof err) ||
        kw_knob_allowed(r, "fuse_epilogue", off_on, &fuse_epi, err, sizeof err) ||
        kw_knob_allowed(r, "fuse_attention", attn_modes, &mode, err, sizeof err)) {
        kw_answer_error(id, "unsupported", err);
        return;
    }
    long threads = 1;
    const char *tv = kw_get(r, "knob.threads");
    if (!tv)
        tv = kw_get(r, "knob.cores_per_request");
    if (tv && kw_parse_long(&threads, tv, 1, w->ncpu) != 0) {
        snprintf(err, sizeof err, "threads %s: this host runs 1 to %d", tv, w->ncpu);
        kw_answer_error(id, "unsupported", err);
        return;
    }
    kw_kdt dt = prec == 1 ? KW_KDT_BF16 : KW_KDT_F32;
    long rows = decode ? batch : batch * seq;
    if (rows > KW_W_ROWS_MAX) {
        snprintf(err, sizeof err, "%ld rows: this worker takes at most %ld", rows, KW_W_ROWS_MAX);
        kw_answer_error(id, "resource", err);
        return;
    }
    kw_wop ops[KW_W_OPS_MAX];
    int n_ops = 0;
    for (int i = 0; i < r->n; i++) {
        const kw_tok *tk = &r->t[i];
        if (!tk->key || strncmp(tk->key, "op.", 3) != 0)
            continue;
        const char *name = tk->key + 3, *spec = tk->val;
        if (n_ops == KW_W_OPS_MAX) {
            kw_answer_error(id, "unsupported", "more than 16 operators in one block");
            return;
        }
        char group[128];
        if (!kw_op_get(spec, "group", group, sizeof group))
            snprintf(group, sizeof group, "%s", name);
        kw_wop *op = &ops[n_ops];
        snprintf(op->name, sizeof op->name, "%s", name);
        if (kw_tiling_of(r, group, &op->t, err, sizeof err) != 0) {
            kw_answer_error(id, "unsupported", err);
            return;
        }
        size_t kl = strcspn(spec, ",");
        int is_gemm = kl == 4 && strncmp(spec, "gemm", 4) == 0;
        int is_attn = kl == 9 && strncmp(spec, "attention", 9) == 0;
        if (!is_gemm && !is_attn) {
            snprintf(err, sizeof err, "operator %s: kind %.*s is not implemented by this worker",
                     name, (int)kl, spec);
            kw_answer_error(id, "unsupported", err);
            return;
        }
        snprintf(key, sizeof key, "%s|rows=%ld|seq=%ld|kv=%ld|batch=%ld|%s|%s", spec, rows, seq, kv,
                 batch, precisions[prec], strstr(name, "silu") ? "silu" : "");
        int found;
        kw_centry *e = kw_cache_slot(w, key, &found);
        int rc = 0;
        if (!found && is_gemm) {
            long n, k, epi = 0;
            const char *act = kw_op_get(spec, "act", buf, sizeof buf);
            if (kw_parse_long(&n, kw_op_get(spec, "n", buf, sizeof buf), 1, KW_W_DIM_MAX) != 0 ||
                kw_parse_long(&k, kw_op_get(spec, "k", buf, sizeof buf), 1, KW_W_DIM_MAX) != 0 ||
                (kw_op_get(spec, "epilogue", buf, sizeof buf) &&
                 kw_parse_long(&epi, buf, 0, 1) != 0)) {
                snprintf(err, sizeof err, "operator %s: gemm needs n:N,k:K[,epilogue:0|1]", name);
                kw_answer_error(id, "internal", err);
                return;
            }
            act = kw_op_get(spec, "act", buf, sizeof buf);
            kw_kgemm_shape gs = {.m = (int)rows, .n = (int)n, .k = (int)k, .dt = dt,
                                 .epilogue = (int)epi,
                                 .act = (act && strcmp(act, "silu") == 0) || strstr(name, "silu")
                                            ? KW_ACT_SILU : KW_ACT_GELU};
            rc = kw_kern_gemm_create(&e->g, &gs, KW_W_SEED ^ kw_hash(key));
            e->kind = KW_W_GEMM;
        } else if (!found) {
            long h, kvh, d, causal = 0;
            if (kw_parse_long(&h, kw_op_get(spec, "heads", buf, sizeof buf), 1, 4096) != 0 ||
                kw_parse_long(&kvh, kw_op_get(spec, "kv_heads", buf, sizeof buf), 1, 4096) != 0 ||
                kw_parse_long(&d, kw_op_get(spec, "head_dim", buf, sizeof buf), 1, 4096) != 0 ||
                (kw_op_get(spec, "causal", buf, sizeof buf) && kw_parse_long(&causal, buf, 0, 1) != 0)) {
                snprintf(err, sizeof err,
                         "operator %s: attention needs heads:H,kv_heads:KV,head_dim:D[,causal:0|1]", name);
                kw_answer_error(id, "internal", err);
                return;
            }
            kw_kattn_shape as = {.batch = (int)batch, .heads = (int)h, .kv_heads = (int)kvh,
                                 .head_dim = (int)d, .mq = decode ? 1 : (int)seq,
                                 .lk = decode ? (int)kv : (int)seq, .causal = (int)causal, .dt = dt};
            rc = kw_kern_attn_create(&e->a, &as, KW_W_SEED ^ kw_hash(key));
            e->kind = KW_W_ATTN;
        }
        if (rc != 0) {
            kw_answer_error(id, rc == KW_ENOMEM ? "resource" : "unsupported", kw_error_last());
            kw_centry_clear(e);
            return;
        }
        if (!found) {
            snprintf(e->key, sizeof e->key, "%s", key);
            e->last_use = ++w->clock;
        }
        op->e = e;
        n_ops++;
    }
    if (n_ops == 0) {
        kw_answer_error(id, "unsupported", "the block has no operator this worker runs");
        return;
    }
    /* The checked run, then warm-up, then the timed repetitions. */
    int rc = kw_run_ops(w, ops, n_ops, fuse_epi, (kw_kattn_mode)mode, (int)threads);
    for (int i = 0; i < n_ops && rc == 0; i++) {
        kw_centry *e = ops[i].e;
        if (w->inject_wrong)
            e->kind == KW_W_GEMM ? kw_kern_gemm_corrupt(e->g) : kw_kern_attn_corrupt(e->a);
        rc = e->kind == KW_W_GEMM ? kw_kern_gemm_check(e->g) : kw_kern_attn_check(e->a);
        if (rc == KW_EMODEL) {
            char m2[KW_W_LINE_MAX / 64];
            snprintf(m2, sizeof m2, "operator %s: %s", ops[i].name, kw_error_last());
            kw_answer_error(id, "wrong_result", m2);
            return;
        }
    }
    for (long i = 0; i < warm && rc == 0; i++)
        rc = kw_run_ops(w, ops, n_ops, fuse_epi, (kw_kattn_mode)mode, (int)threads);
    double *samples = rc == 0 ? malloc(sizeof(double) * reps) : NULL;
    if (rc == 0 && !samples)
        rc = kw_error_set(KW_ENOMEM, "out of memory for %ld samples", reps);
    for (long i = 0; i < reps && rc == 0; i++) {
        double t0 = kw_sample_clock_us(w);
        rc = kw_run_ops(w, ops, n_ops, fuse_epi, (kw_kattn_mode)mode, (int)threads);
        samples[i] = kw_sample_clock_us(w) - t0;
    }
    if (rc != 0) {
        kw_answer_error(id, rc == KW_ENOMEM ? "resource" : "internal", kw_error_last());
        free(samples);
        return;
    }
    printf("ok id=%ld unit=kernel samples_us=", id);
    for (long i = 0; i < reps; i++)
        printf(i ? ",%.3f" : "%.3f", samples[i]);
    putchar('\n');
    fflush(stdout);
    free(samples);
}

/* Split a line into tokens in place: the command, then key=value pairs. */
static void kw_tokenize(kw_req *r, char *line)
{
    r->n = 0;
    for (char *p = strtok(line, " "); p && r->n < KW_W_TOKENS_MAX; p = strtok(NULL, " ")) {
        char *eq = strchr(p, '=');
        r->t[r->n].key = p;
        r->t[r->n].val = eq ? eq + 1 : NULL;
        if (eq)
            *eq = '\0';
        r->n++;
    }
}

static void kw_device_text(char *out, size_t size, int ncpu)
{
    char model[256] = "cpu";
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c += 1 + (c[1] == ' ');
                c[strcspn(c, "\n")] = '\0';
                snprintf(model, sizeof model, "%s", c);
            }
            break;
        }
    if (f)
        fclose(f);
    snprintf(out, size, "%s_x%d", model, ncpu);
    for (char *p = out; *p; p++)
        if (*p == ' ' || *p == '=' || (unsigned char)*p < ' ')
            *p = '_';
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    kw_worker w;
    memset(&w, 0, sizeof w);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    w.ncpu = n > 0 && n < 4096 ? (int)n : 1;
    const char *inj = getenv("KW_WORKER_INJECT");
    w.inject_wrong = inj && strcmp(inj, "wrong_result") == 0;
    /* the sample clock: --clock wall|cpu, else KW_WORKER_CLOCK, else wall */
    const char *clk = getenv("KW_WORKER_CLOCK");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--clock") == 0 && i + 1 < argc) {
            clk = argv[++i];
        } else {
            fprintf(stderr, "usage: knobwise-worker [--clock wall|cpu] (unknown argument %s)\n",
                    argv[i]);
            return 2;
        }
    }
    if (clk && *clk && strcmp(clk, "wall") != 0 && strcmp(clk, "cpu") != 0) {
        fprintf(stderr, "knobwise-worker: clock %s: use wall or cpu\n", clk);
        return 2;
    }
    w.cpu_clock = clk && strcmp(clk, "cpu") == 0;
    if (kw_pool_create(&w.pool, w.ncpu) != 0) {
        fprintf(stderr, "knobwise-worker: %s\n", kw_error_last());
        return 1;
    }
    static kw_req req;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int status = 0;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        if (len > KW_W_LINE_MAX) {
            kw_answer_error(0, "internal", "line longer than 65536 bytes");
            continue;
        }
        kw_tokenize(&req, line);
        if (req.n == 0)
            continue;
        const char *cmd = req.t[0].key;
        if (strcmp(cmd, "hello") == 0) {
            long proto;
            if (kw_parse_long(&proto, kw_get(&req, "protocol"), 1, 1000000) != 0 ||
                proto != KW_W_PROTOCOL) {
                kw_answer_error(0, "unsupported", "this worker speaks protocol=1");
                continue;
            }
            char dev[320];
            kw_device_text(dev, sizeof dev, w.ncpu);
            printf("ready protocol=%d name=knobwise-cpu device=%s clock=%s\n", KW_W_PROTOCOL, dev,
                   w.cpu_clock ? "cpu" : "wall");
            fflush(stdout);
            w.hello = 1;
        } else if (strcmp(cmd, "measure") == 0) {
            kw_measure(&w, &req);
        } else if (strcmp(cmd, "quit") == 0) {
            break;
        } else {
            kw_answer_error(0, "internal", "unknown command (hello, measure, quit)");
        }
    }
    free(line);
    for (int i = 0; i < KW_W_CACHE_MAX; i++)
        kw_centry_clear(&w.cache[i]);
    kw_pool_free(w.pool);
    return status;
}
