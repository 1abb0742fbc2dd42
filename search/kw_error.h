/* kw_error.h - error codes and the per-thread error object.
 *
 * Every knobwise function returns int: 0 on success or a negative KW_E* code.
 * The human message (with FILE:LINE for input errors) is kept in a per-thread
 * buffer read with kw_error_last(); the library never prints and never exits.
 * Lives in search/ because it is the lowest layer: src/ depends on it too.
 */
#ifndef KW_ERROR_H
#define KW_ERROR_H

#include <stdarg.h>

enum {
    KW_OK = 0,
    KW_EINPUT = -1,    /* bad user input: file content, option value (exit 2) */
    KW_ENOMEM = -2,    /* allocation failed */
    KW_EIO = -3,       /* read/write/fsync/rename failed (exit 1) */
    KW_ECONSTRAINT = -4, /* a candidate breaks a space constraint */
    KW_EMODEL = -5,    /* the model cannot evaluate (numerical failure) */
    KW_EINTERRUPTED = -6, /* stopped by a signal or time limit */
    KW_ECORRUPT = -7,  /* journal or results damaged */
    KW_ESTATE = -8     /* programmer or state error (wrong order of calls) */
};

#define KW_ERROR_MAX 4096

/* Set the message of this thread's error object; returns code for `return kw_error_set(...)`. */
int kw_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The last message set on this thread ("" if none). Owned by the library. */
const char *kw_error_last(void);
/* The last code set on this thread. */
int kw_error_code(void);
/* Clear this thread's error object. */
void kw_error_clear(void);
/* Process exit status for a code: 0 ok, 2 input, 1 everything else. */
int kw_error_exit_status(int code);

#endif
