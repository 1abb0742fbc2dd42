/* kw_estimate.h - the cheap stage of a multi-fidelity evaluation: stage 1's
 * service times plus a closed-form queueing estimate of the serving tail
 * (kw_queue.h) instead of the serving simulation. The model evaluator's
 * predict() (kw_eval.c) is built on it; the engine ranks and screens
 * candidates with it and trusts it only within its measured error. */
#ifndef KW_ESTIMATE_H
#define KW_ESTIMATE_H

#include "kw_cost.h"
#include "kw_model.h"

typedef struct kw_estimate {
    double p50_us, p95_us, p99_us, mean_us; /* latency quantiles (+inf when saturated) */
    double wait_p95_us;                     /* the queue-wait part of p95 */
    double rho;                             /* utilisation of each server at the chosen batch */
    int batch;                              /* requests per batch the estimate assumes */
    int saturated;                          /* no batch size keeps up with the arrivals */
} kw_estimate;

/* Estimate the tail of shape s (per-stream rate rate_per_s; a trace shape is
 * taken as Poisson at that rate) under mapping m on accelerator a, with the
 * service table svc[r-1] for r = 1..m->max_batch (kw_cost_eval). KW_EINPUT
 * when the rate or a service time is not positive. Cost: O(max_batch x cores). */
int kw_estimate_tail(kw_estimate *out, const kw_accel *a, const kw_shape *s, const kw_mapping *m,
                     const kw_cost *svc, double rate_per_s);

#endif
