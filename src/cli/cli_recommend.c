/* cli_recommend.c - `knobwise recommend RUN`: the mapping to deploy.
 *
 *   --shape S                 a shape of the run's space: its own winner when
 *                             it was tuned; else the nearest tuned shape's
 *                             winner, marked borrowed, evaluated on S and
 *                             compared with S's baseline
 *   --batch B --seq L --streams C [--phase prefill|decode]
 *                             a shape given by its numbers (L is the sequence
 *                             length for prefill, the KV length for decode):
 *                             an identical space shape is used as is, else a
 *                             new shape is made from the nearest tuned one
 *                             (same block, arrival process and load) with
 *                             these numbers, and the borrowed winner is
 *                             evaluated on it. The numbers cannot say the
 *                             phase: --phase is required when the run tuned
 *                             both phases, else inferred from the run and
 *                             printed (never a silent default)
 *   --all                     every shape of the space -> mappings.csv
 *                             (RUN_DIR/mappings.csv, or -o FILE), the table a
 *                             runtime loads: shape,config_id,borrowed_from,
 *                             every knob, then (added at the end) phase,
 *                             batch, seq, kv_len, streams, the predicted
 *                             p95_us/p99_us, borrow_warnings and
 *                             figures_from (where p95_us/p99_us come from:
 *                             "measured" on a measured run's tuned shapes,
 *                             else "model"), file_rows, figures_basis
 *                             (which sample: a tuned shape's headline,
 *                             kw_results_headline, "recheck" where the run
 *                             made one; "evaluated" for a row recommend
 *                             evaluated). A shape where nothing passes
 *                             the guards (tuned or borrowed) gets its
 *                             baseline, flagged fails_guards, named on
 *                             stderr; the other rows are still written. A
 *                             table where every row fails is refused.
 * A borrowed winner names its source shape, the distance in each dimension
 * (ratios) and warns when it extrapolates (a number outside the range the run
 * tuned for that phase) or crosses phase.
 * Nearest = smallest sum of |log2| differences of batch, length and streams,
 * same phase first (a prefill winner is a poor guess for decode). A borrowed
 * winner that fails a guard or is slower than the shape's baseline there is
 * not recommended: the baseline is, and borrowed_from reads "baseline". */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_cli.h"
#include "kw_evend.h"
#include "kw_hint.h"
#include "kw_load.h"
#include "kw_netpath.h"
#include "kw_results.h"
#include "kw_rundir.h"
#include "kw_runfolder.h"

/* mappings.csv borrow_warnings token of a row whose configuration fails the
 * guards on its shape (README "knobwise recommend", results/formats.md) */
#define KW_MAPPINGS_FAILS_GUARDS "fails_guards"
/* ... of a row whose configuration comes from a shape whose search the run
 * did not finish (stopped by a signal or --time-limit: the best so far) */
#define KW_MAPPINGS_SEARCH_STOPPED "search_stopped"
/* ... of every row of a run stopped before its evidence was made (no
 * re-check at the final sample, no portability matrix, fewer disproof
 * criteria: results.xml <results evidence=...>) */
#define KW_MAPPINGS_NO_EVIDENCE "no_evidence"
/* ... of a row whose configuration comes from a shape whose final re-check
 * could not rank it apart from its rival (results.xml <shape
 * ranking="unresolved">: the intervals overlap, or one is wider than the
 * minimum effect) */
#define KW_MAPPINGS_RANKING_UNRESOLVED "ranking_unresolved"

/* What a stopped run lacks, said once on stderr before any recommendation
 * (recommend and recommend --all): the evidence (kw_rundir_evidence_missing)
 * and each tuned shape's search that did not finish (only `only` when >= 0:
 * the shape asked for). Returns whether the evidence is missing. */
static int kw_rec_warn_stopped(const kw_rundir *r, int only)
{
    char why[128] = "";
    int missing = kw_rundir_evidence_missing(why, sizeof why, r);
    /* a run tune is writing now (it holds the lock) is not stopped: not yet finished */
    int live = r->in_progress;
    /* the command as a user would paste it: the folder one shell word
     * (kw_sbuf_shell; "my run;x" printed as it was ran x when pasted) */
    kw_sbuf w = {0};
    kw_sbuf_shell(&w, r->dir);
    char fix[2 * KW_PATH_MAX + 64];
    if (live)
        snprintf(fix, sizeof fix, "ask again when the run has finished");
    else
        snprintf(fix, sizeof fix, "`knobwise tune --resume %s` finishes it",
                 kw_sbuf_status(&w) == 0 ? kw_sbuf_cstr(&w) : r->dir);
    kw_sbuf_free(&w);
    if (missing)
        fprintf(stderr, "knobwise recommend: warning: %s: the run %s (%s): no re-check at the "
                "final sample and long thermal window, no portability matrix, and without them "
                "fewer disproof criteria; the mapping rests on the search alone; %s\n", r->dir,
                live           ? "is still running: its evidence is not made yet"
                : missing == 2 ? "has no record of its evidence"
                               : "was stopped before its evidence was made",
                why, fix);
    for (int i = 0; i < r->rs->n_shapes; i++)
        if (r->rs->shapes[i].stopped && (only < 0 || only == i))
            fprintf(stderr, "knobwise recommend: warning: shape %s: %s: its configuration is the "
                    "best so far, not the search's answer (borrow_warnings "
                    KW_MAPPINGS_SEARCH_STOPPED "); %s\n", r->rs->shapes[i].name,
                    live ? "the run is still running and this shape's search has not finished"
                         : "the run was stopped before its search finished",
                    fix);
    return missing;
}

