/*
 * cli.h - what every `flexq` command shares: the command table entry, the
 * global options, and small helpers for usage and argument errors.
 *
 * Adding a command (git-builtin style) is two steps:
 *   1. write src/cli/cmd_NAME.c defining
 *        const struct fq_cli_cmd fq_cli_cmd_NAME = {"name", fn, "summary",
 *                                                   "usage text"};
 *   2. add one line `X(NAME)` to FQ_CLI_COMMANDS below (it declares the
 *      entry and puts it in the dispatch table of flexq_main.c, in the
 *      order of the list, which is the order `flexq --help` prints).
 *
 * A command function gets argv with the command name at argv[0] and the
 * global flags (--server, --token) already removed; `--help`/`-h` never
 * reach it (the dispatcher prints the entry's usage). It returns the exit
 * status: FQ_CLI_OK (0) or FQ_CLI_FAIL (1), the codes kubectl uses too.
 */
#ifndef FLEXQ_CLI_H
#define FLEXQ_CLI_H

#include <stdio.h>

enum {
    FQ_CLI_OK = 0,
    FQ_CLI_FAIL = 1,
};

struct fq_cli_cmd {
    const char *name;                 /* "validate" */
    int (*fn)(int argc, char **argv); /* returns the exit status */
    const char *summary;              /* one line for `flexq --help` */
    const char *usage;                /* full text for `flexq CMD --help` */
};

/* The command list: one X(name) per command, name = the suffix of its
 * fq_cli_cmd_NAME entry. */
/* clang-format off */
#define FQ_CLI_COMMANDS(X) \
    X(apply) \
    X(get) \
    X(describe) \
    X(delete) \
    X(scale) \
    X(wait) \
    X(create) \
    X(nodepool) \
    X(gcloud) \
    X(config) \
    X(logs) \
    X(sim) \
    X(estimate) \
    X(validate) \
    X(version) \
    X(demo)
/* clang-format on */

#define FQ_CLI_DECLARE(name) extern const struct fq_cli_cmd fq_cli_cmd_##name;
FQ_CLI_COMMANDS(FQ_CLI_DECLARE)
#undef FQ_CLI_DECLARE

/* Global options, parsed by flexq_main.c from anywhere on the command line
 * (before a `--`), falling back to the environment. */
struct fq_cli_global {
    const char *server; /* --server, else $FLEXQ_SERVER, else the default */
    const char *token;  /* --token, else $FLEXQ_TOKEN, else NULL */
};

#define FQ_CLI_DEFAULT_SERVER "http://127.0.0.1:8265"

/*
 * The global options of this run (borrowed; never NULL). Before
 * fq_cli_global_set is called (e.g. in a unit test that calls a command
 * function directly) it holds the environment's values and the default.
 */
const struct fq_cli_global *fq_cli_global(void);
/* Records the global options (copied by value; the strings are borrowed). */
void fq_cli_global_set(const struct fq_cli_global *g);

/* Prints "flexq NAME: MESSAGE\n" plus a pointer to `--help` on stderr, and
 * returns FQ_CLI_FAIL, for argument errors:
 *   return fq_cli_usage_error("validate", "-f needs a file name"); */
int fq_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints a command's usage to `out`. */
void fq_cli_print_usage(const struct fq_cli_cmd *cmd, FILE *out);

/* Finds a command by name in the table; NULL if there is none. */
const struct fq_cli_cmd *fq_cli_find(const char *name);
/* The table (borrowed, `*n` entries), in FQ_CLI_COMMANDS order. */
const struct fq_cli_cmd *const *fq_cli_commands(size_t *n);

/*
 * Reads all of a file, or stdin when `path` is "-", into an owned buffer
 * (NUL-terminated; *len excludes the NUL). Refuses inputs over `max` bytes.
 * Returns 0 or a negative FQ_E* code with `err` set ("FILE: what").
 */
struct fq_err;
int fq_cli_read_file(const char *path, size_t max, char **out, size_t *len,
                     struct fq_err *err);

/* The "Estimated Start" section of `flexq describe` for a waiting job
 * (cmd_estimate.c); prints nothing for other objects. */
struct fq_client;
struct fq_value;
void fq_cli_estimate_section(struct fq_client *c, const struct fq_value *obj);

/* `flexq validate` with its output streams, for tests (cmd_validate.c). */
int fq_cli_validate(int argc, char **argv, FILE *out, FILE *err);

#endif
