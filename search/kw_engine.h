/* kw_engine.h - the one-knob-at-a-time search engine and its baselines.
 *
 * kw_engine_run() tunes every requested shape of an evaluator over a knob space
 * and writes everything it does to a journal (kw_journal.h); kw_engine_resume()
 * continues a journal after a kill, taking every evaluation already recorded
 * from the journal instead of the evaluator, so the finished journal is
 * byte-identical to an uninterrupted run's.
 *
 * Where it lives: the engine core (kw_engine.c: rounds, memo, thread pool,
 * journal records, resume, the acceptance rule and the step function) and
 * its strategies behind one internal interface (kw_strategy.h): OFAT in
 * kw_ofat.c, random and exhaustive in kw_sample.c.
 *
 * How a run proceeds (the determinism contract):
 *   - The engine works in lock-step ROUNDS. In a round every unfinished shape
 *     plans its next batch of candidates (a pure function of its state), the
 *     batch of all shapes is evaluated on opts->threads threads, then each shape
 *     decides in shape order and its records are appended. The journal is thus a
 *     pure function of (seed, inputs, evaluator results), whatever the thread
 *     count or timing; only the time limit and the stop flag (checked between
 *     rounds, and by an evaluator that returns KW_EINTERRUPTED from inside a
 *     long evaluation: that round is then dropped unjournaled and the run
 *     pauses) depend on the clock. A resumed run's time limit counts from the
 *     resume.
 *   - Evaluations are memoised per (config id, shape, repetition); each is
 *     evaluated and journalled once. The budget counts them per shape.
 *     A noisy round runs and journals them repetition-major (every
 *     candidate's repetition 0, then every candidate's 1, ...), so drift of
 *     a measured device during the round hits its candidates alike.
 *
 * The OFAT strategy (per shape):
 *   1. evaluate the baseline; it is the incumbent;
 *   2. main: policy sweep (a first screening round evaluates every single-knob
 *      neighbour of the baseline and takes the best acceptable one, then the
 *      knobs are cycled in order of their screening gain, largest first; for
 *      the current knob every other value is evaluated and the best acceptable
 *      one taken) or greedy (evaluate every single-knob neighbour; take the
 *      best acceptable one), until a full round of knobs brings no accepted step;
 *   3. probes (opts->probes > 0): up to `probes` evaluated neighbours A are
 *      first steps: "blocked gains" first (A fails a guard now, but the same
 *      knob value was an acceptable step from an earlier incumbent: a later
 *      change blocks it and a second knob may repair the guard), then "faded
 *      gains" (guard-passing, once acceptable, now worse by at least
 *      min_effect: a later change turned the gain into a loss; most faded
 *      first), then the least-bad guard-passing ones, then other guard
 *      failures. The probe list (built once per local optimum) holds every
 *      neighbour of each blocked gain, then each faded gain combined with
 *      every other value of the knobs already changed from the baseline (one
 *      of them faded it; screened only by what was measured of the same value
 *      pair and by the estimate's interaction, kw_ofat_probe_cut), then pairs
 *      of two other first steps (by rank sum),
 *      then every other neighbour of the other first steps; second changes are
 *      ordered by what the same change did alone from the incumbent. It is evaluated in
 *      rounds of KW_PROBE_CHUNK new configs; as soon as a round holds a
 *      guard-passing pair that beats the incumbent, the two steps are taken
 *      (EXPLORE onto A, which may fail a guard, then ACCEPT) and main resumes;
 *      failed probes are stepped back (REVERT, phase probe);
 *   4. excursion (opts->tabu > 0): from the local optimum B take up to `tabu`
 *      exploratory moves (EXPLORE) to the best neighbour not yet visited in the
 *      excursion and not along the knob just changed (noiseless, screening on:
 *      a neighbour whose change measured at B bounds it out of beating B is not
 *      evaluated, kw_ofat_excursion_cut); as soon as a neighbour
 *      beats B it is accepted and main resumes; otherwise walk back to B one
 *      knob at a time (REVERT, phase backtrack);
 *   5. settle (noiseless evaluator only): walk to the best guard-passing
 *      config evaluated when it beats the incumbent (a step below min_effect
 *      is never taken during the search, and probes or excursions may have
 *      seen better configs than where they stopped): EXPLORE through evaluated
 *      configs on the shortest such walk, ACCEPT onto it (phase settle), no
 *      evaluation spent. Noisy runs do not settle: the best of many noisy
 *      means is biased low and a sub-threshold difference is no evidence.
 *      After a settle that moved, main resumes when budget remains; at a
 *      local optimum a settle reached by less than min_effect the probes pair
 *      only what the hop can have changed (kw_ofat_settle_filter);
 *   6. bounded fix: for each knob that differs from the baseline, in knob
 *      order, evaluate the incumbent with that knob back at its baseline value;
 *      the change is dropped (REVERT) only on evidence that the config
 *      without it is within min_effect of the converged config F0, else kept
 *      (KEEP). With a noisy evaluator that evidence is a one-sided Welch test
 *      at alpha that its mean lies below F0's mean + min_effect (a removal is
 *      judged like a forward step: no evidence, no step), so a removal whose
 *      config may be far worse - an overloaded config whose tail swings too
 *      much for any test - is never taken; a config failing a guard always
 *      keeps the change. The loss of one fix is thus bounded by min_effect.
 *      With a noiseless evaluator a change is dropped only when the config is
 *      at least as good without it (every measured gain is real), so the
 *      recommendation stays the best config evaluated.
 *      When the fix dropped a change the incumbent moved: main resumes from
 *      there, and the shape finishes once a main phase after a fix accepts
 *      nothing (each such cycle gains at least min_effect^2, so it ends).
 *   7. check before converging (screening on, kw_mf.h; budget left): every
 *      single-knob neighbour of the incumbent not yet evaluated fully (the
 *      screen may have skipped it) is evaluated in one unscreened round, best
 *      estimate first, its pairs learnt into the shape's error bound; a gain
 *      of min_effect is taken (ACCEPT, phase main) and main resumes, else the
 *      shape has converged at a one-knob local optimum under full evaluation.
 *   8. relink (noiseless, sweep policy, tabu > 0, no budget hit; at most twice per
 *      shape): at a converged incumbent, the best guard-passing config evaluated
 *      that no evaluated neighbour beats, 3-5 knobs away and off the incumbent's
 *      plateau, is a target; the walk takes, one knob at a time (EXPLORE), the best
 *      of the changes that set one more knob to the target's value, until two
 *      changes are left; a config that beats the incumbent by min_effect is
 *      accepted and main resumes, else the walk steps back (REVERT, phase
 *      backtrack) and the shape goes through settle and the fix again.
 * Acceptance (kw_engine_judge): every guard passes (metrics.guards == "") and
 * the primary metric's mean improves by at least min_effect_pct; with a noisy
 * evaluator each candidate is evaluated `repeats` times and the improvement
 * must also be significant: one-sided Welch t-test (GSL's Student t CDF),
 * Bonferroni-adjusted for the number of candidates compared in the decision,
 * below alpha. With a noisy evaluator each round also re-measures the config
 * it judges against (the control, kw_engine.c) and a challenger measured in
 * the same round is judged against those repetitions by a paired t-test
 * (kw_engine_paired_p) instead. An incumbent failing a guard is left for any guard-passing
 * neighbour ("repair"). Every step goes through ONE function that refuses (with
 * KW_ESTATE, nothing logged) a step that does not change exactly one knob of the
 * incumbent. Constraint-breaking neighbours are recorded as CONSTRAINT steps.
 *
 * Budget: main, probes and excursions stop when the shape's evaluations plus a
 * reserve for the bounded fix (repeats x knobs changed) reach the budget. A
 * shape stops early only when main, every probe of its local optimum and the
 * excursion found nothing (converged).
 *
 * Baselines through the same evaluator, memo and journal (no steps):
 *   random      the baseline, then uniform draws over valid configs without
 *               replacement (GSL mt19937 seeded from seed and shape) until the
 *               budget; constraint-breaking draws are recorded (V records);
 *   exhaustive  every config in mixed-radix order (last knob fastest).
 */
