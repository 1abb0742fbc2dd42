/* kw_thermal.h - stage 3: the long thermal window.
 *
 * A lumped RC thermal model (HotSpot, Skadron et al. ISCA'03) driven by the
 * power of the simulated activity; the clock throttles by the accelerator's
 * steps above their temperatures, which slows service; over a window of many
 * time constants out come the steady temperature, the throttled share of
 * time, and the long-window p99 against the short-window (cold chip) p99.
 * The coupling between the queue and the temperature is quasi-static: see
 * kw_thermal.c for the approach and when it holds.
 */
#ifndef KW_THERMAL_H
#define KW_THERMAL_H

#include "kw_model.h"
#include "kw_sim.h"

#define KW_THERMAL_MIN_WINDOW_TAU 10.0   /* the window spans at least 10 time constants */
#define KW_THERMAL_DEFAULT_HYST_C 2.0    /* leave a throttle step 2 C below its threshold [U] */
#define KW_THERMAL_LEVELS (KW_THROTTLE_MAX + 1) /* level 0 = nominal clock, L = throttle[L-1] */

typedef struct kw_thermal_opts {
    double window_tau;      /* window length in time constants; 0 = 10, less than 10 refused */
    double hysteresis_c;    /* 0 = KW_THERMAL_DEFAULT_HYST_C; must be > 0 (no chattering) */
    double start_temp_c;    /* temperature at the window's start; 0 = ambient (cold start) */
} kw_thermal_opts;

typedef struct kw_thermal_result {
    double window_s;                 /* simulated window */
    double steady_temp_c;            /* temperature at the end of the window */
    double max_temp_c;
    double mean_power_w;             /* time average over the window */
    double throttled_pct;            /* share of the window below nominal clock */
    int n_levels;                    /* 1 + accel->n_throttle */
    double level_clock[KW_THERMAL_LEVELS];   /* clock factor of each level */
    double level_power_w[KW_THERMAL_LEVELS]; /* power while at that level (0: never visited) */
    double level_share[KW_THERMAL_LEVELS];   /* share of the window at that level */
    double level_p99_us[KW_THERMAL_LEVELS];  /* p99 of the serving simulation at that clock */
    double short_p99_us;             /* p99 at nominal clock: the burst a short benchmark sees */
    double long_p99_us;              /* p99 of the whole window (time-weighted mixture) */
    double drift_pct;                /* 100 (long_p99 - short_p99) / short_p99, for the guard
                                      * max_long_window_drift_pct (applied by the evaluator) */
    int transitions;                 /* clock level changes in the window */
    int shutdown;                    /* the temperature reached accel->t_shutdown_c */
    int overloaded;                  /* a visited level could not keep up with the arrivals
                                      * (utilisation >= 0.99): its p99 grows with the sample */
    int quasi_static_ok;             /* each level's simulated span < tau / 10 (see kw_thermal.c) */
    int samples;                     /* requests simulated per level */
} kw_thermal_result;

/* Power (W) of an activity: idle + (pJ/FLOP x clock_factor^2 x FLOP rate +
 * pJ/byte x DRAM byte rate) x 1e-12, capped at tdp_w when tdp_w > 0. FLOP
 * rate in bf16-equivalent FLOP/s (kw_sim_result.flop_rate_per_s). */
double kw_thermal_power_w(const kw_accel *a, double flop_rate_per_s, double dram_bytes_per_s,
                          double clock_factor);

/* Exact RC update over dt_s at constant power:
 * T' = T_ss + (T - T_ss) exp(-dt / tau), T_ss = T_amb + P R. */
double kw_thermal_step(const kw_accel *a, double temp_c, double power_w, double dt_s);

/* Simulate the long window for the serving input `in` (its clock_factor is
 * ignored: the levels set it) with sample options `so` (each visited clock
 * level runs one simulation of so->requests requests; keep_latencies is set
 * internally). opts NULL = defaults. Returns 0, KW_EINPUT (thermal figures of
 * the accelerator missing or inconsistent, bad options), KW_ENOMEM, or an
 * error of kw_sim_run. */
int kw_thermal_window(kw_thermal_result *out, const kw_sim_input *in, const kw_sim_opts *so,
                      const kw_thermal_opts *opts);

#endif
