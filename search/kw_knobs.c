/* kw_knobs.c - knob spaces and candidates as the engine sees them.
 *
 * A candidate is a fixed array of value indices (kw_cand), copied by value, so
 * every operation here is a short loop with no allocation. The id of a
 * candidate hashes the knob NAMES and value TEXTS, not the indices, so an id
 * stays the same when a space file reorders or extends its domains; that is
 * what lets a journal, a results file and `knobwise eval` agree on an id.
 */
#include <ctype.h>
#include <string.h>

#include "kw_mix.h"
#include "kw_search.h"
#include "kw_suggest.h"

void kw_knobs_cand_baseline(kw_cand *out, const kw_knobspace *ks)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < ks->n_knobs; i++)
        out->v[i] = (uint8_t)ks->knobs[i].baseline;
}

uint64_t kw_knobs_id_text(int n, const char *const *names, const char *const *values)
{
    return kw_mix_config_id(n, names, values);
}

uint64_t kw_knobs_cand_id(const kw_knobspace *ks, const kw_cand *c)
{
    const char *names[KW_KNOB_MAX], *values[KW_KNOB_MAX];
    int n = ks->n_knobs < KW_KNOB_MAX ? ks->n_knobs : KW_KNOB_MAX;
    for (int i = 0; i < n; i++) {
        const kw_knob *k = &ks->knobs[i];
        names[i] = k->name;
        values[i] = k->values[c->v[i] < k->n_values ? c->v[i] : 0];
    }
    return kw_knobs_id_text(n, names, values);
}

int kw_knobs_cand_distance(const kw_knobspace *ks, const kw_cand *a, const kw_cand *b)
{
    int d = 0;
    for (int i = 0; i < ks->n_knobs; i++)
        d += a->v[i] != b->v[i];
    return d;
}

int kw_knobs_cand_violates(const kw_knobspace *ks, const kw_cand *c)
{
    for (int i = 0; i < ks->n_constraints; i++) {
        const kw_constraint *k = &ks->constraints[i];
        if (k->n_terms <= 0)
            continue; /* an empty forbid clause forbids nothing */
        int all = 1;
        for (int t = 0; t < k->n_terms && all; t++) {
            int knob = k->terms[t].knob;
            if (knob < 0 || knob >= ks->n_knobs || c->v[knob] >= 64 ||
                !((k->terms[t].mask >> c->v[knob]) & 1u))
                all = 0;
        }
        if (all)
            return i;
    }
    return -1;
}

int kw_knobs_find(const kw_knobspace *ks, const char *name)
{
    for (int i = 0; i < ks->n_knobs; i++)
        if (strcmp(ks->knobs[i].name, name) == 0)
            return i;
    return -1;
}

int kw_knobs_value(const kw_knob *k, const char *text)
{
    for (int i = 0; i < k->n_values; i++)
        if (strcmp(k->values[i], text) == 0)
            return i;
    return -1;
}

uint64_t kw_knobs_size(const kw_knobspace *ks)
{
    uint64_t n = 1;
    for (int i = 0; i < ks->n_knobs; i++) {
        uint64_t d = ks->knobs[i].n_values > 0 ? (uint64_t)ks->knobs[i].n_values : 1;
        if (n > UINT64_MAX / d)
            return UINT64_MAX;
        n *= d;
    }
    return n;
}

void kw_knobs_cand_format(char *buf, size_t len, const kw_knobspace *ks, const kw_cand *c)
{
    if (len == 0)
        return;
    buf[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < ks->n_knobs; i++) {
        const kw_knob *k = &ks->knobs[i];
        int v = c->v[i] < k->n_values ? c->v[i] : 0;
        int n = snprintf(buf + used, len - used, "%s%s=%s", i ? " " : "", k->name, k->values[v]);
        if (n < 0 || (size_t)n >= len - used) {
            buf[len - 1] = '\0';
            return;
        }
        used += (size_t)n;
    }
}

int kw_knobs_cand_apply(kw_cand *c, long *set_at, long at, const kw_knobspace *ks,
                        const char *text)
{
    const char *p = text ? text : "";
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *tok = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        size_t n = (size_t)(p - tok);
        const char *eq = memchr(tok, '=', n);
        if (!eq || eq == tok)
            return kw_error_set(KW_EINPUT, "'%.*s' is not knob=value", (int)(n < 60 ? n : 60), tok);
        char name[KW_NAME_MAX], value[KW_VALUE_LEN];
        size_t nn = (size_t)(eq - tok), vn = n - nn - 1;
        if (nn >= sizeof name || vn >= sizeof value)
            return kw_error_set(KW_EINPUT, "'%.40s...': name or value too long", tok);
        memcpy(name, tok, nn);
        name[nn] = '\0';
        memcpy(value, eq + 1, vn);
        value[vn] = '\0';
        char hint[512];
        int k = kw_knobs_find(ks, name);
        if (k < 0) {
            kw_knobs_hint_name(hint, sizeof hint, ks, name);
            return kw_error_set(KW_EINPUT, "unknown knob '%s'%s", name, hint);
        }
        int v = kw_knobs_value(&ks->knobs[k], value);
        if (v < 0) {
            kw_knobs_hint_value(hint, sizeof hint, &ks->knobs[k], value);
            return kw_error_set(KW_EINPUT, "knob '%s' has no value '%s'%s", name, value, hint);
        }
        if (set_at[k] > 0 && c->v[k] != v) {
            char first[48] = "";
            if (set_at[k] != at)
                snprintf(first, sizeof first, " on line %ld", set_at[k]);
            return kw_error_set(KW_EINPUT, "knob '%s' is set twice ('%s'%s, then '%s')", name,
                                ks->knobs[k].values[c->v[k]], first, value);
        }
        set_at[k] = at;
        c->v[k] = (uint8_t)v;
    }
    return 0;
}

int kw_knobs_cand_parse(kw_cand *out, const kw_knobspace *ks, const char *text)
{
    kw_cand c;
    long set_at[KW_KNOB_MAX] = {0};
    kw_knobs_cand_baseline(&c, ks);
    int rc = kw_knobs_cand_apply(&c, set_at, 1, ks, text);
    if (rc == 0)
        *out = c;
    return rc;
}

void kw_knobs_hint_name(char *buf, size_t size, const kw_knobspace *ks, const char *name)
{
    kw_suggest s;
    kw_suggest_init(&s, name);
    for (int i = 0; i < ks->n_knobs; i++)
        kw_suggest_add(&s, ks->knobs[i].name);
    kw_suggest_format(&s, buf, size);
}

void kw_knobs_hint_value(char *buf, size_t size, const kw_knob *k, const char *value)
{
    kw_suggest s;
    kw_suggest_init(&s, value);
    for (int i = 0; i < k->n_values; i++)
        kw_suggest_add(&s, k->values[i]);
    kw_suggest_format(&s, buf, size);
    if (s.n > 0 || size == 0)
        return;
    size_t u = (size_t)snprintf(buf, size, " (its values: ");
    for (int i = 0; i < k->n_values && u < size; i++)
        u += (size_t)snprintf(buf + u, size - u, "%s%s", i ? "|" : "", k->values[i]);
    if (u < size)
        snprintf(buf + u, size - u, ")");
}
