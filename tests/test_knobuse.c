/* test_knobuse.c - knobs a space's block cannot use (kw_knobuse.h) and the
 * warning `knobwise validate` prints for each. The shipped default tunes the
 * Llama attention block and lists only knobs it can use; its only residual is
 * its last operator (nothing to fuse it with), so a copy that adds
 * fuse_residual_norm is flagged for it; a copy restricted to max_batch 1 adds
 * batch_timeout_us; the MLP block with a gate/up pair can use fuse_gate_up, the
 * attention block has no such pair. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kw_knobuse.h"
#include "kw_load.h"
#include "lib/kw_tl.h"

static void setup(void) { gsl_set_error_handler_off(); }
TestSuite(knobuse, .init = setup);

static int uses(const kw_config *cfg, const kw_knobuse *ku, int n, const char *knob)
{
    for (int i = 0; i < n; i++)
        if (strcmp(cfg->space.knobs.knobs[ku[i].knob].name, knob) == 0)
            return 0;
    return 1;
}

static kw_config *load(const char *rel)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", kw_tl_src(), rel);
    kw_config *cfg = NULL;
    cr_assert_eq(kw_load_config(&cfg, p, NULL, NULL), 0, "%s", kw_error_last());
    return cfg;
}

/* A copy of the shipped default with fuse_residual_norm added after
 * fuse_attention and its accelerator and workload named by absolute path;
 * returns the file's path (in DIR) and the added knob's line. */
static char *default_with_residual_norm(const char *dir, int *line)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/spaces/default.xml", kw_tl_src());
    char *text = kw_tl_slurp(p);
    cr_assert(text, "%s", p);
    size_t cap = strlen(text) + 8192, n = 0;
    char *out = malloc(cap);
    cr_assert(out);
    *line = 0;
    int ln = 1;
    for (const char *s = text; *s;) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s + 1) : strlen(s);
        const char *f = strstr(s, "file=\"");
        if (f && f < s + len) {
            n += (size_t)snprintf(out + n, cap - n, "%.*s%s/spaces/%.*s", (int)(f + 6 - s), s,
                                  kw_tl_src(), (int)(len - (size_t)(f + 6 - s)), f + 6);
        } else {
            memcpy(out + n, s, len);
            n += len;
        }
        ln++;
        static const char fa[] = "  <knob name=\"fuse_attention\"";
        if (strncmp(s, fa, sizeof fa - 1) == 0) {
            n += (size_t)snprintf(out + n, cap - n,
                                  "  <knob name=\"fuse_residual_norm\" values=\"off on\" "
                                  "baseline=\"off\"/>\n");
            *line = ln++;
        }
        s += len;
    }
    out[n] = 0;
    cr_assert_gt(*line, 0, "no fuse_attention knob in %s", p);
    char *path = malloc(strlen(dir) + 32);
    cr_assert(path);
    sprintf(path, "%s/default_rn.xml", dir);
    cr_assert_eq(kw_tl_write(path, out), 0);
    free(out);
    free(text);
    return path;
}

Test(knobuse, the_default_uses_every_knob_it_lists)
{
    kw_config *cfg = load("spaces/default.xml");
    kw_knobuse ku[KW_KNOB_MAX];
    int n = kw_knobuse_check(ku, KW_KNOB_MAX, cfg);
    cr_assert_eq(n, 0, "%d knobs flagged, the first %s",
                 n, n > 0 ? cfg->space.knobs.knobs[ku[0].knob].name : "");
    kw_load_config_free(cfg);
}

