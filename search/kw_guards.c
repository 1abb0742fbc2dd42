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

const char *kw_guards_saturation(const char *before_guards, const char *after_guards)
{
    if (kw_guards_saturated(after_guards))
        return "saturated";
    if (kw_guards_saturated(before_guards))
        return "from saturated";
    return NULL;
}
