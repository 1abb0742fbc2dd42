/* test_catalogue.c - the knob catalogue (src/model/kw_catalogue.c) and the "did you
 * mean" matcher (search/kw_suggest.c).
 *
 * The edit distance is checked against the textbook values: Levenshtein's
 * kitten -> sitting = 3 and flaw -> lawn = 2, and the optimal-string-
 * alignment distance of CA -> ABC = 3 (2 under unrestricted Damerau-
 * Levenshtein), the example that tells the two apart (Wikipedia,
 * "Damerau-Levenshtein distance", section "Optimal string alignment
 * distance"). The catalogue is checked against the model's own names
 * (kw_prec.c's precision names, the loop/attention/placement enums) and each
 * "used by" predicate against hand-built blocks.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "kw_catalogue.h"
#include "kw_mapping.h"
#include "kw_suggest.h"

TestSuite(catalogue);

Test(catalogue, edit_distance_textbook_values)
{
    cr_assert_eq(kw_suggest_distance("kitten", "sitting"), 3);
    cr_assert_eq(kw_suggest_distance("flaw", "lawn"), 2);
    cr_assert_eq(kw_suggest_distance("CA", "ABC"), 3);
    cr_assert_eq(kw_suggest_distance("", "abc"), 3);
    cr_assert_eq(kw_suggest_distance("abc", "abc"), 0);
    cr_assert_eq(kw_suggest_distance("tiel_m", "tile_m"), 1, "a swap is one edit");
    cr_assert_eq(kw_suggest_distance("Tile_M", "tile_m"), 0, "case does not count");
}

Test(catalogue, suggestions_nearest_first_and_none_when_far)
{
    kw_suggest s;
    char buf[256];
    kw_suggest_init(&s, "fuse_atention");
    kw_suggest_add(&s, "fuse_qkv");
    kw_suggest_add(&s, "fuse_attention");
    kw_suggest_add(&s, "fuse_epilogue");
    kw_suggest_format(&s, buf, sizeof buf);
    cr_assert_str_eq(buf, " (did you mean 'fuse_attention'?)");
    /* a bare field finds its per-group knobs; at most three, nearest first */
    kw_suggest_init(&s, "tile_m");
    kw_suggest_add(&s, "qkv.tile_n");
    kw_suggest_add(&s, "qkv.tile_m");
    kw_suggest_add(&s, "attn.tile_m");
    kw_suggest_add(&s, "o.tile_m");
    kw_suggest_add(&s, "tile_n");
    kw_suggest_format(&s, buf, sizeof buf);
    cr_assert_str_eq(buf, " (did you mean 'qkv.tile_m', 'attn.tile_m' or 'o.tile_m'?)");
    kw_suggest_init(&s, "zzz");
    kw_suggest_add(&s, "precision");
    kw_suggest_add(&s, "placement");
    kw_suggest_format(&s, buf, sizeof buf);
    cr_assert_str_eq(buf, "");
}

static kw_block block_of(const kw_op_kind *kinds, int n)
{
    kw_block b;
    memset(&b, 0, sizeof b);
    snprintf(b.name, sizeof b.name, "b");
    for (int i = 0; i < n; i++) {
        b.ops[i].kind = kinds[i];
        snprintf(b.ops[i].name, KW_NAME_MAX, "op%d", i);
    }
    b.n_ops = n;
    return b;
}

Test(catalogue, names_and_values_are_the_models)
{
    const kw_cat_knob *t = kw_catalogue();
    for (int i = 0; i < KW_CAT_COUNT; i++) {
        cr_assert_eq((int)t[i].id, i, "table order is kw_cat_id order");
        cr_assert(t[i].meaning && t[i].meaning[0] && t[i].used_by && t[i].used_by[0]);
        for (int v = 0; v < t[i].n_values; v++) {
            double got = -1;
            cr_assert_eq(kw_catalogue_value(&t[i], t[i].values[v].name, &got), 0);
            cr_assert_eq((int)got, v);
            cr_assert(t[i].values[v].meaning && t[i].values[v].meaning[0]);
        }
    }
    const kw_cat_knob *p = &t[KW_CAT_PRECISION];
    cr_assert_eq(p->n_values, KW_PREC_COUNT);
    for (int i = 0; i < KW_PREC_COUNT; i++)
        cr_assert_str_eq(p->values[i].name, kw_prec_name((kw_prec)i));
    cr_assert_str_eq(kw_mapping_loop_name(KW_LOOP_KMN), "kmn");
    cr_assert_str_eq(kw_mapping_attn_fusion_name(KW_ATTN_FLASH), "flash");
    cr_assert_str_eq(kw_mapping_placement_name(KW_PLACE_STREAM_AFFINITY), "stream_affinity");
    double v;
    cr_assert_eq(kw_catalogue_value(&t[KW_CAT_TILE_M], "65537", &v), -1);
    cr_assert_eq(kw_catalogue_value(&t[KW_CAT_TILE_M], "64x", &v), -1);
    cr_assert_eq(kw_catalogue_value(&t[KW_CAT_BATCH_TIMEOUT_US], "12.5", &v), 0);
    cr_assert_float_eq(v, 12.5, 1e-12);
    cr_assert_eq(kw_catalogue_value(&t[KW_CAT_ACCUM_PRECISION], "int8", &v), -1,
                 "int8 is not an accumulator format");
    cr_assert_eq(kw_catalogue_value(&t[KW_CAT_STAGES], "65", &v), -1, "stages go to 64");
    cr_assert_eq(kw_catalogue_value(&t[KW_CAT_ATTENTION_SCHEDULE], "overlap", &v), 0);
    cr_assert_eq((int)v, 1);
}

