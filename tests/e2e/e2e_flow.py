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
from harness import (Daemon, check, finish,  # noqa: E402
                     QUEUES, RAYJOBS, TRAIN, POOL)


d = Daemon(time_scale=200).start()
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
    for i, job in enumerate(RAYJOBS, 1):
        rc, out, err = d.cli("apply", "-f", "-", stdin=job)
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
    check("Epoch 40: Loss" in out, "Epoch 40 in the log: %s" % out[-800:])
    # Four workers say it: one line, and Ray's fold of the other three.
    done = [l for l in out.splitlines() if "Training Complete!" in l]
    check(any("[repeated 3x across cluster]" in l for l in done) or
          len(done) == 4, "Training Complete! from four workers: %s" % done)
    check(any(l.rstrip().endswith("succeeded") and
              "Job 'rayjob-tpu-v6e-dws-1-" in l for l in out.splitlines()),
          "the success banner: %s" % out[-500:])
    st, rj, _ = d.request("GET", "/apis/ray.io/v1/namespaces/default/"
                          "rayjobs/rayjob-tpu-v6e-dws-1")
    metrics = rj.get("status", {}).get("metrics", {})
    check(st == 200 and "loss" in metrics and metrics.get("epoch") == 40,
          "reported metrics through the API: %s" % metrics)
    # A forecast now guesses run times from the two finished runs.
    st, est, _ = d.request(
        "POST", "/apis/estimates.flexq.dev/v1alpha1/namespaces/default/"
        "estimates", raw=RAYJOBS[0].replace("rayjob-tpu-v6e-dws-1",
                                            "what-if").encode(),
        ctype="application/yaml")
    rt = est.get("runtimes", {}) if st == 200 else {}
    check(rt.get("historyRuns") == 2 and rt.get("confidence") is not None
          and rt.get("forecastConfidence") == "high",
          "the estimate's history holds both runs: %s %s" % (st, rt))

    # Idle TPU nodes go after the unneeded time; both pools end at zero.
    rc, out, err = d.cli("wait", "nodepool/on-demand-pool", "nodepool/dws-pool",
                         "--for=jsonpath={.status.nodeCount}=0",
                         "--timeout=120s")
    check(rc == 0, "TPU pools back at zero nodes: %s %s" % (out, err))

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
