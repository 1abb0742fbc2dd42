/* test_ui.c - what a person reads from knobwise, end to end on the built
 * binary: tune's progress on a pseudo-terminal (never wider than it) and its
 * plain lines when stderr is not a terminal (one per shape, none redrawn, the
 * replay of a resume named); recommend's phase, distances and mappings.csv;
 * schema errors that name what is allowed, "did you mean", show --catalogue.
 * The line-fitting itself is unit-tested in tests/test_progline.c. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>
#include <ftw.h>

#include "lib/kw_tl.h"

/* each test's hang guard (KW_TL_HANG_GUARD, not Criterion's .timeout) */
static void kw_ui_guard(void) { KW_TL_HANG_GUARD(300); }
TestSuite(ui, .init = kw_ui_guard);

static const char *bin(void)
{
    const char *b = getenv("KW_BIN");
    return b ? b : "./knobwise";
}

static const char *src(const char *rel)
{
    static char p[4][4096];
    static int k;
    const char *s = getenv("KW_SRCDIR");
    char *o = p[k++ % 4];
    snprintf(o, 4096, "%s/%s", s ? s : ".", rel);
    return o;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *s = hay; (s = strstr(s, needle)) != NULL; s += strlen(needle))
        n++;
    return n;
}

Test(ui, tune_on_a_pipe_writes_one_plain_line_per_shape)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", src("spaces/validate_small.xml"), "--budget",
                         "30", "--out", "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_null(strchr(r.err, '\r'), "a redrawn line on a pipe: %s", r.err);
    cr_assert_eq(count(r.err, "\n"), 2, "%s", r.err);
    cr_assert_eq(count(r.err, "knobwise tune: shape attn_prefill_s2048_b1_c2 done: p95 "), 1, "%s",
                 r.err);
    cr_assert_eq(count(r.err, "knobwise tune: shape attn_decode_kv2048_b32_c16 done: p95 "), 1, "%s",
                 r.err);
    cr_assert(strstr(r.err, ", 30 evals, ") && strstr(r.err, " of 2)\n"), "%s", r.err);
    kw_tl_free(&r);
    /* --quiet: nothing */
    r = kw_tl_run(&o, bin(), "tune", "--space", src("spaces/validate_small.xml"), "--budget", "10",
                 "--out", "run2", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.err, "");
    kw_tl_free(&r);
    kw_tl_rmrf(d);
}

/* The first run must journal a few rounds for the resume to replay: the time
 * limit stops a run inside a round (the round is dropped), so it is 2 s, not a
 * fraction of one 512-evaluation round. */
Test(ui, resume_on_a_pipe_names_the_replay)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    /* The embedded default under OFAT: its rounds are small (a sweep of one
     * incumbent's neighbours), so a 2 s limit leaves many complete rounds to
     * replay, and the whole search takes far longer than 2 s even on a fast
     * machine (an exhaustive run of a small space can finish inside the limit
     * there, or commit a single huge round under a sanitizer). */
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--threads", "1", "--time-limit", "2", "--out", "run",
                         NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "time limit reached"), "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "tune", "--resume", "run", "--time-limit", "1", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "knobwise tune: resume: replaying "), "%s", r.err);
    cr_assert(strstr(r.err, "knobwise tune: resume: journal replayed ("), "%s", r.err);
    cr_assert_null(strchr(r.err, '\r'), "%s", r.err);
    kw_tl_free(&r);
    kw_tl_rmrf(d);
}

/* ---- recommend: the phase, the distance of a borrowed winner, mappings.csv ---- */

/* Tune validate_small (both shapes, or the one named) into DIR/NAME. */
static void tune_small(const char *dir, const char *name, const char *only_shape)
{
    kw_tl_opts o = {.timeout_s = 120, .cwd = dir};
    kw_tl_proc r = only_shape
                    ? kw_tl_run(&o, bin(), "tune", "--space", src("spaces/validate_small.xml"),
                               "--budget", "30", "--quiet", "--out", name, "--shape", only_shape,
                               NULL)
                    : kw_tl_run(&o, bin(), "tune", "--space", src("spaces/validate_small.xml"),
                               "--budget", "30", "--quiet", "--out", name, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
}

/* Field `col` (0-based) of the line of csv whose first field is key. */
static int csv_field(char *out, size_t n, const char *csv, const char *key, int col)
{
    size_t kl = strlen(key);
    for (const char *l = csv; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, key, kl) != 0 || l[kl] != ',')
            continue;
        const char *f = l;
        for (int c = 0; c < col && f; c++) {
            f = strpbrk(f, ",\n");
            f = f && *f == ',' ? f + 1 : NULL;
        }
        if (!f)
            return -1;
        snprintf(out, n, "%.*s", (int)strcspn(f, ",\n"), f);
        return 0;
    }
    return -1;
}

static int header_col(const char *csv, const char *name)
{
    int c = 0;
    size_t nl = strlen(name);
    for (const char *h = csv; *h && *h != '\n'; c++) {
        size_t len = strcspn(h, ",\n");
        if (len == nl && strncmp(h, name, nl) == 0)
            return c;
        h += len;
        if (*h == ',')
            h++;
    }
    return -1;
}

