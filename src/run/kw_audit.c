/* kw_audit.c - which knob caused which change.
 *
 * The audit reads the run summary only: because every step changed exactly
 * one knob, a step's effect belongs to that knob without any attribution
 * model. Rejected steps are grouped by knob so the knob behind a regression is
 * named directly ("placement=stream_affinity made p95 54% worse at step 14").
 *
 * Bisection is the one place that needs an evaluator: between two arbitrary
 * configurations the walk is made one knob at a time, so each knob's
 * contribution is again a measured difference. Contributions depend on the
 * order when knobs interact, so several seeded orders are walked and the
 * spread (min..max) is reported next to the mean: a wide spread exposes an
 * interaction. Each order's contributions telescope to exactly b - a.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "kw_audit.h"
#include "kw_idmap.h"
#include "kw_netpath.h"
#include "kw_results.h"
#include "kw_journal.h"

/* ---------------------------------------------------------------- families */

static const char *const kw_family_names[KW_FAMILY_COUNT] = {
    "tiling", "fusion", "precision", "batching", "placement", "other"};

const char *kw_audit_family_name(kw_family f)
{
    return (int)f >= 0 && f < KW_FAMILY_COUNT ? kw_family_names[f] : "other";
}

kw_family kw_audit_knob_family(const char *knob)
{
    const char *dot = strrchr(knob, '.');
    const char *field = dot ? dot + 1 : knob;
    static const char *const tiling[] = {"tile_m", "tile_n", "tile_k", "split_k", "loop_order",
                                         "double_buffer"};
    for (size_t i = 0; i < sizeof tiling / sizeof tiling[0]; i++)
        if (strcmp(field, tiling[i]) == 0)
            return KW_FAMILY_TILING;
    if (strncmp(knob, "fuse_", 5) == 0)
        return KW_FAMILY_FUSION;
    if (strcmp(knob, "precision") == 0 || strcmp(knob, "accum_precision") == 0 ||
        strcmp(knob, "softmax_precision") == 0 || strcmp(knob, "sparsity") == 0)
        return KW_FAMILY_PRECISION;
    if (strcmp(knob, "max_batch") == 0 || strcmp(knob, "batch_timeout_us") == 0)
        return KW_FAMILY_BATCHING;
    if (strcmp(knob, "placement") == 0 || strcmp(knob, "cores_per_request") == 0 ||
        strcmp(knob, "launch_mode") == 0)
        return KW_FAMILY_PLACEMENT;
    return KW_FAMILY_OTHER;
}

/* ---------------------------------------------------------------- blame */

static int kw_on_path(const kw_rs_shape *s, int step)
{
    for (int p = 0; p < s->n_path; p++)
        if (s->path[p] == step)
            return 1;
    return 0;
}

static void kw_add_guard(char *dst, size_t len, const char *guards)
{
    char tmp[KW_GUARDS_LEN];
    snprintf(tmp, sizeof tmp, "%s", guards);
    char *save = NULL;
    for (char *g = strtok_r(tmp, ";", &save); g; g = strtok_r(NULL, ";", &save)) {
        /* already listed? */
        const char *p = dst;
        size_t gl = strlen(g);
        int found = 0;
        while ((p = strstr(p, g)) != NULL) {
            if ((p == dst || p[-1] == ';') && (p[gl] == ';' || p[gl] == '\0')) {
                found = 1;
                break;
            }
            p += gl;
        }
        if (!found && strlen(dst) + gl + 2 < len)
            snprintf(dst + strlen(dst), len - strlen(dst), "%s%s", dst[0] ? ";" : "", g);
    }
}

int kw_audit_blame(kw_knob_blame *out, const kw_runsum *rs, int shape)
{
    if (shape < 0 || shape >= rs->n_shapes)
        return kw_error_set(KW_EINPUT, "no shape %d in the run", shape);
    const kw_rs_shape *s = &rs->shapes[shape];
    for (int k = 0; k < rs->ks.n_knobs; k++) {
        memset(&out[k], 0, sizeof out[k]);
        out[k].worst_step = -1;
        out[k].worst_pct = NAN;
    }
    for (int i = 0; i < s->n_steps; i++) {
        const kw_rs_step *st = &s->steps[i];
        if (st->knob < 0)
            continue;
        kw_knob_blame *b = &out[st->knob];
        double eff = kw_runsum_step_effect(rs, shape, i, rs->primary);
        if (kw_journal_decision_taken(st->decision) && kw_on_path(s, i)) {
            b->n_accepted++;
            if (isfinite(eff))
                b->accepted_pct += eff;
            continue;
        }
        if (st->decision != KW_DECIDE_REJECT && st->decision != KW_DECIDE_CONSTRAINT)
            continue;
        b->n_rejected++;
        const kw_rs_config *a = st->after >= 0 ? &s->configs[st->after] : NULL;
        if (st->decision == KW_DECIDE_CONSTRAINT || (a && a->constraint >= 0)) {
            b->n_constraint++;
            if (a)
                kw_add_guard(b->guards, sizeof b->guards, a->m.guards);
            continue;
        }
        if (a && a->m.guards[0]) {
            b->n_guard++;
            kw_add_guard(b->guards, sizeof b->guards, a->m.guards);
        }
        if (isfinite(eff) && (b->worst_step < 0 || eff > b->worst_pct)) {
            b->worst_step = i;
            b->worst_pct = eff;
        }
    }
    return 0;
}

