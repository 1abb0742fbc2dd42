/* test_validation.c - hangs and input validation: inputs the
 * arithmetic cannot represent are refused (validate, FILE:LINE, exit 2, before
 * any run folder), every loop that could spin is progress-checked, tune stops
 * inside a long evaluation, inputs are regular files, exhaustive runs are
 * bounded, and the eval --stdin protocol gives exactly one row per line.
 *
 * Design choice: everything runs the built knobwise through kw_tl_proc.h
 * (fork/exec, SIGKILL after a timeout), so a hang is a failed assertion, never
 * a stuck `make check`; the simulator's own progress checks are also tested
 * in process, under Criterion's timeout. Files are generated into a temp
 * folder per test; a run folder must stay empty when an input is refused.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>

#include "kw_error.h"
#include "kw_num.h"
#include "lib/kw_tl.h"
#include "lib/kw_tl_model.h"
#include "kw_sim.h"
#include "kw_xml.h"

/* each test's hang guard (KW_TL_HANG_GUARD, not Criterion's .timeout) */
static void kw_validation_guard(void) { KW_TL_HANG_GUARD(120); }
TestSuite(validation, .init = kw_validation_guard);

#define KW_V_TIMEOUT_S 20 /* wall clock per run: every refusal here takes well under 1 s */



static const kw_tl_opts kw_v_opts = {.timeout_s = KW_V_TIMEOUT_S, .as_limit_mb = 1024};


static void kw_v_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "cannot write %s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

/* dir/wl.xml with one block "b" (a 256x256 GEMM, or `ops` when not NULL) and
 * the shape line `shape_attrs` (line 5 of the file), and dir/space.xml on the
 * H100 with `tuning` (a <tuning .../> element or ""), `knobs` (or a default
 * tile knob). */
static void kw_v_files(const char *dir, const char *ops, const char *shape_attrs,
                       const char *knobs, const char *tuning)
{
    char p[4300], buf[16384];
    snprintf(p, sizeof p, "%s/wl.xml", dir);
    snprintf(buf, sizeof buf,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<workload name=\"v\">\n"
             "  <source>test_validation</source>\n"
             "  <block name=\"b\">%s</block>\n"
             "  <shape name=\"t\" block=\"b\" %s/>\n</workload>\n",
             ops ? ops : "<gemm name=\"q\" group=\"qkv\" n=\"256\" k=\"256\"/>", shape_attrs);
    kw_v_write(p, buf);
    snprintf(p, sizeof p, "%s/space.xml", dir);
    snprintf(buf, sizeof buf,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<space name=\"v\" block=\"b\">\n"
             "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n  <workload file=\"wl.xml\"/>\n"
             "  %s\n  %s\n</space>\n",
             kw_tl_src(), knobs ? knobs : "<knob name=\"qkv.tile_m\" values=\"64 128\" baseline=\"64\"/>",
             tuning ? tuning : "");
    kw_v_write(p, buf);
}

/* The run ended by itself, in time, without a signal. */
static void kw_v_sane(const kw_tl_proc *r, const char *what)
{
    cr_assert(!r->timed_out, "%s: hung (killed after %d s)", what, KW_V_TIMEOUT_S);
    cr_assert(r->status >= 0 && r->status < 128, "%s: died with status %d: %s", what, r->status,
              r->err);
}

/* `validate SPACE`, `eval --space SPACE` and `tune --space SPACE --out RUN`
 * all refuse with exit 2, stderr holding `want` (e.g. "wl.xml:5:") and `sub`;
 * tune leaves its working folder empty. */
static void kw_v_refused_everywhere(const char *dir, const char *file, const char *want,
                                    const char *sub)
{
    char sp[4300], pre[4400], run[4400], cwd[4300];
    snprintf(sp, sizeof sp, "%s/%s", dir, file);
    snprintf(pre, sizeof pre, "%s/%s", dir, want);
    kw_tl_proc r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "validate", sp, NULL);
    kw_v_sane(&r, "validate");
    cr_assert_eq(r.status, 2, "validate: exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, pre) && strstr(r.err, sub), "validate: want '%s' and '%s' in: %s", pre,
              sub, r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "eval", "--space", sp, "--format", "csv", NULL);
    kw_v_sane(&r, "eval");
    cr_assert_eq(r.status, 2, "eval: exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, pre) && strstr(r.err, sub), "eval: want '%s' and '%s' in: %s", pre, sub,
              r.err);
    kw_tl_free(&r);
    snprintf(cwd, sizeof cwd, "%s/cwd", dir);
    cr_assert_eq(mkdir(cwd, 0700), 0);
    snprintf(run, sizeof run, "%s/run", cwd);
    kw_tl_opts o = kw_v_opts;
    o.cwd = cwd;
    r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", sp, "--out", run, "--budget", "3", "--quiet",
                 NULL);
    kw_v_sane(&r, "tune");
    cr_assert_eq(r.status, 2, "tune: exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, sub), "tune: want '%s' in: %s", sub, r.err);
    cr_assert_eq(kw_tl_entries(cwd), 0, "tune wrote into %s before refusing", cwd);
    kw_tl_free(&r);
    cr_assert_eq(rmdir(cwd), 0);
}

/* ---- 1. hangs: bursty arrivals the clock cannot represent ---- */

