/* kw_probe.c - measure this host (kw_probe.h) and write it as an accelerator.
 *
 * Design choice: every rate is the best of several timed repetitions, each
 * long enough to dwarf the clock's resolution: "achievable" means what the
 * host reaches when nothing else gets in the way, and on a shared machine the
 * best repetition is the one least disturbed (the median would report the
 * neighbours' load). The figures a CPU has no measurement for (power,
 * thermal) are written as [U] estimates and say so.
 *
 * How each figure is measured (kw_hostbench.c has the loops):
 *   peak fp32     12 independent 16-lane FMA chains per thread, all CPUs;
 *   peak bf16     the same with the multiplier loaded as bf16 and converted,
 *                 as the worker's kernels compute bf16 (fp32 FMAs);
 *   bandwidth     y = s x + y over per-thread buffers of half a cache
 *                 instance (shared instances split between their CPUs), and
 *                 of 4x the last level for DRAM; STREAM's convention of 12
 *                 bytes per element (McCalpin, STREAM FAQ: write-allocate
 *                 traffic not counted);
 *   DRAM latency  a dependent pointer chase over a random cyclic permutation
 *                 (Sattolo's shuffle, GSL's generator) of 4x the last level;
 *   launch        the median wake-up of the whole thread team the worker
 *                 runs its kernels on (kw_pool_run of an empty job);
 *   elementwise   the worker's own unfused epilogue pass (bias + GELU) over a
 *                 DRAM-sized buffer, as a fraction of the DRAM bandwidth;
 *   fallback      the FMA loop one lane wide against the vector loop: what
 *                 code that is not vectorised (a ragged tile edge) reaches.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>
#include <libxml/tree.h>

#include "kw_error.h"
#include "kw_probe.h"
#include "kw_hostbench.h"
#include "kw_kern.h"
#include "kw_pool.h"

#define KW_PROBE_SYSFS "/sys/devices/system/cpu"
#define KW_PROBE_REPS 5
#define KW_PROBE_REPS_QUICK 2
#define KW_PROBE_TARGET_S 0.05        /* each timed repetition at least this long */
#define KW_PROBE_TARGET_QUICK_S 0.005
#define KW_PROBE_WAKES 400            /* team wake-ups behind the median */
#define KW_PROBE_WAKES_QUICK 40
#define KW_PROBE_DRAM_FACTOR 4        /* DRAM working set: 4x the last cache level */
#define KW_PROBE_DRAM_FACTOR_QUICK 2  /* --quick: 2x (rougher, half the page faults) */
#define KW_PROBE_CHASE_STEPS 2000000L
#define KW_PROBE_CHASE_STEPS_QUICK 100000L
#define KW_PROBE_EXP_N 4096           /* exp arguments per pass: 16 KiB, L1-resident */
#define KW_PROBE_EW_BIAS 1024         /* bias length of the elementwise pass (one GEMM row) */
#define KW_STREAM_BYTES_PER_ELEM 12.0 /* y = s x + y: read x, read y, write y (4 bytes each) */
#define KW_EW_BYTES_PER_ELEM 8.0      /* read x, write x */
#define KW_GB 1e9
#define KW_TERA 1e12
/* Power and thermal: a CPU host has no figure probe can measure (RAPL is not
 * readable in most VMs). [U] estimates for a server core: 10 W per core at
 * full load, idle a third of it, 0.1 nJ per fp32 FLOP (about 10 W at 100
 * GFLOP/s), 20 pJ per DRAM byte (DDR5 order of magnitude), 0.5 C/W and 30 s
 * to a heat sink at 25 C, shutdown 100 C, no throttle steps (the host's
 * governor is outside the model). */
