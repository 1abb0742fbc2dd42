/* kw_search.h - the search engine as the rest of knobwise sees it.
 *
 * search/ knows knobs, candidates, constraints, an evaluator interface, the
 * one-knob-at-a-time engine and its journal. It knows nothing about
 * accelerators: metrics are a vector of named doubles the evaluator defines,
 * guards are strings. src/ implements the evaluator; nothing here includes src/.
 *
 * Plain-data structs with fixed capacities: a candidate is a small array of
 * value indices, copied by value, hashed to a stable 64-bit id.
 */
#ifndef KW_SEARCH_H
#define KW_SEARCH_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "kw_error.h"

#define KW_NAME_MAX 64       /* knob, shape, constraint, metric names */
#define KW_VALUE_LEN 32      /* one knob value as text */
#define KW_KNOB_MAX 64       /* knobs in a space */
#define KW_VALUE_MAX 32      /* values in one knob's domain */
#define KW_CONSTRAINT_MAX 64 /* constraints in a space */
#define KW_TERM_MAX 8        /* knob terms in one constraint */
#define KW_METRIC_MAX 48     /* metrics one evaluation returns (the model 38, the measuring evaluator 3 more) */
#define KW_GUARDS_LEN 256    /* failed guards joined by ';' */
/* Engine limits, one home: the engine refuses options beyond them and every
 * journal reader refuses a header beyond them (a journal edited and resealed). */
#define KW_PROBE_MAX 64      /* probes per convergence (opts->probes cap) */
#define KW_TABU_MAX 64       /* excursion length (opts->tabu cap) */
#define KW_REPEATS_MAX 1024  /* evaluations per candidate of a noisy evaluator */
#define KW_CTL_BLOCK_MAX (1 << 20) /* control blocks of one config (repetitions k*repeats..,
                                    * kw_engine.c "the control"): rep= stays below 2^30 */
#define KW_PAIR_DEFAULT 200  /* pairing evaluations per shape (opts->pair): 20 neighbours at
                              * the default 5 repeats, every neighbour of the shipped CPU spaces */
#define KW_PAIR_BUDGET_MAX (1L << 30)
/* The re-rank (noiseless OFAT with a paired evaluator, kw_ofat.c "the re-rank";
 * kw_engine_opts.rerank, KW_RERANK_DEFAULT unless set): where the search's own sample
 * cannot rank a shape, its best configs by that sample compared again on the same
 * arrivals at a longer sample, KW_RERANK_N0 requests (x5 for p99) doubling to at most
 * KW_RERANK_CAP. N0: the shortest sample the paired interval reads (2,000 requests above
 * the p95, src/model/kw_simci.h KW_SIMCI_PAIR_MIN_ABOVE; 200,000 for the p99). */
#define KW_RERANK_DEFAULT 4
#define KW_RERANK_MAX 16
#define KW_RERANK_N0 40000L
#define KW_RERANK_CAP 262144L

/* One knob: a finite ordered domain of textual values and a baseline index. */
typedef struct kw_knob {
    char name[KW_NAME_MAX];
    int n_values;
    char values[KW_VALUE_MAX][KW_VALUE_LEN];
    int baseline; /* index into values */
    int line;     /* line in the space file (0 if not from a file) */
} kw_knob;

/* A "forbid" constraint: violated when every term holds, i.e. the knob's value
 * index is in the term's allowed mask (bit i = value i). */
typedef struct kw_constraint {
    char name[KW_NAME_MAX];
    int n_terms;
    struct {
        int knob;
        uint64_t mask;
    } terms[KW_TERM_MAX];
    int line;
} kw_constraint;

typedef struct kw_knobspace {
    int n_knobs;
    kw_knob knobs[KW_KNOB_MAX];
    int n_constraints;
    kw_constraint constraints[KW_CONSTRAINT_MAX];
} kw_knobspace;

/* A candidate (config): one value index per knob, in the space's knob order. */
typedef struct kw_cand {
    uint8_t v[KW_KNOB_MAX];
} kw_cand;

/* Results of one evaluation. v[] is named by kw_evaluator.metric_names. */
typedef struct kw_metrics {
    double v[KW_METRIC_MAX];
    char guards[KW_GUARDS_LEN]; /* "" when every guard passes */
    char klass[32];             /* bottleneck class, free text for the engine */
} kw_metrics;

/* A paired comparison of two candidates (kw_evaluator.paired): the
 * difference a - b of one percentile of the two, both evaluated on the same
 * random numbers (common random numbers), and the half-width of its 95%
 * interval. */
