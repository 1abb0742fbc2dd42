/* test_alias.c - the engine's aliases (search/kw_engine.c "aliases") and the model's
 * service key (src/model/kw_eval.c kw_model_eval_key).
 *
 * A candidate whose service key equals an earlier full evaluation's on the same shape
 * gets that evaluation's result without being evaluated, journalled as its alias
 * (E ... a=ID), and the budget counts full evaluations only. What must hold:
 *   - exactness: every valid config of validate_small.xml, on both shapes, judged by
 *     an exhaustive run with aliases and by one without (every config evaluated in
 *     full), has the same record bit for bit, and the key aliased some of them;
 *   - the claim is checked: verify evaluates every alias in full and fails (exit 1,
 *     naming the id) on an alias whose evaluation differs from its original's;
 *   - determinism: --threads 1 and 2 give the same journal; a run cut right after an
 *     alias (or its original, or anywhere) resumes to the uninterrupted journal; a
 *     journal made without aliases resumes without them;
 *   - a measuring evaluator (exec worker) never aliases;
 *   - the budget: N full evaluations per shape judge more than N candidates when
 *     aliases come, and tune's summary counts the aliases apart.
 * Before stop 47 there were no aliases: every assertion on them fails on main.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "kw_engine.h"
#include "kw_eval.h"
#include "kw_journal.h"
#include "kw_load.h"
#include "lib/kw_tl.h"

static void kw_alias_guard(void) { KW_TL_HANG_GUARD(300); }
TestSuite(alias, .init = kw_alias_guard);

typedef struct fx {
    kw_config *cfg;
    kw_model_eval *me;
    char *dir;
} fx;

/* The space at path, its model evaluator, and dir (a fresh folder when NULL) for
 * the journals; fx_close removes dir. */
static void fx_open_path(fx *f, const char *path, int sim_requests, char *dir)
{
    cr_assert_eq(kw_load_config(&f->cfg, path, NULL, NULL), 0, "%s", kw_error_last());
    kw_model_opts mo = {.sim_requests = sim_requests, .drift = 1, .seed = 1};
    cr_assert_eq(kw_eval_new(&f->me, f->cfg, &mo), 0, "%s", kw_error_last());
    f->dir = dir ? dir : kw_tl_tmpdir("kwalias");
    cr_assert_not_null(f->dir);
}

static void fx_open(fx *f, const char *space, int sim_requests)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/spaces/%s", kw_tl_src(), space);
    fx_open_path(f, p, sim_requests, NULL);
}

static void fx_close(fx *f)
{
    kw_eval_free(f->me);
    kw_load_config_free(f->cfg);
    kw_tl_rmrf(f->dir);
}

static kw_engine_opts opts_of(const fx *f)
{
    kw_engine_opts o;
    kw_engine_opts_init(&o);
    o.min_effect_pct = f->cfg->space.min_effect_pct;
    return o;
}

/* One engine run (resume 0) or resume (1) into DIR/name. */
static int run(const fx *f, const char *name, const kw_engine_opts *o, int resume, kw_engine_summary *sum)
{
    char jp[4200];
    snprintf(jp, sizeof jp, "%s/%s", f->dir, name);
    kw_run_info info = {.journal_path = jp, .version = "test", .no_sync = 1};
    return resume ? kw_engine_resume(sum, &f->cfg->space.knobs, kw_eval_iface(f->me), o, &info)
                  : kw_engine_run(sum, &f->cfg->space.knobs, kw_eval_iface(f->me), o, &info);
}

static char *slurp(const fx *f, const char *name, size_t *n)
{
    char jp[4200];
    snprintf(jp, sizeof jp, "%s/%s", f->dir, name);
    return kw_tl_slurp_n(jp, n);
}

