/* kw_journal.h - the run journal: an append-only, checksummed text file that is
 * the single source of truth of a tuning run (results, audit, verify, report
 * and resume are all derived from it).
 *
 * ---------------------------------------------------------------------------
 * FILE FORMAT (format 1)
 * ---------------------------------------------------------------------------
 * One record per line: a one-letter type, then space-separated key=value
 * fields, then " crc=XXXXXXXX" (8 lower-case hex digits). String values are
 * percent-escaped (bytes <= 0x20, >= 0x7f and the characters % = , # are
 * written %XX), so a value never contains a space. Doubles are written in the
 * shortest form that reads back to the identical double ("nan", "inf" allowed);
 * ids are 16 hex digits; candidates (c=) are the value indices of every knob
 * joined by '.', in the header's knob order.
 *
 * The checksum chains: crc is the CRC-32 (IEEE 802.3, as zlib's crc32()) of
 * every record's payload (the line without " crc=...") followed by "\n", from
 * the first record up to and including this one. Editing, inserting or deleting
 * any record therefore breaks every checksum after it.
 *
 * Header records (before the first body record, in this order):
 *   H format=1 version=V seed=N strategy=ofat|random|exhaustive policy=sweep|greedy
 *     budget=N metric=NAME min_effect=PCT alpha=A repeats=R noisy=0|1 tabu=N probes=N
 *     [control=1] tuned=I,J,... [pair=N] [rerank=K] (evaluator shape indices tuned, in order; control=1:
 *                                         noisy rounds re-measure their reference, below;
 *                                         pair=N: a noisy run pairs each finished shape's
 *                                         recommendation with its neighbours, N records,
 *                                         spending at most N evaluations per shape)
 *     [alias=N]                          (since stop 47, at the end: E records may be
 *                                         aliases, a=ID below; N the service key's level,
 *                                         kw_skey: 1 stop 47's, 2 since stop 48; a resume
 *                                         keeps the journal's N; absent: none, and a resume
 *                                         of such a journal makes none)
 *   A key=K value=V                      caller attributes (owner, input paths, ...)
 *   I name=N hash=H                      one per input file
 *   K i=N name=KNOB base=B values=V0,V1,...
 *   C i=N name=NAME terms=KNOB:MASK,...  (knob index, hex mask of forbidden values)
 *   M names=M0,M1,...                    the evaluator's metric names
 *   S i=N name=SHAPE                     every evaluator shape
 * Body records:
 *   E s=SHAPE id=ID rep=R c=CAND rc=RC m=V0,V1,... g=GUARDS k=KLASS
 *       one evaluation (written once per (shape, id, rep): the memo). R is
 *       0..repeats-1 for a candidate's own repetitions, the only ones any mean
 *       is taken over; with control=1, R = K*repeats + r (K >= 1) is the
 *       reference's K-th control block, re-measured in a later round beside
 *       its challengers (kw_engine.c "the control")
 *     [a=ID] (since stop 47, alias=N runs only, at the end): an ALIAS, not
 *       evaluated: its service key (kw_evaluator.service_key) equalled that of
 *       config ID's earlier full evaluation on the same shape (rep 0, itself no
 *       alias), whose rc, m, g and k it repeats (kw_journal_check); the budget
 *       does not count it, verify evaluates it in full (kw_engine.c "aliases")
 *   T s=SHAPE step=N phase=main|probe|explore|backtrack|fix|settle d=DECISION parent=ID id=ID
 *     knob=NAME old=TEXT new=TEXT before=P after=P delta=PCT p=P nb=N na=N g=GUARDS
 *     con=CONSTRAINT c=CAND why=REASON
 *       one step decision; before/after are the primary's mean over nb/na
 *       repetitions, delta = (after - before) / before * 100 (negative = faster),
 *       p = the Bonferroni-adjusted one-sided Welch p-value ("nan" when not tested);
 *       a step judged against a control adds ref=ID ctl=K rmean=P: the reference
 *       config, its control block (repetitions K*repeats..) and that block's mean,
 *       which the gain was taken against; p is then a paired t-test's
 *   V s=SHAPE id=ID c=CAND con=CONSTRAINT why=random|exhaustive
 *       a random/exhaustive draw that breaks a constraint (recorded, not evaluated)
 *   P s=SHAPE id=ID c=CAND est=P g=GUARDS skip=0|1|2
 *       a cheap estimate of a candidate's primary (the evaluator's predict(),
 *       multi-fidelity screening), written before the round's E records; skip=1:
 *       the estimate and its measured error bound show it cannot gain the
 *       minimum effect, so it was not evaluated (kw_engine.c "screening"); skip=2: a
 *       first sweep cut to its best-estimated candidates while the bound had too
 *       few pairs (the rest come in the knob-by-knob sweeps that follow)
 *   D s=SHAPE why=converged|budget|exhausted base=ID base_p=P best=ID best_p=P c=CAND
 *     evals=N steps=N [aliases=N]        shape done: its recommendation; evals= its full
 *                                         evaluations (an alias=N run's aliases beside,
 *                                         since stop 47)
 *   N s=SHAPE id=ID k=K nb=ID nk=K knob=NAME new=TEXT c=CAND n=R pm=P nm=P delta=PCT
 *     lo=PCT hi=PCT g=GUARDS
 *       a pair (after the shape's D record, pair=N runs only; kw_engine.c "the
 *       pairing"): the recommendation id= (block k=) and its one-knob neighbour
 *       nb= with c= (block nk=, knob set to new=) re-measured side by side in
 *       alternating order, their E records (repetitions K*repeats + r) before
 *       it; pm/nm the two blocks' means, delta the mean paired difference
 *       nb - id in percent of pm and lo..hi its 95% interval
 *       (kw_reduce_pair_delta); n=0 and nan figures when a repetition failed
 *       (g= its guards)
 *   R s=SHAPE id=ID rid=ID n=N a=P b=P half=H k=K [ga=1] [gb=1]
 *       a re-rank comparison (rerank=K runs only; kw_ofat.c "the re-rank"), after the
 *       shape's search and before its D record: the challenger id= against the
 *       leader rid= on the same arrivals at N requests each (the evaluator's
 *       paired comparison, common random numbers), a and b their primary
 *       percentiles, half the 95% half-width of a - b ("nan": too short to say)
 *       from k batches. A challenger's records run at doubling N until one
 *       decides; the last decides (kw_journal_rerank_wins: below 0 by the minimum effect) whether the challenger leads. The
 *       ga=1 / gb=1 (stop 45; absent: 0): the challenger / leader fails, on that
 *       sample, a guard the sample decides (the SLA, the fallback share, saturation);
 *       a challenger with ga=1 on its last record does not lead. The
 *       shape's D record recommends the last leader (kw_journal_check)
 *   Q why=time_limit|interrupted [idle=K] pause (only ever last; resume drops it); idle=K
 *                                          (time_limit, 2026-12-07): the tunes in a row it
 *                                          kept no round of (kw_pause, kw_engine.c)
 *   Z why=complete                       run end
 *
 * Records of different shapes interleave in a fixed order (the engine works in
 * lock-step rounds over the shapes), so the file is a pure function of the seed,
 * the inputs and the evaluator; it does not depend on the thread count or timing.
 * Within a shape: E records of a round come before the T records that use them;
 * the steps of one decision are written rejected first, the moving one last.
 * The incumbent (parent of the next step) moves on d=accept, explore and revert;
 * every T record's parent is the incumbent at that point and its c= differs
 * from it in exactly the one knob named (kw_journal_check verifies the walk).
 * A probe reads: explore (first step A), its neighbours (parent A), then revert
 * to the incumbent or accept of the winning pair; an excursion: explore moves,
 * neighbours, accept (found) or backtrack reverts; the fix: keep/revert steps
 * whose c= is the incumbent with one knob back at its baseline value (keep =
 * the incumbent does not move).
 *
 * ---------------------------------------------------------------------------
 * READING API (results, audit, verify, report)
 * ---------------------------------------------------------------------------
 * kw_journal_load() parses a whole journal into plain arrays (kw_journal).
 * A torn or corrupt LAST record is left out and reported in j->torn/torn_msg
 * (the file is not touched); a bad record followed by more records is refused
 * with KW_ECORRUPT and "PATH: record N: ..." (N is the 1-based line number).
 * kw_journal_check() then checks the semantics (`knobwise verify`).
 * kw_journal_shape_result() gives a shape's baseline, its best (recommended)
 * config, the path of steps that led there and the net knob changes with the
 * step that made each. Everything a kw_journal points to is owned by it.
 */
