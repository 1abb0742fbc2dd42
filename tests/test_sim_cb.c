/* test_sim_cb.c - continuous batching against iteration schedules worked by
 * hand. The iteration time is the closed form dt = 100 + 1 x prompt tokens +
 * 10 x decoding sequences (us), so every TTFT, TPOT, latency and throughput
 * below is arithmetic on that schedule, written out next to each case. */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"
#include "kw_sim_cb.h"
#include "kw_simci.h"

TestSuite(sim_cb);

static double linear(void *ctx, int pf_tokens, int pf_seqs, double pf_ctx, int dec, double dec_ctx)
{
    (void)pf_seqs;
    (void)pf_ctx;
    (void)dec_ctx;
    int *calls = ctx;
    (*calls)++;
    return 100.0 + pf_tokens + 10.0 * dec;
}

/* Two requests at 0, prompt 100, 3 output tokens, room for both:
 * it1 prefill 200: t = 300, both first tokens (TTFT 300)
 * it2 decode 2:    t = 420;  it3 decode 2: t = 540, both done
 * TPOT (540 - 300) / 2 = 120; 6 tokens in 540 us = 11,111.1 tokens/s. */
Test(sim_cb, whole_prompts_then_decodes)
{
    kw_cb_request r[2] = {{0, 100, 3}, {0, 100, 3}};
    kw_cb_config c = {.token_budget = 1000, .chunk_tokens = 0, .max_seqs = 8};
    kw_cb_result o;
    int calls = 0;
    cr_assert_eq(kw_sim_cb_run(&o, r, 2, &c, linear, &calls), 0, "%s", kw_error_last());
    cr_expect_eq(o.iterations, 3);
    cr_expect_eq(calls, 3);
    cr_expect_float_eq(o.ttft_p50_us, 300.0, 1e-9);
    cr_expect_float_eq(o.ttft_p99_us, 300.0, 1e-9);
    cr_expect_float_eq(o.tpot_p95_us, 120.0, 1e-9);
    cr_expect_float_eq(o.latency_p99_us, 540.0, 1e-9);
    cr_expect_float_eq(o.tokens_per_s, 6.0 / 540e-6, 1e-6);
    cr_expect_float_eq(o.requests_per_s, 2.0 / 540e-6, 1e-6);
}

/* Chunked prefill, chunk 64, one request prompt 100, 2 output tokens:
 * it1 64 prompt tokens: t = 164; it2 36: t = 300 (TTFT 300); it3 decode: t = 410. */
Test(sim_cb, chunked_prefill)
{
    kw_cb_request r[1] = {{0, 100, 2}};
    kw_cb_config c = {.token_budget = 1000, .chunk_tokens = 64, .max_seqs = 8};
    kw_cb_result o;
    int calls = 0;
    cr_assert_eq(kw_sim_cb_run(&o, r, 1, &c, linear, &calls), 0, "%s", kw_error_last());
    cr_expect_eq(o.iterations, 3);
    cr_expect_float_eq(o.ttft_p50_us, 300.0, 1e-9);
    cr_expect_float_eq(o.tpot_p50_us, 110.0, 1e-9);
    cr_expect_float_eq(o.latency_p50_us, 410.0, 1e-9);
}

/* Token budget 150, two requests at 0, prompt 100, 2 output tokens:
 * it1 r1 100 + r2 50 prompt tokens: t = 250, r1 first token (TTFT 250)
 * it2 r1 decodes, r2's last 50: t = 250 + 100 + 50 + 10 = 410: r1 done
 *     (TPOT 160), r2 first token (TTFT 410)
 * it3 r2 decodes: t = 520, done (TPOT 110).
 * TTFT p50 of {250, 410} = 330 (linear interpolation between order statistics). */
Test(sim_cb, token_budget_mixes_prefill_and_decode)
{
    kw_cb_request r[2] = {{0, 100, 2}, {0, 100, 2}};
    kw_cb_config c = {.token_budget = 150, .chunk_tokens = 0, .max_seqs = 8};
    kw_cb_result o;
    int calls = 0;
    cr_assert_eq(kw_sim_cb_run(&o, r, 2, &c, linear, &calls), 0, "%s", kw_error_last());
    cr_expect_eq(o.iterations, 3);
    cr_expect_float_eq(o.ttft_p50_us, 330.0, 1e-9);
    cr_expect_float_eq(o.latency_p50_us, (410.0 + 520.0) / 2.0, 1e-9);
    cr_expect_float_eq(o.tpot_p50_us, (160.0 + 110.0) / 2.0, 1e-9);
    cr_expect_float_eq(o.tokens_per_s, 4.0 / 520e-6, 1e-6);
}

