"""flexqd with policy.preemptionGraceSeconds (docs/policies.md (f)): a
lower-priority Workload whose flexq.dev/expected-runtime ends within the
grace is not evicted by a higher-priority one; the preemptor waits
(WaitingForPreemptedWorkloads, the message counts the spared one) and is
admitted once the victim's status says Finished. A victim that states no
run time is evicted at once, as Kueue does. A bad grace in the config
stops flexqd with an error that names the key."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import FLEXQD, Daemon, check, finish  # noqa: E402

CONFIG = """apiVersion: flexq.dev/v1alpha1
kind: FlexqdConfig
spec:
  policy: {preemptionGraceSeconds: %s}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 10}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: lq}
spec: {clusterQueue: cq}
"""

PATH = "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads"


def workload(name, cpu, priority, runtime=None):
    md = {"name": name, "namespace": "default"}
    if runtime:
        md["annotations"] = {"flexq.dev/expected-runtime": runtime}
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
            "metadata": md,
            "spec": {"queueName": "lq", "priority": priority, "podSets": [{
                "name": "main", "count": 1,
                "template": {"spec": {"containers": [{
                    "name": "c", "image": "x",
                    "resources": {"requests": {"cpu": str(cpu)}}}]}}}]}}


def get(d, name):
    st, body, _ = d.request("GET", PATH + "/" + name)
    return body if st == 200 else {}


def cond(d, name, ctype):
    for c in (get(d, name).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def wait(fn, timeout=30):
    """fn() until truthy or the deadline; returns its last value."""
    deadline = time.time() + timeout
    v = fn()
    while not v and time.time() < deadline:
        time.sleep(0.05)
        v = fn()
    return v


def admitted(d, name):
    return (cond(d, name, "Admitted") or {}).get("status") == "True"


def finish_wl(d, name):
    """The workload's run ends: Finished=True on its status, as a job
    integration writes it."""
    obj = get(d, name)
    conds = obj.setdefault("status", {}).setdefault("conditions", [])
    conds.append({"type": "Finished", "status": "True", "reason": "Succeeded",
                  "message": "done",
                  "lastTransitionTime": "2026-01-01T00:00:00Z"})
    st, body, _ = d.request("PUT", PATH + "/" + name + "/status", obj)
    return st


cfg = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
cfg.write(CONFIG % "600")
cfg.close()
d = Daemon(extra=["--config", cfg.name]).start()
try:
    st, _, _ = d.request("POST", PATH, workload("soon", 6, 10, "2m"))
    check(st == 201, "soon created: %s" % st)
    st, _, _ = d.request("POST", PATH, workload("unstated", 4, 10))
    check(st == 201, "unstated created: %s" % st)
    check(wait(lambda: admitted(d, "soon") and admitted(d, "unstated")),
          "both low-priority workloads admitted")
    st, _, _ = d.request("POST", PATH, workload("high", 10, 1000))
    check(st == 201, "high created: %s" % st)
    check(wait(lambda: (cond(d, "unstated", "Evicted") or {}).get("reason")
               == "Preempted"), "the workload without a run time evicted")
    msg = wait(lambda: "Waiting for 1 workload(s)" in
               (cond(d, "high", "QuotaReserved") or {}).get("message", "")
               and cond(d, "high", "QuotaReserved")["message"])
    check(msg, "high waits for the spared one: %s" %
          cond(d, "high", "QuotaReserved"))
    check(cond(d, "high", "QuotaReserved")["reason"] ==
          "WaitingForPreemptedWorkloads", "reason WaitingForPreemptedWorkloads")
    check(admitted(d, "soon") and cond(d, "soon", "Evicted") is None,
          "soon, 2 minutes from its end (grace 10 minutes), still runs")
    check(not admitted(d, "high"), "high not admitted while soon runs")
    check(finish_wl(d, "soon") == 200, "soon's finish written")
    check(wait(lambda: admitted(d, "high")), "high admitted after soon ends")
    check(cond(d, "soon", "Preempted") is None, "soon was never preempted")
    check(d.stop() == 0, "clean stop")
finally:
    d.cleanup()

tmp = tempfile.mkdtemp(prefix="flexq-e2e-")
for bad in ('"soon"', "-5"):
    with open(cfg.name, "w") as f:
        f.write(CONFIG % bad)
    p = subprocess.run([FLEXQD, "--listen", "127.0.0.1:0", "--data-dir", tmp,
                        "--config", cfg.name], capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 1 and "policy.preemptionGraceSeconds" in p.stderr,
          "grace %s refused: %s" % (bad, p.stderr))
import shutil  # noqa: E402
shutil.rmtree(tmp, ignore_errors=True)
os.unlink(cfg.name)
finish()
