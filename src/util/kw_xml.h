/* kw_xml.h - the one module that reads XML (libxml2) for knobwise.
 *
 * Every input goes: bounded read (size limit, regular files only) -> parse
 * with the network off and no entity substitution, a DOCTYPE refused before
 * its internal subset is read, nesting depth bounded, XInclude refused ->
 * root element checked -> validated against a schema compiled into the binary
 * (kw_embed.h) with structured errors carrying line numbers. Problems are
 * collected, not printed: each one reads "FILE:LINE: message", and the caller
 * turns the collection into one KW_EINPUT error (kw_error_last()).
 *
 * Typed attribute getters live here too so the loaders never touch libxml2's
 * string handling; they report malformed values as problems (a second line of
 * defence behind the schema).
 */
#ifndef KW_XML_H
#define KW_XML_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <libxml/tree.h>

#include "kw_error.h"

#define KW_XML_MAX_BYTES (4u << 20) /* largest input file accepted: 4 MiB */
/* largest file knobwise writes and reads back (results.xml, mappings.csv) */
#define KW_XML_MAX_OUTPUT_BYTES (512u << 20)
#define KW_XML_MAX_DEPTH 32         /* deepest element nesting accepted */
/* A file knobwise wrote, parsed with the 512 MiB limit, holds at most one
 * element or attribute per this many bytes (plus 1024) in any first part of
 * it, checked as each element opens: results.xml averages 18.8 bytes a node
 * (8,481 elements and 23,365 attributes in 598,300 bytes, the default space
 * at budget 300), and its densest line takes 13 (the XML declaration; then
 * <knob name="fuse_qkv" value="on"/> indented, 13.7). A crafted file (80 MB
 * of <x/> reached 2.6 GB of tree) stops within its first kilobytes. */
#define KW_XML_OUTPUT_BYTES_PER_NODE 8
#define KW_XML_MAX_PROBLEMS 25      /* problems reported per collection */
/* What every reader says of a DOCTYPE (kw_xml's parser, results.xml's
 * streaming reader): STYLE.md rule 8, no DTD and no entity of any kind. */
#define KW_XML_DOCTYPE_REFUSED \
    "DOCTYPE is not allowed: knobwise files take no DTD, entities or external references"

/* A collection of "FILE:LINE: message" problems, one per line. Plain data
 * (a fixed buffer), so it lives on the stack; initialise with = {0}. */
typedef struct kw_xml_problems {
    int n;                      /* problems recorded (including those not shown) */
    char text[KW_ERROR_MAX];
} kw_xml_problems;

