/* kw_thermal.c - stage 3: lumped RC thermal window coupled to the serving
 * simulation through the clock.
 *
 * Thermal model (HotSpot, Skadron et al. ISCA'03; src/model-facts.md#thermal):
 * one node, C dT/dt = P - (T - T_amb) / R, i.e. dT/dt = (P R - (T - T_amb)) / tau
 * with tau = R C. At constant power the solution is exact,
 * T(t) = T_ss + (T0 - T_ss) exp(-t / tau), T_ss = T_amb + P R, so the window is
 * integrated segment by segment with the exact exponential, and the times at
 * which T crosses a throttle threshold are solved in closed form
 * (t = tau ln((T_ss - T0) / (T_ss - T_th))) rather than found on a grid.
 *
 * Power: idle_w + dynamic. Compute energy per FLOP scales with clock_factor^2:
 * dynamic power is C V^2 f and DVFS lowers V roughly with f, so at a fixed
 * amount of work the energy per operation falls as f^2 (Weste & Harris, CMOS
 * VLSI Design, ch. 5). DRAM energy per byte does not scale (the memory is not
 * throttled). The activity (bf16-equivalent FLOP/s, DRAM bytes/s) is what the
 * serving simulation measured at that clock. Power is capped at tdp_w: the
 * power limiter keeps the board at TDP (NVML power capping), which we model
 * as the cap alone, without its own clock effect.
 *
 * Throttle (NVML-like): level 0 runs at the nominal clock; level L >= 1 at
 * accel->throttle[L-1].clock_factor. The level rises when T reaches
 * throttle[L].temp_c and falls when T drops below throttle[L-1].temp_c minus
 * a hysteresis (default 2 C [U]: real controllers have one, and without it
 * the exact solution chatters at the threshold forever).
 *
 * Coupling (quasi-static, a documented simplification): the queue relaxes in
 * milliseconds to seconds while the package time constant is tens of seconds
 * (src/model-facts.md#thermal), so at each clock level the serving system is taken
 * to be in its steady state at that clock. Each visited level runs ONE
 * serving simulation at its clock (its latency distribution and power); the
 * RC model then decides how long the window spends at each level; the
 * long-window latency distribution is the mixture of the levels' distributions
 * weighted by time share (arrivals are uniform in time), and its p99 is the
 * long-window p99. The short-window p99 is level 0's: what a burst benchmark
 * on a cold chip measures. quasi_static_ok reports whether each level's
 * simulated span is under tau / 10; the backlog carried across a level change
 * is not modelled (it would add to the long-window tail), so the drift is a
 * lower bound when levels change often. Cost: (visited levels) simulations +
 * O(level changes) arithmetic, instead of simulating 10 tau of requests.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"
#include "kw_thermal.h"

#define KW_J_PER_PJ 1e-12
#define KW_US_PER_S 1e6
#define KW_THERMAL_MAX_SEGMENTS 10000000 /* guard against a runaway limit cycle */
#define KW_THERMAL_OVERLOAD_UTIL 0.99
#define KW_THERMAL_QUASI_STATIC_FRAC 0.1  /* level span < tau / 10 */
#define KW_THERMAL_TAIL 0.01              /* p99 */

double kw_thermal_power_w(const kw_accel *a, double flop_rate_per_s, double dram_bytes_per_s,
                          double clock_factor)
{
    double p = a->idle_w + (a->pj_per_flop * clock_factor * clock_factor * flop_rate_per_s +
                            a->pj_per_dram_byte * dram_bytes_per_s) * KW_J_PER_PJ;
    if (a->tdp_w > 0 && p > a->tdp_w)
        p = a->tdp_w;
    return p;
}

double kw_thermal_step(const kw_accel *a, double temp_c, double power_w, double dt_s)
{
    double tss = a->t_ambient_c + power_w * a->r_th_c_per_w;
    return tss + (temp_c - tss) * exp(-dt_s / a->tau_s);
}

