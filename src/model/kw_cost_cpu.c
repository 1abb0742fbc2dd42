/* kw_cost_cpu.c - stage 1 on a CPU: the cost of cache-blocked products under
 * a register micro-tile, and of flash attention, on the cores a kernel's
 * threads use (the rules are listed in kw_cost_cpu.h).
 *
 * Design choice: the GPU rules of kw_cost.c describe a fixed array fed from
 * a scratchpad (waves of tiles, full-tile padding, a generic kernel when a
 * tile does not fit); a CPU has none of that, and the measurements of
 * `make bench-cpu` showed those rules ranking CPU mappings against the
 * measured order. Rather than bend the GPU rules with CPU exceptions, this
 * file costs a product the way a blocked CPU GEMM runs it (Goto & van de
 * Geijn, "Anatomy of High-Performance Matrix Multiplication", ACM TOMS 34(3),
 * 2008: cache blocks of A and B, packed panels, a register micro-kernel, the
 * edges of a block handled apart), in closed form over the four kinds of tile
 * a blocking leaves (full x full, full x edge, edge x full, edge x edge).
 * kw_cost.c calls it at the places where a GEMM-like kernel or a flash
 * kernel is costed, only for an accelerator file with <cpu>; every other
 * file keeps today's figures. Alternative rejected: a second planner for CPU
 * blocks (the fusion plan, the elementwise kernels and the split-K reduction
 * are the same on both and stay in kw_cost.c).
 */
#include "kw_cost_cpu.h"

#include <math.h>

#define KW_CPU_US_PER_S 1e6
/* Packed panels are fp32 (the micro-kernel's operand type), 4 bytes. */
#define KW_CPU_PANEL_BYTES 4.0
/* C micro-tiles are loaded and stored around each K chunk (read + write). */
#define KW_CPU_C_RW 2.0
/* Accumulators are fp32 on a CPU (the worker refuses other accumulations). */
#define KW_CPU_ACC_BYTES 4.0
/* The base page of x86-64 and AArch64 Linux: hardware prefetchers do not
 * cross a 4 KiB page (Intel 64 and IA-32 Architectures Optimization
 * Reference Manual, "Hardware prefetching of data"; AMD Software
 * Optimization Guide for Family 19h, "Hardware prefetching"). */
#define KW_CPU_PAGE_BYTES 4096.0

static double kw_cpu_rup(double x, double g) { return g > 1.0 ? ceil(x / g) * g : x; }

/* Work of all tiles of one kind: executed vector MACs, scalar MACs, packed
 * elements. */
typedef struct kw_cpu_work {
    double vec_macs, scalar_macs, pack_a, pack_b;
    double strided;   /* in place: B elements the MR-row strips read row by row, rows a page
                       * or more apart */
    double ldb_bytes; /* input: B's row stride in bytes (the worker's ldb) */
} kw_cpu_work;

/* `n_tiles` tiles of mi x nj over kk (all of K, summed over chunks and
 * splits): packed, every micro-tile runs whole (zero-padded edges) and each
 * chunk of A and B is packed; in place, the full micro-tiles run on vectors
 * and the rest on scalar code (or padded, without scalar edges). */
static void kw_cpu_tiles(kw_cpu_work *w, const kw_accel *a, int packed, double n_tiles, double mi,
                         double nj, double kk)
{
    if (n_tiles <= 0.0 || mi <= 0.0 || nj <= 0.0 || kk <= 0.0)
        return;
    double mr = a->array_m > 0 ? a->array_m : 1, nr = a->array_n > 0 ? a->array_n : 1;
    if (packed || !a->cpu_scalar_edges) {
        w->vec_macs += n_tiles * kw_cpu_rup(mi, mr) * kw_cpu_rup(nj, nr) * kk;
    } else {
        double full = floor(mi / mr) * mr * floor(nj / nr) * nr;
        w->vec_macs += n_tiles * full * kk;
        w->scalar_macs += n_tiles * (mi * nj - full) * kk;
    }
    /* In place, every MR-row strip of a tile reads B's chunk again, one row
     * of the micro-tile's NR columns per k step (kw_kern.c, KW_UK_DIRECT). */
    if (!packed && w->ldb_bytes >= KW_CPU_PAGE_BYTES) {
        double strips = a->cpu_scalar_edges ? floor(mi / mr) : ceil(mi / mr);
        double cols = a->cpu_scalar_edges ? floor(nj / nr) * nr : kw_cpu_rup(nj, nr);
        w->strided += n_tiles * strips * kk * cols;
    }
    if (packed) {
        w->pack_a += n_tiles * kw_cpu_rup(mi, mr) * kk;
        w->pack_b += n_tiles * kk * kw_cpu_rup(nj, nr);
    }
}

