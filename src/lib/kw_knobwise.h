/* kw_knobwise.h - what knobwise's own programs read of a libknobwise table
 * beyond the public API (knobwise.h): not installed, and not exported by the
 * shared library (its version script, knobwise.map, exports knobwise_* only).
 *
 *   kw_knobwise_config_line   the line of the table's file a configuration's
 *                             knob values were read from (`knobwise export`
 *                             names it when a value is refused)
 *   kw_knobwise_unmet         the shapes with nothing to deploy (a results.xml's
 *                             shape with no configuration, a mappings.csv's
 *                             fails_guards row; not entries: export names
 *                             them), and kw_knobwise_unmet_shape their dimensions
 */
#ifndef KW_KNOBWISE_H
#define KW_KNOBWISE_H

#include "knobwise.h"

/* The 1-based line of the file (results.xml: the element holding the <knob>
 * children; mappings.csv: the row) c's values come from; 0 when c is NULL or
 * has no values. */
long kw_knobwise_config_line(const knobwise_config *c);

/* The name of the i-th shape (file order) with nothing to deploy, and the
 * line of its <shape> or row; NULL once i is past the last. */
const char *kw_knobwise_unmet(const knobwise_table *t, int i, long *line);
/* Its dimensions: 0, or KNOBWISE_ENODATA when the file does not carry them. */
int kw_knobwise_unmet_shape(knobwise_shape *out, const knobwise_table *t, int i);

#endif
