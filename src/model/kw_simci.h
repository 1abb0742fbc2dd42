/* kw_simci.h - the 95% confidence interval of a simulated latency quantile
 * (p95, p99) that stays honest when the samples are correlated, as queueing
 * latencies are: a request that waits behind a backlog is followed by others
 * that wait behind the same backlog.
 *
 * The interval is the union of two:
 *   - the distribution-free order-statistic interval [x_(l), x_(u)],
 *     l, u = n p -/+ z sqrt(n p (1 - p)) (Hahn & Meeker, Statistical
 *     Intervals, 1991): exact for independent samples, too narrow for
 *     correlated ones (kw_simci_iid);
 *   - batch quantiles (sectioning): the time-ordered sample cut into k
 *     contiguous batches, the p-quantile Q_j of each, and the interval
 *     Q -/+ t_{k-1, 0.975} S / sqrt(k) around the whole sample's quantile Q,
 *     S the standard deviation of the Q_j (A. F. Seila, "A batching approach
 *     to quantile estimation in regenerative simulations", Management Science
 *     28(5), 1982; S. Asmussen & P. W. Glynn, Stochastic Simulation:
 *     Algorithms and Analysis, Springer 2007, ch. III (sectioning) and ch. IV
 *     (batch means for steady-state simulation)). Batches much longer than
 *     the correlation time are nearly independent, so S sees the correlation
 *     that the order-statistic interval ignores.
 * On independent samples both estimate the same spread (a batch quantile's
 * variance is k times the whole sample's), so the union is the order-statistic
 * interval widened only by the t quantile and the noise of S; on correlated
 * samples the batch interval is the wider one. The union never reports less
 * uncertainty than the order-statistic interval, which stays a lower bound.
 *
 * Rejected: the order-statistic interval with the binomial variance replaced
 * by a spectral estimate at the quantile (Heidelberger & Lewis, Operations
 * Research 32(1), 1984): one more estimator to tune (window, lag) for what the
 * batches give with one constant.
 */
#ifndef KW_SIMCI_H
#define KW_SIMCI_H

#include <stddef.h>

/* Batch count (Schmeiser, "Batch size effects in the analysis of simulation
 * output", Operations Research 30(3), 1982: 10 to 30 batches; fewer batches
 * widen t, more shorten them below the correlation time). */
#define KW_SIMCI_MAX_BATCHES 20
/* Fewest batches: t_{4, 0.975} = 2.78 against z = 1.96; fewer makes the
 * interval mostly the t quantile's. */
#define KW_SIMCI_MIN_BATCHES 5
/* Samples above the quantile each batch should hold: a batch's p-quantile
 * reads the order statistics near rank m p, and with fewer than this many
 * above it the batch quantile is nearly the batch maximum (biased low, its
 * spread the maximum's); the batch count falls to keep it, down to
 * KW_SIMCI_MIN_BATCHES (the rule of thumb n p >= 5 of the binomial's normal
 * approximation). */
#define KW_SIMCI_MIN_TAIL 5.0
/* Fewest samples per batch: below KW_SIMCI_MIN_BATCHES batches of this size
 * the sample gets the order-statistic interval alone. */
#define KW_SIMCI_MIN_BATCH_SIZE 20

/* How many batches an n-sample p-quantile is cut into:
 * clamp(floor(n (1 - p) / KW_SIMCI_MIN_TAIL), MIN_BATCHES, MAX_BATCHES),
 * at most n / KW_SIMCI_MIN_BATCH_SIZE; 0 when even MIN_BATCHES batches would
 * be shorter than KW_SIMCI_MIN_BATCH_SIZE (no batch interval). */
int kw_simci_batches(size_t n, double p);

/* First sample of batch j of k over n samples: n j / k (batch j spans
 * [start(j), start(j + 1)); start(k) = n). */
size_t kw_simci_batch_start(size_t n, int k, int j);

/* The 0-based ranks [l, u] of the order-statistic interval of the p-quantile
 * of n >= 1 independent samples (95%). */
void kw_simci_iid_ranks(size_t *l, size_t *u, size_t n, double p);

/* Whether n independent samples bound the p-quantile from above at 95%:
 * the order-statistic interval's upper rank ceil(n p + z sqrt(n p (1 - p)))
 * is within the sample. Where it is not (p99: fewer than 381 samples),
 * kw_simci_iid_ranks clamps it to the largest sample, which lies below the
 * true quantile with probability p^n (0.99^200 = 13%, not 2.5%), and the
 * interval's upper end is no 95% bound. */
int kw_simci_upper_held(size_t n, double p);

