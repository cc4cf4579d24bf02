/*
 * objects_service.c - core/v1 Service: its validator and the defaults the
 * API server fills in when one is stored.
 *
 * flexq keeps Services for what clients do with them: KubeRay makes a
 * `<cluster>-head-svc` for every RayCluster head (jobs/raycluster.c) and
 * `kubectl port-forward service/NAME` resolves one to a pod (the selector)
 * and a container port (the port's targetPort). Nothing proxies traffic
 * to a cluster IP: a Service's address is a record, as kubectl prints it.
 *
 * Rules, as the API server's (a subset; each with a cap):
 *   - spec.type ClusterIP (default), NodePort, LoadBalancer, ExternalName;
 *   - spec.ports: at most MAX_PORTS, required unless the type is
 *     ExternalName or the service is headless (clusterIP None); each port
 *     1..65535, protocol TCP (default), UDP or SCTP; a name (a DNS-1123
 *     label) required once there are two ports, names and (port,
 *     protocol) pairs unique; targetPort an integer 1..65535 or a
 *     container port's name (an IANA service name: 15 characters, a
 *     letter, no "--"), defaulted to port; nodePort 30000..32767
 *     and only for NodePort or LoadBalancer;
 *   - spec.selector: labels; spec.clusterIP "None", "" or an IPv4 address;
 *     spec.externalName a DNS subdomain, required for ExternalName;
 *     spec.sessionAffinity None or ClientIP.
 *
 * Defaults (fq_service_defaults): type, sessionAffinity, protocol,
 * targetPort, ipFamilies [IPv4], ipFamilyPolicy SingleStack,
 * internalTrafficPolicy Cluster, and a cluster IP from 10.96.0.0/12 (the
 * lowest one no other Service holds, from 10.96.0.10 on; 10.96.0.1 is the
 * `kubernetes` service's in a real cluster). An update keeps the address
 * the Service has, as spec.clusterIP is immutable in Kubernetes.
 *
 * What it does not do: Endpoints / EndpointSlices, load balancer status,
 * dual stack, node ports allocated from the range (a NodePort service
 * keeps the nodePort it was given, or none).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "objects/objects_internal.h"

#define MAX_PORTS       100
#define CLUSTER_IP_BASE ((10u << 24) | (96u << 16)) /* 10.96.0.0/12 */
#define CLUSTER_IP_SIZE (1u << 20)
#define CLUSTER_IP_MIN  10u

struct svc_view {
    struct fq_meta meta;
    struct fq_objmem *mem;
};

/* An IANA service name, as Kubernetes checks a port's name. */
static const char *check_svc_port_name(const char *s)
{
    size_t n = strlen(s);
    bool letter = false;
    if (n == 0 || n > 15)
        return "must be 1 to 15 characters";
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        bool ok =
            (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
        if (!ok)
            return "must consist of lower case letters, digits and '-'";
        if (ch >= 'a' && ch <= 'z')
            letter = true;
        if (ch == '-' && i + 1 < n && s[i + 1] == '-')
            return "must not contain '--'";
    }
    if (s[0] == '-' || s[n - 1] == '-')
        return "must not start or end with '-'";
    if (!letter)
        return "must contain at least one letter";
    return NULL;
}

/* "10.1.2.3" into *out; -1 when not a dotted IPv4 address. */
static int parse_ipv4(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned long part = 0;
        int digits = 0;
        while (*s >= '0' && *s <= '9' && digits < 4) {
            part = part * 10 + (unsigned long)(*s++ - '0');
            digits++;
        }
        if (part > 255 || digits > 3)
            return -1;
        v = (v << 8) | (uint32_t)part;
        if (i < 3 && *s++ != '.')
            return -1;
    }
    if (*s)
        return -1;
    *out = v;
    return 0;
}

