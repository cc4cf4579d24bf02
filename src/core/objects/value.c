/*
 * value.c - the document tree: constructors, clone, equality, mappings,
 * sequences, dotted paths and RFC 7386 merge patch (see value.h).
 *
 * How it works. A struct fq_value is a tagged union; containers are plain
 * growable arrays (fq_grow doubles, so n appends cost O(n)). Mappings keep
 * members in insertion order and are searched linearly: Kubernetes objects
 * have a handful of keys per level, and a scan over a few cache lines beats
 * a hash table at that size. A member's key is a block of its own (but
 * for the well-known keys, static text, see below), and in a tree that
 * lived long (a running workload, a node) it is out of the CPU's
 * caches: a scan that read each candidate's key to compare it took
 * a cache miss per member (strcmp was the replay's top function, at 13%
 * of its time). So each member also keeps its key's length and first 4
 * bytes (klen, kpre: fq_key_prefix in value.h, the low half), a scan
 * compares those with the wanted key's (same_key), and reads a key only
 * for the bytes past the fourth of one that matched so far. fq_map_get, fq_map_set,
 * fq_map_ensure_map and the path getters are inline (value.h): for a
 * literal key the compiler folds the length and the prefix into
 * constants. A dotted path is looked up the
 * same way, segment by segment (fq_value_path_n). The parsers
 * never call fq_map_set while they build (that would be quadratic on
 * hostile input); they append (fq_value_map_append) and check duplicate
 * keys with a sort. For the same reason equality and merge patch switch to
 * sorted comparisons beyond 16 keys.
 *
 * Numbers. fq_value_num_raw recognises the YAML 1.2 core schema's numbers,
 * which include every JSON number:
 *   int    [-+]?[0-9]+  |  0o[0-7]+  |  0x[0-9a-fA-F]+
 *   float  [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
 *          [-+]?\.(inf|Inf|INF)  |  \.(nan|NaN|NAN)
 * `raw` keeps the text as written. `is_int`/`i` are set when the literal is
 * an integer that fits in int64, or when a float literal denotes a whole
 * number of magnitude at most 2^53 (so "1e3" reads as 1000 and "2.0" as 2;
 * beyond 2^53 a double no longer holds every integer).
 *
 * Invariants.
 *  1. A node owns its children; there is no sharing and no cycle, so
 *     fq_value_clone is a plain recursion whose depth is the tree's depth
 *     (the parsers cap it with fq_limits.max_depth), and fq_value_free
 *     walks breadth-first, recursing only past a full ring (see there).
 *  2. Mapping keys are unique when built through fq_map_set (the parsers
 *     reject duplicates).
 *  3. STR nodes hold a NUL-terminated copy; `len` is strlen(s). A string
 *     shorter than u.str.buf, or a number's text shorter than u.num.buf,
 *     lives in that buffer of its node (s or raw points at it).
 *  4. A member's klen is strlen(key) and its kpre is the low 32 bits of
 *     fq_key_prefix(key, klen); members are made only here
 *     (fq_value_map_append, fq_value_clone), never by the callers, which
 *     read keys but do not write them.
 *  5. Nodes, keys, long number texts and strings, and item arrays are small
 *     blocks (alloc.h), each freed with the size it was allocated with:
 *     sizeof(struct fq_value), klen + 1, strlen(raw) + 1, len + 1, and
 *     cap times the element's size. (Sanitizer builds check the sizes.)
 *     The exception is a well-known key (well_known below), which is
 *     static text, marked so in its member and never freed.
 *
 * What it does not do: no sequence indexing in paths, no JSON/YAML text
 * (json.c, yaml.c), no schema knowledge (kinds.c).
 */
#include "flexq/value.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "objects/value_internal.h"

struct fq_limits fq_limits_default(void)
{
    struct fq_limits l = {
        .max_bytes = 4u << 20,
        .max_depth = 64,
        .max_docs = 1000,
        .max_aliases = 100,
        .max_string = 1u << 20,
        .max_nodes = 1000000,
    };
    return l;
}

/* --- constructors ------------------------------------------------------ */

/* Nodes, and the texts and arrays they own, are small blocks (alloc.h):
 * a tree is built and freed piece by piece, and the small-block cache
 * makes each piece a few instructions instead of a trip through malloc. */
static struct fq_value *node(enum fq_vtype t)
{
    struct fq_value *v = fq_small_alloc(sizeof(*v));
    memset(v, 0, sizeof(*v));
    v->type = t;
    return v;
}

/* A NUL-terminated copy of the n bytes at s: keys, number texts and
 * long strings, freed with free_text(copy, n). */
