/* kw_load_cpu.c - <cpu> of an accelerator file (spaces/accelerator.xsd):
 * marks the file as a CPU and gives the figures the CPU rules need
 * beyond the common format (kw_cost_cpu.h). Kept apart from kw_load.c so the
 * GPU loader is untouched by the CPU's rules.
 */
#include "kw_load_cpu.h"

#define KW_CPU_MEGA 1e6 /* exp_mops_per_core is in millions per second */
#define KW_CPU_GIGA 1e9 /* l1_gb_s is in GB/s */

int kw_load_cpu_elem(kw_accel *a, const xmlNode *n, const char *file, kw_xml_problems *p)
{
    if (!kw_xml_is(n, "cpu"))
        return 0;
    a->cpu = 1;
    a->cpu_scalar_edges = 1; /* the schema's default */
    int edges;
    if (kw_xml_attr_bool(&edges, n, "scalar_edges", file, p) == 1)
        a->cpu_scalar_edges = edges;
    double mops;
    if (kw_xml_attr_double(&mops, n, "exp_mops_per_core", file, p) == 1) {
        if (!(mops > 0.0))
            kw_xml_problem(p, file, kw_xml_line(n),
                           "attribute 'exp_mops_per_core' must be positive, not %g", mops);
        else
            a->cpu_exp_per_s = mops * KW_CPU_MEGA;
    }
    double l1;
    if (kw_xml_attr_double(&l1, n, "l1_gb_s", file, p) == 1) {
        if (!(l1 > 0.0))
            kw_xml_problem(p, file, kw_xml_line(n), "attribute 'l1_gb_s' must be positive, not %g", l1);
        else
            a->cpu_l1_bw_bytes_per_s = l1 * KW_CPU_GIGA;
    }
    return 1;
}
