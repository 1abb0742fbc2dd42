/* kw_cli.c - what every verb shares: loading the inputs with the errors
 * printed the one way (FILE:LINE: message, exit 2), option value parsing. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kw_cli.h"
#include "kw_load.h"
#include "kw_num.h"
#include "kw_run.h"

/* Whether msg opens with where it is: a first word (no space or quote) that ends
 * in ':', as "FILE:LINE: ", "FILE: " and "RUN:ID: " do. */
static int kw_cli_located(const char *msg)
{
    size_t n = strcspn(msg, ": \t'\"");
    return n > 0 && msg[n] == ':';
}

int kw_cli_fail(const char *verb, int code)
{
    const char *msg = kw_error_last();
    if (code == KW_EINPUT && kw_cli_located(msg))
        fprintf(stderr, "%s\n", msg); /* input errors that name FILE:LINE stand alone */
    else
        fprintf(stderr, "knobwise %s: %s\n", verb, msg[0] ? msg : "failed");
    /* a damaged journal (or other run file) is bad input, as a file that is
     * no journal is: exit 2, the message naming FILE:LINE (was exit 1) */
    return code == KW_ECORRUPT ? 2 : kw_error_exit_status(code);
}

int kw_cli_stdout(const char *verb, const char *data, size_t len)
{
    if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0) {
        fprintf(stderr, "knobwise %s: writing standard output: %s\n", verb, strerror(errno));
        return 1;
    }
    return 0;
}

int kw_cli_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "knobwise %s: ", verb);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\ntry 'knobwise %s --help'\n", verb);
    return 2;
}

int kw_cli_load_config(kw_config **out, const char *verb, const char *space, const char *accel,
                       const char *workload)
{
    int rc = kw_run_load_config(out, space, accel, workload);
    return rc != 0 ? kw_cli_fail(verb, rc) : 0; /* "--space '': ..." had no "knobwise VERB:" */
}

int kw_cli_parse_long(long *out, const char *verb, const char *opt, const char *text, long min,
                      long max)
{
    if (kw_num_long(out, text, min, max) != 0)
        return kw_cli_usage_error(verb, "%s takes a whole number from %ld to %ld, not '%s'", opt,
                                  min, max, text);
    return 0;
}

int kw_cli_parse_seed(long *out, const char *verb, const char *text)
{
    return kw_cli_parse_long(out, verb, "--seed", text, 0, KW_CLI_SEED_MAX);
}

int kw_cli_parse_double(double *out, const char *verb, const char *opt, const char *text,
                        double min, double max)
{
    double v;
    if (kw_num_double(&v, text) != 0 && kw_num_syntax_decimal(text))
        return kw_cli_usage_error(verb,
                                  "%s takes a number from %g to %g, not '%s' (beyond what a double "
                                  "holds: too large, or too near zero)",
                                  opt, min, max, text);
    if (kw_num_double(&v, text) != 0 || v < min || v > max)
        return kw_cli_usage_error(verb, "%s takes a number from %g to %g, not '%s'", opt, min, max,
                                  text);
    *out = v;
    return 0;
}

void kw_cli_terminal_text(char *dst, size_t n, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        dst[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    if (n > 0)
        dst[i] = '\0';
}
