/* cli_calibrate.c - `knobwise calibrate --accel F --measured CSV -o OUT`: fit
 * the accelerator's rate parameters to measured kernel times (kw_calib.c) and
 * write a calibrated accelerator file.
 *
 * Order of work: every input is read and checked, and OUT is checked (none of
 * the inputs, then the one check of every -o, kw_runfolder_output: absent, or
 * with --force a file calibrate wrote (KW_CAL_MARK), never a run folder's own
 * file), before the fit; the fit must succeed and
 * be determined before anything is written; the file is written through
 * libxml2 (the input document, its rates changed, each changed figure's
 * source saying "fitted to CSV") by kw_xml_save_atomic (temp file, fsync,
 * rename), then loaded back to check it. Exit: 0 written, 2 bad input,
 * usage, an existing OUT without --force, or an under-determined fit. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libxml/chvalid.h>
#include <libxml/tree.h>

#include "kw_calib.h"
#include "kw_calib_cpu.h"
#include "kw_cli.h"
#include "kw_input.h"
#include "kw_load.h"
#include "kw_num.h"
#include "kw_runfolder.h"
#include "kw_xml.h"

#define KW_CAL_VERB "calibrate"
/* The comment every file calibrate writes opens with: -o OUT --force replaces
 * only a file that holds it (kw_runfolder_output); the shipped accelerator
 * files (whose comments mention calibrate) do not. */
#define KW_CAL_MARK "accelerator file written by knobwise calibrate"

static void kw_calibrate_help(void)
{
    printf("usage: knobwise calibrate --accel F --measured CSV -o OUT [--force] [--fit P,P...]\n"
           "                          [--prior [file,]P=W,...] [--row-width S] [--space S]\n"
           "                          [--loss ls|huber|cauchy]\n\n"
           "Fit the accelerator's rate parameters to measured kernel times by nonlinear\n"
           "least squares on log(predicted / measured), print each kernel's error before\n"
           "and after and the fitted values with their 1-sigma uncertainty, and write\n"
           "the calibrated accelerator file OUT (sources say 'fitted to CSV').\n\n"
           "  --measured CSV  kernel times (format: spaces/measured/h100_published.csv)\n"
           "  -o OUT          never replaced unless --force, and then only a file\n"
           "                  calibrate wrote; never a non-regular file\n"
           "  --fit P,...     parameters to fit (default: every one the cases determine):\n"
           "                  matrix_fraction matrix_fraction_fp8 sync_matrix_fraction\n"
           "                  dram_fraction shared_gb_s softmax_vector_ops\n"
           "                  softmax_hidden_serial softmax_hidden_overlap kernel_fixed_us\n"
           "                  graph_node_us (graph_node cases and calls replayed in a\n"
           "                  graph: graph_nodes > 0)\n"
           "                  gather_dram_fraction gather_fixed_us (decode cases whose\n"
           "                  K/V cache is paged: page > 0)\n"
           "The eager launch and the graph replay's fixed cost are not fitted: no case\n"
           "measures them. A parameter named in --fit that no case depends on, or\n"
           "fewer cases than parameters, is refused as an under-determined fit (exit 2).\n\n"
           "  --prior [file,]P=W,...\n"
           "                  a maximum a posteriori fit: parameter P keeps a prior centred\n"
           "                  on the file's figure, W the relative width (sigma of\n"
           "                  log(value / figure)) or the class of the figure's source:\n"
           "                  S sourced 0.10, D derived 0.25, U unsourced 1.0, F fitted\n"
           "                  (no prior); 'file': the classes and widths the accelerator\n"
           "                  states (<rates><prior>), the P=W named after it replacing\n"
           "                  them; prints how far each moved, in prior widths.\n"
           "                  A parameter no case depends on is still refused (--fit)\n"
           "                  or kept: a prior does not determine it.\n"
           "  --row-width S   the weight of one case against the priors: the sigma of\n"
           "                  its log(predicted / measured) (default 0.10)\n"
           "  --loss L        ls (default): least squares; huber or cauchy: a robust fit\n"
           "                  (reweighted least squares, scale 1.4826 x the median absolute\n"
           "                  deviation of the log errors, Holland & Welsch's constants\n"
           "                  1.345 and 2.385), so a case the model cannot explain pulls\n"
           "                  the figures less; prints each case's weight and names the\n"
           "                  cases it down-weighted (log error over constant x scale).\n"
           "                  The 1-sigma is then the weighted estimate at the final weights\n\n"
           "  --space S       a CPU accelerator file (<cpu>) against measured mappings of\n"
           "                  space S: the CSV tests/bench/model_vs_measured writes\n"
           "                  (shape,config_id,predicted_us,measured_us,knobs); fits\n"
           "                  fp32_tflops bf16_tflops fallback sram_gb_s shared_gb_s\n"
           "                  exp_mops_per_core l1_gb_s (those some mapping depends on;\n"
           "                  --fit does not apply)\n");
}

