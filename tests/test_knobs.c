/* test_knobs.c - knob spaces and candidates: the id is FNV-1a 64 (checked
 * against the published test vectors through an independent implementation),
 * constraints as forbid masks, formatting and parsing. */
#include <criterion/criterion.h>
#include <string.h>

#include "kw_search.h"

TestSuite(knobs);

/* Independent FNV-1a 64 (Fowler/Noll/Vo reference: offset basis
 * 14695981039346656037, prime 1099511628211). */
static uint64_t fnv1a(const char *s)
{
    uint64_t h = 14695981039346656037ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static void space(kw_knobspace *ks)
{
    memset(ks, 0, sizeof *ks);
    const char *names[] = {"gemm.tile_m", "fuse_qkv", "precision"};
    const char *vals[3][4] = {{"64", "128", "256"}, {"off", "on"}, {"fp32", "bf16", "fp8_e4m3", "int8"}};
    int nv[] = {3, 2, 4}, base[] = {1, 0, 1};
    ks->n_knobs = 3;
    for (int k = 0; k < 3; k++) {
        snprintf(ks->knobs[k].name, KW_NAME_MAX, "%s", names[k]);
        ks->knobs[k].n_values = nv[k];
        ks->knobs[k].baseline = base[k];
        for (int v = 0; v < nv[k]; v++)
            snprintf(ks->knobs[k].values[v], KW_VALUE_LEN, "%s", vals[k][v]);
    }
    /* forbid fuse_qkv=on with precision in {fp8_e4m3, int8} */
    kw_constraint *c = &ks->constraints[ks->n_constraints++];
    snprintf(c->name, KW_NAME_MAX, "qkv_low_precision");
    c->n_terms = 2;
    c->terms[0].knob = 1;
    c->terms[0].mask = 1u << 1;
    c->terms[1].knob = 2;
    c->terms[1].mask = (1u << 2) | (1u << 3);
}

Test(knobs, fnv_reference_vectors)
{
    /* published FNV-1a 64 test vectors */
    cr_assert_eq(fnv1a(""), 0xcbf29ce484222325ULL);
    cr_assert_eq(fnv1a("a"), 0xaf63dc4c8601ec8cULL);
    cr_assert_eq(fnv1a("foobar"), 0x85944171f73967e8ULL);
}

Test(knobs, id_is_fnv1a_of_name_value_pairs)
{
    kw_knobspace ks;
    space(&ks);
    kw_cand c;
    kw_knobs_cand_baseline(&c, &ks);
    cr_assert_eq(c.v[0], 1);
    cr_assert_eq(c.v[2], 1);
    cr_assert_eq(kw_knobs_cand_id(&ks, &c), fnv1a("gemm.tile_m=128;fuse_qkv=off;precision=bf16;"));
    /* the id follows value texts, not indices: reordering a domain keeps it */
    kw_knobspace ks2 = ks;
    snprintf(ks2.knobs[0].values[0], KW_VALUE_LEN, "128");
    snprintf(ks2.knobs[0].values[1], KW_VALUE_LEN, "64");
    kw_cand c2 = c;
    c2.v[0] = 0;
    cr_assert_eq(kw_knobs_cand_id(&ks2, &c2), kw_knobs_cand_id(&ks, &c));
    c2.v[0] = 1;
    cr_assert_neq(kw_knobs_cand_id(&ks2, &c2), kw_knobs_cand_id(&ks, &c));
}

Test(knobs, distance_and_constraints)
{
    kw_knobspace ks;
    space(&ks);
    kw_cand a, b;
    kw_knobs_cand_baseline(&a, &ks);
    b = a;
    cr_assert_eq(kw_knobs_cand_distance(&ks, &a, &b), 0);
    b.v[1] = 1;
    cr_assert_eq(kw_knobs_cand_distance(&ks, &a, &b), 1);
    cr_assert_eq(kw_knobs_cand_violates(&ks, &b), -1, "qkv on with bf16 is fine");
    b.v[2] = 3;
    cr_assert_eq(kw_knobs_cand_distance(&ks, &a, &b), 2);
    cr_assert_eq(kw_knobs_cand_violates(&ks, &b), 0);
    b.v[2] = 2;
    cr_assert_eq(kw_knobs_cand_violates(&ks, &b), 0);
    b.v[1] = 0;
    cr_assert_eq(kw_knobs_cand_violates(&ks, &b), -1, "int8 without qkv fusion is fine");
    /* an empty clause forbids nothing */
    ks.constraints[1].n_terms = 0;
    ks.n_constraints = 2;
    cr_assert_eq(kw_knobs_cand_violates(&ks, &a), -1);
}

Test(knobs, find_value_and_size)
{
    kw_knobspace ks;
    space(&ks);
    cr_assert_eq(kw_knobs_find(&ks, "precision"), 2);
    cr_assert_eq(kw_knobs_find(&ks, "nope"), -1);
    cr_assert_eq(kw_knobs_value(&ks.knobs[2], "int8"), 3);
    cr_assert_eq(kw_knobs_value(&ks.knobs[2], "fp4"), -1);
    cr_assert_eq(kw_knobs_size(&ks), 3 * 2 * 4);
    /* 64 knobs of 32 values: 2^320 saturates */
    kw_knobspace big;
    memset(&big, 0, sizeof big);
    big.n_knobs = KW_KNOB_MAX;
    for (int k = 0; k < KW_KNOB_MAX; k++)
        big.knobs[k].n_values = KW_VALUE_MAX;
    cr_assert_eq(kw_knobs_size(&big), UINT64_MAX);
}

Test(knobs, format_and_parse_round_trip)
{
    kw_knobspace ks;
    space(&ks);
    kw_cand c;
    kw_knobs_cand_baseline(&c, &ks);
    c.v[0] = 2;
    c.v[2] = 0;
    char buf[256];
    kw_knobs_cand_format(buf, sizeof buf, &ks, &c);
    cr_assert_str_eq(buf, "gemm.tile_m=256 fuse_qkv=off precision=fp32");
    kw_cand p;
    cr_assert_eq(kw_knobs_cand_parse(&p, &ks, buf), 0);
    cr_assert_eq(memcmp(&p, &c, sizeof c), 0);
    /* unset knobs take the baseline */
    cr_assert_eq(kw_knobs_cand_parse(&p, &ks, "  fuse_qkv=on "), 0);
    cr_assert_eq(p.v[0], 1);
    cr_assert_eq(p.v[1], 1);
    cr_assert_eq(p.v[2], 1);
    /* truncation never overruns */
    char small[12];
    kw_knobs_cand_format(small, sizeof small, &ks, &c);
    cr_assert_lt(strlen(small), sizeof small);
}

Test(knobs, parse_errors_name_the_problem)
{
    kw_knobspace ks;
    space(&ks);
    kw_cand p;
    cr_assert_eq(kw_knobs_cand_parse(&p, &ks, "tile=64"), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "unknown knob 'tile'"));
    cr_assert_eq(kw_knobs_cand_parse(&p, &ks, "precision=fp4"), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "knob 'precision' has no value 'fp4'"));
    cr_assert_eq(kw_knobs_cand_parse(&p, &ks, "precision"), KW_EINPUT);
    cr_assert_eq(kw_knobs_cand_parse(&p, &ks, "=bf16"), KW_EINPUT);
    char longname[200];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    longname[5] = '=';
    cr_assert_eq(kw_knobs_cand_parse(&p, &ks, longname), KW_EINPUT);
}

/* A message that wraps the last one (kw_error_set(rc, "...: %s",
 * kw_error_last())) reads it whole: formatting into the buffer it reads from
 * garbled such messages into repeated prefixes. */
Test(knobs, error_message_wrapping_the_last_one)
{
    kw_error_set(KW_EINPUT, "inner problem %d", 7);
    kw_error_set(KW_EINPUT, "outer: %s", kw_error_last());
    cr_assert_str_eq(kw_error_last(), "outer: inner problem 7");
}
