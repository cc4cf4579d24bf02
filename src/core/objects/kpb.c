/*
 * kpb.c - a small, capped reader of Kubernetes' protobuf bodies
 * (application/vnd.kubernetes.protobuf), which kubectl 1.32+ sends for
 * core kinds (`kubectl create configmap --from-file`, `create namespace`,
 * `create secret generic`, `run --restart=Never`, `create job`, `create
 * service`): the 4-byte "k8s\0" magic, the runtime.Unknown envelope
 * (typeMeta, raw), and the messages of ConfigMap, Namespace, Secret, Pod,
 * Service and batch/v1 Job with
 * their ObjectMeta, turned into the same tree a JSON body gives.
 *
 * How it works: a reader over (pointer, end) decodes varints, fixed-width
 * fields and length-delimited fields. Every message is a static table
 * (below) of the fields flexq reads, with the field numbers of
 * k8s.io/api core/v1 and batch/v1 and apimachinery meta/v1 and the JSON
 * name and shape of each; one decoder walks any table, keeps the fields
 * it lists and skips the others. Bytes (binaryData, Secret data) become
 * base64 strings and Quantities their strings, as in JSON.
 *
 * Why tables and not protobuf-c: a generated decoder would give C structs
 * that still need a hand-written walk, field by field, into flexq's value
 * tree, and it keeps unknown fields in memory; the JSON names, Go's
 * omitempty and pointer rules (KEEP0) and the inlined structs are what
 * the conversion needs, and a table says them in one line per field. The
 * wire format itself is the small part (next(), about 40 lines).
 *
 * Invariants: (1) no read past `end` (every length is checked against
 * what is left); (2) nesting is bounded by the tables (they have no
 * cycles; MAX_DEPTH asserts it), never by the input; (3) at most
 * FQ_KPB_MAX_ENTRIES map entries and list items per body.
 *
 * What it does not do: the other kinds' messages (their bodies are
 * refused with FQ_EUNSUPPORTED, which the API answers 415), PodSpec's
 * rarer fields (lifecycle hooks, pod affinity, topology spread: skipped
 * as unknown, so send JSON for them), encoding, creationTimestamp and
 * managedFields (set by the server).
 */
#include "flexq/kpb.h"

#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"

struct rd {
    const unsigned char *base; /* the body, for offsets in messages */
    const unsigned char *p, *end;
    size_t entries; /* map entries and list items so far */
    struct fq_err *err;
    int rc;
};

static int bad(struct rd *r, const char *what)
{
    if (r->rc == 0)
        r->rc = fq_err_set(r->err, FQ_EPARSE, "protobuf body: %s at byte %zu",
                           what, (size_t)(r->p - r->base));
    return r->rc;
}

static bool varint(const unsigned char **p, const unsigned char *end,
                   uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return false;
        unsigned char c = *(*p)++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* One field: its number, wire type, and for wire type 2 its bytes, for
 * 0 its value. False at the end of the message or on an error (r->rc). */
struct field {
    unsigned num, wt;
    uint64_t v;
    const unsigned char *data;
    size_t len;
};

static bool next(struct rd *r, struct field *f)
{
    if (r->rc || r->p >= r->end)
        return false;
    uint64_t tag;
    if (!varint(&r->p, r->end, &tag) || (tag >> 3) == 0 ||
        (tag >> 3) > 1u << 29)
        return bad(r, "a bad field tag"), false;
    f->num = (unsigned)(tag >> 3);
    f->wt = (unsigned)(tag & 7);
    f->data = NULL;
    f->len = 0;
    switch (f->wt) {
    case 0:
        if (!varint(&r->p, r->end, &f->v))
            return bad(r, "a truncated varint"), false;
        return true;
    case 1:
    case 5: {
        size_t n = f->wt == 1 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n)
            return bad(r, "a truncated fixed field"), false;
        r->p += n;
        return true;
    }
    case 2: {
        uint64_t n;
        if (!varint(&r->p, r->end, &n) || n > (uint64_t)(r->end - r->p))
            return bad(r, "a length past the end"), false;
        f->data = r->p;
        f->len = (size_t)n;
        r->p += n;
        return true;
    }
    default:
        return bad(r, "an unsupported wire type"), false;
    }
}

/* A reader over a nested message's bytes, sharing counters and errors. */
static struct rd sub(const struct rd *r, const struct field *f)
{
    struct rd s = *r;
    s.p = f->data;
    s.end = f->data + f->len;
    return s;
}

