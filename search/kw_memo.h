/* kw_memo.h - the engine's memo of evaluations, keyed by (shape, config id,
 * repetition).
 *
 * Every evaluation is made and journalled once: the memo says whether a
 * (shape, config, rep) is unknown, in the journal being replayed, pending in
 * this round, or done, and keeps only what decisions need (the primary metric,
 * the effective guards, the evaluator's return code). Open addressing with
 * linear probing and backward-shift deletion, so the exhaustive strategy can
 * forget what it will never revisit and memory stays flat.
 */
#ifndef KW_MEMO_H
#define KW_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "kw_journal.h"
#include "kw_search.h"

enum { KW_MEMO_EMPTY, KW_MEMO_JOURNAL, KW_MEMO_PENDING, KW_MEMO_DONE };

/* One evaluation as the engine remembers it. */
typedef struct kw_memo_ent {
    uint64_t id;
    int32_t shape, rep;
    int32_t state;        /* KW_MEMO_* */
    int32_t rc;
    int32_t round;        /* the engine round that journalled it (0: not yet in this process) */
    double primary;
    double half;          /* the primary's 95% interval half-width as the evaluator read it
                           * (kw_engine_half; NAN: the evaluator gives none) */
    const char *guards;   /* effective guards ("" = pass), interned or journal-owned */
    const kw_jeval *je;   /* KW_MEMO_JOURNAL: the journal's record */
} kw_memo_ent;

typedef struct kw_memo {
    kw_memo_ent *t;
    size_t cap, n;
} kw_memo;

/* The entry of (shape, id, rep), or NULL. */
kw_memo_ent *kw_memo_find(const kw_memo *m, int shape, uint64_t id, int rep);

/* Find or insert (a new entry has state KW_MEMO_EMPTY: the caller sets it).
 * NULL on out of memory. Pointers are invalidated by the next insert. */
kw_memo_ent *kw_memo_put(kw_memo *m, int shape, uint64_t id, int rep);

/* Remove an entry found by kw_memo_find. */
void kw_memo_del(kw_memo *m, kw_memo_ent *e);

/* Free the table; m may then be reused (it is zeroed). */
void kw_memo_free(kw_memo *m);

/* ---- the engine's aliases (kw_engine.c "aliases") ----
 * Per shape, every service key (kw_evaluator.service_key) met first, in journal
 * order: the full evaluation it names (its config) and, once journalled, its
 * result. Looked up by the key's hash; a hit is only a candidate: the caller
 * makes the entry's key again from its config and compares the bytes, so two
 * keys that share a hash never alias. */
typedef struct kw_alias_ent {
    uint64_t hash;
    int32_t shape;
    int32_t done;         /* the original is journalled: rc, m, guards, klass hold its result */
    uint64_t id;          /* the original's config id */
    kw_cand cand;
    int32_t rc;
    double *m;            /* n_metrics values (malloc'ed by kw_memo_alias_fill) */
    const char *guards;   /* interned by the caller */
    const char *klass;
} kw_alias_ent;

typedef struct kw_alias {
    kw_alias_ent *e;      /* entries, in the order they were added */
    size_t n, cap;
    size_t *slot;         /* open addressing over (shape, hash): entry index + 1, 0 empty */
    size_t n_slot;
} kw_alias;

/* FNV-1a of a key's bytes. */
uint64_t kw_memo_alias_hash(const kw_skey *k);
/* The next entry of (shape, hash) after probe position *pos (start at 0): its
 * index, or -1 when there is none. */
long kw_memo_alias_next(const kw_alias *a, int shape, uint64_t hash, size_t *pos);
/* Add an entry (not done) for the original (shape, id, c) of a key: its index, or -1
 * on out of memory. */
long kw_memo_alias_add(kw_alias *a, int shape, uint64_t hash, uint64_t id, const kw_cand *c);
/* Record entry i's result (n metrics): 0 or KW_ENOMEM. */
int kw_memo_alias_fill(kw_alias *a, long i, int rc, const double *m, int n, const char *guards,
                  const char *klass);
void kw_memo_alias_free(kw_alias *a);

#endif
