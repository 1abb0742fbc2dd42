/* test_export.c - `knobwise export` end to end on the built knobwise (KW_BIN):
 * every JSON export validated against the shipped schema
 * (results/export.schema.json) by Debian's python3-jsonschema
 * (tests/check_json_schema.py), and shown to fail validation once broken; the
 * C header compiled with the C compiler and read by a program; the values of
 * both compared with mappings.csv, which `knobwise recommend --all` writes by
 * another code path; -o's refusals (existing file without --force, the run
 * folder's own files even with --force, non-regular files) leaving every file
 * as it was.
 *
 * One tune of the embedded default (5 shapes, 26 knobs, budget 40, about a
 * second) is shared by the tests through a fixture folder made once.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_mix.h"
#include "kw_search.h"
#include "lib/kw_tl.h"

static char kw_t_fix[1024]; /* the shared run: $dir/run with mappings.csv */

static void kw_t_setup(void)
{
    /* one run per test process; Criterion runs each test in its own process */
    char *d = kw_tl_tmpdir("kwtest");
    cr_assert(d != NULL);
    snprintf(kw_t_fix, sizeof kw_t_fix, "%s", d);
    free(d);
    char args[2048];
    snprintf(args, sizeof args, "tune --budget 40 --out '%s/run' --quiet", kw_t_fix);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "tune: %s", r.err);
    kw_tl_free(&r);
    snprintf(args, sizeof args, "recommend '%s/run' --all", kw_t_fix);
    r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "recommend: %s", r.err);
    kw_tl_free(&r);
}

static void kw_t_teardown(void)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", kw_t_fix);
    if (system(cmd) != 0) { /* best effort */ }
}

/* the hang guard (KW_TL_HANG_GUARD, not Criterion's .timeout), then the setup */
static void kw_t_setup_guarded(void)
{
    KW_TL_HANG_GUARD(120);
    kw_t_setup();
}

TestSuite(export, .init = kw_t_setup_guarded, .fini = kw_t_teardown);