/* s copied into dst (at most n - 1 bytes, NUL-terminated) as text an XML
 * file can hold: each well-formed UTF-8 character that is an XML Char (XML
 * 1.0 section 2.2) is kept whole, any other byte becomes '?', and the copy
 * stops before a character that would not fit. A source note is built from
 * the --measured path and the file's earlier sources: a path with a Latin-1
 * byte or a control character XML has no place for, or a cut through a character (the old
 * "%.300s"), made a file the loader refuses, and calibrate said the fit was
 * to blame. Cost: one pass over at most n bytes. */
static void kw_cal_text(char *dst, size_t n, const char *s)
{
    size_t used = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && n > 0) {
        int len = (int)strnlen((const char *)p, 4);
        int c = xmlGetUTF8Char(p, &len);
        int shortest = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (c < 0 || !xmlIsCharQ(c) || len != shortest) { /* len: an overlong form */
            c = '?';
            len = 1;
        }
        size_t w = c == '?' ? 1 : (size_t)len;
        if (used + w >= n)
            break;
        if (c == '?')
            dst[used] = '?';
        else
            memcpy(dst + used, p, w);
        used += w;
        p += len;
    }
    if (n > 0)
        dst[used] = '\0';
}

/* The source note of a fitted figure: "fitted to CSV by knobwise calibrate"
 * and a suffix, the path as kw_cal_text keeps it (at most 400 bytes). */
static void kw_cal_source(char *dst, size_t n, const char *csv, const char *suffix)
{
    char path[401];
    kw_cal_text(path, sizeof path, csv);
    snprintf(dst, n, "fitted to %s by knobwise calibrate%s", path, suffix);
}

/* Set attribute `name` of n to a decimal (the schema takes no exponents). */
static void kw_cal_attr(xmlNodePtr n, const char *name, double v, int decimals)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
    xmlSetProp(n, BAD_CAST name, BAD_CAST buf);
}

static xmlNodePtr kw_cal_child(xmlNodePtr parent, const char *name, const char *attr,
                               const char *val)
{
    for (xmlNodePtr c = parent->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, name) != 0)
            continue;
        if (!attr)
            return c;
        xmlChar *v = xmlGetProp(c, BAD_CAST attr);
        int same = v && strcmp((const char *)v, val) == 0;
        xmlFree(v);
        if (same)
            return c;
    }
    return NULL;
}

/* The accelerator file read and checked against its schema, to be rewritten
 * with fitted figures (both writers below); *doc and *buf are the caller's to
 * free, also on failure. */
static int kw_cal_open(const char *accel_path, xmlDocPtr *doc, char **buf)
{
    kw_xml_problems p = {0};
    size_t len = 0;
    int rc = kw_xml_read_file(buf, &len, accel_path, &p);
    if (rc == 0)
        rc = kw_xml_load(doc, accel_path, *buf, len, "accelerator", "spaces/accelerator.xsd", &p);
    return rc != 0 ? kw_xml_problems_finish(&p) : 0;
}

/* The rewritten document checked as an accelerator from its bytes, then
 * saved (temp file, fsync, rename), so a fitted file the loader would refuse
 * is an error here and nothing is written (both writers below). It was
 * checked after the rename: a fit to absurd times (measured_us 1e12: matrix
 * fraction 1.6e-10, written as 0.000000) left at OUT a file its own schema
 * refuses, with exit 2, until 2026-12-06. */
