/* kw_journal.c - writing, reading and checking the run journal (format in kw_journal.h).
 *
 * Design: a line-oriented text file with a CHAINED CRC-32 per record. Text, so a
 * person can read a night's run with less(1) and a torn write is just a short
 * last line; chained, so deleting or reordering a record in the middle is caught
 * as surely as flipping a byte. The reader streams the file with getline() and
 * decides about a bad record only once it knows whether another record follows:
 * a bad LAST record is a torn write (left out, reported), a bad record in the
 * middle is corruption (refused with its record number). Rejected alternative: a
 * binary log with length prefixes - smaller, but unreadable without a tool and
 * no more robust against torn writes.
 *
 * One reader (kw_journal_read) serves both APIs: kw_journal_load keeps every
 * record (arrays, arena, index), kw_journal_scan hands each record to a
 * callback and keeps nothing, so a 1,000,000-evaluation journal (~0.5 GB) can
 * be summarised in constant memory with the same checksum and torn-tail rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_CONFIG_H
#include "config.h" /* PACKAGE_VERSION: a journal from a newer knobwise is refused */
#endif
#include "kw_grow.h"
#include "kw_input.h"
#include "kw_journal.h"
#include "kw_reduce.h"

/* ------------------------------------------------------------------ CRC-32 */

/* kw_crc_32: search/kw_crc.c (linked into libknobwise too, which reads
 * RUN/evidence's end: src/run/kw_evend.c; until 2026-12-07 kw_journal_crc32 here) */

static uint32_t kw_crc_record(uint32_t prev, const char *payload, size_t len)
{
    return kw_crc_32(kw_crc_32(prev, payload, len), "\n", 1);
}

/* ------------------------------------------------------------------ names */

static const char *const kw_decision_names[] = {"accept", "reject", "explore",
                                                "revert", "keep",   "constraint"};
static const char *const kw_phase_names[] = {"main", "probe", "explore", "backtrack", "fix",
                                             "settle", "rerank"};
static const char *const kw_strategy_names[] = {"ofat", "random", "exhaustive"};
static const char *const kw_policy_names[] = {"sweep", "greedy"};

static int kw_name_parse(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

#define KW_NAMES_N(a) ((int)(sizeof(a) / sizeof(a[0])))

const char *kw_journal_decision_name(kw_decision d)
{
    return (unsigned)d < (unsigned)KW_NAMES_N(kw_decision_names) ? kw_decision_names[d] : "?";
}
int kw_journal_decision_taken(kw_decision d)
{
    return d == KW_DECIDE_ACCEPT || d == KW_DECIDE_EXPLORE || d == KW_DECIDE_REVERT;
}
int kw_journal_decision_parse(const char *s)
{
    return kw_name_parse(kw_decision_names, KW_NAMES_N(kw_decision_names), s);
}
const char *kw_journal_step_phase_name(kw_step_phase p)
{
    return (unsigned)p < (unsigned)KW_NAMES_N(kw_phase_names) ? kw_phase_names[p] : "?";
}
int kw_journal_step_phase_parse(const char *s)
{
    return kw_name_parse(kw_phase_names, KW_NAMES_N(kw_phase_names), s);
}
const char *kw_journal_strategy_name(kw_strategy s)
{
    return (unsigned)s < (unsigned)KW_NAMES_N(kw_strategy_names) ? kw_strategy_names[s] : "?";
}
int kw_journal_strategy_parse(const char *s)
{
    return kw_name_parse(kw_strategy_names, KW_NAMES_N(kw_strategy_names), s);
}
const char *kw_journal_policy_name(kw_policy p)
{
    return (unsigned)p < (unsigned)KW_NAMES_N(kw_policy_names) ? kw_policy_names[p] : "?";
}
int kw_journal_policy_parse(const char *s)
{
    return kw_name_parse(kw_policy_names, KW_NAMES_N(kw_policy_names), s);
}

/* ------------------------------------------------------------------ buffers */

void kw_journal_buf_reset(kw_jbuf *b)
{
    b->len = 0;
    if (b->s)
        b->s[0] = '\0';
}

void kw_journal_buf_free(kw_jbuf *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

static int kw_jbuf_grow(kw_jbuf *b, size_t extra)
{
    if (b->oom)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

static void kw_jbuf_add(kw_jbuf *b, const char *s, size_t n)
{
    if (kw_jbuf_grow(b, n) != 0)
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void kw_journal_buf_printf(kw_jbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof tmp) {
        kw_jbuf_add(b, tmp, (size_t)n);
        return;
    }
    if (kw_jbuf_grow(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static int kw_esc_needed(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f || c == '%' || c == '=' || c == ',' || c == '#';
}

static void kw_jbuf_esc(kw_jbuf *b, const char *v)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)(v ? v : ""); *p; p++) {
        if (kw_esc_needed(*p)) {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            kw_jbuf_add(b, e, 3);
        } else {
            kw_jbuf_add(b, (const char *)p, 1);
        }
    }
}

void kw_journal_buf_str(kw_jbuf *b, const char *key, const char *value)
{
    if (key)
        kw_journal_buf_printf(b, " %s=", key);
    kw_jbuf_esc(b, value);
}

/* Shortest %g precision that reads back to the same double: keeps the journal
 * small (model figures are usually short) while replay stays bit-exact. */
static void kw_fmt_dbl(char *buf, size_t n, double v)
{
    if (isnan(v)) {
        snprintf(buf, n, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v > 0 ? "inf" : "-inf");
        return;
    }
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

void kw_journal_buf_dbl(kw_jbuf *b, const char *key, double v)
{
    char t[40];
    kw_fmt_dbl(t, sizeof t, v);
    if (key)
        kw_journal_buf_printf(b, " %s=%s", key, t);
    else
        kw_journal_buf_printf(b, "%s", t);
}

void kw_journal_buf_cand(kw_jbuf *b, const char *key, const kw_knobspace *ks, const kw_cand *c)
{
    kw_journal_buf_printf(b, " %s=", key);
    for (int i = 0; i < ks->n_knobs; i++)
        kw_journal_buf_printf(b, i ? ".%u" : "%u", (unsigned)c->v[i]);
}

/* ------------------------------------------------------------------ writer */

static int kw_journal_open_file(int *fd, const char *path, int how, const kw_journal *read);

struct kw_jwriter {
    int fd;
    char *path;
    uint32_t crc;        /* chained checksum of the last record added */
    uint32_t *old;       /* checksums of the records already in the file */
    size_t n_old;
    long added;          /* records added (replayed + new) */
    int no_sync;
    kw_jbuf pending;     /* new records not yet written */
};

/* The writer's own lock on the journal (an OFD write lock on fd, held until
 * fd is closed), besides the run folder's RUN/.lock: a user who removes a
 * .lock as a stale one (git's index.lock habit) while the run goes on let a
 * second `tune --resume` write the same journal, and both appended to it
 * (record 423: checksum mismatch, the run lost; until 2026-12-07). KW_EINPUT
 * when another open file holds it; 0 also where the file system has no
 * locks (RUN/.lock's own lock then failed first). */
static int kw_journal_lock(int fd, const char *path)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_SETLK, &fl) == 0 || (errno != EAGAIN && errno != EACCES))
        return 0;
    return kw_error_set(KW_EINPUT, "%s: another knobwise is writing this journal (the run "
                        "folder's .lock was removed or replaced while it ran); wait for it to "
                        "finish", path);
}

int kw_journal_writer_open(kw_jwriter **out, const char *path, const kw_journal *read,
                           const uint32_t *old_crcs, size_t n_old, int no_sync)
{
    kw_jwriter *w = calloc(1, sizeof *w);
    if (!w)
        return kw_error_set(KW_ENOMEM, "out of memory opening the journal");
    w->fd = -1;
    w->path = strdup(path);
    if (!w->path)
        goto oom;
    if (n_old > 0) {
        w->old = malloc(n_old * sizeof *w->old);
        if (!w->old)
            goto oom;
        memcpy(w->old, old_crcs, n_old * sizeof *w->old);
    }
    w->n_old = n_old;
    w->no_sync = no_sync;
    /* never through a symbolic link (a link planted at RUN/journal would put
     * the journal outside the run folder); a new journal is created, never
     * taken over (O_EXCL: a link or anything else there is refused), a
     * resumed one must already be there and is opened as its reader opened
     * it (kw_journal_open_file: a regular file, not a link, the file lstat saw) */
    int rc = 0;
    if (n_old == 0) {
        w->fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_CREAT | O_EXCL, 0644);
        if (w->fd < 0) {
            int err = errno;
            rc = kw_error_set(err == ELOOP || err == EEXIST ? KW_EINPUT : KW_EIO,
                              "%s: cannot open the journal: %s", path,
                              err == ELOOP ? "it is a symbolic link" : strerror(err));
        } else {
            /* the new journal's name in its folder survives a power loss:
             * its records are fsync'd, its directory entry was not */
            rc = kw_input_sync_dir_of(path);
        }
    } else {
        rc = kw_journal_open_file(&w->fd, path, KW_INPUT_APPEND, read);
    }
    if (rc == 0)
        rc = kw_journal_lock(w->fd, path);
    if (rc != 0) {
        kw_journal_writer_free(w);
        return rc;
    }
    *out = w;
    return 0;
oom:
    kw_journal_writer_free(w);
    return kw_error_set(KW_ENOMEM, "out of memory opening the journal");
}

int kw_journal_writer_add(kw_jwriter *w, const char *payload)
{
    size_t len = strlen(payload);
    if (len + KW_JOURNAL_CRC_TAG_LEN > KW_JOURNAL_RECORD_MAX)
        return kw_error_set(KW_ESTATE, "%s: record %ld: %zu bytes, longer than a journal record "
                            "may be (%d)", w->path, w->added + 1, len, KW_JOURNAL_RECORD_MAX);
    uint32_t crc = kw_crc_record(w->crc, payload, len);
    if ((size_t)w->added < w->n_old) {
        if (crc != w->old[w->added])
            return kw_error_set(KW_ECORRUPT,
                                "%s: record %ld: the resumed run does not regenerate the "
                                "journal's record (inputs, evaluator or knobwise changed): %.120s",
                                w->path, w->added + 1, payload);
    } else {
        kw_jbuf_add(&w->pending, payload, len);
        kw_journal_buf_printf(&w->pending, " crc=%08x\n", (unsigned)crc);
        if (w->pending.oom)
            return kw_error_set(KW_ENOMEM, "out of memory buffering journal records");
    }
    w->crc = crc;
    w->added++;
    return 0;
}

