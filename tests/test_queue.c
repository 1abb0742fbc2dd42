/* test_queue.c - the closed-form queueing estimate (src/model/kw_queue.c) against
 * the queues whose answers are known exactly: M/M/1 and M/M/c (Erlang C, and
 * the exponential conditional wait), M/D/1 (Pollaczek-Khinchine), and the
 * interrupted Poisson process's gap variability against a sample of gaps
 * drawn here with GSL. */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

#include "kw_error.h"
#include "kw_queue.h"

TestSuite(queue);

static double rel(double a, double b) { return fabs(a - b) / fabs(b); }

Test(queue, mm1_is_exact)
{
    /* M/M/1, lambda = 0.8 /us, mu = 1 /us: P(wait) = rho, Wq = rho / (mu - lambda),
     * P(W > t) = rho exp(-(mu - lambda) t) */
    kw_queue_est q;
    cr_assert_eq(kw_queue_ggc(&q, 0.8, 1.0, 1, 1.0, 1.0), 0);
    cr_expect(rel(q.rho, 0.8) < 1e-12);
    cr_expect(rel(q.p_wait, 0.8) < 1e-12, "P(wait) %g", q.p_wait);
    cr_expect(rel(q.wait_mean_us, 0.8 / 0.2) < 1e-12, "Wq %g", q.wait_mean_us);
    double t95 = log(0.8 / 0.05) / 0.2;
    cr_expect(rel(kw_queue_wait_quantile_us(&q, 0.95), t95) < 1e-12);
    /* a quantile below the atom at zero: no wait */
    cr_expect_eq(kw_queue_wait_quantile_us(&q, 0.1), 0.0);
}

Test(queue, erlang_c_by_hand)
{
    /* c = 2, a = 1: C = (a^2/2! * 2/(2-1)) / (1 + a + a^2/2! * 2/(2-1)) = 1/3 */
    cr_expect(rel(kw_queue_erlang_c(2, 1.0), 1.0 / 3.0) < 1e-12);
    /* c = 1: C = rho */
    cr_expect(rel(kw_queue_erlang_c(1, 0.3), 0.3) < 1e-12);
    /* c = 4, a = 3.2 (rho 0.8), from the textbook sum formula computed here */
    double a = 3.2, sum = 0.0, term = 1.0;
    for (int k = 0; k < 4; k++) {
        sum += term;
        term *= a / (k + 1);
    }
    double top = term * 4.0 / (4.0 - a);
    cr_expect(rel(kw_queue_erlang_c(4, a), top / (sum + top)) < 1e-12);
}

Test(queue, mmc_wait_is_erlang_c_over_c_mu_minus_lambda)
{
    kw_queue_est q;
    double lambda = 3.2, mu = 1.0;
    cr_assert_eq(kw_queue_ggc(&q, lambda, 1.0 / mu, 4, 1.0, 1.0), 0);
    double C = kw_queue_erlang_c(4, lambda / mu);
    cr_expect(rel(q.wait_mean_us, C / (4 * mu - lambda)) < 1e-12);
    cr_expect(rel(kw_queue_wait_quantile_us(&q, 0.99), log(C / 0.01) / (4 * mu - lambda)) < 1e-12);
}

Test(queue, md1_is_pollaczek_khinchine)
{
    /* M/D/1 (ca2 = 1, cs2 = 0): Wq = rho / (2 mu (1 - rho)), Kingman is exact */
    kw_queue_est q;
    cr_assert_eq(kw_queue_ggc(&q, 0.5, 1.0, 1, 1.0, 0.0), 0);
    cr_expect(rel(q.wait_mean_us, 0.5 / (2 * 1.0 * 0.5)) < 1e-12, "Wq %g", q.wait_mean_us);
}

Test(queue, saturated_and_bad_input)
{
    kw_queue_est q;
    cr_assert_eq(kw_queue_ggc(&q, 2.0, 1.0, 2, 1.0, 1.0), 0);
    cr_expect(q.saturated);
    cr_expect(isinf(kw_queue_wait_quantile_us(&q, 0.95)));
    cr_expect_eq(kw_queue_ggc(&q, 0.0, 1.0, 1, 1.0, 1.0), KW_EINPUT);
    cr_expect_eq(kw_queue_ggc(&q, 1.0, 1.0, 0, 1.0, 1.0), KW_EINPUT);
    cr_expect_eq(kw_queue_ggc(&q, 1.0, NAN, 1, 1.0, 1.0), KW_EINPUT);
    cr_expect_eq(kw_queue_ggc(&q, 1.0, 1.0, 1, -1.0, 1.0), KW_EINPUT);
    cr_expect(strstr(kw_error_last(), "out of range") != NULL);
}

Test(queue, ipp_gap_variability_matches_a_sample)
{
    /* draw an IPP (rate 0.01 /us while on, on 2,000 us, off 8,000 us) and
     * compare the sample SCV of its gaps with the closed form */
    gsl_set_error_handler_off();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    cr_assert(r);
    gsl_rng_set(r, 7);
    const double lam = 0.01, on = 2000.0, off = 8000.0;
    enum { N = 200000 };
    double *gap = malloc(N * sizeof *gap);
    cr_assert(gap);
    double t = 0.0, last = 0.0, on_left = gsl_ran_exponential(r, on);
    for (int n = 0; n < N;) {
        double next = gsl_ran_exponential(r, 1.0 / lam);
        if (next < on_left) {
            on_left -= next;
            t += next;
            gap[n++] = t - last;
            last = t;
        } else {
            t += on_left + gsl_ran_exponential(r, off); /* memoryless: restart the draw */
            on_left = gsl_ran_exponential(r, on);
        }
    }
    double m = gsl_stats_mean(gap, 1, N), v = gsl_stats_variance_m(gap, 1, N, m);
    double want = kw_queue_ipp_ca2(lam, on, off);
    cr_expect(rel(v / (m * m), want) < 0.05, "sample SCV %g, closed form %g", v / (m * m), want);
    cr_expect(want > 1.0);
    /* never off: a Poisson process */
    cr_expect(rel(kw_queue_ipp_ca2(lam, on, 0.0), 1.0) < 1e-12);
    free(gap);
    gsl_rng_free(r);
}
