/* kw_netpath.c - the net path of a shape, its exploration summary and the
 * per-knob sensitivity around the recommendation (kw_netpath.h).
 *
 * Design: the net path is found on the sub-lattice between the baseline B and
 * the recommendation F first. Let D be the d knobs where they differ; a
 * configuration whose every knob holds B's or F's value is a d-bit mask. A
 * chain of d one-knob steps from B to F exists among the evaluated
 * configurations iff mask 2^d - 1 is reachable from 0 adding one bit at a
 * time, which one pass over the masks in popcount order decides (O(n d) for
 * n configurations, no hashing of candidates). That chain is the shortest
 * possible one (each differing knob set once, straight to its shipped
 * value): which knob bought what. When the run never evaluated such a chain
 * (the search went round the sub-lattice), a breadth-first search over the
 * evaluated configurations with one-knob adjacency finds the shortest chain
 * there is (a knob set twice only where the run never evaluated the way round
 * it); its probes hash the candidate's value bytes, not kw_knobs_cand_id's
 * name=value text (20x cheaper: about 100 probes per configuration). Past
 * KW_NET_BFS_MAX configurations (soak-sized journals) the search's accepted
 * path with its loops cut, shortened where two of its configurations are one
 * knob apart, stands in.
 *
 * Alternative rejected: the breadth-first search alone. It finds the direct
 * chain too, but the sub-lattice pass is exact about which of several
 * shortest chains to show (fewest guard-failing configurations on the way,
 * then the earliest evaluated) and costs microseconds where the search costs
 * milliseconds per shape.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"
#include "kw_metric.h"
#include "kw_mix.h"
#include "kw_netpath.h"

/* A metric "moved" when it changed by at least the space's minimum effect;
 * 1% when the summary has none. */
#define KW_NET_MOVED_DEFAULT_PCT 1.0
/* Two metric values are "the same" (no effect) within this relative
 * tolerance: the model is deterministic and arrivals are common random
 * numbers, so a knob the model never reads gives bit-identical metrics; the
 * tolerance only absorbs the journal's decimal round trip. */
#define KW_SENS_SAME_REL 1e-9
/* The fallback chain is shortened (one-knob shortcuts between its own
 * configurations, O(n^2) distance checks) up to this length; a longer one, a
 * damaged or soak-sized journal, is shown with its loops cut only. */
#define KW_NET_SHORTCUT_MAX 4096
/* The shortest-chain search runs on shapes of up to this many
 * configurations (about 100 probes of ~30 ns each per configuration: 0.3 s
 * at the cap); a larger shape falls back to the accepted path. */
#define KW_NET_BFS_MAX 100000

static int kw_np_usable(const kw_rs_shape *s, int c)
{
    const kw_rs_config *cf = &s->configs[c];
    return cf->reps > 0 && cf->constraint < 0 && (cf->step >= 0 || c == s->baseline);
}

static int kw_np_fails(const kw_rs_shape *s, int c)
{
    return s->configs[c].m.guards[0] != '\0';
}

void kw_netpath_free(kw_netpath *p)
{
    if (!p)
        return;
    free(p->steps);
    p->steps = NULL;
    p->n = 0;
    p->kind = KW_NET_NONE;
}

/* For each net step, the first journal step from its `before` to its
 * `after` (or -1): one pass over the steps, the net steps found by their
 * `after` (distinct along a chain) through a config-indexed table. */
static int kw_np_link_steps(kw_netpath *p, const kw_rs_shape *s)
{
    int *at = malloc((size_t)(s->n_configs > 0 ? s->n_configs : 1) * sizeof *at);
    if (!at)
        return kw_error_set(KW_ENOMEM, "out of memory for the net path of %s", s->name);
    for (int c = 0; c < s->n_configs; c++)
        at[c] = -1;
    for (int i = 0; i < p->n; i++) {
        at[p->steps[i].after] = i;
        p->steps[i].step = -1;
    }
    for (int j = 0; j < s->n_steps; j++) {
        const kw_rs_step *st = &s->steps[j];
        if (st->after < 0 || at[st->after] < 0)
            continue;
        kw_net_step *n = &p->steps[at[st->after]];
        if (n->step < 0 && st->before == n->before)
            n->step = j;
    }
    free(at);
    return 0;
}

static int kw_np_knob_between(const kw_knobspace *ks, const kw_cand *a, const kw_cand *b)
{
    for (int k = 0; k < ks->n_knobs; k++)
        if (a->v[k] != b->v[k])
            return k;
    return -1;
}

typedef struct kw_np_node {
    uint64_t mask;
    int config, pc;  /* config index, popcount */
    int reach;       /* reachable from the baseline adding one bit at a time */
    int pred;        /* node index of the chosen predecessor, -1 */
    int fails;       /* guard-failing configurations on the chain so far */
} kw_np_node;