int kw_journal_writer_commit(kw_jwriter *w)
{
    size_t off = 0;
    while (off < w->pending.len) {
        ssize_t n = write(w->fd, w->pending.s + off, w->pending.len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return kw_error_set(KW_EIO, "%s: cannot write the journal: %s", w->path,
                                n < 0 ? strerror(errno) : "short write");
        off += (size_t)n;
    }
    int had = w->pending.len > 0;
    kw_journal_buf_reset(&w->pending);
    if (had && !w->no_sync && fsync(w->fd) != 0)
        return kw_error_set(KW_EIO, "%s: cannot sync the journal: %s", w->path, strerror(errno));
    return 0;
}

long kw_journal_writer_records(const kw_jwriter *w) { return w->added; }
int kw_journal_writer_replaying(const kw_jwriter *w) { return (size_t)w->added < w->n_old; }

void kw_journal_writer_free(kw_jwriter *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    free(w->path);
    free(w->old);
    kw_journal_buf_free(&w->pending);
    free(w);
}

int kw_journal_truncate(const char *path, long bytes, const kw_journal *read)
{
    int fd;
    int rc = kw_journal_open_file(&fd, path, KW_INPUT_APPEND, read);
    if (rc != 0)
        return rc;
    if ((rc = kw_journal_lock(fd, path)) != 0) { /* never cut a journal being written */
        close(fd);
        return rc;
    }
    if (ftruncate(fd, (off_t)bytes) != 0 || fsync(fd) != 0)
        rc = kw_error_set(KW_EIO, "%s: cannot truncate: %s", path, strerror(errno));
    close(fd);
    return rc;
}

/* ------------------------------------------------------------------ reading */

/* Stable storage for strings and metric vectors: chunks never move. */
typedef struct kw_arena_chunk {
    struct kw_arena_chunk *next;
    size_t used, cap;
    _Alignas(double) char data[];
} kw_arena_chunk;

typedef struct kw_jpriv {
    kw_arena_chunk *chunks;
    uint32_t *crcs;      /* per good record */
    size_t *index;       /* open addressing over evals: slot -> eval index + 1 (0 = empty) */
    size_t index_cap;
} kw_jpriv;

static void *kw_arena_alloc(kw_jpriv *p, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    kw_arena_chunk *c = p->chunks;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = p->chunks;
        p->chunks = c;
    }
    void *r = c->data + c->used;
    c->used += n;
    return r;
}

static const char *kw_arena_str(kw_jpriv *p, const char *s)
{
    if (!s || !*s)
        return "";
    size_t n = strlen(s) + 1;
    char *d = kw_arena_alloc(p, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

#define KW_FIELDS_MAX 40

typedef struct kw_rec {
    char type;
    int n;
    char *key[KW_FIELDS_MAX];
    char *val[KW_FIELDS_MAX];
} kw_rec;

static int kw_hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int kw_unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p == '%') {
            int h = kw_hexval(p[1]), l = h >= 0 ? kw_hexval(p[2]) : -1;
            if (h < 0 || l < 0)
                return -1;
            *o++ = (char)(h * 16 + l);
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return 0;
}

int kw_journal_unescape(char *s) { return kw_unescape(s); }

/* Split a payload in place into type and key=value fields (values still escaped). */
static int kw_rec_split(kw_rec *r, char *payload)
{
    memset(r, 0, sizeof *r);
    char *save = NULL;
    char *tok = strtok_r(payload, " ", &save);
    if (!tok || tok[1] != '\0')
        return -1;
    r->type = tok[0];
    while ((tok = strtok_r(NULL, " ", &save)) != NULL) {
        char *eq = strchr(tok, '=');
        if (!eq || r->n >= KW_FIELDS_MAX)
            return -1;
        *eq = '\0';
        r->key[r->n] = tok;
        r->val[r->n] = eq + 1;
        r->n++;
    }
    return 0;
}

/* A field's raw (escaped) value, or NULL. */
static char *kw_rec_raw(const kw_rec *r, const char *key)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->key[i], key) == 0)
            return r->val[i];
    return NULL;
}

/* Parse state shared by the record parsers: the first error wins. */
typedef struct kw_pstate {
    kw_journal *j;
    kw_jpriv *p;
    long record;
    int err;
    char msg[200];
} kw_pstate;

static void kw_perr(kw_pstate *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void kw_perr(kw_pstate *ps, const char *fmt, ...)
{
    if (ps->err)
        return;
    ps->err = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->msg, sizeof ps->msg, fmt, ap);
    va_end(ap);
}

/* An unescaped string field (in place); "" and an error when missing. */
static const char *kw_f_str(kw_pstate *ps, const kw_rec *r, const char *key)
{
    char *v = kw_rec_raw(r, key);
    if (!v) {
        kw_perr(ps, "field '%s' missing", key);
        return "";
    }
    if (kw_unescape(v) != 0) {
        kw_perr(ps, "field '%s': bad escape", key);
        return "";
    }
    return v;
}

static void kw_f_copy(kw_pstate *ps, char *dst, size_t n, const kw_rec *r, const char *key)
{
    const char *v = kw_f_str(ps, r, key);
    if (strlen(v) >= n)
        kw_perr(ps, "field '%s' too long", key);
    snprintf(dst, n, "%s", v);
}

static long long kw_f_int(kw_pstate *ps, const kw_rec *r, const char *key, long long min,
                          long long max)
{
    char *v = kw_rec_raw(r, key), *end;
    if (!v) {
        kw_perr(ps, "field '%s' missing", key);
        return min;
    }
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end) {
        kw_perr(ps, "field '%s': bad number '%.40s'", key, v);
        return min;
    }
    if (x < min || x > max) {
        kw_perr(ps, "field '%s' is %lld, outside %lld..%lld", key, x, min, max);
        return min;
    }
    return x;
}

static double kw_f_dbl(kw_pstate *ps, const kw_rec *r, const char *key)
{
    char *v = kw_rec_raw(r, key), *end;
    if (!v) {
        kw_perr(ps, "field '%s' missing", key);
        return NAN;
    }
    double x = strtod(v, &end);
    if (end == v || *end) {
        kw_perr(ps, "field '%s': bad number '%.40s'", key, v);
        return NAN;
    }
    return x;
}

static uint64_t kw_f_id(kw_pstate *ps, const kw_rec *r, const char *key)
{
    char *v = kw_rec_raw(r, key), *end;
    if (!v || strlen(v) != 16) {
        kw_perr(ps, "field '%s': bad id", key);
        return 0;
    }
    errno = 0;
    unsigned long long x = strtoull(v, &end, 16);
    if (errno || *end) {
        kw_perr(ps, "field '%s': bad id", key);
        return 0;
    }
    return (uint64_t)x;
}

static void kw_f_cand(kw_pstate *ps, kw_cand *out, const kw_rec *r, const char *key)
{
    const kw_knobspace *ks = &ps->j->h.space;
    memset(out, 0, sizeof *out);
    char *v = kw_rec_raw(r, key);
    if (!v) {
        kw_perr(ps, "field '%s' missing", key);
        return;
    }
    int i = 0;
    for (char *p = v; *p;) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || i >= ks->n_knobs || x < 0 || x >= ks->knobs[i].n_values) {
            kw_perr(ps, "field '%s': bad candidate", key);
            return;
        }
        out->v[i++] = (uint8_t)x;
        p = end;
        if (*p == '.')
            p++;
        else if (*p) {
            kw_perr(ps, "field '%s': bad candidate", key);
            return;
        }
    }
    if (i != ks->n_knobs)
        kw_perr(ps, "field '%s': %d values for %d knobs", key, i, ks->n_knobs);
}

static int kw_f_shape(kw_pstate *ps, const kw_rec *r)
{
    return (int)kw_f_int(ps, r, "s", 0, ps->j->h.n_shapes > 0 ? ps->j->h.n_shapes - 1 : 0);
}

typedef struct kw_caps {
    size_t evals, steps, viols, done, pairs, reranks, crcs;
} kw_caps;

