/*
 * store.c - flexqd's durable store on SQLite (WAL mode).
 *
 * How it works. One file, DIR/flexq.db, with
 *
 *   meta(key PRIMARY KEY, value)          "revision": last committed core
 *                                         revision, for logs and --check
 *   objects(kind, ns, name, rev, body)    one row per live object, the
 *                                         object's JSON; WITHOUT ROWID
 *   event_history(id, rev, ns, name, body)
 *                                         every version of every Event,
 *                                         kept after the Event is deleted
 *
 * PRAGMA user_version is the schema version; `migrations[]` holds the SQL
 * that takes a file from version i to i+1, run in one transaction at open,
 * so a file from an older flexqd is upgraded in place and a half-migrated
 * file cannot exist.
 *
 * fq_store_commit writes one loop turn's change log in one transaction
 * (BEGIN IMMEDIATE ... COMMIT): an ADDED or MODIFIED change is an upsert of
 * the object's latest JSON, a DELETED change deletes the row. When one
 * object changed several times in the turn only its last state is written.
 * With journal_mode=WAL and synchronous=FULL a returned commit is on disk;
 * the daemon answers its clients only after that.
 *
 * Invariants:
 *   (1) the objects table equals the engine's store as of the last
 *       committed turn, row for row;
 *   (2) a failed commit is rolled back whole; the caller treats it as fatal
 *       (the engine is then ahead of the disk and must be rebuilt from it).
 *
 * What it does not do: decide anything about objects (the core does), keep
 * every revision of non-Event objects, or compact event_history.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/conditions.h"
#include "flexq/alloc.h"
#include "flexq/quantity.h"

struct fq_store {
    int lock_fd; /* flock()ed DIR/flexqd.lock: one daemon per directory */
    sqlite3 *db;
    sqlite3_stmt *upsert;
    sqlite3_stmt *del;
    sqlite3_stmt *event;
    sqlite3_stmt *meta;
    uint64_t commits;
    uint64_t rows;
};

/* migrations[i] takes the schema from version i to i + 1. */
static const char *const migrations[FQ_STORE_SCHEMA_VERSION] = {
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE objects (kind TEXT NOT NULL, ns TEXT NOT NULL,"
    " name TEXT NOT NULL, rev INTEGER NOT NULL, body TEXT NOT NULL,"
    " PRIMARY KEY (kind, ns, name)) WITHOUT ROWID;",
    "CREATE TABLE event_history (id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " rev INTEGER NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,"
    " body TEXT NOT NULL);"
    "CREATE INDEX event_history_name ON event_history (ns, name);",
};

static int db_err(struct fq_err *err, sqlite3 *db, const char *what)
{
    return fq_err_set(err, FQ_EIO, "store: %s: %s", what,
                      db ? sqlite3_errmsg(db) : "out of memory");
}

static int exec(sqlite3 *db, const char *sql, struct fq_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        int rc = fq_err_set(err, FQ_EIO, "store: %s", msg ? msg : sql);
        sqlite3_free(msg);
        return rc;
    }
    return 0;
}

static int user_version(sqlite3 *db, int *v)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL))
        return -1;
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : -1;
    if (rc == 0)
        *v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return rc;
}

static int migrate(sqlite3 *db, struct fq_err *err)
{
    int v;
    if (user_version(db, &v) < 0)
        return db_err(err, db, "reading the schema version");
    if (v > FQ_STORE_SCHEMA_VERSION)
        return fq_err_set(err, FQ_EIO,
                          "store: schema version %d is newer than this "
                          "flexqd (%d); use a newer flexqd",
                          v, FQ_STORE_SCHEMA_VERSION);
    if (v == FQ_STORE_SCHEMA_VERSION)
        return 0;
    int rc = exec(db, "BEGIN IMMEDIATE", err);
    if (rc < 0)
        return rc;
    for (; v < FQ_STORE_SCHEMA_VERSION; v++) {
        rc = exec(db, migrations[v], err);
        if (rc < 0)
            goto fail;
        char sql[64];
        snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
        rc = exec(db, sql, err);
        if (rc < 0)
            goto fail;
    }
    return exec(db, "COMMIT", err);
fail:
    exec(db, "ROLLBACK", NULL);
    return rc;
}

