/* kw_sbuf.h - a growable text buffer for the results writers (CSV, HTML,
 * command lines), with the fixed number formats that make outputs
 * byte-identical for the same inputs.
 *
 * Design choice: writers render a whole file into memory, then one atomic
 * write puts it on disk; an out-of-memory failure is sticky (the buffer
 * remembers it) so a writer checks once at the end instead of after every
 * append. */
#ifndef KW_SBUF_H
#define KW_SBUF_H

#include <stddef.h>

typedef struct kw_sbuf {
    char *data; /* NUL-terminated when len > 0 or after kw_sbuf_cstr */
    size_t len, cap;
    int failed; /* an allocation failed: contents are incomplete */
} kw_sbuf;

/* Append formatted text. */
void kw_sbuf_printf(kw_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kw_sbuf_puts(kw_sbuf *b, const char *s);
void kw_sbuf_putn(kw_sbuf *b, const char *s, size_t n);
/* A number with `decimals` fixed decimals; NAN/inf appends nothing; never "-0.000". */
void kw_sbuf_num(kw_sbuf *b, double v, int decimals);
/* A CSV field (RFC 4180: quoted when it holds a comma, quote, CR or LF). */
void kw_sbuf_csv(kw_sbuf *b, const char *s);
/* Text escaped for HTML/SVG element content and attribute values. */
void kw_sbuf_html(kw_sbuf *b, const char *s);
/* s as one word of a POSIX shell command line, for the commands knobwise
 * prints to be pasted (audit's and results.xml's "reproduce"): unchanged
 * when it is made of letters, digits and _./:=,+@%- only (every path and
 * name knobwise writes itself), else in single quotes ('\'' for a quote), and
 * $'...' with \xHH escapes when it holds a control byte, so no byte of it
 * reaches a terminal as a control sequence. A space file at "my runs/s.xml"
 * or "a;touch x/s.xml" printed as it was gave a command that failed or ran
 * another one. */
void kw_sbuf_shell(kw_sbuf *b, const char *s);
/* The text (never NULL; "" when empty). Owned by b. */
const char *kw_sbuf_cstr(kw_sbuf *b);
/* 0, or KW_ENOMEM (with message) when an append failed. */
int kw_sbuf_status(const kw_sbuf *b);
void kw_sbuf_free(kw_sbuf *b);

/* Format a number like kw_sbuf_num into buf ("" for NAN). */
void kw_sbuf_fmt_num(char *buf, size_t len, double v, int decimals);

#endif
