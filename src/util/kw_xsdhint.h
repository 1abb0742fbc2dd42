/* kw_xsdhint.h - what a schema allows at a place in a document, read from the
 * XSD itself (parsed with libxml2), so a schema error can say "allowed here:
 * block, shape" without a list kept by hand next to the schema. Part of the
 * XML module (kw_xml.c calls it from its schema error handler). */
#ifndef KW_XSDHINT_H
#define KW_XSDHINT_H

#include <stddef.h>

#include <libxml/tree.h>

#define KW_XSDHINT_MAX 64      /* names collected for one element */
#define KW_XSDHINT_NAME_LEN 128 /* an element or attribute name in a message */

typedef struct kw_xsd_names {
    int n;
    const char *name[KW_XSDHINT_MAX]; /* point into the XSD document */
} kw_xsd_names;

/* The child elements the schema xsd declares for instance element elem,
 * resolving elem's declaration along its ancestors from the root (local
 * declarations, refs, named complex types, groups, extensions). Returns 0,
 * or -1 when elem's declaration cannot be found (out->n is then 0). */
int kw_xsdhint_children(kw_xsd_names *out, xmlDocPtr xsd, const xmlNode *elem);

/* The attributes the schema declares for instance element elem. */
int kw_xsdhint_attributes(kw_xsd_names *out, xmlDocPtr xsd, const xmlNode *elem);

/* names joined by ", " into buf. */
void kw_xsdhint_join(char *buf, size_t size, const kw_xsd_names *names);

#endif
