/* test_report.c - the HTML report (every plot present, offline, deterministic,
 * rendered by headless Chromium to a non-blank screenshot), verify on
 * hand-corrupted and planted journals, and the results verbs end to end
 * through the built knobwise on a run of the embedded default made with the
 * real engine and model. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gsl/gsl_errno.h>

#include "kw_audit.h"
#include "kw_engine.h"
#include "kw_eval.h"
#include "kw_load.h"
#include "kw_report.h"
#include "kw_results.h"
#include "kw_rsynth.h"
#include "kw_testutil.h"
#include "kw_verify.h"

static void setup(void) { gsl_set_error_handler_off(); }

TestSuite(report, .init = setup);
TestSuite(verify, .init = setup);
TestSuite(results_cli, .init = setup);

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void rm_rf(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) { /* best effort */ }
}

Test(report, every_plot_is_there_and_offline)
{
    kw_runsum *rs = sy_run();
    kw_sbuf b = {0};
    cr_assert_eq(kw_report_html(&b, rs), 0);
    const char *h = kw_sbuf_cstr(&b);
    cr_assert(strncmp(h, "<!DOCTYPE html>", 15) == 0);
    /* per shape: convergence, waterfall, latency, families; plus the heat map */
    cr_assert_eq(count(h, "<svg "), 4 * SY_NSHAPES + 1);
    cr_assert_eq(count(h, "aria-label=\"convergence of p95_us"), SY_NSHAPES);
    cr_assert_eq(count(h, "aria-label=\"waterfall of p95_us"), SY_NSHAPES);
    cr_assert_eq(count(h, "aria-label=\"latency distribution"), SY_NSHAPES);
    cr_assert_eq(count(h, "aria-label=\"effect by knob family"), SY_NSHAPES);
    cr_assert_eq(count(h, "class=\"cell\""), SY_NSHAPES * SY_NSHAPES);
    cr_assert_eq(count(h, "class=\"incumbent\""), SY_NSHAPES);
    cr_assert_eq(count(h, "<table class=\"guards\">"), SY_NSHAPES);
    /* accepted points are labelled with their knob */
    cr_assert(strstr(h, "<text class=\"knob\"") != NULL);
    cr_assert(strstr(h, ">fuse_attention</text>") != NULL);
    /* the non-portable prefill winner is flagged in the summary and the heat map */
    cr_assert(strstr(h, "worse than that shape's baseline") != NULL);
    /* every family appears in the family plot */
    for (int f = 0; f < KW_FAMILY_COUNT; f++) {
        char want[64];
        snprintf(want, sizeof want, ">%s (", kw_family_name((kw_family)f));
        cr_assert(strstr(h, want) != NULL, "family %s missing", want);
    }
    /* offline: no script, no external resource */
    cr_assert_null(strstr(h, "<script"));
    cr_assert_null(strstr(h, "http://"));
    cr_assert_null(strstr(h, "https://"));
    cr_assert_null(strstr(h, "src="));
    /* deterministic */
    kw_runsum *rs2 = sy_run();
    kw_sbuf b2 = {0};
    kw_report_html(&b2, rs2);
    cr_assert_str_eq(h, kw_sbuf_cstr(&b2));
    kw_sbuf_free(&b2);
    kw_runsum_free(rs2);
    kw_sbuf_free(&b);
    kw_runsum_free(rs);
}

/* Minimal PNG reading: the IHDR size, and whether the file is big enough to
 * hold more than one flat colour (a blank 1200x2000 page deflates to ~10 KB). */
static int png_size(const char *path, long *w, long *h, long *bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    unsigned char hd[24];
    size_t n = fread(hd, 1, sizeof hd, f);
    fseek(f, 0, SEEK_END);
    *bytes = ftell(f);
    fclose(f);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n < 24 || memcmp(hd, sig, 8) != 0 || memcmp(hd + 12, "IHDR", 4) != 0)
        return -1;
    *w = (long)hd[16] << 24 | (long)hd[17] << 16 | (long)hd[18] << 8 | hd[19];
    *h = (long)hd[20] << 24 | (long)hd[21] << 16 | (long)hd[22] << 8 | hd[23];
    return 0;
}

