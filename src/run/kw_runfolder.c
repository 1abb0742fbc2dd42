/* kw_runfolder.c - run-folder safety: the writer lock, untruncated paths,
 * stale temp files, checked output paths (see kw_runfolder.h for the rules
 * and why the lock is an OFD lock on RUN/.lock).
 *
 * Every open here is O_NOFOLLOW | O_CLOEXEC (and O_NONBLOCK where a FIFO
 * could be waiting): a symbolic link planted in a run folder is refused, never
 * followed out of it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kw_error.h"
#include "kw_input.h"
#include "kw_journal.h"
#include "kw_load.h"
#include "kw_model.h"
#include "kw_run.h"
#include "kw_runfolder.h"
#include "kw_tmpfile.h"

/* The files tune commits through temp + rename (kw_results_write_summary). */
static const char *const kw_rf_tune_files[] = {KW_RUNFOLDER_RESULTS_XML, KW_RUNFOLDER_RANKED_CSV,
                                               KW_RUNFOLDER_AUDIT_CSV,
                                               KW_RUNFOLDER_PORTABILITY_CSV};
#define KW_RF_N_TUNE_FILES (sizeof kw_rf_tune_files / sizeof kw_rf_tune_files[0])

static int kw_rf_is_tune_file(const char *name)
{
    for (size_t i = 0; i < KW_RF_N_TUNE_FILES; i++)
        if (strcmp(name, kw_rf_tune_files[i]) == 0)
            return 1;
    return 0;
}

int kw_runfolder_join(char *out, size_t n, const char *dir, const char *name)
{
    int w = snprintf(out, n, "%s/%s", dir, name);
    if (w < 0 || (size_t)w >= n) {
        if (n > 0)
            out[0] = '\0';
        return kw_error_set(KW_EINPUT, "%.200s.../%.64s: path too long (%d bytes, at most %zu)",
                            dir, name, w, n > 0 ? n - 1 : 0);
    }
    return 0;
}

/* ---------------------------------------------------------------- the lock */

struct kw_runlock {
    int fd;
    dev_t dev; /* the folder's, when the lock was taken (kw_runfolder_same) */
    ino_t ino;
};

static void kw_rf_whole_file(struct flock *fl, short type)
{
    memset(fl, 0, sizeof *fl);
    fl->l_type = type;
    fl->l_whence = SEEK_SET;
    fl->l_start = 0;
    fl->l_len = 0; /* to the end, however long */
}

/* 1 when another open file holds the journal writer's lock on RUN/journal
 * (kw_journal_lock): a run goes on there whose RUN/.lock is gone, so the
 * lock just taken on a new .lock guards nothing. */
static int kw_rf_journal_written(const char *dir)
{
    char path[KW_PATH_MAX + 16];
    if (kw_runfolder_join(path, sizeof path, dir, KW_RUNFOLDER_JOURNAL_NAME) != 0)
        return 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return 0;
    struct stat st;
    struct flock fl;
    kw_rf_whole_file(&fl, F_WRLCK);
    int held = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fcntl(fd, F_OFD_GETLK, &fl) == 0 &&
               fl.l_type != F_UNLCK;
    close(fd);
    return held;
}

