/* test_reduce.c - the journal reducer (search/kw_reduce.c): the mean rule,
 * the best of a finished and of a cut-short shape for each strategy, the net
 * path and the changes, from records written here by hand so every expected
 * figure is worked out in the test (sums and closed forms), not copied from
 * the reducer's output. The reducer behind kw_journal_shape_result on real
 * engine journals is covered by test_journal and test_engine. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"
#include "kw_reduce.h"
#include "lib/kw_tl_journal.h"

TestSuite(reduce);

/* Two knobs of three values, baseline 0.0; one shape "s". */
static kw_jheader *hdr(kw_strategy strategy, int repeats)
{
    kw_jheader *h = calloc(1, sizeof *h);
    h->strategy = strategy;
    h->repeats = repeats;
    kw_tl_jheader_toy(h);
    h->primary = 0;
    return h;
}

static long rec_no;

static void eval(kw_reduce *r, const kw_jheader *h, kw_cand c, int rep, double p95, const char *guards)
{
    static double m[1];
    m[0] = p95;
    kw_jrec rec;
    memset(&rec, 0, sizeof rec);
    rec.type = 'E';
    rec.record = rec.e.record = ++rec_no;
    rec.e.cand = c;
    rec.e.id = kw_knobs_cand_id(&h->space, &c);
    rec.e.rep = rep;
    rec.e.m = m;
    rec.e.guards = guards;
    rec.e.klass = "compute";
    cr_assert_eq(kw_reduce_add(r, &rec), 0);
}

/* A step from parent to c changing knob k. */
static void step(kw_reduce *r, const kw_jheader *h, kw_cand parent, kw_cand c, int k, kw_decision d)
{
    kw_jrec rec;
    memset(&rec, 0, sizeof rec);
    rec.type = 'T';
    rec.record = rec.t.record = ++rec_no;
    rec.t.decision = d;
    rec.t.phase = KW_STEP_MAIN;
    rec.t.parent = parent;
    rec.t.cand = c;
    rec.t.parent_id = kw_knobs_cand_id(&h->space, &parent);
    rec.t.id = kw_knobs_cand_id(&h->space, &c);
    rec.t.knob = k;
    rec.t.old_v = parent.v[k];
    rec.t.new_v = c.v[k];
    rec.t.guards = rec.t.constraint = rec.t.reason = "x";
    cr_assert_eq(kw_reduce_add(r, &rec), 0);
}

Test(reduce, mean_and_sd_are_over_repetitions_in_repetition_order)
{
    kw_repstat st;
    kw_reduce_repstat_init(&st);
    cr_assert(isnan(kw_reduce_repstat_mean(&st)));
    kw_reduce_repstat_add(&st, 2.0, "", 0);
    kw_reduce_repstat_add(&st, 4.0, "", 0);
    kw_reduce_repstat_add(&st, 9.0, "", 0);
    cr_assert_eq(kw_reduce_repstat_mean(&st), 5.0);
    /* sample sd of {2, 4, 9}: sqrt(((-3)^2 + (-1)^2 + 4^2) / 2) = sqrt(13) */
    cr_assert_float_eq(kw_reduce_repstat_sd(&st), sqrt(13.0), 1e-12);
    cr_assert(st.ok);
    kw_reduce_repstat_add(&st, 1.0, "", 3);
    cr_assert_not(st.ok);
    cr_assert_str_eq(st.guards, "error");

    /* records out of repetition order: the reducer still sums 0, 1, 2 */
    kw_jheader *h = hdr(KW_STRATEGY_OFAT, 3);
    kw_reduce *r;
    cr_assert_eq(kw_reduce_new(&r, h), 0);
    eval(r, h, kw_tl_cand2(0, 0), 2, 0.3, "");
    eval(r, h, kw_tl_cand2(0, 0), 0, 0.1, "");
    eval(r, h, kw_tl_cand2(0, 0), 1, 0.2, "");
    eval(r, h, kw_tl_cand2(0, 0), 1, 99.0, ""); /* a repeated record: the first counts */
    kw_jstats js;
    cr_assert_eq(kw_reduce_stats(&js, r, 0, kw_knobs_cand_id(&h->space, &(kw_cand){{0}})), 0);
    cr_assert_eq(js.n, 3);
    cr_assert_eq(js.mean, (0.1 + 0.2 + 0.3) / 3); /* the same additions in the same order */
    cr_assert_eq(kw_reduce_stats(&js, r, 0, 12345), KW_EINPUT);
    kw_reduce_free(r);
    free(h);
}