typedef struct kw_paired {
    double a, b;        /* each candidate's percentile at this sample */
    double half;        /* 95% half-width of a - b; NAN: the sample is too short to say */
    int batches;        /* batches the interval was read from (0 with half NAN) */
    long samples;       /* the sample each was evaluated on */
    int a_guard, b_guard; /* 1: a / b fails on this sample a guard that the sample decides
                           * (the model: the latency SLAs, the fallback share, saturation);
                           * 0: passes them, or the evaluator does not say */
} kw_paired;

/* A service key's bytes (kw_evaluator.service_key): a growable buffer,
 * emptied by the caller (n = 0) before each key; b is malloc'ed. level: which
 * key the caller asks for, the run's alias level (KW_ALIAS_LEVEL; a resumed
 * journal's own): 1 = stop 47's, every dispatcher knob as decoded; 2 = the knobs
 * the serving simulation provably cannot read left out (the model's key,
 * src/model/kw_eval.c). An evaluator that has one key ignores it. */
typedef struct kw_skey {
    unsigned char *b;
    size_t n, cap;
    int level;
} kw_skey;

/* The alias level new runs record (journal header alias=N; kw_engine_opts.alias). */
#define KW_ALIAS_LEVEL 2

/* Append n bytes of p to k: 0 or KW_ENOMEM (search/kw_memo.c). */
int kw_memo_skey_put(kw_skey *k, const void *p, size_t n);

/* The evaluator interface. The engine does not care whether it is the model
 * (src/) or an external command measuring real hardware.
 * eval() must be thread-safe and deterministic in (candidate, shape, rep). */
typedef struct kw_evaluator {
    void *ctx;
    int n_metrics;
    const char *const *metric_names; /* e.g. "p95_us"; the engine finds its primary by name */
    int n_shapes;
    const char *const *shape_names;
    int noisy; /* repetitions differ: the engine repeats and tests significance */
    /* A reading depends on when it is taken (a device measured in time, which
     * drifts): a round whose job order is a design (the control's interleaved
     * sweeps, the pairing's crossover) is then evaluated in job order by one
     * thread, whatever opts.threads (kw_engine.c, kw_loop). 0 (a model, even
     * a noisy one: deterministic in (candidate, shape, rep)): every round on
     * the pool's threads. */
    int drifts;
    int (*eval)(void *ctx, const kw_cand *c, int shape, int rep, kw_metrics *out);
    /* Optional (NULL: none): a cheap, deterministic prediction of c's metrics
     * (e.g. a model beside a measurement). The engine uses it to rank a
     * round's new candidates when kw_engine_opts.screen > 0, and, when
     * kw_engine_opts.estimate is set, for multi-fidelity screening: the order
     * and early stop of OFAT's rounds (search/kw_mf.h) and the pilot's
     * steps (search/kw_ofat.c).
     * Its guards must be judged as eval()'s are. Called from one thread. */
    int (*predict)(void *ctx, const kw_cand *c, int shape, kw_metrics *out);
    /* Optional (NULL: none): a and b compared on common random numbers, the
     * primary percentile p (0.95 or 0.99) of each at `samples` (> 0), as
     * eval() would figure it with that sample, and the 95% interval of their
     * difference. Deterministic in its arguments; thread-safe. Returns 0,
     * 1 when this evaluator cannot pair them (nothing in *out), or an error.
     * The results' ranking verdict reads it (src/run/kw_evidence.c). */
    int (*paired)(void *ctx, const kw_cand *a, const kw_cand *b, int shape, double p, long samples,
                  kw_paired *out);
    /* Optional (devices <= 1 or eval_on NULL: one device): readings come from
     * `devices` devices (mpirun: a rank's worker each), and eval_on() takes
     * c's reading on device d (0 .. devices - 1) as eval() would, on that
     * device only. A drifting evaluator's designed round (above) then runs as
     * one job-ordered lane per device, at once, shape s's jobs on device
     * s % devices for the whole run (kw_engine.c, kw_loop): a shape's pairs
     * and controls stay on one device while other shapes use the others. */
    int devices;
    int (*eval_on)(void *ctx, int device, const kw_cand *c, int shape, int rep, kw_metrics *out);
    /* Optional (NULL: none; only a noiseless evaluator whose eval() is a pure
     * function of (candidate, shape) may give one): the SERVICE KEY of c on
     * shape, appended to out (kw_memo_skey_put): the serialized bytes of everything
     * eval() reads after the candidate's own stage (for the model: the service
     * table of every batch size the simulation can form, the dispatcher knobs,
     * the arrivals' identity, the drift check's outputs; src/model/kw_eval.c
     * kw_model_eval_key). Two candidates of one shape with equal keys get
     * eval() results equal bit for bit, so the engine gives the later one (in
     * journal order) the earlier one's result as an alias (kw_engine.c "aliases"),
     * which the budget does not count. Returns 0 (key made), 1 (no key: c is
     * evaluated in full) or an error. Thread-safe; a wrapper that copies an
     * evaluator must set it for its own ctx and candidates. */
    int (*service_key)(void *ctx, const kw_cand *c, int shape, kw_skey *out);
} kw_evaluator;

