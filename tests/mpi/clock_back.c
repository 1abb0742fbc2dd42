/* clock_back.c - an LD_PRELOAD shim for tests/mpi/run.sh: the wall clock
 * (CLOCK_REALTIME) as the process reads it runs an hour ahead of the
 * kernel's, which is what a step of the wall clock an hour back (NTP, a
 * resumed VM, date -s) does to every deadline computed on it just before:
 * a wait timed on the wall clock lasts an hour. CLOCK_MONOTONIC is left
 * alone. Built by run.sh with the C compiler ($CC), never installed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>

#define KW_CLOCK_BACK_S 3600

int clock_gettime(clockid_t id, struct timespec *ts)
{
    static int (*real)(clockid_t, struct timespec *);
    if (!real)
        real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    int rc = real(id, ts);
    if (rc == 0 && id == CLOCK_REALTIME)
        ts->tv_sec += KW_CLOCK_BACK_S;
    return rc;
}
