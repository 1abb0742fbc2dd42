/* test_calib_cpu.c - `knobwise calibrate --space`: a CPU file's rates fitted
 * to measured mappings (src/run/kw_calib_cpu.c).
 *
 * The fit is checked for what it must do: measurements made by a known
 * accelerator (the shipped CPU host with its fp32 and bf16 rates, its
 * private-cache and its L1 bandwidth changed by stated factors) are fitted from the
 * unchanged file, and the fit must recover those factors; a bad CSV is a
 * "FILE:LINE: message" input error; a GPU file is refused; the command
 * writes a file that loads and carries the fitted rates.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "kw_calib_cpu.h"
#include "kw_error.h"
#include "kw_load.h"
#include "lib/kw_tl.h"

#define TRUE_FP32 0.6  /* the "measured" host's fp32 rate / the file's */
#define TRUE_BF16 1.3
#define TRUE_SRAM 1.5
#define TRUE_L1 0.7    /* <cpu l1_gb_s>: the in-place strided re-reads' rate */

static kw_config *cfg;
static char dir[] = "/tmp/kw-ccal-XXXXXX";

static void setup(void)
{
    char space[2048];
    snprintf(space, sizeof space, "%s/spaces/cpu_gemm_epilogue.xml", kw_tl_src());
    cr_assert_eq(kw_load_config(&cfg, space, NULL, NULL), 0, "%s", kw_error_last());
    cr_assert(mkdtemp(dir) != NULL);
}

static void teardown(void)
{
    kw_load_config_free(cfg);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(calib_cpu, .init = setup, .fini = teardown);

/* 120 random mappings over both shapes, "measured" on the changed host. */
static void write_csv(const char *path, const kw_accel *truth)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "shape,config_id,predicted_us,measured_us,knobs\n");
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    const kw_knobspace *ks = &cfg->space.knobs;
    for (int i = 0; i < 120; i++) {
        kw_ccal_row row = {.shape = i % cfg->space.n_shapes};
        for (int k = 0; k < ks->n_knobs; k++)
            row.cand.v[k] = (uint8_t)gsl_rng_uniform_int(r, (unsigned long)ks->knobs[k].n_values);
        double us;
        cr_assert_eq(kw_calib_cpu_predict(&us, cfg, truth, &row), 0, "%s", kw_error_last());
        char knobs[2048];
        kw_knobs_cand_format(knobs, sizeof knobs, ks, &row.cand);
        for (char *p = knobs; *p; p++)
            if (*p == ' ')
                *p = ';';
        const kw_shape *s = &cfg->workload.shapes[cfg->space.shapes[row.shape]];
        fprintf(f, "%s,x,0,%.6f,%s\n", s->name, us, knobs);
    }
    gsl_rng_free(r);
    fclose(f);
}

Test(calib_cpu, recovers_the_rates_of_the_host_that_measured)
{
    kw_accel truth = cfg->accel;
    truth.peak_flops[KW_PREC_FP32] *= TRUE_FP32;
    truth.peak_flops[KW_PREC_BF16] *= TRUE_BF16;
    truth.sram_bw_bytes_per_s *= TRUE_SRAM;
    truth.cpu_l1_bw_bytes_per_s *= TRUE_L1;
    char csv[512];
    snprintf(csv, sizeof csv, "%s/m.csv", dir);
    write_csv(csv, &truth);
    kw_ccal_set *set = malloc(sizeof *set);
    cr_assert(set);
    cr_assert_eq(kw_calib_cpu_load(set, csv, cfg), 0, "%s", kw_error_last());
    cr_assert_eq(set->n, 120);
    kw_accel a = cfg->accel;
    kw_ccal cal;
    cr_assert_eq(kw_calib_cpu_fit(&cal, &a, cfg, set), 0, "%s", kw_error_last());
    cr_assert(cal.fitted[KW_CCAL_FP32] && cal.fitted[KW_CCAL_BF16] && cal.fitted[KW_CCAL_SRAM_BW]);
    cr_assert_float_eq(a.peak_flops[KW_PREC_FP32] / cfg->accel.peak_flops[KW_PREC_FP32], TRUE_FP32,
                       0.01 * TRUE_FP32);
    cr_assert_float_eq(a.peak_flops[KW_PREC_BF16] / cfg->accel.peak_flops[KW_PREC_BF16], TRUE_BF16,
                       0.01 * TRUE_BF16);
    cr_assert_float_eq(a.sram_bw_bytes_per_s / cfg->accel.sram_bw_bytes_per_s, TRUE_SRAM,
                       0.01 * TRUE_SRAM);
    cr_assert(cal.fitted[KW_CCAL_L1_BW]);
    cr_assert_float_eq(a.cpu_l1_bw_bytes_per_s / cfg->accel.cpu_l1_bw_bytes_per_s, TRUE_L1,
                       0.01 * TRUE_L1);
    cr_assert(cal.chi2_after < 1e-6 * cal.chi2_before, "%g vs %g", cal.chi2_after, cal.chi2_before);
    free(set);
}