static int kw_np_node_cmp(const void *pa, const void *pb)
{
    const kw_np_node *a = pa, *b = pb;
    if (a->pc != b->pc)
        return a->pc < b->pc ? -1 : 1;
    return a->config < b->config ? -1 : a->config > b->config;
}

static size_t kw_np_slot(uint64_t mask, size_t size)
{
    uint64_t h = mask * 0x9e3779b97f4a7c15ULL;
    return (size_t)(h >> 17) & (size - 1);
}

/* The direct chain on the sub-lattice, or 0 steps when none was evaluated. */
static int kw_np_direct(kw_netpath *out, const kw_runsum *rs, const kw_rs_shape *s)
{
    const kw_knobspace *ks = &rs->ks;
    const kw_cand *B = &s->configs[s->baseline].cand, *F = &s->configs[s->final].cand;
    int D[KW_KNOB_MAX], d = 0;
    for (int k = 0; k < ks->n_knobs; k++)
        if (B->v[k] != F->v[k])
            D[d++] = k;
    if (d == 0 || d > 63)
        return 0;
    kw_np_node *nodes = malloc((size_t)s->n_configs * sizeof *nodes);
    size_t hsize = 16;
    while (hsize < 2 * (size_t)s->n_configs)
        hsize <<= 1;
    int *hash = malloc(hsize * sizeof *hash);
    int rc = 0, n = 0;
    if (!nodes || !hash) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for the net path of %s", s->name);
        goto done;
    }
    for (int c = 0; c < s->n_configs; c++) {
        if (!kw_np_usable(s, c))
            continue;
        const kw_cand *x = &s->configs[c].cand;
        uint64_t mask = 0;
        int in = 1;
        for (int k = 0, i = 0; k < ks->n_knobs && in; k++) {
            if (i < d && D[i] == k) {
                if (x->v[k] == F->v[k])
                    mask |= 1ULL << i;
                else if (x->v[k] != B->v[k])
                    in = 0;
                i++;
            } else if (x->v[k] != B->v[k]) {
                in = 0;
            }
        }
        if (!in)
            continue;
        nodes[n] = (kw_np_node){.mask = mask, .config = c, .pc = __builtin_popcountll(mask),
                                .pred = -1};
        n++;
    }
    qsort(nodes, (size_t)n, sizeof *nodes, kw_np_node_cmp);
    for (size_t i = 0; i < hsize; i++)
        hash[i] = -1;
    for (int i = 0; i < n; i++) {
        size_t h = kw_np_slot(nodes[i].mask, hsize);
        while (hash[h] >= 0 && nodes[hash[h]].mask != nodes[i].mask)
            h = (h + 1) & (hsize - 1);
        if (hash[h] < 0) /* first (earliest evaluated) config of a mask keeps it */
            hash[h] = i;
    }
    int goal = -1;
    for (int i = 0; i < n; i++) {
        kw_np_node *x = &nodes[i];
        if (x->mask == 0) {
            x->reach = x->config == s->baseline;
            continue;
        }
        for (int b = 0; b < d; b++) {
            if (!(x->mask >> b & 1))
                continue;
            uint64_t pm = x->mask & ~(1ULL << b);
            size_t h = kw_np_slot(pm, hsize);
            while (hash[h] >= 0 && nodes[hash[h]].mask != pm)
                h = (h + 1) & (hsize - 1);
            if (hash[h] < 0 || !nodes[hash[h]].reach)
                continue;
            const kw_np_node *p = &nodes[hash[h]];
            if (!x->reach || p->fails < nodes[x->pred].fails ||
                (p->fails == nodes[x->pred].fails && p->config < nodes[x->pred].config)) {
                x->reach = 1;
                x->pred = hash[h];
            }
        }
        if (x->reach)
            x->fails = nodes[x->pred].fails + (x->config != s->final && kw_np_fails(s, x->config));
        if (x->reach && x->config == s->final)
            goal = i;
    }
    if (goal < 0)
        goto done;
    out->steps = malloc((size_t)d * sizeof *out->steps);
    if (!out->steps) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for the net path of %s", s->name);
        goto done;
    }
    out->n = d;
    for (int i = goal, at = d - 1; nodes[i].pred >= 0; i = nodes[i].pred, at--) {
        const kw_np_node *x = &nodes[i], *p = &nodes[x->pred];
        kw_net_step *st = &out->steps[at];
        st->before = p->config;
        st->after = x->config;
        st->knob = D[__builtin_ctzll(x->mask ^ p->mask)];
        st->step = -1;
        st->eval_step = s->configs[x->config].step;
    }
    out->kind = KW_NET_DIRECT;
done:
    free(nodes);
    free(hash);
    return rc;
}

/* Byte-vector hash of a candidate's first n knob values (FNV-1a). */
static uint64_t kw_np_vhash(const kw_cand *c, int n)
{
    return kw_mix_fnv1a(KW_FNV64_OFFSET, c->v, (size_t)n);
}

