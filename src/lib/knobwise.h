/* knobwise.h - libknobwise, the runtime side of a knobwise run: load a run's
 * recommendations once at start, then ask per request shape which mapping to
 * use, how fast it was predicted to be, which guards to watch and what to
 * roll back to.
 *
 * The one public header of the installed library (pkg-config: knobwise).
 * Everything a caller holds is opaque (knobwise_table, knobwise_entry,
 * knobwise_config) except the small plain-data structs below, which the
 * caller fills or reads. The library exports exactly the knobwise_* names of
 * this file (a version script hides the rest), so a runtime links nothing of
 * knobwise's internals.
 *
 * Conventions (those of knobwise itself):
 *   - functions return int: 0 (KNOBWISE_OK) or a negative KNOBWISE_E* code;
 *     the message, "FILE:LINE: message" for a damaged file, is kept per
 *     thread and read with knobwise_error_last();
 *   - the output parameter comes first; every _free accepts NULL;
 *   - the library never prints and never exits;
 *   - numbers in the files are read in the C locale ("527.086") whatever
 *     locale the caller set (the open switches its own thread to C with
 *     uselocale and back).
 *
 * Threads: a table is immutable once knobwise_table_open() has returned, so
 * any number of threads may look up and read it at once without locks; free
 * it only when no thread uses it any more. Every pointer the getters return
 * (entries, configurations, strings) is owned by the table and lives as long
 * as it does.
 *
 * Cost: knobwise_table_lookup() compares the request with every entry in a
 * flat array (three subtractions of logarithms computed at open), tens of
 * nanoseconds for the few dozen shapes a run tunes; `make bench` measures it.
 */
#ifndef KNOBWISE_H
#define KNOBWISE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Symbols of the shared library: default visibility for the API only (the
 * library is built with -fvisibility=hidden and a version script). */
#if defined(KNOBWISE_BUILDING) && defined(__GNUC__)
#define KNOBWISE_API __attribute__((visibility("default")))
#else
#define KNOBWISE_API
#endif

/* Version of this header's interface; bumped when a call changes meaning. */
#define KNOBWISE_API_VERSION 1

/* Return codes. The first ones have the values of knobwise's own codes. */
enum {
    KNOBWISE_OK = 0,
    KNOBWISE_EINPUT = -1,    /* bad argument, or a file that cannot be read as a table
                                (missing, not a regular file, damaged, wrong format) */
    KNOBWISE_ENOMEM = -2,    /* allocation failed */
    KNOBWISE_EIO = -3,       /* a read failed */
    KNOBWISE_ENOTFOUND = -20, /* no such shape or knob; no entry close enough by the rules asked */
    KNOBWISE_ENODATA = -21    /* the file does not carry this figure (e.g. guards in mappings.csv) */
};

/* Phases of a request (the workload file's `phase`). */
enum { KNOBWISE_PREFILL = 0, KNOBWISE_DECODE = 1 };

/* Roll-back targets (results.xml's rollback/target kinds). */
enum {
    KNOBWISE_ROLLBACK_PARENT = 0,   /* the configuration before the last change on the accepted path */
    KNOBWISE_ROLLBACK_BASELINE = 1  /* the production mapping the run started from */
};

/* Flags of knobwise_table_lookup(). */
#define KNOBWISE_LOOKUP_EXACT 0x1u       /* only the shape itself: no borrowing */
#define KNOBWISE_LOOKUP_CROSS_PHASE 0x2u /* may borrow from the other phase when this one has
                                            no entry (refused otherwise: a prefill winner is a
                                            poor guess for decode) */

/* A request shape (plain data, filled by the caller). */
typedef struct knobwise_shape {
    int phase;      /* KNOBWISE_PREFILL or KNOBWISE_DECODE */
    long batch;     /* sequences per request, >= 1 */
    long len;       /* prefill: tokens per sequence; decode: KV length attended to; >= 1 */
    long streams;   /* concurrent request streams, >= 1 */
} knobwise_shape;

typedef struct knobwise_table knobwise_table;   /* a run's recommendations (opaque) */
typedef struct knobwise_entry knobwise_entry;   /* one tuned shape in it (opaque) */
typedef struct knobwise_config knobwise_config; /* one value per knob (opaque) */

/* What a lookup found (plain data, filled by the library). */
typedef struct knobwise_match {
    const knobwise_entry *entry; /* owned by the table */
    int exact;          /* 1: the entry is this very shape */
    int borrowed;       /* 1: the entry's configuration was tuned for another shape (not exact,
                           or a mappings.csv row that was itself borrowed) */
    int phase_crossed;  /* 1: borrowed from the other phase (only with LOOKUP_CROSS_PHASE) */
    /* Distance per dimension: log2(entry / request), signed (0 = same, +1 = the
     * entry's is twice the request's). The lookup minimises the sum of their
     * absolute values, as `knobwise recommend` does; ties go to the first entry
     * in file order. */
    double batch_log2, len_log2, streams_log2;
} knobwise_match;

