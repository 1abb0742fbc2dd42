/* kw_results.h - what a run leaves behind: results.xml (results/results.xsd),
 * ranked.csv, audit.csv, portability.csv, derived from the run's journal.
 * Every file is written through temp file + fsync + rename.
 *
 * Pure functions of a run summary (kw_runsum.h): the renderers below turn a
 * summary into bytes, kw_results_write_summary commits the four files. They
 * evaluate nothing and start no thread: the evaluations the files show
 * beside the journal's (portability, re-checks, neighbours) are the run's
 * evidence phase (kw_evidence.h), and the run module (kw_run_results)
 * builds the summary, runs it and calls the writer. */
#ifndef KW_RESULTS_H
#define KW_RESULTS_H

#include <stddef.h>

#include "kw_journal.h"
#include "kw_model.h"
#include "kw_runsum.h"
#include "kw_sbuf.h"

/* Ranked configurations listed per shape in results.xml and ranked.csv. */
#define KW_RESULTS_TOP 10
/* Rejected configurations listed per shape in results.xml. results.xml is
 * what the run recommends (results/formats.md's output contract: per shape the
 * baseline and the ranked configs), not a copy of the journal: a shape with
 * more rejected configurations than this lists the ones with the lowest
 * primary metric (the nearest misses; unmeasured ones last, ties by id) in
 * first-evaluated order, and the shape's `rejected` attribute still counts
 * them all. Every evaluation stays in the journal, every step in audit.csv. */
#define KW_RESULTS_REJECTED_TOP 100
/* Version of the results.xml format (the root's format attribute). */
#define KW_RESULTS_FORMAT 1

/* The contract's CSV headers (results/formats.md, the output contract). */
#define KW_RANKED_HEADER                                                                      \
    "shape,rank,config_id,p50_us,p95_us,p99_us,launches,reuse_ratio,dram_mb,quality_cos,"     \
    "quality_rel_rms,throttle_pct,fallback_pct,knobs_changed,rollback_to"
/* ranked.csv's columns added at the end (results/formats.md): each row's
 * headline p95/p99 (kw_results_headline: the final re-check where the run
 * made one, else the search's sample, as p95_us/p99_us before them) and
 * their basis (kw_results_basis_token) */
#define KW_RANKED_HEADER_ADDED "headline_p95_us,headline_p99_us,figures_basis"
#define KW_AUDIT_HEADER                                                                       \
    "step,shape,parent_id,config_id,knob,old,new,p95_before_us,p95_after_us,delta_pct,"       \
    "p_value,guards,decision,reason"
/* results.xml's root element and the schema every writer and reader holds it to */
#define KW_RESULTS_ROOT "results"
#define KW_RESULTS_SCHEMA "results/results.xsd"
#define KW_PORTABILITY_HEADER "tuned_for,evaluated_on,p95_us,vs_best_pct,guards"
#define KW_MAPPINGS_HEADER_PREFIX "shape,config_id,borrowed_from"
/* mappings.csv after the knob columns (added at the end) */
#define KW_MAPPINGS_HEADER_SUFFIX "phase,batch,seq,kv_len,streams,p95_us,p99_us,borrow_warnings"
/* and after those (added at the end, read when present): where the row's
 * p95_us/p99_us come from, KW_MAPPINGS_MEASURED (a tuned shape of a measured
 * run: measured kernels, simulated serving) or KW_MAPPINGS_MODEL (the model:
 * a model run's rows, and on a measured run the rows it did not tune) */
#define KW_MAPPINGS_HEADER_FIGURES "figures_from"
/* and after that (added at the end, read when present): the number of shape
 * rows in the file, the same on every row, so that a file cut at a line end
 * (a copy or a disk that stopped early) is refused rather than read as fewer
 * shapes: CSV has no end mark of its own */
#define KW_MAPPINGS_HEADER_ROWS "file_rows"
/* and after that (added at the end, read when present): which sample the
 * row's p95_us/p99_us come from, kw_results_basis_token's ("recheck",
 * "search", "measured") for a tuned shape, KW_BASIS_EVALUATED for a row
 * recommend evaluated on its shape (borrowed, or the baseline) */
