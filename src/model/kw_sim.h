/* kw_sim.h - stage 2: discrete-event simulation of the serving runtime.
 *
 * Requests arrive per stream (Poisson, bursty on/off, or a replayed trace),
 * wait in the runtime queue, are merged into batches by the batcher
 * (max_batch, batch_timeout_us), placed on groups of cores_per_request cores
 * by the dispatcher (round_robin, least_loaded, stream_affinity), and served
 * kernel by kernel with the times of a stage-1 service table. Kernels running
 * at once on different groups share the accelerator's DRAM bandwidth (fluid
 * contention model). Out come tail latencies, the queue-wait profile,
 * fairness, imbalance, fallback rate, throughput and the time lost to
 * contention. The exact policies are documented at the top of kw_sim.c.
 *
 * Deterministic for a seed; allocates once per run; thread-safe (no globals).
 */
#ifndef KW_SIM_H
#define KW_SIM_H

#include <signal.h>
#include <stdint.h>

#include "kw_cost.h"
#include "kw_limits.h"
#include "kw_model.h"
#include "kw_trace.h"

/* KW_SIM_STREAM_MAX, KW_SIM_BATCH_MAX, KW_SIM_MAX_REQUESTS and the clock's
 * exact range: kw_limits.h (validate checks the same limits). */
#define KW_SIM_HIST_BINS 24     /* queue-wait histogram: [0,1) us, [2^(k-1), 2^k) us, >= 2^22 us */

typedef struct kw_sim_input {
    const kw_accel *accel;      /* cores, dram_bw_bytes_per_s (0 = unlimited), energies */
    const kw_shape *shape;      /* streams and arrival process */
    const kw_mapping *mapping;  /* max_batch, batch_timeout_us, placement, cores_per_request */
    const kw_cost *service;     /* service[r-1] = one batch of r requests on cores_per_request
                                 * cores, r = 1..mapping->max_batch (kw_cost_eval) */
    double rate_per_s;          /* per-stream arrival rate; 0 = shape->rate_per_s
                                 * (see kw_sim_rate_for_load for shapes given by load) */
    const kw_trace *trace;      /* arrivals when shape->arrival == KW_ARRIVAL_TRACE */
    int trace_shape;            /* replay only the trace rows of this shape index; -1 = all */
    double clock_factor;        /* device clock as a fraction of nominal (thermal); 0 = 1 */
} kw_sim_input;

typedef struct kw_sim_opts {
    int requests;               /* measured requests (sample size); 0 = 20000 */
    int warmup;                 /* first arrivals simulated but not measured */
    uint64_t seed;              /* all randomness derives from it (GSL taus2 streams) */
    int exp_service;            /* TEST ONLY: each batch's kernel times scaled by one
                                 * Exp(1) draw, so service ~ Exp(mean = table time) */
    const double *service_scale; /* measured service spread (kw_exec.c): sorted scales
                                 * (samples / their median); each batch's kernel times are
                                 * scaled by one draw, the empirical quantile at a uniform
                                 * (inverse transform: candidates share quantiles, common
                                 * random numbers); NULL / 0: every batch at the table time */
    int n_service_scale;
    int no_contention;          /* counterfactual: unlimited DRAM bandwidth */
    int keep_latencies;         /* also return the sorted latencies (lat_sorted_us) */
    int keep_order;             /* also return the latencies in arrival order (lat_seq_us):
                                 * two mappings simulated with the same seed and sample see
                                 * the same arrivals, so element i of both is one request
                                 * (the paired comparison, kw_simci_paired) */
    /* Cancellation of a long run (tune's SIGINT/SIGTERM and --time-limit):
     * checked every KW_SIM_CHECK_EVERY events; the run then returns
     * KW_EINTERRUPTED. NULL / 0: never. */
    const volatile sig_atomic_t *stop; /* stop when *stop != 0 */
    double deadline_s;          /* stop once CLOCK_MONOTONIC passes this (seconds) */
} kw_sim_opts;

#define KW_SIM_CHECK_EVERY 65536 /* events between cancellation checks (~20 ms of work) */

typedef struct kw_sim_stream {
    int samples;                /* measured requests of this stream */
    double mean_us, p50_us, p95_us, p99_us;
} kw_sim_stream;

