/* kw_eval_cb.c - continuous batching in the model evaluator (see kw_eval_cb.h).
 *
 * Design choice: the scheduler (kw_sim_cb.c) knows nothing of the model; the
 * iteration time is stage 1's cost of the iteration's work on the whole
 * device: the prompt chunks (pf_seqs sequences of their mean chunk length)
 * and the decoding sequences (at their mean context) packed into one pass,
 * as TensorRT-LLM's in-flight batching and vLLM's chunked prefill run them:
 * every GEMM sees the iteration's tokens as one activation, so the weights
 * are read once, and each part's attention is its own kernel
 * (kw_cost_eval_mixed). Stated simplification: a chunk's attention covers
 * its own tokens, not the context computed in earlier chunks (an
 * underestimate for long prompts split into chunks). The KV
 * cache the device memory holds beside the weights bounds admission: a
 * request waits until its prompt and output fit (kw_sim_cb.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "kw_cost.h"
#include "kw_error.h"
#include "kw_eval_cb.h"
#include "kw_kv.h"
#include "kw_sim_cb.h"
#include "kw_simci.h"
#include "kw_tp.h"

#define KW_US_PER_S 1e6

typedef struct kw_cb_ctx {
    const kw_accel *a;
    const kw_block *b;
    const kw_shape *s;
    const kw_mapping *m;
    kw_cost cost;
} kw_cb_ctx;

static double kw_cb_iter(void *vctx, int pf_tokens, int pf_seqs, double pf_ctx, int dec,
                         double dec_ctx)
{
    kw_cb_ctx *c = vctx;
    (void)pf_ctx;
    kw_shape pf = *c->s, dc = *c->s;
    pf.phase = KW_PHASE_PREFILL;
    pf.batch = pf_seqs;
    pf.seq = pf_seqs > 0 ? (int)ceil((double)pf_tokens / pf_seqs) : 0;
    dc.phase = KW_PHASE_DECODE;
    dc.batch = dec;
    dc.seq = 1;
    dc.kv_len = (int)lround(dec_ctx);
    int rc;
    if (pf_tokens > 0 && dec > 0) /* one packed pass, the weights read once */
        rc = kw_cost_eval_mixed(&c->cost, c->a, c->b, &pf, &dc, c->m, c->a->cores);
    else if (pf_tokens > 0)
        rc = kw_cost_eval(&c->cost, c->a, c->b, &pf, c->m, 1, c->a->cores);
    else if (dec > 0)
        rc = kw_cost_eval(&c->cost, c->a, c->b, &dc, c->m, 1, c->a->cores);
    else
        return 0.0;
    return rc == 0 ? c->cost.latency_us : -1.0;
}

