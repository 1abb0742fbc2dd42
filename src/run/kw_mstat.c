/* kw_mstat.c - statistics of measured samples (see kw_mstat.h).
 *
 * Design choice: rank- and order-statistic methods only, on GSL's sorting,
 * quantile and distribution functions. Rejected: mean and standard deviation
 * of raw kernel times with a normal interval -- a single preempted run moves
 * the mean by more than the one-knob effects being judged.
 */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "kw_mstat.h"

size_t kw_mstat_trim(double *x, size_t n)
{
    if (n == 0)
        return 0;
    gsl_sort(x, 1, n);
    double med = gsl_stats_median_from_sorted_data(x, 1, n);
    double *dev = malloc(n * sizeof *dev);
    if (!dev)
        return n; /* out of memory: keep everything (the median is robust anyway) */
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs(x[i] - med);
    gsl_sort(dev, 1, n);
    double mad = gsl_stats_median_from_sorted_data(dev, 1, n);
    free(dev);
    double cut = med + KW_MSTAT_OUTLIER_MADS * KW_MSTAT_MAD_TO_SD * mad;
    size_t kept = n;
    while (kept > 1 && x[kept - 1] > cut)
        kept--;
    if ((double)(n - kept) > KW_MSTAT_OUTLIER_MAX_FRAC * (double)n)
        return n;
    return kept;
}

void kw_mstat_quantile_ci(double *lo, double *hi, const double *sorted, size_t n, double q,
                          double level)
{
    *lo = sorted[0];
    *hi = sorted[n - 1];
    if (n < 2)
        return;
    double tail = (1.0 - level) / 2.0;
    /* l: the largest rank with P(B < l) <= tail; u: the smallest with P(B >= u) <= tail,
     * where the interval [x_(l), x_(u)] (1-based ranks) covers the quantile when
     * l <= B < u. B ~ Binomial(n, q). */
    long l = 0, u = (long)n + 1;
    for (long k = 1; k <= (long)n; k++)
        if (gsl_cdf_binomial_P((unsigned)(k - 1), q, (unsigned)n) <= tail)
            l = k;
    for (long k = (long)n; k >= 1; k--)
        if (gsl_cdf_binomial_Q((unsigned)(k - 1), q, (unsigned)n) <= tail)
            u = k;
    if (l >= 1)
        *lo = sorted[l - 1];
    if (u <= (long)n)
        *hi = sorted[u - 1];
}

static int kw_mstat_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double kw_mstat_mann_whitney_p(const double *x, size_t nx, const double *y, size_t ny)
{
    if (nx == 0 || ny == 0)
        return NAN;
    size_t n = nx + ny;
    /* value then group (0 = x, 1 = y) packed as pairs */
    double *v = malloc(2 * n * sizeof *v);
    if (!v)
        return NAN;
    for (size_t i = 0; i < nx; i++) {
        v[2 * i] = x[i];
        v[2 * i + 1] = 0;
    }
    for (size_t i = 0; i < ny; i++) {
        v[2 * (nx + i)] = y[i];
        v[2 * (nx + i) + 1] = 1;
    }
    qsort(v, n, 2 * sizeof *v, kw_mstat_cmp);
    double rank_x = 0, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && v[2 * j] == v[2 * i])
            j++;
        double r = (double)(i + 1 + j) / 2.0; /* mid-rank of positions i+1..j */
        double t = (double)(j - i);
        ties += t * t * t - t;
        for (size_t k = i; k < j; k++)
            if (v[2 * k + 1] == 0)
                rank_x += r;
        i = j;
    }
    free(v);
    double U = rank_x - (double)nx * (nx + 1) / 2.0;
    double mu = (double)nx * ny / 2.0;
    double var = (double)nx * ny / 12.0 * ((n + 1) - ties / ((double)n * (n - 1)));
    if (!(var > 0))
        return 1.0;
    double z = (fabs(U - mu) - 0.5) / sqrt(var);
    if (z < 0)
        z = 0;
    return 2.0 * gsl_cdf_ugaussian_Q(z);
}
