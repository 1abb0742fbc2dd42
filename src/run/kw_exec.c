/* kw_exec.c - the measuring evaluator (see kw_exec.h).
 *
 * Design choices:
 * - The model evaluator stays the one home of stages 2-4: this file measures
 *   stage 1 and hands the result to kw_eval_measured, so the serving
 *   simulation, thermal window, drift check and guards are the same code for
 *   modelled and measured runs (rejected: a copy of the stage glue here).
 * - The per-evaluation statistic handed on is the MEDIAN of the samples kept
 *   by the outlier policy (and their spread, samples / median, from which the
 *   serving simulation draws each batch's time): robust, and over repetitions
 *   close to normal
 *   (asymptotic normality of the sample median), which is what the engine's
 *   Welch test across repetitions assumes. Raw samples are skewed; they are
 *   never fed to a t-test (kw_mstat.h has the rank test for raw samples).
 * - Adaptive samples: the first request asks for `reps`; while the median's
 *   (unit=request: the p95's) distribution-free 95% interval is wider than
 *   +-target_ci_pct of it and fewer than max_reps are in, another request
 *   asks for as many again.
 * - Drift: with anchor on, every measurement (the baseline's own included) is
 *   bracketed by two measurements of the shape's baseline (A B A) and its
 *   median is scaled by ref / mean(A1, A2), ref being the first bracket's
 *   mean in this process; a device drifting linearly over the bracket is
 *   cancelled exactly. This is the interleaving the engine can have without
 *   knowing the incumbent (the search engine must not care which evaluator it
 *   has): every candidate is compared through the same anchor.
 * - Protocol additions (unknown keys are ignored by workers, so no version
 *   bump): `rep=N` (the engine's repetition) and `round=K` (the adaptive
 *   request's index within the evaluation), so a worker that draws noise can
 *   make it a function of the request and not of the order of requests; and
 *   `purpose=search|anchor|calibrate|results` (a journaled evaluation, an
 *   anchor bracket, the start-up baseline that sets the arrival rate, a
 *   result-time re-measurement: portability matrix and re-check), so a worker
 *   or a test can tell what is journaled.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "kw_exec.h"
#include "kw_num.h"
#include "kw_mstat.h"
#include "kw_worker.h"


typedef struct kw_exec_dev {
    pthread_mutex_t mu;
    kw_worker *w;            /* NULL after a fault until the next request */
    kw_exec_opts o;
    char *cmd;
    int log_fd;              /* -1: knobwise's stderr */
    kw_worker_sink err;      /* the workers' stderr: knobwise's (capped), then the log's */
    long next_id, requests, restarts;
    double anchor_ref[KW_SHAPE_MAX]; /* the first anchor bracket's mean per shape, 0 = none yet */
    char fatal[KW_ERROR_MAX];        /* why the worker could not be started again ("" = fine) */
    char name[128];
} kw_exec_dev;

struct kw_exec {
    const kw_config *cfg;
    const kw_model_eval *model;
    kw_exec_dev *dev;
    int owns_dev;
    const char *purpose;     /* the request's purpose= for the candidate's own measurements */
    kw_evaluator iface;
    kw_cand base;
};

void kw_exec_opts_from_space(kw_exec_opts *o, const kw_space *s, const char *cmd_override,
                             double timeout_override_s)
{
    memset(o, 0, sizeof *o);
    o->cmd = cmd_override ? cmd_override : s->exec_cmd;
    o->timeout_s = timeout_override_s > 0 ? timeout_override_s : s->exec_timeout_s;
    o->start_timeout_s = s->exec_start_timeout_s;
    o->warmup = s->exec_warmup;
    o->reps = s->exec_reps;
    o->max_reps = s->exec_max_reps;
    o->target_ci_pct = s->exec_target_ci_pct;
    o->anchor = s->exec_anchor;
}

int kw_exec_spec(const char **cmd, const char *spec, const kw_space *s)
{
    *cmd = NULL;
    if (!spec) {
        if (s && s->exec_cmd[0])
            *cmd = s->exec_cmd;
        return 0;
    }
    if (strcmp(spec, "model") == 0)
        return 0;
    /* a command of blanks alone is none (it reached the worker start and
     * failed there, exit 1, while 'exec:' was a usage error, exit 2) */
    if (strncmp(spec, "exec:", 5) == 0 && spec[5 + strspn(spec + 5, " \t\n")]) {
        *cmd = spec + 5;
        return 0;
    }
    return kw_error_set(KW_EINPUT, "--evaluator takes 'model' or 'exec:CMD', not '%s'", spec);
}

