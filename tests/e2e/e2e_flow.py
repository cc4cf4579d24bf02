"""The whole tutorial through flexqd: the administrator's node pools (with
the gcloud flags) and queue config, the developer's ConfigMap and two
RayJobs; job 1 runs on the on-demand flavor, job 2 falls back to the dws
flavor through a ProvisioningRequest; both run to `succeeded`, their logs
say so; then flexqd is killed (SIGKILL) and restarted, and nothing changes:
both workloads stay Finished and no quota is held."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

FIX = os.environ.get("FLEXQ_FIXTURES", "tests/fixtures")
QUEUES = open(os.path.join(FIX, "valid", "dws-tpu-queue.yaml")).read()
RAYJOB = open(os.path.join(FIX, "valid", "rayjob-tpu-v6e-dws.yaml")).read()
TRAIN = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                     "train.py")
POOL = ["--machine-type=ct6e-standard-4t", "--tpu-topology=4x4",
        "--enable-autoscaling", "--num-nodes=0", "--min-nodes=0",
        "--max-nodes=4"]

d = Daemon(time_scale=100).start()
try:
    rc, out, err = d.cli("nodepool", "create", "on-demand-pool",
                         "--reservation-affinity=none", *POOL)
    check(rc == 0, "on-demand pool: %s %s" % (out, err))
    rc, out, err = d.cli("nodepool", "create", "dws-pool", *POOL,
                         "--flex-start", "--enable-queued-provisioning")
    check(rc == 0, "dws pool: %s %s" % (out, err))
    rc, out, err = d.cli("nodepool", "describe", "dws-pool",
                         "--format=get(config.flexStart)")
    check(out.strip() == "True", "flexStart: %r" % out)
    rc, out, err = d.cli("apply", "-f", "-", stdin=QUEUES)
    check(rc == 0, "queues: %s" % err)
    rc, out, err = d.cli("create", "configmap", "jax-train-script",
                         "--from-file=" + TRAIN)
    check(rc == 0, "configmap: %s" % err)
    for i in (1, 2):
        rc, out, err = d.cli("apply", "-f", "-", stdin=RAYJOB.replace(
            "rayjob-tpu-v6e-dws-1", "rayjob-tpu-v6e-dws-%d" % i))
        check(rc == 0, "job %d: %s" % (i, err))

    rc, out, err = d.cli("get", "wl", "-o", "name")
    names = out.split()
    check(len(names) == 2, "two workloads: %r" % out)
    rc, out, err = d.cli("wait", *names, "--for=condition=Admitted",
                         "--timeout=120s")
    check(rc == 0, "both admitted: %s %s" % (out, err))
    st, prs, _ = d.request(
        "GET", "/apis/autoscaling.x-k8s.io/v1/namespaces/default/"
        "provisioningrequests")
    check(st == 200 and len(prs["items"]) == 1,
          "one ProvisioningRequest, for plan B: %s" % prs)

    rc, out, err = d.cli("wait", "rayjob/rayjob-tpu-v6e-dws-1",
                         "rayjob/rayjob-tpu-v6e-dws-2",
                         "--for=jsonpath={.status.jobDeploymentStatus}=Complete",
                         "--timeout=240s")
    check(rc == 0, "both jobs complete: %s %s" % (out, err))
    rc, out, err = d.cli("get", "rayjobs")
    check(out.count("SUCCEEDED") == 2, "both SUCCEEDED:\n%s" % out)

    rc, out, err = d.cli("get", "wl", "-o", "json")
    wls = json.loads(out)["items"]
    flavors = {}
    for w in wls:
        owner = w["metadata"]["name"]
        for a in w.get("status", {}).get("admission", {}).get(
                "podSetAssignments", []):
            if a["name"] == "tpu-group":
                flavors[owner] = a["flavors"].get("google.com/tpu")
        finished = [c for c in w["status"].get("conditions", [])
                    if c["type"] == "Finished"]
        check(finished and finished[0]["status"] == "True",
              "%s finished" % owner)
    check(sorted(flavors.values()) == ["dws", "on-demand"],
          "one job per plan: %s" % flavors)
    rc, out, err = d.cli("logs", "job/rayjob-tpu-v6e-dws-1")
    check("succeeded" in out and "Training Complete!" in out,
          "logs: %s" % out[-500:])

    def snapshot():
        st, body, _ = d.request("GET", "/apis/kueue.x-k8s.io/v1beta1/"
                                "clusterqueues/cluster-queue")
        usage = {(f["name"], r["name"]): str(r["total"])
                 for f in body.get("status", {}).get("flavorsReservation", [])
                 for r in f["resources"]}
        st, wl, _ = d.request("GET", "/apis/kueue.x-k8s.io/v1beta1/workloads")
        conds = {w["metadata"]["name"]: sorted(
            (c["type"], c["status"]) for c in w["status"].get("conditions", []))
            for w in wl["items"]}
        return usage, conds

    before = snapshot()
    check(all(v == "0" for v in before[0].values()),
          "no quota held after both finished: %s" % before[0])
    d.kill()
    d.start()
    after = snapshot()
    check(after == before, "a restart changes nothing:\n%s\n%s" %
          (before, after))
    rc, out, err = d.cli("get", "rayjobs")
    check(out.count("SUCCEEDED") == 2, "still SUCCEEDED after the restart")
    check(d.stop() == 0, "clean shutdown")
finally:
    d.cleanup()
finish()
