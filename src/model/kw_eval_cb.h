/* kw_eval_cb.h - stage 2 for continuous-batching shapes: requests drawn from
 * the shape (Poisson arrivals, uniform prompt and output lengths), served by
 * the iteration-level scheduler of kw_sim_cb.c with each iteration's time from
 * stage 1 (kw_cost_eval), into the evaluator's metric vector. */
#ifndef KW_EVAL_CB_H
#define KW_EVAL_CB_H

#include <stdint.h>

#include "kw_metric.h"
#include "kw_model.h"

/* The vLLM default token budget with chunked prefill when token_budget is
 * not a knob of the space (vLLM engine arguments, max_num_batched_tokens
 * 2048 [U: the default has changed between releases]). */
#define KW_CB_DEFAULT_TOKEN_BUDGET 2048

/* A continuous-batching shape is saturated when it serves less than this
 * share of what an unsaturated server would: n requests over the arrival
 * span plus one median latency (the last arrivals drain after the span). */
#define KW_CB_SATURATED_FRACTION 0.95

/* Fill v's latency (request), TTFT, TPOT, throughput and sample metrics for
 * `requests` requests of shape s (s->continuous) at rate_per_s per stream.
 * KW_EINPUT/KW_EMODEL when an iteration cannot be costed (the candidate is
 * infeasible: e.g. its KV cache does not fit). *served_frac: requests served
 * per second over what an unsaturated server would (see below). Deterministic
 * in seed: the arrivals and lengths are drawn from it alone, request by
 * request, so two mappings with one seed serve the same requests (common
 * random numbers) and a run of n requests is the first n of a longer one.
 * lat_seq (NULL: none): the caller's `requests` doubles, each request's
 * latency in arrival order (kw_sim_cb_run_seq; the paired comparison). */
int kw_eval_cb(double *v, double *served_frac, const kw_accel *a, const kw_block *b,
               const kw_shape *s, const kw_mapping *m, double rate_per_s, int requests,
               uint64_t seed, double *lat_seq);

#endif
