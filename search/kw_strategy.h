/* kw_strategy.h - the interface between the engine core and its strategies.
 *
 * The core (kw_engine.c) owns what every strategy shares and what the
 * determinism contract rests on: the lock-step rounds, the memo, the thread
 * pool, journal records, resume by replay, the budget, the acceptance rule and
 * THE step function. A strategy (kw_ofat.c; kw_sample.c for random and
 * exhaustive) owns only its per-shape state and four decisions, in the manner
 * of Redis's ae.c over ae_epoll.c / ae_select.c:
 *
 *   init    the shape's baseline is evaluated (the core plans and journals it
 *           for every strategy): allocate s->st, enter the first phase;
 *   plan    add this round's candidates to s->items (none is fine: a phase
 *           that only decides) and set s->reserve; a pure function of the
 *           shape's state and the memo, never of the thread count or time;
 *   decide  the round's evaluations are journalled and in the memo: journal
 *           the steps (through kw_engine_step) and move on; return
 *           KW_SHAPE_FINISHED when the shape is done;
 *   done    the finished shape's result: the config and reason its
 *           shape-done record names.
 *
 * plus what the progress line shows (phase label, best so far, an estimate of
 * the evaluations when it stops) and free. Adding a strategy: one new file
 * defining a kw_strategy_ops, one row in the core's table (kw_engine.c), and
 * its name in kw_strategy_names (kw_journal.c) for the journal header.
 *
 * Rejected: one state machine with a phase enum shared by every strategy (the
 * old design: ~50 fields in one struct, each meaningful in one phase).
 */
#ifndef KW_STRATEGY_H
#define KW_STRATEGY_H

#include "kw_engine.h"
#include "kw_intern.h"
#include "kw_memo.h"
#include "kw_eta.h"
#include "kw_evpool.h"
#include "kw_mf.h"

#define KW_REASON_LEN 256      /* a step's "why" text */
#define KW_SHAPE_FINISHED 1    /* decide(): the shape is done, write its record */
#define KW_MF_ROUND_FIRST 2    /* s->mf_round: see kw_shape */
#define KW_MF_ROUND_CHECK 3    /* s->mf_round: estimated and ordered, nothing skipped (kw_shape) */
#define KW_MF_DEFERRED 2       /* kw_item.skipped: see kw_item */

/* One planned candidate. */
typedef struct kw_item {
    kw_cand cand;
    uint64_t id;
    int con;      /* constraint broken, -1 if none */
    int group;    /* the strategy's own tag (OFAT probes: index of the first step) */
    int dropped;  /* not evaluated: the budget ran out, or the screen skipped it */
    /* multi-fidelity screening (kw_build_jobs, opts.estimate): */
    int estimated;  /* est holds the evaluator's cheap estimate of the primary (a P record) */
    int est_fails;  /* the estimate fails a guard */
    int skipped;    /* not evaluated: 1 within its error bound the estimate cannot gain,
                     * KW_MF_DEFERRED the bound was not trusted yet (first round) */
    double est;
    /* the strategy's forecast of the primary from full evaluations (noiseless OFAT
     * probes: a pair's two changes composed, kw_ofat_pair_forecast), NAN when none;
     * the screen orders a round by it before the estimate (kw_mf_screen) */
    double known;
} kw_item;

typedef enum {
    KW_SHAPE_BASELINE, /* the core evaluates the baseline */
    KW_SHAPE_RUNNING,  /* the strategy plans and decides */
    KW_SHAPE_PAIR,     /* its shape-done record is journalled; noisy: the pairing
                        * re-measures the recommendation beside its neighbours */
    KW_SHAPE_DONE      /* finished: its shape-done record (and pairs) journalled */
} kw_shape_phase;

