/* kw_hint.c - "did you mean" over the shape names of a space (see
 * kw_hint.h). Every message that refuses an unknown name appends one of
 * these, so a misspelt name costs one retry, not a trip to the source. */
#include <stdio.h>
#include <string.h>

#include "kw_hint.h"
#include "kw_suggest.h"

void kw_hint_shape(char *buf, size_t size, const kw_config *c, const char *name)
{
    kw_suggest s;
    kw_suggest_init(&s, name);
    for (int i = 0; c && i < c->space.n_shapes; i++)
        kw_suggest_add(&s, c->workload.shapes[c->space.shapes[i]].name);
    kw_suggest_format(&s, buf, size);
    if (s.n > 0 || !c || size == 0)
        return;
    size_t u = (size_t)snprintf(buf, size, " (the space's shapes: ");
    for (int i = 0; i < c->space.n_shapes && u < size; i++)
        u += (size_t)snprintf(buf + u, size - u, "%s%s", i ? ", " : "",
                              c->workload.shapes[c->space.shapes[i]].name);
    if (u < size)
        snprintf(buf + u, size - u, ")");
}
