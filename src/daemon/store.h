/*
 * store.h - flexqd's durable store: SQLite in WAL mode.
 *
 * The store keeps the last state of every object (one row per kind,
 * namespace and name, the object as JSON) and the history of Events. The
 * daemon hands it the core's change log once per loop turn
 * (fq_store_commit), which writes all of it in one transaction: that is the
 * group commit, and clients are answered only after it returns 0. On start
 * the daemon reads every object back (fq_store_load) into a fresh engine.
 *
 * This is the only module that includes <sqlite3.h>.
 */
#ifndef FLEXQ_DAEMON_STORE_H
#define FLEXQ_DAEMON_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/buf.h"
#include "flexq/err.h"
#include "flexq/kinds.h"
#include "flexq/objstore.h"
#include "flexq/value.h"

struct fq_store;

/* Durability of a commit: FULL syncs the WAL on every commit (survives a
 * power cut); NORMAL survives a killed process (the default for tests is
 * still FULL). */
enum fq_store_sync {
    FQ_STORE_SYNC_NORMAL = 1,
    FQ_STORE_SYNC_FULL = 2,
};

/* The schema version this build writes; older files are migrated. */
#define FQ_STORE_SCHEMA_VERSION 3

/*
 * Opens (creating the directory and the file `DIR/flexq.db` when absent)
 * and migrates the schema. Holds an exclusive lock on DIR/flexqd.lock
 * until fq_store_close: FQ_EBUSY when another process holds it. FQ_EIO
 * with a message on other failures.
 */
int fq_store_open(const char *dir, enum fq_store_sync sync,
                  struct fq_store **out, struct fq_err *err);
void fq_store_close(struct fq_store *s);

/* Called once per stored object, in kind order; takes `obj` (owned). A
 * negative return stops the load and is returned. */
typedef int (*fq_store_load_fn)(void *ctx, enum fq_kind kind,
                                struct fq_value *obj);
int fq_store_load(struct fq_store *s, fq_store_load_fn fn, void *ctx,
                  struct fq_err *err);

/* Writes the changes (oldest first) in one transaction. */
int fq_store_commit(struct fq_store *s, const struct fq_change *c, size_t n,
                    struct fq_err *err);

/* Number of commits and rows written since open (for logs and bench). */
void fq_store_stats(const struct fq_store *s, uint64_t *commits,
                    uint64_t *rows);

/*
 * Verifies a data directory without changing it: SQLite's integrity check,
 * the schema version, that every row is a known kind whose JSON parses and
 * whose name matches its key, that no key has two rows, and that every
 * Workload holding quota names an existing ClusterQueue and is reserved
 * once. Appends a readable report to `report`. Returns 0 when all is well, FQ_EIO / FQ_EINVAL otherwise.
 */
int fq_store_check(const char *dir, struct fq_buf *report, struct fq_err *err);

#endif
