/* test_casestudy.c - the field note's mini case study, end to end through the
 * real model: "aggressive fusion reduced launch overhead but increased memory
 * bursts that worsened p95 latency" (spaces/case_fusion_bursts.xml).
 * Asserted in its halves: the aggressive mapping launches fewer kernels and
 * is faster for a request alone; served at the shape's concurrency its p95 is
 * worse; it loses more service time to DRAM contention; and with contention
 * removed (the counterfactual) it wins again, so contention explains it. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "lib/kw_tl.h"

TestSuite(casestudy);

typedef struct row {
    int launches;
    double p95_us, latency_us, contention_pct;
} row;

/* Run eval --format csv with extra args; parse the single data row. */
static row eval_row(const char *extra)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "eval --space %s/spaces/case_fusion_bursts.xml --format csv %s",
             kw_tl_src(), extra);
    kw_tl_proc r = kw_tl_sh(cmd, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char v[64];
    row out = {0};
    int cols = kw_tl_csv_col(r.out, "launches", v, sizeof v);
    out.launches = atoi(v);
    kw_tl_csv_col(r.out, "p95_us", v, sizeof v);
    out.p95_us = atof(v);
    kw_tl_csv_col(r.out, "latency_us", v, sizeof v);
    out.latency_us = atof(v);
    kw_tl_csv_col(r.out, "contention_pct", v, sizeof v);
    out.contention_pct = atof(v);
    cr_assert_gt(cols, 16, "the eval CSV lost its added columns");
    kw_tl_free(&r);
    return out;
}

#define AGGRESSIVE \
    "--set fuse_gate_up=on --set fuse_epilogue=on --set gate_up.tile_m=128 --set gate_up.tile_n=64"

Test(casestudy, fusion_cuts_launches_but_its_bursts_worsen_p95)
{
    row mod = eval_row("");
    row agg = eval_row(AGGRESSIVE);
    /* first half: fusion does what it promises on an idle machine */
    cr_assert_lt(agg.launches, mod.launches);
    cr_assert_lt(agg.latency_us, mod.latency_us, "aggressive alone %.1f us vs moderate %.1f us",
                 agg.latency_us, mod.latency_us);
    /* second half: served at the shape's concurrency, the tail is worse */
    cr_assert_gt(agg.p95_us, 1.2 * mod.p95_us, "p95 aggressive %.1f vs moderate %.1f", agg.p95_us,
                 mod.p95_us);
    /* and DRAM contention explains it */
    cr_assert_gt(agg.contention_pct, mod.contention_pct + 5.0, "contention %.1f%% vs %.1f%%",
                 agg.contention_pct, mod.contention_pct);
    row mod_nc = eval_row("--no-contention");
    row agg_nc = eval_row(AGGRESSIVE " --no-contention");
    cr_assert_lt(agg_nc.p95_us, mod_nc.p95_us,
                 "without contention the aggressive mapping should win: %.1f vs %.1f",
                 agg_nc.p95_us, mod_nc.p95_us);
    cr_assert_float_eq(agg_nc.contention_pct, 0.0, 1e-9);
}

/* the space runs on accel/h100_flat.xml (no L2). On the H100 with its
 * 50 MB L2 the aggressive tiles' re-reads of the weights hit L2, both mappings
 * move compulsory DRAM traffic, and the second half of the case study no
 * longer holds: served at the same concurrency, the aggressive mapping's p95
 * is not worse than the moderate one's. */
Test(casestudy, with_the_l2_the_bursts_no_longer_worsen_p95)
{
    char acc[2048];
    snprintf(acc, sizeof acc, "--accel %s/spaces/accel/h100.xml", kw_tl_src());
    char agg_args[4096];
    snprintf(agg_args, sizeof agg_args, "%s %s", acc, AGGRESSIVE);
    row mod = eval_row(acc);
    row agg = eval_row(agg_args);
    cr_assert_lt(agg.launches, mod.launches);
    cr_assert_lt(agg.latency_us, mod.latency_us);
    cr_assert_leq(agg.p95_us, mod.p95_us, "p95 aggressive %.1f vs moderate %.1f with the L2",
                  agg.p95_us, mod.p95_us);
}
