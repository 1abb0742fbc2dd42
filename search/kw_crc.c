/* kw_crc.c - the CRC-32 of the journal's and RUN/evidence's chained checksums
 * (kw_crc.h).
 *
 * A file of its own, apart from kw_journal.c, so that libknobwise can read
 * RUN/evidence's end record (src/run/kw_evend.c) without linking the
 * journal's reader and writer (the knobs, the reducer) into the shared
 * library.
 */
#include <stddef.h>
#include <stdint.h>

#include "kw_crc.h"

/* Reflected CRC-32 of IEEE 802.3 / zlib (polynomial 0x04C11DB7 reversed). */
static uint32_t kw_crc_table[256];
static int kw_crc_ready;

static void kw_crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        kw_crc_table[i] = c;
    }
    __atomic_store_n(&kw_crc_ready, 1, __ATOMIC_RELEASE);
}

uint32_t kw_crc_32(uint32_t crc, const void *buf, size_t len)
{
    if (!__atomic_load_n(&kw_crc_ready, __ATOMIC_ACQUIRE))
        kw_crc_init(); /* idempotent: racing threads compute the same table */
    const unsigned char *p = buf;
    crc = ~crc;
    while (len--)
        crc = kw_crc_table[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

