/* kw_results.c - the results writers: results.xml (libxml2's text writer,
 * valid against results/results.xsd), ranked.csv, audit.csv, portability.csv,
 * and the atomic commit that puts them on disk.
 *
 * Design choices:
 * - Memory does not grow with the run (a summary of every configuration
 *   of a run of 1,000,000 evaluations peaked at 2.2 GB while the search used
 *   29 MB). The journal is streamed (kw_journal_scan, never loaded: 395 MB
 *   of records at 1,000,000 evaluations) into a partial summary holding only
 *   what the files list (kw_runsum_build_listed, the one builder of a summary; each
 *   shape's statistics, best and path from the one journal reducer,
 *   search/kw_reduce.h);
 *   each file is streamed into its temp file in chunks (results.xml element
 *   by element through xmlTextWriter on an output buffer of ours, never a
 *   document tree or the whole text), and results.xml lists at most
 *   KW_RESULTS_TOP ranked and KW_RESULTS_REJECTED_TOP rejected
 *   configurations per shape (the journal keeps every evaluation).
 * - Each file goes to a temp file in the same folder (streamed, fflush,
 *   fsync) and, only when every temp file is durable, all are renamed into
 *   place and the folder is fsynced. A failure before the renames removes the
 *   temp files and leaves the folder as it was (a full disk leaves the last
 *   good files, never a half-written set).
 * - Numbers are written with fixed decimals per metric (kw_metric_decimals),
 *   never %g, and no timestamps: the same run gives byte-identical files.
 * - The rollback boundary is derived here from the evidence: ceilings are the
 *   measured percentile plus the larger of its interval and the run's minimum
 *   effect, capped at the baseline (worse than the baseline means roll back);
 *   measured at the final re-check where the evidence made one (its larger
 *   sample), else in the search.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/xmlreader.h>
#include <libxml/xmlstring.h>
#include <libxml/xmlwriter.h>

#include "config.h"
#include "kw_audit.h"
#include "kw_journal.h"
#include "kw_netpath.h"
#include "kw_reduce.h"
#include "kw_results.h"
#include "kw_runfolder.h"
#include "kw_run.h"
#include "kw_simci.h"
#include "kw_tmpfile.h"
#include "kw_xml.h"

/* ---------------------------------------------------------------- helpers */

static const kw_rs_config *kw_cfg(const kw_runsum *rs, int shape, int c)
{
    return &rs->shapes[shape].configs[c];
}

static double kw_val(const kw_runsum *rs, const kw_metrics *m, const char *name)
{
    return kw_runsum_value(rs, m, name);
}

/* The names of the primary percentile's interval ends: p99's for a run
 * ranked on p99_us (--metric p99), else p95's (the simulation's two). */
static void kw_primary_ci(const kw_runsum *rs, const char **lo, const char **hi)
{
    int p99 = strcmp(rs->metric_names[rs->primary], KW_METRIC_NAME(KW_M_P99_US)) == 0;
    *lo = p99 ? KW_METRIC_NAME(KW_M_P99_CI_LO_US) : KW_METRIC_NAME(KW_M_P_CI_LO_US);
    *hi = p99 ? KW_METRIC_NAME(KW_M_P99_CI_HI_US) : KW_METRIC_NAME(KW_M_P_CI_HI_US);
}

static double kw_pct(double after, double before)
{
    if (!isfinite(after) || !isfinite(before) || before == 0.0)
        return NAN;
    return (after - before) / before * 100.0;
}

static void kw_hex(char out[17], uint64_t id)
{
    snprintf(out, 17, "%016llx", (unsigned long long)id);
}

/* "k=v;k=v" of the knobs in config that differ from the shape's baseline. */
static void kw_results_changed(kw_sbuf *b, const kw_runsum *rs, int shape, int config,
                               const char *sep)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    kw_cand base;
    if (s->baseline >= 0)
        base = s->configs[s->baseline].cand;
    else
        kw_knobs_cand_baseline(&base, &rs->ks);
    const kw_cand *c = &s->configs[config].cand;
    int first = 1;
    for (int k = 0; k < rs->ks.n_knobs; k++) {
        if (c->v[k] == base.v[k])
            continue;
        const kw_knob *kb = &rs->ks.knobs[k];
        kw_sbuf_printf(b, "%s%s=%s", first ? "" : sep, kb->name,
                       c->v[k] < kb->n_values ? kb->values[c->v[k]] : "?");
        first = 0;
    }
}

/* Order of rows in audit.csv: (shape, step index) pairs sorted by step seq.
 * *out is malloc'ed, 2 ints per step; returns the number of steps or a negative code. */
static int kw_results_step_order(int **out, const kw_runsum *rs)
{
    long n = 0;
    for (int i = 0; i < rs->n_shapes; i++)
        n += rs->shapes[i].n_steps;
    int *o = malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof *o);
    if (!o)
        return kw_error_set(KW_ENOMEM, "out of memory ordering steps");
    /* k-way merge: each shape's steps are already in journal order */
    int *pos = calloc((size_t)(rs->n_shapes > 0 ? rs->n_shapes : 1), sizeof *pos);
    if (!pos) {
        free(o);
        return kw_error_set(KW_ENOMEM, "out of memory ordering steps");
    }
    for (long k = 0; k < n; k++) {
        int best = -1;
        for (int i = 0; i < rs->n_shapes; i++)
            if (pos[i] < rs->shapes[i].n_steps &&
                (best < 0 ||
                 rs->shapes[i].steps[pos[i]].seq < rs->shapes[best].steps[pos[best]].seq))
                best = i;
        o[2 * k] = best;
        o[2 * k + 1] = pos[best]++;
    }
    free(pos);
    *out = o;
    return (int)n;
}

/* ---------------------------------------------------------------- headline */

void kw_results_headline(kw_headline *out, const kw_runsum *rs, int shape, int config)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    const kw_rs_config *cc = kw_cfg(rs, shape, config);
    const kw_rs_config *bc = s->baseline >= 0 ? kw_cfg(rs, shape, s->baseline) : NULL;
    int rechecked = cc->recheck && (!bc || bc->recheck);
    out->basis = rechecked ? KW_BASIS_RECHECK : rs->info.measured ? KW_BASIS_MEASURED : KW_BASIS_SEARCH;
    out->m = rechecked ? cc->recheck : &cc->m;
    out->base = bc ? (rechecked ? bc->recheck : &bc->m) : NULL;
    double n = kw_val(rs, out->m, KW_METRIC_NAME(KW_M_SAMPLES));
    out->requests = isfinite(n) && n > 0 ? lround(n) : 0;
}

const char *kw_results_basis_token(kw_basis b)
{
    return b == KW_BASIS_RECHECK ? "recheck" : b == KW_BASIS_MEASURED ? "measured" : "search";
}

void kw_results_basis_words(char *buf, size_t n, const kw_headline *h)
{
    if (h->basis == KW_BASIS_MEASURED) {
        snprintf(buf, n, "the run's measurements (its journal)");
        return;
    }
    const char *what = h->basis == KW_BASIS_RECHECK ? "the re-check" : "the search's sample";
    if (h->requests > 0)
        snprintf(buf, n, "%s (%ld requests)", what, h->requests);
    else
        snprintf(buf, n, "%s", what);
}

/* ---------------------------------------------------------------- rollback */

int kw_results_llm(const kw_runsum *rs, const kw_metrics *m)
{
    return m && kw_val(rs, m, KW_METRIC_NAME(KW_M_TTFT_P99_US)) > 0;
}

