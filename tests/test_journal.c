/* test_journal.c - the journal format: CRC-32 against its published check
 * value, exact round trips of strings and doubles, torn last records, middle
 * corruption with the record number, the semantic check `verify` relies on
 * (planted two-knob step, planted metric), shape results and the replay writer. */
#include <criterion/criterion.h>
#include <float.h>
#include <gsl/gsl_errno.h>
#include <sys/stat.h>

#include "kw_input.h"
#include "kw_synth.h"
#include "lib/kw_tl.h"

static void suite_init(void) { gsl_set_error_handler_off(); }
TestSuite(journal, .init = suite_init);

Test(journal, crc32_check_value_and_chaining)
{
    /* CRC-32/ISO-HDLC check value (the catalogue's "123456789" -> 0xCBF43926) */
    cr_assert_eq(kw_crc_32(0, "123456789", 9), 0xCBF43926u);
    cr_assert_eq(kw_crc_32(0, "", 0), 0u);
    cr_assert_eq(kw_crc_32(kw_crc_32(0, "1234", 4), "56789", 5), 0xCBF43926u);
}

/* An evaluator whose metrics are awkward doubles and whose guards and class
 * hold every character the format escapes. */
static const char *const odd_metrics[] = {"p95_us", "third", "tiny", "denormal", "negzero",
                                          "nan", "inf", "big", "sum"};
static const char *const odd_shapes[] = {"prefill 512,b=4 %x#"};

static int odd_eval(void *ctx, const kw_cand *c, int shape, int rep, kw_metrics *out)
{
    (void)ctx;
    (void)shape;
    (void)rep;
    double v[] = {100.0 - c->v[0] - 2.0 * c->v[1], 1.0 / 3.0, 1e-300, 5e-324, -0.0, NAN,
                  INFINITY, DBL_MAX, 0.1 + 0.2};
    memcpy(out->v, v, sizeof v);
    if (c->v[1] == 2)
        snprintf(out->guards, sizeof out->guards, "drift rel_rms=0.02, 100%% #1;sla");
    snprintf(out->klass, sizeof out->klass, "mem\tbound é");
    return 0;
}

static void odd_space(kw_knobspace *ks)
{
    memset(ks, 0, sizeof *ks);
    ks->n_knobs = 2;
    snprintf(ks->knobs[0].name, KW_NAME_MAX, "gemm.tile m=");
    snprintf(ks->knobs[1].name, KW_NAME_MAX, "fuse,attention");
    ks->knobs[0].n_values = 3;
    ks->knobs[1].n_values = 3;
    const char *v0[] = {"a b", "c,d", "e%f"};
    const char *v1[] = {"none", "qk=softmax", "flash#2"};
    for (int i = 0; i < 3; i++) {
        snprintf(ks->knobs[0].values[i], KW_VALUE_LEN, "%s", v0[i]);
        snprintf(ks->knobs[1].values[i], KW_VALUE_LEN, "%s", v1[i]);
    }
}

static void make_journal(const char *path, kw_knobspace *ks, kw_evaluator *ev)
{
    odd_space(ks);
    memset(ev, 0, sizeof *ev);
    ev->n_metrics = 9;
    ev->metric_names = odd_metrics;
    ev->n_shapes = 1;
    ev->shape_names = odd_shapes;
    ev->eval = odd_eval;
    kw_engine_opts o;
    kw_engine_opts_init(&o);
    kw_run_info in = kw_synth_info(path);
    cr_assert_eq(kw_engine_run(NULL, ks, ev, &o, &in), 0, "%s", kw_error_last());
}

Test(journal, strings_and_doubles_round_trip_exactly)
{
    char dir[64], jp[96];
    kw_synth_tmp(dir, sizeof dir, jp, sizeof jp);
    kw_knobspace ks;
    kw_evaluator ev;
    make_journal(jp, &ks, &ev);
    kw_journal *j;
    cr_assert_eq(kw_journal_load(&j, jp), 0, "%s", kw_error_last());
    cr_assert(j->complete);
    cr_assert_not(j->torn);
    cr_assert_str_eq(j->h.shape_names[0], odd_shapes[0]);
    cr_assert_str_eq(j->h.space.knobs[0].name, "gemm.tile m=");
    cr_assert_str_eq(j->h.space.knobs[0].values[1], "c,d");
    cr_assert_str_eq(j->h.space.knobs[1].values[2], "flash#2");
    cr_assert_str_eq(kw_journal_attr(j, "owner"), "test owner");
    cr_assert_str_eq(j->h.inputs[1].hash, "fedcba9876543210");
    cr_assert_eq(j->h.primary, 0);
    cr_assert_gt(j->n_evals, 0);
    int guarded = 0;
    for (size_t i = 0; i < j->n_evals; i++) {
        const kw_jeval *e = &j->evals[i];
        kw_metrics m;
        memset(&m, 0, sizeof m);
        odd_eval(NULL, &e->cand, 0, 0, &m);
        for (int k = 0; k < 9; k++) {
            if (isnan(m.v[k]))
                cr_assert(isnan(e->m[k]));
            else
                cr_assert(memcmp(&m.v[k], &e->m[k], sizeof(double)) == 0, "metric %d: %.17g vs %.17g",
                          k, m.v[k], e->m[k]);
        }
        cr_assert_str_eq(e->guards, m.guards);
        cr_assert_str_eq(e->klass, "mem\tbound é");
        guarded += e->guards[0] != 0;
        cr_assert_eq(e->id, kw_knobs_cand_id(&ks, &e->cand));
    }
    cr_assert_gt(guarded, 0);
    cr_assert_eq(kw_journal_check(j), 0, "%s", kw_error_last());
    /* every line is printable ASCII: the format escapes the rest */
    long len;
    char *b = kw_synth_slurp(jp, &len);
    for (long i = 0; i < len; i++)
        cr_assert(b[i] == '\n' || (b[i] >= 0x20 && b[i] < 0x7f), "byte %ld = %d", i, b[i]);
    free(b);
    kw_journal_free(j);
    kw_synth_rmdir(dir);
}