static int kw_thermal_check(const kw_accel *a, const kw_thermal_opts *o)
{
    if (!(a->tau_s > 0) || !(a->r_th_c_per_w > 0) || !isfinite(a->tau_s) ||
        !isfinite(a->r_th_c_per_w) || !isfinite(a->t_ambient_c))
        return kw_error_set(KW_EINPUT, "thermal window: accelerator %s needs tau_s > 0 and "
                            "r_th_c_per_w > 0 (have %g s, %g C/W)", a->name, a->tau_s,
                            a->r_th_c_per_w);
    if (a->n_throttle < 0 || a->n_throttle > KW_THROTTLE_MAX)
        return kw_error_set(KW_EINPUT, "thermal window: %d throttle steps (at most %d)",
                            a->n_throttle, KW_THROTTLE_MAX);
    for (int i = 0; i < a->n_throttle; i++) {
        const kw_throttle_step *s = &a->throttle[i];
        if (!(s->clock_factor > 0 && s->clock_factor <= 1) || !isfinite(s->temp_c) ||
            (i > 0 && !(s->temp_c > a->throttle[i - 1].temp_c)))
            return kw_error_set(KW_EINPUT, "thermal window: throttle step %d (%g C, clock %g) must "
                                "have a clock factor in (0, 1] and a temperature above the "
                                "previous step's", i, s->temp_c, s->clock_factor);
    }
    if (o->window_tau != 0 && !(o->window_tau >= KW_THERMAL_MIN_WINDOW_TAU && isfinite(o->window_tau)))
        return kw_error_set(KW_EINPUT, "thermal window: %g time constants is shorter than %g",
                            o->window_tau, KW_THERMAL_MIN_WINDOW_TAU);
    if (o->hysteresis_c < 0 || !isfinite(o->hysteresis_c))
        return kw_error_set(KW_EINPUT, "thermal window: hysteresis %g C must be > 0", o->hysteresis_c);
    return 0;
}

/* p99 of the mixture sum_L w_L F_L: walk the levels' sorted samples from the
 * top, each sample of level L weighing w_L / n_L, until the tail weighs 1%. */
static double kw_mixture_p99(const kw_sim_result *lev, const double *w, const int *have, int n)
{
    size_t idx[KW_THERMAL_LEVELS];
    double tail = 0;
    for (int l = 0; l < n; l++)
        idx[l] = have[l] && w[l] > 0 ? (size_t)lev[l].samples : 0;
    for (;;) {
        int best = -1;
        for (int l = 0; l < n; l++)
            if (idx[l] > 0 && (best < 0 || lev[l].lat_sorted_us[idx[l] - 1] >
                                               lev[best].lat_sorted_us[idx[best] - 1]))
                best = l;
        if (best < 0)
            return 0.0;
        double v = lev[best].lat_sorted_us[--idx[best]];
        tail += w[best] / lev[best].samples;
        if (tail >= KW_THERMAL_TAIL)
            return v;
    }
}

