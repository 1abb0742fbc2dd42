/* kw_run.c - a tuning run from its inputs to its result files (see kw_run.h).
 *
 * Everything a later `tune --resume DIR`, `verify` or `audit` needs is
 * recorded in the journal header (options, input paths and hashes, model
 * options as attributes), so a resume takes no other input and cannot be
 * given a different one by mistake: an input whose hash changed is refused
 * before a worker starts or anything is written. Only the thread count and
 * the time limit may differ on resume: they cannot change the results.
 *
 * The time limit bounds the whole run (DESIGN.md): it pauses the search, and
 * when it passes before or during the evidence phase (the re-checks at the
 * final sample, the portability matrix) that phase is cancelled as a stop
 * cancels it: the files say what the journal proves and nothing more is
 * evaluated (kw_run_write_results), and a resume adds the evidence. Each
 * evidence evaluation is kept in RUN/evidence as it ends (kw_evcache.h), so
 * a resume continues where the cut fell (before 2026-12-06 it started over,
 * and a resume under the same short limit never finished); the figures read
 * back are the ones evaluated, bit for bit, so the files equal an
 * uninterrupted run's. A stop (the caller's signal handler) cancels it the
 * same way, since whoever sent the signal may kill soon after.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "kw_eval.h"
#include "kw_evcache.h"
#include "kw_evidence.h"
#include "kw_evpool.h"
#include "kw_exec.h"
#include "kw_hash.h"
#include "kw_hint.h"
#include "kw_input.h"
#include "kw_knobuse.h"
#include "kw_limits.h"
#include "kw_load.h"
#include "kw_mpi.h"
#include "kw_num.h"
#include "kw_results.h"
#include "kw_run.h"
#include "kw_rundir.h"
#include "kw_shipped.h"

/* The largest space `--strategy exhaustive` takes without --budget, per shape:
 * at the measured 1,300-1,600 full evaluations/s (README, make bench) a million
 * configurations take 10-13 minutes per shape on one core and ~0.5 GB of
 * journal (502 bytes per evaluation, make soak); the default space's 7.5e12
 * would take about 170 years. */
#define KW_RUN_EXHAUSTIVE_MAX 1e6
#define KW_RUN_THREADS_MAX 256 /* the engine's own cap (kw_engine.c) */
/* the engine's time limit when the limit has already run out before it
 * starts (its option must be > 0 to be a limit): a pause at its first check */
#define KW_RUN_LEFT_MIN_S 1e-6
#define KW_RUN_N_ATTRS 16

/* ------------------------------------------------------------ the table */

#define KW_RUN_ATTR_KEY_(id, key, meaning) key,
static const char *const kw_run_keys[KW_RUN_ATTR_COUNT] = {KW_RUN_ATTR_ROWS(KW_RUN_ATTR_KEY_)};
#undef KW_RUN_ATTR_KEY_

const char *kw_run_attr_key(kw_run_attr a)
{
    return a >= 0 && a < KW_RUN_ATTR_COUNT ? kw_run_keys[a] : "";
}

const char *kw_run_attr_get(const kw_journal *j, kw_run_attr a)
{
    return kw_journal_attr(j, kw_run_attr_key(a));
}

/* A measured run's timeout and rate factors, as tune writes them: the
 * timeout 0 (the space's) or --timeout's range, the factors none (the model)
 * or decimals over 0 separated by commas (their count is the space's shapes,
 * checked where they are used). Until 2026-12-07 they were read with atof and
 * strtod: a resealed exec_timeout_s=1e300 took the timeout away (a hung
 * worker held the resume for ever), -5 or abc read as the space's, and verify
 * said nothing of either. */
static int kw_run_attr_exec_rules(const kw_journal *j, const char *path)
{
    double d;
    const char *s = kw_run_attr_get(j, KW_RUN_EXEC_TIMEOUT_S);
    if (s && (kw_num_double(&d, s) != 0 || (d != 0 && (d < 0.001 || d > KW_EXEC_TIMEOUT_MAX_S))))
        return kw_error_set(KW_EINPUT, "%s: attribute %s=%s is not 0 nor a number of seconds "
                            "from 0.001 to %g (tune never writes one): the journal was edited",
                            path, kw_run_attr_key(KW_RUN_EXEC_TIMEOUT_S), s,
                            KW_EXEC_TIMEOUT_MAX_S);
    s = kw_run_attr_get(j, KW_RUN_EXEC_RATE_SCALE);
    for (const char *p = s; p && *p; p++) { /* each factor, then its comma */
        char one[64];
        size_t n = strcspn(p, ",");
        d = 0;
        if (n > 0 && n < sizeof one) {
            memcpy(one, p, n);
            one[n] = '\0';
            if (kw_num_double(&d, one) != 0)
                d = 0;
        }
        p += n;
        if (!(d > 0) || (*p == ',' && p[1] == '\0'))
            return kw_error_set(KW_EINPUT, "%s: attribute %s=%s is not decimal numbers over 0 "
                                "separated by commas (tune never writes one): the journal was "
                                "edited", path, kw_run_attr_key(KW_RUN_EXEC_RATE_SCALE), s);
        if (*p == '\0')
            break;
    }
    return 0;
}

/* The numeric attributes' rules, as the journal reader checks the header's
 * fields (kw_header_rules): a value tune never writes is an edited journal,
 * refused by every reader and by resume. Until 2026-12-07 they were read
 * with atoi: 'abc', -1 or 2^31 as sim_requests read as the space's own
 * sample (verify said "verified") and 10^11 wrapped. */
static int kw_run_attr_rules(const kw_journal *j, const char *path)
{
    static const struct {
        kw_run_attr a;
        long min, max;
    } t[] = {{KW_RUN_MODEL_SEED, 0, LONG_MAX}, {KW_RUN_THERMAL, 0, 1}, {KW_RUN_DRIFT, 0, 1},
             {KW_RUN_SCREEN, 0, 100000},       {KW_RUN_ESTIMATE, 0, 1}};
    long v;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        const char *s = kw_run_attr_get(j, t[i].a);
        if (s && kw_num_long(&v, s, t[i].min, t[i].max) != 0)
            return kw_error_set(KW_EINPUT, "%s: attribute %s=%s is not a whole number from %ld to "
                                "%ld (tune never writes one): the journal was edited", path,
                                kw_run_attr_key(t[i].a), s, t[i].min, t[i].max);
    }
    const char *s = kw_run_attr_get(j, KW_RUN_SIM_REQUESTS); /* 0: the space's */
    if (s && kw_num_long(&v, s, 0, kw_sim_max_sample()) != 0)
        return kw_error_set(KW_EINPUT, "%s: attribute %s=%s is not a whole number from 0 to %ld "
                            "(tune never writes one): the journal was edited", path,
                            kw_run_attr_key(KW_RUN_SIM_REQUESTS), s, kw_sim_max_sample());
    return kw_run_attr_exec_rules(j, path);
}

/* ------------------------------------------------------------ inputs */

int kw_run_load_config(kw_config **out, const char *space, const char *accel,
                       const char *workload)
{
    int rc;
    /* --space NAME: a shipped space when no such file exists (kw_shipped.h) */
    char shipped[4096];
    *out = NULL;
    if (space != NULL && space[0]) { /* "" is refused by kw_load_config */
        struct stat st;
        if ((rc = kw_shipped_space(shipped, sizeof shipped, space)) < 0)
            return rc;
        if (rc == 0 && !strchr(space, '/') && stat(space, &st) != 0)
            return kw_error_set(KW_EINPUT, "%s: no such file, and no shipped space of that name "
                                "in %s/spaces (knobwise show --list names them)", space,
                                kw_shipped_datadir());
        space = shipped;
    }
    if (space == NULL && (accel != NULL || workload != NULL))
        /* Overrides apply to the embedded default's space too. */
        return kw_load_config(out, NULL, accel, workload);
    if (space == NULL)
        return kw_load_config_default(out);
    return kw_load_config(out, space, accel, workload);
}

struct kw_run {
    kw_config *cfg;
    kw_model_eval *me;
    kw_model_eval *final_me;     /* the re-check: final sample size + long thermal window */
    kw_exec *ex;                 /* the measuring evaluator over me (NULL: the model) */
    kw_exec *final_ex;           /* ... over final_me, sharing ex's worker */
    kw_exec *port_ex;            /* ... over me for the results' portability matrix */
    kw_journal *j;               /* resume: the journal's header (eo points into it) */
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
    /* what a fresh run made before its journal could be resumed, removed
     * again when it fails there (kw_run_discard): the folders kw_run_mkdirs
     * made (kw_run_unmake's lengths), and whether .lock and worker.log were
     * there before */
    size_t made, deepest;
    int had_lock, had_log;
    kw_mpi_pool *mp;             /* mpirun: the other ranks' slots (NULL: one process) */
    const char *attr_keys[KW_JOURNAL_ATTR_MAX];
    const char *attr_vals[KW_JOURNAL_ATTR_MAX];
    char attr_buf[KW_RUN_N_ATTRS][KW_JOURNAL_ATTR_LEN];
    int n_attrs;
    int shapes[KW_JOURNAL_SHAPE_MAX];
    const char *owner;
    kw_engine_opts eo;           /* the engine's options (their metric points into j on resume) */
    int resume;
    volatile sig_atomic_t *stop; /* the caller's stop flag (the model reads it) */
    /* the time limit as a CLOCK_MONOTONIC deadline (0: none), read by the
     * search's evaluations so one long evaluation cannot outlive the limit;
     * set when kw_run_create / kw_run_resume starts, so the limit counts the
     * baseline measurement that scales the arrival rates too */
    double deadline_s;
    double t_start; /* when kw_run_create / kw_run_resume began (CLOCK_MONOTONIC) */
    kw_evpool pool;              /* the process's one evaluation pool, during kw_run_exec */
    const kw_run_ctl *ctl;       /* during kw_run_exec */
    double last_write;
    int write_failed;
    /* the run summary kept live from the journal as the engine appends it
     * (kw_runsum_live), during kw_run_exec: the stop path then writes the
     * files without reading the journal; NULL before the first round or
     * after a failure (the files are then made from the journal file) */
    kw_runsum_live *live;
    int live_failed;
    int results_live; /* the last files were made from it (kw_run_outcome.live_results) */
    /* RUN/evidence read once, at the first best-so-far rewrite, for the
     * rewrites' portability (kw_evcache_open_read); `kept_read` 1 once tried */
    kw_evcache *kept;
    int kept_read;
};

