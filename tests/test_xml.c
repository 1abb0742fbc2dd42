/* test_xml.c - the safe XML module: size and file-kind limits, DOCTYPE and
 * entity refusal, depth and XInclude limits, UTF-8 only, schema validation
 * with line numbers, problem collection, typed getters, atomic writes. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/kw_tl.h"
#include "kw_xml.h"

TestSuite(xml);

static int parse(const char *text, xmlDocPtr *doc, kw_xml_problems *p)
{
    return kw_xml_parse(doc, "mem.xml", text, strlen(text), p);
}

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f != NULL, "cannot write %s", path);
    cr_assert_eq(fwrite(text, 1, len, f), len);
    fclose(f);
}

Test(xml, parses_a_plain_document)
{
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    cr_assert_eq(parse("<?xml version=\"1.0\"?>\n<a x=\"1\">\n  <b/>\n</a>\n", &doc, &p), 0, "%s",
                 p.text);
    xmlNode *r = xmlDocGetRootElement(doc);
    cr_assert(kw_xml_is(r, "a"));
    xmlNode *b = kw_xml_elem(r->children);
    cr_assert(kw_xml_is(b, "b"));
    cr_assert_eq(kw_xml_line(b), 3);
    cr_assert_eq(p.n, 0);
    xmlFreeDoc(doc);
}

Test(xml, doctype_refused_before_entities_expand)
{
    /* 10^9 "lol"s if expanded; refused at the DOCTYPE, so instant. */
    char buf[4096] = "<?xml version=\"1.0\"?>\n<!DOCTYPE a [\n<!ENTITY l0 \"lol\">\n";
    for (int i = 1; i < 10; i++) {
        char line[256];
        snprintf(line, sizeof line, "<!ENTITY l%d \"", i);
        strcat(buf, line);
        for (int j = 0; j < 10; j++) {
            snprintf(line, sizeof line, "&l%d;", i - 1);
            strcat(buf, line);
        }
        strcat(buf, "\">\n");
    }
    strcat(buf, "]>\n<a>&l9;</a>\n");
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    cr_assert_eq(parse(buf, &doc, &p), KW_EINPUT);
    cr_assert_null(doc);
    cr_assert(strstr(p.text, "mem.xml:2: DOCTYPE is not allowed") != NULL, "%s", p.text);
    cr_assert_eq(p.n, 1, "%s", p.text);
}

Test(xml, external_entity_never_read)
{
    const char *text = "<?xml version=\"1.0\"?>\n<!DOCTYPE a [\n<!ENTITY s SYSTEM "
                       "\"file:///etc/passwd\">\n]>\n<a>&s;</a>\n";
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    cr_assert_eq(parse(text, &doc, &p), KW_EINPUT);
    cr_assert(strstr(p.text, "DOCTYPE is not allowed") != NULL, "%s", p.text);
    cr_assert(strstr(p.text, "root:") == NULL, "file content leaked: %s", p.text);
}

Test(xml, external_dtd_refused)
{
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    cr_assert_eq(parse("<?xml version=\"1.0\"?>\n<!DOCTYPE a SYSTEM \"http://example.invalid/a.dtd\">\n<a/>\n",
                       &doc, &p),
                 KW_EINPUT);
    cr_assert(strstr(p.text, "mem.xml:2: DOCTYPE") != NULL, "%s", p.text);
}

static char *nested(int depth)
{
    char *s = malloc((size_t)depth * 8 + 64);
    strcpy(s, "<?xml version=\"1.0\"?>\n");
    for (int i = 0; i < depth; i++)
        strcat(s, "<a>");
    for (int i = 0; i < depth; i++)
        strcat(s, "</a>");
    return s;
}

Test(xml, depth_limit_boundary)
{
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    char *ok = nested(KW_XML_MAX_DEPTH);
    cr_assert_eq(parse(ok, &doc, &p), 0, "%s", p.text);
    xmlFreeDoc(doc);
    free(ok);
    char *deep = nested(KW_XML_MAX_DEPTH + 1);
    cr_assert_eq(parse(deep, &doc, &p), KW_EINPUT);
    cr_assert(strstr(p.text, "nested deeper than 32 levels") != NULL, "%s", p.text);
    free(deep);
    /* far past libxml2's own limit: still our message, no crash */
    kw_xml_problems q = {0};
    char *very = nested(100000);
    cr_assert_eq(parse(very, &doc, &q), KW_EINPUT);
    cr_assert(strstr(q.text, "nested deeper") != NULL, "%s", q.text);
    free(very);
}