void kw_results_llm_words(char *buf, size_t n, const kw_runsum *rs, const kw_metrics *m,
                          const kw_metrics *base)
{
    buf[0] = '\0';
    if (!kw_results_llm(rs, m))
        return;
    const int id[2] = {KW_M_TTFT_P99_US, KW_M_TPOT_P99_US};
    size_t len = 0;
    for (int i = 0; i < 2 && len < n; i++) {
        double v = kw_val(rs, m, KW_METRIC_NAME(id[i]));
        double b = base && kw_results_llm(rs, base) ? kw_val(rs, base, KW_METRIC_NAME(id[i])) : NAN;
        int w = isfinite(b) && b > 0
                    ? snprintf(buf + len, n - len, "%s%s p99 %.3f us (baseline %.3f us, %+.2f%%)",
                               i ? ", " : "", i ? "TPOT" : "TTFT", v, b, (v - b) / b * 100.0)
                    : snprintf(buf + len, n - len, "%s%s p99 %.3f us", i ? ", " : "",
                               i ? "TPOT" : "TTFT", v);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

/* Words of text (len bytes) into out, lines at most KW_RESULTS_NOTE_WIDTH
 * columns, the first after `first` columns already on the line, the others
 * indented by indent; a word longer than a line stands alone. */
static void kw_results_wrap(kw_sbuf *out, const char *text, size_t len, int first, int indent)
{
    int col = first, empty = 1; /* empty: no word on this line yet */
    size_t i = 0;
    while (i < len) {
        size_t w = 0;
        while (i + w < len && text[i + w] != ' ')
            w++;
        if (!empty && col + 1 + (int)w > KW_RESULTS_NOTE_WIDTH) {
            kw_sbuf_printf(out, "\n%*s", indent, "");
            col = indent;
            empty = 1;
        }
        if (!empty) {
            kw_sbuf_putn(out, " ", 1);
            col++;
        }
        kw_sbuf_putn(out, text + i, w);
        col += (int)w;
        empty = 0;
        i += w;
        while (i < len && text[i] == ' ')
            i++;
    }
    kw_sbuf_putn(out, "\n", 1);
}

void kw_results_note_block(kw_sbuf *out, const char *head, const char *note)
{
    /* the note's parts: split at ": " outside brackets and parentheses (the
     * paired note's "[95% interval: lo, hi]" stays whole) */
    const char *part[8];
    size_t plen[8];
    int n = 0, depth = 0;
    const char *start = note;
    for (const char *c = note; *c; c++) {
        depth += (*c == '(' || *c == '[') - (*c == ')' || *c == ']');
        if (depth == 0 && c[0] == ':' && c[1] == ' ' && n < 7) {
            part[n] = start;
            plen[n++] = (size_t)(c - start);
            start = c + 2;
        }
    }
    part[n] = start;
    plen[n++] = strlen(start);
    /* the rankings' own shape (kw_results_resolution, kw_results_paired_note):
     * verdict, figures, why, what to read; else the parts unlabelled */
    static const char *const label[4] = {NULL, "figures: ", "why:     ", "read:    "};
    int labelled = n == 4;
    kw_sbuf_printf(out, "%s: %.*s\n", head, (int)plen[0], part[0]);
    for (int i = 1; i < n; i++) {
        const char *lb = labelled ? label[i] : "";
        kw_sbuf_printf(out, "    %s", lb);
        int at = 4 + (int)strlen(lb);
        kw_results_wrap(out, part[i], plen[i], at, at);
    }
}

/* A rollback ceiling: figure v plus margin_pct, capped at the baseline's
 * figure base when v lies below it (the mapping must stay better than what
 * it replaces) and at sla when sla > 0; how it was derived into basis. */
static double kw_results_ceiling(char *basis, size_t n, double v, double base, double margin_pct,
                                 const char *measured, const char *why, double sla)
{
    char a[40], b[40];
    double c = v * (1.0 + margin_pct / 100.0);
    kw_sbuf_fmt_num(a, sizeof a, v, 3);
    kw_sbuf_fmt_num(b, sizeof b, margin_pct, 2);
    snprintf(basis, n, "%s %s us + %s%% (%s)", measured, a, b, why);
    if (isfinite(base) && v < base && c > base) {
        c = base;
        kw_sbuf_fmt_num(a, sizeof a, base, 3);
        snprintf(basis + strlen(basis), n - strlen(basis), ", capped at the baseline's %s us", a);
    }
    if (sla > 0 && c > sla) {
        c = sla;
        snprintf(basis + strlen(basis), n - strlen(basis), ", capped at the SLA");
    }
    return c;
}

/* Whether metric name is one only a continuous-batching shape's results
 * show (stop 48's TTFT/TPOT p99 intervals; the evaluator writes 0 on every
 * other shape, and those shapes' results.xml stays as before them). */
static int kw_results_cb_only(const char *name)
{
    static const int id[] = {KW_M_TTFT_P99_CI_LO_US, KW_M_TTFT_P99_CI_HI_US, KW_M_TPOT_P99_CI_LO_US,
                             KW_M_TPOT_P99_CI_HI_US};
    for (size_t i = 0; i < sizeof id / sizeof id[0]; i++)
        if (strcmp(name, KW_METRIC_NAME(id[i])) == 0)
            return 1;
    return 0;
}

/* The margin of a ceiling on figure v whose 95% interval's upper end is
 * model metric hi_id (continuous batching's TTFT/TPOT p99, stop 48): the
 * larger of the run's minimum effect and that upper end above v, in % of v,
 * into *margin; returns its reason for the basis. A journal from before
 * stop 48 names no such metric: the primary's margin and reason (prim,
 * prim_why), the rule its results.xml was written with, so verify of an
 * old run folder reads the same ceilings. */
static const char *kw_results_own_margin(double *margin, const kw_runsum *rs, const kw_metrics *m,
                                         double v, int hi_id, double prim, const char *prim_why)
{
    const char *hin = KW_METRIC_NAME(hi_id);
    if (kw_runsum_metric(rs, hin) < 0) {
        *margin = prim;
        return prim_why;
    }
    double hi = kw_val(rs, m, hin), n = kw_val(rs, m, KW_METRIC_NAME(KW_M_SAMPLES));
    double pct = (isfinite(hi) && isfinite(v) && v > 0 && hi > v) ? (hi - v) / v * 100.0 : 0.0;
    if (pct > rs->limits.min_effect_pct) {
        *margin = pct;
        /* too few requests for the interval's upper rank: its upper end is
         * the largest sample, no 95% bound (kw_simci_upper_held) */
        return isfinite(n) && n >= 1 && !kw_simci_upper_held((size_t)n, 0.99)
                   ? "upper end of its own 95% interval, the largest of too few requests to bound "
                     "a p99: a floor"
                   : "upper end of its own 95% interval";
    }
    *margin = rs->limits.min_effect_pct;
    return "the run's minimum effect";
}

int kw_results_rollback(kw_rollback *out, const kw_runsum *rs, int shape, int config)
{
    memset(out, 0, sizeof *out);
    const kw_rs_shape *s = &rs->shapes[shape];
    out->baseline = s->baseline;
    out->parent = s->baseline;
    int lin[1024];
    int n = kw_runsum_lineage(rs, shape, config, lin, 1024);
    if (n > 0 && s->steps[lin[n - 1]].before >= 0)
        out->parent = s->steps[lin[n - 1]].before;
    if (out->parent < 0)
        out->parent = config;

    /* The final re-check's figures where the evidence made one (a larger
     * sample than the search's: on a bursty shape the search's tail can lie
     * far below it, and ceilings from it would be broken by the run's own
     * evidence), else the search's. The baseline's from the same source, so
     * the cap and the claim compare like with like. */
    kw_headline h;
    kw_results_headline(&h, rs, shape, config);
    int rechecked = h.basis == KW_BASIS_RECHECK;
    const kw_metrics *m = h.m, *bm = h.base;
    const char *measured = rechecked ? "re-checked" : "measured";
    double p95 = kw_val(rs, m, KW_METRIC_NAME(KW_M_P95_US)), p99 = kw_val(rs, m, KW_METRIC_NAME(KW_M_P99_US));
    double b95 = bm ? kw_val(rs, bm, KW_METRIC_NAME(KW_M_P95_US)) : NAN, b99 = bm ? kw_val(rs, bm, KW_METRIC_NAME(KW_M_P99_US)) : NAN;
    double prim = m->v[rs->primary];
    const char *lon, *hin; /* the primary's own interval (p99's under --metric p99) */
    kw_primary_ci(rs, &lon, &hin);
    double hi = kw_val(rs, m, hin);
    double ci_pct = (isfinite(hi) && hi > prim && prim > 0) ? (hi - prim) / prim * 100.0 : 0.0;
    const char *why;
    if (ci_pct > rs->limits.min_effect_pct) {
        out->margin_pct = ci_pct;
        why = "upper end of the primary interval";
    } else {
        out->margin_pct = rs->limits.min_effect_pct;
        why = "the run's minimum effect";
    }
    out->p95_ceiling_us = kw_results_ceiling(out->p95_basis, sizeof out->p95_basis, p95, b95,
                                             out->margin_pct, measured, why, 0);
    out->p99_ceiling_us = kw_results_ceiling(out->p99_basis, sizeof out->p99_basis, p99, b99,
                                             out->margin_pct, measured, why,
                                             rs->limits.sla_p99_us);
    /* continuous batching: TTFT and TPOT p99 beside the request latency,
     * from the same source, each with its own margin (stop 48; until then
     * the primary's, which a larger re-check broke: a p99 of 200 requests
     * is about the 2nd largest) */
    out->ttft_ceiling_us = out->tpot_ceiling_us = NAN;
    if (kw_results_llm(rs, m)) {
        const char *tn = KW_METRIC_NAME(KW_M_TTFT_P99_US), *pn = KW_METRIC_NAME(KW_M_TPOT_P99_US);
        double tv = kw_val(rs, m, tn), pv = kw_val(rs, m, pn), tm, pm;
        const char *twhy = kw_results_own_margin(&tm, rs, m, tv, KW_M_TTFT_P99_CI_HI_US, out->margin_pct, why);
        const char *pwhy = kw_results_own_margin(&pm, rs, m, pv, KW_M_TPOT_P99_CI_HI_US, out->margin_pct, why);
        out->ttft_ceiling_us = kw_results_ceiling(out->ttft_basis, sizeof out->ttft_basis, tv,
                                                  bm ? kw_val(rs, bm, tn) : NAN, tm, measured, twhy,
                                                  rs->limits.sla_ttft_p99_us);
        out->tpot_ceiling_us = kw_results_ceiling(out->tpot_basis, sizeof out->tpot_basis, pv,
                                                  bm ? kw_val(rs, bm, pn) : NAN, pm, measured, pwhy,
                                                  rs->limits.sla_tpot_p99_us);
    }

    double samples = kw_val(rs, m, KW_METRIC_NAME(KW_M_SAMPLES));
    if (rechecked && isfinite(samples) && samples > 0)
        out->requests = lround(samples);
    else if (rs->limits.final_requests > 0)
        out->requests = rs->limits.final_requests;
    else if (isfinite(samples) && samples > 0)
        out->requests = lround(samples);
    out->claimed_pct = bm ? kw_pct(prim, bm->v[rs->primary]) : NAN;
    out->baseline_us = bm ? bm->v[rs->primary] : NAN;

    if (rs->port && kw_runsum_winner(rs, shape) == config) {
        int pi = rs->primary;
        for (int j = 0; j < rs->n_shapes && out->n_worse < 64; j++) {
            const kw_rs_shape *sj = &rs->shapes[j];
            int ok = rs->port_ok[shape * rs->n_shapes + j];
            const kw_metrics *pm = &rs->port[shape * rs->n_shapes + j];
            if (!ok && strcmp(pm->guards, KW_RESULTS_PORT_UNMEASURED) == 0 && out->n_unmeasured < 64)
                out->unmeasured[out->n_unmeasured++] = j;
            if (j == shape || sj->baseline < 0 || !ok)
                continue;
            if (pm->v[pi] > sj->configs[sj->baseline].m.v[pi] || pm->guards[0] != '\0')
                out->worse[out->n_worse++] = j;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- listing */

static int kw_results_ranked_listed(const kw_rs_shape *s)
{
    int n = s->ranked_total < KW_RESULTS_TOP ? (int)s->ranked_total : KW_RESULTS_TOP;
    return n < s->n_ranked ? n : s->n_ranked; /* a partial summary holds at least these */
}

/* The order that picks which rejected configurations results.xml lists when
 * there are more than KW_RESULTS_REJECTED_TOP (kw_runsum_reject_order, which
 * the streamed builder picks its top with). */
typedef struct kw_rkey {
    int has;  /* measured: repetitions and a finite primary */
    double v; /* the primary */
    uint64_t id;
    int c;    /* config index (first-evaluated order) */
} kw_rkey;

static int kw_rkey_cmp(const void *pa, const void *pb)
{
    const kw_rkey *a = pa, *b = pb;
    return kw_runsum_reject_order(a->has, a->v, a->id, b->has, b->v, b->id);
}

static int kw_int_cmp(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    return (a > b) - (a < b);
}

static kw_rkey kw_rkey_of(const kw_runsum *rs, const kw_rs_config *cf, int c)
{
    kw_rkey k = {0, 0.0, cf->id, c};
    double v = cf->m.v[rs->primary];
    if (cf->reps > 0 && isfinite(v)) {
        k.has = 1;
        k.v = v;
    }
    return k;
}

/* The rejected configurations results.xml lists for shape (config indices,
 * first-evaluated order, at most KW_RESULTS_REJECTED_TOP): *out malloc'ed. */
static int kw_results_rejected_listed(int **out, int *n, const kw_runsum *rs, int shape)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    int all = s->n_rejected, want = all < KW_RESULTS_REJECTED_TOP ? all : KW_RESULTS_REJECTED_TOP;
    *out = NULL;
    *n = 0;
    int *o = malloc((size_t)(want > 0 ? want : 1) * sizeof *o);
    if (!o)
        return kw_error_set(KW_ENOMEM, "out of memory listing rejected configurations");
    if (want == all) {
        memcpy(o, s->rejected, (size_t)all * sizeof *o);
    } else {
        kw_rkey *k = malloc((size_t)all * sizeof *k);
        if (!k) {
            free(o);
            return kw_error_set(KW_ENOMEM, "out of memory listing rejected configurations");
        }
        for (int r = 0; r < all; r++)
            k[r] = kw_rkey_of(rs, &s->configs[s->rejected[r]], s->rejected[r]);
        qsort(k, (size_t)all, sizeof *k, kw_rkey_cmp);
        for (int r = 0; r < want; r++)
            o[r] = k[r].c;
        free(k);
        qsort(o, (size_t)want, sizeof *o, kw_int_cmp); /* back to first-evaluated order */
    }
    *out = o;
    *n = want;
    return 0;
}

/* ---------------------------------------------------------------- output */

/* Where a renderer's bytes go: appended to b; with fp set, b is drained into
 * fp every KW_ROUT_CHUNK bytes, so a file of any size needs one chunk of
 * memory (resident memory stays flat however many rows a file has). Without fp, b is the file. */
#define KW_ROUT_CHUNK (256u << 10)

typedef struct kw_rout {
    kw_sbuf *b;
    FILE *fp;
    int err; /* errno of the first failed write, 0 */
    int oom; /* an append failed */
} kw_rout;

static void kw_rout_drain(kw_rout *o, int force)
{
    if (!o->fp)
        return;
    if (!force && o->b->len < KW_ROUT_CHUNK)
        return;
    if (kw_sbuf_status(o->b) != 0)
        o->oom = 1;
    if (!o->err && !o->oom && o->b->len > 0 &&
        fwrite(kw_sbuf_cstr(o->b), 1, o->b->len, o->fp) != o->b->len)
        o->err = errno ? errno : EIO;
    if (o->b->failed) {
        kw_sbuf_free(o->b);
        return;
    }
    o->b->len = 0; /* the buffer is kept for the next chunk */
    if (o->b->cap)
        o->b->data[0] = '\0';
}

/* The renderer's status once drained: 0, KW_ENOMEM, or KW_EIO (errno in o->err;
 * the caller names the file). */
static int kw_rout_status(kw_rout *o)
{
    kw_rout_drain(o, 1);
    if (o->err)
        return KW_EIO;
    if (o->oom)
        return kw_error_set(KW_ENOMEM, "out of memory writing the results");
    return kw_sbuf_status(o->b);
}

/* ---------------------------------------------------------------- XML */

/* libxml2's writer returns < 0 on failure; one flag collects them all. */
typedef struct kw_xw {
    xmlTextWriterPtr w;
    int bad;
} kw_xw;

static void kw_x_start(kw_xw *x, const char *el)
{
    if (xmlTextWriterStartElement(x->w, BAD_CAST el) < 0)
        x->bad = 1;
}

static void kw_x_end(kw_xw *x)
{
    if (xmlTextWriterEndElement(x->w) < 0)
        x->bad = 1;
}

/* Attribute text: bytes that are not UTF-8 (an --owner from a Latin-1 shell)
 * become '?' so the document stays well-formed. */
static void kw_x_clean(char *clean)
{
    if (!xmlCheckUTF8(BAD_CAST clean))
        for (char *p = clean; *p; p++)
            if ((unsigned char)*p >= 0x80)
                *p = '?';
    for (char *p = clean; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n')
            *p = ' ';
}

static void kw_x_attr(kw_xw *x, const char *name, const char *value)
{
    char clean[1024];
    snprintf(clean, sizeof clean, "%s", value);
    kw_x_clean(clean);
    if (xmlTextWriterWriteAttribute(x->w, BAD_CAST name, BAD_CAST clean) < 0)
        x->bad = 1;
}

static void kw_x_text_el(kw_xw *x, const char *el, const char *text)
{
    char clean[2048];
    snprintf(clean, sizeof clean, "%s", text);
    kw_x_clean(clean);
    if (xmlTextWriterWriteElement(x->w, BAD_CAST el, BAD_CAST clean) < 0)
        x->bad = 1;
}

static void kw_x_num(kw_xw *x, const char *name, double v, int decimals)
{
    char t[64];
    kw_sbuf_fmt_num(t, sizeof t, v, decimals);
    if (t[0])
        kw_x_attr(x, name, t);
}

static void kw_x_long(kw_xw *x, const char *name, long v)
{
    char t[32];
    snprintf(t, sizeof t, "%ld", v);
    kw_x_attr(x, name, t);
}

static void kw_x_id(kw_xw *x, const char *name, uint64_t id)
{
    char t[17];
    kw_hex(t, id);
    kw_x_attr(x, name, t);
}

static void kw_x_knobs(kw_xw *x, const kw_runsum *rs, const kw_cand *c)
{
    for (int k = 0; k < rs->ks.n_knobs; k++) {
        const kw_knob *kb = &rs->ks.knobs[k];
        kw_x_start(x, "knob");
        kw_x_attr(x, "name", kb->name);
        kw_x_attr(x, "value", c->v[k] < kb->n_values ? kb->values[c->v[k]] : "?");
        kw_x_end(x);
    }
}

static void kw_x_metrics(kw_xw *x, const kw_runsum *rs, const kw_rs_config *c)
{
    const kw_metrics *m = &c->m;
    kw_x_start(x, "metrics");
    kw_x_attr(x, "primary", rs->metric_names[rs->primary]);
    if (c->reps > 0) {
        kw_x_num(x, "value", m->v[rs->primary], kw_metric_decimals(rs->metric_names[rs->primary]));
        kw_x_num(x, KW_METRIC_NAME(KW_M_SAMPLES), kw_val(rs, m, KW_METRIC_NAME(KW_M_SAMPLES)), 0);
        /* the interval of the primary percentile: p95's, or p99's for --metric p99 */
        const char *lon, *hin;
        kw_primary_ci(rs, &lon, &hin);
        double lo = kw_val(rs, m, lon), hi = kw_val(rs, m, hin);
        if (hi > 0) {
            kw_x_num(x, "ci_lo_us", lo, 3);
            kw_x_num(x, "ci_hi_us", hi, 3);
        }
    }
    kw_x_long(x, "reps", c->reps);
    kw_x_attr(x, "guards", m->guards[0] ? m->guards : "pass");
    if (m->klass[0])
        kw_x_attr(x, "bottleneck", m->klass);
    if (c->reps > 0)
        for (int k = 0; k < rs->n_metrics; k++) {
            if (!isfinite(m->v[k]) || (kw_results_cb_only(rs->metric_names[k]) && !kw_results_llm(rs, m)))
                continue; /* stop 48's intervals: another shape's <metrics> as before */
            kw_x_start(x, "metric");
            kw_x_attr(x, "name", rs->metric_names[k]);
            kw_x_num(x, "value", m->v[k], kw_metric_decimals(rs->metric_names[k]));
            kw_x_end(x);
        }
    kw_x_end(x);
}

/* <recheck>: the final re-measurement beside the journal's figures. */
#define KW_RESULTS_RECHECK_UNMEASURED                                                          \
    "a measured run shows no figure measured outside its journal; the pairing (--pair) "       \
    "re-measures the recommendation beside its neighbours"

/* The figures a <recheck> shows, each with its metric's decimals. */
static const int kw_recheck_shown[] = {
    KW_M_SAMPLES,      KW_M_P50_US,      KW_M_P95_US,       KW_M_P99_US,        KW_M_P999_US,
    KW_M_P_CI_LO_US,   KW_M_P_CI_HI_US,  KW_M_P99_CI_LO_US, KW_M_P99_CI_HI_US,  KW_M_LONG_P99_US,
    KW_M_THROTTLE_PCT, KW_M_STEADY_TEMP_C, KW_M_CONTENTION_PCT,
    /* continuous batching only (stop 47): written where above 0, so the
     * other shapes' <recheck> is as before */
    KW_M_TTFT_P99_US, KW_M_TPOT_P99_US,
    /* continuous batching only, after guards (stop 48): their intervals,
     * the TTFT/TPOT ceilings' margins */
    KW_M_TTFT_P99_CI_LO_US, KW_M_TTFT_P99_CI_HI_US, KW_M_TPOT_P99_CI_LO_US, KW_M_TPOT_P99_CI_HI_US};
/* The first of kw_recheck_shown written after the guards attribute: the
 * last four (the intervals). */
#define KW_RECHECK_LATE (sizeof kw_recheck_shown / sizeof kw_recheck_shown[0] - 4)

/* Whether kw_recheck_shown[i] is a continuous-batching figure only. */
static int kw_recheck_llm_only(size_t i)
{
    return kw_recheck_shown[i] == KW_M_TTFT_P99_US || kw_recheck_shown[i] == KW_M_TPOT_P99_US ||
           i >= KW_RECHECK_LATE;
}

void kw_results_recheck_round(const kw_runsum *rs, kw_metrics *m)
{
    for (size_t i = 0; i < sizeof kw_recheck_shown / sizeof kw_recheck_shown[0]; i++) {
        const kw_metric_info *mi = &kw_metric_table[kw_recheck_shown[i]];
        int k = kw_runsum_metric(rs, mi->name);
        char t[64];
        if (k < 0 || !isfinite(m->v[k]))
            continue;
        kw_sbuf_fmt_num(t, sizeof t, m->v[k], mi->decimals);
        m->v[k] = strtod(t, NULL); /* what kw_results_read reads back */
    }
}

static void kw_x_recheck(kw_xw *x, const kw_runsum *rs, const kw_rs_config *c)
{
    if (c->recheck_unmeasured) { /* a measured run's (kw_evidence_recheck) */
        kw_x_start(x, "recheck");
        kw_x_attr(x, "not_measured", KW_RESULTS_RECHECK_UNMEASURED);
        kw_x_end(x);
        return;
    }
    if (!c->recheck)
        return;
    const kw_metrics *m = c->recheck;
    kw_x_start(x, "recheck");
    size_t n = sizeof kw_recheck_shown / sizeof kw_recheck_shown[0];
    for (size_t i = 0; i <= n; i++) {
        if (i == KW_RECHECK_LATE)
            kw_x_attr(x, "guards", m->guards[0] ? m->guards : "pass");
        if (i == n)
            break;
        const kw_metric_info *mi = &kw_metric_table[kw_recheck_shown[i]];
        double v = kw_val(rs, m, mi->name);
        if (isfinite(v) && (!kw_recheck_llm_only(i) || kw_results_llm(rs, m)))
            kw_x_num(x, mi->name, v, mi->decimals);
    }
    kw_x_end(x);
}

int kw_results_rival(const kw_runsum *rs, int shape, int *rank2, int *ties)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    *rank2 = 0;
    *ties = 0;
    if (s->n_ranked < 1 || !s->configs[s->ranked[0]].recheck)
        return -1;
    const char *pn = rs->metric_names[rs->primary];
    /* the re-checked configurations in rank order (the top ones and the
     * baseline, which may be ranked too), then the baseline if unranked */
    int c1 = s->ranked[0], c2 = -1, r2 = 0;
    double v1 = kw_val(rs, s->configs[c1].recheck, pn);
    for (int r = 1; r <= s->n_ranked && c2 < 0; r++) {
        int c = r < s->n_ranked ? s->ranked[r] : s->baseline;
        if (c < 0 || c == c1 || !s->configs[c].recheck || (r == s->n_ranked && r2 < 0))
            continue;
        if (kw_val(rs, s->configs[c].recheck, pn) == v1) {
            (*ties)++;
            if (c == s->baseline)
                r2 = -1; /* the baseline seen, ranked: not again */
            continue;
        }
        c2 = c;
        r2 = r < s->n_ranked ? r + 1 : 0;
    }
    *rank2 = c2 >= 0 ? r2 : 0;
    return c2;
}

double kw_results_primary_p(const kw_runsum *rs)
{
    const char *pn = rs->metric_names[rs->primary];
    return strcmp(pn, KW_METRIC_NAME(KW_M_P99_US)) == 0   ? 0.99
           : strcmp(pn, KW_METRIC_NAME(KW_M_P95_US)) == 0 ? 0.95
                                                          : 0.0;
}

int kw_results_paired_resolved(const kw_paired *v, double min_effect_pct)
{
    if (!isfinite(v->half) || !isfinite(v->a) || !(v->b > 0))
        return 0;
    return v->a - v->b + v->half < 0 && v->half / v->b * 100.0 <= min_effect_pct;
}

/* Who the rival is, in words. */
static void kw_results_who(char *who, size_t n, const kw_rs_shape *s, int c2, int rank2)
{
    if (c2 == s->baseline)
        snprintf(who, n, rank2 > 0 ? "the baseline (rank %d)" : "the baseline", rank2);
    else
        snprintf(who, n, "rank %d", rank2);
}

/* The paired verdict's note (kw_evidence_verdict's last comparison). */
static int kw_results_paired_note(char *note, size_t n, const kw_runsum *rs, int shape, const char *who,
                                  const char *tie, long final_n)
{
    const kw_paired *v = &rs->shapes[shape].verdict;
    if (kw_results_paired_resolved(v, rs->limits.min_effect_pct))
        return 1;
    double d = v->a - v->b, half_pct = v->half / v->b * 100.0;
    int p99 = kw_results_primary_p(rs) > 0.98;
    char a[5][40], h[40], e[40], more[160] = "", level[96];
    const double f[5] = {d, d - v->half, d + v->half, v->a, v->b};
    for (int i = 0; i < 5; i++)
        kw_sbuf_fmt_num(a[i], sizeof a[i], f[i], 1);
    kw_sbuf_fmt_num(h, sizeof h, half_pct, 1);
    kw_sbuf_fmt_num(e, sizeof e, rs->limits.min_effect_pct, 2);
    if (v->samples > final_n)
        snprintf(more, sizeof more,
                 ", raised from the final re-check's %ld by doubling, up to %ld and to the requests the "
                 "search simulated on this shape",
                 final_n, (long)KW_RESULTS_VERDICT_CAP);
    int looks = rs->shapes[shape].verdict_looks;
    /* the run's level (kw_simci_pair_half_looks): "95%" at alpha 0.05 */
    double pct = (1.0 - rs->limits.alpha) * 100.0;
    if (looks > 1)
        snprintf(level, sizeof level, "%.4g%% interval over the %d looks the sequence planned", pct,
                 looks);
    else
        snprintf(level, sizeof level, "%.4g%% interval", pct);
    int ahead = d + v->half < 0, behind = d - v->half > 0;
    const char *why = behind ? "the interval lies above 0: at this sample rank 1 is the slower"
                      : !ahead ? "the interval holds 0"
                               : "rank 1 is ahead, but the difference is uncertain by more than the "
                                 "effect the run must resolve";
    snprintf(note, n,
             "%s: paired on the same arrivals (%ld requests%s), rank 1 minus %s is %s us "
             "[%s: %s, %s] on %s (rank 1 %s us, the rival %s us)%s: %s (half-width %s%% of the "
             "rival's figure, the run's minimum effect %s%%): %s",
             ahead ? KW_RESULTS_NOTE_AHEAD : KW_RESULTS_NOTE_UNRESOLVED, v->samples, more, who,
             a[0], level, a[1], a[2], p99 ? "p99" : "p95", a[3], a[4], tie, why, h, e,
             ahead ? "read its gain with this margin"
                   : "the simulation cannot rank these apart at this sample; read them as equal");
    return 0;
}

/* Whether the final re-check resolves shape's ranking: rank 1 against its
 * rival (kw_results_rival), by the paired verdict when kw_evidence_verdict
 * made one (kw_results_paired_resolved), else on the primary percentile's
 * separate 95% intervals at the final sample (kw_simci.h: honest under
 * correlation): not resolved when the two intervals overlap, or when rank
 * 1's half-width exceeds the run's minimum effect (the sample cannot tell
 * an effect of that size). Returns 1 resolved, 0 not (why in note: figures
 * and what to do), -1 unknown (no re-check of rank 1, no rival with a
 * different figure, or a primary without an interval). */
static int kw_results_resolution(char *note, size_t n, const kw_runsum *rs, int shape)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    note[0] = '\0';
    int rank2, ties;
    int c2 = kw_results_rival(rs, shape, &rank2, &ties);
    double pp = kw_results_primary_p(rs);
    if (c2 < 0 || !(pp > 0))
        return -1;
    const char *pn = rs->metric_names[rs->primary];
    int p99 = pp > 0.98;
    int c1 = s->ranked[0];
    const kw_metrics *m1 = s->configs[c1].recheck;
    double v1 = kw_val(rs, m1, pn);
    char who[48];
    kw_results_who(who, sizeof who, s, c2, rank2);
    char tie[96] = "";
    if (ties > 0)
        snprintf(tie, sizeof tie, " (%d re-checked configuration%s ranked between ha%s rank 1's figure exactly)",
                 ties, ties > 1 ? "s" : "", ties > 1 ? "ve" : "s");
    double nreq = kw_val(rs, m1, KW_METRIC_NAME(KW_M_SAMPLES));
    if (s->verdict_rival == c2 && isfinite(s->verdict.half))
        return kw_results_paired_note(note, n, rs, shape, who, tie, (long)nreq);
    const char *lon, *hin;
    kw_primary_ci(rs, &lon, &hin);
    const kw_metrics *m2 = s->configs[c2].recheck;
    double lo1 = kw_val(rs, m1, lon), hi1 = kw_val(rs, m1, hin);
    double v2 = kw_val(rs, m2, pn), lo2 = kw_val(rs, m2, lon), hi2 = kw_val(rs, m2, hin);
    if (!isfinite(v1) || !isfinite(v2) || !(hi1 > 0) || !(hi2 > 0) || !(v1 > 0))
        return -1;
    int overlap = lo1 <= hi2 && lo2 <= hi1;
    double half_pct = (hi1 - lo1) / 2.0 / v1 * 100.0;
    int wide = half_pct > rs->limits.min_effect_pct;
    if (!overlap && !wide)
        return 1;
    char a[6][40], h[40], e[40];
    const double f[6] = {v1, lo1, hi1, v2, lo2, hi2};
    for (int i = 0; i < 6; i++)
        kw_sbuf_fmt_num(a[i], sizeof a[i], f[i], 1);
    kw_sbuf_fmt_num(h, sizeof h, half_pct, 1);
    kw_sbuf_fmt_num(e, sizeof e, rs->limits.min_effect_pct, 2);
    const char *why = overlap && wide ? "the intervals overlap, and rank 1's interval is wider than "
                                        "the effect the run must resolve"
                      : overlap         ? "the intervals overlap"
                                        : "rank 1's interval is wider than the effect the run must resolve";
    snprintf(note, n,
             "%s: at the final re-check (%.0f requests) rank 1 has %s %s us [95%% interval "
             "%s, %s], %s %s us [%s, %s]%s: %s (rank 1's half-width %s%%, the run's minimum effect %s%%): "
             "%s, or tune with a larger final_requests",
             !overlap && hi1 < lo2 ? KW_RESULTS_NOTE_AHEAD : KW_RESULTS_NOTE_UNRESOLVED, nreq,
             p99 ? "p99" : "p95", a[0], a[1], a[2], who, a[3], a[4], a[5], tie, why, h, e,
             overlap ? "the simulation cannot rank these apart at this sample; read them as equal"
                     : "rank 1 is ahead, but its figure is uncertain by more than that effect; read "
                       "its gain with this margin");
    return 0;
}

/* <change> elements for every knob of config differing from the baseline. */
static void kw_x_changes(kw_xw *x, const kw_runsum *rs, int shape, int config)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    kw_cand base;
    if (s->baseline >= 0)
        base = s->configs[s->baseline].cand;
    else
        kw_knobs_cand_baseline(&base, &rs->ks);
    const kw_cand *c = &s->configs[config].cand;
    int lin[1024];
    int n = kw_runsum_lineage(rs, shape, config, lin, 1024);
    for (int k = 0; k < rs->ks.n_knobs; k++) {
        if (c->v[k] == base.v[k])
            continue;
        const kw_knob *kb = &rs->ks.knobs[k];
        kw_x_start(x, "change");
        kw_x_attr(x, "knob", kb->name);
        kw_x_attr(x, "from", base.v[k] < kb->n_values ? kb->values[base.v[k]] : "?");
        kw_x_attr(x, "to", c->v[k] < kb->n_values ? kb->values[c->v[k]] : "?");
        int st = kw_runsum_knob_step(rs, shape, lin, n, k);
        if (st >= 0) {
            const kw_rs_step *sp = &s->steps[st];
            kw_x_long(x, "step", sp->num);
            kw_x_attr(x, "decision", kw_journal_decision_name(sp->decision));
            kw_x_num(x, "effect_pct", kw_runsum_step_effect(rs, shape, st, rs->primary), 3);
            if (isfinite(sp->p_value))
                kw_x_num(x, "p_value", sp->p_value, 6);
        }
        kw_x_end(x);
    }
}

static void kw_x_portability(kw_xw *x, const kw_runsum *rs, int shape)
{
    int n = rs->n_shapes, pi = rs->primary;
    kw_x_start(x, "portability");
    for (int j = 0; j < n; j++) {
        const kw_metrics *pm = &rs->port[shape * n + j];
        int ok = rs->port_ok[shape * n + j];
        const kw_rs_shape *sj = &rs->shapes[j];
        double best = rs->port_ok[j * n + j] ? kw_val(rs, &rs->port[j * n + j], KW_METRIC_NAME(KW_M_P95_US)) : NAN;
        double base = sj->baseline >= 0 ? sj->configs[sj->baseline].m.v[pi] : NAN;
        kw_x_start(x, "on");
        kw_x_attr(x, "shape", sj->name);
        if (ok) {
            double p95 = kw_val(rs, pm, KW_METRIC_NAME(KW_M_P95_US));
            kw_x_num(x, KW_METRIC_NAME(KW_M_P95_US), p95, 3);
            kw_x_num(x, "primary", pm->v[pi], 3);
            kw_x_num(x, "vs_best_pct", kw_pct(p95, best), 3);
            kw_x_num(x, "vs_baseline_pct", kw_pct(pm->v[pi], base), 3);
        }
        kw_x_attr(x, "guards", pm->guards[0] ? pm->guards : (ok ? "pass" : "not evaluated"));
        int worse = ok && j != shape && (pm->v[pi] > base || pm->guards[0] != '\0');
        kw_x_attr(x, "worse_than_baseline", worse ? "true" : "false");
        kw_x_end(x);
    }
    kw_x_end(x);
}

static void kw_guard_list(char *buf, size_t len, const kw_runsum *rs)
{
    const kw_rs_limits *l = &rs->limits;
    char a[32], b[32], c[32], d[32], e[32];
    kw_sbuf_fmt_num(a, sizeof a, l->drift_min_cos, 6);
    kw_sbuf_fmt_num(b, sizeof b, l->drift_max_rel_rms, 6);
    kw_sbuf_fmt_num(c, sizeof c, l->max_throttle_pct, 3);
    kw_sbuf_fmt_num(d, sizeof d, l->max_fallback_pct, 3);
    kw_sbuf_fmt_num(e, sizeof e, l->sla_p99_us, 3);
    int n = snprintf(buf, len,
                     "any guard fails: quality_cos below %s, quality_rel_rms above %s, throttle_pct "
                     "above %s, fallback_pct above %s%s%s%s",
                     a, b, c, d, l->sla_p99_us > 0 ? ", p99 above the SLA of " : "",
                     l->sla_p99_us > 0 ? e : "", l->sla_p99_us > 0 ? " us" : "");
    /* the space's continuous-batching SLAs (guards sla_ttft, sla_tpot: the
     * search judged every candidate by them; before stop 47 not listed) */
    const double sla[2] = {l->sla_ttft_p99_us, l->sla_tpot_p99_us};
    const char *what[2] = {"TTFT p99", "TPOT p99"};
    for (int i = 0; i < 2 && n > 0 && (size_t)n < len; i++)
        if (sla[i] > 0) {
            kw_sbuf_fmt_num(e, sizeof e, sla[i], 3);
            n += snprintf(buf + n, len - (size_t)n, ", %s above the SLA of %s us", what[i], e);
        }
}

/* The criterion of a continuous-batching shape's TTFT/TPOT ceilings (the
 * rollback's ttft/tpot_p99_ceiling watches) into t; 0 when the shape is
 * not one (no ceilings). */
static int kw_results_llm_criterion(char *t, size_t n, const kw_rollback *rb, const char *shape)
{
    if (!isfinite(rb->ttft_ceiling_us) || !isfinite(rb->tpot_ceiling_us))
        return 0;
    char a[64], b[64];
    kw_sbuf_fmt_num(a, sizeof a, rb->ttft_ceiling_us, 3);
    kw_sbuf_fmt_num(b, sizeof b, rb->tpot_ceiling_us, 3);
    snprintf(t, n, "after rollout on shape %s, time to first token p99 above %s us or time per "
                   "output token p99 above %s us",
             shape, a, b);
    return 1;
}

/* One criterion into the list kw_results_disproof builds: its text and a NUL. */
static void kw_results_crit(kw_sbuf *out, const char *t)
{
    kw_sbuf_putn(out, t, strlen(t) + 1);
}

int kw_results_disproof(kw_sbuf *out, const kw_runsum *rs, int shape, int config)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    const kw_rs_limits *l = &rs->limits;
    kw_rollback rb;
    kw_results_rollback(&rb, rs, shape, config);
    const char *pname = rs->metric_names[rs->primary];
    char t[1024], a[64], b[64], c[64];
    int changed = s->baseline >= 0 ? kw_knobs_cand_distance(&rs->ks, &s->configs[s->baseline].cand,
                                                            &s->configs[config].cand)
                                   : 0;
    char req[64];
    if (rb.requests > 0)
        snprintf(req, sizeof req, "%ld requests", rb.requests);
    else
        snprintf(req, sizeof req, "the run's sample size");
    kw_sbuf_fmt_num(a, sizeof a, l->min_effect_pct, 2);
    kw_sbuf_fmt_num(b, sizeof b, isfinite(rb.claimed_pct) ? -rb.claimed_pct : NAN, 2);
    kw_sbuf_fmt_num(c, sizeof c, rb.baseline_us, 3);
    if (changed > 0)
        snprintf(t, sizeof t,
                 "re-measured on shape %s with %s, the %s improvement over the baseline (%s us) is "
                 "below %s%% (claimed %s%%)",
                 s->name, req, pname, c, a, b[0] ? b : "?");
    else
        snprintf(t, sizeof t,
                 "re-measured on shape %s with %s, some single-knob change improves %s over the "
                 "baseline (%s us) by at least %s%% with every guard passing (the run found none)",
                 s->name, req, pname, c, a);
    kw_results_crit(out, t);
    kw_sbuf_fmt_num(a, sizeof a, rb.p95_ceiling_us, 3);
    kw_sbuf_fmt_num(b, sizeof b, rb.p99_ceiling_us, 3);
    snprintf(t, sizeof t, "after rollout on shape %s, p95 above %s us or p99 above %s us", s->name,
             a, b);
    kw_results_crit(out, t);
    kw_guard_list(t, sizeof t, rs);
    kw_results_crit(out, t);
    if (changed > 1) {
        kw_sbuf kb = {0};
        kw_results_changed(&kb, rs, shape, config, ", ");
        kw_sbuf_fmt_num(a, sizeof a, l->min_effect_pct, 2);
        snprintf(t, sizeof t,
                 "reverting any one of its changes alone (%s) costs less than %s%% of %s: that "
                 "change does not earn its place",
                 kw_sbuf_cstr(&kb), a, pname);
        if (kb.failed) /* scratch text lost to out of memory: the file fails, never shrinks */
            out->failed = 1;
        kw_sbuf_free(&kb);
        kw_results_crit(out, t);
    }
    if (rs->port && kw_runsum_winner(rs, shape) == config) {
        for (int i = 0; i < rb.n_worse; i++) {
            int j = rb.worse[i];
            const kw_metrics *pm = &rs->port[shape * rs->n_shapes + j];
            const kw_rs_shape *sj = &rs->shapes[j];
            kw_sbuf_fmt_num(a, sizeof a,
                            kw_pct(pm->v[rs->primary], sj->configs[sj->baseline].m.v[rs->primary]),
                            2);
            if (pm->guards[0])
                snprintf(t, sizeof t,
                         "portability check already fails on shape %s (guards: %s): do not deploy "
                         "it there; use that shape's own recommendation",
                         sj->name, pm->guards);
            else
                snprintf(t, sizeof t,
                         "portability check already worse than baseline on shape %s (%s +%s%%): "
                         "do not deploy it there; use that shape's own recommendation",
                         sj->name, pname, a);
            kw_results_crit(out, t);
        }
        if (rs->n_shapes > 1)
            kw_results_crit(out, "deployed on any other shape, portability check worse than "
                                 "that shape's baseline");
    }
    /* last, as the output contract adds (stop 47): a serving engineer's p99s */
    if (kw_results_llm_criterion(t, sizeof t, &rb, s->name))
        kw_results_crit(out, t);
    return kw_sbuf_status(out);
}

int kw_results_watches(kw_results_watch w[KW_RESULTS_WATCH_MAX], const kw_rollback *rb,
                       const kw_runsum *rs)
{
    const kw_rs_limits *l = &rs->limits;
    const kw_results_watch all[KW_RESULTS_WATCH_MAX] = {
        {"p95_ceiling", KW_METRIC_NAME(KW_M_P95_US), rb->p95_ceiling_us, NAN, rb->p95_basis},
        {"p99_ceiling", KW_METRIC_NAME(KW_M_P99_US), rb->p99_ceiling_us, NAN, rb->p99_basis},
        {"drift", KW_METRIC_NAME(KW_M_QUALITY_COS), NAN, l->drift_min_cos, "the space's drift budget"},
        {"drift", KW_METRIC_NAME(KW_M_QUALITY_REL_RMS), l->drift_max_rel_rms, NAN, "the space's drift budget"},
        {"throttle", KW_METRIC_NAME(KW_M_THROTTLE_PCT), l->max_throttle_pct, NAN, "the space's throttle guard"},
        {"fallback", KW_METRIC_NAME(KW_M_FALLBACK_PCT), l->max_fallback_pct, NAN, "the space's fallback guard"},
        /* continuous batching (stop 47): after the others, as the output contract adds */
        {KW_RESULTS_TTFT_CEILING, KW_METRIC_NAME(KW_M_TTFT_P99_US), rb->ttft_ceiling_us, NAN, rb->ttft_basis},
        {KW_RESULTS_TPOT_CEILING, KW_METRIC_NAME(KW_M_TPOT_P99_US), rb->tpot_ceiling_us, NAN, rb->tpot_basis},
    };
    int n = 0;
    for (int i = 0; i < KW_RESULTS_WATCH_MAX; i++)
        if (i < KW_RESULTS_WATCH_ALWAYS || !isnan(all[i].max)) /* else not continuous batching */
            w[n++] = all[i];
    return n;
}

static void kw_x_rollback(kw_xw *x, const kw_runsum *rs, int shape, int config)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    kw_rollback rb;
    kw_results_rollback(&rb, rs, shape, config);
    kw_x_start(x, "rollback");
    /* Each target carries its knob values, so the roll-back configuration is
     * in the file even when it is not among the listed configs (libknobwise). */
    kw_x_start(x, "target");
    kw_x_attr(x, "kind", "parent");
    kw_x_id(x, "id", s->configs[rb.parent].id);
    kw_x_knobs(x, rs, &s->configs[rb.parent].cand);
    kw_x_end(x);
    if (s->baseline >= 0) {
        kw_x_start(x, "target");
        kw_x_attr(x, "kind", "baseline");
        kw_x_id(x, "id", s->configs[s->baseline].id);
        kw_x_knobs(x, rs, &s->configs[s->baseline].cand);
        kw_x_end(x);
    }
    kw_results_watch w[KW_RESULTS_WATCH_MAX];
    int nw = kw_results_watches(w, &rb, rs);
    for (int i = 0; i < nw; i++) {
        kw_x_start(x, "watch");
        kw_x_attr(x, "guard", w[i].guard);
        kw_x_attr(x, "metric", w[i].metric);
        kw_x_num(x, "max", w[i].max, kw_metric_decimals(w[i].metric));
        kw_x_num(x, "min", w[i].min, kw_metric_decimals(w[i].metric));
        kw_x_attr(x, "basis", w[i].basis);
        kw_x_end(x);
    }

    kw_x_start(x, "disproof");
    kw_x_long(x, "requests", rb.requests);
    kw_x_num(x, "min_improvement_pct", rs->limits.min_effect_pct, 3);
    kw_x_num(x, "claimed_improvement_pct", isfinite(rb.claimed_pct) ? -rb.claimed_pct : NAN, 3);
    kw_sbuf crit = {0};
    if (kw_results_disproof(&crit, rs, shape, config) != 0)
        x->bad = 1; /* out of memory: the file fails, never shrinks */
    for (size_t o = 0; !x->bad && o < crit.len; o += strlen(kw_sbuf_cstr(&crit) + o) + 1)
        kw_x_text_el(x, "criterion", kw_sbuf_cstr(&crit) + o);
    kw_sbuf_free(&crit);
    kw_x_end(x); /* disproof */
    kw_x_text_el(x, "owner", rs->info.owner[0] ? rs->info.owner : "unassigned");
    kw_x_end(x); /* rollback */
}

