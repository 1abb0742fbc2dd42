/* cli_bisect.c - `knobwise bisect A B --shape S`: walk from configuration A
 * to configuration B one knob at a time through the evaluator and report each
 * knob's contribution to the change of p95 and of every other metric
 * (kw_audit_bisect); --orders K averages over K seeded orders and shows their
 * spread, which exposes knob interactions.
 *
 * A and B are each:
 *   FILE            knob=value words (any whitespace or newlines, '#' starts a
 *                   comment); knobs not named keep their baseline value
 *   RUN_DIR:ID      a configuration evaluated in a run (16 hex digits)
 *   RUN_DIR:best    the run's recommendation for --shape
 *   RUN_DIR:baseline, or just `baseline`: the space's baseline
 * Every side is resolved to knob=value text first, so A and B may come from
 * different runs as long as their knobs exist in the space used. The space is
 * --space/--accel/--workload, else the inputs of the first run named, else the
 * embedded default. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kw_audit.h"
#include "kw_cli.h"
#include "kw_eval.h"
#include "kw_hint.h"
#include "kw_input.h"
#include "kw_load.h"

/* A configuration file's size limit: one knob=value per line at most, lines of
 * at most 4096 bytes (below) for KW_KNOB_MAX knobs, comments aside; a larger
 * file is not a configuration (and /dev/zero-sized reads never end). */
#define KW_BISECT_CONFIG_MAX_BYTES ((uint64_t)1 << 20)
#include "kw_rundir.h"

static void kw_bisect_help(void)
{
    printf("usage: knobwise bisect A B --shape NAME [--orders K] [--seed N] [--format text|csv]\n"
           "                      [--space F] [--accel F] [--workload F] [--requests N]\n\n"
           "A and B: a file of knob=value words, RUN_DIR:ID, RUN_DIR:best, RUN_DIR:baseline\n"
           "or 'baseline'. Walks from A to B one knob at a time on shape NAME and prints\n"
           "each knob's contribution to the change of every metric; the contributions of\n"
           "each walk add up to B - A. --orders K (default 1: knob order) averages over K\n"
           "orders (the others seeded shuffles) and shows min..max: a wide spread means\n"
           "the knob interacts with another.\n"
           "--format csv: knob,from,to,metric,mean,min,max rows, then total rows.\n");
}

/* If ref is RUN_DIR:WHAT with RUN_DIR a folder holding a journal, split it. */
static int kw_split_runref(char *dir, size_t dlen, const char **what, const char *ref)
{
    const char *colon = strrchr(ref, ':');
    if (!colon || colon == ref)
        return 0;
    size_t n = (size_t)(colon - ref);
    if (n >= dlen)
        return 0;
    memcpy(dir, ref, n);
    dir[n] = '\0';
    char jp[KW_PATH_MAX + 16];
    snprintf(jp, sizeof jp, "%s/%s", dir, KW_RUNFOLDER_JOURNAL_NAME);
    struct stat st;
    if (stat(jp, &st) != 0)
        return 0;
    *what = colon + 1;
    return 1;
}

