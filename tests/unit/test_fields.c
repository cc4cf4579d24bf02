/*
 * test_fields.c - the OpenAPI schemas of the kinds whose decoders read a
 * field table (objects/fields.h: Kueue's kinds, ProvisioningRequest,
 * RayJob, RayCluster, and Job, ConfigMap, Pod, Node, Event, Namespace)
 * describe exactly what the decoders check.
 *
 * For every field the published schema names (but the read-only ones the
 * server sets), a valid object of the kind gets a value of the wrong type
 * at that path (a mapping for a string, a string for a mapping or a list,
 * ...), and validation must report an error at that very path: a field
 * the schema describes but the decoder does not read fails here. The
 * other way round, a decoder reads a field only through a row of its
 * kind (fields.c asserts the kind in debug builds, scripts/check-fields.py
 * refuses a getter called with a literal key), and the rows are what the
 * schema is made of. Also: each row's limits and enum values appear in
 * the schema, and the decoders' messages for them are unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/objects.h"
#include "flexq/schema.h"
#include "flexq/value.h"

static struct fq_value *J(const char *text)
{
    struct fq_limits lim = fq_limits_default();
    struct fq_value *v = NULL;
    assert_int_equal(fq_json_parse(text, strlen(text), NULL, &lim, &v, NULL),
                     0);
    return v;
}

#define TEMPLATE                                               \
 "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"," \
 "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"

/* A valid object of each kind, the base every probe starts from. */
static const struct base {
    enum fq_kind kind;
    const char *json;
} BASES[] = {
    {FQ_KIND_RESOURCEFLAVOR,
     "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"ResourceFlavor\","
     "\"metadata\":{\"name\":\"f\"},\"spec\":{\"nodeLabels\":{\"a\":\"b\"}}}"},
    {FQ_KIND_CLUSTERQUEUE,
     "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"ClusterQueue\","
     "\"metadata\":{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},"
     "\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{"
     "\"name\":\"f\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":4}]}"
     "]}]}}"},
    {FQ_KIND_COHORT,
     "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Cohort\","
     "\"metadata\":{\"name\":\"co\"},\"spec\":{}}"},
    {FQ_KIND_LOCALQUEUE,
     "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"LocalQueue\","
     "\"metadata\":{\"name\":\"lq\",\"namespace\":\"default\"},"
     "\"spec\":{\"clusterQueue\":\"cq\"}}"},
    {FQ_KIND_WORKLOAD,
     "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
     "\"metadata\":{\"name\":\"w\",\"namespace\":\"default\"},\"spec\":{"
     "\"queueName\":\"lq\",\"podSets\":[{\"name\":\"main\",\"count\":1,"
     "\"template\":" TEMPLATE "}]}}"},
    {FQ_KIND_WORKLOADPRIORITYCLASS,
     "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
     "\"WorkloadPriorityClass\",\"metadata\":{\"name\":\"p\"},\"value\":1}"},
    {FQ_KIND_ADMISSIONCHECK,
     "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"AdmissionCheck\","
     "\"metadata\":{\"name\":\"ac\"},\"spec\":{\"controllerName\":"
     "\"kueue.x-k8s.io/provisioning-request\"}}"},
    {FQ_KIND_PROVISIONINGREQUESTCONFIG,
     "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
     "\"ProvisioningRequestConfig\",\"metadata\":{\"name\":\"prc\"},"
     "\"spec\":{\"provisioningClassName\":\"queued-provisioning.gke.io\"}}"},
    {FQ_KIND_PROVISIONINGREQUEST,
     "{\"apiVersion\":\"autoscaling.x-k8s.io/v1\",\"kind\":"
     "\"ProvisioningRequest\",\"metadata\":{\"name\":\"pr\",\"namespace\":"
     "\"default\"},\"spec\":{\"provisioningClassName\":\"c\",\"podSets\":"
     "[{\"podTemplateRef\":{\"name\":\"t\"},\"count\":1}]}}"},
    {FQ_KIND_RAYJOB,
     "{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayJob\",\"metadata\":{"
     "\"name\":\"rj\",\"namespace\":\"default\"},\"spec\":{\"entrypoint\":"
     "\"python x.py\",\"rayClusterSpec\":{\"headGroupSpec\":{\"template\":" TEMPLATE
     "},\"workerGroupSpecs\":[{\"groupName\":\"w\",\"replicas\":1,"
     "\"template\":" TEMPLATE "}]}}}"},
    {FQ_KIND_JOB,
     "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":"
     "\"j\",\"namespace\":\"default\"},\"spec\":{\"template\":{\"spec\":{"
     "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
     "\"image\":\"i\"}]}}}}"},
    {FQ_KIND_CONFIGMAP,
     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
     "\"cm\",\"namespace\":\"default\"},\"data\":{\"a\":\"b\"}}"},
    {FQ_KIND_POD,
     "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
     "\"p\",\"namespace\":\"default\"},\"spec\":{\"containers\":[{"
     "\"name\":\"c\",\"image\":\"i\"}]}}"},
    {FQ_KIND_NODE,
     "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
     "\"n\"}}"},
    {FQ_KIND_EVENT,
     "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
     "\"e\",\"namespace\":\"default\"},\"involvedObject\":{\"kind\":"
     "\"Pod\",\"name\":\"p\"}}"},
    {FQ_KIND_NAMESPACE,
     "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{"
     "\"name\":\"team\"}}"},
    {FQ_KIND_RAYCLUSTER,
     "{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayCluster\",\"metadata\":{"
     "\"name\":\"rc\",\"namespace\":\"default\"},\"spec\":{\"headGroupSpec\":"
     "{\"template\":" TEMPLATE "},\"workerGroupSpecs\":[{\"groupName\":"
     "\"w\",\"template\":" TEMPLATE "}]}}"},
};

