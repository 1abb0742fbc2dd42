/* test_manifest.c - the runner of tests/cli.manifest: end-to-end cases of the
 * knobwise command as data rows (arguments, exit status, expected text), in
 * the manner of jq's tests/NAME.test files driven by a thin runner.
 *
 * Each row runs `knobwise ARGS` through /bin/sh (so a row may use globs) in a
 * fresh empty folder, stdin from /dev/null, under a timeout; every expectation
 * of the row is checked and reported with the manifest's line, so one broken
 * case does not hide the others. A case that exits 2 must leave its folder
 * empty: bad input writes nothing. The format is described at the top of
 * tests/cli.manifest.
 */
#include <criterion/criterion.h>

#include "lib/kw_tl.h"

/* each test's hang guard (KW_TL_HANG_GUARD, not Criterion's .timeout) */
static void kw_manifest_guard(void) { KW_TL_HANG_GUARD(300); }
TestSuite(manifest, .init = kw_manifest_guard);

#define KW_M_TIMEOUT_S 120  /* one case; the slowest is a validate of every shipped file */
#define KW_M_CASES_MIN 20   /* the manifest holds at least this many rows */

/* text with every @SRC@ replaced by the source tree (malloc'ed) */
static char *kw_m_subst(const char *text)
{
    const char *src = kw_tl_src(), *tag = "@SRC@";
    size_t n = 1, tl = strlen(tag);
    for (const char *p = text; (p = strstr(p, tag)) != NULL; p += tl)
        n += strlen(src);
    char *out = malloc(strlen(text) + n);
    cr_assert_not_null(out);
    char *o = out;
    for (const char *p = text; *p;) {
        if (strncmp(p, tag, tl) == 0) {
            o += sprintf(o, "%s", src);
            p += tl;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

/* One expectation ("out:TEXT", "^err:TEXT", "!out:TEXT", "files:N") of the
 * case at manifest line `line`. */
static void kw_m_expect(int line, const char *exp, const kw_tl_proc *r, const char *dir)
{
    if (strncmp(exp, "files:", 6) == 0) {
        int want = atoi(exp + 6), got = kw_tl_entries(dir);
        cr_expect_eq(got, want, "cli.manifest:%d: %d entries in the folder, want %d", line, got,
                     want);
        return;
    }
    int neg = exp[0] == '!', start = exp[0] == '^';
    const char *e = exp + (neg || start);
    const char *stream = strncmp(e, "out:", 4) == 0 ? r->out : strncmp(e, "err:", 4) == 0 ? r->err
                                                                                       : NULL;
    cr_assert_not_null(stream, "cli.manifest:%d: expectation '%s' is not out:, err:, ^, ! or files:",
                       line, exp);
    char *text = kw_m_subst(e + 4);
    int has = start ? strncmp(stream, text, strlen(text)) == 0 : strstr(stream, text) != NULL;
    cr_expect(neg ? !has : has, "cli.manifest:%d: %s%s '%s' in %s:\n%s", line,
              neg ? "unwanted" : "want", start ? " at the start" : "", text, e[0] == 'o' ? "stdout" : "stderr",
              stream);
    free(text);
}

Test(manifest, every_case_of_cli_manifest)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/tests/cli.manifest", kw_tl_src());
    kw_tl_manifest *m = kw_tl_manifest_open(path);
    cr_assert_not_null(m, "no manifest %s", path);
    kw_tl_row row;
    int cases = 0;
    while (kw_tl_manifest_next(m, &row)) {
        cr_assert_geq(row.n, 2, "cli.manifest:%d: want ARGS<TAB>EXIT[<TAB>EXPECT...]", row.line);
        char *end = NULL;
        long want = strtol(row.f[1], &end, 10);
        cr_assert(end != row.f[1] && *end == '\0', "cli.manifest:%d: exit '%s' is not a number",
                  row.line, row.f[1]);
        char *args = kw_m_subst(strcmp(row.f[0], "@NONE@") == 0 ? "" : row.f[0]);
        size_t cl = strlen(args) + strlen(kw_tl_bin()) + 32;
        char *cmd = malloc(cl);
        cr_assert_not_null(cmd);
        snprintf(cmd, cl, "exec '%s' %s", kw_tl_bin(), args);
        char *dir = kw_tl_tmpdir("kwcase");
        cr_assert_not_null(dir);
        kw_tl_opts o = {.timeout_s = KW_M_TIMEOUT_S, .cwd = dir};
        kw_tl_proc r = kw_tl_run(&o, "/bin/sh", "-c", cmd, (const char *)NULL);
        cr_expect(!r.timed_out, "cli.manifest:%d: `knobwise %s` timed out", row.line, args);
        cr_expect_eq(r.status, want, "cli.manifest:%d: `knobwise %s` exit %d, want %ld:\n%s%s",
                     row.line, args, r.status, want, r.out, r.err);
        for (int i = 2; i < row.n; i++)
            kw_m_expect(row.line, row.f[i], &r, dir);
        if (want == 2)
            cr_expect_eq(kw_tl_entries(dir), 0, "cli.manifest:%d: `knobwise %s` refused its "
                         "input but wrote into its folder", row.line, args);
        kw_tl_free(&r);
        kw_tl_rmrf(dir);
        free(cmd);
        free(args);
        cases++;
    }
    kw_tl_manifest_close(m);
    cr_assert_geq(cases, KW_M_CASES_MIN, "only %d cases in %s", cases, path);
}
