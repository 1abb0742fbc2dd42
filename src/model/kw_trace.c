/* kw_trace.c - load and validate a production arrival trace (CSV).
 *
 * Design: a strict line reader, not a general CSV parser. A trace is machine
 * output with three plain fields, so anything unexpected (quotes, spaces,
 * extra fields, blank lines, unsorted times) is far more likely a broken
 * export than a dialect to accept; each is reported as FILE:LINE and the
 * whole trace is rejected. Limits on file size, rows and line length keep a
 * hostile file from exhausting memory. Rows are stored column-wise (three
 * arrays) because replay walks them in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kw_error.h"
#include "kw_input.h"
#include "kw_num.h"
#include "kw_trace.h"

#define KW_TRACE_HEADER "time_us,stream,shape"
#define KW_TRACE_INITIAL_ROWS 1024

void kw_trace_free(kw_trace *t)
{
    if (!t)
        return;
    free(t->time_us);
    free(t->stream);
    free(t->shape);
    free(t);
}

size_t kw_trace_count(const kw_trace *t, int shape)
{
    if (!t)
        return 0;
    if (shape < 0)
        return t->n;
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->shape[i] == shape;
    return n;
}

static int kw_trace_grow(kw_trace *t, size_t *cap)
{
    size_t nc = *cap ? *cap * 2 : KW_TRACE_INITIAL_ROWS;
    double *a = realloc(t->time_us, nc * sizeof *a);
    if (!a)
        return -1;
    t->time_us = a;
    int *b = realloc(t->stream, nc * sizeof *b);
    if (!b)
        return -1;
    t->stream = b;
    int *c = realloc(t->shape, nc * sizeof *c);
    if (!c)
        return -1;
    t->shape = c;
    *cap = nc;
    return 0;
}

/* Parse one data line (newline stripped) into row n of t. */
static int kw_trace_row(kw_trace *t, char *line, const char *path, long ln, int streams,
                        const char *const *names, int n_names)
{
    char *f[3];
    int nf = 0;
    char *p = line;
    f[nf++] = p;
    for (; *p; p++) {
        if (*p == ',') {
            if (nf == 3)
                return kw_error_set(KW_EINPUT, "%s:%ld: more than 3 fields (expected %s)", path, ln,
                                    KW_TRACE_HEADER);
            *p = '\0';
            f[nf++] = p + 1;
        }
    }
    if (nf != 3)
        return kw_error_set(KW_EINPUT, "%s:%ld: %d field%s, expected 3 (%s)", path, ln, nf,
                            nf == 1 ? "" : "s", KW_TRACE_HEADER);
    double tu;
    if (kw_num_double(&tu, f[0]) != 0) /* decimal only: not "0x10", "inf", " 5" */
        return kw_error_set(KW_EINPUT, "%s:%ld: time_us '%s' is not a finite number (decimal "
                            "microseconds, such as 125.5)", path, ln, f[0]);
    if (tu < 0)
        return kw_error_set(KW_EINPUT, "%s:%ld: time_us %s is negative", path, ln, f[0]);
    if (t->n > 0 && tu < t->time_us[t->n - 1])
        return kw_error_set(KW_EINPUT, "%s:%ld: time_us %s goes back in time (previous row %.17g): "
                            "rows must be sorted by time", path, ln, f[0], t->time_us[t->n - 1]);
    long st;
    if (kw_num_long(&st, f[1], LONG_MIN, LONG_MAX) != 0)
        return kw_error_set(KW_EINPUT, "%s:%ld: stream '%s' is not an integer", path, ln, f[1]);
    if (st < 0 || st >= streams)
        return kw_error_set(KW_EINPUT, "%s:%ld: stream %ld outside [0, %d)", path, ln, st, streams);
    int sh = -1;
    for (int i = 0; i < n_names; i++)
        if (names[i] && strcmp(names[i], f[2]) == 0) {
            sh = i;
            break;
        }
    if (sh < 0)
        return kw_error_set(KW_EINPUT, "%s:%ld: unknown shape '%s'", path, ln, f[2]);
    t->time_us[t->n] = tu;
    t->stream[t->n] = (int)st;
    t->shape[t->n] = sh;
    t->n++;
    return 0;
}

