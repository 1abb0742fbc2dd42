/* test_cuda.c - knobwise-worker-cuda (./configure --with-cuda) on any host,
 * with or without a GPU: what can be tested without a device.
 *
 *   - the handshake: `hello protocol=1` is answered by `ready protocol=1
 *     name=knobwise-cuda` on a host with a device, and by the named error
 *     `error id=0 reason=unsupported message=no CUDA device: ...` (exit 1)
 *     on one without; any other answer fails;
 *   - a hello of another protocol version is refused by name and the worker
 *     keeps reading; quit ends it with status 0;
 *   - without a device, `knobwise tune` with this worker is a clear input
 *     error (exit 2) naming the missing device, and no run folder is made.
 * Built and run only under --with-cuda (mk/cuda.am).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/kw_tl.h"

static char worker[2048];

static void setup(void)
{
    const char *b = getenv("KW_BUILDDIR");
    snprintf(worker, sizeof worker, "%s/knobwise-worker-cuda", b ? b : ".");
    cr_assert(kw_tl_exists(worker), "%s not built", worker);
}

TestSuite(cuda, .init = setup);

static kw_tl_proc kw_run_worker(const char *input)
{
    char *d = kw_tl_tmpdir("kw-cuda");
    cr_assert(d);
    char in[2300];
    snprintf(in, sizeof in, "%s/in", d);
    cr_assert_eq(kw_tl_write(in, input), 0);
    kw_tl_opts o = {.stdin_path = in, .timeout_s = 60};
    kw_tl_proc r = kw_tl_run(&o, worker, (const char *)NULL);
    kw_tl_rmrf(d);
    return r;
}

static int kw_has_device(void)
{
    kw_tl_proc r = kw_run_worker("hello protocol=1\nquit\n");
    int ready = strncmp(r.out, "ready protocol=1 name=knobwise-cuda", 35) == 0;
    kw_tl_free(&r);
    return ready;
}

Test(cuda, the_handshake_is_ready_or_a_named_no_device_error)
{
    kw_tl_proc r = kw_run_worker("hello protocol=1\nquit\n");
    if (strncmp(r.out, "ready ", 6) == 0) {
        cr_assert(strncmp(r.out, "ready protocol=1 name=knobwise-cuda device=", 43) == 0, "%s", r.out);
        cr_assert_eq(r.status, 0);
    } else {
        cr_assert(strncmp(r.out, "error id=0 reason=unsupported message=no CUDA device: ", 53) == 0,
                  "answer: %s", r.out);
        cr_assert_eq(r.status, 1, "exit %d", r.status);
        cr_assert(strchr(r.out, '\n') == r.out + strlen(r.out) - 1, "one line: %s", r.out);
    }
    kw_tl_free(&r);
}

Test(cuda, another_protocol_is_refused_by_name_and_quit_ends_it)
{
    kw_tl_proc r = kw_run_worker("hello protocol=2\nbogus\nquit\n");
    cr_assert(strstr(r.out, "error id=0 reason=unsupported message=this worker speaks protocol=1\n") ==
                  r.out, "%s", r.out);
    cr_assert(strstr(r.out, "error id=0 reason=internal message=unknown command") != NULL, "%s", r.out);
    cr_assert_eq(r.status, 0);
    kw_tl_free(&r);
}

Test(cuda, without_a_device_tune_is_a_clear_error_before_any_folder)
{
    if (kw_has_device())
        return; /* the no-device path is what this host cannot show; the handshake test covers it */
    char *d = kw_tl_tmpdir("kw-cuda-run");
    cr_assert(d);
    char args[8192];
    snprintf(args, sizeof args,
             "tune --space '%s/tests/data/cpu_tune/space.xml' --evaluator 'exec:%s' --threads 1 "
             "--out '%s/run'", kw_tl_src(), worker, d);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    /* the worker runs and refuses the handshake: a runtime failure, exit 1 */
    cr_assert_eq(r.status, 1, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "no CUDA device") != NULL, "%s", r.err);
    cr_assert_eq(kw_tl_entries(d), 0, "a run folder was made");
    kw_tl_free(&r);
    kw_tl_rmrf(d);
}