static int kw_cal_save(xmlDocPtr doc, const char *out)
{
    /* the mark, first in the file (once: the input may be calibrate's own output) */
    xmlNodePtr first = doc->children;
    xmlChar *said = first && first->type == XML_COMMENT_NODE ? xmlNodeGetContent(first) : NULL;
    int marked = said && strstr((const char *)said, KW_CAL_MARK) != NULL;
    xmlFree(said);
    if (!marked) {
        xmlNodePtr c = xmlNewDocComment(doc, BAD_CAST " " KW_CAL_MARK
                                        " (the fitted figures' source attributes say from what) ");
        if (!c || !first || !xmlAddPrevSibling(first, c)) {
            xmlFreeNode(c);
            return kw_error_set(KW_ENOMEM, "calibrate: out of memory");
        }
    }
    xmlChar *bytes = NULL;
    int len = 0;
    xmlDocDumpFormatMemory(doc, &bytes, &len, 1);
    if (!bytes || len <= 0) {
        xmlFree(bytes);
        return kw_error_set(KW_ENOMEM, "calibrate: out of memory");
    }
    kw_accel check;
    int rc = kw_load_accel_buf(&check, out, (const char *)bytes, (size_t)len);
    xmlFree(bytes);
    if (rc != 0) {
        char why[KW_ERROR_MAX];
        snprintf(why, sizeof why, "%s", kw_error_last());
        return kw_error_set(rc, "the calibrated file would not load, so %s is not written (a fit "
                            "to times the model cannot reach; the table above shows the fitted "
                            "figures):\n%s", out, why);
    }
    return kw_xml_save_atomic(doc, out);
}


/* The <storage><level name=NAME> element: where the fitted shared level's
 * bandwidth is written, so the file gets the figure of the level the fit
 * tuned (kw_calib_shared_level), not of the first or largest one listed. */
static xmlNodePtr kw_cal_level(xmlNodePtr root, const char *name)
{
    xmlNodePtr st = kw_cal_child(root, "storage", NULL, NULL);
    for (xmlNodePtr l = st ? st->children : NULL; l; l = l->next) {
        if (l->type != XML_ELEMENT_NODE || !xmlStrEqual(l->name, BAD_CAST "level"))
            continue;
        xmlChar *n = xmlGetProp(l, BAD_CAST "name");
        int same = n && strcmp((const char *)n, name) == 0;
        xmlFree(n);
        if (same)
            return l;
    }
    return NULL;
}