/* The net path, the exploration summary and the sensitivity of one shape
 * (kw_netpath.h: the same function audit, the report and verify call). */
static void kw_x_reproduce(kw_xw *x, const kw_runsum *rs, const kw_rs_shape *s, const kw_cand *c)
{
    kw_sbuf b = {0};
    kw_sbuf_puts(&b, "knobwise eval");
    if (rs->info.space_path[0]) { /* one shell word (kw_sbuf_shell) */
        kw_sbuf_puts(&b, " --space ");
        kw_sbuf_shell(&b, rs->info.space_path);
    }
    kw_sbuf_printf(&b, " --seed %llu --shape ", (unsigned long long)rs->info.seed);
    kw_sbuf_shell(&b, s->name);
    kw_sbuf words = {0};
    kw_audit_set_words(&words, &rs->ks, c);
    if (words.len)
        kw_sbuf_printf(&b, " %s", kw_sbuf_cstr(&words));
    if (words.failed || b.failed) /* a reproduce command missing words is a wrong one */
        x->bad = 1;
    kw_sbuf_free(&words);
    kw_x_attr(x, "reproduce", kw_sbuf_cstr(&b));
    kw_sbuf_free(&b);
}

static void kw_x_effect(kw_xw *x, const char *name, double pct, const kw_rs_config *after)
{
    if (!kw_guards_saturated(after->m.guards) && isfinite(pct))
        kw_x_num(x, name, pct, 3);
}