static char *dup_text(const char *s, size_t n)
{
    char *d = fq_small_alloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static void free_text(char *s, size_t n)
{
    fq_small_free(s, n + 1);
}

/*
 * Well-known keys. Most members of an object have one of a few dozen keys
 * ("name", "status", "lastTransitionTime", ...), and a copy of each in a
 * block of its own cost an allocation, a copy and a free per member
 * built, cloned or freed, and a cold block to read in a lookup of a key
 * longer than 8 bytes. So a member whose key is one of those below points
 * at this static text instead (its well_known flag set): clone copies
 * the pointer, and free leaves it alone. The list is the keys of the
 * objects flexq writes (a Philly replay's most frequent, by count); a key
 * not in it is copied as before, so it only has to be short, not
 * complete. Grouped by length, so that finding one is a jump on the
 * length and a compare of the prefix with a few constants.
 */

/* Whether the n-byte key k, whose prefix is pre, is the literal s of sn
 * bytes: with s a literal, the compiler folds its length and prefix. */
static inline bool is_key(const char *k, size_t n, uint64_t pre, const char *s,
                          size_t sn)
{
    return n == sn && pre == fq_key_prefix(s, sn) &&
           (sn <= 8 || !memcmp(k + 8, s + 8, sn - 8));
}

#define WK(s)                              \
 do {                                      \
  if (is_key(k, n, pre, s, sizeof(s) - 1)) \
   return s;                               \
 } while (0)

/* Keys of 3 to 10 bytes: see well_known. */
static const char *well_known_short(const char *k, size_t n, uint64_t pre)
{
    switch (n) {
    case 3:
        WK("uid");
        WK("cpu");
        WK("key");
        WK("usd");
        break;
    case 4:
        WK("name");
        WK("type");
        WK("spec");
        WK("kind");
        WK("pods");
        WK("cost");
        WK("asOf");
        break;
    case 5:
        WK("count");
        WK("image");
        WK("total");
        WK("state");
        WK("value");
        break;
    case 6:
        WK("status");
        WK("reason");
        WK("labels");
        WK("limits");
        WK("podSet");
        WK("active");
        WK("memory");
        WK("effect");
        WK("taints");
        WK("asOfMs");
        break;
    case 7:
        WK("message");
        WK("podSets");
        WK("flavors");
        break;
    case 8:
        WK("requests");
        WK("metadata");
        WK("template");
        WK("operator");
        WK("workload");
        WK("priority");
        WK("borrowed");
        WK("capacity");
        break;
    case 9:
        WK("resources");
        WK("namespace");
        WK("queueName");
        WK("admission");
        break;
    case 10:
        WK("conditions");
        WK("apiVersion");
        WK("generation");
        WK("containers");
        WK("podSetName");
        WK("controller");
        WK("providerID");
        WK("placements");
        break;
    }
    return NULL;
}

/* Keys of 11 bytes or more: see well_known. */
static const char *well_known_long(const char *k, size_t n, uint64_t pre)
{
    switch (n) {
    case 11:
        WK("annotations");
        WK("tolerations");
        WK("allocatable");
        WK("nodeSeconds");
        break;
    case 12:
        WK("clusterQueue");
        WK("flavorsUsage");
        WK("nodeSelector");
        break;
    case 13:
        WK("resourceUsage");
        WK("flexq.dev/eta");
        WK("podSetUpdates");
        break;
    case 14:
        WK("nvidia.com/gpu");
        WK("podTemplateRef");
        break;
    case 15:
        WK("resourceVersion");
        WK("admissionChecks");
        WK("ownerReferences");
        WK("flexq.dev/check");
        WK("flexq.dev/slice");
        break;
    case 16:
        WK("pendingWorkloads");
        WK("pricePerNodeHour");
        break;
    case 17:
        WK("creationTimestamp");
        WK("podSetAssignments");
        WK("admittedWorkloads");
        WK("flexq.dev/granted");
        WK("flexq.dev/attempt");
        WK("lastHeartbeatTime");
        break;
    case 18:
        WK("lastTransitionTime");
        WK("observedGeneration");
        WK("reservingWorkloads");
        WK("flavorsReservation");
        WK("flexq.dev/workload");
        WK("flexq.dev/ready-at");
        WK("flexq.dev/consumed");
        break;
    case 19:
        WK("flexq.dev/trace-job");
        break;
    case 21:
        WK("provisioningClassName");
        WK("flexq.dev/slice-index");
        break;
    case 22:
        WK("kueue.x-k8s.io/managed");
        WK("kubernetes.io/hostname");
        break;
    case 24:
        WK("provisioningClassDetails");
        WK("flexq.dev/unneeded-since");
        break;
    case 25:
        WK("kueue.x-k8s.io/queue-name");
        break;
    case 27:
        WK("topology.kubernetes.io/zone");
        WK("cloud.google.com/gke-queued");
        break;
    case 29:
        WK("cloud.google.com/gke-nodepool");
        break;
    case 30:
        WK("flexq.dev/provisioning-request");
        break;
    case 31:
        WK("cloud.google.com/gke-flex-start");
        break;
    case 32:
        WK("node.kubernetes.io/instance-type");
        WK("cloud.google.com/gke-accelerator");
        break;
    case 44:
        WK("autoscaling.x-k8s.io/provisioning-class-name");
        break;
    case 49:
        WK("autoscaling.x-k8s.io/consume-provisioning-request");
        break;
    }
    return NULL;
}

#undef WK

/* The static text of the n-byte key k (prefix pre), or NULL when it is
 * not a well-known key. */
static const char *well_known(const char *k, size_t n, uint64_t pre)
{
    return n <= 10 ? well_known_short(k, n, pre) : well_known_long(k, n, pre);
}

/* Frees member mem's key unless it is a well-known one. */
static void free_key(const struct fq_member *mem)
{
    if (!mem->well_known)
        free_text((char *)mem->key, mem->klen);
}

struct fq_value *fq_value_null(void)
{
    return node(FQ_V_NULL);
}

struct fq_value *fq_value_bool(bool b)
{
    struct fq_value *v = node(FQ_V_BOOL);
    v->u.b = b;
    return v;
}

/* Sets number node v's text to a copy of the n bytes at s: short ones
 * (most counts and generations) in the node, like short strings, saving
 * a block to make, clone, read cold and free. */
static void set_raw(struct fq_value *v, const char *s, size_t n)
{
    char *d = n < sizeof(v->u.num.buf) ? v->u.num.buf : fq_small_alloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    v->u.num.raw = d;
}

/* Sets v's text to the decimal text of i, as "%lld" writes it. By hand:
 * the controllers make an integer node for every generation, count and
 * observed generation they write, and vsnprintf cost over a thousand
 * instructions each (2.6% of a Philly replay). */
static void set_int_text(struct fq_value *v, int64_t i)
{
    char d[24], *p = d + sizeof(d);
    uint64_t mag = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
    do
        *--p = (char)('0' + mag % 10);
    while ((mag /= 10) > 0);
    if (i < 0)
        *--p = '-';
    set_raw(v, p, (size_t)(d + sizeof(d) - p));
}

struct fq_value *fq_value_int(int64_t i)
{
    struct fq_value *v = node(FQ_V_NUM);
    set_int_text(v, i);
    v->u.num.i = i;
    v->u.num.d = (double)i;
    v->u.num.is_int = true;
    return v;
}

/* Sets v's text to the shortest %g text that reads back as exactly d. */
static void set_double_text(struct fq_value *v, double d)
{
    if (isnan(d)) {
        set_raw(v, ".nan", 4);
        return;
    }
    if (isinf(d)) {
        set_raw(v, d > 0 ? ".inf" : "-.inf", d > 0 ? 4 : 5);
        return;
    }
    char s[32]; /* "%.17g" needs at most 24 */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(s, sizeof(s), "%.*g", prec, d);
        if (strtod(s, NULL) == d)
            break;
    }
    set_raw(v, s, strlen(s));
}