/* Record a problem at file:line (line <= 0: "FILE: message"). */
void kw_xml_problem(kw_xml_problems *p, const char *file, long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Append src's problems after dst's. */
void kw_xml_problems_merge(kw_xml_problems *dst, const kw_xml_problems *src);
/* 0 when nothing was recorded, else set the error object to every problem
 * (one per line) and return KW_EINPUT. */
int kw_xml_problems_finish(const kw_xml_problems *p);

/* Read a whole file (regular files only, at most KW_XML_MAX_BYTES) into *out,
 * NUL-terminated, owned by the caller (free()). Problems: cannot open, not a
 * regular file, too large, a run folder's own file that is a symbolic link
 * (kw_runfile_open). Returns 0 or KW_EINPUT (recorded in p). */
int kw_xml_read_file(char **out, size_t *len, const char *path, kw_xml_problems *p);
/* kw_xml_read_file of a file knobwise wrote (results.xml, mappings.csv), up to
 * KW_XML_MAX_OUTPUT_BYTES: a run tuning many shapes writes a results.xml over
 * the input limit (49 shapes of spaces/validate_small.xml: 4.4 MB), which
 * tune, verify and export must still read. own 1: a file the caller reads as
 * a run folder's own (export RUN: RUN/results.xml), whether or not its folder
 * holds a journal: never through a symbolic link. */
int kw_xml_read_output(char **out, size_t *len, const char *path, int own, kw_xml_problems *p);
/* One open of a file that is an input (read up to KW_XML_MAX_BYTES) unless it
 * is over that limit and libxml2, reading its first 4 KiB, finds its first
 * element is <big_root> (validate of a run's results.xml): then it is read up
 * to KW_XML_MAX_OUTPUT_BYTES and *big is 1. Any other file over the input
 * limit is refused after those 4 KiB, "over the 4 MiB limit for input files".
 * The parse still checks the root. */
int kw_xml_read_input_or(char **out, size_t *len, const char *path, const char *big_root,
                         int *big, kw_xml_problems *p);

/* Parse buf safely; label names the input in messages. *out is owned by the
 * caller (xmlFreeDoc). Returns 0 or KW_EINPUT with the problems recorded. */
int kw_xml_parse(xmlDocPtr *out, const char *label, const char *buf, size_t len,
                 kw_xml_problems *p);
/* kw_xml_parse of a file knobwise wrote: up to KW_XML_MAX_OUTPUT_BYTES (every
 * other rule the same). */
int kw_xml_parse_output(xmlDocPtr *out, const char *label, const char *buf, size_t len,
                        kw_xml_problems *p);

/* Validate doc against the embedded schema called schema_name (e.g.
 * "spaces/space.xsd"). KW_EINPUT with every violation recorded, or KW_ESTATE
 * (message set) when the schema is not in this build. */
int kw_xml_validate(xmlDocPtr doc, const char *label, const char *schema_name,
                    kw_xml_problems *p);

/* Each embedded schema is compiled once per process, at its first use
 * (thread-safe), and kept. kw_xml_cleanup() frees them; it is registered with
 * atexit() and may also be called earlier (before xmlCleanupParser(), say):
 * the next validation compiles again. */
void kw_xml_cleanup(void);
/* Schema compilations so far in this process (for tests and benchmarks). */
long kw_xml_schema_compilations(void);

/* Parse, check the root element is `root`, validate against schema_name. */
int kw_xml_load(xmlDocPtr *out, const char *label, const char *buf, size_t len, const char *root,
                const char *schema_name, kw_xml_problems *p);
/* kw_xml_load of a file knobwise wrote, up to KW_XML_MAX_OUTPUT_BYTES. */
int kw_xml_load_output(xmlDocPtr *out, const char *label, const char *buf, size_t len,
                       const char *root, const char *schema_name, kw_xml_problems *p);

/* Line of a node in its file (big lines supported), 0 if unknown. */
long kw_xml_line(const xmlNode *n);
/* The next element sibling at or after n (n may be NULL), or NULL. */
xmlNode *kw_xml_elem(xmlNode *n);
/* True when n is an element called name. */
int kw_xml_is(const xmlNode *n, const char *name);

/* Typed attribute getters: return 1 when the attribute is present and valid
 * (value stored), 0 when absent (out untouched), -1 when present but invalid
 * (problem recorded at the node's line). Numbers must be finite. */
int kw_xml_attr_str(char *out, size_t size, const xmlNode *n, const char *attr, const char *file,
                    kw_xml_problems *p);
int kw_xml_attr_double(double *out, const xmlNode *n, const char *attr, const char *file,
                       kw_xml_problems *p);
int kw_xml_attr_long(long *out, const xmlNode *n, const char *attr, long min, long max,
                     const char *file, kw_xml_problems *p);
int kw_xml_attr_bool(int *out, const xmlNode *n, const char *attr, const char *file,
                     kw_xml_problems *p);

/* libxml2 reports some failures itself (an output buffer whose write callback
 * fails prints "I/O error : write error" on stderr; an allocation that fails
 * prints "parser error : Memory allocation failed"). Between begin and end
 * such reports on this thread, structured or generic, are caught here
 * instead (n, the first message, nomem), so the caller reports the failure
 * once, through kw_error, naming the file. kw_xml_parse*, kw_xml_validate
 * and the results reader do this themselves. Plain data on the caller's
 * stack; begin/end pair up on one thread. */
typedef struct kw_xml_catch {
    int n;                 /* reports caught */
    int nomem;             /* one of them was libxml2 short of memory */
    char first[256];       /* the first one's message */
    void (*old_fn)(void);  /* the handlers in place before begin (restored by end) */
    void *old_ctx;
    void (*old_generic)(void);
    void *old_generic_ctx;
} kw_xml_catch;
void kw_xml_catch_begin(kw_xml_catch *c);
void kw_xml_catch_end(kw_xml_catch *c);
/* For the program (main), once after xmlInitParser: every libxml2 report
 * of this thread and of threads started later is dropped (knobwise checks
 * each libxml2 call and reports its failure itself, naming the file), where
 * libxml2 printed its own lines on stderr before knobwise's message. Not
 * for the library: a host program keeps its libxml2 handlers. */
void kw_xml_route_errors(void);

/* Write doc to path atomically: a temp file in the same folder (kw_tmpfile:
 * mode 0644 less the umask, swept by the next write when a kill left it), flushed, fsync'd, renamed over path, folder fsync'd.
 * KW_EIO with a message on failure; path is then untouched and no temp file
 * is left behind, whatever signal arrives meanwhile (kw_xml_signals_hold). */
int kw_xml_save_atomic(xmlDocPtr doc, const char *path);

/* The signals that end a process by default and that a user or a tester
 * sends (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM), held
 * from a temp file's creation to its rename or removal: one arriving then is
 * recorded, and kw_xml_signals_release restores the dispositions and raises
 * it again, so the process ends as it would have, without a temp file left
 * behind (SIGINT during `report` left RUN/.report.html.tmp.XXXXXX). A
 * handler, not a signal mask: a mask holds the calling thread only, and an
 * evaluation thread would take the signal and end the process. Signals
 * ignored at hold stay ignored. Not nested; one thread commits at a time.
 * Only SIGKILL still leaves a temp file; the next write of the same output
 * removes it (kw_tmpfile_sweep). */
#define KW_XML_N_HELD_SIGNALS 7
typedef struct kw_xml_sighold {
    struct sigaction old[KW_XML_N_HELD_SIGNALS];
    int replaced[KW_XML_N_HELD_SIGNALS];
} kw_xml_sighold;
void kw_xml_signals_hold(kw_xml_sighold *h);
void kw_xml_signals_release(kw_xml_sighold *h);

/* Validate what a writer just wrote (its temp file at path, named `label` in
 * messages) against the embedded schema_name with root element `root`:
 * output is held to the same schema a reader applies. 0, or KW_EMODEL with
 * the first violation (the file must then not be renamed into place), KW_EIO,
 * KW_ENOMEM. Files up to KW_XML_MAX_OUTPUT_BYTES. */
int kw_xml_check_written(const char *path, const char *label, const char *root,
                         const char *schema_name);

#endif