#ifndef KW_JOURNAL_H
#define KW_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kw_crc.h"

#include "kw_search.h"

#define KW_JOURNAL_FORMAT 1
#define KW_JOURNAL_SHAPE_MAX 256   /* evaluator shapes a journal can name */
#define KW_JOURNAL_INPUT_MAX 72    /* I records: space, accelerator, workload, trace and one per shape trace */
#define KW_JOURNAL_ATTR_MAX 32     /* A records */
#define KW_JOURNAL_ATTR_LEN 1024   /* one attribute value */
/* One record, payload + " crc=XXXXXXXX" (newline excluded). The largest the
 * engine writes is a K record of KW_VALUE_MAX values of KW_VALUE_LEN bytes or
 * an A record of KW_JOURNAL_ATTR_LEN, each byte escaped to 3 (~3 KiB); a
 * longer line is damage, refused with its record number, and no reader ever
 * holds more than this much of one line in memory. */
#define KW_JOURNAL_RECORD_MAX 65536
#define KW_JOURNAL_CRC_TAG_LEN 13  /* " crc=" + 8 hex digits */

/* What part of the search a step belongs to. */
typedef enum {
    KW_STEP_MAIN,      /* sweep or greedy step from the incumbent */
    KW_STEP_PROBE,     /* two-step probe of a knob pair (EXPLORE, its neighbours, REVERT or ACCEPT) */
    KW_STEP_EXPLORE,   /* tabu excursion from a local optimum */
    KW_STEP_BACKTRACK, /* undoing an excursion that found nothing (REVERT steps) */
    KW_STEP_FIX,       /* bounded fix after convergence (REVERT / KEEP) */
    KW_STEP_SETTLE,    /* noiseless evaluator: walk to the best config evaluated
                        * (EXPLORE on the way, ACCEPT onto it) before the fix */
    KW_STEP_RERANK     /* the re-rank (kw_ofat.c): walk to the winner of the long paired
                        * sample (its R records; EXPLORE on the way, ACCEPT onto it),
                        * which the search's own sample may rank below the incumbent */
} kw_step_phase;

