"""`--provider exec` end to end: flexqd asks an administrator's script
(tests/fixtures/providers/fake_provider.py, a cloud kept in a JSON file)
for nodes when a queued Job's pods cannot be placed, the Job is admitted,
its pod runs on the node the script made, and after the unneeded time
(10 min, / --time-scale) the script is asked to delete it.

Waits are `flexq wait` (watch-based, with a timeout); nothing sleeps."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SCRIPT = os.path.abspath(os.path.join(ROOT, "tests", "fixtures", "providers",
                                      "fake_provider.py"))

SETUP = """apiVersion: flexq.dev/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  machineType: n2-standard-8
  initialNodeCount: 0
  autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: 2}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: cpu}
spec:
  nodeLabels: {cloud.google.com/gke-nodepool: cpu}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: cpu
      resources: [{name: cpu, nominalQuota: 8}, {name: memory, nominalQuota: 32Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: q}
spec: {clusterQueue: cq}
"""

JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: hello
  labels: {kueue.x-k8s.io/queue-name: q}
spec:
  suspend: true
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          command: ["true"]
          resources:
            requests: {cpu: "1", memory: 1Gi}
"""

state = tempfile.mkdtemp(prefix="flexq-fake-cloud-")
os.environ["FLEXQ_EXEC_PROVIDER"] = SCRIPT
os.environ["FAKE_PROVIDER_DIR"] = state
os.environ["FLEXQ_EXEC_TIMEOUT_S"] = "20"


def calls():
    try:
        with open(os.path.join(state, "calls.log")) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def cloud():
    try:
        with open(os.path.join(state, "nodes.json")) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


# 10 min unneeded / 600 = 1 s
d = Daemon(extra=["--provider", "exec"], time_scale=600).start()
try:
    rc, out, err = d.cli("apply", "-f", "-", stdin=SETUP)
    check(rc == 0, "apply setup: %s" % err)
    rc, out, err = d.cli("apply", "-f", "-", stdin=JOB)
    check(rc == 0, "apply job: %s" % err)
    rc, out, err = d.cli("wait", "nodepool/cpu",
                         "--for=jsonpath={.status.readyNodeCount}=1",
                         "--timeout=60s")
    check(rc == 0, "the script made a node: %s %s" % (out, err))
    made = [c for c in calls() if c.startswith("create-nodes cpu 1 ")]
    check(len(made) == 1, "one create-nodes call: %s" % calls())
    check(len(cloud()) == 1, "the fake cloud has one node: %s" % cloud())
    node = next(iter(cloud()))
    rc, out, err = d.cli("get", "node", node, "-o", "json")
    check(rc == 0 and "fake_provider" in out,
          "Node %s labelled by the script: %s %s" % (node, out[:300], err))
    rc, out, err = d.cli("wait", "job/hello", "--for=condition=Complete",
                         "--timeout=60s")
    check(rc == 0, "job ran to completion: %s %s" % (out, err))
    rc, out, err = d.cli("wait", "node/" + node, "--for=delete",
                         "--timeout=60s")
    check(rc == 0, "node deleted after the unneeded time: %s" % err)
    check(any(c.startswith("delete-nodes cpu " + node) for c in calls()),
          "delete-nodes asked: %s" % calls())
    check(cloud() == {}, "the fake cloud is empty: %s" % cloud())
    rc, out, err = d.cli("wait", "nodepool/cpu",
                         "--for=jsonpath={.status.nodeCount}=0",
                         "--timeout=30s")
    check(rc == 0, "pool back to 0 nodes: %s" % err)
    check(d.stop() == 0, "clean exit")
except Exception:
    print("".join(d.log[-60:]), file=sys.stderr)
    raise
finally:
    d.cleanup()
    import shutil
    shutil.rmtree(state, ignore_errors=True)
finish()