/* The calibrated document: rates (and the shared level's bandwidth) changed. */
static int kw_cal_write(const char *accel_path, const char *csv, const char *out, const kw_accel *a,
                        const kw_calib *cal, const kw_fid_set *set)
{
    char *buf = NULL;
    xmlDocPtr doc = NULL;
    int rc = kw_cal_open(accel_path, &doc, &buf);
    if (rc != 0)
        goto done;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    char src[KW_SOURCE_MAX], how[32] = "";
    if (cal->loss != KW_CAL_LOSS_LS) /* a robust fit says so: its figures weigh the cases unequally */
        snprintf(how, sizeof how, " --loss %s", kw_calib_loss_name(cal->loss));
    kw_cal_source(src, sizeof src, csv, how);
    xmlNodePtr rates = kw_cal_child(root, "rates", NULL, NULL);
    if (!rates) {
        rates = xmlNewNode(NULL, BAD_CAST "rates");
        xmlNodePtr acc = kw_cal_child(root, "accumulate", NULL, NULL);
        if (acc)
            xmlAddPrevSibling(acc, rates);
        else
            xmlAddChild(root, rates);
    }
    const kw_calib_param *pm = cal->p;
    for (int pr = 0; pr < KW_PREC_COUNT; pr++) {
            int fp8 = pr == KW_PREC_FP8_E4M3 || pr == KW_PREC_FP8_E5M2;
            int half = pr == KW_PREC_BF16 || pr == KW_PREC_FP16;
            if (!(half && pm[KW_CAL_MATRIX].fitted) && !(fp8 && pm[KW_CAL_MATRIX_FP8].fitted))
                continue;
            int used = 0;
            for (int i = 0; i < set->n; i++)
                used |= (int)set->c[i].precision == pr;
            if (!used)
                continue;
            xmlNodePtr m = kw_cal_child(rates, "matrix", "precision", kw_prec_name((kw_prec)pr));
            if (!m) {
                m = xmlNewNode(NULL, BAD_CAST "matrix");
                xmlSetProp(m, BAD_CAST "precision", BAD_CAST kw_prec_name((kw_prec)pr));
                if (rates->children)
                    xmlAddPrevSibling(rates->children, m);
                else
                    xmlAddChild(rates, m);
            }
            kw_cal_attr(m, "fraction", a->matrix_fraction[pr], 6);
            xmlSetProp(m, BAD_CAST "source", BAD_CAST src);
        }
    if (pm[KW_CAL_SYNC_MATRIX].fitted)
        kw_cal_attr(rates, "sync_matrix_fraction", a->sync_matrix_fraction, 6);
    if (pm[KW_CAL_DRAM].fitted)
        kw_cal_attr(rates, "dram_fraction", a->dram_fraction, 6);
    if (pm[KW_CAL_SOFTMAX_OPS].fitted)
        kw_cal_attr(rates, "softmax_vector_ops", a->softmax_vector_ops, 4);
    if (pm[KW_CAL_HIDDEN_SERIAL].fitted || pm[KW_CAL_HIDDEN_OVERLAP].fitted) {
        kw_cal_attr(rates, "softmax_hidden_serial", a->softmax_hidden_serial, 6);
        kw_cal_attr(rates, "softmax_hidden_overlap", a->softmax_hidden_overlap, 6);
    }
    if (pm[KW_CAL_KERNEL_FIXED].fitted)
        kw_cal_attr(rates, "kernel_fixed_us", a->kernel_fixed_us, 4);
    if (pm[KW_CAL_GATHER_DRAM].fitted)
        kw_cal_attr(rates, "gather_dram_fraction", a->gather_dram_fraction, 6);
    if (pm[KW_CAL_GATHER_FIXED].fitted)
        kw_cal_attr(rates, "gather_fixed_us", a->gather_fixed_us, 4);
    xmlSetProp(rates, BAD_CAST "source", BAD_CAST src);
    /* a fitted figure's prior says so: class F, no width (a later --prior file
     * then gives it none: the measurements it came from are in CSV) */
    for (int id = 0; id < KW_CAL_COUNT; id++) {
        if (!pm[id].fitted)
            continue;
        xmlNodePtr pr = kw_cal_child(rates, "prior", "param", kw_calib_param_name(id));
        if (!pr) {
            xmlAddChild(rates, xmlNewText(BAD_CAST "\n    "));
            pr = xmlNewChild(rates, NULL, BAD_CAST "prior", NULL);
            xmlSetProp(pr, BAD_CAST "param", BAD_CAST kw_calib_param_name(id));
        }
        xmlSetProp(pr, BAD_CAST "class", BAD_CAST "F");
        xmlUnsetProp(pr, BAD_CAST "width");
        xmlSetProp(pr, BAD_CAST "source", BAD_CAST src);
    }
    xmlNodePtr launch = pm[KW_CAL_GRAPH_NODE].fitted ? kw_cal_child(root, "launch", NULL, NULL) : NULL;
    if (launch) { /* the eager and replay figures keep their sources: append, not replace */
        kw_cal_attr(launch, "graph_node_us", a->graph_node_us, 4);
        xmlChar *old = xmlGetProp(launch, BAD_CAST "source");
        char ls[2 * KW_SOURCE_MAX], was[301], now[201];
        kw_cal_text(was, sizeof was, old ? (const char *)old : "");
        kw_cal_text(now, sizeof now, src);
        snprintf(ls, sizeof ls, "%s; graph_node_us %s", was, now);
        xmlFree(old);
        xmlSetProp(launch, BAD_CAST "source", BAD_CAST ls);
    }
    const kw_level *lv = pm[KW_CAL_SHARED_BW].fitted ? kw_calib_shared_level((kw_accel *)a) : NULL;
    xmlNodePtr l = lv ? kw_cal_level(root, lv->name) : NULL;
    if (l) {
        kw_cal_attr(l, "gb_s", pm[KW_CAL_SHARED_BW].after, 1);
        xmlSetProp(l, BAD_CAST "source", BAD_CAST src);
    }
    xmlNodePtr s = kw_cal_child(root, "source", NULL, NULL);
    if (s) {
        xmlChar *t = xmlNodeGetContent(s);
        char all[2 * KW_SOURCE_MAX], was[301], now[201];
        kw_cal_text(was, sizeof was, t ? (const char *)t : "");
        kw_cal_text(now, sizeof now, src);
        snprintf(all, sizeof all, "%s; rates %s", was, now);
        xmlFree(t);
        /* as text: xmlNodeSetContent reads '&' as the start of an entity, so
         * a path holding one emptied <source> (the file's citations lost) */
        xmlNodeSetContent(s, NULL);
        xmlNodeAddContent(s, BAD_CAST all);
    }
    rc = kw_cal_save(doc, out);
done:
    xmlFreeDoc(doc);
    free(buf);
    return rc;
}

/* --space: a CPU file fitted to measured mappings (kw_calib_cpu.c); the
 * fitted figures written where the file keeps them. */