/* ---- knob space and candidates (kw_knobs.c) ---- */

/* The baseline candidate of a space. */
void kw_knobs_cand_baseline(kw_cand *out, const kw_knobspace *ks);
/* Stable 64-bit id of a candidate: FNV-1a over "name=value;" in knob order. */
uint64_t kw_knobs_cand_id(const kw_knobspace *ks, const kw_cand *c);
/* The same id of n knobs given by name and value text (the one home of the id
 * rule; `knobwise export` checks a file's config_id against its values). */
uint64_t kw_knobs_id_text(int n, const char *const *names, const char *const *values);
/* Number of knobs whose value differs between a and b. */
int kw_knobs_cand_distance(const kw_knobspace *ks, const kw_cand *a, const kw_cand *b);
/* Index of the first constraint c violates, or -1. */
int kw_knobs_cand_violates(const kw_knobspace *ks, const kw_cand *c);
/* Knob index by name, or -1. */
int kw_knobs_find(const kw_knobspace *ks, const char *name);
/* Value index of text within a knob, or -1. */
int kw_knobs_value(const kw_knob *k, const char *text);
/* Size of the full space (saturates at UINT64_MAX). */
uint64_t kw_knobs_size(const kw_knobspace *ks);
/* Write "knob=value knob=value ..." for every knob into buf (truncates). */
void kw_knobs_cand_format(char *buf, size_t len, const kw_knobspace *ks, const kw_cand *c);
/* The one parser of "knob=value" words (eval --set and --stdin, calibrate's knobs
 * column, bisect's files and run references): apply text's whitespace-separated words
 * onto c over its current values. set_at[k] is 0 while knob k is unset, else the line
 * (>= 1) that set it; at is this text's line (1 where the caller has no lines). A knob
 * set again to another value is refused, never last-wins ("knob 'k' is set twice ('a'
 * on line N, then 'b')", the line only when it differs from at); the same value again is
 * fine. Unknown knob/value, a word without '=' -> KW_EINPUT, the message with the
 * nearest valid names and no FILE:LINE (the caller adds its own). */
int kw_knobs_cand_apply(kw_cand *c, long *set_at, long at, const kw_knobspace *ks,
                        const char *text);
/* kw_knobs_cand_apply over the baseline, one line: *out is written only on success. */
int kw_knobs_cand_parse(kw_cand *out, const kw_knobspace *ks, const char *text);
/* " (did you mean 'a' or 'b'?)" with the space's knob names nearest to name, or "". */
void kw_knobs_hint_name(char *buf, size_t size, const kw_knobspace *ks, const char *name);
/* The same for a value of k; when none is near, " (its values: a|b|c)". */
void kw_knobs_hint_value(char *buf, size_t size, const kw_knob *k, const char *value);

/* ---- engine (kw_engine.c, its strategies behind kw_strategy.h) ---- */

typedef enum { KW_STRATEGY_OFAT, KW_STRATEGY_RANDOM, KW_STRATEGY_EXHAUSTIVE } kw_strategy;
typedef enum { KW_POLICY_SWEEP, KW_POLICY_GREEDY } kw_policy;

/* What a step decided. */
typedef enum {
    KW_DECIDE_ACCEPT,      /* improved by at least min_effect, guards pass (phase settle:
                            * onto the best config evaluated, any gain; noiseless only) */
    KW_DECIDE_REJECT,      /* evaluated, not taken (metric or guard) */
    KW_DECIDE_EXPLORE,     /* taken without improvement to leave a local optimum */
    KW_DECIDE_REVERT,      /* bounded fix: a change dropped because it did not earn min_effect */
    KW_DECIDE_KEEP,        /* bounded fix: a change kept because it earned its effect */
    KW_DECIDE_CONSTRAINT   /* breaks a named constraint; recorded, not evaluated */
} kw_decision;

