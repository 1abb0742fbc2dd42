/* fidelity.c - `make bench`'s fidelity table: every published H100
 * case of spaces/measured/h100_published.csv, its measured time, the model's
 * prediction on spaces/accel/h100.xml, their ratio and both bound classes.
 * Prints the share within 25% and whether every bound class is right; rows
 * marked FIT gave a figure of the accelerator file and are counted apart.
 * Usage: fidelity ACCEL.xml MEASURED.csv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_calib.h"
#include "kw_error.h"
#include "kw_fidelity.h"
#include "kw_load.h"

#define KW_FID_TOL 0.25
/* the citation column: the source's first clause, cut to this many characters */
#define KW_FID_CITE_CHARS 58
#define KW_FID_HELD_TOL 0.10

/* Held out: calibrate on the cases whose index has parity `fit_parity`, judge
 * the others. Both halves are run: the CSV's order puts every DeepGEMM row with
 * K = 7168 and a narrow N tile (16, 32) among the odd-numbered cases, so the
 * even-numbered fit never sees the rows on which one DRAM fraction fails. */
static void kw_fid_held_out(const kw_accel *a, const kw_fid_set *set, int fit_parity)
{
    const char *fit_name = fit_parity == 0 ? "even" : "odd";
    int use[KW_FID_MAX] = {0};
    for (int i = 0; i < set->n; i++)
        use[i] = i % 2 == fit_parity;
    kw_accel fitted = *a;
    kw_calib *cal = malloc(sizeof *cal);
    if (cal && kw_calib_fit(cal, &fitted, set, use, (1u << KW_CAL_COUNT) - 1u, 0) == 0) {
        int held = 0, in10 = 0;
        printf("\nafter calibrate on the %d %s-numbered cases, the held-out ones:\n", cal->n_used,
               fit_name);
        for (int id = 0; id < KW_CAL_COUNT; id++)
            if (cal->p[id].fitted)
                printf("  fitted %-22s %10.4f +- %.4f (was %.4f)\n", cal->p[id].name,
                       cal->p[id].after, cal->p[id].sigma, cal->p[id].before);
        for (int i = 1 - fit_parity; i < set->n; i += 2) {
            double r = cal->after_ratio[i];
            int ok = fabs(r - 1.0) <= KW_FID_HELD_TOL;
            printf("  %-26s before %7.3f after %7.3f %s\n", set->c[i].name, cal->before_ratio[i], r,
                   ok ? "" : "MISS");
            held++;
            in10 += ok;
        }
        printf("held-out within 10%% (fit on the %s-numbered): %d of %d\n", fit_name, in10, held);
    } else {
        printf("\ncalibrate on the %s-numbered cases failed: %s\n", fit_name, kw_error_last());
    }
    free(cal);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fidelity ACCEL.xml MEASURED.csv\n");
        return 2;
    }
    kw_accel a;
    kw_fid_set *set = malloc(sizeof *set);
    if (!set)
        return 1;
    if (kw_accel_load(&a, argv[1]) != 0 || kw_fid_load(set, argv[2]) != 0) {
        fprintf(stderr, "%s\n", kw_error_last());
        free(set);
        return 2;
    }
    printf("fidelity: %s against %s\n", argv[1], argv[2]);
    printf("%-26s %12s %12s %7s %-8s %-8s %-9s %s\n", "case", "measured_us", "predicted_us", "ratio",
           "bound", "model", "note", "source");
    int n = 0, within = 0, bound_ok = 0, nfit = 0;
    for (int i = 0; i < set->n; i++) {
        const kw_fid_case *c = &set->c[i];
        double us = 0.0;
        kw_bound b = KW_BOUND_COMPUTE;
        kw_kernel kd;
        if (kw_fid_predict(&us, &b, &kd, &a, c) != 0) {
            printf("%-26s %12.1f %12s %7s %-8s %-8s %s\n", c->name, c->measured_us, "-", "-",
                   kw_bound_name(c->bound), "error", kw_error_last());
            n++;
            continue;
        }
        double r = us / c->measured_us;
        int ok = fabs(r - 1.0) <= KW_FID_TOL;
        char note[16];
        snprintf(note, sizeof note, "%s%s", ok ? "" : "MISS ", c->fit ? "FIT" : "");
        printf("%-26s %12.1f %12.1f %7.3f %-8s %-8s %-9s %.*s\n", c->name, c->measured_us, us, r,
               kw_bound_name(c->bound), kw_bound_name(b), note,
               (int)fmin((double)strcspn(c->source, ";"), KW_FID_CITE_CHARS), c->source);
        if (getenv("KW_FID_VERBOSE"))
            printf("    matrix %.1f nonmatrix %.1f compute %.1f | dram %.1f us (%.6g GB) shared %.1f us "
                   "(%.6g GB) | sram %llu B regs %llu B wave %.3f pad %.3f\n",
                   kd.matrix_us, kd.nonmatrix_us, kd.compute_us, kd.dram_us, kd.dram_bytes / 1e9,
                   kd.shared_us, kd.shared_bytes / 1e9, (unsigned long long)kd.sram_bytes,
                   (unsigned long long)kd.reg_bytes, kd.wave_efficiency, kd.pad_efficiency);
        if (c->fit) {
            nfit++;
            continue;
        }
        n++;
        within += ok;
        bound_ok += b == c->bound;
    }
    printf("independent cases %d (+%d FIT): within 25%% %d (%.0f%%), bound class right %d of %d\n", n,
           nfit, within, n ? 100.0 * within / n : 0.0, bound_ok, n);
    kw_fid_held_out(&a, set, 0);
    kw_fid_held_out(&a, set, 1);
    free(set);
    return 0;
}
