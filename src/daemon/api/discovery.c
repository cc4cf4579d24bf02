/*
 * discovery.c - what kubectl and client-go learn about the served kinds
 * beyond the legacy APIResourceList of resources.c: the `categories` of each
 * kind (`kubectl get all`), aggregated discovery (one
 * APIGroupDiscoveryList for /api or /apis, apidiscovery.k8s.io v2 and
 * v2beta1, as kubectl 1.27+ asks for it with its Accept header), and
 * /version in Kubernetes' shape.
 *
 * How it works: everything is derived from the kind registry (kinds.h),
 * so a kind added there shows up in every form of discovery at once.
 * The Accept header is read media type by media type; the first one that
 * names g=apidiscovery.k8s.io with a version flexq speaks wins, and an
 * Accept without one gets the legacy documents from resources.c.
 *
 * What it does not do: resource-level discovery for API groups served by
 * other modules' prefix routes (the visibility API lists its own), and
 * the protobuf form of discovery (JSON is always acceptable to clients).
 */
#include "api/discovery.h"

#include <string.h>
#include <strings.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/paths.h"

/* The Kubernetes release whose API shapes flexqd serves. kubectl warns on
 * `kubectl version` when its minor is more than one away; 1.32 is the
 * Cloud SDK's default kubectl, so 1.31 to 1.33 are quiet. */
#define KUBE_MAJOR "1"
#define KUBE_MINOR "32"

const char *const *fq_discovery_categories(enum fq_kind k)
{
    static const char *const all[] = {"all", NULL};
    switch (k) {
    case FQ_KIND_POD:
    case FQ_KIND_JOB:
    case FQ_KIND_RAYJOB:
    case FQ_KIND_RAYCLUSTER:
    case FQ_KIND_JOBSET:
    case FQ_KIND_PYTORCHJOB:
    case FQ_KIND_MPIJOB:
    case FQ_KIND_LEADERWORKERSET:
    case FQ_KIND_TRAINJOB:
    case FQ_KIND_SERVICE:
        return all;
    default:
        return NULL;
    }
}

static const char *const VERBS[] = {"create", "delete", "get",   "list",
                                    "patch",  "update", "watch", NULL};
static const char *const STATUS_VERBS[] = {"get", "patch", "update", NULL};

static void put_strs(struct fq_value *m, const char *key, const char *const *s)
{
    struct fq_value *seq = fq_value_seq();
    for (; s && *s; s++)
        fq_seq_push(seq, fq_value_str(*s));
    fq_map_set(m, key, seq);
}

static struct fq_value *gvk(const char *group, const char *version,
                            const char *kind)
{
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "group", fq_value_str(group));
    fq_map_set(v, "version", fq_value_str(version));
    fq_map_set(v, "kind", fq_value_str(kind));
    return v;
}

static bool serves(const struct fq_kind_info *ki, const char *group,
                   const char *version)
{
    return !strcmp(ki->group, group) &&
           (!strcmp(ki->version, version) ||
            (ki->alt_version && !strcmp(ki->alt_version, version)));
}

/* One APIVersionDiscovery: the resources of group/version. */
static struct fq_value *version_doc(const char *group, const char *version)
{
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "version", fq_value_str(version));
    struct fq_value *res = fq_value_seq();
    for (int k = 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_kind_info *ki = fq_kind_info((enum fq_kind)k);
        if (!serves(ki, group, version))
            continue;
        struct fq_value *e = fq_value_map();
        fq_map_set(e, "resource", fq_value_str(ki->plural));
        fq_map_set(e, "responseKind", gvk(group, version, ki->name));
        fq_map_set(e, "scope",
                   fq_value_str(ki->namespaced ? "Namespaced" : "Cluster"));
        fq_map_set(e, "singularResource", fq_value_str(ki->singular));
        put_strs(e, "verbs", VERBS);
        if (ki->shortnames[0])
            put_strs(e, "shortNames", ki->shortnames);
        if (fq_discovery_categories(ki->kind))
            put_strs(e, "categories", fq_discovery_categories(ki->kind));
        if (ki->has_status) {
            struct fq_value *subs = fq_value_seq();
            struct fq_value *s = fq_value_map();
            fq_map_set(s, "subresource", fq_value_str("status"));
            fq_map_set(s, "responseKind", gvk(group, version, ki->name));
            put_strs(s, "verbs", STATUS_VERBS);
            fq_seq_push(subs, s);
            fq_map_set(e, "subresources", subs);
        }
        fq_seq_push(res, e);
    }
    fq_map_set(v, "resources", res);
    fq_map_set(v, "freshness", fq_value_str("Current"));
    return v;
}

