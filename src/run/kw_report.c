/* kw_report.c - the HTML report (see kw_report.h).
 *
 * Design choice: plain SVG drawn by hand, no charting library and no script,
 * so the file opens offline in any browser years later and the bytes depend
 * only on the run summary (fixed number formats, no timestamps). Every plot is
 * one function taking the summary and a shape; every number drawn is also in
 * a <title> (hover) or a table, so nothing is only readable from a colour.
 *
 * What a reader needs sets the size: the report draws what ships (the net
 * path, kw_netpath.h) and bounded summaries of the exploration (best so far
 * at the evaluations where it improved, a CDF at fixed quantiles), never one
 * mark per journaled step. So it grows with knobs and shapes, not with the
 * budget: about 40 kB per shape on the embedded default, where drawing every
 * step made 7.7 MB.
 *
 * Layout: the body is at most KW_PAGE_PX wide and every SVG scales down to
 * its container (max-width 100%, viewBox), so nothing is wider than a
 * 1366 px laptop screen (tests/test_report.c renders it in Chromium and
 * measures).
 */
#include <math.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "kw_audit.h"
#include "kw_netpath.h"
#include "kw_report.h"
#include "kw_results.h"

#define KW_W 1080        /* wide plot width, px */
#define KW_HALF_W 530    /* half-width plot (two side by side in the page) */
#define KW_H 300         /* plot height, px */
#define KW_ML 70         /* left margin (axis labels) */
#define KW_MR 20
#define KW_MT 20
#define KW_MB 40
#define KW_ROW_H 22      /* one row of a horizontal bar chart */
#define KW_LABEL_W 300   /* the label column of a horizontal bar chart */
/* A value axis switches to log scale when it spans more than this ratio
 * (a decade: below it a linear axis reads better). */
#define KW_LOG_RATIO 10.0
/* Values above this multiple of the baseline are drawn at the top edge (one
 * terrible configuration must not flatten the rest). */
#define KW_CAP_X_BASE 3.0
/* CDF points: quantiles 0, 1/100, ..., 99/100, then the tail to 0.999 in
 * finer steps (the tail is what the primary metric reads). */
#define KW_CDF_BODY 100
#define KW_CDF_TAIL 10

static const char kw_css[] =
    "body{font-family:sans-serif;margin:16px auto;padding:0 16px;color:#222;max-width:1120px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:36px;border-bottom:1px solid #ccc}"
    "h3{font-size:15px;margin-bottom:4px}"
    "table{border-collapse:collapse;font-size:12px;margin:8px 0;max-width:100%}"
    "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}"
    "th{background:#f0f0f0}td.l,th.l{text-align:left}"
    "tr.changed td{background:#e3f2fd;font-weight:bold}"
    ".fail{color:#c62828;font-weight:bold}.pass{color:#2e7d32}"
    "svg{background:#fff;border:1px solid #ddd;margin:4px 0;max-width:100%;height:auto}"
    "svg text{font-size:11px;font-family:sans-serif}"
    ".row{display:flex;flex-wrap:wrap;gap:12px}.row>*{flex:1 1 520px;min-width:0}"
    ".note{font-size:12px;color:#555}code{font-size:12px;word-break:break-all}";

/* ---------------------------------------------------------------- helpers */

static void kw_n(kw_sbuf *b, double v, int d)
{
    char t[64];
    kw_sbuf_fmt_num(t, sizeof t, v, d);
    kw_sbuf_puts(b, t[0] ? t : "-");
}

static void kw_pct(kw_sbuf *b, double pct)
{
    if (!isfinite(pct)) {
        kw_sbuf_puts(b, "-");
        return;
    }
    char t[64];
    kw_sbuf_fmt_num(t, sizeof t, pct, 2);
    kw_sbuf_printf(b, "%s%s%%", pct > 0 && strcmp(t, "0.00") != 0 ? "+" : "", t);
}

static const char *kw_knob_name(const kw_runsum *rs, int k)
{
    return k >= 0 && k < rs->ks.n_knobs ? rs->ks.knobs[k].name : "?";
}

static const char *kw_knob_val(const kw_runsum *rs, int k, const kw_cand *c)
{
    if (k < 0 || k >= rs->ks.n_knobs || c->v[k] >= rs->ks.knobs[k].n_values)
        return "?";
    return rs->ks.knobs[k].values[c->v[k]];
}

static void kw_svg_open(kw_sbuf *b, const char *cls, int w, int h, const char *label)
{
    kw_sbuf_printf(b, "<svg class=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
                      "aria-label=\"", cls, w, h, w, h);
    kw_sbuf_html(b, label);
    kw_sbuf_puts(b, "\">\n");
}

/* A value axis: linear from lo (>= 0) or log10 when hi/lo > KW_LOG_RATIO. */
typedef struct kw_axis {
    double lo, hi;
    int log;
} kw_axis;

static kw_axis kw_axis_make(double lo, double hi, int allow_log)
{
    kw_axis a = {lo, hi, 0};
    if (!(a.lo > 0) || !isfinite(a.lo))
        a.lo = 0;
    if (!(a.hi > a.lo))
        a.hi = a.lo > 0 ? a.lo * 2 : 1;
    if (allow_log && a.lo > 0 && a.hi / a.lo > KW_LOG_RATIO) {
        a.log = 1;
        a.lo = pow(10, floor(log10(a.lo)));
        a.hi = pow(10, ceil(log10(a.hi)));
    } else {
        /* linear: start at 0 when the data is close to it, pad 5% above */
        double pad = (a.hi - a.lo) * 0.05;
        a.lo = a.lo - pad < 0 || a.lo < (a.hi - a.lo) ? 0 : a.lo - pad;
        a.hi += pad;
    }
    return a;
}

/* Position of v on [p0, p1] (p0 at lo). Values are clamped into the axis. */
static double kw_axis_pos(const kw_axis *a, double v, double p0, double p1)
{
    if (!isfinite(v) || v > a->hi)
        v = a->hi;
    if (v < a->lo)
        v = a->lo;
    double t = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
                      : (v - a->lo) / (a->hi - a->lo);
    return p0 + t * (p1 - p0);
}

/* Tick values: 1-2-5 steps (linear) or powers of ten with 2 and 5 between
 * when few decades (log). Never below lo, so never negative. */
static int kw_axis_ticks(const kw_axis *a, double *t, int max)
{
    int n = 0;
    if (a->log) {
        int decades = (int)lround(log10(a->hi / a->lo));
        for (double d = a->lo; d <= a->hi * 1.0001 && n < max; d *= 10) {
            t[n++] = d;
            if (decades <= 2 && d * 10 <= a->hi * 1.0001) {
                if (n < max)
                    t[n++] = 2 * d;
                if (n < max)
                    t[n++] = 5 * d;
            }
        }
        return n;
    }
    double raw = (a->hi - a->lo) / 5, mag = pow(10, floor(log10(raw)));
    double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
    for (double v = ceil(a->lo / step) * step; v <= a->hi + 1e-9 * step && n < max; v += step)
        t[n++] = v;
    return n;
}

/* Decimals for tick labels of an axis (whole numbers unless the span is small). */
static int kw_axis_dec(const kw_axis *a) { return !a->log && a->hi - a->lo < 10 ? 2 : 0; }

/* A vertical value axis on the left of the plot box [x0,x1]x[y0,y1]. */
static void kw_axis_left(kw_sbuf *b, const kw_axis *a, const char *unit, double x0, double x1, double y0,
                         double y1)
{
    double t[32];
    int n = kw_axis_ticks(a, t, 32);
    kw_sbuf_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#999\"/>\n",
                   x0, y0, x1 - x0, y1 - y0);
    for (int i = 0; i < n; i++) {
        double y = kw_axis_pos(a, t[i], y1, y0);
        kw_sbuf_printf(b, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                          "<text class=\"tick\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">",
                       x0, x1, y, y, x0 - 4, y + 4);
        kw_n(b, t[i], kw_axis_dec(a));
        kw_sbuf_puts(b, "</text>\n");
    }
    kw_sbuf_printf(b, "<text x=\"12\" y=\"%.0f\" transform=\"rotate(-90 12 %.0f)\" text-anchor=\"middle\">",
                   (y0 + y1) / 2, (y0 + y1) / 2);
    kw_sbuf_html(b, unit);
    if (a->log)
        kw_sbuf_puts(b, " (log scale)");
    kw_sbuf_puts(b, "</text>\n");
}