Test(ui, recommend_by_numbers_needs_the_phase_when_the_run_has_both)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    tune_small(d, "both", NULL);
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "recommend", "both", "--batch", "16", "--seq", "4096",
                         "--streams", "4", NULL);
    cr_assert_eq(r.status, 2, "%s%s", r.out, r.err);
    cr_assert(strstr(r.err, "need --phase prefill|decode"), "%s", r.err);
    cr_assert_str_eq(r.out, "");
    kw_tl_free(&r);
    /* with the phase: borrowed from the decode shape, each dimension's distance
     * and the extrapolation named (the run tuned one decode shape: b32 kv2048 c16) */
    r = kw_tl_run(&o, bin(), "recommend", "both", "--batch", "16", "--seq", "4096", "--streams", "4",
                 "--phase", "decode", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "distance to attn_decode_kv2048_b32_c16: batch 16 vs 32 (x0.5), kv_len "
                            "4096 vs 2048 (x2), streams 4 vs 16 (x0.25), phase decode vs decode"),
              "%s", r.out);
    cr_assert(strstr(r.out, "WARNING: extrapolates: batch 16 is outside the tuned decode range "
                            "32..32"), "%s", r.out);
    cr_assert_null(strstr(r.out, "crosses phase"), "%s", r.out);
    kw_tl_free(&r);
    /* the tuned shape's own numbers: its own winner, no distance */
    r = kw_tl_run(&o, bin(), "recommend", "both", "--batch", "32", "--seq", "2048", "--streams", "16",
                 "--phase", "decode", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "shape attn_decode_kv2048_b32_c16: tuned in this run"), "%s", r.out);
    cr_assert_null(strstr(r.out, "distance"), "%s", r.out);
    kw_tl_free(&r);
    kw_tl_rmrf(d);
}

Test(ui, recommend_infers_a_single_phase_and_warns_when_it_crosses)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    tune_small(d, "pre", "attn_prefill_s2048_b1_c2");
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "recommend", "pre", "--batch", "2", "--seq", "1024",
                         "--streams", "2", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "phase prefill (inferred: every tuned shape of the run is prefill"),
              "%s", r.out);
    cr_assert(strstr(r.out, "batch 2 vs 1 (x2), seq 1024 vs 2048 (x0.5), streams 2 vs 2 (=)"),
              "%s", r.out);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "recommend", "pre", "--batch", "2", "--seq", "1024", "--streams", "2",
                 "--phase", "decode", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "crosses phase: the winner was tuned for prefill and is used for decode "
                            "(the run tuned no shape of this phase)"), "%s", r.out);
    kw_tl_free(&r);
    /* numbers the model refuses (a KV cache beyond the device): the message
     * names the options, not a line 0 of the workload file the made shape is
     * not in (main's binary: "spaces/workloads/llama7b.xml:0: shape ...") */
    r = kw_tl_run(&o, bin(), "recommend", "pre", "--batch", "4096", "--seq", "2048", "--streams",
                  "16", NULL);
    cr_assert_eq(r.status, 2, "%s%s", r.out, r.err);
    cr_assert(strstr(r.err, "knobwise recommend: --batch 4096 --seq 2048 --streams 16: shape "
                            "'prefill_b4096_s2048_c16': "), "%s", r.err);
    cr_assert_null(strstr(r.err, ".xml:0:"), "%s", r.err);
    kw_tl_free(&r);
    kw_tl_rmrf(d);
}