/* Sets is_int/i for a float literal that denotes a whole number. */
static void set_int_from_double(struct fq_value *v)
{
    double d = v->u.num.d;
    if (isfinite(d) && d == floor(d) && fabs(d) <= 9007199254740992.0) {
        v->u.num.is_int = true;
        v->u.num.i = (int64_t)d;
    }
}

struct fq_value *fq_value_double(double d)
{
    struct fq_value *v = node(FQ_V_NUM);
    set_double_text(v, d);
    v->u.num.d = d;
    set_int_from_double(v);
    return v;
}

static bool all_in(const char *s, const char *set)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!strchr(set, *s))
            return false;
    return true;
}

/* Reads digits of `base` into *out; false when it does not fit in int64. */
static bool digits_to_i64(const char *s, int base, bool neg, int64_t *out)
{
    uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t acc = 0;
    for (; *s; s++) {
        int dv = *s >= '0' && *s <= '9' ? *s - '0' :
                 *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
                                          *s - 'A' + 10;
        if (acc > (lim - (uint64_t)dv) / (uint64_t)base)
            return false;
        acc = acc * (uint64_t)base + (uint64_t)dv;
    }
    *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return true;
}

/* Matches [0-9]+(\.[0-9]*)? | \.[0-9]+ followed by ([eE][-+]?[0-9]+)? */
static bool is_float_text(const char *s)
{
    size_t id = strspn(s, "0123456789");
    s += id;
    size_t fd = 0;
    if (*s == '.') {
        s++;
        fd = strspn(s, "0123456789");
        s += fd;
    }
    if (id == 0 && fd == 0)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        size_t ed = strspn(s, "0123456789");
        if (ed == 0)
            return false;
        s += ed;
    }
    return *s == '\0';
}

struct fq_value *fq_value_num_raw(const char *raw)
{
    if (!raw || !*raw)
        return NULL;
    const char *s = raw;
    bool neg = false, is_int = false;
    int64_t i = 0;
    double d;