/* A horizontal value axis under the plot box. */
static void kw_axis_bottom(kw_sbuf *b, const kw_axis *a, const char *unit, double x0, double x1,
                           double y0, double y1)
{
    double t[32];
    int n = kw_axis_ticks(a, t, 32);
    for (int i = 0; i < n; i++) {
        double x = kw_axis_pos(a, t[i], x0, x1);
        kw_sbuf_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#eee\"/>"
                          "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">",
                       x, x, y0, y1, x, y1 + 14);
        kw_n(b, t[i], kw_axis_dec(a));
        kw_sbuf_puts(b, "</text>\n");
    }
    kw_sbuf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">", (x0 + x1) / 2, y1 + 30);
    kw_sbuf_html(b, unit);
    if (a->log)
        kw_sbuf_puts(b, " (log scale)");
    kw_sbuf_puts(b, "</text>\n");
}

static int kw_saturated(const kw_rs_config *c) { return kw_guards_saturated(c->m.guards); }

/* ---------------------------------------------------------------- sections */

/* Every knob of the recommendation, the changed ones marked. */
/* head: the column of the shape's final config, "deploy", or "best evaluated"
 * under "Nothing to deploy" (a config that fails the guards is not one to deploy) */
static void kw_mapping_table(kw_sbuf *b, const kw_runsum *rs, const kw_rs_shape *s, const char *head)
{
    const kw_cand *B = &s->configs[s->baseline].cand, *F = &s->configs[s->final].cand;
    int si = (int)(s - rs->shapes);
    /* the changes that do not earn their place (kw_netpath_unearned), said
     * beside each: the deployed mapping's only */
    kw_unearned *ue = calloc((size_t)(rs->ks.n_knobs > 0 ? rs->ks.n_knobs : 1), sizeof *ue);
    int n_ue = ue && kw_runsum_winner(rs, si) == s->final ? kw_netpath_unearned(ue, rs, si, s->final)
                                                         : 0;
    if (!ue)
        b->failed = 1;
    kw_sbuf_printf(b, "<table class=\"mapping\"><tr><th class=\"l\">knob</th><th class=\"l\">%s</th>"
                      "<th class=\"l\">baseline</th><th class=\"l\">changed</th></tr>\n", head);
    for (int k = 0, u = 0; k < rs->ks.n_knobs; k++) {
        int ch = B->v[k] != F->v[k];
        int idle = u < n_ue && ue[u].knob == k;
        kw_sbuf_printf(b, "<tr%s><td class=\"l\">", ch ? " class=\"changed\"" : "");
        kw_sbuf_html(b, kw_knob_name(rs, k));
        kw_sbuf_puts(b, "</td><td class=\"l\">");
        kw_sbuf_html(b, kw_knob_val(rs, k, F));
        kw_sbuf_puts(b, "</td><td class=\"l\">");
        kw_sbuf_html(b, kw_knob_val(rs, k, B));
        kw_sbuf_printf(b, "</td><td class=\"l\">%s", ch ? "&#9679; changed" : "");
        if (idle) {
            char pc[32];
            if (ue[u].pct != 0 && fabs(ue[u].pct) < 0.005)
                snprintf(pc, sizeof pc, "%s&lt;0.01%%", ue[u].pct > 0 ? "+" : "-");
            else
                snprintf(pc, sizeof pc, "%+.2f%%", ue[u].pct);
            kw_sbuf_printf(b, " (does not earn its place: reverting it alone %s)", pc);
            u++;
        }
        kw_sbuf_puts(b, "</td></tr>\n");
    }
    free(ue);
    kw_sbuf_printf(
        b,
        "</table>\n<p class=\"note\">Configuration %016llx; %d of %d knobs differ from the "
        "baseline %016llx.</p>\n",
        (unsigned long long)s->configs[s->final].id, kw_knobs_cand_distance(&rs->ks, B, F),
        rs->ks.n_knobs, (unsigned long long)s->configs[s->baseline].id);
}

/* Horizontal waterfall: the baseline, one floating bar per net step (labelled
 * with its number, knob and values), the recommendation. */
static void kw_plot_waterfall(kw_sbuf *b, const kw_runsum *rs, int si, const kw_netpath *np)
{
    const kw_rs_shape *s = &rs->shapes[si];
    int p = rs->primary;
    double base = s->configs[s->baseline].m.v[p], fin = s->configs[s->final].m.v[p];
    double hi = fmax(base, fin);
    for (int i = 0; i < np->n; i++)
        hi = fmax(hi, fmin(s->configs[np->steps[i].after].m.v[p], KW_CAP_X_BASE * base));
    kw_axis ax = kw_axis_make(0, hi, 0);
    ax.lo = 0;
    int rows = np->n + 2, w = KW_W, h = KW_MT + rows * KW_ROW_H + 44;
    double x0 = KW_LABEL_W, x1 = w - 90, y0 = KW_MT, y1 = KW_MT + rows * KW_ROW_H;
    char label[200];
    snprintf(label, sizeof label, "waterfall of %s on shape %s", rs->metric_names[p], s->name);
    kw_svg_open(b, "waterfall", w, h, label);
    kw_axis_bottom(b, &ax, rs->metric_names[p], x0, x1, y0, y1);
    for (int i = 0; i < rows; i++) {
        double from, to, y = y0 + i * KW_ROW_H;
        const char *col;
        const kw_rs_config *af = NULL;
        kw_sbuf name = {0};
        if (i == 0) {
            from = 0, to = base, col = "#616161";
            kw_sbuf_puts(&name, "baseline");
        } else if (i == rows - 1) {
            from = 0, to = fin, col = "#1565c0";
            kw_sbuf_puts(&name, "recommended");
        } else {
            const kw_net_step *st = &np->steps[i - 1];
            const kw_rs_config *bf = &s->configs[st->before];
            af = &s->configs[st->after];
            from = bf->m.v[p], to = af->m.v[p];
            col = kw_saturated(af) ? "#000" : to <= from ? "#2e7d32" : "#c62828";
            kw_sbuf_printf(&name, "%d. %s %s \xe2\x86\x92 %s", i, kw_knob_name(rs, st->knob),
                           kw_knob_val(rs, st->knob, &bf->cand), kw_knob_val(rs, st->knob, &af->cand));
        }
        double xa = kw_axis_pos(&ax, from, x0, x1), xb = kw_axis_pos(&ax, to, x0, x1);
        double wd = fabs(xb - xa) < 1 ? 1 : fabs(xb - xa);
        kw_sbuf_printf(b, "<text class=\"label\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">", x0 - 6,
                       y + 15);
        kw_sbuf_html(b, kw_sbuf_cstr(&name));
        kw_sbuf_printf(b, "</text><rect class=\"bar\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" "
                          "fill=\"%s\"><title>", fmin(xa, xb), y + 3, wd, KW_ROW_H - 6, col);
        kw_sbuf_html(b, kw_sbuf_cstr(&name));
        kw_sbuf_puts(b, ": ");
        if (af) { /* a step: from -> to; the two ends are one figure (not "0.000 -> x") */
            kw_n(b, from, 3);
            kw_sbuf_puts(b, " \xe2\x86\x92 ");
        }
        kw_n(b, to, 3);
        kw_sbuf_printf(b, " us</title></rect><text x=\"%.0f\" y=\"%.0f\">", fmax(xa, xb) + 4, y + 15);
        if (af && kw_saturated(af))
            kw_sbuf_puts(b, "saturated");
        else if (i == 0 || i == rows - 1)
            kw_n(b, to, 1);
        else
            kw_pct(b, (to - from) / from * 100.0);
        kw_sbuf_puts(b, "</text>\n");
        if (name.failed) /* a bar without its label: the report fails, never shrinks */
            b->failed = 1;
        kw_sbuf_free(&name);
    }
    kw_sbuf_puts(b, "</svg>\n");
}

