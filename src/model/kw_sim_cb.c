/* kw_sim_cb.c - continuous (iteration-level) batching (see kw_sim_cb.h).
 *
 * Design choice: a loop over iterations, not a heap of events: in iteration-
 * level scheduling (Orca, Yu et al., OSDI 2022, sec. 4.1) everything happens at
 * iteration boundaries, so the clock only moves by one iteration or to the
 * next arrival when nothing runs. The schedule of one iteration follows vLLM's
 * scheduler with chunked prefill (Agrawal et al., "Sarathi-Serve", OSDI 2024,
 * sec. 4: decodes first, then prompt chunks into the remaining token budget):
 *   1. admit arrived requests first come first served while fewer than
 *      max_seqs run and the KV cache can hold the request's whole prompt and
 *      output beside the running ones' (TensorRT-LLM's "guaranteed no
 *      evict" scheduling policy: a request that does not fit waits, no
 *      running one is preempted; a request that can never fit is an input
 *      error);
 *   2. every running sequence past its prompt decodes one token (the budget
 *      permitting, oldest first);
 *   3. the remaining budget goes to prompt chunks, oldest request first, each
 *      at most chunk_tokens;
 *   4. the iteration takes fn(...) microseconds; a sequence whose last prompt
 *      chunk ran emits its first token at the end (TTFT), a decoding sequence
 *      one more; a sequence with all its output tokens leaves.
 * TPOT = (completion - first token) / (output tokens - 1) (MLPerf Inference's
 * LLM latency metrics: TTFT and TPOT per request, judged at a percentile).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "kw_error.h"
#include "kw_sim_cb.h"
#include "kw_simci.h"

#define KW_US_PER_S 1e6

typedef struct kw_seq {
    int req;          /* index into reqs */
    int prefilled;    /* prompt tokens done */
    int generated;    /* output tokens emitted */
    double first_us;  /* time of the first output token */
} kw_seq;

/* KV-cache tokens a request reserves at admission: its whole prompt and output. */
static double kw_cb_reserve(const kw_cb_request *r, const kw_cb_config *cfg)
{
    double t = (double)r->prompt_tokens + r->output_tokens;
    return cfg->page_tokens > 0 ? ceil(t / cfg->page_tokens) * cfg->page_tokens : t;
}

static double kw_q(double *v, int n, double f)
{
    if (n == 0)
        return 0.0;
    return gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, f);
}

int kw_sim_cb_run(kw_cb_result *out, const kw_cb_request *reqs, int n, const kw_cb_config *cfg,
                  kw_cb_iter_fn fn, void *ctx)
{
    return kw_sim_cb_run_seq(out, NULL, reqs, n, cfg, fn, ctx);
}

