/* knobwise.c - libknobwise: a run's recommendations as an immutable table a
 * runtime loads once and looks request shapes up in (see knobwise.h).
 *
 * Design: everything is decided at open. The file (results.xml through the
 * project's XML module, so it is parsed with the network off and validated
 * against the embedded results schema; or mappings.csv) is read into one flat
 * array of entries whose strings live in an arena owned by the table, and the
 * log2 of every entry's batch, length and streams is computed there. A lookup
 * is then a scan of that array with three subtractions per entry: no
 * allocation, no lock, no libxml2 call, so any number of threads can ask at
 * once. Rejected: a k-d tree or a hash of shapes (a run tunes tens of shapes:
 * the flat scan is faster than the pointer chasing), and keeping the XML
 * document (its getters allocate and are not made for concurrent readers).
 *
 * Nearest follows `knobwise recommend` (src/cli/cli_recommend.c): the smallest
 * sum of |log2| differences of batch, length and streams; the phase must
 * match unless the caller asks otherwise (recommend makes a phase change
 * cost more than any size gap; a library refuses it instead, so a runtime
 * never deploys a prefill mapping on decode without saying so).
 *
 * The knobwise binary links this same file (libkwtable.a) for `knobwise
 * export`; the shared library compiles it with -fvisibility=hidden and a
 * version script that exports only knobwise_*.
 */
#include "config.h"

#include "knobwise.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kw_error.h"
#include "kw_evend.h"
#include "kw_knobwise.h"
#include "kw_mix.h"
#include "kw_num.h"
#include "kw_results.h"
#include "kw_input.h"
#include "kw_xml.h"

_Static_assert((int)KNOBWISE_EINPUT == (int)KW_EINPUT && (int)KNOBWISE_ENOMEM == (int)KW_ENOMEM &&
                   (int)KNOBWISE_EIO == (int)KW_EIO,
               "the public codes keep knobwise's values");

/* Header of mappings.csv (results/formats.md's contract) and the columns `knobwise
 * recommend --all` appends after the knobs (KW_MAPPINGS_HEADER_SUFFIX in
 * src/run/kw_results.h): the shape's dimensions (seq counts for prefill, kv_len
 * for decode), the predicted tail and the borrowing warnings. */
#define KNOBWISE_CSV_PREFIX "shape,config_id,borrowed_from"
#define KNOBWISE_CSV_FIXED 3
enum { KNOBWISE_COL_PHASE, KNOBWISE_COL_BATCH, KNOBWISE_COL_SEQ, KNOBWISE_COL_KV_LEN,
       KNOBWISE_COL_STREAMS, KNOBWISE_COL_P95, KNOBWISE_COL_P99, KNOBWISE_COL_WARNINGS,
       KNOBWISE_CSV_NDIMS };
static const char *const knobwise_csv_dims[KNOBWISE_CSV_NDIMS] = {
    "phase", "batch", "seq", "kv_len", "streams", "p95_us", "p99_us", "borrow_warnings"};
/* After those, read when present (files from before it lack it): where
 * p95_us/p99_us come from (KW_MAPPINGS_HEADER_FIGURES: "measured" or "model") */
#define KNOBWISE_CSV_FIGURES KW_MAPPINGS_HEADER_FIGURES
/* and then, read when present (files from before it lack it): the number of
 * shape rows (KW_MAPPINGS_HEADER_ROWS), so a file cut at a line end is refused */
#define KNOBWISE_CSV_ROWS KW_MAPPINGS_HEADER_ROWS
/* and then, read when present: which sample p95_us/p99_us come from
 * (KW_MAPPINGS_HEADER_BASIS) */
#define KNOBWISE_CSV_BASIS KW_MAPPINGS_HEADER_BASIS
static const char *const knobwise_bases[] = {"recheck", "search", "measured", KW_BASIS_EVALUATED};
#define KNOBWISE_ID_HEX 16      /* config ids: 64-bit hash in hex */
/* borrow_warnings tokens (cli_recommend.c writes them; knobwise_entry_warnings) */
#define KNOBWISE_W_FAILS_GUARDS "fails_guards"
#define KNOBWISE_W_STOPPED "search_stopped"
#define KNOBWISE_W_NO_EVIDENCE "no_evidence"
#define KNOBWISE_W_UNRESOLVED "ranking_unresolved"
/* A results.xml entry's tokens, in recommend --all's order, indexed by
 * stopped | no_evidence << 1 | ranking unresolved << 2 */
static const char *const knobwise_x_warnings[8] = {
    "",
    KNOBWISE_W_STOPPED,
    KNOBWISE_W_NO_EVIDENCE,
    KNOBWISE_W_STOPPED ";" KNOBWISE_W_NO_EVIDENCE,
    KNOBWISE_W_UNRESOLVED,
    KNOBWISE_W_STOPPED ";" KNOBWISE_W_UNRESOLVED,
    KNOBWISE_W_NO_EVIDENCE ";" KNOBWISE_W_UNRESOLVED,
    KNOBWISE_W_STOPPED ";" KNOBWISE_W_NO_EVIDENCE ";" KNOBWISE_W_UNRESOLVED,
};
/* Knobs a table may have: knobwise's own limit (KW_KNOB_MAX, search/kw_search.h)
 * with room to spare; it also bounds the duplicate-name checks at open. */
#define KNOBWISE_KNOBS_MAX 1024
/* Largest batch, length or stream count read from a file: far above any real
 * shape, and a bound on what a damaged file can ask of a caller's arithmetic. */
#define KNOBWISE_COUNT_MAX (1L << 30)
#define KNOBWISE_ARENA_CHUNK 65536

typedef struct knobwise_chunk {
    struct knobwise_chunk *next;
    size_t used, cap;
    max_align_t data[];
} knobwise_chunk;

struct knobwise_config {
    char id[KNOBWISE_ID_HEX + 1];
    const char **values;          /* n_knobs strings, NULL when the file has no values */
    const knobwise_table *t;
    long line;                    /* the file's line the values were read from (kw_knobwise.h) */
};

struct knobwise_entry {
    const char *name;
    long line;                  /* the file's line that names it */
    int has_dims;
    knobwise_shape shape;
    double batch_log2, len_log2, streams_log2;
    const char *borrowed_from;
    const char *owner;
    knobwise_config cfg;
    int has_rollback[2];
    knobwise_config rollback[2];
    int has_latency;
    double p95_us, p99_us;
    const char *figures_from;   /* "measured", "model", or "" when the file does not say */
    const char *figures_basis;  /* which sample (knobwise_entry_figures_basis), "" when not said */
    int n_watch;
    knobwise_watch *watch;
    const char *warnings;       /* tokens joined by ';' (knobwise_entry_warnings), "" when none */
    int n_disproof;
    const char **disproof;      /* the claim's disproof criteria (results.xml only) */
};

/* What a lookup compares, one compact row per entry (40 bytes against the
 * entry's few hundred), so a scan of a 256-shape table stays in L1. */
typedef struct knobwise_key {
    double batch_log2, len_log2, streams_log2;
    long batch, len, streams;
    int phase;      /* -1: the entry has no dimensions */
} knobwise_key;

/* A shape results.xml lists with no configuration: the run tuned it and
 * nothing it evaluated passes the guards. Not an entry; a request for that
 * very shape is refused instead of borrowing a winner the run saw fail there. */
typedef struct knobwise_unmet {
    const char *name;
    long line;
    knobwise_key key;     /* phase -1: no dimensions in the file */
} knobwise_unmet;

struct knobwise_table {
    const char *path;
    const char *kind;
    int n_knobs;
    const char **knobs;
    int n_entries, cap_entries;
    knobwise_entry *entries;
    int any_dims;
    knobwise_key *keys;   /* n_entries rows, built once the file is read */
    int n_unmet, cap_unmet;
    knobwise_unmet *unmet; /* tuned shapes with nothing to deploy, file order */
    int no_evidence;       /* results.xml <results evidence=...>: stopped before the evidence */
    knobwise_chunk *arena;
};

/* ---- arena -------------------------------------------------------------------- */

/* size bytes at a multiple of align (a power of two up to max_align_t's: the
 * chunk's data starts aligned for anything). Strings take align 1: a 1-byte
 * knob value rounded up to 16 made a mappings.csv of one-digit values take
 * 21 times its size in memory (40 MB, 1000 knobs x 20,000 rows: 843 MB). */
static void *knobwise_alloc_aligned(knobwise_table *t, size_t size, size_t align)
{
    knobwise_chunk *c = t->arena;
    size_t off = c ? (c->used + align - 1) / align * align : 0;
    if (!c || off > c->cap || c->cap - off < size) {
        size_t cap = size > KNOBWISE_ARENA_CHUNK ? size : KNOBWISE_ARENA_CHUNK;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = t->arena;
        c->used = 0;
        c->cap = cap;
        t->arena = c;
        off = 0;
    }
    void *p = (char *)c->data + off;
    c->used = off + size;
    memset(p, 0, size);
    return p;
}