static void kw_x_netpath(kw_xw *x, const kw_runsum *rs, int shape)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    const kw_knobspace *ks = &rs->ks;
    if (s->baseline < 0 || s->final < 0)
        return;
    kw_netpath np;
    if (kw_netpath_build(&np, rs, shape) != 0) {
        x->bad = 1;
        return;
    }
    static const char *const kinds[] = {"none", "direct", "accepted", "shortest"};
    const kw_rs_config *B = &s->configs[s->baseline];
    kw_x_start(x, "net_path");
    kw_x_attr(x, "kind", kinds[np.kind]);
    kw_x_long(x, "steps", np.n);
    kw_x_id(x, "from", B->id);
    kw_x_id(x, "to", s->configs[s->final].id);
    for (int i = 0; i < np.n; i++) {
        const kw_net_step *st = &np.steps[i];
        const kw_rs_config *bf = &s->configs[st->before], *af = &s->configs[st->after];
        char moved[512];
        kw_x_start(x, "step");
        kw_x_long(x, "n", i + 1);
        kw_x_attr(x, "knob", ks->knobs[st->knob].name);
        kw_x_attr(x, "from", ks->knobs[st->knob].values[bf->cand.v[st->knob]]);
        kw_x_attr(x, "to", ks->knobs[st->knob].values[af->cand.v[st->knob]]);
        kw_x_id(x, "parent_id", bf->id);
        kw_x_id(x, "id", af->id);
        kw_x_num(x, "before", bf->m.v[rs->primary], 3);
        kw_x_num(x, "after", af->m.v[rs->primary], 3);
        kw_x_effect(x, "effect_pct", kw_netpath_effect(rs, shape, st, rs->primary), af);
        kw_x_effect(x, "cumulative_pct", kw_pct(af->m.v[rs->primary], B->m.v[rs->primary]), af);
        kw_x_attr(x, "saturated", kw_guards_saturated(af->m.guards) ? "true" : "false");
        kw_x_attr(x, "guards", af->m.guards[0] ? af->m.guards : "pass");
        kw_x_attr(x, "bottleneck_before", bf->m.klass[0] ? bf->m.klass : "-");
        kw_x_attr(x, "bottleneck_after", af->m.klass[0] ? af->m.klass : "-");
        kw_netpath_moved(moved, sizeof moved, rs, shape, st);
        kw_x_attr(x, "moved", moved);
        if (st->step >= 0)
            kw_x_long(x, "journal_step", s->steps[st->step].num);
        if (st->eval_step >= 0)
            kw_x_long(x, "evaluated_at_step", s->steps[st->eval_step].num);
        kw_x_reproduce(x, rs, s, &af->cand);
        kw_x_end(x);
    }
    kw_x_end(x);

    kw_explore_sum e;
    kw_netpath_explore_sum(&e, rs, shape, &np);
    char line[1024];
    kw_netpath_explore_line(line, sizeof line, rs, &e);
    kw_x_start(x, "exploration");
    kw_x_long(x, "evaluations", e.evaluations);
    kw_x_long(x, "configs", e.configs);
    kw_x_long(x, "steps", e.steps);
    kw_x_long(x, "accepted", e.accepts);
    kw_x_long(x, "explored", e.explores);
    kw_x_long(x, "reverted", e.reverts);
    kw_x_long(x, "rejected", e.rejects);
    kw_x_long(x, "constraint", e.constraints);
    kw_x_long(x, "probe_steps", e.probes);
    kw_x_long(x, "excursion_steps", e.excursions);
    if (e.best_step > 0)
        kw_x_long(x, "found_at_step", e.best_step);
    kw_x_attr(x, "summary", line);
    kw_x_end(x);
    kw_netpath_free(&np);

    kw_sens *sn = calloc((size_t)(ks->n_knobs > 0 ? ks->n_knobs : 1), sizeof *sn);
    if (!sn) {
        x->bad = 1;
        return;
    }
    if (kw_netpath_sensitivity(sn, rs, shape) == 0) {
        static const char *const states[] = {"edge", "missing", "constraint", "evaluated"};
        kw_x_start(x, "sensitivity");
        for (int k = 0; k < ks->n_knobs; k++) {
            kw_x_start(x, "knob");
            kw_x_attr(x, "name", ks->knobs[k].name);
            kw_x_attr(x, "shipped", ks->knobs[k].values[s->configs[s->final].cand.v[k]]);
            kw_x_attr(x, "no_effect", kw_netpath_sens_inert(&sn[k]) ? "true" : "false");
            for (int side = 0; side < 2; side++) {
                const kw_sens_side *o = &sn[k].side[side];
                kw_x_start(x, "neighbour");
                kw_x_attr(x, "dir", side ? "up" : "down");
                kw_x_attr(x, "state", states[o->state]);
                if (o->state != KW_SENS_EDGE)
                    kw_x_attr(x, "value", ks->knobs[k].values[o->value]);
                if (o->state == KW_SENS_EVALUATED) {
                    const kw_rs_config *c = &s->configs[o->config];
                    kw_x_id(x, "id", c->id);
                    kw_x_effect(x, "effect_pct", o->pct, c);
                    kw_x_attr(x, "saturated", kw_guards_saturated(c->m.guards) ? "true" : "false");
                    kw_x_attr(x, "guards", c->m.guards[0] ? c->m.guards : "pass");
                    kw_x_attr(x, "same", o->same ? "true" : "false");
                    if (o->pair && o->pair->n > 0) { /* effect_pct is the pair's */
                        if (isfinite(o->pair->lo_pct))
                            kw_x_num(x, "paired_lo_pct", o->pair->lo_pct, 3);
                        if (isfinite(o->pair->hi_pct))
                            kw_x_num(x, "paired_hi_pct", o->pair->hi_pct, 3);
                    }
                    kw_x_attr(x, "source", o->evidence ? "evidence" : "journal");
                } else if (o->state == KW_SENS_MISSING && o->pair && o->pair->n > 0) {
                    /* the search did not evaluate it, the pairing measured it
                     * beside the recommendation: its N record's figure */
                    kw_x_id(x, "id", o->pair->nb_id);
                    if (isfinite(o->pair->delta_pct))
                        kw_x_num(x, "effect_pct", o->pair->delta_pct, 3);
                    if (isfinite(o->pair->lo_pct))
                        kw_x_num(x, "paired_lo_pct", o->pair->lo_pct, 3);
                    if (isfinite(o->pair->hi_pct))
                        kw_x_num(x, "paired_hi_pct", o->pair->hi_pct, 3);
                    kw_x_attr(x, "source", "pair");
                } else if (o->state == KW_SENS_MISSING) {
                    char why[KW_GUARDS_LEN + 20];
                    if (kw_netpath_sens_unmeasured(why, sizeof why, rs, o))
                        kw_x_attr(x, "not_measured", why);
                }
                kw_x_end(x);
            }
            kw_x_end(x);
        }
        kw_x_end(x);
    }
    free(sn);
}

