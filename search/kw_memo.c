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

/* ---------------------------------------------------------------- aliases */

int kw_memo_skey_put(kw_skey *k, const void *p, size_t n)
{
    if (k->n + n > k->cap) {
        size_t cap = k->cap ? k->cap : 256;
        while (cap < k->n + n)
            cap *= 2;
        unsigned char *nb = realloc(k->b, cap);
        if (!nb)
            return kw_error_set(KW_ENOMEM, "out of memory for a service key of %zu bytes", k->n + n);
        k->b = nb;
        k->cap = cap;
    }
    memcpy(k->b + k->n, p, n);
    k->n += n;
    return 0;
}

uint64_t kw_memo_alias_hash(const kw_skey *k)
{
    return kw_mix_fnv1a(KW_FNV64_OFFSET, k->b, k->n);
}

static size_t kw_alias_home(int shape, uint64_t hash, size_t n_slot)
{
    return kw_mix_final(hash ^ ((uint64_t)(unsigned)shape << 40)) & (n_slot - 1);
}

long kw_memo_alias_next(const kw_alias *a, int shape, uint64_t hash, size_t *pos)
{
    if (!a->n_slot)
        return -1;
    size_t mask = a->n_slot - 1;
    size_t h = (kw_alias_home(shape, hash, a->n_slot) + *pos) & mask;
    while (a->slot[h]) {
        const kw_alias_ent *e = &a->e[a->slot[h] - 1];
        (*pos)++;
        if (e->hash == hash && e->shape == shape)
            return (long)(a->slot[h] - 1);
        h = (h + 1) & mask;
    }
    return -1;
}

long kw_memo_alias_add(kw_alias *a, int shape, uint64_t hash, uint64_t id, const kw_cand *c)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        kw_alias_ent *ne = realloc(a->e, cap * sizeof *ne);
        if (!ne)
            return -1;
        a->e = ne;
        a->cap = cap;
    }
    if ((a->n + 1) * 2 > a->n_slot) {
        size_t ns = a->n_slot ? a->n_slot * 2 : 1024;
        size_t *st = calloc(ns, sizeof *st);
        if (!st)
            return -1;
        for (size_t i = 0; i < a->n; i++) {
            size_t h = kw_alias_home(a->e[i].shape, a->e[i].hash, ns);
            while (st[h])
                h = (h + 1) & (ns - 1);
            st[h] = i + 1;
        }
        free(a->slot);
        a->slot = st;
        a->n_slot = ns;
    }
    kw_alias_ent *e = &a->e[a->n];
    memset(e, 0, sizeof *e);
    e->hash = hash;
    e->shape = shape;
    e->id = id;
    e->cand = *c;
    size_t h = kw_alias_home(shape, hash, a->n_slot);
    while (a->slot[h])
        h = (h + 1) & (a->n_slot - 1);
    a->slot[h] = ++a->n;
    return (long)(a->n - 1);
}

int kw_memo_alias_fill(kw_alias *a, long i, int rc, const double *m, int n, const char *guards,
                  const char *klass)
{
    kw_alias_ent *e = &a->e[i];
    if (!e->m && !(e->m = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1))))
        return kw_error_set(KW_ENOMEM, "out of memory recording an evaluation's result");
    memcpy(e->m, m, sizeof(double) * (size_t)n);
    e->rc = rc;
    e->guards = guards;
    e->klass = klass;
    e->done = 1;
    return 0;
}

void kw_memo_alias_free(kw_alias *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->e[i].m);
    free(a->e);
    free(a->slot);
    memset(a, 0, sizeof *a);
}