#define KW_MAPPINGS_HEADER_BASIS "figures_basis"
/* and after that (stop 48, added at the end): the thresholds of results.xml's
 * <watch>es of the row's configuration (kw_results_watches, in its order:
 * watch_METRIC_max or _min), empty where results.xml has none (a row not
 * tuned in the run; the TTFT/TPOT ones on a shape that is not continuous
 * batching; a limit the space does not set) */
#define KW_MAPPINGS_HEADER_WATCH                                                                 \
    "watch_p95_us_max,watch_p99_us_max,watch_quality_cos_min,watch_quality_rel_rms_max,"         \
    "watch_throttle_pct_max,watch_fallback_pct_max,watch_ttft_p99_us_max,watch_tpot_p99_us_max"
/* What the header line of every mappings.csv recommend --all writes holds:
 * recommend --all -o FILE --force replaces only a file that holds it
 * (kw_runfolder_output). */
#define KW_MAPPINGS_MARK "," KW_MAPPINGS_HEADER_SUFFIX "," KW_MAPPINGS_HEADER_FIGURES
#define KW_MAPPINGS_MEASURED "measured"
#define KW_MAPPINGS_MODEL "model"

/* The summary the result files of run folder run_dir are rendered from,
 * streamed from its journal (kw_runsum_build_listed: memory does not grow
 * with the run) into a partial summary of only what the files list
 * (byte-identical files to kw_runsum_build's full summary). cfg (may be NULL): the
 * guard limits and the inputs' hashes; owner (may be NULL) recorded in every
 * rollback element; metric (may be NULL) must be the journal's primary
 * (else KW_ESTATE). *out owned by the caller. No evaluation: the run's
 * evidence (kw_evidence.h) is added by the caller before writing. */
int kw_results_summary(kw_runsum **out, const char *run_dir, const kw_config *cfg,
                       const char *owner, const char *metric);

/* The same summary without reading the journal: the live summary
 * (kw_runsum_live, kw_runsum.h) of run_dir's journal with the listings'
 * lengths, made by kw_results_live_new once the journal exists and kept
 * up to date by the run (kw_runsum_live_update); kw_results_summary_live
 * reads what was appended since and gives the summary kw_results_summary
 * would give (the same cfg, owner and metric rules). On any failure the
 * caller reads the file (kw_results_summary). */
int kw_results_live_new(kw_runsum_live **out, const char *run_dir);
int kw_results_summary_live(kw_runsum **out, kw_runsum_live *lv, const kw_config *cfg,
                            const char *owner, const char *metric);

/* Guard thresholds, sample size, space name and input hashes from the run's config. */
void kw_results_set_limits(kw_runsum *rs, const kw_config *cfg);

/* The rollback boundary of one ranked configuration (derived from the evidence). */
typedef struct kw_rollback {
    int parent;                 /* config index of the roll-back target on the accepted path */
    int baseline;               /* config index of the baseline (-1 when never evaluated) */
    double p95_ceiling_us, p99_ceiling_us;
    char p95_basis[256], p99_basis[256];
    double margin_pct;          /* evidence margin used for the ceilings */
    long requests;              /* re-measure with this many requests (0 = unknown) */
    double claimed_pct;         /* primary change against the baseline (negative = faster) */
    double baseline_us;         /* the baseline's primary figure it is claimed against (NAN: none) */
    int n_worse;                /* shapes where the winner is worse than their baseline */
    int worse[64];
    int n_unmeasured;           /* shapes a measured run's journal has no figure of it on */
    int unmeasured[64];
    /* a continuous-batching shape (LLM serving, kw_results_llm): the p99 of
     * time to first token and of time per output token, ceilings as p99's
     * (the headline's figure plus a margin, capped at the baseline's when
     * below it and at the space's SLA); each margin its own since stop 48:
     * the larger of min_effect and its own 95% interval above the figure
     * (ttft_p99_ci_hi_us, tpot_p99_ci_hi_us; a journal from before has
     * none: the primary's margin, as then); NAN on other shapes */
    double ttft_ceiling_us, tpot_ceiling_us;
    char ttft_basis[256], tpot_basis[256];
} kw_rollback;

