/* kw_xml.c - the one place knobwise reads XML (see kw_xml.h).
 *
 * Design choice: refuse rather than sanitise. Input files are small,
 * hand-written and come from many hands, so anything a knobwise file never
 * needs is an error, caught as early as the parser allows:
 *  - options XML_PARSE_NONET | XML_PARSE_BIG_LINES only: never XML_PARSE_NOENT
 *    (despite its name it turns entity substitution ON), DTDLOAD, XINCLUDE or
 *    HUGE (which lifts libxml2's own depth and size limits);
 *  - a DOCTYPE is refused from the SAX internalSubset callback, which libxml2
 *    calls before it reads the internal subset: no entity declaration of a
 *    "billion laughs" or external-entity file is ever parsed;
 *  - nesting depth is counted in the SAX start/end callbacks and the parser is
 *    stopped past KW_XML_MAX_DEPTH, as soon as the offending element opens;
 *  - elements in the XInclude namespace are refused (we never process them,
 *    but a clear message beats a schema complaint about an unknown element);
 *  - while knobwise parses or validates, an external entity loader refuses
 *    every load (a thread-local flag, so other libxml2 users in the process
 *    are untouched);
 *  - files are read whole with a size limit, regular files only (a FIFO or
 *    /dev/zero never blocks or fills memory), UTF-8 only.
 * Schemas are compiled from memory (the embedded copies, kw_embed.h), so
 * validation does not depend on the installation or the current folder, and
 * each once per process (kw_xml_schema_get).
 * The approach follows libvirt's src/util/virxml.c.
 */
#include "kw_xml.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/SAX2.h>
#include <libxml/dict.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlsave.h>
#include <libxml/xmlschemas.h>
#include <libxml/xmlversion.h>

#include "kw_embed.h"
#include "kw_suggest.h"
#include "kw_xsdhint.h"
#include "kw_input.h"
#include "kw_num.h"
#include "kw_runfile.h"
#include "kw_tmpfile.h"

#define KW_XML_OPTIONS (XML_PARSE_NONET | XML_PARSE_BIG_LINES | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)

/* ---------------- problems ---------------- */

static void kw_xml_vproblem(kw_xml_problems *p, const char *file, long line, const char *fmt,
                            va_list ap)
{
    p->n++;
    if (p->n > KW_XML_MAX_PROBLEMS + 1)
        return;
    size_t used = strlen(p->text);
    if (used + 2 >= sizeof p->text)
        return;
    char *w = p->text + used;
    size_t room = sizeof p->text - used;
    if (used > 0) {
        *w++ = '\n';
        room--;
        *w = '\0';
    }
    if (p->n == KW_XML_MAX_PROBLEMS + 1) {
        snprintf(w, room, "%s: more problems not shown", file);
        return;
    }
    int k = line > 0 ? snprintf(w, room, "%s:%ld: ", file, line) : snprintf(w, room, "%s: ", file);
    if (k < 0 || (size_t)k >= room)
        return;
    vsnprintf(w + k, room - (size_t)k, fmt, ap);
    /* libxml2 messages end in a newline and some span two lines: one problem
     * is one line, so tools can split the collection on newlines. */
    size_t l = strlen(w);
    while (l > 0 && (w[l - 1] == '\n' || w[l - 1] == ' '))
        w[--l] = '\0';
    for (char *c = w; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
}

void kw_xml_problems_merge(kw_xml_problems *dst, const kw_xml_problems *src)
{
    if (src->n == 0)
        return;
    size_t used = strlen(dst->text);
    if (used > 0 && used + 1 < sizeof dst->text)
        dst->text[used++] = '\n';
    snprintf(dst->text + used, sizeof dst->text - used, "%s", src->text);
    dst->n += src->n;
}

void kw_xml_problem(kw_xml_problems *p, const char *file, long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kw_xml_vproblem(p, file, line, fmt, ap);
    va_end(ap);
}

int kw_xml_problems_finish(const kw_xml_problems *p)
{
    if (p->n == 0)
        return 0;
    return kw_error_set(KW_EINPUT, "%s", p->text);
}

/* ---------------- external entity loader ---------------- */

static _Thread_local int kw_xml_active;
static xmlExternalEntityLoader kw_xml_prev_loader;
static pthread_once_t kw_xml_once = PTHREAD_ONCE_INIT;

/* While knobwise parses, nothing is ever fetched: not a DTD, not an entity,
 * not a schema import. Outside our parses the previous loader is used. */
static xmlParserInputPtr kw_xml_loader(const char *url, const char *id, xmlParserCtxtPtr ctxt)
{
    if (kw_xml_active)
        return NULL;
    return kw_xml_prev_loader ? kw_xml_prev_loader(url, id, ctxt) : NULL;
}

static void kw_xml_init_once(void)
{
    xmlInitParser();
    kw_xml_prev_loader = xmlGetExternalEntityLoader();
    xmlSetExternalEntityLoader(kw_xml_loader);
}

static void kw_xml_init(void) { pthread_once(&kw_xml_once, kw_xml_init_once); }

#if LIBXML_VERSION >= 21200
typedef const xmlError *kw_xml_err_t;
#else
typedef xmlErrorPtr kw_xml_err_t;
#endif

/* ---------------- reading ---------------- */

/* The limit's name in messages: inputs people write, or files knobwise wrote. */
static const char *kw_xml_limit_what(size_t max)
{
    return max > KW_XML_MAX_BYTES ? "files knobwise writes" : "input files";
}

/* The rest of a file opened by kw_xml_read*: `head` (head_n bytes already
 * read from fd) first, then the rest, at most one byte past max (a file
 * growing under us is still bounded). Closes fd. */
static int kw_xml_read_rest(char **out, size_t *len, int fd, uint64_t size, size_t max,
                            const char *path, const char *head, size_t head_n,
                            kw_xml_problems *p)
{
    size_t cap = (size_t)size + 1 > max + 1 ? max + 1 : (size_t)size + 1;
    if (cap < head_n + 1)
        cap = head_n + 1;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return kw_error_set(KW_ENOMEM, "%s: out of memory", path);
    }
    if (head_n)
        memcpy(buf, head, head_n);
    long n = kw_input_read(fd, buf + head_n, cap - head_n);
    if (n < 0) {
        kw_xml_problem(p, path, 0, "cannot read: %s", strerror(errno));
        goto fail;
    }
    n += (long)head_n;
    if ((size_t)n == cap && cap <= max) {
        /* the file grew since it was opened: read on up to the limit */
        char *nb = realloc(buf, max + 2);
        if (!nb) {
            free(buf);
            close(fd);
            return kw_error_set(KW_ENOMEM, "%s: out of memory", path);
        }
        buf = nb;
        long more = kw_input_read(fd, buf + n, max + 1 - (size_t)n);
        if (more < 0) {
            kw_xml_problem(p, path, 0, "cannot read: %s", strerror(errno));
            goto fail;
        }
        n += more;
    }
    if ((size_t)n > max) {
        kw_xml_problem(p, path, 1, "file is over the %zu MiB limit for %s", max >> 20,
                       kw_xml_limit_what(max));
        goto fail;
    }
    close(fd);
    buf[n] = '\0';
    *out = buf;
    *len = (size_t)n;
    return 0;
fail:
    free(buf);
    close(fd);
    return KW_EINPUT;
}