Test(report, renders_in_headless_chromium, .timeout = 120)
{
    const char *chromium = "/usr/bin/chromium";
    if (access(chromium, X_OK) != 0)
        cr_skip_test("chromium is not installed (Debian package chromium)");
    kw_runsum *rs = sy_run();
    kw_sbuf b = {0};
    cr_assert_eq(kw_report_html(&b, rs), 0);
    char *dir = kw_t_tmpdir();
    kw_outfile f = {"report.html", kw_sbuf_cstr(&b), b.len};
    cr_assert_eq(kw_results_commit(dir, &f, 1), 0);
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "timeout 90 %s --headless --no-sandbox --disable-gpu --disable-background-networking "
             "--disable-component-update --disable-sync --no-first-run --user-data-dir='%s/profile' "
             "--screenshot='%s/shot.png' --window-size=1200,2000 'file://%s/report.html' "
             ">'%s/chromium.log' 2>&1",
             chromium, dir, dir, dir, dir);
    int st = system(cmd);
    cr_assert_eq(st, 0, "chromium failed (%d), see %s/chromium.log", st, dir);
    char png[4200];
    snprintf(png, sizeof png, "%s/shot.png", dir);
    long w, h, bytes;
    cr_assert_eq(png_size(png, &w, &h, &bytes), 0, "no PNG screenshot");
    cr_assert_eq(w, 1200);
    cr_assert_eq(h, 2000);
    cr_assert_gt(bytes, 40000, "screenshot is %ld bytes: blank?", bytes);
    rm_rf(dir);
    free(dir);
    kw_sbuf_free(&b);
    kw_runsum_free(rs);
}

/* ---- verify ---- */

/* A journal of the synthetic model made by the engine, in a fresh folder. */
static char *synth_journal(void)
{
    char *dir = kw_t_tmpdir();
    kw_knobspace ks;
    sy_space(&ks);
    kw_evaluator ev = sy_evaluator();
    kw_engine_opts o;
    kw_engine_opts_init(&o);
    o.threads = 1;
    char jp[4096];
    snprintf(jp, sizeof jp, "%s/journal", dir);
    kw_run_info info = {.journal_path = jp, .version = "test", .no_sync = 1};
    cr_assert_eq(kw_engine_run(NULL, &ks, &ev, &o, &info), 0, "%s", kw_error_last());
    return dir;
}

/* Rewrite line `lineno` (1-based) of path through edit(). */
static void edit_line(const char *path, int (*pick)(const char *), void (*edit)(char *, size_t),
                      int reseal)
{
    char *text = kw_t_slurp(path);
    FILE *f = fopen(path, "w");
    int done = 0;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char line[65536];
        snprintf(line, sizeof line, "%s", l);
        if (!done && pick(line)) {
            edit(line, sizeof line);
            done = 1;
        }
        fprintf(f, "%s\n", line);
    }
    fclose(f);
    free(text);
    cr_assert(done, "no line to edit");
    if (reseal)
        cr_assert_eq(kw_journal_reseal(path), 0, "%s", kw_error_last());
}

static int pick_mid_eval(const char *l)
{
    static int seen;
    return l[0] == 'E' && ++seen == 5;
}

static void flip_digit(char *l, size_t n)
{
    (void)n;
    char *m = strstr(l, " m=");
    cr_assert_not_null(m);
    m += 3;
    while (*m && (*m < '0' || *m > '9'))
        m++;
    *m = *m == '7' ? '8' : '7';
}

Test(verify, intact_journal_passes)
{
    char *dir = synth_journal();
    char jp[4096];
    snprintf(jp, sizeof jp, "%s/journal", dir);
    kw_sbuf log = {0};
    cr_assert_eq(kw_verify_journal(&log, jp), 0, "%s", kw_sbuf_cstr(&log));
    cr_assert(strstr(kw_sbuf_cstr(&log), "each changes exactly one knob") != NULL);
    cr_assert(strstr(kw_sbuf_cstr(&log), "ok   net path: ") != NULL, "%s", kw_sbuf_cstr(&log));
    kw_sbuf_free(&log);
    rm_rf(dir);
    free(dir);
}

Test(verify, hand_corrupted_journal_fails_naming_the_record)
{
    char *dir = synth_journal();
    char jp[4096];
    snprintf(jp, sizeof jp, "%s/journal", dir);
    edit_line(jp, pick_mid_eval, flip_digit, 0);
    kw_sbuf log = {0};
    cr_assert_eq(kw_verify_journal(&log, jp), KW_ECORRUPT);
    cr_assert(strstr(kw_sbuf_cstr(&log), "FAIL journal checksums") != NULL, "%s", kw_sbuf_cstr(&log));
    cr_assert(strstr(kw_sbuf_cstr(&log), ": record ") != NULL, "%s", kw_sbuf_cstr(&log));
    kw_sbuf_free(&log);
    rm_rf(dir);
    free(dir);
}

static int pick_step(const char *l)
{
    /* a main-phase step that is not the first of its shape */
    return l[0] == 'T' && strstr(l, " step=4 ") != NULL;
}