static int kw_t_sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int kw_t_sh(char **out, const char *fmt, ...)
{
    char cmd[16384], full[20800], log[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(log, sizeof log, "%s/sh.log", kw_t_fix);
    snprintf(full, sizeof full, "(%s) >'%s' 2>&1", cmd, log);
    int st = system(full);
    if (out)
        *out = kw_tl_slurp(log);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Validate FILE against the shipped schema; 0 valid, 1 invalid, 3 no jsonschema. */
static int kw_t_validate(const char *file, char **out)
{
    const char *py = getenv("KW_PYTHON3") ? getenv("KW_PYTHON3") : "/usr/bin/python3";
    return kw_t_sh(out, "'%s' '%s/tests/check_json_schema.py' '%s/results/export.schema.json' '%s'",
                   py, kw_tl_src(), kw_tl_src(), file);
}

/* mappings.csv's header and the row of one shape (no quoted fields in the default). */
static char *kw_t_csv;
static const char *kw_t_row(const char *shape)
{
    static char path[4200];
    if (!kw_t_csv) {
        snprintf(path, sizeof path, "%s/run/mappings.csv", kw_t_fix);
        kw_t_csv = kw_tl_slurp(path);
    }
    const char *r = kw_t_csv;
    size_t n = strlen(shape);
    while ((r = strchr(r, '\n')) != NULL) {
        r++;
        if (strncmp(r, shape, n) == 0 && r[n] == ',')
            return r;
    }
    cr_assert_fail("no row for %s", shape);
    return NULL;
}

/* Field i (0-based) of a CSV line into buf. */
static void kw_t_field(char *buf, size_t len, const char *line, int i)
{
    for (int k = 0; k < i; k++)
        line = strchr(line, ',') + 1;
    snprintf(buf, len, "%.*s", (int)strcspn(line, ",\n"), line);
}

/* mappings.csv's columns after the knobs (KW_MAPPINGS_HEADER_SUFFIX,
 * KW_MAPPINGS_HEADER_FIGURES, KW_MAPPINGS_HEADER_ROWS, _BASIS and, since
 * stop 48, the 8 of _WATCH):
 * phase,batch,seq,kv_len,streams,p95_us,p99_us,borrow_warnings,figures_from,file_rows,
 * figures_basis,watch_... */
#define KW_T_WATCH_COLS 8
#define KW_T_TRAILING (11 + KW_T_WATCH_COLS)

static int kw_t_ncols(void)
{
    kw_t_row("attn_prefill_s128_b8_c4");
    int n = 1;
    for (const char *c = kw_t_csv; *c != '\n'; c++)
        n += *c == ',';
    return n;
}

static const char *kw_t_shapes[] = {"attn_prefill_s128_b8_c4", "attn_prefill_s2048_b1_c2",
                                    "attn_decode_kv512_b1_c1", "attn_decode_kv2048_b32_c16",
                                    "attn_decode_kv8192_b8_c8"};
#define KW_T_NSHAPES (int)(sizeof kw_t_shapes / sizeof kw_t_shapes[0])

Test(export, json_validates_against_the_shipped_schema_and_agrees_with_mappings)
{
    char *out = NULL;
    int st = kw_t_sh(&out, "'%s' export '%s/run' --format json -o '%s/e.json'", kw_tl_bin(), kw_t_fix,
                     kw_t_fix);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    char path[4200];
    snprintf(path, sizeof path, "%s/e.json", kw_t_fix);
    st = kw_t_validate(path, &out);
    cr_assert_neq(st, 3, "JSON Schema validation needs Debian's python3-jsonschema: %s", out);
    cr_assert_eq(st, 0, "export does not match its schema:\n%s", out);
    free(out);

    /* every shape's config id and every knob value as mappings.csv has them */
    char *json = kw_tl_slurp(path);
    int ncols = kw_t_ncols();
    for (int s = 0; s < KW_T_NSHAPES; s++) {
        char want[256], id[64];
        snprintf(want, sizeof want, "\"name\": \"%s\"", kw_t_shapes[s]);
        const char *blk = strstr(json, want);
        cr_assert(blk != NULL, "shape %s missing", kw_t_shapes[s]);
        const char *row = kw_t_row(kw_t_shapes[s]);
        kw_t_field(id, sizeof id, row, 1);
        snprintf(want, sizeof want, "\"config_id\": \"%s\"", id);
        const char *cfg = strstr(blk, "\"config\": {");
        cr_assert(cfg && strncmp(strstr(cfg, "\"config_id\""), want, strlen(want)) == 0,
                  "%s: config id %s", kw_t_shapes[s], id);
        const char *knobs = strstr(cfg, "\"knobs\": {");
        for (int c = 3; c < ncols - KW_T_TRAILING; c++) {
            char name[128], val[128], pair[300];
            kw_t_field(name, sizeof name, kw_t_csv, c);
            kw_t_field(val, sizeof val, row, c);
            char *end;
            strtol(val, &end, 10);
            if (*end == '\0')
                snprintf(pair, sizeof pair, "\"%s\": %s", name, val);
            else
                snprintf(pair, sizeof pair, "\"%s\": \"%s\"", name, val);
            const char *hit = strstr(knobs, pair);
            cr_expect(hit && hit < strstr(knobs, "}"), "%s: %s not in its knobs", kw_t_shapes[s], pair);
        }
    }
    /* the double-buffered qkv GEMM is a two-stage pipeline; the attention
     * group has no tile_k knob, so no block_k */
    cr_expect(strstr(json, "{\"group\": \"qkv\", \"block_m\": ") != NULL);
    cr_expect(strstr(json, "\"split_k\": ") != NULL);
    const char *attn = strstr(json, "{\"group\": \"attn\"");
    cr_assert(attn != NULL);
    cr_expect(strstr(attn, "block_k") == NULL || strstr(attn, "block_k") > strchr(attn, '}'));
    /* a results.xml does not say where its figures come from (mappings.csv's figures_from) */
    cr_expect(strstr(json, "figures_from") == NULL);
    free(json);
}

Test(export, num_stages_follows_double_buffer)
{
    /* the baseline of the default space (spaces/default.xml): qkv.double_buffer
     * on, attn.double_buffer off -> the baseline roll-back target's kernels
     * carry num_stages 2 and 1 */
    char *out = NULL;
    int st = kw_t_sh(&out, "'%s' export '%s/run' --format json", kw_tl_bin(), kw_t_fix);
    cr_assert_eq(st, 0, "%s", out);
    const char *base = strstr(out, "\"baseline\": {");
    cr_assert(base != NULL);
    const char *k = strstr(base, "\"kernels\": [");
    cr_assert(k != NULL);
    const char *q = strstr(k, "{\"group\": \"qkv\"");
    const char *a = strstr(k, "{\"group\": \"attn\"");
    cr_assert(q && a);
    cr_expect(strstr(q, "\"num_stages\": 2}") && strstr(q, "\"num_stages\": 2}") < strchr(q, '}') + 1,
              "qkv: %.200s", q);
    cr_expect(strstr(a, "\"num_stages\": 1}") && strstr(a, "\"num_stages\": 1}") < strchr(a, '}') + 1,
              "attn: %.200s", a);
    free(out);
}

Test(export, mappings_csv_export_validates_and_a_broken_one_does_not)
{
    char *out = NULL, path[4200];
    int st = kw_t_sh(&out, "'%s' export '%s/run/mappings.csv' --format json -o '%s/m.json'",
                     kw_tl_bin(), kw_t_fix, kw_t_fix);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/m.json", kw_t_fix);
    st = kw_t_validate(path, &out);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    char *json = kw_tl_slurp(path);
    cr_expect(strstr(json, "\"kind\": \"mappings.csv\"") != NULL);
    /* the predicted p95 is mappings.csv's own column, shape by shape; no guards */
    int ncols = kw_t_ncols();
    for (int s = 0; s < KW_T_NSHAPES; s++) {
        char want[256], p95[64];
        kw_t_field(p95, sizeof p95, kw_t_row(kw_t_shapes[s]), ncols - KW_T_WATCH_COLS - 6);
        snprintf(want, sizeof want, "\"name\": \"%s\"", kw_t_shapes[s]);
        const char *blk = strstr(json, want), *pred = blk ? strstr(blk, "\"predicted\": ") : NULL;
        cr_assert(pred != NULL);
        cr_expect_float_eq(strtod(pred + strlen("\"predicted\": {\"p95_us\": "), NULL), strtod(p95, NULL),
                           1e-9, "%s: %.60s, csv %s", kw_t_shapes[s], pred, p95);
        cr_expect(strncmp(strstr(blk, "\"guards\": "), "\"guards\": []", 12) == 0);
        /* a model run: mappings.csv's figures_from says model, its
         * figures_basis which sample (a tuned shape's re-check), and the
         * export carries both */
        const char *fb = strstr(pred, "\"figures_from\": \"model\", \"figures_basis\": \"recheck\"}");
        cr_expect(fb != NULL && fb < strstr(blk, "\"guards\": "), "%s: %.120s", kw_t_shapes[s], pred);
    }
    free(json);
    /* the validator bites: a required field renamed, a stage count out of range */
    st = kw_t_sh(&out, "sed 's/\"config_id\"/\"configid\"/' '%s' > '%s/bad1.json'", path, kw_t_fix);
    cr_assert_eq(st, 0);
    free(out);
    snprintf(path, sizeof path, "%s/bad1.json", kw_t_fix);
    st = kw_t_validate(path, &out);
    cr_expect_eq(st, 1, "%s", out);
    cr_expect(strstr(out, "'config_id' is a required property") != NULL, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/run/e.json", kw_t_fix);
    st = kw_t_sh(&out, "'%s' export '%s/run' --format json | sed 's/\"num_stages\": 2/\"num_stages\": 3/' "
                       "> '%s/bad2.json'",
                 kw_tl_bin(), kw_t_fix, kw_t_fix);
    free(out);
    snprintf(path, sizeof path, "%s/bad2.json", kw_t_fix);
    st = kw_t_validate(path, &out);
    cr_expect_eq(st, 1, "%s", out);
    free(out);
    /* figures_basis is format 3's: the same file labelled format 2 fails (a
     * strict format 2 consumer does not know the field), and without the
     * field the format 2 label validates */
    snprintf(path, sizeof path, "%s/m.json", kw_t_fix);
    json = kw_tl_slurp(path);
    cr_assert(strstr(json, "\"format_version\": 4,") != NULL, "%.120s", json);
    free(json);
    st = kw_t_sh(&out, "sed 's/\"format_version\": 4,/\"format_version\": 2,/' '%s' > '%s/old2.json'", path,
                 kw_t_fix);
    cr_assert_eq(st, 0);
    free(out);
    snprintf(path, sizeof path, "%s/old2.json", kw_t_fix);
    st = kw_t_validate(path, &out);
    cr_expect_eq(st, 1, "a format 2 file with figures_basis validated: %s", out);
    free(out);
    st = kw_t_sh(&out, "sed -i 's/, \"figures_basis\": \"[a-z]*\"//' '%s'", path);
    cr_assert_eq(st, 0);
    free(out);
    st = kw_t_validate(path, &out);
    cr_expect_eq(st, 0, "a format 2 file without figures_basis: %s", out);
    free(out);
}

/* The fixture run's c-header export as FIX/NAME.h, compiled with FIX/NAME.c
 * (stdio.h and the header included, then main_text) by $KW_CC (cc) with
 * -std=c99 -Wall -Wextra -Werror and run: its output (the test fails when
 * any step does). */
static char *kw_t_header_run(const char *name, const char *main_text)
{
    char *out = NULL;
    int st = kw_t_sh(&out, "'%s' export '%s/run' --format c-header -o '%s/%s.h'", kw_tl_bin(),
                     kw_t_fix, kw_t_fix, name);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    char prog[4200];
    snprintf(prog, sizeof prog, "%s/%s.c", kw_t_fix, name);
    FILE *f = fopen(prog, "w");
    cr_assert(f != NULL);
    fprintf(f, "#include <stdio.h>\n#include \"%s.h\"\n%s", name, main_text);
    fclose(f);
    const char *cc = getenv("KW_CC") ? getenv("KW_CC") : "cc";
    const char *san = getenv("KW_SAN_CFLAGS") ? getenv("KW_SAN_CFLAGS") : "";
    st = kw_t_sh(&out, "%s -std=c99 -Wall -Wextra -Werror %s -I'%s' '%s' -o '%s/%s' && '%s/%s'", cc, san,
                 kw_t_fix, prog, kw_t_fix, name, kw_t_fix, name);
    cr_assert_eq(st, 0, "the header does not compile or run:\n%s", out);
    return out;
}

Test(export, c_header_compiles_and_reads_back)
{
    char *out = kw_t_header_run("knobwise_export",
          "int main(void)\n{\n"
          "    for (int i = 0; i < KNOBWISE_EXPORT_N_SHAPES; i++) {\n"
          "        const knobwise_export_entry *e = &knobwise_export_table[i];\n"
          "        printf(\"%s,%s\", e->shape, e->config.config_id);\n"
          "        for (int k = 0; k < KNOBWISE_EXPORT_N_KNOBS; k++)\n"
          "            printf(\",%s\", e->config.values[k]);\n"
          "        printf(\" |%d %d %ld %ld %ld %d %d %s\\n\", e->has_dims, e->phase, e->batch, e->len,\n"
          "               e->streams, e->has_latency, e->p95_us > 0, e->rollback_baseline.config_id\n"
          "               ? e->rollback_baseline.values[KNOBWISE_EXPORT_KNOB_QKV_TILE_M] : \"-\");\n"
          "    }\n"
          "    return KNOBWISE_EXPORT_N_KNOBS == 26 ? 0 : 1;\n}\n");
    int ncols = kw_t_ncols();
    for (int s = 0; s < KW_T_NSHAPES; s++) {
        /* shape,config_id,knobs... from mappings.csv, without borrowed_from */
        const char *row = kw_t_row(kw_t_shapes[s]);
        char want[4096] = "", fld[256];
        for (int c = 0; c < ncols - KW_T_TRAILING; c++) {
            if (c == 2)
                continue;
            kw_t_field(fld, sizeof fld, row, c);
            strcat(want, c ? "," : "");
            strcat(want, fld);
        }
        strcat(want, " |1 ");
        cr_expect(strstr(out, want) != NULL, "%s: want\n%s\nin\n%s", kw_t_shapes[s], want, out);
    }
    /* the decode shapes' dimensions: phase 1, batch 32, len (kv) 2048, 16 streams;
     * the baseline's qkv.tile_m is 128 (spaces/default.xml) */
    cr_expect(strstr(out, "|1 1 32 2048 16 1 1 128\n") != NULL, "%s", out);
    free(out);
}

/* Format 4: the header's entries carry the guard thresholds a runtime
 * watches after rollout, each as libknobwise (and the JSON's guards) give
 * it: the same guards, metrics and limits in the same order, entry by entry.
 * Before, a runtime embedding the header had the disproof criteria's words
 * but no threshold to watch. Fails on main (no n_watch). */
Test(export, c_header_entries_carry_the_guard_thresholds_the_json_gives)
{
    char *out = NULL;
    int st = kw_t_sh(&out, "'%s' export '%s/run' --format json -o '%s/kw_watch.json'", kw_tl_bin(),
                     kw_t_fix, kw_t_fix);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    out = kw_t_header_run("kw_watch",
          "int main(void)\n{\n"
          "    for (int i = 0; i < KNOBWISE_EXPORT_N_SHAPES; i++)\n"
          "        for (int w = 0; w < knobwise_export_table[i].n_watch; w++) {\n"
          "            const knobwise_export_watch *g = &knobwise_export_table[i].watch[w];\n"
          "            printf(\"%s %s %s\", knobwise_export_table[i].shape, g->guard, g->metric);\n"
          "            if (g->has_max)\n                printf(\" max %.17g\", g->max);\n"
          "            if (g->has_min)\n                printf(\" min %.17g\", g->min);\n"
          "            printf(\"\\n\");\n"
          "        }\n"
          "    return KNOBWISE_EXPORT_FORMAT == 4 ? 0 : 1;\n}\n");
    /* the JSON's guards, shape by shape, in the same words */
    char path[4200];
    snprintf(path, sizeof path, "%s/kw_watch.json", kw_t_fix);
    char *json = kw_tl_slurp(path);
    cr_assert_not_null(json);
    int n = 0;
    const char *at = json;
    for (const char *l = out; *l; l = strchr(l, '\n') + 1, n++) {
        char shape[128], guard[64], metric[64], w1[8], w2[8];
        double v1 = 0, v2 = 0;
        int got = sscanf(l, "%127s %63s %63s %7s %lf %7s %lf", shape, guard, metric, w1, &v1, w2, &v2);
        cr_assert_geq(got, 5, "%.100s", l);
        char key[300];
        snprintf(key, sizeof key, "\"name\": \"%s\"", shape);
        const char *sh = strstr(json, key);
        cr_assert_not_null(sh, "%s", key);
        if (sh > at)
            at = sh;
        snprintf(key, sizeof key, "{\"guard\": \"%s\", \"metric\": \"%s\", \"%s\": ", guard, metric, w1);
        const char *g = strstr(at, key);
        cr_assert_not_null(g, "%s after shape %s", key, shape);
        double d = strtod(g + strlen(key), NULL) - v1;
        cr_expect(d * d <= 1e-18 * v1 * v1, "%s: %.17g", key, v1);
        at = g + 1;
    }
    cr_expect_geq(n, 6 * KW_T_NSHAPES, "every shape's p95/p99 ceilings, drift, throttle, fallback:\n%s",
                  out);
    free(json);
    free(out);
}

Test(export, output_refusals_leave_every_file_as_it_was)
{
    char path[4200], *out = NULL;
    snprintf(path, sizeof path, "%s/run/results.xml", kw_t_fix);
    char *before = kw_tl_slurp(path);
    /* the run folder's own files: never, --force or not */
    const char *own[] = {"results.xml", "journal", "mappings.csv"};
    for (size_t i = 0; i < 3; i++) {
        int st = kw_t_sh(&out, "'%s' export '%s/run' --format json -o '%s/run/%s' --force",
                         kw_tl_bin(), kw_t_fix, kw_t_fix, own[i]);
        cr_expect_eq(st, 2, "%s: %s", own[i], out);
        cr_expect(strstr(out, "run folder") != NULL, "%s", out);
        free(out);
    }
    char *after = kw_tl_slurp(path);
    cr_expect_str_eq(after, before);
    free(after);
    free(before);
    /* a name the run folder uses, not yet there: refused too */
    int st = kw_t_sh(&out, "'%s' export '%s/run' --format json -o '%s/run/report.html'", kw_tl_bin(),
                     kw_t_fix, kw_t_fix);
    cr_expect_eq(st, 2, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/run/report.html", kw_t_fix);
    cr_expect(!kw_tl_exists(path));
    /* an existing file: only with --force */
    snprintf(path, sizeof path, "%s/keep.json", kw_t_fix);
    FILE *f = fopen(path, "w");
    fputs("mine\n", f);
    fclose(f);
    st = kw_t_sh(&out, "'%s' export '%s/run' --format json -o '%s'", kw_tl_bin(), kw_t_fix, path);
    cr_expect_eq(st, 2, "%s", out);
    cr_expect(strstr(out, "--force") != NULL, "%s", out);
    free(out);
    char *kept = kw_tl_slurp(path);
    cr_expect_str_eq(kept, "mine\n");
    free(kept);
    /* and with it only an export: "mine" may be another run's input */
    st = kw_t_sh(&out, "'%s' export '%s/run' --format json -o '%s' --force", kw_tl_bin(), kw_t_fix, path);
    cr_expect_eq(st, 2, "%s", out);
    cr_expect(strstr(out, "not a file knobwise export wrote") != NULL, "%s", out);
    free(out);
    kept = kw_tl_slurp(path);
    cr_expect_str_eq(kept, "mine\n");
    free(kept);
    cr_assert_eq(unlink(path), 0);
    st = kw_t_sh(&out, "'%s' export '%s/run' --format json -o '%s'", kw_tl_bin(), kw_t_fix, path);
    cr_expect_eq(st, 0, "%s", out);
    free(out);
    st = kw_t_sh(&out, "'%s' export '%s/run' --format json -o '%s' --force", kw_tl_bin(), kw_t_fix, path);
    cr_expect_eq(st, 0, "%s", out);
    free(out);
    kept = kw_tl_slurp(path);
    cr_expect(strncmp(kept, "{\n  \"format\": \"knobwise-export\"", 31) == 0);
    free(kept);
    /* not a regular file; a folder that does not exist */
    st = kw_t_sh(&out, "'%s' export '%s/run' --format json -o /dev/null --force", kw_tl_bin(), kw_t_fix);
    cr_expect_eq(st, 2, "%s", out);
    cr_expect(strstr(out, "not a regular file") != NULL, "%s", out);
    free(out);
    st = kw_t_sh(&out, "'%s' export '%s/run' --format json -o '%s/nope/x.json'", kw_tl_bin(), kw_t_fix,
                 kw_t_fix);
    cr_expect_eq(st, 2, "%s", out);
    free(out);
}

/* Two knobs that would be one C macro (a space may name knobs qkv.tile_m and
 * qkv_tile_m): c-header is refused, exit 2, naming the file and line, nothing
 * written; json exports both. On main the header defined
 * KNOBWISE_EXPORT_KNOB_QKV_TILE_M twice (0, then 1), so a runtime indexing by it
 * read the other knob's value. The config_id is made with the search's own
 * rule (kw_knobs_id_text), so the file is one a run could have written. */
Test(export, c_header_refuses_knobs_that_would_share_a_macro)
{
    const char *const names[2] = {"qkv.tile_m", "qkv_tile_m"}, *const values[2] = {"64", "128"};
    char path[4200], hdr[4300], *out = NULL;
    snprintf(path, sizeof path, "%s/twins.csv", kw_t_fix);
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL);
    fprintf(f, "shape,config_id,borrowed_from,qkv.tile_m,qkv_tile_m\ns,%016" PRIx64 ",,64,128\n",
            kw_knobs_id_text(2, names, values));
    fclose(f);
    snprintf(hdr, sizeof hdr, "%s/twins.h", kw_t_fix);
    int st = kw_t_sh(&out, "'%s' export '%s' --format c-header -o '%s'", kw_tl_bin(), path, hdr);
    cr_expect_eq(st, 2, "%s", out);
    char want[4400];
    snprintf(want, sizeof want, "%s:1: knobs 'qkv.tile_m' and 'qkv_tile_m'", path);
    cr_expect(strstr(out, want) != NULL, "want '%s' in: %s", want, out);
    cr_expect(!kw_tl_exists(hdr), "nothing written");
    free(out);
    st = kw_t_sh(&out, "'%s' export '%s' --format c-header", kw_tl_bin(), path);
    cr_expect_eq(st, 2, "stdout too: %s", out);
    free(out);
    snprintf(hdr, sizeof hdr, "%s/twins.json", kw_t_fix);
    st = kw_t_sh(&out, "'%s' export '%s' --format json -o '%s'", kw_tl_bin(), path, hdr);
    cr_expect_eq(st, 0, "json tells them apart: %s", out);
    free(out);
}

Test(export, bad_input_exits_2_and_writes_nothing)
{
    char *out = NULL, path[4200];
    snprintf(path, sizeof path, "%s/bad.xml", kw_t_fix);
    FILE *f = fopen(path, "w");
    fputs("<?xml version=\"1.0\"?>\n<results>\n", f);
    fclose(f);
    int st = kw_t_sh(&out, "'%s' export '%s' --format json -o '%s/x.json'", kw_tl_bin(), path, kw_t_fix);
    cr_expect_eq(st, 2, "%s", out);
    char want[4300];
    snprintf(want, sizeof want, "%s:", path);
    cr_expect(strstr(out, want) != NULL, "FILE:LINE message: %s", out);
    free(out);
    snprintf(path, sizeof path, "%s/x.json", kw_t_fix);
    cr_expect(!kw_tl_exists(path), "nothing written on bad input");
    st = kw_t_sh(&out, "'%s' export '%s/missing' --format json", kw_tl_bin(), kw_t_fix);
    cr_expect_eq(st, 2, "%s", out);
    cr_expect(strstr(out, "cannot open") != NULL, "%s", out);
    free(out);
    st = kw_t_sh(&out, "'%s' export '%s/run' --format yaml", kw_tl_bin(), kw_t_fix);
    cr_expect_eq(st, 2, "%s", out);
    free(out);
    st = kw_t_sh(&out, "'%s' export '%s/run'", kw_tl_bin(), kw_t_fix);
    cr_expect_eq(st, 2, "%s", out);
    free(out);
}

/* text with the span [from, to) replaced by with (a new string). */
static char *kw_t_splice(const char *text, const char *from, const char *to, const char *with)
{
    size_t a = (size_t)(from - text), w = strlen(with), rest = strlen(to);
    char *s = malloc(a + w + rest + 1);
    cr_assert(s != NULL);
    memcpy(s, text, a);
    memcpy(s + a, with, w);
    memcpy(s + a + w, to, rest + 1);
    return s;
}

static int kw_t_line_of(const char *text, const char *at)
{
    int line = 1;
    for (const char *c = text; c < at; c++)
        line += *c == '\n';
    return line;
}

/* The mappings.csv row holding `at` (in text, a whole file) gets the config_id
 * of its knob values (FNV-1a over "name=value;", kw_mix_config_id): the
 * knobs are the header's columns from the fourth up to "phase". */
static void kw_t_reid_row(char *text, const char *at)
{
    const char *names[256], *values[256];
    char nb[256][64], vb[256][64];
    char *row = (char *)at;
    while (row > text && row[-1] != '\n')
        row--;
    const char *h = text;
    int col = 0, nk = 0;
    const char *r = row;
    char *id = NULL;
    while (*h && *h != '\n' && nk < 256) {
        size_t hn = strcspn(h, ",\n"), rn = strcspn(r, ",\n");
        if (col == 1)
            id = (char *)r;
        if (hn == 5 && strncmp(h, "phase", 5) == 0)
            break;
        if (col >= 3) {
            snprintf(nb[nk], sizeof nb[nk], "%.*s", (int)hn, h);
            snprintf(vb[nk], sizeof vb[nk], "%.*s", (int)rn, r);
            names[nk] = nb[nk];
            values[nk] = vb[nk];
            nk++;
        }
        h += hn + (h[hn] == ',');
        r += rn + (r[rn] == ',');
        col++;
    }
    cr_assert(id != NULL && nk > 0);
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)kw_mix_config_id(nk, names, values));
    memcpy(id, hex, 16);
}

static void kw_t_put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "%s", path);
    cr_assert(fputs(text, f) >= 0 && fclose(f) == 0);
}

