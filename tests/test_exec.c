/* test_exec.c - the measuring evaluator (src/run/kw_exec.c, kw_worker.c,
 * kw_mstat.c) against the test worker tests/kw_tworker.c: the protocol end to
 * end, every fault (crash, hang, garbage, short answers, the worker's own
 * errors, a worker that cannot start), restart, journaled failures, no double
 * measurement on resume, drift cancelled by the anchor, and the significance
 * test rejecting a pure-noise step at about alpha over many seeds.
 *
 * Statistics are checked against closed forms (binomial order-statistic
 * ranks, the Mann-Whitney normal approximation), never against numbers
 * copied from the implementation's output.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kw_engine.h"
#include "kw_eval.h"
#include "kw_exec.h"
#include "kw_journal.h"
#include "kw_load.h"
#include "kw_mstat.h"
#include "kw_worker.h"
#include "lib/kw_tl.h"

static const char *builddir(void)
{
    const char *b = getenv("KW_BUILDDIR");
    return b ? b : ".";
}

static void space_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/tests/data/exec/%s", kw_tl_src(), name);
}

/* "BUILDDIR/tests/kw_tworker ARGS" */
static void worker_cmd(char *buf, size_t len, const char *args)
{
    snprintf(buf, len, "%s/tests/kw_tworker %s", builddir(), args);
}

typedef struct fixture {
    kw_config *cfg;
    kw_model_eval *me;
    kw_exec *ex;
    char cmd[1024];
} fixture;

static int fx_open(fixture *f, const char *args, double timeout_s, int anchor, int reps,
                   int max_reps)
{
    char sp[1024];
    memset(f, 0, sizeof *f);
    space_path(sp, sizeof sp, "small.xml");
    cr_assert_eq(kw_load_config(&f->cfg, sp, NULL, NULL), 0, "%s", kw_error_last());
    kw_model_opts mo = {.drift = 1, .seed = 1};
    cr_assert_eq(kw_eval_new(&f->me, f->cfg, &mo), 0, "%s", kw_error_last());
    worker_cmd(f->cmd, sizeof f->cmd, args);
    kw_exec_opts xo;
    kw_exec_opts_from_space(&xo, &f->cfg->space, f->cmd, timeout_s);
    xo.anchor = anchor;
    if (reps > 0)
        xo.reps = reps;
    if (max_reps > 0)
        xo.max_reps = max_reps;
    return kw_exec_new(&f->ex, f->cfg, f->me, &xo);
}

static void fx_close(fixture *f)
{
    kw_exec_free(f->ex);
    kw_eval_free(f->me);
    kw_load_config_free(f->cfg);
}

static void cand_set(kw_cand *c, const kw_config *cfg, const char *text)
{
    cr_assert_eq(kw_knobs_cand_parse(c, &cfg->space.knobs, text), 0, "%s", kw_error_last());
}

/* ------------------------------------------------------------------ statistics */

Test(exec, median_interval_matches_the_binomial_ranks)
{
    /* n = 100, 95%: the distribution-free interval of the median is
     * [x(40), x(61)] (Conover, Practical Nonparametric Statistics, table A3:
     * P(B <= 39) = 0.0176 <= 0.025 < P(B <= 40) = 0.0284 for B ~ Bin(100, 1/2)). */
    double x[100];
    for (int i = 0; i < 100; i++)
        x[i] = i + 1;
    double lo, hi;
    kw_mstat_quantile_ci(&lo, &hi, x, 100, 0.5, 0.95);
    cr_expect_eq(lo, 40.0);
    cr_expect_eq(hi, 61.0);
    /* too few samples for the level: the extremes */
    kw_mstat_quantile_ci(&lo, &hi, x, 4, 0.5, 0.95);
    cr_expect_eq(lo, 1.0);
    cr_expect_eq(hi, 4.0);
}

Test(exec, mann_whitney_matches_the_normal_approximation)
{
    /* x all below y: U = 0, mean nx ny / 2 = 4.5, variance nx ny (n + 1) / 12 = 5.25,
     * z = (4.5 - 0.5) / sqrt(5.25) = 1.7457, p = 2 Q(z) = 0.08086 */
    const double x[3] = {1, 2, 3}, y[3] = {4, 5, 6};
    cr_expect_float_eq(kw_mstat_mann_whitney_p(x, 3, y, 3), 0.08086, 1e-4);
    /* identical samples: no evidence at all */
    cr_expect_float_eq(kw_mstat_mann_whitney_p(x, 3, x, 3), 1.0, 1e-12);
}

Test(exec, outlier_policy_drops_a_preempted_run_but_not_a_second_mode)
{
    double x[100];
    for (int i = 0; i < 100; i++)
        x[i] = 100.0 + (i % 10) * 0.1;
    x[57] = 1e6; /* one preempted run */
    cr_expect_eq(kw_mstat_trim(x, 100), 99);
    cr_expect_lt(x[98], 101.0);
    /* 30% at a second level is a mode, kept (policy: at most 20% dropped) */
    for (int i = 0; i < 100; i++)
        x[i] = i < 70 ? 100.0 + (i % 7) * 0.1 : 500.0;
    cr_expect_eq(kw_mstat_trim(x, 100), 100);
}

/* ------------------------------------------------------------------ faults */

Test(exec, a_worker_that_cannot_start_is_a_clear_error)
{
    static const char *const bad[] = {"--exit-at-start", "--no-ready", "--start-delay 3"};
    static const char *const says[] = {"exited with status 1", "answered 'nope'", "within 1 s"};
    for (int i = 0; i < 3; i++) {
        fixture f;
        int rc = fx_open(&f, bad[i], 0, 0, 0, 0);
        /* a worker that runs and then fails the handshake: a runtime failure (exit 1) */
        cr_expect_eq(rc, KW_EIO, "%s: rc %d", bad[i], rc);
        cr_expect(strstr(kw_error_last(), "did not start") != NULL, "%s", kw_error_last());
        cr_expect(strstr(kw_error_last(), says[i]) != NULL, "%s: %s", bad[i], kw_error_last());
        cr_expect_null(f.ex);
        fx_close(&f);
    }
}

/* Starting a worker runs no pthread_atfork handler (kw_worker.c: both forks are
 * _Fork). Under mpirun Open MPI registers one that warns of fork() where its
 * transport cannot survive one, and UCX and libfabric register their own that
 * take their locks; a worker started from an evaluation thread ran them all
 * (main 093310e: the prepare and parent handlers ran, 2 calls here). */
static atomic_int atfork_calls;
static void count_atfork(void) { atomic_fetch_add(&atfork_calls, 1); }

Test(exec, starting_a_worker_runs_no_atfork_handler)
{
    cr_assert_eq(pthread_atfork(count_atfork, count_atfork, count_atfork), 0);
    fixture f;
    cr_assert_eq(fx_open(&f, "", 0, 0, 0, 0), 0, "%s", kw_error_last());
    fx_close(&f);
    cr_assert_eq(atomic_load(&atfork_calls), 0, "%d atfork handler calls",
                 atomic_load(&atfork_calls));
}

/* A ready line is a protocol line like any other, up to 65,536 bytes with its
 * newline: a long device= text starts the worker (on main a ready line of 512
 * bytes or more was "not a protocol line"), one past the limit does not. */
Test(exec, a_long_ready_line_starts_the_worker)
{
    static const long lens[] = {600, 65000, 65600};
    for (int i = 0; i < 3; i++) {
        char args[64];
        snprintf(args, sizeof args, "--device-len %ld", lens[i]);
        fixture f;
        int rc = fx_open(&f, args, 0, 0, 0, 0);
        if (lens[i] < 65536 - 64) {
            cr_expect_eq(rc, 0, "%s: %s", args, kw_error_last());
        } else {
            cr_expect_eq(rc, KW_EIO, "%s: rc %d", args, rc);
            cr_expect(strstr(kw_error_last(), "not a protocol line") != NULL, "%s",
                      kw_error_last());
        }
        fx_close(&f);
    }
}

Test(exec, crash_hang_garbage_and_worker_errors_fail_the_candidate_and_the_worker_restarts)
{
    fixture f;
    cr_assert_eq(fx_open(&f, "--crash-on qkv.tile_m=64 --hang-on qkv.tile_m=256 "
                             "--garbage-on qkv.tile_n=64 --short-on qkv.tile_n=256 "
                             "--error-on fuse_qkv=on:unsupported",
                         /* long enough for an answer under a sanitizer on a loaded
                          * machine; the hang costs it once */
                         2.0, 0, 0, 0),
                 0, "%s", kw_error_last());
    const kw_evaluator *ev = kw_exec_iface(f.ex);
    cr_expect(ev->noisy);
    static const char *const cfgs[] = {"qkv.tile_m=64", "qkv.tile_m=256", "qkv.tile_n=64",
                                       "qkv.tile_n=256", "fuse_qkv=on"};
    static const char *const guard[] = {"error:crash", "error:timeout", "error:protocol",
                                        "error:protocol", "error:unsupported"};
    static const long restarts_after[] = {1, 2, 3, 4, 4};
    kw_cand base, c;
    kw_knobs_cand_baseline(&base, &f.cfg->space.knobs);
    for (int i = 0; i < 5; i++) {
        kw_metrics m;
        cand_set(&c, f.cfg, cfgs[i]);
        cr_assert_eq(ev->eval(ev->ctx, &c, 0, 0, &m), 0, "%s", kw_error_last());
        cr_expect_str_eq(m.guards, guard[i], "%s", cfgs[i]);
        cr_expect(isinf(m.v[KW_M_P95_US]), "%s: a failed candidate has no latency", cfgs[i]);
        /* the next candidate is measured by a fresh worker */
        cr_assert_eq(ev->eval(ev->ctx, &base, 0, 0, &m), 0, "%s", kw_error_last());
        cr_expect_str_eq(m.guards, "", "after %s: %s", cfgs[i], m.guards);
        cr_expect(isfinite(m.v[KW_M_P95_US]) && m.v[KW_M_P95_US] > 0);
        cr_expect_eq(kw_exec_restarts(f.ex), restarts_after[i], "after %s: %ld restarts",
                     cfgs[i], kw_exec_restarts(f.ex));
    }
    fx_close(&f);
}

/* A worker that stops reading its input and goes on answering (--deaf-on):
 * knobwise's requests fill the socket, and the next write must end with the
 * request's timeout (error:timeout, the worker restarted), not block: the old
 * send() waited for ever (a tune stuck, deaf to SIGTERM; this test timed out
 * on the old binary). */
Test(exec, a_worker_that_stops_reading_times_out_the_write)
{
    KW_TL_HANG_GUARD(120);
    fixture f;
    cr_assert_eq(fx_open(&f, "--deaf-on fuse_qkv=on", 2.0, 0, 3, 3), 0, "%s", kw_error_last());
    const kw_evaluator *ev = kw_exec_iface(f.ex);
    kw_cand base, deaf;
    kw_knobs_cand_baseline(&base, &f.cfg->space.knobs);
    cand_set(&deaf, f.cfg, "fuse_qkv=on");
    kw_metrics m;
    cr_assert_eq(ev->eval(ev->ctx, &deaf, 0, 0, &m), 0, "%s", kw_error_last());
    cr_assert_str_eq(m.guards, "", "the first blind answer is a good one");
    /* each request is a few hundred bytes: the socket holds a few hundred */
    int i = 0;
    for (; i < 20000; i++) {
        cr_assert_eq(ev->eval(ev->ctx, &base, 0, 0, &m), 0, "%s", kw_error_last());
        if (strcmp(m.guards, "") != 0)
            break;
    }
    cr_assert_str_eq(m.guards, "error:timeout", "after %d requests", i);
    cr_assert_eq(kw_exec_restarts(f.ex), 0, "restarted before the next request");
    cr_assert_eq(ev->eval(ev->ctx, &base, 0, 0, &m), 0, "%s", kw_error_last());
    cr_assert_str_eq(m.guards, "", "a fresh worker measures again: %s", m.guards);
    cr_assert_eq(kw_exec_restarts(f.ex), 1);
    fx_close(&f);
}

Test(exec, measured_kernel_time_replaces_stage_one)
{
    /* the test worker's time for the baseline: 100 us + sum over its knob tokens of
     * (FNV-1a("name=value") % 1000) / 10 us; computed here independently */
    fixture f;
    cr_assert_eq(fx_open(&f, "", 0, 0, 0, 0), 0, "%s", kw_error_last());
    const char *tok[4] = {"qkv.tile_m=128", "qkv.tile_n=128", "fuse_qkv=off", "launch_mode=eager"};
    double t = 100.0;
    for (int i = 0; i < 4; i++) {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (const char *p = tok[i]; *p; p++)
            h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
        t += (double)(h % 1000) / 10.0;
    }
    kw_cand base;
    kw_knobs_cand_baseline(&base, &f.cfg->space.knobs);
    kw_metrics m, model;
    const kw_evaluator *ev = kw_exec_iface(f.ex), *mev = kw_eval_iface(f.me);
    cr_assert_eq(ev->eval(ev->ctx, &base, 0, 0, &m), 0);
    cr_assert_eq(mev->eval(mev->ctx, &base, 0, 0, &model), 0);
    cr_expect_float_eq(m.v[KW_M_LATENCY_US], t, 1e-3, "measured %g, worker's closed form %g",
                       m.v[KW_M_LATENCY_US], t);
    /* the serving simulation ran on top: a request alone is a lower bound of the tail */
    cr_expect_geq(m.v[KW_M_P95_US], t * (1 - 1e-9));
    cr_expect_eq(m.v[KW_M_SAMPLES], model.v[KW_M_SAMPLES]);
    /* deterministic samples: the first request's interval is already tight */
    cr_expect_eq(kw_exec_requests(f.ex), 1);
    /* what was measured is kept beside what the model made of it */
    cr_expect_eq(ev->n_metrics, KW_X_COUNT);
    cr_expect_str_eq(ev->metric_names[KW_X_MEASURED_SAMPLES], "measured_samples");
    cr_expect_eq(m.v[KW_X_MEASURED_SAMPLES], f.cfg->space.exec_reps);
    cr_expect_float_eq(m.v[KW_X_MEASURED_LO_US], t, 1e-3);
    cr_expect_float_eq(m.v[KW_X_MEASURED_HI_US], t, 1e-3);
    fx_close(&f);
}

