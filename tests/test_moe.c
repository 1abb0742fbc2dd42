/* test_moe.c - mixture-of-experts operators against closed forms: routing
 * shares (uniform, Zipf), the busiest expert's expected share under Zipf
 * against its analytic value 1/H(E,s), the capacity cut and dropped share,
 * the grouped GEMM's FLOPs and DRAM traffic (2 T k N K and the output-
 * stationary tiled GEMM's MK + KN + MN per expert), batched padding to the
 * busiest expert, per-expert launches, the drift view, and the loader's
 * <moe> and <layer> elements with their FILE:LINE errors. Every expectation is
 * computed here from its formula; accelerators and blocks are built by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kw_cost.h"
#include "kw_error.h"
#include "kw_load.h"
#include "kw_moe.h"
#include "lib/kw_tl.h"
#include "lib/kw_tl_model.h"

static kw_accel acc;
static kw_block blk;
static kw_shape shp;
static kw_mapping map;
static kw_cost cost;

/* The round chip of test_cost.c (kw_tl_round_chip: 4 cores x 8 units, 16^3
 * array, 256 KiB SRAM per unit, 1 TB/s, 64 B bursts, no first-byte latency)
 * with its launch costs (5 us eager). */
static void setup(void)
{
    kw_tl_round_chip(&acc, "testchip");
    kw_tl_chip_launches(&acc);
    memset(&blk, 0, sizeof blk);
    snprintf(blk.name, sizeof blk.name, "moeblock");
    blk.n_groups = 1;
    snprintf(blk.groups[0], KW_NAME_MAX, "experts");
    kw_tl_shape(&shp, KW_PHASE_DECODE, 64, 1);
    kw_tl_mapping(&map, (kw_tiling){64, 128, 32, 1, KW_LOOP_MNK, 1, 0, 0, 0, 0, 0, 0}, KW_PREC_BF16);
    map.n_groups = 1;
}

TestSuite(moe, .init = setup);

static kw_op *add_moe(int experts, int top_k, uint64_t n, uint64_t k)
{
    kw_op *op = &blk.ops[blk.n_ops++];
    memset(op, 0, sizeof *op);
    snprintf(op->name, sizeof op->name, "moe");
    snprintf(op->group, sizeof op->group, "experts");
    op->kind = KW_OP_MOE;
    op->experts = experts;
    op->top_k = top_k;
    op->n = n;
    op->k = k;
    op->gated = 1;
    op->weights = 1;
    return op;
}

static const kw_kernel *kernel(const char *name)
{
    const kw_kernel *k = kw_tl_kernel(&cost, name);
    cr_assert_not_null(k, "no kernel %s", name);
    return k;
}

static double harmonic(int E, double s)
{
    double h = 0.0;
    for (int i = 1; i <= E; i++)
        h += pow(i, -s);
    return h;
}

Test(moe, shares_uniform_and_zipf_closed_form)
{
    double sh[KW_EXPERT_MAX];
    kw_op *op = add_moe(8, 2, 256, 128);
    cr_assert_eq(kw_moe_shares(sh, op, &blk), 0, "%s", kw_error_last());
    for (int i = 0; i < 8; i++)
        cr_expect_float_eq(sh[i], 1.0 / 8.0, 1e-15);
    op->routing = KW_ROUTE_ZIPF;
    op->zipf_s = 1.0;
    op->top_k = 1;
    cr_assert_eq(kw_moe_shares(sh, op, &blk), 0, "%s", kw_error_last());
    double h = harmonic(8, 1.0); /* H_8 = 761/280 */
    cr_expect_float_eq(h, 761.0 / 280.0, 1e-12);
    for (int i = 0; i < 8; i++)
        cr_expect_float_eq(sh[i], 1.0 / ((i + 1) * h), 1e-12);
    /* top_k x the busiest share above 1 is impossible: refused */
    op->zipf_s = 3.0;
    op->top_k = 2;
    cr_assert_eq(kw_moe_shares(sh, op, &blk), KW_EINPUT);
    cr_expect(strstr(kw_error_last(), "at most once") != NULL, "%s", kw_error_last());
}

