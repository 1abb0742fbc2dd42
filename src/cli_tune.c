/* cli_tune.c - `knobwise tune`: the overnight job. Parses the options, hands
 * them to the run module (kw_run.h: the run folder, the inputs and their hash,
 * the engine, the evidence phase, the result files) and prints: the progress
 * while it runs, one line per shape at the end, and what to do after a pause.
 *
 * Design choice: the verb owns nothing of the run. Everything a later
 * `--resume DIR`, `verify` or `audit` needs is recorded in the journal
 * header by kw_run_create, so `tune --resume DIR` takes no other input; only
 * --threads, --time-limit, --results-every and --quiet may differ on resume,
 * because they cannot change the results.
 *
 * Signals: SIGINT/SIGTERM set a flag the engine reads between rounds and the
 * serving simulation reads inside an evaluation (every 65,536 events, as it
 * reads the --time-limit deadline); a round cut short is dropped, not
 * journaled; the journal gets a pause record, the results so far are written
 * and the command exits 130/143 saying how to resume. The handler
 * is one-shot (SA_RESETHAND): a second Ctrl-C kills at once, which the journal
 * survives too.
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kw_cli.h"
#include "kw_guards.h"
#include "kw_journal.h"
#include "kw_limits.h"
#include "kw_metric.h"
#include "kw_mpi.h"
#include "kw_progline.h"
#include "kw_reduce.h"
#include "kw_run.h"

#define KW_TUNE_REWRITE_S 300.0   /* best-so-far results rewritten this often by default */
#define KW_TUNE_DRAW_S 0.2        /* progress line refresh */
#define KW_TUNE_BLOCK_MAX 16      /* running shapes given a line each, at most */
#define KW_TUNE_BLOCK_SPARE_ROWS 3 /* rows the block leaves free on the screen */
#define KW_TUNE_THREADS_MAX 256

static volatile sig_atomic_t kw_tune_sig;

static void kw_tune_on_signal(int sig) { kw_tune_sig = sig; }