/* Breadth-first search over the usable configurations with one-knob
 * adjacency: the shortest chain from the baseline to the recommendation
 * among the evaluated ones (neighbours in knob then value order, the first
 * discovery kept: deterministic). 0 steps when none exists or the shape has
 * more than KW_NET_BFS_MAX configurations. */
static int kw_np_bfs(kw_netpath *out, const kw_runsum *rs, const kw_rs_shape *s)
{
    const kw_knobspace *ks = &rs->ks;
    int nc = s->n_configs, rc = 0;
    if (nc > KW_NET_BFS_MAX)
        return 0;
    size_t hsize = 16;
    while (hsize < 2 * (size_t)nc)
        hsize <<= 1;
    int *hash = malloc(hsize * sizeof *hash);
    int *prev = malloc((size_t)nc * sizeof *prev);
    int *queue = malloc((size_t)nc * sizeof *queue);
    if (!hash || !prev || !queue) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for the net path of %s", s->name);
        goto done;
    }
    for (size_t i = 0; i < hsize; i++)
        hash[i] = -1;
    for (int c = 0; c < nc; c++) {
        prev[c] = -2; /* unseen */
        if (!kw_np_usable(s, c))
            continue;
        size_t h = (size_t)kw_np_vhash(&s->configs[c].cand, ks->n_knobs) & (hsize - 1);
        while (hash[h] >= 0)
            h = (h + 1) & (hsize - 1);
        hash[h] = c;
    }
    int head = 0, tail = 0;
    queue[tail++] = s->baseline;
    prev[s->baseline] = -1;
    while (head < tail && prev[s->final] == -2) {
        int u = queue[head++];
        kw_cand c = s->configs[u].cand;
        for (int k = 0; k < ks->n_knobs && prev[s->final] == -2; k++) {
            uint8_t own = c.v[k];
            for (int v = 0; v < ks->knobs[k].n_values; v++) {
                if (v == own)
                    continue;
                c.v[k] = (uint8_t)v;
                size_t h = (size_t)kw_np_vhash(&c, ks->n_knobs) & (hsize - 1);
                for (; hash[h] >= 0; h = (h + 1) & (hsize - 1)) {
                    int w = hash[h];
                    if (memcmp(s->configs[w].cand.v, c.v, (size_t)ks->n_knobs) != 0)
                        continue;
                    if (prev[w] == -2) {
                        prev[w] = u;
                        queue[tail++] = w;
                    }
                    break;
                }
            }
            c.v[k] = own;
        }
    }
    if (prev[s->final] == -2)
        goto done;
    int n = 0;
    for (int x = s->final; x != s->baseline; x = prev[x])
        n++;
    out->steps = malloc((size_t)n * sizeof *out->steps);
    if (!out->steps) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for the net path of %s", s->name);
        goto done;
    }
    out->n = n;
    for (int x = s->final, at = n - 1; x != s->baseline; x = prev[x], at--) {
        kw_net_step *st = &out->steps[at];
        st->before = prev[x];
        st->after = x;
        st->knob = kw_np_knob_between(ks, &s->configs[prev[x]].cand, &s->configs[x].cand);
        st->step = -1;
        st->eval_step = s->configs[x].step;
    }
    out->kind = KW_NET_SHORTEST;
done:
    free(hash);
    free(prev);
    free(queue);
    return rc;
}

/* The accepted path from the baseline to the recommendation with its loops
 * cut. pos[c] is config c's place on the chain so far (-1: not on it), so a
 * revisit cuts in O(1) amortised: each entry leaves the chain at most once. */
