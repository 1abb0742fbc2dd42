/* kw_evidence.c - the evidence phase on the process's evaluation pool (see
 * kw_evidence.h).
 *
 * Each function lists its evaluations as jobs (kw_job, search/kw_evpool.h),
 * runs them all at once on the pool, then reads the slots back in job order.
 * What it reads back is what one thread evaluating the jobs one by one would
 * have produced: the first failure in job order is the one reported, and the
 * neighbours are added in the order the sequential walk added them (each
 * neighbour is a different configuration, so none of them hides another).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kw_error.h"
#include "kw_evcache.h"
#include "kw_evidence.h"
#include "kw_mix.h"
#include "kw_netpath.h"
#include "kw_results.h"
#include "kw_simci.h"

/* The message of a failed job as the evaluations before the pool kept it
 * (their buffer was 200 bytes). */
#define KW_EVIDENCE_ERR_LEN 199

/* Run live[0..n_live) of jobs through ev on p (NULL: a one-thread pool, the
 * caller). */
static void kw_evidence_run_live(const kw_evidence_pool *p, const kw_evaluator *ev, kw_job *jobs,
                                 const size_t *live, size_t n_live)
{
    if (n_live == 0)
        return;
    if (p && p->pool) {
        kw_evpool_run_width(p->pool, ev, jobs, live, n_live, p->width);
    } else {
        kw_evpool one;
        kw_evpool_start(&one, 1); /* no thread to start: cannot fail */
        kw_evpool_run(&one, ev, jobs, live, n_live);
        kw_evpool_stop(&one);
    }
}

/* Run jobs[0..n) through ev on p: those p's cache keeps (evaluator `which`)
 * are read from it; with a cache or a progress hook the rest run in slices,
 * each slice's successful evaluations kept in job order as it ends, up to
 * the first one stopped or out of memory (a resume makes those again): the
 * file stays a prefix of the uninterrupted run's, in job order. After a
 * stopped slice the jobs not yet run are marked stopped too. */
static int kw_evidence_jobs(const kw_evidence_pool *p, const kw_evaluator *ev, char which,
                            const char *what, kw_job *jobs, size_t n)
{
    if (n == 0)
        return 0;
    size_t *live = malloc(n * sizeof *live);
    if (!live)
        return kw_error_set(KW_ENOMEM, "out of memory queueing the evidence evaluations");
    struct kw_evcache *cache = p ? p->cache : NULL;
    size_t n_live = 0;
    long done = 0;
    for (size_t i = 0; i < n; i++) {
        if (kw_evcache_get(cache, which, jobs[i].shape, &jobs[i].cand, &jobs[i].m)) {
            jobs[i].rc = 0;
            jobs[i].live = 0;
            done++;
            continue;
        }
        live[n_live++] = i;
        jobs[i].live = 1;
    }
    size_t slice = n_live;
    if (p && (p->cache || p->progress)) {
        int w = p->width > 0 ? p->width : p->pool ? p->pool->n + 1 : 1;
        slice = (size_t)(2 * (w > 0 ? w : 1));
    }
    if (p && p->progress)
        p->progress(p->ud, what, done, (long)n);
    /* the one evaluation made whole (kw_evidence_pool.deadline_s) */
    int whole = p && cache && p->deadline_s && *p->deadline_s > 0 &&
                kw_evcache_added(cache) == 0 && n_live > 0;
    int keep = 1; /* no evaluation stopped yet */
    for (size_t at = 0, len; at < n_live; at += len) {
        len = n_live - at < slice ? n_live - at : slice;
        if (whole && at == 0) {
            double deadline = *p->deadline_s;
            *p->deadline_s = 0; /* no other thread reads it: the pool is idle */
            kw_evidence_run_live(p, ev, jobs, live, len = 1);
            *p->deadline_s = deadline;
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double past = (double)ts.tv_sec + ts.tv_nsec * 1e-9 - deadline;
            if (p->past_s)
                *p->past_s = past > 0 ? past : 0;
        } else {
            kw_evidence_run_live(p, ev, jobs, live + at, len);
        }
        for (size_t k = at; k < at + len; k++) {
            kw_job *j = &jobs[live[k]];
            if (j->rc == KW_EINTERRUPTED || j->rc == KW_ENOMEM) {
                keep = 0;
                continue;
            }
            done++;
            if (keep && j->rc == 0)
                kw_evcache_put(cache, which, j->shape, &j->cand, &j->m, ev->n_metrics);
        }
        kw_evcache_sync(cache);
        if (p && p->progress)
            p->progress(p->ud, what, done, (long)n);
        if (!keep) { /* stopped: what was not run is stopped too, as the model would say */
            for (size_t k = at + len; k < n_live; k++) {
                jobs[live[k]].rc = KW_EINTERRUPTED;
                snprintf(jobs[live[k]].err, sizeof jobs[live[k]].err, "stopped");
            }
            break;
        }
    }
    free(live);
    return 0;
}

