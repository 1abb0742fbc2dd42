/* test_metric.c - the one metric table (src/util/kw_metric.h) and the one mixer
 * and FNV-1a (search/kw_mix.h).
 *
 * The table is checked against what it must agree with outside itself: the
 * output contract's ranked.csv header (KW_RANKED_HEADER, documented in
 * README), the unit suffixes its names carry, and the fallback rule for
 * metrics it does not know. The mixer and the hash are checked against
 * published test vectors, not against their own output. */
#include <criterion/criterion.h>
#include <string.h>

#include "kw_metric.h"
#include "kw_mix.h"
#include "kw_results.h"

TestSuite(metric);

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

Test(metric, contract_columns_are_the_rows_marked_contract_in_table_order)
{
    /* KW_RANKED_HEADER is "shape,rank,config_id,<metrics>,knobs_changed,rollback_to" */
    char want[1024] = "shape,rank,config_id";
    for (int i = 0; i < KW_M_COUNT; i++)
        if (kw_metric_table[i].csv == KW_METRIC_CSV_CONTRACT) {
            strcat(want, ",");
            strcat(want, kw_metric_table[i].name);
        }
    strcat(want, ",knobs_changed,rollback_to");
    cr_assert_str_eq(want, KW_RANKED_HEADER);
}

Test(metric, model_names_index_the_table_and_every_name_is_unique)
{
    cr_assert_geq(kw_metric_count, KW_M_COUNT);
    for (int i = 0; i < KW_M_COUNT; i++)
        cr_assert_str_eq(kw_model_metric_names[i], kw_metric_table[i].name);
    for (int i = 0; i < kw_metric_count; i++) {
        cr_assert_eq(kw_metric_find(kw_metric_table[i].name), &kw_metric_table[i],
                     "%s is found as its own row", kw_metric_table[i].name);
        for (int j = i + 1; j < kw_metric_count; j++)
            cr_assert_str_neq(kw_metric_table[i].name, kw_metric_table[j].name);
    }
    cr_assert_str_eq(KW_METRIC_NAME(KW_M_P95_US), "p95_us");
    cr_assert_null(kw_metric_find("p95"));
}

Test(metric, units_agree_with_the_name_suffix)
{
    for (int i = 0; i < kw_metric_count; i++) {
        const kw_metric_info *m = &kw_metric_table[i];
        cr_assert_eq(ends_with(m->name, "_us"), strcmp(m->unit, "us") == 0, "%s in %s", m->name, m->unit);
        cr_assert_eq(ends_with(m->name, "_pct"), strcmp(m->unit, "%") == 0, "%s in %s", m->name, m->unit);
        cr_assert_eq(ends_with(m->name, "_mb"), strcmp(m->unit, "MB") == 0, "%s in %s", m->name, m->unit);
        cr_assert(m->decimals >= 0 && m->decimals <= 9, "%s: %d decimals", m->name, m->decimals);
        cr_assert(m->meaning && m->meaning[0], "%s has a meaning", m->name);
    }
}

Test(metric, decimals_come_from_the_table_then_from_the_unit_suffix)
{
    cr_assert_eq(kw_metric_decimals("launches"), 0);
    cr_assert_eq(kw_metric_decimals("quality_cos"), 6);
    cr_assert_eq(kw_metric_decimals("quality_rel_rms"), 9);
    cr_assert_eq(kw_metric_decimals("p95_us"), 3);
    /* unknown names: a time, a percent, a temperature read to 3; the rest 4 */
    cr_assert_eq(kw_metric_decimals("ttft_us"), 3);
    cr_assert_eq(kw_metric_decimals("hit_pct"), 3);
    cr_assert_eq(kw_metric_decimals("die_c"), 3);
    cr_assert_eq(kw_metric_decimals("tokens_per_joule"), 4);
}

Test(metric, better_directions_of_the_figures_a_reader_ranks_by)
{
    cr_assert_eq(kw_metric_table[KW_M_P95_US].better, KW_BETTER_LOWER);
    cr_assert_eq(kw_metric_table[KW_M_QUALITY_COS].better, KW_BETTER_HIGHER);
    cr_assert_eq(kw_metric_table[KW_M_THROUGHPUT_RPS].better, KW_BETTER_HIGHER);
    cr_assert_eq(kw_metric_table[KW_M_SAMPLES].better, KW_BETTER_NONE);
}

/* Vigna's reference splitmix64.c from state 0 (prng.di.unimi.it/splitmix64.c;
 * the outputs the xoshiro seeding examples publish). */
Test(metric, splitmix64_matches_the_reference_sequence)
{
    uint64_t state = 0;
    const uint64_t want[] = {0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL, 0x06c45d188009454fULL,
                             0xf88bb8a8724c81ecULL};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(kw_mix_splitmix64(state), want[i], "output %d", i);
        state += KW_MIX_GAMMA;
    }
    /* the finaliser alone is splitmix64 one increment earlier */
    cr_assert_eq(kw_mix_final(KW_MIX_GAMMA), want[0]);
}

/* FNV-1a 64 test vectors (Fowler, Noll, Vo: the FNV test suite; IETF
 * draft-eastlake-fnv). */
Test(metric, fnv1a_matches_the_published_vectors)
{
    cr_assert_eq(kw_mix_fnv1a(KW_FNV64_OFFSET, "", 0), 0xcbf29ce484222325ULL);
    cr_assert_eq(kw_mix_fnv1a(KW_FNV64_OFFSET, "a", 1), 0xaf63dc4c8601ec8cULL);
    cr_assert_eq(kw_mix_fnv1a(KW_FNV64_OFFSET, "foobar", 6), 0x85944171f73967e8ULL);
    cr_assert_eq(kw_mix_fnv1a_str(KW_FNV64_OFFSET, "foobar"), 0x85944171f73967e8ULL);
    /* continuing from a prefix's hash is hashing the whole */
    cr_assert_eq(kw_mix_fnv1a_str(kw_mix_fnv1a_str(KW_FNV64_OFFSET, "foo"), "bar"), 0x85944171f73967e8ULL);
}