/* Best guard-passing primary metric so far against evaluations (configs in
 * first-evaluated order, repetitions counted); the net path's configurations
 * marked with their step number. */
static void kw_plot_convergence(kw_sbuf *b, const kw_runsum *rs, int si, const kw_netpath *np)
{
    const kw_rs_shape *s = &rs->shapes[si];
    int p = rs->primary;
    double base = s->configs[s->baseline].m.v[p];
    double lo = INFINITY, hi = base;
    long evals = 0;
    for (int c = 0; c < s->n_configs; c++) {
        const kw_rs_config *cf = &s->configs[c];
        evals += cf->reps;
        if (cf->reps > 0 && !cf->m.guards[0] && isfinite(cf->m.v[p]) && cf->m.v[p] > 0)
            lo = fmin(lo, cf->m.v[p]);
    }
    for (int i = 0; i < np->n; i++) {
        double v = s->configs[np->steps[i].after].m.v[p];
        if (isfinite(v) && v > 0)
            hi = fmax(hi, fmin(v, KW_CAP_X_BASE * base));
    }
    if (!isfinite(lo))
        lo = base;
    kw_axis ay = kw_axis_make(fmin(lo, base), hi, 1);
    kw_axis ax = kw_axis_make(0, evals > 0 ? (double)evals : 1, 0);
    ax.lo = 0;
    int w = KW_W, h = KW_H + 20;
    double x0 = KW_ML, x1 = w - KW_MR, y0 = KW_MT, y1 = h - KW_MB - 10;
    char label[200];
    snprintf(label, sizeof label, "convergence of %s on shape %s", rs->metric_names[p], s->name);
    kw_svg_open(b, "convergence", w, h, label);
    kw_axis_left(b, &ay, rs->metric_names[p], x0, x1, y0, y1);
    kw_axis_bottom(b, &ax, "evaluations", x0, x1, y0, y1);
    /* best so far: a step line through the evaluations that improved it */
    kw_sbuf_puts(b, "<polyline class=\"best\" fill=\"none\" stroke=\"#1565c0\" stroke-width=\"2\" points=\"");
    double best = INFINITY;
    long at = 0;
    int started = 0;
    for (int c = 0; c < s->n_configs; c++) {
        const kw_rs_config *cf = &s->configs[c];
        at += cf->reps;
        if (cf->reps == 0 || cf->m.guards[0] || !(cf->m.v[p] < best))
            continue;
        double x = kw_axis_pos(&ax, (double)at, x0, x1);
        if (started)
            kw_sbuf_printf(b, " %.1f,%.1f", x, kw_axis_pos(&ay, best, y1, y0));
        best = cf->m.v[p];
        kw_sbuf_printf(b, "%s%.1f,%.1f", started ? " " : "", x, kw_axis_pos(&ay, best, y1, y0));
        started = 1;
    }
    if (started)
        kw_sbuf_printf(b, " %.1f,%.1f", x1, kw_axis_pos(&ay, best, y1, y0));
    kw_sbuf_puts(b, "\"/>\n");
    /* the shipped steps: where each configuration of the net path was first evaluated */
    for (int i = 0; i < np->n; i++) {
        int c = np->steps[i].after;
        long e = 0;
        for (int k = 0; k <= c; k++)
            e += s->configs[k].reps;
        double v = s->configs[c].m.v[p];
        double x = kw_axis_pos(&ax, (double)e, x0, x1), y = kw_axis_pos(&ay, v, y1, y0);
        kw_sbuf_printf(b, "<circle class=\"shipped\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#2e7d32\"><title>"
                          "net step %d: ", x, y, i + 1);
        kw_sbuf_html(b, kw_knob_name(rs, np->steps[i].knob));
        kw_sbuf_puts(b, "=");
        kw_sbuf_html(b, kw_knob_val(rs, np->steps[i].knob, &s->configs[c].cand));
        kw_sbuf_printf(b, " at evaluation %ld, ", e);
        kw_n(b, v, 3);
        kw_sbuf_printf(b, " us</title></circle><text class=\"knob\" x=\"%.1f\" y=\"%.1f\">%d</text>\n",
                       x + 5, y - 5 - 10 * (i % 3), i + 1);
    }
    kw_sbuf_printf(b, "</svg>\n<p class=\"note\">Blue: the best guard-passing %s found so far, against "
                      "the evaluations spent (%ld). Green, numbered: where each configuration of the net "
                      "path above was first evaluated (the numbers are the waterfall's).</p>\n",
                   rs->metric_names[p], evals);
}

/* CDF points of a sorted sample: GSL quantiles at fixed probabilities. */
static int kw_cdf_points(double *q, double *v, const kw_report_dist *d)
{
    int n = 0;
    for (int i = 0; i < KW_CDF_BODY; i++, n++) {
        q[n] = (double)i / KW_CDF_BODY;
        v[n] = gsl_stats_quantile_from_sorted_data(d->sorted_us, 1, (size_t)d->n, q[n]);
    }
    for (int i = 0; i <= KW_CDF_TAIL; i++, n++) {
        q[n] = 0.99 + 0.009 * i / KW_CDF_TAIL;
        v[n] = gsl_stats_quantile_from_sorted_data(d->sorted_us, 1, (size_t)d->n, q[n]);
    }
    q[n] = 1.0;
    v[n] = d->sorted_us[d->n - 1];
    return n + 1;
}