int kw_audit_worst_knob(const kw_runsum *rs, int shape, int *step)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    int best = -1;
    double worst = 0.0;
    for (int i = 0; i < s->n_steps; i++) {
        const kw_rs_step *st = &s->steps[i];
        if (st->knob < 0 || st->decision == KW_DECIDE_KEEP || st->decision == KW_DECIDE_REVERT)
            continue; /* the bounded fix reverts on purpose; its losses are bounded */
        double eff = kw_runsum_step_effect(rs, shape, i, rs->primary);
        if (isfinite(eff) && eff > worst) {
            worst = eff;
            best = i;
        }
    }
    if (step)
        *step = best;
    return best >= 0 ? s->steps[best].knob : -1;
}

void kw_audit_family_effect(double out[KW_FAMILY_COUNT], int n[KW_FAMILY_COUNT],
                            const kw_runsum *rs, int shape)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    for (int f = 0; f < KW_FAMILY_COUNT; f++) {
        out[f] = 0.0;
        if (n)
            n[f] = 0;
    }
    if (s->baseline < 0)
        return;
    double base = s->configs[s->baseline].m.v[rs->primary];
    if (!(base > 0))
        return;
    for (int p = 0; p < s->n_path; p++) {
        const kw_rs_step *st = &s->steps[s->path[p]];
        if (st->knob < 0 || st->before < 0 || st->after < 0)
            continue;
        /* microseconds along the path, in percent of the baseline: the
         * families then add up to the path's total change */
        double d = s->configs[st->after].m.v[rs->primary] - s->configs[st->before].m.v[rs->primary];
        kw_family f = kw_audit_knob_family(rs->ks.knobs[st->knob].name);
        out[f] += d / base * 100.0;
        if (n)
            n[f]++;
    }
}

/* ---------------------------------------------------------------- render */

void kw_audit_set_words(kw_sbuf *out, const kw_knobspace *ks, const kw_cand *c)
{
    int first = 1;
    for (int k = 0; k < ks->n_knobs; k++) {
        const kw_knob *kb = &ks->knobs[k];
        if (c->v[k] == kb->baseline || c->v[k] >= kb->n_values)
            continue;
        kw_sbuf word = {0}; /* knob=value, one shell word */
        kw_sbuf_printf(&word, "%s=%s", kb->name, kb->values[c->v[k]]);
        kw_sbuf_printf(out, "%s--set ", first ? "" : " ");
        kw_sbuf_shell(out, kw_sbuf_cstr(&word));
        out->failed |= word.failed;
        kw_sbuf_free(&word);
        first = 0;
    }
}

static const char *kw_val_text(const kw_knobspace *ks, int k, int v)
{
    return v < ks->knobs[k].n_values ? ks->knobs[k].values[v] : "?";
}

static void kw_pct_text(char *buf, size_t len, double pct)
{
    if (!isfinite(pct)) {
        snprintf(buf, len, "-");
        return;
    }
    char t[40];
    kw_sbuf_fmt_num(t, sizeof t, pct, 2);
    snprintf(buf, len, "%s%s%%", (t[0] != '-' && strcmp(t, "0.00") != 0) ? "+" : "", t);
}

static void kw_repro(kw_sbuf *out, const kw_runsum *rs, const kw_rs_shape *s, const kw_cand *c,
                     const char *prefix)
{
    kw_sbuf_printf(out, "         reproduce: %s --shape ", prefix);
    kw_sbuf_shell(out, s->name);
    kw_sbuf words = {0};
    kw_audit_set_words(&words, &rs->ks, c);
    if (words.failed) /* a reproduce line without its --set words is a wrong command */
        out->failed = 1;
    if (words.len)
        kw_sbuf_printf(out, " %s", kw_sbuf_cstr(&words));
    kw_sbuf_free(&words);
    kw_sbuf_puts(out, "\n");
}

/* The effect of a step as a table cell: "saturated" when the configuration
 * it lands on cannot keep up with its arrivals (a percentage of an unbounded
 * backlog means nothing), "from saturated" when only the one it left could not. */
static void kw_effect_text(char *buf, size_t len, double pct, const kw_rs_config *before,
                           const kw_rs_config *after)
{
    if (after && kw_guards_saturated(after->m.guards))
        snprintf(buf, len, "saturated");
    else if (before && kw_guards_saturated(before->m.guards))
        snprintf(buf, len, "from sat.");
    else
        kw_pct_text(buf, len, pct);
}

