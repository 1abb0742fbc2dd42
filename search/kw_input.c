/* kw_input.c - the one way knobwise opens an input file (see kw_input.h).
 *
 * Design choice: open first, then check what was opened. open(2) with
 * O_NONBLOCK returns at once even for a FIFO without a writer; fstat(2) on the
 * descriptor then tells what the path really is, with no window between a
 * stat of the name and the open in which the name could be replaced. A
 * refusal of anything that is not a regular file is simpler and safer than
 * reading special files with timeouts: no knobwise input is ever a pipe or a
 * device.
 */
#include "kw_input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kw_error.h"

static const char *kw_input_kind(mode_t m)
{
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a plain file";
}

int kw_input_open(int *fd, uint64_t *bytes, const char *path, uint64_t max_bytes, char *why,
                  size_t why_len)
{
    return kw_input_open_as(fd, bytes, path, max_bytes, 0, why, why_len);
}

int kw_input_open_as(int *fd, uint64_t *bytes, const char *path, uint64_t max_bytes, int how,
                     char *why, size_t why_len)
{
    *fd = -1;
    *bytes = 0;
    why[0] = '\0';
    /* no-follow: the path is lstat'ed (a link is refused by what it is) and
     * what is opened must be the file lstat saw (same device and inode): a
     * link or another file swapped in between is refused, no window */
    struct stat seen;
    static const char link_why[] = KW_INPUT_LINK_WHY;
    if (how & KW_INPUT_NOFOLLOW) {
        if (lstat(path, &seen) != 0) {
            snprintf(why, why_len, "cannot open: %s", strerror(errno));
            return KW_EIO;
        }
        if (S_ISLNK(seen.st_mode)) {
            snprintf(why, why_len, "%s", link_why);
            return KW_EINPUT;
        }
        if (!S_ISREG(seen.st_mode)) {
            snprintf(why, why_len, "is %s, not a regular file", kw_input_kind(seen.st_mode));
            return KW_EINPUT;
        }
    }
    int mode = (how & KW_INPUT_RDWR)     ? O_RDWR
               : (how & KW_INPUT_APPEND) ? O_WRONLY | O_APPEND
                                         : O_RDONLY;
    int f = open(path, mode | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (f < 0) {
        snprintf(why, why_len, "cannot open: %s", strerror(errno));
        return KW_EIO;
    }
    struct stat st;
    if (fstat(f, &st) != 0) {
        snprintf(why, why_len, "cannot stat: %s", strerror(errno));
        close(f);
        return KW_EIO;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "is %s, not a regular file", kw_input_kind(st.st_mode));
        close(f);
        return KW_EINPUT;
    }
    *bytes = (uint64_t)st.st_size;
    if (max_bytes > 0 && (uint64_t)st.st_size > max_bytes) {
        snprintf(why, why_len, "is %lld bytes, over the %llu-byte limit for this input",
                 (long long)st.st_size, (unsigned long long)max_bytes);
        close(f);
        return KW_EINPUT;
    }
    if ((how & KW_INPUT_NOFOLLOW) && (st.st_dev != seen.st_dev || st.st_ino != seen.st_ino)) {
        snprintf(why, why_len, "%s (or was replaced while it was opened)", link_why);
        close(f);
        return KW_EINPUT;
    }
    int fl = fcntl(f, F_GETFL);
    if (fl >= 0)
        (void)fcntl(f, F_SETFL, fl & ~O_NONBLOCK);
    *fd = f;
    return 0;
}

int kw_input_named(const char *opt, const char *path)
{
    if (path == NULL || path[0] != '\0')
        return 0;
    if (opt == NULL)
        return kw_error_set(KW_EINPUT, "'': names no file");
    return kw_error_set(KW_EINPUT, "%s '': names no file", opt);
}

size_t kw_input_bom(const char *s)
{
    return s && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB &&
                   (unsigned char)s[2] == 0xBF
               ? 3
               : 0;
}

int kw_input_line(FILE *f, char *line, size_t cap, size_t *len, int *flags)
{
    size_t n = 0;
    int c, any = 0;
    *flags = 0;
    while ((c = getc(f)) != EOF && c != '\n') {
        any = 1;
        if (c == '\0')
            *flags |= KW_INPUT_LINE_NUL;
        if (n + 1 < cap)
            line[n++] = (char)c;
        else
            *flags |= KW_INPUT_LINE_LONG;
    }
    if (cap > 0)
        line[n] = '\0';
    if (c == EOF && !any) {
        *len = 0;
        return 0;
    }
    if (n > 0 && line[n - 1] == '\r' && !(*flags & KW_INPUT_LINE_LONG))
        line[--n] = '\0';
    *len = n;
    return 1;
}

long kw_input_read(int fd, void *buf, size_t max_bytes)
{
    size_t n = 0;
    while (n < max_bytes) {
        ssize_t r = read(fd, (char *)buf + n, max_bytes - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    return (long)n;
}

FILE *kw_input_fopen(const char *path, uint64_t max_bytes)
{
    char why[KW_INPUT_WHY_MAX];
    int fd;
    uint64_t size;
    int rc = kw_input_open(&fd, &size, path, max_bytes, why, sizeof why);
    if (rc != 0) {
        kw_error_set(rc, "%s: %s", path, why);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        kw_error_set(KW_ENOMEM, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int kw_input_dir_of(char *dir, size_t n, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, n, ".");
    else if (slash == path)
        snprintf(dir, n, "/");
    else if ((size_t)(slash - path) >= n)
        return -1;
    else
        snprintf(dir, n, "%.*s", (int)(slash - path), path);
    return 0;
}

int kw_input_sync_dir_of(const char *path)
{
    char dir[4096];
    if (kw_input_dir_of(dir, sizeof dir, path) != 0)
        return kw_error_set(KW_EIO, "%s: path too long to sync its folder", path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return kw_error_set(KW_EIO, "%s: cannot open the folder to sync it: %s", dir,
                            strerror(errno));
    int rc = 0;
    if (fsync(fd) != 0 && errno != EINVAL)
        rc = kw_error_set(KW_EIO, "%s: cannot sync the folder: %s", dir, strerror(errno));
    close(fd);
    return rc;
}
