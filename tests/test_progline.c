/* test_progline.c - the progress line of `knobwise tune` (src/run/kw_progline.c).
 *
 * The line must never be longer than the terminal (every width 40..200 is
 * tried on a 5-shape and a 64-shape progress with long names), must drop
 * fields whole rather than cut one (every kept field is one of the fields the
 * full-width line shows), must keep the ETA longest, label per-shape and total
 * evaluations, show every running shape when there is room, and say what a
 * resume is doing while it replays. The plain per-shape line is checked here
 * too; tests/test_tune.c runs `tune` with stderr not a terminal end to end.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kw_progline.h"

TestSuite(progline);

#define N_BIG 64

static char names_buf[N_BIG][KW_NAME_MAX];
static const char *names[N_BIG];
static kw_progress_shape ps[N_BIG];

static kw_progress make(int n_shapes, int n_done)
{
    for (int i = 0; i < n_shapes; i++) {
        snprintf(names_buf[i], sizeof names_buf[i], "attn_decode_kv%d_b32_c16_shape%02d",
                 2048 + i, i);
        names[i] = names_buf[i];
        ps[i] = (kw_progress_shape){.shape = i,
                                    .done = i < n_done,
                                    .step = 10 + i,
                                    .evals = 100 + i,
                                    .evals_est = 300 + i,
                                    .best_primary = 900.0,
                                    .baseline_primary = 1000.0,
                                    .phase = "sweep"};
    }
    kw_progress p;
    memset(&p, 0, sizeof p);
    p.n_shapes = n_shapes;
    p.per_shape = ps;
    p.n_done = n_done;
    p.budget = 500;
    p.evals = 12345;
    p.evals_per_s = 123.4;
    p.eta_converge_s = 80;
    p.eta_budget_s = 135;
    p.eta_s = 80;
    return p;
}

/* Split a line on the two-space separator into fields. */
static int split(char fields[][200], int max, const char *line)
{
    int n = 0;
    const char *s = line;
    while (*s && n < max) {
        const char *e = strstr(s, "  ");
        size_t len = e ? (size_t)(e - s) : strlen(s);
        snprintf(fields[n++], 200, "%.*s", (int)len, s);
        if (!e)
            break;
        s = e + 2;
    }
    return n;
}

static void check_widths(const kw_progress *p)
{
    char full[8192];
    kw_progline_format(full, sizeof full, p, names, "p95", KW_PROGLINE_WIDTH_MAX);
    static char ff[128][200];
    int nf = split(ff, 128, full);
    for (int w = 40; w <= 200; w++) {
        char line[512];
        size_t len = kw_progline_format(line, sizeof line, p, names, "p95", w);
        cr_assert_eq(len, strlen(line));
        cr_assert_leq(len, (size_t)w, "width %d: %zu chars: %s", w, len, line);
        cr_assert(strstr(line, "ETA ~1m20s (convergence)"), "width %d drops the ETA: %s", w, line);
        /* every field shown is whole: one of the full line's fields, or the
         * marker of the shapes left out */
        static char lf[128][200];
        int nl = split(lf, 128, line);
        for (int i = 0; i < nl; i++) {
            int found = strstr(lf[i], " running") != NULL;
            for (int k = 0; !found && k < nf; k++)
                found = strcmp(lf[i], ff[k]) == 0;
            cr_assert(found, "width %d: field '%s' is not a whole field of the full line", w, lf[i]);
        }
    }
}

Test(progline, never_longer_than_the_width_and_fields_stay_whole)
{
    kw_progress p = make(5, 1);
    check_widths(&p);
    kw_progress q = make(N_BIG, 3);
    check_widths(&q);
}