/* burst_on_ms="1e-23" (as an xs:decimal): the on-period is lost in rounding
 * at t ~ 80 ms (t + on == t) and the generator used to spin forever. */
Test(validation, bursty_on_period_below_the_clock_is_refused)
{
    char *dir = kw_tl_tmpdir("kwval");
    kw_v_files(dir, NULL,
               "phase=\"decode\" kv_len=\"128\" batch=\"1\" streams=\"4\" arrival=\"bursty\" "
               "load=\"0.5\" burst_on_ms=\"0.00000000000000000000001\" burst_off_ms=\"80\" "
               "burst_factor=\"4\"",
               NULL, "<tuning sim_requests=\"50\" final_requests=\"100\"/>");
    kw_v_refused_everywhere(dir, "space.xml", "wl.xml:5:", "burst_on_ms must be at least");
    kw_tl_rmrf(dir);
}

/* burst_off_ms="1e23": after one off-period t ~ 1e26 us, where a 20 ms
 * on-period is below one ulp. */
Test(validation, bursty_off_period_beyond_the_clock_is_refused)
{
    char *dir = kw_tl_tmpdir("kwval");
    kw_v_files(dir, NULL,
               "phase=\"decode\" kv_len=\"128\" batch=\"1\" streams=\"4\" arrival=\"bursty\" "
               "load=\"0.5\" burst_on_ms=\"20\" burst_off_ms=\"100000000000000000000000\" "
               "burst_factor=\"4\"",
               NULL, "<tuning sim_requests=\"50\" final_requests=\"100\"/>");
    kw_v_refused_everywhere(dir, "space.xml", "wl.xml:5:", "burst_off_ms must be at most");
    kw_tl_rmrf(dir);
}

/* The bound itself, against its closed form: at load L a run of N arrivals
 * spans N / (L x capacity); validate must accept the smallest load it names
 * and refuse one a little below it (the boundary is computed, not copied:
 * the message's own lower bound is fed back). */
Test(validation, tiny_load_refused_with_the_range_and_its_bound_accepted)
{
    char *dir = kw_tl_tmpdir("kwval"), sp[4300];
    kw_v_files(dir, NULL,
               "phase=\"decode\" kv_len=\"128\" batch=\"1\" streams=\"4\" arrival=\"poisson\" "
               "load=\"0.0000000000001\"",
               NULL, "");
    kw_v_refused_everywhere(dir, "space.xml", "wl.xml:5:", "load must be in [");
    snprintf(sp, sizeof sp, "%s/space.xml", dir);
    kw_tl_proc r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "validate", sp, NULL);
    const char *b = strstr(r.err, "load must be in [");
    cr_assert(b != NULL, "%s", r.err);
    double lo = strtod(b + strlen("load must be in ["), NULL);
    /* Closed form: per-stream rate = load x G / (T1 x S) for G = 4 groups of one core
     * (h100.xml cores="4"; no max_batch knob, so batches of 1 taking T1, and the
     * 256x256 GEMM is compute-bound), so N arrivals span N x T1 / (load x G) and the
     * span / T1 ratio N / (load x G) reaches 1e-6 / DBL_EPSILON at
     * load = N x DBL_EPSILON / (1e-6 x G); N = final_requests 20000 + 10% warm-up. */
    double n = 22000, g = 4, want = n * 2.220446049250313e-16 / (1e-6 * g);
    cr_assert(fabs(lo - want) <= 0.01 * want, "bound %g, closed form %g", lo, want);
    kw_tl_free(&r);
    char attrs[512];
    snprintf(attrs, sizeof attrs, "phase=\"decode\" kv_len=\"128\" batch=\"1\" streams=\"4\" "
             "arrival=\"poisson\" load=\"%.12f\"", lo * 1.01);
    kw_v_files(dir, NULL, attrs, NULL, "");
    r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "validate", sp, NULL);
    kw_v_sane(&r, "validate at the bound");
    cr_assert_eq(r.status, 0, "load %g (just above the bound it named) refused: %s", lo * 1.01,
                 r.err);
    kw_tl_free(&r);
    snprintf(attrs, sizeof attrs, "phase=\"decode\" kv_len=\"128\" batch=\"1\" streams=\"4\" "
             "arrival=\"poisson\" load=\"%.12f\"", lo * 0.9);
    kw_v_files(dir, NULL, attrs, NULL, "");
    r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "validate", sp, NULL);
    cr_assert_eq(r.status, 2, "load %g (below the bound it named) accepted", lo * 0.9);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

Test(validation, tiny_rate_refused_with_the_range)
{
    char *dir = kw_tl_tmpdir("kwval");
    kw_v_files(dir, NULL,
               "phase=\"decode\" kv_len=\"128\" batch=\"1\" streams=\"4\" arrival=\"poisson\" "
               "rate_per_s=\"0.0000001\"",
               NULL, "");
    kw_v_refused_everywhere(dir, "space.xml", "wl.xml:5:", "rate_per_s must be at least");
    kw_tl_rmrf(dir);
}

/* Bursts so sparse that an on-period holds 1e-7 arrivals on average (rate_per_s
 * 1e-7 x burst_factor 1 x a 1 s on-period): the span passes the clock check
 * (the request takes ~1 s on the H100, so 110 arrivals over ~1e7 cycles each
 * stay under 4.5e9 of it), but the generator gives up after 1e6 empty on/off
 * cycles in a row. Before: validate said ok and eval / tune failed in the
 * simulation with exit 1 (tune after creating its run folder). */