    if (s[0] == '0' && s[1] == 'o' && all_in(s + 2, "01234567")) {
        is_int = digits_to_i64(s + 2, 8, false, &i);
        d = 0;
        for (const char *p = s + 2; *p; p++)
            d = d * 8 + (*p - '0');
        goto make;
    }
    if (s[0] == '0' && s[1] == 'x' && all_in(s + 2, "0123456789abcdefABCDEF")) {
        is_int = digits_to_i64(s + 2, 16, false, &i);
        d = strtod(s, NULL); /* strtod reads hex in C99 */
        goto make;
    }
    if (*s == '+' || *s == '-') {
        neg = *s == '-';
        s++;
    }
    if (!strcmp(s, ".inf") || !strcmp(s, ".Inf") || !strcmp(s, ".INF")) {
        d = neg ? -HUGE_VAL : HUGE_VAL;
        goto make;
    }
    if (s == raw &&
        (!strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN"))) {
        d = NAN;
        goto make;
    }
    if (all_in(s, "0123456789")) {
        is_int = digits_to_i64(s, 10, neg, &i);
        d = strtod(raw, NULL);
        goto make;
    }
    if (!is_float_text(s))
        return NULL;
    d = strtod(raw, NULL);
make:;
    struct fq_value *v = node(FQ_V_NUM);
    set_raw(v, raw, strlen(raw));
    v->u.num.d = d;
    if (is_int) {
        v->u.num.is_int = true;
        v->u.num.i = i;
    } else if (!strchr(raw, 'x') && !strchr(raw, 'o')) {
        set_int_from_double(v);
    }
    return v;
}

/* Sets a string node's text to a copy of the n bytes at s, which hold
 * no NUL: short ones in the node, saving an allocation for most of an
 * object's strings ("True", names, reasons). */
static void set_text(struct fq_value *v, const char *s, size_t n)
{
    char *d = n < sizeof(v->u.str.buf) ? v->u.str.buf : fq_small_alloc(n + 1);
    if (n)
        memcpy(d, s, n);
    d[n] = '\0';
    v->u.str.s = d;
    v->u.str.len = n;
}

/* set_text for n bytes that may hold a NUL: the text is cut there. */
static void set_str(struct fq_value *v, const char *s, size_t n)
{
    const char *nul = s ? memchr(s, '\0', n) : NULL;
    if (!s)
        n = 0;
    else if (nul)
        n = (size_t)(nul - s);
    set_text(v, s, n);
}

struct fq_value *fq_value_strn(const char *s, size_t len)
{
    struct fq_value *v = node(FQ_V_STR);
    set_str(v, s, len);
    return v;
}

void fq_value_set_str(struct fq_value *v, const char *s, size_t n)
{
    if (!v || v->type != FQ_V_STR)
        return;
    if (v->u.str.s != v->u.str.buf)
        free_text(v->u.str.s, v->u.str.len);
    set_str(v, s, n);
}

struct fq_value *fq_value_str(const char *s)
{
    struct fq_value *v = node(FQ_V_STR);
    set_text(v, s ? s : "", s ? strlen(s) : 0);
    return v;
}

struct fq_value *fq_value_strf(const char *fmt, ...)
{
    /* Formatted once, on the stack, when it fits a line (most do; the
     * sizing pass of fq_buf_printf doubled the cost of each), else again
     * at its size. */
    char line[128];
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    struct fq_value *v = node(FQ_V_STR);
    if (n <= 0) {
        set_text(v, "", 0);
    } else if ((size_t)n < sizeof(line)) {
        set_str(v, line, (size_t)n);
    } else {
        char *big = fq_xmalloc((size_t)n + 1);
        vsnprintf(big, (size_t)n + 1, fmt, again);
        set_str(v, big, (size_t)n);
        free(big);
    }
    va_end(again);
    return v;
}

struct fq_value *fq_value_seq(void)
{
    return node(FQ_V_SEQ);
}

struct fq_value *fq_value_map(void)
{
    return node(FQ_V_MAP);
}

/* --- finding a key ---------------------------------------------------- */

/* Whether the n-byte keys a and b (n > 4), whose first 4 bytes are the
 * same, are the same: 8 bytes at a time, the last 4 or 8 read at the end
 * (they may overlap bytes already compared, and are inside both keys).
 * Inline loads, not memcmp: a call in the scan of find_n made every
 * lookup save and restore registers around it, and for a literal b the
 * compiler folds b's words to constants. */
static inline bool same_tail(const char *a, const char *b, size_t n)
{
    if (n < 8)
        return fq_key_load32(a + n - 4) == fq_key_load32(b + n - 4);
    for (size_t j = 4; j + 8 < n; j += 8)
        if (fq_key_load64(a + j) != fq_key_load64(b + j))
            return false;
    return fq_key_load64(a + n - 8) == fq_key_load64(b + n - 8);
}

/* Whether member mem's key is the n-byte key k, whose prefix is pre (its
 * low 32 bits are compared): the length and the first 4 bytes are
 * compared in the member, and the key itself is read only for the bytes
 * past the fourth of a key that matched so far. */
static inline bool same_key(const struct fq_member *mem, const char *k,
                            size_t n, uint64_t pre)
{
    return mem->kpre == (uint32_t)pre && mem->klen == n &&
           (n <= 4 || same_tail(mem->key, k, n));
}

/* Maps are small (a few keys): a linear scan, a member's length and prefix
 * compared before its key (see value.h). Inline, so that fq_map_get and
 * the path walk (several million calls a replay) are one call each. */
static inline struct fq_member *find_n(const struct fq_value *m, const char *k,
                                       size_t n, uint64_t pre)
{
    if (!m || m->type != FQ_V_MAP)
        return NULL;
    for (size_t i = 0; i < m->u.map.n; i++)
        if (same_key(&m->u.map.items[i], k, n, pre))
            return &m->u.map.items[i];
    return NULL;
}

/* find_n for a NUL-terminated key (NULL finds nothing). */
static struct fq_member *find(const struct fq_value *m, const char *key)
{
    if (!key)
        return NULL;
    size_t n = strlen(key);
    return find_n(m, key, n, fq_key_prefix(key, n));
}

/* --- free, clone, equal ------------------------------------------------ */

/* Frees a node that holds no other node, with its text. */
static void free_leaf(struct fq_value *v)
{
    if (v->type == FQ_V_NUM && v->u.num.raw && v->u.num.raw != v->u.num.buf)
        free_text(v->u.num.raw, strlen(v->u.num.raw));
    else if (v->type == FQ_V_STR && v->u.str.s != v->u.str.buf)
        free_text(v->u.str.s, v->u.str.len);
    fq_small_free(v, sizeof(*v));
}

/*
 * A tree is mostly freed long after it was last read (a finished workload,
 * a replaced status), so its nodes and arrays are cold, and a recursion
 * waits for each of them in turn: deleted objects' trees were a tenth of a
 * whole-trace replay. So a tree is freed breadth-first through a ring of
 * pending work. A node is asked for (prefetched) when it enters the ring
 * and read when it leaves it; a container read there asks for its array
 * and goes round again, and frees the array and its children's keys when
 * it comes back. With the ring's width between asking and reading, many
 * misses are in flight at once. Children that find the ring full are freed
 * at once, by a call of their own.
 */
#define FREE_RING 256 /* a power of two */

void fq_value_free(struct fq_value *v)
{
    if (!v)
        return;
    struct fq_value *ring[FREE_RING];
    bool array_asked[FREE_RING];
    size_t head = 0, tail = 0; /* pending: [head, tail), modulo the ring */
#define FREE_PUSH(node, asked)             \
 do {                                      \
  ring[tail % FREE_RING] = (node);         \
  array_asked[tail % FREE_RING] = (asked); \
  tail++;                                  \
 } while (0)
    FREE_PUSH(v, false);
    while (head != tail) {
        struct fq_value *n = ring[head % FREE_RING];
        bool asked = array_asked[head % FREE_RING];
        head++;
        if (n->type != FQ_V_MAP && n->type != FQ_V_SEQ) {
            free_leaf(n);
            continue;
        }
        if (!asked) { /* one slot is free: the one just left */
            __builtin_prefetch(n->type == FQ_V_MAP ? (void *)n->u.map.items :
                                                     (void *)n->u.seq.items);
            FREE_PUSH(n, true);
            continue;
        }
        size_t count = n->type == FQ_V_MAP ? n->u.map.n : n->u.seq.n;
        for (size_t i = 0; i < count; i++) {
            struct fq_value *c;
            if (n->type == FQ_V_MAP) {
                free_key(&n->u.map.items[i]);
                c = n->u.map.items[i].val;
            } else {
                c = n->u.seq.items[i];
            }
            if (!c)
                continue;
            if (tail - head == FREE_RING) {
                fq_value_free(c);
                continue;
            }
            __builtin_prefetch(c);
            FREE_PUSH(c, false);
        }
        if (n->type == FQ_V_MAP)
            fq_small_free(n->u.map.items,
                          n->u.map.cap * sizeof(*n->u.map.items));
        else
            fq_small_free(n->u.seq.items,
                          n->u.seq.cap * sizeof(*n->u.seq.items));
        fq_small_free(n, sizeof(*n));
    }
#undef FREE_PUSH
}

/* The deep copy; adds to *bytes what fq_value_bytes counts of the copy. */
static struct fq_value *clone_counted(const struct fq_value *v, size_t *bytes)
{
    if (!v)
        return NULL;
    struct fq_value *c = node(v->type);
    *bytes += sizeof(*c);
    c->line = v->line;
    c->col = v->col;
    switch (v->type) {
    case FQ_V_NULL:
        break;
    case FQ_V_BOOL:
        c->u.b = v->u.b;
        break;
    case FQ_V_NUM:
        c->u.num = v->u.num;
        set_raw(c, v->u.num.raw, strlen(v->u.num.raw));
        if (c->u.num.raw && c->u.num.raw != c->u.num.buf)
            *bytes += strlen(c->u.num.raw) + 1;
        break;
    case FQ_V_STR:
        set_text(c, v->u.str.s, v->u.str.len);
        if (c->u.str.s != c->u.str.buf)
            *bytes += c->u.str.len + 1;
        break;
    case FQ_V_SEQ:
        if (v->u.seq.n) {
            c->u.seq.items =
                fq_small_alloc(v->u.seq.n * sizeof(*c->u.seq.items));
            c->u.seq.cap = v->u.seq.n;
            *bytes += c->u.seq.cap * sizeof(*c->u.seq.items);
        }
        for (size_t i = 0; i < v->u.seq.n; i++)
            c->u.seq.items[i] = clone_counted(v->u.seq.items[i], bytes);
        c->u.seq.n = v->u.seq.n;
        break;
    case FQ_V_MAP:
        if (v->u.map.n) {
            c->u.map.items =
                fq_small_alloc(v->u.map.n * sizeof(*c->u.map.items));
            c->u.map.cap = v->u.map.n;
            *bytes += c->u.map.cap * sizeof(*c->u.map.items);
        }
        for (size_t i = 0; i < v->u.map.n; i++) {
            const struct fq_member *m = &v->u.map.items[i];
            c->u.map.items[i] = *m; /* position, klen, kpre, key */
            if (!m->well_known)
                c->u.map.items[i].key = dup_text(m->key, m->klen);
            c->u.map.items[i].val = clone_counted(m->val, bytes);
        }
        c->u.map.n = v->u.map.n;
        break;
    }
    return c;
}

struct fq_value *fq_value_clone(const struct fq_value *v)
{
    size_t bytes = 0;
    return clone_counted(v, &bytes);
}

struct fq_value *fq_value_clone_sized(const struct fq_value *v, size_t *bytes)
{
    *bytes = 0;
    return clone_counted(v, bytes);
}

size_t fq_value_bytes(const struct fq_value *v)
{
    if (!v)
        return 0;
    size_t b = sizeof(*v);
    switch (v->type) {
    case FQ_V_STR:
        if (v->u.str.s != v->u.str.buf)
            b += v->u.str.len + 1;
        break;
    case FQ_V_NUM:
        if (v->u.num.raw && v->u.num.raw != v->u.num.buf)
            b += strlen(v->u.num.raw) + 1;
        break;
    case FQ_V_SEQ:
        b += v->u.seq.cap * sizeof(*v->u.seq.items);
        for (size_t i = 0; i < v->u.seq.n; i++)
            b += fq_value_bytes(v->u.seq.items[i]);
        break;
    case FQ_V_MAP:
        b += v->u.map.cap * sizeof(*v->u.map.items);
        for (size_t i = 0; i < v->u.map.n; i++)
            b += fq_value_bytes(v->u.map.items[i].val);
        break;
    default:
        break;
    }
    return b;
}

/* "+007" and "7" are the same integer: compare sign and digits sans zeros. */
static bool same_int_text(const char *a, const char *b)
{
    bool na = *a == '-', nb = *b == '-';
    a += (*a == '-' || *a == '+');
    b += (*b == '-' || *b == '+');
    if (!all_in(a, "0123456789") || !all_in(b, "0123456789"))
        return false;
    while (*a == '0' && a[1])
        a++;
    while (*b == '0' && b[1])
        b++;
    if (!strcmp(a, "0") && !strcmp(b, "0"))
        return true;
    return na == nb && !strcmp(a, b);
}

static bool num_equal(const struct fq_value *a, const struct fq_value *b)
{
    if (!strcmp(a->u.num.raw, b->u.num.raw))
        return true;
    if (a->u.num.is_int && b->u.num.is_int)
        return a->u.num.i == b->u.num.i;
    const char *ra = a->u.num.raw, *rb = b->u.num.raw;
    if (all_in(ra + (*ra == '-' || *ra == '+'), "0123456789") &&
        all_in(rb + (*rb == '-' || *rb == '+'), "0123456789"))
        return same_int_text(ra, rb);
    if (isnan(a->u.num.d) && isnan(b->u.num.d))
        return true;
    return a->u.num.d == b->u.num.d;
}

static int member_cmp(const void *x, const void *y)
{
    const struct fq_member *const *a = x, *const *b = y;
    return strcmp((*a)->key, (*b)->key);
}

/* Members of m sorted by key (keys are unique); caller frees. */
static const struct fq_member **sorted_members(const struct fq_value *m)
{
    size_t n = m->u.map.n;
    const struct fq_member **p = fq_xmalloc((n ? n : 1) * sizeof(*p));
    for (size_t i = 0; i < n; i++)
        p[i] = &m->u.map.items[i];
    qsort(p, n, sizeof(*p), member_cmp);
    return p;
}

/*
 * Objects are unordered: same keys, equal values, any order. The common
 * case (same order) is one pass; otherwise small maps look keys up and big
 * ones compare sorted copies, so a hostile map costs n log n, not n^2.
 */
static bool map_equal(const struct fq_value *a, const struct fq_value *b)
{
    size_t n = a->u.map.n, i;
    if (n != b->u.map.n)
        return false;
    for (i = 0; i < n; i++) {
        const struct fq_member *x = &a->u.map.items[i];
        const struct fq_member *y = &b->u.map.items[i];
        if (!same_key(x, y->key, y->klen, y->kpre))
            break;
        if (!fq_value_equal(x->val, y->val))
            return false;
    }
    if (i == n)
        return true;
    if (n <= 16) {
        for (; i < n; i++) {
            const struct fq_member *x = &a->u.map.items[i];
            const struct fq_member *bm = find_n(b, x->key, x->klen, x->kpre);
            const struct fq_value *bv = bm ? bm->val : NULL;
            if (!bv || !fq_value_equal(x->val, bv))
                return false;
        }
        return true;
    }
    const struct fq_member **sa = sorted_members(a), **sb = sorted_members(b);
    bool eq = true;
    for (i = 0; i < n && eq; i++)
        eq = !strcmp(sa[i]->key, sb[i]->key) &&
             fq_value_equal(sa[i]->val, sb[i]->val);
    free(sa);
    free(sb);
    return eq;
}

size_t fq_value_nonfinite(const struct fq_value *v,
                          void (*each)(void *ctx, const struct fq_value *num),
                          void *ctx)
{
    if (!v)
        return 0;
    if (v->type == FQ_V_NUM) {
        if (v->u.num.is_int || isfinite(v->u.num.d))
            return 0;
        if (each)
            each(ctx, v);
        return 1;
    }
    size_t n = 0; /* the depth is the tree's, capped by the parsers */
    if (v->type == FQ_V_SEQ)
        for (size_t i = 0; i < v->u.seq.n; i++)
            n += fq_value_nonfinite(v->u.seq.items[i], each, ctx);
    else if (v->type == FQ_V_MAP)
        for (size_t i = 0; i < v->u.map.n; i++)
            n += fq_value_nonfinite(v->u.map.items[i].val, each, ctx);
    return n;
}

static void keep_first(void *ctx, const struct fq_value *num)
{
    const struct fq_value **first = ctx;
    if (!*first)
        *first = num;
}

int fq_value_refuse_nonfinite(const struct fq_value *v, const char *name,
                              struct fq_err *err)
{
    const struct fq_value *bad = NULL;
    if (!fq_value_nonfinite(v, keep_first, &bad))
        return 0;
    return fq_err_at(err, FQ_EPARSE, name, (int)bad->line, (int)bad->col, NULL,
                     "%s is not a number JSON can carry (use a finite "
                     "number, or quote it as a string)",
                     bad->u.num.raw ? bad->u.num.raw : "this number");
}

bool fq_value_equal(const struct fq_value *a, const struct fq_value *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->type != b->type)
        return false;
    switch (a->type) {
    case FQ_V_NULL:
        return true;
    case FQ_V_BOOL:
        return a->u.b == b->u.b;
    case FQ_V_NUM:
        return num_equal(a, b);
    case FQ_V_STR:
        return a->u.str.len == b->u.str.len &&
               !memcmp(a->u.str.s, b->u.str.s, a->u.str.len);
    case FQ_V_SEQ:
        if (a->u.seq.n != b->u.seq.n)
            return false;
        for (size_t i = 0; i < a->u.seq.n; i++)
            if (!fq_value_equal(a->u.seq.items[i], b->u.seq.items[i]))
                return false;
        return true;
    case FQ_V_MAP:
        return map_equal(a, b);
    }
    return false;
}

