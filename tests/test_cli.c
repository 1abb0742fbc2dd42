/* test_cli.c - end-to-end tests of the knobwise command that need more than
 * a data row: the CSV contracts of show and eval checked row by row, the
 * stdin protocol, and every file of the bad-input corpus refused with its file
 * and line. The simple cases (exit codes, messages, help, usage errors) are
 * rows of tests/cli.manifest, run by tests/test_manifest.c. */
#include <criterion/criterion.h>

#include "lib/kw_tl.h"

TestSuite(cli);

Test(cli, show_csv_contract)
{
    kw_tl_proc r = kw_tl_sh("show --format csv", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strncmp(r.out, "kind,name,values,baseline\n", 26) == 0, "%s", r.out);
    cr_assert(strstr(r.out, "\nknob,fuse_attention,") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "\nshape,") != NULL);
    /* every knob row's baseline is one of its values */
    char *save = NULL;
    int knobs = 0;
    for (char *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "knob,", 5) != 0)
            continue;
        knobs++;
        char *vals = strchr(line + 5, ',') + 1;
        char *base = strrchr(line, ',') + 1;
        char domain[1024];
        snprintf(domain, sizeof domain, "|%.*s|", (int)(base - 1 - vals), vals);
        char needle[128];
        snprintf(needle, sizeof needle, "|%s|", base);
        cr_assert(strstr(domain, needle) != NULL, "baseline %s not in %s", base, domain);
    }
    cr_assert_geq(knobs, 10);
    kw_tl_free(&r);
}

static const char eval_header[] =
    "shape,config_id,p50_us,p95_us,p99_us,launches,reuse_ratio,dram_mb,quality_cos,"
    "quality_rel_rms,throttle_pct,fallback_pct,guards"; /* columns may follow after a comma */

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(cli, eval_csv_contract_on_the_default)
{
    kw_tl_proc s = kw_tl_sh("show --format csv", NULL);
    int shapes = 0;
    for (const char *p = s.out; (p = strstr(p, "\nshape,")) != NULL; p++)
        shapes++;
    kw_tl_free(&s);
    kw_tl_proc r = kw_tl_sh("eval --format csv", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strncmp(r.out, eval_header, strlen(eval_header)) == 0, "%s", r.out);
    cr_assert(r.out[strlen(eval_header)] == ',' || r.out[strlen(eval_header)] == '\n');
    cr_assert_eq(count_lines(r.out), 1 + shapes, "%s", r.out);
    kw_tl_free(&r);
}

Test(cli, eval_text_with_kernels)
{
    kw_tl_proc r = kw_tl_sh("eval --kernels", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "p95") && strstr(r.out, "bound") && strstr(r.out, "total"), "%s",
              r.out);
    kw_tl_free(&r);
}

Test(cli, eval_stdin_protocol_survives_bad_lines)
{
    kw_tl_proc s = kw_tl_sh("show --format csv", NULL);
    char *p = strstr(s.out, "\nshape,");
    cr_assert(p != NULL);
    char shape[128];
    sscanf(p + 7, "%127[^,]", shape);
    kw_tl_free(&s);
    char in[1024];
    snprintf(in, sizeof in,
             "%s\n"
             "%s fuse_attention=flash\n"
             "no_such_shape fuse_attention=flash\n"
             "%s fuse_attention=sideways\n"
             "%s launch_mode=graph\n",
             shape, shape, shape, shape);
    kw_tl_proc r = kw_tl_sh("eval --stdin", in);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strncmp(r.out, eval_header, strlen(eval_header)) == 0);
    cr_assert_eq(count_lines(r.out), 6, "%s", r.out);
    cr_assert(strstr(r.out, "stdin:3:") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "stdin:4:") != NULL, "%s", r.out);
    kw_tl_free(&r);
}

/* Every file of tests/data/bad/ is refused: exit 2, FILE:LINE first, the
 * manifest's substring in the message, and nothing written. */
Test(cli, bad_corpus_refused_with_file_and_line)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/bad/EXPECTED", kw_tl_src());
    kw_tl_manifest *m = kw_tl_manifest_open(path);
    cr_assert(m != NULL, "no manifest %s", path);
    kw_tl_row row;
    int n = 0;
    while (kw_tl_manifest_next(m, &row)) {
        const char *name = row.f[0], *sub = row.f[1], *ln = row.f[2];
        cr_assert(row.n >= 3, "bad manifest line %d", row.line);
        char file[4096], cmd[8192], prefix[4200];
        snprintf(file, sizeof file, "%s/tests/data/bad/%s", kw_tl_src(), name);
        snprintf(cmd, sizeof cmd, "validate '%s'", file);
        kw_tl_proc r = kw_tl_sh(cmd, NULL);
        cr_expect_eq(r.status, 2, "%s: exit %d, %s", name, r.status, r.err);
        snprintf(prefix, sizeof prefix, "%s:%s:", file, ln);
        cr_expect(strstr(r.err, prefix) != NULL, "%s: want '%s' in: %s", name, prefix, r.err);
        cr_expect(strstr(r.err, sub) != NULL, "%s: want '%s' in: %s", name, sub, r.err);
        kw_tl_free(&r);
        n++;
    }
    kw_tl_manifest_close(m);
    cr_assert_geq(n, 25);
}

