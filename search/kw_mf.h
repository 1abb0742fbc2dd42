/* kw_mf.h - multi-fidelity screening: the rules by which the engine lets a
 * cheap estimate (the evaluator's predict()) order a round and skip the
 * candidates that cannot gain, trusting the estimate only within the error it
 * has shown on this shape.
 *
 * The error bound is the range of full / estimated primary over the pairs a
 * shape has evaluated both ways (guard-passing, finite, positive). A candidate
 * can gain when its estimate, scaled by the smallest ratio seen and shrunk by
 * a safety margin, is below the incumbent's figure less the minimum effect:
 *     est x min_ratio x (1 - KW_MF_SAFETY) < incumbent x (1 - min_effect / 100)
 * Until KW_MF_MIN_PAIRS pairs are known, nothing is skipped. Pure functions of
 * journaled figures: a resumed run recomputes the same decisions.
 */
#ifndef KW_MF_H
#define KW_MF_H

#define KW_MF_MIN_PAIRS 8   /* pairs before the bound is trusted at all */
#define KW_MF_FIRST_SHARE 2 /* the untrusted first round takes at most budget / 2 evaluations:
                             * at 12 (1% of validate_small_mlp) its 8 left 3 for the changes
                             * after it; with 6, 20 seeds of the quality table went 194 -> 207
                             * of 240 within 0.5% at 1% (README) */
#define KW_MF_SAFETY 0.25   /* the lower ratio is shrunk by this share: the next candidate may
                             * be further off than any seen (with 8 pairs, one in 9 is
                             * expected beyond the observed range, order statistics) */

typedef struct kw_mf_bound {
    int n_pairs;
    double min_ratio, max_ratio; /* full / estimate over the pairs */
} kw_mf_bound;

/* An empty bound (no pairs). */
void kw_mf_bound_init(kw_mf_bound *b);
/* Add a pair; ignored unless both are finite and > 0. Returns 1 when added. */
int kw_mf_bound_add(kw_mf_bound *b, double est, double full);
/* 1 when a candidate estimated at est may still gain min_effect_pct over the
 * incumbent's figure inc (lower is better), 0 when the bound rules it out. An
 * estimate that is not finite (infeasible, saturated) can gain only while the
 * bound is not trusted. */
int kw_mf_can_gain(const kw_mf_bound *b, double est, double inc, double min_effect_pct);
/* order[0..n) = 0..n-1 sorted by est ascending, failing (fails[i] != 0) after
 * passing, non-finite last, ties by index: the order a round is evaluated in
 * when the budget cannot take it whole. */
void kw_mf_order(int *order, const double *est, const int *fails, int n);

#endif
