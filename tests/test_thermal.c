/* test_thermal.c - the thermal window against the RC closed forms.
 *
 * Step response T_amb + P R (1 - exp(-t / RC)) (HotSpot, model-facts section
 * 6); the power formula from its definition; the share of time throttled in
 * the limit cycle between two thresholds, from the exact heating and cooling
 * times tau ln((T_ss - T_from) / (T_ss - T_to)); flags for shutdown and for a
 * throttled clock that cannot keep up. The serving side is a hand-built
 * one-kernel table, so only this library is linked.
 */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <string.h>

#include "kw_error.h"
#include "kw_thermal.h"

static kw_accel acc;
static kw_shape shp;
static kw_mapping map;
static kw_cost svc;
static kw_sim_input in;
static kw_sim_opts so;
static kw_thermal_result tr;

/* One core; one request = one 100 us kernel of 1e9 bf16 FLOPs moving 1e7 bytes;
 * 3000 requests/s (utilisation 0.3). Power at clock f:
 *   idle 5 W + 3 pJ x f^2 x 3e12 FLOP/s + 20 pJ x 3e10 B/s = 5 + 9 f^2 + 0.6 W. */
#define RATE 3000.0
#define FLOPS 1e9
#define BYTES 1e7
static void setup(void)
{
    gsl_set_error_handler_off();
    memset(&acc, 0, sizeof acc);
    snprintf(acc.name, sizeof acc.name, "thermo");
    acc.cores = 1;
    acc.dram_bw_bytes_per_s = 1e12;
    acc.idle_w = 5.0;
    acc.pj_per_flop = 3.0;
    acc.pj_per_dram_byte = 20.0;
    acc.t_ambient_c = 30.0;
    acc.r_th_c_per_w = 5.0;
    acc.tau_s = 600.0;
    memset(&shp, 0, sizeof shp);
    snprintf(shp.name, sizeof shp.name, "s");
    shp.streams = 1;
    shp.arrival = KW_ARRIVAL_POISSON;
    shp.rate_per_s = RATE;
    memset(&map, 0, sizeof map);
    map.max_batch = 1;
    map.cores_per_request = 1;
    memset(&svc, 0, sizeof svc);
    svc.n_kernels = 1;
    svc.kernels[0].time_us = 100.0;
    svc.kernels[0].flops = FLOPS;
    svc.kernels[0].prec = KW_PREC_BF16;
    svc.kernels[0].dram_bytes_per_us = BYTES / 100.0;
    memset(&in, 0, sizeof in);
    in.accel = &acc;
    in.shape = &shp;
    in.mapping = &map;
    in.service = &svc;
    in.trace_shape = -1;
    memset(&so, 0, sizeof so);
    so.requests = 100000;
    so.warmup = 1000;
    so.seed = 9;
}

TestSuite(thermal, .init = setup);

static double power_at(double f)
{
    return 5.0 + 3e-12 * f * f * RATE * FLOPS + 20e-12 * RATE * BYTES;
}

Test(thermal, step_response_closed_form)
{
    const double P = 14.6;
    for (double k = 0.25; k <= 8; k *= 2) {
        double t = k * acc.tau_s;
        double want = acc.t_ambient_c + P * acc.r_th_c_per_w * (1 - exp(-t / acc.tau_s));
        double one = kw_thermal_step(&acc, acc.t_ambient_c, P, t);
        double T = acc.t_ambient_c; /* the same in 1000 small steps */
        for (int i = 0; i < 1000; i++)
            T = kw_thermal_step(&acc, T, P, t / 1000);
        cr_expect(fabs(one - want) <= 0.01 * want, "t = %.2f tau: %.6f vs %.6f", k, one, want);
        cr_expect(fabs(T - want) <= 0.01 * want, "t = %.2f tau stepped: %.6f vs %.6f", k, T, want);
    }
    /* cooling from a hot start follows the same exponential */
    double cool = kw_thermal_step(&acc, 90.0, 0.0, acc.tau_s);
    cr_expect(fabs(cool - (30.0 + 60.0 * exp(-1.0))) < 1e-9);
}

Test(thermal, power_formula)
{
    cr_expect(fabs(kw_thermal_power_w(&acc, RATE * FLOPS, RATE * BYTES, 1.0) - power_at(1.0)) < 1e-9);
    cr_expect(fabs(kw_thermal_power_w(&acc, RATE * FLOPS, RATE * BYTES, 0.5) - power_at(0.5)) < 1e-9);
    acc.tdp_w = 10.0;
    cr_expect_eq(kw_thermal_power_w(&acc, RATE * FLOPS, RATE * BYTES, 1.0), 10.0);
}

/* No throttle steps: after 10 tau the window ends within e^-10 of T_ss, and
 * the step response of the window's power matches the closed form. */
Test(thermal, window_without_throttle_reaches_steady_state)
{
    cr_assert_eq(kw_thermal_window(&tr, &in, &so, NULL), 0, "%s", kw_error_last());
    double P = power_at(1.0);
    double want = acc.t_ambient_c + P * acc.r_th_c_per_w * (1 - exp(-10.0));
    cr_expect(fabs(tr.level_power_w[0] - P) <= 0.01 * P, "power %.4f vs %.4f", tr.level_power_w[0], P);
    cr_expect(fabs(tr.steady_temp_c - want) <= 0.01 * want, "T %.4f vs %.4f", tr.steady_temp_c, want);
    cr_expect_eq(tr.throttled_pct, 0.0);
    cr_expect_eq(tr.long_p99_us, tr.short_p99_us);
    cr_expect_eq(tr.drift_pct, 0.0);
    cr_expect(fabs(tr.window_s - 10 * acc.tau_s) < 1e-9);
    cr_expect(tr.quasi_static_ok);
    cr_expect(!tr.shutdown && !tr.overloaded);
}

