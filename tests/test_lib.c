/* test_lib.c - libknobwise's table (src/lib/knobwise.c): open a run's
 * results.xml or mappings.csv, look shapes up exactly and by the nearest
 * tuned shape, refuse borrowing across phases unless asked, read knobs,
 * latencies, guard thresholds and roll-back configurations, and fail cleanly
 * on missing and damaged files.
 *
 * The fixtures are small files written here by hand, so every expected value
 * (the knob values, the distances, which shape is nearest) is read off the
 * fixture or worked out from its numbers, never copied from the library's
 * output. Distances are log2 ratios: batch 1 against a request of 2 is -1.
 */
#include <criterion/criterion.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "knobwise.h"
#include "kw_mix.h"
#include "lib/kw_tl.h"

static char *kw_t_dir; /* this test's fixture folder (each test runs in its own process) */

static void kw_t_cleanup(void)
{
    if (!kw_t_dir)
        return;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", kw_t_dir);
    if (system(cmd) != 0) { /* best effort */ }
}

TestSuite(lib, .fini = kw_t_cleanup);

/* Three tuned shapes; a fourth, decode_none, where nothing passed (no config:
 * not an entry). The prefill b8 shape's parent target carries its knobs (as
 * knobwise writes it now); its baseline target does not (an older file), so
 * the library must take them from the <baseline> element. */
static const char *kw_t_results_xml =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<results format=\"1\" knobwise=\"0.1.0\" run=\"r1\" space=\"s\" strategy=\"ofat\" "
    "seed=\"1\" budget=\"10\" metric=\"p95\" owner=\"team-a\">\n"
    "  <inputs space=\"\" accelerator=\"\" workload=\"\"/>\n"
    "  <limits min_effect_pct=\"1\" alpha=\"0.05\" drift_min_cos=\"0.999\" "
    "drift_max_rel_rms=\"0.02\" max_throttle_pct=\"5\" max_fallback_pct=\"1\" sla_p99_us=\"0\" "
    "final_requests=\"1000\"/>\n"
    "  <shape name=\"pre_b1_s128_c1\" evaluations=\"3\" configs=\"3\" steps=\"2\" "
    "accepted_path=\"1\" ranked=\"1\" ranked_listed=\"1\" rejected=\"0\" phase=\"prefill\" "
    "batch=\"1\" seq=\"128\" streams=\"1\">\n"
    "    <config rank=\"1\" id=\"00000000000000a1\" recommended=\"true\" knobs_changed=\"1\">\n"
    "      <knob name=\"g.tile_m\" value=\"64\"/><knob name=\"fuse_attention\" value=\"flash\"/>\n"
    "      <metrics primary=\"p95_us\" reps=\"1\" guards=\"pass\">\n"
    "        <metric name=\"p95_us\" value=\"100.5\"/><metric name=\"p99_us\" value=\"120.25\"/>\n"
    "      </metrics>\n"
    "      <changes/>\n"
    "      <rollback>\n"
    "        <target kind=\"parent\" id=\"00000000000000b1\">"
    "<knob name=\"g.tile_m\" value=\"128\"/><knob name=\"fuse_attention\" value=\"none\"/></target>\n"
    "        <watch guard=\"p95_ceiling\" metric=\"p95_us\" max=\"110.5\" basis=\"interval\"/>\n"
    "        <disproof requests=\"1000\" min_improvement_pct=\"1\"><criterion>c</criterion></disproof>\n"
    "        <owner>team-a</owner>\n"
    "      </rollback>\n"
    "    </config>\n"
    "  </shape>\n"
    "  <shape name=\"pre_b8_s2048_c4\" evaluations=\"3\" configs=\"3\" steps=\"2\" "
    "accepted_path=\"1\" ranked=\"2\" ranked_listed=\"2\" rejected=\"0\" phase=\"prefill\" "
    "batch=\"8\" seq=\"2048\" streams=\"4\">\n"
    "    <baseline id=\"00000000000000c0\">"
    "<knob name=\"g.tile_m\" value=\"128\"/><knob name=\"fuse_attention\" value=\"none\"/>"
    "<metrics primary=\"p95_us\" reps=\"1\" guards=\"pass\"/></baseline>\n"
    "    <config rank=\"1\" id=\"00000000000000c2\" recommended=\"true\" knobs_changed=\"2\">\n"
    "      <knob name=\"g.tile_m\" value=\"256\"/><knob name=\"fuse_attention\" value=\"qk_softmax\"/>\n"
    "      <metrics primary=\"p95_us\" reps=\"1\" guards=\"pass\">\n"
    "        <metric name=\"p95_us\" value=\"2000\"/><metric name=\"p99_us\" value=\"2500\"/>\n"
    "      </metrics>\n"
    "      <changes/>\n"
    "      <rollback>\n"
    "        <target kind=\"parent\" id=\"00000000000000c1\">"
    "<knob name=\"g.tile_m\" value=\"256\"/><knob name=\"fuse_attention\" value=\"none\"/></target>\n"
    "        <target kind=\"baseline\" id=\"00000000000000c0\"/>\n"
    "        <watch guard=\"p95_ceiling\" metric=\"p95_us\" max=\"2100\" basis=\"b1\"/>\n"
    "        <watch guard=\"drift\" metric=\"quality_cos\" min=\"0.999\" basis=\"b2\"/>\n"
    "        <disproof requests=\"1000\" min_improvement_pct=\"1\"><criterion>c</criterion></disproof>\n"
    "        <owner>team-b</owner>\n"
    "      </rollback>\n"
    "    </config>\n"
    "    <config rank=\"2\" id=\"00000000000000c1\" recommended=\"false\" knobs_changed=\"1\">\n"
    "      <knob name=\"g.tile_m\" value=\"256\"/><knob name=\"fuse_attention\" value=\"none\"/>\n"
    "      <metrics primary=\"p95_us\" reps=\"1\" guards=\"pass\"/>\n"
    "      <changes/>\n"
    "      <rollback><target kind=\"parent\" id=\"00000000000000c0\"/>"
    "<watch guard=\"p95_ceiling\" metric=\"p95_us\" max=\"1\" basis=\"x\"/>"
    "<disproof requests=\"1\" min_improvement_pct=\"1\"><criterion>c</criterion></disproof>"
    "<owner>o</owner></rollback>\n"
    "    </config>\n"
    "  </shape>\n"
    "  <shape name=\"dec_b4_kv1024_c2\" evaluations=\"1\" configs=\"1\" steps=\"0\" "
    "accepted_path=\"0\" ranked=\"1\" ranked_listed=\"1\" rejected=\"0\" phase=\"decode\" "
    "batch=\"4\" kv_len=\"1024\" streams=\"2\">\n"
    "    <config rank=\"1\" id=\"00000000000000d1\" recommended=\"true\" knobs_changed=\"0\">\n"
    "      <knob name=\"g.tile_m\" value=\"32\"/><knob name=\"fuse_attention\" value=\"flash\"/>\n"
    "      <metrics primary=\"p95_us\" reps=\"1\" guards=\"pass\">\n"
    "        <metric name=\"p95_us\" value=\"50\"/><metric name=\"p99_us\" value=\"60\"/>\n"
    "      </metrics>\n"
    "      <changes/>\n"
    "      <rollback><target kind=\"parent\" id=\"00000000000000d1\"/>"
    "<watch guard=\"p95_ceiling\" metric=\"p95_us\" max=\"55\" basis=\"x\"/>"
    "<disproof requests=\"1\" min_improvement_pct=\"1\"><criterion>c</criterion></disproof>"
    "<owner>o</owner></rollback>\n"
    "    </config>\n"
    "  </shape>\n"
    "  <shape name=\"dec_none\" evaluations=\"1\" configs=\"1\" steps=\"0\" accepted_path=\"0\" "
    "ranked=\"0\" ranked_listed=\"0\" rejected=\"1\" phase=\"decode\" batch=\"1\" kv_len=\"64\" "
    "streams=\"1\"/>\n"
    "</results>\n";

/* ---- config ids ----
 * The library refuses a configuration whose config_id is not the id of its
 * knob values (FNV-1a over "name=value;", kw_mix_config_id, the search's own
 * rule). The fixtures are written by hand with placeholder ids (any 16 hex
 * digits) and kw_t_write puts each configuration's own id in their place, so
 * a fixture reads as the values it means; kw_t_write_raw keeps the text as
 * it is (the mismatch test). */
static void kw_t_hex(char out[17], int n, const char *const *names, const char *const *values)
{
    snprintf(out, 17, "%016llx", (unsigned long long)kw_mix_config_id(n, names, values));
}

