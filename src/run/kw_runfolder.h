/* kw_runfolder.h - the rules that keep a run folder safe: one
 * writer at a time, paths that are never truncated, outputs that can never
 * land on a run's own files or on a device, stale temp files swept.
 *
 * Table of contents:
 *   kw_runfolder_join      DIR/NAME into a buffer, refused when it does not fit
 *   kw_runfolder_lock      the exclusive writer lock (RUN/.lock, an open file
 *                          description lock): tune and tune --resume hold it
 *                          for the whole run
 *   kw_runfolder_writer    is a writer holding the lock now? (readers ask,
 *                          without taking any lock, so they never block a writer)
 *   kw_runfolder_sweep     remove the .NAME.tmp.XXXXXX files a kill between
 *                          write and rename left (under the lock only)
 *   kw_runfolder_fresh     may a new run be made in this folder (none of a
 *                          run's file names taken by files it did not write)?
 *   kw_runfolder_output    check a user-named output path (-o) before anything
 *                          is computed or written
 *
 * Design choice: the lock is an OFD lock (fcntl F_OFD_SETLK) on a lock file,
 * not flock() on the folder: a reader can test it (F_OFD_GETLK) without
 * taking it, so `audit` started the same millisecond as `tune --resume`
 * never makes the writer fail. The kernel drops the lock when the writer
 * dies however it dies, so a left-over RUN/.lock file holds nothing.
 * Rejected: a pid file (stale after SIGKILL; pid reuse), flock() (no test
 * without acquiring).
 */
#ifndef KW_RUNFOLDER_H
#define KW_RUNFOLDER_H

#include <stddef.h>
#include <sys/stat.h>

/* The run folder's layout (KW_RUNFOLDER_*_NAME, the result files' names) and
 * the rule that its own files are never read through a link: kw_runfile.h. */
#include "kw_runfile.h"

/* out = dir + "/" + name. KW_EINPUT "DIR/NAME: path too long (N bytes, at
 * most M)" when it does not fit in n bytes; out is then "". */
int kw_runfolder_join(char *out, size_t n, const char *dir, const char *name);

typedef struct kw_runlock kw_runlock;

/* Take the exclusive writer lock of run folder dir (which must exist). When
 * another process holds it: KW_EINPUT "DIR: another knobwise is writing this
 * run folder; wait for it to finish or use another folder", with nothing
 * written; the same when another open file holds the journal writer's lock
 * on DIR/journal (a run goes on whose .lock was removed). KW_EIO when the
 * lock file cannot be opened. *out owned by the
 * caller: kw_runfolder_unlock (accepts NULL) releases it. */
int kw_runfolder_lock(kw_runlock **out, const char *dir);
void kw_runfolder_unlock(kw_runlock *l);

/* 0 when dir (the path the lock was taken with) still names the folder l
 * locked (its device and inode then, symbolic links followed), else KW_EIO
 * saying the folder was moved or replaced. tune writes its files by path:
 * until 2026-12-07 a run folder renamed and replaced by a symbolic link
 * while tune ran got its results written into the link's target (outside
 * the run), the run folder none. l NULL: 0. */
int kw_runfolder_same(const kw_runlock *l, const char *dir);

/* 1 when a process holds dir's writer lock now, else 0 (no lock file, or
 * nobody holds it). Takes no lock. *pid (may be NULL) gets the holder's pid
 * when the kernel tells it (a classic fcntl lock), else 0 (an OFD lock, as
 * knobwise's own, reports none). */
int kw_runfolder_writer(const char *dir, long *pid);

/* Remove every stale ".NAME.tmp.XXXXXX" file of dir (kw_tmpfile_sweep) whose NAME is one
 * of the files tune writes there (results.xml, ranked.csv, audit.csv,
 * portability.csv). Call only with the writer lock held. *removed (may be
 * NULL) gets the count. KW_EIO when one cannot be removed; KW_EINPUT when a
 * folder stands where one of those files goes (kw_runfolder_own_file: tune
 * --resume ran, then could not put its results in place, exit 1, and said to
 * resume again). */
int kw_runfolder_sweep(const char *dir, int *removed);

/* KW_EINPUT ("DIR/results.xml: exists, and DIR holds no run ...") when folder
 * dir, where a new run is to be made (tune --out DIR, no journal there), holds
 * a file by a name the run writes (results.xml, ranked.csv, audit.csv,
 * portability.csv, report.html, mappings.csv): tune renamed its own over the
 * user's files; also ("DIR: exists and holds 'NAME', which no run writes")
 * when it holds anything but a run's own names and their temp files (a
 * folder of the user's). 0 otherwise, also when dir does not exist. */
int kw_runfolder_fresh(const char *dir);
/* The same for a new measured run's worker.log (appended to, not replaced):
 * KW_EINPUT when it is not a regular file, has other names (hard links: the
 * worker's stderr went into the file by the other name), or is there while
 * no .lock is (the user's own file, which the run appended to; a run stopped
 * before its journal's first byte leaves its .lock beside its worker.log). */
