/* kw_run.h - what a run folder's journal records about how the run was made:
 * the one table of its attribute keys (the journal's A records), written by
 * tune and read back by resume, the run-folder reader, re-measurement, verify
 * and the results writer. No other file spells an attribute key: a renamed
 * or added attribute is one row here (STYLE: tables over literals; before,
 * each key was a string literal in the writer and in three readers).
 *
 * The start of issue 13's run module (kw_run_create / kw_run_resume /
 * kw_run_open owning the folder's layout, the input hash, the engine call and
 * the evidence phase are not built yet): the attribute table is the part the
 * readers share today.
 */
#ifndef KW_RUN_H
#define KW_RUN_H

#include "kw_journal.h"

/* The attributes, in the order tune records them (A records). */
#define KW_RUN_ATTR_ROWS(X)                                                                    \
    X(OWNER, "owner", "who answers for the recommendation")                                    \
    X(SPACE, "space", "the space file as given (\"\" for the embedded default)")               \
    X(ACCEL, "accel", "the accelerator file as given, or \"\"")                                \
    X(WORKLOAD, "workload", "the workload file as given, or \"\"")                             \
    X(TRACE, "trace", "the --trace file, or \"\"")                                             \
    X(MODEL_SEED, "model_seed", "the evaluator's seed (the search's seed when absent)")        \
    X(SIM_REQUESTS, "sim_requests", "--requests (0: the space's sim_requests)")                \
    X(THERMAL, "thermal", "1 when the long thermal window was simulated")                      \
    X(DRIFT, "drift", "1 when the drift stage ran")                                            \
    X(EVALUATOR, "evaluator", "the worker command of a measured run, \"\" for the model")      \
    X(EXEC_TIMEOUT_S, "exec_timeout_s", "--timeout (0: the space's)")                          \
    X(EXEC_RATE_SCALE, "exec_rate_scale", "per-shape arrival-rate scales of a measured run")   \
    X(SCREEN, "screen", "--screen K (0: every candidate measured)")                             \
    X(ESTIMATE, "estimate", "1: multi-fidelity screening by the cheap estimate (absent: 0)")   \
    X(FROZEN, "frozen", "knobs the block cannot use, never changed (comma list)")

#define KW_RUN_ATTR_ENUM_(id, key, meaning) KW_RUN_##id,
typedef enum kw_run_attr { KW_RUN_ATTR_ROWS(KW_RUN_ATTR_ENUM_) KW_RUN_ATTR_COUNT } kw_run_attr;
#undef KW_RUN_ATTR_ENUM_

/* The key of attribute a as the journal records it. */
const char *kw_run_attr_key(kw_run_attr a);

/* The value of attribute a in j's header, or NULL when not recorded. */
const char *kw_run_attr_get(const kw_journal *j, kw_run_attr a);

#endif
