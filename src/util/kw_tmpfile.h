/* kw_tmpfile.h - the temp file every atomic write goes through (temp in the
 * output's folder, written, fsync'd, renamed over the output), named and
 * locked so that one left by a kill is recognised and removed by the next
 * write of the same output, and one being written now never is.
 *
 * Table of contents:
 *   kw_tmpfile_open     sweep NAME's stale temps in DIR, then create and lock
 *                       DIR/.NAME.tmp.XXXXXX
 *   kw_tmpfile_commit   rename it over DIR/NAME, then drop the lock
 *   kw_tmpfile_discard  remove it, then drop the lock
 *   kw_tmpfile_sweep    remove DIR's stale temps of NAME (no writer holds them)
 *
 * Design choice: the writer holds an OFD write lock (fcntl F_OFD_SETLK) on its
 * temp file from its creation to its rename, on a descriptor of its own (the
 * caller may fclose the one it writes through). The kernel drops the lock when
 * the writer dies, however it dies (SIGKILL included), so "no lock" is exactly
 * "nobody will rename this": a sweep takes the lock itself before it removes a
 * temp, and never removes one a live writer holds (`report` run twice at once
 * into one folder keeps both). Only files named .NAME.tmp.XXXXXX for the NAME
 * being written, regular, and writable by this user are candidates: a sweep
 * never touches another output's temps nor anything else in the folder.
 * Rejected: a pid in the name (reused pids; another host on a shared folder),
 * an age limit (a slow write looks stale; a fresh kill's temp stays). Before
 * this, only tune --resume swept (its own four names) and a temp that a kill
 * left beside report.html or mappings.csv stayed for ever.
 */
#ifndef KW_TMPFILE_H
#define KW_TMPFILE_H

#include <stddef.h>

#define KW_TMPFILE_PATH_MAX 4096

typedef struct kw_tmpfile {
    int fd;                           /* write through this (fdopen it; closing it is fine) */
    int hold;                         /* the descriptor holding the lock until commit/discard */
    char path[KW_TMPFILE_PATH_MAX];   /* DIR/.NAME.tmp.XXXXXX */
} kw_tmpfile;

/* The longest output name whose temp file .NAME.tmp.XXXXXX fits in folder
 * dir (its file system's name limit, pathconf _PC_NAME_MAX, else NAME_MAX,
 * less the 12 bytes the temp name adds): a longer name can never be written
 * (`report -o` of a 250-byte name computed the report, then failed, exit 1). */
long kw_tmpfile_name_max(const char *dir);

/* Sweep dir's stale temps of name (kw_tmpfile_sweep), then create
 * dir/.name.tmp.XXXXXX (mode 0644 less the umask, as the journal) and lock it. KW_EINPUT
 * when name holds '/' or the path does not fit, KW_EIO "DIR: cannot create a
 * file there: ..." otherwise. On failure nothing is left and t->fd, t->hold
 * are -1. */
int kw_tmpfile_open(kw_tmpfile *t, const char *dir, const char *name);
/* rename(t->path, final), then release the lock. KW_EIO "FINAL: cannot rename
 * into place: ..." (the temp file is then removed). t->fd is not closed. */
int kw_tmpfile_commit(kw_tmpfile *t, const char *final);
/* Remove the temp file (when one was made) and release the lock; accepts a
 * kw_tmpfile that kw_tmpfile_open failed on. t->fd is not closed. */
void kw_tmpfile_discard(kw_tmpfile *t);
/* Remove every ".name.tmp.XXXXXX" regular file of dir that no live writer
 * locks. *removed (may be NULL) gets the count. KW_EIO when one cannot be
 * removed or dir cannot be listed. */
int kw_tmpfile_sweep(const char *dir, const char *name, int *removed);

#endif