#define KW_PROBE_W_PER_CORE 10.0
#define KW_PROBE_IDLE_SHARE (1.0 / 3.0)
#define KW_PROBE_PJ_PER_FLOP 100.0
#define KW_PROBE_PJ_PER_BYTE 20.0
#define KW_PROBE_AMBIENT_C 25.0
#define KW_PROBE_R_C_PER_W 0.5
#define KW_PROBE_TAU_S 30.0
#define KW_PROBE_SHUTDOWN_C 100.0

static double kw_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int kw_read_line(char *buf, size_t size, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *ok = fgets(buf, (int)size, f);
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* "48K", "1024K", "32M", "512" -> bytes; 0 on a bad string. */
static uint64_t kw_size_bytes(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return 0;
    if (*end == 'K')
        v <<= 10, end++;
    else if (*end == 'M')
        v <<= 20, end++;
    else if (*end == 'G')
        v <<= 30, end++;
    return *end == '\0' ? (uint64_t)v : 0;
}

/* CPUs in a list such as "0", "0-1", "0,2-3"; 0 on a bad list. */
static int kw_cpu_count(const char *s)
{
    int n = 0;
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b;
        if (end == s || a < 0)
            return 0;
        b = a;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
            if (end == s || b < a)
                return 0;
        }
        n += (int)(b - a + 1);
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return 0;
    }
    return n;
}

/* Read the cache description only (no timing): 0, or KW_EINPUT/KW_EIO with
 * the sysfs path in the message. */
static int kw_probe_caches(kw_probe_result *out, const char *sysfs_cpu)
{
    const char *root = sysfs_cpu ? sysfs_cpu : KW_PROBE_SYSFS;
    char path[1024], buf[256];
    out->n_caches = 0;
    out->line_bytes = 0;
    for (int i = 0; i < 16 && out->n_caches < KW_PROBE_CACHES; i++) {
        snprintf(path, sizeof path, "%s/cpu0/cache/index%d/level", root, i);
        if (kw_read_line(buf, sizeof buf, path) != 0)
            break;
        kw_probe_cache c = {0};
        c.level = atoi(buf);
        snprintf(path, sizeof path, "%s/cpu0/cache/index%d/type", root, i);
        if (kw_read_line(c.type, sizeof c.type, path) != 0)
            return kw_error_set(KW_EIO, "%s: cannot read the cache type", path);
        if (strcmp(c.type, "Instruction") == 0)
            continue;
        snprintf(path, sizeof path, "%s/cpu0/cache/index%d/size", root, i);
        if (kw_read_line(buf, sizeof buf, path) != 0 || (c.size_bytes = kw_size_bytes(buf)) == 0)
            return kw_error_set(KW_EIO, "%s: cannot read a cache size", path);
        snprintf(path, sizeof path, "%s/cpu0/cache/index%d/shared_cpu_list", root, i);
        if (kw_read_line(buf, sizeof buf, path) != 0 || (c.shared_cpus = kw_cpu_count(buf)) == 0)
            return kw_error_set(KW_EIO, "%s: cannot read the CPUs sharing the cache", path);
        snprintf(path, sizeof path, "%s/cpu0/cache/index%d/coherency_line_size", root, i);
        if (kw_read_line(buf, sizeof buf, path) == 0 && atoi(buf) > 0)
            out->line_bytes = atoi(buf);
        if (c.level < 1)
            return kw_error_set(KW_EIO, "%s/cpu0/cache/index%d/level: not a cache level", root, i);
        out->cache[out->n_caches++] = c;
    }
    if (out->n_caches == 0)
        return kw_error_set(KW_EIO, "%s/cpu0/cache: no data cache described", root);
    /* ascending level (sysfs lists them so, but do not rely on it) */
    for (int i = 1; i < out->n_caches; i++)
        for (int j = i; j > 0 && out->cache[j].level < out->cache[j - 1].level; j--) {
            kw_probe_cache t = out->cache[j];
            out->cache[j] = out->cache[j - 1];
            out->cache[j - 1] = t;
        }
    /* SRAM per unit: level 2 when there is one (per core on current x86 and
     * Arm servers), else the largest level. */
    out->sram_level = out->n_caches - 1;
    for (int i = 0; i < out->n_caches; i++)
        if (out->cache[i].level == 2)
            out->sram_level = i;
    if (out->line_bytes == 0)
        out->line_bytes = 64;
    return 0;
}