/* The header: how the run was made. */
typedef struct kw_jheader {
    int format;
    char version[KW_NAME_MAX];
    uint64_t seed;
    kw_strategy strategy;
    kw_policy policy;
    long budget;                 /* evaluations per shape, 0 = unlimited */
    char metric[KW_NAME_MAX];    /* primary metric (lower is better) */
    int primary;                 /* its index in metric_names */
    double min_effect_pct;
    double alpha;
    int repeats;                 /* evaluations per candidate (1 when not noisy) */
    int noisy;
    int control;                 /* control=1: noisy OFAT rounds re-measure their reference
                                  * (E records with rep >= repeats; T fields ref/ctl/rmean) */
    long pair;                   /* pair=N: the pairing's evaluations per shape (0: none) */
    int rerank;                  /* rerank=K: a noiseless OFAT run re-ranks each shape's top K
                                  * configs on a long paired sample (R records; 0: none) */
    int tabu, probes;
    int alias;                   /* alias=N: E records may be aliases (a=), N the key's
                                  * level (kw_skey.level); 0 when absent */
    int n_tuned;
    int tuned[KW_JOURNAL_SHAPE_MAX];                     /* evaluator shape indices, in order */
    int n_shapes;
    char shape_names[KW_JOURNAL_SHAPE_MAX][KW_NAME_MAX]; /* every evaluator shape */
    int n_metrics;
    char metric_names[KW_METRIC_MAX][KW_NAME_MAX];
    int n_inputs;
    struct {
        char name[KW_NAME_MAX];
        char hash[KW_NAME_MAX];
    } inputs[KW_JOURNAL_INPUT_MAX];
    int n_attrs;
    struct {
        char key[KW_NAME_MAX];
        char value[KW_JOURNAL_ATTR_LEN];
    } attrs[KW_JOURNAL_ATTR_MAX];
    kw_knobspace space;          /* knobs (names, domains, baselines) and constraints */
} kw_jheader;