static void kw_sens_cell(char *buf, size_t len, const kw_runsum *rs, const kw_rs_shape *s, int k,
                         const kw_sens_side *o)
{
    const kw_knobspace *ks = &rs->ks;
    char pct[40];
    int paired = o->pair && o->pair->n > 0;
    switch (o->state) {
    case KW_SENS_EDGE: snprintf(buf, len, "(end)"); return;
    case KW_SENS_MISSING: {
        char why[KW_GUARDS_LEN + 20];
        if (kw_netpath_sens_unmeasured(why, sizeof why, rs, o)) {
            snprintf(buf, len, "%s not measured: %s", kw_val_text(ks, k, o->value), why);
            return;
        }
        if (!paired) {
            snprintf(buf, len, "%s not evaluated", kw_val_text(ks, k, o->value));
            return;
        }
        break;
    }
    case KW_SENS_CONSTRAINT:
        snprintf(buf, len, "%s constraint", kw_val_text(ks, k, o->value));
        return;
    case KW_SENS_EVALUATED: break;
    }
    const kw_rs_config *c = o->config >= 0 ? &s->configs[o->config] : NULL;
    char lo[40], hi[40], ci[100] = "";
    if (paired) {
        /* the pair's mean difference with its 95% interval (kw_rs_pair) */
        kw_pct_text(pct, sizeof pct, o->pair->delta_pct);
        kw_pct_text(lo, sizeof lo, o->pair->lo_pct);
        kw_pct_text(hi, sizeof hi, o->pair->hi_pct);
        snprintf(ci, sizeof ci, " [%s, %s]", lo, hi);
    } else if (c && kw_guards_saturated(c->m.guards))
        snprintf(pct, sizeof pct, "saturated");
    else if (o->same)
        snprintf(pct, sizeof pct, "no effect");
    else
        kw_pct_text(pct, sizeof pct, o->pct);
    const char *g = paired ? "" : c ? c->m.guards : "";
    if (!paired && o->pair && o->pair->guards[0])
        g = o->pair->guards; /* a failed pair: its guards, the unpaired figure beside them */
    int other = g[0] && strcmp(g, "saturated") != 0;
    snprintf(buf, len, "%s %s%s%s%s", kw_val_text(ks, k, o->value), pct, ci, other ? " !" : "",
             other ? g : "");
}

