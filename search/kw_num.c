/* kw_num.c - the one syntax of a number knobwise reads (see kw_num.h).
 *
 * Design choice: check the characters first, then let strtod/strtol convert
 * what is known to be plain decimal; rejected: strtod's own end pointer alone
 * (it accepts hexadecimal floats, "inf", "nan" and leading blanks), and a
 * hand-written conversion (rounding is strtod's job, correctly rounded).
 */
#include "kw_num.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Length of the run of decimal digits at s. */
static size_t kw_num_digits(const char *s) { return strspn(s, "0123456789"); }

/* 1 when s is [+-]digits[.digits][(e|E)[+-]digits] with at least one digit in
 * the mantissa (point and exponent only when fraction is 1). */
static int kw_num_decimal(const char *s, int fraction)
{
    if (*s == '+' || *s == '-')
        s++;
    size_t whole = kw_num_digits(s);
    s += whole;
    size_t frac = 0;
    if (fraction && *s == '.') {
        s++;
        frac = kw_num_digits(s);
        s += frac;
    }
    if (whole + frac == 0)
        return 0;
    if (fraction && (*s == 'e' || *s == 'E')) {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        size_t exp = kw_num_digits(s);
        if (exp == 0)
            return 0;
        s += exp;
    }
    return *s == '\0';
}

int kw_num_syntax_decimal(const char *s) { return s && kw_num_decimal(s, 1); }

int kw_num_double(double *out, const char *s)
{
    if (!s || !kw_num_decimal(s, 1))
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v))
        return -1;
    *out = v == 0.0 ? 0.0 : v; /* -0 is 0 */
    return 0;
}

int kw_num_long(long *out, const char *s, long min, long max)
{
    if (!s || !kw_num_decimal(s, 0))
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}