static long count(const char *text, const char *needle)
{
    long n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static kw_journal *load(const fx *f, const char *name)
{
    char jp[4200];
    kw_journal *j = NULL;
    snprintf(jp, sizeof jp, "%s/%s", f->dir, name);
    cr_assert_eq(kw_journal_load(&j, jp), 0, "%s", kw_error_last());
    cr_assert_eq(kw_journal_check(j), 0, "%s", kw_error_last());
    return j;
}

static long aliases_of(const kw_journal *j)
{
    long n = 0;
    for (int s = 0; s < j->h.n_shapes; s++)
        n += j->n_alias[s];
    return n;
}

/* Every valid config of both shapes judged by an exhaustive run with aliases and by
 * one with every config evaluated in full: the same result, bit for bit. */
Test(alias, every_config_both_ways)
{
    fx f;
    fx_open(&f, "validate_small.xml", 200);
    kw_engine_opts o = opts_of(&f);
    o.strategy = KW_STRATEGY_EXHAUSTIVE;
    o.threads = 2;
    cr_assert_eq(run(&f, "aliased", &o, 0, NULL), 0, "%s", kw_error_last());
    o.alias = 0;
    cr_assert_eq(run(&f, "full", &o, 0, NULL), 0, "%s", kw_error_last());
    kw_journal *a = load(&f, "aliased"), *b = load(&f, "full");
    cr_assert_eq(a->n_evals, b->n_evals);
    cr_assert_eq(a->h.alias, KW_ALIAS_LEVEL);
    cr_assert_eq(b->h.alias, 0);
    cr_assert_eq(aliases_of(b), 0);
    long aliased = 0;
    for (size_t i = 0; i < a->n_evals; i++) {
        const kw_jeval *x = &a->evals[i], *y = &b->evals[i];
        cr_assert_eq(x->id, y->id);
        cr_assert_eq(x->shape, y->shape);
        cr_assert_eq(x->rc, y->rc, "config %016llx", (unsigned long long)x->id);
        cr_assert_eq(memcmp(x->m, y->m, sizeof(double) * (size_t)a->h.n_metrics), 0,
                     "config %016llx (alias %d of %016llx): metrics differ from its full evaluation",
                     (unsigned long long)x->id, x->alias, (unsigned long long)x->alias_of);
        cr_assert_str_eq(x->guards, y->guards);
        cr_assert_str_eq(x->klass, y->klass);
        aliased += x->alias;
    }
    /* not vacuous: a real share of the space names a service met before */
    cr_expect_gt(aliased, (long)a->n_evals / 20, "%ld aliases of %zu", aliased, a->n_evals);
    kw_journal_free(a);
    kw_journal_free(b);
    fx_close(&f);
}

Test(alias, threads_1_and_2_same_journal)
{
    fx f;
    fx_open(&f, "validate_small.xml", 0);
    kw_engine_opts o = opts_of(&f);
    o.threads = 1;
    cr_assert_eq(run(&f, "t1", &o, 0, NULL), 0, "%s", kw_error_last());
    o.threads = 2;
    cr_assert_eq(run(&f, "t2", &o, 0, NULL), 0, "%s", kw_error_last());
    size_t n1, n2;
    char *a = slurp(&f, "t1", &n1), *b = slurp(&f, "t2", &n2);
    cr_assert_gt(count(a, "\nE "), 0);
    cr_assert_gt(count(a, " a="), count(a, "\nR "), "the run has aliases");
    cr_assert(n1 == n2 && memcmp(a, b, n1) == 0, "--threads 1 and 2 journals differ");
    free(a);
    free(b);
    fx_close(&f);
}

/* Byte offset just after line k (1-based) of text. */
static size_t after_line(const char *text, long k)
{
    const char *p = text;
    for (long i = 0; i < k && p; i++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return p ? (size_t)(p - text) : strlen(text);
}

/* The journal cut after line k into DIR/cut, resumed: the uninterrupted run's bytes. */
static void cut_resume(const fx *f, const char *whole, size_t n, long k, const kw_engine_opts *o)
{
    char jp[4200];
    snprintf(jp, sizeof jp, "%s/cut", f->dir);
    size_t at = after_line(whole, k);
    FILE *fp = fopen(jp, "wb");
    cr_assert_not_null(fp);
    cr_assert_eq(fwrite(whole, 1, at, fp), at);
    fclose(fp);
    cr_assert_eq(run(f, "cut", o, 1, NULL), 0, "cut after line %ld: %s", k, kw_error_last());
    size_t m;
    char *r = slurp(f, "cut", &m);
    cr_assert(m == n && memcmp(r, whole, n) == 0, "resumed after line %ld: the journal differs", k);
    free(r);
}

/* Line number (1-based) of the first line starting with prefix and holding needle. */
static long line_of(const char *text, const char *prefix, const char *needle)
{
    long k = 1;
    for (const char *p = text; *p; k++) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            char *l = strndup(p, len);
            int hit = strstr(l, needle) != NULL;
            free(l);
            if (hit)
                return k;
        }
        if (!e)
            break;
        p = e + 1;
    }
    return -1;
}

