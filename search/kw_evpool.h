/* kw_evpool.h - the engine's evaluation jobs and the thread pool that runs them.
 *
 * A round's evaluations are jobs in one array; kw_evpool_run() runs the live
 * ones (listed by index) on the pool's threads plus the caller and returns when
 * all are done. Threads only ever call the evaluator: each takes jobs with one
 * atomic increment and writes into its own job slot, so there is no lock on
 * the hot path (the pool's mutex is touched twice per round). Which thread ran
 * a job never shows in a result: the engine reads the slots in job order.
 *
 * One pool per process: the evaluator is named per run, not per pool, so the
 * run module (src/kw_run.c) starts one pool, the engine's rounds run on it
 * (kw_engine_opts.pool) and so do the evaluations after the search (the
 * evidence phase: re-checks, portability, kw_evidence.c) with their own
 * evaluators. Rejected: a second pool for the evidence (two sets of threads
 * in one process, sized apart).
 */
#ifndef KW_EVPOOL_H
#define KW_EVPOOL_H

#include <pthread.h>
#include <stddef.h>

#include "kw_journal.h"
#include "kw_search.h"

typedef struct kw_job {
    kw_cand cand;
    uint64_t id;
    int shape, rep;
    int live;                 /* call the evaluator (else replayed from je) */
    int device;               /* the device its lane runs it on (read by kw_evpool_run_lanes only) */
    int screened;             /* live, but screened out: recorded as guard "screened" */
    int primary;              /* the primary metric's index (for a screened job) */
    const kw_jeval *je;
    int rc;
    double dur_s;             /* wall time of the call (scheduling only, never journalled) */
    kw_metrics m;
    char err[KW_GUARDS_LEN];  /* evaluator's message when rc != 0 */
    /* aliases (kw_engine.c): alias 1 = this job takes entry alias_ent's result (live
     * only under opts.alias_check); alias 0 with alias_ent >= 0 = this job is that
     * entry's original; -1: neither */
    int alias;
    long alias_ent;
} kw_job;

typedef struct kw_evpool {
    pthread_t *tids;
    int n;                    /* worker threads (the caller is one more) */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned gen;
    int quit, busy;
    kw_job *jobs;
    const size_t *live;
    size_t n_live;
    size_t next;              /* atomic */
    const kw_evaluator *ev;   /* this run's evaluator */
    int width;                /* this run's threads, the caller included (0: all) */
    int joined;               /* atomic: threads that took part in this run */
    const size_t *lane_at;    /* lanes: lane i is live[lane_at[i] .. lane_at[i + 1]); NULL: none */
    size_t n_lanes;
} kw_evpool;

/* Start threads-1 workers (none for threads <= 1: the caller runs every job).
 * On failure the workers already started keep running: call kw_evpool_stop()
 * in any case. */
int kw_evpool_start(kw_evpool *p, int threads);

/* Run jobs[live[0..n_live)] through ev and return when every one is done. */
void kw_evpool_run(kw_evpool *p, const kw_evaluator *ev, kw_job *jobs, const size_t *live,
                   size_t n_live);

/* As kw_evpool_run on at most width threads, the caller included (width <= 0:
 * all of them): `mpirun` sizes the pool for every rank's slots, and what runs
 * in this process only (the evidence phase) takes the local --threads. */
void kw_evpool_run_width(kw_evpool *p, const kw_evaluator *ev, kw_job *jobs, const size_t *live,
                         size_t n_live, int width);

/* Run lanes: lane i is jobs[live[lane_at[i]]] .. jobs[live[lane_at[i + 1] - 1]],
 * run in that order by one thread, the lanes at once (each job's `device` set
 * for ev->eval_on). Returns when every lane is done. */
void kw_evpool_run_lanes(kw_evpool *p, const kw_evaluator *ev, kw_job *jobs, const size_t *live,
                         const size_t *lane_at, size_t n_lanes);

/* Stop and join the workers, release the pool. */
void kw_evpool_stop(kw_evpool *p);

#endif
