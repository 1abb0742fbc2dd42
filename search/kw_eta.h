/* kw_eta.h - the convergence estimate of an OFAT run: how many evaluations
 * the unfinished shapes still need, from the search's own behaviour.
 *
 * Why: the engine's bound for a shape (kw_evals_est in the engine: its
 * evaluations so far plus what proving its current local optimum still costs)
 * assumes the current optimum is the last one. On the embedded default it is
 * not: each shape proves a local optimum three times or so (a probe or an
 * excursion finds a better one, and the proof starts again), so the bound
 * ran 2.6-4.4x low before the first shape finished (tests/data/eta/
 * default_seed7.txt: 6,577 evaluations left shown at 10% of the run against
 * 17,330 real). A shape's proofs ("cycles") are what this estimate counts.
 *
 * Model: a cycle is one stretch of the bound. It starts when the bound
 * first jumps (the first sweep found a local optimum: the bound grows by a
 * whole proof, whose size is the shape's cycle cost), and a new cycle starts
 * when the bound jumps again once the shape has spent (nearly) all of the
 * last one (KW_ETA_SPENT_SHARE): the proof found something better. The run
 * expects every unfinished shape to need K cycles in all: the finished
 * shapes' mean once one has finished, else as many as the most any running
 * shape has started and at least two (no shape has yet shown that a first
 * optimum can be the last), at most KW_ETA_CYCLES_MAX. A shape's estimate is
 * its bound plus (K - cycles started) cycle costs, at least
 * KW_ETA_CYCLES_MORE_MIN of one, scaled by kw_eta_ratio (the full evaluations
 * the bound's candidates became: the rest were aliases or screened out),
 * capped by the budget. Rejected: a geometric restart model (the rule of
 * succession over cycles ended by restart or finish): shapes run in lock-step
 * and finish together at the end, so restarts are seen long before any finish
 * and that estimate ran 5-20x high on the recording.
 *
 * Stop 48 (tests/data/eta/default_seed1_aliases.txt, today's search: the
 * multi-fidelity screening and the aliases): the unscaled model read 2.8-26x
 * the full evaluations left from 10% to 80% of the run; scaled and capped,
 * 1.22-2.14x from 10% to 25%, 0.86-1.49x from 26% to 80%, 0.41-1.14x from
 * 80% to 90% (the last shape restarting its proof).
 */
#ifndef KW_ETA_H
#define KW_ETA_H

/* A restart is the bound growing by at least this share of itself... */
#define KW_ETA_JUMP_SHARE 0.2
/* ...once the shape has spent this share of the bound (mid-proof jumps, a
 * probe moving the incumbent before its list is through, are not cycles). */
#define KW_ETA_SPENT_SHARE 0.9
/* Cycles every shape needs before any has finished (a first optimum and at
 * least one proof that it holds). */
#define KW_ETA_CYCLES_MIN 2
/* ...and at most (stop 48): with the multi-fidelity screening and the aliases a
 * shape restarts its proof many times, each a fraction of a proof's bound, so
 * the most cycles any shape has started (3-8 on the default job) counted whole
 * proofs never made: the ETA read 2.8-11x the evaluations really left from 10%
 * to 80% of the default job (seed 1, 3,911 full evaluations). 1.75 was fitted
 * on the recordings: tests/data/eta/default_seed1_aliases.txt (today's search)
 * and default_seed7.txt (before the screening: 0.54-0.68 of the evaluations
 * left from 5% to 50%, where 1.5 read 0.44). */
#define KW_ETA_CYCLES_MAX 1.75
/* An unfinished shape is expected to need at least this share of a proof more
 * than its current bound: the last shape running restarted its proof 5-8 times
 * on the default job, each time just as its bound was spent, so without it the
 * estimate fell to 0.02-0.4 of the evaluations really left at 85-90% of the
 * run. */
#define KW_ETA_CYCLES_MORE_MIN 0.5
/* The re-rank (kw_ofat.c "the re-rank": at its finish a shape compares its best
 * with its rivals on long paired samples, no evaluation spent, 18-30% of the
 * default job's search time and 28-71% of the validate spaces'): before any
 * shape has finished, a shape's re-rank is expected to compare half its one-knob
 * neighbours (the rival basins; 25-31 comparisons of 57 neighbours on the default
 * job's shapes, 4-13 of 12-16 on validate_*) at the first sample size... */