static void kw_cpu_model(kw_probe_result *r, const char *cpuinfo)
{
    snprintf(r->model, sizeof r->model, "unknown CPU");
    FILE *f = fopen(cpuinfo ? cpuinfo : "/proc/cpuinfo", "r");
    char line[512];
    double mhz = 0.0;
    while (f && fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':');
        if (!c)
            continue;
        if (strncmp(line, "model name", 10) == 0 && strcmp(r->model, "unknown CPU") == 0) {
            c += 1 + (c[1] == ' ');
            c[strcspn(c, "\n")] = '\0';
            snprintf(r->model, sizeof r->model, "%s", c);
        } else if (strncmp(line, "cpu MHz", 7) == 0 && mhz == 0.0) {
            mhz = atof(c + 1);
        }
    }
    if (f)
        fclose(f);
    r->clock_ghz = mhz / 1e3;
}

/* ---- timed jobs on the pool ---- */

typedef struct kw_pjob {
    int kind;              /* 0 fma vec, 1 fma bf16, 2 fma scalar, 3 stream, 4 epilogue, 5 nothing */
    long iters;
    float **x, **y;        /* per-thread buffers */
    size_t n;              /* floats per thread buffer */
    const float *bias;
    double sink[64];
} kw_pjob;

static void kw_pjob_fn(void *arg, int tid, int n)
{
    (void)n;
    kw_pjob *j = arg;
    double s = 0.0;
    switch (j->kind) {
    case 0: s = kw_hostbench_fma(j->iters, 0, 0); break;
    case 1: s = kw_hostbench_fma(j->iters, 1, 0); break;
    case 2: s = kw_hostbench_fma(j->iters, 0, 1); break;
    case 3:
        for (long i = 0; i < j->iters; i++)
            s += kw_hostbench_stream(j->y[tid], j->x[tid], j->n, 0.5f);
        break;
    case 4:
        for (long i = 0; i < j->iters; i++)
            s += kw_hostbench_epilogue(j->x[tid], j->n, j->bias, KW_PROBE_EW_BIAS);
        break;
    default: break;
    }
    j->sink[tid & 63] += s;
}

/* Best seconds per iteration of job j on all threads: iterations doubled
 * until one run lasts target_s, then the best of reps runs. */
static double kw_time_job(kw_pool *p, int threads, kw_pjob *j, double target_s, int reps)
{
    /* one untimed run first: the team's first wake-up and page faults */
    j->iters = 1;
    kw_pool_run(p, threads, kw_pjob_fn, j);
    double t;
    for (;;) {
        double t0 = kw_now_s();
        kw_pool_run(p, threads, kw_pjob_fn, j);
        t = kw_now_s() - t0;
        if (t >= target_s || j->iters > (1L << 40))
            break;
        j->iters *= 2;
    }
    double best = t;
    for (int r = 1; r < reps; r++) {
        double t0 = kw_now_s();
        kw_pool_run(p, threads, kw_pjob_fn, j);
        t = kw_now_s() - t0;
        best = t < best ? t : best;
    }
    return best / (double)j->iters;
}

static int kw_buffers(kw_pjob *j, int threads, size_t floats)
{
    j->x = calloc((size_t)threads, sizeof *j->x);
    j->y = calloc((size_t)threads, sizeof *j->y);
    if (!j->x || !j->y)
        return kw_error_set(KW_ENOMEM, "probe: out of memory");
    j->n = floats;
    for (int t = 0; t < threads; t++) {
        j->x[t] = malloc(floats * sizeof(float));
        j->y[t] = malloc(floats * sizeof(float));
        if (!j->x[t] || !j->y[t])
            return kw_error_set(KW_ENOMEM, "probe: cannot allocate %zu MiB", floats * 8 >> 20);
        for (size_t i = 0; i < floats; i++) {
            j->x[t][i] = (float)(i & 1023) / 1024.0f;
            j->y[t][i] = 0.0f;
        }
    }
    return 0;
}

