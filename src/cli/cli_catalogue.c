/* cli_catalogue.c - `knobwise show --catalogue`: every knob the model
 * understands, printed from the one table (kw_catalogue.c): its name, family,
 * meaning, domain, what each value means, which blocks use it in words, and
 * which blocks of the loaded workload do (kw_catalogue_uses). --format csv
 * gives one row per knob (header KW_CATALOGUE_CSV_HEADER) for tools and for
 * the documentation test. */
#include <stdio.h>
#include <string.h>

#include "kw_catalogue.h"
#include "kw_cli.h"

/* One CSV field, quoted when it holds a comma, quote or newline (RFC 4180). */
static void kw_cat_csv(const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

/* The workload's blocks that use knob k ("name" or "name (groups a, b)"). */
static void kw_cat_blocks(char *buf, size_t size, const kw_cat_knob *k, const kw_workload *w)
{
    size_t u = 0;
    buf[0] = '\0';
    for (int b = 0; b < w->n_blocks && u < size; b++) {
        const kw_block *blk = &w->blocks[b];
        if (!k->per_group) {
            if (kw_catalogue_uses(k, blk, NULL))
                u += (size_t)snprintf(buf + u, size - u, "%s%s", u ? "; " : "", blk->name);
            continue;
        }
        if (blk->n_groups == 0)
            continue;
        u += (size_t)snprintf(buf + u, size - u, "%s%s (groups", u ? "; " : "", blk->name);
        for (int g = 0; g < blk->n_groups && u < size; g++)
            u += (size_t)snprintf(buf + u, size - u, "%s %s", g ? "," : "", blk->groups[g]);
        if (u < size)
            u += (size_t)snprintf(buf + u, size - u, ")");
    }
    if (!buf[0])
        snprintf(buf, size, "none");
}

int kw_cli_catalogue_show(const kw_config *c, int csv)
{
    const kw_cat_knob *t = kw_catalogue();
    char dom[512], blocks[2048];
    if (csv)
        printf("%s\n", KW_CATALOGUE_CSV_HEADER);
    else
        printf("knob catalogue: every knob the model understands (a space lists the ones it "
               "tunes; GROUP is a tiling group of the block)\n"
               "blocks of workload '%s' that use each knob are named after 'here:'\n",
               c->workload.name);
    for (int i = 0; i < KW_CAT_COUNT; i++) {
        const kw_cat_knob *k = &t[i];
        char name[96];
        snprintf(name, sizeof name, "%s%s", k->per_group ? "GROUP." : "", k->name);
        kw_catalogue_domain(dom, sizeof dom, k);
        kw_cat_blocks(blocks, sizeof blocks, k, &c->workload);
        if (csv) {
            printf("%s,%s,", name, k->family);
            kw_cat_csv(dom);
            putchar(',');
            kw_cat_csv(k->meaning);
            putchar(',');
            kw_cat_csv(k->used_by);
            putchar(',');
            kw_cat_csv(blocks);
            putchar('\n');
            continue;
        }
        printf("\n%s  [%s]  %s\n", name, k->family, k->meaning);
        printf("  values:  %s\n", dom);
        for (int v = 0; v < k->n_values; v++)
            printf("    %-16s %s\n", k->values[v].name, k->values[v].meaning);
        printf("  used by: %s; here: %s\n", k->used_by, blocks);
    }
    return 0;
}
