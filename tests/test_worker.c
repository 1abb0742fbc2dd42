/* test_worker.c - the shipped worker (knobwise-worker) driven through the
 * protocol of README.md "The worker protocol (measuring evaluator, version 1)"
 * over pipes, the way knobwise's measuring evaluator drives it: hello/ready,
 * measure answered with R samples, every error reason it can give
 * (unsupported, wrong_result, internal), unknown keys ignored, quit and end
 * of input exiting 0. Answers are checked for structure, never for times. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/kw_tl.h"

typedef struct worker {
    pid_t pid;
    FILE *to, *from;
} worker;

static void start(worker *w, const char *inject)
{
    const char *bd = getenv("KW_BUILDDIR");
    char bin[4096];
    snprintf(bin, sizeof bin, "%s/knobwise-worker", bd ? bd : ".");
    int in[2], out[2];
    cr_assert_eq(pipe(in), 0);
    cr_assert_eq(pipe(out), 0);
    w->pid = fork();
    cr_assert_geq(w->pid, 0);
    if (w->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        setenv("KW_WORKER_PROTOCOL", "1", 1);
        setenv("KW_WORKER_INDEX", "0", 1);
        if (inject)
            setenv("KW_WORKER_INJECT", inject, 1);
        execl(bin, bin, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    w->to = fdopen(in[1], "w");
    w->from = fdopen(out[0], "r");
    cr_assert(w->to && w->from);
}

/* Send one line, read one answer line (NUL-terminated, no LF) into buf. */
static char *ask(worker *w, const char *line, char *buf, size_t size)
{
    fprintf(w->to, "%s\n", line);
    fflush(w->to);
    cr_assert_not_null(fgets(buf, (int)size, w->from), "no answer to: %s", line);
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

static int stop(worker *w, int send_quit)
{
    if (send_quit) {
        fprintf(w->to, "quit\n");
        fflush(w->to);
    }
    fclose(w->to);
    int st;
    cr_assert_eq(waitpid(w->pid, &st, 0), w->pid);
    fclose(w->from);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Count the comma-separated samples after samples_us= and check each is a positive number. */
static int samples_in(const char *ans)
{
    const char *p = strstr(ans, " samples_us=");
    if (!p)
        return -1;
    p += strlen(" samples_us=");
    int n = 0;
    for (;;) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v > 0.0))
            return -1;
        n++;
        if (*end != ',')
            break;
        p = end + 1;
    }
    return n;
}

static char big[1 << 17];

#define GEMM_REQ                                                                                   \
    "measure id=%d shape=s1 block=fc phase=prefill batch=3 seq=21 kv_len=0 streams=1 warmup=%d "  \
    "reps=%d op.fc=gemm,n:70,k:95,epilogue:1 knob.fc.tile_m=16 knob.fc.tile_n=32 "               \
    "knob.fc.tile_k=32 knob.fc.split_k=2 knob.fc.loop_order=kmn knob.fc.double_buffer=off "       \
    "knob.fuse_epilogue=%s knob.precision=%s knob.cores_per_request=1 knob.max_batch=4 "          \
    "future_key=whatever"

Test(worker, hello_measure_quit)
{
    worker w;
    start(&w, NULL);
    char line[1024];
    ask(&w, "hello protocol=1", big, sizeof big);
    cr_assert(strncmp(big, "ready protocol=1 name=", 22) == 0, "%s", big);
    static const char *prec[] = {"fp32", "bf16"};
    static const char *fuse[] = {"off", "on"};
    for (int i = 0; i < 4; i++) {
        snprintf(line, sizeof line, GEMM_REQ, 10 + i, 1, 3 + i, fuse[i & 1], prec[i >> 1]);
        ask(&w, line, big, sizeof big);
        char want[64];
        snprintf(want, sizeof want, "ok id=%d unit=kernel samples_us=", 10 + i);
        cr_assert(strncmp(big, want, strlen(want)) == 0, "%s -> %s", line, big);
        cr_expect_eq(samples_in(big), 3 + i, "%s", big);
    }
    /* Attention, decode, GQA, each fusion mode. */
    static const char *modes[] = {"none", "qk_softmax", "flash"};
    for (int i = 0; i < 3; i++) {
        snprintf(line, sizeof line,
                 "measure id=%d shape=d block=attn phase=decode batch=2 seq=0 kv_len=77 streams=4 "
                 "warmup=0 reps=2 op.attn=attention,heads:4,kv_heads:2,head_dim:32,causal:1 "
                 "knob.attn.tile_m=16 knob.attn.tile_n=32 knob.fuse_attention=%s knob.precision=bf16",
                 20 + i, modes[i]);
        ask(&w, line, big, sizeof big);
        cr_assert(strstr(big, "ok id=") == big && samples_in(big) == 2, "%s -> %s", line, big);
    }
    cr_expect_eq(stop(&w, 1), 0);
}

