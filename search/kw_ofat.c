/* kw_ofat.c - the one-factor-at-a-time strategy (see kw_engine.h for what it
 * does and kw_strategy.h for the interface it implements).
 *
 * A shape's OFAT state is one sub-struct per phase - main walk, probes,
 * excursion, settle, bounded fix - and each phase's plan and decide sit side
 * by side below, in the order a shape goes through them:
 *
 *   main -> probe -> excursion -> backtrack -> settle -> fix -> check -> relink -> finish
 *      ^______________________________________________/       |        |
 *      ^      (a fix that dropped a change, or a settle that moved)    |
 *      |______________________________________________________/        |
 *      |          (the check before converging found a gain)           |
 *      |_______________________________________________________________/
 *                 (a relink walk found a gain; one that did not walks back:
 *                  backtrack -> settle -> fix -> check -> relink ...)
 *
 * Plans are pure functions of the state and the memo; decisions journal their
 * steps through the core's kw_engine_step (the one-knob rule) and move the
 * phase on. Rejected: one switch over a phase enum with every field shared by
 * every phase (the state a change to one phase could break was all of it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_guards.h"
#include "kw_idmap.h"
#include "kw_mix.h"
#include "kw_strategy.h"

#define KW_PROBE_CHUNK 16      /* new evaluations a probe round may plan: small rounds let a
                                * found pair return to the main phase before the budget is
                                * spent on the rest of the probe list (a fixed number, never
                                * the thread count: the journal must not depend on it) */
#define KW_PROBE_CHUNK_ITEMS 64 /* items (memo hits and constraint breakers included) per round */
#define KW_PROBE_BUDGET_SHARE 8 /* under a budget a probe round plans at most this share of it */
#define KW_PROBE_CHUNK_MIN 4    /* ... but at least this many new evaluations */
#define KW_PLIST_CAP0 256      /* first capacity of a probe list */
#define KW_SEEN_CAP0 256       /* first capacity of settle's list of evaluated configs */
#define KW_OFAT_PATH_MAX 64   /* main steps of the first descent kept for the restarts */
#define KW_MID_MAX 64          /* second steps of the three-knob repairs per local optimum */
#define KW_OFAT_PILOT_MISSES 2 /* pilot steps in a row not taken that end the pilot */
#define KW_TIE_MAX 16          /* first steps of a tie-pair round (kw_ofat_tie_find) */
#define KW_OFAT_RELINKS 2      /* relink walks per shape (kw_ofat_relink_target) */

typedef enum {
    KW_OFAT_MAIN,      /* sweep / greedy steps */
    KW_OFAT_PROBE,     /* two-step probes at a local optimum */
    KW_OFAT_EXCURSION, /* tabu excursion */
    KW_OFAT_BACKTRACK, /* walk back from a failed excursion */
    KW_OFAT_SETTLE,    /* noiseless: walk to the best config evaluated, then the fix */
    KW_OFAT_FIX,       /* bounded fix */
    KW_OFAT_RESTART,   /* noiseless, converged: walk to a restart point, descend again */
    KW_OFAT_RIVAL,     /* noiseless, budget: the first local optimum, walk to the rival basin */
    KW_OFAT_CHECK,     /* screened, converging: the unevaluated neighbours, unscreened */
    KW_OFAT_RELINK,    /* noiseless, converged: walk towards another basin's best config */
    KW_OFAT_FINISH     /* nothing left: the shape-done record */
} kw_ofat_phase;

typedef struct kw_ofat_main {
    int cursor, no_accept;
    int screened;             /* sweep: the first round (every neighbour) is done */
    int order[KW_KNOB_MAX];   /* sweep: knob order, largest screening gain first */
    int last_knob_accepted;   /* sweep: its other values were just evaluated */
    uint8_t inert[KW_KNOB_MAX]; /* sweep: every value gave the baseline's figure and guards in
                               * the first round, so later sweeps skip it (kw_ofat_mark_inert) */
    /* compose (kw_ofat_screen_order): each other knob's best gaining value of the first
     * round, largest gain first, tried once on the incumbent (a one-candidate round)
     * before the sweep */
    uint8_t compose_knob[KW_KNOB_MAX], compose_value[KW_KNOB_MAX];
    int n_compose, ccur;
    int composing;            /* this round is a compose round */
    /* poor[k][v]: in the first round knob k at value v failed a guard (not an
     * evaluator error); with a budget the sweep does not try it again
     * (kw_ofat_screen_order) */
    uint8_t poor[KW_KNOB_MAX][KW_VALUE_MAX];
    /* restarts (kw_ofat_restart_decide): the first descent's main steps, each the
     * incumbent it left and the knob value it took */
    kw_cand path_from[KW_OFAT_PATH_MAX];
    uint8_t path_knob[KW_OFAT_PATH_MAX], path_value[KW_OFAT_PATH_MAX];
    int n_path, restarts_done;
    kw_cand restart_from;     /* the first descent's optimum (progress shows it as the best) */
    /* the pilot (kw_ofat_pilot_next): after the first round, one-knob steps in the
     * order of the cheap estimate alone, each a one-candidate round judged on its
     * full evaluation, until the estimate sees no gain or PILOT_MISSES in a row fail */
    int piloted, piloting, pilot_misses;
    uint8_t pilot_tried[KW_KNOB_MAX][KW_VALUE_MAX];
    /* tie pairs (kw_ofat_tie_find): noiseless, two knobs of one block each of whose
     * changes alone gives exactly the incumbent's figure; the pairs of such changes
     * are judged in a round of their own, each a first step (tie_first[g], group g)
     * and one more change of the block */
    kw_cand tie_first[KW_TIE_MAX];
    int n_tie, tie_pending, tie_pairing;
    uint64_t tie_at;          /* the incumbent whose tie pairs were planned, */
    uint64_t tie_knobs;       /* and the knobs whose ties were first steps there */
    /* tie triples and their stepping stone (kw_ofat_tri_find): a path round's group g
     * stands tp_len[g] one-knob EXPLORE steps away from the incumbent (tp_step[g]) and
     * its items are one change from there; tp_kind 1: the tie triples, 2: the stone's
     * neighbours, 3: the faded composes, 4: fusion pairs (kw_ofat_fusion_find) */
    kw_cand tp_step[KW_TIE_MAX][3];
    int tp_len[KW_TIE_MAX];
    int tp_n, tp_kind, tp_pending, tp_running;
    /* faded composes (noiseless): compose candidates of this incumbent that gained below
     * the minimum effect, the largest gain first; two of them are tried together
     * (tp_kind 3: EXPLORE onto the first, the second's change judged from there) */
    kw_cand faded[2];
    double faded_mean[2];
    int n_faded;
    int inert_rechecked;      /* the inert knobs of blocks were swept once from a local optimum */
    int rechecking;           /* this round is that sweep */
    uint64_t fusion_at;       /* the incumbent whose fusion pairs were planned (tp_kind 4, */
    uint64_t fusion_knobs;    /* kw_ofat_fusion_find), and the fusion knobs paired there */
    /* a rival basin (kw_ofat_rival_note): the first round's runner-up change, which lost
     * on the winner; the walk goes on from it at the first local optimum (KW_OFAT_RIVAL) */
    int rival_judged, rival_set, rival_used;
    kw_cand rival;
    char rival_why[KW_REASON_LEN];
    int check_set;            /* the check before converging (kw_ofat_check_plan) ran at */
    uint64_t check_at;        /* the incumbent check_at */
} kw_ofat_main;

typedef struct kw_ofat_probe {
    int probed;               /* the local optimum probed_at has been probed */
    uint64_t probed_at;
    int n_first;
    int n_blocked;            /* first[0..n_blocked): guard-failing "blocked gains" */
    int n_faded;              /* then n_faded guard-passing "faded gains" */
    kw_cand first[KW_PROBE_MAX];
    int plist_ready;          /* the probe list of this local optimum is built */
    kw_item *plist;           /* second steps, most promising first (kw_ofat_probe_list) */
    int n_plist, cap_plist, pcur;
    /* knob k at value v was once an acceptable step (improving, guard-passing) from some
     * incumbent: when it later fails a guard, another knob's change blocks it (an
     * interaction) and a probe tries to repair it first. Main's decisions fill it. */
    uint8_t improved[KW_KNOB_MAX][KW_VALUE_MAX];
    /* repairs (kw_ofat_probe_repairs): once the list is spent, a guard-failing first step
     * F is walked through a second change of a knob of its block (mid[i], group
     * KW_PROBE_MAX + i) to every third change of another knob of the block */
    /* faded pairs (noiseless, kw_ofat_faded_pairs): per first step of a probe round that
     * found no winner, its two best pairs (second knobs distinct) that gained on the
     * incumbent below the minimum effect, tried together in a round of their own
     * (fp_path[g]: the first step, then the better pair; fp_third[g]: that pair with
     * the other's second change) */
    int fp_pending, fp_running, fp_n;
    kw_cand fp_path[KW_TIE_MAX][2];
    kw_cand fp_third[KW_TIE_MAX];
    int repair0;              /* plist index where the repairs begin, -1 not added yet */
    int chunk0;               /* plist index of this round's first item */
    int n_mid;
    kw_cand mid[KW_MID_MAX];
    int mid_first[KW_MID_MAX]; /* index of mid[i]'s first step */
    /* a restart's probes (kw_ofat_restart_decide): while ban_knob >= 0 they plan no
     * config with knob ban_knob at ban_value (the step the first descent took from
     * here) and accept only a pair that beats restart_from; a win or settle lifts it */
    int ban_knob, ban_value;
    int have_rep;             /* rep_*: the best guard-passing repair seen, and its path */
    double rep_mean;
    kw_cand rep_first, rep_mid, rep_best;
    /* measured interactions (kw_ofat_probe_learn): over the pairs of one-knob changes this
     * shape's probes evaluated, knobs a and b, the least ratio of the pair's primary to the
     * product of its two changes alone (f(x+a+b) f(x) / (f(x+a) f(x+b)); 1: the changes
     * compose, < 1: together they do better than each alone says). n_inter counts them;
     * they grow round by round, so a list's later chunks use its earlier ones. */
    float inter[KW_KNOB_MAX][KW_KNOB_MAX];
    uint16_t n_inter[KW_KNOB_MAX][KW_KNOB_MAX];
    /* the estimate's miss on interactions (kw_ofat_pair_uncoupled): over this shape's
     * measured probe pairs across op blocks, the least ratio of the measured interaction
     * (as inter above) to the estimate's (kw_ofat_est_interaction); n_est_miss counts them */
    double est_miss_lo;
    int n_est_miss;
    /* and per knob (kw_ofat_pair_uncoupled): over this shape's measured probe pairs of
     * knob k with any other knob (of its block, of another, block-less), the least such
     * ratio; n_kmiss counts them */
    double kmiss_lo[KW_KNOB_MAX];
    int n_kmiss[KW_KNOB_MAX];
    /* guard repairs across blocks (kw_ofat_probe_cut): knob k at value v failed a guard
     * alone in g_tried[k][v] probe pairs with a knob of another block whose change alone
     * passed, and the pair failed a guard too; g_repaired[k][v]: one such pair passed */
    uint8_t g_tried[KW_KNOB_MAX][KW_VALUE_MAX], g_repaired[KW_KNOB_MAX][KW_VALUE_MAX];
    uint8_t g_planned[KW_KNOB_MAX][KW_VALUE_MAX]; /* such pairs in this round's plan */
    /* measured value pairs (kw_ofat_pair_recalls): the least ratio (as inter above) of
     * each pair of two knob values measured from an incumbent, keyed by the two values
     * and the incumbent's values of every knob outside other op blocks (the pair's own
     * block or blocks and the block-less knobs); an open-addressed table, 0 = empty */
    kw_idmap vp;  /* key -> index of vp_r */
    float *vp_r;
    size_t vp_r_cap;
    int pairs0;               /* plist index where parts (2) and (3) begin */
    int rep_end;              /* plist index where part (0), the estimated repairs, ends */
    /* value pairs whose changes stood still (kw_ofat_pair_unmoved): per pair of two knob
     * values, keyed by the values alone, the last incumbent's two one-knob ratios
     * f(x+a) / f(x), f(x+b) / f(x) and the pair's ratio there (as inter above) */
    kw_idmap um;  /* key -> index of um_r */
    float (*um_r)[3];
    size_t um_r_cap;
    int q_end;                /* where (2)'s queue pairs end (kw_ofat_queue_pair) */
    int blk_end;              /* and where (2)'s pairs within one block end */
    /* a local optimum settle reached (kw_ofat_settle_decide) less than the minimum effect
     * from the incumbent it left, and the knobs that walk changed: its probe list is the
     * hop's (kw_ofat_settle_filter) */
    int settled;
    uint64_t settled_at;
    uint8_t hop[KW_KNOB_MAX];
} kw_ofat_probe;

typedef struct kw_ofat_excursion {
    kw_cand start;            /* its start B, the local optimum */
    int n_path;
    kw_cand path[KW_TABU_MAX + 1];
    int moves_left, last_knob;
    /* a relink (kw_ofat_relink_target, KW_OFAT_RELINK) is an excursion whose moves
     * each set one more knob to the target's value; n_relinked targets so far */
    kw_cand target;
    kw_cand relinked[KW_OFAT_RELINKS];
    int n_relinked;
    int relinking;            /* the walk is a relink's: its walk back says so */
} kw_ofat_excursion;

typedef struct kw_ofat_settle {
    int on;                   /* this shape settles (noiseless evaluator) */
    int moved;                /* the last settle moved the incumbent */
    kw_cand *seen;            /* every config evaluated, in journal order */
    int n_seen, cap_seen;
} kw_ofat_settle;

typedef struct kw_ofat_fix {
    kw_cand f0;               /* the converged config the fix started from */
    int knob;                 /* next knob to check */
    int reverts;              /* changes this fix dropped */
    int post_fix;             /* main resumed after a fix that dropped changes */
    int accepts_since;        /* steps accepted since main resumed */
} kw_ofat_fix;

/* The re-rank's comparisons, made while planning the finish (kw_ofat_rerank_plan) and
 * journalled by its decide. */
#define KW_OFAT_RERANK_RIVALS 64 /* rivals of one re-rank: the best K - 1 and one per other basin */
#define KW_OFAT_RERANK_CMP_MAX (KW_OFAT_RERANK_RIVALS * 4) /* looks per rival: n0 .. CAP, at most 4 */
typedef struct kw_ofat_rerank_cmp {
    int cand, lead;           /* seen[] indices of the challenger and the leader (-1: the incumbent) */
    long n;
    kw_paired v;
} kw_ofat_rerank_cmp;

typedef struct kw_ofat_rerank {
    int planned, done;
    int n_top;                /* rivals compared */
    int n, lead, won;         /* comparisons; the winner (seen[] index, -1: the incumbent) and
                               * the comparison it won */
    kw_ofat_rerank_cmp cmp[KW_OFAT_RERANK_CMP_MAX];
} kw_ofat_rerank;

typedef struct kw_ofat {
    kw_ofat_phase ph;
    kw_ofat_rerank rr;        /* the re-rank (once, at the finish) */
    kw_ofat_main main;
    kw_ofat_probe probe;
    kw_ofat_excursion ex;
    kw_ofat_settle settle;
    kw_ofat_fix fix;
} kw_ofat;

/* A phase's plan either returns a batch (KW_OFAT_PLANNED, possibly empty for
 * a phase that only decides) or moves to a later phase (KW_OFAT_MOVED). */
#define KW_OFAT_PLANNED 0
#define KW_OFAT_MOVED 1

/* ------------------------------------------------------------------ shared by the phases */

/* A knob the caller froze (opts.frozen: the block cannot use it): no step
 * ever changes it. */
static int kw_ofat_frozen(const kw_eng *E, int k)
{
    return k < 64 && (E->o.frozen >> k & 1u);
}

/* Two knobs of one block: the same name up to its last '.' (conv3x3.tile_m and
 * conv3x3.tile_k), the block's kernel tiles, buffers and stages, which share its
 * on-chip resources. Knobs without a '.' belong to no block. */
static int kw_ofat_same_block(const kw_knobspace *ks, int a, int b)
{
    const char *x = ks->knobs[a].name, *y = ks->knobs[b].name;
    const char *dx = strrchr(x, '.'), *dy = strrchr(y, '.');
    return dx && dy && dx - x == dy - y && strncmp(x, y, (size_t)(dx - x)) == 0;
}

/* c takes a restart's tabu step (kw_ofat_restart_decide) */
static int kw_ofat_banned(const kw_shape *s, const kw_cand *c)
{
    const kw_ofat_probe *pr = &((const kw_ofat *)s->st)->probe;
    return pr->ban_knob >= 0 && c->v[pr->ban_knob] == pr->ban_value;
}

/* Every single-knob neighbour of `from`, knob by knob, values ascending
 * (frozen knobs left out). */
static int kw_ofat_add_neighbours(kw_eng *E, kw_shape *s, const kw_cand *from)
{
    for (int k = 0; k < E->ks->n_knobs; k++)
        for (int v = 0; v < E->ks->knobs[k].n_values && !kw_ofat_frozen(E, k); v++) {
            if (v == from->v[k])
                continue;
            kw_cand c = *from;
            c.v[k] = (uint8_t)v;
            int rc = kw_engine_item_add(E, s, &c, 0);
            if (rc != 0)
                return rc;
        }
    return 0;
}

/* Judge items [from, to) (skipping constraint/dropped ones) against ref, the
 * statistics of config refc; an item measured in this round beside refc's
 * control is judged against the control (kw_engine_pair). The winner is the
 * acceptable one with the lowest mean (first on ties), a guard-passing one
 * before any that fails guards (accepted toward the guards). */
static int kw_ofat_judge_items(kw_eng *E, kw_shape *s, const kw_cand *refc, const kw_cst *ref,
                               const char *prefix, int m, kw_verdict *v)
{
    int win = -1, win_ok = 0;
    double win_mean = 0;
    kw_pair *pr = s->ctl_k != 0 ? malloc(sizeof *pr) : NULL;
    for (int i = 0; i < s->n_items; i++) {
        kw_item *it = &s->items[i];
        if (it->con >= 0 || it->dropped)
            continue;
        kw_cst c;
        kw_engine_stats(E, s->shape, it->id, &c);
        int paired = pr ? kw_engine_pair(E, s, refc, it->id, pr) : 0;
        kw_engine_judge(E, ref, &c, paired > 0 ? pr : NULL, m, prefix, &v[i]);
        if (paired < 0 && v[i].ok && ref->ok) {
            /* a memo hit in a round with a control: its repetitions are of an
             * earlier moment than the control's, and a gain over the reference's
             * stale samples is the error the control exists to avoid (measured:
             * on the test worker slowing 1% per request, such a step took
             * launch_mode back and forth, README "the control") */
            v[i].ok = 0;
            snprintf(v[i].why, sizeof v[i].why, "%sgain %.2f%% from an earlier round's "
                     "measurement, not beside the reference's control: not taken", prefix,
                     v[i].gain);
        }
        /* a repair (passes every guard) wins over any step toward the guards
         * (kw_engine_judge: both fail) */
        if (v[i].ok && (win < 0 || c.ok > win_ok || (c.ok == win_ok && c.mean < win_mean))) {
            win = i;
            win_mean = c.mean;
            win_ok = c.ok;
        }
    }
    free(pr);
    return win;
}

static int kw_ofat_count_evaluated(const kw_shape *s)
{
    int m = 0;
    for (int i = 0; i < s->n_items; i++)
        m += s->items[i].con < 0 && !s->items[i].dropped;
    return m;
}

/* Journal the non-winning items (of one probe group, or all when group < 0)
 * as CONSTRAINT or REJECT steps. */
