/*
 * test_provcheck.c - Kueue's ProvisioningRequest admission check as the
 * provcheck controller plays it: request names and contents (managed
 * resources, parameters from the config and provreq.kueue.x-k8s.io/...
 * annotations, merged templates), podSetUpdates (consume annotations and
 * nodeSelector from provisioningClassDetails), backoffLimitCount 0
 * (Rejected at the first failure), maxRunDurationSeconds from an
 * annotation (CapacityRevoked), and cleanup when the workload ends.
 * With migrate_to_preferred_flavor: a request the reserved workload no
 * longer needs (its check dropped when it moved off the checked flavor)
 * is deleted while finished attempts stay; a request made for an earlier
 * reservation (moved to another flavor with the same check) is replaced
 * under a name no node still carries. After a restart, a request
 * restored without its workload is deleted, and so is one created later
 * for a workload that does not exist. A workload name too long for the
 * request name is cut to 253 characters with a hash.
 */
#include "capacity_testlib.h"

static const char *setup =
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: "
    "{name: dws}\nspec: {nodeLabels: {cloud.google.com/gke-nodepool: "
    "dws-pool}, tolerations: [{key: example.com/x, operator: Exists, "
    "effect: NoSchedule}]}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: "
    "{name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - "
    "coveredResources: [cpu, google.com/tpu]\n    flavors:\n    - name: "
    "dws\n      resources: [{name: cpu, nominalQuota: 1000}, {name: "
    "google.com/tpu, nominalQuota: 1000}]\n  admissionChecks: [dws-prov]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: "
    "{namespace: default, name: lq}\nspec: {clusterQueue: cq}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: AdmissionCheck\nmetadata: "
    "{name: dws-prov}\nspec:\n  controllerName: "
    "kueue.x-k8s.io/provisioning-request\n  parameters: {apiGroup: "
    "kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: cfg}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ProvisioningRequestConfig\n"
    "metadata: {name: cfg}\nspec:\n  provisioningClassName: "
    "queued-provisioning.gke.io\n  managedResources: [google.com/tpu]\n  "
    "parameters: {team: ml}\n  retryStrategy: {backoffLimitCount: 0}\n  "
    "podSetUpdates:\n    nodeSelector:\n    - {key: example.com/eta, "
    "valueFromProvisioningClassDetail: flexq.dev/eta}\n---\n"
    "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\nmetadata: {name: "
    "dws-pool}\nspec: {machineType: ct6e-standard-4t, tpuTopology: 4x4, "
    "initialNodeCount: 0, flexStart: true, queuedProvisioning: {enabled: "
    "true}, autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: "
    "4}}\n---\n"
    "apiVersion: flexq.dev/v1alpha1\nkind: CapacityModel\nmetadata: {name: "
    "sim}\nspec:\n  zones:\n  - name: us-east5-b\n    machineTypes:\n    - "
    "name: ct6e-standard-4t\n      bootSeconds: 30\n      onDemand: {hosts: "
    "8}\n      flexStart: {waitSeconds: WAIT, maxWaitSeconds: 300}\n";

static void workload(struct fq_engine *e, const char *name,
                     const char *annotations, int64_t now)
{
    char buf[2048];
    snprintf(
        buf, sizeof(buf),
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: "
        "{namespace: default, name: %s, annotations: {%s}}\nspec:\n  "
        "queueName: lq\n  podSets:\n  - name: head\n    count: 1\n    "
        "template: {spec: {containers: [{name: h, image: x, resources: "
        "{requests: {cpu: \"2\"}}}]}}\n  - name: workers\n    count: "
        "4\n    template:\n      spec:\n        containers:\n        - "
        "name: w\n          image: x\n          resources:\n            requests: {cpu: "
        "\"8\"}\n            limits: {google.com/tpu: \"4\"}\n",
        name, annotations);
    ct_apply(e, buf, now);
}