static void kw_recommend_help(void)
{
    printf("usage: knobwise recommend RUN_DIR (--shape NAME | --batch B --seq L --streams C\n"
           "                          [--phase prefill|decode] | --all [-o FILE [--force]])\n"
           "                          [--space F] [--accel F] [--workload F]\n\n"
           "The mapping to deploy for a shape: the run's winner for a tuned shape, else the\n"
           "nearest tuned shape's winner (marked borrowed, with its distance in each\n"
           "dimension and a warning when it extrapolates or crosses phase), evaluated on\n"
           "the shape and compared with its baseline, with the figures' source (a tuned\n"
           "shape's are the final re-check's where the run made one, then the search's\n"
           "sample it was ranked on). For a tuned shape, also its rollback\n"
           "and guards, and its claim as results.xml states it: the re-check at the final\n"
           "sample (recommendation and baseline) and the disproof criteria.\n\n"
           "  --shape NAME     a shape of the run's space\n"
           "  --batch B        sequences per request (with --seq and --streams)\n"
           "  --seq L          tokens per sequence (prefill) or KV length (decode)\n"
           "  --streams C      concurrent request streams\n"
           "  --phase P        prefill or decode; required with --batch/--seq/--streams\n"
           "                   when the run tuned both phases (default: the run's only\n"
           "                   phase, printed)\n"
           "  --all            every shape of the space: write mappings.csv (a shape where\n"
           "                   nothing passes the guards gets its baseline, flagged\n"
           "                   fails_guards and named on stderr; none passing: exit 2)\n"
           "  -o, --out FILE   with --all: where to write it (default RUN_DIR/mappings.csv;\n"
           "                   - for standard output):\n"
           "                   a new file name, or an existing mappings file with --force;\n"
           "                   without it a run folder you cannot write is refused (exit 2)\n"
           "  --force          replace an existing mappings file recommend --all wrote\n"
           "                   (its header line); any other file, a folder, device, FIFO,\n"
           "                   symbolic link or one of the run's own files is refused (exit 2)\n"
           "  --space F        the space file instead of the one the run recorded\n"
           "  --accel F        the accelerator file instead of the recorded one\n"
           "  --workload F     the workload file instead of the recorded one\n");
}

/* |log2 a - log2 b| for positive counts (0 when either is not positive). */
static double kw_ldist(int a, int b)
{
    if (a <= 0 || b <= 0)
        return 0.0;
    return fabs(log2((double)a) - log2((double)b));
}

static int kw_len_of(const kw_shape *s) { return s->phase == KW_PHASE_PREFILL ? s->seq : s->kv_len; }

/* Nearest tuned shape (summary index) to sh; phase mismatch costs more than any size gap. */
static int kw_nearest(const kw_rundir *r, const kw_shape *sh)
{
    const kw_runsum *rs = r->rs;
    int best = -1;
    double bd = INFINITY;
    for (int i = 0; i < rs->n_shapes; i++) {
        if (kw_runsum_winner(rs, i) < 0)
            continue;
        int ci = kw_load_config_shape(r->cfg, rs->shapes[i].name);
        if (ci < 0)
            continue;
        const kw_shape *t = &r->cfg->workload.shapes[r->cfg->space.shapes[ci]];
        double d = kw_ldist(sh->batch, t->batch) + kw_ldist(kw_len_of(sh), kw_len_of(t)) +
                   kw_ldist(sh->streams, t->streams) + (sh->phase != t->phase ? 1000.0 : 0.0);
        if (d < bd) {
            bd = d;
            best = i;
        }
    }
    return best;
}

/* How far a borrowed winner travels: the source shape's numbers against the
 * requested one's, per dimension, and the two warnings a runtime must see:
 * extrapolation (a requested number outside the range the run tuned for that
 * phase: no tuned shape brackets it) and a phase crossing (prefill's winner
 * used for decode or back). */
typedef struct kw_borrow {
    char dist[256];          /* "batch 16 vs 8 (x2), seq 4096 vs 2048 (x2), streams 4 vs 4 (=)" */
    char warn[256];          /* "" or the warnings joined by "; " */
    char flags[64];          /* CSV: "" or extrapolates;crosses_phase */
} kw_borrow;

static const char *kw_phase_name(kw_phase p) { return p == KW_PHASE_PREFILL ? "prefill" : "decode"; }

static void kw_dim(char *buf, size_t n, size_t *used, const char *name, int want, int have)
{
    if (*used >= n)
        return;
    char ratio[32];
    if (want == have)
        snprintf(ratio, sizeof ratio, "=");
    else if (have > 0)
        snprintf(ratio, sizeof ratio, "x%.3g", (double)want / have);
    else
        snprintf(ratio, sizeof ratio, "?");
    *used += (size_t)snprintf(buf + *used, n - *used, "%s%s %d vs %d (%s)", *used ? ", " : "",
                              name, want, have, ratio);
}

static void kw_borrow_info(kw_borrow *out, const kw_rundir *r, const kw_shape *sh, int from)
{
    memset(out, 0, sizeof *out);
    const kw_runsum *rs = r->rs;
    int ci = kw_load_config_shape(r->cfg, rs->shapes[from].name);
    if (ci < 0)
        return;
    const kw_shape *t = &r->cfg->workload.shapes[r->cfg->space.shapes[ci]];
    size_t u = 0;
    kw_dim(out->dist, sizeof out->dist, &u, "batch", sh->batch, t->batch);
    kw_dim(out->dist, sizeof out->dist, &u, sh->phase == KW_PHASE_PREFILL ? "seq" : "kv_len",
           kw_len_of(sh), kw_len_of(t));
    kw_dim(out->dist, sizeof out->dist, &u, "streams", sh->streams, t->streams);
    if (u < sizeof out->dist)
        snprintf(out->dist + u, sizeof out->dist - u, ", phase %s vs %s", kw_phase_name(sh->phase),
                 kw_phase_name(t->phase));
    /* the range the run tuned for the requested phase */
    int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, n = 0;
    for (int i = 0; i < rs->n_shapes; i++) {
        if (kw_runsum_winner(rs, i) < 0)
            continue;
        int k = kw_load_config_shape(r->cfg, rs->shapes[i].name);
        if (k < 0)
            continue;
        const kw_shape *x = &r->cfg->workload.shapes[r->cfg->space.shapes[k]];
        if (x->phase != sh->phase || x->block != sh->block)
            continue;
        int v[3] = {x->batch, kw_len_of(x), x->streams};
        for (int d = 0; d < 3; d++) {
            if (n == 0 || v[d] < lo[d])
                lo[d] = v[d];
            if (n == 0 || v[d] > hi[d])
                hi[d] = v[d];
        }
        n++;
    }
    static const char *const dn[3] = {"batch", "length", "streams"};
    int want[3] = {sh->batch, kw_len_of(sh), sh->streams};
    size_t w = 0;
    int extra = 0;
    for (int d = 0; n > 0 && d < 3; d++)
        if (want[d] < lo[d] || want[d] > hi[d]) {
            extra = 1;
            if (w < sizeof out->warn)
                w += (size_t)snprintf(out->warn + w, sizeof out->warn - w,
                                      "%s%s %d is outside the tuned %s range %d..%d",
                                      w ? "; " : "extrapolates: ",
                                      d == 1 ? (sh->phase == KW_PHASE_PREFILL ? "seq" : "kv_len")
                                             : dn[d],
                                      want[d], kw_phase_name(sh->phase), lo[d], hi[d]);
        }
    int cross = t->phase != sh->phase;
    if (cross && w < sizeof out->warn)
        snprintf(out->warn + w, sizeof out->warn - w,
                 "%scrosses phase: the winner was tuned for %s and is used for %s%s",
                 w ? "; " : "", kw_phase_name(t->phase), kw_phase_name(sh->phase),
                 n == 0 ? " (the run tuned no shape of this phase)" : "");
    snprintf(out->flags, sizeof out->flags, "%s%s%s", extra ? "extrapolates" : "",
             extra && cross ? ";" : "", cross ? "crosses_phase" : "");
}

