/* kw_eta.c - the convergence estimate from the search's own cycles (see
 * kw_eta.h for the model and the recording that measured it). O(shapes) per
 * report; no allocation after kw_eta_init. */
#include <stdlib.h>

#include "kw_error.h"
#include "kw_eta.h"

int kw_eta_init(kw_eta *e, int n)
{
    e->n = n;
    e->s = calloc((size_t)(n > 0 ? n : 1), sizeof *e->s);
    return e->s ? 0 : kw_error_set(KW_ENOMEM, "out of memory for the progress estimate");
}

void kw_eta_free(kw_eta *e)
{
    free(e->s);
    e->s = NULL;
    e->n = 0;
}

void kw_eta_feed(kw_eta *e, int i, long evals, long bound, int done)
{
    if (i < 0 || i >= e->n)
        return;
    kw_eta_shape *s = &e->s[i];
    if (bound < evals)
        bound = evals;
    if (s->seen && bound <= s->bound) {
        /* the bound did not grow: what it lost beyond the evaluations made was
         * aliased or screened out (kw_eta_ratio) */
        s->used += evals - s->evals;
        s->spent += (evals - s->evals) + (s->bound - bound);
    }
    if (s->seen && bound > s->bound + KW_ETA_JUMP_SHARE * s->bound) {
        if (s->cycles == 0) {
            s->cycles = 1;
            s->cycle_cost = bound - evals;
        } else if (s->evals >= KW_ETA_SPENT_SHARE * s->bound) {
            s->cycles++;
        }
    }
    s->seen = 1;
    s->evals = evals;
    s->bound = bound;
    s->done = done;
}

/* K, the cycles every unfinished shape is expected to need, and the mean
 * proof cost of the shapes past their first optimum. */
static void kw_eta_model(const kw_eta *e, double *k, double *mean_cost)
{
    int n_done = 0, most = 0, n_cost = 0;
    double done_cycles = 0, cost = 0;
    for (int i = 0; i < e->n; i++) {
        const kw_eta_shape *s = &e->s[i];
        if (s->done) {
            n_done++;
            done_cycles += s->cycles;
        } else if (s->cycles > most) {
            most = s->cycles;
        }
        if (s->cycle_cost > 0) {
            cost += (double)s->cycle_cost;
            n_cost++;
        }
    }
    *k = n_done > 0 ? done_cycles / n_done : most > KW_ETA_CYCLES_MIN ? most : KW_ETA_CYCLES_MIN;
    if (*k > KW_ETA_CYCLES_MAX)
        *k = KW_ETA_CYCLES_MAX;
    *mean_cost = n_cost > 0 ? cost / n_cost : 0.0;
}

double kw_eta_ratio(const kw_eta *e)
{
    long used = 0, spent = 0;
    for (int i = 0; i < e->n; i++) {
        used += e->s[i].used;
        spent += e->s[i].spent;
    }
    return spent > 0 ? (double)used / (double)spent : 1.0;
}

static double kw_eta_one(const kw_eta_shape *s, double k, double mean_cost, double ratio,
                         long budget)
{
    if (s->done || !s->seen)
        return 0.0;
    double more = k - (s->cycles > 0 ? s->cycles : 1);
    if (more < KW_ETA_CYCLES_MORE_MIN)
        more = KW_ETA_CYCLES_MORE_MIN;
    double c = s->cycle_cost > 0 ? (double)s->cycle_cost : mean_cost;
    if (s->spent >= KW_ETA_RATIO_OWN_MIN) /* its own savings once it has shown them */
        ratio = (double)s->used / (double)s->spent;
    double x = ratio * ((double)(s->bound - s->evals) + more * c);
    if (budget > 0 && x > (double)(budget - s->evals))
        x = budget > s->evals ? (double)(budget - s->evals) : 0.0;
    return x;
}

long kw_eta_shape_left(const kw_eta *e, int i, long budget)
{
    if (i < 0 || i >= e->n)
        return 0;
    double k, mean_cost;
    kw_eta_model(e, &k, &mean_cost);
    return (long)(kw_eta_one(&e->s[i], k, mean_cost, kw_eta_ratio(e), budget) + 0.5);
}

long kw_eta_left(const kw_eta *e, long budget)
{
    double k, mean_cost, left = 0, ratio = kw_eta_ratio(e);
    kw_eta_model(e, &k, &mean_cost);
    for (int i = 0; i < e->n; i++)
        left += kw_eta_one(&e->s[i], k, mean_cost, ratio, budget);
    return (long)(left + 0.5);
}

int kw_eta_evidence(const kw_eta *e)
{
    for (int i = 0; i < e->n; i++)
        if (e->s[i].done || e->s[i].cycle_cost > 0)
            return 1;
    return 0;
}

void kw_eta_rerank(kw_eta *e, int i, long requests)
{
    if (i >= 0 && i < e->n)
        e->s[i].rr_requests = requests;
}

void kw_eta_rerank_prior(kw_eta *e, long neighbours, long n0)
{
    e->rr_prior = KW_ETA_RERANK_CMP_SHARE * (double)neighbours * 2.0 * (double)n0;
}

double kw_eta_rerank_left(const kw_eta *e)
{
    if (e->rr_prior <= 0)
        return 0.0;
    int n_done = 0, n_left = 0;
    double done_req = 0;
    for (int i = 0; i < e->n; i++) {
        if (e->s[i].done) {
            n_done++;
            done_req += (double)e->s[i].rr_requests;
        } else {
            n_left++;
        }
    }
    return n_left * (n_done > 0 ? done_req / n_done : e->rr_prior);
}