/* Export one file; expect exit `want` and, when want is 2, FILE:LINE and `sub`
 * on stderr and no -o file. */
static void kw_t_export_expect(const char *file, int line, int want, const char *sub)
{
    char *out = NULL, o[4200], loc[4300];
    snprintf(o, sizeof o, "%s/x.json", kw_t_fix);
    remove(o);
    int st = kw_t_sh(&out, "'%s' export '%s' --format json -o '%s'", kw_tl_bin(), file, o);
    cr_expect_eq(st, want, "%s: exit %d: %s", file, st, out);
    if (want == 2) {
        snprintf(loc, sizeof loc, "%s:%d: ", file, line);
        cr_expect(strstr(out, loc) != NULL, "want '%s' in: %s", loc, out);
        cr_expect(strstr(out, sub) != NULL, "want '%s' in: %s", sub, out);
        cr_expect(!kw_tl_exists(o), "written on bad input");
    }
    free(out);
}

/* A knob value that is not one of its knob's values in the run's space is
 * refused at the configuration's FILE:LINE, exit 2, nothing written: in the
 * run folder against the space its journal names; outside any run folder
 * (the file carries no domains) because the config_id is no longer the id of
 * its values. export took 'bogus' and wrote it out as the tile size. */
/* The run's own file (run/NAME, holding text) with [from, to) set to 'bogus'
 * (line: the configuration's): refused in the run folder against the space,
 * and as a copy outside any run folder by its config id; restored after. */
