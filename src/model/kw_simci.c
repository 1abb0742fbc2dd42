/* kw_simci.c - a correlation-honest interval of a simulated latency quantile
 * (see kw_simci.h for the method and its sources).
 *
 * Design: the batch count is a pure function of (n, p), so the interval is a
 * pure function of the sample: same seed, same bytes. The simulation reads
 * its batches from its own sort keys (kw_sim.c, radix sort, O(n)); this file
 * holds the rules both use (batch count, ranks, half-width, union) and a
 * double-array form for tests and other samples.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>

#include "kw_error.h"
#include "kw_simci.h"

#define KW_SIMCI_Z95 1.959963984540054 /* standard normal 97.5% quantile */
#define KW_SIMCI_UPPER 0.975            /* two-sided 95% */
#define KW_SIMCI_Z95_ONE_SIDED 1.644853626951472 /* standard normal 95% quantile (Young's test) */

int kw_simci_batches(size_t n, double p)
{
    if (n < (size_t)KW_SIMCI_MIN_BATCHES * KW_SIMCI_MIN_BATCH_SIZE)
        return 0;
    double k = floor((double)n * (1.0 - p) / KW_SIMCI_MIN_TAIL);
    if (k > KW_SIMCI_MAX_BATCHES)
        k = KW_SIMCI_MAX_BATCHES;
    if (k < KW_SIMCI_MIN_BATCHES)
        k = KW_SIMCI_MIN_BATCHES;
    if (k > (double)(n / KW_SIMCI_MIN_BATCH_SIZE))
        k = (double)(n / KW_SIMCI_MIN_BATCH_SIZE);
    return (int)k;
}

size_t kw_simci_batch_start(size_t n, int k, int j)
{
    return (size_t)((unsigned long long)n * (unsigned)j / (unsigned)k);
}

void kw_simci_iid_ranks(size_t *l, size_t *u, size_t n, double p)
{
    double c = n * p, h = KW_SIMCI_Z95 * sqrt(n * p * (1 - p));
    double lo = floor(c - h) - 1, hi = ceil(c + h) - 1; /* 1-based ranks to 0-based */
    if (lo < 0)
        lo = 0;
    if (hi > (double)(n - 1))
        hi = (double)(n - 1);
    if (hi < 0)
        hi = 0;
    *l = (size_t)lo;
    *u = (size_t)hi;
}

int kw_simci_upper_held(size_t n, double p)
{
    double c = n * p, h = KW_SIMCI_Z95 * sqrt(n * p * (1 - p));
    return n > 0 && ceil(c + h) <= (double)n; /* the 1-based rank kw_simci_iid_ranks reads */
}

int kw_simci_correlated(const double *bq, int k)
{
    if (k < 3)
        return 0;
    double mean = gsl_stats_mean(bq, 1, (size_t)k), ss = 0, sd = 0;
    for (int i = 0; i < k; i++)
        ss += (bq[i] - mean) * (bq[i] - mean);
    for (int i = 0; i + 1 < k; i++)
        sd += (bq[i] - bq[i + 1]) * (bq[i] - bq[i + 1]);
    if (!(ss > 0))
        return 0;
    double c = 1.0 - sd / (2.0 * ss), var = (double)(k - 2) / ((double)k * k - 1.0);
    return c > KW_SIMCI_Z95_ONE_SIDED * sqrt(var);
}

int kw_simci_fewer(int k)
{
    return k / 2 >= KW_SIMCI_MIN_BATCHES ? k / 2 : 0;
}

double kw_simci_halfwidth(const double *bq, int k)
{
    if (k < 2)
        return 0.0;
    double s = gsl_stats_sd(bq, 1, (size_t)k);
    return gsl_cdf_tdist_Pinv(KW_SIMCI_UPPER, (double)(k - 1)) * s / sqrt((double)k);
}

void kw_simci_join(double *lo, double *hi, double q, double half)
{
    if (!(half > 0))
        return;
    double a = q - half, b = q + half;
    if (a < 0)
        a = 0;
    if (a < *lo)
        *lo = a;
    if (b > *hi)
        *hi = b;
}

void kw_simci_iid(double *lo, double *hi, const double *sorted, size_t n, double p)
{
    if (n == 0) {
        *lo = *hi = 0;
        return;
    }
    size_t l, u;
    kw_simci_iid_ranks(&l, &u, n, p);
    *lo = sorted[l];
    *hi = sorted[u];
}


int kw_simci_pair_batches(size_t n, double p)
{
    if ((double)n * (1.0 - p) < KW_SIMCI_PAIR_MIN_ABOVE)
        return 0;
    double k = floor((double)n * (1.0 - p) / KW_SIMCI_PAIR_MIN_TAIL);
    if (k > KW_SIMCI_MAX_BATCHES)
        k = KW_SIMCI_MAX_BATCHES;
    return k < KW_SIMCI_MIN_BATCHES ? 0 : (int)k;
}

