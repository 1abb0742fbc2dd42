/* kw_load_cpu.h - the accelerator file's <cpu> element: the file describes a
 * CPU, whose kernels stage 1 costs by the rules of kw_cost_cpu.h.
 * Called by kw_load.c's accelerator loader for each child element. */
#ifndef KW_LOAD_CPU_H
#define KW_LOAD_CPU_H

#include <libxml/tree.h>

#include "kw_model.h"
#include "kw_xml.h"

/* 1 when n is <cpu> (parsed into a; problems as "FILE:LINE: message"), 0 otherwise. */
int kw_load_cpu_elem(kw_accel *a, const xmlNode *n, const char *file, kw_xml_problems *p);

#endif
