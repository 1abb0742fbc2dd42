/* model_vs_measured.c - `make bench-cpu` (called by `make bench`): the model
 * against measurement on the same kernels and the probed host.
 *
 * For each shape of a shipped CPU space: N distinct random mappings (GSL
 * mt19937, seeded; constraint-breaking ones redrawn), each predicted by
 * `knobwise eval --stdin` (its stage-1 column latency_us: one request's
 * kernels, no queueing) and measured by the shipped worker through the worker
 * protocol (the minimum of R samples after W warm-up runs, or with --median
 * their median). Out come Spearman's
 * rank correlation of predicted and measured time (gsl_stats_spearman) and the
 * regret of the model's choice: the model's best mapping measured against the
 * measured best of the same N. The best of N noisy single measurements is a
 * lucky one, so the reference is the best, re-measured, of the --top T
 * mappings measured fastest: those and the model's pick are measured again in
 * --ab-rounds R interleaved rounds (every mapping once per round, the order
 * rotated, so load that changes between rounds hits all alike) with --recheck
 * samples each; the reference is the one of the T with the lowest median over
 * the rounds, and the regret is the median of the per-round paired ratios
 * pick / reference with its distribution-free 95% interval (binomial order
 * statistics, Hahn & Meeker 1991, 5.2). The load average before and after
 * each shape is printed with it. Nothing here asserts anything: it reports.
 *
 * With --from-csv F the mappings of each shape and their first measurements
 * are F's rows (a --csv file of an earlier run, or the part of it a caller
 * holds out) instead of a random draw measured here, and --accel A predicts
 * them with another accelerator file (knobwise eval --accel A): that is how
 * tests/bench/calib_holdout.py judges a calibrated file's pick on held-out
 * mappings, re-measured and paired by this same code (one home for the rule).
 *
 * This is a bench driver, not the measuring evaluator: it speaks the protocol
 * only as far as the report needs (hello, measure, quit) and stops at the
 * first worker error. Design choice: in C over the loaders (libkwrun: the space's knobs,
 * shapes and operators, as knobwise reads them) so the requests name every
 * operator and knob exactly as the evaluator's client would.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "kw_error.h"
#include "kw_load.h"

#define KW_B_LINE (1 << 17)
#define KW_B_MAX_MAPPINGS 4096
#define KW_B_AB_MAX 64   /* most interleaved rounds of the regret re-measure */
#define KW_B_TOP_MAX 8   /* most measured-fastest mappings re-measured as the reference */

typedef struct kw_child {
    pid_t pid;
    FILE *to, *from;
} kw_child;

