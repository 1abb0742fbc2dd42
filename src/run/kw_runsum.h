/* kw_runsum.h - a finished (or interrupted) run held in memory: what every
 * results writer, audit, verify, recommend and the report read.
 *
 * Design choice: the writers never read the journal themselves. One builder
 * (kw_runsum_build, kw_runsum_build_listed) feeds the journal's records to
 * this summary and to the journal reducer, whose best and net path it
 * takes; tests build summaries directly from a synthetic evaluator or from
 * hand-written journals. So the output formats do not depend on the
 * journal's byte layout, and the summary is plain data (one owner, one
 * kw_runsum_free).
 *
 * Per shape it keeps every distinct evaluated configuration (metrics averaged
 * over its repetitions 0..repeats-1, the one mean rule of search/kw_reduce.h:
 * re-measured blocks are counted, not averaged in), every step in journal order, and, after
 * kw_runsum_finish(), the accepted path, the ranking and the rejected list.
 *
 * Ranking rule (documented in README and results.xsd): rank 1 is the engine's
 * recommendation (the final incumbent of the accepted path, after the bounded
 * fix) when it passes every guard; the other guard-passing configurations
 * follow by the primary metric (ties: fewer knobs changed, then id).
 */
#ifndef KW_RUNSUM_H
#define KW_RUNSUM_H

#include <stdint.h>

#include "kw_journal.h" /* kw_journal_decision_taken */
#include "kw_metric.h"
#include "kw_search.h"

#define KW_RS_PHASE_LEN 24
#define KW_RS_REASON_LEN 160
#define KW_RS_TEXT_LEN 128

/* One distinct configuration evaluated (or refused by a constraint) on one shape. */
typedef struct kw_rs_config {
    kw_cand cand;
    uint64_t id;
    kw_metrics m;   /* mean over repetitions (kw_repstat's rule); guards: first non-empty;
                     * klass: first rep's */
    int reps;       /* repetitions averaged (0 when only refused by a constraint) */
    double *sum;    /* per metric, the repetitions' sum once there are two (else NULL) */
    int constraint; /* index of the broken constraint, or -1 */
    int step;       /* index (into the shape's steps) of the first step that produced it, or -1 */
    /* kw_evidence_recheck's re-measurement (larger sample, long thermal window;
     * not from the journal), or NULL: only the top of each ranking is
     * re-measured, so a pointer keeps the other configurations small. Owned
     * by the summary. */
    kw_metrics *recheck;
    /* 1: kw_evidence_recheck would have re-measured it, but the run measures
     * on a device that drifts: a figure outside the journal is not made
     * (results.xml <recheck not_measured=...>). */
    int recheck_unmeasured;
    /* 1: evaluated after the run, for the sensitivity around the
     * recommendation (kw_evidence_neighbours: a neighbour the journal lacks);
     * not in the journal, never ranked, never on a path. */
    int evidence;
} kw_rs_config;

/* One engine decision: from parent, one knob changed (n_changed says how many
 * really changed: verify refuses anything but 1). */
typedef struct kw_rs_step {
    long seq;        /* order in the run (the journal record number: 1-based, unique) */
    int num;         /* the step's number within its shape (1, 2, ...), as people see it */
    kw_cand parent, cand;
    uint64_t parent_id, id;
    int knob;        /* the changed knob (lowest index when several), -1 when none */
    int n_changed;   /* knobs whose value differs between parent and cand */
    kw_decision decision;
    double p_value;  /* NAN when no significance test was made */
    char phase[KW_RS_PHASE_LEN];  /* "sweep", "greedy", "explore", "probe", "fix", "random"... */
    char reason[KW_RS_REASON_LEN];
    int before;      /* config index of parent (metrics before), -1 when unknown */
    int after;       /* config index of cand, -1 when unknown */
} kw_rs_step;

/* A pair (the journal's N record, search/kw_engine.c "the pairing"): the
 * recommendation and one of its one-knob neighbours re-measured side by side
 * after the search, in alternating order. */
