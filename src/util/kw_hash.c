/* kw_hash.c - FNV-1a 64 of inputs (see kw_hash.h for why one helper). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kw_error.h"
#include "kw_hash.h"
#include "kw_input.h"
#include "kw_mix.h"

#define KW_HASH_CHUNK 65536 /* bytes read per call by kw_hash_file */

static void kw_hash_init(kw_hash *h) { h->h = KW_FNV64_OFFSET; }

static void kw_hash_add(kw_hash *h, const void *buf, size_t len)
{
    h->h = kw_mix_fnv1a(h->h, buf, len);
}

static void kw_hash_hex(char out[KW_HASH_HEX_LEN], const kw_hash *h)
{
    snprintf(out, KW_HASH_HEX_LEN, "%016llx", (unsigned long long)h->h);
}

void kw_hash_hex_of(char out[KW_HASH_HEX_LEN], const void *buf, size_t len)
{
    kw_hash h;
    kw_hash_init(&h);
    kw_hash_add(&h, buf, len);
    kw_hash_hex(out, &h);
}

int kw_hash_file(char out[KW_HASH_HEX_LEN], const char *path)
{
    /* kw_input_open: a FIFO, a device or a folder is refused with its kind
     * named, before anything blocks or reads forever; the size limit is the
     * loaders' own (a hashed file is read by one of them too). */
    char why[KW_INPUT_WHY_MAX];
    int fd;
    uint64_t size;
    if (kw_input_open(&fd, &size, path, 0, why, sizeof why) != 0)
        return kw_error_set(KW_EINPUT, "%s: %s", path, why);
    int rc = 0;
    kw_hash h;
    kw_hash_init(&h);
    unsigned char buf[KW_HASH_CHUNK];
    long n;
    while ((n = kw_input_read(fd, buf, sizeof buf)) > 0)
        kw_hash_add(&h, buf, (size_t)n);
    if (n < 0)
        rc = kw_error_set(KW_EIO, "%s: read error: %s", path, strerror(errno));
    else
        kw_hash_hex(out, &h);
    close(fd);
    return rc;
}