/* max_seqs 1: the second request waits for the first to leave.
 * it1 r1 prefill 10: t = 110; it2 decode: t = 220 (r1 done);
 * it3 r2 prefill: t = 330 (TTFT 330); it4: t = 440. Then an arrival at
 * 1000 finds the engine idle: it5 prefill t = 1110, it6 t = 1220. */
Test(sim_cb, admission_waits_and_idle_gaps)
{
    kw_cb_request r[3] = {{0, 10, 2}, {0, 10, 2}, {1000, 10, 2}};
    kw_cb_config c = {.token_budget = 1000, .chunk_tokens = 0, .max_seqs = 1};
    kw_cb_result o;
    int calls = 0;
    cr_assert_eq(kw_sim_cb_run(&o, r, 3, &c, linear, &calls), 0, "%s", kw_error_last());
    cr_expect_eq(o.iterations, 6);
    cr_expect_float_eq(o.ttft_p50_us, 110.0, 1e-9);         /* {110, 330, 110} sorted */
    cr_expect_float_eq(o.latency_p99_us, 440.0 - 0.02 * (440.0 - 220.0), 1e-9);
    cr_expect_float_eq(o.makespan_us, 1220.0, 1e-9);
}

/* The TTFT and TPOT p99 intervals (stop 48: the rollback ceilings' own
 * margins) are kw_simci_interval's over the requests' own figures in time
 * order. 500 requests 10 ms apart, each alone in the engine (the longest
 * takes 100 + 1000 + 19 x 110 us): TTFT_i = 100 + prompt_i (one prefill
 * iteration), so the TTFTs are known without the simulation, and every
 * decode iteration is 100 + 10 = 110 us, so every TPOT is 110 and its
 * interval [110, 110]. */
Test(sim_cb, ttft_and_tpot_p99_intervals_are_the_simulations_interval_of_their_requests)
{
    enum { N = 500 };
    kw_cb_request *r = malloc(N * sizeof *r);
    double *ttft = malloc(N * sizeof *ttft);
    cr_assert(r && ttft);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(g, 48);
    for (int i = 0; i < N; i++) {
        r[i] = (kw_cb_request){1e4 * i, 1 + (int)gsl_rng_uniform_int(g, 1000),
                               2 + (int)gsl_rng_uniform_int(g, 19)};
        ttft[i] = 100.0 + r[i].prompt_tokens;
    }
    gsl_rng_free(g);
    kw_cb_config c = {.token_budget = 4096, .chunk_tokens = 0, .max_seqs = 8};
    kw_cb_result o;
    int calls = 0;
    cr_assert_eq(kw_sim_cb_run(&o, r, N, &c, linear, &calls), 0, "%s", kw_error_last());
    double lo, hi;
    cr_assert_eq(kw_simci_interval(&lo, &hi, ttft, N, 0.99), 0);
    cr_expect(o.ttft_p99_ci_lo_us == lo && o.ttft_p99_ci_hi_us == hi, "[%.17g, %.17g] vs [%.17g, %.17g]",
              o.ttft_p99_ci_lo_us, o.ttft_p99_ci_hi_us, lo, hi);
    gsl_sort(ttft, 1, N);
    cr_expect_float_eq(o.ttft_p99_us, gsl_stats_quantile_from_sorted_data(ttft, 1, N, 0.99), 1e-9);
    cr_expect(lo <= o.ttft_p99_us && o.ttft_p99_us < hi && hi <= ttft[N - 1], "[%g, %g] around %g", lo, hi,
              o.ttft_p99_us);
    cr_expect_float_eq(o.tpot_p99_us, 110.0, 1e-9);
    cr_expect_float_eq(o.tpot_p99_ci_lo_us, 110.0, 1e-9);
    cr_expect_float_eq(o.tpot_p99_ci_hi_us, 110.0, 1e-9);
    free(ttft);
    free(r);
}

/* Whether a sample can bound a p99 from above at 95%: the order-statistic
 * interval's upper rank n p + 1.96 sqrt(n p (1 - p)) (normal approximation
 * of the binomial) must be within the sample. Worked: n = 380: 376.2 + 3.80
 * = 380.0015, rank 381 > 380, not held; n = 381: 377.19 + 3.806 = 380.996,
 * rank 381, held. At 200 the largest sample lies below the true p99 with
 * probability 0.99^200 = 13%. */
