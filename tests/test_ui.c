/* test_ui.c - what a person reads from knobwise, end to end on the built
 * binary: tune's plain progress lines when stderr is not a terminal (one per
 * shape, none redrawn) and on resume (the replay named); the line-fitting
 * itself is unit-tested in tests/test_progline.c. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <ftw.h>

#include "kw_proc.h"

TestSuite(ui, .timeout = 300);

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
    char *d = kw_p_tmpdir("kwui");
    cr_assert_not_null(d);
    kw_proc_opts o = {.timeout_s = 120, .cwd = d};
    kw_proc r = kw_p_run(&o, bin(), "tune", "--space", src("spaces/validate_small.xml"), "--budget",
                         "30", "--out", "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_null(strchr(r.err, '\r'), "a redrawn line on a pipe: %s", r.err);
    cr_assert_eq(count(r.err, "\n"), 2, "%s", r.err);
    cr_assert_eq(count(r.err, "knobwise tune: shape attn_prefill_s2048_b1_c2 done: p95 "), 1, "%s",
                 r.err);
    cr_assert_eq(count(r.err, "knobwise tune: shape attn_decode_kv2048_b32_c16 done: p95 "), 1, "%s",
                 r.err);
    cr_assert(strstr(r.err, ", 30 evals, ") && strstr(r.err, " of 2)\n"), "%s", r.err);
    kw_p_free(&r);
    /* --quiet: nothing */
    r = kw_p_run(&o, bin(), "tune", "--space", src("spaces/validate_small.xml"), "--budget", "10",
                 "--out", "run2", "--quiet", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.err, "");
    kw_p_free(&r);
    kw_p_rmrf(d);
}

Test(ui, resume_on_a_pipe_names_the_replay)
{
    char *d = kw_p_tmpdir("kwui");
    cr_assert_not_null(d);
    kw_proc_opts o = {.timeout_s = 120, .cwd = d};
    kw_proc r = kw_p_run(&o, bin(), "tune", "--space", src("spaces/validate_small.xml"),
                         "--strategy", "exhaustive", "--threads", "1", "--time-limit", "0.5",
                         "--out", "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "time limit reached"), "%s", r.err);
    kw_p_free(&r);
    r = kw_p_run(&o, bin(), "tune", "--resume", "run", "--time-limit", "1", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "knobwise tune: resume: replaying "), "%s", r.err);
    cr_assert(strstr(r.err, "knobwise tune: resume: journal replayed ("), "%s", r.err);
    cr_assert_null(strchr(r.err, '\r'), "%s", r.err);
    kw_p_free(&r);
    kw_p_rmrf(d);
}
