/* kw_report.h - the visual report of a run: one self-contained HTML file with
 * inline SVG plots, readable offline (no script, no external resource) and at
 * a laptop's width (every plot scales down to the page):
 *   - a summary table (baseline -> recommendation per shape), the knobs that
 *     had no effect on any shape, and the portability heat map (winner of
 *     each shape on every shape; "saturated" where it cannot keep up);
 *   - per shape: the mapping to deploy (every knob, changed ones marked), the
 *     exploration in one line, the net-path waterfall (one labelled bar per
 *     shipped step, kw_netpath.h), convergence against evaluations (best so
 *     far, log scale when it spans a decade, labels on shipped steps only),
 *     the latency distribution of baseline and recommendation as a CDF of
 *     the simulated requests (when the run's inputs are there to re-simulate
 *     them), the sensitivity of the recommendation to each knob, the effect
 *     by knob family, and the guard table with the rollback thresholds.
 * Deterministic: the same summary (and distributions) give byte-identical HTML. */
#ifndef KW_REPORT_H
#define KW_REPORT_H

#include "kw_runsum.h"
#include "kw_sbuf.h"

/* What every report says in a comment after its DOCTYPE: report -o FILE
 * --force replaces only a file that holds it (kw_runfolder_output). */
#define KW_REPORT_MARK "written by knobwise report"

/* The simulated requests' latencies of one configuration, sorted ascending
 * (n = 0: not available). Borrowed. */
typedef struct kw_report_dist {
    int n;
    const double *sorted_us;
} kw_report_dist;

/* Per shape (rs->n_shapes entries each): the baseline's and the
 * recommendation's distributions. */
typedef struct kw_report_lat {
    const kw_report_dist *base;
    const kw_report_dist *rec;
} kw_report_lat;

/* Append the report of a finished summary (portability shown when computed);
 * lat may be NULL (the latency section then shows the recorded percentiles
 * and says the distribution needs the run's inputs). */
int kw_report_html_lat(kw_sbuf *out, const kw_runsum *rs, const kw_report_lat *lat);
/* The same without distributions. */
int kw_report_html(kw_sbuf *out, const kw_runsum *rs);
/* kw_report_html_lat with each shape's ranking note from the run's
 * results.xml (notes[rs->n_shapes], kw_results_ranking_read; notes or an
 * entry NULL: resolved, or not judged), said before the mapping to deploy:
 * the final re-check could not rank it apart from its rival. */
int kw_report_html_notes(kw_sbuf *out, const kw_runsum *rs, const kw_report_lat *lat,
                         char *const *ranking_notes);

#endif
