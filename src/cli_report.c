/* cli_report.c - `knobwise report RUN [-o report.html]`: the run as one
 * self-contained HTML file (kw_report.h). The portability heat map needs the
 * winners re-evaluated on every shape, so the run's inputs are loaded; when
 * they are gone or changed the report is written without it and says why. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "kw_cli.h"
#include "kw_report.h"
#include "kw_results.h"
#include "kw_rundir.h"
#include "kw_runfolder.h"

static void kw_report_help(void)
{
    printf("usage: knobwise report RUN_DIR [-o FILE [--force]] [--no-portability]\n"
           "                      [--space F] [--accel F] [--workload F]\n\n"
           "Writes one self-contained HTML file (default RUN_DIR/report.html) with SVG\n"
           "plots: convergence per shape, a waterfall of each accepted knob change, the\n"
           "latency distribution of baseline and recommendation, the portability heat\n"
           "map, the guard table and the effect grouped by knob family. Offline: no\n"
           "script, no external resource.\n"
           "-o FILE must be a new file name, or an existing regular file with --force;\n"
           "a folder, device, FIFO, symbolic link or one of the run's own files is\n"
           "refused (exit 2) before anything is written.\n");
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
    if (out_path) {
        int orc = kw_runfolder_output(odir, sizeof odir, name, sizeof name, out_path, dir,
                                      "report.html", force);
        if (orc != 0)
            return kw_cli_fail("report", orc);
    } else if (kw_runfolder_join(odir, sizeof odir, dir, "report.html") != 0) {
        return kw_cli_fail("report", KW_EINPUT);
    } else {
        snprintf(odir, sizeof odir, "%s", dir);
        snprintf(name, sizeof name, "report.html");
    }
    if (no_port)
        ro.flags = 0;
    kw_rundir *r = NULL;
    int rc = kw_rundir_open(&r, dir, &ro);
    if ((rc == KW_EINPUT || rc == KW_EIO) && !no_port) {
        /* inputs gone or unreadable: the report without portability is still
         * worth having. Not on running out of memory (the fault sweep found
         * that a failed allocation gave a silently smaller report, exit 0). */
        fprintf(stderr, "knobwise report: %s; writing the report without portability\n",
                kw_error_last());
        ro.flags = 0;
        no_port = 1;
        rc = kw_rundir_open(&r, dir, &ro);
    }
    if (rc != 0)
        return kw_cli_fail("report", rc);
    int status = 0;
    if (!no_port) {
        const kw_evaluator *ev;
        if (r->inputs_changed)
            fprintf(stderr, "knobwise report: %s; writing the report without portability\n",
                    r->inputs_msg);
        else if ((rc = kw_rundir_evaluator(&ev, r)) != 0 || (rc = kw_runsum_portability(r->rs, ev)) != 0) {
            status = kw_cli_fail("report", rc);
            goto done;
        }
    }
    kw_sbuf b = {0};
    if ((rc = kw_report_html(&b, r->rs)) != 0) {
        kw_sbuf_free(&b);
        status = kw_cli_fail("report", rc);
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
    kw_rundir_free(r);
    return status;
}
