/* cli_eval.c - `knobwise eval`: evaluate one configuration (baseline plus
 * --set overrides) on one or all shapes, for people (text, with --kernels the
 * per-kernel breakdown) or for tools (csv, the output contract's columns), or
 * as a stream protocol (--stdin) so another tuner drives the same evaluator
 * without paying a process start per evaluation. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_cli.h"
#include "kw_cost.h"
#include "kw_eval.h"
#include "kw_exec.h"
#include "kw_hint.h"
#include "kw_load.h"
#include "kw_mapping.h"
#include "kw_metric.h"
#include "kw_sbuf.h"

#define KW_EVAL_MAX_SET 64
/* Longest --stdin line: the worker protocol's line limit (README), far above
 * any real line (every knob of a 64-knob space set is ~2 KB). */
#define KW_EVAL_LINE_MAX 65536

/* The CSV header from the metric table: the contract's metric columns, the
 * guards, the columns eval adds after them, the bottleneck class. */
static void kw_eval_csv_header(FILE *f)
{
    fputs("shape,config_id", f);
    for (int i = 0; i < KW_M_COUNT; i++)
        if (kw_metric_table[i].csv == KW_METRIC_CSV_CONTRACT)
            fprintf(f, ",%s", kw_metric_table[i].name);
    fputs(",guards", f);
    for (int i = 0; i < KW_M_COUNT; i++)
        if (kw_metric_table[i].csv == KW_METRIC_CSV_EVAL)
            fprintf(f, ",%s", kw_metric_table[i].name);
    fputs(",bottleneck", f);
}

static void kw_eval_help(void)
{
    printf("usage: knobwise eval [--space F] [--accel F] [--workload F] [--shape NAME]...\n"
           "                     [--set knob=value]... [--format text|csv] [--kernels]\n"
           "                     [--requests N] [--seed N] [--thermal] [--no-contention] [--stdin]\n"
           "                     [--evaluator model|exec:CMD] [--timeout S]\n\n"
           "Evaluate the space's baseline with --set overrides on the named shapes (default: all).\n"
           "  --format csv   one row per shape:\n                 ");
    kw_eval_csv_header(stdout);
    printf("\n"
           "  --kernels      per-kernel breakdown (FLOPs, bytes, reuse, time, what bounds it)\n"
           "  --requests N   serving-simulation sample size (default: the space's sim_requests)\n"
           "  --thermal      also simulate the long thermal window\n"
           "  --no-contention  counterfactual: unlimited DRAM bandwidth between cores\n"
           "  --stdin        read lines 'SHAPE knob=value ...' and write one CSV row per line,\n"
           "                 flushed; a bad line gives a row whose config_id is 'error'\n"
           "  --evaluator E  model, or exec:CMD to measure stage 1 with a worker command\n"
           "                 (README: the worker protocol; default: the space's <evaluator>)\n"
           "  --timeout S    seconds a worker may take per candidate (default: the space's)\n");
}

/* One metric with the table's decimals, formatted as ranked.csv formats it. */
static void kw_eval_csv_num(FILE *f, const kw_metrics *m, int i)
{
    char t[64];
    kw_sbuf_fmt_num(t, sizeof t, m->v[i], kw_metric_table[i].decimals);
    fprintf(f, ",%s", t);
}

static void kw_eval_csv_row(FILE *f, const char *shape, uint64_t id, const kw_metrics *m)
{
    fprintf(f, "%s,%016llx", shape, (unsigned long long)id);
    for (int i = 0; i < KW_M_COUNT; i++)
        if (kw_metric_table[i].csv == KW_METRIC_CSV_CONTRACT)
            kw_eval_csv_num(f, m, i);
    fprintf(f, ",%s", m->guards[0] ? m->guards : "pass");
    /* Columns added after the contract's (results/formats.md: columns may be added at the end). */
    for (int i = 0; i < KW_M_COUNT; i++)
        if (kw_metric_table[i].csv == KW_METRIC_CSV_EVAL)
            kw_eval_csv_num(f, m, i);
    fprintf(f, ",%s\n", m->klass[0] ? m->klass : "-");
}