Test(worker, errors_are_named)
{
    worker w;
    start(&w, NULL);
    char line[1024];
    /* measure before hello */
    snprintf(line, sizeof line, GEMM_REQ, 1, 0, 1, "on", "fp32");
    ask(&w, line, big, sizeof big);
    cr_expect(strncmp(big, "error id=1 reason=internal message=", 35) == 0, "%s", big);
    ask(&w, "hello protocol=1", big, sizeof big);
    /* precisions and fusions the worker does not run */
    snprintf(line, sizeof line, GEMM_REQ, 2, 0, 1, "on", "fp8_e4m3");
    ask(&w, line, big, sizeof big);
    cr_expect(strncmp(big, "error id=2 reason=unsupported message=", 38) == 0, "%s", big);
    ask(&w,
        "measure id=3 shape=s block=b phase=prefill batch=1 seq=8 warmup=0 reps=1 "
        "op.fc=gemm,n:8,k:8 knob.fuse_gate_up=on",
        big, sizeof big);
    cr_expect(strncmp(big, "error id=3 reason=unsupported", 29) == 0, "%s", big);
    /* more threads than the host has */
    ask(&w,
        "measure id=4 shape=s block=b phase=prefill batch=1 seq=8 warmup=0 reps=1 "
        "op.fc=gemm,n:8,k:8 knob.cores_per_request=100000",
        big, sizeof big);
    cr_expect(strncmp(big, "error id=4 reason=unsupported", 29) == 0, "%s", big);
    /* an operator kind it has no kernel for */
    ask(&w,
        "measure id=5 shape=s block=b phase=prefill batch=1 seq=8 warmup=0 reps=1 "
        "op.c1=conv,in_h:8,in_w:8,in_c:3,out_c:8,kh:3,kw:3",
        big, sizeof big);
    cr_expect(strncmp(big, "error id=5 reason=unsupported", 29) == 0, "%s", big);
    /* a request missing reps, and an unknown command */
    ask(&w, "measure id=6 phase=prefill batch=1 seq=8 warmup=0 op.fc=gemm,n:8,k:8", big, sizeof big);
    cr_expect(strncmp(big, "error id=6 reason=internal", 26) == 0, "%s", big);
    ask(&w, "frobnicate", big, sizeof big);
    cr_expect(strncmp(big, "error id=0 reason=internal", 26) == 0, "%s", big);
    /* a bad tile value */
    ask(&w,
        "measure id=7 phase=prefill batch=1 seq=8 warmup=0 reps=1 op.fc=gemm,n:8,k:8 "
        "knob.fc.tile_m=zero",
        big, sizeof big);
    cr_expect(strncmp(big, "error id=7 reason=unsupported", 29) == 0, "%s", big);
    /* still serving after all of that */
    snprintf(line, sizeof line, GEMM_REQ, 8, 0, 2, "on", "fp32");
    ask(&w, line, big, sizeof big);
    cr_expect(strncmp(big, "ok id=8 unit=kernel", 19) == 0, "%s", big);
    /* end of input without quit: exits 0 too */
    cr_expect_eq(stop(&w, 0), 0);
}

Test(worker, a_wrong_result_is_an_error_not_a_time)
{
    worker w;
    start(&w, "wrong_result");
    char line[1024];
    ask(&w, "hello protocol=1", big, sizeof big);
    snprintf(line, sizeof line, GEMM_REQ, 9, 1, 3, "on", "bf16");
    ask(&w, line, big, sizeof big);
    cr_expect(strncmp(big, "error id=9 reason=wrong_result message=operator fc: ", 52) == 0, "%s", big);
    cr_expect(strstr(big, "samples_us") == NULL);
    ask(&w,
        "measure id=10 phase=prefill batch=1 seq=40 warmup=0 reps=1 "
        "op.attn=attention,heads:2,kv_heads:2,head_dim:16,causal:1 knob.fuse_attention=flash",
        big, sizeof big);
    cr_expect(strncmp(big, "error id=10 reason=wrong_result", 31) == 0, "%s", big);
    cr_expect_eq(stop(&w, 1), 0);
}

Test(worker, other_protocol_versions_are_refused)
{
    worker w;
    start(&w, NULL);
    ask(&w, "hello protocol=2", big, sizeof big);
    cr_expect(strncmp(big, "error id=0 reason=unsupported", 29) == 0, "%s", big);
    cr_expect_eq(stop(&w, 1), 0);
}

