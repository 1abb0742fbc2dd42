/* kw_evcache.c - the evidence phase's journal (see kw_evcache.h).
 *
 * The file is read once, whole, at open: its good records go into an array
 * sorted by (evaluator, shape, id) and looked up by binary search; records
 * put later are only appended (the evidence asks for each evaluation once).
 * The reader stops at the first record that does not read back (a torn tail
 * after a kill, damage) and the file is cut there before anything is
 * appended, as resume cuts a journal's torn tail.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kw_error.h"
#include "kw_evcache.h"
#include "kw_evend.h"
#include "kw_input.h"
#include "kw_journal.h"
#include "kw_runfile.h"

#define KW_EVCACHE_PATH_MAX 4160

typedef struct kw_evc_ent {
    char which;
    int shape;
    uint64_t id;
    int n;          /* figures kept */
    double *v;
    char *g, *k;    /* guards, class */
} kw_evc_ent;

struct kw_evcache {
    int fd;
    const kw_knobspace *ks;
    uint32_t crc;   /* chained checksum of the last record */
    kw_evc_ent *e;
    size_t n;
    kw_jbuf pend;   /* records put since the last sync, checksummed */
    long kept;
    long added, pend_n; /* written since open; put since the last sync */
    char failed[256];
    int read_only;      /* kw_evcache_open_read: puts and syncs do nothing */
    int format;         /* the header's format (1 or 2; 0 before one is read) */
    int ended;          /* the file's last record is the end record (F) */
    off_t end_at;       /* where the end record starts (ended) */
    uint32_t end_crc;   /* the chained checksum before it (ended) */
};


static int kw_evc_cmp_key(char wa, int sa, uint64_t ia, char wb, int sb, uint64_t ib)
{
    if (wa != wb)
        return wa < wb ? -1 : 1;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    return ia < ib ? -1 : ia > ib ? 1 : 0;
}

static int kw_evc_cmp(const void *a, const void *b)
{
    const kw_evc_ent *x = a, *y = b;
    return kw_evc_cmp_key(x->which, x->shape, x->id, y->which, y->shape, y->id);
}

static void kw_evc_ent_free(kw_evc_ent *e)
{
    free(e->v);
    free(e->g);
    free(e->k);
}

/* One record's payload (escaped, split in place) into *e; -1 when it does
 * not read. */
static int kw_evcache_parse(kw_evc_ent *e, char *payload)
{
    memset(e, 0, sizeof *e);
    char *save = NULL, *tok = strtok_r(payload, " ", &save);
    char *m = NULL, *g = NULL, *k = NULL, *end;
    int have = 0;
    if (!tok || strcmp(tok, "R") != 0)
        return -1;
    while ((tok = strtok_r(NULL, " ", &save)) != NULL) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return -1;
        *eq++ = '\0';
        if (strcmp(tok, "e") == 0 &&
            (eq[0] == KW_EVCACHE_FINAL || eq[0] == KW_EVCACHE_SEARCH || eq[0] == KW_EVCACHE_VERDICT) &&
            eq[1] == '\0') {
            e->which = eq[0];
            have |= 1;
        } else if (strcmp(tok, "s") == 0) {
            long s = strtol(eq, &end, 10);
            if (*end || end == eq || s < 0 || s >= KW_JOURNAL_SHAPE_MAX)
                return -1;
            e->shape = (int)s;
            have |= 2;
        } else if (strcmp(tok, "id") == 0) {
            e->id = strtoull(eq, &end, 16);
            if (*end || end == eq)
                return -1;
            have |= 4;
        } else if (strcmp(tok, "m") == 0) {
            m = eq;
        } else if (strcmp(tok, "g") == 0) {
            g = eq;
        } else if (strcmp(tok, "k") == 0) {
            k = eq;
        } else {
            return -1;
        }
    }
    if (have != 7 || !m || !g || !k || kw_journal_unescape(g) != 0 ||
        kw_journal_unescape(k) != 0 || strlen(g) >= KW_GUARDS_LEN || strlen(k) >= 32)
        return -1;
    e->v = calloc(KW_METRIC_MAX, sizeof *e->v);
    e->g = strdup(g);
    e->k = strdup(k);
    if (!e->v || !e->g || !e->k)
        goto bad;
    for (char *p = m; *p;) {
        if (e->n == KW_METRIC_MAX)
            goto bad;
        e->v[e->n++] = strtod(p, &end);
        if (end == p || (*end != ',' && *end != '\0'))
            goto bad;
        p = *end ? end + 1 : end;
    }
    return 0;