/* The busiest expert's expected share under Zipf(s), top-1 routing: expert 1
 * has share 1/H(E,s) and, with T = 4096 tokens and the second expert at half
 * that share, is the busiest in every draw. The mean of KW_MOE_DRAWS draws has
 * standard error sqrt(p (1 - p) / T / draws); 5 of them is the tolerance. */
Test(moe, busiest_expert_share_under_zipf_matches_analytic)
{
    static const double s_values[] = {1.0, 1.2, 2.0};
    for (size_t j = 0; j < sizeof s_values / sizeof s_values[0]; j++) {
        blk.n_ops = 0;
        kw_op *op = add_moe(8, 1, 256, 128);
        op->routing = KW_ROUTE_ZIPF;
        op->zipf_s = s_values[j];
        double loads[KW_EXPERT_MAX], dropped;
        const double T = 4096.0;
        cr_assert_eq(kw_moe_loads(loads, &dropped, op, &blk, T), 0, "%s", kw_error_last());
        double p1 = 1.0 / harmonic(8, op->zipf_s);
        double se = sqrt(p1 * (1.0 - p1) / T / KW_MOE_DRAWS);
        cr_expect(fabs(loads[0] / T - p1) < 5.0 * se, "s=%g: busiest share %g, analytic %g (se %g)",
                  op->zipf_s, loads[0] / T, p1, se);
        cr_expect_eq(dropped, 0.0);
        for (int i = 1; i < 8; i++)
            cr_expect(loads[i] <= loads[i - 1], "sorted busiest first");
    }
}

/* top_k = E: every token goes to every expert, exactly T tokens each; a
 * capacity factor cf cuts each at C = ceil(cf T k / E), dropping (T - C)/T. */
Test(moe, every_expert_and_capacity_cut)
{
    kw_op *op = add_moe(4, 4, 256, 128);
    double loads[KW_EXPERT_MAX], dropped;
    cr_assert_eq(kw_moe_loads(loads, &dropped, op, &blk, 100.0), 0);
    for (int i = 0; i < 4; i++)
        cr_expect_float_eq(loads[i], 100.0, 1e-12);
    cr_expect_eq(dropped, 0.0);
    op->capacity_factor = 0.5; /* C = ceil(0.5 x 100 x 4 / 4) = 50 */
    cr_assert_eq(kw_moe_loads(loads, &dropped, op, &blk, 100.0), 0);
    for (int i = 0; i < 4; i++)
        cr_expect_float_eq(loads[i], 50.0, 1e-12);
    cr_expect_float_eq(dropped, 0.5, 1e-12);
}

/* Grouped GEMM, E = 4 experts each receiving all T = 64 tokens (top_k = 4),
 * gated N = 256 (gate_up 512 columns), K = 128, tiles 64 x 128 x 32: one M
 * tile per expert, the A panel (64 x 128) resident, so each expert moves
 * exactly MK + KN + MN elements (bf16, every tile row a whole number of 64 B
 * bursts), and the FLOPs are 2 x (E T) x 2N x K. Per-expert kernels do the
 * same work in E launches; batched equals grouped when the loads are equal. */