/* A blocking of an m x n product by tm x tn: the four kinds of tile. */
static void kw_cpu_blocked(kw_cpu_work *w, const kw_accel *a, int packed, double times, double m,
                           double n, double kk, double tm, double tn)
{
    double fm = floor(m / tm), em = m - fm * tm, fn = floor(n / tn), en = n - fn * tn;
    kw_cpu_tiles(w, a, packed, times * fm * fn, tm, tn, kk);
    kw_cpu_tiles(w, a, packed, times * fm * (en > 0.0), tm, en, kk);
    kw_cpu_tiles(w, a, packed, times * (em > 0.0) * fn, em, tn, kk);
    kw_cpu_tiles(w, a, packed, times * (em > 0.0) * (en > 0.0), em, en, kk);
}

/* The largest shared level keeping operands (the CPU's last-level cache). */
static const kw_level *kw_cpu_llc(const kw_accel *a)
{
    const kw_level *best = NULL;
    for (int i = 0; i < a->n_levels && i < KW_LEVEL_MAX; i++) {
        const kw_level *l = &a->levels[i];
        if (l->kind == KW_LEVEL_SHARED && (l->holds & KW_HOLD_OPERANDS) &&
            (!best || l->bytes > best->bytes))
            best = l;
    }
    return best;
}

/* Bytes per us of the level `footprint` bytes live in, for `threads` of the
 * accelerator's cores: the private cache scales with the cores used (each
 * has its own; probe measures it on all of them), the shared level and DRAM
 * do not (one core draws most of them). *from_dram: the bytes come from DRAM. */
static double kw_cpu_level_bw(const kw_accel *a, double footprint, int threads, int *from_dram)
{
    double share = (double)threads / (a->cores > 0 ? a->cores : 1);
    double dram = a->dram_bw_bytes_per_s * (a->dram_fraction > 0.0 ? a->dram_fraction : 1.0);
    const kw_level *llc = kw_cpu_llc(a);
    *from_dram = 0;
    if (footprint <= (double)a->sram_bytes_per_unit && a->sram_bw_bytes_per_s > 0.0)
        return a->sram_bw_bytes_per_s * share / KW_CPU_US_PER_S;
    if (llc && footprint <= (double)llc->bytes && llc->bw_bytes_per_s > 0.0)
        return llc->bw_bytes_per_s / KW_CPU_US_PER_S;
    *from_dram = 1;
    return dram / KW_CPU_US_PER_S;
}

/* Per-core rates in FLOP per us: the vector rate of a precision (its peak
 * over the cores, at its achievable matrix fraction) and scalar code (the
 * fp32 vector rate times the fallback efficiency, probe's scalar / vector). */
static double kw_cpu_vec_rate(const kw_accel *a, kw_prec p)
{
    double peak = a->peak_flops[p] > 0.0 ? a->peak_flops[p] : a->peak_flops[KW_PREC_FP32];
    double frac = a->matrix_fraction[p] > 0.0 ? a->matrix_fraction[p] : 1.0;
    return peak * frac / (a->cores > 0 ? a->cores : 1) / KW_CPU_US_PER_S;
}

static double kw_cpu_scalar_rate(const kw_accel *a)
{
    return a->peak_flops[KW_PREC_FP32] / (a->cores > 0 ? a->cores : 1) * a->fallback_efficiency /
           KW_CPU_US_PER_S;
}

/* Threads take contiguous ranges of `items`: the largest range,
 * ceil(items / threads), decides; returned as items / (threads x largest). */
static double kw_cpu_balance(double items, int threads)
{
    if (items <= 0.0 || threads <= 1)
        return 1.0;
    return items / (threads * ceil(items / threads));
}

