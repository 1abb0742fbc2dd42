/* kw_fuzz.h - what every knobwise libFuzzer harness shares: the fuzzer's bytes
 * are written to a file in a private folder (the loaders take paths, and the
 * file-level checks - size limit, regular file, UTF-8 - are part of what is
 * fuzzed), with the shipped accelerators and workloads next to it so a space
 * that names "accel/h100.xml" reaches the semantic checks.
 *
 * Design choice: a real file in a tmpfs (/dev/shm when present) rather than an
 * in-memory entry point: the loaders' public API is path-based, and fuzzing
 * exactly what `knobwise` runs beats fuzzing a test-only door. */
#ifndef KW_FUZZ_H
#define KW_FUZZ_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kw_embed.h"
#include "kw_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char kw_fuzz_dir[256];

static void kw_fuzz_put(const char *rel, const void *data, size_t len)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", kw_fuzz_dir, rel);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror(p);
        abort();
    }
    const char *b = data;
    while (len > 0) {
        ssize_t w = write(fd, b, len);
        if (w <= 0) {
            perror(p);
            abort();
        }
        b += w;
        len -= (size_t)w;
    }
    close(fd);
}

/* Copy a shipped file: from KW_SRCDIR when set, else the embedded copy. */
static void kw_fuzz_ship(const char *rel)
{
    const char *src = getenv("KW_SRCDIR");
    char p[512];
    if (src) {
        snprintf(p, sizeof p, "%s/spaces/%s", src, rel);
        FILE *f = fopen(p, "rb");
        if (f) {
            static char buf[1 << 20];
            size_t n = fread(buf, 1, sizeof buf, f);
            fclose(f);
            kw_fuzz_put(rel, buf, n);
            return;
        }
    }
    snprintf(p, sizeof p, "spaces/%s", rel);
    const kw_embedded_file *e = kw_embedded_find(p);
    if (e)
        kw_fuzz_put(rel, e->data, e->len);
}

static void kw_fuzz_setup(void)
{
    if (kw_fuzz_dir[0])
        return;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(kw_fuzz_dir, sizeof kw_fuzz_dir, "%s/kwfuzz.%ld", base, (long)getpid());
    char p[512];
    mkdir(kw_fuzz_dir, 0700);
    snprintf(p, sizeof p, "%s/accel", kw_fuzz_dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/workloads", kw_fuzz_dir);
    mkdir(p, 0700);
    static const char *ship[] = {"accel/h100.xml", "accel/tpu_v5e.xml", "accel/edge_npu.xml",
                                 "workloads/llama7b.xml", "workloads/bert_base.xml",
                                 "workloads/resnet50.xml"};
    for (size_t i = 0; i < sizeof ship / sizeof ship[0]; i++)
        kw_fuzz_ship(ship[i]);
}

/* Write the input as DIR/name and return the path (static buffer). */
static const char *kw_fuzz_input(const char *name, const uint8_t *data, size_t size)
{
    static char p[512];
    kw_fuzz_setup();
    kw_fuzz_put(name, data, size);
    snprintf(p, sizeof p, "%s/%s", kw_fuzz_dir, name);
    return p;
}

/* libFuzzer calls this once before the first input: every harness sets up
 * its folder the same way. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    kw_fuzz_setup();
    return 0;
}

/* A failing loader must leave a message: an error without one is a bug. */
static void kw_fuzz_check_error(int rc)
{
    if (rc != 0 && kw_error_last()[0] == '\0') {
        fprintf(stderr, "loader returned %d without a message\n", rc);
        abort();
    }
}

#endif