/* A real journal from the synthetic evaluator. */
static char *synth_journal(char *dir, char *jp, long *len, int *lines)
{
    kw_synth s;
    kw_synth_random(&s, 4, 2);
    kw_engine_opts o;
    kw_engine_opts_init(&o);
    kw_synth_tmp(dir, 64, jp, 96);
    kw_run_info in = kw_synth_info(jp);
    cr_assert_eq(kw_engine_run(NULL, &s.ks, &s.ev, &o, &in), 0);
    char *b = kw_synth_slurp(jp, len);
    *lines = 0;
    for (long i = 0; i < *len; i++)
        *lines += b[i] == '\n';
    return b;
}

static long line_start(const char *b, long len, int line /* 1-based */)
{
    int n = 1;
    for (long i = 0; i < len; i++) {
        if (n == line)
            return i;
        if (b[i] == '\n')
            n++;
    }
    return len;
}

Test(journal, torn_last_record_is_left_out_and_reported)
{
    char dir[64], jp[96];
    long len;
    int lines;
    char *b = synth_journal(dir, jp, &len, &lines);
    long last = line_start(b, len, lines);
    /* cut in the middle of the last record */
    cr_assert_eq(kw_synth_spit(jp, b, last + 10), 0);
    kw_journal *j;
    cr_assert_eq(kw_journal_load(&j, jp), 0, "%s", kw_error_last());
    cr_assert(j->torn);
    cr_assert_eq(j->n_records, lines - 1);
    cr_assert_eq(j->good_bytes, last);
    cr_assert_eq(j->file_bytes, last + 10);
    cr_assert(strstr(j->torn_msg, "torn record"), "%s", j->torn_msg);
    char want[32];
    snprintf(want, sizeof want, "record %d", lines);
    cr_assert(strstr(j->torn_msg, want), "%s", j->torn_msg);
    cr_assert_not(j->complete);
    kw_journal_free(j);
    /* the file itself is not touched by reading */
    long l2;
    char *b2 = kw_synth_slurp(jp, &l2);
    cr_assert_eq(l2, last + 10);
    free(b2);
    /* a complete last line with a damaged byte is torn too */
    b[last + 4] ^= 1;
    cr_assert_eq(kw_synth_spit(jp, b, len), 0);
    cr_assert_eq(kw_journal_load(&j, jp), 0);
    cr_assert(j->torn);
    cr_assert(strstr(j->torn_msg, "checksum mismatch"));
    kw_journal_free(j);
    b[last + 4] ^= 1;
    /* and the truncation helper drops exactly the tail */
    cr_assert_eq(kw_synth_spit(jp, b, last + 10), 0);
    cr_assert_eq(kw_journal_truncate(jp, last, NULL), 0);
    cr_assert_eq(kw_journal_load(&j, jp), 0);
    cr_assert_not(j->torn);
    kw_journal_free(j);
    free(b);
    kw_synth_rmdir(dir);
}

/* A resume appends to the journal it read, not to a file put at its path
 * since (renamed over it): the writer and truncate, handed the journal as
 * read, refuse the other file (KW_EINPUT, naming the path) and leave it as
 * it is; the file read, back in place, opens as before. Nor do they write a
 * journal that has another name (a hard link: that file would change too).
 * On main's search/ nothing compared the file (the writer took any regular
 * file there). */
Test(journal, a_journal_swapped_after_it_was_read_is_not_written)
{
    char dir[64], jp[96], other[128], keep[128];
    long len;
    int lines;
    char *b = synth_journal(dir, jp, &len, &lines);
    kw_journal *j;
    cr_assert_eq(kw_journal_load(&j, jp), 0, "%s", kw_error_last());
    snprintf(other, sizeof other, "%s/other", dir);
    snprintf(keep, sizeof keep, "%s/kept", dir);
    cr_assert_eq(kw_synth_spit(other, b, len), 0); /* the same bytes, another file */
    cr_assert_eq(rename(jp, keep), 0);
    cr_assert_eq(rename(other, jp), 0);
    uint32_t crcs[1] = {0};
    kw_jwriter *w = NULL;
    cr_assert_eq(kw_journal_writer_open(&w, jp, j, crcs, 1, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "the journal was replaced after it was read") &&
              strstr(kw_error_last(), jp), "%s", kw_error_last());
    cr_assert_null(w);
    cr_assert_eq(kw_journal_truncate(jp, 10, j), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "replaced"), "%s", kw_error_last());
    long n;
    char *now = kw_synth_slurp(jp, &n);
    cr_assert(n == len && memcmp(now, b, (size_t)len) == 0, "the other file was changed");
    free(now);
    /* the file read, back at its path */
    cr_assert_eq(rename(keep, jp), 0);
    cr_assert_eq(kw_journal_writer_open(&w, jp, j, crcs, 1, 1), 0, "%s", kw_error_last());
    kw_journal_writer_free(w);
    cr_assert_eq(kw_journal_truncate(jp, len, j), 0, "%s", kw_error_last());
    /* nor through a journal with another name (a hard link) */
    cr_assert_eq(link(jp, other), 0);
    cr_assert_eq(kw_journal_writer_open(&w, jp, j, crcs, 1, 1), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "other names (2 hard links)"), "%s", kw_error_last());
    cr_assert_eq(kw_journal_truncate(jp, 10, NULL), KW_EINPUT);
    now = kw_synth_slurp(jp, &n);
    cr_assert_eq(n, len, "truncated through a hard link");
    free(now);
    unlink(other);
    kw_journal_free(j);
    free(b);
    kw_synth_rmdir(dir);
}

