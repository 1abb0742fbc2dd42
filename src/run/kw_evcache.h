/* kw_evcache.h - the evidence phase's journal: RUN/evidence, every evaluation
 * of the evidence phase (re-checks at the final sample, portability cells,
 * the recommendation's missing neighbours) kept as it finishes, so a resume
 * continues the evidence where a time limit, a signal or a kill cut it.
 *
 *   kw_evcache_open   RUN/evidence read (its good records kept, a torn or
 *                     damaged tail cut off, a file of another run emptied)
 *                     and opened for appending
 *   kw_evcache_open_read  what RUN/evidence keeps, read only (the best-so-far
 *                     rewrites during the search: they read it, never add)
 *   kw_evcache_get    the figures of (evaluator, shape, configuration), if kept
 *   kw_evcache_put    keep one (buffered)
 *   kw_evcache_sync   write what was kept since the last sync, fsync
 *   kw_evcache_end    write the end record: the evidence phase finished
 *   kw_evcache_reopen a resume cuts the end record off before it rewrites
 *   (whether the file says the phase ended, read only: kw_evend_read, kw_evend.h)
 *   kw_evcache_free   close (accepts NULL)
 *
 * FILE FORMAT (format 2), the journal's conventions (kw_journal.h): one
 * record per line, space-separated key=value fields, strings
 * percent-escaped, doubles in the shortest form that reads back to the
 * identical double, and a chained CRC-32 " crc=XXXXXXXX" over every payload
 * + "\n" from the first record:
 *   X format=2 run=HHHHHHHH     HHHHHHHH: the chained checksum of the run
 *                               journal's last header record, so a file
 *                               of another run (or another header) is
 *                               never read as this run's
 *   R e=f|p s=SHAPE id=ID m=V0,V1,... g=GUARDS k=KLASS
 *       one evaluation: e=f by the final evaluator (the re-checks: the
 *       space's final sample, the long thermal window), e=p by the search's
 *       (portability, neighbours); s= the evaluator's shape index, id= the
 *       configuration's id (kw_knobs_cand_id); e=v a ranking verdict's
 *       paired comparison (kw_evidence_verdict): id= its key (the two
 *       configurations' ids and the sample, mixed), m=A,B,HALF,BATCHES,
 *       SAMPLES (kw_paired; since 2026-12-07: an older build reads the
 *       file up to the first such record and evaluates the rest again)
 *   F n=N
 *       the end record, last: the evidence phase finished (every
 *       evaluation made, the results written from them), N the R records
 *       before it. Written after results.xml, so a kill between the two
 *       reads as a cut (a resume writes it: nothing is evaluated again).
 *       Format 1 (before 2026-12-07) had none: a format-1 file without it
 *       says nothing about the phase's end (readers fall back to
 *       results.xml); a format-2 file without it is a cut evidence phase
 *       (a --time-limit, a signal, a kill), whatever results.xml says.
 * Records are appended in the evidence's job order (kw_evidence.c), failed
 * evaluations never: the file is a pure function of the run, whatever the
 * thread count or where a cut fell.
 *
 * Design choice: a file of its own beside the journal, not records in it:
 * the journal is the search's proof (verify checks its every record, resume
 * replays it byte for byte, a Z record ends it), and the evidence is a
 * deterministic function of it that verify recomputes; the evidence file is
 * a cache of that function. So its damage is never an error: a record that
 * does not read back ends what is kept (the evaluations after it are made
 * again), and a file that cannot be written is given up (the evidence is
 * still evaluated, only not kept). Rejected: E records after the journal's
 * Z (every journal reader would have to skip them, and verify to prove
 * them), and no file (a resume under the same short --time-limit started
 * the evidence from scratch each time and never finished).
 */
#ifndef KW_EVCACHE_H
#define KW_EVCACHE_H

#include <stdint.h>

#include "kw_search.h"

#define KW_EVCACHE_FORMAT 2
#define KW_EVCACHE_FINAL 'f'  /* the final evaluator's (re-checks) */
#define KW_EVCACHE_SEARCH 'p' /* the search evaluator's (portability, neighbours) */
#define KW_EVCACHE_VERDICT 'v' /* the ranking verdicts' paired comparisons (kw_evidence_verdict) */

typedef struct kw_evcache kw_evcache;

/* Open dir's evidence file for run journal dir/journal (whose header names
 * the run), creating it when missing; ks gives configuration ids. A symbolic
 * link or a file with other names at its place is replaced by a file of its
 * own (nothing outside the run folder is read or written). KW_EIO/KW_ENOMEM
 * when it cannot be opened (the caller goes on without it). *out owned by
 * the caller (kw_evcache_free). */
int kw_evcache_open(kw_evcache **out, const char *dir, const kw_knobspace *ks);

/* What dir's evidence file keeps, read only: nothing is created, cut or
 * written (kw_evcache_put and _sync do nothing), so the file stays the
 * uninterrupted run's prefix whatever a timed rewrite reads. *out NULL (and
 * 0 returned) when there is no file of this run to read: a missing file, no
 * journal header, a link or a non-regular file. KW_ENOMEM. */
int kw_evcache_open_read(kw_evcache **out, const char *dir, const kw_knobspace *ks);

/* 1 and *m filled (its first n_metrics figures, the rest 0) when the
 * evaluation of c on shape by evaluator `which` is kept, else 0. */
int kw_evcache_get(const kw_evcache *c, char which, int shape, const kw_cand *cand,
                   kw_metrics *m);

/* Keep one evaluation (its first n_metrics figures); written by the next
 * kw_evcache_sync. */
void kw_evcache_put(kw_evcache *c, char which, int shape, const kw_cand *cand,
                    const kw_metrics *m, int n_metrics);

/* kw_evcache_get and _put by a record id the caller makes (a paired
 * comparison's key is no one configuration's id). */
int kw_evcache_get_id(const kw_evcache *c, char which, int shape, uint64_t id, kw_metrics *m);
void kw_evcache_put_id(kw_evcache *c, char which, int shape, uint64_t id, const kw_metrics *m,
                       int n_metrics);

/* Write and fsync what was put since the last sync. A failure gives the file
 * up for the rest of the run (said by kw_evcache_failed), never the run. */
void kw_evcache_sync(kw_evcache *c);

/* Write the end record (after a sync of what was put): the evidence phase
 * finished. Nothing when the file already ends so or was given up. A put
 * after it (a later run's evidence asking for more) cuts it off first. */
void kw_evcache_end(kw_evcache *c);

/* A tune that takes the run over (a resume) cuts the end record off dir's
 * evidence file, if it has one, before it writes anything: until its own
 * evidence ends (kw_evcache_end writes the record again, nothing evaluated
 * again) its rewrites of results.xml hold less than the whole evidence, and
 * a kill among them must not leave a file that says the phase ended. No file
 * of its own: nothing done. KW_EIO when the record cannot be cut. */
int kw_evcache_reopen(const char *dir, const kw_knobspace *ks);


/* Evaluations read back at open. */
long kw_evcache_kept(const kw_evcache *c);
/* Evaluations written since open. */
long kw_evcache_added(const kw_evcache *c);
/* The reason the file was given up ("" while it works). */
const char *kw_evcache_failed(const kw_evcache *c);

void kw_evcache_free(kw_evcache *c);

#endif
