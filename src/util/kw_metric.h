/* kw_metric.h - the one metric table: every metric knobwise writes, with its
 * name (also its CSV column header and its name in journals and results.xml),
 * unit, fixed decimals, which CSV files carry it, which way is better, and
 * what it means.
 *
 * One home (STYLE: "tables over literals"): the model evaluator's metric
 * vector (KW_M_*), the measuring evaluator's additions (KW_X_* in
 * kw_exec.h, rows after the model's here), the results writers, the report
 * and the CLI all read this table; adding a metric is one row below. The
 * rows are an X-macro so the enum, the name array and the table cannot fall
 * out of step (rejected: a hand-kept enum beside a string array, which is
 * what drifted into decimals defined in three places).
 *
 * Columns of a row:
 *   ID        suffix of the KW_M_* index
 *   NAME      metric name, CSV column header
 *   UNIT      unit as printed ("" when dimensionless)
 *   DEC       decimals every writer uses for it (results.xml, CSV, eval)
 *   CSV       KW_METRIC_CSV_CONTRACT: a column of the output contract (ranked.csv
 *             and `eval --format csv`, in table order); KW_METRIC_CSV_EVAL: a
 *             column `eval --format csv` adds after the guards (table order);
 *             KW_METRIC_CSV_NONE: in no CSV
 *   BETTER    KW_BETTER_LOWER / KW_BETTER_HIGHER / KW_BETTER_NONE (a count or
 *             bookkeeping value with no direction)
 *   MEANING   one line for a reader
 */
#ifndef KW_METRIC_H
#define KW_METRIC_H

typedef enum kw_better { KW_BETTER_LOWER = -1, KW_BETTER_NONE = 0, KW_BETTER_HIGHER = 1 } kw_better;

typedef enum kw_metric_csv {
    KW_METRIC_CSV_NONE = 0,
    KW_METRIC_CSV_CONTRACT, /* ranked.csv and eval --format csv, before the guards column */
    KW_METRIC_CSV_EVAL,     /* eval --format csv only, after the guards column */
} kw_metric_csv;

