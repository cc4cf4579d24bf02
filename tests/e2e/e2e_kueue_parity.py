"""Issue 20 through the real daemon and CLI: a plain Pod and a RayCluster
with the queue-name label never run outside quota (the pod is gated, the
cluster suspended, until their Workloads are admitted; the pod then runs
and its Workload finishes); Kueue objects written in v1beta2 read in
v1beta1 with v1beta1's names and back; and the kubectl habits of `flexq
get` (flags before the verb, jsonpath, custom-columns, --show-labels,
--field-selector, several names in one table, aligned -w rows,
describe's priority and conditions)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohortName: team
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu]
      flavors: [{name: default, resources: [{name: cpu, nominalQuota: 2}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: lq}
spec: {clusterQueue: cq}
"""

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels: {kueue.x-k8s.io/queue-name: lq, team: %s}
spec:
  restartPolicy: Never
  containers: [{name: c, image: busybox, command: [%s], resources: {requests: {cpu: "2"}}}]
"""

RAYCLUSTER = """
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: rc
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: ray-head, image: ray, resources: {requests: {cpu: "1"}}}]
  workerGroupSpecs: []
"""

NS = "/api/v1/namespaces/default"


def poll(what, fn, timeout=60):
    """fn() until truthy or the deadline; returns its last value."""
    deadline = time.time() + timeout
    v = fn()
    while not v and time.time() < deadline:
        time.sleep(0.05)
        v = fn()
    check(v, what)
    return v


def get(d, path):
    st, obj, _ = d.request("GET", path)
    return obj if st == 200 else None


def workload_of(d, prefix):
    st, lst, _ = d.request(
        "GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads")
    for w in (lst or {}).get("items", []):
        if w["metadata"]["name"].startswith(prefix):
            return w
    return None


def cond(obj, t):
    for c in ((obj or {}).get("status") or {}).get("conditions", []):
        if c.get("type") == t:
            return c
    return {}


d = Daemon(time_scale=100).start()
try:
    rc, out, err = d.cli("apply", "-f", "-", stdin=QUEUE)
    check(rc == 0, "apply queue: %s" % err)

    # A long pod takes the 2 CPUs; a short one waits gated, unbound.
    rc, out, err = d.cli("apply", "-f", "-",
                         stdin=POD % ("long", "a", '"sleep", "600"'))
    check(rc == 0, "apply long: %s" % err)
    poll("long's Workload admitted",
         lambda: cond(workload_of(d, "pod-long-"), "Admitted").get(
             "status") == "True")
    poll("long bound",
         lambda: (get(d, NS + "/pods/long") or {}).get("spec", {}).get(
             "nodeName"))
    rc, out, err = d.cli("apply", "-f", "-",
                         stdin=POD % ("short", "b", '"true"'))
    check(rc == 0, "apply short: %s" % err)
    w = poll("short's Workload exists", lambda: workload_of(d, "pod-short-"))
    p = get(d, NS + "/pods/short")
    gates = [g["name"] for g in p["spec"].get("schedulingGates", [])]
    check("kueue.x-k8s.io/admission" in gates, "short gated: %s" % gates)
    check(not p["spec"].get("nodeName"), "short not bound")
    check(cond(w, "Admitted").get("status") != "True", "short not admitted")

    # A RayCluster in the same full queue stays suspended, without pods.
    rc, out, err = d.cli("apply", "-f", "-", stdin=RAYCLUSTER)
    check(rc == 0, "apply raycluster: %s" % err)
    poll("raycluster suspended",
         lambda: (get(d, "/apis/ray.io/v1/namespaces/default/rayclusters/rc")
                  or {}).get("spec", {}).get("suspend") is True)
    check(workload_of(d, "raycluster-rc-") is not None, "raycluster Workload")

    # CLI: flags before the verb, jsonpath, custom-columns, labels, fields.
    rc, out, err = d.cli("-n", "default", "get", "workloads", "-o",
                         "jsonpath={range .items[*]}{.metadata.name}"
                         "{\"\\n\"}{end}")
    names = out.split()
    check(rc == 0 and any(n.startswith("pod-long-") for n in names) and
          any(n.startswith("raycluster-rc-") for n in names),
          "-n before the verb with jsonpath: rc=%d %r %r" % (rc, out, err))
    rc, out, err = d.cli("get", "pods", "-o",
                         "custom-columns=NAME:.metadata.name,"
                         "GATE:.spec.schedulingGates[0].name")
    lines = out.splitlines()
    check(rc == 0 and lines and lines[0].split() == ["NAME", "GATE"],
          "custom-columns header: %r" % out)
    check(any(l.split() == ["short", "kueue.x-k8s.io/admission"]
              for l in lines), "custom-columns row: %r" % out)
    check(any(l.split() == ["long", "<none>"] for l in lines),
          "custom-columns <none>: %r" % out)
    rc, out, err = d.cli("get", "pods", "--show-labels")
    check(rc == 0 and "LABELS" in out.splitlines()[0] and "team=a" in out,
          "--show-labels: %r" % out)
    rc, out, err = d.cli("get", "pods", "--field-selector",
                         "metadata.name=short", "--no-headers")
    check(rc == 0 and [l.split()[0] for l in out.splitlines()] == ["short"],
          "--field-selector: %r %r" % (out, err))
    rc, out, err = d.cli("get", "pods", "long", "short", "long")
    rows = out.splitlines()
    check(rc == 0 and len(rows) == 3 and rows[0].startswith("NAME") and
          "" not in rows, "one table for several names: %r" % out)
    rc, out, err = d.cli("get", "pods", "-o", "jsonpath={.items[0")
    check(rc == 1 and "jsonpath" in err, "bad template refused: %r" % err)

    # -w: rows printed one event at a time stay aligned with the header
    # (a short name after a long one keeps the wide column).
    # (not queued: it must not take the queue's turn from "short")
    rc, out, err = d.cli("apply", "-f", "-", stdin=(POD % (
        "a-pod-with-a-rather-long-name", "c", '"sleep", "600"')).replace(
            "kueue.x-k8s.io/queue-name: lq, ", "").replace('cpu: "2"',
                                                           'cpu: "1"'))
    check(rc == 0, "apply long-named pod: %s" % err)
    env = dict(os.environ, FLEXQ_SERVER=d.url)
    env.pop("FLEXQ_TOKEN", None)
    env.pop("FLEXQ_NAMESPACE", None)
    import subprocess
    w = subprocess.Popen([os.environ.get("FLEXQ", "flexq"), "get", "pods",
                          "-w"], stdout=subprocess.PIPE, text=True, env=env)
    lines = [w.stdout.readline() for _ in range(4)]
    w.kill()
    w.wait()
    starts = set()
    for l in lines:
        head = l.split()[0]
        rest = l[len(head):]
        starts.add(len(head) + len(rest) - len(rest.lstrip()))
    check(len(starts) == 1, "-w rows aligned: %r" % lines)

    # v1beta2 written, v1beta1 read (and the COHORT column).
    cq1 = get(d, "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq")
    check(cq1["apiVersion"] == "kueue.x-k8s.io/v1beta1" and
          cq1["spec"].get("cohort") == "team" and
          "cohortName" not in cq1["spec"], "v1beta1 view: %s" % cq1["spec"])
    cq2 = get(d, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq")
    check(cq2["spec"].get("cohortName") == "team", "v1beta2 view")
    rc, out, err = d.cli("get", "cq", "cq")
    check(rc == 0 and out.splitlines()[1].split()[:2] == ["cq", "team"],
          "COHORT from cohortName: %r" % out)

    # The long pod goes: the short one is admitted, lifted, runs, ends.
    rc, out, err = d.cli("delete", "pod", "long")
    check(rc == 0, "delete long: %s" % err)
    poll("short's Workload Finished",
         lambda: cond(workload_of(d, "pod-short-"), "Finished").get(
             "reason") == "Succeeded")
    p = get(d, NS + "/pods/short")
    check(p["status"].get("phase") == "Succeeded", "short ran: %s" %
          p.get("status"))
    check(not p["spec"].get("schedulingGates"), "gate lifted")
    rc, out, err = d.cli("describe", "workload",
                         workload_of(d, "pod-short-")["metadata"]["name"])
    check(rc == 0 and "Priority:     0" in out, "describe priority: %r" % out)
    conds = [l for l in out.splitlines() if l.startswith("  Type ")]
    check(conds and "Reason" in conds[0], "conditions header: %r" % conds)
finally:
    d.cleanup()
finish()