Test(alias, resume_after_an_alias_same_journal)
{
    fx f;
    fx_open(&f, "validate_small.xml", 0);
    kw_engine_opts o = opts_of(&f);
    o.threads = 2;
    cr_assert_eq(run(&f, "whole", &o, 0, NULL), 0, "%s", kw_error_last());
    size_t n;
    char *whole = slurp(&f, "whole", &n);
    long first = line_of(whole, "E ", " a=");
    cr_assert_gt(first, 0, "no alias in the run");
    /* the alias's original */
    const char *l = whole + after_line(whole, first - 1), *a = strstr(l, " a=");
    char needle[40];
    snprintf(needle, sizeof needle, " id=%.16s ", a + 3);
    long orig = line_of(whole, "E ", needle);
    cr_assert_gt(orig, 0);
    cr_assert_lt(orig, first);
    long last = first; /* the last alias */
    for (long q; (q = line_of(whole + after_line(whole, last), "E ", " a=")) > 0;)
        last += q;
    cr_assert_geq(last, first);
    const long cuts[] = {orig, first, first - 1, first + 1, last, last + 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        cut_resume(&f, whole, n, cuts[i], &o);
    free(whole);
    fx_close(&f);
}

/* A journal made without aliases (before stop 47, or opts.alias 0) resumes without
 * them, whatever this build does by default. */
Test(alias, journal_without_aliases_resumes_without)
{
    fx f;
    fx_open(&f, "validate_small.xml", 0);
    kw_engine_opts o = opts_of(&f);
    o.alias = 0;
    cr_assert_eq(run(&f, "whole", &o, 0, NULL), 0, "%s", kw_error_last());
    size_t n;
    char *whole = slurp(&f, "whole", &n);
    cr_assert_null(strstr(whole, " alias="));
    cr_assert_eq(line_of(whole, "E ", " a="), -1);
    /* resumed with the options its header records, as tune --resume does */
    kw_journal *j = load(&f, "whole");
    kw_engine_opts r;
    int shapes[KW_JOURNAL_SHAPE_MAX];
    kw_engine_opts_init(&r);
    kw_engine_opts_from_header(&r, shapes, &j->h);
    cr_assert_eq(r.alias, 0);
    long mid = count(whole, "\n") / 2;
    cut_resume(&f, whole, n, mid, &r);
    /* and a resume asking for aliases is refused, naming the setting */
    r.alias = 1;
    char jp[4200];
    snprintf(jp, sizeof jp, "%s/cut", f.dir);
    FILE *fp = fopen(jp, "wb");
    cr_assert_not_null(fp);
    fwrite(whole, 1, after_line(whole, mid), fp);
    fclose(fp);
    cr_assert_eq(run(&f, "cut", &r, 1, NULL), KW_EINPUT);
    cr_expect(strstr(kw_error_last(), "alias") != NULL, "%s", kw_error_last());
    kw_journal_free(j);
    free(whole);
    fx_close(&f);
}

/* The budget counts full evaluations: with aliases, N of them judge more than N
 * candidates per shape; without, N. */
Test(alias, budget_counts_full_evaluations)
{
    fx f;
    fx_open(&f, "validate_small.xml", 0);
    kw_engine_opts o = opts_of(&f);
    o.budget = 60;
    kw_engine_summary sa, sf;
    cr_assert_eq(run(&f, "aliased", &o, 0, &sa), 0, "%s", kw_error_last());
    o.alias = 0;
    cr_assert_eq(run(&f, "full", &o, 0, &sf), 0, "%s", kw_error_last());
    kw_journal *a = load(&f, "aliased"), *b = load(&f, "full");
    long judged_a = 0, judged_b = 0;
    for (int t = 0; t < a->h.n_tuned; t++) {
        int s = a->h.tuned[t];
        long ea = 0, eb = 0;
        for (size_t i = 0; i < a->n_evals; i++)
            ea += a->evals[i].shape == s;
        for (size_t i = 0; i < b->n_evals; i++)
            eb += b->evals[i].shape == s;
        cr_expect_leq(ea - a->n_alias[s], o.budget, "shape %d: %ld full evaluations", s,
                      ea - a->n_alias[s]);
        cr_expect_leq(eb, o.budget);
        judged_a += ea;
        judged_b += eb;
        for (size_t d = 0; d < a->n_done; d++)
            if (a->done[d].shape == s) { /* D: evals= full ones, aliases= beside */
                cr_expect_eq(a->done[d].evals, ea - a->n_alias[s]);
                cr_expect_eq(a->done[d].aliases, a->n_alias[s]);
            }
    }
    cr_expect_gt(aliases_of(a), 0);
    cr_expect_gt(judged_a, judged_b, "with aliases %ld judged, without %ld", judged_a, judged_b);
    cr_expect_eq(sa.aliases, aliases_of(a));
    cr_expect_eq(sf.aliases, 0);
    kw_journal_free(a);
    kw_journal_free(b);
    fx_close(&f);
}

/* tune's summary: "N evals" are the full ones, the aliases beside them; results.xml
 * says aliases="K" on the shape; verify evaluates them. */
Test(alias, tune_summary_and_verify)
{
    char *dir = kw_tl_tmpdir("kwalias");
    char sp[4096], out[4200];
    snprintf(sp, sizeof sp, "%s/spaces/validate_small.xml", kw_tl_src());
    snprintf(out, sizeof out, "%s/run", dir);
    kw_tl_opts to = {.timeout_s = 240};
    kw_tl_proc r = kw_tl_run(&to, kw_tl_bin(), "tune", "--space", sp, "--threads", "1", "--budget",
                             "60", "--out", out, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, " aliases") != NULL, "%s", r.out);
    kw_tl_free(&r);
    char xp[4300];
    snprintf(xp, sizeof xp, "%s/results.xml", out);
    char *x = kw_tl_slurp(xp);
    cr_expect(strstr(x, " aliases=\"") != NULL);
    free(x);
    r = kw_tl_run(&to, kw_tl_bin(), "verify", out, NULL);
    cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "ok   aliases:") != NULL, "%s", r.out);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* An alias whose full evaluation differs from its original's is caught by verify:
 * a full evaluation's record rewritten as an alias of an earlier, different one
 * (its result replaced by the original's, so the journal itself is consistent and
 * resealed) fails, exit 1, naming the config. */
