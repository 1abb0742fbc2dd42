/* test_docs.c - the documentation says what the program does: README.md and
 * knobwise.1 against the built binary.
 *
 * Generic on purpose: the verbs come from `knobwise --help`, each verb's
 * options from its own `--help`, so a verb or option added later fails here
 * until README's "#### `knobwise VERB`" section and the man page's ".SS VERB"
 * subsection document it. The column lists are compared with the headers the
 * program writes (a small tune, recommend --all, eval, show), so README and
 * the man page cannot drift from the files again (README once gave
 * `eval --stdin` 13 columns while it wrote 27).
 */
#include <criterion/criterion.h>
#include <ctype.h>

#include "lib/kw_tl.h"
#include "config.h"
#include "kw_journal.h"
#include "kw_results.h"

/* each test's hang guard (KW_TL_HANG_GUARD, not Criterion's .timeout) */
static void kw_docs_guard(void) { KW_TL_HANG_GUARD(300); }
TestSuite(docs, .init = kw_docs_guard);

/* The tests run in temporary folders: the binary and the source tree as
 * absolute paths (tests/lib), so the suite also runs outside make check. */
static const char *bin(void)
{
    return kw_tl_bin();
}

static char *src_file(const char *rel)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", kw_tl_src(), rel);
    size_t n;
    char *b = kw_tl_slurp_n(p, &n);
    cr_assert_not_null(b, "%s", p);
    return b;
}

/* The man page with roff escapes undone: \- -> -, \e -> \, \& -> "". */
static char *man_text(void)
{
    char *m = src_file("knobwise.1");
    char *o = m;
    for (const char *s = m; *s;) {
        if (s[0] == '\\' && s[1] == '-') {
            *o++ = '-';
            s += 2;
        } else if (s[0] == '\\' && s[1] == 'e') {
            *o++ = '\\';
            s += 2;
        } else if (s[0] == '\\' && s[1] == '&') {
            s += 2;
        } else {
            *o++ = *s++;
        }
    }
    *o = '\0';
    return m;
}

/* The text from the line starting with `start` to the next line starting
 * with any of the stop prefixes (malloc; NULL when start is absent). */
static char *section(const char *doc, const char *start, const char *const *stops, int n_stops)
{
    const char *a = NULL;
    for (const char *l = doc; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, start, strlen(start)) == 0 &&
            (l[strlen(start)] == '\n' || l[strlen(start)] == '\0')) {
            a = l;
            break;
        }
    if (!a)
        return NULL;
    const char *e = strchr(a, '\n');
    const char *l = e ? e + 1 : NULL;
    for (; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        int stop = 0;
        for (int i = 0; i < n_stops; i++)
            stop |= strncmp(l, stops[i], strlen(stops[i])) == 0;
        if (stop)
            break;
    }
    size_t len = l && *l ? (size_t)(l - a) : strlen(a);
    char *out = malloc(len + 1);
    memcpy(out, a, len);
    out[len] = '\0';
    return out;
}

/* opt ("--seed" or "-o") occurs in text as a whole option name. */
static int has_opt(const char *text, const char *opt)
{
    size_t n = strlen(opt);
    for (const char *s = text; (s = strstr(s, opt)) != NULL; s += n) {
        /* a roff font change (\fB--seed) counts as a boundary */
        int before_ok = s == text || !(isalnum((unsigned char)s[-1]) || s[-1] == '-') ||
                        (s - text >= 3 && s[-3] == '\\' && s[-2] == 'f');
        int after_ok = !(isalnum((unsigned char)s[n]) || s[n] == '-' || s[n] == '_');
        if (before_ok && after_ok)
            return 1;
    }
    return 0;
}

typedef struct opts {
    int n;
    char name[64][40];
} opts;

/* Options named in a verb's --help: --long ones and single-letter -x ones. */
static void help_opts(opts *o, const char *help)
{
    o->n = 0;
    for (const char *s = help; *s; s++) {
        if (*s != '-' || (s > help && (isalnum((unsigned char)s[-1]) || s[-1] == '-')))
            continue;
        const char *e = s + 1;
        if (*e == '-')
            e++;
        else if (!(islower((unsigned char)*e) && !isalnum((unsigned char)e[1]) && e[1] != '-'))
            continue;
        while (isalnum((unsigned char)*e) || *e == '-')
            e++;
        size_t len = (size_t)(e - s);
        if (len < 2 || len >= sizeof o->name[0] || (s[1] == '-' && len < 4) || e[-1] == '-')
            continue;
        char nm[40];
        snprintf(nm, sizeof nm, "%.*s", (int)len, s);
        if (strcmp(nm, "--help") == 0)
            continue;
        int dup = 0;
        for (int i = 0; i < o->n; i++)
            dup |= strcmp(o->name[i], nm) == 0;
        if (!dup && o->n < 64)
            snprintf(o->name[o->n++], sizeof o->name[0], "%s", nm);
        s = e - 1;
    }
}