static int kw_ofat_emit_rejects(kw_eng *E, kw_shape *s, int win, kw_step_phase ph,
                                const kw_verdict *v, int group)
{
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        int rc = 0;
        if (it->dropped || i == win || (group >= 0 && it->group != group))
            continue;
        if (it->con >= 0) {
            char why[KW_REASON_LEN];
            snprintf(why, sizeof why, "breaks constraint %s", E->ks->constraints[it->con].name);
            rc = kw_engine_step(E, s, &it->cand, KW_DECIDE_CONSTRAINT, ph, NAN, it->con, why);
        } else if (v[i].ok) {
            char why[KW_REASON_LEN + 64];
            snprintf(why, sizeof why, "%s, but not the best of the step", v[i].why);
            rc = kw_engine_step_judged(E, s, &it->cand, KW_DECIDE_REJECT, ph, &v[i], why);
        } else {
            rc = kw_engine_step_judged(E, s, &it->cand, KW_DECIDE_REJECT, ph, &v[i], v[i].why);
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* 1 when an item of group g was evaluated this round (not cut by the budget or
 * the screen, no constraint broken) */
static int kw_ofat_group_tried(const kw_shape *s, int g)
{
    for (int i = 0; i < s->n_items; i++)
        if (s->items[i].group == g && s->items[i].con < 0 && !s->items[i].dropped)
            return 1;
    return 0;
}

/* One group's journaled steps (a probe's, a tie pair's or a path round's; the
 * one-knob rule holds throughout): EXPLORE along its path (path[0..len), why[t]
 * the reason of step t; a pair's path is its first step), its other items (group
 * g) rejected from there, then the round's winner accepted when it is in the
 * group, else REVERTs back along the path to start with `back` as the reason. */
static int kw_ofat_path_steps(kw_eng *E, kw_shape *s, const kw_cand *path, int len,
                              const char *const *why, int g, int win, const kw_verdict *v,
                              const kw_cand *start, const char *back)
{
    int rc = 0;
    for (int t = 0; t < len && rc == 0; t++)
        rc = kw_engine_step(E, s, &path[t], KW_DECIDE_EXPLORE, KW_STEP_PROBE, NAN, -1, why[t]);
    if (rc == 0)
        rc = kw_ofat_emit_rejects(E, s, win, KW_STEP_PROBE, v, g);
    if (rc == 0 && win >= 0 && s->items[win].group == g)
        return kw_engine_step_judged(E, s, &s->items[win].cand, KW_DECIDE_ACCEPT, KW_STEP_PROBE,
                                     &v[win], v[win].why);
    for (int t = len - 2; t >= -1 && rc == 0; t--)
        rc = kw_engine_step(E, s, t >= 0 ? &path[t] : start, KW_DECIDE_REVERT, KW_STEP_PROBE,
                            NAN, -1, back);
    return rc;
}

/* A round of groups walked along their paths (the tie-pair round, each path its
 * first step; the path rounds): its items judged against the incumbent (`judge`
 * the verdicts' prefix), then per group g with an evaluated item its steps
 * (kw_ofat_path_steps along path[g], len[g] steps), the failed groups first, the
 * winning one last, as the probes do. *win: the winning item or -1; *inc: the
 * incumbent's figures. */
typedef struct kw_ofat_paths {
    const char *judge, *back;
    const char *const *why;
    int n, len[KW_TIE_MAX];
    const kw_cand *path[KW_TIE_MAX];
} kw_ofat_paths;

static int kw_ofat_paths_decide(kw_eng *E, kw_shape *s, kw_verdict *v, const kw_ofat_paths *w,
                               int *win, kw_cst *inc)
{
    kw_engine_stats_c(E, s, &s->pos, inc);
    kw_cand start = s->pos;
    *win = kw_ofat_judge_items(E, s, &s->pos, inc, w->judge, kw_ofat_count_evaluated(s), v);
    int win_group = *win >= 0 ? s->items[*win].group : -1;
    for (int pass = 0; pass < 2; pass++)
        for (int g = 0; g < w->n; g++) {
            if ((pass == 0) == (g == win_group) || !kw_ofat_group_tried(s, g))
                continue;
            int rc = kw_ofat_path_steps(E, s, w->path[g], w->len[g], w->why, g, *win, v, &start,
                                        w->back);
            if (rc != 0)
                return rc;
        }
    return 0;
}

/* c as an item of group g, unless this round already holds it (each config once) */
static int kw_ofat_item_add_once(kw_eng *E, kw_shape *s, const kw_cand *c, int g)
{
    uint64_t id = kw_knobs_cand_id(E->ks, c);
    for (int i = 0; i < s->n_items; i++)
        if (s->items[i].id == id)
            return 0;
    return kw_engine_item_add(E, s, c, g);
}

/* main resumes (after an accepted probe pair, excursion step, tie pair or path round;
 * in the last two main never left, so only the counters move) */
static void kw_ofat_resume_main(kw_ofat *o)
{
    o->ph = KW_OFAT_MAIN;
    o->main.no_accept = 0;
    o->fix.accepts_since++;
    o->main.last_knob_accepted = -1;
}

/* ------------------------------------------------------------------ phase transitions */

static void kw_ofat_enter_fix(kw_shape *s)
{
    kw_ofat *o = s->st;
    if (o->settle.on && o->ph != KW_OFAT_SETTLE) {
        o->ph = KW_OFAT_SETTLE;
        return;
    }
    o->fix.f0 = s->pos;
    o->fix.knob = 0;
    o->fix.reverts = 0;
    o->ph = KW_OFAT_FIX;
}

/* No excursion from a local optimum that settle reached by less than the minimum effect
 * (kw_ofat_settle_decide: pr->settled_at, noiseless): the local optimum it hopped from
 * had its excursion, which walked the same configs but for the hop's one or two
 * sub-threshold changes, and the probes here pair only what the hop can have changed
 * (kw_ofat_settle_filter) for the same reason. Issue 18: on the growth bench's 27 knobs
 * such optima were most of the 3 excursions per shape. */
static void kw_ofat_enter_excursion(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    if (E->o.tabu <= 0 || s->budget_hit ||
        (o->probe.settled && o->probe.settled_at == kw_knobs_cand_id(E->ks, &s->pos))) {
        kw_ofat_enter_fix(s);
        return;
    }
    o->ex.start = s->pos;
    o->ex.n_path = 1;
    o->ex.path[0] = s->pos;
    o->ex.moves_left = E->o.tabu;
    o->ex.last_knob = -1;
    o->ex.relinking = 0;
    o->ph = KW_OFAT_EXCURSION;
}

#define KW_ITEMS_MAX_ORDER 512 /* items an excursion round orders (a round is one knob step: the neighbours) */
#define KW_OFAT_RESTARTS 1 /* second descents per shape (kw_ofat_restart_decide) */
#define KW_RELINK_DIST_MIN 3 /* changes from the incumbent to a relink target: at two the probes */
#define KW_RELINK_DIST_MAX 5 /* pair the changes; a walk of d changes costs at most d(d+1)/2 - 1 */

/* A relink target (noiseless, converged): the best guard-passing config evaluated
 * that is a local optimum of its own evaluated neighbours (none of them better),
 * KW_RELINK_DIST_MIN..MAX knobs from the incumbent, not on the incumbent's plateau
 * (the same primary: a tie through a knob that does not matter here) and not a
 * target before. Path relinking (Glover, "A template for scatter search and path
 * relinking", Artificial Evolution 1997, LNCS 1363, sec. 4): the configs between two
 * elite solutions of different basins hold optima neither descent reaches; the walk
 * (kw_ofat_relink_plan) sets one more of the target's values per step, each a
 * journaled one-knob step judged on its full evaluation. Why (doc/search-log.md): the
 * edge NPU's ResNet conv_b8_c4, seed 14, converged +1.69% over the exhaustive
 * optimum at a true one-knob local optimum; the optimum is three changes away
 * (max_batch=2, batch_timeout_us=500, placement=round_robin; alone +8.1%, +0%,
 * +1.0%), and one knob from a probe pair of an earlier incumbent (conv3x3.tile_m=128
 * with those three values, 0.68% better than that incumbent: below the minimum
 * effect), this rule's target: the walk took batch_timeout_us, placement, then
 * max_batch onto the optimum. 1 and *t set when there is one. */
static int kw_ofat_relink_target(kw_eng *E, kw_shape *s, kw_cand *t)
{
    const kw_ofat *o = s->st;
    const kw_ofat_settle *se = &o->settle;
    const kw_knobspace *ks = E->ks;
    kw_cst inc;
    kw_engine_stats_c(E, s, &s->pos, &inc);
    if (!(inc.n == E->reps && inc.ok && isfinite(inc.mean) && inc.mean > 0))
        return 0;
    int best = -1;
    double best_mean = INFINITY;
    for (int i = 0; i < se->n_seen; i++) {
        const kw_cand *c = &se->seen[i];
        int d = 0;
        for (int k = 0; k < ks->n_knobs; k++)
            d += c->v[k] != s->pos.v[k];
        if (d < KW_RELINK_DIST_MIN || d > KW_RELINK_DIST_MAX)
            continue;
        kw_cst cs;
        kw_engine_stats_c(E, s, c, &cs);
        if (!(cs.n == E->reps && cs.ok && isfinite(cs.mean)) || cs.mean >= best_mean ||
            fabs(cs.mean - inc.mean) <= 1e-9 * inc.mean)
            continue;
        int used = 0;
        for (int r = 0; r < o->ex.n_relinked && !used; r++)
            used = memcmp(&o->ex.relinked[r], c, sizeof *c) == 0;
        int local = !used;
        for (int k = 0; k < ks->n_knobs && local; k++)
            for (int v = 0; v < ks->knobs[k].n_values && local; v++) {
                if (v == c->v[k])
                    continue;
                kw_cand n = *c;
                n.v[k] = (uint8_t)v;
                kw_cst ns;
                kw_engine_stats_c(E, s, &n, &ns);
                local = !(ns.n == E->reps && ns.ok && ns.mean < cs.mean);
            }
        if (local) {
            best = i;
            best_mean = cs.mean;
        }
    }
    kw_error_clear();
    if (best < 0)
        return 0;
    *t = se->seen[best];
    return 1;
}

/* Converged and checked: finish, or (noiseless, no budget hit, a relink target
 * left) relink, or (noiseless, no budget hit, a restart point left) restart. */
static void kw_ofat_converged(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    const kw_ofat_main *m = &o->main;
    kw_ofat_excursion *ex = &o->ex;
    int noiseless_sweep = o->settle.on && !s->budget_hit && E->o.policy == KW_POLICY_SWEEP;
    if (noiseless_sweep && E->o.tabu > 0 && o->probe.ban_knob < 0 &&
        ex->n_relinked < KW_OFAT_RELINKS && kw_ofat_relink_target(E, s, &ex->target)) {
        ex->relinked[ex->n_relinked++] = ex->target;
        ex->start = s->pos;
        ex->n_path = 1;
        ex->path[0] = s->pos;
        ex->moves_left = -2; /* the walk stops two changes short of the target (evaluated) */
        for (int k = 0; k < E->ks->n_knobs; k++)
            ex->moves_left += ex->target.v[k] != s->pos.v[k];
        ex->last_knob = -1;
        ex->relinking = 1;
        o->ph = KW_OFAT_RELINK;
    } else if (noiseless_sweep && m->restarts_done < KW_OFAT_RESTARTS &&
               m->restarts_done < m->n_path)
        o->ph = KW_OFAT_RESTART;
    else
        o->ph = KW_OFAT_FINISH;
}

/* Converged: the one home where the search decides so. With the screening on
 * (kw_mf.h) and budget left, the incumbent first gets the check before
 * converging (kw_ofat_check_plan), once per incumbent; then kw_ofat_converged. */
static void kw_ofat_finish(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    kw_ofat_main *m = &o->main;
    if (E->o.estimate && E->ev->predict && E->o.screen <= 0 && !s->budget_hit &&
        !(m->check_set && m->check_at == kw_knobs_cand_id(E->ks, &s->pos)))
        o->ph = KW_OFAT_CHECK;
    else
        kw_ofat_converged(E, s);
}

static void kw_ofat_after_main(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    if (o->fix.post_fix && o->fix.accepts_since == 0) {
        kw_ofat_finish(E, s); /* nothing new after the fix: done */
        return;
    }
    o->fix.post_fix = 0;
    if (o->main.rival_set && !o->main.rival_used && !s->budget_hit) {
        o->main.rival_used = 1;
        o->ph = KW_OFAT_RIVAL;
        return;
    }
    uint64_t here = kw_knobs_cand_id(E->ks, &s->pos);
    if (E->o.probes > 0 && !s->budget_hit && !(o->probe.probed && o->probe.probed_at == here))
        o->ph = KW_OFAT_PROBE;
    else
        kw_ofat_enter_excursion(E, s);
}

/* ------------------------------------------------------------------ main */

/* The pilot's next step (multi-fidelity screening; opts.estimate): of the
 * incumbent's single-knob neighbours not tried by the pilot yet (frozen
 * knobs and constraint breakers left out; not the knobs the sweep calls
 * inert: the estimate is taken from the incumbent, where such a knob may
 * matter, and leaving them out lost 2 of 240 runs at 1%), the one with the best cheap
 * estimate, if its estimate gains the minimum effect over the incumbent's
 * (an estimate failing a guard never does). 1 and c set when there is one.
 * The pilot runs after the first round (which compares the best-estimated
 * neighbours of the baseline on full evaluations, and so picks between
 * basins the estimate ranks wrongly: placement against max_batch on
 * validate_small decode) and before compose: at a budget below a sweep, it
 * walks towards the estimate's optimum several changes away, one judged step
 * per evaluation, where a sweep spends n_values - 1 evaluations per knob.
 * Only the order comes from the estimate; each step is judged on its full
 * evaluation. Estimates are pure functions of (candidate, shape), so a
 * resumed run plans the same steps; they are counted with the estimates.
 * Noiseless evaluators only, as settle and the restart: a noisy round of one
 * candidate measures the control beside it (twice the repetitions of a sweep
 * candidate), and the measuring evaluator's estimate is the model of another
 * device (on the test worker drifting 1% per request, the pilot's one-step
 * rounds took the search from the optimum to the baseline). */
static int kw_ofat_pilot_next(kw_eng *E, kw_shape *s, kw_cand *c)
{
    kw_ofat_main *m = &((kw_ofat *)s->st)->main;
    const kw_knobspace *ks = E->ks;
    kw_metrics mt;
    int n = 0, found = 0;
    double lim = INFINITY;
    for (int k = -1; k < ks->n_knobs; k++)
        for (int v = 0; v < (k < 0 ? 1 : ks->knobs[k].n_values); v++) {
            kw_cand x = s->pos;
            if (k >= 0) {
                if (v == s->pos.v[k] || m->pilot_tried[k][v] || kw_ofat_frozen(E, k))
                    continue;
                x.v[k] = (uint8_t)v;
                if (kw_knobs_cand_violates(ks, &x) >= 0)
                    continue;
            }
            memset(&mt, 0, sizeof mt);
            int rc = kw_engine_predict(E, &x, s->shape, &mt);
            n++;
            double e = rc == 0 && mt.guards[0] == '\0' ? mt.v[E->primary] : NAN;
            kw_error_clear();
            if (k < 0) { /* the incumbent's own estimate: the bar to pass */
                lim = isfinite(e) ? e * (1.0 - E->o.min_effect_pct / 100.0) : INFINITY;
                continue;
            }
            if (isfinite(e) && e < lim) {
                lim = e;
                *c = x;
                found = 1;
            }
        }
    s->estimates += n;
    E->sum.estimates += n;
    return found;
}

/* 1 when c was evaluated, passes every guard and gives exactly the primary of
 * the incumbent (inc); only a noiseless evaluator's figures tie. */
static int kw_ofat_ties(kw_eng *E, const kw_shape *s, const kw_cand *c, const kw_cst *inc)
{
    kw_cst cs;
    kw_engine_stats_c(E, s, c, &cs);
    return cs.n == E->reps && cs.ok && cs.mean == inc->mean;
}

/* Tie pairs (noiseless): after a main round without a gain, each knob k the round
 * changed (in_round[k]) whose changes alone give exactly the incumbent's figure,
 * while a change of another knob of its block does too, becomes a first step of
 * a tie-pair round: every such change of k paired with every such change of the
 * block's other knobs (kw_ofat_main_plan), judged against the incumbent and
 * journaled as probes are (kw_ofat_path_steps). Two tiles of one block whose
 * product is what fits on chip leave the figure unchanged one at a time and gain
 * together (validate_gqa_h100 and validate_small prefill: qkv.tile_m = 64 with
 * qkv.tile_n = 64); the probes pair them only once the walk has converged and
 * their blocked and faded gains are spent, which a budget of 1-2% of the space
 * does not reach. Each knob's ties are paired once per incumbent. */
static void kw_ofat_tie_find(kw_eng *E, kw_shape *s, const uint8_t *in_round)
{
    kw_ofat_main *m = &((kw_ofat *)s->st)->main;
    const kw_knobspace *ks = E->ks;
    kw_cst inc;
    m->n_tie = 0;
    m->tie_pending = 0;
    if (E->ev->noisy)
        return;
    kw_engine_stats_c(E, s, &s->pos, &inc);
    if (!(inc.n == E->reps && inc.ok && isfinite(inc.mean)))
        return;
    uint64_t here = kw_knobs_cand_id(ks, &s->pos);
    if (m->tie_at != here) {
        m->tie_at = here;
        m->tie_knobs = 0;
    }
    for (int k = 0; k < ks->n_knobs && k < 64; k++) {
        if (!in_round[k] || kw_ofat_frozen(E, k) || (m->tie_knobs >> k & 1u))
            continue;
        int partner = 0;
        for (int j = 0; j < ks->n_knobs && !partner; j++)
            for (int w = 0; w < ks->knobs[j].n_values && !partner && j != k; w++) {
                kw_cand c = s->pos;
                c.v[j] = (uint8_t)w;
                partner = w != s->pos.v[j] && !kw_ofat_frozen(E, j) &&
                          kw_ofat_same_block(ks, k, j) && kw_ofat_ties(E, s, &c, &inc);
            }
        if (!partner)
            continue;
        m->tie_knobs |= (uint64_t)1 << k;
        for (int v = 0; v < ks->knobs[k].n_values && m->n_tie < KW_TIE_MAX; v++) {
            kw_cand c = s->pos;
            c.v[k] = (uint8_t)v;
            if (v != s->pos.v[k] && kw_ofat_ties(E, s, &c, &inc))
                m->tie_first[m->n_tie++] = c;
        }
    }
    kw_error_clear();
    m->tie_pending = m->n_tie > 0;
}

/* The tie-pair round (kw_ofat_tie_find): first step g plus each tied change of
 * another knob of its block, each config once. */
static int kw_ofat_tie_plan(kw_eng *E, kw_shape *s)
{
    kw_ofat_main *m = &((kw_ofat *)s->st)->main;
    const kw_knobspace *ks = E->ks;
    kw_cst inc;
    kw_engine_stats_c(E, s, &s->pos, &inc);
    for (int g = 0; g < m->n_tie; g++) {
        int ka;
        kw_engine_step_check(&ka, ks, &s->pos, &m->tie_first[g]);
        for (int j = 0; j < ks->n_knobs; j++)
            for (int w = 0; w < ks->knobs[j].n_values && j != ka; w++) {
                kw_cand b = s->pos, c = m->tie_first[g];
                b.v[j] = (uint8_t)w;
                c.v[j] = (uint8_t)w;
                if (w == s->pos.v[j] || kw_ofat_frozen(E, j) || !kw_ofat_same_block(ks, ka, j) ||
                    kw_ofat_banned(s, &c) || !kw_ofat_ties(E, s, &b, &inc))
                    continue;
                int rc = kw_ofat_item_add_once(E, s, &c, g);
                if (rc != 0)
                    return rc;
            }
    }
    kw_error_clear();
    m->tie_pairing = s->n_items > 0;
    return KW_OFAT_PLANNED;
}

/* A third change of a tied pair (kw_ofat_tri_find): knob j of the pair's block, neither
 * of the pair's knobs, at a value whose change alone from the incumbent was evaluated
 * and either ties exactly or fails a guard (not an evaluator error). */
static int kw_ofat_tri_third(kw_eng *E, const kw_shape *s, const kw_cst *inc, int ka, int kb,
                             int j, int w)
{
    const kw_knobspace *ks = E->ks;
    if (j == ka || j == kb || w == s->pos.v[j] || kw_ofat_frozen(E, j) ||
        !kw_ofat_same_block(ks, ka, j))
        return 0;
    kw_cand c = s->pos;
    c.v[j] = (uint8_t)w;
    kw_cst cs;
    kw_engine_stats_c(E, s, &c, &cs);
    if (cs.n != E->reps)
        return 0;
    return kw_ofat_ties(E, s, &c, inc) || (!cs.ok && strncmp(cs.guards, "error", 5) != 0);
}

/* Tie triples (noiseless): a tie-pair round without a gain whose pairs give exactly
 * the incumbent's figure again is on a plateau of its block, and a third tile of the
 * block may gain there, or fit there where it failed a guard alone. Each such pair
 * (two EXPLORE steps from the incumbent) becomes a group of a round of its own: the
 * pair plus each change of a third knob of its block that ties alone or fails a guard
 * alone (kw_ofat_tri_third). When no triple gains but one passes every guard, the
 * best of those whose third change failed a guard alone is a stepping stone (tp_kind 2): its one-knob neighbours along the
 * knobs outside the block, judged against the incumbent in one more round (three
 * EXPLORE steps onto it, then ACCEPT or REVERT back, one knob per step). The trapped
 * seed (validate_resnet_h100 conv_b8_c4 seed 5): conv3x3 tile_m 64 and tile_n 32 tie,
 * tile_k 576 falls back alone, the three together pass at +1.0% and with
 * placement=least_loaded give the exhaustive optimum (141.18 us against 142.21);
 * the probes' three-knob repairs reach it only once the probe list is spent. */
static void kw_ofat_tri_find(kw_eng *E, kw_shape *s, const kw_cst *inc)
{
    kw_ofat_main *m = &((kw_ofat *)s->st)->main;
    const kw_knobspace *ks = E->ks;
    m->tp_n = 0;
    m->tp_pending = 0;
    /* a neighbour that gains, however little, is the probes' evidence of a gain
     * nearby (a faded gain, paired first); a plateau is no evidence: the triples
     * come first only when no evaluated one-knob neighbour gains at all */
    for (int k = 0; k < ks->n_knobs; k++)
        for (int w = 0; w < ks->knobs[k].n_values; w++) {
            kw_cand c = s->pos;
            c.v[k] = (uint8_t)w;
            kw_cst cs;
            if (w == s->pos.v[k])
                continue;
            kw_engine_stats_c(E, s, &c, &cs);
            if (cs.n == E->reps && cs.ok && cs.mean < inc->mean) {
                kw_error_clear();
                return;
            }
        }
    for (int i = 0; i < s->n_items && m->tp_n < KW_TIE_MAX; i++) {
        const kw_item *it = &s->items[i];
        int ka, kb, any = 0;
        if (it->con >= 0 || it->dropped || !kw_ofat_ties(E, s, &it->cand, inc) ||
            kw_engine_step_check(&ka, ks, &s->pos, &m->tie_first[it->group]) != 0 ||
            kw_engine_step_check(&kb, ks, &m->tie_first[it->group], &it->cand) != 0)
            continue;
        for (int j = 0; j < ks->n_knobs && !any; j++)
            for (int w = 0; w < ks->knobs[j].n_values && !any; w++)
                any = kw_ofat_tri_third(E, s, inc, ka, kb, j, w);
        if (!any)
            continue;
        int g = m->tp_n++;
        m->tp_step[g][0] = m->tie_first[it->group];
        m->tp_step[g][1] = it->cand;
        m->tp_len[g] = 2;
    }
    kw_error_clear();
    m->tp_kind = 1;
    m->tp_pending = m->tp_n > 0;
}

/* Fusion pairs (noiseless, under a budget). Knob f fuses knob j's block when the
 * caller says so (opts.fuses: src/run/kw_knobuse.c from the catalogue's
 * kw_catalogue_fuses): the catalogue's fuse_qkv and fuse_gate_up merge the block's
 * GEMMs with merge="qkv" / "gate_up" into one wider GEMM (src/model/kw_cost.c), whose
 * tiles are the knobs of those GEMMs' tiling group, whatever it is named, so the
 * merged GEMM's best tiles are not the separate GEMMs' and each change can lose alone
 * while the two gain together. validate_small_mlp decode, every seed of 20: the
 * exhaustive optimum has fuse_gate_up = on with gate_up.tile_n = 64; seed 11 at 1%
 * (12 evaluations) measured them +1.84% and +1.31% alone from its incumbent, 602.79 us
 * together against its 685.86. The probes pair them only once the walk has converged. */
static int kw_ofat_fuses_block(const kw_eng *E, int f, int j)
{
    return f < KW_KNOB_MAX && j < 64 && (E->o.fuses[f] >> j & 1u);
}

static int kw_ofat_fusion_knob(const kw_eng *E, int f)
{
    for (int j = 0; j < E->ks->n_knobs; j++)
        if (!kw_ofat_frozen(E, j) && kw_ofat_fuses_block(E, f, j))
            return 1;
    return 0;
}

/* The sweep order under a budget (noiseless): a fusion knob goes just ahead of the
 * first knob of the block it fuses in its own tier (kw_ofat_screen_order), so that
 * its change is measured from the incumbent before those tiles are swept, and its
 * fusion pairs (kw_ofat_fusion_find) come while the budget lasts. A knob of an
 * earlier tier keeps its place (validate_mlp_npu decode at 1%: 20 of 20 seeds lost
 * when fuse_gate_up went ahead of a tile measured to gain). */
static void kw_ofat_fusion_order(kw_eng *E, kw_ofat_main *m, const int *tier)
{
    int n = E->ks->n_knobs;
    if (E->o.budget <= 0 || E->ev->noisy)
        return;
    for (int i = 0; i < n; i++) {
        int f = m->order[i];
        if (kw_ofat_frozen(E, f) || !kw_ofat_fusion_knob(E, f))
            continue;
        int at = 0;
        while (at < i && (tier[m->order[at]] != tier[f] ||
                          !kw_ofat_fuses_block(E, f, m->order[at])))
            at++;
        for (int q = i; q > at; q--)
            m->order[q] = m->order[q - 1];
        m->order[at] = f;
    }
}

/* The largest factor by which one change of a knob of the block fusion knob f fuses
 * was measured to move the figure alone, from the incumbent or from the baseline
 * (the first round): max(r, 1/r) of the ratio to its reference; 1 when none was. */
static double kw_ofat_block_reach(kw_eng *E, kw_shape *s, int f)
{
    const kw_knobspace *ks = E->ks;
    const kw_cand *ref[2] = {&s->pos, &s->base};
    double reach = 1.0;
    for (int t = 0; t < 2; t++) {
        kw_cst r0;
        kw_engine_stats_c(E, s, ref[t], &r0);
        if (r0.n != E->reps || !r0.ok || !(r0.mean > 0))
            continue;
        for (int j = 0; j < ks->n_knobs; j++)
            for (int w = 0; w < ks->knobs[j].n_values; w++) {
                kw_cand c = *ref[t];
                c.v[j] = (uint8_t)w;
                kw_cst cs;
                if (w == ref[t]->v[j] || !kw_ofat_fuses_block(E, f, j))
                    continue;
                kw_engine_stats_c(E, s, &c, &cs);
                if (cs.n != E->reps || !cs.ok || !(cs.mean > 0))
                    continue;
                double r = cs.mean / r0.mean;
                reach = fmax(reach, fmax(r, 1.0 / r));
            }
    }
    kw_error_clear();
    return reach;
}

/* After a sweep round of a fusion knob without a gain (noiseless, under a budget):
 * each of its changes that passes every guard becomes the first step of a group of
 * a path round (tp_kind 4), its items that change plus one change of the block it
 * fuses (kw_ofat_fusion_items). Each fusion knob once per incumbent; a pending tie
 * pair or path round goes first. */
static void kw_ofat_fusion_find(kw_eng *E, kw_shape *s, const uint8_t *in_round)
{
    kw_ofat_main *m = &((kw_ofat *)s->st)->main;
    const kw_knobspace *ks = E->ks;
    if (E->o.budget <= 0 || E->ev->noisy || m->tie_pending || m->tp_pending)
        return;
    kw_cst inc;
    kw_engine_stats_c(E, s, &s->pos, &inc);
    if (inc.n != E->reps || !inc.ok || !(inc.mean > 0))
        return;
    uint64_t here = kw_knobs_cand_id(ks, &s->pos);
    if (m->fusion_at != here) {
        m->fusion_at = here;
        m->fusion_knobs = 0;
    }
    m->tp_n = 0;
    for (int f = 0; f < ks->n_knobs && f < 64; f++) {
        if (!in_round[f] || kw_ofat_frozen(E, f) || (m->fusion_knobs >> f & 1u) ||
            !kw_ofat_fusion_knob(E, f))
            continue;
        m->fusion_knobs |= (uint64_t)1 << f;
        if (s->pos.v[f] != s->base.v[f]) /* fused already: its block was swept fused */
            continue;
        for (int v = 0; v < ks->knobs[f].n_values && m->tp_n < KW_TIE_MAX; v++) {
            kw_cand c = s->pos;
            c.v[f] = (uint8_t)v;
            kw_cst cs;
            kw_engine_stats_c(E, s, &c, &cs);
            if (v == s->pos.v[f] || cs.n != E->reps || !cs.ok || !isfinite(cs.mean))
                continue;
            /* retuning the block can win back at most what its knobs were seen to move:
             * a fusion change that loses more is left (validate_small prefill seed 10
             * at 1%: fuse_qkv +21% alone, the qkv tiles moved the figure 11% at most) */
            if (cs.mean / inc.mean >= kw_ofat_block_reach(E, s, f))
                continue;
            m->tp_step[m->tp_n][0] = c;
            m->tp_len[m->tp_n++] = 1;
        }
    }
    kw_error_clear();
    m->tp_kind = 4;
    m->tp_pending = m->tp_n > 0;
}

/* block changes tried with each fusion change: the least-bad one alone (with 2, the
 * second's evaluation took what validate_small_mlp decode seed 7 at 2% needed next:
 * 20 seeds 229 -> 230 of 239 at 2% with 1, no other cell moved) */
#define KW_OFAT_FUSION_PAIRS 1

/* The cheap estimate of c (opts.estimate), counted; NAN when there is none or it fails a
 * guard. */
static double kw_ofat_est_primary(kw_eng *E, kw_shape *s, const kw_cand *c)
{
    kw_metrics mt;
    memset(&mt, 0, sizeof mt);
    s->estimates++;
    E->sum.estimates++;
    int rc = kw_engine_predict(E, c, s->shape, &mt);
    double e = rc == 0 && mt.guards[0] == '\0' ? mt.v[E->primary] : NAN;
    kw_error_clear();
    return e;
}

/* A fusion pair may take a change of the block that was never evaluated, from the
 * incumbent nor from the baseline (the screen deferred it, kw_mf.h): of those, the one
 * whose pair with the fusion change (group g, knob f) has the least cheap estimate,
 * when that estimate is below the estimate of the pair with the measured change
 * (bj[0], bw[0]; nb 0: none). The estimate ranks the block's tiles on the fused
 * config, the kernel's own figure (stage 1, which it shares with the full
 * evaluation), where a measured change alone ranks them on the unfused one.
 * validate_small_mlp decode seeds 3 and 4 at 1% (12 evaluations): the optimum is
 * fuse_gate_up = on with gate_up.tile_n = 64, which the first round deferred (its
 * estimate alone the worst of the round, 6,059 us); the fusion pair took
 * gate_up.tile_m = 256, measured +1.96% alone (its pair estimated 1,440 us, 553 us
 * full), where tile_n = 64's pair is estimated 1,010 us and is the optimum, 495 us.
 * Returns 1 + j x KW_VALUE_MAX + w for the change (j, w) that replaces the measured
 * one, 0 for none. Estimates are pure functions of (candidate, shape): a resumed run
 * plans the same pair. */
static int kw_ofat_fusion_unmeasured(kw_eng *E, kw_shape *s, int g, int f, int nb,
                                     const int *bj, const int *bw)
{
    kw_ofat_main *m = &((kw_ofat *)s->st)->main;
    const kw_knobspace *ks = E->ks;
    if (!E->o.estimate || !E->ev->predict)
        return 0;
    double lim = INFINITY;
    if (nb > 0) {
        kw_cand c = m->tp_step[g][0];
        c.v[bj[0]] = (uint8_t)bw[0];
        double e = kw_ofat_est_primary(E, s, &c);
        if (isfinite(e))
            lim = e;
    }
    int pick = 0;
    for (int j = 0; j < ks->n_knobs; j++)
        for (int w = 0; w < ks->knobs[j].n_values; w++) {
            if (w == s->pos.v[j] || kw_ofat_frozen(E, j) || !kw_ofat_fuses_block(E, f, j) ||
                (E->o.budget > 0 && m->poor[j][w]))
                continue;
            kw_cand a = s->pos, b = s->base, c = m->tp_step[g][0];
            a.v[j] = (uint8_t)w;
            b.v[j] = (uint8_t)w;
            c.v[j] = (uint8_t)w;
            kw_cst ca, cb;
            kw_engine_stats_c(E, s, &a, &ca);
            kw_engine_stats_c(E, s, &b, &cb);
            if (ca.n == E->reps || cb.n == E->reps || kw_knobs_cand_violates(ks, &c) >= 0 ||
                kw_ofat_banned(s, &c))
                continue;
            double e = kw_ofat_est_primary(E, s, &c);
            if (isfinite(e) && e < lim) {
                lim = e;
                pick = 1 + j * KW_VALUE_MAX + w;
            }
        }
    kw_error_clear();
    return pick;
}

/* A fusion pair round's items (tp_kind 4): per group (a fusion knob's change), that change
 * plus each of the KW_OFAT_FUSION_PAIRS least-bad changes of the block it fuses.
 * Least bad: by a change's figure alone over its reference's, the reference the
 * incumbent where the change was evaluated from it, else the baseline (the first
 * round). Only changes measured to lose alone are paired: one that ties alone left
 * the merged GEMM's figure unchanged too (validate_mlp_npu decode at 1%: pairs of
 * fuse_gate_up with inert tiles took the evaluations its optimum needed, 20 of 20
 * seeds lost), and one that gains alone is the sweep's. */
static int kw_ofat_fusion_items(kw_eng *E, kw_shape *s)
{
    kw_ofat_main *m = &((kw_ofat *)s->st)->main;
    const kw_knobspace *ks = E->ks;
    kw_cst inc, base;
    kw_engine_stats_c(E, s, &s->pos, &inc);
    kw_engine_stats_c(E, s, &s->base, &base);
    for (int g = 0; g < m->tp_n; g++) {
        int f, bj[KW_OFAT_FUSION_PAIRS] = {0}, bw[KW_OFAT_FUSION_PAIRS] = {0}, nb = 0;
        double br[KW_OFAT_FUSION_PAIRS] = {0}; /* gcc -Wmaybe-uninitialized: read only once set */
        kw_engine_step_check(&f, ks, &s->pos, &m->tp_step[g][0]);
        for (int j = 0; j < ks->n_knobs; j++)
            for (int w = 0; w < ks->knobs[j].n_values; w++) {
                if (w == s->pos.v[j] || kw_ofat_frozen(E, j) || !kw_ofat_fuses_block(E, f, j) ||
                    (E->o.budget > 0 && m->poor[j][w]))
                    continue;
                kw_cand a = s->pos, b = s->base;
                a.v[j] = (uint8_t)w;
                b.v[j] = (uint8_t)w;
                kw_cst ca, cb;
                kw_engine_stats_c(E, s, &a, &ca);
                kw_engine_stats_c(E, s, &b, &cb);
                double r = NAN;
                if (ca.n == E->reps && ca.ok)
                    r = ca.mean / inc.mean;
                else if (ca.n != E->reps && cb.n == E->reps && cb.ok && base.n == E->reps &&
                         w != s->base.v[j])
                    r = cb.mean / base.mean;
                if (!(r > 1.0)) /* measured to lose alone, the other half of the pair's case */
                    continue;
                int at = nb < KW_OFAT_FUSION_PAIRS ? nb++ : KW_OFAT_FUSION_PAIRS;
                for (; at > 0 && br[at - 1] > r; at--)
                    if (at < KW_OFAT_FUSION_PAIRS) {
                        bj[at] = bj[at - 1];
                        bw[at] = bw[at - 1];
                        br[at] = br[at - 1];
                    }
                if (at < KW_OFAT_FUSION_PAIRS) {
                    bj[at] = j;
                    bw[at] = w;
                    br[at] = r;
                }
            }
        int pick = kw_ofat_fusion_unmeasured(E, s, g, f, nb, bj, bw);
        if (pick > 0) {
            nb = 1;
            bj[0] = (pick - 1) / KW_VALUE_MAX;
            bw[0] = (pick - 1) % KW_VALUE_MAX;
        }
        for (int i = 0, rc = 0; i < nb; i++) {
            kw_cand c = m->tp_step[g][0];
            c.v[bj[i]] = (uint8_t)bw[i];
            if (!kw_ofat_banned(s, &c) && (rc = kw_ofat_item_add_once(E, s, &c, g)) != 0)
                return rc;
        }
    }
    return 0;
}

/* A neighbour of the stone (knob j at value w) and its rank: the same change alone
 * from the incumbent, least-bad first as the probes' first steps go. Class 0: measured,
 * guard-passing, not an exact tie (by that figure); 1: not measured; 2: failed a
 * guard; 3: an exact tie (a knob inert at the incumbent, likely inert at the stone
 * too). A budget that cannot take the whole round so keeps the changes that cost
 * least alone (validate_resnet_h100 conv_b8_c4 seed 5 at 1%: the round took the inert
 * conv1x1.tile_m first and ended before placement=least_loaded, +1.36% alone from the
 * incumbent, which with the stone is the exhaustive optimum). */
#define KW_STONE_NB_MAX (KW_KNOB_MAX * KW_VALUE_MAX) /* every one-knob neighbour */
typedef struct kw_stone_nb {
    int j, w, cls;
    double f;
} kw_stone_nb;

static void kw_ofat_stone_rank(kw_stone_nb *nb, kw_eng *E, kw_shape *s, const kw_cst *inc,
                               int j, int w)
{
    kw_cand c = s->pos;
    c.v[j] = (uint8_t)w;
    kw_cst cs;
    kw_engine_stats_c(E, s, &c, &cs);
    nb->j = j;
    nb->w = w;
    nb->f = cs.mean;
    nb->cls = cs.n != E->reps ? 1 : !cs.ok ? 2 : cs.mean == inc->mean ? 3 : 0;
}

static int kw_ofat_stone_before(const kw_stone_nb *a, const kw_stone_nb *b)
{
    return a->cls < b->cls || (a->cls == 0 && b->cls == 0 && a->f < b->f);
}

/* A path round (kw_ofat_tri_find): tp_kind 1, each tied pair's third changes; 2, the
 * stone's neighbours along the knobs outside its block. Each config once. */
static int kw_ofat_path_plan(kw_eng *E, kw_shape *s)
{
    kw_ofat_main *m = &((kw_ofat *)s->st)->main;
    const kw_knobspace *ks = E->ks;
    kw_cst inc;
    kw_engine_stats_c(E, s, &s->pos, &inc);
    if (m->tp_kind >= 3) {
        int k, rc;
        if (m->tp_kind == 4) {
            rc = kw_ofat_fusion_items(E, s);
        } else {
            kw_engine_step_check(&k, ks, &s->pos, &m->faded[1]);
            kw_cand c = m->faded[0];
            c.v[k] = m->faded[1].v[k];
            rc = kw_ofat_item_add_once(E, s, &c, 0);
        }
        kw_error_clear();
        m->tp_running = s->n_items > 0;
        return rc != 0 ? rc : KW_OFAT_PLANNED;
    }
    for (int g = 0; g < m->tp_n; g++) {
        const kw_cand *at = &m->tp_step[g][m->tp_len[g] - 1];
        int ka, kb, n = 0;
        kw_engine_step_check(&ka, ks, &s->pos, &m->tp_step[g][0]);
        kw_engine_step_check(&kb, ks, &m->tp_step[g][0], &m->tp_step[g][1]);
        kw_stone_nb nb[KW_STONE_NB_MAX];
        for (int j = 0; j < ks->n_knobs; j++)
            for (int w = 0; w < ks->knobs[j].n_values; w++) {
                int take = m->tp_kind == 1 ? kw_ofat_tri_third(E, s, &inc, ka, kb, j, w)
                                           : w != at->v[j] && !kw_ofat_frozen(E, j) &&
                                                 !kw_ofat_same_block(ks, ka, j) && j != ka;
                kw_cand c = *at;
                c.v[j] = (uint8_t)w;
                if (!take || kw_ofat_banned(s, &c))
                    continue;
                if (m->tp_kind == 2) {
                    kw_ofat_stone_rank(&nb[n++], E, s, &inc, j, w);
                    continue;
                }
                int rc = kw_ofat_item_add_once(E, s, &c, g);
                if (rc != 0)
                    return rc;
            }
        /* the stone's neighbours least-bad first (kw_ofat_stone_rank; stable) */
        for (int i = 1; i < n; i++)
            for (int q = i; q > 0 && kw_ofat_stone_before(&nb[q], &nb[q - 1]); q--) {
                kw_stone_nb t = nb[q];
                nb[q] = nb[q - 1];
                nb[q - 1] = t;
            }
        for (int i = 0; i < n; i++) {
            kw_cand c = *at;
            c.v[nb[i].j] = (uint8_t)nb[i].w;
            int rc = kw_ofat_item_add_once(E, s, &c, g);
            if (rc != 0)
                return rc;
        }
    }
    kw_error_clear();
    m->tp_running = s->n_items > 0;
    return KW_OFAT_PLANNED;
}

/* A path round's steps: per group, EXPLORE along its path, its items judged against
 * the incumbent, the winner accepted or REVERTs back along the path (failed groups
 * first, the winning one last). Without a gain, a tie-triple round's best
 * guard-passing triple whose third change failed a guard alone (the region the
 * one-knob walk cannot enter) becomes the stone of the next round (kw_ofat_tri_find). */
static int kw_ofat_path_decide(kw_eng *E, kw_shape *s, kw_verdict *v)
{
    kw_ofat *o = s->st;
    kw_ofat_main *m = &o->main;
    static const char *const there[4][3] = {
        {"tie triple: first step of a tie pair that ties too",
         "tie triple: the tie pair (exactly the incumbent's figure), to try a third "
         "knob of its block that ties or fails a guard alone", ""},
        {"stone: first step of a tie pair", "stone: the tie pair",
         "stone: the best tie triple that passes the guard its third change failed alone, "
         "to try the knobs outside its block"},
        {"faded composes: the largest compose gain below the minimum effect, to try "
         "the next one with it", "", ""},
        {"fusion pair: a change of a fusion knob, to try the least-bad changes of the "
         "block it fuses with it", "", ""}};
    int kind = m->tp_kind;
    kw_ofat_paths w = {
        .judge = kind == 1   ? "tie triple vs incumbent: "
                 : kind == 4 ? "fusion pair vs incumbent: "
                             : "stone neighbour vs incumbent: ",
        .back = kind == 1   ? "no tie triple beats the incumbent: step back"
                : kind == 2 ? "no neighbour of the stone beats the incumbent: step back"
                : kind == 4 ? "no fusion pair beats the incumbent: step back"
                            : "the faded composes together do not beat the incumbent: step back",
        .why = there[kind - 1],
        .n = m->tp_n};
    for (int g = 0; g < m->tp_n; g++) {
        w.path[g] = m->tp_step[g];
        w.len[g] = m->tp_len[g];
    }
    kw_cst inc;
    int win;
    m->tp_running = 0;
    int rc = kw_ofat_paths_decide(E, s, v, &w, &win, &inc);
    if (rc != 0)
        return rc;
    m->tp_pending = 0;
    if (win >= 0) {
        kw_ofat_resume_main(o);
        return 0;
    }
    if (kind != 1)
        return 0;
    int best = -1;
    double best_mean = 0;
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        kw_cst c;
        if (it->con >= 0 || it->dropped)
            continue;
        int j;
        if (kw_engine_step_check(&j, E->ks, &m->tp_step[it->group][1], &it->cand) != 0)
            continue;
        kw_cand alone = s->pos;
        alone.v[j] = it->cand.v[j];
        kw_cst a;
        kw_engine_stats_c(E, s, &alone, &a);
        if (a.ok) /* a third change that ties alone leaves the plateau no further */
            continue;
        kw_engine_stats(E, s->shape, it->id, &c);
        if (c.n == E->reps && c.ok && isfinite(c.mean) && (best < 0 || c.mean < best_mean)) {
            best = i;
            best_mean = c.mean;
        }
    }
    kw_error_clear();
    if (best < 0)
        return 0;
    int g = s->items[best].group;
    m->tp_step[0][0] = m->tp_step[g][0];
    m->tp_step[0][1] = m->tp_step[g][1];
    m->tp_step[0][2] = s->items[best].cand;
    m->tp_len[0] = 3;
    m->tp_n = 1;
    m->tp_kind = 2;
    m->tp_pending = 1;
    return 0;
}

/* The tie-pair round's steps: per first step, EXPLORE onto it, its pairs judged
 * against the incumbent, the winner accepted or a REVERT (the failed groups
 * first, the winning one last, as the probes do). */
static int kw_ofat_tie_decide(kw_eng *E, kw_shape *s, kw_verdict *v)
{
    kw_ofat *o = s->st;
    kw_ofat_main *m = &o->main;
    static const char *const why[1] = {
        "tie pair: first step (alone exactly the incumbent's figure) "
        "tried with another knob of its block that ties too"};
    kw_ofat_paths w = {.judge = "tie pair vs incumbent: ",
                      .back = "no tie pair beats the incumbent: step back",
                      .why = why,
                      .n = m->n_tie};
    for (int g = 0; g < m->n_tie; g++) {
        w.path[g] = &m->tie_first[g];
        w.len[g] = 1;
    }
    kw_cst inc;
    int win;
    m->tie_pairing = 0;
    int rc = kw_ofat_paths_decide(E, s, v, &w, &win, &inc);
    if (rc != 0)
        return rc;
    if (win >= 0)
        kw_ofat_resume_main(o);
    else
        kw_ofat_tri_find(E, s, &inc);
    return 0;
}

/* A sweep of knob k from the incumbent: its other values (not, under a budget,
 * those that failed a guard alone in the first round: kw_ofat_screen_order). */
static int kw_ofat_sweep_knob(kw_eng *E, kw_shape *s, int k)
{
    const kw_ofat_main *m = &((kw_ofat *)s->st)->main;
    for (int v = 0; v < E->ks->knobs[k].n_values; v++) {
        if (v == s->pos.v[k] || (E->o.budget > 0 && m->poor[k][v]))
            continue;
        kw_cand c = s->pos;
        c.v[k] = (uint8_t)v;
        int rc = kw_engine_item_add(E, s, &c, 0);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int kw_ofat_main_plan(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    kw_ofat_main *m = &o->main;
    const kw_knobspace *ks = E->ks;
    if (s->budget_hit) {
        kw_ofat_enter_fix(s);
        return KW_OFAT_MOVED;
    }
    if (E->o.policy != KW_POLICY_SWEEP)
        return kw_ofat_add_neighbours(E, s, &s->pos);
    if (!m->screened && m->no_accept < ks->n_knobs)
        return kw_ofat_add_neighbours(E, s, &s->pos);
    m->piloting = 0;
    if (!m->piloted && E->o.estimate && E->ev->predict && !E->ev->noisy) {
        kw_cand c;
        if (kw_ofat_pilot_next(E, s, &c)) {
            int k;
            kw_engine_step_check(&k, ks, &s->pos, &c);
            m->pilot_tried[k][c.v[k]] = 1;
            m->piloting = 1;
            return kw_engine_item_add(E, s, &c, 0);
        }
        m->piloted = 1;
    }
    /* compose: the first round's other gains, one at a time on the incumbent, before
     * any sweep; at a small budget they are the likeliest gains left (a sweep spends
     * n_values - 1 evaluations on a knob to find the value the first round knew) */
    m->composing = 0;
    for (; m->ccur < m->n_compose; m->ccur++) {
        int k = m->compose_knob[m->ccur];
        if (s->pos.v[k] == m->compose_value[m->ccur])
            continue;
        kw_cand c = s->pos;
        c.v[k] = m->compose_value[m->ccur];
        m->composing = 1;
        return kw_engine_item_add(E, s, &c, 0);
    }
    /* noiseless: two compose gains below the minimum effect may reach it together
     * (validate_small_mlp prefill seed 4 at 1%: gate_up.tile_n 256 -0.80% and
     * launch_mode graph -0.28%, together the exhaustive optimum) */
    if (m->n_faded == 2 && !E->ev->noisy) {
        m->n_faded = 0;
        m->tp_kind = 3;
        m->tp_n = 1;
        m->tp_len[0] = 1;
        m->tp_step[0][0] = m->faded[0];
        int rc = kw_ofat_path_plan(E, s);
        if (rc != 0 || s->n_items > 0)
            return rc;
    }
    m->n_faded = 0;
    if (m->tie_pending) {
        m->tie_pending = 0;
        int rc = kw_ofat_tie_plan(E, s);
        if (rc != 0 || s->n_items > 0)
            return rc;
    }
    if (m->tp_pending) {
        m->tp_pending = 0;
        int rc = kw_ofat_path_plan(E, s);
        if (rc != 0 || s->n_items > 0)
            return rc;
    }
    /* the cursor skips at most n_knobs knobs: each skip counts as a knob
     * without an accepted step */
    while (m->no_accept < ks->n_knobs) {
        int k = m->order[m->cursor];
        if (ks->knobs[k].n_values < 2 || k == m->last_knob_accepted || kw_ofat_frozen(E, k) ||
            m->inert[k]) {
            m->cursor = (m->cursor + 1) % ks->n_knobs;
            m->no_accept++;
            continue;
        }
        int rc = kw_ofat_sweep_knob(E, s, k);
        if (rc != 0)
            return rc;
        if (s->n_items == 0) { /* every other value is poor: a knob without a step */
            m->cursor = (m->cursor + 1) % ks->n_knobs;
            m->no_accept++;
            continue;
        }
        return KW_OFAT_PLANNED;
    }
    /* noiseless, the first local optimum: the inert knobs of blocks, once, from here
     * (a tile that does nothing at the baseline may once another knob changed, and
     * two that tie alone may gain together: kw_ofat_tie_find) */
    if (!m->inert_rechecked && !E->ev->noisy) {
        m->inert_rechecked = 1;
        for (int k = 0; k < ks->n_knobs; k++) {
            int blk = 0;
            for (int j = 0; j < ks->n_knobs && !blk; j++)
                blk = j != k && !kw_ofat_frozen(E, j) && kw_ofat_same_block(ks, k, j);
            if (!m->inert[k] || !blk)
                continue;
            m->inert[k] = 0;
            int rc = kw_ofat_sweep_knob(E, s, k);
            if (rc != 0)
                return rc;
        }
        m->rechecking = s->n_items > 0;
        if (s->n_items > 0)
            return KW_OFAT_PLANNED;
    }
    kw_ofat_after_main(E, s);
    return KW_OFAT_MOVED;
}

/* Knobs with no effect on this shape (issue: evaluations are not spent on
 * them): after the first round (every neighbour of the baseline), a knob all
 * of whose evaluated values gave exactly the baseline's primary and guards is
 * inert, and later sweeps skip it. Probes and excursions still reach it, so a
 * knob that only matters once another one changed (batch_timeout_us while
 * max_batch is 1) is found there. A knob none of whose values was evaluated
 * (constraints, the budget, the screen) is not called inert. */
static void kw_ofat_mark_inert(kw_eng *E, kw_shape *s)
{
    kw_ofat_main *m = &((kw_ofat *)s->st)->main;
    kw_cst b;
    kw_engine_stats_c(E, s, &s->base, &b);
    int seen[KW_KNOB_MAX] = {0}, differs[KW_KNOB_MAX] = {0};
    if (b.n != E->reps)
        return;
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        int k;
        if (it->con >= 0 || it->dropped || kw_engine_step_check(&k, E->ks, &s->base, &it->cand) != 0)
            continue;
        kw_cst c;
        kw_engine_stats(E, s->shape, it->id, &c);
        if (c.n != E->reps)
            continue;
        seen[k]++;
        differs[k] |= c.mean != b.mean || strcmp(c.guards ? c.guards : "", b.guards ? b.guards : "") != 0;
    }
    kw_error_clear();
    for (int k = 0; k < E->ks->n_knobs; k++)
        m->inert[k] = seen[k] > 0 && !differs[k];
}

/* Sweep order from the screening round: knobs by their best single-knob gain
 * from the baseline, largest first (ties: knob order). Knobs whose every
 * alternative failed a guard or a constraint come last. The big levers are
 * then settled first, which matters most when the budget is small. */
static void kw_ofat_screen_order(kw_eng *E, kw_shape *s, const kw_verdict *v, int win_knob)
{
    kw_ofat_main *m = &((kw_ofat *)s->st)->main;
    double gain[KW_KNOB_MAX];
    int best_v[KW_KNOB_MAX], composes[KW_KNOB_MAX] = {0};
    int n = E->ks->n_knobs;
    for (int k = 0; k < n; k++)
        gain[k] = -INFINITY;
    kw_cst base;
    kw_engine_stats_c(E, s, &s->base, &base);
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        if (it->con >= 0 || it->dropped || !(isfinite(v[i].gain)))
            continue;
        kw_cst c;
        kw_engine_stats(E, s->shape, it->id, &c);
        int k;
        kw_engine_step_check(&k, E->ks, &s->base, &it->cand);
        /* a baseline outside the guards: a value failing only what it fails did
         * not fail alone (kw_engine_judge, toward the guards), and is ordered by
         * its gain like a passing one */
        if (!c.ok && !(!base.ok && kw_guards_within(c.guards, base.guards))) {
            /* with a budget the sweep skips it: a value that fails a guard alone
             * (precision fp8 the drift guards) failed it again from every later
             * incumbent on the validation spaces, and at 1% of the space one
             * evaluation is 3-8% of the budget (the sweep of validate_small_mlp
             * decode spent 3 of its 25 on fp8). A guard another knob repairs is
             * the probes' work (blocked gains, three-knob repairs), which still
             * try it; without a budget the sweep does too. */
            m->poor[k][it->cand.v[k]] = c.n == E->reps && strncmp(c.guards, "error", 5) != 0;
            continue;
        }
        if (v[i].gain > gain[k]) {
            gain[k] = v[i].gain;
            best_v[k] = it->cand.v[k];
            /* noiseless: every gain is real, and one below the minimum effect alone
             * may add up with the others; noisy: only an acceptable one is evidence */
            composes[k] = E->ev->noisy ? v[i].ok : v[i].gain > 0;
        }
    }
    /* the compose list: each other gaining knob at its best value, largest gain first */
    m->n_compose = 0;
    m->ccur = 0;
    for (int k = 0; k < n; k++) {
        if (!composes[k] || k == win_knob)
            continue;
        int at = m->n_compose++;
        while (at > 0 && gain[m->compose_knob[at - 1]] < gain[k]) {
            m->compose_knob[at] = m->compose_knob[at - 1];
            m->compose_value[at] = m->compose_value[at - 1];
            at--;
        }
        m->compose_knob[at] = (uint8_t)k;
        m->compose_value[at] = (uint8_t)best_v[k];
    }
    /* a knob the screen deferred (kw_mf.h) ranks by its estimated gain, the
     * estimate scaled by the middle of the shape's measured ratio range */
    kw_cst b;
    kw_engine_stats_c(E, s, &s->base, &b);
    double mid = s->mfb.n_pairs > 0 ? sqrt(s->mfb.min_ratio * s->mfb.max_ratio) : 1.0;
    double est_gain[KW_KNOB_MAX];
    for (int k = 0; k < n; k++)
        est_gain[k] = -INFINITY;
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        int k;
        if (it->skipped != KW_MF_DEFERRED || it->est_fails || !isfinite(it->est) ||
            kw_engine_step_check(&k, E->ks, &s->base, &it->cand) != 0)
            continue;
        double g = kw_engine_gain_pct(b.mean, it->est * mid);
        if (g > est_gain[k])
            est_gain[k] = g;
    }
    kw_error_clear();
    /* three tiers: knobs with a measured gain; then knobs with a value the screen
     * deferred, by its estimated gain; then knobs every measured value of which lost
     * (or failed). A measured loss is evidence against a knob, an estimate from a
     * screen that ranks bursty decode shapes badly (Spearman 0.14-0.30) is not: on
     * validate_small_mlp decode at 1% (12 evaluations) the optimum's last two changes
     * (fuse_epilogue, launch_mode) were deferred and ranked below tile knobs measured
     * 17-28% worse, which took the budget. A knob with a value measured to lose is in
     * the last tier even when the screen deferred another of its values: on the same
     * shape (seed 2) gate_up.tile_m, 256 measured +8.3% and 64 deferred, came before
     * the tile_n change the optimum needed and took 2 of the last evaluations (20
     * seeds at 1%: 208 -> 210 of 240). */
    int tier[KW_KNOB_MAX];
    for (int k = 0; k < n; k++) {
        tier[k] = gain[k] > 0 ? 0 : est_gain[k] > -INFINITY && !(gain[k] > -INFINITY) ? 1 : 2;
        if (tier[k] == 1)
            gain[k] = est_gain[k];
    }
    for (int k = 0; k < n; k++)
        m->order[k] = k;
    kw_ofat_mark_inert(E, s);
    for (int i = 1; i < n; i++) /* stable insertion sort: tier, then descending gain */
        for (int j = i; j > 0 && (tier[m->order[j]] < tier[m->order[j - 1]] ||
                                  (tier[m->order[j]] == tier[m->order[j - 1]] &&
                                   gain[m->order[j]] > gain[m->order[j - 1]]));
             j--) {
            int t = m->order[j];
            m->order[j] = m->order[j - 1];
            m->order[j - 1] = t;
        }
    kw_ofat_fusion_order(E, m, tier);
    m->screened = 1;
    m->cursor = 0;
}

