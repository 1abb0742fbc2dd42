/* test_run.c - the run's attribute table (src/run/kw_run.c) against what tune
 * really records: the journal of a real run holds one A record per row, in
 * the table's order, and each reads back through kw_run_attr_get; and the
 * stop path's files, made from the live summary, against the journal's
 * rebuild. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kw_journal.h"
#include "kw_load.h"
#include "kw_results.h"
#include "kw_sbuf.h"
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

/* ---- the stop path's live summary (kw_runsum_live) ---- */

static const char *const kw_files[4] = {"results.xml", "ranked.csv", "audit.csv",
                                        "portability.csv"};

typedef struct stopper {
    volatile sig_atomic_t *stop;
    int rounds, stop_at;
} stopper;

/* The caller's progress: the stop flag set after stop_at rounds, as a
 * SIGTERM handler would set it. */
static void stop_after(void *ud, const kw_run *r, const kw_progress *p)
{
    (void)r;
    (void)p;
    stopper *s = ud;
    if (++s->rounds == s->stop_at)
        *s->stop = 1;
}

/* The four files of dir, each read into f[i] (NULL when absent). */
static void read_files(char *f[4], size_t n[4], const char *dir)
{
    for (int i = 0; i < 4; i++) {
        char p[4300];
        snprintf(p, sizeof p, "%s/%s", dir, kw_files[i]);
        f[i] = kw_tl_slurp_n(p, &n[i]);
    }
}

/* A stopped run's files (made by kw_run_exec from its live summary: it read
 * its own journal as the engine wrote it) against the files the journal
 * rebuilds (kw_run_results: the journal file streamed afresh), byte for
 * byte; the same after a resume that is stopped again. */
static void stopped_files_equal_the_rebuild(kw_run *r, volatile sig_atomic_t *stop, int stop_at,
                                            const char *dir, const kw_config *cfg)
{
    stopper s = {stop, 0, stop_at};
    kw_run_ctl ctl = {.stop = stop, .progress = stop_after, .ud = &s};
    kw_run_outcome out;
    int rc = kw_run_exec(r, &out, &ctl);
    cr_assert_eq(rc, 0, "%s", kw_error_last());
    cr_assert_eq(out.engine_rc, KW_EINTERRUPTED, "the run was not stopped (%d)", out.engine_rc);
    cr_assert_eq(out.live_results, 1, "the files were not made from the live summary");
    char *live[4], *rebuilt[4];
    size_t nl[4], nr[4];
    read_files(live, nl, dir);
    cr_assert_eq(kw_run_results(dir, cfg, "team-x", "p95_us", NULL, NULL, NULL, 0), 0, "%s",
                 kw_error_last());
    read_files(rebuilt, nr, dir);
    for (int i = 0; i < 4; i++) {
        cr_assert_not_null(live[i], "%s: not written after the stop", kw_files[i]);
        cr_assert_not_null(rebuilt[i]);
        cr_assert(nl[i] == nr[i] && memcmp(live[i], rebuilt[i], nl[i]) == 0,
                  "%s: the live summary's file differs from the journal's rebuild (%zu vs %zu "
                  "bytes)", kw_files[i], nl[i], nr[i]);
        free(live[i]);
        free(rebuilt[i]);
    }
}

Test(run, the_stop_paths_live_summary_writes_the_files_the_journal_rebuilds)
{
    char *d = kw_tl_tmpdir("kwrun");
    cr_assert_not_null(d);
    char space[4200], dir[4300];
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    snprintf(dir, sizeof dir, "%s/run", d);
    kw_config *cfg = NULL;
    cr_assert_eq(kw_run_load_config(&cfg, space, NULL, NULL), 0, "%s", kw_error_last());
    kw_run_opts o = {.space = space, .out = dir, .owner = "team-x", .metric = "p95_us",
                     .seed = 3, .threads = 1, .repeats = 0, .tabu = 3, .probes = 8};
    volatile sig_atomic_t stop = 0;
    kw_run *r = NULL;
    cr_assert_eq(kw_run_create(&r, NULL, &o, &stop), 0, "%s", kw_error_last());
    stopped_files_equal_the_rebuild(r, &stop, 5, dir, cfg);
    kw_run_free(r);
    /* resumed (the live summary reads the replayed journal first), stopped again */
    r = NULL;
    cr_assert_eq(kw_run_resume(&r, NULL, dir, 1, 0, &stop), 0, "%s", kw_error_last());
    stopped_files_equal_the_rebuild(r, &stop, 12, dir, cfg);
    kw_run_free(r);
    kw_load_config_free(cfg);
    kw_tl_rmrf(d);
}

/* The four files' bytes from a summary, in memory. */
static void render(kw_sbuf out[4], const kw_runsum *rs)
{
    int (*fn[4])(kw_sbuf *, const kw_runsum *) = {kw_results_xml, kw_results_ranked_csv,
                                                   kw_results_audit_csv,
                                                   kw_results_portability_csv};
    for (int i = 0; i < 4; i++) {
        memset(&out[i], 0, sizeof out[i]);
        cr_assert_eq(fn[i](&out[i], rs), 0, "%s", kw_error_last());
    }
}