Test(docs, every_option_of_every_verb_is_in_readme_and_the_man_page)
{
    kw_tl_opts po = {.timeout_s = 60};
    kw_tl_proc top = kw_tl_run(&po, bin(), "--help", NULL);
    cr_assert_eq(top.status, 0);
    char *readme = src_file("README.md");
    char *man = man_text();
    cr_assert(strstr(man, "\n.SH OPTIONS\n") && strstr(man, "\n.SH FILES\n") &&
              strstr(man, "\n.SH EXIT STATUS\n") && strstr(man, "\n.SH EXAMPLES\n"));
    static const char *const md_stops[] = {"#"};
    static const char *const man_stops[] = {".SS", ".SH"};
    int n_verbs = 0;
    for (const char *l = top.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char verb[32];
        /* verb lines: two spaces, the verb, spaces, its summary */
        if (strncmp(l, "  ", 2) != 0 || !islower((unsigned char)l[2]) ||
            sscanf(l + 2, "%31[a-z]", verb) != 1 || l[2 + strlen(verb)] != ' ')
            continue;
        n_verbs++;
        char head[96];
        snprintf(head, sizeof head, "#### `knobwise %s`", verb);
        char *md = section(readme, head, md_stops, 1);
        cr_expect_not_null(md, "README has no section '%s'", head);
        snprintf(head, sizeof head, ".SS %s", verb);
        char *mn = section(man, head, man_stops, 2);
        cr_expect_not_null(mn, "knobwise.1 has no subsection '%s' under OPTIONS", head);
        kw_tl_proc h = kw_tl_run(&po, bin(), verb, "--help", NULL);
        cr_assert_eq(h.status, 0, "%s --help: %s", verb, h.err);
        opts o;
        help_opts(&o, h.out);
        for (int i = 0; i < o.n; i++) {
            char tick[48];
            snprintf(tick, sizeof tick, "`%s", o.name[i]);
            cr_expect(md && strstr(md, tick), "README's knobwise %s section lacks %s", verb,
                      o.name[i]);
            cr_expect(mn && has_opt(mn, o.name[i]), "knobwise.1's %s subsection lacks %s", verb,
                      o.name[i]);
        }
        free(md);
        free(mn);
        kw_tl_free(&h);
    }
    cr_assert_geq(n_verbs, 9, "%s", top.out);
    kw_tl_free(&top);
    free(readme);
    free(man);
}

/* The first line of a file. */
static void first_line(char *out, size_t n, const char *dir, const char *rel)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f, "%s", p);
    cr_assert_not_null(fgets(out, (int)n, f));
    out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

static void documented(const char *readme, const char *man, const char *header, const char *what)
{
    char want[4200];
    snprintf(want, sizeof want, "`%s`", header);
    cr_expect(strstr(readme, want), "README lacks the %s header `%s`", what, header);
    snprintf(want, sizeof want, "\n%s\n", header);
    cr_expect(strstr(man, want), "knobwise.1 lacks the %s header %s", what, header);
}

