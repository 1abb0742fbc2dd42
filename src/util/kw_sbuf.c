/* kw_sbuf.c - growable text buffer with fixed number formats (see kw_sbuf.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_error.h"
#include "kw_sbuf.h"

static int kw_sbuf_grow(kw_sbuf *b, size_t need)
{
    if (b->failed)
        return -1;
    if (b->len + need + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + need + 1) {
        if (cap > ((size_t)-1) / 2) {
            b->failed = 1;
            return -1;
        }
        cap *= 2;
    }
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void kw_sbuf_putn(kw_sbuf *b, const char *s, size_t n)
{
    if (kw_sbuf_grow(b, n) != 0)
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void kw_sbuf_puts(kw_sbuf *b, const char *s) { kw_sbuf_putn(b, s, strlen(s)); }

/* One formatting pass when the text fits the room left (the usual case: the
 * writers append short fields to a buffer that has grown already), a second
 * only after growing; the two-pass form (measure, then write) cost the
 * results writers half their time (make bench-mpi part C). */
void kw_sbuf_printf(kw_sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    size_t room = b->cap - b->len; /* cap > len whenever cap > 0 (the NUL) */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->cap ? b->data + b->len : NULL, b->cap ? room : 0, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < room) {
        b->len += (size_t)n;
        return;
    }
    if (b->cap)
        b->data[b->len] = '\0'; /* a cut-short first pass leaves nothing */
    if (n < 0 || kw_sbuf_grow(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void kw_sbuf_fmt_num(char *buf, size_t len, double v, int decimals)
{
    if (len == 0)
        return;
    buf[0] = '\0';
    if (!isfinite(v))
        return;
    snprintf(buf, len, "%.*f", decimals, v);
    /* "-0.000" reads as a regression that is not there: print it as zero */
    if (buf[0] == '-') {
        int zero = 1;
        for (const char *p = buf + 1; *p; p++)
            if (*p != '0' && *p != '.')
                zero = 0;
        if (zero)
            memmove(buf, buf + 1, strlen(buf));
    }
}

void kw_sbuf_num(kw_sbuf *b, double v, int decimals)
{
    char t[64];
    kw_sbuf_fmt_num(t, sizeof t, v, decimals);
    kw_sbuf_puts(b, t);
}

void kw_sbuf_csv(kw_sbuf *b, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        kw_sbuf_puts(b, s);
        return;
    }
    kw_sbuf_putn(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"')
            kw_sbuf_putn(b, "\"", 1);
        kw_sbuf_putn(b, s, 1);
    }
    kw_sbuf_putn(b, "\"", 1);
}

void kw_sbuf_html(kw_sbuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': kw_sbuf_puts(b, "&amp;"); break;
        case '<': kw_sbuf_puts(b, "&lt;"); break;
        case '>': kw_sbuf_puts(b, "&gt;"); break;
        case '"': kw_sbuf_puts(b, "&quot;"); break;
        case '\'': kw_sbuf_puts(b, "&#39;"); break;
        default: kw_sbuf_putn(b, s, 1);
        }
    }
}

void kw_sbuf_shell(kw_sbuf *b, const char *s)
{
    static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                "_./:=,+@%-";
    size_t n = strlen(s);
    if (n > 0 && strspn(s, plain) == n) {
        kw_sbuf_putn(b, s, n);
        return;
    }
    /* C0 controls, DEL, and C1 controls as UTF-8 (U+0080..U+009F: C2 80..9F) */
#define KW_SH_CONTROL(p) ((p)[0] < 0x20 || (p)[0] == 0x7f || ((p)[0] == 0xc2 && (p)[1] >= 0x80 && (p)[1] <= 0x9f))
    int control = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        control |= KW_SH_CONTROL(p);
    kw_sbuf_puts(b, control ? "$'" : "'");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\'')
            kw_sbuf_puts(b, control ? "\\'" : "'\\''");
        else if (control && *p == '\\')
            kw_sbuf_puts(b, "\\\\");
        else if (KW_SH_CONTROL(p)) {
            kw_sbuf_printf(b, "\\x%02x", *p);
            if (*p == 0xc2) /* its second byte too */
                kw_sbuf_printf(b, "\\x%02x", *++p);
        } else
            kw_sbuf_putn(b, (const char *)p, 1);
    }
    kw_sbuf_puts(b, "'");
#undef KW_SH_CONTROL
}

const char *kw_sbuf_cstr(kw_sbuf *b)
{
    if (!b->data)
        return "";
    return b->data;
}

int kw_sbuf_status(const kw_sbuf *b)
{
    if (b->failed)
        return kw_error_set(KW_ENOMEM, "out of memory rendering output");
    return 0;
}

void kw_sbuf_free(kw_sbuf *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}