/* What the core keeps of one tuned shape; st is the strategy's. */
typedef struct kw_shape {
    int shape;                /* evaluator shape index */
    kw_shape_phase phase;
    kw_cand base, pos;        /* baseline and incumbent (current position) */
    long evals;               /* full evaluations journalled for this shape (the budget's) */
    long aliases;             /* aliases journalled for this shape (kw_engine.c "aliases") */
    int step;                 /* steps journalled */
    int budget_hit;           /* the budget dropped a planned candidate */
    int reserve;              /* plan: evaluations this round must leave unspent */
    int mf_round;             /* plan: screen this round's candidates by the cheap estimate
                               * (1; KW_MF_ROUND_FIRST: a round the strategy lets the screen
                               * cut to the best-estimated few while the bound is untrusted;
                               * KW_MF_ROUND_CHECK: estimated, ordered and learnt from, but
                               * nothing skipped - the check before converging) */
    kw_mf_bound mfb;          /* the estimate's error on this shape, from its pairs */
    long estimates;           /* cheap estimates made (P records) */
    long evals_first_opt;     /* progress: evaluations at its first local optimum (0: not yet) */
    long rr_requests;         /* progress: the re-rank's requests journalled for this shape */
    kw_item *items;           /* this round's plan */
    int n_items, cap_items;
    size_t job0, job1;        /* this round's jobs for the shape, E->jobs[job0..job1) */
    /* the control (noisy evaluator, kw_engine.c "the control"): plan sets ctl_want
     * and ctl_cand, the config this round's challengers are judged against; the
     * core then re-measures it in the round, repetitions ctl_k*reps ..
     * ctl_k*reps + reps-1 of ctl_id (ctl_k 0: no control this round; -1: one was
     * wanted but the round measured nothing, so nothing has same-round evidence) */
    int ctl_want;
    kw_cand ctl_cand;
    int ctl_k;
    uint64_t ctl_id;
    long controls;            /* control evaluations journalled for this shape */
    long pairs;               /* the pairing's evaluations journalled for this shape */
    /* the pairing (kw_engine.c "the pairing"), phase KW_SHAPE_PAIR: the
     * recommendation, the next neighbour to pair (knob * 2 + side, side 0
     * one value down, 1 up), the evaluations spent, and this round's pair:
     * the neighbour and the two blocks (repetitions k*reps ..) measured */
    kw_cand pair_pick, pair_nb;
    int pair_next, pair_knob, pair_kp, pair_kn;
    long pair_spent;
    void *st;                 /* the strategy's state (init allocates, free releases) */
} kw_shape;

typedef struct kw_eng kw_eng;

typedef struct kw_strategy_ops {
    kw_strategy id;
    int (*init)(kw_eng *E, kw_shape *s);
    int (*plan)(kw_eng *E, kw_shape *s);
    int (*decide)(kw_eng *E, kw_shape *s);
    void (*done)(kw_eng *E, kw_shape *s, kw_cand *best, const char **why);
    void (*free)(kw_shape *s);
    const char *(*phase)(const kw_shape *s);           /* progress label (static string) */
    const kw_cand *(*best)(const kw_shape *s);         /* progress: the config to show */
    long (*estimate)(const kw_eng *E, const kw_shape *s, double mean_ratio); /* evaluations
                                                        * when it stops, -1 unknown */
} kw_strategy_ops;

extern const kw_strategy_ops kw_ofat_ops;
extern const kw_strategy_ops kw_sample_random_ops;
extern const kw_strategy_ops kw_sample_exhaustive_ops;

