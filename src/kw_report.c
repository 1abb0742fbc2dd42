/* kw_report.c - the HTML report (see kw_report.h).
 *
 * Design choice: plain SVG drawn by hand, no charting library and no script,
 * so the file opens offline in any browser years later and the bytes depend
 * only on the run summary (fixed number formats, no timestamps). Every plot is
 * one function taking a box and a data series; scales are linear, ranges
 * padded by a fixed fraction. Every number drawn is also in a <title> (hover)
 * or a table, so nothing is only readable from a colour.
 */
#include <math.h>
#include <string.h>

#include "kw_audit.h"
#include "kw_report.h"
#include "kw_results.h"

#define KW_W 1080        /* plot width, px */
#define KW_H 300         /* plot height, px */
#define KW_ML 70         /* left margin (axis labels) */
#define KW_MR 20
#define KW_MT 20
#define KW_MB 40

static const char kw_css[] =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1120px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:36px;border-bottom:1px solid #ccc}"
    "h3{font-size:15px;margin-bottom:4px}"
    "table{border-collapse:collapse;font-size:12px;margin:8px 0}"
    "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}"
    "th{background:#f0f0f0}td.l,th.l{text-align:left}"
    ".fail{color:#c62828;font-weight:bold}.pass{color:#2e7d32}"
    "svg{background:#fff;border:1px solid #ddd;margin:4px 0}"
    "svg text{font-size:11px;font-family:sans-serif}"
    ".note{font-size:12px;color:#555}";

/* ---------------------------------------------------------------- helpers */

static void kw_n(kw_sbuf *b, double v, int d)
{
    char t[64];
    kw_fmt_num(t, sizeof t, v, d);
    kw_sbuf_puts(b, t[0] ? t : "-");
}

/* Linear map of v in [lo, hi] onto [a, b]. */
static double kw_map(double v, double lo, double hi, double a, double b)
{
    if (!(hi > lo))
        return (a + b) / 2;
    return a + (v - lo) / (hi - lo) * (b - a);
}

static void kw_svg_open(kw_sbuf *b, int w, int h, const char *label)
{
    kw_sbuf_printf(b, "<svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
                   w, h, w, h);
    kw_sbuf_html(b, label);
    kw_sbuf_puts(b, "\">\n");
}

/* A y axis with 5 ticks from lo to hi (values in unit) and a frame. */
static void kw_axis_y(kw_sbuf *b, double lo, double hi, const char *unit, int w, int h)
{
    int x0 = KW_ML, y0 = KW_MT, y1 = h - KW_MB;
    kw_sbuf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
                   x0, y0, w - KW_ML - KW_MR, y1 - y0);
    for (int i = 0; i <= 4; i++) {
        double v = lo + (hi - lo) * i / 4.0;
        double y = kw_map(v, lo, hi, y1, y0);
        kw_sbuf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>", x0,
                       w - KW_MR, y, y);
        kw_sbuf_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", x0 - 4, y + 4);
        kw_n(b, v, fabs(hi - lo) < 10 ? 2 : 0);
        kw_sbuf_puts(b, "</text>\n");
    }
    kw_sbuf_printf(b, "<text x=\"12\" y=\"%d\" transform=\"rotate(-90 12 %d)\" text-anchor=\"middle\">",
                   (y0 + y1) / 2, (y0 + y1) / 2);
    kw_sbuf_html(b, unit);
    kw_sbuf_puts(b, "</text>\n");
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

/* ---------------------------------------------------------------- plots */

