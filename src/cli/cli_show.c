/* cli_show.c - `knobwise show`: what a space tunes, for people (text: knobs
 * with domain and baseline, constraints, guards, accelerator, shapes) and for
 * tools (csv, the output contract: kind,name,values,baseline with one knob row
 * per knob, values joined by '|', and one shape row per shape); with
 * --catalogue, the knob catalogue (cli_catalogue.c). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "kw_calib.h"
#include "kw_cli.h"
#include "kw_load_hier.h"
#include "kw_load.h"
#include "kw_shipped.h"

static void kw_show_help(void)
{
    printf("usage: knobwise show [--space F] [--accel F] [--workload F] [--format text|csv]\n"
           "                     [--catalogue]\n"
           "       knobwise show --list [--format text|csv]\n\n"
           "Print a space's knobs (domain, baseline), constraints, guards, its accelerator\n"
           "and its shapes. Without --space, the embedded default job.\n"
           "  --space F                 the space file (default: the embedded default)\n"
           "  --accel F, --workload F   use these files instead of the ones the space names\n"
           "  --format F                text (default) or csv: header kind,name,values,baseline;\n"
           "                            one 'knob' row per knob (values joined by '|') and one\n"
           "                            'shape' row per shape (values and baseline empty)\n"
           "  --catalogue               every knob the model understands: meaning, values and\n"
           "                            their meaning, which blocks use it (with --format csv:\n"
           "                            header knob,family,values,meaning,used_by,blocks)\n"
           "  --list                    the shipped spaces: --space NAME finds them when no\n"
           "                            file of that name exists\n");
}

static void kw_show_csv(const kw_config *c)
{
    const kw_knobspace *ks = &c->space.knobs;
    printf("kind,name,values,baseline\n");
    for (int i = 0; i < ks->n_knobs; i++) {
        const kw_knob *k = &ks->knobs[i];
        printf("knob,%s,", k->name);
        for (int v = 0; v < k->n_values; v++)
            printf("%s%s", v ? "|" : "", k->values[v]);
        printf(",%s\n", k->values[k->baseline]);
    }
    for (int i = 0; i < c->space.n_shapes; i++)
        printf("shape,%s,,\n", c->workload.shapes[c->space.shapes[i]].name);
}

/* the storage hierarchy, achievable rates and precision pairs,
 * printed only when the file declares them (old files show as before). */
static void kw_show_hier(const kw_accel *a)
{
    for (int i = 0; i < a->n_levels; i++) {
        const kw_level *l = &a->levels[i];
        char cap[64];
        if (l->kind == KW_LEVEL_SHARED)
            snprintf(cap, sizeof cap, "%g MiB", (double)l->bytes / (1024.0 * 1024.0));
        else
            snprintf(cap, sizeof cap, "%llu KiB per unit", (unsigned long long)(l->bytes / 1024));
        printf("  level     %s (%s): %s", l->name, kw_load_hier_level_kind_name(l->kind), cap);
        if (l->bw_bytes_per_s > 0)
            printf(", %g GB/s", l->bw_bytes_per_s / 1e9);
        printf("; holds%s%s%s\n", (l->holds & KW_HOLD_ACCUMULATORS) ? " accumulators" : "",
               (l->holds & KW_HOLD_SCORES) ? " scores" : "",
               (l->holds & KW_HOLD_OPERANDS) ? " operands" : "");
    }
    if (a->multicast_max > 1)
        printf("  multicast up to %d units share an operand tile\n", a->multicast_max);
    int any = a->dram_fraction > 0 || a->sync_matrix_fraction > 0 || a->special_ops_per_s > 0 ||
              a->softmax_hidden_set || a->kernel_fixed_us > 0 || a->gather_dram_fraction > 0 ||
              a->gather_fixed_us > 0;
    for (int p = 0; p < KW_PREC_COUNT; p++)
        any |= a->matrix_fraction[p] > 0;
    if (any) {
        printf("  rates     matrix");
        for (int p = 0, n = 0; p < KW_PREC_COUNT; p++)
            if (a->matrix_fraction[p] > 0)
                printf("%s %s %g", n++ ? "," : "", kw_prec_name((kw_prec)p), a->matrix_fraction[p]);
        if (a->sync_matrix_fraction > 0)
            printf("; sync mma %g", a->sync_matrix_fraction);
        if (a->dram_fraction > 0)
            printf("; DRAM %g", a->dram_fraction);
        if (a->special_ops_per_s > 0)
            printf("; special %g T/s", a->special_ops_per_s / 1e12);
        if (a->vector_ops_per_s > 0)
            printf("; vector %g T/s, %g per score", a->vector_ops_per_s / 1e12, a->softmax_vector_ops);
        if (a->softmax_hidden_set)
            printf("; softmax hidden serial %g, overlap %g", a->softmax_hidden_serial,
                   a->softmax_hidden_overlap);
        if (a->kernel_fixed_us > 0)
            printf("; kernel fixed %g us", a->kernel_fixed_us);
        if (a->gather_dram_fraction > 0)
            printf("; paged-KV gather DRAM %g", a->gather_dram_fraction);
        if (a->gather_fixed_us > 0)
            printf("; paged-KV gather fixed %g us", a->gather_fixed_us);
        printf("\n");
    }
    int n_prior = 0;
    for (int id = 0; id < KW_CAL_COUNT; id++)
        if (a->prior_class[id]) {
            printf("%s %s %c", n_prior++ ? "," : "  priors   ", kw_calib_param_name(id),
                   a->prior_class[id]);
            if (a->prior_width[id] > 0)
                printf(" width %g", a->prior_width[id]);
        }
    if (n_prior)
        printf(" (calibrate --prior file)\n");
    if (a->n_pairs > 0) {
        printf("  accumulate");
        for (int i = 0; i < a->n_pairs; i++)
            printf("%s %s->%s", i ? "," : "", kw_prec_name(a->pairs[i].input),
                   kw_prec_name(a->pairs[i].accum));
        printf("\n");
    }
}