/* The open every read shares: kw_input_open (a FIFO does not block, a device
 * or folder is refused, the size is checked on the open descriptor), a run
 * folder's own file never through a symbolic link (kw_runfile_open). */
static int kw_xml_open(int *fd, uint64_t *size, const char *path, int own, size_t max,
                       kw_xml_problems *p)
{
    char why[KW_INPUT_WHY_MAX];
    int rc = kw_runfile_open(fd, size, path, max, own, why, sizeof why);
    if (rc == 0)
        return 0;
    if (rc == KW_EINPUT && max > 0 && *size > max)
        kw_xml_problem(p, path, 1, "file is %llu bytes, over the %zu MiB limit for %s",
                       (unsigned long long)*size, max >> 20, kw_xml_limit_what(max));
    else
        kw_xml_problem(p, path, 0, "%s", why);
    return KW_EINPUT;
}

static int kw_xml_read(char **out, size_t *len, const char *path, int own, size_t max,
                       kw_xml_problems *p)
{
    *out = NULL;
    *len = 0;
    int fd;
    uint64_t size;
    if (kw_xml_open(&fd, &size, path, own, max, p) != 0)
        return KW_EINPUT;
    return kw_xml_read_rest(out, len, fd, size, max, path, NULL, 0, p);
}

/* The first element's name, as libxml2's push parser sees it in the first
 * head_n bytes of a file (name "" when it does not get that far: a DOCTYPE,
 * malformed text, a prolog longer than the head). Nothing is kept. */
typedef struct kw_xml_peek {
    char name[64];
} kw_xml_peek;

static void kw_xml_peek_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                              const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                              int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
    (void)prefix;
    (void)uri;
    (void)nb_namespaces;
    (void)namespaces;
    (void)nb_attributes;
    (void)nb_defaulted;
    (void)attributes;
    xmlParserCtxtPtr ctxt = ctx;
    kw_xml_peek *pk = ctxt->_private;
    if (pk->name[0] == '\0')
        snprintf(pk->name, sizeof pk->name, "%s", (const char *)localname);
    xmlStopParser(ctxt);
}

static void kw_xml_peek_doctype(void *ctx, const xmlChar *name, const xmlChar *ext_id,
                                const xmlChar *sys_id)
{
    (void)name;
    (void)ext_id;
    (void)sys_id;
    xmlStopParser(ctx);
}

static void kw_xml_peek_quiet(void *ctx, kw_xml_err_t err)
{
    (void)ctx;
    (void)err;
}

static void kw_xml_peek_root(kw_xml_peek *pk, const char *head, size_t head_n, const char *label)
{
    pk->name[0] = '\0';
    if (head_n < 4 || memchr(head, '\0', head_n) != NULL)
        return;
    kw_xml_init();
    xmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = kw_xml_peek_start;
    sax.internalSubset = kw_xml_peek_doctype;
    sax.serror = (xmlStructuredErrorFunc)kw_xml_peek_quiet;
    /* the first 4 bytes choose the encoding, as libxml2's push interface asks */
    xmlParserCtxtPtr ctxt = xmlCreatePushParserCtxt(&sax, NULL, head, 4, label);
    if (!ctxt)
        return;
    xmlCtxtUseOptions(ctxt, KW_XML_OPTIONS);
    ctxt->_private = pk;
    kw_xml_active = 1;
    xmlParseChunk(ctxt, head + 4, (int)(head_n - 4), 0);
    kw_xml_active = 0;
    ctxt->_private = NULL;
    if (ctxt->myDoc)
        xmlFreeDoc(ctxt->myDoc);
    ctxt->myDoc = NULL;
    xmlFreeParserCtxt(ctxt);
}

#define KW_XML_PEEK_BYTES 4096
int kw_xml_read_input_or(char **out, size_t *len, const char *path, const char *big_root,
                         int *big, kw_xml_problems *p)
{
    *out = NULL;
    *len = 0;
    *big = 0;
    int fd;
    uint64_t size;
    if (kw_xml_open(&fd, &size, path, 0, 0, p) != 0)
        return KW_EINPUT;
    if (size <= KW_XML_MAX_BYTES)
        return kw_xml_read_rest(out, len, fd, size, KW_XML_MAX_BYTES, path, NULL, 0, p);
    char head[KW_XML_PEEK_BYTES];
    long n = kw_input_read(fd, head, sizeof head);
    if (n < 0) {
        kw_xml_problem(p, path, 0, "cannot read: %s", strerror(errno));
        close(fd);
        return KW_EINPUT;
    }
    kw_xml_peek pk;
    kw_xml_peek_root(&pk, head, (size_t)n, path);
    size_t max = strcmp(pk.name, big_root) == 0 ? KW_XML_MAX_OUTPUT_BYTES : KW_XML_MAX_BYTES;
    if (size > max) {
        kw_xml_problem(p, path, 1, "file is %llu bytes, over the %zu MiB limit for %s",
                       (unsigned long long)size, max >> 20, kw_xml_limit_what(max));
        close(fd);
        return KW_EINPUT;
    }
    *big = 1;
    return kw_xml_read_rest(out, len, fd, size, max, path, head, (size_t)n, p);
}

int kw_xml_read_file(char **out, size_t *len, const char *path, kw_xml_problems *p)
{
    return kw_xml_read(out, len, path, 0, KW_XML_MAX_BYTES, p);
}