/* One evaluation (E). */
typedef struct kw_jeval {
    long record;          /* 1-based record (line) number */
    int shape;            /* evaluator shape index */
    uint64_t id;
    int rep;
    kw_cand cand;
    int rc;               /* the evaluator's return code (0 ok; else guards read "error") */
    const double *m;      /* n_metrics values, named by the header's metric_names */
    const char *guards;   /* failed guards joined by ';', "" when all pass */
    const char *klass;    /* bottleneck class */
    /* An alias (a=ID, since stop 47; only in a run whose header has alias=N): the
     * evaluation was not made, its result is the earlier full evaluation's of config
     * ID on the same shape, whose service key was the same (search/kw_engine.c
     * "aliases"). The budget does not count it; verify evaluates it in full. */
    int alias;
    uint64_t alias_of;
} kw_jeval;

/* One step decision (T). */
typedef struct kw_jstep {
    long record;
    int shape;
    int step;             /* per shape, 1, 2, ... */
    kw_step_phase phase;
    kw_decision decision;
    uint64_t parent_id, id;
    kw_cand parent, cand; /* parent = cand with knob set back to old */
    int knob, old_v, new_v;   /* knob index, value indices */
    double before, after; /* primary mean of parent / of cand (NAN when not evaluated) */
    double delta_pct;     /* (after - before) / before * 100 (negative = improvement) */
    double p_value;       /* adjusted p-value, NAN when not tested */
    int n_before, n_after;
    int ctl;              /* > 0: judged against control block ctl of config ref_id (its
                           * repetitions ctl*repeats .. ctl*repeats+repeats-1), mean ref_mean */
    uint64_t ref_id;
    double ref_mean;      /* NAN when ctl is 0 */
    const char *guards;   /* cand's failed guards ("" = pass) */
    const char *constraint; /* constraint broken (CONSTRAINT), else "" */
    const char *reason;   /* why, for people */
} kw_jstep;

/* A constraint-breaking draw of random/exhaustive (V). */
typedef struct kw_jviol {
    long record;
    int shape;
    uint64_t id;
    kw_cand cand;
    const char *constraint;
    const char *why;      /* "random" or "exhaustive" */
} kw_jviol;

/* A finished shape (D). */
typedef struct kw_jdone {
    long record;
    int shape;
    char why[32];         /* converged, budget, exhausted */
    uint64_t baseline_id, best_id;
    double baseline_primary, best_primary;
    kw_cand best;
    long evals;           /* full evaluations (since stop 47 aliases not included) */
    int steps;
    long aliases;         /* aliases=N (since stop 47; 0 when absent) */
} kw_jdone;

/* A pair (N): a finished shape's recommendation and one of its one-knob
 * neighbours re-measured side by side. */