static struct fq_engine *start(const char *wait)
{
    struct fq_engine *e = ct_engine(true, true);
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", setup);
    char *w = strstr(buf, "WAIT");
    char tail[256];
    snprintf(tail, sizeof(tail), "%s", w + 4);
    snprintf(w, sizeof(buf) - (size_t)(w - buf), "%s%s", wait, tail);
    ct_apply(e, buf, CT0);
    return e;
}

static const struct fq_value *check(const struct fq_value *wl)
{
    return fq_seq_at(fq_value_path(wl, "status.admissionChecks"), 0);
}

static void test_request_and_ready(void **state)
{
    (void)state;
    struct fq_engine *e = start("60");
    workload(e, "wl",
             "provreq.kueue.x-k8s.io/maxRunDurationSeconds: \"600\", "
             "unrelated.example.com/x: y",
             CT0);
    ct_run_to(e, CT0 + 1 * SEC);
    const struct fq_value *r =
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-dws-prov-1");
    assert_non_null(r);
    assert_int_equal(
        fq_objstore_count(fq_engine_store(e), FQ_KIND_PROVISIONINGREQUEST), 1);
    assert_string_equal(fq_value_path_str(r, "spec.parameters.team", ""), "ml");
    assert_string_equal(
        fq_value_path_str(r, "spec.parameters.maxRunDurationSeconds", ""),
        "600");
    assert_null(fq_value_path(r, "spec.parameters.x"));
    /* only the podset with the managed resource */
    const struct fq_value *sets = fq_value_path(r, "spec.podSets");
    assert_int_equal(fq_value_len(sets), 1);
    const struct fq_value *s0 = fq_seq_at(sets, 0);
    assert_int_equal(fq_value_path_int(s0, "count", 0), 4);
    assert_string_equal(fq_value_path_str(s0, "podTemplateRef.name", ""),
                        "ppt-wl-dws-prov-1-workers");
    assert_string_equal(
        fq_value_as_str(fq_map_get(fq_value_path(r, "metadata.annotations"),
                                   "flexq.dev/attempt")),
        "1");
    const char *uid = fq_value_path_str(r, "metadata.uid", "");
    assert_int_equal(strlen(uid), 21);
    assert_int_equal(strspn(uid, "0123456789abcdef"), 16);
    assert_string_equal(uid + 16, "-preq");
    /* flavor merged in, limits copied to requests */
    const struct fq_value *tspec = fq_value_path(s0, "template.spec");
    assert_string_equal(
        fq_value_as_str(fq_map_get(fq_map_get(tspec, "nodeSelector"),
                                   "cloud.google.com/gke-nodepool")),
        "dws-pool");
    assert_string_equal(
        fq_value_path_str(fq_seq_at(fq_map_get(tspec, "tolerations"), 0), "key",
                          ""),
        "example.com/x");
    const struct fq_value *req = fq_value_path(
        fq_seq_at(fq_map_get(tspec, "containers"), 0), "resources.requests");
    assert_string_equal(fq_value_as_str(fq_map_get(req, "google.com/tpu")),
                        "4");
    assert_string_equal(fq_value_path_str(r, "metadata.ownerReferences", "x"),
                        "x"); /* a list, not a string */
    assert_int_equal(ct_count_events(e, "ProvisioningRequestCreated"), 1);

    /* ETA 60 s, boot 30 s: Ready at 90 s with podSetUpdates */
    ct_run_to(e, CT0 + 91 * SEC);
    const struct fq_value *wl = ct_get(e, FQ_KIND_WORKLOAD, "default", "wl");
    assert_string_equal(fq_value_path_str(check(wl), "state", ""), "Ready");
    const struct fq_value *up =
        fq_seq_at(fq_value_path(check(wl), "podSetUpdates"), 0);
    assert_string_equal(fq_value_path_str(up, "name", ""), "workers");
    assert_string_equal(
        fq_value_as_str(fq_map_get(fq_map_get(up, "annotations"),
                                   "autoscaling.x-k8s.io/"
                                   "consume-provisioning-request")),
        "wl-dws-prov-1");
    assert_string_equal(fq_value_as_str(fq_map_get(
                            fq_map_get(up, "nodeSelector"), "example.com/eta")),
                        "2026-01-01T00:01:00Z");
    assert_string_equal(ct_cond(wl, "Admitted", "status"), "True");
    assert_int_equal(ct_count_events(e, "AdmissionCheckUpdated"), 1);

    /* podSetUpdates that drifted (another value, an extra selector key)
     * are put back at the workload's next change */
    struct fq_objstore *s = fq_engine_store(e);
    struct fq_value *o = fq_objstore_edit(s, FQ_KIND_WORKLOAD, "default", "wl");
    struct fq_value *sel = fq_value_path(
        fq_seq_at(fq_value_path(
                      fq_seq_at(fq_value_path(o, "status.admissionChecks"), 0),
                      "podSetUpdates"),
                  0),
        "nodeSelector");
    fq_map_set(sel, "example.com/eta", fq_value_str("stale"));
    fq_map_set(sel, "example.com/extra", fq_value_str("x"));
    assert_int_equal(fq_objstore_update(s, o, true, NULL, NULL, NULL), 0);
    ct_run_to(e, CT0 + 92 * SEC);
    wl = ct_get(e, FQ_KIND_WORKLOAD, "default", "wl");
    up = fq_seq_at(fq_value_path(check(wl), "podSetUpdates"), 0);
    assert_string_equal(fq_value_as_str(fq_map_get(
                            fq_map_get(up, "nodeSelector"), "example.com/eta")),
                        "2026-01-01T00:01:00Z");
    assert_int_equal(fq_value_len(fq_map_get(up, "nodeSelector")), 1);
    assert_string_equal(fq_value_path_str(check(wl), "state", ""), "Ready");

    /* maxRunDurationSeconds 600 from the annotation: revoked at 690 s */
    ct_run_to(e, CT0 + 689 * SEC);
    assert_int_equal(ct_count_nodes(e, "dws-pool"), 4);
    ct_run_to(e, CT0 + 691 * SEC);
    r = ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-dws-prov-1");
    assert_string_equal(ct_cond(r, "CapacityRevoked", "status"), "True");
    assert_int_equal(ct_count_nodes(e, "dws-pool"), 0);
    wl = ct_get(e, FQ_KIND_WORKLOAD, "default", "wl");
    assert_false(fq_value_path_bool(wl, "spec.active", true));
    fq_engine_free(e);
}

