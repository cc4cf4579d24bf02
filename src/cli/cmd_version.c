/*
 * cmd_version.c - `flexq version`: prints the client's version.
 *
 * The server's version needs the HTTP client (src/cli/client.c, written by
 * the daemon/CLI engineer); until it exists `flexq version` prints only the
 * client line, and `--client` is accepted for kubectl habits.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int run(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--client") != 0)
            return fq_cli_usage_error("version", "unknown argument \"%s\"",
                                      argv[i]);
    }
    printf("Client Version: v%s\n", FLEXQ_VERSION);
    return FQ_CLI_OK;
}

const struct fq_cli_cmd fq_cli_cmd_version = {
    "version", run, "Print the flexq version",
    "Usage: flexq version [--client]\n"
    "\n"
    "Prints the version of this flexq client.\n"
    "  --client  only the client version (the default for now)\n"};
