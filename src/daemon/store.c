/*
 * store.c - flexqd's durable store on SQLite (WAL mode).
 *
 * How it works. One file, DIR/flexq.db, with
 *
 *   meta(key PRIMARY KEY, value)          "revision": last committed core
 *                                         revision, for logs and --check
 *   objects(id, kind, ns, name, rev, body)
 *                                         one row per live object, the
 *                                         object's JSON; id is the rowid
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
 * (BEGIN IMMEDIATE ... COMMIT): an ADDED or MODIFIED change writes the
 * object's latest JSON, a DELETED change deletes the row. When one object
 * changed several times in the turn only its last state is written. With
 * journal_mode=WAL and synchronous=FULL a returned commit is on disk; the
 * daemon answers its clients only after that.
 *
 * Why rowids and no key index (schema 3). A commit costs one WAL frame
 * (a 4 KiB page, written and fsynced) per page it dirties. Schema 2 keyed
 * objects by (kind, ns, name) and indexed event_history by (ns, name), so
 * a turn's new Workloads and their Events, whose names are scattered over
 * the key space, each dirtied a page of their own: about 76 frames for a
 * commit of 8 creates. Now a new object gets the next id and lands on the
 * table's last page next to the other new rows of its turn, and an update
 * rewrites the row in place by id: 8 creates cost about 8 frames. The
 * key -> id map lives in memory (`index`, filled at open from the table,
 * one entry per row), which the daemon can afford since it keeps every
 * object in memory anyway.
 *
 * Invariants:
 *   (1) the objects table equals the engine's store as of the last
 *       committed turn, row for row, one row per (kind, ns, name);
 *   (2) `index` maps exactly the table's rows' keys to their ids, and
 *       next_id is above every id in the table, once `indexed` (read
 *       with the objects by fq_store_load, else before the first write
 *       or tidy); after a failed commit both are read again from the
 *       table;
 *   (3) a failed commit is rolled back whole; the caller treats it as fatal
 *       (the engine is then ahead of the disk and must be rebuilt from it).
 *
 * Tidying (fq_store_tidy, called by the daemon when Events expire): the
 * history rows of Events that no longer exist are deleted, the file's
 * free pages are given back (auto_vacuum=INCREMENTAL) and the WAL is
 * truncated, so that churn leaves the files near their size before it.
 * The history of a live Event is kept, every version.
 *
 * What it does not do: decide anything about objects (the core does), keep
 * every revision of non-Event objects, or keep the history of an Event
 * after the Event expired.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"

/* One row of the objects table: its key and id (open addressing). */
struct slot {
    char *key; /* owned, from make_key; NULL: empty slot */
    size_t klen;
    uint64_t hash;
    int64_t id;
};

/* The WAL's fsync thread (FQ_STORE_SYNC_FULL); fields under `mu`. */
struct syncer {
    pthread_t th;
    bool running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int wal_fd;   /* DIR/flexq.db-wal, opened after the first write */
    int event_fd; /* eventfd, written each time a sync ends */
    bool want;    /* a sync is asked for or running */
    int error;    /* errno of a failed fdatasync; sticky */
    bool stop;
};

static void *syncer_main(void *arg);
static int wal_open(struct fq_store *s, struct fq_err *err);

struct fq_store {
    int lock_fd; /* flock()ed DIR/flexqd.lock: one daemon per directory */
    char *wal_path;
    struct syncer sy;
    sqlite3 *db;
    sqlite3_stmt *insert;
    sqlite3_stmt *update;
    sqlite3_stmt *del;
    sqlite3_stmt *event;
    sqlite3_stmt *meta;
    struct slot *index; /* key -> objects.id; capacity a power of two */
    size_t index_cap, index_n;
    /* Whether index and next_id are read: at the first write, unless
     * fq_store_load read them with the objects (index_ready). */
    bool indexed;
    int64_t next_id;
    uint64_t commits;
    uint64_t rows;
    /* Events deleted since fq_store_tidy last dropped their history. */
    uint64_t events_deleted;
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
    /* 2 -> 3: rowid tables without key indexes (see the top comment);
     * rows keep their order of last change, the history its ids. */
    "CREATE TABLE objects3 (id INTEGER PRIMARY KEY, kind TEXT NOT NULL,"
    " ns TEXT NOT NULL, name TEXT NOT NULL, rev INTEGER NOT NULL,"
    " body TEXT NOT NULL);"
    "INSERT INTO objects3 (kind, ns, name, rev, body)"
    " SELECT kind, ns, name, rev, body FROM objects ORDER BY rev;"
    "DROP TABLE objects;"
    "ALTER TABLE objects3 RENAME TO objects;"
    "CREATE TABLE event_history3 (id INTEGER PRIMARY KEY,"
    " rev INTEGER NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,"
    " body TEXT NOT NULL);"
    "INSERT INTO event_history3 (id, rev, ns, name, body)"
    " SELECT id, rev, ns, name, body FROM event_history;"
    "DROP TABLE event_history;"
    "ALTER TABLE event_history3 RENAME TO event_history;"
    "DELETE FROM sqlite_sequence WHERE name = 'event_history';"
    "INSERT OR IGNORE INTO meta (key, value) VALUES ('revision', '0');",
};