static void *knobwise_alloc(knobwise_table *t, size_t size)
{
    return knobwise_alloc_aligned(t, size, sizeof(max_align_t));
}

static const char *knobwise_strdup(knobwise_table *t, const char *s)
{
    size_t n = strlen(s);
    char *p = knobwise_alloc_aligned(t, n + 1, 1);
    if (p)
        memcpy(p, s, n + 1);
    return p;
}

static int knobwise_oom(const knobwise_table *t)
{
    return kw_error_set(KW_ENOMEM, "%s: out of memory", t->path ? t->path : "knobwise");
}

static knobwise_entry *knobwise_new_entry(knobwise_table *t)
{
    if (t->n_entries == t->cap_entries) {
        int cap = t->cap_entries ? t->cap_entries * 2 : 16;
        knobwise_entry *ne = realloc(t->entries, (size_t)cap * sizeof *ne);
        if (!ne)
            return NULL;
        t->entries = ne;
        t->cap_entries = cap;
    }
    knobwise_entry *e = &t->entries[t->n_entries++];
    memset(e, 0, sizeof *e);
    e->borrowed_from = "";
    e->owner = "";
    e->figures_from = "";
    e->figures_basis = "";
    e->warnings = "";
    e->p95_us = e->p99_us = NAN;
    e->cfg.t = e->rollback[0].t = e->rollback[1].t = t;
    return e;
}

static void knobwise_set_dims(knobwise_entry *e, int phase, long batch, long len, long streams)
{
    e->has_dims = 1;
    e->shape.phase = phase;
    e->shape.batch = batch;
    e->shape.len = len;
    e->shape.streams = streams;
    e->batch_log2 = log2((double)batch);
    e->len_log2 = log2((double)len);
    e->streams_log2 = log2((double)streams);
}

static int knobwise_is_id(const char *s)
{
    if (strlen(s) != KNOBWISE_ID_HEX)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return 0;
    return 1;
}

/* 0 when c's config_id is the id of its knob values (kw_mix_config_id, the
 * search's rule), else the id they have in *has (hex): a value edited after
 * the run would be deployed as if the run had evaluated it (export refuses
 * such a file; the library served it until stop 39). */
static int knobwise_id_mismatch(const knobwise_table *t, const knobwise_config *c,
                                char has[KNOBWISE_ID_HEX + 1])
{
    if (!c->values)
        return 0;
    uint64_t id = kw_mix_config_id(t->n_knobs, t->knobs, c->values);
    snprintf(has, KNOBWISE_ID_HEX + 1, "%016llx", (unsigned long long)id);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    /* make fuzz only (libFuzzer's convention for checksums): a mutated row
     * cannot carry its values' 64-bit id, so every mutation stopped here and
     * the rest of the reader went unfuzzed. The id is still computed above. */
    return 0;
#endif
    return strcmp(has, c->id) != 0;
}

/* ---- results.xml ------------------------------------------------------------------ */

/* Attribute as an arena string, or NULL when absent. */
static const char *knobwise_xattr(knobwise_table *t, const xmlNode *n, const char *name, int *oom)
{
    xmlChar *v = xmlGetNoNsProp((xmlNodePtr)n, BAD_CAST name);
    if (!v)
        return NULL;
    const char *s = knobwise_strdup(t, (const char *)v);
    xmlFree(v);
    if (!s)
        *oom = 1;
    return s;
}

/* The knob children of n into c's values; the first list read names the
 * table's knobs, every later one must list the same knobs in the same order. */
static int knobwise_x_knobs(knobwise_table *t, knobwise_config *c, xmlNode *n, kw_xml_problems *p)
{
    int oom = 0, k = 0, count = 0;
    for (xmlNode *m = kw_xml_elem(n->children); m; m = kw_xml_elem(m->next))
        if (kw_xml_is(m, "knob"))
            count++;
    if (count == 0)
        return 0;
    if (count > KNOBWISE_KNOBS_MAX) {
        kw_xml_problem(p, t->path, kw_xml_line(n), "%d knobs, more than %d", count,
                       KNOBWISE_KNOBS_MAX);
        return KW_EINPUT;
    }
    if (t->knobs == NULL) {
        t->knobs = knobwise_alloc(t, (size_t)count * sizeof *t->knobs);
        if (!t->knobs)
            return knobwise_oom(t);
        t->n_knobs = count;
    } else if (count != t->n_knobs) {
        kw_xml_problem(p, t->path, kw_xml_line(n), "%d knobs where the first configuration has %d",
                       count, t->n_knobs);
        return KW_EINPUT;
    }
    c->values = knobwise_alloc(t, (size_t)count * sizeof *c->values);
    if (!c->values)
        return knobwise_oom(t);
    c->line = kw_xml_line(n);
    for (xmlNode *m = kw_xml_elem(n->children); m; m = kw_xml_elem(m->next)) {
        if (!kw_xml_is(m, "knob"))
            continue;
        const char *name = knobwise_xattr(t, m, "name", &oom);
        const char *value = knobwise_xattr(t, m, "value", &oom);
        if (oom)
            return knobwise_oom(t);
        if (!t->knobs[k]) {
            for (int j = 0; j < k; j++)
                if (strcmp(t->knobs[j], name) == 0) {
                    kw_xml_problem(p, t->path, kw_xml_line(m), "knob '%s' listed twice", name);
                    return KW_EINPUT;
                }
            t->knobs[k] = name;
        } else if (strcmp(t->knobs[k], name) != 0) {
            kw_xml_problem(p, t->path, kw_xml_line(m),
                           "knob '%s' where the first configuration has '%s'", name, t->knobs[k]);
            return KW_EINPUT;
        }
        c->values[k++] = value;
    }
    char has[KNOBWISE_ID_HEX + 1];
    if (c->id[0] && knobwise_id_mismatch(t, c, has)) {
        kw_xml_problem(p, t->path, c->line, "configuration %s: its knob values are not those of "
                       "its id (their id is %s): changed after the run; knobwise deploys only "
                       "what a run evaluated", c->id, has);
        return KW_EINPUT;
    }
    return 0;
}

static int knobwise_x_id(knobwise_config *c, const xmlNode *n)
{
    xmlChar *v = xmlGetNoNsProp((xmlNodePtr)n, BAD_CAST "id");
    int ok = v && knobwise_is_id((const char *)v);
    if (ok)
        memcpy(c->id, v, KNOBWISE_ID_HEX + 1);
    xmlFree(v);
    return ok;
}

static int knobwise_x_rollback(knobwise_table *t, knobwise_entry *e, xmlNode *shape, xmlNode *rb,
                               kw_xml_problems *p)
{
    int oom = 0, rc, n_watch = 0;
    for (xmlNode *m = kw_xml_elem(rb->children); m; m = kw_xml_elem(m->next))
        n_watch += kw_xml_is(m, "watch");
    if (n_watch > 0 && !(e->watch = knobwise_alloc(t, (size_t)n_watch * sizeof *e->watch)))
        return knobwise_oom(t);
    for (xmlNode *m = kw_xml_elem(rb->children); m; m = kw_xml_elem(m->next)) {
        if (kw_xml_is(m, "target")) {
            xmlChar *kind = xmlGetNoNsProp(m, BAD_CAST "kind");
            int which = kind && strcmp((const char *)kind, "baseline") == 0
                            ? KNOBWISE_ROLLBACK_BASELINE
                            : KNOBWISE_ROLLBACK_PARENT;
            xmlFree(kind);
            knobwise_config *c = &e->rollback[which];
            e->has_rollback[which] = 1;
            knobwise_x_id(c, m);
            if ((rc = knobwise_x_knobs(t, c, m, p)) != 0)
                return rc;
            /* Older results carry only the target's id: its values are those of
             * the baseline or of a listed configuration with that id. */
            for (xmlNode *s = kw_xml_elem(shape->children); s && !c->values; s = kw_xml_elem(s->next)) {
                knobwise_config probe = {.t = t};
                if ((kw_xml_is(s, "baseline") || kw_xml_is(s, "config")) && knobwise_x_id(&probe, s) &&
                    strcmp(probe.id, c->id) == 0 && (rc = knobwise_x_knobs(t, c, s, p)) != 0)
                    return rc;
            }
        } else if (kw_xml_is(m, "watch")) {
            knobwise_watch *w = &e->watch[e->n_watch++];
            w->guard = knobwise_xattr(t, m, "guard", &oom);
            w->metric = knobwise_xattr(t, m, "metric", &oom);
            w->basis = knobwise_xattr(t, m, "basis", &oom);
            w->max = w->min = NAN;
            kw_xml_attr_double(&w->max, m, "max", t->path, p);
            kw_xml_attr_double(&w->min, m, "min", t->path, p);
        } else if (kw_xml_is(m, "disproof")) {
            int n = 0;
            for (xmlNode *c = kw_xml_elem(m->children); c; c = kw_xml_elem(c->next))
                n += kw_xml_is(c, "criterion");
            if (n > 0 && !(e->disproof = knobwise_alloc(t, (size_t)n * sizeof *e->disproof)))
                return knobwise_oom(t);
            for (xmlNode *c = kw_xml_elem(m->children); c; c = kw_xml_elem(c->next)) {
                if (!kw_xml_is(c, "criterion"))
                    continue;
                xmlChar *v = xmlNodeGetContent(c);
                const char *s = knobwise_strdup(t, v ? (const char *)v : "");
                xmlFree(v);
                if (!s)
                    return knobwise_oom(t);
                e->disproof[e->n_disproof++] = s;
            }
        } else if (kw_xml_is(m, "owner")) {
            xmlChar *v = xmlNodeGetContent(m);
            if (v) {
                e->owner = knobwise_strdup(t, (const char *)v);
                oom |= e->owner == NULL;
                xmlFree(v);
            }
        }
    }
    return oom ? knobwise_oom(t) : 0;
}