static int kw_np_accepted(kw_netpath *out, const kw_runsum *rs, const kw_rs_shape *s)
{
    int *chain = malloc((size_t)(s->n_path + 1) * sizeof *chain);
    int *pos = malloc((size_t)(s->n_configs > 0 ? s->n_configs : 1) * sizeof *pos);
    int rc = 0;
    if (!chain || !pos) {
        rc = kw_error_set(KW_ENOMEM, "out of memory for the net path of %s", s->name);
        goto done;
    }
    for (int c = 0; c < s->n_configs; c++)
        pos[c] = -1;
    int n = 0, reached = s->final == s->baseline;
    chain[n] = s->baseline;
    pos[s->baseline] = n++;
    for (int p = 0; p < s->n_path && !reached; p++) {
        const kw_rs_step *st = &s->steps[s->path[p]];
        if (st->after < 0 || st->before != chain[n - 1])
            continue; /* not a link of this chain (a probe's pulled-in half is its own link) */
        if (pos[st->after] >= 0) {
            while (n > pos[st->after] + 1) /* a loop: back where it was */
                pos[chain[--n]] = -1;
        } else {
            chain[n] = st->after;
            pos[st->after] = n++;
        }
        reached = st->after == s->final;
    }
    if (reached && n > 2 && n <= KW_NET_SHORTCUT_MAX) {
        /* shortcuts: from each configuration, jump to the last one on the
         * chain that is a single knob away (both were evaluated), so a knob
         * the search set twice on the way is set once where it can be */
        int m = 1;
        for (int i = 0; i < n - 1;) {
            int j = i + 1;
            for (int t = n - 1; t > i + 1; t--)
                if (kw_knobs_cand_distance(&rs->ks, &s->configs[chain[i]].cand,
                                           &s->configs[chain[t]].cand) == 1) {
                    j = t;
                    break;
                }
            chain[m++] = chain[j];
            i = j;
        }
        n = m;
    }
    if (reached && n > 1) {
        out->steps = malloc((size_t)(n - 1) * sizeof *out->steps);
        if (!out->steps) {
            rc = kw_error_set(KW_ENOMEM, "out of memory for the net path of %s", s->name);
            goto done;
        }
        for (int i = 1; i < n; i++) {
            kw_net_step *st = &out->steps[i - 1];
            st->before = chain[i - 1];
            st->after = chain[i];
            st->knob = kw_np_knob_between(&rs->ks, &s->configs[chain[i - 1]].cand,
                                          &s->configs[chain[i]].cand);
            st->step = -1;
            st->eval_step = s->configs[chain[i]].step;
        }
        out->n = n - 1;
        out->kind = KW_NET_ACCEPTED;
    }
done:
    free(chain);
    free(pos);
    return rc;
}

int kw_netpath_build(kw_netpath *out, const kw_runsum *rs, int shape)
{
    memset(out, 0, sizeof *out);
    if (shape < 0 || shape >= rs->n_shapes)
        return kw_error_set(KW_EINPUT, "no shape %d in the run", shape);
    const kw_rs_shape *s = &rs->shapes[shape];
    if (s->baseline < 0 || s->final < 0)
        return 0;
    if (s->final == s->baseline) {
        out->kind = KW_NET_DIRECT;
        return 0;
    }
    int rc = kw_np_direct(out, rs, s);
    if (rc == 0 && out->kind == KW_NET_NONE)
        rc = kw_np_bfs(out, rs, s);
    if (rc == 0 && out->kind == KW_NET_NONE)
        rc = kw_np_accepted(out, rs, s);
    if (rc == 0)
        rc = kw_np_link_steps(out, s);
    if (rc != 0)
        kw_netpath_free(out);
    return rc;
}

int kw_netpath_check(const kw_runsum *rs, int shape, const kw_netpath *p)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    if (s->baseline < 0 || s->final < 0)
        return 0;
    if (p->kind == KW_NET_NONE && s->n_steps == 0)
        return 0; /* random and exhaustive search take no steps: no chain to prove */
    if (p->kind == KW_NET_NONE)
        return kw_error_set(KW_ECORRUPT, "shape %s: no chain of evaluated one-knob steps leads "
                            "from the baseline to the recommendation", s->name);
    int at = s->baseline;
    for (int i = 0; i < p->n; i++) {
        const kw_net_step *st = &p->steps[i];
        if (st->before != at)
            return kw_error_set(KW_ECORRUPT, "shape %s: net step %d does not start where step %d "
                                "ended", s->name, i + 1, i);
        if (st->after < 0 || st->after >= s->n_configs || s->configs[st->after].reps <= 0)
            return kw_error_set(KW_ECORRUPT, "shape %s: net step %d lands on a configuration that "
                                "was never evaluated", s->name, i + 1);
        int dist = kw_knobs_cand_distance(&rs->ks, &s->configs[st->before].cand,
                                          &s->configs[st->after].cand);
        if (dist != 1)
            return kw_error_set(KW_ECORRUPT, "shape %s: net step %d changes %d knobs, not one",
                                s->name, i + 1, dist);
        if (st->knob < 0 || s->configs[st->before].cand.v[st->knob] ==
                                s->configs[st->after].cand.v[st->knob])
            return kw_error_set(KW_ECORRUPT, "shape %s: net step %d names a knob it does not change",
                                s->name, i + 1);
        if (st->eval_step < 0 && st->after != s->baseline)
            return kw_error_set(KW_ECORRUPT, "shape %s: net step %d lands on a configuration no "
                                "step evaluated", s->name, i + 1);
        at = st->after;
    }
    if (at != s->final)
        return kw_error_set(KW_ECORRUPT, "shape %s: the net path ends at %016llx, not at the "
                            "recommendation %016llx", s->name,
                            (unsigned long long)s->configs[at].id,
                            (unsigned long long)s->configs[s->final].id);
    return 0;
}

static double kw_np_pct(double after, double before)
{
    if (!isfinite(after) || !isfinite(before) || before == 0.0)
        return NAN;
    return (after - before) / before * 100.0;
}

