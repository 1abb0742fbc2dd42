/* kw_audit.h - which knob caused which change: the audit of a run (accepted
 * path with effects, rejected steps blamed on their knob), knob families, and
 * bisection between two configurations one knob at a time.
 *
 * Everything here reads a finished run summary (kw_runsum.h) or drives an
 * evaluator; nothing prints. The CLI verbs (cli_audit.c, cli_bisect.c) format. */
#ifndef KW_AUDIT_H
#define KW_AUDIT_H

#include "kw_runsum.h"
#include "kw_sbuf.h"

/* ---- knob families ---- */
typedef enum {
    KW_FAMILY_TILING,    /* <group>.tile_m/n/k, split_k, loop_order, double_buffer */
    KW_FAMILY_FUSION,    /* fuse_* */
    KW_FAMILY_PRECISION, /* precision, accum_precision, softmax_precision, sparsity */
    KW_FAMILY_BATCHING,  /* max_batch, batch_timeout_us */
    KW_FAMILY_PLACEMENT, /* placement, cores_per_request, launch_mode (runtime placement of work) */
    KW_FAMILY_OTHER,
    KW_FAMILY_COUNT
} kw_family;

kw_family kw_audit_knob_family(const char *knob);
const char *kw_audit_family_name(kw_family f);

/* ---- blame ---- */

/* What the run says about one knob on one shape. */
typedef struct kw_knob_blame {
    int n_accepted;        /* taken steps on the accepted path that changed it */
    double accepted_pct;   /* sum of their primary effects (negative = faster) */
    int n_rejected;        /* rejected steps that changed it ... */
    int n_guard;           /* ... of which a guard refused */
    int n_constraint;      /* ... of which a constraint refused */
    int worst_step;        /* rejected step with the largest primary increase, -1 */
    double worst_pct;      /* its effect */
    char guards[KW_GUARDS_LEN]; /* distinct guards that refused its values, ';'-joined */
} kw_knob_blame;

/* Blame for every knob (out has rs->ks.n_knobs entries) on shape. */
int kw_audit_blame(kw_knob_blame *out, const kw_runsum *rs, int shape);
/* The knob whose single step made the primary metric worst on shape (the
 * regression to name), or -1 when no step made it worse; *step its step index. */
int kw_audit_worst_knob(const kw_runsum *rs, int shape, int *step);

/* The audit text of a shape, as a reader wants it first: header, the
 * exploration in one line, the net path (kw_netpath.h: the one-knob steps that
 * ship, each with its effect, cumulative effect, bottleneck before -> after,
 * the other metrics it moved and a reproducing `knobwise eval` line), the
 * sensitivity of the recommendation to each knob, rejected steps counted by
 * knob, the largest regression. A step landing on a saturated configuration
 * shows "saturated", not a percentage.
 * eval_prefix: the command prefix that reproduces an evaluation, e.g.
 * "knobwise eval --space s.xml --seed 1" (the shape and --set words are added). */
int kw_audit_render(kw_sbuf *out, const kw_runsum *rs, int shape, const char *eval_prefix);
/* The same (exploration 0), or with the exploration behind it (1: `audit
 * --exploration`: the whole accepted path (probes, excursions, reverts, with
 * p-values) and every rejected step under its knob), with the shape's ranking note from
 * the run's results.xml (kw_results_ranking_read; NULL: resolved, or not
 * judged) as a "RANKING: ..." line under the header, the line `recommend`
 * prints: the final re-check could not rank the recommendation apart from its
 * rival, so the gain above it is uncertain by more than the run's minimum
 * effect (the journal alone does not know it). */
int kw_audit_render_note(kw_sbuf *out, const kw_runsum *rs, int shape, const char *eval_prefix,
                         int exploration, const char *ranking_note);

/* "--set k=v" words for the knobs of c that differ from the baseline ("" when none). */
void kw_audit_set_words(kw_sbuf *out, const kw_knobspace *ks, const kw_cand *c);

/* ---- effect by family ---- */
/* Sum of the primary effects (percent, negative = faster) of the accepted path's
 * steps per family on shape; counts in n (may be NULL). */
void kw_audit_family_effect(double out[KW_FAMILY_COUNT], int n[KW_FAMILY_COUNT],
                            const kw_runsum *rs, int shape);

/* ---- bisect ---- */

#define KW_BISECT_ORDERS_MAX 1000

typedef struct kw_bisect {
    int n_metrics;
    int n_knobs;                 /* knobs that differ between a and b */
    int knobs[KW_KNOB_MAX];      /* their indices, in knob order */
    double a[KW_METRIC_MAX];     /* metrics of a and of b */
    double b[KW_METRIC_MAX];
    char a_guards[KW_GUARDS_LEN], b_guards[KW_GUARDS_LEN];
    /* contribution of knobs[i] to metric m: mean over orders, min and max */
    double mean[KW_KNOB_MAX][KW_METRIC_MAX];
    double min[KW_KNOB_MAX][KW_METRIC_MAX];
    double max[KW_KNOB_MAX][KW_METRIC_MAX];
    int orders;                  /* orders walked */
    int evals;                   /* evaluator calls */
    int first_order[KW_KNOB_MAX];/* the first order walked (knob indices) */
} kw_bisect;

/* Walk from a to b changing one knob at a time, on evaluator shape `shape`
 * (repetition 0), over `orders` orders: the first is knob order, the others
 * seeded shuffles (GSL mt19937, `seed`). Contributions telescope, so for each
 * order and metric they sum exactly to b - a. An intermediate configuration
 * that breaks a constraint is avoided by taking the next knob of the order
 * that keeps the walk valid; when none does, KW_ECONSTRAINT naming it. */
int kw_audit_bisect(kw_bisect *out, const kw_knobspace *ks, const kw_evaluator *ev, int shape,
                    const kw_cand *a, const kw_cand *b, int orders, uint64_t seed);

#endif
