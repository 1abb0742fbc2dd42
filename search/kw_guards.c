/* kw_guards.c - the saturated guard in a guard list and its printed form
 * (kw_guards.h). A guard list is "" or names joined by ';'; the saturated
 * guard matches only as a whole name. */
#include "kw_guards.h"

#include <string.h>

#define KW_GUARDS_SAT "saturated"

int kw_guards_saturated(const char *guards)
{
    if (!guards)
        return 0;
    const size_t len = sizeof KW_GUARDS_SAT - 1;
    for (const char *p = guards; (p = strstr(p, KW_GUARDS_SAT)) != NULL; p += len) {
        int start = p == guards || p[-1] == ';';
        int end = p[len] == '\0' || p[len] == ';';
        if (start && end)
            return 1;
    }
    return 0;
}

/* Is the name [p, p + len) a whole name of list? */
static int kw_guards_has(const char *list, const char *p, size_t len)
{
    for (const char *q = list; *q;) {
        size_t l = strcspn(q, ";");
        if (l == len && strncmp(q, p, len) == 0)
            return 1;
        q += l + (q[l] == ';');
    }
    return 0;
}

int kw_guards_within(const char *guards, const char *within)
{
    if (!guards || !within || !guards[0] || !within[0] || strncmp(guards, "error", 5) == 0)
        return 0;
    for (const char *p = guards; *p;) {
        size_t l = strcspn(p, ";");
        if (l == 0 || !kw_guards_has(within, p, l))
            return 0;
        p += l + (p[l] == ';');
    }
    return 1;
}

const char *kw_guards_saturation(const char *before_guards, const char *after_guards)
{
    if (kw_guards_saturated(after_guards))
        return "saturated";
    if (kw_guards_saturated(before_guards))
        return "from saturated";
    return NULL;
}
