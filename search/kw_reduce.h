/* kw_reduce.h - the one reducer of a journal's records: fed body records one
 * at a time in journal order, it yields each shape's statistics (evaluations,
 * steps, a configuration's mean and spread over its repetitions), its best
 * (recommended) configuration, the net path of moving steps that leads there
 * and the knobs that changed. Every reader that needs "the result of a
 * shape" asks this one home: kw_journal_shape_result (verify, audit, tests),
 * the results writer's streamed summary (kw_results.c), and the mean rule
 * the engine writes its step and shape-done figures with (kw_repstat).
 *
 * Design choice: records in, answers out, no file and no whole journal
 * held. A configuration costs one small entry (id, counts, its repetitions'
 * primary values) and a moving step one copy without its strings, so a
 * streamed reader stays within the size of the search, not the journal's
 * text. Rejected: keeping the rules in each reader (kw_journal.c,
 * kw_runsum.c and kw_results.c had three copies that had to agree bit for
 * bit, one of them a comment "mirrors" away from drifting).
 *
 * Rules (journal format 1):
 * - A configuration's statistics are over its repetitions 0..repeats-1 found
 *   so far, summed in repetition order (kw_repstat); it passes when every
 *   repetition found passed every guard and returned 0. Control blocks
 *   (repetitions >= repeats, kw_engine.c "the control") decide steps only
 *   (their T records name them); they are counted apart (kw_jresult.controls)
 *   and enter no reported figure, so every config's figure is over the same
 *   number of repetitions measured the same way.
 * - The best of a shape with a D record is D's. Without one (a run cut
 *   short): OFAT takes the guard-passing position of lowest mean among the
 *   baseline and every configuration a moving step (accept, explore,
 *   revert) stood on, the first in step order among equals; random and
 *   exhaustive take the complete (every repetition in), guard-passing
 *   configuration of lowest mean, the first by its repetition 0's record
 *   among equals; with nothing passing, the baseline.
 * - The path is the moving steps up to the last one that stands on the best
 *   (OFAT only); the changes are the knobs where best differs from the
 *   baseline, each with the last path step that set it.
 */
#ifndef KW_REDUCE_H
#define KW_REDUCE_H

#include "kw_journal.h"

/* ---- the mean rule ---- */

#define KW_REPSTAT_MAX 1024 /* repetitions whose spread is computed (the mean takes them all) */

/* Repetitions of one configuration, added in repetition order. */
typedef struct kw_repstat {
    int n;               /* repetitions added */
    double sum;          /* of the primary, in the order added */
    double x[KW_REPSTAT_MAX];
    int ok;              /* every repetition passed every guard and returned 0 */
    const char *guards;  /* the first failing repetition's guards ("error" for a failed call), else "" */
} kw_repstat;

void kw_reduce_repstat_init(kw_repstat *s);
/* One repetition: its primary, its failed guards ("" = pass), the evaluator's return code. */
void kw_reduce_repstat_add(kw_repstat *s, double primary, const char *guards, int rc);
/* The mean (NAN with no repetition) and the sample standard deviation (0
 * below two repetitions) of the primary. */
double kw_reduce_repstat_mean(const kw_repstat *s);
double kw_reduce_repstat_sd(const kw_repstat *s);

/* ---- the pairing's figure ---- */

/* A neighbour N re-measured beside the recommendation P (kw_engine.c "the
 * pairing"): pair r is P's repetition pick[r] and N's nb[r], measured next
 * to each other. The figure is the mean paired difference d = N - P in
 * percent of P's mean, with its 95% interval mean(d) +- t(0.975, n-1) x
 * sd(d) / sqrt(n) (Student's t quantile from GSL; the paired t model of
 * kw_engine_paired_p: Student 1908; Montgomery, Design and Analysis of
 * Experiments, 8th ed., 2.5.1), also in percent of P's mean. Sums run in
 * pair order, so the engine and verify get the same bits. n = 0: every
 * figure NAN (a repetition failed); n = 1: no interval (NAN). */
typedef struct kw_pairdelta {
    int n;
    double pick_mean, nb_mean;   /* the two blocks' means */
    double delta_pct, lo_pct, hi_pct;
} kw_pairdelta;
void kw_reduce_pair_delta(kw_pairdelta *out, const double *pick, const double *nb, int n);

/* ---- the reducer ---- */

typedef struct kw_reduce kw_reduce;

/* A reducer for the journal whose header is h; h must outlive it (the
 * reducer reads its knob space, shapes and repeats). *out owned by the
 * caller (kw_reduce_free). */
int kw_reduce_new(kw_reduce **out, const kw_jheader *h);
void kw_reduce_free(kw_reduce *r);

/* Feed one body record (E, T, V, D, Q, Z; records of shapes outside the
 * header are ignored), in journal order. KW_ENOMEM when out of memory. */
int kw_reduce_add(kw_reduce *r, const kw_jrec *rec);

/* A shape's result from the records fed so far (rules above). The path's
 * steps are the reducer's copies (no reason, guards or constraint text:
 * ""), valid until the reducer is freed; free the path with
 * kw_journal_result_clear. KW_EINPUT for a shape the header lacks. */
int kw_reduce_result(kw_jresult *out, const kw_reduce *r, int shape);

/* The net path rule, for every reader that holds a shape's moving steps
 * (kw_journal_decision_taken) in journal order: the path is their prefix up to and
 * including the last one whose c= is best_id (none when no step stands on
 * it: the best is the baseline, or a configuration no step reached). moves
 * is an array of n elements of `stride` bytes, each with its c= id (a
 * uint64_t) at id_offset. Returns the path's length. */
size_t kw_reduce_path_len(const void *moves, size_t n, size_t stride, size_t id_offset,
                          uint64_t best_id);

/* One configuration of a shape as the reducer holds it (kw_reduce_each). */
typedef struct kw_rconfig {
    uint64_t id;
    const kw_cand *cand;
    int n;          /* repetitions found (0..repeats-1, the first record of each) */
    double mean;    /* of the primary, the mean rule's */
    int ok;         /* every repetition found passed every guard and returned 0 */
} kw_rconfig;
typedef int (*kw_reduce_fn)(void *ctx, const kw_rconfig *c);

/* Every configuration of shape evaluated so far to fn, in no defined order
 * (a reader that lists them orders them itself); a non-zero return stops the
 * walk and is returned. */
int kw_reduce_each(const kw_reduce *r, int shape, kw_reduce_fn fn, void *ctx);

/* Statistics of (shape, id) from the records fed so far: n, mean, sd,
 * guards_ok and guards ("error" or the first failing guards are reported as
 * "fail": the reducer keeps no text); mean_m, klass and first are not kept.
 * KW_EINPUT when it was never evaluated. */
int kw_reduce_stats(kw_jstats *out, const kw_reduce *r, int shape, uint64_t id);

#endif