/* A threshold to watch after rollout: metric <= max and/or metric >= min (the
 * absent side is NaN). Strings are owned by the table. */
typedef struct knobwise_watch {
    const char *guard;   /* p95_ceiling, p99_ceiling, drift, throttle, fallback, ... */
    const char *metric;  /* p95_us, quality_cos, throttle_pct, ... */
    double max, min;
    const char *basis;   /* where the number comes from */
} knobwise_watch;

/* ---- the table ------------------------------------------------------------ */

/* Open a run's recommendations: PATH is a results.xml (validated against the
 * results schema), a mappings.csv (from `knobwise recommend --all`), or a run
 * folder (its results.xml). *out is owned by the caller (knobwise_table_free).
 * KNOBWISE_EINPUT with "FILE:LINE: message" when the file is missing, damaged
 * or of another kind, is a results.xml of a format this library does not
 * read (results format N), or is a run folder's own file (its results.xml, or a
 * mappings.csv in a folder holding a journal or .lock) that is a symbolic link
 * (a link named anywhere else is followed); *out is then NULL. */
KNOBWISE_API int knobwise_table_open(knobwise_table **out, const char *path);
KNOBWISE_API void knobwise_table_free(knobwise_table *t);

/* Entries (tuned shapes) in file order. */
KNOBWISE_API int knobwise_table_count(const knobwise_table *t);
KNOBWISE_API const knobwise_entry *knobwise_table_entry(const knobwise_table *t, int i);
/* Knobs, in the space's order (every configuration has one value for each). */
KNOBWISE_API int knobwise_table_knob_count(const knobwise_table *t);
KNOBWISE_API const char *knobwise_table_knob_name(const knobwise_table *t, int k);
/* Index of a knob by name (resolve once, read by index per request), or
 * KNOBWISE_ENOTFOUND. */
KNOBWISE_API int knobwise_table_knob_index(const knobwise_table *t, const char *knob);
/* The file it was read from, and its kind: "results.xml" or "mappings.csv". */
KNOBWISE_API const char *knobwise_table_path(const knobwise_table *t);
KNOBWISE_API const char *knobwise_table_kind(const knobwise_table *t);

/* The entry of a shape by name: KNOBWISE_ENOTFOUND when the run has none
 * (the message says so when the run tuned the shape and nothing it evaluated
 * passes the guards: nothing to deploy). */
KNOBWISE_API int knobwise_table_find(const knobwise_entry **out, const knobwise_table *t,
                                     const char *shape_name);
/* The entry for a request shape: the shape itself when the table has it, else
 * the nearest entry of the same phase (borrowed), else with
 * KNOBWISE_LOOKUP_CROSS_PHASE the nearest of the other phase. KNOBWISE_ENOTFOUND
 * when nothing qualifies (an exact-only lookup that misses, a phase with no
 * entry, or the request is a shape the run tuned where nothing passed the
 * guards: not borrowed, "FILE:LINE: shape 'S' was tuned, but ... nothing to
 * deploy"), KNOBWISE_ENODATA when the file carries no shape dimensions (an older
 * mappings.csv: look up by name), KNOBWISE_EINPUT for a shape out of range or a
 * flag bit this library does not know (refused, never ignored).
 * No allocation, no lock. */
KNOBWISE_API int knobwise_table_lookup(knobwise_match *out, const knobwise_table *t,
                                       const knobwise_shape *request, unsigned flags);

/* ---- an entry --------------------------------------------------------------- */

KNOBWISE_API const char *knobwise_entry_name(const knobwise_entry *e);
/* Its shape's dimensions; KNOBWISE_ENODATA when the file does not carry them. */
KNOBWISE_API int knobwise_entry_shape(knobwise_shape *out, const knobwise_entry *e);
/* The shape the configuration was tuned for when the file says it was
 * borrowed (mappings.csv's borrowed_from: a shape name or "baseline"), else "". */
KNOBWISE_API const char *knobwise_entry_borrowed_from(const knobwise_entry *e);
/* The configuration to deploy. */
KNOBWISE_API const knobwise_config *knobwise_entry_config(const knobwise_entry *e);
/* Predicted tail latencies of the deployed configuration on this shape, in
 * microseconds; KNOBWISE_ENODATA when the file does not carry them. */
KNOBWISE_API int knobwise_entry_latency(double *p95_us, double *p99_us, const knobwise_entry *e);
/* Where those figures come from, as mappings.csv's figures_from says:
 * "measured" (a shape the run tuned with a measuring evaluator: measured
 * kernel times, simulated serving), "model" (the model's prediction: a model
 * run, or a shape a measured run did not tune), or "" when the file does not
 * say (a results.xml, a mappings.csv from before the column). Since 1.1. */