#ifndef KW_ENGINE_H
#define KW_ENGINE_H

#include "kw_journal.h"
#include "kw_search.h"

#define KW_ENGINE_DEFAULT_REPEATS 5   /* repetitions per candidate when noisy */

/* What the engine needs besides the search options. */
typedef struct kw_run_info {
    const char *journal_path;            /* e.g. "RUN_DIR/journal" */
    const char *version;                 /* knobwise version, recorded and checked on resume */
    int n_inputs;                        /* input files: names and content hashes */
    const char *const *input_names;
    const char *const *input_hashes;
    int n_attrs;                         /* free attributes (owner, paths...), recorded */
    const char *const *attr_keys;
    const char *const *attr_values;
    int no_sync;                         /* skip fsync (tests, benchmarks); records still flushed */
} kw_run_info;

typedef enum {
    KW_STOP_DONE,   /* every shape finished (converged, budget or exhausted) */
    KW_STOP_TIME,   /* the time limit paused the run (resumable) */
    KW_STOP_SIGNAL  /* opts->stop was set: paused after the current round (resumable); or
                     * an evaluation was stopped by a signal elsewhere (another MPI
                     * rank's): the round dropped, nothing journaled (KW_EINTERRUPTED) */
} kw_stop_reason;

typedef struct kw_engine_summary {
    kw_stop_reason stop;
    long evals;        /* evaluator calls made by this process */
    long replayed;     /* evaluations taken from the journal instead (resume) */
    long records;      /* records in the journal */
    long rounds;
    int torn;          /* resume dropped a torn or corrupt last record */
    char torn_msg[256];
    double elapsed_s;
    long estimates;    /* cheap estimates (evaluator predict(), P records) made or replayed */
    long screened_out; /* of them, candidates not evaluated because of it */
    long controls;     /* of evals, the same-round control re-measurements (noisy OFAT) */
    long pairs;        /* of evals, the pairing's re-measurements (noisy, kw_engine.c) */
    int idle;          /* KW_STOP_TIME: the pause's idle=K (0: this process kept a round;
                        * K: the K-th process in a row that kept none, kw_pause) */
    int whole;         /* this process made its first round whole past the limit (kw_pause) */
    long reranks;      /* the re-rank's paired comparisons (R records) made or replayed */
    long rerank_requests; /* the requests they simulated (2 n each), beside evals: the
                       * budget counts evals only */
    long aliases;      /* evaluations given an earlier one's result by their service key
                        * (kw_engine.c "aliases"), made or replayed: beside evals, not
                        * counted by the budget */
    long alias_mismatches; /* opts.alias_check: aliases whose full evaluation differed */
} kw_engine_summary;

