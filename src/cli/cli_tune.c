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
 * Signals: SIGINT/SIGTERM/SIGHUP (an ssh session that drops) set a flag the
 * engine reads between rounds and the serving simulation reads inside an
 * evaluation (every 65,536 events, as it reads the --time-limit deadline,
 * which cuts the evidence phase the same way); a round cut short is dropped, not
 * journaled; the journal gets a pause record, the results so far are written
 * and the command exits 130/143/129 saying how to resume. The SIGINT and
 * SIGTERM handlers are one-shot (SA_RESETHAND): a second Ctrl-C kills at once,
 * which the journal survives too. SIGHUP's is not: a terminal that closes
 * sends it twice (the kernel to the foreground process group, then the
 * interactive shell resends it to its jobs), and a one-shot handler let the
 * second kill the run before its pause and files (exit by SIGHUP, no Q
 * record, no results: 2026-12-07). The first signal is the one said and
 * exited with. After a signal the files say what the journal proves, with no
 * evaluation, and the handler stays until they are in place (kw_run_exec).
 * A signal inherited as ignored stays ignored (kw_tune_catch).
 */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_tune_ui.h"
#include "kw_cli.h"
#include "kw_limits.h"
#include "kw_metric.h"
#include "kw_mpi.h"
#include "kw_num.h"
#include "kw_run.h"
#include "kw_runsum.h"

#define KW_TUNE_REWRITE_S 300.0   /* best-so-far results rewritten this often by default */
#define KW_TUNE_THREADS_MAX 256

static volatile sig_atomic_t kw_tune_sig;

/* the first signal wins: a SIGTERM after SIGHUP (mpirun forwards one) does
 * not change what is said and exited with */
static void kw_tune_on_signal(int sig)
{
    if (!kw_tune_sig)
        kw_tune_sig = sig;
}

/* Catch sig with kw_tune_on_signal (one-shot), the old disposition in *old for
 * the caller to put back; a signal inherited as ignored stays ignored (the
 * POSIX convention, as kw_xml_signals_hold: a background job a script
 * started with SIGINT ignored was paused, exit 130, by a Ctrl-C meant for
 * the script). */