static int kw_ofat_walk(kw_eng *E, kw_shape *s, int best, kw_decision way, kw_decision last,
                        kw_step_phase phase, const char *why_way, const char *why_last, int *moved);

#define KW_OFAT_RIVAL_SHARE 0.8 /* a rival's gain alone, at least this share of the winner's */

/* A rival basin (noiseless runs under a budget, sweep): the first round's two
 * largest gains on different knobs may exclude each other. validate_small decode
 * at 1% and 2% (25 and 51 evaluations), seeds 7, 8 and 10 of 20: max_batch=1 wins
 * the first round (-45%, -12.5%, -34.5%), placement=least_loaded is second (-39%,
 * -5.9%, -32.5%) and loses on max_batch=1 (+12.6%, +16.7%, +5.4%); the exhaustive
 * optimum is in least_loaded's basin with the baseline max_batch (seed 7: from
 * least_loaded, qkv.tile_m=256 gains 1.05%, then qkv.tile_n=256 18%), and the
 * budget ended in max_batch=1's basin, 10.6%, 10.5% and 5.0% above it. The restart
 * that leaves such a basin runs only at convergence. On seeds 5 and 15 the same two
 * changes come the other way round and the winner's basin holds the optimum, so the
 * winner's basin is descended first: when the first compose (the second largest
 * first-round gain, on the winner) loses by at least the minimum effect, and that
 * change alone gained at least KW_OFAT_RIVAL_SHARE of the winner's gain from the
 * baseline (0.5 lost validate_small decode seed 9 at 2%: its runner-up had 0.62), it is noted
 * here, and at the first local optimum the walk goes on from it (kw_ofat_rival_go). */
static void kw_ofat_rival_note(kw_eng *E, kw_shape *s, const kw_cst *inc)
{
    kw_ofat *o = s->st;
    kw_ofat_main *m = &o->main;
    if (m->rival_judged)
        return;
    m->rival_judged = 1;
    if (E->ev->noisy || E->o.budget <= 0 || !o->settle.on || s->n_items != 1 ||
        s->items[0].con >= 0 || s->items[0].dropped)
        return;
    int kwin, kriv;
    if (kw_engine_step_check(&kwin, E->ks, &s->base, &s->pos) != 0 ||
        kw_engine_step_check(&kriv, E->ks, &s->pos, &s->items[0].cand) != 0 || kriv == kwin) {
        kw_error_clear();
        return;
    }
    kw_cand r = s->base;
    r.v[kriv] = s->items[0].cand.v[kriv];
    kw_cst b, cr, cp;
    kw_engine_stats_c(E, s, &s->base, &b);
    kw_engine_stats_c(E, s, &r, &cr);
    kw_engine_stats(E, s->shape, s->items[0].id, &cp);
    if (!b.ok || !cr.ok || !cp.ok || !inc->ok || cr.n != E->reps || cp.n != E->reps)
        return;
    double g_win = kw_engine_gain_pct(b.mean, inc->mean), g_riv = kw_engine_gain_pct(b.mean, cr.mean);
    double loss = -kw_engine_gain_pct(inc->mean, cp.mean);
    if (!(g_win > 0 && g_riv >= KW_OFAT_RIVAL_SHARE * g_win && loss >= E->o.min_effect_pct))
        return;
    const kw_knob *kr = &E->ks->knobs[kriv], *kn = &E->ks->knobs[kwin];
    snprintf(m->rival_why, sizeof m->rival_why, "rival basin: %s=%s gained %.2f%% alone (the "
             "first round's winner %s=%s %.2f%%) and lost %.2f%% on the winner; the sweep goes "
             "on from it", kr->name, kr->values[r.v[kriv]], g_riv, kn->name,
             kn->values[s->pos.v[kwin]], g_win, loss);
    m->rival = r;
    m->rival_set = 1;
}

/* The first local optimum with a rival noted (kw_ofat_rival_note) and budget left:
 * walk to the rival through evaluated configs (kw_ofat_walk, EXPLORE, one knob per
 * step; no evaluation spent) and sweep on from there. The winner's basin is not
 * lost: settle ships the best config evaluated. Once per shape. */
static int kw_ofat_rival_go(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    kw_ofat_main *m = &o->main;
    uint64_t rid = kw_knobs_cand_id(E->ks, &m->rival);
    int at = -1, moved = 0, rc = 0;
    for (int i = 0; i < o->settle.n_seen && at < 0; i++)
        if (kw_knobs_cand_id(E->ks, &o->settle.seen[i]) == rid)
            at = i;
    if (at >= 0)
        rc = kw_ofat_walk(E, s, at, KW_DECIDE_EXPLORE, KW_DECIDE_EXPLORE, KW_STEP_EXPLORE,
                          "rival basin: on the way to it", m->rival_why, &moved);
    if (rc != 0)
        return rc;
    if (!moved) {
        kw_ofat_after_main(E, s); /* rival_used: on to the probes */
        return 0;
    }
    int k;
    kw_engine_step_check(&k, E->ks, &s->base, &s->pos);
    kw_error_clear();
    o->ph = KW_OFAT_MAIN;
    m->no_accept = 0;
    m->cursor = 0;
    m->last_knob_accepted = k;
    m->ccur = m->n_compose;
    m->n_faded = 0;
    return 0;
}

