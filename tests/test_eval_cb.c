/* test_eval_cb.c - continuous batching through the evaluator and the CLI:
 * a continuous shape's loader errors (FILE:LINE), the eval CSV's TTFT/TPOT
 * and tokens columns (with fixed 256-token outputs, tokens_per_s is exactly
 * 256 x throughput_rps; TTFT below the request latency), and the TTFT SLA
 * guard failing when the limit is below what is served. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"
#include "kw_load.h"
#include "lib/kw_tl.h"

TestSuite(eval_cb);

static void write_file(const char *path, const char *text)
{
    cr_assert_eq(kw_tl_write(path, text), 0, "cannot write %s", path);
}

Test(eval_cb, continuous_shape_errors_name_file_and_line)
{
    char *dir = kw_tl_tmpdir("kwcb");
    char path[4200], want[4300];
    snprintf(path, sizeof path, "%s/w.xml", dir);
    write_file(path, "<?xml version=\"1.0\"?>\n<workload name=\"w\">\n  <source>t</source>\n"
                     "  <block name=\"mlp\"><gemm name=\"up\" group=\"up\" n=\"256\" k=\"128\"/></block>\n"
                     "  <shape name=\"c\" block=\"mlp\" phase=\"prefill\" seq=\"64\" batch=\"1\" "
                     "load=\"0.5\" batching=\"continuous\"/>\n</workload>\n");
    kw_workload *w = malloc(sizeof *w);
    cr_assert_eq(kw_load_workload(w, path), KW_EINPUT);
    snprintf(want, sizeof want, "%s:5: ", path);
    const char *e = kw_error_last();
    cr_expect(strncmp(e, want, strlen(want)) == 0, "%s", e);
    cr_expect(strstr(e, "needs output_tokens") != NULL, "%s", e);
    cr_expect(strstr(e, "needs rate_per_s") != NULL, "%s", e);
    write_file(path, "<?xml version=\"1.0\"?>\n<workload name=\"w\">\n  <source>t</source>\n"
                     "  <block name=\"mlp\"><gemm name=\"up\" group=\"up\" n=\"256\" k=\"128\"/></block>\n"
                     "  <shape name=\"c\" block=\"mlp\" phase=\"prefill\" seq=\"64\" batch=\"1\" "
                     "rate_per_s=\"5\" output_tokens=\"8\"/>\n</workload>\n");
    cr_assert_eq(kw_load_workload(w, path), KW_EINPUT);
    cr_expect(strstr(kw_error_last(), "applies to batching=\"continuous\" only") != NULL, "%s",
              kw_error_last());
    free(w);
    kw_tl_rmrf(dir);
}

static double col(const char *csv, const char *name)
{
    char buf[64];
    kw_tl_csv_col(csv, name, buf, sizeof buf);
    cr_assert(buf[0], "no column %s in %s", name, csv);
    return atof(buf);
}

Test(eval_cb, eval_csv_ttft_tpot_and_tokens)
{
    char space[4200];
    snprintf(space, sizeof space, "%s/tests/bench/llm_trtllm.xml", kw_tl_src());
    kw_tl_opts o = {.timeout_s = 60};
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "eval", "--space", space, "--shape",
                             "trtllm_online_i467_o256_qps8", "--format", "csv", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    double rps = col(r.out, "throughput_rps"), tok = col(r.out, "tokens_per_s");
    cr_expect(rps > 0.0);
    cr_expect(fabs(tok - 256.0 * rps) <= 256.0 * 0.00005 + 0.005, "%g vs 256 x %g", tok, rps);
    double ttft = col(r.out, "ttft_p50_us"), lat = col(r.out, "p50_us");
    double tpot = col(r.out, "tpot_p50_us");
    cr_expect(ttft > 0.0 && ttft < lat, "ttft %g, latency %g", ttft, lat);
    /* a request's latency is its TTFT plus 255 TPOTs (medians: roughly) */
    cr_expect(tpot > 0.0 && fabs(lat - (ttft + 255.0 * tpot)) < 0.2 * lat, "%g %g %g", lat, ttft,
              tpot);
    kw_tl_free(&r);
}

Test(eval_cb, ttft_sla_guard)
{
    char *dir = kw_tl_tmpdir("kwcb");
    char path[4200];
    snprintf(path, sizeof path, "%s/s.xml", dir);
    char text[4096];
    snprintf(text, sizeof text,
             "<?xml version=\"1.0\"?>\n<space name=\"s\" block=\"llama3_8b_layer\">\n"
             "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n"
             "  <workload file=\"%s/spaces/workloads/llama3_8b.xml\"/>\n"
             "  <shape ref=\"trtllm_online_i467_o256_qps8\"/>\n"
             "  <knob name=\"max_seqs\" values=\"64\" baseline=\"64\"/>\n"
             "  <guards sla_ttft_p99_us=\"1000\" sla_tpot_p99_us=\"1000000\"/>\n"
             "  <tuning sim_requests=\"100\" final_requests=\"100\"/>\n</space>\n",
             kw_tl_src(), kw_tl_src());
    write_file(path, text);
    kw_tl_opts o = {.timeout_s = 60};
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "eval", "--space", path, "--format", "csv", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char g[256];
    kw_tl_csv_col(r.out, "guards", g, sizeof g);
    cr_expect(strstr(g, "sla_ttft") != NULL, "guards '%s'", g);
    cr_expect(strstr(g, "sla_tpot") == NULL, "guards '%s'", g);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}