static void kw_show_accel(const kw_accel *a, const char *path)
{
    printf("\naccelerator %s (%s)\n", a->name, path);
    printf("  compute   %d cores x %d units at %.2f GHz%s\n", a->cores, a->units_per_core,
           a->clock_ghz, a->sparsity_2_4 ? ", 2:4 sparsity" : "");
    printf("  peak      ");
    for (int p = 0; p < KW_PREC_COUNT; p++)
        printf("%s%s %g%s", p ? ", " : "", kw_prec_name((kw_prec)p), a->peak_flops[p] / 1e12,
               a->peak_flops[p] > 0 ? "" : " (unsupported)");
    printf(" TFLOP/s\n");
    printf("  memory    SRAM %llu KiB per unit, DRAM %g GB/s (bursts of %llu B, %g us latency)",
           (unsigned long long)(a->sram_bytes_per_unit / 1024), a->dram_bw_bytes_per_s / 1e9,
           (unsigned long long)a->dram_burst_bytes, a->dram_latency_us);
    if (a->sram_bw_bytes_per_s > 0)
        printf(", on-chip %g GB/s", a->sram_bw_bytes_per_s / 1e9);
    printf("\n  array     %dx%dx%d granule\n", a->array_m, a->array_n, a->array_k);
    printf("  launch    eager %g us; graph %g us + %g us per kernel\n", a->launch_eager_us,
           a->graph_fixed_us, a->graph_node_us);
    printf("  fallback  %g of peak; elementwise %g of DRAM bandwidth\n", a->fallback_efficiency,
           a->elementwise_efficiency);
    kw_show_hier(a);
    printf("  power     idle %g W, TDP %g W, %g pJ/FLOP, %g pJ/DRAM byte\n", a->idle_w, a->tdp_w,
           a->pj_per_flop, a->pj_per_dram_byte);
    printf("  thermal   ambient %g C, R %g C/W, tau %g s, shutdown %g C", a->t_ambient_c,
           a->r_th_c_per_w, a->tau_s, a->t_shutdown_c);
    for (int i = 0; i < a->n_throttle; i++)
        printf("%s%g C -> x%g", i ? ", " : "; throttle ", a->throttle[i].temp_c,
               a->throttle[i].clock_factor);
    printf("\n  source    %s\n", a->source);
}

static void kw_show_shapes(const kw_config *c)
{
    const kw_workload *w = &c->workload;
    printf("\nshapes (%d of workload %s, %s)\n", c->space.n_shapes, w->name, c->space.workload_path);
    printf("  %-32s %-8s %5s %7s %7s %7s %-8s %s\n", "name", "phase", "batch", "seq", "kv_len",
           "streams", "arrival", "rate");
    for (int i = 0; i < c->space.n_shapes; i++) {
        const kw_shape *s = &w->shapes[c->space.shapes[i]];
        char rate[64];
        if (s->arrival == KW_ARRIVAL_TRACE)
            snprintf(rate, sizeof rate, "trace %s", s->trace);
        else if (s->rate_per_s > 0)
            snprintf(rate, sizeof rate, "%g/s per stream", s->rate_per_s);
        else
            snprintf(rate, sizeof rate, "load %g", s->load);
        static const char *const arr[] = {"poisson", "bursty", "trace"};
        printf("  %-32s %-8s %5d %7d %7d %7d %-8s %s", s->name,
               s->phase == KW_PHASE_PREFILL ? "prefill" : "decode", s->batch, s->seq, s->kv_len,
               s->streams, arr[s->arrival], rate);
        if (s->arrival == KW_ARRIVAL_BURSTY)
            printf(" (x%g for %g ms, off %g ms)", s->burst_factor, s->burst_on_ms, s->burst_off_ms);
        printf("\n");
    }
}