static void kw_buffers_free(kw_pjob *j, int threads)
{
    for (int t = 0; j->x && t < threads; t++)
        free(j->x[t]);
    for (int t = 0; j->y && t < threads; t++)
        free(j->y[t]);
    free(j->x);
    free(j->y);
    j->x = j->y = NULL;
}

/* Streaming bandwidth with per-thread buffers of `bytes` (x and y together). */
static int kw_stream_bw(double *out_gb_s, kw_pool *p, int threads, uint64_t bytes, double target,
                        int reps)
{
    kw_pjob j = {.kind = 3};
    size_t floats = (size_t)(bytes / 8);
    if (floats < 64)
        floats = 64;
    int rc = kw_buffers(&j, threads, floats);
    if (rc == 0) {
        double s = kw_time_job(p, threads, &j, target, reps);
        *out_gb_s = KW_STREAM_BYTES_PER_ELEM * floats * threads / s / KW_GB;
    }
    kw_buffers_free(&j, threads);
    return rc;
}

static int kw_chase_latency(double *out_us, uint64_t bytes, long steps)
{
    size_t n = (size_t)(bytes / sizeof(uint32_t));
    uint32_t *next = malloc(n * sizeof *next);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!next || !r) {
        free(next);
        gsl_rng_free(r);
        return kw_error_set(KW_ENOMEM, "probe: cannot allocate the pointer chase");
    }
    gsl_rng_set(r, 1);
    /* Sattolo's algorithm: a uniformly random single cycle through all n slots. */
    for (size_t i = 0; i < n; i++)
        next[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t k = (size_t)gsl_rng_uniform_int(r, (unsigned long)i);
        uint32_t t = next[i];
        next[i] = next[k];
        next[k] = t;
    }
    kw_hostbench_chase(next, steps / 10); /* warm the TLB and the page tables */
    double t0 = kw_now_s();
    volatile size_t sink = kw_hostbench_chase(next, steps);
    (void)sink;
    *out_us = (kw_now_s() - t0) / (double)steps * 1e6;
    free(next);
    gsl_rng_free(r);
    return 0;
}

/* Scalar exp on the calling thread over an L1-resident array: the best of
 * `reps` timed passes, each repeated until it lasts `target` seconds. */
static int kw_exp_rate(double *out_per_s, double target, int reps)
{
    float *x = malloc(2 * KW_PROBE_EXP_N * sizeof *x);
    if (!x)
        return kw_error_set(KW_ENOMEM, "probe: out of memory");
    float *y = x + KW_PROBE_EXP_N;
    for (int i = 0; i < KW_PROBE_EXP_N; i++)
        x[i] = -8.0f * (float)i / KW_PROBE_EXP_N; /* softmax arguments: x - max <= 0 */
    double best = 0.0;
    volatile double sink = 0.0;
    for (int r = 0; r < reps; r++) {
        long passes = 0;
        double t0 = kw_now_s(), t;
        do {
            sink += kw_hostbench_exp(y, x, KW_PROBE_EXP_N);
            passes++;
        } while ((t = kw_now_s() - t0) < target);
        double rate = (double)passes * KW_PROBE_EXP_N / t;
        best = rate > best ? rate : best;
    }
    (void)sink;
    free(x);
    *out_per_s = best;
    return 0;
}

