/* kw_idmap.c - the id -> index map (see kw_idmap.h). */
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"
#include "kw_idmap.h"
#include "kw_mix.h"

#define KW_IDMAP_CAP0 64 /* first table size (a power of two) */

static size_t kw_idmap_slot(const kw_idmap *m, uint64_t id)
{
    size_t h = kw_mix_final(id) & (m->cap - 1);
    while (m->used[h] && m->id[h] != id)
        h = (h + 1) & (m->cap - 1);
    return h;
}

size_t *kw_idmap_find(const kw_idmap *m, uint64_t id)
{
    if (m->cap == 0)
        return NULL;
    size_t h = kw_idmap_slot(m, id);
    return m->used[h] ? &m->val[h] : NULL;
}

int kw_idmap_has(const kw_idmap *m, uint64_t id)
{
    return kw_idmap_find(m, id) != NULL;
}

int kw_idmap_reserve(kw_idmap *m, size_t n)
{
    if (2 * n <= m->cap)
        return 0;
    kw_idmap g = {0};
    g.cap = m->cap ? m->cap : KW_IDMAP_CAP0;
    while (2 * n > g.cap)
        g.cap *= 2;
    g.id = malloc(g.cap * sizeof *g.id);
    g.val = malloc(g.cap * sizeof *g.val);
    g.used = calloc(g.cap, 1);
    if (!g.id || !g.val || !g.used) {
        kw_idmap_free(&g);
        return kw_error_set(KW_ENOMEM, "out of memory for a table of %zu ids", n);
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i]) {
            size_t h = kw_idmap_slot(&g, m->id[i]);
            g.used[h] = 1;
            g.id[h] = m->id[i];
            g.val[h] = m->val[i];
        }
    g.n = m->n;
    kw_idmap_free(m);
    *m = g;
    return 0;
}

int kw_idmap_add(kw_idmap *m, uint64_t id, size_t val, int *added)
{
    if (added)
        *added = 0;
    if (kw_idmap_find(m, id))
        return 0;
    int rc = kw_idmap_reserve(m, m->n + 1);
    if (rc != 0)
        return rc;
    size_t h = kw_idmap_slot(m, id);
    m->used[h] = 1;
    m->id[h] = id;
    m->val[h] = val;
    m->n++;
    if (added)
        *added = 1;
    return 0;
}

void kw_idmap_free(kw_idmap *m)
{
    free(m->id);
    free(m->val);
    free(m->used);
    memset(m, 0, sizeof *m);
}