typedef struct kw_jpair {
    long record;
    int shape;
    uint64_t id, nb_id;   /* the recommendation, the neighbour */
    int k, nk;            /* their blocks: repetitions k*repeats .. k*repeats+repeats-1 */
    kw_cand cand;         /* the neighbour */
    int knob, value;      /* the knob it changes and its value index */
    int n;                /* pairs (0: a repetition failed) */
    double pick_mean, nb_mean, delta_pct, lo_pct, hi_pct;
    const char *guards;   /* the first failing repetition's guards, else "" */
} kw_jpair;

/* A re-rank comparison (R): the challenger id against the leader rid on the
 * same arrivals at n requests (kw_evaluator.paired): a, b their primary
 * percentiles, half the 95% half-width of a - b (NAN: too short to say). */
typedef struct kw_jrerank {
    long record;
    int shape;
    uint64_t id, rid;     /* the challenger, the leader */
    long n;               /* requests asked of each (the sample) */
    double a, b, half;
    int batches;
    int a_guard, b_guard; /* ga=1 / gb=1: fails a guard this sample decides (kw_paired) */
} kw_jrerank;

/* A cheap estimate (P). */
typedef struct kw_jpred {
    long record;
    int shape;
    uint64_t id;
    kw_cand cand;
    double est;           /* estimated primary */
    const char *guards;   /* guards the estimate fails */
    int skip;             /* not evaluated because of it */
} kw_jpred;

typedef struct kw_journal {
    char *path;
    kw_jheader h;
    size_t n_evals;
    kw_jeval *evals;      /* in journal order */
    size_t n_steps;
    kw_jstep *steps;
    size_t n_viols;
    kw_jviol *viols;
    size_t n_done;
    kw_jdone *done;
    size_t n_pairs;
    kw_jpair *pairs;
    size_t n_reranks;
    kw_jrerank *reranks;  /* R records, in journal order */
    int complete;         /* a Z record ends the journal */
    char paused[32];      /* the last record is a pause: its reason; else "" */
    int paused_idle;      /* that pause's idle=K (a time_limit pause: the processes in a
                           * row the limit stopped before any round of theirs was kept;
                           * 0 when absent, as in journals before 2026-12-07) */
    long n_records;       /* good records */
    long good_bytes;      /* file offset just after the last good record */
    long last_start;      /* file offset where the last good record starts */
    long file_bytes;
    int torn;             /* a torn/corrupt last record was left out */
    int header_incomplete;/* kw_journal_load_ex(..., 1) only: the file ends inside the header */
    char torn_msg[256];
    unsigned long long file_dev, file_ino; /* the file read (fstat of the reader's descriptor):
                                            * the writer and truncate open no other */
    void *priv;           /* private: string pool, indexes */
    /* cheap estimates (P records) per evaluator shape: made, and screened out */
    long pred_n[KW_JOURNAL_SHAPE_MAX];
    long pred_skip[KW_JOURNAL_SHAPE_MAX]; /* skip=1 only: ruled out by the bound */
    /* the re-rank's requests (R records: 2 n each) per evaluator shape; both readers count */
    long rerank_req[KW_JOURNAL_SHAPE_MAX];
    /* aliases (E records with a=) per evaluator shape; both readers count. The full
     * evaluations of a shape are its E records less these. */
    long n_alias[KW_JOURNAL_SHAPE_MAX];
} kw_journal;

/* Statistics of one config on one shape over its repetitions. */
typedef struct kw_jstats {
    int n;                /* repetitions found */
    double mean, sd;      /* of the primary metric */
    double mean_m[KW_METRIC_MAX]; /* mean of every metric */
    int guards_ok;        /* every repetition passed every guard */
    const char *guards;   /* first failing repetition's guards, or "" */
    const char *klass;    /* first repetition's class */
    const kw_jeval *first;/* repetition 0 (or the first found) */
} kw_jstats;

/* A net change of the recommendation against the baseline. */
typedef struct kw_jchange {
    int knob, from_v, to_v;
    const kw_jstep *step; /* the step that set the knob to to_v (NULL for random/exhaustive) */
} kw_jchange;