bad:
    kw_evc_ent_free(e);
    memset(e, 0, sizeof *e);
    return -1;
}

typedef struct kw_evcache_read_ctx {
    kw_evcache *c;
    size_t cap;
} kw_evcache_read_ctx;

/* kw_evend_walk's callback: one R record into c's array. */
static int kw_evcache_rec(void *ud, char *payload)
{
    kw_evcache_read_ctx *x = ud;
    kw_evcache *c = x->c;
    if (c->n == x->cap) {
        size_t nc = x->cap ? 2 * x->cap : 256;
        kw_evc_ent *ne = realloc(c->e, nc * sizeof *ne);
        if (!ne)
            return kw_error_set(KW_ENOMEM, "out of memory reading the evidence file");
        c->e = ne;
        x->cap = nc;
    }
    if (kw_evcache_parse(&c->e[c->n], payload) != 0)
        return 1;
    c->n++;
    return 0;
}

/* Read fd's records into c (sorted); the offset after the last good one in *good. */
static int kw_evcache_read(kw_evcache *c, uint32_t tag, off_t *good)
{
    struct stat st;
    *good = 0;
    if (fstat(c->fd, &st) != 0)
        return kw_error_set(KW_EIO, "evidence: %s", strerror(errno));
    if (st.st_size == 0 || st.st_size > KW_EVEND_MAX_BYTES)
        return 0; /* nothing good: the file is cut to nothing */
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf)
        return kw_error_set(KW_ENOMEM, "out of memory reading the evidence file");
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = pread(c->fd, buf + got, (size_t)st.st_size - got, (off_t)got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    kw_evcache_read_ctx x = {c, 0};
    kw_evend e;
    int rc = kw_evend_walk(&e, buf, got, tag, kw_evcache_rec, &x);
    c->format = e.format;
    c->ended = e.ended;
    c->end_at = e.end_at;
    c->end_crc = e.end_crc;
    *good = e.good;
    free(buf);
    c->crc = e.crc;
    c->kept = (long)c->n;
    if (c->n > 1)
        qsort(c->e, c->n, sizeof *c->e, kw_evc_cmp);
    return rc;
}

/* Append payload's record (checksummed) to c->pend. */
static void kw_evcache_add(kw_evcache *c, const char *payload, size_t len)
{
    c->crc = kw_crc_32(kw_crc_32(c->crc, payload, len), "\n", 1);
    kw_journal_buf_printf(&c->pend, " crc=%08x\n", (unsigned)c->crc);
}

