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
#include <libxml/parser.h>
#include <libxml/xpath.h>

#include "kw_audit.h"
#include "kw_engine.h"
#include "kw_eval.h"
#include "kw_load.h"
#include "kw_report.h"
#include "kw_results.h"
#include "kw_rsynth.h"
#include "kw_run.h"
#include "kw_runfolder.h"
#include "lib/kw_tl.h"
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

/* A synthetic latency sample per shape: uniform on [base, 2 base] for the
 * baseline and [base/2, base] for the recommendation (n points, sorted). */
#define RP_N 400
static double rp_lat[2][SY_NSHAPES][RP_N];
static kw_report_dist rp_dist[2][SY_NSHAPES];

static kw_report_lat rp_lat_of(const kw_runsum *rs)
{
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < rs->n_shapes; s++) {
            double lo = k ? sy_base[s] / 2 : sy_base[s];
            for (int i = 0; i < RP_N; i++)
                rp_lat[k][s][i] = lo + lo * i / (RP_N - 1);
            rp_dist[k][s] = (kw_report_dist){RP_N, rp_lat[k][s]};
        }
    return (kw_report_lat){rp_dist[0], rp_dist[1]};
}

/* The text between the first `open` at or after from and the next `close`. */
static char *rp_between(const char *from, const char *open, const char *close)
{
    const char *a = strstr(from, open);
    cr_assert_not_null(a, "no %s", open);
    const char *z = strstr(a, close);
    cr_assert_not_null(z);
    return strndup(a, (size_t)(z - a));
}

Test(report, every_section_is_there_and_offline)
{
    kw_runsum *rs = sy_run();
    kw_report_lat lat = rp_lat_of(rs);
    kw_sbuf b = {0};
    cr_assert_eq(kw_report_html_lat(&b, rs, &lat), 0);
    const char *h = kw_sbuf_cstr(&b);
    cr_assert(strncmp(h, "<!DOCTYPE html>", 15) == 0);
    /* per shape: waterfall, convergence, CDF, families, sensitivity; plus the heat map */
    cr_assert_eq(count(h, "<svg "), 5 * SY_NSHAPES + 1);
    cr_assert_eq(count(h, "<section class=\"shape\">"), SY_NSHAPES);
    cr_assert_eq(count(h, "aria-label=\"convergence of p95_us"), SY_NSHAPES);
    cr_assert_eq(count(h, "aria-label=\"waterfall of p95_us"), SY_NSHAPES);
    cr_assert_eq(count(h, "aria-label=\"latency distribution"), SY_NSHAPES);
    cr_assert_eq(count(h, "aria-label=\"sensitivity of p95_us"), SY_NSHAPES);
    cr_assert_eq(count(h, "aria-label=\"effect by knob family"), SY_NSHAPES);
    cr_assert_eq(count(h, "class=\"cell\""), SY_NSHAPES * SY_NSHAPES);
    cr_assert_eq(count(h, "<table class=\"guards\">"), SY_NSHAPES);
    cr_assert_eq(count(h, "<table class=\"mapping\">"), SY_NSHAPES);
    cr_assert_eq(count(h, "<polyline class=\"rec\""), SY_NSHAPES);
    cr_assert_eq(count(h, "<polyline class=\"base\""), SY_NSHAPES);
    /* the mapping lists every knob of every shape, the changed ones marked;
     * the waterfall has one labelled bar per net step (+ baseline and
     * recommendation), and the convergence plot labels exactly those steps */
    const char *at = h;
    int changed_total = 0;
    for (int si = 0; si < rs->n_shapes; si++) {
        const kw_rs_shape *s = &rs->shapes[si];
        int d = kw_knobs_cand_distance(&rs->ks, &s->configs[s->baseline].cand,
                                       &s->configs[s->final].cand);
        changed_total += d;
        char *wf = rp_between(at, "<svg class=\"waterfall\"", "</svg>");
        cr_assert_eq(count(wf, "<text class=\"label\""), d + 2, "shape %s", s->name);
        char *cv = rp_between(at, "<svg class=\"convergence\"", "</svg>");
        cr_assert_eq(count(cv, "<circle class=\"shipped\""), d, "shape %s", s->name);
        cr_assert_eq(count(cv, "<text class=\"knob\""), d);
        /* no negative tick anywhere on the value axes */
        for (const char *t = cv; (t = strstr(t, "<text class=\"tick\"")) != NULL; t++) {
            const char *v = strchr(t, '>') + 1;
            cr_assert(*v != '-', "negative tick %.20s", v);
        }
        at = strstr(at, "<svg class=\"sensitivity\"") + 1;
        free(wf);
        free(cv);
    }
    cr_assert_eq(count(h, "<tr class=\"changed\">"), changed_total);
    /* the planted regression of placement=stream_affinity shows in the sensitivity */
    cr_assert(strstr(h, "stream_affinity +") != NULL);
    /* the non-portable prefill winner is flagged in the summary and the heat map */
    cr_assert(strstr(h, "worse than that shape's baseline") != NULL);
    for (int f = 0; f < KW_FAMILY_COUNT; f++) {
        char want[64];
        snprintf(want, sizeof want, ">%s (", kw_audit_family_name((kw_family)f));
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
    kw_report_html_lat(&b2, rs2, &lat);
    cr_assert_str_eq(h, kw_sbuf_cstr(&b2));
    kw_sbuf_free(&b2);
    kw_runsum_free(rs2);
    /* a winner that cannot keep up on another shape reads "saturated" there */
    int n = rs->n_shapes;
    snprintf(rs->port[SY_S1 * n + SY_S2].guards, KW_GUARDS_LEN, "saturated");
    kw_sbuf b4 = {0};
    cr_assert_eq(kw_report_html_lat(&b4, rs, &lat), 0);
    char *heat = rp_between(kw_sbuf_cstr(&b4), "<svg class=\"heatmap\"", "</svg>");
    cr_assert_eq(count(heat, ">saturated"), 1, "%s", heat);
    free(heat);
    kw_sbuf_free(&b4);
    /* without distributions the latency plot says what it needs */
    kw_sbuf b3 = {0};
    cr_assert_eq(kw_report_html(&b3, rs), 0);
    cr_assert(strstr(kw_sbuf_cstr(&b3), "Distribution needs the run's inputs") != NULL);
    kw_sbuf_free(&b3);
    kw_sbuf_free(&b);
    kw_runsum_free(rs);
}

/* Minimal PNG reading: the IHDR size, and whether the file is big enough to
 * hold more than one flat colour (a blank page deflates to ~10 KB). */
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

/* Measured in the browser, written into the page by a test-only script (the
 * report itself has none): the window width, elements reaching past it, the
 * sections a reader looks for, negative ticks. */
static const char rp_check_js[] =
    "<script>addEventListener('load',function(){"
    "var W=document.documentElement.clientWidth,wide=0,first='';"
    "document.querySelectorAll('body *').forEach(function(e){var r=e.getBoundingClientRect();"
    "if(r.width>0&&(r.right>W+1||r.left<-1)){wide++;if(!first)first=e.tagName+'.'+(e.getAttribute('class')||'');}});"
    "var q=function(s){return document.querySelectorAll(s).length};var neg=0;"
    "document.querySelectorAll('svg text.tick').forEach(function(t){if(parseFloat(t.textContent)<0)neg++;});"
    "var p=document.createElement('pre');p.id='kwcheck';"
    "p.textContent='KW'+'RESULT W='+W+' scrollw='+document.documentElement.scrollWidth+' wide='+wide+"
    "' shapes='+q('section.shape')+' mapping='+q('table.mapping tr.changed')+' waterfall='+q('svg.waterfall')+"
    "' convergence='+q('svg.convergence polyline.best')+' cdf='+q('svg.cdf polyline.rec')+"
    "' sensitivity='+q('svg.sensitivity')+' heat='+q('svg.heatmap rect.cell')+' guards='+q('table.guards')+"
    "' neg='+neg+' first='+first+' END';document.body.appendChild(p);});</script>";

static long rp_field(const char *text, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, " %s=", key);
    const char *p = strstr(text, k);
    cr_assert_not_null(p, "no %s in the browser's check", key);
    return strtol(p + strlen(k), NULL, 10);
}

/* Each shape's section ends with the disproof criteria of the shipped claim,
 * the ones results.xml carries under its rank-1 rollback (DESIGN: every
 * recommended configuration carries its disproof criteria). The report, what a
 * person reads, showed the guards and the roll-back targets but none of them:
 * they were only in results.xml. */
Test(report, each_shape_lists_the_disproof_criteria_of_its_claim)
{
    kw_runsum *rs = sy_run();
    kw_report_lat lat = rp_lat_of(rs);
    kw_sbuf b = {0}, x = {0};
    cr_assert_eq(kw_report_html_lat(&b, rs, &lat), 0);
    cr_assert_eq(kw_results_xml(&x, rs), 0);
    const char *h = kw_sbuf_cstr(&b), *xml = kw_sbuf_cstr(&x);
    cr_assert_eq(count(h, "<ul class=\"disproof\">"), SY_NSHAPES);
    const char *sec = h, *cfg = xml;
    for (int si = 0; si < rs->n_shapes; si++) {
        sec = strstr(sec + 1, "<section class=\"shape\">");
        cr_assert_not_null(sec);
        char *list = rp_between(sec, "<ul class=\"disproof\">", "</ul>");
        cfg = strstr(cfg + 1, "<config rank=\"1\"");
        cr_assert_not_null(cfg);
        char *dis = rp_between(cfg, "<disproof ", "</disproof>");
        int n = 0;
        for (const char *c = dis; (c = strstr(c, "<criterion>")) != NULL; n++) {
            c += strlen("<criterion>");
            /* the XML's text (no markup in the criteria; a quote stays a quote
             * there) as the report escapes it */
            char text[4096];
            size_t w = (size_t)snprintf(text, sizeof text, "<li>");
            for (const char *e = strstr(c, "</criterion>"); c < e && w < sizeof text - 16; c++)
                w += (size_t)snprintf(text + w, sizeof text - w, "%s",
                                      *c == '\'' ? "&#39;" : *c == '"' ? "&quot;" : (char[2]){*c, 0});
            snprintf(text + w, sizeof text - w, "</li>");
            cr_assert(strstr(list, text) != NULL, "shape %s: %s not in the report's list",
                      rs->shapes[si].name, text);
        }
        cr_assert_gt(n, 2, "shape %s: %d criteria", rs->shapes[si].name, n);
        cr_assert_eq(count(list, "<li>"), n, "shape %s", rs->shapes[si].name);
        free(list);
        free(dis);
    }
    kw_sbuf_free(&b);
    kw_sbuf_free(&x);
    kw_runsum_free(rs);
}

/* Renders the report in headless Chromium at a laptop's width (1366 px):
 * every section is in the DOM, nothing is wider than the page, no negative
 * tick, and the screenshot is not blank. Skips (as before) when chromium is
 * not installed, except where KW_REQUIRE_CHROMIUM=1 (.ci/run installs it and
 * sets that), where it fails. */
Test(report, renders_in_headless_chromium)
{
    KW_TL_HANG_GUARD(180);
    const char *chromium = "/usr/bin/chromium";
    if (access(chromium, X_OK) != 0) {
        /* .ci/run sets KW_REQUIRE_CHROMIUM: there a missing browser fails */
        const char *req = getenv("KW_REQUIRE_CHROMIUM");
        cr_assert(!(req && req[0] == '1'), "chromium is required here (KW_REQUIRE_CHROMIUM=1) "
                                            "but %s is missing", chromium);
        cr_skip_test("chromium is not installed (Debian package chromium)");
    }
    kw_runsum *rs = sy_run();
    kw_report_lat lat = rp_lat_of(rs);
    kw_sbuf b = {0};
    cr_assert_eq(kw_report_html_lat(&b, rs, &lat), 0);
    char *dir = kw_tl_tmpdir("kwtest");
    /* the page as shipped, and a copy with the measuring script */
    const char *html = kw_sbuf_cstr(&b);
    const char *body_end = strstr(html, "</body>");
    cr_assert_not_null(body_end);
    kw_sbuf c = {0};
    kw_sbuf_putn(&c, html, (size_t)(body_end - html));
    kw_sbuf_puts(&c, rp_check_js);
    kw_sbuf_puts(&c, body_end);
    kw_outfile f[2] = {{"report.html", html, b.len}, {"check.html", kw_sbuf_cstr(&c), c.len}};
    cr_assert_eq(kw_results_commit(dir, f, 2), 0);
    static const char flags[] =
        "--headless --no-sandbox --disable-gpu --disable-background-networking "
        "--disable-component-update --disable-sync --no-first-run --window-size=1366,900";
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "timeout 90 %s %s --user-data-dir='%s/profile' --virtual-time-budget=5000 --dump-dom "
             "'file://%s/check.html' >'%s/dom.html' 2>'%s/chromium.log'",
             chromium, flags, dir, dir, dir, dir);
    int st = system(cmd);
    cr_assert_eq(st, 0, "chromium failed (%d), see %s/chromium.log", st, dir);
    char p[4200];
    snprintf(p, sizeof p, "%s/dom.html", dir);
    char *dom = kw_tl_slurp(p);
    const char *chk = strstr(dom, "KWRESULT ");
    cr_assert_not_null(chk, "the check script did not run: %.300s", dom);
    cr_log_info("%.400s", chk);
    long W = rp_field(chk, "W");
    cr_assert(W > 1200 && W <= 1366, "window width %ld", W);
    cr_assert_eq(rp_field(chk, "wide"), 0, "elements wider than the page: %.300s", chk);
    cr_assert_leq(rp_field(chk, "scrollw"), W, "the page scrolls sideways: %.300s", chk);
    cr_assert_eq(rp_field(chk, "shapes"), SY_NSHAPES);
    cr_assert_gt(rp_field(chk, "mapping"), 0);
    cr_assert_eq(rp_field(chk, "waterfall"), SY_NSHAPES);
    cr_assert_eq(rp_field(chk, "convergence"), SY_NSHAPES);
    cr_assert_eq(rp_field(chk, "cdf"), SY_NSHAPES);
    cr_assert_eq(rp_field(chk, "sensitivity"), SY_NSHAPES);
    cr_assert_eq(rp_field(chk, "heat"), SY_NSHAPES * SY_NSHAPES);
    cr_assert_eq(rp_field(chk, "guards"), SY_NSHAPES);
    cr_assert_eq(rp_field(chk, "neg"), 0);
    free(dom);
    /* and a screenshot of the page as shipped, at the same width */
    snprintf(cmd, sizeof cmd,
             "timeout 90 %s %s --user-data-dir='%s/profile2' --screenshot='%s/shot.png' "
             "'file://%s/report.html' >'%s/chromium2.log' 2>&1",
             chromium, flags, dir, dir, dir, dir);
    st = system(cmd);
    cr_assert_eq(st, 0, "chromium failed (%d), see %s/chromium2.log", st, dir);
    snprintf(p, sizeof p, "%s/shot.png", dir);
    long w, h, bytes;
    cr_assert_eq(png_size(p, &w, &h, &bytes), 0, "no PNG screenshot");
    cr_assert_eq(w, 1366);
    cr_assert_eq(h, 900);
    cr_assert_gt(bytes, 40000, "screenshot is %ld bytes: blank?", bytes);
    rm_rf(dir);
    free(dir);
    kw_sbuf_free(&c);
    kw_sbuf_free(&b);
    kw_runsum_free(rs);
}