/* Defaults: ofat, sweep, no budget, "p95_us", min_effect 1%, alpha 0.05,
 * repeats 5 (when noisy), seed 1, 1 thread, tabu 3, probes 32 (in practice every
 * worse neighbour: on synthetic spaces with planted needle pairs 32 probes
 * reached 30/30 within 0.5% of the optimum, 2 probes 18/30), all shapes. */
void kw_engine_opts_init(kw_engine_opts *o);

/* KW_EINPUT when a run with these options could not even evaluate the
 * baseline (budget > 0 below its repeats) or asks too many repeats: what
 * kw_engine_run refuses, for a caller to refuse before it writes anything. */
int kw_engine_budget_check(long budget, int repeats, int noisy);

/* Run from scratch; the journal must not exist or be empty (else KW_EINPUT).
 * Returns 0 when done or paused by the time limit (see out->stop),
 * KW_EINTERRUPTED when paused by opts->stop, KW_EINPUT for bad options,
 * KW_EIO when the journal cannot be written, KW_ENOMEM, or the evaluator's
 * fatal error (KW_ENOMEM/KW_EIO/KW_EINTERRUPTED from eval). Any other
 * evaluator error is recorded as a failed evaluation (guards "error:...").
 * out may be NULL. */
int kw_engine_run(kw_engine_summary *out, const kw_knobspace *ks, const kw_evaluator *ev,
                  const kw_engine_opts *opts, const kw_run_info *info);

/* Resume info->journal_path: a torn or corrupt last record is reported
 * (out->torn_msg) and truncated, a trailing pause record dropped; corruption in
 * the middle is refused (KW_ECORRUPT with the record number); a journal made
 * with other inputs, knob space, evaluator metrics/shapes, version or options
 * is refused (KW_EINPUT saying what changed). Only the thread count, the time
 * limit, the stop flag and the progress callback may differ. */
int kw_engine_resume(kw_engine_summary *out, const kw_knobspace *ks, const kw_evaluator *ev,
                     const kw_engine_opts *opts, const kw_run_info *info);

/* Options as recorded in a journal header (for `tune --resume DIR`): fills o
 * (after kw_engine_opts_init) and shapes_buf (KW_JOURNAL_SHAPE_MAX ints);
 * o->metric points into h, which must outlive o. */
void kw_engine_opts_from_header(kw_engine_opts *o, int *shapes_buf, const kw_jheader *h);

/* The one-knob rule: 0 and *knob = the changed knob if `to` differs from
 * `from` in exactly one knob, else KW_ESTATE naming the knobs. */
int kw_engine_step_check(int *knob, const kw_knobspace *ks, const kw_cand *from, const kw_cand *to);

/* One-sided Welch t-test p-value that mean b < mean a (samples given by mean,
 * sd, n). 0/1 when both variances are zero; NAN when n < 2. */
double kw_engine_welch_p(double mean_a, double sd_a, int n_a, double mean_b, double sd_b, int n_b);

/* A challenger and its reference measured in the same round (the control):
 * pair r is the reference's control repetition r and the challenger's
 * repetition r, measured in the same repetition sweep of the round. */
typedef struct kw_pair {
    int n, k;                 /* pairs (reps); the control block */
    uint64_t ref_id;
    double ref_mean;          /* the control block's mean (the one mean rule) */
    double a[KW_REPEATS_MAX]; /* the reference's primary, control repetition r */
    double c[KW_REPEATS_MAX]; /* the challenger's primary, repetition r */
} kw_pair;

/* One-sided paired t-test p-value that the challenger's mean lies below the
 * reference's + margin (NAN below two pairs; 0/1 when the differences do not vary). */
double kw_engine_paired_p(const kw_pair *pr, double margin);

#endif