/* Primary metric after every evaluated step; the incumbent as a line. */
static void kw_plot_convergence(kw_sbuf *b, const kw_runsum *rs, int si)
{
    const kw_rs_shape *s = &rs->shapes[si];
    int p = rs->primary;
    double lo = INFINITY, hi = -INFINITY;
    double base = s->configs[s->baseline].m.v[p];
    lo = hi = base;
    for (int i = 0; i < s->n_steps; i++) {
        int a = s->steps[i].after;
        if (a < 0 || s->configs[a].reps == 0 || !isfinite(s->configs[a].m.v[p]))
            continue;
        double v = s->configs[a].m.v[p];
        lo = fmin(lo, v);
        hi = fmax(hi, v);
    }
    /* cap the axis at 3x the baseline so one terrible step does not flatten the rest */
    if (hi > 3 * base)
        hi = 3 * base;
    double pad = (hi - lo) * 0.05 + 1e-9;
    lo -= pad;
    hi += pad;
    int w = KW_W, h = KW_H;
    int n = s->n_steps > 0 ? s->n_steps : 1;
    char label[160];
    snprintf(label, sizeof label, "convergence of %s on shape %s", rs->metric_names[p], s->name);
    kw_svg_open(b, w, h, label);
    kw_axis_y(b, lo, hi, rs->metric_names[p], w, h);
    double x0 = KW_ML + 6, x1 = w - KW_MR - 6, y0 = KW_MT, y1 = h - KW_MB;
    kw_sbuf_printf(b, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">step (%d)</text>\n",
                   (x0 + x1) / 2, h - 8, s->n_steps);
    /* incumbent line: baseline, then each path step */
    kw_sbuf_puts(b, "<polyline class=\"incumbent\" fill=\"none\" stroke=\"#1565c0\" stroke-width=\"2\" points=\"");
    double cur = base;
    kw_sbuf_printf(b, "%.1f,%.1f", x0, kw_map(fmin(cur, hi), lo, hi, y1, y0));
    for (int q = 0; q < s->n_path; q++) {
        int i = s->path[q];
        int a = s->steps[i].after;
        if (a < 0)
            continue;
        double x = kw_map(i + 1, 0, n, x0, x1);
        kw_sbuf_printf(b, " %.1f,%.1f", x, kw_map(fmin(cur, hi), lo, hi, y1, y0));
        cur = s->configs[a].m.v[p];
        kw_sbuf_printf(b, " %.1f,%.1f", x, kw_map(fmin(cur, hi), lo, hi, y1, y0));
    }
    kw_sbuf_printf(b, " %.1f,%.1f\"/>\n", x1, kw_map(fmin(cur, hi), lo, hi, y1, y0));
    for (int i = 0; i < s->n_steps; i++) {
        const kw_rs_step *st = &s->steps[i];
        int a = st->after;
        if (a < 0 || s->configs[a].reps == 0 || !isfinite(s->configs[a].m.v[p]))
            continue;
        double v = s->configs[a].m.v[p];
        double x = kw_map(i + 1, 0, n, x0, x1), y = kw_map(fmin(v, hi), lo, hi, y1, y0);
        int taken = kw_decision_taken(st->decision);
        int guard = s->configs[a].m.guards[0] != '\0';
        const char *col = taken ? "#2e7d32" : guard ? "#c62828" : "#9e9e9e";
        kw_sbuf_printf(b, "<circle class=\"step\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"><title>step %d %s: ",
                       x, y, taken ? 4 : 2, col, st->num, kw_decision_name(st->decision));
        kw_sbuf_html(b, kw_knob_name(rs, st->knob));
        kw_sbuf_puts(b, "=");
        kw_sbuf_html(b, kw_knob_val(rs, st->knob, &st->cand));
        kw_sbuf_puts(b, " ");
        kw_n(b, v, 3);
        kw_sbuf_puts(b, " us");
        if (guard) {
            kw_sbuf_puts(b, " guards ");
            kw_sbuf_html(b, s->configs[a].m.guards);
        }
        kw_sbuf_puts(b, "</title></circle>\n");
        if (taken && kw_decision_taken(st->decision) && st->knob >= 0) {
            kw_sbuf_printf(b, "<text class=\"knob\" x=\"%.1f\" y=\"%.1f\" transform=\"rotate(-30 %.1f %.1f)\">",
                           x + 4, y - 6, x + 4, y - 6);
            kw_sbuf_html(b, kw_knob_name(rs, st->knob));
            kw_sbuf_puts(b, "</text>\n");
        }
    }
    kw_sbuf_puts(b, "</svg>\n<p class=\"note\">Blue: the incumbent. Green: steps taken (labelled with their knob); "
                    "grey: rejected; red: refused by a guard. Values above 3x the baseline are drawn at the top.</p>\n");
}

