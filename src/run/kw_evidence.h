/* kw_evidence.h - the evidence phase of a run: every evaluation made after the
 * search, on the summary the results are written from.
 *
 *   kw_evidence_portability  each shape's winner evaluated on every other shape
 *                            (portability.csv, results.xml <portability>; a
 *                            measured run's from its journal)
 *   kw_evidence_recheck      the baseline and the first `top` ranked configs of
 *                            each shape re-measured (results.xml <recheck>; a
 *                            model's only, never measured)
 *   kw_evidence_neighbours   the neighbours of each recommendation the search
 *                            did not evaluate (results.xml's sensitivity; a
 *                            model's only, never measured)
 *   kw_evidence_run          the three, as a finished run's results need them
 *
 * Design choice: the evaluations run on the process's one evaluation pool
 * (search/kw_evpool.h, the engine's), each job writing its own slot, the
 * results read back in job order: the summary does not depend on the thread
 * count or timing, and the process never holds two sets of threads. The
 * results writers (kw_results.h) only render a summary: they evaluate
 * nothing. Rejected: the writers' own pthreads beside the engine's pool (the
 * layout before; two pools sized apart, evaluation hidden inside "write").
 *
 * pool NULL: the calling thread evaluates every job (tests, report).
 */
#ifndef KW_EVIDENCE_H
#define KW_EVIDENCE_H

#include "kw_evpool.h"
#include "kw_runsum.h"

/* Ranked configurations re-measured per shape by a finished run. */
#define KW_EVIDENCE_RECHECK_TOP 3

struct kw_evcache;

/* Where the evaluations run: pool (NULL: the caller alone), on at most
 * width of its threads (<= 0: all). With a cache (the run's evidence file,
 * kw_evcache.h) an evaluation kept there is read, not made, and the others
 * run in slices of twice the width, each slice's evaluations kept (in job
 * order) as it ends: a cut loses one slice at most. progress (may be NULL)
 * is called on the calling thread after each slice: `what` the part of the
 * evidence ("portability", "re-checks", "neighbours"), done of total
 * evaluations of that part (kept ones counted done). */
typedef struct kw_evidence_pool {
    kw_evpool *pool;
    int width;
    struct kw_evcache *cache;
    void (*progress)(void *ud, const char *what, long done, long total);
    void *ud;
    /* The time limit's deadline the evaluators read (NULL: none). With a
     * cache that has kept nothing new yet in this process, the first
     * evaluation not kept is made alone, with *deadline_s set to 0 while it
     * runs (a stop still cuts it), and kept: so every resume keeps one more
     * evaluation, and a limit shorter than one evidence evaluation still
     * reaches the end over resumes (each such resume cut nothing kept
     * before 2026-12-07, and the run could never finish). *past_s (may be
     * NULL) is then how far past the deadline that evaluation ended (0:
     * within it, or not made so). */
    double *deadline_s;
    double *past_s;
} kw_evidence_pool;

/* rs->port / rs->port_ok: the winner (rank 1) of shape i evaluated by ev on
 * shape j; a constraint-breaking winner or a shape ev lacks is a guard cell.
 * KW_ENOMEM when an evaluation runs out of memory, KW_EINTERRUPTED when one
 * was stopped (other evaluator errors are "error:" cells). An evaluator that
 * drifts (the measuring one) evaluates none: kw_evidence_portability_journal. */
int kw_evidence_portability(kw_runsum *rs, const kw_evaluator *ev, const kw_evidence_pool *p);

/* A measured run's portability matrix, from its journal alone: cell (i, j) is
 * the figure the summary holds for shape i's winner on shape j (its E
 * records, as results.xml shows that configuration there), or, where the
 * search never evaluated it on j, a KW_EVIDENCE_PORT_UNMEASURED cell.
 * Design choice: a cell measured after the run is a figure no record backs,
 * that verify cannot check and a resume would measure again, from a round of
 * its own on a device that drifts; rejected, as for the neighbours. */
int kw_evidence_portability_journal(kw_runsum *rs);

/* configs[].recheck of each shape's baseline and first `top` ranked configs
 * (each once), by ev. The first failing evaluation in job order fails it. An
 * evaluator that drifts evaluates none and marks them recheck_unmeasured
 * instead (for the reason above: the figures a measured run shows are its
 * journal's; the pairing's N records are its re-measurement). */
int kw_evidence_recheck(kw_runsum *rs, const kw_evaluator *ev, int top, const kw_evidence_pool *p);

/* The neighbours of each shape's recommendation that the summary lacks
 * (kw_netpath_sensitivity's MISSING sides), evaluated by ev and added as
 * configurations marked `evidence`, in knob order; *added (may be NULL) gets
 * the count. The first failing evaluation in that order fails it, with the
 * ones before it added (as evaluating them one by one would). An evaluator
 * that drifts (kw_evaluator.drifts: the measuring one) evaluates none: what
 * the files show of a measured run is journaled (the pairing's N records). */
int kw_evidence_neighbours(kw_runsum *rs, const kw_evaluator *ev, const kw_evidence_pool *p,
                           int *added);

/* Each shape's ranking verdict (kw_rs_shape verdict, verdict_rival): rank 1
 * against its rival (kw_results_rival) compared by ev->paired on common
 * random numbers at the final re-check's sample (rank 1's re-checked
 * `samples`); while that does not resolve it (kw_results_paired_resolved),
 * again at twice the sample, up to KW_RESULTS_VERDICT_CAP, and only while
 * the comparisons (2 n requests each) simulate no more requests in all than
 * the shape's search did (evaluations x rank 1's search sample): the
 * verdict never costs more than the search it judges (a 20-evaluation
 * test run stays a test run; the default job's bursty shape, 2,430
 * evaluations of 2,000 requests, reaches the cap). A sample too short for
 * a paired interval (kw_simci_pair_batches: p95 below 40,000, p99 below
 * 200,000) is skipped, not compared. The looks are planned before the
 * first is read (a pure function of the re-check's sample, the budget and
 * p), and each comparison's 95% half-width is widened to its Bonferroni
 * share of the run's level 1 - alpha (rs->limits.alpha, the space's
 * <tuning alpha>; kw_simci_pair_half_looks): the sequence resolves a rank 1
 * that is not faster with probability at most alpha / 2 (2.5% by default),
 * as one look would
 * (measured: tests/test_results.c, the A/A sequence). The last comparison is
 * kept, widened (verdict_looks says over how many looks); its record keeps
 * the comparison's own 95%. Nothing for an evaluator without pairing (the shape
 * keeps the separate intervals' verdict), a shape it cannot pair, or a
 * primary other than p95/p99. Made on the calling thread, shape by shape,
 * in that order: a pure function of the run (same bytes at any thread
 * count). With p's cache each comparison is kept as it ends (e=v records)
 * and read back by a resume, and the first one not kept is made whole
 * under a deadline as kw_evidence_pool says (so a short --time-limit still
 * reaches the end over resumes); p may be NULL. Needs the re-checks
 * (kw_evidence_recheck). KW_EINTERRUPTED when a comparison was stopped. */
int kw_evidence_verdict(kw_runsum *rs, const kw_evaluator *ev, const kw_evidence_pool *p);

/* A run's evidence: the portability matrix by port_ev, and when final_ev is
 * given (a run's final results, not a rewrite of the results so far) the
 * re-checks and the ranking verdicts by final_ev and the neighbours by
 * port_ev. Either may be NULL. */
int kw_evidence_run(kw_runsum *rs, const kw_evaluator *port_ev, const kw_evaluator *final_ev,
                    const kw_evidence_pool *p);

#endif
