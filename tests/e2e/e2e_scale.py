"""`flexq scale`: a RayJob's worker group is resized through the API
(read, set workerGroupSpecs[i].replicas, PUT with the resourceVersion),
within minReplicas..maxReplicas; out-of-range counts, unknown groups and
ambiguous RayJobs are refused with a clear error and nothing written; a
Job's parallelism is patched. The admission side of scaling is covered by
tests/scenarios/elastic_*.yaml."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

RAYJOB = """
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: el
  annotations: {kueue.x-k8s.io/elastic-job: "true"}
spec:
  suspend: true
  entrypoint: python train.py
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers: [{name: head, image: ray, resources: {requests: {cpu: "1"}}}]
    workerGroupSpecs:
      - groupName: tpu-group
        replicas: 1
        minReplicas: 1
        maxReplicas: 2
        numOfHosts: 4
        template:
          spec:
            containers: [{name: w, image: ray, resources: {requests: {cpu: "1"}}}]
      - groupName: cpu-group
        replicas: 1
        template:
          spec:
            containers: [{name: w, image: ray, resources: {requests: {cpu: "1"}}}]
"""

JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  suspend: true
  parallelism: 2
  completions: 8
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, command: ["true"]}]
"""

RJ = "/apis/ray.io/v1/namespaces/default/rayjobs/el"


def replicas(d, group):
    st, rj, _ = d.request("GET", RJ)
    for g in rj["spec"]["rayClusterSpec"]["workerGroupSpecs"]:
        if g["groupName"] == group:
            return g.get("replicas")
    return None


d = Daemon().start()
try:
    rc, out, err = d.cli("apply", "-f", "-", stdin=RAYJOB)
    check(rc == 0, "apply rayjob: %s" % err)
    st, rj, _ = d.request("GET", RJ)
    rv = rj["metadata"]["resourceVersion"]

    rc, out, err = d.cli("scale", "rayjob", "el", "--group", "tpu-group",
                         "--replicas", "2")
    check(rc == 0 and out.strip() == "rayjob.ray.io/el scaled",
          "scale up: rc=%d %r %r" % (rc, out, err))
    check(replicas(d, "tpu-group") == 2, "tpu-group now 2")
    check(replicas(d, "cpu-group") == 1, "cpu-group untouched")
    st, rj, _ = d.request("GET", RJ)
    check(rj["metadata"]["resourceVersion"] != rv, "written once")
    check(rj["spec"].get("suspend") is True, "the rest of the spec kept")

    rc, out, err = d.cli("scale", "rayjob/el", "--group=tpu-group",
                         "--replicas=3")
    check(rc == 1 and "outside worker group tpu-group's range 1..2" in err,
          "above maxReplicas refused: rc=%d %r" % (rc, err))
    rc, out, err = d.cli("scale", "rayjob", "el", "--group", "tpu-group",
                         "--replicas", "0")
    check(rc == 1 and "range 1..2" in err, "below minReplicas: %r" % err)
    check(replicas(d, "tpu-group") == 2, "refusals wrote nothing")

    rc, out, err = d.cli("scale", "rayjob", "el", "--group", "gpu",
                         "--replicas", "1")
    check(rc == 1 and 'no worker group "gpu"' in err and "tpu-group" in err,
          "unknown group: %r" % err)
    rc, out, err = d.cli("scale", "rayjob", "el", "--replicas", "1")
    check(rc == 1 and "--group" in err, "two groups need --group: %r" % err)
    rc, out, err = d.cli("scale", "rayjob", "el", "--group", "tpu-group",
                         "--replicas", "two")
    check(rc == 1 and "whole number" in err, "bad count: %r" % err)
    rc, out, err = d.cli("scale", "rayjob", "missing", "--group", "x",
                         "--replicas", "1")
    check(rc == 1 and "NotFound" in err, "missing rayjob: %r" % err)

    rc, out, err = d.cli("scale", "rayjob", "el", "--group", "tpu-group",
                         "--replicas", "1", "-n", "default")
    check(rc == 0 and replicas(d, "tpu-group") == 1, "scale down: %r" % err)

    rc, out, err = d.cli("apply", "-f", "-", stdin=JOB)
    check(rc == 0, "apply job: %s" % err)
    rc, out, err = d.cli("scale", "job", "batch", "--replicas", "4")
    check(rc == 0 and out.strip() == "job.batch/batch scaled",
          "scale job: %r %r" % (out, err))
    check("elastic-job" in err, "a job that is not elastic is warned about")
    st, job, _ = d.request("GET", "/apis/batch/v1/namespaces/default/jobs/"
                           "batch")
    check(job["spec"]["parallelism"] == 4, "parallelism 4: %s" % job["spec"])
finally:
    d.cleanup()
finish()