typedef struct kw_rec {
    int cfg_shape;           /* evaluator shape index */
    int tuned;               /* summary shape index when tuned, else -1 */
    int from;                /* summary shape the winner comes from */
    kw_cand cand;            /* what to deploy */
    int use_baseline;        /* borrowed winner refused: the baseline is recommended */
    int failed;              /* tuned, but nothing the run evaluated passes the guards */
    kw_metrics m, base_m;    /* on the requested shape (evaluated when borrowed): the search's */
    int has_hl;              /* tuned: hl is the headline (kw_results_headline) */
    kw_headline hl;          /* ... the re-check's figures where results.xml has them */
    char why[256];
    kw_borrow borrow;        /* not tuned: how far the source shape is */
} kw_rec;

/* The summary shape whose configuration x recommends (tuned or borrowed), or
 * -1 when it recommends the baseline. */
static int kw_rec_source(const kw_rec *x)
{
    return x->use_baseline ? -1 : x->tuned >= 0 ? x->tuned : x->from;
}

/* nothing_ok: what a shape with nothing to recommend and nothing to borrow
 * gets. 0 (--shape, numbers): an error, the user asked for that one shape.
 * 1 (--all): the baseline, evaluated on it, with why[] saying so, so the other
 * shapes' rows are still written (kw_write_mappings flags the row). */
static int kw_recommend_one(kw_rec *out, kw_rundir *r, int cfg_shape, int nothing_ok)
{
    const kw_runsum *rs = r->rs;
    const kw_shape *sh = &r->cfg->workload.shapes[r->cfg->space.shapes[cfg_shape]];
    memset(out, 0, sizeof *out);
    out->cfg_shape = cfg_shape;
    out->tuned = kw_runsum_find_shape(rs, sh->name);
    int failed = out->tuned >= 0 && kw_runsum_winner(rs, out->tuned) < 0;
    if (failed)
        out->tuned = -1; /* tuned but nothing passed: borrow */
    out->failed = failed;
    out->from = out->tuned >= 0 ? out->tuned : kw_nearest(r, sh);
    if (out->from < 0 && failed && !nothing_ok)
        return kw_error_set(KW_EINPUT, "no configuration the run evaluated for shape %s passes the "
                                       "guards, and no other shape has a recommendation to borrow "
                                       "(knobwise report shows which guards fail)", sh->name);
    if (out->from < 0 && !nothing_ok)
        return kw_error_set(KW_EINPUT, "the run has no recommendation to borrow for shape %s", sh->name);
    if (out->from >= 0 && out->tuned >= 0) {
        const kw_rs_shape *fs = &rs->shapes[out->from];
        out->cand = fs->configs[kw_runsum_winner(rs, out->from)].cand;
        out->m = fs->configs[fs->ranked[0]].m;
        if (fs->baseline >= 0)
            out->base_m = fs->configs[fs->baseline].m;
        out->has_hl = 1;
        kw_results_headline(&out->hl, rs, out->from, kw_runsum_winner(rs, out->from));
        return 0;
    }
    const kw_evaluator *ev;
    int rc = kw_rundir_evaluator(&ev, r);
    if (rc != 0)
        return rc;
    kw_cand base;
    kw_knobs_cand_baseline(&base, &rs->ks);
    if (out->from < 0) { /* --all: nothing passed and nothing to borrow */
        out->use_baseline = 1;
        out->cand = base;
        snprintf(out->why, sizeof out->why, "%s, and no shape of the run has a recommendation "
                 "to borrow", failed ? "no configuration the run evaluated passes the guards"
                                     : "not tuned");
        rc = ev->eval(ev->ctx, &base, cfg_shape, 0, &out->base_m);
        out->m = out->base_m;
        return rc;
    }
    out->cand = rs->shapes[out->from].configs[kw_runsum_winner(rs, out->from)].cand;
    kw_borrow_info(&out->borrow, r, sh, out->from);
    if ((rc = ev->eval(ev->ctx, &out->cand, cfg_shape, 0, &out->m)) != 0 ||
        (rc = ev->eval(ev->ctx, &base, cfg_shape, 0, &out->base_m)) != 0)
        return rc;
    int p = kw_runsum_metric(rs, rs->metric_names[rs->primary]);
    if (out->m.guards[0]) {
        out->use_baseline = 1;
        snprintf(out->why, sizeof out->why, "the borrowed winner fails guards (%.160s) on this shape",
                 out->m.guards);
    } else if (!out->base_m.guards[0] && out->m.v[p] > out->base_m.v[p]) {
        /* only a baseline that passes the guards beats a borrowed winner
         * that does: a faster baseline that fails them is no rollback */
        out->use_baseline = 1;
        snprintf(out->why, sizeof out->why,
                 "the borrowed winner is slower than the baseline here (%s %.3f us vs %.3f us)",
                 rs->metric_names[rs->primary], out->m.v[p], out->base_m.v[p]);
    }
    if (out->use_baseline) {
        out->cand = base;
        out->m = out->base_m;
    }
    return 0;
}

/* The changes of config the run's own evaluations already show do not earn
 * their place (kw_netpath_unearned): the disproof criterion "reverting any
 * one of its changes alone costs less than the minimum effect" met for
 * them, said under the criteria. */
static void kw_print_unearned(const kw_runsum *rs, int shape, int config)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    if (config < 0 || s->baseline < 0)
        return;
    kw_unearned *u = calloc((size_t)(rs->ks.n_knobs > 0 ? rs->ks.n_knobs : 1), sizeof *u);
    int n = u ? kw_netpath_unearned(u, rs, shape, config) : 0;
    if (n > 0) {
        char t[2048];
        kw_netpath_unearned_text(t, sizeof t, rs, shape, config, u, n);
        printf("  already met for %d of its %d changes, which do not earn their place: %s\n", n,
               kw_knobs_cand_distance(&rs->ks, &s->configs[s->baseline].cand, &s->configs[config].cand),
               t);
    }
    free(u);
}

/* The claim's evidence and disproof criteria as results.xml states them
 * (the numbers as the file spells them): the re-check at the final sample of
 * the recommendation and the baseline, then each criterion. */