Test(journal, corruption_in_the_middle_is_refused_with_the_record_number)
{
    char dir[64], jp[96];
    long len;
    int lines;
    char *b = synth_journal(dir, jp, &len, &lines);
    cr_assert_gt(lines, 20);
    kw_journal *j = NULL;
    /* a flipped byte in record 15 */
    long at = line_start(b, len, 15);
    b[at + 5] ^= 0x04;
    cr_assert_eq(kw_synth_spit(jp, b, len), 0);
    cr_assert_eq(kw_journal_load(&j, jp), KW_ECORRUPT);
    cr_assert(strstr(kw_error_last(), "record 15:"), "%s", kw_error_last());
    cr_assert_null(j);
    b[at + 5] ^= 0x04;
    /* a deleted record: the chained checksum of the next one fails */
    long end = line_start(b, len, 16);
    char *cut = malloc((size_t)len);
    memcpy(cut, b, (size_t)at);
    memcpy(cut + at, b + end, (size_t)(len - end));
    cr_assert_eq(kw_synth_spit(jp, cut, len - (end - at)), 0);
    cr_assert_eq(kw_journal_load(&j, jp), KW_ECORRUPT);
    cr_assert(strstr(kw_error_last(), "record 15:"), "%s", kw_error_last());
    free(cut);
    /* garbage after the header */
    at = line_start(b, len, 3);
    b[at] = 'X';
    cr_assert_eq(kw_synth_spit(jp, b, len), 0);
    cr_assert_eq(kw_journal_load(&j, jp), KW_ECORRUPT);
    cr_assert(strstr(kw_error_last(), "record 3:"), "%s", kw_error_last());
    free(b);
    kw_synth_rmdir(dir);
}

/* ---- the streaming reader (kw_journal_scan) against the loader ---- */

/* Checks every record kw_journal_scan hands over against the loaded journal's
 * arrays, in order. */
typedef struct scan_cmp {
    const kw_journal *full;
    size_t e, t, v, d;
    long records, last_record;
    int bad;
    char why[160];
} scan_cmp;

static int scan_cmp_fn(void *ctx, const kw_journal *j, const kw_jrec *r)
{
    scan_cmp *c = ctx;
    const kw_journal *f = c->full;
    c->records++;
    if (r->record <= c->last_record || j->h.n_metrics != f->h.n_metrics)
        c->bad = 1;
    c->last_record = r->record;
    switch (r->type) {
    case 'E': {
        const kw_jeval *a = &r->e, *b = c->e < f->n_evals ? &f->evals[c->e] : NULL;
        c->e++;
        if (!b || a->record != b->record || a->shape != b->shape || a->id != b->id ||
            a->rep != b->rep || memcmp(&a->cand, &b->cand, sizeof a->cand) != 0 ||
            a->rc != b->rc || memcmp(a->m, b->m, sizeof(double) * (size_t)f->h.n_metrics) != 0 ||
            strcmp(a->guards, b->guards) != 0 || strcmp(a->klass, b->klass) != 0)
            c->bad = 1;
        break;
    }
    case 'T': {
        const kw_jstep *a = &r->t, *b = c->t < f->n_steps ? &f->steps[c->t] : NULL;
        c->t++;
        if (!b || a->record != b->record || a->shape != b->shape || a->step != b->step ||
            a->phase != b->phase || a->decision != b->decision || a->id != b->id ||
            a->parent_id != b->parent_id || memcmp(&a->cand, &b->cand, sizeof a->cand) != 0 ||
            memcmp(&a->parent, &b->parent, sizeof a->parent) != 0 || a->knob != b->knob ||
            memcmp(&a->before, &b->before, sizeof a->before) != 0 ||
            memcmp(&a->p_value, &b->p_value, sizeof a->p_value) != 0 ||
            a->n_before != b->n_before || a->n_after != b->n_after ||
            strcmp(a->guards, b->guards) != 0 || strcmp(a->constraint, b->constraint) != 0 ||
            strcmp(a->reason, b->reason) != 0)
            c->bad = 1;
        break;
    }
    case 'V': {
        const kw_jviol *a = &r->v, *b = c->v < f->n_viols ? &f->viols[c->v] : NULL;
        c->v++;
        if (!b || a->record != b->record || a->id != b->id ||
            strcmp(a->constraint, b->constraint) != 0 || strcmp(a->why, b->why) != 0)
            c->bad = 1;
        break;
    }
    case 'D': {
        const kw_jdone *a = &r->d, *b = c->d < f->n_done ? &f->done[c->d] : NULL;
        c->d++;
        if (!b || a->record != b->record || a->best_id != b->best_id ||
            strcmp(a->why, b->why) != 0 || a->evals != b->evals || a->steps != b->steps)
            c->bad = 1;
        break;
    }
    case 'Q':
    case 'Z':
        break;
    default:
        c->bad = 1;
    }
    if (c->bad && !c->why[0])
        snprintf(c->why, sizeof c->why, "record %ld ('%c') differs from the loaded one",
                 r->record, r->type);
    return 0;
}

