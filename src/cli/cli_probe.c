/* cli_probe.c - `knobwise probe [-o FILE] [--force] [--name NAME] [--quick]`:
 * measure this host (kw_probe.c) and write it as an accelerator file,
 * validated against spaces/accelerator.xsd before anything is written.
 *
 * The output is checked before a single loop is timed (the measurement takes
 * seconds) by the one check of every -o (kw_runfolder_output): an existing
 * FILE is refused without --force (exit 2, the file untouched), and with it
 * unless probe wrote it (KW_PROBE_MARK: another run may read any other
 * accelerator file, kw_runfolder_output); anything that
 * is not a regular file, and a run folder's own files or inputs
 * (RUN/journal), are refused even with it; its folder must exist. The file is written through temp + fsync + rename
 * (kw_xml_save_atomic); without -o the document goes to stdout. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kw_cli.h"
#include "kw_probe.h"
#include "kw_runfolder.h"
#include "kw_xml.h"

static void kw_probe_help(void)
{
    printf("usage: knobwise probe [-o FILE] [--force] [--name NAME] [--quick]\n\n"
           "Measure this host and write an accelerator file for it (stdout without -o):\n"
           "achievable FLOP/s per precision (fp32 FMA loop; bf16 as the shipped worker\n"
           "computes it, converted on load), streaming bandwidth of every cache level\n"
           "(sizes from /sys/devices/system/cpu/cpu0/cache) and of DRAM, DRAM latency,\n"
           "the thread-team wake-up as the launch cost. Takes a few seconds; run it on\n"
           "an idle machine.\n\n"
           "  -o FILE     write FILE (refused when it exists, unless --force)\n"
           "  --force     replace an existing FILE that probe wrote\n"
           "  --name N    the accelerator's name (default cpu_host)\n"
           "  --quick     short timings (rough figures; for tests)\n");
}

int kw_cli_probe(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"force", no_argument, 0, 'f'},
        {"name", required_argument, 0, 'n'},   {"quick", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    const char *out = NULL, *name = "cpu_host";
    int force = 0, quick = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'f': force = 1; break;
        case 'n': name = optarg; break;
        case 'q': quick = 1; break;
        case 'h': kw_probe_help(); return 0;
        default: return kw_cli_usage_error("probe", "unknown option");
        }
    }
    if (optind < argc)
        return kw_cli_usage_error("probe", "unexpected argument '%s'", argv[optind]);
    size_t nl = strlen(name);
    if (nl == 0 || nl > 63 || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                           "0123456789_-") != nl ||
        (name[0] >= '0' && name[0] <= '9') || name[0] == '-')
        return kw_cli_usage_error("probe", "--name %s: a letter or _ then letters, digits, _ or - "
                                           "(at most 63)", name);
    int status;
    char odir[KW_PATH_MAX], oname[KW_PATH_MAX];
    static const kw_runfolder_verb who = {"probe", KW_PROBE_MARK, NULL};
    if (out && kw_runfolder_output(odir, sizeof odir, oname, sizeof oname, out, NULL, NULL, &who,
                                   force) != 0)
        return kw_cli_fail("probe", KW_EINPUT);

    kw_probe_opts po = {.quick = quick, .name = name, .sysfs_cpu = getenv("KW_PROBE_SYSFS"),
                         .cpuinfo = getenv("KW_PROBE_CPUINFO")};
    kw_probe_result r;
    xmlDocPtr doc = NULL;
    kw_xml_problems p = {0};
    int rc = kw_probe_measure(&r, &po);
    if (rc == 0)
        rc = kw_probe_accel_doc(&doc, &r);
    if (rc == 0 && (rc = kw_xml_validate(doc, out ? out : "probe", "spaces/accelerator.xsd", &p)) != 0)
        rc = kw_xml_problems_finish(&p) != 0 ? KW_EMODEL : rc; /* our own output: a bug, not input */
    if (rc == 0) {
        if (out)
            rc = kw_xml_save_atomic(doc, out);
        else if (xmlDocFormatDump(stdout, doc, 1) < 0 || fflush(stdout) != 0)
            rc = kw_error_set(KW_EIO, "cannot write to stdout");
    }
    status = rc == 0 ? 0 : kw_cli_fail("probe", rc);
    if (rc == 0) {
        fprintf(stderr, "probe: fp32 %.1f GFLOP/s, bf16 %.1f GFLOP/s on %d CPUs;", r.fp32_flops / 1e9,
                r.bf16_flops / 1e9, r.cpus);
        for (int i = 0; i < r.n_caches; i++)
            fprintf(stderr, " L%d %.0f GB/s;", r.cache[i].level, r.cache[i].bw_gb_s);
        fprintf(stderr, " DRAM %.1f GB/s, %.3f us; wake-up %.2f us\n", r.dram_bw_gb_s,
                r.dram_latency_us, r.wake_us);
    }
    xmlFreeDoc(doc);
    return status;
}