static void kw_t_bogus_value(const char *name, const char *text, const char *from, const char *to,
                             int line)
{
    char path[4200], solo[4200];
    snprintf(path, sizeof path, "%s/run/%s", kw_t_fix, name);
    snprintf(solo, sizeof solo, "%s/solo-%s", kw_t_fix, name);
    char *bad = kw_t_splice(text, from, to, "bogus");
    /* libknobwise, which export reads through, refuses the edited values at
     * open: their config_id is no longer theirs (stop 39) */
    kw_t_put(path, bad);
    kw_t_export_expect(path, line, 2, "changed after the run");
    kw_t_put(solo, bad);
    kw_t_export_expect(solo, line, 2, "changed after the run");
    /* a mappings.csv row whose id was made again for the bogus value passes
     * that check; in the run folder the space refuses the value */
    if (strcmp(name, "mappings.csv") == 0) {
        kw_t_reid_row(bad, bad + (from - text));
        kw_t_put(path, bad);
        kw_t_export_expect(path, line, 2, "has no value 'bogus'");
    }
    kw_t_put(path, text);
    free(bad);
}

Test(export, knob_values_outside_the_space_are_refused_at_their_line)
{
    char path[4200], clean[4200];
    const char *shape = "attn_prefill_s128_b8_c4";
    /* mappings.csv: the row's first knob (field 3) */
    snprintf(path, sizeof path, "%s/run/mappings.csv", kw_t_fix);
    char *csv = kw_tl_slurp(path);
    cr_assert(csv != NULL);
    snprintf(clean, sizeof clean, "%s/clean.csv", kw_t_fix);
    kw_t_put(clean, csv);
    kw_t_export_expect(clean, 0, 0, NULL); /* the control: an untouched copy exports */
    const char *row = strstr(csv, shape), *f3 = row;
    cr_assert(row != NULL && row[-1] == '\n');
    for (int i = 0; i < 3; i++)
        f3 = strchr(f3, ',') + 1;
    kw_t_bogus_value("mappings.csv", csv, f3, f3 + strcspn(f3, ",\n"), kw_t_line_of(csv, row));
    free(csv);
    /* results.xml: the first recommended configuration's first knob */
    snprintf(path, sizeof path, "%s/run/results.xml", kw_t_fix);
    char *xml = kw_tl_slurp(path);
    cr_assert(xml != NULL);
    const char *rec = strstr(xml, "recommended=\"true\"");
    cr_assert(rec != NULL);
    const char *val = strstr(rec, "value=\"") + strlen("value=\"");
    kw_t_bogus_value("results.xml", xml, val, strchr(val, '"'), kw_t_line_of(xml, rec));
    free(xml);
}

