/* test_probe.c - `knobwise probe`: the file it writes validates against
 * spaces/accelerator.xsd and loads as an accelerator that the shipped CPU
 * spaces evaluate on; the cache sizes come from sysfs exactly (a fake sysfs
 * tree with known sizes, read back from the file); -o never replaces a file
 * without --force, with it only probe's own output, never writes through a non-regular file, and a bad output
 * or name is refused before anything is measured. Measured figures are only
 * checked to be positive numbers: they are rates of a shared machine. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/kw_tl.h"

static char *dir;

static void setup(void)
{
    dir = kw_tl_tmpdir("kwtest");
    cr_assert_not_null(dir);
    unsetenv("KW_PROBE_SYSFS");
}

static void teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) { /* best effort */ }
    free(dir);
}

TestSuite(probe, .init = setup, .fini = teardown);

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* A sysfs cpu folder with cpu0/cache/index0..3: L1d 32K, L1i 32K, L2 256K
 * (per CPU), L3 2M shared by CPUs 0-3; line 128 bytes. Small on purpose: the
 * DRAM working set (4x the last level) stays small and the probe fast. */
static void fake_sysfs(const char *root)
{
    static const char *lv[] = {"1", "1", "2", "3"}, *ty[] = {"Data", "Instruction", "Unified", "Unified"},
                      *sz[] = {"32K", "32K", "256K", "2048K"}, *sh[] = {"0", "0", "0", "0-3"};
    char p[1024];
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "mkdir -p '%s/cpu0/cache/index%d'", root, i);
        cr_assert_eq(system(p), 0);
        const char *files[] = {"level", "type", "size", "shared_cpu_list", "coherency_line_size"};
        const char *vals[] = {lv[i], ty[i], sz[i], sh[i], "128"};
        for (int f = 0; f < 5; f++) {
            snprintf(p, sizeof p, "%s/cpu0/cache/index%d/%s", root, i, files[f]);
            char v[64];
            snprintf(v, sizeof v, "%s\n", vals[f]);
            put(p, v);
        }
    }
}

Test(probe, writes_a_valid_accelerator_from_the_sysfs_it_reads)
{
    char root[512], out[512], args[2048];
    snprintf(root, sizeof root, "%s/sys", dir);
    snprintf(out, sizeof out, "%s/host.xml", dir);
    fake_sysfs(root);
    setenv("KW_PROBE_SYSFS", root, 1);
    snprintf(args, sizeof args, "probe --quick --name test_host -o '%s'", out);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    unsetenv("KW_PROBE_SYSFS");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *xml = kw_tl_slurp(out);
    /* the sizes of the fake tree, exactly; L2 as the SRAM per unit; its line size */
    cr_expect(strstr(xml, "<accelerator name=\"test_host\">") != NULL, "%s", xml);
    cr_expect(strstr(xml, "L1 Data: 32 KiB per instance, shared by 1 CPUs") != NULL, "%s", xml);
    cr_expect(strstr(xml, "L2 Unified: 256 KiB per instance, shared by 1 CPUs") != NULL, "%s", xml);
    cr_expect(strstr(xml, "L3 Unified: 2048 KiB per instance, shared by 4 CPUs") != NULL, "%s", xml);
    cr_expect(strstr(xml, "Instruction") == NULL, "instruction caches are not data levels");
    cr_expect(strstr(xml, "sram_kib_per_unit=\"256\"") != NULL, "%s", xml);
    cr_expect(strstr(xml, "dram_burst_bytes=\"128\"") != NULL, "%s", xml);
    /* the level shared by several CPUs becomes a shared storage level: 2048 KiB = 2 MiB per
     * instance, one instance for up to 4 CPUs (this host has fewer) */
    cr_expect(strstr(xml, "<level name=\"L3\" kind=\"shared\" mib=\"2.000\"") != NULL, "%s", xml);
    cr_expect(strstr(xml, "<level name=\"L2\"") == NULL, "per-core L2 is the SRAM, not a shared level");
    /* both peaks measured and positive */
    const char *p = strstr(xml, "precision=\"fp32\" tflops=\"");
    cr_assert_not_null(p, "%s", xml);
    cr_expect_gt(atof(p + strlen("precision=\"fp32\" tflops=\"")), 0.0);
    p = strstr(xml, "precision=\"bf16\" tflops=\"");
    cr_assert_not_null(p, "%s", xml);
    cr_expect_gt(atof(p + strlen("precision=\"bf16\" tflops=\"")), 0.0);
    /* the first data cache's streaming figure goes to <cpu l1_gb_s> (the CPU rules' in-place re-reads) */
    p = strstr(xml, "l1_gb_s=\"");
    cr_assert_not_null(p, "%s", xml);
    cr_expect_gt(atof(p + strlen("l1_gb_s=\"")), 0.0);
    free(xml);
    kw_tl_free(&r);
    /* knobwise validate accepts it, and the shipped CPU space evaluates on it */
    snprintf(args, sizeof args, "validate '%s'", out);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    snprintf(args, sizeof args, "eval --space '%s/spaces/cpu_gemm_epilogue.xml' --accel '%s' --format csv",
             kw_tl_src(), out);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "fc_prefill_s128_b2,") != NULL, "%s", r.out);
    kw_tl_free(&r);
}