/* Baseline bar, one floating bar per accepted step, the recommendation bar. */
static void kw_plot_waterfall(kw_sbuf *b, const kw_runsum *rs, int si)
{
    const kw_rs_shape *s = &rs->shapes[si];
    int p = rs->primary;
    double base = s->configs[s->baseline].m.v[p];
    int nb = s->n_path + 2;
    double lo = base, hi = base, cur = base;
    for (int q = 0; q < s->n_path; q++) {
        int a = s->steps[s->path[q]].after;
        if (a < 0)
            continue;
        cur = s->configs[a].m.v[p];
        lo = fmin(lo, cur);
        hi = fmax(hi, cur);
    }
    lo = fmin(0.0, lo);
    hi *= 1.08;
    int w = KW_W, h = KW_H + 60;
    char label[160];
    snprintf(label, sizeof label, "waterfall of %s on shape %s", rs->metric_names[p], s->name);
    kw_svg_open(b, w, h, label);
    kw_axis_y(b, lo, hi, rs->metric_names[p], w, h - 60);
    double x0 = KW_ML + 6, x1 = w - KW_MR - 6, y0 = KW_MT, y1 = h - 60 - KW_MB;
    double bw = (x1 - x0) / nb;
    cur = base;
    for (int i = 0; i < nb; i++) {
        double from, to;
        const char *col;
        char name[160];
        if (i == 0) {
            from = lo > 0 ? lo : 0;
            to = base;
            col = "#616161";
            snprintf(name, sizeof name, "baseline");
        } else if (i == nb - 1) {
            from = lo > 0 ? lo : 0;
            to = cur;
            col = "#1565c0";
            snprintf(name, sizeof name, "recommended");
        } else {
            const kw_rs_step *st = &s->steps[s->path[i - 1]];
            double next = st->after >= 0 ? s->configs[st->after].m.v[p] : cur;
            from = cur;
            to = next;
            cur = next;
            col = to <= from ? "#2e7d32" : "#c62828";
            snprintf(name, sizeof name, "%s=%s", kw_knob_name(rs, st->knob),
                     kw_knob_val(rs, st->knob, &st->cand));
        }
        double ya = kw_map(from, lo, hi, y1, y0), yb = kw_map(to, lo, hi, y1, y0);
        double top = fmin(ya, yb), ht = fabs(ya - yb);
        if (ht < 1)
            ht = 1;
        double x = x0 + i * bw + bw * 0.15;
        kw_sbuf_printf(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                       x, top, bw * 0.7, ht, col);
        kw_sbuf_html(b, name);
        kw_sbuf_puts(b, ": ");
        if (i == 0 || i == nb - 1)
            kw_n(b, to, 3);
        else {
            kw_sbuf_puts(b, to - from >= 0 ? "+" : "");
            kw_n(b, to - from, 3);
        }
        kw_sbuf_puts(b, " us</title></rect>\n");
        double tx = x + bw * 0.35, ty = y1 + 12;
        kw_sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" transform=\"rotate(-40 %.1f %.1f)\">",
                       tx, ty, tx, ty);
        kw_sbuf_html(b, name);
        kw_sbuf_puts(b, "</text>\n");
    }
    kw_sbuf_puts(b, "</svg>\n");
}

/* Grouped bars: p50/p95/p99/p99.9 of baseline and recommendation. */
static void kw_plot_latency(kw_sbuf *b, const kw_runsum *rs, int si)
{
    const kw_rs_shape *s = &rs->shapes[si];
    static const char *const names[] = {"p50_us", "p95_us", "p99_us", "p999_us"};
    static const char *const labels[] = {"p50", "p95", "p99", "p99.9"};
    const kw_metrics *bm = &s->configs[s->baseline].m, *rm = &s->configs[s->final].m;
    double hi = 0;
    for (int i = 0; i < 4; i++)
        hi = fmax(hi, fmax(kw_runsum_value(rs, bm, names[i]), kw_runsum_value(rs, rm, names[i])));
    if (!(hi > 0))
        hi = 1;
    hi *= 1.1;
    int w = 540, h = KW_H;
    char label[160];
    snprintf(label, sizeof label, "latency distribution on shape %s", s->name);
    kw_svg_open(b, w, h, label);
    kw_axis_y(b, 0, hi, "latency us", w, h);
    double x0 = KW_ML + 6, x1 = w - KW_MR - 6, y0 = KW_MT, y1 = h - KW_MB;
    double gw = (x1 - x0) / 4;
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < 2; k++) {
            double v = kw_runsum_value(rs, k ? rm : bm, names[i]);
            if (!isfinite(v))
                continue;
            double y = kw_map(v, 0, hi, y1, y0);
            double x = x0 + i * gw + gw * (0.15 + 0.35 * k);
            kw_sbuf_printf(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s %s ",
                           x, y, gw * 0.33, y1 - y, k ? "#1565c0" : "#9e9e9e",
                           k ? "recommended" : "baseline", labels[i]);
            kw_n(b, v, 3);
            kw_sbuf_puts(b, " us</title></rect>\n");
        }
        kw_sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                       x0 + i * gw + gw / 2, y1 + 16, labels[i]);
    }
    kw_sbuf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"#9e9e9e\"/>"
                      "<text x=\"%d\" y=\"%d\">baseline</text>"
                      "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"#1565c0\"/>"
                      "<text x=\"%d\" y=\"%d\">recommended</text>\n",
                   KW_ML + 10, KW_MT + 6, KW_ML + 24, KW_MT + 15, KW_ML + 100, KW_MT + 6,
                   KW_ML + 114, KW_MT + 15);
    kw_sbuf_puts(b, "</svg>\n");
}