int kw_xml_read_output(char **out, size_t *len, const char *path, int own, kw_xml_problems *p)
{
    return kw_xml_read(out, len, path, own, KW_XML_MAX_OUTPUT_BYTES, p);
}

/* ---------------- parsing ---------------- */

typedef struct kw_xml_pstate {
    const char *label;
    kw_xml_problems *p;
    int depth;
    int stopped;   /* we stopped the parser: its own follow-up errors are noise */
    int reported;  /* problems recorded during this parse */
    size_t nodes;  /* elements and attributes opened so far */
    int dense;     /* cap nodes by the bytes read so far (files knobwise wrote) */
    int nomem;     /* libxml2 ran out of memory: not the file's fault */
    long nomem_line; /* the line it was reading then (0: not known) */
    startElementNsSAX2Func start;
    endElementNsSAX2Func end;
} kw_xml_pstate;

static int kw_xml_is_xinclude(const xmlChar *uri)
{
    return uri && (xmlStrcmp(uri, BAD_CAST "http://www.w3.org/2001/XInclude") == 0 ||
                   xmlStrcmp(uri, BAD_CAST "http://www.w3.org/2003/XInclude") == 0);
}

static void kw_xml_stop(xmlParserCtxtPtr ctxt, kw_xml_pstate *st, const char *msg)
{
    kw_xml_problem(st->p, st->label, ctxt->input ? ctxt->input->line : 0, "%s", msg);
    st->reported++;
    st->stopped = 1;
    xmlStopParser(ctxt);
}

static void kw_xml_sax_doctype(void *ctx, const xmlChar *name, const xmlChar *ext_id,
                               const xmlChar *sys_id)
{
    (void)name;
    (void)ext_id;
    (void)sys_id;
    xmlParserCtxtPtr ctxt = ctx;
    kw_xml_stop(ctxt, ctxt->_private, KW_XML_DOCTYPE_REFUSED);
}

static void kw_xml_sax_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                             const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                             int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
    xmlParserCtxtPtr ctxt = ctx;
    kw_xml_pstate *st = ctxt->_private;
    if (st->stopped)
        return;
    if (++st->depth > KW_XML_MAX_DEPTH) {
        char msg[128];
        snprintf(msg, sizeof msg, "elements nested deeper than %d levels", KW_XML_MAX_DEPTH);
        kw_xml_stop(ctxt, st, msg);
        return;
    }
    if (kw_xml_is_xinclude(uri)) {
        kw_xml_stop(ctxt, st, "XInclude is not allowed: knobwise files include nothing");
        return;
    }
    st->nodes += 1 + (size_t)(nb_attributes > 0 ? nb_attributes : 0);
    long at = st->dense ? xmlByteConsumed(ctxt) : 0;
    if (st->dense && st->nodes > (size_t)(at > 0 ? at : 0) / KW_XML_OUTPUT_BYTES_PER_NODE + 1024) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "%zu elements and attributes in its first %ld bytes: a file knobwise writes "
                 "has at most one per %d bytes",
                 st->nodes, at, KW_XML_OUTPUT_BYTES_PER_NODE);
        kw_xml_stop(ctxt, st, msg);
        return;
    }
    st->start(ctx, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes, nb_defaulted,
              attributes);
}

static void kw_xml_sax_end(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                           const xmlChar *uri)
{
    xmlParserCtxtPtr ctxt = ctx;
    kw_xml_pstate *st = ctxt->_private;
    if (st->stopped)
        return;
    st->depth--;
    st->end(ctx, localname, prefix, uri);
}

static void kw_xml_parse_error(void *ctx, kw_xml_err_t err)
{
    xmlParserCtxtPtr ctxt = ctx;
    kw_xml_pstate *st = ctxt->_private;
    if (err && err->code == XML_ERR_NO_MEMORY) {
        st->nomem = 1; /* reported once, as out of memory (kw_xml_parse_max) */
        if (st->nomem_line <= 0)
            st->nomem_line = err->line;
        return;
    }
    if (st->stopped || err == NULL || err->level < XML_ERR_ERROR)
        return;
    kw_xml_problem(st->p, st->label, err->line, "%s", err->message ? err->message : "XML error");
    st->reported++;
}

/* Does the text contain a NUL byte or start with a UTF-16/32 byte order mark? */
static int kw_xml_not_utf8_text(const char *buf, size_t len)
{
    const unsigned char *u = (const unsigned char *)buf;
    if (len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF)))
        return 1;
    return memchr(buf, '\0', len) != NULL;
}

/* Most attributes in one start tag, counted on the raw text (comments and
 * quoted values skipped). libxml2 checks each attribute against every earlier
 * one of its element, and the schema validator does too: 40,000 attributes on
 * one element cost 12 s, a 4 MiB file of them many minutes. Knobwise elements
 * have at most a dozen attributes, so the parser never sees such a tag. */
#define KW_XML_MAX_ATTRS 256
static long kw_xml_max_attrs(const char *buf, size_t len, long *line)
{
    long max = 0, n = 0, ln = 1;
    int in_tag = 0;
    char q = 0;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        ln += c == '\n';
        if (q) {
            q = c == q ? 0 : q;
        } else if (!in_tag) {
            if (c == '<' && len - i >= 4 && memcmp(buf + i, "<!--", 4) == 0) {
                const char *e = memmem(buf + i + 4, len - i - 4, "-->", 3);
                for (const char *k = buf + i; e && k < e; k++)
                    ln += *k == '\n';
                i = e ? (size_t)(e - buf) + 2 : len;
            } else if (c == '<') {
                in_tag = 1;
                n = 0;
            }
        } else if (c == '"' || c == '\'') {
            q = c;
        } else if (c == '=' && ++n > max) {
            max = n;
            *line = ln;
        } else if (c == '>') {
            in_tag = 0;
        }
    }
    return max;
}