/* A finished run's journal written again into a second folder a piece at a
 * time, as a writer appends it (pieces of 1 to 4,000 bytes, so lines are
 * cut anywhere): after every piece that ends a line, the live summary (fed
 * each piece as it came) renders the files the journal file's summary
 * renders; a line cut short is read once its end arrives; a line whose
 * checksum is wrong fails the live summary, then and later. */
Test(run, the_live_summary_equals_the_journals_at_every_line_as_it_grows)
{
    char *d = kw_tl_tmpdir("kwlive");
    cr_assert_not_null(d);
    char space[4200], src[4300], dst[4300], jp[4400];
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    snprintf(src, sizeof src, "%s/run", d);
    snprintf(dst, sizeof dst, "%s/copy", d);
    kw_run_opts o = {.space = space, .out = src, .metric = "p95_us", .seed = 7, .threads = 1,
                     .tabu = 3, .probes = 8};
    kw_run *r = NULL;
    cr_assert_eq(kw_run_create(&r, NULL, &o, NULL), 0, "%s", kw_error_last());
    kw_run_ctl ctl = {0};
    kw_run_outcome out;
    cr_assert_eq(kw_run_exec(r, &out, &ctl), 0, "%s", kw_error_last());
    cr_assert_eq(out.live_results, 1);
    kw_run_free(r);
    snprintf(jp, sizeof jp, "%s/journal", src);
    size_t n = 0;
    char *j = kw_tl_slurp_n(jp, &n);
    cr_assert(j && n > 0);
    cr_assert_eq(mkdir(dst, 0755), 0);
    snprintf(jp, sizeof jp, "%s/journal", dst);
    FILE *f = fopen(jp, "wb");
    cr_assert_not_null(f);
    /* the header and the first body record, so the follower has a journal */
    size_t off = 0, lines = 0;
    while (off < n && lines < 2)
        lines += j[off++] == '\n' && off < n && strchr("HAIKCMS", j[off]) == NULL;
    cr_assert_eq(fwrite(j, 1, off, f), off);
    fflush(f);
    kw_runsum_live *lv = NULL;
    cr_assert_eq(kw_results_live_new(&lv, dst), 0, "%s", kw_error_last());
    unsigned seed = 11;
    int compared = 0, cut = 0;
    while (off < n) {
        seed = seed * 1103515245u + 12345u;
        size_t k = 1 + (seed >> 8) % 4000;
        if (k > n - off)
            k = n - off;
        if ((seed >> 4) % 3 == 0) /* this piece ends a line */
            while (off + k < n && j[off + k - 1] != '\n')
                k++;
        cr_assert_eq(fwrite(j + off, 1, k, f), k);
        fflush(f);
        off += k;
        cut += j[off - 1] != '\n';
        cr_assert_eq(kw_runsum_live_update(lv), 0, "%s", kw_error_last());
        if (j[off - 1] != '\n')
            continue;
        compared++;
        kw_runsum *a = NULL, *b = NULL;
        cr_assert_eq(kw_results_summary_live(&a, lv, NULL, NULL, "p95_us"), 0, "%s",
                     kw_error_last());
        cr_assert_eq(kw_results_summary(&b, dst, NULL, NULL, "p95_us"), 0, "%s", kw_error_last());
        kw_sbuf fa[4], fb[4];
        render(fa, a);
        render(fb, b);
        for (int i = 0; i < 4; i++) {
            cr_assert(fa[i].len == fb[i].len && memcmp(fa[i].data, fb[i].data, fa[i].len) == 0,
                      "%s at byte %zu of the journal: live %zu bytes, from the file %zu",
                      kw_files[i], off, fa[i].len, fb[i].len);
            kw_sbuf_free(&fa[i]);
            kw_sbuf_free(&fb[i]);
        }
        kw_runsum_free(a);
        kw_runsum_free(b);
    }
    cr_assert_gt(compared, 20, "too few comparisons: %d", compared);
    cr_assert_gt(cut, 20, "too few lines cut: %d", cut);
    /* a record that is not the writer's: refused, and the follower stays refused */
    fputs("Q why=interrupted crc=00000000\n", f);
    fflush(f);
    cr_assert_eq(kw_runsum_live_update(lv), KW_ECORRUPT);
    cr_assert(strstr(kw_error_last(), "checksum mismatch"), "%s", kw_error_last());
    kw_runsum *a = NULL;
    cr_assert_neq(kw_results_summary_live(&a, lv, NULL, NULL, NULL), 0);
    cr_assert_null(a);
    fclose(f);
    kw_runsum_live_free(lv);
    free(j);
    kw_tl_rmrf(d);
}