/* The net path, the exploration line and the sensitivity of one shape. */
static int kw_audit_net(kw_sbuf *out, const kw_runsum *rs, int shape, const char *eval_prefix)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    const kw_knobspace *ks = &rs->ks;
    const char *pn = rs->metric_names[rs->primary];
    double base = s->configs[s->baseline].m.v[rs->primary];
    char a[64], b[64], c[64], d[64];
    kw_netpath np;
    int rc = kw_netpath_build(&np, rs, shape);
    if (rc != 0)
        return rc;
    kw_explore_sum e;
    kw_netpath_explore_sum(&e, rs, shape, &np);
    char line[512];
    kw_netpath_explore_line(line, sizeof line, rs, &e);
    kw_sbuf_printf(out, "  exploration: %s (every step: --exploration)\n\n", line);

    kw_sbuf_printf(out, "  net path: the %d one-knob step%s from the baseline to the recommendation as "
                   "it ships (effect on %s, cumulative against the baseline)%s%s\n", np.n,
                   np.n == 1 ? "" : "s", pn,
                   np.kind == KW_NET_SHORTEST
                       ? "; the run evaluated no chain setting each knob once, so this is the "
                         "shortest chain through configurations it evaluated"
                   : np.kind == KW_NET_ACCEPTED
                       ? "; no chain setting each knob once was evaluated, so this is the "
                         "accepted path with its loops cut"
                       : "",
                   /* on such a chain a step's effect is the chain's order's (a knob
                    * set twice, a step that costs before one that pays), not the
                    * knob's own: say where that is read */
                   np.kind == KW_NET_SHORTEST || np.kind == KW_NET_ACCEPTED
                       ? ".\n  A step's effect here depends on the chain's order; each change's own, "
                         "reverted alone at the recommendation: knobwise recommend RUN --shape "
                         "NAME; each knob walked once: knobwise bisect RUN:baseline RUN:best --shape "
                         "NAME"
                       : "");
    kw_sbuf_printf(out, "  %3s %-22s %-25s %11s %11s %10s %10s  %-27s %s\n", "#", "knob",
                   "old -> new", "before us", "after us", "effect", "cumulative",
                   "bottleneck before -> after", "metrics moved");
    if (np.kind == KW_NET_NONE && s->n_steps == 0)
        kw_sbuf_printf(
            out,
            "  (none: a %s search takes no one-knob steps; the recommendation differs "
            "from the baseline in %d knobs, and `knobwise bisect` walks them one at a time)\n",
            rs->info.strategy[0] ? rs->info.strategy : "stepless",
            kw_knobs_cand_distance(ks, &s->configs[s->baseline].cand, &s->configs[s->final].cand));
    else if (np.kind == KW_NET_NONE)
        kw_sbuf_puts(out, "  (none: no chain of evaluated one-knob steps reaches the recommendation)\n");
    else if (np.n == 0)
        kw_sbuf_puts(out, "  (none: the baseline ships)\n");
    for (int i = 0; i < np.n; i++) {
        const kw_net_step *st = &np.steps[i];
        const kw_rs_config *bf = &s->configs[st->before], *af = &s->configs[st->after];
        char change[80], moved[256];
        snprintf(change, sizeof change, "%s -> %s", kw_val_text(ks, st->knob, bf->cand.v[st->knob]),
                 kw_val_text(ks, st->knob, af->cand.v[st->knob]));
        kw_sbuf_fmt_num(a, sizeof a, bf->m.v[rs->primary], 3);
        kw_sbuf_fmt_num(b, sizeof b, af->m.v[rs->primary], 3);
        kw_effect_text(c, sizeof c, kw_netpath_effect(rs, shape, st, rs->primary), bf, af);
        kw_effect_text(d, sizeof d, (af->m.v[rs->primary] - base) / base * 100.0,
                       &s->configs[s->baseline], af);
        kw_netpath_moved(moved, sizeof moved, rs, shape, st);
        char klass[80];
        snprintf(klass, sizeof klass, "%s -> %s", bf->m.klass[0] ? bf->m.klass : "-",
                 af->m.klass[0] ? af->m.klass : "-");
        kw_sbuf_printf(out, "  %3d %-22s %-25s %11s %11s %10s %10s  %-27s %s\n", i + 1,
                       ks->knobs[st->knob].name, change, a, b, c, d, klass, moved);
        if (af->m.guards[0])
            kw_sbuf_printf(out, "         guards on the way: %s\n", af->m.guards);
        kw_repro(out, rs, s, &af->cand, eval_prefix);
    }
    kw_netpath_free(&np);

    kw_sens *sn = calloc((size_t)(ks->n_knobs > 0 ? ks->n_knobs : 1), sizeof *sn);
    if (!sn)
        return kw_error_set(KW_ENOMEM, "out of memory auditing %s", s->name);
    if (kw_netpath_sensitivity(sn, rs, shape) == 0) {
        kw_sbuf_printf(out, "\n  sensitivity: %s when one knob of the recommendation moves one value "
                       "down / up (evaluations the run made)\n", pn);
        if (rs->info.noisy) { /* unpaired figures of different rounds, or the pairing's */
            char note[600];
            kw_netpath_sens_note(note, sizeof note, rs, sn, ks->n_knobs, "cell");
            kw_sbuf_printf(out, "  (%s)\n", note);
        }
        kw_sbuf_printf(out, "  %-22s %-14s %-34s %s\n", "knob", "shipped", "down", "up");
        kw_sbuf inert = {0}, faster = {0};
        int unmeasured = 0;
        for (int k = 0; k < ks->n_knobs; k++) {
            char dn[400], up[400], why[KW_GUARDS_LEN + 20];
            for (int side = 0; side < 2; side++)
                unmeasured |= kw_netpath_sens_unmeasured(why, sizeof why, rs, &sn[k].side[side]);
            kw_sens_cell(dn, sizeof dn, rs, s, k, &sn[k].side[0]);
            kw_sens_cell(up, sizeof up, rs, s, k, &sn[k].side[1]);
            kw_sbuf_printf(out, "  %-22s %-14s %-34s %s\n", ks->knobs[k].name,
                           kw_val_text(ks, k, s->configs[s->final].cand.v[k]), dn, up);
            if (kw_netpath_sens_inert(&sn[k]))
                kw_sbuf_printf(&inert, "%s%s", inert.len ? ", " : "", ks->knobs[k].name);
            /* a paired neighbour whose whole 95% interval lies below zero:
             * faster than what ships, on evidence measured side by side */
            for (int side = 0; side < 2; side++) {
                const kw_rs_pair *p = sn[k].side[side].pair;
                if (p && p->n > 0 && p->hi_pct < 0)
                    kw_sbuf_printf(&faster, "%s%s=%s", faster.len ? ", " : "", ks->knobs[k].name,
                                   kw_val_text(ks, k, p->value));
            }
        }
        if (inert.failed || faster.failed)
            out->failed = 1;
        if (unmeasured)
            kw_sbuf_printf(out, "  (%s)\n", KW_NETPATH_UNMEASURED_NOTE);
        kw_sbuf_printf(out, "  no effect on this shape: %s\n", inert.len ? kw_sbuf_cstr(&inert) : "(none)");
        if (faster.len)
            kw_sbuf_printf(out, "  faster than the recommendation, paired (the whole 95%% interval below "
                           "0): %s; the search did not take it\n", kw_sbuf_cstr(&faster));
        /* the claim's criterion "reverting any one of its changes alone
         * costs less than the minimum effect" already met, by the run's own
         * evaluations: those changes do not earn their place */
        kw_unearned *ue = calloc((size_t)(ks->n_knobs > 0 ? ks->n_knobs : 1), sizeof *ue);
        if (!ue)
            out->failed = 1;
        int n_ue = ue ? kw_netpath_unearned(ue, rs, shape, s->final) : 0;
        if (n_ue > 0) {
            char t[2048];
            kw_netpath_unearned_text(t, sizeof t, rs, shape, s->final, ue, n_ue);
            kw_sbuf_printf(out, "  shipped changes that do not earn their place (the claim's disproof "
                           "criterion already holds for them): %s\n", t);
        }
        free(ue);
        kw_sbuf_free(&inert);
        kw_sbuf_free(&faster);
    }
    free(sn);
    return kw_sbuf_status(out);
}

