/* kw_synth.h - a synthetic evaluator for the search engine's tests.
 *
 * The primary metric (p95_us) is a closed-form function of the knob values, so
 * every test knows the true optimum without trusting the engine:
 *   p95 = shape_scale[shape] * (100 + sum_k w[k][v_k] + pair term + mask term) * (1 + noise)
 * - separable part w[k][v];
 * - a planted pair (a=va, b=vb): each alone adds pair_single, both together add
 *   pair_both (e.g. +5 alone, -30 together: only a two-step probe finds it);
 *   with pair_off_knob >= 0 the pair term vanishes while that knob has value
 *   pair_off_value (a change that blocks the pair: a trap one knob off the path);
 * - a planted "masking" interaction: when knob dom has value dval, knob mask's
 *   w[] has no effect (a change that becomes useless: the bounded fix drops it);
 * - a planted guard: knob guard_knob at guard_value fails guard "drift";
 * - a planted evaluation error: knob err_knob at err_value returns err_code;
 * - seeded Gaussian noise with sd noise_pct % (a pure function of id, shape,
 *   rep and noise_seed), reported as noisy when report_noisy is set.
 * Header-only so each test program stays one file plus this.
 */
#ifndef KW_SYNTH_H
#define KW_SYNTH_H

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kw_engine.h"
#include "kw_journal.h"
#include "kw_mix.h"
#include "kw_search.h"

#define KW_SYNTH_SHAPES 4

typedef struct kw_synth {
    kw_knobspace ks;
    int n_shapes;
    double shape_scale[KW_SYNTH_SHAPES];
    double w[KW_KNOB_MAX][KW_VALUE_MAX];
    int pair_a, pair_va, pair_b, pair_vb; /* pair_a < 0: none */
    double pair_single, pair_both;
    int pair_off_knob, pair_off_value;    /* pair_off_knob < 0: the pair always counts */
    int mask_knob, dom_knob, dom_val;     /* mask_knob < 0: none */
    int guard_knob, guard_value;          /* guard_knob < 0: none */
    int err_knob, err_value, err_code;    /* err_knob < 0: none */
    double noise_pct;
    uint64_t noise_seed;
    int report_noisy;
    long calls;                           /* evaluator calls (atomic) */
    kw_evaluator ev;
} kw_synth;

static const char *const kw_synth_metrics[] = {"p50_us", "p95_us", "p99_us", "launches"};
static const char *const kw_synth_shape_names[KW_SYNTH_SHAPES] = {"s0", "s1", "s2", "s3"};

static inline uint64_t kw_synth_mix(uint64_t k)
{
    return kw_mix_splitmix64(k);
}

/* The noiseless primary of a candidate on shape `shape`. */
static inline double kw_synth_true(const kw_synth *s, const kw_cand *c, int shape)
{
    double x = 100.0;
    for (int k = 0; k < s->ks.n_knobs; k++) {
        if (k == s->mask_knob && c->v[s->dom_knob] == s->dom_val)
            continue;
        x += s->w[k][c->v[k]];
    }
    if (s->pair_a >= 0 && !(s->pair_off_knob >= 0 && c->v[s->pair_off_knob] == s->pair_off_value)) {
        int a = c->v[s->pair_a] == s->pair_va, b = c->v[s->pair_b] == s->pair_vb;
        x += a && b ? s->pair_both : (a || b ? s->pair_single : 0.0);
    }
    return x * s->shape_scale[shape];
}

