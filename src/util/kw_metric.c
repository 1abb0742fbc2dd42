/* kw_metric.c - the metric table's rows and its lookups (see kw_metric.h for
 * why one table). A lookup is a linear scan of ~32 short names: writers call
 * it once per column, never per evaluation, so a hash index would buy
 * nothing measurable. */
#include <string.h>

#include "kw_metric.h"

#define KW_METRIC_ROW_(id, name, unit, dec, csv, better, meaning) {name, unit, dec, csv, better, meaning},
const kw_metric_info kw_metric_table[] = {
    KW_METRIC_MODEL_ROWS(KW_METRIC_ROW_) KW_METRIC_MEASURED_ROWS(KW_METRIC_ROW_)
};
#undef KW_METRIC_ROW_

const int kw_metric_count = (int)(sizeof kw_metric_table / sizeof kw_metric_table[0]);

#define KW_METRIC_NAME_(id, name, unit, dec, csv, better, meaning) name,
const char *const kw_model_metric_names[KW_M_COUNT] = {KW_METRIC_MODEL_ROWS(KW_METRIC_NAME_)};
#undef KW_METRIC_NAME_

/* Decimals of a metric the table does not know, by its unit suffix. */
#define KW_METRIC_DEC_TIME 3  /* _us, _pct, _c: microseconds, percent, Celsius */
#define KW_METRIC_DEC_OTHER 4 /* ratios and everything else */

const kw_metric_info *kw_metric_find(const char *name)
{
    for (int i = 0; i < kw_metric_count; i++)
        if (strcmp(kw_metric_table[i].name, name) == 0)
            return &kw_metric_table[i];
    return NULL;
}

static int kw_metric_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int kw_metric_decimals(const char *name)
{
    const kw_metric_info *m = kw_metric_find(name);
    if (m)
        return m->decimals;
    if (kw_metric_ends_with(name, "_us") || kw_metric_ends_with(name, "_pct") ||
        kw_metric_ends_with(name, "_c"))
        return KW_METRIC_DEC_TIME;
    return KW_METRIC_DEC_OTHER;
}