/* --- mappings ----------------------------------------------------------- */

/* fq_value_map_append for a key whose prefix the caller has. */
static struct fq_member *append(struct fq_value *m, const char *key,
                                size_t klen, uint64_t pre, struct fq_value *val)
{
    if (klen > INT32_MAX) { /* like running out of memory: see alloc.h */
        fprintf(stderr, "flexq: a mapping key of %zu bytes\n", klen);
        abort();
    }
    FQ_SMALL_GROW(m->u.map.items, m->u.map.cap, m->u.map.n + 1);
    struct fq_member *mem = &m->u.map.items[m->u.map.n++];
    const char *wk = well_known(key, klen, pre);
    mem->key = wk ? wk : dup_text(key, klen);
    mem->well_known = wk != NULL;
    mem->line = mem->col = 0;
    mem->val = val;
    mem->klen = (uint32_t)klen & 0x7fffffffu;
    mem->kpre = (uint32_t)pre;
    return mem;
}

struct fq_member *fq_value_map_append(struct fq_value *m, const char *key,
                                      size_t klen, struct fq_value *val)
{
    return append(m, key, klen, fq_key_prefix(key, klen), val);
}

/* Moves the cap-element array *items of `size`-byte elements, n of them
 * used, to a block of exactly n (none when n is 0). */
