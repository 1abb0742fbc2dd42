/* kw_evpool.c - evaluation jobs on a thread pool (see kw_evpool.h).
 *
 * A generation counter wakes the workers for a round; the caller drains jobs
 * too and then waits for the busy count to reach zero. Rejected: a thread per
 * job (thread start-up dominates the model's microsecond evaluations) and a
 * locked queue (a lock per job on the hot path).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kw_evpool.h"

/* Run j through ev: on device `device` (ev->eval_on) when it is >= 0. */
static void kw_job_run(kw_job *j, const kw_evaluator *ev, int device)
{
    memset(&j->m, 0, sizeof j->m);
    kw_error_clear();
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (j->screened) {
        /* opts.screen: not evaluated; every metric 0 but the primary, +inf */
        j->rc = 0;
        j->m.v[j->primary] = HUGE_VAL;
        snprintf(j->m.guards, sizeof j->m.guards, "screened");
        snprintf(j->m.klass, sizeof j->m.klass, "screened");
        j->dur_s = 0;
        return;
    }
    j->rc = device >= 0 && ev->eval_on
                ? ev->eval_on(ev->ctx, device, &j->cand, j->shape, j->rep, &j->m)
                : ev->eval(ev->ctx, &j->cand, j->shape, j->rep, &j->m);
    clock_gettime(CLOCK_MONOTONIC, &b);
    j->dur_s = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
    j->m.guards[KW_GUARDS_LEN - 1] = '\0';
    j->m.klass[sizeof j->m.klass - 1] = '\0';
    if (j->rc != 0)
        snprintf(j->err, sizeof j->err, "%s", kw_error_last());
}

static void kw_evpool_drain(kw_evpool *p)
{
    while (p->lane_at) { /* a lane at a time, its jobs in order */
        size_t l = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (l >= p->n_lanes)
            return;
        for (size_t i = p->lane_at[l]; i < p->lane_at[l + 1]; i++)
            kw_job_run(&p->jobs[p->live[i]], p->ev, p->jobs[p->live[i]].device);
    }
    for (;;) {
        size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->n_live)
            return;
        kw_job_run(&p->jobs[p->live[i]], p->ev, -1);
    }
}

static void *kw_evpool_main(void *arg)
{
    kw_evpool *p = arg;
    unsigned seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        /* the caller is one of the width */
        if (p->width <= 0 || __atomic_add_fetch(&p->joined, 1, __ATOMIC_RELAXED) < p->width)
            kw_evpool_drain(p);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int kw_evpool_start(kw_evpool *p, int threads)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    if (threads <= 1)
        return 0;
    p->tids = calloc((size_t)threads - 1, sizeof *p->tids);
    if (!p->tids)
        return kw_error_set(KW_ENOMEM, "out of memory starting threads");
    for (int i = 0; i < threads - 1; i++) {
        if (pthread_create(&p->tids[i], NULL, kw_evpool_main, p) != 0)
            return kw_error_set(KW_ENOMEM, "cannot start evaluation thread %d of %d", i + 2, threads);
        p->n++;
    }
    return 0;
}

void kw_evpool_run(kw_evpool *p, const kw_evaluator *ev, kw_job *jobs, const size_t *live,
                   size_t n_live)
{
    kw_evpool_run_width(p, ev, jobs, live, n_live, 0);
}

void kw_evpool_run_lanes(kw_evpool *p, const kw_evaluator *ev, kw_job *jobs, const size_t *live,
                         const size_t *lane_at, size_t n_lanes)
{
    p->lane_at = lane_at;
    p->n_lanes = n_lanes;
    /* as many threads as lanes (the caller one of them): n_live > 1 wakes them */
    kw_evpool_run_width(p, ev, jobs, live, n_lanes, n_lanes > 0 ? (int)n_lanes : 1);
    p->lane_at = NULL;
    p->n_lanes = 0;
}

void kw_evpool_run_width(kw_evpool *p, const kw_evaluator *ev, kw_job *jobs, const size_t *live,
                         size_t n_live, int width)
{
    p->ev = ev;
    p->jobs = jobs;
    p->live = live;
    p->n_live = n_live;
    p->width = width;
    __atomic_store_n(&p->next, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&p->joined, 0, __ATOMIC_RELAXED);
    if (p->n > 0 && n_live > 1 && width != 1) {
        pthread_mutex_lock(&p->mu);
        p->busy = p->n;
        p->gen++;
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
        kw_evpool_drain(p);
        pthread_mutex_lock(&p->mu);
        while (p->busy > 0)
            pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    } else {
        kw_evpool_drain(p);
    }
}

void kw_evpool_stop(kw_evpool *p)
{
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++)
        pthread_join(p->tids[i], NULL);
    free(p->tids);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
}
