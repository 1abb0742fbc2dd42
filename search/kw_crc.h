/* kw_crc.h - the CRC-32 of the journal's and RUN/evidence's chained checksums.
 * A module of its own (search/kw_crc.c) so that libknobwise can check
 * RUN/evidence's chain (src/run/kw_evend.c) without the journal.
 */
#ifndef KW_CRC_H
#define KW_CRC_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32 (IEEE 802.3, reflected 0xEDB88320), zlib-compatible: kw_crc_32(0, ...) starts;
 * kw_crc_32(kw_crc_32(0, a), b) == CRC of a followed by b. Thread-safe. */
uint32_t kw_crc_32(uint32_t crc, const void *buf, size_t len);

#endif
