/* test_load.c - the loaders: every shipped file loads and validates, the
 * embedded default is the file in spaces/, every field reaches its struct,
 * defaults, path resolution and overrides, input hashes, and every semantic
 * check - including the whole bad-input corpus of tests/data/bad/ refused
 * with its file, line and message. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kw_embed.h"
#include "kw_load.h"
#include "lib/kw_tl.h"

TestSuite(load);

static char *src_path(const char *rel)
{
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/%s", kw_tl_src(), rel);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static void rm_rf(char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

/* FNV-1a 64 reference (checked against the published vector below). */
static uint64_t fnv1a(const char *buf, size_t len)
{
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)buf[i]) * 1099511628211ULL;
    return h;
}

static const char *const shipped[] = {
    "spaces/default.xml",         "spaces/llama7b_mlp.xml",       "spaces/bert_attn_tpu.xml",
    "spaces/resnet_conv_npu.xml", "spaces/validate_small.xml",    "spaces/validate_small_mlp.xml",
    "spaces/accel/h100.xml",      "spaces/accel/tpu_v5e.xml",     "spaces/accel/edge_npu.xml",
    "spaces/workloads/llama7b.xml", "spaces/workloads/bert_base.xml",
    "spaces/workloads/resnet50.xml", "spaces/validate_moe_h100.xml", "spaces/validate_llama3_tpu.xml",
    "spaces/validate_cpu_gemm.xml", "spaces/validate_resnet_npu.xml", "spaces/validate_moe_tpu.xml",
    "spaces/validate_long_h100.xml", "spaces/validate_llama3_npu.xml",
    "spaces/validate_bert_fusion_h100.xml",
};

Test(load, every_shipped_file_validates)
{
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
        char *p = src_path(shipped[i]);
        cr_expect_eq(kw_load_validate_file(p), 0, "%s: %s", shipped[i], kw_error_last());
        free(p);
    }
}

Test(load, every_shipped_space_loads_with_its_shapes)
{
    for (size_t i = 0; i < 6; i++) {
        char *p = src_path(shipped[i]);
        kw_config *c = NULL;
        cr_assert_eq(kw_load_config(&c, p, NULL, NULL), 0, "%s: %s", shipped[i], kw_error_last());
        cr_assert_gt(c->space.n_shapes, 0);
        cr_assert_gt(c->space.knobs.n_knobs, 0);
        for (int s = 0; s < c->space.n_shapes; s++) {
            const kw_shape *sh = &c->workload.shapes[c->space.shapes[s]];
            cr_assert_str_eq(c->workload.blocks[sh->block].name, c->space.block);
        }
        for (int k = 0; k < c->space.knobs.n_knobs; k++) {
            const kw_knob *kn = &c->space.knobs.knobs[k];
            cr_assert(kn->baseline >= 0 && kn->baseline < kn->n_values, "%s", kn->name);
            cr_assert_gt(kn->line, 0);
        }
        for (int h = 0; h < 3; h++)
            cr_assert_eq(strlen(c->input_hash[h]), 16, "%s hash %d", shipped[i], h);
        kw_load_config_free(c);
        free(p);
    }
}

Test(load, validation_spaces_are_small)
{
    /* a validation space holds at most 50,000 configurations, exhaustive in under a minute. */
    static const char *const small[] = {"spaces/validate_small.xml", "spaces/validate_small_mlp.xml"};
    for (size_t i = 0; i < 2; i++) {
        char *p = src_path(small[i]);
        kw_config *c = NULL;
        cr_assert_eq(kw_load_config(&c, p, NULL, NULL), 0, "%s", kw_error_last());
        double n = 1;
        for (int k = 0; k < c->space.knobs.n_knobs; k++)
            n *= c->space.knobs.knobs[k].n_values;
        cr_assert_leq(n, 50000, "%s has %g configurations", small[i], n);
        kw_load_config_free(c);
        free(p);
    }
}