static void join(struct rd *r, const struct rd *s)
{
    r->entries = s->entries;
    if (s->rc && !r->rc)
        r->rc = s->rc;
}

static bool count(struct rd *r)
{
    if (++r->entries > FQ_KPB_MAX_ENTRIES) {
        if (!r->rc)
            r->rc = fq_err_set(r->err, FQ_ELIMIT,
                               "protobuf body: more than %d map entries or "
                               "list items",
                               FQ_KPB_MAX_ENTRIES);
        return false;
    }
    return true;
}

/* True if p[0..n) is UTF-8 without NUL (what a JSON body can carry). */
static bool text_ok(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        size_t len = c < 0x80           ? 1 :
                     (c & 0xe0) == 0xc0 ? 2 :
                     (c & 0xf0) == 0xe0 ? 3 :
                     (c & 0xf8) == 0xf0 ? 4 :
                                          0;
        if (!c || !len || i + len > n || (len == 2 && c < 0xc2) ||
            (len == 4 && c > 0xf4))
            return false;
        for (size_t k = 1; k < len; k++)
            if ((p[i + k] & 0xc0) != 0x80)
                return false;
        if (len == 3) {
            unsigned cp = (c & 0x0fu) << 12 | (p[i + 1] & 0x3fu) << 6 |
                          (p[i + 2] & 0x3fu);
            if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))
                return false;
        }
        if (len == 4) {
            unsigned cp = (c & 0x07u) << 18 | (p[i + 1] & 0x3fu) << 12 |
                          (p[i + 2] & 0x3fu) << 6 | (p[i + 3] & 0x3fu);
            if (cp < 0x10000 || cp > 0x10ffff)
                return false;
        }
        i += len;
    }
    return true;
}

/* A string field; invalid UTF-8 is an error (an empty string is given
 * back so the caller goes on; the error ends the decode). */
static struct fq_value *str_of(struct rd *r, const struct field *f)
{
    if (!text_ok(f->data, f->len)) {
        bad(r, "a string that is not UTF-8");
        return fq_value_str("");
    }
    return fq_value_strn((const char *)f->data, f->len);
}

static const char B64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static struct fq_value *b64_of(const struct field *f)
{
    struct fq_buf b = FQ_BUF_INIT;
    const unsigned char *p = f->data;
    for (size_t i = 0; i < f->len; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < f->len)
            v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < f->len)
            v |= p[i + 2];
        fq_buf_putc(&b, B64[v >> 18 & 63]);
        fq_buf_putc(&b, B64[v >> 12 & 63]);
        fq_buf_putc(&b, i + 1 < f->len ? B64[v >> 6 & 63] : '=');
        fq_buf_putc(&b, i + 2 < f->len ? B64[v & 63] : '=');
    }
    struct fq_value *s = fq_value_strn(b.data ? b.data : "", b.len);
    fq_buf_release(&b);
    return s;
}

/* --- The message tables ---------------------------------------------------
 *
 * Each message is a list of fields: the field number of Kubernetes'
 * generated.proto, the JSON name, a type and flags. The types say how the
 * wire value becomes JSON:
 *
 *   STR      a string; empty is absent (gogo writes every non-pointer
 *            string, and JSON omits the empty ones)
 *   INT      a varint as a signed integer; zero is absent unless KEEP0
 *   BOOL     a varint as true/false; false is absent unless KEEP0
 *   MSG      a nested message, by its table (present: a mapping, even an
 *            empty one, as `emptyDir: {}`)
 *   INLINE   a nested message whose fields JSON puts in the parent (Go's
 *            embedded structs: LocalObjectReference in a key selector,
 *            VolumeSource in a Volume)
 *   QTY      resource.Quantity {string = 1} as its string
 *   IOS      intstr.IntOrString {type = 1, intVal = 2, strVal = 3} as the
 *            number or the string it holds (a probe's port: 8080 or "http")
 *   MAP_STR, MAP_BYTES, MAP_QTY   map<string, V> (entries key = 1,
 *            value = 2); bytes become base64 as in JSON
 *
 * REP makes STR, INT and MSG repeated (a list; INT also packed). KEEP0
 * marks Go pointer fields, where zero is a value (`suspend: false`,
 * `backoffLimit: 0`): gogo writes them only when set. A field not in the
 * table, or with an unexpected wire type, is skipped.
 */
enum ftype {
    STR,
    INT,
    BOOL,
    MSG,
    INLINE,
    QTY,
    IOS,
    MAP_STR,
    MAP_BYTES,
    MAP_QTY
};

enum {
    REP = 1,
    KEEP0 = 2
};