/* Close k from the single-core work, the operand traffic and its footprint. */
static void kw_cpu_close(kw_kernel *k, const kw_accel *a, const kw_cpu_work *w, kw_prec prec,
                         int packed, double b_bytes, double extra_us,
                         double traffic, double footprint, double items, double useful_macs,
                         int threads)
{
    double vec = kw_cpu_vec_rate(a, packed ? KW_PREC_FP32 : prec);
    double scalar = kw_cpu_scalar_rate(a);
    double pack_bw = kw_cpu_level_bw(a, 0.0, 1, &(int){0}); /* the private cache, one core */
    int from_dram;
    double bw = kw_cpu_level_bw(a, footprint, threads, &from_dram);
    /* Packing, in series with the micro-kernel (the worker packs a chunk,
     * then runs the micro-kernels over it: kw_kern.c kw_mm_block).
     * A is packed by a scalar loop, one element per iteration (a strided
     * load, the conversion, a bounds test, a store into the MR-interleaved
     * strip): scalar code, costed as one scalar MAC per element at the
     * fallback fraction (probe's scalar / vector loop). B is packed with
     * 16-wide vector loads and stores: its bytes come from the level the
     * operands live in (each chunk's first touch: nothing else overlaps it,
     * the micro-kernels wait for the panel) and go to the private cache. */
    double pack_us = w->pack_a * 2.0 / scalar + w->pack_b * b_bytes / bw +
                     w->pack_b * KW_CPU_PANEL_BYTES / pack_bw;
    /* In place with B's rows a page or more apart (a GEMM's weights: ldb =
     * N), each k step of a strip loads its B row from a new page, which the
     * hardware prefetchers do not run ahead into (KW_CPU_PAGE_BYTES), so
     * the strips' B loads are not hidden under the FMAs as the packed
     * panel's contiguous stream is: their bytes are costed in series, at
     * the first data cache's per-core streaming rate (<cpu l1_gb_s>; the
     * private cache's figure when absent). Rows closer than a page
     * (attention's V, d = 64) stream like a panel and cost nothing here.
     * Measured (README, "Model against measurement"): the private cache's
     * rate instead charged the in-place GEMMs twice their measured
     * difference to the packed ones. */
    double l1_bw = (a->cpu_l1_bw_bytes_per_s > 0.0 ? a->cpu_l1_bw_bytes_per_s
                                                   : a->sram_bw_bytes_per_s) /
                   (a->cores > 0 ? a->cores : 1) / KW_CPU_US_PER_S;
    double inplace_us = l1_bw > 0.0 ? w->strided * b_bytes / l1_bw : 0.0;
    double one_core = 2.0 * w->vec_macs / vec + 2.0 * w->scalar_macs / scalar + pack_us +
                      inplace_us + extra_us;
    double bal = kw_cpu_balance(items, threads);
    k->matrix_us = 2.0 * w->vec_macs / vec / (threads * bal);
    k->compute_us = one_core / (threads * bal);
    k->memory_us = traffic / bw;
    k->dram_bytes = from_dram ? traffic : footprint;
    k->dram_us = from_dram ? k->memory_us : 0.0;
    k->shared_bytes = from_dram ? 0.0 : traffic;
    k->shared_us = from_dram ? 0.0 : k->memory_us;
    double exec = w->vec_macs + w->scalar_macs;
    k->exec_flops = 2.0 * exec;
    k->pad_efficiency = exec > 0.0 ? fmin(1.0, useful_macs / exec) : 1.0;
    k->wave_efficiency = bal;
    k->tiles = items;
}

void kw_cost_cpu_mm(kw_kernel *k, const kw_accel *a, const kw_tiling *t, const kw_cpu_mm *mm,
                    int threads)
{
    double tm = fmax(1.0, t->tile_m), tn = fmax(1.0, t->tile_n), tk = fmax(1.0, t->tile_k);
    double s = mm->product ? 1.0 : fmax(1.0, fmin((double)t->split_k, mm->k));
    double kp = ceil(mm->k / s);                 /* K per split (the last may be shorter) */
    int packed = t->double_buffer != 0;
    kw_cpu_work w = {.ldb_bytes = mm->n * mm->b_bytes}; /* B is k x n, row-major */
    kw_cpu_blocked(&w, a, packed, mm->count, mm->m, mm->n, mm->k, tm, tn);
    double nm = ceil(mm->m / tm), nn = ceil(mm->n / tn);
    double chunks = s * ceil(kp / fmin(tk, kp)); /* K chunks per tile, over the splits */
    /* Operands: each tile reads its A rows and B columns over K once; C is
     * loaded and stored around every chunk, from the tile's accumulator
     * (mnk, nmk: the C tile, private cache) or from the output in memory
     * (kmn: C accumulated across K panels). */
    double ab = (mm->m * mm->k * nn * mm->a_bytes + mm->k * mm->n * nm * mm->b_bytes) * mm->count;
    double c_rw = KW_CPU_C_RW * mm->m * mm->n * KW_CPU_ACC_BYTES * chunks * mm->count;
    double out = mm->m * mm->n * (s > 1.0 ? s * KW_CPU_ACC_BYTES : mm->c_bytes) * mm->count;
    double foot = (mm->m * mm->k * mm->a_bytes + mm->k * mm->n * mm->b_bytes) * mm->count;
    int dram;
    double c_us = 0.0;
    if (t->loop == KW_LOOP_KMN) {
        double ws = mm->m * mm->n * KW_CPU_ACC_BYTES * s * mm->count;
        c_us = c_rw / kw_cpu_level_bw(a, ws, threads, &dram);
    } else {
        c_us = c_rw / kw_cpu_level_bw(a, tm * tn * KW_CPU_ACC_BYTES, threads, &dram);
    }
    double items = mm->product ? mm->count * nm : s * nm * nn * mm->count;
    kw_cpu_close(k, a, &w, mm->prec, packed, mm->b_bytes, 0.0, ab + out, foot + out,
                 items, mm->m * mm->n * mm->k * mm->count, threads);
    /* the C traffic overlaps like the operands': memory is the slower stream */
    k->memory_us = fmax(k->memory_us, c_us);
}

