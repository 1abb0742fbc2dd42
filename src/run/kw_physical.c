/* kw_physical.c - the physical envelope of accelerator figures (see
 * kw_physical.h).
 *
 * Design choice: one table, generous bounds. The envelope spans everything
 * from a microcontroller NPU to beyond the largest shipping chip, so no real
 * or planned accelerator is refused, while values that can only be typos or
 * unit slips (1e-23 GB/s, a 1e12 GHz clock) are. Each bound names the real
 * figure it is set against. The schema keeps the syntax (decimals, signs);
 * this table keeps the magnitudes; kw_load.c keeps the relations (idle below
 * TDP, throttle steps ascending).
 */
#include "kw_physical.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kw_num.h"

typedef struct kw_phys_range {
    const char *elem, *attr;
    double lo, hi;
    int zero_ok; /* 0 is a legal "none / unknown" (an unsupported precision's peak) */
    const char *why;
} kw_phys_range;

/* Reference figures: NVIDIA H100 SXM5 datasheet (989 dense bf16 TFLOP/s,
 * 3,350 GB/s HBM3, 700 W); NVIDIA B200 (8 TB/s); Cerebras WSE-3 (125 PFLOP/s,
 * 21 PB/s on-chip, ~23 kW system); Intel Core i9-14900KS (6.2 GHz, the fastest
 * shipping clock); microcontroller NPUs (Arm Ethos-U55: tens of MHz to 1 GHz,
 * mW power). */
static const kw_phys_range kw_phys[] = {
    {"compute", "clock_ghz", 0.01, 10.0, 0, "10 MHz microcontrollers to the 6.2 GHz fastest shipping clock"},
    {"peak", "tflops", 1e-6, 1e6, 1, "1 MFLOP/s to 1 EFLOP/s; H100 989, WSE-3 125,000 TFLOP/s"},
    {"memory", "dram_bw_gb_s", 0.01, 1e5, 0, "10 MB/s to 100 TB/s; H100 3,350 GB/s, B200 8,000 GB/s"},
    {"memory", "sram_bw_gb_s", 0.01, 1e8, 1, "up to 100 PB/s; WSE-3 21 PB/s on chip"},
    {"memory", "dram_latency_us", 0.0, 100.0, 0, "DRAM first-byte latency is 0.1-1 us"},
    {"launch", "eager_us", 0.0, 1e5, 0, "a kernel launch costs microseconds, never 100 ms"},
    {"launch", "graph_fixed_us", 0.0, 1e5, 0, "a graph replay costs microseconds, never 100 ms"},
    {"launch", "graph_node_us", 0.0, 1e5, 0, "a graph node costs microseconds, never 100 ms"},
    {"power", "idle_w", 0.0, 1e5, 0, "up to 100 kW; WSE-3 systems draw ~23 kW"},
    {"power", "tdp_w", 1e-3, 1e5, 0, "1 mW microcontrollers to 100 kW; H100 700 W"},
    {"power", "pj_per_flop", 1e-3, 1e4, 0, "a FLOP costs ~0.1-10 pJ in current CMOS"},
    {"power", "pj_per_dram_byte", 1e-3, 1e5, 0, "a DRAM byte costs ~10-100 pJ"},
    {"thermal", "r_c_per_w", 1e-3, 1e4, 0, "junction-to-ambient resistance, liquid cold plate to sealed fanless box"},
    {"thermal", "tau_s", 1e-4, 1e5, 0, "thermal time constants of a die to a whole enclosure"},
};

void kw_physical_check_accel(const xmlNode *root, const char *file, kw_xml_problems *p)
{
    for (xmlNode *n = kw_xml_elem(root ? root->children : NULL); n; n = kw_xml_elem(n->next)) {
        for (size_t i = 0; i < sizeof kw_phys / sizeof kw_phys[0]; i++) {
            const kw_phys_range *r = &kw_phys[i];
            if (!kw_xml_is(n, r->elem))
                continue;
            xmlChar *v = xmlGetNoNsProp(n, BAD_CAST r->attr);
            if (!v)
                continue;
            double d = 0.0;
            int num = kw_num_double(&d, (const char *)v) == 0;
            if (num && !(r->zero_ok && d == 0.0) && !(d >= r->lo && d <= r->hi))
                kw_xml_problem(p, file, kw_xml_line(n), "attribute '%s' of <%s> is %.3g, outside "
                               "the physical range [%g, %g] (%s)", r->attr, r->elem, d, r->lo,
                               r->hi, r->why);
            xmlFree(v);
        }
    }
}
