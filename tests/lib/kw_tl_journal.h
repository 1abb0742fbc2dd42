/* kw_tl_journal.h - the hand-written journal the reducer and the summary
 * tests share: the header of a toy run and its candidates, so that
 * test_reduce (search/kw_reduce.c on records) and test_results (the summary
 * builder on a loaded journal) work out their expected figures on the same
 * space instead of each keeping a copy of it.
 *
 *   kw_tl_jheader_toy  one shape "s", one metric p95_us, knobs k0 and k1 of
 *                      three values "0" "1" "2" (baseline 0,0)
 *   kw_tl_cand2        the candidate (k0, k1) = (a, b), the rest zero
 *
 * Each fills what it names and leaves the rest as it was (the callers start
 * from calloc'ed headers); a test sets strategy, repeats and what else it
 * needs on top. Header-only (static inline) because it needs the journal's
 * types, which libkwtl.a (kw_tl.h: files and processes) does not know.
 */
#ifndef KW_TL_JOURNAL_H
#define KW_TL_JOURNAL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kw_journal.h" /* kw_jheader, and through kw_search.h kw_cand and kw_knob */

static inline void kw_tl_jheader_toy(kw_jheader *h)
{
    h->n_shapes = 1;
    snprintf(h->shape_names[0], sizeof h->shape_names[0], "s");
    h->n_metrics = 1;
    snprintf(h->metric_names[0], sizeof h->metric_names[0], "p95_us");
    h->space.n_knobs = 2;
    for (int k = 0; k < 2; k++) {
        kw_knob *kn = &h->space.knobs[k];
        snprintf(kn->name, sizeof kn->name, "k%d", k);
        kn->n_values = 3;
        for (int v = 0; v < 3; v++)
            snprintf(kn->values[v], sizeof kn->values[v], "%d", v);
    }
}

static inline kw_cand kw_tl_cand2(int a, int b)
{
    kw_cand c;
    memset(&c, 0, sizeof c);
    c.v[0] = (uint8_t)a;
    c.v[1] = (uint8_t)b;
    return c;
}

#endif