/* Latency CDF of the simulated requests, baseline against recommendation. */
static void kw_plot_cdf(kw_sbuf *b, const kw_runsum *rs, int si, const kw_report_dist *bd,
                        const kw_report_dist *rd)
{
    const kw_rs_shape *s = &rs->shapes[si];
    char label[200];
    snprintf(label, sizeof label, "latency distribution on shape %s", s->name);
    int w = KW_HALF_W, h = KW_H;
    double x0 = KW_ML, x1 = w - KW_MR, y0 = KW_MT, y1 = h - KW_MB - 10;
    kw_svg_open(b, "cdf", w, h, label);
    if (rs->info.measured) {
        kw_sbuf_printf(b, "<text x=\"%d\" y=\"%d\">Distribution not measured: the journal of a measured "
                          "run keeps percentiles, not requests.</text>\n", KW_ML, KW_MT + 20);
        kw_sbuf_puts(b, "</svg>\n");
        return;
    }
    if (!bd || !rd || bd->n < 2 || rd->n < 2) {
        kw_sbuf_printf(b, "<text x=\"%d\" y=\"%d\">Distribution needs the run's inputs (re-simulated by "
                          "knobwise report).</text>\n", KW_ML, KW_MT + 20);
        kw_sbuf_puts(b, "</svg>\n");
        return;
    }
    double bq[KW_CDF_BODY + KW_CDF_TAIL + 2], bv[KW_CDF_BODY + KW_CDF_TAIL + 2];
    double rq[KW_CDF_BODY + KW_CDF_TAIL + 2], rv[KW_CDF_BODY + KW_CDF_TAIL + 2];
    int nb = kw_cdf_points(bq, bv, bd), nr = kw_cdf_points(rq, rv, rd);
    double lo = fmin(bv[0], rv[0]), hi = fmax(bv[nb - 1], rv[nr - 1]);
    kw_axis ax = kw_axis_make(lo > 0 ? lo : fmin(bv[1], rv[1]), hi, 1);
    kw_axis ay = {0, 1, 0};
    kw_axis_left(b, &ay, "fraction of requests", x0, x1, y0, y1);
    kw_axis_bottom(b, &ax, "latency us", x0, x1, y0, y1);
    for (int k = 0; k < 2; k++) {
        const double *q = k ? rq : bq, *v = k ? rv : bv;
        int n = k ? nr : nb;
        kw_sbuf_printf(b, "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
                       k ? "rec" : "base", k ? "#1565c0" : "#9e9e9e");
        for (int i = 0; i < n; i++)
            kw_sbuf_printf(b, "%s%.1f,%.1f", i ? " " : "", kw_axis_pos(&ax, v[i], x0, x1),
                           kw_axis_pos(&ay, q[i], y1, y0));
        kw_sbuf_puts(b, "\"><title>");
        kw_sbuf_puts(b, k ? "recommended" : "baseline");
        kw_sbuf_printf(b, ", %d simulated requests: p50 ", k ? rd->n : bd->n);
        kw_n(b, v[KW_CDF_BODY / 2], 1);
        kw_sbuf_puts(b, " us, p95 ");
        kw_n(b, v[KW_CDF_BODY * 95 / 100], 1);
        kw_sbuf_puts(b, " us, p99 ");
        kw_n(b, v[KW_CDF_BODY], 1);
        kw_sbuf_puts(b, " us</title></polyline>\n");
    }
    /* p95 guide */
    double y95 = kw_axis_pos(&ay, 0.95, y1, y0);
    kw_sbuf_printf(b, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#c62828\" "
                      "stroke-dasharray=\"4 3\"/><text x=\"%.0f\" y=\"%.1f\" fill=\"#c62828\">p95</text>\n",
                   x0, x1, y95, y95, x0 + 4, y95 - 3);
    kw_sbuf_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\" fill=\"#9e9e9e\"/>"
                      "<text x=\"%.0f\" y=\"%.0f\">baseline</text>"
                      "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\" fill=\"#1565c0\"/>"
                      "<text x=\"%.0f\" y=\"%.0f\">recommended</text>\n",
                   x1 - 190, y1 - 40, x1 - 176, y1 - 31, x1 - 100, y1 - 40, x1 - 86, y1 - 31);
    kw_sbuf_puts(b, "</svg>\n");
}

/* Effect of each knob family along the net path (percent of the baseline:
 * the families add up to the total change). */
static void kw_plot_families(kw_sbuf *b, const kw_runsum *rs, int si, const kw_netpath *np)
{
    const kw_rs_shape *s = &rs->shapes[si];
    double fe[KW_FAMILY_COUNT] = {0};
    int fn[KW_FAMILY_COUNT] = {0};
    double base = s->configs[s->baseline].m.v[rs->primary];
    for (int i = 0; i < np->n && base > 0; i++) {
        const kw_net_step *st = &np->steps[i];
        kw_family f = kw_audit_knob_family(kw_knob_name(rs, st->knob));
        fe[f] += (s->configs[st->after].m.v[rs->primary] - s->configs[st->before].m.v[rs->primary]) /
                 base * 100.0;
        fn[f]++;
    }
    double m = 1.0;
    for (int f = 0; f < KW_FAMILY_COUNT; f++)
        m = fmax(m, isfinite(fe[f]) ? fabs(fe[f]) : 0);
    int w = KW_HALF_W, rowh = 28, h = KW_MT + KW_FAMILY_COUNT * rowh + 30;
    char label[200];
    snprintf(label, sizeof label, "effect by knob family on shape %s", s->name);
    kw_svg_open(b, "families", w, h, label);
    double xz = 330, half = 180; /* zero line and half width */
    kw_sbuf_printf(b, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n", xz, xz,
                   KW_MT - 4, h - 26);
    for (int f = 0; f < KW_FAMILY_COUNT; f++) {
        double y = KW_MT + f * rowh;
        double len = isfinite(fe[f]) ? fe[f] / m * half : 0;
        kw_sbuf_printf(b, "<text x=\"8\" y=\"%.0f\">%s (%d step%s)</text>", y + 15,
                       kw_audit_family_name((kw_family)f), fn[f], fn[f] == 1 ? "" : "s");
        kw_sbuf_printf(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"18\" fill=\"%s\">"
                          "<title>%s ", len < 0 ? xz + len : xz, y + 2, fabs(len) < 0.5 ? 0.5 : fabs(len),
                       fe[f] <= 0 ? "#2e7d32" : "#c62828", kw_audit_family_name((kw_family)f));
        kw_pct(b, fe[f]);
        kw_sbuf_puts(b, " of the baseline</title></rect>");
        kw_sbuf_printf(b, "<text x=\"%.0f\" y=\"%.0f\">", len < 0 ? xz + 6 : xz - 64, y + 15);
        kw_pct(b, fe[f]);
        kw_sbuf_puts(b, "</text>\n");
    }
    kw_sbuf_printf(b, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">%% of the baseline %s along the "
                      "net path (negative = faster)</text>\n", w / 2.0, h - 8, rs->metric_names[rs->primary]);
    kw_sbuf_puts(b, "</svg>\n");
}

/* Sensitivity: per knob, the primary change when the recommendation moves it
 * one value down (left bar) or up (right bar). */