Test(exec, whole_request_latencies_are_the_distribution)
{
    /* unit=request: samples t (1 + Exp(mean 0.5)); p95 of that is t (1 + 0.5 ln 20) */
    fixture f;
    cr_assert_eq(fx_open(&f, "--unit request --flat", 0, 0, 2000, 2000), 0, "%s", kw_error_last());
    kw_cand base;
    kw_knobs_cand_baseline(&base, &f.cfg->space.knobs);
    kw_metrics m;
    const kw_evaluator *ev = kw_exec_iface(f.ex);
    cr_assert_eq(ev->eval(ev->ctx, &base, 0, 0, &m), 0);
    double want = 100.0 * (1.0 + 0.5 * log(20.0));
    cr_expect_float_eq(m.v[KW_M_P95_US], want, 0.05 * want, "p95 %g, closed form %g",
                       m.v[KW_M_P95_US], want);
    cr_expect_eq(m.v[KW_M_SAMPLES], 2000);
    cr_expect_leq(m.v[KW_M_P_CI_LO_US], m.v[KW_M_P95_US]);
    cr_expect_geq(m.v[KW_M_P_CI_HI_US], m.v[KW_M_P95_US]);
    fx_close(&f);
}

/* The interval of a measured whole-request p95/p99 is the order-statistic
 * one kw_sim states (Hahn & Meeker 1991, normal approximation of the
 * binomial): 1-based ranks floor(n p - 1.96 sqrt(n p q)) and
 * ceil(n p + 1.96 sqrt(n p q)), capped at n. The worker's --ramp sample is
 * 100, 200, ..., 10000 us (x_(k) = 100 k), so for n = 100: p95 95 -/+ 4.27
 * gives [x_(90), x_(100)] = [9000, 10000]; p99 99 -/+ 1.95 gives
 * [x_(97), x_(100)] = [9700, 10000]. The evaluator's own copy of the rule
 * took each rank one too high (9100 and 9800). */
Test(exec, whole_request_intervals_are_the_order_statistic_ranks)
{
    fixture f;
    cr_assert_eq(fx_open(&f, "--unit request --flat --ramp", 0, 0, 100, 100), 0, "%s",
                 kw_error_last());
    kw_cand base;
    kw_knobs_cand_baseline(&base, &f.cfg->space.knobs);
    kw_metrics m;
    const kw_evaluator *ev = kw_exec_iface(f.ex);
    cr_assert_eq(ev->eval(ev->ctx, &base, 0, 0, &m), 0, "%s", kw_error_last());
    cr_assert_eq(m.v[KW_M_SAMPLES], 100);
    cr_expect_float_eq(m.v[KW_M_P_CI_LO_US], 9000.0, 1e-9, "%g", m.v[KW_M_P_CI_LO_US]);
    cr_expect_float_eq(m.v[KW_M_P_CI_HI_US], 10000.0, 1e-9, "%g", m.v[KW_M_P_CI_HI_US]);
    cr_expect_float_eq(m.v[KW_M_P99_CI_LO_US], 9700.0, 1e-9, "%g", m.v[KW_M_P99_CI_LO_US]);
    cr_expect_float_eq(m.v[KW_M_P99_CI_HI_US], 10000.0, 1e-9, "%g", m.v[KW_M_P99_CI_HI_US]);
    fx_close(&f);
}

Test(exec, adaptive_samples_grow_to_the_cap_under_noise)
{
    fixture f;
    /* 10% noise: the median of 5..40 samples never gets within +-1%: 5, 5, 10, 20 = 40 */
    cr_assert_eq(fx_open(&f, "--noise 0.1", 0, 0, 5, 40), 0, "%s", kw_error_last());
    kw_cand base;
    kw_knobs_cand_baseline(&base, &f.cfg->space.knobs);
    kw_metrics m;
    const kw_evaluator *ev = kw_exec_iface(f.ex);
    cr_assert_eq(ev->eval(ev->ctx, &base, 0, 0, &m), 0);
    cr_expect_eq(kw_exec_requests(f.ex), 4, "%ld requests", kw_exec_requests(f.ex));
    /* 10% noise, 40 samples: the median's interval is wider than +-1% and holds it */
    cr_expect_leq(m.v[KW_X_MEASURED_LO_US], m.v[KW_M_LATENCY_US]);
    cr_expect_geq(m.v[KW_X_MEASURED_HI_US], m.v[KW_M_LATENCY_US]);
    cr_expect_gt(m.v[KW_X_MEASURED_HI_US] - m.v[KW_X_MEASURED_LO_US],
                 0.02 * m.v[KW_M_LATENCY_US]);
    cr_expect_leq(m.v[KW_X_MEASURED_SAMPLES], 40);
    cr_expect_geq(m.v[KW_X_MEASURED_SAMPLES], 32, "at most 20%% dropped by the outlier policy");
    fx_close(&f);
}

Test(exec, the_anchor_cancels_linear_drift)
{
    /* the worker slows by 2% per request; a config measured early and late */
    kw_cand base, c;
    double early, late;
    for (int anchor = 0; anchor <= 1; anchor++) {
        fixture f;
        cr_assert_eq(fx_open(&f, "--drift 2", 0, anchor, 0, 0), 0, "%s", kw_error_last());
        const kw_evaluator *ev = kw_exec_iface(f.ex);
        kw_knobs_cand_baseline(&base, &f.cfg->space.knobs);
        cand_set(&c, f.cfg, "qkv.tile_m=64");
        kw_metrics m;
        cr_assert_eq(ev->eval(ev->ctx, &base, 0, 0, &m), 0);
        cr_assert_eq(ev->eval(ev->ctx, &c, 0, 0, &m), 0);
        early = m.v[KW_M_LATENCY_US];
        for (int i = 0; i < 8; i++)
            cr_assert_eq(ev->eval(ev->ctx, &base, 0, 1 + i, &m), 0);
        cr_assert_eq(ev->eval(ev->ctx, &c, 0, 1, &m), 0);
        late = m.v[KW_M_LATENCY_US];
        if (anchor)
            cr_expect_float_eq(late, early, 1e-3 * early, "anchored: early %g late %g", early,
                               late);
        else
            cr_expect_gt(late, early * 1.1, "unanchored drift shows: early %g late %g", early,
                         late);
        fx_close(&f);
    }
}

/* ------------------------------------------------------------------ significance */

Test(exec, a_pure_noise_step_is_accepted_at_about_alpha)
{
    /* One config measured twice as two sides (repetitions 10t..10t+4 against
     * 10t+5..10t+9): a step whose true effect is zero; samples carry 5%
     * Gaussian noise (fixed seeds: the test is deterministic). The engine's
     * decision statistic -- one-sided Welch test over 5 repetitions of each
     * side's p95 -- must find a gain in about alpha = 5% of 400 independent
     * trials: expected 20, binomial sd 4.4; accepted range [8, 34] is +-3 sd.
     * (Two different configs would not do: the model's plan on top of the
     * measurement -- batch scaling, DRAM demand -- differs between them.) */
    fixture f;
    cr_assert_eq(fx_open(&f, "--flat --noise 0.05 --seed 11", 0, 0, 5, 5), 0, "%s",
                 kw_error_last());
    const kw_evaluator *ev = kw_exec_iface(f.ex);
    kw_cand a;
    kw_knobs_cand_baseline(&a, &f.cfg->space.knobs);
    int hits = 0, trials = 400, reps = 5;
    for (int t = 0; t < trials; t++) {
        double xa[5], xb[5];
        for (int r = 0; r < reps; r++) {
            kw_metrics m;
            cr_assert_eq(ev->eval(ev->ctx, &a, 0, 2 * t * reps + r, &m), 0);
            xa[r] = m.v[KW_M_P95_US];
            cr_assert_eq(ev->eval(ev->ctx, &a, 0, (2 * t + 1) * reps + r, &m), 0);
            xb[r] = m.v[KW_M_P95_US];
        }
        double ma = 0, mb = 0, va = 0, vb = 0;
        for (int r = 0; r < reps; r++) {
            ma += xa[r] / reps;
            mb += xb[r] / reps;
        }
        for (int r = 0; r < reps; r++) {
            va += (xa[r] - ma) * (xa[r] - ma) / (reps - 1);
            vb += (xb[r] - mb) * (xb[r] - mb) / (reps - 1);
        }
        double p = kw_engine_welch_p(ma, sqrt(va), reps, mb, sqrt(vb), reps);
        hits += p < f.cfg->space.alpha;
    }
    cr_expect(hits >= 8 && hits <= 34, "%d of %d pure-noise steps significant at alpha %g",
              hits, trials, f.cfg->space.alpha);
    cr_log_info("pure-noise steps significant: %d of %d at alpha %g", hits, trials,
                f.cfg->space.alpha);
    fx_close(&f);
}

Test(exec, a_pure_noise_step_against_its_control_is_accepted_at_about_alpha)
{
    /* The same trials as a_pure_noise_step_is_accepted_at_about_alpha, decided
     * as a round with a control decides them (kw_engine_paired_p): the control's
     * repetition r and the challenger's repetition r form a pair, the two
     * measured one after the other as the round's repetition sweep measures
     * them. Zero true effect: about alpha = 5% of 400 trials significant,
     * expected 20, accepted [8, 34] (+-3 binomial sd). */
    fixture f;
    cr_assert_eq(fx_open(&f, "--flat --noise 0.05 --seed 13", 0, 0, 5, 5), 0, "%s",
                 kw_error_last());
    const kw_evaluator *ev = kw_exec_iface(f.ex);
    kw_cand a;
    kw_knobs_cand_baseline(&a, &f.cfg->space.knobs);
    kw_pair *pr = calloc(1, sizeof *pr);
    int hits = 0, trials = 400, reps = 5;
    pr->n = reps;
    for (int t = 0; t < trials; t++) {
        for (int r = 0; r < reps; r++) {
            kw_metrics m;
            cr_assert_eq(ev->eval(ev->ctx, &a, 0, (2 * t + 1) * reps + r, &m), 0);
            pr->a[r] = m.v[KW_M_P95_US];
            cr_assert_eq(ev->eval(ev->ctx, &a, 0, 2 * t * reps + r, &m), 0);
            pr->c[r] = m.v[KW_M_P95_US];
        }
        hits += kw_engine_paired_p(pr, 0.0) < f.cfg->space.alpha;
    }
    cr_expect(hits >= 8 && hits <= 34, "%d of %d pure-noise steps significant (paired) at alpha %g",
              hits, trials, f.cfg->space.alpha);
    cr_log_info("pure-noise steps significant against their control: %d of %d at alpha %g", hits,
                trials, f.cfg->space.alpha);
    free(pr);
    fx_close(&f);
}

/* ------------------------------------------------------------------ the CLI */

static long count_lines(const char *path, const char *needle)
{
    char *s = kw_tl_slurp(path);
    long n = 0;
    for (char *p = s; (p = strstr(p, needle)) != NULL; p++)
        n++;
    free(s);
    return n;
}

/* `knobwise ARGS` must exit 0. */
static void knobwise_ok(const char *args)
{
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.err);
    kw_tl_free(&r);
}

/* A tune of small.xml on the test worker with 5% noise (seed 3) into
 * DIR/NAME, with the extra options flags; it must exit 0. */
static void noisy_tune(const char *dir, const char *name, const char *flags)
{
    char sp[1024], cmd[1024], args[4096];
    space_path(sp, sizeof sp, "small.xml");
    worker_cmd(cmd, sizeof cmd, "--noise 0.05 --seed 3");
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --out '%s/%s' --quiet %s",
             sp, cmd, dir, name, flags);
    knobwise_ok(args);
}

/* A tune of tests/data/exec/SPACE on the test worker started with
 * worker_args, each request it gets appended to DIR/requests (--count), into
 * DIR/NAME with the extra options flags; it must exit 0. */
static void counted_tune(const char *dir, const char *space, const char *worker_args,
                         const char *name, const char *flags)
{
    char sp[1024], cmd[1024], args[4096];
    space_path(sp, sizeof sp, space);
    worker_cmd(cmd, sizeof cmd, worker_args);
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s --count %s/requests' "
             "--out '%s/%s' --quiet %s", sp, cmd, dir, dir, name, flags);
    knobwise_ok(args);
}

static long journal_evals(const char *path)
{
    char *s = kw_tl_slurp(path);
    long n = 0;
    for (char *p = s; *p; p++)
        if ((p == s || p[-1] == '\n') && p[0] == 'E' && p[1] == ' ')
            n++;
    free(s);
    return n;
}

/* tests/data/exec/small.xml with a 600 s request timeout, written to
 * DIR/slow.xml (its path into sp). */
static void slow_space(char *sp, size_t len, const char *dir)
{
    snprintf(sp, len, "%s/slow.xml", dir);
    char xml[8192];
    snprintf(xml, sizeof xml,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<space name=\"exec_slow\" block=\"llama7b_attn\">\n"
             "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n"
             "  <workload file=\"%s/spaces/workloads/llama7b.xml\"/>\n"
             "  <shape ref=\"attn_decode_kv512_b1_c1\"/>\n"
             "  <knob name=\"qkv.tile_m\" values=\"64 128 256\" baseline=\"128\"/>\n"
             "  <knob name=\"qkv.tile_n\" values=\"64 128 256\" baseline=\"128\"/>\n"
             "  <knob name=\"fuse_qkv\" values=\"off on\" baseline=\"off\"/>\n"
             "  <tuning sim_requests=\"200\" final_requests=\"400\"/>\n"
             "  <evaluator command=\"kw_tworker\" timeout_s=\"600\" start_timeout_s=\"5\" "
             "warmup=\"2\" reps=\"5\" max_reps=\"20\" target_ci_pct=\"1\" anchor=\"false\"/>\n"
             "</space>\n",
             kw_tl_src(), kw_tl_src());
    cr_assert_eq(kw_tl_write(sp, xml), 0);
}

/* SIGTERM while the worker hangs on a request: tune stops at once (the
 * request watches the stop flag), drops the round as it does for the model
 * (nothing of it journaled: no candidate failed by the interruption), pauses
 * the journal and leaves a run that verifies. The old binary waited out the
 * worker's timeout on every hanging request of the round (600 s here; 299 s
 * for five hanging requests of validate_cpu_gemm at its 60 s): killed by this
 * test's 60 s bound, exit 137. */