/* The model evaluator's metric vector, in this order (kw_eval.c fills it). */
#define KW_METRIC_MODEL_ROWS(X)                                                                           \
    X(P50_US, "p50_us", "us", 3, KW_METRIC_CSV_CONTRACT, KW_BETTER_LOWER, "median request latency")      \
    X(P95_US, "p95_us", "us", 3, KW_METRIC_CSV_CONTRACT, KW_BETTER_LOWER, "95th percentile latency")     \
    X(P99_US, "p99_us", "us", 3, KW_METRIC_CSV_CONTRACT, KW_BETTER_LOWER, "99th percentile latency")     \
    X(P999_US, "p999_us", "us", 3, KW_METRIC_CSV_EVAL, KW_BETTER_LOWER, "99.9th percentile latency")     \
    X(MEAN_US, "mean_us", "us", 3, KW_METRIC_CSV_EVAL, KW_BETTER_LOWER, "mean request latency")          \
    X(LAUNCHES, "launches", "", 0, KW_METRIC_CSV_CONTRACT, KW_BETTER_LOWER, "kernel launches per request") \
    X(REUSE_RATIO, "reuse_ratio", "", 4, KW_METRIC_CSV_CONTRACT, KW_BETTER_HIGHER,                        \
      "operand bytes per DRAM byte")                                                                     \
    X(DRAM_MB, "dram_mb", "MB", 4, KW_METRIC_CSV_CONTRACT, KW_BETTER_LOWER, "DRAM traffic per request")  \
    X(QUALITY_COS, "quality_cos", "", 6, KW_METRIC_CSV_CONTRACT, KW_BETTER_HIGHER,                        \
      "cosine similarity to the fp32 reference")                                                         \
    X(QUALITY_REL_RMS, "quality_rel_rms", "", 9, KW_METRIC_CSV_CONTRACT, KW_BETTER_LOWER,                 \
      "relative RMS error to the fp32 reference (reaches 1e-6 and below)")                               \
    X(THROTTLE_PCT, "throttle_pct", "%", 3, KW_METRIC_CSV_CONTRACT, KW_BETTER_LOWER,                      \
      "share of the thermal window spent throttled")                                                     \
    X(FALLBACK_PCT, "fallback_pct", "%", 3, KW_METRIC_CSV_CONTRACT, KW_BETTER_LOWER,                      \
      "share of kernels that fell back to a slower path")                                                \
    X(LATENCY_US, "latency_us", "us", 3, KW_METRIC_CSV_EVAL, KW_BETTER_LOWER,                             \
      "stage-1 latency of one request alone")                                                            \
    X(LAUNCH_US, "launch_us", "us", 3, KW_METRIC_CSV_EVAL, KW_BETTER_LOWER, "launch overhead in that latency") \
    X(CONTENTION_PCT, "contention_pct", "%", 3, KW_METRIC_CSV_EVAL, KW_BETTER_LOWER,                      \
      "share of service time lost to DRAM contention")                                                   \
    X(QUEUE_P95_US, "queue_p95_us", "us", 3, KW_METRIC_CSV_EVAL, KW_BETTER_LOWER, "p95 of queue wait")   \
    X(FAIRNESS, "fairness", "", 4, KW_METRIC_CSV_EVAL, KW_BETTER_HIGHER, "Jain's index of per-stream p95") \
    X(IMBALANCE, "imbalance", "", 4, KW_METRIC_CSV_EVAL, KW_BETTER_LOWER, "core busy time, max over mean") \
    X(THROUGHPUT_RPS, "throughput_rps", "req/s", 4, KW_METRIC_CSV_EVAL, KW_BETTER_HIGHER,                 \
      "requests served per second")                                                                      \
    X(LONG_P99_US, "long_p99_us", "us", 3, KW_METRIC_CSV_EVAL, KW_BETTER_LOWER,                           \
      "long-window (thermal) p99; 0 when not simulated")                                                 \
    X(STEADY_TEMP_C, "steady_temp_c", "C", 3, KW_METRIC_CSV_NONE, KW_BETTER_LOWER,                        \
      "steady-state junction temperature")                                                               \
    X(SAMPLES, "samples", "", 0, KW_METRIC_CSV_EVAL, KW_BETTER_NONE, "requests simulated")               \
    X(P_CI_LO_US, "p_ci_lo_us", "us", 3, KW_METRIC_CSV_EVAL, KW_BETTER_NONE,                              \
      "95% order-statistic interval of p95, low end")                                                    \
    X(P_CI_HI_US, "p_ci_hi_us", "us", 3, KW_METRIC_CSV_EVAL, KW_BETTER_NONE,                              \
      "95% order-statistic interval of p95, high end")                                                   \
    X(QUALITY_MAX_ABS, "quality_max_abs", "", 9, KW_METRIC_CSV_NONE, KW_BETTER_LOWER,                     \
      "largest absolute error to the fp32 reference")                                                    \
    X(DRIFT_FALLBACK, "drift_fallback", "", 4, KW_METRIC_CSV_NONE, KW_BETTER_NONE,                        \
      "failing drift: kw_prec of the lowest passing precision; -1 none")                                 \
    X(ENERGY_MJ, "energy_mj", "mJ", 4, KW_METRIC_CSV_NONE, KW_BETTER_LOWER,                               \
      "stage-1 energy of one request (0 if not modelled)")                                               \
    X(P99_CI_LO_US, "p99_ci_lo_us", "us", 3, KW_METRIC_CSV_NONE, KW_BETTER_NONE,                          \
      "95% interval of p99, low end")                                                                    \
    X(P99_CI_HI_US, "p99_ci_hi_us", "us", 3, KW_METRIC_CSV_NONE, KW_BETTER_NONE,                          \
      "95% interval of p99, high end")                                                                   \
    X(TTFT_P50_US, "ttft_p50_us", "us", 3, KW_METRIC_CSV_EVAL, KW_BETTER_LOWER,                           \
      "continuous batching: median time to first token (0 for other shapes)")                            \
    X(TTFT_P99_US, "ttft_p99_us", "us", 3, KW_METRIC_CSV_EVAL, KW_BETTER_LOWER,                           \
      "continuous batching: p99 time to first token")                                                    \
    X(TPOT_P50_US, "tpot_p50_us", "us", 3, KW_METRIC_CSV_EVAL, KW_BETTER_LOWER,                           \
      "continuous batching: median time per output token")                                               \
    X(TPOT_P99_US, "tpot_p99_us", "us", 3, KW_METRIC_CSV_EVAL, KW_BETTER_LOWER,                           \
      "continuous batching: p99 time per output token")                                                  \
    X(TOKENS_PER_S, "tokens_per_s", "tok/s", 2, KW_METRIC_CSV_EVAL, KW_BETTER_HIGHER,                     \
      "continuous batching: output tokens per second")                                                   \
    X(TTFT_P99_CI_LO_US, "ttft_p99_ci_lo_us", "us", 3, KW_METRIC_CSV_NONE, KW_BETTER_NONE,                \
      "continuous batching: 95% interval of TTFT p99, low end (stop 48)")                                \
    X(TTFT_P99_CI_HI_US, "ttft_p99_ci_hi_us", "us", 3, KW_METRIC_CSV_NONE, KW_BETTER_NONE,                \
      "continuous batching: 95% interval of TTFT p99, high end")                                         \
    X(TPOT_P99_CI_LO_US, "tpot_p99_ci_lo_us", "us", 3, KW_METRIC_CSV_NONE, KW_BETTER_NONE,                \
      "continuous batching: 95% interval of TPOT p99, low end")                                          \
    X(TPOT_P99_CI_HI_US, "tpot_p99_ci_hi_us", "us", 3, KW_METRIC_CSV_NONE, KW_BETTER_NONE,                \
      "continuous batching: 95% interval of TPOT p99, high end")

