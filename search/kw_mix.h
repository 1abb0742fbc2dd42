/* kw_mix.h - the engine's 64-bit mixer, one home for search/.
 *
 * The memo, the probe list's id set, settle's index map and the random
 * strategy's per-shape seed all need a well-spread hash of a 64-bit key. A
 * static inline function rather than a module: it is three shifts and two
 * multiplies, called on every memo probe, and must be the same everywhere a
 * journal's byte-identity depends on it.
 */
#ifndef KW_MIX_H
#define KW_MIX_H

#include <stdint.h>

/* splitmix64 finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom
 * number generators", OOPSLA 2014): a well-spread hash of k. */
static inline uint64_t kw_mix64(uint64_t k)
{
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ULL;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebULL;
    k ^= k >> 31;
    return k;
}

#endif