static void test_no_retry_and_cleanup(void **state)
{
    (void)state;
    /* waits longer than the max wait: Failed/Expired at 300 s, and with
     * backoffLimitCount 0 the check is Rejected at once */
    struct fq_engine *e = start("100000");
    workload(e, "wl", "", CT0);
    workload(e, "done", "", CT0);
    ct_run_to(e, CT0 + 2 * SEC);
    assert_non_null(
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "done-dws-prov-1"));
    /* a finished workload's requests go */
    struct fq_value *d = fq_objstore_edit(fq_engine_store(e), FQ_KIND_WORKLOAD,
                                          "default", "done");
    struct fq_value *cond = fq_value_map();
    fq_map_set(cond, "type", fq_value_str("Finished"));
    fq_map_set(cond, "status", fq_value_str("True"));
    fq_map_set(cond, "reason", fq_value_str("Succeeded"));
    fq_map_set(cond, "lastTransitionTime",
               fq_value_str("2026-01-01T00:00:02Z"));
    fq_seq_push(fq_value_path(d, "status.conditions"), cond);
    assert_int_equal(
        fq_objstore_update(fq_engine_store(e), d, true, NULL, NULL, NULL), 0);
    ct_run_to(e, CT0 + 3 * SEC);
    assert_null(
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "done-dws-prov-1"));

    ct_run_to(e, CT0 + 301 * SEC);
    const struct fq_value *r =
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-dws-prov-1");
    assert_string_equal(ct_cond(r, "Failed", "reason"), "Expired");
    const struct fq_value *wl = ct_get(e, FQ_KIND_WORKLOAD, "default", "wl");
    assert_false(fq_value_path_bool(wl, "spec.active", true));
    assert_string_equal(ct_cond(wl, "Evicted", "reason"),
                        "DeactivatedDueToAdmissionCheck");
    ct_run_to(e, CT0 + 3600 * SEC);
    assert_null(
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-dws-prov-2"));
    /* a deleted workload's requests go too */
    assert_int_equal(fq_engine_delete(e, FQ_KIND_WORKLOAD, "default", "wl",
                                      CT0 + 3601 * SEC, NULL),
                     0);
    ct_run_to(e, CT0 + 3602 * SEC);
    assert_int_equal(
        fq_objstore_count(fq_engine_store(e), FQ_KIND_PROVISIONINGREQUEST), 0);
    fq_engine_free(e);
}