int kw_trace_load(kw_trace **out, const char *path, int streams,
                  const char *const *shape_names, int n_shapes)
{
    *out = NULL;
    int rc = 0;
    FILE *f = NULL;
    size_t cap = 0;
    long ln = 0;
    char line[KW_TRACE_LINE_MAX + 2];
    kw_trace *t = calloc(1, sizeof *t);
    if (!t)
        return kw_error_set(KW_ENOMEM, "out of memory loading trace %s", path);
    snprintf(t->path, sizeof t->path, "%s", path);
    if (streams < 1) {
        rc = kw_error_set(KW_EINPUT, "%s: no streams to replay into", path);
        goto fail;
    }
    /* kw_input_open: a FIFO does not block the open, /dev/zero (which would
     * never end its first line) or a folder is refused, the size is checked
     * on the open descriptor. */
    char why[KW_INPUT_WHY_MAX];
    int fd;
    uint64_t size;
    int orc = kw_input_open(&fd, &size, path, (uint64_t)KW_TRACE_MAX_BYTES, why, sizeof why);
    if (orc == KW_EINPUT && size > (uint64_t)KW_TRACE_MAX_BYTES) {
        rc = kw_error_set(KW_EINPUT, "%s: trace is %llu bytes, over the %ld byte limit", path,
                          (unsigned long long)size, KW_TRACE_MAX_BYTES);
        goto fail;
    }
    if (orc == KW_EINPUT) {
        rc = kw_error_set(KW_EINPUT, "%s:1: trace %s", path, why);
        goto fail;
    }
    if (orc != 0 || !(f = fdopen(fd, "rb"))) {
        rc = kw_error_set(KW_EIO, "%s: cannot open trace: %s", path, orc ? why : strerror(errno));
        if (orc == 0)
            close(fd);
        goto fail;
    }
    for (;;) {
        /* one line, by hand: fgets cannot see NUL bytes or tell a long line cleanly */
        size_t len = 0;
        int c, nul = 0, any = 0;
        while ((c = getc_unlocked(f)) != EOF && c != '\n') {
            any = 1;
            if (c == '\0')
                nul = 1;
            if (len <= KW_TRACE_LINE_MAX)
                line[len++] = (char)c;
        }
        if (c == EOF && !any)
            break;
        ln++;
        if (len > KW_TRACE_LINE_MAX) {
            rc = kw_error_set(KW_EINPUT, "%s:%ld: line longer than %d characters", path, ln,
                              KW_TRACE_LINE_MAX);
            goto fail;
        }
        line[len] = '\0';
        if (len && line[len - 1] == '\r')
            line[--len] = '\0';
        if (nul) {
            rc = kw_error_set(KW_EINPUT, "%s:%ld: NUL byte in line", path, ln);
            goto fail;
        }
        if (ln == 1) {
            if (strcmp(line + kw_input_bom(line), KW_TRACE_HEADER) != 0) {
                rc = kw_error_set(KW_EINPUT, "%s:1: header must be '%s'", path, KW_TRACE_HEADER);
                goto fail;
            }
            continue;
        }
        if (len == 0) {
            rc = kw_error_set(KW_EINPUT, "%s:%ld: empty line", path, ln);
            goto fail;
        }
        if (t->n >= KW_TRACE_MAX_ROWS) {
            rc = kw_error_set(KW_EINPUT, "%s:%ld: more than %d rows", path, ln, KW_TRACE_MAX_ROWS);
            goto fail;
        }
        if (t->n == cap && kw_trace_grow(t, &cap) != 0) {
            rc = kw_error_set(KW_ENOMEM, "%s:%ld: out of memory", path, ln);
            goto fail;
        }
        rc = kw_trace_row(t, line, path, ln, streams, shape_names, n_shapes);
        if (rc)
            goto fail;
    }
    if (ferror(f)) {
        rc = kw_error_set(KW_EIO, "%s: read error", path);
        goto fail;
    }
    if (ln == 0) {
        rc = kw_error_set(KW_EINPUT, "%s:1: empty file, header '%s' required", path, KW_TRACE_HEADER);
        goto fail;
    }
    if (t->n == 0) {
        rc = kw_error_set(KW_EINPUT, "%s:%ld: no rows after the header", path, ln);
        goto fail;
    }
    fclose(f);
    *out = t;
    return 0;
fail:
    if (f)
        fclose(f);
    kw_trace_free(t);
    return rc;
}