/* A full disk is FQ_ENOSPACE (the daemon frees its reserve and tries
 * again, space.c); any other failure FQ_EIO. */
static int db_err(struct fq_err *err, sqlite3 *db, const char *what)
{
    int full = db && sqlite3_errcode(db) == SQLITE_FULL;
    return fq_err_set(err, full ? FQ_ENOSPACE : FQ_EIO, "store: %s: %s", what,
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

static enum fq_kind kind_by_name(const char *name)
{
    for (int k = 1; k < FQ_KIND__COUNT; k++)
        if (strcmp(fq_kind_info((enum fq_kind)k)->name, name) == 0)
            return (enum fq_kind)k;
    return FQ_KIND_NONE;
}

/* --- the key -> id index ------------------------------------------------ */

/* Writes v in decimal at p; returns the end. */
static char *put_dec(char *p, size_t v)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = d[--n];
    return p;
}

/* "KIND:NSLEN:NSNAME": unambiguous whatever the names contain. */
static char *make_key(enum fq_kind kind, const char *ns, const char *name,
                      size_t *len)
{
    /* "%d:%zu:%s%s" of kind, strlen(ns), ns, name, without printf: the
     * start-up makes one per stored object (index_load). */
    size_t nslen = strlen(ns), nlen = strlen(name);
    char head[48];
    char *p = put_dec(head, (size_t)kind);
    *p++ = ':';
    p = put_dec(p, nslen);
    *p++ = ':';
    size_t hl = (size_t)(p - head);
    char *k = fq_xmalloc(hl + nslen + nlen + 1);
    memcpy(k, head, hl);
    memcpy(k + hl, ns, nslen);
    memcpy(k + hl + nslen, name, nlen + 1);
    *len = hl + nslen + nlen;
    return k;
}

static uint64_t hash_key(const char *k, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)k[i];
        h *= 1099511628211ull;
    }
    return h;
}

static struct slot *slot_find(struct fq_store *s, const char *k, size_t len,
                              uint64_t h)
{
    if (!s->index_cap)
        return NULL;
    size_t mask = s->index_cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        struct slot *x = &s->index[i];
        if (!x->key)
            return NULL;
        if (x->hash == h && x->klen == len && !memcmp(x->key, k, len))
            return x;
    }
}

static void slot_put(struct fq_store *s, char *k, size_t len, uint64_t h,
                     int64_t id);

/* Moves the slots to a table of ncap (a power of two, > index_n). */
static void index_resize(struct fq_store *s, size_t ncap)
{
    struct slot *old = s->index;
    size_t cap = s->index_cap;
    s->index_cap = ncap;
    s->index = fq_xcalloc(s->index_cap, sizeof(*s->index));
    s->index_n = 0;
    for (size_t i = 0; i < cap; i++)
        if (old[i].key)
            slot_put(s, old[i].key, old[i].klen, old[i].hash, old[i].id);
    free(old);
}

/* Adds or replaces; takes `k`. */
static void slot_put(struct fq_store *s, char *k, size_t len, uint64_t h,
                     int64_t id)
{
    struct slot *x = slot_find(s, k, len, h);
    if (x) {
        x->id = id;
        free(k);
        return;
    }
    if ((s->index_n + 1) * 4 > s->index_cap * 3)
        index_resize(s, s->index_cap ? s->index_cap * 2 : 1024);
    size_t mask = s->index_cap - 1;
    size_t i = (size_t)h & mask;
    while (s->index[i].key)
        i = (i + 1) & mask;
    s->index[i] = (struct slot){k, len, h, id};
    s->index_n++;
}

/* Removes a slot, shifting back the entries of its probe run (linear
 * probing without tombstones). */
static void slot_del(struct fq_store *s, struct slot *x)
{
    size_t mask = s->index_cap - 1;
    size_t i = (size_t)(x - s->index);
    free(x->key);
    s->index[i].key = NULL;
    s->index_n--;
    for (size_t j = (i + 1) & mask; s->index[j].key; j = (j + 1) & mask) {
        size_t home = (size_t)s->index[j].hash & mask;
        /* Entry j may move to the hole at i when its home is not in the
         * cyclic range (i, j]. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays)
            continue;
        s->index[i] = s->index[j];
        s->index[j].key = NULL;
        i = j;
    }
    /* Under an eighth full (a churn deleted its objects): halved, to
     * under a quarter full, so that it grows again only after its count
     * triples and shrinks again only after it halves. */
    if (s->index_cap > 1024 && s->index_n * 8 < s->index_cap)
        index_resize(s, s->index_cap / 2);
}

static void index_clear(struct fq_store *s)
{
    for (size_t i = 0; i < s->index_cap; i++)
        free(s->index[i].key);
    free(s->index);
    s->index = NULL;
    s->index_cap = s->index_n = 0;
}

/* Reads every row's key and id: the index and next_id (invariant 2). */
static int index_load(struct fq_store *s, struct fq_err *err)
{
    index_clear(s);
    s->next_id = 1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT id, kind, ns, name FROM objects", -1,
                           &st, NULL))
        return db_err(err, s->db, "reading object keys");
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *kind = (const char *)sqlite3_column_text(st, 1);
        const char *ns = (const char *)sqlite3_column_text(st, 2);
        const char *name = (const char *)sqlite3_column_text(st, 3);
        size_t len;
        char *k = make_key(kind_by_name(kind ? kind : ""), ns ? ns : "",
                           name ? name : "", &len);
        slot_put(s, k, len, hash_key(k, len), id);
        if (id >= s->next_id)
            s->next_id = id + 1;
    }
    sqlite3_finalize(st);
    if (step != SQLITE_DONE)
        return db_err(err, s->db, "reading object keys");
    s->indexed = true;
    return 0;
}