static int mkdir_p(const char *dir)
{
    char *p = fq_xstrdup(dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) < 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    int rc = mkdir(p, 0700) < 0 && errno != EEXIST ? -1 : 0;
    free(p);
    return rc;
}

static int open_db(const char *dir, int flags, sqlite3 **out,
                   struct fq_err *err)
{
    char *path = fq_xasprintf("%s/flexq.db", dir);
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, flags, NULL);
    free(path);
    if (rc != SQLITE_OK) {
        rc = fq_err_set(err, FQ_EIO, "store: cannot open %s/flexq.db: %s", dir,
                        db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, 5000);
    *out = db;
    return 0;
}

int fq_store_open(const char *dir, enum fq_store_sync sync,
                  struct fq_store **out, struct fq_err *err)
{
    if (mkdir_p(dir) < 0)
        return fq_err_set(err, FQ_EIO, "store: cannot create %s: %s", dir,
                          strerror(errno));
    /* Two daemons on one directory would each believe they own the
     * objects; the lock goes away with the process, even on kill -9. */
    char *lock_path = fq_xasprintf("%s/flexqd.lock", dir);
    int lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    free(lock_path);
    if (lock_fd < 0)
        return fq_err_set(err, FQ_EIO,
                          "store: cannot create %s/flexqd.lock: %s", dir,
                          strerror(errno));
    if (flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
        close(lock_fd);
        return fq_err_set(err, FQ_EBUSY,
                          "store: another flexqd is using %s (stop it, or "
                          "use another --data-dir)",
                          dir);
    }
    sqlite3 *db;
    int rc = open_db(dir, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db, err);
    if (rc < 0) {
        close(lock_fd);
        return rc;
    }
    rc = exec(db, "PRAGMA journal_mode=WAL", err);
    if (rc == 0)
        rc = exec(db,
                  sync == FQ_STORE_SYNC_FULL ? "PRAGMA synchronous=FULL" :
                                               "PRAGMA synchronous=NORMAL",
                  err);
    if (rc == 0)
        rc = migrate(db, err);
    if (rc < 0) {
        sqlite3_close(db);
        close(lock_fd);
        return rc;
    }
    struct fq_store *s = fq_xcalloc(1, sizeof(*s));
    s->db = db;
    s->lock_fd = lock_fd;
    if (sqlite3_prepare_v3(db,
                           "INSERT INTO objects (kind, ns, name, rev, body) "
                           "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (kind, "
                           "ns, name) DO UPDATE SET rev = excluded.rev, "
                           "body = excluded.body",
                           -1, SQLITE_PREPARE_PERSISTENT, &s->upsert, NULL) ||
        sqlite3_prepare_v3(db,
                           "DELETE FROM objects WHERE kind = ?1 AND ns = ?2 "
                           "AND name = ?3",
                           -1, SQLITE_PREPARE_PERSISTENT, &s->del, NULL) ||
        sqlite3_prepare_v3(db,
                           "INSERT INTO event_history (rev, ns, name, body) "
                           "VALUES (?1, ?2, ?3, ?4)",
                           -1, SQLITE_PREPARE_PERSISTENT, &s->event, NULL) ||
        sqlite3_prepare_v3(db,
                           "INSERT OR REPLACE INTO meta (key, value) "
                           "VALUES ('revision', ?1)",
                           -1, SQLITE_PREPARE_PERSISTENT, &s->meta, NULL)) {
        rc = db_err(err, db, "preparing statements");
        fq_store_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void fq_store_close(struct fq_store *s)
{
    if (!s)
        return;
    sqlite3_finalize(s->upsert);
    sqlite3_finalize(s->del);
    sqlite3_finalize(s->event);
    sqlite3_finalize(s->meta);
    sqlite3_close(s->db);
    if (s->lock_fd >= 0)
        close(s->lock_fd);
    free(s);
}

static enum fq_kind kind_by_name(const char *name)
{
    for (int k = 1; k < FQ_KIND__COUNT; k++)
        if (strcmp(fq_kind_info((enum fq_kind)k)->name, name) == 0)
            return (enum fq_kind)k;
    return FQ_KIND_NONE;
}

int fq_store_load(struct fq_store *s, fq_store_load_fn fn, void *ctx,
                  struct fq_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT ns, name, body FROM objects WHERE kind = "
                           "?1 ORDER BY ns, name",
                           -1, &st, NULL))
        return db_err(err, s->db, "loading");
    struct fq_limits lim = fq_limits_default();
    lim.max_bytes = 64u << 20;
    int rc = 0;
    for (int k = 1; k < FQ_KIND__COUNT && rc == 0; k++) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, fq_kind_info((enum fq_kind)k)->name, -1,
                          SQLITE_STATIC);
        int step;
        while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
            const char *body = (const char *)sqlite3_column_text(st, 2);
            int len = sqlite3_column_bytes(st, 2);
            struct fq_value *obj = NULL;
            struct fq_err perr = {0};
            if (fq_json_parse(body ? body : "", (size_t)len, "store", &lim,
                              &obj, &perr) < 0) {
                rc = fq_err_set(err, FQ_EIO, "store: object %s/%s: %s",
                                sqlite3_column_text(st, 0),
                                sqlite3_column_text(st, 1), perr.msg);
                break;
            }
            rc = fn(ctx, (enum fq_kind)k, obj);
        }
    }
    sqlite3_finalize(st);
    return rc;
}

