/* kw_mapping.h - from a candidate (knob value indices) to the typed mapping
 * the model stages read. The one place knob names of the catalogue
 * (the knob catalogue, src/model/kw_catalogue.c) are interpreted; a knob a space does not list takes the default. */
#ifndef KW_MAPPING_H
#define KW_MAPPING_H

#include "kw_model.h"

/* Decode c (over space->knobs) for block b into out.
 * KW_EINPUT when a value does not parse for its knob (message names knob and value). */
int kw_mapping_decode(kw_mapping *out, const kw_space *space, const kw_block *b, const kw_cand *c);
/* Index of a tiling group in b, or -1. */
int kw_mapping_block_group(const kw_block *b, const char *group);
/* Check a space knob against block b and accelerator a (may be NULL): the name is in
 * the catalogue for this block and every value parses and is supported.
 * KW_EINPUT with a message (no file:line; the loader adds it). */
int kw_mapping_knob_check(const kw_block *b, const kw_knob *k, const kw_accel *a);
/* True when the knob name is one of the catalogue's names for block b. */
int kw_mapping_knob_known(const kw_block *b, const char *knob);

const char *kw_mapping_loop_name(kw_loop l);
const char *kw_mapping_attn_fusion_name(kw_attn_fusion f);
const char *kw_mapping_placement_name(kw_placement p);

#endif