static void kw_eval_text(FILE *f, const char *shape, uint64_t id, const kw_metrics *m)
{
    const double *v = m->v;
    fprintf(f, "shape %s  config %016llx  bottleneck %s\n", shape, (unsigned long long)id,
            m->klass[0] ? m->klass : "-");
    fprintf(f, "  latency  p50 %10.1f us   p95 %10.1f us   p99 %10.1f us   p99.9 %10.1f us   mean %10.1f us\n",
            v[KW_M_P50_US], v[KW_M_P95_US], v[KW_M_P99_US], v[KW_M_P999_US], v[KW_M_MEAN_US]);
    if (v[KW_M_SAMPLES] > 0)
        fprintf(f, "  sample   %.0f requests; primary interval [%.1f, %.1f] us; queue-wait p95 %.1f us\n",
                v[KW_M_SAMPLES], v[KW_M_P_CI_LO_US], v[KW_M_P_CI_HI_US], v[KW_M_QUEUE_P95_US]);
    fprintf(f, "  request  alone %.1f us (launch %.1f us = %.0f%%), %d launches, %.2f MB DRAM, reuse %.1f\n",
            v[KW_M_LATENCY_US], v[KW_M_LAUNCH_US],
            v[KW_M_LATENCY_US] > 0 ? 100.0 * v[KW_M_LAUNCH_US] / v[KW_M_LATENCY_US] : 0.0,
            (int)v[KW_M_LAUNCHES], v[KW_M_DRAM_MB], v[KW_M_REUSE_RATIO]);
    if (v[KW_M_THROUGHPUT_RPS] > 0)
        fprintf(f, "  serving  %.1f req/s, fairness %.3f, core imbalance %.2f, DRAM contention %.1f%% of service\n",
                v[KW_M_THROUGHPUT_RPS], v[KW_M_FAIRNESS], v[KW_M_IMBALANCE], v[KW_M_CONTENTION_PCT]);
    if (v[KW_M_LONG_P99_US] > 0)
        fprintf(f, "  thermal  steady %.1f C, throttled %.1f%% of the window, long-window p99 %.1f us\n",
                v[KW_M_STEADY_TEMP_C], v[KW_M_THROTTLE_PCT], v[KW_M_LONG_P99_US]);
    fprintf(f, "  quality  cos %.6f  rel RMS %.3g  max abs %.3g   fallback kernels %.1f%%\n",
            v[KW_M_QUALITY_COS], v[KW_M_QUALITY_REL_RMS], v[KW_M_QUALITY_MAX_ABS],
            v[KW_M_FALLBACK_PCT]);
    if (strstr(m->guards, "drift") != NULL)
        fprintf(f, "  fallback %s\n",
                v[KW_M_DRIFT_FALLBACK] >= 0
                    ? kw_prec_name((kw_prec)(int)v[KW_M_DRIFT_FALLBACK])
                    : "none: no precision setting passes the drift budget for this shape");
    if (v[KW_M_ENERGY_MJ] > 0)
        fprintf(f, "  energy   %.3f mJ per request alone\n", v[KW_M_ENERGY_MJ]);
    fprintf(f, "  guards   %s\n", m->guards[0] ? m->guards : "pass");
}

static void kw_eval_kernels(FILE *f, const kw_cost *c)
{
    fprintf(f, "  %-20s %10s %10s %8s %10s %10s %9s %9s  %s\n", "kernel", "GFLOP", "DRAM MB",
            "reuse", "compute us", "memory us", "launch us", "time us", "bound");
    for (int i = 0; i < c->n_kernels; i++) {
        const kw_kernel *k = &c->kernels[i];
        fprintf(f, "  %-20s %10.3f %10.3f %8.1f %10.2f %10.2f %9.2f %9.2f  %s%s\n", k->name,
                k->flops / 1e9, k->dram_bytes / 1e6,
                k->dram_bytes > 0 ? k->operand_bytes / k->dram_bytes : 0.0, k->compute_us,
                k->memory_us, k->launch_us, k->time_us, kw_cost_bound_name(k->bound),
                k->fallback ? " (fallback)" : "");
    }
    fprintf(f, "  %-20s %10.3f %10.3f %8.1f %10s %10s %9.2f %9.2f  %s\n", "total", c->flops / 1e9,
            c->dram_bytes / 1e6, c->reuse_ratio, "", "", c->launch_us, c->latency_us,
            kw_cost_bound_name(c->bound));
    /* LLM serving (kw_moe.c, kw_tp.c): what the table's lines fold or hide */
    if (c->folded > 0)
        fprintf(f, "  folded kernels (per-expert GEMMs, TP overlap chunks): %d launches folded into the lines above (%d in all)\n",
                c->folded, c->launches);
    if (c->moe_dropped_frac > 0.0)
        fprintf(f, "  moe: %.2f%% of the routed token slots dropped over expert capacity\n",
                100.0 * c->moe_dropped_frac);
    if (c->comm_us > 0.0)
        fprintf(f, "  tensor parallel: all-reduce %.2f us of the %.2f us\n", c->comm_us,
                c->latency_us);
}

