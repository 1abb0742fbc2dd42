/* kw_intern.h - interned strings: one shared copy of each distinct text.
 *
 * The engine remembers every evaluation's guards string; most are "" or one of
 * a few failure texts, so the memo keeps a pointer to one interned copy instead
 * of a string per evaluation. Pointers stay valid until kw_intern_free().
 */
#ifndef KW_INTERN_H
#define KW_INTERN_H

#include <stddef.h>

typedef struct kw_intern {
    char **slot;
    size_t cap, n;
} kw_intern;

/* The interned copy of s ("" is never copied); NULL when out of memory. */
const char *kw_intern_get(kw_intern *t, const char *s);

/* Free every copy; t may then be reused (it is zeroed). */
void kw_intern_free(kw_intern *t);

#endif