static void kw_print_claim(const kw_runsum *rs, const kw_results_claim *c, int shape, int config)
{
    const char *pn = rs->metric_names[rs->primary];
    const kw_results_recheck *a = &c->rec, *b = &c->base;
    if (!c->found || !c->recommended) {
        printf("  evidence: none in results.xml (%s)\n",
               c->found ? "it lists no recommended configuration for the shape"
                        : "the run folder has no results.xml holding the shape");
        return;
    }
    if (a->present && a->samples[0]) {
        printf("  evidence: re-checked at %s requests: p95 %s us [95%% interval %s, %s], p99 %s us "
               "[%s, %s]; guards %s\n", a->samples, a->p95_us, a->p95_lo_us, a->p95_hi_us, a->p99_us,
               a->p99_lo_us, a->p99_hi_us, a->guards[0] ? a->guards : "pass");
        int p99 = strcmp(pn, KW_METRIC_NAME(KW_M_P99_US)) == 0;
        double ra = strtod(p99 ? a->p99_us : a->p95_us, NULL);
        double rb = b->present && b->samples[0] ? strtod(p99 ? b->p99_us : b->p95_us, NULL) : NAN;
        if (isfinite(rb) && rb > 0)
            printf("            the baseline there: p95 %s us, p99 %s us (%s %+.2f%% at the "
                   "re-check); long-window p99 %s us, throttle %s%%\n", b->p95_us, b->p99_us, pn,
                   (ra - rb) / rb * 100.0, a->long_p99_us, a->throttle_pct);
        else
            printf("            long-window p99 %s us, throttle %s%%\n", a->long_p99_us,
                   a->throttle_pct);
        if (a->ttft_p99_us[0] && a->tpot_p99_us[0]) /* continuous batching, as the file says it */
            printf("            TTFT p99 %s us, TPOT p99 %s us (the baseline there: %s us, %s us); "
                   "rollback ceilings %s us, %s us\n", a->ttft_p99_us, a->tpot_p99_us,
                   b->ttft_p99_us[0] ? b->ttft_p99_us : "?", b->tpot_p99_us[0] ? b->tpot_p99_us : "?",
                   c->ttft_ceiling[0] ? c->ttft_ceiling : "none", c->tpot_ceiling[0] ? c->tpot_ceiling : "none");
        /* the file's own ceilings below its re-check: a results.xml written
         * by a knobwise before stop 42 (ceilings from the search's sample; a
         * bursty shape's tail at the final sample can lie far above them) or
         * edited: deployed with them the mapping meets its own disproof
         * criterion "after rollout, p95 above ..." */
        double r95 = strtod(a->p95_us, NULL), r99 = strtod(a->p99_us, NULL);
        double c95 = c->p95_ceiling[0] ? strtod(c->p95_ceiling, NULL) : NAN;
        double c99 = c->p99_ceiling[0] ? strtod(c->p99_ceiling, NULL) : NAN;
        int over95 = r95 > c95, over99 = r99 > c99;
        if (over95 || over99) {
            char what[6 * KW_RESULTS_RECHECK_TEXT];
            if (over95 && over99)
                snprintf(what, sizeof what, "p95 %s us and p99 %s us are above the file's rollback "
                         "ceilings %s us and %s us", a->p95_us, a->p99_us, c->p95_ceiling,
                         c->p99_ceiling);
            else
                snprintf(what, sizeof what, "%s %s us is above the file's rollback ceiling %s us",
                         over95 ? "p95" : "p99", over95 ? a->p95_us : a->p99_us,
                         over95 ? c->p95_ceiling : c->p99_ceiling);
            printf("  WARNING: at the re-check its %s: results.xml was written by an older knobwise, "
                   "which took the ceilings from the search's sample (or edited), so a runtime "
                   "watching them rolls the mapping back on its own evidence; the watch line above "
                   "is derived from the re-check: rewrite the results with knobwise tune --resume "
                   "on the run folder\n", what);
        }
    } else if (a->present && a->not_measured[0]) {
        printf("  evidence: not re-checked: %s\n", a->not_measured);
    } else {
        printf("  evidence: no re-check at the final sample in results.xml\n");
    }
    if (c->n_criteria > 0)
        printf("  disproof: the claim is disproved, and the mapping rolled back, when\n");
    const char *t = c->criteria.data; /* n_criteria > 0: NUL-ended texts */
    for (int i = 0; i < c->n_criteria; i++, t += strlen(t) + 1)
        printf("    - %s\n", t);
    kw_print_unearned(rs, shape, config);
}

/* The requests behind figures m (0: not said). */
static long kw_rec_samples(const kw_runsum *rs, const kw_metrics *m)
{
    int k = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_SAMPLES));
    return k >= 0 && isfinite(m->v[k]) && m->v[k] > 0 ? lround(m->v[k]) : 0;
}

/* One figures line: the primary's change against the baseline, p95 and p99,
 * the guards. src: where they come from, leading the line ("the re-check
 * (20000 requests)"); NULL: a continuation ending the line opened before. */
static void kw_print_figures(const kw_runsum *rs, const char *src, const kw_metrics *m,
                             const kw_metrics *base)
{
    const char *pn = rs->metric_names[rs->primary];
    int p = rs->primary;
    int i95 = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_P95_US)), i99 = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_P99_US));
    const char *sat = kw_guards_saturation(base ? base->guards : "", m->guards);
    if (src)
        printf("  %s at %s: ", pn, src);
    else
        printf(" ");
    if (base) {
        printf("baseline %.3f us -> %.3f us (", base->v[p], m->v[p]);
        if (sat)
            printf("%s)", sat);
        else
            printf("%+.2f%%)", base->v[p] > 0 ? (m->v[p] - base->v[p]) / base->v[p] * 100.0 : 0.0);
    } else {
        printf("%.3f us", m->v[p]);
    }
    if (i95 >= 0 && i99 >= 0)
        printf("; p95 %.3f us, p99 %.3f us", m->v[i95], m->v[i99]);
    /* continuous batching: TTFT and TPOT p99, what a serving engineer
     * watches beside the request latency (a configuration that cuts the
     * latency can lengthen the time to first token) */
    char llm[256];
    kw_results_llm_words(llm, sizeof llm, rs, m, base);
    if (llm[0])
        printf("; %s", llm);
    printf("; guards %s%s\n", m->guards[0] ? m->guards : "pass", src ? "" : ")");
}

