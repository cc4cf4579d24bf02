/*
 * gke.c - GKE's Cluster and NodePool JSON and flexq's objects, both ways
 * (gke.h has the field map).
 *
 * How it works: fq_gke_pool_from_api walks the fields gcloud sends and
 * copies the ones a flexq NodePool has, checking each one's type and
 * enum (GKE's taint effects NO_SCHEDULE..., reservation types
 * NO_RESERVATION...) and naming the field on error; fields flexq has no
 * use for (oauthScopes, management, upgradeSettings, diskSizeGb ...) are
 * accepted and not kept. fq_gke_pool_to_api and fq_gke_cluster_to_api
 * build the answers, with the fields gcloud's tables and formats read.
 *
 * What it does not do: store anything, check machine types or
 * topologies (nodepool.c does when the pool is stored), talk HTTP.
 */
#include "flexq/gke.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/nodepool.h"
#include "flexq/paths.h"

int fq_gke_check_name(const char *what, const char *name, struct fq_err *err)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0)
        return fq_err_set(err, FQ_EINVAL, "%s: required", what);
    if (n > FQ_GKE_MAX_NAME)
        return fq_err_set(err, FQ_EINVAL,
                          "%s: \"%.*s...\" is longer than %d characters", what,
                          FQ_GKE_MAX_NAME, name, FQ_GKE_MAX_NAME);
    bool ok = name[0] >= 'a' && name[0] <= 'z' && name[n - 1] != '-';
    for (size_t i = 0; ok && i < n; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') ||
             (name[i] >= '0' && name[i] <= '9') || name[i] == '-';
    if (!ok)
        return fq_err_set(err, FQ_EINVAL,
                          "%s: \"%s\" must start with a lowercase letter, "
                          "hold only lowercase letters, digits and '-', and "
                          "not end with '-'",
                          what, name);
    return 0;
}

int fq_gke_cluster_validate(const struct fq_value *obj, struct fq_err *err)
{
    int rc = fq_gke_check_name("metadata.name",
                               fq_value_path_str(obj, FQ_META_NAME, NULL), err);
    if (rc < 0)
        return rc;
    const char *keys[] = {"spec.project", "spec.location"};
    for (size_t i = 0; i < 2; i++) {
        const char *s = fq_value_path_str(obj, keys[i], NULL);
        if (!s || !*s || strlen(s) > 100)
            return fq_err_set(err, FQ_EINVAL,
                              "%s: required, a string of at most 100 "
                              "characters",
                              keys[i]);
    }
    return 0;
}

/* --- GKE -> flexq --------------------------------------------------------- */

struct conv {
    struct fq_err *err;
    int rc;
};

/* The member `key` of map `m` if it has type `t` (or is absent: NULL);
 * records an error naming `where` otherwise. */
static const struct fq_value *member(struct conv *c, const struct fq_value *m,
                                     const char *key, enum fq_vtype t,
                                     const char *where)
{
    const struct fq_value *v = m ? fq_map_get(m, key) : NULL;
    if (!v || v->type == FQ_V_NULL || c->rc < 0)
        return NULL;
    if (v->type != t) {
        static const char *const names[] = {
            [FQ_V_NULL] = "null",    [FQ_V_BOOL] = "a boolean",
            [FQ_V_NUM] = "a number", [FQ_V_STR] = "a string",
            [FQ_V_SEQ] = "a list",   [FQ_V_MAP] = "an object"};
        c->rc = fq_err_set(c->err, FQ_EINVAL, "%s.%s: must be %s", where, key,
                           names[t]);
        return NULL;
    }
    return v;
}

static void copy_bool(struct conv *c, const struct fq_value *m, const char *key,
                      const char *where, struct fq_value *dst, const char *dkey)
{
    const struct fq_value *v = member(c, m, key, FQ_V_BOOL, where);
    if (v)
        fq_map_set(dst, dkey, fq_value_bool(v->u.b));
}

