/* kw_progline.c - `knobwise tune`'s progress text (see kw_progline.h).
 *
 * Design choice: the line is a list of whole fields with a priority each, and
 * a field that does not fit is dropped, never cut: the old line was one
 * snprintf cut at 118 columns, which chopped the ETA (the one figure a person
 * checking an overnight job wants) off first. Fields are chosen greedily in
 * priority order (each kept only if the line still fits, with room reserved
 * for the "+N more running" marker of shapes left out) and printed in reading
 * order.
 *
 * Every tuned shape is in the line while it runs (OFAT, random and exhaustive
 * all advance every unfinished shape each round), so there is no "shape 1/5"
 * that hides four running shapes. Evaluations are labelled: "evals N total"
 * for the run, "N/~E" per shape (E: the engine's estimate at convergence, see
 * kw_progress_shape.evals_est; "/B" when the budget is the bound).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kw_guards.h"
#include "kw_progline.h"

#define KW_PL_FIELD_LEN 160   /* one field's text */
#define KW_PL_FIELDS_MAX 80   /* fixed fields + one per shape (KW_JOURNAL_SHAPE_MAX is 64) */
#define KW_PL_SEP "  "
#define KW_PL_SEP_LEN 2
#define KW_PL_MORE_RESERVE 20 /* "+NN more running" and its separator */
#define KW_PL_PRIO_RESERVE 3  /* fields of this priority and less important make room for it */

typedef struct kw_pl_field {
    char text[KW_PL_FIELD_LEN];
    int prio;                 /* 0 = kept longest */
    int shape;                /* 1 for a per-shape field (counted in "+N more") */
    int keep;
} kw_pl_field;

