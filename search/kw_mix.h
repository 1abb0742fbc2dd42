/* kw_mix.h - the one integer mixer and the one FNV-1a step of knobwise.
 *
 * Every hash and derived seed in the tree goes through these: the splitmix64
 * finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014, the constants of its mix64 variant 13) for seeds
 * and table slots, and FNV-1a 64 (Fowler, Noll, Vo; IETF draft-eastlake-fnv,
 * section 5: offset basis and prime below) for content hashes and config
 * ids. They live in search/ because it is the lowest layer: src/ may include
 * search/, never the other way (STYLE 2). Static inline so the hot callers
 * (the simulator's per-stream seeds, the memo's keys) pay no call.
 *
 * Rejected: a copy per module, which is what drifted into four mixers, one
 * of them without the golden-ratio increment.
 */
#ifndef KW_MIX_H
#define KW_MIX_H

#include <stddef.h>
#include <stdint.h>

#define KW_MIX_GAMMA 0x9e3779b97f4a7c15ULL  /* splitmix64's increment: 2^64 / golden ratio */
#define KW_MIX_M1 0xbf58476d1ce4e5b9ULL     /* mix64 variant 13 multipliers */
#define KW_MIX_M2 0x94d049bb133111ebULL
#define KW_FNV64_OFFSET 0xcbf29ce484222325ULL /* FNV-1a 64 offset basis */
#define KW_FNV64_PRIME 0x100000001b3ULL       /* FNV 64-bit prime */

/* splitmix64's finaliser alone: a bijection that spreads every input bit
 * over the output (the memo keys use it on already distinct integers). */
static inline uint64_t kw_mix_final(uint64_t x)
{
    x = (x ^ (x >> 30)) * KW_MIX_M1;
    x = (x ^ (x >> 27)) * KW_MIX_M2;
    return x ^ (x >> 31);
}

/* One splitmix64 step from state x: decorrelates seeds built from small
 * integers (stream 1, 2, 3 ... give unrelated outputs). */
static inline uint64_t kw_mix_splitmix64(uint64_t x) { return kw_mix_final(x + KW_MIX_GAMMA); }

/* FNV-1a 64 over len bytes, continuing from h (KW_FNV64_OFFSET to start). */
static inline uint64_t kw_mix_fnv1a(uint64_t h, const void *buf, size_t len)
{
    const unsigned char *b = buf;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * KW_FNV64_PRIME;
    return h;
}

/* FNV-1a 64 over a NUL-terminated string, continuing from h. */
static inline uint64_t kw_mix_fnv1a_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * KW_FNV64_PRIME;
    return h;
}

/* A configuration's id: FNV-1a 64 over "name=value;" of its n knobs in the
 * space's order. The one home of the rule: kw_knobs_id_text (the search)
 * and libknobwise (which checks every file's config_id against its values,
 * without linking the search) both call it. */
static inline uint64_t kw_mix_config_id(int n, const char *const *names, const char *const *values)
{
    uint64_t h = KW_FNV64_OFFSET;
    for (int i = 0; i < n; i++) {
        h = kw_mix_fnv1a_str(h, names[i]);
        h = kw_mix_fnv1a_str(h, "=");
        h = kw_mix_fnv1a_str(h, values[i]);
        h = kw_mix_fnv1a_str(h, ";");
    }
    return h;
}

#endif