int kw_runfolder_lock(kw_runlock **out, const char *dir)
{
    *out = NULL;
    char path[KW_PATH_MAX + 16];
    int rc = kw_runfolder_join(path, sizeof path, dir, KW_RUNFOLDER_LOCK_NAME);
    if (rc != 0)
        return rc;
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EISDIR) /* as a FIFO there: bad input, exit 2 (it was 1) */
        return kw_error_set(KW_EINPUT, "%s: the lock file is not a regular file (a folder)", path);
    if (fd < 0)
        return kw_error_set(errno == ELOOP ? KW_EINPUT : KW_EIO, "%s: cannot open the run "
                            "folder's lock file: %s", path, errno == ELOOP ?
                            "it is a symbolic link" : strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return kw_error_set(KW_EINPUT, "%s: the lock file is not a regular file", path);
    }
    struct flock fl;
    kw_rf_whole_file(&fl, F_WRLCK);
    if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        int err = errno;
        long pid = 0;
        kw_runfolder_writer(dir, &pid);
        close(fd);
        if (err == EAGAIN || err == EACCES) {
            if (pid > 0)
                return kw_error_set(KW_EINPUT, "%s: another knobwise (pid %ld) is writing this run "
                                    "folder; wait for it to finish or use another folder", dir, pid);
            return kw_error_set(KW_EINPUT, "%s: another knobwise is writing this run folder; wait "
                                "for it to finish or use another folder", dir);
        }
        return kw_error_set(KW_EIO, "%s: cannot lock: %s", path, strerror(err));
    }
    if (kw_rf_journal_written(dir)) {
        close(fd);
        return kw_error_set(KW_EINPUT, "%s: another knobwise is writing this run folder (it "
                            "holds the journal's lock; the folder's .lock was removed or replaced "
                            "while it ran); wait for it to finish or use another folder", dir);
    }
    kw_runlock *l = malloc(sizeof *l);
    if (!l) {
        close(fd); /* closing the only descriptor releases the lock */
        return kw_error_set(KW_ENOMEM, "out of memory locking %s", dir);
    }
    l->fd = fd;
    if (stat(dir, &st) != 0) {
        int err = errno;
        kw_runfolder_unlock(l);
        return kw_error_set(KW_EIO, "%s: %s", dir, strerror(err));
    }
    l->dev = st.st_dev;
    l->ino = st.st_ino;
    *out = l;
    return 0;
}

int kw_runfolder_same(const kw_runlock *l, const char *dir)
{
    struct stat st;
    if (!l)
        return 0;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == l->dev && st.st_ino == l->ino)
        return 0;
    return kw_error_set(KW_EIO, "%s: the run folder was moved or replaced while this tune ran "
                        "(the name now leads %s): nothing more is written there; the journal "
                        "is in the folder as moved, and `knobwise tune --resume` on it writes "
                        "the results", dir, lstat(dir, &st) != 0 ? "nowhere"
                        : S_ISLNK(st.st_mode) ? "through a symbolic link elsewhere"
                                               : "to another folder");
}

void kw_runfolder_unlock(kw_runlock *l)
{
    if (!l)
        return;
    close(l->fd);
    free(l);
}

int kw_runfolder_writer(const char *dir, long *pid)
{
    if (pid)
        *pid = 0;
    char path[KW_PATH_MAX + 16];
    if (kw_runfolder_join(path, sizeof path, dir, KW_RUNFOLDER_LOCK_NAME) != 0) {
        kw_error_clear();
        return 0;
    }
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct flock fl;
    kw_rf_whole_file(&fl, F_WRLCK);
    int held = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    /* OFD locks report l_pid -1; a classic fcntl() lock its owner */
    if (held && pid)
        *pid = fl.l_pid > 0 ? (long)fl.l_pid : 0;
    close(fd);
    return held;
}

/* ---------------------------------------------------------------- stale temp files */

int kw_runfolder_sweep(const char *dir, int *removed)
{
    int rc = 0, n = 0;
    for (size_t i = 0; i < KW_RF_N_TUNE_FILES && rc == 0; i++) {
        int one = 0;
        char d[KW_PATH_MAX], f[KW_PATH_MAX]; /* a folder there: refused before the run goes on */
        rc = kw_runfolder_own_file(d, sizeof d, f, sizeof f, dir, kw_rf_tune_files[i]);
        if (rc == 0)
            rc = kw_tmpfile_sweep(dir, kw_rf_tune_files[i], &one); /* the one temp-file rule */
        n += one;
    }
    if (removed)
        *removed = n;
    return rc;
}

/* 1 when name is a run's own entry: one of kw_runfile_names, worker.log, or
 * the temp file .NAME.tmp.XXXXXX of one of them (a write a kill cut). */
static int kw_runfolder_own_entry(const char *name)
{
    if (strcmp(name, KW_RUNFOLDER_WORKER_LOG) == 0)
        return 1;
    for (int i = 0; i < KW_RUNFILE_N_NAMES; i++) {
        const char *f = kw_runfile_names[i];
        size_t n = strlen(f);
        if (strcmp(name, f) == 0)
            return 1;
        if (name[0] == '.' && strncmp(name + 1, f, n) == 0 && strncmp(name + 1 + n, ".tmp.", 5) == 0)
            return 1;
    }
    return 0;
}

