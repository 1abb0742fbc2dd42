/* test_estimate.c - the cheap stage's tail estimate (src/model/kw_estimate.c)
 * against closed forms: M/D/1 (Pollaczek-Khinchine, which the estimate must
 * reproduce exactly for Poisson arrivals on one group without batching), the
 * quasi-static burst rule on one stream (M/D/1 at the on-rate), saturation,
 * the fluid contention stretch, and, for M/D/c where no closed form is exact,
 * the serving simulation within Allen-Cunneen's known accuracy. Service
 * tables are built by hand, as in test_sim.c. */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <string.h>

#include "kw_error.h"
#include "kw_estimate.h"
#include "kw_sim.h"
#include "lib/kw_tl_model.h"

static kw_accel acc;
static kw_shape shp;
static kw_mapping map;
static kw_cost svc[8];

static void setup(void)
{
    gsl_set_error_handler_off();
    kw_tl_queue(&acc, &shp, &map);
    memset(svc, 0, sizeof svc);
}

TestSuite(estimate, .init = setup);

static void set_service(int r, double exec_us, double demand_bytes_per_us)
{
    kw_cost *c = &svc[r - 1];
    memset(c, 0, sizeof *c);
    c->n_kernels = 1;
    c->kernels[0].time_us = exec_us;
    c->kernels[0].dram_bytes_per_us = demand_bytes_per_us;
    c->kernels[0].prec = KW_PREC_BF16;
    c->latency_us = exec_us;
    c->dram_bytes = demand_bytes_per_us * exec_us;
    c->launches = 1;
}

Test(estimate, md1_mean_is_pollaczek_khinchine)
{
    const double t = 100.0, rho = 0.7;
    set_service(1, t, 0.0);
    kw_estimate e;
    cr_assert_eq(kw_estimate_tail(&e, &acc, &shp, &map, svc, rho / t * 1e6), 0, "%s", kw_error_last());
    double want = t + rho * t / (2.0 * (1.0 - rho)); /* W = S + rho S / (2 (1 - rho)) */
    cr_expect(fabs(e.mean_us - want) <= 1e-9 * want, "mean %g, P-K %g", e.mean_us, want);
    cr_expect(fabs(e.rho - rho) < 1e-12);
    cr_expect(!e.saturated);
    cr_expect(e.p95_us > e.p50_us && e.p99_us > e.p95_us);
}

Test(estimate, one_bursty_stream_is_md1_at_its_on_rate)
{
    const double t = 100.0, rho_on = 0.6;
    set_service(1, t, 0.0);
    shp.arrival = KW_ARRIVAL_BURSTY;
    shp.burst_on_ms = 50;
    shp.burst_off_ms = 150;
    shp.burst_factor = 2; /* the shape's rate x 2 while on */
    kw_estimate e;
    double rate = rho_on / t * 1e6 / shp.burst_factor;
    cr_assert_eq(kw_estimate_tail(&e, &acc, &shp, &map, svc, rate), 0, "%s", kw_error_last());
    double want = t + rho_on * t / (2.0 * (1.0 - rho_on));
    cr_expect(fabs(e.mean_us - want) <= 1e-9 * want, "mean %g, M/D/1 at the on-rate %g", e.mean_us, want);
    /* the mean utilisation counts the off time: 0.6 x 50 / 200 */
    cr_expect(fabs(e.rho - rho_on * 0.25) < 1e-12, "rho %g", e.rho);
}

Test(estimate, a_burst_beyond_capacity_builds_a_backlog_that_the_tail_shows)
{
    /* on-rate 1.5x capacity for bursts of 10 ms on average: a request a time
     * A into the burst waits 0.5 A, A ~ Exp(10 ms): p95 wait = 0.5 x 10 ms x ln 20 */
    const double t = 100.0;
    set_service(1, t, 0.0);
    shp.arrival = KW_ARRIVAL_BURSTY;
    shp.burst_on_ms = 10;
    shp.burst_off_ms = 90;
    shp.burst_factor = 1;
    kw_estimate e;
    cr_assert_eq(kw_estimate_tail(&e, &acc, &shp, &map, svc, 1.5 / t * 1e6), 0, "%s", kw_error_last());
    cr_expect(!e.saturated, "the mean load is 0.15");
    double want = t + 0.5 * 10000.0 * log(20.0);
    cr_expect(fabs(e.p95_us - want) <= 1e-6 * want, "p95 %g, want %g", e.p95_us, want);
}

Test(estimate, saturated_and_bad_input)
{
    set_service(1, 100.0, 0.0);
    kw_estimate e;
    cr_assert_eq(kw_estimate_tail(&e, &acc, &shp, &map, svc, 1.2e4), 0);
    cr_expect(e.saturated);
    cr_expect(isinf(e.p95_us));
    cr_expect_eq(kw_estimate_tail(&e, &acc, &shp, &map, svc, 0.0), KW_EINPUT);
    cr_expect(strstr(kw_error_last(), "arrival rate") != NULL);
}