/* What the measuring evaluator adds after the model's vector (kw_exec.h's
 * KW_X_* indices, in this order). */
#define KW_METRIC_MEASURED_ROWS(X)                                                                        \
    X(MEASURED_LO_US, "measured_lo_us", "us", 3, KW_METRIC_CSV_NONE, KW_BETTER_NONE,                      \
      "95% distribution-free interval of the median sample, low end")                                    \
    X(MEASURED_HI_US, "measured_hi_us", "us", 3, KW_METRIC_CSV_NONE, KW_BETTER_NONE,                      \
      "95% distribution-free interval of the median sample, high end")                                   \
    X(MEASURED_SAMPLES, "measured_samples", "", 0, KW_METRIC_CSV_NONE, KW_BETTER_NONE,                    \
      "samples kept by the outlier policy")

#define KW_METRIC_ENUM_(id, name, unit, dec, csv, better, meaning) KW_M_##id,
enum { KW_METRIC_MODEL_ROWS(KW_METRIC_ENUM_) KW_M_COUNT };
#undef KW_METRIC_ENUM_

typedef struct kw_metric_info {
    const char *name;    /* metric name and CSV column header */
    const char *unit;    /* "" when dimensionless */
    int decimals;        /* fixed decimals in every writer */
    kw_metric_csv csv;   /* which CSV files carry it */
    kw_better better;    /* which way is better */
    const char *meaning; /* one line for a reader */
} kw_metric_info;

/* Every row: the model's KW_M_COUNT first (index = KW_M_*), then the
 * measured ones; kw_metric_count rows in all. */
extern const kw_metric_info kw_metric_table[];
extern const int kw_metric_count;

/* The model's metric names by KW_M_* index (the evaluator's metric_names). */
extern const char *const kw_model_metric_names[KW_M_COUNT];

/* The name of model metric KW_M_id, for lookups by name in a run summary
 * whose metrics a journal header named. */
#define KW_METRIC_NAME(idx) (kw_model_metric_names[(idx)])

/* The row of a metric by name; NULL when it is none of the table's (a
 * journal from another evaluator may name metrics this build does not). */
const kw_metric_info *kw_metric_find(const char *name);

/* Decimals for a metric by name: the table's, else by the name's unit
 * suffix (_us, _pct, _c: 3; otherwise 4), so an unknown metric still reads
 * like its kin. */
int kw_metric_decimals(const char *name);

#endif