Test(validation, bursts_too_sparse_for_the_generator_are_refused_up_front)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwval");
    kw_v_files(dir, "<gemm name=\"q\" group=\"qkv\" n=\"16384\" k=\"16384\"/>",
               "phase=\"prefill\" seq=\"65536\" batch=\"16\" streams=\"1\" arrival=\"bursty\" "
               "rate_per_s=\"0.0000001\" burst_on_ms=\"1000\" burst_off_ms=\"0.001\" "
               "burst_factor=\"1\"",
               NULL, "<tuning sim_requests=\"50\" final_requests=\"100\"/>");
    kw_v_refused_everywhere(dir, "space.xml", "wl.xml:5:",
                            "its bursts are too sparse for the simulation: an on-period holds 1e-07 "
                            "arrivals on average");
    kw_tl_rmrf(dir);
}

/* A long bursty run (1 s on-periods holding 1e-3 arrivals each, 1 us
 * off-periods, ~1.1e6 cycles to t ~ 1e12 us, where one ulp is ~1e-4 us): one
 * exponential off-period draw in ~1e4 is shorter than an ulp and is lost in
 * rounding, though its mean is not. Before: the generator took that draw for
 * a clock that cannot represent the period and stopped the run, exit 1
 * ("an off-period (mean 1 us) is lost in rounding"), on a shape validate
 * accepts. Now the lost draw is an empty off-period and the run finishes. */
Test(validation, a_short_draw_lost_in_rounding_does_not_stop_a_bursty_run)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwval"), sp[4300];
    kw_v_files(dir, "<gemm name=\"q\" group=\"qkv\" n=\"16384\" k=\"16384\"/>",
               "phase=\"prefill\" seq=\"65536\" batch=\"16\" streams=\"1\" arrival=\"bursty\" "
               "rate_per_s=\"0.001\" burst_on_ms=\"1000\" burst_off_ms=\"0.001\" "
               "burst_factor=\"1\"",
               NULL, "<tuning sim_requests=\"1000\" final_requests=\"1000\"/>");
    snprintf(sp, sizeof sp, "%s/space.xml", dir);
    kw_tl_proc r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "validate", sp, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "eval", "--space", sp, "--format", "csv", NULL);
    kw_v_sane(&r, "eval");
    cr_assert_eq(r.status, 0, "validate accepts the shape, so eval must run it: %s", r.err);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* A shape's rate_per_s is the user's arrival rate, served as given: one
 * Poisson stream at 1000 requests/s on a memory-bound baseline (a batch-1
 * decode through a 4096 x 4096 GEMM, ~18 us a request, so ~2% busy) is
 * served at 1000/s within the sampling error of 20,000 arrivals (~1%).
 * Before: the rule that makes `load` mean utilisation of DRAM when the
 * baseline is memory-bound scaled the given rate too, to ~450/s. */