/* A run where one of its two shapes has nothing to deploy (an SLA its
 * configurations meet on attn_decode_kv512_b1_c1 and miss on the 32-batch,
 * 16-stream shape). Neither format has a place for that shape; export left it
 * out without a word (exit 0, nothing on stderr), so a runtime embedding the
 * table took the shape for one the run never tuned. Now each format's export
 * names it on stderr with its results.xml line; the output still validates
 * and holds the other shape only. */
/* Tune run folder $fix/NAME on a two-knob space whose p99 SLA (2000 us) the
 * configurations meet on attn_decode_kv512_b1_c1 and miss on
 * attn_decode_kv2048_b32_c16; `both` 0: that shape alone. */
static void kw_t_sla_run(const char *name, int both)
{
    char path[4200], *out = NULL;
    snprintf(path, sizeof path, "%s/%s.xml", kw_t_fix, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<space name=\"sla_half\" block=\"llama7b_attn\">\n"
               "  <accelerator file=\"%s/spaces/accel/h100.xml\"/>\n"
               "  <workload file=\"%s/spaces/workloads/llama7b.xml\"/>\n"
               "  <shape ref=\"attn_decode_kv2048_b32_c16\"/>\n%s"
               "  <knob name=\"fuse_qkv\" values=\"off on\" baseline=\"off\"/>\n"
               "  <knob name=\"launch_mode\" values=\"eager graph\" baseline=\"eager\"/>\n"
               "  <guards sla_p99_us=\"2000\"/>\n"
               "  <tuning sim_requests=\"200\" final_requests=\"400\"/>\n"
               "</space>\n",
            kw_tl_src(), kw_tl_src(), both ? "  <shape ref=\"attn_decode_kv512_b1_c1\"/>\n" : "");
    fclose(f);
    int st = kw_t_sh(&out, "'%s' tune --space '%s' --out '%s/%s' --quiet", kw_tl_bin(), path,
                     kw_t_fix, name);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
}