void kw_progline_duration(char *buf, size_t size, double s)
{
    if (!(s >= 0) || !isfinite(s))
        snprintf(buf, size, "-");
    else if (s < 60)
        snprintf(buf, size, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, size, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else if (s < 99 * 3600.0)
        snprintf(buf, size, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    else
        snprintf(buf, size, "%.0fh", s / 3600);
}

int kw_progline_width(int fd)
{
    int w = 0;
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        w = ws.ws_col;
    if (w <= 0) {
        const char *c = getenv("COLUMNS");
        char *end;
        long v = c ? strtol(c, &end, 10) : 0;
        if (c && end != c && *end == '\0' && v > 0 && v <= KW_PROGLINE_WIDTH_MAX)
            w = (int)v;
    }
    if (w <= 0)
        w = KW_PROGLINE_WIDTH_DEFAULT;
    if (w < KW_PROGLINE_WIDTH_MIN)
        w = KW_PROGLINE_WIDTH_MIN;
    if (w > KW_PROGLINE_WIDTH_MAX)
        w = KW_PROGLINE_WIDTH_MAX;
    return w;
}

int kw_progline_rows(int fd)
{
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
        return ws.ws_row;
    const char *c = getenv("LINES");
    char *end;
    long v = c ? strtol(c, &end, 10) : 0;
    return c && end != c && *end == '\0' && v > 0 && v <= KW_PROGLINE_WIDTH_MAX ? (int)v : 0;
}

static double kw_pl_pct(double best, double base)
{
    return base != 0 && isfinite(best) && isfinite(base) ? (best - base) / base * 100.0 : 0.0;
}

/* The change a shape's best made, as the results tables print it: a
 * percentage, or "saturated" / "from saturated" where one side cannot keep up
 * with its arrivals (a percentage of an unbounded backlog means nothing). */
static const char *kw_pl_change(char *buf, size_t size, const kw_progress_shape *s)
{
    const char *sat = kw_guards_saturation(s->baseline_guards, s->best_guards);
    if (sat)
        snprintf(buf, size, "%s", sat);
    else
        snprintf(buf, size, "%+.1f%%", kw_pl_pct(s->best_primary, s->baseline_primary));
    return buf;
}

/* A running shape's "/~E" (its estimate at convergence), "/B" (the budget
 * bounds it) or "/>=E" (before any first optimum: a lower bound), "" when
 * the strategy gives none. */
static void kw_pl_of(char *of, size_t n, const kw_progress *p, const kw_progress_shape *s)
{
    of[0] = '\0';
    if (s->evals_est >= 0 && p->budget > 0 && s->evals_est >= p->budget)
        snprintf(of, n, "/%ld", p->budget);
    else if (s->evals_est >= 0)
        snprintf(of, n, "/%s%ld", s->evals_est_bound ? ">=" : "~", s->evals_est);
}

static const char *kw_pl_name(const char *const *names, int shape)
{
    return names && shape >= 0 && names[shape] ? names[shape] : "?";
}

static kw_pl_field *kw_pl_add(kw_pl_field *f, int *n, int prio, int shape, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static kw_pl_field *kw_pl_add(kw_pl_field *f, int *n, int prio, int shape, const char *fmt, ...)
{
    if (*n >= KW_PL_FIELDS_MAX)
        return NULL;
    kw_pl_field *x = &f[(*n)++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->text, sizeof x->text, fmt, ap);
    va_end(ap);
    x->prio = prio;
    x->shape = shape;
    x->keep = 0;
    return x;
}

/* Keep fields greedily by priority within width; write the kept ones in order. */
static size_t kw_pl_layout(char *buf, size_t size, kw_pl_field *f, int n, int width)
{
    size_t limit = (size_t)width;
    if (size == 0)
        return 0;
    if (limit > size - 1)
        limit = size - 1;
    int n_shape = 0;
    for (int i = 0; i < n; i++)
        n_shape += f[i].shape;
    size_t used = 0;
    int kept = 0, kept_shape = 0;
    for (int prio = 0; prio <= KW_PL_FIELDS_MAX * 2; prio++)
        for (int i = 0; i < n; i++) {
            if (f[i].prio != prio)
                continue;
            size_t add = strlen(f[i].text) + (kept ? KW_PL_SEP_LEN : 0);
            int shapes_left = n_shape - kept_shape - f[i].shape;
            /* the essential fields never give way to the marker, which is
             * then shown only where it fits */
            size_t reserve = 0;
            if (shapes_left > 0 && prio >= KW_PL_PRIO_RESERVE) {
                char more[KW_PL_MORE_RESERVE + 1];
                reserve = (size_t)snprintf(more, sizeof more, "+%d more running", shapes_left) +
                          KW_PL_SEP_LEN;
            }
            if (used + add + reserve <= limit) {
                f[i].keep = 1;
                used += add;
                kept++;
                kept_shape += f[i].shape;
            }
        }
    char more[KW_PL_MORE_RESERVE + 1] = "";
    if (n_shape > kept_shape) {
        snprintf(more, sizeof more, kept_shape ? "+%d more running" : "%d running",
                 n_shape - kept_shape);
        if (used + strlen(more) + (kept ? KW_PL_SEP_LEN : 0) > limit)
            more[0] = '\0';
    }
    size_t len = 0;
    buf[0] = '\0';
    int first = 1, more_done = 0;
    for (int i = 0; i <= n; i++) {
        /* the "+N more" marker goes after the last per-shape field */
        int after_shapes = i == n || (!f[i].shape && i > 0 && f[i - 1].shape);
        if (after_shapes && !more_done && more[0]) {
            more_done = 1;
            len += (size_t)snprintf(buf + len, size - len, "%s%s", first ? "" : KW_PL_SEP, more);
            first = 0;
        }
        if (i == n || !f[i].keep)
            continue;
        len += (size_t)snprintf(buf + len, size - len, "%s%s", first ? "" : KW_PL_SEP, f[i].text);
        first = 0;
    }
    return len;
}

/* The ETA field of the summary line. */
static void kw_pl_eta(char *buf, size_t size, const kw_progress *p)
{
    char t1[32], t2[32];
    kw_progline_duration(t1, sizeof t1, p->eta_converge_s);
    kw_progline_duration(t2, sizeof t2, p->eta_budget_s);
    /* every estimate capped by the budget: the budget is the ETA */
    int by_budget = p->eta_budget_s >= 0 && p->eta_converge_s >= p->eta_budget_s;
    /* before any shape's first local optimum the estimate is the first
     * sweeps' remainder only, a lower bound (kw_eta_evidence: on the default
     * job it read 0.25-0.6 of the time left): said as one, with the budget
     * as the upper end where there is one (stop 47; it read "ETA ~2s") */
    if (p->eta_converge_s >= 0 && !by_budget && p->eta_converge_bound && p->eta_budget_s >= 0)
        snprintf(buf, size, "ETA %s-%s (first sweeps)", t1, t2);
    else if (p->eta_converge_s >= 0 && !by_budget && p->eta_converge_bound)
        snprintf(buf, size, "ETA unknown, >=%s (first sweeps)", t1);
    else if (p->eta_converge_s >= 0 && !by_budget)
        snprintf(buf, size, "ETA ~%s (convergence)", t1);
    else if (p->eta_budget_s >= 0)
        snprintf(buf, size, "ETA %s (budget)", t2);
    else
        snprintf(buf, size, "ETA - (measuring)");
}

size_t kw_progline_format(char *buf, size_t size, const kw_progress *p,
                          const char *const *shape_names, const char *metric, int width)
{
    return kw_progline_summary(buf, size, p, shape_names, metric, width, 1);
}

size_t kw_progline_summary(char *buf, size_t size, const kw_progress *p,
                           const char *const *shape_names, const char *metric, int width,
                           int list_shapes)
{
    kw_pl_field f[KW_PL_FIELDS_MAX];
    int n = 0;
    char t1[32], t2[32];
    if (width < KW_PROGLINE_WIDTH_MIN)
        width = KW_PROGLINE_WIDTH_MIN;
    if (width > KW_PROGLINE_WIDTH_MAX)
        width = KW_PROGLINE_WIDTH_MAX;
    if (!metric)
        metric = "primary";
    if (p->replaying) {
        double pct = p->replay_total > 0 ? 100.0 * p->replay_done / p->replay_total : 0.0;
        kw_pl_add(f, &n, 0, 0, "resume: replaying the journal");
        kw_pl_add(f, &n, 1, 0, "%ld/%ld records", p->replay_done, p->replay_total);
        kw_pl_add(f, &n, 2, 0, "(%.0f%%)", pct);
        kw_pl_add(f, &n, 3, 0, "shapes %d/%d done", p->n_done, p->n_shapes);
        kw_pl_add(f, &n, 4, 0, "evals %ld from the journal", p->evals);
        return kw_pl_layout(buf, size, f, n, width);
    }
    kw_pl_add(f, &n, 2, 0, "shapes %d/%d done", p->n_done, p->n_shapes);
    if (p->rerank_total > 0 && p->per_shape && p->rerank_shape >= 0 &&
        p->rerank_shape < p->n_shapes) {
        /* inside a shape's re-rank (kw_progress.rerank_total; stop 48): no round ends
         * for seconds to minutes, so the line says what runs, after the ETA and before
         * the rest; the shape named where it fits beside the ETA */
        char eta[KW_PL_FIELD_LEN], what[KW_PL_FIELD_LEN];
        kw_pl_eta(eta, sizeof eta, p);
        snprintf(what, sizeof what, "re-rank %d/%d rivals", p->rerank_done, p->rerank_total);
        const char *name = kw_pl_name(shape_names, p->per_shape[p->rerank_shape].shape);
        if (strlen(eta) + KW_PL_SEP_LEN + strlen(name) + 1 + strlen(what) <= (size_t)width)
            kw_pl_add(f, &n, 1, 0, "%s %s", name, what);
        else
            kw_pl_add(f, &n, 1, 0, "%s", what);
    }
    kw_pl_add(f, &n, 1, 0, "evals %ld total", p->evals);
    int first_shape = 1, k = 0;
    int n_running = 0;
    for (int i = 0; p->per_shape && i < p->n_shapes; i++)
        n_running += !p->per_shape[i].done;
    if (!list_shapes && n_running > 0)
        kw_pl_add(f, &n, 3, 0, "%d running", n_running);
    for (int i = 0; list_shapes && p->per_shape && i < p->n_shapes; i++) {
        const kw_progress_shape *s = &p->per_shape[i];
        if (s->done)
            continue;
        char of[40];
        kw_pl_of(of, sizeof of, p, s);
        char ch[32];
        kw_pl_add(f, &n, first_shape ? 3 : 6 + k, 1, "%s %ld%s evals %s %s",
                  kw_pl_name(shape_names, s->shape), s->evals, of, metric,
                  kw_pl_change(ch, sizeof ch, s));
        first_shape = 0;
        k++;
    }
    kw_pl_add(f, &n, 4, 0, "%.1f evals/s", p->evals_per_s);
    char eta[KW_PL_FIELD_LEN];
    kw_pl_eta(eta, sizeof eta, p);
    kw_pl_add(f, &n, 0, 0, "%s", eta);
    kw_progline_duration(t1, sizeof t1, p->eta_converge_s);
    kw_progline_duration(t2, sizeof t2, p->eta_budget_s);
    int by_budget = p->eta_budget_s >= 0 && p->eta_converge_s >= p->eta_budget_s;
    if (p->eta_converge_s >= 0 && p->eta_budget_s >= 0 && !by_budget && !p->eta_converge_bound)
        kw_pl_add(f, &n, 5, 0, "<=%s (budget)", t2);
    return kw_pl_layout(buf, size, f, n, width);
}

size_t kw_progline_shape_done(char *buf, size_t size, const kw_progress *p, int i,
                              const char *const *shape_names, const char *metric)
{
    const kw_progress_shape *s = &p->per_shape[i];
    char ch[32];
    int n = snprintf(buf, size,
                     "knobwise tune: shape %s done: %s %.1f -> %.1f us (%s), %ld evals, "
                     "%d decisions",
                     kw_pl_name(shape_names, s->shape), metric ? metric : "primary",
                     s->baseline_primary, s->best_primary, kw_pl_change(ch, sizeof ch, s), s->evals,
                     s->step);
    if (n < 0)
        return 0;
    return (size_t)n < size ? (size_t)n : size ? size - 1 : 0;
}

size_t kw_progline_shape_line(char *buf, size_t size, const kw_progress *p, int i,
                              const char *const *shape_names, const char *metric, int width)
{
    kw_pl_field f[KW_PL_FIELDS_MAX];
    int n = 0;
    const kw_progress_shape *s = &p->per_shape[i];
    if (width < KW_PROGLINE_WIDTH_MIN)
        width = KW_PROGLINE_WIDTH_MIN;
    if (width > KW_PROGLINE_WIDTH_MAX)
        width = KW_PROGLINE_WIDTH_MAX;
    char of[40];
    kw_pl_of(of, sizeof of, p, s);
    kw_pl_add(f, &n, 0, 0, "  %s", kw_pl_name(shape_names, s->shape));
    kw_pl_add(f, &n, 1, 0, "%ld%s evals", s->evals, of);
    char ch[32];
    kw_pl_add(f, &n, 2, 0, "%s %s", metric ? metric : "primary", kw_pl_change(ch, sizeof ch, s));
    kw_pl_add(f, &n, 4, 0, "(%.1f -> %.1f us)", s->baseline_primary, s->best_primary);
    kw_pl_add(f, &n, 3, 0, "%s", s->phase ? s->phase : "?");
    /* the journal's steps: every decision on a candidate (accepted, rejected,
     * explored, reverted), judged on its own evaluation, an earlier one, a
     * cheap estimate or a constraint, so they outnumber the evaluations; "probe
     * step 3140" beside "1675/~3943 evals" read as if steps were fewer
     * (stop 47). Random and exhaustive journal no steps. */
    if (s->step > 0)
        kw_pl_add(f, &n, 5, 0, "%d decision%s", s->step, s->step == 1 ? "" : "s");
    return kw_pl_layout(buf, size, f, n, width);
}