int kw_sim_cb_run_seq(kw_cb_result *out, double *lat_seq, const kw_cb_request *reqs, int n,
                      const kw_cb_config *cfg, kw_cb_iter_fn fn, void *ctx)
{
    memset(out, 0, sizeof *out);
    if (n < 1 || cfg->token_budget < 1 || cfg->max_seqs < 1 || cfg->chunk_tokens < 0)
        return kw_error_set(KW_EINPUT, "continuous batching: needs requests, a token budget and "
                            "max_seqs >= 1 (got %d, %d, %d)", n, cfg->token_budget, cfg->max_seqs);
    for (int i = 0; i < n; i++)
        if (reqs[i].prompt_tokens < 1 || reqs[i].output_tokens < 1 ||
            (i > 0 && reqs[i].arrival_us < reqs[i - 1].arrival_us) || !(reqs[i].arrival_us >= 0.0))
            return kw_error_set(KW_EINPUT, "continuous batching: request %d needs prompt and "
                                "output tokens >= 1 and arrivals in order", i);
    int rc = 0;
    kw_seq *run = malloc(sizeof *run * (size_t)cfg->max_seqs);
    double *ttft = malloc(sizeof *ttft * (size_t)n), *tpot = malloc(sizeof *tpot * (size_t)n);
    double *lat = malloc(sizeof *lat * (size_t)n);
    if (!run || !ttft || !tpot || !lat) {
        rc = kw_error_set(KW_ENOMEM, "continuous batching: out of memory for %d requests", n);
        goto done;
    }
    for (int i = 0; i < n && cfg->kv_tokens_max > 0.0; i++)
        if (kw_cb_reserve(&reqs[i], cfg) > cfg->kv_tokens_max) {
            rc = kw_error_set(KW_EINPUT, "continuous batching: request %d needs %.0f KV-cache "
                              "tokens, the device holds %.0f", i, kw_cb_reserve(&reqs[i], cfg),
                              cfg->kv_tokens_max);
            goto done;
        }
    int next = 0, nrun = 0, done_n = 0, ntpot = 0;
    long tokens = 0;
    double reserved = 0.0; /* KV-cache tokens held by the running sequences */
    double t = reqs[0].arrival_us, last = t;
    while (done_n < n) {
        while (next < n && nrun < cfg->max_seqs && reqs[next].arrival_us <= t &&
               (cfg->kv_tokens_max <= 0.0 ||
                reserved + kw_cb_reserve(&reqs[next], cfg) <= cfg->kv_tokens_max)) {
            reserved += kw_cb_reserve(&reqs[next], cfg);
            run[nrun++] = (kw_seq){.req = next, .prefilled = 0, .generated = 0, .first_us = 0.0};
            next++;
        }
        if (nrun == 0) { /* idle until the next arrival */
            t = reqs[next].arrival_us;
            continue;
        }
        int budget = cfg->token_budget, dec = 0, pf_tokens = 0, pf_seqs = 0;
        double dec_ctx = 0.0, pf_ctx = 0.0;
        int chunk[1024];
        int *take = nrun <= 1024 ? chunk : malloc(sizeof *take * (size_t)nrun);
        if (!take) {
            rc = kw_error_set(KW_ENOMEM, "continuous batching: out of memory");
            goto done;
        }
        for (int i = 0; i < nrun; i++) {
            take[i] = 0;
            const kw_cb_request *r = &reqs[run[i].req];
            if (run[i].prefilled == r->prompt_tokens && budget > 0) {
                take[i] = 1;
                budget--;
                dec++;
                dec_ctx += r->prompt_tokens + run[i].generated;
            }
        }
        for (int i = 0; i < nrun && budget > 0; i++) {
            const kw_cb_request *r = &reqs[run[i].req];
            int left = r->prompt_tokens - run[i].prefilled;
            if (left == 0)
                continue;
            int c = left;
            if (cfg->chunk_tokens > 0 && c > cfg->chunk_tokens)
                c = cfg->chunk_tokens;
            if (c > budget)
                c = budget;
            take[i] = -c; /* negative: prompt tokens */
            budget -= c;
            pf_tokens += c;
            pf_seqs++;
            pf_ctx += run[i].prefilled + c;
        }
        double dt = fn(ctx, pf_tokens, pf_seqs, pf_seqs ? pf_ctx / pf_seqs : 0.0, dec,
                       dec ? dec_ctx / dec : 0.0);
        if (!(dt > 0.0)) {
            if (take != chunk)
                free(take);
            rc = kw_error_code() ? kw_error_code()
                                 : kw_error_set(KW_EINPUT, "continuous batching: an iteration "
                                                "took no time");
            goto done;
        }
        t += dt;
        out->iterations++;
        int keep = 0;
        for (int i = 0; i < nrun; i++) {
            kw_seq sq = run[i];
            const kw_cb_request *r = &reqs[sq.req];
            if (take[i] < 0) {
                sq.prefilled -= take[i];
                if (sq.prefilled == r->prompt_tokens) { /* the last chunk emits the first token */
                    sq.generated = 1;
                    sq.first_us = t;
                    ttft[sq.req] = t - r->arrival_us;
                    tokens++;
                }
            } else if (take[i] > 0) {
                sq.generated++;
                tokens++;
            }
            if (sq.prefilled == r->prompt_tokens && sq.generated >= r->output_tokens) {
                lat[done_n] = t - r->arrival_us;
                if (lat_seq)
                    lat_seq[sq.req] = lat[done_n];
                if (r->output_tokens > 1)
                    tpot[ntpot++] = (t - sq.first_us) / (r->output_tokens - 1);
                done_n++;
                last = t;
                reserved -= kw_cb_reserve(r, cfg);
                continue;
            }
            run[keep++] = sq;
        }
        nrun = keep;
        if (take != chunk)
            free(take);
    }
    /* the 95% intervals of TTFT and TPOT p99 as the request latency's
     * (kw_simci.h: order statistics joined with batch quantiles), from these
     * same samples in time order: TTFT by arrival, TPOT by completion */
    if ((rc = kw_simci_interval(&out->ttft_p99_ci_lo_us, &out->ttft_p99_ci_hi_us, ttft, (size_t)n,
                                0.99)) != 0)
        goto done;
    if (ntpot > 0 && (rc = kw_simci_interval(&out->tpot_p99_ci_lo_us, &out->tpot_p99_ci_hi_us, tpot,
                                             (size_t)ntpot, 0.99)) != 0)
        goto done;
    gsl_sort(ttft, 1, (size_t)n);
    gsl_sort(tpot, 1, (size_t)ntpot);
    gsl_sort(lat, 1, (size_t)n);
    out->ttft_p50_us = kw_q(ttft, n, 0.50);
    out->ttft_p95_us = kw_q(ttft, n, 0.95);
    out->ttft_p99_us = kw_q(ttft, n, 0.99);
    out->tpot_p50_us = kw_q(tpot, ntpot, 0.50);
    out->tpot_p95_us = kw_q(tpot, ntpot, 0.95);
    out->tpot_p99_us = kw_q(tpot, ntpot, 0.99);
    out->latency_p50_us = kw_q(lat, n, 0.50);
    out->latency_p95_us = kw_q(lat, n, 0.95);
    out->latency_p99_us = kw_q(lat, n, 0.99);
    out->latency_mean_us = gsl_stats_mean(lat, 1, (size_t)n);
    out->requests = n;
    out->makespan_us = last - reqs[0].arrival_us;
    if (out->makespan_us > 0.0) {
        out->tokens_per_s = tokens * KW_US_PER_S / out->makespan_us;
        out->requests_per_s = n * KW_US_PER_S / out->makespan_us;
    }
done:
    free(run);
    free(ttft);
    free(tpot);
    free(lat);
    return rc;
}