Test(export, a_shape_with_nothing_to_deploy_is_named_not_dropped_silently)
{
    char path[4200], *out = NULL;
    kw_t_sla_run("sla", 1);
    int st;
    snprintf(path, sizeof path, "%s/sla/results.xml", kw_t_fix);
    char *xml = kw_tl_slurp(path);
    const char *at = strstr(xml, "<shape name=\"attn_decode_kv2048_b32_c16\"");
    cr_assert_not_null(at);
    const char *next = strstr(at + 1, "<shape "), *cfg = strstr(at, "<config ");
    cr_assert(next && cfg > next, "the SLA is met there after all: pick another");
    long line = 1;
    for (const char *c = xml; c < at; c++)
        line += *c == '\n';
    free(xml);
    char want[4400];
    snprintf(want, sizeof want, "note: %s:%ld: shape 'attn_decode_kv2048_b32_c16' has nothing to "
             "deploy", path, line);
    static const char *const fmt[] = {"json", "c-header"};
    for (int i = 0; i < 2; i++) {
        st = kw_t_sh(NULL, "'%s' export '%s/sla' --format %s -o '%s/sla.%d' 2>'%s/err'",
                     kw_tl_bin(), kw_t_fix, fmt[i], kw_t_fix, i, kw_t_fix);
        snprintf(path, sizeof path, "%s/err", kw_t_fix);
        char *err = kw_tl_slurp(path);
        cr_assert_eq(st, 0, "%s: %s", fmt[i], err);
        cr_assert(strstr(err, want) != NULL, "%s: the shape is not named: %s", fmt[i], err);
        free(err);
        snprintf(path, sizeof path, "%s/sla.%d", kw_t_fix, i);
        char *body = kw_tl_slurp(path);
        cr_assert(strstr(body, "attn_decode_kv512_b1_c1") != NULL, "%s", fmt[i]);
        /* format 2: not among the shapes to deploy, listed after them as a
         * shape with nothing to deploy (format 1 had no place for it) */
        const char *list = strstr(body, i ? "knobwise_export_nothing_to_deploy[" :
                                            "\"nothing_to_deploy\": [");
        cr_assert_not_null(list, "%s: no nothing_to_deploy list", fmt[i]);
        const char *named = strstr(body, "\"attn_decode_kv2048_b32_c16\"");
        cr_assert(named && named > list, "%s: the shape is among those to deploy", fmt[i]);
        cr_assert_null(strstr(named + 1, "\"attn_decode_kv2048_b32_c16\""), "%s", fmt[i]);
        if (!i)
            cr_assert(strstr(list, "{\"name\": \"attn_decode_kv2048_b32_c16\", \"phase\": "
                                   "\"decode\", \"batch\": 32, \"len\": 2048, \"streams\": 16}"),
                      "%s", list);
        free(body);
    }
    snprintf(path, sizeof path, "%s/sla.0", kw_t_fix);
    st = kw_t_validate(path, &out);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    /* bisect to that shape's 'best' says why there is none (main: "no
     * recommendation for shape ... in that run", the same words as for a
     * shape the run never tuned) */
    st = kw_t_sh(&out, "'%s' bisect '%s/sla:baseline' '%s/sla:best' --shape "
                 "attn_decode_kv2048_b32_c16", kw_tl_bin(), kw_t_fix, kw_t_fix);
    cr_assert_eq(st, 2, "%s", out);
    cr_assert(strstr(out, "it was tuned, but no configuration it evaluated passes the guards") &&
              strstr(out, "nothing to deploy"), "%s", out);
    free(out);
}