#define KW_ETA_RERANK_CMP_SHARE 0.5
/* ...and before any comparison was timed, one comparison of 2 x 40,000 requests
 * costs this many evaluations' time (measured 3.9-27.7, median 9, over the
 * default job and the 15 validate spaces; stop 48). */
#define KW_ETA_RERANK_CMP_EVALS 10.0

typedef struct kw_eta_shape {
    long evals, bound;   /* the last figures fed */
    long used, spent;    /* the calibration: full evaluations made, and candidates of
                          * the bound spent (made, aliased or screened out), while
                          * the bound did not grow */
    long rr_requests;    /* the re-rank's requests (kw_eta_rerank) */
    long cycle_cost;     /* evaluations one proof costs (the first jump), 0 before it */
    int cycles;          /* cycles started (0 while in the first sweep) */
    int done;
    int seen;
} kw_eta_shape;

typedef struct kw_eta {
    int n;
    kw_eta_shape *s;
    double rr_prior;     /* a shape's re-rank requests expected before any shape has
                          * finished (kw_eta_rerank_prior); 0: no re-rank */
} kw_eta;

/* An estimator for n shapes. 0, or KW_ENOMEM. */
int kw_eta_init(kw_eta *e, int n);
void kw_eta_free(kw_eta *e);

/* Shape i now: evaluations so far, the engine's bound (its evaluations when
 * it stops if nothing improves; >= evals), finished or not. */
void kw_eta_feed(kw_eta *e, int i, long evals, long bound, int done);

/* 1 once the estimate rests on the run's own evidence: some shape has found
 * its first local optimum (the bound jumped: the cost of a proof is known)
 * or finished. Before that the estimate is only the first sweeps' remainder,
 * a lower bound: on the default job (seed 1, --threads 1, stop 47) it read
 * 0.25-0.6 of the search time really left at 1-5% of the run (2.0-5.0 s of
 * 8.2-8.4 s), and on tests/data/eta/default_seed7.txt 3-15% of the
 * evaluations left; the progress says so ("ETA >=..., first sweeps")
 * instead of showing it as an estimate. */
int kw_eta_evidence(const kw_eta *e);

/* The screening's and the aliases' savings (stop 48): the engine's bound counts
 * candidates (every unseen neighbour, the probe list, the excursion's sweeps),
 * and only some become full evaluations: the others are aliases of an earlier
 * evaluation or ruled out by their cheap estimate. The ratio of full
 * evaluations made to candidates of the bound spent, over every stretch where
 * a shape's bound did not grow (its finish included), all shapes together; 1
 * before any. On the default job it falls from 0.9 in the first sweeps to 0.3
 * at 30% of the run and 0.14 at its end. */
double kw_eta_ratio(const kw_eta *e);
/* A shape whose bound has lost this many candidates is scaled by its own
 * ratio instead: the shapes differ (0.06-0.12 on the default job's first three
 * at their finish, 0.2-0.5 on attn_decode_kv2048_b32_c16, the last one
 * running), and the run's ratio made the last shape's estimate 2-5x low from
 * 60% of the run (0.27x of the evaluations left at 80-90%; its own: 0.41x). */
#define KW_ETA_RATIO_OWN_MIN 400

/* Evaluations the unfinished shapes still need (model above, each scaled by
 * kw_eta_ratio or its own, at most KW_ETA_CYCLES_MAX cycles), each capped by
 * budget - evals when budget > 0. */
long kw_eta_left(const kw_eta *e, long budget);
/* The same for shape i alone (0 when finished). */
long kw_eta_shape_left(const kw_eta *e, int i, long budget);

/* The re-rank: shape i's requests journalled so far, and what a shape's
 * re-rank is expected to cost before any has finished (neighbours: its one-knob
 * neighbours; n0: the first sample size, KW_RERANK_N0, x5 for p99; 0: this run
 * makes no re-rank). */
void kw_eta_rerank(kw_eta *e, int i, long requests);
void kw_eta_rerank_prior(kw_eta *e, long neighbours, long n0);
/* Requests the unfinished shapes' re-ranks are still expected to cost: each the
 * finished shapes' mean (those without a re-rank count 0) once one has
 * finished, else the prior. */
double kw_eta_rerank_left(const kw_eta *e);

#endif
