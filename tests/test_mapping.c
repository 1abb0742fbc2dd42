/* test_mapping.c - decoding candidates into mappings: every catalogue knob,
 * defaults for knobs a space does not list, bad values refused by name. */
#include <criterion/criterion.h>
#include <string.h>

#include "kw_mapping.h"

static kw_block blk;
static kw_space sp;

static void add_knob(const char *name, const char *values, int baseline)
{
    kw_knob *k = &sp.knobs.knobs[sp.knobs.n_knobs++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", values);
    for (char *t = strtok(buf, " "); t; t = strtok(NULL, " "))
        snprintf(k->values[k->n_values++], KW_VALUE_LEN, "%s", t);
    k->baseline = baseline;
}

static void setup(void)
{
    memset(&blk, 0, sizeof blk);
    memset(&sp, 0, sizeof sp);
    snprintf(blk.name, sizeof blk.name, "attn");
    blk.n_groups = 2;
    snprintf(blk.groups[0], KW_NAME_MAX, "qkv");
    snprintf(blk.groups[1], KW_NAME_MAX, "attn");
}

TestSuite(mapping, .init = setup);

static kw_cand cand_of(const int *idx)
{
    kw_cand c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < sp.knobs.n_knobs; i++)
        c.v[i] = (uint8_t)idx[i];
    return c;
}

Test(mapping, defaults_when_space_lists_nothing)
{
    kw_mapping m;
    kw_cand c;
    memset(&c, 0, sizeof c);
    cr_assert_eq(kw_mapping_decode(&m, &sp, &blk, &c), 0);
    cr_assert_eq(m.n_groups, 2);
    cr_assert_eq(m.tiling[1].tile_m, KW_DEFAULT_TILE_M);
    cr_assert_eq(m.tiling[0].split_k, 1);
    cr_assert_eq(m.precision, KW_PREC_BF16);
    cr_assert_eq(m.accum_precision, KW_PREC_FP32);
    cr_assert_eq(m.max_batch, 1);
    cr_assert_eq(m.cores_per_request, 1);
    cr_assert_eq(m.fuse_attention, KW_ATTN_NONE);
}

