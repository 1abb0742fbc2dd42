/* kw_pool.h - a fixed pool of worker threads that the CPU kernels (and
 * `knobwise probe`, which times its wake-up as the host's "launch" cost) run
 * on. One job at a time: kw_pool_run wakes n-1 parked threads, runs the job on
 * them and on the caller, and returns when all n are done.
 *
 * Design choice: threads are created once and parked on a condition variable
 * between jobs, as a CPU runtime (OpenMP, oneDNN) keeps its team, so a
 * measured kernel pays one wake-up, not a pthread_create per call. Spinning
 * would wake faster but steals the core from the other engineers' jobs on a
 * shared host. */
#ifndef KW_POOL_H
#define KW_POOL_H

typedef struct kw_pool kw_pool;

/* The job: called once per thread with tid in [0, n). */
typedef void (*kw_pool_fn)(void *arg, int tid, int n);

/* A pool able to run jobs on up to max_threads threads (the caller counts as
 * one). *out owned by the caller (kw_pool_free). 0 or a negative KW_E* code. */
int kw_pool_create(kw_pool **out, int max_threads);
/* Run fn on n threads (1 <= n <= max_threads; n = 1 runs it on the caller). */
void kw_pool_run(kw_pool *p, int n, kw_pool_fn fn, void *arg);
int kw_pool_size(const kw_pool *p);
/* CPU microseconds of the critical paths of every job run so far: per job,
 * the largest CPU time (CLOCK_THREAD_CPUTIME_ID) any of its threads spent in
 * it. Differences of two reads time the jobs between them in CPU time. Read
 * it from the thread that calls kw_pool_run. */
double kw_pool_cpu_us(const kw_pool *p);
/* Joins the threads; accepts NULL. */
void kw_pool_free(kw_pool *p);

#endif