static void scan_matches_load(const char *jp)
{
    kw_journal *full = NULL, *hj = NULL;
    cr_assert_eq(kw_journal_load(&full, jp), 0, "%s", kw_error_last());
    scan_cmp c = {.full = full};
    cr_assert_eq(kw_journal_scan(&hj, jp, scan_cmp_fn, &c), 0, "%s", kw_error_last());
    cr_assert_not(c.bad, "%s", c.why);
    cr_assert_eq(c.e, full->n_evals);
    cr_assert_eq(c.t, full->n_steps);
    cr_assert_eq(c.v, full->n_viols);
    cr_assert_eq(c.d, full->n_done);
    /* the header and the counters, but no record arrays */
    cr_assert_eq(memcmp(&hj->h, &full->h, sizeof hj->h), 0);
    cr_assert_eq(hj->n_records, full->n_records);
    cr_assert_eq(hj->good_bytes, full->good_bytes);
    cr_assert_eq(hj->last_start, full->last_start);
    cr_assert_eq(hj->file_bytes, full->file_bytes);
    cr_assert_eq(hj->complete, full->complete);
    cr_assert_str_eq(hj->paused, full->paused);
    cr_assert_eq(hj->torn, full->torn);
    cr_assert_str_eq(hj->torn_msg, full->torn_msg);
    cr_assert_eq(hj->n_evals, 0);
    cr_assert_null(hj->evals);
    kw_journal_free(hj);
    kw_journal_free(full);
}

static int scan_count_fn(void *ctx, const kw_journal *j, const kw_jrec *r)
{
    (void)j;
    (void)r;
    (*(long *)ctx)++;
    return 0;
}

static int scan_stop_fn(void *ctx, const kw_journal *j, const kw_jrec *r)
{
    (void)j;
    (void)r;
    return ++*(long *)ctx == 3 ? kw_error_set(KW_ESTATE, "stop") : 0;
}

Test(journal, scan_gives_the_records_of_load_and_the_same_refusals)
{
    char dir[64], jp[96];
    kw_knobspace ks;
    kw_evaluator ev;
    kw_synth_tmp(dir, sizeof dir, jp, sizeof jp);
    /* every escaped character, NaN, infinities and denormals */
    make_journal(jp, &ks, &ev);
    scan_matches_load(jp);
    kw_synth_rmdir(dir);

    long len;
    int lines;
    char *b = synth_journal(dir, jp, &len, &lines);
    cr_assert_gt(lines, 20);
    scan_matches_load(jp);
    /* a torn last record: left out and reported exactly as the loader does */
    long last = line_start(b, len, lines);
    cr_assert_eq(kw_synth_spit(jp, b, last + 10), 0);
    scan_matches_load(jp);
    kw_journal *j = NULL;
    long n = 0;
    cr_assert_eq(kw_journal_scan(&j, jp, scan_count_fn, &n), 0, "%s", kw_error_last());
    cr_assert(j->torn);
    cr_assert_eq(j->n_records, lines - 1);
    char want[32];
    snprintf(want, sizeof want, "record %d", lines);
    cr_assert(strstr(j->torn_msg, want), "%s", j->torn_msg);
    kw_journal_free(j);
    /* a damaged byte in a complete last line */
    b[last + 4] ^= 1;
    cr_assert_eq(kw_synth_spit(jp, b, len), 0);
    scan_matches_load(jp);
    b[last + 4] ^= 1;
    /* corruption in the middle: refused with the record number, no journal */
    long at = line_start(b, len, 15);
    b[at + 5] ^= 0x04;
    cr_assert_eq(kw_synth_spit(jp, b, len), 0);
    j = NULL;
    n = 0;
    cr_assert_eq(kw_journal_scan(&j, jp, scan_count_fn, &n), KW_ECORRUPT);
    cr_assert(strstr(kw_error_last(), "record 15:"), "%s", kw_error_last());
    cr_assert(strstr(kw_error_last(), "middle"), "%s", kw_error_last());
    cr_assert_null(j);
    b[at + 5] ^= 0x04;
    /* a deleted record: the chained checksum of the next one fails */
    long end = line_start(b, len, 16);
    char *cut = malloc((size_t)len);
    memcpy(cut, b, (size_t)at);
    memcpy(cut + at, b + end, (size_t)(len - end));
    cr_assert_eq(kw_synth_spit(jp, cut, len - (end - at)), 0);
    cr_assert_eq(kw_journal_scan(&j, jp, scan_count_fn, &n), KW_ECORRUPT);
    cr_assert(strstr(kw_error_last(), "record 15:"), "%s", kw_error_last());
    free(cut);
    /* a callback's error stops the scan and is returned */
    cr_assert_eq(kw_synth_spit(jp, b, len), 0);
    n = 0;
    cr_assert_eq(kw_journal_scan(&j, jp, scan_stop_fn, &n), KW_ESTATE);
    cr_assert_eq(n, 3);
    cr_assert_null(j);
    free(b);
    kw_synth_rmdir(dir);
}

