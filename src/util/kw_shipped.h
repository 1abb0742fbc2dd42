/* kw_shipped.h - shipped inputs by name: `--space bert_attn_tpu` finds
 * $(pkgdatadir)/spaces/bert_attn_tpu.xml when no file of that name exists,
 * and `knobwise show --list` lists what is shipped.
 *
 * The data folder is $(pkgdatadir) (compiled in as KW_PKGDATADIR), or
 * $KNOBWISE_DATADIR when set: the build tree's tests point it at the source
 * tree, and a relocated install can point it at its share/knobwise. While
 * $(pkgdatadir)/spaces does not exist (built, not installed) the source tree
 * the build was configured from (KW_SRCDATADIR) stands in, when it has
 * spaces/. A path
 * the user gives always wins over a shipped name: a file that exists is
 * read as it is, and an argument with a '/' is never looked up.
 */
#ifndef KW_SHIPPED_H
#define KW_SHIPPED_H

#include <stddef.h>

/* Environment variable that replaces the compiled-in data folder. */
#define KW_SHIPPED_ENV "KNOBWISE_DATADIR"

/* The data folder in use (owned by the library). */
const char *kw_shipped_datadir(void);

/* Resolve a --space argument into out: the argument itself when a file of
 * that name exists or it contains '/'; else DATADIR/spaces/ARG (or ARG.xml)
 * when that is a file. Returns 1 when a shipped space was found, 0 when out
 * is the argument unchanged, KW_EINPUT when out is too small. */
int kw_shipped_space(char *out, size_t size, const char *arg);

/* The shipped space names (DATADIR/spaces/NAME.xml), sorted, into *names
 * (caller frees each and the array; kw_shipped_list_free). 0 with *n = 0
 * when the folder is missing (an uninstalled build), KW_ENOMEM. */
int kw_shipped_list(char ***names, int *n);
void kw_shipped_list_free(char **names, int n);

#endif
