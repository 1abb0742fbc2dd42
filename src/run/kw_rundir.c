/* kw_rundir.c - a run folder opened for reading (by kw_run_open, kw_run.c):
 * its release, the evaluator made exactly like the run's, and the eval
 * command that reproduces its evaluations (see kw_rundir.h).
 *
 * Design choice: the journal is the only source of truth; results files are
 * never read back here (verify compares them with what the journal implies).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_evend.h"
#include "kw_journal.h"
#include "kw_load.h"
#include "kw_results.h"
#include "kw_run.h"
#include "kw_rundir.h"

void kw_rundir_free(kw_rundir *r)
{
    if (!r)
        return;
    kw_eval_free(r->me);
    kw_load_config_free(r->cfg);
    kw_runsum_free(r->rs);
    kw_journal_free(r->j);
    free(r);
}

int kw_rundir_evaluator(const kw_evaluator **out, kw_rundir *r)
{
    if (!r->cfg)
        return kw_error_set(KW_ESTATE, "the run's inputs are not loaded");
    if (!r->me) {
        int rc = kw_eval_new(&r->me, r->cfg, &r->mopts);
        if (rc != 0)
            return rc;
    }
    *out = kw_eval_iface(r->me);
    return 0;
}

int kw_rundir_cfg_shape(const kw_rundir *r, const char *name)
{
    if (!r->cfg)
        return -1;
    return kw_load_config_shape(r->cfg, name);
}

void kw_rundir_eval_prefix(kw_sbuf *out, const kw_rundir *r)
{
    const kw_journal *j = r->j;
    kw_sbuf_puts(out, "knobwise eval");
    /* the eval options are named as the attributes; each path one shell
     * word (kw_sbuf_shell): the journal records what the person typed */
    static const kw_run_attr keys[] = {KW_RUN_SPACE, KW_RUN_ACCEL, KW_RUN_WORKLOAD};
    for (int i = 0; i < 3; i++) {
        const char *v = kw_run_attr_get(j, keys[i]);
        if (v && v[0]) {
            kw_sbuf_printf(out, " --%s ", kw_run_attr_key(keys[i]));
            kw_sbuf_shell(out, v);
        }
    }
    if (r->mopts.sim_requests > 0)
        kw_sbuf_printf(out, " --requests %d", r->mopts.sim_requests);
    kw_sbuf_printf(out, " --seed %llu", (unsigned long long)r->mopts.seed);
    if (r->mopts.thermal)
        kw_sbuf_puts(out, " --thermal");
    /* a measured run: the same worker, quoted for the shell */
    const char *x = kw_run_attr_get(j, KW_RUN_EVALUATOR);
    if (x && x[0]) {
        char *word = malloc(strlen(x) + 6);
        if (!word) {
            out->failed = 1;
            return;
        }
        sprintf(word, "exec:%s", x);
        kw_sbuf_puts(out, " --evaluator ");
        kw_sbuf_shell(out, word);
        free(word);
    }
}

/* (see kw_rundir.h; moved from cli_recommend.c, 2026-12-07) */
int kw_rundir_evidence_missing(char *why, size_t n, const kw_rundir *r)
{
    if (r->in_progress) {
        snprintf(why, n, "a tune holds its lock");
        return 1;
    }
    if (!r->j->complete) {
        snprintf(why, n, "its journal ends before its search finished");
        return 1;
    }
    int ended = kw_evend_read(r->dir);
    if (ended == 0) {
        snprintf(why, n, "its journal is complete, but RUN/evidence has no end record");
        return 1;
    }
    char state[64];
    kw_results_evidence_read(state, sizeof state, r->dir);
    if (strcmp(state, KW_RESULTS_EVIDENCE_NO_FILE) == 0) {
        snprintf(why, n, "its journal is complete, but it has no results.xml of its own");
        return 2;
    }
    if (!state[0] || ended == 1)
        return 0;
    snprintf(why, n, "results.xml evidence=\"%s\"", state);
    return 1;
}

