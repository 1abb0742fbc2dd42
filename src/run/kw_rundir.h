/* kw_rundir.h - a finished run folder opened for reading (kw_run_open,
 * kw_run.h): its journal, the run summary replayed from it, and on request the
 * inputs it was made from and an evaluator configured like the run's.
 *
 * What the run's journal header must carry for this (attributes, `A` records,
 * written by kw_run_create; their keys are kw_run.h's KW_RUN_ATTR_ROWS):
 *   owner         the --owner
 *   space, accel, workload, trace   the input paths as given ("" or absent: the
 *                 embedded default / the space's own references)
 *   model_seed    the model's seed (default: the run's seed)
 *   sim_requests  the serving simulation's sample size override (default 0:
 *                 the space's own)
 *   thermal, drift  0/1 model stages (defaults 0 and 1)
 * Input hashes (`I` records named space, accelerator, workload, and the
 * arrival traces: trace, shape_trace.N) are compared with the inputs loaded
 * now; a difference is reported (inputs_changed, naming the file).
 */
#ifndef KW_RUNDIR_H
#define KW_RUNDIR_H

#include "kw_eval.h"
#include "kw_journal.h"
#include "kw_model.h"
#include "kw_run.h"
#include "kw_runsum.h"
#include "kw_sbuf.h"

enum {
    KW_RUNDIR_CONFIG = 1,         /* load the run's inputs (space, accelerator, workload) */
    KW_RUNDIR_INPUTS_OPTIONAL = 2 /* with CONFIG: recorded inputs that are gone or bad
                                   * (KW_EINPUT, KW_EIO) open the run without them: cfg
                                   * NULL, inputs_missing 1, the reason in inputs_msg;
                                   * never an override the user gave (space, accel,
                                   * workload below): that is an error */
};

typedef struct kw_rundir_opts {
    unsigned flags;
    const char *space, *accel, *workload; /* overrides of the recorded input paths */
} kw_rundir_opts;

typedef struct kw_rundir {
    char dir[KW_PATH_MAX];
    kw_journal *j;
    kw_runsum *rs;           /* finished; limits from the inputs when loaded */
    kw_config *cfg;          /* NULL unless KW_RUNDIR_CONFIG */
    kw_model_opts mopts;     /* the run's model options (from the journal) */
    char trace[KW_PATH_MAX];
    kw_model_eval *me;       /* created by kw_rundir_evaluator */
    int inputs_changed;      /* an input's hash differs from the journal's */
    int inputs_missing;      /* KW_RUNDIR_INPUTS_OPTIONAL: the inputs did not load */
    int in_progress;         /* a writer (tune) holds the run folder's lock: the journal
                              * read is a consistent prefix, its torn tail the record
                              * being written */
    char inputs_msg[512];
} kw_rundir;

/* Made by kw_run_open (kw_run.h); kw_rundir_free accepts NULL. */
void kw_rundir_free(kw_rundir *r);

/* The evaluator over r->cfg with the run's model options (created once; owned
 * by r). Shapes appended to r->cfg before the first call are included. */
int kw_rundir_evaluator(const kw_evaluator **out, kw_rundir *r);

/* "knobwise eval" plus the options that reproduce the run's evaluations
 * (--space/--accel/--workload as recorded, --requests, --seed, --thermal),
 * appended to out, each recorded path one shell word (kw_sbuf_shell). It
 * wrote into a 4,096-byte buffer: three long paths cut the command short. */
void kw_rundir_eval_prefix(kw_sbuf *out, const kw_rundir *r);

/* Index of the evaluator shape (space shape) named name in r->cfg, or -1. */
int kw_rundir_cfg_shape(const kw_rundir *r, const char *name);

/* 1 when run r's evidence (the re-checks at the final sample and long
 * thermal window, the portability matrix, the disproof criteria they give:
 * kw_evidence_run, after the search) is missing, and how that is known, in
 * why[]. In order of authority:
 *   a tune holds the run folder's lock: the run is still running
 *   the journal (the run's source of truth) has no end record (Z): the
 *     search did not finish, and the evidence follows the search, so it was
 *     not made, whatever results.xml says
 *   the journal is complete: RUN/evidence's end record (kw_evcache.h,
 *     format 2: written when the evidence phase finished, after results.xml):
 *     without it the phase was cut (a --time-limit or a signal after the
 *     search), whatever results.xml says; with it the evidence was made
 *     (2, "no record", when results.xml is gone)
 *   no such file (a measured run keeps none; a run older than the format, or
 *     one killed before its evidence began): results.xml's <results evidence=...>
 *     (kw_results_evidence_read), the one record of the evidence phase (the
 *     evidence is not journaled; a --time-limit or a signal there leaves a
 *     complete journal), or its absence (killed before it was written, or
 *     not a file of its own: 2, "no record", not "stopped")
 * Returns 1 missing, 2 no record of it, 0 made. One rule for every reader of
 * a run (recommend, audit, report; libknobwise and export apply its
 * end-record and results.xml part: they read no journal). Until 2026-12-07
 * recommend read results.xml alone, so a stale or edited
 * results.xml of a stopped run (its evidence attribute dropped) silenced the
 * warning; until the end record (2026-12-07) a cut after the journal's end
 * was known from results.xml alone. */
int kw_rundir_evidence_missing(char *why, size_t n, const kw_rundir *r);

#endif
