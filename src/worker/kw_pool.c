/* kw_pool.c - the parked thread team of kw_pool.h.
 *
 * A generation counter under one mutex: kw_pool_run bumps it and broadcasts;
 * each helper whose index is below the job's width runs the job and counts
 * itself done; the caller runs tid 0 and waits for the count. Helpers above
 * the width go back to sleep, so a pool of 8 runs a 2-thread job with 2.
 */
#include <pthread.h>
#include <stdlib.h>

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
};

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
        fn(arg, h->tid, n);
        pthread_mutex_lock(&p->mu);
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
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->width = n;
    p->pending = n - 1;
    p->gen++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0, n);
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
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