static int kw_cal_cpu_write(const char *accel_path, const char *csv, const char *out,
                            const kw_ccal *cal, const char *level)
{
    char *buf = NULL;
    xmlDocPtr doc = NULL;
    int rc = kw_cal_open(accel_path, &doc, &buf);
    if (rc != 0)
        goto done;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    char src[KW_SOURCE_MAX];
    kw_cal_source(src, sizeof src, csv, " --space");
    struct {
        int id;
        const char *elem, *key, *val, *attr;
        int decimals;
    } const where[] = {
        {KW_CCAL_FP32, "peak", "precision", "fp32", "tflops", 6},
        {KW_CCAL_BF16, "peak", "precision", "bf16", "tflops", 6},
        {KW_CCAL_FALLBACK, "efficiency", NULL, NULL, "fallback", 5},
        {KW_CCAL_SRAM_BW, "memory", NULL, NULL, "sram_bw_gb_s", 2},
        {KW_CCAL_EXP, "cpu", NULL, NULL, "exp_mops_per_core", 2},
        {KW_CCAL_L1_BW, "cpu", NULL, NULL, "l1_gb_s", 2},
    };
    for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
        xmlNodePtr n = cal->fitted[where[i].id] ? kw_cal_child(root, where[i].elem, where[i].key,
                                                                where[i].val)
                                                : NULL;
        if (n) {
            kw_cal_attr(n, where[i].attr, cal->after[where[i].id], where[i].decimals);
            xmlSetProp(n, BAD_CAST "source", BAD_CAST src);
        }
    }
    xmlNodePtr llc = cal->fitted[KW_CCAL_SHARED_BW] && level ? kw_cal_level(root, level) : NULL;
    if (llc) {
        kw_cal_attr(llc, "gb_s", cal->after[KW_CCAL_SHARED_BW], 2);
        xmlSetProp(llc, BAD_CAST "source", BAD_CAST src);
    }
    rc = kw_cal_save(doc, out);
done:
    xmlFreeDoc(doc);
    free(buf);
    return rc;
}

static int kw_cal_cpu(const char *space, const char *accel, const char *csv, const char *out)
{
    kw_config *cfg = NULL;
    kw_ccal_set *set = malloc(sizeof *set);
    kw_ccal cal;
    int status = 0, rc;
    if (!set) {
        fprintf(stderr, "knobwise calibrate: out of memory\n");
        return 1;
    }
    if ((rc = kw_load_config(&cfg, space, accel, NULL)) != 0 ||
        (rc = kw_calib_cpu_load(set, csv, cfg)) != 0) {
        status = kw_cli_fail(KW_CAL_VERB, rc);
        goto done;
    }
    kw_accel fitted = cfg->accel;
    const kw_level *shared = kw_calib_shared_level(&fitted); /* the level shared_gb_s fits */
    if ((rc = kw_calib_cpu_fit(&cal, &fitted, cfg, set)) != 0) {
        fprintf(stderr, "knobwise calibrate: %s\n", kw_error_last());
        status = kw_error_exit_status(rc);
        goto done;
    }
    printf("calibrate: %s against %s (%d measured mappings of %s, %d iterations)\n", accel, csv,
           set->n, space, cal.iterations);
    printf("sum of squared log errors: before %.4f, after %.4f (rms %.1f%% -> %.1f%%)\n",
           cal.chi2_before, cal.chi2_after, 100.0 * (exp(sqrt(cal.chi2_before / set->n)) - 1.0),
           100.0 * (exp(sqrt(cal.chi2_after / set->n)) - 1.0));
    printf("%-20s %12s %12s\n", "parameter", "before", "fitted");
    for (int id = 0; id < KW_CCAL_COUNT; id++) {
        if (cal.fitted[id])
            printf("%-20s %12.4f %12.4f\n", kw_calib_cpu_name(id), cal.before[id], cal.after[id]);
        else
            printf("%-20s %12.4f %12s  (not determined by these mappings: kept)\n",
                   kw_calib_cpu_name(id), cal.before[id], "-");
    }
    if ((rc = kw_cal_cpu_write(accel, csv, out, &cal, shared ? shared->name : NULL)) != 0) {
        status = kw_cli_fail(KW_CAL_VERB, rc);
        goto done;
    }
    printf("wrote %s\n", out);
done:
    kw_load_config_free(cfg);
    free(set);
    return status;
}

/* The option's words in a copy of their own, whatever their length: --fit
 * and --prior were copied into 256 and 512 bytes, so the end of a long list
 * was cut off unsaid (--fit '...,matrix_fraction_fp8' past byte 255 fitted
 * matrix_fraction instead; --prior '...,softmax_vector_ops=0.25' past byte
 * 511 fitted a prior of 0.2; until 2026-12-07). NULL: out of memory, said
 * (exit 1). */
static char *kw_cal_words(const char *opt, const char *text)
{
    char *buf = strdup(text);
    if (!buf)
        fprintf(stderr, "knobwise %s: %s: out of memory\n", KW_CAL_VERB, opt);
    return buf;
}