struct kw_eng {
    const kw_knobspace *ks;
    const kw_evaluator *ev;
    /* an estimate that failed for want of memory or I/O (kw_engine_predict):
     * no record is journaled after it (kw_add returns it), as a screen or a
     * plan that went on without the estimate is not the run's */
    int predict_rc;
    char predict_err[256];
    const kw_strategy_ops *strat;
    kw_engine_opts o;
    const kw_run_info *info;
    int primary, reps;
    int ci_lo, ci_hi;         /* the evaluator's metrics bounding the primary's 95% interval on
                               * its own sample (p_ci_lo_us/p_ci_hi_us for p95_us, p99_ci_* for
                               * p99_us), -1 when it has none (kw_engine_half) */
    int n_shapes;
    int shapes[KW_JOURNAL_SHAPE_MAX];
    kw_shape *S;
    kw_jwriter *w;
    kw_journal *j;            /* resume: the journal being replayed */
    kw_memo memo;
    kw_intern strs;
    kw_evpool own_pool;       /* started here when opts.pool is NULL */
    kw_evpool *pool;          /* the rounds' pool: opts.pool or &own_pool */
    int pool_up;              /* own_pool started (stopped at the end) */
    kw_job *jobs;
    size_t n_jobs, cap_jobs;
    size_t *live;
    size_t cap_live;
    kw_jbuf rec;
    long round;               /* the current round, 1, 2, ... (replayed rounds included) */
    int in_order;             /* this round's job order is a design (the control's sweeps,
                               * the pairing's crossover): see kw_loop */
    double t0;
    double shape_cost_s[KW_JOURNAL_SHAPE_MAX]; /* running mean of an evaluation's time */
    kw_engine_summary sum;
    /* progress: what the callback last saw, and when the live (not replayed) part began */
    kw_progress_shape *ps;
    double t_live;            /* end of the replay (t0 for a fresh run) */
    long evals_live0;         /* sum.evals at t_live */
    int replay_over;          /* the replay is over (or there was none) */
    double last_report;
    int last_done;
    long replay_total;        /* resume: journal records to replay */
    /* the limit-vs-progress rule (kw_pause): idle=K of the time_limit pause this
     * resume dropped (0: none), the journal's records once the header was
     * written, and the evaluators' deadline while a round is made whole */
    int idle_in;
    long rec0;
    double held_deadline;
    kw_eta eta;               /* OFAT's convergence estimate, fed every live report */
    double rr_s;              /* progress: seconds this process spent in the re-rank's paired
                               * comparisons (live, not replayed), and their requests */
    long rr_live_requests;
    /* progress inside a re-rank (kw_engine_rerank_progress): the round in which each
     * shape's re-rank reported, and the one reporting: its rivals through and its
     * rivals in all */
    long rr_round[KW_JOURNAL_SHAPE_MAX];
    int rr_done, rr_total;
    double eval_s[KW_JOURNAL_SHAPE_MAX]; /* progress: this process's evaluations of each
                               * shape, their summed time and count (the ETA weighs a
                               * shape's evaluations left by their cost) */
    long eval_n[KW_JOURNAL_SHAPE_MAX];
    size_t rr_next;           /* resume: the next of j's R records to replay */
    int alias_on;             /* this run aliases (kw_engine.c "aliases") */
    kw_alias alias;           /* the service keys met, per shape */
    kw_skey key, key2;        /* scratch: a candidate's key, an entry's key made again */
};

/* Statistics of a config's primary over its journalled repetitions, computed
 * exactly as kw_journal_stats() does (same order of summation) so `verify`
 * can recompute every recorded figure bit for bit. */
typedef struct kw_cst {
    int n;
    double mean, sd;
    int ok;                   /* evaluated and every repetition passes every guard */
    const char *guards;
} kw_cst;

typedef struct kw_verdict {
    int ok;        /* acceptable */
    double gain;   /* % improvement of the primary over the reference (positive = better) */
    double p;      /* adjusted p-value or NAN */
    int ctl;       /* > 0: judged against the reference's control block ctl of this round
                    * (repetitions ctl*reps ..), whose mean is ref_mean; 0: against its
                    * repetitions 0..reps-1 */
    uint64_t ref_id;
    double ref_mean;
    char why[KW_REASON_LEN];
} kw_verdict;


/* ---- what the core offers its strategies (kw_engine.c) ---- */

/* kw_engine_run (resume 0) or kw_engine_resume (1) driven by ops instead of
 * the table's row for opts->strategy (NULL: the row). opts->strategy is still
 * checked and recorded in the journal header. Tests drive a strategy of their
 * own through the core this way. */
int kw_engine_run_with(kw_engine_summary *out, const kw_strategy_ops *ops, const kw_knobspace *ks,
                       const kw_evaluator *ev, const kw_engine_opts *opts, const kw_run_info *info,
                       int resume);

/* The re-rank is on for this run (kw_engine_opts.rerank; noiseless OFAT, a paired
 * evaluator, a p95 or p99 primary): the primary's percentile (0.95, 0.99), else 0. */
double kw_engine_rerank_p(const kw_eng *E);
/* One re-rank comparison (kw_ofat.c "the re-rank"): challenger a against leader b on
 * shape s at n requests, through evaluator->paired or, resuming, the journal's next R
 * record when it is this comparison. Made while planning, so an interrupted one
 * (KW_EINTERRUPTED: a signal, the time limit) leaves nothing of its round journalled;
 * 1: the evaluator cannot pair them. */