/* A count: a JSON number, or (proto3 int64 in JSON) a string of digits. */
static void copy_count(struct conv *c, const struct fq_value *m,
                       const char *key, const char *where, struct fq_value *dst,
                       const char *dkey)
{
    const struct fq_value *v = m ? fq_map_get(m, key) : NULL;
    if (!v || c->rc < 0)
        return;
    long long n = -1;
    if (v->type == FQ_V_NUM && v->u.num.is_int)
        n = v->u.num.i;
    else if (v->type == FQ_V_STR && v->u.str.len > 0 && v->u.str.len < 7 &&
             strspn(v->u.str.s, "0123456789") == v->u.str.len)
        n = atoll(v->u.str.s);
    if (n < 0 || n > 100000) {
        c->rc = fq_err_set(c->err, FQ_EINVAL,
                           "%s.%s: must be a whole number from 0 to 100000",
                           where, key);
        return;
    }
    fq_map_set(dst, dkey, fq_value_int(n));
}

static void copy_labels(struct conv *c, const struct fq_value *cfg,
                        struct fq_value *spec)
{
    const struct fq_value *l =
        member(c, cfg, "labels", FQ_V_MAP, "nodePool.config");
    if (!l)
        return;
    if (fq_value_len(l) > FQ_GKE_MAX_ITEMS) {
        c->rc = fq_err_set(c->err, FQ_EINVAL,
                           "nodePool.config.labels: more than %d labels",
                           FQ_GKE_MAX_ITEMS);
        return;
    }
    struct fq_value *out = fq_value_map();
    for (size_t i = 0; i < l->u.map.n; i++) {
        const struct fq_value *v = l->u.map.items[i].val;
        if (v->type != FQ_V_STR) {
            c->rc = fq_err_set(c->err, FQ_EINVAL,
                               "nodePool.config.labels.%s: must be a string",
                               l->u.map.items[i].key);
            break;
        }
        fq_map_set(out, l->u.map.items[i].key, fq_value_str(v->u.str.s));
    }
    fq_map_set(spec, "labels", out);
}

/* GKE's taint effects and Kubernetes' spelling of them. */
static const char *const EFFECTS[][2] = {
    {"NO_SCHEDULE", "NoSchedule"},
    {"PREFER_NO_SCHEDULE", "PreferNoSchedule"},
    {"NO_EXECUTE", "NoExecute"},
};

static void copy_taints(struct conv *c, const struct fq_value *cfg,
                        struct fq_value *spec)
{
    const struct fq_value *t =
        member(c, cfg, "taints", FQ_V_SEQ, "nodePool.config");
    if (!t)
        return;
    if (fq_value_len(t) > FQ_GKE_MAX_ITEMS) {
        c->rc = fq_err_set(c->err, FQ_EINVAL,
                           "nodePool.config.taints: more than %d taints",
                           FQ_GKE_MAX_ITEMS);
        return;
    }
    struct fq_value *out = fq_value_seq();
    fq_map_set(spec, "taints", out);
    for (size_t i = 0; i < fq_value_len(t) && c->rc == 0; i++) {
        const struct fq_value *x = fq_seq_at(t, i);
        char where[64];
        snprintf(where, sizeof(where), "nodePool.config.taints[%zu]", i);
        if (x->type != FQ_V_MAP) {
            c->rc =
                fq_err_set(c->err, FQ_EINVAL, "%s: must be an object", where);
            return;
        }
        const struct fq_value *k = member(c, x, "key", FQ_V_STR, where);
        const struct fq_value *v = member(c, x, "value", FQ_V_STR, where);
        const struct fq_value *e = member(c, x, "effect", FQ_V_STR, where);
        if (c->rc < 0)
            return;
        const char *eff = NULL;
        for (size_t j = 0; e && j < 3; j++)
            if (!strcmp(e->u.str.s, EFFECTS[j][0]) ||
                !strcmp(e->u.str.s, EFFECTS[j][1]))
                eff = EFFECTS[j][1];
        if (!k || !*k->u.str.s || !eff) {
            c->rc = fq_err_set(c->err, FQ_EINVAL,
                               "%s: needs a key and an effect of "
                               "NO_SCHEDULE, PREFER_NO_SCHEDULE or "
                               "NO_EXECUTE",
                               where);
            return;
        }
        struct fq_value *o = fq_value_map();
        fq_map_set(o, "key", fq_value_str(k->u.str.s));
        if (v)
            fq_map_set(o, "value", fq_value_str(v->u.str.s));
        fq_map_set(o, "effect", fq_value_str(eff));
        fq_seq_push(out, o);
    }
}

