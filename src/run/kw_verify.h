/* kw_verify.h - `knobwise verify`: can a finished run be trusted?
 *
 * Checks, in order, each reported as one line in the log:
 *   1. the journal's chained checksums (a damaged record is named by number;
 *      a torn last record fails too: the run stopped mid-write);
 *   2. the journal's semantics (kw_journal_check: ids match values, every step
 *      changes exactly one knob of the incumbent, before/after are the means
 *      of their evaluations, constraint steps break their constraint, each
 *      shape's result follows from its steps);
 *   3. the one-knob rule again on the replayed summary (independent code),
 *      and the net path (kw_netpath.h) of every shape: a chain of one-knob
 *      steps from the baseline to the recommendation, each configuration
 *      on it evaluated;
 *   4. the result files follow from the journal: ranked.csv and audit.csv are
 *      byte-identical to what the journal implies, results.xml is valid and
 *      ranks each shape's recommendation first;
 *   5. a seeded sample of evaluations (always every shape's baseline and
 *      recommendation) re-evaluated with the run's inputs and model options
 *      reproduces its recorded metrics.
 * The first violation stops the check: KW_ECORRUPT with a message naming the
 * offending record and step. */
#ifndef KW_VERIFY_H
#define KW_VERIFY_H

#include <stdint.h>

#include "kw_rundir.h"
#include "kw_sbuf.h"

typedef struct kw_verify_opts {
    int sample;       /* evaluations to re-check besides baselines and winners (default 10) */
    uint64_t seed;    /* which ones */
    int no_eval;      /* skip check 5 */
    double rel_tol;   /* metric tolerance, relative (default 1e-9: the model is deterministic) */
} kw_verify_opts;

/* Run the checks on an opened run folder (opened with KW_RUNDIR_CONFIG unless
 * no_eval). log receives one line per check. 0 when everything holds. */
int kw_verify_run(kw_sbuf *log, kw_rundir *r, const kw_verify_opts *o);

/* Checks 1-3 on a journal file alone (for tests and for runs whose inputs
 * are gone). */
int kw_verify_journal(kw_sbuf *log, const char *journal_path);

#endif