static void fit_items(void **items, size_t *cap, size_t n, size_t size)
{
    if (*cap <= n)
        return;
    void *exact = NULL;
    if (n) {
        exact = fq_small_alloc(n * size);
        memcpy(exact, *items, n * size);
    }
    fq_small_free(*items, *cap * size);
    *items = exact;
    *cap = n;
}

void fq_value_fit(struct fq_value *v)
{
    if (v && v->type == FQ_V_MAP)
        fit_items((void **)&v->u.map.items, &v->u.map.cap, v->u.map.n,
                  sizeof(*v->u.map.items));
    else if (v && v->type == FQ_V_SEQ)
        fit_items((void **)&v->u.seq.items, &v->u.seq.cap, v->u.seq.n,
                  sizeof(*v->u.seq.items));
}

struct fq_value *fq_map_get_n(const struct fq_value *m, const char *k, size_t n,
                              uint64_t pre)
{
    struct fq_member *mem = find_n(m, k, n, pre);
    return mem ? mem->val : NULL;
}

void fq_map_set_n(struct fq_value *m, const char *k, size_t n, uint64_t pre,
                  struct fq_value *val)
{
    if (!m || m->type != FQ_V_MAP) {
        fq_value_free(val);
        return;
    }
    struct fq_member *mem = find_n(m, k, n, pre);
    if (mem) {
        fq_value_free(mem->val);
        mem->val = val;
        return;
    }
    append(m, k, n, pre, val);
}