double kw_netpath_effect(const kw_runsum *rs, int shape, const kw_net_step *st, int metric)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    if (metric < 0 || st->before < 0 || st->after < 0)
        return NAN;
    return kw_np_pct(s->configs[st->after].m.v[metric], s->configs[st->before].m.v[metric]);
}

/* The metrics a reader looks at when a step moved something (the rest are
 * bookkeeping: samples, intervals, fallbacks by precision index). */
static const int kw_np_shown[] = {
    KW_M_P50_US,         KW_M_P95_US,        KW_M_P99_US,          KW_M_LAUNCHES,     KW_M_DRAM_MB,
    KW_M_REUSE_RATIO,    KW_M_QUALITY_REL_RMS, KW_M_CONTENTION_PCT, KW_M_QUEUE_P95_US,
    KW_M_THROUGHPUT_RPS, KW_M_FALLBACK_PCT,  KW_M_THROTTLE_PCT,    KW_M_LATENCY_US,   KW_M_ENERGY_MJ,
};

void kw_netpath_moved(char *buf, size_t len, const kw_runsum *rs, int shape, const kw_net_step *st)
{
    double lim = rs->limits.min_effect_pct > 0 ? rs->limits.min_effect_pct : KW_NET_MOVED_DEFAULT_PCT;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof kw_np_shown / sizeof *kw_np_shown; i++) {
        const char *name = KW_METRIC_NAME(kw_np_shown[i]);
        int m = kw_runsum_metric(rs, name);
        if (m < 0 || m == rs->primary)
            continue;
        double pct = kw_netpath_effect(rs, shape, st, m);
        if (!isfinite(pct) || fabs(pct) < lim)
            continue;
        int w = snprintf(buf + used, len - used, "%s%s %s%.1f%%", used ? ", " : "", name,
                         pct > 0 ? "+" : "", pct);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
    if (used == 0)
        snprintf(buf, len, "-");
}

void kw_netpath_explore_sum(kw_explore_sum *out, const kw_runsum *rs, int shape, const kw_netpath *p)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    memset(out, 0, sizeof *out);
    out->evaluations = s->evals_total;
    out->remeasured = s->remeasured;
    out->configs = s->configs_total;
    out->steps = s->n_steps;
    out->net = p ? p->n : 0;
    for (int i = 0; i < s->n_steps; i++) {
        const kw_rs_step *st = &s->steps[i];
        switch (st->decision) {
        case KW_DECIDE_ACCEPT: out->accepts++; break;
        case KW_DECIDE_EXPLORE: out->explores++; break;
        case KW_DECIDE_REVERT: out->reverts++; break;
        case KW_DECIDE_REJECT: out->rejects++; break;
        case KW_DECIDE_CONSTRAINT: out->constraints++; break;
        default: break;
        }
        if (kw_journal_decision_taken(st->decision))
            out->taken++;
        if (strcmp(st->phase, "probe") == 0)
            out->probes++;
        else if (strcmp(st->phase, "explore") == 0 || strcmp(st->phase, "backtrack") == 0)
            out->excursions++;
    }
    out->best_pct = NAN;
    if (s->final >= 0) {
        int st = s->configs[s->final].step;
        out->best_step = st >= 0 ? s->steps[st].num : 0;
        if (s->baseline >= 0)
            out->best_pct = kw_np_pct(s->configs[s->final].m.v[rs->primary],
                                      s->configs[s->baseline].m.v[rs->primary]);
    }
}

void kw_netpath_explore_line(char *buf, size_t len, const kw_runsum *rs, const kw_explore_sum *e)
{
    char found[96];
    if (isfinite(e->best_pct))
        /* the journal's figures: the search's sample (a finished run's
         * headline is the re-check, kw_results_headline) or a measured run's */
        snprintf(found, sizeof found, "%s %s%.2f%% against the baseline %s",
                 rs->metric_names[rs->primary], e->best_pct > 0 ? "+" : "", e->best_pct,
                 rs->info.measured ? "as measured" : "on the search's sample");
    else
        snprintf(found, sizeof found, "no measured gain");
    char at[48] = "";
    if (e->best_step > 0)
        snprintf(at, sizeof at, ", first reached at step %d", e->best_step);
    /* a measured run's controls and pairing re-measure configurations the
     * search already has: counted apart, so the search's cost reads as such */
    char only[160] = "";
    if (e->remeasured > 0)
        snprintf(only, sizeof only, " and %ld measurement-only (the controls' and the pairing's "
                 "re-measurements)", e->remeasured);
    snprintf(buf, len,
             "%ld %sevaluations of %ld configurations%s in %d steps (%d accepted, %d exploratory, "
             "%d reverted, %d rejected, %d refused by a constraint; %d in probes, %d in "
             "excursions); found %s%s, shipped in %d one-knob step%s",
             e->evaluations - e->remeasured, e->remeasured > 0 ? "search " : "", e->configs, only,
             e->steps, e->accepts, e->explores, e->reverts, e->rejects, e->constraints, e->probes,
             e->excursions, found, at, e->net, e->net == 1 ? "" : "s");
}