static int kw_cal_parse_fit(unsigned *want, const char *text)
{
    char *buf = kw_cal_words("--fit", text);
    if (!buf)
        return 1; /* exit status: a runtime failure */
    int rc = 0;
    *want = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && rc == 0;
         t = strtok_r(NULL, ",", &save)) {
        int found = kw_calib_param_id(t);
        if (found < 0)
            rc = kw_cli_usage_error(KW_CAL_VERB, "--fit: unknown parameter '%s'", t);
        else
            *want |= 1u << found;
    }
    free(buf);
    return rc != 0 ? rc : *want ? 0 : kw_cli_usage_error(KW_CAL_VERB, "--fit names no parameter");
}

/* --prior [file,]NAME=W|CLASS,...: widths by number or by class
 * (kw_calib_class_width) into given[] (negative: not named); "file": the
 * accelerator's own <prior> classes first (*from_file). A parameter named
 * twice (in one --prior or two) is refused, as --set's knobs are: the last
 * width silently won. */
static int kw_cal_parse_prior(double *given, int *from_file, const char *text)
{
    char *buf = kw_cal_words("--prior", text);
    if (!buf)
        return 1; /* exit status: a runtime failure */
    int rc = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && rc == 0;
         t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "file") == 0) {
            *from_file = 1;
            continue;
        }
        char *eq = strchr(t, '=');
        if (!eq) {
            rc = kw_cli_usage_error(KW_CAL_VERB, "--prior: '%s' is not NAME=WIDTH or NAME=CLASS", t);
            break;
        }
        *eq = '\0';
        int found = kw_calib_param_id(t);
        if (found < 0) {
            rc = kw_cli_usage_error(KW_CAL_VERB, "--prior: unknown parameter '%s'", t);
            break;
        }
        const char *v = eq + 1;
        double w = 0.0;
        if (v[0] && !v[1] && kw_calib_class_width(v[0]) >= 0.0)
            w = kw_calib_class_width(v[0]);
        else if (kw_num_double(&w, v) != 0 || !(w > 0.0)) {
            rc = kw_cli_usage_error(KW_CAL_VERB, "--prior: %s=%s: the width must be a positive "
                                    "number or one of the classes S D U F", t, v);
            break;
        }
        if (given[found] >= 0.0)
            rc = kw_cli_usage_error(KW_CAL_VERB, "--prior: %s is given a width twice (%g, then "
                                    "%s)", t, given[found], v);
        given[found] = w;
    }
    free(buf);
    return rc;
}

/* Cases the model cannot tell apart (kw_calib_find_twins, on the fitted
 * figures): one prediction serves each group, so the group's measured spread
 * is an error no fit removes (kw_calib_bound_error). */
static void kw_cal_print_twins(const kw_accel *a, const kw_fid_set *set)
{
    int group[KW_FID_MAX];
    if (kw_calib_find_twins(group, a, set) == 0)
        return;
    printf("cases the model cannot tell apart (one prediction for each group; the least worst error "
           "it leaves):\n");
    for (int g = 0; g < set->n; g++) {
        int lo, hi, members = kw_calib_count_twins(group, set->n, g);
        if (members < 2)
            continue;
        double e = kw_calib_bound_error(group, set, g, &lo, &hi);
        printf("  %d cases, %s %.1f us .. %s %.1f us: +-%.1f%%\n", members, set->c[lo].name,
               set->c[lo].measured_us, set->c[hi].name, set->c[hi].measured_us, 100.0 * e);
    }
}

/* The robust fit's account: its scale and rounds, and the cases it
 * down-weighted (|log error| > c s, kw_calib.h), the ones the model cannot
 * explain at the figures the other cases give. */
static void kw_cal_print_outliers(const kw_calib *cal, const kw_fid_set *set, kw_calib_loss loss)
{
    double c = kw_calib_loss_tuning(loss);
    printf("loss %s (c %.3f, Holland & Welsch 1977): scale %.4f (1.4826 x median absolute "
           "deviation of the log errors, at least %.3f), %d reweighting rounds%s\n",
           kw_calib_loss_name(loss), c, cal->scale, KW_CAL_SCALE_MIN, cal->rounds,
           cal->converged ? "" : " (the weights had not settled: stopped at the cap)");
    if (cal->n_outliers == 0) {
        printf("cases the model cannot explain: none (every log error within %.3f x scale)\n", c);
        return;
    }
    printf("cases the model cannot explain at the fitted figures (log error over %.3f x scale "
           "= %.1f%%, down-weighted): %d\n",
           c, 100.0 * (exp(c * cal->scale) - 1.0), cal->n_outliers);
    for (int i = 0; i < set->n; i++)
        if (cal->outlier[i])
            printf("  %s (line %d): %+.1f%% after, weight %.3f\n", set->c[i].name, set->c[i].line,
                   100.0 * (cal->after_ratio[i] - 1.0), cal->weight[i]);
}