static double kw_run_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 1 when the time limit has passed (r->deadline_s, 0: none). */
static int kw_run_out_of_time(const kw_run *r)
{
    return r->deadline_s > 0 && kw_run_now() >= r->deadline_s;
}

void kw_run_free(kw_run *r)
{
    if (!r)
        return;
    kw_mpi_pool_free(r->mp);
    kw_runsum_live_free(r->live);
    kw_exec_free(r->final_ex);
    kw_exec_free(r->port_ex);
    kw_exec_free(r->ex);
    kw_eval_free(r->final_me); /* borrows me's traces, never frees them */
    kw_eval_free(r->me);
    kw_load_config_free(r->cfg);
    kw_journal_free(r->j);
    kw_runfolder_unlock(r->lock);
    free(r);
}

/* Remove the folders kw_run_mkdirs made on the way to path: its first
 * made bytes name the first, its first deepest bytes the last; deepest first,
 * each still empty. */
static void kw_run_unmake(const char *path, size_t made, size_t deepest)
{
    char buf[KW_PATH_MAX];
    if (made == 0 || deepest >= sizeof buf)
        return;
    memcpy(buf, path, deepest);
    buf[deepest] = '\0';
    for (size_t n = deepest; n >= made;) {
        if (rmdir(buf) != 0)
            return;
        while (n > 0 && buf[n - 1] != '/') /* up one: "a/b/c" -> "a/b" */
            buf[--n] = '\0';
        while (n > 0 && buf[n - 1] == '/')
            buf[--n] = '\0';
    }
}

/* mkdir -p; errors name the path that could not be made. A folder it made
 * is removed again (with the ones made on the way to it) when the path
 * cannot be finished or written into, as under a umask of 0222 or more (the
 * folder made 0555, 0000...): exit 2 leaves nothing behind (the empty,
 * unwritable folders stayed, and a second try said the same). */
static int kw_run_mkdirs(const char *path, size_t *made_out, size_t *deepest_out)
{
    char buf[KW_PATH_MAX];
    size_t made = 0, deepest = 0; /* the first and the last folder made (lengths) */
    int rc = 0;
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return kw_error_set(KW_EINPUT, "%s: path too long", path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            struct stat st;
            if (stat(buf, &st) != 0) {
                /* a name too long for the file system, a folder the user
                 * cannot write (as report -o and resume say) is bad input,
                 * exit 2 */
                int mk = mkdir(buf, 0755);
                if (mk == 0) {
                    deepest = strlen(buf);
                    made = made ? made : deepest;
                }
                if (mk != 0 && errno != EEXIST) {
                    int e = errno;
                    rc = kw_error_set(e == ENAMETOOLONG || e == EACCES || e == EPERM ||
                                              e == EROFS || e == ENOENT
                                          ? KW_EINPUT
                                          : KW_EIO,
                                      "%s: cannot create the run folder: %s", buf, strerror(e));
                    break;
                }
                /* the new folder's name survives a power loss (its files'
                 * fsyncs do not persist it) */
                if ((rc = kw_input_sync_dir_of(buf)) != 0)
                    break;
                /* EEXIST where stat found nothing: a symbolic link to
                 * nothing, which mkdir will not follow (exit 1, "cannot
                 * write into the run folder: No such file or directory",
                 * until 2026-12-06) */
                if (lstat(buf, &st) == 0 && S_ISLNK(st.st_mode) && stat(buf, &st) != 0) {
                    rc = kw_error_set(KW_EINPUT, "%s: a symbolic link to nothing: cannot "
                                      "create the run folder %s there", buf, path);
                    break;
                }
            } else if (!S_ISDIR(st.st_mode)) {
                /* --out names a file (or passes through one): bad input, exit 2 */
                rc = kw_error_set(KW_EINPUT, "%s: cannot create the run folder %s: %s", buf,
                                  path, strerror(ENOTDIR));
                break;
            }
            *p = c;
            if (c == '\0')
                break;
        }
    }
    /* a folder we cannot write into is refused now, not after the first round */
    if (rc == 0 && access(path, W_OK | X_OK) != 0) {
        int e = errno;
        rc = kw_error_set(e == EIO ? KW_EIO : KW_EINPUT, "%s: cannot write into the run "
                          "folder: %s%s", path, strerror(e),
                          made ? " (made under a umask that leaves its owner no write or search "
                                 "permission; removed again)" : "");
    }
    if (rc != 0) {
        kw_run_unmake(path, made, deepest);
        made = deepest = 0;
    }
    *made_out = made;
    *deepest_out = deepest;
    return rc;
}

/* Absolute path of an existing file (recorded so resume works from anywhere).
 * Never truncated: KW_EINPUT when it does not fit (a cut path names another
 * file). */
static int kw_run_abs(char *out, size_t n, const char *path)
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

/* The program a worker command runs: its first word, as the shell would find
 * it (a path when it has a '/', else the first executable regular file of
 * that name on $PATH), resolved to an absolute path in out. 0 when it does
 * not name a file (a shell builtin, a quoted or compound command): the
 * command itself is still recorded verbatim as the run's "evaluator". */
static int kw_run_worker_program(char out[PATH_MAX], const char *cmd)
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

/* The input records: every file that affects a result (KW_RUN_INPUT_*).
 * The three model files, the --trace file, and each shape's own trace that
 * the evaluator replays (KW_RUN_INPUT_SHAPE_TRACE N, N the space's shape
 * index), each hashed by kw_hash (the one input hash). Needs
 * r->me (it knows which traces it replays). */
static int kw_run_inputs(kw_run *r)
{
    static const char *const names[] = {KW_RUN_INPUT_SPACE, KW_RUN_INPUT_ACCEL,
                                        KW_RUN_INPUT_WORKLOAD};
    const char *paths[] = {r->cfg->space.path, r->cfg->space.accel_path,
                           r->cfg->space.workload_path};
    r->n_inputs = 0;
    for (int i = 0; i < 3; i++) {
        r->in_names[r->n_inputs] = names[i];
        r->in_paths[r->n_inputs] = paths[i];
        r->in_hashes[r->n_inputs++] = r->cfg->input_hash[i];
    }
    if (r->trace[0]) {
        r->in_names[r->n_inputs] = KW_RUN_INPUT_TRACE;
        r->in_paths[r->n_inputs] = r->trace;
        r->in_hashes[r->n_inputs++] = r->trace_hash;
    }
    for (int i = 0; i < r->cfg->space.n_shapes && i < KW_SHAPE_MAX; i++) {
        const char *tp = kw_eval_shape_trace(r->me, i);
        if (!tp)
            continue;
        if (r->n_inputs >= KW_JOURNAL_INPUT_MAX)
            return kw_error_set(KW_EINPUT, "%s: more trace files than a journal records (%d)",
                                r->cfg->space.path, KW_JOURNAL_INPUT_MAX - 4);
        int rc = kw_hash_file(r->shape_trace_hash[i], tp);
        if (rc != 0)
            return rc;
        snprintf(r->shape_trace_name[i], sizeof r->shape_trace_name[i], "%s%d",
                 KW_RUN_INPUT_SHAPE_TRACE, i);
        r->in_names[r->n_inputs] = r->shape_trace_name[i];
        r->in_paths[r->n_inputs] = tp;
        r->in_hashes[r->n_inputs++] = r->shape_trace_hash[i];
    }
    if (r->cmd && kw_run_worker_program(r->worker_path, r->cmd)) {
        if (r->n_inputs >= KW_JOURNAL_INPUT_MAX)
            return kw_error_set(KW_EINPUT, "%s: more inputs than a journal records (%d)",
                                r->cfg->space.path, KW_JOURNAL_INPUT_MAX);
        int rc = kw_hash_file(r->worker_hash, r->worker_path);
        if (rc != 0)
            return rc;
        r->in_names[r->n_inputs] = KW_RUN_INPUT_WORKER;
        r->in_paths[r->n_inputs] = r->worker_path;
        r->in_hashes[r->n_inputs++] = r->worker_hash;
    }
    return 0;
}

/* Every input hashed before (the journal's, or rank 0's under MPI: rank >
 * 0) must hash the same here; the first that does not is named by its file
 * (KW_EINPUT, nothing written). */
static int kw_run_inputs_same(const kw_run *r, int n, const char *const *names,
                              const char *const *hashes, int rank)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < r->n_inputs; k++) {
            if (strcmp(names[i], r->in_names[k]) != 0)
                continue;
            const char *file = r->in_paths[k] && r->in_paths[k][0] ? r->in_paths[k]
                                                                   : r->in_names[k];
            if (strcmp(hashes[i], r->in_hashes[k]) == 0)
                continue;
            if (rank > 0)
                return kw_error_set(KW_EINPUT, "%s: not the file rank 0 loaded (its %s, hash %s "
                                    "on rank 0, %s on rank %d): every rank must read the same "
                                    "inputs", file, names[i], hashes[i], r->in_hashes[k], rank);
            return kw_error_set(KW_EINPUT, "%s: changed since the run started (its %s, hash "
                                "%s, now %s): refusing to resume; restore it or start a new "
                                "run", file, names[i], hashes[i], r->in_hashes[k]);
        }
    return 0;
}

