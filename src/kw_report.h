/* kw_report.h - the visual report of a run: one self-contained HTML file with
 * inline SVG plots, readable offline (no script, no external resource):
 *   - a summary table (baseline -> recommendation per shape),
 *   - per shape: convergence (primary metric against step, each accepted point
 *     labelled with its knob), a waterfall of each accepted step's
 *     contribution from the baseline to the recommendation, the latency
 *     distribution (p50/p95/p99/p99.9) of baseline against recommendation,
 *     the effect grouped by knob family, and the guard table with the
 *     rollback thresholds;
 *   - the portability heat map (winner of each shape on every shape).
 * Deterministic: the same summary gives byte-identical HTML. */
#ifndef KW_REPORT_H
#define KW_REPORT_H

#include "kw_runsum.h"
#include "kw_sbuf.h"

/* Append the report of a finished summary (portability shown when computed). */
int kw_report_html(kw_sbuf *out, const kw_runsum *rs);

#endif