/* A shape's outcome. */
typedef struct kw_jresult {
    int shape;
    int done;             /* the shape has a D record */
    char why[32];         /* D's reason, or "incomplete" */
    kw_cand baseline, best;
    uint64_t baseline_id, best_id;
    double baseline_primary, best_primary; /* means (NAN if not evaluated) */
    size_t n_path;
    const kw_jstep **path;/* moving steps (accept/explore/revert) from baseline to best, in order (owned; see clear) */
    int n_changes;
    kw_jchange changes[KW_KNOB_MAX]; /* knobs where best differs from baseline, knob order */
    long evals;           /* E records of the shape */
    long controls;        /* of them, control re-measurements (rep >= repeats, before D) */
    long pairs;           /* of them, the pairing's re-measurements (rep >= repeats, after D) */
    int steps;            /* T records of the shape */
    long aliases;         /* of evals, aliases (a=): evals - aliases are the full evaluations */
} kw_jresult;

/* The re-rank's rule (kw_ofat.c "the re-rank", kw_journal_check): a challenger whose
 * last comparison reads a (its figure), b (the leader's) and half (the 95% half-width
 * of a - b) takes the lead when the interval lies below 0 and its gain is at least the
 * minimum effect, the rule every step of the search meets: b - a >= min_effect% of b;
 * and when it passes, on that long sample, every guard the sample decides (a_guard 0:
 * kw_paired). A challenger failing one there never leads, whether the leader passes
 * them or not (stop 45: validate_resnet_h100 conv_b8_c4 seed 18 moved between two
 * configs that both fail sla_p99 on every long sample, and landed +1.32% above the
 * optimum on 1,000,000 requests): where the long sample rejects both, the search's own
 * sample, on which the leader passes, decides. */
int kw_journal_rerank_wins(double a, double b, double half, double min_effect_pct, int a_guard);

/* ---- reading ---- */

/* Load and checksum-verify a journal. *out owned by the caller (kw_journal_free).
 * KW_EIO unreadable, KW_ECORRUPT damaged in the middle / unparsable / no header. */
int kw_journal_load(kw_journal **out, const char *path);
void kw_journal_free(kw_journal *j);

/* One body record as kw_journal_scan hands it over: type is 'E', 'T', 'V',
 * 'D', 'N', 'P', 'R', 'Q' or 'Z' and the member of that letter is filled (e, t, v,
 * d, n, p, rr; a pause's reason in paused). Its strings and metric vector live only during
 * the callback: copy what you keep. */
typedef struct kw_jrec {
    char type;
    long record;          /* 1-based record (line) number */
    kw_jeval e;
    kw_jstep t;
    kw_jviol v;
    kw_jdone d;
    char paused[32];
    int paused_idle;      /* 'Q': its idle=K (0 when absent) */
    kw_jpred p;
    kw_jpair n;
    kw_jrerank rr;
} kw_jrec;

/* Called per body record in journal order; j holds the finished header (and
 * the counters so far). A non-zero return (a KW_E* set with kw_error_set)
 * stops the scan and is returned by kw_journal_scan. */
typedef int (*kw_journal_fn)(void *ctx, const kw_journal *j, const kw_jrec *r);

/* The streaming reader: the same parsing, checksum chain, torn-tail and
 * mid-file-corruption rules as kw_journal_load (the same code), but no record
 * is kept: each good body record goes to fn, so memory does not grow with the
 * journal. *out gets the header and the counters (n_records, complete, paused,
 * torn, torn_msg, good_bytes, ...) with no record arrays (n_evals etc. 0,
 * kw_journal_eval_find finds nothing, kw_journal_crcs NULL); free it with
 * kw_journal_free. A journal refused in the middle returns KW_ECORRUPT after
 * fn has seen the records before the bad one: discard what fn built. */
