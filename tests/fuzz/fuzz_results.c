/* fuzz_results.c - libFuzzer harness: a run folder's results.xml, read the
 * way `recommend`, `report` and `audit` read it (kw_results_read: libxml2's
 * streaming reader over RUN/results.xml, the re-checks, the ranking notes and
 * one shape's claim), and the way `verify` reads it (kw_results_read_mem).
 * A run folder is anyone's to edit, so its results.xml is input like the
 * others: a damaged file or one with a DOCTYPE must be refused with a
 * message, never crash or read what lies past the damage. The first input
 * byte picks the claimed shape (the validate_small run's two, or none).
 * See kw_fuzz.h. */
#include "kw_fuzz.h"
#include "kw_results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const shapes[] = {"attn_prefill_s2048_b1_c2", "attn_decode_kv2048_b32_c16",
                                         NULL};
    const char *shape = size > 0 ? shapes[data[0] % 3] : NULL;
    const uint8_t *xml = size > 0 ? data + 1 : data;
    size_t len = size > 0 ? size - 1 : 0;
    kw_fuzz_input("results.xml", xml, len);
    kw_results_claim claim;
    kw_results_want w = {.claim_shape = shape, .claim = shape ? &claim : NULL};
    kw_error_clear();
    int rc = kw_results_read(&w, kw_fuzz_dir);
    kw_fuzz_check_error(rc);
    if (rc == 0 && shape) {
        if (claim.n_criteria < 0)
            abort();
        kw_results_claim_free(&claim);
    }
    kw_error_clear();
    rc = kw_results_read_mem(&w, (const char *)xml, len, "results.xml");
    kw_fuzz_check_error(rc);
    if (rc == 0 && shape)
        kw_results_claim_free(&claim);
    return 0;
}