Test(exec, sigterm_while_the_worker_hangs_stops_the_run_at_once)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), sp[1100], cmd[1024], ev[2200], count[1100], run[1100];
    slow_space(sp, sizeof sp, dir);
    snprintf(count, sizeof count, "%s/requests", dir);
    worker_cmd(cmd, sizeof cmd, "--hang-on qkv.tile_m=256 --count");
    snprintf(ev, sizeof ev, "exec:%s '%s'", cmd, count);
    snprintf(run, sizeof run, "%s/run", dir);
    const char *argv[] = {kw_tl_bin(), "tune", "--space", sp, "--evaluator", ev, "--out", run,
                          "--quiet", NULL};
    kw_tl_opts o = {.timeout_s = 100, .cwd = dir};
    int efd = kw_tl_tmpfile(), ofd = kw_tl_tmpfile();
    pid_t pid = kw_tl_spawn(argv, &o, ofd, efd);
    cr_assert_gt(pid, 0);
    /* wait until the worker holds the request it hangs on */
    double until = kw_tl_now() + 60;
    for (;;) {
        char *req = kw_tl_exists(count) ? kw_tl_slurp(count) : NULL;
        int hung = req && strstr(req, "knob.qkv.tile_m=256") != NULL;
        free(req);
        if (hung)
            break;
        cr_assert(kw_tl_now() < until, "the run never asked for qkv.tile_m=256");
        usleep(20000);
    }
    kill(pid, SIGTERM);
    int timed_out = 0;
    long rss;
    int st = kw_tl_wait(pid, kw_tl_now() + 60, &timed_out, &rss);
    char *err = kw_tl_slurp_fd(efd);
    close(efd);
    close(ofd);
    cr_assert(!timed_out, "tune waited on the hanging worker after SIGTERM: %s", err);
    cr_assert_eq(st, 143, "exit %d: %s", st, err);
    cr_assert(strstr(err, "resume with: knobwise tune --resume"), "%s", err);
    free(err);
    char jp[1200];
    snprintf(jp, sizeof jp, "%s/journal", run);
    char *j = kw_tl_slurp(jp);
    cr_assert(strstr(j, "error:stopped") == NULL && strstr(j, "error:timeout") == NULL,
              "the interruption was journaled as a failed candidate");
    cr_assert(strstr(j, "\nQ why=interrupted") != NULL, "%s", j);
    free(j);
    char args[1400];
    snprintf(args, sizeof args, "verify '%s' --no-eval", run);
    knobwise_ok(args);
    kw_tl_rmrf(dir);
}

/* --time-limit bounds a measurement too: the worker hangs on a request (its
 * timeout_s 600), and the run must end by its 2 s limit as a stop ends it:
 * exit 0, the round dropped (nothing journaled as a failed candidate), the
 * journal paused for the time limit, a run that verifies. main's binary
 * waited the worker's timeout out (killed at this test's 60 s bound; with a
 * worker taking 3 s per measurement, --time-limit 2 took 18 s). */
Test(exec, the_time_limit_cuts_a_measurement_in_progress)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), sp[1100], cmd[1024], ev[2200], run[1100], jp[1200];
    slow_space(sp, sizeof sp, dir);
    worker_cmd(cmd, sizeof cmd, "--hang-on qkv.tile_m=256");
    snprintf(ev, sizeof ev, "exec:%s", cmd);
    snprintf(run, sizeof run, "%s/run", dir);
    kw_tl_opts o = {.timeout_s = 60, .cwd = dir};
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", sp, "--evaluator", ev, "--out",
                             run, "--time-limit", "2", NULL);
    cr_assert(!r.timed_out, "tune waited on the hanging worker past --time-limit: %s", r.err);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "time limit reached"), "%s", r.err);
    kw_tl_free(&r);
    snprintf(jp, sizeof jp, "%s/journal", run);
    char *j = kw_tl_slurp(jp);
    cr_assert(strstr(j, "error:stopped") == NULL && strstr(j, "error:timeout") == NULL,
              "the cut measurement was journaled as a failed candidate");
    cr_assert(strstr(j, "\nQ why=time_limit") != NULL, "%s", j);
    free(j);
    char args[1400];
    snprintf(args, sizeof args, "verify '%s' --no-eval", run);
    knobwise_ok(args);
    kw_tl_rmrf(dir);
}

/* The time limit counts from the start: the baseline measurements that
 * scale the arrival rates (made before the run folder) are inside it. The
 * worker hangs on every request holding the baseline's qkv.tile_m=128, so
 * the first baseline measurement never ends: tune must end by its 2 s limit
 * with exit 1, say the limit ran out while measuring the baselines and that
 * nothing was written, and leave no run folder. main's binary waited the
 * worker's timeout_s (600) out: killed at this test's 60 s bound. */
Test(exec, the_time_limit_bounds_the_baseline_measurement_before_the_run)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), sp[1100], cmd[1024], ev[2200], run[1100];
    slow_space(sp, sizeof sp, dir);
    worker_cmd(cmd, sizeof cmd, "--hang-on qkv.tile_m=128");
    snprintf(ev, sizeof ev, "exec:%s", cmd);
    snprintf(run, sizeof run, "%s/run", dir);
    kw_tl_opts o = {.timeout_s = 60, .cwd = dir};
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", sp, "--evaluator", ev, "--out",
                             run, "--time-limit", "2", NULL);
    cr_assert(!r.timed_out, "tune waited on the baseline measurement past --time-limit: %s",
              r.err);
    cr_assert_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "time limit") && strstr(r.err, "baselines") &&
                  strstr(r.err, "nothing was written"), "%s", r.err);
    kw_tl_free(&r);
    struct stat st;
    cr_assert_neq(lstat(run, &st), 0, "a run folder was made");
    kw_tl_rmrf(dir);
}

/* A worker that crashes on the baseline measurement (exits or is killed:
 * the OOM killer) is not bad input: a fresh worker measures it again.
 * Killed once (SIGKILL on its first request): the run goes on and ends.
 * Crashing each time: exit 1 after KW_EXEC_BASELINE_TRIES requests, saying
 * so, nothing written. An error answer (wrong_result) stays bad input: exit
 * 2 after one request. main's binary said exit 2 ("could not measure the
 * baseline ... (error:crash)") after the first crash, transient or not. */
Test(exec, a_crash_on_the_baseline_is_measured_again_not_bad_input)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), sp[1100], cmd[1800], ev[1900], run[1100], aux[1200];
    slow_space(sp, sizeof sp, dir);
    snprintf(run, sizeof run, "%s/run", dir);
    kw_tl_opts o = {.timeout_s = 60, .cwd = dir};

    snprintf(aux, sizeof aux, "%s/killed", dir);
    char w[1300];
    snprintf(w, sizeof w, "--killed-once '%s'", aux);
    worker_cmd(cmd, sizeof cmd, w);
    snprintf(ev, sizeof ev, "exec:%s", cmd);
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", sp, "--evaluator", ev, "--out",
                             run, "--budget", "8", "--threads", "1", "--quiet", NULL);
    cr_assert(!r.timed_out, "%s", r.err);
    cr_assert_eq(r.status, 0, "a worker killed once on the baseline: exit %d: %s", r.status,
                 r.err);
    kw_tl_free(&r);
    struct stat st;
    cr_assert_eq(lstat(aux, &st), 0, "the worker was never killed");
    snprintf(aux, sizeof aux, "%s/results.xml", run);
    cr_assert_eq(lstat(aux, &st), 0, "the run wrote no results.xml");
    cr_assert_eq(kw_tl_rm_tree(run), 0);

    snprintf(aux, sizeof aux, "%s/count", dir);
    snprintf(w, sizeof w, "--crash-on qkv.tile_m=128 --count '%s'", aux);
    worker_cmd(cmd, sizeof cmd, w);
    snprintf(ev, sizeof ev, "exec:%s", cmd);
    r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", sp, "--evaluator", ev, "--out", run, NULL);
    cr_assert(!r.timed_out, "%s", r.err);
    cr_assert_eq(r.status, 1, "a worker crashing on every baseline try: exit %d: %s", r.status,
                 r.err);
    cr_assert(strstr(r.err, "crashed") && strstr(r.err, "3 tries") &&
                  strstr(r.err, "attn_decode_kv512_b1_c1"), "%s", r.err);
    kw_tl_free(&r);
    cr_assert_eq(count_lines(aux, "measure "), 3, "baseline requests: %ld, want 3 tries",
                 count_lines(aux, "measure "));
    cr_assert_neq(lstat(run, &st), 0, "a run folder was made");
    unlink(aux);

    snprintf(w, sizeof w, "--error-on qkv.tile_m=128:wrong_result --count '%s'", aux);
    worker_cmd(cmd, sizeof cmd, w);
    snprintf(ev, sizeof ev, "exec:%s", cmd);
    r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", sp, "--evaluator", ev, "--out", run, NULL);
    cr_assert_eq(r.status, 2, "a wrong result on the baseline: exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "error:wrong_result"), "%s", r.err);
    kw_tl_free(&r);
    cr_assert_eq(count_lines(aux, "measure "), 1, "an error answer was asked again");
    cr_assert_neq(lstat(run, &st), 0, "a run folder was made");
    kw_tl_rmrf(dir);
}

/* How many live processes have tag (NAME=VALUE) in their environment;
 * each is sent sig when sig is not 0. */
static int tagged_processes(const char *tag, int sig)
{
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    struct dirent *e;
    int found = 0;
    size_t tl = strlen(tag);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char p[300], buf[65536];
        snprintf(p, sizeof p, "/proc/%s/environ", e->d_name);
        FILE *f = fopen(p, "rb");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        int has = 0;
        for (size_t i = 0; i + tl <= n && !has; i += strlen(buf + i) + 1)
            has = strncmp(buf + i, tag, tl) == 0 && buf[i + tl] == '\0';
        if (!has)
            continue;
        snprintf(p, sizeof p, "/proc/%s/stat", e->d_name); /* a zombie is not alive */
        char st[1024] = "";
        if ((f = fopen(p, "r")) != NULL) {
            if (!fgets(st, sizeof st, f))
                st[0] = '\0';
            fclose(f);
        }
        char *rp = strrchr(st, ')');
        if (rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X') {
            found++;
            if (sig)
                kill((pid_t)atol(e->d_name), sig);
        }
    }
    closedir(d);
    return found;
}

/* tune in dir on slow_space with a worker (kw_tworker with worker_args)
 * tagged by an environment variable naming dir (tag: KW_TEST_TAG=dir, for
 * tagged_processes), its stdout and stderr to *ofd and *efd, the run folder at
 * run; waits up to 30 s for the worker to start. The tune's pid. */
static pid_t spawn_tagged_tune(const char *dir, const char *worker_args, char *tag, size_t taglen,
                               char *run, size_t runlen, int *ofd, int *efd)
{
    char sp[1100], cmd[1024], ev[2400];
    slow_space(sp, sizeof sp, dir);
    worker_cmd(cmd, sizeof cmd, worker_args);
    snprintf(tag, taglen, "KW_TEST_TAG=%s", dir);
    snprintf(ev, sizeof ev, "exec:env %s %s", tag, cmd);
    snprintf(run, runlen, "%s/run", dir);
    kw_tl_opts o = {.timeout_s = 60, .cwd = dir};
    *efd = kw_tl_tmpfile();
    *ofd = kw_tl_tmpfile();
    const char *argv[] = {kw_tl_bin(), "tune", "--space", sp, "--evaluator", ev, "--out", run,
                          NULL};
    pid_t pid = kw_tl_spawn(argv, &o, *ofd, *efd);
    double until = kw_tl_now() + 30;
    while (pid > 0 && !tagged_processes(tag, 0) && kw_tl_now() < until)
        usleep(10000);
    return pid;
}

/* SIGTERM while the worker measures the baselines (before the run folder):
 * tune stops that measurement and its worker, says so, writes nothing, exits
 * 143. The worker hangs on the baseline (tagged by an environment variable
 * naming this test's folder). main's binary had no handler yet there: it died
 * of the signal saying nothing, and the hanging worker was left running. */
Test(exec, sigterm_while_the_baselines_are_measured_stops_the_worker_and_writes_nothing)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), run[1100], tag[1200];
    signal(SIGTERM, SIG_DFL);
    int efd, ofd;
    pid_t pid = spawn_tagged_tune(dir, "--hang-on qkv.tile_m=128", tag, sizeof tag, run, sizeof run,
                                  &ofd, &efd);
    cr_assert_gt(pid, 0);
    kill(pid, SIGTERM);
    int timed_out = 0;
    long rss;
    int status = kw_tl_wait(pid, kw_tl_now() + 50, &timed_out, &rss);
    char *err = kw_tl_slurp_fd(efd);
    close(efd);
    close(ofd);
    double until = kw_tl_now() + 10; /* the worker is killed as tune ends */
    while (tagged_processes(tag, 0) && kw_tl_now() < until)
        usleep(10000);
    int orphan = tagged_processes(tag, SIGKILL); /* none left behind, whatever the outcome */
    cr_assert(!timed_out, "%s", err);
    cr_assert_eq(status, 128 + SIGTERM, "exit %d: %s", status, err);
    cr_assert(strstr(err, "SIGTERM") && strstr(err, "baseline") &&
                  strstr(err, "nothing was written"), "%s", err);
    cr_assert(!orphan, "the worker hanging on the baseline was left running");
    struct stat st;
    cr_assert_neq(lstat(run, &st), 0, "a run folder was made");
    free(err);
    kw_tl_rmrf(dir);
}

/* A worker that ignores the end of its input and SIGTERM (kw_tworker
 * --immortal, here hanging on the baseline) does not outlive a tune killed
 * with SIGKILL: the guardian knobwise forks as the worker's process group
 * leader kills the group once knobwise is gone. main's binary left the
 * worker running (for 120 s here; for ever a kernel process that never reads
 * its input), holding the device. The 20 s wait is a bound, not a speed. */
Test(exec, a_worker_that_ignores_eof_and_sigterm_dies_with_a_killed_tune)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), run[1100], tag[1200];
    int efd, ofd;
    pid_t pid = spawn_tagged_tune(dir, "--immortal --hang-on qkv.tile_m=128", tag, sizeof tag, run,
                                  sizeof run, &ofd, &efd);
    cr_assert_gt(pid, 0);
    int started = tagged_processes(tag, 0);
    usleep(200000); /* the worker has its request: it hangs in it */
    kill(pid, SIGKILL);
    int timed_out = 0;
    long rss;
    int status = kw_tl_wait(pid, kw_tl_now() + 50, &timed_out, &rss);
    close(efd);
    close(ofd);
    double until = kw_tl_now() + 20;
    while (tagged_processes(tag, 0) && kw_tl_now() < until)
        usleep(10000);
    int orphan = tagged_processes(tag, SIGKILL); /* none left behind, whatever the outcome */
    cr_assert(started, "the worker never started");
    cr_assert_eq(status, 128 + SIGKILL, "tune: exit %d", status);
    cr_assert(!orphan, "the worker outlived the killed tune (%d process(es) left)", orphan);
    kw_tl_rmrf(dir);
}

/* A measured run's evidence evaluates nothing (its portability and
 * re-checks come from the journal), so it keeps no RUN/evidence. main's
 * binary left one holding only its header line. */