Test(mapping, every_catalogue_knob_decodes)
{
    add_knob("qkv.tile_m", "64 256", 0);
    add_knob("attn.tile_n", "32 128", 0);
    add_knob("qkv.tile_k", "16 64", 0);
    add_knob("qkv.split_k", "1 4", 0);
    add_knob("attn.loop_order", "mnk nmk kmn", 0);
    add_knob("qkv.double_buffer", "on off", 0);
    add_knob("fuse_qkv", "off on", 0);
    add_knob("fuse_attention", "none qk_softmax flash", 0);
    add_knob("fuse_epilogue", "off on", 0);
    add_knob("fuse_gate_up", "off on", 0);
    add_knob("fuse_residual_norm", "off on", 0);
    add_knob("precision", "bf16 fp8_e4m3", 0);
    add_knob("accum_precision", "fp32 fp16", 0);
    add_knob("softmax_precision", "fp32 bf16", 0);
    add_knob("sparsity", "dense 2_4", 0);
    add_knob("launch_mode", "eager graph", 0);
    add_knob("max_batch", "1 8", 0);
    add_knob("batch_timeout_us", "0 250.5", 0);
    add_knob("placement", "round_robin stream_affinity", 0);
    add_knob("cores_per_request", "1 2", 0);
    int idx[] = {1, 1, 1, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    kw_cand c = cand_of(idx);
    kw_mapping m;
    cr_assert_eq(kw_mapping_decode(&m, &sp, &blk, &c), 0, "%s", kw_error_last());
    cr_assert_eq(m.tiling[0].tile_m, 256);
    cr_assert_eq(m.tiling[1].tile_n, 128);
    cr_assert_eq(m.tiling[0].tile_k, 64);
    cr_assert_eq(m.tiling[0].split_k, 4);
    cr_assert_eq(m.tiling[1].loop, KW_LOOP_KMN);
    cr_assert_eq(m.tiling[0].double_buffer, 0);
    cr_assert_eq(m.fuse_qkv, 1);
    cr_assert_eq(m.fuse_attention, KW_ATTN_FLASH);
    cr_assert(m.fuse_epilogue && m.fuse_gate_up && m.fuse_residual_norm);
    cr_assert_eq(m.precision, KW_PREC_FP8_E4M3);
    cr_assert_eq(m.accum_precision, KW_PREC_FP16);
    cr_assert_eq(m.softmax_precision, KW_PREC_BF16);
    cr_assert_eq(m.sparsity_2_4, 1);
    cr_assert_eq(m.graph_mode, 1);
    cr_assert_eq(m.max_batch, 8);
    cr_assert_float_eq(m.batch_timeout_us, 250.5, 1e-12);
    cr_assert_eq(m.placement, KW_PLACE_STREAM_AFFINITY);
    cr_assert_eq(m.cores_per_request, 2);
    /* untouched group keeps its default */
    cr_assert_eq(m.tiling[1].tile_m, KW_DEFAULT_TILE_M);
}

Test(mapping, unknown_group_and_bad_values_are_refused)
{
    kw_knob k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "mlp.tile_m");
    k.n_values = 1;
    snprintf(k.values[0], KW_VALUE_LEN, "64");
    cr_assert_eq(kw_mapping_knob_check(&blk, &k, NULL), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "mlp.tile_m") != NULL);

    snprintf(k.name, sizeof k.name, "qkv.tile_m");
    snprintf(k.values[0], KW_VALUE_LEN, "-8");
    cr_assert_eq(kw_mapping_knob_check(&blk, &k, NULL), KW_EINPUT);
    snprintf(k.values[0], KW_VALUE_LEN, "12x");
    cr_assert_eq(kw_mapping_knob_check(&blk, &k, NULL), KW_EINPUT);

    snprintf(k.name, sizeof k.name, "fuse_attention");
    snprintf(k.values[0], KW_VALUE_LEN, "maybe");
    cr_assert_eq(kw_mapping_knob_check(&blk, &k, NULL), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "maybe") != NULL);

    snprintf(k.name, sizeof k.name, "fuse_attention");
    snprintf(k.values[0], KW_VALUE_LEN, "flash");
    cr_assert_eq(kw_mapping_knob_check(&blk, &k, NULL), 0);
}

Test(mapping, unsupported_precision_names_the_accelerator)
{
    kw_accel a;
    memset(&a, 0, sizeof a);
    snprintf(a.name, sizeof a.name, "npu");
    a.peak_flops[KW_PREC_INT8] = 4e12;
    a.peak_flops[KW_PREC_BF16] = 1e12;
    a.cores = 2;
    kw_knob k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "precision");
    k.n_values = 2;
    snprintf(k.values[0], KW_VALUE_LEN, "bf16");
    snprintf(k.values[1], KW_VALUE_LEN, "fp8_e4m3");
    cr_assert_eq(kw_mapping_knob_check(&blk, &k, &a), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "npu") && strstr(kw_error_last(), "fp8_e4m3"));
    snprintf(k.name, sizeof k.name, "cores_per_request");
    snprintf(k.values[0], KW_VALUE_LEN, "1");
    snprintf(k.values[1], KW_VALUE_LEN, "4");
    cr_assert_eq(kw_mapping_knob_check(&blk, &k, &a), KW_EINPUT);
}

Test(mapping, precision_names_round_trip)
{
    for (int p = 0; p < KW_PREC_COUNT; p++)
        cr_assert_eq(kw_prec_parse(kw_prec_name((kw_prec)p)), p);
    cr_assert_eq(kw_prec_parse("fp4"), -1);
    cr_assert_eq(kw_prec_bytes(KW_PREC_FP32), 4);
    cr_assert_eq(kw_prec_bytes(KW_PREC_BF16), 2);
    cr_assert_eq(kw_prec_bytes(KW_PREC_FP8_E5M2), 1);
}