struct pfield {
    unsigned num;
    const char *name;
    unsigned char type, flags;
    const struct pfield *msg; /* MSG and INLINE: the nested table */
};

#define END           \
 {                    \
  0, NULL, 0, 0, NULL \
 }

/* apimachinery meta/v1 */
static const struct pfield OWNER_REF[] = {
    {5, "apiVersion", STR, 0, NULL},
    {1, "kind", STR, 0, NULL},
    {3, "name", STR, 0, NULL},
    {4, "uid", STR, 0, NULL},
    {6, "controller", BOOL, KEEP0, NULL},
    {7, "blockOwnerDeletion", BOOL, KEEP0, NULL},
    END};
static const struct pfield OBJECT_META[] = {
    {1, "name", STR, 0, NULL},
    {2, "generateName", STR, 0, NULL},
    {3, "namespace", STR, 0, NULL},
    {5, "uid", STR, 0, NULL},
    {6, "resourceVersion", STR, 0, NULL},
    {7, "generation", INT, 0, NULL},
    {10, "deletionGracePeriodSeconds", INT, KEEP0, NULL},
    {11, "labels", MAP_STR, 0, NULL},
    {12, "annotations", MAP_STR, 0, NULL},
    {13, "ownerReferences", MSG, REP, OWNER_REF},
    {14, "finalizers", STR, REP, NULL},
    END};
static const struct pfield SELECTOR_REQ[] = {{1, "key", STR, 0, NULL},
                                             {2, "operator", STR, 0, NULL},
                                             {3, "values", STR, REP, NULL},
                                             END};
static const struct pfield LABEL_SELECTOR[] = {
    {1, "matchLabels", MAP_STR, 0, NULL},
    {2, "matchExpressions", MSG, REP, SELECTOR_REQ},
    END};

/* core/v1: ConfigMap, Secret, Namespace */
static const struct pfield CONFIG_MAP[] = {
    {1, "metadata", MSG, 0, OBJECT_META},
    {2, "data", MAP_STR, 0, NULL},
    {3, "binaryData", MAP_BYTES, 0, NULL},
    {4, "immutable", BOOL, KEEP0, NULL},
    END};
static const struct pfield SECRET[] = {{1, "metadata", MSG, 0, OBJECT_META},
                                       {2, "data", MAP_BYTES, 0, NULL},
                                       {3, "type", STR, 0, NULL},
                                       {4, "stringData", MAP_STR, 0, NULL},
                                       {5, "immutable", BOOL, KEEP0, NULL},
                                       END};
static const struct pfield NS_SPEC[] = {{1, "finalizers", STR, REP, NULL}, END};
static const struct pfield NS_STATUS[] = {{1, "phase", STR, 0, NULL}, END};
static const struct pfield NAMESPACE[] = {{1, "metadata", MSG, 0, OBJECT_META},
                                          {2, "spec", MSG, 0, NS_SPEC},
                                          {3, "status", MSG, 0, NS_STATUS},
                                          END};

/* core/v1: the PodSpec fields clients set */
static const struct pfield NO_FIELDS[] = {END}; /* statuses: sent empty */
static const struct pfield LOCAL_REF[] = {{1, "name", STR, 0, NULL}, END};
static const struct pfield KEY_SELECTOR[] = {{1, "", INLINE, 0, LOCAL_REF},
                                             {2, "key", STR, 0, NULL},
                                             {3, "optional", BOOL, KEEP0, NULL},
                                             END};
static const struct pfield FIELD_SELECTOR[] = {
    {1, "apiVersion", STR, 0, NULL}, {2, "fieldPath", STR, 0, NULL}, END};
static const struct pfield RESOURCE_SELECTOR[] = {
    {1, "containerName", STR, 0, NULL},
    {2, "resource", STR, 0, NULL},
    {3, "divisor", QTY, 0, NULL},
    END};
static const struct pfield ENV_SOURCE[] = {
    {1, "fieldRef", MSG, 0, FIELD_SELECTOR},
    {2, "resourceFieldRef", MSG, 0, RESOURCE_SELECTOR},
    {3, "configMapKeyRef", MSG, 0, KEY_SELECTOR},
    {4, "secretKeyRef", MSG, 0, KEY_SELECTOR},
    END};
static const struct pfield ENV_VAR[] = {{1, "name", STR, 0, NULL},
                                        {2, "value", STR, 0, NULL},
                                        {3, "valueFrom", MSG, 0, ENV_SOURCE},
                                        END};
static const struct pfield ENV_FROM_REF[] = {
    {1, "", INLINE, 0, LOCAL_REF}, {2, "optional", BOOL, KEEP0, NULL}, END};
