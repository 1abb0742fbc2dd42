/* kw_exec.h - the measuring evaluator: a second kw_evaluator (search/
 * kw_search.h) whose stage 1 is measured by an external worker process
 * (kw_worker.h, README "The worker protocol") instead of modelled.
 *
 * One evaluation of (candidate, shape, rep): a `measure` request with the
 * shape, the block's operators and every knob; the samples (adaptive: more
 * are asked for until the median's 95% interval is within target_ci_pct of
 * it or max_reps are in), optionally bracketed by the shape's baseline
 * (anchor: A B A, which cancels linear drift of the device); the outlier
 * policy (kw_mstat.h); then the model's stages 2-4 on top of the measured
 * kernel time (unit=kernel) or the measured latencies as the distribution
 * (unit=request), through kw_eval_measured. The evaluator is `noisy`:
 * the engine repeats every candidate and judges with its significance test.
 *
 * Threads: ONE worker per process. eval() is thread-safe: it holds the
 * worker's mutex while measuring (kernels timed concurrently on one device
 * would measure each other) and runs the serving simulation and drift check
 * outside it, in parallel.
 *
 * Faults: a timeout, a worker that exits or an answer that does not parse
 * kills the worker; the evaluation returns 0 with guards error:timeout,
 * error:crash or error:protocol (the worker's own error as error:REASON) and
 * infinite latencies, so the engine journals it as a failed candidate; the
 * worker is started again for the next request.
 */
#ifndef KW_EXEC_H
#define KW_EXEC_H

#include <signal.h>
#include "kw_eval.h"
#include "kw_model.h"

/* Defaults of the space's <evaluator> settings (spaces/space.xsd). */
#define KW_EXEC_DEF_TIMEOUT_S 60.0        /* per candidate (one measure request) */
#define KW_EXEC_DEF_START_TIMEOUT_S 30.0  /* for the ready line */
#define KW_EXEC_DEF_WARMUP 3              /* discarded runs the worker makes first */
#define KW_EXEC_DEF_REPS 10               /* samples of the first request */
#define KW_EXEC_DEF_MAX_REPS 80           /* cap of samples per evaluation */
/* A worker's figures that can be measurements (kw_exec_parse): a sample is at
 * most the time the worker had to answer, the timeout, itself capped here (tune
 * and eval's --timeout limit, 11.6 days); a relative RMS error is at most this
 * (1e6: an output a million times its reference's size is a wrong result; the
 * results' fixed-decimal figures hold ~1e20). */
#define KW_EXEC_TIMEOUT_MAX_S 1e6
#define KW_EXEC_REL_RMS_MAX 1e6
/* Measurements of a shape's baseline (before the run folder) a crashing
 * worker gets: a crash (the worker exited or was killed: the OOM killer, a
 * signal) may be transient, so a fresh worker measures it again; a worker
 * that crashed on every try ends tune with exit 1 (it was exit 2, bad input,
 * after one crash until 2026-12-07). Its own error answers, garbage and
 * timeouts are not retried (exit 2). */
#define KW_EXEC_BASELINE_TRIES 3
#define KW_EXEC_DEF_TARGET_CI_PCT 1.0     /* stop when the median's 95% CI is within +-1% */
#define KW_EXEC_CI_LEVEL 0.95
#define KW_EXEC_SAMPLES_MAX 4096        /* cap of samples in one evaluation (schema: samples) */

/* Metrics the measuring evaluator adds after the model's (kw_eval.h), so the
 * journal keeps what was measured besides what the model made of it. */
enum {
    KW_X_MEASURED_LO_US = KW_M_COUNT, /* 95% distribution-free interval of the median sample */
    KW_X_MEASURED_HI_US,
    KW_X_MEASURED_SAMPLES,            /* samples kept by the outlier policy */
    KW_X_COUNT
};

typedef struct kw_exec_opts {
    const char *cmd;
    double timeout_s, start_timeout_s;
    int warmup, reps, max_reps;
    double target_ci_pct;
    int anchor;        /* bracket each measurement with the shape's baseline */
    int index;         /* KW_WORKER_INDEX */
    /* tune's stop flag (SIGINT/SIGTERM; NULL: never): a request waiting on
     * the worker ends once it is set, and the evaluation returns
     * KW_EINTERRUPTED (the engine drops the round, as for the model) instead
     * of waiting out the worker's timeout */
    const volatile sig_atomic_t *stop;
    /* the run's time limit as a CLOCK_MONOTONIC deadline (NULL, or 0 in
     * it: none): a request never waits past it; one it cuts ends as a stop
     * does (KW_EINTERRUPTED, nothing journaled), not as a timeout */
    const double *deadline_s;
} kw_exec_opts;

/* The guard of a measurement whose anchor bracket failed (an anchor request
 * timed out, crashed or answered garbage): journaled as a failed
 * evaluation, never kept without the drift correction. */
#define KW_EXEC_ANCHOR_FAILED "error:anchor"

/* Options from the space's <evaluator> (cmd: the space's command unless
 * cmd_override is non-NULL; timeout_override > 0 replaces the timeout). */
void kw_exec_opts_from_space(kw_exec_opts *o, const kw_space *s, const char *cmd_override,
                             double timeout_override_s);

/* The evaluator an option or the space names: spec "model" -> *cmd NULL,
 * "exec:CMD" -> *cmd points at CMD inside spec; NULL spec -> the space's
 * command when it has one (else NULL). KW_EINPUT for anything else. */
int kw_exec_spec(const char **cmd, const char *spec, const kw_space *s);

typedef struct kw_exec kw_exec;

/* A measuring evaluator over model (borrowed: stages 2-4 and the plan), with
 * its worker started and handshaken now (so a worker that cannot start is an
 * error before anything is written: KW_EINPUT with the reason). The worker's
 * stderr is knobwise's until kw_exec_log. */
int kw_exec_new(kw_exec **out, const kw_config *cfg, const kw_model_eval *model,
                const kw_exec_opts *o);
/* A second evaluator over another model evaluator (e.g. the final re-check's,
 * with the thermal window) sharing first's worker; its requests say
 * purpose=PURPOSE (static string; first's say purpose=search). Free it before
 * first. */
int kw_exec_new_sibling(kw_exec **out, kw_exec *first, const kw_model_eval *model,
                        const char *purpose);
/* Send the worker's stderr to path (appended, created 0644); restarts the
 * worker so the new stderr takes effect. */
int kw_exec_log(kw_exec *e, const char *path);
void kw_exec_free(kw_exec *e);
const kw_evaluator *kw_exec_iface(const kw_exec *e);

/* Measured load: re-derive each space shape's load-given arrival rate in the
 * model evaluators from the measured baseline (kw_eval_rescale_load), so
 * `load` means the utilisation of the measured device and not of the modelled
 * one. recorded: the factors a run used ("f1,f2,..." per space shape, from its
 * journal) or NULL to measure the baselines now (purpose=calibrate); the
 * factors used are written to out. KW_EINPUT when a baseline cannot be
 * measured (the worker's guard in the message); KW_EIO when the worker
 * crashed on each of KW_EXEC_BASELINE_TRIES tries. */
int kw_exec_calibrate(kw_exec *e, kw_model_eval *const *models, int n_models,
                      const char *recorded, char *out, size_t out_len);

/* Counters (for tests and the run summary). */
long kw_exec_requests(const kw_exec *e); /* measure requests answered or failed */
long kw_exec_restarts(const kw_exec *e); /* workers started after a fault */
const char *kw_exec_worker_name(const kw_exec *e);

#endif
