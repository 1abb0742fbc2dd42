/* cli_tune_ui.c - what `knobwise tune` prints while and after it runs: the
 * progress on stderr (a block or one line fitted to a terminal, plain lines
 * for a log), one line per shape at the end, and how the run ended (see
 * cli_tune_ui.h).
 *
 * Design choice: printing is the verb's; the run module (kw_run.h) reports
 * through its progress hook and its outcome, and this file turns them into
 * text. Kept apart from cli_tune.c (options, calls) so neither reads as the
 * other.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_tune_ui.h"
#include "kw_cli.h"
#include "kw_guards.h"
#include "kw_journal.h"
#include "kw_metric.h"
#include "kw_netpath.h"
#include "kw_num.h"
#include "kw_progline.h"
#include "kw_reduce.h"
#include "kw_results.h"
#include "kw_sbuf.h"

#define KW_TUNE_DRAW_S 0.2        /* progress line refresh */
#define KW_TUNE_BLOCK_MAX 16      /* running shapes given a line each, at most */
#define KW_TUNE_BLOCK_SPARE_ROWS 3 /* rows the block leaves free on the screen */
/* A log's periodic progress line, this often by default: shapes run in
 * interleaved rounds and finish together, so the per-shape lines alone left
 * a log empty until the end (default job at --budget 1500: 45 s, then five
 * lines at once). A minute keeps an overnight log short (~500 lines a night). */
#define KW_TUNE_PLAIN_EVERY_S 60.0
#define KW_TUNE_PLAIN_ENV "KNOBWISE_PROGRESS_EVERY" /* seconds; 0: off */

static double kw_tune_ui_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *kw_tune_metric_label(const char *metric)
{
    return strcmp(metric, KW_METRIC_NAME(KW_M_P99_US)) == 0 ? "p99" : "p95";
}


void kw_cli_tune_ui_clear(kw_cli_tune_ui *ui)
{
    if (ui->lines > 1)
        fprintf(stderr, "\033[%dA\r\033[J", ui->lines - 1); /* up to the block's first line */
    else if (ui->lines == 1 && ui->ansi)
        fprintf(stderr, "\r\033[K");
    else if (ui->drawn)
        fprintf(stderr, "\r%*s\r", ui->drawn, "");
    ui->drawn = 0;
    ui->lines = 0;
    fflush(stderr);
}

/* The progress on a terminal. With ANSI cursor control (TERM not dumb) and
 * room on the screen, a block: the summary line and one line per running
 * shape, redrawn in place; else the single line with the running shapes in
 * it as far as they fit. Every line is fitted to the width (one column less
 * than the terminal: writing the last column makes some terminals wrap
 * before the carriage return). */
static void kw_tune_draw(kw_cli_tune_ui *ui, const kw_progress *p)
{
    int width = kw_progline_width(STDERR_FILENO) - 1;
    int rows = kw_progline_rows(STDERR_FILENO);
    const char *label = kw_tune_metric_label(ui->metric);
    int n_running = 0;
    for (int i = 0; p->per_shape && i < p->n_shapes; i++)
        n_running += !p->per_shape[i].done;
    int block = ui->ansi && n_running > 1 && n_running <= KW_TUNE_BLOCK_MAX && rows > 0 &&
                n_running + KW_TUNE_BLOCK_SPARE_ROWS <= rows;
    char line[KW_PROGLINE_WIDTH_MAX + 1];
    size_t len = kw_progline_summary(line, sizeof line, p, ui->shape_names, label, width,
                                     !block);
    char ranks[KW_PROGLINE_WIDTH_MAX + 1];
    if (ui->mpi && kw_run_ranks(ui->mpi, ranks, sizeof ranks)) {
        if (len + 3 + strlen(ranks) <= (size_t)width && len + 3 + strlen(ranks) < sizeof line)
            len += (size_t)snprintf(line + len, sizeof line - len, " | %s", ranks);
    }
    if (ui->lines > 1)
        fprintf(stderr, "\033[%dA", ui->lines - 1);
    if (ui->ansi) {
        fprintf(stderr, "\r%s\033[K", line);
    } else {
        int pad = ui->drawn > (int)len ? ui->drawn - (int)len : 0;
        fprintf(stderr, "\r%s%*s", line, pad, "");
        if (pad)
            fprintf(stderr, "\r%s", line);
    }
    ui->drawn = (int)len;
    ui->lines = 1;
    for (int i = 0; block && i < p->n_shapes; i++) {
        if (p->per_shape[i].done)
            continue;
        kw_progline_shape_line(line, sizeof line, p, i, ui->shape_names, label, width);
        fprintf(stderr, "\n%s\033[K", line);
        ui->lines++;
    }
    if (ui->ansi)
        fprintf(stderr, "\033[J"); /* a shape finished: the block shrank */
    fflush(stderr);
}

