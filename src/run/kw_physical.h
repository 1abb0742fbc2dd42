/* kw_physical.h - the physical envelope of accelerator figures: a schema-valid
 * number far outside anything a chip can be (dram_bw_gb_s="1e-23") is refused
 * at load as FILE:LINE, not carried into a model whose results then overflow
 * the formats they are written in. */
#ifndef KW_PHYSICAL_H
#define KW_PHYSICAL_H

#include <libxml/tree.h>

#include "kw_xml.h"

/* Check every attribute of the table in kw_physical.c on the accelerator's
 * elements (children of root); each value outside its range is a problem
 * "FILE:LINE: attribute 'A' of <E> is V, outside the physical range [LO, HI]
 * (why)". Values that are not numbers are left to the loader's own checks. */
void kw_physical_check_accel(const xmlNode *root, const char *file, kw_xml_problems *p);

#endif