/* The index, read now if fq_store_load did not read it: a start-up
 * reads the table once, not once for the keys and again for the
 * objects (at a million objects, a second of the start). */
static int index_ready(struct fq_store *s, struct fq_err *err)
{
    return s->indexed ? 0 : index_load(s, err);
}

/*
 * auto_vacuum=INCREMENTAL, so that fq_store_tidy can shrink the file after
 * mass deletes. A new file takes it at once; a file made by an older
 * flexqd is rebuilt once (VACUUM), which needs room for a copy: without
 * it the file keeps its size and SQLite reuses its free pages as before.
 */
static void set_incremental_vacuum(sqlite3 *db)
{
    sqlite3_stmt *st;
    int mode = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA auto_vacuum", -1, &st, NULL) ==
        SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            mode = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    if (mode == 2)
        return;
    sqlite3_exec(db, "PRAGMA auto_vacuum=INCREMENTAL", NULL, NULL, NULL);
    sqlite3_exec(db, "VACUUM", NULL, NULL, NULL);
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
    sqlite3 *db = NULL;
    int rc = open_db(dir, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db, err);
    if (rc < 0) {
        close(lock_fd);
        return rc;
    }
    rc = exec(db, "PRAGMA journal_mode=WAL", err);
    /* NORMAL in both modes: SQLite syncs around checkpoints itself; with
     * FQ_STORE_SYNC_FULL the commit's own WAL sync is the syncer's. */
    if (rc == 0)
        rc = exec(db, "PRAGMA synchronous=NORMAL", err);
    /* The WAL goes back to 4 MiB after each checkpoint instead of keeping
     * its largest size; freed pages can be given back (fq_store_tidy). */
    if (rc == 0)
        rc = exec(db, "PRAGMA journal_size_limit=4194304", err);
    if (rc == 0)
        set_incremental_vacuum(db);
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
    s->wal_path = fq_xasprintf("%s/flexq.db-wal", dir);
    s->sy.wal_fd = -1;
    s->sy.event_fd = -1;
    if (sync == FQ_STORE_SYNC_FULL) {
        pthread_mutex_init(&s->sy.mu, NULL);
        pthread_cond_init(&s->sy.cv, NULL);
        s->sy.event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        /* The syncer starts with every signal blocked, so signals (SIGCHLD,
         * SIGTERM) keep going to the loop's thread. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int prc = s->sy.event_fd < 0 ?
                      -1 :
                      pthread_create(&s->sy.th, NULL, syncer_main, &s->sy);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (prc != 0) {
            rc = fq_err_set(err, FQ_EIO, "store: cannot start the syncer: %s",
                            strerror(errno));
            fq_store_close(s);
            return rc;
        }
        s->sy.running = true;
        /* The WAL's descriptor now, while descriptors are plentiful: taken
         * at the first commit instead, a start that meets a flood of
         * connections (every descriptor taken) could not commit at all.
         * Best effort: if SQLite made no WAL yet, the first commit opens
         * it. */
        struct fq_err ignored = {0};
        (void)wal_open(s, &ignored);
    }
    if (sqlite3_prepare_v3(db,
                           "INSERT INTO objects (id, kind, ns, name, rev, "
                           "body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                           -1, SQLITE_PREPARE_PERSISTENT, &s->insert, NULL) ||
        sqlite3_prepare_v3(db,
                           "UPDATE objects SET rev = ?2, body = ?3 WHERE "
                           "id = ?1",
                           -1, SQLITE_PREPARE_PERSISTENT, &s->update, NULL) ||
        sqlite3_prepare_v3(db, "DELETE FROM objects WHERE id = ?1", -1,
                           SQLITE_PREPARE_PERSISTENT, &s->del, NULL) ||
        sqlite3_prepare_v3(db,
                           "INSERT INTO event_history (rev, ns, name, body) "
                           "VALUES (?1, ?2, ?3, ?4)",
                           -1, SQLITE_PREPARE_PERSISTENT, &s->event, NULL) ||
        /* An UPDATE of the value leaves meta's key index alone: one page
         * per commit, not two (the row exists since migration 3). */
        sqlite3_prepare_v3(db,
                           "UPDATE meta SET value = ?1 WHERE key = "
                           "'revision'",
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
    if (s->sy.running) {
        /* The last sync asked for still runs to its end. */
        pthread_mutex_lock(&s->sy.mu);
        s->sy.stop = true;
        pthread_cond_broadcast(&s->sy.cv);
        pthread_mutex_unlock(&s->sy.mu);
        pthread_join(s->sy.th, NULL);
        pthread_mutex_destroy(&s->sy.mu);
        pthread_cond_destroy(&s->sy.cv);
    }
    if (s->sy.wal_fd >= 0)
        close(s->sy.wal_fd);
    if (s->sy.event_fd >= 0)
        close(s->sy.event_fd);
    free(s->wal_path);
    sqlite3_finalize(s->insert);
    sqlite3_finalize(s->update);
    sqlite3_finalize(s->del);
    sqlite3_finalize(s->event);
    sqlite3_finalize(s->meta);
    sqlite3_close(s->db);
    if (s->lock_fd >= 0)
        close(s->lock_fd);
    index_clear(s);
    free(s);
}

/* One parsed row: its kind, its tree (owned), and its key for the sort,
 * read from the tree (borrowed): a copy of each key cost two blocks per
 * object, made and freed during the load, whose holes stayed between the
 * trees. Where a tree's key differs from its row's (it cannot, through
 * flexqd), only the order differs: the object store files each object in
 * its place whatever the order it comes in. */
struct row {
    enum fq_kind kind;
    struct fq_value *obj;
    const char *ns, *name;
    /* The first 8 bytes of ns and name, big-endian, zeros past the end:
     * compared as numbers they order as strcmp does, and they settle
     * nearly every comparison of the sort without reading the trees. */
    uint64_t nspre, npre;
};

/* The first 8 bytes of s as a big-endian number, zeros past its end. */
static uint64_t sort_prefix(const char *s)
{
    uint64_t w = 0;
    for (int i = 0; i < 8 && s[i]; i++)
        w |= (uint64_t)(unsigned char)s[i] << (56 - 8 * i);
    return w;
}

/* A share of the objects table (ids in (lo, hi]), read and parsed by one
 * thread on its own read-only connection. */
struct part {
    const char *path;
    int64_t lo, hi;
    struct row *rows;
    size_t n, cap;
    /* Every row's index key (unknown kinds too), when want_keys: made
     * here, put in the index by the calling thread. */
    bool want_keys;
    struct slot *keys;
    size_t nkeys, capkeys;
    int rc;
    struct fq_err err;
};

static int row_cmp(const void *x, const void *y);

static void *load_part(void *arg)
{
    struct part *p = arg;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open_v2(p->path, &db,
                        SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT kind, ns, name, body, id FROM objects "
                           "WHERE id > ?1 AND id <= ?2",
                           -1, &st, NULL) != SQLITE_OK) {
        p->rc = fq_err_set(&p->err, FQ_EIO, "store: loading: %s",
                           db ? sqlite3_errmsg(db) : "out of memory");
        goto out;
    }
    /* Pages read through a mapping of the file, not copied by read():
     * a load reads the whole table (at a million objects, 584 MB). */
    sqlite3_exec(db, "PRAGMA mmap_size=17179869184", NULL, NULL, NULL);
    sqlite3_bind_int64(st, 1, p->lo);
    sqlite3_bind_int64(st, 2, p->hi);
    struct fq_limits lim = fq_limits_default();
    lim.max_bytes = 64u << 20;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *kname = (const char *)sqlite3_column_text(st, 0);
        enum fq_kind k = kind_by_name(kname ? kname : "");
        const char *ns = (const char *)sqlite3_column_text(st, 1);
        const char *name = (const char *)sqlite3_column_text(st, 2);
        if (p->want_keys) {
            FQ_GROW(p->keys, p->capkeys, p->nkeys + 1);
            struct slot *x = &p->keys[p->nkeys++];
            x->key = make_key(k, ns ? ns : "", name ? name : "", &x->klen);
            x->hash = hash_key(x->key, x->klen);
            x->id = sqlite3_column_int64(st, 4);
        }
        if (k == FQ_KIND_NONE)
            continue; /* --check reports it */
        const char *body = (const char *)sqlite3_column_text(st, 3);
        int len = sqlite3_column_bytes(st, 3);
        struct fq_value *obj = NULL;
        struct fq_err perr = {0};
        if (fq_json_parse(body ? body : "", (size_t)len, "store", &lim, &obj,
                          &perr) < 0) {
            p->rc = fq_err_set(&p->err, FQ_EIO, "store: object %s/%s: %s",
                               ns ? ns : "", name ? name : "", perr.msg);
            goto out;
        }
        FQ_GROW(p->rows, p->cap, p->n + 1);
        struct row *r = &p->rows[p->n++];
        r->kind = k;
        r->obj = obj;
        r->ns = fq_value_path_str(obj, "metadata.namespace", "");
        r->name = fq_value_path_str(obj, "metadata.name", "");
        r->nspre = sort_prefix(r->ns);
        r->npre = sort_prefix(r->name);
    }
    if (step != SQLITE_DONE)
        p->rc = fq_err_set(&p->err, FQ_EIO, "store: loading: %s",
                           sqlite3_errmsg(db));
    else if (p->n > 1)
        qsort(p->rows, p->n, sizeof(*p->rows), row_cmp);
out:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return NULL;
}

/* The load's order: by kind, then (ns, name) as the table's BINARY
 * collation (and the object store) compare them. */
static int row_cmp(const void *x, const void *y)
{
    const struct row *a = x, *b = y;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->nspre != b->nspre)
        return a->nspre < b->nspre ? -1 : 1;
    /* Equal prefixes whose last byte is 0: both texts ended there. */
    int c = a->nspre & 0xff ? strcmp(a->ns + 8, b->ns + 8) : 0;
    if (c)
        return c;
    if (a->npre != b->npre)
        return a->npre < b->npre ? -1 : 1;
    return a->npre & 0xff ? strcmp(a->name + 8, b->name + 8) : 0;
}

