/* cli_audit.c - `knobwise audit RUN [--shape S]`: for each shape, which knob
 * caused which change (kw_audit_render), read from the run's journal. The
 * reproducing `knobwise eval` lines carry the run's inputs and model options. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "kw_audit.h"
#include "kw_cli.h"
#include "kw_results.h"
#include "kw_rundir.h"

static void kw_audit_help(void)
{
    printf("usage: knobwise audit RUN_DIR [--shape NAME]... [--exploration]\n\n"
           "For each tuned shape (or the named ones): the exploration in one line\n"
           "(evaluations, steps, what it found), then the net path: the one-knob steps\n"
           "from the baseline to the recommendation as it ships, each with its effect\n"
           "on the primary metric, the cumulative effect, the bottleneck class before\n"
           "and after, the other metrics it moved and a `knobwise eval` line that\n"
           "reproduces it; the effect of moving each knob of the recommendation one\n"
           "value either way (knobs with no effect named); rejected steps counted by\n"
           "knob, and the knob behind the largest regression.\n\n"
           "  --exploration  also every step the search took (probes, excursions,\n"
           "                 reverts) and every rejected step under its knob\n\n"
           "Every step, one row each, is in RUN_DIR/audit.csv.\n");
}

int kw_cli_audit(int argc, char **argv)
{
    static const struct option opts[] = {{"shape", required_argument, 0, 'S'},
                                          {"exploration", no_argument, 0, 'x'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *shapes[KW_SHAPE_MAX];
    int n_shapes = 0, o, exploration = 0;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'S':
            if (n_shapes == KW_SHAPE_MAX)
                return kw_cli_usage_error("audit", "too many --shape options");
            shapes[n_shapes++] = optarg;
            break;
        case 'x': exploration = 1; break;
        case 'h': kw_audit_help(); return 0;
        default: return kw_cli_usage_error("audit", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return kw_cli_usage_error("audit", "give exactly one run folder");
    kw_rundir *r = NULL;
    kw_sbuf pb = {0}; /* the eval command's prefix */
    char **notes = NULL; /* the shapes' unresolved rankings (results.xml), as recommend reads them */
    int rc = kw_run_open(&r, argv[optind], NULL);
    if (rc != 0)
        return kw_cli_fail("audit", rc);
    const kw_runsum *rs = r->rs;
    int status = 0;
    int sel[KW_SHAPE_MAX], n_sel = 0;
    for (int i = 0; i < n_shapes; i++) {
        int s = kw_runsum_find_shape(rs, shapes[i]);
        if (s < 0) {
            fprintf(stderr, "knobwise audit: shape '%s' was not tuned in %s (tuned:", shapes[i],
                    argv[optind]);
            for (int k = 0; k < rs->n_shapes; k++)
                fprintf(stderr, " %s", rs->shapes[k].name);
            fprintf(stderr, ")\n");
            status = 2;
            goto done;
        }
        sel[n_sel++] = s;
    }
    if (n_sel == 0)
        for (int i = 0; i < rs->n_shapes && n_sel < KW_SHAPE_MAX; i++)
            sel[n_sel++] = i;
    kw_rundir_eval_prefix(&pb, r);
    if ((rc = kw_sbuf_status(&pb)) != 0) {
        status = kw_cli_fail("audit", rc);
        goto done;
    }
    const char *prefix = kw_sbuf_cstr(&pb);
    /* results.xml read once: its re-checks (the headline figures) and the rankings */
    kw_results_want w = {.load = r->rs, .notes = &notes};
    if ((rc = kw_results_read(&w, r->dir)) != 0) {
        status = kw_cli_fail("audit", rc);
        goto done;
    }
    char run_id[sizeof rs->info.run_id], owner[sizeof rs->info.owner];
    kw_cli_terminal_text(run_id, sizeof run_id, rs->info.run_id);
    kw_cli_terminal_text(owner, sizeof owner, rs->info.owner[0] ? rs->info.owner : "unassigned");
    printf("run %s: %s search, primary %s, seed %llu, owner %s%s\n\n", run_id,
           rs->info.strategy, rs->metric_names[rs->primary], (unsigned long long)rs->info.seed,
           owner,
           r->j->complete ? "" : r->in_progress ? " (run still running)" : " (run not complete)");
    /* a finished search whose evidence was cut (recommend's rule): until
     * 2026-12-07 audit printed it as a finished run */
    char why[128];
    if (r->j->complete && !r->in_progress && kw_rundir_evidence_missing(why, sizeof why, r) == 1)
        printf("EVIDENCE NOT MADE: the search finished, but the run was stopped before its "
               "evidence was made (%s): no re-check at the final sample and long thermal window, "
               "no portability matrix, fewer disproof criteria (knobwise tune --resume makes "
               "them)\n\n", why);
    for (int i = 0; i < n_sel; i++) {
        kw_sbuf b = {0};
        rc = kw_audit_render_note(&b, rs, sel[i], prefix, exploration,
                                  notes ? notes[sel[i]] : NULL);
        if (rc == 0)
            fputs(kw_sbuf_cstr(&b), stdout);
        kw_sbuf_free(&b);
        if (rc != 0) {
            status = kw_cli_fail("audit", rc);
            goto done;
        }
    }
done:
    kw_results_ranking_free(notes, rs->n_shapes);
    kw_sbuf_free(&pb);
    kw_rundir_free(r);
    return status;
}