/* Two flavors, FIRST then SECOND, each with its node pool; the check on
 * CHECKED flavors; flex-start after WAIT s, max wait MAXWAIT s. */
static const char *two_flavors =
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: "
    "{name: FIRST}\nspec: {nodeLabels: {cloud.google.com/gke-nodepool: "
    "FIRST-pool}}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: "
    "{name: SECOND}\nspec: {nodeLabels: {cloud.google.com/gke-nodepool: "
    "SECOND-pool}}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: "
    "{name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - "
    "coveredResources: [cpu, google.com/tpu]\n    flavors:\n    - name: "
    "FIRST\n      resources: [{name: cpu, nominalQuota: 100}, {name: "
    "google.com/tpu, nominalQuota: 16}]\n    - name: SECOND\n      "
    "resources: [{name: cpu, nominalQuota: 1000}, {name: google.com/tpu, "
    "nominalQuota: 1000}]\n  admissionChecksStrategy:\n    "
    "admissionChecks: [{name: dws-prov, onFlavors: [CHECKED]}]\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: "
    "{namespace: default, name: lq}\nspec: {clusterQueue: cq}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: AdmissionCheck\nmetadata: "
    "{name: dws-prov}\nspec:\n  controllerName: "
    "kueue.x-k8s.io/provisioning-request\n  parameters: {apiGroup: "
    "kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: cfg}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ProvisioningRequestConfig\n"
    "metadata: {name: cfg}\nspec:\n  provisioningClassName: "
    "queued-provisioning.gke.io\n  managedResources: [google.com/tpu]\n"
    "---\n"
    "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\nmetadata: {name: "
    "FIRST-pool}\nspec: {machineType: ct6e-standard-4t, tpuTopology: 4x4, "
    "initialNodeCount: 0, flexStart: FIRSTQ, queuedProvisioning: {enabled: "
    "FIRSTQ}, autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: "
    "4}}\n---\n"
    "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\nmetadata: {name: "
    "SECOND-pool}\nspec: {machineType: ct6e-standard-4t, tpuTopology: 4x4, "
    "initialNodeCount: 0, flexStart: true, queuedProvisioning: {enabled: "
    "true}, autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: "
    "4}}\n---\n"
    "apiVersion: flexq.dev/v1alpha1\nkind: CapacityModel\nmetadata: {name: "
    "sim}\nspec:\n  zones:\n  - name: us-east5-b\n    machineTypes:\n    - "
    "name: ct6e-standard-4t\n      bootSeconds: 30\n      onDemand: {hosts: "
    "8}\n      flexStart: {waitSeconds: WAIT, maxWaitSeconds: MAXWAIT}\n";

/* Replaces every `key` in buf (of size n) by `val`. */
static void subst(char *buf, size_t n, const char *key, const char *val)
{
    for (char *p = strstr(buf, key); p; p = strstr(p + strlen(val), key)) {
        size_t tail = strlen(p + strlen(key));
        assert_true((size_t)(p - buf) + strlen(val) + tail < n);
        memmove(p + strlen(val), p + strlen(key), tail + 1);
        memcpy(p, val, strlen(val));
    }
}

