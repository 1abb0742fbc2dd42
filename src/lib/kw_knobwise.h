/* kw_knobwise.h - what knobwise's own programs read of a libknobwise table
 * beyond the public API (knobwise.h): not installed, and not exported by the
 * shared library (its version script, knobwise.map, exports knobwise_* only).
 *
 *   kw_knobwise_config_line   the line of the table's file a configuration's
 *                             knob values were read from (`knobwise export`
 *                             names it when a value is refused)
 */
#ifndef KW_KNOBWISE_H
#define KW_KNOBWISE_H

#include "knobwise.h"

/* The 1-based line of the file (results.xml: the element holding the <knob>
 * children; mappings.csv: the row) c's values come from; 0 when c is NULL or
 * has no values. */
long kw_knobwise_config_line(const knobwise_config *c);

#endif