/* The model's metric names, then the measured ones (KW_X_*). */
static const char *kw_exec_names[KW_X_COUNT];
static pthread_once_t kw_exec_names_once = PTHREAD_ONCE_INIT;

static void kw_exec_names_init(void)
{
    /* the metric table lists the measured rows right after the model's */
    for (int i = 0; i < KW_X_COUNT && i < kw_metric_count; i++)
        kw_exec_names[i] = kw_metric_table[i].name;
}

/* ------------------------------------------------------------------ requests */

static const char *kw_exec_kind(kw_op_kind k)
{
    switch (k) {
    case KW_OP_GEMM: return "gemm";
    case KW_OP_ATTENTION: return "attention";
    case KW_OP_CONV: return "conv";
    case KW_OP_NORM: return "norm";
    case KW_OP_RESIDUAL: return "residual";
    case KW_OP_ACT: return "act";
    case KW_OP_MOE: return "moe";
    }
    return "unknown";
}

/* Append printf text to buf (len used of cap); returns 0 or -1 when full. */
static int kw_exec_cat(char *buf, size_t *len, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int kw_exec_cat(char *buf, size_t *len, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap - *len)
        return -1;
    *len += (size_t)n;
    return 0;
}

/* The measure line for (c, shape) as the protocol names it. */
static int kw_exec_line(char *buf, size_t cap, const kw_exec *e, long id, const kw_cand *c,
                        int shape, int rep, int round, int reps, int warmup, const char *purpose)
{
    const kw_config *cfg = e->cfg;
    const kw_shape *s = &cfg->workload.shapes[cfg->space.shapes[shape]];
    const kw_block *b = &cfg->workload.blocks[s->block];
    size_t len = 0;
    int bad = kw_exec_cat(buf, &len, cap,
                          "measure id=%ld shape=%s block=%s phase=%s batch=%d seq=%d kv_len=%d "
                          "streams=%d warmup=%d reps=%d rep=%d round=%d purpose=%s",
                          id, s->name, b->name, s->phase == KW_PHASE_PREFILL ? "prefill" : "decode",
                          s->batch, s->seq, s->kv_len, s->streams, warmup, reps, rep, round, purpose);
    for (int i = 0; i < b->n_ops && !bad; i++) {
        const kw_op *op = &b->ops[i];
        bad |= kw_exec_cat(buf, &len, cap, " op.%s=%s", op->name, kw_exec_kind(op->kind));
        switch (op->kind) {
        case KW_OP_GEMM:
            bad |= kw_exec_cat(buf, &len, cap, ",n:%llu,k:%llu,epilogue:%d,weights:%d",
                               (unsigned long long)op->n, (unsigned long long)op->k, op->epilogue,
                               op->weights);
            break;
        case KW_OP_ATTENTION:
            bad |= kw_exec_cat(buf, &len, cap, ",heads:%d,kv_heads:%d,head_dim:%d,causal:%d",
                               op->heads, op->kv_heads, op->head_dim, op->causal);
            break;
        case KW_OP_CONV:
            bad |= kw_exec_cat(buf, &len, cap,
                               ",in_h:%d,in_w:%d,in_c:%d,out_c:%d,kh:%d,kw:%d,stride:%d,pad:%d,"
                               "epilogue:%d",
                               op->in_h, op->in_w, op->in_c, op->out_c, op->kh, op->kw, op->stride,
                               op->pad, op->epilogue);
            break;
        default:
            bad |= kw_exec_cat(buf, &len, cap, ",width:%llu", (unsigned long long)op->width);
        }
        if (op->group[0])
            bad |= kw_exec_cat(buf, &len, cap, ",group:%s", op->group);
        if (op->merge[0])
            bad |= kw_exec_cat(buf, &len, cap, ",merge:%s", op->merge);
    }
    const kw_knobspace *ks = &cfg->space.knobs;
    for (int k = 0; k < ks->n_knobs && !bad; k++)
        bad |= kw_exec_cat(buf, &len, cap, " knob.%s=%s", ks->knobs[k].name,
                           ks->knobs[k].values[c->v[k]]);
    if (bad)
        return kw_error_set(KW_EINPUT, "a measure request is longer than %d bytes",
                            KW_WORKER_LINE_MAX);
    return 0;
}

/* The value of key= in an answer line, or NULL; the token ends at a space. */
static const char *kw_exec_val(const char *line, const char *key, size_t *vlen)
{
    size_t kl = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += kl)
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            *vlen = strcspn(p + kl + 1, " ");
            return p + kl + 1;
        }
    return NULL;
}