Test(ui, mappings_csv_ends_with_the_shape_and_its_predicted_tail)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    tune_small(d, "pre", "attn_prefill_s2048_b1_c2");
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "recommend", "pre", "--all", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    char p[4300];
    snprintf(p, sizeof p, "%s/pre/mappings.csv", d);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f);
    static char csv[65536];
    csv[fread(csv, 1, sizeof csv - 1, f)] = '\0';
    fclose(f);
    /* the contract's first columns, the knobs, then the added ones at the end */
    cr_assert(strncmp(csv, "shape,config_id,borrowed_from,", 30) == 0, "%.100s", csv);
    const char *tail =
        ",phase,batch,seq,kv_len,streams,p95_us,p99_us,borrow_warnings,figures_from,file_rows,"
        "figures_basis,watch_p95_us_max,watch_p99_us_max,watch_quality_cos_min,"
        "watch_quality_rel_rms_max,watch_throttle_pct_max,watch_fallback_pct_max,"
        "watch_ttft_p99_us_max,watch_tpot_p99_us_max\n";
    const char *nl = strchr(csv, '\n');
    cr_assert(nl && (size_t)(nl + 1 - csv) > strlen(tail) &&
                  strncmp(nl + 1 - strlen(tail), tail, strlen(tail)) == 0, "%.400s", csv);
    /* a model run: every row's figures are the model's; file_rows, next to
     * figures_basis, is the number of rows on every row; figures_basis
     * (last before stop 48's eight watch_* columns) names the sample */
    int rows = 0;
    long said[64];
    for (const char *l = strchr(csv, '\n') + 1; *l; l = strchr(l, '\n') + 1, rows++) {
        const char *basis = strchr(l, '\n');
        for (int k = 0; k < 8; k++) /* back over the watch_* columns */
            while (*--basis != ',')
                ;
        while (basis[-1] != ',')
            basis--;
        cr_assert(strncmp(basis, "recheck,", 8) == 0 || strncmp(basis, "search,", 7) == 0 ||
                      strncmp(basis, "evaluated,", 10) == 0, "%.300s", l);
        const char *last = basis - 1;
        while (last[-1] != ',')
            last--;
        cr_assert(strncmp(last - 7, ",model,", 7) == 0, "%.300s", l);
        cr_assert_lt(rows, 64);
        said[rows] = strtol(last, NULL, 10);
    }
    cr_assert_gt(rows, 1);
    for (int i = 0; i < rows; i++)
        cr_assert_eq(said[i], rows, "row %d: file_rows %ld, the file has %d", i + 1, said[i], rows);
    int c_phase = header_col(csv, "phase"), c_batch = header_col(csv, "batch"),
        c_seq = header_col(csv, "seq"), c_kv = header_col(csv, "kv_len"),
        c_streams = header_col(csv, "streams"), c_p95 = header_col(csv, "p95_us"),
        c_warn = header_col(csv, "borrow_warnings"), c_from = header_col(csv, "borrowed_from");
    char v[128];
    /* the shapes' numbers are the ones their names (and the workload) give */
    cr_assert_eq(csv_field(v, sizeof v, csv, "attn_prefill_s2048_b1_c2", c_phase), 0);
    cr_assert_str_eq(v, "prefill");
    csv_field(v, sizeof v, csv, "attn_prefill_s2048_b1_c2", c_batch);
    cr_assert_str_eq(v, "1");
    csv_field(v, sizeof v, csv, "attn_prefill_s2048_b1_c2", c_seq);
    cr_assert_str_eq(v, "2048");
    csv_field(v, sizeof v, csv, "attn_decode_kv2048_b32_c16", c_phase);
    cr_assert_str_eq(v, "decode");
    csv_field(v, sizeof v, csv, "attn_decode_kv2048_b32_c16", c_kv);
    cr_assert_str_eq(v, "2048");
    csv_field(v, sizeof v, csv, "attn_decode_kv2048_b32_c16", c_streams);
    cr_assert_str_eq(v, "16");
    /* the tuned shape's predicted p95 is rank 1's in ranked.csv (another writer) */
    snprintf(p, sizeof p, "%s/pre/ranked.csv", d);
    f = fopen(p, "r");
    cr_assert_not_null(f);
    static char ranked[1 << 20];
    ranked[fread(ranked, 1, sizeof ranked - 1, f)] = '\0';
    fclose(f);
    char key[128], rp95[64];
    snprintf(key, sizeof key, "attn_prefill_s2048_b1_c2,1");
    cr_assert_eq(csv_field(rp95, sizeof rp95, ranked, key, header_col(ranked, "p95_us")), 0,
                 "%.300s", ranked);
    csv_field(v, sizeof v, csv, "attn_prefill_s2048_b1_c2", c_p95);
    cr_assert_float_eq(atof(v), atof(rp95), 1e-3 * atof(rp95) + 1e-3, "%s vs %s", v, rp95);
    /* the decode shape was not tuned: borrowed across the phase, and it says so
     * (unless the borrowed winner was refused for the baseline) */
    char from[128];
    csv_field(from, sizeof from, csv, "attn_decode_kv2048_b32_c16", c_from);
    csv_field(v, sizeof v, csv, "attn_decode_kv2048_b32_c16", c_warn);
    cr_assert(from[0], "%s", csv);
    if (strcmp(from, "baseline") != 0)
        cr_assert(strstr(v, "crosses_phase"), "'%s' in %s", v, csv);
    else
        cr_assert_str_eq(v, "");
    kw_tl_rmrf(d);
}

/* ---- input errors that help ---- */

static void write_file(const char *dir, const char *name, const char *text)
{
    char p[4300];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* A copy of a shipped file with one substitution (first occurrence). */
static void write_edited(const char *dir, const char *name, const char *from_rel, const char *find,
                         const char *repl)
{
    char p[4300];
    snprintf(p, sizeof p, "%s", src(from_rel));
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f, "%s", p);
    static char buf[1 << 20], out[1 << 20];
    buf[fread(buf, 1, sizeof buf - 1, f)] = '\0';
    fclose(f);
    char *at = strstr(buf, find);
    cr_assert_not_null(at, "'%s' not in %s", find, from_rel);
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - buf), buf, repl, at + strlen(find));
    write_file(dir, name, out);
}