typedef struct kw_rs_pair {
    int knob, value;   /* the neighbour: the recommendation with knob at value */
    uint64_t nb_id;
    int n;             /* pairs (0: a repetition failed, guards says how) */
    double delta_pct;  /* mean paired difference neighbour - recommendation, % of the
                        * recommendation's mean (search/kw_reduce.h kw_reduce_pair_delta) */
    double lo_pct, hi_pct; /* its 95% interval (NAN below two pairs) */
    char guards[KW_GUARDS_LEN];
} kw_rs_pair;

typedef struct kw_rs_shape {
    char name[KW_NAME_MAX];
    int n_configs, cap_configs;
    kw_rs_config *configs;
    int n_steps, cap_steps;
    kw_rs_step *steps;
    /* open-addressing index id -> config index (size a power of two) */
    int *hash;
    int hash_size;
    /* the shape's best (kw_runsum_set_best: the journal reducer's, the D
     * record's when there is one): kw_runsum_finish takes it as the final
     * config and ends the accepted path on it */
    int has_best;
    uint64_t best_id;
    /* 1: a tuned shape whose search the run did not finish (the journal has
     * no D record for it: stopped by a signal or --time-limit); its
     * recommendation is the incumbent so far (results.xml search="stopped") */
    int stopped;
    /* the shape's dimensions (kw_results_set_limits, from the space), written
     * to results.xml for libknobwise's nearest-shape lookup; has_dims 0 when
     * the summary was made without the space */
    int has_dims, phase_decode;
    long batch, len, streams;
    /* filled by kw_runsum_finish */
    int baseline;     /* config index of the baseline, -1 when never evaluated */
    int final;        /* config index of the final incumbent (the recommendation) */
    int n_path;       /* accepted path: step indices of taken steps leading to final */
    int *path;
    int n_ranked;     /* guard-passing configs in rank order (config indices) */
    int *ranked;
    int n_rejected;   /* configs failing a guard or a constraint, in first-evaluated order */
    int *rejected;
    /* Counts over the whole run, set by kw_runsum_finish from the lists above
     * (evals_total: repetitions summed over configs). A partial summary
     * (kw_run_results' streamed one) holds only some configurations, and its
     * totals still count them all: the results writers read these. */
    long evals_total, configs_total, ranked_total, rejected_total;
    /* evaluations of re-measured blocks (repetitions >= repeats: the
     * controls, the pairing's) the builder counted but kept out of every
     * config's figures (the one mean rule); kw_runsum_finish adds them to
     * evals_total */
    long remeasured;
    /* the pairing's pairs in journal order (a noisy run's; none otherwise) */
    int n_pairs, cap_pairs;
    kw_rs_pair *pairs;
    /* kw_evidence_verdict: rank 1 against its rival (kw_results_rival) on
     * common random numbers (kw_evaluator.paired), the last comparison of
     * its sequence; verdict_rival -1 when none was made (no final evidence,
     * an evaluator that cannot pair, no rival) */
    int verdict_rival;
    kw_paired verdict;  /* its half-width widened over verdict_looks (kw_simci_pair_half_looks) */
    int verdict_looks;  /* the looks its sequence planned (1: one, at the run's 1 - alpha) */
    /* of evals_total, the aliases (E records with a=, search/kw_engine.c "aliases": an
     * earlier evaluation's result by service key, not counted by the budget); set from
     * the journal's count by the results' summary */
    long aliases_total;
} kw_rs_shape;

/* What the run was, recorded for the reader. */
typedef struct kw_rs_info {
    char run_id[KW_NAME_MAX];
    char version[KW_NAME_MAX];
    char strategy[KW_NAME_MAX];
    char owner[KW_RS_TEXT_LEN];
    char space[KW_NAME_MAX];        /* space name */
    char space_path[1024];          /* "" for the embedded default */
    char input_hash[3][17];         /* space, accelerator, workload */
    uint64_t seed;
    long budget;
    int noisy;                      /* repetitions differed (a measured run): figures of
                                     * different rounds are not paired */
    int measured;                   /* a worker measured it (the journal's evaluator
                                     * attribute): re-measuring outside the journal
                                     * would show figures no record backs */
    int live;                       /* a tune holds the run folder's lock now (set by
                                     * kw_run_open): a shape with no D record is not
                                     * finished yet rather than stopped */
    char evidence_missing[128];     /* a finished search whose evidence was not made:
                                     * why (kw_rundir_evidence_missing), set by the
                                     * reader (report); "" otherwise */
} kw_rs_info;

