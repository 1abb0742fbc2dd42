/* kw_trace.h - production arrival traces: load and validate a CSV of
 * timestamped requests, replayed by the serving simulation (kw_sim).
 *
 * Format (header line required, exactly as written):
 *     time_us,stream,shape
 *     0,0,decode_kv512
 *     125.5,1,decode_kv512
 * time_us: finite, >= 0, non-decreasing down the file; stream: integer in
 * [0, streams); shape: one of the names the caller passes. Anything else is
 * KW_EINPUT with a "FILE:LINE: message" error. Plain data, owned by the
 * caller, freed with kw_trace_free (NULL ok).
 */
#ifndef KW_TRACE_H
#define KW_TRACE_H

#include <stddef.h>

#include "kw_model.h"

#define KW_TRACE_MAX_ROWS 10000000       /* rows in one trace (about 160 MB loaded) */
#define KW_TRACE_MAX_BYTES (512L << 20)  /* file size limit */
#define KW_TRACE_LINE_MAX 512            /* one CSV line, newline excluded */

typedef struct kw_trace {
    size_t n;              /* rows */
    double *time_us;       /* [n], non-decreasing */
    int *stream;           /* [n], in [0, streams) */
    int *shape;            /* [n], index into the caller's shape list */
    char path[KW_PATH_MAX];
} kw_trace;

/* Load and validate the trace at `path`. Streams must lie in [0, streams);
 * shapes must be among shape_names[0..n_shapes). Returns 0, KW_EINPUT (bad
 * content or too large, "FILE:LINE: message"), KW_EIO (cannot read) or
 * KW_ENOMEM. On success *out is owned by the caller. */
int kw_trace_load(kw_trace **out, const char *path, int streams,
                  const char *const *shape_names, int n_shapes);
void kw_trace_free(kw_trace *t);

/* Rows of shape index `shape` (-1: all rows). */
size_t kw_trace_count(const kw_trace *t, int shape);

#endif
