/* kw_idmap.h - a map from 64-bit ids (config ids, key hashes) to indices.
 *
 * The one open-addressed id table of the search and the journal readers: a
 * set of ids (the value unused), an id -> index-of-an-array map, or an
 * id -> slot of a side array the caller grows with it. Linear probing over
 * kw_mix_final, doubled at half load; every id, 0 included, is a key. A
 * caller may walk the slots (used[i], id[i], val[i]) but meets the ids in hash
 * order, which must not reach an output.
 */
#ifndef KW_IDMAP_H
#define KW_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct kw_idmap {
    uint64_t *id;
    size_t *val;
    unsigned char *used;
    size_t n, cap; /* cap: 0 or a power of two */
} kw_idmap;

/* The value of id, or NULL. The pointer is invalidated by the next add. */
size_t *kw_idmap_find(const kw_idmap *m, uint64_t id);

/* Whether id is in the map. */
int kw_idmap_has(const kw_idmap *m, uint64_t id);

/* id -> val when id is not in the map yet (*added 1), else nothing (*added
 * 0; added may be NULL). 0, or KW_ENOMEM (the map unchanged). */
int kw_idmap_add(kw_idmap *m, uint64_t id, size_t val, int *added);

/* Room for n ids without growing (0 or KW_ENOMEM). */
int kw_idmap_reserve(kw_idmap *m, size_t n);

/* Free the table; m may then be reused (it is zeroed). */
void kw_idmap_free(kw_idmap *m);

#endif
