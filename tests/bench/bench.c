/* bench.c - `make bench`: what knobwise costs and how well it searches, as one
 * markdown table of per-unit costs and ratios.
 *
 * Design: one program measures everything from the library directly (the
 * shipped spaces loaded with kw_load_config, the stages, the evaluator and the
 * engine), and runs two things as child processes because they must be: itself
 * under `valgrind --tool=callgrind` (instructions per unit: a figure that does
 * not move with machine noise) and the knobwise binary (the end-to-end
 * 2-thread speedup of `knobwise tune`). Rates are the median of several timed
 * repetitions on one thread, counted per CPU-second of that thread (so "/s"
 * means per core, and other processes on a shared machine do not dilute it;
 * the wall-clock rate is printed beside it). The thread speedup can only be
 * wall time: the load average is printed next to it, read it with that.
 *
 * Sections (each a table; --only NAME runs one):
 *   speed     stage-1 evaluations/s of the 7B attention block, simulated
 *             requests/s, full evaluations/s, drift check cost fresh and cached
 *   callgrind instructions per stage-1 evaluation, per simulated request and
 *             per full evaluation
 *   threads   wall time of a fixed `knobwise tune` job, --threads 1 against 2,
 *             end to end and in process
 *   growth    cost per simulated request as requests, streams and cores grow;
 *             evaluations and wall time of the search as the knob count grows
 *             (seeds 1-5, --seeds N: each seed's landscape converges in its own count)
 *   screen    on spaces/validate_*.xml: the cheap stage (predict) against the
 *             full evaluation over every valid config
 *   aliases   (only with --only aliases) spaces/default.xml and every validate_*.xml,
 *             seed 1, no budget, every alias (kw_engine.c) also evaluated in full and
 *             compared bit for bit with its original; exit 1 on any difference.
 *             --alias-check makes the growth section check its aliases the same way.
 *   quality   on spaces/validate_*.xml: the one-knob search's best p95 against
 *             the exhaustive optimum (enumerated here, independently of the
 *             engine), the share of the space it evaluated, and random search
 *             at the same budget; every shape judged on a long sample of the
 *             same arrivals (KW_BENCH_LONG_REQUESTS; --bursty-long: only the
 *             shapes with bursty arrivals, the judge of 2026-12-07 stop 42)
 *
 * Not a test: nothing here asserts; the verdict column compares with the
 * targets of issues 3-6 and says PASS or MISS.
 * KW_BENCH_KEEP=1 keeps the engine runs' journals (growth, quality) and names them on
 * stderr (tests/bench/journal_rounds.py counts where their evaluations go).
 * Usage: bench [--srcdir DIR] [--knobwise PATH] [--only SECTION] [--seeds N] [--no-estimate]
 *              [--no-rerank] [--bursty-long] [--space NAME] [--quick]
 *   (quality: --no-rerank turns the search's re-rank off, kw_ofat.c, on by default since
 *   stop 44; --rerank is accepted and is the default; every shape is judged on
 *   the long sample (the 500-request judge called bert_tpu bert_s128_b8_c4 seed 4 within
 *   while it converged +2.05% above on 1,000,000: stop 43); --bursty-long judges only the
 *   bursty ones there, as stop 42 did; --long-all is accepted and is the default)   (--space small: only spaces/validate_small.xml; a glob)
 *        bench --loop cost|sim|full N   (the fixed-work loops callgrind runs)
 */
#include "config.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "kw_cost.h"
#include "kw_drift.h"
#include "kw_engine.h"
#include "kw_error.h"
#include "kw_eval.h"
#include "kw_journal.h"
#include "kw_knobuse.h"
#include "kw_load.h"
#include "kw_mapping.h"
#include "kw_sim.h"
#include "kw_simci.h"

/* Targets: the speed of each stage and the search quality `make bench` checks. */
#define KW_BENCH_COST_TARGET_PER_S 500000.0   /* stage-1 evaluations per second per core */
#define KW_BENCH_SIM_TARGET_PER_S 2000000.0   /* simulated requests per second per core */
#define KW_BENCH_DRIFT_FRESH_TARGET_MS 5.0    /* one fresh drift check */
#define KW_BENCH_DRIFT_CACHED_TARGET_US 1.0   /* one cached drift check */
#define KW_BENCH_SPEEDUP_TARGET 1.8           /* 2 threads over 1 */
#define KW_BENCH_QUALITY_GAP_PCT 0.5          /* within this of the exhaustive optimum ... */
/* ... judged, for a shape with bursty arrivals, on this many simulated requests (issue 18):
 * the search's own sample (a validation space's sim_requests, 500) cannot rank such a shape's
 * configs (validate_small attn_decode_kv2048_b32_c16 seed 8: the p95's honest half-width is
 * 28-41% at 500 requests, 12% at 500,000; stop 41's hci report), so its exhaustive optimum
 * there is picked on noise. The optimum and the run's recommendation are both evaluated again
 * on this longer sample of the same arrival streams (same seed), and the gap is theirs. */
#define KW_BENCH_LONG_REQUESTS 1000000 /* 2,000x the validation spaces' sim_requests */

/* Measurement settings. */
#define KW_BENCH_REPEATS 5          /* timed repetitions; the median is reported */
#define KW_BENCH_MIN_RUN_S 0.25     /* each repetition runs at least this long */
#define KW_BENCH_MAPPINGS 256       /* distinct random valid mappings cycled through */
#define KW_BENCH_SEED 20240601u     /* every random stream here starts from this */
#define KW_BENCH_SIM_REQUESTS 100000 /* requests per simulation run in the speed figure */
#define KW_BENCH_DRIFT_SAMPLES 24   /* fresh drift checks timed per shape */

typedef struct kw_bench {
    char srcdir[KW_PATH_MAX];
    char knobwise[KW_PATH_MAX];
    char self[KW_PATH_MAX];
    char tmpdir[KW_PATH_MAX];
    const char *only;
    int quick;
    int seeds;             /* growth, quality: seeds per shape (0: KW_BENCH_SEEDS) */
    int seed0;             /* quality: the first seed (--first-seed; 1), to rerun a few */
    int no_estimate;       /* quality: engine without multi-fidelity screening (the before) */
    int no_rerank;         /* quality: engine without the re-rank (kw_ofat.c; the before) */
    int long_all;          /* quality: every shape judged on the long sample (the default), not only bursty ones */
    long rr_runs, rr_with, rr_moved; /* quality: ofat runs, of them re-ranked, of them moved */
    long rr_requests;      /* quality: the requests their re-ranks simulated (journals' R records) */
    long rr_evals;         /* quality: the evaluations of those ofat runs */
    /* quality: where the re-rank's requests go, one rival's sequence of paired looks at a
     * time (kw_bench_rerank_seqs): sequences, looks and requests by how the last look
     * ended (0 won, 1 lost: the interval above 0, 2 resolved within the minimum effect,
     * 3 undecided at the cap); the leader's simulations that repeat one already made at
     * the same sample (the same config on the same arrivals) */
    long rr_seq[4], rr_looks[4], rr_seq_req[4];
    long rr_lead_again_req;
    long rr_sim_req;       /* ... the requests simulated, sides kept as the model keeps them */
    /* ... and what a futility stop would have saved: a sequence stopped at the first look
     * whose interval (widened over the planned looks, kw_simci_pair_half_looks) puts the
     * rival's gain below the minimum effect; the requests after it, and the sequences
     * that stop would have cut short of a win */
    long rr_fut_saved, rr_fut_cut_win, rr_fut_seq;
    const char *space;     /* quality: only spaces/validate_SPACE.xml (a glob; NULL: every one) */
    long tune_budget;
    int alias_check;       /* growth, aliases: every alias also evaluated in full and compared */
    long alias_mismatches; /* the engine runs' aliases whose full evaluation differed */
    kw_config *cfg;        /* spaces/default.xml */
    gsl_rng *rng;
} kw_bench;

/* ------------------------------------------------------------------ utils */

static double kw_bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double kw_bench_median(double *v, size_t n)
{
    gsl_sort(v, 1, n);
    return gsl_stats_median_from_sorted_data(v, 1, n);
}

