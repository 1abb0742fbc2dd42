/* kw_sim_cb.h - continuous (iteration-level) batching of LLM requests: the
 * serving simulation of engines such as vLLM and SGLang, beside the static
 * batcher of kw_sim.c (which stays for non-LLM blocks).
 *
 * Each iteration runs one forward pass over the running sequences: every
 * decoding sequence adds one token, prefilling sequences add a chunk of their
 * prompt, up to a token budget; requests join and leave between iterations.
 * The iteration's time comes from a callback (the cost model, or a closed
 * form in tests). Out come time to first token (TTFT), time per output token
 * (TPOT), request latency, each with p50/p95/p99, and throughput.
 */
#ifndef KW_SIM_CB_H
#define KW_SIM_CB_H

typedef struct kw_cb_request {
    double arrival_us;
    int prompt_tokens;    /* >= 1 */
    int output_tokens;    /* >= 1: the first comes with the last prefill chunk */
} kw_cb_request;

typedef struct kw_cb_config {
    int token_budget;     /* most tokens one iteration processes (prefill + decode); >= 1 */
    int chunk_tokens;     /* most prompt tokens of one request per iteration; 0 = the whole prompt */
    int max_seqs;         /* most sequences running at once; >= 1 */
    double kv_tokens_max; /* KV-cache tokens the device holds; 0 = not a bound. A request is
                           * admitted only when its whole prompt + output fits beside the
                           * running ones' (guaranteed no eviction); else it queues */
    int page_tokens;      /* the reservation rounds up to whole pages (0 = contiguous) */
} kw_cb_config;

/* One iteration's time in microseconds: prefill_tokens prompt tokens (of
 * prefill_seqs sequences, whose chunks attend to prefill_ctx tokens on
 * average) and decode_seqs decoding sequences at decode_ctx tokens of
 * context on average. Returns a time > 0, or a negative value to fail (the
 * callback has set kw_error). */
typedef double (*kw_cb_iter_fn)(void *ctx, int prefill_tokens, int prefill_seqs, double prefill_ctx,
                                int decode_seqs, double decode_ctx);

typedef struct kw_cb_result {
    double ttft_p50_us, ttft_p95_us, ttft_p99_us;
    double tpot_p50_us, tpot_p95_us, tpot_p99_us;  /* over requests with >= 2 output tokens */
    /* 95% intervals of ttft_p99_us and tpot_p99_us (kw_simci_interval over
     * the same requests, TTFT in arrival order, TPOT in completion order;
     * stop 48: the rollback ceilings' own margins); 0 where no sample */
    double ttft_p99_ci_lo_us, ttft_p99_ci_hi_us, tpot_p99_ci_lo_us, tpot_p99_ci_hi_us;
    double latency_p50_us, latency_p95_us, latency_p99_us, latency_mean_us;
    double tokens_per_s;        /* output tokens over the makespan */
    double requests_per_s;
    double makespan_us;         /* first arrival to last completion */
    long iterations;
    int requests;
} kw_cb_result;

/* Simulate reqs[0..n) (sorted by arrival). Deterministic: no randomness here
 * (arrivals and lengths are the caller's draws). Returns 0, KW_EINPUT for a bad
 * request or configuration, KW_ENOMEM, or the callback's failure. */
int kw_sim_cb_run(kw_cb_result *out, const kw_cb_request *reqs, int n, const kw_cb_config *cfg,
                  kw_cb_iter_fn fn, void *ctx);

/* kw_sim_cb_run, and each request's latency by its index: lat_seq[i] (the
 * caller's n doubles) is request i's completion minus its arrival, so two
 * runs on the same requests (two mappings, the same arrivals and lengths)
 * give element i of both for one request: the paired comparison's input
 * (kw_simci_paired). lat_seq NULL: kw_sim_cb_run. */
int kw_sim_cb_run_seq(kw_cb_result *out, double *lat_seq, const kw_cb_request *reqs, int n,
                      const kw_cb_config *cfg, kw_cb_iter_fn fn, void *ctx);

#endif
