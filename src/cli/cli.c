/*
 * cli.c - helpers every flexq command shares (see cli.h): the global
 * options, the command table, usage printing and reading a file or stdin.
 *
 * The command table is built here from FQ_CLI_COMMANDS, not in
 * flexq_main.c, so that unit tests (which link the CLI library but not
 * main) can look commands up and call them. The global options live in one
 * file-static struct: the CLI is a process with one command line, unlike
 * the core, which keeps no globals.
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/err.h"

#define FQ_CLI_ENTRY(name) &fq_cli_cmd_##name,
static const struct fq_cli_cmd *const commands[] = {
    FQ_CLI_COMMANDS(FQ_CLI_ENTRY)};
#undef FQ_CLI_ENTRY

static struct fq_cli_global global;
static int global_ready;

const struct fq_cli_global *fq_cli_global(void)
{
    if (!global_ready) {
        const char *s = getenv("FLEXQ_SERVER");
        const char *t = getenv("FLEXQ_TOKEN");
        global.server = s && *s ? s : FQ_CLI_DEFAULT_SERVER;
        global.token = t && *t ? t : NULL;
        global_ready = 1;
    }
    return &global;
}

void fq_cli_global_set(const struct fq_cli_global *g)
{
    global = *g;
    global_ready = 1;
}

int fq_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "flexq %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nRun 'flexq %s --help' for usage.\n", cmd);
    return FQ_CLI_FAIL;
}

void fq_cli_print_usage(const struct fq_cli_cmd *cmd, FILE *out)
{
    fprintf(out, "%s\n\n%s", cmd->summary, cmd->usage);
    size_t n = strlen(cmd->usage);
    if (n && cmd->usage[n - 1] != '\n')
        fputc('\n', out);
    fputs(
        "\nGlobal flags:\n"
        "  --server URL   flexqd address (env FLEXQ_SERVER; default " FQ_CLI_DEFAULT_SERVER
        ")\n"
        "  --token TOKEN  bearer token (env FLEXQ_TOKEN)\n",
        out);
}

const struct fq_cli_cmd *fq_cli_find(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

const struct fq_cli_cmd *const *fq_cli_commands(size_t *n)
{
    *n = sizeof(commands) / sizeof(commands[0]);
    return commands;
}

int fq_cli_read_file(const char *path, size_t max, char **out, size_t *len,
                     struct fq_err *err)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return fq_err_set(err, errno == ENOENT ? FQ_ENOTFOUND : FQ_EIO,
                          "%s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *data = fq_xmalloc(cap + 1);
    int rc = 0;
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                rc = fq_err_set(err, FQ_ELIMIT,
                                "%s: larger than the limit of %zu bytes",
                                is_stdin ? "<stdin>" : path, max);
                break;
            }
            cap *= 2;
            data = fq_xrealloc(data, cap + 1);
        }
        size_t got = fread(data + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = fq_err_set(err, FQ_EIO, "%s: read error",
                                is_stdin ? "<stdin>" : path);
            break;
        }
    }
    if (rc == 0 && n > max)
        rc =
            fq_err_set(err, FQ_ELIMIT, "%s: larger than the limit of %zu bytes",
                       is_stdin ? "<stdin>" : path, max);
    if (!is_stdin)
        fclose(f);
    if (rc < 0) {
        free(data);
        return rc;
    }
    data[n] = '\0';
    *out = data;
    *len = n;
    return 0;
}
