/* fuzz_measured.c - libFuzzer harness: `knobwise calibrate --measured`'s
 * kernel-times CSV (kw_fidelity_load), and every case it accepts costed on
 * the shipped H100 as the fit costs it (kw_fidelity_predict), so the reader's
 * ranges (m, n, k up to 1e9, tiles, cluster MxN, order mG/nG) are fuzzed into
 * the cost model. Contract: a refusal leaves a message; an accepted case has
 * its fields in the ranges the reader promises; a prediction is 0 with a
 * finite positive time or an error with a message. See kw_fuzz.h. */
#include <math.h>

#include "kw_fidelity.h"
#include "kw_fuzz.h"
#include "kw_load.h"

static kw_accel *kw_fz_h100;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = kw_fuzz_input("measured.csv", data, size);
    if (!kw_fz_h100) {
        char a[600];
        snprintf(a, sizeof a, "%s/accel/h100.xml", kw_fuzz_dir);
        kw_fz_h100 = calloc(1, sizeof *kw_fz_h100);
        if (!kw_fz_h100 || kw_load_accel(kw_fz_h100, a) != 0)
            abort(); /* the shipped file: no input of the fuzzer's */
    }
    kw_fid_set *set = calloc(1, sizeof *set);
    if (!set)
        abort();
    kw_error_clear();
    int rc = kw_fidelity_load(set, p);
    kw_fuzz_check_error(rc);
    for (int i = 0; rc == 0 && i < set->n; i++) {
        const kw_fid_case *c = &set->c[i];
        if (c->line < 1 || !(c->measured_us > 0.0) || c->tiling.tile_m < 1 ||
            c->tiling.tile_n < 1 || c->tiling.tile_k < 1 || c->tiling.stages < 1 ||
            c->source_key[0] == '\0')
            abort(); /* the reader accepted a row its contract forbids */
        double us = 0.0;
        kw_bound b;
        kw_error_clear();
        int prc = kw_fidelity_predict(&us, &b, NULL, kw_fz_h100, c);
        kw_fuzz_check_error(prc);
        if (prc == 0 && !(us > 0.0 && isfinite(us)))
            abort(); /* a time the fit cannot take the log of, without an error */
    }
    free(set);
    return 0;
}