static void kw_tune_catch(int sig, struct sigaction *old)
{
    if (sigaction(sig, NULL, old) != 0 || old->sa_handler == SIG_IGN)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = kw_tune_on_signal;
    sa.sa_flags = sig == SIGHUP ? 0 : SA_RESETHAND; /* SIGHUP comes twice (above) */
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void kw_tune_help(void)
{
    printf("usage: knobwise tune [--space F] [--accel F] [--workload F] [--trace F] [--shape NAME]...\n"
           "                     [--strategy ofat|random|exhaustive] [--policy sweep|greedy]\n"
           "                     [--budget N] [--time-limit S] [--metric p95|p99] [--seed N]\n"
           "                     [--threads N] [--out DIR] [--owner NAME] [--quiet]\n"
           "                     [--repeats N] [--tabu N] [--probes N] [--requests N] [--thermal]\n"
           "                     [--results-every S] [--evaluator model|exec:CMD] [--timeout S]\n"
           "                     [--screen K] [--no-estimate] [--pair N] [--rerank K|off]\n"
           "       knobwise tune --resume DIR [--threads N] [--time-limit S] [--results-every S]\n"
           "                     [--quiet]\n\n"
           "Tune every shape of the space (or the --shape ones) one knob per step, from\n"
           "the baseline, and write DIR/journal, results.xml, ranked.csv, audit.csv and\n"
           "portability.csv. With no file options the embedded default job is tuned.\n\n"
           "  --strategy S     ofat (default) or the baselines random / exhaustive\n"
           "  --policy P       sweep (cycle through the knobs, default) or greedy\n"
           "                   (every single-knob neighbour, take the best)\n"
           "  --budget N       evaluations per shape (default 0: until convergence;\n"
           "                   random needs one)\n"
           "  --time-limit S   stop the whole run S seconds after it starts (a worker's\n"
           "                   baseline measurements and the evidence after the search\n"
           "                   included; resumable: a resume continues the evidence from\n"
           "                   RUN/evidence, each resume keeping at least one more)\n"
           "  --metric M       primary metric: p95 (default) or p99, lower is better\n"
           "  --seed N         every random stream of the run (default 1)\n"
           "  --threads N      evaluation threads (default: the CPUs; never more than\n"
           "                   the CPUs online); results do not depend on it\n"
           "  --out DIR        run folder (default results/tune-DATE-TIME)\n"
           "  --resume DIR     continue an interrupted run; evaluations in its journal\n"
           "                   are not repeated and the result equals an uninterrupted run\n"
           "  --owner NAME     recorded in every rollback boundary (default $USER; at\n"
           "                   most 127 bytes, $USER too)\n"
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
           "                   skips what cannot gain within its measured error; P records)\n"
           "  --pair N         with a measuring evaluator: after the search, re-measure each\n"
           "                   shape's recommendation beside its one-knob neighbours with at\n"
           "                   most N evaluations per shape (default 200; 0: no pairing;\n"
           "                   N records, the audit's paired sensitivity)\n"
           "  --rerank K|off   ofat on the model: where the search's own sample cannot rank\n"
           "                   a shape, compare its recommendation with the K - 1 next best\n"
           "                   configs and each other basin's best on a long paired sample\n"
           "                   of the same arrivals, and move to a faster one (default %d,\n"
           "                   2 to %d; off or 0: no re-rank, the search's own sample\n"
           "                   decides; R records)\n\n"
           "On a terminal a progress line on stderr, fitted to its width (TIOCGWINSZ,\n"
           "else $COLUMNS), shows shapes done, total evaluations, each running shape's\n"
           "evaluations against its estimate and its best primary against the baseline,\n"
           "evaluations per second and two ETAs: from convergence (what each running\n"
           "shape's current local optimum still costs if nothing improves: its unseen\n"
           "neighbours, probes and excursion; scaled by the finished shapes' ratio of\n"
           "total to first-optimum evaluations once one finished; '>=' while it is only a\n"
           "lower bound) and from the budget; with room on an ANSI terminal, each running\n"
           "shape gets its own line. When stderr is not a terminal it gets one plain line\n"
           "per finished shape instead, and a progress line (the same fields and the time\n"
           "elapsed) every 60 s, or every $KNOBWISE_PROGRESS_EVERY s (0: none); a resume\n"
           "says when it replays its journal.\n"
           "SIGINT/SIGTERM/SIGHUP stop within a fraction of a second (a round cut short\n"
           "is evaluated again on resume), write the results so far and exit 130/143/129\n"
           "(a signal inherited as ignored, as under nohup, stays ignored);\n"
           "resume with --resume DIR. Exit status: 0 done (or time limit\n"
           "reached), 1 runtime failure, 2 bad input or usage.\n", KW_RERANK_DEFAULT, KW_RERANK_MAX);
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
    long pair;                   /* --pair N: the pairing's evaluations per shape (-1: not given) */
    long rerank;                 /* --rerank K|off: the re-rank's K (-1: not given, 0: off) */
    uint64_t seed;
    int threads, quiet, repeats, tabu, probes, thermal;
    int only_resume_opts;        /* an option that --resume does not take was given */
} kw_tune_args;

/* The engine has returned: the progress off the screen, a torn tail said.
 * The handlers stay until the result files are written (kw_tune_exec): a
 * signal then cancels the evidence instead of killing the writer. */
typedef struct kw_tune_exec_ui {
    kw_cli_tune_ui ui;
    double time_limit_s; /* --time-limit (0: none) */
} kw_tune_exec_ui;

/* The stop signals' handlers, from before the run is made or reopened until
 * its files are in place: a signal while a measuring worker measures the
 * baselines (kw_run_create) stops that measurement and the worker, as one
 * during the search does (it killed tune there, and a worker hanging on its
 * request was left running, orphaned: 2026-12-07). */
typedef struct kw_tune_sigs {
    struct sigaction old_int, old_term, old_hup;
} kw_tune_sigs;

static void kw_tune_sigs_on(kw_tune_sigs *s)
{
    kw_tune_catch(SIGINT, &s->old_int);
    kw_tune_catch(SIGTERM, &s->old_term);
    kw_tune_catch(SIGHUP, &s->old_hup);
}

static void kw_tune_sigs_off(const kw_tune_sigs *s)
{
    sigaction(SIGINT, &s->old_int, NULL);
    sigaction(SIGTERM, &s->old_term, NULL);
    sigaction(SIGHUP, &s->old_hup, NULL);
}

static void kw_tune_engine_done(void *ud, const kw_run *r, const kw_run_outcome *out)
{
    kw_tune_exec_ui *x = ud;
    (void)r;
    kw_cli_tune_ui_clear(&x->ui);
    if (out->sum.torn)
        fprintf(stderr, "knobwise tune: %s; truncated to the last good record\n",
                out->sum.torn_msg);
    /* With a time limit, say what follows the search: the evidence phase
     * can take long (final_requests 3,000,000: 58 s), and the progress line
     * is gone. The limit cuts it as a stop does (kw_run.c). */
    if (x->time_limit_s > 0 && (x->ui.draw || x->ui.plain) && out->engine_rc == 0 &&
        !kw_tune_sig && out->sum.stop != KW_STOP_TIME)
        fprintf(stderr, "knobwise tune: search done; now the evidence: each shape's "
                "recommendation re-checked at the space's final sample, and the portability "
                "matrix (within --time-limit: when it runs out, or on SIGTERM, the files say "
                "what the journal proves and a resume continues the evidence)\n");
}

static void kw_tune_evidence(void *ud, const kw_run *r, const char *what, long done, long total)
{
    kw_tune_exec_ui *x = ud;
    kw_cli_tune_ui_evidence(&x->ui, r, what, done, total);
}

/* Run r (made by kw_run_create or kw_run_resume) and say how it ended. */
static int kw_tune_exec(kw_run *r, int quiet, double every_s, double time_limit_s)
{
    kw_tune_exec_ui x;
    kw_cli_tune_ui_start(&x.ui, r, quiet);
    x.time_limit_s = time_limit_s;
    kw_run_ctl ctl = {.stop = &kw_tune_sig,
                      .every_s = every_s,
                      .progress = kw_cli_tune_ui_progress,
                      .rewrite_failed = kw_cli_tune_ui_rewrite_failed,
                      .engine_done = kw_tune_engine_done,
                      .evidence = kw_tune_evidence,
                      .rerank = kw_cli_tune_ui_progress, /* draws only */
                      .ud = &x};
    kw_run_outcome out;
    int rc = kw_run_exec(r, &out, &ctl);
    return kw_cli_tune_ui_end(r, &out, rc, quiet);
}

/* A failed kw_run_create / kw_run_resume, said as the command line's fault
 * (usage) or the run's. */
static int kw_tune_failed(int rc, int usage)
{
    if (usage)
        return kw_cli_usage_error("tune", "%s", kw_error_last());
    if (rc == KW_EINTERRUPTED && kw_tune_sig) { /* the baselines' measurement, cut */
        int sig = kw_tune_sig;
        fprintf(stderr, "knobwise tune: %s: %s; nothing was written\n",
                sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGINT",
                kw_error_last());
        return 128 + sig;
    }
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
                     .pair = a->pair < 0 ? 0 : a->pair, .no_pair = a->pair == 0,
                     .rerank = a->rerank < 0 ? 0 : (int)a->rerank, .no_rerank = a->rerank == 0,
                     .threads = a->threads, .repeats = a->repeats, .tabu = a->tabu,
                     .probes = a->probes, .thermal = a->thermal};
    kw_run *r = NULL;
    kw_tune_sigs sigs;
    kw_tune_sigs_on(&sigs);
    int usage = 0, rc = kw_run_create(&r, &usage, &o, &kw_tune_sig);
    int status = rc != 0 ? kw_tune_failed(rc, usage) : kw_tune_exec(r, a->quiet, a->every_s, a->time_limit_s);
    kw_tune_sigs_off(&sigs);
    kw_run_free(r);
    return status;
}

