/* kw_mstat.h - statistics of measured samples for the measuring evaluator:
 * the outlier policy, the median with its distribution-free confidence
 * interval, percentiles with order-statistic intervals, and the
 * Mann-Whitney U test for comparing two sets of raw samples.
 *
 * Everything here works on raw timing samples, which are right-skewed (a
 * kernel cannot run faster than its floor, interrupts and cache misses only
 * add time), so nothing assumes normality: intervals come from order
 * statistics (the binomial distribution of the rank, GSL), the two-sample
 * test is rank-based. The engine's own Welch test (search/) is applied one
 * level up, to per-repetition statistics, which are close to normal.
 */
#ifndef KW_MSTAT_H
#define KW_MSTAT_H

#include <stddef.h>

/* Outlier policy: a sample above median + KW_MSTAT_OUTLIER_MADS x 1.4826 x MAD
 * (MAD: median absolute deviation; 1.4826 makes it estimate the standard
 * deviation of a normal, Rousseeuw & Croux 1993) is dropped, one-sided because
 * timing noise only adds time (a preemption, a page fault). When more than
 * KW_MSTAT_OUTLIER_MAX_FRAC of the samples would go, none is dropped: that is a
 * second mode of the distribution, not an outlier. */
#define KW_MSTAT_OUTLIER_MADS 5.0
#define KW_MSTAT_OUTLIER_MAX_FRAC 0.2
#define KW_MSTAT_MAD_TO_SD 1.4826

/* Sort x ascending and drop outliers by the policy above; returns the number
 * kept (x[0..kept-1] sorted). n >= 1. */
size_t kw_mstat_trim(double *x, size_t n);

/* Distribution-free confidence interval of the q-quantile of sorted x at
 * level `level` (e.g. 0.95): the ranks l < u with P(l <= B < u) >= level,
 * B ~ Binomial(n, q) (Hahn & Meeker, Statistical Intervals, 1991, 5.2).
 * lo and hi receive x[l] and x[u]; when n is too small for the level, the sample's
 * extremes (the interval is then wider than stated). */
void kw_mstat_quantile_ci(double *lo, double *hi, const double *sorted, size_t n, double q,
                          double level);

/* Two-sided Mann-Whitney U test p-value (normal approximation with tie
 * correction and continuity correction; Mann & Whitney 1947) that x and y come
 * from the same distribution. NAN when either is empty. */
double kw_mstat_mann_whitney_p(const double *x, size_t nx, const double *y, size_t ny);

#endif