static int kw_run_inputs_unchanged(const kw_run *r)
{
    const kw_jheader *h = &r->j->h;
    const char *names[KW_JOURNAL_INPUT_MAX], *hashes[KW_JOURNAL_INPUT_MAX];
    for (int i = 0; i < h->n_inputs && i < KW_JOURNAL_INPUT_MAX; i++) {
        names[i] = h->inputs[i].name;
        hashes[i] = h->inputs[i].hash;
    }
    return kw_run_inputs_same(r, h->n_inputs, names, hashes, 0);
}

/* ------------------------------------------------------------ evaluators */

static int kw_run_model(kw_run *r, long requests, int thermal, uint64_t model_seed)
{
    kw_model_opts mo = {.sim_requests = (int)requests,
                        .thermal = thermal,
                        .drift = 1,
                        .seed = model_seed,
                        .trace_path = r->trace[0] ? r->trace : NULL,
                        .stop = r->stop,
                        .deadline_s = &r->deadline_s};
    int rc = kw_eval_new(&r->me, r->cfg, &mo);
    int final_n = r->cfg->space.final_requests > 0 ? r->cfg->space.final_requests : (int)requests;
    if (rc == KW_EINPUT && final_n > mo.sim_requests) {
        /* The larger sample's bounds (the simulation's clock) are the
         * binding ones: refuse with its message, as validate does, so the
         * fix it names passes both (it named the search sample's looser
         * bound, then after that fix the final one's). */
        char first[2048];
        snprintf(first, sizeof first, "%s", kw_error_last());
        kw_model_eval *big = NULL;
        kw_model_opts bo = mo;
        bo.sim_requests = final_n;
        bo.deadline_s = NULL;
        if (kw_eval_new(&big, r->cfg, &bo) != KW_EINPUT)
            kw_error_set(rc, "%s", first);
        kw_eval_free(big);
    }
    if (rc != 0)
        return rc;
    kw_model_opts fo = mo;
    /* The final re-check reads the deadline too: the time limit bounds the
     * evidence phase as it bounds the search (kw_run_write_results). */
    fo.sim_requests = final_n;
    fo.thermal = 1;
    fo.borrow_from = r->me; /* the same traces and drift data: loaded and drawn once */
    return kw_eval_new(&r->final_me, r->cfg, &fo);
}

/* The measuring evaluator (cmd non-NULL): start the worker (an error before
 * the run folder exists when it cannot start), and scale each load-derived
 * arrival rate from the measured baseline time so `load` keeps meaning
 * the utilisation of the measured device. scales: the recorded factors
 * ("f1,f2,..." per space shape, from the journal on resume) or NULL to
 * measure them; the factors used are written to scales_out. */
static int kw_run_exec_new(kw_run *r, const char *cmd, double timeout_s, const char *scales,
                           char *scales_out, size_t out_len)
{
    kw_exec_opts xo;
    kw_exec_opts_from_space(&xo, &r->cfg->space, cmd, timeout_s);
    xo.stop = r->stop;
    xo.deadline_s = &r->deadline_s; /* the time limit bounds the baselines measured here */
    xo.index = kw_mpi_local_rank(); /* mpirun: the rank's device on its node */
    int rc = kw_exec_new(&r->ex, r->cfg, r->me, &xo);
    if (rc == 0)
        rc = kw_exec_new_sibling(&r->final_ex, r->ex, r->final_me, "results");
    if (rc == 0)
        rc = kw_exec_new_sibling(&r->port_ex, r->ex, r->me, "results");
    if (rc != 0)
        return rc;
    kw_model_eval *models[2] = {r->me, r->final_me};
    return kw_exec_calibrate(r->ex, models, 2, scales, scales_out, out_len);
}

/* The attribute a run recorded (r->attr_keys: the journal header's on
 * resume, rank 0's on the other MPI ranks), or NULL. */
static const char *kw_run_attr_of(const kw_run *r, kw_run_attr a)
{
    const char *key = kw_run_attr_key(a);
    for (int i = 0; i < r->n_attrs; i++)
        if (strcmp(r->attr_keys[i], key) == 0)
            return r->attr_vals[i];
    return NULL;
}

/* What a recorded run's attributes name: the configuration, the --trace
 * file's hash, the model evaluators, the worker command (r->cmd) and the
 * input records; seed: the model's seed when no model_seed was recorded.
 * Resume builds its evaluator so, and so does every MPI rank but 0. */
static int kw_run_load_attrs(kw_run *r, uint64_t seed)
{
    const char *space = kw_run_attr_of(r, KW_RUN_SPACE), *accel = kw_run_attr_of(r, KW_RUN_ACCEL),
               *workload = kw_run_attr_of(r, KW_RUN_WORKLOAD),
               *trace = kw_run_attr_of(r, KW_RUN_TRACE),
               *ms = kw_run_attr_of(r, KW_RUN_MODEL_SEED),
               *req = kw_run_attr_of(r, KW_RUN_SIM_REQUESTS),
               *th = kw_run_attr_of(r, KW_RUN_THERMAL), *xcmd = kw_run_attr_of(r, KW_RUN_EVALUATOR);
    int rc = kw_run_load_config(&r->cfg, space && space[0] ? space : NULL,
                                accel && accel[0] ? accel : NULL,
                                workload && workload[0] ? workload : NULL);
    if (rc != 0)
        return rc;
    if (trace && trace[0]) {
        snprintf(r->trace, sizeof r->trace, "%s", trace);
        if ((rc = kw_hash_file(r->trace_hash, r->trace)) != 0)
            return rc;
    }
    if ((rc = kw_run_model(r, req ? atol(req) : 0, th ? atoi(th) : 0,
                           ms ? strtoull(ms, NULL, 10) : seed)) != 0)
        return rc;
    r->cmd = xcmd && xcmd[0] ? xcmd : NULL;
    return kw_run_inputs(r);
}

/* The measuring evaluator of a recorded run (r->cmd set), with its recorded
 * timeout and rate factors. */
static int kw_run_exec_attrs(kw_run *r)
{
    const char *xto = kw_run_attr_of(r, KW_RUN_EXEC_TIMEOUT_S),
               *xsc = kw_run_attr_of(r, KW_RUN_EXEC_RATE_SCALE);
    char scales[KW_JOURNAL_ATTR_LEN];
    return kw_run_exec_new(r, r->cmd, xto ? atof(xto) : 0, xsc ? xsc : "", scales, sizeof scales);
}

/* The evaluator the search runs on (the model, or the measuring one). */
static const kw_evaluator *kw_run_search_ev(const kw_run *r)
{
    return r->ex ? kw_exec_iface(r->ex) : kw_eval_iface(r->me);
}

/* The evaluator of the portability matrix and the neighbours (and the
 * progress's shape names). */
static const kw_evaluator *kw_run_port_ev(const kw_run *r)
{
    return r->port_ex ? kw_exec_iface(r->port_ex) : kw_run_search_ev(r);
}

static const kw_evaluator *kw_run_final_ev(const kw_run *r)
{
    return r->final_ex ? kw_exec_iface(r->final_ex)
           : r->final_me ? kw_eval_iface(r->final_me) : NULL;
}

/* mpirun: hand the run (attributes and input hashes) to the other ranks,
 * which build its evaluator and check its inputs; called before anything is
 * written, so a rank that cannot evaluate fails the run with nothing made. */
static int kw_run_mpi_start(kw_run *r, int threads, double time_limit_s, uint64_t seed)
{
    if (!kw_mpi_launched())
        return 0;
    kw_mpi_spec ms = {.n_attrs = r->n_attrs, .attr_keys = r->attr_keys,
                      .attr_values = r->attr_vals, .n_inputs = r->n_inputs,
                      .input_names = r->in_names, .input_hashes = r->in_hashes,
                      .threads = threads, .time_limit_s = time_limit_s, .seed = seed,
                      .deadline_s = &r->deadline_s};
    return kw_mpi_pool_start(&r->mp, &ms, kw_run_search_ev(r), threads, r->stop);
}

static void kw_run_record(kw_run *r, kw_run_attr key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void kw_run_record(kw_run *r, kw_run_attr key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->attr_buf[r->n_attrs], KW_JOURNAL_ATTR_LEN, fmt, ap);
    va_end(ap);
    r->attr_keys[r->n_attrs] = kw_run_attr_key(key);
    r->attr_vals[r->n_attrs] = r->attr_buf[r->n_attrs];
    r->n_attrs++;
}

/* The knobs the space's block cannot use (kw_knobuse.h): OFAT never changes
 * them (engine opts.frozen), and their names go into the journal ("frozen")
 * so a resume restores the same mask. */
static void kw_run_frozen(uint64_t *mask, char *names, size_t size, const kw_config *cfg)
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

static int kw_run_frozen_parse(uint64_t *mask, const char *names, const kw_knobspace *ks)
{
    char buf[KW_JOURNAL_ATTR_LEN];
    snprintf(buf, sizeof buf, "%s", names);
    *mask = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = kw_knobs_find(ks, t);
        if (k < 0)
            return kw_error_set(KW_ECORRUPT, "journal attribute frozen names unknown knob '%s'", t);
        *mask |= 1ULL << k;
    }
    return 0;
}

/* ------------------------------------------------------------ create, resume */

