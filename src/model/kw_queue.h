/* kw_queue.h - closed-form queueing approximations: the cheap estimate of a
 * serving tail that screens candidates before the serving simulation runs.
 *
 * A G/G/c queue is summarised by its arrival rate, mean service time, server
 * count and the squared coefficients of variation of inter-arrival (ca2) and
 * service (cs2) times. The mean wait is the Allen-Cunneen approximation (the
 * Erlang C wait of M/M/c scaled by (ca2 + cs2) / 2; Kingman's formula when
 * c = 1); the wait distribution is taken as an atom at zero of mass 1 - P(wait)
 * and an exponential tail with the conditional mean wait, which is exact for
 * M/M/c. Cost: O(c) per queue. Used by the model evaluator's predict()
 * (kw_eval.c), never by the simulation itself.
 */
#ifndef KW_QUEUE_H
#define KW_QUEUE_H

typedef struct kw_queue_est {
    double rho;               /* utilisation of each server, arrival * service / servers */
    double p_wait;            /* probability an arrival waits (Erlang C of the M/M/c twin) */
    double wait_mean_us;      /* mean wait in queue (Allen-Cunneen) */
    double cond_wait_mean_us; /* mean wait of an arrival that waits */
    int saturated;            /* rho >= 1: no steady state, waits are +inf */
} kw_queue_est;

/* Erlang C: probability of waiting in M/M/c with offered load a = lambda / mu
 * (a < c), by the stable Erlang B recursion. */
double kw_queue_erlang_c(int servers, double offered);

/* The G/G/c estimate. arrival_per_us > 0, service_us > 0, servers >= 1,
 * ca2, cs2 >= 0; otherwise KW_EINPUT. rho >= 1 is not an error: saturated. */
int kw_queue_ggc(kw_queue_est *out, double arrival_per_us, double service_us, int servers,
                 double ca2, double cs2);

/* The q-quantile (0 < q < 1) of the wait under the estimate's distribution:
 * 0 when P(wait) <= 1 - q, else cond_wait_mean_us * ln(P(wait) / (1 - q)). */
double kw_queue_wait_quantile_us(const kw_queue_est *q, double quantile);

/* Squared coefficient of variation of the inter-arrival times of an
 * interrupted Poisson process (arrivals at on_rate_per_us while on, none
 * while off; exponential on and off periods of the given means). */
double kw_queue_ipp_ca2(double on_rate_per_us, double on_mean_us, double off_mean_us);

#endif