/* A new run goes into a new folder, an empty one, or one a run cut before
 * its first record left (its .lock, an empty journal, worker.log): a folder
 * holding anything else is the user's (--out . in a source tree, --out /etc)
 * and is refused, as git clone refuses a non-empty destination. A folder that
 * cannot be listed (none there, not a folder, no permission) is left to the
 * checks that make and lock it. */
static int kw_runfolder_only_own(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            kw_runfolder_own_entry(e->d_name))
            continue;
        rc = kw_error_set(KW_EINPUT, "%s: exists and holds '%.200s', which no run writes: a new "
                          "run goes into a new or empty folder; choose another --out", dir,
                          e->d_name);
    }
    closedir(d);
    return rc;
}

int kw_runfolder_fresh(const char *dir)
{
    /* past the marks: a journal is the caller's ("already holds a run"), a
     * lock file left by a run cut before its first record holds nothing */
    for (int i = KW_RUNFILE_N_MARKS; i < KW_RUNFILE_N_NAMES; i++) {
        const char *f = kw_runfile_names[i];
        char p[KW_PATH_MAX + 32];
        struct stat st;
        if (kw_runfolder_join(p, sizeof p, dir, f) != 0)
            return KW_EINPUT;
        if (lstat(p, &st) == 0)
            return kw_error_set(KW_EINPUT, "%s: exists, and %s holds no run (no journal): a new "
                                "run never replaces a file it did not write; choose another --out",
                                p, dir);
    }
    return kw_runfolder_only_own(dir);
}

int kw_runfolder_fresh_log(const char *dir)
{
    /* worker.log is appended to (a measuring run's, not replaced): one that
     * is no file of its own (a link, a FIFO, a folder, another name of a file
     * elsewhere) is refused here, before the lock file is made, not when it
     * is opened */
    char p[KW_PATH_MAX + 32];
    struct stat st;
    int rc = kw_runfolder_join(p, sizeof p, dir, KW_RUNFOLDER_WORKER_LOG);
    if (rc != 0)
        return rc;
    if (lstat(p, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_nlink > 1))
        return kw_error_set(KW_EINPUT, "%s: exists, and is %s; a run folder's own files are "
                            "always files of its own: choose another --out", p,
                            S_ISREG(st.st_mode) ? "another name of a file (a hard link)"
                                                : "not a regular file");
    /* and one in a folder no knobwise has locked is the user's own (a run
     * stopped before its journal's first byte left its .lock beside its
     * worker.log: that one is the run's to append to) */
    char lp[KW_PATH_MAX + 32];
    struct stat lst;
    if (lstat(p, &st) == 0 && kw_runfolder_join(lp, sizeof lp, dir, KW_RUNFOLDER_LOCK_NAME) == 0 &&
        lstat(lp, &lst) != 0)
        return kw_error_set(KW_EINPUT, "%s: exists, and %s holds no run (no journal, no lock "
                            "file): a new run never writes into a file it did not make; choose "
                            "another --out", p, dir);
    return 0;
}

/* ---------------------------------------------------------------- output paths */

