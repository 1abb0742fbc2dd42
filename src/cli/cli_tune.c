/* cli_tune.c - `knobwise tune`: the overnight job. Loads the inputs, builds the
 * model evaluator, runs the search engine (search/kw_engine.h) into RUN_DIR/journal
 * and writes the result files from the journal (kw_results_write).
 *
 * Design choice: everything a later `--resume DIR`, `verify` or `audit` needs is
 * recorded in the journal header (options, input paths and hashes, model
 * options as attributes), so `tune --resume DIR` takes no other input and cannot
 * be given a different one by mistake: the engine refuses a journal whose inputs
 * changed. Only --threads, --time-limit, --results-every and --quiet may differ
 * on resume, because they cannot change the results.
 *
 * Signals: SIGINT/SIGTERM set a flag the engine reads between rounds and the
 * serving simulation reads inside an evaluation (every 65,536 events, as it
 * reads the --time-limit deadline); a round cut short is dropped, not
 * journaled; the journal gets a pause record, the results so far are written
 * and the command exits 130/143 saying how to resume. The handler
 * is one-shot (SA_RESETHAND): a second Ctrl-C kills at once, which the journal
 * survives too.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "kw_cli.h"
#include "kw_engine.h"
#include "kw_eval.h"
#include "kw_hash.h"
#include "kw_exec.h"
#include "kw_input.h"
#include "kw_journal.h"
#include "kw_knobuse.h"
#include "kw_hint.h"
#include "kw_limits.h"
#include "kw_load.h"
#include "kw_mpi.h"
#include "kw_netpath.h"
#include "kw_progline.h"
#include "kw_reduce.h"
#include "kw_results.h"
#include "kw_run.h"
#include "kw_runfolder.h"
#include "kw_trace.h"

/* The largest space `--strategy exhaustive` takes without --budget, per shape:
 * at the measured 1,300-1,600 full evaluations/s (README, make bench) a million
 * configurations take 10-13 minutes per shape on one core and ~0.5 GB of
 * journal (502 bytes per evaluation, make soak); the default space's 7.5e12
 * would take about 170 years. */
#define KW_TUNE_EXHAUSTIVE_MAX 1e6
#define KW_TUNE_REWRITE_S 300.0   /* best-so-far results rewritten this often by default */
#define KW_TUNE_DRAW_S 0.2        /* progress line refresh */
#define KW_TUNE_BLOCK_MAX 16      /* running shapes given a line each, at most */
#define KW_TUNE_BLOCK_SPARE_ROWS 3 /* rows the block leaves free on the screen */
#define KW_TUNE_THREADS_MAX 256
#define KW_TUNE_N_ATTRS 16

static volatile sig_atomic_t kw_tune_sig;

static void kw_tune_on_signal(int sig) { kw_tune_sig = sig; }
/* The --time-limit as a CLOCK_MONOTONIC deadline (0: none), read by the
 * search's evaluations so one long evaluation cannot outlive the limit. */
static double kw_tune_deadline_s;

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

/* ------------------------------------------------------------------ helpers */

/* mkdir -p; errors name the path that could not be made. */
static int kw_tune_mkdirs(const char *path)
{
    char buf[KW_PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return kw_error_set(KW_EINPUT, "%s: path too long", path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            struct stat st;
            if (stat(buf, &st) != 0) {
                if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                    return kw_error_set(KW_EIO, "%s: cannot create the run folder: %s", buf,
                                        strerror(errno));
            } else if (!S_ISDIR(st.st_mode)) {
                /* --out names a file (or passes through one): bad input, exit 2 */
                return kw_error_set(KW_EINPUT, "%s: cannot create the run folder %s: %s", buf,
                                    path, strerror(ENOTDIR));
            }
            *p = c;
            if (c == '\0')
                break;
        }
    }
    /* a folder we cannot write into is refused now, not after the first round */
    if (access(path, W_OK) != 0)
        return kw_error_set(KW_EIO, "%s: cannot write into the run folder: %s", path,
                            strerror(errno));
    return 0;
}

/* Absolute path of an existing file (recorded so resume works from anywhere).
 * Never truncated: KW_EINPUT when it does not fit (a cut path names another
 * file). */
static int kw_tune_abs(char *out, size_t n, const char *path)
{
    char buf[PATH_MAX];
    const char *use = path ? path : "";
    if (use[0] && realpath(use, buf))
        use = buf;
    size_t len = strlen(use);
    if (len >= n) {
        out[0] = '\0';
        return kw_error_set(KW_EINPUT, "%.200s...: path too long (%zu bytes, at most %zu)", use,
                            len, n - 1);
    }
    memcpy(out, use, len + 1);
    return 0;
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
    const kw_evaluator *ev;
    const int *shapes;           /* tuned evaluator shapes */
    const char *metric;
    const char *dir;
    const kw_config *cfg;
    const char *owner;
    double every_s;              /* results rewrite period, 0 = off */
    double last_draw, last_write;
    int write_failed;
    int replay_said;             /* plain: the replay's start (1) and end (2) were said */
    char said_done[KW_JOURNAL_SHAPE_MAX]; /* plain: this tuned shape's line is written */
    int n_said;
    const kw_mpi_pool *mpi;      /* mpirun: the ranks' evaluation rates (NULL: one process) */
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
    size_t len = kw_progline_summary(line, sizeof line, p, ui->ev->shape_names, label, width,
                                     !block);
    if (ui->mpi) {
        char ranks[KW_PROGLINE_WIDTH_MAX + 1];
        kw_mpi_pool_format(ui->mpi, ranks, sizeof ranks);
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
        kw_progline_shape_line(line, sizeof line, p, i, ui->ev->shape_names, label, width);
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
        kw_progline_shape_done(line, sizeof line, p, i, ui->ev->shape_names, label);
        fprintf(stderr, "%s (%d of %d)\n", line, ++ui->n_said, p->n_shapes);
        ui->said_done[i] = 1;
        if (ui->mpi) {
            kw_mpi_pool_format(ui->mpi, line, sizeof line);
            fprintf(stderr, "knobwise tune: %s\n", line);
        }
    }
    fflush(stderr);
}