/* One CSV field per RFC 4180: as it is, or in double quotes (inner quotes
 * doubled) when it holds a comma, a quote or a line break. */
static void kw_eval_csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The error row of input line `lineno`: config_id "error", the message in the
 * guards column as "stdin:N: message" (quoted as needed), the other columns
 * empty, so a driver still gets exactly one row per line. */
static void kw_eval_error_row(const char *shape, long lineno, const char *msg)
{
    char text[KW_ERROR_MAX + 64];
    snprintf(text, sizeof text, "stdin:%ld: %s", lineno, msg);
    for (char *q = text; *q; q++)
        if (*q == '\n' || *q == '\r')
            *q = ' ';
    kw_eval_csv_field(stdout, shape);
    fputs(",error,,,,,,,,,,,", stdout);
    kw_eval_csv_field(stdout, text);
    /* the eval-only columns after the guards (the metric table's), then bottleneck */
    for (int i = 0; i < KW_M_COUNT; i++)
        if (kw_metric_table[i].csv == KW_METRIC_CSV_EVAL)
            fputc(',', stdout);
    fputs(",\n", stdout);
}

/* Read one line of at most KW_EVAL_LINE_MAX bytes into buf (NUL-terminated,
 * newline dropped). The rest of a longer line is read and dropped (memory
 * stays bounded); *too_long and *nul report what was seen. Returns 1 for a
 * line, 0 at the end of input, -1 on a read error. */
static int kw_eval_read_line(FILE *in, char *buf, size_t *len, int *too_long, int *nul)
{
    size_t n = 0;
    int c, any = 0;
    *too_long = *nul = 0;
    while ((c = getc_unlocked(in)) != EOF) {
        any = 1;
        if (c == '\n')
            break;
        if (c == '\0')
            *nul = 1;
        if (n < KW_EVAL_LINE_MAX)
            buf[n++] = (char)c;
        else
            *too_long = 1;
    }
    buf[n] = '\0';
    *len = n;
    if (c == EOF && ferror(in))
        return -1;
    return any ? 1 : 0;
}

static int kw_eval_stdin(const kw_config *cfg, const kw_evaluator *ev)
{
    char *line = malloc(KW_EVAL_LINE_MAX + 1);
    if (!line)
        return kw_cli_fail("eval", kw_error_set(KW_ENOMEM, "out of memory for the input line"));
    long lineno = 0;
    int status = 0;
    kw_eval_csv_header(stdout);
    putchar('\n');
    fflush(stdout);
    for (;;) {
        size_t len;
        int too_long, nul;
        int got = kw_eval_read_line(stdin, line, &len, &too_long, &nul);
        if (got < 0) {
            status = kw_cli_fail("eval", kw_error_set(KW_EIO, "stdin: read error after line %ld: %s",
                                                      lineno, strerror(errno)));
            break;
        }
        if (got == 0)
            break;
        lineno++;
        if (len && line[len - 1] == '\r')
            line[--len] = '\0';
        if (too_long) {
            char msg[128];
            snprintf(msg, sizeof msg, "line longer than %d bytes", KW_EVAL_LINE_MAX);
            kw_eval_error_row("", lineno, msg);
            fflush(stdout);
            continue;
        }
        if (nul) {
            kw_eval_error_row("", lineno, "NUL byte in the line");
            fflush(stdout);
            continue;
        }
        char *p = line + strspn(line, " \t");
        size_t sl = strcspn(p, " \t");
        char shape[KW_NAME_MAX];
        snprintf(shape, sizeof shape, "%.*s", (int)(sl < sizeof shape ? sl : sizeof shape - 1), p);
        if (*p == '\0') {
            kw_eval_error_row("", lineno, "empty line: expected SHAPE knob=value ...");
            fflush(stdout);
            continue;
        }
        int si = kw_load_config_shape(cfg, shape);
        kw_cand c;
        kw_metrics m;
        int rc = 0, broken = -1;
        long set_at[KW_KNOB_MAX] = {0};
        kw_knobs_cand_baseline(&c, &cfg->space.knobs);
        if (si < 0) {
            char hint[1024];
            kw_hint_shape(hint, sizeof hint, cfg, shape);
            rc = kw_error_set(KW_EINPUT, "unknown shape '%s'%s", shape, hint);
        }
        else if ((rc = kw_knobs_cand_apply(&c, set_at, 1, &cfg->space.knobs, p + sl)) == 0 &&
                 (broken = kw_knobs_cand_violates(&cfg->space.knobs, &c)) < 0)
            rc = ev->eval(ev->ctx, &c, si, 0, &m);
        if (rc == KW_ENOMEM || rc == KW_EIO) {
            /* not this line's fault: the stream cannot go on truthfully */
            status = kw_cli_fail("eval", kw_error_set(rc, "stdin:%ld: %s", lineno, kw_error_last()));
            break;
        }
        if (rc == 0 && broken >= 0) {
            memset(&m, 0, sizeof m);
            snprintf(m.guards, sizeof m.guards, "constraint:%s",
                     cfg->space.knobs.constraints[broken].name);
        }
        if (rc != 0)
            kw_eval_error_row(shape, lineno, kw_error_last());
        else
            kw_eval_csv_row(stdout, shape, kw_knobs_cand_id(&cfg->space.knobs, &c), &m);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            status = kw_cli_fail("eval", kw_error_set(KW_EIO, "stdout: write error after line %ld",
                                                      lineno));
            break;
        }
    }
    free(line);
    return status;
}

