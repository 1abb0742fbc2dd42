/* kw_progline.h - the text of `knobwise tune`'s progress: the one-line status
 * a terminal shows and the plain line per finished shape written when stderr
 * is not a terminal. Pure formatting of a kw_progress (search/kw_search.h), so
 * it is tested as a unit at every width; cli_tune.c only decides when to draw. */
#ifndef KW_PROGLINE_H
#define KW_PROGLINE_H

#include <stddef.h>

#include "kw_search.h"

#define KW_PROGLINE_WIDTH_DEFAULT 80 /* no TIOCGWINSZ and no usable $COLUMNS */
#define KW_PROGLINE_WIDTH_MIN 20
#define KW_PROGLINE_WIDTH_MAX 1024

/* The status line for a terminal `width` columns wide (clamped to
 * KW_PROGLINE_WIDTH_MIN..MAX) into buf. Never longer than width (nor than
 * size - 1): when everything does not fit, whole fields are dropped, the least
 * useful first (the ETA from convergence and the total evaluations go last),
 * never cut. shape_names is indexed by evaluator shape index
 * (kw_progress_shape.shape); metric is the primary's label ("p95").
 * Returns the line's length. Names are printed as they are (ASCII). */
size_t kw_progline_format(char *buf, size_t size, const kw_progress *p,
                          const char *const *shape_names, const char *metric, int width);

/* The same line, with list_shapes 0 without the per-shape fields ("N running"
 * instead), for the first line of a block that gives each running shape its
 * own line (kw_progline_shape_line). */
size_t kw_progline_summary(char *buf, size_t size, const kw_progress *p,
                           const char *const *shape_names, const char *metric, int width,
                           int list_shapes);

/* The line of running shape i of p in that block: name, evaluations against
 * the estimate, best against baseline, what the strategy is doing, steps;
 * fitted to width the same way (fields dropped whole, the name last). */
size_t kw_progline_shape_line(char *buf, size_t size, const kw_progress *p, int i,
                              const char *const *shape_names, const char *metric, int width);

/* The plain line for tuned shape i of p (p->per_shape[i], finished): name,
 * baseline -> best, change, evaluations and steps. Returns its length. */
size_t kw_progline_shape_done(char *buf, size_t size, const kw_progress *p, int i,
                              const char *const *shape_names, const char *metric);

/* A duration as 12s, 3m05s or 2h07m; "-" when negative or not finite. */
void kw_progline_duration(char *buf, size_t size, double s);

/* Columns of the terminal on fd: TIOCGWINSZ, else $COLUMNS, else
 * KW_PROGLINE_WIDTH_DEFAULT; clamped to KW_PROGLINE_WIDTH_MIN..MAX. */
int kw_progline_width(int fd);
/* Rows of the terminal on fd (TIOCGWINSZ, else $LINES), 0 when unknown. */
int kw_progline_rows(int fd);

#endif