static int kw_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int kw_probe_measure(kw_probe_result *out, const kw_probe_opts *o)
{
    memset(out, 0, sizeof *out);
    int rc = kw_probe_caches(out, o->sysfs_cpu);
    if (rc != 0)
        return rc;
    snprintf(out->name, sizeof out->name, "%s", o->name ? o->name : "cpu_host");
    kw_cpu_model(out, o->cpuinfo);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    out->cpus = ncpu > 0 && ncpu <= 4096 ? (int)ncpu : 1;
    char buf[64], path[1024];
    snprintf(path, sizeof path, "%s/cpu0/cpufreq/cpuinfo_max_freq",
             o->sysfs_cpu ? o->sysfs_cpu : KW_PROBE_SYSFS);
    if (kw_read_line(buf, sizeof buf, path) == 0 && atof(buf) > 0.0)
        out->clock_ghz = atof(buf) / 1e6; /* kHz */
    if (!(out->clock_ghz > 0.0))
        out->clock_ghz = 1.0; /* unknown: the model only reports it */
    int threads = out->cpus, reps = o->quick ? KW_PROBE_REPS_QUICK : KW_PROBE_REPS;
    double target = o->quick ? KW_PROBE_TARGET_QUICK_S : KW_PROBE_TARGET_S;
    out->reps = reps;
    kw_pool *p = NULL;
    double *wakes = NULL;
    float *bias = NULL;
    kw_pjob j = {0};
    if ((rc = kw_pool_create(&p, threads)) != 0)
        goto done;

    j.kind = 0;
    out->fp32_flops = KW_HOSTBENCH_FMA_FLOPS_PER_ITER * threads / kw_time_job(p, threads, &j, target, reps);
    j.kind = 1;
    out->bf16_flops = KW_HOSTBENCH_FMA_FLOPS_PER_ITER * threads / kw_time_job(p, threads, &j, target, reps);
    j.kind = 2;
    out->scalar_flops =
        KW_HOSTBENCH_SCALAR_FLOPS_PER_ITER * threads / kw_time_job(p, threads, &j, target, reps);

    uint64_t llc = 0;
    for (int i = 0; i < out->n_caches; i++) {
        kw_probe_cache *c = &out->cache[i];
        /* half an instance per thread (a shared instance split between its CPUs) */
        uint64_t per_thread = c->size_bytes / 2 / (uint64_t)(c->shared_cpus < threads ? c->shared_cpus : threads);
        if ((rc = kw_stream_bw(&c->bw_gb_s, p, threads, per_thread, target, reps)) != 0)
            goto done;
        uint64_t total = c->size_bytes * (uint64_t)((threads + c->shared_cpus - 1) / c->shared_cpus);
        llc = total > llc ? total : llc;
    }
    uint64_t dram_bytes = llc * (o->quick ? KW_PROBE_DRAM_FACTOR_QUICK : KW_PROBE_DRAM_FACTOR);
    if ((rc = kw_stream_bw(&out->dram_bw_gb_s, p, threads, dram_bytes / threads, target, reps)) != 0)
        goto done;
    if ((rc = kw_chase_latency(&out->dram_latency_us, dram_bytes,
                               o->quick ? KW_PROBE_CHASE_STEPS_QUICK : KW_PROBE_CHASE_STEPS)) != 0)
        goto done;

    /* the elementwise pass over the same DRAM-sized working set */
    bias = malloc(KW_PROBE_EW_BIAS * sizeof *bias);
    if (!bias) {
        rc = kw_error_set(KW_ENOMEM, "probe: out of memory");
        goto done;
    }
    for (int i = 0; i < KW_PROBE_EW_BIAS; i++)
        bias[i] = (float)(i % 7) / 14.0f - 0.25f;
    kw_pjob e = {.kind = 4, .bias = bias};
    if ((rc = kw_buffers(&e, threads, (size_t)(dram_bytes / threads / 8))) == 0) {
        double s = kw_time_job(p, threads, &e, target, reps);
        out->elementwise_gb_s = KW_EW_BYTES_PER_ELEM * e.n * threads / s / KW_GB;
    }
    kw_buffers_free(&e, threads);
    if (rc != 0)
        goto done;

    if ((rc = kw_exp_rate(&out->exp_per_s_core, target, reps)) != 0)
        goto done;

    int nw = o->quick ? KW_PROBE_WAKES_QUICK : KW_PROBE_WAKES;
    wakes = malloc(sizeof(double) * nw);
    if (!wakes) {
        rc = kw_error_set(KW_ENOMEM, "probe: out of memory");
        goto done;
    }
    j.kind = 5;
    for (int i = 0; i < nw; i++) {
        double t0 = kw_now_s();
        kw_pool_run(p, threads, kw_pjob_fn, &j);
        wakes[i] = (kw_now_s() - t0) * 1e6;
    }
    qsort(wakes, (size_t)nw, sizeof *wakes, kw_cmp_double);
    out->wake_us = wakes[nw / 2];
done:
    free(wakes);
    free(bias);
    kw_pool_free(p);
    return rc;
}