Test(validation, an_explicit_rate_is_served_as_given)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwval"), sp[4300];
    kw_v_files(dir, "<gemm name=\"q\" group=\"qkv\" n=\"4096\" k=\"4096\"/>",
               "phase=\"decode\" kv_len=\"128\" batch=\"1\" streams=\"1\" arrival=\"poisson\" "
               "rate_per_s=\"1000\"",
               NULL, "<tuning sim_requests=\"20000\" final_requests=\"20000\"/>");
    snprintf(sp, sizeof sp, "%s/space.xml", dir);
    kw_tl_proc r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "eval", "--space", sp, NULL);
    kw_v_sane(&r, "eval");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "bottleneck memory"), "the baseline must be memory-bound: %s", r.out);
    const char *v = strstr(r.out, "serving ");
    cr_assert(v != NULL, "%s", r.out);
    double rps = strtod(v + strlen("serving "), NULL);
    cr_assert(fabs(rps - 1000.0) <= 50.0, "served %g requests/s for a rate of 1000/s", rps);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* The simulator's own loop, in process: a lost on-period is an error, not a
 * spin (Criterion's timeout fails the test if it hangs). */
Test(validation, sim_bursty_generator_is_progress_checked)
{
    kw_accel acc;
    kw_shape shp;
    kw_mapping map;
    kw_tl_queue(&acc, &shp, &map);
    shp.arrival = KW_ARRIVAL_BURSTY;
    shp.rate_per_s = 1000;
    shp.burst_on_ms = 1e-23;
    shp.burst_off_ms = 80;
    shp.burst_factor = 4;
    map.placement = KW_PLACE_ROUND_ROBIN;
    kw_cost svc;
    memset(&svc, 0, sizeof svc);
    svc.n_kernels = 1;
    svc.kernels[0].time_us = 10;
    svc.kernels[0].prec = KW_PREC_BF16;
    kw_sim_input in = {.accel = &acc, .shape = &shp, .mapping = &map, .service = &svc,
                       .trace_shape = -1};
    kw_sim_opts o = {.requests = 100, .seed = 1};
    kw_sim_result res;
    int rc = kw_sim_run(&res, &in, &o);
    cr_assert_eq(rc, KW_EINPUT, "rc %d: %s", rc, kw_error_last());
    cr_assert(strstr(kw_error_last(), "lost in rounding") || strstr(kw_error_last(), "cycles"),
              "%s", kw_error_last());
    kw_sim_result_clear(&res);
    /* on = off = 1e-9 ms at 1 request/s: each cycle moves the clock, but about 1e12 cycles
     * pass per arrival; the empty-cycle bound stops it */
    shp.burst_on_ms = 1e-9;
    shp.burst_off_ms = 1e-9;
    shp.rate_per_s = 1;
    rc = kw_sim_run(&res, &in, &o);
    cr_assert_eq(rc, KW_EINPUT, "rc %d: %s", rc, kw_error_last());
    cr_assert(strstr(kw_error_last(), "without an arrival"), "%s", kw_error_last());
    kw_sim_result_clear(&res);
}

/* The simulator stops when asked (stop flag, deadline), with KW_EINTERRUPTED. */
Test(validation, sim_run_is_cancellable)
{
    kw_accel acc;
    memset(&acc, 0, sizeof acc);
    acc.cores = 1;
    kw_shape shp;
    memset(&shp, 0, sizeof shp);
    snprintf(shp.name, sizeof shp.name, "s");
    shp.streams = 1;
    shp.arrival = KW_ARRIVAL_POISSON;
    shp.rate_per_s = 50000;
    kw_mapping map;
    memset(&map, 0, sizeof map);
    map.max_batch = 1;
    map.cores_per_request = 1;
    kw_cost svc;
    memset(&svc, 0, sizeof svc);
    svc.n_kernels = 1;
    svc.kernels[0].time_us = 10;
    svc.kernels[0].prec = KW_PREC_BF16;
    kw_sim_input in = {.accel = &acc, .shape = &shp, .mapping = &map, .service = &svc,
                       .trace_shape = -1};
    volatile sig_atomic_t stop = 1;
    kw_sim_opts o = {.requests = 1000000, .seed = 1, .stop = &stop};
    kw_sim_result res;
    cr_assert_eq(kw_sim_run(&res, &in, &o), KW_EINTERRUPTED, "%s", kw_error_last());
    kw_sim_result_clear(&res);
    o.stop = NULL;
    o.deadline_s = 1.0; /* CLOCK_MONOTONIC second 1: long past */
    cr_assert_eq(kw_sim_run(&res, &in, &o), KW_EINTERRUPTED, "%s", kw_error_last());
    kw_sim_result_clear(&res);
    o.deadline_s = 0;
    o.requests = 1000;
    cr_assert_eq(kw_sim_run(&res, &in, &o), 0, "%s", kw_error_last());
    kw_sim_result_clear(&res);
}

/* ---- 1. tune checks the stop flag and the time limit inside an evaluation ---- */

/* A shape whose one evaluation takes seconds: 30 kernels per request, 6M
 * simulated requests (~10 s per evaluation on the reference machine). */
static void kw_v_slow_space(const char *dir)
{
    char ops[4096] = "";
    size_t used = 0;
    for (int i = 0; i < 30; i++)
        used += (size_t)snprintf(ops + used, sizeof ops - used,
                                 "<gemm name=\"g%d\" group=\"qkv\" n=\"256\" k=\"256\"/>", i);
    kw_v_files(dir, ops,
               "phase=\"decode\" kv_len=\"128\" batch=\"1\" streams=\"8\" arrival=\"poisson\" "
               "load=\"0.5\"",
               "<knob name=\"qkv.tile_m\" values=\"32 64 128\" baseline=\"64\"/>",
               "<tuning sim_requests=\"6000000\" final_requests=\"2000\"/>");
}

#define KW_V_STOP_BOUND_S 3.0 /* from the signal to exit, against ~10 s for one evaluation */

Test(validation, sigterm_stops_tune_inside_a_long_evaluation_and_it_resumes)
{
    char *dir = kw_tl_tmpdir("kwval"), sp[4300], run[4300];
    kw_v_slow_space(dir);
    snprintf(sp, sizeof sp, "%s/space.xml", dir);
    snprintf(run, sizeof run, "%s/run", dir);
    const char *argv[] = {kw_tl_bin(), "tune", "--space", sp, "--out", run, "--budget", "3",
                          "--quiet", NULL};
    int ofd = kw_tl_tmpfile(), efd = kw_tl_tmpfile();
    kw_tl_opts o = kw_v_opts;
    pid_t pid = kw_tl_spawn(argv, &o, ofd, efd);
    cr_assert(pid > 0);
    /* the journal exists once the signal handler is in place and the search has
     * begun; 0.5 s later the baseline's evaluation (~5-10 s) is under way */
    char jp[4500];
    snprintf(jp, sizeof jp, "%s/journal", run);
    struct stat jst;
    for (int i = 0; i < 2000 && stat(jp, &jst) != 0; i++)
        usleep(10 * 1000);
    cr_assert_eq(stat(jp, &jst), 0, "tune did not start its journal within 20 s");
    usleep(500 * 1000);
    double t0 = kw_tl_now();
    kill(pid, SIGTERM);
    int to = 0;
    long rss;
    int st = kw_tl_wait(pid, t0 + 60, &to, &rss);
    double took = kw_tl_now() - t0;
    char *err = kw_tl_slurp_fd(efd);
    close(ofd);
    close(efd);
    cr_assert(!to, "tune did not stop within 60 s of SIGTERM");
    cr_assert_eq(st, 143, "exit %d after SIGTERM: %s", st, err);
    cr_assert_lt(took, KW_V_STOP_BOUND_S, "tune took %.1f s to stop after SIGTERM", took);
    cr_assert(strstr(err, "--resume"), "no resume hint: %s", err);
    free(err);
    /* the journal is whole: resume (bounded by a time limit that also falls inside
     * an evaluation) continues it and stops in time again */
    t0 = kw_tl_now();
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "tune", "--resume", run, "--time-limit", "1", "--quiet",
                         NULL);
    took = kw_tl_now() - t0;
    kw_v_sane(&r, "resume");
    cr_assert_eq(r.status, 0, "resume: exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "time limit reached"), "%s", r.err);
    cr_assert_lt(took, 1.0 + KW_V_STOP_BOUND_S, "resume with --time-limit 1 took %.1f s", took);
    kw_tl_free(&r);
    r = kw_tl_run(&o, kw_tl_bin(), "verify", run, NULL);
    cr_assert_eq(r.status, 0, "verify after the stops: %s %s", r.out, r.err);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

Test(validation, time_limit_stops_tune_inside_a_long_evaluation)
{
    char *dir = kw_tl_tmpdir("kwval"), sp[4300], run[4300];
    kw_v_slow_space(dir);
    snprintf(sp, sizeof sp, "%s/space.xml", dir);
    snprintf(run, sizeof run, "%s/run", dir);
    double t0 = kw_tl_now();
    kw_tl_proc r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "tune", "--space", sp, "--out", run, "--budget",
                         "3", "--time-limit", "1", "--quiet", NULL);
    double took = kw_tl_now() - t0;
    kw_v_sane(&r, "tune --time-limit 1");
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "time limit reached"), "%s", r.err);
    /* the first evaluation was dropped: tune says the limit is too short to progress */
    cr_assert(strstr(r.err, "no evaluation finished within the time limit"), "%s", r.err);
    cr_assert_lt(took, 1.0 + KW_V_STOP_BOUND_S, "tune --time-limit 1 took %.1f s", took);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* ---- 2. inputs are regular files: --trace ---- */