static int kw_audit_render_view(kw_sbuf *out, const kw_runsum *rs, int shape, const char *eval_prefix,
                                int exploration, const char *ranking_note)
{
    if (shape < 0 || shape >= rs->n_shapes)
        return kw_error_set(KW_EINPUT, "no shape %d in the run", shape);
    const kw_rs_shape *s = &rs->shapes[shape];
    const char *pn = rs->metric_names[rs->primary];
    const kw_knobspace *ks = &rs->ks;
    char a[64], b[64], c[64], d[64];
    double base = s->baseline >= 0 ? s->configs[s->baseline].m.v[rs->primary] : NAN;

    kw_sbuf_printf(out, "shape %s\n", s->name);
    if (s->baseline < 0) {
        kw_sbuf_puts(out, "  the baseline was never evaluated: nothing to audit\n\n");
        return kw_sbuf_status(out);
    }
    kw_sbuf_fmt_num(a, sizeof a, base, 3);
    if (s->final >= 0) {
        double fin = s->configs[s->final].m.v[rs->primary];
        kw_sbuf_fmt_num(b, sizeof b, fin, 3);
        kw_pct_text(c, sizeof c, (fin - base) / base * 100.0);
        /* nothing passed: the best evaluated is no recommendation (results list none) */
        int none = kw_runsum_winner(rs, shape) < 0;
        /* the headline first (kw_results_headline: results.xml's re-check
         * where the run made one), then the search's sample, which the
         * steps and the net path below are measured on */
        kw_headline h;
        kw_results_headline(&h, rs, shape, s->final);
        char src[96];
        kw_results_basis_words(src, sizeof src, &h);
        if (!none && h.basis == KW_BASIS_RECHECK && h.base) {
            char ha[64], hb[64], hc[64];
            double hx = h.base->v[rs->primary], hy = h.m->v[rs->primary];
            kw_sbuf_fmt_num(ha, sizeof ha, hx, 3);
            kw_sbuf_fmt_num(hb, sizeof hb, hy, 3);
            kw_pct_text(hc, sizeof hc, (hy - hx) / hx * 100.0);
            kw_sbuf_printf(out, "  %s at %s: baseline %s us -> recommended %s us (%s), %016llx -> "
                           "%016llx\n", pn, src, ha, hb, hc,
                           (unsigned long long)s->configs[s->baseline].id,
                           (unsigned long long)s->configs[s->final].id);
            kw_headline sh = {KW_BASIS_SEARCH, &s->configs[s->final].m, NULL, 0};
            double n = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_SAMPLES)) >= 0
                           ? sh.m->v[kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_SAMPLES))] : NAN;
            sh.requests = isfinite(n) && n > 0 ? lround(n) : 0;
            kw_results_basis_words(src, sizeof src, &sh);
            kw_sbuf_printf(out, "  %s at %s: baseline %s us -> %s us (%s); the steps below are "
                           "measured on it\n", pn, src, a, b, c);
        } else {
            kw_sbuf_printf(out, "  %s at %s: baseline %s us -> %s %s us (%s), %016llx -> %016llx\n",
                           pn, src, a, none ? "best evaluated" : "recommended", b, c,
                           (unsigned long long)s->configs[s->baseline].id,
                           (unsigned long long)s->configs[s->final].id);
        }
        char llm[256]; /* continuous batching: TTFT and TPOT p99 from the headline's source */
        kw_results_llm_words(llm, sizeof llm, rs, h.m, h.base);
        kw_results_basis_words(src, sizeof src, &h);
        if (!none && llm[0])
            kw_sbuf_printf(out, "  %s at %s\n", llm, src);
        if (none)
            kw_sbuf_printf(out, "  no configuration evaluated passes the guards: nothing to recommend "
                                "(the best evaluated fails %s)\n", s->configs[s->final].m.guards);
        if (s->stopped && rs->info.live) /* no D record yet: a tune is writing the run */
            kw_sbuf_puts(out, "  RUNNING: the run is still running (a tune holds its lock) and this "
                              "shape's search has not finished; the recommendation and its net "
                              "path are the best so far (ask again when the run has finished)\n");
        else if (s->stopped) /* no D record: the net path leads to the best so far */
            kw_sbuf_puts(out, "  STOPPED: the run was stopped before this shape's search finished; "
                              "the recommendation and its net path are the best so far "
                              "(knobwise tune --resume finishes it)\n");
        if (ranking_note && !none)
            kw_results_note_block(out, "  RANKING", ranking_note);
        kw_sbuf_printf(out, "  bottleneck: %s -> %s\n",
                       s->configs[s->baseline].m.klass[0] ? s->configs[s->baseline].m.klass : "-",
                       s->configs[s->final].m.klass[0] ? s->configs[s->final].m.klass : "-");
    }
    int rc = kw_audit_net(out, rs, shape, eval_prefix);
    if (rc != 0)
        return rc;
    if (exploration) {
        kw_sbuf_puts(out, "\n");
        kw_sbuf_printf(out, "  %d steps, %d on the accepted path, %d configurations evaluated\n\n",
                       s->n_steps, s->n_path, s->n_configs);

        kw_sbuf_printf(out, "  accepted path (each step changes one knob; effect on %s, cumulative against the baseline)\n", pn);
        kw_sbuf_printf(out, "  %5s %-8s %-9s %-22s %-25s %11s %11s %9s %10s %8s  %s\n", "step", "decision",
                       "phase", "knob", "old -> new", "before us", "after us", "effect", "cumulative",
                       "p-value", "bottleneck before -> after");
        if (s->n_path == 0)
            kw_sbuf_puts(out, "  (none: no single-knob change earned the minimum effect)\n");
        for (int p = 0; p < s->n_path; p++) {
            int i = s->path[p];
            const kw_rs_step *st = &s->steps[i];
            const kw_rs_config *bf = st->before >= 0 ? &s->configs[st->before] : NULL;
            const kw_rs_config *af = st->after >= 0 ? &s->configs[st->after] : NULL;
            char change[80];
            if (st->knob >= 0)
                snprintf(change, sizeof change, "%s -> %s", kw_val_text(ks, st->knob, st->parent.v[st->knob]),
                         kw_val_text(ks, st->knob, st->cand.v[st->knob]));
            else
                snprintf(change, sizeof change, "(no change)");
            kw_sbuf_fmt_num(a, sizeof a, bf ? bf->m.v[rs->primary] : NAN, 3);
            kw_sbuf_fmt_num(b, sizeof b, af ? af->m.v[rs->primary] : NAN, 3);
            kw_effect_text(c, sizeof c, kw_runsum_step_effect(rs, shape, i, rs->primary), bf, af);
            kw_effect_text(d, sizeof d, af ? (af->m.v[rs->primary] - base) / base * 100.0 : NAN,
                           &s->configs[s->baseline], af);
            char pv[32];
            if (isfinite(st->p_value))
                kw_sbuf_fmt_num(pv, sizeof pv, st->p_value, 4);
            else
                snprintf(pv, sizeof pv, "-");
            kw_sbuf_printf(out, "  %5d %-8s %-9s %-22s %-25s %11s %11s %9s %10s %8s  %s -> %s\n", st->num,
                           kw_journal_decision_name(st->decision), st->phase,
                           st->knob >= 0 ? ks->knobs[st->knob].name : "?", change, a, b, c, d, pv,
                           bf && bf->m.klass[0] ? bf->m.klass : "-",
                           af && af->m.klass[0] ? af->m.klass : "-");
            if (st->n_changed != 1)
                kw_sbuf_printf(out, "         WARNING: this step changed %d knobs (knobwise verify fails)\n",
                               st->n_changed);
            kw_repro(out, rs, s, &st->cand, eval_prefix);
        }

    }

    kw_knob_blame *bl = calloc((size_t)(ks->n_knobs > 0 ? ks->n_knobs : 1), sizeof *bl);
    if (!bl)
        return kw_error_set(KW_ENOMEM, "out of memory auditing %s", s->name);
    kw_audit_blame(bl, rs, shape);
    kw_sbuf_printf(out, "\n  rejected steps by knob (the guard or the metric that rejected each%s)\n",
                   exploration ? "" : "; every step: --exploration");
    int any = 0;
    for (int k = 0; k < ks->n_knobs; k++) {
        const kw_knob_blame *kb = &bl[k];
        if (kb->n_rejected == 0)
            continue;
        any = 1;
        kw_sbuf_printf(out, "  %s [%s]: %d rejected", ks->knobs[k].name,
                       kw_audit_family_name(kw_audit_knob_family(ks->knobs[k].name)),
                       kb->n_rejected);
        if (kb->n_guard)
            kw_sbuf_printf(out, ", %d by a guard", kb->n_guard);
        if (kb->n_constraint)
            kw_sbuf_printf(out, ", %d by a constraint", kb->n_constraint);
        if (kb->guards[0])
            kw_sbuf_printf(out, " (%s)", kb->guards);
        if (kb->worst_step >= 0 && kb->worst_pct > 0) {
            const kw_rs_step *w = &s->steps[kb->worst_step];
            kw_effect_text(c, sizeof c, kb->worst_pct, NULL,
                           w->after >= 0 ? &s->configs[w->after] : NULL);
            kw_sbuf_printf(out, "; worst: %s=%s %s %s at step %d", ks->knobs[k].name,
                           kw_val_text(ks, k, w->cand.v[k]), pn, c, w->num);
        }
        kw_sbuf_puts(out, "\n");
        for (int i = 0; exploration && i < s->n_steps; i++) {
            const kw_rs_step *st = &s->steps[i];
            if (st->knob != k ||
                (st->decision != KW_DECIDE_REJECT && st->decision != KW_DECIDE_CONSTRAINT))
                continue;
            const kw_rs_config *af = st->after >= 0 ? &s->configs[st->after] : NULL;
            kw_effect_text(c, sizeof c, kw_runsum_step_effect(rs, shape, i, rs->primary),
                           st->before >= 0 ? &s->configs[st->before] : NULL, af);
            kw_sbuf_printf(out, "    step %5d  %s -> %s  %s  %s  %s\n", st->num,
                           kw_val_text(ks, k, st->parent.v[k]), kw_val_text(ks, k, st->cand.v[k]),
                           c, af && af->m.guards[0] ? af->m.guards : "pass", st->reason);
        }
    }
    if (!any)
        kw_sbuf_puts(out, "  (none)\n");
    free(bl);

    int wstep;
    int wk = kw_audit_worst_knob(rs, shape, &wstep);
    if (wk >= 0) {
        const kw_rs_step *w = &s->steps[wstep];
        kw_effect_text(c, sizeof c, kw_runsum_step_effect(rs, shape, wstep, rs->primary),
                       w->before >= 0 ? &s->configs[w->before] : NULL,
                       w->after >= 0 ? &s->configs[w->after] : NULL);
        kw_sbuf_printf(out, "\n  largest regression: %s=%s made %s %s at step %d (%s)\n",
                       ks->knobs[wk].name, kw_val_text(ks, wk, w->cand.v[wk]), pn, c, w->num,
                       kw_journal_decision_name(w->decision));
        kw_repro(out, rs, s, &w->cand, eval_prefix);
    } else {
        kw_sbuf_puts(out, "\n  largest regression: none (no step made the primary metric worse)\n");
    }
    kw_sbuf_puts(out, "\n");
    return kw_sbuf_status(out);
}

