/* cli_export.c - `knobwise export RUN --format json|c-header [-o FILE] [--force]`:
 * a run's recommendations as tuned configurations a kernel library, a
 * compiler or a runtime takes in.
 *
 *   json      one object per tuned shape: its dimensions, the configuration
 *             to deploy (every knob, and per GEMM group the tile sizes,
 *             pipeline stages and split-K a Triton autotuner config or a
 *             CUTLASS tile description is generated from), the predicted
 *             p95/p99, the guard thresholds, and the roll-back
 *             configurations beside it. Schema: results/export.schema.json
 *             (installed under $(pkgdatadir)); README "Exports".
 *   c-header  the same table as static const data for runtimes that embed
 *             it (no library, no file to read at start).
 *
 * The run is read through libknobwise's own reader (src/lib/knobwise.c, in
 * libkwtable.a): what an export says is what the library answers, by
 * construction. Before anything is written, every configuration is checked
 * (kw_export_check_configs): its knob values must be values of the run's
 * space when the file is in a run folder, and its config_id the id of its
 * values (the file carries no domains; an edited value breaks the id).
 * Output goes to stdout, or with -o to FILE through a temp file + fsync +
 * rename (kw_results_commit). -o is checked by the one check of every -o
 * (kw_runfolder_output): an existing file only with --force, never anything
 * that is not a regular file, a run folder's own file or a run's input.
 * Every check happens before anything is written.
 *
 * Mapping of knobs to kernel-library terms (the knob catalogue, src/model/kw_catalogue.c):
 * <group>.tile_m/tile_n/tile_k -> block_m/block_n/block_k (Triton's BLOCK_*
 * meta-parameters; CUTLASS's threadblock GemmShape<M,N,K>); <group>.split_k ->
 * split_k (CUTLASS split_k_slices); <group>.double_buffer on/off -> num_stages
 * 2/1 (a double-buffered main loop is a two-stage software pipeline: Triton
 * triton.Config num_stages, https://triton-lang.org/main/python-api/generated/
 * triton.Config.html; CUTLASS's Stages template argument). num_warps is not
 * emitted: no shipped accelerator file describes warps, so a generator keeps
 * its own choice.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "knobwise.h"
#include "kw_cli.h"
#include "kw_knobwise.h"
#include "kw_results.h"
#include "kw_rundir.h"
#include "kw_runfolder.h"
#include "kw_sbuf.h"

/* Version of the export formats (the JSON's format_version, the header's macro). */
#define KW_EXPORT_FORMAT_VERSION 1
/* config ids: a 64-bit hash in hex (kw_knobs_cand_id) */
#define KW_EXPORT_ID_HEX 16
/* num_stages for double_buffer off / on (see the file comment). */
#define KW_EXPORT_STAGES_SINGLE 1
#define KW_EXPORT_STAGES_DOUBLE 2
static void kw_export_help(void)
{
    printf("usage: knobwise export RUN --format json|c-header [-o FILE] [--force]\n\n"
           "The run's recommendations as tuned configurations (RUN is a run folder, its\n"
           "results.xml, or a mappings.csv):\n"
           "  json      one object per shape: dimensions, every knob, per GEMM group the\n"
           "            tile sizes, stages and split-K, predicted p95/p99, guard thresholds\n"
           "            and the roll-back configurations (schema: export.schema.json)\n"
           "  c-header  the same table as static C data for runtimes that embed it\n"
           "Writes to stdout, or to FILE with -o (an existing FILE only with --force; a\n"
           "file of the run folder itself never).\n");
}

/* ---- value formatting ------------------------------------------------------------ */

/* A knob value that is a decimal integer (tile sizes, split_k, max_batch). */
static int kw_export_int(long *out, const char *v)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || (v[0] == '0' && v[1] != '\0'))
        return 0;
    *out = x;
    return 1;
}

/* Shortest %g that reads back as the same double (finite v). */
static void kw_export_double(kw_sbuf *b, double v)
{
    char buf[64];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    kw_sbuf_puts(b, buf);
}