static int kw_np_same(const kw_runsum *rs, const kw_rs_config *a, const kw_rs_config *b)
{
    if (strcmp(a->m.guards, b->m.guards) != 0)
        return 0;
    for (int m = 0; m < rs->n_metrics; m++) {
        double x = a->m.v[m], y = b->m.v[m];
        if (x == y)
            continue;
        if (!isfinite(x) || !isfinite(y))
            return 0;
        double scale = fmax(fabs(x), fabs(y));
        if (fabs(x - y) > KW_SENS_SAME_REL * (scale > 1.0 ? scale : 1.0))
            return 0;
    }
    return 1;
}

int kw_netpath_sensitivity(kw_sens *out, const kw_runsum *rs, int shape)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    const kw_knobspace *ks = &rs->ks;
    memset(out, 0, (size_t)ks->n_knobs * sizeof *out);
    if (s->final < 0)
        return kw_error_set(KW_EINPUT, "shape %s has no recommendation", s->name);
    const kw_rs_config *F = &s->configs[s->final];
    for (int k = 0; k < ks->n_knobs; k++) {
        for (int side = 0; side < 2; side++) {
            kw_sens_side *o = &out[k].side[side];
            int v = F->cand.v[k] + (side ? 1 : -1);
            o->value = v;
            o->config = -1;
            o->pct = NAN;
            if (v < 0 || v >= ks->knobs[k].n_values) {
                o->state = KW_SENS_EDGE;
                continue;
            }
            kw_cand c = F->cand;
            c.v[k] = (uint8_t)v;
            o->pair = kw_runsum_find_pair(rs, shape, k, v);
            int ci = kw_runsum_find_config(rs, shape, kw_knobs_cand_id(ks, &c));
            /* configurations a step produced (or the evidence phase added):
             * a partial summary keeps exactly those, so it reads the same */
            if (ci >= 0 && s->configs[ci].constraint < 0 &&
                (s->configs[ci].reps <= 0 ||
                 (s->configs[ci].step < 0 && ci != s->baseline && !s->configs[ci].evidence)))
                ci = -1;
            if (ci < 0) {
                o->state =
                    kw_knobs_cand_violates(ks, &c) >= 0 ? KW_SENS_CONSTRAINT : KW_SENS_MISSING;
                continue;
            }
            o->config = ci;
            if (s->configs[ci].constraint >= 0) {
                o->state = KW_SENS_CONSTRAINT;
                continue;
            }
            o->state = KW_SENS_EVALUATED;
            o->evidence = s->configs[ci].evidence;
            o->pct = o->pair && o->pair->n > 0
                         ? o->pair->delta_pct
                         : kw_np_pct(s->configs[ci].m.v[rs->primary], F->m.v[rs->primary]);
            o->same = kw_np_same(rs, &s->configs[ci], F);
        }
    }
    return 0;
}

/* Sides with a figure (*cells), of them the paired ones (*paired), and the
 * sides a measured run shows as not measured (*unmeasured: no figure at all,
 * kw_netpath_sens_unmeasured), for kw_netpath_sens_note. */
static void kw_netpath_sens_paired(int *paired, int *cells, int *unmeasured, const kw_runsum *rs,
                                   const kw_sens *out, int n_knobs)
{
    *paired = *cells = *unmeasured = 0;
    char why[KW_GUARDS_LEN + 20];
    for (int k = 0; k < n_knobs; k++)
        for (int side = 0; side < 2; side++) {
            const kw_sens_side *o = &out[k].side[side];
            int has = o->pair && o->pair->n > 0;
            if (o->state == KW_SENS_EVALUATED || (o->state == KW_SENS_MISSING && has)) {
                (*cells)++;
                *paired += has;
            }
            *unmeasured += kw_netpath_sens_unmeasured(why, sizeof why, rs, o);
        }
}