/* Knobs that changed nothing on any shape where their neighbours were
 * evaluated: a reader may leave them at any value, and a search need not
 * spend evaluations on them. */
static void kw_x_knob_effects(kw_xw *x, const kw_runsum *rs)
{
    const kw_knobspace *ks = &rs->ks;
    int seen[KW_KNOB_MAX], inert[KW_KNOB_MAX];
    if (kw_netpath_knob_effects(seen, inert, rs) != 0) {
        x->bad = 1;
        return;
    }
    kw_x_start(x, "knob_effects");
    for (int k = 0; k < ks->n_knobs; k++) {
        kw_x_start(x, "knob");
        kw_x_attr(x, "name", ks->knobs[k].name);
        kw_x_long(x, "shapes_measured", seen[k]);
        kw_x_long(x, "shapes_no_effect", inert[k]);
        kw_x_attr(x, "no_effect_anywhere", seen[k] > 0 && inert[k] == seen[k] ? "true" : "false");
        kw_x_end(x);
    }
    kw_x_end(x);
}

static void kw_x_shape(kw_xw *x, const kw_runsum *rs, int shape)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    int listed = kw_results_ranked_listed(s);
    kw_x_start(x, "shape");
    kw_x_attr(x, "name", s->name);
    kw_x_long(x, "evaluations", s->evals_total);
    kw_x_long(x, "configs", s->configs_total);
    kw_x_long(x, "steps", s->n_steps);
    kw_x_long(x, "accepted_path", s->n_path);
    kw_x_long(x, "ranked", s->ranked_total);
    kw_x_long(x, "ranked_listed", listed);
    kw_x_long(x, "rejected", s->rejected_total);
    if (s->has_dims) {
        kw_x_attr(x, "phase", s->phase_decode ? "decode" : "prefill");
        kw_x_long(x, "batch", s->batch);
        kw_x_long(x, s->phase_decode ? "kv_len" : "seq", s->len);
        kw_x_long(x, "streams", s->streams);
    }
    if (s->stopped)
        kw_x_attr(x, "search", KW_RESULTS_SEARCH_STOPPED);
    char note[1024];
    if (kw_results_resolution(note, sizeof note, rs, shape) == 0) {
        kw_x_attr(x, "ranking", KW_RESULTS_RANKING_UNRESOLVED);
        kw_x_attr(x, "ranking_note", note);
    }
    if (s->verdict_rival >= 0 && isfinite(s->verdict.half)) { /* the paired verdict's figures */
        kw_x_id(x, "ranking_rival", s->configs[s->verdict_rival].id);
        kw_x_num(x, "ranking_diff_us", s->verdict.a - s->verdict.b, 3);
        kw_x_num(x, "ranking_half_us", s->verdict.half, 3);
        kw_x_long(x, "ranking_requests", s->verdict.samples);
    }
    if (s->aliases_total > 0) /* since stop 47: of evaluations, the aliases */
        kw_x_long(x, "aliases", s->aliases_total);
    if (s->baseline >= 0) {
        kw_x_start(x, "baseline");
        kw_x_id(x, "id", s->configs[s->baseline].id);
        kw_x_knobs(x, rs, &s->configs[s->baseline].cand);
        kw_x_metrics(x, rs, &s->configs[s->baseline]);
        kw_x_recheck(x, rs, &s->configs[s->baseline]);
        kw_x_end(x);
    }
    double base = s->baseline >= 0 ? s->configs[s->baseline].m.v[rs->primary] : NAN;
    for (int r = 0; r < listed; r++) {
        int c = s->ranked[r];
        const kw_rs_config *cf = &s->configs[c];
        kw_x_start(x, "config");
        kw_x_long(x, "rank", r + 1);
        kw_x_id(x, "id", cf->id);
        kw_x_attr(x, "recommended", c == s->final ? "true" : "false");
        kw_x_long(x, "knobs_changed",
                  s->baseline >= 0 ? kw_knobs_cand_distance(&rs->ks, &s->configs[s->baseline].cand,
                                                            &cf->cand)
                                   : 0);
        kw_x_num(x, "vs_baseline_pct", kw_pct(cf->m.v[rs->primary], base), 3);
        if (r == 0 && rs->port) {
            kw_rollback rb;
            kw_results_rollback(&rb, rs, shape, c);
            /* a measured run's unmeasured cell proves neither */
            if (rb.n_worse > 0 || rb.n_unmeasured == 0)
                kw_x_attr(x, "portable", rb.n_worse == 0 ? "true" : "false");
            for (int w = 0; w < 2; w++) {
                int nl = w ? rb.n_unmeasured : rb.n_worse;
                const int *l = w ? rb.unmeasured : rb.worse;
                if (nl == 0)
                    continue;
                kw_sbuf wb = {0};
                for (int i = 0; i < nl; i++)
                    kw_sbuf_printf(&wb, "%s%s", i ? " " : "", rs->shapes[l[i]].name);
                if (wb.failed)
                    x->bad = 1;
                kw_x_attr(x, w ? "not_measured_on" : "worse_on", kw_sbuf_cstr(&wb));
                kw_sbuf_free(&wb);
            }
        }
        kw_x_knobs(x, rs, &cf->cand);
        kw_x_metrics(x, rs, cf);
        kw_x_recheck(x, rs, cf);
        kw_x_start(x, "changes");
        kw_x_changes(x, rs, shape, c);
        kw_x_end(x);
        if (r == 0 && rs->port)
            kw_x_portability(x, rs, shape);
        kw_x_rollback(x, rs, shape, c);
        kw_x_end(x);
    }
    int n_rej = 0, *rej = NULL;
    if (kw_results_rejected_listed(&rej, &n_rej, rs, shape) != 0) {
        x->bad = 1;
        n_rej = 0;
    }
    for (int r = 0; r < n_rej; r++) {
        int c = rej[r];
        const kw_rs_config *cf = &s->configs[c];
        kw_x_start(x, "rejected");
        kw_x_id(x, "id", cf->id);
        kw_x_attr(x, "guards", cf->m.guards[0] ? cf->m.guards : "unknown");
        if (cf->reps > 0)
            kw_x_num(x, "primary", cf->m.v[rs->primary], 3);
        if (cf->step >= 0)
            kw_x_long(x, "step", s->steps[cf->step].num);
        kw_x_changes(x, rs, shape, c);
        kw_x_end(x);
    }
    free(rej);
    kw_x_netpath(x, rs, shape);
    kw_x_end(x);
}

/* libxml2's output buffer hands the writer's bytes here in chunks. */
static int kw_x_write_cb(void *ctx, const char *buf, int len)
{
    kw_rout *o = ctx;
    if (o->err)
        return -1;
    kw_sbuf_putn(o->b, buf, (size_t)len);
    kw_rout_drain(o, 0);
    return o->err ? -1 : len;
}

static int kw_x_close_cb(void *ctx)
{
    (void)ctx;
    return 0;
}