static bool same_key(const struct fq_change *a, const struct fq_change *b)
{
    return a->kind == b->kind && strcmp(a->name, b->name) == 0 &&
           strcmp(a->ns, b->ns) == 0;
}

/* True when a later change in c[i+1..n) touches the same object. */
static bool superseded(const struct fq_change *c, size_t n, size_t i)
{
    if (n > 1024)
        return false; /* not worth the quadratic scan; writes stay correct */
    for (size_t j = i + 1; j < n; j++)
        if (same_key(&c[i], &c[j]))
            return true;
    return false;
}

static int step_done(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int fq_store_commit(struct fq_store *s, const struct fq_change *c, size_t n,
                    struct fq_err *err)
{
    if (n == 0)
        return 0;
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL))
        return db_err(err, s->db, "begin");
    struct fq_buf json = FQ_BUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct fq_change *ch = &c[i];
        const char *kind = fq_kind_info(ch->kind)->name;
        if (ch->kind == FQ_KIND_EVENT && ch->type != FQ_CHANGE_DELETED &&
            ch->obj) {
            fq_buf_reset(&json);
            fq_json_encode(ch->obj, FQ_JSON_COMPACT, &json);
            sqlite3_bind_int64(s->event, 1, (sqlite3_int64)ch->rev);
            sqlite3_bind_text(s->event, 2, ch->ns, -1, SQLITE_STATIC);
            sqlite3_bind_text(s->event, 3, ch->name, -1, SQLITE_STATIC);
            sqlite3_bind_text(s->event, 4, fq_buf_str(&json), (int)json.len,
                              SQLITE_STATIC);
            if (step_done(s->event) < 0) {
                rc = db_err(err, s->db, "writing an event");
                break;
            }
            s->rows++;
        }
        if (superseded(c, n, i))
            continue;
        if (ch->type == FQ_CHANGE_DELETED) {
            sqlite3_bind_text(s->del, 1, kind, -1, SQLITE_STATIC);
            sqlite3_bind_text(s->del, 2, ch->ns, -1, SQLITE_STATIC);
            sqlite3_bind_text(s->del, 3, ch->name, -1, SQLITE_STATIC);
            if (step_done(s->del) < 0)
                rc = db_err(err, s->db, "deleting");
        } else if (ch->obj) {
            fq_buf_reset(&json);
            fq_json_encode(ch->obj, FQ_JSON_COMPACT, &json);
            sqlite3_bind_text(s->upsert, 1, kind, -1, SQLITE_STATIC);
            sqlite3_bind_text(s->upsert, 2, ch->ns, -1, SQLITE_STATIC);
            sqlite3_bind_text(s->upsert, 3, ch->name, -1, SQLITE_STATIC);
            sqlite3_bind_int64(s->upsert, 4, (sqlite3_int64)ch->rev);
            sqlite3_bind_text(s->upsert, 5, fq_buf_str(&json), (int)json.len,
                              SQLITE_STATIC);
            if (step_done(s->upsert) < 0)
                rc = db_err(err, s->db, "writing");
        }
        s->rows++;
    }
    if (rc == 0) {
        sqlite3_bind_int64(s->meta, 1, (sqlite3_int64)c[n - 1].rev);
        if (step_done(s->meta) < 0)
            rc = db_err(err, s->db, "writing the revision");
    }
    fq_buf_release(&json);
    if (rc == 0 && sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL))
        rc = db_err(err, s->db, "commit");
    if (rc < 0) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    s->commits++;
    return 0;
}