/* ---- the accelerator format: the one place that fills it ---- */

static xmlNodePtr kw_el(xmlNodePtr parent, const char *name, const char *source)
{
    xmlNodePtr n = xmlNewChild(parent, NULL, BAD_CAST name, NULL);
    if (n && source)
        xmlNewProp(n, BAD_CAST "source", BAD_CAST source);
    return n;
}

/* Decimal without exponent (the schemas' xs:decimal); positive figures never print as 0. */
static void kw_attr_num(xmlNodePtr n, const char *name, double v, int decimals)
{
    char buf[64];
    double floor_v = pow(10.0, -decimals);
    if (v > 0.0 && v < floor_v)
        v = floor_v;
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
    xmlNewProp(n, BAD_CAST name, BAD_CAST buf);
}

static void kw_attr_int(xmlNodePtr n, const char *name, long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    xmlNewProp(n, BAD_CAST name, BAD_CAST buf);
}

/* An XML comment may not contain "--" (XML 1.0 section 2.5): a CPU model
 * string could. */
static xmlNodePtr kw_comment_node(xmlDocPtr doc, const char *text)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *p = buf; *p; p++)
        if (p[0] == '-' && p[1] == '-')
            p[1] = ' ';
    return xmlNewDocComment(doc, BAD_CAST buf);
}

static void kw_comment(xmlNodePtr parent, const char *text)
{
    xmlAddChild(parent, kw_comment_node(parent->doc, text));
}