/* The (type, record) of every E, T, V and D record handed over, in order. */
typedef struct rec_trace {
    char type[4096];
    long record[4096];
    int n;
} rec_trace;

static int rec_trace_fn(void *ctx, const kw_journal *j, const kw_jrec *r)
{
    (void)j;
    rec_trace *t = ctx;
    if (strchr("ETVD", r->type) && t->n < 4096) {
        t->type[t->n] = r->type;
        t->record[t->n++] = r->record;
    }
    return 0;
}

/* kw_journal_each walks a loaded journal's records in the file's order: the
 * sequence kw_journal_scan reads from the file, each record as loaded (the
 * scan comparison above), and a callback's error stops it. */
Test(journal, each_walks_the_loaded_records_in_file_order)
{
    char dir[64], jp[96];
    long len;
    int lines;
    char *b = synth_journal(dir, jp, &len, &lines);
    kw_journal *full = NULL, *hj = NULL;
    cr_assert_eq(kw_journal_load(&full, jp), 0, "%s", kw_error_last());
    cr_assert(full->n_evals > 0 && full->n_steps > 0 && full->n_done > 0);
    static rec_trace a, w;
    memset(&a, 0, sizeof a);
    memset(&w, 0, sizeof w);
    cr_assert_eq(kw_journal_scan(&hj, jp, rec_trace_fn, &a), 0, "%s", kw_error_last());
    cr_assert_eq(kw_journal_each(full, rec_trace_fn, &w), 0);
    cr_assert_lt(a.n, 4096, "the trace holds the whole journal");
    cr_assert_eq(w.n, (int)(full->n_evals + full->n_steps + full->n_viols + full->n_done));
    cr_assert_eq(w.n, a.n);
    cr_assert_eq(memcmp(w.type, a.type, (size_t)a.n), 0);
    cr_assert_eq(memcmp(w.record, a.record, (size_t)a.n * sizeof *a.record), 0);
    scan_cmp c = {.full = full};
    cr_assert_eq(kw_journal_each(full, scan_cmp_fn, &c), 0);
    cr_assert_not(c.bad, "%s", c.why);
    long n = 0;
    cr_assert_eq(kw_journal_each(full, scan_stop_fn, &n), KW_ESTATE);
    cr_assert_eq(n, 3);
    kw_journal_free(hj);
    kw_journal_free(full);
    free(b);
    kw_synth_rmdir(dir);
}

Test(journal, load_errors)
{
    kw_journal *j = NULL;
    cr_assert_eq(kw_journal_load(&j, "/nonexistent/journal"), KW_EINPUT);
    char dir[64], jp[96];
    kw_synth_tmp(dir, sizeof dir, jp, sizeof jp);
    /* empty: killed before the first byte; nothing to read (exit 2, not damage) */
    cr_assert_eq(kw_synth_spit(jp, "", 0), 0);
    cr_assert_eq(kw_journal_load(&j, jp), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "nothing was run; start again"), "%s", kw_error_last());
    /* a first record cut short (killed while writing it): nothing evaluated,
     * as for a header cut later, exit 2 (it was "no journal record", exit 1);
     * cut after one byte too; resume's load keeps it (header_incomplete) */
    static const char *const cuts[] = {"H format=1", "H"};
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(kw_synth_spit(jp, cuts[i], (long)strlen(cuts[i])), 0);
        cr_assert_eq(kw_journal_load(&j, jp), KW_EINPUT);
        cr_assert(strstr(kw_error_last(), "stopped while writing its journal's header (its first "
                         "record is torn)"), "%s", kw_error_last());
        cr_assert_eq(kw_journal_load_ex(&j, jp, 1), KW_EINPUT);
        cr_assert_eq(kw_journal_load_ex(&j, jp, 2), 0, "%s", kw_error_last());
        cr_assert(j->header_incomplete && j->torn && j->n_records == 0);
        kw_journal_free(j);
        j = NULL;
    }
    /* another file, one line whole or cut or many lines, is not a journal:
     * bad input naming its first line (exit 2; was KW_ECORRUPT, exit 1, and
     * many lines read as "corruption in the middle") */
    static const char *const other[] = {"shape,id\n", "shape,id", "Hello", "a,b\n1,2\n3,4\n"};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(kw_synth_spit(jp, other[i], (long)strlen(other[i])), 0);
        cr_assert_eq(kw_journal_load_ex(&j, jp, 2), KW_EINPUT, "%s", other[i]);
        cr_assert(strstr(kw_error_last(), "/journal:1: "), "%s", kw_error_last());
        cr_assert(strstr(kw_error_last(), "not a knobwise journal"), "%s", kw_error_last());
    }
    /* a well-checksummed file that does not start with a header */
    cr_assert_eq(kw_synth_spit(jp, "Z why=complete crc=00000000\n", 28), 0);
    cr_assert_eq(kw_journal_reseal(jp), 0);
    cr_assert_eq(kw_journal_load(&j, jp), KW_ECORRUPT);
    cr_assert(strstr(kw_error_last(), "no header"), "%s", kw_error_last());
    kw_synth_rmdir(dir);
}

/* kw_journal_load_header reads the header records and stops at the first
 * body record: what follows is neither read nor judged, so a journal whose
 * body is damaged (which a load refuses) gives its header, and good_bytes
 * ends where the body begins; a file that ends inside its header loads as
 * kw_journal_load_ex(..., 2) does. kw_run_discard read the whole journal
 * for this (kw_journal_load_ex) until 2026-12-07. */
