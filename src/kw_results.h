/* kw_results.h - what a run leaves behind: results.xml (results/results.xsd),
 * ranked.csv, audit.csv, portability.csv, derived from the run's journal.
 * Every file is written through temp file + fsync + rename. */
#ifndef KW_RESULTS_H
#define KW_RESULTS_H

#include "kw_model.h"

/* Write the run's result files into run_dir from its journal (run_dir/journal).
 * ev is the evaluator the run used (for the portability matrix and re-checks);
 * owner is recorded in every rollback element; metric is "p95_us" or "p99_us". */
int kw_results_write(const char *run_dir, const kw_config *cfg, const kw_evaluator *ev,
                     const char *owner, const char *metric);

#endif
