/* kw_tworker.c - a small worker for the measuring evaluator's tests: it
 * speaks the worker protocol (README "The worker protocol") and misbehaves
 * on request, so every fault path of src/run/kw_exec.c can be driven.
 *
 * Design choice: one program with options rather than one per behaviour, so
 * each test names the behaviour on its command line. Times are synthetic (a
 * function of the knob values), never measured: tests assert behaviour, not
 * speed.
 *
 * usage: kw_tworker [--flat] [--per-shape] [--noise SD_FRAC] [--seed N] [--drift PCT]
 *                   [--unit kernel|request] [--count FILE] [--start-delay S]
 *                   [--no-ready] [--exit-at-start] [--stderr]
 *                   [--crash-on K=V] [--hang-on K=V] [--garbage-on K=V]
 *                   [--short-on K=V] [--error-on K=V:REASON] [--die-after N]
 *                   [--quality REL_RMS,COS] [--sleep S] [--sleep-after T,S]
 *                   [--samples-on K=V:TEXT] [--end-on K=V:cr|nul]
 *                   [--device-len N]
 *                   [--deaf-on K=V] [--stderr-flood N] [--escape FILE]
 *                   [--killed-once FILE] [--ramp] [--immortal]
 *   time of a config: 100 us + sum over its knobs of (FNV-1a("name=value") % 1000) / 10 us
 *   (--flat: 100 us for every config; --per-shape: each token hashed after
 *   the request's shape=NAME token, so each shape has its own best config);
 *   each sample is that time times
 *   (1 + SD_FRAC x N(0,1)) from GSL's taus2 seeded by the request's text without
 *   its id (so the draw depends on the request, not on the order of requests)
 *   and --seed; --drift PCT multiplies request number i (from 0) by 1 + PCT/100 x i.
 *   --sleep S: each measurement takes S seconds of wall time (a stand-in for a
 *   device: `make bench-mpi` measures how ranks share such waits).
 *   --sleep-after T,S: a measurement requested T seconds or more after the
 *   worker started takes S seconds (one that is fast at first and then is
 *   caught by a deadline: tests/mpi/run.sh's whole-round resume).
 *   --samples-on K=V:TEXT: every sample of a matching request is TEXT as given
 *   (1e300, 0, nan: figures that cannot be measurements).
 *   --end-on K=V:cr|nul: a matching request's ok answer ends with a CR, or a NUL
 *   and more text, before its LF (not a protocol line: README "Lines").
 *   --ramp: sample k (from 0) is (k + 1) x the config's time: a sample whose
 *   order statistics are known exactly (tests of the interval rules).
 *   --device-len N: the ready line's device= text is N bytes long.
 *   --deaf-on K=V: from a request holding K=V on, it reads nothing more and
 *   answers blind, forever, the next ids with as many samples (a worker that
 *   stops reading while it goes on answering: knobwise's requests fill the
 *   socket until its writes must time out).
 *   --stderr-flood N: N bytes of 64-byte lines on stderr before the ready
 *   line (blocking until they are read), so a worker.log cap can be seen.
 *   --escape FILE: at start a child leaves the process group and session
 *   (setsid) and sleeps 120 s holding the worker's stdin, stdout and stderr
 *   (a daemon a worker script starts); the worker appends its pid to FILE.
 *   --killed-once FILE: on its first measure request while FILE does not
 *   exist, it creates FILE and SIGKILLs itself (as the OOM killer would): a
 *   crash the next worker started does not meet again.
 *   --immortal: ignores SIGTERM and quit, and at the end of its input does not
 *   exit but sleeps 120 s (a kernel process stuck on its device, or one that
 *   breaks the protocol's "exit at end of input").
 */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#define TW_LINE_MAX 65536
#define TW_BASE_US 100.0

static uint64_t tw_fnv(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h;
}

/* does the line hold the token knob.K=V (trigger "K=V")? */
static int tw_has(const char *line, const char *trig)
{
    if (!trig)
        return 0;
    char tok[256];
    snprintf(tok, sizeof tok, " knob.%s", trig);
    const char *p = strstr(line, tok);
    if (!p)
        return 0;
    char end = p[strlen(tok)];
    return end == ' ' || end == '\0' || end == '\n';
}

/* spec "K=V:TEXT" (split at the colon find picks): 1 and TEXT into what when
 * the line holds knob.K=V */
static int tw_has_then(char *what, size_t len, const char *line, const char *spec,
                       char *(*find)(const char *, int))
{
    if (!spec)
        return 0;
    char trig[256];
    snprintf(trig, sizeof trig, "%s", spec);
    char *colon = find(trig, ':');
    if (!colon)
        return 0;
    *colon = '\0';
    if (!tw_has(line, trig))
        return 0;
    snprintf(what, len, "%s", colon + 1);
    return 1;
}