int kw_runfolder_fresh_log(const char *dir);

/* Who writes an -o output: the verb (for messages), the mark its own output
 * always holds in its first KW_RUNFOLDER_MARK_BYTES bytes, and its own file
 * in a run folder (report.html, mappings.csv; NULL when none). */
/* The verb's own file in run folder run_dir, written there without -o
 * (report's report.html, recommend --all's mappings.csv): dir_out/name_out
 * set to run_dir and name (tune's result files: kw_runfolder_sweep). KW_EINPUT
 * when the path does not fit, when run_dir is a folder the user cannot write
 * ("RUN: the run folder is not writable (Permission denied), so report.html
 * cannot be put there; -o FILE writes it elsewhere"), or when a folder stands there
 * ("RUN/report.html: is a folder, not a file ..."):
 * rename() cannot replace one, and the verb computed everything first, then
 * failed (exit 1). Anything else there is the verb's to replace (a link or a
 * FIFO is replaced itself, nothing outside the run folder is touched). */
/* KW_EINPUT (exit 2) when tune --resume could not write run folder run_dir:
 * the folder, its .lock, journal or worker.log not writable by the user
 * (read-only, another user's, a read-only file system), or the journal or
 * worker.log with other names (hard links: appending wrote a file outside
 * the run folder too); said before the lock is taken or anything is written.
 * Before, a .lock the user could not open was exit 1 ("cannot open the run
 * folder's lock file"). The folder test is the one kw_runfolder_own_file
 * makes for report and recommend --all. 0 otherwise (what is missing or no
 * regular file is left to the lock and the reader). */
int kw_runfolder_resumable(const char *run_dir);

int kw_runfolder_own_file(char *dir_out, size_t dir_len, char *name_out, size_t name_len,
                          const char *run_dir, const char *name);

#define KW_RUNFOLDER_MARK_BYTES 4096
typedef struct kw_runfolder_verb {
    const char *verb;     /* "report", "recommend --all", "export", "probe", "calibrate" */
    const char *mark;     /* KW_REPORT_MARK, KW_MAPPINGS_MARK, ... */
    const char *own_name; /* KW_RUNFOLDER_REPORT_HTML, ...; NULL: none */
} kw_runfolder_verb;

/* The user named path (-o PATH) as the output of verb `who` reading run
 * folder run_dir (NULL when none: probe, calibrate). The one check of every
 * -o (report, recommend --all, export, probe, calibrate). Refused with
 * KW_EINPUT (exit 2) when path
 *   - is empty or ends in '/', or does not fit (dir_out/name_out),
 *   - exists and is not a regular file (a folder, a FIFO, a device, a
 *     symbolic link: rename() would replace the link or the device itself),
 *   - is in a folder that does not exist or is not writable,
 *   - has a file name too long for its temp file (kw_tmpfile_name_max),
 *   - is one of the run's own files (the journal, the lock, the result files,
 *     compared by device and inode, so RUN/./journal and hard links count),
 *     except who->own_name (the verb's own file in the run folder),
 *   - is one of the own files of the run folder it is in, whatever run the
 *     verb read (a folder holding a journal or a .lock is a run folder:
 *     `probe -o RUN/journal --force` replaced a run's journal),
 *   - is a file the verb itself reads (reads, may be NULL: its --space,
 *     --accel, --workload, calibrate's --measured, export's results.xml or
 *     mappings.csv),
 *   - is an input of the run, or of the run folder it is in
 *     (the journal's space, accelerator, workload, traces; reads' --space,
 *     --accel, --workload in place of the journal's, as the verb loads them),
 *   - exists and force is 0,
 *   - exists, force is 1, and it does not hold who->mark in its first
 *     KW_RUNFOLDER_MARK_BYTES bytes ("-o PATH: exists and is not a file
 *     knobwise VERB wrote ..."): a file outside every run folder may still be
 *     another run's input (`probe -o spaces/accel/h100.xml --force`, `export
 *     run -o h100.xml --force` replaced an accelerator file that runs read, and
 *     no registry of runs says which), so --force replaces only the verb's own
 *     earlier output.
 * On success dir_out/name_out hold the folder and the file name to commit. */
typedef struct kw_runfolder_reads {
    const char *space, *accel, *workload; /* --space, --accel, --workload (NULL: the run's) */
    const char *other[2];                 /* any other file the verb reads (NULL: none) ... */
    const char *other_what[2];            /* ... and how to name it ("--measured") */
} kw_runfolder_reads;
int kw_runfolder_output(char *dir_out, size_t dir_len, char *name_out, size_t name_len,
                        const char *path, const char *run_dir, const kw_runfolder_reads *reads,
                        const kw_runfolder_verb *who, int force);

#endif