static void kw_tune_progress(void *ud, const kw_progress *p)
{
    kw_tune_ui *ui = ud;
    double now = kw_tune_now();
    if (ui->plain)
        kw_tune_plain(ui, p);
    if (ui->draw && now - ui->last_draw >= KW_TUNE_DRAW_S) {
        ui->last_draw = now;
        kw_tune_draw(ui, p);
    }
    if (ui->every_s > 0 && now - ui->last_write >= ui->every_s) {
        ui->last_write = now;
        if (kw_results_write(ui->dir, ui->cfg, ui->ev, ui->owner, ui->metric) != 0 &&
            !ui->write_failed) {
            ui->write_failed = 1; /* said once; the run goes on */
            kw_tune_clear_line(ui);
            fprintf(stderr, "knobwise tune: cannot rewrite the results so far: %s\n",
                    kw_error_last());
        }
    }
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

/* Everything a run needs, fresh or resumed; freed by kw_tune_ctx_free. */
typedef struct kw_tune_ctx {
    kw_config *cfg;
    kw_model_eval *me;
    kw_model_eval *final_me;     /* the re-check: final sample size + long thermal window */
    kw_exec *ex;                 /* the measuring evaluator over me (NULL: the model) */
    kw_exec *final_ex;           /* ... over final_me, sharing ex's worker */
    kw_exec *port_ex;            /* ... over me for the results' portability matrix */
    kw_journal *j;               /* resume: the journal's header (opts point into it) */
    char dir[KW_PATH_MAX];
    char journal[KW_PATH_MAX + 16];
    char trace[KW_PATH_MAX], trace_hash[KW_HASH_HEX_LEN];
    /* a shape's own trace file (arrival="trace") that the evaluator replays */
    char shape_trace_name[KW_SHAPE_MAX][32];
    char shape_trace_hash[KW_SHAPE_MAX][KW_HASH_HEX_LEN];
    const char *in_names[KW_JOURNAL_INPUT_MAX];
    const char *in_hashes[KW_JOURNAL_INPUT_MAX];
    const char *in_paths[KW_JOURNAL_INPUT_MAX]; /* for messages */
    int n_inputs;
    const char *cmd;             /* the measuring evaluator's command (NULL: the model) */
    char worker_path[PATH_MAX], worker_hash[KW_HASH_HEX_LEN];
    kw_runlock *lock;            /* the run folder's writer lock, held to the end */
    kw_mpi_pool *mp;             /* mpirun: the other ranks' slots (NULL: one process) */
    const char *attr_keys[KW_JOURNAL_ATTR_MAX];
    const char *attr_vals[KW_JOURNAL_ATTR_MAX];
    char attr_buf[KW_TUNE_N_ATTRS][KW_JOURNAL_ATTR_LEN];
    int n_attrs;
    int shapes[KW_JOURNAL_SHAPE_MAX];
    const char *owner;
} kw_tune_ctx;

static void kw_tune_ctx_free(kw_tune_ctx *c)
{
    kw_mpi_pool_free(c->mp);
    kw_exec_free(c->final_ex);
    kw_exec_free(c->port_ex);
    kw_exec_free(c->ex);
    kw_model_eval_free(c->final_me); /* borrows me's traces, never frees them */
    kw_model_eval_free(c->me);
    kw_config_free(c->cfg);
    kw_journal_free(c->j);
    kw_runfolder_unlock(c->lock);
}

/* The program a worker command runs: its first word, as the shell would find
 * it (a path when it has a '/', else the first executable regular file of
 * that name on $PATH), resolved to an absolute path in out. 0 when it does
 * not name a file (a shell builtin, a quoted or compound command): the
 * command itself is still recorded verbatim as the run's "evaluator". */
static int kw_tune_worker_program(char out[PATH_MAX], const char *cmd)
{
    char word[PATH_MAX];
    const char *w = cmd + strspn(cmd, " \t");
    size_t len = strcspn(w, " \t");
    if (len == 0 || len >= sizeof word || *w == '\'' || *w == '"')
        return 0;
    memcpy(word, w, len);
    word[len] = '\0';
    char cand[PATH_MAX];
    struct stat st;
    if (strchr(word, '/')) {
        snprintf(cand, sizeof cand, "%s", word);
    } else {
        const char *path = getenv("PATH");
        cand[0] = '\0';
        for (const char *d = path; d && *d;) {
            size_t dl = strcspn(d, ":");
            if (dl + 2 + len < sizeof cand) {
                if (dl)
                    memcpy(cand, d, dl);
                else
                    cand[dl++] = '.'; /* an empty $PATH entry is the current folder */
                cand[dl] = '/';
                memcpy(cand + dl + 1, word, len + 1);
                if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
                    break;
            }
            cand[0] = '\0';
            dl = strcspn(d, ":");
            d += dl + (d[dl] == ':');
        }
        if (!cand[0])
            return 0;
    }
    return stat(cand, &st) == 0 && S_ISREG(st.st_mode) && realpath(cand, out) != NULL;
}

/* The input records: every file that affects a result. The three
 * model files by the names kw_rundir/kw_results expect, the --trace file, and
 * each shape's own trace that the evaluator replays ("shape_trace.N", N the
 * space's shape index). Needs c->me (it knows which traces it replays). */
static int kw_tune_inputs(kw_tune_ctx *c)
{
    static const char *const names[] = {"space", "accelerator", "workload"};
    const char *paths[] = {c->cfg->space.path, c->cfg->space.accel_path,
                           c->cfg->space.workload_path};
    c->n_inputs = 0;
    for (int i = 0; i < 3; i++) {
        c->in_names[c->n_inputs] = names[i];
        c->in_paths[c->n_inputs] = paths[i];
        c->in_hashes[c->n_inputs++] = c->cfg->input_hash[i];
    }
    if (c->trace[0]) {
        c->in_names[c->n_inputs] = "trace";
        c->in_paths[c->n_inputs] = c->trace;
        c->in_hashes[c->n_inputs++] = c->trace_hash;
    }
    for (int i = 0; i < c->cfg->space.n_shapes && i < KW_SHAPE_MAX; i++) {
        const char *tp = kw_model_eval_shape_trace(c->me, i);
        if (!tp)
            continue;
        if (c->n_inputs >= KW_JOURNAL_INPUT_MAX)
            return kw_error_set(KW_EINPUT, "%s: more trace files than a journal records (%d)",
                                c->cfg->space.path, KW_JOURNAL_INPUT_MAX - 4);
        int rc = kw_hash_file(c->shape_trace_hash[i], tp);
        if (rc != 0)
            return rc;
        snprintf(c->shape_trace_name[i], sizeof c->shape_trace_name[i], "shape_trace.%d", i);
        c->in_names[c->n_inputs] = c->shape_trace_name[i];
        c->in_paths[c->n_inputs] = tp;
        c->in_hashes[c->n_inputs++] = c->shape_trace_hash[i];
    }
    if (c->cmd && kw_tune_worker_program(c->worker_path, c->cmd)) {
        if (c->n_inputs >= KW_JOURNAL_INPUT_MAX)
            return kw_error_set(KW_EINPUT, "%s: more inputs than a journal records (%d)",
                                c->cfg->space.path, KW_JOURNAL_INPUT_MAX);
        int rc = kw_hash_file(c->worker_hash, c->worker_path);
        if (rc != 0)
            return rc;
        c->in_names[c->n_inputs] = "worker";
        c->in_paths[c->n_inputs] = c->worker_path;
        c->in_hashes[c->n_inputs++] = c->worker_hash;
    }
    return 0;
}

/* Every input hashed before (the journal's, or rank 0's under MPI: rank >
 * 0) must hash the same here; the first that does not is named by its file
 * (exit 2, nothing written). */
static int kw_tune_inputs_same(const kw_tune_ctx *c, int n, const char *const *names,
                               const char *const *hashes, int rank)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < c->n_inputs; k++) {
            if (strcmp(names[i], c->in_names[k]) != 0)
                continue;
            const char *file = c->in_paths[k] && c->in_paths[k][0] ? c->in_paths[k]
                                                                   : c->in_names[k];
            if (strcmp(hashes[i], c->in_hashes[k]) == 0)
                continue;
            if (rank > 0)
                return kw_error_set(KW_EINPUT, "%s: not the file rank 0 loaded (its %s, hash %s "
                                    "on rank 0, %s on rank %d): every rank must read the same "
                                    "inputs", file, names[i], hashes[i], c->in_hashes[k], rank);
            return kw_error_set(KW_EINPUT, "%s: changed since the run started (its %s, hash "
                                "%s, now %s): refusing to resume; restore it or start a new "
                                "run", file, names[i], hashes[i], c->in_hashes[k]);
        }
    return 0;
}

