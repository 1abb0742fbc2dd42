/* kw_verify.c - re-check a finished run from its journal (see kw_verify.h).
 *
 * Design choice: verify trusts nothing it did not recompute. The result files
 * are regenerated in memory from the journal and compared byte for byte
 * (ranked.csv, audit.csv) instead of being parsed, so any divergence between
 * journal and results -- a hand edit, a half-written folder, a writer bug --
 * shows up. Re-evaluation uses the model with the run's recorded options; the
 * model is a pure function of (candidate, shape, rep, seed), so metrics must
 * match to rounding.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "kw_evcache.h"
#include "kw_evend.h"
#include "kw_evidence.h"
#include "kw_input.h"
#include "kw_runfile.h"
#include "kw_xml.h"
#include "kw_results.h"
#include "kw_run.h"
#include "kw_netpath.h"
#include "kw_verify.h"

/* Name a journal record for people: "record N (shape S step K)". */
static void kw_v_where(char *buf, size_t len, const kw_journal *j, long record)
{
    for (size_t i = 0; i < j->n_steps; i++)
        if (j->steps[i].record == record) {
            int s = j->steps[i].shape;
            snprintf(buf, len, "record %ld (shape %s step %d)", record,
                     s >= 0 && s < j->h.n_shapes ? j->h.shape_names[s] : "?", j->steps[i].step);
            return;
        }
    snprintf(buf, len, "record %ld", record);
}