/* One <watch> of a rollback: metric <= max and/or >= min (NAN: no such
 * side), and where the number comes from. */
typedef struct kw_results_watch {
    const char *guard, *metric;
    double max, min;
    const char *basis; /* the rollback's own text or a literal */
} kw_results_watch;
#define KW_RESULTS_WATCH_MAX 8
/* The watches before the continuous-batching ones, on every shape. */
#define KW_RESULTS_WATCH_ALWAYS 6

/* The watches of rollback rb (kw_results_rollback) in results.xml's order:
 * p95 and p99 ceilings, drift (quality_cos min, quality_rel_rms max),
 * throttle, fallback, then on a continuous-batching shape the TTFT and TPOT
 * p99 ceilings. Returns how many (6 or 8); bases point into rb. */
int kw_results_watches(kw_results_watch w[KW_RESULTS_WATCH_MAX], const kw_rollback *rb,
                       const kw_runsum *rs);

/* The guards of a measured run's portability cell its journal has no figure
 * for (kw_evidence_portability_journal; results.xml <on guards=...>,
 * portability.csv, the report's cell). */
#define KW_RESULTS_PORT_UNMEASURED "not measured: not evaluated on this shape in the journal"


/* Where a configuration's headline figures come from: the one rule every
 * output follows (tune's summary, recommend, audit, report, ranked.csv's
 * headline columns, mappings.csv, and through them export and libknobwise),
 * and the source of the rollback ceilings and claim (kw_results_rollback).
 *   KW_BASIS_RECHECK   the final re-check at the final sample and long
 *                      thermal window (kw_evidence_recheck; results.xml
 *                      <recheck>): 20,000 requests on the default job
 *   KW_BASIS_SEARCH    the search's sample (the journal's figures: the
 *                      space's sim_requests, 2,000 on the default job): a
 *                      run without a re-check (stopped, --results-every)
 *   KW_BASIS_MEASURED  the journal's figures of a measured run (measured
 *                      kernel times, simulated serving): a measured run is
 *                      not re-checked outside its journal
 * The baseline's figures always come from the same source as the
 * configuration's (a claim compares like with like): the re-check only when
 * both were re-checked. */
typedef enum kw_basis { KW_BASIS_RECHECK, KW_BASIS_SEARCH, KW_BASIS_MEASURED } kw_basis;
typedef struct kw_headline {
    kw_basis basis;
    const kw_metrics *m;    /* the configuration's figures (owned by the summary) */
    const kw_metrics *base; /* its shape's baseline's, same source (NULL: no baseline) */
    long requests;          /* the requests behind m (0: unknown) */
} kw_headline;
void kw_results_headline(kw_headline *out, const kw_runsum *rs, int shape, int config);
/* The CSV token of a basis (ranked.csv and mappings.csv's figures_basis):
 * "recheck", "search", "measured"; mappings.csv adds KW_BASIS_EVALUATED for
 * a row `recommend` evaluated itself (a borrowed or baseline row). */
#define KW_BASIS_EVALUATED "evaluated"
const char *kw_results_basis_token(kw_basis b);
/* The same in words, with the sample: "the re-check (20000 requests)", "the
 * search's sample (2000 requests)", "the run's measurements (its journal)" (each reads after "at"). */
void kw_results_basis_words(char *buf, size_t n, const kw_headline *h);

int kw_results_rollback(kw_rollback *out, const kw_runsum *rs, int shape, int config);

/* A ranking note (kw_results_ranking_read's, results.xml's ranking_note:
 * one sentence of some 600 characters) as recommend and audit print it:
 * "HEAD: VERDICT" then its parts on labelled lines ("figures:", "why:",
 * "read:"), each wrapped to KW_RESULTS_NOTE_WIDTH columns. The parts are
 * the note's text between its ": " separators outside brackets: nothing is
 * dropped (joined again with ": ", and the wrapped lines with " ", they
 * give the note). A note of another shape gets its parts unlabelled. */
#define KW_RESULTS_NOTE_WIDTH 100
void kw_results_note_block(kw_sbuf *out, const char *head, const char *note);