/* Puts the keys the parts made into the index (which was not read
 * yet), when `ok` (every part read all its rows), or frees them. */
static void index_from_parts(struct fq_store *s, struct part *parts, int nparts,
                             bool ok)
{
    size_t n = 0;
    for (int i = 0; i < nparts; i++)
        n += parts[i].nkeys;
    if (ok && parts[0].want_keys) {
        index_clear(s);
        s->next_id = 1;
        size_t cap = 1024;
        while (n * 4 > cap * 3)
            cap *= 2;
        index_resize(s, cap); /* no growth while filling */
        for (int i = 0; i < nparts; i++)
            for (size_t j = 0; j < parts[i].nkeys; j++) {
                struct slot *x = &parts[i].keys[j];
                slot_put(s, x->key, x->klen, x->hash, x->id);
                if (x->id >= s->next_id)
                    s->next_id = x->id + 1;
            }
        s->indexed = true;
    } else {
        for (int i = 0; i < nparts; i++)
            for (size_t j = 0; j < parts[i].nkeys; j++)
                free(parts[i].keys[j].key);
    }
    for (int i = 0; i < nparts; i++)
        free(parts[i].keys);
}

/* Most threads a load parses on, and the fewest rows worth a thread. */
#define LOAD_THREADS         4
#define LOAD_ROWS_PER_THREAD 20000