/* Resolve one side (a file, a run reference or `baseline`) to a candidate of ks. */
static int kw_resolve(kw_cand *out, const kw_knobspace *ks, const char *ref, const char *shape)
{
    char dir[KW_PATH_MAX];
    const char *what;
    kw_knobs_cand_baseline(out, ks);
    if (strcmp(ref, "baseline") == 0)
        return 0;
    if (kw_split_runref(dir, sizeof dir, &what, ref)) {
        kw_rundir *r = NULL;
        int rc = kw_run_open(&r, dir, NULL);
        if (rc != 0)
            return rc;
        const kw_runsum *rs = r->rs;
        const kw_cand *c = NULL;
        kw_cand base;
        kw_knobs_cand_baseline(&base, &rs->ks);
        if (strcmp(what, "baseline") == 0) {
            c = &base;
        } else if (strcmp(what, "best") == 0) {
            int s = shape ? kw_runsum_find_shape(rs, shape) : -1;
            int w = s >= 0 ? kw_runsum_winner(rs, s) : -1;
            if (w < 0) {
                /* say why: a shape the run did not tune, or one where nothing passed */
                int tuned = s >= 0 && rs->shapes[s].final >= 0;
                char guards[KW_GUARDS_LEN + 1] = "";
                if (tuned)
                    snprintf(guards, sizeof guards, "%s",
                             rs->shapes[s].configs[rs->shapes[s].final].m.guards);
                kw_rundir_free(r);
                if (tuned)
                    return kw_error_set(KW_EINPUT, "%s: no recommendation for shape '%s' in that "
                                        "run: it was tuned, but no configuration it evaluated "
                                        "passes the guards (the best evaluated fails %s): nothing "
                                        "to deploy, so no 'best' to bisect to", ref, shape, guards);
                return kw_error_set(KW_EINPUT, "%s: no recommendation for shape '%s' in that run%s",
                                    ref, shape ? shape : "?",
                                    s < 0 ? ": the run did not tune it" : "");
            }
            c = &rs->shapes[s].configs[w].cand;
        } else {
            char *end;
            unsigned long long id = strtoull(what, &end, 16);
            if (strlen(what) != 16 || *end != '\0') {
                kw_rundir_free(r);
                return kw_error_set(KW_EINPUT,
                                    "%s: '%s' is not a config id (16 hex digits), best or baseline",
                                    ref, what);
            }
            for (int s = 0; s < rs->n_shapes && !c; s++) {
                int i = kw_runsum_find_config(rs, s, (uint64_t)id);
                if (i >= 0)
                    c = &rs->shapes[s].configs[i].cand;
            }
            if (!c) {
                kw_rundir_free(r);
                return kw_error_set(KW_EINPUT, "%s: no configuration %s in that run", ref, what);
            }
        }
        /* through text, so a run made over another version of the space still maps by name */
        char text[KW_KNOB_MAX * (KW_NAME_MAX + KW_VALUE_LEN + 2)];
        kw_knobs_cand_format(text, sizeof text, &rs->ks, c);
        kw_rundir_free(r);
        rc = kw_knobs_cand_parse(out, ks, text);
        if (rc != 0)
            return kw_error_set(rc, "%s: %s", ref, kw_error_last());
        return 0;
    }
    /* the one safe open (kw_input_fopen): a FIFO would block, /dev/zero never ends */
    FILE *f = kw_input_fopen(ref, KW_BISECT_CONFIG_MAX_BYTES);
    if (!f)
        return kw_error_set(KW_EINPUT, "%s (a knob=value file, RUN_DIR:ID or baseline)",
                            kw_error_last());
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    long lineno = 0, set_at[KW_KNOB_MAX] = {0};
    int rc = 0;
    while (rc == 0 && (got = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (got > 4096) {
            rc = kw_error_set(KW_EINPUT, "%s:%ld: line too long", ref, lineno);
            break;
        }
        if (memchr(line, '\0', (size_t)got) != NULL) {
            rc = kw_error_set(KW_EINPUT, "%s:%ld: NUL byte: not a text file", ref, lineno);
            break;
        }
        line[strcspn(line, "#\r\n")] = '\0';
        if ((rc = kw_knobs_cand_apply(out, set_at, lineno, ks, line)) != 0)
            rc = kw_error_set(rc, "%s:%ld: %s", ref, lineno, kw_error_last());
    }
    if (rc == 0 && ferror(f))
        rc = kw_error_set(KW_EINPUT, "%s: read error", ref);
    free(line);
    fclose(f);
    if (rc == 0) {
        /* a configuration outside the space is bad input: name the line of its last term */
        int c = kw_knobs_cand_violates(ks, out);
        if (c >= 0) {
            long at = 0;
            for (int t = 0; t < ks->constraints[c].n_terms; t++) {
                int k = ks->constraints[c].terms[t].knob;
                if (k >= 0 && k < KW_KNOB_MAX && set_at[k] > at)
                    at = set_at[k];
            }
            rc = kw_error_set(KW_EINPUT, "%s:%ld: the configuration breaks constraint '%s'", ref,
                              at, ks->constraints[c].name);
        }
    }
    return rc;
}

/* d as a percentage of base with 2 decimals (1 for a share): exactly 0 as
 * "0.00%" (not "+0.00%" or a negative zero's "-0.0%"), and a change too
 * small for the decimals as "+<0.01%" rather than rounded to nothing. */
static void kw_pct_dec(char *buf, size_t len, double d, double base, int dec)
{
    if (!isfinite(d) || !isfinite(base) || base == 0) {
        snprintf(buf, len, "-");
        return;
    }
    double x = d / fabs(base) * 100.0, unit = dec == 1 ? 0.05 : 0.005;
    if (x == 0)
        snprintf(buf, len, "%.*f%%", dec, 0.0);
    else if (fabs(x) < unit)
        snprintf(buf, len, "%s<%s%%", x > 0 ? "+" : "-", dec == 1 ? "0.1" : "0.01");
    else
        snprintf(buf, len, "%+.*f%%", dec, x);
}

static void kw_pct(char *buf, size_t len, double d, double base)
{
    kw_pct_dec(buf, len, d, base, 2);
}

/* The widest line the table of every metric is laid out for: knob columns
 * go into blocks of as many as fit (the metric, A and B repeated in each),
 * so ten knobs no longer make 200-column lines that wrap on a terminal.
 * Fixed, not the terminal's width: the same inputs print the same text. */
#define KW_BISECT_TABLE_COLS 120

int kw_cli_bisect(int argc, char **argv)
{
    static const struct option opts[] = {
        {"shape", required_argument, 0, 'S'},   {"orders", required_argument, 0, 'o'},
        {"seed", required_argument, 0, 'e'},    {"format", required_argument, 0, 'f'},
        {"space", required_argument, 0, 's'},   {"accel", required_argument, 0, 'a'},
        {"workload", required_argument, 0, 'w'}, {"requests", required_argument, 0, 'r'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    const char *shape = NULL, *space = NULL, *accel = NULL, *workload = NULL;
    long orders = 1, seed = 1, requests = 0;
    int csv = 0, o;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'S': shape = optarg; break;
        case 'o':
            if (kw_cli_parse_long(&orders, "bisect", "--orders", optarg, 1, KW_BISECT_ORDERS_MAX))
                return 2;
            break;
        case 'e':
            if (kw_cli_parse_seed(&seed, "bisect", optarg))
                return 2;
            break;
        case 'r':
            if (kw_cli_parse_long(&requests, "bisect", "--requests", optarg, 100, 10000000))
                return 2;
            break;
        case 'f':
            if (strcmp(optarg, "csv") == 0)
                csv = 1;
            else if (strcmp(optarg, "text") != 0)
                return kw_cli_usage_error("bisect", "--format takes text or csv, not '%s'", optarg);
            break;
        case 's': space = optarg; break;
        case 'a': accel = optarg; break;
        case 'w': workload = optarg; break;
        case 'h': kw_bisect_help(); return 0;
        default: return kw_cli_usage_error("bisect", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        return kw_cli_usage_error("bisect", "give two configurations, A and B");
    if (!shape)
        return kw_cli_usage_error("bisect", "--shape is required");
    const char *ra = argv[optind], *rb = argv[optind + 1];
    /* '' names no file: checked first, as every verb's named inputs (kw_input_named) */
    if (kw_input_named(NULL, ra) != 0 || kw_input_named(NULL, rb) != 0)
        return kw_cli_fail("bisect", KW_EINPUT);

    int status = 0, rc;
    kw_rundir *run = NULL;
    kw_config *cfg = NULL;
    kw_model_eval *me = NULL;
    const kw_evaluator *ev = NULL;
    /* the space and evaluator: options, else the first run named, else the default */
    char dir[KW_PATH_MAX];
    const char *what;
    const char *runref = kw_split_runref(dir, sizeof dir, &what, ra) ? ra
                         : kw_split_runref(dir, sizeof dir, &what, rb) ? rb : NULL;
    if (runref && !space && !accel && !workload) {
        kw_split_runref(dir, sizeof dir, &what, runref);
        kw_rundir_opts ro = {.flags = KW_RUNDIR_CONFIG};
        /* --requests with a run: the run's inputs and model options at that
         * sample (until stop 43 the embedded default's inputs were loaded
         * instead, and a run of another space was bisected in the wrong one) */
        if ((rc = kw_run_open(&run, dir, &ro)) == 0 && requests > 0)
            run->mopts.sim_requests = (int)requests;
        if (rc != 0 || (rc = kw_rundir_evaluator(&ev, run)) != 0) {
            status = kw_cli_fail("bisect", rc);
            goto done;
        }
        cfg = NULL;
    } else {
        if ((status = kw_cli_load_config(&cfg, "bisect", space, accel, workload)) != 0)
            goto done;
        kw_model_opts mo = {.sim_requests = (int)requests, .drift = 1, .seed = 1};
        if ((rc = kw_eval_new(&me, cfg, &mo)) != 0) {
            status = kw_cli_fail("bisect", rc);
            goto done;
        }
        ev = kw_eval_iface(me);
    }
    const kw_config *c = run ? run->cfg : cfg;
    const kw_knobspace *ks = &c->space.knobs;
    kw_cand a, b;
    if ((rc = kw_resolve(&a, ks, ra, shape)) != 0 || (rc = kw_resolve(&b, ks, rb, shape)) != 0) {
        status = kw_cli_fail("bisect", rc);
        goto done;
    }
    int si = kw_load_config_shape(c, shape);
    if (si < 0) {
        char hint[1024];
        kw_hint_shape(hint, sizeof hint, c, shape);
        fprintf(stderr, "knobwise bisect: unknown shape '%s'%s\n", shape, hint);
        status = 2;
        goto done;
    }
    kw_bisect *r = malloc(sizeof *r);
    if (!r) {
        status = kw_cli_fail("bisect", kw_error_set(KW_ENOMEM, "out of memory"));
        goto done;
    }
    rc = kw_audit_bisect(r, ks, ev, si, &a, &b, (int)orders, (uint64_t)seed);
    if (rc != 0) {
        free(r);
        status = kw_cli_fail("bisect", rc);
        goto done;
    }
    int p95 = -1;
    for (int m = 0; m < ev->n_metrics; m++)
        if (strcmp(ev->metric_names[m], KW_METRIC_NAME(KW_M_P95_US)) == 0)
            p95 = m;
    if (csv) {
        printf("knob,from,to,metric,mean,min,max\n");
        for (int i = 0; i < r->n_knobs; i++) {
            const kw_knob *k = &ks->knobs[r->knobs[i]];
            for (int m = 0; m < r->n_metrics; m++)
                printf("%s,%s,%s,%s,%.6f,%.6f,%.6f\n", k->name, k->values[a.v[r->knobs[i]]],
                       k->values[b.v[r->knobs[i]]], ev->metric_names[m], r->mean[i][m],
                       r->min[i][m], r->max[i][m]);
        }
        for (int m = 0; m < r->n_metrics; m++)
            printf("total,,,%s,%.6f,%.6f,%.6f\n", ev->metric_names[m], r->b[m] - r->a[m],
                   r->b[m] - r->a[m], r->b[m] - r->a[m]);
        free(r);
        goto done;
    }
    printf("bisect on shape %s: A %016llx -> B %016llx\n  %d knob%s differ, %d order%s (seed %ld), "
           "%d evaluations\n",
           shape, (unsigned long long)kw_knobs_cand_id(ks, &a),
           (unsigned long long)kw_knobs_cand_id(ks, &b), r->n_knobs, r->n_knobs == 1 ? "" : "s",
           r->orders, r->orders == 1 ? "" : "s", seed, r->evals);
    printf("  guards: A %s, B %s\n", r->a_guards[0] ? r->a_guards : "pass",
           r->b_guards[0] ? r->b_guards : "pass");
    /* the sample every figure below comes from: a bursty shape's tail
     * differs a lot between the search's sample and the run's re-check
     * (recommend's headline), so it is said */
    int ms = -1;
    for (int m = 0; m < ev->n_metrics; m++)
        if (strcmp(ev->metric_names[m], KW_METRIC_NAME(KW_M_SAMPLES)) == 0)
            ms = m;
    if (ms >= 0 && isfinite(r->a[ms]) && r->a[ms] > 0) {
        int fin = run ? run->rs->limits.final_requests : 0;
        printf("  figures: each evaluation simulates %.0f requests%s", r->a[ms],
               requests ? " (--requests)" : " (the space's sample, the search's)");
        if (fin > 0 && fin != (int)r->a[ms])
            printf("; the run's re-check, which recommend leads with, used %d (--requests %d)", fin,
                   fin);
        printf("\n");
    }
    printf("\n");
    char pct[32];
    if (p95 >= 0) {
        double tot = r->b[p95] - r->a[p95];
        kw_pct(pct, sizeof pct, tot, r->a[p95]);
        printf("contribution to p95_us: A %.3f us -> B %.3f us (%+.3f us, %s)\n", r->a[p95],
               r->b[p95], tot, pct);
        printf("  %-24s %-28s %14s %9s %9s  %s\n", "knob", "A -> B", "contribution", "of A",
               "of change", r->orders > 1 ? "spread over orders [min .. max]" : "");
        for (int i = 0; i < r->n_knobs; i++) {
            const kw_knob *k = &ks->knobs[r->knobs[i]];
            char ab[80], share[32];
            snprintf(ab, sizeof ab, "%s -> %s", k->values[a.v[r->knobs[i]]],
                     k->values[b.v[r->knobs[i]]]);
            kw_pct(pct, sizeof pct, r->mean[i][p95], r->a[p95]);
            if (tot != 0)
                kw_pct_dec(share, sizeof share, r->mean[i][p95], tot, 1);
            else
                snprintf(share, sizeof share, "-");
            /* the share's sign: the knob's contribution against the change's
             * direction (kw_pct_dec takes |base|) */
            if (tot < 0 && share[0] == '+')
                share[0] = '-';
            else if (tot < 0 && share[0] == '-')
                share[0] = '+';
            printf("  %-24s %-28s %+11.3f us %9s %9s", k->name, ab, r->mean[i][p95], pct,
                   share[0] == '+' ? share + 1 : share);
            if (r->orders > 1)
                printf("  [%+.3f .. %+.3f]%s", r->min[i][p95], r->max[i][p95],
                       r->max[i][p95] - r->min[i][p95] > 1e-9 * (1 + fabs(r->a[p95]))
                           ? "  interacts"
                           : "");
            printf("\n");
        }
        printf("  %-24s %-28s %+11.3f us\n", "total", "", tot);
        /* the knobs whose contribution is below the minimum effect (the
         * run's, else the space's): "which knob caused the change" has them
         * apart; with several orders, by the largest magnitude over them */
        double min_eff = run ? run->rs->limits.min_effect_pct : c->space.min_effect_pct;
        if (min_eff > 0 && isfinite(r->a[p95]) && r->a[p95] != 0) {
            int n_small = 0;
            for (int i = 0; i < r->n_knobs; i++) {
                double big = fmax(fabs(r->min[i][p95]), fabs(r->max[i][p95]));
                big = fmax(big, fabs(r->mean[i][p95]));
                if (!(big / fabs(r->a[p95]) * 100.0 < min_eff))
                    continue;
                if (n_small++ == 0)
                    printf("  below the minimum effect (%.2f%% of A, %s) each: ", min_eff,
                           run ? "the run's" : "the space's");
                else
                    printf(", ");
                printf("%s", ks->knobs[r->knobs[i]].name);
            }
            if (n_small)
                printf("\n");
        }
        printf("\n");
    }
    printf("contribution to every metric (mean over orders; each column sums to B - A)\n");
    /* rows that moved: a metric equal at A and B with every contribution 0
     * (one the space does not produce, the sample size) is named once below */
    int n_same = 0;
    for (int i0 = 0; i0 < r->n_knobs;) {
        /* a block of knob columns, each as wide as its name (at least 14:
         * names cut at 14 bytes read "attn.double_bu" and "cores_per_requ") */
        int width = 2 + 18 + 2 * 13, i1 = i0;
        while (i1 < r->n_knobs) {
            int w = (int)strlen(ks->knobs[r->knobs[i1]].name);
            w = (w > 14 ? w : 14) + 1;
            if (i1 > i0 && width + w > KW_BISECT_TABLE_COLS)
                break;
            width += w;
            i1++;
        }
        if (i0 > 0)
            printf("\n");
        printf("  %-18s", "metric");
        printf(" %12s %12s", "A", "B");
        for (int i = i0; i < i1; i++)
            printf(" %14s", ks->knobs[r->knobs[i]].name);
        printf("\n");
        for (int m = 0; m < r->n_metrics; m++) {
            int moved = r->a[m] != r->b[m];
            for (int i = 0; i < r->n_knobs && !moved; i++)
                moved = r->mean[i][m] != 0;
            if (!moved)
                continue;
            printf("  %-18s %12.4f %12.4f", ev->metric_names[m], r->a[m], r->b[m]);
            for (int i = i0; i < i1; i++) {
                int w = (int)strlen(ks->knobs[r->knobs[i]].name);
                printf(" %+*.4f", w > 14 ? w : 14, r->mean[i][m]);
            }
            printf("\n");
        }
        i0 = i1;
    }
    int col = 0; /* the line's width so far, wrapped at KW_BISECT_TABLE_COLS */
    for (int m = 0; m < r->n_metrics; m++) {
        int moved = r->a[m] != r->b[m];
        for (int i = 0; i < r->n_knobs && !moved; i++)
            moved = r->mean[i][m] != 0;
        if (moved)
            continue;
        const char *name = ev->metric_names[m];
        if (n_same++ == 0)
            col = printf("\n  unchanged (equal at A and B, no knob moved them):");
        else
            col += printf(",");
        if (col + 1 + (int)strlen(name) + 1 > KW_BISECT_TABLE_COLS)
            col = printf("\n   ") - 1;
        col += printf(" %s", name);
    }
    if (n_same)
        printf("\n");
    free(r);
done:
    kw_eval_free(me);
    kw_load_config_free(cfg);
    kw_rundir_free(run);
    return status;
}