static int kw_tune_inputs_unchanged(const kw_tune_ctx *c)
{
    const kw_jheader *h = &c->j->h;
    const char *names[KW_JOURNAL_INPUT_MAX], *hashes[KW_JOURNAL_INPUT_MAX];
    for (int i = 0; i < h->n_inputs && i < KW_JOURNAL_INPUT_MAX; i++) {
        names[i] = h->inputs[i].name;
        hashes[i] = h->inputs[i].hash;
    }
    return kw_tune_inputs_same(c, h->n_inputs, names, hashes, 0);
}

static int kw_tune_engine(kw_tune_ctx *c, const kw_engine_opts *eo, int resume, int quiet,
                          double every_s)
{
    const kw_evaluator *ev = c->ex ? kw_exec_iface(c->ex) : kw_model_eval_iface(c->me);
    const kw_evaluator *final_ev = c->final_ex ? kw_exec_iface(c->final_ex)
                                   : c->final_me ? kw_model_eval_iface(c->final_me) : NULL;
    int tty = isatty(STDERR_FILENO);
    const char *term = getenv("TERM");
    kw_tune_ui ui = {.draw = !quiet && tty,
                     .ansi = term && term[0] && strcmp(term, "dumb") != 0,
                     .plain = !quiet && !tty,
                     .ev = c->port_ex ? kw_exec_iface(c->port_ex) : ev,
                     .shapes = eo->shapes,
                     .metric = eo->metric,
                     .dir = c->dir,
                     .cfg = c->cfg,
                     .owner = c->owner,
                     .every_s = every_s};
    ui.last_write = kw_tune_now();
    if (ui.plain && resume && c->j) {
        /* said before the engine starts, so even a replay of one round is named */
        fprintf(stderr, "knobwise tune: resume: replaying %ld journal records (no evaluation is "
                        "repeated)\n", (long)c->j->n_records);
        ui.replay_said = 1;
    }
    kw_engine_opts o = *eo;
    kw_tune_sig = 0;
    o.stop = &kw_tune_sig;
    kw_tune_deadline_s = eo->time_limit_s > 0 ? kw_tune_now() + eo->time_limit_s : 0.0;
    o.progress = kw_tune_progress;
    o.progress_ud = &ui;
    kw_run_info info = {.journal_path = c->journal,
                        .version = PACKAGE_VERSION,
                        .n_inputs = c->n_inputs,
                        .input_names = c->in_names,
                        .input_hashes = c->in_hashes,
                        .n_attrs = c->n_attrs,
                        .attr_keys = c->attr_keys,
                        .attr_values = c->attr_vals};
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = kw_tune_on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    /* mpirun: the engine evaluates through every rank's slots (kw_tune_mpi_start) */
    const kw_evaluator *run_ev = ev;
    char ranks_said[512] = "";
    if (c->mp) {
        run_ev = kw_mpi_pool_iface(c->mp);
        o.threads = kw_mpi_pool_slots(c->mp) < KW_TUNE_THREADS_MAX ? kw_mpi_pool_slots(c->mp)
                                                                   : KW_TUNE_THREADS_MAX;
        ui.mpi = c->mp;
    }
    kw_engine_summary sum;
    int rc = resume ? kw_engine_resume(&sum, &c->cfg->space.knobs, run_ev, &o, &info)
                    : kw_engine_run(&sum, &c->cfg->space.knobs, run_ev, &o, &info);
    if (c->mp) {
        kw_mpi_pool_format(c->mp, ranks_said, sizeof ranks_said);
        ui.mpi = NULL;
        kw_mpi_pool_free(c->mp); /* the other ranks are done: the results are rank 0's */
        c->mp = NULL;
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    kw_tune_clear_line(&ui);
    if (sum.torn)
        fprintf(stderr, "knobwise tune: %s; truncated to the last good record\n", sum.torn_msg);
    if (rc != 0 && rc != KW_EINTERRUPTED)
        return kw_cli_fail("tune", rc);
    /* The stop and the deadline cancel the search's evaluations only: the
     * results' own evaluations (portability, evidence) must finish after a
     * pause, so both are cleared once the engine has returned. */
    int sig = kw_tune_sig;
    kw_tune_sig = 0;
    kw_tune_deadline_s = 0.0;
    /* done, paused by the time limit or by a signal: the results so far */
    /* The final results re-check the top of each ranking with the space's
     * final sample size and the long thermal window (results.xml <recheck>). */
    int wrc = kw_results_write_final(c->dir, c->cfg,
                                     c->port_ex ? kw_exec_iface(c->port_ex) : ev, final_ev,
                                     c->owner, eo->metric, eo->threads);
    if (wrc != 0) {
        kw_cli_fail("tune", wrc);
        fprintf(stderr, "knobwise tune: the journal is intact; rewrite the results with "
                        "'knobwise tune --resume %s'\n", c->dir);
        return 1;
    }
    if (!quiet)
        kw_tune_summary(c->dir, c->journal);
    if (!quiet && ranks_said[0])
        printf("knobwise tune: %s\n", ranks_said);
    if (rc == KW_EINTERRUPTED) {
        fprintf(stderr, "knobwise tune: interrupted (%s); the journal holds every step before "
                        "it; results so far in %s\nresume with: knobwise tune --resume %s\n",
                sig == SIGTERM ? "SIGTERM" : "SIGINT", c->dir, c->dir);
        return sig == SIGTERM ? 143 : 130;
    }
    if (sum.stop == KW_STOP_TIME) {
        fprintf(stderr, "knobwise tune: time limit reached after %.0f s; results so far in %s\n"
                        "continue with: knobwise tune --resume %s\n",
                sum.elapsed_s, c->dir, c->dir);
        /* the limit stops a run inside an evaluation and drops that round:
         * a limit shorter than one round never gets further */
        if (sum.evals == 0)
            fprintf(stderr, "knobwise tune: no evaluation finished within the time limit (one "
                            "round takes longer): give a longer --time-limit\n");
    }
    return 0;
}

static int kw_tune_model(kw_tune_ctx *c, long requests, int thermal, uint64_t model_seed)
{
    kw_model_opts mo = {.sim_requests = (int)requests,
                        .thermal = thermal,
                        .drift = 1,
                        .seed = model_seed,
                        .trace_path = c->trace[0] ? c->trace : NULL,
                        .stop = &kw_tune_sig,
                        .deadline_s = &kw_tune_deadline_s};
    int rc = kw_model_eval_new(&c->me, c->cfg, &mo);
    if (rc != 0)
        return kw_cli_fail("tune", rc);
    kw_model_opts fo = mo;
    /* The final re-check runs after a stop too (it writes the results so far):
     * it is never cancelled. */
    fo.stop = NULL;
    fo.deadline_s = NULL;
    fo.sim_requests = c->cfg->space.final_requests > 0 ? c->cfg->space.final_requests
                                                       : (int)requests;
    fo.thermal = 1;
    fo.traces_from = c->me; /* the same traces: loaded once */
    rc = kw_model_eval_new(&c->final_me, c->cfg, &fo);
    if (rc != 0)
        return kw_cli_fail("tune", rc);
    return 0;
}

/* The measuring evaluator (cmd non-NULL): start the worker (an error before
 * the run folder exists when it cannot start), and scale each load-derived
 * arrival rate from the measured baseline time so `load` keeps meaning
 * the utilisation of the measured device. scales: the recorded factors
 * ("f1,f2,..." per space shape, from the journal on resume) or NULL to
 * measure them; the factors used are written to scales_out. */
static int kw_tune_exec(kw_tune_ctx *c, const char *cmd, double timeout_s, const char *scales,
                        char *scales_out, size_t out_len)
{
    kw_exec_opts xo;
    kw_exec_opts_from_space(&xo, &c->cfg->space, cmd, timeout_s);
    xo.index = kw_mpi_local_rank(); /* mpirun: the rank's device on its node */
    int rc = kw_exec_new(&c->ex, c->cfg, c->me, &xo);
    if (rc == 0)
        rc = kw_exec_new_sibling(&c->final_ex, c->ex, c->final_me, "results");
    if (rc == 0)
        rc = kw_exec_new_sibling(&c->port_ex, c->ex, c->me, "results");
    if (rc != 0)
        return kw_cli_fail("tune", rc);
    kw_model_eval *models[2] = {c->me, c->final_me};
    if ((rc = kw_exec_calibrate(c->ex, models, 2, scales, scales_out, out_len)) != 0)
        return kw_cli_fail("tune", rc);
    return 0;
}

/* The attribute a run recorded (c->attr_keys: the journal header's on
 * resume, rank 0's on the other MPI ranks), or NULL. */
static const char *kw_tune_attr_of(const kw_tune_ctx *c, kw_run_attr a)
{
    const char *key = kw_run_attr_key(a);
    for (int i = 0; i < c->n_attrs; i++)
        if (strcmp(c->attr_keys[i], key) == 0)
            return c->attr_vals[i];
    return NULL;
}

/* What a recorded run's attributes name: the configuration, the --trace
 * file's hash, the model evaluators, the worker command (c->cmd) and the
 * input records; seed: the model's seed when no model_seed was recorded.
 * Resume builds its evaluator so, and so does every MPI rank but 0. Prints
 * its error; returns the exit status. */
static int kw_tune_load_attrs(kw_tune_ctx *c, uint64_t seed)
{
    const char *space = kw_tune_attr_of(c, KW_RUN_SPACE), *accel = kw_tune_attr_of(c, KW_RUN_ACCEL),
               *workload = kw_tune_attr_of(c, KW_RUN_WORKLOAD), *trace = kw_tune_attr_of(c, KW_RUN_TRACE),
               *ms = kw_tune_attr_of(c, KW_RUN_MODEL_SEED), *req = kw_tune_attr_of(c, KW_RUN_SIM_REQUESTS),
               *th = kw_tune_attr_of(c, KW_RUN_THERMAL), *xcmd = kw_tune_attr_of(c, KW_RUN_EVALUATOR);
    int status = kw_cli_load_config(&c->cfg, space && space[0] ? space : NULL,
                                    accel && accel[0] ? accel : NULL,
                                    workload && workload[0] ? workload : NULL);
    if (status != 0)
        return status;
    int rc;
    if (trace && trace[0]) {
        snprintf(c->trace, sizeof c->trace, "%s", trace);
        if ((rc = kw_hash_file(c->trace_hash, c->trace)) != 0)
            return kw_cli_fail("tune", rc);
    }
    if ((status = kw_tune_model(c, req ? atol(req) : 0, th ? atoi(th) : 0,
                                ms ? strtoull(ms, NULL, 10) : seed)) != 0)
        return status;
    c->cmd = xcmd && xcmd[0] ? xcmd : NULL;
    if ((rc = kw_tune_inputs(c)) != 0)
        return kw_cli_fail("tune", rc);
    return 0;
}

/* The measuring evaluator of a recorded run (c->cmd set), with its recorded
 * timeout and rate factors. */
static int kw_tune_exec_attrs(kw_tune_ctx *c)
{
    const char *xto = kw_tune_attr_of(c, KW_RUN_EXEC_TIMEOUT_S),
               *xsc = kw_tune_attr_of(c, KW_RUN_EXEC_RATE_SCALE);
    char scales[KW_JOURNAL_ATTR_LEN];
    return kw_tune_exec(c, c->cmd, xto ? atof(xto) : 0, xsc ? xsc : "", scales, sizeof scales);
}

/* mpirun: hand the run (attributes and input hashes) to the other ranks,
 * which build its evaluator and check its inputs; called before anything is
 * written, so a rank that cannot evaluate fails the run with nothing made.
 * Prints its error; returns the exit status. */
static int kw_tune_mpi_start(kw_tune_ctx *c, int threads, double time_limit_s, uint64_t seed)
{
    if (!kw_mpi_launched())
        return 0;
    const kw_evaluator *ev = c->ex ? kw_exec_iface(c->ex) : kw_model_eval_iface(c->me);
    kw_mpi_spec ms = {.n_attrs = c->n_attrs, .attr_keys = c->attr_keys,
                      .attr_values = c->attr_vals, .n_inputs = c->n_inputs,
                      .input_names = c->in_names, .input_hashes = c->in_hashes,
                      .threads = threads, .time_limit_s = time_limit_s, .seed = seed};
    int rc = kw_mpi_pool_start(&c->mp, &ms, ev, threads, &kw_tune_sig);
    return rc != 0 ? kw_cli_fail("tune", rc) : 0;
}

static void kw_tune_attr(kw_tune_ctx *c, kw_run_attr key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void kw_tune_attr(kw_tune_ctx *c, kw_run_attr key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->attr_buf[c->n_attrs], KW_JOURNAL_ATTR_LEN, fmt, ap);
    va_end(ap);
    c->attr_keys[c->n_attrs] = kw_run_attr_key(key);
    c->attr_vals[c->n_attrs] = c->attr_buf[c->n_attrs];
    c->n_attrs++;
}

/* The knobs the space's block cannot use (kw_knobuse.h): OFAT never changes
 * them (engine opts.frozen), and their names go into the journal ("frozen")
 * so a resume restores the same mask. */
static void kw_tune_frozen(uint64_t *mask, char *names, size_t size, const kw_config *cfg)
{
    kw_knobuse ku[KW_KNOB_MAX];
    int n = kw_knobuse_check(ku, KW_KNOB_MAX, cfg);
    size_t used = 0;
    *mask = 0;
    names[0] = '\0';
    for (int i = 0; i < n && i < KW_KNOB_MAX; i++) {
        *mask |= 1ULL << ku[i].knob;
        int w = snprintf(names + used, size - used, "%s%s", used ? "," : "",
                         cfg->space.knobs.knobs[ku[i].knob].name);
        if (w > 0 && (size_t)w < size - used)
            used += (size_t)w;
    }
    kw_error_clear(); /* a negative n (no such block) is refused earlier, by the loader */
}

static int kw_tune_frozen_parse(uint64_t *mask, const char *names, const kw_knobspace *ks)
{
    char buf[KW_JOURNAL_ATTR_LEN];
    snprintf(buf, sizeof buf, "%s", names);
    *mask = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = kw_knobspace_find(ks, t);
        if (k < 0)
            return kw_error_set(KW_ECORRUPT, "journal attribute frozen names unknown knob '%s'", t);
        *mask |= 1ULL << k;
    }
    return 0;
}

