/* kw_runfile.c - a run folder's own files and the one safe open of them (see
 * kw_runfile.h for the rule).
 *
 * Design choice: the no-follow open is kw_input_open plus an identity check,
 * not a second open with O_NOFOLLOW: the path is lstat'ed (a link is refused
 * by what it is), then opened with every other rule of an input (no FIFO
 * wait, regular files only, the size limit), and what was opened must be the
 * file lstat saw (same device and inode). A link or another file renamed in
 * between gives another inode and is refused, so there is no window. The
 * open itself is kw_input_open_as(KW_INPUT_NOFOLLOW) in search/, so that the
 * journal's reader (search/ never includes src/) uses the same one.
 * Rejected: realpath() and a prefix test (a link inside the run folder to
 * another of its files would pass, and the path is resolved twice).
 */
#include "kw_runfile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kw_error.h"
#include "kw_input.h"

const char *const kw_runfile_names[KW_RUNFILE_N_NAMES] = {
    KW_RUNFOLDER_JOURNAL_NAME, KW_RUNFOLDER_LOCK_NAME,       KW_RUNFOLDER_RESULTS_XML,
    KW_RUNFOLDER_RANKED_CSV,   KW_RUNFOLDER_AUDIT_CSV,       KW_RUNFOLDER_PORTABILITY_CSV,
    KW_RUNFOLDER_REPORT_HTML,  KW_RUNFOLDER_MAPPINGS_CSV,    KW_RUNFOLDER_EVIDENCE};

#define KW_RUNFILE_PATH_MAX 4096

int kw_runfile_in_run(const char *dir)
{
    for (int i = 0; i < KW_RUNFILE_N_MARKS; i++) {
        char p[KW_RUNFILE_PATH_MAX + 32];
        struct stat st;
        int w = snprintf(p, sizeof p, "%s/%s", dir, kw_runfile_names[i]);
        if (w > 0 && (size_t)w < sizeof p && lstat(p, &st) == 0)
            return 1;
    }
    return 0;
}

/* 1 when path names one of kw_runfile_names in a run folder, else 0. */
static int kw_runfile_is_own(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    int own_name = 0;
    for (int i = 0; i < KW_RUNFILE_N_NAMES && !own_name; i++)
        own_name = strcmp(name, kw_runfile_names[i]) == 0;
    if (!own_name)
        return 0;
    char dir[KW_RUNFILE_PATH_MAX];
    if (kw_input_dir_of(dir, sizeof dir, path) != 0)
        return 1; /* a folder too long to look at: the safe side */
    return kw_runfile_in_run(dir);
}

int kw_runfile_open(int *fd, uint64_t *bytes, const char *path, uint64_t max_bytes, int own,
                    char *why, size_t why_len)
{
    if (!own && !kw_runfile_is_own(path))
        return kw_input_open(fd, bytes, path, max_bytes, why, why_len);
    return kw_input_open_as(fd, bytes, path, max_bytes, KW_INPUT_NOFOLLOW, why, why_len);
}