Test(ui, schema_errors_name_what_the_schema_allows_there)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    write_edited(d, "w.xml", "spaces/workloads/llama7b.xml", "  <shape name=\"attn_decode_kv512",
                 "  <moe/>\n  <shape name=\"attn_decode_kv512");
    write_edited(d, "a.xml", "spaces/workloads/llama7b.xml", "<shape name=",
                 "<shape colour=\"red\" name=");
    write_edited(d, "s.xml", "spaces/default.xml", "<guards ", "<gaurds ");
    kw_tl_opts o = {.timeout_s = 60, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "validate", "w.xml", NULL);
    cr_assert_eq(r.status, 2, "%s", r.err);
    /* the allowed names are the XSD's children of <workload> (source, block, layer, shape) */
    cr_assert(strstr(r.err, "w.xml:"), "%s", r.err);
    cr_assert(strstr(r.err, ": <moe> is not allowed in <workload>; allowed here: source, block, "
                            "layer, shape\n"), "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "validate", "a.xml", NULL);
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strstr(r.err, ": attribute 'colour' is not allowed on <shape>; allowed here: name, "
                            "block, phase, batch, seq, kv_len, streams, arrival"), "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "validate", "s.xml", NULL);
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strstr(r.err, ": <gaurds> is not allowed in <space>; allowed here: ") &&
                  strstr(r.err, "(did you mean 'guards'?)"), "%s", r.err);
    kw_tl_free(&r);
    kw_tl_rmrf(d);
}

Test(ui, unknown_names_get_the_nearest_valid_ones)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "eval", "--set", "fuse_atention=flash", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "unknown knob 'fuse_atention' (did you mean 'fuse_attention'?)"), "%s",
              r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "eval", "--set", "precision=bf61", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "knob 'precision' has no value 'bf61' (did you mean 'bf16'?)"), "%s",
              r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "eval", "--shape", "attn_decode_kv512_b1_c2", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "unknown shape 'attn_decode_kv512_b1_c2' (did you mean "
                            "'attn_decode_kv512_b1_c1'"), "%s", r.err);
    kw_tl_free(&r);
    /* tune: refused before any run folder exists */
    r = kw_tl_run(&o, bin(), "tune", "--shape", "attn_prefil_s128_b8_c4", "--out", "run", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "(did you mean 'attn_prefill_s128_b8_c4'"), "%s", r.err);
    char run[4300];
    snprintf(run, sizeof run, "%s/run", d);
    cr_assert_neq(access(run, F_OK), 0, "a run folder was created");
    kw_tl_free(&r);
    /* bisect config files: FILE:LINE and the nearest knob */
    write_file(d, "cfg.txt", "precision=bf16\nfuse_atention=flash\n");
    r = kw_tl_run(&o, bin(), "bisect", "baseline", "cfg.txt", "--shape", "attn_decode_kv512_b1_c1",
                 NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "cfg.txt:2: unknown knob 'fuse_atention' (did you mean "
                            "'fuse_attention'?)"), "%s", r.err);
    kw_tl_free(&r);
    /* a space file naming a knob the catalogue does not have */
    write_edited(d, "sp.xml", "spaces/default.xml", "name=\"placement\"", "name=\"placment\"");
    char acc[4300], wl[4300];
    snprintf(acc, sizeof acc, "%s", src("spaces/accel/h100.xml"));
    snprintf(wl, sizeof wl, "%s", src("spaces/workloads/llama7b.xml"));
    r = kw_tl_run(&o, bin(), "show", "--space", "sp.xml", "--accel", acc, "--workload", wl, NULL);
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strstr(r.err, "unknown knob 'placment' for block 'llama7b_attn' (did you mean "
                            "'placement'?)"), "%s", r.err);
    kw_tl_free(&r);
    kw_tl_rmrf(d);
}

/* bisect's table of every metric names each knob whole, its column as wide
 * as the name: main cut names at 14 bytes ("attn.double_bu",
 * "cores_per_requ"), two knobs sharing 14 bytes read the same. Every row is
 * as long as the header, so the figures stand under their names. */
Test(ui, bisect_names_each_knob_whole_over_its_column)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    write_file(d, "cfg.txt", "attn.double_buffer=on\ncores_per_request=4\nfuse_qkv=on\n");
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "bisect", "baseline", "cfg.txt", "--shape",
                             "attn_prefill_s128_b8_c4", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *h = strstr(r.out, "\n  metric ");
    cr_assert_not_null(h, "%s", r.out);
    h++;
    const char *e = strchr(h, '\n');
    cr_assert(strstr(h, " attn.double_buffer ") && strstr(h, " cores_per_request\n") &&
                  strstr(h, " attn.double_buffer ") < e, "%.*s", (int)(e - h), h);
    int rows = 0;
    for (const char *l = e + 1; *l == ' '; l = strchr(l, '\n') + 1, rows++)
        cr_assert_eq(strchr(l, '\n') - l, e - h, "row %d is not as long as the header:\n%.*s\n%s",
                     rows, (int)(e - h), h, l);
    cr_assert_gt(rows, 5);
    kw_tl_free(&r);
    kw_tl_rmrf(d);
}