static void kw_plot_sensitivity(kw_sbuf *b, const kw_runsum *rs, int si)
{
    const kw_rs_shape *s = &rs->shapes[si];
    const kw_knobspace *ks = &rs->ks;
    kw_sens sn[KW_KNOB_MAX];
    if (kw_netpath_sensitivity(sn, rs, si) != 0)
        return;
    double m = 1.0;
    for (int k = 0; k < ks->n_knobs; k++)
        for (int d = 0; d < 2; d++)
            if (sn[k].side[d].state == KW_SENS_EVALUATED && isfinite(sn[k].side[d].pct) &&
                !kw_saturated(&s->configs[sn[k].side[d].config]))
                m = fmax(m, fabs(sn[k].side[d].pct));
            else if (sn[k].side[d].state == KW_SENS_MISSING && sn[k].side[d].pair &&
                     sn[k].side[d].pair->n > 0 && isfinite(sn[k].side[d].pair->delta_pct))
                m = fmax(m, fabs(sn[k].side[d].pair->delta_pct));
    if (m > 100)
        m = 100; /* larger effects run to the edge, their number says how far */
    int w = KW_W, h = KW_MT + ks->n_knobs * KW_ROW_H + 40;
    double xl = 300, xr = 690, half = 180; /* zero lines of the down and up columns */
    char label[200];
    snprintf(label, sizeof label, "sensitivity of %s to each knob on shape %s",
             rs->metric_names[rs->primary], s->name);
    kw_svg_open(b, "sensitivity", w, h, label);
    kw_sbuf_printf(b, "<text x=\"%.0f\" y=\"14\" text-anchor=\"middle\">one value down</text>"
                      "<text x=\"%.0f\" y=\"14\" text-anchor=\"middle\">one value up</text>\n", xl, xr);
    for (int k = 0; k < ks->n_knobs; k++) {
        double y = KW_MT + k * KW_ROW_H;
        int inert = kw_netpath_sens_inert(&sn[k]);
        kw_sbuf_printf(b, "<text class=\"label\" x=\"8\" y=\"%.0f\"%s>", y + 15,
                       inert ? " fill=\"#9e9e9e\"" : "");
        kw_sbuf_html(b, ks->knobs[k].name);
        kw_sbuf_puts(b, " = ");
        kw_sbuf_html(b, kw_knob_val(rs, k, &s->configs[s->final].cand));
        kw_sbuf_puts(b, "</text>\n");
        for (int d = 0; d < 2; d++) {
            const kw_sens_side *o = &sn[k].side[d];
            double xz = d ? xr : xl;
            kw_sbuf_printf(b, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#ccc\"/>", xz, xz,
                           y + 2, y + KW_ROW_H - 2);
            const char *word = NULL;
            char why[KW_GUARDS_LEN + 20], said[KW_GUARDS_LEN + 40];
            int paired = o->pair && o->pair->n > 0;
            if (o->state == KW_SENS_EDGE)
                word = "(end of domain)";
            else if (o->state == KW_SENS_MISSING && paired)
                word = NULL; /* the pairing's figure (its N record) */
            else if (o->state == KW_SENS_MISSING && kw_netpath_sens_unmeasured(why, sizeof why, rs, o)) {
                snprintf(said, sizeof said, "not measured: %s", why);
                word = said;
            } else if (o->state == KW_SENS_MISSING)
                word = "not evaluated";
            else if (o->state == KW_SENS_CONSTRAINT)
                word = "breaks a constraint";
            else if (kw_saturated(&s->configs[o->config]))
                word = "saturated";
            else if (o->same)
                word = "no effect";
            else if (!isfinite(o->pct)) /* infeasible: no latency to compare */
                word = s->configs[o->config].m.guards[0] ? s->configs[o->config].m.guards : "no measurement";
            if (word) {
                kw_sbuf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" fill=\"#757575\">", xz + 6, y + 15);
                if (o->state != KW_SENS_EDGE) {
                    kw_sbuf_html(b, ks->knobs[k].values[o->value]);
                    kw_sbuf_puts(b, ": ");
                }
                kw_sbuf_printf(b, "%s</text>\n", word);
                continue;
            }
            double pct = o->state == KW_SENS_MISSING ? o->pair->delta_pct : o->pct,
                   len = fmin(fabs(pct), m) / m * half;
            const char *guards = o->state == KW_SENS_MISSING ? "" : s->configs[o->config].m.guards;
            kw_sbuf_printf(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" "
                              "fill=\"%s\"><title>", pct < 0 ? xz - len : xz, y + 4, len < 0.5 ? 0.5 : len,
                           KW_ROW_H - 8, guards[0] ? "#ef9a9a" : pct < 0 ? "#2e7d32" : "#c62828");
            kw_sbuf_html(b, ks->knobs[k].name);
            kw_sbuf_puts(b, "=");
            kw_sbuf_html(b, ks->knobs[k].values[o->value]);
            kw_sbuf_puts(b, ": ");
            kw_pct(b, pct);
            if (guards[0]) {
                kw_sbuf_puts(b, ", fails ");
                kw_sbuf_html(b, guards);
            }
            kw_sbuf_printf(b, "</title></rect><text x=\"%.0f\" y=\"%.0f\">", pct < 0 ? xz + 6 : xz + len + 4,
                           y + 15);
            kw_sbuf_html(b, ks->knobs[k].values[o->value]);
            kw_sbuf_puts(b, " ");
            kw_pct(b, pct);
            if (paired) { /* paired: its 95% interval */
                kw_sbuf_puts(b, " [");
                kw_pct(b, o->pair->lo_pct);
                kw_sbuf_puts(b, ", ");
                kw_pct(b, o->pair->hi_pct);
                kw_sbuf_puts(b, "]");
            }
            if (guards[0])
                kw_sbuf_puts(b, " (guard)");
            kw_sbuf_puts(b, "</text>\n");
        }
    }
    kw_sbuf_printf(b, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">change of %s against the "
                      "recommendation, from evaluations the run made (bars capped at %.0f%%; grey knob: no "
                      "effect on this shape)</text>\n", w / 2.0, h - 10, rs->metric_names[rs->primary], m);
    kw_sbuf_puts(b, "</svg>\n");
}

/* Colour of a vs-best percentage: 0% green, 50%+ red. */
static void kw_heat(char *buf, size_t len, double pct)
{
    double t = isfinite(pct) ? fmin(fmax(pct / 50.0, 0.0), 1.0) : 1.0;
    int r = (int)lround(46 + t * (198 - 46)), g = (int)lround(125 + t * (40 - 125)),
        bl = (int)lround(50 + t * (40 - 50));
    snprintf(buf, len, "#%02x%02x%02x", r, g, bl);
}

static void kw_plot_portability(kw_sbuf *b, const kw_runsum *rs)
{
    int n = rs->n_shapes;
    int lw = 220, top = 150;
    int cell = n > 0 ? (KW_W - lw - 140) / n : 90;
    if (cell > 110)
        cell = 110;
    int w = lw + n * cell + 140, h = top + n * 34 + 20; /* room for the last rotated label */
    kw_svg_open(b, "heatmap", w, h, "portability heat map");
    int p95 = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_P95_US));
    for (int j = 0; j < n; j++) {
        double x = lw + j * cell + cell / 2.0;
        kw_sbuf_printf(b, "<text x=\"%.0f\" y=\"%d\" transform=\"rotate(-35 %.0f %d)\">", x, top - 8, x,
                       top - 8);
        kw_sbuf_html(b, rs->shapes[j].name);
        kw_sbuf_puts(b, "</text>\n");
    }
    for (int i = 0; i < n; i++) {
        double y = top + i * 34;
        kw_sbuf_printf(b, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">", lw - 8, y + 21);
        kw_sbuf_html(b, rs->shapes[i].name);
        kw_sbuf_puts(b, "</text>\n");
        for (int j = 0; j < n; j++) {
            const kw_metrics *m = &rs->port[i * n + j];
            int ok = rs->port_ok[i * n + j] && p95 >= 0;
            int sat = ok && kw_guards_saturated(m->guards);
            double best = rs->port_ok[j * n + j] && p95 >= 0 ? rs->port[j * n + j].v[p95] : NAN;
            double pct = ok && best > 0 ? (m->v[p95] - best) / best * 100.0 : NAN;
            const kw_rs_shape *sj = &rs->shapes[j];
            double base = sj->baseline >= 0 ? sj->configs[sj->baseline].m.v[rs->primary] : NAN;
            int worse = ok && i != j && (m->v[rs->primary] > base || m->guards[0]);
            char col[16];
            kw_heat(col, sizeof col, pct);
            kw_sbuf_printf(b, "<rect class=\"cell\" x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"30\" fill=\"%s\" "
                              "stroke=\"%s\" stroke-width=\"%d\"><title>",
                           lw + j * cell, y, cell - 4, !ok ? "#bdbdbd" : sat ? "#212121" : col,
                           worse ? "#000" : "#fff", worse ? 3 : 1);
            kw_sbuf_html(b, rs->shapes[i].name);
            kw_sbuf_puts(b, " on ");
            kw_sbuf_html(b, sj->name);
            kw_sbuf_puts(b, ": ");
            if (sat) {
                kw_sbuf_puts(b, "saturated (arrivals exceed what it can serve)");
            } else if (ok) {
                kw_n(b, m->v[p95], 3);
                kw_sbuf_puts(b, " us, ");
                kw_pct(b, pct);
                kw_sbuf_puts(b, " vs best");
            }
            if (m->guards[0] && !sat) {
                /* a measured run's cell its journal has no figure for says so alone */
                kw_sbuf_puts(b, strcmp(m->guards, KW_RESULTS_PORT_UNMEASURED) ? ", guards " : "");
                kw_sbuf_html(b, m->guards);
            }
            if (worse)
                kw_sbuf_puts(b, ", worse than that shape's baseline");
            kw_sbuf_printf(b, "</title></rect><text x=\"%d\" y=\"%.0f\" text-anchor=\"middle\" fill=\"#fff\">",
                           lw + j * cell + (cell - 4) / 2, y + 19);
            if (sat) {
                kw_sbuf_puts(b, "saturated");
            } else if (ok) {
                kw_sbuf_puts(b, pct > 0 ? "+" : "");
                kw_n(b, pct, 1);
                kw_sbuf_puts(b, "%");
            } else {
                kw_sbuf_puts(b, "n/a");
            }
            if (worse)
                kw_sbuf_puts(b, " !");
            kw_sbuf_puts(b, "</text>\n");
        }
    }
    kw_sbuf_puts(b, "</svg>\n<p class=\"note\">Row: the shape a winner was tuned for; column: the shape it ran on; "
                    "cell: its p95 against that shape's own winner, or \"saturated\" where its arrivals exceed "
                    "what the winner can serve. A black frame and '!' mark a winner that is worse than that "
                    "shape's baseline there or fails a guard.</p>\n");
}