/*
 * Reads every object back and hands it to fn in kinds.h's order, each
 * kind in (ns, name) order (so that the object store appends each one
 * to its sorted list). Parsing the JSON is most of a start-up's time, so
 * the table is cut into id ranges that threads read and parse on their
 * own read-only connections (WAL readers do not block each other); the
 * rows are then sorted in memory, which is cheaper than SQLite's ORDER BY
 * over the bodies. fn runs on the calling thread only.
 */
int fq_store_load(struct fq_store *s, fq_store_load_fn fn, void *ctx,
                  struct fq_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT min(id), max(id), count(*) FROM objects", -1,
                           &st, NULL))
        return db_err(err, s->db, "loading");
    int64_t lo = 0, hi = 0, count = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        lo = sqlite3_column_int64(st, 0) - 1;
        hi = sqlite3_column_int64(st, 1);
        count = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nparts = (int)(count / LOAD_ROWS_PER_THREAD) + 1;
    if (nparts > cpus)
        nparts = cpus > 1 ? (int)cpus : 1;
    if (nparts > LOAD_THREADS)
        nparts = LOAD_THREADS;
    const char *path = sqlite3_db_filename(s->db, "main");
    struct part parts[LOAD_THREADS];
    pthread_t th[LOAD_THREADS];
    bool started[LOAD_THREADS] = {false};
    memset(parts, 0, sizeof(parts));
    for (int i = 0; i < nparts; i++) {
        parts[i].path = path;
        parts[i].lo = lo + (hi - lo) * i / nparts;
        parts[i].hi = i == nparts - 1 ? hi : lo + (hi - lo) * (i + 1) / nparts;
        parts[i].want_keys = !s->indexed;
    }
    for (int i = 1; i < nparts; i++)
        started[i] = pthread_create(&th[i], NULL, load_part, &parts[i]) == 0;
    load_part(&parts[0]);
    for (int i = 1; i < nparts; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            load_part(&parts[i]);
    }
    int rc = 0;
    for (int i = 0; i < nparts; i++) {
        if (parts[i].rc < 0 && rc == 0)
            rc = fq_err_set(err, parts[i].err.code, "%s", parts[i].err.msg);
    }
    /* Each part is sorted (by its thread): merge them, the least head
     * first. */
    size_t at[LOAD_THREADS] = {0};
    for (;;) {
        int best = -1;
        for (int i = 0; i < nparts; i++)
            if (at[i] < parts[i].n &&
                (best < 0 || row_cmp(&parts[i].rows[at[i]],
                                     &parts[best].rows[at[best]]) < 0))
                best = i;
        if (best < 0)
            break;
        const struct row *r = &parts[best].rows[at[best]++];
        if (rc == 0)
            rc = fn(ctx, r->kind, r->obj);
        else
            fq_value_free(r->obj);
    }
    for (int i = 0; i < nparts; i++)
        free(parts[i].rows);
    index_from_parts(s, parts, nparts, rc == 0);
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