Test(exec, a_measured_run_keeps_no_evidence_file)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), sp[1100], cmd[1024], args[4096], ep[1200];
    slow_space(sp, sizeof sp, dir);
    worker_cmd(cmd, sizeof cmd, "");
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --budget 8 --threads 1 "
             "--out '%s/run' --quiet", sp, cmd, dir);
    knobwise_ok(args);
    snprintf(ep, sizeof ep, "%s/run/results.xml", dir);
    struct stat st;
    cr_assert_eq(lstat(ep, &st), 0, "no results.xml");
    snprintf(ep, sizeof ep, "%s/run/evidence", dir);
    cr_assert_neq(lstat(ep, &st), 0, "a measured run left %s (%lld bytes)", ep,
                  (long long)st.st_size);
    snprintf(args, sizeof args, "verify '%s/run' --no-eval", dir);
    knobwise_ok(args);
    kw_tl_rmrf(dir);
}

/* An anchored measurement whose bracket failed is journaled as failed
 * (error:anchor), never kept without the drift correction. The worker dies
 * at its 4th request (--die-after 3; --flat: one request per measurement,
 * one thread), so the requests of a worker's life fall on brackets in a
 * fixed order: some evaluation's anchor is the request that dies. main's
 * binary journaled those measurements uncorrected, as if bracketed (g= empty,
 * no error:anchor anywhere). Every E record either passes, or names its
 * failure: the candidate's own request (error:crash) or the bracket. */
Test(exec, a_measurement_whose_anchor_failed_is_journaled_as_failed)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), sp[1100], xml[8192], args[4096], cmd[1024], jp[1200];
    snprintf(sp, sizeof sp, "%s/anchored.xml", dir);
    snprintf(xml, sizeof xml,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<space name=\"exec_anchored\" block=\"llama7b_attn\">\n"
             "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n"
             "  <workload file=\"%s/spaces/workloads/llama7b.xml\"/>\n"
             "  <shape ref=\"attn_decode_kv512_b1_c1\"/>\n"
             "  <knob name=\"qkv.tile_m\" values=\"64 128 256\" baseline=\"128\"/>\n"
             "  <knob name=\"fuse_qkv\" values=\"off on\" baseline=\"off\"/>\n"
             "  <tuning sim_requests=\"200\" final_requests=\"400\"/>\n"
             "  <evaluator command=\"kw_tworker\" timeout_s=\"5\" start_timeout_s=\"5\" "
             "warmup=\"2\" reps=\"5\" max_reps=\"20\" target_ci_pct=\"1\" anchor=\"true\"/>\n"
             "</space>\n",
             kw_tl_src(), kw_tl_src());
    cr_assert_eq(kw_tl_write(sp, xml), 0);
    worker_cmd(cmd, sizeof cmd, "--flat --die-after 3");
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --budget 8 --threads 1 "
             "--out '%s/run' --quiet", sp, cmd, dir);
    knobwise_ok(args);
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    char *j = kw_tl_slurp(jp);
    long anchor_failed = 0;
    for (char *p = j; (p = strstr(p, "\nE ")) != NULL; p++) {
        char *end = strchr(p + 1, '\n'), *g = strstr(p, " g=");
        cr_assert(end && g && g < end, "an E record without g=");
        anchor_failed += strncmp(g, " g=error:anchor ", 16) == 0;
    }
    cr_assert_gt(anchor_failed, 0, "no measurement with a failed bracket was said: %s", j);
    free(j);
    snprintf(args, sizeof args, "verify '%s/run' --no-eval", dir);
    knobwise_ok(args);
    kw_tl_rmrf(dir);
}

/* RUN/worker.log is a run folder's own file: a FIFO, a folder or a link put
 * there is refused by tune --resume, exit 2, naming it, before anything of the
 * run is written (the old binary: the FIFO's open waited for a reader for
 * ever, so this test timed out; a folder or a link was exit 1). */
Test(exec, a_worker_log_that_is_no_file_is_refused_before_the_run)
{
    KW_TL_HANG_GUARD(60);
    char *dir = kw_tl_tmpdir("kwtest"), log[1100], jp[1100], out[1100], args[2400];
    counted_tune(dir, "small.xml", "", "run", "--time-limit 1");
    snprintf(log, sizeof log, "%s/run/worker.log", dir);
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    snprintf(out, sizeof out, "%s/outside.log", dir);
    char *before = kw_tl_slurp(jp);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(unlink(log) == 0 || rmdir(log) == 0, 1, "%s", log);
        cr_assert_eq(i == 0 ? mkfifo(log, 0600) : i == 1 ? mkdir(log, 0700) : symlink(out, log), 0);
        snprintf(args, sizeof args, "tune --resume '%s/run' --quiet", dir);
        kw_tl_proc r = kw_tl_sh(args, NULL);
        cr_assert_eq(r.status, 2, "%d: status %d: %s", i, r.status, r.err);
        cr_assert(strstr(r.err, "run/worker.log: cannot open the worker log: it is ") != NULL, "%s",
                  r.err);
        kw_tl_free(&r);
        char *now = kw_tl_slurp(jp);
        cr_assert_str_eq(now, before, "the journal changed");
        free(now);
    }
    cr_assert(!kw_tl_exists(out), "the log was written through the link");
    free(before);
    kw_tl_rmrf(dir);
}

/* tune --resume of a run whose worker.log or journal has another name (a
 * hard link, here beside the run folder), and a new measured run into a
 * folder whose worker.log has, or is the user's own (no .lock there): exit 2
 * naming the file, before the lock or anything else is written, the other
 * name's file untouched. On main's binary the resume
 * and the new run appended the worker's stderr to the file linked at
 * worker.log (exit 0: a write outside the run folder); a linked journal was
 * appended to as well. */
Test(exec, a_run_file_with_other_names_is_refused_before_the_resume)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), run[1100], f[1300], out[1100], args[2400];
    /* a run stopped by its time limit: the resume has evaluations to do */
    counted_tune(dir, "small.xml", "--stderr --sleep 0.05", "run", "--budget 20 --time-limit 1");
    snprintf(run, sizeof run, "%s/run", dir);
    snprintf(out, sizeof out, "%s/outside", dir);
    snprintf(args, sizeof args, "tune --resume '%s' --quiet", run);
    static const char *const names[2] = {"worker.log", "journal"};
    static const char *const roles[2] = {"worker log", "journal"};
    for (int i = 0; i < 2; i++) {
        snprintf(f, sizeof f, "%s/%s", run, names[i]);
        if (i == 0) {
            cr_assert_eq(kw_tl_write(out, "the user's own\n"), 0);
            cr_assert_eq(unlink(f), 0);
            cr_assert_eq(link(out, f), 0);
        } else {
            cr_assert_eq(unlink(out), 0);
            cr_assert_eq(link(f, out), 0);
        }
        char *before = kw_tl_slurp(out);
        int entries = kw_tl_entries(run);
        kw_tl_proc r = kw_tl_sh(args, NULL);
        cr_expect_eq(r.status, 2, "%s: status %d: %s", names[i], r.status, r.err);
        char want[200];
        snprintf(want, sizeof want, "run/%s: the run's %s has other names (2 hard links)",
                 names[i], roles[i]);
        cr_expect(strstr(r.err, want) != NULL, "want '%s' in: %s", want, r.err);
        kw_tl_free(&r);
        char *now = kw_tl_slurp(out);
        cr_expect_str_eq(now, before, "%s: the file by the other name was written", names[i]);
        cr_expect_eq(kw_tl_entries(run), entries, "%s: something was added to the run",
                     names[i]);
        free(now);
        free(before);
        if (i == 0) { /* worker.log a file of its own again */
            cr_assert_eq(unlink(f), 0);
            cr_assert_eq(kw_tl_write(f, ""), 0);
        }
    }
    /* a new run into a folder whose worker.log is another name of a file:
     * refused before the lock file is made (main's binary appended to it) */
    char fresh[1200], sp[1024], cmd[1024], targs[4096];
    snprintf(fresh, sizeof fresh, "%s/fresh", dir);
    cr_assert_eq(mkdir(fresh, 0755), 0);
    snprintf(f, sizeof f, "%s/worker.log", fresh);
    cr_assert_eq(unlink(out), 0);
    cr_assert_eq(kw_tl_write(out, "the user's own\n"), 0);
    cr_assert_eq(link(out, f), 0);
    space_path(sp, sizeof sp, "small.xml");
    worker_cmd(cmd, sizeof cmd, "--stderr");
    snprintf(targs, sizeof targs, "tune --space '%s' --evaluator 'exec:%s' --out '%s' --quiet "
             "--budget 20", sp, cmd, fresh);
    kw_tl_proc r = kw_tl_sh(targs, NULL);
    cr_expect_eq(r.status, 2, "fresh: status %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "fresh/worker.log: exists, and is another name of a file (a hard "
                     "link)") != NULL, "%s", r.err);
    kw_tl_free(&r);
    cr_expect_eq(kw_tl_entries(fresh), 1, "fresh: something was written beside worker.log");
    char *kept = kw_tl_slurp(out);
    cr_expect_str_eq(kept, "the user's own\n", "fresh: the file by the other name was written");
    free(kept);
    /* nor into the user's own worker.log in a folder no run has locked
     * (main's binary appended the worker's stderr to it, exit 0); a run
     * without a worker leaves it alone and goes on */
    cr_assert_eq(unlink(f), 0);
    cr_assert_eq(kw_tl_write(f, "the user's own\n"), 0);
    r = kw_tl_sh(targs, NULL);
    cr_expect_eq(r.status, 2, "user's log: status %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "fresh/worker.log: exists, and ") != NULL &&
              strstr(r.err, "holds no run (no journal, no lock file)") != NULL, "%s", r.err);
    kw_tl_free(&r);
    cr_expect_eq(kw_tl_entries(fresh), 1, "user's log: something was written beside it");
    kept = kw_tl_slurp(f);
    cr_expect_str_eq(kept, "the user's own\n", "the user's worker.log was written");
    free(kept);
    char model[4096];
    snprintf(model, sizeof model, "tune --space '%s/spaces/validate_small.xml' --budget 5 "
             "--out '%s' --quiet", kw_tl_src(), fresh);
    r = kw_tl_sh(model, NULL);
    cr_expect_eq(r.status, 0, "a model run beside the user's worker.log: status %d: %s", r.status,
                 r.err);
    kw_tl_free(&r);
    kept = kw_tl_slurp(f);
    cr_expect_str_eq(kept, "the user's own\n", "the model run wrote the user's worker.log");
    free(kept);
    kw_tl_rmrf(dir);
}

/* A worker flooding its stderr (12 MiB before its ready line, at each of its
 * two starts, then a line per request): worker.log holds at most the cap
 * (KW_WORKER_LOG_CAP, 4 MiB) and the notes saying so, knobwise's own stderr
 * at most KW_WORKER_STDERR_CAP of it (the start check, before the folder),
 * the run finishes, and its journal and tables are those of a run whose
 * worker says nothing. On main's binary worker.log held all 12.6 MB and the
 * stderr all 12 MiB (a worker writing for ever filled the disk). */
Test(exec, a_worker_flooding_its_stderr_is_capped)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], cmd[1024], args[4096], p[1200], q[1200];
    space_path(sp, sizeof sp, "flood.xml"); /* small.xml, 30 s to start under the flood */
    const char *runs[2] = {"--stderr", "--stderr-flood 12582912 --stderr"};
    for (int i = 0; i < 2; i++) {
        worker_cmd(cmd, sizeof cmd, runs[i]);
        snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --out '%s/run%d' "
                 "--quiet --budget 20", sp, cmd, dir, i);
        kw_tl_proc r = kw_tl_sh(args, NULL);
        cr_assert_eq(r.status, 0, "status %d: %.300s", r.status, r.err);
        if (i == 1) {
            cr_expect_leq(strlen(r.err), (size_t)KW_WORKER_STDERR_CAP + 512,
                          "%zu bytes of the worker's stderr on knobwise's", strlen(r.err));
            cr_expect(strstr(r.err, "knobwise: forwarding cap of 65536 bytes reached")
                      != NULL, "%.200s", r.err + (strlen(r.err) > 200 ? strlen(r.err) - 200 : 0));
        }
        kw_tl_free(&r);
    }
    struct stat st;
    snprintf(p, sizeof p, "%s/run1/worker.log", dir);
    cr_assert_eq(stat(p, &st), 0);
    cr_expect_leq((long long)st.st_size, KW_WORKER_LOG_CAP + 512, "worker.log is %lld bytes",
                  (long long)st.st_size);
    cr_expect_eq(count_lines(p, "knobwise: worker.log cap of 4194304 bytes reached"), 1);
    cr_expect_eq(count_lines(p, "kw_tworker: request"), 0, "lines past the cap were kept");
    /* the journals differ in the worker's command only */
    const char *same[3] = {"audit.csv", "ranked.csv", "portability.csv"};
    for (int k = 0; k < 3; k++) {
        snprintf(p, sizeof p, "%s/run0/%s", dir, same[k]);
        snprintf(q, sizeof q, "%s/run1/%s", dir, same[k]);
        char *a = kw_tl_slurp(p), *b = kw_tl_slurp(q);
        cr_expect(a && b && strcmp(a, b) == 0, "%s differs", same[k]);
        free(a);
        free(b);
    }
    kw_tl_rmrf(dir);
}

/* A worker that starts a daemon (setsid: out of its process group, so never
 * killed with it) does not keep knobwise's stderr: a caller capturing it
 * sees its end once knobwise has exited. On main's binary the daemon held
 * the caller's pipe for its 120 s, so this test's 60 s wait ran out. The
 * wait is a bound, not a speed: EOF has to arrive, not arrive fast. */