static void copy_reservation(struct conv *c, const struct fq_value *cfg,
                             struct fq_value *spec)
{
    const struct fq_value *ra =
        member(c, cfg, "reservationAffinity", FQ_V_MAP, "nodePool.config");
    const struct fq_value *t = member(c, ra, "consumeReservationType", FQ_V_STR,
                                      "nodePool.config."
                                      "reservationAffinity");
    if (!t)
        return;
    static const char *const map[][2] = {
        {"NO_RESERVATION", "none"},
        {"ANY_RESERVATION", "any"},
        {"SPECIFIC_RESERVATION", "specific"},
    };
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(t->u.str.s, map[i][0])) {
            fq_map_set(spec, "reservationAffinity", fq_value_str(map[i][1]));
            return;
        }
    if (strcmp(t->u.str.s, "UNSPECIFIED"))
        c->rc = fq_err_set(c->err, FQ_EINVAL,
                           "nodePool.config.reservationAffinity."
                           "consumeReservationType: \"%s\" is not "
                           "NO_RESERVATION, ANY_RESERVATION or "
                           "SPECIFIC_RESERVATION",
                           t->u.str.s);
}

int fq_gke_pool_from_api(const struct fq_value *np, const char *cluster,
                         const char *location, struct fq_value **out,
                         struct fq_err *err)
{
    *out = NULL;
    if (!np || np->type != FQ_V_MAP)
        return fq_err_set(err, FQ_EINVAL, "nodePool: must be an object");
    struct conv c = {err, 0};
    const struct fq_value *name = member(&c, np, "name", FQ_V_STR, "nodePool");
    if (c.rc < 0)
        return c.rc;
    int rc =
        fq_gke_check_name("nodePool.name", name ? name->u.str.s : NULL, err);
    if (rc < 0)
        return rc;
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "apiVersion", fq_value_str("flexq.dev/v1alpha1"));
    fq_map_set(o, "kind", fq_value_str("NodePool"));
    fq_map_set(fq_map_ensure_map(o, "metadata"), "name",
               fq_value_str(name->u.str.s));
    struct fq_value *spec = fq_map_ensure_map(o, "spec");
    if (cluster)
        fq_map_set(spec, "cluster", fq_value_str(cluster));

    const struct fq_value *cfg = member(&c, np, "config", FQ_V_MAP, "nodePool");
    const struct fq_value *mt =
        member(&c, cfg, "machineType", FQ_V_STR, "nodePool.config");
    fq_map_set(spec, "machineType",
               fq_value_str(mt && *mt->u.str.s ? mt->u.str.s :
                                                 FQ_NODEPOOL_DEFAULT_MACHINE));
    const struct fq_value *pp =
        member(&c, np, "placementPolicy", FQ_V_MAP, "nodePool");
    const struct fq_value *topo =
        member(&c, pp, "tpuTopology", FQ_V_STR, "nodePool.placementPolicy");
    if (topo && *topo->u.str.s)
        fq_map_set(spec, "tpuTopology", fq_value_str(topo->u.str.s));

    const struct fq_value *locs =
        member(&c, np, "locations", FQ_V_SEQ, "nodePool");
    const struct fq_value *loc0 = locs ? fq_seq_at(locs, 0) : NULL;
    if (loc0 && loc0->type != FQ_V_STR)
        c.rc = fq_err_set(err, FQ_EINVAL,
                          "nodePool.locations[0]: must be a string");
    const char *loc = loc0 && loc0->type == FQ_V_STR ? loc0->u.str.s : location;
    if (loc && *loc)
        fq_map_set(spec, "location", fq_value_str(loc));

    copy_count(&c, np, "initialNodeCount", "nodePool", spec,
               "initialNodeCount");
    if (c.rc == 0 && !fq_map_get(spec, "initialNodeCount"))
        fq_map_set(spec, "initialNodeCount", fq_value_int(0));
    const struct fq_value *as =
        member(&c, np, "autoscaling", FQ_V_MAP, "nodePool");
    if (as) {
        struct fq_value *das = fq_map_ensure_map(spec, "autoscaling");
        copy_bool(&c, as, "enabled", "nodePool.autoscaling", das, "enabled");
        copy_count(&c, as, "minNodeCount", "nodePool.autoscaling", das,
                   "minNodeCount");
        copy_count(&c, as, "maxNodeCount", "nodePool.autoscaling", das,
                   "maxNodeCount");
        copy_count(&c, as, "totalMinNodeCount", "nodePool.autoscaling", das,
                   "totalMinNodeCount");
        copy_count(&c, as, "totalMaxNodeCount", "nodePool.autoscaling", das,
                   "totalMaxNodeCount");
        const struct fq_value *lp =
            member(&c, as, "locationPolicy", FQ_V_STR, "nodePool.autoscaling");
        if (lp)
            fq_map_set(das, "locationPolicy", fq_value_str(lp->u.str.s));
    }
    copy_bool(&c, cfg, "flexStart", "nodePool.config", spec, "flexStart");
    copy_bool(&c, cfg, "spot", "nodePool.config", spec, "spot");
    const struct fq_value *qp =
        member(&c, np, "queuedProvisioning", FQ_V_MAP, "nodePool");
    if (qp)
        copy_bool(&c, qp, "enabled", "nodePool.queuedProvisioning",
                  fq_map_ensure_map(spec, "queuedProvisioning"), "enabled");
    copy_reservation(&c, cfg, spec);
    copy_labels(&c, cfg, spec);
    copy_taints(&c, cfg, spec);
    if (c.rc < 0) {
        fq_value_free(o);
        return c.rc;
    }
    *out = o;
    return 0;
}

