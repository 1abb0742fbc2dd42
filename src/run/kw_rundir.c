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

#include "kw_load.h"
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

void kw_rundir_eval_prefix(char *buf, size_t len, const kw_rundir *r)
{
    const kw_journal *j = r->j;
    size_t used = 0;
    used += (size_t)snprintf(buf, len, "knobwise eval");
    /* the eval options are named as the attributes */
    static const kw_run_attr keys[] = {KW_RUN_SPACE, KW_RUN_ACCEL, KW_RUN_WORKLOAD};
    for (int i = 0; i < 3 && used < len; i++) {
        const char *v = kw_run_attr_get(j, keys[i]);
        if (v && v[0])
            used += (size_t)snprintf(buf + used, len - used, " --%s %s", kw_run_attr_key(keys[i]), v);
    }
    if (used < len && r->mopts.sim_requests > 0)
        used += (size_t)snprintf(buf + used, len - used, " --requests %d", r->mopts.sim_requests);
    if (used < len)
        used += (size_t)snprintf(buf + used, len - used, " --seed %llu",
                                 (unsigned long long)r->mopts.seed);
    if (used < len && r->mopts.thermal)
        used += (size_t)snprintf(buf + used, len - used, " --thermal");
    /* a measured run: the same worker, quoted for the shell */
    const char *x = kw_run_attr_get(j, KW_RUN_EVALUATOR);
    if (x && x[0] && used < len) {
        used += (size_t)snprintf(buf + used, len - used, " --evaluator 'exec:");
        for (const char *p = x; *p && used < len; p++)
            used += (size_t)snprintf(buf + used, len - used, *p == '\'' ? "'\\''" : "%c", *p);
        if (used < len)
            snprintf(buf + used, len - used, "'");
    }
}
