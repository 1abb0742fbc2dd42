/* kw_evpool.h - the engine's evaluation jobs and the thread pool that runs them.
 *
 * A round's evaluations are jobs in one array; kw_evpool_run() runs the live
 * ones (listed by index) on the pool's threads plus the caller and returns when
 * all are done. Threads only ever call the evaluator: each takes jobs with one
 * atomic increment and writes into its own job slot, so there is no lock on
 * the hot path (the pool's mutex is touched twice per round). Which thread ran
 * a job never shows in a result: the engine reads the slots in job order.
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
    int screened;             /* live, but screened out: recorded as guard "screened" */
    int primary;              /* the primary metric's index (for a screened job) */
    const kw_jeval *je;
    int rc;
    double dur_s;             /* wall time of the call (scheduling only, never journalled) */
    kw_metrics m;
    char err[KW_GUARDS_LEN];  /* evaluator's message when rc != 0 */
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
    const kw_evaluator *ev;
} kw_evpool;

/* Start threads-1 workers (none for threads <= 1). On failure the workers
 * already started keep running: call kw_evpool_stop() in any case. */
int kw_evpool_start(kw_evpool *p, int threads, const kw_evaluator *ev);

/* Run jobs[live[0..n_live)] and return when every one is done. */
void kw_evpool_run(kw_evpool *p, kw_job *jobs, const size_t *live, size_t n_live);

/* Stop and join the workers, release the pool. */
void kw_evpool_stop(kw_evpool *p);

#endif