static const struct pfield ENV_FROM[] = {
    {1, "prefix", STR, 0, NULL},
    {2, "configMapRef", MSG, 0, ENV_FROM_REF},
    {3, "secretRef", MSG, 0, ENV_FROM_REF},
    END};
static const struct pfield RESOURCES[] = {
    {1, "limits", MAP_QTY, 0, NULL}, {2, "requests", MAP_QTY, 0, NULL}, END};
static const struct pfield PORT[] = {
    {1, "name", STR, 0, NULL},          {2, "hostPort", INT, 0, NULL},
    {3, "containerPort", INT, 0, NULL}, {4, "protocol", STR, 0, NULL},
    {5, "hostIP", STR, 0, NULL},        END};
static const struct pfield VOLUME_MOUNT[] = {
    {1, "name", STR, 0, NULL},
    {2, "readOnly", BOOL, 0, NULL},
    {7, "recursiveReadOnly", STR, 0, NULL},
    {3, "mountPath", STR, 0, NULL},
    {4, "subPath", STR, 0, NULL},
    {5, "mountPropagation", STR, 0, NULL},
    {6, "subPathExpr", STR, 0, NULL},
    END};
static const struct pfield CAPABILITIES[] = {
    {1, "add", STR, REP, NULL}, {2, "drop", STR, REP, NULL}, END};
static const struct pfield SECURITY_CONTEXT[] = {
    {1, "capabilities", MSG, 0, CAPABILITIES},
    {2, "privileged", BOOL, KEEP0, NULL},
    {4, "runAsUser", INT, KEEP0, NULL},
    {8, "runAsGroup", INT, KEEP0, NULL},
    {5, "runAsNonRoot", BOOL, KEEP0, NULL},
    {6, "readOnlyRootFilesystem", BOOL, KEEP0, NULL},
    {7, "allowPrivilegeEscalation", BOOL, KEEP0, NULL},
    {9, "procMount", STR, 0, NULL},
    END};
static const struct pfield EXEC_ACTION[] = {{1, "command", STR, REP, NULL},
                                            END};
static const struct pfield HTTP_HEADER[] = {
    {1, "name", STR, 0, NULL}, {2, "value", STR, 0, NULL}, END};
static const struct pfield HTTP_GET[] = {
    {1, "path", STR, 0, NULL},
    {2, "port", IOS, 0, NULL},
    {3, "host", STR, 0, NULL},
    {4, "scheme", STR, 0, NULL},
    {5, "httpHeaders", MSG, REP, HTTP_HEADER},
    END};
static const struct pfield TCP_SOCKET[] = {
    {1, "port", IOS, 0, NULL}, {2, "host", STR, 0, NULL}, END};
static const struct pfield GRPC_ACTION[] = {
    {1, "port", INT, KEEP0, NULL}, {2, "service", STR, 0, NULL}, END};
static const struct pfield PROBE_HANDLER[] = {
    {1, "exec", MSG, 0, EXEC_ACTION},
    {2, "httpGet", MSG, 0, HTTP_GET},
    {3, "tcpSocket", MSG, 0, TCP_SOCKET},
    {4, "grpc", MSG, 0, GRPC_ACTION},
    END};
static const struct pfield PROBE[] = {
    {1, "", INLINE, 0, PROBE_HANDLER},
    {2, "initialDelaySeconds", INT, 0, NULL},
    {3, "timeoutSeconds", INT, 0, NULL},
    {4, "periodSeconds", INT, 0, NULL},
    {5, "successThreshold", INT, 0, NULL},
    {6, "failureThreshold", INT, 0, NULL},
    {7, "terminationGracePeriodSeconds", INT, KEEP0, NULL},
    END};
static const struct pfield CONTAINER[] = {
    {1, "name", STR, 0, NULL},
    {2, "image", STR, 0, NULL},
    {3, "command", STR, REP, NULL},
    {4, "args", STR, REP, NULL},
    {5, "workingDir", STR, 0, NULL},
    {6, "ports", MSG, REP, PORT},
    {19, "envFrom", MSG, REP, ENV_FROM},
    {7, "env", MSG, REP, ENV_VAR},
    {8, "resources", MSG, 0, RESOURCES},
    {24, "restartPolicy", STR, 0, NULL},
    {9, "volumeMounts", MSG, REP, VOLUME_MOUNT},
    {10, "livenessProbe", MSG, 0, PROBE},
    {11, "readinessProbe", MSG, 0, PROBE},
    {22, "startupProbe", MSG, 0, PROBE},
    {13, "terminationMessagePath", STR, 0, NULL},
    {20, "terminationMessagePolicy", STR, 0, NULL},
    {14, "imagePullPolicy", STR, 0, NULL},
    {15, "securityContext", MSG, 0, SECURITY_CONTEXT},
    {16, "stdin", BOOL, 0, NULL},
    {17, "stdinOnce", BOOL, 0, NULL},
    {18, "tty", BOOL, 0, NULL},
    END};
