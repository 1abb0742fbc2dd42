/* kw_tl_model.h - the model fixtures the stage tests share: an accelerator,
 * a shape and a mapping with round figures, built by hand so the closed forms
 * a test works out stay readable and no test depends on a shipped XML file.
 *
 *   kw_tl_round_chip     4 cores x 8 units, 16^3 array, 256 KiB SRAM per unit,
 *                        1 TB/s DRAM, 64 B bursts, no first-byte latency and
 *                        no launch cost (test_cost, test_moe, test_hier, test_tp)
 *   kw_tl_chip_launches  the launch figures test_cost and test_moe add
 *   kw_tl_shape          one stream of a shape named "s"
 *   kw_tl_mapping        one tiling for every group, an output precision with
 *                        fp32 accumulation and softmax, one request a batch on
 *                        one core (test_cost, test_moe, test_hier, test_tp,
 *                        test_cost_cpu)
 *   kw_tl_queue          one core, 1 TB/s, Poisson arrivals on one stream and
 *                        least-loaded placement: the queueing tests' server
 *                        (test_estimate, test_sim, test_validation)
 *   kw_tl_block_group,   a block built op by op (test_cost, test_tp)
 *   kw_tl_block_op
 *   kw_tl_kernel         a cost's kernel by name (test_moe, test_tp)
 *
 * Each fills what it names and zeroes the rest; a test sets what it needs on
 * top. Header-only (static inline) because it needs the model's types, which
 * libkwtl.a (kw_tl.h: files and processes) does not know.
 */
#ifndef KW_TL_MODEL_H
#define KW_TL_MODEL_H

#include <stdio.h>
#include <string.h>

#include "kw_cost.h" /* kw_cost, kw_kernel; it brings kw_model.h */

static inline void kw_tl_round_chip(kw_accel *a, const char *name)
{
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->cores = 4;
    a->units_per_core = 8;
    a->clock_ghz = 1.0;
    a->peak_flops[KW_PREC_FP32] = 25e12;
    a->peak_flops[KW_PREC_BF16] = 100e12;
    a->sram_bytes_per_unit = 256 * 1024;
    a->dram_bw_bytes_per_s = 1e12;
    a->dram_burst_bytes = 64;
    a->array_m = a->array_n = a->array_k = 16;
    a->fallback_efficiency = 0.3;
    a->elementwise_efficiency = 0.8;
    a->pj_per_flop = 0.5;
    a->pj_per_dram_byte = 10.0;
}

/* 5 us an eager launch; a graph costs 15 us plus 0.58 us a node. */
static inline void kw_tl_chip_launches(kw_accel *a)
{
    a->launch_eager_us = 5.0;
    a->graph_fixed_us = 15.0;
    a->graph_node_us = 0.58;
}

static inline void kw_tl_shape(kw_shape *s, kw_phase phase, int batch, int seq)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "s");
    s->phase = phase;
    s->batch = batch;
    s->seq = seq;
    s->streams = 1;
}

static inline void kw_tl_mapping(kw_mapping *m, kw_tiling t, kw_prec prec)
{
    memset(m, 0, sizeof *m);
    for (int g = 0; g < KW_GROUP_MAX; g++)
        m->tiling[g] = t;
    m->precision = prec;
    m->accum_precision = KW_PREC_FP32;
    m->softmax_precision = KW_PREC_FP32;
    m->max_batch = 1;
    m->cores_per_request = 1;
}

static inline void kw_tl_queue(kw_accel *a, kw_shape *s, kw_mapping *m)
{
    memset(a, 0, sizeof *a);
    a->cores = 1;
    a->dram_bw_bytes_per_s = 1e12;
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "s");
    s->streams = 1;
    s->arrival = KW_ARRIVAL_POISSON;
    memset(m, 0, sizeof *m);
    m->max_batch = 1;
    m->placement = KW_PLACE_LEAST_LOADED;
    m->cores_per_request = 1;
}

/* The index of group g in b, appended when new; m->n_groups follows b's
 * groups when m is given (NULL: the caller sets it). */
static inline int kw_tl_block_group(kw_block *b, kw_mapping *m, const char *g)
{
    for (int i = 0; i < b->n_groups; i++)
        if (strcmp(b->groups[i], g) == 0)
            return i;
    snprintf(b->groups[b->n_groups], KW_NAME_MAX, "%s", g);
    if (m)
        m->n_groups = b->n_groups + 1;
    return b->n_groups++;
}

/* An op appended to b, zeroed but for its name, kind and group (NULL: none;
 * a new group is added as kw_tl_block_group does). */
static inline kw_op *kw_tl_block_op(kw_block *b, kw_mapping *m, const char *name, kw_op_kind kind,
                                    const char *group)
{
    kw_op *op = &b->ops[b->n_ops++];
    memset(op, 0, sizeof *op);
    snprintf(op->name, sizeof op->name, "%s", name);
    op->kind = kind;
    if (group) {
        snprintf(op->group, sizeof op->group, "%s", group);
        kw_tl_block_group(b, m, group);
    }
    return op;
}

/* The kernel of c named name, or NULL. */
static inline const kw_kernel *kw_tl_kernel(const kw_cost *c, const char *name)
{
    for (int i = 0; i < c->n_kernels; i++)
        if (strcmp(c->kernels[i].name, name) == 0)
            return &c->kernels[i];
    return NULL;
}

#endif