/* Thresholds the recommendation must keep meeting after rollout. */
typedef struct kw_rs_limits {
    double min_effect_pct;     /* a change must earn at least this */
    double alpha;
    double drift_min_cos;
    double drift_max_rel_rms;
    double max_throttle_pct;
    double max_fallback_pct;
    double sla_p99_us;         /* 0 = none */
    int final_requests;        /* sample size a re-measurement should use (0 = unknown) */
    /* continuous batching (LLM serving): the space's TTFT/TPOT p99 SLAs, 0 = none */
    double sla_ttft_p99_us, sla_tpot_p99_us;
} kw_rs_limits;

typedef struct kw_runsum {
    kw_knobspace ks;
    int n_metrics;
    char metric_names[KW_METRIC_MAX][KW_NAME_MAX];
    int primary;               /* index of the primary metric */
    kw_rs_info info;
    kw_rs_limits limits;
    int n_shapes;
    kw_rs_shape *shapes;
    /* portability: winner (rank 1) of shape i evaluated on shape j at port[i*n+j];
     * NULL until kw_evidence_portability; port_ok[i*n+j] 0 when it could not be evaluated */
    kw_metrics *port;
    int *port_ok;
    /* 1 for a partial summary (kw_run_results'): configs holds the
     * baseline, the recommendation, every configuration a step names and the
     * top of the ranked and rejected lists, not every configuration;
     * kw_runsum_finish then keeps the shapes' *_total counts as they are. */
    int partial;
} kw_runsum;

/* A new empty summary over knob space ks (copied) with the evaluator's metric
 * names; primary names the primary metric ("p95_us"). KW_EINPUT when it is not
 * among the names. *out owned by the caller (kw_runsum_free). */
int kw_runsum_new(kw_runsum **out, const kw_knobspace *ks, int n_metrics,
                  const char *const *metric_names, const char *primary);
void kw_runsum_free(kw_runsum *rs);

/* Index of shape `name`, adding it when absent (>= 0), or a negative code. */
int kw_runsum_shape(kw_runsum *rs, const char *name);
/* Index of shape `name`, or -1. */
int kw_runsum_find_shape(const kw_runsum *rs, const char *name);
/* Index of the metric `name`, or -1. */
int kw_runsum_metric(const kw_runsum *rs, const char *name);
/* The value of metric `name` in m (a vector in the summary's metric order), NAN when absent. */
double kw_runsum_value(const kw_runsum *rs, const kw_metrics *m, const char *name);

/* Record one evaluation (one repetition) of c on shape; repetitions of the
 * same configuration are averaged. */
int kw_runsum_add_eval(kw_runsum *rs, int shape, const kw_cand *c, const kw_metrics *m);
/* Record that c was refused by constraint index `constraint` (not evaluated). */
int kw_runsum_add_refused(kw_runsum *rs, int shape, const kw_cand *c, int constraint);
/* Record a pair of shape (the pairing's, an N record). */
int kw_runsum_add_pair(kw_runsum *rs, int shape, const kw_rs_pair *p);
/* The last pair of shape whose neighbour sets knob to value, or NULL. */
const kw_rs_pair *kw_runsum_find_pair(const kw_runsum *rs, int shape, int knob, int value);
/* Record a step (parent, cand, decision, p_value, phase, reason, seq, num are
 * read from s, num 0 meaning "next"; ids, knob, n_changed, before and after
 * are recomputed). */
int kw_runsum_add_step(kw_runsum *rs, int shape, const kw_rs_step *s);

/* ---- the one builder: a journal's records in, a finished summary out ----
 *
 * The journal's body records are fed one at a time, in journal order, to
 * the summary and to the journal reducer (search/kw_reduce.h), which alone
 * gives each tuned shape's statistics for the listings, its best (rank 1)
 * and its net path. The tuned shapes come in tuning order; limits other than
 * min_effect/alpha come from the space (kw_results_set_limits, kw_results.h).
 * *out owned by the caller. */

