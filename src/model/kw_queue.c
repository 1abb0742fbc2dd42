/* kw_queue.c - closed-form queueing approximations (kw_queue.h).
 *
 * Design: the estimate is built from the three textbook results that a
 * serving queue's tail can be read from without simulating it, each cited
 * where it is used. It is not meant to be exact (contention, batch formation
 * and the finite sample are left out); the engine measures its error against
 * full evaluations per shape and only ever trusts it within that error. The
 * alternative rejected: a short serving simulation (say 100 requests) as the
 * cheap stage - its p95 is itself noisy (an order statistic of few samples)
 * and costs a fifth of the full one, where this costs O(servers).
 */
#include <math.h>

#include "kw_error.h"
#include "kw_queue.h"

double kw_queue_erlang_c(int servers, double offered)
{
    /* Erlang B by the recursion B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1))
     * (numerically stable for any c), then C = c B / (c - a (1 - B))
     * [Kleinrock, Queueing Systems vol. 1 (1975), eqs. 3.44-3.46]. */
    double b = 1.0;
    for (int k = 1; k <= servers; k++)
        b = offered * b / (k + offered * b);
    double c = servers;
    return c * b / (c - offered * (1.0 - b));
}

int kw_queue_ggc(kw_queue_est *out, double arrival_per_us, double service_us, int servers,
                 double ca2, double cs2)
{
    if (!(arrival_per_us > 0.0) || !(service_us > 0.0) || servers < 1 || !(ca2 >= 0.0) ||
        !(cs2 >= 0.0) || !isfinite(arrival_per_us) || !isfinite(service_us) || !isfinite(ca2) ||
        !isfinite(cs2))
        return kw_error_set(KW_EINPUT, "queue estimate: arrival rate %g /us, service %g us, "
                            "%d servers, ca2 %g, cs2 %g out of range",
                            arrival_per_us, service_us, servers, ca2, cs2);
    double offered = arrival_per_us * service_us;
    out->rho = offered / servers;
    if (out->rho >= 1.0) {
        out->saturated = 1;
        out->p_wait = 1.0;
        out->wait_mean_us = out->cond_wait_mean_us = HUGE_VAL;
        return 0;
    }
    out->saturated = 0;
    out->p_wait = kw_queue_erlang_c(servers, offered);
    /* Allen-Cunneen: Wq(G/G/c) ~= Wq(M/M/c) (ca2 + cs2) / 2, with
     * Wq(M/M/c) = C(c, a) / (c mu - lambda) [A. O. Allen, Probability,
     * Statistics and Queueing Theory, 2nd ed. (1990), sec. 6.4.4; for c = 1
     * it is Kingman's heavy-traffic formula, J. F. C. Kingman, "The single
     * server queue in heavy traffic", Proc. Camb. Phil. Soc. 57 (1961)]. */
    double scv = (ca2 + cs2) / 2.0;
    double mu_per_us = 1.0 / service_us;
    double mmc_cond_us = 1.0 / (servers * mu_per_us - arrival_per_us);
    out->cond_wait_mean_us = mmc_cond_us * scv;
    out->wait_mean_us = out->p_wait * out->cond_wait_mean_us;
    return 0;
}

double kw_queue_wait_quantile_us(const kw_queue_est *q, double quantile)
{
    if (q->saturated)
        return HUGE_VAL;
    double tail = 1.0 - quantile;
    if (q->p_wait <= tail || !(q->cond_wait_mean_us > 0.0))
        return 0.0;
    /* P(W > t) = P(wait) exp(-t / E[W | W > 0]): exact for M/M/c (the
     * conditional wait is exponential with rate c mu - lambda), an
     * approximation otherwise. */
    return q->cond_wait_mean_us * log(q->p_wait / tail);
}

double kw_queue_ipp_ca2(double on_rate_per_us, double on_mean_us, double off_mean_us)
{
    /* An IPP is a renewal process with hyperexponential gaps; with r1 = 1/on,
     * r2 = 1/off: c^2 = 1 + 2 lambda r1 / (r1 + r2)^2 [W. Fischer and K.
     * Meier-Hellstern, "The Markov-modulated Poisson process (MMPP) cookbook",
     * Performance Evaluation 18 (1993), sec. 4 (IPP as H2)]. Superposing n
     * independent copies keeps the asymptotic index of dispersion, so the
     * same value stands for the merged streams [W. Whitt, "Approximating a
     * point process by a renewal process", Oper. Res. 30 (1982), the
     * asymptotic method]. */
    if (!(off_mean_us > 0.0) || !(on_mean_us > 0.0) || !(on_rate_per_us > 0.0))
        return 1.0;
    double r1 = 1.0 / on_mean_us, r2 = 1.0 / off_mean_us;
    return 1.0 + 2.0 * on_rate_per_us * r1 / ((r1 + r2) * (r1 + r2));
}