static const struct pfield KEY_TO_PATH[] = {{1, "key", STR, 0, NULL},
                                            {2, "path", STR, 0, NULL},
                                            {3, "mode", INT, KEEP0, NULL},
                                            END};
static const struct pfield CONFIG_MAP_VOLUME[] = {
    {1, "", INLINE, 0, LOCAL_REF},
    {2, "items", MSG, REP, KEY_TO_PATH},
    {3, "defaultMode", INT, KEEP0, NULL},
    {4, "optional", BOOL, KEEP0, NULL},
    END};
static const struct pfield SECRET_VOLUME[] = {
    {1, "secretName", STR, 0, NULL},
    {2, "items", MSG, REP, KEY_TO_PATH},
    {3, "defaultMode", INT, KEEP0, NULL},
    {4, "optional", BOOL, KEEP0, NULL},
    END};
static const struct pfield EMPTY_DIR[] = {
    {1, "medium", STR, 0, NULL}, {2, "sizeLimit", QTY, 0, NULL}, END};
static const struct pfield HOST_PATH[] = {
    {1, "path", STR, 0, NULL}, {2, "type", STR, 0, NULL}, END};
static const struct pfield VOLUME_SOURCE[] = {
    {1, "hostPath", MSG, 0, HOST_PATH},
    {2, "emptyDir", MSG, 0, EMPTY_DIR},
    {6, "secret", MSG, 0, SECRET_VOLUME},
    {19, "configMap", MSG, 0, CONFIG_MAP_VOLUME},
    END};
static const struct pfield VOLUME[] = {
    {1, "name", STR, 0, NULL}, {2, "", INLINE, 0, VOLUME_SOURCE}, END};
static const struct pfield TOLERATION[] = {
    {1, "key", STR, 0, NULL},
    {2, "operator", STR, 0, NULL},
    {3, "value", STR, 0, NULL},
    {4, "effect", STR, 0, NULL},
    {5, "tolerationSeconds", INT, KEEP0, NULL},
    END};
static const struct pfield POD_SECURITY_CONTEXT[] = {
    {2, "runAsUser", INT, KEEP0, NULL},
    {6, "runAsGroup", INT, KEEP0, NULL},
    {3, "runAsNonRoot", BOOL, KEEP0, NULL},
    {4, "supplementalGroups", INT, REP, NULL},
    {5, "fsGroup", INT, KEEP0, NULL},
    END};
static const struct pfield NODE_SELECTOR_TERM[] = {
    {1, "matchExpressions", MSG, REP, SELECTOR_REQ},
    {2, "matchFields", MSG, REP, SELECTOR_REQ},
    END};
static const struct pfield NODE_SELECTOR[] = {
    {1, "nodeSelectorTerms", MSG, REP, NODE_SELECTOR_TERM}, END};
static const struct pfield PREFERRED_TERM[] = {
    {1, "weight", INT, 0, NULL},
    {2, "preference", MSG, 0, NODE_SELECTOR_TERM},
    END};
static const struct pfield NODE_AFFINITY[] = {
    {1, "requiredDuringSchedulingIgnoredDuringExecution", MSG, 0,
     NODE_SELECTOR},
    {2, "preferredDuringSchedulingIgnoredDuringExecution", MSG, REP,
     PREFERRED_TERM},
    END};
static const struct pfield AFFINITY[] = {
    {1, "nodeAffinity", MSG, 0, NODE_AFFINITY}, END};