static void kw_print_rec(const kw_rundir *r, const kw_rec *x, char *const *notes,
                         const kw_results_claim *claim)
{
    const kw_runsum *rs = r->rs;
    const kw_knobspace *ks = &rs->ks;
    const char *name = r->cfg->workload.shapes[r->cfg->space.shapes[x->cfg_shape]].name;
    /* a measured run's borrowed figures are the model's: the run measured
     * only the shapes it tuned, and nothing is measured here */
    const char *by = rs->info.measured ? " by the model (not measured: the run measured only the "
                                         "shapes it tuned)" : "";
    printf("shape %s: ", name);
    if (x->failed)
        printf("tuned, but no configuration the run evaluated passes the guards; ");
    if (x->tuned >= 0)
        printf("tuned in this run%s\n", rs->shapes[x->tuned].stopped
                                            ? " (STOPPED before its search finished: the best so far)"
                                            : "");
    else if (x->use_baseline)
        printf("%s%s%s -> the BASELINE is recommended (borrowing from %s was refused)\n",
               x->failed ? "" : "not tuned; ", x->why, by, rs->shapes[x->from].name);
    else
        printf("%sBORROWED from the nearest tuned shape %s, evaluated here%s\n",
               x->failed ? "" : "not tuned: ", rs->shapes[x->from].name, by);
    if (x->tuned < 0) {
        printf("  distance to %s: %s\n", rs->shapes[x->from].name, x->borrow.dist);
        if (x->borrow.warn[0])
            printf("  WARNING: %s\n", x->borrow.warn);
    }
    int from = kw_rec_source(x);
    if (from >= 0 && notes && notes[from]) {
        /* one ~600-character sentence before stop 47: now its verdict, then
         * labelled, wrapped lines (kw_results_note_block) */
        kw_sbuf head = {0}, block = {0};
        kw_sbuf_printf(&head, "  RANKING%s%s", x->tuned >= 0 ? "" : " of ",
                       x->tuned >= 0 ? "" : rs->shapes[from].name);
        kw_results_note_block(&block, kw_sbuf_status(&head) == 0 ? kw_sbuf_cstr(&head) : "  RANKING",
                              notes[from]);
        if (kw_sbuf_status(&block) == 0)
            fputs(kw_sbuf_cstr(&block), stdout);
        else
            printf("  RANKING: %s\n", notes[from]);
        kw_sbuf_free(&head);
        kw_sbuf_free(&block);
    }
    printf("  config %016llx\n", (unsigned long long)kw_knobs_cand_id(ks, &x->cand));
    /* a tuned shape's changes: what reverting each alone reads in the run's
     * own evaluations (kw_netpath_revert), the per-knob "why" beside it */
    int wcfg = x->tuned >= 0 ? kw_runsum_winner(rs, x->tuned) : -1;
    int n_rev = 0;
    for (int k = 0; k < ks->n_knobs; k++) {
        const kw_knob *kb = &ks->knobs[k];
        int changed = x->cand.v[k] != kb->baseline;
        char why[160] = "";
        kw_unearned u;
        const char *g;
        int rv = wcfg >= 0 && changed ? kw_netpath_revert(&u, &g, rs, x->tuned, wcfg, k) : KW_REVERT_NONE;
        if (rv == KW_REVERT_FIGURE && u.pair && isfinite(u.pair->lo_pct))
            snprintf(why, sizeof why, "; reverted alone %+.2f%% [%+.2f%%, %+.2f%%]", u.pct,
                     u.pair->lo_pct, u.pair->hi_pct);
        else if (rv == KW_REVERT_FIGURE && u.pct != 0 && fabs(u.pct) < 0.005)
            snprintf(why, sizeof why, "; reverted alone %s<0.01%%", u.pct > 0 ? "+" : "-");
        else if (rv == KW_REVERT_FIGURE)
            snprintf(why, sizeof why, u.pct == 0 ? "; reverted alone 0.00%%" : "; reverted alone %+.2f%%",
                     u.pct);
        else if (rv == KW_REVERT_GUARD)
            snprintf(why, sizeof why, "; reverted alone fails %.100s", g);
        n_rev += rv != KW_REVERT_NONE;
        printf("    %-24s %-14s%s%s%s%s\n", kb->name, kb->values[x->cand.v[k]],
               changed ? "  (baseline " : "", changed ? kb->values[kb->baseline] : "", why,
               changed ? ")" : "");
    }
    if (n_rev > 0)
        printf("    (reverted alone: %s of this configuration with that one knob back at its baseline "
               "value, against its own, from the run's %s)\n", rs->metric_names[rs->primary],
               rs->info.noisy ? "pairing (95% intervals)" : "evaluations on the search's sample");
    int i95 = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_P95_US)), i99 = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_P99_US));
    /* the headline first (kw_results_headline: the re-check where results.xml
     * has one), then the search's own figures when they are another source */
    char src[96];
    if (x->has_hl) {
        kw_results_basis_words(src, sizeof src, &x->hl);
        kw_print_figures(rs, src, x->hl.m, x->hl.base);
        if (x->hl.basis == KW_BASIS_RECHECK) {
            kw_headline sh = {KW_BASIS_SEARCH, &x->m, &x->base_m, kw_rec_samples(rs, &x->m)};
            kw_results_basis_words(src, sizeof src, &sh);
            printf("    (ranked on %s:", src);
            kw_print_figures(rs, NULL, &x->m, &x->base_m);
        }
    } else {
        long n = kw_rec_samples(rs, &x->m);
        if (n > 0)
            snprintf(src, sizeof src, "one evaluation on this shape (%ld requests)", n);
        else
            snprintf(src, sizeof src, "one evaluation on this shape");
        kw_print_figures(rs, src, &x->m, &x->base_m);
    }
    if (x->tuned >= 0) {
        kw_rollback rb;
        int w = kw_runsum_winner(rs, x->tuned);
        kw_results_rollback(&rb, rs, x->tuned, w);
        const kw_rs_shape *s = &rs->shapes[x->tuned];
        printf("  rollback: to %016llx (previous on the accepted path) or the baseline %016llx;\n"
               "            watch p95 <= %.3f us, p99 <= %.3f us, ",
               (unsigned long long)s->configs[rb.parent].id,
               (unsigned long long)(s->baseline >= 0 ? s->configs[s->baseline].id : 0),
               rb.p95_ceiling_us, rb.p99_ceiling_us);
        if (isfinite(rb.ttft_ceiling_us) && isfinite(rb.tpot_ceiling_us))
            printf("TTFT p99 <= %.3f us, TPOT p99 <= %.3f us,\n            ", rb.ttft_ceiling_us,
                   rb.tpot_ceiling_us);
        printf("the drift, throttle and fallback guards%s\n",
               rs->limits.sla_ttft_p99_us > 0 || rs->limits.sla_tpot_p99_us > 0
                   ? " and the TTFT/TPOT SLAs" : "");
        if (claim)
            kw_print_claim(rs, claim, x->tuned, w);
    } else if (!x->use_baseline) {
        /* borrowed: the source shape's rollback and claim do not carry over;
         * the baseline here is what runs without the mapping */
        kw_cand base;
        kw_knobs_cand_baseline(&base, ks);
        printf("  rollback: to the baseline %016llx (borrowed, the mapping has no accepted path on "
               "this shape);\n", (unsigned long long)kw_knobs_cand_id(ks, &base));
        if (i95 >= 0 && i99 >= 0)
            printf("            watch p95 and p99 against the baseline's here (%.3f us, %.3f us), "
                   "the drift, throttle and fallback guards\n", x->base_m.v[i95], x->base_m.v[i99]);
        kw_sbuf cmd = {0};
        kw_sbuf_shell(&cmd, r->dir);
        kw_sbuf_puts(&cmd, " --shape ");
        kw_sbuf_shell(&cmd, rs->shapes[x->from].name);
        printf("  evidence: one evaluation on this shape at the space's sample, no re-check; the "
               "rollback and disproof criteria of %s's recommendation do not carry over "
               "(knobwise recommend %s gives them)\n", rs->shapes[x->from].name,
               kw_sbuf_status(&cmd) == 0 ? kw_sbuf_cstr(&cmd) : "RUN");
        kw_sbuf_free(&cmd);
    }
    char owner[sizeof rs->info.owner]; /* recorded by whoever ran tune */
    kw_cli_terminal_text(owner, sizeof owner, rs->info.owner[0] ? rs->info.owner : "unassigned");
    printf("  owner: %s\n", owner);
}

