/* kw_netpath.h - the net path of a shape: the one-knob steps that lead from
 * the baseline to the recommendation as it ships (after settle and the bounded
 * fix), without the exploration (probes, excursions, reverts) that found it;
 * the one-line summary of that exploration; and the sensitivity of the
 * recommendation to each knob moved one value either way.
 *
 * One home for the rule: audit, the report, results.xml and verify all call
 * kw_netpath_build, so the four can never disagree about which steps ship.
 *
 * Only configurations some step produced (and the baseline) are used, so a
 * partial summary (kw_run_results' keeps every configuration a step
 * names) gives the same net path as the full one. */
#ifndef KW_NETPATH_H
#define KW_NETPATH_H

#include "kw_runsum.h"
#include "kw_guards.h"

/* How the net path was found. */
typedef enum {
    KW_NET_NONE,      /* no path: the baseline or the recommendation is unknown */
    KW_NET_DIRECT,    /* one step per knob that differs (each knob set once, to its shipped value) */
    KW_NET_ACCEPTED,  /* too many configurations to search: the accepted path with its loops cut */
    KW_NET_SHORTEST,  /* no direct chain was evaluated: the shortest chain through evaluated ones */
} kw_net_kind;

typedef struct kw_net_step {
    int before, after; /* config indices on the shape (both evaluated) */
    int knob;          /* the one knob that differs */
    int step;          /* a journal step (index into the shape's steps) from before to after, or -1 */
    int eval_step;     /* the step that first evaluated `after` (its configs[].step) */
} kw_net_step;

typedef struct kw_netpath {
    kw_net_kind kind;
    int n;             /* steps */
    kw_net_step *steps;/* [n], malloc'ed */
} kw_netpath;

/* The net path of shape (see kw_net_kind for the rule; ties between chains of
 * the same length: fewest guard-failing intermediate configurations, then the
 * earliest evaluated). *out is overwritten; free with kw_netpath_free. */
int kw_netpath_build(kw_netpath *out, const kw_runsum *rs, int shape);
void kw_netpath_free(kw_netpath *p);

/* Check that p is a chain of one-knob steps from the shape's baseline to its
 * recommendation, each configuration evaluated: 0, or KW_ECORRUPT naming the
 * first broken link (verify). A shape tuned without steps (random and
 * exhaustive search evaluate configurations, they take no one-knob steps)
 * has no net path, and nothing to prove. */
int kw_netpath_check(const kw_runsum *rs, int shape, const kw_netpath *p);

/* Effect of a net step on metric m in percent of its before value; NAN when
 * either side is not finite or zero. */
double kw_netpath_effect(const kw_runsum *rs, int shape, const kw_net_step *st, int metric);

/* kw_guards_saturated and kw_guards_saturation (the printed form of a change
 * involving a saturated configuration) live in search/kw_guards.h. */

/* The metrics a net step moved by at least the space's minimum effect, as
 * "name +x.x%, name -y.y%" (the primary excluded), into buf. */
void kw_netpath_moved(char *buf, size_t len, const kw_runsum *rs, int shape, const kw_net_step *st);

/* What the exploration behind a shape's result cost and found. */
typedef struct kw_explore_sum {
    long evaluations;  /* evaluator calls on the shape (repetitions counted), all of them */
    long remeasured;   /* of them, measurement-only: a measured run's re-measured blocks (the
                          controls, the pairing's), not the search's; 0 on a model run */
    long configs;      /* distinct configurations evaluated */
    int steps;         /* journaled steps */
    int taken;         /* steps that moved the incumbent (accept, explore, revert) */
    int accepts, explores, reverts, rejects, constraints;
    int probes;        /* steps of the probe phase */
    int excursions;    /* steps of the explore (tabu) and backtrack phases */
    int net;           /* steps on the net path */
    int best_step;     /* number (as people see it) of the step that first evaluated the recommendation, 0 */
    double best_pct;   /* recommendation against the baseline, percent of the primary (NAN unknown) */
} kw_explore_sum;

void kw_netpath_explore_sum(kw_explore_sum *out, const kw_runsum *rs, int shape, const kw_netpath *p);
/* One line (no newline): "1425 evaluations of 310 configurations in 2495 steps (...); found
 * ..."; with measurement-only evaluations, "1203 search evaluations of 310 configurations and
 * 222 measurement-only (the controls' and the pairing's re-measurements) in ...". */
void kw_netpath_explore_line(char *buf, size_t len, const kw_runsum *rs, const kw_explore_sum *e);

/* ---- sensitivity around the recommendation ---- */

typedef enum {
    KW_SENS_EDGE,       /* no value that way: the end of the domain */
    KW_SENS_MISSING,    /* that neighbour was never evaluated */
    KW_SENS_CONSTRAINT, /* that neighbour breaks a constraint */
    KW_SENS_EVALUATED,  /* evaluated: effect and guards below */
} kw_sens_state;

typedef struct kw_sens_side {
    kw_sens_state state;
    int value;          /* the neighbour's value index */
    int config;         /* its config index (EVALUATED, CONSTRAINT), else -1 */
    double pct;         /* primary effect against the recommendation, percent (NAN if not finite) */
    int same;           /* every metric and the guards equal the recommendation's: no effect */
    int evidence;       /* evaluated after the run (kw_evidence_neighbours), not by the journal */
    /* the pairing's pair of this neighbour (a noisy run's N record), or NULL.
     * With figures (pair->n > 0) an EVALUATED side's pct is the pair's
     * delta_pct: the neighbour and the recommendation measured side by side,
     * not their means from different rounds; a MISSING side may have a pair
     * too (the pairing measures every neighbour, evaluated or not). */
    const kw_rs_pair *pair;
} kw_sens_side;