Test(load, embedded_default_is_the_file_in_spaces)
{
    kw_config *e = NULL, *f = NULL;
    cr_assert_eq(kw_load_config_default(&e), 0, "%s", kw_error_last());
    char *p = src_path("spaces/default.xml");
    cr_assert_eq(kw_load_config(&f, p, NULL, NULL), 0, "%s", kw_error_last());
    for (int h = 0; h < 3; h++)
        cr_assert_str_eq(e->input_hash[h], f->input_hash[h], "input %d differs", h);
    cr_assert_eq(memcmp(&e->space.knobs, &f->space.knobs, sizeof e->space.knobs), 0);
    cr_assert_eq(memcmp(&e->accel, &f->accel, sizeof e->accel), 0);
    cr_assert_str_eq(e->space.path, KW_DEFAULT_SPACE);
    cr_assert_str_eq(e->space.accel_path, "spaces/accel/h100.xml");
    cr_assert_str_eq(e->space.workload_path, "spaces/workloads/llama7b.xml");
    /* the embedded bytes are the file's bytes */
    const kw_embedded_file *emb = kw_embedded_find(KW_DEFAULT_SPACE);
    cr_assert_not_null(emb);
    char *disk = kw_tl_slurp(p);
    cr_assert_eq(strlen(disk), emb->len);
    cr_assert_eq(memcmp(disk, emb->data, emb->len), 0);
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)fnv1a(disk, strlen(disk)));
    cr_assert_str_eq(e->input_hash[0], hex);
    free(disk);
    free(p);
    kw_load_config_free(e);
    kw_load_config_free(f);
    kw_load_config_free(NULL);
}

Test(load, fnv1a_reference_vector)
{
    /* Published FNV-1a 64 test vectors (Fowler/Noll/Vo): "" and "a". */
    cr_assert_eq(fnv1a("", 0), 0xcbf29ce484222325ULL);
    cr_assert_eq(fnv1a("a", 1), 0xaf63dc4c8601ec8cULL);
}

Test(load, default_space_content)
{
    kw_config *c = NULL;
    cr_assert_eq(kw_load_config_default(&c), 0, "%s", kw_error_last());
    cr_assert_str_eq(c->space.block, "llama7b_attn");
    cr_assert_geq(c->space.n_shapes, 4);
    int prefill = 0, decode = 0, multi = 0;
    for (int i = 0; i < c->space.n_shapes; i++) {
        const kw_shape *s = &c->workload.shapes[c->space.shapes[i]];
        prefill += s->phase == KW_PHASE_PREFILL;
        decode += s->phase == KW_PHASE_DECODE;
        multi += s->streams > 1;
    }
    cr_assert(prefill > 0 && decode > 0 && multi > 0);
    /* the knob catalogue's names (src/model/kw_catalogue.c) for this block */
    static const char *const names[] = {
        "qkv.tile_m",   "qkv.tile_n",     "qkv.tile_k",        "qkv.split_k",  "qkv.loop_order",
        "qkv.double_buffer", "o.tile_m",  "fuse_qkv",          "fuse_attention",
        "precision", "accum_precision",  "softmax_precision", "sparsity",
        "launch_mode",  "max_batch",      "batch_timeout_us",  "placement",    "cores_per_request"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int found = 0;
        for (int k = 0; k < c->space.knobs.n_knobs; k++)
            found |= strcmp(c->space.knobs.knobs[k].name, names[i]) == 0;
        cr_assert(found, "default space lacks %s", names[i]);
    }
    cr_assert_eq(c->space.sim_requests, 2000);
    /* constraint masks: precision in {fp8_e4m3 fp8_e5m2 int8} = value indices 3,4,5 */
    const kw_knobspace *ks = &c->space.knobs;
    const kw_constraint *k0 = &ks->constraints[0];
    cr_assert_str_eq(k0->name, "low_precision_needs_fp32_accum");
    cr_assert_eq(k0->n_terms, 2);
    cr_assert_str_eq(ks->knobs[k0->terms[0].knob].name, "precision");
    cr_assert_eq(k0->terms[0].mask, 0x38ULL);
    cr_assert_str_eq(ks->knobs[k0->terms[1].knob].name, "accum_precision");
    cr_assert_eq(k0->terms[1].mask, 0x6ULL);
    cr_assert_gt(k0->line, 0);
    kw_load_config_free(c);
}