double kw_simci_pair_half_looks(double half95, int batches, int looks, double alpha)
{
    if (batches < 2 || !(alpha > 0.0 && alpha < 1.0))
        return NAN;
    /* 1 - 0.05 / 2 is the double 0.975 itself: at the default level every
     * figure is the one the 95% code gave, bit for bit */
    double upper = 1.0 - alpha / 2.0;
    if (looks < 1)
        looks = 1;
    if (looks == 1 && upper == KW_SIMCI_UPPER)
        return half95;
    double df = (double)(batches - 1);
    return half95 * gsl_cdf_tdist_Pinv(1.0 - (1.0 - upper) / looks, df) /
           gsl_cdf_tdist_Pinv(KW_SIMCI_UPPER, df);
}

double kw_simci_select_quantile(double *x, size_t n, double p)
{
    if (n == 0)
        return 0.0;
    /* gsl_stats_quantile_from_sorted_data's ranks and weights, term for term */
    const double index = p * (double)(n - 1);
    const size_t lhs = (size_t)(int)index;
    const double delta = index - (double)lhs;
    double lo = gsl_stats_select(x, 1, n, lhs);
    if (lhs == n - 1)
        return lo;
    /* the next order statistic: lo again when more than lhs + 1 values are
     * at most lo, else the smallest value above lo */
    size_t le = 0;
    double hi = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (x[i] <= lo)
            le++;
        else if (x[i] < hi)
            hi = x[i];
    }
    return (1 - delta) * lo + delta * (le > lhs + 1 ? lo : hi);
}

/* The p-quantile of seq[s..e), selected in x[s..e) (a copy of seq's batch). */
static double kw_simci_batch_q(double *x, const double *seq, size_t s, size_t e, double p)
{
    memcpy(x + s, seq + s, (e - s) * sizeof *x);
    return kw_simci_select_quantile(x + s, e - s, p);
}

int kw_simci_interval(double *lo, double *hi, const double *seq, size_t n, double p)
{
    *lo = *hi = 0;
    if (n == 0)
        return 0;
    int k = kw_simci_batches(n, p);
    double *x = malloc(n * sizeof *x);
    if (!x)
        return kw_error_set(KW_ENOMEM, "out of memory for %zu latencies", n);
    double bq[KW_SIMCI_MAX_BATCHES];
    /* by selection, as kw_simci_paired: each batch's quantile, the whole
     * sample's and its two order statistics are the sorted read's doubles
     * (tests/test_simci.c) in O(n) on average against the sorts' O(n log n)
     * (until 2026-12-07 each batch and the sample were sorted) */
    for (int next = k; next > 0; next = kw_simci_correlated(bq, k) ? kw_simci_fewer(k) : 0) {
        k = next;
        for (int j = 0; j < k; j++)
            bq[j] = kw_simci_batch_q(x, seq, kw_simci_batch_start(n, k, j),
                                     kw_simci_batch_start(n, k, j + 1), p);
    }
    double q = kw_simci_batch_q(x, seq, 0, n, p);
    size_t l, u;
    kw_simci_iid_ranks(&l, &u, n, p);
    *lo = gsl_stats_select(x, 1, n, l); /* x: a permutation of seq */
    *hi = gsl_stats_select(x, 1, n, u);
    kw_simci_join(lo, hi, q, kw_simci_halfwidth(bq, k));
    free(x);
    return 0;
}

int kw_simci_paired(double *diff, double *half, int *batches, const double *a, const double *b,
                    size_t n, double p)
{
    *diff = 0;
    *half = NAN;
    *batches = 0;
    if (n == 0)
        return 0;
    double *x = malloc(2 * n * sizeof *x);
    if (!x)
        return kw_error_set(KW_ENOMEM, "out of memory for %zu paired latencies", n);
    double *y = x + n;
    int k = kw_simci_pair_batches(n, p);
    double d[KW_SIMCI_MAX_BATCHES];
    for (int next = k; next > 0; next = kw_simci_correlated(d, k) ? kw_simci_fewer(k) : 0) {
        k = next;
        for (int j = 0; j < k; j++) {
            size_t s = kw_simci_batch_start(n, k, j), e = kw_simci_batch_start(n, k, j + 1);
            d[j] = kw_simci_batch_q(x, a, s, e, p) - kw_simci_batch_q(y, b, s, e, p);
        }
    }
    if (k > 0) {
        *half = kw_simci_halfwidth(d, k);
        *batches = k;
    }
    *diff = kw_simci_batch_q(x, a, 0, n, p) - kw_simci_batch_q(y, b, 0, n, p);
    free(x);
    return 0;
}