bool fq_map_del(struct fq_value *m, const char *key)
{
    struct fq_member *mem = find(m, key);
    if (!mem)
        return false;
    size_t i = (size_t)(mem - m->u.map.items);
    free_key(mem);
    fq_value_free(mem->val);
    memmove(&m->u.map.items[i], &m->u.map.items[i + 1],
            (m->u.map.n - i - 1) * sizeof(*mem));
    m->u.map.n--;
    return true;
}

struct fq_value *fq_map_take(struct fq_value *m, const char *key)
{
    struct fq_member *mem = find(m, key);
    if (!mem)
        return NULL;
    struct fq_value *v = mem->val;
    mem->val = NULL;
    fq_map_del(m, key); /* frees the key; the value is out */
    return v;
}

struct fq_value *fq_map_ensure_map_n(struct fq_value *m, const char *k,
                                     size_t n, uint64_t pre)
{
    struct fq_member *mem = find_n(m, k, n, pre);
    if (mem && mem->val && mem->val->type == FQ_V_MAP)
        return mem->val;
    struct fq_value *v = fq_value_map();
    if (mem) { /* replaces a non-map value */
        fq_value_free(mem->val);
        mem->val = v;
    } else {
        fq_map_set_n(m, k, n, pre, v); /* frees v when m is no map */
    }
    return v;
}

/* --- sequences ---------------------------------------------------------- */

void fq_seq_push(struct fq_value *s, struct fq_value *val)
{
    if (!s || s->type != FQ_V_SEQ) {
        fq_value_free(val);
        return;
    }
    FQ_SMALL_GROW(s->u.seq.items, s->u.seq.cap, s->u.seq.n + 1);
    s->u.seq.items[s->u.seq.n++] = val;
}

void fq_seq_remove(struct fq_value *s, size_t i)
{
    if (!s || s->type != FQ_V_SEQ || i >= s->u.seq.n)
        return;
    fq_value_free(s->u.seq.items[i]);
    memmove(&s->u.seq.items[i], &s->u.seq.items[i + 1],
            (s->u.seq.n - i - 1) * sizeof(*s->u.seq.items));
    s->u.seq.n--;
}

/* --- dotted paths ------------------------------------------------------- */

/* The length of the path segment at p (up to the first '.' or end). */
static inline size_t segment_len(const char *p, const char *end)
{
    const char *q = p;
    while (q < end && *q != '.')
        q++;
    return (size_t)(q - p);
}

/* The length of the path segment at p, and its prefix in *pre. With 8
 * bytes or more left, the first 8 are one load, which is the prefix and
 * is searched for a dot all at once: a byte of w ^ "........" is zero
 * where w holds a dot, and (x - 0x01..) & ~x & 0x80.. flags the zero
 * bytes of x (and maybe bytes above one, never below, so its lowest flag
 * is the first dot). A scan byte by byte and then the prefix took some 30
 * instructions a segment, run for every segment of every path. */
static inline size_t segment(const char *p, const char *end, uint64_t *pre)
{
    if (end - p < 8) {
        size_t n = segment_len(p, end);
        *pre = fq_key_prefix(p, n);
        return n;
    }
    uint64_t w = fq_key_load64(p);
    uint64_t x = w ^ 0x2e2e2e2e2e2e2e2eull; /* '.' is 0x2e */
    uint64_t dots = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
    if (!dots) {
        *pre = w;
        return 8 + segment_len(p + 8, end);
    }
    size_t n = (size_t)__builtin_ctzll(dots) / 8;
    *pre = n ? w & (~0ull >> (64 - 8 * n)) : 0;
    return n;
}

/* Each segment is looked up by its length and prefix like any key, so a
 * key that holds a '.' (a label such as "kubernetes.io/arch") is never
 * taken for a segment: a segment holds none. An empty segment ("a..b",
 * or a path ending in '.') names the empty key. */
struct fq_value *fq_value_path_n(const struct fq_value *v, const char *path,
                                 size_t len)
{
    const char *end = path + len;
    for (const char *p = path;; p++) { /* p++: past the dot */
        uint64_t pre;
        size_t n = segment(p, end, &pre);
        const struct fq_member *mem = find_n(v, p, n, pre);
        if (!mem)
            return NULL;
        v = mem->val;
        p += n;
        if (p == end)
            return (struct fq_value *)v;
    }
}

/* Gives the member of the n-byte key in map m the value val: mem, the
 * key's member when it is there (its old value freed), else a new one.
 * Returns the member. */