int kw_cli_calibrate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"accel", required_argument, NULL, 'a'}, {"measured", required_argument, NULL, 'm'},
        {"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
        {"fit", required_argument, NULL, 'F'},   {"help", no_argument, NULL, 'h'},
        {"space", required_argument, NULL, 's'}, {"prior", required_argument, NULL, 'P'},
        {"row-width", required_argument, NULL, 'R'}, {"loss", required_argument, NULL, 'L'},
        {NULL, 0, NULL, 0}};
    kw_calib_loss loss = KW_CAL_LOSS_DEFAULT;
    kw_calib_prior prior = {.row_width = KW_CAL_ROW_WIDTH};
    double given[KW_CAL_COUNT];
    int use_prior = 0, from_file = 0;
    for (int id = 0; id < KW_CAL_COUNT; id++)
        given[id] = -1.0;
    const char *accel = NULL, *csv = NULL, *out = NULL, *space = NULL;
    int force = 0, strict = 0, c, rc;
    unsigned want = (1u << KW_CAL_COUNT) - 1u;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': accel = optarg; break;
        case 'm': csv = optarg; break;
        case 'o': out = optarg; break;
        case 'f': force = 1; break;
        case 's': space = optarg; break;
        case 'F':
            if ((rc = kw_cal_parse_fit(&want, optarg)) != 0)
                return rc;
            strict = 1;
            break;
        case 'P':
            if ((rc = kw_cal_parse_prior(given, &from_file, optarg)) != 0)
                return rc;
            use_prior = 1;
            break;
        case 'R': {
            if (kw_num_double(&prior.row_width, optarg) != 0 || !(prior.row_width > 0.0))
                return kw_cli_usage_error(KW_CAL_VERB, "--row-width: '%s' is not a positive number",
                                          optarg);
            break;
        }
        case 'L': {
            int l = kw_calib_loss_id(optarg);
            if (l < 0)
                return kw_cli_usage_error(KW_CAL_VERB, "--loss: '%s' is not one of ls huber cauchy",
                                          optarg);
            loss = (kw_calib_loss)l;
            break;
        }
        case 'h': kw_calibrate_help(); return 0;
        default:
            return kw_cli_usage_error(KW_CAL_VERB, "unknown option or missing value: %s",
                                      argv[optind - 1]);
        }
    }
    if (optind < argc)
        return kw_cli_usage_error(KW_CAL_VERB, "unexpected argument '%s'", argv[optind]);
    if (!accel || !csv || !out)
        return kw_cli_usage_error(KW_CAL_VERB, "--accel, --measured and -o are all required");
    if (space && loss != KW_CAL_LOSS_LS)
        return kw_cli_usage_error(KW_CAL_VERB, "--loss %s: the --space fit is least squares only",
                                  kw_calib_loss_name(loss));
    if ((rc = kw_input_named("--accel", accel)) != 0 ||
        (rc = kw_input_named("--measured", csv)) != 0)
        return kw_cli_fail(KW_CAL_VERB, rc);
    /* the one check of every -o: not a regular file, a run folder's own files,
     * none of the files read (--force replaced the measured CSV itself, or the
     * accelerator file read, with the result) */
    char odir[KW_PATH_MAX], oname[KW_PATH_MAX];
    kw_runfolder_reads reads = {space, accel, NULL, {csv, NULL}, {"--measured", NULL}};
    static const kw_runfolder_verb who = {KW_CAL_VERB, KW_CAL_MARK, NULL};
    if (kw_runfolder_output(odir, sizeof odir, oname, sizeof oname, out, NULL, &reads, &who,
                            force) != 0)
        return kw_cli_fail(KW_CAL_VERB, KW_EINPUT);
    if (space)
        return kw_cal_cpu(space, accel, csv, out);
    kw_accel *a = malloc(sizeof *a);
    kw_fid_set *set = malloc(sizeof *set);
    kw_calib *cal = malloc(sizeof *cal);
    int status = 0;
    if (!a || !set || !cal) {
        fprintf(stderr, "knobwise calibrate: out of memory\n");
        status = 1;
        goto done;
    }
    if ((rc = kw_load_accel(a, accel)) != 0 || (rc = kw_fidelity_load(set, csv)) != 0) {
        status = kw_cli_fail(KW_CAL_VERB, rc);
        goto done;
    }
    /* Every case must be one the model can cost at the file's figures: a
     * row it cannot (a GEMM of 409,600 cubed) failed every trial step of the
     * fit, which then said "under-determined fit: no wanted parameter is
     * determined by the 74 measured cases" of the whole file. */
    for (int i = 0; i < set->n; i++) {
        double us;
        kw_bound b;
        if ((rc = kw_fidelity_predict(&us, &b, NULL, a, &set->c[i])) != 0 || !(us > 0.0)) {
            char why[KW_ERROR_MAX];
            snprintf(why, sizeof why, "%s", rc != 0 ? kw_error_last() : "no positive time");
            rc = kw_error_set(KW_EINPUT, "%s:%d: case '%s': the model cannot cost it on %s (%s)",
                              csv, set->c[i].line, set->c[i].name, accel, why);
            status = kw_cli_fail(KW_CAL_VERB, rc);
            goto done;
        }
    }
    if (from_file)
        kw_calib_prior_from_accel(&prior, a);
    for (int id = 0; id < KW_CAL_COUNT; id++)
        if (given[id] >= 0.0)
            prior.width[id] = given[id];
    if ((rc = kw_calib_fit_loss(cal, a, set, NULL, want, strict, use_prior ? &prior : NULL, loss)) !=
        0) {
        fprintf(stderr, "knobwise calibrate: %s\n", kw_error_last());
        status = kw_error_exit_status(rc);
        goto done;
    }
    printf("calibrate: %s against %s (%d cases, %d iterations)\n", accel, csv, cal->n_used,
           cal->iterations);
    int w = 26; /* the case column fits the longest name (the shipped h100 set has 31 bytes) */
    for (int i = 0; i < set->n; i++)
        if ((int)strlen(set->c[i].name) > w)
            w = (int)strlen(set->c[i].name);
    int robust = loss != KW_CAL_LOSS_LS;
    printf("%-*s %12s %10s %10s%s\n", w, "case", "measured_us", "before", "after",
           robust ? "   weight" : "");
    for (int i = 0; i < set->n; i++) {
        printf("%-*s %12.1f %+9.1f%% %+9.1f%%", w, set->c[i].name, set->c[i].measured_us,
               100.0 * (cal->before_ratio[i] - 1.0), 100.0 * (cal->after_ratio[i] - 1.0));
        if (robust)
            printf(" %8.3f%s", cal->weight[i], cal->outlier[i] ? "  down-weighted" : "");
        printf("\n");
    }
    printf("sum of squared log errors: before %.5f, after %.5f\n", cal->chi2_before,
           cal->chi2_after);
    if (robust)
        kw_cal_print_outliers(cal, set, loss);
    kw_cal_print_twins(a, set);
    if (use_prior)
        printf("priors centred on the file's figures; one case weighs as a log error of %.3g\n",
               prior.row_width);
    printf("%-22s %12s %12s %12s%s\n", "parameter", "before", "fitted", "1-sigma",
           use_prior ? "   prior-width  moved(widths)" : "");
    for (int id = 0; id < KW_CAL_COUNT; id++) {
        const kw_calib_param *p = &cal->p[id];
        if (!(want & (1u << id)))
            continue;
        if (p->at_bound)
            printf("%-22s %12.4f %12.4f %12s  (driven to the end of its range, kept there)\n",
                   p->name, p->before, p->after, "-");
        else if (p->fitted && use_prior && p->prior_width > 0.0)
            printf("%-22s %12.4f %12.4f %12.4f %12.3f %+13.2f\n", p->name, p->before, p->after,
                   p->sigma, p->prior_width, p->pull);
        else if (p->fitted)
            printf("%-22s %12.4f %12.4f %12.4f%s\n", p->name, p->before, p->after, p->sigma,
                   use_prior ? "         none" : "");
        else
            printf("%-22s %12.4f %12s %12s  (%s: kept)\n", p->name, p->before, "-", "-",
                   !p->applicable ? "not in this accelerator"
                   : p->determined ? "set aside by the fit: flat there, or not told apart"
                                   : "not determined by these cases");
    }
    printf("eager launch and graph replay cost: not fitted (no case measures them)\n");
    if ((rc = kw_cal_write(accel, csv, out, a, cal, set)) != 0) {
        status = kw_cli_fail(KW_CAL_VERB, rc);
        goto done;
    }
    printf("wrote %s\n", out);
done:
    free(a);
    free(set);
    free(cal);
    return status;
}
