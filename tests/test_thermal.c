/* test_thermal.c - the thermal window against the RC closed forms.
 *
 * Step response T_amb + P R (1 - exp(-t / RC)) (HotSpot, src/model-facts.md#thermal); the power formula from its definition; the share of time throttled in
 * the limit cycle between two thresholds, from the exact heating and cooling
 * times tau ln((T_ss - T_from) / (T_ss - T_to)); flags for shutdown and for a
 * throttled clock that cannot keep up. For these the serving side is a
 * hand-built one-kernel table.
 *
 * The shipped soak scenario (spaces/case_thermal_soak.xml) is checked at the
 * end through the real loader and cost model (libkwrun, libkwmodel): its power
 * from the offered load and the energies in the accelerator file, its steady
 * temperatures against T_amb + P R, its throttled share against the heating
 * time to the first step, both halves of the long-window guard, and the same
 * verdicts from `knobwise eval --thermal` (KW_BIN).
 */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <string.h>

#include "kw_cost.h"
#include "kw_error.h"
#include "kw_load.h"
#include "kw_mapping.h"
#include "lib/kw_tl.h"
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

/* ---------------- the shipped soak scenario ---------------- */

/* The cool mapping of spaces/case_thermal_soak.xml (its comment says why). */
#define SOAK_COOL "conv3x3.tile_m=256 conv3x3.tile_k=576 conv1x1.tile_m=256 conv1x1.tile_n=256 " \
                  "fuse_epilogue=on"
#define SOAK_REQUESTS 20000 /* the space's final_requests */

typedef struct soak {
    kw_thermal_result t;
    double p_w[2];          /* closed-form power at the nominal and the first throttled clock */
} soak;

/* Mean power of the served activity from its definition (kw_thermal.h): idle +
 * arrivals/s x (pJ/FLOP x clock^2 x bf16-weighted executed FLOPs + pJ/byte x
 * DRAM bytes) of one request (max_batch 1 here: a batch is one request). */
static double soak_power_w(const kw_accel *a, const kw_cost *one, double arrivals_per_s, double clock)
{
    double e_pj = 0;
    for (int i = 0; i < one->n_kernels; i++) {
        const kw_kernel *k = &one->kernels[i];
        double fl = k->exec_flops > 0 ? k->exec_flops : k->flops;
        e_pj += a->pj_per_flop * clock * clock * fl * kw_prec_bytes(k->prec) / 2.0 +
                a->pj_per_dram_byte * k->dram_bytes;
    }
    return a->idle_w + arrivals_per_s * e_pj * 1e-12;
}

static void soak_run(soak *out, kw_config **cfgp, const char *settings)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/spaces/case_thermal_soak.xml", kw_tl_src());
    cr_assert_eq(kw_load_config(cfgp, path, NULL, NULL), 0, "%s", kw_error_last());
    const kw_config *cfg = *cfgp;
    const kw_space *sp = &cfg->space;
    const kw_shape *s = &cfg->workload.shapes[sp->shapes[0]];
    const kw_block *b = &cfg->workload.blocks[s->block];
    static kw_cost tab[KW_SIM_BATCH_MAX];
    kw_cand c;
    kw_mapping m;
    /* arrivals: the shape's load under the baseline mapping */
    kw_knobs_cand_baseline(&c, &sp->knobs);
    cr_assert_eq(kw_mapping_decode(&m, sp, b, &c), 0, "%s", kw_error_last());
    cr_assert_eq(m.max_batch, 1);
    cr_assert_eq(kw_cost_eval(&tab[0], &cfg->accel, b, s, &m, 1, m.cores_per_request), 0);
    double rate;
    cr_assert_eq(kw_sim_rate_for_load(&rate, &cfg->accel, s, &m, tab), 0, "%s", kw_error_last());
    /* the mapping under test */
    cr_assert_eq(kw_knobs_cand_parse(&c, &sp->knobs, settings), 0, "%s", kw_error_last());
    cr_assert_eq(kw_mapping_decode(&m, sp, b, &c), 0, "%s", kw_error_last());
    cr_assert_eq(kw_cost_eval(&tab[0], &cfg->accel, b, s, &m, 1, m.cores_per_request), 0);
    kw_sim_input si = {.accel = &cfg->accel, .shape = s, .mapping = &m, .service = tab,
                       .rate_per_s = rate, .trace_shape = -1, .clock_factor = 1.0};
    kw_sim_opts o = {.requests = SOAK_REQUESTS, .warmup = SOAK_REQUESTS / 10, .seed = 2026};
    cr_assert_eq(kw_thermal_window(&out->t, &si, &o, NULL), 0, "%s", kw_error_last());
    cr_assert_geq(cfg->accel.n_throttle, 1);
    for (int l = 0; l < 2; l++)
        out->p_w[l] = soak_power_w(&cfg->accel, &tab[0], rate * s->streams,
                                   l == 0 ? 1.0 : cfg->accel.throttle[0].clock_factor);
}