/* One tuned shape as the progress callback sees it. */
typedef struct kw_progress_shape {
    int shape;                /* evaluator shape index */
    int done;                 /* its shape-done record is journaled */
    int step;                 /* steps journaled */
    long evals;               /* evaluations journaled for this shape */
    long evals_est;           /* estimated evaluations when it stops (>= evals; budget-capped);
                               * -1 when the strategy gives no estimate (random without end) */
    double best_primary, baseline_primary;
    const char *best_guards, *baseline_guards; /* their failed guards (kw_guards.h; NULL or
                               * "" when none), valid during the callback only */
    const char *phase;        /* what the strategy is doing: "baseline", "sweep", "probe",
                               * "excursion", "backtrack", "settle", "fix", "random",
                               * "exhaustive", "finish", "done" (static string) */
    int evals_est_bound;      /* evals_est is only a lower bound: no shape has found its first
                               * local optimum yet, so the cost of the proofs to come is
                               * unknown (kw_eta_evidence; stop 47) */
} kw_progress_shape;

/* What the engine reports after a round (and every so often while a resume
 * replays its journal). The first block is the shape the run is "at" (the first
 * unfinished one); per_shape has every tuned shape, so strategies that run all
 * shapes at once (random, exhaustive, and OFAT's rounds too) can show them all.
 * Rates and ETAs count only evaluations made by this process after the replay.
 * evals_per_s: full evaluations (an alias costs none) per second of the time
 * not spent in the re-rank's paired comparisons (OFAT, stop 48).
 * eta_converge_s: the evaluations each unfinished shape is still expected to
 * need (kw_progress_shape.evals_est - evals: OFAT's from kw_eta.h, its bound
 * scaled by the full evaluations its candidates became) at the time its own
 * evaluations took, plus, once some shape has found its first local optimum,
 * the re-ranks still expected at their timed rate (kw_eta_rerank_left);
 * eta_budget_s: the budget's evaluations left at evals_per_s (-1 when there is
 * none); eta_s: the smaller known one. */
typedef struct kw_progress {
    int shape, n_shapes;
    int step;
    long evals, evals_total_budget;
    double best_primary, baseline_primary;
    double evals_per_s, eta_s;
    const kw_progress_shape *per_shape; /* n_shapes entries, valid during the callback only */
    int n_done;               /* shapes finished */
    long budget;              /* evaluations per shape, 0 = none */
    int replaying;            /* resume: journal records are being replayed, not evaluated */
    long replay_done, replay_total; /* journal records replayed / to replay */
    double eta_budget_s, eta_converge_s;
    int eta_converge_bound;   /* eta_converge_s is only a lower bound, not an estimate: OFAT
                               * before any shape's first local optimum (kw_eta_evidence) */
    /* rerank_total > 0: reported by kw_engine_opts.rerank_progress from inside the re-rank
     * of per_shape[rerank_shape] (its phase "re-rank"), rerank_done of its rerank_total
     * rivals compared; the ETA counts its rivals left (stop 48) */
    int rerank_shape, rerank_done, rerank_total;
} kw_progress;

