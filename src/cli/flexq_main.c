/*
 * flexq_main.c - the `flexq` command: global flags, then dispatch.
 *
 * How it works: main() removes the global flags (--server URL,
 * --server=URL, --token T, --token=T) from anywhere on the command line up
 * to a `--`, records them with fq_cli_global_set (falling back to
 * $FLEXQ_SERVER / $FLEXQ_TOKEN), finds the command in the table of cli.c
 * and calls it with the rest. `--help`/`-h` anywhere before `--` print the
 * command's usage instead of running it; `flexq help CMD` does the same,
 * and `flexq`, `flexq --help` and `flexq help` list the commands. Command
 * flags given before the command (`flexq -n team-a get workloads`) are
 * moved after it, as kubectl accepts them.
 *
 * Exit status: what the command returns (0 or 1); 1 for an unknown command
 * or a bad global flag.
 *
 * It does not parse command flags: each cmd_*.c does its own.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void list_commands(FILE *out)
{
    size_t n;
    const struct fq_cli_cmd *const *cmds = fq_cli_commands(&n);
    fputs("flexq runs AI training jobs through Kueue-style queues, on "
          "on-demand\ncapacity first and flex-start capacity when that "
          "runs out.\n\nUsage: flexq [--server URL] [--token TOKEN] [-n NS] "
          "COMMAND [ARGS...]\n\nCommands:\n",
          out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %-12s %s\n", cmds[i]->name, cmds[i]->summary);
    fputs("\nRun 'flexq help COMMAND' or 'flexq COMMAND --help' for more.\n",
          out);
}

static int unknown(const char *name)
{
    fprintf(stderr,
            "flexq: unknown command \"%s\"\nRun 'flexq --help' for the list "
            "of commands.\n",
            name);
    return FQ_CLI_FAIL;
}

/* `--name VALUE` or `--name=VALUE` at argv[*i]: sets *val and advances *i
 * past what it used; 1 if it matched, 0 if not, -1 if VALUE is missing. */
static int take_flag(int argc, char **argv, int *i, const char *name,
                     const char **val)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *val = argv[++*i];
    return 1;
}

/* Command flags that take a value, as kubectl's global flags do. */
static bool takes_value(const char *a)
{
    static const char *const v[] = {
        "-n",         "--namespace",      "-o", "--output",  "-l",
        "--selector", "--field-selector", "-f", "--filename"};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        if (!strcmp(a, v[i]))
            return true;
    return false;
}

/* kubectl takes flags before the verb too (`flexq -n team-a get wl`):
 * flags ahead of the first word move to just after it, where the commands
 * parse them. Returns the count (unchanged). */
static int verb_first(char **rest, int n)
{
    int v = 0;
    while (v < n && rest[v][0] == '-' && strcmp(rest[v], "--")) {
        if (takes_value(rest[v]) && v + 1 < n)
            v++;
        v++;
    }
    if (v == 0 || v >= n)
        return n;
    char *verb = rest[v];
    memmove(rest + 1, rest, (size_t)v * sizeof(*rest));
    rest[0] = verb;
    return n;
}

int main(int argc, char **argv)
{
    struct fq_cli_global g = *fq_cli_global();
    char **rest = calloc((size_t)argc + 1, sizeof(*rest));
    int nrest = 0, help = 0, dashdash = 0;
    if (!rest)
        return FQ_CLI_FAIL;
    for (int i = 1; i < argc; i++) {
        int r = 0;
        if (!dashdash) {
            if (strcmp(argv[i], "--") == 0)
                dashdash = 1;
            else if (strcmp(argv[i], "--help") == 0 ||
                     strcmp(argv[i], "-h") == 0) {
                help = 1;
                continue;
            } else if ((r = take_flag(argc, argv, &i, "--server", &g.server)) ==
                       0)
                r = take_flag(argc, argv, &i, "--token", &g.token);
        }
        if (r < 0) {
            fprintf(stderr, "flexq: %s needs a value\n", argv[i]);
            free(rest);
            return FQ_CLI_FAIL;
        }
        if (r == 0)
            rest[nrest++] = argv[i];
    }
    rest[nrest] = NULL;
    fq_cli_global_set(&g);
    nrest = verb_first(rest, nrest);

    int rc = FQ_CLI_OK;
    if (nrest == 0) {
        list_commands(help ? stdout : stderr);
        rc = help ? FQ_CLI_OK : FQ_CLI_FAIL;
    } else if (strcmp(rest[0], "help") == 0) {
        if (nrest == 1) {
            list_commands(stdout);
        } else {
            const struct fq_cli_cmd *c = fq_cli_find(rest[1]);
            if (c)
                fq_cli_print_usage(c, stdout);
            else
                rc = unknown(rest[1]);
        }
    } else {
        const struct fq_cli_cmd *c = fq_cli_find(rest[0]);
        if (!c)
            rc = unknown(rest[0]);
        else if (help)
            fq_cli_print_usage(c, stdout);
        else
            rc = c->fn(nrest, rest);
    }
    free(rest);
    return rc;
}