static int kw_synth_eval(void *ctx, const kw_cand *c, int shape, int rep, kw_metrics *out)
{
    kw_synth *s = ctx;
    __atomic_fetch_add(&s->calls, 1, __ATOMIC_RELAXED);
    if (s->err_knob >= 0 && c->v[s->err_knob] == s->err_value)
        return kw_error_set(s->err_code, "synthetic failure at %s", s->ks.knobs[s->err_knob].name);
    double x = kw_synth_true(s, c, shape);
    if (s->noise_pct > 0) {
        uint64_t h = kw_synth_mix(kw_knobs_cand_id(&s->ks, c) ^ kw_synth_mix(s->noise_seed) ^
                                  kw_synth_mix(((uint64_t)shape << 20) | (uint64_t)rep));
        double u1 = ((h >> 11) + 0.5) / 9007199254740992.0;
        double u2 = ((kw_synth_mix(h) >> 11) + 0.5) / 9007199254740992.0;
        double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2); /* Box-Muller */
        x *= 1.0 + z * s->noise_pct / 100.0;
    }
    out->v[0] = 0.8 * x;
    out->v[1] = x;
    out->v[2] = 1.2 * x;
    out->v[3] = c->v[0];
    if (s->guard_knob >= 0 && c->v[s->guard_knob] == s->guard_value)
        snprintf(out->guards, sizeof out->guards, "drift");
    snprintf(out->klass, sizeof out->klass, "%s", x > 100 ? "memory" : "compute");
    return 0;
}

/* A space of n knobs named k0.. with n_values[i] values "v0".."vN", baseline 0. */
static inline void kw_synth_init(kw_synth *s, int n_knobs, const int *n_values, int n_shapes)
{
    memset(s, 0, sizeof *s);
    s->ks.n_knobs = n_knobs;
    for (int k = 0; k < n_knobs; k++) {
        kw_knob *kn = &s->ks.knobs[k];
        snprintf(kn->name, sizeof kn->name, "k%d", k);
        kn->n_values = n_values[k];
        for (int v = 0; v < n_values[k]; v++)
            snprintf(kn->values[v], sizeof kn->values[v], "v%d", v);
    }
    s->n_shapes = n_shapes;
    for (int i = 0; i < KW_SYNTH_SHAPES; i++)
        s->shape_scale[i] = 1.0 + 0.5 * i;
    s->pair_a = s->pair_off_knob = s->mask_knob = s->guard_knob = s->err_knob = -1;
    s->ev.ctx = s;
    s->ev.n_metrics = 4;
    s->ev.metric_names = kw_synth_metrics;
    s->ev.n_shapes = n_shapes;
    s->ev.shape_names = kw_synth_shape_names;
    s->ev.eval = kw_synth_eval;
}

/* Plants the interaction: knob a at value va and knob b at value vb add `single`
 * when one of them is set and `both` when both are (kw_synth_eval). */
static inline void kw_synth_pair(kw_synth *s, int a, int va, int b, int vb, double single,
                                 double both)
{
    s->pair_a = a;
    s->pair_va = va;
    s->pair_b = b;
    s->pair_vb = vb;
    s->pair_single = single;
    s->pair_both = both;
}

static inline void kw_synth_noise(kw_synth *s, double pct, uint64_t seed, int report)
{
    s->noise_pct = pct;
    s->noise_seed = seed;
    s->report_noisy = report;
    s->ev.noisy = report;
}