/* The evaluator's shape index of summary shape name, or -1. */
static int kw_evidence_shape(const kw_evaluator *ev, const char *name)
{
    int es = -1;
    for (int k = 0; k < ev->n_shapes; k++)
        if (strcmp(ev->shape_names[k], name) == 0)
            es = k;
    return es;
}

int kw_evidence_recheck(kw_runsum *rs, const kw_evaluator *ev, int top, const kw_evidence_pool *p)
{
    int cap = 0, n = 0;
    for (int i = 0; i < rs->n_shapes; i++)
        cap += 1 + (rs->shapes[i].n_ranked < top ? rs->shapes[i].n_ranked : top);
    kw_job *jobs = calloc((size_t)(cap > 0 ? cap : 1), sizeof *jobs);
    kw_rs_config **dst = calloc((size_t)(cap > 0 ? cap : 1), sizeof *dst);
    int rc = 0;
    if (!jobs || !dst) {
        rc = kw_error_set(KW_ENOMEM, "out of memory re-checking the ranked configurations");
        goto done;
    }
    for (int i = 0; i < rs->n_shapes; i++) {
        kw_rs_shape *s = &rs->shapes[i];
        int es = kw_evidence_shape(ev, s->name);
        if (es < 0)
            continue;
        int nr = s->n_ranked < top ? s->n_ranked : top;
        for (int r = -1; r < nr; r++) {
            int c = r < 0 ? s->baseline : s->ranked[r];
            if (c < 0 || s->configs[c].recheck)
                continue;
            int dup = 0; /* the baseline can also be ranked */
            for (int k = 0; k < n; k++)
                dup |= dst[k] == &s->configs[c];
            if (dup)
                continue;
            if (ev->drifts) { /* see kw_evidence.h */
                s->configs[c].recheck_unmeasured = 1;
                continue;
            }
            jobs[n].cand = s->configs[c].cand;
            jobs[n].shape = es;
            dst[n++] = &s->configs[c];
        }
    }
    if ((rc = kw_evidence_jobs(p, ev, KW_EVCACHE_FINAL, "re-checks", jobs, (size_t)n)) != 0)
        goto done;
    for (int k = 0; k < n; k++) {
        if (jobs[k].rc != 0) { /* the first failure in job order, as one thread would report it */
            rc = kw_error_set(jobs[k].rc, "%.*s", KW_EVIDENCE_ERR_LEN, jobs[k].err);
            goto done;
        }
        kw_metrics *m = malloc(sizeof *m);
        if (!m) {
            rc = kw_error_set(KW_ENOMEM, "out of memory re-checking the ranked configurations");
            goto done;
        }
        *m = jobs[k].m;
        kw_results_recheck_round(rs, m); /* the file's figures (kw_results_read) */
        dst[k]->recheck = m;
    }
done:
    free(jobs);
    free(dst);
    return rc;
}

/* rs->port's cells allocated (emptied) for n shapes. */
static int kw_evidence_port_alloc(kw_runsum *rs, int n)
{
    free(rs->port);
    free(rs->port_ok);
    rs->port = calloc((size_t)(n > 0 ? n * n : 1), sizeof *rs->port);
    rs->port_ok = calloc((size_t)(n > 0 ? n * n : 1), sizeof *rs->port_ok);
    if (!rs->port || !rs->port_ok)
        return kw_error_set(KW_ENOMEM, "out of memory for the portability matrix");
    return 0;
}

/* The guard cell of winner c of a shape on another shape that breaks a
 * constraint (evaluated nowhere), as *out; 1 when it breaks one. */
static int kw_evidence_port_constraint(kw_metrics *out, const kw_runsum *rs, const kw_cand *c)
{
    int broken = kw_knobs_cand_violates(&rs->ks, c);
    if (broken < 0)
        return 0;
    snprintf(out->guards, sizeof out->guards, "constraint:%s", rs->ks.constraints[broken].name);
    return 1;
}

