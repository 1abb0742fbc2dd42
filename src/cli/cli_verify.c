/* cli_verify.c - `knobwise verify RUN`: can this run be trusted? Prints one
 * line per check (kw_verify.h); exit 0 when every check holds, 1 naming the
 * offending record and step on the first violation, 2 for bad usage. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "kw_cli.h"
#include "kw_remeasure.h"
#include "kw_run.h"
#include "kw_verify.h"

static void kw_verify_help(void)
{
    printf("usage: knobwise verify RUN_DIR [--sample N] [--seed N] [--no-eval]\n"
           "                      [--space F] [--accel F] [--workload F]\n"
           "                      [--remeasure N] [--evaluator exec:CMD]\n\n"
           "Checks the journal's checksums, that every step changed exactly one knob,\n"
           "that the result files follow from the journal, and re-evaluates every\n"
           "shape's baseline and recommendation plus N sampled evaluations (default 10)\n"
           "with the run's inputs and model options to confirm they reproduce.\n"
           "--no-eval skips the re-evaluation; --space/--accel/--workload point at the\n"
           "inputs when they moved (their content must be unchanged), for the\n"
           "re-evaluation or --remeasure only: with --no-eval alone they are refused.\n"
           "A measured run (tune --evaluator exec:CMD) is not re-evaluated: --remeasure N\n"
           "measures N sampled evaluations again with its worker (or --evaluator exec:CMD)\n"
           "and reports the drift against the journal.\n"
           "Exit status: 0 verified, 1 a violation (named on stderr), 2 bad usage.\n");
}

int kw_cli_verify(int argc, char **argv)
{
    static const struct option opts[] = {
        {"sample", required_argument, 0, 'n'}, {"seed", required_argument, 0, 'e'},
        {"no-eval", no_argument, 0, 'x'},      {"space", required_argument, 0, 's'},
        {"accel", required_argument, 0, 'a'},  {"workload", required_argument, 0, 'w'},
        {"remeasure", required_argument, 0, 'R'}, {"evaluator", required_argument, 0, 'E'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    long remeasure = 0;
    const char *xcmd = NULL;
    kw_verify_opts vo = {.sample = 10, .seed = 1, .rel_tol = 1e-9};
    kw_rundir_opts ro = {.flags = KW_RUNDIR_CONFIG};
    long v;
    int o;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'n':
            if (kw_cli_parse_long(&v, "verify", "--sample", optarg, 0, 1000000))
                return 2;
            vo.sample = (int)v;
            break;
        case 'e':
            if (kw_cli_parse_seed(&v, "verify", optarg))
                return 2;
            vo.seed = (uint64_t)v;
            break;
        case 'x': vo.no_eval = 1; break;
        case 'R':
            if (kw_cli_parse_long(&remeasure, "verify", "--remeasure", optarg, 1, 100000))
                return 2;
            break;
        case 'E':
            if (strncmp(optarg, "exec:", 5) != 0 || !optarg[5])
                return kw_cli_usage_error("verify", "--evaluator takes exec:CMD, not '%s'", optarg);
            xcmd = optarg + 5;
            break;
        case 's': ro.space = optarg; break;
        case 'a': ro.accel = optarg; break;
        case 'w': ro.workload = optarg; break;
        case 'h': kw_verify_help(); return 0;
        default: return kw_cli_usage_error("verify", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return kw_cli_usage_error("verify", "give exactly one run folder");
    const char *dir = argv[optind];
    if (vo.no_eval && remeasure == 0) {
        /* the inputs serve the re-evaluation and --remeasure only: not read, so refused */
        const char *in = ro.space ? "--space" : ro.accel ? "--accel" : ro.workload ? "--workload" : NULL;
        if (in)
            return kw_cli_usage_error("verify", "--no-eval reads no inputs: %s serves the "
                                      "re-evaluation or --remeasure only", in);
        ro.flags = 0;
    }
    kw_sbuf log = {0};
    kw_rundir *r = NULL;
    int rc = kw_run_open(&r, dir, &ro);
    if (rc != 0) {
        int status;
        if (rc == KW_ECORRUPT) {
            printf("FAIL journal checksums: %s\n", kw_error_last());
            fprintf(stderr, "knobwise verify: %s\n", kw_error_last());
            status = 1;
        } else {
            status = kw_cli_fail("verify", rc);
        }
        return status;
    }
    if (remeasure > 0 && !xcmd) {
        /* a usage error before any line of the verification (it printed every
         * "ok" of the re-evaluation first, then refused, exit 2) */
        const char *cmd = kw_run_attr_get(r->j, KW_RUN_EVALUATOR);
        if (!cmd || !cmd[0]) {
            kw_rundir_free(r);
            return kw_cli_usage_error("verify", "%s: not a measured run (its journal names no "
                                      "worker): --remeasure needs one; use verify's "
                                      "re-evaluation", dir);
        }
    }
    rc = kw_verify_run(&log, r, &vo);
    if (rc == 0 && remeasure > 0)
        rc = kw_remeasure_run(&log, r, (int)remeasure, vo.seed, xcmd);
    if (rc == 0 && kw_sbuf_status(&log) != 0) /* a verdict with lines missing is no verdict */
        rc = kw_error_set(KW_ENOMEM, "out of memory writing the verification log");
    fputs(kw_sbuf_cstr(&log), stdout);
    int status = 0;
    if (rc != 0) {
        fprintf(stderr, "knobwise verify: %s\n", kw_error_last());
        status = rc == KW_EINPUT ? 2 : 1;
    } else {
        printf("verified: %s\n", dir);
    }
    kw_sbuf_free(&log);
    kw_rundir_free(r);
    return status;
}