/* Change a second knob in the step's candidate (c= indices joined by '.'):
 * the knob the step names keeps its new value, another one moves too. */
static void second_knob(char *l, size_t n)
{
    (void)n;
    char *c = strstr(l, " c=");
    cr_assert_not_null(c);
    c += 3;
    /* knob 5 (placement, 3 values): 0 -> 1 or back */
    int field = 0;
    for (char *p = c; *p && *p != ' '; p++) {
        if (field == SY_PLACE && *p >= '0' && *p <= '9') {
            *p = *p == '0' ? '1' : '0';
            break;
        }
        if (*p == '.')
            field++;
    }
}

Test(verify, planted_two_knob_step_fails_naming_the_step)
{
    char *dir = synth_journal();
    char jp[4096];
    snprintf(jp, sizeof jp, "%s/journal", dir);
    edit_line(jp, pick_step, second_knob, 1); /* resealed: checksums are fine */
    kw_sbuf log = {0};
    int rc = kw_verify_journal(&log, jp);
    cr_assert_eq(rc, KW_ECORRUPT, "%s", kw_sbuf_cstr(&log));
    cr_assert(strstr(kw_sbuf_cstr(&log), "ok   journal checksums") != NULL, "%s", kw_sbuf_cstr(&log));
    cr_assert(strstr(kw_error_last(), "step 4 changes 2 knobs") != NULL, "%s", kw_error_last());
    kw_sbuf_free(&log);
    rm_rf(dir);
    free(dir);
}

/* ---- the verbs end to end, on the embedded default ---- */

static char *model_run(long budget)
{
    kw_config *cfg = NULL;
    cr_assert_eq(kw_config_load_default(&cfg), 0, "%s", kw_error_last());
    kw_model_opts mo = {.drift = 1, .seed = 1};
    kw_model_eval *me = NULL;
    cr_assert_eq(kw_model_eval_new(&me, cfg, &mo), 0);
    const kw_evaluator *ev = kw_model_eval_iface(me);
    kw_engine_opts o;
    kw_engine_opts_init(&o);
    o.budget = budget;
    o.threads = 2;
    o.min_effect_pct = cfg->space.min_effect_pct;
    o.alpha = cfg->space.alpha;
    char *dir = kw_t_tmpdir();
    char jp[4096];
    snprintf(jp, sizeof jp, "%s/journal", dir);
    const char *keys[] = {"owner", "model_seed"}, *vals[] = {"oncall@example.com", "1"};
    const char *in_names[] = {"space", "accelerator", "workload"};
    const char *in_hashes[] = {cfg->input_hash[0], cfg->input_hash[1], cfg->input_hash[2]};
    kw_run_info info = {.journal_path = jp, .version = "test", .n_inputs = 3,
                        .input_names = in_names, .input_hashes = in_hashes, .n_attrs = 2,
                        .attr_keys = keys, .attr_values = vals, .no_sync = 1};
    cr_assert_eq(kw_engine_run(NULL, &cfg->space.knobs, ev, &o, &info), 0, "%s", kw_error_last());
    cr_assert_eq(kw_results_write(dir, cfg, ev, NULL, "p95_us"), 0, "%s", kw_error_last());
    kw_model_eval_free(me);
    kw_config_free(cfg);
    return dir;
}

static int have_bin(void)
{
    return access(kw_t_bin(), X_OK) == 0;
}

