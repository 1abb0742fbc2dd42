/* kw_mpi.h - `mpirun -n N knobwise tune ...`: one run over N MPI ranks.
 *
 * Rank 0 does everything a one-process run does (it parses the command line,
 * owns the run folder, the journal, the engine's decisions and the result
 * files); the other ranks only evaluate. The distribution sits where the
 * engine's thread pool calls its evaluator: rank 0 hands the engine an
 * evaluator (kw_mpi_pool_iface) whose eval() runs the candidate in one of
 * rank 0's own slots when one is free, else queues it for the next free slot
 * of any other rank (a work queue: a slow rank or candidate holds one slot,
 * never a round). The engine plans, decides and journals exactly as it does
 * with threads, so the run's files are byte-identical to a one-process run's
 * for any rank count (the evaluator being deterministic in candidate, shape
 * and repetition, as kw_search.h requires). Rejected: the engine core sending
 * messages itself (its rounds would know about ranks) and one rank per shape
 * (the journal order would follow the timing).
 *
 * Before evaluating, every other rank receives rank 0's run description (the
 * journal header's attributes and input hashes), loads the same inputs,
 * builds the same evaluator and answers whether its input hashes equal rank
 * 0's (cli_tune.c). Messages are plain bytes (a homogeneous cluster: the
 * same binary on every node).
 *
 * Without ./configure --with-mpi, or when the process was not started by
 * mpirun, this is the one-process case: rank 0 of 1, no MPI call is made.
 *
 * Faults: MPI errors are returned, not fatal (MPI_ERRORS_RETURN): rank 0
 * fails the evaluations in flight with KW_EIO and the engine stops. A rank
 * that dies is, with Open MPI, noticed by mpirun, which then ends every
 * process; rank 0's journal stays intact to its last complete record because
 * it only ever appends whole records (kw_journal.c) and resume drops a torn
 * last one.
 */
#ifndef KW_MPI_H
#define KW_MPI_H

#include <signal.h>
#include <stdint.h>

#include "kw_search.h"

/* Start MPI when built with it and started by mpirun (else nothing). 0 or
 * KW_EIO. */
int kw_mpi_init(void);
/* The verb's options on this rank (argv[0..argc-1], after the verb's name;
 * kept, not copied: valid for the process). Rank 0 sends its own with the
 * run; another rank compares them with its own (kw_mpi_args_differ). */
void kw_mpi_set_args(int argc, char *const *argv);
/* This process's rank (0 without MPI). */
int kw_mpi_rank(void);
/* 1 when started by mpirun (even with -n 1: rank 0 then reports its rate). */
int kw_mpi_launched(void);
/* The rank's index among the ranks on its node (0 without MPI): the device
 * its measuring evaluator's worker uses (KW_WORKER_INDEX, README "The
 * worker protocol"). */
int kw_mpi_local_rank(void);
/* Rank 0: tell ranks that were never started (kw_mpi_pool_start not
 * reached: bad input, --help) that there is no run; then MPI_Finalize. Every
 * rank calls it once before exiting. */
void kw_mpi_finish(void);

/* ---- rank 0 ---- */

/* What every other rank needs to build the evaluator: the journal header's
 * attributes and input hashes, the evaluation threads per rank and the time
 * limit (so a long evaluation stops at the same deadline everywhere). */
typedef struct kw_mpi_spec {
    int n_attrs;
    const char *const *attr_keys, *const *attr_values;
    int n_inputs;
    const char *const *input_names, *const *input_hashes;
    int threads;
    double time_limit_s;
    uint64_t seed;   /* the run's seed (the model's when no model_seed attribute) */
    /* rank 0's deadline (CLOCK_MONOTONIC seconds, 0: none; NULL: the ranks
     * keep time_limit_s from their start), read as each candidate is sent:
     * the time it leaves goes with the candidate and becomes the rank's own
     * deadline, so a round the engine makes whole (kw_pause: *deadline_s 0
     * for its length) is whole on every rank and the rounds after it are cut
     * at the limit on every rank (until 2026-12-07 the other ranks of a
     * whole-round resume had no limit at all: each could run one evaluation
     * past it) */
    const double *deadline_s;
} kw_mpi_spec;

typedef struct kw_mpi_pool kw_mpi_pool;

/* Send spec to every other rank, wait until each has built its evaluator
 * (or said why it cannot: KW_EINPUT naming the rank and its message), and
 * start the dispatcher. local is rank 0's own evaluator with local_slots
 * slots; stop: the run's stop flag (queued evaluations then return
 * KW_EINTERRUPTED). *out owned by the caller: kw_mpi_pool_free. */
int kw_mpi_pool_start(kw_mpi_pool **out, const kw_mpi_spec *spec, const kw_evaluator *local,
                      int local_slots, const volatile sig_atomic_t *stop);
/* The distributing evaluator (valid until kw_mpi_pool_free). */
const kw_evaluator *kw_mpi_pool_iface(kw_mpi_pool *p);
/* Evaluation slots of all ranks: the engine's thread count on rank 0. */
int kw_mpi_pool_slots(const kw_mpi_pool *p);
/* "4 ranks: 812 evals/s (r0 203 r1 201 r2 205 r3 203)" into buf. */
void kw_mpi_pool_format(const kw_mpi_pool *p, char *buf, size_t len);
/* Tell every rank the run is over, stop the dispatcher; accepts NULL. */
void kw_mpi_pool_free(kw_mpi_pool *p);
/* The first rank (> 0) whose evaluation was stopped by a signal to it, and
 * *sig that signal (the rank's stop flag); 0 and *sig 0 when none was (the
 * engine then paused, if it did, for rank 0's own reasons). Accepts NULL. */
int kw_mpi_pool_stopped_by(const kw_mpi_pool *p, int *sig);

/* ---- every other rank ---- */

typedef struct kw_mpi_job_spec kw_mpi_job_spec; /* a received kw_mpi_spec and its storage */

/* Wait for rank 0: 0 and *out the run description, or 1 when rank 0 ended
 * without a run (its own message says why), or KW_EIO. */
int kw_mpi_spec_recv(kw_mpi_job_spec **out);
/* The received description (pointers into js). */
const kw_mpi_spec *kw_mpi_spec_of(const kw_mpi_job_spec *js);
void kw_mpi_spec_free(kw_mpi_job_spec *js);
/* 1 with msg ("rank 1: its option '--budget 30' is not rank 0's ('--budget
 * 20') ...") when this rank's options (kw_mpi_set_args) are not the ones rank
 * 0 sent with js: a rank other than 0 follows rank 0's run and never reads
 * its own, so they are ignored, and the user is told so; 0 when the same. */
int kw_mpi_args_differ(const kw_mpi_job_spec *js, char *msg, size_t len);
/* Tell rank 0 this rank's setup status (setup_rc != 0: kw_error_last()
 * says why, and the function returns at once); then evaluate what rank 0
 * sends on ev with `threads` threads until it ends the run, setting
 * *deadline_s (the deadline ev's evaluations stop at; NULL: none) from the
 * time each candidate brings (kw_mpi_spec.deadline_s). stop: this rank's
 * stop flag (ev reads it too): an evaluation it stopped goes back to rank 0
 * with the signal (kw_mpi_pool_stopped_by). 0 or KW_EIO. */
int kw_mpi_serve(const kw_evaluator *ev, int threads, int setup_rc, double *deadline_s,
                 const volatile sig_atomic_t *stop);

#endif