static int kw_xml_parse_caught(xmlDocPtr *out, const char *label, const char *buf, size_t len,
                               size_t max, kw_xml_problems *p, const kw_xml_catch *quiet)
{
    if (len > max) {
        kw_xml_problem(p, label, 1, "file is over the %zu MiB limit for %s", max >> 20,
                       kw_xml_limit_what(max));
        return KW_EINPUT;
    }
    if (len == 0) {
        kw_xml_problem(p, label, 1, "file is empty");
        return KW_EINPUT;
    }
    if (kw_xml_not_utf8_text(buf, len)) {
        kw_xml_problem(p, label, 1, "not UTF-8 text (knobwise reads UTF-8 XML only)");
        return KW_EINPUT;
    }
    long attr_line = 1;
    if (kw_xml_max_attrs(buf, len, &attr_line) > KW_XML_MAX_ATTRS) {
        kw_xml_problem(p, label, attr_line, "an element with more than %d attributes",
                       KW_XML_MAX_ATTRS);
        return KW_EINPUT;
    }
    /* a file knobwise wrote (read up to the 512 MiB limit) holds elements and
     * attributes in proportion to its bytes, in every part of it: the cap on
     * the bytes read so far stops a crafted one (80 MB of <x/>: 20 million
     * elements, 2.6 GB and 13 s before libxml2 gave up) in its first
     * kilobytes. Inputs are bounded by their 4 MiB limit. */
    kw_xml_pstate st = {.label = label, .p = p, .dense = max > KW_XML_MAX_BYTES};
    int p_n = p->n;
    size_t p_used = strlen(p->text);
    int rc = KW_EINPUT;
    xmlDocPtr doc = NULL;
    xmlParserCtxtPtr ctxt = xmlCreateMemoryParserCtxt(buf, (int)len);
    if (!ctxt)
        return kw_error_set(KW_ENOMEM, "%s: out of memory while reading it", label);
    xmlCtxtUseOptions(ctxt, KW_XML_OPTIONS);
    ctxt->_private = &st;
    st.start = ctxt->sax->startElementNs;
    st.end = ctxt->sax->endElementNs;
    if (!st.start || !st.end) {
        rc = kw_error_set(KW_ESTATE, "%s: libxml2 parser without SAX2 callbacks", label);
        goto done;
    }
    ctxt->sax->internalSubset = kw_xml_sax_doctype;
    ctxt->sax->externalSubset = NULL;
    ctxt->sax->startElementNs = kw_xml_sax_start;
    ctxt->sax->endElementNs = kw_xml_sax_end;
    ctxt->sax->serror = (xmlStructuredErrorFunc)kw_xml_parse_error;
    ctxt->sax->warning = NULL;
    ctxt->sax->error = NULL;
    ctxt->sax->fatalError = NULL;
    ctxt->vctxt.error = NULL;
    ctxt->vctxt.warning = NULL;

    kw_xml_active = 1;
    xmlParseDocument(ctxt);
    kw_xml_active = 0;
    doc = ctxt->myDoc;
    ctxt->myDoc = NULL;
    /* short of memory (ulimit -v): exit 1, not "FILE:29: XML error", exit 2,
     * as a well-formed file read until 2026-12-07 */
    if (st.nomem || quiet->nomem || ctxt->errNo == XML_ERR_NO_MEMORY) {
        /* what the parse said after it ran short is no fault of the file */
        p->n = p_n;
        p->text[p_used] = '\0';
        long line = st.nomem_line > 0 ? st.nomem_line : ctxt->input ? ctxt->input->line : 0;
        rc = line > 0 ? kw_error_set(KW_ENOMEM, "%s:%ld: out of memory while reading it", label,
                                     line)
                      : kw_error_set(KW_ENOMEM, "%s: out of memory while reading it", label);
        goto done;
    }
    if (st.reported > 0 || st.stopped || !ctxt->wellFormed || doc == NULL) {
        if (st.reported == 0)
            kw_xml_problem(p, label, ctxt->input ? ctxt->input->line : 0, "malformed XML");
        goto done;
    }
    if (doc->intSubset || doc->extSubset) { /* NEVER: the SAX hook stops first */
        kw_xml_problem(p, label, 1, "DOCTYPE is not allowed");
        goto done;
    }
    if (doc->encoding && strcasecmp((const char *)doc->encoding, "UTF-8") != 0 &&
        strcasecmp((const char *)doc->encoding, "UTF8") != 0) {
        kw_xml_problem(p, label, 1, "encoding '%s' is not accepted: knobwise reads UTF-8 only",
                       (const char *)doc->encoding);
        goto done;
    }
    if (xmlDocGetRootElement(doc) == NULL) {
        kw_xml_problem(p, label, 1, "no root element");
        goto done;
    }
    *out = doc;
    doc = NULL;
    rc = 0;
done:
    kw_xml_active = 0;
    if (doc)
        xmlFreeDoc(doc);
    ctxt->_private = NULL;
    xmlFreeParserCtxt(ctxt);
    return rc;
}

/* libxml2's own reports (an allocation that failed: "parser error : Memory
 * allocation failed" on stderr before knobwise's message until 2026-12-07)
 * are caught for the whole parse, libxml2's initialisation included: a
 * file's problems come through kw_xml_parse_error, a want of memory as one
 * KW_ENOMEM naming the file and the line reached. */
static int kw_xml_parse_max(xmlDocPtr *out, const char *label, const char *buf, size_t len,
                            size_t max, kw_xml_problems *p)
{
    *out = NULL;
    kw_xml_catch quiet;
    kw_xml_catch_begin(&quiet);
    kw_xml_init();
    int rc = kw_xml_parse_caught(out, label, buf, len, max, p, &quiet);
    kw_xml_catch_end(&quiet);
    return rc;
}

int kw_xml_parse(xmlDocPtr *out, const char *label, const char *buf, size_t len,
                 kw_xml_problems *p)
{
    return kw_xml_parse_max(out, label, buf, len, KW_XML_MAX_BYTES, p);
}

int kw_xml_parse_output(xmlDocPtr *out, const char *label, const char *buf, size_t len,
                        kw_xml_problems *p)
{
    return kw_xml_parse_max(out, label, buf, len, KW_XML_MAX_OUTPUT_BYTES, p);
}

/* ---------------- schema validation ---------------- */

typedef struct kw_xml_vstate {
    const char *label;
    kw_xml_problems *p;
    int reported;
    int nomem;                        /* libxml2 ran out of memory validating */
    const kw_embedded_file *xsd_file; /* the schema's text, for kw_xml_explain */
    xmlDocPtr xsd;                    /* parsed on the first error that needs it */
    int xsd_tried;
} kw_xml_vstate;