void fq_store_stats(const struct fq_store *s, uint64_t *commits, uint64_t *rows)
{
    *commits = s->commits;
    *rows = s->rows;
}

/* --- fq_store_check ---------------------------------------------------- */

/* Sum of quantities per "flavor/resource" for one ClusterQueue. */
struct usage {
    char *cq;
    char *key; /* "flavor/resource" */
    int64_t total;
    int64_t status;
    bool have_status;
};

struct usages {
    struct usage *items;
    size_t n, cap;
};

static struct usage *usage_at(struct usages *u, const char *cq, const char *key)
{
    for (size_t i = 0; i < u->n; i++)
        if (!strcmp(u->items[i].cq, cq) && !strcmp(u->items[i].key, key))
            return &u->items[i];
    FQ_GROW(u->items, u->cap, u->n + 1);
    struct usage *x = &u->items[u->n++];
    memset(x, 0, sizeof(*x));
    x->cq = fq_xstrdup(cq);
    x->key = fq_xstrdup(key);
    return x;
}

static int64_t qty(const struct fq_value *v, const char *resource)
{
    int64_t x = 0;
    const char *s = fq_value_as_str(v);
    char tmp[64];
    if (!s && v && v->type == FQ_V_NUM) {
        snprintf(tmp, sizeof(tmp), "%s", v->u.num.raw);
        s = tmp;
    }
    if (s)
        fq_quantity_parse(s, fq_quantity_scale_for(resource), &x, NULL, NULL);
    return x;
}

/* Adds an admitted Workload's usage to its ClusterQueue's sums. */
static void add_workload(struct usages *u, const struct fq_value *wl)
{
    const char *cq = fq_value_path_str(wl, "status.admission.clusterQueue", "");
    const struct fq_value *psa =
        fq_value_path(wl, "status.admission.podSetAssignments");
    for (size_t i = 0; i < fq_value_len(psa); i++) {
        const struct fq_value *a = fq_seq_at(psa, i);
        const struct fq_value *fl = fq_map_get(a, "flavors");
        const struct fq_value *ru = fq_map_get(a, "resourceUsage");
        for (size_t j = 0; ru && ru->type == FQ_V_MAP && j < ru->u.map.n; j++) {
            const char *res = ru->u.map.items[j].key;
            const char *flavor = fq_value_as_str(fq_map_get(fl, res));
            char *key = fq_xasprintf("%s/%s", flavor ? flavor : "?", res);
            usage_at(u, cq, key)->total += qty(ru->u.map.items[j].val, res);
            free(key);
        }
    }
}

/* Reads a ClusterQueue's status.flavorsReservation into the sums. */
static void add_cq_status(struct usages *u, const char *cq,
                          const struct fq_value *obj)
{
    const struct fq_value *fr = fq_value_path(obj, "status.flavorsReservation");
    for (size_t i = 0; i < fq_value_len(fr); i++) {
        const struct fq_value *f = fq_seq_at(fr, i);
        const char *flavor = fq_value_path_str(f, "name", "?");
        const struct fq_value *res = fq_map_get(f, "resources");
        for (size_t j = 0; j < fq_value_len(res); j++) {
            const struct fq_value *r = fq_seq_at(res, j);
            const char *rn = fq_value_path_str(r, "name", "?");
            char *key = fq_xasprintf("%s/%s", flavor, rn);
            struct usage *x = usage_at(u, cq, key);
            x->status += qty(fq_map_get(r, "total"), rn);
            x->have_status = true;
            free(key);
        }
    }
}