/* ---------------------------------------------------------------- tables */

/* One guard row: metric KW_M_`metric` of m against limit, with the metric
 * table's decimals and direction (a higher-is-better metric is a floor). */
static void kw_guard_row(kw_sbuf *b, const kw_runsum *rs, const kw_metrics *m, int metric,
                         const char *why, double limit)
{
    const kw_metric_info *mi = &kw_metric_table[metric];
    double v = kw_runsum_value(rs, m, mi->name);
    int at_least = mi->better == KW_BETTER_HIGHER, d = mi->decimals;
    int pass = isfinite(v) && (at_least ? v >= limit : v <= limit);
    kw_sbuf_printf(b, "<tr><td class=\"l\">%s%s</td><td>", mi->name, why);
    kw_n(b, v, d);
    kw_sbuf_printf(b, "</td><td>%s ", at_least ? "&ge;" : "&le;");
    kw_n(b, limit, d);
    kw_sbuf_printf(b, "</td><td class=\"%s\">%s</td></tr>\n", pass ? "pass" : "fail",
                   pass ? "pass" : "FAIL");
}

static void kw_guard_table(kw_sbuf *b, const kw_runsum *rs, int si)
{
    const kw_rs_shape *s = &rs->shapes[si];
    const kw_metrics *m = &s->configs[s->final].m;
    const kw_rs_limits *l = &rs->limits;
    kw_rollback rb;
    kw_results_rollback(&rb, rs, si, s->final);
    kw_sbuf_puts(b, "<table class=\"guards\"><tr><th class=\"l\">guard (recommended)</th><th>measured</th>"
                    "<th>limit</th><th>status</th></tr>\n");
    kw_guard_row(b, rs, m, KW_M_QUALITY_COS, "", l->drift_min_cos);
    kw_guard_row(b, rs, m, KW_M_QUALITY_REL_RMS, "", l->drift_max_rel_rms);
    kw_guard_row(b, rs, m, KW_M_THROTTLE_PCT, "", l->max_throttle_pct);
    kw_guard_row(b, rs, m, KW_M_FALLBACK_PCT, "", l->max_fallback_pct);
    if (l->sla_p99_us > 0)
        kw_guard_row(b, rs, m, KW_M_P99_US, " (SLA)", l->sla_p99_us);
    kw_sbuf_printf(b, "<tr><td class=\"l\">saturated (arrivals beyond capacity)</td><td>%s</td><td>no</td>"
                      "<td class=\"%s\">%s</td></tr>\n", kw_guards_saturated(m->guards) ? "yes" : "no",
                   kw_guards_saturated(m->guards) ? "fail" : "pass",
                   kw_guards_saturated(m->guards) ? "FAIL" : "pass");
    /* the ceilings against the figures they are derived from (the headline:
     * the re-check where the run made one; until stop 43 the search's
     * sample, which on a bursty shape lay far below the re-checked ceiling) */
    kw_headline h;
    kw_results_headline(&h, rs, si, s->final);
    char src[96], why[160];
    kw_results_basis_words(src, sizeof src, &h);
    snprintf(why, sizeof why, " (rollback ceiling; at %s)", src);
    kw_guard_row(b, rs, h.m, KW_M_P95_US, why, rb.p95_ceiling_us);
    kw_guard_row(b, rs, h.m, KW_M_P99_US, why, rb.p99_ceiling_us);
    /* continuous batching: what a serving engineer watches beside the
     * request latency, against the space's SLAs and the rollback's ceilings */
    if (kw_results_llm(rs, h.m)) {
        if (l->sla_ttft_p99_us > 0)
            kw_guard_row(b, rs, h.m, KW_M_TTFT_P99_US, " (SLA)", l->sla_ttft_p99_us);
        if (l->sla_tpot_p99_us > 0)
            kw_guard_row(b, rs, h.m, KW_M_TPOT_P99_US, " (SLA)", l->sla_tpot_p99_us);
        kw_guard_row(b, rs, h.m, KW_M_TTFT_P99_US, why, rb.ttft_ceiling_us);
        kw_guard_row(b, rs, h.m, KW_M_TPOT_P99_US, why, rb.tpot_ceiling_us);
    }
    kw_sbuf_printf(b, "</table>\n<p class=\"note\">Roll back to %016llx (previous on the accepted path) or "
                      "the baseline %016llx. Owner: ",
                   (unsigned long long)s->configs[rb.parent].id,
                   (unsigned long long)s->configs[s->baseline].id);
    kw_sbuf_html(b, rs->info.owner[0] ? rs->info.owner : "unassigned");
    kw_sbuf_puts(b, ".</p>\n");
    if (kw_runsum_winner(rs, si) != s->final)
        return; /* nothing to deploy: no claim to disprove */
    /* results.xml's criteria, from the one function that writes them there */
    kw_sbuf crit = {0};
    if (kw_results_disproof(&crit, rs, si, s->final) != 0) {
        b->failed = 1; /* out of memory: the report fails, never shrinks */
        kw_sbuf_free(&crit);
        return;
    }
    kw_sbuf_puts(b, "<p class=\"note\">The claim is disproved, and the mapping rolled back, when:</p>\n"
                    "<ul class=\"disproof\">\n");
    for (size_t o = 0; o < crit.len; o += strlen(kw_sbuf_cstr(&crit) + o) + 1) {
        kw_sbuf_puts(b, "<li>");
        kw_sbuf_html(b, kw_sbuf_cstr(&crit) + o);
        kw_sbuf_puts(b, "</li>\n");
    }
    kw_sbuf_puts(b, "</ul>\n");
    kw_sbuf_free(&crit);
    kw_unearned *ue = calloc((size_t)(rs->ks.n_knobs > 0 ? rs->ks.n_knobs : 1), sizeof *ue);
    int n_ue = ue ? kw_netpath_unearned(ue, rs, si, s->final) : 0;
    if (!ue)
        b->failed = 1;
    if (n_ue > 0) {
        char t[2048];
        kw_netpath_unearned_text(t, sizeof t, rs, si, s->final, ue, n_ue);
        kw_sbuf_printf(b, "<p class=\"note unearned\">Already met for %d of its %d changes, which do "
                          "not earn their place: ", n_ue,
                       kw_knobs_cand_distance(&rs->ks, &s->configs[s->baseline].cand,
                                              &s->configs[s->final].cand));
        kw_sbuf_html(b, t);
        kw_sbuf_puts(b, ".</p>\n");
    }
    free(ue);
}

/* "FROM &rarr; TO[unit] (+P%)": a figure's change, 3 decimals each. */
static void kw_report_change(kw_sbuf *b, double from, double to, const char *unit)
{
    kw_n(b, from, 3);
    kw_sbuf_puts(b, " &rarr; ");
    kw_n(b, to, 3);
    kw_sbuf_printf(b, "%s (", unit);
    kw_pct(b, from > 0 ? (to - from) / from * 100.0 : NAN);
    kw_sbuf_puts(b, ")");
}

/* A continuous-batching shape's TTFT and TPOT p99, baseline -> recommended
 * from the headline's source (kw_results_llm; nothing on other shapes). */
static void kw_report_llm_figures(kw_sbuf *b, const kw_runsum *rs, const kw_metrics *m,
                                  const kw_metrics *base)
{
    if (!kw_results_llm(rs, m) || !base || !kw_results_llm(rs, base))
        return;
    const int id[2] = {KW_M_TTFT_P99_US, KW_M_TPOT_P99_US};
    for (int i = 0; i < 2; i++) {
        double v = kw_runsum_value(rs, m, KW_METRIC_NAME(id[i]));
        double bv = kw_runsum_value(rs, base, KW_METRIC_NAME(id[i]));
        kw_sbuf_printf(b, "; %s p99 ", i ? "TPOT" : "TTFT");
        kw_report_change(b, bv, v, " us");
    }
}

