/* kw_pool.c - the parked thread team of kw_pool.h.
 *
 * A generation counter under one mutex: kw_pool_run bumps it and broadcasts;
 * each helper whose index is below the job's width runs the job and counts
 * itself done; the caller runs tid 0 and waits for the count. Helpers above
 * the width go back to sleep, so a pool of 8 runs a 2-thread job with 2.
 *
 * CPU-time accounting: every thread of a job reads its own
 * CLOCK_THREAD_CPUTIME_ID around the job, and the job adds the largest of
 * them to the pool's total (kw_pool_cpu_us). That is the job's critical path
 * in CPU time: what the job would take on idle cores, minus the wake-up, and
 * without the time the threads spent preempted by other processes. On a
 * shared host it measures the kernel, not the neighbours (knobwise-worker's
 * KW_WORKER_CLOCK=cpu). Cost: two clock reads per thread per job.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "kw_error.h"
#include "kw_pool.h"

struct kw_pool {
    int max_threads;
    pthread_t *threads;
    int started;          /* helpers created */
    pthread_mutex_t mu;
    pthread_cond_t wake;  /* helpers wait for a new generation */
    pthread_cond_t done;  /* the caller waits for pending == 0 */
    unsigned long gen;
    int width;            /* threads of the current job */
    int pending;          /* helpers of the current job not yet finished */
    int stop;
    kw_pool_fn fn;
    void *arg;
    double job_max_us;    /* largest thread CPU time of the current job */
    double cpu_us;        /* sum over jobs of job_max_us (kw_pool_cpu_us) */
};

static double kw_pool_thread_us(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0.0;
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

typedef struct kw_pool_helper {
    kw_pool *p;
    int tid;
} kw_pool_helper;

static kw_pool_helper *kw_pool_helpers_of(kw_pool *p)
{
    return (kw_pool_helper *)(p->threads + p->max_threads);
}

static void *kw_pool_main(void *v)
{
    kw_pool_helper *h = v;
    kw_pool *p = h->p;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->gen == seen)
            pthread_cond_wait(&p->wake, &p->mu);
        if (p->stop)
            break;
        seen = p->gen;
        if (h->tid >= p->width)
            continue;
        kw_pool_fn fn = p->fn;
        void *arg = p->arg;
        int n = p->width;
        pthread_mutex_unlock(&p->mu);
        double t0 = kw_pool_thread_us();
        fn(arg, h->tid, n);
        double used = kw_pool_thread_us() - t0;
        pthread_mutex_lock(&p->mu);
        if (used > p->job_max_us)
            p->job_max_us = used;
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int kw_pool_create(kw_pool **out, int max_threads)
{
    *out = NULL;
    if (max_threads < 1)
        return kw_error_set(KW_EINPUT, "thread pool: %d threads asked", max_threads);
    kw_pool *p = calloc(1, sizeof *p);
    if (!p)
        return kw_error_set(KW_ENOMEM, "thread pool: out of memory");
    p->max_threads = max_threads;
    /* one allocation: the thread handles, then the helpers' arguments */
    p->threads = calloc((size_t)max_threads, sizeof(pthread_t) + sizeof(kw_pool_helper));
    if (!p->threads) {
        free(p);
        return kw_error_set(KW_ENOMEM, "thread pool: out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    kw_pool_helper *h = kw_pool_helpers_of(p);
    for (int t = 1; t < max_threads; t++) {
        h[t].p = p;
        h[t].tid = t;
        if (pthread_create(&p->threads[t], NULL, kw_pool_main, &h[t]) != 0) {
            kw_pool_free(p);
            return kw_error_set(KW_ENOMEM, "thread pool: cannot start thread %d", t);
        }
        p->started = t;
    }
    *out = p;
    return 0;
}

void kw_pool_run(kw_pool *p, int n, kw_pool_fn fn, void *arg)
{
    if (n > p->max_threads)
        n = p->max_threads;
    if (n <= 1) {
        double t0 = kw_pool_thread_us();
        fn(arg, 0, 1);
        p->cpu_us += kw_pool_thread_us() - t0;
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->width = n;
    p->pending = n - 1;
    p->job_max_us = 0.0;
    p->gen++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    double t0 = kw_pool_thread_us();
    fn(arg, 0, n);
    double used = kw_pool_thread_us() - t0;
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->mu);
    p->cpu_us += used > p->job_max_us ? used : p->job_max_us;
    pthread_mutex_unlock(&p->mu);
}

double kw_pool_cpu_us(const kw_pool *p)
{
    return p ? p->cpu_us : 0.0;
}

int kw_pool_size(const kw_pool *p)
{
    return p ? p->max_threads : 0;
}

void kw_pool_free(kw_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int t = 1; t <= p->started; t++)
        pthread_join(p->threads[t], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p->threads);
    free(p);
}
