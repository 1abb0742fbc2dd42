/* runtime_example.c - how a serving runtime uses libknobwise: copy this.
 *
 * Build against the installed library:
 *     cc runtime_example.c $(pkg-config --cflags --libs knobwise) -o runtime_example
 * Run:
 *     ./runtime_example RUN_DIR|results.xml|mappings.csv prefill|decode BATCH LEN STREAMS [--cross-phase]
 *
 * The pattern: open the table once at start (it is immutable afterwards, so
 * every worker thread may share it), resolve the knob indices you need once,
 * then per request shape call knobwise_table_lookup() and read the values by
 * index. A borrowed answer (the shape was not tuned) should be logged; the
 * guard thresholds are what to monitor after rollout, and the roll-back
 * configuration is what to switch to when one of them is crossed.
 *
 * tests/test_installed.c builds and runs this program against a staged
 * `make install` in `make check`; its output format is what that test reads.
 */
#include <knobwise.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_config(const knobwise_table *t, const knobwise_config *c, const char *indent)
{
    for (int k = 0; k < knobwise_table_knob_count(t); k++) {
        const char *v = knobwise_config_value(c, k);
        printf("%s%s=%s\n", indent, knobwise_table_knob_name(t, k), v ? v : "?");
    }
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s RUN prefill|decode BATCH LEN STREAMS [--cross-phase]\n", argv[0]);
        return 2;
    }
    knobwise_shape req = {strcmp(argv[2], "decode") == 0 ? KNOBWISE_DECODE : KNOBWISE_PREFILL,
                          atol(argv[3]), atol(argv[4]), atol(argv[5])};
    unsigned flags = argc > 6 && strcmp(argv[6], "--cross-phase") == 0 ? KNOBWISE_LOOKUP_CROSS_PHASE : 0;

    /* once, at start */
    knobwise_table *t = NULL;
    if (knobwise_table_open(&t, argv[1]) != 0) {
        fprintf(stderr, "runtime_example: %s\n", knobwise_error_last());
        return 2;
    }
    printf("libknobwise %s: %d tuned shapes, %d knobs (%s)\n", knobwise_version(),
           knobwise_table_count(t), knobwise_table_knob_count(t), knobwise_table_kind(t));

    /* per request */
    knobwise_match m;
    int rc = knobwise_table_lookup(&m, t, &req, flags);
    if (rc != 0) {
        /* no mapping qualifies: keep the runtime's default and say why */
        fprintf(stderr, "runtime_example: %s\n", knobwise_error_last());
        knobwise_table_free(t);
        return 1;
    }
    printf("shape %s: %s%s\n", knobwise_entry_name(m.entry),
           m.exact ? "exact" : "nearest", m.borrowed ? " (borrowed)" : "");
    if (!m.exact)
        printf("distance log2: batch %+.3f len %+.3f streams %+.3f%s\n", m.batch_log2, m.len_log2,
               m.streams_log2, m.phase_crossed ? " (other phase)" : "");
    /* a stopped run's entry says so (search_stopped, no_evidence): deploy it
     * knowingly, or keep the default until the run is resumed */
    if (knobwise_entry_warnings(m.entry)[0])
        printf("warnings %s\n", knobwise_entry_warnings(m.entry));
    const knobwise_config *c = knobwise_entry_config(m.entry);
    printf("config %s\n", knobwise_config_id(c));
    print_config(t, c, "  ");

    double p95, p99;
    if (knobwise_entry_latency(&p95, &p99, m.entry) == 0) {
        /* which sample: "recheck" (the run's final re-check), "search", ... */
        const char *basis = knobwise_entry_figures_basis(m.entry);
        printf("predicted p95_us=%.3f p99_us=%.3f%s%s%s\n", p95, p99, basis[0] ? " (" : "", basis,
               basis[0] ? ")" : "");
    }
    for (int i = 0; i < knobwise_entry_watch_count(m.entry); i++) {
        knobwise_watch w;
        if (knobwise_entry_watch(&w, m.entry, i) != 0)
            continue;
        printf("watch %s: %s", w.guard, w.metric);
        if (!isnan(w.max))
            printf(" <= %g", w.max);
        if (!isnan(w.min))
            printf(" >= %g", w.min);
        printf("\n");
    }
    const knobwise_config *rb;
    if (knobwise_entry_rollback(&rb, m.entry, KNOBWISE_ROLLBACK_PARENT) == 0) {
        printf("rollback %s\n", knobwise_config_id(rb));
        print_config(t, rb, "  ");
    }
    knobwise_table_free(t);
    return 0;
}