/* mappings.csv's watch columns of a row (KW_MAPPINGS_HEADER_WATCH): a tuned
 * shape's winner's watches as results.xml gives them (the same function,
 * the same decimals); empty fields on a row not tuned here (tuned < 0) and
 * where the shape has no such watch. */
static void kw_mappings_watches(kw_sbuf *b, const kw_runsum *rs, int tuned)
{
    kw_results_watch w[KW_RESULTS_WATCH_MAX];
    int n = 0;
    kw_rollback rb;
    if (tuned >= 0) {
        kw_results_rollback(&rb, rs, tuned, kw_runsum_winner(rs, tuned));
        n = kw_results_watches(w, &rb, rs);
    }
    for (int i = 0; i < KW_RESULTS_WATCH_MAX; i++) {
        kw_sbuf_puts(b, ",");
        if (i < n)
            kw_sbuf_num(b, isnan(w[i].max) ? w[i].min : w[i].max, kw_metric_decimals(w[i].metric));
    }
}

static int kw_write_mappings(kw_rundir *r, const char *dir, const char *name, int no_evidence,
                             char *const *notes)
{
    const kw_runsum *rs = r->rs;
    const kw_knobspace *ks = &rs->ks;
    kw_sbuf b = {0};
    kw_sbuf_puts(&b, KW_MAPPINGS_HEADER_PREFIX);
    for (int k = 0; k < ks->n_knobs; k++) {
        kw_sbuf_puts(&b, ",");
        kw_sbuf_csv(&b, ks->knobs[k].name);
    }
    /* added at the end (results/formats.md: columns are only added at the end): the shape's numbers, the
     * predicted tail on it, and the borrowing warnings */
    kw_sbuf_puts(&b, KW_MAPPINGS_MARK "," KW_MAPPINGS_HEADER_ROWS "," KW_MAPPINGS_HEADER_BASIS
                     "," KW_MAPPINGS_HEADER_WATCH "\n");
    int rc = 0;
    int i95 = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_P95_US)), i99 = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_P99_US));
    int n_failing = 0;
    for (int i = 0; i < r->cfg->space.n_shapes; i++) {
        kw_rec x;
        if ((rc = kw_recommend_one(&x, r, i, 1)) != 0)
            goto done;
        /* A row whose configuration fails the guards on its shape (nothing
         * the run evaluated passed, and no borrowed winner did): the
         * baseline, what a runtime without this table runs, flagged
         * fails_guards and named on stderr; the other shapes' rows are
         * still written. Refusing the whole table for one shape left every
         * shape without a mapping (until 2026-12-06). */
        int fails = x.m.guards[0] != '\0';
        if (fails) {
            n_failing++;
            fprintf(stderr, "knobwise recommend: warning: shape %s: %s%s%s; its row is the "
                    "baseline, which fails the guards there too (%s): nothing to deploy for it "
                    "(borrow_warnings " KW_MAPPINGS_FAILS_GUARDS ")\n",
                    r->cfg->workload.shapes[r->cfg->space.shapes[i]].name,
                    x.failed && x.from >= 0 ? "no configuration the run evaluated passes the guards"
                                            : "",
                    x.failed && x.from >= 0 && x.why[0] ? ", and " : "", x.why, x.m.guards);
        }
        kw_sbuf_csv(&b, r->cfg->workload.shapes[r->cfg->space.shapes[i]].name);
        kw_sbuf_printf(&b, ",%016llx,", (unsigned long long)kw_knobs_cand_id(ks, &x.cand));
        kw_sbuf_csv(&b, x.tuned >= 0 ? "" : x.use_baseline ? "baseline" : rs->shapes[x.from].name);
        for (int k = 0; k < ks->n_knobs; k++) {
            kw_sbuf_puts(&b, ",");
            kw_sbuf_csv(&b, ks->knobs[k].values[x.cand.v[k]]);
        }
        const kw_shape *sh = &r->cfg->workload.shapes[r->cfg->space.shapes[i]];
        kw_sbuf_printf(&b, ",%s,%d,%d,%d,%d,", kw_phase_name(sh->phase), sh->batch,
                       sh->phase == KW_PHASE_PREFILL ? sh->seq : 0,
                       sh->phase == KW_PHASE_DECODE ? sh->kv_len : 0, sh->streams);
        /* a tuned shape's headline figures (kw_results_headline: the
         * re-check where results.xml has one), a borrowed or baseline row's
         * from recommend's own evaluation on the shape */
        const kw_metrics *fm = x.has_hl ? x.hl.m : &x.m;
        if (i95 >= 0)
            kw_sbuf_printf(&b, "%.3f", fm->v[i95]);
        kw_sbuf_puts(&b, ",");
        if (i99 >= 0)
            kw_sbuf_printf(&b, "%.3f", fm->v[i99]);
        kw_sbuf_puts(&b, ",");
        const char *flags = x.tuned >= 0 || x.use_baseline ? "" : x.borrow.flags;
        /* the shape the configuration was tuned on stopped before its search finished */
        int from = kw_rec_source(&x);
        int stopped = from >= 0 && rs->shapes[from].stopped;
        const char *tok[5] = {flags, fails ? KW_MAPPINGS_FAILS_GUARDS : "",
                              stopped ? KW_MAPPINGS_SEARCH_STOPPED : "",
                              no_evidence ? KW_MAPPINGS_NO_EVIDENCE : "",
                              from >= 0 && notes && notes[from] ? KW_MAPPINGS_RANKING_UNRESOLVED : ""};
        for (int t = 0, first = 1; t < 5; t++) /* tokens: never quoted */
            if (tok[t][0]) {
                kw_sbuf_printf(&b, "%s%s", first ? "" : ";", tok[t]);
                first = 0;
            }
        /* a measured run measured only the shapes it tuned: the others'
         * figures are the model's (kw_recommend_one), and the file says so */
        kw_sbuf_printf(&b, ",%s", i95 < 0 && i99 < 0                ? ""
                                  : rs->info.measured && x.tuned >= 0 ? KW_MAPPINGS_MEASURED
                                                                      : KW_MAPPINGS_MODEL);
        kw_sbuf_printf(&b, ",%d,%s", r->cfg->space.n_shapes,
                       i95 < 0 && i99 < 0 ? ""
                       : x.has_hl         ? kw_results_basis_token(x.hl.basis)
                                          : KW_BASIS_EVALUATED);
        kw_mappings_watches(&b, rs, x.tuned);
        kw_sbuf_puts(&b, "\n");
    }
    if ((rc = kw_sbuf_status(&b)) != 0)
        goto done;
    if (n_failing == r->cfg->space.n_shapes) { /* a table of baselines that fail: nothing to deploy */
        rc = kw_error_set(KW_EINPUT, "no shape of the run has a configuration that passes the "
                          "guards: nothing to deploy, %s not written (knobwise report shows which "
                          "guards fail)", name);
        goto done;
    }
    if (!name[0]) { /* -o -: the table alone on standard output */
        if (fwrite(kw_sbuf_cstr(&b), 1, b.len, stdout) != b.len || fflush(stdout) != 0)
            rc = kw_error_set(KW_EIO, "writing standard output: %s", strerror(errno));
        goto done;
    }
    kw_outfile f = {name, kw_sbuf_cstr(&b), b.len};
    if ((rc = kw_results_commit(dir, &f, 1)) == 0)
        printf("wrote %s/%s (%d shapes)\n", dir, name, r->cfg->space.n_shapes);
