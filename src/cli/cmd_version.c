/*
 * cmd_version.c - `flexq version`: prints the client's version, then the
 * server's (GET /version through client.c), as kubectl does.
 *
 * `--client` prints only the client line. When the server cannot be
 * reached the client line is still printed and the exit status is 1.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "client.h"
#include "cmdutil.h"

static int run(int argc, char **argv)
{
    bool client_only = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--client") != 0)
            return fq_cli_usage_error("version", "unknown argument \"%s\"",
                                      argv[i]);
        client_only = true;
    }
    printf("Client Version: v%s\n", FLEXQ_VERSION);
    if (client_only)
        return FQ_CLI_OK;
    fflush(stdout);
    struct fq_client *c = fq_client_new(NULL, NULL);
    struct fq_value *v = NULL;
    struct fq_err err = {0};
    int rc = fq_client_get(c, "/version", &v, &err);
    fq_client_free(c);
    if (rc < 0)
        return fq_cmd_fail(rc, &err);
    printf("Server Version: %s\n", fq_value_path_str(v, "gitVersion", "?"));
    fq_value_free(v);
    return FQ_CLI_OK;
}

const struct fq_cli_cmd fq_cli_cmd_version = {
    "version", run, "Print the client and server versions",
    "Usage: flexq version [--client]\n"
    "\n"
    "Prints the version of this flexq client and of the flexqd it talks to\n"
    "(--server / FLEXQ_SERVER).\n"
    "  --client  only the client version\n"};