static int kw_exec_num(double *out, const char *v, size_t len)
{
    char tmp[64];
    if (len == 0 || len >= sizeof tmp)
        return -1;
    memcpy(tmp, v, len);
    tmp[len] = '\0';
    /* decimal, as every number knobwise reads (kw_num.h): strtod also took
     * "0x10" (16 us) and "0x1p4" from a worker until 2026-12-07 */
    return kw_num_double(out, tmp);
}

/* What one measure request brought back. */
typedef struct kw_exec_ans {
    int unit_request;   /* unit=request */
    int fatal;          /* the worker could not be started again (dev->fatal says why) */
    int stopped;        /* the stop flag ended it (o.stop): nothing to journal */
    double q_rel_rms, q_cos;
    char guard[KW_GUARDS_LEN]; /* "" ok, else error:... */
} kw_exec_ans;

/* 1 when an ok answer gives one of the keys knobwise reads twice: which one
 * is meant? (The first was taken: `samples_us=100,... samples_us=1` measured
 * the first list; until 2026-12-07.) An error answer's message runs to the
 * end of the line and may hold any words, so only ok answers are checked. */
static int kw_exec_key_twice(const char *ans)
{
    static const char *const keys[] = {"id", "unit", "samples_us", "quality_rel_rms",
                                       "quality_cos"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        size_t l;
        const char *v = kw_exec_val(ans, keys[i], &l);
        if (v && kw_exec_val(v + l, keys[i], &l))
            return 1;
    }
    return 0;
}

/* Parse an answer to request id expecting reps samples appended to x (n in/out).
 * A sample is a time the worker measured before it answered: over 0 and at most
 * the time it had (max_us, the timeout). A quality figure is a relative RMS error
 * in [0, KW_EXEC_REL_RMS_MAX] or a cosine in [-1, 1]. Anything else is not a
 * measurement: error:protocol. (1e300 us samples went on into the serving
 * simulation, which crashed at 1e308, and every figure past ~1e20 broke the
 * results' own schema, so the run could never write its results.) */
static void kw_exec_parse(kw_exec_ans *a, const char *ans, long id, int reps, double max_us,
                          double *x, int *n)
{
    size_t l;
    const char *v;
    char idbuf[32];
    snprintf(idbuf, sizeof idbuf, "%ld", id);
    v = kw_exec_val(ans, "id", &l);
    if (!v || l != strlen(idbuf) || strncmp(v, idbuf, l) != 0) {
        snprintf(a->guard, sizeof a->guard, "error:protocol");
        return;
    }
    if (strncmp(ans, "error ", 6) == 0) {
        v = kw_exec_val(ans, "reason", &l);
        static const char *const ok[] = {"unsupported", "wrong_result", "resource", "internal"};
        for (size_t i = 0; v && i < sizeof ok / sizeof ok[0]; i++)
            if (l == strlen(ok[i]) && strncmp(v, ok[i], l) == 0) {
                snprintf(a->guard, sizeof a->guard, "error:%s", ok[i]);
                return;
            }
        snprintf(a->guard, sizeof a->guard, "error:protocol");
        return;
    }
    if (strncmp(ans, "ok ", 3) != 0 || kw_exec_key_twice(ans)) {
        snprintf(a->guard, sizeof a->guard, "error:protocol");
        return;
    }
    v = kw_exec_val(ans, "unit", &l);
    if (v && l == 6 && strncmp(v, "kernel", 6) == 0)
        a->unit_request = 0;
    else if (v && l == 7 && strncmp(v, "request", 7) == 0)
        a->unit_request = 1;
    else {
        snprintf(a->guard, sizeof a->guard, "error:protocol");
        return;
    }
    v = kw_exec_val(ans, "samples_us", &l);
    int got = 0;
    while (v && l > 0) {
        size_t t = 0;
        while (t < l && v[t] != ',')
            t++;
        double d;
        if (got >= reps || kw_exec_num(&d, v, t) != 0 || !(d > 0) || d > max_us) {
            snprintf(a->guard, sizeof a->guard, "error:protocol");
            return;
        }
        x[(*n)++] = d;
        got++;
        if (t == l)
            break;
        v += t + 1;
        l -= t + 1;
    }
    if (got != reps) {
        snprintf(a->guard, sizeof a->guard, "error:protocol");
        return;
    }
    double q;
    if ((v = kw_exec_val(ans, "quality_rel_rms", &l))) {
        if (kw_exec_num(&q, v, l) != 0 || !(q >= 0.0 && q <= KW_EXEC_REL_RMS_MAX)) {
            snprintf(a->guard, sizeof a->guard, "error:protocol");
            return;
        }
        a->q_rel_rms = q;
    }
    if ((v = kw_exec_val(ans, "quality_cos", &l))) {
        if (kw_exec_num(&q, v, l) != 0 || !(q >= -1.0 && q <= 1.0)) {
            snprintf(a->guard, sizeof a->guard, "error:protocol");
            return;
        }
        a->q_cos = q;
    }
}