Test(calib_cpu, the_command_writes_a_file_with_the_fitted_rates)
{
    kw_accel truth = cfg->accel;
    truth.peak_flops[KW_PREC_FP32] *= TRUE_FP32;
    truth.cpu_l1_bw_bytes_per_s *= TRUE_L1;
    char csv[512], out[512], cmd[4096];
    snprintf(csv, sizeof csv, "%s/m.csv", dir);
    snprintf(out, sizeof out, "%s/cal.xml", dir);
    write_csv(csv, &truth);
    snprintf(cmd, sizeof cmd,
             "'%s' calibrate --space '%s/spaces/cpu_gemm_epilogue.xml' --accel "
             "'%s/spaces/accel/cpu_host.xml' --measured '%s' -o '%s' >/dev/null",
             kw_tl_bin(), kw_tl_src(), kw_tl_src(), csv, out);
    cr_assert_eq(system(cmd), 0);
    kw_accel a;
    cr_assert_eq(kw_load_accel(&a, out), 0, "%s", kw_error_last());
    cr_assert_float_eq(a.peak_flops[KW_PREC_FP32] / cfg->accel.peak_flops[KW_PREC_FP32], TRUE_FP32,
                       0.01 * TRUE_FP32);
    cr_assert_float_eq(a.cpu_l1_bw_bytes_per_s / cfg->accel.cpu_l1_bw_bytes_per_s, TRUE_L1,
                       0.01 * TRUE_L1); /* written to <cpu l1_gb_s> */
    cr_assert_eq(a.cpu, 1);
}

Test(calib_cpu, a_bad_row_is_an_input_error_with_its_line)
{
    char csv[512];
    snprintf(csv, sizeof csv, "%s/bad.csv", dir);
    FILE *f = fopen(csv, "w");
    cr_assert(f);
    fprintf(f, "shape,config_id,predicted_us,measured_us,knobs\n"
               "fc_decode_b16,x,0,12.5,fc.tile_m=16\n"
               "nosuch,x,0,12.5,fc.tile_m=16\n");
    fclose(f);
    kw_ccal_set *set = malloc(sizeof *set);
    cr_assert(set);
    cr_assert_eq(kw_calib_cpu_load(set, csv, cfg), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "bad.csv:3:") != NULL, "%s", kw_error_last());
    f = fopen(csv, "w");
    fprintf(f, "shape,config_id,predicted_us,measured_us,knobs\nfc_decode_b16,x,0,-1,fc.tile_m=16\n");
    fclose(f);
    cr_assert_eq(kw_calib_cpu_load(set, csv, cfg), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "bad.csv:2:") != NULL, "%s", kw_error_last());
    f = fopen(csv, "w");
    fprintf(f, "case,kind\n");
    fclose(f);
    cr_assert_eq(kw_calib_cpu_load(set, csv, cfg), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "bad.csv:1: header") != NULL, "%s", kw_error_last());
    free(set);
}

Test(calib_cpu, a_gpu_file_is_refused)
{
    kw_accel a = cfg->accel;
    a.cpu = 0;
    kw_ccal_set *set = malloc(sizeof *set);
    cr_assert(set);
    set->n = 0;
    kw_ccal cal;
    cr_assert_eq(kw_calib_cpu_fit(&cal, &a, cfg, set), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "not a CPU file") != NULL, "%s", kw_error_last());
    free(set);
}

/* measured_us in the kernel cases' range (1e-9 to 1e12 us, as calibrate
 * without --space reads them): main 880a621 took 1e300 on every second row of
 * the 120 mappings, and the fit drove a rate to 0 (exp underflowing), whose
 * storage then read as "no such figure" (NULL): `calibrate --space`
 * segfaulted. Now exit 2 naming the file and line, nothing written. */
Test(calib_cpu, a_time_no_kernel_takes_is_refused_with_its_line)
{
    kw_accel truth = cfg->accel;
    char csv[512], big[512], out[512], cmd[4096];
    snprintf(csv, sizeof csv, "%s/m.csv", dir);
    snprintf(big, sizeof big, "%s/big.csv", dir);
    snprintf(out, sizeof out, "%s/cal.xml", dir);
    write_csv(csv, &truth);
    FILE *in = fopen(csv, "r"), *f = fopen(big, "w");
    cr_assert(in && f);
    char line[4096];
    for (int ln = 1; fgets(line, sizeof line, in); ln++) {
        char *c[4] = {NULL}, *p = line; /* the 4th comma ends measured_us */
        for (int i = 0; i < 4 && p; i++)
            p = c[i] = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
        if (ln > 1 && ln % 2 == 0 && c[3]) /* rows 2, 4, ...: 1e300 */
            fprintf(f, "%.*s1e300,%s", (int)(c[2] - line), line, c[3]);
        else
            fputs(line, f);
    }
    fclose(in);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "'%s' calibrate --space '%s/spaces/cpu_gemm_epilogue.xml' --accel "
             "'%s/spaces/accel/cpu_host.xml' --measured '%s' -o '%s' >/dev/null 2>'%s/err'",
             kw_tl_bin(), kw_tl_src(), kw_tl_src(), big, out, dir);
    int st = system(cmd);
    char errp[600], msg[1024] = "";
    snprintf(errp, sizeof errp, "%s/err", dir);
    FILE *e = fopen(errp, "r");
    if (e) {
        size_t n = fread(msg, 1, sizeof msg - 1, e);
        msg[n] = '\0';
        fclose(e);
    }
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d: %s", st, msg);
    cr_assert(strstr(msg, "big.csv:2: measured_us '1e300'") != NULL, "%s", msg);
    cr_assert_eq(access(out, F_OK), -1, "nothing written");
}
