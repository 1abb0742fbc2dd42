/* kw_eval.h - the model evaluator: the four stages (cost, serving simulation,
 * thermal window, quality drift) behind the search engine's kw_evaluator
 * interface, plus the full detail `knobwise eval` prints.
 *
 * Metric vector (kw_metrics.v): KW_M_* in kw_metric.h's table order, named by
 * kw_model_metric_names.
 */
#ifndef KW_EVAL_H
#define KW_EVAL_H

#include <signal.h>

#include "kw_cost.h"
#include "kw_metric.h"
#include "kw_model.h"

/* The metric vector's indices (KW_M_*) and names: the one metric table. */

typedef struct kw_model_opts {
    int sim_requests;      /* 0 = the space's sim_requests */
    int thermal;           /* also run the long thermal window */
    int drift;             /* run the drift stage (default on) */
    uint64_t seed;
    int no_contention;  /* counterfactual: unlimited DRAM bandwidth in the serving simulation */
    const char *trace_path; /* replayed arrivals (time_us,stream,shape) for the shapes it names */
    /* Borrow the traces (trace_path's and the shapes' own) that this evaluator,
     * made over the same cfg with the same trace_path, loaded, and its drift
     * cache (keyed by block, context, numerics and seed, so a shared entry is
     * the check either would run); it must outlive the new one. tune's
     * re-check evaluator: a big trace is loaded once, and a shape's drift data
     * is drawn once per run, not once per evaluator. */
    const struct kw_model_eval *borrow_from;
    /* Cancellation inside an evaluation (tune: SIGINT/SIGTERM, --time-limit),
     * read by the serving simulation every KW_SIM_CHECK_EVERY events; an
     * evaluation stopped by them returns KW_EINTERRUPTED. NULL: never. */
    const volatile sig_atomic_t *stop;  /* stop when *stop != 0 */
    const double *deadline_s;           /* stop once CLOCK_MONOTONIC passes *deadline_s (> 0) */
} kw_model_opts;

typedef struct kw_model_eval kw_model_eval;

/* An evaluator over cfg (borrowed, must outlive it). Thread-safe eval. */
int kw_eval_new(kw_model_eval **out, const kw_config *cfg, const kw_model_opts *opts);
void kw_eval_free(kw_model_eval *e);
/* The engine-facing interface (owned by e). */
const kw_evaluator *kw_eval_iface(const kw_model_eval *e);

/* The requests e's paired comparisons simulated (kw_evaluator.paired: a side read from
 * the kept ones counts nothing), for the bench's cost of the re-rank. */
long kw_eval_paired_requests(const kw_model_eval *e);

/* The simulated requests' latencies, sorted ascending, of the serving
 * simulation an evaluation of c on shape runs (the same arrivals, seed and
 * sample; without measurement noise): *out malloc'ed (caller frees), *n
 * samples. For plots of the distribution (the report's CDF). */
int kw_eval_latencies(double **out, int *n, const kw_model_eval *e, const kw_cand *c,
                      int shape);
/* The shape's own trace file (arrival="trace") when the evaluator replays it
 * (not covered by trace_path), else NULL: the files a run must hash. */
const char *kw_eval_shape_trace(const kw_model_eval *e, int shape);

/* Measured stage 1 (the measuring evaluator, src/run/kw_exec.c): what a worker
 * measured for one (candidate, shape), handed to the model's stages 2-4.
 * kernel_us > 0: one request's kernels took this long (unit=kernel); the
 *   model's kernel plan for every batch size is rescaled uniformly to it
 *   (each kernel's time and launch x f, its DRAM demand / f, f = measured /
 *   modelled one-request latency): the split between kernels and the growth
 *   with batch size stay the model's, the total is the measurement. The
 *   serving simulation, thermal window and drift check run on top.
 * request_us (n_request > 0): whole-request latencies the worker measured
 *   (unit=request): the latency percentiles come from them directly, no
 *   serving simulation.
 * quality_*: the worker's own numerics check, used instead of the emulated
 *   drift when finite (NAN: none given). The model's seeded noise_pct never
 *   applies to a measurement. */
typedef struct kw_stage1_measured {
    double kernel_us;
    const double *kernel_scale; /* unit=kernel: the samples' spread, sorted samples / median;
                                 * each simulated batch's time is drawn from it (kw_sim_opts
                                 * service_scale), so the tail carries the measured variability */
    int n_kernel_scale;
    const double *request_us; /* sorted ascending */
    int n_request;
    double quality_rel_rms, quality_cos;
} kw_stage1_measured;

/* One evaluation like the evaluator's eval(), with stage 1 measured (ms may
 * be NULL: the model alone). Thread-safe. */
int kw_eval_measured(const kw_model_eval *e, const kw_cand *c, int shape, int rep,
                     const kw_stage1_measured *ms, kw_metrics *out);

/* Derive a shape's per-stream arrival rate again from its load, with the
 * baseline's stage-1 times scaled by time_factor (measured / modelled), so
 * `load` means the same utilisation of the measured device (before any
 * evaluation: not thread-safe). Returns 1 when the rate came from the load and
 * was re-derived, 0 when it is given or replayed (left alone), or an error. */
int kw_eval_rescale_load(kw_model_eval *e, int shape, double time_factor);

/* Stage 1 alone for one request of shape `shape` (index into the space's shapes). */
int kw_eval_cost(kw_cost *out, const kw_model_eval *e, const kw_cand *c, int shape);

/* The bottleneck class names "contention" when DRAM contention takes more than
 * this share of service time, else "queueing" when the p95 queue wait exceeds
 * this fraction of the latency p95: either then dominates what a mapping knob
 * can change in stage 1. Thresholds of the classification, not model figures. */
#define KW_EVAL_CONTENTION_CLASS_PCT 25.0
#define KW_EVAL_QUEUEING_SHARE 0.5

/* What one evaluation's guards and bottleneck class are judged on
 * (kw_eval_judge); fields of a stage that did not run stay 0. */
typedef struct kw_eval_facts {
    int drift_failed;               /* the emulated drift check failed (kw_drift pass == 0) */
    double drift_cos, drift_rel_rms;
    int thermal_ran;                /* the long thermal window ran */
    double throttled_pct;           /* share of the window throttled (0 when not run) */
    double long_window_drift_pct;   /* long-window p99 over short-window p99, in % */
    int thermal_shutdown;
    int worker_quality;             /* a measuring worker gave its own numerics check */
    double worker_cos, worker_rel_rms;
    double fallback_pct;            /* share of kernels on the fallback path */
    double p99_us;
    int simulated;                  /* the serving simulation ran */
    int saturated;                  /* ... and arrivals exceeded what the mapping serves */
    double contention_pct, wait_p95_us, p95_us;
    kw_bound bound;                 /* stage 1's bound class of one request */
    /* --- appended by the llm area: continuous batching (kw_eval_cb.c) --- */
    int continuous;                 /* served by the iteration-level scheduler */
    double ttft_p99_us, tpot_p99_us;
} kw_eval_facts;

/* Sets out->guards (";"-separated names of the failing guards, "" when all
 * pass) and out->klass from the facts under the space's guards g. The one
 * home of the guard and bottleneck rules (kw_eval.c lists them). */
void kw_eval_judge(kw_metrics *out, const kw_guards *g, const kw_eval_facts *f);

#endif