int kw_evidence_portability_journal(kw_runsum *rs)
{
    int n = rs->n_shapes, rc = kw_evidence_port_alloc(rs, n);
    if (rc != 0)
        return rc;
    for (int i = 0; i < n; i++) {
        int w = kw_runsum_winner(rs, i);
        if (w < 0)
            continue;
        const kw_rs_config *wc = &rs->shapes[i].configs[w];
        for (int j = 0; j < n; j++) {
            kw_metrics *out = &rs->port[i * n + j];
            if (kw_evidence_port_constraint(out, rs, &wc->cand))
                continue;
            int c = kw_runsum_find_config(rs, j, wc->id);
            const kw_rs_config *jc = c >= 0 ? &rs->shapes[j].configs[c] : NULL;
            if (!jc || jc->reps == 0 || jc->evidence) {
                snprintf(out->guards, sizeof out->guards, "%s", KW_RESULTS_PORT_UNMEASURED);
                continue;
            }
            *out = jc->m; /* the figure results.xml shows for it on shape j */
            rs->port_ok[i * n + j] = isfinite(jc->m.v[rs->primary]);
        }
    }
    return 0;
}

int kw_evidence_portability(kw_runsum *rs, const kw_evaluator *ev, const kw_evidence_pool *p)
{
    if (ev->drifts)
        return kw_evidence_portability_journal(rs);
    int n = rs->n_shapes, rc = 0;
    kw_job *jobs = calloc((size_t)(n > 0 ? n * n : 1), sizeof *jobs);
    int *slot = calloc((size_t)(n > 0 ? n * n : 1), sizeof *slot);
    if ((rc = kw_evidence_port_alloc(rs, n)) != 0)
        goto done;
    if (!jobs || !slot) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for the portability matrix");
        goto done;
    }
    int map[KW_METRIC_MAX]; /* summary metric -> evaluator metric */
    for (int k = 0; k < rs->n_metrics; k++) {
        map[k] = -1;
        for (int e = 0; e < ev->n_metrics; e++)
            if (strcmp(ev->metric_names[e], rs->metric_names[k]) == 0)
                map[k] = e;
    }
    int nj = 0;
    for (int j = 0; j < n; j++) {
        int ej = kw_evidence_shape(ev, rs->shapes[j].name);
        for (int i = 0; i < n; i++) {
            int w = kw_runsum_winner(rs, i);
            kw_metrics *out = &rs->port[i * n + j];
            if (w < 0)
                continue;
            if (ej < 0) {
                snprintf(out->guards, sizeof out->guards, "error:shape not in the evaluator");
                continue;
            }
            const kw_cand *c = &rs->shapes[i].configs[w].cand;
            if (kw_evidence_port_constraint(out, rs, c))
                continue;
            jobs[nj].cand = *c;
            jobs[nj].shape = ej;
            slot[nj++] = i * n + j;
        }
    }
    if ((rc = kw_evidence_jobs(p, ev, KW_EVCACHE_SEARCH, "portability", jobs, (size_t)nj)) != 0)
        goto done;
    for (int k = 0; k < nj; k++) {
        kw_metrics *out = &rs->port[slot[k]];
        if (jobs[k].rc == KW_ENOMEM || jobs[k].rc == KW_EINTERRUPTED) {
            /* running out of memory or being stopped is not a property of the
             * configuration: the matrix fails rather than showing an "error" cell */
            rc = kw_error_set(jobs[k].rc, "portability matrix: %.200s", jobs[k].err);
            goto done;
        }
        if (jobs[k].rc != 0) {
            snprintf(out->guards, sizeof out->guards, "error:%.200s", jobs[k].err);
            for (char *q = out->guards; *q; q++)
                if (*q == ',' || *q == '\n')
                    *q = ';';
            continue;
        }
        for (int q = 0; q < rs->n_metrics; q++)
            out->v[q] = map[q] >= 0 ? jobs[k].m.v[map[q]] : NAN;
        snprintf(out->guards, sizeof out->guards, "%s", jobs[k].m.guards);
        snprintf(out->klass, sizeof out->klass, "%s", jobs[k].m.klass);
        rs->port_ok[slot[k]] = 1;
    }
done:
    free(jobs);
    free(slot);
    return rc;
}