/* Whether figures m are a continuous-batching shape's (LLM serving): a TTFT
 * p99 above 0 (the evaluator writes 0 on every other shape, and a <recheck>
 * from before stop 47 has none). What a serving engineer watches beside the
 * request latency, TTFT and TPOT p99, then joins the headline, the rollback
 * watches and the disproof criteria. */
int kw_results_llm(const kw_runsum *rs, const kw_metrics *m);
/* "TTFT p99 X us (baseline B us, +P%), TPOT p99 ..." of figures m against
 * base (NULL: no baseline part) into buf; "" unless kw_results_llm(m). */
void kw_results_llm_words(char *buf, size_t n, const kw_runsum *rs, const kw_metrics *m,
                          const kw_metrics *base);

/* The disproof criteria of configuration `config` of `shape` (results.xml's
 * <disproof><criterion>s; the report lists them under its rollback): appended
 * to out as texts each ended by a NUL. 0, or KW_ENOMEM (out is then failed). */
int kw_results_disproof(kw_sbuf *out, const kw_runsum *rs, int shape, int config);

/* What a run's results rest on beyond its journal (results.xml's
 * <results evidence=...>, absent when all of it is there; the writer's
 * kw_results_evidence): the evidence
 * (kw_evidence_run) is not journaled, and a run stopped by a signal or its
 * --time-limit before or during it keeps the search's recommendation without
 * the re-check at the final sample and long thermal window, without the
 * portability matrix and the disproof criteria it gives. recommend, export
 * and libknobwise say so (README "Evidence").
 *   NULL                              all of it (or nothing was evaluated)
 *   KW_RESULTS_EVIDENCE_PORTABILITY   the portability matrix, no re-check
 *                                     (a --results-every rewrite during the run)
 *   KW_RESULTS_EVIDENCE_NONE          none of it
 * A shape whose search the run did not finish (no D record: kw_rs_shape
 * stopped) is <shape search="stopped">. */
#define KW_RESULTS_EVIDENCE_NONE "none"
#define KW_RESULTS_EVIDENCE_PORTABILITY "portability"
#define KW_RESULTS_SEARCH_STOPPED "stopped"
/* <shape ranking=...>: the final re-check cannot tell rank 1 from its rival
 * (kw_results_rival). With a paired verdict (kw_evidence_verdict, the
 * model's): the interval of rank 1 minus the rival on the same arrivals
 * (the run's 1 - alpha, 95% by default, over the sequence's looks:
 * kw_simci_pair_half_looks) reaches 0 or
 * above, or its half-width is over the minimum effect
 * (kw_results_paired_resolved). Without one (an evaluator that cannot pair,
 * a noisy model, a sample too short to pair): the two separate intervals
 * of the primary percentile overlap, or rank 1's half-width is over the
 * minimum effect. ranking_note says it in words. Absent: resolved, or no
 * re-check to judge by. */
#define KW_RESULTS_RANKING_UNRESOLVED "unresolved"
/* How ranking_note begins: rank 1 cannot be told from its rival (the
 * interval of the difference holds 0, or the separate intervals overlap),
 * or rank 1 is ahead of it (the interval lies below 0) and only its gain is
 * known less precisely than the minimum effect. Before stop 46 every note
 * began "not resolved", which read as "the ranking is in doubt" on the
 * default job's attn_decode_kv2048_b32_c16, ahead of the baseline by
 * 7,339 us [6,403, 8,275] (-30%). */
#define KW_RESULTS_NOTE_UNRESOLVED "not resolved"
/* The rollback <watch> guards of a continuous-batching shape (stop 47):
 * TTFT and TPOT p99 ceilings (kw_rollback.ttft/tpot_ceiling_us). */
#define KW_RESULTS_TTFT_CEILING "ttft_p99_ceiling"
#define KW_RESULTS_TPOT_CEILING "tpot_p99_ceiling"
#define KW_RESULTS_NOTE_AHEAD "rank 1 ahead, its gain not resolved"

/* Rank 1's rival in shape's final ranking: the best-ranked re-checked
 * configuration whose re-checked primary figure differs from rank 1's
 * (configurations the simulation cannot tell apart at all, e.g. through a
 * knob that changes nothing, are equal, not rivals), else the baseline.
 * Returns its configuration index, or -1 (no re-check of rank 1, no rival
 * with a different figure); *rank2 its rank (0: the baseline, unranked),
 * *ties the re-checked configurations passed over for an exact tie. */
