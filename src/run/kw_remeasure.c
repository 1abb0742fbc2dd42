/* kw_remeasure.c - re-measure a sample of a measured run (see kw_remeasure.h).
 *
 * Design choice: the drift is judged on the measured stage-1 time
 * (latency_us: the worker's median kernel time, or for unit=request runs the
 * p95) of the same (config, shape, repetition), because that is what the
 * worker measured; the tail on top of it is the model's function of it. The
 * summary's test is Mann-Whitney (rank-based: timing samples are skewed).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "kw_exec.h"
#include "kw_mstat.h"
#include "kw_run.h"
#include "kw_remeasure.h"

int kw_remeasure_run(kw_sbuf *log, kw_rundir *r, int n, uint64_t seed, const char *cmd_override)
{
    const kw_journal *j = r->j;
    const char *cmd = kw_run_attr_get(j, KW_RUN_EVALUATOR);
    if (cmd_override)
        cmd = cmd_override;
    if (!cmd || !cmd[0])
        return kw_error_set(KW_EINPUT, "%s: not a measured run (its journal names no worker): "
                            "use verify's re-evaluation", r->dir);
    const kw_evaluator *mev;
    int rc = kw_rundir_evaluator(&mev, r);
    if (rc != 0)
        return rc;
    const char *to = kw_run_attr_get(j, KW_RUN_EXEC_TIMEOUT_S);
    kw_exec_opts xo;
    kw_exec_opts_from_space(&xo, &r->cfg->space, cmd, to ? atof(to) : 0);
    kw_exec *ex = NULL;
    size_t *pick = NULL;
    double *was = NULL, *now = NULL, *drift = NULL;
    gsl_rng *rng = NULL;
    /* the arrival rates the run used (tune recorded them) */
    const char *sc = kw_run_attr_get(j, KW_RUN_EXEC_RATE_SCALE);
    char used[KW_JOURNAL_ATTR_LEN];
    if ((rc = kw_exec_new(&ex, r->cfg, r->me, &xo)) != 0)
        return rc;
    if ((rc = kw_exec_calibrate(ex, &r->me, 1, sc && sc[0] ? sc : NULL, used, sizeof used)) != 0) {
        kw_exec_free(ex);
        return rc;
    }
    const kw_evaluator *ev = kw_exec_iface(ex);
    int lat = -1;
    for (int k = 0; k < j->h.n_metrics; k++)
        if (strcmp(j->h.metric_names[k], KW_METRIC_NAME(KW_M_LATENCY_US)) == 0)
            lat = k;
    size_t cand = 0;
    for (size_t i = 0; i < j->n_evals; i++)
        cand += j->evals[i].rc == 0 && !(j->evals[i].guards && j->evals[i].guards[0]);
    pick = calloc(cand + 1, sizeof *pick);
    was = calloc((size_t)n + 1, sizeof *was);
    now = calloc((size_t)n + 1, sizeof *now);
    drift = calloc((size_t)n + 1, sizeof *drift);
    rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!pick || !was || !now || !drift || !rng) {
        rc = kw_error_set(KW_ENOMEM, "out of memory");
        goto done;
    }
    if (lat < 0 || cand == 0) {
        kw_sbuf_printf(log, "skip re-measure: no guard-passing measured evaluation in the journal\n");
        goto done;
    }
    size_t m = 0;
    for (size_t i = 0; i < j->n_evals; i++)
        if (j->evals[i].rc == 0 && !(j->evals[i].guards && j->evals[i].guards[0]))
            pick[m++] = i;
    /* a seeded sample without replacement (partial Fisher-Yates, GSL mt19937) */
    gsl_rng_set(rng, (unsigned long)seed);
    int k = n < (int)m ? n : (int)m;
    for (int t = 0; t < k; t++) {
        size_t u = (size_t)t + (size_t)gsl_rng_uniform_int(rng, (unsigned long)(m - (size_t)t));
        size_t tmp = pick[t];
        pick[t] = pick[u];
        pick[u] = tmp;
    }
    int done_n = 0;
    for (int t = 0; t < k; t++) {
        const kw_jeval *e = &j->evals[pick[t]];
        int shape = kw_rundir_cfg_shape(r, j->h.shape_names[e->shape]);
        if (shape < 0)
            continue;
        kw_metrics mm;
        if ((rc = ev->eval(ev->ctx, &e->cand, shape, e->rep, &mm)) != 0)
            goto done;
        if (mm.guards[0]) {
            kw_sbuf_printf(log, "     shape %s config %016llx rep %d: re-measure failed (%s)\n",
                           j->h.shape_names[e->shape], (unsigned long long)e->id, e->rep,
                           mm.guards);
            continue;
        }
        was[done_n] = e->m[lat];
        now[done_n] = mm.v[KW_M_LATENCY_US];
        drift[done_n] = 100.0 * (now[done_n] - was[done_n]) / was[done_n];
        kw_sbuf_printf(log, "     shape %s config %016llx rep %d: measured %.3f us, now %.3f us "
                       "(%+.2f%%)\n", j->h.shape_names[e->shape], (unsigned long long)e->id,
                       e->rep, was[done_n], now[done_n], drift[done_n]);
        done_n++;
    }
    if (done_n == 0) {
        /* a FAIL line is a failed verification: exit 1, never "verified"
         * (it printed this line, then "verified: RUN", exit 0, when the
         * worker timed out on every sampled evaluation; until 2026-12-07) */
        kw_sbuf_printf(log, "FAIL re-measure: no sampled evaluation could be measured again\n");
        rc = kw_error_set(KW_EIO, "re-measure: none of the %d sampled evaluations could be "
                          "measured again with '%s' (each failed; the lines above say how)", k,
                          cmd);
        goto done;
    }
    double p = kw_mstat_mann_whitney_p(was, (size_t)done_n, now, (size_t)done_n);
    gsl_sort(drift, 1, (size_t)done_n);
    kw_sbuf_printf(log, "ok   re-measure: %d evaluations measured again with '%s'; drift median "
                   "%+.2f%%, range [%+.2f%%, %+.2f%%]; Mann-Whitney p %.3g (same distribution)\n",
                   done_n, cmd, gsl_stats_median_from_sorted_data(drift, 1, (size_t)done_n),
                   drift[0], drift[done_n - 1], p);
done:
    gsl_rng_free(rng);
    free(pick);
    free(was);
    free(now);
    free(drift);
    kw_exec_free(ex);
    return rc;
}