Test(exec, a_worker_daemon_does_not_hold_knobwise_stderr)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], cmd[2400], ev[2600], out[1100], pids[1100];
    space_path(sp, sizeof sp, "small.xml");
    snprintf(pids, sizeof pids, "%s/daemons", dir);
    char wargs[1200];
    snprintf(wargs, sizeof wargs, "--escape %s", pids);
    worker_cmd(cmd, sizeof cmd, wargs);
    snprintf(ev, sizeof ev, "exec:%s", cmd);
    snprintf(out, sizeof out, "%s/run", dir);
    const char *argv[] = {kw_tl_bin(), "tune", "--space", sp, "--evaluator", ev, "--out", out,
                          "--quiet", "--budget", "20", NULL};
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    int devnull = open("/dev/null", O_WRONLY);
    kw_tl_opts o = {.timeout_s = 60};
    pid_t pid = kw_tl_spawn(argv, &o, devnull, pfd[1]);
    close(pfd[1]);
    close(devnull);
    cr_assert_gt(pid, 0);
    int to = 0;
    long rss = 0;
    int st = kw_tl_wait(pid, kw_tl_now() + 60, &to, &rss);
    /* read the capture to its end, for at most 60 s */
    double end = kw_tl_now() + 60;
    int eof = 0;
    char buf[4096];
    while (!eof && kw_tl_now() < end) {
        struct pollfd pp = {.fd = pfd[0], .events = POLLIN};
        if (poll(&pp, 1, 200) > 0) {
            ssize_t k = read(pfd[0], buf, sizeof buf);
            eof = k == 0;
        }
    }
    close(pfd[0]);
    /* the daemons (one per worker started) go */
    char *list = kw_tl_slurp(pids);
    int n = 0;
    for (char *s = list; s && *s; n++) {
        char *e;
        long d = strtol(s, &e, 10);
        if (e == s)
            break;
        s = e;
        if (d > 1)
            kill((pid_t)d, SIGKILL);
        while (*s == '\n')
            s++;
    }
    free(list);
    cr_expect_eq(st, 0, "tune: status %d", st);
    cr_expect_gt(n, 0, "the worker started no daemon");
    cr_expect(eof, "knobwise's stderr was still open 60 s after it exited");
    kw_tl_rmrf(dir);
}

/* Run knobwise with argv[1..] whose stderr is a pipe its reader has closed,
 * stdout into a file read back into *out (malloc'ed). The exit status, or
 * 128 + the signal that ended it. */
static int with_stderr_closed(char **out, const char *const *argv)
{
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    close(pfd[0]);
    int ofd = kw_tl_tmpfile();
    cr_assert_geq(ofd, 0);
    kw_tl_opts o = {.timeout_s = 60};
    pid_t pid = kw_tl_spawn(argv, &o, ofd, pfd[1]);
    close(pfd[1]);
    cr_assert_gt(pid, 0);
    int to = 0;
    long rss = 0;
    int st = kw_tl_wait(pid, kw_tl_now() + 60, &to, &rss);
    *out = kw_tl_slurp_fd(ofd);
    close(ofd);
    return st;
}

/* A caller that closed the read end of knobwise's stderr (a log reader gone)
 * costs knobwise only that text: the worker's stderr it forwards there (the
 * start check before the run folder exists, eval, verify --remeasure) and its
 * own progress lines fail with EPIPE, the verb runs to its end with its own
 * exit status. Its stdout stays a filter's: a reader gone from stdout still
 * ends it by SIGPIPE. On main's binary tune (its first forwarded line) and
 * eval died of SIGPIPE, status 141, with no run and no table. */
Test(exec, a_closed_stderr_loses_no_run)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], cmd[1024], ev[1100], run[1100], p[1200];
    space_path(sp, sizeof sp, "small.xml");
    worker_cmd(cmd, sizeof cmd, "--stderr");
    snprintf(ev, sizeof ev, "exec:%s", cmd);
    snprintf(run, sizeof run, "%s/run", dir);
    char *out;
    /* tune without --quiet: the worker's stderr and tune's own lines */
    const char *tune[] = {kw_tl_bin(), "tune", "--space", sp, "--evaluator", ev, "--out", run,
                          "--budget", "20", NULL};
    int st = with_stderr_closed(&out, tune);
    cr_expect_eq(st, 0, "tune: status %d", st);
    free(out);
    snprintf(p, sizeof p, "%s/results.xml", run);
    cr_expect(kw_tl_exists(p), "tune left no results.xml");
    const char *eval[] = {kw_tl_bin(), "eval", "--space", sp, "--evaluator", ev, "--format", "csv",
                          NULL};
    st = with_stderr_closed(&out, eval);
    cr_expect_eq(st, 0, "eval: status %d", st);
    cr_expect(strncmp(out, "shape,config_id,", 16) == 0 && strchr(out, '\n') &&
              strchr(out, '\n')[1] != '\0', "eval's table: %.200s", out);
    free(out);
    const char *verify[] = {kw_tl_bin(), "verify", run, "--remeasure", "2", "--evaluator", ev,
                            NULL};
    st = with_stderr_closed(&out, verify);
    cr_expect_eq(st, 0, "verify --remeasure: status %d", st);
    cr_expect(strstr(out, "verified: ") != NULL, "%.300s", out);
    free(out);
    /* stdout's reader gone: SIGPIPE, as a filter ends */
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    close(pfd[0]);
    int efd = kw_tl_tmpfile();
    const char *show[] = {kw_tl_bin(), "show", "--space", sp, NULL};
    kw_tl_opts o = {.timeout_s = 60};
    pid_t pid = kw_tl_spawn(show, &o, pfd[1], efd);
    close(pfd[1]);
    int to = 0;
    long rss = 0;
    st = kw_tl_wait(pid, kw_tl_now() + 60, &to, &rss);
    close(efd);
    cr_expect_eq(st, 128 + SIGPIPE, "show into a closed stdout: status %d", st);
    kw_tl_rmrf(dir);
}

/* A caller that started knobwise with SIGPIPE ignored (`trap '' PIPE`, or a
 * parent's SIG_IGN, inherited across exec) keeps it ignored: a closed stdout
 * is a failed write, not a death by the signal the caller turned off. Before,
 * main's handler replaced the inherited SIG_IGN and show died of SIGPIPE. */
Test(exec, an_inherited_ignored_sigpipe_stays_ignored)
{
    KW_TL_HANG_GUARD(60);
    char sp[1024];
    space_path(sp, sizeof sp, "small.xml");
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    close(pfd[0]);
    int efd = kw_tl_tmpfile();
    const char *show[] = {kw_tl_bin(), "show", "--space", sp, NULL};
    kw_tl_opts o = {.timeout_s = 30};
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    cr_assert_eq(sigaction(SIGPIPE, &ign, &old), 0);
    pid_t pid = kw_tl_spawn(show, &o, pfd[1], efd); /* inherits SIG_IGN */
    sigaction(SIGPIPE, &old, NULL);
    close(pfd[1]);
    cr_assert_gt(pid, 0);
    int to = 0;
    long rss = 0;
    int st = kw_tl_wait(pid, kw_tl_now() + 30, &to, &rss);
    close(efd);
    cr_expect(!to, "show did not end");
    cr_expect_neq(st, 128 + SIGPIPE, "show died of the SIGPIPE its caller ignored");
    cr_expect_eq(st, 1, "a write that fails is a runtime failure: status %d", st);
}

/* 1 while pid is a process that has not ended (a zombie has ended). */
static int still_running(pid_t pid)
{
    char p[64], st[512] = "";
    snprintf(p, sizeof p, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    size_t n = fread(st, 1, sizeof st - 1, f);
    fclose(f);
    st[n] = '\0';
    const char *e = strrchr(st, ')'); /* "pid (comm) S ..." */
    return e && e[1] == ' ' && e[2] != 'Z' && e[2] != 'X';
}

/* A test ended by its hang guard takes the command it was waiting for with
 * it: a process started through kw_tl_sh (here a shell that records its pid
 * and becomes a 60 s sleep) ends with the test process, not 60 s later. On
 * main's tests/lib (system()) the sleep outlived the test (kw_tworker
 * --hang-on workers of a timed-out test were found still sleeping). The
 * 20 s wait is a bound, not a speed. */
Test(exec, a_test_ended_by_its_hang_guard_takes_its_children)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwtest"), pidf[1100], args[1400];
    snprintf(pidf, sizeof pidf, "%s/pid", dir);
    snprintf(args, sizeof args, "--version >/dev/null; echo $$ >'%s'; exec sleep 60", pidf);
    pid_t t = fork();
    cr_assert_geq(t, 0);
    if (t == 0) { /* the test process: its guard ends it while kw_tl_sh waits */
        KW_TL_HANG_GUARD(2);
        kw_tl_proc r = kw_tl_sh(args, NULL);
        kw_tl_free(&r);
        _exit(0);
    }
    int st = 0;
    cr_assert_eq(waitpid(t, &st, 0), t);
    cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM, "the guard did not end the test");
    char *text = kw_tl_slurp(pidf);
    long child = atol(text);
    free(text);
    cr_assert_gt(child, 1, "the child never started");
    double end = kw_tl_now() + 20;
    while (still_running((pid_t)child) && kw_tl_now() < end)
        usleep(50000);
    int alive = still_running((pid_t)child);
    if (alive)
        kill((pid_t)child, SIGKILL);
    cr_expect(!alive, "the test's child (pid %ld) outlived it", child);
    kw_tl_rmrf(dir);
}

Test(exec, tune_cannot_start_worker_writes_nothing)
{
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], cmd[1024], args[4096], out[1100];
    space_path(sp, sizeof sp, "small.xml");
    worker_cmd(cmd, sizeof cmd, "--no-ready");
    snprintf(out, sizeof out, "%s/run", dir);
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --out '%s' --quiet", sp,
             cmd, out);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 1, "a worker that runs and fails its handshake is a runtime failure: "
                 "status %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "knobwise tune: worker '") != NULL, "%s", r.err);
    cr_expect(strstr(r.err, "did not start") != NULL, "%s", r.err);
    cr_expect(!kw_tl_exists(out), "no run folder for a worker that cannot start");
    kw_tl_free(&r);
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec' --out '%s'", sp, out);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 2, "a malformed --evaluator is a usage error: %s", r.err);
    cr_expect(!kw_tl_exists(out));
    kw_tl_free(&r);
    /* the schema and semantic checks of <evaluator> */
    space_path(sp, sizeof sp, "bad_reps.xml");
    snprintf(args, sizeof args, "validate '%s'", sp);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "bad_reps.xml:8: max_reps (10) is below reps (20)") != NULL, "%s",
              r.err);
    kw_tl_free(&r);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
    free(dir);
}

/* A budget below a measured run's repeats (5 by default: the measuring
 * evaluator is noisy) is refused before the run folder is made: exit 2, no
 * folder. On main the engine refused it after the folder, its .lock and
 * worker.log had been made. */
Test(exec, tune_budget_below_the_repeats_writes_nothing)
{
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], cmd[1024], args[4096], out[1100];
    space_path(sp, sizeof sp, "small.xml");
    worker_cmd(cmd, sizeof cmd, "--flat");
    snprintf(out, sizeof out, "%s/run", dir);
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --budget 4 --out '%s' "
             "--quiet", sp, cmd, out);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 2, "status %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "a budget of 4 evaluations cannot even evaluate the baseline "
                            "(5 repeats)") != NULL, "%s", r.err);
    cr_expect(!kw_tl_exists(out), "no run folder for a budget that cannot run");
    kw_tl_free(&r);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
    free(dir);
}

Test(exec, tune_journals_failed_candidates_and_goes_on)
{
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], cmd[1024], args[4096], p[1200];
    space_path(sp, sizeof sp, "small.xml");
    worker_cmd(cmd, sizeof cmd, "--crash-on qkv.tile_m=64 --hang-on qkv.tile_n=64 --stderr");
    /* The timeout is recorded in the run and bounds verify's re-measure
     * below too: 2 s, not 0.5, so that a healthy request of the sanitizer
     * build on a loaded machine is not taken for a hang (CI's ASan run
     * failed this test once at load ~8, 2026-12-05). */
    snprintf(args, sizeof args,
             "tune --space '%s' --evaluator 'exec:%s' --timeout 2 --out '%s/run' --quiet "
             "--threads 2 --budget 30",
             sp, cmd, dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "status %d: %s", r.status, r.err);
    snprintf(p, sizeof p, "%s/run/audit.csv", dir);
    cr_expect_gt(count_lines(p, ",error:crash,reject,"), 0, "the crash is a rejected step");
    cr_expect_gt(count_lines(p, ",error:timeout,reject,"), 0, "the hang is a rejected step");
    snprintf(p, sizeof p, "%s/run/journal", dir);
    cr_expect_gt(count_lines(p, "error:crash"), 0);
    snprintf(p, sizeof p, "%s/run/worker.log", dir);
    cr_expect_gt(count_lines(p, "kw_tworker: request"), 0, "the worker's stderr is in worker.log");
    kw_tl_free(&r);
    /* verify works on a measured run unchanged (without re-measuring) */
    snprintf(args, sizeof args, "verify '%s/run'", dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "verify: %s%s", r.out, r.err);
    cr_expect(strstr(r.out, "skip re-evaluation: a measured run") != NULL, "%s", r.out);
    kw_tl_free(&r);
    /* --remeasure: the same deterministic worker reproduces its times (drift 0) */
    snprintf(args, sizeof args, "verify '%s/run' --remeasure 4", dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "verify --remeasure: %s%s", r.out, r.err);
    cr_expect(strstr(r.out, "ok   re-measure: 4 evaluations measured again") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "drift median +0.00%, range [+0.00%, +0.00%]") != NULL, "%s", r.out);
    kw_tl_free(&r);
    /* ... and a worker that slows by 10% per request (0%, +10%, +20% over three
     * deterministic requests, anchor off) shows exactly that drift */
    char slow[1200];
    worker_cmd(cmd, sizeof cmd, "--drift 10");
    snprintf(slow, sizeof slow, "exec:%s", cmd);
    snprintf(args, sizeof args, "verify '%s/run' --remeasure 3 --evaluator '%s'", dir, slow);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "drift median +10.00%, range [+0.00%, +20.00%]") != NULL,
              "drift reported: %s", r.out);
    kw_tl_free(&r);
    /* ... and a worker that can measure none of them (each request outlasts
     * the run's 2 s timeout) fails the verification, exit 1: main 099d4d6
     * printed "FAIL re-measure", then "verified: RUN", exit 0 */
    worker_cmd(cmd, sizeof cmd, "--sleep 3");
    snprintf(slow, sizeof slow, "exec:%s", cmd);
    snprintf(args, sizeof args, "verify '%s/run' --remeasure 1 --evaluator '%s'", dir, slow);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 1, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "FAIL re-measure") != NULL && strstr(r.out, "verified") == NULL,
              "%s", r.out);
    cr_expect(strstr(r.err, "none of the 1 sampled evaluations could be measured again"), "%s",
              r.err);
    kw_tl_free(&r);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
    free(dir);
}

/* The worker's program is an input of the run: resume refuses a changed one
 * (naming the file) before it starts a worker or writes anything. */
