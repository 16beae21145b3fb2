/* opara: the command-line front of opara.h. One file per subcommand (tools/cli_<cmd>.c). */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* clock_gettime, stat, setenv: also when the library is linked from elsewhere */
#endif
#define OPARA_IMPLEMENTATION
#include "../opara.h"
#include "tool_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.c"
#include "cli_load.c"
#include "cli_version.c"
#include "cli_convert.c"
#include "cli_info.c"
#include "cli_run.c"
#include "cli_bench.c"
#include "cli_plan.c"

typedef struct cli_command {
    const char* name;
    int (*run)(int argc, char** argv);
    const char* usage;
} cli_command;

static const cli_command cli_commands[] = {
    {"version", cli_version, "version                      print the library version"},
    {"run", cli_run, "run FILE [--backend auto|cpu|cuda] [--strategy S] [--batch N] [--iters N] [--threads N] [--shape NAME=d0,...] [--default-dim N] [--input NAME=F.npy] [--output-dir DIR] [--trace OUT.json] [--profile] [--profile-json OUT.json]"},
    {"convert", cli_convert, "convert IN.onnx OUT.opara [--shape NAME=d0,d1,...] [--default-dim N] [--c-header OUT.h]"},
    {"info", cli_info, "info FILE [--json] [--shape NAME=d0,...] [--default-dim N]  operators, parameters, inputs/outputs and DAG width of a model"},
    {"bench", cli_bench, "bench FILE --sim DEVICE      every strategy side by side on the GPU simulator (simulated)"},
    {"plan", cli_plan, "plan FILE [--strategy opara|opara-topo|sequential|wavefront|nimble|all] [--batch N] "
                       "[--shape NAME=d0,...] [--default-dim N] [--device NAME] [--dot OUT.dot] [--json] [--verify]"},
};

static int cli_usage(FILE* out) {
    size_t i;
    fprintf(out, "usage: opara <command> [options]\ncommands:\n");
    for (i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; ++i) fprintf(out, "  %s\n", cli_commands[i].usage);
    return out == stderr ? 2 : 0;
}

static int cli_main(int argc, char** argv) {
    size_t i;
    if (argc < 2) return cli_usage(stderr);
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cli_usage(stdout);
    for (i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; ++i)
        if (strcmp(argv[1], cli_commands[i].name) == 0) return cli_commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "opara: unknown command '%s'\n", argv[1]);
    return cli_usage(stderr);
}

#ifdef _WIN32
/* Windows hands main() its arguments in the ANSI code page, which cannot spell every file name: the
   wide ones are taken instead (built with -municode) and passed on as UTF-8, what the library expects. */
int wmain(int argc, wchar_t** wargv) {
    char** argv = (char**)calloc((size_t)argc + 1, sizeof *argv);
    int i, n, rc = 2;
    for (i = 0; argv && i < argc; ++i) {
        n = WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, NULL, 0, NULL, NULL);
        if (n <= 0 || !(argv[i] = (char*)malloc((size_t)n))) break;
        WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, argv[i], n, NULL, NULL);
    }
    if (argv && i == argc) rc = cli_main(argc, argv);
    else fprintf(stderr, "opara: out of memory reading the command line\n");
    for (i = 0; argv && i < argc; ++i) free(argv[i]);
    free(argv);
    return rc;
}
#else
int main(int argc, char** argv) { return cli_main(argc, argv); }
#endif