int kw_journal_scan(kw_journal **out, const char *path, kw_journal_fn fn, void *ctx);
/* The follower: the streaming reader of a journal that its writer is still
 * appending to (the run's own summary, kw_runsum_live). Each
 * kw_journal_follow call hands fn the good body records appended since the
 * last call, through the same parsing and checksum chain as
 * kw_journal_scan; a last line without its newline is left for the next
 * call (the writer is not done with it); a bad whole line or a read error
 * fails this call and every later one (KW_ECORRUPT, KW_EIO: the caller
 * reads the journal afresh, kw_journal_scan, whose rules then judge it).
 * kw_journal_follow_journal gives the header and counters of what was read
 * (NULL while no body record has come: the header is finished by the
 * first), owned by the follower. */
typedef struct kw_jfollow kw_jfollow;
int kw_journal_follow_open(kw_jfollow **out, const char *path, kw_journal_fn fn, void *ctx);
int kw_journal_follow(kw_jfollow *f);
const kw_journal *kw_journal_follow_journal(const kw_jfollow *f);
void kw_journal_follow_free(kw_jfollow *f);
/* Same; with allow_partial_header a file that ends inside its header (a run
 * killed while starting) loads with header_incomplete set (used by resume;
 * such a journal has no body records and an unusable header). 1: after at
 * least one whole record; 2: also when the first record itself is torn
 * (n_records 0; the caller must not resume from it). */
int kw_journal_load_ex(kw_journal **out, const char *path, int allow_partial_header);
/* The header alone: the records up to the first body record, which is not
 * read, nor anything after it (O(header), whatever the journal's length),
 * with kw_journal_load_ex(..., 2)'s rules for a file that ends inside its
 * header. n_records counts the header records read; no body arrays, no
 * torn tail judged (torn, complete and paused say nothing). Used to decide
 * whether a failed fresh run left a journal a resume could use
 * (kw_run_discard), which loaded the whole journal until 2026-12-07. */
int kw_journal_load_header(kw_journal **out, const char *path);
/* The evaluation of (shape, id, rep), or NULL. O(1). */
const kw_jeval *kw_journal_eval_find(const kw_journal *j, int shape, uint64_t id, int rep);
/* Statistics of (shape, id) over repetitions 0..repeats-1; KW_EINPUT if never evaluated. */
int kw_journal_stats(kw_jstats *out, const kw_journal *j, int shape, uint64_t id);
/* A shape's baseline, best, path and changes. Incomplete shapes: the best
 * guard-passing config visited so far. Free the path with kw_journal_result_clear. */
int kw_journal_shape_result(kw_jresult *out, const kw_journal *j, int shape);
void kw_journal_result_clear(kw_jresult *r);
/* The body records of a loaded journal (E, T, V, D and N: kw_journal_load
 * keeps no others) to fn in journal order, as kw_journal_scan hands a
 * file's over, so one reader serves both. A non-zero return of fn stops the
 * walk and is returned. */
int kw_journal_each(const kw_journal *j, kw_journal_fn fn, void *ctx);
/* Semantic check for `knobwise verify`: ids match values, every step changes
 * exactly one knob of the current incumbent, steps numbered in order, every
 * evaluated step's before/after equal the means of its E records, constraint
 * steps really break their constraint, D records follow from the steps.
 * KW_ECORRUPT "PATH: record N: ..." on the first violation. */
int kw_journal_check(const kw_journal *j);
/* Header attribute by key, or NULL. */
const char *kw_journal_attr(const kw_journal *j, const char *key);
/* Evaluator shape index by name in the header, or -1. */
int kw_journal_shape_index(const kw_journal *j, const char *name);

/* ---- names ---- */
/* accept reject explore revert keep constraint */
const char *kw_journal_decision_name(kw_decision d);
/* Does this decision move the incumbent (accept, explore, revert)? The
 * moving steps are what a shape's net path is made of (kw_reduce.h). */