Test(exec, resume_refuses_a_changed_worker_program)
{
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], args[4096], sh[4096], w[1100], j[1100];
    space_path(sp, sizeof sp, "small.xml");
    snprintf(w, sizeof w, "%s/worker", dir);
    snprintf(sh, sizeof sh, "cp '%s/tests/kw_tworker' '%s'", builddir(), w);
    cr_assert_eq(system(sh), 0);
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --out '%s/run' --quiet "
             "--budget 20", sp, w, dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.err);
    kw_tl_free(&r);
    snprintf(j, sizeof j, "%s/run/journal", dir);
    cr_assert_gt(count_lines(j, "I name=worker "), 0, "the worker program is not an input record");
    /* unchanged: the resume goes through */
    snprintf(args, sizeof args, "tune --resume '%s/run' --quiet", dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    /* one byte more at its end (an ELF file still runs): refused, journal untouched */
    snprintf(sh, sizeof sh, "printf x >> '%s' && cp '%s' '%s/journal.before'", w, j, dir);
    cr_assert_eq(system(sh), 0);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 2, "status %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "changed since the run started") && strstr(r.err, "worker"), "%s",
              r.err);
    kw_tl_free(&r);
    snprintf(sh, sizeof sh, "cmp -s '%s' '%s/journal.before'", j, dir);
    cr_expect_eq(system(sh), 0, "the refused resume changed the journal");
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    cr_expect_eq(system(sh), 0);
    free(dir);
}

Test(exec, resume_never_measures_twice)
{
    char *dir = kw_tl_tmpdir("kwtest"), args[4096], cnt[1100], j1[1100], j2[1100], sh[4096];
    snprintf(cnt, sizeof cnt, "%s/requests", dir);
    counted_tune(dir, "small.xml", "", "full", "--budget 60");
    kw_tl_proc r;
    snprintf(j1, sizeof j1, "%s/full/journal", dir);
    long evals = journal_evals(j1), measured = count_lines(cnt, "purpose=search");
    cr_assert_gt(evals, 10);
    cr_expect_eq(measured, evals, "one search request per journaled evaluation (deterministic "
                 "worker): %ld requests, %ld evaluations", measured, evals);

    /* audit's one-line reproduction of a step names the run's worker */
    snprintf(args, sizeof args, "audit '%s/full'", dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "--evaluator 'exec:") != NULL, "%s", r.out);
    /* ... and its sensitivity cells are paired: each neighbour re-measured
     * beside the recommendation after the search (N records), the figure a
     * paired difference with its interval, not means of different rounds */
    cr_expect(strstr(r.out, "(a measured run: every cell is paired") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "not paired") == NULL, "%s", r.out);
    cr_expect(strstr(r.out, "%, +") != NULL || strstr(r.out, "%, -") != NULL, "no interval: %s", r.out);
    /* the exploration line counts the search's evaluations and the
     * measurement-only ones (the controls, the pairing) apart: over the shapes
     * they add up to the journal's E records, and the pairing made some */
    long search = 0, only = 0;
    for (const char *p = strstr(r.out, "  exploration: "); p; p = strstr(p + 1, "  exploration: ")) {
        long a = -1, c = -1, b = -1;
        cr_assert_eq(sscanf(p, "  exploration: %ld search evaluations of %ld configurations and %ld "
                            "measurement-only (", &a, &c, &b), 3, "%.300s", p);
        search += a;
        only += b;
    }
    cr_expect_gt(only, 0, "%s", r.out);
    cr_expect_eq(search + only, evals, "%ld search + %ld measurement-only, %ld E records", search,
                 only, evals);
    kw_tl_free(&r);
    cr_expect_gt(count_lines(j1, "\nN s="), 0, "no pair journaled");
    /* results.xml's sensitivity carries the pairs' intervals (results.xsd) */
    snprintf(sh, sizeof sh, "%s/full/results.xml", dir);
    cr_expect_gt(count_lines(sh, " paired_lo_pct=\""), 0, "no paired interval in results.xml");
    /* the report says the same under its sensitivity plot */
    snprintf(args, sizeof args, "report '%s/full' -o '%s/report.html' --no-portability", dir, dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    snprintf(sh, sizeof sh, "%s/report.html", dir);
    cr_expect_eq(count_lines(sh, "A measured run: every bar is paired"), 1);
    cr_expect_gt(count_lines(sh, " measurement-only</td>"), 0, "the summary table splits the evaluations");
    long before_audit = count_lines(cnt, "purpose=search");
    cr_expect_eq(before_audit, measured, "audit measures nothing");

    /* resume a finished run: nothing is measured for the search again */
    snprintf(args, sizeof args, "tune --resume '%s/full' --quiet", dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    cr_expect_eq(count_lines(cnt, "purpose=search"), measured, "resume measured again");

    /* a run cut after its first half: only the missing evaluations are measured,
     * and the journal comes out identical */
    snprintf(sh, sizeof sh,
             "mkdir '%s/cut' && n=$(grep -n '^E ' '%s' | sed -n %ldp | cut -d: -f1) && "
             "head -n $n '%s' > '%s/cut/journal'",
             dir, j1, evals / 2, j1, dir);
    cr_assert_eq(system(sh), 0);
    snprintf(j2, sizeof j2, "%s/cut/journal", dir);
    long kept = journal_evals(j2);
    cr_assert_eq(kept, evals / 2);
    snprintf(args, sizeof args, "tune --resume '%s/cut' --quiet", dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    cr_expect_eq(count_lines(cnt, "purpose=search"), measured + (evals - kept),
                 "the resumed run measured %ld, the journal missed %ld",
                 count_lines(cnt, "purpose=search") - measured, evals - kept);
    char *a = kw_tl_slurp(j1), *b = kw_tl_slurp(j2);
    cr_expect_str_eq(a, b, "the resumed journal differs from the uninterrupted one");
    free(a);
    free(b);
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    cr_expect_eq(system(sh), 0);
    free(dir);
}

/* A run with controls cut in the middle of a round, right after a control
 * repetition (the control opens each repetition sweep of its round): the
 * resumed run measures exactly the evaluations the journal lacks, controls
 * included, and its journal is byte-identical to the uninterrupted one's. */
Test(exec, resume_mid_round_with_controls_measures_nothing_twice)
{
    char *dir = kw_tl_tmpdir("kwtest"), args[4096], cnt[1100], j1[1100], j2[1100], sh[4096];
    snprintf(cnt, sizeof cnt, "%s/requests", dir);
    counted_tune(dir, "small.xml", "--noise 0.05 --seed 3", "full", "--budget 120");
    kw_tl_proc r;
    snprintf(j1, sizeof j1, "%s/full/journal", dir);
    /* the noisy worker's evaluations take one or more requests (the adaptive
     * sample size): each one's first is round=0 */
    long evals = journal_evals(j1), measured = count_lines(cnt, "round=0 purpose=search");
    cr_expect_eq(measured, evals, "%ld requests, %ld evaluations", measured, evals);
    cr_assert_gt(count_lines(j1, " control=1 "), 0, "no control=1 in the header");
    cr_assert_gt(count_lines(j1, " ctl="), 0, "no step judged against a control");
    /* cut after the second repetition of the third control block in the journal:
     * repetitions >= 5 (reps 5) are controls */
    snprintf(sh, sizeof sh,
             "mkdir '%s/cut' && n=$(grep -n '^E ' '%s' | grep -E ' rep=([5-9]|[1-9][0-9]+) ' | "
             "sed -n 12p | cut -d: -f1) && [ -n \"$n\" ] && head -n $n '%s' > '%s/cut/journal'",
             dir, j1, j1, dir);
    cr_assert_eq(system(sh), 0, "no third control block to cut in");
    snprintf(j2, sizeof j2, "%s/cut/journal", dir);
    long kept = journal_evals(j2);
    cr_assert(kept > 0 && kept < evals);
    snprintf(args, sizeof args, "tune --resume '%s/cut' --quiet", dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    cr_expect_eq(count_lines(cnt, "round=0 purpose=search"), measured + (evals - kept),
                 "the resumed run measured %ld, the journal missed %ld",
                 count_lines(cnt, "round=0 purpose=search") - measured, evals - kept);
    char *a = kw_tl_slurp(j1), *b = kw_tl_slurp(j2);
    cr_expect_str_eq(a, b, "the resumed journal differs from the uninterrupted one");
    free(a);
    free(b);
    snprintf(args, sizeof args, "verify '%s/cut'", dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
    kw_tl_free(&r);
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    cr_expect_eq(system(sh), 0);
    free(dir);
}

/* The field of a journal's first record of type T ("D ") holding key, e.g. "c=". */
static void journal_field(char *out, size_t n, const char *path, const char *type, const char *key)
{
    char *s = kw_tl_slurp(path), *p = s;
    out[0] = '\0';
    for (; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, type, strlen(type)) == 0) {
            char *q = strstr(p, key), *e;
            if (q && (e = strchr(q + 1, ' ')) && (size_t)(e - q) < n) {
                memcpy(out, q, (size_t)(e - q));
                out[e - q] = '\0';
            }
            break;
        }
    free(s);
}

/* The one mean rule (search/kw_reduce.h) holds in a measured run's files: the
 * recommendation's p95 in ranked.csv is its D record's best_p, the mean of
 * its own repetitions 0..4, although it was re-measured many times as the
 * control of later rounds and beside its neighbours by the pairing (blocks
 * rep >= 5). Before, the summary averaged those blocks in: on a real
 * measured run (README, "The pairing") audit and ranked.csv read 939.9 us
 * for a recommendation whose D record says 714.5. */
Test(exec, a_measured_runs_figures_are_over_its_own_repetitions)
{
    char *dir = kw_tl_tmpdir("kwtest"), j1[1100], sh[1200], best_p[256], best_id[256];
    noisy_tune(dir, "run", "--budget 120");
    snprintf(j1, sizeof j1, "%s/run/journal", dir);
    journal_field(best_p, sizeof best_p, j1, "D ", " best_p=");
    journal_field(best_id, sizeof best_id, j1, "D ", " best=");
    cr_assert(best_p[0] && best_id[0]);
    /* its re-measured blocks: controls and the pairing's */
    char needle[300];
    snprintf(needle, sizeof needle, "id=%s rep=", best_id + strlen(" best="));
    cr_assert_gt(count_lines(j1, needle), 5, "the recommendation was never re-measured");
    /* ranked.csv: shape,rank,config_id,p50_us,p95_us,... rank 1 first */
    snprintf(sh, sizeof sh, "%s/run/ranked.csv", dir);
    char *csv = kw_tl_slurp(sh), *row = csv ? strchr(csv, '\n') : NULL;
    cr_assert_not_null(row);
    const char *f = row + 1;
    for (int i = 0; i < 4 && f; i++)
        f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
    cr_assert_not_null(f);
    double shipped = atof(f), d = atof(best_p + strlen(" best_p="));
    cr_expect(fabs(shipped - d) < 0.0005 + 1e-9 * d, "ranked.csv p95 %.3f, D best_p %.6f", shipped, d);
    free(csv);
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    cr_expect_eq(system(sh), 0);
    free(dir);
}

/* A measured run measures nothing outside its journal for its sensitivity: a
 * random search of 10 evaluations leaves most neighbours of its pick
 * unevaluated and --pair 10 pairs one of them. Every neighbour figure in
 * results.xml is backed by a journal record (an E record of that id, or the
 * N record of that neighbour, with the N record's delta), none comes from a
 * measurement after the run (source="evidence"), and the others say they were
 * not measured and why (results.xml, audit). Before, the results step
 * measured all six neighbours again (18 worker requests) and showed them. */
Test(exec, a_measured_runs_sensitivity_is_what_its_journal_holds)
{
    char *dir = kw_tl_tmpdir("kwtest"), args[4096], j[1100], x[1100], sh[1200];
    noisy_tune(dir, "run", "--strategy random --budget 10 --pair 10");
    snprintf(j, sizeof j, "%s/run/journal", dir);
    snprintf(x, sizeof x, "%s/run/results.xml", dir);
    cr_assert_eq(count_lines(j, "\nN s="), 1, "one pair journaled");
    cr_expect_eq(count_lines(x, " source=\"evidence\""), 0, "neighbours measured outside the journal");
    char *xml = kw_tl_slurp(x), *jn = kw_tl_slurp(j);
    int figures = 0, paired = 0;
    for (char *p = xml; (p = strstr(p, "<neighbour ")) != NULL; p++) {
        char *end = strchr(p, '>'), *ef = strstr(p, " effect_pct=\""), *id = strstr(p, " id=\"");
        cr_assert_not_null(end);
        if (!ef || ef > end)
            continue;
        figures++;
        cr_assert(id && id < end, "a neighbour figure without an id: %.*s", (int)(end - p), p);
        char key[40], nkey[40];
        snprintf(key, sizeof key, " id=%.16s ", id + 5);
        snprintf(nkey, sizeof nkey, " nb=%.16s ", id + 5);
        char *n = strstr(jn, nkey);
        if (n) { /* the pair's figure: its N record's delta */
            paired++;
            char *d = strstr(n, " delta=");
            cr_assert_not_null(d);
            double want = atof(d + 7), got = atof(ef + 13);
            cr_expect(fabs(want - got) < 0.0005 + 1e-9, "effect_pct %g, N record delta %g", got, want);
        } else
            cr_expect(strstr(jn, key) != NULL, "neighbour %.16s: a figure no journal record backs",
                      id + 5);
    }
    cr_expect_eq(paired, 1, "the paired neighbour shows its pair's figure");
    cr_expect_gt(count_lines(x, " not_measured=\"not searched, not paired\""), 0);
    free(xml);
    free(jn);
    snprintf(args, sizeof args, "audit '%s/run'", dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, " not measured: not searched, not paired") != NULL, "%s", r.out);
    kw_tl_free(&r);
    snprintf(args, sizeof args, "verify '%s/run'", dir);
    knobwise_ok(args);
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    cr_expect_eq(system(sh), 0);
    free(dir);
}

/* A measured run's portability cell without a figure (results.xsd, README). */
#define KW_RESULTS_PORT_UNMEASURED_TEXT "not measured: not evaluated on this shape in the journal"

/* The attribute NAME="..." of the element that starts at el, as a double
 * (NAN when the element lacks it). */
static double xml_attr_num(const char *el, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *end = strchr(el, '>'), *a = strstr(el, key);
    return a && end && a < end ? atof(a + strlen(key)) : NAN;
}

/* On a measured run the portability matrix and the re-checks are the
 * journal's or say they were not measured (kw_evidence_portability_journal,
 * kw_evidence_recheck), as the sensitivity is. The worker (--per-shape: each
 * shape has its own best config) gets no request after the search
 * (purpose=results); each winner's cell on its own shape shows the figure
 * results.xml shows for it; the first shape's winner, never evaluated on the
 * second shape by a random search of 10, says it was not measured there and
 * is not called portable; no <recheck> carries a figure; a resume writes the
 * same files; the report shows the same and no model distribution; recommend
 * says a borrowed shape's figures are the model's; verify checks
 * portability.csv against the journal. Before:
 * 22 purpose=results requests, the winners' own cells -10.0% and -2.4%
 * against their configs' -13.3% and 0.0%, every recheck a figure. */
Test(exec, a_measured_runs_portability_and_recheck_are_what_its_journal_holds)
{
    char *dir = kw_tl_tmpdir("kwtest"), args[4096], cnt[1100], x[1100], sh[4096];
    snprintf(cnt, sizeof cnt, "%s/requests", dir);
    counted_tune(dir, "two_shapes.xml", "--per-shape --noise 0.05 --seed 3", "run",
                 "--strategy random --budget 10 --pair 10");
    cr_assert_gt(count_lines(cnt, "purpose=search"), 0);
    cr_expect_eq(count_lines(cnt, "purpose=results"), 0, "measured outside the journal");
    snprintf(x, sizeof x, "%s/run/results.xml", dir);
    char *xml = kw_tl_slurp(x);
    int rechecks = 0, own = 0;
    for (char *p = xml; (p = strstr(p, "<recheck ")) != NULL; p++) {
        rechecks++;
        cr_expect(isnan(xml_attr_num(p, "p95_us")), "a recheck figure: %.200s", p);
        cr_expect(strncmp(p, "<recheck not_measured=\"", 23) == 0, "%.200s", p);
    }
    cr_expect_gt(rechecks, 0);
    for (char *p = xml; (p = strstr(p, "<shape name=\"")) != NULL; p++) {
        char name[200], on[240];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(p + 13, "\""), p + 13);
        char *c = strstr(p, "<config rank=\"1\""), *port = c ? strstr(c, "<portability>") : NULL;
        cr_assert_not_null(port);
        snprintf(on, sizeof on, "<on shape=\"%s\"", name);
        char *cell = strstr(port, on);
        cr_assert_not_null(cell, "no own cell for %s", name);
        double want = xml_attr_num(c, "vs_baseline_pct"), got = xml_attr_num(cell, "vs_baseline_pct");
        cr_expect(fabs(want - got) < 1e-9, "%s: its own portability cell %g%%, results %g%%", name,
                  got, want);
        own++;
    }
    cr_expect_eq(own, 2);
    cr_expect_eq(count_lines(x, "guards=\"" KW_RESULTS_PORT_UNMEASURED_TEXT "\""), 1);
    cr_expect_eq(count_lines(x, " not_measured_on=\"attn_decode_kv4096_b4_c4_rate\""), 1);
    snprintf(sh, sizeof sh, "%s/run/portability.csv", dir);
    cr_expect_eq(count_lines(sh, ",," KW_RESULTS_PORT_UNMEASURED_TEXT "\n"), 1);
    /* a resume of the finished run: the same files, nothing measured */
    long before = count_lines(cnt, "purpose=");
    snprintf(args, sizeof args, "tune --resume '%s/run' --quiet", dir);
    knobwise_ok(args);
    cr_expect_eq(count_lines(cnt, "purpose="), before, "the resume measured");
    char *again = kw_tl_slurp(x);
    cr_expect_str_eq(again, xml, "the resume rewrote results.xml differently");
    free(again);
    free(xml);
    snprintf(args, sizeof args, "report '%s/run'", dir);
    knobwise_ok(args);
    snprintf(sh, sizeof sh, "%s/run/report.html", dir);
    cr_expect_eq(count_lines(sh, "Distribution not measured"), 2);
    cr_expect_eq(count_lines(sh, ": " KW_RESULTS_PORT_UNMEASURED_TEXT "</title>"), 1);
    cr_expect_eq(count_lines(sh, "not measured on attn_decode_kv4096_b4_c4_rate"), 1);
    /* a shape the run did not tune: recommend's figures for it are the model's, and it says so */
    snprintf(args, sizeof args, "recommend '%s/run' --batch 8 --seq 8192 --streams 8", dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "BORROWED from the nearest tuned shape attn_decode_kv4096_b4_c4_rate, "
                            "evaluated here by the model (not measured") != NULL, "%s", r.out);
    kw_tl_free(&r);
    snprintf(args, sizeof args, "verify '%s/run'", dir);
    knobwise_ok(args);
    /* ... and verify checks that matrix against the journal: one figure edited fails it */
    snprintf(sh, sizeof sh, "sed -i '2s/,[0-9]/,9/' '%s/run/portability.csv'", dir);
    cr_assert_eq(system(sh), 0);
    r = kw_tl_sh(args, NULL);
    cr_expect_neq(r.status, 0, "verify passed an edited portability.csv: %s", r.out);
    cr_expect(strstr(r.err, "portability.csv:2: differs from what the journal implies") != NULL, "%s",
              r.err);
    kw_tl_free(&r);
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    cr_expect_eq(system(sh), 0);
    free(dir);
}