static void check_port(struct dctx *c, const struct fq_value *p, size_t nports,
                       bool node_ports)
{
    static const char *const protocols[] = {"TCP", "UDP", "SCTP", NULL};
    if (!p || p->type != FQ_V_MAP) {
        derr(c, p, "must be a mapping (a ServicePort)");
        return;
    }
    if (!field(p, "port"))
        derr_missing(c, p, "port");
    (void)want_int(c, p, "port", 0, 1, 65535, NULL);
    (void)want_enum(c, p, "protocol", protocols, 0);
    const char *name = want_name(c, p, "name", false, fq_check_dns1123_label);
    if (!name && nports > 1)
        derr_key(c, p, "name",
                 "required when a Service has more than one port");
    (void)want_str(c, p, "appProtocol", false);
    const struct fq_value *tp = field(p, "targetPort");
    if (tp && tp->type == FQ_V_STR) {
        const char *why = check_svc_port_name(tp->u.str.s);
        if (why)
            derr_key(c, p, "targetPort", "%s", why);
    } else if (tp) {
        (void)want_int(c, p, "targetPort", 0, 1, 65535, NULL);
    }
    bool has_np = false;
    (void)want_int(c, p, "nodePort", 0, 30000, 32767, &has_np);
    if (has_np && !node_ports)
        derr_key(c, p, "nodePort",
                 "may not be used when `type` is 'ClusterIP' or "
                 "'ExternalName'");
}

/* Names unique; (port, protocol) unique. */
static void check_port_unique(struct dctx *c, const struct fq_value *ports)
{
    size_t n = fq_value_len(ports);
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *a = fq_seq_at(ports, i);
        for (size_t j = 0; j < i; j++) {
            const struct fq_value *b = fq_seq_at(ports, j);
            const char *an = fq_value_path_str(a, "name", NULL);
            const char *bn = fq_value_path_str(b, "name", NULL);
            size_t old = path_idx(c, i);
            if (an && bn && !strcmp(an, bn))
                derr_key(c, a, "name", "duplicate port name \"%s\"", an);
            if (fq_value_path_int(a, "port", -1) ==
                    fq_value_path_int(b, "port", -2) &&
                !strcmp(fq_value_path_str(a, "protocol", "TCP"),
                        fq_value_path_str(b, "protocol", "TCP")))
                derr_key(c, a, "port", "duplicate port %lld/%s",
                         (long long)fq_value_path_int(a, "port", 0),
                         fq_value_path_str(a, "protocol", "TCP"));
            path_pop(c, old);
        }
    }
}

int fq_service_validate(const struct fq_value *obj, const char *file,
                        struct fq_errlist *errs)
{
    static const char *const types[] = {"ClusterIP", "NodePort", "LoadBalancer",
                                        "ExternalName", NULL};
    static const char *const affinities[] = {"None", "ClientIP", NULL};
    struct dctx c;
    struct svc_view out;
    memset(&out, 0, sizeof(out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_SERVICE, &out.mem, &out.meta) ==
        0) {
        const struct fq_value *spec = want_map(&c, obj, "spec", false);
        size_t old = path_key(&c, "spec");
        int type = want_enum(&c, spec, "type", types, 0);
        (void)want_enum(&c, spec, "sessionAffinity", affinities, 0);
        const char *ip = want_str(&c, spec, "clusterIP", false);
        uint32_t addr;
        bool headless = ip && !strcmp(ip, "None");
        if (ip && *ip && !headless && parse_ipv4(ip, &addr) < 0)
            derr_key(&c, spec, "clusterIP",
                     "must be \"None\", empty or an IPv4 address");
        if (headless && type != 0 && type != 3)
            derr_key(&c, spec, "clusterIP",
                     "may not be \"None\" when `type` is '%s'", types[type]);
        const char *ext = want_name(&c, spec, "externalName", type == 3,
                                    fq_check_dns1123_subdomain);
        (void)ext;
        struct fq_kvs sel = {0};
        want_kvs(&c, spec, "selector", KVS_LABELS, 0, &sel);
        bool ports_needed = type != 3 && !headless;
        const struct fq_value *ports =
            want_seq(&c, spec, "ports", false, 0, MAX_PORTS);
        if (ports_needed && spec && fq_value_len(ports) == 0)
            derr_key(&c, spec, "ports",
                     "required: a Service of type %s needs at least one "
                     "port",
                     types[type]);
        size_t o2 = path_key(&c, "ports");
        size_t n = ports && ports->type == FQ_V_SEQ ? fq_value_len(ports) : 0;
        for (size_t i = 0; i < n; i++) {
            size_t o3 = path_idx(&c, i);
            check_port(&c, fq_seq_at(ports, i), n, type == 1 || type == 2);
            path_pop(&c, o3);
        }
        if (n > 1)
            check_port_unique(&c, ports);
        path_pop(&c, o2);
        path_pop(&c, old);
    }
    int rc = dctx_end(&c, &out, sizeof(out), &out.mem);
    objmem_free(&out.mem);
    return rc;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The lowest address of the range no other Service than ns/name holds, or
 * 0 when the range is full. One pass over the Services, then their
 * addresses sorted: O(n log n) per create. */
static uint32_t free_ip(const struct fq_objstore *s, const char *ns,
                        const char *name)
{
    const struct fq_object **objs = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_SERVICE, NULL, &objs);
    uint32_t *used = fq_xcalloc(n + 1, sizeof(*used));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        const char *ip =
            fq_value_path_str(objs[i]->obj, FQ_SVC_CLUSTER_IP, NULL);
        if (ip && parse_ipv4(ip, &b) == 0 &&
            (strcmp(objs[i]->ns, ns) || strcmp(objs[i]->name, name)))
            used[m++] = b;
    }
    free(objs);
    qsort(used, m, sizeof(*used), cmp_u32);
    uint32_t a = CLUSTER_IP_BASE + CLUSTER_IP_MIN;
    for (size_t i = 0; i < m; i++)
        if (used[i] == a)
            a++;
    free(used);
    return a < CLUSTER_IP_BASE + CLUSTER_IP_SIZE - 1 ? a : 0;
}