Test(knobuse, the_default_block_cannot_use_fuse_residual_norm)
{
    char *dir = kw_tl_tmpdir("knobuse");
    int line = 0;
    char *path = default_with_residual_norm(dir, &line);
    kw_config *cfg = NULL;
    cr_assert_eq(kw_load_config(&cfg, path, NULL, NULL), 0, "%s", kw_error_last());
    kw_knobuse ku[KW_KNOB_MAX];
    int n = kw_knobuse_check(ku, KW_KNOB_MAX, cfg);
    cr_assert_eq(n, 1, "%d knobs flagged", n);
    cr_assert(!uses(cfg, ku, n, "fuse_residual_norm"));
    cr_assert(strstr(ku[0].why, "no residual followed by a norm") != NULL, "%s", ku[0].why);
    cr_assert_eq(ku[0].line, line);
    /* everything else of the catalogue it lists is used by the attention block */
    cr_assert(uses(cfg, ku, n, "fuse_qkv"));
    cr_assert(uses(cfg, ku, n, "fuse_attention"));
    cr_assert(uses(cfg, ku, n, "batch_timeout_us"));
    cr_assert(uses(cfg, ku, n, "placement"));
    kw_load_config_free(cfg);
    /* validate names the file and the knob's line, warns and still passes */
    char args[8400], want[4300];
    snprintf(args, sizeof args, "validate '%s'", path);
    kw_tl_proc r = kw_tl_sh(args, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(want, sizeof want, "%s:%d: warning: knob 'fuse_residual_norm' has no effect here", path,
             line);
    cr_assert(strstr(r.err, want), "%s\nwanted %s", r.err, want);
    cr_assert(strstr(r.out, "default_rn.xml: ok") != NULL, "%s", r.out);
    kw_tl_free(&r);
    free(path);
    kw_tl_rmrf(dir);
}

Test(knobuse, max_batch_one_makes_the_timeout_useless)
{
    kw_config *cfg = load("spaces/default.xml");
    kw_knobspace *ks = &cfg->space.knobs;
    int mb = kw_knobs_find(ks, "max_batch");
    cr_assert_geq(mb, 0);
    ks->knobs[mb].n_values = 1;
    snprintf(ks->knobs[mb].values[0], KW_VALUE_LEN, "1");
    ks->knobs[mb].baseline = 0;
    kw_knobuse ku[KW_KNOB_MAX];
    int n = kw_knobuse_check(ku, KW_KNOB_MAX, cfg);
    cr_assert_eq(n, 1);
    cr_assert(!uses(cfg, ku, n, "batch_timeout_us"));
    /* one group of cores: every cores_per_request value equal to the core count */
    int cp = kw_knobs_find(ks, "cores_per_request");
    ks->knobs[cp].n_values = 1;
    snprintf(ks->knobs[cp].values[0], KW_VALUE_LEN, "%d", cfg->accel.cores);
    n = kw_knobuse_check(ku, KW_KNOB_MAX, cfg);
    cr_assert(!uses(cfg, ku, n, "placement"));
    kw_load_config_free(cfg);
}

/* Every shipped space tunes only knobs its block can use: a knob it cannot use
 * doubles the space's nominal size (and the quality bench's "% of the space"
 * budgets) without a configuration the model can tell apart. */
Test(knobuse, every_shipped_space_uses_every_knob_it_lists)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/spaces", kw_tl_src());
    DIR *d = opendir(dir);
    cr_assert(d, "%s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".xml") != 0)
            continue;
        char args[8400];
        snprintf(args, sizeof args, "validate '%s/%s'", dir, e->d_name);
        kw_tl_proc r = kw_tl_sh(args, NULL);
        cr_assert_eq(r.status, 0, "%s: %s", e->d_name, r.err);
        cr_assert_null(strstr(r.err, "warning"), "%s: %s", e->d_name, r.err);
        kw_tl_free(&r);
        n++;
    }
    closedir(d);
    cr_assert_geq(n, 20, "%d spaces", n);
}

/* The knobs fuse_<knob> fuses (kw_knobuse_fuses, the search's fusion pairs) come
 * from the block's operators, not from names: the default's attention block merges
 * q, k and v (merge="qkv", the same K) tiled by group qkv, so fuse_qkv fuses exactly
 * the space's qkv.* knobs. The same block with that tiling group renamed proj (a
 * user's workload) keeps the link, now to the proj.* knobs; a rule by name
 * (fuse_qkv with qkv.*) finds no knob there and links nothing. */
