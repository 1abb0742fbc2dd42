/* test_installed.c - libknobwise as a runtime author gets it: `make install
 * DESTDIR=TMP`, then tests/example/runtime_example.c compiled against the
 * staged install through pkg-config (PKG_CONFIG_SYSROOT_DIR and
 * PKG_CONFIG_PATH into TMP) and run on a fresh run of the built knobwise.
 *
 * What could be wrong and is checked: the install leaves out the header, the
 * .pc file, the library or the man pages; the library exports a name outside
 * the knobwise_* API (the version script or -fvisibility broke); the .pc
 * file's flags do not build a program; the installed library reads a run
 * differently from `knobwise recommend --all` (the knob values are compared
 * with mappings.csv's row, written by another code path); nearest lookups
 * report the wrong distances (worked out from the shapes' numbers).
 *
 * The build's settings come from AM_TESTS_ENVIRONMENT (mk/lib.am): KW_MAKE,
 * KW_CC, KW_SAN_CFLAGS, KW_PKG_CONFIG and the install folders.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/kw_tl.h"

TestSuite(installed);

static const char *kw_t_env(const char *name)
{
    const char *v = getenv(name);
    cr_assert(v != NULL && v[0], "%s is not set (run through make check)", name);
    return v;
}

/* Run a shell command; its output goes to dir/log. Returns the exit status. */
static int kw_t_sh(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int kw_t_sh(const char *dir, const char *fmt, ...)
{
    char cmd[16384], full[17000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "(%s) >'%s/log' 2>&1", cmd, dir);
    int st = system(full);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static char *kw_t_log(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/log", dir);
    return kw_tl_slurp(p);
}

/* Value of column `col` in the row of mappings.csv whose shape is `shape`
 * (no quoted fields in the shipped spaces' names and values). */
static void kw_t_mapping(char *out, size_t len, const char *csv, const char *shape, const char *col)
{
    out[0] = '\0';
    const char *row = csv;
    size_t sl = strlen(shape);
    while ((row = strchr(row, '\n')) != NULL) {
        row++;
        if (strncmp(row, shape, sl) == 0 && row[sl] == ',')
            break;
    }
    cr_assert(row != NULL, "no row for %s in mappings.csv", shape);
    const char *h = csv, *d = row;
    while (*h && *h != '\n') {
        size_t hl = strcspn(h, ",\n"), dl = strcspn(d, ",\n");
        if (hl == strlen(col) && strncmp(h, col, hl) == 0) {
            snprintf(out, len, "%.*s", (int)dl, d);
            return;
        }
        h += hl + (h[hl] == ',');
        d += dl + (d[dl] == ',');
        if (h[-1] != ',')
            break;
    }
}

/* Knob columns of mappings.csv: all but shape,config_id,borrowed_from and the 4 shape_* ones. */
static int kw_t_knob_columns(const char *csv)
{
    /* the knobs sit between shape,config_id,borrowed_from and the columns
     * recommend appends after them, which start with "phase" */
    const char *end = strstr(csv, ",phase,");
    cr_assert(end != NULL && end < strchr(csv, '\n'), "no phase column in mappings.csv");
    int n = 0;
    for (const char *c = csv; c < end; c++)
        n += *c == ',';
    return n + 1 - 3;
}

/* Every "  knob=value" line of the example's first config block agrees with mappings.csv. */
static int kw_t_check_knobs(const char *out, const char *csv, const char *shape)
{
    const char *p = strstr(out, "\nconfig ");
    cr_assert(p != NULL, "no config in:\n%s", out);
    p = strchr(p + 1, '\n') + 1;
    int n = 0;
    while (strncmp(p, "  ", 2) == 0) {
        char knob[128], want[128];
        const char *eq = strchr(p, '='), *nl = strchr(p, '\n');
        snprintf(knob, sizeof knob, "%.*s", (int)(eq - p - 2), p + 2);
        kw_t_mapping(want, sizeof want, csv, shape, knob);
        cr_expect(strlen(want) == (size_t)(nl - eq - 1) && strncmp(eq + 1, want, strlen(want)) == 0,
                  "%s: library says %.*s, mappings.csv says %s", knob, (int)(nl - eq - 1), eq + 1,
                  want);
        n++;
        p = nl + 1;
    }
    return n;
}

Test(installed, example_built_through_pkg_config_against_the_staged_install)
{
    KW_TL_HANG_GUARD(300);
    const char *make = kw_t_env("KW_MAKE"), *cc = kw_t_env("KW_CC"),
               *build = kw_t_env("KW_BUILDDIR"), *src = kw_t_env("KW_SRCDIR"),
               *libdir = kw_t_env("KW_LIBDIR"), *incdir = kw_t_env("KW_INCLUDEDIR"),
               *mandir = kw_t_env("KW_MANDIR"), *pkgconf = kw_t_env("KW_PKG_CONFIG"),
               *version = kw_t_env("KW_VERSION");
    const char *san = getenv("KW_SAN_CFLAGS") ? getenv("KW_SAN_CFLAGS") : "";
    char *tmp = kw_tl_tmpdir("kwtest");
    cr_assert(tmp != NULL);
    char root[4096], pcenv[12288], path[8192];
    snprintf(root, sizeof root, "%s/root", tmp);

    /* 1. the staged install (MAKEFLAGS dropped: the outer make's jobserver is not ours) */
    int st = kw_t_sh(tmp, "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL %s install "
                          "DESTDIR='%s'",
                     build, make, root);
    cr_assert_eq(st, 0, "make install DESTDIR failed:\n%s", kw_t_log(tmp));
    const char *want[] = {"%s%s/knobwise.h", "%s%s/libknobwise.so", "%s%s/pkgconfig/knobwise.pc",
                          "%s%s/man3/libknobwise.3", "%s%s/man3/knobwise_table_open.3",
                          "%s%s/man3/knobwise_table_lookup.3"};
    const char *base[] = {incdir, libdir, libdir, mandir, mandir, mandir};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        snprintf(path, sizeof path, want[i], root, base[i]);
        cr_expect(kw_tl_exists(path), "not installed: %s", path);
    }
    /* the docs, the shipped spaces and the export schema */
    const char *docdir = kw_t_env("KW_DOCDIR"), *datadir = kw_t_env("KW_PKGDATADIR_INST"),
               *bindir = kw_t_env("KW_BINDIR");
    const char *more[] = {"%s%s/README.md", "%s%s/formats.md", "%s%s/doc/search-log.md",
                          "%s%s/doc/fidelity.md", "%s%s/spaces/bert_attn_tpu.xml",
                          "%s%s/results/export.schema.json"};
    const char *mbase[] = {docdir, docdir, docdir, docdir, datadir, datadir};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
        snprintf(path, sizeof path, more[i], root, mbase[i]);
        cr_expect(kw_tl_exists(path), "not installed: %s", path);
    }
    /* the installed binary finds a shipped space by name in the installed data
     * folder (KNOBWISE_DATADIR stands in for the prefix DESTDIR moved), from an
     * empty folder */
    st = kw_t_sh(tmp, "mkdir -p '%s/empty' && cd '%s/empty' && KNOBWISE_DATADIR='%s%s' "
                      "'%s%s/knobwise' show --space bert_attn_tpu --format csv | grep -q '^knob,' && "
                      "KNOBWISE_DATADIR='%s%s' '%s%s/knobwise' show --list | grep -qx '  bert_attn_tpu'",
                 tmp, tmp, root, datadir, root, bindir, root, datadir, root, bindir);
    cr_expect_eq(st, 0, "the installed knobwise does not find bert_attn_tpu by name:\n%s",
                 kw_t_log(tmp));
    snprintf(path, sizeof path, "%s%s/libknobwise.a", root, libdir);
    cr_expect(!kw_tl_exists(path), "a static libknobwise.a would export the internals: %s", path);

    /* 2. only the API is exported: every defined dynamic symbol is knobwise_* (or a version
     * node: KNOBWISE_1.0, KNOBWISE_1.1 for knobwise_entry_figures_from, KNOBWISE_1.2 for
     * knobwise_entry_warnings and _disproof*, KNOBWISE_1.3 for knobwise_entry_figures_basis,
     * src/lib/knobwise.map) */
    st = kw_t_sh(tmp, "nm -D --defined-only '%s%s/libknobwise.so' | awk '{print $3}' | "
                      "grep -v -e '^knobwise_' -e '^KNOBWISE_1\\.[0123]$'",
                 root, libdir);
    cr_assert_eq(st, 1, "exported beyond the API (or nm failed):\n%s", kw_t_log(tmp));
    /* the 1.1 call is in its own node, the 1.0 calls stay in theirs (a runtime linked
     * against 1.0 keeps loading) */
    st = kw_t_sh(tmp, "nm -D --defined-only '%s%s/libknobwise.so' | awk '{print $3}' | "
                      "grep -qx 'knobwise_entry_figures_from@@KNOBWISE_1.1' && "
                      "nm -D --defined-only '%s%s/libknobwise.so' | awk '{print $3}' | "
                      "grep -qx 'knobwise_entry_warnings@@KNOBWISE_1.2' && "
                      "nm -D --defined-only '%s%s/libknobwise.so' | awk '{print $3}' | "
                      "grep -qx 'knobwise_entry_figures_basis@@KNOBWISE_1.3' && "
                      "nm -D --defined-only '%s%s/libknobwise.so' | awk '{print $3}' | "
                      "grep -qx 'knobwise_entry_owner@@KNOBWISE_1.0'",
                 root, libdir, root, libdir, root, libdir, root, libdir);
    cr_expect_eq(st, 0, "version nodes:\n%s", kw_t_log(tmp));

    /* 3. compile the example with the .pc file's flags only */
    snprintf(pcenv, sizeof pcenv, "PKG_CONFIG_SYSROOT_DIR='%s' PKG_CONFIG_PATH='%s%s/pkgconfig'",
             root, root, libdir);
    st = kw_t_sh(tmp, "test \"$(env %s %s --modversion knobwise)\" = '%s'", pcenv, pkgconf, version);
    cr_assert_eq(st, 0, "pkg-config --modversion knobwise is not %s:\n%s", version, kw_t_log(tmp));
    st = kw_t_sh(tmp, "%s -std=c99 -Wall -Wextra -Werror %s '%s/tests/example/runtime_example.c' "
                      "$(env %s %s --cflags knobwise) $(env %s %s --libs knobwise) -lm -o '%s/example'",
                 cc, san, src, pcenv, pkgconf, pcenv, pkgconf, tmp);
    cr_assert_eq(st, 0, "the example does not build against the install:\n%s", kw_t_log(tmp));
    /* many runtimes are C++: the header's extern "C" must let the same program
     * build and link as C++ (g++ comes with build-essential) */
    st = kw_t_sh(tmp, "g++ -x c++ -std=c++17 -Wall -Wextra -Werror %s "
                      "'%s/tests/example/runtime_example.c' -x none $(env %s %s --cflags knobwise) "
                      "$(env %s %s --libs knobwise) -o '%s/example_cxx'",
                 san, src, pcenv, pkgconf, pcenv, pkgconf, tmp);
    cr_expect_eq(st, 0, "the example does not build as C++ against the install:\n%s", kw_t_log(tmp));

    /* 4. a fresh run and its mappings.csv (written by `recommend`, not the library) */
    st = kw_t_sh(tmp, "'%s' tune --space '%s/spaces/validate_small.xml' --budget 30 --out '%s/run' "
                      "--quiet && '%s' recommend '%s/run' --all",
                 kw_tl_bin(), src, tmp, kw_tl_bin(), tmp);
    cr_assert_eq(st, 0, "tune/recommend failed:\n%s", kw_t_log(tmp));
    snprintf(path, sizeof path, "%s/run/mappings.csv", tmp);
    char *csv = kw_tl_slurp(path);
    char id[64];

    /* 5. exact: validate_small's prefill shape is batch 1, seq 2048, 2 streams */
    const char *sh = "attn_prefill_s2048_b1_c2";
    st = kw_t_sh(tmp, "LD_LIBRARY_PATH='%s%s' '%s/example' '%s/run' prefill 1 2048 2", root,
                 libdir, tmp, tmp);
    char *out = kw_t_log(tmp);
    cr_assert_eq(st, 0, "example failed:\n%s", out);
    cr_assert(strstr(out, "shape attn_prefill_s2048_b1_c2: exact\n") != NULL, "%s", out);
    kw_t_mapping(id, sizeof id, csv, sh, "config_id");
    char line[128];
    snprintf(line, sizeof line, "\nconfig %s\n", id);
    cr_expect(strstr(out, line) != NULL, "config id %s (mappings.csv) not in:\n%s", id, out);
    cr_expect_eq(kw_t_check_knobs(out, csv, sh), kw_t_knob_columns(csv));
    /* a finished run: the predicted tail is the final re-check's (knobwise_entry_figures_basis) */
    cr_expect(strstr(out, "predicted p95_us=") != NULL && strstr(out, " (recheck)\n") &&
                  strstr(out, "watch p95_ceiling") &&
                  strstr(out, "\nrollback "),
              "%s", out);
    free(out);

    st = kw_t_sh(tmp, "LD_LIBRARY_PATH='%s%s' '%s/example_cxx' '%s/run' prefill 1 2048 2", root,
                 libdir, tmp, tmp);
    out = kw_t_log(tmp);
    cr_expect(st == 0 && strstr(out, "shape attn_prefill_s2048_b1_c2: exact\n") != NULL,
              "the C++ build: %s", out);
    free(out);

    /* 6. nearest: batch 2, seq 1024 -> the same shape, log2(1/2) = -1, log2(2048/1024) = +1 */
    st = kw_t_sh(tmp, "LD_LIBRARY_PATH='%s%s' '%s/example' '%s/run' prefill 2 1024 2", root,
                 libdir, tmp, tmp);
    out = kw_t_log(tmp);
    cr_assert_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "shape attn_prefill_s2048_b1_c2: nearest (borrowed)\n") != NULL, "%s", out);
    cr_expect(strstr(out, "distance log2: batch -1.000 len +1.000 streams +0.000\n") != NULL, "%s",
              out);
    free(out);

    /* 7. the same run through its mappings.csv: decode shape, exact */
    sh = "attn_decode_kv2048_b32_c16";
    st = kw_t_sh(tmp, "LD_LIBRARY_PATH='%s%s' '%s/example' '%s/run/mappings.csv' decode 32 2048 16",
                 root, libdir, tmp, tmp);
    out = kw_t_log(tmp);
    cr_assert_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "(mappings.csv)") && strstr(out, "shape attn_decode_kv2048_b32_c16: exact"),
              "%s", out);
    cr_expect_eq(kw_t_check_knobs(out, csv, sh), kw_t_knob_columns(csv));
    free(out);

    /* 8. a damaged file: the installed library's message, exit 2, no crash */
    st = kw_t_sh(tmp, "printf '<results' > '%s/bad.xml' && LD_LIBRARY_PATH='%s%s' '%s/example' "
                      "'%s/bad.xml' prefill 1 1 1",
                 tmp, root, libdir, tmp, tmp);
    out = kw_t_log(tmp);
    cr_expect_eq(st, 2, "%s", out);
    snprintf(path, sizeof path, "%s/bad.xml:", tmp);
    cr_expect(strstr(out, path) != NULL, "%s", out);
    free(out);
    free(csv);

    /* 9. a runtime that loads the library as a plugin (dlopen), reads a run,
     * unloads it (dlclose) and then parses XML of its own: the library set
     * libxml2's process-wide external entity loader to a function of its own,
     * so the host's next xmlReadFile called unmapped code (SIGSEGV) until the
     * library was linked -z nodelete */
    snprintf(path, sizeof path, "%s/host.c", tmp);
    cr_assert_eq(kw_tl_write(path,
        "#include <dlfcn.h>\n#include <stdio.h>\n#include <libxml/parser.h>\n"
        "int main(int argc, char **argv) {\n"
        "    (void)argc;\n"
        "    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);\n"
        "    if (!h) { printf(\"dlopen: %s\\n\", dlerror()); return 3; }\n"
        "    int (*op)(void **, const char *) = (int (*)(void **, const char *))dlsym(h, "
        "\"knobwise_table_open\");\n"
        "    void (*fr)(void *) = (void (*)(void *))dlsym(h, \"knobwise_table_free\");\n"
        "    void *t = NULL;\n"
        "    if (!op || !fr || op(&t, argv[2]) != 0) return 4;\n"
        "    fr(t);\n"
        "    if (dlclose(h) != 0) return 5;\n"
        "    xmlDocPtr d = xmlReadFile(argv[2], NULL, XML_PARSE_NONET);\n"
        "    printf(\"host parse %s\\n\", d ? \"ok\" : \"failed\");\n"
        "    xmlFreeDoc(d);\n"
        "    return d ? 0 : 6;\n"
        "}\n"), 0);
    st = kw_t_sh(tmp, "%s %s '%s/host.c' $(%s --cflags --libs libxml-2.0) -ldl -o '%s/host' && "
                      "'%s/host' '%s%s/libknobwise.so' '%s/run/results.xml'",
                 cc, san, tmp, pkgconf, tmp, tmp, root, libdir, tmp);
    out = kw_t_log(tmp);
    cr_expect_eq(st, 0, "a host that dlclose()d the library cannot parse XML (status %d):\n%s", st,
                 out);
    cr_expect(strstr(out, "host parse ok") != NULL, "%s", out);
    free(out);

    snprintf(path, sizeof path, "rm -rf '%s'", tmp);
    if (system(path) != 0) { /* best effort */ }
    free(tmp);
}
