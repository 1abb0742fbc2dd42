/* fuzz_trace.c - libFuzzer harness: a production arrival trace (CSV
 * time_us,stream,shape) loaded as the serving simulation loads it. The first
 * input byte picks the stream count so the range check is fuzzed too.
 * See kw_fuzz.h. */
#include "kw_fuzz.h"
#include "kw_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const shapes[] = {"decode_kv512", "prefill_s128", "a"};
    int streams = size > 0 ? 1 + data[0] % 16 : 1;
    const char *p = kw_fuzz_input("trace.csv", size > 0 ? data + 1 : data, size > 0 ? size - 1 : 0);
    kw_trace *t = NULL;
    kw_error_clear();
    int rc = kw_trace_load(&t, p, streams, shapes, 3);
    kw_fuzz_check_error(rc);
    if (rc == 0) {
        size_t all = kw_trace_count(t, -1), sum = 0;
        for (int s = 0; s < 3; s++)
            sum += kw_trace_count(t, s);
        if (t == NULL || all != t->n || sum != t->n)
            abort();
        for (size_t i = 0; i < t->n; i++)
            if (t->stream[i] < 0 || t->stream[i] >= streams || t->shape[i] < 0 ||
                t->shape[i] >= 3 || !(t->time_us[i] >= 0) ||
                (i > 0 && t->time_us[i] < t->time_us[i - 1]))
                abort(); /* the loader accepted a row its contract forbids */
    }
    kw_trace_free(t);
    return 0;
}