/* One request on the device (mutex held): start the worker if needed. */
static void kw_exec_request(kw_exec *e, const kw_cand *c, int shape, int rep, int round, int reps,
                            const char *purpose, double *x, int *n, kw_exec_ans *a)
{
    kw_exec_dev *d = e->dev;
    char *line = malloc(KW_WORKER_LINE_MAX), *ans = malloc(KW_WORKER_LINE_MAX);
    if (!line || !ans) {
        snprintf(a->guard, sizeof a->guard, "error:resource");
        goto done;
    }
    if (d->o.stop && *d->o.stop) {
        a->stopped = 1;
        snprintf(a->guard, sizeof a->guard, "error:stopped");
        goto done;
    }
    if (!d->w) {
        kw_worker_opts wo = {.cmd = d->cmd, .start_timeout_s = d->o.start_timeout_s,
                             .index = d->o.index, .err = &d->err};
        if (kw_worker_start(&d->w, &wo) != 0) {
            /* A worker that started once and now cannot: nothing more can be
             * measured, so the run stops (resumable) instead of journaling
             * every remaining candidate as failed. */
            snprintf(d->fatal, sizeof d->fatal, "%s", kw_error_last());
            kw_error_clear();
            snprintf(a->guard, sizeof a->guard, "error:start");
            a->fatal = 1;
            goto done;
        }
        d->restarts++;
    }
    long id = ++d->next_id;
    if (kw_exec_line(line, KW_WORKER_LINE_MAX, e, id, c, shape, rep, round, reps,
                     round == 0 ? d->o.warmup : 0, purpose) != 0) {
        kw_error_clear();
        snprintf(a->guard, sizeof a->guard, "error:protocol");
        goto done;
    }
    /* the run's time limit bounds the wait too: a measurement it cuts is a
     * stop (the round is dropped, a resume measures it), not a timeout (it
     * ran on to the worker's timeout_s past --time-limit until 2026-12-06:
     * --sleep 3 measurements, --time-limit 2: 18 s) */
    double wait_s = d->o.timeout_s;
    int by_limit = 0;
    if (d->o.deadline_s && *d->o.deadline_s > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double left = *d->o.deadline_s - ((double)ts.tv_sec + ts.tv_nsec * 1e-9);
        if (left < wait_s) {
            wait_s = left > 0 ? left : 0;
            by_limit = 1;
        }
    }
    d->requests++;
    kw_worker_fault f =
        wait_s > 0 ? kw_worker_request(d->w, line, ans, KW_WORKER_LINE_MAX, wait_s, d->o.stop)
                   : KW_WORKER_TIMEOUT;
    if (f == KW_WORKER_STOPPED || (by_limit && f == KW_WORKER_TIMEOUT)) {
        /* killed mid-request: a fresh one for what comes next */
        a->stopped = 1;
        snprintf(a->guard, sizeof a->guard, "error:stopped");
        kw_worker_free(d->w);
        d->w = NULL;
        goto done;
    }
    if (f != KW_WORKER_OK) {
        snprintf(a->guard, sizeof a->guard, "%s",
                 f == KW_WORKER_TIMEOUT ? "error:timeout"
                 : f == KW_WORKER_CRASH ? "error:crash" : "error:protocol");
        kw_worker_free(d->w);
        d->w = NULL;
        goto done;
    }
    int n0 = *n;
    kw_exec_parse(a, ans, id, reps, fmin(d->o.timeout_s, KW_EXEC_TIMEOUT_MAX_S) * 1e6, x, n);
    if (strcmp(a->guard, "error:protocol") == 0) {
        /* garbage: the worker's state is unknown; start afresh */
        *n = n0;
        kw_worker_free(d->w);
        d->w = NULL;
    }
done:
    free(line);
    free(ans);
}

/* Median of the samples kept by the outlier policy; ci_pct = half-width of its
 * 95% interval relative to it. x is sorted and trimmed in place. */