static int kw_ofat_main_decide(kw_eng *E, kw_shape *s, kw_verdict *v)
{
    kw_ofat *o = s->st;
    kw_ofat_main *m = &o->main;
    if (m->tie_pairing)
        return kw_ofat_tie_decide(E, s, v);
    if (m->tp_running)
        return kw_ofat_path_decide(E, s, v);
    kw_cst inc;
    kw_engine_stats_c(E, s, &s->pos, &inc);
    int n_cmp = kw_ofat_count_evaluated(s);
    const char *prefix = m->piloting ? "pilot (best estimate): " : m->composing ? "compose: " : "";
    int win = kw_ofat_judge_items(E, s, &s->pos, &inc, prefix, n_cmp, v);
    for (int i = 0; i < s->n_items; i++) {
        int k;
        if (v[i].ok && kw_engine_step_check(&k, E->ks, &s->pos, &s->items[i].cand) == 0)
            o->probe.improved[k][s->items[i].cand.v[k]] = 1;
    }
    kw_error_clear();
    int rc = kw_ofat_emit_rejects(E, s, win, KW_STEP_MAIN, v, -1);
    int win_knob = -1;
    if (rc == 0 && win >= 0) {
        kw_engine_step_check(&win_knob, E->ks, &s->pos, &s->items[win].cand);
        if (m->restarts_done == 0 && m->n_path < KW_OFAT_PATH_MAX) {
            m->path_from[m->n_path] = s->pos;
            m->path_knob[m->n_path] = (uint8_t)win_knob;
            m->path_value[m->n_path] = s->items[win].cand.v[win_knob];
            m->n_path++;
        }
        rc = kw_engine_step_judged(E, s, &s->items[win].cand, KW_DECIDE_ACCEPT, KW_STEP_MAIN,
                                   &v[win], v[win].why);
        o->fix.accepts_since++;
    }
    if (rc != 0)
        return rc;
    if (m->piloting) {
        m->piloting = 0;
        m->pilot_misses = win >= 0 ? 0 : m->pilot_misses + 1;
        m->piloted = m->pilot_misses >= KW_OFAT_PILOT_MISSES;
        return 0;
    }
    if (E->o.policy == KW_POLICY_SWEEP && !m->screened) {
        kw_ofat_screen_order(E, s, v, win_knob);
        m->last_knob_accepted = win_knob;
        /* nothing gained: the baseline is a local optimum, unless the screen
         * deferred some of its neighbours (kw_mf.h), which the sweep then
         * tries (it used to end the walk here: validate_small_mlp decode at
         * 2%, seeds 2 and 4, +5.9% and +17.6%, never tried fuse_epilogue) */
        int deferred = 0;
        for (int i = 0; i < s->n_items; i++)
            deferred |= s->items[i].skipped == KW_MF_DEFERRED;
        m->no_accept = win >= 0 || deferred ? 0 : E->ks->n_knobs;
        if (win < 0)
            m->n_compose = 0; /* nothing moved: each gain alone was already judged */
        return 0;
    }
    if (m->composing) {
        m->composing = 0;
        m->ccur++;
        if (win < 0)
            kw_ofat_rival_note(E, s, &inc);
        m->rival_judged = 1;
        if (win >= 0) {
            m->n_faded = 0;
        } else if (!E->ev->noisy && s->n_items == 1 && s->items[0].con < 0 && !s->items[0].dropped) {
            kw_cst c;
            kw_engine_stats(E, s->shape, s->items[0].id, &c);
            if (c.n == E->reps && c.ok && c.mean < inc.mean) { /* keep the two largest gains */
                int at = m->n_faded < 2 ? m->n_faded++ : 2;
                while (at > 0 && m->faded_mean[at - 1] > c.mean) {
                    if (at < 2) {
                        m->faded[at] = m->faded[at - 1];
                        m->faded_mean[at] = m->faded_mean[at - 1];
                    }
                    at--;
                }
                if (at < 2) {
                    m->faded[at] = s->items[0].cand;
                    m->faded_mean[at] = c.mean;
                }
            }
            kw_error_clear();
        }
        return 0;
    }
    if (E->o.policy == KW_POLICY_SWEEP) {
        m->last_knob_accepted = win >= 0 ? win_knob : m->last_knob_accepted;
        if (s->n_items > 0) {
            m->no_accept = win >= 0 ? 0 : m->no_accept + 1;
            m->cursor = (m->cursor + 1) % E->ks->n_knobs;
        }
        if (win < 0) {
            uint8_t in_round[KW_KNOB_MAX] = {0}, untied[KW_KNOB_MAX] = {0};
            for (int i = 0; i < s->n_items; i++) {
                int k;
                if (kw_engine_step_check(&k, E->ks, &s->pos, &s->items[i].cand) == 0) {
                    in_round[k] = 1;
                    untied[k] |= !kw_ofat_ties(E, s, &s->items[i].cand, &inc);
                }
            }
            kw_error_clear();
            /* a rechecked knob every value of which ties here is inert still: the
             * probes take no first step on it (kw_ofat_pick_firsts) */
            for (int k = 0; k < E->ks->n_knobs && m->rechecking; k++)
                m->inert[k] |= in_round[k] && !untied[k];
            kw_ofat_tie_find(E, s, in_round);
            kw_ofat_fusion_find(E, s, in_round);
        }
        m->rechecking = 0;
    } else if (win < 0) {
        kw_ofat_after_main(E, s);
    }
    return 0;
}

/* ------------------------------------------------------------------ probes */

/* A probe first step's class: 0 a blocked gain (fails a guard now, but the same
 * knob value was an acceptable step from an earlier incumbent: a later change
 * blocks it, so a second knob may repair it), 1 a faded gain (passes, was
 * acceptable earlier, now worse by at least min_effect: a later change turned
 * the gain into a loss, so changing one of the changed knobs again may bring it
 * back), 2 another guard-passing one, 3 another guard failure; -1 not usable
 * (not fully evaluated, evaluator error, not finite). */
static int kw_ofat_first_class(kw_eng *E, kw_shape *s, const kw_cand *c, int k, kw_cst *cs)
{
    const kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    kw_engine_stats_c(E, s, c, cs);
    if (cs->n != E->reps || !isfinite(cs->mean))
        return -1;
    if (cs->ok) {
        kw_cst inc;
        kw_engine_stats_c(E, s, &s->pos, &inc);
        return pr->improved[k][c->v[k]] &&
                       -kw_engine_gain_pct(inc.mean, cs->mean) >= E->o.min_effect_pct
                   ? 1 : 2;
    }
    if (strncmp(cs->guards, "error", 5) == 0)
        return -1;
    return pr->improved[k][c->v[k]] ? 0 : 3;
}

/* Pick the probes' first steps among the incumbent's evaluated single-knob
 * neighbours (a local optimum has none acceptable): blocked gains, faded gains
 * (most faded first), other guard-passing ones, other guard failures; least bad
 * first within a class (stable: earlier knob/value wins ties). A guard-failing first step is never
 * taken for itself: only a pair that passes every guard and beats the
 * incumbent is accepted, so the second step must repair the guard. */
static void kw_ofat_pick_firsts(kw_eng *E, kw_shape *s)
{
    kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    int cls[KW_PROBE_MAX];
    double mean[KW_PROBE_MAX];
    pr->n_first = 0;
    pr->n_blocked = 0;
    pr->n_faded = 0;
    int want = E->o.probes < KW_PROBE_MAX ? E->o.probes : KW_PROBE_MAX;
    for (int k = 0; k < E->ks->n_knobs; k++)
        for (int v = 0; v < E->ks->knobs[k].n_values; v++) {
            if (v == s->pos.v[k] || kw_ofat_frozen(E, k) || ((kw_ofat *)s->st)->main.inert[k])
                continue;
            kw_cand c = s->pos;
            c.v[k] = (uint8_t)v;
            if (kw_knobs_cand_violates(E->ks, &c) >= 0 || kw_ofat_banned(s, &c))
                continue;
            kw_cst cs;
            int cl = kw_ofat_first_class(E, s, &c, k, &cs);
            if (cl < 0)
                continue;
            double key = cl == 1 ? -cs.mean : cs.mean; /* faded gains: most faded first */
            int at = pr->n_first;
            while (at > 0 && (cl < cls[at - 1] || (cl == cls[at - 1] && key < mean[at - 1])))
                at--;
            if (at >= want)
                continue;
            int last = pr->n_first < want ? pr->n_first : want - 1;
            for (int i = last; i > at; i--) {
                pr->first[i] = pr->first[i - 1];
                cls[i] = cls[i - 1];
                mean[i] = mean[i - 1];
            }
            pr->first[at] = c;
            cls[at] = cl;
            mean[at] = key;
            if (pr->n_first < want)
                pr->n_first++;
        }
    for (int i = 0; i < pr->n_first; i++) {
        pr->n_blocked += cls[i] == 0;
        pr->n_faded += cls[i] == 1;
    }
}

#define KW_INTER_MARGIN 0.01 /* kw_ofat_pair_composes: the measured least ratio is shrunk by
                               * this share, for the values of the two knobs not yet paired */
#define KW_INTER_MIN_PAIRS 3  /* pairs of the two knobs measured before their ratio is trusted
                               * (default job: 1 or 2 lost 0.7% on attn_decode_kv2048_b32_c16;
                               * 3 and 4 keep all five recommendations; README) */

#define KW_INTER_KNOB_PARTNERS 5 /* kw_ofat_kernel_inter: distinct knobs of other op blocks
                                   * a knob was measured with before its least ratio stands for
                                   * its pairs not yet measured (5: growth 1,719 at 27 knobs,
                                   * quality bench and the default job's five recommendations
                                   * kept; 3 and 1 gave growth 1,702 and 1,679, their quality
                                   * not measured; README) */

/* Knob k belongs to an op block (kw_ofat_same_block: a '.' in its name, a kernel's
 * tiles, buffers, stages). Knobs without one (queueing, placement, fusion, graph,
 * precision) act across kernels or on the queue. */
static int kw_ofat_in_block(const kw_knobspace *ks, int k)
{
    return strchr(ks->knobs[k].name, '.') != NULL;
}

/* Knob k's additivity with other kernels, learnt per knob (issue 18: 3 measured
 * pairs per knob pair grow with the square of the knob count): its least measured
 * ratio (kw_ofat_probe_learn) over its pairs with knobs of other op blocks (any: with
 * knobs of any other block, block-less ones included), once they span
 * KW_INTER_KNOB_PARTNERS distinct knobs: 0 with *r; else -1. */
static int kw_ofat_kernel_inter(const kw_eng *E, const kw_ofat_probe *pr, int k, int any, float *r)
{
    int n = 0;
    float lo = INFINITY;
    for (int j = 0; j < E->ks->n_knobs; j++)
        if (j != k && pr->n_inter[k][j] > 0 && (any || kw_ofat_in_block(E->ks, j)) &&
            !kw_ofat_same_block(E->ks, k, j)) {
            n++;
            lo = fminf(lo, pr->inter[k][j]);
        }
    *r = lo;
    return n >= KW_INTER_KNOB_PARTNERS ? 0 : -1;
}

/* A pair of one-knob changes a (knob ka, primary fa alone) and b (kb, fb) from the
 * incumbent (fx) that cannot gain (the probes were 85% of the evaluations to
 * converge on the default space's 27 knobs, n_first x the knob values per local
 * optimum, 4-7 local optima per shape). The product fa fb / fx is what the pair gives
 * when the two changes compose (no interaction); the knob pair's measured least
 * ratio to it (this shape's earlier probe rounds of the same two knobs, any values,
 * any incumbent) bounds how much better the pair can do. 1 when even that best case, less
 * KW_INTER_MARGIN, misses the minimum effect: the pair is not planned. A knob pair
 * never measured, a change alone that fails a guard or is not evaluated: 0 (planned).
 * Two knobs of one block are never cut: their interaction is in the values (a tile
 * pair's product is what fits on chip; validate_small prefill at 2%: qkv.tile_m and
 * qkv.tile_n composed in three pairs, then the pair the optimum needs gained 0.9%,
 * and cutting it lost 2 of 20 seeds). A pair of two op blocks' knobs with fewer than
 * KW_INTER_MIN_PAIRS measured pairs takes the least of the two knobs' ratios with
 * other kernels (kw_ofat_kernel_inter) and its own: the tiles of two kernels change
 * two kernels' times, and the model sums kernel times into the service time (so
 * they compose; default space, 27 knobs: growth 1,801 -> 1,719 evaluations per shape).
 * A pair with a knob of no block never is: queueing knobs interact with each other
 * (max_batch x batch_timeout_us) and a fusion knob with its op's tiles (fuse_qkv x
 * qkv.tile_n), and cutting either lost a default-job recommendation. A restart's
 * probes are never cut: they look for the pairs a third knob's change masked where
 * the first descent measured them (its list is at most one pair per neighbour
 * anyway). Off with the screening (--no-estimate). Pure function of
 * journaled evaluations, as every plan is. */
static int kw_ofat_pair_composes(const kw_eng *E, const kw_ofat_probe *pr, int ka, double fa, int kb,
                                 double fb, double fx)
{
    if (!E->o.estimate || pr->ban_knob >= 0 || kw_ofat_same_block(E->ks, ka, kb) || !isfinite(fa) ||
        !isfinite(fb) || !isfinite(fx) || fx <= 0)
        return 0;
    double r = pr->inter[ka][kb];
    if (pr->n_inter[ka][kb] < KW_INTER_MIN_PAIRS) {
        float ra, rb;
        if (!kw_ofat_in_block(E->ks, ka) || !kw_ofat_in_block(E->ks, kb) ||
            kw_ofat_kernel_inter(E, pr, ka, 0, &ra) != 0 || kw_ofat_kernel_inter(E, pr, kb, 0, &rb) != 0)
            return 0;
        r = fminf(ra, rb);
        if (pr->n_inter[ka][kb] > 0)
            r = fmin(r, pr->inter[ka][kb]);
    }
    double best = fa * fb / fx * r * (1.0 - KW_INTER_MARGIN);
    return best >= fx * (1.0 - E->o.min_effect_pct / 100.0);
}

#define KW_BOUND_MARGIN 0.05 /* kw_ofat_pair_bounded: the knobs' least measured ratio is
                              * shrunk by this share (default job: 0.01 lost two of its five
                              * recommendations, 0.05 and 0.1 kept them; README) */

/* A pair of a block-less knob and a block's knob (a queueing, placement, fusion, graph
 * or precision knob with a kernel's tile) whose best case from the two knobs' measured
 * error cannot gain (issue 18: at 27 knobs 180 of the 351 knob pairs are such pairs,
 * and each needed its own 3 measured pairs first). The forecast of the pair is the
 * product of its two changes alone, fa fb / fx (kw_ofat_pair_forecast); the most it
 * has been wrong in the pair's favour on this shape is, for each of the two knobs, its
 * least measured ratio over its pairs with knobs of any other block
 * (kw_ofat_kernel_inter, once they span KW_INTER_KNOB_PARTNERS distinct knobs), and
 * the pair's own ratio when measured. 1 when the forecast times the least of them, less
 * KW_BOUND_MARGIN, misses the minimum effect: the pair is not planned. Two block-less
 * knobs are never cut this way: the queueing knobs interact with each other beyond any
 * bound learnt elsewhere (on the default job's attn_decode_kv2048_b32_c16,
 * batch_timeout_us 0 -> 1000 with max_batch 2 -> 4 gains 10% where each alone loses;
 * with such pairs cut that shape ended 17% worse). Two op blocks' knobs are
 * kw_ofat_pair_composes' (with its 1% margin), two of one block are never cut; nor are
 * a restart's probes; off with the screening (--no-estimate). */
static int kw_ofat_pair_bounded(const kw_eng *E, const kw_ofat_probe *pr, int ka, double fa, int kb,
                                double fb, double fx)
{
    if (!E->o.estimate || pr->ban_knob >= 0 ||
        kw_ofat_in_block(E->ks, ka) == kw_ofat_in_block(E->ks, kb) || !isfinite(fa) ||
        !isfinite(fb) || !isfinite(fx) || fx <= 0)
        return 0;
    float ra, rb;
    if (kw_ofat_kernel_inter(E, pr, ka, 1, &ra) != 0 || kw_ofat_kernel_inter(E, pr, kb, 1, &rb) != 0)
        return 0;
    double r = fminf(ra, rb);
    if (pr->n_inter[ka][kb] > 0)
        r = fmin(r, pr->inter[ka][kb]);
    return fa * fb / fx * r * (1.0 - KW_BOUND_MARGIN) >= fx * (1.0 - E->o.min_effect_pct / 100.0);
}