static struct fq_member *put(struct fq_value *m, struct fq_member *mem,
                             const char *key, size_t n, struct fq_value *val)
{
    if (!mem)
        return fq_value_map_append(m, key, n, val);
    fq_value_free(mem->val);
    mem->val = val;
    return mem;
}

void fq_value_set_path(struct fq_value *v, const char *path,
                       struct fq_value *val)
{
    if (!v || v->type != FQ_V_MAP || !path) {
        fq_value_free(val);
        return;
    }
    for (const char *p = path;;) {
        size_t n = strcspn(p, ".");
        struct fq_member *mem = find_n(v, p, n, fq_key_prefix(p, n));
        if (!p[n]) {
            put(v, mem, p, n, val);
            return;
        }
        if (!mem || !mem->val || mem->val->type != FQ_V_MAP) /* replaced */
            mem = put(v, mem, p, n, fq_value_map());
        v = mem->val;
        p += n + 1;
    }
}

/* --- RFC 7386 merge patch --------------------------------------------- */

/* The member of `key` through pos[] (member indices sorted by key), or
 * NULL. */
static struct fq_member *sorted_find(struct fq_member *items, const size_t *pos,
                                     size_t n, const char *key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(items[pos[mid]].key, key);
        if (c == 0)
            return &items[pos[mid]];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/*
 * Merges the members of map `patch` into map `t`. Small maps look keys up
 * one by one; when both are big the target's members are sorted once and
 * binary-searched, deleted members are marked (key NULL) and compacted at
 * the end, and new members are appended (patch keys are unique, so a new
 * member is never looked up again). Either way the cost stays n log n.
 */
static void merge_members(struct fq_value *t, const struct fq_value *patch)
{
    size_t tn = t->u.map.n;
    bool big = tn > 16 && patch->u.map.n > 16;
    size_t *pos = NULL; /* indices, not pointers: items may move */
    if (big) {
        const struct fq_member **sorted = sorted_members(t);
        pos = fq_xmalloc(tn * sizeof(*pos));
        for (size_t i = 0; i < tn; i++)
            pos[i] = (size_t)(sorted[i] - t->u.map.items);
        free(sorted);
    }
    bool deleted = false;
    for (size_t i = 0; i < patch->u.map.n; i++) {
        const struct fq_member *pm = &patch->u.map.items[i];
        struct fq_member *tm = NULL;
        if (big) {
            tm = sorted_find(t->u.map.items, pos, tn, pm->key);
        } else {
            tm = find_n(t, pm->key, pm->klen, pm->kpre);
        }
        if (pm->val->type == FQ_V_NULL) {
            if (tm && big) { /* mark; compacted below */
                fq_value_free(tm->val);
                tm->val = NULL;
                deleted = true;
            } else if (tm) {
                fq_map_del(t, pm->key);
            }
            continue;
        }
        if (tm) {
            fq_value_merge_patch(&tm->val, pm->val);
            continue;
        }
        struct fq_value *nv = NULL;
        fq_value_merge_patch(&nv, pm->val); /* drops nested nulls */
        /* The whole prefix: a member keeps only its low half, and append
         * needs all of it to find a well-known key. */
        uint64_t pre = fq_key_prefix(pm->key, pm->klen);
        if (big) {
            append(t, pm->key, pm->klen, pre, nv);
        } else {
            fq_map_set_n(t, pm->key, pm->klen, pre, nv);
        }
    }
    if (deleted) {
        size_t w = 0;
        for (size_t r = 0; r < t->u.map.n; r++) {
            if (!t->u.map.items[r].val) {
                free_key(&t->u.map.items[r]);
                continue;
            }
            t->u.map.items[w++] = t->u.map.items[r];
        }
        t->u.map.n = w;
    }
    free(pos);
}

void fq_value_merge_patch(struct fq_value **target,
                          const struct fq_value *patch)
{
    if (!patch)
        return;
    if (patch->type != FQ_V_MAP) {
        fq_value_free(*target);
        *target = fq_value_clone(patch);
        return;
    }
    if (!*target || (*target)->type != FQ_V_MAP) {
        fq_value_free(*target);
        *target = fq_value_map();
    }
    merge_members(*target, patch);
}

/* --- duplicate keys, for the JSON and YAML readers -------------------- */

struct keyref {
    const char *key;
    size_t idx;
};

static int keyref_cmp(const void *a, const void *b)
{
    const struct keyref *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

size_t fq_value_map_find_duplicate(const struct fq_value *m)
{
    size_t n = m->u.map.n, best = n;
    if (n <= 8) { /* small maps: pairwise is cheaper than sorting */
        const struct fq_member *it = m->u.map.items;
        for (size_t j = 1; j < n; j++)
            for (size_t i = 0; i < j; i++)
                if (same_key(&it[i], it[j].key, it[j].klen, it[j].kpre))
                    return j;
        return n;
    }
    struct keyref *kr = fq_xmalloc(n * sizeof(*kr));
    for (size_t i = 0; i < n; i++) {
        kr[i].key = m->u.map.items[i].key;
        kr[i].idx = i;
    }
    qsort(kr, n, sizeof(*kr), keyref_cmp);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(kr[i - 1].key, kr[i].key) && kr[i].idx < best)
            best = kr[i].idx;
    free(kr);
    return best;
}

size_t fq_utf8_decode(const unsigned char *p, const unsigned char *end,
                      unsigned *cp)
{
    unsigned c = p[0];
    size_t n;
    unsigned min;
    if (c < 0x80) {
        if (cp)
            *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if ((size_t)(end - p) < n)
        return 0;
    unsigned v = c & (0x3F >> (n - 1));
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    if (cp)
        *cp = v;
    return n;
}