/* 1 when s starts with 16 lowercase hex digits followed by end (a CSV field). */
static int kw_t_is_id(const char *s, size_t n)
{
    if (n != 16)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

/* One CSV record at *pos (RFC 4180 quotes), its fields unquoted into
 * vals[0..max) (malloc'ed), and where field 1 starts into *f1; *pos moves
 * past it. Returns the field count, or -1 for an open quote. */
static int kw_t_record(char **pos, char **vals, int max, char **f1)
{
    char *c = *pos;
    int n = 0;
    for (;;) {
        /* the field's bytes at most (a quoted field, in the small fixtures only:
         * up to the end of the text) */
        size_t w = 0, cap = (*c == '"' ? strlen(c) : strcspn(c, ",\n")) + 1;
        char *v = malloc(cap);
        cr_assert(v != NULL);
        if (n == 1)
            *f1 = c;
        if (*c == '"') {
            for (c++;; c++) {
                if (*c == '\0') {
                    free(v);
                    return -1;
                }
                if (*c == '"' && c[1] == '"')
                    v[w++] = *c++;
                else if (*c == '"') {
                    c++;
                    break;
                } else
                    v[w++] = *c;
            }
        }
        while (*c && *c != ',' && *c != '\n')
            v[w++] = *c++;
        v[w] = '\0';
        if (n < max)
            vals[n] = v;
        else
            free(v);
        n++;
        if (*c == ',') {
            c++;
            continue;
        }
        if (*c == '\n')
            c++;
        *pos = c;
        return n;
    }
}

/* mappings.csv: each row's config_id from its knob columns (not shape,
 * config_id, borrowed_from nor the columns after the knobs). A row whose
 * config_id is not 16 hex digits, or whose field count is not the header's,
 * is left as it is (the damaged-file tests). */
static void kw_t_fix_csv(char *text)
{
    static const char *const fixed[] = {"shape", "config_id", "borrowed_from", "phase", "batch",
                                        "seq", "kv_len", "streams", "p95_us", "p99_us",
                                        "borrow_warnings", "figures_from", "file_rows",
                                        "figures_basis"};
    enum { MAXC = 4096 };
    char **hdr = calloc(MAXC, sizeof *hdr), **vals = calloc(MAXC, sizeof *vals), *f1 = NULL;
    const char **names = calloc(MAXC, sizeof *names), **values = calloc(MAXC, sizeof *values);
    cr_assert(hdr && vals && names && values);
    char *pos = text;
    int nc = kw_t_record(&pos, hdr, MAXC, &f1);
    while (nc > 0 && nc <= MAXC && *pos) {
        int n = kw_t_record(&pos, vals, MAXC, &f1);
        if (n < 0)
            break;
        int nk = 0, seen_phase = 0; /* the knobs end where phase, ... begin (knobwise_read_csv) */
        for (int c = 0; c < n && c < nc && n == nc; c++) {
            int knob = !(seen_phase |= strcmp(hdr[c], "phase") == 0);
            for (size_t f = 0; f < sizeof fixed / sizeof fixed[0]; f++)
                knob &= strcmp(hdr[c], fixed[f]) != 0;
            if (knob) {
                names[nk] = hdr[c];
                values[nk++] = vals[c];
            }
        }
        if (n == nc && nk > 0 && kw_t_is_id(vals[1], strlen(vals[1])) && kw_t_is_id(f1, 16)) {
            char hex[17];
            kw_t_hex(hex, nk, names, values);
            memcpy(f1, hex, 16);
        }
        for (int c = 0; c < n && c < MAXC; c++)
            free(vals[c]);
    }
    for (int c = 0; c < nc && c < MAXC; c++)
        free(hdr[c]);
    free(hdr);
    free(vals);
    free(names);
    free(values);
}

/* results.xml: every element with an id and <knob> children right after its
 * start tag gets the id of those values, and every other mention of the
 * placeholder (a roll-back target known by id only) follows it. */
static void kw_t_fix_xml(char *text)
{
    enum { MAXK = 64 };
    for (char *a = strstr(text, " id=\""); a; a = strstr(a + 1, " id=\"")) {
        char *v = a + 5;
        if (!kw_t_is_id(v, 16) || v[16] != '"')
            continue;
        char *gt = strchr(v, '>');
        if (!gt || gt[-1] == '/')
            continue; /* no children */
        const char *names[MAXK], *values[MAXK];
        char nb[MAXK][64], vb[MAXK][64];
        int n = 0;
        char *c = gt + 1;
        for (;;) {
            c += strspn(c, " \n");
            if (strncmp(c, "<knob name=\"", 12) != 0 || n == MAXK)
                break;
            if (sscanf(c, "<knob name=\"%63[^\"]\" value=\"%63[^\"]\"/>", nb[n], vb[n]) != 2)
                break;
            names[n] = nb[n];
            values[n] = vb[n];
            n++;
            c = strchr(c, '>') + 1;
        }
        if (n == 0)
            continue;
        char old[17], hex[17];
        memcpy(old, v, 16);
        old[16] = '\0';
        kw_t_hex(hex, n, names, values);
        if (strcmp(old, hex) == 0)
            continue;
        for (char *o = strstr(text, old); o; o = strstr(o + 16, old))
            memcpy(o, hex, 16);
    }
}

static char *kw_t_write_raw(const char *name, const char *text);

static char *kw_t_write(const char *name, const char *text)
{
    char *fixed = strdup(text);
    cr_assert(fixed != NULL);
    char *c = fixed + (strncmp(fixed, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0); /* a byte order mark */
    c += strspn(c, " \t\r\n");
    if (*c == '<')
        kw_t_fix_xml(c);
    else if (strncmp(c, "shape,config_id,", 16) == 0)
        kw_t_fix_csv(c);
    char *p = kw_t_write_raw(name, fixed);
    free(fixed);
    return p;
}

/* The id kw_t_write gives the fixture's configuration of g.tile_m, fuse_attention. */
static const char *kw_t_id2(const char *tile_m, const char *fuse)
{
    static char hex[8][17];
    static int next;
    const char *names[] = {"g.tile_m", "fuse_attention"}, *values[] = {tile_m, fuse};
    char *h = hex[next++ % 8];
    kw_t_hex(h, 2, names, values);
    return h;
}

static char *kw_t_write_raw(const char *name, const char *text)
{
    if (!kw_t_dir)
        kw_t_dir = kw_tl_tmpdir("kwtest");
    char *p = malloc(strlen(kw_t_dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", kw_t_dir, name);
    FILE *f = fopen(p, "w");
    cr_assert(f != NULL);
    fputs(text, f);
    fclose(f);
    return p;
}

static knobwise_table *kw_t_open_text(const char *name, const char *text)
{
    char *p = kw_t_write(name, text);
    knobwise_table *t = NULL;
    int rc = knobwise_table_open(&t, p);
    cr_assert_eq(rc, 0, "open %s: %s", p, knobwise_error_last());
    free(p);
    return t;
}

static const char *kw_t_val(const knobwise_config *c, const char *knob)
{
    const char *v = NULL;
    int rc = knobwise_config_get(&v, c, knob);
    cr_assert_eq(rc, 0, "%s: %s", knob, knobwise_error_last());
    return v;
}

Test(lib, exact_by_dimensions_and_by_name)
{
    knobwise_table *t = kw_t_open_text("results.xml", kw_t_results_xml);
    cr_assert_str_eq(knobwise_table_kind(t), "results.xml");
    cr_assert_eq(knobwise_table_count(t), 3, "dec_none recommends nothing: not an entry");
    cr_assert_eq(knobwise_table_knob_count(t), 2);
    cr_assert_str_eq(knobwise_table_knob_name(t, 1), "fuse_attention");

    knobwise_shape q = {KNOBWISE_PREFILL, 8, 2048, 4};
    knobwise_match m;
    cr_assert_eq(knobwise_table_lookup(&m, t, &q, KNOBWISE_LOOKUP_EXACT), 0, "%s",
                 knobwise_error_last());
    cr_assert_eq(m.exact, 1);
    cr_assert_eq(m.borrowed, 0);
    cr_assert_eq(m.phase_crossed, 0);
    cr_assert_eq(m.batch_log2, 0.0);
    cr_assert_eq(m.len_log2, 0.0);
    cr_assert_eq(m.streams_log2, 0.0);
    cr_assert_str_eq(knobwise_entry_name(m.entry), "pre_b8_s2048_c4");
    const knobwise_config *c = knobwise_entry_config(m.entry);
    cr_assert_str_eq(knobwise_config_id(c), kw_t_id2("256", "qk_softmax"));
    cr_assert_str_eq(kw_t_val(c, "fuse_attention"), "qk_softmax");
    long tm = 0;
    cr_assert_eq(knobwise_config_get_long(&tm, c, "g.tile_m"), 0);
    cr_assert_eq(tm, 256);
    int k = knobwise_table_knob_index(t, "g.tile_m");
    cr_assert_eq(k, 0);
    cr_assert_str_eq(knobwise_config_value(c, k), "256");
    cr_assert_null(knobwise_config_value(c, 2));

    /* decode exact, and by name */
    knobwise_shape d = {KNOBWISE_DECODE, 4, 1024, 2};
    cr_assert_eq(knobwise_table_lookup(&m, t, &d, 0), 0);
    cr_assert_str_eq(knobwise_entry_name(m.entry), "dec_b4_kv1024_c2");
    const knobwise_entry *e = NULL;
    cr_assert_eq(knobwise_table_find(&e, t, "pre_b1_s128_c1"), 0);
    knobwise_shape s;
    cr_assert_eq(knobwise_entry_shape(&s, e), 0);
    cr_assert(s.phase == KNOBWISE_PREFILL && s.batch == 1 && s.len == 128 && s.streams == 1);
    cr_assert_eq(knobwise_table_find(&e, t, "dec_none"), KNOBWISE_ENOTFOUND);
    cr_assert_null(e);
    cr_assert(strstr(knobwise_error_last(), "dec_none") != NULL);
    knobwise_table_free(t);
}

/* dec_none (decode, batch 1, kv 64, streams 1) was tuned and nothing passed
 * its guards. A request for that very shape used to borrow the nearest decode
 * winner (dec_b4_kv1024_c2: exact 0, borrowed 1, return 0), a configuration
 * the run never showed passing there and that `recommend` refuses for such a
 * shape when it fails there (it keeps the baseline); now it is refused with
 * the file, the shape's line and why, so the runtime keeps its production
 * mapping. A request near it (kv 128) still borrows: the run has no figure
 * there. */
Test(lib, a_tuned_shape_with_nothing_to_deploy_is_refused_not_borrowed)
{
    knobwise_table *t = kw_t_open_text("results.xml", kw_t_results_xml);
    long line = 1;
    for (const char *c = kw_t_results_xml; c < strstr(kw_t_results_xml, "<shape name=\"dec_none\"");
         c++)
        line += *c == '\n';
    char want[128];
    snprintf(want, sizeof want, "results.xml:%ld: shape 'dec_none' was tuned, but no configuration",
             line);
    knobwise_shape q = {KNOBWISE_DECODE, 1, 64, 1};
    knobwise_match m;
    cr_assert_eq(knobwise_table_lookup(&m, t, &q, 0), KNOBWISE_ENOTFOUND, "borrowed %s",
                 m.entry ? knobwise_entry_name(m.entry) : "-");
    cr_assert_null(m.entry);
    cr_assert(strstr(knobwise_error_last(), want) && strstr(knobwise_error_last(), "nothing to deploy"),
              "%s", knobwise_error_last());
    cr_assert_eq(knobwise_table_lookup(&m, t, &q, KNOBWISE_LOOKUP_CROSS_PHASE), KNOBWISE_ENOTFOUND);
    /* by name: the same reason, not just "no entry" */
    const knobwise_entry *e = NULL;
    cr_assert_eq(knobwise_table_find(&e, t, "dec_none"), KNOBWISE_ENOTFOUND);
    cr_assert(strstr(knobwise_error_last(), want), "%s", knobwise_error_last());
    /* the same dimensions in the other phase, and a shape next to it, borrow */
    knobwise_shape near = {KNOBWISE_DECODE, 1, 128, 1};
    cr_assert_eq(knobwise_table_lookup(&m, t, &near, 0), 0, "%s", knobwise_error_last());
    cr_assert_str_eq(knobwise_entry_name(m.entry), "dec_b4_kv1024_c2");
    cr_assert_eq(m.borrowed, 1);
    knobwise_shape pre = {KNOBWISE_PREFILL, 1, 64, 1};
    cr_assert_eq(knobwise_table_lookup(&m, t, &pre, 0), 0, "%s", knobwise_error_last());
    cr_assert_str_eq(knobwise_entry_name(m.entry), "pre_b1_s128_c1");
    knobwise_table_free(t);
}

/* A runtime that set a locale of its own where the decimal point is a comma
 * (setlocale(LC_ALL, "") under LANG=de_DE.UTF-8): the files are written in
 * the C locale, and strtod stopped at the '.', so no results.xml opened
 * ("'100.5' is not a finite number") and no mappings.csv with figures either.
 * The locale is built here with localedef (glibc's libc-bin) from a
 * 128-character ASCII map and an LC_NUMERIC whose decimal point is ',', so
 * the test needs no locale package. The caller's locale must stay its own. */
Test(lib, a_caller_with_a_decimal_comma_locale_opens_tables)
{
    char *cm = kw_t_write("kw_ascii.cm", "");
    FILE *f = fopen(cm, "w");
    fputs("<code_set_name> KW_ASCII\n<comment_char> %\n<escape_char> /\n<mb_cur_max> 1\n"
          "<mb_cur_min> 1\nCHARMAP\n", f);
    for (int i = 0; i < 128; i++)
        fprintf(f, "<U%04X> /x%02x\n", i, i);
    fputs("END CHARMAP\n", f);
    fclose(f);
    char *src = kw_t_write("kw_comma.src", "LC_NUMERIC\ndecimal_point \"<U002C>\"\n"
                                           "thousands_sep \"\"\ngrouping -1\nEND LC_NUMERIC\n");
    char cmd[4096];
    /* -c: the source defines LC_NUMERIC only (warnings, exit 1, the locale is written) */
    snprintf(cmd, sizeof cmd, "localedef -c -i '%s' -f '%s' '%s/kw_COMMA' >/dev/null 2>&1", src, cm,
             kw_t_dir);
    if (system(cmd) == -1) { /* the check below says what is missing */ }
    cr_assert_eq(setenv("LOCPATH", kw_t_dir, 1), 0);
    cr_assert_not_null(setlocale(LC_ALL, "kw_COMMA"), "localedef (libc-bin) made no locale: %s", cmd);
    char one[16];
    snprintf(one, sizeof one, "%.1f", 1.5);
    cr_assert_str_eq(one, "1,5", "the locale's decimal point is not a comma");

    knobwise_table *t = kw_t_open_text("results.xml", kw_t_results_xml);
    const knobwise_entry *e = NULL;
    cr_assert_eq(knobwise_table_find(&e, t, "pre_b1_s128_c1"), 0);
    double p95 = 0, p99 = 0;
    cr_assert_eq(knobwise_entry_latency(&p95, &p99, e), 0, "%s", knobwise_error_last());
    cr_assert(p95 == 100.5 && p99 == 120.25, "p95 %g p99 %g", p95, p99);
    knobwise_watch w;
    cr_assert_eq(knobwise_entry_watch(&w, e, 0), 0);
    cr_assert(w.max == 110.5, "watch max %g", w.max);
    knobwise_table_free(t);
    t = kw_t_open_text("comma.csv", "shape,config_id,borrowed_from,k,phase,batch,seq,kv_len,streams,"
                                    "p95_us,p99_us,borrow_warnings\n"
                                    "a,0123456789abcdef,,1,prefill,1,8,0,1,12.5,13.75,\n");
    cr_assert_eq(knobwise_entry_latency(&p95, &p99, knobwise_table_entry(t, 0)), 0);
    cr_assert(p95 == 12.5 && p99 == 13.75, "p95 %g p99 %g", p95, p99);
    knobwise_table_free(t);
    /* the caller's locale is its own again */
    snprintf(one, sizeof one, "%.1f", 1.5);
    cr_assert_str_eq(one, "1,5");
    setlocale(LC_ALL, "C");
    free(cm);
    free(src);
}

Test(lib, latency_watches_and_rollback)
{
    knobwise_table *t = kw_t_open_text("results.xml", kw_t_results_xml);
    const knobwise_entry *e = NULL;
    cr_assert_eq(knobwise_table_find(&e, t, "pre_b8_s2048_c4"), 0);
    double p95 = 0, p99 = 0;
    cr_assert_eq(knobwise_entry_latency(&p95, &p99, e), 0);
    cr_assert_eq(p95, 2000.0);
    cr_assert_eq(p99, 2500.0);
    cr_assert_eq(knobwise_entry_watch_count(e), 2);
    knobwise_watch w;
    cr_assert_eq(knobwise_entry_watch(&w, e, 0), 0);
    cr_assert_str_eq(w.guard, "p95_ceiling");
    cr_assert_str_eq(w.metric, "p95_us");
    cr_assert_eq(w.max, 2100.0);
    cr_assert(isnan(w.min));
    cr_assert_eq(knobwise_entry_watch(&w, e, 1), 0);
    cr_assert_eq(w.min, 0.999);
    cr_assert(isnan(w.max));
    cr_assert_eq(knobwise_entry_watch(&w, e, 2), KNOBWISE_ENOTFOUND);
    cr_assert_str_eq(knobwise_entry_owner(e), "team-b");

    const knobwise_config *rb = NULL;
    cr_assert_eq(knobwise_entry_rollback(&rb, e, KNOBWISE_ROLLBACK_PARENT), 0);
    cr_assert_str_eq(knobwise_config_id(rb), kw_t_id2("256", "none"));
    cr_assert_str_eq(kw_t_val(rb, "g.tile_m"), "256");
    cr_assert_str_eq(kw_t_val(rb, "fuse_attention"), "none");
    /* the baseline target has no knobs in the file: they come from <baseline> */
    cr_assert_eq(knobwise_entry_rollback(&rb, e, KNOBWISE_ROLLBACK_BASELINE), 0);
    cr_assert_str_eq(knobwise_config_id(rb), kw_t_id2("128", "none"));
    cr_assert_str_eq(kw_t_val(rb, "g.tile_m"), "128");
    cr_assert_eq(knobwise_entry_rollback(&rb, e, 7), KNOBWISE_EINPUT);

    /* a shape without a baseline target says so */
    cr_assert_eq(knobwise_table_find(&e, t, "pre_b1_s128_c1"), 0);
    cr_assert_eq(knobwise_entry_rollback(&rb, e, KNOBWISE_ROLLBACK_BASELINE), KNOBWISE_ENODATA);
    cr_assert_null(rb);
    knobwise_table_free(t);
}

Test(lib, nearest_is_borrowed_with_its_distances)
{
    knobwise_table *t = kw_t_open_text("results.xml", kw_t_results_xml);
    /* prefill b2 s256 c1: |log2| sums are 1+1+0 = 2 to pre_b1_s128_c1 and
     * 2+3+2 = 7 to pre_b8_s2048_c4 */
    knobwise_shape q = {KNOBWISE_PREFILL, 2, 256, 1};
    knobwise_match m;
    cr_assert_eq(knobwise_table_lookup(&m, t, &q, 0), 0, "%s", knobwise_error_last());
    cr_assert_str_eq(knobwise_entry_name(m.entry), "pre_b1_s128_c1");
    cr_assert_eq(m.exact, 0);
    cr_assert_eq(m.borrowed, 1);
    cr_assert_eq(m.phase_crossed, 0);
    cr_assert_float_eq(m.batch_log2, -1.0, 1e-12);
    cr_assert_float_eq(m.len_log2, -1.0, 1e-12);
    cr_assert_float_eq(m.streams_log2, 0.0, 1e-12);
    /* prefill b4 s1024 c4: 2+3+2 = 7 against 1+1+0 = 2 -> the big one,
     * entry/request = 8/4, 2048/1024, 4/4 */
    knobwise_shape q2 = {KNOBWISE_PREFILL, 4, 1024, 4};
    cr_assert_eq(knobwise_table_lookup(&m, t, &q2, 0), 0);
    cr_assert_str_eq(knobwise_entry_name(m.entry), "pre_b8_s2048_c4");
    cr_assert_float_eq(m.batch_log2, 1.0, 1e-12);
    cr_assert_float_eq(m.len_log2, 1.0, 1e-12);
    cr_assert_float_eq(m.streams_log2, 0.0, 1e-12);
    /* exact only: refused */
    cr_assert_eq(knobwise_table_lookup(&m, t, &q, KNOBWISE_LOOKUP_EXACT), KNOBWISE_ENOTFOUND);
    cr_assert_null(m.entry);
    cr_assert(strstr(knobwise_error_last(), "exact") != NULL, "%s", knobwise_error_last());
    /* a flag bit the library does not know is refused, not ignored (it might narrow the
     * answer, as EXACT does): the lookup that succeeds with 0 fails with 0x4 */
    cr_assert_eq(knobwise_table_lookup(&m, t, &q, 0x4u), KNOBWISE_EINPUT);
    cr_assert_null(m.entry);
    cr_assert(strstr(knobwise_error_last(), "0x4") != NULL, "%s", knobwise_error_last());
    cr_assert_eq(knobwise_table_lookup(&m, t, &q, KNOBWISE_LOOKUP_EXACT | 0x80000000u),
                 KNOBWISE_EINPUT);
    /* the decode entry is never borrowed for prefill while prefill has entries */
    knobwise_shape q3 = {KNOBWISE_PREFILL, 4, 1024, 2};
    cr_assert_eq(knobwise_table_lookup(&m, t, &q3, KNOBWISE_LOOKUP_CROSS_PHASE), 0);
    cr_assert_eq(m.phase_crossed, 0);
    cr_assert_str_neq(knobwise_entry_name(m.entry), "dec_b4_kv1024_c2");
    knobwise_table_free(t);
}

static const char *kw_t_prefill_only_csv =
    "shape,config_id,borrowed_from,g.tile_m,fuse_attention,phase,batch,seq,kv_len,streams,"
    "p95_us,p99_us,borrow_warnings\n"
    "pa,00000000000000e1,,64,flash,prefill,1,512,0,1,100.5,120.25,\n"
    "\"p,b\",00000000000000e2,pa,\"1\"\"28\",none,prefill,16,512,0,1,,,\n";

Test(lib, borrowing_across_phase_refused_unless_asked)
{
    knobwise_table *t = kw_t_open_text("mappings.csv", kw_t_prefill_only_csv);
    cr_assert_str_eq(knobwise_table_kind(t), "mappings.csv");
    knobwise_shape q = {KNOBWISE_DECODE, 1, 512, 1};
    knobwise_match m;
    cr_assert_eq(knobwise_table_lookup(&m, t, &q, 0), KNOBWISE_ENOTFOUND);
    cr_assert_null(m.entry);
    cr_assert(strstr(knobwise_error_last(), "KNOBWISE_LOOKUP_CROSS_PHASE") != NULL, "%s",
              knobwise_error_last());
    cr_assert_eq(knobwise_table_lookup(&m, t, &q, KNOBWISE_LOOKUP_CROSS_PHASE), 0);
    cr_assert_eq(m.phase_crossed, 1);
    cr_assert_eq(m.borrowed, 1);
    cr_assert_eq(m.exact, 0);
    cr_assert_str_eq(knobwise_entry_name(m.entry), "pa");
    /* exact-only never crosses */
    cr_assert_eq(knobwise_table_lookup(&m, t, &q, KNOBWISE_LOOKUP_CROSS_PHASE |
                                                      KNOBWISE_LOOKUP_EXACT),
                 KNOBWISE_ENOTFOUND);
    knobwise_table_free(t);
}

Test(lib, mappings_csv_rows_quotes_and_what_it_lacks)
{
    knobwise_table *t = kw_t_open_text("mappings.csv", kw_t_prefill_only_csv);
    cr_assert_eq(knobwise_table_count(t), 2);
    cr_assert_eq(knobwise_table_knob_count(t), 2, "the shape_* columns are not knobs");
    const knobwise_entry *e = NULL;
    cr_assert_eq(knobwise_table_find(&e, t, "p,b"), 0, "a quoted name with a comma");
    cr_assert_str_eq(knobwise_entry_borrowed_from(e), "pa");
    cr_assert_str_eq(kw_t_val(knobwise_entry_config(e), "g.tile_m"), "1\"28");
    /* an exact hit on a row that was itself borrowed is still borrowed */
    knobwise_shape q = {KNOBWISE_PREFILL, 16, 512, 1};
    knobwise_match m;
    cr_assert_eq(knobwise_table_lookup(&m, t, &q, 0), 0);
    cr_assert_eq(m.exact, 1);
    cr_assert_eq(m.borrowed, 1);
    double p95;
    cr_assert_eq(knobwise_entry_latency(&p95, NULL, e), KNOBWISE_ENODATA);
    const knobwise_config *rb;
    cr_assert_eq(knobwise_entry_rollback(&rb, e, KNOBWISE_ROLLBACK_PARENT), KNOBWISE_ENODATA);
    cr_assert_eq(knobwise_entry_watch_count(e), 0);
    long v;
    cr_assert_eq(knobwise_config_get_long(&v, knobwise_entry_config(e), "fuse_attention"),
                 KNOBWISE_EINPUT);
    cr_assert_eq(knobwise_config_get_long(&v, knobwise_entry_config(e), "no_such_knob"),
                 KNOBWISE_ENOTFOUND);
    knobwise_table_free(t);

    /* a mappings.csv from before the shape columns: by name only */
    t = kw_t_open_text("old.csv", "shape,config_id,borrowed_from,g.tile_m\n"
                                  "a,0123456789abcdef,,64\n");
    cr_assert_eq(knobwise_table_knob_count(t), 1);
    knobwise_shape q2 = {KNOBWISE_PREFILL, 1, 1, 1};
    cr_assert_eq(knobwise_table_lookup(&m, t, &q2, 0), KNOBWISE_ENODATA);
    cr_assert_eq(knobwise_table_find(&e, t, "a"), 0);
    cr_assert_eq(knobwise_entry_shape(&q2, e), KNOBWISE_ENODATA);
    cr_assert_str_eq(knobwise_entry_figures_from(e), "", "the file does not say");
    knobwise_table_free(t);
}

/* figures_from (added at the end): where each row's p95/p99 come from. It is
 * no knob; a file without it (kw_t_prefill_only_csv) says "". */
Test(lib, mappings_csv_figures_from)
{
    knobwise_table *t = kw_t_open_text(
        "mappings.csv",
        "shape,config_id,borrowed_from,g.tile_m,phase,batch,seq,kv_len,streams,p95_us,p99_us,"
        "borrow_warnings,figures_from\n"
        "pa,00000000000000e1,,64,prefill,1,512,0,1,100.5,120.25,,measured\n"
        "pb,00000000000000e1,pa,64,prefill,2,512,0,1,300,400,,model\n"
        "pc,00000000000000e2,,32,prefill,4,512,0,1,,,,\n");
    cr_assert_eq(knobwise_table_knob_count(t), 1, "figures_from is not a knob");
    cr_assert_str_eq(knobwise_table_knob_name(t, 0), "g.tile_m");
    const knobwise_entry *e = NULL;
    cr_assert_eq(knobwise_table_find(&e, t, "pa"), 0);
    cr_assert_str_eq(knobwise_entry_figures_from(e), "measured");
    double p95 = 0;
    cr_assert_eq(knobwise_entry_latency(&p95, NULL, e), 0);
    cr_assert_float_eq(p95, 100.5, 1e-12);
    cr_assert_eq(knobwise_table_find(&e, t, "pb"), 0);
    cr_assert_str_eq(knobwise_entry_figures_from(e), "model");
    cr_assert_eq(knobwise_table_find(&e, t, "pc"), 0);
    cr_assert_str_eq(knobwise_entry_figures_from(e), "");
    knobwise_table_free(t);
    /* a results.xml does not say */
    t = kw_t_open_text("results.xml", kw_t_results_xml);
    cr_assert_str_eq(knobwise_entry_figures_from(knobwise_table_entry(t, 0)), "");
    knobwise_table_free(t);
}

Test(lib, missing_file)
{
    knobwise_table *t = (knobwise_table *)&t; /* must be reset to NULL */
    int rc = knobwise_table_open(&t, "/nonexistent/knobwise/results.xml");
    cr_assert_eq(rc, KNOBWISE_EINPUT);
    cr_assert_null(t);
    cr_assert(strstr(knobwise_error_last(), "/nonexistent/knobwise/results.xml: cannot open") !=
                  NULL,
              "%s", knobwise_error_last());
    /* a run folder without results.xml names the file it looked for */
    char *d = kw_tl_tmpdir("kwtest");
    rc = knobwise_table_open(&t, d);
    cr_assert_eq(rc, KNOBWISE_EINPUT);
    cr_assert(strstr(knobwise_error_last(), "/results.xml: cannot open") != NULL);
    rmdir(d);
    free(d);
    cr_assert_eq(knobwise_table_open(&t, ""), KNOBWISE_EINPUT);
    cr_assert_eq(knobwise_table_open(NULL, "x"), KNOBWISE_EINPUT);
    /* every _free accepts NULL */
    knobwise_table_free(NULL);
}

Test(lib, run_folder_opens_its_results)
{
    char *p = kw_t_write("results.xml", kw_t_results_xml);
    free(p);
    knobwise_table *t = NULL;
    cr_assert_eq(knobwise_table_open(&t, kw_t_dir), 0, "%s", knobwise_error_last());
    cr_assert(strstr(knobwise_table_path(t), "/results.xml") != NULL);
    cr_assert_eq(knobwise_table_count(t), 3);
    knobwise_table_free(t);
}

/* Each damaged file: KNOBWISE_EINPUT, NULL table, and the message names the
 * file and the line where there is one. */
static void kw_t_damaged(const char *name, const char *text, const char *want)
{
    char *p = kw_t_write(name, text);
    knobwise_table *t = (knobwise_table *)&t;
    int rc = knobwise_table_open(&t, p);
    cr_assert_eq(rc, KNOBWISE_EINPUT, "%s: rc %d", name, rc);
    cr_assert_null(t);
    char w[1024];
    snprintf(w, sizeof w, "%s%s", p, want);
    cr_assert(strstr(knobwise_error_last(), w) != NULL, "%s: want '%s' in '%s'", name, w,
              knobwise_error_last());
    free(p);
}

/* file_rows (added at the end, after figures_from): the number of shape rows,
 * the same on every row. CSV has no end mark: a mappings.csv cut exactly at a
 * line end read as fewer shapes (the old reader opened the three files below
 * whose rows disagree with file_rows: rc 0). A whole file opens, and one from
 * before the column is read without the check (kw_t_prefill_only_csv and
 * mappings_csv_figures_from's). */
Test(lib, mappings_csv_cut_at_a_line_end_is_refused)
{
    static const char head[] = "shape,config_id,borrowed_from,g.tile_m,phase,batch,seq,kv_len,"
                               "streams,p95_us,p99_us,borrow_warnings,figures_from,file_rows\n";
    static const char r1[] = "pa,00000000000000e1,,64,prefill,1,512,0,1,100.5,120.25,,model,3\n";
    static const char r2[] = "pb,00000000000000e1,pa,64,prefill,2,512,0,1,300,400,,model,3\n";
    static const char r3[] = "pc,00000000000000e2,,32,prefill,4,512,0,1,,,,,3\n";
    char whole[1024], cut[1024], odd[1024];
    snprintf(whole, sizeof whole, "%s%s%s%s", head, r1, r2, r3);
    snprintf(cut, sizeof cut, "%s%s%s", head, r1, r2);
    knobwise_table *t = kw_t_open_text("mappings.csv", whole);
    cr_assert_eq(knobwise_table_count(t), 3);
    cr_assert_eq(knobwise_table_knob_count(t), 1, "file_rows is not a knob");
    knobwise_table_free(t);
    kw_t_damaged("cut.csv", cut, ":3: the file ends after 2 of its 3 shape rows (file_rows): cut short");
    /* saved again by a spreadsheet (a UTF-8 byte order mark): the same table
     * (the old reader: "not a results.xml nor a mappings.csv") */
    char bom[1100];
    snprintf(bom, sizeof bom, "\xEF\xBB\xBF%s", whole);
    t = kw_t_open_text("mappings.csv", bom);
    cr_assert_eq(knobwise_table_count(t), 3);
    cr_assert_str_eq(knobwise_table_knob_name(t, 0), "g.tile_m");
    knobwise_table_free(t);
    snprintf(odd, sizeof odd, "%s%s%s", head, r1,
             "pb,00000000000000e1,pa,64,prefill,2,512,0,1,300,400,,model,2\n");
    kw_t_damaged("odd.csv", odd, ":3: file_rows is '2', not the number of shape rows");
    snprintf(odd, sizeof odd, "%s%s%s%s%s", head, r1, r2, r3,
             "pd,00000000000000e2,,32,prefill,8,512,0,1,,,,,3\n");
    kw_t_damaged("long.csv", odd, ":5: file_rows is '3', not the number of shape rows");
    /* numbers in decimal (search/kw_num.c, as every reader): a leading blank
     * or hexadecimal is refused (main's reader took ' 1', ' 2' and '0x1p3' as
     * numbers) */
    static const struct { const char *row, *want; } bad[] = {
        {"pa,00000000000000e1,,64,prefill,1,512,0,1,100.5,120.25,,model, 1\n", ":2: file_rows is ' 1'"},
        {"pa,00000000000000e1,,64,prefill, 2,512,0,1,100.5,120.25,,model,1\n", ":2: batch is ' 2'"},
        {"pa,00000000000000e1,,64,prefill,1,512,0,1,0x1p3,120.25,,model,1\n", ":2: p95_us is '0x1p3'"},
        {"pa,00000000000000e1,,64,prefill,1,512,0,1,100.5, 120.25,,model,1\n", ":2: p99_us is ' 120.25'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(odd, sizeof odd, "%s%s", head, bad[i].row);
        kw_t_damaged("blank.csv", odd, bad[i].want);
    }
}

/* A column a later knobwise adds at the end of mappings.csv (results/formats.md:
 * added at the end, the format kept) is not a knob here: the table opens with
 * the same knobs and entries (main's reader took every column it did not know
 * for a knob, so a runtime linked with it would be handed a "knob" named after
 * the new column). A column it does not know among the ones after the knobs,
 * or one of those among the knobs, is refused at line 1. */
Test(lib, a_column_a_later_knobwise_adds_at_the_end_is_not_a_knob)
{
    knobwise_table *t = kw_t_open_text(
        "mappings.csv",
        "shape,config_id,borrowed_from,g.tile_m,phase,batch,seq,kv_len,streams,p95_us,p99_us,"
        "borrow_warnings,figures_from,file_rows,figures_basis,later_column\n"
        "pa,00000000000000e1,,64,prefill,1,512,0,1,100.5,120.25,,model,2,recheck,x\n"
        "pb,00000000000000e2,,32,prefill,4,512,0,1,300,400,,model,2,search,y\n");
    cr_assert_eq(knobwise_table_knob_count(t), 1, "a later column read as a knob");
    cr_assert_str_eq(knobwise_table_knob_name(t, 0), "g.tile_m");
    cr_assert_eq(knobwise_table_count(t), 2);
    const knobwise_entry *e = NULL;
    cr_assert_eq(knobwise_table_find(&e, t, "pb"), 0);
    cr_assert_str_eq(kw_t_val(knobwise_entry_config(e), "g.tile_m"), "32");
    cr_assert_str_eq(knobwise_entry_figures_basis(e), "search");
    double p95 = 0;
    cr_assert_eq(knobwise_entry_latency(&p95, NULL, e), 0);
    cr_assert_float_eq(p95, 300.0, 1e-12);
    knobwise_table_free(t);
    kw_t_damaged("among.csv",
                 "shape,config_id,borrowed_from,g.tile_m,phase,batch,seq,kv_len,streams,p95_us,"
                 "stray,p99_us,borrow_warnings\n"
                 "pa,00000000000000e1,,64,prefill,1,512,0,1,100.5,z,120.25,\n",
                 ":1: column 'stray' among the columns after the knobs");
    kw_t_damaged("before.csv",
                 "shape,config_id,borrowed_from,g.tile_m,figures_from,phase,batch,seq,kv_len,"
                 "streams,p95_us,p99_us,borrow_warnings\n"
                 "pa,00000000000000e1,,64,model,prefill,1,512,0,1,100.5,120.25,\n",
                 ":1: column 'figures_from' comes before phase");
}

Test(lib, damaged_files)
{
    /* truncated in the middle of the second shape */
    size_t cut = (size_t)(strstr(kw_t_results_xml, "pre_b8_s2048_c4") - kw_t_results_xml) + 40;
    char *trunc = strndup(kw_t_results_xml, cut);
    kw_t_damaged("trunc.xml", trunc, ":");
    free(trunc);
    /* a shape with a phase but no batch (the schema lets each attribute be
     * absent; the reader wants all or none) */
    char *nobatch = strdup(kw_t_results_xml);
    char *b = strstr(nobatch, "batch=\"1\" seq=\"128\"");
    cr_assert(b != NULL);
    memset(b, ' ', strlen("batch=\"1\"")); /* blank out batch="1" */
    kw_t_damaged("nobatch.xml", nobatch, ":5: shape 'pre_b1_s128_c1' has a phase but not its batch");
    free(nobatch);
    /* a negative tail latency (the schema's xs:decimal allows it; mappings.csv's
     * reader refuses it, and the XML reader handed it to the runtime) */
    char *neg = strdup(kw_t_results_xml);
    char *v = strstr(neg, "<metric name=\"p95_us\" value=\"100.5\"/>");
    cr_assert(v != NULL);
    memcpy(strstr(v, "100.5"), "-10.5", 5);
    kw_t_damaged("negative.xml", neg, ":8: shape 'pre_b1_s128_c1': p95_us -10.5, p99_us 120.25: a "
                                      "latency in us is a number >= 0");
    free(neg);
    /* valid XML, not a results file: the schema refuses it with its line */
    kw_t_damaged("other.xml", "<?xml version=\"1.0\"?>\n<space name=\"x\"/>\n", ":");
    /* an attribute the schema does not know, at line 2 */
    kw_t_damaged("attr.xml", "<?xml version=\"1.0\"?>\n<results bogus=\"1\"/>\n", ":2:");
    /* a DOCTYPE is refused before anything is read */
    kw_t_damaged("doctype.xml", "<?xml version=\"1.0\"?>\n<!DOCTYPE results [<!ENTITY a \"b\">]>\n"
                                "<results/>\n", ":");
    /* CSV: a row with a field missing, at line 3 */
    kw_t_damaged("short.csv", "shape,config_id,borrowed_from,k\na,0123456789abcdef,,1\n"
                              "b,0123456789abcdef,\n",
                 ":3: 3 fields, the header has 4");
    /* more fields than the header, a quoted one past its width (fuzz_table
     * found the reader looking at a field slot past its array there) */
    kw_t_damaged("wide.csv", "shape,config_id,borrowed_from,k\na,0123456789abcdef,,1,2,3,\"x\",\"y\"\n",
                 ":2: 8 fields, the header has 4");
    kw_t_damaged("twice.csv", "shape,config_id,borrowed_from,k,k\na,0123456789abcdef,,1,2\n",
                 ":1: column 'k' appears twice");
    kw_t_damaged("phase2.csv", "shape,config_id,borrowed_from,k,phase,batch,seq,kv_len,streams,"
                               "p95_us,p99_us,phase\na,0123456789abcdef,,1,prefill,1,1,0,1,,,x\n",
                 ":1: column 'phase' appears twice");
    kw_t_damaged("qhead.csv", "shape,config_id,borrowed_from,\"k\nx\",a,b\na,0123456789abcdef,,1,2,3\n",
                 ":1: the header has a quoted field across lines");
    kw_t_damaged("quote.csv", "shape,config_id,borrowed_from,k\n\"a,0123456789abcdef,,1\n",
                 ":2: a quoted field is never closed");
    kw_t_damaged("id.csv", "shape,config_id,borrowed_from,k\na,xyz,,1\n",
                 ":2: config_id is not 16 hex digits");
    kw_t_damaged("dup.csv", "shape,config_id,borrowed_from,k\na,0123456789abcdef,,1\n"
                            "a,0123456789abcdef,,2\n",
                 ":3: shape 'a' listed twice");
    kw_t_damaged("dims.csv", "shape,config_id,borrowed_from,k,phase,batch,seq,kv_len,streams,"
                             "p95_us,p99_us,borrow_warnings\na,0123456789abcdef,,1,prefill,0,8,0,1,,,\n",
                 ":2: batch is '0'");
    kw_t_damaged("figures.csv", "shape,config_id,borrowed_from,k,phase,batch,seq,kv_len,streams,"
                                "p95_us,p99_us,borrow_warnings,figures_from\n"
                                "a,0123456789abcdef,,1,prefill,1,8,0,1,1,2,,guessed\n",
                 ":2: figures_from is 'guessed', not measured or model");
    /* a latency that is not one (each used to be exported as given, or read as
     * "no figures"), one figure without the other, a knob without a value */
    static const char *const lat_bad[][2] = {
        {"-1,2", ":2: p95_us is '-1', not a latency in us"},
        {"1,nan", ":2: p99_us is 'nan', not a latency in us"},
        {"inf,2", ":2: p95_us is 'inf'"},
        {"1e400,2", ":2: p95_us is '1e400'"},
        {"abc,2", ":2: p95_us is 'abc'"},
        {"12us,2", ":2: p95_us is '12us'"},
        {"1,", ":2: p99_us is '', not a latency in us"},
    };
    for (size_t i = 0; i < sizeof lat_bad / sizeof lat_bad[0]; i++) {
        char csv[512];
        snprintf(csv, sizeof csv, "shape,config_id,borrowed_from,k,phase,batch,seq,kv_len,streams,"
                                  "p95_us,p99_us,borrow_warnings\n"
                                  "a,0123456789abcdef,,1,prefill,1,8,0,1,%s,\n", lat_bad[i][0]);
        kw_t_damaged("latency.csv", csv, lat_bad[i][1]);
    }
    kw_t_damaged("noval.csv", "shape,config_id,borrowed_from,k,j\na,0123456789abcdef,,1,\n",
                 ":2: knob 'j' has no value");
    kw_t_damaged("figures_alone.csv", "shape,config_id,borrowed_from,k,figures_from\n"
                                      "a,0123456789abcdef,,1,model\n",
                 ":1: column 'figures_from' without the figures it describes");
    kw_t_damaged("garbage.csv", "\x7f" "ELF\x02\x01\x01 not a table at all\n", ":1: not a results.xml");
    kw_t_damaged("empty.csv", "", ":1: not a results.xml");
    kw_t_damaged("header.csv", "shape,config_id,borrowed_from,k\n", ": no shape rows");
    /* a NUL byte inside */
    char *p = kw_t_write("nul.csv", "");
    FILE *f = fopen(p, "wb");
    fwrite("shape,config_id\0,x\n", 1, 19, f);
    fclose(f);
    knobwise_table *t = NULL;
    cr_assert_eq(knobwise_table_open(&t, p), KNOBWISE_EINPUT);
    cr_assert(strstr(knobwise_error_last(), "nul.csv:1: contains a NUL byte") != NULL, "%s",
              knobwise_error_last());
    free(p);
    /* not a regular file */
    cr_assert_eq(knobwise_table_open(&t, "/dev/null"), KNOBWISE_EINPUT);
    cr_assert(strstr(knobwise_error_last(), "not a regular file") != NULL);
}

/* A shape listed twice is named with both of its lines, however many shapes
 * the file has. The check compared each name with every earlier one: 200,000
 * rows (8 MB, files knobwise writes are read up to 512 MiB) took minutes of
 * CPU to open, so the timeout fails the old binary (a hang guard, not a
 * figure). */
Test(lib, many_shapes_open_and_a_late_duplicate_is_named)
{
    KW_TL_HANG_GUARD(60);
    enum { N = 200000 };
    char *csv = malloc((size_t)N * 40 + 256), *w = csv;
    w += sprintf(w, "shape,config_id,borrowed_from,k\n");
    for (int i = 0; i < N; i++)
        w += sprintf(w, "s%07d,0123456789abcdef,,%d\n", i, i % 7);
    knobwise_table *t = kw_t_open_text("many.csv", csv);
    cr_assert_eq(knobwise_table_count(t), N);
    const knobwise_entry *e = NULL;
    cr_assert_eq(knobwise_table_find(&e, t, "s0123456"), 0);
    char want[16];
    snprintf(want, sizeof want, "%d", 123456 % 7);
    cr_assert_str_eq(kw_t_val(knobwise_entry_config(e), "k"), want);
    knobwise_table_free(t);
    /* the header is line 1, shape s0000001 line 3, the repeat line N + 2 */
    sprintf(w, "s0000001,0123456789abcdef,,1\n");
    snprintf(want, sizeof want, ":%d:", N + 2);
    kw_t_damaged("many_dup.csv", csv, want);
    cr_assert(strstr(knobwise_error_last(), "shape 's0000001' listed twice (first at line 3)"),
              "%s", knobwise_error_last());
    free(csv);
    /* results.xml: the second shape renamed as the first (its <shape> is at line 20) */
    char *xml = strdup(kw_t_results_xml);
    char *n2 = strstr(xml, "pre_b8_s2048_c4");
    memcpy(n2, "pre_b1_s128_c1\"", strlen("pre_b1_s128_c1\""));
    memset(n2 + strlen("pre_b1_s128_c1\""), ' ', 1); /* the name is one byte longer */
    kw_t_damaged("dup.xml", xml, ":20: shape 'pre_b1_s128_c1' listed twice (first at line 5)");
    free(xml);
}

/* Peak resident set (KiB) of a child that opens path and checks what
 * check_row says (-1 when it could not). */
static long kw_t_child_peak(const char *path, int rows)
{
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        knobwise_table *t = NULL;
        int ok = knobwise_table_open(&t, path) == 0 && knobwise_table_count(t) == rows;
        /* rows 0 and 97 have knob 3 at 2 (r % 97 == 0), row 98 at 1 */
        for (int r = 0; ok && r < rows && r < 99; r += 97) {
            const knobwise_config *c = knobwise_entry_config(knobwise_table_entry(t, r));
            ok = strcmp(knobwise_config_value(c, 3), "2") == 0;
        }
        if (ok && rows > 98)
            ok = strcmp(knobwise_config_value(knobwise_entry_config(knobwise_table_entry(t, 98)),
                                              3), "1") == 0;
        knobwise_table_free(t);
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    struct rusage ru;
    cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? ru.ru_maxrss : -1;
}

/* A mappings.csv of ROWS rows of K one-digit knobs (knob k of row r is 2 when
 * r % 97 == 0 and k % 3 == 0, else 1); its size into *len. */
static char *kw_t_wide(const char *name, int rows, size_t *len)
{
    enum { K = 1000 };
    size_t cap = (size_t)K * 12 + 64 + (size_t)rows * (2 * K + 40), n = 0;
    char *csv = malloc(cap);
    n += (size_t)sprintf(csv + n, "shape,config_id,borrowed_from");
    for (int k = 0; k < K; k++)
        n += (size_t)sprintf(csv + n, ",k%d", k);
    n += (size_t)sprintf(csv + n, "\n");
    for (int r = 0; r < rows; r++) {
        n += (size_t)sprintf(csv + n, "s%d,0123456789abcdef,", r);
        for (int k = 0; k < K; k++)
            n += (size_t)sprintf(csv + n, ",%d", (r % 97 == 0 && k % 3 == 0) ? 2 : 1);
        n += (size_t)sprintf(csv + n, "\n");
    }
    char *p = kw_t_write(name, csv);
    free(csv);
    *len = n;
    return p;
}

/* A table of many one-byte knob values is held in a few times the file's size:
 * each value's string was rounded up to 16 bytes and copied per row, so a
 * mappings.csv took 21 times its size (40 MB, 1000 knobs x 20,000 rows: 843 MB
 * peak), and files knobwise writes are read up to 512 MiB. Each table is opened
 * in a child whose peak resident set wait4 reports; a one-row table's peak is
 * the baseline (the process, the library; larger under a sanitizer). 10 MB:
 * about 5 times its size now (the file, and a pointer per value), 21 on main;
 * the bound is 8. */
Test(lib, a_wide_table_is_held_in_a_few_times_its_size)
{
    size_t small_len, len;
    char *small = kw_t_wide("one_row.csv", 1, &small_len), *p = kw_t_wide("wide.csv", 5000, &len);
    long base = kw_t_child_peak(small, 1), peak = kw_t_child_peak(p, 5000);
    cr_assert(base > 0 && peak > 0, "a child could not read the tables back");
    double ratio = (double)(peak - base) * 1024.0 / (double)len;
    cr_expect(ratio < 8.0, "peak %ld KiB (%ld KiB for one row) for a %zu-byte table: %.1f times "
              "its size", peak, base, len, ratio);
    free(small);
    free(p);
}

Test(lib, bad_requests)
{
    knobwise_table *t = kw_t_open_text("results.xml", kw_t_results_xml);
    knobwise_match m;
    knobwise_shape q = {KNOBWISE_PREFILL, 0, 128, 1};
    cr_assert_eq(knobwise_table_lookup(&m, t, &q, 0), KNOBWISE_EINPUT);
    knobwise_shape q2 = {7, 1, 128, 1};
    cr_assert_eq(knobwise_table_lookup(&m, t, &q2, 0), KNOBWISE_EINPUT);
    cr_assert_eq(knobwise_table_lookup(&m, t, NULL, 0), KNOBWISE_EINPUT);
    cr_assert_eq(knobwise_table_knob_index(t, "nope"), KNOBWISE_ENOTFOUND);
    cr_assert_null(knobwise_table_entry(t, 3));
    cr_assert_null(knobwise_table_entry(t, -1));
    /* a NULL output is an error, as for every getter (get_long wrote through it:
     * SIGSEGV on main) */
    const knobwise_config *c = knobwise_entry_config(knobwise_table_entry(t, 0));
    cr_assert_eq(knobwise_config_get_long(NULL, c, "g.tile_m"), KNOBWISE_EINPUT);
    cr_assert(strstr(knobwise_error_last(), "NULL") != NULL, "%s", knobwise_error_last());
    long v = 0;
    cr_assert_eq(knobwise_config_get_long(&v, c, NULL), KNOBWISE_EINPUT);
    cr_assert_eq(knobwise_config_get_long(&v, NULL, "g.tile_m"), KNOBWISE_EINPUT);
    cr_assert_eq(knobwise_config_get_long(&v, c, "g.tile_m"), 0);
    cr_assert_eq(v, 64); /* the fixture's first shape: g.tile_m 64 */
    knobwise_table_free(t);
}

/* Two threads look up the same requests at once: every answer equals the
 * one-thread answer (the table is read-only). */
typedef struct kw_t_job {
    const knobwise_table *t;
    int bad;
} kw_t_job;

static const knobwise_shape kw_t_reqs[] = {
    {KNOBWISE_PREFILL, 2, 256, 1}, {KNOBWISE_PREFILL, 8, 2048, 4}, {KNOBWISE_DECODE, 4, 1024, 2},
    {KNOBWISE_DECODE, 64, 8192, 16}, {KNOBWISE_PREFILL, 4, 1024, 4}};
#define KW_T_NREQ (int)(sizeof kw_t_reqs / sizeof kw_t_reqs[0])
static const knobwise_entry *kw_t_want[KW_T_NREQ];

static void *kw_t_worker(void *arg)
{
    kw_t_job *j = arg;
    for (int it = 0; it < 20000; it++) {
        knobwise_match m;
        int i = it % KW_T_NREQ;
        if (knobwise_table_lookup(&m, j->t, &kw_t_reqs[i], 0) != 0 || m.entry != kw_t_want[i])
            j->bad++;
    }
    return NULL;
}

Test(lib, concurrent_reads_agree)
{
    knobwise_table *t = kw_t_open_text("results.xml", kw_t_results_xml);
    for (int i = 0; i < KW_T_NREQ; i++) {
        knobwise_match m;
        cr_assert_eq(knobwise_table_lookup(&m, t, &kw_t_reqs[i], 0), 0);
        kw_t_want[i] = m.entry;
    }
    pthread_t th[2];
    kw_t_job jobs[2] = {{t, 0}, {t, 0}};
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, kw_t_worker, &jobs[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(jobs[0].bad + jobs[1].bad, 0);
    knobwise_table_free(t);
}

/* knobwise_config_get_long reads a value as the rest of knobwise reads a
 * person's number (kw_num_long): strtol took " 64" and "\t64" (leading
 * blanks) as 64 on main, so a value the space never spelled passed as an
 * integer. Trailing junk, hexadecimal, a fraction, an exponent and a value
 * past long are refused too; "-3" and "+5" are integers. The message names
 * the file and the row. */
Test(lib, get_long_takes_decimal_digits_only)
{
    static const struct {
        const char *value;
        int ok;
        long want;
    } cases[] = {{"64", 1, 64},       {"-3", 1, -3},    {"+5", 1, 5},     {" 64", 0, 0},
                 {"\t64", 0, 0},      {"64 ", 0, 0},    {"64x", 0, 0},    {"0x40", 0, 0},
                 {"6.4e1", 0, 0},     {"64.0", 0, 0},   {"-", 0, 0},
                 {"99999999999999999999", 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char csv[256];
        snprintf(csv, sizeof csv, "shape,config_id,borrowed_from,g.tile_m\n"
                                  "a,0123456789abcdef,,\"%s\"\n", cases[i].value);
        knobwise_table *t = kw_t_open_text("v.csv", csv);
        const knobwise_entry *e = NULL;
        cr_assert_eq(knobwise_table_find(&e, t, "a"), 0);
        long v = 12345;
        int rc = knobwise_config_get_long(&v, knobwise_entry_config(e), "g.tile_m");
        if (cases[i].ok) {
            cr_assert_eq(rc, 0, "'%s': %s", cases[i].value, knobwise_error_last());
            cr_assert_eq(v, cases[i].want, "'%s'", cases[i].value);
        } else {
            cr_assert_eq(rc, KNOBWISE_EINPUT, "'%s' read as %ld", cases[i].value, v);
            cr_assert_eq(v, 12345, "'%s': the output is left alone", cases[i].value);
            cr_assert(strstr(knobwise_error_last(), "v.csv:2: knob 'g.tile_m'") != NULL, "%s",
                      knobwise_error_last());
        }
        knobwise_table_free(t);
    }
}

/* The fixture results.xml with its root start tag's attributes extended by
 * root_extra and, when stop is given, that shape marked search="stopped". */
static char *kw_t_results_with(const char *root_extra, const char *stop)
{
    const char *x = kw_t_results_xml;
    size_t n = strlen(x) + strlen(root_extra) + 64;
    char *s = malloc(n);
    const char *owner = strstr(x, "owner=\"team-a\"") + strlen("owner=\"team-a\"");
    snprintf(s, n, "%.*s%s%s", (int)(owner - x), x, root_extra, owner);
    if (stop) {
        char at[128];
        snprintf(at, sizeof at, "<shape name=\"%s\"", stop);
        char *p = strstr(s, at);
        cr_assert(p != NULL);
        char *t = malloc(n);
        p += strlen(at);
        snprintf(t, n, "%.*s search=\"stopped\"%s", (int)(p - s), s, p);
        free(s);
        s = t;
    }
    return s;
}

/* A results.xml read in its run folder whose RUN/evidence (format 2) has no
 * end record: the evidence phase was cut (here between results.xml and the
 * end record, as a kill there leaves it), so every entry says no_evidence,
 * as `knobwise recommend` warns; the same file read outside the run folder
 * says what it holds; the end record written back (a resume), nothing. main's
 * library read results.xml's evidence= alone: no warning. */
Test(lib, a_results_xml_beside_an_evidence_file_without_its_end_record_says_no_evidence)
{
    char *d = kw_tl_tmpdir("kwtest"), run[4200], p[4300], copy[4300], err[4096];
    snprintf(run, sizeof run, "%s/run", d);
    cr_assert_eq(kw_tl_tune_evidence_cut(run, err, sizeof err), 0, "%s", err);
    kw_tl_proc r;
    snprintf(p, sizeof p, "%s/results.xml", run);
    char *xml = kw_tl_slurp(p);
    snprintf(copy, sizeof copy, "%s/results.xml", d); /* outside the run folder */
    cr_assert_eq(kw_tl_write(copy, xml), 0);
    free(xml);
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 2) { /* the end record written back */
            r = kw_tl_run(NULL, kw_tl_bin(), "tune", "--resume", run, "--quiet", NULL);
            cr_assert_eq(r.status, 0, "%s", r.err);
            kw_tl_free(&r);
        }
        knobwise_table *t = NULL;
        cr_assert_eq(knobwise_table_open(&t, pass == 1 ? copy : run), 0, "%s",
                     knobwise_error_last());
        cr_assert_gt(knobwise_table_count(t), 0);
        for (int i = 0; i < knobwise_table_count(t); i++) {
            const char *w = knobwise_entry_warnings(knobwise_table_entry(t, i));
            cr_assert_eq(strstr(w, "no_evidence") != NULL, pass == 0,
                         "pass %d, entry %d: warnings '%s'", pass, i, w);
        }
        knobwise_table_free(t);
    }
    kw_tl_rmrf(d);
}

/* A mappings.csv of the fixture run as `recommend --all` writes it: dec_none,
 * where nothing passes the guards, is its baseline row flagged fails_guards. */
static const char *kw_t_mappings_csv =
    "shape,config_id,borrowed_from,g.tile_m,fuse_attention,phase,batch,seq,kv_len,streams,"
    "p95_us,p99_us,borrow_warnings,figures_from,file_rows\n"
    "pre_b1_s128_c1,00000000000000a1,,64,flash,prefill,1,128,0,1,100.5,120.25,,model,4\n"
    "pre_b8_s2048_c4,00000000000000c2,,256,qk_softmax,prefill,8,2048,0,4,2000,2500,,model,4\n"
    "dec_b4_kv1024_c2,00000000000000d1,,32,flash,decode,4,0,1024,2,50,60,,model,4\n"
    "dec_none,00000000000000c0,,128,none,decode,1,0,64,1,70,80,fails_guards,model,4\n";

/* A shape with nothing to deploy gets one answer from both files a run gives
 * a runtime: results.xml lists it with no configuration, mappings.csv as its
 * baseline row flagged fails_guards. On main the CSV served that baseline
 * (return 0) and borrowed it for the shapes next to it, where results.xml
 * refused the shape and borrowed another's winner. */
Test(lib, nothing_to_deploy_is_the_same_answer_from_results_xml_and_mappings_csv)
{
    knobwise_table *x = kw_t_open_text("results.xml", kw_t_results_xml);
    knobwise_table *c = kw_t_open_text("mappings.csv", kw_t_mappings_csv);
    cr_assert_eq(knobwise_table_count(c), knobwise_table_count(x), "csv %d entries, xml %d",
                 knobwise_table_count(c), knobwise_table_count(x));
    knobwise_shape q = {KNOBWISE_DECODE, 1, 64, 1};
    knobwise_shape near = {KNOBWISE_DECODE, 1, 128, 1};
    knobwise_match mx, mc;
    const knobwise_entry *e = NULL;
    cr_assert_eq(knobwise_table_lookup(&mc, c, &q, 0), KNOBWISE_ENOTFOUND, "served %s",
                 mc.entry ? knobwise_entry_name(mc.entry) : "-");
    cr_assert(strstr(knobwise_error_last(), "mappings.csv:5: shape 'dec_none'") &&
              strstr(knobwise_error_last(), "nothing to deploy"), "%s", knobwise_error_last());
    cr_assert_eq(knobwise_table_find(&e, c, "dec_none"), KNOBWISE_ENOTFOUND);
    cr_assert_null(e);
    cr_assert_eq(knobwise_table_lookup(&mx, x, &q, 0), KNOBWISE_ENOTFOUND);
    /* next to it, both borrow the same tuned winner (not the failing baseline) */
    cr_assert_eq(knobwise_table_lookup(&mc, c, &near, 0), 0, "%s", knobwise_error_last());
    cr_assert_eq(knobwise_table_lookup(&mx, x, &near, 0), 0, "%s", knobwise_error_last());
    cr_assert_str_eq(knobwise_entry_name(mc.entry), knobwise_entry_name(mx.entry));
    cr_assert_str_eq(knobwise_entry_name(mc.entry), "dec_b4_kv1024_c2");
    knobwise_table_free(x);
    knobwise_table_free(c);
}

/* A table where every shape has nothing to deploy answers each shape as it
 * answers one such shape among others: KNOBWISE_ENOTFOUND naming the file,
 * the shape's line and why, for its name and its dimensions; a shape it does
 * not list is ENOTFOUND too (nothing to borrow). From both files a run gives a
 * runtime. main refused to open either (KNOBWISE_EINPUT, "the run recommends
 * no configuration for any shape"), so a runtime could not tell a table of
 * such shapes from a damaged file. A file with no shape at all is still no
 * table. */
Test(lib, a_table_where_every_shape_has_nothing_to_deploy_answers_per_shape)
{
    const char *csv =
        "shape,config_id,borrowed_from,g.tile_m,fuse_attention,phase,batch,seq,kv_len,streams,"
        "p95_us,p99_us,borrow_warnings,figures_from,file_rows\n"
        "pre_x,00000000000000c0,baseline,128,none,prefill,1,128,0,1,70,80,fails_guards,model,2\n"
        "dec_none,00000000000000c0,,128,none,decode,1,0,64,1,70,80,fails_guards,model,2\n";
    /* results.xml: the fixture with only its dec_none shape */
    const char *x0 = strstr(kw_t_results_xml, "  <shape name=\"pre_b1_s128_c1\"");
    const char *x1 = strstr(kw_t_results_xml, "  <shape name=\"dec_none\"");
    cr_assert(x0 && x1);
    size_t n = strlen(kw_t_results_xml);
    char *xml = malloc(n + 1);
    cr_assert_not_null(xml);
    snprintf(xml, n + 1, "%.*s%s", (int)(x0 - kw_t_results_xml), kw_t_results_xml, x1);
    long xline = 1;
    for (const char *c = xml; c < strstr(xml, "<shape name=\"dec_none\""); c++)
        xline += *c == '\n';
    struct {
        const char *name, *text;
        long line;
    } files[2] = {{"mappings.csv", csv, 3}, {"results.xml", xml, xline}};
    for (int f = 0; f < 2; f++) {
        char *p = kw_t_write(files[f].name, files[f].text);
        knobwise_table *t = NULL;
        cr_assert_eq(knobwise_table_open(&t, p), 0, "%s: %s", files[f].name, knobwise_error_last());
        cr_assert_eq(knobwise_table_count(t), 0);
        char want[160];
        snprintf(want, sizeof want, "%s:%ld: shape 'dec_none'", p, files[f].line);
        const knobwise_entry *e = NULL;
        cr_assert_eq(knobwise_table_find(&e, t, "dec_none"), KNOBWISE_ENOTFOUND);
        cr_assert_null(e);
        cr_assert(strstr(knobwise_error_last(), want) &&
                  strstr(knobwise_error_last(), "nothing to deploy"), "%s: %s", files[f].name,
                  knobwise_error_last());
        knobwise_shape q = {KNOBWISE_DECODE, 1, 64, 1};
        knobwise_match m;
        cr_assert_eq(knobwise_table_lookup(&m, t, &q, 0), KNOBWISE_ENOTFOUND, "%s: %s",
                     files[f].name, knobwise_error_last());
        cr_assert(strstr(knobwise_error_last(), want), "%s", knobwise_error_last());
        cr_assert_null(m.entry);
        knobwise_shape other = {KNOBWISE_DECODE, 8, 512, 2};
        cr_assert_eq(knobwise_table_lookup(&m, t, &other, KNOBWISE_LOOKUP_CROSS_PHASE),
                     KNOBWISE_ENOTFOUND, "%s", files[f].name);
        cr_assert(strstr(knobwise_error_last(), "nothing to borrow"), "%s", knobwise_error_last());
        cr_assert_null(m.entry);
        cr_assert_eq(knobwise_table_find(&e, t, "pre_b1_s128_c1"), KNOBWISE_ENOTFOUND);
        knobwise_table_free(t);
        free(p);
    }
    free(xml);
    /* no shape at all: no table */
    char *p = kw_t_write_raw("empty.xml", "<?xml version=\"1.0\"?>\n<results format=\"1\" "
                             "knobwise=\"0.1.0\" run=\"r\" space=\"s\" strategy=\"ofat\" seed=\"1\" "
                             "budget=\"1\" metric=\"p95\" owner=\"o\">\n<inputs space=\"\" "
                             "accelerator=\"\" workload=\"\"/>\n</results>\n");
    knobwise_table *t = NULL;
    cr_assert_eq(knobwise_table_open(&t, p), KNOBWISE_EINPUT);
    cr_assert_null(t);
    free(p);
}

/* A shape listed twice is refused when one of the listings has nothing to
 * deploy, as two served listings are: main compared only served rows, so a
 * fails_guards row beside a served row of the same name opened, and the name
 * was served by find and refused by the exact lookup of its dimensions. */
Test(lib, a_shape_listed_twice_is_refused_when_one_listing_has_nothing_to_deploy)
{
    char *p = kw_t_write("twice.csv",
        "shape,config_id,borrowed_from,g.tile_m,fuse_attention,phase,batch,seq,kv_len,streams,"
        "p95_us,p99_us,borrow_warnings,figures_from,file_rows\n"
        "dec_a,00000000000000d1,,32,flash,decode,4,0,1024,2,50,60,,model,3\n"
        "pre_b,00000000000000a1,,64,flash,prefill,1,128,0,1,100.5,120.25,,model,3\n"
        "dec_a,00000000000000c0,,128,none,decode,1,0,64,1,70,80,fails_guards,model,3\n");
    knobwise_table *t = NULL;
    cr_assert_eq(knobwise_table_open(&t, p), KNOBWISE_EINPUT, "opened with %d entries",
                 knobwise_table_count(t));
    char want[160];
    snprintf(want, sizeof want, "%s:4: shape 'dec_a' listed twice (first at line 2)", p);
    cr_assert(strstr(knobwise_error_last(), want), "%s", knobwise_error_last());
    free(p);
}

/* A mappings.csv that is not UTF-8 text (a shape name saved in Latin-1, an
 * overlong form, a UTF-16 surrogate, a code point above U+10FFFF) is refused
 * at its line, as libxml2 refuses such a results.xml; a UTF-8 name opens.
 * main opened them, and export wrote the bytes into its JSON, which was then
 * no JSON (RFC 8259 section 8.1; Python's json.load failed on it). */
Test(lib, a_mappings_csv_that_is_not_utf8_text_is_refused_at_its_line)
{
    static const char *const bad[] = {"pr\xe9", "pr\xc0\xaf", "pr\xed\xa0\x80", "pr\xf4\x90\x80\x80",
                                      "pr\xc3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char csv[512];
        snprintf(csv, sizeof csv,
                 "shape,config_id,borrowed_from,g.tile_m,phase,batch,seq,kv_len,streams,p95_us,"
                 "p99_us,borrow_warnings\n"
                 "a,0123456789abcdef,,64,prefill,1,8,0,1,,,\n"
                 "%s,0123456789abcdef,,64,prefill,2,8,0,1,,,\n", bad[i]);
        char *p = kw_t_write("enc.csv", csv);
        knobwise_table *t = NULL;
        cr_assert_eq(knobwise_table_open(&t, p), KNOBWISE_EINPUT, "case %zu opened", i);
        char want[128];
        snprintf(want, sizeof want, "enc.csv:3: byte 0x%02X is not UTF-8 text",
                 (unsigned char)bad[i][2]);
        cr_assert(strstr(knobwise_error_last(), want), "case %zu: %s", i, knobwise_error_last());
        free(p);
    }
    knobwise_table *t = kw_t_open_text("utf8.csv",
        "shape,config_id,borrowed_from,g.tile_m,phase,batch,seq,kv_len,streams,p95_us,p99_us,"
        "borrow_warnings\n"
        "pr\xc3\xa9_\xf0\x9f\x99\x82,0123456789abcdef,,64,prefill,1,8,0,1,,,\n");
    const knobwise_entry *e = NULL;
    cr_assert_eq(knobwise_table_find(&e, t, "pr\xc3\xa9_\xf0\x9f\x99\x82"), 0);
    knobwise_table_free(t);
}

/* What a stopped run did not finish reaches a runtime (main had no way to
 * tell: borrow_warnings was not read, results.xml did not say): mappings.csv's
 * borrow_warnings tokens as written, and the same tokens from a results.xml
 * whose root says evidence="none" and whose shape says search="stopped".
 * A borrow_warnings that is not ';'-joined tokens is refused, file and line. */
Test(lib, warnings_say_what_a_stopped_run_did_not_finish)
{
    knobwise_table *t = kw_t_open_text("m.csv",
        "shape,config_id,borrowed_from,g.tile_m,phase,batch,seq,kv_len,streams,p95_us,p99_us,"
        "borrow_warnings\n"
        "a,0123456789abcdef,,64,prefill,1,8,0,1,,,search_stopped;no_evidence\n"
        "b,0123456789abcdef,a,64,prefill,4,8,0,1,,,extrapolates;no_evidence\n"
        "c,0123456789abcdef,,64,prefill,16,8,0,1,,,\n");
    const knobwise_entry *e = NULL;
    cr_assert_eq(knobwise_table_find(&e, t, "a"), 0);
    cr_assert_str_eq(knobwise_entry_warnings(e), "search_stopped;no_evidence");
    cr_assert_eq(knobwise_table_find(&e, t, "b"), 0);
    cr_assert_str_eq(knobwise_entry_warnings(e), "extrapolates;no_evidence");
    cr_assert_eq(knobwise_table_find(&e, t, "c"), 0);
    cr_assert_str_eq(knobwise_entry_warnings(e), "");
    cr_assert_null(knobwise_entry_warnings(NULL));
    knobwise_table_free(t);

    char *x = kw_t_results_with(" evidence=\"none\"", "pre_b8_s2048_c4");
    t = kw_t_open_text("stopped.xml", x);
    free(x);
    cr_assert_eq(knobwise_table_find(&e, t, "pre_b8_s2048_c4"), 0);
    cr_assert_str_eq(knobwise_entry_warnings(e), "search_stopped;no_evidence");
    cr_assert_eq(knobwise_table_find(&e, t, "pre_b1_s128_c1"), 0);
    cr_assert_str_eq(knobwise_entry_warnings(e), "no_evidence");
    knobwise_table_free(t);
    t = kw_t_open_text("whole.xml", kw_t_results_xml);
    cr_assert_eq(knobwise_table_find(&e, t, "pre_b1_s128_c1"), 0);
    cr_assert_str_eq(knobwise_entry_warnings(e), "", "a finished run's entry has no warning");
    knobwise_table_free(t);

    static const char *bad[] = {"Search_stopped", "a;", ";a", "a;;b", "a b", "a,b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char csv[512];
        snprintf(csv, sizeof csv, "shape,config_id,borrowed_from,g.tile_m,phase,batch,seq,kv_len,"
                 "streams,p95_us,p99_us,borrow_warnings\n"
                 "a,0123456789abcdef,,64,prefill,1,8,0,1,,,\"%s\"\n", bad[i]);
        char *p = kw_t_write("bad.csv", csv);
        knobwise_table *b = NULL;
        cr_assert_eq(knobwise_table_open(&b, p), KNOBWISE_EINPUT, "'%s' accepted", bad[i]);
        cr_assert(strstr(knobwise_error_last(), "bad.csv:2: borrow_warnings is") != NULL, "%s",
                  knobwise_error_last());
        free(p);
    }
}

/* A shape whose final re-check could not rank its recommendation apart from
 * its rival (results.xml <shape ranking="unresolved">) is flagged
 * ranking_unresolved from a results.xml as from the mappings.csv that
 * `recommend --all` writes for the same run, after the stopped-run tokens in
 * recommend's order. Main's library read the token from mappings.csv only, so
 * the run folder, its results.xml and `export` of either answered "" where
 * the run's mappings.csv warned. */
Test(lib, an_unresolved_ranking_is_a_warning_from_results_xml_too)
{
    static const char *const attr = " ranking=\"unresolved\" ranking_note=\"not resolved\"";
    struct { const char *root, *stop, *want_b8, *want_b1; } c[] = {
        {"", NULL, "ranking_unresolved", ""},
        {" evidence=\"none\"", "pre_b8_s2048_c4", "search_stopped;no_evidence;ranking_unresolved",
         "no_evidence"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char *x = kw_t_results_with(c[i].root, c[i].stop);
        const char *at = strstr(x, "<shape name=\"pre_b8_s2048_c4\"");
        cr_assert_not_null(at);
        at += strlen("<shape name=\"pre_b8_s2048_c4\"");
        size_t n = strlen(x) + strlen(attr) + 1;
        char *y = malloc(n);
        snprintf(y, n, "%.*s%s%s", (int)(at - x), x, attr, at);
        knobwise_table *t = kw_t_open_text("ranked.xml", y);
        const knobwise_entry *e = NULL;
        cr_assert_eq(knobwise_table_find(&e, t, "pre_b8_s2048_c4"), 0);
        cr_assert_str_eq(knobwise_entry_warnings(e), c[i].want_b8, "case %zu", i);
        cr_assert_eq(knobwise_table_find(&e, t, "pre_b1_s128_c1"), 0);
        cr_assert_str_eq(knobwise_entry_warnings(e), c[i].want_b1, "case %zu", i);
        knobwise_table_free(t);
        free(y);
        free(x);
    }
}

/* The claim's disproof criteria reach a runtime (DESIGN: every recommended
 * configuration carries them; main's library did not read them). */
Test(lib, disproof_criteria_are_read_from_results_xml)
{
    knobwise_table *t = kw_t_open_text("results.xml", kw_t_results_xml);
    const knobwise_entry *e = NULL;
    cr_assert_eq(knobwise_table_find(&e, t, "pre_b1_s128_c1"), 0);
    cr_assert_eq(knobwise_entry_disproof_count(e), 1);
    cr_assert_str_eq(knobwise_entry_disproof(e, 0), "c");
    cr_assert_null(knobwise_entry_disproof(e, 1));
    cr_assert_null(knobwise_entry_disproof(e, -1));
    cr_assert_eq(knobwise_entry_disproof_count(NULL), 0);
    knobwise_table_free(t);
    t = kw_t_open_text("mappings.csv", kw_t_mappings_csv);
    cr_assert_eq(knobwise_table_find(&e, t, "pre_b1_s128_c1"), 0);
    cr_assert_eq(knobwise_entry_disproof_count(e), 0, "mappings.csv carries none");
    knobwise_table_free(t);
}

/* A results.xml of a format this library does not know is refused with the
 * formats named (main read format="2" as if it were 1). */
Test(lib, a_results_format_it_does_not_know_is_refused)
{
    const char *x = kw_t_results_xml;
    const char *f = strstr(x, "format=\"1\"");
    char *s = malloc(strlen(x) + 1);
    sprintf(s, "%.*sformat=\"2\"%s", (int)(f - x), x, f + strlen("format=\"1\""));
    char *p = kw_t_write("v2.xml", s);
    knobwise_table *t = NULL;
    cr_assert_eq(knobwise_table_open(&t, p), KNOBWISE_EINPUT);
    cr_assert_null(t);
    cr_assert(strstr(knobwise_error_last(), "v2.xml:2: results format 2: this libknobwise") &&
              strstr(knobwise_error_last(), "reads format 1 only"), "%s", knobwise_error_last());
    free(p);
    free(s);
}

/* A configuration whose config_id is not the id of its knob values (FNV-1a
 * over "name=value;", the search's rule) is refused at open, file and line:
 * a value edited after the run would be deployed as if the run had evaluated
 * it (main's library served it; export and verify refused the same file).
 * Each place a configuration's values are read: mappings.csv's row, a
 * results.xml recommendation, a roll-back target's own knobs. */
Test(lib, a_config_id_that_is_not_its_values_id_is_refused)
{
    /* the row as recommend writes it opens; one value changed, it is refused */
    char csv[512];
    const char *names[] = {"g.tile_m"}, *v64[] = {"64"};
    char id[17];
    kw_t_hex(id, 1, names, v64);
    snprintf(csv, sizeof csv, "shape,config_id,borrowed_from,g.tile_m\na,%s,,64\n", id);
    char *p = kw_t_write_raw("ok.csv", csv);
    knobwise_table *t = NULL;
    cr_assert_eq(knobwise_table_open(&t, p), 0, "%s", knobwise_error_last());
    knobwise_table_free(t);
    free(p);
    snprintf(csv, sizeof csv, "shape,config_id,borrowed_from,g.tile_m\na,%s,,128\n", id);
    p = kw_t_write_raw("edited.csv", csv);
    t = (knobwise_table *)&t;
    cr_assert_eq(knobwise_table_open(&t, p), KNOBWISE_EINPUT);
    cr_assert_null(t);
    char want[256];
    snprintf(want, sizeof want, "edited.csv:2: config_id %s is not the id of the row's knob values",
             id);
    cr_assert(strstr(knobwise_error_last(), want), "%s", knobwise_error_last());
    free(p);

    /* results.xml: the recommendation's tile_m edited 256 -> 512, and
     * separately the first parent target's 128 -> 512 */
    char *fixed = strdup(kw_t_results_xml);
    kw_t_fix_xml(fixed);
    static const struct {
        const char *from, *to;
        long line;
    } edits[] = {{"<knob name=\"g.tile_m\" value=\"256\"/><knob name=\"fuse_attention\" "
                  "value=\"qk_softmax\"/>",
                  "<knob name=\"g.tile_m\" value=\"512\"/><knob name=\"fuse_attention\" "
                  "value=\"qk_softmax\"/>", 0},
                 {"<target kind=\"parent\" id=\"", NULL, 0}};
    for (int i = 0; i < 2; i++) {
        char *x = strdup(fixed);
        char *at = strstr(x, edits[i].from);
        cr_assert_not_null(at);
        if (edits[i].to) {
            memcpy(at, edits[i].to, strlen(edits[i].to));
        } else { /* the first parent target's tile_m 128 -> 512 */
            at = strstr(at, "value=\"128\"");
            cr_assert_not_null(at);
            memcpy(at, "value=\"512\"", strlen("value=\"512\""));
        }
        /* the line of the element the values are children of */
        const char *el = at;
        while (el > x && strncmp(el, "<config ", 8) && strncmp(el, "<target ", 8))
            el--;
        long line = 1;
        for (const char *c = x; c < el; c++)
            line += *c == '\n';
        p = kw_t_write_raw("edited.xml", x);
        t = NULL;
        cr_assert_eq(knobwise_table_open(&t, p), KNOBWISE_EINPUT, "edit %d accepted", i);
        snprintf(want, sizeof want, "edited.xml:%ld: configuration ", line);
        cr_assert(strstr(knobwise_error_last(), want) &&
                  strstr(knobwise_error_last(), "its knob values are not those of its id"),
                  "edit %d: %s", i, knobwise_error_last());
        free(p);
        free(x);
    }
    free(fixed);
}