/* A short real tuning run: the measuring evaluator (src/run/kw_exec.c) drives the
 * shipped worker over a 16-configuration space of a 16 x 64 x 64 GEMM. Asserted:
 * the run finishes, verify accepts its journal, and every audited step changes
 * one knob of the space, and the audit's sensitivity is paired. Nothing about
 * times (the worker's CPU clock, KW_WORKER_CLOCK=cpu, as the benches use, so
 * the load of a shared host moves its samples less). The budget (20) buys
 * the baseline (5 repetitions) and one round of a candidate beside the
 * baseline's control (5 + 5): the controls count against it; the pairing
 * after the search has its own budget (search/kw_search.h KW_PAIR_DEFAULT). */
Test(worker, a_measured_tuning_run_with_the_shipped_worker)
{
    KW_TL_HANG_GUARD(240);
    const char *bd = getenv("KW_BUILDDIR"), *sd = getenv("KW_SRCDIR"), *bin = getenv("KW_BIN");
    cr_assert(bd && sd && bin, "KW_BUILDDIR, KW_SRCDIR and KW_BIN come from make check");
    char dir[] = "/tmp/kwworker.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "KW_WORKER_CLOCK=cpu '%s' tune --space '%s/tests/data/cpu_tune/space.xml' "
             "--evaluator 'exec:%s/knobwise-worker' --budget 20 --out '%s/run' --quiet >'%s/out' 2>&1",
             bin, sd, bd, dir, dir);
    int st = system(cmd);
    snprintf(cmd, sizeof cmd, "%s/out", dir);
    FILE *f = fopen(cmd, "r");
    size_t n = f ? fread(big, 1, sizeof big - 1, f) : 0;
    big[n] = '\0';
    if (f)
        fclose(f);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "tune: %s", big);
    snprintf(cmd, sizeof cmd, "'%s' verify '%s/run' >'%s/out' 2>&1", bin, dir, dir);
    st = system(cmd);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "verify failed");
    snprintf(cmd, sizeof cmd, "%s/run/audit.csv", dir);
    f = fopen(cmd, "r");
    cr_assert_not_null(f, "no audit.csv");
    static const char *knobs[] = {"fc.tile_m", "fc.double_buffer", "fuse_epilogue", "precision"};
    char line[4096];
    int rows = 0;
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_expect(strncmp(line, "step,shape,parent_id,config_id,knob,", 36) == 0, "%s", line);
    while (fgets(line, sizeof line, f)) {
        /* the fifth field is the one knob the step changed */
        char *p = line;
        for (int i = 0; i < 4 && p; i++)
            p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
        cr_assert_not_null(p);
        int known = 0;
        for (int k = 0; k < 4; k++)
            known |= strncmp(p, knobs[k], strlen(knobs[k])) == 0 && p[strlen(knobs[k])] == ',';
        cr_expect(known, "a step that is not one knob of the space: %s", line);
        rows++;
    }
    fclose(f);
    cr_expect_geq(rows, 1, "no step audited");
    /* the audit's sensitivity table is paired: after the search each of the
     * recommendation's four neighbours (four knobs of two values) was
     * re-measured beside it in alternating order, so every cell reads a
     * paired difference with its 95% interval "[lo%, hi%]" and the note says
     * paired, not "not paired" (before the pairing it compared means of
     * different rounds: README, "The audit on a measured run") */
    snprintf(cmd, sizeof cmd, "'%s' audit '%s/run' >'%s/out' 2>&1", bin, dir, dir);
    st = system(cmd);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "audit failed");
    snprintf(cmd, sizeof cmd, "%s/out", dir);
    f = fopen(cmd, "r");
    cr_assert_not_null(f);
    n = fread(big, 1, sizeof big - 1, f);
    big[n] = '\0';
    fclose(f);
    cr_expect(strstr(big, "(a measured run: every cell is paired") != NULL, "%s", big);
    cr_expect(strstr(big, "not paired") == NULL, "%s", big);
    const char *sens = strstr(big, "  sensitivity: ");
    cr_assert_not_null(sens, "%s", big);
    int intervals = 0;
    for (const char *p = sens; (p = strstr(p, "% [")) != NULL; p++) {
        const char *q = strchr(p, ']');
        cr_assert_not_null(q);
        cr_expect(strstr(p, "%, ") != NULL && strstr(p, "%, ") < q, "an interval without two ends: %.40s", p);
        intervals++;
    }
    cr_expect_eq(intervals, 4, "four neighbours, four paired cells: %s", sens);
    snprintf(cmd, sizeof cmd, "grep -c '^N ' '%s/run/journal' >'%s/out'", dir, dir);
    cr_expect_eq(system(cmd), 0, "no pair journaled");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) { /* best effort */ }
}