static int kw_rf_same(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* 1 when the existing file pst (stat or lstat of it) is the file at path p, by
 * device and inode, so ./x and hard links count ("" or NULL: never). */
static int kw_rf_is_file(const struct stat *pst, const char *p)
{
    struct stat st;
    return p && p[0] && stat(p, &st) == 0 && kw_rf_same(&st, pst);
}

/* KW_EINPUT when the existing regular file path is one the verb reads: a file
 * of reads ("-o PATH: is the --accel file itself ..."), or an input of the run
 * in run_dir ("-o PATH: is an input of the run (space); ..."): its space,
 * accelerator, workload or --trace as the journal records them (reads'
 * --space, --accel, --workload in their place, as kw_run_open takes them), or
 * a file that space names (its accelerator, workload, a shape's trace);
 * --force never replaces one (it did: the run could then neither resume nor
 * verify; `recommend RUN --all --space S -o S --force` replaced S). 0
 * otherwise; run_dir and reads may be NULL. */
static int kw_rf_not_input(const char *path, const char *run_dir, const kw_runfolder_reads *reads)
{
    struct stat pst;
    if (stat(path, &pst) != 0 || !S_ISREG(pst.st_mode))
        return 0;
    static const kw_runfolder_reads none = {0};
    if (!reads)
        reads = &none;
    const char *const own[] = {reads->space, reads->accel, reads->workload, reads->other[0],
                               reads->other[1]};
    static const char *const own_opt[] = {"--space", "--accel", "--workload", "", ""};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (kw_rf_is_file(&pst, own[i]))
            return kw_error_set(KW_EINPUT, "-o %s: is the %s file itself, read by this command; "
                                "refusing to overwrite it", path,
                                own_opt[i][0] ? own_opt[i] : reads->other_what[i - 3]);
    char jp[KW_PATH_MAX + 32];
    kw_journal *j = NULL;
    if (run_dir && (kw_runfolder_join(jp, sizeof jp, run_dir, KW_RUNFOLDER_JOURNAL_NAME) != 0 ||
                    kw_journal_load_ex(&j, jp, 1) != 0)) {
        kw_journal_free(j);
        j = NULL; /* no run to protect here; the reader says what is wrong with it */
    }
    kw_error_clear();
    static const kw_run_attr given[] = {KW_RUN_SPACE, KW_RUN_ACCEL, KW_RUN_WORKLOAD, KW_RUN_TRACE};
    const char *what = NULL, *file[4];
    for (int i = 0; i < 4; i++) {
        file[i] = j ? kw_run_attr_get(j, given[i]) : NULL;
        if (!what && kw_rf_is_file(&pst, file[i]))
            what = kw_run_attr_key(given[i]);
        if (i < 3 && own[i])
            file[i] = own[i];
    }
    kw_config *c = NULL; /* and the files the space names, as the verb resolves them */
    if (!what && file[0] && file[0][0] &&
        kw_load_config(&c, file[0], file[1] && file[1][0] ? file[1] : NULL,
                       file[2] && file[2][0] ? file[2] : NULL) == 0) {
        if (kw_rf_is_file(&pst, c->space.accel_path))
            what = "accelerator";
        else if (kw_rf_is_file(&pst, c->space.workload_path))
            what = "workload";
        for (int i = 0; !what && i < c->workload.n_shapes; i++)
            if (kw_rf_is_file(&pst, c->workload.shapes[i].trace))
                what = "a shape's trace";
    }
    int of_run = j != NULL;
    kw_load_config_free(c);
    kw_journal_free(j);
    kw_error_clear();
    if (what)
        return kw_error_set(KW_EINPUT, "-o %s: is an input of the %s (%s); refusing to overwrite "
                            "it", path, of_run ? "run" : "--space read", what);
    return 0;
}

/* KW_EINPUT when the output name (in folder dir_out; pst its lstat when it
 * exists, else NULL) is one of run folder run's own files, except own_name:
 * by name when the output's folder is run's (in_run), else by identity. */
static int kw_rf_not_own(const char *path, const char *name, const struct stat *pst,
                         const char *run, int in_run, const char *own_name)
{
    for (int i = 0; i < KW_RUNFILE_N_NAMES; i++) {
        const char *f = kw_runfile_names[i];
        if (own_name && strcmp(f, own_name) == 0)
            continue;
        char fp[KW_PATH_MAX + 32];
        struct stat fst;
        int hit = in_run && strcmp(name, f) == 0;
        if (!hit && pst && kw_runfolder_join(fp, sizeof fp, run, f) == 0 && lstat(fp, &fst) == 0)
            hit = kw_rf_same(&fst, pst);
        kw_error_clear();
        if (hit)
            return kw_error_set(KW_EINPUT, "-o %s: is the run's own %s (run folder %s); "
                                "refusing to overwrite it, --force or not", path, f, run);
    }
    return 0;
}

/* The errno (EACCES, EROFS, EPERM) saying the user cannot write path (a
 * folder: nor enter it), 0 when it can or when anything else is wrong with it
 * (not there: the caller's reader names that). */
static int kw_rf_unwritable(const char *path, int is_dir)
{
    if (access(path, is_dir ? W_OK | X_OK : W_OK) == 0)
        return 0;
    int err = errno;
    return err == EACCES || err == EROFS || err == EPERM ? err : 0;
}

int kw_runfolder_resumable(const char *run_dir)
{
    char p[KW_PATH_MAX + 32];
    int err = kw_rf_unwritable(run_dir, 1), rc;
    if (err)
        return kw_error_set(KW_EINPUT, "%s: the run folder is not writable (%s), so the run "
                            "cannot be resumed there", run_dir, strerror(err));
    /* the files a resume writes into (the others it replaces by rename) */
    static const char *const own[3] = {KW_RUNFOLDER_LOCK_NAME, KW_RUNFOLDER_JOURNAL_NAME,
                                       KW_RUNFOLDER_WORKER_LOG};
    static const char *const role[3] = {"lock file", "journal", "worker log"};
    for (int i = 0; i < 3; i++) {
        if ((rc = kw_runfolder_join(p, sizeof p, run_dir, own[i])) != 0)
            return rc;
        struct stat st;
        if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if ((err = kw_rf_unwritable(p, 0)) != 0)
            return kw_error_set(KW_EINPUT, "%s: the run's %s is not writable (%s), so the run "
                                "cannot be resumed; its owner can resume it, or make it "
                                "writable", p, role[i], strerror(err));
        /* another name of the file (a hard link), maybe outside the run
         * folder, would change with it: the journal and worker.log are
         * appended to (the lock file is never written) */
        if (i > 0 && st.st_nlink > 1)
            return kw_error_set(KW_EINPUT, "%s: the run's %s has other names (%lu hard links), "
                                "and resuming would write those files too; a run folder's own "
                                "files are always files of its own (cp makes one)", p, role[i],
                                (unsigned long)st.st_nlink);
    }
    return 0;
}

int kw_runfolder_own_file(char *dir_out, size_t dir_len, char *name_out, size_t name_len,
                          const char *run_dir, const char *name)
{
    char p[KW_PATH_MAX + 32];
    int rc = kw_runfolder_join(p, sizeof p, run_dir, name);
    if (rc != 0)
        return rc;
    if (strlen(run_dir) >= dir_len || strlen(name) >= name_len)
        return kw_error_set(KW_EINPUT, "%.200s...: path too long (at most %zu bytes)", run_dir,
                            dir_len - 1);
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
        return kw_error_set(KW_EINPUT, "%s: is a folder, not a file, and no file can be put "
                            "in its place; remove it", p);
    /* a folder the user cannot write (read-only, or on a read-only file
     * system): bad input said before any work, not a write that fails after
     * it (report and recommend --all computed everything, then exit 1). A
     * folder that is not there is left to the run's reader to name. */
    int err = stat(run_dir, &st) == 0 && S_ISDIR(st.st_mode) ? kw_rf_unwritable(run_dir, 1) : 0;
    if (err)
        return kw_error_set(KW_EINPUT, "%s: the run folder is not writable (%s), so %s "
                            "cannot be put there%s", run_dir, strerror(err), name,
                            kw_rf_is_tune_file(name) ? "" : "; -o FILE writes it elsewhere");
    snprintf(dir_out, dir_len, "%s", run_dir);
    snprintf(name_out, name_len, "%s", name);
    return 0;
}

/* With --force, may the existing regular file at path be replaced by verb
 * who? Only when it holds who->mark in its first KW_RUNFOLDER_MARK_BYTES bytes
 * (kw_runfolder.h: any other file may be another run's input). */
static int kw_rf_own_output(const char *path, const kw_runfolder_verb *who)
{
    char why[KW_INPUT_WHY_MAX], head[KW_RUNFOLDER_MARK_BYTES + 1];
    int fd;
    uint64_t size;
    long n = -1;
    if (kw_runfile_open(&fd, &size, path, 0, 1, why, sizeof why) == 0) {
        n = kw_input_read(fd, head, KW_RUNFOLDER_MARK_BYTES);
        close(fd);
    }
    if (n >= 0) {
        head[n] = '\0';
        if (memchr(head, '\0', (size_t)n) == NULL && strstr(head, who->mark) != NULL)
            return 0;
    }
    return kw_error_set(KW_EINPUT, "-o %s: exists and is not a file knobwise %s wrote (no '%s' "
                        "at its start); --force replaces only %s's own output, never a file that "
                        "may be another run's input: remove it yourself if it should go", path,
                        who->verb, who->mark, who->verb);
}

int kw_runfolder_output(char *dir_out, size_t dir_len, char *name_out, size_t name_len,
                        const char *path, const char *run_dir, const kw_runfolder_reads *reads,
                        const kw_runfolder_verb *who, int force)
{
    const char *own_name = who->own_name;
    size_t len = strlen(path);
    if (len == 0 || path[len - 1] == '/')
        return kw_error_set(KW_EINPUT, "-o '%s': not a file name", path);
    /* "-" reads as standard output to everyone; a verb that can write there
     * (report, export, recommend --all) handles it before this check, the
     * others wrote a file named "-" */
    if (strcmp(path, "-") == 0)
        return kw_error_set(KW_EINPUT, "-o -: %s does not write standard output; name a file "
                            "(./- for a file named '-')", who->verb);
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    int w = slash ? snprintf(dir_out, dir_len, "%.*s", (int)(slash - path), path)
                  : snprintf(dir_out, dir_len, ".");
    if (w < 0 || (size_t)w >= dir_len || strlen(name) >= name_len)
        return kw_error_set(KW_EINPUT, "-o %.200s...: path too long (at most %zu bytes)", path,
                            dir_len - 1);
    if (dir_out[0] == '\0')
        snprintf(dir_out, dir_len, "/");
    snprintf(name_out, name_len, "%s", name);
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return kw_error_set(KW_EINPUT, "-o %s: is a folder, not a file", path);

    struct stat pst, dst;
    int exists = lstat(path, &pst) == 0;
    if (exists && S_ISDIR(pst.st_mode))
        return kw_error_set(KW_EINPUT, "-o %s: is a folder, not a file", path);
    if (exists && S_ISLNK(pst.st_mode))
        return kw_error_set(KW_EINPUT, "-o %s: is a symbolic link; name the file itself", path);
    if (exists && !S_ISREG(pst.st_mode))
        return kw_error_set(KW_EINPUT, "-o %s: is not a regular file (a device, FIFO or socket "
                            "is never replaced)", path);
    if (stat(dir_out, &dst) != 0 || !S_ISDIR(dst.st_mode) || access(dir_out, W_OK) != 0)
        return kw_error_set(KW_EINPUT, "-o %s: folder %s does not exist or is not writable", path,
                            dir_out);
    long name_max = kw_tmpfile_name_max(dir_out);
    if ((long)strlen(name) > name_max)
        return kw_error_set(KW_EINPUT, "-o %.200s%s: file name too long (%zu bytes; at most %ld "
                            "in %s, with room for its temp file .NAME.tmp.XXXXXX)", path,
                            strlen(path) > 200 ? "..." : "", strlen(name), name_max, dir_out);
    /* one of the run's own files: by identity when it exists, else by folder +
     * name; the run read (run_dir), and any run whose folder the output is in
     * (probe and calibrate read no run, but -o RUN/journal is still a journal) */
    struct stat rst;
    int in_run = run_dir && stat(run_dir, &rst) == 0 && kw_rf_same(&dst, &rst);
    if (run_dir && kw_rf_not_own(path, name, exists ? &pst : NULL, run_dir, in_run, own_name) != 0)
        return KW_EINPUT;
    int other_run = !in_run && kw_runfile_in_run(dir_out);
    if (other_run && kw_rf_not_own(path, name, exists ? &pst : NULL, dir_out, 1, NULL) != 0)
        return KW_EINPUT;
    if (exists && kw_rf_not_input(path, run_dir, reads) != 0)
        return KW_EINPUT;
    if (exists && other_run && kw_rf_not_input(path, dir_out, NULL) != 0)
        return KW_EINPUT;
    if (exists && !force)
        return kw_error_set(KW_EINPUT, "-o %s: exists; give --force to replace it", path);
    if (exists && kw_rf_own_output(path, who) != 0)
        return KW_EINPUT;
    return 0;
}