Test(xml, xinclude_refused)
{
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    cr_assert_eq(parse("<a xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n<xi:include href=\"/etc/passwd\" parse=\"text\"/></a>",
                       &doc, &p),
                 KW_EINPUT);
    cr_assert(strstr(p.text, "mem.xml:2: XInclude is not allowed") != NULL, "%s", p.text);
}

Test(xml, utf8_only)
{
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    cr_assert_eq(parse("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a b=\"caf\xe9\"/>\n", &doc, &p),
                 KW_EINPUT);
    cr_assert(strstr(p.text, "UTF-8") != NULL, "%s", p.text);
    cr_assert(strchr(p.text, '\n') == NULL, "one problem is one line: %s", p.text);
    kw_xml_problems q = {0};
    cr_assert_eq(parse("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<a/>\n", &doc, &q), KW_EINPUT);
    cr_assert(strstr(q.text, "reads UTF-8 only") != NULL, "%s", q.text);
    kw_xml_problems r = {0};
    const char bom[] = "\xff\xfe<\0a\0/\0>\0";
    cr_assert_eq(kw_xml_parse(&doc, "mem.xml", bom, sizeof bom - 1, &r), KW_EINPUT);
    cr_assert(strstr(r.text, "not UTF-8 text") != NULL, "%s", r.text);
    /* UTF-8 proper, with a multi-byte character, is fine */
    kw_xml_problems s = {0};
    cr_assert_eq(parse("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a b=\"caf\xc3\xa9\"/>\n", &doc, &s),
                 0, "%s", s.text);
    xmlFreeDoc(doc);
}

Test(xml, truncated_and_empty)
{
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    cr_assert_eq(parse("<?xml version=\"1.0\"?>\n<a>\n<b x=\"1\"", &doc, &p), KW_EINPUT);
    cr_assert(strncmp(p.text, "mem.xml:3: ", 11) == 0, "%s", p.text);
    kw_xml_problems q = {0};
    cr_assert_eq(kw_xml_parse(&doc, "mem.xml", "", 0, &q), KW_EINPUT);
    cr_assert_str_eq(q.text, "mem.xml:1: file is empty");
}

Test(xml, big_line_numbers)
{
    /* Past 65535 lines libxml2 needs XML_PARSE_BIG_LINES to report the true line. */
    size_t lines = 70000;
    char *s = malloc(lines + 64);
    strcpy(s, "<a>");
    memset(s + 3, '\n', lines);
    strcpy(s + 3 + lines, "<b/></a>");
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    cr_assert_eq(parse(s, &doc, &p), 0, "%s", p.text);
    xmlNode *b = kw_xml_elem(xmlDocGetRootElement(doc)->children);
    cr_assert_eq(kw_xml_line(b), (long)lines + 1);
    xmlFreeDoc(doc);
    free(s);
}

/* A file knobwise wrote (parsed with the 512 MiB limit) holds at most one
 * element or attribute per KW_XML_OUTPUT_BYTES_PER_NODE bytes of any first
 * part of it: a crafted run of <x/> (20 million of them, 80 MB, took 2.6 GB
 * and 13 s before libxml2 gave up) is stopped in its first kilobytes, the
 * line named. The old parser built the whole tree (rc 0 here). A file as
 * dense as the writer's densest line, every line
 * <knob name="fuse_qkv" value="on"/> indented (13.7 bytes a node), and one of
 * 1,000 bare elements (the 1,024 allowance) are read; inputs (the 4 MiB
 * limit) are not capped. */
/* head, n copies of unit, tail: a malloc'd text of *len bytes. */
static char *repeated(const char *head, const char *unit, int n, const char *tail, size_t *len)
{
    size_t h = strlen(head), u = strlen(unit), t = strlen(tail);
    *len = h + u * (size_t)n + t;
    char *s = malloc(*len + 1);
    cr_assert(s);
    memcpy(s, head, h);
    for (int i = 0; i < n; i++)
        memcpy(s + h + u * (size_t)i, unit, u);
    memcpy(s + h + u * (size_t)n, tail, t + 1);
    return s;
}