Test(thermal, soak_scenario_hot_mapping_throttles_and_fails_the_long_window_guard)
{
    kw_config *cfg = NULL;
    soak h;
    soak_run(&h, &cfg, "");
    const kw_accel *a = &cfg->accel;
    double t1 = a->throttle[0].temp_c, hyst = KW_THERMAL_DEFAULT_HYST_C;
    double tss0 = a->t_ambient_c + h.p_w[0] * a->r_th_c_per_w;
    double tss1 = a->t_ambient_c + h.p_w[1] * a->r_th_c_per_w;
    /* the simulated activity draws the power the offered load implies
     * (20,000 Poisson arrivals: the rate is known to about 1%) */
    cr_expect(fabs(h.t.level_power_w[0] - h.p_w[0]) < 0.02 * h.p_w[0], "level 0: %.4f W, closed form %.4f W",
              h.t.level_power_w[0], h.p_w[0]);
    cr_expect(fabs(h.t.level_power_w[1] - h.p_w[1]) < 0.02 * h.p_w[1], "level 1: %.4f W, closed form %.4f W",
              h.t.level_power_w[1], h.p_w[1]);
    /* the closed form says: hot enough to reach the first step, and still
     * above its release temperature when throttled, so it settles there */
    cr_assert_gt(tss0, t1 + 1.0, "T_amb + P R = %.2f C does not reach the %.0f C step", tss0, t1);
    cr_assert(tss1 > t1 - hyst + 1.0 && tss1 < (a->n_throttle > 1 ? a->throttle[1].temp_c : 1e9) - 1.0,
              "throttled T_amb + P R = %.2f C", tss1);
    /* steady temperature after 10 tau on the first step: T_amb + P1 R */
    cr_expect(fabs(h.t.steady_temp_c - tss1) < 0.5, "steady %.3f C, closed form %.3f C",
              h.t.steady_temp_c, tss1);
    cr_expect_eq(h.t.transitions, 1);
    /* throttled from the moment T reaches the step: heating time from ambient
     * t = tau ln((T_ss - T_amb) / (T_ss - T_step)) over a window of 10 tau */
    double share = 100.0 * (1.0 - log((tss0 - a->t_ambient_c) / (tss0 - t1)) / KW_THERMAL_MIN_WINDOW_TAU);
    cr_expect(fabs(h.t.throttled_pct - share) < 3.0, "throttled %.2f%%, closed form %.2f%%",
              h.t.throttled_pct, share);
    /* the throttled clock stretches service: the tail drifts past the space's limit */
    cr_expect(!h.t.overloaded);
    cr_expect_gt(h.t.level_p99_us[1], h.t.level_p99_us[0]);
    cr_expect_gt(h.t.drift_pct, cfg->space.guards.max_long_window_drift_pct,
                 "drift %.1f%% (long p99 %.1f us, short %.1f us), limit %.1f%%", h.t.drift_pct,
                 h.t.long_p99_us, h.t.short_p99_us, cfg->space.guards.max_long_window_drift_pct);
    kw_load_config_free(cfg);
}

Test(thermal, soak_scenario_cool_mapping_never_throttles_and_passes)
{
    kw_config *cfg = NULL;
    soak c;
    soak_run(&c, &cfg, SOAK_COOL);
    const kw_accel *a = &cfg->accel;
    double tss0 = a->t_ambient_c + c.p_w[0] * a->r_th_c_per_w;
    cr_expect(fabs(c.t.level_power_w[0] - c.p_w[0]) < 0.02 * c.p_w[0], "%.4f W, closed form %.4f W",
              c.t.level_power_w[0], c.p_w[0]);
    cr_assert_lt(tss0, a->throttle[0].temp_c - 1.0, "T_amb + P R = %.2f C", tss0);
    /* T(10 tau) = T_amb + P R (1 - exp(-10)) */
    cr_expect(fabs(c.t.steady_temp_c - tss0) < 0.5, "steady %.3f C, closed form %.3f C",
              c.t.steady_temp_c, tss0);
    cr_expect_eq(c.t.throttled_pct, 0.0);
    cr_expect_eq(c.t.transitions, 0);
    cr_expect_leq(c.t.drift_pct, cfg->space.guards.max_long_window_drift_pct);
    kw_load_config_free(cfg);
}

/* The verdicts as `knobwise eval --thermal` prints them (guards column). */
static void soak_eval_csv(const char *sets, char *guards, size_t len, double *throttle_pct)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "eval --space '%s/spaces/case_thermal_soak.xml' --thermal --format csv %s",
             kw_tl_src(), sets);
    kw_tl_proc r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char v[64];
    kw_tl_csv_col(r.out, "guards", guards, len);
    *throttle_pct = kw_tl_csv_col(r.out, "throttle_pct", v, sizeof v) > 0 && v[0] ? atof(v) : -1;
    kw_tl_free(&r);
}

Test(thermal, soak_scenario_eval_shows_the_guard)
{
    char g[256];
    double thr;
    soak_eval_csv("", g, sizeof g, &thr);
    cr_expect(strstr(g, "long_window") != NULL, "hot mapping guards: %s", g);
    cr_expect_gt(thr, 50.0);
    soak_eval_csv("--set conv3x3.tile_m=256 --set conv3x3.tile_k=576 --set conv1x1.tile_m=256 "
                  "--set conv1x1.tile_n=256 --set fuse_epilogue=on", g, sizeof g, &thr);
    cr_expect_str_eq(g, "pass");
    cr_expect_eq(thr, 0.0);
}
