/* kw_probe.h - `knobwise probe`: measure this host and describe it as an
 * accelerator file, so the model and the shipped worker's measurements can be
 * compared on the same machine and the same kernels.
 *
 * Two steps kept apart: kw_probe_measure fills a plain result (sysfs cache
 * sizes, timed loops of src/worker/kw_hostbench.c); kw_probe_accel_doc is the
 * one place that turns a result into the accelerator format. When the format
 * grows (a storage hierarchy: one element per cache level), only that
 * function changes; every level is measured already. */
#ifndef KW_PROBE_H
#define KW_PROBE_H

#include <stdint.h>

#include <libxml/tree.h>

#define KW_PROBE_CACHES 8
/* What every file probe writes says in its opening comment: probe -o --force
 * replaces only a file that holds it (kw_runfolder_output). */
#define KW_PROBE_MARK "this host as knobwise probe measured it"

typedef struct kw_probe_cache {
    int level;              /* 1, 2, 3 ... */
    char type[16];          /* Data, Unified (instruction caches are skipped) */
    uint64_t size_bytes;    /* one instance */
    int shared_cpus;        /* CPUs sharing one instance */
    double bw_gb_s;         /* streaming bandwidth, all CPUs, working sets inside this level */
} kw_probe_cache;

typedef struct kw_probe_opts {
    const char *sysfs_cpu;  /* default /sys/devices/system/cpu (tests point elsewhere) */
    const char *cpuinfo;    /* default /proc/cpuinfo (tests point elsewhere) */
    int quick;              /* short timings (tests): the figures are rougher */
    const char *name;       /* accelerator name, default cpu_host */
} kw_probe_opts;

typedef struct kw_probe_result {
    char name[64];
    char model[128];        /* /proc/cpuinfo model name */
    int cpus;               /* online CPUs: the scheduling cores */
    double clock_ghz;       /* cpuinfo_max_freq, else /proc/cpuinfo MHz */
    double fp32_flops;      /* achievable, all CPUs */
    double bf16_flops;      /* bf16 storage converted on load, fp32 FMA (what the kernels do) */
    double scalar_flops;    /* the same loop one lane wide */
    int n_caches;
    kw_probe_cache cache[KW_PROBE_CACHES]; /* ascending level */
    int sram_level;         /* index into cache[]: the per-core level used as SRAM per unit */
    int line_bytes;         /* coherency_line_size */
    double dram_bw_gb_s;
    double dram_latency_us; /* dependent-load latency over a buffer far beyond the last level */
    double wake_us;         /* median wake-up of the whole thread team: the "launch" */
    double elementwise_gb_s; /* the worker's unfused epilogue pass, all CPUs, DRAM-sized */
    double exp_per_s_core;  /* scalar expf per second on one core (the softmax's exp) */
    int reps;               /* repetitions behind each best-of figure */
} kw_probe_result;

/* Measure everything. 0 or a negative KW_E* code. */
int kw_probe_measure(kw_probe_result *out, const kw_probe_opts *o);
/* The accelerator document for r (owned by the caller, xmlFreeDoc). */
int kw_probe_accel_doc(xmlDocPtr *out, const kw_probe_result *r);

#endif