/* A shape with no guard-passing configuration, kept by name and dimensions
 * so that a lookup of it says so (knobwise_unmet_refuse). */
/* A new nothing-to-deploy record at the end of t's list (*out), zeroed, no dimensions. */
static int knobwise_unmet_add(knobwise_table *t, knobwise_unmet **out)
{
    if (t->n_unmet == t->cap_unmet) {
        int cap = t->cap_unmet ? t->cap_unmet * 2 : 4;
        knobwise_unmet *nu = realloc(t->unmet, (size_t)cap * sizeof *nu);
        if (!nu)
            return knobwise_oom(t);
        t->unmet = nu;
        t->cap_unmet = cap;
    }
    knobwise_unmet *u = &t->unmet[t->n_unmet++];
    memset(u, 0, sizeof *u);
    u->key.phase = -1;
    *out = u;
    return 0;
}

/* Whether the ';'-joined list has token tok. */
static int knobwise_has_token(const char *list, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *c = list; c && *c;) {
        if (strncmp(c, tok, n) == 0 && (c[n] == '\0' || c[n] == ';'))
            return 1;
        c = strchr(c, ';');
        c = c ? c + 1 : NULL;
    }
    return 0;
}

static int knobwise_x_unmet(knobwise_table *t, xmlNode *shape, kw_xml_problems *p)
{
    knobwise_unmet *u;
    int rc = knobwise_unmet_add(t, &u);
    if (rc != 0)
        return rc;
    int oom = 0;
    u->line = kw_xml_line(shape);
    u->name = knobwise_xattr(t, shape, "name", &oom);
    if (oom || !u->name) {
        t->n_unmet--; /* (the schema requires the name) */
        return oom ? knobwise_oom(t) : 0;
    }
    char phase[16] = "";
    long batch = 0, len = 0, streams = 0;
    if (kw_xml_attr_str(phase, sizeof phase, shape, "phase", t->path, p) == 1) {
        int dec = strcmp(phase, "decode") == 0;
        if (kw_xml_attr_long(&batch, shape, "batch", 1, KNOBWISE_COUNT_MAX, t->path, p) == 1 &&
            kw_xml_attr_long(&len, shape, dec ? "kv_len" : "seq", 1, KNOBWISE_COUNT_MAX, t->path,
                             p) == 1 &&
            kw_xml_attr_long(&streams, shape, "streams", 1, KNOBWISE_COUNT_MAX, t->path, p) == 1)
            u->key = (knobwise_key){.batch = batch, .len = len, .streams = streams,
                                    .phase = dec ? KNOBWISE_DECODE : KNOBWISE_PREFILL};
        t->any_dims |= u->key.phase >= 0; /* a table of such shapes alone is looked up too */
    }
    return 0;
}

/* The <recheck> child of config node c with figures (not not_measured), or NULL. */
static xmlNode *knobwise_x_recheck(xmlNode *c)
{
    for (xmlNode *m = c ? kw_xml_elem(c->children) : NULL; m; m = kw_xml_elem(m->next))
        if (kw_xml_is(m, "recheck"))
            return xmlHasProp(m, BAD_CAST "not_measured") ? NULL : m;
    return NULL;
}

/* The entry's headline figures, knobwise's one rule (kw_results_headline):
 * the final re-check's p95/p99 when the recommendation and the shape's
 * baseline were both re-checked ("recheck"), else the <metrics> already read:
 * a measured run's ("measured": its re-check says not_measured) or the
 * search's sample ("search"). */
static int knobwise_x_headline(knobwise_table *t, knobwise_entry *e, xmlNode *shape, xmlNode *rec,
                               kw_xml_problems *p)
{
    xmlNode *base = NULL;
    for (xmlNode *m = kw_xml_elem(shape->children); m && !base; m = kw_xml_elem(m->next))
        if (kw_xml_is(m, "baseline"))
            base = m;
    xmlNode *rr = knobwise_x_recheck(rec);
    int unmeasured = 0;
    for (xmlNode *m = kw_xml_elem(rec->children); m; m = kw_xml_elem(m->next))
        if (kw_xml_is(m, "recheck") && xmlHasProp(m, BAD_CAST "not_measured"))
            unmeasured = 1;
    double a = NAN, b = NAN;
    if (rr && (!base || knobwise_x_recheck(base)) &&
        kw_xml_attr_double(&a, rr, "p95_us", t->path, p) == 1 &&
        kw_xml_attr_double(&b, rr, "p99_us", t->path, p) == 1) {
        if (!(a >= 0.0) || !(b >= 0.0)) {
            kw_xml_problem(p, t->path, kw_xml_line(rr), "shape '%s': re-check p95_us %g, p99_us "
                           "%g: a latency in us is a number >= 0", e->name, a, b);
            return KW_EINPUT;
        }
        e->p95_us = a;
        e->p99_us = b;
        e->has_latency = 1;
        e->figures_basis = knobwise_bases[0];
    } else if (e->has_latency) {
        e->figures_basis = knobwise_bases[unmeasured ? 2 : 1];
    }
    return 0;
}

static int knobwise_x_shape(knobwise_table *t, xmlNode *shape, kw_xml_problems *p)
{
    int oom = 0, rc;
    xmlNode *rec = NULL;
    for (xmlNode *m = kw_xml_elem(shape->children); m; m = kw_xml_elem(m->next)) {
        if (!kw_xml_is(m, "config"))
            continue;
        int r = 0;
        if (!rec)
            rec = m; /* rank 1 comes first: the recommendation */
        if (kw_xml_attr_bool(&r, m, "recommended", t->path, p) == 1 && r) {
            rec = m;
            break;
        }
    }
    if (!rec)
        return knobwise_x_unmet(t, shape, p); /* nothing passed the guards: not an entry */
    knobwise_entry *e = knobwise_new_entry(t);
    if (!e)
        return knobwise_oom(t);
    e->name = knobwise_xattr(t, shape, "name", &oom);
    if (oom)
        return knobwise_oom(t);
    e->line = kw_xml_line(shape); /* shapes listed twice: knobwise_dup_names */
    /* Dimensions (written since libknobwise; optional in the schema). */
    char phase[16] = "";
    long batch = 0, len = 0, streams = 0;
    if (kw_xml_attr_str(phase, sizeof phase, shape, "phase", t->path, p) == 1) {
        int dec = strcmp(phase, "decode") == 0;
        kw_xml_attr_long(&batch, shape, "batch", 1, KNOBWISE_COUNT_MAX, t->path, p);
        kw_xml_attr_long(&len, shape, dec ? "kv_len" : "seq", 1, KNOBWISE_COUNT_MAX, t->path, p);
        kw_xml_attr_long(&streams, shape, "streams", 1, KNOBWISE_COUNT_MAX, t->path, p);
        if (batch > 0 && len > 0 && streams > 0) {
            knobwise_set_dims(e, dec ? KNOBWISE_DECODE : KNOBWISE_PREFILL, batch, len, streams);
            t->any_dims = 1;
        } else {
            kw_xml_problem(p, t->path, kw_xml_line(shape),
                           "shape '%s' has a phase but not its batch, %s and streams", e->name,
                           dec ? "kv_len" : "seq");
            return KW_EINPUT;
        }
    }
    /* what the run did not finish, and a final re-check that could not rank
     * the configuration apart from its rival, as mappings.csv's
     * borrow_warnings tokens (until stop 42 the ranking reached a runtime
     * only through mappings.csv: the two files of one run answered apart) */
    char search[16] = "", ranking[16] = "";
    int stopped = kw_xml_attr_str(search, sizeof search, shape, "search", t->path, p) == 1 &&
                  strcmp(search, "stopped") == 0;
    int unresolved = kw_xml_attr_str(ranking, sizeof ranking, shape, "ranking", t->path, p) == 1 &&
                     strcmp(ranking, KW_RESULTS_RANKING_UNRESOLVED) == 0;
    e->warnings = knobwise_x_warnings[(stopped ? 1 : 0) | (t->no_evidence ? 2 : 0) | (unresolved ? 4 : 0)];
    knobwise_x_id(&e->cfg, rec);
    if ((rc = knobwise_x_knobs(t, &e->cfg, rec, p)) != 0)
        return rc;
    if (!e->cfg.values) {
        kw_xml_problem(p, t->path, kw_xml_line(rec), "configuration without knobs");
        return KW_EINPUT;
    }
    for (xmlNode *m = kw_xml_elem(rec->children); m; m = kw_xml_elem(m->next)) {
        if (kw_xml_is(m, "metrics")) {
            for (xmlNode *x = kw_xml_elem(m->children); x; x = kw_xml_elem(x->next)) {
                char name[64] = "";
                double v = NAN;
                if (!kw_xml_is(x, "metric") ||
                    kw_xml_attr_str(name, sizeof name, x, "name", t->path, p) != 1 ||
                    kw_xml_attr_double(&v, x, "value", t->path, p) != 1)
                    continue;
                if (strcmp(name, KW_METRIC_NAME(KW_M_P95_US)) == 0)
                    e->p95_us = v;
                else if (strcmp(name, KW_METRIC_NAME(KW_M_P99_US)) == 0)
                    e->p99_us = v;
            }
            e->has_latency = isfinite(e->p95_us) && isfinite(e->p99_us);
            /* the mappings.csv rule (knobwise_parse_latency): a tail latency is >= 0 */
            if (e->p95_us < 0.0 || e->p99_us < 0.0) {
                kw_xml_problem(p, t->path, kw_xml_line(m), "shape '%s': p95_us %g, p99_us %g: a "
                               "latency in us is a number >= 0", e->name, e->p95_us, e->p99_us);
                return KW_EINPUT;
            }
        } else if (kw_xml_is(m, "rollback")) {
            if ((rc = knobwise_x_rollback(t, e, shape, m, p)) != 0)
                return rc;
        }
    }
    return knobwise_x_headline(t, e, shape, rec, p);
}

