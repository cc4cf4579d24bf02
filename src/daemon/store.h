/*
 * store.h - flexqd's durable store: SQLite in WAL mode.
 *
 * The store keeps the last state of every object (one row per kind,
 * namespace and name, the object as JSON) and the history of Events. The
 * daemon hands it the core's change log once per loop turn
 * (fq_store_write), which writes all of it in one transaction: that is the
 * group commit, and clients are answered only after it is durable (with
 * FQ_STORE_SYNC_FULL, after the syncer thread's fdatasync of the WAL). On start
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

/* Writes the changes (oldest first) in one transaction and returns when
 * it is durable (FULL: synced; NORMAL: in the WAL). */
int fq_store_commit(struct fq_store *s, const struct fq_change *c, size_t n,
                    struct fq_err *err);

/*
 * The same in two steps, for the daemon's loop: fq_store_write commits the
 * transaction and, with FQ_STORE_SYNC_FULL, starts the WAL's fdatasync on
 * the store's syncer thread and returns at once; the transaction is
 * durable when fq_store_syncing turns false. The loop watches
 * fq_store_notify_fd (readable when a sync ends; -1 with NORMAL, where
 * nothing runs) and calls fq_store_synced, which returns 0 when no sync
 * runs any more, 1 while one does, FQ_EIO if one failed (fatal, as a
 * failed commit). fq_store_write called while a sync runs waits for it
 * first; fq_store_wait blocks until none runs (0 or FQ_EIO). It leaves
 * in each change it encoded (an object's last state of the turn, an
 * Event) that encoding, c[i].json, for the watch lines.
 */
int fq_store_write(struct fq_store *s, struct fq_change *c, size_t n,
                   struct fq_err *err);
bool fq_store_syncing(struct fq_store *s);
int fq_store_notify_fd(const struct fq_store *s);
int fq_store_synced(struct fq_store *s, struct fq_err *err);
int fq_store_wait(struct fq_store *s, struct fq_err *err);

/* Number of commits and rows written since open (for logs and bench). */
void fq_store_stats(const struct fq_store *s, uint64_t *commits,
                    uint64_t *rows);

/*
 * Housekeeping between commits: deletes the history rows of Events that
 * were deleted, gives free pages back to the filesystem and truncates the
 * WAL, and frees SQLite's unused cache pages. Does nothing while a
 * commit is being synced, or when there is nothing to do. Returns the number of history rows deleted, or a
 * negative FQ_E* code (nothing changed then).
 */
int fq_store_tidy(struct fq_store *s, struct fq_err *err);

/*
 * Verifies a data directory without changing it: SQLite's integrity check,
 * the schema version, that every row is a known kind whose JSON parses and
 * whose name matches its key, that no key has two rows, and that every
 * Workload holding quota names an existing ClusterQueue and is reserved
 * once. Appends a readable report to `report`. Returns 0 when all is well, FQ_EIO / FQ_EINVAL otherwise.
 */
int fq_store_check(const char *dir, struct fq_buf *report, struct fq_err *err);

#endif