Test(moe, grouped_gemm_flops_and_traffic)
{
    add_moe(4, 4, 256, 128);
    const double E = 4, T = 64, N = 256, K = 128, B = 2;
    map.moe_kernel = KW_MOE_GROUPED;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 1), 0, "%s", kw_error_last());
    const kw_kernel *gu = kernel("moe_gate_up");
    cr_expect_float_eq(gu->flops, 2.0 * E * T * 2.0 * N * K, 1e-3);
    cr_expect_float_eq(gu->dram_bytes, E * (T * K + K * 2.0 * N + T * 2.0 * N) * B, 1e-3);
    const kw_kernel *dn = kernel("moe_down");
    cr_expect_float_eq(dn->flops, 2.0 * E * T * K * N, 1e-3);
    cr_expect_float_eq(dn->dram_bytes, E * (T * N + N * K + T * K) * B, 1e-3);
    /* router T x E x K, dispatch, gate_up, act, down, combine */
    cr_expect_eq(cost.n_kernels, 6);
    cr_expect_eq(cost.launches, 6);
    const kw_kernel *rt = kernel("moe_router");
    cr_expect_float_eq(rt->flops, 2.0 * T * E * K, 1e-6);
    const kw_kernel *cb = kernel("moe_combine");
    cr_expect_float_eq(cb->dram_bytes, E * T * (K * B + 4.0) + T * K * B, 1e-6);
    double grouped_flops = cost.flops;

    map.moe_kernel = KW_MOE_PER_EXPERT;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 1), 0, "%s", kw_error_last());
    cr_expect_float_eq(kernel("moe_gate_up")->dram_bytes,
                       E * (T * K + K * 2.0 * N + T * 2.0 * N) * B, 1e-3);
    cr_expect_float_eq(cost.flops, grouped_flops, 1e-3);
    cr_expect_eq(cost.n_kernels, 6);                     /* one line per GEMM in the plan */
    cr_expect_eq(cost.launches, 6 + 2 * (int)(E - 1));  /* but E launches each */

    map.moe_kernel = KW_MOE_BATCHED;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 1), 0, "%s", kw_error_last());
    cr_expect_float_eq(cost.flops, grouped_flops, 1e-3);
}

/* Under imbalance the batched kernel pads every expert to the busiest: its
 * gate_up FLOPs are 2 E max_i(T_i) 2N K, the grouped kernel's 2 sum_i(T_i) 2N K. */
Test(moe, batched_pads_to_the_busiest_expert)
{
    kw_op *op = add_moe(8, 2, 256, 128);
    op->routing = KW_ROUTE_ZIPF;
    op->zipf_s = 1.0;
    double loads[KW_EXPERT_MAX], dropped, routed = 0.0;
    double T = shp.batch;
    cr_assert_eq(kw_moe_loads(loads, &dropped, op, &blk, T), 0);
    for (int i = 0; i < 8; i++)
        routed += loads[i];
    map.moe_kernel = KW_MOE_BATCHED;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 1), 0, "%s", kw_error_last());
    cr_expect_float_eq(kernel("moe_gate_up")->flops, 2.0 * 8 * loads[0] * 512 * 128, 1e-3);
    map.moe_kernel = KW_MOE_GROUPED;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 1), 0, "%s", kw_error_last());
    cr_expect_float_eq(kernel("moe_gate_up")->flops, 2.0 * routed * 512 * 128, 1e-3);
    cr_expect(loads[0] > routed / 8.0, "Zipf: the busiest expert is above the mean");
}

/* Shared experts see every token: one dense gated FFN of S x N_shared columns. */
Test(moe, shared_experts_are_dense)
{
    kw_op *op = add_moe(4, 1, 256, 128);
    op->shared_experts = 2;
    op->shared_n = 64;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &blk, &shp, &map, 1, 1), 0, "%s", kw_error_last());
    double T = shp.batch, sn = 2 * 64;
    cr_expect_float_eq(kernel("moe_shared_gate_up")->flops, 2.0 * T * 2.0 * sn * 128, 1e-6);
    cr_expect_float_eq(kernel("moe_shared_down")->flops, 2.0 * T * 128 * sn, 1e-6);
}

Test(moe, numerics_view_is_one_expert_ffn)
{
    add_moe(8, 2, 256, 128);
    kw_block view;
    const kw_block *v = kw_moe_numerics_view(&view, &blk);
    cr_assert_eq(v, &view);
    cr_assert_eq(v->n_ops, 4);
    cr_expect_eq(v->ops[0].kind, KW_OP_GEMM);
    cr_expect_eq(v->ops[0].n, 256);
    cr_expect_eq(v->ops[0].k, 128);
    cr_expect_eq(v->ops[2].kind, KW_OP_ACT);
    cr_expect_eq(v->ops[3].n, 128);
    cr_expect_eq(v->ops[3].k, 256);
    blk.n_ops = 0;
    cr_expect_eq(kw_moe_numerics_view(&view, &blk), &blk);
}