/* Adds version `ver` of `group` to the group's entry, once. */
static void add_version(struct fq_value *versions, const char *group,
                        const char *ver)
{
    for (size_t i = 0; i < fq_value_len(versions); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(versions, i), "version", ""),
                    ver))
            return;
    fq_seq_push(versions, version_doc(group, ver));
}

struct fq_value *fq_discovery_aggregated(bool core, const char *av)
{
    struct fq_value *out = fq_value_map();
    fq_map_set(out, "kind", fq_value_str("APIGroupDiscoveryList"));
    fq_map_set(out, "apiVersion", fq_value_strf("apidiscovery.k8s.io/%s", av));
    fq_map_set(out, "metadata", fq_value_map());
    struct fq_value *items = fq_value_seq();
    for (int k = 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_kind_info *ki = fq_kind_info((enum fq_kind)k);
        if (core != !*ki->group)
            continue;
        struct fq_value *g = NULL;
        for (size_t i = 0; i < fq_value_len(items) && !g; i++)
            if (!strcmp(fq_meta_name(fq_seq_at(items, i)), ki->group))
                g = fq_seq_at(items, i);
        if (!g) {
            g = fq_value_map();
            struct fq_value *md = fq_map_ensure_map(g, "metadata");
            if (*ki->group)
                fq_map_set(md, "name", fq_value_str(ki->group));
            fq_map_set(g, "versions", fq_value_seq());
            fq_seq_push(items, g);
        }
        struct fq_value *vs = fq_map_get(g, "versions");
        add_version(vs, ki->group, ki->version);
        if (ki->alt_version)
            add_version(vs, ki->group, ki->alt_version);
    }
    fq_map_set(out, "items", items);
    return out;
}

/* True if one media type of Accept asks for APIGroupDiscoveryList in
 * version `v`. Parameters may come in any order, with spaces. */
static bool media_wants(const char *mt, size_t len, const char *v)
{
    bool g = false, as = false, ver = false;
    const char *end = mt + len;
    const char *p = memchr(mt, ';', len);
    while (p && p < end) {
        p++;
        while (p < end && *p == ' ')
            p++;
        const char *q = memchr(p, ';', (size_t)(end - p));
        size_t n = (size_t)((q ? q : end) - p);
        while (n && p[n - 1] == ' ')
            n--;
        if (n == strlen("g=apidiscovery.k8s.io") &&
            !strncmp(p, "g=apidiscovery.k8s.io", n))
            g = true;
        else if (n == strlen("as=APIGroupDiscoveryList") &&
                 !strncmp(p, "as=APIGroupDiscoveryList", n))
            as = true;
        else if (n == 2 + strlen(v) && !strncmp(p, "v=", 2) &&
                 !strncmp(p + 2, v, n - 2))
            ver = true;
        p = q;
    }
    return g && as && ver;
}

const char *fq_discovery_accepts(const char *accept)
{
    if (!accept || strlen(accept) > 4096)
        return NULL;
    const char *p = accept;
    while (*p) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (media_wants(p, n, "v2"))
            return "v2";
        if (media_wants(p, n, "v2beta1"))
            return "v2beta1";
        if (!c)
            break;
        p = c + 1;
    }
    return NULL;
}

struct fq_value *fq_discovery_version(const char *flexq_version)
{
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "major", fq_value_str(KUBE_MAJOR));
    fq_map_set(v, "minor", fq_value_str(KUBE_MINOR));
    fq_map_set(v, "gitVersion",
               fq_value_strf("v" KUBE_MAJOR "." KUBE_MINOR ".0-flexq.%s",
                             flexq_version));
    fq_map_set(v, "gitCommit", fq_value_str(""));
    fq_map_set(v, "gitTreeState", fq_value_str("clean"));
    fq_map_set(v, "buildDate", fq_value_str("2026-01-01T00:00:00Z"));
    fq_map_set(v, "goVersion", fq_value_str("none (flexqd is C)"));
    fq_map_set(v, "compiler", fq_value_str("cc"));
    fq_map_set(v, "platform", fq_value_str("linux/amd64"));
    fq_map_set(v, "flexq", fq_value_str(flexq_version));
    return v;
}