static long tw_int(const char *line, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, " %s=", key);
    const char *p = strstr(line, k);
    return p ? strtol(p + strlen(k), NULL, 10) : -1;
}

static double tw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const double t_start = tw_now();
    int flat = 0, per_shape = 0, no_ready = 0, exit_at_start = 0, to_stderr = 0, unit_request = 0,
        ramp = 0, immortal = 0;
    double noise = 0.0, drift_pct = 0.0, start_delay = 0.0, sleep_s = 0.0, late_t = -1.0,
           late_s = 0.0;
    unsigned long seed = 1;
    long die_after = -1, device_len = -1, flood = 0;
    const char *escape = NULL, *killed_once = NULL;
    const char *quality = NULL, *end_on = NULL;
    const char *count = NULL, *crash_on = NULL, *hang_on = NULL, *garbage_on = NULL,
               *short_on = NULL, *error_on = NULL, *samples_on = NULL,
               *deaf_on = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--flat")) flat = 1;
        else if (!strcmp(a, "--per-shape")) per_shape = 1;
        else if (!strcmp(a, "--no-ready")) no_ready = 1;
        else if (!strcmp(a, "--exit-at-start")) exit_at_start = 1;
        else if (!strcmp(a, "--stderr")) to_stderr = 1;
        else if (!strcmp(a, "--ramp")) ramp = 1;
        else if (!strcmp(a, "--immortal")) immortal = 1;
        else if (v && !strcmp(a, "--noise")) { noise = atof(v); i++; }
        else if (v && !strcmp(a, "--seed")) { seed = strtoul(v, NULL, 10); i++; }
        else if (v && !strcmp(a, "--drift")) { drift_pct = atof(v); i++; }
        else if (v && !strcmp(a, "--unit")) { unit_request = !strcmp(v, "request"); i++; }
        else if (v && !strcmp(a, "--count")) { count = v; i++; }
        else if (v && !strcmp(a, "--start-delay")) { start_delay = atof(v); i++; }
        else if (v && !strcmp(a, "--crash-on")) { crash_on = v; i++; }
        else if (v && !strcmp(a, "--hang-on")) { hang_on = v; i++; }
        else if (v && !strcmp(a, "--garbage-on")) { garbage_on = v; i++; }
        else if (v && !strcmp(a, "--short-on")) { short_on = v; i++; }
        else if (v && !strcmp(a, "--error-on")) { error_on = v; i++; }
        else if (v && !strcmp(a, "--die-after")) { die_after = atol(v); i++; }
        else if (v && !strcmp(a, "--quality")) { quality = v; i++; }
        else if (v && !strcmp(a, "--sleep")) { sleep_s = atof(v); i++; }
        else if (v && !strcmp(a, "--sleep-after")) {
            if (sscanf(v, "%lf,%lf", &late_t, &late_s) != 2)
                return 2;
            i++;
        }
        else if (v && !strcmp(a, "--samples-on")) { samples_on = v; i++; }
        else if (v && !strcmp(a, "--end-on")) { end_on = v; i++; }
        else if (v && !strcmp(a, "--device-len")) { device_len = atol(v); i++; }
        else if (v && !strcmp(a, "--deaf-on")) { deaf_on = v; i++; }
        else if (v && !strcmp(a, "--stderr-flood")) { flood = atol(v); i++; }
        else if (v && !strcmp(a, "--escape")) { escape = v; i++; }
        else if (v && !strcmp(a, "--killed-once")) { killed_once = v; i++; }
        else { fprintf(stderr, "kw_tworker: unknown option %s\n", a); return 2; }
    }
    if (exit_at_start)
        return 1;
    if (immortal)
        signal(SIGTERM, SIG_IGN);
    if (escape) {
        pid_t c = fork();
        if (c == 0) {
            setsid();
            sleep(120);
            _exit(0);
        }
        FILE *pf = c > 0 ? fopen(escape, "a") : NULL; /* one line per worker started */
        if (pf) {
            fprintf(pf, "%ld\n", (long)c);
            fclose(pf);
        }
    }
    for (long k = 0; k < flood; k += 64)
        fprintf(stderr, "kw_tworker: flooding stderr %021ld of %-10ld\n", k, flood);
    if (start_delay > 0)
        usleep((useconds_t)(start_delay * 1e6));
    static char line[TW_LINE_MAX + 2];
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!fgets(line, sizeof line, stdin))
        return 1;
    if (no_ready || strncmp(line, "hello protocol=1", 16) != 0) {
        printf("nope\n");
        return 0;
    }
    if (device_len >= 0) {
        printf("ready protocol=1 name=kw_tworker device=");
        for (long k = 0; k < device_len; k++)
            putchar('d');
        printf("\n");
    } else {
        printf("ready protocol=1 name=kw_tworker device=synthetic\n");
    }
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    long served = 0;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strcmp(line, "quit")) {
            if (immortal)
                continue;
            break;
        }
        if (strncmp(line, "measure ", 8) != 0) {
            printf("error id=0 reason=internal message=unknown request\n");
            continue;
        }
        long id = tw_int(line, "id"), reps = tw_int(line, "reps");
        if (count) {
            FILE *f = fopen(count, "a");
            if (f) {
                fprintf(f, "%s\n", line);
                fclose(f);
            }
        }
        if (to_stderr)
            fprintf(stderr, "kw_tworker: request %ld\n", id);
        if (die_after >= 0 && served >= die_after)
            return 3;
        if (killed_once) {
            FILE *f = fopen(killed_once, "wx"); /* only the first one creates it */
            if (f) {
                fclose(f);
                fflush(stdout);
                raise(SIGKILL);
            }
            killed_once = NULL;
        }
        if (tw_has(line, crash_on))
            return 3;
        if (tw_has(line, hang_on))
            for (;;)
                pause();
        if (tw_has(line, deaf_on))
            for (long k = id;; k++) {
                printf("ok id=%ld unit=kernel samples_us=", k);
                for (long j = 0; j < reps; j++)
                    printf("%s%.4f", j ? "," : "", TW_BASE_US);
                if (printf("\n") < 0)
                    return 3;
            }
        if (tw_has(line, garbage_on)) {
            printf("ok id=%ld unit=kernel samples_us=fast,faster\n", id);
            continue;
        }
        char what[256];
        if (tw_has_then(what, sizeof what, line, error_on, strrchr)) {
            printf("error id=%ld reason=%s message=asked to fail here\n", id, what);
            continue;
        }
        if (tw_has_then(what, sizeof what, line, samples_on, strchr)) {
            printf("ok id=%ld unit=kernel samples_us=", id);
            for (long k = 0; k < reps; k++)
                printf("%s%s", k ? "," : "", what);
            printf("\n");
            continue;
        }
        if (sleep_s > 0)
            usleep((useconds_t)(sleep_s * 1e6));
        if (late_t >= 0 && tw_now() - t_start >= late_t)
            usleep((useconds_t)(late_s * 1e6));
        /* the config's time from its knob tokens */
        double t = TW_BASE_US;
        const char *p = line, *sh = strstr(line, " shape=");
        char tok[512];
        while (!flat && (p = strstr(p, " knob.")) != NULL) {
            p += 6;
            size_t n = strcspn(p, " ");
            if (per_shape && sh) { /* "SHAPE-TOKEN KNOB-TOKEN" */
                size_t m = strcspn(sh + 1, " ");
                int len = snprintf(tok, sizeof tok, "%.*s %.*s", (int)m, sh + 1, (int)n, p);
                t += (double)(tw_fnv(tok, (size_t)len < sizeof tok ? (size_t)len : sizeof tok - 1) % 1000) / 10.0;
            } else {
                t += (double)(tw_fnv(p, n) % 1000) / 10.0;
            }
            p += n;
        }
        t *= 1.0 + drift_pct / 100.0 * (double)served;
        /* the noise stream: the request without its id */
        const char *rest = strstr(line, " shape=");
        gsl_rng_set(r, (unsigned long)(tw_fnv(rest ? rest : line, strlen(rest ? rest : line)) ^
                                       (seed * 0x9e3779b97f4a7c15ULL)));
        if (tw_has(line, short_on))
            reps = reps > 1 ? reps - 1 : 0; /* lies about its sample count */
        printf("ok id=%ld unit=%s samples_us=", id, unit_request ? "request" : "kernel");
        for (long k = 0; k < reps; k++) {
            double x = t * (1.0 + noise * gsl_ran_gaussian(r, 1.0));
            if (unit_request)
                x = t * (1.0 + gsl_ran_exponential(r, 0.5));
            if (ramp)
                x = t * (double)(k + 1);
            printf("%s%.4f", k ? "," : "", x > 0.01 ? x : 0.01);
        }
        if (quality) {
            char q[64];
            snprintf(q, sizeof q, "%s", quality);
            char *comma = strchr(q, ',');
            if (comma) {
                *comma = '\0';
                printf(" quality_rel_rms=%s quality_cos=%s", q, comma + 1);
            }
        }
        if (tw_has_then(what, sizeof what, line, end_on, strchr)) {
            if (!strcmp(what, "cr"))
                putchar('\r');
            else {
                putchar('\0');
                printf(" samples_us=1");
            }
        }
        printf("\n");
        served++;
    }
    gsl_rng_free(r);
    if (immortal)
        sleep(120);
    return 0;
}