/* bisect's text says which knobs caused the change and no more: a knob that
 * changed nothing reads 0.00% and 0.0% of the change (main printed "-0.0%",
 * a negative zero), one too small for the decimals "+<0.01%" (main:
 * "+0.00%"); the knobs whose contribution is below the minimum effect (the
 * space's 1%) are named in one line, checked against the CSV's figures;
 * metrics that did not move (zero at A and B, the sample size) are named
 * once instead of a row of zeros each; and no line is wider than 120
 * columns (main's table of every metric was 200 wide for ten knobs).
 * The default job's attn_decode_kv2048_b32_c16 recommendation (seed 1). */
Test(ui, bisect_names_the_knobs_below_the_minimum_effect_and_fits_120_columns)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    write_file(d, "b.txt", "qkv.tile_n=256\nqkv.tile_k=16\nattn.tile_m=32\nattn.double_buffer=on\n"
                           "o.tile_k=16\nfuse_qkv=on\nfuse_attention=flash\nlaunch_mode=graph\n"
                           "batch_timeout_us=1000\ncores_per_request=2\n");
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    const char *shape = "attn_decode_kv2048_b32_c16";
    kw_tl_proc r = kw_tl_run(&o, bin(), "bisect", "baseline", "b.txt", "--shape", shape, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_proc c = kw_tl_run(&o, bin(), "bisect", "baseline", "b.txt", "--shape", shape, "--format",
                             "csv", NULL);
    cr_assert_eq(c.status, 0, "%s", c.err);
    for (const char *l = r.out; *l; l = strchr(l, '\n') + 1)
        cr_assert_leq(strchr(l, '\n') - l, 120, "%.*s", (int)(strchr(l, '\n') - l), l);
    cr_assert(strstr(r.out, "-0.0%") == NULL && strstr(r.out, " +0.00%") == NULL &&
                  strstr(r.out, " -0.00%") == NULL, "%s", r.out);
    /* from the CSV: p95's A, each knob's contribution, the all-zero metrics */
    double a95 = NAN;
    const char *t = strstr(c.out, "\ntotal,,,p95_us,");
    cr_assert_not_null(t);
    char want[2048] = "  below the minimum effect (1.00% of A, the space's) each: ";
    int n_small = 0;
    char zero_rows[2048] = "";
    for (const char *l = strchr(c.out, '\n') + 1; *l; l = strchr(l, '\n') + 1) {
        char knob[64], from[64], to[64], metric[64];
        double mean, mn, mx;
        if (sscanf(l, "%63[^,],%63[^,],%63[^,],%63[^,],%lf,%lf,%lf", knob, from, to, metric, &mean,
                   &mn, &mx) != 7)
            continue;
        if (strcmp(metric, "p95_us") == 0 && strcmp(knob, "total") != 0) {
            /* A's p95: from the text's first figure */
            if (isnan(a95))
                cr_assert_eq(sscanf(strstr(r.out, "contribution to p95_us: A "),
                                    "contribution to p95_us: A %lf", &a95), 1);
            if (fabs(mean) / a95 * 100.0 < 1.0)
                snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s",
                         n_small++ ? ", " : "", knob);
            if (mean == 0) {
                char row[200];
                snprintf(row, sizeof row, " %s ", knob);
                const char *kl = strstr(r.out, row);
                cr_assert(kl && strstr(kl, " 0.00% ") && strstr(kl, " 0.00% ") < strchr(kl, '\n') &&
                              strstr(kl, "0.0%\n") && strstr(kl, "0.0%\n") < strchr(kl, '\n') + 1,
                          "%.100s", kl);
            }
        }
    }
    for (const char *l = strstr(c.out, "\ntotal,,,") + 1; l && *l; l = strchr(l, '\n') + 1) {
        char metric[64];
        double v;
        if (sscanf(l, "total,,,%63[^,],%lf", metric, &v) != 2 || v != 0)
            continue;
        int moved = 0; /* any knob's contribution to it */
        char key[80];
        snprintf(key, sizeof key, ",%s,", metric);
        for (const char *k = strstr(c.out, key); k && !moved; k = strstr(k + 1, key)) {
            double mean = strtod(k + strlen(key), NULL);
            moved = mean != 0;
        }
        if (!moved)
            snprintf(zero_rows + strlen(zero_rows), sizeof zero_rows - strlen(zero_rows), "%s%s",
                     zero_rows[0] ? ", " : "", metric);
    }
    cr_assert_gt(n_small, 0);
    strcat(want, "\n");
    cr_assert(strstr(r.out, want), "no '%s' in:\n%s", want, r.out);
    cr_assert(zero_rows[0]);
    /* the paragraph, its wrapped lines joined */
    const char *u = strstr(r.out, "\n\n  unchanged (equal at A and B, no knob moved them): ");
    cr_assert_not_null(u, "%s", r.out);
    char joined[2200] = "";
    for (const char *q = u + strlen("\n\n  unchanged (equal at A and B, no knob moved them): "); *q; q++)
        if (*q == '\n' && strncmp(q, "\n    ", 5) == 0)
            q += 3; /* the wrap: a newline and the indent stand for one space */
        else if (*q != '\n' && strlen(joined) + 1 < sizeof joined)
            strncat(joined, q, 1);
        else
            break;
    cr_assert_str_eq(joined, zero_rows, "%s", r.out);
    cr_assert(strstr(r.out, "\n  samples ") == NULL, "%s", r.out);
    kw_tl_free(&c);
    kw_tl_free(&r);
    kw_tl_rmrf(d);
}