Test(validation, tune_trace_special_files_refused_before_writing)
{
    char *dir = kw_tl_tmpdir("kwval"), fifo[4300], run[4400], cwd[4300];
    snprintf(fifo, sizeof fifo, "%s/fifo.csv", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    snprintf(cwd, sizeof cwd, "%s/cwd", dir);
    cr_assert_eq(mkdir(cwd, 0700), 0);
    snprintf(run, sizeof run, "%s/run", cwd);
    const char *paths[] = {fifo, "/dev/zero", dir};
    const char *kinds[] = {"FIFO", "character device", "directory"};
    for (int i = 0; i < 3; i++) {
        kw_tl_opts o = kw_v_opts;
        o.cwd = cwd;
        kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "tune", "--trace", paths[i], "--out", run,
                             "--budget", "2", "--quiet", NULL);
        kw_v_sane(&r, paths[i]);
        cr_assert_eq(r.status, 2, "tune --trace %s: exit %d: %s", paths[i], r.status, r.err);
        cr_assert(strstr(r.err, paths[i]) && strstr(r.err, kinds[i]) &&
                      strstr(r.err, "not a regular file"),
                  "tune --trace %s: %s", paths[i], r.err);
        cr_assert_eq(kw_tl_entries(cwd), 0, "tune --trace %s wrote into its folder", paths[i]);
        kw_tl_free(&r);
    }
    kw_tl_rmrf(dir);
}

/* ---- 4. eval --stdin: one row per line, RFC 4180, bounded, errors exit ---- */

/* Rows of an RFC 4180 text and, for each, its field count (quoted fields may
 * hold commas, doubled quotes and line breaks). Returns the row count. */
static int kw_v_csv_rows(const char *s, int *fields, int max_rows)
{
    int rows = 0, nf = 1, inq = 0;
    for (; *s; s++) {
        if (inq) {
            if (*s == '"' && s[1] == '"')
                s++;
            else if (*s == '"')
                inq = 0;
            continue;
        }
        if (*s == '"')
            inq = 1;
        else if (*s == ',')
            nf++;
        else if (*s == '\n') {
            if (rows < max_rows)
                fields[rows] = nf;
            rows++;
            nf = 1;
        }
    }
    return rows;
}

