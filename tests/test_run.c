/* test_run.c - the run's attribute table (src/run/kw_run.c) against what tune
 * really records: the journal of a real run holds one A record per row, in
 * the table's order, and each reads back through kw_run_attr_get. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "kw_journal.h"
#include "lib/kw_tl.h"
#include "kw_run.h"

TestSuite(run);

Test(run, tune_records_every_attribute_of_the_table_in_order)
{
    char *d = kw_tl_tmpdir("kwrun");
    cr_assert_not_null(d);
    char space[4200];
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    kw_tl_opts o = {.timeout_s = 120, .cwd = d};
    kw_tl_proc r = kw_tl_run(&o, kw_tl_bin(), "tune", "--space", space, "--budget", "5", "--owner",
                         "team-x", "--quiet", "--out", "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    char jp[4300];
    snprintf(jp, sizeof jp, "%s/run/journal", d);
    kw_journal *j = NULL;
    cr_assert_eq(kw_journal_load(&j, jp), 0, "%s", kw_error_last());
    cr_assert_eq(j->h.n_attrs, KW_RUN_ATTR_COUNT);
    for (int a = 0; a < KW_RUN_ATTR_COUNT; a++)
        cr_assert_str_eq(j->h.attrs[a].key, kw_run_attr_key((kw_run_attr)a));
    cr_assert_str_eq(kw_run_attr_get(j, KW_RUN_OWNER), "team-x");
    cr_assert_str_eq(kw_run_attr_get(j, KW_RUN_SPACE), space);
    cr_assert_str_eq(kw_run_attr_get(j, KW_RUN_EVALUATOR), "");
    cr_assert_str_eq(kw_run_attr_key(KW_RUN_ATTR_COUNT), "");
    kw_journal_free(j);
    kw_tl_rmrf(d);
}