/* bisect RUN:baseline RUN:best --requests N walks in the run's own space at
 * N requests, and says the sample its figures come from. main loaded the
 * embedded default's inputs whenever --requests was given: a validate_small
 * run was bisected in the default space (A was the default's baseline
 * 157e72970fa01090, not the run's), and nothing said that the figures were
 * the search's sample, not the re-check recommend leads with. */
Test(ui, bisect_with_requests_walks_in_the_runs_space_and_names_its_sample)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    kw_tl_opts o = {.timeout_s = 240, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", src("spaces/validate_small.xml"),
                             "--budget", "30", "--quiet", "--out", "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    char p[4300];
    snprintf(p, sizeof p, "%s/run/results.xml", d);
    char *xml = kw_tl_slurp(p);
    cr_assert_not_null(xml);
    char shape[128] = "", base[17] = "";
    const char *sh = strstr(xml, "<shape name=\"");
    cr_assert(sh && sscanf(sh, "<shape name=\"%127[^\"]\"", shape) == 1);
    const char *bl = strstr(sh, "<baseline id=\"");
    cr_assert(bl && sscanf(bl, "<baseline id=\"%16[0-9a-f]\"", base) == 1);
    r = kw_tl_run(&o, bin(), "bisect", "run:baseline", "run:best", "--shape", shape, "--requests",
                  "5000", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char want[256];
    snprintf(want, sizeof want, "bisect on shape %s: A %s -> B ", shape, base);
    cr_assert(strncmp(r.out, want, strlen(want)) == 0, "want '%s' in:\n%.400s", want, r.out);
    cr_assert(strstr(r.out, "\n  figures: each evaluation simulates 5000 requests (--requests)\n"),
              "%.400s", r.out);
    kw_tl_free(&r);
    /* without --requests: the space's sample, and the run's re-check beside it */
    r = kw_tl_run(&o, bin(), "bisect", "run:baseline", "run:best", "--shape", shape, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\n  figures: each evaluation simulates ") &&
                  strstr(r.out, " requests (the space's sample, the search's); the run's re-check, "
                                "which recommend leads with, used "), "%.500s", r.out);
    kw_tl_free(&r);
    free(xml);
    kw_tl_rmrf(d);
}

/* `knobwise eval --stdin` fed `input`; exit 0 asserted (an error row is a row). */
static kw_tl_proc eval_stdin(const char *input)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    write_file(d, "in.txt", input);
    char in[4300];
    snprintf(in, sizeof in, "%s/in.txt", d);
    kw_tl_opts o = {.timeout_s = 120, .stdin_path = in};
    kw_tl_proc r = kw_tl_run(&o, bin(), "eval", "--stdin", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_rmrf(d);
    return r;
}

Test(ui, eval_stdin_names_the_nearest_knob_in_its_error_row)
{
    kw_tl_proc r = eval_stdin("attn_decode_kv512_b1_c1 fuse_atention=flash\n");
    cr_assert(strstr(r.out, "attn_decode_kv512_b1_c1,error,") &&
                  strstr(r.out, "stdin:1: unknown knob 'fuse_atention' (did you mean "
                                "'fuse_attention'?)"), "%s", r.out);
    kw_tl_free(&r);
}

/* A knob given twice with two values is an error row, not the last value
 * silently (bisect's files refuse it too); the same value twice is fine. */
Test(ui, eval_stdin_refuses_a_knob_set_twice)
{
    kw_tl_proc r = eval_stdin("attn_decode_kv512_b1_c1 fuse_attention=flash fuse_attention=none\n"
                              "attn_decode_kv512_b1_c1 fuse_attention=flash fuse_attention=flash\n");
    cr_assert(strstr(r.out, "attn_decode_kv512_b1_c1,error,,") &&
                  strstr(r.out, "stdin:1: knob 'fuse_attention' is set twice ('flash', then "
                                "'none')"), "%s", r.out);
    const char *second = strchr(strchr(r.out, '\n') + 1, '\n') + 1;
    cr_assert(strncmp(second, "attn_decode_kv512_b1_c1,", 24) == 0 &&
                  strncmp(second + 24, "error", 5) != 0, "%s", r.out);
    kw_tl_free(&r);
}

Test(ui, show_catalogue_lists_every_knob_with_values_and_blocks)
{
    kw_tl_opts o = {.timeout_s = 60};
    kw_tl_proc r = kw_tl_run(&o, bin(), "show", "--catalogue", "--format", "csv", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strncmp(r.out, "knob,family,values,meaning,used_by,blocks\n", 42) == 0, "%.80s", r.out);
    /* the knob catalogue (src/model/kw_catalogue.c): every name a shipped space may use */
    static const char *const names[] = {
        "GROUP.tile_m", "GROUP.tile_n", "GROUP.tile_k", "GROUP.split_k", "GROUP.loop_order",
        "GROUP.double_buffer", "fuse_qkv", "fuse_attention", "fuse_epilogue", "fuse_gate_up",
        "fuse_residual_norm", "precision", "accum_precision", "softmax_precision", "sparsity",
        "launch_mode", "max_batch", "batch_timeout_us", "placement", "cores_per_request"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char want[96];
        snprintf(want, sizeof want, "\n%s,", names[i]);
        cr_assert(strstr(r.out, want), "%s missing", names[i]);
    }
    cr_assert(strstr(r.out, "\nfuse_attention,fusion,none|qk_softmax|flash,"), "%s", r.out);
    /* the default workload's attention block uses fuse_attention, its MLP does not */
    char *fa = strstr(r.out, "\nfuse_attention,");
    cr_assert(fa);
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(fa + 1, "\n"), fa + 1);
    cr_assert(strstr(line, ",llama7b_attn") && !strstr(line, "llama7b_mlp"), "%s", line);
    kw_tl_free(&r);
    r = kw_tl_run(&o, bin(), "show", "--catalogue", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "    flash            QK^T, softmax and PV fused"), "%s", r.out);
    kw_tl_free(&r);
}