/* Plain progress for logs (stderr not a terminal): a line when a resume
 * starts and ends its replay, one per shape as it finishes, and a progress
 * line every plain_every_s while shapes run (KNOBWISE_PROGRESS_EVERY). */
static void kw_tune_plain(kw_cli_tune_ui *ui, const kw_progress *p)
{
    const char *label = kw_tune_metric_label(ui->metric);
    if (p->replaying && ui->replay_said == 0) {
        fprintf(stderr, "knobwise tune: resume: replaying %ld journal records (no evaluation is "
                        "repeated)\n", p->replay_total);
        ui->replay_said = 1;
    } else if (!p->replaying && ui->replay_said == 1) {
        fprintf(stderr, "knobwise tune: resume: journal replayed (%ld evaluations, %d/%d shapes "
                        "done); evaluating\n", p->evals, p->n_done, p->n_shapes);
        ui->replay_said = 2;
    }
    for (int i = 0; p->per_shape && i < p->n_shapes && i < KW_JOURNAL_SHAPE_MAX; i++) {
        if (!p->per_shape[i].done || ui->said_done[i])
            continue;
        char line[512];
        kw_progline_shape_done(line, sizeof line, p, i, ui->shape_names, label);
        fprintf(stderr, "%s (%d of %d)\n", line, ++ui->n_said, p->n_shapes);
        ui->said_done[i] = 1;
        if (ui->mpi && kw_run_ranks(ui->mpi, line, sizeof line))
            fprintf(stderr, "knobwise tune: %s\n", line);
    }
    /* every plain_every_s while shapes run: the terminal line's content
     * (evaluations, each running shape against its estimate or budget and
     * its best against the baseline, rate, ETA) and the time since start */
    double now = kw_tune_ui_now();
    if (!p->replaying && ui->plain_every_s > 0 && p->n_done < p->n_shapes &&
        now - ui->last_plain >= ui->plain_every_s) {
        char line[KW_PROGLINE_WIDTH_MAX + 1], el[32];
        ui->last_plain = now;
        kw_progline_summary(line, sizeof line, p, ui->shape_names, label, KW_PROGLINE_WIDTH_MAX,
                            1);
        kw_progline_duration(el, sizeof el, now - ui->t0);
        fprintf(stderr, "knobwise tune: progress: %s | elapsed %s\n", line, el);
    }
    fflush(stderr);
}

void kw_cli_tune_ui_progress(void *ud, const kw_run *r, const kw_progress *p)
{
    kw_cli_tune_ui *ui = ud;
    double now = kw_tune_ui_now();
    ui->mpi = r;
    if (ui->plain)
        kw_tune_plain(ui, p);
    if (ui->draw && now - ui->last_draw >= KW_TUNE_DRAW_S) {
        ui->last_draw = now;
        kw_tune_draw(ui, p);
    }
}