/* text (a mappings.csv without quoted fields) with its knob columns edited:
 * swap 1 swaps the first two knob columns, else the last knob column is
 * dropped; every row is then given the config_id of its values in the
 * file's new column order (what libknobwise checks at open). */
static char *kw_t_knob_columns(const char *text, int swap)
{
    size_t n = strlen(text);
    char *out = malloc(n + 1), *o = out;
    cr_assert(out != NULL);
    int first = 3, last = -1; /* knob columns: 3 .. the one before "phase" */
    for (int c = 0, at = 0; text[at] != '\n'; c++) {
        size_t w = strcspn(text + at, ",\n");
        if (w == 5 && strncmp(text + at, "phase", 5) == 0) {
            last = c - 1;
            break;
        }
        at += (int)w + (text[at + w] == ',');
    }
    cr_assert(last > first, "fewer than two knob columns");
    for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
        const char *f[512];
        size_t fl[512];
        int nf = 0;
        for (const char *c = line; nf < 512;) {
            size_t w = strcspn(c, ",\n");
            f[nf] = c;
            fl[nf++] = w;
            if (c[w] != ',')
                break;
            c += w + 1;
        }
        for (int i = 0; i < nf; i++) {
            int src = i;
            if (swap && i == first)
                src = first + 1;
            else if (swap && i == first + 1)
                src = first;
            else if (!swap && i == last)
                continue;
            if (o != out && o[-1] != '\n')
                *o++ = ',';
            memcpy(o, f[src], fl[src]);
            o += fl[src];
        }
        *o++ = '\n';
    }
    *o = '\0';
    for (char *row = strchr(out, '\n') + 1; *row; row = strchr(row, '\n') + 1)
        kw_t_reid_row(out, row);
    return out;
}