/* ---- verify ---- */

/* A journal of the synthetic model made by the engine, in a fresh folder. */
static char *synth_journal(void)
{
    char *dir = kw_tl_tmpdir("kwtest");
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
    char *text = kw_tl_slurp(path);
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
    cr_assert_eq(kw_load_config_default(&cfg), 0, "%s", kw_error_last());
    kw_model_opts mo = {.drift = 1, .seed = 1};
    kw_model_eval *me = NULL;
    cr_assert_eq(kw_eval_new(&me, cfg, &mo), 0);
    const kw_evaluator *ev = kw_eval_iface(me);
    kw_engine_opts o;
    kw_engine_opts_init(&o);
    o.budget = budget;
    o.threads = 2;
    o.min_effect_pct = cfg->space.min_effect_pct;
    o.alpha = cfg->space.alpha;
    char *dir = kw_tl_tmpdir("kwtest");
    char jp[4096];
    snprintf(jp, sizeof jp, "%s/journal", dir);
    const char *keys[] = {"owner", "model_seed"}, *vals[] = {"oncall@example.com", "1"};
    const char *in_names[] = {"space", "accelerator", "workload"};
    const char *in_hashes[] = {cfg->input_hash[0], cfg->input_hash[1], cfg->input_hash[2]};
    kw_run_info info = {.journal_path = jp, .version = "test", .n_inputs = 3,
                        .input_names = in_names, .input_hashes = in_hashes, .n_attrs = 2,
                        .attr_keys = keys, .attr_values = vals, .no_sync = 1};
    cr_assert_eq(kw_engine_run(NULL, &cfg->space.knobs, ev, &o, &info), 0, "%s", kw_error_last());
    cr_assert_eq(kw_run_results(dir, cfg, NULL, "p95_us", ev, NULL, NULL, 0), 0, "%s", kw_error_last());
    kw_eval_free(me);
    kw_load_config_free(cfg);
    return dir;
}

static int have_bin(void)
{
    return access(kw_tl_bin(), X_OK) == 0;
}

Test(results_cli, verbs_on_a_model_run)
{
    KW_TL_HANG_GUARD(300);
    cr_assert(have_bin(), "no knobwise binary at %s", kw_tl_bin());
    char *dir = model_run(40);
    char args[8192];
    /* results.xml validates through the product's own validate verb */
    snprintf(args, sizeof args, "validate '%s/results.xml'", dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "validate: %s", r.err);
    kw_tl_free(&r);

    snprintf(args, sizeof args, "verify '%s' --sample 5", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "verify: %s%s", r.out, r.err);
    cr_assert(strstr(r.out, "ok   re-evaluation") != NULL, "%s", r.out);
    kw_tl_free(&r);
    /* --remeasure on a model run: a usage error before any verdict line
     * (main's binary printed every "ok" line, then refused) */
    snprintf(args, sizeof args, "verify '%s' --remeasure 2", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 2, "verify --remeasure: %s%s", r.out, r.err);
    cr_assert(strstr(r.err, "not a measured run (its journal names no worker)"), "%s", r.err);
    cr_assert_str_empty(r.out, "a verdict was printed before the refusal: %s", r.out);
    kw_tl_free(&r);

    snprintf(args, sizeof args, "audit '%s'", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "net path: the ") && strstr(r.out, "reproduce: knobwise eval --seed 1 --shape"),
              "%s", r.out);
    cr_assert(strstr(r.out, "  exploration: ") && strstr(r.out, "sensitivity: "), "%s", r.out);
    cr_assert_null(strstr(r.out, "accepted path (each step"), "the exploration is behind a flag");
    kw_tl_free(&r);
    snprintf(args, sizeof args, "audit '%s' --exploration", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "accepted path (each step") && strstr(r.out, "net path: the "), "%s", r.out);
    kw_tl_free(&r);

    snprintf(args, sizeof args, "audit '%s' --shape no_such_shape", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 2);
    kw_tl_free(&r);

    snprintf(args, sizeof args, "report '%s' -o '%s/r.html'", dir, dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    char p[4200];
    snprintf(p, sizeof p, "%s/r.html", dir);
    char *html = kw_tl_slurp(p);
    cr_assert(strstr(html, "class=\"cell\"") != NULL);
    /* the model run's distributions were re-simulated: a CDF per shape */
    cr_assert_gt(count(html, "<polyline class=\"rec\""), 0);
    cr_assert_null(strstr(html, "Distribution needs the run's inputs"));
    /* bounded by knobs and shapes, not by steps (the default run: ~175 kB) */
    cr_assert_lt(strlen(html), 1000000, "report is %zu bytes", strlen(html));
    free(html);

    snprintf(args, sizeof args, "recommend '%s' --all", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/mappings.csv", dir);
    char *maps = kw_tl_slurp(p);
    cr_assert(strncmp(maps, "shape,config_id,borrowed_from,", 30) == 0, "%.80s", maps);
    free(maps);

    /* a shape nobody tuned: borrowed, evaluated, compared with its baseline */
    snprintf(args, sizeof args, "recommend '%s' --batch 2 --seq 1024 --streams 2 --phase decode", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "BORROWED") || strstr(r.out, "BASELINE"), "%s", r.out);
    kw_tl_free(&r);

    /* bisect baseline -> best: the p95 contributions add up to the total */
    snprintf(args, sizeof args, "bisect '%s:baseline' '%s:best' --shape attn_decode_kv512_b1_c1 "
             "--orders 3 --format csv", dir, dir);
    r = kw_tl_sh(args, NULL);
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
    kw_tl_free(&r);
    rm_rf(dir);
    free(dir);
}

Test(results_cli, verify_fails_on_corrupted_run)
{
    KW_TL_HANG_GUARD(300);
    cr_assert(have_bin(), "no knobwise binary at %s", kw_tl_bin());
    char *dir = model_run(30);
    char jp[4200], args[8192];
    snprintf(jp, sizeof jp, "%s/journal", dir);
    edit_line(jp, pick_mid_eval, flip_digit, 0);
    snprintf(args, sizeof args, "verify '%s'", dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 1, "%s%s", r.out, r.err);
    cr_assert(strstr(r.err, "record ") != NULL, "%s", r.err);
    kw_tl_free(&r);
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
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 1, "%s%s", r.out, r.err);
    cr_assert(strstr(r.err, "ranked.csv") != NULL, "%s", r.err);
    kw_tl_free(&r);
    /* a net path in results.xml that is not the journal's: one step's id changed
     * by hand (still a valid id, so the schema passes) */
    rm_rf(dir);
    free(dir);
    dir = model_run(30);
    snprintf(p, sizeof p, "%s/results.xml", dir);
    char *xml = kw_tl_slurp(p);
    char *st = strstr(xml, "<step n=\"1\"");
    cr_assert_not_null(st, "no net path in results.xml");
    char *id = strstr(st, " id=\"");
    cr_assert_not_null(id);
    id[5] = id[5] == 'a' ? 'b' : 'a';
    f = fopen(p, "w");
    fputs(xml, f);
    fclose(f);
    free(xml);
    snprintf(args, sizeof args, "verify '%s' --no-eval", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 1, "%s%s", r.out, r.err);
    cr_assert(strstr(r.err, "net step 1 does not land on") != NULL, "%s", r.err);
    kw_tl_free(&r);
    /* usage errors */
    r = kw_tl_sh("verify", NULL);
    cr_assert_eq(r.status, 2);
    kw_tl_free(&r);
    snprintf(args, sizeof args, "verify '%s/nope'", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strstr(r.err, "not a run folder") != NULL, "%s", r.err);
    kw_tl_free(&r);
    rm_rf(dir);
    free(dir);
}

/* A knob value of results.xml edited after the run: the recommendation's (what
 * libknobwise hands a runtime to deploy), a roll-back target's, the
 * baseline's. Each keeps its id, so the schema and verify's id checks passed
 * (exit 0, "verified") while `export` refused the same file; now verify
 * names the file, the line of the configuration and its shape, exit 1. */
Test(results_cli, verify_catches_a_knob_value_edited_in_results_xml)
{
    KW_TL_HANG_GUARD(300);
    cr_assert(have_bin(), "no knobwise binary at %s", kw_tl_bin());
    char *dir = model_run(30);
    char p[4200], args[8192];
    snprintf(p, sizeof p, "%s/results.xml", dir);
    char *orig = kw_tl_slurp(p);
    static const char *const where[] = {"<config rank=\"1\"", "<target kind=\"parent\"",
                                        "<target kind=\"baseline\"", "<baseline "};
    for (size_t w = 0; w < sizeof where / sizeof where[0]; w++) {
        char *xml = strdup(orig);
        char *el = strstr(xml, where[w]);
        cr_assert_not_null(el, "no %s in results.xml", where[w]);
        long line = 1;
        for (const char *c = xml; c < el; c++)
            line += *c == '\n';
        /* its first knob's value, one character changed (still a plain value) */
        char *v = strstr(strstr(el, "<knob name=\""), " value=\"");
        cr_assert_not_null(v);
        v += strlen(" value=\"");
        *v = *v == '1' ? '2' : '1';
        FILE *f = fopen(p, "w");
        fputs(xml, f);
        fclose(f);
        free(xml);
        snprintf(args, sizeof args, "verify '%s' --no-eval", dir);
        kw_tl_proc r = kw_tl_sh(args, NULL);
        char want[4300];
        snprintf(want, sizeof want, "%s:%ld: shape ", p, line);
        cr_assert_eq(r.status, 1, "%s: %s%s", where[w], r.out, r.err);
        cr_assert(strstr(r.err, want) && strstr(r.err, "its knob values are not those of its id"),
                  "%s: %s", where[w], r.err);
        cr_assert(strstr(r.out, "FAIL results follow from the journal"), "%s", r.out);
        kw_tl_free(&r);
    }
    /* the file as written verifies */
    FILE *f = fopen(p, "w");
    fputs(orig, f);
    fclose(f);
    free(orig);
    snprintf(args, sizeof args, "verify '%s' --no-eval", dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    kw_tl_free(&r);
    rm_rf(dir);
    free(dir);
}

/* A model run's portability.csv (each winner evaluated on every shape after
 * the search) with one cell edited: a vs_best_pct made 0. verify compared
 * ranked.csv and audit.csv with the journal but left this file out ("a model
 * run's is an evaluation after the run"), so it verified (exit 0); now it is
 * evaluated again and compared (FILE:LINE, exit 1), and not with --no-eval.
 * The same for a figure of results.xml (its ids and net path were all verify
 * read of it): the file is rendered again with its evidence and compared. */
Test(results_cli, verify_catches_an_edited_portability_csv_and_results_xml_figure)
{
    KW_TL_HANG_GUARD(300);
    cr_assert(have_bin(), "no knobwise binary at %s", kw_tl_bin());
    char *dir = model_run(30);
    char p[4200], args[8192];
    snprintf(args, sizeof args, "verify '%s'", dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_assert(strstr(r.out, "ok   portability: portability.csv agrees"), "%s", r.out);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/portability.csv", dir);
    char *csv = kw_tl_slurp(p);
    /* line 3: shape 0's winner on shape 1 (not its own shape: 0.000 there) */
    char *l3 = strchr(strchr(csv, '\n') + 1, '\n') + 1;
    char *guards = strchr(l3, '\n');
    while (guards[-1] != ',')
        guards--;
    char *vs = guards - 1;
    while (vs[-1] != ',')
        vs--;
    cr_assert(strncmp(vs, "0.000,", 6) != 0, "line 3 is already 0.000: %.80s", l3);
    FILE *f = fopen(p, "w");
    fprintf(f, "%.*s0.000%s", (int)(vs - csv), csv, guards - 1);
    fclose(f);
    free(csv);
    r = kw_tl_sh(args, NULL);
    char want[4300];
    snprintf(want, sizeof want, "%s:3: differs from each shape's winner evaluated again", p);
    cr_assert_eq(r.status, 1, "%s%s", r.out, r.err);
    cr_assert(strstr(r.err, want), "%s", r.err);
    kw_tl_free(&r);
    snprintf(args, sizeof args, "verify '%s' --no-eval", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "--no-eval evaluates nothing: %s%s", r.out, r.err);
    kw_tl_free(&r);
    rm_rf(dir);
    free(dir);
    /* results.xml: the recommendation's p95_us (what libknobwise hands a
     * runtime as the predicted tail) edited; ids and net path untouched */
    dir = model_run(30);
    snprintf(args, sizeof args, "verify '%s'", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_assert(strstr(r.out, "ok   results.xml: byte for byte what the journal implies"), "%s", r.out);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/results.xml", dir);
    char *xml = kw_tl_slurp(p);
    char *m = strstr(strstr(xml, "<config rank=\"1\""), "<metric name=\"p95_us\" value=\"");
    cr_assert_not_null(m);
    long line = 1;
    for (const char *c = xml; c < m; c++)
        line += *c == '\n';
    m += strlen("<metric name=\"p95_us\" value=\"");
    *m = *m == '1' ? '2' : '1';
    f = fopen(p, "w");
    fputs(xml, f);
    fclose(f);
    free(xml);
    r = kw_tl_sh(args, NULL);
    snprintf(want, sizeof want, "%s:%ld: differs from the results the journal and its evidence", p,
             line);
    cr_assert_eq(r.status, 1, "%s%s", r.out, r.err);
    cr_assert(strstr(r.err, want), "%s", r.err);
    kw_tl_free(&r);
    rm_rf(dir);
    free(dir);
}

/* A space whose SLA no configuration meets (p99 <= 1 us; every figure of the
 * model is tens of microseconds): the run finishes, its results list nothing
 * and recommend/export refuse, so the verbs that print the run must say that
 * nothing passes instead of presenting the best failing configuration as the
 * recommendation. Before: tune printed "-24.8%" and "converged", the report's
 * summary and shape section showed it as "The mapping to deploy", audit as
 * "recommended", and recommend said "the run has no recommendation to
 * borrow". */
Test(results_cli, a_run_where_no_configuration_passes_the_guards_recommends_none)
{
    KW_TL_HANG_GUARD(300);
    cr_assert(have_bin(), "no knobwise binary at %s", kw_tl_bin());
    char *dir = kw_tl_tmpdir("kwtest");
    char p[4200], args[8192];
    snprintf(p, sizeof p, "%s/sla.xml", dir);
    char space[4096];
    snprintf(space, sizeof space,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<space name=\"sla_unmet\" block=\"llama7b_attn\">\n"
             "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n"
             "  <workload file=\"%s/spaces/workloads/llama7b.xml\"/>\n"
             "  <shape ref=\"attn_decode_kv2048_b32_c16\"/>\n"
             "  <knob name=\"fuse_qkv\" values=\"off on\" baseline=\"off\"/>\n"
             "  <knob name=\"launch_mode\" values=\"eager graph\" baseline=\"eager\"/>\n"
             "  <guards sla_p99_us=\"1\"/>\n"
             "  <tuning sim_requests=\"200\" final_requests=\"400\"/>\n"
             "</space>\n",
             kw_tl_src(), kw_tl_src());
    cr_assert_eq(kw_tl_write(p, space), 0);
    snprintf(args, sizeof args, "tune --space '%s/sla.xml' --out '%s/run'", dir, dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "(fails guards)") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "no configuration evaluated passes the guards: nothing to recommend"),
              "%s", r.out);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/run/ranked.csv", dir);
    char *ranked = kw_tl_slurp(p);
    cr_assert_eq(count(ranked, "\n"), 1, "ranked.csv lists a failing config: %s", ranked);
    free(ranked);

    snprintf(args, sizeof args, "report '%s/run' -o '%s/r.html'", dir, dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/r.html", dir);
    char *html = kw_tl_slurp(p);
    cr_assert(strstr(html, "none: no configuration evaluated passes the guards</span> (the best fails "
                           "sla_p99)"), "the summary row");
    cr_assert(strstr(html, "<h3>Nothing to deploy</h3>"), "the shape section");
    cr_assert_null(strstr(html, "<ul class=\"disproof\">"), "no claim, no disproof criteria");
    cr_assert_null(strstr(html, "The mapping to deploy"));
    /* its table's column is not "deploy" either (main's binary: it was) */
    cr_assert(strstr(html, "<th class=\"l\">knob</th><th class=\"l\">best evaluated</th>"), "the mapping table");
    cr_assert_null(strstr(html, ">deploy</th>"));
    free(html);

    snprintf(args, sizeof args, "audit '%s/run'", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "us -> best evaluated ") && !strstr(r.out, "-> recommended"), "%s", r.out);
    cr_assert(strstr(r.out, "no configuration evaluated passes the guards: nothing to recommend "
                            "(the best evaluated fails sla_p99)"), "%s", r.out);
    kw_tl_free(&r);

    snprintf(args, sizeof args, "recommend '%s/run' --all -o '%s/m.csv'", dir, dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "shape attn_decode_kv2048_b32_c16: no configuration the run evaluated "
                            "passes the guards"), "%s", r.err);
    cr_assert(strstr(r.err, "no shape of the run has a configuration that passes the guards: "
                            "nothing to deploy, m.csv not written"), "%s", r.err);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/m.csv", dir);
    cr_assert_not(kw_tl_exists(p));
    kw_tl_rmrf(dir);
}

