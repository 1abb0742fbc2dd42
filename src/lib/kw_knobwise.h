/* kw_knobwise.h - what knobwise's own programs read of a libknobwise table
 * beyond the public API (knobwise.h): not installed, and not exported by the
 * shared library (its version script, knobwise.map, exports knobwise_* only).
 *
 *   kw_knobwise_config_line   the line of the table's file a configuration's
 *                             knob values were read from (`knobwise export`
 *                             names it when a value is refused)
 *   kw_knobwise_unmet         the shapes a results.xml lists with nothing to
 *                             deploy (tuned, no configuration passes the
 *                             guards; not entries: export names them)
 */
#ifndef KW_KNOBWISE_H
#define KW_KNOBWISE_H

#include "knobwise.h"

/* The 1-based line of the file (results.xml: the element holding the <knob>
 * children; mappings.csv: the row) c's values come from; 0 when c is NULL or
 * has no values. */
long kw_knobwise_config_line(const knobwise_config *c);

/* The name of the i-th shape (file order) the table's results.xml lists
 * with no configuration, and the line of its <shape>; NULL once i is past
 * the last (a mappings.csv has none). */
const char *kw_knobwise_unmet(const knobwise_table *t, int i, long *line);

#endif
