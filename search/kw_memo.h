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

#endif
