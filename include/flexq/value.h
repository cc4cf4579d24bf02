/*
 * value.h - the document tree every manifest, API body and stored object is.
 *
 * A struct fq_value is a YAML/JSON node: null, bool, number, string, sequence
 * or mapping. Mappings keep their keys in source order, so an object decoded
 * from YAML and encoded back to JSON keeps every field, including the ones
 * flexq does not know. Each node remembers where it came from (line and
 * column, 1-based; 0 for nodes built in code) so validators can point at the
 * offending character.
 *
 * Numbers keep their source text (`raw`) so that `1e3` or a 30-digit integer
 * round-trip exactly; `i` holds the value when it is an integer that fits in
 * int64 (`is_int`), `d` holds the nearest double.
 *
 * Ownership: a tree owns its children. fq_value_free frees a whole subtree.
 * Functions that take a `struct fq_value *child` "to set/push" take ownership
 * of it. Getters return borrowed pointers. A tree's pieces (nodes, keys,
 * texts, arrays) are small blocks (alloc.h), not malloc's, and the most
 * common keys ("name", "status", ...) are static text shared by every
 * tree: callers may read the fields below, and replace a member's or
 * item's value, but never free, realloc, write or re-point a key, text
 * or array.
 *
 * Parsers (yaml.h, json.h) take a struct fq_limits so that no input can make
 * flexq use unbounded memory or stack.
 */
#ifndef FLEXQ_VALUE_H
#define FLEXQ_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "flexq/buf.h"
#include "flexq/err.h"

enum fq_vtype {
    FQ_V_NULL,
    FQ_V_BOOL,
    FQ_V_NUM,
    FQ_V_STR,
    FQ_V_SEQ,
    FQ_V_MAP,
};

struct fq_value;

struct fq_member {
    const char *key;      /* owned, or one of value.c's well-known keys */
    struct fq_value *val; /* owned */
    uint32_t line, col;
    /* Kept by value.c so that a lookup mostly reads no key but the one it
     * finds (see fq_map_get): strlen(key) (keys are shorter than 2 GiB)
     * and the low 32 bits of fq_key_prefix(key, klen), the key's first 4
     * bytes. 32 bytes a member, not 40 with the whole 8-byte prefix: a
     * stored object has some 20 members (issue 21's million objects). */
    uint32_t klen:31;
    uint32_t well_known:1; /* key is value.c's static text, never freed */
    uint32_t kpre;
};

struct fq_value {
    /* An enum fq_vtype, in 3 bits so that type and line share a word and
     * a node is 40 bytes, not 48 (issue 21: a stored object has some 20
     * nodes). Read and compare it as the enum; a line past 2^29 (no input
     * within the parsers' limits has one) would wrap. */
    unsigned type:3;
    unsigned line:29;
    uint32_t col;

    union {
        bool b;

        struct {
            char *raw; /* the number as written, e.g. "1e3"; owned, or
                          pointing at buf (a short text) */
            double d;
            int64_t i;
            bool is_int;
            char buf[7]; /* short texts live in the node itself */
        } num;

        struct {
            char *s; /* NUL-terminated, may contain no NUL; owned, or
                        pointing at buf (a short string) */
            size_t len;
            char buf[16]; /* short strings live in the node itself */
        } str;

        struct {
            struct fq_value **items; /* owned */
            size_t n, cap;
        } seq;

        struct {
            struct fq_member *items; /* owned, in insertion order */
            size_t n, cap;
        } map;
    } u;
};

/* Limits on outside input; fq_limits_default() gives the ones flexq uses. */
struct fq_limits {
    size_t max_bytes;   /* whole input (default 4 MiB) */
    size_t max_depth;   /* nesting of sequences/mappings (default 64) */
    size_t max_docs;    /* YAML documents in one stream (default 1000) */
    size_t max_aliases; /* YAML alias uses in one stream (default 100) */
    size_t max_string;  /* one scalar or key, bytes (default 1 MiB) */
    size_t max_nodes;   /* nodes in one stream (default 1,000,000) */
};

struct fq_limits fq_limits_default(void);

/* Constructors; all return owned nodes. */
struct fq_value *fq_value_null(void);
struct fq_value *fq_value_bool(bool b);
struct fq_value *fq_value_int(int64_t i);
struct fq_value *fq_value_double(double d);
/* Parses `raw` as a JSON/YAML number; NULL if it is not one. */
struct fq_value *fq_value_num_raw(const char *raw);
struct fq_value *fq_value_str(const char *s);
struct fq_value *fq_value_strn(const char *s, size_t len);
struct fq_value *fq_value_strf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
struct fq_value *fq_value_seq(void);
struct fq_value *fq_value_map(void);

void fq_value_free(struct fq_value *v);
struct fq_value *fq_value_clone(const struct fq_value *v); /* deep, owned */
/*
 * The memory a tree holds, estimated: its nodes, the strings and numbers
 * not stored inline, and its sequences' and maps' tables (not the maps'
 * keys). fq_value_clone_sized returns the same deep copy as
 * fq_value_clone and sets *bytes to fq_value_bytes of that copy, counted
 * while copying (the watch ring's accounting, without a second walk).
 */
