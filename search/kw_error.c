/* kw_error.c - the per-thread error object (see kw_error.h).
 * A thread-local fixed buffer: no allocation on the error path, so an
 * out-of-memory report cannot itself fail. */
#include "kw_error.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char kw_error_msg[KW_ERROR_MAX];
static _Thread_local int kw_error_last_code;

static int kw_error_vset(int code, const char *fmt, va_list ap)
{
    /* formatted aside first: callers wrap the last message in a new one
     * (kw_error_set(rc, "...: %s", kw_error_last())), and vsnprintf into the
     * buffer it reads from is undefined behaviour (it garbled such messages) */
    static _Thread_local char tmp[KW_ERROR_MAX];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    memcpy(kw_error_msg, tmp, sizeof tmp);
    kw_error_last_code = code;
    return code;
}

int kw_error_set(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kw_error_vset(code, fmt, ap);
    va_end(ap);
    return code;
}

const char *kw_error_last(void) { return kw_error_msg; }
int kw_error_code(void) { return kw_error_last_code; }

void kw_error_clear(void)
{
    kw_error_msg[0] = '\0';
    kw_error_last_code = 0;
}

int kw_error_exit_status(int code)
{
    if (code == 0)
        return 0;
    if (code == KW_EINPUT)
        return 2;
    return 1;
}
