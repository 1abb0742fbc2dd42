/* kw_mf.c - multi-fidelity screening rules (kw_mf.h).
 *
 * Design: the bound is a ratio range, not an additive error: the cheap
 * estimate leaves out effects (contention timing, burst carry-over) that
 * scale a shape's figures more than they shift them, so a shape's ratios
 * cluster while its absolute errors grow with the figure. The alternative
 * rejected: a fixed tolerance for every shape - on the validation spaces the
 * ratio range runs from 0.5-1.0 on one shape to 0.1-40 on another (make bench
 * --only screen), so any fixed number either skips good candidates or none.
 */
#include <math.h>
#include <stdlib.h>

#include "kw_mf.h"

void kw_mf_bound_init(kw_mf_bound *b)
{
    b->n_pairs = 0;
    b->min_ratio = INFINITY;
    b->max_ratio = 0.0;
}

int kw_mf_bound_add(kw_mf_bound *b, double est, double full)
{
    if (!(isfinite(est) && est > 0.0 && isfinite(full) && full > 0.0))
        return 0;
    double r = full / est;
    if (r < b->min_ratio)
        b->min_ratio = r;
    if (r > b->max_ratio)
        b->max_ratio = r;
    b->n_pairs++;
    return 1;
}

int kw_mf_can_gain(const kw_mf_bound *b, double est, double inc, double min_effect_pct)
{
    if (b->n_pairs < KW_MF_MIN_PAIRS || !isfinite(inc))
        return 1;
    if (!isfinite(est))
        return 0;
    double lowest = est * b->min_ratio * (1.0 - KW_MF_SAFETY);
    return lowest < inc * (1.0 - min_effect_pct / 100.0);
}

typedef struct kw_mf_key {
    int i, fails;
    double est;
} kw_mf_key;

static int kw_mf_cmp(const void *a, const void *b)
{
    const kw_mf_key *x = a, *y = b;
    int fx = !isfinite(x->est), fy = !isfinite(y->est);
    if (fx != fy)
        return fx - fy;
    if (x->fails != y->fails)
        return x->fails - y->fails;
    if (!fx && x->est != y->est)
        return x->est < y->est ? -1 : 1;
    return x->i - y->i;
}

void kw_mf_order(int *order, const double *est, const int *fails, int n)
{
    kw_mf_key *k = malloc((size_t)(n > 0 ? n : 1) * sizeof *k);
    if (!k) { /* no memory: plan order, which is always a valid order */
        for (int i = 0; i < n; i++)
            order[i] = i;
        return;
    }
    for (int i = 0; i < n; i++) {
        k[i].i = i;
        k[i].est = est[i];
        k[i].fails = fails ? fails[i] != 0 : 0;
    }
    qsort(k, (size_t)n, sizeof *k, kw_mf_cmp);
    for (int i = 0; i < n; i++)
        order[i] = k[i].i;
    free(k);
}