/* A usage error: *usage set, KW_EINPUT with the message. */
static int kw_run_usage(int *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int kw_run_usage(int *usage, const char *fmt, ...)
{
    char msg[KW_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (usage)
        *usage = 1;
    return kw_error_set(KW_EINPUT, "%s", msg);
}

/* The tuned shapes (o->shapes by name, else every shape) into r->shapes. */
static int kw_run_pick_shapes(kw_run *r, int *usage, const kw_run_opts *o, int *n_out)
{
    int n = 0;
    for (int i = 0; i < o->n_shapes; i++) {
        int si = kw_load_config_shape(r->cfg, o->shapes[i]);
        if (si < 0) {
            char hint[1024];
            kw_hint_shape(hint, sizeof hint, r->cfg, o->shapes[i]);
            return kw_run_usage(usage, "unknown shape '%s'%s", o->shapes[i], hint);
        }
        for (int k = 0; k < n; k++)
            if (r->shapes[k] == si)
                return kw_run_usage(usage, "--shape %s given twice", o->shapes[i]);
        r->shapes[n++] = si;
    }
    if (n == 0)
        for (int i = 0; i < r->cfg->space.n_shapes; i++)
            r->shapes[n++] = i;
    *n_out = n;
    return 0;
}

/* The run folder's path (never a truncated one: it would be another folder)
 * and its journal's, refused when the journal holds a run or is not a
 * regular file. */
static int kw_run_pick_dir(kw_run *r, int *usage, const char *out)
{
    if (out) {
        if (strlen(out) >= sizeof r->dir)
            return kw_run_usage(usage, "--out %.200s...: path too long (%zu bytes, at most %zu)",
                                out, strlen(out), sizeof r->dir - 1);
        snprintf(r->dir, sizeof r->dir, "%s", out);
    } else {
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        char id[64];
        strftime(id, sizeof id, "tune-%Y%m%d-%H%M%S", &tm);
        snprintf(r->dir, sizeof r->dir, "results/%s", id);
        for (int k = 2; access(r->dir, F_OK) == 0 && k < 1000; k++)
            snprintf(r->dir, sizeof r->dir, "results/%s-%d", id, k);
    }
    int rc = kw_runfolder_join(r->journal, sizeof r->journal, r->dir, KW_RUNFOLDER_JOURNAL_NAME);
    if (rc != 0)
        return rc;
    struct stat st;
    if (lstat(r->journal, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        return kw_run_usage(usage, "%s already holds a run: continue it with --resume %s or "
                            "choose another --out", r->dir, r->dir);
    if (lstat(r->journal, &st) == 0 && !S_ISREG(st.st_mode))
        return kw_run_usage(usage, "%s is not a regular file (%s): refusing to write the journal "
                            "through it; choose another --out", r->journal,
                            S_ISLNK(st.st_mode) ? "a symbolic link" : "a special file");
    if (kw_runfolder_fresh(r->dir) != 0) {
        char msg[KW_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", kw_error_last());
        return kw_run_usage(usage, "%s", msg);
    }
    return 0;
}

/* 1 when a fresh run's journal holds nothing a resume could use: none, an
 * empty one, or one cut before its header held the run's options (the
 * resume refuses those: kw_run_reopen). A journal that cannot be read is
 * kept. Only the header is read (kw_journal_load_header): a run that failed
 * late has a long journal, which was read whole for this until 2026-12-07. */
static int kw_run_stub_journal(const kw_run *r)
{
    struct stat st;
    if (lstat(r->journal, &st) != 0)
        return errno == ENOENT;
    if (!S_ISREG(st.st_mode))
        return 0;
    if (st.st_size == 0)
        return 1;
    kw_journal *j = NULL;
    int stub = kw_journal_load_header(&j, r->journal) == 0 &&
               (j->n_records == 0 ||
                (j->header_incomplete && !kw_run_attr_get(j, KW_RUN_ATTR_COUNT - 1)));
    kw_journal_free(j);
    return stub;
}

/* A fresh run that failed before its journal could be resumed (it could not
 * start its evaluation threads, open a file, sync the folder) removes what
 * it made: its journal, worker.log and .lock (each unless it was there
 * before), the folders it made (each if empty). They were left, and the next
 * `tune --resume` said "not a run folder" (ulimit -v 50 MB: only .lock;
 * ulimit -n 5: an empty journal; until 2026-12-07). 1 when it removed the
 * stub; the error message (kw_error_last) is kept. */
static int kw_run_discard(kw_run *r)
{
    if (r->resume || !r->lock)
        return 0;
    char msg[KW_ERROR_MAX];
    snprintf(msg, sizeof msg, "%s", kw_error_last());
    int code = kw_error_code();
    int stub = kw_run_stub_journal(r);
    if (stub) {
        char p[KW_PATH_MAX + 16];
        (void)unlink(r->journal);
        if (!r->had_log &&
            kw_runfolder_join(p, sizeof p, r->dir, KW_RUNFOLDER_WORKER_LOG) == 0)
            (void)unlink(p);
        (void)kw_runfolder_sweep(r->dir, NULL);
        if (!r->had_lock && kw_runfolder_join(p, sizeof p, r->dir, KW_RUNFOLDER_LOCK_NAME) == 0)
            (void)unlink(p);
        kw_runfolder_unlock(r->lock);
        r->lock = NULL;
        kw_run_unmake(r->dir, r->made, r->deepest);
    }
    if (stub)
        kw_error_set(code, "%s; the run had evaluated nothing and its journal held no header "
                     "yet: what it made in %s is removed, so the same command can be run "
                     "again", msg, r->dir);
    else
        kw_error_set(code, "%s", msg);
    return stub;
}

/* The worker's stderr into the run folder (a measuring evaluator only). */
static int kw_run_worker_log(kw_run *r)
{
    if (!r->ex)
        return 0;
    char logp[KW_PATH_MAX + 16];
    int rc = kw_runfolder_join(logp, sizeof logp, r->dir, KW_RUNFOLDER_WORKER_LOG);
    return rc != 0 ? rc : kw_exec_log(r->ex, logp);
}

static int kw_run_fresh(kw_run *r, int *usage, const kw_run_opts *o)
{
    int rc = kw_run_load_config(&r->cfg, o->space, o->accel, o->workload);
    int n = 0;
    if (rc != 0 || (rc = kw_run_pick_shapes(r, usage, o, &n)) != 0)
        return rc;
    /* an exhaustive run must be able to finish */
    if (o->strategy == KW_STRATEGY_EXHAUSTIVE && o->budget == 0) {
        double size = 1;
        const kw_knobspace *ks = &r->cfg->space.knobs;
        for (int k = 0; k < ks->n_knobs; k++)
            size *= ks->knobs[k].n_values > 0 ? ks->knobs[k].n_values : 1;
        if (size > KW_RUN_EXHAUSTIVE_MAX)
            return kw_run_usage(usage, "--strategy exhaustive without --budget: the space has "
                                "%.4g configurations per shape, over the %.0f an exhaustive "
                                "run can cover; give --budget N or use --strategy ofat", size,
                                KW_RUN_EXHAUSTIVE_MAX);
    }
    if (o->trace && ((rc = kw_input_named("--trace", o->trace)) != 0 ||
                     (rc = kw_run_abs(r->trace, sizeof r->trace, o->trace)) != 0 ||
                     (rc = kw_hash_file(r->trace_hash, r->trace)) != 0))
        return rc;
    if ((rc = kw_run_pick_dir(r, usage, o->out)) != 0)
        return rc;
    /* what resume, verify and audit read back: paths checked before anything is made */
    char ps[KW_PATH_MAX], pa[KW_PATH_MAX], pw[KW_PATH_MAX];
    /* the space as loaded: a shipped name (--space NAME) is recorded as its file */
    if ((rc = kw_run_abs(ps, sizeof ps, o->space ? r->cfg->space.path : NULL)) != 0 ||
        (rc = kw_run_abs(pa, sizeof pa, o->accel)) != 0 ||
        (rc = kw_run_abs(pw, sizeof pw, o->workload)) != 0)
        return rc;
    if ((rc = kw_run_model(r, o->requests, o->thermal, o->seed)) != 0)
        return rc;
    const char *cmd = NULL;
    char scales[KW_JOURNAL_ATTR_LEN] = "";
    if (kw_exec_spec(&cmd, o->evaluator, &r->cfg->space) != 0)
        return kw_run_usage(usage, "%s", kw_error_last());
    if (o->screen > 0 && !cmd)
        return kw_run_usage(usage, "--screen needs a measuring evaluator (--evaluator exec:CMD "
                            "or the space's <evaluator>): the model is its screen");
    if ((o->pair > 0 || o->no_pair) && !cmd)
        return kw_run_usage(usage, "--pair needs a measuring evaluator (--evaluator exec:CMD or "
                            "the space's <evaluator>): the model's figures are exact, it never pairs");
    if ((o->rerank > 0 || o->no_rerank) && (cmd || o->strategy != KW_STRATEGY_OFAT))
        return kw_run_usage(usage, "--rerank needs --strategy ofat and the model evaluator: only "
                            "an ofat search on the model's exact figures re-ranks its best configs "
                            "on a long paired sample");
    if (cmd && kw_runfolder_fresh_log(r->dir) != 0) /* before the worker starts */
        return kw_run_usage(usage, "%s", kw_error_last());
    if (cmd && (rc = kw_run_exec_new(r, cmd, o->timeout_s, NULL, scales, sizeof scales)) != 0) {
        /* the limit counts from the start (it let the baselines run past it
         * until 2026-12-07: a 3 s measurement, --time-limit 2: 5.1 s) */
        if (rc == KW_EINTERRUPTED && kw_run_out_of_time(r))
            return kw_error_set(KW_EINTERRUPTED, "the time limit (--time-limit %g) ran out while "
                                "the worker measured the baselines that scale the arrival rates "
                                "(%s), before the run folder was made: nothing was written; "
                                "give a --time-limit longer than those measurements",
                                o->time_limit_s, kw_error_last());
        return rc;
    }
    r->cmd = cmd;
    if ((rc = kw_run_inputs(r)) != 0)
        return rc;
    r->owner = o->owner;
    kw_run_record(r, KW_RUN_OWNER, "%s", o->owner);
    kw_run_record(r, KW_RUN_SPACE, "%s", ps);
    kw_run_record(r, KW_RUN_ACCEL, "%s", pa);
    kw_run_record(r, KW_RUN_WORKLOAD, "%s", pw);
    kw_run_record(r, KW_RUN_TRACE, "%s", r->trace);
    kw_run_record(r, KW_RUN_MODEL_SEED, "%llu", (unsigned long long)o->seed);
    kw_run_record(r, KW_RUN_SIM_REQUESTS, "%ld", o->requests);
    kw_run_record(r, KW_RUN_THERMAL, "%d", o->thermal);
    kw_run_record(r, KW_RUN_DRIFT, "%d", 1);
    kw_run_record(r, KW_RUN_EVALUATOR, "%s", cmd ? cmd : "");
    kw_run_record(r, KW_RUN_EXEC_TIMEOUT_S, "%.17g", o->timeout_s);
    kw_run_record(r, KW_RUN_EXEC_RATE_SCALE, "%s", scales);
    kw_run_record(r, KW_RUN_SCREEN, "%ld", o->screen);
    /* multi-fidelity screening and the knobs the block cannot use: engine
     * options the journal header does not hold, restored on resume from these */
    kw_run_record(r, KW_RUN_ESTIMATE, "%d", !o->no_estimate);
    uint64_t frozen = 0;
    char frozen_names[KW_JOURNAL_ATTR_LEN] = "";
    if (o->strategy == KW_STRATEGY_OFAT)
        kw_run_frozen(&frozen, frozen_names, sizeof frozen_names, r->cfg);
    kw_run_record(r, KW_RUN_FROZEN, "%s", frozen_names);
    /* the engine's own refusal of a budget below the baseline's repeats (a
     * measuring evaluator is noisy: 5 by default), before the run folder and
     * its worker.log are made */
    if ((rc = kw_engine_budget_check(o->budget, o->repeats, kw_run_search_ev(r)->noisy)) != 0)
        return rc;
    char lockp[KW_PATH_MAX + 16], logp[KW_PATH_MAX + 16];
    struct stat st;
    if ((rc = kw_runfolder_join(lockp, sizeof lockp, r->dir, KW_RUNFOLDER_LOCK_NAME)) != 0 ||
        (rc = kw_runfolder_join(logp, sizeof logp, r->dir, KW_RUNFOLDER_WORKER_LOG)) != 0)
        return rc;
    r->had_lock = lstat(lockp, &st) == 0;
    r->had_log = lstat(logp, &st) == 0;
    if ((rc = kw_run_mpi_start(r, o->threads, o->time_limit_s, o->seed)) != 0 ||
        (rc = kw_run_mkdirs(r->dir, &r->made, &r->deepest)) != 0 ||
        (rc = kw_runfolder_lock(&r->lock, r->dir)) != 0 ||
        (rc = kw_runfolder_sweep(r->dir, NULL)) != 0 || (rc = kw_run_worker_log(r)) != 0)
        return rc;
    kw_engine_opts *eo = &r->eo;
    kw_engine_opts_init(eo);
    eo->strategy = o->strategy;
    eo->policy = o->policy;
    eo->budget = o->budget;
    eo->time_limit_s = o->time_limit_s;
    eo->metric = o->metric;
    eo->min_effect_pct = r->cfg->space.min_effect_pct;
    eo->alpha = r->cfg->space.alpha;
    eo->repeats = o->repeats;
    eo->seed = o->seed;
    eo->threads = o->threads;
    eo->tabu = o->tabu;
    eo->probes = o->probes;
    eo->n_shapes = n;
    eo->shapes = r->shapes;
    eo->screen = (int)o->screen;
    eo->estimate = !o->no_estimate;
    eo->frozen = frozen;
    kw_knobuse_fuses(eo->fuses, r->cfg);
    eo->queue = kw_knobuse_queue(r->cfg);
    eo->pair = o->no_pair ? 0 : o->pair > 0 ? o->pair : KW_PAIR_DEFAULT;
    eo->rerank = o->no_rerank ? 0 : o->rerank > 0 ? o->rerank : KW_RERANK_DEFAULT;
    return 0;
}

int kw_run_create(kw_run **out, int *usage, const kw_run_opts *o, volatile sig_atomic_t *stop)
{
    if (usage)
        *usage = 0;
    *out = NULL;
    kw_run *r = calloc(1, sizeof *r);
    if (!r)
        return kw_error_set(KW_ENOMEM, "out of memory starting the run");
    r->stop = stop;
    r->t_start = kw_run_now();
    r->deadline_s = o->time_limit_s > 0 ? r->t_start + o->time_limit_s : 0.0;
    int rc = kw_run_fresh(r, usage, o);
    if (rc != 0) {
        if (r->lock)
            kw_run_discard(r);
        else /* the folders it made, each if empty (another run may have the lock) */
            kw_run_unmake(r->dir, r->made, r->deepest);
        kw_run_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* A run folder without a journal: KW_EINPUT naming it, and when the name is a
 * file of a run (its journal, results.xml), the folder to give instead
 * ("RUN/journal: not a run folder (no journal)" read as if the journal were
 * missing until 2026-12-06). what: "no journal" or "no journal to resume". */
static int kw_run_no_journal(const char *dir, const char *what)
{
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        const char *slash = strrchr(dir, '/');
        int n = slash ? (int)(slash - dir) : 1;
        return kw_error_set(KW_EINPUT, "%s: a file, not a run folder: give the folder that holds "
                            "it (%.*s)", dir, n > 0 ? n : 1, slash ? (n > 0 ? dir : "/") : ".");
    }
    return kw_error_set(KW_EINPUT, "%s: not a run folder (%s)", dir, what);
}

/* The journal's metrics are this build's model's (a measured run's: those
 * first, the measuring evaluator's after them), checked before anything is
 * written (a header cut before them has none: the resume writes them): the
 * engine checks them again (kw_engine.c), but only after
 * kw_evcache_reopen has cut RUN/evidence's end record, which left a
 * finished run reading as stopped before its evidence. A run from a build
 * with other metrics (before stop 48: without the TTFT/TPOT p99 intervals)
 * is refused here, exit 2, its folder as it was: verify, recommend and
 * export read it as before. */
static int kw_run_metrics_unchanged(const kw_run *r)
{
    const kw_jheader *h = &r->j->h;
    const kw_evaluator *me = kw_eval_iface(r->me);
    int n = me->n_metrics, i = 0;
    if (h->n_metrics == 0) /* a header cut before its M record: the resume writes it */
        return 0;
    while (i < n && i < h->n_metrics && strcmp(h->metric_names[i], me->metric_names[i]) == 0)
        i++;
    if (i == n && (r->cmd ? h->n_metrics > n : h->n_metrics == n))
        return 0;
    return kw_error_set(KW_EINPUT, "%s: its %d metrics are not this knobwise's %d (%s '%s'): a run "
                        "of another knobwise version cannot be resumed (nothing was changed; verify, "
                        "recommend and export read it as before)", r->journal, h->n_metrics, n,
                        i < h->n_metrics ? "the journal's metric" : "this knobwise adds",
                        i < h->n_metrics ? h->metric_names[i] : me->metric_names[i]);
}

static int kw_run_reopen(kw_run *r, int *usage, const char *dir, int threads,
                         double time_limit_s)
{
    int rc;
    if (strlen(dir) >= sizeof r->dir)
        return kw_run_usage(usage, "--resume %.200s...: path too long (at most %zu bytes)", dir,
                            sizeof r->dir - 1);
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    if ((rc = kw_runfolder_join(r->journal, sizeof r->journal, r->dir,
                                KW_RUNFOLDER_JOURNAL_NAME)) != 0)
        return rc;
    struct stat st;
    if (lstat(r->journal, &st) != 0)
        return kw_run_no_journal(r->dir, "no journal to resume");
    /* A folder without a lock file was never a run's (tune makes the lock
     * first): its journal is read before the lock is made, so a file that is
     * no journal, or a damaged one, is refused with nothing written (the
     * lock file was left behind, 2026-12-06). */
    char lockp[KW_PATH_MAX + 16];
    if ((rc = kw_runfolder_join(lockp, sizeof lockp, r->dir, KW_RUNFOLDER_LOCK_NAME)) != 0)
        return rc;
    if (lstat(lockp, &st) != 0) {
        kw_journal *pre = NULL;
        rc = kw_journal_load_ex(&pre, r->journal, 2);
        kw_journal_free(pre);
        if (rc != 0)
            return rc;
    }
    /* one writer: the lock before anything is read for writing, truncated or swept */
    if ((rc = kw_runfolder_resumable(r->dir)) != 0 ||
        (rc = kw_runfolder_lock(&r->lock, r->dir)) != 0 ||
        (rc = kw_journal_load_ex(&r->j, r->journal, 2)) != 0 ||
        (rc = kw_run_attr_rules(r->j, r->journal)) != 0)
        return rc;
    /* A run stopped while writing its header has evaluated nothing. Once the
     * header holds every attribute (its last is `frozen`), the run's options
     * are all there: the resume rebuilds the rest of the header from the
     * run's inputs, the replay comparing each record already written. Before
     * that it cannot know the options: said, exit 2, nothing touched. */
    if (r->j->header_incomplete && !kw_run_attr_get(r->j, KW_RUN_ATTR_COUNT - 1)) {
        char when[64] = "its first record is torn"; /* killed while writing it */
        if (r->j->n_records)
            snprintf(when, sizeof when, "after %ld records", r->j->n_records);
        return kw_error_set(KW_EINPUT, "%s: the run was stopped while writing its journal's "
                            "header (%s), before it held the run's options and before any "
                            "evaluation, so it cannot be resumed and nothing is lost; start it "
                            "again with the options first given, after removing %s (it holds no "
                            "evaluation), or with another --out", r->journal, when, r->journal);
    }
    const kw_jheader *h = &r->j->h;
    for (int i = 0; i < h->n_attrs; i++) {
        r->attr_keys[i] = h->attrs[i].key;
        r->attr_vals[i] = h->attrs[i].value;
    }
    r->n_attrs = h->n_attrs;
    const char *owner = kw_run_attr_of(r, KW_RUN_OWNER);
    r->owner = owner ? owner : "";
    if ((rc = kw_run_load_attrs(r, h->seed)) != 0)
        return rc;
    for (int i = 0; r->j->header_incomplete && i < h->n_tuned; i++) /* no K, S records to check */
        if (h->tuned[i] < 0 || h->tuned[i] >= r->cfg->space.n_shapes)
            return kw_error_set(KW_EINPUT, "%s: the header (cut short) tunes shape %d, and the "
                                "space has %d now: start the run again", r->journal, h->tuned[i],
                                r->cfg->space.n_shapes);
    /* every input (the worker's program too) unchanged, before a worker is
     * started or anything is written */
    if ((rc = kw_run_inputs_unchanged(r)) != 0 || (rc = kw_run_metrics_unchanged(r)) != 0 ||
        (rc = kw_runfolder_sweep(r->dir, NULL)) != 0)
        return rc;
    if (r->cmd && ((rc = kw_run_exec_attrs(r)) != 0 || (rc = kw_run_worker_log(r)) != 0))
        return rc;
    /* mpirun: the other ranks check the same inputs and start their workers;
     * after a time_limit pause that kept no round (idle=K >= 1) the engine
     * makes this process's first round whole (kw_pause, kw_engine.c) by
     * lifting r->deadline_s for it, and every candidate sent to another
     * rank carries what r->deadline_s leaves (kw_mpi_spec.deadline_s): that
     * round is whole on every rank, the next is cut at the limit on every
     * rank */
    if ((rc = kw_run_mpi_start(r, threads, time_limit_s, h->seed)) != 0)
        return rc;
    kw_engine_opts *eo = &r->eo;
    kw_engine_opts_init(eo);
    kw_engine_opts_from_header(eo, r->shapes, h);
    eo->threads = threads;
    eo->time_limit_s = time_limit_s;
    const char *scr = kw_run_attr_get(r->j, KW_RUN_SCREEN);
    eo->screen = scr ? atoi(scr) : 0;
    /* a journal written before these options ran without them */
    const char *est = kw_run_attr_get(r->j, KW_RUN_ESTIMATE);
    eo->estimate = est ? atoi(est) : 0;
    const char *fz = kw_run_attr_get(r->j, KW_RUN_FROZEN);
    kw_knobuse_fuses(eo->fuses, r->cfg); /* from the inputs checked unchanged above */
    eo->queue = kw_knobuse_queue(r->cfg);
    /* a header cut short may lack its K records: the space's own knobs, as the replay regenerates them */
    return kw_run_frozen_parse(&eo->frozen, fz ? fz : "",
                               r->j->header_incomplete ? &r->cfg->space.knobs : &h->space);
}

int kw_run_resume(kw_run **out, int *usage, const char *dir, int threads, double time_limit_s,
                  volatile sig_atomic_t *stop)
{
    if (usage)
        *usage = 0;
    *out = NULL;
    kw_run *r = calloc(1, sizeof *r);
    if (!r)
        return kw_error_set(KW_ENOMEM, "out of memory resuming %s", dir);
    r->stop = stop;
    r->resume = 1;
    r->t_start = kw_run_now();
    r->deadline_s = time_limit_s > 0 ? r->t_start + time_limit_s : 0.0;
    int rc = kw_run_reopen(r, usage, dir, threads, time_limit_s);
    /* the lock is held and the inputs checked: from here this process
     * rewrites the files, so RUN/evidence stops saying the phase ended
     * until this process's evidence ends (kw_evcache_reopen) */
    if (rc == 0)
        rc = kw_evcache_reopen(r->dir, &r->cfg->space.knobs);
    if (rc != 0) {
        kw_run_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* ------------------------------------------------------------ open (read only) */

static const char *kw_run_attr_or(const kw_journal *j, kw_run_attr key, const char *dflt)
{
    const char *v = kw_run_attr_get(j, key);
    return v && v[0] ? v : dflt;
}

static void kw_run_open_note(kw_rundir *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void kw_run_open_note(kw_rundir *r, const char *fmt, ...)
{
    size_t used = strlen(r->inputs_msg);
    if (used + 3 >= sizeof r->inputs_msg)
        return;
    if (used)
        used += (size_t)snprintf(r->inputs_msg + used, sizeof r->inputs_msg - used, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->inputs_msg + used, sizeof r->inputs_msg - used, fmt, ap);
    va_end(ap);
    r->inputs_changed = 1;
}

/* An arrival trace input (KW_RUN_INPUT_TRACE: the run's --trace;
 * KW_RUN_INPUT_SHAPE_TRACE N: space shape N's own file): 1 when name is one (checked here: a difference is
 * noted, naming the file), 0 for the model files. Needs r->cfg. */
static int kw_run_open_trace_changed(kw_rundir *r, const char *name, const char *hash)
{
    const char *file = NULL;
    size_t pre = strlen(KW_RUN_INPUT_SHAPE_TRACE);
    if (strcmp(name, KW_RUN_INPUT_TRACE) == 0) {
        file = r->trace;
    } else if (strncmp(name, KW_RUN_INPUT_SHAPE_TRACE, pre) == 0) {
        int i = atoi(name + pre);
        if (i >= 0 && i < r->cfg->space.n_shapes)
            file = r->cfg->workload.shapes[r->cfg->space.shapes[i]].trace;
    } else {
        return 0;
    }
    char now[KW_HASH_HEX_LEN];
    if (!file || !file[0]) {
        kw_run_open_note(r, "the run's %s is not named by its inputs now", name);
    } else if (kw_hash_file(now, file) != 0) {
        kw_run_open_note(r, "%s", kw_error_last());
        kw_error_clear();
    } else if (strcmp(now, hash) != 0) {
        kw_run_open_note(r, "%s changed since the run (hash %s, now %s)", file, hash, now);
    }
    return 1;
}

int kw_run_open(kw_rundir **out, const char *dir, const kw_rundir_opts *o)
{
    kw_rundir_opts none = {0};
    if (!o)
        o = &none;
    kw_rundir *r = calloc(1, sizeof *r);
    if (!r)
        return kw_error_set(KW_ENOMEM, "out of memory opening %s", dir);
    int rc = 0;
    char path[KW_PATH_MAX + 16];
    if (strlen(dir) >= sizeof r->dir) {
        rc = kw_error_set(KW_EINPUT, "%.200s...: path too long (at most %zu bytes)", dir,
                          sizeof r->dir - 1);
        goto fail;
    }
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    if (dir[0] == '\0') { /* "/journal" would be read: the root's, not a run's */
        rc = kw_error_set(KW_EINPUT, "'': not a run folder (the name is empty)");
        goto fail;
    }
    if ((rc = kw_runfolder_join(path, sizeof path, dir, KW_RUNFOLDER_JOURNAL_NAME)) != 0)
        goto fail;
    /* lstat, not open: opening a FIFO would block (reliability); a dangling
     * link is a journal refused by the reader, not a missing one */
    struct stat probe;
    if (lstat(path, &probe) != 0) {
        rc = kw_run_no_journal(dir, "no journal");
        goto fail;
    }
    if ((rc = kw_journal_load(&r->j, path)) != 0 || (rc = kw_run_attr_rules(r->j, path)) != 0)
        goto fail;
    /* A writer appending now (tune holds the lock) leaves a last record half
     * written: what came before it is a consistent prefix, not damage. Asked
     * after the read, and a torn tail with no writer is read once more (the
     * writer may have finished in between). */
    if (r->j->torn && !kw_runfolder_writer(dir, NULL)) {
        kw_journal_free(r->j);
        r->j = NULL;
        if ((rc = kw_journal_load(&r->j, path)) != 0)
            goto fail;
    }
    if (kw_runfolder_writer(dir, NULL)) {
        r->in_progress = 1;
        r->j->torn = 0;
        r->j->torn_msg[0] = '\0';
    }
    if ((rc = kw_runsum_build(&r->rs, r->j)) != 0)
        goto fail;
    r->rs->info.live = r->in_progress; /* audit and report say "still running" */

    const kw_journal *j = r->j;
    r->mopts.seed = strtoull(kw_run_attr_or(j, KW_RUN_MODEL_SEED, "0"), NULL, 10);
    if (!kw_run_attr_get(j, KW_RUN_MODEL_SEED))
        r->mopts.seed = j->h.seed;
    r->mopts.sim_requests = atoi(kw_run_attr_or(j, KW_RUN_SIM_REQUESTS, "0"));
    r->mopts.thermal = atoi(kw_run_attr_or(j, KW_RUN_THERMAL, "0"));
    r->mopts.drift = atoi(kw_run_attr_or(j, KW_RUN_DRIFT, "1"));
    snprintf(r->trace, sizeof r->trace, "%s", kw_run_attr_or(j, KW_RUN_TRACE, ""));
    r->mopts.trace_path = r->trace[0] ? r->trace : NULL;

    if (o->flags & KW_RUNDIR_CONFIG) {
        const char *space = o->space ? o->space : kw_run_attr_or(j, KW_RUN_SPACE, NULL);
        char shipped[KW_PATH_MAX];
        if (o->space && o->space[0]) { /* --space NAME: a shipped space when no such file exists */
            if ((rc = kw_shipped_space(shipped, sizeof shipped, o->space)) < 0)
                goto fail;
            space = shipped;
        }
        const char *accel = o->accel ? o->accel : kw_run_attr_or(j, KW_RUN_ACCEL, NULL);
        const char *workload = o->workload ? o->workload : kw_run_attr_or(j, KW_RUN_WORKLOAD, NULL);
        if (space == NULL && accel == NULL && workload == NULL)
            rc = kw_load_config_default(&r->cfg);
        else
            rc = kw_load_config(&r->cfg, space, accel, workload);
        if (rc != 0 && (o->flags & KW_RUNDIR_INPUTS_OPTIONAL) && !o->space && !o->accel &&
            !o->workload && (rc == KW_EINPUT || rc == KW_EIO)) {
            /* the run is there, its inputs are not: open it without them (never
             * on running out of memory: a silently smaller result, exit 0) */
            snprintf(r->inputs_msg, sizeof r->inputs_msg, "%s", kw_error_last());
            kw_error_clear();
            r->inputs_missing = 1;
            *out = r;
            return 0;
        }
        if (rc != 0)
            goto fail;
        static const char *const slot_names[3] = {KW_RUN_INPUT_SPACE, KW_RUN_INPUT_ACCEL,
                                                  KW_RUN_INPUT_WORKLOAD};
        for (int i = 0; i < j->h.n_inputs; i++) {
            const char *n = j->h.inputs[i].name;
            if (kw_run_open_trace_changed(r, n, j->h.inputs[i].hash))
                continue;
            int slot = -1;
            for (int k = 0; k < 3; k++)
                if (strcmp(n, slot_names[k]) == 0)
                    slot = k;
            if (slot < 0 || strcmp(j->h.inputs[i].hash, r->cfg->input_hash[slot]) == 0)
                continue;
            r->inputs_changed = 1;
            size_t used = strlen(r->inputs_msg);
            snprintf(r->inputs_msg + used, sizeof r->inputs_msg - used,
                     "%sthe %s changed since the run (hash %s, now %s)", used ? "; " : "",
                     slot_names[slot], j->h.inputs[i].hash, r->cfg->input_hash[slot]);
        }
        kw_results_set_limits(r->rs, r->cfg);
    }
    *out = r;
    return 0;
fail:
    kw_rundir_free(r);
    return rc;
}

/* ------------------------------------------------------------ results */

/* The summary of the run's results: the live one when there is one (the
 * same summary, kw_runsum_live, without reading the journal), else (none,
 * or it failed: it is then dropped) from the journal file. */
static int kw_run_summary(kw_runsum **rs, kw_runsum_live **live, int *from_live,
                          const char *dir, const kw_config *cfg, const char *owner,
                          const char *metric)
{
    *from_live = 0;
    if (live && *live) {
        if (kw_results_summary_live(rs, *live, cfg, owner, metric) == 0) {
            *from_live = 1;
            return 0;
        }
        kw_runsum_live_free(*live);
        *live = NULL;
        kw_error_clear();
    }
    return kw_results_summary(rs, dir, cfg, owner, metric);
}

/* lock (NULL: none held) is tune's on dir: the files are written only while
 * dir still names the folder it locked (kw_runfolder_same), checked after
 * the evidence, which can take hours */
static int kw_run_results_of(kw_runsum_live **live, int *from_live, const char *dir,
                             const kw_config *cfg, const char *owner, const char *metric,
                             const kw_evaluator *port_ev, const kw_evaluator *final_ev,
                             const kw_evidence_pool *ep, const kw_runlock *lock)
{
    kw_runsum *rs = NULL;
    int rc = kw_run_summary(&rs, live, from_live, dir, cfg, owner, metric);
    if (rc == 0)
        rc = kw_evidence_run(rs, port_ev, final_ev, ep);
    if (rc == 0)
        rc = kw_runfolder_same(lock, dir);
    if (rc == 0)
        rc = kw_results_write_summary(dir, rs);
    kw_runsum_free(rs);
    return rc;
}

int kw_run_results(const char *dir, const kw_config *cfg, const char *owner, const char *metric,
                   const kw_evaluator *port_ev, const kw_evaluator *final_ev,
                   struct kw_evpool *pool, int width)
{
    int from_live;
    kw_evidence_pool ep = {.pool = pool, .width = width};
    return kw_run_results_of(NULL, &from_live, dir, cfg, owner, metric, port_ev, final_ev, &ep,
                             NULL);
}

/* ------------------------------------------------------------ the engine */

const char *kw_run_dir(const kw_run *r) { return r->dir; }
const char *kw_run_journal(const kw_run *r) { return r->journal; }
const char *kw_run_metric(const kw_run *r) { return r->eo.metric; }
const char *const *kw_run_shape_names(const kw_run *r) { return kw_run_port_ev(r)->shape_names; }
long kw_run_replay_records(const kw_run *r) { return r->resume && r->j ? (long)r->j->n_records : -1; }

int kw_run_ranks(const kw_run *r, char *buf, size_t len)
{
    if (!r->mp)
        return 0;
    kw_mpi_pool_format(r->mp, buf, len);
    return 1;
}

/* After each round: the live summary reads the round's records (opened at
 * the first round, when the journal exists). A failure drops it: the files
 * are then made from the journal file, as they always could be. */
static void kw_run_live_update(kw_run *r)
{
    if (r->live_failed)
        return;
    int rc = r->live ? kw_runsum_live_update(r->live) : kw_results_live_new(&r->live, r->dir);
    if (rc != 0) {
        kw_runsum_live_free(r->live);
        r->live = NULL;
        r->live_failed = 1;
        kw_error_clear();
    }
}

/* The engine's progress: the caller's, then the best-so-far results every
 * ctl->every_s, on the pool (idle between rounds) with the local threads. */
static void kw_run_progress(void *ud, const kw_progress *p)
{
    kw_run *r = ud;
    const kw_run_ctl *ctl = r->ctl;
    if (ctl->progress)
        ctl->progress(ctl->ud, r, p);
    kw_run_live_update(r);
    double now = kw_run_now();
    if (ctl->every_s > 0 && now - r->last_write >= ctl->every_s) {
        r->last_write = now;
        /* a stop cancels its portability evaluations: the pause writes the
         * files. A portability cell RUN/evidence keeps (a resume's replay
         * after a cut evidence) is read, not evaluated again (each rewrite
         * evaluated every cell until 2026-12-07); the rewrite adds nothing
         * to the file, whose order is the final evidence's */
        if (!r->kept_read) {
            r->kept_read = 1;
            if (!kw_run_port_ev(r)->drifts &&
                kw_evcache_open_read(&r->kept, r->dir, &r->cfg->space.knobs) != 0)
                kw_error_clear(); /* a cache: without it, the cells are evaluated */
        }
        int from_live;
        kw_evidence_pool ep = {.pool = &r->pool, .width = r->eo.threads, .cache = r->kept};
        int wrc = kw_run_results_of(&r->live, &from_live, r->dir, r->cfg, r->owner, r->eo.metric,
                                    kw_run_port_ev(r), NULL, &ep, r->lock);
        if (wrc != 0 && wrc != KW_EINTERRUPTED && !r->write_failed) {
            r->write_failed = 1; /* said once; the run goes on */
            if (ctl->rewrite_failed)
                ctl->rewrite_failed(ctl->ud, r);
        }
    }
}

/* The re-rank's progress, mid-round: the caller's hook only (kw_run_progress's
 * rewrite and live update must not run before the round is journalled). */
static void kw_run_rerank_progress(void *ud, const kw_progress *p)
{
    kw_run *r = ud;
    if (r->ctl && r->ctl->rerank)
        r->ctl->rerank(r->ctl->ud, r, p);
}

/* The evidence phase's progress, passed on to the caller's hook. */
static void kw_run_evidence_progress(void *ud, const char *what, long done, long total)
{
    kw_run *r = ud;
    if (r->ctl && r->ctl->evidence)
        r->ctl->evidence(r->ctl->ud, r, what, done, total);
}

/* The result files of a run that is done or paused, with the evidence
 * (re-checks, portability, neighbours), each evaluation kept in RUN/evidence
 * as it ends (kw_evcache.h) and read from there when a cut run kept it.
 * Stopped or out of time, before or during that evidence (the model
 * evaluators read r->stop and the deadline, so an evaluation in progress
 * returns KW_EINTERRUPTED): the files say what the journal already proves
 * and nothing more is evaluated; *cut is then 1. mpirun (Open MPI 4.1)
 * SIGKILLs the ranks odls_base_sigkill_timeout (1 s) after it passes SIGTERM
 * on (README "--time-limit and SIGTERM"); a resume continues the evidence. */
static int kw_run_write_results(kw_run *r, int *cut, kw_run_outcome *out)
{
    int rc = KW_EINTERRUPTED;
    *cut = 0;
    kw_evidence_pool ep = {.pool = &r->pool, .width = r->eo.threads};
    /* A process whose search had nothing left to evaluate (a resume of a
     * finished search) starts the evidence even past the limit, and its
     * first evaluation is made whole (kw_evidence_pool.deadline_s): each
     * such resume keeps one more, so the run ends under any limit. Before
     * 2026-12-07 a resume whose replay alone outlasted the limit, or whose
     * one evidence evaluation did, kept nothing and never ended. */
    int nothing_new = out->sum.stop == KW_STOP_DONE && out->sum.evals == 0;
    /* a search that did not finish has no evidence yet, whatever paused it:
     * a stop, the time limit, or an evaluation stopped on another MPI rank
     * (SIGTERM to rank 1 alone: the engine paused with neither, and the
     * evidence of the search so far went into RUN/evidence, whose resumed
     * file then differed from an uninterrupted run's; until 2026-12-07) */
    int paused = out->engine_rc != 0 || out->sum.stop != KW_STOP_DONE;
    const kw_evaluator *port_ev = kw_run_port_ev(r), *final_ev = kw_run_final_ev(r);
    /* a measured run's evidence evaluates nothing (kw_evidence.h: it drifts):
     * no RUN/evidence (it was left holding only its header until 2026-12-07) */
    int evaluates = !port_ev->drifts || (final_ev && !final_ev->drifts);
    out->evidence_file = evaluates;
    if (!paused && !(r->stop && *r->stop) && (!kw_run_out_of_time(r) || nothing_new)) {
        kw_evcache *cache = NULL;
        if (evaluates && (kw_runfolder_same(r->lock, r->dir) != 0 ||
                          kw_evcache_open(&cache, r->dir, &r->cfg->space.knobs) != 0)) {
            snprintf(out->evidence_note, sizeof out->evidence_note, "%s", kw_error_last());
            kw_error_clear(); /* the evidence is still evaluated, only not kept */
        }
        out->evidence_kept = kw_evcache_kept(cache);
        out->evidence_started = 1;
        kw_evidence_pool fp = {.pool = &r->pool, .width = r->eo.threads, .cache = cache,
                               .progress = kw_run_evidence_progress, .ud = r,
                               .deadline_s = &r->deadline_s, .past_s = &out->evidence_past_s};
        rc = kw_run_results_of(&r->live, &r->results_live, r->dir, r->cfg, r->owner,
                               r->eo.metric, port_ev, final_ev, &fp, r->lock);
        /* the phase finished and results.xml says so: the end record, so
         * its readers need not trust results.xml for it (kw_evcache.h) */
        if (rc == 0 && final_ev)
            kw_evcache_end(cache);
        out->evidence_added = kw_evcache_added(cache);
        if (cache && kw_evcache_failed(cache)[0])
            snprintf(out->evidence_note, sizeof out->evidence_note, "%s",
                     kw_evcache_failed(cache));
        kw_evcache_free(cache);
    } else if (evaluates && final_ev && !paused) {
        /* a finished search cut before its evidence began: the header
         * alone, so the file says the phase did not end (a file without
         * the end record); a resume goes on from it */
        kw_evcache *cache = NULL;
        if (kw_runfolder_same(r->lock, r->dir) != 0 ||
            kw_evcache_open(&cache, r->dir, &r->cfg->space.knobs) != 0)
            kw_error_clear();
        kw_evcache_free(cache);
    }
    if (rc == KW_EINTERRUPTED && ((r->stop && *r->stop) || kw_run_out_of_time(r) || paused)) {
        *cut = 1;
        kw_error_clear();
        rc = kw_run_results_of(&r->live, &r->results_live, r->dir, r->cfg, r->owner,
                               r->eo.metric, NULL, NULL, &ep, r->lock);
    }
    return rc;
}

int kw_run_exec(kw_run *r, kw_run_outcome *out, const kw_run_ctl *ctl)
{
    memset(out, 0, sizeof *out);
    r->ctl = ctl;
    r->last_write = kw_run_now();
    kw_engine_opts o = r->eo;
    /* a stop already set (a signal while kw_run_create / kw_run_resume ran:
     * the caller's handlers are on by then) pauses the run at once; it was
     * cleared here, and the signal lost, until 2026-12-07 */
    o.stop = r->stop;
    if (o.time_limit_s > 0) {
        /* the limit counts from kw_run_create / kw_run_resume: the engine
         * gets what is left (at least KW_RUN_LEFT_MIN_S, so it still writes
         * the header, with the measured rate scales, and pauses at once) */
        double now = kw_run_now();
        if (!(r->deadline_s > 0))
            r->deadline_s = now + o.time_limit_s;
        o.time_limit_s = r->deadline_s - now > KW_RUN_LEFT_MIN_S ? r->deadline_s - now
                                                                 : KW_RUN_LEFT_MIN_S;
    }
    o.deadline_s = &r->deadline_s; /* lifted for a round the engine makes whole (kw_pause) */
    o.progress = kw_run_progress;
    o.rerank_progress = ctl->rerank ? kw_run_rerank_progress : NULL;
    o.progress_ud = r;
    kw_run_info info = {.journal_path = r->journal,
                        .version = PACKAGE_VERSION,
                        .n_inputs = r->n_inputs,
                        .input_names = r->in_names,
                        .input_hashes = r->in_hashes,
                        .n_attrs = r->n_attrs,
                        .attr_keys = r->attr_keys,
                        .attr_values = r->attr_vals};
    /* mpirun: the engine evaluates through every rank's slots */
    const kw_evaluator *run_ev = kw_run_search_ev(r);
    if (r->mp) {
        run_ev = kw_mpi_pool_iface(r->mp);
        o.threads = kw_mpi_pool_slots(r->mp) < KW_RUN_THREADS_MAX ? kw_mpi_pool_slots(r->mp)
                                                                  : KW_RUN_THREADS_MAX;
    }
    /* the process's one pool, sized as the engine would size its own */
    int threads = o.threads < 1 ? 1 : o.threads > KW_RUN_THREADS_MAX ? KW_RUN_THREADS_MAX
                                                                      : o.threads;
    int rc = kw_evpool_start(&r->pool, threads);
    if (rc == 0) {
        o.pool = &r->pool;
        rc = r->resume ? kw_engine_resume(&out->sum, &r->cfg->space.knobs, run_ev, &o, &info)
                       : kw_engine_run(&out->sum, &r->cfg->space.knobs, run_ev, &o, &info);
    }
    if (r->mp) {
        kw_mpi_pool_format(r->mp, out->ranks, sizeof out->ranks);
        out->stopped_rank = kw_mpi_pool_stopped_by(r->mp, &out->stopped_signal);
        kw_mpi_pool_free(r->mp); /* the other ranks are done: the results are rank 0's */
        r->mp = NULL;
    }
    if (rc != 0 && rc != KW_EINTERRUPTED)
        kw_run_discard(r);
    out->engine_rc = rc;
    if (ctl->engine_done)
        ctl->engine_done(ctl->ud, r, out);
    if (rc == 0 || rc == KW_EINTERRUPTED) {
        /* Done or paused: the results so far, with the evidence when
         * neither a stop nor the deadline cuts it. A stop that comes while
         * they are written counts (out->signal). */
        int cut;
        rc = kw_run_write_results(r, &cut, out);
        out->live_results = r->results_live;
        out->signal = r->stop ? *r->stop : 0;
        out->evidence_cut = cut && !out->signal;
        out->elapsed_s = kw_run_now() - r->t_start;
        if (r->stop)
            *r->stop = 0;
    }
    kw_evpool_stop(&r->pool);
    kw_evcache_free(r->kept);
    r->kept = NULL;
    r->kept_read = 0;
    kw_runsum_live_free(r->live);
    r->live = NULL;
    r->live_failed = 0;
    r->ctl = NULL;
    return rc;
}

/* ------------------------------------------------------------ MPI ranks */

int kw_run_serve(volatile sig_atomic_t *stop, int *rank0_says, void (*note)(const char *msg))
{
    *rank0_says = 0;
    kw_mpi_job_spec *js = NULL;
    int rc = kw_mpi_spec_recv(&js);
    if (rc == 1)
        return 0; /* rank 0 ended without a run and said why */
    if (rc != 0)
        return rc;
    const kw_mpi_spec *sp = kw_mpi_spec_of(js);
    char differ[1024];
    if (note && kw_mpi_args_differ(js, differ, sizeof differ))
        note(differ);
    kw_run *r = calloc(1, sizeof *r);
    if (!r) {
        kw_mpi_spec_free(js);
        return kw_error_set(KW_ENOMEM, "out of memory serving the run");
    }
    r->stop = stop;
    for (int i = 0; i < sp->n_attrs && i < KW_JOURNAL_ATTR_MAX; i++) {
        r->attr_keys[i] = sp->attr_keys[i];
        r->attr_vals[i] = sp->attr_values[i];
        r->n_attrs++;
    }
    int setup = kw_run_load_attrs(r, sp->seed);
    if (setup == 0) {
        setup = kw_run_inputs_same(r, sp->n_inputs, sp->input_names, sp->input_hashes,
                                   kw_mpi_rank());
        *rank0_says = setup != 0; /* rank 0 names the rank and its file */
    }
    if (setup == 0 && r->cmd)
        setup = kw_run_exec_attrs(r);
    char why[KW_ERROR_MAX] = "";
    if (setup != 0)
        snprintf(why, sizeof why, "%s", kw_error_last()); /* serving clears it */
    r->deadline_s = sp->time_limit_s > 0 ? kw_run_now() + sp->time_limit_s : 0.0;
    const kw_evaluator *ev = r->ex ? kw_exec_iface(r->ex) : r->me ? kw_eval_iface(r->me)
                                                                : NULL;
    rc = kw_mpi_serve(ev, sp->threads, setup, &r->deadline_s, stop);
    if (setup != 0)
        rc = kw_error_set(setup, "%s", why);
    kw_run_free(r);
    kw_mpi_spec_free(js);
    return rc;
}