static void kw_export_json_str(kw_sbuf *b, const char *s)
{
    kw_sbuf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            kw_sbuf_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            kw_sbuf_printf(b, "\\u%04x", *p);
        else
            kw_sbuf_putn(b, (const char *)p, 1);
    }
    kw_sbuf_puts(b, "\"");
}

static void kw_export_c_str(kw_sbuf *b, const char *s)
{
    if (!s) {
        kw_sbuf_puts(b, "NULL");
        return;
    }
    kw_sbuf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            kw_sbuf_printf(b, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f || *p == '?') /* '?': no trigraphs */
            kw_sbuf_printf(b, "\\%03o", *p);
        else
            kw_sbuf_putn(b, (const char *)p, 1);
    }
    kw_sbuf_puts(b, "\"");
}

/* ---- json --------------------------------------------------------------------------- */

/* Kernel-library fields of a knob's suffix after "<group>." (file comment). */
static const struct {
    const char *suffix, *field;
} kw_export_fields[] = {{"tile_m", "block_m"}, {"tile_n", "block_n"}, {"tile_k", "block_k"},
                        {"split_k", "split_k"}, {"double_buffer", "num_stages"},
                        {"loop_order", "loop_order"}};
#define KW_EXPORT_N_FIELDS (int)(sizeof kw_export_fields / sizeof kw_export_fields[0])

static int kw_export_field(const char *knob, size_t *group_len)
{
    const char *dot = strrchr(knob, '.');
    if (!dot || dot == knob)
        return -1;
    for (int f = 0; f < KW_EXPORT_N_FIELDS; f++)
        if (strcmp(dot + 1, kw_export_fields[f].suffix) == 0) {
            *group_len = (size_t)(dot - knob);
            return f;
        }
    return -1;
}

static void kw_export_json_kernels(kw_sbuf *b, const knobwise_table *t, const knobwise_config *c,
                                   const char *ind)
{
    int n = knobwise_table_knob_count(t), first_group = 1;
    kw_sbuf_puts(b, "[");
    for (int k = 0; k < n; k++) {
        size_t gl;
        const char *name = knobwise_table_knob_name(t, k);
        if (kw_export_field(name, &gl) < 0)
            continue;
        /* a group is written at its first knob */
        int seen = 0;
        for (int j = 0; j < k && !seen; j++) {
            size_t gj;
            const char *nj = knobwise_table_knob_name(t, j);
            seen = kw_export_field(nj, &gj) >= 0 && gj == gl && strncmp(nj, name, gl) == 0;
        }
        if (seen)
            continue;
        kw_sbuf_printf(b, "%s\n%s  {\"group\": ", first_group ? "" : ",", ind);
        first_group = 0;
        char group[256];
        snprintf(group, sizeof group, "%.*s", (int)gl, name);
        kw_export_json_str(b, group);
        for (int j = k; j < n; j++) {
            size_t gj;
            const char *nj = knobwise_table_knob_name(t, j);
            int f = kw_export_field(nj, &gj);
            if (f < 0 || gj != gl || strncmp(nj, name, gl) != 0)
                continue;
            const char *v = knobwise_config_value(c, j);
            long iv;
            kw_sbuf_printf(b, ", \"%s\": ", kw_export_fields[f].field);
            if (strcmp(kw_export_fields[f].suffix, "double_buffer") == 0)
                kw_sbuf_printf(b, "%d", strcmp(v, "on") == 0 ? KW_EXPORT_STAGES_DOUBLE
                                                             : KW_EXPORT_STAGES_SINGLE);
            else if (strcmp(kw_export_fields[f].suffix, "loop_order") != 0 && kw_export_int(&iv, v))
                kw_sbuf_printf(b, "%ld", iv);
            else
                kw_export_json_str(b, v);
        }
        kw_sbuf_puts(b, "}");
    }
    if (first_group)
        kw_sbuf_puts(b, "]");
    else
        kw_sbuf_printf(b, "\n%s]", ind);
}