Test(sim_cb, a_p99_needs_381_samples_for_its_interval_to_bound_it_from_above)
{
    cr_expect(!kw_simci_upper_held(200, 0.99));
    cr_expect(pow(0.99, 200) > 0.025);
    cr_expect(!kw_simci_upper_held(380, 0.99));
    cr_expect(kw_simci_upper_held(381, 0.99));
    cr_expect(kw_simci_upper_held(1000, 0.99));
    cr_expect(kw_simci_upper_held(100, 0.95)); /* 95 + 4.27: rank 100 */
    cr_expect(!kw_simci_upper_held(0, 0.99));
}

Test(sim_cb, bad_input)
{
    kw_cb_request r[2] = {{10, 100, 2}, {0, 100, 2}};
    kw_cb_config c = {.token_budget = 100, .chunk_tokens = 0, .max_seqs = 1};
    kw_cb_result o;
    int calls = 0;
    cr_expect_eq(kw_sim_cb_run(&o, r, 2, &c, linear, &calls), KW_EINPUT); /* out of order */
    c.token_budget = 0;
    cr_expect_eq(kw_sim_cb_run(&o, r, 1, &c, linear, &calls), KW_EINPUT);
}

/* KV capacity 250 tokens, each request reserving prompt 100 + output 2 = 102:
 * two fit (204), the third waits until one leaves. Requests at 0:
 * it1 r1, r2 prefill 200: t = 300; it2 decode 2: t = 420, both done;
 * it3 r3 prefill 100: t = 620 (TTFT 620); it4: t = 730. With pages of 64
 * tokens each reserves 128: only one fits at a time. */
Test(sim_cb, kv_capacity_queues_admission)
{
    kw_cb_request r[3] = {{0, 100, 2}, {0, 100, 2}, {0, 100, 2}};
    kw_cb_config c = {.token_budget = 1000, .chunk_tokens = 0, .max_seqs = 8, .kv_tokens_max = 250};
    kw_cb_result o;
    int calls = 0;
    cr_assert_eq(kw_sim_cb_run(&o, r, 3, &c, linear, &calls), 0, "%s", kw_error_last());
    cr_expect_eq(o.iterations, 4);
    cr_expect_float_eq(o.ttft_p99_us, 300.0 + 0.98 * (620.0 - 300.0), 1e-9);
    cr_expect_float_eq(o.makespan_us, 730.0, 1e-9);
    c.page_tokens = 64;
    cr_assert_eq(kw_sim_cb_run(&o, r, 3, &c, linear, &calls), 0, "%s", kw_error_last());
    cr_expect_eq(o.iterations, 6); /* one at a time: 3 x (prefill + decode) */
    c.kv_tokens_max = 100; /* a request that can never fit is an input error */
    cr_expect_eq(kw_sim_cb_run(&o, r, 3, &c, linear, &calls), KW_EINPUT);
}

/* ---- pairing two schedules on the same requests (kw_sim_cb_run_seq) ----
 * One sequence at a time (max_seqs 1), every request one prompt token and one
 * output token, each iteration D us: the scheduler is then a FIFO M/D/1
 * queue (a request's only iteration emits its one token). Its waiting time
 * W (in units of D, load rho) has Erlang's distribution
 *   P(W <= t) = (1 - rho) sum_{k=0}^{floor(t)} (rho (k - t))^k / k! e^{-rho (k - t)}
 * (A. K. Erlang 1909; J. G. Franx, "A simple solution for the M/D/c waiting
 * time distribution", Operations Research Letters 29(5), 2001, with c = 1),
 * and a request's latency is D (W + 1). Two schedules on the same Poisson
 * arrivals, D = 100 us and 80 us (loads 0.7 and 0.56): the paired interval
 * of their p95 difference covers 100 (w95(0.7) + 1) - 80 (w95(0.56) + 1). */
static double md1_wait_cdf(double t, double rho)
{
    double f = 0;
    for (int k = 0; k <= (int)floor(t); k++) {
        double x = rho * (k - t);
        f += pow(x, k) / tgamma(k + 1.0) * exp(-x);
    }
    return (1 - rho) * f;
}