Test(validation, eval_stdin_one_row_per_line_quoted_and_bounded)
{
    char *dir = kw_tl_tmpdir("kwval"), in[4300];
    snprintf(in, sizeof in, "%s/in.txt", dir);
    FILE *f = fopen(in, "w");
    cr_assert(f != NULL);
    int lines = 0;
    fputs("attn_prefill_s128_b8_c4 fuse_qkv=on\n", f), lines++;             /* 1 good */
    fputs("a,b\"c fuse_qkv=on\n", f), lines++;                            /* 2 commas, quote */
    fwrite("attn_prefill_s128_b8_c4 fuse_attention=flash\0 x\n", 1, 48, f), lines++; /* 3 NUL */
    fwrite("\0\0\0\0\n", 1, 5, f), lines++;                               /* 4 only NULs */
    fputs("\n", f), lines++;                                               /* 5 empty */
    fputs("attn_prefill_s128_b8_c4 ", f);                                  /* 6 ~3 MB */
    for (int i = 0; i < 300000; i++)
        fputs("fuse_qkv=on", f);
    fputc('\n', f), lines++;
    fputs("attn_prefill_s128_b8_c4 launch_mode=graph", f), lines++;       /* 7 no newline */
    cr_assert_eq(fclose(f), 0);
    kw_tl_opts o = kw_v_opts;
    o.stdin_path = in;
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "eval", "--stdin", NULL);
    kw_v_sane(&r, "eval --stdin");
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    int fields[16];
    int rows = kw_v_csv_rows(r.out, fields, 16);
    cr_assert_eq(rows, 1 + lines, "%d rows for %d lines:\n%.3000s", rows, lines, r.out);
    for (int i = 0; i < rows && i < 16; i++)
        cr_assert_eq(fields[i], fields[0], "row %d has %d fields, the header %d:\n%.3000s", i,
                     fields[i], fields[0], r.out);
    cr_assert(strstr(r.out, "\n\"a,b\"\"c\",error,"), "shape not quoted per RFC 4180:\n%.2000s",
              r.out);
    cr_assert(strstr(r.out, "stdin:3: NUL byte"), "the NUL line was evaluated:\n%.2000s", r.out);
    cr_assert(strstr(r.out, "stdin:4: NUL byte"), "%.2000s", r.out);
    cr_assert(strstr(r.out, "stdin:5: empty line"), "%.2000s", r.out);
    cr_assert(strstr(r.out, "stdin:6: line longer than 65536 bytes"), "%.2000s", r.out);
    cr_assert_lt(strlen(r.out), 64u << 10, "echoed the long line back");
    /* the 3 MB line costs no more than a 64 KiB buffer: far below its own size */
    cr_assert_lt(r.maxrss_kb, 200 * 1024, "peak RSS %ld KiB", r.maxrss_kb);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* A read error ends the stream with an error exit, not 0 (a directory as
 * stdin: read(2) fails with EISDIR). */
Test(validation, eval_stdin_read_error_is_an_error_exit)
{
    char *dir = kw_tl_tmpdir("kwval");
    kw_tl_opts o = kw_v_opts;
    o.stdin_path = dir;
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "eval", "--stdin", NULL);
    kw_v_sane(&r, "eval --stdin < DIR");
    cr_assert_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "read error"), "%s", r.err);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* ---- 3. exhaustive without a budget is bounded ---- */

/* The embedded default: refused, naming its size, which must be the product
 * of the domain sizes `show --format csv` lists; nothing written. A space of
 * 5,184 configurations (validate_small.xml) is taken (stopped by a 1 s limit). */
Test(validation, exhaustive_without_budget_refused_when_too_large)
{
    kw_tl_proc r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "show", "--format", "csv", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    double size = 1;
    for (const char *l = strstr(r.out, "\nknob,"); l; l = strstr(l + 1, "\nknob,")) {
        const char *v = strchr(l + 6, ','); /* after the name */
        cr_assert(v != NULL);
        int n = 1;
        for (v++; *v && *v != ','; v++)
            n += *v == '|';
        size *= n;
    }
    kw_tl_free(&r);
    cr_assert_gt(size, 1e6);
    char *dir = kw_tl_tmpdir("kwval"), run[4300], want[64];
    snprintf(run, sizeof run, "%s/run", dir);
    kw_tl_opts o = kw_v_opts;
    o.cwd = dir;
    r = kw_tl_run(&o, kw_tl_bin(), "tune", "--strategy", "exhaustive", "--out", run, "--quiet", NULL);
    kw_v_sane(&r, "tune --strategy exhaustive");
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    snprintf(want, sizeof want, "has %.4g configurations", size);
    cr_assert(strstr(r.err, want) && strstr(r.err, "--budget"), "want '%s' in: %s", want, r.err);
    cr_assert_eq(kw_tl_entries(dir), 0, "wrote into %s", dir);
    kw_tl_free(&r);
    char sp[4300];
    snprintf(sp, sizeof sp, "%s/spaces/validate_small.xml", kw_tl_src());
    r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", sp, "--strategy", "exhaustive", "--out", run,
                 "--time-limit", "1", "--quiet", NULL);
    kw_v_sane(&r, "tune --strategy exhaustive on validate_small");
    cr_assert_eq(r.status, 0, "a 5,184-config space refused: %s", r.err);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* ---- 5/6. traces: gaps beyond the clock, other shapes only, --trace on a load shape ---- */

/* Two shapes: t replays dir/t.csv, u is given by load. */
static void kw_v_two_shape_files(const char *dir, const char *trace_rows)
{
    char p[4300], buf[8192];
    snprintf(p, sizeof p, "%s/t.csv", dir);
    snprintf(buf, sizeof buf, "time_us,stream,shape\n%s", trace_rows);
    kw_v_write(p, buf);
    snprintf(p, sizeof p, "%s/wl.xml", dir);
    kw_v_write(p, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<workload name=\"v\">\n"
                  "  <source>test_validation</source>\n"
                  "  <block name=\"b\"><gemm name=\"q\" group=\"qkv\" n=\"256\" k=\"256\"/></block>\n"
                  "  <shape name=\"t\" block=\"b\" phase=\"decode\" kv_len=\"128\" batch=\"1\" "
                  "streams=\"4\" arrival=\"trace\" trace=\"t.csv\"/>\n"
                  "  <shape name=\"u\" block=\"b\" phase=\"decode\" kv_len=\"128\" batch=\"1\" "
                  "streams=\"4\" arrival=\"poisson\" load=\"0.5\"/>\n</workload>\n");
    snprintf(p, sizeof p, "%s/space.xml", dir);
    snprintf(buf, sizeof buf,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<space name=\"v\" block=\"b\">\n"
             "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n  <workload file=\"wl.xml\"/>\n"
             "  <knob name=\"qkv.tile_m\" values=\"64 128\" baseline=\"64\"/>\n"
             "  <tuning sim_requests=\"50\" final_requests=\"100\"/>\n</space>\n",
             kw_tl_src());
    kw_v_write(p, buf);
}