/* 1 when the folder holding results.xml at path is a run folder whose
 * RUN/evidence says the evidence phase was cut (format 2 without its end
 * record: kw_evend_read), whatever the file says: the rule `knobwise
 * recommend` and `verify` follow (src/cli/cli_recommend.c
 * kw_rec_evidence_missing). A results.xml of a finished run's evidence is
 * written before the end record, and a resume cuts the record before it
 * rewrites results.xml, so a complete-looking results.xml beside a cut
 * evidence file is a kill in between or a stale or edited file. Until
 * 2026-12-07 the library read results.xml's evidence= alone. A results.xml
 * outside a run folder (no journal, no evidence file of its run): 0. */
static int knobwise_evidence_cut(const char *path)
{
    char dir[4096];
    return kw_input_dir_of(dir, sizeof dir, path) == 0 && kw_evend_read(dir) == 0;
}

static int knobwise_read_xml(knobwise_table *t, const char *buf, size_t len)
{
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    int rc = kw_xml_load_output(&doc, t->path, buf, len, "results", "results/results.xsd", &p);
    if (rc == 0) {
        xmlNode *root = xmlDocGetRootElement(doc);
        /* a format this library does not know may mean anything: refused, not guessed */
        long format = 0;
        if (kw_xml_attr_long(&format, root, "format", 1, LONG_MAX, t->path, &p) == 1 &&
            format != KW_RESULTS_FORMAT) {
            kw_xml_problem(&p, t->path, kw_xml_line(root), "results format %ld: this "
                           "libknobwise (%s) reads format %d only; use the libknobwise of the "
                           "knobwise that wrote it", format, PACKAGE_VERSION, KW_RESULTS_FORMAT);
            rc = KW_EINPUT;
        }
        char ev[16] = "";
        t->no_evidence = kw_xml_attr_str(ev, sizeof ev, root, "evidence", t->path, &p) == 1 ||
                         knobwise_evidence_cut(t->path);
    }
    if (rc == 0) {
        xmlNode *root = xmlDocGetRootElement(doc);
        for (xmlNode *n = kw_xml_elem(root->children); n && rc == 0; n = kw_xml_elem(n->next))
            if (kw_xml_is(n, "shape"))
                rc = knobwise_x_shape(t, n, &p);
    }
    xmlFreeDoc(doc);
    if (rc == KW_EINPUT || (rc == 0 && p.n > 0))
        return kw_xml_problems_finish(&p);
    return rc;
}

/* ---- mappings.csv -------------------------------------------------------------------- */

/* Split one CSV record starting at *pos (RFC 4180 quoting, as kw_sbuf_csv
 * writes it) into at most max fields, unquoted in place; *pos moves past the
 * line end. Returns the field count, or -1 for a quote left open. */
static int knobwise_csv_record(char **pos, char **fields, int max, long *line)
{
    char *r = *pos, *w = *pos, *start = w; /* start: the field being read (fields[] holds
                                               only the first max: a longer row is an error) */
    int n = 0;
    fields[n++] = w;
    for (;;) {
        if (*r == '"' && w == start) {
            r++;
            for (;;) {
                if (*r == '\0')
                    return -1;
                if (*r == '"' && r[1] == '"') {
                    *w++ = '"';
                    r += 2;
                } else if (*r == '"') {
                    r++;
                    break;
                } else {
                    if (*r == '\n')
                        (*line)++;
                    *w++ = *r++;
                }
            }
            continue;
        }
        if (*r == ',') {
            *w++ = '\0';
            r++;
            start = w;
            if (n < max)
                fields[n] = w;
            n++;
            continue;
        }
        if (*r == '\r' && r[1] == '\n')
            r++;
        if (*r == '\n' || *r == '\0') {
            if (*r == '\n')
                r++;
            *w = '\0';
            *pos = r;
            return n;
        }
        *w++ = *r++;
    }
}

/* Numbers through the one parser every reader of a person's numbers uses
 * (search/kw_num.c: decimal only): strtol and strtod skipped leading blanks
 * and strtod took hexadecimal, so " 3" and "0x1p3" were read as numbers
 * (left by stop 37). */
static int knobwise_parse_count(long *out, const char *s)
{
    return kw_num_long(out, s, 1, KNOBWISE_COUNT_MAX);
}

static int knobwise_parse_latency(double *out, const char *s)
{
    double v;
    if (kw_num_double(&v, s) != 0 || v < 0.0)
        return -1;
    *out = v;
    return 0;
}