/* The schema as a document (kw_xsdhint.c reads what it allows). */
static xmlDocPtr kw_xml_vstate_xsd(kw_xml_vstate *vs)
{
    if (!vs->xsd_tried && vs->xsd_file) {
        vs->xsd_tried = 1;
        vs->xsd = xmlReadMemory((const char *)vs->xsd_file->data, (int)vs->xsd_file->len,
                                "schema.xsd", NULL, KW_XML_OPTIONS);
    }
    return vs->xsd;
}

/* Rewrite libxml2's "Element 'moe': This element is not expected." and
 * "attribute 'x' is not allowed" as what the schema allows there, with the
 * nearest allowed name. Returns 1 when msg was written, 0 to keep
 * libxml2's text (a case the schema walk cannot place). */
static int kw_xml_explain(kw_xml_vstate *vs, kw_xml_err_t err, char *msg, size_t size)
{
    const xmlNode *node = (const xmlNode *)err->node;
    const char *text = err->message ? err->message : "";
    if (!node)
        return 0;
    kw_xsd_names names;
    char list[1024], hint[512];
    kw_suggest sg;
    if (err->code == XML_SCHEMAV_ELEMENT_CONTENT && node->type == XML_ELEMENT_NODE &&
        strstr(text, "This element is not expected") && node->parent &&
        node->parent->type == XML_ELEMENT_NODE) {
        if (kw_xsdhint_children(&names, kw_xml_vstate_xsd(vs), node->parent) != 0)
            return 0;
        kw_xsdhint_join(list, sizeof list, &names);
        const char *nm = (const char *)node->name, *pn = (const char *)node->parent->name;
        kw_suggest_init(&sg, nm);
        int known = 0;
        for (int i = 0; i < names.n; i++) {
            kw_suggest_add(&sg, names.name[i]);
            known |= strcmp(names.name[i], nm) == 0;
        }
        if (known) {
            /* allowed in the parent, not at this position (order or count) */
            const char *exp = strstr(text, "Expected is");
            int el = exp ? (int)strcspn(exp, "\n") : 0;
            while (el > 0 && (exp[el - 1] == ' ' || exp[el - 1] == '.'))
                el--;
            snprintf(msg, size, "<%s> is not expected at this position in <%s>%s%.*s (its children, "
                     "in the schema's order: %s)", nm, pn, exp ? ": " : "", el, exp ? exp : "",
                     names.n ? list : "none");
            return 1;
        }
        kw_suggest_format(&sg, hint, sizeof hint);
        snprintf(msg, size, "<%s> is not allowed in <%s>; allowed here: %s%s", nm, pn,
                 names.n ? list : "no child elements", hint);
        return 1;
    }
    if ((err->code == XML_SCHEMAV_CVC_COMPLEX_TYPE_3_2_1 ||
         err->code == XML_SCHEMAV_CVC_COMPLEX_TYPE_3_2_2) && strstr(text, "is not allowed")) {
        const xmlNode *elem = node;
        char an[KW_XSDHINT_NAME_LEN] = "";
        if (node->type == XML_ATTRIBUTE_NODE) {
            elem = node->parent;
            snprintf(an, sizeof an, "%s", (const char *)node->name);
        } else {
            const char *q = strstr(text, "attribute '");
            if (!q)
                return 0;
            q += strlen("attribute '");
            snprintf(an, sizeof an, "%.*s", (int)strcspn(q, "'"), q);
        }
        if (!elem || elem->type != XML_ELEMENT_NODE ||
            kw_xsdhint_attributes(&names, kw_xml_vstate_xsd(vs), elem) != 0)
            return 0;
        kw_xsdhint_join(list, sizeof list, &names);
        kw_suggest_init(&sg, an);
        for (int i = 0; i < names.n; i++)
            kw_suggest_add(&sg, names.name[i]);
        kw_suggest_format(&sg, hint, sizeof hint);
        snprintf(msg, size, "attribute '%s' is not allowed on <%s>; allowed here: %s%s", an,
                 (const char *)elem->name, names.n ? list : "no attributes", hint);
        return 1;
    }
    return 0;
}

static void kw_xml_schema_error(void *ud, kw_xml_err_t err)
{
    kw_xml_vstate *vs = ud;
    if (err && err->code == XML_ERR_NO_MEMORY)
        vs->nomem = 1; /* reported once, as out of memory (kw_xml_validate) */
    if (err == NULL || err->level < XML_ERR_ERROR || vs->nomem)
        return;
    long line = err->line;
    if (line <= 0 && err->node)
        line = xmlGetLineNo((xmlNodePtr)err->node);
    char msg[2048];
    if (kw_xml_explain(vs, err, msg, sizeof msg))
        kw_xml_problem(vs->p, vs->label, line, "%s", msg);
    else
        kw_xml_problem(vs->p, vs->label, line, "%s", err->message ? err->message : "schema violation");
    vs->reported++;
}

/* ---- libxml2's own reports while writing (kw_xml_catch_begin/end) ---- */

static void kw_xml_catch_cb(void *ud, kw_xml_err_t err)
{
    kw_xml_catch *c = ud;
    if (!err)
        return;
    c->nomem |= err->code == XML_ERR_NO_MEMORY;
    if (c->n++ == 0)
        snprintf(c->first, sizeof c->first, "%s", err->message ? err->message : "libxml2 error");
    /* strip the trailing newline libxml2 puts on its messages */
    size_t len = strlen(c->first);
    while (len > 0 && (c->first[len - 1] == '\n' || c->first[len - 1] == ' '))
        c->first[--len] = '\0';
}

/* libxml2's generic channel (printf-style, used where a report has no
 * structure): counted, the text dropped */
static void kw_xml_catch_generic(void *ud, const char *fmt, ...)
{
    (void)fmt;
    kw_xml_catch *c = ud;
    if (c->n++ == 0)
        snprintf(c->first, sizeof c->first, "libxml2 error");
}

void kw_xml_catch_begin(kw_xml_catch *c)
{
    memset(c, 0, sizeof *c);
    c->old_fn = (void (*)(void))xmlStructuredError;
    c->old_ctx = xmlStructuredErrorContext;
    c->old_generic = (void (*)(void))xmlGenericError;
    c->old_generic_ctx = xmlGenericErrorContext;
    xmlSetStructuredErrorFunc(c, (xmlStructuredErrorFunc)kw_xml_catch_cb);
    xmlSetGenericErrorFunc(c, kw_xml_catch_generic);
}