/* A trace whose only rows name the other shape passed validate (it read the
 * trace with every shape's name) and failed eval and tune (which read it with
 * the shape's own): validate now reads it the evaluator's way. */
Test(validation, trace_naming_only_other_shapes_refused_by_validate)
{
    char *dir = kw_tl_tmpdir("kwval");
    kw_v_two_shape_files(dir, "0,0,u\n10,1,u\n");
    kw_v_refused_everywhere(dir, "space.xml", "t.csv:2:", "unknown shape 'u'");
    kw_tl_rmrf(dir);
}

/* A gap of 1e21 us in a trace: the replay's span is beyond the clock. */
Test(validation, trace_gap_beyond_the_clock_refused)
{
    char *dir = kw_tl_tmpdir("kwval");
    kw_v_two_shape_files(dir, "0,0,t\n10,1,t\n1000000000000000000000,2,t\n");
    kw_v_refused_everywhere(dir, "space.xml", "wl.xml:5:", "trace times must stay below");
    kw_tl_rmrf(dir);
}

/* `tune --trace` naming a shape given by load= wrote a journal, then failed
 * (exit 1) and advised a resume that failed the same way. */
Test(validation, tune_trace_on_a_load_shape_refused_before_writing)
{
    char *dir = kw_tl_tmpdir("kwval"), tr[4300], sp[4300], cwd[4300], run[4400];
    kw_v_two_shape_files(dir, "0,0,t\n10,1,t\n");
    snprintf(tr, sizeof tr, "%s/u.csv", dir);
    kw_v_write(tr, "time_us,stream,shape\n0,0,u\n10,1,u\n");
    snprintf(sp, sizeof sp, "%s/space.xml", dir);
    snprintf(cwd, sizeof cwd, "%s/cwd", dir);
    cr_assert_eq(mkdir(cwd, 0700), 0);
    snprintf(run, sizeof run, "%s/run", cwd);
    kw_tl_opts o = kw_v_opts;
    o.cwd = cwd;
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", sp, "--trace", tr, "--out", run,
                         "--budget", "2", "--quiet", NULL);
    kw_v_sane(&r, "tune --trace on a load shape");
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "shape 'u'") && strstr(r.err, "wl.xml:6") &&
                  strstr(r.err, "arrival=\"trace\""),
              "%s", r.err);
    cr_assert_eq(kw_tl_entries(cwd), 0, "wrote into its folder before refusing");
    kw_tl_free(&r);
    /* the control: the same option naming the trace shape is taken */
    snprintf(tr, sizeof tr, "%s/t2.csv", dir);
    kw_v_write(tr, "time_us,stream,shape\n0,0,t\n20,1,t\n");
    r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", sp, "--trace", tr, "--out", run, "--budget",
                 "2", "--quiet", NULL);
    kw_v_sane(&r, "tune --trace on the trace shape");
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* ---- 5. the results writer holds its output to its own schema ---- */

Test(validation, written_xml_is_checked_against_its_schema)
{
    char *dir = kw_tl_tmpdir("kwval"), p[4500];
    snprintf(p, sizeof p, "%s/results.xml", dir);
    /* a results root whose content the schema refuses (what an overflowing model once wrote:
     * a number in exponent form where results.xsd wants a decimal) */
    kw_v_write(p, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<results version=\"1e+30\"/>\n");
    int rc = kw_xml_check_written(p, "results.xml", "results", "results/results.xsd");
    cr_assert_eq(rc, KW_EMODEL, "rc %d: %s", rc, kw_error_last());
    cr_assert(strstr(kw_error_last(), "does not satisfy its own schema") &&
                  strstr(kw_error_last(), "results/results.xsd"),
              "%s", kw_error_last());
    /* a real run's results.xml passes */
    char sp[4300], run[4400];
    snprintf(sp, sizeof sp, "%s/spaces/validate_small.xml", kw_tl_src());
    snprintf(run, sizeof run, "%s/run", dir);
    kw_tl_proc r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "tune", "--space", sp, "--out", run, "--budget",
                         "3", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/results.xml", run);
    rc = kw_xml_check_written(p, "results.xml", "results", "results/results.xsd");
    cr_assert_eq(rc, 0, "a real results.xml refused: %s", kw_error_last());
    /* over the 4 MiB input limit, it is still what the writer wrote: a run of
     * 49 shapes (spaces/validate_small.xml's block) writes 4.4 MB, and tune
     * refused it ("does not satisfy its own schema ... over the 4 MiB limit
     * for input files", exit 1, no result files, resume the same) */
    FILE *f = fopen(p, "ab");
    cr_assert(f);
    for (int i = 0; i < (5 << 20) / 64; i++)
        fputs("                                                               \n", f);
    cr_assert_eq(fclose(f), 0);
    rc = kw_xml_check_written(p, "results.xml", "results", "results/results.xsd");
    cr_assert_eq(rc, 0, "a 5 MiB results.xml refused: %s", kw_error_last());
    kw_tl_rmrf(dir);
}

