/* kw_load_llm.h - the inputs of LLM serving at scale, from XML: an
 * accelerator's <interconnect> and device memory capacity, a workload's
 * <moe> operators (with a replayed routing trace) and <layer>s chaining
 * blocks. Called by kw_load.c's loaders; problems are "FILE:LINE: message". */
#ifndef KW_LOAD_LLM_H
#define KW_LOAD_LLM_H

#include <libxml/tree.h>

#include "kw_model.h"
#include "kw_xml.h"

/* Accelerator: 1 when n is <interconnect> (parsed into a), 0 otherwise. */
int kw_load_llm_accel_elem(kw_accel *a, const xmlNode *n, const char *file, kw_xml_problems *p);
/* Accelerator <memory>'s optional dram_gib (device memory capacity). */
void kw_load_llm_memory(kw_accel *a, const xmlNode *n, const char *file, kw_xml_problems *p);
/* Workload: the attributes of a <moe> operator (name and group are kw_load.c's);
 * routing="trace" reads the trace CSV (path relative to file) into b. */
void kw_load_llm_moe(kw_op *op, kw_block *b, const xmlNode *n, const char *file,
                     kw_xml_problems *p);
/* Workload <layer name= blocks="A B ..." layers=L>: a new block (appended to w)
 * whose operators are the named blocks' in order, each named BLOCK.OP so the
 * per-block results stay readable; tiling groups are the blocks' own. */
void kw_load_llm_layer(kw_workload *w, const xmlNode *n, const char *file, kw_xml_problems *p);

/* Workload <shape>'s continuous-batching attributes: batching, seq_max,
 * output_tokens, output_tokens_max (after seq, phase and streams are read). */
void kw_load_llm_shape(kw_shape *s, const xmlNode *n, const char *file, kw_xml_problems *p);

/* The accelerator file's all-reduce algorithm names, in kw_allreduce_algo
 * order (kw_tp.h): "ring", "tree" (NULL when out of range) and back (-1). */
const char *kw_load_llm_allreduce_name(int algo);
int kw_load_llm_allreduce_parse(const char *name);

#endif