Test(load, accelerator_fields_and_units)
{
    char *p = src_path("spaces/accel/h100.xml");
    kw_accel a;
    cr_assert_eq(kw_load_accel(&a, p), 0, "%s", kw_error_last());
    cr_assert_str_eq(a.name, "h100");
    cr_assert(strstr(a.source, "datasheet") != NULL);
    /* 132 SMs [S datasheet] */
    cr_assert_eq(a.cores * a.units_per_core, 132);
    cr_assert_float_eq(a.peak_flops[KW_PREC_BF16], 989.4e12, 1e6);
    cr_assert_float_eq(a.peak_flops[KW_PREC_FP8_E4M3], 1978.9e12, 1e6);
    cr_assert_float_eq(a.peak_flops[KW_PREC_FP32], 67e12, 1e6);
    cr_assert_eq(a.sram_bytes_per_unit, 228u * 1024u);
    cr_assert_float_eq(a.dram_bw_bytes_per_s, 3.35e12, 1e3);
    cr_assert(a.sparsity_2_4);
    cr_assert_float_eq(a.tdp_w, 700.0, 1e-9);
    /* bf16 peak = 132 SMs x 4 tensor cores x 1024 FLOP/clk x clock [D src/model-facts.md#accelerators] */
    cr_assert_float_eq(132 * 4 * 1024 * a.clock_ghz * 1e9, a.peak_flops[KW_PREC_BF16],
                       0.01 * a.peak_flops[KW_PREC_BF16]);
    /* thermal: sustained TDP crosses the 87 C step (steady T = ambient + P R) */
    cr_assert_eq(a.n_throttle, 2);
    cr_assert_float_eq(a.throttle[0].temp_c, 87.0, 1e-9);
    cr_assert_float_eq(a.throttle[1].clock_factor, 0.5, 1e-9);
    cr_assert_gt(a.t_ambient_c + a.tdp_w * a.r_th_c_per_w, a.throttle[0].temp_c);
    cr_assert_lt(a.t_ambient_c + a.idle_w * a.r_th_c_per_w, a.throttle[0].temp_c);
    cr_assert_float_eq(a.t_shutdown_c, 92.0, 1e-9);
    free(p);

    p = src_path("spaces/accel/tpu_v5e.xml");
    cr_assert_eq(kw_load_accel(&a, p), 0, "%s", kw_error_last());
    cr_assert_eq(a.peak_flops[KW_PREC_FP8_E4M3], 0.0);
    cr_assert_eq(a.peak_flops[KW_PREC_FP16], 0.0);
    cr_assert_float_eq(a.peak_flops[KW_PREC_INT8], 393e12, 1e6);
    /* VMEM 128 MiB shared by 4 MXUs */
    cr_assert_eq(a.sram_bytes_per_unit * (uint64_t)a.units_per_core, 128ULL << 20);
    cr_assert_eq(a.array_n, 128);
    cr_assert_eq(a.array_k, 128);
    free(p);

    p = src_path("spaces/accel/edge_npu.xml");
    cr_assert_eq(kw_load_accel(&a, p), 0, "%s", kw_error_last());
    cr_assert_float_eq(a.peak_flops[KW_PREC_INT8], 4e12, 1e3);
    cr_assert_eq(a.peak_flops[KW_PREC_FP8_E5M2], 0.0);
    cr_assert_float_eq(a.dram_bw_bytes_per_s, 17e9, 1.0);
    free(p);
}