Test(catalogue, find_resolves_groups)
{
    kw_op_kind k[] = {KW_OP_GEMM};
    kw_block b = block_of(k, 1);
    b.n_groups = 1;
    snprintf(b.groups[0], KW_NAME_MAX, "qkv");
    int g = 7;
    const kw_cat_knob *e = kw_catalogue_find("qkv.tile_k", &b, &g);
    cr_assert(e && e->id == KW_CAT_TILE_K && g == 0);
    cr_assert_null(kw_catalogue_find("up.tile_k", &b, &g), "no such group in the block");
    cr_assert_null(kw_catalogue_find("tile_k", &b, &g), "a tiling knob needs its group");
    cr_assert_null(kw_catalogue_find("qkv.placement", &b, &g));
    e = kw_catalogue_find("placement", NULL, &g);
    cr_assert(e && e->id == KW_CAT_PLACEMENT && g == -1);
    char hint[256];
    kw_catalogue_hint(hint, sizeof hint, &b, "qkv.tile_kk");
    cr_assert_str_eq(hint, " (did you mean 'qkv.tile_k', 'qkv.tile_m' or 'qkv.tile_n'?)");
}

Test(catalogue, used_by_follows_the_operators)
{
    const kw_cat_knob *t = kw_catalogue();
    kw_op_kind attn_only[] = {KW_OP_ATTENTION};
    kw_block a = block_of(attn_only, 1);
    cr_assert(kw_catalogue_uses(&t[KW_CAT_FUSE_ATTENTION], &a, NULL));
    cr_assert(kw_catalogue_uses(&t[KW_CAT_SOFTMAX_PRECISION], &a, NULL));
    cr_assert(kw_catalogue_uses(&t[KW_CAT_ATTENTION_SCHEDULE], &a, NULL));
    cr_assert_not(kw_catalogue_uses(&t[KW_CAT_FUSE_GATE_UP], &a, NULL));
    cr_assert_not(kw_catalogue_uses(&t[KW_CAT_FUSE_RESIDUAL_NORM], &a, NULL));
    cr_assert(kw_catalogue_uses(&t[KW_CAT_PLACEMENT], &a, NULL));
    kw_op_kind rn[] = {KW_OP_RESIDUAL, KW_OP_NORM};
    kw_block r = block_of(rn, 2);
    cr_assert(kw_catalogue_uses(&t[KW_CAT_FUSE_RESIDUAL_NORM], &r, NULL));
    kw_op_kind nr[] = {KW_OP_NORM, KW_OP_RESIDUAL};
    kw_block r2 = block_of(nr, 2);
    cr_assert_not(kw_catalogue_uses(&t[KW_CAT_FUSE_RESIDUAL_NORM], &r2, NULL),
                  "the norm must follow the residual");
    kw_op_kind gg[] = {KW_OP_GEMM, KW_OP_GEMM, KW_OP_ACT};
    kw_block m = block_of(gg, 3);
    snprintf(m.ops[0].merge, KW_NAME_MAX, "gate_up");
    cr_assert_not(kw_catalogue_uses(&t[KW_CAT_FUSE_GATE_UP], &m, NULL), "one gemm: nothing to merge");
    snprintf(m.ops[1].merge, KW_NAME_MAX, "gate_up");
    cr_assert(kw_catalogue_uses(&t[KW_CAT_FUSE_GATE_UP], &m, NULL));
    cr_assert(kw_catalogue_uses(&t[KW_CAT_FUSE_EPILOGUE], &m, NULL), "gemm then act");
    cr_assert_not(kw_catalogue_uses(&t[KW_CAT_SPARSITY], &m, NULL), "no weight operand");
    cr_assert_not(kw_catalogue_uses(&t[KW_CAT_ATTENTION_SCHEDULE], &m, NULL), "no attention");
    m.ops[0].weights = 1;
    cr_assert(kw_catalogue_uses(&t[KW_CAT_SPARSITY], &m, NULL));
}

Test(catalogue, decoder_sets_each_new_knob_field)
{
    kw_op_kind k[] = {KW_OP_GEMM, KW_OP_ATTENTION};
    kw_block b = block_of(k, 2);
    b.n_groups = 1;
    snprintf(b.groups[0], KW_NAME_MAX, "g");
    static kw_space sp;
    memset(&sp, 0, sizeof sp);
    static const char *const names[] = {"g.stages", "g.swizzle", "g.cluster", "attention_schedule"};
    static const char *const vals[] = {"3", "8", "2", "overlap"};
    for (int i = 0; i < 4; i++) {
        kw_knob *kn = &sp.knobs.knobs[sp.knobs.n_knobs++];
        snprintf(kn->name, sizeof kn->name, "%s", names[i]);
        kn->n_values = 1;
        snprintf(kn->values[0], KW_VALUE_LEN, "%s", vals[i]);
    }
    kw_cand c;
    memset(&c, 0, sizeof c);
    kw_mapping m;
    cr_assert_eq(kw_mapping_decode(&m, &sp, &b, &c), 0, "%s", kw_error_last());
    cr_assert_eq(m.tiling[0].stages, 3);
    cr_assert_eq(m.tiling[0].swizzle, 8);
    cr_assert_eq(m.tiling[0].cluster, 2);
    cr_assert_eq(m.attn_overlap, 1);
}