void kw_cost_cpu_flash(kw_kernel *k, const kw_accel *a, const kw_tiling *t, double inst,
                       double mq, double lk, double d, int causal, double in_bytes, kw_prec prec,
                       int threads)
{
    double br = fmax(1.0, t->tile_m), bc = fmax(1.0, t->tile_n), tn = fmax(1.0, t->tile_n);
    int packed = t->double_buffer != 0;
    kw_cpu_work w = {0};
    double nq = ceil(mq / br), keys = 0.0, exps = 0.0, rescale = 0.0, useful = 0.0;
    /* One query block at a time (nq <= mq, a few dozen): its rows, the keys
     * its last row may see, their full and partial KV blocks. */
    for (double q = 0.0; q < nq; q += 1.0) {
        double mi = fmin(br, mq - q * br);
        double kend = causal ? fmin(lk, lk - mq + q * br + mi) : lk;
        double full = floor(kend / bc), tail = kend - full * bc;
        /* QK^T of a block: mi x bc over d (one tile: tile_m >= mi, tile_n = bc);
         * PV: mi x d over bc, d blocked by tile_n; P is fp32 scratch. */
        w.ldb_bytes = lk * in_bytes; /* K^T: d rows of all lk keys (kw_kern.c) */
        kw_cpu_blocked(&w, a, packed, inst * full, mi, bc, d, br, bc);
        kw_cpu_blocked(&w, a, packed, inst * (tail > 0.0), mi, tail, d, br, bc);
        w.ldb_bytes = d * in_bytes; /* V: lk rows of d */
        kw_cpu_blocked(&w, a, packed, inst * full, mi, d, bc, br, tn);
        kw_cpu_blocked(&w, a, packed, inst * (tail > 0.0), mi, d, tail, br, tn);
        double blocks = full + (tail > 0.0);
        keys += kend;
        exps += inst * mi * (kend + blocks);
        rescale += inst * blocks * mi * d;
        useful += inst * 2.0 * mi * kend * d;
    }
    /* The online softmax as kw_kern.c's flash loop runs it: one exp per
     * score, and per KV block and query row one more (the rescale factor,
     * expf(m_old - m_new)); per KV block the O rows rescaled (one scalar
     * multiply per element) and PV's partial tile added into O (kw_mm_serial
     * accumulating: o += alpha a, one scalar MAC per element), both scalar
     * loops over mi x d. Measured (README, "Model against measurement on
     * this host", 2026-12-05): without the last two terms flash mappings
     * measured 1.16x the model relative to the rest of prefill attention,
     * unfused 0.91x; with them, on 200 other mappings, Spearman 0.944 ->
     * 0.956 (prefill), 0.926 -> 0.936 (decode). */
    double extra = kw_cost_cpu_exp_us(a, exps, 1) + 3.0 * rescale / kw_cpu_scalar_rate(a);
    double traffic = inst * (2.0 * keys * d * in_bytes + 2.0 * mq * d * in_bytes);
    double foot = inst * (2.0 * lk * d + 2.0 * mq * d) * in_bytes;
    kw_cpu_close(k, a, &w, prec, packed, in_bytes, extra, traffic, foot, inst * nq,
                 useful, threads);
}

double kw_cost_cpu_exp_us(const kw_accel *a, double exps, int threads)
{
    if (!(a->cpu_exp_per_s > 0.0) || exps <= 0.0)
        return 0.0;
    return exps / (a->cpu_exp_per_s * (threads > 0 ? threads : 1)) * KW_CPU_US_PER_S;
}