Test(load, workload_blocks_ops_and_groups)
{
    char *p = src_path("spaces/workloads/llama7b.xml");
    kw_workload *w = calloc(1, sizeof *w);
    cr_assert_eq(kw_load_workload(w, p), 0, "%s", kw_error_last());
    cr_assert_eq(w->n_blocks, 2);
    const kw_block *b = &w->blocks[0];
    cr_assert_str_eq(b->name, "llama7b_attn");
    cr_assert_eq(b->n_ops, 7);
    cr_assert_eq(b->n_groups, 3);
    cr_assert_str_eq(b->groups[0], "qkv");
    cr_assert_str_eq(b->groups[1], "attn");
    cr_assert_str_eq(b->groups[2], "o");
    cr_assert_eq(b->ops[0].kind, KW_OP_NORM);
    cr_assert_eq(b->ops[0].width, 4096u);
    cr_assert_eq(b->ops[1].kind, KW_OP_GEMM);
    cr_assert_str_eq(b->ops[1].merge, "qkv");
    cr_assert_eq(b->ops[1].n, 4096u);
    cr_assert_eq(b->ops[1].k, 4096u);
    cr_assert(b->ops[1].weights);
    cr_assert(!b->ops[1].epilogue);
    const kw_op *at = &b->ops[4];
    cr_assert_eq(at->kind, KW_OP_ATTENTION);
    cr_assert_eq(at->heads, 32);
    cr_assert_eq(at->kv_heads, 32);
    cr_assert_eq(at->head_dim, 128);
    cr_assert(at->causal);
    cr_assert_eq(b->ops[6].kind, KW_OP_RESIDUAL);
    const kw_block *m = &w->blocks[1];
    cr_assert_eq(m->n_groups, 2);
    cr_assert_str_eq(m->groups[0], "gate_up");
    cr_assert_str_eq(m->groups[1], "down");
    cr_assert_eq(m->ops[3].kind, KW_OP_ACT);
    cr_assert_eq(m->ops[4].k, 11008u);
    /* Llama-2-7B [S config.json]: hidden = heads x head_dim */
    cr_assert_eq((uint64_t)at->heads * (uint64_t)at->head_dim, b->ops[1].k);

    int seq_min = 1 << 30, seq_max = 0, b_min = 1 << 30, b_max = 0, c_min = 1 << 30, c_max = 0;
    for (int i = 0; i < w->n_shapes; i++) {
        const kw_shape *s = &w->shapes[i];
        int len = s->phase == KW_PHASE_PREFILL ? s->seq : s->kv_len;
        seq_min = len < seq_min ? len : seq_min;
        seq_max = len > seq_max ? len : seq_max;
        b_min = s->batch < b_min ? s->batch : b_min;
        b_max = s->batch > b_max ? s->batch : b_max;
        c_min = s->streams < c_min ? s->streams : c_min;
        c_max = s->streams > c_max ? s->streams : c_max;
        cr_assert((s->load > 0) != (s->rate_per_s > 0), "%s", s->name);
        if (s->phase == KW_PHASE_DECODE)
            cr_assert_eq(s->seq, 1, "%s", s->name);
    }
    cr_assert(seq_min == 128 && seq_max == 8192, "%d..%d", seq_min, seq_max);
    cr_assert(b_min == 1 && b_max == 32);
    cr_assert(c_min == 1 && c_max == 16);
    free(w);
    free(p);

    p = src_path("spaces/workloads/resnet50.xml");
    w = calloc(1, sizeof *w);
    cr_assert_eq(kw_load_workload(w, p), 0, "%s", kw_error_last());
    const kw_op *cv = &w->blocks[0].ops[0];
    cr_assert_eq(cv->kind, KW_OP_CONV);
    /* implicit GEMM K = kh*kw*in_c = 576, 115.6M MAC per image [D src/model-facts.md#shapes] */
    cr_assert_eq(cv->kh * cv->kw * cv->in_c, 576);
    int oh = (cv->in_h + 2 * cv->pad - cv->kh) / cv->stride + 1;
    double mac = (double)oh * oh * cv->out_c * cv->kh * cv->kw * cv->in_c;
    cr_assert_float_eq(mac, 115.6e6, 0.1e6);
    free(w);
    free(p);
}

/* A scratch folder with a workload, an accelerator (copied from the shipped
 * ones) and a space written by the test. */