void kw_netpath_sens_note(char *buf, size_t len, const kw_runsum *rs, const kw_sens *out, int n_knobs,
                          const char *item)
{
    /* Unpaired, drift between rounds reads as an effect (a pick within 1.1%
     * of the best, interleaved, read a neighbour as 11.6% better: README,
     * 2026-12-05); the pairing (search/kw_engine.c) measures each neighbour
     * beside the recommendation. "every" counts the cells with a figure; the
     * cells without one (not measured) are counted apart, so the sentence
     * stays true when some neighbours were never measured. */
    int paired, cells, unmeasured;
    kw_netpath_sens_paired(&paired, &cells, &unmeasured, rs, out, n_knobs);
    char tail[160] = "";
    if (unmeasured > 0)
        snprintf(tail, sizeof tail, "; %d %s%s no figure (not measured)", unmeasured, item,
                 unmeasured == 1 ? " has" : "s have");
    if (paired == 0)
        snprintf(buf, len, "a measured run: each %s with a figure and the shipped figure come from "
                 "different rounds and are not paired; a difference within the run's noise is no "
                 "evidence until both configurations are measured again side by side%s", item, tail);
    else if (paired == cells && unmeasured == 0)
        snprintf(buf, len, "a measured run: every %s is paired: the neighbour and the shipped "
                 "configuration re-measured side by side after the search, in alternating order; "
                 "the figure is their mean paired difference with its 95%% interval [low, high]",
                 item);
    else if (paired == cells)
        snprintf(buf, len, "a measured run: every %s with a figure (%d) is paired: the neighbour "
                 "and the shipped configuration re-measured side by side after the search, in "
                 "alternating order; the figure is their mean paired difference with its 95%% "
                 "interval [low, high]%s", item, paired, tail);
    else
        snprintf(buf, len, "a measured run: %d of the %d %ss with a figure are paired (those with "
                 "an interval): the neighbour and the shipped configuration re-measured side by side "
                 "after the search, in alternating order; the figure is their mean paired difference "
                 "with its 95%% interval [low, high]; the other %d come from different rounds and are "
                 "not paired, so a difference within the run's noise is no evidence%s", paired, cells,
                 item, cells - paired, tail);
}

int kw_netpath_sens_unmeasured(char *buf, size_t len, const kw_runsum *rs, const kw_sens_side *o)
{
    if (!rs->info.measured || o->state != KW_SENS_MISSING || (o->pair && o->pair->n > 0))
        return 0;
    if (o->pair && o->pair->guards[0])
        snprintf(buf, len, "pair failed: %s", o->pair->guards);
    else
        snprintf(buf, len, "not searched, not paired");
    return 1;
}

int kw_netpath_sens_inert(const kw_sens *k)
{
    int any = 0;
    for (int side = 0; side < 2; side++) {
        if (k->side[side].state != KW_SENS_EVALUATED)
            continue;
        if (!k->side[side].same)
            return 0;
        any = 1;
    }
    return any;
}

double kw_netpath_sens_magnitude(const kw_sens *k)
{
    double m = NAN;
    for (int side = 0; side < 2; side++) {
        const kw_sens_side *o = &k->side[side];
        if (o->state != KW_SENS_EVALUATED)
            continue;
        double a = isfinite(o->pct) ? fabs(o->pct) : HUGE_VAL;
        if (!(m >= a))
            m = a;
    }
    return m;
}

int kw_netpath_knob_effects(int *measured, int *inert, const kw_runsum *rs)
{
    int n = rs->ks.n_knobs;
    memset(measured, 0, (size_t)n * sizeof *measured);
    memset(inert, 0, (size_t)n * sizeof *inert);
    kw_sens *sn = calloc((size_t)(n > 0 ? n : 1), sizeof *sn);
    if (!sn)
        return kw_error_set(KW_ENOMEM, "out of memory for the knob effects");
    for (int i = 0; i < rs->n_shapes; i++) {
        if (rs->shapes[i].final < 0 || kw_netpath_sensitivity(sn, rs, i) != 0)
            continue;
        for (int k = 0; k < n; k++) {
            measured[k] += sn[k].side[0].state == KW_SENS_EVALUATED ||
                           sn[k].side[1].state == KW_SENS_EVALUATED;
            inert[k] += kw_netpath_sens_inert(&sn[k]);
        }
    }
    free(sn);
    return 0;
}

/* ---- changes that do not earn their place ---- */

int kw_netpath_revert(kw_unearned *u, const char **guards, const kw_runsum *rs, int shape, int config,
                      int k)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    *u = (kw_unearned){.knob = k, .config = -1, .pct = NAN, .pair = NULL};
    *guards = "";
    if (s->baseline < 0 || config < 0 || k < 0 || k >= rs->ks.n_knobs)
        return KW_REVERT_NONE;
    const kw_rs_config *B = &s->configs[s->baseline], *F = &s->configs[config];
    if (F->cand.v[k] == B->cand.v[k])
        return KW_REVERT_NONE;
    if (rs->info.noisy) {
        /* figures of different rounds are no evidence of a small effect:
         * only the pairing's, measured side by side with the recommendation
         * it pairs (the shape's final) */
        const kw_rs_pair *p = config == s->final ? kw_runsum_find_pair(rs, shape, k, B->cand.v[k]) : NULL;
        if (!p)
            return KW_REVERT_NONE;
        if (p->guards[0]) {
            *guards = p->guards;
            return KW_REVERT_GUARD;
        }
        if (p->n <= 0 || !isfinite(p->delta_pct))
            return KW_REVERT_NONE;
        u->pair = p;
        u->pct = p->delta_pct;
        return KW_REVERT_FIGURE;
    }
    kw_cand c = F->cand;
    c.v[k] = B->cand.v[k];
    int ci = kw_runsum_find_config(rs, shape, kw_knobs_cand_id(&rs->ks, &c));
    if (ci < 0 || s->configs[ci].reps <= 0 || s->configs[ci].constraint >= 0)
        return KW_REVERT_NONE;
    u->config = ci;
    if (s->configs[ci].m.guards[0]) {
        *guards = s->configs[ci].m.guards;
        return KW_REVERT_GUARD;
    }
    u->pct = kw_np_pct(s->configs[ci].m.v[rs->primary], F->m.v[rs->primary]);
    return isfinite(u->pct) ? KW_REVERT_FIGURE : KW_REVERT_NONE;
}