/* mappings.csv says where each row's p95/p99 come from (figures_from): a
 * measured run that tuned one of its two shapes has the tuned shape's row
 * "measured" (its figures are results.xml's) and the other's "model" (the
 * borrowed winner evaluated by the model: nothing is measured there), and
 * the export carries the same. Before: no such column; the borrowed row's
 * model p95 sat beside the measured one unflagged. */
Test(exec, mappings_csv_says_which_figures_were_measured)
{
    char *dir = kw_tl_tmpdir("kwtest"), args[4096], cnt[1100], m[1100], sh[4096];
    snprintf(cnt, sizeof cnt, "%s/requests", dir);
    counted_tune(dir, "two_shapes.xml", "--per-shape --seed 3", "run",
                 "--strategy random --budget 10 --pair 10 --shape attn_decode_kv512_b1_c1");
    long before = count_lines(cnt, "purpose=");
    snprintf(args, sizeof args, "recommend '%s/run' --all", dir);
    knobwise_ok(args);
    cr_expect_eq(count_lines(cnt, "purpose="), before, "recommend measured");
    snprintf(m, sizeof m, "%s/run/mappings.csv", dir);
    char *csv = kw_tl_slurp(m);
    const char *nl = strchr(csv, '\n');
    /* then, since stop 48, the eight watch_* columns */
    const char *tail = ",p95_us,p99_us,borrow_warnings,figures_from,file_rows,figures_basis,"
                       "watch_p95_us_max,";
    cr_assert(nl && strstr(csv, tail) && strstr(csv, tail) < nl, "%s", csv);
    const char *tuned = strstr(csv, "\nattn_decode_kv512_b1_c1,"),
               *other = strstr(csv, "\nattn_decode_kv4096_b4_c4_rate,");
    cr_assert(tuned && other, "%s", csv);
    /* figures_from, file_rows (the run's space has 2 shapes), then
     * figures_basis: a measured run's journal, and recommend's own
     * evaluation of the row it did not tune, whose watch_* columns are
     * empty (results.xml has no watches for it) */
    const char *te = strstr(tuned + 1, ",measured,2,measured,");
    cr_expect(te && te < strchr(tuned + 1, '\n'), "%s", csv);
    cr_expect(strncmp(strchr(other + 1, '\n') - 26, ",model,2,evaluated,,,,,,,,", 26) == 0, "%s", csv);
    /* the tuned row's p95 is results.xml's rank-1 p95 (another writer) */
    snprintf(sh, sizeof sh, "%s/run/ranked.csv", dir);
    char *ranked = kw_tl_slurp(sh);
    const char *r1 = strstr(ranked, "\nattn_decode_kv512_b1_c1,1,");
    cr_assert(r1 != NULL, "%s", ranked);
    char p95[64];
    const char *f = r1 + 1;
    for (int c = 0; c < 4; c++)
        f = strchr(f, ',') + 1; /* shape,rank,config_id,p50_us,p95_us */
    snprintf(p95, sizeof p95, ",%.*s,", (int)strcspn(f, ","), f);
    const char *row_end = strchr(tuned + 1, '\n');
    const char *hit = strstr(tuned, p95);
    cr_expect(hit && hit < row_end, "p95 %s not in the tuned row: %s", p95, csv);
    free(ranked);
    /* the export reads the column (a knob it is not) and carries it */
    snprintf(args, sizeof args, "export '%s' --format json -o '%s/e.json'", m, dir);
    knobwise_ok(args);
    snprintf(sh, sizeof sh, "%s/e.json", dir);
    cr_expect_eq(count_lines(sh, "\"figures_from\": \"measured\""), 1);
    cr_expect_eq(count_lines(sh, "\"figures_from\": \"model\""), 1);
    cr_expect_eq(count_lines(sh, "\"figures_from\": 0"), 0);
    char *json = kw_tl_slurp(sh);
    const char *knobs = strstr(json, "\"knobs\": [");
    cr_assert(knobs != NULL, "%s", json);
    cr_expect(strstr(knobs, "figures_from") == NULL || strstr(knobs, "figures_from") > strchr(knobs, ']'),
              "figures_from read as a knob: %s", json);
    free(json);
    free(csv);
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    cr_expect_eq(system(sh), 0);
    free(dir);
}

/* --pair N bounds the pairing (10 evaluations: one neighbour at 5 repeats,
 * the header says pair=10), --pair 0 turns it off (no pair=, no N record,
 * and the audit says not paired), and the model refuses it (exit 2). */
Test(exec, tune_pair_bounds_or_turns_off_the_pairing)
{
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], args[4096], j[1100], sh[1200];
    noisy_tune(dir, "one", "--budget 60 --pair 10");
    snprintf(j, sizeof j, "%s/one/journal", dir);
    cr_expect_eq(count_lines(j, "\nN s="), 1);
    cr_expect_eq(count_lines(j, " pair=10 "), 1);
    noisy_tune(dir, "none", "--budget 60 --pair 0");
    snprintf(j, sizeof j, "%s/none/journal", dir);
    cr_expect_eq(count_lines(j, "\nN s="), 0);
    cr_expect_eq(count_lines(j, " pair="), 0);
    snprintf(args, sizeof args, "audit '%s/none'", dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "are not paired") != NULL, "%s", r.out);
    kw_tl_free(&r);
    space_path(sp, sizeof sp, "small.xml");
    snprintf(args, sizeof args, "tune --space '%s' --evaluator model --out '%s/model' --quiet "
             "--pair 10", sp, dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect(strstr(r.err, "--pair needs a measuring evaluator") != NULL, "%s", r.err);
    kw_tl_free(&r);
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    cr_expect_eq(system(sh), 0);
    free(dir);
}

/* A device that slows 1% per request (the test worker's --drift 1), 5% noise:
 * the search must ship the optimum of the deterministic worker's exhaustive
 * sweep, and accept nothing but on a control of the same round. Before the
 * control, and with the control but letting a memo hit (a config measured in
 * an earlier, faster round) be accepted, the search ended 73.7% and 30.1%
 * above it (README, "the control"). */
Test(exec, a_drifting_device_with_controls_reaches_the_optimum)
{
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], cmd[1024], args[4096], j1[1100], j2[1100],
         best[256], got[256], sh[1200];
    space_path(sp, sizeof sp, "small.xml");
    worker_cmd(cmd, sizeof cmd, "");
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --strategy exhaustive "
             "--out '%s/truth' --quiet", sp, cmd, dir);
    knobwise_ok(args);
    worker_cmd(cmd, sizeof cmd, "--noise 0.05 --seed 2 --drift 1");
    /* one thread: the worker's drift follows the order of its requests */
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --out '%s/drift' --quiet "
             "--threads 1", sp, cmd, dir);
    knobwise_ok(args);
    snprintf(j1, sizeof j1, "%s/truth/journal", dir);
    snprintf(j2, sizeof j2, "%s/drift/journal", dir);
    journal_field(best, sizeof best, j1, "D ", " c=");
    journal_field(got, sizeof got, j2, "D ", " c=");
    cr_assert(best[0], "no recommendation in the sweep");
    cr_expect_str_eq(got, best, "the drifting run shipped %s, the optimum is %s", got, best);
    snprintf(sh, sizeof sh, "grep '^T .* d=accept ' '%s' | grep -v ' ctl=' | grep -q .", j2);
    cr_expect_neq(system(sh), 0, "a step accepted without a control of its round");
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    cr_expect_eq(system(sh), 0);
    free(dir);
}

/* A measured run on 4 threads: the worker slows 1% per request (--drift 1,
 * --flat: every config the same 100 us, no noise, no anchor in small.xml),
 * so each E record's measured latency_us grows with the order in which the
 * worker saw its evaluation. A round's E records are consecutive lines in
 * its job order; a round with a control (its sweeps) or a pair (its
 * crossover) has an order by design and is measured in job order, so from
 * its first block record (repetition k*repeats, k >= 1) to the end of its
 * lines the figures must rise strictly from one E record to the next. Without the rule
 * (kw_engine.c, kw_loop) the pool's threads take a round's evaluations in the
 * order they win the worker's lock. (A round with neither keeps every
 * thread: not asserted.) */
Test(exec, a_measured_run_on_4_threads_measures_controls_and_pairs_in_job_order)
{
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], cmd[1024], args[4096], jp[1100];
    space_path(sp, sizeof sp, "small.xml");
    worker_cmd(cmd, sizeof cmd, "--flat --drift 1");
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --threads 4 "
             "--out '%s/run' --quiet", sp, cmd, dir);
    knobwise_ok(args);
    snprintf(jp, sizeof jp, "%s/run/journal", dir);
    kw_journal *j = NULL;
    cr_assert_eq(kw_journal_load(&j, jp), 0, "%s", kw_error_last());
    int lat = -1;
    for (int i = 0; i < j->h.n_metrics; i++)
        if (strcmp(j->h.metric_names[i], "latency_us") == 0)
            lat = i;
    cr_assert_geq(lat, 0);
    long ordered = 0, checked = 0, out_of_order = 0;
    const int R = j->h.repeats;
    for (size_t a = 0, b; a < j->n_evals; a = b) {
        b = a + 1;
        /* a round with a control or a pair opens with a block's repetition k*R, k >= 1 */
        if (j->evals[a].rep < R || j->evals[a].rep % R != 0)
            continue;
        while (b < j->n_evals && j->evals[b].record == j->evals[a].record + (long)(b - a))
            b++;
        ordered++;
        for (size_t i = a + 1; i < b; i++) {
            const kw_jeval *e = &j->evals[i];
            cr_assert_eq(e->rc, 0, "E record %zu failed: %s", i, e->guards);
            checked++;
            if (!(e->m[lat] > j->evals[i - 1].m[lat])) {
                out_of_order++;
                cr_expect_gt(e->m[lat], j->evals[i - 1].m[lat], "E record %zu (rep %d) measured "
                             "before E record %zu", i, e->rep, i - 1);
            }
        }
    }
    cr_expect_gt(ordered, 1, "no round with a control or a pair");
    cr_expect_gt(j->n_pairs, 0, "no pair measured");
    cr_expect_eq(out_of_order, 0, "%ld of %ld E records of ordered rounds measured out of order",
                 out_of_order, checked);
    kw_journal_free(j);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    cr_expect_eq(system(args), 0);
    free(dir);
}