static void kw_summary_table(kw_sbuf *b, const kw_runsum *rs)
{
    int p = rs->primary;
    kw_sbuf_printf(b, "<table class=\"summary\"><tr><th class=\"l\">shape</th><th>baseline %s</th>"
                      "<th>recommended</th><th>change</th><th class=\"l\">figures from</th>"
                      "<th>knobs changed</th><th>evaluations</th>"
                      "<th class=\"l\">bottleneck</th><th class=\"l\">portable</th></tr>\n",
                   rs->metric_names[p]);
    for (int i = 0; i < rs->n_shapes; i++) {
        const kw_rs_shape *s = &rs->shapes[i];
        kw_sbuf_puts(b, "<tr><td class=\"l\"><a href=\"#shape-");
        kw_sbuf_html(b, s->name);
        kw_sbuf_puts(b, "\">");
        kw_sbuf_html(b, s->name);
        kw_sbuf_puts(b, "</a></td>");
        if (s->baseline < 0 || s->final < 0) {
            kw_sbuf_puts(b, "<td colspan=\"8\" class=\"l\">no guard-passing result</td></tr>\n");
            continue;
        }
        const kw_rs_config *B = &s->configs[s->baseline], *F = &s->configs[s->final];
        /* the headline (kw_results_headline: the re-check where the run made
         * one), the search's sample beside it */
        kw_headline h;
        kw_results_headline(&h, rs, i, s->final);
        int hl = h.basis == KW_BASIS_RECHECK && h.base && kw_runsum_winner(rs, i) >= 0;
        double base = hl ? h.base->v[p] : B->m.v[p], fin = hl ? h.m->v[p] : F->m.v[p];
        kw_sbuf_puts(b, "<td>");
        if (kw_saturated(B))
            kw_sbuf_puts(b, "saturated");
        else
            kw_n(b, base, 3);
        if (kw_runsum_winner(rs, i) < 0) { /* the best evaluated fails a guard, as every other */
            kw_sbuf_puts(b, "</td><td colspan=\"7\" class=\"l\"><span class=\"fail\">none: no "
                            "configuration evaluated passes the guards</span> (the best fails ");
            kw_sbuf_html(b, F->m.guards);
            kw_sbuf_puts(b, ")</td></tr>\n");
            continue;
        }
        kw_sbuf_puts(b, "</td><td>");
        kw_n(b, fin, 3);
        kw_sbuf_puts(b, "</td><td>");
        if (kw_saturated(B))
            kw_sbuf_puts(b, "from saturated");
        else
            kw_pct(b, base > 0 ? (fin - base) / base * 100.0 : NAN);
        char src[96];
        kw_results_basis_words(src, sizeof src, &h);
        kw_sbuf_puts(b, "</td><td class=\"l\">");
        kw_sbuf_html(b, src);
        if (hl) { /* the search's own figures, which ranked it */
            double sb = B->m.v[p], sf = F->m.v[p];
            kw_sbuf_puts(b, "; the search's sample: ");
            kw_report_change(b, sb, sf, "");
        }
        kw_report_llm_figures(b, rs, h.m, h.base);
        kw_sbuf_printf(b, "</td><td>%d</td><td>%ld", kw_knobs_cand_distance(&rs->ks, &B->cand, &F->cand),
                       s->evals_total - s->remeasured);
        if (s->remeasured > 0) /* the audit's split (kw_netpath_explore_line) */
            kw_sbuf_printf(b, " + %ld measurement-only", s->remeasured);
        kw_sbuf_puts(b, "</td><td class=\"l\">");
        kw_sbuf_html(b, B->m.klass);
        kw_sbuf_puts(b, " &rarr; ");
        kw_sbuf_html(b, F->m.klass);
        kw_sbuf_puts(b, "</td><td class=\"l\">");
        if (rs->port) {
            kw_rollback rb;
            kw_results_rollback(&rb, rs, i, s->final);
            if (rb.n_worse == 0 && rb.n_unmeasured == 0)
                kw_sbuf_puts(b, "<span class=\"pass\">yes</span>");
            else if (rb.n_worse > 0) {
                kw_sbuf_puts(b, "<span class=\"fail\">no:</span> worse on");
                for (int k = 0; k < rb.n_worse; k++) {
                    kw_sbuf_puts(b, " ");
                    kw_sbuf_html(b, rs->shapes[rb.worse[k]].name);
                }
            }
            if (rb.n_unmeasured > 0) {
                kw_sbuf_puts(b, rb.n_worse > 0 ? "; not measured on" : "not measured on");
                for (int k = 0; k < rb.n_unmeasured; k++) {
                    kw_sbuf_puts(b, " ");
                    kw_sbuf_html(b, rs->shapes[rb.unmeasured[k]].name);
                }
            }
        } else {
            kw_sbuf_puts(b, "not checked");
        }
        kw_sbuf_puts(b, "</td></tr>\n");
    }
    kw_sbuf_puts(b, "</table>\n");
}

/* Knobs whose neighbours of every shape's recommendation changed nothing. */
static void kw_inert_note(kw_sbuf *b, const kw_runsum *rs)
{
    int n = rs->ks.n_knobs, measured[KW_KNOB_MAX], inert[KW_KNOB_MAX];
    if (kw_netpath_knob_effects(measured, inert, rs) != 0) {
        b->failed = 1; /* out of memory: the report fails rather than lose the note (fault sweep) */
        return;
    }
    kw_sbuf list = {0};
    for (int k = 0; k < n; k++)
        if (measured[k] > 0 && inert[k] == measured[k])
            kw_sbuf_printf(&list, "%s%s", list.len ? ", " : "", rs->ks.knobs[k].name);
    if (list.failed)
        b->failed = 1;
    kw_sbuf_puts(b, "<p class=\"inert\">Knobs with no effect on any shape (every evaluated neighbour of "
                    "each recommendation identical): ");
    kw_sbuf_html(b, list.len ? kw_sbuf_cstr(&list) : "none");
    kw_sbuf_puts(b, ".</p>\n");
    kw_sbuf_free(&list);
}

/* ---------------------------------------------------------------- page */

int kw_report_html_lat(kw_sbuf *out, const kw_runsum *rs, const kw_report_lat *lat)
{
    return kw_report_html_notes(out, rs, lat, NULL);
}