Test(journal, load_header_reads_the_header_and_stops_at_the_body)
{
    char dir[64], jp[96];
    long len;
    int lines;
    char *b = synth_journal(dir, jp, &len, &lines);
    kw_journal *full = NULL, *h = NULL;
    cr_assert_eq(kw_journal_load(&full, jp), 0, "%s", kw_error_last());
    int nh = 0; /* header records: they lead the file */
    while (nh < lines && strchr("HAIKCMS", b[line_start(b, len, nh + 1)]))
        nh++;
    cr_assert(nh > 1 && nh + 20 < lines, "%d header records of %d", nh, lines);
    long body = line_start(b, len, nh + 1);
    /* every body record after the first damaged: a load refuses it */
    for (int l = nh + 2; l <= lines; l++)
        b[line_start(b, len, l)] ^= 0x04;
    cr_assert_eq(kw_synth_spit(jp, b, len), 0);
    kw_journal *j = NULL;
    cr_assert_eq(kw_journal_load_ex(&j, jp, 2), KW_ECORRUPT);
    cr_assert_null(j);
    cr_assert_eq(kw_journal_load_header(&h, jp), 0, "%s", kw_error_last());
    cr_assert_eq(h->n_records, nh);
    cr_assert_eq(h->good_bytes, body);
    cr_assert_eq(h->file_bytes, len);
    cr_assert(h->n_evals == 0 && h->n_steps == 0 && !h->torn && !h->header_incomplete);
    cr_assert_eq(h->h.format, full->h.format);
    cr_assert_eq(h->h.n_shapes, full->h.n_shapes);
    cr_assert_eq(h->h.n_attrs, full->h.n_attrs);
    for (int i = 0; i < full->h.n_attrs; i++) {
        cr_assert_str_eq(h->h.attrs[i].key, full->h.attrs[i].key);
        cr_assert_str_eq(h->h.attrs[i].value, full->h.attrs[i].value);
    }
    kw_journal_free(h);
    h = NULL;
    /* cut inside the header (after two whole records), and inside its first record */
    cr_assert_eq(kw_synth_spit(jp, b, line_start(b, len, 3) + 4), 0);
    cr_assert_eq(kw_journal_load_header(&h, jp), 0, "%s", kw_error_last());
    cr_assert(h->header_incomplete && h->n_records == 2);
    kw_journal_free(h);
    h = NULL;
    cr_assert_eq(kw_synth_spit(jp, b, 9), 0);
    cr_assert_eq(kw_journal_load_header(&h, jp), 0, "%s", kw_error_last());
    cr_assert(h->header_incomplete && h->n_records == 0);
    kw_journal_free(h);
    h = NULL;
    /* empty, or not a journal: refused as a load refuses them */
    cr_assert_eq(kw_synth_spit(jp, "", 0), 0);
    cr_assert_eq(kw_journal_load_header(&h, jp), KW_EINPUT);
    cr_assert_eq(kw_synth_spit(jp, "a,b\n1,2\n", 8), 0);
    cr_assert_eq(kw_journal_load_header(&h, jp), KW_EINPUT);
    cr_assert_null(h);
    kw_journal_free(full);
    free(b);
    kw_synth_rmdir(dir);
}

/* kw_journal_reseal opens the journal as the reader does (kw_journal_open_file):
 * it used plain fopen, so a journal that was a symbolic link had its target
 * outside the folder rewritten, and a FIFO blocked fopen forever. Both are
 * refused now, the link's target byte for byte as it was. */
Test(journal, reseal_never_follows_a_link_nor_waits_on_a_fifo)
{
    KW_TL_HANG_GUARD(20);
    char dir[64], jp[96], outside[128], fifo[128];
    kw_synth_tmp(dir, sizeof dir, jp, sizeof jp);
    snprintf(outside, sizeof outside, "%s.outside", dir);
    const char body[] = "H format=1 crc=00000000\n";
    cr_assert_eq(kw_synth_spit(outside, body, (long)sizeof body - 1), 0);
    cr_assert_eq(symlink(outside, jp), 0);
    cr_assert_eq(kw_journal_reseal(jp), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "symbolic link"), "%s", kw_error_last());
    long n;
    char *kept = kw_synth_slurp(outside, &n);
    cr_assert_str_eq(kept, body, "the file outside the run folder was rewritten");
    free(kept);
    cr_assert_eq(kw_journal_load(&(kw_journal *){NULL}, jp), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "the journal is a symbolic link"), "%s", kw_error_last());
    /* the open behind it is kw_runfile_open's (kw_input_open_as, KW_INPUT_NOFOLLOW):
     * the link refused, followed without the option; read-write opens for reseal */
    int fd;
    uint64_t bytes;
    char why[KW_INPUT_WHY_MAX];
    cr_assert_eq(kw_input_open_as(&fd, &bytes, jp, 0, KW_INPUT_NOFOLLOW, why, sizeof why),
                 KW_EINPUT);
    cr_assert(fd == -1 && strstr(why, "symbolic link"), "%s", why);
    cr_assert_eq(kw_input_open_as(&fd, &bytes, jp, 0, 0, why, sizeof why), 0, "%s", why);
    cr_assert_eq(bytes, sizeof body - 1);
    close(fd);
    cr_assert_eq(kw_input_open_as(&fd, &bytes, outside, 0, KW_INPUT_NOFOLLOW | KW_INPUT_RDWR, why,
                                  sizeof why), 0, "%s", why);
    cr_assert_eq(write(fd, "H", 1), 1, "not opened for writing");
    close(fd);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(kw_journal_reseal(fifo), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "not a regular file"), "%s", kw_error_last());
    unlink(outside);
    kw_synth_rmdir(dir);
}