/* The field of a CSV line, by 0-based column (no quoted fields here). */
static char *rp_csv_field(const char *line, int col)
{
    const char *a = line;
    for (int i = 0; i < col; i++) {
        a = strchr(a, ',');
        cr_assert_not_null(a, "column %d of %s", col, line);
        a++;
    }
    return strndup(a, strcspn(a, ",\n"));
}

/* One shape where nothing passes (an SLA its decode tail cannot meet) beside
 * one that tunes: recommend --all writes both rows. The failing shape's row is
 * its baseline, flagged fails_guards in borrow_warnings, and stderr names the
 * shape and the guards; main's binary wrote the row unflagged and said
 * nothing. A table where every row fails is still refused (test above). */
Test(results_cli, recommend_all_writes_every_shape_and_flags_the_one_that_fails_guards)
{
    KW_TL_HANG_GUARD(300);
    cr_assert(have_bin(), "no knobwise binary at %s", kw_tl_bin());
    char *dir = kw_tl_tmpdir("kwtest");
    char p[4200], args[8192], space[4096];
    snprintf(p, sizeof p, "%s/sla.xml", dir);
    snprintf(space, sizeof space,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<space name=\"sla_one_unmet\" block=\"llama7b_attn\">\n"
             "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n"
             "  <workload file=\"%s/spaces/workloads/llama7b.xml\"/>\n"
             "  <shape ref=\"attn_prefill_s2048_b1_c2\"/>\n"
             "  <shape ref=\"attn_decode_kv2048_b32_c16\"/>\n"
             "  <knob name=\"fuse_attention\" values=\"none qk_softmax flash\" baseline=\"none\"/>\n"
             "  <knob name=\"launch_mode\" values=\"eager graph\" baseline=\"eager\"/>\n"
             "  <guards sla_p99_us=\"10000\"/>\n"
             "  <tuning sim_requests=\"200\" final_requests=\"400\"/>\n"
             "</space>\n",
             kw_tl_src(), kw_tl_src());
    cr_assert_eq(kw_tl_write(p, space), 0);
    snprintf(args, sizeof args, "tune --space '%s/sla.xml' --out '%s/run'", dir, dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(count(r.out, "(fails guards)"), 1, "one shape fails, one tunes: %s", r.out);
    kw_tl_free(&r);

    snprintf(args, sizeof args, "recommend '%s/run' --all -o '%s/m.csv'", dir, dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "warning: shape attn_decode_kv2048_b32_c16: no configuration the run "
                            "evaluated passes the guards"), "%s", r.err);
    cr_assert(strstr(r.err, "(sla_p99"), "the guards it fails: %s", r.err);
    cr_assert_null(strstr(r.err, "attn_prefill_s2048_b1_c2"), "%s", r.err);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/m.csv", dir);
    char *csv = kw_tl_slurp(p);
    cr_assert_not_null(csv);
    cr_assert_eq(count(csv, "\n"), 3, "header and both shapes: %s", csv);
    int wcol = -1, n = 0; /* borrow_warnings' column, from the header */
    for (const char *c = csv; *c != '\n'; c++)
        if (*c == ',' && ++n && strncmp(c + 1, "borrow_warnings,", 16) == 0)
            wcol = n;
    cr_assert_geq(wcol, 0, "%s", csv);
    const char *ok = strstr(csv, "\nattn_prefill_s2048_b1_c2,"), *bad = strstr(csv, "\nattn_decode_kv2048_b32_c16,");
    cr_assert(ok && bad, "%s", csv);
    char *f;
    cr_assert_str_empty((f = rp_csv_field(ok + 1, 2)), "the prefill shape keeps its own winner: %s", csv);
    free(f);
    /* no flag of failure; at final_requests 400 its ranking may be
     * unresolved (ranking_unresolved: the re-check's intervals, not guards) */
    f = rp_csv_field(ok + 1, wcol);
    cr_assert(strcmp(f, "") == 0 || strcmp(f, "ranking_unresolved") == 0, "%s", csv);
    free(f);
    cr_assert_str_eq((f = rp_csv_field(bad + 1, 2)), "baseline", "%s", csv);
    free(f);
    cr_assert_str_eq((f = rp_csv_field(bad + 1, wcol)), "fails_guards", "%s", csv);
    free(f);
    free(csv);
    kw_tl_rmrf(dir);
}

/* A shape the run did not tune, whose baseline (fp8) fails the drift guard
 * and whose borrowed winner (bf16) passes it but is slower: the borrowed
 * winner is the recommendation. main's binary recommended the faster
 * baseline, which fails the guards ("the borrowed winner is slower than the
 * baseline here"). */
Test(results_cli, a_passing_borrowed_winner_beats_a_faster_baseline_that_fails)
{
    KW_TL_HANG_GUARD(300);
    cr_assert(have_bin(), "no knobwise binary at %s", kw_tl_bin());
    char *dir = kw_tl_tmpdir("kwtest");
    char p[4200], args[8192], text[8192];
    char *wl = NULL;
    snprintf(p, sizeof p, "%s/spaces/workloads/llama7b.xml", kw_tl_src());
    cr_assert_not_null((wl = kw_tl_slurp(p)));
    char *end = strstr(wl, "</workload>");
    cr_assert_not_null(end);
    *end = '\0';
    size_t n = strlen(wl) + 1024;
    char *w2 = malloc(n);
    snprintf(w2, n, "%s"
             "  <shape name=\"p_a\" block=\"llama7b_attn\" phase=\"prefill\" seq=\"2048\" batch=\"1\" "
             "streams=\"2\" arrival=\"poisson\" load=\"0.1\"/>\n"
             "  <shape name=\"p_b\" block=\"llama7b_attn\" phase=\"prefill\" seq=\"1024\" batch=\"2\" "
             "streams=\"2\" arrival=\"poisson\" load=\"0.1\"/>\n</workload>\n", wl);
    snprintf(p, sizeof p, "%s/wl.xml", dir);
    cr_assert_eq(kw_tl_write(p, w2), 0);
    free(w2);
    free(wl);
    snprintf(text, sizeof text,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<space name=\"fp8_baseline\" block=\"llama7b_attn\">\n"
             "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n"
             "  <workload file=\"wl.xml\"/>\n"
             "  <shape ref=\"p_a\"/>\n  <shape ref=\"p_b\"/>\n"
             "  <knob name=\"precision\" values=\"bf16 fp8_e4m3\" baseline=\"fp8_e4m3\"/>\n"
             "  <knob name=\"launch_mode\" values=\"eager graph\" baseline=\"eager\"/>\n"
             "  <guards drift_min_cos=\"0.9999\"/>\n"
             "  <tuning sim_requests=\"200\" final_requests=\"400\"/>\n"
             "</space>\n", kw_tl_src());
    snprintf(p, sizeof p, "%s/sp.xml", dir);
    cr_assert_eq(kw_tl_write(p, text), 0);
    snprintf(args, sizeof args, "tune --space '%s/sp.xml' --shape p_a --out '%s/run'", dir, dir);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    snprintf(args, sizeof args, "recommend '%s/run' --shape p_b", dir);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "BORROWED from the nearest tuned shape p_a"), "%s", r.out);
    cr_assert(strstr(r.out, "precision                bf16"), "%s", r.out);
    cr_assert(strstr(r.out, "guards pass"), "%s", r.out);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* `-o -` is standard output to everyone: report, export and recommend --all
 * write their file there (main's report and recommend --all wrote a file
 * named "-" in the working folder, "wrote ./-"); a verb that cannot (probe)
 * refuses it, exit 2, and writes nothing. */
Test(results_cli, o_dash_is_standard_output_never_a_file_named_dash)
{
    KW_TL_HANG_GUARD(300);
    cr_assert(have_bin(), "no knobwise binary at %s", kw_tl_bin());
    char *dir = model_run(40);
    kw_tl_opts o = {.cwd = dir};
    char dash[4200];
    snprintf(dash, sizeof dash, "%s/-", dir);
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "report", ".", "-o", "-", "--no-portability", NULL);
    cr_assert_eq(r.status, 0, "report -o -: %s", r.err);
    cr_assert(strncmp(r.out, "<!DOCTYPE html>", 15) == 0, "report -o - stdout: %.80s", r.out);
    cr_assert(strstr(r.out, "</html>") != NULL, "the whole report on stdout");
    cr_assert(!kw_tl_exists(dash), "report -o - wrote a file named '-'");
    kw_tl_free(&r);
    r = kw_tl_run(&o, kw_tl_bin(), "recommend", ".", "--all", "-o", "-", NULL);
    cr_assert_eq(r.status, 0, "recommend --all -o -: %s", r.err);
    cr_assert(strncmp(r.out, "shape,config_id,borrowed_from,", 30) == 0, "%.80s", r.out);
    cr_assert_null(strstr(r.out, "wrote "), "only the table on stdout: %s", r.out);
    cr_assert(!kw_tl_exists(dash), "recommend --all -o - wrote a file named '-'");
    kw_tl_free(&r);
    kw_tl_proc plain = kw_tl_run(&o, kw_tl_bin(), "export", ".", "--format", "json", NULL);
    r = kw_tl_run(&o, kw_tl_bin(), "export", ".", "--format", "json", "-o", "-", NULL);
    cr_assert_eq(r.status, 0, "export -o -: %s", r.err);
    cr_assert_str_eq(r.out, plain.out, "export -o - is export's stdout");
    cr_assert(!kw_tl_exists(dash), "export -o - wrote a file named '-'");
    kw_tl_free(&r);
    kw_tl_free(&plain);
    r = kw_tl_run(&o, kw_tl_bin(), "report", ".", "-o", "-", "--force", NULL);
    cr_assert_eq(r.status, 2, "--force with -o -: %s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&o, kw_tl_bin(), "probe", "-o", "-", NULL);
    cr_assert_eq(r.status, 2, "probe -o -: %s", r.err);
    cr_assert(strstr(r.err, "-o -: probe does not write standard output") != NULL, "%s", r.err);
    cr_assert(!kw_tl_exists(dash), "probe -o - wrote a file named '-'");
    kw_tl_free(&r);
    rm_rf(dir);
    free(dir);
}

/* A shape whose final re-check could not rank its recommendation apart from
 * its rival (results.xml <shape ranking="unresolved" ranking_note=...>, the
 * results writer's verdict, put here on a model run by hand): every reader a
 * deployer uses says it where the shape's recommendation is given, as
 * recommend's RANKING line does. main's audit and report printed the gain
 * with no word of it (on the default job 3 of 5 shapes: the bursty decode
 * shape's claimed -46% is -31% at the re-check), and export of the run
 * folder gave the shape no warning while export of its mappings.csv gave
 * ranking_unresolved. */