void kw_xml_catch_end(kw_xml_catch *c)
{
    xmlSetStructuredErrorFunc(c->old_ctx, (xmlStructuredErrorFunc)c->old_fn);
    xmlSetGenericErrorFunc(c->old_generic_ctx, (xmlGenericErrorFunc)c->old_generic);
}

static void kw_xml_drop_error(void *ud, kw_xml_err_t err)
{
    (void)ud;
    (void)err;
}

static void kw_xml_drop_generic(void *ud, const char *fmt, ...)
{
    (void)ud;
    (void)fmt;
}

void kw_xml_route_errors(void)
{
    xmlSetStructuredErrorFunc(NULL, (xmlStructuredErrorFunc)kw_xml_drop_error);
    xmlSetGenericErrorFunc(NULL, kw_xml_drop_generic);
    xmlThrDefSetStructuredErrorFunc(NULL, (xmlStructuredErrorFunc)kw_xml_drop_error);
    xmlThrDefSetGenericErrorFunc(NULL, kw_xml_drop_generic);
}

static void kw_xml_schema_parse_error(void *ud, kw_xml_err_t err)
{
    kw_xml_vstate *vs = ud;
    if (err && err->code == XML_ERR_NO_MEMORY) {
        vs->nomem = 1; /* not a broken schema (kw_xml_schema_get) */
        return;
    }
    if (err && err->level >= XML_ERR_ERROR && vs->reported++ == 0)
        kw_error_set(KW_ESTATE, "embedded schema %s is broken: line %d: %s", vs->label, err->line,
                     err->message ? err->message : "?");
}

/* Compiled schemas, one per embedded schema file, compiled at first use and
 * shared by every later validation in the process. Compiling space.xsd costs
 * far more than validating a small file against it, and a tune, a bench or a
 * fuzz run loads thousands of files. Thread safety: the table is only read or
 * extended under kw_xml_schema_lock (a first compile runs under it too, so a
 * schema is never compiled twice); a compiled xmlSchema is read-only and
 * libxml2 lets any number of validation contexts, one per call here, use it at
 * the same time. Freed by kw_xml_cleanup(), called from an atexit() handler
 * registered at the first compile, so memcheck and LeakSanitizer see nothing
 * left over. */
#define KW_XML_SCHEMA_SLOTS 8 /* the embedded schemas: space, accelerator, workload, results */

static pthread_mutex_t kw_xml_schema_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    const kw_embedded_file *file;
    xmlSchemaPtr schema;
} kw_xml_schemas[KW_XML_SCHEMA_SLOTS];
static int kw_xml_n_schemas;
static long kw_xml_n_compiled;
static int kw_xml_cleanup_registered;

void kw_xml_cleanup(void)
{
    pthread_mutex_lock(&kw_xml_schema_lock);
    for (int i = 0; i < kw_xml_n_schemas; i++) {
        xmlSchemaFree(kw_xml_schemas[i].schema);
        kw_xml_schemas[i].schema = NULL;
        kw_xml_schemas[i].file = NULL;
    }
    kw_xml_n_schemas = 0;
    pthread_mutex_unlock(&kw_xml_schema_lock);
}

/* At exit: free the schemas. knobwise's main() has already called
 * xmlCleanupParser() by then, and libxml2 before 2.12 answers the dictionary
 * frees inside xmlSchemaFree() by allocating its dictionary mutex again; drop
 * it once more (nothing uses libxml2 after exit). */
static void kw_xml_atexit(void)
{
    pthread_mutex_lock(&kw_xml_schema_lock);
    int had = kw_xml_n_schemas;
    pthread_mutex_unlock(&kw_xml_schema_lock);
    kw_xml_cleanup();
#if LIBXML_VERSION < 21200
    if (had)
        xmlDictCleanup();
#endif
}

long kw_xml_schema_compilations(void)
{
    pthread_mutex_lock(&kw_xml_schema_lock);
    long n = kw_xml_n_compiled;
    pthread_mutex_unlock(&kw_xml_schema_lock);
    return n;
}

/* The compiled schema of embedded file f (named schema_name), compiling it on
 * first use. The caller has set kw_xml_active (no external loads). */
static int kw_xml_schema_get(xmlSchemaPtr *out, const kw_embedded_file *f, const char *schema_name)
{
    int rc = 0;
    xmlSchemaParserCtxtPtr pc = NULL;
    kw_xml_vstate ps = {.label = schema_name};
    *out = NULL;
    pthread_mutex_lock(&kw_xml_schema_lock);
    for (int i = 0; i < kw_xml_n_schemas; i++)
        if (kw_xml_schemas[i].file == f) {
            *out = kw_xml_schemas[i].schema;
            goto done;
        }
    if (kw_xml_n_schemas == KW_XML_SCHEMA_SLOTS) { /* a new embedded schema: raise the constant */
        rc = kw_error_set(KW_ESTATE, "too many embedded schemas to keep compiled (%d)",
                          KW_XML_SCHEMA_SLOTS);
        goto done;
    }
    pc = xmlSchemaNewMemParserCtxt((const char *)f->data, (int)f->len);
    if (!pc) {
        rc = kw_error_set(KW_ENOMEM, "out of memory reading embedded schema %s", schema_name);
        goto done;
    }
    xmlSchemaSetParserStructuredErrors(pc, (xmlStructuredErrorFunc)kw_xml_schema_parse_error, &ps);
    xmlSchemaPtr schema = xmlSchemaParse(pc);
    if (ps.nomem) {
        xmlSchemaFree(schema);
        rc = kw_error_set(KW_ENOMEM, "out of memory compiling embedded schema %s", schema_name);
        goto done;
    }
    if (!schema) {
        rc = ps.reported == 0
                 ? kw_error_set(KW_ESTATE, "embedded schema %s does not compile", schema_name)
                 : KW_ESTATE;
        goto done;
    }
    kw_xml_schemas[kw_xml_n_schemas].file = f;
    kw_xml_schemas[kw_xml_n_schemas].schema = schema;
    kw_xml_n_schemas++;
    kw_xml_n_compiled++;
    if (!kw_xml_cleanup_registered && atexit(kw_xml_atexit) == 0)
        kw_xml_cleanup_registered = 1;
    *out = schema;
done:
    pthread_mutex_unlock(&kw_xml_schema_lock);
    xmlSchemaFreeParserCtxt(pc);
    return rc;
}