/* The CPU's model name (from /proc/cpuinfo; KW_PROBE_CPUINFO points the test
 * elsewhere) is text in the file's <source>, not markup: a name holding "&"
 * and "<" comes back as it was (the code before passed it to xmlNewChild,
 * which parses its content as markup: "&" began an entity reference and the
 * name was mangled), and "--" cannot end the file's comment early. */
Test(probe, a_cpu_model_name_with_markup_characters_is_kept_as_text)
{
    char root[512], info[512], out[512], args[2048];
    snprintf(root, sizeof root, "%s/sys", dir);
    snprintf(info, sizeof info, "%s/cpuinfo", dir);
    snprintf(out, sizeof out, "%s/host.xml", dir);
    fake_sysfs(root);
    put(info, "processor\t: 0\nmodel name\t: Acme & Co <R> -- 9000\ncpu MHz\t\t: 2000.000\n");
    setenv("KW_PROBE_SYSFS", root, 1);
    setenv("KW_PROBE_CPUINFO", info, 1);
    snprintf(args, sizeof args, "probe --quick --name amp_host -o '%s'", out);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    unsetenv("KW_PROBE_SYSFS");
    unsetenv("KW_PROBE_CPUINFO");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_null(strstr(r.err, "error"), "%s", r.err);
    kw_tl_free(&r);
    char *xml = kw_tl_slurp(out);
    cr_expect(strstr(xml, "<source>knobwise probe on Acme &amp; Co &lt;R&gt; -- 9000 (") != NULL,
              "%s", xml);
    free(xml);
    snprintf(args, sizeof args, "validate '%s'", out);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
}

Test(probe, this_host_to_stdout)
{
    kw_tl_proc r = kw_tl_sh("probe --quick", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "<accelerator name=\"cpu_host\">") != NULL);
    cr_expect(strstr(r.err, "probe: fp32 ") != NULL, "%s", r.err);
    kw_tl_free(&r);
}

Test(probe, refuses_to_replace_without_force)
{
    char root[512], out[512], args[2048];
    snprintf(root, sizeof root, "%s/sys", dir);
    snprintf(out, sizeof out, "%s/keep.xml", dir);
    fake_sysfs(root);
    put(out, "precious\n");
    snprintf(args, sizeof args, "probe --quick -o '%s'", out);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "--force") != NULL, "%s", r.err);
    char *text = kw_tl_slurp(out);
    cr_expect_str_eq(text, "precious\n");
    free(text);
    kw_tl_free(&r);
    /* --force replaces only probe's own output: "precious" and an accelerator
     * file that runs read (a copy of the shipped h100.xml) are kept, as a
     * file outside every run folder may be another run's input (probe -o
     * ACCEL --force replaced it) */
    setenv("KW_PROBE_SYSFS", root, 1);
    char h100[600], *shipped = NULL;
    snprintf(h100, sizeof h100, "%s/spaces/accel/h100.xml", kw_tl_src());
    shipped = kw_tl_slurp(h100);
    cr_assert_not_null(shipped);
    char acc[600];
    snprintf(acc, sizeof acc, "%s/h100.xml", dir);
    put(acc, shipped);
    const char *targets[] = {out, acc}, *before[] = {"precious\n", shipped};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "probe --quick --force -o '%s'", targets[i]);
        r = kw_tl_sh(args, NULL);
        cr_expect_eq(r.status, 2, "%s", r.err);
        cr_expect(strstr(r.err, "not a file knobwise probe wrote") != NULL, "%s", r.err);
        kw_tl_free(&r);
        text = kw_tl_slurp(targets[i]);
        cr_expect_str_eq(text, before[i]);
        free(text);
    }
    free(shipped);
    /* probe's own earlier output: replaced */
    char mine[600];
    snprintf(mine, sizeof mine, "%s/host.xml", dir);
    snprintf(args, sizeof args, "probe --quick -o '%s' --name first", mine);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    snprintf(args, sizeof args, "probe --quick --force -o '%s' --name second", mine);
    r = kw_tl_sh(args, NULL);
    unsetenv("KW_PROBE_SYSFS");
    cr_expect_eq(r.status, 0, "%s", r.err);
    text = kw_tl_slurp(mine);
    cr_expect(strstr(text, "<accelerator name=\"second\"") != NULL, "%.200s", text);
    free(text);
    kw_tl_free(&r);
}