static double md1_wait_quantile(double q, double rho)
{
    double lo = 0, hi = 200;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (md1_wait_cdf(mid, rho) < q)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

static double constant_iter(void *ctx, int pf_tokens, int pf_seqs, double pf_ctx, int dec, double dec_ctx)
{
    (void)pf_tokens;
    (void)pf_seqs;
    (void)pf_ctx;
    (void)dec;
    (void)dec_ctx;
    return *(const double *)ctx;
}

Test(sim_cb, two_schedules_pair_on_the_same_requests_and_cover_the_md1_difference)
{
    /* Erlang's formula checked against its mean, rho / (2 (1 - rho)) (its
     * alternating sum loses digits as t grows: e^{2 rho t} over its terms,
     * so the check stops at t = 16, where under 1e-3 of the mean is left) */
    double mean = 0;
    for (double t = 0.0005; t < 16; t += 0.001)
        mean += (1 - md1_wait_cdf(t, 0.7)) * 0.001;
    cr_assert(fabs(mean - 0.7 / 0.6) < 2e-3, "M/D/1 mean wait %.4f, want %.4f", mean, 0.7 / 0.6);
    const double d[2] = {100.0, 80.0}, rho = 0.7, lam = rho / d[0];
    const double truth = d[0] * (md1_wait_quantile(0.95, rho) + 1) -
                         d[1] * (md1_wait_quantile(0.95, rho * d[1] / d[0]) + 1);
    const int n = 40000, reps = 100;
    kw_cb_request *r = malloc(sizeof *r * n);
    double *lat = malloc(2 * sizeof *lat * n);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_taus2);
    cr_assert(r && lat && g);
    kw_cb_config c = {.token_budget = 1000, .chunk_tokens = 0, .max_seqs = 1};
    int covered = 0, own = 0;
    const double p95_100 = d[0] * (md1_wait_quantile(0.95, rho) + 1);
    for (int k = 0; k < reps; k++) {
        gsl_rng_set(g, 500 + (unsigned long)k);
        double t = 0;
        for (int i = 0; i < n; i++) {
            t += gsl_ran_exponential(g, 1.0 / lam);
            r[i] = (kw_cb_request){t, 1, 1};
        }
        kw_cb_result o[2];
        for (int j = 0; j < 2; j++)
            cr_assert_eq(kw_sim_cb_run_seq(&o[j], lat + j * n, r, n, &c, constant_iter, (void *)&d[j]), 0, "%s",
                         kw_error_last());
        double sorted[2] = {o[0].latency_p95_us, o[1].latency_p95_us};
        for (int j = 0; j < 2 && k == 0; j++) { /* element i is request i's latency: its p95 is the run's */
            double *x = malloc(sizeof *x * n);
            cr_assert_not_null(x);
            memcpy(x, lat + j * n, sizeof *x * n);
            gsl_sort(x, 1, n);
            sorted[j] = gsl_stats_quantile_from_sorted_data(x, 1, n, 0.95);
            free(x);
            cr_assert_float_eq(sorted[j], o[j].latency_p95_us, 1e-9);
        }
        double diff, half;
        int nb;
        cr_assert_eq(kw_simci_paired(&diff, &half, &nb, lat, lat + n, n, 0.95), 0);
        cr_assert(isfinite(half) && nb > 0);
        cr_assert_float_eq(diff, sorted[0] - sorted[1], 1e-6);
        covered += fabs(diff - truth) <= half;
        double lo, hi; /* the D = 100 schedule's own p95 interval (kw_eval_cb's since stop 43) */
        cr_assert_eq(kw_simci_interval(&lo, &hi, lat, n, 0.95), 0);
        own += lo <= p95_100 && p95_100 <= hi;
    }
    cr_log_info("M/D/1 D 100 us: its own p95 interval covers %.2f us in %d of %d", p95_100, own, reps);
    cr_expect_geq(own, 88, "the p95 interval covers %d of %d", own, reps);
    cr_log_info("M/D/1 pair, D 100 vs 80 us, rho 0.7, %d requests: truth %.2f us, covered in %d of %d", n, truth,
                covered, reps);
    /* Binomial(100, 0.95): sd 2.2; 88 is 3.2 sd below */
    cr_expect_geq(covered, 88, "the paired interval covers %d of %d", covered, reps);
    cr_expect_leq(covered, 99, "a 95%% interval that never misses is too wide");
    gsl_rng_free(g);
    free(lat);
    free(r);
}