int kw_audit_render(kw_sbuf *out, const kw_runsum *rs, int shape, const char *eval_prefix)
{
    return kw_audit_render_view(out, rs, shape, eval_prefix, 0, NULL);
}

int kw_audit_render_note(kw_sbuf *out, const kw_runsum *rs, int shape, const char *eval_prefix,
                         int exploration, const char *ranking_note)
{
    return kw_audit_render_view(out, rs, shape, eval_prefix, exploration != 0, ranking_note);
}

/* ---------------------------------------------------------------- bisect */

/* Memo of evaluations by config id: ids maps an id to its index in m. */
typedef struct kw_bmemo {
    kw_idmap ids;
    kw_metrics *m;
    int size, n;
} kw_bmemo;

static int kw_bmemo_get(kw_bmemo *mm, const kw_knobspace *ks, const kw_evaluator *ev, int shape,
                        const kw_cand *c, const kw_metrics **out, int *evals)
{
    uint64_t id = kw_knobs_cand_id(ks, c);
    const size_t *at = kw_idmap_find(&mm->ids, id);
    if (at) {
        *out = &mm->m[*at];
        return 0;
    }
    if (mm->n == mm->size)
        return kw_error_set(KW_ENOMEM, "bisect memo full");
    int rc = ev->eval(ev->ctx, c, shape, 0, &mm->m[mm->n]);
    if (rc != 0)
        return rc;
    (*evals)++;
    if ((rc = kw_idmap_add(&mm->ids, id, (size_t)mm->n, NULL)) != 0)
        return rc;
    *out = &mm->m[mm->n++];
    return 0;
}