static double kw_exec_median_ci(double *x, int n, double *ci_pct, double *lo, double *hi,
                                size_t *kept_out)
{
    size_t kept = kw_mstat_trim(x, (size_t)n);
    double med = gsl_stats_median_from_sorted_data(x, 1, kept);
    kw_mstat_quantile_ci(lo, hi, x, kept, 0.5, KW_EXEC_CI_LEVEL);
    *ci_pct = med > 0 ? 100.0 * fmax(med - *lo, *hi - med) / med : INFINITY;
    if (kept_out)
        *kept_out = kept;
    return med;
}

static double kw_exec_median(double *x, int n, double *ci_pct)
{
    double lo, hi;
    return kw_exec_median_ci(x, n, ci_pct, &lo, &hi, NULL);
}

/* Measure c adaptively (mutex held). Returns the samples in x (n), the answer
 * flags in a. */
static void kw_exec_measure(kw_exec *e, const kw_cand *c, int shape, int rep, const char *purpose,
                            double *x, int *n, kw_exec_ans *a)
{
    const kw_exec_opts *o = &e->dev->o;
    int reps = o->reps, round = 0;
    *n = 0;
    for (;;) {
        kw_exec_request(e, c, shape, rep, round, reps, purpose, x, n, a);
        if (a->guard[0])
            return;
        if (*n >= o->max_reps)
            return;
        double *tmp = malloc((size_t)*n * sizeof *tmp);
        if (!tmp)
            return;
        memcpy(tmp, x, (size_t)*n * sizeof *tmp);
        double ci, lo, hi;
        if (a->unit_request) {
            /* whole-request latencies: the tail is the object, so its interval
             * decides (p95, nothing trimmed) */
            gsl_sort(tmp, 1, (size_t)*n);
            double q = gsl_stats_quantile_from_sorted_data(tmp, 1, (size_t)*n, 0.95);
            kw_mstat_quantile_ci(&lo, &hi, tmp, (size_t)*n, 0.95, KW_EXEC_CI_LEVEL);
            ci = q > 0 ? 100.0 * fmax(q - lo, hi - q) / q : INFINITY;
        } else {
            kw_exec_median(tmp, *n, &ci);
        }
        free(tmp);
        if (ci <= o->target_ci_pct)
            return;
        reps = *n < o->max_reps - *n ? *n : o->max_reps - *n;
        round++;
    }
}

static void kw_exec_fail(kw_metrics *out, const char *guard)
{
    memset(out, 0, sizeof *out);
    snprintf(out->guards, sizeof out->guards, "%s", guard);
    snprintf(out->klass, sizeof out->klass, "failed");
    out->v[KW_M_P50_US] = out->v[KW_M_P95_US] = out->v[KW_M_P99_US] = out->v[KW_M_P999_US] =
        out->v[KW_M_MEAN_US] = HUGE_VAL;
    out->v[KW_M_DRIFT_FALLBACK] = -1.0;
}