static struct fq_engine *start_migrating(const char *first, const char *second,
                                         const char *checked, bool first_queued,
                                         const char *wait, const char *maxwait)
{
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.seed = 7;
    cfg.no_pods = true;
    cfg.sim_provider = true;
    cfg.policy = fq_policy_kueue();
    cfg.policy.migrate_to_preferred_flavor = true;
    struct fq_engine *e = fq_engine_new(&cfg);
    char buf[8192];
    snprintf(buf, sizeof(buf), "%s", two_flavors);
    subst(buf, sizeof(buf), "FIRSTQ", first_queued ? "true" : "false");
    subst(buf, sizeof(buf), "FIRST", first);
    subst(buf, sizeof(buf), "SECOND", second);
    subst(buf, sizeof(buf), "CHECKED", checked);
    subst(buf, sizeof(buf), "MAXWAIT", maxwait);
    subst(buf, sizeof(buf), "WAIT", wait);
    ct_apply(e, buf, CT0);
    return e;
}

static const char *tpu_flavor(const struct fq_value *wl)
{
    const struct fq_value *psa =
        fq_value_path(wl, "status.admission.podSetAssignments");
    for (size_t i = 0; i < fq_value_len(psa); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(psa, i), "name", ""),
                    "workers"))
            return fq_value_as_str(fq_map_get(
                fq_map_get(fq_seq_at(psa, i), "flavors"), "google.com/tpu"));
    return NULL;
}

static const char *req_pool(const struct fq_value *req)
{
    return fq_value_as_str(fq_map_get(
        fq_value_path(fq_seq_at(fq_value_path(req, "spec.podSets"), 0),
                      "template.spec.nodeSelector"),
        "cloud.google.com/gke-nodepool"));
}

/* Nodes whose provisioning-request annotation is `key`. */
static size_t nodes_of(struct fq_engine *e, const char *key)
{
    const struct fq_object **list;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_NODE, NULL, &list);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *v = fq_value_as_str(
            fq_map_get(fq_value_path(list[i]->obj, "metadata.annotations"),
                       "flexq.dev/provisioning-request"));
        k += v && !strcmp(v, key);
    }
    free(list);
    return k;
}