static int kw_spawn(kw_child *c, char *const argv[])
{
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0)
        return -1;
    c->pid = fork();
    if (c->pid < 0)
        return -1;
    if (c->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        setenv("KW_WORKER_PROTOCOL", "1", 1);
        setenv("KW_WORKER_INDEX", "0", 1);
        execv(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    c->to = fdopen(in[1], "w");
    c->from = fdopen(out[0], "r");
    return c->to && c->from ? 0 : -1;
}

static int kw_ask(kw_child *c, const char *line, char *ans)
{
    if (fprintf(c->to, "%s\n", line) < 0 || fflush(c->to) != 0)
        return -1;
    if (!fgets(ans, KW_B_LINE, c->from))
        return -1;
    ans[strcspn(ans, "\n")] = '\0';
    return 0;
}

static void kw_reap(kw_child *c, const char *quit)
{
    if (quit) {
        fprintf(c->to, "%s\n", quit);
        fflush(c->to);
    }
    fclose(c->to);
    fclose(c->from);
    waitpid(c->pid, NULL, 0);
}

static double kw_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The measure request's fixed part (shape and operators) for shape s. */
static void kw_request_head(char *buf, size_t size, const kw_config *cfg, const kw_shape *s)
{
    const kw_block *b = &cfg->workload.blocks[s->block];
    int n = snprintf(buf, size, "shape=%s block=%s phase=%s batch=%d seq=%d kv_len=%d streams=%d",
                     s->name, b->name, s->phase == KW_PHASE_DECODE ? "decode" : "prefill", s->batch,
                     s->seq, s->kv_len, s->streams);
    for (int i = 0; i < b->n_ops && n < (int)size; i++) {
        const kw_op *o = &b->ops[i];
        if (o->kind == KW_OP_GEMM)
            n += snprintf(buf + n, size - n, " op.%s=gemm,n:%llu,k:%llu,epilogue:%d,group:%s", o->name,
                          (unsigned long long)o->n, (unsigned long long)o->k, o->epilogue, o->group);
        else if (o->kind == KW_OP_ATTENTION)
            n += snprintf(buf + n, size - n,
                          " op.%s=attention,heads:%d,kv_heads:%d,head_dim:%d,causal:%d,group:%s", o->name,
                          o->heads, o->kv_heads, o->head_dim, o->causal, o->group);
        else
            n += snprintf(buf + n, size - n, " op.%s=other,width:%llu", o->name,
                          (unsigned long long)o->width);
    }
}

static void kw_knob_tokens(char *buf, size_t size, const kw_knobspace *ks, const kw_cand *c,
                           const char *prefix, const char *sep)
{
    int n = 0;
    buf[0] = '\0';
    for (int k = 0; k < ks->n_knobs && n < (int)size; k++)
        n += snprintf(buf + n, size - n, "%s%s%s=%s", k ? sep : "", prefix, ks->knobs[k].name,
                      ks->knobs[k].values[c->v[k]]);
}

/* The statistic of a mapping's samples: the minimum, the least disturbed run
 * (on a shared machine the other samples carry the neighbours' load; the
 * median is reported beside it). */
static int kw_use_median;

/* Minimum (or median) of the samples in an "ok ... samples_us=a,b,c" answer;
 * -1 on an error answer. */
static double kw_median_of(const char *ans)
{
    const char *p = strstr(ans, "samples_us=");
    if (strncmp(ans, "ok ", 3) != 0 || !p)
        return -1.0;
    p += strlen("samples_us=");
    double v[KW_B_MAX_MAPPINGS];
    size_t n = 0;
    while (n < KW_B_MAX_MAPPINGS) {
        char *end;
        v[n] = strtod(p, &end);
        if (end == p)
            break;
        n++;
        if (*end != ',')
            break;
        p = end + 1;
    }
    if (n == 0)
        return -1.0;
    gsl_sort(v, 1, n);
    return kw_use_median ? gsl_stats_median_from_sorted_data(v, 1, n) : v[0];
}

static double kw_measure(kw_child *w, long *id, const char *head, const kw_knobspace *ks,
                         const kw_cand *c, int warmup, int reps, char *ans)
{
    static char line[KW_B_LINE], knobs[KW_B_LINE / 2];
    kw_knob_tokens(knobs, sizeof knobs, ks, c, "knob.", " ");
    snprintf(line, sizeof line, "measure id=%ld %s warmup=%d reps=%d %s", ++*id, head, warmup, reps,
             knobs);
    if (kw_ask(w, line, ans) != 0)
        return -2.0;
    return kw_median_of(ans);
}

/* Column index of name in a CSV header, or -1. */
static int kw_col(const char *header, const char *name)
{
    int i = 0;
    size_t nl = strlen(name);
    for (const char *p = header; p; i++) {
        if (strncmp(p, name, nl) == 0 && (p[nl] == ',' || p[nl] == '\0'))
            return i;
        p = strchr(p, ',');
        if (p)
            p++;
    }
    return -1;
}

/* The median of the n values v (sorted in place) and its distribution-free 95%
 * interval: order statistics v(k), v(n+1-k), k the largest with
 * P(k <= B <= n-k) >= 0.95, B ~ Binomial(n, 1/2) (Hahn & Meeker 1991, 5.2);
 * lo and hi are NAN when n is too small (below 6). */
static double kw_median_ci(double *v, size_t n, double *lo, double *hi)
{
    gsl_sort(v, 1, n);
    *lo = *hi = NAN;
    for (size_t k = 1; k <= n / 2; k++) {
        double cover = gsl_cdf_binomial_P((unsigned)(n - k), 0.5, (unsigned)n) -
                       (k >= 1 ? gsl_cdf_binomial_P((unsigned)(k - 1), 0.5, (unsigned)n) : 0.0);
        if (cover >= 0.95) {
            *lo = v[k - 1];
            *hi = v[n - k];
        }
    }
    return gsl_stats_median_from_sorted_data(v, 1, n);
}

static const char *kw_field(char *row, int col)
{
    char *p = row;
    for (int i = 0; i < col && p; i++) {
        p = strchr(p, ',');
        if (p)
            p++;
    }
    if (!p)
        return NULL;
    p[strcspn(p, ",")] = '\0';
    return p;
}

/* The rows of `shape` in a --csv file (shape,config_id,predicted_us,measured_us,knobs, the
 * knobs "name=value;..."): their mappings and measurements; a row that does not parse is a
 * FILE:LINE error. */
static int kw_read_rows(const char *path, const kw_knobspace *ks, const char *shape, kw_cand *cand,
                        double *meas, long *n)
{
    static char row[KW_B_LINE], copy[KW_B_LINE];
    FILE *f = fopen(path, "r");
    *n = 0;
    if (!f)
        return kw_error_set(KW_EIO, "%s: %s", path, strerror(errno));
    int line = 0, rc = 0, c_shape = -1, c_meas = -1, c_knobs = -1;
    while (rc == 0 && fgets(row, sizeof row, f)) {
        line++;
        row[strcspn(row, "\r\n")] = '\0';
        if (line == 1) {
            c_shape = kw_col(row, "shape");
            c_meas = kw_col(row, "measured_us");
            c_knobs = kw_col(row, "knobs");
            if (c_shape < 0 || c_meas < 0 || c_knobs < 0)
                rc = kw_error_set(KW_EINPUT, "%s:1: no shape, measured_us and knobs columns", path);
            continue;
        }
        snprintf(copy, sizeof copy, "%s", row);
        const char *sh = kw_field(copy, c_shape);
        if (!sh || strcmp(sh, shape) != 0)
            continue;
        if (*n >= KW_B_MAX_MAPPINGS) {
            rc = kw_error_set(KW_EINPUT, "%s:%d: more than %d rows of shape %s", path, line,
                              KW_B_MAX_MAPPINGS, shape);
            break;
        }
        snprintf(copy, sizeof copy, "%s", row);
        const char *m = kw_field(copy, c_meas);
        char *end = NULL;
        double v = m ? strtod(m, &end) : 0.0;
        if (!m || end == m || *end != '\0') {
            rc = kw_error_set(KW_EINPUT, "%s:%d: measured_us is not a number", path, line);
            break;
        }
        snprintf(copy, sizeof copy, "%s", row);
        char *k = (char *)kw_field(copy, c_knobs);
        for (char *p = k; p && *p; p++)
            if (*p == ';')
                *p = ' ';
        if (!k || kw_knobs_cand_parse(&cand[*n], ks, k) != 0) {
            rc = kw_error_set(KW_EINPUT, "%s:%d: knobs: %s", path, line,
                              k ? kw_error_last() : "missing");
            break;
        }
        meas[(*n)++] = v;
    }
    fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"knobwise", required_argument, 0, 'k'}, {"worker", required_argument, 0, 'w'},
        {"space", required_argument, 0, 's'},    {"mappings", required_argument, 0, 'n'},
        {"seed", required_argument, 0, 'e'},     {"warmup", required_argument, 0, 'u'},
        {"reps", required_argument, 0, 'r'},     {"recheck", required_argument, 0, 'c'},
        {"shape", required_argument, 0, 'S'},    {"median", no_argument, 0, 'M'},
        {"csv", required_argument, 0, 'C'},      {"ab-rounds", required_argument, 0, 'R'},
        {"top", required_argument, 0, 'T'},      {"accel", required_argument, 0, 'A'},
        {"from-csv", required_argument, 0, 'F'},
        {0, 0, 0, 0}};
    const char *kwbin = "./knobwise", *worker = "./knobwise-worker", *space = NULL, *only = NULL;
    const char *csv_path = NULL; /* every mapping's prediction and measurement, for calibration */
    const char *accel = NULL;    /* another accelerator file for the predictions */
    const char *from_csv = NULL; /* the mappings and first measurements from a --csv file */
    long n_map = 200, seed = 1, warmup = 2, reps = 7, recheck = 15, ab_rounds = 7, top = 3;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'k': kwbin = optarg; break;
        case 'w': worker = optarg; break;
        case 's': space = optarg; break;
        case 'n': n_map = atol(optarg); break;
        case 'e': seed = atol(optarg); break;
        case 'u': warmup = atol(optarg); break;
        case 'r': reps = atol(optarg); break;
        case 'c': recheck = atol(optarg); break;
        case 'S': only = optarg; break;
        case 'M': kw_use_median = 1; break;
        case 'C': csv_path = optarg; break;
        case 'R': ab_rounds = atol(optarg); break;
        case 'T': top = atol(optarg); break;
        case 'A': accel = optarg; break;
        case 'F': from_csv = optarg; break;
        default: return 2;
        }
    }
    if (!space || n_map < 3 || n_map > KW_B_MAX_MAPPINGS || reps < 1 || recheck < 1 ||
        ab_rounds < 1 || ab_rounds > KW_B_AB_MAX || top < 1 || top > KW_B_TOP_MAX) {
        fprintf(stderr, "usage: model_vs_measured --space F [--knobwise BIN] [--worker BIN] "
                        "[--mappings N<=%d] [--seed N] [--warmup W] [--reps R] [--recheck R] "
                        "[--ab-rounds R<=%d] [--top T<=%d] [--shape S] [--median] [--csv F] "
                        "[--accel A] [--from-csv F]\n",
                KW_B_MAX_MAPPINGS, KW_B_AB_MAX, KW_B_TOP_MAX);
        return 2;
    }
    gsl_set_error_handler_off();
    signal(SIGPIPE, SIG_IGN);
    kw_config *cfg;
    if (kw_load_config(&cfg, space, NULL, NULL) != 0) {
        fprintf(stderr, "%s\n", kw_error_last());
        return 2;
    }
    const kw_knobspace *ks = &cfg->space.knobs;
    static kw_cand cand[KW_B_MAX_MAPPINGS];
    static double pred[KW_B_MAX_MAPPINGS], meas[KW_B_MAX_MAPPINGS], fb[KW_B_MAX_MAPPINGS], x[KW_B_MAX_MAPPINGS],
        y[KW_B_MAX_MAPPINGS], work[2 * KW_B_MAX_MAPPINGS];
    static char ans[KW_B_LINE], line[KW_B_LINE], knobs[KW_B_LINE / 2], head[KW_B_LINE / 4];
    uint64_t size = kw_knobs_size(ks);
    if ((uint64_t)n_map > size)
        n_map = (long)size;
    if (from_csv)
        printf("space %s: %d knobs, %llu configurations; the mappings and first measurements of %s, "
               "predicted with %s\n",
               cfg->space.name, ks->n_knobs, (unsigned long long)size, from_csv,
               accel ? accel : "the space's accelerator file");
    else
        printf("space %s: %d knobs, %llu configurations; %ld random mappings per shape (seed %ld), "
               "each measured as the %s of %ld samples after %ld warm-up runs\n",
               cfg->space.name, ks->n_knobs, (unsigned long long)size, n_map, seed,
               kw_use_median ? "median" : "minimum", reps, warmup);
    printf("%-24s %5s %9s %9s %12s %12s %9s\n", "shape", "n", "spearman", "regret%",
           "pick_us", "best_us", "wall_s");
    int status = 0;
    FILE *csv = NULL;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            fprintf(stderr, "%s: %s\n", csv_path, strerror(errno));
            return 2;
        }
        fprintf(csv, "shape,config_id,predicted_us,measured_us,knobs\n");
    }
    for (int si = 0; si < cfg->space.n_shapes; si++) {
        const kw_shape *s = &cfg->workload.shapes[cfg->space.shapes[si]];
        if (only && strcmp(only, s->name) != 0)
            continue;
        double t0 = kw_now_s(), load0[1] = {NAN}, load1[1] = {NAN};
        if (getloadavg(load0, 1) != 1)
            load0[0] = NAN;
        long n = 0;
        if (from_csv) {
            if (kw_read_rows(from_csv, ks, s->name, cand, meas, &n) != 0) {
                fprintf(stderr, "%s\n", kw_error_last());
                return 2;
            }
            if (n == 0)
                continue;
        }
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(r, (unsigned long)seed + si);
        while (!from_csv && n < n_map) {
            kw_cand cc;
            kw_knobs_cand_baseline(&cc, ks);
            for (int k = 0; k < ks->n_knobs; k++)
                cc.v[k] = (int)gsl_rng_uniform_int(r, (unsigned long)ks->knobs[k].n_values);
            if (kw_knobs_cand_violates(ks, &cc) >= 0)
                continue;
            uint64_t id = kw_knobs_cand_id(ks, &cc);
            int dup = 0;
            for (long i = 0; i < n && !dup; i++)
                dup = kw_knobs_cand_id(ks, &cand[i]) == id;
            if (!dup)
                cand[n++] = cc;
        }
        gsl_rng_free(r);
        /* the model: knobwise eval --stdin, one line in, one row out */
        kw_child ev;
        char *eargv[] = {(char *)kwbin, "eval", "--space", (char *)space, "--stdin",
                         accel ? "--accel" : NULL, (char *)accel, NULL};
        if (kw_spawn(&ev, eargv) != 0 || !fgets(line, sizeof line, ev.from)) {
            fprintf(stderr, "cannot start %s eval --stdin\n", kwbin);
            return 1;
        }
        int col_lat = kw_col(line, "latency_us"), col_id = kw_col(line, "config_id");
        int col_fb = kw_col(line, "fallback_pct");
        for (long i = 0; i < n; i++) {
            kw_knob_tokens(knobs, sizeof knobs, ks, &cand[i], "", " ");
            snprintf(line, sizeof line, "%s %s", s->name, knobs);
            if (kw_ask(&ev, line, ans) != 0) {
                fprintf(stderr, "eval --stdin stopped\n");
                return 1;
            }
            char copy[KW_B_LINE];
            snprintf(copy, sizeof copy, "%s", ans);
            const char *idf = kw_field(copy, col_id);
            snprintf(copy, sizeof copy, "%s", ans);
            const char *lat = kw_field(copy, col_lat);
            pred[i] = idf && strcmp(idf, "error") != 0 && lat ? atof(lat) : -1.0;
            snprintf(copy, sizeof copy, "%s", ans);
            const char *fbf = kw_field(copy, col_fb);
            fb[i] = fbf ? atof(fbf) : 0.0;
        }
        kw_reap(&ev, NULL);
        /* the measurement: the shipped worker */
        kw_child wk;
        char *wargv[] = {(char *)worker, NULL};
        if (kw_spawn(&wk, wargv) != 0 || kw_ask(&wk, "hello protocol=1", ans) != 0 ||
            strncmp(ans, "ready protocol=1", 16) != 0) {
            fprintf(stderr, "cannot start the worker %s\n", worker);
            return 1;
        }
        kw_request_head(head, sizeof head, cfg, s);
        long rid = 0, ok = 0, failed = 0;
        for (long i = 0; !from_csv && i < n; i++) {
            meas[i] = kw_measure(&wk, &rid, head, ks, &cand[i], (int)warmup, (int)reps, ans);
            if (meas[i] < 0.0) {
                failed++;
                if (failed == 1)
                    fprintf(stderr, "%s: worker: %s\n", s->name, ans);
            }
        }
        long ipick = -1, ibest = -1;
        for (long i = 0; i < n; i++) {
            if (pred[i] < 0.0 || meas[i] < 0.0)
                continue;
            x[ok] = pred[i];
            y[ok] = meas[i];
            ok++;
            if (ipick < 0 || pred[i] < pred[ipick])
                ipick = i;
            if (ibest < 0 || meas[i] < meas[ibest])
                ibest = i;
        }
        if (ok < 3) {
            printf("%-24s %5ld  too few mappings both evaluated (%ld failed)\n", s->name, ok, failed);
            status = 1;
            kw_reap(&wk, "quit");
            continue;
        }
        double rho = gsl_stats_spearman(x, 1, y, 1, (size_t)ok, work);
        /* regret: the model's pick and the top measured-fastest mappings re-measured
         * in interleaved rounds; the reference is the best of the top by median */
        long sel[KW_B_TOP_MAX + 1];
        int n_sel = 0, at_pick = -1;
        for (int t = 0; t < top; t++) {
            long b = -1;
            for (long i = 0; i < n; i++) {
                int taken = 0;
                for (int u = 0; u < n_sel; u++)
                    taken |= sel[u] == i;
                if (!taken && pred[i] >= 0.0 && meas[i] >= 0.0 && (b < 0 || meas[i] < meas[b]))
                    b = i;
            }
            if (b < 0)
                break;
            if (b == ipick)
                at_pick = n_sel;
            sel[n_sel++] = b;
        }
        int n_top = n_sel;
        if (at_pick < 0) {
            at_pick = n_sel;
            sel[n_sel++] = ipick;
        }
        static double ab[KW_B_TOP_MAX + 1][KW_B_AB_MAX], tmp[KW_B_AB_MAX];
        for (int k = 0; k < ab_rounds; k++)
            for (int u = 0; u < n_sel; u++) {
                int j = (u + k) % n_sel;
                ab[j][k] = kw_measure(&wk, &rid, head, ks, &cand[sel[j]], (int)warmup, (int)recheck, ans);
            }
        kw_reap(&wk, "quit");
        int iref = 0;
        double ref_med = INFINITY;
        for (int u = 0; u < n_top; u++) {
            memcpy(tmp, ab[u], (size_t)ab_rounds * sizeof *tmp);
            double lo, hi, m = kw_median_ci(tmp, (size_t)ab_rounds, &lo, &hi);
            if (m < ref_med) {
                ref_med = m;
                iref = u;
            }
        }
        size_t n_pair = 0; /* rounds where both were measured (a failed re-measure is left out) */
        for (int k = 0; k < ab_rounds; k++)
            if (ab[iref][k] > 0.0 && ab[at_pick][k] > 0.0)
                tmp[n_pair++] = (ab[at_pick][k] / ab[iref][k] - 1.0) * 100.0;
        double rlo = NAN, rhi = NAN, regret = n_pair ? kw_median_ci(tmp, n_pair, &rlo, &rhi) : NAN;
        memcpy(tmp, ab[at_pick], (size_t)ab_rounds * sizeof *tmp);
        double dlo, dhi, mp = kw_median_ci(tmp, (size_t)ab_rounds, &dlo, &dhi), mb = ref_med;
        if (getloadavg(load1, 1) != 1)
            load1[0] = NAN;
        printf("%-24s %5ld %9.3f %9.1f %12.1f %12.1f %9.1f\n", s->name, ok, rho, regret, mp, mb,
               kw_now_s() - t0);
        printf("  regret %.1f%%, 95%% interval [%.1f%%, %.1f%%] over %ld interleaved rounds of %ld "
               "samples (paired pick / reference per round, %zu usable; the reference the best of the %d "
               "measured fastest, re-measured); load average %.1f before, %.1f after\n",
               regret, rlo, rhi, ab_rounds, recheck, n_pair, n_top, load0[0], load1[0]);
        kw_knobs_cand_format(line, 4096, ks, &cand[ipick]);
        printf("  model's pick:  %s (predicted %.1f us, first measured %.1f us)\n", line, pred[ipick],
               meas[ipick]);
        kw_knobs_cand_format(line, 4096, ks, &cand[ibest]);
        printf("  measured best: %s (predicted %.1f us, first measured %.1f us)\n", line, pred[ibest],
               meas[ibest]);
        kw_knobs_cand_format(line, 4096, ks, &cand[sel[iref]]);
        printf("  reference:     %s (predicted %.1f us, first measured %.1f us, re-measured %.1f us)\n",
               line, pred[sel[iref]], meas[sel[iref]], mb);
        if (failed)
            printf("  %ld mappings the worker refused or failed\n", failed);
        /* Diagnostics, labelled as such: the same correlation within subsets that
         * isolate one known disagreement (the model's generic-kernel fallback;
         * threads, which a loaded machine punishes). */
        int kc = kw_knobs_find(ks, "cores_per_request");
        for (int sub = 0; sub < 3; sub++) {
            long m2 = 0;
            for (long i = 0; i < n; i++) {
                if (pred[i] < 0.0 || meas[i] < 0.0 || fb[i] > 0.0)
                    continue;
                if (sub >= 1 && kc >= 0 && strcmp(ks->knobs[kc].values[cand[i].v[kc]], sub == 1 ? "1" : "2") != 0)
                    continue;
                x[m2] = pred[i];
                y[m2] = meas[i];
                m2++;
            }
            if (m2 >= 3)
                printf("  diagnostic: spearman %.3f over the %ld mappings %s\n",
                       gsl_stats_spearman(x, 1, y, 1, (size_t)m2, work), m2,
                       sub == 0 ? "the model does not send to its fallback kernel"
                                : sub == 1 ? "without fallback, 1 thread" : "without fallback, 2 threads");
        }
        for (long i = 0; csv && i < n; i++) {
            kw_knob_tokens(knobs, sizeof knobs, ks, &cand[i], "", ";");
            fprintf(csv, "%s,%016llx,%.3f,%.3f,%s\n", s->name,
                    (unsigned long long)kw_knobs_cand_id(ks, &cand[i]), pred[i], meas[i], knobs);
        }
        fflush(stdout);
    }
    if (csv && fclose(csv) != 0)
        status = 1;
    kw_load_config_free(cfg);
    return status;
}