static int kw_tune_fresh(const kw_tune_args *a)
{
    kw_tune_ctx c;
    memset(&c, 0, sizeof c);
    int status = kw_cli_load_config(&c.cfg, a->space, a->accel, a->workload);
    if (status != 0)
        return status;
    /* shapes */
    int n = 0;
    for (int i = 0; i < a->n_shapes; i++) {
        int si = kw_config_shape(c.cfg, a->shapes[i]);
        if (si < 0) {
            char hint[1024];
            kw_hint_shape(hint, sizeof hint, c.cfg, a->shapes[i]);
            status = kw_cli_usage_error("tune", "unknown shape '%s'%s", a->shapes[i], hint);
            goto done;
        }
        for (int k = 0; k < n; k++)
            if (c.shapes[k] == si) {
                status = kw_cli_usage_error("tune", "--shape %s given twice", a->shapes[i]);
                goto done;
            }
        c.shapes[n++] = si;
    }
    if (n == 0)
        for (int i = 0; i < c.cfg->space.n_shapes; i++)
            c.shapes[n++] = i;
    /* an exhaustive run must be able to finish */
    if (a->strategy == KW_STRATEGY_EXHAUSTIVE && a->budget == 0) {
        double size = 1;
        const kw_knobspace *ks = &c.cfg->space.knobs;
        for (int k = 0; k < ks->n_knobs; k++)
            size *= ks->knobs[k].n_values > 0 ? ks->knobs[k].n_values : 1;
        if (size > KW_TUNE_EXHAUSTIVE_MAX) {
            status = kw_cli_usage_error("tune", "--strategy exhaustive without --budget: the space "
                                        "has %.4g configurations per shape, over the %.0f an "
                                        "exhaustive run can cover; give --budget N or use "
                                        "--strategy ofat", size, KW_TUNE_EXHAUSTIVE_MAX);
            goto done;
        }
    }
    /* trace */
    if (a->trace) {
        int rc = kw_tune_abs(c.trace, sizeof c.trace, a->trace);
        if (rc == 0)
            rc = kw_hash_file(c.trace_hash, c.trace);
        if (rc != 0) {
            status = kw_cli_fail("tune", rc);
            goto done;
        }
    }
    /* run folder: never a truncated path (it would be another folder) */
    if (a->out) {
        if (strlen(a->out) >= sizeof c.dir) {
            status = kw_cli_usage_error("tune", "--out %.200s...: path too long (%zu bytes, at "
                                        "most %zu)", a->out, strlen(a->out), sizeof c.dir - 1);
            goto done;
        }
        snprintf(c.dir, sizeof c.dir, "%s", a->out);
    } else {
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        char id[64];
        strftime(id, sizeof id, "tune-%Y%m%d-%H%M%S", &tm);
        snprintf(c.dir, sizeof c.dir, "results/%s", id);
        for (int k = 2; access(c.dir, F_OK) == 0 && k < 1000; k++)
            snprintf(c.dir, sizeof c.dir, "results/%s-%d", id, k);
    }
    int rc = kw_runfolder_join(c.journal, sizeof c.journal, c.dir, KW_RUNFOLDER_JOURNAL_NAME);
    if (rc != 0) {
        status = kw_cli_fail("tune", rc);
        goto done;
    }
    struct stat st;
    if (lstat(c.journal, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        status = kw_cli_usage_error("tune", "%s already holds a run: continue it with --resume %s "
                                    "or choose another --out", c.dir, c.dir);
        goto done;
    }
    if (lstat(c.journal, &st) == 0 && !S_ISREG(st.st_mode)) {
        status = kw_cli_usage_error("tune", "%s is not a regular file (%s): refusing to write the "
                                    "journal through it; choose another --out", c.journal,
                                    S_ISLNK(st.st_mode) ? "a symbolic link" : "a special file");
        goto done;
    }
    /* what resume, verify and audit read back: paths checked before anything is made */
    char ps[KW_PATH_MAX], pa[KW_PATH_MAX], pw[KW_PATH_MAX];
    /* the space as loaded: a shipped name (--space NAME) is recorded as its file */
    if ((rc = kw_tune_abs(ps, sizeof ps, a->space ? c.cfg->space.path : NULL)) != 0 ||
        (rc = kw_tune_abs(pa, sizeof pa, a->accel)) != 0 ||
        (rc = kw_tune_abs(pw, sizeof pw, a->workload)) != 0) {
        status = kw_cli_fail("tune", rc);
        goto done;
    }
    if ((status = kw_tune_model(&c, a->requests, a->thermal, a->seed)) != 0)
        goto done;
    const char *cmd = NULL;
    char scales[KW_JOURNAL_ATTR_LEN] = "";
    if (kw_exec_spec(&cmd, a->evaluator, &c.cfg->space) != 0) {
        status = kw_cli_usage_error("tune", "%s", kw_error_last());
        goto done;
    }
    if (a->screen > 0 && !cmd) {
        status = kw_cli_usage_error("tune", "--screen needs a measuring evaluator (--evaluator "
                                    "exec:CMD or the space's <evaluator>): the model is its screen");
        goto done;
    }
    if (cmd && (status = kw_tune_exec(&c, cmd, a->timeout_s, NULL, scales, sizeof scales)) != 0)
        goto done;
    c.cmd = cmd;
    if ((rc = kw_tune_inputs(&c)) != 0) {
        status = kw_cli_fail("tune", rc);
        goto done;
    }
    c.owner = a->owner;
    kw_tune_attr(&c, KW_RUN_OWNER, "%s", a->owner);
    kw_tune_attr(&c, KW_RUN_SPACE, "%s", ps);
    kw_tune_attr(&c, KW_RUN_ACCEL, "%s", pa);
    kw_tune_attr(&c, KW_RUN_WORKLOAD, "%s", pw);
    kw_tune_attr(&c, KW_RUN_TRACE, "%s", c.trace);
    kw_tune_attr(&c, KW_RUN_MODEL_SEED, "%llu", (unsigned long long)a->seed);
    kw_tune_attr(&c, KW_RUN_SIM_REQUESTS, "%ld", a->requests);
    kw_tune_attr(&c, KW_RUN_THERMAL, "%d", a->thermal);
    kw_tune_attr(&c, KW_RUN_DRIFT, "%d", 1);
    kw_tune_attr(&c, KW_RUN_EVALUATOR, "%s", cmd ? cmd : "");
    kw_tune_attr(&c, KW_RUN_EXEC_TIMEOUT_S, "%.17g", a->timeout_s);
    kw_tune_attr(&c, KW_RUN_EXEC_RATE_SCALE, "%s", scales);
    kw_tune_attr(&c, KW_RUN_SCREEN, "%ld", a->screen);
    /* multi-fidelity screening and the knobs the block cannot use: engine
     * options the journal header does not hold, restored on resume from these */
    kw_tune_attr(&c, KW_RUN_ESTIMATE, "%d", !a->no_estimate);
    uint64_t frozen = 0;
    char frozen_names[KW_JOURNAL_ATTR_LEN] = "";
    if (a->strategy == KW_STRATEGY_OFAT)
        kw_tune_frozen(&frozen, frozen_names, sizeof frozen_names, c.cfg);
    kw_tune_attr(&c, KW_RUN_FROZEN, "%s", frozen_names);
    if ((status = kw_tune_mpi_start(&c, a->threads, a->time_limit_s, a->seed)) != 0)
        goto done;
    if ((rc = kw_tune_mkdirs(c.dir)) != 0 || (rc = kw_runfolder_lock(&c.lock, c.dir)) != 0 ||
        (rc = kw_runfolder_sweep(c.dir, NULL)) != 0) {
        status = kw_cli_fail("tune", rc);
        goto done;
    }
    if (c.ex) {
        char logp[KW_PATH_MAX + 16];
        if ((rc = kw_runfolder_join(logp, sizeof logp, c.dir, "worker.log")) != 0 ||
            (rc = kw_exec_log(c.ex, logp)) != 0) {
            status = kw_cli_fail("tune", rc);
            goto done;
        }
    }

    kw_engine_opts eo;
    kw_engine_opts_init(&eo);
    eo.strategy = a->strategy;
    eo.policy = a->policy;
    eo.budget = a->budget;
    eo.time_limit_s = a->time_limit_s;
    eo.metric = a->metric;
    eo.min_effect_pct = c.cfg->space.min_effect_pct;
    eo.alpha = c.cfg->space.alpha;
    eo.repeats = a->repeats;
    eo.seed = a->seed;
    eo.threads = a->threads;
    eo.tabu = a->tabu;
    eo.probes = a->probes;
    eo.n_shapes = n;
    eo.shapes = c.shapes;
    eo.screen = (int)a->screen;
    eo.estimate = !a->no_estimate;
    eo.frozen = frozen;
    status = kw_tune_engine(&c, &eo, 0, a->quiet, a->every_s);
done:
    kw_tune_ctx_free(&c);
    return status;
}

static int kw_tune_resume(const kw_tune_args *a)
{
    kw_tune_ctx c;
    memset(&c, 0, sizeof c);
    int status = 0, rc;
    if (strlen(a->resume) >= sizeof c.dir)
        return kw_cli_usage_error("tune", "--resume %.200s...: path too long (at most %zu bytes)",
                                  a->resume, sizeof c.dir - 1);
    snprintf(c.dir, sizeof c.dir, "%s", a->resume);
    if ((rc = kw_runfolder_join(c.journal, sizeof c.journal, c.dir, KW_RUNFOLDER_JOURNAL_NAME)) != 0)
        return kw_cli_fail("tune", rc);
    struct stat st;
    if (lstat(c.journal, &st) != 0)
        return kw_cli_fail("tune", kw_error_set(KW_EINPUT, "%s: not a run folder (no journal to "
                                                "resume)", c.dir));
    /* one writer: the lock before anything is read for writing, truncated or swept */
    if ((rc = kw_runfolder_lock(&c.lock, c.dir)) != 0)
        return kw_cli_fail("tune", rc);
    if ((rc = kw_journal_load_ex(&c.j, c.journal, 1)) != 0) {
        status = kw_cli_fail("tune", rc);
        goto done;
    }
    if (c.j->header_incomplete) {
        status = kw_cli_fail("tune", kw_error_set(KW_ECORRUPT, "%s: the run stopped while writing "
                                                  "its header, before any evaluation: start it "
                                                  "again in a new folder", c.journal));
        goto done;
    }
    const kw_jheader *h = &c.j->h;
    for (int i = 0; i < h->n_attrs; i++) {
        c.attr_keys[i] = h->attrs[i].key;
        c.attr_vals[i] = h->attrs[i].value;
    }
    c.n_attrs = h->n_attrs;
    const char *owner = kw_tune_attr_of(&c, KW_RUN_OWNER);
    c.owner = owner ? owner : "";
    if ((status = kw_tune_load_attrs(&c, h->seed)) != 0)
        goto done;
    /* every input (the worker's program too) unchanged, before a worker is
     * started or anything is written */
    if ((rc = kw_tune_inputs_unchanged(&c)) != 0 || (rc = kw_runfolder_sweep(c.dir, NULL)) != 0) {
        status = kw_cli_fail("tune", rc);
        goto done;
    }
    if (c.cmd) {
        char logp[KW_PATH_MAX + 16];
        if ((status = kw_tune_exec_attrs(&c)) != 0)
            goto done;
        snprintf(logp, sizeof logp, "%s/worker.log", c.dir);
        if ((rc = kw_exec_log(c.ex, logp)) != 0) {
            status = kw_cli_fail("tune", rc);
            goto done;
        }
    }
    /* mpirun: the other ranks check the same inputs and start their workers */
    if ((status = kw_tune_mpi_start(&c, a->threads, a->time_limit_s, h->seed)) != 0)
        goto done;
    kw_engine_opts eo;
    kw_engine_opts_init(&eo);
    kw_engine_opts_from_header(&eo, c.shapes, h);
    eo.threads = a->threads;
    eo.time_limit_s = a->time_limit_s;
    const char *scr = kw_run_attr_get(c.j, KW_RUN_SCREEN);
    eo.screen = scr ? atoi(scr) : 0;
    /* a journal written before these options ran without them */
    const char *est = kw_run_attr_get(c.j, KW_RUN_ESTIMATE);
    eo.estimate = est ? atoi(est) : 0;
    const char *fz = kw_run_attr_get(c.j, KW_RUN_FROZEN);
    if ((rc = kw_tune_frozen_parse(&eo.frozen, fz ? fz : "", &h->space)) != 0) {
        status = kw_cli_fail("tune", rc);
        goto done;
    }
    status = kw_tune_engine(&c, &eo, 1, a->quiet, a->every_s);
done:
    kw_tune_ctx_free(&c);
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
 * evaluates what rank 0 sends until the run is over. It writes nothing. */
static int kw_tune_mpi_rank(void)
{
    kw_mpi_job_spec *js = NULL;
    int rc = kw_mpi_spec_recv(&js);
    if (rc == 1)
        return 0; /* rank 0 ended without a run and said why */
    if (rc != 0)
        return kw_cli_fail("tune", rc);
    const kw_mpi_spec *sp = kw_mpi_spec_of(js);
    kw_tune_ctx c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < sp->n_attrs && i < KW_JOURNAL_ATTR_MAX; i++) {
        c.attr_keys[i] = sp->attr_keys[i];
        c.attr_vals[i] = sp->attr_values[i];
        c.n_attrs++;
    }
    int status = kw_tune_load_attrs(&c, sp->seed), setup = 0;
    if (status == 0 && (rc = kw_tune_inputs_same(&c, sp->n_inputs, sp->input_names,
                                                 sp->input_hashes, kw_mpi_rank())) != 0)
        status = kw_error_exit_status(rc);
    if (status == 0 && c.cmd)
        status = kw_tune_exec_attrs(&c);
    if (status != 0)
        setup = kw_error_code() ? kw_error_code() : KW_EINPUT;
    /* a signal stops this rank's evaluations as it stops rank 0's */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = kw_tune_on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    kw_tune_sig = 0;
    kw_tune_deadline_s = sp->time_limit_s > 0 ? kw_tune_now() + sp->time_limit_s : 0.0;
    const kw_evaluator *ev = c.ex ? kw_exec_iface(c.ex) : c.me ? kw_model_eval_iface(c.me) : NULL;
    rc = kw_mpi_serve(ev, sp->threads, setup);
    if (status == 0 && rc != 0)
        status = kw_cli_fail("tune", rc);
    kw_tune_ctx_free(&c);
    kw_mpi_spec_free(js);
    return status;
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