int kw_thermal_window(kw_thermal_result *out, const kw_sim_input *in, const kw_sim_opts *so,
                      const kw_thermal_opts *opts)
{
    kw_thermal_opts o = {0};
    if (opts)
        o = *opts;
    memset(out, 0, sizeof *out);
    if (!in || !in->accel || !so)
        return kw_error_set(KW_EINPUT, "thermal window: missing input");
    const kw_accel *a = in->accel;
    int rc = kw_thermal_check(a, &o);
    if (rc)
        return rc;
    if (o.window_tau == 0)
        o.window_tau = KW_THERMAL_MIN_WINDOW_TAU;
    if (o.hysteresis_c == 0)
        o.hysteresis_c = KW_THERMAL_DEFAULT_HYST_C;

    kw_sim_result lev[KW_THERMAL_LEVELS];
    int have[KW_THERMAL_LEVELS] = {0};
    memset(lev, 0, sizeof lev);
    kw_sim_opts lso = *so;
    lso.keep_latencies = 1;
    int nl = a->n_throttle + 1;
    out->n_levels = nl;
    out->quasi_static_ok = 1;
    for (int l = 0; l < nl; l++)
        out->level_clock[l] = l == 0 ? 1.0 : a->throttle[l - 1].clock_factor;

    const double tau = a->tau_s, W = o.window_tau * tau;
    double T = o.start_temp_c != 0 ? o.start_temp_c : a->t_ambient_c;
    double t = 0, energy = 0, tmax = T;
    int L = 0;
    for (long seg = 0;; seg++) {
        if (seg > KW_THERMAL_MAX_SEGMENTS) {
            rc = kw_error_set(KW_EMODEL, "thermal window: more than %d clock changes",
                              KW_THERMAL_MAX_SEGMENTS);
            goto done;
        }
        if (!have[L]) {
            kw_sim_input li = *in;
            li.clock_factor = out->level_clock[L];
            rc = kw_sim_run(&lev[L], &li, &lso);
            if (rc)
                goto done;
            have[L] = 1;
            out->level_power_w[L] = kw_thermal_power_w(a, lev[L].flop_rate_per_s,
                                                       lev[L].dram_rate_bytes_per_s,
                                                       out->level_clock[L]);
            out->level_p99_us[L] = lev[L].p99_us;
            if (lev[L].utilisation >= KW_THERMAL_OVERLOAD_UTIL)
                out->overloaded = 1;
            if (lev[L].window_us / KW_US_PER_S >= KW_THERMAL_QUASI_STATIC_FRAC * tau)
                out->quasi_static_ok = 0;
        }
        if (t >= W)
            break;
        double P = out->level_power_w[L];
        double tss = a->t_ambient_c + P * a->r_th_c_per_w;
        /* instant transitions when already past a threshold */
        if (L < nl - 1 && T >= a->throttle[L].temp_c) {
            L++;
            out->transitions++;
            continue;
        }
        double down = L > 0 ? a->throttle[L - 1].temp_c - o.hysteresis_c : -INFINITY;
        if (L > 0 && T < down) {
            L--;
            out->transitions++;
            continue;
        }
        double dt = W - t;
        int ev = 0; /* +1 up, -1 down */
        if (L < nl - 1 && tss > a->throttle[L].temp_c) {
            double up = a->throttle[L].temp_c;
            double d = tau * log((tss - T) / (tss - up));
            if (d < dt) {
                dt = d;
                ev = 1;
            }
        }
        if (L > 0 && tss < down) {
            double d = tau * log((T - tss) / (down - tss));
            if (d < dt) {
                dt = d;
                ev = -1;
            }
        }
        double Tn = ev > 0 ? a->throttle[L].temp_c : ev < 0 ? down : kw_thermal_step(a, T, P, dt);
        out->level_share[L] += dt;
        energy += P * dt;
        t += dt;
        T = Tn;
        if (T > tmax)
            tmax = T;
        if (ev) {
            L += ev;
            out->transitions++;
        }
    }
    out->window_s = W;
    out->steady_temp_c = T;
    out->max_temp_c = tmax;
    out->mean_power_w = energy / W;
    out->shutdown = a->t_shutdown_c > 0 && tmax >= a->t_shutdown_c;
    double thr = 0;
    for (int l = 0; l < nl; l++) {
        out->level_share[l] /= W;
        if (l > 0)
            thr += out->level_share[l];
    }
    out->throttled_pct = 100.0 * thr;
    out->samples = lev[0].samples;
    out->short_p99_us = lev[0].p99_us;
    out->long_p99_us = thr > 0 ? kw_mixture_p99(lev, out->level_share, have, nl) : lev[0].p99_us;
    out->drift_pct = out->short_p99_us > 0
                         ? 100.0 * (out->long_p99_us - out->short_p99_us) / out->short_p99_us
                         : 0.0;
done:
    for (int l = 0; l < KW_THERMAL_LEVELS; l++)
        kw_sim_result_clear(&lev[l]);
    return rc;
}
