/* kw_num.h - the one syntax of a number knobwise reads from a person: an
 * option value (--budget 40, --time-limit 2.5), a field of a CSV input (a
 * trace, measured times), an attribute of an XML input.
 *
 * Decimal only: an optional sign, digits with at most one point, an optional
 * exponent (e or E, optional sign, digits). Nothing before or after (no
 * blank, no unit). strtod and strtol alone also read hexadecimal ("0x10" is
 * 16, so --time-limit 0x10 ran 16 s), "inf", "nan", "infinity" and leading
 * blanks; a person never means any of these. Lives in search/ (the lowest
 * layer) so the CLI, the XML module and the loaders share it.
 */
#ifndef KW_NUM_H
#define KW_NUM_H

/* *out = the finite double s writes (negative zero reads as 0, so "-0" and
 * "0" give one journal and one result). 0 on success; -1, *out untouched,
 * when s is not decimal (above), or the value is not finite or overflows or
 * underflows a double ("1e400", "1e-400"). */
int kw_num_double(double *out, const char *s);

/* 1 when s is written as a decimal number (above), whatever its value: a
 * refused "1e-400" is decimal, a refused "0x10" is not (so a message can say
 * which rule a refused value broke). */
int kw_num_syntax_decimal(const char *s);

/* *out = the whole number s writes: an optional sign and decimal digits, in
 * [min, max]. 0 on success; -1, *out untouched, otherwise (no fraction, no
 * exponent, not out of long's range). */
int kw_num_long(long *out, const char *s, long min, long max);

#endif