/* Writes one object's last state of the turn: an update in place by id,
 * or a new row at the table's end. */
static int write_object(struct fq_store *s, const struct fq_change *ch,
                        const char *json, size_t len, struct fq_err *err)
{
    size_t klen;
    char *k = make_key(ch->kind, ch->ns, ch->name, &klen);
    uint64_t h = hash_key(k, klen);
    struct slot *x = slot_find(s, k, klen, h);
    if (x) {
        free(k);
        sqlite3_bind_int64(s->update, 1, x->id);
        sqlite3_bind_int64(s->update, 2, (sqlite3_int64)ch->rev);
        sqlite3_bind_text(s->update, 3, json, (int)len, SQLITE_STATIC);
        return step_done(s->update) < 0 ? db_err(err, s->db, "writing") : 0;
    }
    int64_t id = s->next_id++;
    sqlite3_bind_int64(s->insert, 1, id);
    sqlite3_bind_text(s->insert, 2, fq_kind_info(ch->kind)->name, -1,
                      SQLITE_STATIC);
    sqlite3_bind_text(s->insert, 3, ch->ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(s->insert, 4, ch->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s->insert, 5, (sqlite3_int64)ch->rev);
    sqlite3_bind_text(s->insert, 6, json, (int)len, SQLITE_STATIC);
    if (step_done(s->insert) < 0) {
        free(k);
        return db_err(err, s->db, "writing");
    }
    slot_put(s, k, klen, h, id);
    return 0;
}

static int delete_object(struct fq_store *s, const struct fq_change *ch,
                         struct fq_err *err)
{
    size_t klen;
    char *k = make_key(ch->kind, ch->ns, ch->name, &klen);
    struct slot *x = slot_find(s, k, klen, hash_key(k, klen));
    free(k);
    if (!x)
        return 0; /* created and deleted within the turn: never written */
    sqlite3_bind_int64(s->del, 1, x->id);
    if (step_done(s->del) < 0)
        return db_err(err, s->db, "deleting");
    slot_del(s, x);
    return 0;
}

/* --- the syncer: the WAL's fsync off the loop -------------------------- */

/*
 * With FQ_STORE_SYNC_FULL a write transaction commits at synchronous=
 * NORMAL (its frames are in the WAL file, in the page cache) and the
 * syncer thread then fdatasync()s the WAL; the daemon acknowledges the
 * write only when that sync has returned. That is what synchronous=FULL
 * does inside COMMIT, moved off the loop so that the loop parses and
 * applies the next requests meanwhile. Why it is as safe:
 *
 *   - fdatasync() on the WAL, started after COMMIT wrote the transaction's
 *     frames, makes them durable (the same call FULL makes); an fd of our
 *     own serves as well as SQLite's since fsync works on the file;
 *   - SQLite at NORMAL still syncs the WAL before each checkpoint, the
 *     database after it, and the WAL header when the WAL is reused, so a
 *     checkpoint or WAL reset running while the syncer works never leaves
 *     an acknowledged transaction only in the page cache;
 *   - the WAL file is the same inode for the life of the connection (only
 *     closing the last connection deletes it); write checks this anyway
 *     and reopens, after waiting for the syncer, if it ever changed;
 *   - one sync at a time: the daemon writes the next transaction only
 *     after the sync of the previous one ended (fq_store_syncing), so each
 *     acknowledgement is covered by a sync that started after its commit;
 *   - a failed fdatasync is sticky and fatal, like a failed commit.
 */
static void *syncer_main(void *arg)
{
    struct syncer *y = arg;
    pthread_mutex_lock(&y->mu);
    for (;;) {
        while (!y->want && !y->stop)
            pthread_cond_wait(&y->cv, &y->mu);
        if (!y->want)
            break; /* stop, nothing asked */
        int fd = y->wal_fd;
        pthread_mutex_unlock(&y->mu);
        int rc = fd >= 0 ? fdatasync(fd) : 0;
        int e = errno;
        pthread_mutex_lock(&y->mu);
        if (rc < 0 && !y->error)
            y->error = e ? e : EIO;
        y->want = false;
        pthread_cond_broadcast(&y->cv);
        uint64_t one = 1;
        if (write(y->event_fd, &one, sizeof(one)) < 0) {
            /* the counter cannot overflow at one per sync; ignore */
        }
    }
    pthread_mutex_unlock(&y->mu);
    return NULL;
}

/* Opens (or, if SQLite ever made a new one, reopens) the WAL for the
 * syncer. Loop thread, no sync running. */
static int wal_open(struct fq_store *s, struct fq_err *err)
{
    struct stat a, b;
    if (s->sy.wal_fd >= 0 && fstat(s->sy.wal_fd, &a) == 0 && a.st_nlink > 0 &&
        stat(s->wal_path, &b) == 0 && a.st_ino == b.st_ino &&
        a.st_dev == b.st_dev)
        return 0;
    if (s->sy.wal_fd >= 0)
        close(s->sy.wal_fd);
    s->sy.wal_fd = open(s->wal_path, O_RDONLY | O_CLOEXEC);
    if (s->sy.wal_fd < 0)
        return fq_err_set(err, FQ_EIO, "store: cannot open %s: %s", s->wal_path,
                          strerror(errno));
    return 0;
}

bool fq_store_syncing(struct fq_store *s)
{
    if (!s->sy.running)
        return false;
    pthread_mutex_lock(&s->sy.mu);
    bool busy = s->sy.want;
    pthread_mutex_unlock(&s->sy.mu);
    return busy;
}

int fq_store_notify_fd(const struct fq_store *s)
{
    return s->sy.running ? s->sy.event_fd : -1;
}

/* 0 when no sync runs, 1 while one does, FQ_EIO once one failed. */
static int sync_state(struct fq_store *s, bool block, struct fq_err *err)
{
    if (!s->sy.running)
        return 0;
    pthread_mutex_lock(&s->sy.mu);
    while (block && s->sy.want && !s->sy.error)
        pthread_cond_wait(&s->sy.cv, &s->sy.mu);
    int rc = s->sy.error ? FQ_EIO : s->sy.want ? 1 : 0;
    int e = s->sy.error;
    pthread_mutex_unlock(&s->sy.mu);
    if (rc == FQ_EIO)
        return fq_err_set(err, FQ_EIO, "store: fdatasync of %s: %s",
                          s->wal_path, strerror(e));
    return rc;
}

int fq_store_synced(struct fq_store *s, struct fq_err *err)
{
    uint64_t v;
    if (s->sy.running && read(s->sy.event_fd, &v, sizeof(v)) < 0) {
        /* EAGAIN: nothing new; the state below says where we are */
    }
    return sync_state(s, false, err);
}

int fq_store_wait(struct fq_store *s, struct fq_err *err)
{
    return sync_state(s, true, err) < 0 ? FQ_EIO : 0;
}

/* Rows of event_history read per statement while tidying. */
#define TIDY_WINDOW 4096
/* Free pages worth giving back to the filesystem. */
#define TIDY_FREE_PAGES 256

static int64_t pragma_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

/* Deletes the history rows of Events that no longer exist (the index
 * holds every live object's key), reading the table by id in windows. */
static int drop_orphan_history(struct fq_store *s, uint64_t *dropped,
                               struct fq_err *err)
{
    sqlite3_stmt *scan = NULL, *del = NULL;
    int rc = index_ready(s, err);
    if (rc < 0)
        return rc;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT id, ns, name FROM event_history WHERE id "
                           "> ?1 ORDER BY id LIMIT ?2",
                           -1, &scan, NULL) ||
        sqlite3_prepare_v2(s->db, "DELETE FROM event_history WHERE id = ?1", -1,
                           &del, NULL)) {
        rc = db_err(err, s->db, "tidying the event history");
        goto out;
    }
    int64_t after = 0;
    for (;;) {
        sqlite3_bind_int64(scan, 1, after);
        sqlite3_bind_int(scan, 2, TIDY_WINDOW);
        int seen = 0, step;
        int64_t orphans[TIDY_WINDOW];
        int norphans = 0;
        while ((step = sqlite3_step(scan)) == SQLITE_ROW) {
            seen++;
            after = sqlite3_column_int64(scan, 0);
            const char *ns = (const char *)sqlite3_column_text(scan, 1);
            const char *name = (const char *)sqlite3_column_text(scan, 2);
            size_t klen;
            char *k =
                make_key(FQ_KIND_EVENT, ns ? ns : "", name ? name : "", &klen);
            if (!slot_find(s, k, klen, hash_key(k, klen)))
                orphans[norphans++] = after;
            free(k);
        }
        sqlite3_reset(scan);
        if (step != SQLITE_DONE) {
            rc = db_err(err, s->db, "tidying the event history");
            goto out;
        }
        for (int i = 0; i < norphans; i++) {
            sqlite3_bind_int64(del, 1, orphans[i]);
            if (step_done(del) < 0) {
                rc = db_err(err, s->db, "tidying the event history");
                goto out;
            }
        }
        *dropped += (uint64_t)norphans;
        if (seen < TIDY_WINDOW)
            break;
    }