int kw_netpath_unearned(kw_unearned *out, const kw_runsum *rs, int shape, int config)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    double min_pct = rs->limits.min_effect_pct;
    if (s->baseline < 0 || config < 0 || !(min_pct > 0) || s->configs[config].m.guards[0])
        return 0;
    int n = 0;
    for (int k = 0; k < rs->ks.n_knobs; k++) {
        kw_unearned u;
        const char *g;
        if (kw_netpath_revert(&u, &g, rs, shape, config, k) != KW_REVERT_FIGURE)
            continue; /* no figure, or reverting fails a guard: it earns its place */
        /* a measured run: the pair's whole 95% interval below the minimum effect */
        double worst = u.pair ? u.pair->hi_pct : u.pct;
        if (!isfinite(worst) || !(worst < min_pct))
            continue;
        out[n++] = u;
    }
    return n;
}

void kw_netpath_unearned_text(char *buf, size_t len, const kw_runsum *rs, int shape, int config,
                              const kw_unearned *u, int n)
{
    const kw_rs_shape *s = &rs->shapes[shape];
    const kw_knobspace *ks = &rs->ks;
    size_t at = 0;
    if (len == 0)
        return;
    buf[0] = '\0';
    if (n <= 0)
        return;
#define KW_UE_PUT(...)                                                                             \
    do {                                                                                           \
        if (at < len) {                                                                            \
            int w_ = snprintf(buf + at, len - at, __VA_ARGS__);                                    \
            at = w_ < 0 ? len : at + (size_t)w_;                                                   \
        }                                                                                          \
    } while (0)
    const kw_cand *F = &s->configs[config].cand, *B = &s->configs[s->baseline].cand;
    int ks_i = kw_runsum_metric(rs, KW_METRIC_NAME(KW_M_SAMPLES));
    double nreq = u[0].config >= 0 && ks_i >= 0 ? s->configs[u[0].config].m.v[ks_i] : NAN;
    KW_UE_PUT("reverting %s alone costs less than the run's minimum effect of %.2f%% on %s (",
              n == 1 ? "it" : "each one", rs->limits.min_effect_pct, rs->metric_names[rs->primary]);
    if (u[0].pair)
        KW_UE_PUT("paired with the recommendation, 95%% intervals");
    else if (isfinite(nreq) && nreq > 0)
        KW_UE_PUT("the search's sample, %.0f requests", nreq);
    else
        KW_UE_PUT("the search's sample");
    KW_UE_PUT("): ");
    for (int i = 0; i < n; i++) {
        const kw_knob *kb = &ks->knobs[u[i].knob];
        int v = F->v[u[i].knob];
        double x = u[i].pct;
        KW_UE_PUT("%s%s=%s ", i ? ", " : "", kb->name, v < kb->n_values ? kb->values[v] : "?");
        if (x != 0 && fabs(x) < 0.005) /* not "+0.00%": a difference there is, below the decimals */
            KW_UE_PUT("%s<0.01%%", x > 0 ? "+" : "-");
        else if (x == 0)
            KW_UE_PUT("0.00%%");
        else
            KW_UE_PUT("%+.2f%%", x);
        if (u[i].pair && isfinite(u[i].pair->lo_pct))
            KW_UE_PUT(" [%+.2f%%, %+.2f%%]", u[i].pair->lo_pct, u[i].pair->hi_pct);
    }
    KW_UE_PUT("; the baseline's ");
    for (int i = 0; i < n; i++) {
        const kw_knob *kb = &ks->knobs[u[i].knob];
        int v = B->v[u[i].knob];
        KW_UE_PUT("%s%s=%s", i ? ", " : "", kb->name, v < kb->n_values ? kb->values[v] : "?");
    }
    KW_UE_PUT(" serve%s as well within that effect", n == 1 ? "s" : "");
#undef KW_UE_PUT
    if (at >= len && len > 4)
        memcpy(buf + len - 4, "...", 4);
}