/* ---- the progress on a terminal, end to end (a pseudo-terminal of 60x30) ---- */

#include <pty.h>
#include <sys/ioctl.h>
#include <termios.h>

Test(ui, progress_on_a_terminal_never_exceeds_its_width)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    struct winsize ws = {.ws_row = 30, .ws_col = 60};
    int master = -1;
    pid_t pid = forkpty(&master, NULL, NULL, &ws);
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (chdir(d) != 0)
            _exit(127);
        setenv("TERM", "xterm", 1);
        execl(bin(), bin(), "tune", "--space", src("spaces/validate_small.xml"), "--budget", "200",
              "--threads", "1", "--out", "run", (char *)NULL);
        _exit(127);
    }
    static char out[1 << 20];
    size_t n = 0;
    for (;;) {
        ssize_t k = read(master, out + n, sizeof out - 1 - n);
        if (k <= 0)
            break; /* EIO once the child has exited and closed the terminal */
        n += (size_t)k;
    }
    out[n] = '\0';
    int st = 0;
    waitpid(pid, &st, 0);
    close(master);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, out);
    /* every progress line (between \r, \n or a cursor move), ANSI sequences
     * removed, fits in 59 columns; the run's summary (stdout) is not progress */
    int lines = 0;
    char line[4096];
    size_t u = 0;
    int in_summary = 0;
    for (size_t i = 0; i <= n; i++) {
        char ch = out[i];
        if (ch == '\033') {
            while (i < n && !((out[i] >= 'A' && out[i] <= 'Z') || (out[i] >= 'a' && out[i] <= 'z')) )
                i++;
            if (u > 0 && (out[i] == 'A' || out[i] == 'K')) {
                line[u] = '\0';
                cr_assert_leq(u, 59u, "%zu columns: '%s'", u, line);
                lines++;
                u = 0;
            }
            continue;
        }
        if (ch == '\r' || ch == '\n' || ch == '\0') {
            line[u < sizeof line ? u : sizeof line - 1] = '\0';
            if (strncmp(line, "knobwise tune: ", 15) == 0)
                in_summary = 1;
            if (u > 0 && !in_summary) {
                cr_assert_leq(u, 59u, "%zu columns: '%s'", u, line);
                lines++;
            }
            u = 0;
            continue;
        }
        if (u + 1 < sizeof line)
            line[u++] = ch;
    }
    cr_assert_gt(lines, 0, "no progress drawn: %s", out);
    cr_assert(strstr(out, "shapes 0/2 done"), "%.500s", out);
    cr_assert(strstr(out, "  attn_prefill_s2048_b1_c2 "), "each running shape has a line: %.800s", out);
    kw_tl_rmrf(d);
}

/* validate_small at --budget B, --threads 1, into d/run, its stderr a log with a
 * progress line at every report (KNOBWISE_PROGRESS_EVERY=1e-9). */
static kw_tl_proc tune_small_logged(const char *d, const char *budget)
{
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    setenv("KNOBWISE_PROGRESS_EVERY", "1e-9", 1);
    kw_tl_proc r = kw_tl_run(&o, bin(), "tune", "--space", src("spaces/validate_small.xml"), "--budget",
                             budget, "--threads", "1", "--out", "run", NULL);
    unsetenv("KNOBWISE_PROGRESS_EVERY");
    cr_assert_eq(r.status, 0, "%s", r.err);
    return r;
}