Test(progline, labels_totals_and_every_running_shape)
{
    kw_progress p = make(5, 1);
    char line[1024];
    kw_progline_format(line, sizeof line, &p, names, "p95", 400);
    cr_assert(strstr(line, "evals 12345 total"), "%s", line);
    cr_assert(strstr(line, "shapes 1/5 done"), "%s", line);
    cr_assert(strstr(line, "<=2m15s (budget)"), "%s", line);
    cr_assert(strstr(line, "123.4 evals/s"), "%s", line);
    /* the finished shape is not listed; the four running ones are, each with
     * its own evaluations against its estimate (-10% = 900 vs 1000) */
    cr_assert_null(strstr(line, names[0]), "%s", line);
    for (int i = 1; i < 5; i++) {
        char want[160];
        snprintf(want, sizeof want, "%s %d/~%d evals p95 -10.0%%", names[i], 100 + i, 300 + i);
        cr_assert(strstr(line, want), "missing '%s' in %s", want, line);
    }
    cr_assert_null(strstr(line, " running"), "%s", line);
    /* narrower: some shapes are left out and counted */
    kw_progline_format(line, sizeof line, &p, names, "p95", 160);
    cr_assert(strstr(line, " more running"), "%s", line);
    kw_progline_format(line, sizeof line, &p, names, "p95", 80);
    cr_assert(strstr(line, "4 running"), "%s", line);
    /* the budget bounds the estimate: shown as /budget, not ~ */
    ps[1].evals_est = 500;
    kw_progline_format(line, sizeof line, &p, names, "p95", 400);
    cr_assert(strstr(line, "101/500 evals"), "%s", line);
}

Test(progline, replay_is_named_not_zero_rate)
{
    kw_progress p = make(5, 2);
    p.replaying = 1;
    p.replay_done = 250;
    p.replay_total = 1000;
    p.evals_per_s = 0;
    char line[512];
    kw_progline_format(line, sizeof line, &p, names, "p95", 100);
    cr_assert(strstr(line, "resume: replaying the journal"), "%s", line);
    cr_assert(strstr(line, "250/1000 records"), "%s", line);
    cr_assert(strstr(line, "(25%)"), "%s", line);
    cr_assert_null(strstr(line, "evals/s"), "%s", line);
    cr_assert_null(strstr(line, "ETA"), "%s", line);
    for (int w = 40; w <= 200; w++) {
        size_t len = kw_progline_format(line, sizeof line, &p, names, "p95", w);
        cr_assert_leq(len, (size_t)w);
    }
}

/* Before any shape's first local optimum the estimate is only the first
 * sweeps' remainder (kw_eta_evidence): it read "ETA ~2s" at 5% of a default
 * job that had 8 s left. Said as a lower bound, up to the budget where there
 * is one, and each running shape's estimate as ">=": fails on main ("ETA
 * >=1m20s (convergence)", "/~E" per shape). */
Test(progline, eta_before_any_first_optimum_is_a_lower_bound_up_to_the_budget)
{
    kw_progress p = make(5, 0);
    p.eta_converge_bound = 1;
    for (int i = 0; i < p.n_shapes; i++)
        ps[i].evals_est_bound = 1;
    char line[512];
    kw_progline_format(line, sizeof line, &p, names, "p95", 400);
    cr_assert(strstr(line, "ETA 1m20s-2m15s (first sweeps)"), "%s", line);
    cr_assert_null(strstr(line, "~"), "no estimate shown: %s", line);
    cr_assert_null(strstr(line, "(convergence)"), "%s", line);
    cr_assert(strstr(line, "/>="), "each shape's a lower bound: %s", line);
    p.eta_budget_s = -1;
    p.budget = 0;
    kw_progline_format(line, sizeof line, &p, names, "p95", 400);
    cr_assert(strstr(line, "ETA unknown, >=1m20s (first sweeps)"), "%s", line);
    /* a 60-column terminal (test_ui's pty) keeps the shapes done beside the
     * range: "ETA 1s-3s (first sweeps: from there to the budget)" left room
     * for nothing else (CI, stop 47) */
    p.eta_converge_s = 1;
    p.eta_budget_s = 3;
    p.budget = 300;
    p.evals = 198;
    kw_progline_summary(line, sizeof line, &p, names, "p95", 59, 0);
    cr_assert(strstr(line, "ETA 1s-3s (first sweeps)"), "%s", line);
    cr_assert(strstr(line, "shapes 0/5 done"), "%s", line);
    cr_assert_leq(strlen(line), 59u, "%s", line);
    p.eta_budget_s = -1;
    p.budget = 0;
    p.eta_converge_s = 80;
    kw_progline_shape_line(line, sizeof line, &p, 0, names, "p95", 200);
    cr_assert(strstr(line, "/>="), "%s", line);
    /* with evidence: the estimate as before */
    p.eta_converge_bound = 0;
    ps[0].evals_est_bound = 0;
    kw_progline_format(line, sizeof line, &p, names, "p95", 400);
    cr_assert(strstr(line, "ETA ~1m20s (convergence)"), "%s", line);
}

