/* kw_rundir.c - open a run folder for audit, verify, recommend, report and
 * bisect: journal -> summary, and on request the inputs and an evaluator made
 * exactly like the run's (see kw_rundir.h for the journal attributes read).
 *
 * Design choice: the journal is the only source of truth; results files are
 * never read back here (verify compares them with what the journal implies).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kw_hash.h"
#include "kw_load.h"
#include "kw_results.h"
#include "kw_run.h"
#include "kw_rundir.h"
#include "kw_shipped.h"
#include "kw_runfolder.h"

static const char *kw_attr_or(const kw_journal *j, kw_run_attr key, const char *dflt)
{
    const char *v = kw_run_attr_get(j, key);
    return v && v[0] ? v : dflt;
}

static void kw_rundir_note(kw_rundir *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void kw_rundir_note(kw_rundir *r, const char *fmt, ...)
{
    size_t used = strlen(r->inputs_msg);
    if (used + 3 >= sizeof r->inputs_msg)
        return;
    if (used)
        used += (size_t)snprintf(r->inputs_msg + used, sizeof r->inputs_msg - used, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->inputs_msg + used, sizeof r->inputs_msg - used, fmt, ap);
    va_end(ap);
    r->inputs_changed = 1;
}

/* An arrival trace input ("trace": the run's --trace; "shape_trace.N": space
 * shape N's own file): 1 when name is one (checked here: a difference is
 * noted, naming the file), 0 for the model files. Needs r->cfg. */
static int kw_rundir_trace_changed(kw_rundir *r, const char *name, const char *hash)
{
    const char *file = NULL;
    if (strcmp(name, "trace") == 0) {
        file = r->trace;
    } else if (strncmp(name, "shape_trace.", 12) == 0) {
        int i = atoi(name + 12);
        if (i >= 0 && i < r->cfg->space.n_shapes)
            file = r->cfg->workload.shapes[r->cfg->space.shapes[i]].trace;
    } else {
        return 0;
    }
    char now[KW_HASH_HEX_LEN];
    if (!file || !file[0]) {
        kw_rundir_note(r, "the run's %s is not named by its inputs now", name);
    } else if (kw_hash_file(now, file) != 0) {
        kw_rundir_note(r, "%s", kw_error_last());
        kw_error_clear();
    } else if (strcmp(now, hash) != 0) {
        kw_rundir_note(r, "%s changed since the run (hash %s, now %s)", file, hash, now);
    }
    return 1;
}