Test(results_cli, an_unresolved_ranking_is_said_by_audit_report_and_export)
{
    KW_TL_HANG_GUARD(300);
    cr_assert(have_bin(), "no knobwise binary at %s", kw_tl_bin());
    char *run = model_run(10);
    static const char *const shape = "attn_prefill_s128_b8_c4";
    static const char *const note = "not resolved: a test's note &lt;here&gt;";
    char p[4300], at[128];
    snprintf(p, sizeof p, "%s/results.xml", run);
    char *xml = kw_tl_slurp(p);
    cr_assert_not_null(xml);
    snprintf(at, sizeof at, "<shape name=\"%s\"", shape);
    char *s = strstr(xml, at);
    cr_assert_not_null(s, "%.300s", xml);
    cr_assert_null(strstr(xml, "ranking="), "model_run judges no ranking");
    s += strlen(at);
    size_t n = strlen(xml) + 256;
    char *ed = malloc(n);
    snprintf(ed, n, "%.*s ranking=\"unresolved\" ranking_note=\"%s\"%s", (int)(s - xml), xml,
             note, s);
    cr_assert_eq(kw_tl_write(p, ed), 0);
    free(ed);
    free(xml);

    kw_tl_proc r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--shape", shape, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "  RANKING: not resolved\n    a test's note <here>\n"), "%s", r.out);
    kw_tl_free(&r);
    r = kw_tl_run(NULL, kw_tl_bin(), "audit", run, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(count(r.out, "RANKING:"), 1, "only the unresolved shape: %s", r.out);
    const char *line = strstr(r.out, "  RANKING: not resolved\n    a test's note <here>\n");
    const char *head = strstr(r.out, "shape attn_prefill_s128_b8_c4\n");
    cr_assert(line && head && head < line, "%s", r.out);
    cr_assert(line < strstr(head, "net path:"), "said before the net path: %s", r.out);
    kw_tl_free(&r);
    r = kw_tl_run(NULL, kw_tl_bin(), "audit", run, "--shape", shape, "--exploration", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "  RANKING: not resolved\n    a test's note <here>\n"), "%s", r.out);
    kw_tl_free(&r);
    r = kw_tl_run(NULL, kw_tl_bin(), "report", run, "-o", "-", "--no-portability", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(count(r.out, "<strong>Ranking:</strong>"), 1, "only the unresolved shape");
    const char *para = strstr(r.out, "<strong>Ranking:</strong> not resolved: a test&#39;s note "
                                     "&lt;here&gt;.</p>");
    const char *sec = strstr(r.out, "\">Shape attn_prefill_s128_b8_c4</h2>");
    cr_assert(para && sec && sec < para, "the report does not say it under the shape");
    kw_tl_free(&r);
    r = kw_tl_run(NULL, kw_tl_bin(), "export", run, "--format", "json", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* model_run makes the portability matrix without the re-check: no_evidence */
    cr_assert_eq(count(r.out, "ranking_unresolved"), 1, "%s", r.out);
    cr_assert(strstr(r.out, "\"warnings\": [\"no_evidence\", \"ranking_unresolved\"]"), "%s", r.out);
    /* and says so on stderr, as for a stopped run (main: nothing) */
    cr_assert_eq(count(r.err, "the final re-check did not resolve"), 1, "%s", r.err);
    cr_assert(strstr(r.err, "knobwise export: note: shape 'attn_prefill_s128_b8_c4': the final "
                            "re-check did not resolve its configuration's rank, or its gain, to "
                            "the run's minimum effect (warnings ranking_unresolved"), "%s", r.err);
    kw_tl_free(&r);
    kw_tl_rmrf(run);
}

/* A borrowed recommendation (a shape the run did not tune) says what to roll
 * back to and what to watch on that shape (its baseline, evaluated there),
 * and that the source shape's rollback and claim do not carry over. main's
 * binary printed the mapping and the owner only: no rollback, no guards. */
Test(results_cli, a_borrowed_recommendation_gives_its_rollback_and_says_the_claim_does_not_carry)
{
    KW_TL_HANG_GUARD(300);
    cr_assert(have_bin(), "no knobwise binary at %s", kw_tl_bin());
    char *run = model_run(10);
    kw_tl_proc r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--batch", "16", "--seq", "4096",
                             "--streams", "4", "--phase", "decode", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "BORROWED from the nearest tuned shape "), "%s", r.out);
    char base_id[32] = "", src[128] = "";
    double b95 = NAN, w95 = NAN, w99 = NAN;
    /* the figures say their source: one evaluation here, at the space's sample */
    const char *l = strstr(r.out, "  p95_us at one evaluation on this shape (");
    cr_assert(l && sscanf(strstr(l, "): baseline ") + 2, " baseline %lf us", &b95) == 1, "%s", r.out);
    l = strstr(r.out, "  rollback: to the baseline ");
    cr_assert(l && sscanf(l, "  rollback: to the baseline %16s", base_id) == 1, "%s", r.out);
    cr_assert(strstr(l, "(borrowed, the mapping has no accepted path on this shape);\n"), "%s", r.out);
    l = strstr(r.out, "            watch p95 and p99 against the baseline's here (");
    cr_assert(l && sscanf(l, "            watch p95 and p99 against the baseline's here (%lf us, %lf us)",
                          &w95, &w99) == 2, "%s", r.out);
    cr_assert_float_eq(w95, b95, 1e-9, "the p95 to watch is the baseline's here: %s", r.out);
    cr_assert_gt(w99, 0.0);
    l = strstr(r.out, "  evidence: one evaluation on this shape at the space's sample, no re-check; "
                      "the rollback and disproof criteria of ");
    cr_assert(l && sscanf(strstr(l, " of ") + 4, "%127[^']", src) == 1, "%s", r.out);
    cr_assert(strstr(r.out, src) < l, "names the source shape named above: %s", r.out);
    /* the baseline's id is the run's (every shape's <baseline id>) */
    char p[4300];
    snprintf(p, sizeof p, "%s/results.xml", run);
    char *xml = kw_tl_slurp(p);
    char want[64];
    snprintf(want, sizeof want, "<baseline id=\"%s\">", base_id);
    cr_assert(strstr(xml, want), "%s is not the run's baseline", base_id);
    free(xml);
    kw_tl_free(&r);
    kw_tl_rmrf(run);
}

/* The text of every node xpath q selects in doc, each ended by a NUL, into
 * out; returns how many. */
static int rp_xpath_texts(kw_sbuf *out, xmlDocPtr doc, const char *q)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    cr_assert_not_null(ctx);
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST q, ctx);
    cr_assert_not_null(o, "%s", q);
    int n = o->nodesetval ? o->nodesetval->nodeNr : 0;
    for (int i = 0; i < n; i++) {
        xmlChar *t = xmlNodeGetContent(o->nodesetval->nodeTab[i]);
        kw_sbuf_putn(out, (const char *)t, strlen((const char *)t) + 1);
        xmlFree(t);
    }
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(ctx);
    return n;
}

/* recommend --shape gives a tuned shape's claim with the mapping, as
 * results.xml states it (DESIGN: every recommended configuration carries its
 * evidence, its disproof criteria, its guard thresholds and the configuration
 * to roll back to): the recommendation's re-check at the final sample (its
 * figures as the file spells them), the baseline's there, and every disproof
 * criterion. main's binary printed the search's figures, the rollback and
 * the owner only: the re-check and the criteria were in results.xml alone
 * (on the default job's bursty decode shape the claimed -46.31% is -31.46% at
 * the re-check). A tune of validate_small (budget 30: a fraction of a second). */
/* validate_small tuned with budget 30 into DIR/run (run), DIR a new
 * temporary folder (returned: kw_tl_rmrf it); *tune: what tune printed. */
static char *rp_small_run(char run[4200], kw_tl_proc *tune)
{
    cr_assert(have_bin(), "no knobwise binary at %s", kw_tl_bin());
    char *dir = kw_tl_tmpdir("kwtest");
    char space[4200];
    snprintf(run, 4200, "%s/run", dir);
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    *tune = kw_tl_run(NULL, kw_tl_bin(), "tune", "--space", space, "--budget", "30", "--out", run,
                      NULL);
    cr_assert_eq(tune->status, 0, "tune: %s", tune->err);
    return dir;
}

/* rp_small_run, and its results.xml parsed into *doc (xmlFreeDoc it). */
static char *rp_small_run_xml(char run[4200], kw_tl_proc *tune, xmlDocPtr *doc)
{
    char *dir = rp_small_run(run, tune);
    char p[4300];
    snprintf(p, sizeof p, "%s/results.xml", run);
    *doc = xmlReadFile(p, NULL, XML_PARSE_NONET);
    cr_assert_not_null(*doc);
    return dir;
}

Test(results_cli, recommend_gives_the_claims_evidence_and_disproof_from_results_xml)
{
    KW_TL_HANG_GUARD(300);
    char run[4200], p[4300];
    kw_tl_proc r;
    char *dir = rp_small_run(run, &r);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/results.xml", run);
    xmlDocPtr doc = xmlReadFile(p, NULL, XML_PARSE_NONET);
    cr_assert_not_null(doc);
    kw_sbuf names = {0};
    int n_shapes = rp_xpath_texts(&names, doc, "/results/shape/@name");
    cr_assert_gt(n_shapes, 0);
    const char *shape = names.data;
    for (int i = 0; i < n_shapes; i++, shape += strlen(shape) + 1) {
        char q[512];
        static const char *const at[] = {"samples", "p95_us", "p_ci_lo_us", "p_ci_hi_us",
                                          "p99_us", "p99_ci_lo_us", "p99_ci_hi_us", "guards"};
        kw_sbuf v = {0};
        for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
            snprintf(q, sizeof q, "/results/shape[@name='%s']/config[@recommended='true']/recheck/@%s",
                     shape, at[k]);
            cr_assert_eq(rp_xpath_texts(&v, doc, q), 1, "%s", q);
        }
        const char *f[8], *c = v.data;
        for (int k = 0; k < 8; k++, c += strlen(c) + 1)
            f[k] = c;
        char want[1024];
        snprintf(want, sizeof want, "  evidence: re-checked at %s requests: p95 %s us [95%% interval "
                 "%s, %s], p99 %s us [%s, %s]; guards %s\n", f[0], f[1], f[2], f[3], f[4], f[5],
                 f[6], f[7]);
        kw_sbuf b = {0};
        snprintf(q, sizeof q, "/results/shape[@name='%s']/baseline/recheck/@p95_us", shape);
        cr_assert_eq(rp_xpath_texts(&b, doc, q), 1, "%s", q);
        char base[256];
        snprintf(base, sizeof base, "            the baseline there: p95 %s us, ", b.data);
        kw_sbuf crit = {0};
        snprintf(q, sizeof q, "/results/shape[@name='%s']/config[@recommended='true']/rollback/"
                 "disproof/criterion", shape);
        int n_crit = rp_xpath_texts(&crit, doc, q);
        cr_assert_geq(n_crit, 3, "%s", q);

        r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--shape", shape, NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        const char *ev = strstr(r.out, want);
        cr_assert_not_null(ev, "no '%s' in:\n%s", want, r.out);
        cr_assert(strstr(ev, base), "no '%s' in:\n%s", base, r.out);
        const char *d = strstr(r.out, "  disproof: the claim is disproved, and the mapping rolled "
                                      "back, when\n");
        cr_assert(d && ev < d, "%s", r.out);
        c = crit.data;
        for (int k = 0; k < n_crit; k++, c += strlen(c) + 1) {
            char line[2048];
            snprintf(line, sizeof line, "    - %s\n", c);
            const char *l = strstr(d, line);
            cr_assert(l && l < strstr(r.out, "  owner: "), "criterion %d not printed: %s\n%s", k, c,
                      r.out);
        }
        /* the rollback ceilings come from the re-check (its larger sample):
         * each is the re-checked figure plus a margin, or the baseline's
         * re-checked figure where that is lower, never below the re-check
         * (main took them from the search's sample: on a bursty shape the
         * re-check lay far above them, and the mapping as shipped met its own
         * disproof criterion); recommend prints the file's ceilings and,
         * with the file's ceilings above its re-check, no warning */
        kw_sbuf w = {0}, basis = {0}, bb = {0};
        snprintf(q, sizeof q, "/results/shape[@name='%s']/config[@recommended='true']/rollback/"
                 "watch[@guard='p95_ceiling' or @guard='p99_ceiling']/@max", shape);
        cr_assert_eq(rp_xpath_texts(&w, doc, q), 2, "%s", q);
        snprintf(q, sizeof q, "/results/shape[@name='%s']/config[@recommended='true']/rollback/"
                 "watch[@guard='p95_ceiling' or @guard='p99_ceiling']/@basis", shape);
        cr_assert_eq(rp_xpath_texts(&basis, doc, q), 2, "%s", q);
        snprintf(q, sizeof q, "/results/shape[@name='%s']/baseline/recheck/@p99_us", shape);
        cr_assert_eq(rp_xpath_texts(&bb, doc, q), 1, "%s", q);
        const char *w99 = w.data + strlen(w.data) + 1, *b99 = basis.data + strlen(basis.data) + 1;
        double c95 = strtod(w.data, NULL), c99 = strtod(w99, NULL);
        cr_assert(c95 >= strtod(f[1], NULL) && c99 >= strtod(f[4], NULL),
                  "shape %s: ceilings %g/%g below the re-check's p95 %s / p99 %s", shape, c95, c99,
                  f[1], f[4]);
        char from95[300], from99[300];
        snprintf(from95, sizeof from95, "re-checked %s us + ", f[1]);
        snprintf(from99, sizeof from99, "re-checked %s us + ", f[4]);
        cr_assert(strncmp(basis.data, from95, strlen(from95)) == 0,
                  "shape %s: p95 ceiling's basis '%s' is not the re-check's %s us", shape,
                  basis.data, f[1]);
        cr_assert(strncmp(b99, from99, strlen(from99)) == 0,
                  "shape %s: p99 ceiling's basis '%s' is not the re-check's %s us", shape, b99, f[4]);
        if (strstr(basis.data, "capped at the baseline's"))
            cr_assert_str_eq(w.data, b.data, "shape %s: p95 capped at the baseline's re-check", shape);
        if (strstr(b99, "capped at the baseline's"))
            cr_assert_str_eq(w99, bb.data, "shape %s: p99 capped at the baseline's re-check", shape);
        char watch[700];
        snprintf(watch, sizeof watch, "watch p95 <= %s us, p99 <= %s us,", w.data, w99);
        cr_assert(strstr(r.out, watch), "no '%s' in:\n%s", watch, r.out);
        cr_assert_null(strstr(r.out, "  WARNING: at the re-check its "), "%s", r.out);
        kw_tl_free(&r);
        /* the report states the same criteria (kw_results_read) */
        char html[4300], crit2[700];
        snprintf(html, sizeof html, "%s/r.html", dir);
        r = kw_tl_run(NULL, kw_tl_bin(), "report", run, "-o", html, "--force", NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        kw_tl_free(&r);
        char *h = kw_tl_slurp(html);
        snprintf(crit2, sizeof crit2, "after rollout on shape %s, p95 above %s us or p99 above %s us",
                 shape, w.data, w99);
        cr_assert(h && strstr(h, crit2), "report lacks '%s'", crit2);
        free(h);
        kw_sbuf_free(&bb);
        kw_sbuf_free(&basis);
        if (i == 0) { /* the file's re-check put far above the ceiling */
            char *x = kw_tl_slurp(p);
            snprintf(q, sizeof q, "<shape name=\"%s\"", shape);
            char *rk = strstr(strstr(strstr(strstr(x, q), "recommended=\"true\""), "<recheck "),
                              " p95_us=\"");
            cr_assert_not_null(rk);
            rk += strlen(" p95_us=\"");
            size_t nx = strlen(x) + 64;
            char *y = malloc(nx);
            snprintf(y, nx, "%.*s99999999.000%s", (int)(rk - x), x, strchr(rk, '"'));
            cr_assert_eq(kw_tl_write(p, y), 0);
            r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--shape", shape, NULL);
            cr_assert_eq(r.status, 0, "%s", r.err);
            snprintf(want, sizeof want, "  WARNING: at the re-check its p95 99999999.000 us %s above "
                     "the file's rollback ceiling", strtod(f[4], NULL) > c99 ? "and p99" : "is");
            cr_assert(strstr(r.out, want), "no '%s' in:\n%s", want, r.out);
            kw_tl_free(&r);
            cr_assert_eq(kw_tl_write(p, x), 0);
            free(y);
            free(x);
        }
        kw_sbuf_free(&w);
        kw_sbuf_free(&crit);
        kw_sbuf_free(&b);
        kw_sbuf_free(&v);
    }
    kw_sbuf_free(&names);
    xmlFreeDoc(doc);
    kw_tl_rmrf(dir);
}

