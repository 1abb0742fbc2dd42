/* kw_load_hier.h - the accelerator file's storage hierarchy, achievable rates
 * and precision pairs: <storage>, <rates>, <accumulate>.
 * Called by kw_load.c's accelerator loader for each such element, then once
 * for the checks that need the whole file. Problems are "FILE:LINE: message". */
#ifndef KW_LOAD_HIER_H
#define KW_LOAD_HIER_H

#include <libxml/tree.h>

#include "kw_model.h"
#include "kw_xml.h"

/* 1 when n is one of the three elements (parsed into a), 0 otherwise. */
int kw_load_hier_elem(kw_accel *a, const xmlNode *n, const char *file, kw_xml_problems *p);
/* Whole-file checks: the sram level agrees with <memory>, pairs name supported inputs. */
void kw_load_hier_check(kw_accel *a, const char *file, long root_line, kw_xml_problems *p);

/* "registers", "sram", "shared" ("?" otherwise). Static storage. */
const char *kw_load_hier_level_kind_name(kw_level_kind k);

#endif