int kw_rundir_open(kw_rundir **out, const char *dir, const kw_rundir_opts *o)
{
    kw_rundir_opts none = {0};
    if (!o)
        o = &none;
    kw_rundir *r = calloc(1, sizeof *r);
    if (!r)
        return kw_error_set(KW_ENOMEM, "out of memory opening %s", dir);
    int rc = 0;
    char path[KW_PATH_MAX + 16];
    if (strlen(dir) >= sizeof r->dir) {
        rc = kw_error_set(KW_EINPUT, "%.200s...: path too long (at most %zu bytes)", dir,
                          sizeof r->dir - 1);
        goto fail;
    }
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    if ((rc = kw_runfolder_join(path, sizeof path, dir, KW_RUNFOLDER_JOURNAL_NAME)) != 0)
        goto fail;
    /* lstat, not open: opening a FIFO would block (reliability); a dangling
     * link is a journal refused by the reader, not a missing one */
    struct stat probe;
    if (lstat(path, &probe) != 0) {
        rc = kw_error_set(KW_EINPUT, "%s: not a run folder (no journal)", dir);
        goto fail;
    }
    if ((rc = kw_journal_load(&r->j, path)) != 0)
        goto fail;
    /* A writer appending now (tune holds the lock) leaves a last record half
     * written: what came before it is a consistent prefix, not damage. Asked
     * after the read, and a torn tail with no writer is read once more (the
     * writer may have finished in between). */
    if (r->j->torn && !kw_runfolder_writer(dir, NULL)) {
        kw_journal_free(r->j);
        r->j = NULL;
        if ((rc = kw_journal_load(&r->j, path)) != 0)
            goto fail;
    }
    if (kw_runfolder_writer(dir, NULL)) {
        r->in_progress = 1;
        r->j->torn = 0;
        r->j->torn_msg[0] = '\0';
    }
    if ((rc = kw_runsum_build(&r->rs, r->j)) != 0)
        goto fail;

    const kw_journal *j = r->j;
    r->mopts.seed = strtoull(kw_attr_or(j, KW_RUN_MODEL_SEED, "0"), NULL, 10);
    if (!kw_run_attr_get(j, KW_RUN_MODEL_SEED))
        r->mopts.seed = j->h.seed;
    r->mopts.sim_requests = atoi(kw_attr_or(j, KW_RUN_SIM_REQUESTS, "0"));
    r->mopts.thermal = atoi(kw_attr_or(j, KW_RUN_THERMAL, "0"));
    r->mopts.drift = atoi(kw_attr_or(j, KW_RUN_DRIFT, "1"));
    snprintf(r->trace, sizeof r->trace, "%s", kw_attr_or(j, KW_RUN_TRACE, ""));
    r->mopts.trace_path = r->trace[0] ? r->trace : NULL;

    if (o->flags & KW_RUNDIR_CONFIG) {
        const char *space = o->space ? o->space : kw_attr_or(j, KW_RUN_SPACE, NULL);
        char shipped[KW_PATH_MAX];
        if (o->space) { /* --space NAME: a shipped space when no such file exists */
            if ((rc = kw_shipped_space(shipped, sizeof shipped, o->space)) < 0)
                goto fail;
            space = shipped;
        }
        const char *accel = o->accel ? o->accel : kw_attr_or(j, KW_RUN_ACCEL, NULL);
        const char *workload = o->workload ? o->workload : kw_attr_or(j, KW_RUN_WORKLOAD, NULL);
        if (space == NULL && accel == NULL && workload == NULL)
            rc = kw_config_load_default(&r->cfg);
        else
            rc = kw_config_load(&r->cfg, space, accel, workload);
        if (rc != 0)
            goto fail;
        static const char *const slot_names[3] = {"space", "accelerator", "workload"};
        for (int i = 0; i < j->h.n_inputs; i++) {
            const char *n = j->h.inputs[i].name;
            if (kw_rundir_trace_changed(r, n, j->h.inputs[i].hash))
                continue;
            int slot = strstr(n, "space") ? 0 : strstr(n, "accel") ? 1 : strstr(n, "workload") ? 2 : -1;
            if (slot < 0 || strcmp(j->h.inputs[i].hash, r->cfg->input_hash[slot]) == 0)
                continue;
            r->inputs_changed = 1;
            size_t used = strlen(r->inputs_msg);
            snprintf(r->inputs_msg + used, sizeof r->inputs_msg - used,
                     "%sthe %s changed since the run (hash %s, now %s)", used ? "; " : "",
                     slot_names[slot], j->h.inputs[i].hash, r->cfg->input_hash[slot]);
        }
        kw_runsum_set_limits(r->rs, r->cfg);
    }
    *out = r;
    return 0;
fail:
    kw_rundir_free(r);
    return rc;
}

void kw_rundir_free(kw_rundir *r)
{
    if (!r)
        return;
    kw_model_eval_free(r->me);
    kw_config_free(r->cfg);
    kw_runsum_free(r->rs);
    kw_journal_free(r->j);
    free(r);
}

int kw_rundir_evaluator(const kw_evaluator **out, kw_rundir *r)
{
    if (!r->cfg)
        return kw_error_set(KW_ESTATE, "the run's inputs are not loaded");
    if (!r->me) {
        int rc = kw_model_eval_new(&r->me, r->cfg, &r->mopts);
        if (rc != 0)
            return rc;
    }
    *out = kw_model_eval_iface(r->me);
    return 0;
}

int kw_rundir_cfg_shape(const kw_rundir *r, const char *name)
{
    if (!r->cfg)
        return -1;
    return kw_config_shape(r->cfg, name);
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