/* Whether the batch quantiles bq[0..k) are positively serially correlated:
 * Young's test at 5% (L. C. Young, "On randomness in ordered sequences",
 * Annals of Mathematical Statistics 12(3), 1941): the von Neumann statistic
 * C = 1 - sum (x_i - x_{i+1})^2 / (2 sum (x_i - mean)^2) has mean 0 and
 * variance (k - 2) / (k^2 - 1) for independent x; C above 1.645 of its
 * standard deviations says the batches are shorter than the correlation
 * time. Batch-size rules built on this test: G. S. Fishman, "Grouping
 * observations in digital simulation", Management Science 24(5), 1978;
 * Law & Carson, Operations Research 27(5), 1979. */
int kw_simci_correlated(const double *bq, int k);

/* The next batch count after kw_simci_correlated said k batches were too
 * short: k / 2 (pairs merged), or 0 when that falls below
 * KW_SIMCI_MIN_BATCHES (keep k: the sample is shorter than the correlation
 * time, and only a longer sample helps). */
int kw_simci_fewer(int k);

/* Half-width t_{k-1, 0.975} S / sqrt(k) of the batch interval from the k >= 2
 * batch quantiles bq[0..k) (GSL: gsl_stats_sd, gsl_cdf_tdist_Pinv). */
double kw_simci_halfwidth(const double *bq, int k);

/* Widen [*lo, *hi] (the order-statistic interval) to hold q -/+ half (the
 * batch interval around the whole sample's quantile q); the lower end is
 * never below 0 (a latency). */
void kw_simci_join(double *lo, double *hi, double q, double half);

/* The order-statistic interval of the p-quantile of sorted[0..n). */
void kw_simci_iid(double *lo, double *hi, const double *sorted, size_t n, double p);

/* The interval of the p-quantile of seq[0..n) (in time order: batches are
 * contiguous stretches of it), the union above, with the batch count halved
 * while kw_simci_correlated; the quantile itself is GSL's
 * (gsl_stats_quantile_from_sorted_data's double, read by selection:
 * kw_simci_select_quantile, gsl_stats_select): O(n) on average, one copy of
 * seq (until 2026-12-07 it sorted copies, O(n log n)). Returns 0 or KW_ENOMEM. The simulation computes the same from its sort keys
 * (kw_sim.c); this is the form tests and other sources of samples call. */
int kw_simci_interval(double *lo, double *hi, const double *seq, size_t n, double p);

/* Samples above the quantile each batch of a PAIRED comparison holds at
 * least: a batch difference is read from two batch quantiles whose bias
 * (short batches read the p-quantile low) and whose correlation across
 * batches differ between the two queues, and the difference's spread is
 * small, so what the separate intervals absorb (their union with the order
 * statistics) shows here as undercoverage. Measured on two M/M/1 queues on
 * the same arrivals (rho 0.7, the second's service x 0.8; tests/test_simci.c,
 * 400 replications, coverage of the true difference): 5 above per batch
 * (the separate intervals' rule) covered p95 86% and p99 55% at 10,000
 * samples, 25 above 85-91%, 100 above 91-95% (p95 at 20,000: 10 batches of
 * 100 above 91.2%; p95 and p99 at 50,000 with 100-125 above 95-96%). */
#define KW_SIMCI_PAIR_MIN_TAIL 100.0

/* Samples above the quantile a paired comparison's whole sample holds at
 * least (p95: 40,000 samples, p99: 200,000). Below it the difference's
 * sampling distribution is skewed: its rare large values come from the
 * rare long busy periods, where the faster queue drains and the slower does
 * not, so a short sample that holds few of them reads the difference too
 * small AND its batches too alike, and a symmetric t interval misses on that
 * side only. Measured on the M/M/1 pair above (rho 0.7, service x 0.8, 400
 * replications, coverage of the true difference; truth above the interval
 * / below it): p95 at 20,000 (1,000 above, 10 batches) 91.7% (31 / 2), at
 * 40,000 (2,000 above, 20 batches) 95.5% (14 / 4), at 80,000 94.3%
 * (13 / 10); p99 at 50,000 95.3% (16 / 3), 100,000 94.8% (19 / 2), 200,000
 * 97.5% (3 / 2 of 200). The miss above the interval is the one that can
 * declare the slower of two configurations the faster (the ranking verdict
 * reads the interval's upper end): 7.8% against the nominal 2.5% at 20,000,
 * 3.5% at 40,000 (p95); 4.75% at 100,000, 1.5% at 200,000 (p99). Not
 * fixed by the batch count (p95 at 20,000 with 5 batches: 92.7%, with 20:
 * 90.7%), nor by centring on the batches' mean (90.7%): the sample is too
 * short, so the minimum is stated here rather than corrected. The skew,
 * measured over the same replications (p95, 10-20 batches): the
 * difference's skewness 0.37 at 20,000, 0.32 at 40,000, 0.08 at 200,000;
 * its correlation with its own half-width 0.54, 0.41, 0.35 (a low reading
 * comes with a narrow interval: the miss on one side). */