/* The <results evidence=...> state of rs (kw_results.h), NULL when complete. */
static const char *kw_results_evidence(const kw_runsum *rs)
{
    if (!rs->port)
        return KW_RESULTS_EVIDENCE_NONE;
    /* the re-check measures every evaluated baseline first (kw_evidence_recheck,
     * r = -1), or marks it not measured on a drifting device */
    for (int i = 0; i < rs->n_shapes; i++) {
        const kw_rs_shape *s = &rs->shapes[i];
        if (s->baseline >= 0 && (s->configs[s->baseline].recheck ||
                                 s->configs[s->baseline].recheck_unmeasured))
            return NULL;
    }
    for (int i = 0; i < rs->n_shapes; i++)
        if (rs->shapes[i].baseline >= 0)
            return KW_RESULTS_EVIDENCE_PORTABILITY;
    return NULL; /* nothing evaluated: nothing to re-check */
}

/* results.xml through libxml2's text writer, element by element into o (a
 * file or memory): the document never exists whole, as a tree or as text. */
static int kw_xml_render(kw_rout *o, const kw_runsum *rs)
{
    int rc = 0;
    /* a failing write callback makes libxml2 print "I/O error : write error"
     * itself; caught here, the failure is reported once by the commit, with
     * the file's name */
    kw_xml_catch quiet;
    kw_xml_catch_begin(&quiet);
    xmlOutputBufferPtr ob = xmlOutputBufferCreateIO(kw_x_write_cb, kw_x_close_cb, o, NULL);
    if (!ob) {
        kw_xml_catch_end(&quiet);
        return kw_error_set(KW_ENOMEM, "out of memory for results.xml");
    }
    kw_xw x = {xmlNewTextWriter(ob), 0}; /* owns ob from here on */
    if (!x.w) {
        xmlOutputBufferClose(ob);
        kw_xml_catch_end(&quiet);
        return kw_error_set(KW_ENOMEM, "out of memory for results.xml");
    }
    if (xmlTextWriterSetIndent(x.w, 1) < 0 || xmlTextWriterSetIndentString(x.w, BAD_CAST "  ") < 0 ||
        xmlTextWriterStartDocument(x.w, NULL, "UTF-8", NULL) < 0)
        x.bad = 1;
    kw_x_start(&x, "results");
    kw_x_long(&x, "format", KW_RESULTS_FORMAT);
    kw_x_attr(&x, "knobwise", rs->info.version[0] ? rs->info.version : PACKAGE_VERSION);
    kw_x_attr(&x, "run", rs->info.run_id);
    kw_x_attr(&x, "space", rs->info.space);
    kw_x_attr(&x, "strategy", rs->info.strategy[0] ? rs->info.strategy : "ofat");
    char t[32];
    snprintf(t, sizeof t, "%llu", (unsigned long long)rs->info.seed);
    kw_x_attr(&x, "seed", t);
    kw_x_long(&x, "budget", rs->info.budget > 0 ? rs->info.budget : 0);
    kw_x_attr(&x, "metric", rs->metric_names[rs->primary]);
    kw_x_attr(&x, "owner", rs->info.owner[0] ? rs->info.owner : "unassigned");
    const char *ev = kw_results_evidence(rs);
    if (ev)
        kw_x_attr(&x, "evidence", ev);

    kw_x_start(&x, "inputs");
    kw_x_attr(&x, "space", rs->info.input_hash[0]);
    kw_x_attr(&x, "accelerator", rs->info.input_hash[1]);
    kw_x_attr(&x, "workload", rs->info.input_hash[2]);
    if (rs->info.space_path[0])
        kw_x_attr(&x, "space_path", rs->info.space_path);
    kw_x_end(&x);

    const kw_rs_limits *l = &rs->limits;
    kw_x_start(&x, "limits");
    kw_x_num(&x, "min_effect_pct", l->min_effect_pct, 3);
    kw_x_num(&x, "alpha", l->alpha, 4);
    kw_x_num(&x, "drift_min_cos", l->drift_min_cos, 6);
    kw_x_num(&x, "drift_max_rel_rms", l->drift_max_rel_rms, 6);
    kw_x_num(&x, "max_throttle_pct", l->max_throttle_pct, 3);
    kw_x_num(&x, "max_fallback_pct", l->max_fallback_pct, 3);
    kw_x_num(&x, "sla_p99_us", l->sla_p99_us, 3);
    kw_x_long(&x, "final_requests", l->final_requests);
    /* stop 47, only where the space sets them (every other file as before) */
    if (l->sla_ttft_p99_us > 0)
        kw_x_num(&x, "sla_ttft_p99_us", l->sla_ttft_p99_us, 3);
    if (l->sla_tpot_p99_us > 0)
        kw_x_num(&x, "sla_tpot_p99_us", l->sla_tpot_p99_us, 3);
    kw_x_end(&x);

    for (int i = 0; i < rs->n_shapes; i++)
        kw_x_shape(&x, rs, i);
    kw_x_knob_effects(&x, rs);
    kw_x_end(&x);
    if (xmlTextWriterEndDocument(x.w) < 0 || xmlTextWriterFlush(x.w) < 0)
        x.bad = 1;
    xmlFreeTextWriter(x.w); /* flushes and closes ob */
    kw_xml_catch_end(&quiet);
    if ((rc = kw_rout_status(o)) != 0)
        return rc;
    if (x.bad)
        rc = kw_error_set(KW_ENOMEM, "libxml2 could not write results.xml%s%s",
                          quiet.n ? ": " : "", quiet.n ? quiet.first : "");
    return rc;
}


void kw_results_evidence_read(char *state, size_t size, const char *run_dir)
{
    char path[KW_PATH_MAX + 32];
    snprintf(state, size, "%s", KW_RESULTS_EVIDENCE_NO_FILE);
    if (snprintf(path, sizeof path, "%s/" KW_RUNFOLDER_RESULTS_XML, run_dir) >= (int)sizeof path)
        return;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return;
    }
    /* libxml2's streaming reader: only the bytes up to the root start tag
     * are read (the writer puts it first), never the whole file */
    kw_xml_catch quiet;
    kw_xml_catch_begin(&quiet);
    xmlTextReaderPtr rd = xmlReaderForFd(fd, path, NULL,
                                         XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    int ret = rd ? xmlTextReaderRead(rd) : -1;
    while (ret == 1 && xmlTextReaderNodeType(rd) != XML_READER_TYPE_ELEMENT)
        ret = xmlTextReaderRead(rd);
    if (ret == 1 && xmlStrEqual(xmlTextReaderConstLocalName(rd), BAD_CAST "results")) {
        state[0] = '\0';
        xmlChar *a = xmlTextReaderGetAttribute(rd, BAD_CAST "evidence");
        if (a)
            snprintf(state, size, "%s",
                     xmlStrEqual(a, BAD_CAST KW_RESULTS_EVIDENCE_NONE)
                         ? KW_RESULTS_EVIDENCE_NONE
                         : KW_RESULTS_EVIDENCE_PORTABILITY);
        xmlFree(a);
    }
    if (rd)
        xmlFreeTextReader(rd);
    kw_xml_catch_end(&quiet);
    close(fd);
}

/* A streaming reader over run_dir's own results.xml (never through a
 * symbolic link, a regular file only), libxml2's reports kept quiet (a
 * missing file reads as saying nothing; kw_results_read says a damaged one):
 * NULL when there is none. *fd and
 * *quiet are closed and ended by kw_results_reader_close. */
static xmlTextReaderPtr kw_results_reader_open(int *fd, kw_xml_catch *quiet, const char *run_dir)
{
    char path[KW_PATH_MAX + 32];
    *fd = -1;
    if (snprintf(path, sizeof path, "%s/" KW_RUNFOLDER_RESULTS_XML, run_dir) >= (int)sizeof path)
        return NULL;
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (*fd < 0)
        return NULL;
    struct stat st;
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(*fd);
        *fd = -1;
        return NULL;
    }
    kw_xml_catch_begin(quiet);
    xmlTextReaderPtr rd = xmlReaderForFd(*fd, path, NULL,
                                         XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!rd) {
        kw_xml_catch_end(quiet);
        close(*fd);
        *fd = -1;
    }
    return rd;
}

static void kw_results_reader_close(xmlTextReaderPtr rd, int fd, kw_xml_catch *quiet)
{
    if (!rd)
        return;
    xmlFreeTextReader(rd);
    kw_xml_catch_end(quiet);
    close(fd);
}

/* One <recheck>'s attributes, as the file spells them. */
static void kw_results_recheck_attrs(kw_results_recheck *out, xmlTextReaderPtr rd)
{
    static const struct {
        const char *name;
        size_t off;
    } a[] = {{"samples", offsetof(kw_results_recheck, samples)},
             {"p95_us", offsetof(kw_results_recheck, p95_us)},
             {"p99_us", offsetof(kw_results_recheck, p99_us)},
             {"p_ci_lo_us", offsetof(kw_results_recheck, p95_lo_us)},
             {"p_ci_hi_us", offsetof(kw_results_recheck, p95_hi_us)},
             {"p99_ci_lo_us", offsetof(kw_results_recheck, p99_lo_us)},
             {"p99_ci_hi_us", offsetof(kw_results_recheck, p99_hi_us)},
             {"long_p99_us", offsetof(kw_results_recheck, long_p99_us)},
             {"throttle_pct", offsetof(kw_results_recheck, throttle_pct)},
             {"guards", offsetof(kw_results_recheck, guards)},
             {"not_measured", offsetof(kw_results_recheck, not_measured)},
             {"ttft_p99_us", offsetof(kw_results_recheck, ttft_p99_us)},
             {"tpot_p99_us", offsetof(kw_results_recheck, tpot_p99_us)}};
    memset(out, 0, sizeof *out);
    out->present = 1;
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        xmlChar *v = xmlTextReaderGetAttribute(rd, BAD_CAST a[i].name);
        if (v)
            snprintf((char *)out + a[i].off, KW_RESULTS_RECHECK_TEXT, "%s", (const char *)v);
        xmlFree(v);
    }
}

/* A <recheck>'s figures into configuration c of rs: a not_measured one
 * marks it (recheck_unmeasured), else its figures as the file spells them;
 * a configuration that already has one is left as it is. */
static int kw_results_recheck_into(kw_rs_config *c, const kw_runsum *rs, xmlTextReaderPtr rd)
{
    xmlChar *nm = xmlTextReaderGetAttribute(rd, BAD_CAST "not_measured");
    int unmeasured = nm != NULL;
    xmlFree(nm);
    if (unmeasured && !c->recheck)
        c->recheck_unmeasured = 1;
    if (unmeasured || c->recheck)
        return 0;
    kw_metrics *m = malloc(sizeof *m);
    if (!m)
        return kw_error_set(KW_ENOMEM, "out of memory reading the re-checks");
    memset(m, 0, sizeof *m);
    for (int k = 0; k < KW_METRIC_MAX; k++)
        m->v[k] = NAN;
    for (size_t i = 0; i < sizeof kw_recheck_shown / sizeof kw_recheck_shown[0]; i++) {
        const char *mn = kw_metric_table[kw_recheck_shown[i]].name;
        int k = kw_runsum_metric(rs, mn);
        xmlChar *t = k >= 0 ? xmlTextReaderGetAttribute(rd, BAD_CAST mn) : NULL;
        char *end = NULL;
        double v = t ? strtod((const char *)t, &end) : NAN;
        if (t && end && *end == '\0')
            m->v[k] = v;
        xmlFree(t);
    }
    xmlChar *g = xmlTextReaderGetAttribute(rd, BAD_CAST "guards");
    if (g && !xmlStrEqual(g, BAD_CAST "pass"))
        snprintf(m->guards, sizeof m->guards, "%s", (const char *)g);
    xmlFree(g);
    c->recheck = m;
    return 0;
}

/* A <watch>'s max into the claim's ceiling of its guard (p95/p99_ceiling). */
static void kw_results_watch_into(kw_results_claim *out, xmlTextReaderPtr rd)
{
    xmlChar *g = xmlTextReaderGetAttribute(rd, BAD_CAST "guard");
    char *dst = !g ? NULL
                : xmlStrEqual(g, BAD_CAST "p95_ceiling") ? out->p95_ceiling
                : xmlStrEqual(g, BAD_CAST "p99_ceiling") ? out->p99_ceiling
                : xmlStrEqual(g, BAD_CAST KW_RESULTS_TTFT_CEILING) ? out->ttft_ceiling
                : xmlStrEqual(g, BAD_CAST KW_RESULTS_TPOT_CEILING) ? out->tpot_ceiling : NULL;
    xmlChar *max = dst ? xmlTextReaderGetAttribute(rd, BAD_CAST "max") : NULL;
    if (max)
        snprintf(dst, KW_RESULTS_RECHECK_TEXT, "%s", (const char *)max);
    xmlFree(max);
    xmlFree(g);
}

/* The id attribute of the reader's element as configuration index of shape
 * si in rs, -1 when it names none. */
static int kw_results_config_at(const kw_runsum *rs, int si, xmlTextReaderPtr rd)
{
    xmlChar *id = xmlTextReaderGetAttribute(rd, BAD_CAST "id");
    char *end = NULL;
    unsigned long long v = id ? strtoull((const char *)id, &end, 16) : 0;
    int ci = id && end && *end == '\0' && end - (const char *)id == 16
                 ? kw_runsum_find_config(rs, si, (uint64_t)v) : -1;
    xmlFree(id);
    return ci;
}

/* kw_results_read over reader rd (NULL: no file, nothing read); *last gets
 * the reader's last answer (-1: it stopped on damage). */
/* kw_results_read_rd's *last for a file that declares a DOCTYPE (libxml2's
 * reader returns 1, 0 or -1) */
#define KW_RESULTS_READ_DOCTYPE (-2)

