/* kw_evend.h - RUN/evidence's chain read without its figures: which run it
 * belongs to, the checksums, the header's format and the end record
 * (the file format: kw_evcache.h).
 *
 *   kw_evend_run_tag  the run journal's tag an evidence file must carry
 *   kw_evend_walk     walk a file's records: header, each R record handed
 *                     to a callback, the end record; where the good part ends
 *   kw_evend_read     whether a run folder's file says the evidence ended
 *
 * Design choice: the one reader of the chain, shared by kw_evcache.c (which
 * parses the R records it is handed) and libknobwise (which asks only
 * whether the phase ended, and links this file and search/kw_crc.c, not the
 * journal). Rejected: a second scan of the file's tail in libknobwise (two
 * readers of one format that would disagree on a damaged file).
 */
#ifndef KW_EVEND_H
#define KW_EVEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The most of the file read back: the evidence of 256 shapes (the journal's
 * KW_JOURNAL_SHAPE_MAX) is 65,536 portability cells, 1,024 re-checks and the
 * neighbours, ~600 bytes a record: ~45 MB. A larger file is no evidence file
 * of a run (a planted 10 GB one was read whole into memory). */
#define KW_EVEND_MAX_BYTES (256L << 20)

/* The chained checksum of journal path's last header record (H A I K C M S),
 * read from its " crc=" field; 0 with *ok 0 when there is none. */
uint32_t kw_evend_run_tag(const char *journal, int *ok);

/* One R record's payload (NUL-terminated, writable); 0: kept (counted), 1:
 * it does not read back (the walk ends before it), a negative KW_E* code:
 * the walk ends and returns it. */
typedef int (*kw_evend_rec_fn)(void *ud, char *payload);

typedef struct kw_evend {
    int format;       /* the header's format (1 or 2; 0: no header of this run) */
    int ended;        /* the last good record is the end record (F) */
    size_t n;         /* R records kept */
    off_t good;       /* the offset after the last good record */
    off_t end_at;     /* where the end record starts (ended) */
    uint32_t end_crc; /* the chained checksum before it (ended) */
    uint32_t crc;     /* the chained checksum of the last good record */
} kw_evend;

/* Walk buf[0..len) (NUL-terminated at len, writable: payloads are cut in
 * place) as an evidence file of the run whose tag is tag: its records up to
 * the first that does not read back (torn, bad checksum, not this run's
 * header, an F that does not count the R records before it, anything after
 * F), each R record handed to fn (NULL: counted only). 0 or fn's error. */
int kw_evend_walk(kw_evend *out, char *buf, size_t len, uint32_t tag, kw_evend_rec_fn fn,
                  void *ud);

/* Whether dir's evidence file (read only, never through a link, only a
 * regular file of at most KW_EVEND_MAX_BYTES) says the evidence phase
 * ended: 1 it ends with the end record; 0 a format-2 file without it (the
 * phase was cut, or is being made); -1 it cannot say (no file of this run,
 * a format-1 file, or it cannot be read). Touches no error object. */
int kw_evend_read(const char *dir);

#endif
