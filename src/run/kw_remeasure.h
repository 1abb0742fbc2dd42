/* kw_remeasure.h - `knobwise verify RUN --remeasure N`: a measured run cannot
 * be re-evaluated bit for bit, so a seeded sample of its journaled
 * evaluations is measured again with the run's worker and the drift between
 * journal and now is reported (per evaluation and summarised, with a
 * Mann-Whitney test of "same distribution"). Drift is reported, not judged:
 * the device may have changed on purpose.
 */
#ifndef KW_REMEASURE_H
#define KW_REMEASURE_H

#include <stdint.h>

#include "kw_rundir.h"
#include "kw_sbuf.h"

/* Re-measure n sampled guard-passing evaluations of r (opened with
 * KW_RUNDIR_CONFIG) with the worker its journal names (cmd_override when
 * non-NULL). One line per evaluation and a summary go to log. 0, or KW_EINPUT
 * when the run was not measured or the worker cannot start. */
int kw_remeasure_run(kw_sbuf *log, kw_rundir *r, int n, uint64_t seed, const char *cmd_override);

#endif
