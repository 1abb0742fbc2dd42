/* fuzz_workload.c - libFuzzer harness: a workload file, loaded alone and as
 * the override of the embedded default job. See kw_fuzz.h. */
#include "kw_fuzz.h"
#include "kw_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = kw_fuzz_input("workload.xml", data, size);
    kw_workload *w = calloc(1, sizeof *w);
    kw_error_clear();
    int ok = kw_load_workload(w, p) == 0;
    kw_fuzz_check_error(ok ? 0 : -1);
    free(w);
    if (!ok)
        return 0; /* the override path below would fail the same way, three schemas slower */
    kw_config *c = NULL;
    kw_error_clear();
    int rc = kw_load_config(&c, NULL, NULL, p);
    kw_fuzz_check_error(rc);
    kw_load_config_free(c);
    return 0;
}
