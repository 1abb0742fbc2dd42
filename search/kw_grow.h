/* kw_grow.h - the one growth rule for plain appended arrays: readers of a
 * journal (search/kw_journal.c, src/run/kw_runsum.c) and the engine's job queue; double the
 * capacity, 64 elements first. Header-only so every layer above search/
 * can use it without a library of its own. */
#ifndef KW_GROW_H
#define KW_GROW_H

#include <stdlib.h>

/* arr, grown if needed to hold n + 1 elements of elem bytes; *cap is updated.
 * NULL when out of memory, arr then still owned by the caller. */
static inline void *kw_grow_array(void *arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return arr;
    size_t c = *cap ? *cap * 2 : 64;
    void *r = realloc(arr, c * elem);
    if (r)
        *cap = c;
    return r;
}

#endif