static int kw_tune_resume(const kw_tune_args *a)
{
    kw_run *r = NULL;
    kw_tune_sigs sigs;
    kw_tune_sigs_on(&sigs);
    int usage = 0,
        rc = kw_run_resume(&r, &usage, a->resume, a->threads, a->time_limit_s, &kw_tune_sig);
    int status = rc != 0 ? kw_tune_failed(rc, usage) : kw_tune_exec(r, a->quiet, a->every_s, a->time_limit_s);
    kw_tune_sigs_off(&sigs);
    kw_run_free(r);
    return status;
}

static int kw_tune_main(int argc, char **argv)
{
    enum { O_SPACE = 1000, O_ACCEL, O_WORKLOAD, O_TRACE, O_SHAPE, O_STRATEGY, O_POLICY, O_BUDGET,
           O_TIME, O_METRIC, O_SEED, O_THREADS, O_OUT, O_RESUME, O_OWNER, O_QUIET, O_REPEATS,
           O_TABU, O_PROBES, O_REQUESTS, O_THERMAL, O_EVERY, O_EVALUATOR, O_TIMEOUT, O_SCREEN, O_NO_ESTIMATE, O_PAIR, O_RERANK, O_HELP };
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
        {"no-estimate", no_argument, 0, O_NO_ESTIMATE}, {"pair", required_argument, 0, O_PAIR},
        {"rerank", required_argument, 0, O_RERANK},
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
    a.pair = -1;
    a.rerank = -1;
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
            int s = kw_journal_strategy_parse(optarg);
            if (s < 0)
                return kw_cli_usage_error("tune", "--strategy takes ofat, random or exhaustive, not '%s'",
                                          optarg);
            a.strategy = (kw_strategy)s;
            break;
        }
        case O_POLICY: {
            int p = kw_journal_policy_parse(optarg);
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
            if (kw_cli_parse_seed(&v, "tune", optarg))
                return 2;
            a.seed = (uint64_t)v;
            break;
        case O_THREADS:
            if (kw_cli_parse_long(&v, "tune", "--threads", optarg, 1, KW_TUNE_THREADS_MAX))
                return 2;
            a.threads = (int)v;
            resume_ok = 1;
            break;
        case O_OUT:
            if (!optarg[0]) /* mkdir("") failed later, as a runtime failure (exit 1) */
                return kw_cli_usage_error("tune", "--out takes a folder name, not ''");
            a.out = optarg;
            break;
        case O_RESUME:
            if (!optarg[0])
                return kw_cli_usage_error("tune", "--resume takes a run folder, not ''");
            a.resume = optarg;
            resume_ok = 1;
            break;
        case O_OWNER:
            /* the summary keeps KW_RS_TEXT_LEN - 1 bytes: a longer owner was
             * cut there without a word (results.xml held its first 127) */
            if (strlen(optarg) >= KW_RS_TEXT_LEN)
                return kw_cli_usage_error("tune", "--owner takes at most %d bytes, not %zu",
                                          KW_RS_TEXT_LEN - 1, strlen(optarg));
            a.owner = optarg;
            break;
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
        case O_PAIR:
            if (kw_cli_parse_long(&a.pair, "tune", "--pair", optarg, 0, KW_PAIR_BUDGET_MAX))
                return 2;
            break;
        case O_RERANK:
            /* off or 0, else K: the recommendation and its K - 1 next best (1 would
             * compare the basins alone, which the journal's rerank=K cannot say) */
            if (strcmp(optarg, "off") == 0)
                a.rerank = 0;
            else if (kw_num_long(&a.rerank, optarg, 0, KW_RERANK_MAX) != 0 || a.rerank == 1)
                return kw_cli_usage_error("tune", "--rerank takes off (or 0) or a whole number "
                                          "from 2 to %d, not '%s'", KW_RERANK_MAX, optarg);
            break;
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
    /* the default owner ($USER) under --owner's rule: a $USER over 127 bytes
     * was recorded whole in the journal while results.xml cut it (until
     * 2026-12-07) */
    if (a.owner == user && strlen(user) >= KW_RS_TEXT_LEN)
        return kw_cli_usage_error("tune", "$USER is %zu bytes and the owner takes at most %d: "
                                  "give --owner NAME", strlen(user), KW_RS_TEXT_LEN - 1);
    return kw_tune_fresh(&a);
}

