"""Elastic scale through flexqd with real pods (issue 6 item 6): an
elastic RayJob runs on this machine (--provider local); `flexq scale`
adds a worker replica, whose pod waits behind Kueue's elastic-job
scheduling gate while the quota does not allow the slice; when the
ClusterQueue grows the slice is admitted for the delta, the old slice is
Finished=WorkloadSliceReplaced and the new worker runs; scaling down
deletes it and releases the quota.

Waits are `flexq wait` (watch-based, with a timeout); nothing sleeps."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

QUEUE = """apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors:
        - name: default
          resources:
            - {name: cpu, nominalQuota: CPU}
            - {name: memory, nominalQuota: 8Gi}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: lq}
spec: {clusterQueue: cq}
"""

# head 100m + one worker 100m + the submitter 500m = 700m.
RAYJOB = """apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: el
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {kueue.x-k8s.io/elastic-job: "true"}
spec:
  shutdownAfterJobFinishes: true
  entrypoint: sleep 120
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers:
            - name: ray-head
              image: ray
              resources: {requests: {cpu: 100m, memory: 64Mi}}
    workerGroupSpecs:
      - groupName: cpu-group
        replicas: 1
        minReplicas: 1
        maxReplicas: 2
        template:
          spec:
            containers:
              - name: ray-worker
                image: ray
                resources: {requests: {cpu: 100m, memory: 64Mi}}
"""


def slice_name(base, k):
    """jobframework_slices.c's name for slice k of the chain at base."""
    h = 2166136261
    for ch in base.encode():
        h = ((h ^ ch) * 16777619) & 0xffffffff
    for i in range(4):
        h = ((h ^ ((k >> (8 * i)) & 0xff)) * 16777619) & 0xffffffff
    return base[:-6] + "-%05x" % (h & 0xfffff)


def get(d, path):
    st, obj, _ = d.request("GET", path)
    return obj if st == 200 else {}


def cond(obj, t):
    for c in obj.get("status", {}).get("conditions", []):
        if c.get("type") == t:
            return c
    return {}


WL = "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/"

d = Daemon(extra=["--provider", "local"]).start()
try:
    rc, out, err = d.cli("apply", "-f", "-", stdin=QUEUE.replace("CPU",
                                                                  "750m"))
    check(rc == 0, "queue: %s" % err)
    rc, out, err = d.cli("apply", "-f", "-", stdin=RAYJOB)
    check(rc == 0, "rayjob: %s" % err)
    rc, out, err = d.cli("wait", "rayjob/el", "--timeout=60s",
                         "--for=jsonpath={.status.jobDeploymentStatus}="
                         "Running")
    check(rc == 0, "running: %s %s" % (out, err))
    rc, out, err = d.cli("get", "workloads", "-o", "name")
    names = out.split()
    check(len(names) == 1, "one workload: %r" % out)
    base = names[0].split("/")[-1] if names else "x-00000"
    new = slice_name(base, 1)

    # 700m + 100m > 750m: the slice waits, the job runs on.
    rc, out, err = d.cli("scale", "rayjob", "el", "--group", "cpu-group",
                         "--replicas", "2")
    check(rc == 0, "scale up: %s %s" % (out, err))
    rc, out, err = d.cli("wait", "workload/" + new, "--timeout=30s",
                         "--for=condition=QuotaReserved=false")
    check(rc == 0, "the slice exists and waits: %s %s" % (out, err))
    sl = get(d, WL + new)
    check(sl.get("metadata", {}).get("annotations", {}).get(
        "kueue.x-k8s.io/workload-slice-replacement-for") == base,
        "slice annotation: %s" % sl.get("metadata"))
    check("insufficient" in cond(sl, "QuotaReserved").get("message", ""),
          "why it waits: %s" % cond(sl, "QuotaReserved"))
    check(cond(get(d, WL + base), "Admitted").get("status") == "True",
          "the old slice stays admitted")
    rj = get(d, "/apis/ray.io/v1/namespaces/default/rayjobs/el")
    cname = rj.get("status", {}).get("rayClusterName", "")
    rc, out, err = d.cli("wait", "raycluster/" + cname, "--timeout=30s",
                         "--for=jsonpath={.status.desiredWorkerReplicas}=2")
    check(rc == 0, "cluster wants 2 workers: %s" % err)
    st, pods, _ = d.request(
        "GET", "/api/v1/namespaces/default/pods?labelSelector="
        "flexq.dev%2Freplica-index%3D1")
    items = pods.get("items", []) if isinstance(pods, dict) else []
    check(len(items) == 1, "the new worker pod exists: %s" % pods)
    pod = items[0]["metadata"]["name"] if items else "none"
    gates = items[0]["spec"].get("schedulingGates", []) if items else []
    check(gates == [{"name": "kueue.x-k8s.io/elastic-job"}],
          "it is gated: %s" % gates)
    check(rj.get("spec", {}).get("suspend") is not True, "job not suspended")

    # More quota: the slice is admitted for the delta, the pod runs.
    rc, out, err = d.cli("apply", "-f", "-", stdin=QUEUE.replace("CPU", "2"))
    check(rc == 0, "bigger queue: %s" % err)
    rc, out, err = d.cli("wait", "workload/" + new, "--timeout=30s",
                         "--for=condition=Admitted")
    check(rc == 0, "slice admitted: %s %s" % (out, err))
    rc, out, err = d.cli("wait", "workload/" + base, "--timeout=30s",
                         "--for=condition=Finished")
    check(rc == 0, "old slice finished: %s" % err)
    check(cond(get(d, WL + base), "Finished").get("reason") ==
          "WorkloadSliceReplaced", "reason WorkloadSliceReplaced")
    rc, out, err = d.cli("wait", "pod/" + pod, "--timeout=60s",
                         "--for=jsonpath={.status.phase}=Running")
    check(rc == 0, "the new worker runs: %s %s" % (out, err))

    # Scale down: the worker goes, the slice's count and quota shrink.
    rc, out, err = d.cli("scale", "rayjob", "el", "--group", "cpu-group",
                         "--replicas", "1")
    check(rc == 0, "scale down: %s" % err)
    rc, out, err = d.cli("wait", "pod/" + pod, "--timeout=60s",
                         "--for=delete")
    check(rc == 0, "the worker is deleted: %s %s" % (out, err))
    rc, out, err = d.cli("wait", "workload/" + new, "--timeout=30s",
                         "--for=jsonpath={.status.admission."
                         "podSetAssignments[1].count}=1")
    check(rc == 0, "count 1 in place: %s %s" % (out, err))
    sl = get(d, WL + new)
    psa = sl.get("status", {}).get("admission", {}).get(
        "podSetAssignments", [])
    check(len(psa) > 1 and psa[1].get("resourceUsage", {}).get("cpu") ==
          "100m", "quota released: %s" % json.dumps(psa))
    check(cond(sl, "Admitted").get("status") == "True", "still admitted")
    rc, out, err = d.cli("delete", "rayjob", "el")
    check(rc == 0, "delete: %s" % err)
finally:
    d.cleanup()
finish()
