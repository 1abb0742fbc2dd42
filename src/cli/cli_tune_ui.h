/* cli_tune_ui.h - what `knobwise tune` prints (cli_tune_ui.c).
 *
 *   kw_cli_tune_ui_start           the progress's state for run r (a resume's
 *                                  replay said at once on a log)
 *   kw_cli_tune_ui_progress        kw_run_ctl.progress: the terminal's block or
 *                                  line, or a log's plain line per finished shape
 *                                  and every KNOBWISE_PROGRESS_EVERY s (60); also
 *                                  kw_run_ctl.rerank (it only draws)
 *   kw_cli_tune_ui_evidence        kw_run_ctl.evidence: the evidence phase's count
 *   kw_cli_tune_ui_rewrite_failed  kw_run_ctl.rewrite_failed: said once
 *   kw_cli_tune_ui_clear           the progress off the screen
 *   kw_cli_tune_ui_end             how the run ended (kw_run_exec's outcome and
 *                                  code) said, one line per shape (baseline ->
 *                                  recommendation, from the journal through the
 *                                  one reducer) unless quiet, and the exit status
 */
#ifndef CLI_TUNE_UI_H
#define CLI_TUNE_UI_H

#include "kw_journal.h"
#include "kw_run.h"

typedef struct kw_cli_tune_ui {
    int draw;                    /* progress line on stderr (a terminal) */
    int plain;                   /* stderr is not a terminal: plain lines (per finished shape,
                                  * and every plain_every_s) */
    int drawn;                   /* the first line on screen is this many columns wide */
    int lines;                   /* lines of progress on screen (0: none) */
    int ansi;                    /* the terminal takes ANSI cursor control (TERM not dumb) */
    const char *const *shape_names; /* the evaluator's, indexed like the progress's */
    const char *metric;
    double last_draw;
    int replay_said;             /* plain: the replay's start (1) and end (2) were said */
    char said_done[KW_JOURNAL_SHAPE_MAX]; /* plain: this tuned shape's line is written */
    int n_said;
    double t0;                   /* when the progress started (CLOCK_MONOTONIC s) */
    double plain_every_s;        /* plain: a progress line this often (0: none) */
    double last_plain;           /* plain: when the last one was written */
    const kw_run *mpi;           /* mpirun: the run whose ranks' rates are shown (NULL: none) */
    /* the evidence's part now (kw_cli_tune_ui_evidence): its name, when it
     * was first reported and its count then (evaluations kept by an earlier
     * tune are read back, not timed) */
    char ev_what[32];
    double ev_t0;
    long ev_done0;
} kw_cli_tune_ui;

void kw_cli_tune_ui_start(kw_cli_tune_ui *ui, const kw_run *r, int quiet);
void kw_cli_tune_ui_progress(void *ud, const kw_run *r, const kw_progress *p);
/* kw_run_ctl.evidence: the evidence phase's part and count, on the
 * terminal's line, and in a log every KNOBWISE_PROGRESS_EVERY s */
void kw_cli_tune_ui_evidence(void *ud, const kw_run *r, const char *what, long done, long total);
void kw_cli_tune_ui_rewrite_failed(void *ud, const kw_run *r);
void kw_cli_tune_ui_clear(kw_cli_tune_ui *ui);
int kw_cli_tune_ui_end(const kw_run *r, const kw_run_outcome *out, int rc, int quiet);

#endif