int kw_evcache_open(kw_evcache **out, const char *dir, const kw_knobspace *ks)
{
    char path[KW_EVCACHE_PATH_MAX], journal[KW_EVCACHE_PATH_MAX];
    *out = NULL;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, KW_RUNFOLDER_EVIDENCE) >= sizeof path ||
        (size_t)snprintf(journal, sizeof journal, "%s/%s", dir, KW_RUNFOLDER_JOURNAL_NAME) >=
            sizeof journal)
        return kw_error_set(KW_EIO, "%s: path too long", dir);
    int ok;
    uint32_t tag = kw_evend_run_tag(journal, &ok);
    if (!ok)
        return kw_error_set(KW_EIO, "%s: no journal header to tie the evidence to", journal);
    kw_evcache *c = calloc(1, sizeof *c);
    if (!c)
        return kw_error_set(KW_ENOMEM, "out of memory opening the evidence file");
    c->ks = ks;
    /* never through a link, never a file with another name: a link is
     * replaced by a file of the run's own (nothing outside is touched) */
    for (int tries = 0; tries < 2; tries++) {
        c->fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        struct stat st;
        if (c->fd >= 0 && fstat(c->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink <= 1)
            break;
        int e = c->fd >= 0 ? EEXIST : errno;
        if (c->fd >= 0)
            close(c->fd);
        c->fd = -1;
        if (tries == 0 && (e == ELOOP || e == EEXIST || e == ENXIO) && unlink(path) == 0)
            continue;
        kw_evcache_free(c);
        return kw_error_set(KW_EIO, "%s: cannot open: %s", path,
                            e == EEXIST ? "not a file of its own" : strerror(e));
    }
    /* its name in the run folder survives a power loss (its records are
     * fsync'd by kw_evcache_sync, its directory entry was not): once per
     * opening process, never in the evidence loop */
    if (kw_input_sync_dir_of(path) != 0) {
        kw_evcache_free(c);
        return KW_EIO;
    }
    off_t good = 0;
    int rc = kw_evcache_read(c, tag, &good);
    if (rc == 0 && ftruncate(c->fd, good) != 0)
        rc = kw_error_set(KW_EIO, "%s: cannot cut its damaged tail: %s", path, strerror(errno));
    if (rc == 0 && lseek(c->fd, good, SEEK_SET) < 0)
        rc = kw_error_set(KW_EIO, "%s: %s", path, strerror(errno));
    if (rc != 0) {
        kw_evcache_free(c);
        return rc;
    }
    if (good == 0) {
        c->crc = 0;
        c->format = KW_EVCACHE_FORMAT;
        kw_journal_buf_printf(&c->pend, "X format=%d run=%08x", KW_EVCACHE_FORMAT,
                              (unsigned)tag);
        kw_evcache_add(c, c->pend.s, c->pend.len);
        kw_evcache_sync(c);
        if (c->failed[0]) {
            rc = kw_error_set(KW_EIO, "%s", c->failed);
            kw_evcache_free(c);
            return rc;
        }
    }
    *out = c;
    return 0;
}

