/* bench_sim.c - simulated requests per second of the serving simulation.
 *
 * Not a test: a timing loop for the speed target (>= 2,000,000 simulated
 * requests per second per core). A "typical block": 4 kernels per batch
 * (launch 2 us + execution), batches up to 4 with a 20 us timeout, 4 cores
 * (cores_per_request 1), 8 Poisson streams at 70% load of full batches, DRAM
 * demand 1.2 B / cores per kernel so
 * contention is live when every core executes at once. Hand-built tables: no XML,
 * no cost model. Usage: bench_sim [requests] [streams] [cores] [kernels]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kw_error.h"
#include "kw_sim.h"

/* CPU time of this process: on a shared machine wall time also counts the
 * time other jobs held the core. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int requests = argc > 1 ? atoi(argv[1]) : 1000000;
    int streams = argc > 2 ? atoi(argv[2]) : 8;
    int cores = argc > 3 ? atoi(argv[3]) : 4;
    int kernels = argc > 4 ? atoi(argv[4]) : 4;
    static kw_cost svc[4];
    kw_accel a;
    memset(&a, 0, sizeof a);
    a.cores = cores;
    a.dram_bw_bytes_per_s = 1e12;
    kw_mapping m;
    memset(&m, 0, sizeof m);
    m.max_batch = 4;
    m.batch_timeout_us = 20.0;
    m.placement = KW_PLACE_LEAST_LOADED;
    m.cores_per_request = 1;
    for (int r = 1; r <= 4; r++) {
        kw_cost *c = &svc[r - 1];
        c->n_kernels = kernels;
        for (int i = 0; i < kernels; i++) {
            c->kernels[i].launch_us = 2.0;
            c->kernels[i].time_us = 2.0 + 10.0 + 5.0 * r;
            c->kernels[i].dram_bytes_per_us = 1.2e6 / cores; /* all cores at once: 1.2 B */
            c->kernels[i].flops = 1e9;
            c->kernels[i].prec = KW_PREC_BF16;
        }
    }
    kw_shape s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "bench");
    s.streams = streams;
    s.arrival = KW_ARRIVAL_POISSON;
    s.load = 0.7;
    kw_sim_input in = {.accel = &a, .shape = &s, .mapping = &m, .service = svc, .trace_shape = -1};
    if (kw_sim_rate_for_load(&in.rate_per_s, &a, &s, &m, svc) != 0) {
        fprintf(stderr, "%s\n", kw_error_last());
        return 1;
    }
    kw_sim_opts o = {.requests = requests, .warmup = requests / 100, .seed = 1};
    kw_sim_result r;
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now_s();
        if (kw_sim_run(&r, &in, &o) != 0) {
            fprintf(stderr, "%s\n", kw_error_last());
            return 1;
        }
        double dt = now_s() - t0;
        if (dt < best)
            best = dt;
    }
    int n = requests + requests / 100;
    printf("requests %d streams %d cores %d kernels %d: %.3f CPU s, %.0f simulated requests/s, %.0f ns/request\n",
           n, streams, cores, kernels, best, n / best, best * 1e9 / n);
    printf("  p50 %.1f p95 %.1f p99 %.1f us, mean batch %.2f, utilisation %.3f, contention %.2f%%\n",
           r.p50_us, r.p95_us, r.p99_us, r.mean_batch, r.utilisation, r.contention_pct);
    return 0;
}