int kw_engine_rerank_get(kw_eng *E, const kw_shape *s, const kw_cand *a, const kw_cand *b, long n,
                         kw_paired *out);
/* The re-rank's progress (kw_engine_opts.rerank_progress): shape s is about to compare
 * rival done + 1 of total (done rivals through), on a live comparison only; draws, nothing
 * journalled or written. */
void kw_engine_rerank_progress(kw_eng *E, const kw_shape *s, int done, int total);
/* Its R record (in the decide, journal order) and the summary's counts. */
int kw_engine_rerank_emit(kw_eng *E, const kw_shape *s, uint64_t ida, uint64_t idb, long n,
                          const kw_paired *v);
void kw_engine_stats(kw_eng *E, int shape, uint64_t id, kw_cst *o);
void kw_engine_stats_c(kw_eng *E, const kw_shape *s, const kw_cand *c, kw_cst *o);
/* The 95% interval half-width of c's primary on the evaluator's own sample, as its
 * evaluation (repetition 0) read it: NAN when the evaluator gives no interval for the
 * primary (E->ci_lo < 0) or c was not evaluated. */
double kw_engine_half(kw_eng *E, const kw_shape *s, const kw_cand *c);
/* The evaluator's cheap estimate of c on shape (E->ev->predict). A failure
 * of the estimate itself (KW_ENOMEM, KW_EIO, KW_EINTERRUPTED) is kept in
 * E->predict_rc and ends the run at its next record: before 2026-12-07 every
 * caller read it as "no estimate" and went on, so an allocation that failed
 * once (fault/knobwise-fault KW_FAULT_ALLOC=132) left a journal no resume
 * could regenerate (exit 0, the shape's P records missing). */
int kw_engine_predict(kw_eng *E, const kw_cand *c, int shape, kw_metrics *m);
/* % by which x improves on ref (lower is better; +-inf when ref is 0). */
double kw_engine_gain_pct(double ref, double x);
/* The acceptance rule: c against the reference ref; m candidates are compared
 * in the decision (Bonferroni); prefix names the reference in the reason.
 * pr (NULL: none) holds c and the reference measured in the same round (the
 * control, kw_engine_pair): the gain is then against the control's mean and
 * the test is paired; ref still says whether the reference passes its guards. */
void kw_engine_judge(kw_eng *E, const kw_cst *ref, const kw_cst *c, const kw_pair *pr, int m,
                     const char *prefix, kw_verdict *v);
/* 1 and *out filled when this round re-measured `ref` as the shape's control
 * and config id was measured (all its repetitions 0..reps-1) in the same round,
 * every control repetition passing its guards; -1 when the round wanted a
 * control for ref but there is no same-round evidence: id was measured in an
 * earlier round (a memo hit), the control failed a guard, or the round
 * measured nothing; else 0 (no control for ref: the stale samples decide). */
int kw_engine_pair(kw_eng *E, const kw_shape *s, const kw_cand *ref, uint64_t id, kw_pair *out);
/* THE step function: refuses (KW_ESTATE, nothing journalled) a step that does
 * not change exactly one knob of the incumbent, journals the decision, moves
 * the incumbent on ACCEPT, EXPLORE and REVERT. */
int kw_engine_step(kw_eng *E, kw_shape *s, const kw_cand *to, kw_decision d, kw_step_phase ph,
                   double p, int con, const char *why);
/* The same for a judged step: p is v->p, and the record names the control
 * the verdict used (ref=, ctl=, rmean=), so every reader knows which
 * repetitions decided it. */
int kw_engine_step_judged(kw_eng *E, kw_shape *s, const kw_cand *to, kw_decision d,
                          kw_step_phase ph, const kw_verdict *v, const char *why);
/* A constraint-breaking candidate of a sampling strategy (V record). */
int kw_engine_emit_viol(kw_eng *E, kw_shape *s, const kw_item *it, const char *why);
/* Append c to this round's plan. */
int kw_engine_item_add(kw_eng *E, kw_shape *s, const kw_cand *c, int group);
/* Repetitions of config id not yet journalled or pending (its cost this round). */
int kw_engine_cost(kw_eng *E, const kw_shape *s, uint64_t id);

#endif