Test(probe, bad_output_and_names_are_refused_before_measuring)
{
    char args[2048];
    /* not a regular file, even with --force */
    kw_tl_proc r = kw_tl_sh("probe --quick --force -o /dev/null", NULL);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "not a regular file") != NULL, "%s", r.err);
    kw_tl_free(&r);
    /* a folder that does not exist: nothing created */
    snprintf(args, sizeof args, "probe --quick -o '%s/no/such/dir/x.xml'", dir);
    r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "does not exist") != NULL, "%s", r.err);
    kw_tl_free(&r);
    char p[600];
    snprintf(p, sizeof p, "%s/no", dir);
    cr_expect(!kw_tl_exists(p));
    /* names the schema would refuse */
    r = kw_tl_sh("probe --quick --name '9lives'", NULL);
    cr_expect_eq(r.status, 2);
    kw_tl_free(&r);
    r = kw_tl_sh("probe --quick extra", NULL);
    cr_expect_eq(r.status, 2);
    kw_tl_free(&r);
}

Test(probe, a_host_without_cache_description_is_an_error)
{
    char root[512];
    snprintf(root, sizeof root, "%s/empty", dir);
    cr_assert_eq(mkdir(root, 0700), 0);
    setenv("KW_PROBE_SYSFS", root, 1);
    kw_tl_proc r = kw_tl_sh("probe --quick", NULL);
    unsetenv("KW_PROBE_SYSFS");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "no data cache described") != NULL, "%s", r.err);
    cr_expect_str_eq(r.out, "");
    kw_tl_free(&r);
}

Test(probe, shipped_cpu_spaces_validate_and_evaluate)
{
    char args[2048];
    snprintf(args, sizeof args,
             "validate '%s/spaces/cpu_gemm_epilogue.xml' '%s/spaces/cpu_attention.xml' "
             "'%s/spaces/accel/cpu_host.xml' '%s/spaces/workloads/cpu_kernels.xml'",
             kw_tl_src(), kw_tl_src(), kw_tl_src(), kw_tl_src());
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    static const char *spaces[] = {"cpu_gemm_epilogue", "cpu_attention"};
    static const char *shapes[][2] = {{"fc_prefill_s128_b2", "fc_decode_b16"},
                                      {"attn_prefill_s512_b1", "attn_decode_kv2048_b4"}};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "eval --space '%s/spaces/%s.xml' --format csv", kw_tl_src(), spaces[i]);
        r = kw_tl_sh(args, NULL);
        cr_expect_eq(r.status, 0, "%s", r.err);
        for (int s = 0; s < 2; s++) {
            char want[128];
            snprintf(want, sizeof want, "\n%s,", shapes[i][s]);
            cr_expect(strstr(r.out, want) != NULL, "%s: no row for %s:\n%s", spaces[i], shapes[i][s], r.out);
        }
        cr_expect(strstr(r.out, ",pass,") != NULL, "%s: the baseline fails a guard:\n%s", spaces[i], r.out);
        kw_tl_free(&r);
    }
}