static int knobwise_read_csv(knobwise_table *t, char *buf)
{
    int rc = 0, max = 0, n;
    long line = 1;
    char **f = NULL, *pos = buf + kw_input_bom(buf);
    for (const char *c = pos; *c && *c != '\n'; c++)
        max += *c == ',';
    max += 1;
    if (!(f = malloc((size_t)max * sizeof *f)))
        return knobwise_oom(t);
    n = knobwise_csv_record(&pos, f, max, &line);
    int dim_col[KNOBWISE_CSV_NDIMS], n_dims = 0, fig_col = -1, rows_col = -1, basis_col = -1;
    long rows = 0, last = 1; /* file_rows, and the line of the last row read */
    long n_rows = 0;         /* shape rows read: entries and nothing-to-deploy rows */
    for (int d = 0; d < KNOBWISE_CSV_NDIMS; d++)
        dim_col[d] = -1;
    if (n < KNOBWISE_CSV_FIXED + 1 || strcmp(f[0], "shape") || strcmp(f[1], "config_id") ||
        strcmp(f[2], "borrowed_from")) {
        rc = kw_error_set(KW_EINPUT,
                          "%s:1: not a results.xml nor a mappings.csv (header must start "
                          "'" KNOBWISE_CSV_PREFIX "' and name at least one knob)",
                          t->path);
        goto done;
    }
    if (n > max) { /* a quoted header field ran past the first line */
        rc = kw_error_set(KW_EINPUT, "%s:1: the header has a quoted field across lines", t->path);
        goto done;
    }
    if (n - KNOBWISE_CSV_FIXED > KNOBWISE_KNOBS_MAX + KNOBWISE_CSV_NDIMS) {
        rc = kw_error_set(KW_EINPUT, "%s:1: %d columns, more than %d knobs", t->path, n,
                          KNOBWISE_KNOBS_MAX);
        goto done;
    }
    for (int i = KNOBWISE_CSV_FIXED; i < n; i++) {
        for (int j = 0; j < i; j++)
            if (strcmp(f[i], f[j]) == 0) {
                rc = kw_error_set(KW_EINPUT, "%s:1: column '%s' appears twice", t->path, f[i]);
                goto done;
            }
        for (int d = 0; d < KNOBWISE_CSV_NDIMS; d++)
            if (strcmp(f[i], knobwise_csv_dims[d]) == 0) {
                dim_col[d] = i;
                n_dims++;
            }
        if (strcmp(f[i], KNOBWISE_CSV_FIGURES) == 0)
            fig_col = i;
        if (strcmp(f[i], KNOBWISE_CSV_ROWS) == 0)
            rows_col = i;
        if (strcmp(f[i], KNOBWISE_CSV_BASIS) == 0)
            basis_col = i;
    }
    if (basis_col >= 0 && n_dims == 0) {
        rc = kw_error_set(KW_EINPUT, "%s:1: column '" KNOBWISE_CSV_BASIS "' without the figures "
                          "it describes (%s)", t->path, KW_MAPPINGS_HEADER_SUFFIX);
        goto done;
    }
    if (n_dims != 0 && n_dims != KNOBWISE_CSV_NDIMS) {
        rc = kw_error_set(KW_EINPUT, "%s:1: the columns after the knobs go together (%s)", t->path,
                          KW_MAPPINGS_HEADER_SUFFIX);
        goto done;
    }
    if (fig_col >= 0 && n_dims == 0) {
        rc = kw_error_set(KW_EINPUT, "%s:1: column '" KNOBWISE_CSV_FIGURES "' without the figures "
                          "it describes (%s)", t->path, KW_MAPPINGS_HEADER_SUFFIX);
        goto done;
    }
    /* The knobs are the columns before the first of the figures' (phase,
     * ...): every knobwise writes them there. After the knobs, the columns
     * this library knows; a column after the last of those is a later
     * knobwise's (added at the end, results/formats.md) and is not read, so
     * a newer mappings.csv opens here with the same knobs. A column it does
     * not know among them, or one of them among the knobs, is refused. */
    int first = n, last_known = -1;
    for (int i = KNOBWISE_CSV_FIXED; i < n; i++) {
        int known = i == fig_col || i == rows_col || i == basis_col;
        for (int d = 0; d < KNOBWISE_CSV_NDIMS; d++)
            known |= dim_col[d] == i;
        if (known && first == n && n_dims > 0 && i != dim_col[KNOBWISE_COL_PHASE]) {
            rc = kw_error_set(KW_EINPUT, "%s:1: column '%s' comes before phase: the columns after "
                              "the knobs go together (%s)", t->path, f[i], KW_MAPPINGS_HEADER_SUFFIX);
            goto done;
        }
        if (known && first == n)
            first = i;
        if (known)
            last_known = i;
    }
    for (int i = first; i < last_known; i++) {
        int known = i == fig_col || i == rows_col || i == basis_col;
        for (int d = 0; d < KNOBWISE_CSV_NDIMS; d++)
            known |= dim_col[d] == i;
        if (!known) {
            rc = kw_error_set(KW_EINPUT, "%s:1: column '%s' among the columns after the knobs (%s) "
                              "is none of them", t->path, f[i], KW_MAPPINGS_HEADER_SUFFIX);
            goto done;
        }
    }
    t->n_knobs = first - KNOBWISE_CSV_FIXED;
    int *knob_col = malloc((size_t)t->n_knobs * sizeof *knob_col);
    t->knobs = knobwise_alloc(t, (size_t)t->n_knobs * sizeof *t->knobs);
    if (!knob_col || !t->knobs) {
        free(knob_col);
        rc = knobwise_oom(t);
        goto done;
    }
    for (int i = KNOBWISE_CSV_FIXED, k = 0; i < first; i++) {
        if (f[i][0] == '\0' || !(t->knobs[k] = knobwise_strdup(t, f[i]))) {
            rc = f[i][0] ? knobwise_oom(t)
                         : kw_error_set(KW_EINPUT, "%s:1: column %d has no name", t->path, i + 1);
            goto done_cols;
        }
        knob_col[k++] = i;
    }
    int cols = n;
    while (*pos) {
        long at = ++line;
        n = knobwise_csv_record(&pos, f, max, &line);
        if (n < 0) {
            rc = kw_error_set(KW_EINPUT, "%s:%ld: a quoted field is never closed", t->path, at);
            goto done_cols;
        }
        if (n == 1 && f[0][0] == '\0')
            continue; /* blank line */
        if (n != cols) {
            rc = kw_error_set(KW_EINPUT, "%s:%ld: %d fields, the header has %d", t->path, at, n,
                              cols);
            goto done_cols;
        }
        if (f[0][0] == '\0' || !knobwise_is_id(f[1])) {
            rc = kw_error_set(KW_EINPUT, "%s:%ld: %s", t->path, at,
                              f[0][0] ? "config_id is not 16 hex digits" : "empty shape name");
            goto done_cols;
        }
        knobwise_entry *e = knobwise_new_entry(t);
        if (!e || !(e->name = knobwise_strdup(t, f[0])) ||
            !(e->borrowed_from = knobwise_strdup(t, f[2])) ||
            !(e->cfg.values = knobwise_alloc(t, (size_t)t->n_knobs * sizeof *e->cfg.values))) {
            rc = knobwise_oom(t);
            goto done_cols;
        }
        memcpy(e->cfg.id, f[1], KNOBWISE_ID_HEX + 1);
        e->cfg.line = e->line = at;
        int id_col = 1; /* checked once the values are read */
        for (int k = 0; k < t->n_knobs; k++) {
            if (f[knob_col[k]][0] == '\0') { /* was exported as "" */
                rc = kw_error_set(KW_EINPUT, "%s:%ld: knob '%s' has no value", t->path, at,
                                  t->knobs[k]);
                goto done_cols;
            }
            /* the previous row's value when it is the same: one copy of a
             * column's repeated values, not one per row */
            const char *prev = t->n_entries > 1 ? e[-1].cfg.values[k] : NULL;
            if (prev && strcmp(prev, f[knob_col[k]]) == 0)
                e->cfg.values[k] = prev;
            else if (!(e->cfg.values[k] = knobwise_strdup(t, f[knob_col[k]]))) {
                rc = knobwise_oom(t);
                goto done_cols;
            }
        }
        char has[KNOBWISE_ID_HEX + 1];
        if (knobwise_id_mismatch(t, &e->cfg, has)) {
            rc = kw_error_set(KW_EINPUT, "%s:%ld: config_id %s is not the id of the row's knob "
                              "values (%s): changed after the run; knobwise deploys only what a "
                              "run evaluated", t->path, at, f[id_col], has);
            goto done_cols;
        }
        if (n_dims) {
            const char *ph = f[dim_col[KNOBWISE_COL_PHASE]];
            int phase = strcmp(ph, "prefill") == 0 ? KNOBWISE_PREFILL
                        : strcmp(ph, "decode") == 0 ? KNOBWISE_DECODE
                                                    : -1;
            if (phase < 0) {
                rc = kw_error_set(KW_EINPUT, "%s:%ld: phase is '%s', not prefill or decode",
                                  t->path, at, ph);
                goto done_cols;
            }
            int len_col = phase == KNOBWISE_DECODE ? KNOBWISE_COL_KV_LEN : KNOBWISE_COL_SEQ;
            const int count_cols[3] = {KNOBWISE_COL_BATCH, len_col, KNOBWISE_COL_STREAMS};
            long v[3];
            for (int d = 0; d < 3; d++)
                if (knobwise_parse_count(&v[d], f[dim_col[count_cols[d]]]) != 0) {
                    rc = kw_error_set(KW_EINPUT, "%s:%ld: %s is '%s', not a count from 1", t->path,
                                      at, knobwise_csv_dims[count_cols[d]],
                                      f[dim_col[count_cols[d]]]);
                    goto done_cols;
                }
            knobwise_set_dims(e, phase, v[0], v[1], v[2]);
            t->any_dims = 1;
            /* both empty (no figures), else two latencies: a word, a negative, NaN or
             * infinite figure was read as "no figures" or exported as it was */
            const int lat_cols[2] = {KNOBWISE_COL_P95, KNOBWISE_COL_P99};
            double lat[2];
            const char *s95 = f[dim_col[KNOBWISE_COL_P95]], *s99 = f[dim_col[KNOBWISE_COL_P99]];
            for (int d = 0; (*s95 || *s99) && d < 2; d++)
                if (knobwise_parse_latency(&lat[d], f[dim_col[lat_cols[d]]]) != 0) {
                    rc = kw_error_set(KW_EINPUT, "%s:%ld: %s is '%s', not a latency in us (a "
                                      "finite number >= 0; p95_us and p99_us both empty when "
                                      "there are no figures)", t->path, at,
                                      knobwise_csv_dims[lat_cols[d]], f[dim_col[lat_cols[d]]]);
                    goto done_cols;
                }
            if (*s95 || *s99) {
                e->p95_us = lat[0];
                e->p99_us = lat[1];
                e->has_latency = 1;
            }
            /* tokens joined by ';' (recommend writes them unquoted): a word of
             * [a-z0-9_] each; anything else is not a file recommend wrote */
            const char *w = f[dim_col[KNOBWISE_COL_WARNINGS]];
            int ok = 1;
            for (const char *c = w; *c && ok; c++)
                ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' ||
                     (*c == ';' && c > w && c[1] != '\0' && c[1] != ';');
            if (!ok) {
                rc = kw_error_set(KW_EINPUT, "%s:%ld: borrow_warnings is '%s', not tokens of "
                                  "[a-z0-9_] joined by ';'", t->path, at, w);
                goto done_cols;
            }
            if (w[0] && !(e->warnings = knobwise_strdup(t, w))) {
                rc = knobwise_oom(t);
                goto done_cols;
            }
        }
        if (fig_col >= 0) {
            const char *fg = f[fig_col];
            if (fg[0] && strcmp(fg, KW_MAPPINGS_MEASURED) && strcmp(fg, KW_MAPPINGS_MODEL)) {
                rc = kw_error_set(KW_EINPUT, "%s:%ld: " KNOBWISE_CSV_FIGURES " is '%s', not "
                                  KW_MAPPINGS_MEASURED " or " KW_MAPPINGS_MODEL, t->path, at, fg);
                goto done_cols;
            }
            e->figures_from = strcmp(fg, KW_MAPPINGS_MEASURED) == 0 ? KW_MAPPINGS_MEASURED
                              : fg[0]                                 ? KW_MAPPINGS_MODEL
                                                                      : "";
        }
        if (basis_col >= 0 && f[basis_col][0]) {
            const char *bs = f[basis_col];
            size_t b = 0, nb = sizeof knobwise_bases / sizeof knobwise_bases[0];
            while (b < nb && strcmp(bs, knobwise_bases[b]) != 0)
                b++;
            if (b == nb) {
                rc = kw_error_set(KW_EINPUT, "%s:%ld: " KNOBWISE_CSV_BASIS " is '%s', not recheck, "
                                  "search, measured or " KW_BASIS_EVALUATED, t->path, at, bs);
                goto done_cols;
            }
            e->figures_basis = knobwise_bases[b];
        }
        if (rows_col >= 0) {
            long v;
            if (knobwise_parse_count(&v, f[rows_col]) != 0 || (rows > 0 && v != rows) ||
                n_rows + 1 > v) {
                rc = kw_error_set(KW_EINPUT, "%s:%ld: " KNOBWISE_CSV_ROWS " is '%s', not the "
                                  "number of shape rows in the file%s", t->path, at, f[rows_col],
                                  rows > 0 ? " that the rows before it give" : "");
                goto done_cols;
            }
            rows = v;
        }
        n_rows++;
        last = at;
        /* a row whose configuration fails the guards on its shape (recommend
         * --all's baseline row: nothing to deploy): refused as results.xml's
         * shape with no configuration is, never served nor borrowed from */
        if (knobwise_has_token(e->warnings, KNOBWISE_W_FAILS_GUARDS)) {
            knobwise_unmet *u;
            if ((rc = knobwise_unmet_add(t, &u)) != 0)
                goto done_cols;
            u->name = e->name;
            u->line = at;
            u->key = (knobwise_key){e->batch_log2, e->len_log2, e->streams_log2, e->shape.batch,
                                    e->shape.len, e->shape.streams,
                                    e->has_dims ? e->shape.phase : -1};
            t->n_entries--;
        }
    }
    if (n_rows == 0)
        rc = kw_error_set(KW_EINPUT, "%s: no shape rows after the header", t->path);
    else if (rows_col >= 0 && n_rows != rows)
        rc = kw_error_set(KW_EINPUT, "%s:%ld: the file ends after %ld of its %ld shape rows ("
                          KNOBWISE_CSV_ROWS "): cut short", t->path, last, n_rows, rows);
done_cols:
    free(knob_col);
done:
    free(f);
    return rc;
}

