/* kw_run.h - a tuning run: the module that owns a run folder from its first
 * byte to its result files.
 *
 * Table of contents:
 *   KW_RUN_ATTR_ROWS      the one table of the attributes a journal records
 *                         about how the run was made (A records): no other file
 *                         spells an attribute key
 *   KW_RUN_INPUT_*        the names of its input records (I records)
 *   kw_run_load_config    the inputs by name (a shipped space, files, or the
 *                         embedded default), as every verb loads them
 *   kw_run_create         a new run: inputs loaded and hashed (kw_hash, the one
 *                         input hash), the evaluator built, the run folder
 *                         made and locked, nothing written before every input
 *                         is checked
 *   kw_run_resume         the same from a run folder's journal: its recorded
 *                         attributes rebuild the evaluator; an input whose
 *                         hash changed is refused
 *   kw_run_open           a run folder opened read-only (audit, verify,
 *                         report, recommend, bisect): its journal, its summary
 *                         and on request its inputs (kw_rundir.h)
 *   kw_run_exec           the engine call (search/kw_engine.h), then the
 *                         evidence phase (kw_evidence.h) and the result files
 *   kw_run_results        the result files of a run folder from its journal
 *   kw_run_serve          an MPI rank other than 0: the evaluator rank 0's run
 *                         describes, serving its evaluations
 *
 * Design choice: one process, one evaluation pool (search/kw_evpool.h): the
 * run starts it with the engine's thread count, the engine's rounds run on it
 * and so do the evidence phase's evaluations after the search (re-checks,
 * portability, the recommendation's missing neighbours) and those of the
 * periodic best-so-far results; the results writers only render a summary
 * (kw_results.h). The module never prints: a failure is a negative KW_E*
 * code with its message (kw_error_last); `*usage` tells the caller that it
 * was a usage error (the command line's fault, "try --help"). Rejected: the
 * CLI verb as the run's owner (before: cli_tune.c made the folder, hashed
 * the inputs, drove the engine and the re-checks, and the results writers
 * started their own threads).
 */
#ifndef KW_RUN_H
#define KW_RUN_H

#include <signal.h>
#include <stdint.h>

#include "kw_engine.h"
#include "kw_journal.h"
#include "kw_model.h"
#include "kw_runfolder.h"

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

/* The input records (the journal's I records): the files a run's results
 * depend on, by name, each with its kw_hash. */
#define KW_RUN_INPUT_SPACE "space"
#define KW_RUN_INPUT_ACCEL "accelerator"
#define KW_RUN_INPUT_WORKLOAD "workload"
#define KW_RUN_INPUT_TRACE "trace"               /* the --trace file */
#define KW_RUN_INPUT_SHAPE_TRACE "shape_trace."  /* + N: space shape N's own trace */
#define KW_RUN_INPUT_WORKER "worker"             /* a measuring evaluator's program */

/* The run folder's layout (its file names): kw_runfolder.h, KW_RUNFOLDER_*. */

/* The inputs as a verb names them: space NULL the embedded default (accel
 * and workload override its references), else a file or a shipped space's
 * name (kw_shipped.h). KW_EINPUT with FILE:LINE messages, or the loader's
 * other errors. *out owned by the caller (kw_load_config_free). */
int kw_run_load_config(kw_config **out, const char *space, const char *accel,
                       const char *workload);

typedef struct kw_run kw_run;

/* A new run: `knobwise tune`'s options. */
typedef struct kw_run_opts {
    const char *space, *accel, *workload, *trace; /* NULL: the embedded default's */
    const char *out;             /* run folder (NULL: results/tune-DATE-TIME) */
    const char *owner;
    const char *const *shapes;   /* shape names to tune (n_shapes 0: every shape) */
    int n_shapes;
    kw_strategy strategy;
    kw_policy policy;
    long budget, requests;
    double time_limit_s;
    const char *metric;          /* "p95_us" or "p99_us" */
    const char *evaluator;       /* model|exec:CMD (NULL: the space's) */
    double timeout_s;            /* the worker's per-candidate timeout (0: the space's) */
    long screen;                 /* measure only the model's best K per round (0: off) */
    int no_estimate;             /* no multi-fidelity screening */
    long pair;                   /* the pairing's evaluations per shape (0: KW_PAIR_DEFAULT) */
    int no_pair;                 /* no pairing (--pair 0) */
    int rerank;                  /* the re-rank's K (0: KW_RERANK_DEFAULT; kw_engine_opts.rerank) */
    int no_rerank;               /* no re-rank (--rerank off) */
    uint64_t seed;
    int threads, repeats, tabu, probes, thermal;
} kw_run_opts;

struct kw_run_outcome;

/* What a run does while it runs: set by the caller, read by kw_run_exec. */
typedef struct kw_run_ctl {
    /* set by the caller's SIGINT/SIGTERM handler: the engine stops between
     * rounds and the model inside an evaluation; the evidence phase is then
     * not run, or cancelled when it is running, and the files say what the
     * journal proves. The caller's handler must stay set until kw_run_exec
     * returns, so a signal while the files are written does not kill it. */
    volatile sig_atomic_t *stop;
    double every_s;              /* best-so-far results rewritten this often (0: only at the end) */
    /* called by the engine after each round (kw_progress); may be NULL */
    void (*progress)(void *ud, const kw_run *r, const kw_progress *p);
    /* the best-so-far results could not be rewritten (said once; the run goes on) */
    void (*rewrite_failed)(void *ud, const kw_run *r);
    /* the engine has returned (out->sum, out->engine_rc set); the evidence
     * phase and the files follow */
    void (*engine_done)(void *ud, const kw_run *r, const struct kw_run_outcome *out);
    /* the evidence phase's progress (may be NULL): after each slice of its
     * evaluations, `what` its part ("portability", "re-checks",
     * "neighbours"), done of total evaluations of that part */
    void (*evidence)(void *ud, const kw_run *r, const char *what, long done, long total);
    /* the re-rank's progress (may be NULL): from inside a round, before each of
     * a shape's re-rank comparisons (kw_engine_opts.rerank_progress,
     * p->rerank_total > 0); it may only draw: the round is not journalled yet,
     * and neither the results nor the live file are rewritten from here */
    void (*rerank)(void *ud, const kw_run *r, const kw_progress *p);
    void *ud;
} kw_run_ctl;

