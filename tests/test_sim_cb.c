/* test_sim_cb.c - continuous batching against iteration schedules worked by
 * hand. The iteration time is the closed form dt = 100 + 1 x prompt tokens +
 * 10 x decoding sequences (us), so every TTFT, TPOT, latency and throughput
 * below is arithmetic on that schedule, written out next to each case. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kw_error.h"
#include "kw_sim_cb.h"

TestSuite(sim_cb);

static double linear(void *ctx, int pf_tokens, int pf_seqs, double pf_ctx, int dec, double dec_ctx)
{
    (void)pf_seqs;
    (void)pf_ctx;
    (void)dec_ctx;
    int *calls = ctx;
    (*calls)++;
    return 100.0 + pf_tokens + 10.0 * dec;
}

/* Two requests at 0, prompt 100, 3 output tokens, room for both:
 * it1 prefill 200: t = 300, both first tokens (TTFT 300)
 * it2 decode 2:    t = 420;  it3 decode 2: t = 540, both done
 * TPOT (540 - 300) / 2 = 120; 6 tokens in 540 us = 11,111.1 tokens/s. */
Test(sim_cb, whole_prompts_then_decodes)
{
    kw_cb_request r[2] = {{0, 100, 3}, {0, 100, 3}};
    kw_cb_config c = {.token_budget = 1000, .chunk_tokens = 0, .max_seqs = 8};
    kw_cb_result o;
    int calls = 0;
    cr_assert_eq(kw_sim_cb_run(&o, r, 2, &c, linear, &calls), 0, "%s", kw_error_last());
    cr_expect_eq(o.iterations, 3);
    cr_expect_eq(calls, 3);
    cr_expect_float_eq(o.ttft_p50_us, 300.0, 1e-9);
    cr_expect_float_eq(o.ttft_p99_us, 300.0, 1e-9);
    cr_expect_float_eq(o.tpot_p95_us, 120.0, 1e-9);
    cr_expect_float_eq(o.latency_p99_us, 540.0, 1e-9);
    cr_expect_float_eq(o.tokens_per_s, 6.0 / 540e-6, 1e-6);
    cr_expect_float_eq(o.requests_per_s, 2.0 / 540e-6, 1e-6);
}

/* Chunked prefill, chunk 64, one request prompt 100, 2 output tokens:
 * it1 64 prompt tokens: t = 164; it2 36: t = 300 (TTFT 300); it3 decode: t = 410. */
Test(sim_cb, chunked_prefill)
{
    kw_cb_request r[1] = {{0, 100, 2}};
    kw_cb_config c = {.token_budget = 1000, .chunk_tokens = 64, .max_seqs = 8};
    kw_cb_result o;
    int calls = 0;
    cr_assert_eq(kw_sim_cb_run(&o, r, 1, &c, linear, &calls), 0, "%s", kw_error_last());
    cr_expect_eq(o.iterations, 3);
    cr_expect_float_eq(o.ttft_p50_us, 300.0, 1e-9);
    cr_expect_float_eq(o.tpot_p50_us, 110.0, 1e-9);
    cr_expect_float_eq(o.latency_p50_us, 410.0, 1e-9);
}

/* Token budget 150, two requests at 0, prompt 100, 2 output tokens:
 * it1 r1 100 + r2 50 prompt tokens: t = 250, r1 first token (TTFT 250)
 * it2 r1 decodes, r2's last 50: t = 250 + 100 + 50 + 10 = 410: r1 done
 *     (TPOT 160), r2 first token (TTFT 410)
 * it3 r2 decodes: t = 520, done (TPOT 110).
 * TTFT p50 of {250, 410} = 330 (linear interpolation between order statistics). */