Test(reduce, ofat_cut_short_takes_the_best_passing_position_and_the_path_to_it)
{
    kw_jheader *h = hdr(KW_STRATEGY_OFAT, 1);
    kw_reduce *r;
    cr_assert_eq(kw_reduce_new(&r, h), 0);
    kw_cand b = kw_tl_cand2(0, 0), a = kw_tl_cand2(1, 0);
    kw_cand ab = kw_tl_cand2(1, 2), g = kw_tl_cand2(2, 2);
    eval(r, h, b, 0, 100.0, "");
    eval(r, h, a, 0, 80.0, "");
    eval(r, h, kw_tl_cand2(0, 1), 0, 50.0, ""); /* evaluated, never stood on: not a candidate */
    step(r, h, b, a, 0, KW_DECIDE_ACCEPT);
    step(r, h, b, kw_tl_cand2(0, 1), 1, KW_DECIDE_REJECT);
    eval(r, h, ab, 0, 90.0, "");
    step(r, h, a, ab, 1, KW_DECIDE_EXPLORE);
    eval(r, h, g, 0, 10.0, "thermal"); /* fastest but failing a guard */
    step(r, h, ab, g, 0, KW_DECIDE_EXPLORE);
    kw_jresult res;
    cr_assert_eq(kw_reduce_result(&res, r, 0), 0);
    cr_assert_not(res.done);
    cr_assert_str_eq(res.why, "incomplete");
    cr_assert_eq(res.best_id, kw_knobs_cand_id(&h->space, &a));
    cr_assert_eq(res.best_primary, 80.0);
    cr_assert_eq(res.baseline_primary, 100.0);
    cr_assert_eq(res.evals, 5);
    cr_assert_eq(res.steps, 4);
    cr_assert_eq(res.n_path, 1, "the walk last stood on the best at its first move");
    cr_assert_eq(res.path[0]->new_v, 1);
    cr_assert_str_eq(res.path[0]->reason, "", "the reducer keeps no text");
    cr_assert_eq(res.n_changes, 1);
    cr_assert_eq(res.changes[0].knob, 0);
    cr_assert_eq(res.changes[0].to_v, 1);
    cr_assert_eq(res.changes[0].step, res.path[0]);
    kw_journal_result_clear(&res);

    /* a D record is the recommendation, whatever the walk says */
    kw_jrec d;
    memset(&d, 0, sizeof d);
    d.type = 'D';
    d.d.shape = 0;
    strcpy(d.d.why, "converged");
    d.d.best = ab;
    d.d.best_id = kw_knobs_cand_id(&h->space, &ab);
    d.d.best_primary = 90.0;
    cr_assert_eq(kw_reduce_add(r, &d), 0);
    cr_assert_eq(kw_reduce_result(&res, r, 0), 0);
    cr_assert(res.done);
    cr_assert_str_eq(res.why, "converged");
    cr_assert_eq(res.best_id, d.d.best_id);
    cr_assert_eq(res.n_path, 2);
    cr_assert_eq(res.n_changes, 2);
    kw_journal_result_clear(&res);
    cr_assert_eq(kw_reduce_result(&res, r, 1), KW_EINPUT);
    kw_reduce_free(r);
    free(h);
}

Test(reduce, sampling_takes_the_complete_passing_config_first_among_equals)
{
    kw_jheader *h = hdr(KW_STRATEGY_RANDOM, 2);
    kw_reduce *r;
    cr_assert_eq(kw_reduce_new(&r, h), 0);
    kw_cand x = kw_tl_cand2(1, 1), y = kw_tl_cand2(2, 1);
    kw_cand z = kw_tl_cand2(0, 2), w = kw_tl_cand2(2, 2);
    eval(r, h, x, 0, 40.0, "");
    eval(r, h, y, 0, 30.0, "");
    eval(r, h, y, 1, 50.0, ""); /* y: mean 40, ties x once x completes */
    eval(r, h, x, 1, 40.0, "");
    eval(r, h, z, 0, 5.0, "");  /* z: incomplete, not a candidate */
    eval(r, h, w, 0, 1.0, "");
    eval(r, h, w, 1, 1.0, "drift"); /* w: fails a guard */
    kw_jresult res;
    cr_assert_eq(kw_reduce_result(&res, r, 0), 0);
    cr_assert_eq(res.best_id, kw_knobs_cand_id(&h->space, &x), "x's repetition 0 came first");
    cr_assert_eq(res.best_primary, 40.0);
    cr_assert_eq(res.n_path, 0);
    cr_assert(isnan(res.baseline_primary), "the baseline was never evaluated");
    cr_assert_eq(res.n_changes, 2);
    kw_journal_result_clear(&res);
    kw_reduce_free(r);
    free(h);
}

Test(reduce, nothing_passing_leaves_the_baseline)
{
    kw_jheader *h = hdr(KW_STRATEGY_EXHAUSTIVE, 1);
    kw_reduce *r;
    cr_assert_eq(kw_reduce_new(&r, h), 0);
    eval(r, h, kw_tl_cand2(1, 1), 0, 1.0, "saturated");
    kw_jresult res;
    cr_assert_eq(kw_reduce_result(&res, r, 0), 0);
    kw_cand b = kw_tl_cand2(0, 0);
    cr_assert_eq(res.best_id, kw_knobs_cand_id(&h->space, &b));
    cr_assert_eq(res.n_changes, 0);
    kw_journal_result_clear(&res);
    kw_reduce_free(r);
    free(h);
}