int kw_journal_decision_taken(kw_decision d);
int kw_journal_decision_parse(const char *s);        /* -1 if unknown */
const char *kw_journal_step_phase_name(kw_step_phase p);
int kw_journal_step_phase_parse(const char *s);
const char *kw_journal_strategy_name(kw_strategy s); /* ofat random exhaustive */
int kw_journal_strategy_parse(const char *s);
const char *kw_journal_policy_name(kw_policy p);     /* sweep greedy */
int kw_journal_policy_parse(const char *s);

/* ---- low level (the engine writes through these; tests use them to plant records) ---- */

/* The checksums' CRC-32: kw_crc_32 (kw_crc.h, included above). */
/* Recompute every checksum of a journal in place (for tests that edit a journal
 * on purpose, e.g. to plant a two-knob step that `verify` must catch). */
int kw_journal_reseal(const char *path); /* opened as the reader opens it: a regular
                                            * file, never through a symbolic link */
/* Truncate the file at path to bytes (used by resume to drop a torn tail),
 * under the journal writer's own lock (kw_journal_lock in kw_journal.c, which
 * the writer takes too: KW_EINPUT "another knobwise is writing this journal"
 * when another open file holds it).
 * read: the journal as loaded from path (NULL: any file there): when the file
 * at path is no longer the one read (replaced since: another inode), KW_EINPUT
 * and nothing is truncated. */
int kw_journal_truncate(const char *path, long bytes, const kw_journal *read);

/* A growable text buffer for building record payloads. */
typedef struct kw_jbuf {
    char *s;
    size_t len, cap;
    int oom;
} kw_jbuf;
void kw_journal_buf_reset(kw_jbuf *b);
void kw_journal_buf_free(kw_jbuf *b);
void kw_journal_buf_printf(kw_jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* " key=" + escaped string (key NULL: the escaped string alone) */
void kw_journal_buf_str(kw_jbuf *b, const char *key, const char *value);
/* Undo kw_journal_buf_str's escaping in place; -1 on a bad %XX. */
int kw_journal_unescape(char *s);
/* " key=" + shortest round-trip double (key NULL: the number alone) */
void kw_journal_buf_dbl(kw_jbuf *b, const char *key, double v);
/* " key=" + candidate indices joined by '.' */
void kw_journal_buf_cand(kw_jbuf *b, const char *key, const kw_knobspace *ks, const kw_cand *c);

/* The writer: appends checksummed records; in replay mode (resume) the first
 * n_old records are not written but compared by checksum with the existing
 * ones, so a resumed run proves it regenerates the same journal. */
typedef struct kw_jwriter kw_jwriter;
/* Open path for appending (created if missing). old_crcs: the chained checksums
 * of the records already in the file (n_old of them), copied. read: the
 * journal as loaded from path (a resume; NULL: no check): the file opened
 * must be the one read, else KW_EINPUT and nothing is written (a journal
 * swapped between the read and the append is not written into). */
int kw_journal_writer_open(kw_jwriter **out, const char *path, const kw_journal *read,
                           const uint32_t *old_crcs, size_t n_old, int no_sync);
/* Add one record (payload without the checksum); buffered until commit.
 * KW_ECORRUPT when a replayed record differs from the journal's. */
int kw_journal_writer_add(kw_jwriter *w, const char *payload);
/* Write the buffered records, flush, fsync (unless no_sync). KW_EIO on failure. */
int kw_journal_writer_commit(kw_jwriter *w);
/* Records added so far (replayed + new). */
long kw_journal_writer_records(const kw_jwriter *w);
/* True while records are still being compared with the existing journal. */
int kw_journal_writer_replaying(const kw_jwriter *w);
void kw_journal_writer_free(kw_jwriter *w);

/* The checksums of a loaded journal's good records (n_records of them; owned by j). */
const uint32_t *kw_journal_crcs(const kw_journal *j);

#endif