#define KW_SIMCI_PAIR_MIN_ABOVE 2000.0

/* How many batches a paired comparison of two n-sample p-quantiles uses:
 * min(floor(n (1 - p) / KW_SIMCI_PAIR_MIN_TAIL), KW_SIMCI_MAX_BATCHES), or 0
 * (no paired interval: the sample is too short) when n (1 - p) is below
 * KW_SIMCI_PAIR_MIN_ABOVE: p95 needs 40,000 samples, p99 200,000 (20
 * batches either way). */
int kw_simci_pair_batches(size_t n, double p);

/* The half-width each of `looks` planned looks at a paired difference must
 * use so that the intervals of ALL the looks hold the true difference
 * together with probability at least 1 - alpha (Bonferroni's inequality:
 * each at level 1 - alpha / looks; O. J. Dunn, "Multiple comparisons among means",
 * JASA 56(293), 1961; for repeated looks at accumulating data,
 * C. Jennison & B. W. Turnbull, Group Sequential Methods with Applications
 * to Clinical Trials, Chapman & Hall 2000, sec. 2.2 and ch. 9 (repeated
 * confidence intervals): the union bound holds whatever the looks'
 * correlation, nested samples included, and is conservative for them).
 * Given a 95% half-width half95 read from k batches
 * (t_{k-1, 0.975} S / sqrt(k)) and the run's level 1 - alpha (the space's
 * <tuning alpha>, 0.05 by default): half95 x t_{k-1, 1 - alpha / (2 looks)}
 * / t_{k-1, 0.975}; half95 itself for one look at alpha 0.05 (bit for bit),
 * NAN for k < 2 or alpha outside (0, 1). So a sequence that declares rank 1
 * the faster the first time a look's interval lies below 0 does so falsely
 * (rank 1 not faster) with probability at most alpha / 2 over all its
 * looks, as one look at level 1 - alpha would (until 2026-12-07 the level
 * was 95% whatever the run's alpha).
 * Rejected: Pocock's and O'Brien & Fleming's boundaries (Biometrika 64(2),
 * 1977; Biometrics 35(3), 1979): tabulated for equally spaced looks and a
 * normal statistic, where ours double the sample and read a t with 5-20
 * batches; the Lan-DeMets spending function that handles unequal spacing
 * needs the looks' joint distribution, which the batch t does not give. */
double kw_simci_pair_half_looks(double half95, int batches, int looks, double alpha);

/* The p-quantile of x[0..n) exactly as gsl_stats_quantile_from_sorted_data
 * reads it from the sorted x (the same order statistics, the same weights:
 * the same double), found by selection (gsl_stats_select, then one pass for
 * the next order statistic): O(n) on average against the sort's
 * O(n log n). x is reordered. 0 for n = 0. */
double kw_simci_select_quantile(double *x, size_t n, double p);

/* The paired comparison of two samples' p-quantiles on common random
 * numbers: a[0..n) and b[0..n) in time order, element i of both the same
 * request (two mappings simulated on the same arrivals, kw_sim_opts
 * keep_order). *diff = Q(a) - Q(b), the whole samples' quantiles (GSL's
 * definition, as the simulation's figures); *half the half-width of its 95%
 * interval t_{k-1, 0.975} S_D / sqrt(k), S_D the standard deviation of the k
 * batch differences D_j = Q_j(a) - Q_j(b) over the same contiguous batches
 * (kw_simci_pair_batches; halved while kw_simci_correlated finds the D_j
 * serially correlated); *batches = k. Sectioning on paired batches: Asmussen & Glynn,
 * Stochastic Simulation 2007, ch. III (sectioning) and ch. V.6 (common random
 * numbers): where a and b move together (the same bursts fill both queues)
 * the D_j vary far less than either sample's Q_j, so the interval of the
 * difference is narrower than the two separate intervals taken together.
 * No order-statistic part: the difference has no distribution-free
 * interval; the batches are all of it. A sample too short for paired
 * batches (kw_simci_pair_batches 0): *half NAN, *batches 0. Selects in
 * copies (kw_simci_select_quantile): O(n).
 * Returns 0 or KW_ENOMEM. */
int kw_simci_paired(double *diff, double *half, int *batches, const double *a, const double *b,
                    size_t n, double p);

#endif