typedef struct kw_sim_result {
    int samples;                /* measured requests */
    /* latency = completion - arrival */
    double mean_us, p50_us, p95_us, p99_us, p999_us, max_us;
    double p95_ci_lo_us, p95_ci_hi_us;  /* 95% intervals: order statistics joined with batch
                                         * quantiles (kw_simci.h: honest under correlation) */
    double p99_ci_lo_us, p99_ci_hi_us;
    /* queue wait = start of service - arrival */
    double wait_mean_us, wait_p50_us, wait_p95_us, wait_p99_us;
    uint64_t wait_hist[KW_SIM_HIST_BINS]; /* measured requests per bin, edges by kw_sim_hist_edge_us */
    int n_streams;
    kw_sim_stream stream[KW_SIM_STREAM_MAX];
    double fairness;            /* Jain's index of per-stream p95 (streams with samples) */
    int n_groups;               /* cores / cores_per_request */
    double imbalance;           /* max / mean busy time over groups (1 = balanced) */
    double utilisation;         /* busy time / (groups x window) */
    double fallback_pct;        /* measured requests whose batch ran a fallback kernel */
    double mean_batch;          /* requests per batch (batches started in the window) */
    double throughput_rps;      /* measured requests / (last completion - first measured arrival) */
    double contention_pct;      /* kernel time lost to DRAM contention / busy time, % */
    double contention_lost_us;  /* sum over kernels of the extra time contention cost them */
    double contended_us;        /* wall time with demand above bandwidth */
    double window_us;           /* measurement window: first measured arrival to end */
    /* activity for the power model (kw_thermal), averaged over the window */
    double flop_rate_per_s;     /* executed FLOPs, weighted by element bytes / 2 (bf16 = 1) */
    double dram_rate_bytes_per_s;
    double *lat_sorted_us;      /* [samples] when opts.keep_latencies; free with kw_sim_result_clear */
    double *lat_seq_us;         /* [samples] in arrival order when opts.keep_order (same values) */
    /* Saturation (kw_sim.c "Saturation"): can the mapping keep up at all? */
    double offered_rps;         /* measured arrivals per second over their span */
    double capacity_rps;        /* uncontended: groups x max over r <= max_batch of r / T(r) */
    double offered_util;        /* offered / capacity of the busiest queue's groups (>= 1: cannot keep up) */
    double drain_us;            /* last completion - last arrival: the backlog left to drain */
    int saturated;              /* offered_util >= 1, or the backlog grew over the window */
} kw_sim_result;

/* Simulate. `out` is fully overwritten. Returns 0, KW_EINPUT (bad input or
 * options, message says which; also arrivals the clock cannot represent,
 * kw_limits.h), KW_ENOMEM, KW_EINTERRUPTED (opts->stop or opts->deadline_s).
 * Cost: O(N (log streams + k log groups)) for N requests of k kernels, plus
 * O(N) statistics (radix sort); one allocation pass per run, none per event. */
int kw_sim_run(kw_sim_result *out, const kw_sim_input *in, const kw_sim_opts *opts);

/* Free what kw_sim_run allocated in r (lat_sorted_us, lat_seq_us); NULL ok. */
void kw_sim_result_clear(kw_sim_result *r);

/* Lower edge of queue-wait histogram bin k (0 for k = 0, else 2^(k-1) us). */
double kw_sim_hist_edge_us(int k);

/* Per-stream arrival rate that puts the accelerator at utilisation s->load
 * under the BASELINE mapping m whose service table is service[0..m->max_batch):
 *   capacity = (cores / cores_per_request) x max_batch / T(max_batch)   requests/s
 * (every group busy with full batches; T = sum of the batch's kernel times),
 *   rate = load x capacity / streams / duty,
 * where duty = 1 for Poisson and trace, and burst_factor x on / (on + off) for
 * bursty shapes (whose rate is burst_factor x rate while on, 0 while off), so
 * the MEAN offered load is `load`. Contention is not counted (uncontended
 * capacity). A shape given by rate_per_s (load 0) returns that rate.
 * Returns 0 or KW_EINPUT. */
int kw_sim_rate_for_load(double *rate_per_s, const kw_accel *a, const kw_shape *s,
                         const kw_mapping *m, const kw_cost *service);

#endif
