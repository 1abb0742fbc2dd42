/* fuzz_space.c - libFuzzer harness: a space file, loaded with the accelerator
 * and workload it names (the shipped ones sit next to it), then validated by
 * root element as `knobwise validate` does. See kw_fuzz.h. */
#include "kw_fuzz.h"
#include "kw_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = kw_fuzz_input("space.xml", data, size);
    kw_config *c = NULL;
    kw_error_clear();
    int rc = kw_load_config(&c, p, NULL, NULL);
    kw_fuzz_check_error(rc);
    if (rc == 0 && c == NULL)
        abort();
    kw_load_config_free(c);
    if (rc != 0)
        return 0; /* validate would fail the same way */
    kw_error_clear();
    kw_fuzz_check_error(kw_load_validate_file(p));
    return 0;
}