Test(progline, eta_without_estimates)
{
    kw_progress p = make(2, 0);
    p.eta_converge_s = -1;
    char line[512];
    kw_progline_format(line, sizeof line, &p, names, "p95", 200);
    cr_assert(strstr(line, "ETA 2m15s (budget)"), "%s", line);
    p.eta_budget_s = -1;
    kw_progline_format(line, sizeof line, &p, names, "p95", 200);
    cr_assert(strstr(line, "ETA - (measuring)"), "%s", line);
    /* every shape's estimate is its budget: the ETA is the budget's, said so */
    p.eta_converge_s = 135;
    p.eta_budget_s = 135;
    kw_progline_format(line, sizeof line, &p, names, "p95", 200);
    cr_assert(strstr(line, "ETA 2m15s (budget)") && !strstr(line, "convergence"), "%s", line);
}

Test(progline, durations)
{
    char b[32];
    kw_progline_duration(b, sizeof b, 17.2);
    cr_assert_str_eq(b, "17s");
    kw_progline_duration(b, sizeof b, 135);
    cr_assert_str_eq(b, "2m15s");
    kw_progline_duration(b, sizeof b, 3 * 3600 + 7 * 60);
    cr_assert_str_eq(b, "3h07m");
    kw_progline_duration(b, sizeof b, -1);
    cr_assert_str_eq(b, "-");
}

Test(progline, shape_done_line)
{
    kw_progress p = make(5, 2);
    char line[512];
    kw_progline_shape_done(line, sizeof line, &p, 1, names, "p95");
    char want[256];
    snprintf(want, sizeof want,
             "knobwise tune: shape %s done: p95 1000.0 -> 900.0 us (-10.0%%), 101 evals, 11 decisions",
             names[1]);
    cr_assert_str_eq(line, want);
}

/* A running shape's journal steps are its decisions (each candidate accepted,
 * rejected, explored or reverted, judged on an evaluation, an earlier one, an
 * estimate or a constraint): more than its evaluations. Named so, they read
 * right beside "evals"; "probe  step 3140" beside "1675/~3943 evals" read as
 * a step count behind the evaluations. Fails on main. */
Test(progline, a_shapes_steps_are_named_decisions_beside_its_evaluations)
{
    kw_progress p = make(5, 0);
    ps[0].evals = 1675;
    ps[0].evals_est = 3943;
    ps[0].step = 3140;
    ps[0].phase = "probe";
    p.budget = 0;
    char line[512];
    kw_progline_shape_line(line, sizeof line, &p, 0, names, "p95", 200);
    cr_assert(strstr(line, "1675/~3943 evals"), "%s", line);
    cr_assert(strstr(line, "probe  3140 decisions"), "%s", line);
    cr_assert_null(strstr(line, "step"), "%s", line);
    ps[0].step = 1;
    kw_progline_shape_line(line, sizeof line, &p, 0, names, "p95", 200);
    cr_assert(strstr(line, "  1 decision") && !strstr(line, "decisions"), "%s", line);
}

/* A shape whose baseline or best cannot keep up with its arrivals: the lines
 * print "saturated" / "from saturated", as the results tables do, never a
 * percentage of an unbounded backlog. */
Test(progline, saturated_shapes_print_no_percentage)
{
    kw_progress p = make(5, 2);
    char line[512];
    ps[1].baseline_primary = 877818.0;
    ps[1].baseline_guards = "fallback;saturated";
    ps[1].best_guards = "";
    kw_progline_shape_done(line, sizeof line, &p, 1, names, "p95");
    cr_assert(strstr(line, "(from saturated)") && !strstr(line, "%"), "%s", line);
    ps[1].best_guards = "saturated";
    kw_progline_shape_done(line, sizeof line, &p, 1, names, "p95");
    cr_assert(strstr(line, "(saturated)") && !strstr(line, "%"), "%s", line);
    /* a guard merely containing the word is not the saturated guard */
    ps[1].baseline_guards = "unsaturated_x";
    ps[1].best_guards = NULL;
    kw_progline_shape_done(line, sizeof line, &p, 1, names, "p95");
    cr_assert(strstr(line, "(-99.9%)"), "%s", line);
    /* the running shape's line and the status line's shape list */
    ps[3].best_guards = "saturated";
    kw_progline_shape_line(line, sizeof line, &p, 3, names, "p95", 200);
    cr_assert(strstr(line, "p95 saturated") && !strstr(line, "%"), "%s", line);
    kw_progline_format(line, sizeof line, &p, names, "p95", 400);
    cr_assert(strstr(line, "p95 saturated"), "%s", line);
}

