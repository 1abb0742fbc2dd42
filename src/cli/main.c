/* main.c - the knobwise command: dispatch to one function per verb.
 * Only main and the cli_*.c verb functions print or choose exit codes:
 * 0 success, 1 runtime failure, 2 bad input or usage (README, knobwise.1 EXIT STATUS). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <libxml/parser.h>

#include "config.h"
#include "kw_cli.h"
#include "kw_xml.h"

typedef struct kw_verb {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *synopsis;
} kw_verb;

static const kw_verb kw_verbs[] = {
    {"tune", kw_cli_tune, "tune mappings per shape, one knob per step (the overnight job)"},
    {"eval", kw_cli_eval, "evaluate one configuration on one or all shapes"},
    {"audit", kw_cli_audit, "which knob caused which change in a run"},
    {"bisect", kw_cli_bisect, "walk from config A to config B one knob at a time"},
    {"verify", kw_cli_verify, "check a run: one knob per step, journal intact"},
    {"recommend", kw_cli_recommend, "the mapping to deploy for a shape"},
    {"report", kw_cli_report, "write a self-contained HTML report of a run"},
    {"validate", kw_cli_validate, "check input files: schema and semantics, FILE:LINE errors"},
    {"show", kw_cli_show, "knobs, domains, baselines, accelerator and shapes of a space"},
    {"probe", kw_cli_probe, "measure this host and write its accelerator file"},
    {"export", kw_cli_export, "a run's tuned configurations as JSON or a C header"},
    {"calibrate", kw_cli_calibrate, "fit the accelerator's rates to measured kernel times"},
};
#define KW_N_VERBS (sizeof kw_verbs / sizeof kw_verbs[0])

/* SIGPIPE: a write to a pipe nobody reads. When that pipe is stdout (the
 * verb's output: `knobwise audit RUN | head`), knobwise ends of it as any
 * filter does. Any other (stderr, where knobwise forwards a worker's stderr
 * before the run folder exists, in eval, verify --remeasure and MPI ranks
 * other than 0, and writes its own progress and messages) only loses text:
 * the write fails with EPIPE and the verb goes on to its own exit status.
 * Before, a caller that closed the read end of knobwise's stderr killed a
 * tune mid-run (exit 141, no results) or an eval before its table. The
 * signal is synchronous, so the handler runs in the writing thread; poll()
 * and sigaction() are async-signal-safe. Rejected: SIG_IGN (inherited
 * across exec by every worker, and stdout's reader closing would no longer
 * stop a long verb). */
static void kw_main_on_sigpipe(int sig)
{
    struct pollfd p = {.fd = 1, .events = 0};
    if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP))) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        sigaction(sig, &sa, NULL);
        raise(sig); /* delivered when this handler returns */
    }
}

static void kw_usage(FILE *f)
{
    fprintf(f, "usage: knobwise VERB [options]   (knobwise VERB --help for a verb's options)\n\n");
    for (size_t i = 0; i < KW_N_VERBS; i++)
        fprintf(f, "  %-10s %s\n", kw_verbs[i].name, kw_verbs[i].synopsis);
    fprintf(f, "\n  --help     this text\n  --version  print the version\n"
               "\nWith no file options, tune/eval/show use the embedded default job.\n"
               "Exit status: 0 success, 1 runtime failure, 2 bad input or usage.\n");
}

int main(int argc, char **argv)
{
    /* GSL's default handler aborts; every status is checked instead (STYLE.md 9). */
    gsl_set_error_handler_off();
    /* A file-size limit (ulimit -f) is a write error like a full disk: by
     * default SIGXFSZ killed the process mid-write, leaving a temp file beside
     * the output and no message; ignored, the write fails with EFBIG and every
     * writer's error path reports it and removes its temp file. */
    signal(SIGXFSZ, SIG_IGN);
    /* SIGPIPE inherited as ignored stays ignored (the POSIX convention
     * kw_tune_catch follows): every write to a closed pipe fails with EPIPE
     * and the verb goes on, as the caller asked; else the handler above. */
    struct sigaction pipe_sa;
    if (sigaction(SIGPIPE, NULL, &pipe_sa) == 0 && pipe_sa.sa_handler != SIG_IGN) {
        memset(&pipe_sa, 0, sizeof pipe_sa);
        pipe_sa.sa_handler = kw_main_on_sigpipe;
        pipe_sa.sa_flags = SA_RESTART;
        sigemptyset(&pipe_sa.sa_mask);
        sigaction(SIGPIPE, &pipe_sa, NULL);
    }
    xmlInitParser();
    kw_xml_route_errors(); /* libxml2 prints nothing of its own: knobwise reports each failure */
    int status;
    if (argc < 2) {
        kw_usage(stderr);
        status = 2;
    } else if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
               strcmp(argv[1], "help") == 0) {
        kw_usage(stdout);
        status = 0;
    } else if (strcmp(argv[1], "--version") == 0) {
        printf("knobwise %s\n", PACKAGE_VERSION);
        status = 0;
    } else {
        status = -1;
        for (size_t i = 0; i < KW_N_VERBS; i++)
            if (strcmp(argv[1], kw_verbs[i].name) == 0) {
                status = kw_verbs[i].run(argc - 1, argv + 1);
                break;
            }
        if (status < 0) {
            fprintf(stderr, "knobwise: unknown verb '%s'\n", argv[1]);
            kw_usage(stderr);
            status = 2;
        }
    }
    /* stdout is most verbs' output: a write error there (a full disk, a closed
     * descriptor) fails the verb, where eval, audit, verify, recommend, bisect
     * and validate exited 0 with their output lost */
    int out_err = fflush(stdout) != 0 ? errno : 0;
    if (status == 0 && (out_err || ferror(stdout))) {
        fprintf(stderr, "knobwise %s: cannot write its output to stdout: %s\n",
                argc >= 2 ? argv[1] : "", out_err ? strerror(out_err) : "write error");
        status = 1;
    }
    kw_xml_cleanup(); /* the cached schemas first: they hold libxml2 dictionaries */
    xmlCleanupParser();
    return status;
}
