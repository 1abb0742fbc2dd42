/* test_saturation.c - the simulation names a queue that cannot keep up
 * (kw_sim.c "Saturation"), against closed forms.
 *
 * Deterministic arrivals (a replayed trace, one every gap_us) on one core with
 * max_batch 1 and a fixed service time tau_us: the offered utilisation is
 * exactly rho = rate x service time = tau / gap. Over 1 the queue grows by
 * (1 - 1/rho) requests per arrival, so after R arrivals the last request has
 * waited (R - 1)(tau - gap), and its backlog drains for R tau - (R - 1) gap
 * after the last arrival; under 1 no request ever waits. The service table is
 * built by hand (no cost model), as in test_sim.c. */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <string.h>

#include "kw_error.h"
#include "kw_sim.h"

#define SAT_N 4000 /* trace rows = measured requests (no warm-up) */

static kw_accel acc;
static kw_shape shp;
static kw_mapping map;
static kw_cost svc[4];
static double t_us[SAT_N];
static int strm[SAT_N], shp_idx[SAT_N];
static kw_trace tr;

static void setup(void)
{
    gsl_set_error_handler_off();
    memset(&acc, 0, sizeof acc);
    acc.cores = 1;
    acc.dram_bw_bytes_per_s = 0; /* unlimited: no contention */
    memset(&shp, 0, sizeof shp);
    snprintf(shp.name, sizeof shp.name, "s");
    shp.streams = 1;
    shp.arrival = KW_ARRIVAL_TRACE;
    memset(&map, 0, sizeof map);
    map.max_batch = 1;
    map.placement = KW_PLACE_LEAST_LOADED;
    map.cores_per_request = 1;
}

TestSuite(saturation, .init = setup);

static void service(double tau_us)
{
    memset(svc, 0, sizeof svc);
    kw_kernel *k = &svc[0].kernels[0];
    snprintf(k->name, sizeof k->name, "k");
    k->time_us = tau_us;
    k->prec = KW_PREC_BF16;
    svc[0].n_kernels = 1;
    svc[0].launches = 1;
    svc[0].latency_us = tau_us;
}

static void run(kw_sim_result *res, double gap_us, double tau_us, int requests)
{
    for (int i = 0; i < requests; i++) {
        t_us[i] = i * gap_us;
        strm[i] = 0;
        shp_idx[i] = 0;
    }
    tr = (kw_trace){.n = (size_t)requests, .time_us = t_us, .stream = strm, .shape = shp_idx};
    service(tau_us);
    kw_sim_input in = {.accel = &acc, .shape = &shp, .mapping = &map, .service = svc,
                       .trace = &tr, .trace_shape = -1};
    kw_sim_opts o = {.requests = requests, .warmup = 0, .seed = 1};
    cr_assert_eq(kw_sim_run(res, &in, &o), 0, "%s", kw_error_last());
}

Test(saturation, utilisation_over_one_is_named)
{
    const double gap_us = 100.0, tau_us = 150.0; /* rho = 1.5 */
    kw_sim_result r;
    run(&r, gap_us, tau_us, SAT_N);
    cr_assert_float_eq(r.offered_rps, 1e6 / gap_us, 1e-6);
    cr_assert_float_eq(r.capacity_rps, 1e6 / tau_us, 1e-6);
    cr_assert_float_eq(r.offered_util, tau_us / gap_us, 1e-12);
    cr_assert(r.saturated);
    /* the backlog grows linearly: the last request waited (R - 1)(tau - gap) */
    cr_assert_float_eq(r.max_us, (SAT_N - 1) * (tau_us - gap_us) + tau_us, 1e-6);
    cr_assert_float_eq(r.drain_us, SAT_N * tau_us - (SAT_N - 1) * gap_us, 1e-6);
    kw_sim_result_clear(&r);
}

Test(saturation, utilisation_under_one_is_not)
{
    const double gap_us = 100.0, tau_us = 50.0; /* rho = 0.5: nobody waits */
    kw_sim_result r;
    run(&r, gap_us, tau_us, SAT_N);
    cr_assert_float_eq(r.offered_util, 0.5, 1e-12);
    cr_assert(!r.saturated);
    cr_assert_float_eq(r.wait_p99_us, 0.0, 1e-9);
    cr_assert_float_eq(r.drain_us, tau_us, 1e-9);
    kw_sim_result_clear(&r);
}

Test(saturation, batching_raises_capacity)
{
    /* max_batch 2 with T(2) = 160 us serves 2 / 160 us = 12,500/s: the same
     * 10,000/s that saturates one-at-a-time service (150 us) fits, rho = 0.8 */
    map.max_batch = 2;
    const double gap_us = 100.0;
    for (int i = 0; i < SAT_N; i++) {
        t_us[i] = i * gap_us;
        strm[i] = shp_idx[i] = 0;
    }
    tr = (kw_trace){.n = SAT_N, .time_us = t_us, .stream = strm, .shape = shp_idx};
    service(150.0);
    svc[1] = svc[0];
    svc[1].kernels[0].time_us = 160.0;
    svc[1].latency_us = 160.0;
    kw_sim_input in = {.accel = &acc, .shape = &shp, .mapping = &map, .service = svc,
                       .trace = &tr, .trace_shape = -1};
    kw_sim_opts o = {.requests = SAT_N, .seed = 1};
    kw_sim_result r;
    cr_assert_eq(kw_sim_run(&r, &in, &o), 0, "%s", kw_error_last());
    cr_assert_float_eq(r.capacity_rps, 2e6 / 160.0, 1e-6);
    cr_assert_float_eq(r.offered_util, 0.8, 1e-12);
    cr_assert(!r.saturated);
    kw_sim_result_clear(&r);
}
