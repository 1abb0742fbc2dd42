/* fuzz_journal.c - libFuzzer harness: a run journal, read the way `knobwise
 * verify`, `audit`, `recommend` and `--resume` read it: load (checksums,
 * torn tail), semantic check, every shape's result. Random bytes rarely carry
 * valid chained CRC-32s, so inputs whose first byte is odd are resealed
 * (kw_journal_reseal recomputes every checksum) before loading: the record
 * parser and the semantic checks are then fuzzed past the checksum gate.
 * See kw_fuzz.h. */
#include "kw_fuzz.h"
#include "kw_journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int reseal = size > 0 && (data[0] & 1);
    const char *p = kw_fuzz_input("journal", size > 0 ? data + 1 : data, size > 0 ? size - 1 : 0);
    kw_error_clear();
    if (reseal && kw_journal_reseal(p) != 0)
        return 0;
    kw_journal *j = NULL;
    kw_error_clear();
    int rc = kw_journal_load(&j, p);
    kw_fuzz_check_error(rc);
    if (rc != 0)
        return 0;
    if (j->good_bytes > j->file_bytes || j->n_records < 0)
        abort();
    kw_error_clear();
    kw_fuzz_check_error(kw_journal_check(j));
    for (int s = 0; s < j->h.n_shapes; s++) {
        kw_jresult r;
        memset(&r, 0, sizeof r);
        if (kw_journal_shape_result(&r, j, s) == 0)
            kw_journal_result_clear(&r);
        kw_jstats st;
        if (j->n_evals > 0)
            (void)kw_journal_stats(&st, j, s, j->evals[0].id);
    }
    kw_journal_free(j);
    return 0;
}