/* tune --requests above what one simulation runs with its warm-up: a usage
 * error before anything is written (it was accepted up to 1e8). */
Test(validation, tune_requests_above_the_simulator_refused)
{
    char *dir = kw_tl_tmpdir("kwval"), run[4300];
    snprintf(run, sizeof run, "%s/run", dir);
    kw_tl_opts o = kw_v_opts;
    o.cwd = dir;
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "tune", "--requests", "46000000", "--out", run, "--quiet",
                         NULL);
    kw_v_sane(&r, "tune --requests 46000000");
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    /* 45454546 + its 10% warm-up (4545454) = 50,000,000, the simulator's limit */
    cr_assert(strstr(r.err, "45454546"), "%s", r.err);
    cr_assert_eq(kw_tl_entries(dir), 0, "wrote into %s", dir);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* A journal naming a trace that has since become a FIFO: resume refuses it
 * (exit 2) instead of blocking on the hash of the trace. */
Test(validation, resume_with_a_trace_turned_fifo_does_not_block)
{
    char *dir = kw_tl_tmpdir("kwval"), tr[4300], sp[4300], run[4400];
    kw_v_two_shape_files(dir, "0,0,t\n10,1,t\n");
    snprintf(tr, sizeof tr, "%s/t2.csv", dir);
    kw_v_write(tr, "time_us,stream,shape\n0,0,t\n20,1,t\n");
    snprintf(sp, sizeof sp, "%s/space.xml", dir);
    snprintf(run, sizeof run, "%s/run", dir);
    kw_tl_proc r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "tune", "--space", sp, "--trace", tr, "--out", run,
                         "--budget", "2", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    kw_tl_free(&r);
    cr_assert_eq(unlink(tr), 0);
    cr_assert_eq(mkfifo(tr, 0600), 0);
    r = kw_tl_run(&kw_v_opts, kw_tl_bin(), "tune", "--resume", run, "--quiet", NULL);
    kw_v_sane(&r, "resume with a FIFO trace");
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "is a FIFO, not a regular file"), "%s", r.err);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* The one syntax of a number read from a person (kw_num.h): strtod alone read
 * "0x10" as 16 (--time-limit 0x10 ran 16 s), and " 5", "inf", "nan". */
Test(validation, numbers_are_decimal_only_and_finite)
{
    static const struct {
        const char *text;
        double want; /* NAN: refused */
    } d[] = {
        {"5", 5},         {"-2.5", -2.5}, {"+7", 7},          {".5", 0.5},    {"5.", 5},
        {"1e3", 1000},    {"2E-3", 2e-3}, {"1.5e+2", 150},    {"0", 0},       {"-0", 0},
        {"0x10", NAN},    {" 5", NAN},    {"5 ", NAN},        {"", NAN},      {"nan", NAN},
        {"inf", NAN},     {"-inf", NAN},  {"infinity", NAN},  {"1e400", NAN}, {"1e-400", NAN},
        {"5s", NAN},      {".", NAN},     {"e5", NAN},        {"1e", NAN},    {"1e+", NAN},
        {"--5", NAN},     {"1.2.3", NAN}, {"0x1p4", NAN},     {"1,5", NAN},   {"\t5", NAN},
    };
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        double v = 42;
        int rc = kw_num_double(&v, d[i].text);
        if (isnan(d[i].want)) {
            cr_expect_eq(rc, -1, "'%s' accepted as %g", d[i].text, v);
            cr_expect_eq(v, 42, "'%s': out written on refusal", d[i].text);
        } else {
            cr_expect_eq(rc, 0, "'%s' refused", d[i].text);
            cr_expect_eq(v, d[i].want, "'%s' read as %g", d[i].text, v);
            cr_expect(!signbit(v) || v != 0, "'%s' read as negative zero", d[i].text);
        }
    }
    /* a refusal's rule: "1e-400" is decimal and out of range, "0x10" is not decimal */
    cr_expect(kw_num_syntax_decimal("1e-400") && kw_num_syntax_decimal("4.9e-324"));
    cr_expect(!kw_num_syntax_decimal("0x10") && !kw_num_syntax_decimal(" 5") &&
              !kw_num_syntax_decimal("inf") && !kw_num_syntax_decimal(NULL));
    static const struct {
        const char *text;
        int ok;
        long want;
    } l[] = {
        {"5", 1, 5},   {"-3", 1, -3},  {"+4", 1, 4},    {"0x10", 0, 0},  {"5.0", 0, 0},
        {"1e3", 0, 0}, {" 5", 0, 0},   {"", 0, 0},      {"-", 0, 0},     {"9", 0, 0} /* > max */,
        {"99999999999999999999", 0, 0}, {"-99999999999999999999", 0, 0}, {"08", 1, 8},
    };
    for (size_t i = 0; i < sizeof l / sizeof l[0]; i++) {
        long v = 42;
        int rc = kw_num_long(&v, l[i].text, -8, 8);
        cr_expect_eq(rc, l[i].ok ? 0 : -1, "'%s': %d", l[i].text, rc);
        cr_expect_eq(v, l[i].ok ? l[i].want : 42, "'%s' read as %ld", l[i].text, v);
    }
}
