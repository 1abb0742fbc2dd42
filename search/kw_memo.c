/* kw_memo.c - the engine's memo of evaluations (see kw_memo.h).
 *
 * Keys are mixed with splitmix64 so that config ids (FNV hashes, already well
 * spread) and small shape/rep numbers combine without clustering. The table
 * doubles at half load. Rejected: chaining (a pointer chase and an allocation
 * per evaluation).
 */
#include <stdlib.h>
#include <string.h>

#include "kw_memo.h"
#include "kw_mix.h"

#define KW_MEMO_CAP0 1024   /* first table size (a power of two) */

static uint64_t kw_memo_key(int shape, uint64_t id, int rep)
{
    return kw_mix_final(id ^ kw_mix_final(((uint64_t)(unsigned)shape << 32) | (unsigned)rep));
}

kw_memo_ent *kw_memo_find(const kw_memo *m, int shape, uint64_t id, int rep)
{
    if (!m->cap)
        return NULL;
    size_t h = kw_memo_key(shape, id, rep) & (m->cap - 1);
    while (m->t[h].state != KW_MEMO_EMPTY) {
        kw_memo_ent *e = &m->t[h];
        if (e->id == id && e->shape == shape && e->rep == rep)
            return e;
        h = (h + 1) & (m->cap - 1);
    }
    return NULL;
}

kw_memo_ent *kw_memo_put(kw_memo *m, int shape, uint64_t id, int rep)
{
    kw_memo_ent *e = kw_memo_find(m, shape, id, rep);
    if (e)
        return e;
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : KW_MEMO_CAP0;
        kw_memo_ent *nt = calloc(cap, sizeof *nt);
        if (!nt)
            return NULL;
        for (size_t i = 0; i < m->cap; i++) {
            if (m->t[i].state == KW_MEMO_EMPTY)
                continue;
            size_t h = kw_memo_key(m->t[i].shape, m->t[i].id, m->t[i].rep) & (cap - 1);
            while (nt[h].state != KW_MEMO_EMPTY)
                h = (h + 1) & (cap - 1);
            nt[h] = m->t[i];
        }
        free(m->t);
        m->t = nt;
        m->cap = cap;
    }
    size_t h = kw_memo_key(shape, id, rep) & (m->cap - 1);
    while (m->t[h].state != KW_MEMO_EMPTY)
        h = (h + 1) & (m->cap - 1);
    e = &m->t[h];
    memset(e, 0, sizeof *e);
    e->id = id;
    e->shape = shape;
    e->rep = rep;
    e->guards = "";
    m->n++;
    return e;
}

/* Backward-shift deletion: linear probing stays valid without tombstones. */
void kw_memo_del(kw_memo *m, kw_memo_ent *e)
{
    size_t mask = m->cap - 1, i = (size_t)(e - m->t), j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (m->t[j].state == KW_MEMO_EMPTY)
            break;
        size_t home = kw_memo_key(m->t[j].shape, m->t[j].id, m->t[j].rep) & mask;
        /* the entry at j may move to the hole at i unless its home lies in (i, j] */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            m->t[i] = m->t[j];
            i = j;
        }
    }
    memset(&m->t[i], 0, sizeof m->t[i]);
    m->n--;
}

void kw_memo_free(kw_memo *m)
{
    free(m->t);
    memset(m, 0, sizeof *m);
}