int kw_xml_validate(xmlDocPtr doc, const char *label, const char *schema_name,
                    kw_xml_problems *p)
{
    kw_xml_init();
    const kw_embedded_file *f = kw_embedded_find(schema_name);
    if (!f)
        return kw_error_set(KW_ESTATE, "%s: schema %s is not built into this knobwise", label,
                            schema_name);
    int rc = KW_ESTATE;
    xmlSchemaPtr schema = NULL;
    xmlSchemaValidCtxtPtr vc = NULL;
    /* libxml2's own reports caught, as in kw_xml_parse_max */
    kw_xml_catch quiet;
    kw_xml_catch_begin(&quiet);
    kw_xml_active = 1;
    int p_n = p->n;
    size_t p_used = strlen(p->text);
    if ((rc = kw_xml_schema_get(&schema, f, schema_name)) != 0)
        goto done;
    rc = KW_ESTATE;
    vc = xmlSchemaNewValidCtxt(schema);
    if (!vc) {
        rc = kw_error_set(KW_ENOMEM, "%s: out of memory while checking it against its schema",
                          label);
        goto done;
    }
    kw_xml_vstate vs = {.label = label, .p = p, .xsd_file = f};
    xmlSchemaSetValidStructuredErrors(vc, (xmlStructuredErrorFunc)kw_xml_schema_error, &vs);
    int r = xmlSchemaValidateDoc(vc, doc);
    xmlFreeDoc(vs.xsd);
    if (vs.nomem || quiet.nomem) {
        /* what the validator said after it ran short is no fault of the file */
        p->n = p_n;
        p->text[p_used] = '\0';
        rc = kw_error_set(KW_ENOMEM, "%s: out of memory while checking it against its schema",
                          label);
    } else if (r == 0) {
        rc = 0;
    } else if (r > 0 || vs.reported > 0) {
        if (vs.reported == 0)
            kw_xml_problem(p, label, 1, "does not match the schema %s", schema_name);
        rc = KW_EINPUT;
    } else {
        kw_error_set(KW_ESTATE, "%s: schema validation failed internally", label);
    }
done:
    kw_xml_active = 0;
    xmlSchemaFreeValidCtxt(vc);
    kw_xml_catch_end(&quiet);
    return rc;
}

static int kw_xml_load_max(xmlDocPtr *out, const char *label, const char *buf, size_t len,
                           const char *root, const char *schema_name, size_t max,
                           kw_xml_problems *p)
{
    xmlDocPtr doc = NULL;
    int rc = kw_xml_parse_max(&doc, label, buf, len, max, p);
    if (rc != 0)
        return rc;
    xmlNode *r = xmlDocGetRootElement(doc);
    if (root && (r->ns != NULL || xmlStrcmp(r->name, BAD_CAST root) != 0)) {
        kw_xml_problem(p, label, kw_xml_line(r), "root element is '%s', expected '%s'",
                       (const char *)r->name, root);
        xmlFreeDoc(doc);
        return KW_EINPUT;
    }
    if (schema_name && (rc = kw_xml_validate(doc, label, schema_name, p)) != 0) {
        xmlFreeDoc(doc);
        return rc;
    }
    *out = doc;
    return 0;
}

int kw_xml_load(xmlDocPtr *out, const char *label, const char *buf, size_t len, const char *root,
                const char *schema_name, kw_xml_problems *p)
{
    return kw_xml_load_max(out, label, buf, len, root, schema_name, KW_XML_MAX_BYTES, p);
}

int kw_xml_load_output(xmlDocPtr *out, const char *label, const char *buf, size_t len,
                       const char *root, const char *schema_name, kw_xml_problems *p)
{
    return kw_xml_load_max(out, label, buf, len, root, schema_name, KW_XML_MAX_OUTPUT_BYTES, p);
}

/* ---------------- tree helpers ---------------- */

long kw_xml_line(const xmlNode *n) { return n ? xmlGetLineNo((xmlNodePtr)n) : 0; }

xmlNode *kw_xml_elem(xmlNode *n)
{
    while (n && n->type != XML_ELEMENT_NODE)
        n = n->next;
    return n;
}

int kw_xml_is(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, BAD_CAST name) == 0;
}

/* xs:* value spaces allow surrounding whitespace; knobwise values never need it. */
static char *kw_xml_trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    size_t l = strlen(s);
    while (l > 0 && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\n' || s[l - 1] == '\r'))
        s[--l] = '\0';
    return s;
}

int kw_xml_attr_str(char *out, size_t size, const xmlNode *n, const char *attr, const char *file,
                    kw_xml_problems *p)
{
    xmlChar *v = xmlGetNoNsProp((xmlNodePtr)n, BAD_CAST attr);
    if (!v)
        return 0;
    int r = 1;
    size_t l = strlen((const char *)v);
    if (l >= size) {
        kw_xml_problem(p, file, kw_xml_line(n), "attribute '%s' is longer than %zu characters",
                       attr, size - 1);
        r = -1;
    } else {
        memcpy(out, v, l + 1);
    }
    xmlFree(v);
    return r;
}

int kw_xml_attr_double(double *out, const xmlNode *n, const char *attr, const char *file,
                       kw_xml_problems *p)
{
    xmlChar *v = xmlGetNoNsProp((xmlNodePtr)n, BAD_CAST attr);
    if (!v)
        return 0;
    char *s = kw_xml_trim((char *)v);
    double d;
    int r = 1;
    if (kw_num_double(&d, s) != 0) {
        kw_xml_problem(p, file, kw_xml_line(n), "attribute '%s': '%s' is not a finite number",
                       attr, s);
        r = -1;
    } else {
        *out = d;
    }
    xmlFree(v);
    return r;
}

int kw_xml_attr_long(long *out, const xmlNode *n, const char *attr, long min, long max,
                     const char *file, kw_xml_problems *p)
{
    xmlChar *v = xmlGetNoNsProp((xmlNodePtr)n, BAD_CAST attr);
    if (!v)
        return 0;
    char *s = kw_xml_trim((char *)v);
    long x;
    int r = 1;
    if (kw_num_long(&x, s, min, max) != 0) {
        kw_xml_problem(p, file, kw_xml_line(n),
                       "attribute '%s': '%s' is not a whole number from %ld to %ld", attr, s, min,
                       max);
        r = -1;
    } else {
        *out = x;
    }
    xmlFree(v);
    return r;
}

