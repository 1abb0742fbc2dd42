/* kw_guards.h - reading a candidate's guard list (the evaluator's failed
 * guards joined by ';', kw_search.h): the saturated guard and how a change
 * involving a saturated configuration is printed in place of a percentage.
 * In search/ so the engine's progress lines, the results tables, audit and
 * recommend share one rule. */
#ifndef KW_GUARDS_H
#define KW_GUARDS_H

/* Does a configuration's guard list name the saturated guard? (NULL: no) */
int kw_guards_saturated(const char *guards);

/* A change from a configuration failing before_guards to one failing
 * after_guards, as every table prints it in place of a percentage:
 * "saturated" when the second cannot keep up with its arrivals (a
 * percentage of an unbounded backlog means nothing), "from saturated" when
 * only the first could not; NULL when neither (print the percentage). */
const char *kw_guards_saturation(const char *before_guards, const char *after_guards);

/* Does every guard named in guards appear, as a whole name, in within? Both
 * non-empty; a list naming "error" (an evaluator failure, not a guard) is
 * never within. */
int kw_guards_within(const char *guards, const char *within);

#endif