void kw_cli_tune_ui_evidence(void *ud, const kw_run *r, const char *what, long done, long total)
{
    kw_cli_tune_ui *ui = ud;
    (void)r;
    double now = kw_tune_ui_now();
    char el[32], left[64] = "", line[KW_PROGLINE_WIDTH_MAX + 1];
    kw_progline_duration(el, sizeof el, now - ui->t0);
    /* the part's own rate since its first report: what is left of this part
     * (the search's ETA read 0s while the evidence, minutes on an LLM space,
     * had not started; the parts after this one are not counted) */
    if (strncmp(ui->ev_what, what, sizeof ui->ev_what - 1) != 0 || done < ui->ev_done0) {
        snprintf(ui->ev_what, sizeof ui->ev_what, "%s", what);
        ui->ev_t0 = now;
        ui->ev_done0 = done;
    } else if (done > ui->ev_done0 && done < total && now > ui->ev_t0) {
        char d[32];
        kw_progline_duration(d, sizeof d,
                             (now - ui->ev_t0) / (double)(done - ui->ev_done0) * (double)(total - done));
        snprintf(left, sizeof left, ", ~%s left in this part", d);
    }
    int len = snprintf(line, sizeof line, "evidence: %s %ld/%ld evaluations%s | elapsed %s", what,
                       done, total, left, el);
    if (len < 0)
        return;
    if (ui->plain && ui->plain_every_s > 0 && now - ui->last_plain >= ui->plain_every_s) {
        ui->last_plain = now;
        fprintf(stderr, "knobwise tune: %s\n", line);
        fflush(stderr);
    }
    if (ui->draw && (now - ui->last_draw >= KW_TUNE_DRAW_S || done == total)) {
        int width = kw_progline_width(STDERR_FILENO) - 1;
        ui->last_draw = now;
        if (width > 0 && len > width)
            line[len = width] = '\0';
        if (ui->ansi) {
            fprintf(stderr, "\r%s\033[K", line);
        } else {
            int pad = ui->drawn > len ? ui->drawn - len : 0;
            fprintf(stderr, "\r%s%*s", line, pad, "");
            if (pad)
                fprintf(stderr, "\r%s", line);
        }
        ui->drawn = len;
        ui->lines = 1;
        fflush(stderr);
    }
}

void kw_cli_tune_ui_rewrite_failed(void *ud, const kw_run *r)
{
    (void)r;
    kw_cli_tune_ui_clear(ud);
    fprintf(stderr, "knobwise tune: cannot rewrite the results so far: %s\n", kw_error_last());
}

/* One line per shape: baseline -> recommendation. The end-of-run summary
 * reads the journal as a stream (memory: the search's size, not the
 * journal's) through the one journal reducer (kw_reduce.h): a finished
 * shape prints its recommendation, a shape cut short by the time limit or a
 * signal its best so far, marked incomplete. A configuration that cannot
 * keep up with its arrivals prints "saturated" (or "from saturated" when
 * only the baseline could not) in place of the percentage: the ids of
 * saturated configurations are gathered from the E records' guards. */
typedef struct kw_tune_sum {
    kw_reduce *red;
    uint64_t *sat;        /* (shape << 56 folded) ids of saturated configs, unsorted */
    int *sat_shape;
    size_t n_sat, cap_sat;
    int failed;
} kw_tune_sum;

static int kw_tune_summary_rec(void *ctx, const kw_journal *j, const kw_jrec *r)
{
    kw_tune_sum *S = ctx;
    if (!S->red && kw_reduce_new(&S->red, &j->h) != 0)
        return KW_ENOMEM;
    /* the one mean rule (search/kw_reduce.h): a configuration's figures and
     * guards are over its repetitions 0..repeats-1; the re-measured blocks
     * (a measured run's controls, and its pairing after the search, on a
     * device that may have drifted since) enter none, so they do not make it
     * "saturated" here while recommend and results.xml say its guards pass */
    if (r->type == 'E' && r->e.rep < j->h.repeats && kw_guards_saturated(r->e.guards)) {
        if (S->n_sat == S->cap_sat) {
            size_t cap = S->cap_sat ? 2 * S->cap_sat : 64;
            uint64_t *ids = realloc(S->sat, cap * sizeof *ids);
            if (ids)
                S->sat = ids;
            int *sh = ids ? realloc(S->sat_shape, cap * sizeof *sh) : NULL;
            if (!ids || !sh)
                return kw_error_set(KW_ENOMEM, "out of memory for the summary");
            S->sat_shape = sh;
            S->cap_sat = cap;
        }
        S->sat[S->n_sat] = r->e.id;
        S->sat_shape[S->n_sat++] = r->e.shape;
    }
    return kw_reduce_add(S->red, r);
}

static const char *kw_tune_sat_guards(const kw_tune_sum *S, int shape, uint64_t id)
{
    for (size_t i = 0; i < S->n_sat; i++)
        if (S->sat[i] == id && S->sat_shape[i] == shape)
            return "saturated";
    return "";
}