/* The progress's words are never in a result file of the run folder d/run. */
static void expect_not_in_the_run_files(const char *d, const char *words)
{
    const char *files[] = {"run/journal", "run/results.xml", "run/ranked.csv", "run/audit.csv"};
    for (int i = 0; i < 4; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", d, files[i]);
        char *x = kw_tl_slurp(p);
        cr_assert_not_null(x, "%s", p);
        cr_expect_null(strstr(x, words), "%s", files[i]);
        free(x);
    }
}

/* The evidence after the search (the re-checks, the portability matrix: on an
 * LLM space minutes after the search's ETA read 0s) says what is left of the
 * part it is in, from that part's own rate since its first report: never on
 * its first line (no rate yet) nor its last (nothing left). A log at every
 * report (KNOBWISE_PROGRESS_EVERY=1e-9, --threads 1: a report every two
 * evaluations); only the words are checked, never a time. The result files
 * never hold it. Fails on main (no such words). */
Test(ui, the_evidence_says_what_is_left_of_its_part)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    kw_tl_proc r = tune_small_logged(d, "30");
    const char *parts[2] = {"re-checks", "portability"};
    for (int k = 0; k < 2; k++) {
        char lead[64];
        snprintf(lead, sizeof lead, "knobwise tune: evidence: %s ", parts[k]);
        int lines = 0, left = 0;
        for (const char *l = strstr(r.err, lead); l; l = strstr(l + 1, lead)) {
            long done, total;
            cr_assert_eq(sscanf(l + strlen(lead), "%ld/%ld", &done, &total), 2, "%.120s", l);
            const char *e = strchr(l, '\n');
            const char *w = strstr(l, " left in this part | elapsed ");
            int has = w && w < e;
            if (lines == 0 || done == total)
                cr_expect(!has, "the first and last line: no estimate: %.*s", (int)(e - l), l);
            else
                cr_expect(has && strstr(l, ", ~") < w, "%.*s", (int)(e - l), l);
            left += has;
            lines++;
        }
        cr_expect_geq(lines, 3, "%s: %d lines in %s", parts[k], lines, r.err);
        cr_expect_geq(left, 1, "%s", r.err);
    }
    expect_not_in_the_run_files(d, "left in this part");
    kw_tl_free(&r);
    kw_tl_rmrf(d);
}

/* A shape's re-rank (its best against its rivals on long paired samples, at its
 * finish: 18-30% of the default job's search time, 28-71% of the validate
 * spaces', with no round ending) reports between its comparisons through a hook
 * that only draws: a log (KNOBWISE_PROGRESS_EVERY=1e-9) gets a line per
 * comparison naming the shape and its rivals compared of the rivals in all, with
 * the ETA, before the shape's done line; no result file holds it. Fails on main
 * (nothing reported inside the plan: no "re-rank" in any progress line). */
Test(ui, a_re_rank_reports_progress_between_its_comparisons)
{
    char *d = kw_tl_tmpdir("kwui");
    cr_assert_not_null(d);
    kw_tl_proc r = tune_small_logged(d, "200");
    const char *lead = "knobwise tune: progress: ";
    int lines = 0, total0 = 0, last = -1;
    char name[128] = "";
    const char *first = NULL;
    for (const char *l = strstr(r.err, lead); l; l = strstr(l + 1, lead)) {
        const char *e = strchr(l, '\n');
        const char *w = strstr(l, " re-rank ");
        if (!w || (e && w > e))
            continue;
        /* "shapes K/N done  NAME re-rank D/T rivals  ..." */
        const char *nm = strstr(l, " done  ");
        cr_assert(nm && nm < w, "%.*s", (int)(e - l), l);
        nm += 7;
        char this_name[128];
        snprintf(this_name, sizeof this_name, "%.*s", (int)(w - nm), nm);
        int done = -1, total = -1;
        cr_assert_eq(sscanf(w, " re-rank %d/%d rivals", &done, &total), 2, "%.*s", (int)(e - l), l);
        cr_assert(strstr(l, "  ETA ") && strstr(l, "  ETA ") < e, "%.*s", (int)(e - l), l);
        if (!first) {
            first = l;
            snprintf(name, sizeof name, "%s", this_name);
            total0 = total;
        }
        if (strcmp(name, this_name) == 0) { /* the first shape's: its rivals one after another */
            cr_assert_eq(total, total0, "%.*s", (int)(e - l), l);
            cr_assert(done >= last && done < total, "%d after %d of %d", done, last, total);
            last = done;
            lines++;
        }
    }
    cr_assert_geq(lines, 2, "no re-rank reported between comparisons: %s", r.err);
    cr_assert_gt(last, 0, "%s", r.err);
    char said[256];
    snprintf(said, sizeof said, "knobwise tune: shape %s done: ", name);
    const char *done_line = strstr(r.err, said);
    cr_assert(done_line && first < done_line, "reported before its shape finished: %s", r.err);
    expect_not_in_the_run_files(d, " rivals");
    kw_tl_free(&r);
    kw_tl_rmrf(d);
}