/* A rank other than 0 whose options are not rank 0's says so (it ignores
 * them: the results stay rank 0's); before, nothing told the user. */
static void kw_tune_mpi_note(const char *msg)
{
    fprintf(stderr, "knobwise tune: warning: %s\n", msg);
}

/* A rank other than 0 of `mpirun -n N knobwise tune`: rank 0 parses the
 * command line and sends the run's recorded attributes and input hashes (and
 * its options, which this rank compares with its own: kw_tune_mpi_note);
 * this rank builds the same evaluator from them (as a resume does from its
 * journal), refuses inputs that hash differently from rank 0's, and
 * evaluates what rank 0 sends until the run is over (kw_run_serve). It
 * writes nothing. A signal stops its evaluations as it stops rank 0's. */
static int kw_tune_mpi_rank(void)
{
    /* the signals rank 0 stops on (kw_tune_exec), SIGHUP too: a closed
     * terminal's SIGHUP reaches every rank of its process group, and one that
     * died of it made mpirun end the job while rank 0 wrote its pause */
    struct sigaction old_int, old_term, old_hup;
    kw_tune_catch(SIGINT, &old_int);
    kw_tune_catch(SIGTERM, &old_term);
    kw_tune_catch(SIGHUP, &old_hup);
    kw_tune_sig = 0;
    int rank0_says = 0, rc = kw_run_serve(&kw_tune_sig, &rank0_says, kw_tune_mpi_note);
    if (rc != 0 && rank0_says)
        return kw_error_exit_status(rc);
    return rc != 0 ? kw_cli_fail("tune", rc) : 0;
}

int kw_cli_tune(int argc, char **argv)
{
    /* mpirun: every rank runs this; rank 0 is the run, the others evaluate */
    int rc = kw_mpi_init();
    kw_mpi_set_args(argc - 1, argv + 1); /* rank 0 sends them; the others compare */
    int status = rc != 0 ? kw_cli_fail("tune", rc)
                 : kw_mpi_rank() == 0 ? kw_tune_main(argc, argv) : kw_tune_mpi_rank();
    kw_mpi_finish();
    return status;
}
