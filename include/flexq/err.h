/*
 * err.h - flexq's error codes and the error detail callers may ask for.
 *
 * Every fallible function returns 0 or a negative FQ_E* code. The codes come
 * from one X-macro table that also gives, for each code, the message the CLI
 * prints, the HTTP status the API answers with, and the Kubernetes Status
 * "reason" string of the JSON error body. Detail (what was wrong, where) goes
 * into an optional caller-provided struct fq_err.
 *
 * A primitive of the base layer (src/core/base/): it knows nothing of
 * objects, Kubernetes or the engine, and must not grow calls into higher
 * layers. There is one of it; use it rather than writing another.
 */
#ifndef FLEXQ_ERR_H
#define FLEXQ_ERR_H

#include <stddef.h>

/* X(name, CLI message, HTTP status, Kubernetes Status reason) */
#define FQ_ERRORS(X)                                                  \
 X(EINVAL, "invalid input", 422, "Invalid")                           \
 X(EPARSE, "malformed input", 400, "BadRequest")                      \
 X(ELIMIT, "input exceeds a limit", 413, "RequestEntityTooLarge")     \
 X(EOVERFLOW, "value out of range", 422, "Invalid")                   \
 X(ENOTFOUND, "not found", 404, "NotFound")                           \
 X(EEXIST, "already exists", 409, "AlreadyExists")                    \
 X(ECONFLICT, "conflict", 409, "Conflict")                            \
 X(EUNAUTH, "unauthorized", 401, "Unauthorized")                      \
 X(EFORBIDDEN, "forbidden", 403, "Forbidden")                         \
 X(EUNSUPPORTED, "not supported", 405, "MethodNotAllowed")            \
 X(ETIMEOUT, "timed out", 504, "Timeout")                             \
 X(EIO, "input/output error", 500, "InternalError")                   \
 X(EPROVIDER, "provider failed", 502, "ServiceUnavailable")           \
 X(EBUSY, "busy, try again", 503, "ServiceUnavailable")               \
 X(EINTERNAL, "internal error", 500, "InternalError")                 \
 X(EGONE, "too old, list again", 410, "Expired")                      \
 X(EMEDIATYPE, "unsupported media type", 415, "UnsupportedMediaType") \
 X(ENOSPACE, "no space left on the server", 507, "InsufficientStorage")

enum fq_errcode {
    FQ_OK = 0,
#define FQ_ERR_ENUM(name, msg, http, reason) FQ_ERR_##name,
    FQ_ERRORS(FQ_ERR_ENUM)
#undef FQ_ERR_ENUM
    FQ_ERR__COUNT
};

/* The negative codes functions return: FQ_EINVAL == -FQ_ERR_EINVAL, ... */
#define FQ_ERR_NEG(name, msg, http, reason) FQ_##name = -FQ_ERR_##name,

enum {
    FQ_ERRORS(FQ_ERR_NEG)
};

#undef FQ_ERR_NEG

#define FQ_ERR_MSG_MAX  1024
#define FQ_ERR_PATH_MAX 256

/*
 * Detail for one error. `msg` is complete and printable on its own, e.g.
 * `q.yaml:31:17: spec.resourceGroups[0].flavors[1].resources[2].nominalQuota:
 * invalid quantity "16x"`. `path`, `line` and `col` repeat the location in
 * structured form for the API's Status body (empty / 0 when unknown).
 */
struct fq_err {
    int code;
    int line;
    int col;
    char path[FQ_ERR_PATH_MAX];
    char msg[FQ_ERR_MSG_MAX];
};

/* A code's CLI message, HTTP status and Kubernetes reason. */
const char *fq_strerror(int code);
int fq_err_http_status(int code);
const char *fq_err_reason(int code);

/*
 * Fills `err` (may be NULL) and returns `code`, so that callers can write
 * `return fq_err_set(err, FQ_EINVAL, "bad %s", x);`.
 */
int fq_err_set(struct fq_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Same, with a structured location; `file` may be NULL. */
int fq_err_at(struct fq_err *err, int code, const char *file, int line, int col,
              const char *path, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* A growable list of errors, for validators that report every problem. */
struct fq_errlist {
    struct fq_err *items; /* owned */
    size_t n, cap;
};

void fq_errlist_init(struct fq_errlist *l);
void fq_errlist_release(struct fq_errlist *l);
/* Appends a copy of `e`. */
void fq_errlist_push(struct fq_errlist *l, const struct fq_err *e);

#endif
