/* kw_suggest.c - nearest names by edit distance (see kw_suggest.h).
 *
 * Design choice: the optimal-string-alignment distance (Levenshtein with
 * adjacent transpositions: "tiel_m" is one edit from "tile_m", as a person
 * sees it), computed in O(|a| |b|) with three rows; names here are at most a
 * few dozen characters and a lookup offers at most a few hundred names, so a
 * miss costs microseconds. The threshold (a third of the word, at least 2)
 * keeps "did you mean" from offering unrelated names for a short word.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "kw_suggest.h"

#define KW_SUGGEST_FAR 1000000    /* distance of names too long to compare */
#define KW_SUGGEST_MIN_DIST 2     /* always allow two edits */
#define KW_SUGGEST_DIST_DIVISOR 3 /* and one per three characters of the word */

static int kw_min3(int a, int b, int c)
{
    int m = a < b ? a : b;
    return m < c ? m : c;
}

int kw_suggest_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la >= KW_SUGGEST_NAME_LEN || lb >= KW_SUGGEST_NAME_LEN)
        return KW_SUGGEST_FAR;
    int r0[KW_SUGGEST_NAME_LEN + 1], r1[KW_SUGGEST_NAME_LEN + 1], r2[KW_SUGGEST_NAME_LEN + 1];
    int *pp = r0, *prev = r1, *cur = r2;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        int ca = tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= lb; j++) {
            int cb = tolower((unsigned char)b[j - 1]);
            int cost = ca != cb;
            int d = kw_min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < d)
                d = pp[j - 2] + 1;
            cur[j] = d;
        }
        int *t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

void kw_suggest_init(kw_suggest *s, const char *word)
{
    memset(s, 0, sizeof *s);
    s->word = word ? word : "";
}

void kw_suggest_add(kw_suggest *s, const char *name)
{
    if (!name || !name[0] || strcmp(name, s->word) == 0)
        return;
    int d = kw_suggest_distance(s->word, name);
    const char *dot = strrchr(name, '.');
    if (dot && strcmp(dot + 1, s->word) == 0)
        d = 1;
    int wl = (int)strlen(s->word);
    int limit = wl / KW_SUGGEST_DIST_DIVISOR;
    if (limit < KW_SUGGEST_MIN_DIST)
        limit = KW_SUGGEST_MIN_DIST;
    if (d > limit || d >= wl + (int)strlen(name))
        return;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->best[i].name, name) == 0)
            return;
    int at = s->n;
    while (at > 0 && s->best[at - 1].dist > d)
        at--;
    if (at >= KW_SUGGEST_MAX)
        return;
    int last = s->n < KW_SUGGEST_MAX ? s->n : KW_SUGGEST_MAX - 1;
    for (int i = last; i > at; i--)
        s->best[i] = s->best[i - 1];
    snprintf(s->best[at].name, sizeof s->best[at].name, "%s", name);
    s->best[at].dist = d;
    if (s->n < KW_SUGGEST_MAX)
        s->n++;
}

void kw_suggest_format(const kw_suggest *s, char *buf, size_t size)
{
    if (size == 0)
        return;
    buf[0] = '\0';
    if (s->n == 0)
        return;
    size_t u = (size_t)snprintf(buf, size, " (did you mean ");
    for (int i = 0; i < s->n && u < size; i++)
        u += (size_t)snprintf(buf + u, size - u, "%s'%s'",
                              i == 0 ? "" : i == s->n - 1 ? " or " : ", ", s->best[i].name);
    if (u < size)
        snprintf(buf + u, size - u, "?)");
}