size_t fq_value_bytes(const struct fq_value *v);
struct fq_value *fq_value_clone_sized(const struct fq_value *v, size_t *bytes);
bool fq_value_equal(const struct fq_value *a, const struct fq_value *b);
/*
 * The numbers in v that JSON cannot carry (YAML's .inf, -.inf and .nan,
 * or a binary encoding's non-finite double), in document order: calls
 * each(ctx, node) for every one (each may be NULL) and returns how many.
 * A stored object is JSON, which would write such a number as null, so
 * every reader of outside input refuses them, at the node's line and
 * column where the parser set them.
 */
size_t fq_value_nonfinite(const struct fq_value *v,
                          void (*each)(void *ctx, const struct fq_value *num),
                          void *ctx);
/* 0 if v holds no such number; else FQ_EPARSE with `err` naming the
 * first one as "name:line:col". For the readers that stop at the first
 * problem (API bodies, flexqd's config). */
int fq_value_refuse_nonfinite(const struct fq_value *v, const char *name,
                              struct fq_err *err);

/*
 * Lookups. A map is searched member by member, and a member's key is a
 * block of its own, mostly out of the CPU's caches in a tree that lived
 * long (a running workload, a node). So a member also keeps its key's
 * length and first 4 bytes (klen, kpre), and a lookup compares that word
 * with the wanted key's, reading a member's key only to compare bytes
 * past the fourth of a key that matched so far (the well-known keys,
 * most of them, are static text and warm). fq_map_get and the
 * path getters below are inline: for a string literal, the common key,
 * the compiler folds its length and prefix into constants.
 */

/* The 8 or 4 bytes at p as a number, p[0] lowest (little-endian), for
 * fq_key_prefix. */