static double kw_tune_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void kw_tune_help(void)
{
    printf("usage: knobwise tune [--space F] [--accel F] [--workload F] [--trace F] [--shape NAME]...\n"
           "                     [--strategy ofat|random|exhaustive] [--policy sweep|greedy]\n"
           "                     [--budget N] [--time-limit S] [--metric p95|p99] [--seed N]\n"
           "                     [--threads N] [--out DIR] [--owner NAME] [--quiet]\n"
           "                     [--repeats N] [--tabu N] [--probes N] [--requests N] [--thermal]\n"
           "                     [--results-every S] [--evaluator model|exec:CMD] [--timeout S]\n"
           "                     [--screen K] [--no-estimate]\n"
           "       knobwise tune --resume DIR [--threads N] [--time-limit S] [--quiet]\n\n"
           "Tune every shape of the space (or the --shape ones) one knob per step, from\n"
           "the baseline, and write DIR/journal, results.xml, ranked.csv, audit.csv and\n"
           "portability.csv. With no file options the embedded default job is tuned.\n\n"
           "  --strategy S     ofat (default) or the baselines random / exhaustive\n"
           "  --policy P       sweep (cycle through the knobs, default) or greedy\n"
           "                   (every single-knob neighbour, take the best)\n"
           "  --budget N       evaluations per shape (default 0: until convergence;\n"
           "                   random needs one)\n"
           "  --time-limit S   stop the whole run after S seconds (resumable)\n"
           "  --metric M       primary metric: p95 (default) or p99, lower is better\n"
           "  --seed N         every random stream of the run (default 1)\n"
           "  --threads N      evaluation threads (default: the CPUs; never more than\n"
           "                   the CPUs online); results do not depend on it\n"
           "  --out DIR        run folder (default results/tune-DATE-TIME)\n"
           "  --resume DIR     continue an interrupted run; evaluations in its journal\n"
           "                   are not repeated and the result equals an uninterrupted run\n"
           "  --owner NAME     recorded in every rollback boundary (default $USER)\n"
           "  --repeats N      evaluations per candidate when the evaluator is noisy (5)\n"
           "  --tabu N         exploratory steps to leave a local optimum (default 3, 0 off)\n"
           "  --probes N       two-step probes of knob pairs per convergence (32, 0 off)\n"
           "  --requests N     serving-simulation sample size (default: the space's)\n"
           "  --thermal        also simulate the long thermal window for every candidate\n"
           "  --results-every S  rewrite the best-so-far results every S seconds (300;\n"
           "                   0: only at the end)\n"
           "  --quiet          no progress line and no summary\n"
           "  --evaluator E    model, or exec:CMD: a worker command measures stage 1 (README:\n"
           "                   the worker protocol; default: the space's <evaluator>)\n"
           "  --timeout S      seconds the worker may take per candidate (default: the space's)\n"
           "  --screen K       with a measuring evaluator: the model ranks each round's new\n"
           "                   configs and only its best K are measured (the others are\n"
           "                   journaled as failing the guard 'screened')\n"
           "  --no-estimate    evaluate every candidate of a round in plan order: no\n"
           "                   ordering or early stop by the evaluator's cheap estimate\n"
           "                   (default: ofat orders each sweep and probe round by it and\n"
           "                   skips what cannot gain within its measured error; P records)\n\n"
           "On a terminal a progress line on stderr, fitted to its width (TIOCGWINSZ,\n"
           "else $COLUMNS), shows shapes done, total evaluations, each running shape's\n"
           "evaluations against its estimate and its best primary against the baseline,\n"
           "evaluations per second and two ETAs: from convergence (what each running\n"
           "shape's current local optimum still costs if nothing improves: its unseen\n"
           "neighbours, probes and excursion; scaled by the finished shapes' ratio of\n"
           "total to first-optimum evaluations once one finished; '>=' while it is only a\n"
           "lower bound) and from the budget; with room on an ANSI terminal, each running\n"
           "shape gets its own line. When stderr is not a terminal it gets one plain line\n"
           "per finished shape instead; a resume says when it replays its journal.\n"
           "SIGINT/SIGTERM stop within a fraction of a second (a round cut short is\n"
           "evaluated again on resume), write the results so far and exit 130/143;\n"
           "resume with --resume DIR. Exit status: 0 done (or time limit\n"
           "reached), 1 runtime failure, 2 bad input or usage.\n");
}

static const char *kw_tune_metric_label(const char *metric)
{
    return strcmp(metric, KW_METRIC_NAME(KW_M_P99_US)) == 0 ? "p99" : "p95";
}

/* ------------------------------------------------------------------ progress */

typedef struct kw_tune_ui {
    int draw;                    /* progress line on stderr (a terminal) */
    int plain;                   /* stderr is not a terminal: one plain line per finished shape */
    int drawn;                   /* the first line on screen is this many columns wide */
    int lines;                   /* lines of progress on screen (0: none) */
    int ansi;                    /* the terminal takes ANSI cursor control (TERM not dumb) */
    const char *const *shape_names; /* the evaluator's, indexed like the progress's */
    const char *metric;
    double last_draw;
    int replay_said;             /* plain: the replay's start (1) and end (2) were said */
    char said_done[KW_JOURNAL_SHAPE_MAX]; /* plain: this tuned shape's line is written */
    int n_said;
    const kw_run *mpi;           /* mpirun: the run whose ranks' rates are shown (NULL: none) */
} kw_tune_ui;

static void kw_tune_clear_line(kw_tune_ui *ui)
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
static void kw_tune_draw(kw_tune_ui *ui, const kw_progress *p)
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
 * starts and ends its replay, and one per shape as it finishes. */
static void kw_tune_plain(kw_tune_ui *ui, const kw_progress *p)
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
    fflush(stderr);
}