/* Whether any configuration of a shape passed every guard (kw_reduce_each). */
static int kw_tune_any_passes(void *ctx, const kw_rconfig *c)
{
    if (c->n > 0 && c->ok) {
        *(int *)ctx = 1;
        return 1; /* stop: one is enough */
    }
    return 0;
}

/* A shape's headline (kw_results_headline: the final re-check where
 * results.xml has one, read back as recommend reads it) into *out: 2 when it
 * is the re-check (baseline and recommendation), 1 when it is the journal's
 * own figures (no re-check: a stopped or measured run), 0 when there is
 * none (rs NULL: results.xml unreadable; nothing recommended). */
static int kw_cli_tune_ui_headline(kw_headline *out, const kw_runsum *rs, const char *shape)
{
    int si = rs ? kw_runsum_find_shape(rs, shape) : -1;
    int w = si >= 0 ? kw_runsum_winner(rs, si) : -1;
    if (w < 0)
        return 0;
    kw_results_headline(out, rs, si, w);
    return out->basis == KW_BASIS_RECHECK && out->base ? 2 : 1;
}

static void kw_cli_tune_ui_summary(const char *dir, const char *journal)
{
    kw_tune_sum S;
    memset(&S, 0, sizeof S);
    kw_runsum *rs = NULL; /* the run's summary with results.xml's re-checks */
    char **notes = NULL;  /* its unresolved rankings */
    kw_journal *j = NULL;
    if (kw_journal_scan(&j, journal, kw_tune_summary_rec, &S) != 0 ||
        (!S.red && kw_reduce_new(&S.red, &j->h) != 0))
        goto done;
    const char *label = kw_tune_metric_label(j->h.metric);
    /* the headline figures: results.xml's re-check, read back into the
     * run's summary in one pass (as recommend and report read them) */
    if (kw_results_summary(&rs, dir, NULL, NULL, NULL) == 0) {
        kw_results_want w = {.load = rs, .notes = &notes};
        if (kw_results_read(&w, dir) != 0) {
            kw_runsum_free(rs);
            rs = NULL;
            notes = NULL;
        }
    }
    printf("knobwise tune: %s (seed %llu, %s%s%s)\n", dir, (unsigned long long)j->h.seed,
           kw_journal_strategy_name(j->h.strategy), j->h.strategy == KW_STRATEGY_OFAT ? "/" : "",
           j->h.strategy == KW_STRATEGY_OFAT ? kw_journal_policy_name(j->h.policy) : "");
    for (int i = 0; i < j->h.n_tuned; i++) {
        int s = j->h.tuned[i];
        kw_jresult r;
        if (kw_reduce_result(&r, S.red, s) != 0)
            continue;
        if (r.evals == 0) {
            /* stopped before the shape's first evaluation: no figure to show (not nan), and
             * nothing failed a guard */
            printf("  %-32s %s not evaluated yet: the run stopped before this shape's first "
                   "evaluation\n",
                   j->h.shape_names[s], label);
            kw_journal_result_clear(&r);
            continue;
        }
        char effect[40];
        const char *sat = kw_guards_saturation(kw_tune_sat_guards(&S, s, r.baseline_id),
                                                kw_tune_sat_guards(&S, s, r.best_id));
        /* nothing evaluated passes the guards (an SLA no config meets, a
         * kernel that always falls back): the best figure is no
         * recommendation, and ranked.csv, recommend and export have none */
        int passes = 0;
        kw_reduce_each(S.red, s, kw_tune_any_passes, &passes);
        if (!passes)
            snprintf(effect, sizeof effect, "fails guards");
        else if (sat)
            snprintf(effect, sizeof effect, "%s", sat);
        else
            snprintf(effect, sizeof effect, "%+6.1f%%",
                     r.baseline_primary != 0 && isfinite(r.baseline_primary)
                         ? (r.best_primary - r.baseline_primary) / r.baseline_primary * 100.0
                         : 0.0);
        char cheap[96] = ""; /* multi-fidelity screening: the cheap estimates beside the evaluations */
        char al[40] = "";    /* aliases (kw_engine.c): judged, not evaluated, outside the budget */
        if (r.aliases > 0)
            snprintf(al, sizeof al, "%ld aliases%s", r.aliases, j->pred_n[s] > 0 ? ", " : "");
        if (j->pred_n[s] > 0)
            snprintf(cheap, sizeof cheap, "  (+%s%ld estimates, %ld ruled out)", al, j->pred_n[s],
                     j->pred_skip[s]);
        else if (r.aliases > 0)
            snprintf(cheap, sizeof cheap, "  (+%s)", al);
        /* the same-round controls and the pairing's re-measurements, counted
         * in evals, reported apart (before stop 46 only the controls: a
         * --budget 60 run read "120 evals (10 controls)", 60 unexplained) */
        char ctl[80] = "";
        if (r.controls > 0 && r.pairs > 0)
            snprintf(ctl, sizeof ctl, " (%ld controls, %ld for the pairing)", r.controls, r.pairs);
        else if (r.controls > 0)
            snprintf(ctl, sizeof ctl, " (%ld controls)", r.controls);
        else if (r.pairs > 0)
            snprintf(ctl, sizeof ctl, " (%ld for the pairing)", r.pairs);
        /* the headline first: the re-check's figures where the run made
         * one (on a bursty shape the search's sample lies far below them),
         * then the search's own on the line below */
        kw_headline h;
        int said = passes ? kw_cli_tune_ui_headline(&h, rs, j->h.shape_names[s]) : 0;
        int hl = said == 2;
        int pk = rs ? rs->primary : 0;
        double hb = hl ? h.base->v[pk] : r.baseline_primary, ha = hl ? h.m->v[pk] : r.best_primary;
        if (hl && !sat)
            snprintf(effect, sizeof effect, "%+6.1f%%", hb > 0 ? (ha - hb) / hb * 100.0 : 0.0);
        printf("  %-32s %s %10.1f -> %10.1f us (%s)  %2d knob%s changed  %5ld evals%s  %s%s\n",
               j->h.shape_names[s], label, hb, ha, effect,
               r.n_changes, r.n_changes == 1 ? "" : "s", r.evals - r.aliases, ctl,
               r.done ? r.why : "incomplete: best so far", cheap);
        int si = rs ? kw_runsum_find_shape(rs, j->h.shape_names[s]) : -1;
        if (!passes && r.evals > 0) {
            printf("  %-32s no configuration evaluated passes the guards: nothing to recommend "
                   "(the guards table of 'knobwise report %s' shows which fail)\n",
                   "", dir);
        } else if (hl) {
            char src[96], srch[96];
            kw_results_basis_words(src, sizeof src, &h);
            kw_headline sh = {KW_BASIS_SEARCH, NULL, NULL, 0};
            int ks = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_SAMPLES));
            const kw_rs_shape *rsh = &rs->shapes[si];
            double n = ks >= 0 ? rsh->configs[kw_runsum_winner(rs, si)].m.v[ks] : NAN;
            sh.requests = isfinite(n) && n > 0 ? lround(n) : 0;
            kw_results_basis_words(srch, sizeof srch, &sh);
            kw_sbuf cmd = {0};
            /* the changes the run's own evaluations show do not earn their
             * place (kw_netpath_unearned, as recommend and audit name them) */
            int w = kw_runsum_winner(rs, si), n_ue = 0;
            kw_unearned *ue = w >= 0 ? calloc((size_t)rs->ks.n_knobs + 1, sizeof *ue) : NULL;
            if (ue)
                n_ue = kw_netpath_unearned(ue, rs, si, w);
            free(ue);
            if (n_ue > 0)
                kw_sbuf_printf(&cmd, "; %d of the %d changes do not earn their place", n_ue,
                               r.n_changes);
            if (n_ue > 0 && !(notes && notes[si])) {
                kw_sbuf_puts(&cmd, ": knobwise recommend ");
                kw_sbuf_shell(&cmd, dir);
                kw_sbuf_puts(&cmd, " --shape ");
                kw_sbuf_shell(&cmd, j->h.shape_names[s]);
            }
            if (notes && notes[si]) {
                /* the note's own lead: the ranking, or only the gain's precision */
                kw_sbuf_printf(&cmd, "; %s: knobwise recommend ",
                               strncmp(notes[si], KW_RESULTS_NOTE_AHEAD,
                                       strlen(KW_RESULTS_NOTE_AHEAD)) == 0
                                   ? KW_RESULTS_NOTE_AHEAD
                                   : "ranking " KW_RESULTS_NOTE_UNRESOLVED);
                kw_sbuf_shell(&cmd, dir);
                kw_sbuf_puts(&cmd, " --shape ");
                kw_sbuf_shell(&cmd, j->h.shape_names[s]);
            }
            printf("  %-32s (%s at %s; on %s: %.1f -> %.1f us (%+.1f%%))%s\n", "", label, src,
                   srch, r.baseline_primary, r.best_primary,
                   r.baseline_primary > 0 ? (r.best_primary - r.baseline_primary) /
                                                r.baseline_primary * 100.0 : 0.0,
                   kw_sbuf_status(&cmd) == 0 && cmd.len ? kw_sbuf_cstr(&cmd) : "");
            kw_sbuf_free(&cmd);
        } else if (said == 1) { /* no re-check: the figures above are the journal's, said so */
            char src[96];
            kw_results_basis_words(src, sizeof src, &h);
            printf("  %-32s (%s at %s: no re-check at the final sample in results.xml)\n", "",
                   label, src);
        }
        kw_journal_result_clear(&r);
    }