typedef struct kw_sens {
    kw_sens_side side[2]; /* [0] one value down the domain, [1] one value up */
} kw_sens;

/* out[k] for every knob of the space (rs->ks.n_knobs entries). Returns 0, or
 * KW_EINPUT when the shape has no recommendation. */
int kw_netpath_sensitivity(kw_sens *out, const kw_runsum *rs, int shape);
/* Per knob over every shape with a recommendation: measured[k] shapes where
 * at least one neighbour was evaluated, inert[k] of them where the knob had
 * no effect (kw_netpath_sens_inert). A knob with measured[k] > 0 and inert[k] ==
 * measured[k] changed nothing anywhere. Arrays of rs->ks.n_knobs. */
int kw_netpath_knob_effects(int *measured, int *inert, const kw_runsum *rs);

/* The note a measured (noisy) run's sensitivity carries, into buf (no
 * trailing punctuation, lower case first: "a measured run: ..."), for audit
 * ("cell") and the report ("bar"): of the sides with a figure (evaluated, or
 * paired), paired when every one has a pair's figure (pair->n > 0), how many
 * when some do, and else that the figures are not paired; the sides without
 * a figure (kw_netpath_sens_unmeasured) are counted apart ("N cells have no
 * figure (not measured)"), never as paired. */
void kw_netpath_sens_note(char *buf, size_t len, const kw_runsum *rs, const kw_sens *out, int n_knobs,
                          const char *item);

/* A measured run's side without a figure (kw_rs_info.measured; a MISSING side
 * the pairing gave no figure): a measured run measures nothing outside its
 * journal (kw_evidence_neighbours), so the side is shown as not measured, for
 * a reason this writes into buf ("not searched, not paired", or "pair
 * failed: GUARDS"); returns 1. Any other side (a model run's MISSING side
 * reads "not evaluated"): 0, buf untouched. */
int kw_netpath_sens_unmeasured(char *buf, size_t len, const kw_runsum *rs, const kw_sens_side *o);

/* The sentence (no trailing punctuation) that explains "not measured". */
#define KW_NETPATH_UNMEASURED_NOTE                                                             \
    "not measured: a measured run shows no figure measured outside its journal; the search "   \
    "did not evaluate that neighbour and the pairing (--pair) has no figure for it"

/* A knob with no effect on the shape: at least one neighbour evaluated, and
 * every evaluated neighbour the same as the recommendation. */
int kw_netpath_sens_inert(const kw_sens *k);
/* Largest |effect| of the two sides (NAN when neither was evaluated). */
double kw_netpath_sens_magnitude(const kw_sens *k);

/* ---- changes that do not earn their place ---- */

/* A change of a recommendation (a knob where it differs from the shape's
 * baseline) that the run's own evaluations show does not earn its place:
 * the recommendation with that one knob back at the baseline's value was
 * evaluated, passes every guard, and reads less than the run's minimum
 * effect (kw_rs_limits.min_effect_pct) worse on the primary metric, or
 * better. The claim's disproof criterion "reverting any one of its changes
 * alone costs less than the minimum effect" already holds for it. */
typedef struct kw_unearned {
    int knob;
    int config;                /* the configuration with the knob reverted */
    double pct;                /* its primary against the recommendation's, percent */
    const kw_rs_pair *pair;    /* a measured run's: the pair pct comes from, else NULL */
} kw_unearned;

/* What reverting one change of config alone reads, from the run's own
 * evaluations (the rule kw_netpath_unearned judges by): KW_REVERT_FIGURE
 * with u->pct (a measured run: the pairing's pair, u->pair, its figure and
 * interval), KW_REVERT_GUARD when the reverted configuration fails a guard
 * (*guards: which; the change keeps it passing), KW_REVERT_NONE when the
 * run has no figure for it (not evaluated; a measured run: not paired) or
 * knob is no change of config. */
enum { KW_REVERT_NONE, KW_REVERT_FIGURE, KW_REVERT_GUARD };
int kw_netpath_revert(kw_unearned *u, const char **guards, const kw_runsum *rs, int shape, int config,
                      int knob);

/* out[0..n) (room for rs->ks.n_knobs) for config of shape, in knob order;
 * returns n. A model run judges by the two evaluations (deterministic, on
 * common random numbers); a measured (noisy) run only by the pairing's
 * figures of the recommendation's neighbours (kw_rs_pair), and only where
 * the pair's whole 95% interval lies below the minimum effect. 0 when the
 * shape has no baseline. */
int kw_netpath_unearned(kw_unearned *out, const kw_runsum *rs, int shape, int config);

/* The one sentence audit, recommend and the report print for them (no
 * trailing punctuation): "reverting qkv.tile_k=16 alone costs +0.30%, ...
 * less than the run's minimum effect (1.00%) ...". "" when n is 0. */
void kw_netpath_unearned_text(char *buf, size_t len, const kw_runsum *rs, int shape, int config,
                              const kw_unearned *u, int n);

#endif
