/* kw_runfile.h - a run folder's own files: their names, whether a path names
 * one, and the one safe open of them (never through a symbolic link).
 *
 * Table of contents:
 *   kw_runfile_names    every file tune and the verbs write into a run folder
 *   kw_runfile_in_run   is this folder a run folder (a journal or a .lock)?
 *   kw_runfile_open     kw_input_open, never through a symbolic link for a
 *                       run folder's own file
 *
 * The rule: a run folder's own files (its journal, lock and result files) are
 * never read through a symbolic link: a link planted at RUN/results.xml
 * pointed verify and export out of the run folder. Any other input a person
 * names may be a link they made (`ln -s run7/results.xml current.xml; knobwise
 * export current.xml`): it is followed, as --space, --accel and --workload are.
 * Lives in src/util (not with the writer lock in src/run/kw_runfolder.c) so
 * that the XML reader and the installed library (libknobwise, which carries
 * src/util's reader) apply it too.
 */
#ifndef KW_RUNFILE_H
#define KW_RUNFILE_H

#include <stddef.h>
#include <stdint.h>

/* The run folder's layout: every file a run or a verb writes into it, by the
 * one name the writers and the readers use. */
#define KW_RUNFOLDER_LOCK_NAME ".lock"   /* the lock file inside a run folder */
#define KW_RUNFOLDER_JOURNAL_NAME "journal"
#define KW_RUNFOLDER_RESULTS_XML "results.xml"       /* tune's result files ... */
#define KW_RUNFOLDER_RANKED_CSV "ranked.csv"
#define KW_RUNFOLDER_AUDIT_CSV "audit.csv"
#define KW_RUNFOLDER_PORTABILITY_CSV "portability.csv" /* ... (kw_results_write_summary) */
#define KW_RUNFOLDER_WORKER_LOG "worker.log"         /* a measuring evaluator's worker's stderr */
#define KW_RUNFOLDER_REPORT_HTML "report.html"       /* knobwise report */
#define KW_RUNFOLDER_MAPPINGS_CSV "mappings.csv"     /* knobwise recommend */
#define KW_RUNFOLDER_EVIDENCE "evidence"             /* the evidence phase's kept evaluations
                                                      * (kw_evcache.h) */

/* What tune and the verbs write into a run folder (an output path naming one
 * of these, other than the verb's own, would destroy the run; a reader never
 * reads one through a link). The first KW_RUNFILE_N_MARKS make a folder a run
 * folder: the journal and the lock. */
#define KW_RUNFILE_N_NAMES 9
#define KW_RUNFILE_N_MARKS 2
extern const char *const kw_runfile_names[KW_RUNFILE_N_NAMES];

/* 1 when folder dir is a run folder: it holds a journal or a lock file (a run
 * cut before its first record, or with its journal torn, is still a run), by
 * lstat (a FIFO or a link there counts, and is never opened); else 0. */
int kw_runfile_in_run(const char *dir);

/* kw_input_open (a regular file, no FIFO wait, max_bytes, the same failures
 * and `why`), and when own is 1 or path is a run folder's own file
 * (it names one of kw_runfile_names and its folder, the part before the last
 * '/' or "." when none, is kw_runfile_in_run), never through a symbolic link: KW_EINPUT "is a symbolic
 * link; a run folder's own files are always files of its own" when path is
 * one, or when what was opened is not the file that was at path (a link or
 * another file swapped in between the look and the open: the file is compared
 * by device and inode, so there is no window). KW_EIO "cannot open: ..." when
 * there is no such file. */
int kw_runfile_open(int *fd, uint64_t *bytes, const char *path, uint64_t max_bytes, int own,
                    char *why, size_t why_len);

#endif