static void kw_export_json_config(kw_sbuf *b, const knobwise_table *t, const knobwise_config *c,
                                  const char *ind)
{
    if (!c) {
        kw_sbuf_puts(b, "null");
        return;
    }
    kw_sbuf_printf(b, "{\n%s  \"config_id\": ", ind);
    kw_export_json_str(b, knobwise_config_id(c));
    int n = knobwise_table_knob_count(t);
    if (!knobwise_config_value(c, 0)) {
        kw_sbuf_printf(b, ",\n%s  \"knobs\": null\n%s}", ind, ind);
        return;
    }
    kw_sbuf_printf(b, ",\n%s  \"knobs\": {", ind);
    for (int k = 0; k < n; k++) {
        const char *v = knobwise_config_value(c, k);
        long iv;
        kw_sbuf_printf(b, "%s\n%s    ", k ? "," : "", ind);
        kw_export_json_str(b, knobwise_table_knob_name(t, k));
        kw_sbuf_puts(b, ": ");
        if (kw_export_int(&iv, v))
            kw_sbuf_printf(b, "%ld", iv);
        else
            kw_export_json_str(b, v);
    }
    kw_sbuf_printf(b, "\n%s  },\n%s  \"kernels\": ", ind, ind);
    char ind2[64];
    snprintf(ind2, sizeof ind2, "%s  ", ind);
    kw_export_json_kernels(b, t, c, ind2);
    kw_sbuf_printf(b, "\n%s}", ind);
}

static void kw_export_json(kw_sbuf *b, const knobwise_table *t)
{
    kw_sbuf_printf(b, "{\n  \"format\": \"knobwise-export\",\n  \"format_version\": %d,\n"
                      "  \"knobwise_version\": ",
                   KW_EXPORT_FORMAT_VERSION);
    kw_export_json_str(b, PACKAGE_VERSION);
    kw_sbuf_puts(b, ",\n  \"source\": {\"path\": ");
    kw_export_json_str(b, knobwise_table_path(t));
    kw_sbuf_puts(b, ", \"kind\": ");
    kw_export_json_str(b, knobwise_table_kind(t));
    kw_sbuf_puts(b, "},\n  \"knobs\": [");
    for (int k = 0; k < knobwise_table_knob_count(t); k++) {
        kw_sbuf_puts(b, k ? ", " : "");
        kw_export_json_str(b, knobwise_table_knob_name(t, k));
    }
    kw_sbuf_puts(b, "],\n  \"shapes\": [");
    for (int i = 0; i < knobwise_table_count(t); i++) {
        const knobwise_entry *e = knobwise_table_entry(t, i);
        knobwise_shape s;
        kw_sbuf_printf(b, "%s\n    {\n      \"name\": ", i ? "," : "");
        kw_export_json_str(b, knobwise_entry_name(e));
        if (knobwise_entry_shape(&s, e) == 0)
            kw_sbuf_printf(b, ",\n      \"phase\": \"%s\", \"batch\": %ld, \"len\": %ld, "
                              "\"streams\": %ld",
                           s.phase == KNOBWISE_DECODE ? "decode" : "prefill", s.batch, s.len,
                           s.streams);
        else
            kw_sbuf_puts(b, ",\n      \"phase\": null, \"batch\": null, \"len\": null, "
                            "\"streams\": null");
        const char *bf = knobwise_entry_borrowed_from(e);
        kw_sbuf_puts(b, ",\n      \"borrowed_from\": ");
        if (bf[0])
            kw_export_json_str(b, bf);
        else
            kw_sbuf_puts(b, "null");
        kw_sbuf_puts(b, ",\n      \"config\": ");
        kw_export_json_config(b, t, knobwise_entry_config(e), "      ");
        double p95, p99;
        kw_sbuf_puts(b, ",\n      \"predicted\": ");
        if (knobwise_entry_latency(&p95, &p99, e) == 0) {
            kw_sbuf_puts(b, "{\"p95_us\": ");
            kw_export_double(b, p95);
            kw_sbuf_puts(b, ", \"p99_us\": ");
            kw_export_double(b, p99);
            const char *from = knobwise_entry_figures_from(e); /* mappings.csv's, when it says */
            if (from[0]) {
                kw_sbuf_puts(b, ", \"figures_from\": ");
                kw_export_json_str(b, from);
            }
            kw_sbuf_puts(b, "}");
        } else {
            kw_sbuf_puts(b, "null");
        }
        kw_sbuf_puts(b, ",\n      \"guards\": [");
        for (int w = 0; w < knobwise_entry_watch_count(e); w++) {
            knobwise_watch g;
            knobwise_entry_watch(&g, e, w);
            kw_sbuf_printf(b, "%s\n        {\"guard\": ", w ? "," : "");
            kw_export_json_str(b, g.guard);
            kw_sbuf_puts(b, ", \"metric\": ");
            kw_export_json_str(b, g.metric);
            if (!isnan(g.max)) {
                kw_sbuf_puts(b, ", \"max\": ");
                kw_export_double(b, g.max);
            }
            if (!isnan(g.min)) {
                kw_sbuf_puts(b, ", \"min\": ");
                kw_export_double(b, g.min);
            }
            kw_sbuf_puts(b, ", \"basis\": ");
            kw_export_json_str(b, g.basis ? g.basis : "");
            kw_sbuf_puts(b, "}");
        }
        kw_sbuf_puts(b, knobwise_entry_watch_count(e) ? "\n      ]" : "]");
        const knobwise_config *rp = NULL, *rbase = NULL;
        knobwise_entry_rollback(&rp, e, KNOBWISE_ROLLBACK_PARENT);
        knobwise_entry_rollback(&rbase, e, KNOBWISE_ROLLBACK_BASELINE);
        kw_sbuf_puts(b, ",\n      \"rollback\": {\n        \"parent\": ");
        kw_export_json_config(b, t, rp, "        ");
        kw_sbuf_puts(b, ",\n        \"baseline\": ");
        kw_export_json_config(b, t, rbase, "        ");
        kw_sbuf_puts(b, "\n      },\n      \"owner\": ");
        const char *own = knobwise_entry_owner(e);
        if (own[0])
            kw_export_json_str(b, own);
        else
            kw_sbuf_puts(b, "null");
        kw_sbuf_puts(b, "\n    }");
    }
    kw_sbuf_puts(b, "\n  ]\n}\n");
}