Test(estimate, contention_stretches_by_the_fluid_rule)
{
    /* 2 groups, each kernel alone at half the bandwidth: with the other group
     * busy a share u of the time, the kernel runs at max(1, (0.5 + 0.5 u)) = 1,
     * so no stretch; at the full bandwidth each it is (1 + u). */
    acc.cores = 2;
    set_service(1, 100.0, 0.5e6);
    kw_estimate e;
    double rate = 0.5 * 2 / 100.0 * 1e6; /* u = 0.5 uncontended */
    cr_assert_eq(kw_estimate_tail(&e, &acc, &shp, &map, svc, rate), 0);
    cr_expect(fabs(e.rho - 0.5) < 1e-12, "no stretch below the bandwidth: rho %g", e.rho);
    set_service(1, 100.0, 1.0e6);
    cr_assert_eq(kw_estimate_tail(&e, &acc, &shp, &map, svc, rate), 0);
    /* the saturation utilisation is uncontended (as the simulation's capacity);
     * the latency is not: its base is at least the stretched 100 x (1 + u) */
    cr_expect(e.p50_us >= 100.0 * 1.5 - 1e-9, "p50 %g", e.p50_us);
}

Test(estimate, mdc_mean_wait_close_to_the_simulation)
{
    /* M/D/4 at rho 0.8: Allen-Cunneen halves the M/M/c wait; against the
     * simulation it is within ~10% (Allen 1990, Table 6.5 reports errors of a
     * few percent for M/D/c); the simulation sample is 200,000 requests. */
    acc.cores = 4;
    const double t = 100.0, rho = 0.8;
    set_service(1, t, 0.0);
    shp.streams = 4;
    double rate = rho * 4 / t * 1e6 / shp.streams;
    kw_estimate e;
    cr_assert_eq(kw_estimate_tail(&e, &acc, &shp, &map, svc, rate), 0);
    kw_sim_input in = {.accel = &acc, .shape = &shp, .mapping = &map, .service = svc,
                       .rate_per_s = rate, .trace_shape = -1};
    kw_sim_opts so = {.requests = 200000, .warmup = 4000, .seed = 9};
    kw_sim_result r;
    memset(&r, 0, sizeof r);
    cr_assert_eq(kw_sim_run(&r, &in, &so), 0, "%s", kw_error_last());
    double est_wait = e.mean_us - t;
    cr_expect(fabs(est_wait - r.wait_mean_us) <= 0.10 * r.wait_mean_us, "estimate %g us, simulated %g us",
              est_wait, r.wait_mean_us);
    kw_sim_result_clear(&r);
}

Test(estimate, a_greedy_batcher_queues_against_its_capacity)
{
    /* One group, no batch timeout, max_batch 8, a batch of any size served in
     * T = 100 us (no DRAM demand: no contention), lambda T = 0.9. One request
     * per batch keeps up (rho_1 = 0.9), but the batcher takes what has queued
     * when the group frees (kw_sim.c, Batcher (c); N. T. J. Bailey, "On
     * queueing processes with bulk service", J. R. Stat. Soc. B 16 (1954)), so
     * its capacity is 8 requests per T and rho_B = 0.9 / 8. Kingman's G/G/1
     * form at that utilisation (J. F. C. Kingman, Proc. Camb. Phil. Soc. 57
     * (1961); ca2 = 1, cs2 = 0) with P(wait) = rho_1: W = 0.9 T / (2 (1 -
     * 0.1125)) = 50.70 us, where the fixed batch of 1 (M/D/1, P-K) waits
     * 0.9 T / (2 x 0.1) = 450 us. */
    const double t = 100.0, lt = 0.9;
    map.max_batch = 8;
    for (int r = 1; r <= 8; r++)
        set_service(r, t, 0.0);
    kw_estimate e;
    cr_assert_eq(kw_estimate_tail(&e, &acc, &shp, &map, svc, lt / t * 1e6), 0, "%s", kw_error_last());
    double rho_b = lt / 8.0, kingman = lt * t / (2.0 * (1.0 - rho_b));
    cr_expect(!e.saturated);
    cr_expect(fabs(e.mean_us - (t + kingman)) <= 1e-9 * (t + kingman), "mean %g, Kingman at the capacity %g",
              e.mean_us, t + kingman);
    /* The batcher's exact mean wait here (renewal reward: busy a share u = lambda T
     * / (lambda T + exp(-lambda T)); PASTA, R. W. Wolff, Oper. Res. 30 (1982): an
     * arrival finds it busy with probability u and waits the residual, uniform on
     * [0, T]; exact while the arrivals during a batch fit in it, P(N > 8) < 1e-6)
     * is u T / 2 = 34.4 us: the estimate stays above it, within 1 / (1 - rho_B)
     * x rho_1 / u of it, and so does the simulation. */
    double u = lt / (lt + exp(-lt)), exact = u * t / 2.0;
    cr_expect(kingman >= exact && kingman <= exact * lt / u / (1.0 - rho_b) * (1.0 + 1e-9),
              "wait %g against the exact %g", kingman, exact);
    kw_sim_input in = {.accel = &acc, .shape = &shp, .mapping = &map, .service = svc,
                       .rate_per_s = lt / t * 1e6, .trace_shape = -1};
    kw_sim_opts so = {.requests = 100000, .warmup = 2000, .seed = 5};
    kw_sim_result r;
    memset(&r, 0, sizeof r);
    cr_assert_eq(kw_sim_run(&r, &in, &so), 0, "%s", kw_error_last());
    cr_expect(fabs(r.wait_mean_us - exact) <= 0.05 * exact, "simulated wait %g, exact %g", r.wait_mean_us,
              exact);
    kw_sim_result_clear(&r);
}