int kw_evcache_open_read(kw_evcache **out, const char *dir, const kw_knobspace *ks)
{
    char path[KW_EVCACHE_PATH_MAX], journal[KW_EVCACHE_PATH_MAX];
    *out = NULL;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, KW_RUNFOLDER_EVIDENCE) >= sizeof path ||
        (size_t)snprintf(journal, sizeof journal, "%s/%s", dir, KW_RUNFOLDER_JOURNAL_NAME) >=
            sizeof journal)
        return 0;
    int ok;
    uint32_t tag = kw_evend_run_tag(journal, &ok);
    if (!ok)
        return 0;
    /* never through a link; a FIFO must not block the run: non-blocking,
     * and only a regular file is read */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return 0;
    }
    kw_evcache *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return kw_error_set(KW_ENOMEM, "out of memory reading the evidence file");
    }
    c->fd = fd;
    c->ks = ks;
    c->read_only = 1;
    off_t good;
    int rc = kw_evcache_read(c, tag, &good);
    close(c->fd);
    c->fd = -1;
    if (rc != 0) {
        kw_evcache_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int kw_evcache_get(const kw_evcache *c, char which, int shape, const kw_cand *cand,
                   kw_metrics *m)
{
    if (!c || c->n == 0)
        return 0;
    return kw_evcache_get_id(c, which, shape, kw_knobs_cand_id(c->ks, cand), m);
}

int kw_evcache_get_id(const kw_evcache *c, char which, int shape, uint64_t id, kw_metrics *m)
{
    if (!c || c->n == 0)
        return 0;
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const kw_evc_ent *e = &c->e[mid];
        int d = kw_evc_cmp_key(e->which, e->shape, e->id, which, shape, id);
        if (d == 0) {
            memset(m, 0, sizeof *m);
            memcpy(m->v, e->v, (size_t)e->n * sizeof *m->v);
            snprintf(m->guards, sizeof m->guards, "%s", e->g);
            snprintf(m->klass, sizeof m->klass, "%s", e->k);
            return 1;
        }
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

void kw_evcache_put(kw_evcache *c, char which, int shape, const kw_cand *cand,
                    const kw_metrics *m, int n_metrics)
{
    if (!c || c->failed[0] || c->read_only)
        return;
    kw_evcache_put_id(c, which, shape, kw_knobs_cand_id(c->ks, cand), m, n_metrics);
}

void kw_evcache_put_id(kw_evcache *c, char which, int shape, uint64_t id, const kw_metrics *m,
                       int n_metrics)
{
    if (!c || c->failed[0] || c->read_only)
        return;
    if (c->ended) {
        /* an evaluation the finished evidence did not make (the evidence
         * asks for another set): the end record goes, and comes back at
         * the next kw_evcache_end */
        if (ftruncate(c->fd, c->end_at) != 0 || lseek(c->fd, c->end_at, SEEK_SET) < 0) {
            snprintf(c->failed, sizeof c->failed, "evidence: cannot cut its end record: %s",
                     strerror(errno));
            return;
        }
        c->ended = 0;
        c->crc = c->end_crc;
    }
    size_t start = c->pend.len;
    kw_journal_buf_printf(&c->pend, "R e=%c s=%d id=%016llx m=", which, shape, (unsigned long long)id);
    for (int i = 0; i < n_metrics && i < KW_METRIC_MAX; i++) {
        if (i)
            kw_journal_buf_printf(&c->pend, ",");
        kw_journal_buf_dbl(&c->pend, NULL, m->v[i]);
    }
    kw_journal_buf_str(&c->pend, "g", m->guards);
    kw_journal_buf_str(&c->pend, "k", m->klass);
    if (!c->pend.oom) {
        kw_evcache_add(c, c->pend.s + start, c->pend.len - start);
        c->pend_n++;
    }
}

void kw_evcache_sync(kw_evcache *c)
{
    if (!c || c->failed[0] || c->read_only)
        return;
    if (c->pend.oom) {
        snprintf(c->failed, sizeof c->failed, "out of memory keeping the evidence");
        return;
    }
    size_t off = 0;
    while (off < c->pend.len) {
        ssize_t w = write(c->fd, c->pend.s + off, c->pend.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(c->failed, sizeof c->failed, "evidence: cannot write: %s",
                     w < 0 ? strerror(errno) : "short write");
            return;
        }
        off += (size_t)w;
    }
    if (c->pend.len && fsync(c->fd) != 0) {
        snprintf(c->failed, sizeof c->failed, "evidence: cannot fsync: %s", strerror(errno));
        return;
    }
    kw_journal_buf_reset(&c->pend);
    c->added += c->pend_n;
    c->pend_n = 0;
}

void kw_evcache_end(kw_evcache *c)
{
    if (!c || c->failed[0] || c->read_only || c->ended)
        return;
    kw_evcache_sync(c); /* the R records first: the end record counts them */
    if (c->failed[0])
        return;
    off_t at = lseek(c->fd, 0, SEEK_CUR);
    uint32_t before = c->crc;
    kw_journal_buf_printf(&c->pend, "F n=%ld", c->kept + c->added);
    kw_evcache_add(c, c->pend.s, c->pend.len);
    kw_evcache_sync(c);
    if (!c->failed[0]) {
        c->ended = 1;
        c->end_at = at;
        c->end_crc = before;
    }
}

int kw_evcache_reopen(const char *dir, const kw_knobspace *ks)
{
    char path[KW_EVCACHE_PATH_MAX];
    struct stat st;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, KW_RUNFOLDER_EVIDENCE) >= sizeof path ||
        lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0; /* no file of its own: nothing says the phase ended */
    kw_evcache *c = NULL;
    int rc = kw_evcache_open(&c, dir, ks);
    if (rc == 0 && c->ended) {
        if (ftruncate(c->fd, c->end_at) != 0 || fsync(c->fd) != 0)
            rc = kw_error_set(KW_EIO, "%s: cannot cut its end record: %s", path,
                              strerror(errno));
    }
    kw_evcache_free(c);
    return rc;
}

long kw_evcache_kept(const kw_evcache *c) { return c ? c->kept : 0; }

long kw_evcache_added(const kw_evcache *c) { return c ? c->added : 0; }

const char *kw_evcache_failed(const kw_evcache *c) { return c ? c->failed : ""; }

void kw_evcache_free(kw_evcache *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    for (size_t i = 0; i < c->n; i++)
        kw_evc_ent_free(&c->e[i]);
    free(c->e);
    kw_journal_buf_free(&c->pend);
    free(c);
}