/* Horizontal bars: effect of each knob family along the accepted path. */
static void kw_plot_families(kw_sbuf *b, const kw_runsum *rs, int si)
{
    double fe[KW_FAMILY_COUNT];
    int fn[KW_FAMILY_COUNT];
    kw_audit_family_effect(fe, fn, rs, si);
    double m = 1.0;
    for (int f = 0; f < KW_FAMILY_COUNT; f++)
        m = fmax(m, fabs(fe[f]));
    int w = 540, rowh = 28, h = KW_MT + KW_FAMILY_COUNT * rowh + 30;
    char label[160];
    snprintf(label, sizeof label, "effect by knob family on shape %s", rs->shapes[si].name);
    kw_svg_open(b, w, h, label);
    double xz = 300, half = 200; /* zero line and half width */
    kw_sbuf_printf(b, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n", xz, xz,
                   KW_MT - 4, h - 26);
    for (int f = 0; f < KW_FAMILY_COUNT; f++) {
        double y = KW_MT + f * rowh;
        double len = fe[f] / m * half;
        kw_sbuf_printf(b, "<text x=\"8\" y=\"%.0f\">%s (%d step%s)</text>", y + 15, kw_family_name((kw_family)f),
                       fn[f], fn[f] == 1 ? "" : "s");
        kw_sbuf_printf(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"18\" fill=\"%s\"><title>%s ",
                       len < 0 ? xz + len : xz, y + 2, fabs(len) < 0.5 ? 0.5 : fabs(len),
                       fe[f] <= 0 ? "#2e7d32" : "#c62828", kw_family_name((kw_family)f));
        kw_n(b, fe[f], 2);
        kw_sbuf_puts(b, "% of the baseline</title></rect>");
        kw_sbuf_printf(b, "<text x=\"%.0f\" y=\"%.0f\">", len < 0 ? xz + 6 : xz - 60, y + 15);
        kw_n(b, fe[f], 2);
        kw_sbuf_puts(b, "%</text>\n");
    }
    kw_sbuf_printf(b, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">%% of the baseline %s (negative = faster)</text>\n",
                   xz, h - 8, rs->metric_names[rs->primary]);
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
    int cell = 90, lw = 220, top = 150;
    int w = lw + n * cell + 140, h = top + n * 34 + 20; /* room for the last rotated label */
    kw_svg_open(b, w, h, "portability heat map");
    int p95 = kw_runsum_metric(rs, "p95_us");
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
            double best = rs->port_ok[j * n + j] && p95 >= 0 ? rs->port[j * n + j].v[p95] : NAN;
            double pct = ok && best > 0 ? (m->v[p95] - best) / best * 100.0 : NAN;
            const kw_rs_shape *sj = &rs->shapes[j];
            double base = sj->baseline >= 0 ? sj->configs[sj->baseline].m.v[rs->primary] : NAN;
            int worse = ok && i != j && (m->v[rs->primary] > base || m->guards[0]);
            char col[16];
            kw_heat(col, sizeof col, pct);
            kw_sbuf_printf(b, "<rect class=\"cell\" x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"30\" fill=\"%s\" stroke=\"%s\" stroke-width=\"%d\"><title>",
                           lw + j * cell, y, cell - 4, ok ? col : "#bdbdbd", worse ? "#000" : "#fff",
                           worse ? 3 : 1);
            kw_sbuf_html(b, rs->shapes[i].name);
            kw_sbuf_puts(b, " on ");
            kw_sbuf_html(b, sj->name);
            kw_sbuf_puts(b, ": ");
            if (ok) {
                kw_n(b, m->v[p95], 3);
                kw_sbuf_puts(b, " us, ");
                kw_n(b, pct, 2);
                kw_sbuf_puts(b, "% vs best");
            }
            if (m->guards[0]) {
                kw_sbuf_puts(b, ", guards ");
                kw_sbuf_html(b, m->guards);
            }
            if (worse)
                kw_sbuf_puts(b, ", worse than that shape's baseline");
            kw_sbuf_printf(b, "</title></rect><text x=\"%d\" y=\"%.0f\" text-anchor=\"middle\" fill=\"#fff\">",
                           lw + j * cell + (cell - 4) / 2, y + 19);
            if (ok) {
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
                    "cell: its p95 against that shape's own winner. A black frame and '!' mark a winner that "
                    "is worse than that shape's baseline there or fails a guard.</p>\n");
}

