/* kw_tmpfile.c - temp files of atomic writes, locked while written, swept
 * when a kill left them (see kw_tmpfile.h for the rules and why a lock).
 *
 * The race a sweep must lose: a writer between creating its file and its lock. The sweep
 * locks a candidate before removing it and removes it while holding the lock;
 * the writer, once it holds its lock, checks that its name still names its
 * file, and starts again under a new name when a sweep took it meanwhile.
 */
#include "kw_tmpfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kw_error.h"

#define KW_TMPFILE_TAG ".tmp."   /* .NAME.tmp.XXXXXX */
#define KW_TMPFILE_RANDOM 6      /* mkstemp's XXXXXX */
#define KW_TMPFILE_TRIES 8       /* new names tried when sweeps keep taking ours */
#define KW_TMPFILE_NAME_TRIES 100 /* names tried when one exists (mkstemp tries more) */
/* The temp file's mode before the umask, as the journal's and RUN/evidence's
 * (open 0644): the umask decides, as for any file a program creates. mkstemp
 * makes 0600 and the writers then set 0644 whatever the umask, so under
 * umask 077 results.xml, the CSVs, report.html and -o outputs were readable
 * by everyone while the journal beside them was not (until 2026-12-07). */
#define KW_TMPFILE_MODE 0644

/* Take the whole-file OFD write lock on fd without waiting: 0, or -1. */
static int kw_tmpfile_lock(int fd)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    return fcntl(fd, F_OFD_SETLK, &fl);
}

/* 1 when entry is ".name.tmp.XXXXXX". */
static int kw_tmpfile_is_temp_of(const char *entry, const char *name)
{
    size_t nl = strlen(name), tl = strlen(KW_TMPFILE_TAG);
    return entry[0] == '.' && strncmp(entry + 1, name, nl) == 0 &&
           strncmp(entry + 1 + nl, KW_TMPFILE_TAG, tl) == 0 &&
           strlen(entry + 1 + nl + tl) == KW_TMPFILE_RANDOM;
}

int kw_tmpfile_sweep(const char *dir, const char *name, int *removed)
{
    if (removed)
        *removed = 0;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return kw_error_set(KW_EIO, "%s: cannot open the folder: %s", dir, strerror(errno));
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return kw_error_set(KW_EIO, "%s: cannot list the folder: %s", dir, strerror(errno));
    }
    int rc = 0, n = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (!kw_tmpfile_is_temp_of(e->d_name, name))
            continue;
        /* a temp file is always a regular file of ours: never a link followed,
         * never a FIFO waited on, never one this user cannot write */
        int fd = openat(dfd, e->d_name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
            continue;
        struct stat st, now;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && kw_tmpfile_lock(fd) == 0 &&
            fstatat(dfd, e->d_name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
            now.st_dev == st.st_dev && now.st_ino == st.st_ino) {
            if (unlinkat(dfd, e->d_name, 0) == 0)
                n++;
            else
                rc = kw_error_set(KW_EIO, "%s/%s: cannot remove the stale temp file: %s", dir,
                                  e->d_name, strerror(errno));
        }
        close(fd); /* drops the lock, after the name is gone */
    }
    closedir(d);
    if (removed)
        *removed = n;
    return rc;
}

/* Replace the last KW_TMPFILE_RANDOM characters of path by random ones and
 * create it (O_EXCL, KW_TMPFILE_MODE less the umask); another name when one
 * exists. The fd, or -1 with errno set. */
static int kw_tmpfile_create(char *path)
{
    static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char *x = path + strlen(path) - KW_TMPFILE_RANDOM;
    for (int tries = 0; tries < KW_TMPFILE_NAME_TRIES; tries++) {
        unsigned char r[KW_TMPFILE_RANDOM];
        if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
            /* no entropy yet (early boot): the clock and the pid, as mkstemp */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            unsigned long v = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 16) ^
                              (unsigned long)tries * 2654435761UL;
            for (int i = 0; i < KW_TMPFILE_RANDOM; i++, v >>= 5)
                r[i] = (unsigned char)v;
        }
        for (int i = 0; i < KW_TMPFILE_RANDOM; i++)
            x[i] = set[r[i] % (sizeof set - 1)];
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, KW_TMPFILE_MODE);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

long kw_tmpfile_name_max(const char *dir)
{
    errno = 0;
    long max = pathconf(dir, _PC_NAME_MAX);
    if (max <= 0)
        max = NAME_MAX;
    return max - (long)(1 + strlen(KW_TMPFILE_TAG) + KW_TMPFILE_RANDOM); /* "." NAME ".tmp." XXXXXX */
}

int kw_tmpfile_open(kw_tmpfile *t, const char *dir, const char *name)
{
    t->fd = t->hold = -1;
    t->path[0] = '\0';
    if (strchr(name, '/') != NULL || name[0] == '\0')
        return kw_error_set(KW_ESTATE, "output name '%s' is not a file name", name);
    (void)kw_tmpfile_sweep(dir, name, NULL); /* a courtesy: the write goes on without it */
    kw_error_clear();
    for (int tries = 0; tries < KW_TMPFILE_TRIES; tries++) {
        int w = snprintf(t->path, sizeof t->path, "%s/.%s" KW_TMPFILE_TAG "XXXXXX", dir, name);
        if (w < 0 || (size_t)w >= sizeof t->path) {
            t->path[0] = '\0';
            return kw_error_set(KW_EINPUT, "%s/%s: path too long", dir, name);
        }
        int fd = kw_tmpfile_create(t->path);
        if (fd < 0) {
            int err = errno;
            t->path[0] = '\0';
            return kw_error_set(KW_EIO, "%s: cannot create a file there: %s", dir, strerror(err));
        }
        int hold = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        struct stat st, now;
        if (hold >= 0 && kw_tmpfile_lock(hold) == 0 && fstat(hold, &st) == 0 &&
            lstat(t->path, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino) {
            t->fd = fd;
            t->hold = hold;
            return 0;
        }
        int err = hold < 0 ? errno : 0;
        close(fd);
        if (hold >= 0)
            close(hold);
        if (err != 0) {
            unlink(t->path);
            t->path[0] = '\0';
            return kw_error_set(KW_EIO, "%s: cannot create a file there: %s", dir, strerror(err));
        }
        /* a sweep holds or took this name: it removes the file; try another */
    }
    t->path[0] = '\0';
    return kw_error_set(KW_EIO, "%s: cannot create a file there: its temp files keep being "
                        "removed by another process", dir);
}

int kw_tmpfile_commit(kw_tmpfile *t, const char *final)
{
    int rc = 0;
    if (rename(t->path, final) != 0) {
        rc = kw_error_set(KW_EIO, "%s: cannot rename into place: %s", final, strerror(errno));
        unlink(t->path);
    }
    t->path[0] = '\0';
    if (t->hold >= 0)
        close(t->hold);
    t->hold = -1;
    return rc;
}

void kw_tmpfile_discard(kw_tmpfile *t)
{
    if (t->path[0])
        unlink(t->path); /* before the lock goes: a sweep never sees it unlocked */
    t->path[0] = '\0';
    if (t->hold >= 0)
        close(t->hold);
    t->hold = -1;
}