/* --- flexq -> GKE --------------------------------------------------------- */

struct fq_value *fq_gke_pool_to_api(const struct fq_value *pool,
                                    const char *self)
{
    const struct fq_value *spec = fq_map_get(pool, "spec");
    const char *name = fq_meta_name(pool);
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "name", fq_value_str(name));
    struct fq_value *cfg = fq_map_ensure_map(v, "config");
    fq_map_set(cfg, "machineType",
               fq_value_str(fq_value_path_str(spec, "machineType", "")));
    fq_map_set(cfg, "diskSizeGb", fq_value_int(100));
    fq_map_set(cfg, "diskType", fq_value_str("pd-balanced"));
    fq_map_set(cfg, "imageType", fq_value_str("COS_CONTAINERD"));
    if (fq_value_path_bool(spec, "flexStart", false))
        fq_map_set(cfg, "flexStart", fq_value_bool(true));
    if (fq_value_path_bool(spec, "spot", false))
        fq_map_set(cfg, "spot", fq_value_bool(true));
    const char *ra = fq_value_path_str(spec, "reservationAffinity", NULL);
    if (ra)
        fq_map_set(fq_map_ensure_map(cfg, "reservationAffinity"),
                   "consumeReservationType",
                   fq_value_str(!strcmp(ra, "none") ? "NO_RESERVATION" :
                                !strcmp(ra, "any")  ? "ANY_RESERVATION" :
                                                      "SPECIFIC_RESERVATION"));
    if (fq_map_get(spec, "labels"))
        fq_map_set(cfg, "labels", fq_value_clone(fq_map_get(spec, "labels")));
    const struct fq_value *taints = fq_map_get(spec, "taints");
    if (taints && taints->type == FQ_V_SEQ) {
        struct fq_value *ts = fq_value_seq();
        for (size_t i = 0; i < fq_value_len(taints); i++) {
            const struct fq_value *t = fq_seq_at(taints, i);
            struct fq_value *o = fq_value_map();
            fq_map_set(o, "key", fq_value_str(fq_value_path_str(t, "key", "")));
            if (fq_map_get(t, "value"))
                fq_map_set(o, "value",
                           fq_value_str(fq_value_path_str(t, "value", "")));
            const char *eff = fq_value_path_str(t, "effect", "");
            for (size_t j = 0; j < 3; j++)
                if (!strcmp(eff, EFFECTS[j][1]))
                    eff = EFFECTS[j][0];
            fq_map_set(o, "effect", fq_value_str(eff));
            fq_seq_push(ts, o);
        }
        fq_map_set(cfg, "taints", ts);
    }
    fq_map_set(v, "initialNodeCount",
               fq_value_int(fq_value_path_int(spec, "initialNodeCount", 0)));
    const struct fq_value *as = fq_map_get(spec, "autoscaling");
    if (as && fq_value_path_bool(as, "enabled", false)) {
        struct fq_value *a = fq_value_clone(as);
        fq_map_set(v, "autoscaling", a);
    }
    const char *topo = fq_value_path_str(spec, "tpuTopology", NULL);
    if (topo)
        fq_map_set(fq_map_ensure_map(v, "placementPolicy"), "tpuTopology",
                   fq_value_str(topo));
    if (fq_value_path_bool(spec, FQ_POOL_QUEUED_PROVISIONING, false))
        fq_map_set(fq_map_ensure_map(v, "queuedProvisioning"), "enabled",
                   fq_value_bool(true));
    struct fq_value *locs = fq_value_seq();
    fq_seq_push(locs, fq_value_str(fq_value_path_str(
                          spec, "location", FQ_NODEPOOL_DEFAULT_ZONE)));
    fq_map_set(v, "locations", locs);
    struct fq_value *mg = fq_map_ensure_map(v, "management");
    fq_map_set(mg, "autoRepair", fq_value_bool(true));
    fq_map_set(mg, "autoUpgrade", fq_value_bool(true));
    fq_map_set(v, "podIpv4CidrSize", fq_value_int(24));
    const struct fq_value *st = fq_map_get(pool, "status");
    /* flexq's phases (Running, Provisioning, ...) in GKE's spelling. */
    const char *phase = fq_value_path_str(st, "phase", "");
    char up[32];
    size_t i = 0;
    for (; phase[i] && i + 1 < sizeof(up); i++)
        up[i] = (char)(phase[i] >= 'a' && phase[i] <= 'z' ? phase[i] - 32 :
                                                            phase[i]);
    up[i] = '\0';
    fq_map_set(v, "status", fq_value_str(i ? up : "RUNNING"));
    if (st) {
        fq_map_set(v, "currentNodeCount",
                   fq_value_int(fq_value_path_int(st, "nodeCount", 0)));
        const char *msg = NULL;
        const struct fq_value *conds = fq_map_get(st, "conditions");
        for (size_t j = 0; j < fq_value_len(conds); j++) {
            const struct fq_value *cd = fq_seq_at(conds, j);
            if (!strcmp(fq_value_path_str(cd, "status", ""), "True") &&
                fq_value_path_str(cd, "message", NULL))
                msg = fq_value_path_str(cd, "message", NULL);
        }
        if (msg && strcmp(up, "RUNNING") && i)
            fq_map_set(v, "statusMessage", fq_value_str(msg));
    }
    if (self)
        fq_map_set(v, "selfLink", fq_value_strf("%s/nodePools/%s", self, name));
    return v;
}

