"""The tutorial's administrator and developer steps through the flexq CLI:
apply the queue config, create the script ConfigMap, submit two RayJobs,
then get / describe / wait, -o json|yaml|name, and delete."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

FIX = os.environ.get("FLEXQ_FIXTURES", "tests/fixtures")
QUEUES = open(os.path.join(FIX, "valid", "dws-tpu-queue.yaml")).read()
RAYJOB = open(os.path.join(FIX, "valid", "rayjob-tpu-v6e-dws.yaml")).read()

d = Daemon().start()
try:
    # --- administrator ------------------------------------------------
    rc, out, err = d.cli("apply", "-f", "-", stdin=QUEUES)
    check(rc == 0, "apply queues rc=%d err=%s" % (rc, err))
    for line in ["resourceflavor.kueue.x-k8s.io/default-cpu created",
                 "resourceflavor.kueue.x-k8s.io/on-demand created",
                 "resourceflavor.kueue.x-k8s.io/dws created",
                 "clusterqueue.kueue.x-k8s.io/cluster-queue created",
                 "localqueue.kueue.x-k8s.io/user-queue created",
                 "admissioncheck.kueue.x-k8s.io/dws-prov created",
                 "provisioningrequestconfig.kueue.x-k8s.io/dws-config created"]:
        check(line in out.splitlines(), "apply printed %r: %s" % (line, out))
    rc, out, err = d.cli("apply", "-f", "-", stdin=QUEUES)
    check(rc == 0 and out.count("unchanged") == 7,
          "second apply is unchanged: %s" % out)
    changed = QUEUES.replace("nominalQuota: 40", "nominalQuota: 48")
    rc, out, err = d.cli("apply", "-f", "-", stdin=changed)
    check("clusterqueue.kueue.x-k8s.io/cluster-queue configured" in out,
          "changed quota is configured: %s" % out)
    check(out.count("unchanged") == 6, "the rest unchanged: %s" % out)

    rc, out, err = d.cli("get", "cq")
    check(rc == 0 and out.split()[:6] == ["NAME", "COHORT", "PENDING",
                                          "WORKLOADS", "ADMITTED",
                                          "WORKLOADS"],
          "cq header: %r" % out)
    check("cluster-queue" in out, "cq listed")
    rc, out, err = d.cli("get", "rf", "-o", "name")
    check(out.split() == ["resourceflavor.kueue.x-k8s.io/default-cpu",
                          "resourceflavor.kueue.x-k8s.io/dws",
                          "resourceflavor.kueue.x-k8s.io/on-demand"],
          "rf -o name: %r" % out)
    rc, out, err = d.cli("get", "lq", "user-queue", "-o", "json")
    check(rc == 0 and json.loads(out)["spec"]["clusterQueue"] ==
          "cluster-queue", "lq -o json")
    rc, out, err = d.cli("get", "ac", "dws-prov", "-o", "yaml")
    check(rc == 0 and "controllerName: kueue.x-k8s.io/provisioning-request"
          in out, "ac -o yaml: %s" % out)

    # --- developer ----------------------------------------------------
    train = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                         "train.py")
    rc, out, err = d.cli("create", "configmap", "jax-train-script",
                         "--from-file=" + train)
    check(rc == 0 and out.strip() == "configmap/jax-train-script created",
          "create configmap: %s %s" % (out, err))
    rc, out, err = d.cli("create", "configmap", "jax-train-script",
                         "--from-file=" + train)
    check(rc == 1 and "AlreadyExists" in err, "create twice: %s" % err)
    rc, out, err = d.cli("get", "configmap", "jax-train-script", "-o", "json")
    check("train.py" in json.loads(out).get("data", {}), "configmap key")

    for i in (1, 2):
        job = RAYJOB.replace("rayjob-tpu-v6e-dws-1", "rayjob-tpu-v6e-dws-%d" % i)
        rc, out, err = d.cli("apply", "-f", "-", stdin=job)
        check(rc == 0 and out.strip() ==
              "rayjob.ray.io/rayjob-tpu-v6e-dws-%d created" % i,
              "apply rayjob %d: %s %s" % (i, out, err))

    rc, out, err = d.cli("get", "rayjobs,workloads")
    lines = out.splitlines()
    check(rc == 0 and lines and lines[0].split()[:7] ==
          ["NAME", "JOB", "STATUS", "DEPLOYMENT", "STATUS", "START", "TIME"],
          "rayjob header: %r" % out)
    check(any(l.startswith("rayjob.ray.io/rayjob-tpu-v6e-dws-1") for l in lines),
          "rayjob listed with kind prefix")
    wl_header = [l for l in lines if l.startswith("NAME") and "QUEUE" in l]
    check(wl_header and wl_header[0].split() ==
          ["NAME", "QUEUE", "RESERVED", "IN", "ADMITTED", "FINISHED", "AGE"],
          "workload header: %r" % out)

    # The workloads Kueue's job integration made, one per job.
    rc, out, err = d.cli("get", "wl", "-o", "json")
    items = json.loads(out)["items"]
    check(len(items) == 2, "two workloads: %d" % len(items))
    names = sorted(w["metadata"]["name"] for w in items)
    for w in names:
        rc, out, err = d.cli("wait", "workload/" + w, "--for=condition=QuotaReserved",
                             "--timeout=60s")
        check(rc == 0 and out.strip() ==
              "workload.kueue.x-k8s.io/%s condition met" % w,
              "wait QuotaReserved %s: %s %s" % (w, out, err))
    rc, out, err = d.cli("wait", "wl/" + names[0],
                         "--for=jsonpath={.spec.queueName}=user-queue",
                         "--timeout=5s")
    check(rc == 0, "wait jsonpath: %s %s" % (out, err))
    rc, out, err = d.cli("wait", "wl/" + names[0],
                         "--for=condition=NoSuchCondition", "--timeout=1s")
    check(rc == 1 and "timed out waiting for the condition" in err,
          "wait times out: %s" % err)

    rc, out, err = d.cli("describe", "workload", names[0])
    for label in ["Name:", "Namespace:", "Queue:", "Pod Sets:", "Conditions:",
                  "Events:", "QuotaReserved"]:
        check(label in out, "describe shows %s: %s" % (label, out))

    rc, out, err = d.cli("get", "events")
    check(rc == 0 and out.split()[:5] == ["LAST", "SEEN", "TYPE", "REASON",
                                          "OBJECT"],
          "events header: %r" % out[:200])
    check("QuotaReserved" in out, "events show QuotaReserved")

    rc, out, err = d.cli("get", "workloads", "-A")
    check(out.startswith("NAMESPACE"), "-A adds NAMESPACE")
    rc, out, err = d.cli("get", "wl", "-n", "nowhere")
    check(rc == 0 and "No resources found in nowhere namespace." in err,
          "empty namespace: %r" % err)
    rc, out, err = d.cli("get", "wl", "nope")
    check(rc == 1 and "NotFound" in err and "nope" in err,
          "missing object: %r" % err)
    rc, out, err = d.cli("get", "frobs")
    check(rc == 1 and "doesn't have a resource type \"frobs\"" in err,
          "unknown kind: %r" % err)

    # A workload whose queue does not exist is accepted and says why.
    wl = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
          "metadata": {"name": "orphan", "namespace": "default"},
          "spec": {"queueName": "missing-queue", "podSets": [
              {"name": "main", "count": 1, "template": {"spec": {
                  "containers": [{"name": "c", "image": "x", "resources": {
                      "requests": {"cpu": "1"}}}]}}}]}}
    rc, out, err = d.cli("apply", "-f", "-", stdin=json.dumps(wl))
    check(rc == 0 and "workload.kueue.x-k8s.io/orphan created" in out,
          "orphan accepted: %s %s" % (out, err))
    rc, out, err = d.cli("describe", "wl/orphan")
    check("Waiting For:" in out and "missing-queue" in out,
          "describe says why it waits: %s" % out)

    # A workload larger than any flavor waits, and describe says why.
    huge = json.loads(json.dumps(wl))
    huge["metadata"]["name"] = "huge"
    huge["spec"]["queueName"] = "user-queue"
    huge["spec"]["podSets"][0]["template"]["spec"]["containers"][0][
        "resources"]["requests"]["cpu"] = "2000000000"
    rc, out, err = d.cli("apply", "-f", "-", stdin=json.dumps(huge))
    rc, out, err = d.cli("wait", "wl/huge", "--for=condition=QuotaReserved=False",
                         "--timeout=30s")
    check(rc == 0, "huge gets QuotaReserved=False: %s %s" % (out, err))
    rc, out, err = d.cli("describe", "wl", "huge")
    check("Waiting For:" in out and "couldn't assign flavors" in out,
          "describe says the quota is short: %s" % out)

    # get -w streams changes; wait --for=delete returns when it is gone.
    import subprocess
    from harness import FLEXQ
    env = dict(os.environ, FLEXQ_SERVER=d.url)
    w = subprocess.Popen([FLEXQ, "get", "cm", "-w", "--no-headers"], env=env,
                         stdout=subprocess.PIPE, text=True)
    first = w.stdout.readline()  # the existing jax-train-script
    d.cli("create", "configmap", "watched", "--from-literal=a=b")
    second = w.stdout.readline()
    w.kill()
    w.wait()
    check(first.startswith("jax-train-script") and
          second.startswith("watched"), "get -w: %r %r" % (first, second))
    waiter = subprocess.Popen([FLEXQ, "wait", "cm/watched", "--for=delete",
                               "--timeout=30s"], env=env,
                              stdout=subprocess.PIPE, text=True)
    d.cli("delete", "cm", "watched")
    out, _ = waiter.communicate(timeout=60)
    check(waiter.returncode == 0 and "condition met" in out,
          "wait --for=delete: %r" % out)

    rc, out, err = d.cli("delete", "rayjob", "rayjob-tpu-v6e-dws-2")
    check(rc == 0 and out.strip() ==
          'rayjob.ray.io "rayjob-tpu-v6e-dws-2" deleted', "delete: %s" % out)

    rc, out, err = d.cli("delete", "rayjob", "rayjob-tpu-v6e-dws-2")
    check(rc == 1 and "NotFound" in err, "delete twice: %s" % err)
    rc, out, err = d.cli("delete", "rayjob", "rayjob-tpu-v6e-dws-2",
                         "--ignore-not-found")
    check(rc == 0, "--ignore-not-found")

    rc, out, err = d.cli("version")
    check(rc == 0 and "Client Version: v" in out and
          "Server Version: v" in out, "version: %s" % out)
    # One daemon per data directory.
    import subprocess
    from harness import FLEXQD
    p = subprocess.run([FLEXQD, "--listen", "127.0.0.1:0", "--data-dir",
                        d.data_dir], capture_output=True, text=True,
                       timeout=30)
    check(p.returncode == 1 and "another flexqd" in p.stderr,
          "second flexqd on the same dir: %s" % p.stderr)
    check(d.stop() == 0, "clean shutdown on SIGTERM")
finally:
    d.cleanup()
finish()