done:
    if (rs)
        kw_results_ranking_free(notes, rs->n_shapes);
    kw_runsum_free(rs);
    kw_reduce_free(S.red);
    free(S.sat);
    free(S.sat_shape);
    kw_journal_free(j);
}

void kw_cli_tune_ui_start(kw_cli_tune_ui *ui, const kw_run *r, int quiet)
{
    int tty = isatty(STDERR_FILENO);
    const char *term = getenv("TERM");
    memset(ui, 0, sizeof *ui);
    ui->draw = !quiet && tty;
    ui->ansi = term && term[0] && strcmp(term, "dumb") != 0;
    ui->plain = !quiet && !tty;
    ui->t0 = ui->last_plain = kw_tune_ui_now();
    ui->plain_every_s = KW_TUNE_PLAIN_EVERY_S;
    const char *every = ui->plain ? getenv(KW_TUNE_PLAIN_ENV) : NULL;
    double v = KW_TUNE_PLAIN_EVERY_S;
    if (every && (kw_num_double(&v, every) != 0 || v < 0 || v > 1e9))
        fprintf(stderr, "knobwise tune: warning: %s=%s is not a number of seconds in [0, 1e9]; "
                        "progress every %.0f s\n", KW_TUNE_PLAIN_ENV, every,
                KW_TUNE_PLAIN_EVERY_S);
    else if (every)
        ui->plain_every_s = v;
    ui->shape_names = kw_run_shape_names(r);
    ui->metric = kw_run_metric(r);
    if (ui->plain && kw_run_replay_records(r) >= 0) {
        /* said before the engine starts, so even a replay of one round is named */
        fprintf(stderr, "knobwise tune: resume: replaying %ld journal records (no evaluation is "
                        "repeated)\n", kw_run_replay_records(r));
        ui->replay_said = 1;
    }
}

