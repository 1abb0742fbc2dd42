/* fuzz_table.c - libFuzzer harness: libknobwise's reader (src/lib/knobwise.c)
 * on arbitrary bytes, as results.xml or mappings.csv (the content decides),
 * then every getter and lookups on what it accepted. The invariants a
 * runtime relies on: a failure leaves a message and a NULL table; an accepted
 * table has entries, every configuration to deploy has a value per knob, and
 * a lookup of an entry's own dimensions is exact and lands on an entry with
 * those dimensions. See kw_fuzz.h. */
#include "kw_fuzz.h"
#include "knobwise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = kw_fuzz_input("table", data, size);
    knobwise_table *t = (knobwise_table *)&p;
    kw_error_clear();
    int rc = knobwise_table_open(&t, p);
    kw_fuzz_check_error(rc);
    if (rc != 0) {
        if (t != NULL)
            abort(); /* a failed open must leave no table */
        return 0;
    }
    int n = knobwise_table_count(t), nk = knobwise_table_knob_count(t);
    if (n < 1 || nk < 1)
        abort();
    for (int i = 0; i < n; i++) {
        const knobwise_entry *e = knobwise_table_entry(t, i);
        const knobwise_config *c = knobwise_entry_config(e);
        for (int k = 0; k < nk; k++)
            if (knobwise_config_value(c, k) == NULL || knobwise_table_knob_name(t, k) == NULL)
                abort();
        double p95, p99;
        knobwise_entry_latency(&p95, &p99, e);
        for (int w = 0; w < knobwise_entry_watch_count(e); w++) {
            knobwise_watch g;
            if (knobwise_entry_watch(&g, e, w) != 0 || !g.guard || !g.metric)
                abort();
        }
        const knobwise_config *rb;
        for (int r = 0; r < 2; r++)
            if (knobwise_entry_rollback(&rb, e, r) == 0 && knobwise_config_id(rb) == NULL)
                abort();
        knobwise_shape s;
        if (knobwise_entry_shape(&s, e) == 0) {
            knobwise_match m;
            if (knobwise_table_lookup(&m, t, &s, KNOBWISE_LOOKUP_EXACT) != 0 || !m.exact)
                abort();
            knobwise_shape got;
            if (knobwise_entry_shape(&got, m.entry) != 0 || got.batch != s.batch ||
                got.len != s.len || got.streams != s.streams || got.phase != s.phase)
                abort();
            s.batch = s.batch * 3 + 1;
            if (knobwise_table_lookup(&m, t, &s, 0) != 0 || m.entry == NULL)
                abort(); /* the same phase has an entry: nearest must find one */
        }
        const knobwise_entry *f;
        if (knobwise_table_find(&f, t, knobwise_entry_name(e)) != 0 || f != e)
            abort(); /* names are unique: find returns this very entry */
    }
    knobwise_table_free(t);
    return 0;
}