typedef struct scratch {
    char *dir;
    char space[4200];
} scratch;

static scratch make_scratch(const char *space_body, const char *workload_extra_shape)
{
    scratch s;
    s.dir = kw_tl_tmpdir("kwtest");
    char cmd[8192], path[4200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/hw' && cp '%s/spaces/accel/h100.xml' '%s/hw/gpu.xml'",
             s.dir, kw_tl_src(), s.dir);
    cr_assert_eq(system(cmd), 0);
    char *wp = src_path("spaces/workloads/llama7b.xml");
    char *wl = kw_tl_slurp(wp);
    free(wp);
    if (workload_extra_shape) {
        char *end = strstr(wl, "</workload>");
        cr_assert_not_null(end);
        *end = '\0';
    }
    snprintf(path, sizeof path, "%s/wl.xml", s.dir);
    FILE *f = fopen(path, "w");
    fputs(wl, f);
    if (workload_extra_shape)
        fprintf(f, "%s\n</workload>\n", workload_extra_shape);
    fclose(f);
    free(wl);
    snprintf(s.space, sizeof s.space, "%s/space.xml", s.dir);
    snprintf(cmd, sizeof cmd,
             "<?xml version=\"1.0\"?>\n<space name=\"t\" block=\"llama7b_attn\">\n"
             "  <accelerator file=\"hw/gpu.xml\"/>\n  <workload file=\"wl.xml\"/>\n%s</space>\n",
             space_body);
    write_text(s.space, cmd);
    return s;
}

Test(load, defaults_paths_and_shapes_of_the_block)
{
    scratch s = make_scratch("  <knob name=\"fuse_qkv\" values=\"off on\" baseline=\"on\"/>\n", NULL);
    kw_config *c = NULL;
    cr_assert_eq(kw_load_config(&c, s.space, NULL, NULL), 0, "%s", kw_error_last());
    const kw_guards *g = &c->space.guards;
    cr_assert_float_eq(g->drift_min_cos, 0.999, 1e-12);
    cr_assert_float_eq(g->drift_max_rel_rms, 0.02, 1e-12);
    cr_assert_float_eq(g->max_throttle_pct, 5.0, 1e-12);
    cr_assert_float_eq(g->max_fallback_pct, 0.0, 1e-12);
    cr_assert_float_eq(g->sla_p99_us, 0.0, 1e-12);
    cr_assert_float_eq(g->max_long_window_drift_pct, 10.0, 1e-12);
    cr_assert_float_eq(c->space.min_effect_pct, 1.0, 1e-12);
    cr_assert_float_eq(c->space.alpha, 0.05, 1e-12);
    cr_assert_float_eq(c->space.noise_pct, 0.0, 1e-12);
    cr_assert_eq(c->space.sim_requests, 2000);
    cr_assert_eq(c->space.final_requests, 20000);
    char want[4300];
    snprintf(want, sizeof want, "%s/hw/gpu.xml", s.dir);
    cr_assert_str_eq(c->space.accel_path, want);
    cr_assert_eq(c->space.knobs.knobs[0].baseline, 1);
    /* no <shape ref>: every shape of the block, in file order */
    int n = 0;
    for (int i = 0; i < c->workload.n_shapes; i++)
        if (c->workload.shapes[i].block == 0)
            cr_assert_eq(c->space.shapes[n++], i);
    cr_assert_eq(c->space.n_shapes, n);
    cr_assert_eq(kw_load_config_shape(c, "attn_decode_kv512_b1_c1") >= 0, 1);
    cr_assert_eq(kw_load_config_shape(c, "mlp_decode_kv512_b1_c1"), -1);
    cr_assert_eq(kw_load_config_shape(c, "nope"), -1);
    kw_load_config_free(c);
    rm_rf(s.dir);
}