done:
    kw_sbuf_free(&b);
    return rc;
}

int kw_cli_recommend(int argc, char **argv)
{
    static const struct option opts[] = {
        {"shape", required_argument, 0, 'S'},   {"batch", required_argument, 0, 'b'},
        {"seq", required_argument, 0, 'l'},     {"streams", required_argument, 0, 'c'},
        {"phase", required_argument, 0, 'p'},   {"all", no_argument, 0, 'A'},
        {"out", required_argument, 0, 'o'},     {"space", required_argument, 0, 's'},
        {"accel", required_argument, 0, 'a'},   {"workload", required_argument, 0, 'w'},
        {"help", no_argument, 0, 'h'},          {"force", no_argument, 0, 'f'},
        {0, 0, 0, 0}};
    const char *shape = NULL, *out_path = NULL;
    long batch = 0, seq = 0, streams = 0;
    int all = 0, phase = -1, force = 0, o;
    kw_rundir_opts ro = {.flags = KW_RUNDIR_CONFIG};
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (o) {
        case 'S': shape = optarg; break;
        case 'b':
            if (kw_cli_parse_long(&batch, "recommend", "--batch", optarg, 1, 1 << 20))
                return 2;
            break;
        case 'l':
            if (kw_cli_parse_long(&seq, "recommend", "--seq", optarg, 1, 1 << 24))
                return 2;
            break;
        case 'c':
            if (kw_cli_parse_long(&streams, "recommend", "--streams", optarg, 1, 1 << 16))
                return 2;
            break;
        case 'p':
            if (strcmp(optarg, "prefill") == 0)
                phase = KW_PHASE_PREFILL;
            else if (strcmp(optarg, "decode") == 0)
                phase = KW_PHASE_DECODE;
            else
                return kw_cli_usage_error("recommend", "--phase takes prefill or decode, not '%s'",
                                          optarg);
            break;
        case 'A': all = 1; break;
        case 'f': force = 1; break;
        case 'o': out_path = optarg; break;
        case 's': ro.space = optarg; break;
        case 'a': ro.accel = optarg; break;
        case 'w': ro.workload = optarg; break;
        case 'h': kw_recommend_help(); return 0;
        default: return kw_cli_usage_error("recommend", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return kw_cli_usage_error("recommend", "give exactly one run folder");
    int by_numbers = batch || seq || streams;
    if ((shape != NULL) + by_numbers + all != 1)
        return kw_cli_usage_error("recommend", "give one of --shape, --batch/--seq/--streams or --all");
    if (by_numbers && !(batch && seq && streams))
        return kw_cli_usage_error("recommend", "--batch, --seq and --streams go together");
    if (out_path && !all)
        return kw_cli_usage_error("recommend", "-o goes with --all");
    if (force && !out_path)
        return kw_cli_usage_error("recommend", "--force goes with -o");
    /* checked before the run is read: nothing is computed for a refused path */
    char odir[KW_PATH_MAX], oname[KW_PATH_MAX];
    int to_stdout = out_path && strcmp(out_path, KW_CLI_STDOUT) == 0;
    if (to_stdout && force)
        return kw_cli_usage_error("recommend", "--force replaces a file; -o - writes standard "
                                  "output");
    if (to_stdout) {
        odir[0] = oname[0] = '\0'; /* kw_write_mappings: standard output */
    } else if (out_path) {
        kw_runfolder_reads reads = {ro.space, ro.accel, ro.workload, {NULL, NULL}, {NULL, NULL}};
        static const kw_runfolder_verb who = {"recommend --all", KW_MAPPINGS_MARK,
                                              KW_RUNFOLDER_MAPPINGS_CSV};
        int orc = kw_runfolder_output(odir, sizeof odir, oname, sizeof oname, out_path,
                                      argv[optind], &reads, &who, force);
        if (orc != 0)
            return kw_cli_fail("recommend", orc);
    } else if (kw_runfolder_own_file(odir, sizeof odir, oname, sizeof oname, argv[optind],
                                     KW_RUNFOLDER_MAPPINGS_CSV) != 0) {
        return kw_cli_fail("recommend", KW_EINPUT);
    }

    kw_rundir *r = NULL;
    int rc = kw_run_open(&r, argv[optind], &ro);
    if (rc != 0)
        return kw_cli_fail("recommend", rc);
    int status = 0;
    /* results.xml read once (kw_results_read): its re-checks into the summary
     * (the headline figures, ceilings and criteria derived below are the
     * file's), the tuned shapes' unresolved rankings, and with --shape the
     * shape's claim */
    char **notes = NULL;
    kw_results_claim claim;
    memset(&claim, 0, sizeof claim);
    if (r->inputs_changed)
        fprintf(stderr, "knobwise recommend: warning: %s\n", r->inputs_msg);
    if (all) {
        kw_results_want w = {.load = r->rs, .notes = &notes};
        if ((rc = kw_results_read(&w, r->dir)) != 0) {
            status = kw_cli_fail("recommend", rc);
            goto done;
        }
        int no_ev = kw_rec_warn_stopped(r, -1);
        if ((rc = kw_write_mappings(r, odir, oname, no_ev, notes)) != 0)
            status = kw_cli_fail("recommend", rc);
        goto done;
    }
    int si;
    if (shape) {
        si = kw_load_config_shape(r->cfg, shape);
        if (si < 0) {
            char hint[1024];
            kw_hint_shape(hint, sizeof hint, r->cfg, shape);
            fprintf(stderr, "knobwise recommend: unknown shape '%s'%s\n", shape, hint);
            status = 2;
            goto done;
        }
    } else {
        kw_shape want;
        memset(&want, 0, sizeof want);
        want.batch = (int)batch;
        want.streams = (int)streams;
        want.seq = want.kv_len = (int)seq;
        if (phase < 0) {
            /* Numbers alone do not say the phase (--seq is the sequence length
             * for prefill, the KV length for decode): inferred only when every
             * tuned shape of the run has the same phase, else required. */
            int seen[2] = {0, 0};
            for (int i = 0; i < r->rs->n_shapes; i++) {
                int k = kw_load_config_shape(r->cfg, r->rs->shapes[i].name);
                if (k >= 0 && kw_runsum_winner(r->rs, i) >= 0)
                    seen[r->cfg->workload.shapes[r->cfg->space.shapes[k]].phase] = 1;
            }
            if (seen[0] && seen[1]) {
                status = kw_cli_usage_error("recommend", "--batch/--seq/--streams need --phase "
                                            "prefill|decode: this run tuned both phases, and --seq "
                                            "is the sequence length for prefill but the KV length "
                                            "for decode");
                goto done;
            }
            phase = seen[KW_PHASE_DECODE] ? KW_PHASE_DECODE : KW_PHASE_PREFILL;
            printf("phase %s (inferred: every tuned shape of the run is %s; give --phase to "
                   "choose)\n", kw_phase_name((kw_phase)phase), kw_phase_name((kw_phase)phase));
        }
        want.phase = (kw_phase)phase;
        int near = kw_nearest(r, &want);
        if (near < 0) {
            status = kw_cli_fail("recommend", kw_error_set(KW_EINPUT, "the run has no tuned shape to borrow from"));
            goto done;
        }
        const kw_shape *t = &r->cfg->workload.shapes[
            r->cfg->space.shapes[kw_load_config_shape(r->cfg, r->rs->shapes[near].name)]];
        si = -1;
        for (int i = 0; i < r->cfg->space.n_shapes; i++) {
            const kw_shape *c = &r->cfg->workload.shapes[r->cfg->space.shapes[i]];
            if (c->block == t->block && c->phase == want.phase && c->batch == batch &&
                kw_len_of(c) == seq && c->streams == streams)
                si = i;
        }
        if (si < 0) {
            kw_workload *w = &r->cfg->workload;
            kw_space *sp = &r->cfg->space;
            if (w->n_shapes >= KW_SHAPE_MAX || sp->n_shapes >= KW_SHAPE_MAX) {
                status = kw_cli_fail("recommend", kw_error_set(KW_EINPUT, "too many shapes"));
                goto done;
            }
            kw_shape ns = *t;
            ns.phase = want.phase;
            snprintf(ns.name, sizeof ns.name, "%s_b%ld_%s%ld_c%ld", kw_phase_name(ns.phase), batch,
                     ns.phase == KW_PHASE_PREFILL ? "s" : "kv", seq, streams);
            ns.batch = (int)batch;
            ns.streams = (int)streams;
            ns.seq = ns.phase == KW_PHASE_PREFILL ? (int)seq : 0;
            ns.kv_len = ns.phase == KW_PHASE_DECODE ? (int)seq : 0;
            ns.line = 0;
            w->shapes[w->n_shapes] = ns;
            sp->shapes[sp->n_shapes++] = w->n_shapes++;
            si = sp->n_shapes - 1;
            printf("shape %s made from %s (same block, arrivals and load; %s, batch %ld, %s %ld, "
                   "%ld streams)\n", ns.name, t->name, kw_phase_name(ns.phase), batch,
                   ns.phase == KW_PHASE_PREFILL ? "sequence" : "KV length", seq, streams);
        }
    }
    kw_results_want w = {.load = r->rs, .notes = &notes,
                         .claim_shape = r->cfg->workload.shapes[r->cfg->space.shapes[si]].name,
                         .claim = &claim};
    if ((rc = kw_results_read(&w, r->dir)) != 0) {
        status = kw_cli_fail("recommend", rc);
        goto done;
    }
    kw_rec x;
    if ((rc = kw_recommend_one(&x, r, si, 0)) != 0) {
        /* a shape made from the numbers is in no file: its messages name the
         * options, not "WORKLOAD:0:" (the line a made shape does not have) */
        const kw_shape *made = &r->cfg->workload.shapes[r->cfg->space.shapes[si]];
        char pre[KW_PATH_MAX + 16];
        snprintf(pre, sizeof pre, "%s:0: ", r->cfg->space.workload_path);
        if (made->line == 0 && strncmp(kw_error_last(), pre, strlen(pre)) == 0) {
            char msg[KW_ERROR_MAX];
            snprintf(msg, sizeof msg, "%s", kw_error_last() + strlen(pre));
            kw_error_set(rc, "--batch %ld --seq %ld --streams %ld: %s", batch, seq, streams, msg);
        }
        status = kw_cli_fail("recommend", rc);
        goto done;
    }
    kw_rec_warn_stopped(r, x.use_baseline ? -2 : x.tuned >= 0 ? x.tuned : x.from);
    kw_print_rec(r, &x, notes, x.tuned >= 0 ? &claim : NULL);
done:
    kw_results_claim_free(&claim);
    if (r)
        kw_results_ranking_free(notes, r->rs->n_shapes);
    kw_rundir_free(r);
    return status;
}