int kw_xml_attr_bool(int *out, const xmlNode *n, const char *attr, const char *file,
                     kw_xml_problems *p)
{
    xmlChar *v = xmlGetNoNsProp((xmlNodePtr)n, BAD_CAST attr);
    if (!v)
        return 0;
    char *s = kw_xml_trim((char *)v);
    int r = 1;
    if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
        *out = 1;
    else if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
        *out = 0;
    else {
        kw_xml_problem(p, file, kw_xml_line(n), "attribute '%s': '%s' is not true or false", attr,
                       s);
        r = -1;
    }
    xmlFree(v);
    return r;
}

/* ---------------- atomic write ---------------- */

static const int kw_xml_held_signals[KW_XML_N_HELD_SIGNALS] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,
                                                               SIGUSR1, SIGUSR2, SIGALRM};
static volatile sig_atomic_t kw_xml_held_signal; /* the first that arrived while held, or 0 */

static void kw_xml_on_held_signal(int sig)
{
    if (kw_xml_held_signal == 0)
        kw_xml_held_signal = sig;
}

void kw_xml_signals_hold(kw_xml_sighold *h)
{
    kw_xml_held_signal = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = kw_xml_on_held_signal;
    sigfillset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; /* write, fsync and rename go on as if nothing came */
    for (int i = 0; i < KW_XML_N_HELD_SIGNALS; i++) {
        h->replaced[i] = 0;
        if (sigaction(kw_xml_held_signals[i], NULL, &h->old[i]) != 0 ||
            h->old[i].sa_handler == SIG_IGN)
            continue;
        h->replaced[i] = sigaction(kw_xml_held_signals[i], &sa, NULL) == 0;
    }
}

void kw_xml_signals_release(kw_xml_sighold *h)
{
    for (int i = 0; i < KW_XML_N_HELD_SIGNALS; i++)
        if (h->replaced[i])
            sigaction(kw_xml_held_signals[i], &h->old[i], NULL);
    int sig = kw_xml_held_signal;
    kw_xml_held_signal = 0;
    if (sig != 0)
        raise(sig); /* as it would have been: the default ends the process, a
                     * caller's handler (tune's) takes it as ever */
}

static int kw_xml_save_held(xmlDocPtr doc, const char *path);

int kw_xml_save_atomic(xmlDocPtr doc, const char *path)
{
    kw_xml_sighold h;
    kw_xml_signals_hold(&h);
    int rc = kw_xml_save_held(doc, path);
    kw_xml_signals_release(&h);
    return rc;
}

static int kw_xml_save_held(xmlDocPtr doc, const char *path)
{
    /* kw_tmpfile, as every other output: DIR/.NAME.tmp.XXXXXX, locked while
     * written, swept by the next write of NAME. Until 2026-12-07 probe and
     * calibrate made PATH.tmp.XXXXXX with mkstemp: a SIGKILL, the OOM killer
     * or a power cut between its creation and the rename left it beside the
     * user's -o file for ever, and the file was 0644 whatever the umask. */
    char dir[PATH_MAX], base[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir ||
        snprintf(base, sizeof base, "%s", path) >= (int)sizeof base)
        return kw_error_set(KW_EIO, "%s: path too long", path);
    kw_tmpfile t;
    const char *folder = dirname(dir); /* "." (not in dir) for a bare name */
    int rc = kw_tmpfile_open(&t, folder, basename(base));
    if (rc != 0)
        return kw_error_set(rc == KW_EINPUT ? KW_EINPUT : KW_EIO, "%s: cannot create a temporary "
                            "file: %s", path, kw_error_last());
    rc = KW_EIO;
    FILE *f = fdopen(t.fd, "w");
    if (!f) {
        kw_error_set(KW_EIO, "%s: %s", t.path, strerror(errno));
        close(t.fd);
        goto fail;
    }
    if (xmlDocFormatDump(f, doc, 1) < 0 || fflush(f) != 0 || ferror(f)) {
        kw_error_set(KW_EIO, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
        fclose(f);
        goto fail;
    }
    if (fsync(fileno(f)) != 0) {
        kw_error_set(KW_EIO, "%s: cannot sync: %s", path, strerror(errno));
        fclose(f);
        goto fail;
    }
    if (fclose(f) != 0) {
        kw_error_set(KW_EIO, "%s: cannot close: %s", path, strerror(errno));
        goto fail;
    }
    if ((rc = kw_tmpfile_commit(&t, path)) != 0)
        return rc;
    /* The rename is durable only once the folder itself is synced. */
    int dfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return 0;
fail:
    kw_tmpfile_discard(&t);
    return rc;
}

int kw_xml_check_written(const char *path, const char *label, const char *root,
                         const char *schema_name)
{
    char why[KW_INPUT_WHY_MAX];
    int fd;
    uint64_t size;
    if (kw_input_open(&fd, &size, path, KW_XML_MAX_OUTPUT_BYTES, why, sizeof why) != 0)
        return kw_error_set(KW_EIO, "%s: cannot read back what was written: %s", label, why);
    char *buf = malloc((size_t)size + 1);
    if (!buf) {
        close(fd);
        return kw_error_set(KW_ENOMEM, "%s: out of memory checking what was written", label);
    }
    long n = kw_input_read(fd, buf, (size_t)size);
    close(fd);
    if (n != (long)size) {
        free(buf);
        return kw_error_set(KW_EIO, "%s: cannot read back what was written", label);
    }
    buf[n] = '\0';
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    int rc = kw_xml_load_output(&doc, label, buf, (size_t)n, root, schema_name, &p);
    free(buf);
    xmlFreeDoc(doc);
    if (rc == KW_EINPUT) {
        size_t first = strcspn(p.text, "\n");
        return kw_error_set(KW_EMODEL, "%s as written does not satisfy its own schema %s, so it "
                            "was not put in place (the inputs drive the model outside the range "
                            "its output formats hold): %.*s", label, schema_name,
                            (int)(first < 600 ? first : 600), p.text);
    }
    return rc;
}
