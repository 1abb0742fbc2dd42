/* kw_evend.c - RUN/evidence's chain and end record (see kw_evend.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kw_evcache.h"
#include "kw_evend.h"
#include "kw_journal.h"
#include "kw_runfile.h"

#define KW_EVEND_PATH_MAX 4160

uint32_t kw_evend_run_tag(const char *journal, int *ok)
{
    *ok = 0;
    int fd = open(journal, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    FILE *f = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
    if (!f) {
        close(fd);
        return 0;
    }
    uint32_t tag = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0 && len <= KW_JOURNAL_RECORD_MAX + 1) {
        if (!strchr("HAIKCMS", line[0]) || line[1] != ' ')
            break;
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        if (len < KW_JOURNAL_CRC_TAG_LEN || strncmp(line + len - 13, " crc=", 5) != 0)
            break;
        char *end;
        unsigned long v = strtoul(line + len - 8, &end, 16);
        if (*end != '\0')
            break;
        tag = (uint32_t)v;
        *ok = 1;
    }
    free(line);
    fclose(f);
    return tag;
}

int kw_evend_walk(kw_evend *out, char *buf, size_t got, uint32_t tag, kw_evend_rec_fn fn,
                  void *ud)
{
    memset(out, 0, sizeof *out);
    uint32_t crc = 0;
    int rc = 0;
    for (char *line = buf, *nl; (nl = memchr(line, '\n', got - (size_t)(line - buf))) != NULL;
         line = nl + 1) {
        size_t len = (size_t)(nl - line);
        if (len < KW_JOURNAL_CRC_TAG_LEN || memchr(line, '\0', len) ||
            strncmp(line + len - 13, " crc=", 5) != 0)
            break;
        size_t plen = len - KW_JOURNAL_CRC_TAG_LEN;
        uint32_t want = kw_crc_32(kw_crc_32(crc, line, plen), "\n", 1);
        char hex[9];
        snprintf(hex, sizeof hex, "%08x", (unsigned)want);
        if (memcmp(line + len - 8, hex, 8) != 0)
            break;
        line[plen] = '\0';
        if (out->ended)
            break; /* nothing follows the end record: what does is cut */
        if (out->good == 0) { /* the header: this run's, format 1 (no end record) or 2 */
            char want_hdr[64];
            for (int f = 1; f <= KW_EVCACHE_FORMAT && !out->format; f++) {
                snprintf(want_hdr, sizeof want_hdr, "X format=%d run=%08x", f, (unsigned)tag);
                if (strcmp(line, want_hdr) == 0)
                    out->format = f;
            }
            if (!out->format)
                break;
        } else if (line[0] == 'F') { /* the end record: as many R records as read */
            char want_end[64];
            snprintf(want_end, sizeof want_end, "F n=%zu", out->n);
            if (strcmp(line, want_end) != 0)
                break;
            out->ended = 1;
            out->end_at = (off_t)(line - buf);
            out->end_crc = crc;
        } else {
            int r = fn ? fn(ud, line) : 0;
            if (r < 0)
                rc = r;
            if (r != 0)
                break;
            out->n++;
        }
        crc = want;
        out->good = (off_t)(nl + 1 - buf);
    }
    out->crc = crc;
    return rc;
}

int kw_evend_read(const char *dir)
{
    char path[KW_EVEND_PATH_MAX], journal[KW_EVEND_PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, KW_RUNFOLDER_EVIDENCE) >= sizeof path ||
        (size_t)snprintf(journal, sizeof journal, "%s/%s", dir, KW_RUNFOLDER_JOURNAL_NAME) >=
            sizeof journal)
        return -1;
    int ok;
    uint32_t tag = kw_evend_run_tag(journal, &ok);
    if (!ok)
        return -1;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    char *buf = NULL;
    int ended = -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > KW_EVEND_MAX_BYTES ||
        !(buf = malloc((size_t)st.st_size + 1)))
        goto done;
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    kw_evend e;
    kw_evend_walk(&e, buf, got, tag, NULL, NULL);
    ended = e.ended ? 1 : e.format >= 2 ? 0 : -1;
done:
    free(buf);
    close(fd);
    return ended;
}