/* 1234567.8 -> "1,234,568" */
static const char *kw_bench_count(char *buf, size_t len, double x)
{
    char raw[64];
    snprintf(raw, sizeof raw, "%.0f", x);
    size_t n = strlen(raw), o = 0;
    size_t lead = raw[0] == '-' ? 1 : 0;
    for (size_t i = 0; i < n && o + 2 < len; i++) {
        if (i > lead && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = '\0';
    return buf;
}

static const char *kw_bench_verdict(int ok) { return ok ? "PASS" : "MISS"; }

static int kw_bench_wanted(const kw_bench *b, const char *section)
{
    return !b->only || strcmp(b->only, section) == 0;
}

/* A random candidate that breaks no constraint (uniform per knob, rejection). */
static void kw_bench_random_cand(kw_cand *c, const kw_knobspace *ks, gsl_rng *r)
{
    do {
        kw_knobs_cand_baseline(c, ks);
        for (int k = 0; k < ks->n_knobs; k++)
            c->v[k] = (uint8_t)gsl_rng_uniform_int(r, (unsigned long)ks->knobs[k].n_values);
    } while (kw_knobs_cand_violates(ks, c) >= 0);
}

static int kw_bench_load(kw_config **out, const kw_bench *b, const char *rel)
{
    char path[KW_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", b->srcdir, rel);
    int rc = kw_load_config(out, path, NULL, NULL);
    if (rc != 0)
        fprintf(stderr, "bench: %s: %s\n", path, kw_error_last());
    return rc;
}

/* Run argv as a child, stdout/stderr to /dev/null unless keep_output;
 * returns the exit status (or -1) and the wall time in *wall_s. */
static int kw_bench_spawn_cpu(double *wall_s, double *cpu_s, char *const argv[], int keep_output);

static int kw_bench_spawn(double *wall_s, char *const argv[], int keep_output)
{
    return kw_bench_spawn_cpu(wall_s, NULL, argv, keep_output);
}

/* CPU seconds (user + system) this process has used so far. */
static double kw_bench_cpu_self(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static double kw_bench_load1(void)
{
    double l[1] = {0};
    return getloadavg(l, 1) == 1 ? l[0] : NAN;
}

/* Like kw_bench_spawn; *cpu_s (if not NULL) = the child's user + system seconds. */
static int kw_bench_spawn_cpu(double *wall_s, double *cpu_s, char *const argv[], int keep_output)
{
    double t0 = kw_bench_now();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (!keep_output) {
            FILE *n1 = freopen("/dev/null", "w", stdout);
            FILE *n2 = freopen("/dev/null", "w", stderr);
            (void)n1;
            (void)n2;
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0)
        if (errno != EINTR)
            return -1;
    if (cpu_s)
        *cpu_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                 (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
    if (wall_s)
        *wall_s = kw_bench_now() - t0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ------------------------------------------------------------ stage 1 */

/* (mapping, shape) pairs of the 7B attention block: random valid candidates of
 * spaces/default.xml decoded up front, cycled over the space's shapes. */
typedef struct kw_bench_costset {
    const kw_accel *accel;
    const kw_block *block;
    const kw_shape *shape[KW_BENCH_MAPPINGS];
    kw_mapping map[KW_BENCH_MAPPINGS];
} kw_bench_costset;

static int kw_bench_costset_init(kw_bench_costset *cs, const kw_config *cfg, gsl_rng *r)
{
    const kw_space *sp = &cfg->space;
    cs->accel = &cfg->accel;
    for (int i = 0; i < KW_BENCH_MAPPINGS; i++) {
        const kw_shape *s = &cfg->workload.shapes[sp->shapes[i % sp->n_shapes]];
        cs->block = &cfg->workload.blocks[s->block];
        cs->shape[i] = s;
        kw_cand c;
        kw_bench_random_cand(&c, &sp->knobs, r);
        int rc = kw_mapping_decode(&cs->map[i], sp, cs->block, &c);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The fixed-work loop callgrind counts (noinline/noclone: its name must stay). */
__attribute__((noinline, noclone)) static double kw_bench_cost_loop(const kw_bench_costset *cs, long n)
{
    static kw_cost cost;
    double sink = 0.0;
    for (long i = 0; i < n; i++) {
        const kw_mapping *m = &cs->map[i % KW_BENCH_MAPPINGS];
        if (kw_cost_eval(&cost, cs->accel, cs->block, cs->shape[i % KW_BENCH_MAPPINGS], m, 1,
                         m->cores_per_request) != 0)
            return NAN;
        sink += cost.latency_us;
    }
    return sink;
}

/* Median rate (units per second) of fn over KW_BENCH_REPEATS runs of at least
 * KW_BENCH_MIN_RUN_S each. The rate is per CPU-second of this thread
 * (CLOCK_THREAD_CPUTIME_ID): a per-core figure that other processes on a
 * shared machine do not dilute; *wall_rate (if not NULL) gets the same per
 * wall-clock second, for comparison. */
typedef double (*kw_bench_work)(void *ctx, long n); /* returns units done, or < 0 on error */

static double kw_bench_cpu_thread(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double kw_bench_rate(double *wall_rate, kw_bench_work fn, void *ctx, long start_n, int quick)
{
    long n = start_n;
    double min_s = quick ? KW_BENCH_MIN_RUN_S / 5 : KW_BENCH_MIN_RUN_S;
    for (;;) { /* calibrate */
        double t0 = kw_bench_cpu_thread();
        if (fn(ctx, n) < 0)
            return -1.0;
        double dt = kw_bench_cpu_thread() - t0;
        if (dt >= min_s / 4)
            break;
        n *= 4;
    }
    double rates[KW_BENCH_REPEATS], wall[KW_BENCH_REPEATS];
    int reps = quick ? 3 : KW_BENCH_REPEATS;
    for (int i = 0; i < reps; i++) {
        long todo = n;
        double c0 = kw_bench_cpu_thread(), w0 = kw_bench_now(), units = 0.0, dt = 0.0;
        do {
            double u = fn(ctx, todo);
            if (u < 0)
                return -1.0;
            units += u;
            dt = kw_bench_cpu_thread() - c0;
        } while (dt < min_s);
        rates[i] = units / dt;
        wall[i] = units / (kw_bench_now() - w0);
    }
    if (wall_rate)
        *wall_rate = kw_bench_median(wall, (size_t)reps);
    return kw_bench_median(rates, (size_t)reps);
}

static double kw_bench_cost_work(void *ctx, long n)
{
    return isnan(kw_bench_cost_loop(ctx, n)) ? -1.0 : (double)n;
}

/* ---------------------------------------------------------- full eval */

typedef struct kw_bench_fullset {
    const kw_evaluator *ev;
    int n;
    kw_cand cand[KW_BENCH_MAPPINGS];
    int shape[KW_BENCH_MAPPINGS];
    long next;
} kw_bench_fullset;

/* Full evaluations (the fixed-work loop callgrind counts). */
__attribute__((noinline, noclone)) static long kw_bench_full_loop(kw_bench_fullset *fs, long n)
{
    kw_metrics m;
    for (long i = 0; i < n; i++, fs->next++) {
        int j = (int)(fs->next % fs->n);
        if (fs->ev->eval(fs->ev->ctx, &fs->cand[j], fs->shape[j], 0, &m) != 0)
            return -1;
    }
    return n;
}

static double kw_bench_full_work(void *ctx, long n)
{
    return kw_bench_full_loop(ctx, n) < 0 ? -1.0 : (double)n;
}

/* n random valid candidates of cfg over its shapes, evaluated once so the
 * drift cache is warm, as it is for most evaluations of a tuning run. */
static int kw_bench_fullset_init(kw_bench_fullset *fs, const kw_evaluator *ev, const kw_config *cfg,
                                 int n, gsl_rng *r)
{
    fs->ev = ev;
    fs->n = n;
    fs->next = 0;
    for (int i = 0; i < n; i++) {
        kw_bench_random_cand(&fs->cand[i], &cfg->space.knobs, r);
        fs->shape[i] = i % cfg->space.n_shapes;
    }
    /* not through kw_bench_full_loop: callgrind must not count the warm-up */
    kw_metrics m;
    for (int i = n - 1; i >= 0; i--)
        if (ev->eval(ev->ctx, &fs->cand[i], fs->shape[i], 0, &m) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------- stage 2 */

/* One serving simulation set-up: a shape of default.xml under the baseline
 * mapping, its service table (batches 1..max_batch) and the per-stream rate the
 * evaluator would use (the shape's load under the baseline). The growth
 * tables copy the accelerator and shape and change cores (DRAM bandwidth scaled
 * with them) or streams; the rate
 * is then recomputed for the same load, so only the size of the problem
 * changes, not how loaded it is. */
typedef struct kw_bench_simcase {
    kw_accel accel;
    kw_shape shape;
    kw_mapping map;
    kw_cost service[64];
    double rate_per_s;
    int requests;          /* per kw_sim_run */
    uint64_t seed;
} kw_bench_simcase;

static int kw_bench_simcase_init(kw_bench_simcase *sc, const kw_config *cfg, int shape,
                                 int cores, int streams, int requests)
{
    const kw_space *sp = &cfg->space;
    sc->accel = cfg->accel;
    sc->shape = cfg->workload.shapes[sp->shapes[shape]];
    if (cores > 0) { /* a bigger chip: DRAM bandwidth grows with the cores (as per core today) */
        sc->accel.dram_bw_bytes_per_s *= (double)cores / (double)sc->accel.cores;
        sc->accel.cores = cores;
    }
    if (streams > 0)
        sc->shape.streams = streams;
    const kw_block *b = &cfg->workload.blocks[sc->shape.block];
    kw_cand base;
    kw_knobs_cand_baseline(&base, &sp->knobs);
    int rc = kw_mapping_decode(&sc->map, sp, b, &base);
    if (rc != 0)
        return rc;
    if (sc->map.max_batch > (int)(sizeof sc->service / sizeof sc->service[0]))
        return kw_error_set(KW_EINPUT, "baseline max_batch %d too large for the bench", sc->map.max_batch);
    if (sc->map.cores_per_request > sc->accel.cores)
        sc->map.cores_per_request = sc->accel.cores;
    for (int r = 1; r <= sc->map.max_batch; r++)
        if ((rc = kw_cost_eval(&sc->service[r - 1], &sc->accel, b, &sc->shape, &sc->map, r,
                               sc->map.cores_per_request)) != 0)
            return rc;
    if (sc->shape.arrival == KW_ARRIVAL_TRACE) /* no trace here: Poisson at the same load */
        sc->shape.arrival = KW_ARRIVAL_POISSON;
    sc->requests = requests;
    sc->seed = 1;
    return kw_sim_rate_for_load(&sc->rate_per_s, &sc->accel, &sc->shape, &sc->map, sc->service);
}

static int kw_bench_sim_once(kw_sim_result *res, kw_bench_simcase *sc)
{
    kw_sim_input in = {.accel = &sc->accel, .shape = &sc->shape, .mapping = &sc->map,
                       .service = sc->service, .rate_per_s = sc->rate_per_s,
                       .trace_shape = -1, .clock_factor = 1.0};
    kw_sim_opts so = {.requests = sc->requests, .warmup = 0, .seed = sc->seed++};
    int rc = kw_sim_run(res, &in, &so);
    kw_sim_result_clear(res);
    return rc;
}

/* Simulated requests (the fixed-work loop callgrind counts): n requests in
 * runs of at most cases[i].requests, cycling over the cases. */
__attribute__((noinline, noclone)) static long kw_bench_sim_loop(kw_bench_simcase *cases, int n_cases,
                                                                long n)
{
    static kw_sim_result res;
    long done = 0;
    for (int i = 0; done < n; i = (i + 1) % n_cases) {
        int keep = cases[i].requests;
        if (n - done < keep)
            cases[i].requests = (int)(n - done);
        int rc = kw_bench_sim_once(&res, &cases[i]);
        done += cases[i].requests;
        cases[i].requests = keep;
        if (rc != 0)
            return -1;
    }
    return done;
}

typedef struct kw_bench_simwork {
    kw_bench_simcase *cases;
    int n;
} kw_bench_simwork;

static double kw_bench_sim_work(void *ctx, long n)
{
    kw_bench_simwork *w = ctx;
    long per = (long)w->cases[0].requests * w->n;
    long todo = n * per; /* n = rounds over every case */
    return kw_bench_sim_loop(w->cases, w->n, todo) < 0 ? -1.0 : (double)todo;
}

/* Default.xml's shapes under the baseline, `requests` each. */
static int kw_bench_simcases(kw_bench_simcase **out, int *n, const kw_config *cfg, int requests)
{
    *n = cfg->space.n_shapes;
    *out = calloc((size_t)*n, sizeof **out);
    if (!*out)
        return kw_error_set(KW_ENOMEM, "out of memory");
    for (int i = 0; i < *n; i++) {
        int rc = kw_bench_simcase_init(&(*out)[i], cfg, i, 0, 0, requests);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---------------------------------------------------------- stage 4 */

/* Drift check cost on one shape: fresh (kw_drift_eval: data regenerated from
 * the seed, as without any cache), cache miss (data kept, emulation run) and
 * cache hit, over random valid mappings of default.xml. */
typedef struct kw_bench_drift {
    double fresh_ms, miss_ms, hit_ns;
    int fresh_n, miss_n;
} kw_bench_drift;

static int kw_bench_drift_shape(kw_bench_drift *out, const kw_config *cfg, int shape, gsl_rng *r,
                                int quick)
{
    const kw_space *sp = &cfg->space;
    const kw_shape *s = &cfg->workload.shapes[sp->shapes[shape]];
    const kw_block *b = &cfg->workload.blocks[s->block];
    kw_drift_cache *dc = NULL;
    kw_mapping m[KW_BENCH_DRIFT_SAMPLES];
    double fresh[KW_BENCH_DRIFT_SAMPLES], miss[KW_BENCH_DRIFT_SAMPLES];
    int n = quick ? 6 : KW_BENCH_DRIFT_SAMPLES, rc;
    kw_drift d;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n; i++) {
        kw_cand c;
        kw_bench_random_cand(&c, &sp->knobs, r);
        if ((rc = kw_mapping_decode(&m[i], sp, b, &c)) != 0)
            return rc;
    }
    for (int i = 0; i < n; i++) {
        double t0 = kw_bench_cpu_thread();
        if ((rc = kw_drift_eval(&d, b, s, &m[i], &sp->guards, KW_BENCH_SEED)) != 0)
            return rc;
        fresh[i] = kw_bench_cpu_thread() - t0;
    }
    out->fresh_n = n;
    out->fresh_ms = 1e3 * kw_bench_median(fresh, (size_t)n);
    if ((rc = kw_drift_cache_new(&dc)) != 0)
        return rc;
    /* the first get generates the block's data; misses after it pay only the emulation */
    kw_mapping warm = m[0];
    warm.precision = KW_PREC_FP32;
    if ((rc = kw_drift_cache_get(&d, dc, b, s, &warm, &sp->guards, KW_BENCH_SEED)) != 0)
        goto done;
    for (int i = 0; i < n; i++) {
        uint64_t h0, m0, h1, m1;
        kw_drift_cache_stats(dc, &h0, &m0);
        double t0 = kw_bench_cpu_thread();
        if ((rc = kw_drift_cache_get(&d, dc, b, s, &m[i], &sp->guards, KW_BENCH_SEED)) != 0)
            goto done;
        double dt = kw_bench_cpu_thread() - t0;
        kw_drift_cache_stats(dc, &h1, &m1);
        if (m1 > m0)
            miss[out->miss_n++] = dt;
    }
    out->miss_ms = out->miss_n ? 1e3 * kw_bench_median(miss, (size_t)out->miss_n) : NAN;
    /* hits: every mapping is now cached */
    long reps = quick ? 20000 : 200000;
    double t0 = kw_bench_cpu_thread();
    for (long i = 0; i < reps; i++)
        if ((rc = kw_drift_cache_get(&d, dc, b, s, &m[i % n], &sp->guards, KW_BENCH_SEED)) != 0)
            goto done;
    out->hit_ns = 1e9 * (kw_bench_cpu_thread() - t0) / (double)reps;
    rc = 0;
done:
    kw_drift_cache_free(dc);
    return rc;
}

/* ------------------------------------------------------------ sections */

static void kw_bench_row(const char *figure, const char *measured, const char *unit_cost,
                         const char *target, const char *verdict)
{
    printf("| %s | %s | %s | %s | %s |\n", figure, measured, unit_cost, target, verdict);
}

static int kw_bench_speed(kw_bench *b)
{
    char m1[64], m2[64], u[160];
    kw_bench_costset *cs = calloc(1, sizeof *cs);
    kw_bench_fullset *fs = calloc(1, sizeof *fs);
    kw_model_eval *me = NULL;
    int rc = -1;
    if (!cs || !fs)
        goto done;
    printf("\n### Speed (one thread; median of %d timed runs; rates per CPU-second of the thread, "
           "i.e. per core, with the wall-clock rate beside them)\n\n", b->quick ? 3 : KW_BENCH_REPEATS);
    printf("| figure | measured | per unit | target | verdict |\n|---|---|---|---|---|\n");

    if (kw_bench_costset_init(cs, b->cfg, b->rng) != 0) {
        fprintf(stderr, "bench: decoding mappings: %s\n", kw_error_last());
        goto done;
    }
    double wr = 0;
    double r = kw_bench_rate(&wr, kw_bench_cost_work, cs, 1000, b->quick);
    if (r < 0) {
        fprintf(stderr, "bench: kw_cost_eval: %s\n", kw_error_last());
        goto done;
    }
    snprintf(m1, sizeof m1, "%s /s", kw_bench_count(m2, sizeof m2, r));
    snprintf(u, sizeof u, "%.0f ns/evaluation (wall: %.0f /s)", 1e9 / r, wr);
    kw_bench_row("stage-1 evaluations/s, 7B attention block (random valid mappings of default.xml, its 5 shapes)",
                 m1, u, ">= 500,000 /s/core", kw_bench_verdict(r >= KW_BENCH_COST_TARGET_PER_S));

    /* simulated requests: default.xml's shapes under the baseline mapping */
    kw_bench_simwork sw = {0};
    if (kw_bench_simcases(&sw.cases, &sw.n, b->cfg, KW_BENCH_SIM_REQUESTS) != 0) {
        fprintf(stderr, "bench: simulation set-up: %s\n", kw_error_last());
        free(sw.cases);
        goto done;
    }
    r = kw_bench_rate(&wr, kw_bench_sim_work, &sw, 1, b->quick);
    free(sw.cases);
    if (r < 0) {
        fprintf(stderr, "bench: kw_sim_run: %s\n", kw_error_last());
        goto done;
    }
    snprintf(m1, sizeof m1, "%s /s", kw_bench_count(m2, sizeof m2, r));
    snprintf(u, sizeof u, "%.0f ns/request (wall: %.0f /s)", 1e9 / r, wr);
    kw_bench_row("simulated requests/s (default.xml's 5 shapes, baseline mapping, 100,000 requests per run)",
                 m1, u, ">= 2,000,000 /s/core", kw_bench_verdict(r >= KW_BENCH_SIM_TARGET_PER_S));

    /* drift checks: worst shape of default.xml */
    double worst_fresh = 0, worst_miss = 0, worst_hit = 0;
    const char *wf = "", *wm = "", *wh = "";
    for (int i = 0; i < b->cfg->space.n_shapes; i++) {
        kw_bench_drift d;
        if (kw_bench_drift_shape(&d, b->cfg, i, b->rng, b->quick) != 0) {
            fprintf(stderr, "bench: drift: %s\n", kw_error_last());
            goto done;
        }
        const char *name = b->cfg->workload.shapes[b->cfg->space.shapes[i]].name;
        if (d.fresh_ms > worst_fresh)
            worst_fresh = d.fresh_ms, wf = name;
        if (d.miss_n && d.miss_ms > worst_miss)
            worst_miss = d.miss_ms, wm = name;
        if (d.hit_ns > worst_hit)
            worst_hit = d.hit_ns, wh = name;
    }
    char fig[256];
    snprintf(m1, sizeof m1, "%.2f ms", worst_fresh);
    snprintf(fig, sizeof fig, "drift check, fresh (kw_drift_eval, data regenerated; CPU time, median over random "
                              "mappings, worst shape: %s)", wf);
    kw_bench_row(fig, m1, "per check", "<= 5 ms", kw_bench_verdict(worst_fresh <= KW_BENCH_DRIFT_FRESH_TARGET_MS));
    snprintf(m1, sizeof m1, "%.2f ms", worst_miss);
    snprintf(fig, sizeof fig, "drift check, cache miss (data kept by the cache, emulation run; worst shape: %s)", wm);
    kw_bench_row(fig, m1, "per check", "-", "-");
    snprintf(m1, sizeof m1, "%.0f ns", worst_hit);
    snprintf(fig, sizeof fig, "drift check, cached (kw_drift_cache_get hit; worst shape: %s)", wh);
    kw_bench_row(fig, m1, "per check", "< 1 us", kw_bench_verdict(worst_hit < 1e3 * KW_BENCH_DRIFT_CACHED_TARGET_US));

    /* full evaluations: the model evaluator as the engine calls it */
    kw_model_opts mo = {.sim_requests = 0, .thermal = 0, .drift = 1, .seed = 1};
    if (kw_eval_new(&me, b->cfg, &mo) != 0) {
        fprintf(stderr, "bench: evaluator: %s\n", kw_error_last());
        goto done;
    }
    if (kw_bench_fullset_init(fs, kw_eval_iface(me), b->cfg, KW_BENCH_MAPPINGS, b->rng) != 0) {
        fprintf(stderr, "bench: evaluator: %s\n", kw_error_last());
        goto done;
    }
    r = kw_bench_rate(&wr, kw_bench_full_work, fs, 16, b->quick);
    if (r < 0)
        goto done;
    snprintf(m1, sizeof m1, "%s /s", kw_bench_count(m2, sizeof m2, r));
    snprintf(u, sizeof u, "%.1f us/evaluation (wall: %.0f /s)", 1e6 / r, wr);
    snprintf(m2, sizeof m2, "%d", b->cfg->space.sim_requests);
    snprintf(fig, sizeof fig,
             "full evaluations/s (stages 1-4 as the engine calls them; default.xml, %s simulated "
             "requests each, drift cache warm)", m2);
    kw_bench_row(fig, m1, u, "-", "-");
    rc = 0;
done:
    kw_eval_free(me);
    free(fs);
    free(cs);
    return rc;
}

/* Instructions per unit: run `self --loop KIND N` under callgrind, collecting
 * only inside the loop function, and divide Ir by N. */
static int kw_bench_callgrind_ir(double *ir_per_unit, kw_bench *b, const char *kind,
                                 const char *fn, long n)
{
    char out[KW_PATH_MAX + 64], opt_out[KW_PATH_MAX + 96], opt_tog[128], nbuf[32];
    snprintf(out, sizeof out, "%s/callgrind.%s.out", b->tmpdir, kind);
    snprintf(opt_out, sizeof opt_out, "--callgrind-out-file=%s", out);
    snprintf(opt_tog, sizeof opt_tog, "--toggle-collect=%s", fn);
    snprintf(nbuf, sizeof nbuf, "%ld", n);
    char *argv[] = {"valgrind", "--tool=callgrind", opt_out, "--collect-atstart=no", opt_tog,
                    b->self, "--srcdir", b->srcdir, "--loop", (char *)kind, nbuf, NULL};
    int st = kw_bench_spawn(NULL, argv, 0);
    if (st != 0) {
        fprintf(stderr, "bench: valgrind --tool=callgrind ... --loop %s exited %d\n", kind, st);
        return -1;
    }
    FILE *f = fopen(out, "r");
    if (!f)
        return -1;
    char line[512];
    double ir = -1.0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "totals:", 7) == 0 || strncmp(line, "summary:", 8) == 0)
            ir = strtod(strchr(line, ':') + 1, NULL);
    fclose(f);
    unlink(out);
    if (ir <= 0)
        return -1;
    *ir_per_unit = ir / (double)n;
    return 0;
}

static int kw_bench_callgrind(kw_bench *b)
{
    char m1[64], m2[64];
    printf("\n### Instructions (valgrind --tool=callgrind, Ir inside the fixed-work loop / units)\n\n");
    printf("| figure | measured | per unit | target | verdict |\n|---|---|---|---|---|\n");
    char *probe[] = {"valgrind", "--version", NULL};
    if (kw_bench_spawn(NULL, probe, 0) != 0) {
        kw_bench_row("instructions per stage-1 evaluation", "not measured: valgrind not found",
                     "-", "report", "-");
        return 0;
    }
    long n = 20000;
    double ir;
    if (kw_bench_callgrind_ir(&ir, b, "cost", "kw_bench_cost_loop", n) == 0) {
        snprintf(m1, sizeof m1, "%s Ir", kw_bench_count(m2, sizeof m2, ir));
        snprintf(m2, sizeof m2, "over %ld evaluations", n);
        kw_bench_row("instructions per stage-1 evaluation (7B attention block)", m1, m2, "report",
                     "-");
    } else {
        kw_bench_row("instructions per stage-1 evaluation", "failed", "-", "report", "MISS");
    }
    n = 50000;
    if (kw_bench_callgrind_ir(&ir, b, "sim", "kw_bench_sim_loop", n) == 0) {
        snprintf(m1, sizeof m1, "%s Ir", kw_bench_count(m2, sizeof m2, ir));
        snprintf(m2, sizeof m2, "over %ld requests", n);
        kw_bench_row("instructions per simulated request (default.xml's 5 shapes, runs of 10,000)", m1,
                     m2, "report", "-");
    } else {
        kw_bench_row("instructions per simulated request", "failed", "-", "report", "MISS");
    }
    n = 32;
    if (kw_bench_callgrind_ir(&ir, b, "full", "kw_bench_full_loop", n) == 0) {
        snprintf(m1, sizeof m1, "%s Ir", kw_bench_count(m2, sizeof m2, ir));
        snprintf(m2, sizeof m2, "over %ld evaluations", n);
        char fig[160];
        snprintf(fig, sizeof fig, "instructions per full evaluation (default.xml, %d simulated requests, "
                 "drift cache warm)", b->cfg->space.sim_requests);
        kw_bench_row(fig, m1, m2, "report", "-");
    } else {
        kw_bench_row("instructions per full evaluation", "failed", "-", "report", "MISS");
    }
    return 0;
}

static int kw_bench_engine(kw_journal **j, double *wall_s, kw_bench *b, const kw_knobspace *ks,
                           const kw_evaluator *ev, const kw_engine_opts *o, const char *tag);

/* In process: kw_engine_run on default.xml, 1 and 2 threads, no fsync. */
static int kw_bench_threads_lib(kw_bench *b)
{
    kw_model_eval *me = NULL;
    kw_model_opts mo = {.drift = 1, .seed = 1};
    double wall[2][3], cpu[2][3];
    int rc = kw_eval_new(&me, b->cfg, &mo);
    for (int rep = 0; rep < 3 && rc == 0; rep++)
        for (int t = 0; t < 2 && rc == 0; t++) {
            /* a fresh evaluator each time: its drift cache must start cold in both */
            kw_eval_free(me);
            me = NULL;
            if ((rc = kw_eval_new(&me, b->cfg, &mo)) != 0)
                break;
            kw_engine_opts o;
            kw_engine_opts_init(&o);
            o.seed = 1;
            o.budget = b->tune_budget;
            o.threads = t + 1;
            o.min_effect_pct = b->cfg->space.min_effect_pct;
            kw_journal *j = NULL;
            double c0 = kw_bench_cpu_self();
            rc = kw_bench_engine(&j, &wall[t][rep], b, &b->cfg->space.knobs,
                                 kw_eval_iface(me), &o, "threads");
            cpu[t][rep] = kw_bench_cpu_self() - c0;
            kw_journal_free(j);
        }
    kw_eval_free(me);
    if (rc != 0)
        return rc;
    double m1 = kw_bench_median(wall[0], 3), m2 = kw_bench_median(wall[1], 3), sp = m1 / m2;
    double c1 = kw_bench_median(cpu[0], 3), c2 = kw_bench_median(cpu[1], 3);
    char meas[32], u[192], fig[160];
    snprintf(meas, sizeof meas, "%.2fx", sp);
    snprintf(u, sizeof u, "wall %.2f s / %.2f s, CPU %.2f s / %.2f s (1 / 2 threads); load %.1f", m1,
             m2, c1, c2, kw_bench_load1());
    snprintf(fig, sizeof fig, "2-thread speedup of kw_engine_run in process (same job, no fsync)");
    kw_bench_row(fig, meas, u, ">= 1.8x", kw_bench_verdict(sp >= KW_BENCH_SPEEDUP_TARGET));
    return 0;
}

/* End to end: the same tuning job with --threads 1 and 2. */
static int kw_bench_threads(kw_bench *b)
{
    char m1[64], u[192], budget[32];
    printf("\n### Threads (a fixed tuning job on default.xml's 5 shapes, wall time, median of 3)\n\n");
    printf("| figure | measured | per unit | target | verdict |\n|---|---|---|---|---|\n");
    if (!b->knobwise[0] || access(b->knobwise, X_OK) != 0) {
        kw_bench_row("2-thread speedup of knobwise tune", "not measured: no knobwise binary (--knobwise)",
                     "-", ">= 1.8x", "-");
        return kw_bench_threads_lib(b);
    }
    snprintf(budget, sizeof budget, "%ld", b->tune_budget);
    double med[2], cmed[2];
    for (int t = 0; t < 2; t++) {
        double wall[3], cpu[3];
        for (int rep = 0; rep < 3; rep++) {
            char dir[KW_PATH_MAX + 32];
            snprintf(dir, sizeof dir, "%s/tune-t%d-%d", b->tmpdir, t + 1, rep);
            char threads[8];
            snprintf(threads, sizeof threads, "%d", t + 1);
            char *argv[] = {b->knobwise, "tune", "--budget", budget, "--seed", "1", "--threads",
                            threads, "--out", dir, "--quiet", NULL};
            int st = kw_bench_spawn_cpu(&wall[rep], &cpu[rep], argv, 0);
            if (st != 0) {
                fprintf(stderr, "bench: %s tune --budget %s --threads %s --out %s exited %d\n",
                        b->knobwise, budget, threads, dir, st);
                kw_bench_row("2-thread speedup of knobwise tune", "not measured: knobwise tune failed",
                             "-", ">= 1.8x", "MISS");
                return kw_bench_threads_lib(b);
            }
            char *rm[] = {"rm", "-rf", dir, NULL};
            kw_bench_spawn(NULL, rm, 0);
        }
        med[t] = kw_bench_median(wall, 3);
        cmed[t] = kw_bench_median(cpu, 3);
    }
    double sp = med[0] / med[1];
    snprintf(m1, sizeof m1, "%.2fx", sp);
    snprintf(u, sizeof u, "wall %.2f s / %.2f s, CPU %.2f s / %.2f s (1 / 2 threads); load %.1f",
             med[0], med[1], cmed[0], cmed[1], kw_bench_load1());
    char fig[160];
    snprintf(fig, sizeof fig, "2-thread speedup of `knobwise tune --budget %s --seed 1` (5 shapes)",
             budget);
    kw_bench_row(fig, m1, u, ">= 1.8x", kw_bench_verdict(sp >= KW_BENCH_SPEEDUP_TARGET));
    return kw_bench_threads_lib(b);
}

/* ---------------------------------------------- engine-driven sections */

/* An evaluator over a subset of a space's knobs: the others stay at baseline.
 * Lets the knob-count growth run the engine on 4, 8, ... knobs of one space. */
typedef struct kw_bench_sub {
    const kw_knobspace *full;
    const kw_evaluator *inner;
    int n_sel;
    int sel[KW_KNOB_MAX];
    kw_evaluator iface;
    kw_knobspace ks;
} kw_bench_sub;

static int kw_bench_sub_eval(void *ctx, const kw_cand *c, int shape, int rep, kw_metrics *out)
{
    const kw_bench_sub *s = ctx;
    kw_cand full;
    kw_knobs_cand_baseline(&full, s->full);
    for (int i = 0; i < s->n_sel; i++)
        full.v[s->sel[i]] = c->v[i];
    return s->inner->eval(s->inner->ctx, &full, shape, rep, out);
}

static int kw_bench_sub_key(void *ctx, const kw_cand *c, int shape, kw_skey *out)
{
    const kw_bench_sub *s = ctx;
    kw_cand full;
    kw_knobs_cand_baseline(&full, s->full);
    for (int i = 0; i < s->n_sel; i++)
        full.v[s->sel[i]] = c->v[i];
    return s->inner->service_key(s->inner->ctx, &full, shape, out);
}

static int kw_bench_sub_predict(void *ctx, const kw_cand *c, int shape, kw_metrics *out)
{
    const kw_bench_sub *s = ctx;
    kw_cand full;
    kw_knobs_cand_baseline(&full, s->full);
    for (int i = 0; i < s->n_sel; i++)
        full.v[s->sel[i]] = c->v[i];
    return s->inner->predict(s->inner->ctx, &full, shape, out);
}

/* Keep knobs sel[0..n) of full; a constraint keeps the terms on kept knobs,
 * drops terms a baseline value satisfies, and disappears when a dropped
 * knob's baseline can never satisfy its term. */
static void kw_bench_sub_init(kw_bench_sub *s, const kw_knobspace *full, const kw_evaluator *inner,
                              const int *sel, int n)
{
    memset(s, 0, sizeof *s);
    s->full = full;
    s->inner = inner;
    s->n_sel = n;
    for (int i = 0; i < n; i++) {
        s->sel[i] = sel[i];
        s->ks.knobs[i] = full->knobs[sel[i]];
    }
    s->ks.n_knobs = n;
    for (int c = 0; c < full->n_constraints; c++) {
        const kw_constraint *fc = &full->constraints[c];
        kw_constraint nc = *fc;
        nc.n_terms = 0;
        int live = 1;
        for (int t = 0; t < fc->n_terms && live; t++) {
            int pos = -1;
            for (int i = 0; i < n; i++)
                if (sel[i] == fc->terms[t].knob)
                    pos = i;
            if (pos >= 0) {
                nc.terms[nc.n_terms].knob = pos;
                nc.terms[nc.n_terms++].mask = fc->terms[t].mask;
            } else if (!((fc->terms[t].mask >> full->knobs[fc->terms[t].knob].baseline) & 1u)) {
                live = 0;
            }
        }
        if (live && nc.n_terms > 0)
            s->ks.constraints[s->ks.n_constraints++] = nc;
    }
    s->iface = *inner;
    s->iface.ctx = s;
    s->iface.eval = kw_bench_sub_eval;
    s->iface.predict = inner->predict ? kw_bench_sub_predict : NULL;
    s->iface.paired = NULL; /* the inner evaluator's ctx, not this one's */
    s->iface.service_key = inner->service_key ? kw_bench_sub_key : NULL;
}

/* One engine run into a fresh journal under tmpdir; *j loaded afterwards. */
static int kw_bench_engine(kw_journal **j, double *wall_s, kw_bench *b, const kw_knobspace *ks,
                           const kw_evaluator *ev, const kw_engine_opts *o, const char *tag)
{
    char path[KW_PATH_MAX + 64];
    static int serial;
    snprintf(path, sizeof path, "%s/journal.%s.%d", b->tmpdir, tag, serial++);
    kw_run_info info = {.journal_path = path, .version = PACKAGE_VERSION, .no_sync = 1};
    kw_engine_summary sum;
    double t0 = kw_bench_now();
    int rc = kw_engine_run(&sum, ks, ev, o, &info);
    if (wall_s)
        *wall_s = kw_bench_now() - t0;
    if (rc == 0)
        b->alias_mismatches += sum.alias_mismatches;
    if (rc == 0)
        rc = kw_journal_load(j, path);
    if (rc != 0)
        fprintf(stderr, "bench: engine (%s): %s\n", tag, kw_error_last());
    if (getenv("KW_BENCH_KEEP"))
        fprintf(stderr, "bench: journal kept: %s\n", path); /* tests/bench/journal_rounds.py */
    else
        unlink(path);
    return rc;
}

/* Best guard-passing primary among a shape's E records (repetition 0). */
static double kw_bench_best_seen(const kw_journal *j, int shape)
{
    double best = INFINITY;
    int p = j->h.primary;
    for (size_t i = 0; i < j->n_evals; i++) {
        const kw_jeval *e = &j->evals[i];
        if (e->shape == shape && e->rc == 0 && e->guards[0] == '\0' && e->m[p] < best)
            best = e->m[p];
    }
    return best;
}

#define KW_BENCH_SEEDS 5 /* model and engine seeds per shape (growth, quality) */

/* The knob-count sweep (issue 18: evaluations to converge at most linear in the knob
 * values): each row runs the engine on the knobs, all shapes, for seeds 1..N (the seed
 * drives the model's arrivals and drift data and the engine's, as in the quality table;
 * one seed's count moves by tens of percent with the landscape it draws). Two readings
 * of each row: the ratio to the line through the origin and the first row (the target's
 * reading: it moves with the first row), and the marginal evaluations per knob value
 * added since the row before (a linear growth keeps it flat, whatever the first row). */
static int kw_bench_growth_knobs(kw_bench *b)
{
    kw_model_eval *me = NULL;
    kw_bench_sub *sub = calloc(1, sizeof *sub);
    int rc = -1;
    if (!sub)
        return -1;
    const kw_knobspace *full = &b->cfg->space.knobs;
    int seeds = b->seeds > 0 ? b->seeds : b->quick ? 2 : KW_BENCH_SEEDS;
    int n_shapes = b->cfg->space.n_shapes;
    printf("\n#### Search cost as the knob count grows (default.xml, knobs spread evenly over its list, "
           "all %d shapes, seeds 1-%d, one thread, no budget)\n\n", n_shapes, seeds);
    printf("| knobs | values over all domains | space size | evaluations to converge per shape, mean "
           "over the seeds (seeds' range) | seed 1 (all shapes) | linear from the first row | "
           "added evaluations per added knob value, from the row before | engine wall, all seeds | "
           "per evaluation | aliases per shape beside (not evaluated; seeds' range)%s |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n",
           b->alias_check ? ", and of them differing from their originals when evaluated in full" : "");
    const int counts[] = {4, 8, 16, full->n_knobs};
    double first_per_value = 0, prev_mean = 0;
    int prev_values = 0;
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        int n = counts[ci] < full->n_knobs ? counts[ci] : full->n_knobs;
        if (ci > 0 && n == counts[ci - 1])
            continue;
        int sel[KW_KNOB_MAX];
        for (int i = 0; i < n; i++)
            sel[i] = (int)((long)i * full->n_knobs / n);
        double sum = 0, lo = INFINITY, hi = 0, wall = 0, asum = 0, alo = INFINITY, ahi = 0;
        size_t evals1 = 0;
        long mism0 = b->alias_mismatches;
        for (int seed = 1; seed <= seeds; seed++) {
            kw_model_opts mo = {.drift = 1, .seed = (uint64_t)seed};
            kw_eval_free(me);
            me = NULL;
            if (kw_eval_new(&me, b->cfg, &mo) != 0)
                goto done;
            kw_bench_sub_init(sub, full, kw_eval_iface(me), sel, n);
            kw_engine_opts o;
            kw_engine_opts_init(&o);
            o.seed = (uint64_t)seed;
            o.min_effect_pct = b->cfg->space.min_effect_pct;
            o.alias_check = b->alias_check;
            kw_journal *j = NULL;
            double w = 0;
            char tag[32];
            snprintf(tag, sizeof tag, "knobs%d.seed%d", n, seed);
            if (kw_bench_engine(&j, &w, b, &sub->ks, &sub->iface, &o, tag) != 0)
                goto done;
            /* full evaluations (since stop 47 an alias is no evaluation: kw_engine.c) */
            long aliases = 0;
            for (int s = 0; s < j->h.n_shapes && s < KW_JOURNAL_SHAPE_MAX; s++)
                aliases += j->n_alias[s];
            size_t full_evals = j->n_evals - (size_t)aliases;
            double per = (double)full_evals / n_shapes;
            sum += (double)full_evals;
            lo = fmin(lo, per);
            hi = fmax(hi, per);
            asum += (double)aliases;
            alo = fmin(alo, (double)aliases / n_shapes);
            ahi = fmax(ahi, (double)aliases / n_shapes);
            wall += w;
            if (seed == 1)
                evals1 = full_evals;
            kw_journal_free(j);
        }
        char c1[64], lin[64];
        uint64_t size = kw_knobs_size(&sub->ks);
        int values = 0;
        for (int i = 0; i < n; i++)
            values += sub->ks.knobs[i].n_values;
        double mean = sum / seeds / n_shapes;
        if (ci == 0)
            first_per_value = mean / values;
        snprintf(lin, sizeof lin, "%.0f (%.1fx)", first_per_value * values,
                 mean / (first_per_value * values));
        /* the marginal cost (issue 18): linear growth keeps it flat; the first row's
         * mean per value is its own (from no knobs) */
        char marg[64];
        if (ci == 0)
            snprintf(marg, sizeof marg, "%.1f (%.0f / %d, from none)", mean / values, mean, values);
        else
            snprintf(marg, sizeof marg, "%.1f ((%.0f - %.0f) / (%d - %d))",
                     (mean - prev_mean) / (values - prev_values), mean, prev_mean, values,
                     prev_values);
        prev_mean = mean;
        prev_values = values;
        char al[96];
        int al_n = snprintf(al, sizeof al, "%.1f (%.0f-%.0f)", asum / seeds / n_shapes, alo, ahi);
        if (b->alias_check && al_n > 0 && (size_t)al_n < sizeof al)
            snprintf(al + al_n, sizeof al - (size_t)al_n, ", %ld differ", b->alias_mismatches - mism0);
        printf("| %d | %d | %s | %.1f (%.0f-%.0f) | %zu | %s | %s | %.2f s | %.0f us | %s |\n", n,
               values, size == UINT64_MAX ? "> 1.8e19" : kw_bench_count(c1, sizeof c1, (double)size),
               mean, lo, hi, evals1, lin, marg, wall, sum > 0 ? 1e6 * wall / sum : 0.0, al);
    }
    rc = 0;
done:
    kw_eval_free(me);
    free(sub);
    return rc;
}

/* Cost per simulated request of one shape as one dimension grows. */
static int kw_bench_growth_sim(kw_bench *b, const char *what, const int *values, int n_values)
{
    int shape = 0; /* the first Poisson shape of default.xml */
    for (int i = b->cfg->space.n_shapes - 1; i >= 0; i--)
        if (b->cfg->workload.shapes[b->cfg->space.shapes[i]].arrival == KW_ARRIVAL_POISSON)
            shape = i;
    const kw_shape *s = &b->cfg->workload.shapes[b->cfg->space.shapes[shape]];
    printf("\n#### Simulation cost as %s grow (%s, baseline mapping, same load%s)\n\n", what, s->name,
           strcmp(what, "cores") == 0 ? ", DRAM bandwidth per core kept" : "");
    printf("| %s | ns per simulated request | relative to the first row |\n|---|---|---|\n", what);
    double first = 0;
    kw_bench_simcase *sc = calloc(1, sizeof *sc);
    if (!sc)
        return -1;
    for (int i = 0; i < n_values; i++) {
        int req = 20000, cores = 0, streams = 0;
        if (strcmp(what, "requests") == 0)
            req = values[i];
        else if (strcmp(what, "streams") == 0)
            streams = values[i];
        else
            cores = values[i];
        if (kw_bench_simcase_init(sc, b->cfg, shape, cores, streams, req) != 0) {
            fprintf(stderr, "bench: %s=%d: %s\n", what, values[i], kw_error_last());
            free(sc);
            return -1;
        }
        kw_bench_simwork w = {sc, 1};
        double r = kw_bench_rate(NULL, kw_bench_sim_work, &w, 1, 1);
        if (r < 0) {
            fprintf(stderr, "bench: %s=%d: %s\n", what, values[i], kw_error_last());
            free(sc);
            return -1;
        }
        double ns = 1e9 / r;
        if (i == 0)
            first = ns;
        char c[32];
        printf("| %s | %.0f | %.2fx |\n", kw_bench_count(c, sizeof c, values[i]), ns, ns / first);
    }
    free(sc);
    return 0;
}

static int kw_bench_growth(kw_bench *b)
{
    printf("\n### Cost growth\n");
    static const int requests[] = {1000, 10000, 100000, 1000000};
    static const int streams[] = {1, 4, 16, 64, 256};
    static const int cores[] = {1, 2, 4, 8, 16, 32};
    if (kw_bench_growth_sim(b, "requests", requests, b->quick ? 3 : 4) != 0 ||
        kw_bench_growth_sim(b, "streams", streams, 5) != 0 ||
        kw_bench_growth_sim(b, "cores", cores, 6) != 0)
        return -1;
    return kw_bench_growth_knobs(b);
}

/* Every config of a space with one model seed, evaluated once (the exhaustive
 * optimum comes from it, and the engine runs replay it through kw_bench_tab_eval
 * instead of evaluating again: the same figures, bit for bit, at the cost of a
 * lookup, so 5 seeds x 5 budgets per shape stay within a minute or two). */
typedef struct kw_bench_tab {
    const kw_knobspace *ks;
    const kw_evaluator *inner;
    int n_shapes;
    size_t n_cells;      /* mixed-radix size of the space */
    kw_metrics *m;       /* [shape * n_cells + index] */
    int *rc;             /* evaluator status of each cell (1: constraint, not evaluated) */
    long *n_valid;       /* per shape */
    double *opt;         /* per shape: exhaustive best guard-passing primary */
    size_t *opt_cell;    /* per shape: its cell (first in enumeration order among ties) */
    kw_evaluator iface;
    /* the inner evaluator's paired comparisons (the search's re-rank), kept: the budgets
     * of one (shape, seed) mostly compare the same configs */
    struct kw_bench_pk {
        int shape;
        uint64_t a, b;
        long n;
        kw_paired v;
    } *pk;
    size_t n_pk, cap_pk;
    long pk_made, pk_requests; /* comparisons simulated (not taken from pk), their requests */
} kw_bench_tab;

static size_t kw_bench_tab_index(const kw_knobspace *ks, const kw_cand *c)
{
    size_t idx = 0;
    for (int k = 0; k < ks->n_knobs; k++)
        idx = idx * (size_t)ks->knobs[k].n_values + c->v[k];
    return idx;
}

static int kw_bench_tab_eval(void *ctx, const kw_cand *c, int shape, int rep, kw_metrics *out)
{
    (void)rep;
    const kw_bench_tab *t = ctx;
    size_t i = (size_t)shape * t->n_cells + kw_bench_tab_index(t->ks, c);
    if (t->rc[i] != 0)
        return kw_error_set(KW_EINPUT, "bench: config outside the table (rc %d)", t->rc[i]);
    *out = t->m[i];
    return 0;
}

static int kw_bench_tab_key(void *ctx, const kw_cand *c, int shape, kw_skey *out)
{
    const kw_bench_tab *t = ctx;
    return t->inner->service_key(t->inner->ctx, c, shape, out);
}

static int kw_bench_tab_predict(void *ctx, const kw_cand *c, int shape, kw_metrics *out)
{
    const kw_bench_tab *t = ctx;
    return t->inner->predict(t->inner->ctx, c, shape, out);
}

static int kw_bench_tab_paired(void *ctx, const kw_cand *a, const kw_cand *b, int shape, double p,
                               long samples, kw_paired *out)
{
    kw_bench_tab *t = ctx;
    uint64_t ia = kw_knobs_cand_id(t->ks, a), ib = kw_knobs_cand_id(t->ks, b);
    for (size_t i = 0; i < t->n_pk; i++)
        if (t->pk[i].shape == shape && t->pk[i].a == ia && t->pk[i].b == ib && t->pk[i].n == samples) {
            *out = t->pk[i].v;
            return 0;
        }
    int rc = t->inner->paired(t->inner->ctx, a, b, shape, p, samples, out);
    if (rc != 0)
        return rc;
    t->pk_made++;
    t->pk_requests += 2 * samples;
    if (t->n_pk == t->cap_pk) {
        size_t cap = t->cap_pk ? 2 * t->cap_pk : 64;
        struct kw_bench_pk *n = realloc(t->pk, cap * sizeof *n);
        if (!n)
            return 0; /* not kept: made again when asked again */
        t->pk = n;
        t->cap_pk = cap;
    }
    t->pk[t->n_pk++] = (struct kw_bench_pk){shape, ia, ib, samples, *out};
    return 0;
}

static void kw_bench_tab_free(kw_bench_tab *t)
{
    if (!t)
        return;
    free(t->pk);
    free(t->m);
    free(t->rc);
    free(t->n_valid);
    free(t->opt);
    free(t->opt_cell);
    free(t);
}

/* Enumerate every config of every shape through ev (mixed radix, last knob fastest). */
static int kw_bench_tab_new(kw_bench_tab **out, const kw_knobspace *ks, const kw_evaluator *ev,
                            int primary)
{
    kw_bench_tab *t = calloc(1, sizeof *t);
    uint64_t size = kw_knobs_size(ks);
    if (!t || size > 100000)
        goto fail;
    t->ks = ks;
    t->inner = ev;
    t->n_shapes = ev->n_shapes;
    t->n_cells = (size_t)size;
    t->m = calloc(t->n_cells * (size_t)t->n_shapes, sizeof *t->m);
    t->rc = calloc(t->n_cells * (size_t)t->n_shapes, sizeof *t->rc);
    t->n_valid = calloc((size_t)t->n_shapes, sizeof *t->n_valid);
    t->opt = calloc((size_t)t->n_shapes, sizeof *t->opt);
    t->opt_cell = calloc((size_t)t->n_shapes, sizeof *t->opt_cell);
    if (!t->m || !t->rc || !t->n_valid || !t->opt || !t->opt_cell)
        goto fail;
    for (int s = 0; s < t->n_shapes; s++) {
        kw_cand c;
        memset(&c, 0, sizeof c);
        t->opt[s] = INFINITY;
        for (size_t i = 0; i < t->n_cells; i++) {
            size_t cell = (size_t)s * t->n_cells + i;
            if (kw_knobs_cand_violates(ks, &c) >= 0) {
                t->rc[cell] = 1;
            } else {
                int rc = ev->eval(ev->ctx, &c, s, 0, &t->m[cell]);
                if (rc != 0)
                    goto fail;
                t->n_valid[s]++;
                if (t->m[cell].guards[0] == '\0' && t->m[cell].v[primary] < t->opt[s]) {
                    t->opt[s] = t->m[cell].v[primary];
                    t->opt_cell[s] = i;
                }
            }
            int k = ks->n_knobs - 1;
            while (k >= 0 && ++c.v[k] == ks->knobs[k].n_values)
                c.v[k--] = 0;
        }
    }
    t->iface = *ev;
    t->iface.ctx = t;
    t->iface.eval = kw_bench_tab_eval;
    t->iface.predict = ev->predict ? kw_bench_tab_predict : NULL;
    /* the search's re-rank (kw_ofat.c) on the inner evaluator's long samples */
    t->iface.paired = ev->paired ? kw_bench_tab_paired : NULL;
    t->iface.noisy = 0;
    /* the search's aliases as a tune run makes them: keys from the inner evaluator,
     * whose results the cells are */
    t->iface.service_key = ev->service_key ? kw_bench_tab_key : NULL;
    *out = t;
    return 0;
fail:
    kw_bench_tab_free(t);
    return kw_error_set(KW_ENOMEM, "bench: cannot tabulate the space (%llu configs)",
                        (unsigned long long)size);
}

/* The re-rank's R records of shape s in j, one rival's sequence of looks at a time,
 * counted into b (kw_bench rr_seq...). */
static void kw_bench_rerank_seqs(kw_bench *b, const kw_journal *j, int s, double min_effect_pct)
{
    const kw_jrerank *first = NULL;
    uint64_t kept_id[8] = {0};
    long kept_n[8] = {0};
    unsigned long kept_used[8] = {0}, tick = 0;
    for (size_t i = 0; i <= j->n_reranks; i++) {
        const kw_jrerank *x = i < j->n_reranks ? &j->reranks[i] : NULL;
        if (x && x->shape != s)
            continue;
        if (first && (!x || x->id != first->id || x->rid != first->rid)) {
            const kw_jrerank *last = x ? x - 1 : &j->reranks[j->n_reranks - 1];
            while (last->shape != s)
                last--;
            int v = kw_journal_rerank_wins(last->a, last->b, last->half, min_effect_pct,
                                           last->a_guard) ? 0
                    : isfinite(last->half) && last->a - last->b > last->half          ? 1
                    : isfinite(last->half) &&
                            last->half <= min_effect_pct / 100.0 * fabs(last->b)      ? 2
                                                                                      : 3;
            b->rr_seq[v]++;
            int looks = 0;
            for (long n = first->n;; n = 2 * n < KW_RERANK_CAP ? 2 * n : KW_RERANK_CAP) {
                looks++;
                if (n >= KW_RERANK_CAP)
                    break;
            }
            for (const kw_jrerank *y = first; y < last; y++) {
                double hl = kw_simci_pair_half_looks(y->half, y->batches, looks, 0.05);
                if (y->shape != s || !isfinite(hl) ||
                    !(y->b - y->a + hl < min_effect_pct / 100.0 * fabs(y->b)))
                    continue;
                b->rr_fut_seq++;
                b->rr_fut_cut_win += v == 0;
                for (const kw_jrerank *z = y + 1; z <= last; z++)
                    b->rr_fut_saved += z->shape == s ? 2 * z->n : 0;
                break;
            }
            for (const kw_jrerank *y = first; y <= last; y++)
                if (y->shape == s) {
                    b->rr_looks[v]++;
                    b->rr_seq_req[v] += 2 * y->n;
                }
        }
        if (!x)
            break;
        if (!first || x->id != first->id || x->rid != first->rid)
            first = x;
        /* the model's kept sides (kw_eval.c kw_eval_seq_kept: the 8 last used, up to the
         * re-rank's cap), from empty at the run's start */
        for (int side = 0; side < 2; side++) {
            uint64_t id = side ? x->rid : x->id;
            int at = -1, lru = 0;
            for (int k = 0; k < 8; k++) {
                if (kept_used[k] && kept_id[k] == id && kept_n[k] == x->n)
                    at = k;
                if (kept_used[k] < kept_used[lru])
                    lru = k;
            }
            if (at < 0) {
                b->rr_sim_req += x->n;
                if (x->n > KW_RERANK_CAP)
                    continue;
                at = lru;
                kept_id[at] = id;
                kept_n[at] = x->n;
            }
            kept_used[at] = ++tick;
        }
        /* the leader simulated again at a sample it was simulated at before */
        for (const kw_jrerank *y = j->reranks; y < x; y++)
            if (y->shape == s && y->n == x->n && (y->rid == x->rid || y->id == x->rid)) {
                b->rr_lead_again_req += x->n;
                break;
            }
    }
}

/* Best primary of shape s after an engine run with options o (one shape);
 * INFINITY when the recommended config fails a guard. */
static int kw_bench_run_best(double *rec, kw_cand *rec_c, double *seen, long *evals, kw_bench *b,
                             const kw_knobspace *ks, const kw_evaluator *ev,
                             const kw_engine_opts *o, const char *tag)
{
    kw_journal *j = NULL;
    int s = o->shapes[0];
    int rc = kw_bench_engine(&j, NULL, b, ks, ev, o, tag);
    if (rc != 0)
        return rc;
    kw_jresult res;
    if ((rc = kw_journal_shape_result(&res, j, s)) == 0) {
        /* a recommendation that fails a guard (a run that never left a baseline
         * outside the SLA, or stopped on its way toward the guards) is no
         * optimum at any figure: infinitely far from it */
        kw_jstats st;
        if (o->strategy == KW_STRATEGY_OFAT) {
            b->rr_runs++;
            b->rr_evals += res.evals;
            b->rr_with += j->rerank_req[s] > 0;
            b->rr_requests += j->rerank_req[s];
            kw_bench_rerank_seqs(b, j, s, o->min_effect_pct);
            int moved = 0;
            for (size_t i = 0; i < j->n_steps && !moved; i++)
                moved = j->steps[i].shape == s && strncmp(j->steps[i].reason, "re-rank:", 8) == 0;
            b->rr_moved += moved;
        }
        int ok = kw_journal_stats(&st, j, s, res.best_id) == 0 && st.guards_ok;
        *rec = ok ? res.best_primary : INFINITY;
        *rec_c = res.best;
        *evals = res.evals;
        kw_journal_result_clear(&res);
        *seen = kw_bench_best_seen(j, s);
    }
    kw_journal_free(j);
    return rc;
}

/* The quality table's budgets, as shares of a shape's valid configs (issue
 * "the search at 1% of the space": targets at 1% and 2%, reported to 10%). */
static const double kw_bench_budget_pct[] = {1.0, 2.0, 5.0, 10.0};
#define KW_BENCH_N_BUDGETS ((int)(sizeof kw_bench_budget_pct / sizeof kw_bench_budget_pct[0]))
#define KW_BENCH_CONVERGED_GAP_PCT 1.0    /* no seed may converge further above the optimum */
#define KW_BENCH_AT1_SHARE 0.95           /* share of runs within the gap at the 1% budget */

typedef struct kw_bench_qtot {
    int runs;                              /* (shape, seed) pairs */
    int within[KW_BENCH_N_BUDGETS];        /* runs within KW_BENCH_QUALITY_GAP_PCT */
    int conv_within, conv_over1, rnd_within;
    double worst_conv_pct;
    char worst_conv[256];
    char over1[2048];                      /* every (space, shape, seed) converged > 1% above */
    char nofeas[1024];                     /* every (space, shape, seed) with no guard-passing config */
    char miss[2][4096];                    /* every run not within at the 1% and 2% budgets */
    int long_runs;                         /* (bursty shape, seed) pairs judged on the long sample */
    int moved_in[KW_BENCH_N_BUDGETS + 1];  /* of their runs: within only on the long sample */
    int moved_out[KW_BENCH_N_BUDGETS + 1]; /* within only on the search's own sample */
    int conv_over1_short;                  /* of their converged runs: over 1% on the search's own sample */
    /* recommendations that fail a guard on the judge's long sample (the search's sample
     * passed them): per budget, of them where the short-sample optimum passes there */
    int long_fails[KW_BENCH_N_BUDGETS + 1], long_fails_opt_ok[KW_BENCH_N_BUDGETS + 1];
    int long_opt_fails;                    /* (shape, seed) whose optimum fails one there */
    char long_fails_conv[2048];            /* the converged ones, named */
} kw_bench_qtot;

static int kw_bench_dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A shape of the space has bursty arrivals (judged on the long sample). */
static int kw_bench_bursty(const kw_config *cfg, int s)
{
    return cfg->workload.shapes[cfg->space.shapes[s]].arrival == KW_ARRIVAL_BURSTY;
}

/* The long-sample judge of one (bursty shape, seed): the primary of each config it was asked
 * for, on KW_BENCH_LONG_REQUESTS requests of the same arrival streams, each config simulated
 * once (most runs recommend the optimum itself). */
typedef struct kw_bench_long {
    kw_model_eval *me;    /* the seed's long evaluator (NULL until a bursty shape needs it) */
    int shape, n;
    uint64_t id[16];
    double v[16];
    int fails[16];        /* fails a guard on the long sample (its guards list not empty) */
} kw_bench_long;

static int kw_bench_long_primary(double *out, int *fails, kw_bench_long *L, const kw_config *cfg,
                                 const kw_model_eval *borrow, uint64_t seed, int primary,
                                 const kw_knobspace *ks, const kw_cand *c, int s)
{
    if (!L->me) {
        kw_model_opts mo = {.drift = 1, .seed = seed, .sim_requests = KW_BENCH_LONG_REQUESTS,
                            .borrow_from = borrow};
        int rc = kw_eval_new(&L->me, cfg, &mo);
        if (rc != 0)
            return rc;
    }
    if (L->shape != s)
        L->n = 0, L->shape = s;
    uint64_t id = kw_knobs_cand_id(ks, c);
    for (int i = 0; i < L->n; i++)
        if (L->id[i] == id) {
            *out = L->v[i];
            *fails = L->fails[i];
            return 0;
        }
    const kw_evaluator *ev = kw_eval_iface(L->me);
    kw_metrics m;
    int rc = ev->eval(ev->ctx, c, s, 0, &m);
    if (rc != 0)
        return rc;
    *out = m.v[primary];
    *fails = m.guards[0] != '\0';
    if (L->n < (int)(sizeof L->id / sizeof L->id[0])) {
        L->id[L->n] = id;
        L->fails[L->n] = *fails;
        L->v[L->n++] = *out;
    }
    return 0;
}

/* The config of cell i of the table (mixed radix, last knob fastest). */
static void kw_bench_tab_cand(kw_cand *c, const kw_knobspace *ks, size_t i)
{
    memset(c, 0, sizeof *c);
    for (int k = ks->n_knobs - 1; k >= 0; k--) {
        c->v[k] = (uint8_t)(i % (size_t)ks->knobs[k].n_values);
        i /= (size_t)ks->knobs[k].n_values;
    }
}

static int kw_bench_quality_space(kw_bench *b, const char *path, kw_bench_qtot *tot)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    int seeds = b->seeds > 0 ? b->seeds : b->quick ? 2 : KW_BENCH_SEEDS;
    int seed0 = b->seed0 > 1 && b->seed0 <= seeds ? b->seed0 : 1; /* seeds seed0 .. seeds */
    kw_config *cfg = NULL;
    int rc = kw_load_config(&cfg, path, NULL, NULL);
    if (rc != 0) {
        fprintf(stderr, "bench: %s: %s\n", path, kw_error_last());
        return rc;
    }
    int n_shapes = cfg->space.n_shapes;
    const kw_knobspace *ks = &cfg->space.knobs;
    /* per shape: within counts per budget, worst gaps, evaluations to converge */
    int (*within)[KW_BENCH_N_BUDGETS + 2] = calloc((size_t)n_shapes, sizeof *within);
    double *worst = calloc((size_t)n_shapes * (KW_BENCH_N_BUDGETS + 1), sizeof *worst);
    double *conv_evals = calloc((size_t)n_shapes * (size_t)seeds, sizeof *conv_evals);
    long *n_valid = calloc((size_t)n_shapes, sizeof *n_valid);
    double *opt1 = calloc((size_t)n_shapes, sizeof *opt1);
    int *nofeas = calloc((size_t)n_shapes, sizeof *nofeas); /* seeds without an optimum */
    if (!within || !worst || !conv_evals || !n_valid || !opt1 || !nofeas) {
        rc = kw_error_set(KW_ENOMEM, "out of memory");
        goto done;
    }
    for (int seed = seed0; seed <= seeds; seed++) {
        kw_model_eval *me = NULL;
        kw_bench_tab *tab = NULL;
        kw_bench_long L = {.shape = -1};
        kw_model_opts mo = {.drift = 1, .seed = (uint64_t)seed};
        if ((rc = kw_eval_new(&me, cfg, &mo)) != 0)
            goto done;
        const kw_evaluator *ev = kw_eval_iface(me);
        int primary = -1;
        for (int i = 0; i < ev->n_metrics; i++)
            if (strcmp(ev->metric_names[i], "p95_us") == 0)
                primary = i;
        if ((rc = kw_bench_tab_new(&tab, ks, ev, primary)) != 0) {
            kw_eval_free(me);
            goto done;
        }
        for (int s = 0; s < n_shapes && rc == 0; s++) {
            double opt = tab->opt[s];
            if (seed == seed0) {
                n_valid[s] = tab->n_valid[s];
                opt1[s] = opt;
            }
            kw_engine_opts o;
            kw_engine_opts_init(&o);
            o.seed = (uint64_t)seed;
            o.estimate = !b->no_estimate;
            if (b->no_rerank)
                o.rerank = 0;
            o.min_effect_pct = cfg->space.min_effect_pct;
            o.n_shapes = 1;
            o.shapes = &s;
            kw_knobuse_fuses(o.fuses, cfg);
            o.queue = kw_knobuse_queue(cfg);
            double rec, seen;
            kw_cand rec_c;
            long evals;
            int bursty = kw_bench_bursty(cfg, s) || b->long_all;
            double opt_long = NAN; /* the optimum on the long sample (bursty shapes) */
            int opt_fails = 0;     /* ... fails a guard there */
            /* no config passes every guard on this seed: there is no optimum to miss, so
             * the run is named apart and left out of every count */
            if (!isfinite(opt)) {
                size_t used = strlen(tot->nofeas);
                snprintf(tot->nofeas + used, sizeof tot->nofeas - used, "%s%s %s seed %d",
                         used ? "; " : "", base, ev->shape_names[s], seed);
                nofeas[s]++;
                continue;
            }
            tot->runs++;
            if (bursty) {
                kw_cand oc;
                kw_bench_tab_cand(&oc, ks, tab->opt_cell[s]);
                if ((rc = kw_bench_long_primary(&opt_long, &opt_fails, &L, cfg, me, (uint64_t)seed, primary, ks,
                                                &oc, s)) != 0)
                    break;
                tot->long_runs++;
                tot->long_opt_fails += opt_fails;
            }
            for (int bi = 0; bi <= KW_BENCH_N_BUDGETS && rc == 0; bi++) {
                kw_engine_opts ob = o; /* bi == KW_BENCH_N_BUDGETS: no budget (converged) */
                if (bi < KW_BENCH_N_BUDGETS) {
                    ob.budget = (long)floor(kw_bench_budget_pct[bi] / 100.0 * (double)tab->n_valid[s]);
                    if (ob.budget < 1)
                        ob.budget = 1;
                }
                if ((rc = kw_bench_run_best(&rec, &rec_c, &seen, &evals, b, ks, &tab->iface, &ob, "ofat")) != 0)
                    break;
                double gap = (rec - opt) / opt * 100.0;
                if (bursty && isfinite(rec)) {
                    /* judged on the long sample; the search's own sample's verdict is
                     * counted beside it (kw_bench_qtot short_within, moved_*) */
                    double rec_long;
                    int rec_fails;
                    if ((rc = kw_bench_long_primary(&rec_long, &rec_fails, &L, cfg, me, (uint64_t)seed, primary,
                                                    ks, &rec_c, s)) != 0)
                        break;
                    int in_short = gap <= KW_BENCH_QUALITY_GAP_PCT;
                    tot->long_fails[bi] += rec_fails;
                    tot->long_fails_opt_ok[bi] += rec_fails && !opt_fails;
                    if (rec_fails && bi == KW_BENCH_N_BUDGETS) {
                        size_t used = strlen(tot->long_fails_conv);
                        snprintf(tot->long_fails_conv + used, sizeof tot->long_fails_conv - used,
                                 "%s%s %s seed %d%s", used ? "; " : "", base, ev->shape_names[s],
                                 seed, opt_fails ? " (the optimum fails there too)" : "");
                    }
                    gap = (rec_long - opt_long) / opt_long * 100.0;
                    int in_long = gap <= KW_BENCH_QUALITY_GAP_PCT;
                    tot->moved_in[bi] += !in_short && in_long;
                    tot->moved_out[bi] += in_short && !in_long;
                    if (bi == KW_BENCH_N_BUDGETS)
                        tot->conv_over1_short += !(rec <= opt * (1.0 + KW_BENCH_CONVERGED_GAP_PCT / 100.0));
                }
                double *w = &worst[(size_t)s * (KW_BENCH_N_BUDGETS + 1) + (size_t)bi];
                if (seed - nofeas[s] == 1 || gap > *w) /* the first seed counted */
                    *w = gap;
                int in = gap <= KW_BENCH_QUALITY_GAP_PCT;
                within[s][bi] += in;
                if (bi < KW_BENCH_N_BUDGETS) {
                    tot->within[bi] += in;
                    if (!in && bi < 2) {
                        size_t used = strlen(tot->miss[bi]);
                        snprintf(tot->miss[bi] + used, sizeof tot->miss[bi] - used,
                                 "%s%s %s seed %d (%+.2f%%)", used ? "; " : "", base,
                                 ev->shape_names[s], seed, gap);
                    }
                    continue;
                }
                conv_evals[(size_t)s * (size_t)seeds + (size_t)(seed - seed0 - nofeas[s])] = (double)evals;
                tot->conv_within += in;
                int over = !(gap <= KW_BENCH_CONVERGED_GAP_PCT); /* not a number: a miss too */
                tot->conv_over1 += over;
                if (over) {
                    size_t used = strlen(tot->over1);
                    snprintf(tot->over1 + used, sizeof tot->over1 - used, "%s%s %s seed %d (%+.2f%%)",
                             used ? "; " : "", base, ev->shape_names[s], seed, gap);
                }
                if (gap > tot->worst_conv_pct || tot->worst_conv[0] == '\0') {
                    tot->worst_conv_pct = gap;
                    snprintf(tot->worst_conv, sizeof tot->worst_conv, "%s %s seed %d", base,
                             ev->shape_names[s], seed);
                }
            }
            if (rc != 0)
                break;
            /* random search at the 2% budget, the same seed */
            kw_engine_opts ro = o;
            ro.strategy = KW_STRATEGY_RANDOM;
            ro.budget = (long)floor(2.0 / 100.0 * (double)tab->n_valid[s]);
            if ((rc = kw_bench_run_best(&rec, &rec_c, &seen, &evals, b, ks, &tab->iface, &ro, "random")) != 0)
                break;
            double rgap = (rec - opt) / opt * 100.0;
            if (bursty && isfinite(rec)) {
                double rec_long;
                int rec_fails;
                if ((rc = kw_bench_long_primary(&rec_long, &rec_fails, &L, cfg, me, (uint64_t)seed, primary, ks,
                                                &rec_c, s)) != 0)
                    break;
                rgap = (rec_long - opt_long) / opt_long * 100.0;
            }
            int rin = rgap <= KW_BENCH_QUALITY_GAP_PCT;
            within[s][KW_BENCH_N_BUDGETS + 1] += rin;
            tot->rnd_within += rin;
        }
        kw_bench_tab_free(tab);
        kw_eval_free(L.me); /* borrows me's drift cache: freed first */
        kw_eval_free(me);
        if (rc != 0)
            goto done;
    }
    for (int s = 0; s < n_shapes; s++) {
        double *w = &worst[(size_t)s * (KW_BENCH_N_BUDGETS + 1)];
        double *ce = &conv_evals[(size_t)s * (size_t)seeds];
        int n = seeds - seed0 + 1 - nofeas[s]; /* the seeds counted */
        printf("| %s | %s%s | %ld | %.1f |", base, cfg->workload.shapes[cfg->space.shapes[s]].name,
               kw_bench_bursty(cfg, s) ? " (bursty: judged on the long sample)"
               : b->long_all           ? " (judged on the long sample)"
                                       : "",
               n_valid[s],
               opt1[s]);
        if (n == 0) {
            printf(" no seed has a guard-passing config |\n");
            continue;
        }
        qsort(ce, (size_t)n, sizeof *ce, kw_bench_dcmp);
        for (int bi = 0; bi < KW_BENCH_N_BUDGETS; bi++)
            printf(" %d/%d (%+.2f%%) |", within[s][bi], n, w[bi]);
        printf(" %d/%d (%+.2f%%), %.0f-%.0f |", within[s][KW_BENCH_N_BUDGETS], n,
               w[KW_BENCH_N_BUDGETS], ce[0], ce[n - 1]);
        printf(" %d/%d |\n", within[s][KW_BENCH_N_BUDGETS + 1], n);
    }
    rc = 0;
done:
    if (rc != 0)
        fprintf(stderr, "bench: quality on %s: %s\n", path, kw_error_last());
    free(within);
    free(worst);
    free(conv_evals);
    free(n_valid);
    free(opt1);
    free(nofeas);
    kw_load_config_free(cfg);
    return rc;
}

/* How good is the cheap stage (the model evaluator's predict(): stage 1 and
 * a closed-form queue) as a screen? Over every valid config of each shape of
 * the validation spaces (seed 1): Spearman's rank correlation of predicted and
 * simulated p95 over the configs passing every guard, the spread of
 * simulated / predicted (what the engine's error bound must cover), and where
 * the exhaustive optimum ranks by prediction. */
static int kw_bench_screen_space(const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    kw_config *cfg = NULL;
    kw_model_eval *me = NULL;
    kw_bench_tab *tab = NULL;
    double *x = NULL, *y = NULL, *work = NULL;
    int rc = kw_load_config(&cfg, path, NULL, NULL);
    if (rc != 0)
        goto done;
    kw_model_opts mo = {.drift = 1, .seed = 1};
    if ((rc = kw_eval_new(&me, cfg, &mo)) != 0)
        goto done;
    const kw_evaluator *ev = kw_eval_iface(me);
    const kw_knobspace *ks = &cfg->space.knobs;
    int primary = -1;
    for (int i = 0; i < ev->n_metrics; i++)
        if (strcmp(ev->metric_names[i], "p95_us") == 0)
            primary = i;
    double t0 = kw_bench_cpu_self();
    if ((rc = kw_bench_tab_new(&tab, ks, ev, primary)) != 0)
        goto done;
    double full_s = kw_bench_cpu_self() - t0;
    size_t n = tab->n_cells;
    x = malloc(n * sizeof *x);
    y = malloc(n * sizeof *y);
    work = malloc(2 * n * sizeof *work);
    if (!x || !y || !work) {
        rc = kw_error_set(KW_ENOMEM, "out of memory");
        goto done;
    }
    for (int s = 0; s < tab->n_shapes; s++) {
        kw_cand c;
        memset(&c, 0, sizeof c);
        size_t m = 0, n_pred = 0;
        double pred_s = 0, opt_pred = INFINITY;
        double lo = INFINITY, hi = 0;
        for (size_t i = 0; i < n; i++) {
            size_t cell = (size_t)s * n + i;
            if (tab->rc[cell] == 0) {
                kw_metrics pm;
                double t1 = kw_bench_cpu_self();
                if ((rc = ev->predict(ev->ctx, &c, s, &pm)) != 0)
                    goto done;
                pred_s += kw_bench_cpu_self() - t1;
                n_pred++;
                const kw_metrics *fm = &tab->m[cell];
                if (fm->guards[0] == '\0' && isfinite(pm.v[primary]) && pm.v[primary] > 0) {
                    x[m] = pm.v[primary];
                    y[m] = fm->v[primary];
                    double r = y[m] / x[m];
                    lo = r < lo ? r : lo;
                    hi = r > hi ? r : hi;
                    if (fm->v[primary] == tab->opt[s])
                        opt_pred = pm.v[primary];
                    m++;
                }
            }
            int k = ks->n_knobs - 1;
            while (k >= 0 && ++c.v[k] == ks->knobs[k].n_values)
                c.v[k--] = 0;
        }
        size_t rank = 0;
        for (size_t i = 0; i < m; i++)
            rank += x[i] < opt_pred;
        double rho = m > 2 ? gsl_stats_spearman(x, 1, y, 1, m, work) : NAN;
        printf("| %s | %s | %zu | %.3f | %.2f-%.2f | %zu (top %.1f%%) | %.1f us / %.0f us |\n", base,
               ev->shape_names[s], m, rho, lo, hi, rank + 1, 100.0 * (double)(rank + 1) / (double)m,
               1e6 * pred_s / (double)n_pred, 1e6 * full_s / (double)tab->n_valid[s] / tab->n_shapes);
    }
    rc = 0;
done:
    if (rc != 0)
        fprintf(stderr, "bench: screen on %s: %s\n", path, kw_error_last());
    free(x);
    free(y);
    free(work);
    kw_bench_tab_free(tab);
    kw_eval_free(me);
    kw_load_config_free(cfg);
    return rc;
}

static int kw_bench_screen(kw_bench *b)
{
    char pat[KW_PATH_MAX + 64];
    snprintf(pat, sizeof pat, "%s/spaces/validate%s%s.xml", b->srcdir, b->space ? "_" : "_*",
             b->space ? b->space : "");
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0)
        return 0;
    printf("\n### The cheap stage as a screen (predict: stage 1 + closed-form queue; seed 1, every "
           "valid config)\n\n| space | shape | guard-passing configs | Spearman rho, predicted vs "
           "simulated p95 | simulated / predicted, min-max | the optimum's rank by prediction | "
           "CPU per prediction / per full evaluation |\n|---|---|---|---|---|---|---|\n");
    int rc = 0;
    for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
        rc = kw_bench_screen_space(g.gl_pathv[i]);
    globfree(&g);
    return rc;
}

/* One space, seed 1, every shape, no budget, every alias also evaluated in full and
 * compared bit for bit with its original (opts.alias_check): a row of the aliases table. */
static int kw_bench_aliases_space(kw_bench *b, const char *path, int knobs_of_default)
{
    kw_config *cfg = NULL;
    int rc = knobs_of_default ? 0 : kw_load_config(&cfg, path, NULL, NULL);
    if (rc != 0) {
        fprintf(stderr, "bench: %s: %s\n", path, kw_error_last());
        return rc;
    }
    const kw_config *c = knobs_of_default ? b->cfg : cfg;
    kw_model_eval *me = NULL;
    kw_model_opts mo = {.drift = 1, .seed = 1};
    if ((rc = kw_eval_new(&me, c, &mo)) == 0) {
        kw_engine_opts o;
        kw_engine_opts_init(&o);
        o.seed = 1;
        o.min_effect_pct = c->space.min_effect_pct;
        o.alias_check = 1;
        kw_journal *j = NULL;
        double w = 0;
        long m0 = b->alias_mismatches;
        if ((rc = kw_bench_engine(&j, &w, b, &c->space.knobs, kw_eval_iface(me), &o, "aliases")) == 0) {
            long aliases = 0;
            for (int s = 0; s < j->h.n_shapes && s < KW_JOURNAL_SHAPE_MAX; s++)
                aliases += j->n_alias[s];
            const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
            printf("| %s | %d | %d | %ld | %ld (%.1f%%) | %ld | %.1f s |\n", base, c->space.knobs.n_knobs,
                   c->space.n_shapes, (long)j->n_evals - aliases, aliases,
                   j->n_evals ? 100.0 * (double)aliases / (double)j->n_evals : 0.0,
                   b->alias_mismatches - m0, w);
            kw_journal_free(j);
        }
    }
    kw_eval_free(me);
    kw_load_config_free(cfg);
    return rc;
}

/* The aliases checked (issue 18): spaces/default.xml (all its knobs) and every
 * spaces/validate_*.xml, each alias evaluated in full beside and compared. */
static int kw_bench_aliases(kw_bench *b)
{
    printf("\n#### Aliases checked (seed 1, every shape, no budget, one thread; each alias also "
           "evaluated in full and compared bit for bit with its original)\n\n"
           "| space | knobs | shapes | full evaluations | aliases (of all judged) | aliases differing "
           "| engine wall |\n|---|---|---|---|---|---|---|\n");
    int rc = kw_bench_aliases_space(b, "spaces/default.xml", 1);
    char pat[KW_PATH_MAX + 64];
    snprintf(pat, sizeof pat, "%s/spaces/validate%s%s.xml", b->srcdir, b->space ? "_" : "_*",
             b->space ? b->space : "");
    glob_t g;
    if (rc == 0 && glob(pat, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
            rc = kw_bench_aliases_space(b, g.gl_pathv[i], 0);
        globfree(&g);
    }
    printf("\naliases differing from their originals, all runs: %ld\n", b->alias_mismatches);
    return rc != 0 || b->alias_mismatches != 0;
}

static int kw_bench_quality(kw_bench *b)
{
    char pat[KW_PATH_MAX + 64];
    snprintf(pat, sizeof pat, "%s/spaces/validate%s%s.xml", b->srcdir, b->space ? "_" : "_*",
             b->space ? b->space : "");
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0) {
        printf("\nno validation spaces matched %s\n", pat);
        return 0;
    }
    int seeds = b->seeds > 0 ? b->seeds : b->quick ? 2 : KW_BENCH_SEEDS;
    if (b->seed0 > 1 && b->seed0 <= seeds) /* --first-seed: seeds seed0 .. seeds */
        seeds -= b->seed0 - 1;
    kw_engine_opts d;
    kw_engine_opts_init(&d);
    printf("\n### Search quality against the exhaustive optimum (primary p95; one thread)\n\n"
           "Every shipped space with a known optimum (spaces/validate_*.xml), each shape with %d "
           "seeds (the seed drives the model's arrivals and drift data, so each seed is its own "
           "landscape with its own exhaustive optimum, enumerated by the bench, not the engine). "
           "ofat = `--strategy ofat` with the engine's defaults (%s, tabu %d, probes %d, bounded "
           "fix, min effect from the space) at budgets of 1/2/5/10%% of the shape's valid configs "
           "and without a budget (converged). A cell: seeds whose recommendation is within %.1f%% "
           "of the optimum (worst gap over the seeds); converged also gives the range of "
           "evaluations it took. random = `--strategy random` at the 2%% budget. %s "
           "judged on a long sample: the search runs on the space's own "
           "sample (as tune does), then its recommendation and the exhaustive optimum (the "
           "config the enumeration picked on that sample) are both simulated again on %d "
           "requests of the same arrival streams (the same seed), and the gap is theirs: a run "
           "is a miss when its recommendation's p95 there is more than %.1f%% above the "
           "optimum's (the search's own sample cannot rank such a shape's configs).\n\n",
           seeds, kw_journal_policy_name(d.policy), d.tabu, d.probes, KW_BENCH_QUALITY_GAP_PCT,
           b->long_all ? "Every shape is" : "A shape with bursty arrivals (--bursty-long) is",
           KW_BENCH_LONG_REQUESTS, KW_BENCH_QUALITY_GAP_PCT);
    printf("| space | shape | valid configs | optimum p95 us (seed %d) |", b->seed0 > 1 ? b->seed0 : 1);
    for (int bi = 0; bi < KW_BENCH_N_BUDGETS; bi++)
        printf(" ofat %.0f%% |", kw_bench_budget_pct[bi]);
    printf(" ofat converged, evaluations | random 2%% |\n|---|---|---|---|");
    for (int bi = 0; bi < KW_BENCH_N_BUDGETS; bi++)
        printf("---|");
    printf("---|---|\n");
    kw_bench_qtot tot;
    memset(&tot, 0, sizeof tot);
    int rc = 0;
    for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
        rc = kw_bench_quality_space(b, g.gl_pathv[i], &tot);
    globfree(&g);
    if (rc != 0 || tot.runs == 0)
        return rc;
    printf("\n| target | measured | verdict |\n|---|---|---|\n");
    for (int bi = 0; bi < KW_BENCH_N_BUDGETS; bi++) {
        double share = (double)tot.within[bi] / tot.runs;
        const char *target = bi == 0 ? ">= 95% of runs" : bi == 1 ? "all runs" : "report";
        int ok = bi == 0 ? share >= KW_BENCH_AT1_SHARE : bi == 1 ? tot.within[bi] == tot.runs : 1;
        printf("| within %.1f%% at a %.0f%% budget | %d/%d (%.0f%%) | %s (%s) |\n",
               KW_BENCH_QUALITY_GAP_PCT, kw_bench_budget_pct[bi], tot.within[bi], tot.runs,
               100.0 * share, bi < 2 ? kw_bench_verdict(ok) : "-", target);
    }
    printf("| no seed more than %.0f%% above the optimum at convergence | %d/%d over; worst %+.2f%% "
           "(%s); %d/%d within %.1f%% | %s |\n",
           KW_BENCH_CONVERGED_GAP_PCT, tot.conv_over1, tot.runs, tot.worst_conv_pct, tot.worst_conv,
           tot.conv_within, tot.runs, KW_BENCH_QUALITY_GAP_PCT, kw_bench_verdict(tot.conv_over1 == 0));
    printf("| random at 2%% (for comparison) | %d/%d within %.1f%% | - |\n", tot.rnd_within, tot.runs,
           KW_BENCH_QUALITY_GAP_PCT);
    if (tot.long_runs > 0) {
        printf("\n%s: %d of the %d (shape, seed) runs judged on %d requests; verdicts "
               "that differ from the search's own sample's (within there, a miss here / a miss "
               "there, within here):", b->long_all ? "long sample" : "bursty shapes", tot.long_runs,
               tot.runs, KW_BENCH_LONG_REQUESTS);
        for (int bi = 0; bi <= KW_BENCH_N_BUDGETS; bi++) {
            if (bi < KW_BENCH_N_BUDGETS)
                printf(" %.0f%% %d / %d;", kw_bench_budget_pct[bi], tot.moved_out[bi], tot.moved_in[bi]);
            else
                printf(" converged %d / %d.", tot.moved_out[bi], tot.moved_in[bi]);
        }
        /* the table as the judge before it read (every shape on the search's own sample) */
        printf(" Every shape on the search's own sample instead:");
        for (int bi = 0; bi < KW_BENCH_N_BUDGETS; bi++)
            printf(" %d/%d at %.0f%%;", tot.within[bi] - tot.moved_in[bi] + tot.moved_out[bi], tot.runs,
                   kw_bench_budget_pct[bi]);
        int conv_short = tot.conv_within - tot.moved_in[KW_BENCH_N_BUDGETS] +
                         tot.moved_out[KW_BENCH_N_BUDGETS];
        printf(" converged %d/%d within, %d over %.0f%% among the long-judged runs\n", conv_short,
               tot.runs, tot.conv_over1_short, KW_BENCH_CONVERGED_GAP_PCT);
    }
    if (tot.long_runs) {
        printf("\nrecommendations failing a guard on the judge's long sample (they pass on the "
               "search's; the optimum judged is the short sample's, failing there too in %d of "
               "the %d (shape, seed)):", tot.long_opt_fails, tot.long_runs);
        for (int bi = 0; bi <= KW_BENCH_N_BUDGETS; bi++)
            printf("%s %d (%d where the optimum passes)", bi ? "," : "", tot.long_fails[bi],
                   tot.long_fails_opt_ok[bi]);
        printf(" at 1/2/5/10%%/converged%s%s\n", tot.long_fails_conv[0] ? "; converged: " : "",
               tot.long_fails_conv);
    }
    if (!b->no_rerank)
        printf("\nre-rank (kw_ofat.c, on where the search's sample cannot rank a shape): %ld of %ld "
           "ofat runs compared their top configs on a long "
           "paired sample, %ld of them moved the recommendation; %ld requests simulated for it "
           "(%.0f per run re-ranked), beside %ld evaluations of the space's sample (the budget "
           "counts those only)\n",
           b->rr_with, b->rr_runs, b->rr_moved,
           b->rr_requests, b->rr_with ? (double)b->rr_requests / (double)b->rr_with : 0.0, b->rr_evals);
    if (!b->no_rerank) {
        static const char *const verdict[] = {"won", "lost (slower beyond the interval)",
                                              "resolved within the minimum effect",
                                              "undecided at the cap"};
        printf("re-rank rivals (one sequence of paired looks each):");
        for (int v = 0; v < 4; v++)
            printf("%s %ld %s: %ld looks, %ld requests", v ? ";" : "", b->rr_seq[v], verdict[v],
                   b->rr_looks[v], b->rr_seq_req[v]);
        printf(". Leaders simulated again at a sample already simulated: %ld requests; "
               "simulated with the sides the model keeps (kw_eval.c): %ld (%.0f per run re-ranked). A "
               "futility stop would have ended %ld sequences early, saving %ld requests, %ld of "
               "them short of a win\n", b->rr_lead_again_req, b->rr_sim_req,
               b->rr_with ? (double)b->rr_sim_req / (double)b->rr_with : 0.0, b->rr_fut_seq, b->rr_fut_saved,
               b->rr_fut_cut_win);
    }
    if (tot.over1[0])
        printf("\nconverged more than %.0f%% above the optimum: %s\n", KW_BENCH_CONVERGED_GAP_PCT,
               tot.over1);
    for (int bi = 0; bi < 2; bi++)
        if (tot.miss[bi][0])
            printf("\nnot within %.1f%% at a %.0f%% budget: %s\n", KW_BENCH_QUALITY_GAP_PCT,
                   kw_bench_budget_pct[bi], tot.miss[bi]);
    if (tot.nofeas[0])
        printf("\nno config passes every guard (no optimum to miss; left out of every count): %s\n",
               tot.nofeas);
    return 0;
}

/* ---------------------------------------------------------------- main */

static void kw_bench_header(const kw_bench *b)
{
    char cpu[512] = "unknown CPU", line[512], date[64];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            const char *p = strchr(line, ':');
            snprintf(cpu, sizeof cpu, "%s", p ? p + 2 : line);
            cpu[strcspn(cpu, "\n")] = '\0';
            break;
        }
    if (f)
        fclose(f);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", localtime(&now));
    struct utsname u;
    uname(&u);
    printf("## knobwise %s benchmark — %s\n\n", PACKAGE_VERSION, date);
    printf("machine: %s, %ld online cores, %s %s; load average at start %.2f; command: make "
           "bench%s\n", cpu, sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.machine, kw_bench_load1(),
           b->quick ? " (--quick)" : "");
}

static int kw_bench_loop(kw_bench *b, const char *kind, long n)
{
    if (strcmp(kind, "cost") == 0) {
        kw_bench_costset *cs = calloc(1, sizeof *cs);
        if (!cs || kw_bench_costset_init(cs, b->cfg, b->rng) != 0)
            return 1;
        double s = kw_bench_cost_loop(cs, n);
        free(cs);
        return isnan(s) ? 1 : 0;
    }
    if (strcmp(kind, "sim") == 0) {
        kw_bench_simcase *cases = NULL;
        int n_cases = 0;
        int rc = kw_bench_simcases(&cases, &n_cases, b->cfg, 10000);
        long done = rc == 0 ? kw_bench_sim_loop(cases, n_cases, n) : -1;
        free(cases);
        return done == n ? 0 : 1;
    }
    if (strcmp(kind, "full") == 0) {
        kw_model_eval *me = NULL;
        kw_bench_fullset *fs = calloc(1, sizeof *fs);
        kw_model_opts mo = {.drift = 1, .seed = 1};
        int rc = fs ? kw_eval_new(&me, b->cfg, &mo) : -1;
        if (rc == 0)
            rc = kw_bench_fullset_init(fs, kw_eval_iface(me), b->cfg, 16, b->rng);
        long done = rc == 0 ? kw_bench_full_loop(fs, n) : -1;
        kw_eval_free(me);
        free(fs);
        return done == n ? 0 : 1;
    }
    fprintf(stderr, "bench: --loop takes cost, sim or full\n");
    return 2;
}

int main(int argc, char **argv)
{
    static kw_bench b;
    const char *loop = NULL;
    long loop_n = 0;
    int status = 1;
    gsl_set_error_handler_off();
    snprintf(b.srcdir, sizeof b.srcdir, "%s", getenv("KW_SRCDIR") ? getenv("KW_SRCDIR") : ".");
    snprintf(b.knobwise, sizeof b.knobwise, "%s", getenv("KW_BIN") ? getenv("KW_BIN") : "");
    b.tune_budget = 150;
    b.long_all = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--srcdir") == 0 && i + 1 < argc)
            snprintf(b.srcdir, sizeof b.srcdir, "%s", argv[++i]);
        else if (strcmp(argv[i], "--knobwise") == 0 && i + 1 < argc)
            snprintf(b.knobwise, sizeof b.knobwise, "%s", argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            b.only = argv[++i];
        else if (strcmp(argv[i], "--tune-budget") == 0 && i + 1 < argc)
            b.tune_budget = atol(argv[++i]);
        else if (strcmp(argv[i], "--quick") == 0)
            b.quick = 1;
        else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
            b.seeds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--first-seed") == 0 && i + 1 < argc)
            b.seed0 = atoi(argv[++i]);
        else if (strcmp(argv[i], "--alias-check") == 0)
            b.alias_check = 1;
        else if (strcmp(argv[i], "--no-estimate") == 0)
            b.no_estimate = 1;
        else if (strcmp(argv[i], "--rerank") == 0)
            b.no_rerank = 0;
        else if (strcmp(argv[i], "--no-rerank") == 0)
            b.no_rerank = 1;
        else if (strcmp(argv[i], "--long-all") == 0)
            b.long_all = 1;
        else if (strcmp(argv[i], "--bursty-long") == 0)
            b.long_all = 0;
        else if (strcmp(argv[i], "--space") == 0 && i + 1 < argc)
            b.space = argv[++i];
        else if (strcmp(argv[i], "--loop") == 0 && i + 2 < argc) {
            loop = argv[++i];
            loop_n = atol(argv[++i]);
        } else {
            fprintf(stderr, "usage: bench [--srcdir DIR] [--knobwise PATH] [--only speed|callgrind|"
                            "threads|growth|screen|quality|aliases] [--alias-check] [--tune-budget N] [--seeds N] [--first-seed N] [--no-estimate] [--no-rerank] [--bursty-long] [--space NAME] [--quick]\n"
                            "       bench [--srcdir DIR] --loop cost|sim|full N\n");
            return 2;
        }
    }
    ssize_t sl = readlink("/proc/self/exe", b.self, sizeof b.self - 1);
    if (sl <= 0)
        snprintf(b.self, sizeof b.self, "%s", argv[0]);
    else
        b.self[sl] = '\0';
    b.rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!b.rng)
        return 1;
    gsl_rng_set(b.rng, KW_BENCH_SEED);
    if (kw_bench_load(&b.cfg, &b, "spaces/default.xml") != 0)
        goto done;
    if (loop) {
        status = kw_bench_loop(&b, loop, loop_n);
        goto done;
    }
    snprintf(b.tmpdir, sizeof b.tmpdir, "%s/kwbench.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(b.tmpdir)) {
        perror("bench: mkdtemp");
        goto done;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    kw_bench_header(&b);
    status = 0;
    if (kw_bench_wanted(&b, "speed") && kw_bench_speed(&b) != 0)
        status = 1;
    if (kw_bench_wanted(&b, "callgrind") && kw_bench_callgrind(&b) != 0)
        status = 1;
    if (kw_bench_wanted(&b, "threads") && kw_bench_threads(&b) != 0)
        status = 1;
    if (kw_bench_wanted(&b, "growth") && kw_bench_growth(&b) != 0)
        status = 1;
    if (kw_bench_wanted(&b, "screen") && kw_bench_screen(&b) != 0)
        status = 1;
    if (kw_bench_wanted(&b, "quality") && kw_bench_quality(&b) != 0)
        status = 1;
    /* not in the default set: it evaluates every alias twice (make bench-aliases) */
    if (b.only && strcmp(b.only, "aliases") == 0 && kw_bench_aliases(&b) != 0)
        status = 1;
    rmdir(b.tmpdir);
done:
    kw_load_config_free(b.cfg);
    gsl_rng_free(b.rng);
    return status;
}