static int kw_exec_eval(void *ctx, const kw_cand *c, int shape, int rep, kw_metrics *out)
{
    kw_exec *e = ctx;
    kw_exec_dev *d = e->dev;
    int cap = d->o.max_reps;
    double *x = malloc((size_t)cap * sizeof *x), *ax = malloc((size_t)cap * sizeof *ax);
    int n = 0, rc = 0;
    kw_exec_ans a = {.q_rel_rms = NAN, .q_cos = NAN};
    double factor = 1.0;
    if (!x || !ax) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for measured samples");
        goto done;
    }
    /* every measurement is bracketed, the baseline's own too, so all of them
     * carry the same correction and keep their own noise */
    int anchored = d->o.anchor, stopped = 0;
    pthread_mutex_lock(&d->mu);
    double a1 = 0, a2 = 0, ci;
    if (anchored) {
        kw_exec_ans aa = {0};
        int an = 0;
        kw_exec_measure(e, &e->base, shape, rep, "anchor", ax, &an, &aa);
        stopped |= aa.stopped;
        if (!aa.guard[0])
            a1 = kw_exec_median(ax, an, &ci);
    }
    kw_exec_measure(e, c, shape, rep, e->purpose, x, &n, &a);
    if (anchored && !a.guard[0]) {
        kw_exec_ans aa = {0};
        int an = 0;
        kw_exec_measure(e, &e->base, shape, rep, "anchor", ax, &an, &aa);
        stopped |= aa.stopped;
        if (!aa.guard[0])
            a2 = kw_exec_median(ax, an, &ci);
    }
    stopped |= a.stopped;
    if (anchored && a1 > 0 && a2 > 0) {
        double now = (a1 + a2) / 2.0;
        if (!(d->anchor_ref[shape] > 0))
            d->anchor_ref[shape] = now;
        factor = d->anchor_ref[shape] / now;
    }
    char fatal[KW_ERROR_MAX];
    snprintf(fatal, sizeof fatal, "%s", d->fatal);
    pthread_mutex_unlock(&d->mu);

    if (stopped) { /* not a failed candidate: an interrupted evaluation, never journaled */
        rc = kw_error_set(KW_EINTERRUPTED, "measurement stopped: interrupted");
        goto done;
    }
    if (a.fatal || fatal[0]) {
        rc = kw_error_set(KW_EIO, "the worker cannot be started again: %s", fatal);
        goto done;
    }
    if (a.guard[0]) {
        kw_exec_fail(out, a.guard);
        goto done;
    }
    if (anchored && !(a1 > 0 && a2 > 0)) {
        /* a bracket that failed (its anchor timed out, crashed, answered
         * garbage): the measurement cannot carry the drift correction every
         * other one carries, so it is not set beside them; the E record says
         * why (it was kept uncorrected with nothing in the journal until
         * 2026-12-06) */
        kw_exec_fail(out, KW_EXEC_ANCHOR_FAILED);
        goto done;
    }
    kw_stage1_measured ms = {.quality_rel_rms = a.q_rel_rms, .quality_cos = a.q_cos};
    double lo, hi, med;
    size_t kept = (size_t)n;
    if (a.unit_request) {
        gsl_sort(x, 1, (size_t)n); /* the tail is the object: no outlier is dropped */
        for (int i = 0; i < n; i++)
            x[i] *= factor;
        ms.request_us = x;
        ms.n_request = n;
        med = gsl_stats_median_from_sorted_data(x, 1, (size_t)n);
        kw_mstat_quantile_ci(&lo, &hi, x, (size_t)n, 0.5, KW_EXEC_CI_LEVEL);
    } else {
        double raw = kw_exec_median_ci(x, n, &ci, &lo, &hi, &kept);
        med = raw * factor;
        lo *= factor;
        hi *= factor;
        ms.kernel_us = med;
        /* the spread the simulation draws each batch's time from (x is sorted) */
        for (size_t i = 0; i < kept && raw > 0; i++)
            ax[i] = x[i] / raw;
        ms.kernel_scale = raw > 0 ? ax : NULL;
        ms.n_kernel_scale = raw > 0 ? (int)kept : 0;
    }
    rc = kw_eval_measured(e->model, c, shape, rep, &ms, out);
    if (rc == 0) {
        if (!a.unit_request)
            out->v[KW_M_LATENCY_US] = ms.kernel_us; /* exactly the measured figure */
        out->v[KW_X_MEASURED_LO_US] = lo;
        out->v[KW_X_MEASURED_HI_US] = hi;
        out->v[KW_X_MEASURED_SAMPLES] = (double)kept;
    }
done:
    free(x);
    free(ax);
    return rc;
}

/* Measure the shape's baseline once and give measured / modelled stage-1
 * time of one request (*ratio; 0 when the worker failed: guard in why). */
static int kw_exec_baseline_ratio(double *ratio, char *why, size_t why_len, kw_exec *e, int shape)
{
    kw_exec_dev *d = e->dev;
    int n = 0;
    kw_exec_ans a = {.q_rel_rms = NAN, .q_cos = NAN};
    *ratio = 0;
    why[0] = '\0';
    double *x = malloc((size_t)d->o.max_reps * sizeof *x);
    if (!x)
        return kw_error_set(KW_ENOMEM, "out of memory for measured samples");
    pthread_mutex_lock(&d->mu);
    kw_exec_measure(e, &e->base, shape, 0, "calibrate", x, &n, &a);
    pthread_mutex_unlock(&d->mu);
    kw_cost one;
    int rc = 0;
    if (a.stopped) {
        rc = kw_error_set(KW_EINTERRUPTED, "interrupted while measuring the baseline");
    } else if (a.fatal) {
        rc = kw_error_set(KW_EIO, "the worker cannot be started again: %s", e->dev->fatal);
    } else if (a.guard[0]) {
        snprintf(why, why_len, "%s", a.guard);
    } else if ((rc = kw_eval_cost(&one, e->model, &e->base, shape)) == 0 &&
               one.latency_us > 0) {
        double ci;
        *ratio = kw_exec_median(x, n, &ci) / one.latency_us;
    }
    free(x);
    return rc;
}