/* "a.b[3].c[0]" -> "a.b[].c[]" */
static void strip_indices(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; in[i] && o + 1 < cap; i++) {
        out[o++] = in[i];
        if (in[i] == '[') {
            while (in[i + 1] && in[i + 1] != ']')
                i++;
        }
    }
    out[o] = '\0';
}

/* The node at the dotted path (segments ending "[]" step into the first
 * item of a list), made on the way: maps and one-item lists. Returns the
 * parent mapping and sets *key to the last segment (in buf). */
static struct fq_value *make_parent(struct fq_value *root, const char *path,
                                    char *buf, size_t cap, const char **key)
{
    snprintf(buf, cap, "%s", path);
    struct fq_value *at = root;
    char *seg = buf;
    for (char *dot; (dot = strchr(seg, '.')); seg = dot + 1) {
        *dot = '\0';
        size_t n = strlen(seg);
        bool list = n > 2 && !strcmp(seg + n - 2, "[]");
        if (list)
            seg[n - 2] = '\0';
        struct fq_value *next = fq_map_get(at, seg);
        if (list) {
            if (!next || next->type != FQ_V_SEQ) {
                fq_map_set(at, seg, fq_value_seq());
                next = fq_map_get(at, seg);
            }
            if (fq_value_len(next) == 0)
                fq_seq_push(next, fq_value_map());
            next = fq_seq_at(next, 0);
        } else if (!next || next->type != FQ_V_MAP) {
            next = fq_map_ensure_map(at, seg);
        }
        at = next;
    }
    *key = seg;
    return at;
}

/* A value of the wrong type for schema s. */
static struct fq_value *wrong_for(const struct fq_value *s)
{
    const char *t = fq_value_path_str(s, "type", "");
    if (!strcmp(t, "object") || !strcmp(t, "array"))
        return fq_value_str("not-a-collection");
    if (!strcmp(t, "integer") || !strcmp(t, "boolean"))
        return fq_value_str("not-a-number");
    struct fq_value *m = fq_value_map(); /* strings, quantities */
    fq_map_set(m, "x", fq_value_int(1));
    return m;
}

struct probe_stats {
    size_t probed, skipped;
};

static void probe(const struct base *b, const char *path,
                  const struct fq_value *s, struct probe_stats *st)
{
    if (fq_value_path_bool(s, "readOnly", false)) {
        st->skipped++;
        return;
    }
    struct fq_value *obj = J(b->json);
    char buf[256];
    const char *key;
    struct fq_value *parent = make_parent(obj, path, buf, sizeof(buf), &key);
    fq_map_set(parent, key, wrong_for(s));
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    fq_object_validate(obj, NULL, &errs);
    bool found = false;
    for (size_t i = 0; i < errs.n && !found; i++) {
        char p[FQ_ERR_PATH_MAX];
        strip_indices(errs.items[i].path, p, sizeof(p));
        found = !strcmp(p, path);
    }
    if (!found) {
        fprintf(stderr,
                "kind %d: %s is in the OpenAPI schema, but a wrong "
                "value there gives no error at it:\n",
                (int)b->kind, path);
        for (size_t i = 0; i < errs.n; i++)
            fprintf(stderr, "  %s: %s\n", errs.items[i].path,
                    errs.items[i].msg);
    }
    assert_true(found);
    st->probed++;
    fq_errlist_release(&errs);
    fq_value_free(obj);
}

