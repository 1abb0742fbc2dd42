/* cli_tune.c - placeholder until the search engine lands: the engine's author
 * replaces this whole file. It never pretends to tune. */
#include <stdio.h>

#include "kw_cli.h"

int kw_cli_tune(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "knobwise tune: the search engine is not built yet (issue 6)\n");
    return 1;
}