/* export's own check of a configuration against the run's space: the
 * table's knobs must be the space's knobs, in its order (a config_id is the
 * id of "name=value;" in that order). A mappings.csv whose knob columns were
 * swapped or dropped, each row re-id'd in the file's order, passes
 * libknobwise's id check (a copy outside any run folder exports: nothing to
 * check it against); in the run folder it is refused at its first row,
 * naming the knob that differs. main's export recomputed the id a second
 * time, after the library had, and reached its comparison only here, saying
 * "the values were changed after the run": not what was wrong. */
Test(export, a_table_whose_knobs_are_not_the_spaces_in_its_order_is_refused_in_the_run_folder)
{
    char path[4200], solo[4200];
    snprintf(path, sizeof path, "%s/run/mappings.csv", kw_t_fix);
    char *csv = kw_tl_slurp(path);
    cr_assert(csv != NULL);
    char k1[64], k2[64], klast[64];
    kw_t_field(k1, sizeof k1, csv, 3);
    kw_t_field(k2, sizeof k2, csv, 4);
    kw_t_field(klast, sizeof klast, csv, kw_t_ncols() - KW_T_TRAILING - 1);
    for (int swap = 1; swap >= 0; swap--) {
        char *edited = kw_t_knob_columns(csv, swap);
        snprintf(solo, sizeof solo, "%s/solo-%d.csv", kw_t_fix, swap);
        kw_t_put(solo, edited);
        kw_t_export_expect(solo, 0, 0, NULL); /* the library's id check passes */
        snprintf(path, sizeof path, "%s/run/edited-%d.csv", kw_t_fix, swap);
        kw_t_put(path, edited);
        char want[512];
        if (swap)
            snprintf(want, sizeof want, "its knobs are not the run's space's knobs in the space's "
                     "order (knob 1 is '%s', the space's is '%s')", k2, k1);
        else
            snprintf(want, sizeof want, "its knobs are not the run's space's knobs in the space's "
                     "order (knob %d is none (the file has %d knobs), the space's is '%s')",
                     kw_t_ncols() - KW_T_TRAILING - 3, kw_t_ncols() - KW_T_TRAILING - 4, klast);
        kw_t_export_expect(path, 2, 2, want);
        remove(path);
        free(edited);
    }
    free(csv);
}

/* A run where no shape has anything to deploy (the SLA run's failing shape
 * alone): libknobwise opens its results.xml (each shape answered
 * KNOBWISE_ENOTFOUND, test_lib), and export refuses it at the first such
 * shape's line, exit 2, nothing written: an export would carry no
 * configuration, and a C header could not declare its empty arrays. main
 * refused it through the library's open ("the run recommends no
 * configuration for any shape", no line, no reason). */
Test(export, a_run_with_nothing_to_deploy_anywhere_is_refused_at_its_shape)
{
    kw_t_sla_run("none", 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/none/results.xml", kw_t_fix);
    char *xml = kw_tl_slurp(path);
    cr_assert(xml != NULL);
    const char *at = strstr(xml, "<shape name=\"attn_decode_kv2048_b32_c16\"");
    cr_assert(at != NULL && strstr(at, "<config ") == NULL, "the SLA is met there after all");
    int line = kw_t_line_of(xml, at);
    free(xml);
    kw_t_export_expect(path, line, 2, "no shape of the run has a configuration to deploy (shape "
                       "'attn_decode_kv2048_b32_c16': no configuration the run evaluated passes its "
                       "guards): nothing to export");
}