/* Replace the first line starting with `prefix` by applying edit() to it. */
static char *edit_line(const char *b, long len, const char *prefix, int nth,
                       void (*edit)(char *line), long *out_len)
{
    char *o = malloc((size_t)len + 256);
    long w = 0;
    int seen = 0;
    for (long i = 0; i < len;) {
        const char *nl = memchr(b + i, '\n', (size_t)(len - i));
        long n = nl ? nl - (b + i) + 1 : len - i;
        char line[8192];
        memcpy(line, b + i, (size_t)n);
        line[n] = '\0';
        if (strncmp(line, prefix, strlen(prefix)) == 0 && seen++ == nth)
            edit(line);
        memcpy(o + w, line, strlen(line));
        w += (long)strlen(line);
        i += n;
    }
    *out_len = w;
    return o;
}

/* Plant a second knob change into an accepted step (c= list, first value). */
static void plant_two_knobs(char *line)
{
    char *c = strstr(line, " c=");
    cr_assert_not_null(c);
    /* the step's knob is one position; flip the value of knob 0 or 1, whichever the step did not change */
    char *knob = strstr(line, " knob=k");
    int k = knob[7] - '0';
    int target = k == 0 ? 1 : 0;
    char *p = c + 3;
    for (int i = 0; i < target; i++)
        p = strchr(p, '.') + 1;
    *p = *p == '0' ? '1' : '0';
}

/* Change the first digit of the primary metric (p95_us, the second value). */
static void plant_metric(char *line)
{
    char *m = strstr(line, " m=");
    cr_assert_not_null(m);
    char *p = strchr(m, ',') + 1;
    *p = *p == '9' ? '8' : '9';
}

Test(journal, check_catches_a_planted_two_knob_step_and_a_planted_metric)
{
    char dir[64], jp[96];
    long len;
    int lines;
    char *b = synth_journal(dir, jp, &len, &lines);
    kw_journal *j;
    cr_assert_eq(kw_journal_load(&j, jp), 0);
    cr_assert_eq(kw_journal_check(j), 0, "%s", kw_error_last());
    kw_journal_free(j);

    long l2;
    char *e = edit_line(b, len, "T s=0 step=1 ", 0, plant_two_knobs, &l2);
    cr_assert_eq(kw_synth_spit(jp, e, l2), 0);
    cr_assert_eq(kw_journal_load(&j, jp), KW_ECORRUPT, "an edit breaks the checksum");
    cr_assert_eq(kw_journal_reseal(jp), 0);
    cr_assert_eq(kw_journal_load(&j, jp), 0, "%s", kw_error_last());
    cr_assert_eq(kw_journal_check(j), KW_ECORRUPT);
    cr_assert(strstr(kw_error_last(), "step 1 changes 2 knobs"), "%s", kw_error_last());
    kw_journal_free(j);
    free(e);

    e = edit_line(b, len, "E s=0 ", 1, plant_metric, &l2);
    cr_assert_eq(kw_synth_spit(jp, e, l2), 0);
    cr_assert_eq(kw_journal_reseal(jp), 0);
    cr_assert_eq(kw_journal_load(&j, jp), 0);
    cr_assert_eq(kw_journal_check(j), KW_ECORRUPT);
    cr_assert(strstr(kw_error_last(), "follow"), "%s", kw_error_last());
    kw_journal_free(j);
    free(e);
    free(b);
    kw_synth_rmdir(dir);
}

Test(journal, shape_result_of_an_incomplete_run_is_the_best_so_far)
{
    char dir[64], jp[96];
    long len;
    int lines;
    char *b = synth_journal(dir, jp, &len, &lines);
    kw_journal *full;
    cr_assert_eq(kw_journal_load(&full, jp), 0);
    kw_jresult rf;
    cr_assert_eq(kw_journal_shape_result(&rf, full, 0), 0);
    cr_assert(rf.done);
    /* cut before the first shape-done record */
    const char *d = strstr(b, "\nD s=");
    cr_assert_not_null(d);
    cr_assert_eq(kw_synth_spit(jp, b, d - b + 1), 0);
    kw_journal *part;
    cr_assert_eq(kw_journal_load(&part, jp), 0);
    kw_jresult rp;
    cr_assert_eq(kw_journal_shape_result(&rp, part, 0), 0);
    cr_assert_not(rp.done);
    cr_assert_str_eq(rp.why, "incomplete");
    cr_assert_leq(rp.best_primary, rp.baseline_primary);
    cr_assert_geq(rp.best_primary, rf.best_primary - 1e-6);
    kw_jstats st;
    cr_assert_eq(kw_journal_stats(&st, part, 0, rp.best_id), 0);
    cr_assert(st.guards_ok);
    cr_assert_float_eq(st.mean, rp.best_primary, 0);
    /* changes of the full result: each made by a step on the path that set that value */
    for (int i = 0; i < rf.n_changes; i++) {
        cr_assert_neq(rf.changes[i].from_v, rf.changes[i].to_v);
        cr_assert_not_null(rf.changes[i].step);
        cr_assert_eq(rf.changes[i].step->knob, rf.changes[i].knob);
    }
    kw_journal_result_clear(&rf);
    kw_journal_result_clear(&rp);
    kw_jresult none; /* its own struct: a failed call must not be handed rp's path */
    cr_assert_eq(kw_journal_shape_result(&none, part, 99), KW_EINPUT);
    kw_journal_free(full);
    kw_journal_free(part);
    free(b);
    kw_synth_rmdir(dir);
}