Test(load, explicit_settings_and_shape_order)
{
    scratch s = make_scratch(
        "  <shape ref=\"attn_decode_kv512_b1_c1\"/>\n  <shape ref=\"attn_prefill_s128_b8_c4\"/>\n"
        "  <knob name=\"fuse_qkv\" values=\"off on\" baseline=\"off\"/>\n"
        "  <guards drift_min_cos=\"0.99\" sla_p99_us=\"5000\"/>\n"
        "  <tuning alpha=\"0.01\" noise_pct=\"2\" sim_requests=\"100\" final_requests=\"1000\"/>\n",
        NULL);
    kw_config *c = NULL;
    cr_assert_eq(kw_load_config(&c, s.space, NULL, NULL), 0, "%s", kw_error_last());
    cr_assert_eq(c->space.n_shapes, 2);
    cr_assert_str_eq(c->workload.shapes[c->space.shapes[0]].name, "attn_decode_kv512_b1_c1");
    cr_assert_eq(kw_load_config_shape(c, "attn_prefill_s128_b8_c4"), 1);
    cr_assert_float_eq(c->space.guards.drift_min_cos, 0.99, 1e-12);
    cr_assert_float_eq(c->space.guards.drift_max_rel_rms, 0.02, 1e-12); /* default kept */
    cr_assert_float_eq(c->space.guards.sla_p99_us, 5000.0, 1e-12);
    cr_assert_float_eq(c->space.alpha, 0.01, 1e-12);
    cr_assert_float_eq(c->space.noise_pct, 2.0, 1e-12);
    cr_assert_eq(c->space.sim_requests, 100);
    cr_assert_eq(c->space.final_requests, 1000);
    kw_load_config_free(c);
    rm_rf(s.dir);
}

Test(load, trace_and_bursty_shapes)
{
    scratch s = make_scratch(
        "  <shape ref=\"replay\"/>\n  <knob name=\"fuse_qkv\" values=\"off on\" baseline=\"off\"/>\n",
        "  <shape name=\"replay\" block=\"llama7b_attn\" phase=\"decode\" kv_len=\"1024\" "
        "batch=\"2\" streams=\"3\" arrival=\"trace\" trace=\"traces/prod.csv\"/>");
    kw_config *c = NULL;
    cr_assert_eq(kw_load_config(&c, s.space, NULL, NULL), 0, "%s", kw_error_last());
    const kw_shape *sh = &c->workload.shapes[c->space.shapes[0]];
    cr_assert_eq(sh->arrival, KW_ARRIVAL_TRACE);
    char want[4300];
    snprintf(want, sizeof want, "%s/traces/prod.csv", s.dir);
    cr_assert_str_eq(sh->trace, want);
    cr_assert_eq(sh->load, 0.0);
    cr_assert_eq(sh->rate_per_s, 0.0);
    int i = -1;
    for (int k = 0; k < c->workload.n_shapes; k++)
        if (strcmp(c->workload.shapes[k].name, "attn_decode_kv2048_b32_c16") == 0)
            i = k;
    cr_assert_geq(i, 0);
    const kw_shape *bu = &c->workload.shapes[i];
    cr_assert_eq(bu->arrival, KW_ARRIVAL_BURSTY);
    cr_assert_float_eq(bu->burst_on_ms, 20.0, 1e-12);
    cr_assert_float_eq(bu->burst_off_ms, 80.0, 1e-12);
    cr_assert_float_eq(bu->burst_factor, 4.0, 1e-12);
    cr_assert_eq(bu->kv_len, 2048);
    kw_load_config_free(c);
    rm_rf(s.dir);
}

