/* kw_xsdhint.c - allowed children and attributes read from an XSD (see
 * kw_xsdhint.h).
 *
 * Design choice: walk the schema document with libxml2's tree API instead of
 * asking the compiled xmlSchema: libxml2 exposes no public way to list an
 * element's content model, and its own message ("This element is not
 * expected. Expected is ( shape ).") names what the automaton expects only
 * at some positions. The walk covers the XSD features knobwise's schemas use
 * (top-level and local xs:element, ref=, type= naming an xs:complexType,
 * xs:sequence/choice/all, xs:group ref=, xs:complexContent and
 * xs:simpleContent extension/restriction, xs:attribute and xs:attributeGroup);
 * anything else just contributes no names, so the message falls back to
 * libxml2's text.
 */
#include <stdio.h>
#include <string.h>

#include "kw_xsdhint.h"

#define KW_XSD_NS "http://www.w3.org/2001/XMLSchema"
#define KW_XSD_DEPTH_MAX 32 /* nesting followed in a schema (the instance depth limit) */

static int kw_xs(const xmlNode *n, const char *local)
{
    return n && n->type == XML_ELEMENT_NODE && n->ns && n->ns->href &&
           strcmp((const char *)n->ns->href, KW_XSD_NS) == 0 &&
           strcmp((const char *)n->name, local) == 0;
}

/* An attribute's value without its namespace prefix ("xs:foo" -> "foo"). */
static const char *kw_xsd_attr(const xmlNode *n, const char *name)
{
    for (const xmlAttr *a = n ? n->properties : NULL; a; a = a->next)
        if (strcmp((const char *)a->name, name) == 0 && a->children && a->children->content) {
            const char *v = (const char *)a->children->content;
            const char *colon = strchr(v, ':');
            return colon ? colon + 1 : v;
        }
    return NULL;
}

/* The top-level schema component of kind (element, complexType, group,
 * attributeGroup) called name. */
static const xmlNode *kw_xsd_top(xmlDocPtr xsd, const char *kind, const char *name)
{
    const xmlNode *root = xmlDocGetRootElement(xsd);
    if (!name || !kw_xs(root, "schema"))
        return NULL;
    for (const xmlNode *c = root->children; c; c = c->next) {
        const char *nm = kw_xsd_attr(c, "name");
        if (kw_xs(c, kind) && nm && strcmp(nm, name) == 0)
            return c;
    }
    return NULL;
}

/* An element declaration's complex type (inline or named), or NULL. */
static const xmlNode *kw_xsd_type(xmlDocPtr xsd, const xmlNode *decl)
{
    const char *ref = kw_xsd_attr(decl, "ref");
    if (ref)
        decl = kw_xsd_top(xsd, "element", ref);
    if (!decl)
        return NULL;
    for (const xmlNode *c = decl->children; c; c = c->next)
        if (kw_xs(c, "complexType"))
            return c;
    return kw_xsd_top(xsd, "complexType", kw_xsd_attr(decl, "type"));
}

static void kw_xsd_add(kw_xsd_names *out, const char *name)
{
    if (!name)
        return;
    for (int i = 0; i < out->n; i++)
        if (strcmp(out->name[i], name) == 0)
            return;
    if (out->n < KW_XSDHINT_MAX)
        out->name[out->n++] = name;
}

/* Collect the element particles under n (children != 0) or its attributes;
 * with want, also return the declaration of the child element called want. */
static void kw_xsd_walk(xmlDocPtr xsd, const xmlNode *n, int children, kw_xsd_names *out,
                        const char *want, const xmlNode **found, int depth)
{
    if (!n || depth > KW_XSD_DEPTH_MAX)
        return;
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (kw_xs(c, "element")) {
            if (!children)
                continue;
            const char *nm = kw_xsd_attr(c, "name");
            const char *ref = kw_xsd_attr(c, "ref");
            const char *use = nm ? nm : ref;
            kw_xsd_add(out, use);
            if (want && found && !*found && use && strcmp(use, want) == 0)
                *found = c;
        } else if (kw_xs(c, "attribute")) {
            if (children)
                continue;
            const char *nm = kw_xsd_attr(c, "name");
            kw_xsd_add(out, nm ? nm : kw_xsd_attr(c, "ref"));
        } else if (kw_xs(c, "sequence") || kw_xs(c, "choice") || kw_xs(c, "all") ||
                   kw_xs(c, "complexContent") || kw_xs(c, "simpleContent")) {
            kw_xsd_walk(xsd, c, children, out, want, found, depth + 1);
        } else if (kw_xs(c, "extension") || kw_xs(c, "restriction")) {
            kw_xsd_walk(xsd, kw_xsd_top(xsd, "complexType", kw_xsd_attr(c, "base")), children, out,
                        want, found, depth + 1);
            kw_xsd_walk(xsd, c, children, out, want, found, depth + 1);
        } else if (kw_xs(c, "group") && children) {
            kw_xsd_walk(xsd, kw_xsd_top(xsd, "group", kw_xsd_attr(c, "ref")), children, out, want,
                        found, depth + 1);
        } else if (kw_xs(c, "attributeGroup") && !children) {
            kw_xsd_walk(xsd, kw_xsd_top(xsd, "attributeGroup", kw_xsd_attr(c, "ref")), children,
                        out, want, found, depth + 1);
        }
    }
}

/* The declaration of instance element elem, found from the root down. */
static const xmlNode *kw_xsd_decl(xmlDocPtr xsd, const xmlNode *elem)
{
    const xmlNode *path[KW_XSD_DEPTH_MAX + 1];
    int n = 0;
    for (const xmlNode *e = elem; e && e->type == XML_ELEMENT_NODE; e = e->parent) {
        if (n > KW_XSD_DEPTH_MAX)
            return NULL;
        path[n++] = e;
    }
    if (n == 0)
        return NULL;
    const xmlNode *decl = kw_xsd_top(xsd, "element", (const char *)path[n - 1]->name);
    for (int i = n - 2; decl && i >= 0; i--) {
        kw_xsd_names tmp = {0};
        const xmlNode *next = NULL;
        kw_xsd_walk(xsd, kw_xsd_type(xsd, decl), 1, &tmp, (const char *)path[i]->name, &next, 0);
        decl = next;
    }
    return decl;
}

int kw_xsdhint_children(kw_xsd_names *out, xmlDocPtr xsd, const xmlNode *elem)
{
    memset(out, 0, sizeof *out);
    const xmlNode *decl = xsd ? kw_xsd_decl(xsd, elem) : NULL;
    if (!decl)
        return -1;
    kw_xsd_walk(xsd, kw_xsd_type(xsd, decl), 1, out, NULL, NULL, 0);
    return 0;
}

int kw_xsdhint_attributes(kw_xsd_names *out, xmlDocPtr xsd, const xmlNode *elem)
{
    memset(out, 0, sizeof *out);
    const xmlNode *decl = xsd ? kw_xsd_decl(xsd, elem) : NULL;
    if (!decl)
        return -1;
    kw_xsd_walk(xsd, kw_xsd_type(xsd, decl), 0, out, NULL, NULL, 0);
    return 0;
}

void kw_xsdhint_join(char *buf, size_t size, const kw_xsd_names *names)
{
    if (size == 0)
        return;
    buf[0] = '\0';
    size_t u = 0;
    for (int i = 0; i < names->n && u < size; i++)
        u += (size_t)snprintf(buf + u, size - u, "%s%s", i ? ", " : "", names->name[i]);
}