static inline void kw_synth_constraint(kw_synth *s, const char *name, int ka, uint64_t ma, int kb,
                                       uint64_t mb)
{
    kw_constraint *c = &s->ks.constraints[s->ks.n_constraints++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->n_terms = 2;
    c->terms[0].knob = ka;
    c->terms[0].mask = ma;
    c->terms[1].knob = kb;
    c->terms[1].mask = mb;
}

/* A random space from a seed: 3..6 knobs of 2..5 values, weights in [-12, 12]. */
static inline void kw_synth_random(kw_synth *s, uint64_t seed, int n_shapes)
{
    uint64_t h = kw_synth_mix(seed);
    int nk = 3 + (int)(h % 4);
    int nv[KW_KNOB_MAX];
    for (int k = 0; k < nk; k++) {
        h = kw_synth_mix(h);
        nv[k] = 2 + (int)(h % 4);
    }
    kw_synth_init(s, nk, nv, n_shapes);
    for (int k = 0; k < nk; k++)
        for (int v = 0; v < nv[k]; v++) {
            h = kw_synth_mix(h);
            s->w[k][v] = v == 0 ? 0.0 : ((double)(h % 2401) / 100.0 - 12.0);
        }
    h = kw_synth_mix(h);
    if (h % 2) /* a pair */
        kw_synth_pair(s, 0, 1, nk - 1, 1, 4.0, -20.0);
    h = kw_synth_mix(h);
    if (h % 3 == 0) { /* a guard */
        s->guard_knob = 1;
        s->guard_value = nv[1] - 1;
    }
    h = kw_synth_mix(h);
    if (h % 2) /* a constraint on the two middle knobs' last values */
        kw_synth_constraint(s, "no_last_pair", 1, 1ULL << (nv[1] - 1), 2, 1ULL << (nv[2] - 1));
}

/* The excursion's least-bad space (engine/ and mfengine/..._least_bad_changes_first):
 * six binary knobs, the baseline (100) a local optimum; k0..k3 cost 50-80 alone, k4
 * costs 2, k5 3, and k4 + k5 give 91, the optimum. */
static inline void kw_synth_least_bad(kw_synth *s)
{
    int nv[] = {2, 2, 2, 2, 2, 2};
    kw_synth_init(s, 6, nv, 1);
    for (int k = 0; k < 4; k++)
        s->w[k][1] = 50.0 + 10.0 * k;
    s->w[5][1] = 1.0;
    kw_synth_pair(s, 4, 1, 5, 1, 2.0, -10.0);
}

/* Brute force: the guard-passing, constraint-free optimum (noiseless). */
static inline double kw_synth_optimum(const kw_synth *s, int shape, kw_cand *best)
{
    kw_cand c;
    memset(&c, 0, sizeof c);
    double bx = INFINITY;
    for (;;) {
        int ok = kw_knobs_cand_violates(&s->ks, &c) < 0 &&
                 !(s->guard_knob >= 0 && c.v[s->guard_knob] == s->guard_value);
        double x = kw_synth_true(s, &c, shape);
        if (ok && x < bx) {
            bx = x;
            if (best)
                *best = c;
        }
        int k = s->ks.n_knobs - 1;
        for (; k >= 0; k--) {
            if (++c.v[k] < s->ks.knobs[k].n_values)
                break;
            c.v[k] = 0;
        }
        if (k < 0)
            break;
    }
    return bx;
}

static inline char *kw_synth_slurp(const char *path, long *len)
{
    if (len)
        *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n)
        n = 0;
    if (b)
        b[n] = '\0';
    fclose(f);
    if (len)
        *len = n;
    return b;
}

static inline int kw_synth_spit(const char *path, const char *buf, long len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(buf, 1, (size_t)len, f) == (size_t)len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* A fresh temporary folder; the journal path inside it. */
static inline void kw_synth_tmp(char *dir, size_t n, char *journal, size_t jn)
{
    snprintf(dir, n, "/tmp/kw_test_XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(journal, jn, "%s/journal", dir);
}

static inline void kw_synth_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static const char *const kw_synth_input_names[] = {"space", "accel"};
static const char *const kw_synth_input_hashes[] = {"0123456789abcdef", "fedcba9876543210"};
static const char *const kw_synth_attr_keys[] = {"owner"};
static const char *const kw_synth_attr_values[] = {"test owner"};

static inline kw_run_info kw_synth_info(const char *journal)
{
    kw_run_info in;
    memset(&in, 0, sizeof in);
    in.journal_path = journal;
    in.version = "test-1";
    in.n_inputs = 2;
    in.input_names = kw_synth_input_names;
    in.input_hashes = kw_synth_input_hashes;
    in.n_attrs = 1;
    in.attr_keys = kw_synth_attr_keys;
    in.attr_values = kw_synth_attr_values;
    in.no_sync = 1;
    return in;
}

#endif
