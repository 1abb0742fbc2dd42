/* kw_hash.h - the one content hash of knobwise inputs: FNV-1a 64 as 16 hex
 * digits, recorded in the journal header (I records) and results.xml so a
 * resume, verify or report can tell that an input changed.
 *
 * One home (STYLE: "when two places must agree bit for bit, call the one"):
 * the loaders hash the bytes they parsed (kw_hash_hex_of), tune and the run
 * folder reader hash files they do not parse themselves, such as arrival
 * traces (kw_hash_file). FNV-1a is not a cryptographic hash: it catches
 * edits and mix-ups, not an adversary (Fowler, Noll, Vo; IETF
 * draft-eastlake-fnv, 64-bit offset basis and prime below).
 */
#ifndef KW_HASH_H
#define KW_HASH_H

#include <stddef.h>
#include <stdint.h>

#define KW_HASH_HEX_LEN 17 /* 16 hex digits and a NUL */

typedef struct kw_hash {
    uint64_t h;
} kw_hash;

/* The hash of one buffer. */
void kw_hash_hex_of(char out[KW_HASH_HEX_LEN], const void *buf, size_t len);

/* The hash of a file's bytes, read in chunks (memory flat). Regular files
 * only, opened without blocking and without following a FIFO: KW_EINPUT
 * "PATH: ..." when it cannot be opened or is not a regular file, KW_EIO on a
 * read error. */
int kw_hash_file(char out[KW_HASH_HEX_LEN], const char *path);

#endif
