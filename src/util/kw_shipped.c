/* kw_shipped.c - shipped inputs by name (see kw_shipped.h).
 *
 * A name is looked up only when no such file exists, so adding a shipped
 * space can never change what an existing command line reads. Rejected:
 * searching the current folder's spaces/ as well (a run would then depend on
 * where it was started), and a search path (one folder is enough to explain).
 */
#include "kw_shipped.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kw_error.h"

#ifndef KW_PKGDATADIR
#error "KW_PKGDATADIR must name the installed data folder (Makefile.am)"
#endif

#define KW_SHIPPED_SPACES "spaces"
#define KW_SHIPPED_EXT ".xml"

#ifndef KW_SRCDATADIR
#error "KW_SRCDATADIR must name the source tree (Makefile.am)"
#endif

static int kw_shipped_has_spaces(const char *dir)
{
    char p[4096];
    struct stat st;
    return (size_t)snprintf(p, sizeof p, "%s/%s", dir, KW_SHIPPED_SPACES) < sizeof p &&
           stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *kw_shipped_datadir(void)
{
    const char *e = getenv(KW_SHIPPED_ENV);
    if (e && e[0])
        return e;
    /* a build not yet installed reads its own source tree's spaces, as the
     * installed one will (the installed folder wins once it exists) */
    if (!kw_shipped_has_spaces(KW_PKGDATADIR) && kw_shipped_has_spaces(KW_SRCDATADIR))
        return KW_SRCDATADIR;
    return KW_PKGDATADIR;
}

static int kw_shipped_is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int kw_shipped_space(char *out, size_t size, const char *arg)
{
    struct stat st;
    if ((size_t)snprintf(out, size, "%s", arg) >= size)
        return kw_error_set(KW_EINPUT, "--space %.64s...: path too long", arg);
    if (arg[0] == '\0' || strchr(arg, '/') || stat(arg, &st) == 0)
        return 0;
    size_t n = strlen(arg), el = strlen(KW_SHIPPED_EXT);
    int has_ext = n > el && strcmp(arg + n - el, KW_SHIPPED_EXT) == 0;
    char cand[4096];
    if ((size_t)snprintf(cand, sizeof cand, "%s/%s/%s%s", kw_shipped_datadir(), KW_SHIPPED_SPACES,
                         arg, has_ext ? "" : KW_SHIPPED_EXT) >= sizeof cand ||
        !kw_shipped_is_file(cand))
        return 0;
    if ((size_t)snprintf(out, size, "%s", cand) >= size)
        return kw_error_set(KW_EINPUT, "%s: path too long", cand);
    return 1;
}

static int kw_shipped_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void kw_shipped_list_free(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int kw_shipped_list(char ***names, int *n)
{
    *names = NULL;
    *n = 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", kw_shipped_datadir(), KW_SHIPPED_SPACES);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int cap = 0, rc = 0;
    char **v = NULL;
    size_t el = strlen(KW_SHIPPED_EXT);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l <= el || de->d_name[0] == '.' || strcmp(de->d_name + l - el, KW_SHIPPED_EXT) != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (!kw_shipped_is_file(path))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nv = realloc(v, (size_t)cap * sizeof *nv);
            if (!nv) {
                rc = kw_error_set(KW_ENOMEM, "%s: out of memory", dir);
                goto done;
            }
            v = nv;
        }
        if (!(v[*n] = strndup(de->d_name, l - el))) {
            rc = kw_error_set(KW_ENOMEM, "%s: out of memory", dir);
            goto done;
        }
        (*n)++;
    }
    qsort(v, (size_t)*n, sizeof *v, kw_shipped_cmp);
done:
    closedir(d);
    if (rc != 0) {
        kw_shipped_list_free(v, *n);
        v = NULL;
        *n = 0;
    }
    *names = v;
    return rc;
}