int kw_exec_calibrate(kw_exec *e, kw_model_eval *const *models, int n_models,
                      const char *recorded, char *out, size_t out_len)
{
    size_t used = 0;
    int rc = 0;
    out[0] = '\0';
    const char *p = recorded;
    for (int i = 0; i < e->cfg->space.n_shapes; i++) {
        double f = 1.0;
        if (p) {
            char *end;
            f = strtod(p, &end);
            p = *end == ',' ? end + 1 : end;
        } else {
            char why[KW_GUARDS_LEN];
            const char *name = e->cfg->workload.shapes[e->cfg->space.shapes[i]].name;
            /* a worker that exited or was killed (error:crash: the OOM
             * killer, a signal) is measured again by a fresh one, up to
             * KW_EXEC_BASELINE_TRIES in all; an answer it gave (its own
             * error, garbage, a timeout) is not retried */
            int tries = 0;
            do {
                if ((rc = kw_exec_baseline_ratio(&f, why, sizeof why, e, i)) != 0) {
                    if (rc == KW_EINTERRUPTED) /* the stop or the time limit (kw_run_fresh) */
                        kw_error_set(rc, "interrupted while measuring the baseline of shape "
                                     "'%s', %d of %d", name, i + 1, e->cfg->space.n_shapes);
                    return rc;
                }
            } while (!(f > 0) && strcmp(why, "error:crash") == 0 &&
                     ++tries < KW_EXEC_BASELINE_TRIES);
            if (!(f > 0) && strcmp(why, "error:crash") == 0)
                /* not bad input: the worker died each time (exit 1, not 2) */
                return kw_error_set(KW_EIO,
                                    "worker '%s' crashed (exited or was killed by a signal, "
                                    "e.g. the OOM killer) on each of %d tries to measure the "
                                    "baseline of shape '%s' (error:crash); see its stderr above",
                                    e->dev->cmd, KW_EXEC_BASELINE_TRIES, name);
            if (!(f > 0))
                return kw_error_set(KW_EINPUT,
                                    "worker '%s' could not measure the baseline of shape '%s' (%s)",
                                    e->dev->cmd, name, why);
        }
        for (int m = 0; m < n_models; m++)
            if (models[m] && (rc = kw_eval_rescale_load(models[m], i, f)) < 0)
                return rc;
        used += (size_t)snprintf(out + used, used < out_len ? out_len - used : 0, "%s%.17g",
                                 i ? "," : "", f);
    }
    return 0;
}

/* ------------------------------------------------------------------ lifetime */

/* The screen (engine opts.screen): the model's prediction of c, no measurement. */
static int kw_exec_predict(void *ctx, const kw_cand *c, int shape, kw_metrics *out)
{
    const kw_exec *e = ctx;
    return kw_eval_measured(e->model, c, shape, 0, NULL, out);
}

static void kw_exec_iface_init(kw_exec *e)
{
    const kw_evaluator *m = kw_eval_iface(e->model);
    e->iface = *m;
    e->iface.ctx = e;
    pthread_once(&kw_exec_names_once, kw_exec_names_init);
    e->iface.n_metrics = KW_X_COUNT;
    e->iface.metric_names = kw_exec_names;
    e->iface.noisy = 1;
    e->iface.drifts = 1; /* a device measured in time */
    e->iface.eval = kw_exec_eval;
    e->iface.predict = kw_exec_predict;
    e->iface.paired = NULL; /* a measured figure is the device's, not a seeded simulation's */
    e->iface.devices = 0; /* one worker, one device (mpirun's pool gives several) */
    e->iface.eval_on = NULL;
    e->iface.service_key = NULL; /* a measurement is never another's: no aliases */
    kw_knobs_cand_baseline(&e->base, &e->cfg->space.knobs);
}