int kw_results_rival(const kw_runsum *rs, int shape, int *rank2, int *ties);

/* The primary percentile as a probability (0.95 for p95_us, 0.99 for
 * p99_us), 0 for any other primary (no interval to judge by). */
double kw_results_primary_p(const kw_runsum *rs);

/* Whether a paired comparison v (rank 1 = a, its rival = b) resolves the
 * ranking: the interval of a - b (v->half: the run's level over its looks,
 * kw_evidence_verdict) lies below 0 (rank 1 is better) and
 * its half-width is at most min_effect_pct of the rival's figure (the gain
 * is known to within the effect the run must resolve). 0 when v has no
 * interval (half NAN). The one home of the rule: kw_evidence_verdict's
 * sequence stops on it, the writer judges by it. */
int kw_results_paired_resolved(const kw_paired *v, double min_effect_pct);

/* The largest sample kw_evidence_verdict raises a comparison to: a shape
 * still unresolved at the final re-check's sample is compared again at
 * twice that, and so on, up to this many measured requests (the last step
 * clipped to it), within the search's own simulated requests on the shape
 * (kw_evidence_verdict). About 0.4 s of simulation per mapping on the
 * bursty default decode shape (`knobwise eval --requests 1000000`: 0.38 s
 * user). */
#define KW_RESULTS_VERDICT_CAP 1000000L
/* The evidence state the run folder's results.xml records (its root start
 * tag, which the writer puts at the file's start): *state "" when all of it
 * is there (or the file predates the attribute), KW_RESULTS_EVIDENCE_NONE or
 * _PORTABILITY, or KW_RESULTS_EVIDENCE_NO_FILE when the folder has no
 * readable results.xml (a run killed before it wrote one). Read with libxml2's
 * streaming reader up to the root start tag only. */
#define KW_RESULTS_EVIDENCE_NO_FILE "no results.xml"
void kw_results_evidence_read(char *state, size_t size, const char *run_dir);

/* Renderers: append one file's bytes to out. rs must be finished
 * (kw_runsum_finish); portability is left empty unless kw_evidence_portability ran. */
/* Each of rs's shapes' <shape ranking_note> from run_dir's results.xml
 * (KW_RESULTS_RANKING_UNRESOLVED), read with libxml2's streaming reader over
 * the shapes' start tags: *out[rs->n_shapes], NULL where the ranking is
 * resolved or not judged (no file, an older file, no re-check). Free with
 * kw_results_ranking_free. Returns 0 or KW_ENOMEM. */
int kw_results_ranking_read(char ***out, const char *run_dir, const kw_runsum *rs);
void kw_results_ranking_free(char **notes, int n);
/* A shape's claim as run_dir's results.xml states it (kw_results_read's
 * claim), for `recommend` to print beside the mapping: the re-check at the
 * final sample of the recommended configuration and of the baseline
 * (attribute text as the file spells it, "" where absent; present 0 when
 * there is no <recheck>), and the recommendation's disproof criteria,
 * n_criteria texts each ended by a NUL in criteria. found 0 when the file
 * or the shape is not there. Free with kw_results_claim_free. */