/* ---- the table ------------------------------------------------------------------------ */

typedef struct knobwise_name_ref {
    const char *name;
    long line;
} knobwise_name_ref;

static int knobwise_name_cmp(const void *a, const void *b)
{
    const knobwise_name_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* A shape listed twice, as an entry or as a shape with nothing to deploy
 * (until 2026-12-07 the latter were not compared: a fails_guards row beside
 * a served row of the same name opened, and the name was answered both
 * ways): the first repeat in file order, named with its line and the line
 * of the first listing. Sorting the names is O(N log N); the comparison of
 * each new name with every earlier one that it replaces was O(N^2) and hung
 * on a large file (a 3.4 MB mappings.csv of 80,000 rows took 28 s of CPU to
 * open, and files knobwise writes are read up to 512 MiB); a hash set would
 * be linear but can be flooded by crafted names. */
static int knobwise_dup_names(const knobwise_table *t)
{
    int n = t->n_entries + t->n_unmet, dup = -1;
    knobwise_name_ref *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    if (!r)
        return knobwise_oom(t);
    for (int i = 0; i < t->n_entries; i++)
        r[i] = (knobwise_name_ref){t->entries[i].name, t->entries[i].line};
    for (int i = 0; i < t->n_unmet; i++)
        r[t->n_entries + i] = (knobwise_name_ref){t->unmet[i].name, t->unmet[i].line};
    qsort(r, (size_t)n, sizeof *r, knobwise_name_cmp);
    for (int i = 1; i < n; i++) /* within a name, sorted by file order */
        if (strcmp(r[i].name, r[i - 1].name) == 0 && (dup < 0 || r[i].line < r[dup].line))
            dup = i;
    int rc = 0;
    if (dup >= 0)
        rc = kw_error_set(KW_EINPUT, "%s:%ld: shape '%s' listed twice (first at line %ld)",
                          t->path, r[dup].line, r[dup].name, r[dup - 1].line);
    free(r);
    return rc;
}

void knobwise_table_free(knobwise_table *t)
{
    if (!t)
        return;
    for (knobwise_chunk *c = t->arena, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(t->entries);
    free(t->keys);
    free(t->unmet);
    free(t);
}

static int knobwise_table_open_c(knobwise_table **out, const char *path);

/* The files are written in the C locale ("527.086"); a runtime that set its
 * own (setlocale(LC_ALL, "") under LANG=de_DE.UTF-8: decimal comma) made
 * strtod stop at the '.', and no table opened ("'527.086' is not a finite
 * number"). The open runs in the C locale on this thread only (uselocale),
 * so the caller's other threads and its own locale are untouched. */
int knobwise_table_open(knobwise_table **out, const char *path)
{
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!c) {
        if (out)
            *out = NULL;
        return kw_error_set(KW_ENOMEM, "%s: out of memory", path ? path : "knobwise");
    }
    locale_t old = uselocale(c);
    int rc = knobwise_table_open_c(out, path);
    uselocale(old);
    freelocale(c);
    return rc;
}

/* The offset of the first byte of s[0..n) that does not begin a well-formed
 * UTF-8 sequence (RFC 3629 section 4: no overlong form, no surrogate, nothing
 * above U+10FFFF), or n when all of it is UTF-8. knobwise writes its files in
 * UTF-8 (libxml2 refuses a results.xml that is not); a mappings.csv in
 * another encoding went through to export, whose JSON was then no JSON
 * (RFC 8259 section 8.1: UTF-8). */
static size_t knobwise_utf8_bad(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
                                   : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (len == 0 || i + len > n || (len == 2 && c < 0xC2) || (len == 4 && c > 0xF4))
            return i;
        for (size_t k = 1; k < len; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
        if ((c == 0xE0 && s[i + 1] < 0xA0) || (c == 0xED && s[i + 1] >= 0xA0) ||
            (c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] >= 0x90))
            return i; /* overlong, surrogate, above U+10FFFF */
        i += len;
    }
    return n;
}

/* The line (from 1) of offset at in buf. */
static long knobwise_line_at(const char *buf, size_t at)
{
    long line = 1;
    for (size_t i = 0; i < at; i++)
        line += buf[i] == '\n';
    return line;
}

