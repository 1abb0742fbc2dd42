/* kw_run.c - the run's attribute table (see kw_run.h). */
#include "kw_run.h"

#define KW_RUN_ATTR_KEY_(id, key, meaning) key,
static const char *const kw_run_keys[KW_RUN_ATTR_COUNT] = {KW_RUN_ATTR_ROWS(KW_RUN_ATTR_KEY_)};
#undef KW_RUN_ATTR_KEY_

const char *kw_run_attr_key(kw_run_attr a)
{
    return a >= 0 && a < KW_RUN_ATTR_COUNT ? kw_run_keys[a] : "";
}

const char *kw_run_attr_get(const kw_journal *j, kw_run_attr a)
{
    return kw_journal_attr(j, kw_run_attr_key(a));
}