static int kw_results_read_rd(const kw_results_want *w, xmlTextReaderPtr rd, int *last)
{
    const kw_runsum *rs = w->load ? w->load : w->names;
    char **notes = NULL;
    kw_results_claim *claim = w->claim_shape ? w->claim : NULL;
    if (claim)
        memset(claim, 0, sizeof *claim);
    if (w->notes) {
        *w->notes = NULL;
        if (rs && rs->n_shapes > 0 && !(notes = calloc((size_t)rs->n_shapes, sizeof *notes)))
            return kw_error_set(KW_ENOMEM, "out of memory reading the rankings");
        *w->notes = notes;
    }
    int rc = 0, si = -1, ci = -1;
    /* the claim's shape: ours 1 inside it; in 1 inside its baseline, 2
     * inside its recommended configuration, else 0 */
    int ours = 0, in = 0;
    int ret = rd ? xmlTextReaderRead(rd) : -1;
    while (ret == 1 && rc == 0) {
        int type = xmlTextReaderNodeType(rd);
        if (type == XML_READER_TYPE_DOCUMENT_TYPE) {
            /* no entity of it is ever read: the root comes after it (until
             * 2026-12-07 its internal entities were expanded into what
             * recommend, report and audit read, while verify and export
             * refused the file) */
            ret = KW_RESULTS_READ_DOCTYPE;
            break;
        }
        if (type != XML_READER_TYPE_ELEMENT) {
            ret = xmlTextReaderRead(rd);
            continue;
        }
        int depth = xmlTextReaderDepth(rd);
        const xmlChar *el = xmlTextReaderConstLocalName(rd);
        if (depth == 1) { /* a shape: read into only for what is asked of it */
            xmlChar *name = xmlStrEqual(el, BAD_CAST "shape")
                                ? xmlTextReaderGetAttribute(rd, BAD_CAST "name") : NULL;
            si = name && rs ? kw_runsum_find_shape(rs, (const char *)name) : -1;
            ours = name && claim && !claim->found && strcmp((const char *)name, w->claim_shape) == 0;
            xmlFree(name);
            ci = -1;
            in = 0;
            if (notes && si >= 0 && !notes[si]) {
                xmlChar *note = xmlTextReaderGetAttribute(rd, BAD_CAST "ranking_note");
                if (note && !(notes[si] = strdup((const char *)note)))
                    rc = kw_error_set(KW_ENOMEM, "out of memory reading the rankings");
                xmlFree(note);
            }
            if (ours) {
                claim->found = 1;
                xmlChar *rk = xmlTextReaderGetAttribute(rd, BAD_CAST "ranking");
                claim->unresolved = rk && xmlStrEqual(rk, BAD_CAST KW_RESULTS_RANKING_UNRESOLVED);
                xmlFree(rk);
            }
            if (!ours && !w->load && !notes && claim && claim->found)
                break; /* the claim alone was asked, and it is read */
            if (!ours && !(w->load && si >= 0)) {
                ret = xmlTextReaderNext(rd);
                continue;
            }
        } else if (depth == 2) { /* its baseline or a listed config */
            int cfg = xmlStrEqual(el, BAD_CAST "baseline") || xmlStrEqual(el, BAD_CAST "config");
            ci = cfg && w->load && si >= 0 ? kw_results_config_at(w->load, si, rd) : -1;
            in = 0;
            if (ours && xmlStrEqual(el, BAD_CAST "baseline")) {
                in = 1;
            } else if (ours && xmlStrEqual(el, BAD_CAST "config")) {
                xmlChar *recd = xmlTextReaderGetAttribute(rd, BAD_CAST "recommended");
                in = recd && xmlStrEqual(recd, BAD_CAST "true") ? 2 : 0;
                xmlFree(recd);
                claim->recommended |= in == 2;
            }
            if (ci < 0 && !in) {
                ret = xmlTextReaderNext(rd);
                continue;
            }
        } else if (depth == 3 && xmlStrEqual(el, BAD_CAST "recheck")) {
            if (ci >= 0)
                rc = kw_results_recheck_into(&w->load->shapes[si].configs[ci], w->load, rd);
            if (in)
                kw_results_recheck_attrs(in == 1 ? &claim->base : &claim->rec, rd);
        } else if (depth == 3 && in != 2) {
            ret = xmlTextReaderNext(rd); /* knobs, metrics, changes: nothing asked */
            continue;
        } else if (depth == 4 && in == 2 && xmlStrEqual(el, BAD_CAST "watch")) {
            kw_results_watch_into(claim, rd);
        } else if (depth == 5 && in == 2 && xmlStrEqual(el, BAD_CAST "criterion")) {
            xmlChar *t = xmlTextReaderReadString(rd);
            if (t) {
                kw_sbuf_putn(&claim->criteria, (const char *)t, strlen((const char *)t) + 1);
                claim->n_criteria++;
            }
            xmlFree(t);
            rc = kw_sbuf_status(&claim->criteria);
        }
        ret = xmlTextReaderRead(rd);
    }
    *last = ret;
    if (rc != 0 && claim)
        kw_results_claim_free(claim);
    return rc;
}

int kw_results_read(const kw_results_want *w, const char *run_dir)
{
    int fd = -1;
    kw_xml_catch quiet;
    xmlTextReaderPtr rd = kw_results_reader_open(&fd, &quiet, run_dir);
    int last = 0, rc = kw_results_read_rd(w, rd, &last);
    /* a damaged file: what lay past the damage read as nothing, so recommend
     * printed no re-check or ranking warning for those shapes and wrote a
     * mappings.csv without the ranking_unresolved token, exit 0 (until
     * 2026-12-07); now said, with the fix (tune writes the file through a
     * temp file and a rename: a kill never leaves it damaged, a disk error
     * or an edit can) */
    if (rc == 0 && rd && (last == -1 || last == KW_RESULTS_READ_DOCTYPE)) {
        if (w->claim_shape && w->claim)
            kw_results_claim_free(w->claim);
        kw_sbuf cmd = {0}; /* the command to paste: the folder as one shell word */
        kw_sbuf_shell(&cmd, run_dir);
        const char *why = last == KW_RESULTS_READ_DOCTYPE ? KW_XML_DOCTYPE_REFUSED
                          : quiet.n                          ? quiet.first
                                                             : "not well-formed";
        rc = kw_error_set(kw_sbuf_status(&cmd) ? KW_ENOMEM : KW_EINPUT,
                          "%s/" KW_RUNFOLDER_RESULTS_XML ":%d: damaged (%s): its "
                          "re-checks and rankings cannot be read; `knobwise tune --resume %s` "
                          "writes it again from the journal", run_dir,
                          xmlTextReaderGetParserLineNumber(rd), why, kw_sbuf_cstr(&cmd));
        kw_sbuf_free(&cmd);
    }
    kw_results_reader_close(rd, fd, &quiet);
    return rc;
}

int kw_results_read_mem(const kw_results_want *w, const char *xml, size_t len, const char *path)
{
    kw_xml_catch quiet;
    kw_xml_catch_begin(&quiet);
    xmlTextReaderPtr rd = len <= (size_t)INT_MAX
                              ? xmlReaderForMemory(xml, (int)len, path, NULL,
                                                   XML_PARSE_NONET | XML_PARSE_NOERROR |
                                                       XML_PARSE_NOWARNING)
                              : NULL;
    int last = 0, rc = kw_results_read_rd(w, rd, &last);
    if (rd)
        xmlFreeTextReader(rd);
    kw_xml_catch_end(&quiet);
    return rc;
}

int kw_results_ranking_read(char ***out, const char *run_dir, const kw_runsum *rs)
{
    kw_results_want w = {.names = rs, .notes = out};
    return kw_results_read(&w, run_dir);
}

void kw_results_claim_free(kw_results_claim *c)
{
    if (c)
        kw_sbuf_free(&c->criteria);
}

void kw_results_ranking_free(char **notes, int n)
{
    if (!notes)
        return;
    for (int i = 0; i < n; i++)
        free(notes[i]);
    free(notes);
}

int kw_results_xml(kw_sbuf *out, const kw_runsum *rs)
{
    kw_rout o = {out, NULL, 0, 0};
    return kw_xml_render(&o, rs);
}

/* ---------------------------------------------------------------- CSV */

/* The metric columns shared with `knobwise eval --format csv` (same formats). */
static void kw_csv_metrics(kw_sbuf *b, const kw_runsum *rs, const kw_metrics *m)
{
    for (int i = 0; i < KW_M_COUNT; i++) {
        const kw_metric_info *mi = &kw_metric_table[i];
        if (mi->csv != KW_METRIC_CSV_CONTRACT)
            continue;
        kw_sbuf_puts(b, ",");
        kw_sbuf_num(b, kw_val(rs, m, mi->name), mi->decimals);
    }
}

static int kw_ranked_render(kw_rout *o, const kw_runsum *rs)
{
    kw_sbuf *out = o->b;
    kw_sbuf_puts(out, KW_RANKED_HEADER "," KW_RANKED_HEADER_ADDED "\n");
    for (int i = 0; i < rs->n_shapes; i++) {
        const kw_rs_shape *s = &rs->shapes[i];
        int listed = kw_results_ranked_listed(s);
        for (int r = 0; r < listed; r++) {
            int c = s->ranked[r];
            char id[17], pid[17];
            kw_hex(id, s->configs[c].id);
            kw_rollback rb;
            kw_results_rollback(&rb, rs, i, c);
            kw_hex(pid, s->configs[rb.parent].id);
            kw_sbuf_csv(out, s->name);
            kw_sbuf_printf(out, ",%d,%s", r + 1, id);
            kw_csv_metrics(out, rs, &s->configs[c].m);
            kw_sbuf_puts(out, ",");
            kw_sbuf ch = {0};
            kw_results_changed(&ch, rs, i, c, ";");
            if (ch.failed) /* the renderer fails (kw_rout_status), never writes a shorter row */
                out->failed = 1;
            kw_sbuf_csv(out, kw_sbuf_cstr(&ch));
            kw_sbuf_free(&ch);
            kw_sbuf_printf(out, ",%s,", pid);
            kw_headline h;
            kw_results_headline(&h, rs, i, c);
            kw_sbuf_num(out, kw_val(rs, h.m, KW_METRIC_NAME(KW_M_P95_US)),
                        kw_metric_decimals(KW_METRIC_NAME(KW_M_P95_US)));
            kw_sbuf_puts(out, ",");
            kw_sbuf_num(out, kw_val(rs, h.m, KW_METRIC_NAME(KW_M_P99_US)),
                        kw_metric_decimals(KW_METRIC_NAME(KW_M_P99_US)));
            kw_sbuf_printf(out, ",%s\n", kw_results_basis_token(h.basis));
            kw_rout_drain(o, 0);
        }
    }
    return kw_rout_status(o);
}

int kw_results_ranked_csv(kw_sbuf *out, const kw_runsum *rs)
{
    kw_rout o = {out, NULL, 0, 0};
    return kw_ranked_render(&o, rs);
}

/* Knobs a step changed, their old and their new values, each list joined
 * by '+' (several only in a damaged journal), into the three buffers. */
static void kw_audit_changes(kw_sbuf *names, kw_sbuf *olds, kw_sbuf *news, const kw_runsum *rs,
                             const kw_rs_step *st)
{
    int first = 1;
    for (int kn = 0; kn < rs->ks.n_knobs; kn++) {
        if (st->parent.v[kn] == st->cand.v[kn])
            continue;
        const kw_knob *kb = &rs->ks.knobs[kn];
        if (!first) {
            kw_sbuf_putn(names, "+", 1);
            kw_sbuf_putn(olds, "+", 1);
            kw_sbuf_putn(news, "+", 1);
        }
        kw_sbuf_puts(names, kb->name);
        kw_sbuf_puts(olds, st->parent.v[kn] < kb->n_values ? kb->values[st->parent.v[kn]] : "?");
        kw_sbuf_puts(news, st->cand.v[kn] < kb->n_values ? kb->values[st->cand.v[kn]] : "?");
        first = 0;
    }
}

/* One row per step, the largest file of a run (13 MB for a 57 MB journal):
 * fields appended as strings, the p95 column found once, the three change
 * buffers kept over the rows. */
static int kw_audit_csv_render(kw_rout *o, const kw_runsum *rs)
{
    kw_sbuf *out = o->b;
    int *order = NULL;
    int n = kw_results_step_order(&order, rs);
    if (n < 0)
        return n;
    int p95 = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_P95_US));
    kw_sbuf names = {0}, olds = {0}, news = {0};
    kw_sbuf_puts(out, KW_AUDIT_HEADER "\n");
    for (int k = 0; k < n; k++) {
        int si = order[2 * k], ti = order[2 * k + 1];
        const kw_rs_shape *s = &rs->shapes[si];
        const kw_rs_step *st = &s->steps[ti];
        char num[24], pid[17], id[17];
        snprintf(num, sizeof num, "%d,", st->num);
        kw_hex(pid, st->parent_id);
        kw_hex(id, st->id);
        kw_sbuf_puts(out, num);
        kw_sbuf_csv(out, s->name);
        kw_sbuf_putn(out, ",", 1);
        kw_sbuf_puts(out, pid);
        kw_sbuf_putn(out, ",", 1);
        kw_sbuf_puts(out, id);
        kw_sbuf_putn(out, ",", 1);
        kw_sbuf *ch[3] = {&names, &olds, &news};
        for (int c = 0; c < 3; c++)
            if (ch[c]->cap) {
                ch[c]->len = 0;
                ch[c]->data[0] = '\0';
            }
        kw_audit_changes(&names, &olds, &news, rs, st);
        kw_sbuf_csv(out, kw_sbuf_cstr(&names));
        kw_sbuf_putn(out, ",", 1);
        kw_sbuf_csv(out, kw_sbuf_cstr(&olds));
        kw_sbuf_putn(out, ",", 1);
        kw_sbuf_csv(out, kw_sbuf_cstr(&news));
        if (names.failed || olds.failed || news.failed)
            out->failed = 1;
        const kw_rs_config *b = st->before >= 0 ? &s->configs[st->before] : NULL;
        const kw_rs_config *a = st->after >= 0 ? &s->configs[st->after] : NULL;
        kw_sbuf_putn(out, ",", 1);
        if (b && b->reps > 0)
            kw_sbuf_num(out, p95 >= 0 ? b->m.v[p95] : NAN, 3);
        kw_sbuf_putn(out, ",", 1);
        if (a && a->reps > 0)
            kw_sbuf_num(out, p95 >= 0 ? a->m.v[p95] : NAN, 3);
        kw_sbuf_putn(out, ",", 1);
        kw_sbuf_num(out, kw_runsum_step_effect(rs, si, ti, rs->primary), 3);
        kw_sbuf_putn(out, ",", 1);
        if (isfinite(st->p_value))
            kw_sbuf_num(out, st->p_value, 6);
        kw_sbuf_putn(out, ",", 1);
        kw_sbuf_csv(out, a ? (a->m.guards[0] ? a->m.guards : "pass") : "");
        kw_sbuf_putn(out, ",", 1);
        kw_sbuf_puts(out, kw_journal_decision_name(st->decision));
        kw_sbuf_putn(out, ",", 1);
        kw_sbuf_csv(out, st->reason);
        kw_sbuf_putn(out, "\n", 1);
        kw_rout_drain(o, 0);
    }
    kw_sbuf_free(&names);
    kw_sbuf_free(&olds);
    kw_sbuf_free(&news);
    free(order);
    return kw_rout_status(o);
}