static uint64_t group_knobs(const kw_knobspace *ks, const char *group)
{
    uint64_t m = 0;
    size_t n = strlen(group);
    for (int j = 0; j < ks->n_knobs; j++)
        if (strncmp(ks->knobs[j].name, group, n) == 0 && ks->knobs[j].name[n] == '.')
            m |= 1ULL << j;
    return m;
}

Test(knobuse, fuse_qkv_fuses_the_group_of_the_qkv_gemms_whatever_its_name)
{
    kw_config *cfg = load("spaces/default.xml");
    kw_knobspace *ks = &cfg->space.knobs;
    int f = kw_knobs_find(ks, "fuse_qkv");
    cr_assert_geq(f, 0);
    uint64_t fuses[KW_KNOB_MAX];
    kw_knobuse_fuses(fuses, cfg);
    uint64_t qkv = group_knobs(ks, "qkv");
    cr_assert_neq(qkv, 0, "the default tiles group qkv");
    cr_assert_eq(fuses[f], qkv, "fuse_qkv fuses %#llx, the qkv.* knobs are %#llx",
                 (unsigned long long)fuses[f], (unsigned long long)qkv);
    for (int j = 0; j < ks->n_knobs; j++)
        if (j != f)
            cr_assert_eq(fuses[j], 0, "%s fuses nothing", ks->knobs[j].name);
    /* rename the tiling group qkv to proj: in the block and in the space's knobs */
    kw_block *b = NULL;
    for (int i = 0; i < cfg->workload.n_blocks; i++)
        if (strcmp(cfg->workload.blocks[i].name, cfg->space.block) == 0)
            b = &cfg->workload.blocks[i];
    cr_assert_not_null(b);
    int merged = 0;
    for (int i = 0; i < b->n_ops; i++)
        if (strcmp(b->ops[i].group, "qkv") == 0) {
            merged += strcmp(b->ops[i].merge, "qkv") == 0;
            snprintf(b->ops[i].group, sizeof b->ops[i].group, "proj");
        }
    cr_assert_geq(merged, 2, "q, k and v carry merge=\"qkv\"");
    for (int g = 0; g < b->n_groups; g++)
        if (strcmp(b->groups[g], "qkv") == 0)
            snprintf(b->groups[g], sizeof b->groups[g], "proj");
    for (int j = 0; j < ks->n_knobs; j++)
        if (qkv >> j & 1u) {
            char field[KW_NAME_MAX];
            snprintf(field, sizeof field, "%s", strchr(ks->knobs[j].name, '.') + 1);
            int n = snprintf(ks->knobs[j].name, sizeof ks->knobs[j].name, "proj.%s", field);
            cr_assert(n > 0 && (size_t)n < sizeof ks->knobs[j].name, "proj.%s fits", field);
        }
    cr_assert_eq(group_knobs(ks, "qkv"), 0, "no knob is named qkv.* any more");
    cr_assert_eq(group_knobs(ks, "proj"), qkv);
    kw_knobuse_fuses(fuses, cfg);
    cr_assert_eq(fuses[f], qkv, "fuse_qkv fuses %#llx, the proj.* knobs are %#llx",
                 (unsigned long long)fuses[f], (unsigned long long)qkv);
    kw_load_config_free(cfg);
}

/* The serving queue's knobs (kw_knobuse_queue, the search's queue pairs): on
 * validate_resnet_h100 the batcher's max_batch and the dispatcher's placement, and
 * nothing else (not precision, fuse_epilogue or a tile). */
Test(knobuse, the_queue_knobs_are_the_batcher_and_dispatcher_ones)
{
    kw_config *cfg = load("spaces/validate_resnet_h100.xml");
    const kw_knobspace *ks = &cfg->space.knobs;
    int mb = kw_knobs_find(ks, "max_batch"), pl = kw_knobs_find(ks, "placement");
    cr_assert(mb >= 0 && pl >= 0);
    uint64_t q = kw_knobuse_queue(cfg);
    cr_assert_eq(q, 1ULL << mb | 1ULL << pl, "queue knobs %#llx", (unsigned long long)q);
    kw_load_config_free(cfg);
}
