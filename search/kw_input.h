/* kw_input.h - open an input file the one safe way: a regular file, opened
 * without blocking, with a size limit.
 *
 * Every knobwise input (space, accelerator and workload XML, trace CSV, a file
 * hashed for a run's journal, a journal read back) goes through
 * kw_input_open, so a FIFO nobody writes, /dev/zero, a folder or a file of
 * gigabytes is refused with one clear message instead of blocking, reading
 * forever or filling memory. Lives in search/ (the lowest layer, with the
 * error object) so the journal reader may use it as well as src/.
 */
#ifndef KW_INPUT_H
#define KW_INPUT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define KW_INPUT_WHY_MAX 160 /* longest reason kw_input_open writes */

/* Open path read-only as a regular file of at most max_bytes (0: no limit).
 * The open is non-blocking (a FIFO does not wait for a writer) and O_CLOEXEC;
 * the file is fstat'ed on the open descriptor (no race with a rename), and
 * O_NONBLOCK is cleared again before returning. On success *fd is the open
 * descriptor (the caller closes it) and *bytes its size at open time.
 * Failures: KW_EIO when it cannot be opened or stat'ed (why: strerror),
 * KW_EINPUT when it is not a regular file ("is a FIFO, not a regular file")
 * or over the limit ("is N bytes, over the M-byte limit"; *bytes is then set
 * to the size, so a caller can word its own limit message). `why` (at least
 * KW_INPUT_WHY_MAX bytes) gets the reason without the path, so each caller
 * words its message ("FILE:LINE: ..."); the error object is not touched. */
int kw_input_open(int *fd, uint64_t *bytes, const char *path, uint64_t max_bytes, char *why,
                  size_t why_len);

/* kw_input_open with options, how a mask of: KW_INPUT_NOFOLLOW, the path itself
 * is never read through a symbolic link (a run folder's own files): lstat'ed
 * first, KW_EINPUT "is a symbolic link; a run folder's own files are always
 * files of its own" when it is one or when what was opened is not the file
 * lstat saw (same device and inode: a link or another file swapped in between
 * has another inode, so there is no window), KW_EIO "cannot open: ..." when
 * there is no such file, and anything lstat finds that is not a regular
 * file is refused before it is opened (a FIFO opened for writing would wait
 * for a reader); KW_INPUT_RDWR, opened read-write (a journal resealed
 * in place); KW_INPUT_APPEND, below. The one implementation of both rules: kw_runfile_open and the
 * journal's reader use it. */
#define KW_INPUT_NOFOLLOW 1
#define KW_INPUT_LINK_WHY "is a symbolic link; a run folder's own files are always files of its own"
#define KW_INPUT_RDWR 2
/* opened write-only for appending (the journal writer of a resumed run, and
 * its truncation of a torn record): the same checks, nothing created */
#define KW_INPUT_APPEND 4
int kw_input_open_as(int *fd, uint64_t *bytes, const char *path, uint64_t max_bytes, int how,
                     char *why, size_t why_len);

/* kw_input_open as a stdio stream for a line reader (a measured-times CSV):
 * NULL with the error object set to "PATH: why" (KW_EINPUT for a FIFO, device,
 * folder or a file over max_bytes; KW_EIO when it cannot be opened). */
FILE *kw_input_fopen(const char *path, uint64_t max_bytes);
/* The one rule for an input a person names: "" names no file (opened as one, it
 * said ": cannot open: No such file or directory", the name lost). NULL (not
 * given) and any other name return 0; "" sets KW_EINPUT "OPT '': names no file"
 * ("'': names no file" when opt is NULL: a positional argument) and returns it.
 * Every verb's named inputs pass here: --space/--accel/--workload
 * (kw_load_config), tune's --trace, calibrate's --accel/--measured, validate's
 * files. */
int kw_input_named(const char *opt, const char *path);
/* The length of a UTF-8 byte order mark at the start of s (3), else 0: a CSV
 * saved by a spreadsheet starts with one, invisible to the person who then
 * reads "header must be ..." over the very header they see. Every CSV reader
 * skips it on its first line (trace, routing trace, measured kernels, CPU
 * calibration rows, mappings.csv). */
size_t kw_input_bom(const char *s);
/* One line of a text input read into line[0..cap) for a CSV reader: returns
 * 1 with the line NUL-terminated and its length in *len ('\n' and one '\r'
 * before it removed), 0 at the end of the file (or a read error: ferror).
 * *flags gets KW_INPUT_LINE_LONG when the line had more than cap - 1 bytes
 * (the rest of it is read past, so the next call reads the next line and the
 * caller's line count stays true) and KW_INPUT_LINE_NUL when it held a NUL
 * byte. fgets tells neither apart: a long line came back as two lines (an
 * error named the line after it), and a NUL ended the line there (the rest
 * silently dropped, or "line longer than" said of a short line). The trace
 * reader (kw_trace.c) reads the same way by hand. */
#define KW_INPUT_LINE_LONG 1
#define KW_INPUT_LINE_NUL 2
int kw_input_line(FILE *f, char *line, size_t cap, size_t *len, int *flags);
/* Read at most max_bytes from fd into buf (short only at end of file);
 * retries EINTR. Returns the bytes read, or -1 with errno set. */
long kw_input_read(int fd, void *buf, size_t max_bytes);

/* The folder holding path into dir (n bytes): "." for a bare name, "/" for a
 * name at the root. -1 when it does not fit, else 0. */
int kw_input_dir_of(char *dir, size_t n, const char *path);

/* fsync the folder holding path, so that path's directory entry (a file or
 * folder just created in it) survives a power loss or a kernel crash, not
 * only a kill: fsync of the file itself does not persist its name (Linux
 * fsync(2)). For a new run's folder (its parent), a new journal and a new
 * RUN/evidence. A file system that cannot sync a folder (EINVAL) is let be;
 * any other failure is KW_EIO "FOLDER: cannot sync the folder: ...". */
int kw_input_sync_dir_of(const char *path);

#endif
