/* cli_validate.c - `knobwise validate FILE...`: schema and semantic checks of
 * any knobwise input, chosen by the file's root element (space, accelerator,
 * workload, results). A space is checked together with the files it names.
 * Every problem goes to stderr as FILE:LINE: message; each good file gets
 * "FILE: ok" on stdout. Exit 2 when any file is bad input, 1 when a check
 * could not run, 0 when every file is good. All files are checked even after
 * a bad one, so one run lists everything to fix. */
#include <stdio.h>
#include <string.h>

#include "kw_cli.h"
#include <stdlib.h>

#include "kw_knobuse.h"
#include "kw_eval.h"
#include "kw_input.h"
#include "kw_load.h"
#include "kw_trace.h"

static void kw_validate_help(void)
{
    printf("usage: knobwise validate FILE...\n\n"
           "Check knobwise input files: the schema of the file's kind (its root element:\n"
           "space, accelerator, workload or results) and the semantic rules (baselines in\n"
           "their domains, knob names of the catalogue, precisions the accelerator supports,\n"
           "satisfiable constraints, positive sizes, ...). A space is checked with the\n"
           "accelerator and workload files it names.\n\n"
           "Prints 'FILE: ok' per good file on stdout and every problem as\n"
           "'FILE:LINE: message' on stderr. A knob the space's block cannot use (e.g.\n"
           "fuse_residual_norm on a block without a residual followed by a norm, or\n"
           "batch_timeout_us while max_batch can only be 1) is warned about as\n"
           "'FILE:LINE: warning: ...'; warnings do not change the exit status.\n"
           "Exit status: 0 all good, 2 some file is bad, 1 a check could not run.\n");
}

/* The traces a workload's shapes replay are read too: validate is the check
 * before an overnight run, so a bad trace must not wait for 2 a.m. Each
 * problem reads "WORKLOAD:LINE: shape S replays TRACE: <the trace's own
 * TRACE:LINE: message>". Returns 0 or KW_EINPUT (printed). */
static int kw_validate_traces(const kw_workload *w, const char *wl_path)
{
    int bad = 0;
    for (int i = 0; i < w->n_shapes; i++) {
        const kw_shape *s = &w->shapes[i];
        if (s->arrival != KW_ARRIVAL_TRACE)
            continue;
        kw_trace *t = NULL;
        /* as the evaluator reads it: the shape's own rows only, so a trace
         * naming only other shapes fails here, not at 2 a.m. */
        const char *own[1] = {s->name};
        if (kw_trace_load(&t, s->trace, s->streams, own, 1) != 0) {
            fprintf(stderr, "%s:%d: shape '%s' replays a trace that cannot be used: %s\n", wl_path,
                    s->line, s->name, kw_error_last());
            bad = 1;
        }
        kw_trace_free(t);
    }
    return bad ? KW_EINPUT : 0;
}

/* A space's shapes as the evaluator will see them, at both of the space's
 * sample sizes (the search's sim_requests and the final re-check's
 * final_requests): rates derived from load, the simulation clock's exact
 * range (kw_limits.h). This is what eval and tune check before they start, so
 * validate refuses the same files. Returns 0 or KW_EINPUT (printed). */
static int kw_validate_model(const kw_config *cfg)
{
    /* the larger sample first: its bounds are the binding ones */
    int a = cfg->space.sim_requests, b = cfg->space.final_requests;
    int sizes[2] = {a > b ? a : b, a > b ? b : a};
    for (int k = 0; k < 2; k++) {
        if (sizes[k] <= 0 || (k == 1 && sizes[1] == sizes[0]))
            continue;
        kw_model_eval *me = NULL;
        kw_model_opts mo = {.sim_requests = sizes[k], .drift = 1, .seed = 1};
        int rc = kw_eval_new(&me, cfg, &mo);
        kw_eval_free(me);
        if (rc == KW_EINPUT) {
            fprintf(stderr, "%s\n", kw_error_last());
            return KW_EINPUT;
        }
    }
    return 0;
}

/* After the file itself passed: a workload's traces, or a space's workload's. */
static int kw_validate_deep(const char *path)
{
    kw_workload *w = malloc(sizeof *w);
    if (!w)
        return 0;
    int rc = 0;
    if (kw_load_workload(w, path) == 0) {
        rc = kw_validate_traces(w, path);
    } else {
        kw_config *cfg = NULL;
        if (kw_load_config(&cfg, path, NULL, NULL) == 0) {
            rc = kw_validate_traces(&cfg->workload, cfg->space.workload_path);
            if (rc == 0)
                rc = kw_validate_model(cfg);
        }
        kw_load_config_free(cfg);
    }
    kw_error_clear();
    free(w);
    return rc;
}

/* A space whose block cannot use some of its knobs is valid, but each such
 * knob is evaluations spent on nothing: one warning per knob on stderr,
 * "FILE:LINE: warning: ..." (kw_knobuse.h). The exit status is unchanged. */
static void kw_validate_knob_use(const char *path)
{
    kw_config *cfg = NULL;
    if (kw_load_config(&cfg, path, NULL, NULL) != 0) {
        kw_error_clear(); /* not a space: nothing to warn about */
        return;
    }
    kw_knobuse ku[KW_KNOB_MAX];
    int n = kw_knobuse_check(ku, KW_KNOB_MAX, cfg);
    for (int i = 0; i < n && i < KW_KNOB_MAX; i++)
        fprintf(stderr, "%s:%d: warning: knob '%s' has no effect here: %s\n", path, ku[i].line,
                cfg->space.knobs.knobs[ku[i].knob].name, ku[i].why);
    kw_error_clear();
    kw_load_config_free(cfg);
}

int kw_cli_validate(int argc, char **argv)
{
    int first = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            kw_validate_help();
            return 0;
        }
        if (strcmp(argv[i], "--") == 0) {
            first = i + 1;
            break;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return kw_cli_usage_error("validate", "unknown option '%s'", argv[i]);
    }
    if (first >= argc)
        return kw_cli_usage_error("validate", "name at least one file to check");
    int bad_input = 0, failed = 0;
    for (int i = first; i < argc; i++) {
        if (first == 1 && strcmp(argv[i], "--") == 0)
            continue;
        int rc = kw_input_named(NULL, argv[i]);
        if (rc != 0) { /* '' is no file: "knobwise validate: '': names no file" */
            bad_input = 1;
            kw_cli_fail("validate", rc);
            continue;
        }
        /* the deep checks read a space or workload again as the loaders do;
         * a results.xml or accelerator is read once */
        char root[32];
        rc = kw_load_validate_file_root(argv[i], root, sizeof root);
        int deep = strcmp(root, "space") == 0 || strcmp(root, "workload") == 0;
        if (rc == 0 && deep && kw_validate_deep(argv[i]) != 0) {
            bad_input = 1;
            continue;
        }
        if (rc == 0) {
            if (strcmp(root, "space") == 0)
                kw_validate_knob_use(argv[i]);
            printf("%s: ok\n", argv[i]);
            continue;
        }
        const char *msg = kw_error_last();
        if (rc == KW_EINPUT) {
            bad_input = 1;
            fprintf(stderr, "%s\n", msg);
        } else {
            failed = 1;
            fprintf(stderr, "knobwise validate: %s: %s\n", argv[i], msg[0] ? msg : "failed");
        }
    }
    fflush(stdout);
    return bad_input ? 2 : failed ? 1 : 0;
}