Test(results_cli, verbs_on_a_model_run, .timeout = 300)
{
    if (!have_bin())
        cr_skip_test("no knobwise binary at %s", kw_t_bin());
    char *dir = model_run(40);
    char args[8192];
    /* results.xml validates through the product's own validate verb */
    snprintf(args, sizeof args, "validate '%s/results.xml'", dir);
    kw_run r = kw_t_run(args, NULL);
    cr_assert_eq(r.status, 0, "validate: %s", r.err);
    kw_t_free(&r);

    snprintf(args, sizeof args, "verify '%s' --sample 5", dir);
    r = kw_t_run(args, NULL);
    cr_assert_eq(r.status, 0, "verify: %s%s", r.out, r.err);
    cr_assert(strstr(r.out, "ok   re-evaluation") != NULL, "%s", r.out);
    kw_t_free(&r);

    snprintf(args, sizeof args, "audit '%s'", dir);
    r = kw_t_run(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "net path: the ") && strstr(r.out, "reproduce: knobwise eval --seed 1 --shape"),
              "%s", r.out);
    cr_assert(strstr(r.out, "  exploration: ") && strstr(r.out, "sensitivity: "), "%s", r.out);
    cr_assert_null(strstr(r.out, "accepted path (each step"), "the exploration is behind a flag");
    kw_t_free(&r);
    snprintf(args, sizeof args, "audit '%s' --exploration", dir);
    r = kw_t_run(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "accepted path (each step") && strstr(r.out, "net path: the "), "%s", r.out);
    kw_t_free(&r);

    snprintf(args, sizeof args, "audit '%s' --shape no_such_shape", dir);
    r = kw_t_run(args, NULL);
    cr_assert_eq(r.status, 2);
    kw_t_free(&r);

    snprintf(args, sizeof args, "report '%s' -o '%s/r.html'", dir, dir);
    r = kw_t_run(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_t_free(&r);
    char p[4200];
    snprintf(p, sizeof p, "%s/r.html", dir);
    char *html = kw_t_slurp(p);
    cr_assert(strstr(html, "class=\"cell\"") != NULL);
    free(html);

    snprintf(args, sizeof args, "recommend '%s' --all", dir);
    r = kw_t_run(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_t_free(&r);
    snprintf(p, sizeof p, "%s/mappings.csv", dir);
    char *maps = kw_t_slurp(p);
    cr_assert(strncmp(maps, "shape,config_id,borrowed_from,", 30) == 0, "%.80s", maps);
    free(maps);

    /* a shape nobody tuned: borrowed, evaluated, compared with its baseline */
    snprintf(args, sizeof args, "recommend '%s' --batch 2 --seq 1024 --streams 2 --phase decode", dir);
    r = kw_t_run(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "BORROWED") || strstr(r.out, "BASELINE"), "%s", r.out);
    kw_t_free(&r);

    /* bisect baseline -> best: the p95 contributions add up to the total */
    snprintf(args, sizeof args, "bisect '%s:baseline' '%s:best' --shape attn_decode_kv512_b1_c1 "
             "--orders 3 --format csv", dir, dir);
    r = kw_t_run(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    double sum = 0, total = NAN;
    char *save = NULL;
    for (char *l = strtok_r(r.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char knob[128], from[64], to[64], metric[64];
        double mean, mn, mx;
        if (strncmp(l, "total,,,p95_us,", 15) == 0)
            total = atof(l + 15);
        else if (sscanf(l, "%127[^,],%63[^,],%63[^,],%63[^,],%lf,%lf,%lf", knob, from, to, metric,
                        &mean, &mn, &mx) == 7 && strcmp(metric, "p95_us") == 0)
            sum += mean;
    }
    cr_assert(isfinite(total));
    cr_assert_float_eq(sum, total, 1e-3, "contributions %f, total %f", sum, total);
    kw_t_free(&r);
    rm_rf(dir);
    free(dir);
}

Test(results_cli, verify_fails_on_corrupted_run, .timeout = 300)
{
    if (!have_bin())
        cr_skip_test("no knobwise binary at %s", kw_t_bin());
    char *dir = model_run(30);
    char jp[4200], args[8192];
    snprintf(jp, sizeof jp, "%s/journal", dir);
    edit_line(jp, pick_mid_eval, flip_digit, 0);
    snprintf(args, sizeof args, "verify '%s'", dir);
    kw_run r = kw_t_run(args, NULL);
    cr_assert_eq(r.status, 1, "%s%s", r.out, r.err);
    cr_assert(strstr(r.err, "record ") != NULL, "%s", r.err);
    kw_t_free(&r);
    /* a result file edited by hand no longer follows from the (resealed) journal */
    rm_rf(dir);
    free(dir);
    dir = model_run(30);
    char p[4200];
    snprintf(p, sizeof p, "%s/ranked.csv", dir);
    FILE *f = fopen(p, "a");
    fputs("x,1,0000000000000000,,,,,,,,,,,,\n", f);
    fclose(f);
    snprintf(args, sizeof args, "verify '%s' --no-eval", dir);
    r = kw_t_run(args, NULL);
    cr_assert_eq(r.status, 1, "%s%s", r.out, r.err);
    cr_assert(strstr(r.err, "ranked.csv") != NULL, "%s", r.err);
    kw_t_free(&r);
    /* usage errors */
    r = kw_t_run("verify", NULL);
    cr_assert_eq(r.status, 2);
    kw_t_free(&r);
    snprintf(args, sizeof args, "verify '%s/nope'", dir);
    r = kw_t_run(args, NULL);
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strstr(r.err, "not a run folder") != NULL, "%s", r.err);
    kw_t_free(&r);
    rm_rf(dir);
    free(dir);
}
