/* kw_hint.h - "did you mean" for the shape names of a loaded space;
 * kw_suggest.h does the matching, search/kw_knobs.c the knob names and
 * values of a space, kw_catalogue.h the catalogue's knob names. */
#ifndef KW_HINT_H
#define KW_HINT_H

#include <stddef.h>

#include "kw_load.h"

/* " (did you mean 'a'?)" with the space's shape names nearest to name;
 * when none is near, " (the space's shapes: a, b, c)". */
void kw_hint_shape(char *buf, size_t size, const kw_config *c, const char *name);

#endif
