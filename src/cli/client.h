/*
 * client.h - the CLI's HTTP client for flexqd's API (libcurl inside).
 *
 * Commands build paths with fq_client_path and call fq_client_get / post /
 * put / patch / delete, which return 0 for a 2xx answer with the parsed
 * JSON body in *out (owned, may be NULL), or a negative FQ_E* code matching
 * the server's Status reason with the server's message in `err` (so the CLI
 * can print it as is). A server that cannot be reached is FQ_EIO with a
 * hint. The server comes from --server / FLEXQ_SERVER and the token from
 * --token / FLEXQ_TOKEN (cli.h's fq_cli_global).
 */
#ifndef FLEXQ_CLI_CLIENT_H
#define FLEXQ_CLI_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "flexq/err.h"
#include "flexq/kinds.h"
#include "flexq/value.h"

struct fq_client;

/* Uses `server` and `token` when not NULL, else the global options. */
struct fq_client *fq_client_new(const char *server, const char *token);
void fq_client_free(struct fq_client *c);

/*
 * "/apis/GROUP/VERSION/[namespaces/NS/]PLURAL[/NAME[/SUB]]" (or /api/v1/...)
 * for a kind. `ns` is ignored for cluster-scoped kinds; NULL or "" lists
 * across namespaces. `query` (may be NULL) is appended after a '?' and
 * must already be escaped (fq_client_escape). Returns owned.
 */
char *fq_client_path(enum fq_kind kind, const char *ns, const char *name,
                     const char *sub, const char *query);
/* URL-escapes a query value; returns owned. */
char *fq_client_escape(const char *s);

/* A raw request: `ctype` and `body` may be NULL. *status (may be NULL)
 * gets the HTTP status, *result (may be NULL) the X-Flexq-Result header
 * (owned or NULL). */
int fq_client_request(struct fq_client *c, const char *method, const char *path,
                      const char *ctype, const char *body, size_t len,
                      struct fq_value **out, int *status, char **result,
                      struct fq_err *err);

int fq_client_get(struct fq_client *c, const char *path, struct fq_value **out,
                  struct fq_err *err);
int fq_client_post(struct fq_client *c, const char *path,
                   const struct fq_value *obj, struct fq_value **out,
                   struct fq_err *err);
int fq_client_put(struct fq_client *c, const char *path,
                  const struct fq_value *obj, struct fq_value **out,
                  struct fq_err *err);
/* `ctype` NULL means application/merge-patch+json. */
int fq_client_patch(struct fq_client *c, const char *path, const char *ctype,
                    const struct fq_value *patch, struct fq_value **out,
                    struct fq_err *err);
int fq_client_delete(struct fq_client *c, const char *path,
                     struct fq_value **out, struct fq_err *err);

/*
 * Streams a watch: calls fn for every event line with its type ("ADDED",
 * "MODIFIED", "DELETED") and object (borrowed for the call). fn returns 0
 * to go on, 1 to stop (then fq_client_watch returns 0), negative to fail
 * with that code. `path` must already carry watch=true. timeout_ms 0 =
 * none; when it passes, FQ_ETIMEOUT.
 */
typedef int (*fq_client_watch_fn)(void *ctx, const char *type,
                                  const struct fq_value *obj);
int fq_client_watch(struct fq_client *c, const char *path, int64_t timeout_ms,
                    fq_client_watch_fn fn, void *ctx, struct fq_err *err);

#endif