/* One step at 80 C to half clock, hysteresis 2 C. Unthrottled T_ss is about
 * 103 C, throttled about 69 C, so the chip cycles between 78 and 80 C:
 * heating h = tau ln((T0 - 78) / (T0 - 80)), cooling c = tau ln((80 - T1) / (78 - T1));
 * after the first heating (t1 = tau ln((T0 - 30) / (T0 - 80))) the throttled
 * share is c / (c + h). */
Test(thermal, limit_cycle_throttled_share)
{
    acc.n_throttle = 1;
    acc.throttle[0].temp_c = 80.0;
    acc.throttle[0].clock_factor = 0.5;
    kw_thermal_opts o = {.window_tau = 200.0, .hysteresis_c = 2.0};
    cr_assert_eq(kw_thermal_window(&tr, &in, &so, &o), 0, "%s", kw_error_last());
    double P0 = tr.level_power_w[0], P1 = tr.level_power_w[1];
    cr_expect(fabs(P0 - power_at(1.0)) <= 0.01 * P0);
    cr_expect(fabs(P1 - power_at(0.5)) <= 0.01 * P1, "throttled power %.4f vs %.4f", P1, power_at(0.5));
    double T0 = 30 + P0 * 5, T1 = 30 + P1 * 5, tau = acc.tau_s;
    double h = tau * log((T0 - 78) / (T0 - 80)), c = tau * log((80 - T1) / (78 - T1));
    double t1 = tau * log((T0 - 30) / (T0 - 80)), W = 200 * tau;
    double want = 100.0 * (W - t1) / W * c / (c + h);
    cr_log_info("throttled %.3f%% (closed form %.3f%%), p99 short %.1f long %.1f us, drift %.1f%%",
                tr.throttled_pct, want, tr.short_p99_us, tr.long_p99_us, tr.drift_pct);
    cr_expect(fabs(tr.throttled_pct - want) <= 0.01 * want, "throttled %.3f%% vs %.3f%%",
              tr.throttled_pct, want);
    cr_expect(tr.steady_temp_c >= 78.0 - 1e-9 && tr.steady_temp_c <= 80.0 + 1e-9);
    cr_expect(fabs(tr.max_temp_c - 80.0) < 1e-9);
    cr_expect(tr.transitions > 100);
    /* half clock doubles service: the long-window tail is worse than the burst's */
    cr_expect(tr.level_p99_us[1] > 1.5 * tr.level_p99_us[0]);
    cr_expect(tr.long_p99_us > tr.short_p99_us && tr.long_p99_us <= tr.level_p99_us[1]);
    cr_expect(fabs(tr.drift_pct - 100 * (tr.long_p99_us / tr.short_p99_us - 1)) < 1e-9);
    cr_expect(!tr.overloaded);
}

/* Threshold above the unthrottled steady state: never throttles. */
Test(thermal, cool_chip_never_throttles)
{
    acc.n_throttle = 1;
    acc.throttle[0].temp_c = 110.0;
    acc.throttle[0].clock_factor = 0.5;
    cr_assert_eq(kw_thermal_window(&tr, &in, &so, NULL), 0, "%s", kw_error_last());
    cr_expect_eq(tr.throttled_pct, 0.0);
    cr_expect_eq(tr.transitions, 0);
    cr_expect_eq(tr.level_power_w[1], 0.0, "level 1 should not be simulated");
}

Test(thermal, shutdown_and_overload_flags)
{
    acc.t_shutdown_c = 100.0; /* T_ss about 103 C */
    cr_assert_eq(kw_thermal_window(&tr, &in, &so, NULL), 0, "%s", kw_error_last());
    cr_expect(tr.shutdown);
    /* half clock at utilisation 0.6 of the nominal clock cannot keep up */
    shp.rate_per_s = 6000.0;
    acc.n_throttle = 1;
    acc.throttle[0].temp_c = 60.0;
    acc.throttle[0].clock_factor = 0.5;
    so.requests = 20000;
    cr_assert_eq(kw_thermal_window(&tr, &in, &so, NULL), 0, "%s", kw_error_last());
    cr_expect(tr.overloaded);
    cr_expect(tr.throttled_pct > 50.0);
}

Test(thermal, bad_inputs)
{
    acc.tau_s = 0;
    cr_expect_eq(kw_thermal_window(&tr, &in, &so, NULL), KW_EINPUT);
    cr_expect(strstr(kw_error_last(), "tau_s") != NULL, "%s", kw_error_last());
    acc.tau_s = 600;
    kw_thermal_opts o = {.window_tau = 5};
    cr_expect_eq(kw_thermal_window(&tr, &in, &so, &o), KW_EINPUT);
    cr_expect(strstr(kw_error_last(), "shorter than 10") != NULL, "%s", kw_error_last());
    acc.n_throttle = 2;
    acc.throttle[0] = (kw_throttle_step){90.0, 0.8};
    acc.throttle[1] = (kw_throttle_step){85.0, 0.5};
    cr_expect_eq(kw_thermal_window(&tr, &in, &so, NULL), KW_EINPUT);
    acc.throttle[1] = (kw_throttle_step){95.0, 0.0};
    cr_expect_eq(kw_thermal_window(&tr, &in, &so, NULL), KW_EINPUT);
    acc.n_throttle = 0;
    o = (kw_thermal_opts){.hysteresis_c = -1};
    cr_expect_eq(kw_thermal_window(&tr, &in, &so, &o), KW_EINPUT);
    cr_expect_eq(kw_thermal_window(&tr, NULL, &so, NULL), KW_EINPUT);
}