/* A line of text (up to its newline) holding needle, as a new string ("" when none). */
static char *rp_line_with(const char *text, const char *needle)
{
    const char *at = text ? strstr(text, needle) : NULL;
    if (!at)
        return strdup("");
    const char *b = at;
    while (b > text && b[-1] != '\n')
        b--;
    return strndup(b, strcspn(b, "\n"));
}

/* Every output leads with the headline figure, decided in one place
 * (kw_results_headline): the final re-check where the run made one, and
 * names its source. On validate_small (budget 30) each shape's
 * recommendation and baseline are re-checked at the space's final sample:
 * tune's summary, recommend, audit, recommend --all (mappings.csv p95_us and
 * figures_basis), ranked.csv (headline_p95_us, figures_basis), export
 * (libknobwise's knobwise_entry_latency and _figures_basis) and the report
 * give results.xml's <recheck> p95 of the recommendation and of the
 * baseline, each saying "the re-check (N requests)" or "recheck". main's
 * binary led every one of them with the search's sample (<metrics>), and on
 * the default job's bursty decode shape that was 6,182 us against the
 * re-check's 20,971 us (seed 3). verify still passes: ranked.csv's headline
 * columns are checked against results.xml's re-check, and an edited one is
 * caught. */
Test(results_cli, every_output_leads_with_the_recheck_and_names_its_source)
{
    KW_TL_HANG_GUARD(300);
    char run[4200], p[4300];
    kw_tl_proc tune;
    xmlDocPtr doc;
    char *dir = rp_small_run_xml(run, &tune, &doc);
    kw_tl_proc rall = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--all", "-o", "-", NULL);
    cr_assert_eq(rall.status, 0, "%s", rall.err);
    kw_tl_proc aud = kw_tl_run(NULL, kw_tl_bin(), "audit", run, NULL);
    cr_assert_eq(aud.status, 0, "%s", aud.err);
    kw_tl_proc exp = kw_tl_run(NULL, kw_tl_bin(), "export", run, "--format", "json", NULL);
    cr_assert_eq(exp.status, 0, "%s", exp.err);
    kw_tl_proc rep = kw_tl_run(NULL, kw_tl_bin(), "report", run, "-o", "-", NULL);
    cr_assert_eq(rep.status, 0, "%s", rep.err);
    snprintf(p, sizeof p, "%s/ranked.csv", run);
    char *ranked = kw_tl_slurp(p);
    cr_assert_not_null(ranked);
    cr_assert(strstr(ranked, ",rollback_to,headline_p95_us,headline_p99_us,figures_basis\n"),
              "%.300s", ranked);
    kw_sbuf names = {0};
    int n_shapes = rp_xpath_texts(&names, doc, "/results/shape/@name");
    cr_assert_gt(n_shapes, 0);
    const char *shape = names.data;
    for (int i = 0; i < n_shapes; i++, shape += strlen(shape) + 1) {
        char want[1024], key[300];
        kw_sbuf rs = {0}, bs = {0}, ss = {0}, ms = {0};
        char qq[512];
        snprintf(qq, sizeof qq, "/results/shape[@name='%s']/config[@recommended='true']/recheck/@p95_us", shape);
        cr_assert_eq(rp_xpath_texts(&rs, doc, qq), 1, "%s", qq);
        snprintf(qq, sizeof qq, "/results/shape[@name='%s']/baseline/recheck/@p95_us", shape);
        cr_assert_eq(rp_xpath_texts(&bs, doc, qq), 1, "%s", qq);
        snprintf(qq, sizeof qq, "/results/shape[@name='%s']/config[@recommended='true']/recheck/@samples", shape);
        cr_assert_eq(rp_xpath_texts(&ss, doc, qq), 1, "%s", qq);
        snprintf(qq, sizeof qq, "/results/shape[@name='%s']/config[@recommended='true']/metrics/"
                 "metric[@name='p95_us']/@value", shape);
        cr_assert_eq(rp_xpath_texts(&ms, doc, qq), 1, "%s", qq);
        const char *R = rs.data, *B = bs.data, *N = ss.data;
        /* the search's sample differs from the re-check's here, so leading
         * with the one or the other is told apart */
        cr_assert_str_neq(R, ms.data, "shape %s: re-check and search give the same p95", shape);

        /* recommend --shape */
        kw_tl_proc r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--shape", shape, NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        snprintf(want, sizeof want, "  p95_us at the re-check (%s requests): baseline %s us -> %s us (",
                 N, B, R);
        const char *hl = strstr(r.out, want), *cfg = strstr(r.out, "  config ");
        cr_assert(hl && cfg && hl > cfg && hl < strstr(r.out, "  rollback: "), "no '%s' after the "
                  "config in:\n%s", want, r.out);
        snprintf(want, sizeof want, "    (ranked on the search's sample (");
        cr_assert(strstr(hl, want), "%s", r.out);
        kw_tl_free(&r);

        /* audit */
        snprintf(want, sizeof want, "  p95_us at the re-check (%s requests): baseline %s us -> "
                 "recommended %s us (", N, B, R);
        snprintf(key, sizeof key, "shape %s\n", shape);
        const char *as = strstr(aud.out, key);
        cr_assert(as && strstr(as, want) == as + strlen(key), "no '%s' under '%s' in:\n%s", want,
                  key, aud.out);

        /* mappings.csv: p95_us, and figures_basis (last before stop 48's
         * eight watch_* columns) */
        snprintf(key, sizeof key, "\n%s,", shape);
        char *row = rp_line_with(strstr(rall.out, key) ? strstr(rall.out, key) + 1 : NULL, shape);
        int nf = 1;
        for (const char *c = row; *c; c++)
            nf += *c == ',';
        char *p95 = rp_csv_field(row, nf - 8 - 6), *basis = rp_csv_field(row, nf - 8 - 1);
        cr_assert_str_eq(p95, R, "shape %s: mappings.csv row %s", shape, row);
        cr_assert_str_eq(basis, "recheck", "shape %s: mappings.csv row %s", shape, row);
        free(p95);
        free(basis);
        free(row);

        /* ranked.csv rank 1: headline_p95_us (third to last) and figures_basis */
        snprintf(key, sizeof key, "\n%s,1,", shape);
        row = rp_line_with(strstr(ranked, key) ? strstr(ranked, key) + 1 : NULL, shape);
        nf = 1;
        for (const char *c = row; *c; c++)
            nf += *c == ',';
        p95 = rp_csv_field(row, nf - 3);
        basis = rp_csv_field(row, nf - 1);
        char *search = rp_csv_field(row, 4);
        cr_assert_str_eq(p95, R, "shape %s: ranked.csv row %s", shape, row);
        cr_assert_str_eq(basis, "recheck", "shape %s: ranked.csv row %s", shape, row);
        cr_assert_str_eq(search, ms.data, "shape %s: ranked.csv p95_us stays the search's: %s",
                         shape, row);
        free(search);
        free(p95);
        free(basis);
        free(row);

        /* export (libknobwise) */
        snprintf(key, sizeof key, "\"name\": \"%s\"", shape);
        const char *blk = strstr(exp.out, key);
        const char *pred = blk ? strstr(blk, "\"predicted\": {\"p95_us\": ") : NULL;
        cr_assert_not_null(pred, "%s", exp.out);
        cr_assert_float_eq(strtod(pred + strlen("\"predicted\": {\"p95_us\": "), NULL),
                           strtod(R, NULL), 1e-9, "shape %s: %.120s", shape, pred);
        cr_assert(strstr(pred, "\"figures_basis\": \"recheck\"}") &&
                      strstr(pred, "\"figures_basis\": \"recheck\"}") < strstr(pred, "\"guards\""),
                  "shape %s: %.200s", shape, pred);

        /* the report's summary table */
        snprintf(key, sizeof key, "\">%s</a></td><td>%s</td><td>%s</td>", shape, B, R);
        const char *tr = strstr(rep.out, key);
        snprintf(want, sizeof want, "<td class=\"l\">the re-check (%s requests); the search's sample: ", N);
        cr_assert(tr && strstr(tr, want) && strstr(tr, want) < strstr(tr, "</tr>"),
                  "report: no '%s' ... '%s'", key, want);

        /* its guard table: the rollback ceilings against the re-check they come from */
        snprintf(want, sizeof want, "<td class=\"l\">p95_us (rollback ceiling; at the re-check (%s "
                 "requests))</td><td>%s</td>", N, R);
        cr_assert(strstr(tr, want), "report: no '%s'", want);
        /* tune's summary line: baseline -> recommendation at the re-check */
        snprintf(key, sizeof key, "  %s ", shape);
        char *line = rp_line_with(tune.out, key);
        double tb = NAN, tr2 = NAN;
        const char *num = strstr(line, "p95");
        cr_assert(num && sscanf(num, "p95 %lf -> %lf us", &tb, &tr2) == 2, "%s", tune.out);
        cr_assert_float_eq(tb, strtod(B, NULL), 0.051, "%s", line);
        cr_assert_float_eq(tr2, strtod(R, NULL), 0.051, "%s", line);
        snprintf(want, sizeof want, "(p95 at the re-check (%s requests); on the search's sample (", N);
        cr_assert(strstr(strstr(tune.out, line), want), "%s", tune.out);
        free(line);
        kw_sbuf_free(&rs);
        kw_sbuf_free(&bs);
        kw_sbuf_free(&ss);
        kw_sbuf_free(&ms);
    }
    /* verify agrees, and catches a headline figure edited in ranked.csv */
    kw_tl_proc vf = kw_tl_run(NULL, kw_tl_bin(), "verify", run, "--no-eval", NULL);
    cr_assert_eq(vf.status, 0, "%s%s", vf.out, vf.err);
    kw_tl_free(&vf);
    char *nl = strchr(ranked, '\n') + 1, *eol = strchr(nl, '\n');
    char *c = eol;
    for (int k = 0; k < 3; k++) /* the row's headline_p95_us */
        while (*--c != ',')
            ;
    size_t n = strlen(ranked) + 8;
    char *edited = malloc(n);
    snprintf(edited, n, "%.*s1%s", (int)(c + 1 - ranked), ranked, c + 1);
    cr_assert_eq(kw_tl_write(p, edited), 0);
    vf = kw_tl_run(NULL, kw_tl_bin(), "verify", run, "--no-eval", NULL);
    cr_assert_eq(vf.status, 1, "%s%s", vf.out, vf.err);
    cr_assert(strstr(vf.out, "FAIL ranked.csv headline figures: ") &&
                  strstr(vf.out, "ranked.csv:2: its headline figures"), "%s%s", vf.out,
              vf.err);
    kw_tl_free(&vf);
    free(edited);
    free(ranked);
    kw_tl_free(&rep);
    kw_tl_free(&exp);
    kw_tl_free(&aud);
    kw_tl_free(&rall);
    kw_tl_free(&tune);
    kw_sbuf_free(&names);
    xmlFreeDoc(doc);
    kw_tl_rmrf(dir);
}

/* A run stopped by its --time-limit before its search finished and before
 * its evidence: recommend, recommend --all and export say so on stderr and
 * carry it (mappings.csv borrow_warnings search_stopped/no_evidence, the
 * export's warnings), and results.xml records it (<results evidence="none">,
 * <shape search="stopped">). main's binary printed "tuned in this run" and
 * wrote a clean table and export: nothing told a deployer that the mapping
 * is the best so far, with no re-check and no portability matrix. */
/* A run of the default job stopped by --time-limit 1 in DIR/run, DIR a new
 * temporary folder (returned: kw_tl_rmrf it); the search takes seconds, one
 * second stops it. shape: the first shape its results.xml says stopped. */
static char *stopped_run(char run[4200], char shape[128])
{
    cr_assert(have_bin(), "no knobwise binary at %s", kw_tl_bin());
    char *dir = kw_tl_tmpdir("kwtest");
    cr_assert_not_null(dir);
    char p[4300];
    snprintf(run, 4200, "%s/run", dir);
    kw_tl_proc r = kw_tl_run(NULL, kw_tl_bin(), "tune", "--out", run, "--time-limit", "1",
                             "--quiet", NULL);
    cr_assert_eq(r.status, 0, "tune: %s", r.err);
    kw_tl_free(&r);
    snprintf(p, sizeof p, "%s/results.xml", run);
    char *xml = kw_tl_slurp(p);
    cr_assert(strstr(xml, "evidence=\"none\""), "results.xml does not say: %.300s", xml);
    cr_assert_gt(count(xml, "search=\"stopped\""), 0, "no shape said stopped");
    const char *nm = strstr(xml, "search=\"stopped\"");
    while (nm > xml && strncmp(nm, "<shape name=\"", 13) != 0)
        nm--;
    cr_assert_eq(sscanf(nm, "<shape name=\"%127[^\"]\"", shape), 1);
    free(xml);
    return dir;
}