/* Every evaluation, refusal and step of a loaded journal (verify, audit,
 * report, recommend): one walk (kw_journal_each). */
int kw_runsum_build(kw_runsum **out, const kw_journal *j);
/* The journal file at path, streamed (kw_journal_scan: two reads, never
 * loaded) into a partial summary of what the result files list: the
 * baseline, the recommendation, every configuration a step names, the first
 * top_ranked + 1 of the ranking and the top_rejected nearest misses
 * (kw_runsum_reject_order), its totals still over every configuration; the
 * files rendered from it are those of kw_runsum_build's. *hdr gets the
 * journal's header and counters (no records; caller frees). */
int kw_runsum_build_listed(kw_runsum **out, kw_journal **hdr, const char *path, int top_ranked,
                           int top_rejected);

/* The live summary of a run's own journal (the stop path's: kw_run_exec).
 * kw_runsum_live_new opens the journal at path (it must exist) and
 * kw_runsum_live_update reads what its writer has appended since
 * (kw_journal_follow), each record once, into the builder's state;
 * kw_runsum_live_summary reads the rest and gives the summary
 * kw_runsum_build_listed(path, top_ranked, top_rejected) would give of the
 * records read, without reading the file again (*out owned by the caller;
 * *hdr the journal's header and counters, owned by lv). A failed update
 * fails every later call: the caller then reads the file
 * (kw_runsum_build_listed). Memory: one summary entry per configuration
 * evaluated (~0.8 KB), the steps and refusals, the reducer; past 250,000
 * configurations an update fails (KW_ENOMEM) rather than grow further. */
typedef struct kw_runsum_live kw_runsum_live;
int kw_runsum_live_new(kw_runsum_live **out, const char *path, int top_ranked, int top_rejected);
int kw_runsum_live_update(kw_runsum_live *lv);
int kw_runsum_live_summary(kw_runsum **out, const kw_journal **hdr, kw_runsum_live *lv);
void kw_runsum_live_free(kw_runsum_live *lv);

/* The shape's best configuration (the recommendation), as the journal
 * reducer says it (kw_runsum_build sets it for every tuned shape). */
void kw_runsum_set_best(kw_runsum *rs, int shape, uint64_t id);

/* The order of rejected configurations when a listing keeps only the nearest
 * misses: measured ones (has: repetitions and a finite primary) first, by
 * the primary, then by id (< 0: a first). */
int kw_runsum_reject_order(int has_a, double v_a, uint64_t id_a, int has_b, double v_b,
                           uint64_t id_b);

/* Derive baseline, accepted path, final incumbent, ranking, rejected list.
 * The final incumbent is the shape's best (kw_runsum_set_best), or without
 * one the top of the ranking; the accepted path is the reducer's rule
 * (kw_reduce_path_len): the moving steps up to the last on the final. */
int kw_runsum_finish(kw_runsum *rs);

/* Config index of id on shape, or -1. */
int kw_runsum_find_config(const kw_runsum *rs, int shape, uint64_t id);
/* The winner (rank 1) of a shape as a config index, or -1 when nothing passed. */
int kw_runsum_winner(const kw_runsum *rs, int shape);
/* Effect of a step on metric `metric` in percent of its before value
 * ((after - before) / before * 100; negative is faster); NAN when unknown. */
double kw_runsum_step_effect(const kw_runsum *rs, int shape, int step, int metric);

/* The chain of steps that leads from the baseline to config `config` on shape:
 * the accepted path up to the config's producing step's parent, then that
 * step. Writes up to max step indices into steps (in order), returns the count
 * (0 for the baseline or a config no step produced). */
int kw_runsum_lineage(const kw_runsum *rs, int shape, int config, int *steps, int max);
/* For knob k of config, the step (index) in its lineage that last set it, or -1. */
int kw_runsum_knob_step(const kw_runsum *rs, int shape, const int *lineage, int n_lineage, int knob);

#endif
