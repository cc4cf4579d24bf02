"""Pods as real processes through flexqd (the runtime side of issue 6):
a RayJob on this machine (--provider local) runs the tutorial's
examples/train.py from a ConfigMap mounted at /app on two SPMD workers;
then `flexq logs job/NAME` must read like Ray's submitter log, the metrics
must reach the RayJob's status and the Ray Jobs API, and a Job whose
command does not exist must fail with ContainerCannotRun.

Waits are `flexq wait` (watch-based, with a timeout); nothing sleeps."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
TRAIN = os.path.join(ROOT, "examples", "train.py")

RAYJOB = """apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rj-cpu
spec:
  shutdownAfterJobFinishes: true
  entrypoint: python /app/train.py
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray:2.53.0-py311
              resources:
                requests: {cpu: 100m, memory: 128Mi}
              volumeMounts:
                - {mountPath: /app, name: train-script-volume}
          volumes:
            - name: train-script-volume
              configMap: {name: jax-train-script}
    workerGroupSpecs:
      - replicas: 1
        minReplicas: 1
        maxReplicas: 1
        numOfHosts: 2
        groupName: cpu-group
        rayStartParams: {}
        template:
          spec:
            containers:
              - name: ray-worker
                image: rayproject/ray:2.53.0-py311
                resources:
                  requests: {cpu: 100m, memory: 128Mi}
                volumeMounts:
                  - {mountPath: /app, name: train-script-volume}
            volumes:
              - name: train-script-volume
                configMap: {name: jax-train-script}
"""

BADJOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: bad
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          command: ["flexq-no-such-command", "--now"]
"""

d = Daemon(extra=["--provider", "local"]).start()
try:
    rc, out, err = d.cli("create", "configmap", "jax-train-script",
                         "--from-file=" + TRAIN)
    check(rc == 0, "create configmap: %s %s" % (out, err))
    rc, out, err = d.cli("apply", "-f", "-", stdin=RAYJOB)
    check(rc == 0, "apply rayjob: %s %s" % (out, err))
    rc, out, err = d.cli("wait", "rayjob/rj-cpu",
                         "--for=jsonpath={.status.jobDeploymentStatus}=Complete",
                         "--timeout=240s")
    check(rc == 0, "rayjob completes: %s %s" % (out, err))

    st, rj, _ = d.request("GET", "/apis/ray.io/v1/namespaces/default/rayjobs/"
                       "rj-cpu")
    status = rj.get("status", {}) if isinstance(rj, dict) else {}
    check(status.get("jobStatus") == "SUCCEEDED",
          "jobStatus SUCCEEDED: %s" % status)
    job_id = status.get("jobId", "")
    check(status.get("metrics", {}).get("epoch") == 40,
          "rank 0's last metrics in the RayJob's status: %s"
          % status.get("metrics"))

    rc, log, err = d.cli("logs", "job/rj-cpu")
    check(rc == 0, "logs job/rj-cpu: %s" % err)
    check("Job '%s' submitted successfully" % job_id in log,
          "submission lines: %s" % log[:400])
    check(re.search(r"^\(RayTrainWorker pid=\d+, ip=127\.0\.0\.1\) "
                    r"Epoch 40: Loss 0\.0000$", log, re.M) is not None,
          "a worker's Epoch 40 line: %s" % log)
    check(re.search(r"Training Complete! \[repeated 1x across cluster\]$",
                    log, re.M) is not None,
          "the second worker's line folded: %s" % log)
    check("Run Result: {'loss': " in log, "the driver's line: %s" % log)
    lines = log.rstrip("\n").splitlines()
    banner = "Job '%s' succeeded" % job_id
    check(len(lines) >= 3 and lines[-2].endswith("SUCC cli.py:66 -- " + banner)
          and lines[-1].endswith("-- " + "-" * len(banner)),
          "Ray's closing banner: %s" % lines[-3:])

    st, jobs, _ = d.request("GET", "/api/jobs/")
    check(st == 200 and isinstance(jobs, list) and len(jobs) == 1,
          "/api/jobs/ lists the RayJob: %s %s" % (st, jobs))
    if isinstance(jobs, list) and jobs:
        j = jobs[0]
        check(j.get("submission_id") == job_id and
              j.get("status") == "SUCCEEDED" and
              j.get("message") == "Job finished successfully." and
              (j.get("metrics") or {}).get("epoch") == 40,
              "JobDetails: %s" % j)
    st, one, _ = d.request("GET", "/api/jobs/" + job_id)
    check(st == 200 and one.get("entrypoint") == "python /app/train.py",
          "/api/jobs/ID: %s %s" % (st, one))
    st, logs, _ = d.request("GET", "/api/jobs/%s/logs" % job_id)
    check(st == 200 and banner in logs.get("logs", ""),
          "/api/jobs/ID/logs holds the driver log")
    st, _, _ = d.request("GET", "/api/jobs/nope")
    check(st == 404, "unknown job id is 404, got %s" % st)

    rc, out, err = d.cli("apply", "-f", "-", stdin=BADJOB)
    rc, out, err = d.cli("wait", "job/bad", "--for=condition=Failed",
                         "--timeout=60s")
    check(rc == 0, "job with a missing command fails: %s %s" % (out, err))
    st, pods, _ = d.request("GET", "/api/v1/namespaces/default/pods"
                         "?labelSelector=batch.kubernetes.io/job-name%3Dbad")
    items = pods.get("items", []) if isinstance(pods, dict) else []
    term = {}
    if items:
        cs = items[0].get("status", {}).get("containerStatuses", [{}])
        term = cs[0].get("state", {}).get("terminated", {})
    check(term.get("reason") == "ContainerCannotRun" and
          "executable file not found" in term.get("message", ""),
          "ContainerCannotRun with Docker's message: %s" % term)
    check(d.stop() == 0, "flexqd stops cleanly")
finally:
    d.cleanup()
finish()
