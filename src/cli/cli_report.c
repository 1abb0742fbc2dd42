/* cli_report.c - `knobwise report RUN [-o report.html]`: the run as one
 * self-contained HTML file (kw_report.h). The portability heat map needs the
 * winners re-evaluated on every shape, so the run's inputs are loaded; when
 * they are gone or changed the report is written without it and says why. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_cli.h"
#include "kw_eval.h"
#include "kw_evidence.h"
#include "kw_report.h"
#include "kw_results.h"
#include "kw_rundir.h"
#include "kw_runfolder.h"

static void kw_report_help(void)
{
    printf("usage: knobwise report RUN_DIR [-o FILE [--force]] [--no-portability]\n"
           "                      [--space F] [--accel F] [--workload F]\n\n"
           "Writes one self-contained HTML file (default RUN_DIR/report.html) with SVG\n"
           "plots, per shape: the mapping to deploy (every knob, changed ones marked),\n"
           "the net path as a waterfall (one bar per shipped one-knob step), the\n"
           "convergence against evaluations, the latency distribution (CDF of the\n"
           "simulated requests of baseline and recommendation, re-simulated with the\n"
           "run's inputs), the sensitivity to each knob, the effect by knob family,\n"
           "the guard table and rollback; and the portability heat map. Offline: no\n"
           "script, no external resource. --no-portability skips the re-evaluations\n"
           "(heat map and distributions).\n"
           "-o FILE must be a new file name, or with --force an existing report that\n"
           "report wrote (any other file may be another run's input and is kept);\n"
           "a folder, device, FIFO, symbolic link or one of the run's own files is\n"
           "refused (exit 2) before anything is written; so, without -o, is a run\n"
           "folder you cannot write. -o - writes the HTML to standard output.\n");
}

int kw_cli_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'},     {"no-portability", no_argument, 0, 'n'},
        {"space", required_argument, 0, 's'},   {"accel", required_argument, 0, 'a'},
        {"workload", required_argument, 0, 'w'}, {"help", no_argument, 0, 'h'},
        {"force", no_argument, 0, 'f'},         {0, 0, 0, 0}};
    const char *out_path = NULL;
    int no_port = 0, force = 0, o;
    kw_rundir_opts ro = {.flags = KW_RUNDIR_CONFIG};
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (o) {
        case 'o': out_path = optarg; break;
        case 'n': no_port = 1; break;
        case 'f': force = 1; break;
        case 's': ro.space = optarg; break;
        case 'a': ro.accel = optarg; break;
        case 'w': ro.workload = optarg; break;
        case 'h': kw_report_help(); return 0;
        default: return kw_cli_usage_error("report", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return kw_cli_usage_error("report", "give exactly one run folder");
    const char *dir = argv[optind];
    /* the output is checked before the run is even read: nothing is computed
     * for a path that would be refused, nothing is written over the run */
    char odir[KW_PATH_MAX], name[KW_PATH_MAX];
    int to_stdout = out_path && strcmp(out_path, KW_CLI_STDOUT) == 0;
    if (to_stdout && force)
        return kw_cli_usage_error("report", "--force replaces a file; -o - writes standard output");
    if (to_stdout) {
        odir[0] = name[0] = '\0'; /* nothing is checked: nothing is replaced */
    } else if (out_path) {
        kw_runfolder_reads reads = {ro.space, ro.accel, ro.workload, {NULL, NULL}, {NULL, NULL}};
        static const kw_runfolder_verb who = {"report", KW_REPORT_MARK, KW_RUNFOLDER_REPORT_HTML};
        int orc = kw_runfolder_output(odir, sizeof odir, name, sizeof name, out_path, dir, &reads,
                                      &who, force);
        if (orc != 0)
            return kw_cli_fail("report", orc);
    } else if (kw_runfolder_own_file(odir, sizeof odir, name, sizeof name, dir,
                                     KW_RUNFOLDER_REPORT_HTML) != 0) {
        return kw_cli_fail("report", KW_EINPUT);
    }
    /* inputs gone or unreadable: the report without portability is still
     * worth having; a folder that is no run is one error, said once */
    ro.flags = no_port ? 0 : KW_RUNDIR_CONFIG | KW_RUNDIR_INPUTS_OPTIONAL;
    kw_rundir *r = NULL;
    int rc = kw_run_open(&r, dir, &ro);
    if (rc != 0)
        return kw_cli_fail("report", rc);
    /* results.xml read once (kw_results_read): its re-checks (the headline
     * figures, rollback ceilings and criteria are the file's) and the
     * shapes' unresolved rankings, as recommend reads them */
    char **notes = NULL;
    kw_results_want w = {.load = r->rs, .notes = &notes};
    if ((rc = kw_results_read(&w, r->dir)) != 0) {
        kw_results_ranking_free(notes, r->rs->n_shapes);
        kw_rundir_free(r);
        return kw_cli_fail("report", rc);
    }
    if (r->inputs_missing) {
        fprintf(stderr, "knobwise report: %s; writing the report without portability\n",
                r->inputs_msg);
        no_port = 1;
    }
    int status = 0;
    /* a finished search whose evidence was cut is said on the page (until
     * 2026-12-07 it read as a finished run): recommend's rule */
    char why[128];
    if (r->j->complete && !r->in_progress && kw_rundir_evidence_missing(why, sizeof why, r) == 1)
        snprintf(r->rs->info.evidence_missing, sizeof r->rs->info.evidence_missing, "%s", why);
    if (!no_port && r->rs->info.measured) {
        /* a measured run's portability is its journal's: nothing is measured
         * or modelled here (kw_evidence_portability_journal) */
        if ((rc = kw_evidence_portability_journal(r->rs)) != 0) {
            status = kw_cli_fail("report", rc);
            goto done;
        }
    } else if (!no_port) {
        const kw_evaluator *ev;
        if (r->inputs_changed)
            fprintf(stderr, "knobwise report: %s; writing the report without portability\n",
                    r->inputs_msg);
        else if ((rc = kw_rundir_evaluator(&ev, r)) != 0 || (rc = kw_evidence_portability(r->rs, ev, NULL)) != 0) {
            status = kw_cli_fail("report", rc);
            goto done;
        }
    }
    /* The latency distributions of each shape's baseline and recommendation:
     * re-simulated with the run's inputs (the journal keeps percentiles, not
     * requests), so only when the portability evaluator is there: never on
     * a measured run, whose journal has no model's distribution. */
    int ns = r->rs->n_shapes;
    kw_report_dist *dists = calloc((size_t)(2 * (ns > 0 ? ns : 1)), sizeof *dists);
    double **samples = calloc((size_t)(2 * (ns > 0 ? ns : 1)), sizeof *samples);
    if (!dists || !samples) {
        free(dists);
        free(samples);
        status = kw_cli_fail("report", kw_error_set(KW_ENOMEM, "out of memory for the report"));
        goto done;
    }
    kw_report_lat lat = {dists, dists + ns};
    for (int i = 0; r->me && i < ns && rc == 0; i++) {
        const kw_rs_shape *s = &r->rs->shapes[i];
        int es = kw_rundir_cfg_shape(r, s->name);
        if (es < 0 || s->baseline < 0 || s->final < 0)
            continue;
        for (int k = 0; k < 2 && rc == 0; k++) {
            const kw_cand *c = &s->configs[k ? s->final : s->baseline].cand;
            int n = 0;
            rc = kw_eval_latencies(&samples[k * ns + i], &n, r->me, c, es);
            dists[k * ns + i] = (kw_report_dist){n, samples[k * ns + i]};
        }
    }
    kw_sbuf b = {0};
    if (rc == 0)
        rc = kw_report_html_notes(&b, r->rs, r->me ? &lat : NULL, notes);
    for (int i = 0; i < 2 * ns; i++)
        free(samples[i]);
    free(samples);
    free(dists);
    if (rc != 0) {
        kw_sbuf_free(&b);
        status = kw_cli_fail("report", rc);
        goto done;
    }
    if (to_stdout) {
        status = kw_cli_stdout("report", kw_sbuf_cstr(&b), b.len);
        kw_sbuf_free(&b);
        goto done;
    }
    kw_outfile f = {name, kw_sbuf_cstr(&b), b.len};
    rc = kw_results_commit(odir, &f, 1);
    kw_sbuf_free(&b);
    if (rc != 0)
        status = kw_cli_fail("report", rc);
    else
        printf("wrote %s/%s\n", odir, name);
done:
    kw_results_ranking_free(notes, r->rs->n_shapes);
    kw_rundir_free(r);
    return status;
}