#define KW_RECALL_MARGIN 0.02 /* kw_ofat_pair_recalls: the value pair's least measured ratio
                               * is shrunk by this share (over the default space's knob-count
                               * sweep at 16 and 27 knobs, a value pair measured again in the
                               * same context was at worst 0.9866 of its earlier least ratio
                               * for one block's knobs, 0.9906 for a block-less knob with a
                               * block's, 0.9673 for two block-less knobs; README) */

/* The key of the pair of knob values ka=va, kb=vb from the incumbent s->pos: the two
 * values and the incumbent's value of every knob that is block-less or in the block of
 * ka or kb. Knobs of other op blocks are left out: their kernels' times add to the
 * service time (kw_ofat_kernel_inter), so a change there moves the pair's figure and
 * its two changes alone together. */
static uint64_t kw_ofat_vpair_key(const kw_eng *E, const kw_shape *s, int ka, int va, int kb, int vb)
{
    const kw_knobspace *ks = E->ks;
    if (ka > kb) {
        int t = ka;
        ka = kb;
        kb = t;
        t = va;
        va = vb;
        vb = t;
    }
    int head[4] = {ka, va, kb, vb};
    uint64_t h = kw_mix_fnv1a(KW_FNV64_OFFSET, head, sizeof head);
    for (int k = 0; k < ks->n_knobs; k++)
        if (!kw_ofat_in_block(ks, k) || kw_ofat_same_block(ks, k, ka) || kw_ofat_same_block(ks, k, kb))
            h = kw_mix_fnv1a(h, &s->pos.v[k], 1);
    return h;
}

/* Keep ratio r for key (the least of the ratios measured for it). */
static int kw_ofat_vpair_note(kw_ofat_probe *pr, uint64_t key, float r)
{
    size_t *at = kw_idmap_find(&pr->vp, key);
    if (at) {
        if (r < pr->vp_r[*at])
            pr->vp_r[*at] = r;
        return 0;
    }
    if (pr->vp.n == pr->vp_r_cap) {
        size_t nc = pr->vp_r_cap ? 2 * pr->vp_r_cap : 64;
        float *g = realloc(pr->vp_r, nc * sizeof *g);
        if (!g)
            return kw_error_set(KW_ENOMEM, "out of memory learning probe pairs");
        pr->vp_r = g;
        pr->vp_r_cap = nc;
    }
    pr->vp_r[pr->vp.n] = r;
    return kw_idmap_add(&pr->vp, key, pr->vp.n, NULL);
}

/* A pair of two knob values measured before from an incumbent that differs from this
 * one only in knobs of other op blocks (issue 18: one block's knobs are never cut by
 * the knob-pair rules, their interaction being in the values, and their pairs were the
 * fastest-growing part of the probes, 380 -> 1,683 evaluations from 16 to 27 knobs on
 * the default space, none of them a gain; each new local optimum pairs the same values
 * again). That pair's least measured ratio (kw_ofat_probe_learn) stands for this one:
 * 1 when the forecast fa fb / fx times it, less KW_RECALL_MARGIN, cannot gain the
 * minimum effect. Two block-less knobs are left to their own 3 measured pairs
 * (kw_ofat_pair_composes: max_batch x batch_timeout_us; their value pairs moved most,
 * 0.9673); nor in a restart's probes; off with the screening (--no-estimate). */
static int kw_ofat_pair_recalls(const kw_eng *E, const kw_shape *s, const kw_ofat_probe *pr, int ka,
                                int va, double fa, int kb, int vb, double fb, double fx)
{
    if (!E->o.estimate || pr->ban_knob >= 0 || pr->vp.n == 0 ||
        (!kw_ofat_in_block(E->ks, ka) && !kw_ofat_in_block(E->ks, kb)) || !isfinite(fa) ||
        !isfinite(fb) || !isfinite(fx) || fx <= 0)
        return 0;
    const size_t *at = kw_idmap_find(&pr->vp, kw_ofat_vpair_key(E, s, ka, va, kb, vb));
    if (!at)
        return 0;
    return fa * fb / fx * pr->vp_r[*at] * (1.0 - KW_RECALL_MARGIN) >=
           fx * (1.0 - E->o.min_effect_pct / 100.0);
}

#define KW_UNMOVED_EPS 0.0005  /* kw_ofat_pair_unmoved: each change alone within this share of
                                * its ratio where the value pair was measured */
#define KW_UNMOVED_MARGIN 0.01 /* and the pair's figure predicted from there shrunk by this
                                * share (the default space's knob-count sweep, seed 1: such value
                                * pairs measured again were at worst 0.9908 of their earlier
                                * figure relative to the incumbent at 27 knobs, 0.9995 at 16) */

/* A value pair (ka=va, kb=vb) in canonical order (the lower knob first), its key,
 * and the two one-knob ratios ra, rb swapped with it. */
static uint64_t kw_ofat_um_key(int *ka, int *va, double *ra, int *kb, int *vb, double *rb)
{
    if (*ka > *kb) {
        int t = *ka;
        *ka = *kb;
        *kb = t;
        t = *va;
        *va = *vb;
        *vb = t;
        double u = *ra;
        *ra = *rb;
        *rb = u;
    }
    int head[4] = {*ka, *va, *kb, *vb};
    return kw_mix_fnv1a(KW_FNV64_OFFSET, head, sizeof head);
}

/* Keep the value pair's one-knob ratios ra, rb and its ratio r where it was just measured. */
static int kw_ofat_um_note(kw_ofat_probe *pr, int ka, int va, double ra, int kb, int vb, double rb,
                           float r)
{
    uint64_t key = kw_ofat_um_key(&ka, &va, &ra, &kb, &vb, &rb);
    size_t *at = kw_idmap_find(&pr->um, key);
    size_t i = at ? *at : pr->um.n;
    if (!at) {
        if (pr->um.n == pr->um_r_cap) {
            size_t nc = pr->um_r_cap ? 2 * pr->um_r_cap : 64;
            float (*g)[3] = realloc(pr->um_r, nc * sizeof *g);
            if (!g)
                return kw_error_set(KW_ENOMEM, "out of memory learning probe pairs");
            pr->um_r = g;
            pr->um_r_cap = nc;
        }
        if (kw_idmap_add(&pr->um, key, i, NULL) != 0)
            return -1;
    }
    pr->um_r[i][0] = (float)ra;
    pr->um_r[i][1] = (float)rb;
    pr->um_r[i][2] = r;
    return 0;
}

/* A value pair measured before whose two changes alone still do what they did there
 * (issue 18: most probe pairs are near-ties, which no ratio bound cuts, and each new
 * local optimum pairs the same values again; kw_ofat_pair_recalls reaches only the
 * optima that differ in other op blocks' knobs, while most differ in a block-less
 * one). When each change's ratio to the incumbent, f(x+a) / f(x) and f(x+b) / f(x),
 * is within KW_UNMOVED_EPS of its ratio from the incumbent where the same two values
 * were last paired, what changed in between did not reach either change alone, and the
 * pair's ratio there stands for this one: 1 when ra rb times it, less
 * KW_UNMOVED_MARGIN, cannot gain the minimum effect (a pair that gained nothing there
 * is left out; one that gained below the minimum effect is not). On the default
 * space's knob-count sweep the pairs so matched were at worst 0.9908 of their earlier
 * figure (27 knobs) and 0.9995 (16); with a 0.1% match instead, a tile pair fell to
 * 0.6573 (qkv.tile_m x qkv.tile_n: what fits changed). Noiseless runs (a noisy ratio
 * does not stand still to 0.05%), not a restart's probes, off with the screening
 * (--no-estimate), as the other cuts. */
static int kw_ofat_pair_unmoved(const kw_eng *E, const kw_ofat_probe *pr, int ka, int va, double fa,
                                int kb, int vb, double fb, double fx)
{
    if (!E->o.estimate || E->ev->noisy || pr->ban_knob >= 0 || pr->um.n == 0 || !isfinite(fa) ||
        !isfinite(fb) || !isfinite(fx) || fx <= 0)
        return 0;
    double ra = fa / fx, rb = fb / fx;
    const size_t *at = kw_idmap_find(&pr->um, kw_ofat_um_key(&ka, &va, &ra, &kb, &vb, &rb));
    if (!at)
        return 0;
    const float *m = pr->um_r[*at];
    if (fabs(ra / m[0] - 1.0) > KW_UNMOVED_EPS || fabs(rb / m[1] - 1.0) > KW_UNMOVED_EPS)
        return 0;
    return ra * rb * m[2] * (1.0 - KW_UNMOVED_MARGIN) >= 1.0 - E->o.min_effect_pct / 100.0;
}

static int kw_ofat_plist_push(kw_eng *E, kw_ofat_probe *pr, const kw_cand *c, int group)
{
    if (pr->ban_knob >= 0 && c->v[pr->ban_knob] == pr->ban_value)
        return 0; /* a restart's tabu step (kw_ofat_banned) */
    if (pr->n_plist == pr->cap_plist) {
        int nc = pr->cap_plist ? pr->cap_plist * 2 : KW_PLIST_CAP0;
        kw_item *a = realloc(pr->plist, (size_t)nc * sizeof *a);
        if (!a)
            return kw_error_set(KW_ENOMEM, "out of memory planning probes");
        pr->plist = a;
        pr->cap_plist = nc;
    }
    kw_item *it = &pr->plist[pr->n_plist++];
    it->cand = *c;
    it->id = kw_knobs_cand_id(E->ks, c);
    it->con = kw_knobs_cand_violates(E->ks, c);
    it->group = group;
    it->dropped = 0;
    return 0;
}

typedef struct kw_second {
    int knob, value, order;
    double key;
} kw_second;

static int kw_second_cmp(const void *a, const void *b)
{
    const kw_second *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->order - y->order;
}

/* Plans first step g with each second change of buf[0 .. n-1] (knob, value), in
 * the order of their keys (kw_second_cmp), each config once (seen). */
static int kw_ofat_push_seconds(kw_eng *E, kw_shape *s, int g, kw_second *buf, int n,
                                kw_idmap *seen)
{
    kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    qsort(buf, (size_t)n, sizeof *buf, kw_second_cmp);
    for (int i = 0; i < n; i++) {
        kw_cand c = pr->first[g];
        c.v[buf[i].knob] = (uint8_t)buf[i].value;
        int added, rc = kw_idmap_add(seen, kw_knobs_cand_id(E->ks, &c), 0, &added);
        if (rc == 0 && added)
            rc = kw_ofat_plist_push(E, pr, &c, g);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Every neighbour of first step g along another knob, ordered by what the same
 * change did alone from the incumbent (key[k][v], least bad first: a change
 * that costs nothing alone is the likeliest repair or partner). */
static int kw_ofat_probe_neighbours(kw_eng *E, kw_shape *s, int g, double key[][KW_VALUE_MAX],
                                    kw_second *buf, kw_idmap *seen, int changed_only)
{
    kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    const kw_knobspace *ks = E->ks;
    int fk;
    kw_engine_step_check(&fk, ks, &s->pos, &pr->first[g]);
    int n = 0;
    for (int k = 0; k < ks->n_knobs; k++) {
        if (k == fk || (changed_only && s->pos.v[k] == s->base.v[k]) || kw_ofat_frozen(E, k))
            continue;
        for (int v = 0; v < ks->knobs[k].n_values; v++) {
            if (v == s->pos.v[k])
                continue;
            buf[n].knob = k;
            buf[n].value = v;
            buf[n].order = n;
            buf[n].key = key[k][v];
            n++;
        }
    }
    return kw_ofat_push_seconds(E, s, g, buf, n, seen);
}

/* Knob k is one a settle's walk changed (pr->hop) or of such a knob's op block. */
static int kw_ofat_hop_knob(const kw_eng *E, const kw_ofat_probe *pr, int k)
{
    if (pr->hop[k])
        return 1;
    for (int h = 0; h < E->ks->n_knobs; h++)
        if (pr->hop[h] && kw_ofat_same_block(E->ks, h, k))
            return 1;
    return 0;
}

/* The probe list of a local optimum that settle reached less than the minimum effect
 * from the one it left (pr->settled_at; noiseless): (1) and (1b) stay; of (2) and (3)
 * only the pairs that the hop can have changed: with a knob the walk changed or of its
 * op block (kw_ofat_hop_knob), or of two block-less knobs (queueing knobs interact
 * with each other beyond what one hop says: validate_small decode seed 7, 20 seeds,
 * converged +10.55% when such optima were confined to the hop's pairs, placement x
 * max_batch having lost before a launch_mode hop and gained 4.5% after it; README).
 * Why (issue 18): at 27 knobs a third of the evaluations to converge came after a
 * shape's first settle, each settled optimum paying a whole list for pairs one or two
 * sub-threshold changes from a list already spent. Leaving all of (3) out lost 0.38%
 * on three default-space runs (README). */
static void kw_ofat_settle_filter(kw_eng *E, kw_shape *s)
{
    kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    const kw_knobspace *ks = E->ks;
    int out = pr->pairs0, blk = pr->blk_end, q = pr->q_end;
    for (int i = pr->pairs0; i < pr->n_plist; i++) {
        int ka = -1, kb = -1;
        for (int k = 0; k < ks->n_knobs; k++)
            if (pr->plist[i].cand.v[k] != s->pos.v[k]) {
                if (ka < 0)
                    ka = k;
                else
                    kb = k;
            }
        int keep = kb < 0 || (!kw_ofat_in_block(ks, ka) && !kw_ofat_in_block(ks, kb)) ||
                   kw_ofat_hop_knob(E, pr, ka) || kw_ofat_hop_knob(E, pr, kb);
        if (i < pr->blk_end && !keep)
            blk--;
        if (i < pr->q_end && !keep)
            q--;
        if (keep)
            pr->plist[out++] = pr->plist[i];
    }
    pr->n_plist = out;
    pr->blk_end = blk;
    pr->q_end = q;
}

/* A queue pair (issue 18): two first steps i, j of the probes on knobs a and b of the
 * serving queue (opts.queue: max_batch, batch_timeout_us, placement,
 * cores_per_request, ...) whose changes alone both pass every guard. Their
 * interaction is in the queue, which the cheap
 * estimate's closed form does not see: on validate_resnet_h100 conv_b32_c2 seed 1,
 * max_batch 1 -> 4 loses 23.5% alone and placement round_robin -> least_loaded 3.9%,
 * together they gain 2.1% (full ratio f(x+a+b) f(x) / (f(x+a) f(x+b)) = 0.763, the
 * estimate's 1.011: under least_loaded its p95 ignores max_batch), so a probe round
 * ordered by forecast and estimate takes them last. kw_ofat_probe_list gives them
 * their own round, ahead of the block pairs. */
static int kw_ofat_queue_pair(kw_eng *E, kw_shape *s, int i, int j, int a, int b)
{
    if (a >= 64 || b >= 64 || !(E->o.queue >> a & 1u) || !(E->o.queue >> b & 1u))
        return 0;
    const kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    kw_cst ci, cj;
    kw_engine_stats_c(E, s, &pr->first[i], &ci);
    kw_engine_stats_c(E, s, &pr->first[j], &cj);
    return ci.n == E->reps && ci.ok && cj.n == E->reps && cj.ok;
}

static double kw_ofat_est_repair_forecast(kw_eng *E, kw_shape *s, const kw_cand *pair, int k,
                                          int v);

/* Part (0) of a probe list: the pairs of a guard-failing first step g on a block-less
 * knob with one change of another block-less knob that the cheap estimate says
 * repairs the guard and gains (kw_ofat_est_repair_forecast), best forecast first.
 * Planned at the front of the list, in a round of their own, never cut (issue 18:
 * validate_llama3_npu decode seed 1 at 2% of the space, 69 evaluations: int8 + fp16
 * accumulation, forecast -23%, came 64th, after the fusion knobs' pairs, and the
 * budget ended before the next sweep found down.tile_k = 128, -8.6% more: +8.0%
 * above the optimum; stop 46's kw_ofat_est_repairs only kept the pair from the
 * guard count's cut). */
static int kw_ofat_probe_est_repairs(kw_eng *E, kw_shape *s, int g, int k, kw_second *buf,
                                     kw_idmap *seen)
{
    kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    const kw_knobspace *ks = E->ks;
    kw_cst fs;
    kw_engine_stats_c(E, s, &pr->first[g], &fs);
    if (!E->o.estimate || E->ev->noisy || fs.n != E->reps || fs.ok ||
        strncmp(fs.guards, "error", 5) == 0 || kw_ofat_in_block(ks, k))
        return 0;
    int n = 0;
    for (int b = 0; b < ks->n_knobs; b++) {
        if (b == k || kw_ofat_in_block(ks, b) || kw_ofat_frozen(E, b))
            continue;
        for (int v = 0; v < ks->knobs[b].n_values; v++) {
            if (v == s->pos.v[b])
                continue;
            kw_cand c = pr->first[g];
            c.v[b] = (uint8_t)v;
            if (kw_knobs_cand_violates(ks, &c) >= 0 || kw_ofat_banned(s, &c))
                continue;
            double f = kw_ofat_est_repair_forecast(E, s, &c, k, pr->first[g].v[k]);
            if (!isfinite(f))
                continue;
            buf[n].knob = b;
            buf[n].value = v;
            buf[n].order = n;
            buf[n].key = f;
            n++;
        }
    }
    return kw_ofat_push_seconds(E, s, g, buf, n, seen);
}

/* The probe list of a local optimum, most promising first, so that the budget
 * (spent KW_PROBE_CHUNK evaluations per round) goes to the likeliest pairs:
 * (1) every neighbour of each blocked gain (the repair of a guard that a later
 * change made fail); (1b) each faded gain with every other value of the knobs
 * changed from the baseline (the culprit is among them: a few evaluations);
 * (2) pairs of two other first steps (two near-neutral
 * changes combined: the typical interaction, one evaluation per pair), by rank
 * sum; (3) every other neighbour of each other first step. Items carry their
 * first step's group. Before them all, (0): a guard-failing first step's pairs that
 * the estimate says repair it and gain (kw_ofat_probe_est_repairs). */
static int kw_ofat_probe_list(kw_eng *E, kw_shape *s)
{
    kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    const kw_knobspace *ks = E->ks;
    int rc = 0;
    pr->n_plist = 0;
    pr->pcur = 0;
    pr->rep_end = 0;
    pr->repair0 = -1;
    pr->n_mid = 0;
    pr->have_rep = 0;
    double key[KW_KNOB_MAX][KW_VALUE_MAX];
    int n_nb = 0;
    for (int k = 0; k < ks->n_knobs; k++)
        for (int v = 0; v < ks->knobs[k].n_values; v++) {
            key[k][v] = INFINITY;
            if (v == s->pos.v[k])
                continue;
            n_nb++;
            kw_cand c = s->pos;
            c.v[k] = (uint8_t)v;
            kw_cst cs;
            kw_engine_stats_c(E, s, &c, &cs);
            if (cs.n == E->reps && cs.ok && isfinite(cs.mean))
                key[k][v] = cs.mean;
        }
    kw_idmap seen = {0}; /* the configs already in the list (each once) */
    kw_second *buf = malloc((size_t)(n_nb + 1) * sizeof *buf);
    if (kw_idmap_reserve(&seen, (size_t)(pr->n_first + 1) * (size_t)(n_nb + 1)) != 0 || !buf) {
        rc = kw_error_set(KW_ENOMEM, "out of memory planning probes");
        goto done;
    }
    int knob[KW_PROBE_MAX];
    for (int i = 0; i < pr->n_first; i++)
        kw_engine_step_check(&knob[i], ks, &s->pos, &pr->first[i]);
    /* a restart's probes (kw_ofat_restart_decide): only (2), at most one pair per
     * neighbour of the restart point (linear in the knob values; on the default
     * space's 27 knobs the full list spent 2,617 evaluations in 5 restarts and found
     * nothing, while both validate_small traps are left by a pair of first steps) */
    int restart = pr->ban_knob >= 0;
    for (int g = 0; g < pr->n_first && rc == 0 && !restart; g++)
        rc = kw_ofat_probe_est_repairs(E, s, g, knob[g], buf, &seen);
    pr->rep_end = pr->n_plist;
    for (int g = 0; g < pr->n_blocked && rc == 0 && !restart; g++)
        rc = kw_ofat_probe_neighbours(E, s, g, key, buf, &seen, 0);
    for (int g = pr->n_blocked; g < pr->n_blocked + pr->n_faded && rc == 0 && !restart; g++)
        rc = kw_ofat_probe_neighbours(E, s, g, key, buf, &seen, 1);
    int lo = restart ? 0 : pr->n_blocked, hi = pr->n_first;
    pr->pairs0 = pr->n_plist; /* (2) and (3): kw_ofat_probe_cut may leave them out ((1b): fewer
                               * of its rules) */
    /* (2) in three passes: first the queue pairs (kw_ofat_queue_pair: a few, the
     * product of the serving knobs' values, whose interaction the estimate misses),
     * then the pairs of two knobs of one block (a tile pair whose
     * product is what fits: validate_gqa_h100 prefill needs qkv.tile_m and qkv.tile_n
     * to change together, each alone giving exactly the incumbent's figure), each
     * ending its own round (kw_ofat_probe_plan, q_end, blk_end), then the rest by rank
     * sum. Not in a restart (one pass of all but the block pairs): its list is capped
     * at one pair per neighbour, and block pairs first
     * pushed the pair that leaves validate_small decode seed 17's trap past the cap */
    pr->q_end = pr->n_plist;
    pr->blk_end = pr->n_plist;
    for (int pass = restart ? 2 : 0; pass < 3; pass++) {
        for (int sum = 2 * lo + 1; sum <= 2 * hi - 3 && rc == 0 && !(restart && pr->n_plist >= n_nb);
             sum++)
            for (int i = lo; i < hi && rc == 0 && !(restart && pr->n_plist >= n_nb); i++) {
                int j = sum - i;
                if (j <= i)
                    break;
                if (j >= hi || knob[j] == knob[i])
                    continue;
                /* pass 0: queue pairs; 1: one block's; 2: the rest (a restart's: all but
                 * one block's, in one pass) */
                int blk = kw_ofat_same_block(ks, knob[i], knob[j]);
                int cl = blk ? 1 : !restart && kw_ofat_queue_pair(E, s, i, j, knob[i], knob[j]) ? 0 : 2;
                if (cl != pass)
                    continue;
                kw_cand c = pr->first[i];
                c.v[knob[j]] = pr->first[j].v[knob[j]];
                int added;
                rc = kw_idmap_add(&seen, kw_knobs_cand_id(ks, &c), 0, &added);
                if (rc == 0 && added)
                    rc = kw_ofat_plist_push(E, pr, &c, i);
            }
        if (pass == 0)
            pr->q_end = pr->n_plist;
        if (pass <= 1)
            pr->blk_end = pr->n_plist;
    }
    /* (3) is most of the evaluations to converge on many knobs (the default space's 27:
     * 85% were probes), but its tail pays: pairing only the first 8 or 16 other first
     * steps with every neighbour lost 12% on attn_decode_kv2048_b32_c16 (13,448.5 us
     * against 11,981.8 us), so a search's probes keep all of it; a restart's skip it.
     * What (2) and (3) leave out is what the knob pairs' measured interactions rule
     * out (kw_ofat_probe_cut, when each pair comes up: 16,031 -> 10,889 evaluations on
     * the default job (README) with block pairs first; the same five recommendations) */
    int hi3 = restart ? lo : hi;
    for (int g = lo; g < hi3 && rc == 0; g++)
        rc = kw_ofat_probe_neighbours(E, s, g, key, buf, &seen, 0);
    if (rc == 0 && !restart && pr->settled && pr->settled_at == kw_knobs_cand_id(ks, &s->pos))
        kw_ofat_settle_filter(E, s);
    if (rc == 0)
        pr->plist_ready = 1;
done:
    kw_idmap_free(&seen);
    free(buf);
    return rc;
}

static int kw_ofat_in_plist(const kw_ofat_probe *pr, uint64_t id)
{
    for (int i = 0; i < pr->n_plist; i++)
        if (pr->plist[i].id == id)
            return 1;
    return 0;
}

/* Three-knob repairs, appended once the probe list is spent without a gain (the
 * trapped seed of validate_resnet_h100, doc/search-log.md "The trapped seed": conv3x3.tile_k
 * 64 -> 576 fails the fallback guard unless tile_m and tile_n change with it, each
 * pair still falls back, and the three together leave the local optimum by 2.5%).
 * For each guard-failing first step F on knob f: every second change a of another
 * knob of f's block (F + a, the "mid", one knob from F: an ordinary pair, planned
 * again here unless evaluated, because the screen may have skipped it), then every
 * third change b of a third knob of the block (F + a + b, one knob from the mid).
 * Only the block's knobs: a guard a tile size breaks is repaired by the block's other
 * tiles, and the block is small (3 knobs of 3 values: 4 mids and 4 triples per F),
 * where all pairs of partners would cost (neighbours)^2. The repair rounds are not
 * screened: the estimate says nothing about a guard-failing path. Each move stays a
 * journalled one-knob step (EXPLORE F, EXPLORE the mid, judge the triples, then
 * ACCEPT or REVERT twice). Returns 0; pr->repair0 marks where they begin. */
static int kw_ofat_probe_repairs(kw_eng *E, kw_shape *s)
{
    kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    const kw_knobspace *ks = E->ks;
    pr->repair0 = pr->n_plist;
    pr->n_mid = 0;
    for (int g = 0; g < pr->n_first; g++) {
        kw_cst fs;
        kw_engine_stats_c(E, s, &pr->first[g], &fs);
        if (fs.n != E->reps || fs.ok || strncmp(fs.guards, "error", 5) == 0)
            continue; /* only guard-failing first steps need a repair */
        int f;
        kw_engine_step_check(&f, ks, &s->pos, &pr->first[g]);
        for (int a = 0; a < ks->n_knobs; a++) {
            if (a == f || kw_ofat_frozen(E, a) || !kw_ofat_same_block(ks, f, a))
                continue;
            for (int va = 0; va < ks->knobs[a].n_values; va++) {
                if (va == s->pos.v[a])
                    continue;
                kw_cand mid = pr->first[g];
                mid.v[a] = (uint8_t)va;
                if (kw_knobs_cand_violates(ks, &mid) >= 0 || kw_ofat_banned(s, &mid))
                    continue;
                kw_cst ms; /* a mid that passes the guard is a stepping stone too */
                kw_engine_stats_c(E, s, &mid, &ms);
                if (pr->n_mid == KW_MID_MAX)
                    return 0;
                int m = pr->n_mid++;
                pr->mid[m] = mid;
                pr->mid_first[m] = g;
                int rc = 0;
                if (ms.n != E->reps && !kw_ofat_in_plist(pr, kw_knobs_cand_id(ks, &mid)))
                    rc = kw_ofat_plist_push(E, pr, &mid, g); /* the mid, as a pair of F */
                for (int b = 0; b < ks->n_knobs && rc == 0; b++) {
                    if (b == f || b == a || kw_ofat_frozen(E, b) || !kw_ofat_same_block(ks, f, b))
                        continue;
                    for (int vb = 0; vb < ks->knobs[b].n_values && rc == 0; vb++) {
                        if (vb == s->pos.v[b])
                            continue;
                        kw_cand t = mid;
                        t.v[b] = (uint8_t)vb;
                        if (!kw_ofat_in_plist(pr, kw_knobs_cand_id(ks, &t)))
                            rc = kw_ofat_plist_push(E, pr, &t, KW_PROBE_MAX + m);
                    }
                }
                if (rc != 0)
                    return rc;
            }
        }
    }
    return 0;
}

/* A planned pair of parts (2) and (3) (first[p->group] plus one change) that the
 * measured interactions (kw_ofat_pair_composes) or a guard failure no other block
 * repaired (kw_ofat_probe_cut) rule out; the faded gains' pairs (1b) by the rules that
 * read the pair itself; the blocked gains' pairs (1) and the repairs are never cut. */
/* A probe pair item of group g, first[g] plus one change of another knob, taken
 * apart: ka the knob first[g] changes from the incumbent, kb the other, fa and fb
 * the figures of the two changes alone. 0 when it is such a pair; else -1. The one
 * reading of a pair for the cuts (planning) and the learning (deciding). */
static int kw_ofat_pair_split(kw_eng *E, kw_shape *s, const kw_item *it, int *ka, int *kb,
                              kw_cst *fa, kw_cst *fb)
{
    const kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    if (it->con >= 0 || it->group < 0 || it->group >= pr->n_first ||
        kw_engine_step_check(ka, E->ks, &s->pos, &pr->first[it->group]) != 0 ||
        kw_engine_step_check(kb, E->ks, &pr->first[it->group], &it->cand) != 0) {
        kw_error_clear();
        return -1;
    }
    kw_cand second = s->pos;
    second.v[*kb] = it->cand.v[*kb];
    kw_engine_stats_c(E, s, &pr->first[it->group], fa);
    kw_engine_stats_c(E, s, &second, fb);
    return 0;
}

/* kw_ofat_pair_split, and both changes alone have all their repetitions and pass
 * every guard: 0; else -1. */
static int kw_ofat_pair_parts(kw_eng *E, kw_shape *s, const kw_item *it, int *ka, int *kb,
                              kw_cst *fa, kw_cst *fb)
{
    if (kw_ofat_pair_split(E, s, it, ka, kb, fa, fb) != 0)
        return -1;
    return fa->n == E->reps && fa->ok && fb->n == E->reps && fb->ok ? 0 : -1;
}

/* A pair item across two blocks (kw_ofat_pair_split) one of whose changes alone fails
 * a guard (not an evaluator error) while the other passes: 0 with *k, *v that change;
 * else -1. */
static int kw_ofat_pair_guarded(kw_eng *E, kw_shape *s, const kw_item *it, int *k, int *v)
{
    int ka, kb;
    kw_cst fa, fb;
    if (kw_ofat_pair_split(E, s, it, &ka, &kb, &fa, &fb) != 0 ||
        kw_ofat_same_block(E->ks, ka, kb) || fa.n != E->reps || fb.n != E->reps ||
        fa.ok == fb.ok)
        return -1;
    const kw_cst *f = fa.ok ? &fb : &fa;
    if (strncmp(f->guards, "error", 5) == 0)
        return -1;
    *k = fa.ok ? kb : ka;
    *v = it->cand.v[*k];
    return 0;
}

/* A pair the guard count below would cut (knob k at value v fails a guard alone) that
 * the cheap estimate says repairs it and gains: both knobs of no op block (precision,
 * accumulation, fusion, queueing: a change of the numerics or of the kernels' split,
 * whose guard another such knob moves back), the estimate of k = v alone fails
 * exactly the guards its full evaluation failed (so the estimate judges them: drift,
 * fallback, infeasible are the full evaluation's own functions), the estimate of the
 * pair fails none, and the pair's forecast, k = v's full figure alone times the
 * estimate's ratio of the pair to it, gains the minimum effect on the incumbent:
 * that forecast (else NAN; kw_ofat_est_repairs: 1, plan it). The count learns that a failure is the change's own, and it is, for
 * every second knob but the one or two that move the failing figure back; the
 * estimate names those. validate_llama3_npu decode seed 1 (stop 46): int8 fails the
 * drift budget alone (rel RMS 0.0259-0.0267 against 0.0255) and with flash attention,
 * fuse_norm_gemm and fuse_gate_up (3 pairs), so its pair with accum_precision = fp16
 * (0.02549, a pass, -23%) was cut and the run converged 39.5% above the optimum.
 * Measured and left out (stop 46): without the forecast's gain, every pair the
 * estimate passes cost 11% more evaluations to converge at the growth bench's 26
 * knobs; with it but with a block's knob as the repair (fuse_attention = qk_softmax
 * failing the fallback guard, attn.tile_m = 32 fitting it, -4.3% there), the
 * default job's attn_decode_kv2048_b32_c16 took that step and converged 6.3% worse
 * (12,070 against 11,353 us), the fusion's tile repairs being the fusion pairs' and
 * the three-knob repairs' to find. Counted as estimates; a pure function of the
 * candidates and the journaled figures, so a resume plans the same. */
static double kw_ofat_est_repair_forecast(kw_eng *E, kw_shape *s, const kw_cand *pair, int k,
                                          int v)
{
    int kb = -1;
    for (int j = 0; j < E->ks->n_knobs; j++)
        if (j != k && pair->v[j] != s->pos.v[j])
            kb = j;
    if (!E->ev->predict || kb < 0 || kw_ofat_in_block(E->ks, k) || kw_ofat_in_block(E->ks, kb))
        return NAN;
    kw_cand alone = s->pos;
    alone.v[k] = (uint8_t)v;
    kw_cst fa, fx;
    kw_engine_stats_c(E, s, &alone, &fa);
    kw_engine_stats_c(E, s, &s->pos, &fx);
    if (!fa.guards || !fa.guards[0] || !(fx.n == E->reps && fx.ok && isfinite(fx.mean)) ||
        !(isfinite(fa.mean) && fa.mean > 0))
        return NAN;
    const kw_cand *c[2] = {&alone, pair};
    char g[2][sizeof ((kw_metrics *)0)->guards];
    double e[2];
    for (int i = 0; i < 2; i++) {
        kw_metrics mt;
        memset(&mt, 0, sizeof mt);
        s->estimates++;
        E->sum.estimates++;
        int rc = kw_engine_predict(E, c[i], s->shape, &mt);
        kw_error_clear();
        if (rc != 0)
            return NAN;
        memcpy(g[i], mt.guards, sizeof g[i]);
        g[i][sizeof g[i] - 1] = '\0';
        e[i] = mt.v[E->primary];
    }
    if (strcmp(g[0], fa.guards) != 0 || g[1][0] != '\0' || !(isfinite(e[0]) && e[0] > 0) ||
        !isfinite(e[1]))
        return NAN;
    double f = fa.mean * e[1] / e[0];
    return f <= fx.mean * (1.0 - E->o.min_effect_pct / 100.0) ? f : NAN;
}

static int kw_ofat_est_repairs(kw_eng *E, kw_shape *s, const kw_item *it, int k, int v)
{
    return isfinite(kw_ofat_est_repair_forecast(E, s, &it->cand, k, v));
}

static int kw_ofat_pair_uncoupled(kw_eng *E, kw_shape *s, const kw_item *it, int ka, double fa,
                                  int kb, double fb, double fx);
static int kw_ofat_pair_below(kw_eng *E, kw_shape *s, const kw_item *it, int ka, double fa, int kb,
                              double fb, double fx, double need);

/* The faded gains' pairs (1b) are screened too (issue 18: at 27 knobs they were 108 of
 * the 1,059 evaluations per shape to converge, x2.8 from 16 knobs, every knob changed
 * from the baseline pairing with each faded gain at each local optimum, and never cut),
 * but only by the rules that read the pair itself: the same value pair measured in the
 * same context (kw_ofat_pair_recalls) or where both its changes stood still
 * (kw_ofat_pair_unmoved), the estimate's interaction of the pair bounded by its knobs'
 * measured misses (kw_ofat_pair_uncoupled), and the guard rule below. Not the knob
 * pairs' least ratios learnt from other pairs (kw_ofat_pair_composes,
 * kw_ofat_pair_bounded): a faded gain is one a later change masked, a coupling of
 * that value pair which the knobs' other pairs do not show (composes cut the faded pair
 * that left growth's 27 knobs seed 4 attn_decode_kv2048_b32_c16, which converged 13.12%
 * worse; README). The blocked gains (1) and the repairs are never cut. */
static int kw_ofat_probe_cut(kw_eng *E, kw_shape *s, int at)
{
    kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    int ka, kb, gk, gv;
    kw_cst fx, fa, fb;
    int faded = at < pr->pairs0;
    if (at < pr->rep_end || (faded && pr->plist[at].group < pr->n_blocked) ||
        (pr->repair0 >= 0 && at >= pr->repair0))
        return 0;
    /* a guard failure no knob of another block has repaired: a change that fails a guard
     * alone and still failed it in KW_INTER_MIN_PAIRS pairs with passing changes of other
     * blocks, none passing, is not paired across blocks again (the default space's 27
     * knobs: 2,407 of 2,431 such pairs evaluated failed the guard, 1 gained; the blocked
     * gains (1) and a block's own knobs, the repairs a tile's guard needs, stay); a
     * round plans no more of them than the measurement still lacks (g_planned) */
    if (E->o.estimate && pr->ban_knob < 0 &&
        kw_ofat_pair_guarded(E, s, &pr->plist[at], &gk, &gv) == 0) {
        if (pr->g_repaired[gk][gv] ||
            pr->g_tried[gk][gv] + pr->g_planned[gk][gv] < KW_INTER_MIN_PAIRS) {
            pr->g_planned[gk][gv]++;
            return 0;
        }
        return !kw_ofat_est_repairs(E, s, &pr->plist[at], gk, gv);
    }
    if (kw_ofat_pair_parts(E, s, &pr->plist[at], &ka, &kb, &fa, &fb) != 0)
        return 0;
    kw_engine_stats_c(E, s, &s->pos, &fx);
    if (!(fx.n == E->reps && fx.ok))
        return 0;
    if (pr->ban_knob >= 0) {
        /* a restart's pair: taken only if it beats the first descent's best
         * (kw_ofat_restart_decide), so bounded against that, by the estimate's
         * interaction and the knobs' misses only (kw_ofat_pair_uncoupled) */
        kw_cst fbst;
        kw_engine_stats_c(E, s, &((kw_ofat *)s->st)->main.restart_from, &fbst);
        if (!(fbst.n == E->reps && fbst.ok && isfinite(fbst.mean)))
            return 0;
        return kw_ofat_pair_below(E, s, &pr->plist[at], ka, fa.mean, kb, fb.mean, fx.mean,
                                  fbst.mean * (1.0 - E->o.min_effect_pct / 100.0));
    }
    const kw_cand *c = &pr->plist[at].cand;
    return (!faded && (kw_ofat_pair_composes(E, pr, ka, fa.mean, kb, fb.mean, fx.mean) ||
                       kw_ofat_pair_bounded(E, pr, ka, fa.mean, kb, fb.mean, fx.mean))) ||
           kw_ofat_pair_recalls(E, s, pr, ka, c->v[ka], fa.mean, kb, c->v[kb], fb.mean, fx.mean) ||
           kw_ofat_pair_unmoved(E, pr, ka, c->v[ka], fa.mean, kb, c->v[kb], fb.mean, fx.mean) ||
           kw_ofat_pair_uncoupled(E, s, &pr->plist[at], ka, fa.mean, kb, fb.mean, fx.mean);
}

/* est(xab) est(x) / (est(xa) est(xb)): the cheap estimate's interaction of two changes
 * a, b of x (either may be several knobs); NAN when an estimate is missing, fails a guard
 * or is not positive. Counted as estimates. */
static double kw_ofat_est_inter4(kw_eng *E, kw_shape *s, const kw_cand *x, const kw_cand *xa,
                                 const kw_cand *xb, const kw_cand *xab)
{
    const kw_cand *c[4] = {x, xa, xb, xab};
    double e[4];
    for (int i = 0; i < 4; i++) {
        s->estimates++;
        E->sum.estimates++;
        kw_metrics mt;
        memset(&mt, 0, sizeof mt);
        int rc = kw_engine_predict(E, c[i], s->shape, &mt);
        e[i] = rc == 0 && mt.guards[0] == '\0' ? mt.v[E->primary] : NAN;
        kw_error_clear();
        if (!(isfinite(e[i]) && e[i] > 0))
            return NAN;
    }
    return e[3] * e[0] / (e[1] * e[2]);
}

/* The estimate's interaction of a pair of two knobs of one block: est(x+a+b) est(x) /
 * (est(x+a) est(x+b)), x the incumbent, a the first step (onto first), b knob kb's
 * change of the pair (pair); NAN when an estimate is missing or fails a guard. The
 * forecast of a block pair (kw_ofat_pair_forecast) is its two changes alone from full
 * evaluations times this: the full figures carry what the closed-form queue gets
 * wrong on bursty shapes (each change's effect on the tail), the estimate what the
 * two values do together in the kernel (tiles whose product fits, stage 1, which the
 * estimate shares with the full evaluation). validate_small decode seed 9 at 1% (25
 * evaluations): qkv.tile_m=256 and qkv.tile_n=256 each +0.77% alone and -7.6%
 * together, the exhaustive optimum's pair; the estimate alone, scaled by the shape's
 * measured ratio, ranked the pair +55% and the round's 6 evaluations went to pairs
 * with max_batch=1, measured +18.8% alone. Counted as estimates. */
static double kw_ofat_est_interaction(kw_eng *E, kw_shape *s, const kw_cand *first, int kb,
                                      const kw_cand *pair)
{
    if (!E->o.estimate || !E->ev->predict)
        return NAN;
    kw_cand second = s->pos;
    second.v[kb] = pair->v[kb];
    return kw_ofat_est_inter4(E, s, &s->pos, first, &second, pair);
}

/* The forecast of a probe pair item from full evaluations (noiseless): its two
 * changes alone composed, fa fb / fx, times the knob pair's measured least ratio
 * once KW_INTER_MIN_PAIRS pairs of the two knobs were measured (kw_ofat_pair_composes),
 * or, for two knobs of one block, times the estimate's interaction of the pair
 * (kw_ofat_est_interaction); NAN for an item that is no such pair or whose parts are not both guard-passing.
 * The screen orders the round by it before the cheap estimate (kw_mf_screen). */
static double kw_ofat_pair_forecast(kw_eng *E, kw_shape *s, const kw_item *it)
{
    const kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    int ka, kb;
    kw_cst fx, fa, fb;
    if (E->ev->noisy || kw_ofat_pair_parts(E, s, it, &ka, &kb, &fa, &fb) != 0)
        return NAN;
    kw_engine_stats_c(E, s, &s->pos, &fx);
    if (!(fx.n == E->reps && fx.ok && isfinite(fx.mean) && fx.mean > 0))
        return NAN;
    double f = fa.mean * fb.mean / fx.mean;
    if (kw_ofat_same_block(E->ks, ka, kb))
        return f * kw_ofat_est_interaction(E, s, &pr->first[it->group], kb, &it->cand);
    return pr->n_inter[ka][kb] >= KW_INTER_MIN_PAIRS ? f * pr->inter[ka][kb] : f;
}

#define KW_COUPLE_INTER 0.02 /* kw_ofat_pair_uncoupled: an estimated interaction this far
                              * from 1 (|ln|) plans the pair whatever its forecast */
#define KW_COUPLE_MIN_PAIRS 5 /* measured pairs (of each of the two knobs, or of the shape
                               * across blocks) before the estimate's miss stands for this
                               * shape's pairs not yet measured */
#define KW_COUPLE_MARGIN 0.01 /* the least measured miss is shrunk by this share */

/* A probe pair with a knob of an op block whose forecast from the cheap estimate,
 * corrected by the most the estimate has missed an interaction of either knob on this
 * shape, cannot gain (issue 18: at 27 knobs 763 of the 1,249 evaluations per shape to
 * converge were probe pairs, each first step pairing with every other knob's values, so
 * their count grows with the square of the knob values). The estimate's interaction I
 * (kw_ofat_est_interaction) says what the two changes do together beyond what each does
 * alone; the miss of a measured pair is its measured interaction f(x+a+b) f(x) /
 * (f(x+a) f(x+b)) over I (kw_ofat_probe_learn), a knob's least miss over its measured
 * pairs with any knob (kmiss_lo, once KW_COUPLE_MIN_PAIRS of them) how far the estimate
 * has been wrong in favour of a pair with that knob. 1 when |ln I| < KW_COUPLE_INTER and
 * the pair's best case fa fb / fx I times the least of its two knobs' least misses, less
 * KW_COUPLE_MARGIN, misses the minimum effect: not planned. Per knob, not per shape: the
 * shape's least miss (est_miss_lo) is set by a few knobs (the growth bench's 27 knobs,
 * least miss over all runs: max_batch and placement 0.14, batch_timeout_us 0.16,
 * o.loop_order and attn.double_buffer 0.35; the median miss 1.0, 95% of them >= 0.978)
 * and left every near-neutral pair of the other knobs planned. So pairs of one block (a
 * tile pair whose product is what fits is an interaction stage 1, in the estimate, sees:
 * |ln I| large) are screened as pairs across blocks are. A pair across blocks with a
 * knob of fewer measured misses falls back on the shape's least miss over its measured
 * pairs across blocks (the rule of 16f019a). Pairs of two block-less knobs never: the
 * closed-form queue misses their interactions, and screening them by the bound lost
 * 7.7% on the growth bench's 27 knobs seed 4 attn_decode_kv2048_b32_c16 (a changed path
 * that never reached attn.double_buffer=off with placement=least_loaded; README). A
 * restart's pairs are bounded against the first descent's best instead (kw_ofat_pair_below); a
 * change never evaluated alone or failing a guard: planned as before;
 * off with the screening (--no-estimate) and on a noisy evaluator. The |ln I| bound is
 * 16f019a's: that pair's estimate saw the coupling (I 0.949) but not its size (measured
 * below 0.80); a cut by the estimate alone (no measured miss) lost validate_llama3_tpu
 * decode seed 3 at 1% (README). */
static int kw_ofat_pair_uncoupled(kw_eng *E, kw_shape *s, const kw_item *it, int ka, double fa,
                                  int kb, double fb, double fx)
{
    const kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    return pr->ban_knob < 0 &&
           kw_ofat_pair_below(E, s, it, ka, fa, kb, fb, fx, fx * (1.0 - E->o.min_effect_pct / 100.0));
}

/* kw_ofat_pair_uncoupled's bound against a figure of the caller's (need): 1 when the pair's
 * best case fa fb / fx I lo (1 - KW_COUPLE_MARGIN) is at least need. A restart's pairs
 * are bounded so against the first descent's best, the only figure they are taken for
 * beating (kw_ofat_probe_cut; issue 18: a restart's probes were never cut, 42 of the
 * 1,041 evaluations per shape to converge at 27 knobs, none of them a gain there). */
static int kw_ofat_pair_below(kw_eng *E, kw_shape *s, const kw_item *it, int ka, double fa, int kb,
                              double fb, double fx, double need)
{
    const kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    if (!E->o.estimate || E->ev->noisy ||
        (!kw_ofat_in_block(E->ks, ka) && !kw_ofat_in_block(E->ks, kb)) || !isfinite(fa) ||
        !isfinite(fb) || !isfinite(fx) || fx <= 0)
        return 0;
    double lo;
    if (pr->n_kmiss[ka] >= KW_COUPLE_MIN_PAIRS && pr->n_kmiss[kb] >= KW_COUPLE_MIN_PAIRS)
        lo = fmin(pr->kmiss_lo[ka], pr->kmiss_lo[kb]);
    else if (!kw_ofat_same_block(E->ks, ka, kb) && pr->n_est_miss >= KW_COUPLE_MIN_PAIRS)
        lo = pr->est_miss_lo;
    else
        return 0;
    double r = kw_ofat_est_interaction(E, s, &pr->first[it->group], kb, &it->cand);
    if (!isfinite(r) || fabs(log(r)) >= KW_COUPLE_INTER)
        return 0;
    return fa * fb / fx * r * lo * (1.0 - KW_COUPLE_MARGIN) >= need;
}

/* The new evaluations a probe round may plan: KW_PROBE_CHUNK, and under a budget
 * (noiseless or not) at most a KW_PROBE_BUDGET_SHARE-th of it, at least
 * KW_PROBE_CHUNK_MIN (issue 18). A round's best pair is taken only once the round is
 * spent, so at 25 evaluations (2% of validate_small_mlp's 1,296) one 16-evaluation
 * round was most of what the first local optimum had left: decode seed 10 found
 * fuse_gate_up + fuse_epilogue (-6.1%) as the round's 11th evaluation, the 23rd of
 * 25, and the budget ended before gate_up.tile_n = 64 (-6.1%) and graph launches
 * (-7.5%): +34.55% above the optimum on the long sample. In rounds of 4 the first
 * round holds the same pair (4th of the list by rank sum) and the walk takes both
 * later steps within the 25: the optimum. Budgets of 128 and more keep rounds of 16;
 * unbudgeted runs (the growth bench, the default job) are unchanged. */
static int kw_ofat_probe_chunk(const kw_eng *E)
{
    if (E->o.budget <= 0 || E->o.budget / KW_PROBE_BUDGET_SHARE >= KW_PROBE_CHUNK)
        return KW_PROBE_CHUNK;
    long c = E->o.budget / KW_PROBE_BUDGET_SHARE;
    return c < KW_PROBE_CHUNK_MIN ? KW_PROBE_CHUNK_MIN : (int)c;
}

/* This round's share of the probe list: up to KW_PROBE_CHUNK configs not yet
 * evaluated (memo hits and constraint breakers ride along for free); the
 * list is built once per local optimum. */
static int kw_ofat_probe_plan(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    kw_ofat_probe *pr = &o->probe;
    if (s->budget_hit) {
        pr->plist_ready = 0;
        pr->fp_pending = 0;
        kw_ofat_enter_fix(s);
        return KW_OFAT_MOVED;
    }
    if (pr->fp_pending) {
        pr->fp_pending = 0;
        for (int g = 0; g < pr->fp_n; g++) {
            int rc = kw_ofat_item_add_once(E, s, &pr->fp_third[g], g);
            if (rc != 0)
                return rc;
        }
        pr->fp_running = s->n_items > 0;
        if (pr->fp_running)
            return KW_OFAT_PLANNED;
    }
    if (!pr->plist_ready) {
        kw_ofat_pick_firsts(E, s);
        int rc = pr->n_first > 0 ? kw_ofat_probe_list(E, s) : 0;
        if (rc != 0)
            return rc;
    }
    if ((pr->n_first == 0 || pr->pcur >= pr->n_plist) && pr->ban_knob >= 0) {
        pr->plist_ready = 0; /* a restart's probes found nothing: back to the best */
        o->ph = KW_OFAT_RESTART;
        return KW_OFAT_MOVED;
    }
    if (pr->n_first > 0 && pr->pcur >= pr->n_plist && pr->repair0 < 0) {
        int rc = kw_ofat_probe_repairs(E, s);
        if (rc != 0)
            return rc;
    }
    if (pr->n_first == 0 || pr->pcur >= pr->n_plist) {
        pr->plist_ready = 0;
        pr->probed = 1;
        pr->probed_at = kw_knobs_cand_id(E->ks, &s->pos);
        kw_ofat_enter_excursion(E, s);
        return KW_OFAT_MOVED;
    }
    int fresh = 0;
    pr->chunk0 = pr->pcur;
    memset(pr->g_planned, 0, sizeof pr->g_planned);
    while (pr->pcur < pr->n_plist && s->n_items < KW_PROBE_CHUNK_ITEMS) {
        const kw_item *p = &pr->plist[pr->pcur];
        int costs = p->con < 0 && kw_engine_cost(E, s, p->id) > 0;
        if (costs && fresh >= kw_ofat_probe_chunk(E))
            break;
        /* a round that begins with (2)'s pairs within one block ends with them: the
         * budget takes a round best estimate first, and the estimate ranks these pairs
         * low (validate_gqa_h100 prefill at 1%: 4 pairs with placement, all exactly the
         * incumbent's figure, took the last 4 evaluations; 0/5 -> 4/5 within 0.5%) */
        if (pr->chunk0 < pr->rep_end && pr->pcur >= pr->rep_end)
            break; /* part (0), the estimated repairs, is a round of its own */
        if (pr->chunk0 >= pr->pairs0 && pr->chunk0 < pr->q_end && pr->pcur >= pr->q_end)
            break; /* and so does one of queue pairs (kw_ofat_queue_pair) */
        if (pr->chunk0 >= pr->q_end && pr->chunk0 < pr->blk_end && pr->pcur >= pr->blk_end)
            break;
        if (costs && kw_ofat_probe_cut(E, s, pr->pcur)) {
            pr->pcur++;
            continue;
        }
        int rc = kw_engine_item_add(E, s, &p->cand, p->group);
        if (rc != 0)
            return rc;
        s->items[s->n_items - 1].known = kw_ofat_pair_forecast(E, s, &s->items[s->n_items - 1]);
        fresh += costs;
        pr->pcur++;
    }
    return KW_OFAT_PLANNED;
}

/* One repair group's steps (kw_ofat_probe_repairs): EXPLORE onto its first step,
 * EXPLORE onto its mid, the triples of the group rejected or the winner accepted,
 * else REVERT to the first step and to the start. A mid the budget left
 * unevaluated cannot be stood on: its triples were cut with it (same cost). */
static int kw_ofat_repair_decide(kw_eng *E, kw_shape *s, int g, int win, const kw_verdict *v,
                                 const kw_cand *start, const kw_cst *inc)
{
    kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    int m = g - KW_PROBE_MAX;
    const kw_cand *first = &pr->first[pr->mid_first[m]], *mid = &pr->mid[m];
    kw_cst fs, ms;
    kw_engine_stats_c(E, s, first, &fs);
    kw_engine_stats_c(E, s, mid, &ms);
    if (ms.n == 0)
        return 0;
    char why[KW_REASON_LEN];
    snprintf(why, sizeof why, "probe: first step (alone %+.2f%%, guard %.80s) tried with two more "
             "knobs of its block that may repair the guard", -kw_engine_gain_pct(inc->mean, fs.mean),
             fs.guards);
    int rc = kw_engine_step(E, s, first, KW_DECIDE_EXPLORE, KW_STEP_PROBE, NAN, -1, why);
    if (rc != 0)
        return rc;
    snprintf(why, sizeof why, "probe: second step (%+.2f%% from the incumbent%s%.80s) on the way "
             "to a three-knob repair", -kw_engine_gain_pct(inc->mean, ms.mean),
             ms.ok ? "" : ", guard ", ms.ok ? "" : ms.guards);
    if ((rc = kw_engine_step(E, s, mid, KW_DECIDE_EXPLORE, KW_STEP_PROBE, NAN, -1, why)) != 0)
        return rc;
    if ((rc = kw_ofat_emit_rejects(E, s, win, KW_STEP_PROBE, v, g)) != 0)
        return rc;
    if (win >= 0 && s->items[win].group == g)
        return kw_engine_step_judged(E, s, &s->items[win].cand, KW_DECIDE_ACCEPT, KW_STEP_PROBE,
                                     &v[win], v[win].why);
    rc = kw_engine_step(E, s, first, KW_DECIDE_REVERT, KW_STEP_PROBE, NAN, -1,
                        "probe: no third knob of the block repairs the guard with a gain: step back");
    if (rc == 0)
        rc = kw_engine_step(E, s, start, KW_DECIDE_REVERT, KW_STEP_PROBE, NAN, -1,
                            "probe found no repair that beats the incumbent: step back");
    return rc;
}

/* Remember the best guard-passing repair of the round (a triple of a repair group
 * that passes every guard although its first step failed one). */
static void kw_ofat_note_repairs(kw_eng *E, kw_shape *s)
{
    kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        if (it->group < KW_PROBE_MAX || it->con >= 0 || it->dropped)
            continue;
        kw_cst c, ms;
        int m = it->group - KW_PROBE_MAX;
        kw_engine_stats(E, s->shape, it->id, &c);
        kw_engine_stats_c(E, s, &pr->mid[m], &ms);
        if (c.n != E->reps || !c.ok || !isfinite(c.mean) || ms.n == 0 ||
            (pr->have_rep && !(c.mean < pr->rep_mean)))
            continue;
        pr->have_rep = 1;
        pr->rep_mean = c.mean;
        pr->rep_first = pr->first[pr->mid_first[m]];
        pr->rep_mid = pr->mid[m];
        pr->rep_best = it->cand;
    }
}

/* The repairs are spent and none beats the incumbent, but one passes every guard:
 * a region the one-knob walk cannot enter (its way in fails a guard). The tabu
 * excursion starts there instead of at the incumbent: three EXPLORE steps onto
 * the repair (the path the backtrack walks back), then the excursion's moves,
 * each judged against the incumbent as always. On validate_resnet_h100 conv_b8_c4
 * seed 5 the repair is 2.8% worse than the incumbent and its max_batch neighbour
 * 0.67% better, the exhaustive optimum. */
static int kw_ofat_repair_excursion(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    kw_ofat_probe *pr = &o->probe;
    kw_ofat_excursion *ex = &o->ex;
    kw_cand start = s->pos;
    kw_cst inc;
    kw_engine_stats_c(E, s, &start, &inc);
    char why[KW_REASON_LEN];
    snprintf(why, sizeof why, "probe: towards the best guard-passing repair (%+.2f%% from the "
             "incumbent), to explore from it", -kw_engine_gain_pct(inc.mean, pr->rep_mean));
    const kw_cand *walk[3] = {&pr->rep_first, &pr->rep_mid, &pr->rep_best};
    ex->start = start;
    ex->n_path = 1;
    ex->path[0] = start;
    for (int i = 0; i < 3; i++) {
        int rc = kw_engine_step(E, s, walk[i], KW_DECIDE_EXPLORE, KW_STEP_PROBE, NAN, -1, why);
        if (rc != 0)
            return rc;
        ex->path[ex->n_path++] = s->pos;
    }
    kw_engine_step_check(&ex->last_knob, E->ks, &pr->rep_mid, &pr->rep_best);
    ex->moves_left = E->o.tabu < KW_TABU_MAX - 3 ? E->o.tabu : KW_TABU_MAX - 3;
    pr->plist_ready = 0;
    pr->probed = 1;
    pr->probed_at = kw_knobs_cand_id(E->ks, &start);
    o->ph = KW_OFAT_EXCURSION;
    return 0;
}

/* The round's evaluated pairs into the measured interactions (pr->inter): a pair
 * item of group g (not a repair) is first[g] plus one change of another knob; when
 * the incumbent, both changes alone and the pair pass every guard, its ratio to the
 * product of the changes alone (kw_ofat_pair_composes). */
static int kw_ofat_probe_learn(kw_eng *E, kw_shape *s)
{
    kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    kw_cst fx;
    kw_engine_stats_c(E, s, &s->pos, &fx);
    if (!(fx.n == E->reps && fx.ok && isfinite(fx.mean) && fx.mean > 0))
        return 0;
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        int ka, kb, gk, gv;
        kw_cst fa, fb, fp;
        if (!it->dropped && kw_ofat_pair_guarded(E, s, it, &gk, &gv) == 0) {
            kw_engine_stats(E, s->shape, it->id, &fp);
            if (fp.n == E->reps && fp.ok)
                pr->g_repaired[gk][gv] = 1;
            else if (fp.n == E->reps && strncmp(fp.guards, "error", 5) != 0 &&
                     pr->g_tried[gk][gv] < UINT8_MAX)
                pr->g_tried[gk][gv]++;
            continue;
        }
        if (it->dropped || kw_ofat_pair_parts(E, s, it, &ka, &kb, &fa, &fb) != 0)
            continue;
        kw_engine_stats(E, s->shape, it->id, &fp);
        if (!(fp.n == E->reps && fp.ok && isfinite(fa.mean) && isfinite(fb.mean) &&
              isfinite(fp.mean) && fa.mean > 0 && fb.mean > 0))
            continue;
        float r = (float)(fp.mean * fx.mean / (fa.mean * fb.mean));
        if (E->o.estimate && !E->ev->noisy && pr->ban_knob < 0) {
            double ei = kw_ofat_est_interaction(E, s, &pr->first[it->group], kb, &it->cand);
            if (isfinite(ei)) {
                double miss = fp.mean * fx.mean / (fa.mean * fb.mean) / ei;
                if (!kw_ofat_same_block(E->ks, ka, kb) &&
                    (kw_ofat_in_block(E->ks, ka) || kw_ofat_in_block(E->ks, kb))) {
                    if (pr->n_est_miss == 0 || miss < pr->est_miss_lo)
                        pr->est_miss_lo = miss;
                    pr->n_est_miss++;
                }
                for (int t = 0; t < 2; t++) {
                    int k = t ? kb : ka;
                    if (pr->n_kmiss[k] == 0 || miss < pr->kmiss_lo[k])
                        pr->kmiss_lo[k] = miss;
                    pr->n_kmiss[k]++;
                }
            }
        }
        if (E->o.estimate &&
            kw_ofat_vpair_note(pr, kw_ofat_vpair_key(E, s, ka, it->cand.v[ka], kb, it->cand.v[kb]), r) != 0)
            return -1;
        if (E->o.estimate && !E->ev->noisy &&
            kw_ofat_um_note(pr, ka, it->cand.v[ka], fa.mean / fx.mean, kb, it->cand.v[kb],
                            fb.mean / fx.mean, r) != 0)
            return -1;
        for (int t = 0; t < 2; t++) {
            int a = t ? kb : ka, b = t ? ka : kb;
            if (pr->n_inter[a][b] == 0 || r < pr->inter[a][b])
                pr->inter[a][b] = r;
            if (pr->n_inter[a][b] < UINT16_MAX)
                pr->n_inter[a][b]++;
        }
    }
    kw_error_clear();
    return 0;
}

