/* cli_pending.c - verbs whose engine comes with a later issue (results, audit,
 * bisect, verify, recommend, report: issue 7). Each says so plainly and exits 1;
 * none pretends. The results area replaces these one by one. */
#include <stdio.h>

#include "kw_cli.h"

static int kw_cli_pending(const char *verb)
{
    fprintf(stderr, "knobwise %s: not available yet: it comes with the results and audit work (issue 7)\n",
            verb);
    return 1;
}

int kw_cli_report(int argc, char **argv) { (void)argc; (void)argv; return kw_cli_pending("report"); }