static void kw_show_text(const kw_config *c)
{
    const kw_space *s = &c->space;
    const kw_knobspace *ks = &s->knobs;
    double size = 1.0;
    for (int i = 0; i < ks->n_knobs; i++)
        size *= ks->knobs[i].n_values;
    printf("space %s (%s), block %s\n", s->name, s->path, s->block);
    printf("inputs: space %s, accelerator %s, workload %s (FNV-1a)\n", c->input_hash[0],
           c->input_hash[1], c->input_hash[2]);
    printf("\nknobs (%d; %.4g configurations before constraints)\n", ks->n_knobs, size);
    printf("  %-24s %-16s %s\n", "name", "baseline", "domain");
    for (int i = 0; i < ks->n_knobs; i++) {
        const kw_knob *k = &ks->knobs[i];
        printf("  %-24s %-16s", k->name, k->values[k->baseline]);
        for (int v = 0; v < k->n_values; v++)
            printf(" %s", k->values[v]);
        printf("\n");
    }
    if (ks->n_constraints > 0) {
        printf("\nconstraints (a configuration is forbidden when every term holds)\n");
        for (int i = 0; i < ks->n_constraints; i++) {
            const kw_constraint *ct = &ks->constraints[i];
            printf("  %-32s", ct->name);
            for (int t = 0; t < ct->n_terms; t++) {
                const kw_knob *k = &ks->knobs[ct->terms[t].knob];
                printf("%s%s in {", t ? " and " : " ", k->name);
                int first = 1;
                for (int v = 0; v < k->n_values; v++)
                    if (ct->terms[t].mask & (1ULL << v)) {
                        printf("%s%s", first ? "" : " ", k->values[v]);
                        first = 0;
                    }
                printf("}");
            }
            printf("\n");
        }
    }
    const kw_guards *g = &s->guards;
    printf("\nguards: drift cos >= %g, rel RMS <= %g; throttled <= %g%%; fallback <= %g%%; "
           "long-window p99 drift <= %g%%; ",
           g->drift_min_cos, g->drift_max_rel_rms, g->max_throttle_pct, g->max_fallback_pct,
           g->max_long_window_drift_pct);
    if (g->sla_p99_us > 0)
        printf("SLA p99 <= %g us\n", g->sla_p99_us);
    else
        printf("no SLA\n");
    printf("tuning: min effect %g%%, alpha %g, noise %g%%, %d requests per evaluation, %d for "
           "the final check\n",
           s->min_effect_pct, s->alpha, s->noise_pct, s->sim_requests, s->final_requests);
    kw_show_accel(&c->accel, s->accel_path);
    kw_show_shapes(c);
}

/* --list: the shipped spaces `--space NAME` finds (kw_shipped.h). */
static int kw_show_list(int csv)
{
    char **names = NULL;
    int n = 0, rc = kw_shipped_list(&names, &n);
    if (rc != 0)
        return kw_cli_fail("show", rc);
    const char *dir = kw_shipped_datadir();
    if (n == 0) {
        fprintf(stderr, "knobwise show: no shipped spaces in %s/spaces (not installed? %s names "
                        "another data folder)\n",
                dir, KW_SHIPPED_ENV);
        return 1;
    }
    if (csv)
        printf("name,path\n");
    else
        printf("shipped spaces in %s/spaces (knobwise tune --space NAME):\n", dir);
    for (int i = 0; i < n; i++) {
        if (csv)
            printf("%s,%s/spaces/%s.xml\n", names[i], dir, names[i]);
        else
            printf("  %s\n", names[i]);
    }
    kw_shipped_list_free(names, n);
    return 0; /* a write error on stdout: main says so and exits 1 */
}

int kw_cli_show(int argc, char **argv)
{
    static const struct option opts[] = {
        {"space", required_argument, NULL, 's'},   {"accel", required_argument, NULL, 'a'},
        {"workload", required_argument, NULL, 'w'}, {"format", required_argument, NULL, 'f'},
        {"catalogue", no_argument, NULL, 'c'},     {"list", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int list = 0;
    const char *space = NULL, *accel = NULL, *workload = NULL, *format = "text";
    int catalogue = 0;
    opterr = 0;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        switch (ch) {
        case 's': space = optarg; break;
        case 'a': accel = optarg; break;
        case 'w': workload = optarg; break;
        case 'f': format = optarg; break;
        case 'c': catalogue = 1; break;
        case 'l': list = 1; break;
        case 'h': kw_show_help(); return 0;
        case ':': return kw_cli_usage_error("show", "option '%s' needs a value", argv[optind - 1]);
        default: return kw_cli_usage_error("show", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return kw_cli_usage_error("show", "unexpected argument '%s'", argv[optind]);
    if (strcmp(format, "text") != 0 && strcmp(format, "csv") != 0)
        return kw_cli_usage_error("show", "--format takes text or csv, not '%s'", format);
    if (list) {
        if (space || accel || workload)
            return kw_cli_usage_error("show", "--list takes no file options");
        return kw_show_list(strcmp(format, "csv") == 0);
    }
    kw_config *c = NULL;
    int st = kw_cli_load_config(&c, "show", space, accel, workload);
    if (st != 0)
        return st;
    if (catalogue)
        kw_cli_catalogue_show(c, strcmp(format, "csv") == 0);
    else if (strcmp(format, "csv") == 0)
        kw_show_csv(c);
    else
        kw_show_text(c);
    kw_load_config_free(c);
    return 0; /* a write error on stdout: main says so and exits 1 (it was exit 1, unsaid) */
}