int kw_evidence_neighbours(kw_runsum *rs, const kw_evaluator *ev, const kw_evidence_pool *p,
                           int *added)
{
    const kw_knobspace *ks = &rs->ks;
    int n_added = 0, rc = 0;
    size_t n = 0, cap = 0;
    kw_job *jobs = NULL;
    int *shape_of = NULL;
    if (added)
        *added = 0;
    /* A measured neighbour would be a figure no journal record backs, that
     * verify cannot check, from a round of its own (a drifting device reads
     * it against the recommendation's figure of another round): the readers
     * show the pairing's figure (N record) or say it was not measured. */
    if (ev->drifts)
        return 0;
    kw_sens *sn = calloc((size_t)(ks->n_knobs > 0 ? ks->n_knobs : 1), sizeof *sn);
    if (!sn) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for the sensitivity");
        goto done;
    }
    /* the list, in the order the sequential walk evaluated it */
    for (int sh = 0; sh < rs->n_shapes; sh++) {
        kw_rs_shape *s = &rs->shapes[sh];
        int es = kw_evidence_shape(ev, s->name);
        if (es < 0 || s->final < 0 || kw_netpath_sensitivity(sn, rs, sh) != 0)
            continue;
        const kw_cand *F = &s->configs[s->final].cand;
        for (int k = 0; k < ks->n_knobs; k++)
            for (int side = 0; side < 2; side++) {
                if (sn[k].side[side].state != KW_SENS_MISSING)
                    continue;
                kw_cand c = *F;
                c.v[k] = (uint8_t)sn[k].side[side].value;
                /* one the journal has without a step stays as it is: a second
                 * repetition would change figures the files already show */
                if (kw_runsum_find_config(rs, sh, kw_knobs_cand_id(ks, &c)) >= 0)
                    continue;
                if (n == cap) {
                    size_t nc = cap ? 2 * cap : 64;
                    kw_job *nj = realloc(jobs, nc * sizeof *nj);
                    if (nj)
                        jobs = nj;
                    int *ns = nj ? realloc(shape_of, nc * sizeof *ns) : NULL;
                    if (!nj || !ns) {
                        rc = kw_error_set(KW_ENOMEM, "out of memory for the sensitivity");
                        goto done;
                    }
                    shape_of = ns;
                    cap = nc;
                }
                memset(&jobs[n], 0, sizeof jobs[n]);
                jobs[n].cand = c;
                jobs[n].shape = es;
                shape_of[n++] = sh;
            }
    }
    kw_error_clear(); /* kw_netpath_sensitivity's refusals skip a shape, as before */
    if ((rc = kw_evidence_jobs(p, ev, KW_EVCACHE_SEARCH, "neighbours", jobs, n)) != 0)
        goto done;
    for (size_t i = 0; i < n; i++) {
        if (jobs[i].rc != 0) {
            rc = kw_error_set(jobs[i].rc, "%s", jobs[i].err);
            break;
        }
        int sh = shape_of[i];
        if ((rc = kw_runsum_add_eval(rs, sh, &jobs[i].cand, &jobs[i].m)) != 0)
            break;
        int ci = kw_runsum_find_config(rs, sh, kw_knobs_cand_id(ks, &jobs[i].cand));
        if (ci >= 0)
            rs->shapes[sh].configs[ci].evidence = 1;
        n_added++;
    }
done:
    free(sn);
    free(jobs);
    free(shape_of);
    if (added)
        *added = n_added;
    return rc;
}

/* One paired comparison of the verdict's sequence: from p's cache when kept
 * there, else made (whole, without the deadline, when it is the first
 * evidence evaluation this process keeps: kw_evidence_pool) and kept. */
static int kw_evidence_pair(kw_paired *v, const kw_evaluator *ev, const kw_evidence_pool *p, int shape,
                            double pq, const kw_cand *a, uint64_t ida, const kw_cand *b, uint64_t idb, long n)
{
    struct kw_evcache *cache = p ? p->cache : NULL;
    uint64_t key = kw_mix_splitmix64(ida ^ kw_mix_splitmix64(idb ^ kw_mix_splitmix64((uint64_t)n)));
    kw_metrics m;
    if (kw_evcache_get_id(cache, KW_EVCACHE_VERDICT, shape, key, &m)) {
        *v = (kw_paired){.a = m.v[0], .b = m.v[1], .half = m.v[2], .batches = (int)m.v[3],
                         .samples = (long)m.v[4]};
        return 0;
    }
    int whole = cache && p->deadline_s && *p->deadline_s > 0 && kw_evcache_added(cache) == 0;
    double deadline = whole ? *p->deadline_s : 0;
    if (whole)
        *p->deadline_s = 0; /* no other thread reads it: the pool is idle */
    int rc = ev->paired(ev->ctx, a, b, shape, pq, n, v);
    if (whole) {
        *p->deadline_s = deadline;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double past = (double)ts.tv_sec + ts.tv_nsec * 1e-9 - deadline;
        if (p->past_s)
            *p->past_s = past > 0 ? past : 0;
    }
    if (rc != 0)
        return rc;
    memset(&m, 0, sizeof m);
    m.v[0] = v->a;
    m.v[1] = v->b;
    m.v[2] = v->half;
    m.v[3] = v->batches;
    m.v[4] = (double)v->samples;
    kw_evcache_put_id(cache, KW_EVCACHE_VERDICT, shape, key, &m, 5);
    kw_evcache_sync(cache);
    return 0;
}

