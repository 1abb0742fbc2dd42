/* kw_testutil.h - helpers for end-to-end tests that run the built knobwise
 * binary (KW_BIN) in a temporary folder and read its exit status, stdout and
 * stderr. Header-only so each test program stays one file. */
#ifndef KW_TESTUTIL_H
#define KW_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct kw_run {
    int status;      /* exit status, or 128+signal */
    char *out;       /* stdout, NUL-terminated (malloc) */
    char *err;       /* stderr */
} kw_run;

static inline const char *kw_t_bin(void)
{
    const char *b = getenv("KW_BIN");
    return b ? b : "./knobwise";
}

static inline const char *kw_t_src(void)
{
    const char *s = getenv("KW_SRCDIR");
    return s ? s : ".";
}

static inline char *kw_t_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
    fclose(f);
    return b;
}

/* A fresh temporary folder (caller frees the string). */
static inline char *kw_t_tmpdir(void)
{
    char *d = strdup("/tmp/kwtest.XXXXXX");
    if (!mkdtemp(d)) {
        free(d);
        return NULL;
    }
    return d;
}

/* Column `name` of the first data row of a header + rows CSV (no quoted
 * fields, as `knobwise eval --format csv` writes), copied into buf. Returns
 * the header's column count, with buf "" when the column is absent. */
static inline int kw_t_csv_col(const char *csv, const char *name, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *data = strchr(csv, '\n');
    if (!data)
        return 0;
    data++;
    int cols = 0;
    const char *h = csv, *d = data;
    while (h < data - 1) {
        size_t hl = strcspn(h, ",\n"), dl = d ? strcspn(d, ",\n") : 0;
        if (d && hl == strlen(name) && strncmp(h, name, hl) == 0)
            snprintf(buf, len, "%.*s", (int)dl, d);
        cols++;
        h += hl + 1;
        d = d && d[dl] == ',' ? d + dl + 1 : NULL;
    }
    return cols;
}

/* Run `knobwise ARGS` through the shell (args are shell words), with optional stdin text. */
static inline kw_run kw_t_run(const char *args, const char *stdin_text)
{
    kw_run r = {0, NULL, NULL};
    char *dir = kw_t_tmpdir();
    char cmd[8192], o[256], e[256], i[256];
    snprintf(o, sizeof o, "%s/out", dir);
    snprintf(e, sizeof e, "%s/err", dir);
    snprintf(i, sizeof i, "%s/in", dir);
    FILE *fi = fopen(i, "w");
    if (stdin_text)
        fputs(stdin_text, fi);
    fclose(fi);
    snprintf(cmd, sizeof cmd, "'%s' %s <'%s' >'%s' 2>'%s'", kw_t_bin(), args, i, o, e);
    int st = system(cmd);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = kw_t_slurp(o);
    r.err = kw_t_slurp(e);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) { /* best effort */ }
    free(dir);
    return r;
}

static inline void kw_t_free(kw_run *r)
{
    free(r->out);
    free(r->err);
}

static inline int kw_t_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

#endif