static void test_migration_deletes_unneeded_request(void **state)
{
    (void)state;
    /* Plan A on-demand (16 TPU), Plan B dws behind the check; flex-start
     * never comes within the 300 s max wait, so attempt 1 fails. */
    struct fq_engine *e =
        start_migrating("on-demand", "dws", "dws", false, "100000", "300");
    workload(e, "wl-1", "", CT0);
    workload(e, "wl-2", "", CT0);
    ct_run_to(e, CT0 + 1 * SEC);
    assert_string_equal(
        tpu_flavor(ct_get(e, FQ_KIND_WORKLOAD, "default", "wl-1")),
        "on-demand");
    const struct fq_value *wl = ct_get(e, FQ_KIND_WORKLOAD, "default", "wl-2");
    assert_string_equal(tpu_flavor(wl), "dws");
    assert_string_equal(fq_value_path_str(check(wl), "state", ""), "Pending");
    /* kept once made: the check is listed while the quota is reserved */
    assert_non_null(
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-2-dws-prov-1"));

    /* attempt 1 fails at 300 s: Retry, eviction, 60 s backoff, back on
     * dws (on-demand is still full) with attempt 2 */
    ct_run_to(e, CT0 + 400 * SEC);
    const struct fq_value *r1 =
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-2-dws-prov-1");
    assert_string_equal(ct_cond(r1, "Failed", "status"), "True");
    assert_non_null(
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-2-dws-prov-2"));
    wl = ct_get(e, FQ_KIND_WORKLOAD, "default", "wl-2");
    assert_string_equal(tpu_flavor(wl), "dws");
    assert_string_equal(ct_cond(wl, "Admitted", "status"), "False");

    /* Plan A frees up: wl-2 moves there, the dws check is dropped, and
     * the live attempt 2 goes; the failed attempt 1 stays (invariant 2) */
    assert_int_equal(fq_engine_delete(e, FQ_KIND_WORKLOAD, "default", "wl-1",
                                      CT0 + 400 * SEC, NULL),
                     0);
    ct_run_to(e, CT0 + 401 * SEC);
    wl = ct_get(e, FQ_KIND_WORKLOAD, "default", "wl-2");
    assert_string_equal(tpu_flavor(wl), "on-demand");
    assert_int_equal(fq_value_len(fq_value_path(wl, "status.admissionChecks")),
                     0);
    assert_string_equal(ct_cond(wl, "Admitted", "status"), "True");
    assert_null(
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-2-dws-prov-2"));
    assert_non_null(
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-2-dws-prov-1"));
    assert_int_equal(
        fq_objstore_count(fq_engine_store(e), FQ_KIND_PROVISIONINGREQUEST), 1);
    /* and nothing comes back later */
    ct_run_to(e, CT0 + 3600 * SEC);
    assert_int_equal(
        fq_objstore_count(fq_engine_store(e), FQ_KIND_PROVISIONINGREQUEST), 1);
    assert_int_equal(ct_count_nodes(e, "dws-pool"), 0);
    fq_engine_free(e);
}

static void test_moved_reservation_replaces_request(void **state)
{
    (void)state;
    /* Both flavors carry the check: moving from b to a keeps the check
     * Pending, but b's request (b-pool) is no use on a. Flex-start comes
     * after 10 s, nodes boot for 30 s. */
    struct fq_engine *e = start_migrating("a", "b", "a, b", true, "10", "3000");
    workload(e, "wl-1", "", CT0);
    workload(e, "wl-2", "", CT0);
    ct_run_to(e, CT0 + 1 * SEC);
    assert_string_equal(
        tpu_flavor(ct_get(e, FQ_KIND_WORKLOAD, "default", "wl-1")), "a");
    assert_string_equal(
        tpu_flavor(ct_get(e, FQ_KIND_WORKLOAD, "default", "wl-2")), "b");
    const struct fq_value *r =
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-2-dws-prov-1");
    assert_non_null(r);
    assert_string_equal(req_pool(r), "b-pool");
    /* b-pool's slice boots for wl-2-dws-prov-1 */
    ct_run_to(e, CT0 + 20 * SEC);
    assert_int_equal(nodes_of(e, "default/wl-2-dws-prov-1"), 4);

    assert_int_equal(fq_engine_delete(e, FQ_KIND_WORKLOAD, "default", "wl-1",
                                      CT0 + 20 * SEC, NULL),
                     0);
    ct_run_to(e, CT0 + 21 * SEC);
    const struct fq_value *wl = ct_get(e, FQ_KIND_WORKLOAD, "default", "wl-2");
    assert_string_equal(tpu_flavor(wl), "a");
    assert_string_equal(fq_value_path_str(check(wl), "state", ""), "Pending");
    /* replaced: the name wl-2-dws-prov-1 is still on b-pool's nodes, so
     * the request for a is attempt 2 */
    assert_null(
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-2-dws-prov-1"));
    r = ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-2-dws-prov-2");
    assert_non_null(r);
    assert_string_equal(req_pool(r), "a-pool");
    assert_int_equal(
        fq_objstore_count(fq_engine_store(e), FQ_KIND_PROVISIONINGREQUEST), 1);
    assert_int_equal(ct_count_events(e, "ProvisioningRequestCreated"), 3);
    /* a stable state: no further churn */
    ct_run_to(e, CT0 + 25 * SEC);
    assert_non_null(
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "wl-2-dws-prov-2"));
    assert_int_equal(ct_count_events(e, "ProvisioningRequestCreated"), 3);
    fq_engine_free(e);
}

/* A copy of engine e's stored objects, as flexqd restores them after a
 * restart, but for the workload `skip`. */
static struct fq_engine *restart(struct fq_engine *e, const char *skip)
{
    struct fq_engine *e2 = ct_engine(true, true);
    for (int k = FQ_KIND_NONE + 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_object **list;
        size_t n =
            fq_objstore_list(fq_engine_store(e), (enum fq_kind)k, NULL, &list);
        for (size_t i = 0; i < n; i++) {
            if (k == FQ_KIND_WORKLOAD && !strcmp(list[i]->name, skip))
                continue;
            assert_int_equal(fq_objstore_restore(fq_engine_store(e2),
                                                 fq_value_clone(list[i]->obj),
                                                 NULL, NULL),
                             0);
        }
        free(list);
    }
    return e2;
}

static void test_orphans_after_restart(void **state)
{
    (void)state;
    struct fq_engine *e = start("60");
    workload(e, "kept", "", CT0);
    workload(e, "lost", "", CT0);
    ct_run_to(e, CT0 + 1 * SEC);
    assert_non_null(
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "kept-dws-prov-1"));
    assert_non_null(
        ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", "lost-dws-prov-1"));
    /* restored without its workload: the first run deletes the request,
     * and only that one */
    struct fq_engine *e2 = restart(e, "lost");
    fq_engine_free(e);
    ct_run_to(e2, CT0 + 2 * SEC);
    assert_null(
        ct_get(e2, FQ_KIND_PROVISIONINGREQUEST, "default", "lost-dws-prov-1"));
    assert_non_null(
        ct_get(e2, FQ_KIND_PROVISIONINGREQUEST, "default", "kept-dws-prov-1"));
    assert_int_equal(
        fq_objstore_count(fq_engine_store(e2), FQ_KIND_PROVISIONINGREQUEST), 1);
    /* later, a request naming a workload that does not exist goes too */
    struct fq_value *o = fq_value_clone(
        ct_get(e2, FQ_KIND_PROVISIONINGREQUEST, "default", "kept-dws-prov-1"));
    struct fq_value *md = fq_map_get(o, "metadata");
    fq_map_set(md, "name", fq_value_str("ghost-dws-prov-1"));
    fq_map_del(md, "uid");
    fq_map_del(md, "resourceVersion");
    fq_map_set(fq_map_get(md, "annotations"), "flexq.dev/workload",
               fq_value_str("ghost"));
    assert_int_equal(fq_objstore_create(fq_engine_store(e2), o, CT0 + 3 * SEC,
                                        "ghost-uid", NULL, NULL),
                     0);
    ct_run_to(e2, CT0 + 4 * SEC);
    assert_null(
        ct_get(e2, FQ_KIND_PROVISIONINGREQUEST, "default", "ghost-dws-prov-1"));
    assert_non_null(
        ct_get(e2, FQ_KIND_PROVISIONINGREQUEST, "default", "kept-dws-prov-1"));
    fq_engine_free(e2);
}

/* A workload name too long for <workload>-<check>-<attempt>: the request
 * name is cut to 253 characters with a hash, the attempt kept last, and
 * its podTemplateRef is built from it. */
static void test_long_name(void **state)
{
    (void)state;
    struct fq_engine *e = start("60");
    char name[246];
    memset(name, 'w', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    workload(e, name, "", CT0);
    ct_run_to(e, CT0 + 1 * SEC);
    const struct fq_object **list;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_PROVISIONINGREQUEST,
                                NULL, &list);
    assert_int_equal(n, 1);
    const char *req = list[0]->name;
    assert_int_equal(strlen(req), 253);
    assert_int_equal(strncmp(req, name, 200), 0);
    assert_string_equal(req + 251, "-1");
    char ppt[300];
    snprintf(ppt, sizeof(ppt), "ppt-%s-workers", req);
    assert_string_equal(
        fq_value_path_str(
            fq_seq_at(fq_value_path(list[0]->obj, "spec.podSets"), 0),
            "podTemplateRef.name", ""),
        ppt);
    free(list);
    fq_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_and_ready),
        cmocka_unit_test(test_no_retry_and_cleanup),
        cmocka_unit_test(test_migration_deletes_unneeded_request),
        cmocka_unit_test(test_moved_reservation_replaces_request),
        cmocka_unit_test(test_orphans_after_restart),
        cmocka_unit_test(test_long_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