static inline uint64_t fq_key_load64(const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

static inline uint64_t fq_key_load32(const char *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap32(w);
#endif
    return w;
}

/* The first 8 bytes of the n-byte key k as a number, k[0] lowest, zero
 * above the key's end (so "name" and "name\0\0" differ only in their
 * lengths, which are compared too). A literal key folds to a constant.
 * Any other costs one load when it is 8 bytes or longer, and two
 * overlapping ones when it is 4 to 7 (the bytes both read land in the
 * same places): a byte-by-byte loop here, run for every key appended and
 * every path segment, cost some 30 instructions a key. */
static inline uint64_t fq_key_prefix(const char *k, size_t n)
{
    if (n >= 8)
        return fq_key_load64(k);
    if (n >= 4)
        return fq_key_load32(k) | fq_key_load32(k + n - 4) << (8 * (n - 4));
    if (n == 0)
        return 0;
    return (uint64_t)(unsigned char)k[0] |
           (uint64_t)(unsigned char)k[n / 2] << (8 * (n / 2)) |
           (uint64_t)(unsigned char)k[n - 1] << (8 * (n - 1));
}

/* The out-of-line halves of fq_map_get and fq_value_path: the value of
 * the n-byte key k (whose prefix is pre) in map m, and of the n-byte
 * dotted path p under v. Call the inline functions instead. */
struct fq_value *fq_map_get_n(const struct fq_value *m, const char *k, size_t n,
                              uint64_t pre);
struct fq_value *fq_value_path_n(const struct fq_value *v, const char *p,
                                 size_t n);

/* Mappings. get returns borrowed or NULL (also when m is NULL or not a map). */
static inline struct fq_value *fq_map_get(const struct fq_value *m,
                                          const char *key)
{
    if (!key)
        return NULL;
    size_t n = strlen(key);
    return fq_map_get_n(m, key, n, fq_key_prefix(key, n));
}

/* The out-of-line halves of fq_map_set and fq_map_ensure_map, for the
 * n-byte key k whose prefix is pre. Call the inline functions instead. */
void fq_map_set_n(struct fq_value *m, const char *k, size_t n, uint64_t pre,
                  struct fq_value *val);
struct fq_value *fq_map_ensure_map_n(struct fq_value *m, const char *k,
                                     size_t n, uint64_t pre);

/* Sets key to val (owned), replacing and freeing an old value in place.
 * Inline like fq_map_get: the controllers set literal keys, over a
 * million times in a replay. */
static inline void fq_map_set(struct fq_value *m, const char *key,
                              struct fq_value *val)
{
    size_t n = strlen(key);
    fq_map_set_n(m, key, n, fq_key_prefix(key, n), val);
}

/* Removes key; returns true if it was there. */
bool fq_map_del(struct fq_value *m, const char *key);
/* Removes key and returns its value (owned by the caller), or NULL. */
struct fq_value *fq_map_take(struct fq_value *m, const char *key);

/* Returns the child map at key, creating an empty one if absent (and
 * replacing a value that is not a map). */
static inline struct fq_value *fq_map_ensure_map(struct fq_value *m,
                                                 const char *key)
{
    size_t n = strlen(key);
    return fq_map_ensure_map_n(m, key, n, fq_key_prefix(key, n));
}

/* Sequences. */
void fq_seq_push(struct fq_value *s, struct fq_value *val); /* takes val */
/* Frees item i and closes the gap (nothing when out of range). */
void fq_seq_remove(struct fq_value *s, size_t i);

/* Items of seq/map, else 0. (This, fq_seq_at and fq_value_as_str are
 * inline: controllers call them in their inner loops, over a million
 * times in a replay.) */
static inline size_t fq_value_len(const struct fq_value *v)
{
    if (!v)
        return 0;
    if (v->type == FQ_V_SEQ)
        return v->u.seq.n;
    if (v->type == FQ_V_MAP)
        return v->u.map.n;
    return 0;
}

/* Item i of a sequence (borrowed), or NULL. */
static inline struct fq_value *fq_seq_at(const struct fq_value *s, size_t i)
{
    if (!s || s->type != FQ_V_SEQ || i >= s->u.seq.n)
        return NULL;
    return s->u.seq.items[i];
}

/*
 * Walks a dotted path of map keys: fq_value_path(obj, "metadata.name").
 * Returns borrowed or NULL. No sequence indexing.
 */
static inline struct fq_value *fq_value_path(const struct fq_value *v,
                                             const char *path)
{
    return path ? fq_value_path_n(v, path, strlen(path)) : NULL;
}

/* Typed getters along a path; return `def` when absent or of another type. */
static inline const char *fq_value_path_str(const struct fq_value *v,
                                            const char *path, const char *def)
{
    const struct fq_value *n = fq_value_path(v, path);
    return n && n->type == FQ_V_STR ? n->u.str.s : def;
}

static inline int64_t fq_value_path_int(const struct fq_value *v,
                                        const char *path, int64_t def)
{
    const struct fq_value *n = fq_value_path(v, path);
    return n && n->type == FQ_V_NUM && n->u.num.is_int ? n->u.num.i : def;
}

static inline bool fq_value_path_bool(const struct fq_value *v,
                                      const char *path, bool def)
{
    const struct fq_value *n = fq_value_path(v, path);
    return n && n->type == FQ_V_BOOL ? n->u.b : def;
}

/* Sets a string/int at a dotted path, creating intermediate maps. */
void fq_value_set_path(struct fq_value *v, const char *path,
                       struct fq_value *val); /* takes val */

/* Sets STR node v's text to a copy of the n bytes at s (cut at a NUL),
 * in place: no node is made or freed, which matters for the one string
 * every write of an object changes (its resourceVersion). s must not
 * point into v's own text. Nothing when v is not a STR node. */
void fq_value_set_str(struct fq_value *v, const char *s, size_t n);

/* Scalar helpers: the string of a STR node, else NULL. */
static inline const char *fq_value_as_str(const struct fq_value *v)
{
    return v && v->type == FQ_V_STR ? v->u.str.s : NULL;
}

/*
 * RFC 7386 JSON merge patch: applies `patch` to `*target` in place (a null in
 * the patch deletes a key; a non-map patch replaces the target).
 */
void fq_value_merge_patch(struct fq_value **target,
                          const struct fq_value *patch);

/* --- JSON (json.c: flexq's own parser, so numbers keep their text) --- */

enum {
    FQ_JSON_COMPACT = 0,
    FQ_JSON_PRETTY = 1 << 0, /* two-space indent, like kubectl -o json */
};

/* Parses one JSON text. Returns 0 or FQ_EPARSE / FQ_ELIMIT with `err`
 * naming line and column. `name` labels errors (a file name, or NULL). */
int fq_json_parse(const char *text, size_t len, const char *name,
                  const struct fq_limits *lim, struct fq_value **out,
                  struct fq_err *err);
/* Appends the JSON encoding of `v` to `out`. */
void fq_json_encode(const struct fq_value *v, int flags, struct fq_buf *out);
/* Convenience: returns an owned string. */
char *fq_json_dumps(const struct fq_value *v, int flags);

/* --- YAML (yaml.c; the only file that includes <yaml.h>) --------------- */

/* The documents of one YAML stream, in order. Empty documents are skipped. */
struct fq_docs {
    struct fq_value **items; /* owned */
    size_t n, cap;
};

void fq_docs_release(struct fq_docs *d);

/*
 * Parses a YAML stream (JSON is YAML too) with the YAML 1.2 core schema:
 * plain `true`/`false` are bools, `null`/`~`/empty are null, plain numbers
 * are numbers, anything quoted or non-numeric is a string. Anchors and
 * aliases are expanded within the alias limit. Returns 0, or FQ_EPARSE /
 * FQ_ELIMIT with `err` set to "name:line:col: what". On error `out` holds
 * nothing.
 */
int fq_yaml_parse(const char *text, size_t len, const char *name,
                  const struct fq_limits *lim, struct fq_docs *out,
                  struct fq_err *err);

/* Appends a YAML rendering of `v` (block style, like kubectl -o yaml). */
void fq_yaml_encode(const struct fq_value *v, struct fq_buf *out);

#endif