static int kw_v_semantics(kw_sbuf *log, const kw_journal *j, const kw_runsum *rs)
{
    if (j->torn) {
        kw_sbuf_printf(log, "FAIL journal checksums: %s\n", j->torn_msg);
        return kw_error_set(KW_ECORRUPT, "%s", j->torn_msg);
    }
    kw_sbuf_printf(log, "ok   journal checksums: %ld records intact%s\n", j->n_records,
                   j->complete ? ", run complete" : ", run not complete");
    int rc = kw_journal_check(j);
    if (rc != 0) {
        /* point at the step when the message names a record */
        char msg[KW_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", kw_error_last());
        const char *p = strstr(msg, "record ");
        if (p) {
            long rec = strtol(p + 7, NULL, 10);
            char where[256];
            kw_v_where(where, sizeof where, j, rec);
            kw_sbuf_printf(log, "FAIL journal semantics: %s [%s]\n", msg, where);
            return kw_error_set(KW_ECORRUPT, "%s [%s]", msg, where);
        }
        kw_sbuf_printf(log, "FAIL journal semantics: %s\n", msg);
        return kw_error_set(KW_ECORRUPT, "%s", msg);
    }
    long steps = 0;
    for (int s = 0; s < rs->n_shapes; s++) {
        const kw_rs_shape *sh = &rs->shapes[s];
        for (int i = 0; i < sh->n_steps; i++) {
            const kw_rs_step *st = &sh->steps[i];
            steps++;
            if (st->n_changed == 1)
                continue;
            kw_sbuf names = {0};
            for (int k = 0; k < rs->ks.n_knobs; k++)
                if (st->parent.v[k] != st->cand.v[k])
                    kw_sbuf_printf(&names, "%s%s", names.len ? ", " : "", rs->ks.knobs[k].name);
            rc = kw_error_set(KW_ECORRUPT, "%s: record %ld (shape %s step %d) changes %d knobs (%s)",
                              j->path, st->seq, sh->name, st->num, st->n_changed,
                              names.len ? kw_sbuf_cstr(&names) : "none");
            kw_sbuf_free(&names);
            kw_sbuf_printf(log, "FAIL one knob per step: %s\n", kw_error_last());
            return rc;
        }
    }
    kw_sbuf_printf(log, "ok   journal semantics: %ld steps, each changes exactly one knob\n", steps);
    /* The net path audit, the report and results.xml show: a chain of
     * one-knob steps from each baseline to its recommendation, every
     * configuration on it evaluated by a journaled step. */
    long net = 0;
    int shapes = 0;
    for (int s = 0; s < rs->n_shapes; s++) {
        kw_netpath np;
        if ((rc = kw_netpath_build(&np, rs, s)) == 0)
            rc = kw_netpath_check(rs, s, &np);
        net += np.n;
        shapes += rs->shapes[s].final >= 0 && rs->shapes[s].baseline >= 0;
        kw_netpath_free(&np);
        if (rc != 0) {
            kw_sbuf_printf(log, "FAIL net path: %s\n", kw_error_last());
            return rc == KW_ENOMEM ? rc : KW_ECORRUPT;
        }
    }
    kw_sbuf_printf(log, "ok   net path: %d shape%s, %ld one-knob steps from the baselines to the "
                   "recommendations, each configuration evaluated\n", shapes, shapes == 1 ? "" : "s", net);
    return 0;
}

int kw_verify_journal(kw_sbuf *log, const char *journal_path)
{
    kw_journal *j = NULL;
    kw_runsum *rs = NULL;
    int rc = kw_journal_load(&j, journal_path);
    if (rc != 0) {
        kw_sbuf_printf(log, "FAIL journal checksums: %s\n", kw_error_last());
        return rc == KW_EIO ? rc : KW_ECORRUPT;
    }
    if ((rc = kw_runsum_build(&rs, j)) == 0)
        rc = kw_v_semantics(log, j, rs);
    kw_runsum_free(rs);
    kw_journal_free(j);
    return rc;
}

/* A result file read whole through the one safe open of a run folder's own
 * files (kw_runfile_open: a FIFO at RUN/results.xml blocked verify's fopen
 * forever, /dev/zero was read until memory ran out; never through a symbolic
 * link: one planted at RUN/results.xml pointed verify out of the run folder).
 * NULL with no error when there is no such file (the caller counts it
 * missing); NULL with the error set when it is there but cannot be read: a
 * symbolic link, not a regular file, over KW_XML_MAX_OUTPUT_BYTES
 * (KW_EINPUT), out of memory. */
static char *kw_v_slurp(const char *path, size_t *len)
{
    struct stat st;
    if (lstat(path, &st) != 0 && errno == ENOENT)
        return NULL;
    char why[KW_INPUT_WHY_MAX];
    int fd;
    uint64_t size;
    int orc = kw_runfile_open(&fd, &size, path, KW_XML_MAX_OUTPUT_BYTES, 1, why, sizeof why);
    if (orc != 0) {
        kw_error_set(orc, "%s: %s", path, why);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        kw_error_set(KW_ENOMEM, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    kw_sbuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        kw_sbuf_putn(&b, chunk, n);
    fclose(f);
    if (b.failed) {
        /* out of memory is not "no such file": say so (the fault sweep found
         * a verify that passed having checked one file fewer) */
        kw_sbuf_free(&b);
        kw_error_set(KW_ENOMEM, "out of memory reading %s", path);
        return NULL;
    }
    *len = b.len;
    return b.data ? b.data : strdup("");
}

/* First differing line of two texts, for the message. */
static long kw_v_first_diff_line(const char *a, size_t la, const char *b, size_t lb)
{
    long line = 1;
    size_t i = 0;
    for (; i < la && i < lb && a[i] == b[i]; i++)
        if (a[i] == '\n')
            line++;
    return line;
}

/* results.xml's net path of shape s is the one the journal implies: the
 * same steps landing on the same configurations (kw_netpath_build, the one
 * rule every writer uses). A file from before net paths were written has
 * none: nothing to compare. 0, or KW_ECORRUPT naming the first difference. */
static int kw_v_xml_netpath(const char *path, const char *xml, const kw_runsum *rs, int s)
{
    char needle[256];
    snprintf(needle, sizeof needle, "<shape name=\"%s\"", rs->shapes[s].name);
    const char *at = strstr(xml, needle);
    const char *end = at ? strstr(at, "</shape>") : NULL;
    const char *np = at ? strstr(at, "<net_path ") : NULL;
    if (!np || (end && np > end))
        return 0;
    kw_netpath p;
    int rc = kw_netpath_build(&p, rs, s);
    if (rc != 0)
        return rc;
    const char *q = strstr(np, " steps=\"");
    long n = q ? strtol(q + 8, NULL, 10) : -1;
    if (n != p.n)
        rc = kw_error_set(KW_ECORRUPT, "%s: shape %s: the net path has %ld steps, the journal's %d",
                          path, rs->shapes[s].name, n, p.n);
    const char *cur = np;
    for (int i = 0; rc == 0 && i < p.n; i++) {
        const char *st = strstr(cur, "<step n=\"");
        const char *id = st ? strstr(st, " id=\"") : NULL;
        char want[17];
        snprintf(want, sizeof want, "%016llx",
                 (unsigned long long)rs->shapes[s].configs[p.steps[i].after].id);
        if (!id || (end && id > end) || strncmp(id + 5, want, 16) != 0)
            rc = kw_error_set(KW_ECORRUPT, "%s: shape %s: net step %d does not land on %s, the "
                              "journal's", path, rs->shapes[s].name, i + 1, want);
        cur = id ? id + 5 : cur;
    }
    kw_netpath_free(&p);
    return rc;
}

/* Every configuration results.xml spells out (a shape's baseline, its ranked
 * configs, their roll-back targets) carries the knob values its id is the id
 * of (kw_knobs_id_text, the search's rule). The rank-1 check above compares
 * ids only, so a value edited after the run (the one libknobwise hands a
 * runtime to deploy) passed verify while `export` refused it. 0, or
 * KW_ECORRUPT "FILE:LINE: ..." naming the first configuration that differs. */
static int kw_v_xml_config_ids(const char *path, xmlNode *n, const char *shape)
{
    for (xmlNode *m = kw_xml_elem(n->children); m; m = kw_xml_elem(m->next)) {
        int is_shape = kw_xml_is(m, "shape");
        if (is_shape || kw_xml_is(m, "config") || kw_xml_is(m, "rollback")) {
            xmlChar *name = is_shape ? xmlGetNoNsProp(m, BAD_CAST "name") : NULL;
            int rc = kw_v_xml_config_ids(path, m, name ? (const char *)name : shape);
            xmlFree(name);
            if (rc != 0)
                return rc;
        }
        if (!kw_xml_is(m, "baseline") && !kw_xml_is(m, "config") && !kw_xml_is(m, "target"))
            continue;
        const char *names[KW_KNOB_MAX];
        xmlChar *own[2 * KW_KNOB_MAX];
        const char *values[KW_KNOB_MAX];
        int k = 0, over = 0;
        for (xmlNode *c = kw_xml_elem(m->children); c; c = kw_xml_elem(c->next)) {
            if (!kw_xml_is(c, "knob"))
                continue;
            if (k == KW_KNOB_MAX) {
                over = 1;
                break;
            }
            own[2 * k] = xmlGetNoNsProp(c, BAD_CAST "name");
            own[2 * k + 1] = xmlGetNoNsProp(c, BAD_CAST "value");
            names[k] = own[2 * k] ? (const char *)own[2 * k] : "";
            values[k] = own[2 * k + 1] ? (const char *)own[2 * k + 1] : "";
            k++;
        }
        xmlChar *id = xmlGetNoNsProp(m, BAD_CAST "id");
        char want[17] = "";
        if (k > 0)
            snprintf(want, sizeof want, "%016llx",
                     (unsigned long long)kw_knobs_id_text(k, names, values));
        int bad = over || (k > 0 && (!id || strcmp((const char *)id, want) != 0));
        int rc = 0;
        if (bad)
            rc = kw_error_set(KW_ECORRUPT, "%s:%ld: shape %s: %s %s: its knob values are not "
                              "those of its id (their id is %s): changed after the run",
                              path, kw_xml_line(m), shape ? shape : "?", (const char *)m->name,
                              id ? (const char *)id : "(no id)", over ? "?" : want);
        xmlFree(id);
        for (int i = 0; i < 2 * k; i++)
            xmlFree(own[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A result file that is there but cannot be read: bad input (exit 2) when it
 * is no file verify can read at all (a FIFO, a folder, a device, a symbolic
 * link, over the size limit: KW_EINPUT from kw_v_slurp), else damage. */
static int kw_v_unreadable(kw_sbuf *log)
{
    int code = kw_error_code();
    if (code == KW_ENOMEM)
        return KW_ENOMEM;
    char msg[KW_ERROR_MAX];
    snprintf(msg, sizeof msg, "%s", kw_error_last());
    kw_sbuf_printf(log, "FAIL results follow from the journal: %s\n", msg);
    return kw_error_set(code == KW_EINPUT ? KW_EINPUT : KW_ECORRUPT, "%s", msg);
}

/* kw_v_results's checks but ranked.csv's comparison: its bytes are handed
 * back (*ranked, *ranked_len; NULL when the file is absent), and results.xml's
 * once it passed its checks (*kept_xml), for kw_v_results and kw_v_headline.
 * *n_present: the result files found (0: none; said in log). */
static int kw_v_results_files(kw_sbuf *log, kw_rundir *r, char **ranked, size_t *ranked_len,
                              int *n_present, char **kept_xml, size_t *kept_xml_len)
{
    const kw_runsum *rs = r->rs;
    char path[KW_PATH_MAX + 32];
    struct {
        const char *name;
        int (*render)(kw_sbuf *, const kw_runsum *);
    } files[] = {{KW_RUNFOLDER_RANKED_CSV, kw_results_ranked_csv},
                 {KW_RUNFOLDER_AUDIT_CSV, kw_results_audit_csv},
                 {KW_RUNFOLDER_PORTABILITY_CSV, kw_results_portability_csv}};
    /* a measured run's portability matrix is its journal's (kw_evidence.h),
     * so it is checked too; a model run's is an evaluation after the run */
    size_t n_files = sizeof files / sizeof files[0] - (rs->info.measured ? 0 : 1);
    if (rs->info.measured) {
        int prc = kw_evidence_portability_journal(r->rs);
        if (prc != 0)
            return prc;
    }
    int present = 0;
    const char *missing = NULL; /* the first result file a complete run lacks */
    for (size_t i = 0; i < n_files; i++) {
        snprintf(path, sizeof path, "%s/%s", r->dir, files[i].name);
        size_t len;
        kw_error_clear();
        char *disk = kw_v_slurp(path, &len);
        if (!disk && kw_error_code() != 0)
            return kw_v_unreadable(log);
        if (!disk) {
            if (!missing)
                missing = files[i].name;
            continue;
        }
        if (files[i].render == kw_results_portability_csv && len == strlen(KW_PORTABILITY_HEADER "\n") &&
            memcmp(disk, KW_PORTABILITY_HEADER "\n", len) == 0) {
            free(disk); /* a run stopped by a signal writes no matrix: nothing to check */
            continue;
        }
        present++;
        if (files[i].render == kw_results_ranked_csv) { /* compared after results.xml */
            *ranked = disk;
            *ranked_len = len;
            continue;
        }
        kw_sbuf want = {0};
        int rc = files[i].render(&want, rs);
        int same = rc == 0 && want.len == len && memcmp(kw_sbuf_cstr(&want), disk, len) == 0;
        long line = same ? 0 : kw_v_first_diff_line(kw_sbuf_cstr(&want), want.len, disk, len);
        kw_sbuf_free(&want);
        free(disk);
        if (rc != 0)
            return rc;
        if (!same) {
            rc = kw_error_set(KW_ECORRUPT, "%s:%ld: differs from what the journal implies", path, line);
            kw_sbuf_printf(log, "FAIL results follow from the journal: %s\n", kw_error_last());
            return rc;
        }
    }
    snprintf(path, sizeof path, "%s/%s", r->dir, KW_RUNFOLDER_RESULTS_XML);
    size_t len;
    kw_error_clear();
    char *xml = kw_v_slurp(path, &len);
    if (!xml && kw_error_code() != 0)
        return kw_v_unreadable(log);
    if (xml) {
        present++;
        /* not XML at all is bad input (exit 2, FILE:LINE as libxml2 says it);
         * XML that breaks the schema or the journal is damage (exit 1). The
         * schema checks the document parsed from the bytes read above: the
         * file is read once (it was opened again by path for the schema, so a
         * file swapped in between was the one checked) */
        kw_xml_problems xp = {0};
        xmlDocPtr doc = NULL;
        int rc = kw_xml_parse_output(&doc, path, xml, len, &xp);
        if (rc != 0) {
            free(xml);
            if (rc == KW_EINPUT)
                kw_xml_problems_finish(&xp);
            return kw_v_unreadable(log);
        }
        xmlNode *root = xmlDocGetRootElement(doc);
        if (root->ns != NULL || xmlStrcmp(root->name, BAD_CAST KW_RESULTS_ROOT) != 0) {
            kw_xml_problem(&xp, path, kw_xml_line(root), "root element is '%s', expected '%s'",
                           (const char *)root->name, KW_RESULTS_ROOT);
            rc = KW_EINPUT;
        } else {
            rc = kw_xml_validate(doc, path, KW_RESULTS_SCHEMA, &xp);
        }
        if (rc == 0 && (rc = kw_v_xml_config_ids(path, root, NULL)) != 0) {
            xmlFreeDoc(doc);
            free(xml);
            kw_sbuf_printf(log, "FAIL results follow from the journal: %s\n", kw_error_last());
            return rc;
        }
        xmlFreeDoc(doc);
        if (rc != 0) {
            free(xml);
            if (rc == KW_ENOMEM)
                return rc;
            if (rc == KW_EINPUT)
                kw_xml_problems_finish(&xp);
            char msg[KW_ERROR_MAX];
            snprintf(msg, sizeof msg, "%s", kw_error_last());
            kw_sbuf_printf(log, "FAIL results.xml schema: %s\n", msg);
            return kw_error_set(KW_ECORRUPT, "%s", msg);
        }
        /* rank 1 of each shape is the journal's recommendation */
        for (int s = 0; s < rs->n_shapes; s++) {
            int w = kw_runsum_winner(rs, s);
            if (w < 0)
                continue;
            char needle[256];
            snprintf(needle, sizeof needle, "<shape name=\"%s\"", rs->shapes[s].name);
            const char *at = strstr(xml, needle);
            const char *cfg = at ? strstr(at, "<config rank=\"1\" id=\"") : NULL;
            char id[17];
            snprintf(id, sizeof id, "%016llx", (unsigned long long)rs->shapes[s].configs[w].id);
            if (!cfg || strncmp(cfg + strlen("<config rank=\"1\" id=\""), id, 16) != 0) {
                free(xml);
                rc = kw_error_set(KW_ECORRUPT,
                                  "%s: shape %s: rank 1 is not the journal's recommendation %s",
                                  path, rs->shapes[s].name, id);
                kw_sbuf_printf(log, "FAIL results follow from the journal: %s\n", kw_error_last());
                return rc;
            }
            if ((rc = kw_v_xml_netpath(path, xml, rs, s)) != 0) {
                free(xml);
                kw_sbuf_printf(log, "FAIL results follow from the journal: %s\n", kw_error_last());
                return rc;
            }
        }
        /* kept for ranked.csv's headline columns, checked against its
         * re-check last (kw_v_headline): the file is read once */
        *kept_xml = xml;
        *kept_xml_len = len;
    } else if (!missing) {
        missing = KW_RUNFOLDER_RESULTS_XML;
    }
    if (present == 0) {
        if (r->j->complete) {
            int rc = kw_error_set(KW_ECORRUPT, "%s: the run is complete but has no result files",
                                  r->dir);
            kw_sbuf_printf(log, "FAIL results follow from the journal: %s\n", kw_error_last());
            return rc;
        }
        kw_sbuf_printf(log, "skip results follow from the journal: no result files yet\n");
        return 0;
    }
    if (r->j->complete && missing) { /* it used to verify with only the others checked */
        int rc = kw_error_set(KW_ECORRUPT, "%s/%s: missing from a complete run ('knobwise tune "
                              "--resume %s' writes it again)", r->dir, missing, r->dir);
        kw_sbuf_printf(log, "FAIL results follow from the journal: %s\n", kw_error_last());
        return rc;
    }
    *n_present = present;
    return 0;
}

/* What check 4 keeps for the last check (kw_v_headline): ranked.csv's and
 * results.xml's bytes as read (each NULL when absent or not checked). */
typedef struct kw_v_kept {
    char *ranked, *xml;
    size_t ranked_len, xml_len;
} kw_v_kept;

/* text (n bytes) with each line's last three fields cut (ranked.csv's
 * headline columns, KW_RANKED_HEADER_ADDED: numbers and a token, no comma
 * inside), into out. */
static void kw_v_cut_headline(kw_sbuf *out, const char *text, size_t n)
{
    for (size_t a = 0; a < n;) {
        const char *nl = memchr(text + a, '\n', n - a);
        size_t e = nl ? (size_t)(nl - text) : n, cut = e;
        for (int k = 0; k < 3 && cut > a; k++)
            while (cut > a && text[--cut] != ',')
                ;
        kw_sbuf_putn(out, text + a, cut - a);
        if (nl)
            kw_sbuf_puts(out, "\n");
        a = e + 1;
    }
}

static int kw_v_results(kw_sbuf *log, kw_rundir *r, kw_v_kept *keep)
{
    int present = 0;
    int rc = kw_v_results_files(log, r, &keep->ranked, &keep->ranked_len, &present, &keep->xml,
                                &keep->xml_len);
    /* ranked.csv here without its headline columns: the journal's figures
     * alone; those columns are results.xml's re-check where it has one
     * (kw_results_headline), compared last (kw_v_headline), once results.xml
     * itself was checked (and on a model run made again) */
    size_t old_len = strlen(KW_RANKED_HEADER "\n");
    if (rc == 0 && keep->ranked && keep->ranked_len >= old_len &&
        memcmp(keep->ranked, KW_RANKED_HEADER "\n", old_len) == 0) {
        /* the header before its headline columns: an older knobwise's file */
        kw_sbuf w = {0};
        kw_sbuf_shell(&w, r->dir);
        rc = kw_error_set(KW_ECORRUPT, "%s/%s:1: written by a knobwise before the headline columns "
                          "(" KW_RANKED_HEADER_ADDED "): `knobwise tune --resume %s` writes it again",
                          r->dir, KW_RUNFOLDER_RANKED_CSV,
                          kw_sbuf_status(&w) == 0 ? kw_sbuf_cstr(&w) : r->dir);
        kw_sbuf_free(&w);
        kw_sbuf_printf(log, "FAIL results follow from the journal: %s\n", kw_error_last());
    }
    if (rc == 0 && keep->ranked) {
        char path[KW_PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s", r->dir, KW_RUNFOLDER_RANKED_CSV);
        kw_sbuf want = {0}, a = {0}, b = {0};
        rc = kw_results_ranked_csv(&want, r->rs);
        if (rc == 0) {
            kw_v_cut_headline(&a, kw_sbuf_cstr(&want), want.len);
            kw_v_cut_headline(&b, keep->ranked, keep->ranked_len);
            rc = kw_sbuf_status(&a) != 0 ? kw_sbuf_status(&a) : kw_sbuf_status(&b);
        }
        int same = rc == 0 && a.len == b.len && memcmp(kw_sbuf_cstr(&a), kw_sbuf_cstr(&b), a.len) == 0;
        long line = same || rc != 0 ? 0 : kw_v_first_diff_line(kw_sbuf_cstr(&a), a.len, kw_sbuf_cstr(&b), b.len);
        kw_sbuf_free(&want);
        kw_sbuf_free(&a);
        kw_sbuf_free(&b);
        if (rc == 0 && !same) {
            rc = kw_error_set(KW_ECORRUPT, "%s:%ld: differs from what the journal implies", path,
                              line);
            kw_sbuf_printf(log, "FAIL results follow from the journal: %s\n", kw_error_last());
        }
    }
    if (rc == 0 && present > 0)
        kw_sbuf_printf(log, "ok   results follow from the journal: %d result files agree with it\n",
                       present);
    return rc;
}

/* The last check: ranked.csv's headline columns are results.xml's re-check
 * (kw_results_headline), the file verify read in check 4: its figures fill
 * the configurations the checks before did not re-check again (a model run's
 * evidence check made the re-check anew and found results.xml byte for byte
 * what it gives; --no-eval and a measured run read the file's). 0, or
 * KW_ECORRUPT naming ranked.csv's line. */
static int kw_v_headline(kw_sbuf *log, kw_rundir *r, const kw_v_kept *keep)
{
    if (!keep->ranked)
        return 0;
    char path[KW_PATH_MAX + 32], xpath[KW_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", r->dir, KW_RUNFOLDER_RANKED_CSV);
    snprintf(xpath, sizeof xpath, "%s/%s", r->dir, KW_RUNFOLDER_RESULTS_XML);
    kw_results_want w = {.load = r->rs};
    int rc = keep->xml ? kw_results_read_mem(&w, keep->xml, keep->xml_len, xpath) : 0;
    kw_sbuf want = {0};
    if (rc == 0)
        rc = kw_results_ranked_csv(&want, r->rs);
    int same = rc == 0 && want.len == keep->ranked_len &&
               memcmp(kw_sbuf_cstr(&want), keep->ranked, want.len) == 0;
    long line = same || rc != 0 ? 0
                : kw_v_first_diff_line(kw_sbuf_cstr(&want), want.len, keep->ranked, keep->ranked_len);
    kw_sbuf_free(&want);
    if (rc != 0)
        return rc;
    if (!same) {
        rc = kw_error_set(KW_ECORRUPT, "%s:%ld: its headline figures (headline_p95_us, "
                          "headline_p99_us, figures_basis) are not results.xml's re-check", path, line);
        kw_sbuf_printf(log, "FAIL ranked.csv headline figures: %s\n", kw_error_last());
        return rc;
    }
    kw_sbuf_printf(log, "ok   ranked.csv headline figures: results.xml's re-check where it has one\n");
    return 0;
}
static int kw_v_same(double a, double b, double tol)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b))
        return a == b;
    return fabs(a - b) <= tol * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* A model run's evidence, made again as tune makes it and compared byte for
 * byte: portability.csv (each winner evaluated on every shape after the
 * search: kw_v_results cannot derive it from the journal, and a cell edited
 * by hand verified) and results.xml whole (the checks above read its ids and
 * net paths only: an edited metric, watch threshold or disproof criterion
 * verified). results.xml holds all of the evidence (kw_evidence_run with the
 * search's evaluator and the re-check's: a finished or paused run), the
 * portability matrix only (a --results-every rewrite, a run written without
 * re-checks) or none (stopped by a signal); which one is not recorded in
 * results.xml, so the file must be exactly one of the three, and the first
 * when RUN/evidence's end record says the phase finished (kw_evcache.h: a
 * cut run's results.xml put in a finished run's place verified until
 * 2026-12-07). Its absence proves nothing (a kill between results.xml and the
 * end record). 0, or KW_ECORRUPT "FILE:LINE: ...". */
/* want's text is disk's; else *line becomes the first line they differ at
 * when that is further down than it was. */
static int kw_v_same_text(kw_sbuf *want, const char *disk, size_t len, long *line)
{
    if (want->len == len && memcmp(kw_sbuf_cstr(want), disk, len) == 0)
        return 1;
    long l = kw_v_first_diff_line(kw_sbuf_cstr(want), want->len, disk, len);
    if (l > *line)
        *line = l;
    return 0;
}

/* An attribute's value as results.xml spells it (src, len bytes between its
 * quotes) into dst as text: the references libxml2 writes (&amp; &lt; &gt;
 * &quot; &apos;, &#N; and &#xN; below 128: a folder named with a tab or a
 * newline is written &#9; &#10;) undone. Until 2026-12-07 verify took the
 * spelling as the name, and a run folder named with &, <, ", a tab or a
 * newline failed verify ("results.xml:2: differs"). dst is left as it was
 * when the value does not fit or holds another reference. */
static void kw_v_attr_value(char *dst, size_t n, const char *src, size_t len)
{
    static const struct {
        const char *ref;
        char c;
    } named[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    char out[1024];
    size_t o = 0;
    for (size_t i = 0; i < len; o++) {
        if (o + 1 >= sizeof out || o + 1 >= n)
            return;
        if (src[i] != '&') {
            out[o] = src[i++];
            continue;
        }
        size_t k = 0;
        for (; k < sizeof named / sizeof named[0]; k++) {
            size_t rl = strlen(named[k].ref);
            if (len - i >= rl && memcmp(src + i, named[k].ref, rl) == 0) {
                out[o] = named[k].c;
                i += rl;
                break;
            }
        }
        if (k < sizeof named / sizeof named[0])
            continue;
        const char *semi = memchr(src + i, ';', len - i);
        int hex = len - i > 3 && src[i + 1] == '#' && src[i + 2] == 'x';
        if (!semi || len - i < 4 || src[i + 1] != '#')
            return;
        char *end = NULL;
        long c = strtol(src + i + (hex ? 3 : 2), &end, hex ? 16 : 10);
        if (end != semi || c <= 0 || c >= 128)
            return;
        out[o] = (char)c;
        i = (size_t)(semi - src) + 1;
    }
    memcpy(dst, out, o);
    dst[o] = '\0';
}

static int kw_v_evidence(kw_sbuf *log, kw_rundir *r, const kw_evaluator *ev)
{
    char pp[KW_PATH_MAX + 32], xp[KW_PATH_MAX + 32];
    snprintf(pp, sizeof pp, "%s/%s", r->dir, KW_RUNFOLDER_PORTABILITY_CSV);
    snprintf(xp, sizeof xp, "%s/%s", r->dir, KW_RUNFOLDER_RESULTS_XML);
    size_t plen = 0, xlen = 0;
    kw_error_clear();
    char *pdisk = kw_v_slurp(pp, &plen);
    if (!pdisk && kw_error_code() != 0)
        return kw_v_unreadable(log);
    char *xdisk = kw_v_slurp(xp, &xlen);
    if (!xdisk && kw_error_code() != 0) {
        free(pdisk);
        return kw_v_unreadable(log);
    }
    if (pdisk && plen == strlen(KW_PORTABILITY_HEADER "\n") &&
        memcmp(pdisk, KW_PORTABILITY_HEADER "\n", plen) == 0) {
        free(pdisk); /* a run stopped by a signal writes no matrix: nothing to check */
        pdisk = NULL;
    }
    /* the run's name is its folder's when the file was written: a folder
     * copied or renamed since keeps the recorded one */
    const char *rn = xdisk ? strstr(xdisk, " run=\"") : NULL;
    const char *rq = rn ? strchr(rn + 6, '"') : NULL;
    if (rq && memchr(rn, '\n', (size_t)(rq - rn)) == NULL)
        kw_v_attr_value(r->rs->info.run_id, sizeof r->rs->info.run_id, rn + 6,
                        (size_t)(rq - rn - 6));
    kw_sbuf want = {0};
    kw_model_eval *final_me = NULL;
    const char *held = NULL;
    long line = 0;
    int rc = 0;
    /* 1. no evidence */
    if (xdisk && !r->rs->port && (rc = kw_results_xml(&want, r->rs)) == 0 &&
        kw_v_same_text(&want, xdisk, xlen, &line))
        held = "no evidence (a stopped run)";
    /* 2. the portability matrix, and portability.csv against it */
    kw_sbuf_free(&want);
    if (rc == 0 && (pdisk || (xdisk && !held)))
        rc = kw_evidence_portability(r->rs, ev, NULL);
    if (rc == 0 && pdisk) {
        rc = kw_results_portability_csv(&want, r->rs);
        if (rc == 0 && (want.len != plen || memcmp(kw_sbuf_cstr(&want), pdisk, plen) != 0)) {
            rc = kw_error_set(KW_ECORRUPT, "%s:%ld: differs from each shape's winner evaluated "
                              "again on every shape", pp,
                              kw_v_first_diff_line(kw_sbuf_cstr(&want), want.len, pdisk, plen));
            kw_sbuf_printf(log, "FAIL portability: %s\n", kw_error_last());
        } else if (rc == 0) {
            kw_sbuf_printf(log, "ok   portability: %s agrees with the winners evaluated again on "
                                "every shape\n", KW_RUNFOLDER_PORTABILITY_CSV);
        }
        kw_sbuf_free(&want);
    }
    if (rc == 0 && xdisk && !held && (rc = kw_results_xml(&want, r->rs)) == 0 &&
        kw_v_same_text(&want, xdisk, xlen, &line))
        held = "the portability matrix evaluated again, no re-checks (a rewrite during the run)";
    /* 3. all of it: the re-checks with the final sample and the long thermal
     * window, and the neighbours */
    if (rc == 0 && xdisk && !held) {
        kw_sbuf_free(&want);
        kw_model_opts fo = r->mopts;
        fo.sim_requests = r->cfg->space.final_requests > 0 ? r->cfg->space.final_requests
                                                           : r->mopts.sim_requests;
        fo.thermal = 1;
        fo.borrow_from = r->me;
        if ((rc = kw_eval_new(&final_me, r->cfg, &fo)) == 0 &&
            (rc = kw_evidence_run(r->rs, ev, kw_eval_iface(final_me), NULL)) == 0 &&
            (rc = kw_results_xml(&want, r->rs)) == 0 && kw_v_same_text(&want, xdisk, xlen, &line))
            held = "every piece of evidence evaluated again";
    }
    kw_sbuf_free(&want);
    kw_eval_free(final_me);
    free(pdisk);
    free(xdisk);
    if (rc == 0 && held && strncmp(held, "every piece", 11) != 0 &&
        kw_evend_read(r->dir) == 1) {
        kw_sbuf w = {0}; /* the folder one shell word in the command to paste */
        kw_sbuf_shell(&w, r->dir);
        rc = kw_error_set(KW_ECORRUPT, "%s:1: holds %s, but %s/%s ends with the end record of a "
                          "finished evidence phase (a stopped run's results.xml in a finished "
                          "run's folder?); `knobwise tune --resume %s` writes it again", xp, held,
                          r->dir, KW_RUNFOLDER_EVIDENCE,
                          kw_sbuf_status(&w) == 0 ? kw_sbuf_cstr(&w) : r->dir);
        kw_sbuf_free(&w);
        kw_sbuf_printf(log, "FAIL results.xml: %s\n", kw_error_last());
        return rc;
    }
    if (rc != 0 || held || !xdisk) {
        if (rc == 0 && held)
            kw_sbuf_printf(log, "ok   results.xml: byte for byte what the journal implies, with "
                                "%s\n", held);
        return rc;
    }
    /* the line where it leaves the rendering it follows longest */
    rc = kw_error_set(KW_ECORRUPT, "%s:%ld: differs from the results the journal and its evidence "
                      "evaluated again imply", xp, line);
    kw_sbuf_printf(log, "FAIL results.xml: %s\n", kw_error_last());
    return rc;
}

/* journal shape index -> evaluator shape index, by name (-1: none) */
/* The run's evaluator and, by name, each journal shape's index in it (map[s],
 * -1 where the evaluator has no such shape). */
static int kw_v_evaluator(const kw_evaluator **ev, int *map, kw_rundir *r)
{
    int rc = kw_rundir_evaluator(ev, r);
    if (rc != 0)
        return rc;
    const kw_journal *j = r->j;
    for (int s = 0; s < j->h.n_shapes && s < KW_JOURNAL_SHAPE_MAX; s++) {
        map[s] = -1;
        for (int e = 0; e < (*ev)->n_shapes; e++)
            if (strcmp((*ev)->shape_names[e], j->h.shape_names[s]) == 0)
                map[s] = e;
    }
    return 0;
}

/* Every alias (an E record with a=, search/kw_engine.c "aliases": the result of an
 * earlier full evaluation whose service key was the same, given without evaluating)
 * evaluated in full now and compared bit for bit with what it records (which
 * kw_journal_check found equal to its original's): the claim that the two services
 * are one is checked, not trusted. A recorded error result is left out, as the
 * sample leaves it out. */
static int kw_v_aliases(kw_sbuf *log, const kw_journal *j, const kw_evaluator *ev, const int *map)
{
    long n = 0;
    for (size_t i = 0; i < j->n_evals; i++) {
        const kw_jeval *e = &j->evals[i];
        if (!e->alias || e->rc != 0 || e->shape < 0 || e->shape >= j->h.n_shapes ||
            map[e->shape] < 0)
            continue;
        kw_metrics m;
        memset(&m, 0, sizeof m);
        int rc = ev->eval(ev->ctx, &e->cand, map[e->shape], e->rep, &m);
        char what[160] = "";
        if (rc != 0)
            snprintf(what, sizeof what, "its evaluation failed: %.100s", kw_error_last());
        for (int k = 0; rc == 0 && !what[0] && k < j->h.n_metrics; k++) {
            int ek = -1;
            for (int q = 0; q < ev->n_metrics; q++)
                if (strcmp(ev->metric_names[q], j->h.metric_names[k]) == 0)
                    ek = q;
            if (ek >= 0 && !(e->m[k] == m.v[ek] || (isnan(e->m[k]) && isnan(m.v[ek]))))
                snprintf(what, sizeof what, "%s was %.17g, evaluated in full %.17g",
                         j->h.metric_names[k], e->m[k], m.v[ek]);
        }
        if (rc == 0 && !what[0] &&
            (strcmp(e->guards, m.guards) != 0 || strcmp(e->klass, m.klass) != 0))
            snprintf(what, sizeof what, "guards '%.30s' class '%.20s', evaluated in full '%.30s' '%.20s'",
                     e->guards, e->klass, m.guards, m.klass);
        if (what[0]) {
            rc = kw_error_set(KW_ECORRUPT, "%s: record %ld: alias %016llx (of %016llx) on shape %s: "
                              "%s", j->path, e->record, (unsigned long long)e->id,
                              (unsigned long long)e->alias_of, j->h.shape_names[e->shape], what);
            kw_sbuf_printf(log, "FAIL aliases: %s\n", kw_error_last());
            return rc;
        }
        n++;
    }
    if (n > 0)
        kw_sbuf_printf(log, "ok   aliases: %ld aliases evaluated in full give their originals' "
                            "results bit for bit\n", n);
    return 0;
}

/* The aliases checked before anything derived from the journal (kw_v_aliases). */
static int kw_v_alias_check(kw_sbuf *log, kw_rundir *r)
{
    const kw_journal *j = r->j;
    if (!j->h.alias || r->inputs_changed)
        return 0; /* no aliases; changed inputs: the re-evaluation says so */
    const kw_evaluator *ev;
    int map[KW_JOURNAL_SHAPE_MAX];
    int rc = kw_v_evaluator(&ev, map, r);
    return rc != 0 ? rc : kw_v_aliases(log, j, ev, map);
}

static int kw_v_reeval(kw_sbuf *log, kw_rundir *r, const kw_verify_opts *o)
{
    const kw_journal *j = r->j;
    if (r->inputs_changed) {
        int rc = kw_error_set(KW_ECORRUPT, "cannot re-evaluate: %s", r->inputs_msg);
        kw_sbuf_printf(log, "FAIL re-evaluation: %s\n", kw_error_last());
        return rc;
    }
    const kw_evaluator *ev;
    int map[KW_JOURNAL_SHAPE_MAX];
    int rc = kw_v_evaluator(&ev, map, r);
    if (rc != 0)
        return rc;
    if (j->n_evals == 0) {
        kw_sbuf_printf(log, "skip re-evaluation: the journal has no evaluations\n");
        return 0;
    }
    /* the sample: baselines and recommendations, then seeded picks */
    size_t cap = (size_t)(2 * r->rs->n_shapes + (o->sample > 0 ? o->sample : 0) + 1);
    size_t *pick = calloc(cap, sizeof *pick), n = 0;
    if (!pick)
        return kw_error_set(KW_ENOMEM, "out of memory");
    for (int s = 0; s < r->rs->n_shapes; s++) {
        const kw_rs_shape *sh = &r->rs->shapes[s];
        int js = kw_journal_shape_index(j, sh->name);
        uint64_t ids[2] = {sh->baseline >= 0 ? sh->configs[sh->baseline].id : 0,
                           sh->final >= 0 ? sh->configs[sh->final].id : 0};
        for (int t = 0; t < 2; t++)
            for (size_t i = 0; i < j->n_evals && ids[t]; i++)
                if (j->evals[i].shape == js && j->evals[i].id == ids[t] && j->evals[i].rep == 0) {
                    pick[n++] = i;
                    break;
                }
    }
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) {
        free(pick);
        return kw_error_set(KW_ENOMEM, "out of memory");
    }
    gsl_rng_set(rng, (unsigned long)o->seed);
    for (int k = 0; k < o->sample && n < cap; k++)
        pick[n++] = (size_t)gsl_rng_uniform_int(rng, (unsigned long)j->n_evals);
    gsl_rng_free(rng);

    long checked = 0;
    for (size_t p = 0; p < n; p++) {
        const kw_jeval *e = &j->evals[pick[p]];
        if (e->rc != 0 || e->shape < 0 || e->shape >= j->h.n_shapes || map[e->shape] < 0)
            continue;
        kw_metrics m;
        memset(&m, 0, sizeof m);
        rc = ev->eval(ev->ctx, &e->cand, map[e->shape], e->rep, &m);
        char where[256];
        kw_v_where(where, sizeof where, j, e->record);
        if (rc != 0) {
            char msg[KW_ERROR_MAX];
            snprintf(msg, sizeof msg, "%s", kw_error_last());
            rc = kw_error_set(KW_ECORRUPT, "%s: %s: re-evaluation failed: %s", j->path, where, msg);
            kw_sbuf_printf(log, "FAIL re-evaluation: %s\n", kw_error_last());
            free(pick);
            return rc;
        }
        for (int k = 0; k < j->h.n_metrics && k < ev->n_metrics; k++) {
            int ek = -1;
            for (int q = 0; q < ev->n_metrics; q++)
                if (strcmp(ev->metric_names[q], j->h.metric_names[k]) == 0)
                    ek = q;
            if (ek < 0 || kw_v_same(e->m[k], m.v[ek], o->rel_tol))
                continue;
            rc = kw_error_set(KW_ECORRUPT,
                              "%s: %s: shape %s config %016llx rep %d: %s was %.9g, re-evaluated %.9g",
                              j->path, where, j->h.shape_names[e->shape],
                              (unsigned long long)e->id, e->rep, j->h.metric_names[k], e->m[k],
                              m.v[ek]);
            kw_sbuf_printf(log, "FAIL re-evaluation: %s\n", kw_error_last());
            free(pick);
            return rc;
        }
        if (strcmp(e->guards ? e->guards : "", m.guards) != 0) {
            rc = kw_error_set(KW_ECORRUPT, "%s: %s: guards were '%s', re-evaluated '%s'", j->path,
                              where, e->guards ? e->guards : "", m.guards);
            kw_sbuf_printf(log, "FAIL re-evaluation: %s\n", kw_error_last());
            free(pick);
            return rc;
        }
        checked++;
    }
    free(pick);
    kw_sbuf_printf(log, "ok   re-evaluation: %ld evaluations reproduce their recorded metrics\n", checked);
    return kw_v_evidence(log, r, ev);
}

int kw_verify_run(kw_sbuf *log, kw_rundir *r, const kw_verify_opts *o)
{
    kw_verify_opts d = {.sample = 10, .seed = 1, .no_eval = 0, .rel_tol = 1e-9};
    if (!o)
        o = &d;
    kw_verify_opts opt = *o;
    if (!(opt.rel_tol > 0))
        opt.rel_tol = 1e-9;
    int rc = kw_v_semantics(log, r->j, r->rs);
    if (rc == 0 && r->in_progress)
        /* tune holds the run folder: its result files are rewritten from a
         * journal that has grown since; they are checked once it is done */
        kw_sbuf_printf(log, "skip results follow from the journal: a tune is writing this run "
                            "now (the %ld records written so far were checked)\n",
                       r->j->n_records);
    kw_v_kept keep = {NULL, NULL, 0, 0};
    const char *measured = kw_run_attr_get(r->j, KW_RUN_EVALUATOR);
    /* every alias evaluated in full first: the claim is checked before any result
     * derived from it (a measured run never aliases) */
    if (rc == 0 && !opt.no_eval && !(measured && measured[0]))
        rc = kw_v_alias_check(log, r);
    if (rc == 0 && !r->in_progress)
        rc = kw_v_results(log, r, &keep);
    if (rc == 0 && !opt.no_eval && measured && measured[0])
        /* A measured run does not reproduce bit for bit: it is re-measured on
         * request (verify --remeasure N, src/run/kw_remeasure.c) and its drift reported. */
        kw_sbuf_printf(log, "skip re-evaluation: a measured run (exec:%s); --remeasure N "
                       "re-measures a sample and reports the drift\n", measured);
    else if (rc == 0 && !opt.no_eval)
        rc = kw_v_reeval(log, r, &opt);
    if (rc == 0)
        rc = kw_v_headline(log, r, &keep);
    free(keep.ranked);
    free(keep.xml);
    return rc;
}