int kw_report_html_notes(kw_sbuf *out, const kw_runsum *rs, const kw_report_lat *lat,
                         char *const *ranking_notes)
{
    kw_sbuf_puts(out, "<!DOCTYPE html>\n<!-- " KW_REPORT_MARK " -->\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                      "<meta name=\"viewport\" content=\"width=device-width\">\n<title>knobwise run ");
    kw_sbuf_html(out, rs->info.run_id);
    kw_sbuf_printf(out, "</title>\n<style>%s</style></head><body>\n<h1>knobwise run ", kw_css);
    kw_sbuf_html(out, rs->info.run_id);
    kw_sbuf_puts(out, "</h1>\n<p>Space ");
    kw_sbuf_html(out, rs->info.space);
    kw_sbuf_printf(out, ", %s search, primary metric %s (lower is better), seed %llu, minimum effect ",
                   rs->info.strategy[0] ? rs->info.strategy : "ofat", rs->metric_names[rs->primary],
                   (unsigned long long)rs->info.seed);
    kw_n(out, rs->limits.min_effect_pct, 2);
    kw_sbuf_puts(out, "%. Owner: ");
    kw_sbuf_html(out, rs->info.owner[0] ? rs->info.owner : "unassigned");
    kw_sbuf_puts(out, ". Every step changed exactly one knob; <code>knobwise audit</code> prints the net path, "
                      "<code>knobwise audit --exploration</code> every step.</p>\n");
    if (rs->info.evidence_missing[0]) { /* a finished search is not a finished run */
        kw_sbuf_puts(out, "<p><strong>Evidence not made:</strong> the search finished, but the run "
                          "was stopped before its evidence was made (");
        kw_sbuf_html(out, rs->info.evidence_missing);
        kw_sbuf_puts(out, "): the recommendations have no re-check at the final sample and long "
                          "thermal window, and fewer disproof criteria; they rest on the search "
                          "alone (<code>knobwise tune --resume</code> makes the evidence).</p>\n");
    }
    kw_sbuf_puts(out, "<section class=\"summary\"><h2>Recommendations</h2>\n");
    kw_summary_table(out, rs);
    kw_inert_note(out, rs);
    kw_sbuf_puts(out, "</section>\n");
    if (rs->port) {
        kw_sbuf_puts(out, "<section class=\"portability\"><h2>Portability</h2>\n");
        kw_plot_portability(out, rs);
        kw_sbuf_puts(out, "</section>\n");
    }
    int rc = 0;
    for (int i = 0; i < rs->n_shapes && rc == 0; i++) {
        const kw_rs_shape *s = &rs->shapes[i];
        kw_sbuf_puts(out, "<section class=\"shape\"><h2 id=\"shape-");
        kw_sbuf_html(out, s->name);
        kw_sbuf_puts(out, "\">Shape ");
        kw_sbuf_html(out, s->name);
        kw_sbuf_puts(out, "</h2>\n");
        if (s->stopped && rs->info.live) /* no D record yet: a tune is writing the run */
            kw_sbuf_puts(out, "<p><strong>Running:</strong> the run is still running (a tune holds "
                              "its lock) and this shape's search has not finished; its "
                              "recommendation and net path are the best so far (make the report "
                              "again when the run has finished).</p>\n");
        else if (s->stopped) /* no D record (kw_rs_shape): the best so far, said first */
            kw_sbuf_puts(out, "<p><strong>Stopped:</strong> the run was stopped before this "
                              "shape's search finished; its recommendation and net path are the "
                              "best so far (<code>knobwise tune --resume</code> finishes it).</p>\n");
        if (s->baseline < 0 || s->final < 0) {
            kw_sbuf_puts(out, "<p>No guard-passing result for this shape.</p></section>\n");
            continue;
        }
        kw_netpath np;
        if ((rc = kw_netpath_build(&np, rs, i)) != 0)
            break;
        kw_explore_sum e;
        char line[1024];
        kw_netpath_explore_sum(&e, rs, i, &np);
        kw_netpath_explore_line(line, sizeof line, rs, &e);
        if (kw_runsum_winner(rs, i) < 0) {
            kw_sbuf_puts(out, "<h3>Nothing to deploy</h3>\n<p class=\"fail\">No configuration "
                              "evaluated for this shape passes the guards (nor does the "
                              "baseline): relax a guard or widen the space. Below, for diagnosis, the best evaluated, which fails ");
            kw_sbuf_html(out, s->configs[s->final].m.guards);
            kw_sbuf_puts(out, ".</p>\n");
        } else {
            kw_sbuf_puts(out, "<h3>The mapping to deploy</h3>\n");
            if (ranking_notes && ranking_notes[i]) { /* results.xml <shape ranking_note> */
                kw_sbuf_puts(out, "<p class=\"fail\"><strong>Ranking:</strong> ");
                kw_sbuf_html(out, ranking_notes[i]);
                kw_sbuf_puts(out, ".</p>\n");
            }
        }
        kw_mapping_table(out, rs, s, kw_runsum_winner(rs, i) < 0 ? "best evaluated" : "deploy");
        kw_sbuf_puts(out, "<p class=\"exploration\">Exploration: ");
        kw_sbuf_html(out, line);
        kw_sbuf_puts(out, ".</p>\n<h3>Net path: each shipped one-knob step (baseline &rarr; recommendation)</h3>\n");
        /* the sample its bars come from: the search's, which the summary's
         * re-checked figures above are not (2599.3 us against 2627.4 on
         * the default job's attn_prefill_s128_b8_c4) */
        {
            kw_headline sh = {rs->info.measured ? KW_BASIS_MEASURED : KW_BASIS_SEARCH, NULL, NULL, 0};
            int ks = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_SAMPLES));
            double nq = ks >= 0 ? s->configs[s->baseline].m.v[ks] : NAN;
            sh.requests = isfinite(nq) && nq > 0 ? lround(nq) : 0;
            char src[96];
            kw_results_basis_words(src, sizeof src, &sh);
            kw_sbuf_printf(out, "<p class=\"note\">%s at ", rs->metric_names[rs->primary]);
            kw_sbuf_html(out, src);
            kw_sbuf_puts(out, ", as audit's net path.</p>\n");
        }
        kw_plot_waterfall(out, rs, i, &np);
        kw_sbuf_puts(out, "<h3>Convergence</h3>\n");
        kw_plot_convergence(out, rs, i, &np);
        kw_sbuf_puts(out, "<h3>Latency distribution and effect by knob family</h3>\n<div class=\"row\"><div>");
        kw_plot_cdf(out, rs, i, lat ? &lat->base[i] : NULL, lat ? &lat->rec[i] : NULL);
        kw_sbuf_puts(out, "</div><div>");
        kw_plot_families(out, rs, i, &np);
        kw_sbuf_puts(out, "</div></div>\n<p class=\"note\">Latency: the cumulative distribution of the "
                          "requests the model's serving simulation gives each configuration with the run's "
                          "inputs, seed and sample (the journal keeps percentiles, not requests)");
        /* which sample: the search's, not the re-check the summary leads with */
        int nlat = lat ? lat->base[i].n : 0;
        if (nlat > 0 && rs->limits.final_requests > 0 && rs->limits.final_requests != nlat)
            kw_sbuf_printf(out, ": %d requests, the search's sample; the figures above are the "
                           "re-check's at %d where the run made one", nlat, rs->limits.final_requests);
        else if (nlat > 0)
            kw_sbuf_printf(out, ": %d requests", nlat);
        kw_sbuf_puts(out, ".</p>\n<h3>Sensitivity around the recommendation</h3>\n");
        kw_plot_sensitivity(out, rs, i);
        kw_sens sn[KW_KNOB_MAX];
        if (rs->info.noisy && kw_netpath_sensitivity(sn, rs, i) == 0) { /* as the audit says it */
            char note[600];
            kw_netpath_sens_note(note, sizeof note, rs, sn, rs->ks.n_knobs, "bar");
            note[0] = 'A';
            kw_sbuf_puts(out, "<p class=\"note\">");
            kw_sbuf_html(out, note);
            kw_sbuf_puts(out, ".</p>\n");
            int unmeasured = 0;
            char why[KW_GUARDS_LEN + 20];
            for (int k = 0; k < rs->ks.n_knobs; k++)
                for (int d = 0; d < 2; d++)
                    unmeasured |= kw_netpath_sens_unmeasured(why, sizeof why, rs, &sn[k].side[d]);
            if (unmeasured) { /* the audit's note, capitalised as the one above */
                kw_sbuf_puts(out, "<p class=\"note\">N");
                kw_sbuf_html(out, KW_NETPATH_UNMEASURED_NOTE + 1);
                kw_sbuf_puts(out, ".</p>\n");
            }
        }
        kw_sbuf_puts(out, "<h3>Guards and rollback</h3>\n");
        kw_guard_table(out, rs, i);
        kw_sbuf_puts(out, "</section>\n");
        kw_netpath_free(&np);
    }
    kw_sbuf_puts(out, "</body></html>\n");
    return rc != 0 ? rc : kw_sbuf_status(out);
}

int kw_report_html(kw_sbuf *out, const kw_runsum *rs) { return kw_report_html_lat(out, rs, NULL); }