Test(progline, width_from_columns_when_not_a_terminal)
{
    /* a pipe is not a terminal: $COLUMNS decides, else the default */
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    setenv("COLUMNS", "57", 1);
    cr_assert_eq(kw_progline_width(fds[0]), 57);
    setenv("COLUMNS", "junk", 1);
    cr_assert_eq(kw_progline_width(fds[0]), KW_PROGLINE_WIDTH_DEFAULT);
    setenv("COLUMNS", "5", 1);
    cr_assert_eq(kw_progline_width(fds[0]), KW_PROGLINE_WIDTH_MIN);
    unsetenv("COLUMNS");
    cr_assert_eq(kw_progline_width(fds[0]), KW_PROGLINE_WIDTH_DEFAULT);
    close(fds[0]);
    close(fds[1]);
}

Test(progline, block_summary_and_shape_lines_fit)
{
    kw_progress p = make(5, 1);
    char line[512];
    for (int w = 40; w <= 200; w++) {
        size_t len = kw_progline_summary(line, sizeof line, &p, names, "p95", w, 0);
        cr_assert_leq(len, (size_t)w, "%s", line);
        cr_assert(strstr(line, "ETA ~1m20s (convergence)"), "width %d: %s", w, line);
        cr_assert_null(strstr(line, names[1]), "the block's summary names no shape: %s", line);
        for (int i = 1; i < 5; i++) {
            len = kw_progline_shape_line(line, sizeof line, &p, i, names, "p95", w);
            cr_assert_leq(len, (size_t)w, "%s", line);
            cr_assert(strstr(line, names[i]), "width %d: the shape's name is kept: %s", w, line);
        }
    }
    kw_progline_summary(line, sizeof line, &p, names, "p95", 200, 0);
    cr_assert(strstr(line, "  4 running  "), "%s", line);
    kw_progline_shape_line(line, sizeof line, &p, 2, names, "p95", 200);
    char want[256];
    snprintf(want, sizeof want, "  %s  102/~302 evals  p95 -10.0%%  (1000.0 -> 900.0 us)  sweep  12 decisions",
             names[2]);
    cr_assert_str_eq(line, want);
}

/* Inside a shape's re-rank (kw_progress.rerank_total > 0, reported between its
 * paired comparisons: no round ends for seconds to minutes on a bursty space)
 * the line says so, with the rivals compared of the rivals in all, kept after
 * the ETA at every width that holds both (a 59-column terminal: test_ui's pty) and naming the
 * shape where it fits beside the ETA; in a block the shape's own line reads
 * the engine's phase. Fails on main (no rerank_* fields: does not build). */
Test(progline, a_re_rank_says_its_rivals_beside_the_eta)
{
    kw_progress p = make(5, 3);
    p.rerank_shape = 4;
    p.rerank_done = 3;
    p.rerank_total = 12;
    char line[1024];
    for (int w = 24 + 2 + 19; w <= 200; w++) { /* the ETA, the separator, the field */
        for (int list = 0; list < 2; list++) {
            size_t len = kw_progline_summary(line, sizeof line, &p, names, "p95", w, list);
            cr_assert_leq(len, (size_t)w, "width %d: %s", w, line);
            cr_assert(strstr(line, "ETA ~1m20s (convergence)"), "width %d: %s", w, line);
            cr_assert(strstr(line, "re-rank 3/12 rivals"), "width %d: %s", w, line);
            /* the shape's name beside it where the ETA leaves room */
            char named[200];
            int nl = snprintf(named, sizeof named, "%s re-rank 3/12 rivals", names[4]);
            if (w >= 24 + 2 + nl)
                cr_assert(strstr(line, named), "width %d: %s", w, line);
        }
    }
    kw_progline_format(line, sizeof line, &p, names, "p95", 59);
    cr_assert(strncmp(line, "re-rank 3/12 rivals", 19) == 0 || strstr(line, "  re-rank 3/12"),
              "%s", line);
    /* no re-rank: no such field */
    p.rerank_total = 0;
    kw_progline_format(line, sizeof line, &p, names, "p95", 400);
    cr_assert_null(strstr(line, "re-rank"), "%s", line);
}
