/* kw_load.h - load and check the three inputs (space, accelerator, workload)
 * into a kw_config. All XML goes through kw_xml.c: network off, no entities,
 * DOCTYPE refused, size limit, root checked, XSD-validated, then semantic checks.
 * Every problem is an error "FILE:LINE: message" (kw_error_last(), KW_EINPUT);
 * several problems in one file are all reported, one per line. */
#ifndef KW_LOAD_H
#define KW_LOAD_H

#include "kw_model.h"

/* Load a space and the accelerator and workload it names (paths relative to the
 * space file), or the overrides when not NULL. *out is owned by the caller. */
int kw_load_config(kw_config **out, const char *space_path, const char *accel_override,
                   const char *workload_override);
/* The embedded default (compiled in from spaces/ at build time). */
int kw_load_config_default(kw_config **out);
void kw_load_config_free(kw_config *c);

/* Validate any knobwise input file by its root element (space, accelerator,
 * workload, results); for a space, also the files it names. */
int kw_load_validate_file(const char *path);
/* kw_load_validate_file, and root_out (root_len bytes) gets the root
 * element's name when the file parsed ("" when it did not): validate checks a
 * space's or workload's traces and model from it, and reads nothing else
 * again. */
int kw_load_validate_file_root(const char *path, char *root_out, size_t root_len);

/* Single-file loaders (used by the above and by tests). */
int kw_load_accel(kw_accel *out, const char *path);
/* The same checks on an accelerator file's bytes (buf, len), named `label` in
 * messages: calibrate checks the file it would write before writing it. */
int kw_load_accel_buf(kw_accel *out, const char *label, const char *buf, size_t len);
int kw_load_workload(kw_workload *out, const char *path);
/* A space needs its accelerator and workload for semantic checks. */
int kw_load_space(kw_space *out, const char *path, const kw_accel *a, const kw_workload *w);

/* Index of the shape named `name` among the space's shapes (index into space->shapes), or -1. */
int kw_load_config_shape(const kw_config *c, const char *name);

#endif