/* "1.34" -> "1.34.1-gke.1000": a full GKE version for a requested one. */
static struct fq_value *full_version(const char *want)
{
    int major = 1, minor = 33;
    if (want && sscanf(want, "%d.%d", &major, &minor) != 2) {
        major = 1;
        minor = 33;
    }
    return fq_value_strf("%d.%d.1-gke.1000", major, minor);
}

struct fq_value *fq_gke_cluster_to_api(const struct fq_value *cluster,
                                       struct fq_value *pools,
                                       const char *endpoint, const char *ca_b64,
                                       const char *self)
{
    const struct fq_value *spec = fq_map_get(cluster, "spec");
    const char *loc = fq_value_path_str(spec, "location", "");
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "name", fq_value_str(fq_meta_name(cluster)));
    fq_map_set(v, "location", fq_value_str(loc));
    fq_map_set(v, "zone", fq_value_str(loc));
    struct fq_value *locs = fq_value_seq();
    fq_seq_push(locs, fq_value_str(loc));
    fq_map_set(v, "locations", locs);
    const char *want = fq_value_path_str(spec, "initialClusterVersion", NULL);
    if (want)
        fq_map_set(v, "initialClusterVersion", fq_value_str(want));
    fq_map_set(v, "currentMasterVersion", full_version(want));
    fq_map_set(v, "currentNodeVersion", full_version(want));
    if (endpoint)
        fq_map_set(v, "endpoint", fq_value_str(endpoint));
    if (ca_b64)
        fq_map_set(fq_map_ensure_map(v, "masterAuth"), "clusterCaCertificate",
                   fq_value_str(ca_b64));
    const char *keep[] = {"addonsConfig", "nodePoolDefaults"};
    for (size_t i = 0; i < 2; i++)
        if (fq_map_get(spec, keep[i]))
            fq_map_set(v, keep[i], fq_value_clone(fq_map_get(spec, keep[i])));
    fq_map_set(v, "network", fq_value_str("default"));
    fq_map_set(v, "subnetwork", fq_value_str("default"));
    fq_map_set(v, "clusterIpv4Cidr", fq_value_str("10.4.0.0/14"));
    fq_map_set(v, "servicesIpv4Cidr", fq_value_str("34.118.224.0/20"));
    fq_map_set(v, "loggingService",
               fq_value_str("logging.googleapis.com/kubernetes"));
    fq_map_set(v, "monitoringService",
               fq_value_str("monitoring.googleapis.com/kubernetes"));
    fq_map_set(fq_map_ensure_map(v, "releaseChannel"), "channel",
               fq_value_str("REGULAR"));
    const char *created = fq_value_path_str(cluster, FQ_META_CREATED, NULL);
    if (created)
        fq_map_set(v, "createTime", fq_value_str(created));
    const char *uid = fq_value_path_str(cluster, FQ_META_UID, NULL);
    if (uid)
        fq_map_set(v, "id", fq_value_str(uid));
    int64_t nodes = 0;
    const struct fq_value *first = NULL;
    for (size_t i = 0; pools && i < fq_value_len(pools); i++) {
        const struct fq_value *p = fq_seq_at(pools, i);
        nodes += fq_value_path_int(p, "currentNodeCount", 0);
        if (!first)
            first = p;
    }
    if (first && fq_map_get(first, "config"))
        fq_map_set(v, "nodeConfig",
                   fq_value_clone(fq_map_get(first, "config")));
    fq_map_set(v, "currentNodeCount", fq_value_int(nodes));
    fq_map_set(v, "nodePools", pools ? pools : fq_value_seq());
    fq_map_set(v, "status", fq_value_str("RUNNING"));
    if (self)
        fq_map_set(v, "selfLink", fq_value_str(self));
    return v;
}

uint64_t fq_gke_project_number(const char *project)
{
    /* FNV-1a, folded into twelve digits with a non-zero first one. */
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = project; p && *p; p++) {
        h ^= (unsigned char)*p;
        h *= 1099511628211ULL;
    }
    return 100000000000ULL + h % 900000000000ULL;
}