/* The net path rule on its own: the prefix up to the last move onto best. */
Test(reduce, path_len_ends_at_the_last_move_onto_the_best)
{
    struct mv {
        int pad;
        uint64_t id;
    } m[] = {{0, 7}, {0, 9}, {0, 7}, {0, 4}, {0, 5}};
    size_t n = sizeof m / sizeof m[0];
    cr_assert_eq(kw_reduce_path_len(m, n, sizeof m[0], offsetof(struct mv, id), 7), 3);
    cr_assert_eq(kw_reduce_path_len(m, n, sizeof m[0], offsetof(struct mv, id), 5), 5);
    cr_assert_eq(kw_reduce_path_len(m, n, sizeof m[0], offsetof(struct mv, id), 9), 2);
    cr_assert_eq(kw_reduce_path_len(m, n, sizeof m[0], offsetof(struct mv, id), 1), 0,
                 "no move stands on it: no path");
    cr_assert_eq(kw_reduce_path_len(m, 0, sizeof m[0], offsetof(struct mv, id), 7), 0);
}

/* kw_reduce_each: every configuration of the shape once, with the mean and
 * guard rule of kw_reduce_stats; other shapes' configurations not. */
typedef struct each_seen {
    int n;
    uint64_t id[8];
    double mean[8];
    int reps[8], ok[8];
} each_seen;

static int each_fn(void *ctx, const kw_rconfig *c)
{
    each_seen *s = ctx;
    cr_assert_lt(s->n, 8);
    s->id[s->n] = c->id;
    s->mean[s->n] = c->mean;
    s->reps[s->n] = c->n;
    s->ok[s->n++] = c->ok;
    return 0;
}

static int each_stop_fn(void *ctx, const kw_rconfig *c)
{
    (void)c;
    return ++*(int *)ctx == 2 ? KW_ESTATE : 0;
}

Test(reduce, each_gives_every_configuration_once_with_its_statistics)
{
    kw_jheader *h = hdr(KW_STRATEGY_RANDOM, 2);
    h->n_shapes = 2;
    strcpy(h->shape_names[1], "t");
    kw_reduce *r;
    cr_assert_eq(kw_reduce_new(&r, h), 0);
    kw_cand x = kw_tl_cand2(1, 1), y = kw_tl_cand2(2, 1), z = kw_tl_cand2(0, 2);
    eval(r, h, x, 0, 0.1, "");
    eval(r, h, x, 1, 0.7, "");
    eval(r, h, y, 0, 3.0, "drift");
    eval(r, h, z, 1, 8.0, ""); /* repetition 1 only */
    /* one of shape t */
    kw_jrec o;
    memset(&o, 0, sizeof o);
    static double m1[1] = {1.0};
    o.type = 'E';
    o.record = o.e.record = ++rec_no;
    o.e.shape = 1;
    o.e.cand = x;
    o.e.id = kw_knobs_cand_id(&h->space, &x);
    o.e.m = m1;
    o.e.guards = o.e.klass = "";
    cr_assert_eq(kw_reduce_add(r, &o), 0);
    each_seen s;
    memset(&s, 0, sizeof s);
    cr_assert_eq(kw_reduce_each(r, 0, each_fn, &s), 0);
    cr_assert_eq(s.n, 3);
    int seen = 0;
    for (int i = 0; i < s.n; i++) {
        if (s.id[i] == kw_knobs_cand_id(&h->space, &x)) {
            seen |= 1;
            cr_assert_eq(s.mean[i], (0.1 + 0.7) / 2);
            cr_assert_eq(s.reps[i], 2);
            cr_assert(s.ok[i]);
        } else if (s.id[i] == kw_knobs_cand_id(&h->space, &y)) {
            seen |= 2;
            cr_assert_eq(s.mean[i], 3.0);
            cr_assert_not(s.ok[i]);
        } else if (s.id[i] == kw_knobs_cand_id(&h->space, &z)) {
            seen |= 4;
            cr_assert_eq(s.reps[i], 1);
            cr_assert_eq(s.mean[i], 8.0);
        }
    }
    cr_assert_eq(seen, 7);
    memset(&s, 0, sizeof s);
    cr_assert_eq(kw_reduce_each(r, 1, each_fn, &s), 0);
    cr_assert_eq(s.n, 1);
    cr_assert_eq(s.mean[0], 1.0);
    int k = 0;
    cr_assert_eq(kw_reduce_each(r, 0, each_stop_fn, &k), KW_ESTATE);
    cr_assert_eq(k, 2);
    kw_reduce_free(r);
    free(h);
}