#define KW_RESULTS_RECHECK_TEXT 256
typedef struct kw_results_recheck {
    int present;
    char samples[KW_RESULTS_RECHECK_TEXT], p95_us[KW_RESULTS_RECHECK_TEXT],
        p99_us[KW_RESULTS_RECHECK_TEXT], p95_lo_us[KW_RESULTS_RECHECK_TEXT],
        p95_hi_us[KW_RESULTS_RECHECK_TEXT], p99_lo_us[KW_RESULTS_RECHECK_TEXT],
        p99_hi_us[KW_RESULTS_RECHECK_TEXT], long_p99_us[KW_RESULTS_RECHECK_TEXT],
        throttle_pct[KW_RESULTS_RECHECK_TEXT], guards[KW_RESULTS_RECHECK_TEXT],
        not_measured[KW_RESULTS_RECHECK_TEXT];
    /* continuous batching: TTFT and TPOT p99 ("" on other shapes and in files
     * from before stop 47) */
    char ttft_p99_us[KW_RESULTS_RECHECK_TEXT], tpot_p99_us[KW_RESULTS_RECHECK_TEXT];
} kw_results_recheck;
typedef struct kw_results_claim {
    int found;       /* the shape is in the file */
    int recommended; /* ... with a recommended configuration */
    int unresolved;  /* ... and ranking="unresolved" (KW_RESULTS_RANKING_UNRESOLVED) */
    kw_results_recheck rec, base;
    /* the recommendation's rollback <watch> p95_ceiling/p99_ceiling max, "" where absent */
    char p95_ceiling[KW_RESULTS_RECHECK_TEXT], p99_ceiling[KW_RESULTS_RECHECK_TEXT];
    /* ... and ttft_p99_ceiling/tpot_p99_ceiling's (continuous batching, stop 47) */
    char ttft_ceiling[KW_RESULTS_RECHECK_TEXT], tpot_ceiling[KW_RESULTS_RECHECK_TEXT];
    kw_sbuf criteria;
    int n_criteria;
} kw_results_claim;
/* Everything a command takes from run_dir's results.xml, in one streamed
 * pass (libxml2's reader; what nothing asks for is skipped whole; a missing
 * or unreadable file says nothing). Until stop 43 recommend --shape read
 * the file three times (rankings, re-checks, claim), report twice.
 *   load   the final re-check's figures (each <recheck> of a shape's
 *          baseline and listed configs, as the file spells them) into its
 *          configurations (configs[].recheck, recheck_unmeasured): the
 *          headline figures (kw_results_headline), rollback ceilings and
 *          disproof criteria a reader derives are then the file's, since
 *          tune keeps its re-check at the file's decimals. Configurations
 *          that already have one, shapes and ids it lacks are left as they
 *          are.
 *   notes  the rankings (kw_results_ranking_read's), indexed by load's
 *          shapes, else by names'
 *   claim  the claim of shape claim_shape (kw_results_claim above)
 * Returns 0 or KW_ENOMEM (the claim then freed). */
typedef struct kw_results_want {
    kw_runsum *load;         /* the re-checks into it, or NULL */
    const kw_runsum *names;  /* the shapes notes are indexed by when load is NULL */
    char ***notes;           /* the rankings, or NULL */
    const char *claim_shape; /* the claim of this shape into */
    kw_results_claim *claim; /* ..., or NULL */
} kw_results_want;
int kw_results_read(const kw_results_want *w, const char *run_dir);
/* The same over a results.xml already read (xml, len bytes; path names it):
 * verify reads the file once. */
int kw_results_read_mem(const kw_results_want *w, const char *xml, size_t len, const char *path);
/* Rounds a re-check's figures to the decimals results.xml writes them with
 * (kw_evidence_recheck, as it stores them), so what tune derives from them
 * and what a reader derives from the file (kw_results_read) agree. */
void kw_results_recheck_round(const kw_runsum *rs, kw_metrics *m);
void kw_results_claim_free(kw_results_claim *c);
int kw_results_xml(kw_sbuf *out, const kw_runsum *rs);
int kw_results_ranked_csv(kw_sbuf *out, const kw_runsum *rs);
int kw_results_audit_csv(kw_sbuf *out, const kw_runsum *rs);
int kw_results_portability_csv(kw_sbuf *out, const kw_runsum *rs);

/* The four result files from a finished summary: results.xml committed
 * first on its own, then the three CSVs together (audit.csv last). */
int kw_results_write_summary(const char *run_dir, const kw_runsum *rs);

/* One output file for kw_results_commit. */
typedef struct kw_outfile {
    const char *name; /* file name inside dir (no '/') */
    const char *data;
    size_t len;
} kw_outfile;

/* Write every file to a temp file in dir (write, fflush, fsync), then rename
 * them all into place and fsync dir. On any failure before the renames no file
 * in dir changes and the temp files are removed (KW_EIO with the path). */
int kw_results_commit(const char *dir, const kw_outfile *files, int n);

#endif