Test(results_cli, a_stopped_run_is_said_stopped_by_recommend_and_export)
{
    KW_TL_HANG_GUARD(300);
    char run[4200], shape[128];
    char *dir = stopped_run(run, shape);

    kw_tl_proc r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--shape", shape, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "warning:") && strstr(r.err, "stopped before its evidence was made"),
              "%s", r.err);
    cr_assert(strstr(r.err, "stopped before its search finished"), "%s", r.err);
    cr_assert(strstr(r.out, "STOPPED before its search finished"), "%s", r.out);
    kw_tl_free(&r);

    r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--all", "-o", "-", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "stopped before its evidence was made"), "%s", r.err);
    int rows = 0, stopped = 0;
    char *save = NULL;
    for (char *l = strtok_r(r.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save), rows++) {
        if (rows == 0)
            continue; /* the header */
        cr_assert(strstr(l, "no_evidence"), "a row without no_evidence: %s", l);
        stopped += strstr(l, "search_stopped") != NULL;
    }
    cr_assert_gt(rows, 1);
    cr_assert_gt(stopped, 0);
    kw_tl_free(&r);

    /* audit and the report say it where the shape's net path starts */
    r = kw_tl_run(NULL, kw_tl_bin(), "audit", run, "--shape", shape, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "STOPPED: the run was stopped before this shape's search finished"),
              "%s", r.out);
    cr_assert(strstr(r.out, "STOPPED") < strstr(r.out, "net path:"), "%s", r.out);
    kw_tl_free(&r);
    r = kw_tl_run(NULL, kw_tl_bin(), "report", run, "-o", "-", "--no-portability", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "<strong>Stopped:</strong> the run was stopped before this shape's "
                            "search finished"), "the report does not say it");
    kw_tl_free(&r);

    r = kw_tl_run(NULL, kw_tl_bin(), "export", run, "--format", "json", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "warning:") && strstr(r.err, "stopped before its evidence"), "%s",
              r.err);
    cr_assert(strstr(r.out, "\"format_version\": 4"), "%.200s", r.out);
    cr_assert(strstr(r.out, "\"warnings\": [\"search_stopped\", \"no_evidence\"]"), "%s", r.out);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* A finished search whose RUN/evidence has no end record (format 2): the
 * evidence phase was cut, here between results.xml and the end record (the
 * F line cut off, as a kill there leaves it), whatever results.xml says.
 * recommend and verify have read it so since 2026-12-07 (hrel11); audit,
 * report and export now say it too. main's binary: audit and report silent,
 * export's entries without no_evidence (they read results.xml alone). */
Test(results_cli, a_finished_search_whose_evidence_has_no_end_record_is_said_so_by_every_reader)
{
    KW_TL_HANG_GUARD(300);
    char *dir = kw_tl_tmpdir("kwtest"), run[4200];
    cr_assert_not_null(dir);
    snprintf(run, sizeof run, "%s/run", dir);
    char err[4096];
    cr_assert_eq(kw_tl_tune_evidence_cut(run, err, sizeof err), 0, "%s", err);
    kw_tl_proc r;

    r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--all", "-o", "-", NULL);
    cr_assert(strstr(r.err, "RUN/evidence has no end record"), "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(NULL, kw_tl_bin(), "audit", run, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "EVIDENCE NOT MADE: the search finished, but the run was stopped "
                            "before its evidence was made (its journal is complete, but "
                            "RUN/evidence has no end record)"), "%s", r.out);
    kw_tl_free(&r);
    r = kw_tl_run(NULL, kw_tl_bin(), "report", run, "-o", "-", "--no-portability", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "<strong>Evidence not made:</strong>"), "the report does not say it");
    kw_tl_free(&r);
    r = kw_tl_run(NULL, kw_tl_bin(), "export", run, "--format", "json", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "warning:") && strstr(r.err, "stopped before its evidence"), "%s",
              r.err);
    cr_assert(strstr(r.out, "\"no_evidence\""), "%s", r.out);
    kw_tl_free(&r);

    /* the end record written back (a resume does): every reader is quiet again */
    r = kw_tl_run(NULL, kw_tl_bin(), "tune", "--resume", run, "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(NULL, kw_tl_bin(), "audit", run, NULL);
    cr_assert_null(strstr(r.out, "EVIDENCE NOT MADE"), "%s", r.out);
    kw_tl_free(&r);
    r = kw_tl_run(NULL, kw_tl_bin(), "report", run, "-o", "-", "--no-portability", NULL);
    cr_assert_null(strstr(r.out, "Evidence not made"), "the finished run's report");
    kw_tl_free(&r);
    r = kw_tl_run(NULL, kw_tl_bin(), "export", run, "--format", "json", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_null(strstr(r.out, "no_evidence"), "%s", r.out);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);
}

/* recommend takes what a run's evidence lacks from its journal, the run's
 * source of truth, before results.xml: a stopped run whose results.xml was
 * edited to say nothing (evidence="none" and search="stopped" dropped, as a
 * stale copy of a finished run's would) is still said stopped before its
 * evidence, and --all still flags every row no_evidence. main read the state
 * from results.xml alone: silent, and rows without no_evidence. */
