"""flexqd with Kueue's fairSharing configuration: a preemption by dominant
resource share through the real daemon, and Kueue's metrics for it
(kueue_preempted_workloads_total by preempting queue, the queues' shares,
the admission attempts and their duration); a bad strategy in the config
stops flexqd with an error that names it."""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import FLEXQD, Daemon, check, finish  # noqa: E402

CONFIG = """apiVersion: flexq.dev/v1alpha1
kind: FlexqdConfig
spec:
  fairSharing:
    enable: true
    preemptionStrategies: [%s]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
""" + "".join("""---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: %s}
spec:
  namespaceSelector: {}
  cohort: team
  preemption: {reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: %d}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: q%s}
spec: {clusterQueue: %s}
""" % (q, n, q, q) for q, n in (("a", 0), ("b", 0), ("c", 10)))


def workload(name, queue, count):
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": queue, "podSets": [{
                "name": "main", "count": count,
                "template": {"spec": {"containers": [{
                    "name": "c", "image": "x",
                    "resources": {"requests": {"cpu": "1"}}}]}}}]}}


def cond(d, name, ctype):
    st, body, _ = d.request(
        "GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/"
        + name)
    for c in ((body or {}).get("status") or {}).get("conditions") or []:
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


def series(text, name):
    m = re.search("^" + re.escape(name) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


cfg = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
cfg.write(CONFIG % "LessThanOrEqualToFinalShare, LessThanInitialShare")
cfg.close()
d = Daemon(extra=["--config", cfg.name]).start()
try:
    path = "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads"
    st, _, _ = d.request("POST", path, workload("a6", "qa", 6))
    check(st == 201, "a6 created: %s" % st)
    check(wait(lambda: (cond(d, "a6", "Admitted") or {}).get("status")
               == "True"), "a6 admitted on c's quota")
    st, _, _ = d.request("POST", path, workload("b5", "qb", 5))
    check(st == 201, "b5 created: %s" % st)
    pre = wait(lambda: cond(d, "a6", "Preempted"))
    check(pre and pre.get("reason") == "InCohortFairSharing",
          "a6 preempted by fair sharing: %s" % pre)
    check(pre and "preemptor path: /team/b" in pre.get("message", ""),
          "the message names the preemptor's queue: %s" % pre)
    check(wait(lambda: (cond(d, "b5", "Admitted") or {}).get("status")
               == "True"), "b5 admitted")
    st, cq, _ = d.request(
        "GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/b")
    share = ((cq or {}).get("status") or {}).get("fairSharing") or {}
    check(share.get("weightedShare") == 500, "b's share: %s" % share)

    def scrape():
        st, text, _ = d.request("GET", "/metrics")
        return text if st == 200 else ""
    text = wait(lambda: (lambda t: t if series(
        t, 'kueue_admission_attempts_total{result="success"}') else "")(
            scrape()))
    check(series(text, 'kueue_preempted_workloads_total{preempting_cluster_'
                 'queue="b",reason="InCohortFairSharing"}') == 1,
          "one preemption counted under b")
    check(series(text, 'kueue_cluster_queue_weighted_share{cluster_queue='
                 '"b"}') == 500, "b's share as a gauge")
    ok = series(text, 'kueue_admission_attempts_total{result="success"}')
    check(ok is not None and ok >= 2, "two successful attempts: %s" % ok)
    check(series(text, 'kueue_admission_attempt_duration_seconds_count{'
                 'result="success"}') == ok, "each attempt timed")
    check(d.stop() == 0, "clean stop")
finally:
    d.cleanup()

with open(cfg.name, "w") as f:
    f.write(CONFIG % "Fairest")
tmp = tempfile.mkdtemp(prefix="flexq-e2e-")
p = subprocess.run([FLEXQD, "--listen", "127.0.0.1:0", "--data-dir", tmp,
                    "--config", cfg.name], capture_output=True, text=True,
                   timeout=60)
check(p.returncode == 1 and 'unknown strategy "Fairest"' in p.stderr,
      "a bad strategy refused: %s" % p.stderr)
import shutil  # noqa: E402
shutil.rmtree(tmp, ignore_errors=True)
os.unlink(cfg.name)
finish()
