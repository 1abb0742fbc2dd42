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
 * optimum can be the last). A shape's estimate is its bound plus
 * (K - cycles started) cycle costs, never below the bound, capped by the
 * budget. Rejected: a geometric restart model (the rule of succession over
 * cycles ended by restart or finish): shapes run in lock-step and finish
 * together at the end, so restarts are seen long before any finish and that
 * estimate ran 5-20x high on the recording.
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

typedef struct kw_eta_shape {
    long evals, bound;   /* the last figures fed */
    long cycle_cost;     /* evaluations one proof costs (the first jump), 0 before it */
    int cycles;          /* cycles started (0 while in the first sweep) */
    int done;
    int seen;
} kw_eta_shape;

typedef struct kw_eta {
    int n;
    kw_eta_shape *s;
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

/* Evaluations the unfinished shapes still need (model above), each capped
 * by budget - evals when budget > 0. */
long kw_eta_left(const kw_eta *e, long budget);
/* The same for shape i alone (0 when finished). */
long kw_eta_shape_left(const kw_eta *e, int i, long budget);

#endif