int kw_exec_new(kw_exec **out, const kw_config *cfg, const kw_model_eval *model,
                const kw_exec_opts *o)
{
    *out = NULL;
    if (!o->cmd || !o->cmd[0])
        return kw_error_set(KW_EINPUT, "the measuring evaluator needs a command (exec:CMD)");
    if (o->reps < 1 || o->max_reps < o->reps || o->max_reps > KW_EXEC_SAMPLES_MAX ||
        !(o->timeout_s > 0) || !(o->start_timeout_s > 0) || o->warmup < 0)
        return kw_error_set(KW_EINPUT, "evaluator settings out of range: reps %d, max_reps %d "
                            "(at most %d), timeout %g s, start timeout %g s, warmup %d",
                            o->reps, o->max_reps, KW_EXEC_SAMPLES_MAX, o->timeout_s,
                            o->start_timeout_s, o->warmup);
    kw_exec *e = calloc(1, sizeof *e);
    kw_exec_dev *d = calloc(1, sizeof *d);
    int rc = 0;
    if (!e || !d || !(d->cmd = strdup(o->cmd))) {
        rc = kw_error_set(KW_ENOMEM, "out of memory creating the measuring evaluator");
        goto fail;
    }
    d->o = *o;
    d->o.cmd = d->cmd;
    d->log_fd = -1;
    /* until the run folder exists (and for eval, verify --remeasure): a
     * bounded amount on knobwise's stderr, never the descriptor itself */
    d->err = (kw_worker_sink){.fd = 2, .cap = KW_WORKER_STDERR_CAP, .what = "forwarding"};
    pthread_mutex_init(&d->mu, NULL);
    kw_worker_opts wo = {.cmd = d->cmd, .start_timeout_s = o->start_timeout_s, .index = o->index,
                         .err = &d->err};
    if ((rc = kw_worker_start(&d->w, &wo)) != 0) {
        pthread_mutex_destroy(&d->mu);
        goto fail;
    }
    snprintf(d->name, sizeof d->name, "%s", kw_worker_name(d->w));
    e->cfg = cfg;
    e->model = model;
    e->dev = d;
    e->owns_dev = 1;
    e->purpose = "search";
    kw_exec_iface_init(e);
    *out = e;
    return 0;
fail:
    if (d)
        free(d->cmd);
    free(d);
    free(e);
    return rc;
}

int kw_exec_new_sibling(kw_exec **out, kw_exec *first, const kw_model_eval *model,
                        const char *purpose)
{
    *out = NULL;
    kw_exec *e = calloc(1, sizeof *e);
    if (!e)
        return kw_error_set(KW_ENOMEM, "out of memory creating the measuring evaluator");
    e->cfg = first->cfg;
    e->model = model;
    e->dev = first->dev;
    e->purpose = purpose;
    kw_exec_iface_init(e);
    *out = e;
    return 0;
}

int kw_exec_log(kw_exec *e, const char *path)
{
    kw_exec_dev *d = e->dev;
    /* a run folder's own file: never through a link (O_NOFOLLOW), and only a
     * regular file: opened without blocking (a FIFO there waited for a reader
     * for ever; with none it is ENXIO now) and checked on the descriptor; each
     * is bad input (exit 2) before anything of the run is written */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_nlink > 1)) {
        close(fd);
        fd = -1;
        errno = S_ISREG(st.st_mode) ? EMLINK : ENXIO;
    }
    if (fd < 0) {
        int err = errno;
        int bad = err == ELOOP || err == EISDIR || err == ENXIO || err == EMLINK;
        /* a hard link: appending to it wrote the worker's stderr into a file
         * by another name, outside the run folder (exit 0 before) */
        return kw_error_set(bad ? KW_EINPUT : KW_EIO, "%s: cannot open the worker log: %s", path,
                            err == ELOOP ? "it is a symbolic link; a run folder's own files are "
                                           "always files of its own"
                            : err == EMLINK ? "it has other names (hard links), and appending "
                                              "to it would write those files too; a run "
                                              "folder's own files are always files of its own"
                            : bad ? "it is not a regular file"
                                  : strerror(err));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    pthread_mutex_lock(&d->mu);
    /* the old worker's last stderr still goes where it went */
    kw_worker_free(d->w);
    d->w = NULL;
    kw_worker_sink_close(&d->err);
    if (d->log_fd >= 0)
        close(d->log_fd);
    d->log_fd = fd;
    /* the cap counts the file, so a resume adds nothing to a full log but
     * its notes (README: worker.log holds at most KW_WORKER_LOG_CAP bytes of
     * the worker's stderr) */
    d->err = (kw_worker_sink){.fd = fd, .used = (long long)st.st_size, .cap = KW_WORKER_LOG_CAP,
                              .what = "worker.log"};
    kw_worker_opts wo = {.cmd = d->cmd, .start_timeout_s = d->o.start_timeout_s,
                         .index = d->o.index, .err = &d->err};
    int rc = kw_worker_start(&d->w, &wo);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

void kw_exec_free(kw_exec *e)
{
    if (!e)
        return;
    if (e->owns_dev) {
        kw_exec_dev *d = e->dev;
        kw_worker_free(d->w);
        kw_worker_sink_close(&d->err);
        if (d->log_fd >= 0)
            close(d->log_fd);
        pthread_mutex_destroy(&d->mu);
        free(d->cmd);
        free(d);
    }
    free(e);
}

const kw_evaluator *kw_exec_iface(const kw_exec *e) { return &e->iface; }
long kw_exec_requests(const kw_exec *e) { return e->dev->requests; }
long kw_exec_restarts(const kw_exec *e) { return e->dev->restarts; }
const char *kw_exec_worker_name(const kw_exec *e) { return e->dev->name; }