static const struct pfield POD_SPEC[] = {
    {1, "volumes", MSG, REP, VOLUME},
    {20, "initContainers", MSG, REP, CONTAINER},
    {2, "containers", MSG, REP, CONTAINER},
    {3, "restartPolicy", STR, 0, NULL},
    {4, "terminationGracePeriodSeconds", INT, KEEP0, NULL},
    {5, "activeDeadlineSeconds", INT, KEEP0, NULL},
    {6, "dnsPolicy", STR, 0, NULL},
    {7, "nodeSelector", MAP_STR, 0, NULL},
    {8, "serviceAccountName", STR, 0, NULL},
    {9, "serviceAccount", STR, 0, NULL},
    {21, "automountServiceAccountToken", BOOL, KEEP0, NULL},
    {10, "nodeName", STR, 0, NULL},
    {11, "hostNetwork", BOOL, 0, NULL},
    {14, "securityContext", MSG, 0, POD_SECURITY_CONTEXT},
    {15, "imagePullSecrets", MSG, REP, LOCAL_REF},
    {16, "hostname", STR, 0, NULL},
    {17, "subdomain", STR, 0, NULL},
    {18, "affinity", MSG, 0, AFFINITY},
    {19, "schedulerName", STR, 0, NULL},
    {22, "tolerations", MSG, REP, TOLERATION},
    {24, "priorityClassName", STR, 0, NULL},
    {25, "priority", INT, KEEP0, NULL},
    {29, "runtimeClassName", STR, 0, NULL},
    {30, "enableServiceLinks", BOOL, KEEP0, NULL},
    {31, "preemptionPolicy", STR, 0, NULL},
    END};
static const struct pfield POD_TEMPLATE[] = {
    {1, "metadata", MSG, 0, OBJECT_META}, {2, "spec", MSG, 0, POD_SPEC}, END};
static const struct pfield POD[] = {{1, "metadata", MSG, 0, OBJECT_META},
                                    {2, "spec", MSG, 0, POD_SPEC},
                                    {3, "status", MSG, 0, NO_FIELDS},
                                    END};

/* core/v1: Service (`kubectl create service`); status is the server's */
static const struct pfield SERVICE_PORT[] = {{1, "name", STR, 0, NULL},
                                             {2, "protocol", STR, 0, NULL},
                                             {6, "appProtocol", STR, 0, NULL},
                                             {3, "port", INT, 0, NULL},
                                             {4, "targetPort", IOS, 0, NULL},
                                             {5, "nodePort", INT, 0, NULL},
                                             END};
static const struct pfield SERVICE_SPEC[] = {
    {1, "ports", MSG, REP, SERVICE_PORT}, {2, "selector", MAP_STR, 0, NULL},
    {3, "clusterIP", STR, 0, NULL},       {4, "type", STR, 0, NULL},
    {5, "externalIPs", STR, REP, NULL},   {7, "sessionAffinity", STR, 0, NULL},
    {10, "externalName", STR, 0, NULL},   END};
static const struct pfield SERVICE[] = {{1, "metadata", MSG, 0, OBJECT_META},
                                        {2, "spec", MSG, 0, SERVICE_SPEC},
                                        END};

/* batch/v1: Job */
static const struct pfield JOB_SPEC[] = {
    {1, "parallelism", INT, KEEP0, NULL},
    {2, "completions", INT, KEEP0, NULL},
    {3, "activeDeadlineSeconds", INT, KEEP0, NULL},
    {7, "backoffLimit", INT, KEEP0, NULL},
    {12, "backoffLimitPerIndex", INT, KEEP0, NULL},
    {13, "maxFailedIndexes", INT, KEEP0, NULL},
    {4, "selector", MSG, 0, LABEL_SELECTOR},
    {5, "manualSelector", BOOL, KEEP0, NULL},
    {6, "template", MSG, 0, POD_TEMPLATE},
    {8, "ttlSecondsAfterFinished", INT, KEEP0, NULL},
    {9, "completionMode", STR, 0, NULL},
    {10, "suspend", BOOL, KEEP0, NULL},
    {14, "podReplacementPolicy", STR, 0, NULL},
    {15, "managedBy", STR, 0, NULL},
    END};
static const struct pfield JOB[] = {{1, "metadata", MSG, 0, OBJECT_META},
                                    {2, "spec", MSG, 0, JOB_SPEC},
                                    {3, "status", MSG, 0, NO_FIELDS},
                                    END};

/* Tables nest at most this deep (Job > template > spec > containers >
 * env > valueFrom > configMapKeyRef > inline is 8); a bound, not a
 * limit an input can reach, since the tables have no cycles. */
#define MAX_DEPTH 16

/* The list at key `name` of o, made if absent. */
static struct fq_value *seq_at(struct fq_value *o, const char *name)
{
    struct fq_value *s = fq_map_get(o, name);
    if (!s || s->type != FQ_V_SEQ) {
        fq_map_set(o, name, fq_value_seq());
        s = fq_map_get(o, name);
    }
    return s;
}