Test(exec, a_noisy_tune_accepts_only_significant_steps)
{
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], cmd[1024], args[4096], p[1200];
    space_path(sp, sizeof sp, "small.xml");
    /* whole-request latencies with the same distribution for every config:
     * every latency difference between configs is noise */
    worker_cmd(cmd, sizeof cmd, "--flat --unit request --seed 3");
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --out '%s/run' --quiet",
             sp, cmd, dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.err);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/run/audit.csv", dir);
    char *csv = kw_tl_slurp(p);
    int rows = 0, accepts = 0;
    for (char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        rows++;
        /* columns: ...,p_value,guards,decision,reason: an accept must carry p < alpha */
        char *acc = strstr(line + 1, ",pass,accept,");
        char *nl = strchr(line + 1, '\n');
        if (acc && (!nl || acc < nl)) {
            accepts++;
            char *q = acc;
            while (q > line + 1 && q[-1] != ',')
                q--;
            cr_expect_lt(atof(q), 0.05, "an accepted measured step is significant");
        }
    }
    cr_expect_gt(rows, 5);
    cr_expect(strstr(csv, "not significant") != NULL, "noise-sized gains are rejected as such");
    free(csv);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    cr_expect_eq(system(args), 0);
    free(dir);
    (void)accepts;
}

Test(exec, screen_measures_only_the_models_best_and_resumes_the_same)
{
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], cmd[1024], args[4096], cnt[1100], j1[1100], sh[4096];
    space_path(sp, sizeof sp, "small.xml");
    worker_cmd(cmd, sizeof cmd, "");
    long measured[2];
    for (int screen = 0; screen <= 1; screen++) {
        snprintf(cnt, sizeof cnt, "%s/requests%d", dir, screen);
        snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s --count %s' "
                 "--out '%s/run%d' --quiet %s", sp, cmd, cnt, dir, screen,
                 screen ? "--screen 2" : "");
        kw_tl_proc r = kw_tl_sh(args, NULL);
        cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.err);
        kw_tl_free(&r);
        measured[screen] = count_lines(cnt, "purpose=search");
    }
    snprintf(j1, sizeof j1, "%s/run1/journal", dir);
    long screened = count_lines(j1, "screened");
    cr_expect_gt(screened, 0, "the screen journals what it did not measure");
    cr_expect_lt(measured[1], measured[0], "screening measured %ld, measuring everything %ld",
                 measured[1], measured[0]);
    /* a screened run is resumed identically: the screen is deterministic */
    snprintf(sh, sizeof sh, "mkdir '%s/cut' && n=$(grep -n '^E ' '%s' | sed -n 12p | cut -d: -f1) && "
             "head -n $n '%s' > '%s/cut/journal'", dir, j1, j1, dir);
    cr_assert_eq(system(sh), 0);
    snprintf(args, sizeof args, "tune --resume '%s/cut' --quiet", dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    snprintf(sh, sizeof sh, "%s/cut/journal", dir);
    char *a = kw_tl_slurp(j1), *b = kw_tl_slurp(sh);
    cr_expect_str_eq(a, b, "the resumed screened journal differs");
    free(a);
    free(b);
    /* --screen without a measuring evaluator is a usage error, nothing written */
    snprintf(args, sizeof args, "tune --space '%s' --evaluator model --screen 2 --out '%s/m'",
             sp, dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 2, "%s", r.err);
    snprintf(sh, sizeof sh, "%s/m", dir);
    cr_expect(!kw_tl_exists(sh));
    kw_tl_free(&r);
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    cr_expect_eq(system(sh), 0);
    free(dir);
}

Test(exec, a_worker_that_cannot_be_started_again_stops_the_run_with_its_journal_intact)
{
    /* starts 1 and 2 succeed (the start check, then the restart onto worker.log);
     * the second worker dies after 12 requests (the baseline's 5 repetitions are
     * journaled, the next round's are not all in); start 3 fails: the run stops
     * with exit 1 and its journal intact (the engine journals whole rounds: the
     * round in flight is measured again by a resume) */
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], cmd[1200], args[8192], sh[1100];
    space_path(sp, sizeof sp, "small.xml");
    snprintf(sh, sizeof sh, "%s/start.sh", dir);
    FILE *f = fopen(sh, "w");
    cr_assert_not_null(f);
    fprintf(f, "n=$(cat %s/starts 2>/dev/null || echo 0); echo $((n+1)) > %s/starts\n"
               "[ \"$n\" -lt 2 ] && exec %s/tests/kw_tworker --die-after 12\nexit 1\n",
            dir, dir, builddir());
    fclose(f);
    snprintf(cmd, sizeof cmd, "sh %s", sh);
    snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --out '%s/run' --quiet",
             sp, cmd, dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 1, "status %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "cannot be started again") != NULL, "%s", r.err);
    kw_tl_free(&r);
    snprintf(sh, sizeof sh, "%s/run/journal", dir);
    cr_expect_eq(journal_evals(sh), 5, "the finished round is journaled");
    snprintf(args, sizeof args, "verify '%s/run' --no-eval", dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "the stopped run's journal verifies: %s%s", r.out, r.err);
    kw_tl_free(&r);
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    cr_expect_eq(system(sh), 0);
    free(dir);
}

Test(exec, journal_is_identical_for_one_and_two_threads)
{
    /* a seeded noisy worker draws from the request, not from the order of
     * requests: the engine's determinism contract holds through the worker */
    char *dir = kw_tl_tmpdir("kwtest"), sp[1024], cmd[1024], args[4096], p1[1100], p2[1100];
    space_path(sp, sizeof sp, "small.xml");
    worker_cmd(cmd, sizeof cmd, "--noise 0.03");
    for (int t = 1; t <= 2; t++) {
        snprintf(args, sizeof args, "tune --space '%s' --evaluator 'exec:%s' --threads %d "
                 "--out '%s/t%d' --quiet", sp, cmd, t, dir, t);
        knobwise_ok(args);
    }
    snprintf(p1, sizeof p1, "%s/t1/journal", dir);
    snprintf(p2, sizeof p2, "%s/t2/journal", dir);
    char *a = kw_tl_slurp(p1), *b = kw_tl_slurp(p2);
    cr_expect_gt(strlen(a), 1000);
    cr_expect_str_eq(a, b, "journals differ between 1 and 2 threads");
    free(a);
    free(b);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    cr_expect_eq(system(args), 0);
    free(dir);
}

Test(exec, the_workers_own_quality_check_is_judged_against_the_budget)
{
    /* the space's budget: cosine >= 0.999 and relative RMS <= 0.02 (defaults) */
    static const char *const q[] = {"0.001,0.9999", "0.05,0.9999", "0.001,0.99"};
    static const char *const want[] = {"", "drift_rel_rms", "drift_cos"};
    for (int i = 0; i < 3; i++) {
        char args[128];
        snprintf(args, sizeof args, "--quality %s", q[i]);
        fixture f;
        cr_assert_eq(fx_open(&f, args, 0, 0, 0, 0), 0, "%s", kw_error_last());
        kw_cand base;
        kw_knobs_cand_baseline(&base, &f.cfg->space.knobs);
        kw_metrics m;
        const kw_evaluator *ev = kw_exec_iface(f.ex);
        cr_assert_eq(ev->eval(ev->ctx, &base, 0, 0, &m), 0);
        cr_expect_str_eq(m.guards, want[i], "quality %s: guards '%s'", q[i], m.guards);
        cr_expect_float_eq(m.v[KW_M_QUALITY_REL_RMS], atof(q[i]), 1e-12);
        cr_expect_float_eq(m.v[KW_M_QUALITY_COS], atof(strchr(q[i], ',') + 1), 1e-12);
        fx_close(&f);
    }
}

/* Figures that cannot be measurements are error:protocol and the worker is
 * started afresh: a sample over the time the worker had to answer (small.xml's
 * timeout, 5 s), a relative RMS error under 0 or over 1e6, a cosine outside
 * [-1, 1]. On main they were taken: 1e308 us samples crashed the serving
 * simulation (SIGSEGV in kw_finish_batch), and any figure past ~1e20 made
 * results.xml fail its own schema, so the run could never write its results.
 * A figure not written in decimal, or a key given twice, is no measurement
 * either. */
Test(exec, figures_that_cannot_be_measurements_are_protocol_errors)
{
    static const struct {
        const char *args, *guard;
    } cases[] = {
        {"--samples-on qkv.tile_m=64:1e308", "error:protocol"},
        {"--samples-on qkv.tile_m=64:1e300", "error:protocol"},
        {"--samples-on qkv.tile_m=64:5000001", "error:protocol"},
        {"--samples-on qkv.tile_m=64:4999999", NULL}, /* under 5 s: a (slow) measurement */
        {"--quality 1e300,0.9999", "error:protocol"},
        {"--quality -0.001,0.9999", "error:protocol"},
        {"--quality 0.001,1.5", "error:protocol"},
        {"--quality 0.001,-1.5", "error:protocol"},
        {"--quality 0.001,nan", "error:protocol"},
        /* decimal only, and no key twice (main 099d4d6 took a sample "0x10"
         * as 16 us, and the first of two quality_cos) */
        {"--samples-on qkv.tile_m=64:0x10", "error:protocol"},
        {"--quality 0x0p0,0.9999", "error:protocol"},
        {"--quality '0.001,0.9999 quality_cos=0.5'", "error:protocol"},
        /* ASCII up to the LF: main 880a621 dropped a CR before it and ended
         * the line at a NUL, the rest unread */
        {"--end-on qkv.tile_m=64:cr", "error:protocol"},
        {"--end-on qkv.tile_m=64:nul", "error:protocol"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture f;
        cr_assert_eq(fx_open(&f, cases[i].args, 0, 0, 0, 0), 0, "%s", kw_error_last());
        const kw_evaluator *ev = kw_exec_iface(f.ex);
        kw_cand c;
        cand_set(&c, f.cfg, "qkv.tile_m=64");
        kw_metrics m;
        cr_assert_eq(ev->eval(ev->ctx, &c, 0, 0, &m), 0, "%s", kw_error_last());
        if (cases[i].guard) {
            cr_expect_str_eq(m.guards, cases[i].guard, "%s: guards '%s'", cases[i].args,
                             m.guards);
            cr_expect(isinf(m.v[KW_M_P95_US]), "%s: a failed candidate has no latency",
                      cases[i].args);
            kw_cand base;
            kw_knobs_cand_baseline(&base, &f.cfg->space.knobs);
            cr_assert_eq(ev->eval(ev->ctx, &base, 0, 0, &m), 0, "%s", kw_error_last());
            cr_expect_eq(kw_exec_restarts(f.ex), 1, "%s: the worker is started afresh",
                         cases[i].args);
        } else { /* judged (it saturates the queue), not refused */
            cr_expect(strncmp(m.guards, "error:", 6) != 0, "%s: guards '%s'", cases[i].args,
                      m.guards);
            cr_expect(isfinite(m.v[KW_M_P95_US]) && m.v[KW_M_P95_US] >= 4999999.0,
                      "%s: p95 %g", cases[i].args, m.v[KW_M_P95_US]);
        }
        fx_close(&f);
    }
}

Test(exec, eval_stdin_streams_measured_rows)
{
    char sp[1024], cmd[1024], args[4096];
    space_path(sp, sizeof sp, "small.xml");
    worker_cmd(cmd, sizeof cmd, "--crash-on qkv.tile_m=64");
    snprintf(args, sizeof args, "eval --space '%s' --evaluator 'exec:%s' --stdin", sp, cmd);
    kw_tl_proc r = kw_tl_sh(args, "attn_decode_kv512_b1_c1 qkv.tile_m=64\n"
                              "attn_decode_kv512_b1_c1 qkv.tile_m=256\n"
                              "attn_decode_kv512_b1_c1 qkv.tile_m=17\n");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, ",error:crash,") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, ",pass,") != NULL, "the next line is measured by a fresh worker: %s",
              r.out);
    cr_expect(strstr(r.out, "stdin:3:") != NULL, "a bad line is a row: %s", r.out);
    kw_tl_free(&r);
}

Test(exec, the_simulated_tail_carries_the_measured_spread)
{
    /* Every config 100 us with 20% Gaussian noise, 2000 samples; the serving
     * simulation draws each batch's time from the samples, so at negligible
     * queueing (one stream on the H100's cores: queue-wait p95 0) and without
     * DRAM contention the simulated
     * p95 is the samples' p95: 100 (1 + 1.645 x 0.2) = 132.9 us (normal
     * quantile), within 3% (2000 samples, 20000 simulated requests). */
    char sp[1024], cmd[1024];
    kw_config *cfg;
    kw_model_eval *me;
    kw_exec *ex;
    space_path(sp, sizeof sp, "small.xml");
    cr_assert_eq(kw_load_config(&cfg, sp, NULL, NULL), 0, "%s", kw_error_last());
    /* no DRAM contention: the synthetic worker is faster than the model's DRAM
     * traffic allows, and contention between overlapping requests is not the
     * point here */
    kw_model_opts mo = {.drift = 1, .seed = 1, .sim_requests = 20000, .no_contention = 1};
    cr_assert_eq(kw_eval_new(&me, cfg, &mo), 0, "%s", kw_error_last());
    worker_cmd(cmd, sizeof cmd, "--flat --noise 0.2");
    kw_exec_opts xo;
    kw_exec_opts_from_space(&xo, &cfg->space, cmd, 0);
    xo.anchor = 0;
    xo.reps = xo.max_reps = 2000;
    cr_assert_eq(kw_exec_new(&ex, cfg, me, &xo), 0, "%s", kw_error_last());
    kw_cand base;
    kw_knobs_cand_baseline(&base, &cfg->space.knobs);
    kw_metrics m;
    const kw_evaluator *ev = kw_exec_iface(ex);
    cr_assert_eq(ev->eval(ev->ctx, &base, 0, 0, &m), 0);
    cr_expect_lt(m.v[KW_M_QUEUE_P95_US], 1.0, "queueing is negligible here");
    double want = 100.0 * (1.0 + 1.644854 * 0.2);
    cr_expect_float_eq(m.v[KW_M_P95_US], want, 0.03 * want, "p95 %g, closed form %g",
                       m.v[KW_M_P95_US], want);
    cr_expect_float_eq(m.v[KW_M_P50_US], 100.0, 3.0, "p50 %g", m.v[KW_M_P50_US]);
    kw_exec_free(ex);
    kw_eval_free(me);
    kw_load_config_free(cfg);
}