/* Faded pairs (noiseless): two probe pairs from one first step F, F+A and F+B (A, B
 * changes of two knobs), each gaining on the incumbent below the minimum effect, may
 * reach it together: F+A+B. validate_llama3_tpu decode seed 3 at 1%: F fuse_qkv=on
 * (-0.31%), A down.split_k=2 (-0.20% with F), B fuse_gate_up=on (-0.07% with F); F+A+B
 * is the exhaustive optimum, -1.01%. Per first step of the round the two best such
 * pairs of distinct second knobs (a pair that gives exactly F's figure is a change
 * inert at F: left out); the triple is planned for the next probe round
 * (kw_ofat_probe_plan), walked to as EXPLORE steps F, F+A (kw_ofat_faded_decide). */
static void kw_ofat_faded_pairs(kw_eng *E, kw_shape *s, const kw_cst *inc)
{
    kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    const kw_knobspace *ks = E->ks;
    pr->fp_n = 0;
    for (int g = 0; g < pr->n_first && pr->fp_n < KW_TIE_MAX; g++) {
        kw_cst fs;
        kw_engine_stats_c(E, s, &pr->first[g], &fs);
        int a = -1, b = -1, ka = -1, kb = -1;
        double ma = 0, mb = 0;
        for (int i = 0; i < s->n_items; i++) {
            const kw_item *it = &s->items[i];
            kw_cst c;
            int k;
            if (it->group != g || it->dropped || it->con >= 0 ||
                kw_engine_step_check(&k, ks, &pr->first[g], &it->cand) != 0)
                continue;
            kw_engine_stats(E, s->shape, it->id, &c);
            if (!(c.n == E->reps && c.ok && isfinite(c.mean) && c.mean < inc->mean) ||
                (fs.n == E->reps && c.mean == fs.mean))
                continue;
            if (a < 0 || c.mean < ma) {
                if (k != ka) {
                    b = a;
                    kb = ka;
                    mb = ma;
                }
                a = i;
                ka = k;
                ma = c.mean;
            } else if (k != ka && (b < 0 || c.mean < mb)) {
                b = i;
                kb = k;
                mb = c.mean;
            }
        }
        if (a < 0 || b < 0)
            continue;
        kw_cand t = s->items[a].cand;
        t.v[kb] = s->items[b].cand.v[kb];
        if (kw_ofat_banned(s, &t))
            continue;
        pr->fp_path[pr->fp_n][0] = pr->first[g];
        pr->fp_path[pr->fp_n][1] = s->items[a].cand;
        pr->fp_third[pr->fp_n] = t;
        pr->fp_n++;
    }
    kw_error_clear();
    pr->fp_pending = pr->fp_n > 0;
}

/* The faded-pairs round's steps (kw_ofat_faded_pairs): per group EXPLORE onto the
 * first step and onto the better pair, the triple judged against the incumbent,
 * the winner accepted (main resumes) or REVERTs back; then the probe list goes on. */
static int kw_ofat_faded_decide(kw_eng *E, kw_shape *s, kw_verdict *v)
{
    kw_ofat *o = s->st;
    kw_ofat_probe *pr = &o->probe;
    static const char *const why[2] = {
        "faded pairs: a first step two of whose pairs gained below the minimum effect",
        "faded pairs: the better of them, to try the other's change with it"};
    kw_ofat_paths w = {.judge = "faded pairs together vs incumbent: ",
                      .back = "the faded pairs together do not beat the incumbent: step back",
                      .why = why,
                      .n = pr->fp_n};
    for (int g = 0; g < pr->fp_n; g++) {
        w.path[g] = pr->fp_path[g];
        w.len[g] = 2;
    }
    kw_cst inc;
    int win;
    pr->fp_running = 0;
    int rc = kw_ofat_paths_decide(E, s, v, &w, &win, &inc);
    if (rc != 0)
        return rc;
    if (win >= 0) {
        pr->plist_ready = 0;
        kw_ofat_resume_main(o);
        return 0;
    }
    if (pr->pcur >= pr->n_plist && pr->have_rep && E->o.tabu > 0 && !s->budget_hit)
        return kw_ofat_repair_excursion(E, s);
    return 0;
}

static int kw_ofat_probe_decide(kw_eng *E, kw_shape *s, kw_verdict *v)
{
    kw_ofat *o = s->st;
    kw_ofat_probe *pr = &o->probe;
    if (pr->fp_running)
        return kw_ofat_faded_decide(E, s, v);
    kw_cst inc;
    int restart = pr->ban_knob >= 0;
    const kw_cand *refc = restart ? &o->main.restart_from : &s->pos;
    kw_engine_stats_c(E, s, refc, &inc);
    kw_cand start = s->pos;
    int rc0 = kw_ofat_probe_learn(E, s);
    if (rc0 != 0)
        return rc0;
    int m = kw_ofat_count_evaluated(s);
    int win = kw_ofat_judge_items(E, s, refc, &inc, restart ? "restart pair vs the best: "
                                                            : "pair vs incumbent: ", m, v);
    int win_group = win >= 0 ? s->items[win].group : -1;
    for (int pass = 0; pass < 2; pass++) {
        for (int gi = 0; gi < pr->n_first + pr->n_mid; gi++) {
            /* groups: first steps 0..n_first, then the repairs' mids KW_PROBE_MAX + i */
            int g = gi < pr->n_first ? gi : KW_PROBE_MAX + gi - pr->n_first;
            if ((pass == 0) == (g == win_group))
                continue; /* failed probes first, the winning one last */
            if (!kw_ofat_group_tried(s, g))
                continue; /* the budget cut this probe before any evaluation */
            if (g >= KW_PROBE_MAX) {
                int rc = kw_ofat_repair_decide(E, s, g, win, v, &start, &inc);
                if (rc != 0)
                    return rc;
                continue;
            }
            kw_cst fs;
            kw_engine_stats_c(E, s, &pr->first[g], &fs);
            char why[KW_REASON_LEN];
            if (fs.ok)
                snprintf(why, sizeof why, "probe: first step (alone %+.2f%%, not accepted) tried "
                         "with a second knob", -kw_engine_gain_pct(inc.mean, fs.mean));
            else
                snprintf(why, sizeof why, "probe: first step (alone %+.2f%%, guard %.80s%s) tried "
                         "with a second knob that may repair the guard",
                         -kw_engine_gain_pct(inc.mean, fs.mean), fs.guards,
                         g < pr->n_blocked ? "; an earlier incumbent gained from it" : "");
            const char *const whys[1] = {why};
            int rc = kw_ofat_path_steps(E, s, &pr->first[g], 1, whys, g, win, v, &start,
                                        "probe found no pair that beats the incumbent: step back");
            if (rc != 0)
                return rc;
        }
    }
    if (win >= 0) {
        pr->plist_ready = 0;
        pr->ban_knob = -1;
        kw_ofat_resume_main(o);
        return 0;
    }
    kw_ofat_note_repairs(E, s);
    if (!restart && !E->ev->noisy && !s->budget_hit) {
        kw_ofat_faded_pairs(E, s, &inc);
        if (pr->fp_pending)
            return 0;
    }
    if (pr->pcur >= pr->n_plist && pr->have_rep && E->o.tabu > 0 && !s->budget_hit)
        return kw_ofat_repair_excursion(E, s);
    /* else: the next round plans the list's next chunk, or leaves the phase */
    return 0;
}

/* ------------------------------------------------------------------ excursion and backtrack */

/* An excursion round under a budget (noiseless), ordered by what each change did
 * alone from the excursion's start, least bad first (stable; a change not measured
 * there after the measured ones): the budget may end inside the round, which is
 * evaluated in plan order, knob by knob. validate_small_mlp decode seed 15 at 5%
 * (64 evaluations): the third excursion round's last evaluation went to
 * gate_up.tile_m=64 (+179%) while launch_mode=eager (+3.1% alone from the start)
 * reached the exhaustive optimum from there. The round is screened (kw_mf_screen),
 * which orders by the cheap estimate: each measured change's ratio times the
 * excursion config's figure is handed to it as the item's forecast (kw_item.known),
 * which the screen orders by before the estimate, so the least-bad order holds. */
static void kw_ofat_excursion_order(kw_eng *E, kw_shape *s)
{
    const kw_ofat_excursion *ex = &((kw_ofat *)s->st)->ex;
    kw_cst st, at;
    kw_engine_stats_c(E, s, &ex->start, &st);
    if (!(st.n == E->reps && st.ok && st.mean > 0))
        return;
    kw_engine_stats_c(E, s, &s->pos, &at);
    double f_at = at.n == E->reps && at.ok && at.mean > 0 ? at.mean : NAN;
    double key[KW_ITEMS_MAX_ORDER];
    int n = s->n_items < KW_ITEMS_MAX_ORDER ? s->n_items : KW_ITEMS_MAX_ORDER;
    for (int i = 0; i < n; i++) {
        int k;
        key[i] = INFINITY;
        if (kw_engine_step_check(&k, E->ks, &s->pos, &s->items[i].cand) != 0)
            continue;
        kw_cand c = ex->start;
        c.v[k] = s->items[i].cand.v[k];
        kw_cst cs;
        kw_engine_stats_c(E, s, &c, &cs);
        if (cs.n == E->reps && cs.ok && isfinite(cs.mean)) {
            key[i] = cs.mean / st.mean;
            s->items[i].known = f_at * key[i];
        }
    }
    kw_error_clear();
    for (int i = 1; i < n; i++) /* stable insertion sort */
        for (int j = i; j > 0 && key[j] < key[j - 1]; j--) {
            double t = key[j];
            key[j] = key[j - 1];
            key[j - 1] = t;
            kw_item it = s->items[j];
            s->items[j] = s->items[j - 1];
            s->items[j - 1] = it;
        }
}

/* An excursion or relink with the budget hit: back to its start (BACKTRACK) when it
 * moved, else on to the fix; 1 then. */
static int kw_ofat_excursion_spent(kw_shape *s)
{
    kw_ofat *o = s->st;
    if (!s->budget_hit)
        return 0;
    if (o->ex.n_path > 1)
        o->ph = KW_OFAT_BACKTRACK;
    else
        kw_ofat_enter_fix(s);
    return 1;
}