/* ---- c-header ------------------------------------------------------------------------- */

static void kw_export_c_config(kw_sbuf *b, const knobwise_table *t, const knobwise_config *c)
{
    kw_sbuf_puts(b, "{");
    kw_export_c_str(b, c ? knobwise_config_id(c) : NULL);
    kw_sbuf_puts(b, ", {");
    int n = knobwise_table_knob_count(t);
    for (int k = 0; k < n; k++) {
        kw_sbuf_puts(b, k ? ", " : "");
        kw_export_c_str(b, c ? knobwise_config_value(c, k) : NULL);
    }
    kw_sbuf_puts(b, "}}");
}

static void kw_export_c_header(kw_sbuf *b, const knobwise_table *t)
{
    int n = knobwise_table_knob_count(t);
    kw_sbuf_printf(b,
                   "/* knobwise_export.h - generated by `knobwise export --format c-header`\n"
                   " * (knobwise %s, export format %d); do not edit, export again after a new run.\n"
                   " * Source: the KNOBWISE_EXPORT_SOURCE macro below",
                   PACKAGE_VERSION, KW_EXPORT_FORMAT_VERSION);
    /* (a path could hold a comment terminator: it is written as a string literal) */
    kw_sbuf_puts(b, ".\n"
                    " *\n"
                    " * One knobwise_export_entry per tuned shape, in the run's order: its\n"
                    " * dimensions (has_dims 0 when the file did not carry them), the shape it\n"
                    " * was borrowed from (\"\" when tuned for itself), the predicted p95/p99 in\n"
                    " * microseconds (has_latency 0 when unknown), and three configurations: the\n"
                    " * one to deploy and the two roll-back targets. A configuration's values\n"
                    " * are the knobs' values as the space spells them, indexed by the\n"
                    " * KNOBWISE_EXPORT_KNOB_* macros; config_id NULL when the file has no such\n"
                    " * target, values NULL when it has the target's id only. The nearest-shape\n"
                    " * rule for shapes not in the table is libknobwise's (knobwise_table_lookup(3)).\n"
                    " * figures_from: where p95_us/p99_us come from, \"measured\" or \"model\"\n"
                    " * (mappings.csv's column; \"\" when the file does not say). */\n"
                    "#ifndef KNOBWISE_EXPORT_H\n#define KNOBWISE_EXPORT_H\n\n"
                    "#include <stddef.h>\n\n");
    kw_sbuf_printf(b, "#define KNOBWISE_EXPORT_FORMAT %d\n#define KNOBWISE_EXPORT_SOURCE ",
                   KW_EXPORT_FORMAT_VERSION);
    kw_export_c_str(b, knobwise_table_path(t));
    kw_sbuf_printf(b, "\n#define KNOBWISE_EXPORT_N_KNOBS %d\n#define KNOBWISE_EXPORT_N_SHAPES %d\n"
                      "#define KNOBWISE_EXPORT_PREFILL 0\n#define KNOBWISE_EXPORT_DECODE 1\n\n",
                   n, knobwise_table_count(t));
    for (int k = 0; k < n; k++) {
        kw_sbuf_puts(b, "#define KNOBWISE_EXPORT_KNOB_");
        for (const char *p = knobwise_table_knob_name(t, k); *p; p++) {
            char ch = *p;
            if (ch >= 'a' && ch <= 'z')
                ch = (char)(ch - 'a' + 'A');
            else if (!((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')))
                ch = '_';
            kw_sbuf_putn(b, &ch, 1);
        }
        kw_sbuf_printf(b, " %d\n", k);
    }
    kw_sbuf_puts(b, "\nstatic const char *const knobwise_export_knobs[KNOBWISE_EXPORT_N_KNOBS] = {\n");
    for (int k = 0; k < n; k++) {
        kw_sbuf_puts(b, "    ");
        kw_export_c_str(b, knobwise_table_knob_name(t, k));
        kw_sbuf_puts(b, ",\n");
    }
    kw_sbuf_puts(b, "};\n\n"
                    "typedef struct knobwise_export_config {\n"
                    "    const char *config_id;\n"
                    "    const char *values[KNOBWISE_EXPORT_N_KNOBS];\n"
                    "} knobwise_export_config;\n\n"
                    "typedef struct knobwise_export_entry {\n"
                    "    const char *shape;\n"
                    "    int has_dims, phase;\n"
                    "    long batch, len, streams;\n"
                    "    const char *borrowed_from;\n"
                    "    int has_latency;\n"
                    "    double p95_us, p99_us;\n"
                    "    knobwise_export_config config, rollback_parent, rollback_baseline;\n"
                    "    const char *figures_from;\n"
                    "} knobwise_export_entry;\n\n"
                    "static const knobwise_export_entry "
                    "knobwise_export_table[KNOBWISE_EXPORT_N_SHAPES] = {\n");
    for (int i = 0; i < knobwise_table_count(t); i++) {
        const knobwise_entry *e = knobwise_table_entry(t, i);
        knobwise_shape s = {0, 0, 0, 0};
        int dims = knobwise_entry_shape(&s, e) == 0;
        double p95 = 0, p99 = 0;
        int lat = knobwise_entry_latency(&p95, &p99, e) == 0;
        kw_sbuf_puts(b, "    {");
        kw_export_c_str(b, knobwise_entry_name(e));
        kw_sbuf_printf(b, ", %d, %d, %ld, %ld, %ld, ", dims, s.phase, s.batch, s.len, s.streams);
        kw_export_c_str(b, knobwise_entry_borrowed_from(e));
        kw_sbuf_printf(b, ", %d, ", lat);
        kw_export_double(b, p95);
        kw_sbuf_puts(b, ", ");
        kw_export_double(b, p99);
        kw_sbuf_puts(b, ",\n     ");
        kw_export_c_config(b, t, knobwise_entry_config(e));
        const knobwise_config *rp = NULL, *rbase = NULL;
        knobwise_entry_rollback(&rp, e, KNOBWISE_ROLLBACK_PARENT);
        knobwise_entry_rollback(&rbase, e, KNOBWISE_ROLLBACK_BASELINE);
        kw_sbuf_puts(b, ",\n     ");
        kw_export_c_config(b, t, rp);
        kw_sbuf_puts(b, ",\n     ");
        kw_export_c_config(b, t, rbase);
        kw_sbuf_puts(b, ", ");
        kw_export_c_str(b, knobwise_entry_figures_from(e));
        kw_sbuf_puts(b, "},\n");
    }
    kw_sbuf_puts(b, "};\n\n#endif\n");
}

/* ---- the output path -------------------------------------------------------------------- */

/* The run folder of RUN: RUN itself, or the folder of the file RUN names. */
static void kw_export_run_dir(char *rdir, size_t size, const char *run)
{
    struct stat st;
    if (stat(run, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(rdir, size, "%s", run);
    } else {
        const char *rs = strrchr(run, '/');
        if (rs)
            snprintf(rdir, size, "%.*s", rs == run ? 1 : (int)(rs - run), run);
        else
            snprintf(rdir, size, ".");
    }
}

/* ---- the configurations' knob values ------------------------------------------------- */

/* KW_EINPUT "FILE:LINE: shape 'S': ..." when configuration c (the shape's, or
 * a roll-back target's: what) is not one the run can have written: a knob
 * value that is not one of its knob's values in the run's space ks (NULL when
 * the file is in no run folder whose space loads: the file carries no
 * domains), or a config_id that is not the id of its knob values
 * (kw_knobs_id_text, the search's own rule: a value edited after the run). */
static int kw_export_check_config(const knobwise_table *t, const knobwise_entry *e,
                                  const knobwise_config *c, const char *what,
                                  const kw_knobspace *ks)
{
    int n = knobwise_table_knob_count(t);
    if (!c || n <= 0 || !knobwise_config_value(c, 0))
        return 0; /* a target known by id only */
    const char **names = malloc((size_t)n * sizeof *names);
    const char **values = malloc((size_t)n * sizeof *values);
    kw_sbuf text = {0};
    int rc = 0;
    if (!names || !values) {
        rc = kw_error_set(KW_ENOMEM, "out of memory");
        goto done;
    }
    for (int k = 0; k < n; k++) {
        names[k] = knobwise_table_knob_name(t, k);
        values[k] = knobwise_config_value(c, k);
        kw_sbuf_printf(&text, "%s%s=%s", k ? " " : "", names[k], values[k]);
    }
    if ((rc = kw_sbuf_status(&text)) != 0)
        goto done;
    uint64_t id = kw_knobs_id_text(n, names, values);
    kw_cand cand;
    if (ks && kw_knobs_cand_parse(&cand, ks, kw_sbuf_cstr(&text)) != 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", kw_error_last());
        rc = kw_error_set(KW_EINPUT, "%s:%ld: shape '%s': %s is not in the run's space: %s",
                          knobwise_table_path(t), kw_knobwise_config_line(c),
                          knobwise_entry_name(e), what, why);
        goto done;
    }
    if (ks)
        id = kw_knobs_cand_id(ks, &cand); /* the space's knobs, in its order */
    char hex[KW_EXPORT_ID_HEX + 1];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)id);
    if (strcmp(hex, knobwise_config_id(c)) != 0)
        rc = kw_error_set(KW_EINPUT, "%s:%ld: shape '%s': %s: config_id %s is not the id of its "
                          "knob values (%s): the values were changed after the run; export only "
                          "what a run recommended", knobwise_table_path(t),
                          kw_knobwise_config_line(c), knobwise_entry_name(e), what,
                          knobwise_config_id(c), hex);
done:
    kw_sbuf_free(&text);
    free(names);
    free(values);
    return rc;
}

/* Every configuration the export carries, checked before anything is
 * written; against the space of run folder rdir when it is one (its journal
 * names the space) and the space loads. */
static int kw_export_check_configs(const knobwise_table *t, const char *rdir)
{
    kw_rundir *r = NULL;
    char jp[PATH_MAX + 16];
    struct stat st;
    kw_rundir_opts ro = {.flags = KW_RUNDIR_CONFIG};
    if (snprintf(jp, sizeof jp, "%s/" KW_RUNFOLDER_JOURNAL_NAME, rdir) < (int)sizeof jp &&
        lstat(jp, &st) == 0 && kw_run_open(&r, rdir, &ro) != 0) {
        fprintf(stderr, "knobwise export: note: %s: the run's space is not read (%s); knob "
                        "values are checked against their config ids only\n", rdir,
                kw_error_last());
        r = NULL;
    }
    kw_error_clear();
    const kw_knobspace *ks = r && r->cfg ? &r->cfg->space.knobs : NULL;
    int rc = 0;
    for (int i = 0; rc == 0 && i < knobwise_table_count(t); i++) {
        const knobwise_entry *e = knobwise_table_entry(t, i);
        const knobwise_config *rp = NULL, *rb = NULL;
        knobwise_entry_rollback(&rp, e, KNOBWISE_ROLLBACK_PARENT);
        knobwise_entry_rollback(&rb, e, KNOBWISE_ROLLBACK_BASELINE);
        if ((rc = kw_export_check_config(t, e, knobwise_entry_config(e), "the configuration",
                                         ks)) == 0 &&
            (rc = kw_export_check_config(t, e, rp, "the parent roll-back target", ks)) == 0)
            rc = kw_export_check_config(t, e, rb, "the baseline roll-back target", ks);
    }
    kw_rundir_free(r);
    return rc;
}

int kw_cli_export(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'},
                                         {"out", required_argument, 0, 'o'},
                                         {"force", no_argument, 0, 'F'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *format = NULL, *out = NULL;
    int force = 0, o;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (o) {
        case 'f': format = optarg; break;
        case 'o': out = optarg; break;
        case 'F': force = 1; break;
        case 'h': kw_export_help(); return 0;
        default: return kw_cli_usage_error("export", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return kw_cli_usage_error("export", "give exactly one run (folder, results.xml or mappings.csv)");
    if (!format)
        return kw_cli_usage_error("export", "--format json or --format c-header is required");
    int json = strcmp(format, "json") == 0;
    if (!json && strcmp(format, "c-header") != 0)
        return kw_cli_usage_error("export", "--format takes json or c-header, not '%s'", format);
    const char *run = argv[optind];
    char dir[PATH_MAX], name[PATH_MAX], rdir[PATH_MAX];
    kw_export_run_dir(rdir, sizeof rdir, run);
    /* the one check of every -o, before the run is read; no own name: an
     * export replaces none of the run folder's files, nor the file it reads
     * (a mappings.csv outside any run folder) */
    kw_runfolder_reads reads = {NULL, NULL, NULL, {run, NULL}, {"RUN", NULL}};
    if (out && kw_runfolder_output(dir, sizeof dir, name, sizeof name, out, rdir, &reads, NULL,
                                   force) != 0)
        return kw_cli_fail("export", KW_EINPUT);
    int status;

    knobwise_table *t = NULL;
    int rc = knobwise_table_open(&t, run);
    if (rc != 0) {
        fprintf(stderr, "knobwise export: %s\n", knobwise_error_last());
        return rc == KNOBWISE_EINPUT ? 2 : 1;
    }
    if ((rc = kw_export_check_configs(t, rdir)) != 0) {
        knobwise_table_free(t);
        return kw_cli_fail("export", rc);
    }
    kw_sbuf b = {0};
    if (json)
        kw_export_json(&b, t);
    else
        kw_export_c_header(&b, t);
    status = 0;
    if ((rc = kw_sbuf_status(&b)) != 0) {
        status = kw_cli_fail("export", rc);
    } else if (!out) {
        if (fwrite(kw_sbuf_cstr(&b), 1, b.len, stdout) != b.len || fflush(stdout) != 0) {
            fprintf(stderr, "knobwise export: writing stdout: %s\n", strerror(errno));
            status = 1;
        }
    } else {
        kw_outfile f = {name, kw_sbuf_cstr(&b), b.len};
        if ((rc = kw_results_commit(dir, &f, 1)) != 0)
            status = kw_cli_fail("export", rc);
        else
            fprintf(stderr, "wrote %s (%d shapes, %s)\n", out, knobwise_table_count(t), format);
    }
    kw_sbuf_free(&b);
    knobwise_table_free(t);
    return status;
}