int kw_results_audit_csv(kw_sbuf *out, const kw_runsum *rs)
{
    kw_rout o = {out, NULL, 0, 0};
    return kw_audit_csv_render(&o, rs);
}

static int kw_port_render(kw_rout *o, const kw_runsum *rs)
{
    kw_sbuf *out = o->b;
    kw_sbuf_puts(out, KW_PORTABILITY_HEADER "\n");
    if (!rs->port)
        return kw_rout_status(o);
    int n = rs->n_shapes;
    for (int i = 0; i < n; i++) {
        if (kw_runsum_winner(rs, i) < 0)
            continue;
        for (int j = 0; j < n; j++) {
            const kw_metrics *pm = &rs->port[i * n + j];
            int ok = rs->port_ok[i * n + j];
            double best = rs->port_ok[j * n + j] ? kw_val(rs, &rs->port[j * n + j], KW_METRIC_NAME(KW_M_P95_US)) : NAN;
            kw_sbuf_csv(out, rs->shapes[i].name);
            kw_sbuf_puts(out, ",");
            kw_sbuf_csv(out, rs->shapes[j].name);
            kw_sbuf_puts(out, ",");
            if (ok) {
                double p95 = kw_val(rs, pm, KW_METRIC_NAME(KW_M_P95_US));
                kw_sbuf_num(out, p95, 3);
                kw_sbuf_puts(out, ",");
                kw_sbuf_num(out, kw_pct(p95, best), 3);
            } else {
                kw_sbuf_puts(out, ",");
            }
            kw_sbuf_puts(out, ",");
            kw_sbuf_csv(out, pm->guards[0] ? pm->guards : (ok ? "pass" : "not evaluated"));
            kw_sbuf_puts(out, "\n");
            kw_rout_drain(o, 0);
        }
    }
    return kw_rout_status(o);
}

int kw_results_portability_csv(kw_sbuf *out, const kw_runsum *rs)
{
    kw_rout o = {out, NULL, 0, 0};
    return kw_port_render(&o, rs);
}

/* ---------------------------------------------------------------- files */

/* One file of a commit: its name in the folder and the renderer that
 * streams its bytes (fn returns 0, a negative code, or KW_EIO with o->err). */
typedef struct kw_render {
    const char *name;
    int (*fn)(kw_rout *o, const void *ctx);
    const void *ctx;
    const char *root, *schema; /* when set: the temp file is validated (kw_xml_check_written)
                                * before anything is renamed into place */
} kw_render;

/* Render every file into a temp file in dir (streamed, fflush, fsync), then
 * rename them all into place and fsync dir. A failure before the renames
 * removes the temp files and leaves dir as it was. */
static int kw_results_commit_held(const char *dir, const kw_render *files, int n);

/* ... with the terminating signals held meanwhile (kw_xml_signals_hold): an
 * interrupt leaves no temp file (SIGINT during `report` left one). */
static int kw_results_commit_render(const char *dir, const kw_render *files, int n)
{
    kw_xml_sighold h;
    kw_xml_signals_hold(&h);
    int rc = kw_results_commit_held(dir, files, n);
    kw_xml_signals_release(&h);
    return rc;
}

static int kw_results_commit_held(const char *dir, const kw_render *files, int n)
{
    int rc = 0;
    kw_tmpfile *tmp = calloc((size_t)(n > 0 ? n : 1), sizeof *tmp);
    if (!tmp)
        return kw_error_set(KW_ENOMEM, "out of memory writing %s", dir);
    int made = 0;
    for (; made < n; made++) {
        const kw_render *f = &files[made];
        /* DIR/.NAME.tmp.XXXXXX, locked until renamed; NAME's stale ones swept */
        if ((rc = kw_tmpfile_open(&tmp[made], dir, f->name)) != 0)
            goto fail;
        FILE *fp = fdopen(tmp[made].fd, "wb");
        if (!fp) {
            close(tmp[made].fd);
            rc = kw_error_set(KW_EIO, "%s: %s", tmp[made].path, strerror(errno));
            made++;
            goto fail;
        }
        kw_sbuf chunk = {0};
        kw_rout o = {&chunk, fp, 0, 0};
        errno = 0;
        int frc = f->fn(&o, f->ctx);
        kw_sbuf_free(&chunk);
        int err = o.err;
        int bad = err != 0 || frc == KW_EIO;
        if (bad && err == 0)
            err = EIO;
        if (!bad && frc != 0) { /* the renderer's own failure (message set) */
            fclose(fp);
            rc = frc;
            made++;
            goto fail;
        }
        if (!bad && fflush(fp) != 0) {
            bad = 1;
            err = errno;
        }
        if (!bad && fsync(fileno(fp)) != 0) {
            bad = 1;
            err = errno;
        }
        if (fclose(fp) != 0 && !bad) {
            bad = 1;
            err = errno;
        }
        if (bad) {
            rc = kw_error_set(KW_EIO, "%s/%s: cannot write: %s", dir, f->name, strerror(err));
            made++;
            goto fail;
        }
        if (f->schema &&
            (rc = kw_xml_check_written(tmp[made].path, f->name, f->root, f->schema)) != 0) {
            made++;
            goto fail;
        }
    }
    for (int i = 0; i < n; i++) {
        char final[4096];
        snprintf(final, sizeof final, "%s/%s", dir, files[i].name);
        if ((rc = kw_tmpfile_commit(&tmp[i], final)) != 0) {
            /* the files before i are already in place; remove the rest */
            for (int j = i + 1; j < n; j++)
                kw_tmpfile_discard(&tmp[j]);
            free(tmp);
            return rc;
        }
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        if (fsync(dfd) != 0)
            rc = kw_error_set(KW_EIO, "%s: cannot sync the folder: %s", dir, strerror(errno));
        close(dfd);
    }
    free(tmp);
    return rc;
fail:
    for (int j = 0; j < made; j++)
        kw_tmpfile_discard(&tmp[j]);
    free(tmp);
    return rc;
}

/* A file already in memory: written as it is. */
static int kw_data_render(kw_rout *o, const void *ctx)
{
    const kw_outfile *f = ctx;
    if (f->len > 0 && fwrite(f->data, 1, f->len, o->fp) != f->len) {
        o->err = errno ? errno : EIO;
        return KW_EIO;
    }
    return 0;
}

int kw_results_commit(const char *dir, const kw_outfile *files, int n)
{
    kw_render *r = calloc((size_t)(n > 0 ? n : 1), sizeof *r);
    if (!r)
        return kw_error_set(KW_ENOMEM, "out of memory writing %s", dir);
    for (int i = 0; i < n; i++)
        r[i] = (kw_render){files[i].name, kw_data_render, &files[i], NULL, NULL};
    int rc = kw_results_commit_render(dir, r, n);
    free(r);
    return rc;
}

static int kw_xml_cb(kw_rout *o, const void *rs) { return kw_xml_render(o, rs); }
static int kw_ranked_cb(kw_rout *o, const void *rs) { return kw_ranked_render(o, rs); }
static int kw_audit_cb(kw_rout *o, const void *rs) { return kw_audit_csv_render(o, rs); }
static int kw_port_cb(kw_rout *o, const void *rs) { return kw_port_render(o, rs); }

/* results.xml first, in place on its own (what the runtime, recommend and
 * libknobwise read), then the CSVs together, the large audit.csv last: a
 * stop's writer may be killed soon after the signal (mpirun's SIGKILL, 1 s
 * after its SIGTERM), and the file that matters most should not wait for a
 * 16 MB audit.csv to be written and synced. Each file is still complete or
 * absent (temp + fsync + rename); a kill between the two commits leaves the
 * new results.xml beside the CSVs of the previous write, which `--resume`
 * rewrites. */
int kw_results_write_summary(const char *run_dir, const kw_runsum *rs)
{
    const kw_render x[1] = {
        {KW_RUNFOLDER_RESULTS_XML, kw_xml_cb, rs, KW_RESULTS_ROOT, KW_RESULTS_SCHEMA},
    };
    const kw_render f[3] = {
        {KW_RUNFOLDER_RANKED_CSV, kw_ranked_cb, rs, NULL, NULL},
        {KW_RUNFOLDER_PORTABILITY_CSV, kw_port_cb, rs, NULL, NULL},
        {KW_RUNFOLDER_AUDIT_CSV, kw_audit_cb, rs, NULL, NULL},
    };
    int rc = kw_results_commit_render(run_dir, x, 1);
    return rc == 0 ? kw_results_commit_render(run_dir, f, 3) : rc;
}

void kw_results_set_limits(kw_runsum *rs, const kw_config *cfg)
{
    const kw_space *sp = &cfg->space;
    rs->limits.drift_min_cos = sp->guards.drift_min_cos;
    rs->limits.drift_max_rel_rms = sp->guards.drift_max_rel_rms;
    rs->limits.max_throttle_pct = sp->guards.max_throttle_pct;
    rs->limits.max_fallback_pct = sp->guards.max_fallback_pct;
    rs->limits.sla_p99_us = sp->guards.sla_p99_us;
    rs->limits.sla_ttft_p99_us = sp->guards.sla_ttft_p99_us;
    rs->limits.sla_tpot_p99_us = sp->guards.sla_tpot_p99_us;
    rs->limits.final_requests = sp->final_requests > 0 ? sp->final_requests : sp->sim_requests;
    if (rs->info.space[0] == '\0')
        snprintf(rs->info.space, sizeof rs->info.space, "%s", sp->name);
    for (int i = 0; i < 3; i++)
        if (rs->info.input_hash[i][0] == '\0' && strlen(cfg->input_hash[i]) == 16)
            snprintf(rs->info.input_hash[i], 17, "%s", cfg->input_hash[i]);
    /* Each tuned shape's dimensions, by name (the journal records names only). */
    for (int s = 0; s < rs->n_shapes; s++)
        for (int i = 0; i < sp->n_shapes; i++) {
            const kw_shape *w = &cfg->workload.shapes[sp->shapes[i]];
            if (strcmp(w->name, rs->shapes[s].name) != 0)
                continue;
            kw_rs_shape *t = &rs->shapes[s];
            /* a decode shape of a block without attention has no kv_len: no dims */
            t->has_dims = !(w->phase == KW_PHASE_DECODE && w->kv_len < 1);
            t->phase_decode = w->phase == KW_PHASE_DECODE;
            t->batch = w->batch;
            t->len = t->phase_decode ? w->kv_len : w->seq;
            t->streams = w->streams;
            break;
        }
}

/* The tail both summaries share: the primary metric checked against the
 * journal's, the space's limits, the owner. */
static int kw_results_summary_end(kw_runsum *rs, const kw_journal *j, const char *path,
                                  const kw_config *cfg, const char *owner, const char *metric)
{
    if (metric && strcmp(metric, j->h.metric) != 0)
        return kw_error_set(KW_ESTATE, "%s: the journal's primary metric is %s, not %s", path,
                            j->h.metric, metric);
    if (cfg)
        kw_results_set_limits(rs, cfg);
    if (owner && owner[0])
        snprintf(rs->info.owner, sizeof rs->info.owner, "%s", owner);
    return 0;
}

int kw_results_summary(kw_runsum **out, const char *run_dir, const kw_config *cfg,
                       const char *owner, const char *metric)
{
    char path[4096];
    kw_journal *j = NULL;
    kw_runsum *rs = NULL;
    int rc;
    *out = NULL;
    if (snprintf(path, sizeof path, "%s/%s", run_dir, KW_RUNFOLDER_JOURNAL_NAME) >=
        (int)sizeof path)
        return kw_error_set(KW_EINPUT, "%s: path too long", run_dir);
    /* The journal is streamed (kw_journal_scan, never loaded) into a summary
     * of only what the files list: memory does not grow with the run. */
    if ((rc = kw_runsum_build_listed(&rs, &j, path, KW_RESULTS_TOP, KW_RESULTS_REJECTED_TOP)) != 0)
        goto done;
    if ((rc = kw_results_summary_end(rs, j, path, cfg, owner, metric)) != 0)
        goto done;
    *out = rs;
    rs = NULL;
done:
    kw_runsum_free(rs);
    kw_journal_free(j);
    return rc;
}

int kw_results_live_new(kw_runsum_live **out, const char *run_dir)
{
    char path[4096];
    *out = NULL;
    if (snprintf(path, sizeof path, "%s/%s", run_dir, KW_RUNFOLDER_JOURNAL_NAME) >=
        (int)sizeof path)
        return kw_error_set(KW_EINPUT, "%s: path too long", run_dir);
    return kw_runsum_live_new(out, path, KW_RESULTS_TOP, KW_RESULTS_REJECTED_TOP);
}

int kw_results_summary_live(kw_runsum **out, kw_runsum_live *lv, const kw_config *cfg,
                            const char *owner, const char *metric)
{
    const kw_journal *j = NULL;
    kw_runsum *rs = NULL;
    *out = NULL;
    int rc = kw_runsum_live_summary(&rs, &j, lv);
    if (rc == 0)
        rc = kw_results_summary_end(rs, j, j->path, cfg, owner, metric);
    if (rc != 0) {
        kw_runsum_free(rs);
        return rc;
    }
    *out = rs;
    return 0;
}