out:
    sqlite3_finalize(scan);
    sqlite3_finalize(del);
    return rc;
}

int fq_store_tidy(struct fq_store *s, struct fq_err *err)
{
    if (s->sy.running && fq_store_syncing(s))
        return 0; /* a commit is being synced: next time */
    int64_t free_pages = pragma_int(s->db, "PRAGMA freelist_count");
    if (!s->events_deleted && free_pages < TIDY_FREE_PAGES)
        return 0;
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL))
        return db_err(err, s->db, "begin");
    uint64_t dropped = 0;
    int rc = s->events_deleted ? drop_orphan_history(s, &dropped, err) : 0;
    if (rc == 0 && (dropped || free_pages >= TIDY_FREE_PAGES) &&
        sqlite3_exec(s->db, "PRAGMA incremental_vacuum", NULL, NULL, NULL))
        rc = db_err(err, s->db, "incremental vacuum");
    if (rc == 0 && sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL))
        rc = db_err(err, s->db, "commit");
    if (rc < 0) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    s->events_deleted = 0;
    /* Give the WAL's pages back too when nobody reads an old snapshot. */
    sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL,
                              NULL);
    /* And the page cache's unused pages (up to 2 MB after a burst). */
    sqlite3_db_release_memory(s->db);
    return (int)(dropped > 0x7fffffff ? 0x7fffffff : dropped);
}

