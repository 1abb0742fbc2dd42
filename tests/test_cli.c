/* test_cli.c - end-to-end tests of the knobwise command: exit codes,
 * messages, the CSV contracts of show and eval, the stdin protocol, and every
 * file of the bad-input corpus refused with its file and line. */
#include <criterion/criterion.h>

#include "kw_testutil.h"

TestSuite(cli);

Test(cli, version_and_help)
{
    kw_run r = kw_t_run("--version", NULL);
    cr_assert_eq(r.status, 0);
    cr_assert(strncmp(r.out, "knobwise ", 9) == 0, "%s", r.out);
    kw_t_free(&r);
    r = kw_t_run("--help", NULL);
    cr_assert_eq(r.status, 0);
    static const char *verbs[] = {"tune", "eval", "audit", "bisect", "verify", "recommend",
                                  "report", "validate", "show"};
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        cr_assert(strstr(r.out, verbs[i]) != NULL, "help lacks %s", verbs[i]);
    kw_t_free(&r);
    r = kw_t_run("eval --help", NULL);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "--kernels") != NULL);
    kw_t_free(&r);
}

Test(cli, usage_errors_exit_2)
{
    kw_run r = kw_t_run("", NULL);
    cr_assert_eq(r.status, 2);
    kw_t_free(&r);
    r = kw_t_run("frobnicate", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "unknown verb 'frobnicate'") != NULL, "%s", r.err);
    kw_t_free(&r);
    r = kw_t_run("eval --no-such-option", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--no-such-option") != NULL, "%s", r.err);
    kw_t_free(&r);
    r = kw_t_run("eval --format xml", NULL);
    cr_assert_eq(r.status, 2);
    kw_t_free(&r);
    r = kw_t_run("eval --shape no_such_shape", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "no_such_shape") != NULL, "%s", r.err);
    kw_t_free(&r);
    r = kw_t_run("eval --set no_such_knob=1", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "no_such_knob") != NULL, "%s", r.err);
    kw_t_free(&r);
}

Test(cli, show_csv_contract)
{
    kw_run r = kw_t_run("show --format csv", NULL);
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
    kw_t_free(&r);
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
    kw_run s = kw_t_run("show --format csv", NULL);
    int shapes = 0;
    for (const char *p = s.out; (p = strstr(p, "\nshape,")) != NULL; p++)
        shapes++;
    kw_t_free(&s);
    kw_run r = kw_t_run("eval --format csv", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strncmp(r.out, eval_header, strlen(eval_header)) == 0, "%s", r.out);
    cr_assert(r.out[strlen(eval_header)] == ',' || r.out[strlen(eval_header)] == '\n');
    cr_assert_eq(count_lines(r.out), 1 + shapes, "%s", r.out);
    kw_t_free(&r);
}

Test(cli, eval_text_with_kernels)
{
    kw_run r = kw_t_run("eval --kernels", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "p95") && strstr(r.out, "bound") && strstr(r.out, "total"), "%s",
              r.out);
    kw_t_free(&r);
}

Test(cli, eval_stdin_protocol_survives_bad_lines)
{
    kw_run s = kw_t_run("show --format csv", NULL);
    char *p = strstr(s.out, "\nshape,");
    cr_assert(p != NULL);
    char shape[128];
    sscanf(p + 7, "%127[^,]", shape);
    kw_t_free(&s);
    char in[1024];
    snprintf(in, sizeof in,
             "%s\n"
             "%s fuse_attention=flash\n"
             "no_such_shape fuse_attention=flash\n"
             "%s fuse_attention=sideways\n"
             "%s launch_mode=graph\n",
             shape, shape, shape, shape);
    kw_run r = kw_t_run("eval --stdin", in);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strncmp(r.out, eval_header, strlen(eval_header)) == 0);
    cr_assert_eq(count_lines(r.out), 6, "%s", r.out);
    cr_assert(strstr(r.out, "stdin:3:") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "stdin:4:") != NULL, "%s", r.out);
    kw_t_free(&r);
}

Test(cli, shipped_files_validate)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "validate %s/spaces/*.xml %s/spaces/accel/*.xml %s/spaces/workloads/*.xml",
             kw_t_src(), kw_t_src(), kw_t_src());
    kw_run r = kw_t_run(cmd, NULL);
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    kw_t_free(&r);
}

/* Every file of tests/data/bad/ is refused: exit 2, FILE:LINE first, the
 * manifest's substring in the message, and nothing written. */
Test(cli, bad_corpus_refused_with_file_and_line)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/bad/EXPECTED", kw_t_src());
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "no manifest %s", path);
    char line[2048];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        line[strcspn(line, "\n")] = '\0';
        char *name = strtok(line, "\t");
        char *sub = strtok(NULL, "\t");
        char *ln = strtok(NULL, "\t");
        cr_assert(name && sub && ln, "bad manifest line");
        char file[4096], cmd[8192], prefix[4200];
        snprintf(file, sizeof file, "%s/tests/data/bad/%s", kw_t_src(), name);
        snprintf(cmd, sizeof cmd, "validate '%s'", file);
        kw_run r = kw_t_run(cmd, NULL);
        cr_expect_eq(r.status, 2, "%s: exit %d, %s", name, r.status, r.err);
        snprintf(prefix, sizeof prefix, "%s:%s:", file, ln);
        cr_expect(strstr(r.err, prefix) != NULL, "%s: want '%s' in: %s", name, prefix, r.err);
        cr_expect(strstr(r.err, sub) != NULL, "%s: want '%s' in: %s", name, sub, r.err);
        kw_t_free(&r);
        n++;
    }
    fclose(f);
    cr_assert_geq(n, 25);
}

Test(cli, bad_space_writes_nothing)
{
    char *dir = kw_t_tmpdir();
    char cmd[8192], out[4200];
    snprintf(out, sizeof out, "%s/run", dir);
    snprintf(cmd, sizeof cmd, "tune --space %s/tests/data/bad/EXPECTED --out %s --quiet", kw_t_src(), out);
    kw_run r = kw_t_run(cmd, NULL);
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(!kw_t_exists(out), "tune wrote %s on bad input", out);
    kw_t_free(&r);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}