KNOBWISE_API const char *knobwise_entry_figures_from(const knobwise_entry *e);
/* Which sample those figures come from (knobwise's headline rule: the
 * largest sample the run has for the configuration):
 *   "recheck"    the run's final re-check (results.xml <recheck>, 20,000
 *                requests on the default job), the recommendation and its
 *                baseline both re-checked
 *   "search"     the search's sample (results.xml <metrics>, 2,000 requests
 *                on the default job): a run without a re-check
 *   "measured"   a measured run's journal figures (measured kernels)
 *   "evaluated"  a mappings.csv row recommend evaluated itself on the shape
 *                (borrowed, or the baseline), at the space's sample
 *   ""           the file does not say (a mappings.csv from before the
 *                column, or an entry without figures)
 * On a bursty shape the search's sample can lie far below the re-check
 * (default job seed 3, attn_decode_kv2048_b32_c16: p95 6,182 us searched,
 * 20,971 us re-checked): a results.xml entry's knobwise_entry_latency is
 * the re-check's since 1.3, the search's before. Since 1.3. */
KNOBWISE_API const char *knobwise_entry_figures_basis(const knobwise_entry *e);
/* What the deployer must know about this entry, as tokens joined by ';' ("" when
 * none; the string is owned by the table). Since 1.2. From mappings.csv's
 * borrow_warnings column as written; from a results.xml, the last three:
 *   extrapolates    a borrowed row: a number outside the range the run tuned
 *   crosses_phase   a borrowed row: tuned for the other phase
 *   search_stopped  the run was stopped (signal, --time-limit) before this
 *                   shape's search finished: the best configuration so far
 *   no_evidence     the run was stopped before its evidence: no re-check at
 *                   the final sample and long thermal window, no portability
 *                   matrix, fewer disproof criteria (`knobwise tune --resume`
 *                   makes them); results.xml <results evidence=...>, or, read
 *                   in its run folder, RUN/evidence without its end record
 *                   (since 2026-12-07)
 *   ranking_unresolved the final re-check could not rank this configuration
 *                   apart from the next one, or ranked it ahead with its
 *                   gain less precise than the run's minimum effect
 *                   (results.xml <shape ranking="unresolved">, its
 *                   ranking_note says which; until stop 42 read from a
 *                   mappings.csv only)
 * (fails_guards rows are not entries: knobwise_table_find and _lookup refuse
 * their shape, as they refuse a results.xml shape with nothing to deploy.)
 * Unknown tokens may be added; a runtime that deploys only clean entries
 * checks for "". */
KNOBWISE_API const char *knobwise_entry_warnings(const knobwise_entry *e);
/* The claim's disproof criteria (results.xml's <disproof><criterion>s: what
 * observation after rollout proves the recommendation wrong), i in [0, count);
 * count 0 for a mappings.csv. NULL for i out of range. Since 1.2. */
KNOBWISE_API int knobwise_entry_disproof_count(const knobwise_entry *e);
KNOBWISE_API const char *knobwise_entry_disproof(const knobwise_entry *e, int i);
/* Guard thresholds to watch after rollout, i in [0, count). */
KNOBWISE_API int knobwise_entry_watch_count(const knobwise_entry *e);
KNOBWISE_API int knobwise_entry_watch(knobwise_watch *out, const knobwise_entry *e, int i);
/* The configuration to roll back to (KNOBWISE_ROLLBACK_PARENT or _BASELINE);
 * KNOBWISE_ENODATA when the file does not carry it. */
KNOBWISE_API int knobwise_entry_rollback(const knobwise_config **out, const knobwise_entry *e,
                                         int target);
/* Who owns the recommendation ("" when the file does not say). */
KNOBWISE_API const char *knobwise_entry_owner(const knobwise_entry *e);

/* ---- a configuration ---------------------------------------------------------- */

/* Stable 16-hex-digit identifier (the run's config_id). */
KNOBWISE_API const char *knobwise_config_id(const knobwise_config *c);
/* Value of knob k (knobwise_table_knob_index), as the space spells it
 * ("128", "flash", "bf16"); NULL when k is out of range or the file does not
 * carry this configuration's values. */
KNOBWISE_API const char *knobwise_config_value(const knobwise_config *c, int k);
/* The same by knob name: KNOBWISE_ENOTFOUND for an unknown knob,
 * KNOBWISE_ENODATA when the values are not in the file. */
KNOBWISE_API int knobwise_config_get(const char **out, const knobwise_config *c, const char *knob);
/* An integer knob (tile sizes, split_k, max_batch...): KNOBWISE_EINPUT when the
 * value is not an integer. */
KNOBWISE_API int knobwise_config_get_long(long *out, const knobwise_config *c, const char *knob);

/* ---- errors and version -------------------------------------------------------- */

/* This thread's last error message ("" when none). Owned by the library. */
KNOBWISE_API const char *knobwise_error_last(void);
/* The library's version, e.g. "0.1.0". */
KNOBWISE_API const char *knobwise_version(void);

#ifdef __cplusplus
}
#endif

#endif
