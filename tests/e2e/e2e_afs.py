"""flexqd with Kueue's admissionFairSharing configuration: a LocalQueue's
usage sampled in status.fairSharing.admissionFairSharingStatus, and a
ClusterQueue with UsageBasedAdmissionFairSharing admitting the workload of
the queue that used less before an older one (Kueue's documented
behaviour); the usage read back from the stored status after a restart;
a bad sampling interval in the config stops flexqd with an
error that names it."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import FLEXQD, Daemon, check, finish  # noqa: E402

CONFIG = """apiVersion: flexq.dev/v1alpha1
kind: FlexqdConfig
spec:
  admissionFairSharing:
    usageHalfLifeTime: 10s
    usageSamplingInterval: %s
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: shared}
spec:
  namespaceSelector: {}
  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 4}]
""" + "".join("""---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: %s}
spec: {clusterQueue: shared}
""" % q for q in ("qa", "qb"))

WL = "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads"
LQ = "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/localqueues/"


def workload(name, queue, count):
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": queue, "podSets": [{
                "name": "main", "count": count,
                "template": {"spec": {"containers": [{
                    "name": "c", "image": "x",
                    "resources": {"requests": {"cpu": "1"}}}]}}}]}}


def cond(d, name, ctype):
    st, body, _ = d.request("GET", WL + "/" + name)
    for c in ((body or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def afs(d, q):
    st, body, _ = d.request("GET", LQ + q)
    return (((body or {}).get("status") or {}).get("fairSharing") or {}).get(
        "admissionFairSharingStatus") or {}


def cpu(q):
    """A cpu quantity ("136m", "2") in cores, or 0 when absent."""
    if not q:
        return 0.0
    return float(q[:-1]) / 1000 if q.endswith("m") else float(q)


def wait(fn, timeout=30):
    """fn() until truthy or the deadline; returns its last value."""
    deadline = time.time() + timeout
    v = fn()
    while not v and time.time() < deadline:
        time.sleep(0.05)
        v = fn()
    return v


cfg = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
cfg.write(CONFIG % "500ms")
cfg.close()
# Real time (time scale 1): the half-life is 10 s, so the usage moves
# little between two reads.
d = Daemon(extra=["--config", cfg.name], time_scale=1).start()
try:
    st, _, _ = d.request("POST", WL, workload("a1", "qa", 4))
    check(st == 201, "a1 created: %s" % st)
    check(wait(lambda: (cond(d, "a1", "Admitted") or {}).get("status")
               == "True"), "a1 admitted")
    used = wait(lambda: afs(d, "qa").get("consumedResources", {}).get("cpu"))
    check(used is not None and afs(d, "qa").get("lastUpdate"),
          "qa's usage sampled: %s" % afs(d, "qa"))
    check(afs(d, "qb").get("lastUpdate") and
          not afs(d, "qb").get("consumedResources"),
          "qb tracked, no usage: %s" % afs(d, "qb"))
    st, _, _ = d.request("POST", WL, workload("a2", "qa", 4))
    check(st == 201, "a2 created: %s" % st)
    # b1 comes after a2 in Kueue's usual order (created later, or in the
    # same second and named after it).
    st, _, _ = d.request("POST", WL, workload("b1", "qb", 4))
    check(st == 201, "b1 created: %s" % st)
    st, _, _ = d.request("DELETE", WL + "/a1")
    check(st == 200, "a1 deleted: %s" % st)
    check(wait(lambda: (cond(d, "b1", "Admitted") or {}).get("status")
               == "True"), "b1 (qb used less) admitted")
    check((cond(d, "a2", "QuotaReserved") or {}).get("status") != "True",
          "a2 (older, qa used more) waits")
    before = cpu(afs(d, "qa").get("consumedResources", {}).get("cpu"))
    check(before > 0, "qa's usage before the restart: %s" % before)
    check(d.stop() == 0, "clean stop")
    # A restart reads each LocalQueue's usage back from its status: qa,
    # with nothing admitted, only decays from there (not reset to 0).
    d2 = Daemon(data_dir=d.data_dir, extra=["--config", cfg.name],
                time_scale=1).start()
    try:
        st, _, _ = d2.request("GET", WL + "/a2")
        check(st == 200, "a2 kept: %s" % st)
        after = cpu(afs(d2, "qa").get("consumedResources", {}).get("cpu"))
        check(0 < after <= before,
              "qa's usage after the restart: %s (before %s)" % (after, before))
        check(d2.stop() == 0, "clean stop after the restart")
    finally:
        d2.cleanup()
finally:
    d.cleanup()

with open(cfg.name, "w") as f:
    f.write(CONFIG % "0s")
tmp = tempfile.mkdtemp(prefix="flexq-e2e-")
p = subprocess.run([FLEXQD, "--listen", "127.0.0.1:0", "--data-dir", tmp,
                    "--config", cfg.name], capture_output=True, text=True,
                   timeout=60)
check(p.returncode == 1 and "usageSamplingInterval" in p.stderr,
      "a zero sampling interval refused: %s" % p.stderr)
shutil.rmtree(tmp, ignore_errors=True)
os.unlink(cfg.name)
finish()
