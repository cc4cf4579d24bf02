/*
 * cmdutil.h - what the kubectl-style commands (apply, get, describe,
 * delete, wait, create) share: flag parsing, kind/name resolution, reading
 * manifests, and printing errors the way kubectl does.
 */
#ifndef FLEXQ_CLI_CMDUTIL_H
#define FLEXQ_CLI_CMDUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "client.h"
#include "flexq/err.h"
#include "flexq/kinds.h"
#include "flexq/value.h"

#define FQ_CMD_MAX_ARGS 64

/* The flags the commands share; each command picks the ones it accepts. */
struct fq_cmd_flags {
    const char *ns;                     /* -n / --namespace; NULL: not given */
    bool all_ns;                        /* -A / --all-namespaces */
    const char *selector;               /* -l / --selector */
    const char *output;                 /* -o / --output */
    const char *files[FQ_CMD_MAX_ARGS]; /* -f / --filename */
    int nfiles;
    const char *for_; /* --for */
    const char *timeout;
    const char *from_file[FQ_CMD_MAX_ARGS];
    int nfrom_file;
    const char *from_literal[FQ_CMD_MAX_ARGS];
    int nfrom_literal;
    bool ignore_not_found;
    bool watch;
    bool no_headers;
    bool pending;               /* get workloads --pending (positions.h) */
    bool show_labels;           /* get --show-labels */
    const char *field_selector; /* get --field-selector a.b=c,d!=e */
    const char *args[FQ_CMD_MAX_ARGS]; /* positional */
    int nargs;
};

/*
 * Parses argv[1..] (argv[0] is the command). `allowed` lists the long
 * names accepted ("namespace,all-namespaces,selector,output"). Prints a
 * usage error and returns -1 on an unknown or incomplete flag.
 */
int fq_cmd_parse(const char *cmd, int argc, char **argv, const char *allowed,
                 struct fq_cmd_flags *f);

/* The namespace to use: -n, else $FLEXQ_NAMESPACE, else "default". */
const char *fq_cmd_namespace(const struct fq_cmd_flags *f);

/* Resolves a kind typed by a user; prints kubectl's error when unknown. */
enum fq_kind fq_cmd_kind(const char *cmd, const char *name);

/* Prints an error from the client: `Error from server (Reason): msg` for
 * server answers, `error: msg` otherwise. Returns FQ_CLI_FAIL (1). */
int fq_cmd_fail(int code, const struct fq_err *err);

/*
 * Reads and validates manifests (files or "-") whole: every document of
 * every file is decoded and checked (fq_manifest_read) before anything
 * is returned; on any problem all of them are printed and -1 returned. Namespaced objects without a namespace
 * get `ns`. *docs receives the objects (owned).
 */
int fq_cmd_read_manifests(const char *const *files, int nfiles, const char *ns,
                          struct fq_docs *docs);

/* A Go duration ("30s", "5m", "1h30m", "500ms") or plain seconds, in ms;
 * -1 when malformed. */
int64_t fq_cmd_duration(const char *s);

/* What a command's positional arguments name: kinds, and optional names. */
struct fq_cmd_target {
    enum fq_kind kind;
    const char *name; /* NULL: every object of the kind */
};

/*
 * Resolves `KIND[,KIND...] [NAME...]` or `KIND/NAME [KIND/NAME...]` into
 * targets (at most FQ_CMD_MAX_ARGS). Prints the error and returns -1 when a
 * kind is unknown or the forms are mixed; else the count.
 */
int fq_cmd_targets(const char *cmd, const struct fq_cmd_flags *f,
                   struct fq_cmd_target *out);
#endif