static int knobwise_table_open_c(knobwise_table **out, const char *path)
{
    if (!out)
        return kw_error_set(KW_EINPUT, "knobwise_table_open: no output given");
    *out = NULL;
    if (!path || !path[0])
        return kw_error_set(KW_EINPUT, "knobwise_table_open: no path given");
    knobwise_table *t = calloc(1, sizeof *t);
    if (!t)
        return kw_error_set(KW_ENOMEM, "%s: out of memory", path);
    char *buf = NULL, *full = NULL;
    size_t len = 0;
    int rc;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t n = strlen(path) + sizeof "/results.xml";
        if (!(full = malloc(n))) {
            rc = kw_error_set(KW_ENOMEM, "%s: out of memory", path);
            goto done;
        }
        snprintf(full, n, "%s/results.xml", path);
        path = full;
    }
    if (!(t->path = knobwise_strdup(t, path))) {
        rc = knobwise_oom(t);
        goto done;
    }
    kw_xml_problems p = {0};
    /* a run's results.xml, or a run folder's own mappings.csv, never through
     * a symbolic link (one planted at RUN/results.xml pointed export out of
     * the run folder); a file the caller names elsewhere may be a link they
     * made (kw_runfile.h) */
    rc = kw_xml_read_output(&buf, &len, path, full != NULL, &p);
    if (rc != 0) {
        if (rc == KW_EINPUT)
            kw_xml_problems_finish(&p);
        goto done;
    }
    const char *c = buf + kw_input_bom(buf); /* libxml2 reads the mark; the CSV reader skips it */
    while (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\n')
        c++;
    size_t bad;
    if (strlen(buf) != len) {
        rc = kw_error_set(KW_EINPUT, "%s:%ld: contains a NUL byte: not a results.xml nor a "
                          "mappings.csv%s", path, knobwise_line_at(buf, strlen(buf)),
                          strlen(buf) < 4 ? " (a UTF-16 or UTF-32 file?)" : "");
    } else if (*c == '<') {
        t->kind = "results.xml";
        rc = knobwise_read_xml(t, buf, len);
    } else if ((bad = knobwise_utf8_bad((const unsigned char *)buf, len)) < len) {
        rc = kw_error_set(KW_EINPUT, "%s:%ld: byte 0x%02X is not UTF-8 text: knobwise writes "
                          "mappings.csv in UTF-8 (was the file saved in another encoding?)", path,
                          knobwise_line_at(buf, bad), (unsigned char)buf[bad]);
    } else {
        t->kind = "mappings.csv";
        rc = knobwise_read_csv(t, buf);
    }
    /* A table whose every shape has nothing to deploy (no configuration the
     * run evaluated passes the guards there) opens: each of its shapes is
     * answered KNOBWISE_ENOTFOUND with its reason, as one such shape among
     * others is (until 2026-12-07 the whole table was KNOBWISE_EINPUT, "no
     * configuration for any shape", from either file). A file with no shape
     * at all is no table. */
    if (rc == 0 && t->n_entries == 0 && t->n_unmet == 0)
        rc = kw_error_set(KW_EINPUT, "%s: the run recommends no configuration for any shape", path);
    if (rc == 0)
        rc = knobwise_dup_names(t);
    if (rc == 0 && !(t->keys = malloc((size_t)(t->n_entries > 0 ? t->n_entries : 1) *
                                      sizeof *t->keys)))
        rc = kw_error_set(KW_ENOMEM, "%s: out of memory", path);
    for (int i = 0; rc == 0 && i < t->n_entries; i++) {
        const knobwise_entry *e = &t->entries[i];
        t->keys[i] = (knobwise_key){e->batch_log2, e->len_log2, e->streams_log2, e->shape.batch,
                                    e->shape.len, e->shape.streams,
                                    e->has_dims ? e->shape.phase : -1};
    }
done:
    free(buf);
    free(full);
    if (rc != 0) {
        knobwise_table_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int knobwise_table_count(const knobwise_table *t) { return t ? t->n_entries : 0; }

const knobwise_entry *knobwise_table_entry(const knobwise_table *t, int i)
{
    return t && i >= 0 && i < t->n_entries ? &t->entries[i] : NULL;
}

int knobwise_table_knob_count(const knobwise_table *t) { return t ? t->n_knobs : 0; }

const char *knobwise_table_knob_name(const knobwise_table *t, int k)
{
    return t && k >= 0 && k < t->n_knobs ? t->knobs[k] : NULL;
}

int knobwise_table_knob_index(const knobwise_table *t, const char *knob)
{
    if (t && knob)
        for (int k = 0; k < t->n_knobs; k++)
            if (strcmp(t->knobs[k], knob) == 0)
                return k;
    return kw_error_set(KNOBWISE_ENOTFOUND, "%s: no knob '%s'", t ? t->path : "knobwise",
                        knob ? knob : "(null)");
}

const char *knobwise_table_path(const knobwise_table *t) { return t ? t->path : NULL; }
const char *knobwise_table_kind(const knobwise_table *t) { return t ? t->kind : NULL; }

/* The refusal of a request for a shape the run tuned without finding
 * anything that passes the guards (recommend says the same and keeps the
 * baseline; a borrowed winner is what the run saw fail there). */
static int knobwise_unmet_refuse(const knobwise_table *t, int i)
{
    if (strcmp(t->kind, "mappings.csv") == 0) /* a fails_guards row: tuned, or borrowed */
        return kw_error_set(KNOBWISE_ENOTFOUND, "%s:%ld: shape '%s': no configuration the run "
                            "evaluated passes its guards there (borrow_warnings "
                            KNOBWISE_W_FAILS_GUARDS "): nothing to deploy (keep the production "
                            "mapping)", t->path, t->unmet[i].line, t->unmet[i].name);
    return kw_error_set(KNOBWISE_ENOTFOUND, "%s:%ld: shape '%s' was tuned, but no configuration "
                        "the run evaluated passes its guards: nothing to deploy (keep the "
                        "production mapping)", t->path, t->unmet[i].line, t->unmet[i].name);
}

int knobwise_table_find(const knobwise_entry **out, const knobwise_table *t, const char *shape_name)
{
    if (!out || !t || !shape_name)
        return kw_error_set(KW_EINPUT, "knobwise_table_find: a NULL argument");
    *out = NULL;
    for (int i = 0; i < t->n_entries; i++)
        if (strcmp(t->entries[i].name, shape_name) == 0) {
            *out = &t->entries[i];
            return 0;
        }
    for (int i = 0; i < t->n_unmet; i++)
        if (strcmp(t->unmet[i].name, shape_name) == 0)
            return knobwise_unmet_refuse(t, i);
    return kw_error_set(KNOBWISE_ENOTFOUND, "%s: no entry for shape '%s'", t->path, shape_name);
}

/* Nearest entry of the given phase (index, or -1); *exact set when one is the request itself. */
static int knobwise_nearest(const knobwise_table *t, const knobwise_shape *q, int phase,
                            double lb, double ll, double ls, int *exact)
{
    int best = -1;
    double bd = INFINITY;
    for (int i = 0; i < t->n_entries; i++) {
        const knobwise_key *e = &t->keys[i];
        if (e->phase != phase)
            continue;
        if (phase == q->phase && e->batch == q->batch && e->len == q->len &&
            e->streams == q->streams) {
            *exact = 1;
            return i;
        }
        double d = fabs(e->batch_log2 - lb) + fabs(e->len_log2 - ll) + fabs(e->streams_log2 - ls);
        if (d < bd) {
            bd = d;
            best = i;
        }
    }
    return best;
}

int knobwise_table_lookup(knobwise_match *out, const knobwise_table *t,
                          const knobwise_shape *q, unsigned flags)
{
    if (!out || !t || !q)
        return kw_error_set(KW_EINPUT, "knobwise_table_lookup: a NULL argument");
    memset(out, 0, sizeof *out);
    /* a flag this library does not know is refused, not ignored: a later flag may narrow
     * what may be answered (as KNOBWISE_LOOKUP_EXACT does), and ignoring it would hand a
     * caller built against a newer header an answer it asked not to get */
    if (flags & ~(KNOBWISE_LOOKUP_EXACT | KNOBWISE_LOOKUP_CROSS_PHASE))
        return kw_error_set(KW_EINPUT,
                            "knobwise_table_lookup: flags 0x%x: bits 0x%x are not flags this "
                            "library (%s) knows (KNOBWISE_LOOKUP_EXACT, "
                            "KNOBWISE_LOOKUP_CROSS_PHASE)",
                            flags, flags & ~(KNOBWISE_LOOKUP_EXACT | KNOBWISE_LOOKUP_CROSS_PHASE),
                            PACKAGE_VERSION);
    if ((q->phase != KNOBWISE_PREFILL && q->phase != KNOBWISE_DECODE) || q->batch < 1 ||
        q->len < 1 || q->streams < 1)
        return kw_error_set(KW_EINPUT,
                            "knobwise_table_lookup: phase %d, batch %ld, len %ld, streams %ld: the "
                            "phase is KNOBWISE_PREFILL or KNOBWISE_DECODE, the counts are >= 1",
                            q->phase, q->batch, q->len, q->streams);
    if (!t->any_dims)
        return kw_error_set(KNOBWISE_ENODATA,
                            "%s: the file carries no shape dimensions (written before "
                            "libknobwise): look shapes up by name",
                            t->path);
    double lb = log2((double)q->batch), ll = log2((double)q->len), ls = log2((double)q->streams);
    int exact = 0, crossed = 0;
    int i = knobwise_nearest(t, q, q->phase, lb, ll, ls, &exact);
    if (i < 0 && (flags & KNOBWISE_LOOKUP_CROSS_PHASE) && !(flags & KNOBWISE_LOOKUP_EXACT)) {
        i = knobwise_nearest(t, q, 1 - q->phase, lb, ll, ls, &exact);
        crossed = i >= 0;
    }
    /* the request is a shape the run tuned and found nothing for: refused,
     * not borrowed (recommend keeps its baseline) */
    for (int u = 0; !exact && u < t->n_unmet; u++) {
        const knobwise_key *k = &t->unmet[u].key;
        if (k->phase == q->phase && k->batch == q->batch && k->len == q->len &&
            k->streams == q->streams)
            return knobwise_unmet_refuse(t, u);
    }
    const char *ph = q->phase == KNOBWISE_DECODE ? "decode" : "prefill";
    if (i < 0 && t->n_entries == 0)
        return kw_error_set(KNOBWISE_ENOTFOUND, "%s: no shape the run tuned has a configuration "
                            "to deploy (none that it evaluated passes the guards): nothing to "
                            "borrow for %s batch %ld len %ld streams %ld (keep the production "
                            "mapping)", t->path, ph, q->batch, q->len, q->streams);
    if (i < 0)
        return kw_error_set(KNOBWISE_ENOTFOUND,
                            "%s: no %s entry to borrow from (borrowing across phases needs "
                            "KNOBWISE_LOOKUP_CROSS_PHASE)",
                            t->path, ph);
    if (!exact && (flags & KNOBWISE_LOOKUP_EXACT))
        return kw_error_set(KNOBWISE_ENOTFOUND,
                            "%s: no entry for %s batch %ld len %ld streams %ld (exact lookup)",
                            t->path, ph, q->batch, q->len, q->streams);
    const knobwise_entry *e = &t->entries[i];
    out->entry = e;
    out->exact = exact;
    out->borrowed = !exact || e->borrowed_from[0] != '\0';
    out->phase_crossed = crossed;
    out->batch_log2 = e->batch_log2 - lb;
    out->len_log2 = e->len_log2 - ll;
    out->streams_log2 = e->streams_log2 - ls;
    return 0;
}

/* ---- entries and configurations ------------------------------------------------------- */

const char *knobwise_entry_name(const knobwise_entry *e) { return e ? e->name : NULL; }

int knobwise_entry_shape(knobwise_shape *out, const knobwise_entry *e)
{
    if (!out || !e)
        return kw_error_set(KW_EINPUT, "knobwise_entry_shape: a NULL argument");
    if (!e->has_dims)
        return kw_error_set(KNOBWISE_ENODATA, "shape '%s': the file carries no dimensions", e->name);
    *out = e->shape;
    return 0;
}

const char *knobwise_entry_borrowed_from(const knobwise_entry *e) { return e ? e->borrowed_from : NULL; }
const knobwise_config *knobwise_entry_config(const knobwise_entry *e) { return e ? &e->cfg : NULL; }
const char *knobwise_entry_owner(const knobwise_entry *e) { return e ? e->owner : NULL; }

int knobwise_entry_latency(double *p95_us, double *p99_us, const knobwise_entry *e)
{
    if (!e)
        return kw_error_set(KW_EINPUT, "knobwise_entry_latency: no entry");
    if (!e->has_latency)
        return kw_error_set(KNOBWISE_ENODATA, "shape '%s': %s carries no predicted latency",
                            e->name, e->cfg.t->kind);
    if (p95_us)
        *p95_us = e->p95_us;
    if (p99_us)
        *p99_us = e->p99_us;
    return 0;
}

const char *knobwise_entry_figures_from(const knobwise_entry *e) { return e ? e->figures_from : NULL; }
const char *knobwise_entry_figures_basis(const knobwise_entry *e) { return e ? e->figures_basis : NULL; }

const char *knobwise_entry_warnings(const knobwise_entry *e) { return e ? e->warnings : NULL; }

int knobwise_entry_disproof_count(const knobwise_entry *e) { return e ? e->n_disproof : 0; }

const char *knobwise_entry_disproof(const knobwise_entry *e, int i)
{
    return e && i >= 0 && i < e->n_disproof ? e->disproof[i] : NULL;
}

int knobwise_entry_watch_count(const knobwise_entry *e) { return e ? e->n_watch : 0; }

int knobwise_entry_watch(knobwise_watch *out, const knobwise_entry *e, int i)
{
    if (!out || !e)
        return kw_error_set(KW_EINPUT, "knobwise_entry_watch: a NULL argument");
    if (i < 0 || i >= e->n_watch)
        return kw_error_set(KNOBWISE_ENOTFOUND, "shape '%s': no guard threshold %d (it has %d)",
                            e->name, i, e->n_watch);
    *out = e->watch[i];
    return 0;
}

int knobwise_entry_rollback(const knobwise_config **out, const knobwise_entry *e, int target)
{
    if (!out || !e)
        return kw_error_set(KW_EINPUT, "knobwise_entry_rollback: a NULL argument");
    *out = NULL;
    if (target != KNOBWISE_ROLLBACK_PARENT && target != KNOBWISE_ROLLBACK_BASELINE)
        return kw_error_set(KW_EINPUT, "knobwise_entry_rollback: target %d is not "
                                       "KNOBWISE_ROLLBACK_PARENT or _BASELINE",
                            target);
    if (!e->has_rollback[target])
        return kw_error_set(KNOBWISE_ENODATA, "shape '%s': %s carries no %s roll-back target",
                            e->name, e->cfg.t->kind,
                            target == KNOBWISE_ROLLBACK_PARENT ? "parent" : "baseline");
    *out = &e->rollback[target];
    return 0;
}

const char *knobwise_config_id(const knobwise_config *c) { return c ? c->id : NULL; }

long kw_knobwise_config_line(const knobwise_config *c) { return c ? c->line : 0; }

const char *kw_knobwise_unmet(const knobwise_table *t, int i, long *line)
{
    if (!t || i < 0 || i >= t->n_unmet)
        return NULL;
    if (line)
        *line = t->unmet[i].line;
    return t->unmet[i].name;
}

int kw_knobwise_unmet_shape(knobwise_shape *out, const knobwise_table *t, int i)
{
    if (!t || i < 0 || i >= t->n_unmet || t->unmet[i].key.phase < 0)
        return KNOBWISE_ENODATA;
    const knobwise_key *k = &t->unmet[i].key;
    *out = (knobwise_shape){k->phase, k->batch, k->len, k->streams};
    return 0;
}

const char *knobwise_config_value(const knobwise_config *c, int k)
{
    if (!c || !c->values || k < 0 || k >= c->t->n_knobs)
        return NULL;
    return c->values[k];
}

int knobwise_config_get(const char **out, const knobwise_config *c, const char *knob)
{
    if (!out || !c || !knob)
        return kw_error_set(KW_EINPUT, "knobwise_config_get: a NULL argument");
    *out = NULL;
    int k = knobwise_table_knob_index(c->t, knob);
    if (k < 0)
        return k;
    if (!c->values)
        return kw_error_set(KNOBWISE_ENODATA, "%s: configuration %s: its knob values are not in "
                                              "the file",
                            c->t->path, c->id);
    *out = c->values[k];
    return 0;
}

int knobwise_config_get_long(long *out, const knobwise_config *c, const char *knob)
{
    if (!out) /* the other getters' rule: a NULL argument is an error, never a crash */
        return kw_error_set(KW_EINPUT, "knobwise_config_get_long: a NULL argument");
    const char *v;
    int rc = knobwise_config_get(&v, c, knob);
    if (rc != 0)
        return rc;
    /* the one parser of a person's numbers (kw_num_long: an optional sign and
     * decimal digits, nothing before or after, within long's range, in no
     * locale): strtol took " 64" and "\t64" as 64 */
    long x;
    if (kw_num_long(&x, v, LONG_MIN, LONG_MAX) != 0)
        return kw_error_set(KW_EINPUT, "%s:%ld: knob '%s' is '%s', not an integer (decimal "
                            "digits with an optional sign, nothing around them, within a long)",
                            c->t->path, c->line, knob, v);
    *out = x;
    return 0;
}

const char *knobwise_error_last(void) { return kw_error_last(); }
const char *knobwise_version(void) { return PACKAGE_VERSION; }
