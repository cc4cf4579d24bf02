"""gcloud's container API, the HTTPS listener and the self reviews, with
plain HTTP from the standard library (no gcloud or kubectl needed, so it
runs everywhere; e2e_seed.py drives the real clients):

- the requests gcloud sends for the tutorial (bodies as captured with
  --log-http) create a Cluster and NodePools with the same fields;
  describe answers config.flexStart true; setSize, setAutoscaling,
  update and clusters.update change the NodePool; operations are DONE and
  can be read back; Google's error shape for 404 / 409 / 400 / 401 / 403,
  and a refused request changes nothing;
- HTTPS: the CA from /flexq/v1/tls verifies the serving certificate for
  127.0.0.1, the API answers the same there, and the CA survives a
  restart; `flexq config kubeconfig` and `flexq gcloud-config` write what
  the clients read;
- SelfSubjectAccessReview and SelfSubjectReview answer the token rules.
"""
import base64
import http.client
import json
import os
import ssl
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

ADMIN, DEV = "gke-admin-token-0123", "gke-dev-token-0123"
work = tempfile.mkdtemp(prefix="flexq-gke-")
tokens = os.path.join(work, "tokens")
with open(tokens, "w") as f:
    f.write("%s admin alice\n%s developer bob default\n" % (ADMIN, DEV))
os.chmod(tokens, 0o600)

BASE = "/v1/projects/flexq-local/locations/us-east5-b"
SCOPES = ["https://www.googleapis.com/auth/devstorage.read_only"]
CLUSTER = {"cluster": {
    "addonsConfig": {"rayOperatorConfig": {"enabled": True}},
    "initialClusterVersion": "1.34", "name": "tpu-cluster",
    "nodePoolDefaults": {"nodeConfigDefaults": {"gcfsConfig":
                                                {"enabled": True}}},
    "nodePools": [{"config": {"machineType": "n2-standard-16",
                              "oauthScopes": SCOPES},
                   "initialNodeCount": 3, "name": "default-pool",
                   "management": {"autoRepair": True, "autoUpgrade": True},
                   "upgradeSettings": {"maxSurge": 1}}]},
    "parent": "projects/flexq-local/locations/us-east5-b"}
ON_DEMAND = {"nodePool": {
    "autoscaling": {"enabled": True, "maxNodeCount": 4, "minNodeCount": 0},
    "config": {"machineType": "ct6e-standard-4t", "oauthScopes": SCOPES,
               "reservationAffinity": {"consumeReservationType":
                                       "NO_RESERVATION"}},
    "initialNodeCount": 0, "name": "on-demand-pool",
    "placementPolicy": {"tpuTopology": "4x4"}}}
DWS = {"nodePool": {
    "autoscaling": {"enabled": True, "maxNodeCount": 4, "minNodeCount": 0},
    "config": {"flexStart": True, "machineType": "ct6e-standard-4t",
               "oauthScopes": SCOPES},
    "initialNodeCount": 0, "name": "dws-pool",
    "placementPolicy": {"tpuTopology": "4x4"},
    "queuedProvisioning": {"enabled": True}}}
NP = "/apis/flexq.dev/v1alpha1/nodepools"


def g(method, path, body=None, token=ADMIN):
    st, out, _ = d.request(method, path, body=body, token=token)
    return st, out


def gerr(st, out, code, status, text):
    e = (out or {}).get("error", {}) if isinstance(out, dict) else {}
    return (st == code and e.get("code") == code and
            e.get("status") == status and text in e.get("message", ""))


def pools():
    st, out = g("GET", NP)
    return {o["metadata"]["name"]: o["spec"] for o in out["items"]}