/* ---------------------------------------------------------------- tables */

static void kw_guard_row(kw_sbuf *b, const char *name, double v, double limit, int at_least, int d)
{
    int pass = isfinite(v) && (at_least ? v >= limit : v <= limit);
    kw_sbuf_printf(b, "<tr><td class=\"l\">%s</td><td>", name);
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
    kw_guard_row(b, "quality_cos", kw_runsum_value(rs, m, "quality_cos"), l->drift_min_cos, 1, 6);
    kw_guard_row(b, "quality_rel_rms", kw_runsum_value(rs, m, "quality_rel_rms"), l->drift_max_rel_rms, 0, 6);
    kw_guard_row(b, "throttle_pct", kw_runsum_value(rs, m, "throttle_pct"), l->max_throttle_pct, 0, 3);
    kw_guard_row(b, "fallback_pct", kw_runsum_value(rs, m, "fallback_pct"), l->max_fallback_pct, 0, 3);
    if (l->sla_p99_us > 0)
        kw_guard_row(b, "p99_us (SLA)", kw_runsum_value(rs, m, "p99_us"), l->sla_p99_us, 0, 3);
    kw_guard_row(b, "p95_us (rollback ceiling)", kw_runsum_value(rs, m, "p95_us"), rb.p95_ceiling_us, 0, 3);
    kw_guard_row(b, "p99_us (rollback ceiling)", kw_runsum_value(rs, m, "p99_us"), rb.p99_ceiling_us, 0, 3);
    kw_sbuf_printf(b, "</table>\n<p class=\"note\">Roll back to %016llx (previous on the accepted path) or "
                      "the baseline %016llx. Owner: ",
                   (unsigned long long)s->configs[rb.parent].id,
                   (unsigned long long)s->configs[s->baseline].id);
    kw_sbuf_html(b, rs->info.owner[0] ? rs->info.owner : "unassigned");
    kw_sbuf_puts(b, ".</p>\n");
}

static void kw_summary_table(kw_sbuf *b, const kw_runsum *rs)
{
    int p = rs->primary;
    kw_sbuf_printf(b, "<table class=\"summary\"><tr><th class=\"l\">shape</th><th>baseline %s</th>"
                      "<th>recommended</th><th>change</th><th>knobs changed</th><th>steps</th>"
                      "<th>accepted</th><th class=\"l\">bottleneck</th><th class=\"l\">portable</th></tr>\n",
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
        double base = s->configs[s->baseline].m.v[p], fin = s->configs[s->final].m.v[p];
        kw_sbuf_puts(b, "<td>");
        kw_n(b, base, 3);
        kw_sbuf_puts(b, "</td><td>");
        kw_n(b, fin, 3);
        kw_sbuf_puts(b, "</td><td>");
        kw_n(b, base > 0 ? (fin - base) / base * 100.0 : NAN, 2);
        kw_sbuf_printf(b, "%%</td><td>%d</td><td>%d</td><td>%d</td><td class=\"l\">",
                       kw_cand_distance(&rs->ks, &s->configs[s->baseline].cand, &s->configs[s->final].cand),
                       s->n_steps, s->n_path);
        kw_sbuf_html(b, s->configs[s->baseline].m.klass);
        kw_sbuf_puts(b, " &rarr; ");
        kw_sbuf_html(b, s->configs[s->final].m.klass);
        kw_sbuf_puts(b, "</td><td class=\"l\">");
        if (rs->port) {
            kw_rollback rb;
            kw_results_rollback(&rb, rs, i, s->final);
            if (rb.n_worse == 0)
                kw_sbuf_puts(b, "<span class=\"pass\">yes</span>");
            else {
                kw_sbuf_puts(b, "<span class=\"fail\">no:</span> worse on");
                for (int k = 0; k < rb.n_worse; k++) {
                    kw_sbuf_puts(b, " ");
                    kw_sbuf_html(b, rs->shapes[rb.worse[k]].name);
                }
            }
        } else {
            kw_sbuf_puts(b, "not checked");
        }
        kw_sbuf_puts(b, "</td></tr>\n");
    }
    kw_sbuf_puts(b, "</table>\n");
}