Test(journal, writer_replay_detects_a_diverging_record)
{
    char dir[64], jp[96];
    kw_synth_tmp(dir, sizeof dir, jp, sizeof jp);
    kw_jwriter *w;
    cr_assert_eq(kw_journal_writer_open(&w, jp, NULL, NULL, 0, 1), 0);
    cr_assert_eq(kw_journal_writer_add(w, "Q why=a"), 0);
    cr_assert_eq(kw_journal_writer_add(w, "Q why=b"), 0);
    cr_assert_eq(kw_journal_writer_commit(w), 0);
    kw_journal_writer_free(w);
    uint32_t crcs[2];
    crcs[0] = kw_crc_32(kw_crc_32(0, "Q why=a", 7), "\n", 1);
    crcs[1] = kw_crc_32(kw_crc_32(crcs[0], "Q why=b", 7), "\n", 1);
    long len;
    char *b = kw_synth_slurp(jp, &len);
    char want[128];
    snprintf(want, sizeof want, "Q why=a crc=%08x\nQ why=b crc=%08x\n", crcs[0], crcs[1]);
    cr_assert_str_eq(b, want);
    free(b);
    cr_assert_eq(kw_journal_writer_open(&w, jp, NULL, crcs, 2, 1), 0);
    cr_assert(kw_journal_writer_replaying(w));
    cr_assert_eq(kw_journal_writer_add(w, "Q why=a"), 0);
    cr_assert_eq(kw_journal_writer_add(w, "Q why=c"), KW_ECORRUPT);
    cr_assert(strstr(kw_error_last(), "record 2"), "%s", kw_error_last());
    kw_journal_writer_free(w);
    kw_synth_rmdir(dir);
}

/* The writer of a resumed run and kw_journal_truncate open the journal as its
 * reader does (kw_journal_open_file: kw_input_open_as, no-follow): a FIFO put
 * at the journal is refused at once (the old open(O_WRONLY|O_NOFOLLOW) waited
 * for a reader for ever: this test timed out on the old binary), and so is a
 * folder (old: exit-1 "Is a directory" for the writer, I/O not input) and a
 * link (old: the writer said "it is a symbolic link", truncate KW_EIO). */
Test(journal, the_writer_and_truncate_open_the_journal_as_the_reader_does)
{
    KW_TL_HANG_GUARD(20);
    char dir[64], jp[96], fifo[128], sub[128], link[128];
    kw_synth_tmp(dir, sizeof dir, jp, sizeof jp);
    cr_assert_eq(kw_synth_spit(jp, "H format=1 crc=00000000\n", 24), 0);
    uint32_t crcs[1] = {0};
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    snprintf(link, sizeof link, "%s/link", dir);
    cr_assert_eq(symlink(jp, link), 0);
    const char *bad[3] = {fifo, sub, link};
    const char *say[3] = {"not a regular file", "not a regular file", "symbolic link"};
    for (int i = 0; i < 3; i++) {
        kw_jwriter *w = NULL;
        cr_assert_eq(kw_journal_writer_open(&w, bad[i], NULL, crcs, 1, 1), KW_EINPUT, "%s", bad[i]);
        cr_assert(strstr(kw_error_last(), say[i]), "%s", kw_error_last());
        cr_assert_eq(kw_journal_truncate(bad[i], 0, NULL), KW_EINPUT, "%s", bad[i]);
        cr_assert(strstr(kw_error_last(), say[i]), "%s", kw_error_last());
    }
    long n;
    char *kept = kw_synth_slurp(jp, &n);
    cr_assert_eq(n, 24, "the journal behind the link was truncated");
    free(kept);
    /* the journal itself still opens for appending, and truncates */
    kw_jwriter *w = NULL;
    cr_assert_eq(kw_journal_writer_open(&w, jp, NULL, crcs, 1, 1), 0, "%s", kw_error_last());
    kw_journal_writer_free(w);
    cr_assert_eq(kw_journal_truncate(jp, 2, NULL), 0, "%s", kw_error_last());
    kept = kw_synth_slurp(jp, &n);
    cr_assert_eq(n, 2);
    free(kept);
    unlink(fifo);
    rmdir(sub);
    unlink(link);
    kw_synth_rmdir(dir);
}

Test(journal, names_round_trip)
{
    for (int d = KW_DECIDE_ACCEPT; d <= KW_DECIDE_CONSTRAINT; d++)
        cr_assert_eq(kw_journal_decision_parse(kw_journal_decision_name((kw_decision)d)), d);
    for (int p = KW_STEP_MAIN; p <= KW_STEP_FIX; p++)
        cr_assert_eq(kw_journal_step_phase_parse(kw_journal_step_phase_name((kw_step_phase)p)), p);
    cr_assert_eq(kw_journal_strategy_parse("exhaustive"), KW_STRATEGY_EXHAUSTIVE);
    cr_assert_eq(kw_journal_policy_parse("greedy"), KW_POLICY_GREEDY);
    cr_assert_eq(kw_journal_policy_parse("bogus"), -1);
}