/* "LEAD knobwise tune --resume DIR\n" on stderr, DIR one shell word
 * (kw_sbuf_shell): a run folder named "my runs;x" printed as it was gave a
 * command that failed or ran another one when pasted. */
static void kw_resume_hint(const char *lead, const char *dir)
{
    kw_sbuf w = {0};
    kw_sbuf_shell(&w, dir);
    fprintf(stderr, "%sknobwise tune --resume %s\n", lead,
            kw_sbuf_status(&w) == 0 ? kw_sbuf_cstr(&w) : dir);
    kw_sbuf_free(&w);
}

/* A stop flag's signal, as the messages name it (kw_tune_catch catches these three). */
static const char *kw_tune_sig_name(int sig)
{
    return sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : sig == SIGINT ? "SIGINT"
                                                                                 : "a signal";
}

int kw_cli_tune_ui_end(const kw_run *r, const kw_run_outcome *out, int rc, int quiet)
{
    const char *dir = kw_run_dir(r);
    if (out->engine_rc != 0 && out->engine_rc != KW_EINTERRUPTED)
        return kw_cli_fail("tune", rc);
    if (rc != 0) {
        kw_cli_fail("tune", rc);
        kw_resume_hint("knobwise tune: the journal is intact; rewrite the results with: ", dir);
        return 1;
    }
    if (out->evidence_note[0])
        fprintf(stderr, "knobwise tune: warning: the evidence evaluations are not kept (%s): a "
                        "resume after a cut would make them again\n", out->evidence_note);
    if (!quiet && out->evidence_kept > 0)
        fprintf(stderr, "knobwise tune: evidence: %ld evaluations read back from %s/%s (kept by "
                        "an earlier tune of this run, not evaluated again)\n", out->evidence_kept,
                dir, KW_RUNFOLDER_EVIDENCE);
    if (!quiet)
        kw_cli_tune_ui_summary(dir, kw_run_journal(r));
    if (!quiet && out->ranks[0])
        printf("knobwise tune: %s\n", out->ranks);
    if (!out->signal && out->engine_rc == KW_EINTERRUPTED && out->stopped_rank > 0) {
        /* mpirun: a signal to another rank stopped its evaluation, and no
         * signal reached this one (it said "interrupted (SIGINT)" until
         * 2026-12-07); the exit status is that rank's, as its own is */
        int sig = out->stopped_signal;
        fprintf(stderr, "knobwise tune: paused: rank %d stopped (%s); the journal holds every "
                        "step before it; results so far in %s\n",
                out->stopped_rank, kw_tune_sig_name(sig), dir);
        kw_resume_hint("resume with: ", dir);
        return 128 + sig;
    }
    if (out->engine_rc == KW_EINTERRUPTED || out->signal) { /* during the search or the writing */
        int sig = out->signal ? out->signal : SIGINT;
        fprintf(stderr, "knobwise tune: interrupted (%s); the journal holds every step before "
                        "it; results so far in %s\n",
                kw_tune_sig_name(sig), dir);
        kw_resume_hint("resume with: ", dir);
        return 128 + sig;
    }
    if (out->sum.stop == KW_STOP_TIME || out->evidence_cut) {
        if (out->sum.stop == KW_STOP_TIME)
            fprintf(stderr, "knobwise tune: time limit reached after %.0f s; results so far in "
                            "%s\n", out->elapsed_s, dir);
        else
            fprintf(stderr, "knobwise tune: time limit reached during the evidence (the search "
                            "is done); results so far in %s\n", dir);
        if (out->evidence_cut)
            fprintf(stderr, "knobwise tune: without the evidence (each shape's re-check at the "
                            "final sample, the portability matrix): a resume continues it%s%s%s\n",
                    out->evidence_file ? ", every evidence evaluation made so far kept in " : "",
                    out->evidence_file ? dir : "",
                    out->evidence_file ? "/" KW_RUNFOLDER_EVIDENCE : "");
        kw_resume_hint("continue with: ", dir);
        /* the evidence's first evaluation of a process is made whole, so
         * each resume keeps one (kw_evidence_pool.deadline_s); without a
         * RUN/evidence (its note) nothing is kept, and a cut loses it */
        if (out->evidence_past_s > 0)
            fprintf(stderr, "knobwise tune: the first evidence evaluation was finished %.3g s "
                            "past the time limit (one is made whole each time, so that each "
                            "resume keeps one more and the run ends under any limit; SIGTERM "
                            "still cuts it)\n",
                    out->evidence_past_s);
        if (out->evidence_cut && out->evidence_started && out->evidence_added == 0 &&
            out->evidence_note[0])
            fprintf(stderr, "knobwise tune: no evidence evaluation was kept (%s/%s cannot be "
                            "written): give the resume a --time-limit longer than the evidence, "
                            "or none\n", dir, KW_RUNFOLDER_EVIDENCE);
        /* the limit stops a run inside an evaluation and drops that round;
         * the resume after such a pause makes its first round whole (kw_pause,
         * search/kw_engine.c), so a limit shorter than one round still ends */
        if (out->sum.stop == KW_STOP_TIME && out->sum.idle > 0)
            fprintf(stderr, "knobwise tune: no evaluation finished within the time limit (one "
                            "round takes longer): the next resume finishes its first round "
                            "whole, past the limit if it must, so that the run goes on; or give "
                            "a longer --time-limit\n");
        else if (out->sum.stop == KW_STOP_TIME && out->sum.whole)
            fprintf(stderr, "knobwise tune: its first round was made whole whatever the limit "
                            "(the tune before it kept none), and kept\n");
    }
    return 0;
}
