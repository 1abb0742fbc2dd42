/* test_shipped.c - shipped inputs by name (src/util/kw_shipped.c) on the built
 * knobwise (KW_BIN), started in an empty folder so no relative path can help:
 * `--space NAME` finds $KNOBWISE_DATADIR/spaces/NAME.xml (the source tree in
 * make check; $(pkgdatadir) once installed, checked in test_installed),
 * reads exactly what the path would, loses to a file of that name, and
 * `show --list` lists what the folder holds (the test reads the folder itself).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/kw_tl.h"

static char kw_t_cwd[1024];

static void kw_t_setup(void)
{
    char *d = kw_tl_tmpdir("kwtest");
    cr_assert(d != NULL);
    snprintf(kw_t_cwd, sizeof kw_t_cwd, "%s", d);
    free(d);
}

static void kw_t_teardown(void)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", kw_t_cwd);
    if (system(cmd) != 0) { /* best effort */ }
}

/* the hang guard (KW_TL_HANG_GUARD, not Criterion's .timeout), then the setup */
static void kw_t_setup_guarded(void)
{
    KW_TL_HANG_GUARD(60);
    kw_t_setup();
}

TestSuite(shipped, .init = kw_t_setup_guarded, .fini = kw_t_teardown);

/* Run `knobwise ARGS` in the empty folder; stdout+stderr into *out. */
static int kw_t_in_cwd(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int kw_t_in_cwd(char **out, const char *fmt, ...)
{
    char args[8192], cmd[12288], log[1100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(log, sizeof log, "%s.log", kw_t_cwd);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >'%s' 2>&1", kw_t_cwd, kw_tl_bin(), args, log);
    int st = system(cmd);
    *out = kw_tl_slurp(log);
    unlink(log);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

Test(shipped, space_by_name_reads_what_the_path_reads)
{
    const char *dd = getenv("KNOBWISE_DATADIR");
    cr_assert(dd && dd[0], "make check sets KNOBWISE_DATADIR to the source tree");
    char *by_path = NULL, *by_name = NULL, *by_ext = NULL;
    int st = kw_t_in_cwd(&by_path, "show --space '%s/spaces/bert_attn_tpu.xml' --format csv", dd);
    cr_assert_eq(st, 0, "%s", by_path);
    st = kw_t_in_cwd(&by_name, "show --space bert_attn_tpu --format csv");
    cr_assert_eq(st, 0, "%s", by_name);
    st = kw_t_in_cwd(&by_ext, "show --space bert_attn_tpu.xml --format csv");
    cr_assert_eq(st, 0, "%s", by_ext);
    cr_expect_str_eq(by_name, by_path);
    cr_expect_str_eq(by_ext, by_path);
    cr_expect(strstr(by_name, "knob,") != NULL);
    free(by_path);
    free(by_name);
    free(by_ext);
}

Test(shipped, a_file_of_that_name_wins_and_paths_are_never_looked_up)
{
    char p[1100], *out = NULL;
    snprintf(p, sizeof p, "%s/bert_attn_tpu", kw_t_cwd);
    FILE *f = fopen(p, "w");
    fputs("not a space\n", f);
    fclose(f);
    int st = kw_t_in_cwd(&out, "show --space bert_attn_tpu");
    cr_expect_eq(st, 2, "the local file is read (and refused): %s", out);
    cr_expect(strstr(out, "bert_attn_tpu:") != NULL, "%s", out);
    free(out);
    unlink(p);
    st = kw_t_in_cwd(&out, "show --space ./bert_attn_tpu");
    cr_expect_eq(st, 2, "a path is a path: %s", out);
    free(out);
    st = kw_t_in_cwd(&out, "show --space no_such_space");
    cr_expect_eq(st, 2, "%s", out);
    cr_expect(strstr(out, "no_such_space: no such file, and no shipped space") != NULL, "%s", out);
    cr_expect(strstr(out, "knobwise show --list") != NULL, "%s", out);
    free(out);
}

static int kw_t_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

Test(shipped, list_names_every_space_in_the_folder)
{
    const char *dd = getenv("KNOBWISE_DATADIR");
    cr_assert(dd && dd[0]);
    char dir[1100], want[4096] = "";
    snprintf(dir, sizeof dir, "%s/spaces", dd);
    DIR *d = opendir(dir);
    cr_assert(d != NULL);
    char *names[64];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 64) {
        size_t l = strlen(de->d_name);
        if (l > 4 && strcmp(de->d_name + l - 4, ".xml") == 0)
            names[n++] = strndup(de->d_name, l - 4);
    }
    closedir(d);
    cr_assert_geq(n, 8, "the source tree ships at least 8 spaces");
    qsort(names, (size_t)n, sizeof *names, kw_t_cmp);
    for (int i = 0; i < n; i++) {
        strcat(want, "  ");
        strcat(want, names[i]);
        strcat(want, "\n");
        free(names[i]);
    }
    char *out = NULL;
    int st = kw_t_in_cwd(&out, "show --list");
    cr_assert_eq(st, 0, "%s", out);
    const char *body = strchr(out, '\n');
    cr_assert(body != NULL);
    cr_expect_str_eq(body + 1, want);
    free(out);
    st = kw_t_in_cwd(&out, "show --list --space default");
    cr_expect_eq(st, 2, "%s", out);
    free(out);
}

Test(shipped, a_run_tuned_by_name_records_the_file)
{
    char *out = NULL;
    int st = kw_t_in_cwd(&out, "tune --space validate_small --budget 8 --out run --quiet");
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    char j[1100];
    snprintf(j, sizeof j, "%s/run/journal", kw_t_cwd);
    char *journal = kw_tl_slurp(j);
    cr_expect(strstr(journal, "/spaces/validate_small.xml") != NULL, "the journal names the file");
    free(journal);
    /* verify re-evaluates from the journal's recorded space: it must find the file */
    st = kw_t_in_cwd(&out, "verify run");
    cr_expect_eq(st, 0, "%s", out);
    free(out);
    /* the verbs reading a run take a shipped name too */
    st = kw_t_in_cwd(&out, "recommend run --space validate_small --shape attn_prefill_s2048_b1_c2");
    cr_expect_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "tuned in this run") != NULL, "%s", out);
    free(out);
}