/* Probes every property under schema s (at `path`). */
static void walk(const struct base *b, const char *path,
                 const struct fq_value *s, struct probe_stats *st)
{
    const struct fq_value *props = fq_map_get(s, "properties");
    for (size_t i = 0; props && i < props->u.map.n; i++) {
        const char *k = props->u.map.items[i].key;
        const struct fq_value *c = props->u.map.items[i].val;
        char p[256];
        snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", k);
        if (!*path && (!strcmp(k, "apiVersion") || !strcmp(k, "kind") ||
                       !strcmp(k, "metadata")))
            continue; /* the identity, checked by every decoder */
        probe(b, p, c, st);
        walk(b, p, c, st);
        const struct fq_value *items = fq_map_get(c, "items");
        if (items) {
            char q[260];
            snprintf(q, sizeof(q), "%s[]", p);
            walk(b, q, items, st);
        }
    }
}

static void test_schema_fields_are_validated(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(BASES) / sizeof(BASES[0]); i++) {
        const struct base *b = &BASES[i];
        struct fq_value *obj = J(b->json);
        struct fq_errlist errs;
        fq_errlist_init(&errs);
        if (fq_object_validate(obj, NULL, &errs) != 0)
            for (size_t e = 0; e < errs.n; e++)
                fprintf(stderr, "base %d: %s: %s\n", (int)b->kind,
                        errs.items[e].path, errs.items[e].msg);
        assert_int_equal(errs.n, 0);
        fq_errlist_release(&errs);
        fq_value_free(obj);
        struct fq_value *s = fq_schema_kind(b->kind, NULL);
        struct probe_stats st = {0, 0};
        walk(b, "", s, &st);
        /* every kind has fields described beyond its identity */
        assert_true(st.probed >= 2);
        fq_value_free(s);
    }
}

/* The rows' rules reach the schema, and the decoders' messages stay. */
static void test_schema_carries_rules(void **state)
{
    (void)state;
    struct fq_value *s = fq_schema_kind(FQ_KIND_CLUSTERQUEUE, NULL);
    const struct fq_value *spec = fq_value_path(s, "properties.spec");
    assert_int_equal(
        fq_value_path_int(spec, "properties.resourceGroups.maxItems", 0), 16);
    const struct fq_value *qs =
        fq_value_path(spec, "properties.queueingStrategy");
    assert_string_equal(fq_value_path_str(qs, "default", ""), "BestEffortFIFO");
    assert_int_equal(fq_value_len(fq_map_get(qs, "enum")), 2);
    const struct fq_value *req = fq_map_get(s, "required");
    assert_non_null(req);
    assert_string_equal(fq_value_as_str(fq_seq_at(req, 0)), "spec");
    assert_true(fq_value_path_bool(s, "properties.status.readOnly", false));
    fq_value_free(s);
    s = fq_schema_kind(FQ_KIND_RAYJOB, NULL);
    const struct fq_value *hosts =
        fq_value_path(s, "properties.spec.properties.rayClusterSpec.properties."
                         "workerGroupSpecs.items.properties.numOfHosts");
    assert_int_equal(fq_value_path_int(hosts, "minimum", 0), 1);
    assert_int_equal(fq_value_path_int(hosts, "default", 0), 1);
    fq_value_free(s);
    /* a limit from a row, with its old message */
    struct fq_value *o =
        J("{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
          "\"metadata\":{\"name\":\"w\",\"namespace\":\"d\"},\"spec\":{"
          "\"podSets\":[{\"count\":1,\"template\":" TEMPLATE "}],"
          "\"maximumExecutionTimeSeconds\":0}}");
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    assert_int_not_equal(fq_object_validate(o, NULL, &errs), 0);
    assert_int_equal(errs.n, 1);
    assert_string_equal(errs.items[0].path, "spec.maximumExecutionTimeSeconds");
    assert_string_equal(errs.items[0].msg,
                        "spec.maximumExecutionTimeSeconds: must be greater "
                        "than or equal to 1, not 0");
    fq_errlist_release(&errs);
    fq_value_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_fields_are_validated),
        cmocka_unit_test(test_schema_carries_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