/* The least a one-knob change c (knob k to value v) of config y can give, forecast from
 * the same change measured at an earlier config x, y being x plus the changes of other
 * knobs (the moved knobs; k not among them): f(y) f(x+c) / f(x), times the cheap
 * estimate's interaction of c with those changes, est(y+c) est(x) / (est(y) est(x+c)),
 * times the least measured miss of the estimate (kw_ofat_probe_learn's kmiss_lo) over
 * k and every moved knob, less KW_COUPLE_MARGIN: the probe round's bound
 * (kw_ofat_pair_uncoupled) stretched over a walk of several changes. NAN (no bound)
 * unless k and every moved knob have KW_COUPLE_MIN_PAIRS measured misses, the estimated
 * interaction is within KW_COUPLE_INTER of 1, x, x+c and y were evaluated in full and
 * pass every guard, and no two block-less knobs are involved (their coupling is in the
 * queue, which the closed form misses: kw_ofat_pair_uncoupled). Noiseless runs with
 * the screening only; not in a restart's walk. Counted as estimates. */
static double kw_ofat_walk_bound(kw_eng *E, kw_shape *s, const kw_cand *x, const kw_cand *y,
                                 int k, int v)
{
    const kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
    const kw_knobspace *ks = E->ks;
    if (!E->o.estimate || !E->ev->predict || E->ev->noisy || pr->ban_knob >= 0 ||
        x->v[k] != y->v[k] || v == x->v[k] || pr->n_kmiss[k] < KW_COUPLE_MIN_PAIRS)
        return NAN;
    double lo = pr->kmiss_lo[k];
    int blockless = !kw_ofat_in_block(ks, k), n_moved = 0;
    for (int j = 0; j < ks->n_knobs; j++) {
        if (x->v[j] == y->v[j])
            continue;
        n_moved++;
        if (pr->n_kmiss[j] < KW_COUPLE_MIN_PAIRS || (blockless && !kw_ofat_in_block(ks, j)))
            return NAN;
        lo = fmin(lo, pr->kmiss_lo[j]);
    }
    if (n_moved == 0)
        return NAN;
    kw_cand xc = *x, yc = *y;
    xc.v[k] = (uint8_t)v;
    yc.v[k] = (uint8_t)v;
    kw_cst fx, fxc, fy;
    kw_engine_stats_c(E, s, x, &fx);
    kw_engine_stats_c(E, s, &xc, &fxc);
    kw_engine_stats_c(E, s, y, &fy);
    kw_error_clear();
    if (!(fx.n == E->reps && fx.ok && isfinite(fx.mean) && fx.mean > 0 && fxc.n == E->reps &&
          fxc.ok && isfinite(fxc.mean) && fy.n == E->reps && fy.ok && isfinite(fy.mean)))
        return NAN;
    double r = kw_ofat_est_inter4(E, s, x, &xc, y, &yc);
    if (!isfinite(r) || fabs(log(r)) >= KW_COUPLE_INTER)
        return NAN;
    return fy.mean * fxc.mean / fx.mean * r * lo * (1.0 - KW_COUPLE_MARGIN);
}

/* An excursion round's neighbours that cannot beat the excursion's start by the minimum
 * effect by kw_ofat_walk_bound (x the start, where each change was measured by the
 * sweeps and probes; y where the walk stands) are not planned; those the memo holds
 * stay (free). Issue 18: on the growth bench's 27 knobs the excursions spent 204 of the
 * 1,154 evaluations per shape to converge, x31 from 4 knobs; a round from a config
 * several changes out pays for every neighbour, most of them the start's own losing
 * changes stacked on the walk's. Only the evaluations change: the walk's next move is
 * the best guard-passing neighbour evaluated, and with none left it walks back, as when
 * the screen (kw_mf_screen) skips them all; the bound is a pure function of journaled
 * figures and estimates, so a resumed run plans the same rounds. */
static void kw_ofat_excursion_cut(kw_eng *E, kw_shape *s)
{
    const kw_ofat_excursion *ex = &((kw_ofat *)s->st)->ex;
    kw_cst st;
    kw_engine_stats_c(E, s, &ex->start, &st);
    kw_error_clear();
    if (!(st.n == E->reps && st.ok && isfinite(st.mean)))
        return;
    double need = st.mean * (1.0 - E->o.min_effect_pct / 100.0);
    int out = 0;
    for (int i = 0; i < s->n_items; i++) {
        const kw_item *it = &s->items[i];
        int k;
        if (it->con < 0 && kw_engine_cost(E, s, it->id) > 0 &&
            kw_engine_step_check(&k, E->ks, &s->pos, &it->cand) == 0) {
            double lb = kw_ofat_walk_bound(E, s, &ex->start, &s->pos, k, it->cand.v[k]);
            if (isfinite(lb) && lb >= need)
                continue;
        }
        s->items[out++] = *it;
    }
    kw_error_clear();
    s->n_items = out;
}

static int kw_ofat_excursion_plan(kw_eng *E, kw_shape *s)
{
    if (kw_ofat_excursion_spent(s))
        return KW_OFAT_MOVED;
    int rc = kw_ofat_add_neighbours(E, s, &s->pos);
    if (rc == 0)
        kw_ofat_excursion_cut(E, s);
    if (rc == 0 && E->o.budget > 0 && !E->ev->noisy)
        kw_ofat_excursion_order(E, s);
    return rc;
}

/* A relink round (kw_ofat_relink_target): from where the walk stands, each knob
 * still off the target's value set to it. Decided as an excursion round
 * (kw_ofat_excursion_decide): a config that beats the start is accepted, else
 * the walk moves to the best of them, and walks back when it stands two changes
 * from the target (evaluated, and worse than the start). Not screened: each
 * config on the walk is expected to lose to the start. */
static int kw_ofat_relink_plan(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    if (kw_ofat_excursion_spent(s))
        return KW_OFAT_MOVED;
    for (int k = 0; k < E->ks->n_knobs; k++) {
        if (s->pos.v[k] == o->ex.target.v[k] || kw_ofat_frozen(E, k))
            continue;
        kw_cand c = s->pos;
        c.v[k] = o->ex.target.v[k];
        int rc = kw_engine_item_add(E, s, &c, 0);
        if (rc != 0)
            return rc;
    }
    if (E->o.budget > 0)
        kw_ofat_excursion_order(E, s);
    return KW_OFAT_PLANNED;
}

static int kw_ofat_in_path(const kw_ofat_excursion *ex, const kw_cand *c)
{
    for (int i = 0; i < ex->n_path; i++)
        if (memcmp(&ex->path[i], c, sizeof *c) == 0)
            return 1;
    return 0;
}

static int kw_ofat_excursion_decide(kw_eng *E, kw_shape *s, kw_verdict *v)
{
    kw_ofat *o = s->st;
    kw_ofat_excursion *ex = &o->ex;
    kw_cst best;
    kw_engine_stats_c(E, s, &ex->start, &best);
    int m = kw_ofat_count_evaluated(s);
    int win = kw_ofat_judge_items(E, s, &ex->start, &best, "vs best: ", m, v);
    int rc;
    if (win >= 0) {
        if ((rc = kw_ofat_emit_rejects(E, s, win, KW_STEP_EXPLORE, v, -1)) != 0)
            return rc;
        char why[KW_REASON_LEN + 64];
        snprintf(why, sizeof why, "%s after %d exploratory steps", v[win].why, ex->n_path - 1);
        if ((rc = kw_engine_step_judged(E, s, &s->items[win].cand, KW_DECIDE_ACCEPT,
                                        KW_STEP_EXPLORE, &v[win], why)) != 0)
            return rc;
        kw_ofat_resume_main(o);
        return 0;
    }
    /* next exploratory move: best guard-passing neighbour off the tabu list. Noiseless,
     * a neighbour with exactly the figure where the walk stands changed a knob inert
     * there: its own neighbours repeat this round's figures, so the move spends a round
     * without leaving the plateau, and a neighbour that changes the figure goes first
     * (validate_llama3_tpu decode seed 3 at 2%: the excursion stepped onto
     * gate_up.tile_n=256, a tie, and its round re-measured every figure of the last one
     * until the budget ended, while down.split_k=2, +0.10% from there, had
     * fuse_gate_up=on beside it, the exhaustive optimum) */
    int mv = -1, mv_tie = 0;
    double mv_mean = 0;
    kw_cst here;
    kw_engine_stats_c(E, s, &s->pos, &here);
    int tie_known = !E->ev->noisy && here.n == E->reps && here.ok && isfinite(here.mean);
    if (ex->moves_left > 0) {
        for (int i = 0; i < s->n_items; i++) {
            const kw_item *it = &s->items[i];
            if (it->con >= 0 || it->dropped || kw_ofat_in_path(ex, &it->cand))
                continue;
            int knob;
            kw_engine_step_check(&knob, E->ks, &s->pos, &it->cand);
            if (knob == ex->last_knob)
                continue;
            kw_cst c;
            kw_engine_stats(E, s->shape, it->id, &c);
            if (c.n != E->reps || !c.ok || !isfinite(c.mean))
                continue;
            int tie = tie_known && c.mean == here.mean;
            if (mv < 0 || (mv_tie && !tie) || (tie == mv_tie && c.mean < mv_mean)) {
                mv = i;
                mv_mean = c.mean;
                mv_tie = tie;
            }
        }
    }
    kw_error_clear();
    if ((rc = kw_ofat_emit_rejects(E, s, mv, KW_STEP_EXPLORE, v, -1)) != 0)
        return rc;
    if (mv < 0) {
        if (ex->n_path > 1)
            o->ph = KW_OFAT_BACKTRACK;
        else
            kw_ofat_enter_fix(s);
        return 0;
    }
    char why[KW_REASON_LEN];
    if (o->ph == KW_OFAT_RELINK)
        snprintf(why, sizeof why, "relink: towards another basin's best config evaluated, %d "
                 "changes left, the best of them %.2f%% from the best", ex->moves_left + 1,
                 -v[mv].gain);
    else
        snprintf(why, sizeof why, "exploratory: best neighbour off the tabu list, %.2f%% from "
                 "the best", -v[mv].gain);
    int knob;
    kw_engine_step_check(&knob, E->ks, &s->pos, &s->items[mv].cand);
    if ((rc = kw_engine_step(E, s, &s->items[mv].cand, KW_DECIDE_EXPLORE, KW_STEP_EXPLORE, NAN, -1,
                             why)) != 0)
        return rc;
    ex->path[ex->n_path++] = s->pos;
    ex->moves_left--;
    ex->last_knob = knob;
    return 0;
}

static int kw_ofat_backtrack_decide(kw_eng *E, kw_shape *s)
{
    kw_ofat_excursion *ex = &((kw_ofat *)s->st)->ex;
    const char *why = ex->relinking ? "the relink walk found nothing better: step back towards the best"
                                    : "the excursion found nothing better: step back towards the best";
    for (int i = ex->n_path - 1; i > 0; i--) {
        int rc = kw_engine_step(E, s, &ex->path[i - 1], KW_DECIDE_REVERT, KW_STEP_BACKTRACK, NAN,
                                -1, why);
        if (rc != 0)
            return rc;
    }
    ex->n_path = 1;
    kw_ofat_enter_fix(s);
    return 0;
}

/* ------------------------------------------------------------------ settle */

/* Remember this round's evaluated configs (first repetition, in job order,
 * which is journal order) for settle. */
static int kw_ofat_settle_note(kw_eng *E, kw_shape *s)
{
    kw_ofat_settle *se = &((kw_ofat *)s->st)->settle;
    if (!se->on)
        return 0;
    for (size_t i = s->job0; i < s->job1; i++) {
        const kw_job *j = &E->jobs[i];
        if (j->rep != 0)
            continue;
        if (se->n_seen == se->cap_seen) {
            int cap = se->cap_seen ? se->cap_seen * 2 : KW_SEEN_CAP0;
            kw_cand *ns = realloc(se->seen, (size_t)cap * sizeof *ns);
            if (!ns)
                return kw_error_set(KW_ENOMEM, "out of memory");
            se->seen = ns;
            se->cap_seen = cap;
        }
        se->seen[se->n_seen++] = j->cand;
    }
    return 0;
}

/* Settle (noiseless evaluator): the best guard-passing config evaluated so far
 * may beat the incumbent by less than the minimum effect (a step that small was
 * never accepted) or sit one probe or excursion away. Walk there one knob at a
 * time through evaluated configs (breadth-first over the configs evaluated: the
 * shortest such walk; one always exists because every evaluated config is a
 * neighbour of a config the walk stood on), EXPLORE on the way, ACCEPT onto it.
 * No evaluation is spent. With a noisy evaluator the best mean of many
 * candidates is biased low (the winner's curse) and a difference below the
 * minimum effect is not evidence, so noisy runs do not settle. */
/* Walk the incumbent one knob at a time through evaluated configs to seen[best]
 * (breadth-first over the configs evaluated: the shortest such walk; one always
 * exists because every evaluated config is a neighbour of a config the walk stood
 * on): `way` on the way, `last` onto it, each step journalled with `phase`.
 * *moved: the walk took at least one step. */
static int kw_ofat_walk(kw_eng *E, kw_shape *s, int best, kw_decision way, kw_decision last,
                        kw_step_phase phase, const char *why_way, const char *why_last, int *moved)
{
    kw_ofat_settle *se = &((kw_ofat *)s->st)->settle;
    const kw_knobspace *ks = E->ks;
    int rc = 0;
    *moved = 0;
    int *from = NULL, *queue = NULL;
    kw_idmap map = {0}; /* config id -> its first index in seen[] */
    from = malloc((size_t)se->n_seen * sizeof *from);
    queue = malloc((size_t)se->n_seen * sizeof *queue);
    if (kw_idmap_reserve(&map, (size_t)se->n_seen) != 0 || !from || !queue) {
        rc = kw_error_set(KW_ENOMEM, "out of memory walking to an evaluated config");
        goto done;
    }
    int start = -1;
    uint64_t here = kw_knobs_cand_id(ks, &s->pos);
    for (int i = 0; i < se->n_seen; i++) {
        uint64_t id = kw_knobs_cand_id(ks, &se->seen[i]);
        if ((rc = kw_idmap_add(&map, id, (size_t)i, NULL)) != 0)
            goto done;
        from[i] = -2; /* unvisited */
        if (start < 0 && id == here)
            start = i;
    }
    if (start < 0)
        goto done; /* the incumbent is always evaluated; defensive */
    int qh = 0, qt = 0;
    queue[qt++] = start;
    from[start] = -1;
    while (qh < qt && from[best] == -2) {
        int u = queue[qh++];
        for (int k = 0; k < ks->n_knobs && from[best] == -2; k++)
            for (int v = 0; v < ks->knobs[k].n_values; v++) {
                if (v == se->seen[u].v[k])
                    continue;
                kw_cand c = se->seen[u];
                c.v[k] = (uint8_t)v;
                const size_t *at = kw_idmap_find(&map, kw_knobs_cand_id(ks, &c));
                int w = at ? (int)*at : -1;
                if (w < 0 || from[w] != -2)
                    continue;
                kw_cst cs;
                kw_engine_stats_c(E, s, &se->seen[w], &cs);
                if (cs.n != E->reps)
                    continue;
                from[w] = u;
                queue[qt++] = w;
            }
    }
    if (from[best] == -2 || best == start)
        goto done; /* unreachable through evaluated configs, or already there; defensive */
    int n_path = 0;
    for (int u = best; u != start; u = from[u])
        queue[n_path++] = u; /* reversed walk, reusing the queue */
    for (int i = n_path - 1; i >= 0 && rc == 0; i--) {
        char why[KW_REASON_LEN];
        if (i > 0) {
            snprintf(why, sizeof why, "%s (%d of %d steps)", why_way, n_path - i, n_path);
            rc = kw_engine_step(E, s, &se->seen[queue[i]], way, phase, NAN, -1, why);
        } else {
            rc = kw_engine_step(E, s, &se->seen[queue[i]], last, phase, NAN, -1, why_last);
        }
    }
    if (rc == 0)
        *moved = 1;
done:
    kw_idmap_free(&map);
    free(from);
    free(queue);
    return rc;
}

/* Settle (noiseless evaluator): the best guard-passing config evaluated so far
 * may beat the incumbent by less than the minimum effect (a step that small was
 * never accepted) or sit one probe or excursion away. Walk there one knob at a
 * time through evaluated configs (kw_ofat_walk), EXPLORE on the way, ACCEPT onto
 * it. No evaluation is spent. With a noisy evaluator the best mean of many
 * candidates is biased low (the winner's curse) and a difference below the
 * minimum effect is not evidence, so noisy runs do not settle. */
static int kw_ofat_settle_decide(kw_eng *E, kw_shape *s)
{
    kw_ofat_settle *se = &((kw_ofat *)s->st)->settle;
    int rc = 0;
    se->moved = 0;
    ((kw_ofat *)s->st)->probe.ban_knob = -1; /* a restart's probes end here (the budget) */
    kw_cst inc;
    kw_engine_stats_c(E, s, &s->pos, &inc);
    int best = -1;
    double best_mean = inc.ok && isfinite(inc.mean) ? inc.mean : INFINITY;
    for (int i = 0; i < se->n_seen; i++) {
        kw_cst c;
        kw_engine_stats_c(E, s, &se->seen[i], &c);
        if (c.n == E->reps && c.ok && isfinite(c.mean) && c.mean < best_mean) {
            best = i;
            best_mean = c.mean;
        }
    }
    if (best >= 0) {
        char why[KW_REASON_LEN];
        snprintf(why, sizeof why, "settle: the best config evaluated, %.3f%% better than the "
                 "incumbent (the evaluator is noiseless: every gain is real; steps below the "
                 "minimum effect %.2f%% are not taken during the search)",
                 kw_engine_gain_pct(inc.mean, best_mean), E->o.min_effect_pct);
        kw_cand pre = s->pos;
        rc = kw_ofat_walk(E, s, best, KW_DECIDE_EXPLORE, KW_DECIDE_ACCEPT, KW_STEP_SETTLE,
                          "settle: on the way to the best config evaluated", why, &se->moved);
        kw_ofat_probe *pr = &((kw_ofat *)s->st)->probe;
        if (rc == 0 && se->moved &&
            kw_engine_gain_pct(inc.mean, best_mean) < E->o.min_effect_pct) {
            pr->settled = 1;
            pr->settled_at = kw_knobs_cand_id(E->ks, &s->pos);
            for (int k = 0; k < E->ks->n_knobs; k++)
                pr->hop[k] = pre.v[k] != s->pos.v[k];
        }
    }
    if (rc == 0)
        kw_ofat_enter_fix(s); /* the phase is settle: goes on to the fix */
    return rc;
}

/* ------------------------------------------------------------------ the re-rank */

/* The re-rank (noiseless evaluator with a paired comparison, p95/p99 primary,
 * opts.rerank = K, on by default; kw_engine_rerank_p): once the search of a shape is
 * over, where its own sample cannot rank it, the incumbent and the K - 1 best other
 * guard-passing configs it evaluated (by that sample) are compared again on the same
 * arrivals at a longer sample, each rival in turn against the leader (the incumbent,
 * then the last winner): KW_RERANK_N0 requests (x5 for p99: the paired interval's
 * minimum sample, kw_simci.h), doubling up to KW_RERANK_CAP, until the 95% interval
 * of the difference excludes 0 or is within the minimum effect of the leader's
 * figure; the rival leads when that interval lies below 0 and it gains at least the
 * minimum effect (kw_journal_rerank_wins: the rule of every step), and passes on that
 * sample every guard the sample decides (the SLA, the fallback share, saturation:
 * kw_paired a_guard; where the leader fails one too, the search's own sample decides).
 *
 * Where: the incumbent's own 95% interval on the search's sample (the evaluator's
 * p_ci_lo_us/p_ci_hi_us, p99_ci_* for p99; kw_engine_half) is wider than the minimum
 * effect, or the evaluator gives none. A shape whose sample resolves the minimum
 * effect is left as its search ended (no R record, nothing simulated).
 *
 * Rivals: the K - 1 best by the search's sample, and the best of each other basin: for
 * every knob value the incumbent does not have, the best evaluated config with it (at
 * most KW_OFAT_RERANK_RIVALS in all, the best kept), compared in the order of their
 * figures. One per reading, the first evaluated: two configs whose primary AND interval
 * read the same are the same service (a knob that does not change it: equal on any
 * sample), and a basin whose best reads like a rival or the incumbent is covered; two
 * that tie on the primary alone are not, and the tie is what the re-rank breaks:
 * validate_bert_tpu bert_s128_b8_c4 seed 4 reads max_batch 2, 4 and 8 all 509.71 us on
 * its 500 requests (the search converged at 8), while 20,000 requests put 2 at 521.3 and
 * 8 at 531.0 (+1.9%; +2.05% on the bench's 1,000,000). The basins: validate_small
 * attn_decode_kv2048_b32_c16 seed 13 converges at max_batch=1, round_robin (29,199 us on
 * 1,000,000 requests); the best config it evaluated with least_loaded and max_batch=4
 * reads 1.4% worse on its 500 requests (not among the 3 best) and 19.5% better on 40,000
 * (22,660 us on 1,000,000, +1.22% over the exhaustive optimum, which is 3 knobs further:
 * no one-knob neighbour of either gains the minimum effect on 40,000 or 80,000 requests,
 * so a walk judged on the long sample would not reach it).
 *
 * Every comparison is journalled (R records) and the incumbent walks to the winner
 * one knob at a time through evaluated configs (kw_ofat_walk, phase rerank): no
 * evaluation is spent and the budget, which counts evaluations, is untouched; the
 * requests simulated are counted beside it (kw_engine_summary rerank_requests).
 * It does not reach an optimum the search never evaluated (seed 13 above). Not searching
 * on from the winner: judged on the short sample its neighbours lead back to the
 * short sample's optimum; judged on the long one, each step costs a paired comparison
 * per neighbour and an evaluation of each neighbour not yet evaluated. doc/search-log.md. */
/* Two evaluations read the same: equal primaries and equal interval half-widths (both
 * NAN where the evaluator gives none). */
static int kw_ofat_same_reading(double m1, double h1, double m2, double h2)
{
    return m1 == m2 && (h1 == h2 || (isnan(h1) && isnan(h2)));
}

/* Puts rival I (reading M, half-width H) in its place in the list TOP/TOP_M/TOP_H
 * sorted by M, which holds *NT of at most LIM: the last one drops out when it is full
 * (the caller has checked that M beats it). */
static void kw_ofat_rerank_insert(int *top, double *top_m, double *top_h, int *nt, int lim, int i,
                                  double m, double h)
{
    int at = *nt < lim ? (*nt)++ : *nt - 1;
    while (at > 0 && m < top_m[at - 1]) {
        top[at] = top[at - 1];
        top_m[at] = top_m[at - 1];
        top_h[at] = top_h[at - 1];
        at--;
    }
    top[at] = i;
    top_m[at] = m;
    top_h[at] = h;
}

static int kw_ofat_rerank_plan(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    kw_ofat_settle *se = &o->settle;
    kw_ofat_rerank *rr = &o->rr;
    const kw_knobspace *ks = E->ks;
    double p = kw_engine_rerank_p(E);
    memset(rr, 0, sizeof *rr);
    rr->lead = -1;
    rr->planned = 1;
    if (!(p > 0) || !se->on)
        return 0;
    kw_cst inc;
    kw_engine_stats_c(E, s, &s->pos, &inc);
    if (!(inc.n == E->reps && inc.ok && isfinite(inc.mean)))
        return 0;
    double inc_half = kw_engine_half(E, s, &s->pos);
    if (isfinite(inc_half) && inc_half <= E->o.min_effect_pct / 100.0 * fabs(inc.mean))
        return 0; /* the search's sample resolves the minimum effect here */
    int want = (E->o.rerank > KW_RERANK_MAX ? KW_RERANK_MAX : E->o.rerank) - 1;
    int top[KW_OFAT_RERANK_RIVALS];
    double top_m[KW_OFAT_RERANK_RIVALS], top_h[KW_OFAT_RERANK_RIVALS];
    int nt = 0;
    uint64_t here = kw_knobs_cand_id(ks, &s->pos);
    /* pass 0: the best by the search's sample; pass 1: the best of each other basin, one
     * per knob value the incumbent does not have */
    for (int pass = 0; pass < 2; pass++) {
        int n_slots = pass == 0 ? 1 : 0;
        for (int k = 0; pass == 1 && k < ks->n_knobs; k++)
            n_slots += ks->knobs[k].n_values - 1;
        for (int slot = 0; slot < n_slots; slot++) {
            int knob = -1, val = -1;
            for (int k = 0, r = slot; pass == 1 && knob < 0; k++) {
                if (r < ks->knobs[k].n_values - 1) {
                    knob = k;
                    val = r < s->pos.v[k] ? r : r + 1;
                } else {
                    r -= ks->knobs[k].n_values - 1;
                }
            }
            int lim = pass == 0 ? want : KW_OFAT_RERANK_RIVALS;
            int best = -1;
            double best_m = INFINITY, best_h = NAN;
            for (int i = 0; i < se->n_seen; i++) {
                if (knob >= 0 && se->seen[i].v[knob] != val)
                    continue;
                uint64_t id = kw_knobs_cand_id(ks, &se->seen[i]);
                kw_cst c;
                kw_engine_stats_c(E, s, &se->seen[i], &c);
                double h = kw_engine_half(E, s, &se->seen[i]);
                int same_inc = kw_ofat_same_reading(c.mean, h, inc.mean, inc_half);
                if (id == here || c.n != E->reps || !c.ok || !isfinite(c.mean) ||
                    (pass == 0 && same_inc) || (pass == 1 && !(c.mean < best_m)) ||
                    (pass == 0 && nt == lim && !(c.mean < top_m[nt - 1])))
                    continue;
                int dup = same_inc; /* the same reading: a knob that does not change the service */
                for (int t = 0; t < nt && !dup; t++)
                    dup = kw_ofat_same_reading(top_m[t], top_h[t], c.mean, h);
                if (dup && pass == 0)
                    continue;
                if (pass == 1) { /* the basin's best; covered when it reads like a rival or the
                                  * incumbent */
                    best = dup ? -2 : i;
                    best_m = c.mean;
                    best_h = h;
                    continue;
                }
                kw_ofat_rerank_insert(top, top_m, top_h, &nt, lim, i, c.mean, h);
            }
            if (best < 0 || (nt == lim && !(best_m < top_m[nt - 1])))
                continue;
            kw_ofat_rerank_insert(top, top_m, top_h, &nt, lim, best, best_m, best_h);
        }
    }
    kw_error_clear();
    rr->n_top = nt;
    long n0 = p > 0.98 ? 5 * KW_RERANK_N0 : KW_RERANK_N0;
    if (n0 > KW_RERANK_CAP)
        n0 = KW_RERANK_CAP;
    for (int t = 0; t < nt; t++) {
        const kw_cand *L = rr->lead >= 0 ? &se->seen[rr->lead] : &s->pos;
        kw_paired v;
        for (long n = n0;; n = 2 * n < KW_RERANK_CAP ? 2 * n : KW_RERANK_CAP) {
            kw_engine_rerank_progress(E, s, t, nt); /* draws only: a mid-round report */
            int rc = kw_engine_rerank_get(E, s, &se->seen[top[t]], L, n, &v);
            if (rc == 1) {
                kw_error_clear();
                return 0; /* the evaluator cannot pair these: the leader so far stands */
            }
            if (rc != 0)
                return rc; /* KW_EINTERRUPTED: the loop pauses, nothing of the round journalled */
            if (rr->n == KW_OFAT_RERANK_CMP_MAX)
                return kw_error_set(KW_ESTATE, "re-rank: more than %d comparisons",
                                    KW_OFAT_RERANK_CMP_MAX);
            rr->cmp[rr->n++] = (kw_ofat_rerank_cmp){top[t], rr->lead, n, v};
            int decided = isfinite(v.half) && (fabs(v.a - v.b) > v.half ||
                                               v.half <= E->o.min_effect_pct / 100.0 * fabs(v.b));
            if (decided || n >= KW_RERANK_CAP)
                break;
        }
        if (kw_journal_rerank_wins(v.a, v.b, v.half, E->o.min_effect_pct, v.a_guard)) {
            rr->lead = top[t];
            rr->won = rr->n - 1;
        }
    }
    return 0;
}

/* The re-rank's decision: its comparisons journalled (R records), then the walk to
 * the winner. */