/* A build that is not installed yet finds the shipped spaces in the source
 * tree it was configured from, without KNOBWISE_DATADIR: `--space NAME` and
 * `show --list` from an empty folder (main's binary looked only in
 * $(pkgdatadir): "no shipped spaces in /usr/local/share/knobwise/spaces",
 * exit 1, and every README example `--space NAME` failed before `make
 * install`). Where $(pkgdatadir)/spaces exists it wins and the same commands
 * read it. */
Test(shipped, a_build_not_installed_reads_its_source_trees_spaces)
{
    const char *dd = getenv("KNOBWISE_DATADIR");
    cr_assert(dd && dd[0], "make check sets KNOBWISE_DATADIR to the source tree");
    char *list = NULL, *by_name = NULL, *by_path = NULL;
    int st = kw_t_in_cwd(&by_path, "show --space '%s/spaces/bert_attn_tpu.xml' --format csv", dd);
    cr_assert_eq(st, 0, "%s", by_path);
    char *keep = strdup(dd); /* the test's own process: restored after */
    cr_assert_not_null(keep);
    cr_assert_eq(unsetenv("KNOBWISE_DATADIR"), 0);
    st = kw_t_in_cwd(&list, "show --list");
    int st2 = kw_t_in_cwd(&by_name, "show --space bert_attn_tpu --format csv");
    setenv("KNOBWISE_DATADIR", keep, 1);
    free(keep);
    cr_assert_eq(st, 0, "%s", list);
    cr_expect(strstr(list, "\n  bert_attn_tpu\n") != NULL, "%s", list);
    cr_assert_eq(st2, 0, "%s", by_name);
    cr_expect_str_eq(by_name, by_path);
    free(list);
    free(by_name);
    free(by_path);
}