int fq_store_check(const char *dir, struct fq_buf *report, struct fq_err *err)
{
    sqlite3 *db;
    int rc = open_db(dir, SQLITE_OPEN_READONLY, &db, err);
    if (rc < 0)
        return rc;
    int problems = 0;
    sqlite3_stmt *st = NULL;
    struct usages u = {0};
    struct fq_value **cqs = NULL;
    size_t ncq = 0, capcq = 0;
    int v = -1;
    if (user_version(db, &v) < 0) {
        rc = db_err(err, db, "reading the schema version");
        goto out;
    }
    fq_buf_printf(report, "schema version: %d (this flexqd: %d)\n", v,
                  FQ_STORE_SCHEMA_VERSION);
    if (v != FQ_STORE_SCHEMA_VERSION) {
        fq_buf_puts(report, "problem: schema version differs; starting "
                            "flexqd on this directory migrates it\n");
        problems++;
    }
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL)) {
        rc = db_err(err, db, "integrity check");
        goto out;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);
        if (line && strcmp(line, "ok") != 0) {
            fq_buf_printf(report, "problem: integrity: %s\n", line);
            problems++;
        }
    }
    sqlite3_finalize(st);
    st = NULL;
    if (v < 1)
        goto out;
    if (sqlite3_prepare_v2(db, "SELECT kind, ns, name, body FROM objects", -1,
                           &st, NULL)) {
        rc = db_err(err, db, "reading objects");
        goto out;
    }
    size_t counts[FQ_KIND__COUNT] = {0};
    struct fq_limits lim = fq_limits_default();
    lim.max_bytes = 64u << 20;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *kind = (const char *)sqlite3_column_text(st, 0);
        const char *ns = (const char *)sqlite3_column_text(st, 1);
        const char *name = (const char *)sqlite3_column_text(st, 2);
        const char *body = (const char *)sqlite3_column_text(st, 3);
        enum fq_kind k = kind_by_name(kind ? kind : "");
        if (k == FQ_KIND_NONE) {
            fq_buf_printf(report, "problem: %s/%s: unknown kind %s\n", ns, name,
                          kind);
            problems++;
            continue;
        }
        struct fq_value *obj = NULL;
        struct fq_err perr = {0};
        if (fq_json_parse(body ? body : "", (size_t)sqlite3_column_bytes(st, 3),
                          "row", &lim, &obj, &perr) < 0) {
            fq_buf_printf(report, "problem: %s %s/%s: %s\n", kind, ns, name,
                          perr.msg);
            problems++;
            continue;
        }
        counts[k]++;
        const char *oname = fq_value_path_str(obj, "metadata.name", "");
        if (strcmp(oname, name ? name : "") != 0) {
            fq_buf_printf(report,
                          "problem: %s %s/%s: metadata.name is \"%s\"\n", kind,
                          ns, name, oname);
            problems++;
        }
        if (k == FQ_KIND_WORKLOAD && fq_cond_true(obj, "QuotaReserved") &&
            !fq_cond_true(obj, "Finished"))
            add_workload(&u, obj);
        if (k == FQ_KIND_CLUSTERQUEUE) {
            FQ_GROW(cqs, capcq, ncq + 1);
            cqs[ncq++] = obj;
            obj = NULL;
        }
        fq_value_free(obj);
    }
    for (size_t i = 0; i < ncq; i++)
        add_cq_status(&u, fq_value_path_str(cqs[i], "metadata.name", ""),
                      cqs[i]);
    for (int k = 1; k < FQ_KIND__COUNT; k++)
        if (counts[k])
            fq_buf_printf(report, "%s: %zu\n",
                          fq_kind_info((enum fq_kind)k)->plural, counts[k]);
    for (size_t i = 0; i < u.n; i++) {
        struct usage *x = &u.items[i];
        bool known = false;
        for (size_t j = 0; j < ncq; j++)
            known |=
                !strcmp(fq_value_path_str(cqs[j], "metadata.name", ""), x->cq);
        if (!known) {
            fq_buf_printf(report,
                          "problem: workloads hold quota in missing "
                          "clusterqueue \"%s\"\n",
                          x->cq);
            problems++;
        } else if (x->have_status && x->status != x->total) {
            fq_buf_printf(report,
                          "problem: clusterqueue %s: %s reserved %lld in "
                          "status, admitted workloads use %lld\n",
                          x->cq, x->key, (long long)x->status,
                          (long long)x->total);
            problems++;
        }
    }
    fq_buf_printf(report, "%s: %d problem(s)\n", problems ? "FAIL" : "ok",
                  problems);
    if (problems)
        rc = fq_err_set(err, FQ_EINVAL, "store check found %d problem(s)",
                        problems);
out:
    sqlite3_finalize(st);
    for (size_t i = 0; i < u.n; i++) {
        free(u.items[i].cq);
        free(u.items[i].key);
    }
    free(u.items);
    for (size_t i = 0; i < ncq; i++)
        fq_value_free(cqs[i]);
    free(cqs);
    sqlite3_close(db);
    return rc;
}