/* The verdict's planned looks from the final re-check's n0 requests: n0,
 * 2 n0, 4 n0, ... (the last clipped to KW_RESULTS_VERDICT_CAP), those after
 * the first only while the comparisons made (2 n requests each) stay within
 * the search's `budget` of simulated requests; a sample too short for a
 * paired interval (kw_simci_pair_batches 0: it could never resolve) is
 * neither made nor counted. ns[] gets them (at most KW_EVIDENCE_LOOKS_MAX);
 * returns their count. A pure function of (n0, budget, p): the looks are
 * fixed before any is read, as the Bonferroni bound needs. */
#define KW_EVIDENCE_LOOKS_MAX 64
static int kw_evidence_looks(long *ns, long n0, double budget, double p)
{
    int k = 0;
    double spent = 0;
    for (long n = n0;; n = n > KW_RESULTS_VERDICT_CAP / 2 ? KW_RESULTS_VERDICT_CAP : 2 * n) {
        if (n > n0 && !(spent + 2.0 * (double)n <= budget))
            break;
        if (kw_simci_pair_batches((size_t)n, p) > 0 && k < KW_EVIDENCE_LOOKS_MAX) {
            spent += 2.0 * (double)n;
            ns[k++] = n;
        }
        if (n >= KW_RESULTS_VERDICT_CAP)
            break;
    }
    return k;
}

int kw_evidence_verdict(kw_runsum *rs, const kw_evaluator *ev, const kw_evidence_pool *p)
{
    double pq = kw_results_primary_p(rs);
    if (!ev->paired || !(pq > 0))
        return 0;
    for (int i = 0; i < rs->n_shapes; i++) {
        kw_rs_shape *s = &rs->shapes[i];
        s->verdict_rival = -1;
        s->verdict_looks = 0;
        int rank2, ties, c2 = kw_results_rival(rs, i, &rank2, &ties);
        int es = kw_evidence_shape(ev, s->name);
        if (c2 < 0 || es < 0)
            continue;
        const kw_rs_config *c1 = &s->configs[s->ranked[0]], *cr = &s->configs[c2];
        double n0 = kw_runsum_value(rs, c1->recheck, KW_METRIC_NAME(KW_M_SAMPLES));
        if (!(n0 >= 1) || n0 > KW_RESULTS_VERDICT_CAP)
            continue;
        /* what the search simulated on this shape: the extension's budget */
        double budget = (double)s->evals_total * kw_runsum_value(rs, &c1->m, KW_METRIC_NAME(KW_M_SAMPLES));
        long ns[KW_EVIDENCE_LOOKS_MAX];
        int looks = kw_evidence_looks(ns, (long)n0, budget, pq);
        for (int l = 0; l < looks; l++) {
            kw_paired v = {.half = NAN};
            int rc = kw_evidence_pair(&v, ev, p, es, pq, &c1->cand, c1->id, &cr->cand, cr->id, ns[l]);
            if (rc == 1)
                break; /* cannot pair these: the separate intervals judge */
            if (rc != 0)
                return rc;
            /* the look's interval widened to its share of the sequence's
             * level, the run's 1 - alpha (kw_simci_pair_half_looks); the
             * record keeps the look's own 95% */
            v.half = kw_simci_pair_half_looks(v.half, v.batches, looks, rs->limits.alpha);
            if (isfinite(v.half)) {
                s->verdict = v;
                s->verdict_rival = c2;
                s->verdict_looks = looks;
            }
            if (kw_results_paired_resolved(&v, rs->limits.min_effect_pct))
                break;
        }
    }
    return 0;
}

int kw_evidence_run(kw_runsum *rs, const kw_evaluator *port_ev, const kw_evaluator *final_ev,
                    const kw_evidence_pool *p)
{
    int rc = 0;
    if (port_ev && (rc = kw_evidence_portability(rs, port_ev, p)) != 0)
        return rc;
    if (final_ev && (rc = kw_evidence_recheck(rs, final_ev, KW_EVIDENCE_RECHECK_TOP, p)) != 0)
        return rc;
    if (final_ev && (rc = kw_evidence_verdict(rs, final_ev, p)) != 0)
        return rc;
    /* none after an OFAT search (it evaluates every neighbour); an
     * interrupted run's files show what the journal has */
    if (port_ev && final_ev && (rc = kw_evidence_neighbours(rs, port_ev, p, NULL)) != 0)
        return rc;
    return 0;
}