Test(docs, documented_headers_are_the_ones_written)
{
    char *d = kw_tl_tmpdir("kwdocs");
    cr_assert_not_null(d);
    char space[4096];
    snprintf(space, sizeof space, "%s/spaces/validate_small.xml", kw_tl_src());
    kw_tl_opts po = {.timeout_s = 120, .cwd = d};
    kw_tl_proc r = kw_tl_run(&po, bin(), "tune", "--space", space, "--budget", "5", "--quiet", "--out",
                         "run", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    r = kw_tl_run(&po, bin(), "recommend", "run", "--all", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    kw_tl_free(&r);
    char *readme = src_file("README.md");
    char *man = man_text();
    char h[4096];
    static const char *const files[] = {"ranked.csv", "audit.csv", "portability.csv"};
    for (int i = 0; i < 3; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "run/%s", files[i]);
        first_line(h, sizeof h, d, rel);
        documented(readme, man, h, files[i]);
    }
    /* mappings.csv: the contract's first columns, the knobs of the space (as
     * show --format csv lists them), the added columns; documented with the
     * knobs as "<every knob of the space>" */
    first_line(h, sizeof h, d, "run/mappings.csv");
    r = kw_tl_run(&po, bin(), "show", "--space", space, "--format", "csv", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char knobs[4096] = "";
    size_t u = 0;
    for (const char *l = r.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, "knob,", 5) == 0)
            u += (size_t)snprintf(knobs + u, sizeof knobs - u, ",%.*s", (int)strcspn(l + 5, ","),
                                  l + 5);
    char first[4200];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    documented(readme, man, first, "show --format csv");
    kw_tl_free(&r);
    const char *prefix = "shape,config_id,borrowed_from";
    cr_assert(strncmp(h, prefix, strlen(prefix)) == 0, "%s", h);
    cr_assert(strncmp(h + strlen(prefix), knobs, strlen(knobs)) == 0, "%s vs %s", h, knobs);
    char tmpl[4200];
    snprintf(tmpl, sizeof tmpl, "%s,<every knob of the space>%s", prefix,
             h + strlen(prefix) + strlen(knobs));
    documented(readme, man, tmpl, "mappings.csv");
    /* eval --format csv and eval --stdin write the same header */
    r = kw_tl_run(&po, bin(), "eval", "--format", "csv", "--shape", "attn_decode_kv512_b1_c1", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(h, sizeof h, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    kw_tl_free(&r);
    r = kw_tl_run(&po, bin(), "eval", "--stdin", NULL); /* stdin is /dev/null: the header only */
    cr_assert_eq(r.status, 0, "%s", r.err);
    char hs[4096];
    snprintf(hs, sizeof hs, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    kw_tl_free(&r);
    cr_assert_str_eq(h, hs);
    documented(readme, man, h, "eval csv");
    r = kw_tl_run(&po, bin(), "show", "--catalogue", "--format", "csv", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(h, sizeof h, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    kw_tl_free(&r);
    documented(readme, man, h, "show --catalogue --format csv");
    free(readme);
    free(man);
    kw_tl_rmrf(d);
}

/* One field of a CSV line (RFC 4180 quotes), from *p; advances *p. */
static void csv_next(char *out, size_t n, const char **p)
{
    size_t u = 0;
    const char *s = *p;
    if (*s == '"') {
        for (s++; *s && !(*s == '"' && s[1] != '"'); s++) {
            if (*s == '"')
                s++;
            if (u + 1 < n)
                out[u++] = *s;
        }
        if (*s == '"')
            s++;
    } else {
        for (; *s && *s != ',' && *s != '\n'; s++)
            if (u + 1 < n)
                out[u++] = *s;
    }
    out[u] = '\0';
    if (*s == ',')
        s++;
    *p = s;
}

Test(docs, readme_catalogue_is_the_programs)
{
    kw_tl_opts po = {.timeout_s = 60};
    kw_tl_proc r = kw_tl_run(&po, bin(), "show", "--catalogue", "--format", "csv", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *readme = src_file("README.md");
    int rows = 0;
    const char *l = strchr(r.out, '\n');
    for (l = l ? l + 1 : NULL; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char f[5][512], vals[1024];
        const char *p = l;
        for (int i = 0; i < 5; i++)
            csv_next(f[i], sizeof f[i], &p);
        /* a '|' in a markdown table cell is written \| */
        size_t u = 0;
        for (const char *v = f[2]; *v && u + 2 < sizeof vals; v++) {
            if (*v == '|')
                vals[u++] = '\\';
            vals[u++] = *v;
        }
        vals[u] = '\0';
        char want[4096];
        snprintf(want, sizeof want, "| `%s` | %s | `%s` | %s | %s |\n", f[0], f[1], vals, f[3], f[4]);
        cr_expect(strstr(readme, want), "README's knob catalogue lacks the row %s", want);
        rows++;
    }
    cr_assert_geq(rows, 20);
    free(readme);
    kw_tl_free(&r);
}

/* NEWS's newest entry names the format versions this program writes (the
 * journal's H format=, results.xml's format attribute, export's
 * format_version), so a format change cannot ship without its NEWS entry. */
Test(docs, news_names_the_formats_written)
{
    char *news = src_file("NEWS");
    char *entry = strstr(news, "\n* knobwise ");
    cr_assert_not_null(entry, "NEWS has no '* knobwise VERSION' entry");
    char *eol = strchr(entry + 1, '\n');
    cr_assert_not_null(eol);
    *eol = '\0';
    char want[128];
    snprintf(want, sizeof want, "* knobwise %s ", PACKAGE_VERSION);
    cr_expect_not_null(strstr(entry, want), "newest NEWS entry '%s' is not %s", entry + 1,
                       PACKAGE_VERSION);
    snprintf(want, sizeof want, "journal format %d,", KW_JOURNAL_FORMAT);
    cr_expect_not_null(strstr(entry, want), "'%s' lacks '%s'", entry + 1, want);
    snprintf(want, sizeof want, "results format %d,", KW_RESULTS_FORMAT);
    cr_expect_not_null(strstr(entry, want), "'%s' lacks '%s'", entry + 1, want);
    free(news);
}