static void kw_changes_table(kw_sbuf *b, const kw_runsum *rs, int si)
{
    const kw_rs_shape *s = &rs->shapes[si];
    kw_sbuf_puts(b, "<table class=\"changes\"><tr><th>step</th><th class=\"l\">decision</th>"
                    "<th class=\"l\">family</th><th class=\"l\">knob</th><th class=\"l\">old &rarr; new</th>"
                    "<th>effect</th><th class=\"l\">bottleneck</th></tr>\n");
    for (int q = 0; q < s->n_path; q++) {
        int i = s->path[q];
        const kw_rs_step *st = &s->steps[i];
        kw_sbuf_printf(b, "<tr><td>%d</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">",
                       st->num, kw_decision_name(st->decision),
                       kw_family_name(kw_knob_family(kw_knob_name(rs, st->knob))));
        kw_sbuf_html(b, kw_knob_name(rs, st->knob));
        kw_sbuf_puts(b, "</td><td class=\"l\">");
        kw_sbuf_html(b, kw_knob_val(rs, st->knob, &st->parent));
        kw_sbuf_puts(b, " &rarr; ");
        kw_sbuf_html(b, kw_knob_val(rs, st->knob, &st->cand));
        kw_sbuf_puts(b, "</td><td>");
        kw_n(b, kw_runsum_step_effect(rs, si, i, rs->primary), 2);
        kw_sbuf_puts(b, "%</td><td class=\"l\">");
        if (st->before >= 0)
            kw_sbuf_html(b, s->configs[st->before].m.klass);
        kw_sbuf_puts(b, " &rarr; ");
        if (st->after >= 0)
            kw_sbuf_html(b, s->configs[st->after].m.klass);
        kw_sbuf_puts(b, "</td></tr>\n");
    }
    kw_sbuf_puts(b, "</table>\n");
}

/* ---------------------------------------------------------------- page */

int kw_report_html(kw_sbuf *out, const kw_runsum *rs)
{
    kw_sbuf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>knobwise run ");
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
    kw_sbuf_puts(out, ". Every step changed exactly one knob; <code>knobwise audit</code> prints them.</p>\n");
    kw_sbuf_puts(out, "<h2>Recommendations</h2>\n");
    kw_summary_table(out, rs);
    if (rs->port) {
        kw_sbuf_puts(out, "<h2>Portability</h2>\n");
        kw_plot_portability(out, rs);
    }
    for (int i = 0; i < rs->n_shapes; i++) {
        const kw_rs_shape *s = &rs->shapes[i];
        kw_sbuf_puts(out, "<h2 id=\"shape-");
        kw_sbuf_html(out, s->name);
        kw_sbuf_puts(out, "\">Shape ");
        kw_sbuf_html(out, s->name);
        kw_sbuf_puts(out, "</h2>\n");
        if (s->baseline < 0 || s->final < 0) {
            kw_sbuf_puts(out, "<p>No guard-passing result for this shape.</p>\n");
            continue;
        }
        kw_sbuf_puts(out, "<h3>Convergence</h3>\n");
        kw_plot_convergence(out, rs, i);
        kw_sbuf_puts(out, "<h3>Contribution of each accepted step (baseline &rarr; recommendation)</h3>\n");
        kw_plot_waterfall(out, rs, i);
        kw_changes_table(out, rs, i);
        kw_sbuf_puts(out, "<h3>Latency distribution and effect by knob family</h3>\n<div>");
        kw_plot_latency(out, rs, i);
        kw_plot_families(out, rs, i);
        kw_sbuf_puts(out, "</div>\n<h3>Guards and rollback</h3>\n");
        kw_guard_table(out, rs, i);
    }
    kw_sbuf_puts(out, "</body></html>\n");
    return kw_sbuf_status(out);
}