static int store_write(struct fq_store *s, const struct fq_change *c,
                       struct fq_change *keep, size_t n, struct fq_err *err);

int fq_store_commit(struct fq_store *s, const struct fq_change *c, size_t n,
                    struct fq_err *err)
{
    int rc = store_write(s, c, NULL, n, err);
    return rc < 0 ? rc : fq_store_wait(s, err);
}

int fq_store_write(struct fq_store *s, struct fq_change *c, size_t n,
                   struct fq_err *err)
{
    return store_write(s, c, c, n, err);
}

/* keep: c itself, to leave each encoding there, or NULL. */
static int store_write(struct fq_store *s, const struct fq_change *c,
                       struct fq_change *keep, size_t n, struct fq_err *err)
{
    if (n == 0)
        return 0;
    if (s->sy.running) {
        /* One sync at a time (see above); the daemon never gets here
         * with one running, a direct caller waits. */
        int wrc = fq_store_wait(s, err);
        if (wrc < 0)
            return wrc;
    }
    int irc = index_ready(s, err);
    if (irc < 0)
        return irc;
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL))
        return db_err(err, s->db, "begin");
    struct fq_buf json = FQ_BUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct fq_change *ch = &c[i];
        bool last = !superseded(c, n, i);
        bool history = ch->kind == FQ_KIND_EVENT &&
                       ch->type != FQ_CHANGE_DELETED && ch->obj;
        if (history || (last && ch->type != FQ_CHANGE_DELETED && ch->obj)) {
            /* One encoding serves the history row and the object row. */
            fq_buf_reset(&json);
            fq_json_encode(ch->obj, FQ_JSON_COMPACT, &json);
            if (keep && !keep[i].json) {
                keep[i].json = fq_xstrndup(fq_buf_str(&json), json.len);
                keep[i].json_len = json.len;
            }
        }
        if (history) {
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
        if (!last)
            continue;
        if (ch->type == FQ_CHANGE_DELETED) {
            rc = delete_object(s, ch, err);
            s->events_deleted += ch->kind == FQ_KIND_EVENT;
        } else if (ch->obj)
            rc = write_object(s, ch, fq_buf_str(&json), json.len, err);
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
        /* The index saw this turn's inserts and deletes: read it again
         * from what the table holds after the rollback (invariant 2). */
        index_load(s, NULL);
        return rc;
    }
    s->commits++;
    if (s->sy.running) {
        rc = wal_open(s, err);
        if (rc < 0)
            return rc;
        pthread_mutex_lock(&s->sy.mu);
        s->sy.want = true;
        pthread_cond_signal(&s->sy.cv);
        pthread_mutex_unlock(&s->sy.mu);
    }
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
    const char *cq = fq_value_path_str(wl, FQ_WL_ADMITTED_CQ, "");
    const struct fq_value *psa = fq_value_path(wl, FQ_WL_PODSET_ASSIGNMENTS);
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
    const struct fq_value *fr = fq_value_path(obj, FQ_WL_FLAVORS_RESERVATION);
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
    sqlite3 *db = NULL;
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
        const char *oname = fq_meta_name(obj);
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
    sqlite3_finalize(st);
    st = NULL;
    /* Invariant (1): one row per key (schema 3 has no unique index; the
     * store's in-memory index keeps it so). */
    if (v >= 3 &&
        sqlite3_prepare_v2(db,
                           "SELECT kind, ns, name, count(*) FROM objects "
                           "GROUP BY kind, ns, name HAVING count(*) > 1",
                           -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            fq_buf_printf(
                report, "problem: %s %s/%s: %d rows\n",
                sqlite3_column_text(st, 0), sqlite3_column_text(st, 1),
                sqlite3_column_text(st, 2), sqlite3_column_int(st, 3));
            problems++;
        }
    }
    for (size_t i = 0; i < ncq; i++)
        add_cq_status(&u, fq_meta_name(cqs[i]), cqs[i]);
    for (int k = 1; k < FQ_KIND__COUNT; k++)
        if (counts[k])
            fq_buf_printf(report, "%s: %zu\n",
                          fq_kind_info((enum fq_kind)k)->plural, counts[k]);
    for (size_t i = 0; i < u.n; i++) {
        struct usage *x = &u.items[i];
        bool known = false;
        for (size_t j = 0; j < ncq; j++)
            known |= !strcmp(fq_meta_name(cqs[j]), x->cq);
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