int kw_probe_accel_doc(xmlDocPtr *out, const kw_probe_result *r)
{
    *out = NULL;
    if (r->n_caches < 1 || r->sram_level < 0 || r->sram_level >= r->n_caches)
        return kw_error_set(KW_EINPUT, "probe: no cache level to describe");
    xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
    if (!doc)
        return kw_error_set(KW_ENOMEM, "probe: out of memory");
    char text[1024];
    snprintf(text, sizeof text,
             " %s.xml - " KW_PROBE_MARK ": %s, %d CPUs. Every figure\n"
             "     is [S] measured here (kw_probe.c says how) or [U] an estimate probe cannot\n"
             "     measure. Rates are the best of %d timed repetitions. ",
             r->name, r->model, r->cpus, r->reps);
    xmlAddChild((xmlNodePtr)doc, kw_comment_node(doc, text));
    xmlNodePtr root = xmlNewDocNode(doc, NULL, BAD_CAST "accelerator", NULL);
    xmlDocSetRootElement(doc, root);
    xmlNewProp(root, BAD_CAST "name", BAD_CAST r->name);
    snprintf(text, sizeof text,
             "knobwise probe on %s (%d CPUs): FMA loops, streaming bandwidth per cache level "
             "(sysfs sizes), pointer chase, thread-team wake-up; power and thermal [U]",
             r->model, r->cpus);
    /* text, not markup: a model name holding "&" or "<" is escaped, not parsed */
    xmlNewTextChild(root, NULL, BAD_CAST "source", BAD_CAST text);

    /* one scheduling core per CPU, one compute unit each */
    xmlNodePtr n = kw_el(root, "compute", "online CPUs [S sysconf]; clock [S cpuinfo]");
    kw_attr_int(n, "cores", r->cpus);
    kw_attr_int(n, "units_per_core", 1);
    kw_attr_num(n, "clock_ghz", r->clock_ghz, 3);
    xmlNewProp(n, BAD_CAST "sparsity_2_4", BAD_CAST "false");
    n = kw_el(root, "peak", "[S] 12-chain 16-lane FMA loop on every CPU");
    xmlNewProp(n, BAD_CAST "precision", BAD_CAST "fp32");
    kw_attr_num(n, "tflops", r->fp32_flops / KW_TERA, 6);
    n = kw_el(root, "peak", "[S] the same loop loading bf16 and converting (the worker's bf16 path)");
    xmlNewProp(n, BAD_CAST "precision", BAD_CAST "bf16");
    kw_attr_num(n, "tflops", r->bf16_flops / KW_TERA, 6);

    /* Every level measured, as comments; the per-core SRAM goes to <memory>
     * and the shared levels to <storage> below. */
    for (int i = 0; i < r->n_caches; i++) {
        const kw_probe_cache *c = &r->cache[i];
        snprintf(text, sizeof text, " L%d %s: %llu KiB per instance, shared by %d CPUs; streaming "
                 "%.1f GB/s on all CPUs [S] ", c->level, c->type,
                 (unsigned long long)(c->size_bytes >> 10), c->shared_cpus, c->bw_gb_s);
        kw_comment(root, text);
    }
    const kw_probe_cache *sram = &r->cache[r->sram_level];
    snprintf(text, sizeof text,
             "L%d per core as SRAM per unit [S sysfs]; its streaming bandwidth [S]; DRAM streaming "
             "at %dx the last level [S]; line size [S sysfs]; dependent-load latency [S]",
             sram->level, KW_PROBE_DRAM_FACTOR);
    n = kw_el(root, "memory", text);
    kw_attr_int(n, "sram_kib_per_unit", (long)(sram->size_bytes >> 10));
    kw_attr_num(n, "sram_bw_gb_s", sram->bw_gb_s, 1);
    kw_attr_num(n, "dram_bw_gb_s", r->dram_bw_gb_s, 1);
    kw_attr_int(n, "dram_burst_bytes", r->line_bytes);
    kw_attr_num(n, "dram_latency_us", r->dram_latency_us, 4);

    n = kw_el(root, "array", "the worker's register micro-tile, 4 x 32 (src/worker/kw_kern.h)");
    kw_attr_int(n, "m", KW_KERN_MR);
    kw_attr_int(n, "n", KW_KERN_NR);
    kw_attr_int(n, "k", 1);

    /* A CPU has no launch queue and no graphs: each kernel pays a wake-up of
     * the thread team, eager or "graph" alike. */
    n = kw_el(root, "launch", "[S] median wake-up of the worker's thread team; no graphs on a CPU");
    kw_attr_num(n, "eager_us", r->wake_us, 3);
    kw_attr_num(n, "graph_fixed_us", 0.0, 3);
    kw_attr_num(n, "graph_node_us", r->wake_us, 3);

    double fb = r->fp32_flops > 0.0 ? r->scalar_flops / r->fp32_flops : 1.0;
    double ew = r->dram_bw_gb_s > 0.0 ? r->elementwise_gb_s / r->dram_bw_gb_s : 1.0;
    fb = fb > 1.0 ? 1.0 : fb;
    ew = ew > 1.0 ? 1.0 : ew;
    snprintf(text, sizeof text,
             "[S] fallback: scalar / vector FMA loop; elementwise: the worker's bias+GELU pass "
             "%.1f GB/s over DRAM streaming", r->elementwise_gb_s);
    n = kw_el(root, "efficiency", text);
    kw_attr_num(n, "fallback", fb, 4);
    kw_attr_num(n, "elementwise", ew, 4);

    double tdp = KW_PROBE_W_PER_CORE * r->cpus;
    n = kw_el(root, "power", "[U] not measurable by probe: 10 W per core, idle a third, "
                             "100 pJ/FLOP, 20 pJ/DRAM byte");
    kw_attr_num(n, "idle_w", tdp * KW_PROBE_IDLE_SHARE, 2);
    kw_attr_num(n, "tdp_w", tdp, 2);
    kw_attr_num(n, "pj_per_flop", KW_PROBE_PJ_PER_FLOP, 1);
    kw_attr_num(n, "pj_per_dram_byte", KW_PROBE_PJ_PER_BYTE, 1);
    n = kw_el(root, "thermal", "[U] heat sink at 25 C, 0.5 C/W, 30 s; no throttle steps (the "
                               "host's governor is not modelled)");
    kw_attr_num(n, "ambient_c", KW_PROBE_AMBIENT_C, 1);
    kw_attr_num(n, "r_c_per_w", KW_PROBE_R_C_PER_W, 2);
    kw_attr_num(n, "tau_s", KW_PROBE_TAU_S, 1);
    kw_attr_num(n, "shutdown_c", KW_PROBE_SHUTDOWN_C, 1);

    /* The storage hierarchy (<storage>): every cache level shared
     * between CPUs is a shared level keeping operands (the model's reuse
     * across units), with its measured bandwidth. Per-core levels stay in
     * <memory> (L2 as SRAM per unit); no registers level: a CPU's C tile lives
     * in L1/L2, only the 4 x 32 micro-tile in registers, so the model's
     * accumulators-in-registers limit does not apply. */
    xmlNodePtr st = NULL;
    for (int i = 0; i < r->n_caches; i++) {
        const kw_probe_cache *c = &r->cache[i];
        if (c->shared_cpus < 2 || c->bw_gb_s <= 0.0)
            continue;
        if (!st)
            st = kw_el(root, "storage", "[S] sysfs cache sizes; streaming bandwidth measured by probe");
        xmlNodePtr l = xmlNewChild(st, NULL, BAD_CAST "level", NULL);
        char lname[16];
        snprintf(lname, sizeof lname, "L%d", c->level);
        xmlNewProp(l, BAD_CAST "name", BAD_CAST lname);
        xmlNewProp(l, BAD_CAST "kind", BAD_CAST "shared");
        int instances = (r->cpus + c->shared_cpus - 1) / c->shared_cpus;
        kw_attr_num(l, "mib", (double)c->size_bytes * instances / (1024.0 * 1024.0), 3);
        kw_attr_num(l, "gb_s", c->bw_gb_s, 1);
        xmlNewProp(l, BAD_CAST "holds", BAD_CAST "operands");
    }
    /* <cpu>: this file describes a CPU, costed by kw_cost_cpu.c's rules; the
     * worker reads operands in place with scalar code at ragged edges. */
    n = kw_el(root, "cpu", "[S] scalar expf on one core (the worker's softmax); scalar edges: "
                           "src/worker/kw_kern.c, in-place operands");
    xmlNewProp(n, BAD_CAST "scalar_edges", BAD_CAST "true");
    if (r->exp_per_s_core > 0.0)
        kw_attr_num(n, "exp_mops_per_core", r->exp_per_s_core / 1e6, 1);
    /* the first data cache's streaming figure (the in-place micro-kernel's
     * strided re-reads of B, kw_cost_cpu.c) */
    for (int i = 0; i < r->n_caches; i++)
        if (r->cache[i].level == 1 && r->cache[i].bw_gb_s > 0.0) {
            kw_attr_num(n, "l1_gb_s", r->cache[i].bw_gb_s, 1);
            break;
        }
    *out = doc;
    return 0;
}