Test(results_cli, what_the_evidence_lacks_comes_from_the_journal_not_an_edited_results_xml)
{
    KW_TL_HANG_GUARD(300);
    char run[4200], shape[128], p[4300];
    char *dir = stopped_run(run, shape);
    snprintf(p, sizeof p, "%s/results.xml", run);
    char *xml = kw_tl_slurp(p);
    static const char *const drop[] = {" evidence=\"none\"", " search=\"stopped\""};
    for (int d = 0; d < 2; d++)
        for (char *at; (at = strstr(xml, drop[d])) != NULL;)
            memmove(at, at + strlen(drop[d]), strlen(at + strlen(drop[d])) + 1);
    cr_assert(kw_tl_write(p, xml) == 0);
    free(xml);

    kw_tl_proc r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--shape", shape, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "the run was stopped before its evidence was made (its journal ends "
                            "before its search finished)"), "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--all", "-o", "-", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    int rows = 0;
    char *save = NULL;
    for (char *l = strtok_r(r.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save), rows++)
        cr_assert(rows == 0 || strstr(l, "no_evidence"), "a row without no_evidence: %s", l);
    cr_assert_gt(rows, 1);
    kw_tl_free(&r);
    kw_tl_rmrf(dir);

    /* a complete journal: results.xml's state (model_run's: the portability
     * matrix without the re-check); without a results.xml of its own the
     * evidence has no record (the run was not stopped, as main said) */
    char *done = model_run(10);
    for (int gone = 0; gone < 2; gone++) {
        if (gone) {
            snprintf(p, sizeof p, "%s/results.xml", done);
            cr_assert_eq(unlink(p), 0);
        }
        r = kw_tl_run(NULL, kw_tl_bin(), "recommend", done, "--shape", "attn_prefill_s128_b8_c4",
                      NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        if (gone)
            cr_assert(strstr(r.err, "the run has no record of its evidence (its journal is "
                                    "complete, but it has no results.xml of its own)") &&
                      !strstr(r.err, "stopped"), "%s", r.err);
        else /* model_run makes the evidence without the re-check: results.xml says so */
            cr_assert(strstr(r.err, "(results.xml evidence=\"portability\")"), "%s", r.err);
        kw_tl_free(&r);
    }
    kw_tl_rmrf(done);
}

/* A run a tune is writing (it holds the run folder's writer lock: taken here
 * on a stopped run, so that the readers' answers do not depend on timing):
 * recommend, audit and the report say it is still running and to ask again
 * when it has finished, not that it was stopped and `tune --resume` finishes
 * it (which would be refused: the lock is held). Once the lock is let go the
 * same run is said stopped again. main said "stopped" in audit and the
 * report (recommend's wording, bfc27b2, had no test). */
Test(results_cli, a_run_a_tune_is_writing_is_said_still_running_not_stopped)
{
    KW_TL_HANG_GUARD(300);
    char run[4200], shape[128];
    char *dir = stopped_run(run, shape);
    kw_runlock *lock = NULL;
    cr_assert_eq(kw_runfolder_lock(&lock, run), 0, "%s", kw_error_last());
    for (int held = 1; held >= 0; held--) {
        kw_tl_proc r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--shape", shape, NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        int live = strstr(r.err, "the run is still running: its evidence is not made yet (a tune "
                                 "holds its lock)") != NULL &&
                   strstr(r.err, "the run is still running and this shape's search has not "
                                 "finished") != NULL &&
                   strstr(r.err, "ask again when the run has finished") != NULL;
        cr_assert_eq(live, held, "held %d: %s", held, r.err);
        cr_assert_eq(strstr(r.err, "tune --resume") == NULL, held, "held %d: %s", held, r.err);
        kw_tl_free(&r);
        r = kw_tl_run(NULL, kw_tl_bin(), "audit", run, "--shape", shape, NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_assert_eq(strstr(r.out, "RUNNING: the run is still running (a tune holds its lock) and "
                                   "this shape's search has not finished") != NULL, held,
                     "held %d: %s", held, r.out);
        cr_assert_eq(strstr(r.out, "STOPPED:") == NULL, held, "held %d: %s", held, r.out);
        cr_assert_eq(strstr(r.out, "(run still running)") != NULL, held, "held %d", held);
        kw_tl_free(&r);
        r = kw_tl_run(NULL, kw_tl_bin(), "report", run, "-o", "-", "--no-portability", NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_assert_eq(strstr(r.out, "<strong>Running:</strong> the run is still running") != NULL,
                     held, "held %d: the report does not say it", held);
        cr_assert_eq(strstr(r.out, "<strong>Stopped:</strong>") == NULL, held, "held %d", held);
        kw_tl_free(&r);
        if (held) {
            kw_runfolder_unlock(lock);
            lock = NULL;
        }
    }
    kw_tl_rmrf(dir);
}

/* The changes a recommendation makes that its own run shows do not earn
 * their place: the claim's criterion "reverting any one of its changes
 * alone costs less than the minimum effect" already met. audit, recommend
 * and the report say which, with the figure; checked here against `knobwise
 * eval` of each changed knob put back alone (the model is deterministic on
 * the seed's arrivals, so eval gives the run's figures): every named change
 * reverts for less than 1% with its printed figure, none that costs 1% or
 * more or fails a guard is named. main's binary listed every change under
 * the criterion and said nothing: validate_small's attn_prefill_s2048_b1_c2
 * ships qkv.tile_m=64 and qkv.tile_n=64, each +0.86% when reverted. */
Test(results_cli, the_changes_that_do_not_earn_their_place_are_named_with_their_figure)
{
    KW_TL_HANG_GUARD(300);
    char run[4200], space[4200];
    kw_tl_proc tune;
    char *dir = rp_small_run(run, &tune);
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    kw_tl_proc aud = kw_tl_run(NULL, kw_tl_bin(), "audit", run, NULL);
    cr_assert_eq(aud.status, 0, "%s", aud.err);
    kw_tl_proc rep = kw_tl_run(NULL, kw_tl_bin(), "report", run, "-o", "-", NULL);
    cr_assert_eq(rep.status, 0, "%s", rep.err);
    const char *shapes[] = {"attn_prefill_s2048_b1_c2", "attn_decode_kv2048_b32_c16"};
    int named_total = 0, reverted_total = 0;
    for (int si = 0; si < 2; si++) {
        kw_tl_proc r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--shape", shapes[si], NULL);
        cr_assert_eq(r.status, 0, "%s", r.err);
        /* the recommendation's knobs, the changed ones with their baseline */
        char words[4096] = "", knob[40][64], to[40][64], from[40][64];
        int n_ch = 0;
        const char *l = strstr(r.out, "  config ");
        cr_assert_not_null(l, "%s", r.out);
        for (l = strchr(l, '\n') + 1; strncmp(l, "    ", 4) == 0 && l[4] != '('; l = strchr(l, '\n') + 1) {
            char k[64], v[64], b[64];
            int got = sscanf(l, " %63s %63s (baseline %63[^);]", k, v, b);
            cr_assert_geq(got, 2, "%.80s", l);
            snprintf(words + strlen(words), sizeof words - strlen(words), " %s=%s", k, v);
            if (got == 3 && n_ch < 40) {
                snprintf(knob[n_ch], 64, "%s", k);
                snprintf(to[n_ch], 64, "%s", v);
                snprintf(from[n_ch], 64, "%s", b);
                n_ch++;
            }
        }
        /* eval: the recommendation, then each change put back alone */
        kw_sbuf in = {0};
        kw_sbuf_printf(&in, "%s%s\n", shapes[si], words);
        for (int i = 0; i < n_ch; i++) {
            char w[4096], one[200], back[200];
            snprintf(one, sizeof one, " %s=%s ", knob[i], to[i]);
            snprintf(back, sizeof back, " %s=%s ", knob[i], from[i]);
            snprintf(w, sizeof w, "%s ", words);
            char *at = strstr(w, one);
            cr_assert_not_null(at);
            kw_sbuf_printf(&in, "%s%.*s%s%s\n", shapes[si], (int)(at - w), w, back, at + strlen(one));
        }
        char cmd[8600];
        snprintf(cmd, sizeof cmd, "eval --space '%s' --seed 1 --stdin", space);
        kw_tl_proc ev = kw_tl_sh(cmd, kw_sbuf_cstr(&in));
        cr_assert_eq(ev.status, 0, "%s", ev.err);
        const char *row = strchr(ev.out, '\n') + 1; /* past the header */
        char *rf = rp_csv_field(row, 3);
        double rec_p95 = strtod(rf, NULL);
        free(rf);
        /* audit's line (the sentence recommend and the report print too) */
        char key[300];
        snprintf(key, sizeof key, "shape %s\n", shapes[si]);
        const char *as = strstr(aud.out, key), *ae = as ? strstr(as + 1, "\nshape ") : NULL;
        const char *line = as ? strstr(as, "  shipped changes that do not earn their place") : NULL;
        if (line && ae && line > ae)
            line = NULL;
        for (int i = 0; i < n_ch; i++) {
            row = strchr(row, '\n') + 1;
            char *p95 = rp_csv_field(row, 3), *guards = rp_csv_field(row, 12);
            double pct = (strtod(p95, NULL) - rec_p95) / rec_p95 * 100.0;
            int earns = !(pct < 1.0) || strcmp(guards, "pass") != 0;
            /* recommend's listing: the revert's figure beside the change,
             * where the run has it, as eval gives it */
            char lead[200], fig[64];
            snprintf(lead, sizeof lead, "\n    %-24s %-14s  (baseline %s", knob[i], to[i], from[i]);
            const char *kl = strstr(r.out, lead);
            cr_assert_not_null(kl, "recommend: no '%s' in %s", lead, r.out);
            kl += strlen(lead);
            if (strcmp(guards, "pass") != 0)
                snprintf(fig, sizeof fig, "; reverted alone fails %s)\n", guards);
            else if (pct != 0 && fabs(pct) < 0.005)
                snprintf(fig, sizeof fig, "; reverted alone %s<0.01%%)\n", pct > 0 ? "+" : "-");
            else
                snprintf(fig, sizeof fig, "; reverted alone %+.2f%%)\n", pct);
            cr_assert(strncmp(kl, ")\n", 2) == 0 || strncmp(kl, fig, strlen(fig)) == 0,
                      "%s %s: '%.80s', eval says '%s'", shapes[si], knob[i], kl, fig);
            reverted_total += strncmp(kl, fig, strlen(fig)) == 0;
            char named[200];
            snprintf(named, sizeof named, " %s=%s %+.2f%%", knob[i], to[i], pct);
            int said = line && strstr(line, named) && strstr(line, named) < strchr(line, '\n');
            if (earns) {
                snprintf(named, sizeof named, " %s=%s ", knob[i], to[i]);
                cr_assert(!line || !strstr(line, named) || strstr(line, named) > strchr(line, '\n'),
                          "%s: %s reverts for %+.2f%% (%s) yet is named: %.600s", shapes[si],
                          knob[i], pct, guards, line);
            } else if (said) {
                named_total++;
            } else {
                /* not named although it reverts for less: only when the run
                 * never evaluated that configuration (the baseline's value
                 * not one step from the shipped one); say which */
                cr_assert(line == NULL || !strstr(line, knob[i]), "%s: %s %+.2f%%: %.600s",
                          shapes[si], knob[i], pct, line);
            }
            free(p95);
            free(guards);
        }
        if (line) {
            /* recommend under the criteria and the report beside its own, the same sentence */
            const char *t = strstr(line, "reverting ");
            size_t n = (size_t)(strchr(t, '\n') - t);
            char *want = strndup(t, n);
            const char *rl = strstr(r.out, "  already met for ");
            cr_assert(rl && strstr(rl, want) == strstr(rl, "reverting ") && rl > strstr(r.out, "  disproof: "),
                      "recommend: no '%s' in:\n%s", want, r.out);
            cr_assert(strstr(rep.out, "<p class=\"note unearned\">Already met for "), "%.200s", want);
            char *q = strstr(want, "): ") + 3; /* the report escapes the apostrophes before */
            *strchr(q, ';') = '\0';
            cr_assert(strstr(rep.out, q), "report: no '%s'", q);
            free(want);
        }
        kw_sbuf_free(&in);
        kw_tl_free(&ev);
        kw_tl_free(&r);
    }
    cr_assert_gt(named_total, 0, "no change named on validate_small: %s", aud.out);
    cr_assert_gt(reverted_total, 0, "no revert figure in recommend's listing");
    kw_tl_free(&rep);
    kw_tl_free(&aud);
    kw_tl_free(&tune);
    kw_tl_rmrf(dir);
}

/* The report's net path (waterfall) is drawn on the search's sample, as
 * audit's, while the summary table above it leads with the re-check: the
 * note under its heading says which sample, and the baseline and
 * recommendation bars' titles give their one figure (main's read
 * "baseline: 0.000 -> 2599.297 us", the bar's left end, with no word of
 * the sample: the summary said 2627.403 for the same baseline). Checked
 * against results.xml's <metrics> (the search's figures) and samples. */
Test(results_cli, the_reports_net_path_says_its_sample_and_titles_its_ends_by_their_figure)
{
    KW_TL_HANG_GUARD(300);
    char run[4200];
    kw_tl_proc tune;
    xmlDocPtr doc;
    char *dir = rp_small_run_xml(run, &tune, &doc);
    kw_tl_proc rep = kw_tl_run(NULL, kw_tl_bin(), "report", run, "-o", "-", NULL);
    cr_assert_eq(rep.status, 0, "%s", rep.err);
    cr_assert(strstr(rep.out, ": 0.000 \xe2\x86\x92 ") == NULL, "a bar titled from 0");
    kw_sbuf names = {0};
    int n_shapes = rp_xpath_texts(&names, doc, "/results/shape/@name");
    cr_assert_gt(n_shapes, 0);
    const char *shape = names.data, *at = rep.out;
    for (int i = 0; i < n_shapes; i++, shape += strlen(shape) + 1) {
        kw_sbuf bs = {0}, ns = {0};
        char q[512], want[512];
        snprintf(q, sizeof q, "/results/shape[@name='%s']/baseline/metrics/metric[@name='p95_us']/@value",
                 shape);
        cr_assert_eq(rp_xpath_texts(&bs, doc, q), 1, "%s", q);
        snprintf(q, sizeof q, "/results/shape[@name='%s']/baseline/metrics/metric[@name='samples']/@value",
                 shape);
        cr_assert_eq(rp_xpath_texts(&ns, doc, q), 1, "%s", q);
        const char *h = strstr(at, "<h3>Net path: each shipped one-knob step");
        cr_assert_not_null(h, "shape %s", shape);
        snprintf(want, sizeof want, "</h3>\n<p class=\"note\">p95_us at the search&#39;s sample (%.0f "
                 "requests), as audit's net path.</p>", strtod(ns.data, NULL));
        cr_assert(strstr(h, want) == strchr(h, '>') + 1 + strcspn(strchr(h, '>') + 1, "<") ,
                  "shape %s: no '%s' under the heading: %.300s", shape, want, h);
        snprintf(want, sizeof want, "<title>baseline: %.3f us</title>", strtod(bs.data, NULL));
        const char *t = strstr(h, want);
        cr_assert(t && t < strstr(h, "</svg>"), "shape %s: no '%s'", shape, want);
        at = strstr(h, "</svg>");
        kw_sbuf_free(&bs);
        kw_sbuf_free(&ns);
    }
    kw_sbuf_free(&names);
    xmlFreeDoc(doc);
    kw_tl_free(&rep);
    kw_tl_free(&tune);
    kw_tl_rmrf(dir);
}

/* A figure after `key` in text (the first occurrence at or after from). */
static double rp_after(const char *text, const char *key)
{
    const char *a = strstr(text, key);
    cr_assert_not_null(a, "no '%s' in:\n%s", key, text);
    return strtod(a + strlen(key), NULL);
}

/* A continuous-batching (LLM serving) shape beside a static one: its TTFT and
 * TPOT p99, what a serving engineer watches, are in recommend's headline and
 * evidence, the rollback's watches (results.xml, the export, libknobwise
 * through it), the disproof criteria (with the space's SLAs), audit and the
 * report; the static shape's outputs carry none. Figures checked against
 * `knobwise eval` at the final sample (the re-check's sample, its own
 * seed and thermal window), ceilings by their closed form: the figure plus
 * its own margin (since stop 48: the larger of the run's minimum effect and
 * its own interval above it; stop 47's test took the primary's), capped at
 * the baseline's when below it and at the SLA. Failed on stop 46's main (no
 * TTFT/TPOT anywhere but the metrics). */
/* A run of a small continuous-batching space (LLM serving): the shape
 * serve_cb_p256_1024_o64_256 beside the static decode_kv1024_b16, four knobs,
 * the TTFT/TPOT SLAs of spaces/llama3_8b_layer.xml, 200 requests searched and
 * 1000 re-checked (about 5 s of CPU to tune). Its space in space, the run in run;
 * returns the folder holding both (kw_tl_rmrf it). */
static char *rp_cb_run_at(char space[4200], char run[4200], kw_tl_proc *tune, int final);

static char *rp_cb_run(char space[4200], char run[4200], kw_tl_proc *tune)
{
    return rp_cb_run_at(space, run, tune, 1000);
}

/* rp_cb_run with final_requests final. */
static char *rp_cb_run_at(char space[4200], char run[4200], kw_tl_proc *tune, int final)
{
    char *dir = kw_tl_tmpdir("kwllm");
    char text[4096];
    snprintf(space, 4200, "%s/cb.xml", dir);
    snprintf(run, 4200, "%s/run", dir);
    snprintf(text, sizeof text,
             "<?xml version=\"1.0\"?>\n<space name=\"cb\" block=\"llama3_8b_layer\">\n"
             "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n"
             "  <workload file=\"%s/spaces/workloads/llama3_8b.xml\"/>\n"
             "  <shape ref=\"serve_cb_p256_1024_o64_256\"/>\n  <shape ref=\"decode_kv1024_b16\"/>\n"
             "  <knob name=\"max_seqs\" values=\"8 32 128\" baseline=\"32\"/>\n"
             "  <knob name=\"prefill_chunk_tokens\" values=\"0 256 512\" baseline=\"0\"/>\n"
             "  <knob name=\"fuse_attention\" values=\"none flash\" baseline=\"none\"/>\n"
             "  <knob name=\"launch_mode\" values=\"eager graph\" baseline=\"eager\"/>\n"
             "  <guards sla_ttft_p99_us=\"2000000\" sla_tpot_p99_us=\"200000\"/>\n"
             "  <tuning sim_requests=\"200\" final_requests=\"%d\"/>\n</space>\n",
             kw_tl_src(), kw_tl_src(), final);
    cr_assert_eq(kw_tl_write(space, text), 0);
    /* about 5 s of CPU plain, several times that under ASan on a loaded
     * host: the default 60 s timeout killed it there (CI at load 20) */
    kw_tl_opts o = {.timeout_s = 240};
    *tune = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", space, "--out", run, "--quiet", NULL);
    cr_assert_eq(tune->status, 0, "%s", tune->err);
    return dir;
}

/* Columns col[0..n) of `knobwise eval` of shape cb of space at `requests`
 * with the long thermal window (the re-check's evaluation) and eval
 * arguments sets ("--set 'k=v'..."; "" for the baseline) into out. */
static void rp_eval_cols(double *out, const char *space, const char *cb, int requests, const char *sets,
                         const char *const *col, int n)
{
    char cmd[8800];
    snprintf(cmd, sizeof cmd, "eval --space '%s' --shape %s --requests %d --thermal --format csv%s", space,
             cb, requests, sets);
    kw_tl_proc ev = kw_tl_sh(cmd, NULL);
    cr_assert_eq(ev.status, 0, "%s", ev.err);
    for (int c = 0; c < n; c++) {
        char buf[64];
        kw_tl_csv_col(ev.out, col[c], buf, sizeof buf);
        cr_assert(buf[0], "%s", ev.out);
        out[c] = strtod(buf, NULL);
    }
    kw_tl_free(&ev);
}

/* The end (end "hi" or "lo") of the 95% interval of TTFT (what "ttft") or
 * TPOT p99 that results.xml's <recheck> of run gives beside that p99
 * (figure v, as the file spells it with 3 decimals). */
static double rp_recheck_ci(const char *run, const char *what, double v, const char *end_name)
{
    char path[4300], key[128];
    snprintf(path, sizeof path, "%s/results.xml", run);
    char *xml = kw_tl_slurp(path);
    cr_assert_not_null(xml);
    snprintf(key, sizeof key, "%s_p99_us=\"%.3f\"", what, v);
    const char *at = strstr(xml, key);
    cr_assert_not_null(at, "no %s in results.xml", key);
    const char *end = strstr(at, "/>");
    snprintf(key, sizeof key, "%s_p99_ci_%s_us=\"", what, end_name);
    const char *h = strstr(at, key);
    cr_assert(h && h < end, "no %s in the <recheck> of %s", key, what);
    double hi = strtod(h + strlen(key), NULL);
    free(xml);
    return hi;
}

Test(results_cli, an_llm_serving_shapes_ttft_and_tpot_p99_are_headline_watches_and_criteria)
{
    KW_TL_HANG_GUARD(300);
    char space[4200], run[4200];
    kw_tl_proc tune;
    char *dir = rp_cb_run(space, run, &tune);
    const char *cb = "serve_cb_p256_1024_o64_256";
    kw_tl_proc r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--shape", cb, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* the recommendation's knobs, evaluated at the re-check's sample */
    kw_sbuf sets = {0};
    const char *l = strstr(r.out, "  config ");
    cr_assert_not_null(l, "%s", r.out);
    for (l = strchr(l, '\n') + 1; strncmp(l, "    ", 4) == 0 && l[4] != '('; l = strchr(l, '\n') + 1) {
        char k[64], v[64];
        cr_assert_eq(sscanf(l, " %63s %63s", k, v), 2);
        kw_sbuf_printf(&sets, " --set '%s=%s'", k, v);
    }
    double f[2][5]; /* recommendation, baseline: ttft, tpot, p95, p_ci_hi, p99 */
    static const char *const col[5] = {"ttft_p99_us", "tpot_p99_us", "p95_us", "p_ci_hi_us", "p99_us"};
    for (int k = 0; k < 2; k++)
        rp_eval_cols(f[k], space, cb, 1000, k ? "" : kw_sbuf_cstr(&sets), col, 5);
    kw_sbuf_free(&sets);
    cr_assert(f[0][0] > 0 && f[0][1] > 0 && f[1][0] > 0);
    /* each ceiling's own margin (stop 48): the larger of the run's minimum
     * effect (1%) and its own interval's upper end above the figure, read
     * from the recommendation's <recheck> (rp_ceilings_hold_the_larger_
     * recheck checks the interval against a larger sample) */
    double ceil[2];
    const double sla[2] = {2000000, 200000};
    for (int c = 0; c < 2; c++) {
        double hi = rp_recheck_ci(run, c ? "tpot" : "ttft", f[0][c], "hi");
        double margin = fmax(1.0, (hi - f[0][c]) / f[0][c] * 100.0);
        ceil[c] = f[0][c] * (1 + margin / 100);
        if (f[0][c] < f[1][c] && ceil[c] > f[1][c])
            ceil[c] = f[1][c];
        if (ceil[c] > sla[c])
            ceil[c] = sla[c];
    }
    /* recommend: headline (with the baseline's), watch line, evidence, criteria */
    char key[200];
    snprintf(key, sizeof key, "TTFT p99 %.3f us (baseline %.3f us, ", f[0][0], f[1][0]);
    cr_expect(strstr(r.out, key) != NULL, "no '%s' in:\n%s", key, r.out);
    snprintf(key, sizeof key, "TPOT p99 %.3f us (baseline %.3f us, ", f[0][1], f[1][1]);
    cr_expect(strstr(r.out, key) != NULL, "no '%s' in:\n%s", key, r.out);
    cr_expect(fabs(rp_after(r.out, "TTFT p99 <= ") - ceil[0]) < 0.002, "ceiling %.3f", ceil[0]);
    cr_expect(fabs(rp_after(r.out, "TPOT p99 <= ") - ceil[1]) < 0.002, "ceiling %.3f", ceil[1]);
    cr_expect(strstr(r.out, "TTFT p99 above the SLA of 2000000.000 us, TPOT p99 above the SLA of "
                            "200000.000 us") != NULL, "%s", r.out);
    cr_expect(fabs(rp_after(r.out, "time to first token p99 above ") - ceil[0]) < 0.002, "%s", r.out);
    cr_expect(fabs(rp_after(r.out, "time per output token p99 above ") - ceil[1]) < 0.002, "%s", r.out);
    /* results.xml: the re-check's figures, the watches at the end */
    char path[4300];
    snprintf(path, sizeof path, "%s/results.xml", run);
    char *xml = kw_tl_slurp(path);
    cr_assert_not_null(xml);
    snprintf(key, sizeof key, "ttft_p99_us=\"%.3f\"", f[0][0]);
    cr_expect(strstr(xml, key) != NULL, "%s", key);
    cr_expect(fabs(rp_after(xml, "guard=\"ttft_p99_ceiling\" metric=\"ttft_p99_us\" max=\"") - ceil[0]) <
              0.002);
    cr_expect(fabs(rp_after(xml, "guard=\"tpot_p99_ceiling\" metric=\"tpot_p99_us\" max=\"") - ceil[1]) <
              0.002);
    /* the static shape's <shape> has none of it */
    const char *st = strstr(xml, "<shape name=\"decode_kv1024_b16\"");
    cr_assert_not_null(st);
    const char *st_end = strstr(st, "</shape>");
    char *stx = strndup(st, (size_t)(st_end - st));
    cr_expect(strstr(stx, "ttft_p99_ceiling") == NULL && strstr(stx, "<recheck") != NULL &&
              strstr(strstr(stx, "<recheck"), "ttft_p99_us=") == NULL);
    free(stx);
    free(xml);
    kw_tl_proc r2 = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--shape", "decode_kv1024_b16", NULL);
    cr_assert_eq(r2.status, 0, "%s", r2.err);
    cr_expect(strstr(r2.out, "TTFT p99 <=") == NULL && strstr(r2.out, "time to first token") == NULL,
              "%s", r2.out);
    /* the export a runtime loads (through libknobwise) */
    kw_tl_proc ex = kw_tl_run(NULL, kw_tl_bin(), "export", run, "--format", "json", NULL);
    cr_assert_eq(ex.status, 0, "%s", ex.err);
    cr_expect(fabs(rp_after(ex.out, "{\"guard\": \"ttft_p99_ceiling\", \"metric\": \"ttft_p99_us\", \"max\": ") -
                   ceil[0]) < 0.002, "%s", ex.out);
    cr_expect(strstr(ex.out, "time per output token p99 above") != NULL);
    /* audit and the report's per-shape view */
    kw_tl_proc au = kw_tl_run(NULL, kw_tl_bin(), "audit", run, "--shape", cb, NULL);
    cr_assert_eq(au.status, 0, "%s", au.err);
    snprintf(key, sizeof key, "  TTFT p99 %.3f us (baseline %.3f us", f[0][0], f[1][0]);
    cr_expect(strstr(au.out, key) != NULL, "%s", au.out);
    kw_tl_proc rep = kw_tl_run(NULL, kw_tl_bin(), "report", run, "-o", "-", NULL);
    cr_assert_eq(rep.status, 0, "%s", rep.err);
    snprintf(key, sizeof key, "TTFT p99 %.3f &rarr; %.3f us", f[1][0], f[0][0]);
    cr_expect(strstr(rep.out, key) != NULL, "%s", key);
    cr_expect(strstr(rep.out, "<td class=\"l\">ttft_p99_us (SLA)</td>") != NULL);
    cr_expect(strstr(rep.out, "<td class=\"l\">tpot_p99_us (rollback ceiling") != NULL);
    kw_tl_free(&rep);
    kw_tl_free(&au);
    kw_tl_free(&ex);
    kw_tl_free(&r2);
    kw_tl_free(&r);
    kw_tl_free(&tune);
    kw_tl_rmrf(dir);
}

/* The recommendation's knobs on shape cb as recommend --shape prints them,
 * as eval's --set arguments, into sets. */
static void rp_rec_sets(kw_sbuf *sets, const char *run, const char *cb)
{
    kw_tl_proc r = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--shape", cb, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *l = strstr(r.out, "  config ");
    cr_assert_not_null(l, "%s", r.out);
    for (l = strchr(l, '\n') + 1; strncmp(l, "    ", 4) == 0 && l[4] != '('; l = strchr(l, '\n') + 1) {
        char k[64], v[64];
        cr_assert_eq(sscanf(l, " %63s %63s", k, v), 2);
        kw_sbuf_printf(sets, " --set '%s=%s'", k, v);
    }
    kw_tl_free(&r);
}

/* The TTFT/TPOT p99 rollback ceilings are not broken by the run's own
 * larger re-check (stop 48). The small LLM run re-checked at 400 requests:
 * its recommendation's TTFT and TPOT p99 at 1,000 requests (`knobwise eval
 * --requests 1000 --thermal`, what the re-check of the same run with
 * final_requests 1000 reads) lie within each ceiling and within each own
 * 95% interval's upper end; each ceiling is the figure plus the larger of
 * min_effect and that interval's upper end above it (not capped here: the
 * SLAs are far above, and the figure lies above the baseline's), its basis
 * saying so; and the interval holds the figure it is around. Fails on main:
 * the ceilings borrowed the request latency's margin (4.55% here), and the
 * TTFT ceiling lay below the 1,000-request figure (122251.478 against
 * 134337.765 us); so on 4 of 8 seeds (README, NEWS stop 48). */
Test(results_cli, the_ttft_and_tpot_ceilings_hold_the_runs_own_larger_recheck)
{
    KW_TL_HANG_GUARD(300);
    char space[4200], run[4200], path[4300];
    kw_tl_proc tune;
    char *dir = rp_cb_run_at(space, run, &tune, 400);
    const char *cb = "serve_cb_p256_1024_o64_256";
    kw_sbuf sets = {0};
    rp_rec_sets(&sets, run, cb);
    double at[2][2]; /* [400, 1000 requests][ttft, tpot] */
    static const char *const col[2] = {"ttft_p99_us", "tpot_p99_us"};
    for (int k = 0; k < 2; k++)
        rp_eval_cols(at[k], space, cb, k ? 1000 : 400, kw_sbuf_cstr(&sets), col, 2);
    kw_sbuf_free(&sets);
    snprintf(path, sizeof path, "%s/results.xml", run);
    char *xml = kw_tl_slurp(path);
    cr_assert_not_null(xml);
    const char *what[2] = {"ttft", "tpot"};
    for (int c = 0; c < 2; c++) {
        char key[160];
        snprintf(key, sizeof key, "guard=\"%s_p99_ceiling\" metric=\"%s_p99_us\" max=\"", what[c], what[c]);
        double ceiling = rp_after(xml, key);
        /* the behaviour: the run's own figure at 2.5x the sample is within */
        cr_expect(at[1][c] <= ceiling, "%s p99 at 1000 requests %.3f us above the ceiling %.3f us",
                  what[c], at[1][c], ceiling);
        double hi = rp_recheck_ci(run, what[c], at[0][c], "hi"), lo = rp_recheck_ci(run, what[c], at[0][c], "lo");
        cr_expect(hi > at[0][c] && lo <= at[0][c], "%s: [%.3f, %.3f] around %.3f", what[c], lo, hi, at[0][c]);
        double margin = fmax(1.0, (hi - at[0][c]) / at[0][c] * 100.0);
        cr_expect(fabs(ceiling - at[0][c] * (1 + margin / 100)) < 0.002, "%s: ceiling %.3f, margin %.2f%%",
                  what[c], ceiling, margin);
        cr_expect(at[1][c] <= hi, "%s p99 at 1000 requests %.3f us above its interval's upper end %.3f",
                  what[c], at[1][c], hi);
    }
    cr_expect(strstr(xml, "(upper end of its own 95% interval)") != NULL, "no own-interval basis");
    free(xml);
    kw_tl_free(&tune);
    kw_tl_rmrf(dir);
}

/* mappings.csv carries the guard thresholds a runtime watches (stop 48):
 * each tuned row's watch_* columns are the recommended configuration's
 * <watch> max or min in results.xml (read with libxml2's XPath, as the file
 * spells them), the TTFT/TPOT ones on the continuous-batching shape only
 * (empty on the static one). Fails on main (no such columns). */
Test(results_cli, mappings_csv_carries_results_xmls_watches_row_by_row)
{
    KW_TL_HANG_GUARD(300);
    char space[4200], run[4200], path[4300];
    kw_tl_proc tune;
    char *dir = rp_cb_run_at(space, run, &tune, 400);
    kw_tl_proc all = kw_tl_run(NULL, kw_tl_bin(), "recommend", run, "--all", NULL);
    cr_assert_eq(all.status, 0, "%s", all.err);
    snprintf(path, sizeof path, "%s/mappings.csv", run);
    char *csv = kw_tl_slurp(path);
    cr_assert_not_null(csv);
    snprintf(path, sizeof path, "%s/results.xml", run);
    xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
    cr_assert_not_null(doc);
    static const char *const col[8] = {"watch_p95_us_max", "watch_p99_us_max", "watch_quality_cos_min",
                                       "watch_quality_rel_rms_max", "watch_throttle_pct_max",
                                       "watch_fallback_pct_max", "watch_ttft_p99_us_max",
                                       "watch_tpot_p99_us_max"};
    static const char *const shape[2] = {"serve_cb_p256_1024_o64_256", "decode_kv1024_b16"};
    for (int s = 0; s < 2; s++) {
        /* the row of shape s as a one-row CSV under the header */
        const char *nl = strchr(csv, '\n');
        char key[128];
        snprintf(key, sizeof key, "\n%s,", shape[s]);
        const char *row = strstr(csv, key);
        cr_assert(nl && row, "no row for %s", shape[s]);
        kw_sbuf one = {0};
        kw_sbuf_putn(&one, csv, (size_t)(nl - csv + 1));
        kw_sbuf_putn(&one, row + 1, strcspn(row + 1, "\n") + 1);
        /* results.xml's watches of the recommendation, in document order */
        char q[400];
        snprintf(q, sizeof q, "/results/shape[@name='%s']/config[@recommended='true']/rollback/watch/@max | "
                 "/results/shape[@name='%s']/config[@recommended='true']/rollback/watch/@min", shape[s], shape[s]);
        kw_sbuf want = {0};
        int n = rp_xpath_texts(&want, doc, q);
        cr_expect_eq(n, s == 0 ? 8 : 6, "%s: %d watches", shape[s], n);
        const char *w = kw_sbuf_cstr(&want);
        for (int c = 0; c < 8; c++) {
            char got[64];
            kw_tl_csv_col(kw_sbuf_cstr(&one), col[c], got, sizeof got);
            snprintf(key, sizeof key, ",%s", col[c]);
            cr_assert(strstr(csv, key) && strstr(csv, key) < nl, "no column %s", col[c]);
            cr_expect_str_eq(got, c < n ? w : "", "%s: %s", shape[s], col[c]);
            if (c < n)
                w += strlen(w) + 1;
        }
        kw_sbuf_free(&want);
        kw_sbuf_free(&one);
    }
    xmlFreeDoc(doc);
    free(csv);
    kw_tl_free(&all);
    kw_tl_free(&tune);
    kw_tl_rmrf(dir);
}

/* recommend's and audit's RANKING (results.xml's ranking_note, one sentence
 * of some 600 characters on one line until stop 47): the verdict on the
 * RANKING line, then "figures:", "why:" and "read:" lines within 100
 * columns; joined again (parts with ": ", wrapped lines with " ") they give
 * the note results.xml holds, word for word. Both shapes of the small
 * LLM run are unresolved at 1000 requests. Fails on main (one line). */
Test(results_cli, the_ranking_note_reads_in_labelled_lines_within_100_columns_losing_no_word)
{
    KW_TL_HANG_GUARD(300);
    char space[4200], run[4200], path[4300];
    kw_tl_proc tune;
    char *dir = rp_cb_run(space, run, &tune);
    snprintf(path, sizeof path, "%s/results.xml", run);
    xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
    cr_assert_not_null(doc);
    xmlXPathContextPtr xc = xmlXPathNewContext(doc);
    const char *shapes[2] = {"serve_cb_p256_1024_o64_256", "decode_kv1024_b16"};
    for (int si = 0; si < 2; si++) {
        char xp[200];
        snprintf(xp, sizeof xp, "string(/results/shape[@name='%s']/@ranking_note)", shapes[si]);
        xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST xp, xc);
        cr_assert(o && o->stringval && o->stringval[0], "%s: no ranking_note", shapes[si]);
        for (int verb = 0; verb < 2; verb++) {
            kw_tl_proc r = kw_tl_run(NULL, kw_tl_bin(), verb ? "audit" : "recommend", run, "--shape",
                                     shapes[si], NULL);
            cr_assert_eq(r.status, 0, "%s", r.err);
            const char *l = strstr(r.out, "  RANKING: ");
            cr_assert_not_null(l, "%s", r.out);
            kw_sbuf got = {0};
            const char *e = strchr(l, '\n');
            kw_sbuf_putn(&got, l + 11, (size_t)(e - l - 11));
            int labels = 0;
            for (l = e + 1; strncmp(l, "    ", 4) == 0; l = e + 1) {
                e = strchr(l, '\n');
                cr_assert_leq(e - l, 100, "a line over 100 columns: %.*s", (int)(e - l), l);
                const char *t = l + 4;
                static const char *const lb[3] = {"figures: ", "why:     ", "read:    "};
                int is_label = 0;
                for (int k = 0; k < 3; k++)
                    if (strncmp(t, lb[k], strlen(lb[k])) == 0) {
                        cr_expect_eq(k, labels, "labels in order: %.*s", (int)(e - l), l);
                        t += strlen(lb[k]);
                        is_label = 1;
                        labels++;
                    }
                if (!is_label) /* a wrapped line: its indent under the label's text */
                    while (*t == ' ')
                        t++;
                kw_sbuf_puts(&got, is_label ? ": " : " ");
                kw_sbuf_putn(&got, t, (size_t)(e - t));
            }
            cr_expect_eq(labels, 3, "%s", r.out);
            cr_expect_str_eq(kw_sbuf_cstr(&got), (const char *)o->stringval, "%s", r.out);
            kw_sbuf_free(&got);
            kw_tl_free(&r);
        }
        xmlXPathFreeObject(o);
    }
    xmlXPathFreeContext(xc);
    xmlFreeDoc(doc);
    kw_tl_free(&tune);
    kw_tl_rmrf(dir);
}