d = Daemon(extra=["--tokens", tokens]).start()
try:
    # --- project and service checks ------------------------------------
    st, out = g("GET", "/v1/projects/flexq-local?alt=json")
    check(st == 200 and out["projectId"] == "flexq-local" and
          out["projectNumber"].isdigit(), "project: %s" % out)
    st, out = g("GET", "/v1/projects/flexq-local/services/"
                "container.googleapis.com?alt=json")
    check(st == 200 and out["state"] == "ENABLED", "service: %s" % out)
    st, out = g("GET", "/v1/projects/flexq-local", token="nope-nope-nope")
    check(gerr(st, out, 401, "UNAUTHENTICATED", "invalid authentication"),
          "unknown token: Google's 401: %s" % out)

    # --- cluster --------------------------------------------------------
    st, out = g("GET", BASE + "/clusters/tpu-cluster")
    check(gerr(st, out, 404, "NOT_FOUND", "Not found: projects/flexq-local/"
               "locations/us-east5-b/clusters/tpu-cluster."),
          "missing cluster: %s" % out)
    st, out = g("POST", BASE + "/clusters", CLUSTER, token=DEV)
    check(gerr(st, out, 403, "PERMISSION_DENIED", "bob"),
          "a developer cannot create a cluster: %s" % out)
    bad = json.loads(json.dumps(CLUSTER))
    bad["cluster"]["nodePools"][0]["config"]["machineType"] = "n2-standard-17"
    st, out = g("POST", BASE + "/clusters", bad)
    check(gerr(st, out, 400, "INVALID_ARGUMENT", "unknown machine type "
               "\"n2-standard-17\""), "bad machine type: %s" % out)
    st, cl = g("GET", "/apis/flexq.dev/v1alpha1/clusters")
    check(cl["items"] == [], "a refused create stores nothing")
    st, op = g("POST", BASE + "/clusters?alt=json", CLUSTER)
    check(st == 200 and op["status"] == "DONE" and
          op["operationType"] == "CREATE_CLUSTER", "create: %s" % op)
    st, out = g("GET", BASE + "/operations/" + op["name"])
    check(st == 200 and out["name"] == op["name"], "operation get")
    st, out = g("POST", BASE + "/operations/%s:wait" % op["name"])
    check(st == 200 and out["status"] == "DONE", "operation wait")
    st, out = g("POST", BASE + "/clusters", CLUSTER)
    check(gerr(st, out, 409, "ALREADY_EXISTS", "Already exists: projects/"
               "flexq-local/locations/us-east5-b/clusters/tpu-cluster."),
          "second create: %s" % out)
    other = json.loads(json.dumps(CLUSTER))
    other["cluster"]["name"] = "second"
    st, out = g("POST", BASE + "/clusters", other)
    check(gerr(st, out, 400, "FAILED_PRECONDITION", "tpu-cluster"),
          "one cluster per flexqd: %s" % out)
    check(pools()["default-pool"]["machineType"] == "n2-standard-16" and
          pools()["default-pool"]["initialNodeCount"] == 3,
          "default-pool as asked: %s" % pools())

    # --- node pools -----------------------------------------------------
    for body in (ON_DEMAND, DWS):
        st, op = g("POST", BASE + "/clusters/tpu-cluster/nodePools", body)
        check(st == 200 and op["operationType"] == "CREATE_NODE_POOL",
              "pool create: %s" % op)
    st, out = g("POST", BASE + "/clusters/tpu-cluster/nodePools", DWS)
    check(gerr(st, out, 409, "ALREADY_EXISTS", "nodePools/dws-pool."),
          "pool exists: %s" % out)
    st, out = g("POST", BASE + "/clusters/nope/nodePools", DWS)
    check(gerr(st, out, 404, "NOT_FOUND", "clusters/nope."),
          "pool in a missing cluster: %s" % out)
    st, out = g("GET", BASE + "/clusters/tpu-cluster/nodePools/dws-pool")
    check(st == 200 and out["config"]["flexStart"] is True and
          out["queuedProvisioning"]["enabled"] is True and
          out["placementPolicy"]["tpuTopology"] == "4x4",
          "describe dws-pool: %s" % out)
    st, out = g("GET", BASE + "/clusters/tpu-cluster/nodePools/"
                "on-demand-pool")
    check("flexStart" not in out["config"] and
          out["config"]["reservationAffinity"]["consumeReservationType"] ==
          "NO_RESERVATION", "on-demand pool: %s" % out)
    st, out = g("GET", BASE + "/clusters/tpu-cluster/nodePools")
    check(sorted(p["name"] for p in out["nodePools"]) ==
          ["default-pool", "dws-pool", "on-demand-pool"], "pool list")
    st, out = g("GET", "/v1/projects/flexq-local/locations/-/clusters")
    c = (out.get("clusters") or [{}])[0]
    check(c.get("name") == "tpu-cluster" and c.get("status") == "RUNNING" and
          len(c.get("nodePools", [])) == 3, "cluster list: %s" % out)
    tls = d.request("GET", "/flexq/v1/tls")[1]
    check(c.get("endpoint") == tls["endpoint"] and
          c.get("masterAuth", {}).get("clusterCaCertificate") ==
          tls["caData"], "endpoint and CA are the HTTPS listener's")

    pool = BASE + "/clusters/tpu-cluster/nodePools/on-demand-pool"
    st, out = g("POST", pool + ":setAutoscaling",
                {"autoscaling": {"enabled": True, "minNodeCount": 0,
                                 "maxNodeCount": 8}})
    check(st == 200 and pools()["on-demand-pool"]["autoscaling"]
          ["maxNodeCount"] == 8, "setAutoscaling: %s" % out)
    st, out = g("PUT", BASE + "/clusters/tpu-cluster",
                {"update": {"desiredNodePoolId": "on-demand-pool",
                            "desiredNodePoolAutoscaling":
                            {"enabled": True, "minNodeCount": 0,
                             "maxNodeCount": 12}}})
    check(st == 200 and pools()["on-demand-pool"]["autoscaling"]
          ["maxNodeCount"] == 12, "clusters.update autoscaling: %s" % out)
    st, out = g("POST", pool + ":setAutoscaling",
                {"autoscaling": {"enabled": True, "minNodeCount": 0,
                                 "maxNodeCount": 6}})
    check(gerr(st, out, 400, "INVALID_ARGUMENT", "multiples of 4") and
          pools()["on-demand-pool"]["autoscaling"]["maxNodeCount"] == 12,
          "a max that is not whole slices is refused, nothing changed: %s" %
          out)
    st, out = g("PUT", pool, {"labels": {"labels": {"team": "ml"}},
                              "taints": {"taints": [{"key": "k",
                                                     "value": "v",
                                                     "effect":
                                                     "NO_SCHEDULE"}]}})
    sp = pools()["on-demand-pool"]
    check(st == 200 and sp.get("labels") == {"team": "ml"} and
          sp.get("taints") == [{"key": "k", "value": "v",
                                "effect": "NoSchedule"}] and
          sp["autoscaling"]["maxNodeCount"] == 12,
          "update labels and taints: %s" % sp)
    st, out = g("POST", BASE + "/clusters/tpu-cluster/nodePools/"
                "default-pool:setSize", {"nodeCount": 2})
    check(st == 200 and pools()["default-pool"]["initialNodeCount"] == 2,
          "setSize: %s" % out)
    st, out = g("GET", BASE + "/operations")
    check(st == 200 and len(out["operations"]) == 7 and
          all(o["status"] == "DONE" for o in out["operations"]),
          "operations list: %d" % len(out.get("operations", [])))
    st, out = g("DELETE", BASE + "/clusters/tpu-cluster/nodePools/dws-pool")
    check(st == 200 and "dws-pool" not in pools(), "pool delete")

    # --- HTTPS ----------------------------------------------------------
    ctx = ssl.create_default_context(cadata=tls["caCertificate"])
    host, port = tls["endpoint"].rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=ctx,
                                       timeout=30)
    conn.request("GET", NP, headers={"Authorization": "Bearer " + ADMIN})
    r = conn.getresponse()
    body = json.loads(r.read())
    check(r.status == 200 and {i["metadata"]["name"] for i in body["items"]}
          == {"default-pool", "on-demand-pool"}, "the API over HTTPS")
    conn.request("POST", "/apis/authorization.k8s.io/v1/"
                 "selfsubjectaccessreviews",
                 body=json.dumps({"spec": {"resourceAttributes": {
                     "namespace": "default", "verb": "create",
                     "group": "ray.io", "resource": "rayjobs"}}}),
                 headers={"Authorization": "Bearer " + DEV,
                          "Content-Type": "application/json"})
    r = conn.getresponse()
    body = json.loads(r.read())
    check(r.status == 201 and body["status"]["allowed"] is True,
          "bob may create rayjobs in default: %s" % body)
    for ra, why in (({"namespace": "other", "verb": "create",
                      "group": "ray.io", "resource": "rayjobs"},
                     "namespace \"other\""),
                    ({"verb": "list", "resource": "nodes"},
                     "cluster-scoped")):
        conn.request("POST", "/apis/authorization.k8s.io/v1/"
                     "selfsubjectaccessreviews",
                     body=json.dumps({"spec": {"resourceAttributes": ra}}),
                     headers={"Authorization": "Bearer " + DEV,
                              "Content-Type": "application/json"})
        r = conn.getresponse()
        body = json.loads(r.read())
        check(r.status == 201 and body["status"]["allowed"] is False and
              why in body["status"]["reason"], "denied: %s" % body)
    conn.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                 body="{}", headers={"Authorization": "Bearer " + DEV,
                                     "Content-Type": "application/json"})
    r = conn.getresponse()
    body = json.loads(r.read())
    check(r.status == 201 and body["status"]["userInfo"]["username"] ==
          "bob" and "flexq:developers" in body["status"]["userInfo"]
          ["groups"], "whoami: %s" % body)
    conn.close()

    rc, out, err = d.cli("config", "kubeconfig", token=DEV)
    check(rc == 0 and "server: https://%s" % tls["endpoint"] in out and
          "certificate-authority-data: %s" % tls["caData"] in out and
          'token: "%s"' % DEV in out, "config kubeconfig: %s %s" % (out, err))
    gdir = os.path.join(work, "gcloud")
    rc, out, err = d.cli("gcloud-config", "--project", "my-proj", token=DEV,
                         env={"CLOUDSDK_CONFIG": gdir})
    conf = open(os.path.join(gdir, "configurations", "config_flexq")).read()
    tok = conf.split("access_token_file = ")[1].split("\n")[0]
    check(rc == 0 and "container = %s/\n" % d.url in conf and
          "cloudresourcemanager = %s/\n" % d.url in conf and
          "project = my-proj\n" in conf and
          open(tok).read().strip() == DEV and
          open(os.path.join(gdir, "active_config")).read() == "flexq",
          "gcloud-config: %s %s" % (conf, err))

    # --- restart: the CA stays, the cluster too --------------------------
    ca_before = tls["caData"]
    d.stop()
    d.start()
    tls2 = d.request("GET", "/flexq/v1/tls")[1]
    check(tls2["caData"] == ca_before, "the CA survives a restart")
    check(base64.b64decode(tls2["caData"]).decode() ==
          tls2["caCertificate"], "caData is the PEM in base64")
    st, out = g("DELETE", BASE + "/clusters/tpu-cluster")
    check(st == 200 and out["operationType"] == "DELETE_CLUSTER" and
          pools() == {}, "cluster delete takes every pool: %s" % pools())
    st, out = g("GET", "/apis/flexq.dev/v1alpha1/clusters")
    check(out["items"] == [], "no Cluster left")
finally:
    d.cleanup()
finish()