Test(xml, a_file_knobwise_wrote_holds_nodes_in_proportion_to_its_bytes)
{
    size_t n;
    char *crafted = repeated("<results>\n", "<x/>", 100000, "\n</results>\n", &n);
    xmlDocPtr doc = NULL;
    kw_xml_problems p = {0};
    cr_assert_eq(kw_xml_parse_output(&doc, "big.xml", crafted, n, &p), KW_EINPUT);
    cr_assert_null(doc);
    cr_assert(strstr(p.text, "big.xml:2: ") && strstr(p.text, "at most one per 8 bytes"), "%s",
              p.text);
    kw_xml_problems q = {0};
    cr_assert_eq(kw_xml_parse(&doc, "in.xml", crafted, n, &q), 0, "%s", q.text);
    xmlFreeDoc(doc);
    free(crafted);
    char *dense = repeated("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<results>\n",
                           "      <knob name=\"fuse_qkv\" value=\"on\"/>\n", 100000,
                           "</results>\n", &n);
    kw_xml_problems r = {0};
    cr_assert_eq(kw_xml_parse_output(&doc, "dense.xml", dense, n, &r), 0, "%s", r.text);
    xmlFreeDoc(doc);
    free(dense);
    char *few = repeated("<results>", "<x/>", 1000, "</results>", &n);
    kw_xml_problems t = {0};
    cr_assert_eq(kw_xml_parse_output(&doc, "few.xml", few, n, &t), 0, "%s", t.text);
    xmlFreeDoc(doc);
    free(few);
}