/* resource.Quantity {string = 1}: its string ("" if absent). */
static struct fq_value *qty_of(struct rd *r, const struct field *f)
{
    struct rd s = sub(r, f);
    struct field e;
    struct fq_value *q = NULL;
    while (next(&s, &e)) {
        if (e.num == 1 && e.wt == 2) {
            fq_value_free(q);
            q = str_of(&s, &e);
        }
    }
    join(r, &s);
    return q ? q : fq_value_str("");
}

/* intstr.IntOrString: the int (type 0) or the string (type 1); NULL for
 * 0 or "" (absent: gogo writes the struct even when unset, and the server
 * defaults it, as a Service's targetPort to its port). */
static struct fq_value *ios_of(struct rd *r, const struct field *f)
{
    struct rd s = sub(r, f);
    struct field e;
    uint64_t type = 0;
    int64_t iv = 0;
    struct fq_value *sv = NULL;
    while (next(&s, &e)) {
        if (e.num == 1 && e.wt == 0) {
            type = e.v;
        } else if (e.num == 2 && e.wt == 0) {
            iv = (int32_t)e.v;
        } else if (e.num == 3 && e.wt == 2) {
            fq_value_free(sv);
            sv = str_of(&s, &e);
        }
    }
    join(r, &s);
    if (type == 1 && sv && fq_value_as_str(sv)[0])
        return sv;
    fq_value_free(sv);
    return type == 0 && iv ? fq_value_int(iv) : NULL;
}

/* A map<string, V> entry (key = 1, value = 2) into m. */
static void map_entry(struct rd *r, const struct field *f, struct fq_value *m,
                      enum ftype type)
{
    if (f->wt != 2) {
        bad(r, "a map entry that is not a message");
        return;
    }
    if (!count(r))
        return;
    struct rd s = sub(r, f);
    struct field e;
    char *key = NULL;
    struct fq_value *val = NULL;
    while (next(&s, &e)) {
        if (e.wt != 2)
            continue;
        if (e.num == 1) {
            free(key);
            if (!text_ok(e.data, e.len))
                bad(&s, "a key that is not UTF-8");
            key = fq_xstrndup((const char *)e.data, e.len);
        } else if (e.num == 2) {
            fq_value_free(val);
            val = type == MAP_BYTES ? b64_of(&e) :
                  type == MAP_QTY   ? qty_of(&s, &e) :
                                      str_of(&s, &e);
        }
    }
    join(r, &s);
    if (!r->rc)
        fq_map_set(m, key ? key : "", val ? val : fq_value_str(""));
    else
        fq_value_free(val);
    free(key);
}

static void message(struct rd *r, const struct pfield *table,
                    struct fq_value *o, int depth);

/* One field f of the message described by `table` into o. */
static void one_field(struct rd *r, const struct pfield *table,
                      const struct field *f, struct fq_value *o, int depth)
{
    const struct pfield *d = table;
    while (d->name && d->num != f->num)
        d++;
    if (!d->name)
        return; /* not a field flexq reads: skipped */
    bool rep = d->flags & REP;
    switch (d->type) {
    case STR:
        if (f->wt != 2)
            return;
        if (rep) {
            if (count(r))
                fq_seq_push(seq_at(o, d->name), str_of(r, f));
        } else if (f->len) {
            fq_map_set(o, d->name, str_of(r, f));
        }
        return;
    case INT:
    case BOOL:
        if (rep && d->type == INT && f->wt == 2) { /* packed */
            struct fq_value *s = seq_at(o, d->name);
            const unsigned char *p = f->data, *end = f->data + f->len;
            uint64_t v;
            while (p < end && !r->rc) {
                if (!varint(&p, end, &v)) {
                    bad(r, "a truncated packed varint");
                    return;
                }
                if (count(r))
                    fq_seq_push(s, fq_value_int((int64_t)v));
            }
            return;
        }
        if (f->wt != 0)
            return;
        {
            struct fq_value *v = d->type == BOOL ? fq_value_bool(f->v != 0) :
                                                   fq_value_int((int64_t)f->v);
            if (rep) {
                if (count(r))
                    fq_seq_push(seq_at(o, d->name), v);
                else
                    fq_value_free(v);
            } else if (f->v || (d->flags & KEEP0)) {
                fq_map_set(o, d->name, v);
            } else {
                fq_value_free(v);
                fq_map_del(o, d->name);
            }
        }
        return;
    case QTY:
        if (f->wt == 2)
            fq_map_set(o, d->name, qty_of(r, f));
        return;
    case IOS:
        if (f->wt == 2) {
            struct fq_value *v = ios_of(r, f);
            if (v)
                fq_map_set(o, d->name, v);
        }
        return;
    case MAP_STR:
    case MAP_BYTES:
    case MAP_QTY:
        map_entry(r, f, fq_map_ensure_map(o, d->name), (enum ftype)d->type);
        return;
    case MSG:
    case INLINE: {
        if (f->wt != 2)
            return;
        if (depth >= MAX_DEPTH) {
            bad(r, "messages nested too deep");
            return;
        }
        struct fq_value *into;
        if (d->type == INLINE) {
            into = o;
        } else if (rep) {
            if (!count(r))
                return;
            struct fq_value *s = seq_at(o, d->name);
            fq_seq_push(s, fq_value_map());
            into = fq_seq_at(s, fq_value_len(s) - 1);
        } else {
            /* a message given twice merges, as protobuf merges it */
            into = fq_map_ensure_map(o, d->name);
        }
        struct rd s = sub(r, f);
        message(&s, d->msg, into, depth + 1);
        join(r, &s);
        return;
    }
    default:
        return;
    }
}

