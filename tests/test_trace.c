/* test_trace.c - production trace loading: every refusal names FILE:LINE and
 * says what is wrong; a good trace loads and replays in the simulation with
 * exactly its own arrival times. Traces are written to a temporary folder. */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kw_error.h"
#include "kw_sim.h"
#include "kw_trace.h"

static char dir[64];
static char path[128];
static const char *const names[] = {"prefill", "decode"};

static void setup(void)
{
    gsl_set_error_handler_off();
    snprintf(dir, sizeof dir, "/tmp/kwtrace.XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.csv", dir);
}

static void teardown(void)
{
    unlink(path);
    rmdir(dir);
}

TestSuite(trace, .init = setup, .fini = teardown);

static void write_bytes(const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(text, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

static void write_text(const char *text) { write_bytes(text, strlen(text)); }

/* Loading `text` fails with KW_EINPUT and "PATH:LINE: ...sub...". */
static void refused(const char *text, int line, const char *sub)
{
    write_text(text);
    kw_trace *t = (kw_trace *)1;
    int rc = kw_trace_load(&t, path, 4, names, 2);
    cr_assert_eq(rc, KW_EINPUT, "accepted: %s", text);
    cr_expect_null(t);
    char pre[256];
    snprintf(pre, sizeof pre, "%s:%d: ", path, line);
    cr_expect(strncmp(kw_error_last(), pre, strlen(pre)) == 0, "want '%s' at the start of '%s'", pre,
              kw_error_last());
    cr_expect(strstr(kw_error_last(), sub) != NULL, "want '%s' in '%s'", sub, kw_error_last());
}

Test(trace, loads_a_valid_trace)
{
    write_text("time_us,stream,shape\n0,0,prefill\n12.5,3,decode\n12.5,1,prefill\r\n1e3,2,decode");
    kw_trace *t = NULL;
    cr_assert_eq(kw_trace_load(&t, path, 4, names, 2), 0, "%s", kw_error_last());
    cr_assert_eq(t->n, 4);
    cr_expect_eq(t->time_us[1], 12.5);
    cr_expect_eq(t->time_us[3], 1000.0);
    cr_expect_eq(t->stream[1], 3);
    cr_expect_eq(t->shape[1], 1);
    cr_expect_eq(t->shape[2], 0);
    cr_expect_eq(kw_trace_count(t, 0), 2);
    cr_expect_eq(kw_trace_count(t, -1), 4);
    kw_trace_free(t);
    kw_trace_free(NULL);
}

Test(trace, header)
{
    refused("", 1, "empty file");
    refused("0,0,prefill\n", 1, "header must be 'time_us,stream,shape'");
    refused("time,stream,shape\n0,0,prefill\n", 1, "header must be");
    refused("time_us,stream,shape\n", 1, "no rows");
}

Test(trace, time_field)
{
    refused("time_us,stream,shape\n0,0,prefill\nabc,0,prefill\n", 3, "'abc' is not a finite number");
    refused("time_us,stream,shape\nnan,0,prefill\n", 2, "not a finite number");
    refused("time_us,stream,shape\ninf,0,prefill\n", 2, "not a finite number");
    refused("time_us,stream,shape\n1e309,0,prefill\n", 2, "not a finite number");
    refused("time_us,stream,shape\n-1,0,prefill\n", 2, "is negative");
    refused("time_us,stream,shape\n,0,prefill\n", 2, "not a finite number");
    refused("time_us,stream,shape\n\"1\",0,prefill\n", 2, "not a finite number");
    refused("time_us,stream,shape\n 1,0,prefill\n", 2, "not a finite number");
    refused("time_us,stream,shape\n1x,0,prefill\n", 2, "not a finite number");
}

Test(trace, sorted_times)
{
    refused("time_us,stream,shape\n0,0,prefill\n5,1,prefill\n4.9,2,prefill\n", 4, "goes back in time");
}

Test(trace, stream_field)
{
    refused("time_us,stream,shape\n0,4,prefill\n", 2, "stream 4 outside [0, 4)");
    refused("time_us,stream,shape\n0,-1,prefill\n", 2, "stream -1 outside");
    refused("time_us,stream,shape\n0,1.5,prefill\n", 2, "'1.5' is not an integer");
    refused("time_us,stream,shape\n0,99999999999999999999,prefill\n", 2, "is not an integer");
    refused("time_us,stream,shape\n0, 1,prefill\n", 2, "is not an integer");
    refused("time_us,stream,shape\n0,,prefill\n", 2, "is not an integer");
}

Test(trace, shape_field_and_fields)
{
    refused("time_us,stream,shape\n0,0,prefill\n1,0,train\n", 3, "unknown shape 'train'");
    refused("time_us,stream,shape\n0,0,Prefill\n", 2, "unknown shape");
    refused("time_us,stream,shape\n0,0,prefill,x\n", 2, "more than 3 fields");
    refused("time_us,stream,shape\n0,0\n", 2, "2 fields, expected 3");
    refused("time_us,stream,shape\n0,0,prefill\n\n1,0,prefill\n", 3, "empty line");
}

Test(trace, hostile_bytes_and_sizes)
{
    write_bytes("time_us,stream,shape\n0,0,pre\0fill\n", 35);
    kw_trace *t = NULL;
    cr_expect_eq(kw_trace_load(&t, path, 4, names, 2), KW_EINPUT);
    cr_expect(strstr(kw_error_last(), ":2: NUL byte") != NULL, "%s", kw_error_last());
    char *longl = malloc(KW_TRACE_LINE_MAX + 64);
    snprintf(longl, KW_TRACE_LINE_MAX + 64, "time_us,stream,shape\n0,0,");
    size_t n = strlen(longl);
    memset(longl + n, 'x', KW_TRACE_LINE_MAX + 10);
    longl[n + KW_TRACE_LINE_MAX + 10] = '\0';
    refused(longl, 2, "line longer than");
    free(longl);
    /* over the size limit: a sparse file, no real bytes written */
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs("time_us,stream,shape\n", f);
    cr_assert_eq(fseek(f, KW_TRACE_MAX_BYTES + 1, SEEK_SET), 0);
    fputc('\n', f);
    fclose(f);
    cr_expect_eq(kw_trace_load(&t, path, 4, names, 2), KW_EINPUT);
    cr_expect(strstr(kw_error_last(), "byte limit") != NULL, "%s", kw_error_last());
    cr_expect_eq(kw_trace_load(&t, "/nonexistent/t.csv", 4, names, 2), KW_EIO);
    cr_expect(strstr(kw_error_last(), "/nonexistent/t.csv") != NULL);
}

/* Replay: one core, deterministic 10 us service, arrivals of shape "decode"
 * only; latencies follow from the trace by hand (Lindley's recursion). */
Test(trace, replays_in_the_simulation)
{
    write_text("time_us,stream,shape\n100,0,decode\n103,1,decode\n104,0,prefill\n"
               "105,1,decode\n130,0,decode\n");
    kw_trace *t = NULL;
    cr_assert_eq(kw_trace_load(&t, path, 2, names, 2), 0, "%s", kw_error_last());
    kw_accel a = {.cores = 1};
    kw_shape s = {.streams = 2, .arrival = KW_ARRIVAL_TRACE};
    kw_mapping m = {.max_batch = 1, .placement = KW_PLACE_ROUND_ROBIN, .cores_per_request = 1};
    kw_cost c;
    memset(&c, 0, sizeof c);
    c.n_kernels = 1;
    c.kernels[0].time_us = 10.0;
    kw_sim_input in = {.accel = &a, .shape = &s, .mapping = &m, .service = &c, .trace = t,
                       .trace_shape = 1};
    kw_sim_opts o = {.requests = 4, .keep_latencies = 1};
    kw_sim_result r;
    cr_assert_eq(kw_sim_run(&r, &in, &o), 0, "%s", kw_error_last());
    /* arrivals 100, 103, 105, 130 -> start 100, 110, 120, 130 -> latencies 10, 17, 25, 10 */
    double want[4] = {10, 10, 17, 25};
    for (int i = 0; i < 4; i++)
        cr_expect(fabs(r.lat_sorted_us[i] - want[i]) < 1e-9, "latency %d: %.9f", i, r.lat_sorted_us[i]);
    cr_expect_eq(r.stream[0].samples, 2);
    cr_expect_eq(r.stream[1].samples, 2);
    kw_sim_result_clear(&r);
    /* longer than the trace: replayed again, shifted by span + mean gap (30 + 10) */
    o.requests = 8;
    cr_assert_eq(kw_sim_run(&r, &in, &o), 0, "%s", kw_error_last());
    cr_expect(fabs(r.lat_sorted_us[7] - 25.0) < 1e-9);
    cr_expect(fabs(r.window_us - (70.0 + 10.0)) < 1e-9, "window %.6f", r.window_us);
    kw_sim_result_clear(&r);
    /* a shape with no rows is an input error */
    in.trace_shape = 5;
    cr_expect_eq(kw_sim_run(&r, &in, &o), KW_EINPUT);
    kw_trace_free(t);
}