int kw_cli_eval(int argc, char **argv)
{
    static const struct option opts[] = {
        {"space", required_argument, 0, 's'},   {"accel", required_argument, 0, 'a'},
        {"workload", required_argument, 0, 'w'}, {"shape", required_argument, 0, 'S'},
        {"set", required_argument, 0, 'x'},     {"format", required_argument, 0, 'f'},
        {"kernels", no_argument, 0, 'k'},       {"stdin", no_argument, 0, 'i'},
        {"requests", required_argument, 0, 'r'}, {"seed", required_argument, 0, 'e'},
        {"thermal", no_argument, 0, 't'},       {"help", no_argument, 0, 'h'},
        {"no-contention", no_argument, 0, 'N'}, {"evaluator", required_argument, 0, 'E'},
        {"timeout", required_argument, 0, 'T'},
        {0, 0, 0, 0}};
    const char *evaluator = NULL;
    double timeout_s = 0;
    const char *space = NULL, *accel = NULL, *workload = NULL;
    const char *shapes[KW_SHAPE_MAX];
    const char *sets[KW_EVAL_MAX_SET];
    int n_shapes = 0, n_sets = 0, csv = 0, kernels = 0, from_stdin = 0, thermal = 0, nocont = 0;
    long requests = 0, seed = 1;
    int o;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 's': space = optarg; break;
        case 'a': accel = optarg; break;
        case 'w': workload = optarg; break;
        case 'S':
            if (n_shapes == KW_SHAPE_MAX)
                return kw_cli_usage_error("eval", "too many --shape options");
            shapes[n_shapes++] = optarg;
            break;
        case 'x':
            if (n_sets == KW_EVAL_MAX_SET)
                return kw_cli_usage_error("eval", "too many --set options");
            sets[n_sets++] = optarg;
            break;
        case 'f':
            if (strcmp(optarg, "csv") == 0)
                csv = 1;
            else if (strcmp(optarg, "text") == 0)
                csv = 0;
            else
                return kw_cli_usage_error("eval", "--format takes text or csv, not '%s'", optarg);
            break;
        case 'k': kernels = 1; break;
        case 'i': from_stdin = 1; break;
        case 't': thermal = 1; break;
        case 'N': nocont = 1; break;
        case 'E': evaluator = optarg; break;
        case 'T':
            if (kw_cli_parse_double(&timeout_s, "eval", "--timeout", optarg, 0.001, 1e6))
                return 2;
            break;
        case 'r':
            if (kw_cli_parse_long(&requests, "eval", "--requests", optarg, 100, 10000000))
                return 2;
            break;
        case 'e':
            if (kw_cli_parse_seed(&seed, "eval", optarg))
                return 2;
            break;
        case 'h': kw_eval_help(); return 0;
        default:
            return kw_cli_usage_error("eval", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return kw_cli_usage_error("eval", "unexpected argument '%s'", argv[optind]);

    kw_config *cfg = NULL;
    kw_model_eval *me = NULL;
    kw_exec *ex = NULL;
    const char *cmd = NULL;
    int status = kw_cli_load_config(&cfg, "eval", space, accel, workload);
    if (status != 0)
        return status;
    if (kw_exec_spec(&cmd, evaluator, &cfg->space) != 0) {
        kw_load_config_free(cfg);
        return kw_cli_usage_error("eval", "%s", kw_error_last());
    }
    kw_model_opts mo = {.sim_requests = (int)requests, .thermal = thermal, .drift = 1,
                        .seed = (uint64_t)seed, .no_contention = nocont};
    int rc = kw_eval_new(&me, cfg, &mo);
    if (rc != 0) {
        status = kw_cli_fail("eval", rc);
        goto done;
    }
    const kw_evaluator *ev = kw_eval_iface(me);
    if (cmd) {
        kw_exec_opts xo;
        kw_exec_opts_from_space(&xo, &cfg->space, cmd, timeout_s);
        char scales[4096];
        if ((rc = kw_exec_new(&ex, cfg, me, &xo)) != 0 ||
            (rc = kw_exec_calibrate(ex, &me, 1, NULL, scales, sizeof scales)) != 0) {
            status = kw_cli_fail("eval", rc);
            goto done;
        }
        ev = kw_exec_iface(ex);
    }
    if (from_stdin) {
        status = kw_eval_stdin(cfg, ev);
        goto done;
    }
    kw_cand c;
    long set_at[KW_KNOB_MAX] = {0}; /* every --set is "line 1": a repeat names no line */
    kw_knobs_cand_baseline(&c, &cfg->space.knobs);
    for (int i = 0; i < n_sets; i++) {
        if (sets[i][strspn(sets[i], " \t")] == '\0') { /* set nothing, and said nothing */
            status = kw_cli_usage_error("eval", "--set '%s' is not knob=value", sets[i]);
            goto done;
        }
        if ((rc = kw_knobs_cand_apply(&c, set_at, 1, &cfg->space.knobs, sets[i])) != 0) {
            fprintf(stderr, "knobwise eval: --set %s: %s\n", sets[i], kw_error_last());
            status = 2;
            goto done;
        }
    }
    int sel[KW_SHAPE_MAX], n_sel = 0;
    for (int i = 0; i < n_shapes; i++) {
        int si = kw_load_config_shape(cfg, shapes[i]);
        if (si < 0) {
            char hint[1024];
            kw_hint_shape(hint, sizeof hint, cfg, shapes[i]);
            fprintf(stderr, "knobwise eval: unknown shape '%s'%s\n", shapes[i], hint);
            status = 2;
            goto done;
        }
        sel[n_sel++] = si;
    }
    if (n_sel == 0)
        for (int i = 0; i < cfg->space.n_shapes; i++)
            sel[n_sel++] = i;
    int broken = kw_knobs_cand_violates(&cfg->space.knobs, &c);
    uint64_t id = kw_knobs_cand_id(&cfg->space.knobs, &c);
    if (csv) {
        kw_eval_csv_header(stdout);
        putchar('\n');
    }
    for (int i = 0; i < n_sel; i++) {
        const char *sname = ev->shape_names[sel[i]];
        kw_metrics m;
        if (broken >= 0) {
            memset(&m, 0, sizeof m);
            snprintf(m.guards, sizeof m.guards, "constraint:%s",
                     cfg->space.knobs.constraints[broken].name);
        } else if ((rc = ev->eval(ev->ctx, &c, sel[i], 0, &m)) != 0) {
            status = kw_cli_fail("eval", rc);
            goto done;
        }
        if (csv) {
            kw_eval_csv_row(stdout, sname, id, &m);
            continue;
        }
        kw_eval_text(stdout, sname, id, &m);
        if (ex && !m.guards[0])
            printf("  measured median %.3f us, 95%% interval [%.3f, %.3f] us, %.0f samples kept "
                   "(worker '%s'; the tail above is the serving simulation on it)\n",
                   m.v[KW_M_LATENCY_US], m.v[KW_X_MEASURED_LO_US], m.v[KW_X_MEASURED_HI_US],
                   m.v[KW_X_MEASURED_SAMPLES], kw_exec_worker_name(ex));
        if (kernels && broken < 0) {
            kw_cost cost;
            if ((rc = kw_eval_cost(&cost, me, &c, sel[i])) != 0) {
                status = kw_cli_fail("eval", rc);
                goto done;
            }
            kw_eval_kernels(stdout, &cost);
        }
        printf("\n");
    }
done:
    kw_exec_free(ex);
    kw_eval_free(me);
    kw_load_config_free(cfg);
    return status;
}
