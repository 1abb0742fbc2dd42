/* kw_limits.h - what the serving simulation can do, in one home: the sizes it
 * enforces and the range in which its clock arithmetic is exact enough.
 *
 * The simulator (kw_sim.c) enforces these at run time; the loaders and the
 * evaluator (kw_load.c, kw_eval.c) refuse inputs outside them when a
 * configuration is loaded, so `knobwise validate` reports them as FILE:LINE
 * and no tune starts a search that its final re-check cannot finish.
 *
 * The clock. Simulated times are doubles in microseconds. A double keeps 52
 * fraction bits, so at time T the smallest step the clock can take is
 * ulp(T) <= T * DBL_EPSILON. A duration d the simulation must resolve (one
 * request's service time, a burst's on-period) is held to a relative error of
 * KW_SIM_CLOCK_REL_TOL as long as
 *     T_end * DBL_EPSILON <= KW_SIM_CLOCK_REL_TOL * d,
 * where T_end is the simulated span (the last arrival). Past that the answer
 * degrades silently (at load="1e-13" a 20,000-request run spans ~1e17 us,
 * ulp 16 us, and every latency rounds to 0 or 16 us; with a 1e-20 us
 * on-period `t + on == t` and the arrival generator never advances), so such
 * inputs are refused with the range that would work.
 */
#ifndef KW_LIMITS_H
#define KW_LIMITS_H

#include <float.h>

#define KW_SIM_STREAM_MAX 256        /* request streams of one shape (stream ids are 8 bits) */
#define KW_SIM_BATCH_MAX 64          /* largest max_batch the service table may have */
#define KW_SIM_MAX_REQUESTS 50000000 /* warm-up + measured requests of one run (~40 B each) */
#define KW_SIM_WARMUP_DIV 10         /* the evaluator's warm-up: requests / 10 arrivals */

/* Relative error allowed on the shortest duration the clock must resolve: one
 * part per million, far below the sampling error of any tail percentile at
 * the sample sizes allowed here (>= 1/sqrt(5e7) = 1.4e-4). */
#define KW_SIM_CLOCK_REL_TOL 1e-6
/* Largest simulated span / shortest resolved duration: 1e-6 / 2^-52 = 4.5e9. */
#define KW_SIM_CLOCK_MAX_RATIO (KW_SIM_CLOCK_REL_TOL / DBL_EPSILON)

/* A bursty stream whose on/off cycles keep ending without an arrival this many
 * times in a row is refused rather than looped over: its periods are far
 * shorter than its gaps (the expected count is gap / period, so 1e6 empty
 * cycles means a ratio the model was never meant for). */
#define KW_SIM_MAX_EMPTY_CYCLES 1000000L
/* The chance, over a whole run, that some arrival waits KW_SIM_MAX_EMPTY_CYCLES
 * empty cycles which validate accepts: a shape whose bursts are sparser is
 * refused up front (kw_eval.c, the clock check), not after its run folder
 * exists. An on-period of exponential length with mean `on` ends empty with
 * probability 1 / (1 + a), a = the arrivals it holds on average, so M cycles
 * in a row come with probability (1 + a)^-M per arrival. */
#define KW_SIM_EMPTY_RISK 1e-6

/* Arrivals one simulation draws for `requests` measured ones (warm-up included). */
static inline long kw_sim_total_requests(long requests)
{
    return requests + requests / KW_SIM_WARMUP_DIV;
}

/* The largest measured sample whose warm-up still fits KW_SIM_MAX_REQUESTS. */
static inline long kw_sim_max_sample(void)
{
    long n = (long)KW_SIM_MAX_REQUESTS * KW_SIM_WARMUP_DIV / (KW_SIM_WARMUP_DIV + 1);
    while (kw_sim_total_requests(n + 1) <= KW_SIM_MAX_REQUESTS)
        n++;
    while (kw_sim_total_requests(n) > KW_SIM_MAX_REQUESTS)
        n--;
    return n;
}

#endif