Test(xml, read_file_limits)
{
    char *dir = kw_tl_tmpdir("kwtest");
    char path[512];
    kw_xml_problems p = {0};
    char *buf = NULL;
    size_t len = 0;

    snprintf(path, sizeof path, "%s/big.xml", dir);
    size_t big = KW_XML_MAX_BYTES + 1;
    char *data = malloc(big);
    memset(data, ' ', big);
    write_file(path, data, big);
    cr_assert_eq(kw_xml_read_file(&buf, &len, path, &p), KW_EINPUT);
    cr_assert(strstr(p.text, "over the 4 MiB limit") != NULL, "%s", p.text);
    cr_assert(strncmp(p.text, path, strlen(path)) == 0, "%s", p.text);
    cr_assert_null(buf);

    /* exactly at the limit is accepted */
    write_file(path, data, KW_XML_MAX_BYTES);
    kw_xml_problems q = {0};
    cr_assert_eq(kw_xml_read_file(&buf, &len, path, &q), 0, "%s", q.text);
    cr_assert_eq(len, (size_t)KW_XML_MAX_BYTES);
    cr_assert_eq(buf[len], '\0');
    free(buf);
    free(data);

    /* a FIFO neither blocks nor is read */
    snprintf(path, sizeof path, "%s/fifo", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    kw_xml_problems r = {0};
    cr_assert_eq(kw_xml_read_file(&buf, &len, path, &r), KW_EINPUT);
    cr_assert(strstr(r.text, "not a regular file") != NULL, "%s", r.text);

    kw_xml_problems s = {0};
    cr_assert_eq(kw_xml_read_file(&buf, &len, "/dev/zero", &s), KW_EINPUT);
    cr_assert(strstr(s.text, "not a regular file") != NULL, "%s", s.text);

    kw_xml_problems t = {0};
    snprintf(path, sizeof path, "%s/missing.xml", dir);
    cr_assert_eq(kw_xml_read_file(&buf, &len, path, &t), KW_EINPUT);
    cr_assert(strstr(t.text, "cannot open") != NULL, "%s", t.text);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

static const char good_space[] =
    "<?xml version=\"1.0\"?>\n"
    "<space name=\"s\" block=\"b\">\n"
    "  <accelerator file=\"a.xml\"/>\n"
    "  <workload file=\"w.xml\"/>\n"
    "  <knob name=\"fuse_qkv\" values=\"off on\" baseline=\"off\"/>\n"
    "</space>\n";

Test(xml, validates_against_the_embedded_schema)
{
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    cr_assert_eq(kw_xml_load(&doc, "s.xml", good_space, strlen(good_space), "space",
                             "spaces/space.xsd", &p),
                 0, "%s", p.text);
    xmlFreeDoc(doc);
}

Test(xml, schema_errors_carry_their_lines)
{
    const char *bad = "<?xml version=\"1.0\"?>\n"
                      "<space name=\"s\" block=\"b\">\n"
                      "  <accelerator file=\"a.xml\"/>\n"
                      "  <workload file=\"w.xml\"/>\n"
                      "  <knob name=\"fuse_qkv\" values=\"off on\" baseline=\"off\" colour=\"red\"/>\n"
                      "  <knob name=\"launch_mode\" values=\"eager graph\"/>\n"
                      "</space>\n";
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    cr_assert_eq(kw_xml_load(&doc, "s.xml", bad, strlen(bad), "space", "spaces/space.xsd", &p),
                 KW_EINPUT);
    cr_assert_null(doc);
    cr_assert(strstr(p.text, "s.xml:5: ") != NULL && strstr(p.text, "colour") != NULL, "%s", p.text);
    cr_assert(strstr(p.text, "s.xml:6: ") != NULL && strstr(p.text, "baseline") != NULL, "%s",
              p.text);
    cr_assert_eq(p.n, 2, "%s", p.text);
}

Test(xml, wrong_root_and_missing_schema)
{
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    cr_assert_eq(kw_xml_load(&doc, "s.xml", good_space, strlen(good_space), "workload",
                             "spaces/workload.xsd", &p),
                 KW_EINPUT);
    cr_assert_str_eq(p.text, "s.xml:2: root element is 'space', expected 'workload'");
    kw_xml_problems q = {0};
    cr_assert_eq(kw_xml_load(&doc, "s.xml", good_space, strlen(good_space), "space",
                             "spaces/no_such.xsd", &q),
                 KW_ESTATE);
    cr_assert(strstr(kw_error_last(), "no_such.xsd") != NULL);
}

Test(xml, every_embedded_schema_compiles)
{
    static const char *const schemas[] = {"spaces/space.xsd", "spaces/accelerator.xsd",
                                          "spaces/workload.xsd"};
    for (size_t i = 0; i < 3; i++) {
        kw_xml_problems p = {0};
        xmlDocPtr doc = NULL;
        cr_assert_eq(kw_xml_parse(&doc, "s.xml", good_space, strlen(good_space), &p), 0);
        int rc = kw_xml_validate(doc, "s.xml", schemas[i], &p);
        /* the space validates against its own schema only; the others compile and refuse it */
        cr_assert_eq(rc, i == 0 ? 0 : KW_EINPUT, "%s: %s %s", schemas[i], p.text, kw_error_last());
        xmlFreeDoc(doc);
    }
}

/* One space file checked against space.xsd: 0, or KW_EINPUT with its line. */
static int validate_space(const char *text)
{
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    int rc = kw_xml_load(&doc, "s.xml", text, strlen(text), "space", "spaces/space.xsd", &p);
    xmlFreeDoc(doc);
    if (rc == KW_EINPUT && strstr(p.text, "s.xml:3: ") == NULL)
        return -1000; /* refused, but not at the offending line */
    return rc;
}

static const char bad_space[] = "<?xml version=\"1.0\"?>\n"
                                "<space name=\"s\" block=\"b\">\n"
                                "  <accelerator file=\"a.xml\" colour=\"red\"/>\n"
                                "  <workload file=\"w.xml\"/>\n"
                                "  <knob name=\"fuse_qkv\" values=\"off on\" baseline=\"off\"/>\n"
                                "</space>\n";

Test(xml, each_schema_is_compiled_once_per_process)
{
    long before = kw_xml_schema_compilations();
    for (int i = 0; i < 50; i++) {
        cr_assert_eq(validate_space(good_space), 0, "%s", kw_error_last());
        cr_assert_eq(validate_space(bad_space), KW_EINPUT);
    }
    cr_assert_leq(kw_xml_schema_compilations() - before, 1,
                  "space.xsd compiled %ld times for 100 validations",
                  kw_xml_schema_compilations() - before);
    /* freed early (as before xmlCleanupParser), the next use compiles it again */
    kw_xml_cleanup();
    long freed = kw_xml_schema_compilations();
    cr_assert_eq(validate_space(good_space), 0);
    cr_assert_eq(validate_space(bad_space), KW_EINPUT);
    cr_assert_eq(kw_xml_schema_compilations() - freed, 1);
    kw_xml_cleanup();
    kw_xml_cleanup(); /* twice is harmless */
}

#define KW_T_THREADS 4
#define KW_T_ROUNDS 25

static void *validate_many(void *arg)
{
    long *wrong = arg;
    for (int i = 0; i < KW_T_ROUNDS; i++) {
        *wrong += validate_space(good_space) != 0;
        *wrong += validate_space(bad_space) != KW_EINPUT;
    }
    return NULL;
}

/* Threads racing to the first use compile the schema once between them, and
 * every validation on the shared schema gives its own file's verdict. */
Test(xml, shared_schema_validates_from_many_threads)
{
    kw_xml_cleanup();
    long before = kw_xml_schema_compilations();
    pthread_t t[KW_T_THREADS];
    long wrong[KW_T_THREADS] = {0};
    for (int i = 0; i < KW_T_THREADS; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, validate_many, &wrong[i]), 0);
    for (int i = 0; i < KW_T_THREADS; i++) {
        pthread_join(t[i], NULL);
        cr_assert_eq(wrong[i], 0, "thread %d: %ld wrong verdicts", i, wrong[i]);
    }
    cr_assert_eq(kw_xml_schema_compilations() - before, 1);
}

Test(xml, problems_are_capped_one_per_line)
{
    kw_xml_problems p = {0};
    for (int i = 0; i < 100; i++)
        kw_xml_problem(&p, "f.xml", i + 1, "problem %d", i);
    cr_assert_eq(p.n, 100);
    int lines = 1;
    for (const char *c = p.text; *c; c++)
        lines += *c == '\n';
    cr_assert_eq(lines, KW_XML_MAX_PROBLEMS + 1, "%s", p.text);
    cr_assert(strstr(p.text, "f.xml: more problems not shown") != NULL);
    cr_assert(strncmp(p.text, "f.xml:1: problem 0\nf.xml:2: problem 1\n", 38) == 0, "%s", p.text);
    cr_assert_eq(kw_xml_problems_finish(&p), KW_EINPUT);
    cr_assert_str_eq(kw_error_last(), p.text);
    kw_xml_problems none = {0};
    cr_assert_eq(kw_xml_problems_finish(&none), 0);
}

Test(xml, typed_getters)
{
    const char *text = "<a d=\" 2.5 \" nan=\"NaN\" inf=\"inf\" huge=\"1e999\" word=\"x\" i=\"42\""
                       " big=\"99999999999999999999\" t=\"true\" f=\"0\" m=\"maybe\" s=\"hello\"/>";
    kw_xml_problems p = {0};
    xmlDocPtr doc = NULL;
    cr_assert_eq(parse(text, &doc, &p), 0);
    xmlNode *n = xmlDocGetRootElement(doc);
    double d = -1;
    cr_assert_eq(kw_xml_attr_double(&d, n, "d", "f", &p), 1);
    cr_assert_float_eq(d, 2.5, 1e-15);
    cr_assert_eq(kw_xml_attr_double(&d, n, "absent", "f", &p), 0);
    cr_assert_eq(kw_xml_attr_double(&d, n, "nan", "f", &p), -1);
    cr_assert_eq(kw_xml_attr_double(&d, n, "inf", "f", &p), -1);
    cr_assert_eq(kw_xml_attr_double(&d, n, "huge", "f", &p), -1);
    cr_assert_eq(kw_xml_attr_double(&d, n, "word", "f", &p), -1);
    cr_assert_float_eq(d, 2.5, 1e-15, "failed getters leave the value alone");
    long l = 0;
    cr_assert_eq(kw_xml_attr_long(&l, n, "i", 0, 100, "f", &p), 1);
    cr_assert_eq(l, 42);
    cr_assert_eq(kw_xml_attr_long(&l, n, "i", 0, 41, "f", &p), -1);
    cr_assert_eq(kw_xml_attr_long(&l, n, "big", 0, 100, "f", &p), -1);
    cr_assert_eq(kw_xml_attr_long(&l, n, "d", 0, 100, "f", &p), -1);
    int b = -1;
    cr_assert_eq(kw_xml_attr_bool(&b, n, "t", "f", &p), 1);
    cr_assert_eq(b, 1);
    cr_assert_eq(kw_xml_attr_bool(&b, n, "f", "f", &p), 1);
    cr_assert_eq(b, 0);
    cr_assert_eq(kw_xml_attr_bool(&b, n, "m", "f", &p), -1);
    char s[6];
    cr_assert_eq(kw_xml_attr_str(s, sizeof s, n, "s", "f", &p), 1);
    cr_assert_str_eq(s, "hello");
    char tiny[5];
    cr_assert_eq(kw_xml_attr_str(tiny, sizeof tiny, n, "s", "f", &p), -1);
    cr_assert_eq(p.n, 9, "%s", p.text);
    cr_assert(strstr(p.text, "f:1: attribute 'nan': 'NaN' is not a finite number") != NULL, "%s",
              p.text);
    xmlFreeDoc(doc);
}

Test(xml, save_atomic_replaces_and_leaves_no_temp)
{
    char *dir = kw_tl_tmpdir("kwtest");
    char path[512], cmd[600];
    snprintf(path, sizeof path, "%s/out.xml", dir);
    write_file(path, "old", 3);
    xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
    xmlNodePtr r = xmlNewNode(NULL, BAD_CAST "results");
    xmlDocSetRootElement(doc, r);
    xmlNewProp(r, BAD_CAST "run", BAD_CAST "x");
    cr_assert_eq(kw_xml_save_atomic(doc, path), 0, "%s", kw_error_last());
    char *back = kw_tl_slurp(path);
    cr_assert(strstr(back, "<results run=\"x\"/>") != NULL, "%s", back);
    free(back);
    /* only the one file in the folder */
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
    cr_assert_eq(system(cmd), 0);
    /* an unwritable destination: KW_EIO, nothing created */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/folder/out.xml", dir);
    cr_assert_eq(kw_xml_save_atomic(doc, bad), KW_EIO);
    cr_assert(strstr(kw_error_last(), bad) != NULL, "%s", kw_error_last());
    cr_assert_eq(system(cmd), 0);
    xmlFreeDoc(doc);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

/* libxml2's allocator failing at its Nth allocation (xmlMemSetup): a parse
 * short of memory is KW_ENOMEM (exit 1), never a fault of the file. Under
 * `ulimit -v 45000` tune said "spaces/default.xml:29: XML error", exit 2, of
 * a well-formed file (main 880a621: KW_EINPUT at some N). */
static long kw_txml_left = -1;
static void *kw_txml_malloc(size_t n) { return kw_txml_left >= 0 && kw_txml_left-- == 0 ? NULL : malloc(n); }
static void *kw_txml_realloc(void *p, size_t n)
{
    return kw_txml_left >= 0 && kw_txml_left-- == 0 ? NULL : realloc(p, n);
}
static char *kw_txml_strdup(const char *s) { return kw_txml_left >= 0 && kw_txml_left-- == 0 ? NULL : strdup(s); }

Test(xml, a_parse_short_of_memory_is_out_of_memory_not_bad_input)
{
    static const char text[] = "<?xml version=\"1.0\"?>\n<space name=\"s\">\n"
                               "  <knob name=\"tile_m\" values=\"16 32 64\" baseline=\"32\"/>\n"
                               "  <knob name=\"tile_n\" values=\"16 32\" baseline=\"16\"/>\n"
                               "  <!-- a comment -->\n  <shape name=\"a\" batch=\"1\">text</shape>\n"
                               "</space>\n";
    cr_assert_eq(xmlMemSetup(free, kw_txml_malloc, kw_txml_realloc, kw_txml_strdup), 0);
    /* what libxml2 would print of its own goes to stderr: caught in a file */
    char errp[] = "/tmp/kw_txml_err.XXXXXX";
    int efd = mkstemp(errp);
    cr_assert(efd >= 0);
    fflush(stderr);
    int saved = dup(2);
    cr_assert(saved >= 0 && dup2(efd, 2) == 2);
    int nomem = 0, bad = 0;
    char why[KW_ERROR_MAX + 64] = "";
    for (long n = 0; n < 400; n++) {
        kw_xml_problems p = {0};
        xmlDocPtr doc = NULL;
        kw_txml_left = n;
        int rc = parse(text, &doc, &p);
        kw_txml_left = -1;
        if (!bad && !(rc == 0 || (rc == KW_ENOMEM && p.n == 0 &&
                                  strncmp(kw_error_last(), "mem.xml", 7) == 0 &&
                                  strstr(kw_error_last(), ": out of memory while reading "
                                         "it")))) {
            bad = 1;
            snprintf(why, sizeof why, "allocation %ld failing: rc %d (%.4000s)", n, rc,
                     p.n ? p.text : kw_error_last());
        }
        nomem += rc == KW_ENOMEM;
        xmlFreeDoc(doc);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    struct stat st;
    cr_assert_eq(fstat(efd, &st), 0);
    char printed[512] = "";
    ssize_t got = pread(efd, printed, sizeof printed - 1, 0);
    printed[got > 0 ? got : 0] = '\0';
    close(efd);
    unlink(errp);
    cr_assert_not(bad, "%s", why);
    cr_assert(nomem > 0, "no allocation of the parse was made to fail");
    /* one message, knobwise's: libxml2 printed "error : out of memory error"
     * (and more) on stderr before it until 2026-12-07 */
    cr_assert_eq(st.st_size, 0, "printed on stderr (%lld bytes): %s", (long long)st.st_size,
                 printed);
}