Test(load, overrides_replace_the_named_files)
{
    char *tpu = src_path("spaces/accel/tpu_v5e.xml");
    char *h100 = src_path("spaces/accel/h100.xml");
    kw_config *c = NULL;
    /* the default lists fp16 and fp8, which a TPU-v5e-like chip lacks */
    cr_assert_eq(kw_load_config(&c, NULL, tpu, NULL), KW_EINPUT);
    cr_assert_null(c);
    cr_assert(strstr(kw_error_last(), "spaces/default.xml:") == kw_error_last(), "%s",
              kw_error_last());
    cr_assert(strstr(kw_error_last(), "does not support precision") != NULL, "%s", kw_error_last());
    /* the same GPU from disk: loads, path is the override */
    cr_assert_eq(kw_load_config(&c, NULL, h100, NULL), 0, "%s", kw_error_last());
    cr_assert_str_eq(c->space.accel_path, h100);
    cr_assert_str_eq(c->space.workload_path, "spaces/workloads/llama7b.xml");
    kw_load_config_free(c);
    /* a bad override is named as such at the space's line */
    char *bad = src_path("tests/data/bad/accel_dup_peak.xml");
    cr_assert_eq(kw_load_config(&c, NULL, bad, NULL), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "given instead") != NULL, "%s", kw_error_last());
    cr_assert(strstr(kw_error_last(), "more than one peak") != NULL, "%s", kw_error_last());
    free(bad);
    free(tpu);
    free(h100);
}

Test(load, every_problem_of_a_space_is_reported)
{
    scratch s = make_scratch("  <knob name=\"fuse_qkv\" values=\"off on\" baseline=\"maybe\"/>\n"
                             "  <knob name=\"max_batch\" values=\"1 2 2\" baseline=\"1\"/>\n"
                             "  <knob name=\"tile_q\" values=\"1\" baseline=\"1\"/>\n",
                             NULL);
    kw_config *c = NULL;
    cr_assert_eq(kw_load_config(&c, s.space, NULL, NULL), KW_EINPUT);
    const char *m = kw_error_last();
    char l5[4300], l6[4300], l7[4300];
    snprintf(l5, sizeof l5, "%s:5: ", s.space);
    snprintf(l6, sizeof l6, "%s:6: ", s.space);
    snprintf(l7, sizeof l7, "%s:7: ", s.space);
    cr_assert(strstr(m, l5) && strstr(m, l6) && strstr(m, l7), "%s", m);
    int lines = 1;
    for (const char *p = m; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 3, "%s", m);
    rm_rf(s.dir);
}

Test(load, space_load_alone)
{
    char *wp = src_path("spaces/workloads/llama7b.xml"), *ap = src_path("spaces/accel/h100.xml");
    char *sp = src_path("spaces/validate_small.xml");
    kw_workload *w = calloc(1, sizeof *w);
    kw_accel a;
    kw_space *s = calloc(1, sizeof *s);
    cr_assert_eq(kw_load_workload(w, wp), 0);
    cr_assert_eq(kw_load_accel(&a, ap), 0);
    cr_assert_eq(kw_load_space(s, sp, &a, w), 0, "%s", kw_error_last());
    cr_assert_eq(s->n_shapes, 2);
    cr_assert_eq(s->knobs.n_knobs, 9);
    char want[4200];
    snprintf(want, sizeof want, "%s/spaces/accel/h100.xml", kw_tl_src());
    cr_assert_str_eq(s->accel_path, want);
    free(s);
    free(w);
    free(wp);
    free(ap);
    free(sp);
}

Test(load, results_root_without_schema_says_so)
{
    char *dir = kw_tl_tmpdir("kwtest");
    char path[4200];
    snprintf(path, sizeof path, "%s/results.xml", dir);
    write_text(path, "<?xml version=\"1.0\"?>\n<results/>\n");
    int rc = kw_load_validate_file(path);
    if (kw_embedded_find("results/results.xsd") == NULL) {
        cr_assert_eq(rc, KW_EINPUT);
        cr_assert(strstr(kw_error_last(), "no results schema") != NULL, "%s", kw_error_last());
    } else {
        /* with the schema built in, a bare <results/> is refused by it, at its line */
        char prefix[4300];
        snprintf(prefix, sizeof prefix, "%s:2: ", path);
        cr_assert_eq(rc, KW_EINPUT, "%s", kw_error_last());
        cr_assert(strncmp(kw_error_last(), prefix, strlen(prefix)) == 0, "%s", kw_error_last());
    }
    rm_rf(dir);
}

/* Every file of the bad-input corpus: KW_EINPUT, the message starts with
 * "FILE:LINE: " for the manifest's line and contains its substring. */
