"""The tutorial with `--provider exec`: the nodes come from an
administrator's script (tests/fixtures/providers/fake_provider.py, a fake
cloud in a JSON file), not from the sim. Job 1's on-demand slice is one
create-nodes call, job 2's ProvisioningRequest one provision call, both
jobs run to `succeeded`, and every node is deleted through the script
after the unneeded time (pools back at zero).

Waits are `flexq wait` (watch-based, with a timeout); nothing sleeps."""
import tempfile
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import (Daemon, check, finish,  # noqa: E402
                     QUEUES, RAYJOBS, TRAIN, POOL)


SCRIPT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..",
                                      "fixtures", "providers",
                                      "fake_provider.py"))
state = tempfile.mkdtemp(prefix="flexq-fake-cloud-")
os.environ["FLEXQ_EXEC_PROVIDER"] = SCRIPT
os.environ["FAKE_PROVIDER_DIR"] = state


def calls():
    try:
        with open(os.path.join(state, "calls.log")) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


d = Daemon(extra=["--provider", "exec"], time_scale=100).start()
try:
    # no sim: the cluster's default pool is the administrator's too
    rc, out, err = d.cli("nodepool", "create", "default-pool",
                         "--machine-type=n2-standard-8", "--num-nodes=1",
                         "--enable-autoscaling", "--min-nodes=1",
                         "--max-nodes=2")
    check(rc == 0, "default pool: %s %s" % (out, err))
    rc, out, err = d.cli("nodepool", "create", "on-demand-pool",
                         "--reservation-affinity=none", *POOL)
    check(rc == 0, "on-demand pool: %s %s" % (out, err))
    rc, out, err = d.cli("nodepool", "create", "dws-pool", *POOL,
                         "--flex-start", "--enable-queued-provisioning")
    check(rc == 0, "dws pool: %s %s" % (out, err))
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
    rc, out, err = d.cli("wait", "rayjob/rayjob-tpu-v6e-dws-1",
                         "rayjob/rayjob-tpu-v6e-dws-2",
                         "--for=jsonpath={.status.jobDeploymentStatus}=Complete",
                         "--timeout=110s")
    check(rc == 0, "both jobs complete: %s %s" % (out, err))
    rc, out, err = d.cli("get", "rayjobs")
    check(out.count("SUCCEEDED") == 2, "both SUCCEEDED:\n%s" % out)
    c = calls()
    check(any(l.startswith("create-nodes on-demand-pool 4 ") for l in c),
          "job 1's slice made by create-nodes: %s" % c)
    check(any(l.startswith("provision dws-pool 4 default/") for l in c),
          "job 2's request made by provision: %s" % c)
    rc, out, err = d.cli("wait", "nodepool/on-demand-pool", "nodepool/dws-pool",
                         "--for=jsonpath={.status.nodeCount}=0",
                         "--timeout=120s")
    check(rc == 0, "TPU pools back at zero nodes: %s %s" % (out, err))
    c = calls()
    check(sum(l.startswith("delete-nodes ") for l in c) >= 2,
          "the slices deleted through the script: %s" % c)
    with open(os.path.join(state, "nodes.json")) as f:
        left = json.load(f)
    check(all(v["pool"] == "default-pool" for v in left.values()),
          "the fake cloud keeps only the default pool: %s" % left)
    check(d.stop() == 0, "clean shutdown")
except Exception:
    print("".join(d.log[-60:]), file=sys.stderr)
    raise
finally:
    d.cleanup()
    shutil.rmtree(state, ignore_errors=True)
finish()