static void set_default(struct fq_value *m, const char *key, const char *val)
{
    if (!fq_value_as_str(fq_map_get(m, key)))
        fq_map_set(m, key, fq_value_str(val));
}

int fq_service_defaults(struct fq_value *svc, const struct fq_objstore *s,
                        const struct fq_value *old)
{
    struct fq_value *spec = fq_map_ensure_map(svc, "spec");
    const char *ns = fq_value_path_str(svc, FQ_META_NAMESPACE, "default");
    const char *name = fq_meta_name(svc);
    set_default(spec, "type", "ClusterIP");
    set_default(spec, "sessionAffinity", "None");
    bool external =
        !strcmp(fq_value_path_str(spec, "type", ""), "ExternalName");
    struct fq_value *ports = fq_map_get(spec, "ports");
    for (size_t i = 0; i < fq_value_len(ports); i++) {
        struct fq_value *p = fq_seq_at(ports, i);
        if (!p || p->type != FQ_V_MAP)
            continue;
        set_default(p, "protocol", "TCP");
        if (!fq_map_get(p, "targetPort"))
            fq_map_set(p, "targetPort",
                       fq_value_int(fq_value_path_int(p, "port", 0)));
    }
    if (external)
        return 0;
    const char *oldip = fq_value_path_str(old, FQ_SVC_CLUSTER_IP, NULL);
    const char *ip = fq_value_path_str(spec, "clusterIP", NULL);
    if ((!ip || !*ip) && oldip && *oldip) {
        fq_map_set(spec, "clusterIP", fq_value_str(oldip));
    } else if (!ip || !*ip) {
        uint32_t a = free_ip(s, ns, name);
        if (!a)
            return FQ_EBUSY;
        char buf[32];
        snprintf(buf, sizeof(buf), "%u.%u.%u.%u", a >> 24, (a >> 16) & 255,
                 (a >> 8) & 255, a & 255);
        fq_map_set(spec, "clusterIP", fq_value_str(buf));
    }
    struct fq_value *ips = fq_value_seq();
    fq_seq_push(ips, fq_value_str(fq_value_path_str(spec, "clusterIP", "")));
    fq_map_set(spec, "clusterIPs", ips);
    if (!fq_map_get(spec, "ipFamilies")) {
        struct fq_value *fam = fq_value_seq();
        fq_seq_push(fam, fq_value_str("IPv4"));
        fq_map_set(spec, "ipFamilies", fam);
    }
    set_default(spec, "ipFamilyPolicy", "SingleStack");
    set_default(spec, "internalTrafficPolicy", "Cluster");
    if (!fq_map_get(svc, "status")) {
        struct fq_value *st = fq_value_map();
        fq_map_set(st, "loadBalancer", fq_value_map());
        fq_map_set(svc, "status", st);
    }
    return 0;
}