static void kw_tune_progress(void *ud, const kw_run *r, const kw_progress *p)
{
    kw_tune_ui *ui = ud;
    double now = kw_tune_now();
    ui->mpi = r;
    if (ui->plain)
        kw_tune_plain(ui, p);
    if (ui->draw && now - ui->last_draw >= KW_TUNE_DRAW_S) {
        ui->last_draw = now;
        kw_tune_draw(ui, p);
    }
}

static void kw_tune_rewrite_failed(void *ud, const kw_run *r)
{
    (void)r;
    kw_tune_clear_line(ud);
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
    if (r->type == 'E' && kw_guards_saturated(r->e.guards)) {
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

static void kw_tune_summary(const char *dir, const char *journal)
{
    kw_tune_sum S;
    memset(&S, 0, sizeof S);
    kw_journal *j = NULL;
    if (kw_journal_scan(&j, journal, kw_tune_summary_rec, &S) != 0 ||
        (!S.red && kw_reduce_new(&S.red, &j->h) != 0))
        goto done;
    const char *label = kw_tune_metric_label(j->h.metric);
    printf("knobwise tune: %s (seed %llu, %s%s%s)\n", dir, (unsigned long long)j->h.seed,
           kw_strategy_name(j->h.strategy), j->h.strategy == KW_STRATEGY_OFAT ? "/" : "",
           j->h.strategy == KW_STRATEGY_OFAT ? kw_policy_name(j->h.policy) : "");
    for (int i = 0; i < j->h.n_tuned; i++) {
        int s = j->h.tuned[i];
        kw_jresult r;
        if (kw_reduce_result(&r, S.red, s) != 0)
            continue;
        char effect[40];
        const char *sat = kw_guards_saturation(kw_tune_sat_guards(&S, s, r.baseline_id),
                                                kw_tune_sat_guards(&S, s, r.best_id));
        if (sat)
            snprintf(effect, sizeof effect, "%s", sat);
        else
            snprintf(effect, sizeof effect, "%+6.1f%%",
                     r.baseline_primary != 0 && isfinite(r.baseline_primary)
                         ? (r.best_primary - r.baseline_primary) / r.baseline_primary * 100.0
                         : 0.0);
        char cheap[64] = ""; /* multi-fidelity screening: the cheap estimates beside the evaluations */
        if (j->pred_n[s] > 0)
            snprintf(cheap, sizeof cheap, "  (+%ld estimates, %ld ruled out)", j->pred_n[s],
                     j->pred_skip[s]);
        printf("  %-32s %s %10.1f -> %10.1f us (%s)  %2d knob%s changed  %5ld evals  %s%s\n",
               j->h.shape_names[s], label, r.baseline_primary, r.best_primary, effect,
               r.n_changes, r.n_changes == 1 ? "" : "s", r.evals,
               r.done ? r.why : "incomplete: best so far", cheap);
        kw_journal_result_clear(&r);
    }
done:
    kw_reduce_free(S.red);
    free(S.sat);
    free(S.sat_shape);
    kw_journal_free(j);
}

/* ------------------------------------------------------------------ the run */

typedef struct kw_tune_args {
    const char *space, *accel, *workload, *trace, *out, *resume, *owner;
    const char *shapes[KW_SHAPE_MAX];
    int n_shapes;
    kw_strategy strategy;
    kw_policy policy;
    long budget, requests;
    double time_limit_s, every_s;
    const char *metric;
    const char *evaluator;       /* --evaluator model|exec:CMD (NULL: the space's) */
    double timeout_s;            /* --timeout: per-candidate worker timeout (0: the space's) */
    long screen;                 /* --screen K: measure only the model's best K per round */
    int no_estimate;             /* --no-estimate: no multi-fidelity screening */
    uint64_t seed;
    int threads, quiet, repeats, tabu, probes, thermal;
    int only_resume_opts;        /* an option that --resume does not take was given */
} kw_tune_args;

/* The engine has returned: the progress off the screen, the signals back to
 * their defaults (the evidence phase is not cancelled), a torn tail said. */
typedef struct kw_tune_exec_ui {
    kw_tune_ui ui;
    struct sigaction old_int, old_term;
} kw_tune_exec_ui;

static void kw_tune_engine_done(void *ud, const kw_run *r, const kw_run_outcome *out)
{
    kw_tune_exec_ui *x = ud;
    (void)r;
    sigaction(SIGINT, &x->old_int, NULL);
    sigaction(SIGTERM, &x->old_term, NULL);
    kw_tune_clear_line(&x->ui);
    if (out->sum.torn)
        fprintf(stderr, "knobwise tune: %s; truncated to the last good record\n",
                out->sum.torn_msg);
}

/* Run r (made by kw_run_create or kw_run_resume) and say how it ended. */
static int kw_tune_exec(kw_run *r, int quiet, double every_s)
{
    int tty = isatty(STDERR_FILENO);
    const char *term = getenv("TERM");
    kw_tune_exec_ui x = {.ui = {.draw = !quiet && tty,
                                .ansi = term && term[0] && strcmp(term, "dumb") != 0,
                                .plain = !quiet && !tty,
                                .shape_names = kw_run_shape_names(r),
                                .metric = kw_run_metric(r)}};
    const char *dir = kw_run_dir(r);
    if (x.ui.plain && kw_run_replay_records(r) > 0) {
        /* said before the engine starts, so even a replay of one round is named */
        fprintf(stderr, "knobwise tune: resume: replaying %ld journal records (no evaluation is "
                        "repeated)\n", kw_run_replay_records(r));
        x.ui.replay_said = 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = kw_tune_on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &x.old_int);
    sigaction(SIGTERM, &sa, &x.old_term);
    kw_run_ctl ctl = {.stop = &kw_tune_sig,
                      .every_s = every_s,
                      .progress = kw_tune_progress,
                      .rewrite_failed = kw_tune_rewrite_failed,
                      .engine_done = kw_tune_engine_done,
                      .ud = &x};
    kw_run_outcome out;
    int rc = kw_run_exec(r, &out, &ctl);
    if (out.engine_rc != 0 && out.engine_rc != KW_EINTERRUPTED)
        return kw_cli_fail("tune", rc);
    if (rc != 0) {
        kw_cli_fail("tune", rc);
        fprintf(stderr, "knobwise tune: the journal is intact; rewrite the results with "
                        "'knobwise tune --resume %s'\n", dir);
        return 1;
    }
    if (!quiet)
        kw_tune_summary(dir, kw_run_journal(r));
    if (!quiet && out.ranks[0])
        printf("knobwise tune: %s\n", out.ranks);
    if (out.engine_rc == KW_EINTERRUPTED) {
        fprintf(stderr, "knobwise tune: interrupted (%s); the journal holds every step before "
                        "it; results so far in %s\nresume with: knobwise tune --resume %s\n",
                out.signal == SIGTERM ? "SIGTERM" : "SIGINT", dir, dir);
        return out.signal == SIGTERM ? 143 : 130;
    }
    if (out.sum.stop == KW_STOP_TIME) {
        fprintf(stderr, "knobwise tune: time limit reached after %.0f s; results so far in %s\n"
                        "continue with: knobwise tune --resume %s\n",
                out.sum.elapsed_s, dir, dir);
        /* the limit stops a run inside an evaluation and drops that round:
         * a limit shorter than one round never gets further */
        if (out.sum.evals == 0)
            fprintf(stderr, "knobwise tune: no evaluation finished within the time limit (one "
                            "round takes longer): give a longer --time-limit\n");
    }
    return 0;
}

/* A failed kw_run_create / kw_run_resume, said as the command line's fault
 * (usage) or the run's. */
static int kw_tune_failed(int rc, int usage)
{
    if (usage)
        return kw_cli_usage_error("tune", "%s", kw_error_last());
    return kw_cli_fail("tune", rc);
}

static int kw_tune_fresh(const kw_tune_args *a)
{
    kw_run_opts o = {.space = a->space, .accel = a->accel, .workload = a->workload,
                     .trace = a->trace, .out = a->out, .owner = a->owner,
                     .shapes = a->shapes, .n_shapes = a->n_shapes,
                     .strategy = a->strategy, .policy = a->policy, .budget = a->budget,
                     .requests = a->requests, .time_limit_s = a->time_limit_s,
                     .metric = a->metric, .evaluator = a->evaluator, .timeout_s = a->timeout_s,
                     .screen = a->screen, .no_estimate = a->no_estimate, .seed = a->seed,
                     .threads = a->threads, .repeats = a->repeats, .tabu = a->tabu,
                     .probes = a->probes, .thermal = a->thermal};
    kw_run *r = NULL;
    int usage = 0, rc = kw_run_create(&r, &usage, &o, &kw_tune_sig);
    int status = rc != 0 ? kw_tune_failed(rc, usage) : kw_tune_exec(r, a->quiet, a->every_s);
    kw_run_free(r);
    return status;
}

static int kw_tune_resume(const kw_tune_args *a)
{
    kw_run *r = NULL;
    int usage = 0,
        rc = kw_run_resume(&r, &usage, a->resume, a->threads, a->time_limit_s, &kw_tune_sig);
    int status = rc != 0 ? kw_tune_failed(rc, usage) : kw_tune_exec(r, a->quiet, a->every_s);
    kw_run_free(r);
    return status;
}

static int kw_tune_main(int argc, char **argv)
{
    enum { O_SPACE = 1000, O_ACCEL, O_WORKLOAD, O_TRACE, O_SHAPE, O_STRATEGY, O_POLICY, O_BUDGET,
           O_TIME, O_METRIC, O_SEED, O_THREADS, O_OUT, O_RESUME, O_OWNER, O_QUIET, O_REPEATS,
           O_TABU, O_PROBES, O_REQUESTS, O_THERMAL, O_EVERY, O_EVALUATOR, O_TIMEOUT, O_SCREEN, O_NO_ESTIMATE, O_HELP };
    static const struct option opts[] = {
        {"space", required_argument, 0, O_SPACE},     {"accel", required_argument, 0, O_ACCEL},
        {"workload", required_argument, 0, O_WORKLOAD}, {"trace", required_argument, 0, O_TRACE},
        {"shape", required_argument, 0, O_SHAPE},     {"strategy", required_argument, 0, O_STRATEGY},
        {"policy", required_argument, 0, O_POLICY},   {"budget", required_argument, 0, O_BUDGET},
        {"time-limit", required_argument, 0, O_TIME}, {"metric", required_argument, 0, O_METRIC},
        {"seed", required_argument, 0, O_SEED},       {"threads", required_argument, 0, O_THREADS},
        {"out", required_argument, 0, O_OUT},         {"resume", required_argument, 0, O_RESUME},
        {"owner", required_argument, 0, O_OWNER},     {"quiet", no_argument, 0, O_QUIET},
        {"repeats", required_argument, 0, O_REPEATS}, {"tabu", required_argument, 0, O_TABU},
        {"probes", required_argument, 0, O_PROBES},   {"requests", required_argument, 0, O_REQUESTS},
        {"thermal", no_argument, 0, O_THERMAL},       {"results-every", required_argument, 0, O_EVERY},
        {"evaluator", required_argument, 0, O_EVALUATOR},
        {"timeout", required_argument, 0, O_TIMEOUT},
        {"screen", required_argument, 0, O_SCREEN},
        {"no-estimate", no_argument, 0, O_NO_ESTIMATE},
        {"help", no_argument, 0, O_HELP},             {0, 0, 0, 0}};
    kw_engine_opts defaults;
    kw_engine_opts_init(&defaults);
    kw_tune_args a;
    memset(&a, 0, sizeof a);
    a.strategy = KW_STRATEGY_OFAT;
    a.policy = KW_POLICY_SWEEP;
    a.metric = KW_METRIC_NAME(KW_M_P95_US);
    a.seed = 1;
    a.repeats = defaults.repeats;
    a.tabu = defaults.tabu;
    a.probes = defaults.probes;
    a.every_s = KW_TUNE_REWRITE_S;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    a.threads = cpus < 1 ? 1 : (cpus > 64 ? 64 : (int)cpus);
    const char *user = getenv("USER");
    a.owner = user && user[0] ? user : "unknown";
    long v;
    double d;
    int o;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int resume_ok = 0;
        switch (o) {
        case O_SPACE: a.space = optarg; break;
        case O_ACCEL: a.accel = optarg; break;
        case O_WORKLOAD: a.workload = optarg; break;
        case O_TRACE: a.trace = optarg; break;
        case O_SHAPE:
            if (a.n_shapes == KW_SHAPE_MAX)
                return kw_cli_usage_error("tune", "too many --shape options");
            a.shapes[a.n_shapes++] = optarg;
            break;
        case O_STRATEGY: {
            int s = kw_strategy_parse(optarg);
            if (s < 0)
                return kw_cli_usage_error("tune", "--strategy takes ofat, random or exhaustive, not '%s'",
                                          optarg);
            a.strategy = (kw_strategy)s;
            break;
        }
        case O_POLICY: {
            int p = kw_policy_parse(optarg);
            if (p < 0)
                return kw_cli_usage_error("tune", "--policy takes sweep or greedy, not '%s'", optarg);
            a.policy = (kw_policy)p;
            break;
        }
        case O_BUDGET:
            if (kw_cli_parse_long(&a.budget, "tune", "--budget", optarg, 0, 1L << 40))
                return 2;
            break;
        case O_TIME:
            if (kw_cli_parse_double(&a.time_limit_s, "tune", "--time-limit", optarg, 0, 1e9))
                return 2;
            resume_ok = 1;
            break;
        case O_METRIC:
            if (strcmp(optarg, "p95") == 0 || strcmp(optarg, KW_METRIC_NAME(KW_M_P95_US)) == 0)
                a.metric = KW_METRIC_NAME(KW_M_P95_US);
            else if (strcmp(optarg, "p99") == 0 || strcmp(optarg, KW_METRIC_NAME(KW_M_P99_US)) == 0)
                a.metric = KW_METRIC_NAME(KW_M_P99_US);
            else
                return kw_cli_usage_error("tune", "--metric takes p95 or p99, not '%s'", optarg);
            break;
        case O_SEED:
            if (kw_cli_parse_long(&v, "tune", "--seed", optarg, 0, LONG_MAX))
                return 2;
            a.seed = (uint64_t)v;
            break;
        case O_THREADS:
            if (kw_cli_parse_long(&v, "tune", "--threads", optarg, 1, KW_TUNE_THREADS_MAX))
                return 2;
            a.threads = (int)v;
            resume_ok = 1;
            break;
        case O_OUT: a.out = optarg; break;
        case O_RESUME:
            a.resume = optarg;
            resume_ok = 1;
            break;
        case O_OWNER: a.owner = optarg; break;
        case O_QUIET:
            a.quiet = 1;
            resume_ok = 1;
            break;
        case O_REPEATS:
            if (kw_cli_parse_long(&v, "tune", "--repeats", optarg, 2, 1024))
                return 2;
            a.repeats = (int)v;
            break;
        case O_TABU:
            if (kw_cli_parse_long(&v, "tune", "--tabu", optarg, 0, 64))
                return 2;
            a.tabu = (int)v;
            break;
        case O_PROBES:
            if (kw_cli_parse_long(&v, "tune", "--probes", optarg, 0, 64))
                return 2;
            a.probes = (int)v;
            break;
        case O_REQUESTS:
            /* the simulator's limit with its warm-up (kw_limits.h), as validate checks
             * the space's sim_requests */
            if (kw_cli_parse_long(&a.requests, "tune", "--requests", optarg, 1,
                                  kw_sim_max_sample()))
                return 2;
            break;
        case O_THERMAL: a.thermal = 1; break;
        case O_EVERY:
            if (kw_cli_parse_double(&d, "tune", "--results-every", optarg, 0, 1e9))
                return 2;
            a.every_s = d;
            resume_ok = 1;
            break;
        case O_EVALUATOR: a.evaluator = optarg; break;
        case O_TIMEOUT:
            if (kw_cli_parse_double(&a.timeout_s, "tune", "--timeout", optarg, 0.001, 1e6))
                return 2;
            break;
        case O_SCREEN:
            if (kw_cli_parse_long(&a.screen, "tune", "--screen", optarg, 1, 100000))
                return 2;
            break;
        case O_NO_ESTIMATE: a.no_estimate = 1; break;
        case O_HELP: kw_tune_help(); return 0;
        default:
            return kw_cli_usage_error("tune", "unknown option '%s'", argv[optind - 1]);
        }
        if (!resume_ok)
            a.only_resume_opts = 1;
    }
    if (optind < argc)
        return kw_cli_usage_error("tune", "unexpected argument '%s'", argv[optind]);
    /* Memory grows with the evaluations in flight (each holds its simulation's
     * working set; the final re-check's, at final_requests, is the largest):
     * --threads 256 peaked at 655 MB on 2 CPUs for no speed. Threads beyond
     * the CPUs online buy nothing for the model evaluator, so they are not
     * started; the results do not depend on the thread count. A
     * measuring evaluator named on the command line (exec:CMD) waits on its
     * workers, not the CPUs: its threads are left as asked. */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int measuring = a.evaluator && strncmp(a.evaluator, "exec:", 5) == 0;
    if (online >= 1 && a.threads > online && !measuring) {
        if (!a.quiet)
            fprintf(stderr, "knobwise tune: --threads %d: %ld CPUs online, running %ld evaluation "
                            "threads (more would add memory, not speed)\n", a.threads, online,
                    online);
        a.threads = (int)online;
    }
    if (a.resume) {
        if (a.only_resume_opts)
            return kw_cli_usage_error("tune", "--resume takes only --threads, --time-limit, "
                                      "--results-every and --quiet: the run's own options and "
                                      "inputs are in its journal");
        return kw_tune_resume(&a);
    }
    if (a.strategy == KW_STRATEGY_RANDOM && a.budget == 0)
        return kw_cli_usage_error("tune", "--strategy random needs --budget N");
    return kw_tune_fresh(&a);
}

/* A rank other than 0 of `mpirun -n N knobwise tune`: rank 0 parses the
 * command line and sends the run's recorded attributes and input hashes;
 * this rank builds the same evaluator from them (as a resume does from its
 * journal), refuses inputs that hash differently from rank 0's, and
 * evaluates what rank 0 sends until the run is over (kw_run_serve). It
 * writes nothing. A signal stops its evaluations as it stops rank 0's. */
static int kw_tune_mpi_rank(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = kw_tune_on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    kw_tune_sig = 0;
    int rc = kw_run_serve(&kw_tune_sig);
    return rc != 0 ? kw_cli_fail("tune", rc) : 0;
}

int kw_cli_tune(int argc, char **argv)
{
    /* mpirun: every rank runs this; rank 0 is the run, the others evaluate */
    int rc = kw_mpi_init();
    int status = rc != 0 ? kw_cli_fail("tune", rc)
                 : kw_mpi_rank() == 0 ? kw_tune_main(argc, argv) : kw_tune_mpi_rank();
    kw_mpi_finish();
    return status;
}