Test(sim_cb, token_budget_mixes_prefill_and_decode)
{
    kw_cb_request r[2] = {{0, 100, 2}, {0, 100, 2}};
    kw_cb_config c = {.token_budget = 150, .chunk_tokens = 0, .max_seqs = 8};
    kw_cb_result o;
    int calls = 0;
    cr_assert_eq(kw_sim_cb_run(&o, r, 2, &c, linear, &calls), 0, "%s", kw_error_last());
    cr_expect_eq(o.iterations, 3);
    cr_expect_float_eq(o.ttft_p50_us, 330.0, 1e-9);
    cr_expect_float_eq(o.latency_p50_us, (410.0 + 520.0) / 2.0, 1e-9);
    cr_expect_float_eq(o.tpot_p50_us, (160.0 + 110.0) / 2.0, 1e-9);
    cr_expect_float_eq(o.tokens_per_s, 4.0 / 520e-6, 1e-6);
}

/* max_seqs 1: the second request waits for the first to leave.
 * it1 r1 prefill 10: t = 110; it2 decode: t = 220 (r1 done);
 * it3 r2 prefill: t = 330 (TTFT 330); it4: t = 440. Then an arrival at
 * 1000 finds the engine idle: it5 prefill t = 1110, it6 t = 1220. */
Test(sim_cb, admission_waits_and_idle_gaps)
{
    kw_cb_request r[3] = {{0, 10, 2}, {0, 10, 2}, {1000, 10, 2}};
    kw_cb_config c = {.token_budget = 1000, .chunk_tokens = 0, .max_seqs = 1};
    kw_cb_result o;
    int calls = 0;
    cr_assert_eq(kw_sim_cb_run(&o, r, 3, &c, linear, &calls), 0, "%s", kw_error_last());
    cr_expect_eq(o.iterations, 6);
    cr_expect_float_eq(o.ttft_p50_us, 110.0, 1e-9);         /* {110, 330, 110} sorted */
    cr_expect_float_eq(o.latency_p99_us, 440.0 - 0.02 * (440.0 - 220.0), 1e-9);
    cr_expect_float_eq(o.makespan_us, 1220.0, 1e-9);
}

Test(sim_cb, bad_input)
{
    kw_cb_request r[2] = {{10, 100, 2}, {0, 100, 2}};
    kw_cb_config c = {.token_budget = 100, .chunk_tokens = 0, .max_seqs = 1};
    kw_cb_result o;
    int calls = 0;
    cr_expect_eq(kw_sim_cb_run(&o, r, 2, &c, linear, &calls), KW_EINPUT); /* out of order */
    c.token_budget = 0;
    cr_expect_eq(kw_sim_cb_run(&o, r, 1, &c, linear, &calls), KW_EINPUT);
}

/* KV capacity 250 tokens, each request reserving prompt 100 + output 2 = 102:
 * two fit (204), the third waits until one leaves. Requests at 0:
 * it1 r1, r2 prefill 200: t = 300; it2 decode 2: t = 420, both done;
 * it3 r3 prefill 100: t = 620 (TTFT 620); it4: t = 730. With pages of 64
 * tokens each reserves 128: only one fits at a time. */
Test(sim_cb, kv_capacity_queues_admission)
{
    kw_cb_request r[3] = {{0, 100, 2}, {0, 100, 2}, {0, 100, 2}};
    kw_cb_config c = {.token_budget = 1000, .chunk_tokens = 0, .max_seqs = 8, .kv_tokens_max = 250};
    kw_cb_result o;
    int calls = 0;
    cr_assert_eq(kw_sim_cb_run(&o, r, 3, &c, linear, &calls), 0, "%s", kw_error_last());
    cr_expect_eq(o.iterations, 4);
    cr_expect_float_eq(o.ttft_p99_us, 300.0 + 0.98 * (620.0 - 300.0), 1e-9);
    cr_expect_float_eq(o.makespan_us, 730.0, 1e-9);
    c.page_tokens = 64;
    cr_assert_eq(kw_sim_cb_run(&o, r, 3, &c, linear, &calls), 0, "%s", kw_error_last());
    cr_expect_eq(o.iterations, 6); /* one at a time: 3 x (prefill + decode) */
    c.kv_tokens_max = 100; /* a request that can never fit is an input error */
    cr_expect_eq(kw_sim_cb_run(&o, r, 3, &c, linear, &calls), KW_EINPUT);
}