static int kw_ofat_rerank_decide(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    kw_ofat_settle *se = &o->settle;
    kw_ofat_rerank *rr = &o->rr;
    const kw_knobspace *ks = E->ks;
    int rc = 0;
    for (int i = 0; i < rr->n && rc == 0; i++) {
        const kw_ofat_rerank_cmp *c = &rr->cmp[i];
        rc = kw_engine_rerank_emit(E, s, kw_knobs_cand_id(ks, &se->seen[c->cand]),
                                   kw_knobs_cand_id(ks, c->lead >= 0 ? &se->seen[c->lead] : &s->pos),
                                   c->n, &c->v);
    }
    if (rc != 0 || rr->lead < 0)
        return rc;
    const kw_ofat_rerank_cmp *w = &rr->cmp[rr->won];
    char why[KW_REASON_LEN];
    snprintf(why, sizeof why, "re-rank: on %ld requests of the same arrivals this config's primary "
             "is %.6g against %.6g (paired 95%% half-width %.3g), the best of %d configs: the best "
             "by the search's own sample and each other basin's best", w->n, w->v.a, w->v.b, w->v.half,
             rr->n_top + 1);
    int moved = 0;
    return kw_ofat_walk(E, s, rr->lead, KW_DECIDE_EXPLORE, KW_DECIDE_ACCEPT, KW_STEP_RERANK,
                        "re-rank: on the way to the winner of the long paired sample", why, &moved);
}

/* ------------------------------------------------------------------ restart */

/* Restart (noiseless, converged without a budget hit): the first descent may end
 * in a local optimum that its probes, repairs and excursion do not leave because
 * the way out starts before its last step. validate_small decode, seeds 10 and 17
 * of 20 (+5.01% and +2.56%): seed 17 took placement=least_loaded, then
 * launch_mode=graph; from least_loaded alone the pair qkv.tile_n=256 + fuse_qkv=on
 * beats where it converged by 1.8% (from graph that pair loses), and qkv.tile_k=64
 * then reaches the optimum; seed 10 took max_batch=1 first, and from the baseline
 * the pair launch_mode=graph + placement=least_loaded beats its end by 2.5%.
 * So: walk back one knob at a time through evaluated configs (kw_ofat_walk,
 * EXPLORE) to where the first descent took its last main step (then, as a second
 * restart, its first), and probe there with that step tabu, accepting only a pair
 * that beats the first descent's best (restart_from); a win resumes the search
 * from the pair; nothing found REVERTs back to the best along evaluated configs
 * evaluated. No evaluation is spent on the walks; every move is a journalled
 * one-knob step. */
static int kw_ofat_restart_decide(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    kw_ofat_main *m = &o->main;
    kw_ofat_settle *se = &o->settle;
    if (o->probe.ban_knob >= 0) {
        /* the restart's probes found nothing: REVERT back to the first descent's best */
        o->probe.ban_knob = -1;
        uint64_t bid = kw_knobs_cand_id(E->ks, &m->restart_from);
        int at = -1, moved = 0, rc = 0;
        for (int i = 0; i < se->n_seen && at < 0; i++)
            if (kw_knobs_cand_id(E->ks, &se->seen[i]) == bid)
                at = i;
        if (at >= 0)
            rc = kw_ofat_walk(E, s, at, KW_DECIDE_REVERT, KW_DECIDE_REVERT, KW_STEP_BACKTRACK,
                              "the restart's probes found no pair that beats the best: back to it",
                              "the restart's probes found no pair that beats the best: back to it",
                              &moved);
        if (rc == 0)
            kw_ofat_enter_fix(s); /* settle (nothing better to walk to), the fix, finish */
        return rc;
    }
    int r = m->restarts_done++;
    int at_path = r == 0 ? m->n_path - 1 : 0; /* the last main step, then the first */
    if (r > 0 && at_path == m->n_path - 1) {
        kw_ofat_finish(E, s); /* one main step: the first restart was from there */
        return 0;
    }
    m->restart_from = s->pos;
    uint64_t id = kw_knobs_cand_id(E->ks, &m->path_from[at_path]);
    int at = -1;
    for (int i = 0; i < se->n_seen && at < 0; i++)
        if (kw_knobs_cand_id(E->ks, &se->seen[i]) == id)
            at = i;
    const kw_knob *bk = &E->ks->knobs[m->path_knob[at_path]];
    int moved = 0, rc = 0;
    if (at >= 0) {
        char why[KW_REASON_LEN];
        snprintf(why, sizeof why, "restart %d: back where the first descent took %s=%s (main "
                 "step %d of %d); a second descent with that value tabu", r + 1, bk->name,
                 bk->values[m->path_value[at_path]], at_path + 1, m->n_path);
        rc = kw_ofat_walk(E, s, at, KW_DECIDE_EXPLORE, KW_DECIDE_EXPLORE, KW_STEP_EXPLORE,
                          "restart: on the way back along the first descent", why, &moved);
    }
    if (rc != 0)
        return rc;
    if (!moved) {
        kw_ofat_finish(E, s);
        return 0;
    }
    o->probe.ban_knob = m->path_knob[at_path];
    o->probe.ban_value = m->path_value[at_path];
    o->probe.plist_ready = 0;
    o->probe.probed = 0;
    o->ph = KW_OFAT_PROBE;
    m->no_accept = 0;
    m->cursor = 0;
    m->ccur = m->n_compose;
    m->last_knob_accepted = -1;
    o->fix.post_fix = 0;
    o->fix.accepts_since = 0;
    return 0;
}

/* ------------------------------------------------------------------ bounded fix */

static int kw_ofat_fix_plan(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    kw_ofat_fix *fx = &o->fix;
    const kw_knobspace *ks = E->ks;
    int k = fx->knob;
    while (k < ks->n_knobs && s->pos.v[k] == s->base.v[k])
        k++;
    if (k >= ks->n_knobs) {
        if ((fx->reverts > 0 || o->settle.moved) && !s->budget_hit) {
            /* dropping a change or settling moved the incumbent: search
             * on from there. A settle strictly improves the incumbent;
             * after a fix that only dropped changes the shape finishes
             * unless main accepts a step (each such cycle gains at
             * least min_effect^2, or min_effect when noiseless), so it ends */
            o->ph = KW_OFAT_MAIN;
            o->main.no_accept = 0;
            o->main.last_knob_accepted = -1;
            fx->post_fix = !o->settle.moved;
            fx->accepts_since = 0;
            o->settle.moved = 0;
            return KW_OFAT_MOVED;
        }
        kw_ofat_finish(E, s);
        return o->ph == KW_OFAT_CHECK || o->ph == KW_OFAT_RELINK ? KW_OFAT_MOVED : KW_OFAT_PLANNED;
    }
    fx->knob = k;
    kw_cand c = s->pos;
    c.v[k] = s->base.v[k];
    return kw_engine_item_add(E, s, &c, 0);
}

static int kw_ofat_fix_decide(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    kw_ofat_fix *fx = &o->fix;
    if (s->n_items != 1) {
        o->ph = KW_OFAT_FINISH;
        return 0;
    }
    const kw_item *it = &s->items[0];
    const kw_knob *k = &E->ks->knobs[fx->knob];
    char why[KW_REASON_LEN];
    int rc;
    fx->knob++;
    if (it->con >= 0) {
        snprintf(why, sizeof why, "reverting %s would break constraint %s: kept", k->name,
                 E->ks->constraints[it->con].name);
        return kw_engine_step(E, s, &it->cand, KW_DECIDE_CONSTRAINT, KW_STEP_FIX, NAN, it->con,
                              why);
    }
    if (it->dropped)
        return kw_engine_step(E, s, &it->cand, KW_DECIDE_KEEP, KW_STEP_FIX, NAN, -1,
                              "budget exhausted: kept unchecked");
    kw_cst f0, r;
    kw_engine_stats_c(E, s, &fx->f0, &f0);
    kw_engine_stats(E, s->shape, it->id, &r);
    /* noisy: F0 re-measured beside r in this round (the control), when it was */
    kw_verdict cv;
    memset(&cv, 0, sizeof cv);
    cv.ref_mean = NAN;
    kw_pair *pr = E->ev->noisy && s->ctl_k != 0 ? malloc(sizeof *pr) : NULL;
    /* a memo hit (kw_engine_pair -1) keeps the stale Welch test here: dropping a
     * change needs evidence either way, and refusing it would keep every change
     * whose removal was measured before (tests: the masked change is dropped) */
    int paired = pr ? kw_engine_pair(E, s, &fx->f0, it->id, pr) : 0;
    if (pr && paired <= 0) {
        free(pr);
        pr = NULL;
    }
    if (pr) {
        cv.ctl = pr->k;
        cv.ref_id = pr->ref_id;
        cv.ref_mean = pr->ref_mean;
    }
    double f0_mean = pr ? pr->ref_mean : f0.mean;
    double loss = -kw_engine_gain_pct(f0_mean, r.mean); /* % the config gets worse without the change */
    double p = NAN;
    int earns;
    if (f0.ok && !r.ok) {
        earns = 1;
        snprintf(why, sizeof why, "without %s=%s guard %s fails: kept", k->name,
                 k->values[s->pos.v[fx->knob - 1]], r.guards);
    } else if (!isfinite(r.mean)) {
        earns = 1;
        snprintf(why, sizeof why, "without the change the primary is not finite: kept");
    } else if (!E->ev->noisy) {
        /* noiseless: every measured gain is real, so a change is dropped only
         * when the config is at least as good without it (a free
         * simplification); the loss of the fix is then nil, not min_effect */
        earns = loss > 0;
        if (earns)
            snprintf(why, sizeof why, "the change earns %.3f%%: kept", loss);
        else
            snprintf(why, sizeof why, "the change earns nothing (%.3f%%): dropped", loss);
    } else {
        /* noisy: a removal is a step like any other and needs evidence, here
         * that the config without the change is not worse than F0 by more
         * than the minimum effect: a one-sided Welch test (non-inferiority)
         * of r's mean below F0's mean + min_effect. Without that evidence the
         * change stays, however noisy r is: an overloaded r whose tail swings
         * over orders of magnitude is never "not significantly worse". */
        /* With F0's control of this round, the same test paired (kw_engine_paired_p:
         * the pairs share their repetition's sweep). */
        double margin = fabs(f0_mean) * E->o.min_effect_pct / 100.0;
        p = pr ? kw_engine_paired_p(pr, margin)
               : kw_engine_welch_p(f0.mean + margin, f0.sd, f0.n, r.mean, r.sd, r.n);
        if (isnan(p))
            p = 1.0;
        const char *tag = pr ? "paired " : "";
        earns = !(loss < E->o.min_effect_pct && p < E->o.alpha);
        if (!earns)
            snprintf(why, sizeof why, "without the change the config is within %.2f%% "
                     "(%.2f%%, %sp %.3g): dropped", E->o.min_effect_pct, loss, tag, p);
        else if (loss >= E->o.min_effect_pct)
            snprintf(why, sizeof why, "the change earns %.2f%% (>= %.2f%%): kept", loss,
                     E->o.min_effect_pct);
        else
            snprintf(why, sizeof why, "the change earns %.2f%%, but no evidence the config is "
                     "within %.2f%% without it (%sp %.3g): kept", loss, E->o.min_effect_pct, tag,
                     p);
    }
    free(pr);
    cv.p = p;
    rc = kw_engine_step_judged(E, s, &it->cand, earns ? KW_DECIDE_KEEP : KW_DECIDE_REVERT,
                               KW_STEP_FIX, &cv, why);
    fx->reverts += !earns;
    return rc;
}

/* ------------------------------------------------------------------ check before converging */

/* The check before converging (screening on, budget left): every single-knob
 * neighbour of the incumbent not fully evaluated yet (frozen knobs and
 * constraint breakers left out) is evaluated fully, in one round the screen
 * orders by the estimate but skips nothing (KW_MF_ROUND_CHECK; under a budget
 * the budget left takes the best-estimated first), and its pairs teach the
 * shape's error bound (kw_mf_learn). The screen skips a neighbour whose
 * estimate, within the bound learnt so far, cannot gain; on a device the bound
 * did not cover, that left a converged config that was no one-knob local
 * optimum (doc/search-log.md: ResNet conv_b8_c4 on the edge NPU, seed 14 converged
 * +1.69% over the exhaustive optimum; the screen skipped conv3x3.tile_m=256
 * from every incumbent, its estimate 1.66x its full figure where the
 * incumbent's was 0.33x). At most one sweep per incumbent converged at. */
static int kw_ofat_check_plan(kw_eng *E, kw_shape *s)
{
    kw_ofat_main *m = &((kw_ofat *)s->st)->main;
    m->check_set = 1;
    m->check_at = kw_knobs_cand_id(E->ks, &s->pos);
    for (int k = 0; k < E->ks->n_knobs; k++)
        for (int v = 0; v < E->ks->knobs[k].n_values && !kw_ofat_frozen(E, k); v++) {
            kw_cand c = s->pos;
            c.v[k] = (uint8_t)v;
            if (v == s->pos.v[k] || kw_knobs_cand_violates(E->ks, &c) >= 0 ||
                kw_engine_cost(E, s, kw_knobs_cand_id(E->ks, &c)) == 0)
                continue;
            int rc = kw_engine_item_add(E, s, &c, 0);
            if (rc != 0)
                return rc;
        }
    if (s->n_items > 0)
        return KW_OFAT_PLANNED;
    kw_ofat_converged(E, s);
    return KW_OFAT_MOVED;
}

/* A neighbour that gains the minimum effect is taken as a main step and the
 * walk goes on from it; else the incumbent has converged. */
static int kw_ofat_check_decide(kw_eng *E, kw_shape *s, kw_verdict *v)
{
    kw_ofat *o = s->st;
    kw_cst inc;
    kw_engine_stats_c(E, s, &s->pos, &inc);
    int win = kw_ofat_judge_items(E, s, &s->pos, &inc, "check before converging (unscreened): ",
                                  kw_ofat_count_evaluated(s), v);
    int rc = kw_ofat_emit_rejects(E, s, win, KW_STEP_MAIN, v, -1);
    if (rc != 0)
        return rc;
    if (win < 0) {
        kw_ofat_converged(E, s);
        return 0;
    }
    int k = -1;
    kw_engine_step_check(&k, E->ks, &s->pos, &s->items[win].cand);
    kw_error_clear();
    rc = kw_engine_step_judged(E, s, &s->items[win].cand, KW_DECIDE_ACCEPT, KW_STEP_MAIN, &v[win],
                               v[win].why);
    if (rc != 0)
        return rc;
    if (k >= 0)
        o->probe.improved[k][s->items[win].cand.v[k]] = 1;
    kw_ofat_resume_main(o);
    o->main.last_knob_accepted = k;
    return 0;
}

/* ------------------------------------------------------------------ the strategy */

static int kw_ofat_init(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = calloc(1, sizeof *o);
    if (!o)
        return kw_error_set(KW_ENOMEM, "out of memory");
    s->st = o;
    o->ph = KW_OFAT_MAIN;
    o->main.last_knob_accepted = -1;
    o->ex.last_knob = -1;
    o->probe.ban_knob = -1;
    o->settle.on = !E->ev->noisy;
    return kw_ofat_settle_note(E, s); /* the baseline is the first config evaluated */
}

/* What the bounded fix of `from` will cost: the evaluations its checks (each
 * changed knob back at its baseline value) still need. A check already in the
 * memo or journal costs nothing, nor does one that breaks a constraint (the fix
 * keeps that change unevaluated), so at a small budget the reserve holds back
 * only what the fix will really spend (the first reserve, one per changed knob,
 * kept 2 of validate_small_mlp's 12 evaluations at 1% for checks that were all
 * memo hits). The same memo states decide the budget in kw_build_jobs, so a
 * resumed run reserves the same. */
static int kw_ofat_fix_cost(kw_eng *E, kw_shape *s, const kw_cand *from)
{
    int n = 0;
    for (int k = 0; k < E->ks->n_knobs; k++) {
        if (from->v[k] == s->base.v[k])
            continue;
        kw_cand c = *from;
        c.v[k] = s->base.v[k];
        if (kw_knobs_cand_violates(E->ks, &c) < 0)
            n += kw_engine_cost(E, s, kw_knobs_cand_id(E->ks, &c));
    }
    return n;
}

/* Plan visits at most KW_OFAT_PLAN_VISITS phases. Each phase's plan either
 * returns a batch or moves to a LATER phase in the order main < probe <
 * excursion < {backtrack, settle, fix} < check < relink < {restart, finish}
 * (backtrack, settle, restart and finish always return; check moves only to
 * relink, restart or finish, its way back to main is a decide's; fix and check
 * enter relink only with no budget hit, so relink then returns its batch), with
 * two exceptions: fix -> main, taken only when
 * fix.reverts > 0 or settle.moved. On that edge settle.moved is cleared, and
 * the next entry to fix goes through kw_ofat_enter_fix, which zeroes
 * fix.reverts (or, when the shape settles, stops at settle, which returns);
 * only a decide sets either again; and relink -> backtrack or settle (the budget
 * hit, which only a decide's evaluations bring: first in a plan). So one plan takes the
 * back edge at most once: main, probe, excursion, fix, main, probe, excursion,
 * fix, check, relink (or finish). */
#define KW_OFAT_PLAN_VISITS 10

static int kw_ofat_plan(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    int rc = KW_OFAT_MOVED;
    for (int visit = 0; visit < KW_OFAT_PLAN_VISITS && rc == KW_OFAT_MOVED; visit++) {
        switch (o->ph) {
        case KW_OFAT_MAIN: rc = kw_ofat_main_plan(E, s); break;
        case KW_OFAT_PROBE: rc = kw_ofat_probe_plan(E, s); break;
        case KW_OFAT_EXCURSION: rc = kw_ofat_excursion_plan(E, s); break;
        case KW_OFAT_FIX: rc = kw_ofat_fix_plan(E, s); break;
        case KW_OFAT_CHECK: rc = kw_ofat_check_plan(E, s); break;
        case KW_OFAT_RELINK: rc = kw_ofat_relink_plan(E, s); break;
        case KW_OFAT_BACKTRACK:
        case KW_OFAT_SETTLE:
        case KW_OFAT_RESTART:
        case KW_OFAT_RIVAL:
        case KW_OFAT_FINISH: rc = KW_OFAT_PLANNED; break; /* decide only */
        }
    }
    if (rc == KW_OFAT_MOVED)
        return kw_error_set(KW_ESTATE, "OFAT planning visited more than %d phases (phase %d)",
                            KW_OFAT_PLAN_VISITS, (int)o->ph);
    /* the finish (however a phase got there): the re-rank's comparisons, before its decide */
    if (rc == 0 && o->ph == KW_OFAT_FINISH && !o->rr.planned)
        rc = kw_ofat_rerank_plan(E, s);
    if (rc != 0)
        return rc;
    /* with a noisy evaluator the budget keeps back what the bounded fix will need:
     * one check per changed knob (of the incumbent, or of the excursion's start).
     * A noiseless run keeps nothing back: settle ships the best config it
     * evaluated whatever the fix could check, and at 1% of the space the checks
     * cost the search its last changes (20 seeds of the quality table: 184 -> 194
     * of 240 within 0.5% at 1%, 2-10% unchanged; one run lost, validate_gqa_h100
     * decode seed 4, +2.16%, whose fix found that dropping qkv.tile_m gained 2.1%).
     * That holds for the main phase only: once it has converged (probes,
     * excursion) the fix's checks come before more exploration, so a noiseless
     * run keeps them back there too (20 seeds: 207 -> 208 of 240 at 1%, gqa decode
     * seed 4 back within 0.5%, no cell lost; unbudgeted runs unchanged) */
    /* multi-fidelity screening: sweep and probe rounds (kw_mf.h), and a noiseless
     * run's excursion rounds: a neighbour whose estimate cannot gain the minimum
     * effect over the excursion's current config is not evaluated, and when none
     * is left the excursion walks back (27 knobs seed 1, growth: 1,618 -> 1,559
     * evaluations, the same best p95); never the fix or settle */
    s->mf_round = (o->ph == KW_OFAT_MAIN && !o->main.composing && !o->main.tp_running) ||
                  (o->ph == KW_OFAT_EXCURSION && !E->ev->noisy) ||
                  (o->ph == KW_OFAT_PROBE && !o->probe.fp_running &&
                   !(o->probe.repair0 >= 0 && o->probe.chunk0 >= o->probe.repair0));
    if (o->ph == KW_OFAT_MAIN && E->o.policy == KW_POLICY_SWEEP && !o->main.screened)
        s->mf_round = KW_MF_ROUND_FIRST;
    if (o->ph == KW_OFAT_CHECK)
        s->mf_round = KW_MF_ROUND_CHECK;
    if (!E->ev->noisy && o->ph == KW_OFAT_MAIN)
        s->reserve = 0;
    else if (o->ph == KW_OFAT_MAIN || o->ph == KW_OFAT_PROBE)
        s->reserve = kw_ofat_fix_cost(E, s, &s->pos);
    else if (o->ph == KW_OFAT_EXCURSION || o->ph == KW_OFAT_RELINK)
        s->reserve = kw_ofat_fix_cost(E, s, &o->ex.start);
    else
        s->reserve = 0;
    /* the config this round's candidates are judged against, re-measured
     * beside them when the evaluator is noisy (kw_engine.c "the control") */
    s->ctl_want = 1;
    if (o->ph == KW_OFAT_MAIN || o->ph == KW_OFAT_CHECK)
        s->ctl_cand = s->pos;
    else if (o->ph == KW_OFAT_PROBE)
        s->ctl_cand = o->probe.ban_knob >= 0 ? o->main.restart_from : s->pos;
    else if (o->ph == KW_OFAT_EXCURSION || o->ph == KW_OFAT_RELINK)
        s->ctl_cand = o->ex.start;
    else if (o->ph == KW_OFAT_FIX)
        s->ctl_cand = o->fix.f0;
    else
        s->ctl_want = 0;
    return 0;
}

/* progress: the first local optimum is where the first main walk ends */
static void kw_ofat_first_opt(kw_shape *s)
{
    const kw_ofat *o = s->st;
    if (s->evals_first_opt == 0 && o->ph != KW_OFAT_MAIN)
        s->evals_first_opt = s->evals > 0 ? s->evals : 1;
}

static int kw_ofat_decide(kw_eng *E, kw_shape *s)
{
    kw_ofat *o = s->st;
    int rc = kw_ofat_settle_note(E, s);
    if (rc != 0)
        return rc;
    if (o->ph == KW_OFAT_FINISH) {
        kw_ofat_first_opt(s);
        if (o->rr.planned && !o->rr.done) {
            o->rr.done = 1;
            if ((rc = kw_ofat_rerank_decide(E, s)) != 0)
                return rc;
        }
        return KW_SHAPE_FINISHED;
    }
    kw_verdict *v = NULL;
    if (s->n_items > 0) {
        v = calloc((size_t)s->n_items, sizeof *v);
        if (!v)
            return kw_error_set(KW_ENOMEM, "out of memory deciding");
    }
    switch (o->ph) {
    case KW_OFAT_MAIN: rc = kw_ofat_main_decide(E, s, v); break;
    case KW_OFAT_PROBE: rc = kw_ofat_probe_decide(E, s, v); break;
    case KW_OFAT_EXCURSION: rc = kw_ofat_excursion_decide(E, s, v); break;
    case KW_OFAT_BACKTRACK: rc = kw_ofat_backtrack_decide(E, s); break;
    case KW_OFAT_SETTLE: rc = kw_ofat_settle_decide(E, s); break;
    case KW_OFAT_RESTART: rc = kw_ofat_restart_decide(E, s); break;
    case KW_OFAT_RIVAL: rc = kw_ofat_rival_go(E, s); break;
    case KW_OFAT_FIX: rc = kw_ofat_fix_decide(E, s); break;
    case KW_OFAT_CHECK: rc = kw_ofat_check_decide(E, s, v); break;
    case KW_OFAT_RELINK: rc = kw_ofat_excursion_decide(E, s, v); break;
    case KW_OFAT_FINISH: break;
    }
    free(v);
    kw_ofat_first_opt(s);
    return rc;
}

static void kw_ofat_done(kw_eng *E, kw_shape *s, kw_cand *best, const char **why)
{
    (void)E;
    *best = s->pos;
    *why = s->budget_hit ? "budget" : "converged";
}

static void kw_ofat_free(kw_shape *s)
{
    kw_ofat *o = s->st;
    if (!o)
        return;
    free(o->probe.plist);
    kw_idmap_free(&o->probe.vp);
    kw_idmap_free(&o->probe.um);
    free(o->probe.um_r);
    free(o->probe.vp_r);
    free(o->settle.seen);
    free(o);
    s->st = NULL;
}

static const char *kw_ofat_phase_label(const kw_shape *s)
{
    const kw_ofat *o = s->st;
    switch (o->ph) {
    case KW_OFAT_MAIN: return "sweep";
    case KW_OFAT_PROBE: return "probe";
    case KW_OFAT_EXCURSION: return "excursion";
    case KW_OFAT_BACKTRACK: return "backtrack";
    case KW_OFAT_SETTLE: return "settle";
    case KW_OFAT_FIX: return "fix";
    case KW_OFAT_RESTART: return "restart";
    case KW_OFAT_RIVAL: return "rival";
    case KW_OFAT_CHECK: return "check";
    case KW_OFAT_RELINK: return "relink";
    case KW_OFAT_FINISH: return "finish";
    }
    return "?";
}

/* During an excursion the best config is where it started, not where it is;
 * during a second descent, where the first ended until the settle after it
 * (which walks to the best of both). */
static const kw_cand *kw_ofat_best(const kw_shape *s)
{
    const kw_ofat *o = s->st;
    if (o->main.restarts_done > 0 && o->ph != KW_OFAT_FINISH && o->ph != KW_OFAT_FIX &&
        o->ph != KW_OFAT_CHECK)
        return &o->main.restart_from;
    return o->ph == KW_OFAT_EXCURSION || o->ph == KW_OFAT_RELINK ? &o->ex.start : &s->pos;
}

/* One-knob neighbours of s's incumbent not evaluated yet (constraint-breaking
 * ones are never evaluated, so they do not count). OFAT stops only after a
 * sweep of the incumbent's neighbours finds no gain, so these are evaluations
 * the shape still needs at least (each costs E->reps when noisy). Cost: one
 * candidate hash and memo probe per neighbour (27 knobs: ~100 neighbours). */
static long kw_ofat_unseen_neighbours(const kw_eng *E, const kw_shape *s)
{
    long n = 0;
    for (int k = 0; k < E->ks->n_knobs; k++)
        for (int v = 0; v < E->ks->knobs[k].n_values; v++) {
            if (v == s->pos.v[k])
                continue;
            kw_cand c = s->pos;
            c.v[k] = (uint8_t)v;
            if (kw_knobs_cand_violates(E->ks, &c) >= 0)
                continue;
            if (!kw_memo_find(&E->memo, s->shape, kw_knobs_cand_id(E->ks, &c), 0))
                n++;
        }
    return n;
}

/* What the current local optimum still costs, if nothing improves: the
 * sweep's unseen neighbours, the probe list (its last size, or one pair per
 * neighbour before the first), the excursion's moves (each a sweep of
 * neighbours); once some shape has finished, at least its first local optimum
 * times the finished shapes' mean ratio of total evaluations to first local
 * optimum (on the default job that ratio is 9-28: the probes and excursions
 * after the first sweep are most of a shape's work, so the ratio is a rough
 * guide, not a promise). */
static long kw_ofat_estimate(const kw_eng *E, const kw_shape *s, double mean_ratio)
{
    const kw_ofat *o = s->st;
    const kw_ofat_probe *pr = &o->probe;
    if (o->ph == KW_OFAT_FINISH)
        return s->evals;
    long reps = E->reps > 0 ? E->reps : 1;
    long nb = 0;
    for (int k = 0; k < E->ks->n_knobs; k++)
        nb += E->ks->knobs[k].n_values - 1;
    long est = s->evals + kw_ofat_unseen_neighbours(E, s) * reps;
    if (o->ph == KW_OFAT_PROBE && pr->plist_ready && pr->pcur < pr->n_plist)
        est += (pr->n_plist - pr->pcur) * reps;
    else if (o->ph == KW_OFAT_MAIN && E->o.probes > 0)
        est += (pr->n_plist > 0 ? pr->n_plist : nb) * reps;
    if (o->ph == KW_OFAT_MAIN || o->ph == KW_OFAT_PROBE)
        est += (long)E->o.tabu * nb * reps;
    else if (o->ph == KW_OFAT_EXCURSION || o->ph == KW_OFAT_RELINK)
        est += (long)o->ex.moves_left * nb * reps;
    double first = s->evals_first_opt > 0 ? (double)s->evals_first_opt : (double)est;
    if (mean_ratio > 0 && first * mean_ratio > est)
        est = (long)ceil(first * mean_ratio);
    return est;
}

const kw_strategy_ops kw_ofat_ops = {
    KW_STRATEGY_OFAT, kw_ofat_init, kw_ofat_plan, kw_ofat_decide, kw_ofat_done, kw_ofat_free,
    kw_ofat_phase_label, kw_ofat_best, kw_ofat_estimate,
};