static void kw_parse_header(kw_pstate *ps, kw_rec *r)
{
    kw_jheader *h = &ps->j->h;
    switch (r->type) {
    case 'H': {
        h->format = (int)kw_f_int(ps, r, "format", 1, 1000);
        if (h->format != KW_JOURNAL_FORMAT)
            kw_perr(ps, "journal format %d, this knobwise reads format %d", h->format,
                    KW_JOURNAL_FORMAT);
        kw_f_copy(ps, h->version, sizeof h->version, r, "version");
        char *seed = kw_rec_raw(r, "seed");
        h->seed = seed ? strtoull(seed, NULL, 10) : 0;
        int s = kw_journal_strategy_parse(kw_f_str(ps, r, "strategy"));
        int p = kw_journal_policy_parse(kw_f_str(ps, r, "policy"));
        if (s < 0 || p < 0)
            kw_perr(ps, "unknown strategy or policy");
        h->strategy = s < 0 ? KW_STRATEGY_OFAT : (kw_strategy)s;
        h->policy = p < 0 ? KW_POLICY_SWEEP : (kw_policy)p;
        h->budget = (long)kw_f_int(ps, r, "budget", 0, 1LL << 60);
        kw_f_copy(ps, h->metric, sizeof h->metric, r, "metric");
        h->min_effect_pct = kw_f_dbl(ps, r, "min_effect");
        h->alpha = kw_f_dbl(ps, r, "alpha");
        h->repeats = (int)kw_f_int(ps, r, "repeats", 1, KW_REPEATS_MAX);
        h->noisy = (int)kw_f_int(ps, r, "noisy", 0, 1);
        h->tabu = (int)kw_f_int(ps, r, "tabu", 0, KW_TABU_MAX);
        h->probes = (int)kw_f_int(ps, r, "probes", 0, KW_PROBE_MAX);
        h->control = kw_rec_raw(r, "control") ? (int)kw_f_int(ps, r, "control", 0, 1) : 0;
        h->pair = kw_rec_raw(r, "pair") ? (long)kw_f_int(ps, r, "pair", 1, KW_PAIR_BUDGET_MAX) : 0;
        h->rerank = kw_rec_raw(r, "rerank") ? (int)kw_f_int(ps, r, "rerank", 2, KW_RERANK_MAX) : 0;
        h->alias = kw_rec_raw(r, "alias") ? (int)kw_f_int(ps, r, "alias", 1, KW_ALIAS_LEVEL) : 0;
        char *t = kw_rec_raw(r, "tuned");
        if (!t) {
            kw_perr(ps, "field 'tuned' missing");
            break;
        }
        for (char *q = t; *q;) {
            char *end;
            long x = strtol(q, &end, 10);
            if (end == q || x < 0 || x >= KW_JOURNAL_SHAPE_MAX || h->n_tuned >= KW_JOURNAL_SHAPE_MAX) {
                kw_perr(ps, "field 'tuned': bad list");
                break;
            }
            h->tuned[h->n_tuned++] = (int)x;
            q = *end == ',' ? end + 1 : end;
            if (*end && *end != ',') {
                kw_perr(ps, "field 'tuned': bad list");
                break;
            }
        }
        break;
    }
    case 'A':
        if (h->n_attrs >= KW_JOURNAL_ATTR_MAX) {
            kw_perr(ps, "too many attributes");
            break;
        }
        kw_f_copy(ps, h->attrs[h->n_attrs].key, sizeof h->attrs[0].key, r, "key");
        kw_f_copy(ps, h->attrs[h->n_attrs].value, sizeof h->attrs[0].value, r, "value");
        h->n_attrs++;
        break;
    case 'I':
        if (h->n_inputs >= KW_JOURNAL_INPUT_MAX) {
            kw_perr(ps, "too many inputs");
            break;
        }
        kw_f_copy(ps, h->inputs[h->n_inputs].name, sizeof h->inputs[0].name, r, "name");
        kw_f_copy(ps, h->inputs[h->n_inputs].hash, sizeof h->inputs[0].hash, r, "hash");
        h->n_inputs++;
        break;
    case 'K': {
        kw_knobspace *ks = &h->space;
        if (kw_f_int(ps, r, "i", 0, KW_KNOB_MAX - 1) != ks->n_knobs || ks->n_knobs >= KW_KNOB_MAX) {
            kw_perr(ps, "knob records out of order");
            break;
        }
        kw_knob *k = &ks->knobs[ks->n_knobs];
        kw_f_copy(ps, k->name, sizeof k->name, r, "name");
        char *vals = kw_rec_raw(r, "values");
        if (!vals || !*vals) {
            kw_perr(ps, "knob without values");
            break;
        }
        char *save = NULL;
        for (char *tok = strtok_r(vals, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (k->n_values >= KW_VALUE_MAX || kw_unescape(tok) != 0 ||
                strlen(tok) >= KW_VALUE_LEN) {
                kw_perr(ps, "knob '%s': bad values", k->name);
                break;
            }
            snprintf(k->values[k->n_values++], KW_VALUE_LEN, "%s", tok);
        }
        k->baseline = (int)kw_f_int(ps, r, "base", 0, k->n_values > 0 ? k->n_values - 1 : 0);
        ks->n_knobs++;
        break;
    }
    case 'C': {
        kw_knobspace *ks = &h->space;
        if (kw_f_int(ps, r, "i", 0, KW_CONSTRAINT_MAX - 1) != ks->n_constraints ||
            ks->n_constraints >= KW_CONSTRAINT_MAX) {
            kw_perr(ps, "constraint records out of order");
            break;
        }
        kw_constraint *c = &ks->constraints[ks->n_constraints];
        kw_f_copy(ps, c->name, sizeof c->name, r, "name");
        char *terms = kw_rec_raw(r, "terms");
        if (!terms) {
            kw_perr(ps, "constraint without terms");
            break;
        }
        char *save = NULL;
        for (char *tok = strtok_r(terms, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            char *colon = strchr(tok, ':');
            if (!colon || c->n_terms >= KW_TERM_MAX) {
                kw_perr(ps, "constraint '%s': bad terms", c->name);
                break;
            }
            long knob = strtol(tok, NULL, 10);
            if (knob < 0 || knob >= ks->n_knobs) {
                kw_perr(ps, "constraint '%s': bad knob", c->name);
                break;
            }
            c->terms[c->n_terms].knob = (int)knob;
            c->terms[c->n_terms].mask = strtoull(colon + 1, NULL, 16);
            c->n_terms++;
        }
        ks->n_constraints++;
        break;
    }
    case 'M': {
        char *names = kw_rec_raw(r, "names");
        if (!names) {
            kw_perr(ps, "field 'names' missing");
            break;
        }
        char *save = NULL;
        for (char *tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (h->n_metrics >= KW_METRIC_MAX || kw_unescape(tok) != 0 ||
                strlen(tok) >= KW_NAME_MAX) {
                kw_perr(ps, "bad metric names");
                break;
            }
            snprintf(h->metric_names[h->n_metrics++], KW_NAME_MAX, "%s", tok);
        }
        break;
    }
    case 'S':
        if (kw_f_int(ps, r, "i", 0, KW_JOURNAL_SHAPE_MAX - 1) != h->n_shapes) {
            kw_perr(ps, "shape records out of order");
            break;
        }
        kw_f_copy(ps, h->shape_names[h->n_shapes], KW_NAME_MAX, r, "name");
        h->n_shapes++;
        break;
    default:
        kw_perr(ps, "unknown record type '%c'", r->type);
    }
}

/* Compare dotted version numbers ("0.1.0"): <0, 0, >0; 0 also when either is
 * not a version number (test builds write names such as "test-1"). */
static int kw_version_cmp(const char *a, const char *b)
{
    for (const char *s = a; *s; s++)
        if (!(*s >= '0' && *s <= '9') && *s != '.')
            return 0;
    for (const char *s = b; *s; s++)
        if (!(*s >= '0' && *s <= '9') && *s != '.')
            return 0;
    while (*a || *b) {
        char *ea, *eb;
        unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
        if (x != y)
            return x < y ? -1 : 1;
        a = *ea == '.' ? ea + 1 : ea;
        b = *eb == '.' ? eb + 1 : eb;
    }
    return 0;
}

/* The header's own rules, the same for every reader (verify, audit, report,
 * recommend, bisect, resume): what the engine can have written. A journal
 * edited and resealed past them is refused however good its checksums. */
static void kw_header_rules(kw_pstate *ps)
{
    const kw_jheader *h = &ps->j->h;
#ifdef PACKAGE_VERSION
    if (kw_version_cmp(h->version, PACKAGE_VERSION) > 0)
        kw_perr(ps, "written by knobwise %s, newer than this knobwise %s", h->version,
                PACKAGE_VERSION);
#endif
    if (h->control && !h->noisy)
        kw_perr(ps, "control=1 with noisy=0 (only a noisy run re-measures its reference)");
    if (h->pair && !h->noisy)
        kw_perr(ps, "pair=%ld with noisy=0 (only a noisy run pairs its recommendation)", h->pair);
    if (h->rerank && (h->noisy || h->strategy != KW_STRATEGY_OFAT))
        kw_perr(ps, "rerank=%d in a run that is not a noiseless ofat run (only such a run re-ranks "
                "its top configs)", h->rerank);
    if (h->noisy ? h->repeats < 2 : h->repeats != 1)
        kw_perr(ps, "repeats=%d with noisy=%d (the engine repeats only a noisy evaluator, "
                "2..%d times)", h->repeats, h->noisy, KW_REPEATS_MAX);
    if (!(h->alpha > 0 && h->alpha < 1))
        kw_perr(ps, "alpha=%g is not a p-value threshold in (0, 1)", h->alpha);
    if (!(h->min_effect_pct >= 0) || !isfinite(h->min_effect_pct))
        kw_perr(ps, "min_effect=%g is not a finite percentage >= 0", h->min_effect_pct);
}

/* Finish the header when the first body record arrives. */
static void kw_header_done(kw_pstate *ps)
{
    kw_jheader *h = &ps->j->h;
    if (h->format == 0) {
        kw_perr(ps, "no header record");
        return;
    }
    kw_header_rules(ps);
    if (h->space.n_knobs == 0)
        kw_perr(ps, "header names no knobs");
    h->primary = -1;
    for (int i = 0; i < h->n_metrics; i++)
        if (strcmp(h->metric_names[i], h->metric) == 0)
            h->primary = i;
    if (h->primary < 0)
        kw_perr(ps, "primary metric '%s' is not among the metric names", h->metric);
    for (int i = 0; i < h->n_tuned; i++)
        if (h->tuned[i] >= h->n_shapes)
            kw_perr(ps, "tuned shape %d is not among the %d shapes", h->tuned[i], h->n_shapes);
}

/* Parse one body record into out. Strings point into the line (unescaped in
 * place) and the metric vector into mbuf: valid until the next line is read.
 * Both readers share this: kw_journal_load copies what it keeps
 * (kw_store_rec), kw_journal_scan hands the record to its caller. */
static void kw_parse_body(kw_pstate *ps, kw_rec *r, kw_jrec *out, double *mbuf)
{
    kw_journal *j = ps->j;
    const kw_jheader *h = &j->h;
    memset(out, 0, sizeof *out);
    out->type = r->type;
    out->record = ps->record;
    switch (r->type) {
    case 'E': {
        kw_jeval *e = &out->e;
        e->record = ps->record;
        e->shape = kw_f_shape(ps, r);
        e->id = kw_f_id(ps, r, "id");
        e->rep = (int)kw_f_int(ps, r, "rep", 0,
                               h->control || h->pair ? (long long)KW_CTL_BLOCK_MAX * h->repeats +
                                                h->repeats - 1
                                          : h->repeats - 1);
        kw_f_cand(ps, &e->cand, r, "c");
        e->rc = (int)kw_f_int(ps, r, "rc", -1000, 1000);
        double *m = mbuf;
        char *mv = kw_rec_raw(r, "m");
        int n = 0;
        if (!mv)
            kw_perr(ps, "field 'm' missing");
        for (char *q = mv; q && *q && n < h->n_metrics;) {
            char *end;
            m[n++] = strtod(q, &end);
            if (end == q || (*end && *end != ',')) {
                kw_perr(ps, "field 'm': bad number");
                break;
            }
            q = *end ? end + 1 : end;
        }
        if (mv && n != h->n_metrics)
            kw_perr(ps, "field 'm': %d values for %d metrics", n, h->n_metrics);
        e->m = m;
        e->guards = kw_f_str(ps, r, "g");
        e->klass = kw_f_str(ps, r, "k");
        /* a=ID since stop 47 (an alias, kw_jeval): optional */
        if (kw_rec_raw(r, "a")) {
            e->alias = 1;
            e->alias_of = kw_f_id(ps, r, "a");
            if (!h->alias)
                kw_perr(ps, "an alias (a=) in a run without alias=N");
            else if (e->rep != 0 || e->alias_of == e->id)
                kw_perr(ps, "an alias of itself or of a repetition");
        }
        break;
    }
    case 'T': {
        kw_jstep *s = &out->t;
        s->record = ps->record;
        s->shape = kw_f_shape(ps, r);
        s->step = (int)kw_f_int(ps, r, "step", 1, 1 << 30);
        int ph = kw_journal_step_phase_parse(kw_f_str(ps, r, "phase"));
        int d = kw_journal_decision_parse(kw_f_str(ps, r, "d"));
        if (ph < 0 || d < 0)
            kw_perr(ps, "unknown phase or decision");
        s->phase = ph < 0 ? KW_STEP_MAIN : (kw_step_phase)ph;
        s->decision = d < 0 ? KW_DECIDE_REJECT : (kw_decision)d;
        s->parent_id = kw_f_id(ps, r, "parent");
        s->id = kw_f_id(ps, r, "id");
        kw_f_cand(ps, &s->cand, r, "c");
        s->guards = s->constraint = s->reason = "";
        s->knob = kw_knobs_find(&h->space, kw_f_str(ps, r, "knob"));
        if (s->knob < 0) {
            kw_perr(ps, "unknown knob");
            break;
        }
        s->old_v = kw_knobs_value(&h->space.knobs[s->knob], kw_f_str(ps, r, "old"));
        s->new_v = kw_knobs_value(&h->space.knobs[s->knob], kw_f_str(ps, r, "new"));
        if (s->old_v < 0 || s->new_v < 0) {
            kw_perr(ps, "unknown knob value");
            break;
        }
        s->parent = s->cand;
        s->parent.v[s->knob] = (uint8_t)s->old_v;
        s->before = kw_f_dbl(ps, r, "before");
        s->after = kw_f_dbl(ps, r, "after");
        s->delta_pct = kw_f_dbl(ps, r, "delta");
        s->p_value = kw_f_dbl(ps, r, "p");
        s->n_before = (int)kw_f_int(ps, r, "nb", 0, 1000000);
        s->n_after = (int)kw_f_int(ps, r, "na", 0, 1000000);
        s->guards = kw_f_str(ps, r, "g");
        s->constraint = kw_f_str(ps, r, "con");
        s->reason = kw_f_str(ps, r, "why");
        s->ref_mean = NAN;
        if (kw_rec_raw(r, "ctl")) {
            if (!h->control)
                kw_perr(ps, "a control (ctl=) in a run without control=1");
            s->ctl = (int)kw_f_int(ps, r, "ctl", 1, KW_CTL_BLOCK_MAX);
            s->ref_id = kw_f_id(ps, r, "ref");
            s->ref_mean = kw_f_dbl(ps, r, "rmean");
        }
        break;
    }
    case 'V': {
        kw_jviol *v = &out->v;
        v->record = ps->record;
        v->shape = kw_f_shape(ps, r);
        v->id = kw_f_id(ps, r, "id");
        kw_f_cand(ps, &v->cand, r, "c");
        v->constraint = kw_f_str(ps, r, "con");
        v->why = kw_f_str(ps, r, "why");
        break;
    }
    case 'D': {
        kw_jdone *d = &out->d;
        d->record = ps->record;
        d->shape = kw_f_shape(ps, r);
        kw_f_copy(ps, d->why, sizeof d->why, r, "why");
        d->baseline_id = kw_f_id(ps, r, "base");
        d->baseline_primary = kw_f_dbl(ps, r, "base_p");
        d->best_id = kw_f_id(ps, r, "best");
        d->best_primary = kw_f_dbl(ps, r, "best_p");
        kw_f_cand(ps, &d->best, r, "c");
        d->evals = (long)kw_f_int(ps, r, "evals", 0, 1LL << 60);
        d->steps = (int)kw_f_int(ps, r, "steps", 0, 1 << 30);
        /* aliases=N since stop 47 (a run with alias=N): optional */
        d->aliases = kw_rec_raw(r, "aliases") ? (long)kw_f_int(ps, r, "aliases", 0, 1LL << 60) : 0;
        break;
    }
    case 'P': {
        kw_jpred *pr = &out->p;
        pr->record = ps->record;
        pr->shape = kw_f_shape(ps, r);
        pr->id = kw_f_id(ps, r, "id");
        kw_f_cand(ps, &pr->cand, r, "c");
        pr->est = kw_f_dbl(ps, r, "est");
        pr->guards = kw_f_str(ps, r, "g");
        pr->skip = (int)kw_f_int(ps, r, "skip", 0, 2);
        break;
    }
    case 'N': {
        kw_jpair *x = &out->n;
        if (!h->pair)
            kw_perr(ps, "a pair (N) in a run without pair=");
        x->record = ps->record;
        x->shape = kw_f_shape(ps, r);
        x->id = kw_f_id(ps, r, "id");
        x->k = (int)kw_f_int(ps, r, "k", 1, KW_CTL_BLOCK_MAX);
        x->nb_id = kw_f_id(ps, r, "nb");
        x->nk = (int)kw_f_int(ps, r, "nk", 1, KW_CTL_BLOCK_MAX);
        kw_f_cand(ps, &x->cand, r, "c");
        x->guards = "";
        x->knob = kw_knobs_find(&h->space, kw_f_str(ps, r, "knob"));
        if (x->knob < 0) {
            kw_perr(ps, "unknown knob");
            break;
        }
        x->value = kw_knobs_value(&h->space.knobs[x->knob], kw_f_str(ps, r, "new"));
        if (x->value < 0 || x->value != x->cand.v[x->knob]) {
            kw_perr(ps, "the knob value new= is not the neighbour's");
            break;
        }
        x->n = (int)kw_f_int(ps, r, "n", 0, h->repeats);
        x->pick_mean = kw_f_dbl(ps, r, "pm");
        x->nb_mean = kw_f_dbl(ps, r, "nm");
        x->delta_pct = kw_f_dbl(ps, r, "delta");
        x->lo_pct = kw_f_dbl(ps, r, "lo");
        x->hi_pct = kw_f_dbl(ps, r, "hi");
        x->guards = kw_f_str(ps, r, "g");
        break;
    }
    case 'R': {
        kw_jrerank *x = &out->rr;
        if (!h->rerank)
            kw_perr(ps, "a re-rank comparison (R) in a run without rerank=");
        x->record = ps->record;
        x->shape = kw_f_shape(ps, r);
        x->id = kw_f_id(ps, r, "id");
        x->rid = kw_f_id(ps, r, "rid");
        x->n = (long)kw_f_int(ps, r, "n", 1, 1LL << 40);
        x->a = kw_f_dbl(ps, r, "a");
        x->b = kw_f_dbl(ps, r, "b");
        x->half = kw_f_dbl(ps, r, "half");
        x->batches = (int)kw_f_int(ps, r, "k", 0, 1 << 20);
        /* ga=1 / gb=1 since stop 45 (a guard the long sample decides fails): optional */
        x->a_guard = kw_rec_raw(r, "ga") ? (int)kw_f_int(ps, r, "ga", 1, 1) : 0;
        x->b_guard = kw_rec_raw(r, "gb") ? (int)kw_f_int(ps, r, "gb", 1, 1) : 0;
        if (x->id == x->rid)
            kw_perr(ps, "a re-rank comparison of a config with itself");
        break;
    }
    case 'Q':
        kw_f_copy(ps, out->paused, sizeof out->paused, r, "why");
        /* idle=K since 2026-12-07 (kw_pause, search/kw_engine.c): optional */
        out->paused_idle = kw_rec_raw(r, "idle") ? (int)kw_f_int(ps, r, "idle", 0, 1000000) : 0;
        break;
    case 'Z':
        break;
    default:
        kw_perr(ps, "unknown record type '%c'", r->type);
    }
    if (r->type == 'P' && out->p.shape >= 0 && out->p.shape < KW_JOURNAL_SHAPE_MAX) {
        /* both readers count them (the streaming one keeps no arrays) */
        j->pred_n[out->p.shape]++;
        j->pred_skip[out->p.shape] += out->p.skip == 1; /* 2 (deferred) comes back later */
    }
    if (r->type == 'R' && out->rr.shape >= 0 && out->rr.shape < KW_JOURNAL_SHAPE_MAX)
        j->rerank_req[out->rr.shape] += 2 * out->rr.n;
    if (r->type == 'E' && out->e.alias && out->e.shape >= 0 && out->e.shape < KW_JOURNAL_SHAPE_MAX)
        j->n_alias[out->e.shape]++;
}

/* kw_journal_load's keeper: a parsed body record into the journal's arrays,
 * its strings and metrics copied into the arena. */
static int kw_store_rec(kw_caps *caps, kw_journal *j, const kw_jrec *r)
{
    kw_jpriv *p = j->priv;
    switch (r->type) {
    case 'E': {
        kw_jeval *ev = kw_grow_array(j->evals, &caps->evals, j->n_evals, sizeof *j->evals);
        if (!ev)
            goto oom;
        j->evals = ev;
        kw_jeval *e = &j->evals[j->n_evals];
        *e = r->e;
        int nm = j->h.n_metrics ? j->h.n_metrics : 1;
        double *m = kw_arena_alloc(p, sizeof(double) * (size_t)nm);
        if (!m)
            goto oom;
        memcpy(m, r->e.m, sizeof(double) * (size_t)j->h.n_metrics);
        e->m = m;
        e->guards = kw_arena_str(p, r->e.guards);
        e->klass = kw_arena_str(p, r->e.klass);
        if (!e->guards || !e->klass)
            goto oom;
        j->n_evals++;
        break;
    }
    case 'T': {
        kw_jstep *sv = kw_grow_array(j->steps, &caps->steps, j->n_steps, sizeof *j->steps);
        if (!sv)
            goto oom;
        j->steps = sv;
        kw_jstep *s = &j->steps[j->n_steps];
        *s = r->t;
        s->guards = kw_arena_str(p, r->t.guards);
        s->constraint = kw_arena_str(p, r->t.constraint);
        s->reason = kw_arena_str(p, r->t.reason);
        if (!s->guards || !s->constraint || !s->reason)
            goto oom;
        j->n_steps++;
        break;
    }
    case 'V': {
        kw_jviol *vv = kw_grow_array(j->viols, &caps->viols, j->n_viols, sizeof *j->viols);
        if (!vv)
            goto oom;
        j->viols = vv;
        kw_jviol *v = &j->viols[j->n_viols];
        *v = r->v;
        v->constraint = kw_arena_str(p, r->v.constraint);
        v->why = kw_arena_str(p, r->v.why);
        if (!v->constraint || !v->why)
            goto oom;
        j->n_viols++;
        break;
    }
    case 'D': {
        kw_jdone *dv = kw_grow_array(j->done, &caps->done, j->n_done, sizeof *j->done);
        if (!dv)
            goto oom;
        j->done = dv;
        j->done[j->n_done++] = r->d;
        break;
    }
    case 'N': {
        kw_jpair *nv = kw_grow_array(j->pairs, &caps->pairs, j->n_pairs, sizeof *j->pairs);
        if (!nv)
            goto oom;
        j->pairs = nv;
        kw_jpair *x = &j->pairs[j->n_pairs];
        *x = r->n;
        x->guards = kw_arena_str(p, r->n.guards);
        if (!x->guards)
            goto oom;
        j->n_pairs++;
        break;
    }
    case 'R': {
        kw_jrerank *rv = kw_grow_array(j->reranks, &caps->reranks, j->n_reranks, sizeof *j->reranks);
        if (!rv)
            goto oom;
        j->reranks = rv;
        j->reranks[j->n_reranks++] = r->rr;
        break;
    }
    default:
        break;
    }
    return 0;
oom:
    return kw_error_set(KW_ENOMEM, "%s: record %ld: out of memory loading the journal", j->path,
                        r->record);
}

/* Check a line's checksum; returns the payload length or -1. */
static long kw_line_check(const char *line, size_t len, uint32_t prev, uint32_t *crc_out)
{
    static const char tag[] = " crc=";
    if (len < sizeof tag - 1 + 8)
        return -1;
    size_t pl = len - 8 - (sizeof tag - 1);
    if (memcmp(line + pl, tag, sizeof tag - 1) != 0)
        return -1;
    uint32_t want = 0;
    for (size_t i = len - 8; i < len; i++) {
        int v = kw_hexval(line[i]);
        if (v < 0 || (line[i] >= 'A' && line[i] <= 'F'))
            return -1;
        want = want * 16 + (uint32_t)v;
    }
    uint32_t got = kw_crc_record(prev, line, pl);
    if (got != want)
        return -1;
    *crc_out = got;
    return (long)pl;
}

static void kw_index_build(kw_journal *j);

/* Lines off a file descriptor with a bound: a line longer than the caller's
 * buffer is read to its end but only its first bytes are kept, so a 1 GiB
 * line costs KW_JOURNAL_RECORD_MAX bytes of memory, not 1 GiB (getline()
 * would allocate it whole). */
#define KW_LR_CHUNK 65536
typedef struct kw_lreader {
    int fd;
    char buf[KW_LR_CHUNK];
    size_t start, end;
    int eof;
} kw_lreader;

/* The next line: returns its full length (newline included), 0 at end of
 * file, -1 on a read error (errno set). *kept bytes of it are copied into
 * line (at most cap); *has_nl says whether it ended with a newline. */
static ssize_t kw_lr_next(kw_lreader *r, char *line, size_t cap, size_t *kept, int *has_nl)
{
    size_t total = 0, k = 0;
    *has_nl = 0;
    for (;;) {
        if (r->start == r->end) {
            if (r->eof)
                break;
            ssize_t n = read(r->fd, r->buf, sizeof r->buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return -1;
            if (n == 0) {
                r->eof = 1;
                break;
            }
            r->start = 0;
            r->end = (size_t)n;
        }
        char *s = r->buf + r->start;
        size_t avail = r->end - r->start;
        char *nl = memchr(s, '\n', avail);
        size_t take = nl ? (size_t)(nl - s) + 1 : avail;
        size_t copy = take < cap - k ? take : cap - k;
        memcpy(line + k, s, copy);
        k += copy;
        total += take;
        r->start += take;
        if (nl) {
            *has_nl = 1;
            break;
        }
    }
    *kept = k;
    return (ssize_t)total;
}

/* The state of one read of a journal file: what kw_journal_read holds over
 * its loop, kept in one place so the follower (kw_journal_follow) can run
 * the same loop again over what was appended since. */
typedef struct kw_jread {
    const char *path;
    int fd;
    kw_journal *j;
    kw_jpriv *p;
    kw_lreader *lr;
    char *line;
    size_t cap;
    kw_caps caps;
    kw_pstate ps;
    int store;
    kw_journal_fn fn;
    void *ctx;
    int in_header;
    uint32_t crc;
    long offset;
    long bad_record; /* a bad record seen: fine only if nothing follows */
    char bad_msg[200];
    int first_torn;  /* the file is one line, cut short, that begins as a header record does */
    int header_only; /* stop at the first body record (kw_journal_load_header) */
    int stopped;     /* ... and stopped there: what follows is not read, nor judged */
    kw_jrec rec_buf;
    double mbuf[KW_METRIC_MAX];
} kw_jread;

/* The one open of an existing journal (the reader, kw_journal_reseal, the
 * writer of a resumed run, kw_journal_truncate): a regular file only (a FIFO
 * would block open(), /dev/zero never ends), never through a symbolic link
 * out of the run folder: kw_input_open_as with KW_INPUT_NOFOLLOW, the rule
 * kw_runfile_open keeps for a run folder's other files. how: 0 (read),
 * KW_INPUT_RDWR (reseal) or KW_INPUT_APPEND (the writer, truncate). *fd
 * blocking on success. */
static int kw_journal_open_file(int *fd, const char *path, int how, const kw_journal *read)
{
    char why[KW_INPUT_WHY_MAX];
    uint64_t bytes;
    int rc = kw_input_open_as(fd, &bytes, path, 0, KW_INPUT_NOFOLLOW | how, why, sizeof why);
    if (rc == 0) {
        struct stat st;
        /* appended to or truncated through another name (a hard link), a
         * file outside the run folder would change with the journal */
        if (how == KW_INPUT_APPEND && fstat(*fd, &st) == 0 && st.st_nlink > 1) {
            close(*fd);
            *fd = -1;
            return kw_error_set(KW_EINPUT, "%s: the journal has other names (%lu hard links), "
                                "and writing it would change those files too; a run folder's "
                                "journal is always a file of its own (cp makes one)", path,
                                (unsigned long)st.st_nlink);
        }
        if (read && (fstat(*fd, &st) != 0 || (unsigned long long)st.st_dev != read->file_dev ||
                     (unsigned long long)st.st_ino != read->file_ino)) {
            close(*fd);
            *fd = -1;
            return kw_error_set(KW_EINPUT, "%s: the journal was replaced after it was read (it "
                                "is another file now); nothing was written to it: resume again",
                                path);
        }
        return 0;
    }
    if (rc == KW_EINPUT && strncmp(why, KW_INPUT_LINK_WHY, sizeof KW_INPUT_LINK_WHY - 1) == 0)
        return kw_error_set(rc, "%s: the journal is a symbolic link; a run folder's journal is "
                            "always a file of its own", path);
    if (rc == KW_EINPUT) /* a FIFO, a device, a folder */
        return kw_error_set(rc, "%s: the journal is not a regular file", path);
    struct stat st; /* no journal at all is bad input (a folder that is no run), not an I/O fault */
    if (rc == KW_EIO && lstat(path, &st) != 0 && errno == ENOENT)
        rc = KW_EINPUT;
    return kw_error_set(rc, "%s: cannot open the journal: %s", path, why);
}

/* Open path (a regular file, not through a symbolic link) and set up a read
 * of it from its start. On failure R holds nothing to free but what
 * kw_jread_close frees. */
static int kw_jread_open(kw_jread *R, const char *path, int store, kw_journal_fn fn, void *ctx)
{
    memset(R, 0, sizeof *R);
    R->fd = -1;
    R->path = path;
    R->store = store;
    R->fn = fn;
    R->ctx = ctx;
    R->in_header = 1;
    int fd, rc = kw_journal_open_file(&fd, path, 0, NULL);
    if (rc != 0)
        return rc;
    R->fd = fd;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return kw_error_set(KW_EIO, "%s: cannot stat the journal: %s", path, strerror(errno));
    R->j = calloc(1, sizeof *R->j);
    R->p = calloc(1, sizeof *R->p);
    R->lr = malloc(sizeof *R->lr);
    R->cap = KW_JOURNAL_RECORD_MAX + 2; /* the longest record, its newline, a NUL */
    R->line = malloc(R->cap);
    R->ps.j = R->j;
    R->ps.p = R->p;
    if (R->j)
        R->j->priv = R->p;
    else
        free(R->p);
    if (!R->j || !R->p || !R->lr || !R->line || !(R->j->path = strdup(path)))
        return kw_error_set(KW_ENOMEM, "out of memory loading the journal");
    R->j->file_dev = (unsigned long long)st.st_dev;
    R->j->file_ino = (unsigned long long)st.st_ino;
    R->lr->fd = fd;
    R->lr->start = R->lr->end = 0;
    R->lr->eof = 0;
    return 0;
}

static void kw_jread_close(kw_jread *R)
{
    free(R->line);
    free(R->lr);
    if (R->fd >= 0)
        close(R->fd);
    kw_journal_free(R->j);
    R->line = NULL;
    R->lr = NULL;
    R->fd = -1;
    R->j = NULL;
}

/* The records from R->offset to the end of the file, each good body record
 * to R->fn (or stored). follow = 0 (load, scan): a bad record is judged
 * only when the next line arrives: followed by anything, it is corruption
 * (refused with its record number); last, it is a torn tail (left for
 * kw_jread_finish). follow = 1: the file is still being appended to by
 * its writer, so a last line without its newline is not read yet (the next
 * call starts at it), and a bad whole line is refused at once. Records
 * before a refused one have already been handed to fn: the caller discards
 * what it built when this returns an error. */
static int kw_jread_lines(kw_jread *R, int follow)
{
    kw_journal *j = R->j;
    kw_pstate *ps = &R->ps;
    ssize_t n;
    size_t kept;
    int has_nl;
    int rc = 0;
    while ((n = kw_lr_next(R->lr, R->line, R->cap - 1, &kept, &has_nl)) > 0) {
        char *line = R->line;
        long rec = j->n_records + 1;
        if (follow && !has_nl)
            break; /* the writer is not done with it: read again next time */
        if (R->bad_record == 1) /* another file's lines, or damage from the start */
            return kw_error_set(KW_EINPUT, "%s:1: not a knobwise journal: its first line is no "
                                "journal record (%s), and more lines follow", R->path,
                                R->bad_msg);
        if (R->bad_record)
            return kw_error_set(KW_ECORRUPT, "%s:%ld: record %ld: %s (corruption in the middle "
                                "of the journal; refusing to use it)", R->path, R->bad_record,
                                R->bad_record, R->bad_msg);
        size_t len = (size_t)n - (size_t)has_nl;
        uint32_t c = 0;
        if (len > KW_JOURNAL_RECORD_MAX) {
            R->bad_record = rec;
            snprintf(R->bad_msg, sizeof R->bad_msg, "%zu bytes, longer than a journal record "
                     "may be (%d)", len, KW_JOURNAL_RECORD_MAX);
            if (follow)
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: %s", R->path, rec, R->bad_msg);
            continue;
        }
        long pl = has_nl ? kw_line_check(line, len, R->crc, &c) : -1;
        if (pl < 0) {
            R->bad_record = rec;
            snprintf(R->bad_msg, sizeof R->bad_msg, "%s",
                     has_nl ? "checksum mismatch" : "torn record (no end of line)");
            /* a first line cut short is the header record's beginning only
             * if it begins as one ("H format="): any other text is another file */
            static const char hstart[] = "H format=";
            size_t hm = len < sizeof hstart - 1 ? len : sizeof hstart - 1;
            R->first_torn = rec == 1 && !has_nl && len > 0 && memcmp(line, hstart, hm) == 0;
            if (follow)
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: %s", R->path, rec, R->bad_msg);
            continue;
        }
        line[pl] = '\0';
        kw_rec r;
        int body = 0;
        ps->record = rec;
        if (kw_rec_split(&r, line) != 0) {
            kw_perr(ps, "malformed record");
        } else if (strchr("HAIKCMS", r.type)) {
            if (!R->in_header)
                kw_perr(ps, "header record '%c' after the header", r.type);
            else if (r.type != 'H' && j->h.format == 0)
                kw_perr(ps, "the journal does not start with a header record");
            else
                kw_parse_header(ps, &r);
        } else {
            if (R->in_header) {
                kw_header_done(ps);
                R->in_header = 0;
                if (R->header_only && !ps->err) {
                    R->stopped = 1;
                    break;
                }
            }
            if (j->complete)
                kw_perr(ps, "record after the run-end record");
            j->paused[0] = '\0'; /* a pause counts only as the last record */
            j->paused_idle = 0;
            kw_parse_body(ps, &r, &R->rec_buf, R->mbuf);
            body = 1;
        }
        if (ps->err)
            return kw_error_set(KW_ECORRUPT, "%s:%ld: record %ld: %s", R->path, rec, rec,
                                ps->msg);
        if (body) {
            if (R->rec_buf.type == 'Q') {
                snprintf(j->paused, sizeof j->paused, "%s", R->rec_buf.paused);
                j->paused_idle = R->rec_buf.paused_idle;
            }
            else if (R->rec_buf.type == 'Z')
                j->complete = 1;
            rc = R->store ? kw_store_rec(&R->caps, j, &R->rec_buf)
                          : R->fn ? R->fn(R->ctx, j, &R->rec_buf) : 0;
            if (rc != 0)
                return rc;
        }
        if (R->store) {
            uint32_t *cv = kw_grow_array(R->p->crcs, &R->caps.crcs, (size_t)j->n_records,
                                         sizeof *R->p->crcs);
            if (!cv)
                return kw_error_set(KW_ENOMEM, "out of memory loading the journal");
            R->p->crcs = cv;
            R->p->crcs[j->n_records] = c;
        }
        R->crc = c;
        j->n_records++;
        j->last_start = R->offset;
        R->offset += (long)n;
        j->good_bytes = R->offset;
    }
    if (n < 0)
        return kw_error_set(KW_EIO, "%s: read error: %s", R->path, strerror(errno));
    return 0;
}

/* After the last line of a load or a scan: the torn tail, an empty or
 * headerless file, the header of a journal without body records, the
 * index. */
static int kw_jread_finish(kw_jread *R, int allow_partial_header)
{
    kw_journal *j = R->j;
    const char *path = R->path;
    struct stat st;
    j->file_bytes = fstat(R->fd, &st) == 0 ? (long)st.st_size : j->good_bytes;
    if (R->stopped) {
        /* the body is not read: nothing after the header is judged */
    } else if (R->bad_record) {
        j->torn = 1;
        /* (every bad_msg is under 100 bytes) */
        snprintf(j->torn_msg, sizeof j->torn_msg,
                 "%s: record %ld: %.100s; the last %ld bytes are dropped (last good record %ld)",
                 path, R->bad_record, R->bad_msg, j->file_bytes - j->good_bytes, j->n_records);
    } else if (j->good_bytes < j->file_bytes) {
        j->torn = 1;
        snprintf(j->torn_msg, sizeof j->torn_msg, "%s: %ld trailing bytes after record %ld", path,
                 j->file_bytes - j->good_bytes, j->n_records);
    }
    if (j->n_records == 0 && j->file_bytes == 0)
        /* killed before its first byte: there is nothing to read or resume */
        return kw_error_set(KW_EINPUT, "%s: the journal is empty: nothing was run; start again "
                            "with the command first given (the same --out: an empty journal "
                            "is replaced) or another --out", path);
    /* the one line there is, cut short, begins as the header record does: a
     * run killed while writing its first record, the case below with no
     * record whole yet; any other first line is another file (or damage) */
    if (j->n_records == 0 && !R->first_torn)
        return kw_error_set(KW_EINPUT, "%s:1: no journal record: the first line is not one "
                            "(%s); not a knobwise journal, or a damaged one", path,
                            j->torn ? R->bad_msg : "no line");
    if (R->in_header) {
        R->ps.record = j->n_records;
        kw_header_done(&R->ps);
        if (R->ps.err && (allow_partial_header > 1 || (allow_partial_header && j->n_records))) {
            j->header_incomplete = 1;
            R->ps.err = 0;
        }
        /* the file ends inside its header: a run stopped while starting, which
         * evaluated nothing; not damage, and not readable yet */
        if (R->ps.err)
            return kw_error_set(KW_EINPUT, "%s: the run was stopped while writing its journal's "
                                "header (%s), before any evaluation: nothing to read; `knobwise "
                                "tune --resume` continues it or says how to start it again",
                                path, j->n_records ? R->ps.msg : "its first record is torn");
    }
    if (R->store) {
        kw_index_build(j);
        if (!R->p->index && j->n_evals > 0)
            return kw_error_set(KW_ENOMEM, "out of memory indexing the journal");
    }
    return 0;
}

/* The one reader behind kw_journal_load and kw_journal_scan: streams the file
 * line by line, checks the checksum chain, parses the header into j->h and
 * hands every good body record to fn (store 1: also keep each record's
 * checksum and build the eval index, as a load does; -1: stop at the first
 * body record, kw_journal_load_header); see kw_jread_lines for the bad
 * record rules. */
static int kw_journal_read(kw_journal **out, const char *path, int allow_partial_header,
                           int store, kw_journal_fn fn, void *ctx)
{
    *out = NULL;
    kw_jread R;
    int rc = kw_jread_open(&R, path, store > 0, fn, ctx);
    R.header_only = store < 0;
    if (rc == 0)
        rc = kw_jread_lines(&R, 0);
    if (rc == 0)
        rc = kw_jread_finish(&R, allow_partial_header);
    if (rc == 0) {
        *out = R.j;
        R.j = NULL;
    }
    kw_jread_close(&R);
    return rc;
}

/* The follower: one kw_jread kept open, its loop run again from where it
 * stopped. */
struct kw_jfollow {
    kw_jread R;
    int failed; /* a read failed: every later call fails (R's state is unknown) */
};

int kw_journal_follow_open(kw_jfollow **out, const char *path, kw_journal_fn fn, void *ctx)
{
    *out = NULL;
    kw_jfollow *f = calloc(1, sizeof *f);
    if (!f)
        return kw_error_set(KW_ENOMEM, "out of memory following the journal");
    int rc = kw_jread_open(&f->R, path, 0, fn, ctx);
    if (rc != 0) {
        kw_jread_close(&f->R);
        free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int kw_journal_follow(kw_jfollow *f)
{
    kw_jread *R = &f->R;
    if (f->failed)
        return kw_error_set(KW_ESTATE, "%s: following the journal failed before", R->path);
    /* from the first byte not yet read as a whole line */
    R->lr->start = R->lr->end = 0;
    R->lr->eof = 0;
    int rc = lseek(R->fd, R->offset, SEEK_SET) == (off_t)R->offset ? 0
             : kw_error_set(KW_EIO, "%s: cannot seek: %s", R->path, strerror(errno));
    if (rc == 0)
        rc = kw_jread_lines(R, 1);
    f->failed = rc != 0;
    return rc;
}

const kw_journal *kw_journal_follow_journal(const kw_jfollow *f)
{
    return f->R.in_header ? NULL : f->R.j;
}

void kw_journal_follow_free(kw_jfollow *f)
{
    if (!f)
        return;
    kw_jread_close(&f->R);
    free(f);
}

int kw_journal_load(kw_journal **out, const char *path)
{
    return kw_journal_load_ex(out, path, 0);
}

int kw_journal_load_ex(kw_journal **out, const char *path, int allow_partial_header)
{
    return kw_journal_read(out, path, allow_partial_header, 1, NULL, NULL);
}

int kw_journal_load_header(kw_journal **out, const char *path)
{
    return kw_journal_read(out, path, 2, -1, NULL, NULL);
}

int kw_journal_scan(kw_journal **out, const char *path, kw_journal_fn fn, void *ctx)
{
    return kw_journal_read(out, path, 0, 0, fn, ctx);
}

const uint32_t *kw_journal_crcs(const kw_journal *j)
{
    return ((const kw_jpriv *)j->priv)->crcs;
}

void kw_journal_free(kw_journal *j)
{
    if (!j)
        return;
    kw_jpriv *p = j->priv;
    if (p) {
        while (p->chunks) {
            kw_arena_chunk *c = p->chunks;
            p->chunks = c->next;
            free(c);
        }
        free(p->crcs);
        free(p->index);
        free(p);
    }
    free(j->path);
    free(j->evals);
    free(j->steps);
    free(j->viols);
    free(j->done);
    free(j->pairs);
    free(j->reranks);
    free(j);
}

/* ------------------------------------------------------------------ queries */

static uint64_t kw_eval_key(int shape, uint64_t id, int rep)
{
    uint64_t k = id ^ ((uint64_t)(unsigned)shape * 0x9E3779B97F4A7C15ULL) ^
                 ((uint64_t)(unsigned)rep * 0xC2B2AE3D27D4EB4FULL);
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

static void kw_index_build(kw_journal *j)
{
    kw_jpriv *p = j->priv;
    size_t cap = 16;
    while (cap < j->n_evals * 2 + 1)
        cap *= 2;
    p->index = calloc(cap, sizeof *p->index);
    if (!p->index)
        return;
    p->index_cap = cap;
    for (size_t i = 0; i < j->n_evals; i++) {
        const kw_jeval *e = &j->evals[i];
        size_t s = kw_eval_key(e->shape, e->id, e->rep) & (cap - 1);
        while (p->index[s])
            s = (s + 1) & (cap - 1);
        p->index[s] = i + 1;
    }
}

const kw_jeval *kw_journal_eval_find(const kw_journal *j, int shape, uint64_t id, int rep)
{
    const kw_jpriv *p = j->priv;
    if (!p->index)
        return NULL;
    size_t s = kw_eval_key(shape, id, rep) & (p->index_cap - 1);
    while (p->index[s]) {
        const kw_jeval *e = &j->evals[p->index[s] - 1];
        if (e->shape == shape && e->id == id && e->rep == rep)
            return e;
        s = (s + 1) & (p->index_cap - 1);
    }
    return NULL;
}

int kw_journal_stats(kw_jstats *out, const kw_journal *j, int shape, uint64_t id)
{
    memset(out, 0, sizeof *out);
    out->klass = "";
    const kw_jheader *h = &j->h;
    double sum_m[KW_METRIC_MAX] = {0};
    kw_repstat st;
    kw_reduce_repstat_init(&st);
    for (int r = 0; r < h->repeats; r++) {
        const kw_jeval *e = kw_journal_eval_find(j, shape, id, r);
        if (!e)
            continue;
        if (!out->first) {
            out->first = e;
            out->klass = e->klass;
        }
        kw_reduce_repstat_add(&st, e->m[h->primary], e->guards, e->rc);
        for (int m = 0; m < h->n_metrics; m++)
            sum_m[m] += e->m[m];
    }
    out->n = st.n;
    out->guards_ok = st.ok;
    out->guards = st.guards;
    if (out->n == 0)
        return kw_error_set(KW_EINPUT, "config %016llx was not evaluated on shape %d",
                            (unsigned long long)id, shape);
    out->mean = kw_reduce_repstat_mean(&st);
    for (int m = 0; m < h->n_metrics; m++)
        out->mean_m[m] = sum_m[m] / out->n;
    out->sd = kw_reduce_repstat_sd(&st);
    return 0;
}

const char *kw_journal_attr(const kw_journal *j, const char *key)
{
    for (int i = 0; i < j->h.n_attrs; i++)
        if (strcmp(j->h.attrs[i].key, key) == 0)
            return j->h.attrs[i].value;
    return NULL;
}

int kw_journal_shape_index(const kw_journal *j, const char *name)
{
    for (int i = 0; i < j->h.n_shapes; i++)
        if (strcmp(j->h.shape_names[i], name) == 0)
            return i;
    return -1;
}

static int kw_is_move(kw_decision d)
{
    return d == KW_DECIDE_ACCEPT || d == KW_DECIDE_EXPLORE || d == KW_DECIDE_REVERT;
}

void kw_journal_result_clear(kw_jresult *r)
{
    if (!r)
        return;
    free(r->path);
    r->path = NULL;
    r->n_path = 0;
}

/* The loaded step of record `record` (steps are in record order), or NULL. */
static const kw_jstep *kw_step_at(const kw_journal *j, long record)
{
    size_t lo = 0, hi = j->n_steps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (j->steps[mid].record < record)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < j->n_steps && j->steps[lo].record == record ? &j->steps[lo] : NULL;
}

/* The reducer (kw_reduce.c) over the loaded records, its path pointed back
 * at the journal's own steps (with their text). Records go in by type, not
 * interleaved: no rule of the reducer depends on the order between types. */
int kw_journal_each(const kw_journal *j, kw_journal_fn fn, void *ctx)
{
    /* the five arrays are each in journal order: merge them by record number */
    size_t ie = 0, it = 0, iv = 0, id = 0, in = 0;
    kw_jrec rec;
    memset(&rec, 0, sizeof rec);
    for (;;) {
        long re = ie < j->n_evals ? j->evals[ie].record : LONG_MAX;
        long rt = it < j->n_steps ? j->steps[it].record : LONG_MAX;
        long rv = iv < j->n_viols ? j->viols[iv].record : LONG_MAX;
        long rd = id < j->n_done ? j->done[id].record : LONG_MAX;
        long rn = in < j->n_pairs ? j->pairs[in].record : LONG_MAX;
        long next = re < rt ? re : rt;
        next = rv < next ? rv : next;
        next = rd < next ? rd : next;
        next = rn < next ? rn : next;
        if (next == LONG_MAX)
            return 0;
        if (next == re) {
            rec.type = 'E';
            rec.e = j->evals[ie++];
        } else if (next == rt) {
            rec.type = 'T';
            rec.t = j->steps[it++];
        } else if (next == rv) {
            rec.type = 'V';
            rec.v = j->viols[iv++];
        } else if (next == rd) {
            rec.type = 'D';
            rec.d = j->done[id++];
        } else {
            rec.type = 'N';
            rec.n = j->pairs[in++];
        }
        rec.record = next;
        int rc = fn(ctx, j, &rec);
        if (rc != 0)
            return rc;
    }
}

/* kw_journal_shape_result's walk: one shape's records to the reducer. */
typedef struct kw_shape_feed {
    kw_reduce *r;
    int shape;
} kw_shape_feed;

static int kw_shape_feed_fn(void *ctx, const kw_journal *j, const kw_jrec *rec)
{
    (void)j;
    const kw_shape_feed *f = ctx;
    int shape = rec->type == 'E'   ? rec->e.shape
                : rec->type == 'T' ? rec->t.shape
                : rec->type == 'D' ? rec->d.shape
                                   : -1; /* V records say nothing of a shape's result */
    return shape == f->shape ? kw_reduce_add(f->r, rec) : 0;
}

int kw_journal_shape_result(kw_jresult *out, const kw_journal *j, int shape)
{
    memset(out, 0, sizeof *out);
    kw_reduce *r = NULL;
    int rc = kw_reduce_new(&r, &j->h);
    kw_shape_feed f = {r, shape};
    if (rc == 0)
        rc = kw_journal_each(j, kw_shape_feed_fn, &f);
    if (rc == 0)
        rc = kw_reduce_result(out, r, shape);
    if (rc == 0) {
        for (size_t i = 0; i < out->n_path; i++)
            out->path[i] = kw_step_at(j, out->path[i]->record);
        for (int c = 0; c < out->n_changes; c++)
            if (out->changes[c].step)
                out->changes[c].step = kw_step_at(j, out->changes[c].step->record);
    } else {
        kw_journal_result_clear(out);
    }
    kw_reduce_free(r);
    return rc;
}

/* ------------------------------------------------------------------ check */

static int kw_same_dbl(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

/* A step judged against a control: every repetition of the block is journalled
 * before the step and passes, and the recorded mean is theirs by the one mean
 * rule (kw_repstat). */
static int kw_journal_control_check(const kw_journal *j, const kw_jstep *s)
{
    int R = j->h.repeats;
    kw_repstat st;
    kw_reduce_repstat_init(&st);
    for (int r = 0; r < R; r++) {
        const kw_jeval *e = kw_journal_eval_find(j, s->shape, s->ref_id, s->ctl * R + r);
        if (!e || e->record > s->record || e->rc != 0 || (e->guards && e->guards[0]))
            return -1;
        kw_reduce_repstat_add(&st, e->m[j->h.primary], e->guards, e->rc);
    }
    return kw_same_dbl(kw_reduce_repstat_mean(&st), s->ref_mean) ? 0 : -1;
}

/* A pair (N record, kw_engine.c "the pairing"): id is the shape's
 * recommendation (its D record, before the pair), the neighbour differs from
 * it in the one knob named, both blocks are journalled before the pair, and
 * every recorded figure is kw_reduce_pair_delta's of them, bit for bit. */
static int kw_journal_pair_check(const kw_journal *j, const kw_jpair *x)
{
    const kw_jheader *h = &j->h;
    const kw_knobspace *ks = &h->space;
    int R = h->repeats;
    const kw_jdone *d = NULL;
    for (size_t i = 0; i < j->n_done; i++)
        if (j->done[i].shape == x->shape && j->done[i].record < x->record)
            d = &j->done[i];
    if (!d || d->best_id != x->id || kw_knobs_cand_id(ks, &x->cand) != x->nb_id ||
        kw_knobs_cand_distance(ks, &d->best, &x->cand) != 1 || x->cand.v[x->knob] == d->best.v[x->knob])
        return -1;
    double a[KW_REPEATS_MAX], c[KW_REPEATS_MAX];
    const char *g = "";
    for (int r = 0; r < R; r++) {
        const kw_jeval *ea = kw_journal_eval_find(j, x->shape, x->id, x->k * R + r);
        const kw_jeval *ec = kw_journal_eval_find(j, x->shape, x->nb_id, x->nk * R + r);
        if (!ea || !ec || ea->record > x->record || ec->record > x->record)
            return -1;
        a[r] = ea->m[h->primary];
        c[r] = ec->m[h->primary];
        if (!g[0])
            g = ea->guards[0] ? ea->guards : ec->guards;
    }
    kw_pairdelta pd;
    kw_reduce_pair_delta(&pd, a, c, g[0] ? 0 : R);
    return pd.n == x->n && strcmp(g, x->guards) == 0 && kw_same_dbl(pd.pick_mean, x->pick_mean) &&
                   kw_same_dbl(pd.nb_mean, x->nb_mean) && kw_same_dbl(pd.delta_pct, x->delta_pct) &&
                   kw_same_dbl(pd.lo_pct, x->lo_pct) && kw_same_dbl(pd.hi_pct, x->hi_pct)
               ? 0
               : -1;
}

int kw_journal_rerank_wins(double a, double b, double half, double min_effect_pct, int a_guard)
{
    return !a_guard && isfinite(half) && a - b + half < 0 && b - a >= min_effect_pct / 100.0 * fabs(b);
}

/* The re-rank of one shape (R records, kw_ofat.c "the re-rank"): each
 * comparison is of two configs evaluated on the shape before it, guard-passing,
 * the leader being the last leader (the first comparison's, where the search
 * stood); a challenger's last comparison decides (kw_journal_rerank_wins). *winner:
 * the last leader (0 when the shape has no R record). -1 and *bad: the first
 * record breaking that. */
static int kw_journal_rerank_winner(const kw_journal *j, int shape, uint64_t *winner, long *bad)
{
    uint64_t lead = 0;
    const kw_jrerank *prev = NULL;
    *winner = 0;
    for (size_t i = 0; i <= j->n_reranks; i++) {
        const kw_jrerank *x = i < j->n_reranks ? &j->reranks[i] : NULL;
        if (x && x->shape != shape)
            continue;
        /* prev's sequence ends here: its last record decides */
        if (prev && (!x || x->id != prev->id) &&
            kw_journal_rerank_wins(prev->a, prev->b, prev->half, j->h.min_effect_pct, prev->a_guard))
            lead = prev->id;
        if (!x)
            break;
        if (!prev)
            lead = x->rid;
        *bad = x->record;
        if (x->rid != lead)
            return -1;
        kw_jstats a, b;
        if (kw_journal_stats(&a, j, shape, x->id) != 0 || kw_journal_stats(&b, j, shape, x->rid) != 0 ||
            a.first->record > x->record || b.first->record > x->record || !a.guards_ok || !b.guards_ok) {
            kw_error_clear();
            return -1;
        }
        prev = x;
    }
    *winner = lead;
    return 0;
}

int kw_journal_check(const kw_journal *j)
{
    const kw_jheader *h = &j->h;
    const kw_knobspace *ks = &h->space;
    int tuned[KW_JOURNAL_SHAPE_MAX] = {0};
    for (int i = 0; i < h->n_tuned; i++)
        tuned[h->tuned[i]] = 1;
    for (size_t i = 0; i < j->n_evals; i++) {
        const kw_jeval *e = &j->evals[i];
        if (kw_knobs_cand_id(ks, &e->cand) != e->id)
            return kw_error_set(KW_ECORRUPT, "%s: record %ld: evaluation id does not match its knob values",
                                j->path, e->record);
        if (!tuned[e->shape])
            return kw_error_set(KW_ECORRUPT, "%s: record %ld: shape %d is not tuned by this run",
                                j->path, e->record, e->shape);
        if (kw_journal_eval_find(j, e->shape, e->id, e->rep) != e)
            return kw_error_set(KW_ECORRUPT, "%s: record %ld: the same evaluation is recorded twice",
                                j->path, e->record);
        if (e->alias) { /* an earlier full evaluation of the shape, whose result it carries */
            const kw_jeval *o = kw_journal_eval_find(j, e->shape, e->alias_of, 0);
            if (!o || o->record > e->record || o->alias)
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: an alias of %016llx, which is no "
                                    "earlier full evaluation of shape %d", j->path, e->record,
                                    (unsigned long long)e->alias_of, e->shape);
            if (o->rc != e->rc || memcmp(o->m, e->m, sizeof(double) * (size_t)h->n_metrics) != 0 ||
                strcmp(o->guards, e->guards) != 0 || strcmp(o->klass, e->klass) != 0)
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: alias %016llx's result differs "
                                    "from its original's (record %ld)", j->path, e->record,
                                    (unsigned long long)e->id, o->record);
        }
    }
    for (size_t i = 0; i < j->n_viols; i++) {
        const kw_jviol *v = &j->viols[i];
        int c = kw_knobs_cand_violates(ks, &v->cand);
        if (c < 0 || strcmp(ks->constraints[c].name, v->constraint) != 0 ||
            kw_knobs_cand_id(ks, &v->cand) != v->id)
            return kw_error_set(KW_ECORRUPT, "%s: record %ld: the recorded config does not break "
                                "constraint '%s'", j->path, v->record, v->constraint);
    }
    if (h->strategy != KW_STRATEGY_OFAT && j->n_steps > 0)
        return kw_error_set(KW_ECORRUPT, "%s: record %ld: a %s run has no steps", j->path,
                            j->steps[0].record, kw_journal_strategy_name(h->strategy));
    for (int t = 0; t < h->n_tuned; t++) {
        int shape = h->tuned[t];
        kw_cand pos;
        kw_knobs_cand_baseline(&pos, ks);
        int expect = 1;
        for (size_t i = 0; i < j->n_steps; i++) {
            const kw_jstep *s = &j->steps[i];
            if (s->shape != shape)
                continue;
            const char *sn = h->shape_names[shape];
            if (s->step != expect)
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: shape %s: step %d where step %d "
                                    "was expected", j->path, s->record, sn, s->step, expect);
            expect++;
            int dist = kw_knobs_cand_distance(ks, &pos, &s->cand);
            if (dist != 1)
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: shape %s step %d changes %d knobs "
                                    "of the incumbent (exactly one allowed)", j->path, s->record,
                                    sn, s->step, dist);
            if (s->parent_id != kw_knobs_cand_id(ks, &pos) ||
                memcmp(&s->parent, &pos, sizeof pos) != 0)
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: shape %s step %d does not start "
                                    "from the incumbent", j->path, s->record, sn, s->step);
            if (s->id != kw_knobs_cand_id(ks, &s->cand))
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: step id does not match its knob "
                                    "values", j->path, s->record);
            if (s->decision == KW_DECIDE_CONSTRAINT) {
                int c = kw_knobs_cand_violates(ks, &s->cand);
                if (c < 0 || strcmp(ks->constraints[c].name, s->constraint) != 0)
                    return kw_error_set(KW_ECORRUPT, "%s: record %ld: step %d is recorded as "
                                        "breaking constraint '%s' but does not", j->path,
                                        s->record, s->step, s->constraint);
            } else {
                if (kw_knobs_cand_violates(ks, &s->cand) >= 0)
                    return kw_error_set(KW_ECORRUPT, "%s: record %ld: step %d breaks a constraint "
                                        "but is not recorded as such", j->path, s->record, s->step);
                kw_jstats a, b;
                int ra = kw_journal_stats(&a, j, shape, s->id);
                int rb = kw_journal_stats(&b, j, shape, s->parent_id);
                kw_error_clear();
                if (ra == 0 && (a.first->record > s->record || a.n != s->n_after ||
                                !kw_same_dbl(a.mean, s->after)))
                    return kw_error_set(KW_ECORRUPT, "%s: record %ld: step %d: p95 after does not "
                                        "follow from its evaluations", j->path, s->record, s->step);
                if (ra != 0 && (s->decision != KW_DECIDE_KEEP || s->n_after != 0))
                    return kw_error_set(KW_ECORRUPT, "%s: record %ld: step %d was never evaluated",
                                        j->path, s->record, s->step);
                if (rb != 0 || b.n != s->n_before || !kw_same_dbl(b.mean, s->before))
                    return kw_error_set(KW_ECORRUPT, "%s: record %ld: step %d: the metric before "
                                        "does not follow from the parent's evaluations", j->path,
                                        s->record, s->step);
                if (s->ctl > 0 && kw_journal_control_check(j, s) != 0)
                    return kw_error_set(KW_ECORRUPT, "%s: record %ld: step %d: its control (block "
                                        "%d of %016llx) does not follow from the evaluations "
                                        "before it", j->path, s->record, s->step, s->ctl,
                                        (unsigned long long)s->ref_id);
                if (kw_is_move(s->decision) && ra != 0)
                    return kw_error_set(KW_ECORRUPT, "%s: record %ld: step %d moves to a config "
                                        "never evaluated", j->path, s->record, s->step);
            }
            if (kw_is_move(s->decision))
                pos = s->cand;
        }
        for (size_t i = 0; i < j->n_done; i++) {
            const kw_jdone *d = &j->done[i];
            if (d->shape != shape)
                continue;
            if (d->best_id != kw_knobs_cand_id(ks, &d->best))
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: best id does not match its values",
                                    j->path, d->record);
            if (h->strategy == KW_STRATEGY_OFAT && memcmp(&d->best, &pos, sizeof pos) != 0)
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: the recommended config of shape %s "
                                    "is not where its steps lead", j->path, d->record,
                                    h->shape_names[shape]);
            uint64_t won;
            long bad = d->record;
            if (kw_journal_rerank_winner(j, shape, &won, &bad) != 0)
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: shape %s: a re-rank comparison "
                                    "that does not follow from the evaluations and the comparisons "
                                    "before it", j->path, bad, h->shape_names[shape]);
            if (won && won != d->best_id)
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: the recommended config of shape %s "
                                    "is not the re-rank's winner %016llx", j->path, d->record,
                                    h->shape_names[shape], (unsigned long long)won);
            kw_jstats st;
            if (kw_journal_stats(&st, j, shape, d->best_id) != 0 || !kw_same_dbl(st.mean, d->best_primary))
                return kw_error_set(KW_ECORRUPT, "%s: record %ld: the best primary of shape %s does "
                                    "not follow from its evaluations", j->path, d->record,
                                    h->shape_names[shape]);
        }
    }
    for (size_t i = 0; i < j->n_pairs; i++)
        if (kw_journal_pair_check(j, &j->pairs[i]) != 0)
            return kw_error_set(KW_ECORRUPT, "%s: record %ld: the pair of %016llx and %016llx on "
                                "shape %s does not follow from the shape's recommendation and "
                                "the evaluations before it", j->path, j->pairs[i].record,
                                (unsigned long long)j->pairs[i].id,
                                (unsigned long long)j->pairs[i].nb_id,
                                j->pairs[i].shape < h->n_shapes ? h->shape_names[j->pairs[i].shape]
                                                                 : "?");
    kw_error_clear();
    return 0;
}

