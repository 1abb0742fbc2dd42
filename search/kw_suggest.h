/* kw_suggest.h - "did you mean ...": the nearest valid names to a misspelt
 * one, by edit distance. Generic (a word against candidates fed one by one),
 * so knob names, knob values, shape names and catalogue names all use it. */
#ifndef KW_SUGGEST_H
#define KW_SUGGEST_H

#include <stddef.h>

#define KW_SUGGEST_MAX 3        /* names offered at most */
#define KW_SUGGEST_NAME_LEN 128

typedef struct kw_suggest {
    const char *word;
    int n;
    struct {
        char name[KW_SUGGEST_NAME_LEN];
        int dist;
    } best[KW_SUGGEST_MAX];
} kw_suggest;

/* Optimal-string-alignment distance (Levenshtein plus adjacent swaps),
 * case-insensitive; names longer than KW_SUGGEST_NAME_LEN count as far. */
int kw_suggest_distance(const char *a, const char *b);

void kw_suggest_init(kw_suggest *s, const char *word);
/* Offer a valid name; kept when it is near enough (distance at most
 * max(2, strlen(word)/3), or word is the part after its last '.', so
 * "tile_m" finds "qkv.tile_m") and among the KW_SUGGEST_MAX nearest
 * (first offered wins a tie). */
void kw_suggest_add(kw_suggest *s, const char *name);
/* " (did you mean 'a', 'b' or 'c'?)", or "" when nothing is near. */
void kw_suggest_format(const kw_suggest *s, char *buf, size_t size);

#endif
