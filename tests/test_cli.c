/* test_cli.c - end-to-end tests of the knobwise command that need more than
 * a data row: the CSV contracts of show and eval checked row by row, the
 * stdin protocol, and every file of the bad-input corpus refused with its file
 * and line. The simple cases (exit codes, messages, help, usage errors) are
 * rows of tests/cli.manifest, run by tests/test_manifest.c. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kw_sbuf.h"
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


/* Every verb's --seed takes the range tune records (kw_cli_parse_seed): audit
 * prints `knobwise eval --seed N ...` to reproduce each step, and eval refused
 * N above 2^31 - 1 (exit 2) for a run tune had accepted. */
/* knobwise ARGS must exit 0; its stdout (the caller frees it). */
static char *kw_t_ok(const char *args)
{
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
    char *out = strdup(r.out ? r.out : "");
    kw_tl_free(&r);
    return out;
}

Test(cli, audits_reproduce_command_runs_for_every_seed_tune_takes)
{
    char *dir = kw_tl_tmpdir("kwcli");
    cr_assert(dir != NULL);
    char args[8192];
    snprintf(args, sizeof args, "tune --space '%s/spaces/validate_small.xml' --budget 10 "
             "--seed 4294967297 --out '%s/run' --quiet", kw_tl_src(), dir);
    free(kw_t_ok(args));
    snprintf(args, sizeof args, "audit '%s/run'", dir);
    char *audit = kw_t_ok(args);
    const char *rep = strstr(audit, "reproduce: knobwise eval ");
    cr_assert(rep != NULL, "%s", audit);
    rep += strlen("reproduce: knobwise ");
    snprintf(args, sizeof args, "%.*s", (int)strcspn(rep, "\n"), rep);
    free(audit);
    cr_assert(strstr(args, "--seed 4294967297 ") != NULL, "%s", args);
    free(kw_t_ok(args));
    snprintf(args, sizeof args, "verify '%s/run' --seed 4294967297 --sample 2", dir);
    free(kw_t_ok(args));
    kw_tl_proc r;
    /* one past the range is refused by every verb alike */
    static const char *const verbs[] = {"tune --budget 1 --out x", "eval", "verify x",
                                        "bisect baseline baseline --shape s"};
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        snprintf(args, sizeof args, "%s --seed 9223372036854775808", verbs[i]);
        r = kw_tl_sh(args, NULL);
        cr_expect_eq(r.status, 2, "%s: %s", args, r.err);
        cr_expect(strstr(r.err, "--seed takes a whole number from 0 to 9223372036854775807") != NULL,
                  "%s: %s", args, r.err);
        kw_tl_free(&r);
    }
    kw_tl_rmrf(dir);
}

/* The commands audit and results.xml print to reproduce a step are shell
 * words whatever the recorded paths hold, and audit's header carries no
 * control byte: a space file under "my runs;touch pwned'" was printed as it
 * was, so the pasted reproduce line ran `touch` (here: failed on the split
 * words), and --owner $'\e]0;...\a' went to the terminal as an escape
 * sequence (recommend's "owner:" line still did on main 493b482). Fails on
 * main ee68dbf's binary (the reproduce line exits 2). */
Test(cli, reproduce_commands_are_shell_words_whatever_the_paths_hold)
{
    KW_TL_HANG_GUARD(120);
    char *dir = kw_tl_tmpdir("kwcli");
    cr_assert(dir != NULL);
    char sub[1200], args[8192];
    cr_assert(strlen(dir) < 1000);
    snprintf(sub, sizeof sub, "%.1000s/my runs;touch pwned'", dir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    /* the space and the two files it names, copied under the hostile folder */
    snprintf(args, sizeof args, "mkdir \"%s/accel\" \"%s/workloads\" && cp '%s/spaces/validate_small.xml' "
             "\"%s/s.xml\" && cp '%s/spaces/accel/h100.xml' \"%s/accel/\" && cp "
             "'%s/spaces/workloads/llama7b.xml' \"%s/workloads/\"", sub, sub, kw_tl_src(), sub,
             kw_tl_src(), sub, kw_tl_src(), sub);
    cr_assert_eq(system(args), 0, "%s", args);
    snprintf(args, sizeof args, "tune --space \"%s/s.xml\" --budget 10 --out '%s/run' --quiet "
             "--owner 'ops\033]0;owned\007'", sub, dir);
    free(kw_t_ok(args));
    snprintf(args, sizeof args, "audit '%s/run'", dir);
    char *audit = kw_t_ok(args);
    cr_assert(strchr(audit, '\033') == NULL && strchr(audit, '\007') == NULL,
              "a control byte reaches the terminal: %s", audit);
    cr_assert(strstr(audit, "owner ops?]0;owned?") != NULL, "%.200s", audit);
    /* recommend prints the owner too (main 493b482 printed it raw) */
    snprintf(args, sizeof args, "recommend '%s/run' --shape attn_prefill_s2048_b1_c2", dir);
    char *rec = kw_t_ok(args);
    cr_assert(strchr(rec, '\033') == NULL && strchr(rec, '\007') == NULL,
              "a control byte reaches the terminal: %s", rec);
    cr_assert(strstr(rec, "owner: ops?]0;owned?\n") != NULL, "%s", rec);
    free(rec);
    const char *rep = strstr(audit, "reproduce: knobwise eval ");
    cr_assert(rep != NULL, "%s", audit);
    rep += strlen("reproduce: knobwise ");
    snprintf(args, sizeof args, "%.*s", (int)strcspn(rep, "\n"), rep);
    free(audit);
    free(kw_t_ok(args));
    /* results.xml's reproduce attribute: the same rule (read back as text) */
    snprintf(args, sizeof args, "%s/run/results.xml", dir);
    char *xml = kw_tl_slurp(args);
    cr_assert_not_null(xml);
    rep = strstr(xml, "reproduce=\"knobwise eval ");
    cr_assert(rep != NULL);
    rep += strlen("reproduce=\"knobwise ");
    kw_sbuf cmd = {0};
    for (const char *p = rep; *p && *p != '"'; p++) { /* the writer's five entities */
        static const char *const ent[][2] = {
            {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}};
        size_t k = 0;
        while (k < 5 && strncmp(p, ent[k][0], strlen(ent[k][0])) != 0)
            k++;
        if (k < 5) {
            kw_sbuf_puts(&cmd, ent[k][1]);
            p += strlen(ent[k][0]) - 1;
        } else
            kw_sbuf_putn(&cmd, p, 1);
    }
    free(kw_t_ok(kw_sbuf_cstr(&cmd)));
    kw_sbuf_free(&cmd);
    free(xml);
    kw_tl_rmrf(dir);
}
