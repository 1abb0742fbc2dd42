/* kw_cli.h - the knobwise command: one entry function per verb, each taking
 * the verb's own argv (argv[0] is the verb) and returning the process exit
 * status (0 ok, 1 runtime failure, 2 bad input or usage). Only these
 * functions print; the library below them never does. */
#ifndef KW_CLI_H
#define KW_CLI_H

#include <limits.h>

#include <stdio.h>

#include "kw_model.h"

int kw_cli_tune(int argc, char **argv);
int kw_cli_eval(int argc, char **argv);
int kw_cli_audit(int argc, char **argv);
int kw_cli_bisect(int argc, char **argv);
int kw_cli_verify(int argc, char **argv);
int kw_cli_recommend(int argc, char **argv);
int kw_cli_report(int argc, char **argv);
int kw_cli_validate(int argc, char **argv);
int kw_cli_show(int argc, char **argv);
int kw_cli_probe(int argc, char **argv);
/* `show --catalogue` (cli_catalogue.c): the knob catalogue, text or CSV. */
int kw_cli_catalogue_show(const kw_config *c, int csv);
#define KW_CATALOGUE_CSV_HEADER "knob,family,values,meaning,used_by,blocks"
int kw_cli_export(int argc, char **argv);
int kw_cli_calibrate(int argc, char **argv);

/* Load the space (or the embedded default when space is NULL) with optional
 * overrides; on failure print the error the kw_cli_fail way (FILE:LINE:
 * message, else "knobwise VERB: message") and return the exit status (2 for
 * bad input), else 0. */
int kw_cli_load_config(kw_config **out, const char *verb, const char *space, const char *accel,
                       const char *workload);
/* Print "knobwise VERB: message" for the current error and return its exit status;
 * an input error that opens with its FILE:LINE (or FILE:) prints as it is. */
int kw_cli_fail(const char *verb, int code);
/* Print a usage error "knobwise VERB: msg" + "try 'knobwise VERB --help'" and return 2. */
int kw_cli_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parse a non-negative integer / double option value; on error usage message, return 2. */
int kw_cli_parse_long(long *out, const char *verb, const char *opt, const char *text, long min, long max);
int kw_cli_parse_double(double *out, const char *verb, const char *opt, const char *text, double min, double max);
/* --seed N of every verb: 0 to KW_CLI_SEED_MAX, the range tune records in the
 * journal, so the `knobwise eval --seed N ...` that audit prints to reproduce
 * a step is accepted by eval (it refused seeds above 2^31 - 1). */
#define KW_CLI_SEED_MAX LONG_MAX
int kw_cli_parse_seed(long *out, const char *verb, const char *text);
/* `-o -` (KW_CLI_STDOUT): the verb writes its file to standard output instead
 * (report, export, recommend --all); the others refuse it in
 * kw_runfolder_output. kw_cli_stdout writes len bytes and flushes: 0, or
 * "knobwise VERB: writing standard output: ..." printed and 1. */
#define KW_CLI_STDOUT "-"
/* s copied into dst (n bytes with its NUL) with each control byte (C0, DEL)
 * as '?': text a run recorded (its owner, its name) printed to a terminal,
 * where --owner $'\e]0;...' (or a journal written by anyone) printed its
 * escape sequences to whoever ran audit or recommend. */
void kw_cli_terminal_text(char *dst, size_t n, const char *s);
int kw_cli_stdout(const char *verb, const char *data, size_t len);

#endif