/* ------------------------------------------------------------------ reseal */

int kw_journal_reseal(const char *path)
{
    int fd, rc = kw_journal_open_file(&fd, path, KW_INPUT_RDWR, NULL); /* one descriptor: read, then rewrite */
    if (rc != 0)
        return rc;
    FILE *f = fdopen(fd, "r+b");
    if (!f) {
        close(fd);
        return kw_error_set(KW_ENOMEM, "%s: cannot open: %s", path, strerror(errno));
    }
    kw_jbuf out = {0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint32_t crc = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        size_t len = (size_t)n;
        if (line[len - 1] == '\n')
            len--;
        char *tag = NULL;
        for (size_t i = len; i-- > 0;)
            if (line[i] == ' ') {
                tag = strncmp(line + i, " crc=", 5) == 0 ? line + i : NULL;
                break;
            }
        size_t pl = tag ? (size_t)(tag - line) : len;
        crc = kw_crc_record(crc, line, pl);
        kw_jbuf_add(&out, line, pl);
        kw_journal_buf_printf(&out, " crc=%08x\n", (unsigned)crc);
    }
    free(line);
    if (out.oom)
        rc = kw_error_set(KW_ENOMEM, "out of memory");
    else if (ferror(f))
        rc = kw_error_set(KW_EIO, "%s: cannot read: %s", path, strerror(errno));
    else if (fseek(f, 0, SEEK_SET) != 0 || ftruncate(fd, 0) != 0 ||
             fwrite(out.s ? out.s : "", 1, out.len, f) != out.len || fflush(f) != 0)
        rc = kw_error_set(KW_EIO, "%s: cannot rewrite: %s", path, strerror(errno));
    if (fclose(f) != 0 && rc == 0)
        rc = kw_error_set(KW_EIO, "%s: cannot rewrite: %s", path, strerror(errno));
    kw_journal_buf_free(&out);
    return rc;
}