static char *write_tmp(const char *dir, const char *name, const char *text)
{
    char *path = malloc(4200);
    snprintf(path, 4200, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* A workload whose one MoE block routes by the trace route.csv beside it. */
static const char kw_t_route_workload[] =
    "<?xml version=\"1.0\"?>\n<workload name=\"w\">\n  <source>t</source>\n"
    "  <block name=\"ffn\">\n"
    "    <moe name=\"moe\" group=\"experts\" experts=\"4\" top_k=\"1\" n=\"256\" k=\"128\" "
    "routing=\"trace\" trace=\"route.csv\"/></block>\n"
    "  <shape name=\"d\" block=\"ffn\" phase=\"decode\" batch=\"4\" load=\"0.5\"/>\n"
    "</workload>\n";

/* A routing trace is read line by line as the other CSV readers read: an
 * empty file is named at line 1 (it said "no row for expert 0" at no line),
 * a line holding a NUL byte is refused (fgets ended it at the NUL: the row
 * "3,1\0junk" was taken as "3,1"), and a line over 255 bytes is refused at
 * its own line (fgets split it in two and the error named the line after
 * it). Fails on the code before 2026-12-07 in all three. */
Test(moe, a_routing_trace_that_is_no_text_is_refused_at_its_line)
{
    char *dir = kw_tl_tmpdir("kwtest");
    char long_row[400];
    snprintf(long_row, sizeof long_row, "expert,tokens\n0,%0300d\n1,1\n2,1\n3,1\n", 1);
    static const char nul_row[] = "expert,tokens\n0,1\n1,1\n2,1\n3,1\0junk\n";
    const struct {
        const char *text;
        size_t len;
        const char *want;
    } cases[] = {
        {"", 0, "route.csv:1: empty file"},
        {nul_row, sizeof nul_row - 1, "route.csv:5: NUL byte in line"},
        {long_row, strlen(long_row), "route.csv:2: line longer than 255 bytes"},
    };
    char *wl = write_tmp(dir, "w.xml", kw_t_route_workload);
    kw_workload *w = malloc(sizeof *w);
    cr_assert_not_null(w);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/route.csv", dir);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(cases[i].text, 1, cases[i].len, f), cases[i].len);
        cr_assert_eq(fclose(f), 0);
        cr_assert_eq(kw_load_workload(w, wl), KW_EINPUT, "case %zu accepted", i);
        cr_assert(strstr(kw_error_last(), cases[i].want) != NULL, "case %zu: want '%s' in: %s", i,
                  cases[i].want, kw_error_last());
    }
    free(w);
    free(wl);
    kw_tl_rmrf(dir);
}

Test(moe, loader_moe_trace_and_layer)
{
    char *dir = kw_tl_tmpdir("kwtest");
    char *tr = write_tmp(dir, "route.csv", "expert,tokens\n0,30\n1,10\n2,10\n3,50\n");
    char *wl = write_tmp(dir, "w.xml",
        "<?xml version=\"1.0\"?>\n<workload name=\"w\">\n  <source>t</source>\n"
        "  <block name=\"attn\"><norm name=\"n1\" width=\"128\"/>"
        "<attention name=\"a\" group=\"attn\" heads=\"4\" kv_heads=\"2\" head_dim=\"32\"/>"
        "<residual name=\"r\" width=\"128\"/></block>\n"
        "  <block name=\"ffn\"><norm name=\"n2\" width=\"128\"/>\n"
        "    <moe name=\"moe\" group=\"experts\" experts=\"4\" top_k=\"1\" n=\"256\" k=\"128\" "
        "routing=\"trace\" trace=\"route.csv\" capacity_factor=\"1.25\"/>"
        "<residual name=\"r\" width=\"128\"/></block>\n"
        "  <layer name=\"layer\" blocks=\"attn ffn\" layers=\"32\"/>\n"
        "  <shape name=\"d\" block=\"layer\" phase=\"decode\" kv_len=\"64\" batch=\"4\" load=\"0.5\"/>\n"
        "</workload>\n");
    kw_workload *w = malloc(sizeof *w);
    cr_assert_eq(kw_load_workload(w, wl), 0, "%s", kw_error_last());
    cr_assert_eq(w->n_blocks, 3);
    const kw_block *l = &w->blocks[2];
    cr_expect_str_eq(l->name, "layer");
    cr_expect_eq(l->layers, 32);
    cr_expect_eq(l->n_ops, 6);
    cr_expect_str_eq(l->ops[4].name, "ffn.moe");
    cr_expect_eq(l->n_groups, 2);
    cr_expect_eq(l->n_route, 4);
    cr_expect_float_eq(l->route_share[3], 0.5, 1e-7);
    cr_expect_float_eq(l->ops[4].capacity_factor, 1.25, 1e-12);
    free(wl);
    /* a bad trace row is reported at the CSV's own line */
    free(write_tmp(dir, "route.csv", "expert,tokens\n0,30\n9,10\n"));
    wl = write_tmp(dir, "w2.xml", kw_t_route_workload);
    cr_assert_eq(kw_load_workload(w, wl), KW_EINPUT);
    char want[4300];
    snprintf(want, sizeof want, "%s:3: ", tr);
    cr_expect(strstr(kw_error_last(), want) != NULL, "want %s in: %s", want, kw_error_last());
    free(wl);
    /* Zipf that would give an expert more than every token */
    wl = write_tmp(dir, "w3.xml",
        "<?xml version=\"1.0\"?>\n<workload name=\"w\">\n  <source>t</source>\n"
        "  <block name=\"ffn\">\n"
        "    <moe name=\"moe\" group=\"experts\" experts=\"4\" top_k=\"2\" n=\"256\" k=\"128\" "
        "routing=\"zipf\" zipf_s=\"4\"/></block>\n"
        "  <shape name=\"d\" block=\"ffn\" phase=\"decode\" batch=\"4\" load=\"0.5\"/>\n"
        "</workload>\n");
    cr_assert_eq(kw_load_workload(w, wl), KW_EINPUT);
    snprintf(want, sizeof want, "%s:5: ", wl);
    cr_expect(strncmp(kw_error_last(), want, strlen(want)) == 0, "%s", kw_error_last());
    cr_expect(strstr(kw_error_last(), "at most once") != NULL, "%s", kw_error_last());
    free(wl);
    free(tr);
    free(w);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

/* A layer of L identical layers costs L times one layer; one layer with no
 * fusion across the boundary costs what its blocks cost one after another. */
Test(moe, layer_costs_its_blocks_times_layers)
{
    kw_block a, f, l;
    memset(&a, 0, sizeof a);
    kw_op *o = &a.ops[a.n_ops++];
    snprintf(o->name, sizeof o->name, "n1");
    o->kind = KW_OP_NORM;
    o->width = 128;
    o = &a.ops[a.n_ops++];
    snprintf(o->name, sizeof o->name, "r1");
    o->kind = KW_OP_RESIDUAL;
    o->width = 128;
    blk.n_ops = 0;
    add_moe(4, 2, 256, 128);
    f = blk;
    l = f;
    l.n_ops = 0;
    for (int i = 0; i < a.n_ops; i++)
        l.ops[l.n_ops++] = a.ops[i];
    for (int i = 0; i < f.n_ops; i++)
        l.ops[l.n_ops++] = f.ops[i];
    double ta, tf, tl;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &a, &shp, &map, 1, 1), 0, "%s", kw_error_last());
    ta = cost.latency_us;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &f, &shp, &map, 1, 1), 0, "%s", kw_error_last());
    tf = cost.latency_us;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &l, &shp, &map, 1, 1), 0, "%s", kw_error_last());
    tl = cost.latency_us;
    cr_expect_float_eq(tl, ta + tf, 1e-9 * tl);
    int launches = cost.launches;
    l.layers = 32;
    cr_assert_eq(kw_cost_eval(&cost, &acc, &l, &shp, &map, 1, 1), 0, "%s", kw_error_last());
    cr_expect_float_eq(cost.latency_us, 32.0 * tl, 1e-9 * tl * 32);
    cr_expect_eq(cost.launches, 32 * launches);
}