Test(load, bad_corpus_refused_with_file_and_line)
{
    char *man = src_path("tests/data/bad/EXPECTED");
    kw_tl_manifest *m = kw_tl_manifest_open(man);
    cr_assert_not_null(m, "no manifest %s", man);
    kw_tl_row row;
    int n = 0;
    while (kw_tl_manifest_next(m, &row)) {
        const char *name = row.f[0], *sub = row.f[1], *ln = row.f[2];
        cr_assert(row.n >= 3, "bad manifest line %d", row.line);
        char file[4200], prefix[4300];
        snprintf(file, sizeof file, "%s/tests/data/bad/%s", kw_tl_src(), name);
        snprintf(prefix, sizeof prefix, "%s:%s: ", file, ln);
        kw_error_clear();
        int rc = kw_load_validate_file(file);
        cr_expect_eq(rc, KW_EINPUT, "%s: rc %d: %s", name, rc, kw_error_last());
        cr_expect(strncmp(kw_error_last(), prefix, strlen(prefix)) == 0, "%s: want prefix '%s' in: %s",
                  name, prefix, kw_error_last());
        cr_expect(strstr(kw_error_last(), sub) != NULL, "%s: want '%s' in: %s", name, sub,
                  kw_error_last());
        n++;
    }
    kw_tl_manifest_close(m);
    free(man);
    cr_assert_geq(n, 30);
}

Test(load, missing_and_non_xml_files)
{
    kw_config *c = NULL;
    cr_assert_eq(kw_load_config(&c, "/nonexistent/space.xml", NULL, NULL), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "/nonexistent/space.xml: cannot open") != NULL, "%s",
              kw_error_last());
    cr_assert_eq(kw_load_validate_file("/dev/null"), KW_EINPUT);
    cr_assert(strstr(kw_error_last(), "not a regular file") != NULL, "%s", kw_error_last());
}

/* A decode shape of a block without attention does not give kv_len (the MLP
 * never sees the KV length); one of an attention block still must. */
Test(load, decode_shape_without_kv_len_where_no_attention_reads_it)
{
    char *dir = kw_tl_tmpdir("kwtest");
    cr_assert_not_null(dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/w.xml", dir);
    write_text(path, "<?xml version=\"1.0\"?>\n<workload name=\"w\">\n  <source>test</source>\n"
                     "  <block name=\"mlp\"><gemm name=\"up\" group=\"up\" n=\"256\" k=\"128\"/></block>\n"
                     "  <block name=\"att\"><attention name=\"a\" group=\"a\" heads=\"4\" kv_heads=\"4\" "
                     "head_dim=\"64\"/></block>\n"
                     "  <shape name=\"m\" block=\"mlp\" phase=\"decode\" batch=\"8\" load=\"0.5\"/>\n"
                     "</workload>\n");
    kw_workload *w = malloc(sizeof *w);
    cr_assert_eq(kw_load_workload(w, path), 0, "%s", kw_error_last());
    cr_assert_eq(w->shapes[0].kv_len, 0);
    cr_assert_eq(w->shapes[0].seq, 1);
    write_text(path, "<?xml version=\"1.0\"?>\n<workload name=\"w\">\n  <source>test</source>\n"
                     "  <block name=\"att\"><attention name=\"a\" group=\"a\" heads=\"4\" kv_heads=\"4\" "
                     "head_dim=\"64\"/></block>\n"
                     "  <shape name=\"d\" block=\"att\" phase=\"decode\" batch=\"8\" load=\"0.5\"/>\n"
                     "</workload>\n");
    cr_assert_eq(kw_load_workload(w, path), KW_EINPUT);
    char want[4300];
    snprintf(want, sizeof want, "%s:5: ", path);
    cr_expect(strncmp(kw_error_last(), want, strlen(want)) == 0, "%s", kw_error_last());
    cr_expect(strstr(kw_error_last(), "needs kv_len") != NULL, "%s", kw_error_last());
    free(w);
    rm_rf(dir);
}