int kw_audit_bisect(kw_bisect *out, const kw_knobspace *ks, const kw_evaluator *ev, int shape,
                    const kw_cand *a, const kw_cand *b, int orders, uint64_t seed)
{
    memset(out, 0, sizeof *out);
    if (orders < 1 || orders > KW_BISECT_ORDERS_MAX)
        return kw_error_set(KW_EINPUT, "--orders takes 1 to %d, not %d", KW_BISECT_ORDERS_MAX,
                            orders);
    if (shape < 0 || shape >= ev->n_shapes)
        return kw_error_set(KW_EINPUT, "no shape %d in the evaluator", shape);
    int ca = kw_knobs_cand_violates(ks, a), cb = kw_knobs_cand_violates(ks, b);
    if (ca >= 0 || cb >= 0)
        return kw_error_set(KW_ECONSTRAINT, "configuration %s breaks constraint %s",
                            ca >= 0 ? "A" : "B", ks->constraints[ca >= 0 ? ca : cb].name);
    out->n_metrics = ev->n_metrics;
    for (int k = 0; k < ks->n_knobs; k++)
        if (a->v[k] != b->v[k])
            out->knobs[out->n_knobs++] = k;
    int n = out->n_knobs;
    int rc = 0;
    gsl_rng *rng = NULL;
    kw_bmemo mm = {0};
    /* distinct configs visited: at most orders * n + 1 */
    mm.size = orders * (n > 0 ? n : 1) + 2;
    mm.m = calloc((size_t)mm.size, sizeof *mm.m);
    rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!mm.m || !rng || kw_idmap_reserve(&mm.ids, (size_t)mm.size) != 0) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for bisect");
        goto done;
    }
    gsl_rng_set(rng, (unsigned long)seed);
    const kw_metrics *ma, *mb;
    if ((rc = kw_bmemo_get(&mm, ks, ev, shape, a, &ma, &out->evals)) != 0 ||
        (rc = kw_bmemo_get(&mm, ks, ev, shape, b, &mb, &out->evals)) != 0)
        goto done;
    for (int m = 0; m < out->n_metrics; m++) {
        out->a[m] = ma->v[m];
        out->b[m] = mb->v[m];
    }
    snprintf(out->a_guards, sizeof out->a_guards, "%s", ma->guards);
    snprintf(out->b_guards, sizeof out->b_guards, "%s", mb->guards);
    for (int i = 0; i < n; i++)
        for (int m = 0; m < out->n_metrics; m++) {
            out->min[i][m] = INFINITY;
            out->max[i][m] = -INFINITY;
        }
    int order[KW_KNOB_MAX];
    double contrib[KW_KNOB_MAX][KW_METRIC_MAX];
    for (int o = 0; o < orders; o++) {
        for (int i = 0; i < n; i++)
            order[i] = i;
        if (o > 0 && n > 1) /* GSL's shuffle underflows on zero elements */
            gsl_ran_shuffle(rng, order, (size_t)n, sizeof order[0]);
        kw_cand cur = *a;
        const kw_metrics *mc = ma;
        int left = n, walked = 0;
        int pending[KW_KNOB_MAX];
        memcpy(pending, order, sizeof(int) * (size_t)n);
        while (left > 0) {
            int pick = -1;
            kw_cand next;
            for (int t = 0; t < left && pick < 0; t++) {
                next = cur;
                int k = out->knobs[pending[t]];
                next.v[k] = b->v[k];
                if (kw_knobs_cand_violates(ks, &next) < 0)
                    pick = t;
            }
            if (pick < 0) {
                int k = out->knobs[pending[0]];
                next = cur;
                next.v[k] = b->v[k];
                rc = kw_error_set(KW_ECONSTRAINT,
                                  "no one-knob walk from A to B avoids constraint %s (stuck after "
                                  "%d of %d knobs)",
                                  ks->constraints[kw_knobs_cand_violates(ks, &next)].name, walked,
                                  n);
                goto done;
            }
            int i = pending[pick];
            int k = out->knobs[i];
            next = cur;
            next.v[k] = b->v[k];
            const kw_metrics *mn;
            if ((rc = kw_bmemo_get(&mm, ks, ev, shape, &next, &mn, &out->evals)) != 0)
                goto done;
            for (int m = 0; m < out->n_metrics; m++)
                contrib[i][m] = mn->v[m] - mc->v[m];
            if (o == 0)
                out->first_order[walked] = k;
            memmove(pending + pick, pending + pick + 1, sizeof(int) * (size_t)(left - pick - 1));
            left--;
            walked++;
            cur = next;
            mc = mn;
        }
        for (int i = 0; i < n; i++)
            for (int m = 0; m < out->n_metrics; m++) {
                double v = contrib[i][m];
                out->mean[i][m] += v / orders;
                if (v < out->min[i][m])
                    out->min[i][m] = v;
                if (v > out->max[i][m])
                    out->max[i][m] = v;
            }
        out->orders++;
    }
done:
    gsl_rng_free(rng);
    kw_idmap_free(&mm.ids);
    free(mm.m);
    return rc;
}
