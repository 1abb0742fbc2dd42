/* kw_intern.c - interned strings (see kw_intern.h).
 *
 * Open addressing with linear probing over FNV-1a hashes, doubled at half
 * load. Rejected: a sorted array (log n compares per insert on the hot path
 * of every journalled evaluation).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kw_intern.h"
#include "kw_mix.h"

#define KW_INTERN_CAP0 64   /* first table size (a power of two) */

static uint64_t kw_intern_hash(const char *s)
{
    return kw_mix_fnv1a_str(KW_FNV64_OFFSET, s);
}

const char *kw_intern_get(kw_intern *t, const char *s)
{
    if (!s[0])
        return "";
    if (t->n * 2 + 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : KW_INTERN_CAP0;
        char **ns = calloc(cap, sizeof *ns);
        if (!ns)
            return NULL;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slot[i]) {
                size_t h = kw_intern_hash(t->slot[i]) & (cap - 1);
                while (ns[h])
                    h = (h + 1) & (cap - 1);
                ns[h] = t->slot[i];
            }
        free(t->slot);
        t->slot = ns;
        t->cap = cap;
    }
    size_t h = kw_intern_hash(s) & (t->cap - 1);
    while (t->slot[h]) {
        if (strcmp(t->slot[h], s) == 0)
            return t->slot[h];
        h = (h + 1) & (t->cap - 1);
    }
    t->slot[h] = strdup(s);
    if (!t->slot[h])
        return NULL;
    t->n++;
    return t->slot[h];
}

void kw_intern_free(kw_intern *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slot[i]);
    free(t->slot);
    memset(t, 0, sizeof *t);
}