Test(alias, verify_catches_a_false_alias)
{
    char *dir = kw_tl_tmpdir("kwalias");
    char sp[4096], out[4200];
    snprintf(sp, sizeof sp, "%s/spaces/validate_small.xml", kw_tl_src());
    snprintf(out, sizeof out, "%s/run", dir);
    kw_tl_opts to = {.timeout_s = 240};
    /* exhaustive: no step names an evaluation whose figures the forgery changes */
    kw_tl_proc r = kw_tl_run(&to, kw_tl_bin(), "tune", "--space", sp, "--threads", "1", "--quiet",
                             "--strategy", "exhaustive", "--budget", "120", "--out", out, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    char jp[4300];
    snprintf(jp, sizeof jp, "%s/journal", out);
    kw_journal *j = NULL;
    cr_assert_eq(kw_journal_load(&j, jp), 0, "%s", kw_error_last());
    /* shape 0's first E record (the baseline) and a later full evaluation that differs */
    const kw_jeval *o = NULL, *v = NULL;
    for (size_t i = 0; i < j->n_evals && !v; i++) {
        const kw_jeval *e = &j->evals[i];
        if (e->alias || e->rc != 0)
            continue;
        if (!o) {
            o = e;
            continue;
        }
        if (e->shape != o->shape || e->m[j->h.primary] == o->m[j->h.primary])
            continue;
        int named = 0; /* by a step, a done record or a re-rank: their figures would change */
        for (size_t t = 0; t < j->n_steps; t++)
            named |= j->steps[t].id == e->id || j->steps[t].parent_id == e->id;
        for (size_t t = 0; t < j->n_done; t++)
            named |= j->done[t].best_id == e->id || j->done[t].baseline_id == e->id;
        for (size_t t = 0; t < j->n_reranks; t++)
            named |= j->reranks[t].id == e->id || j->reranks[t].rid == e->id;
        if (!named)
            v = e;
    }
    cr_assert(o && v);
    char vid[20], oid[20];
    snprintf(vid, sizeof vid, "%016llx", (unsigned long long)v->id);
    snprintf(oid, sizeof oid, "%016llx", (unsigned long long)o->id);
    /* the record of v with o's m= g= k= and a=o */
    size_t n;
    char *text = kw_tl_slurp_n(jp, &n);
    char *vl = text + after_line(text, v->record - 1), *ol = text + after_line(text, o->record - 1);
    char *vm = strstr(vl, " m="), *om = strstr(ol, " m="), *oc = strstr(ol, " crc=");
    cr_assert(vm && om && oc);
    char *nl = strchr(vl, '\n');
    cr_assert_not_null(nl);
    size_t cap = n + 4096;
    char *nt = malloc(cap);
    cr_assert_not_null(nt);
    int w = snprintf(nt, cap, "%.*s%.*s a=%s crc=00000000%s", (int)(vm - text), text,
                     (int)(oc - om), om, oid, nl);
    cr_assert(w > 0 && (size_t)w < cap);
    kw_journal_free(j);
    cr_assert_eq(kw_tl_write(jp, nt), 0);
    free(nt);
    free(text);
    cr_assert_eq(kw_journal_reseal(jp), 0, "%s", kw_error_last());
    cr_assert_eq(kw_journal_load(&j, jp), 0, "%s", kw_error_last());
    cr_assert_eq(kw_journal_check(j), 0, "the forged alias is consistent: %s", kw_error_last());
    kw_journal_free(j);
    r = kw_tl_run(&to, kw_tl_bin(), "verify", out, NULL);
    cr_expect_eq(r.status, 1, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "FAIL aliases") != NULL, "%s", r.out);
    cr_expect(strstr(r.err, vid) != NULL, "the message names %s: %s", vid, r.err);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* A measuring evaluator (the test worker, exec) never aliases: no alias=N in the
 * header, no a= on any evaluation, even on a space the model aliases. */
Test(alias, exec_worker_never_aliases)
{
    char *dir = kw_tl_tmpdir("kwalias");
    char sp[4096], out[4200], ev[4300];
    snprintf(sp, sizeof sp, "%s/tests/data/exec/small.xml", kw_tl_src());
    snprintf(out, sizeof out, "%s/run", dir);
    const char *bd = getenv("KW_BUILDDIR");
    snprintf(ev, sizeof ev, "exec:%s/tests/kw_tworker", bd ? bd : ".");
    kw_tl_opts to = {.timeout_s = 240};
    kw_tl_proc r = kw_tl_run(&to, kw_tl_bin(), "tune", "--space", sp, "--evaluator", ev, "--quiet",
                             "--out", out, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    char jp[4300];
    snprintf(jp, sizeof jp, "%s/journal", out);
    char *text = kw_tl_slurp(jp);
    cr_assert_gt(count(text, "\nE "), 0);
    cr_expect_null(strstr(text, " alias="));
    cr_expect_eq(line_of(text, "E ", " a="), -1);
    free(text);
    kw_tl_rmrf(dir);
}

/* Key level 2 (stop 48) leaves out of the key what the serving simulation cannot
 * read: batch_timeout_us at max_batch 1 and placement where cores_per_request takes
 * every core (h100.xml: 4 cores, so one group). A space where both happen, every
 * config judged exhaustively at level 2, at level 1 (stop 47's key) and in full:
 * the same records bit for bit; level 2 aliases configs that differ from their
 * original only in those knobs, level 1 none, and the header records the level.
 * Fails before stop 48 (no level 2: no such alias). */
Test(alias, level_2_leaves_out_what_the_simulation_cannot_read)
{
    char *dir = kw_tl_tmpdir("kwalias2");
    cr_assert_not_null(dir);
    char sp[4200], xml[2048];
    snprintf(sp, sizeof sp, "%s/dispatch.xml", dir);
    snprintf(xml, sizeof xml,
             "<?xml version=\"1.0\"?>\n<space name=\"dispatch\" block=\"llama7b_attn\">\n"
             "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n"
             "  <workload file=\"%s/spaces/workloads/llama7b.xml\"/>\n"
             "  <shape ref=\"attn_decode_kv2048_b32_c16\"/>\n"
             "  <knob name=\"qkv.tile_m\" values=\"64 128\" baseline=\"128\"/>\n"
             "  <knob name=\"max_batch\" values=\"1 4\" baseline=\"4\"/>\n"
             "  <knob name=\"batch_timeout_us\" values=\"0 50 200\" baseline=\"50\"/>\n"
             "  <knob name=\"placement\" values=\"round_robin least_loaded stream_affinity\" "
             "baseline=\"round_robin\"/>\n"
             "  <knob name=\"cores_per_request\" values=\"1 4\" baseline=\"1\"/>\n"
             "  <tuning sim_requests=\"200\" final_requests=\"1000\"/>\n</space>\n",
             kw_tl_src(), kw_tl_src());
    cr_assert_eq(kw_tl_write(sp, xml), 0);
    fx f;
    fx_open_path(&f, sp, 200, dir);
    const kw_knobspace *ks = &f.cfg->space.knobs;
    int mb = kw_knobs_find(ks, "max_batch"), to = kw_knobs_find(ks, "batch_timeout_us"),
        pl = kw_knobs_find(ks, "placement"), cpr = kw_knobs_find(ks, "cores_per_request");
    cr_assert(mb >= 0 && to >= 0 && pl >= 0 && cpr >= 0);
    kw_engine_opts o = opts_of(&f);
    o.strategy = KW_STRATEGY_EXHAUSTIVE;
    cr_assert_eq(run(&f, "l2", &o, 0, NULL), 0, "%s", kw_error_last());
    o.alias = 1;
    cr_assert_eq(run(&f, "l1", &o, 0, NULL), 0, "%s", kw_error_last());
    o.alias = 0;
    cr_assert_eq(run(&f, "full", &o, 0, NULL), 0, "%s", kw_error_last());
    kw_journal *j2 = load(&f, "l2"), *j1 = load(&f, "l1"), *jf = load(&f, "full");
    cr_assert_eq(j2->h.alias, 2);
    cr_assert_eq(j1->h.alias, 1);
    cr_assert_eq(j2->n_evals, jf->n_evals);
    cr_assert_eq(j1->n_evals, jf->n_evals);
    long timeout_only = 0, placement_only = 0, l1_such = 0;
    for (size_t i = 0; i < jf->n_evals; i++) {
        const kw_jeval *y = &jf->evals[i];
        for (int w = 0; w < 2; w++) {
            const kw_jeval *x = w ? &j1->evals[i] : &j2->evals[i];
            cr_assert_eq(x->id, y->id);
            cr_assert_eq(x->rc, y->rc);
            cr_assert_eq(memcmp(x->m, y->m, sizeof(double) * (size_t)jf->h.n_metrics), 0,
                         "level %d: config %016llx differs from its full evaluation", 2 - w,
                         (unsigned long long)x->id);
            cr_assert_str_eq(x->guards, y->guards);
            if (!x->alias)
                continue;
            const kw_jeval *o0 = kw_journal_eval_find(w ? j1 : j2, x->shape, x->alias_of, 0);
            cr_assert_not_null(o0);
            const kw_cand *a = &x->cand, *b = &o0->cand;
            /* the alias and its original differ in that knob alone */
            int one = kw_knobs_cand_distance(ks, a, b) == 1;
            int only_t = one && a->v[to] != b->v[to], only_p = one && a->v[pl] != b->v[pl];
            if (w) {
                l1_such += only_t || only_p;
                continue;
            }
            if (only_t) {
                cr_expect_eq(a->v[mb], 0, "a timeout-only alias at max_batch > 1");
                timeout_only++;
            }
            if (only_p) {
                /* cores_per_request 4 (value 1): one group of h100.xml's 4 cores */
                cr_expect_eq(a->v[cpr], 1, "a placement-only alias on more than one group");
                placement_only++;
            }
        }
    }
    cr_expect_gt(timeout_only, 0, "level 2 aliased no config differing only in the timeout");
    cr_expect_gt(placement_only, 0, "level 2 aliased no config differing only in placement");
    cr_expect_eq(l1_such, 0, "level 1 (stop 47's key) aliased across the dispatcher's knobs");
    cr_expect_gt(aliases_of(j2), aliases_of(j1));
    /* a stop-47 journal (level 1) resumes at its own level, byte for byte */
    kw_engine_opts r;
    int shapes[KW_JOURNAL_SHAPE_MAX];
    kw_engine_opts_init(&r);
    kw_engine_opts_from_header(&r, shapes, &j1->h);
    cr_assert_eq(r.alias, 1);
    size_t n1;
    char *whole = slurp(&f, "l1", &n1);
    cut_resume(&f, whole, n1, count(whole, "\n") / 2, &r);
    free(whole);
    kw_journal_free(j2);
    kw_journal_free(j1);
    kw_journal_free(jf);
    fx_close(&f);
}