static void message(struct rd *r, const struct pfield *table,
                    struct fq_value *o, int depth)
{
    struct field f;
    while (next(r, &f))
        one_field(r, table, &f, o, depth);
}

struct kind_msg {
    const char *api_version, *kind;
    const struct pfield *table;
};

static const struct kind_msg KINDS[] = {{"v1", "ConfigMap", CONFIG_MAP},
                                        {"v1", "Namespace", NAMESPACE},
                                        {"v1", "Secret", SECRET},
                                        {"v1", "Pod", POD},
                                        {"v1", "Service", SERVICE},
                                        {"batch/v1", "Job", JOB},
                                        {NULL, NULL, NULL}};

/* The object message of the kind k. */
static struct fq_value *object(struct rd *r, const struct kind_msg *k)
{
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "apiVersion", fq_value_str(k->api_version));
    fq_map_set(o, "kind", fq_value_str(k->kind));
    message(r, k->table, o, 0);
    return o;
}

int fq_kpb_decode(const void *data, size_t len, struct fq_value **out,
                  struct fq_err *err)
{
    *out = NULL;
    if (len > FQ_KPB_MAX_BYTES)
        return fq_err_set(err, FQ_ELIMIT, "protobuf body: more than %d bytes",
                          FQ_KPB_MAX_BYTES);
    if (len < 4 || memcmp(data, "k8s\0", 4) != 0)
        return fq_err_set(err, FQ_EPARSE,
                          "protobuf body: no \"k8s\\0\" magic prefix");
    const unsigned char *base = data;
    struct rd r = {base, base + 4, base + len, 0, err, 0};
    struct field f;
    char *av = NULL, *kind = NULL;
    const unsigned char *raw = NULL;
    size_t raw_len = 0;
    bool encoded = false;
    while (next(&r, &f)) {
        if (f.wt != 2)
            continue;
        if (f.num == 1) { /* typeMeta {apiVersion = 1, kind = 2} */
            struct rd s = sub(&r, &f);
            struct field e;
            while (next(&s, &e)) {
                if (e.wt != 2)
                    continue;
                char **dst = e.num == 1 ? &av : e.num == 2 ? &kind : NULL;
                if (dst) {
                    free(*dst);
                    *dst = fq_xstrndup((const char *)e.data, e.len);
                }
            }
            join(&r, &s);
        } else if (f.num == 2) {
            raw = f.data;
            raw_len = f.len;
        } else if (f.num == 3 && f.len) {
            encoded = true; /* contentEncoding (e.g. gzip): not read */
        }
    }
    int rc = r.rc;
    const struct kind_msg *k = KINDS;
    while (
        rc == 0 && k->kind &&
        !(av && kind && !strcmp(av, k->api_version) && !strcmp(kind, k->kind)))
        k++;
    if (rc == 0 && (encoded || !k->kind))
        rc = fq_err_set(err, FQ_EUNSUPPORTED,
                        "protobuf bodies of %s %s are not supported; send "
                        "application/json",
                        av ? av : "(no apiVersion)", kind ? kind : "(no kind)");
    if (rc == 0) {
        /* No raw field: an empty message (an offset from NULL is UB). */
        static const unsigned char empty[1];
        const unsigned char *rp = raw ? raw : empty;
        struct rd s = {base, rp, rp + raw_len, r.entries, err, 0};
        struct fq_value *o = object(&s, k);
        if (s.rc) {
            rc = s.rc;
            fq_value_free(o);
        } else {
            *out = o;
        }
    }
    free(av);
    free(kind);
    return rc;
}