int kw_eval_cb(double *v, double *served_frac, const kw_accel *a, const kw_block *b,
               const kw_shape *s, const kw_mapping *m, double rate_per_s, int requests,
               uint64_t seed, double *lat_seq)
{
    *served_frac = 1.0;
    if (!(rate_per_s > 0.0) || requests < 1)
        return kw_error_set(KW_EINPUT, "shape '%s': continuous batching needs a rate and requests",
                            s->name);
    kw_cb_request *reqs = malloc(sizeof *reqs * (size_t)requests);
    kw_cb_ctx *ctx = malloc(sizeof *ctx);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    double *own = lat_seq ? NULL : malloc(sizeof *own * (size_t)requests);
    double *lat = lat_seq ? lat_seq : own;
    int rc = 0;
    if (!reqs || !ctx || !r || !lat) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for %d continuous-batching requests", requests);
        goto done;
    }
    gsl_rng_set(r, (unsigned long)seed);
    double mean_gap_us = KW_US_PER_S / (rate_per_s * s->streams), t = 0.0;
    for (int i = 0; i < requests; i++) {
        t += gsl_ran_exponential(r, mean_gap_us);
        reqs[i].arrival_us = t;
        reqs[i].prompt_tokens =
            s->seq + (int)gsl_rng_uniform_int(r, (unsigned long)(s->seq_max - s->seq + 1));
        reqs[i].output_tokens = s->output_tokens +
            (int)gsl_rng_uniform_int(r, (unsigned long)(s->output_max - s->output_tokens + 1));
    }
    kw_cb_config cfg = {
        .token_budget = m->token_budget > 0 ? m->token_budget : KW_CB_DEFAULT_TOKEN_BUDGET,
        .chunk_tokens = m->prefill_chunk_tokens,
        .max_seqs = m->max_seqs > 0 ? m->max_seqs : m->max_batch > 0 ? m->max_batch : 1,
        .page_tokens = m->kv_page_tokens,
    };
    if (a->dram_capacity_bytes > 0) {
        /* what the device memory holds beside the weights (this device's slice
         * under tensor parallelism), in KV tokens: the scheduler queues what
         * does not fit (kw_sim_cb.c) */
        kw_block tpb;
        const kw_block *db = b;
        if (m->tp_degree > 1) {
            if ((rc = kw_tp_split(&tpb, b, m->tp_degree, a)) != 0)
                goto done;
            db = &tpb;
        }
        kw_shape one = *s;
        one.phase = KW_PHASE_PREFILL;
        one.batch = 1;
        one.seq = 1;
        kw_mapping contiguous = *m;
        contiguous.kv_page_tokens = 0;
        double kv_tok, w;
        kw_kv_batch_bytes(&kv_tok, &w, db, &one, &contiguous, 1);
        double free_bytes = (double)a->dram_capacity_bytes - w;
        if (kv_tok > 0.0 && free_bytes <= 0.0) {
            rc = kw_error_set(KW_EINPUT, "shape '%s': the weights (%.2f GiB) fill the device "
                              "memory", s->name, w / (1024.0 * 1024.0 * 1024.0));
            goto done;
        }
        if (kv_tok > 0.0)
            cfg.kv_tokens_max = floor(free_bytes / kv_tok);
    }
    *ctx = (kw_cb_ctx){.a = a, .b = b, .s = s, .m = m};
    kw_cb_result o;
    if ((rc = kw_sim_cb_run_seq(&o, lat, reqs, requests, &cfg, kw_cb_iter, ctx)) != 0)
        goto done;
    /* the p95 and p99 intervals as the static simulation's (kw_simci.h:
     * order statistics joined with batch quantiles over the requests in
     * arrival order); until stop 43 both ends were the figure itself */
    double ci[2][2];
    for (int q = 0; q < 2; q++)
        if ((rc = kw_simci_interval(&ci[q][0], &ci[q][1], lat, (size_t)requests, q ? 0.99 : 0.95)) != 0)
            goto done;
    v[KW_M_P50_US] = o.latency_p50_us;
    v[KW_M_P95_US] = o.latency_p95_us;
    v[KW_M_P99_US] = o.latency_p99_us;
    v[KW_M_P999_US] = o.latency_p99_us;
    v[KW_M_MEAN_US] = o.latency_mean_us;
    v[KW_M_P_CI_LO_US] = ci[0][0];
    v[KW_M_P_CI_HI_US] = ci[0][1];
    v[KW_M_P99_CI_LO_US] = ci[1][0];
    v[KW_M_P99_CI_HI_US] = ci[1][1];
    v[KW_M_THROUGHPUT_RPS] = o.requests_per_s;
    v[KW_M_SAMPLES] = requests;
    v[KW_M_TTFT_P50_US] = o.ttft_p50_us;
    v[KW_M_TTFT_P99_US] = o.ttft_p99_us;
    v[KW_M_TPOT_P50_US] = o.tpot_p50_us;
    v[KW_M_TPOT_P99_US] = o.tpot_p99_us;
    v[KW_M_TOKENS_PER_S] = o.tokens_per_s;
    v[KW_M_TTFT_P99_CI_LO_US] = o.ttft_p99_ci_lo_us;
    v[KW_M_TTFT_P99_CI_HI_US] = o.ttft_p99_ci_hi_us;
    v[KW_M_TPOT_P99_CI_LO_US] = o.tpot_p99_ci_lo_us;
    v[KW_M_TPOT_P99_CI_HI_US] = o.tpot_p99_ci_hi_us;
    /* the rate an unsaturated server would show over this window (kw_eval_cb.h) */
    *served_frac = o.requests_per_s * (reqs[requests - 1].arrival_us - reqs[0].arrival_us +
                                       o.latency_p50_us) / (requests * KW_US_PER_S);
done:
    gsl_rng_free(r);
    free(ctx);
    free(reqs);
    free(own);
    return rc;
}