/* Check every input and option, build the evaluator, then make and lock the
 * run folder: on failure nothing is written. *usage (may be NULL) is 1 when
 * the failure is the command line's (an unknown shape, an option the run
 * cannot take). stop: as kw_run_ctl.stop (the model reads it from the
 * start). *out owned by the caller (kw_run_free). */
int kw_run_create(kw_run **out, int *usage, const kw_run_opts *o, volatile sig_atomic_t *stop);

/* Reopen run folder dir to continue it: lock, load its journal, rebuild the
 * evaluator from its attributes, refuse a changed input (named by its file,
 * KW_EINPUT). Only threads and time_limit_s are the caller's. */
int kw_run_resume(kw_run **out, int *usage, const char *dir, int threads, double time_limit_s,
                  volatile sig_atomic_t *stop);

void kw_run_free(kw_run *r);

/* How kw_run_exec ended. */
typedef struct kw_run_outcome {
    int engine_rc;               /* 0 done or paused by the time limit, KW_EINTERRUPTED */
    int signal;                  /* the stop flag's value once the files were written */
    int evidence_cut;            /* 1: the time limit passed before the evidence phase
                                  * ended: the files hold no evidence (as after a stop) */
    long evidence_kept;          /* evidence evaluations read back from RUN/evidence */
    long evidence_added;         /* ... and made and kept there by this run */
    int evidence_started;        /* the evidence phase began (not cut before it) */
    int evidence_file;           /* 1: the run keeps its evidence in RUN/evidence (a
                                  * measured run's evaluates nothing: 0) */
    double elapsed_s;            /* seconds since kw_run_create / kw_run_resume began (the
                                  * time the limit counts) */
    double evidence_past_s;      /* > 0: the evidence's first evaluation, made whole so
                                  * that each resume keeps one, ended this far past the
                                  * time limit (kw_evidence_pool.deadline_s) */
    char evidence_note[256];     /* why RUN/evidence could not be kept ("" when it was) */
    int live_results;            /* 1: the files were made from the live summary (no
                                  * journal re-read: kw_runsum_live), 0: from the file */
    kw_engine_summary sum;
    char ranks[512];             /* mpirun: the ranks' evaluation rates ("" without) */
    int stopped_rank;            /* mpirun: the first rank (> 0) whose evaluation a signal
                                  * to it stopped (the pause's cause when no signal
                                  * reached this process), 0: none */
    int stopped_signal;          /* ... and that signal */
} kw_run_outcome;

/* Run the search, then the evidence phase, then write the result files.
 * Returns 0 (see out->engine_rc for a pause), the engine's error, or the
 * results' error (KW_EIO...: the journal is intact, a resume rewrites them:
 * out->engine_rc tells which). */
int kw_run_exec(kw_run *r, kw_run_outcome *out, const kw_run_ctl *ctl);

/* Accessors for the caller's progress and summary. */
const char *kw_run_dir(const kw_run *r);
const char *kw_run_journal(const kw_run *r);
const char *kw_run_metric(const kw_run *r);
/* The evaluator's shape names, indexed like kw_progress's shapes. */
const char *const *kw_run_shape_names(const kw_run *r);
/* Records a resume replays (-1 for a new run). */
long kw_run_replay_records(const kw_run *r);
/* mpirun: the ranks' evaluation rates into buf; 0 when not under mpirun. */
int kw_run_ranks(const kw_run *r, char *buf, size_t len);

/* The result files of run folder dir from its journal, the summary built
 * once (kw_runsum.h), its evidence evaluated by port_ev (portability,
 * neighbours: may be NULL) and final_ev (re-checks: NULL for the results so
 * far) on pool (NULL: the calling thread) with at most width threads, then
 * rendered (kw_results_write_summary). cfg (may be NULL) gives the guard
 * limits, owner (may be NULL) the rollback owner; metric (may be NULL) must
 * be the journal's (else KW_ESTATE). */
struct kw_evpool;
int kw_run_results(const char *dir, const kw_config *cfg, const char *owner, const char *metric,
                   const kw_evaluator *port_ev, const kw_evaluator *final_ev,
                   struct kw_evpool *pool, int width);

/* Open run folder dir for reading (dir/journal must load; no lock is
 * taken, so a writer is never blocked: a torn last record while tune holds
 * the lock is the record being written). KW_EINPUT when dir is not a run
 * folder, KW_ECORRUPT when its journal is damaged, or the loaders' errors.
 * *out owned by the caller (kw_rundir_free). */
struct kw_rundir;
struct kw_rundir_opts;
int kw_run_open(struct kw_rundir **out, const char *dir, const struct kw_rundir_opts *o);

/* An MPI rank other than 0: receive the run from rank 0, build its
 * evaluator, check its inputs, serve evaluations until the run ends. Returns
 * 0 or a negative code (its message in kw_error_last); *rank0_says is 1 when
 * the failure is an input that differs from rank 0's, which rank 0 reports.
 * note (NULL: none) is handed a warning before serving: the rank's own
 * options differ from rank 0's (kw_mpi_args_differ), which it ignores. */
int kw_run_serve(volatile sig_atomic_t *stop, int *rank0_says, void (*note)(const char *msg));

#endif