typedef struct kw_engine_opts {
    kw_strategy strategy;
    kw_policy policy;
    long budget;            /* evaluations per shape (0 = unlimited) */
    double time_limit_s;    /* whole run (0 = unlimited) */
    /* The evaluators' deadline (CLOCK_MONOTONIC seconds, 0: none), read by them
     * during long evaluations; the engine sets it to 0 while it makes a round
     * whole (kw_engine.c, kw_pause) and puts it back. NULL: no such deadline. */
    double *deadline_s;
    const char *metric;     /* primary metric name, e.g. "p95_us" (lower is better) */
    double min_effect_pct;  /* a step must improve the primary by at least this */
    double alpha;           /* significance level when the evaluator is noisy */
    int repeats;            /* evaluations per candidate when noisy */
    uint64_t seed;
    int threads;
    int tabu;               /* tabu list length for exploratory steps (0 = off) */
    int probes;             /* two-step probes of knob pairs per round (0 = off) */
    int n_shapes;           /* shapes to tune (indices into the evaluator's shapes) */
    const int *shapes;
    const volatile sig_atomic_t *stop; /* set by a signal handler: finish the step and stop */
    void (*progress)(void *ud, const kw_progress *p);
    void *progress_ud;
    /* The re-rank's progress (OFAT, may be NULL; progress_ud): called from inside a
     * shape's plan before each of its paired comparisons (the re-rank of one shape
     * takes seconds to minutes of LLM/bursty spaces' searches, with no round ending),
     * p->rerank_total > 0. Mid-round: it may draw and nothing else (no journal, no
     * result file; stop 48). */
    void (*rerank_progress)(void *ud, const kw_progress *p);
    /* Screen-then-evaluate (needs evaluator->predict; 0 = off): of a shape's
     * configs new in a round, only the `screen` best by prediction (guard-
     * passing predictions first) are evaluated; the others are journaled as
     * evaluations failing the guard "screened" (primary +inf), never passed to
     * eval(). Deterministic, so resume replays the same choice. Not recorded
     * in the journal header: the caller records and restores it. */
    int screen;
    /* Multi-fidelity screening (OFAT; needs evaluator->predict; 0 = off): each
     * sweep and probe round's candidates are estimated cheaply (P records),
     * evaluated best estimate first when the budget cannot take the round
     * whole, and skipped when the estimate within its measured error bound
     * cannot gain the minimum effect (search/kw_mf.h). Not in the journal
     * header: the caller records and restores it. kw_engine_opts_init: 1. */
    int estimate;
    /* Knobs OFAT never changes (bit k = knob k): the caller's knowledge that
     * the block cannot use them (src/run/kw_knobuse.h). Not in the journal header:
     * the caller records and restores it. */
    uint64_t frozen;
    /* Fusion knobs and the knobs of the tiling groups they fuse (OFAT under a budget,
     * noiseless: kw_ofat.c's fusion pairs): bit j of fuses[f] = knob f merges the
     * operators that knob j tiles. The caller's knowledge of its operators
     * (src/run/kw_knobuse.h); all 0 (kw_engine_opts_init): no fusion pairs. Not in the
     * journal header: the caller derives it again on resume from the same inputs. */
    uint64_t fuses[KW_KNOB_MAX];
    /* Knobs of the serving queue (OFAT's probes: kw_ofat.c's queue pairs): bit k = knob
     * k changes only how requests are batched and placed (max_batch, batch_timeout_us,
     * placement, cores_per_request), not a kernel. The caller's knowledge of its
     * evaluator (src/run/kw_knobuse.h); 0 (kw_engine_opts_init): no queue pairs. Not in
     * the journal header: the caller derives it again on resume from the same inputs. */
    uint64_t queue;
    /* The process's evaluation pool (search/kw_evpool.h), started by the
     * caller with `threads` threads and kept for the evaluations after the
     * search; NULL: the engine starts its own for the run. */
    struct kw_evpool *pool;
    /* Noisy OFAT only: 1 turns the same-round control off (the incumbent is
     * then judged by its repetitions of the round that accepted it, as before
     * the control existed). 0 (kw_engine_opts_init): every round that measures
     * a challenger re-measures the config it is judged against beside it
     * (kw_engine.c, "the control"). Recorded in the journal header (control=1). */
    int no_control;
    /* Noisy runs only: the most evaluations per shape that the pairing may
     * spend once the shape is done (kw_engine.c "the pairing": the
     * recommendation and each one-knob neighbour re-measured side by side,
     * N records); 0 turns it off. kw_engine_opts_init: KW_PAIR_DEFAULT.
     * Recorded in the journal header (pair=N) of a noisy run; a noiseless
     * run never pairs and its header has no pair field. */
    long pair;
    /* Noiseless OFAT with evaluator->paired and a p95/p99 primary only: the most
     * configs of a shape (the search's recommendation and its best rivals by the
     * search's sample) re-ranked on a long paired sample of the same arrivals before
     * the shape-done record, where that sample cannot rank the shape (kw_ofat.c "the
     * re-rank", R records); 0 turns it off. kw_engine_opts_init: KW_RERANK_DEFAULT
     * (doc/search-log.md). Recorded in the journal header (rerank=K) of a run that may re-rank. */
    int rerank;
    /* Aliases (noiseless evaluator with service_key only; kw_engine.c "aliases"): a
     * candidate whose service key equals an earlier full evaluation's of the same
     * shape gets that evaluation's result without evaluator call, journalled as its
     * alias (E field a=), and the budget counts full evaluations only.
     * 0: none; otherwise the key's level (kw_skey.level): kw_engine_opts_init sets
     * KW_ALIAS_LEVEL. Recorded in the journal header (alias=N) of a run that aliases;
     * a journal resumes at its own level (stop 47's alias=1 at 1), one without it
     * without aliases. */
    int alias;
    /* Tests and the bench's check only: every alias is also evaluated in full and
     * compared bit for bit with its original (kw_engine_summary.alias_mismatches);
     * the journal is the same as without the check. */
    int alias_check;
} kw_engine_opts;

#endif
