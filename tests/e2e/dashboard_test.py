"""Browser test of the dashboard (label "browser"): runs the tutorial on a
fresh flexqd (node pools, queue config, train.py, two RayJobs) and drives
Debian's headless chromium through the dashboard with
browser/dashboard.mjs (playwright-core, vendored by package-lock.json).

It only runs when FLEXQ_WITH_BROWSER=1 (so `make test` stays fast) and
exits 77, which ctest reports as skipped, when chromium, node or
playwright-core is missing. Screenshots go to $FLEXQ_BUILD_DIR/screenshots.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, _die_with_parent, check, finish  # noqa: E402

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
BROWSER_DIR = os.path.join(HERE, "browser")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def skip(why):
    print("SKIP:", why)
    sys.exit(SKIP)


if os.environ.get("FLEXQ_WITH_BROWSER") != "1":
    skip("set FLEXQ_WITH_BROWSER=1 to run the browser test")
node = shutil.which("node")
if not node or not os.access(CHROMIUM, os.X_OK):
    skip("needs node and %s (FLEXQ_WITH_BROWSER=1 scripts/install-deps.sh)"
         % CHROMIUM)
if not os.path.isdir(os.path.join(BROWSER_DIR, "node_modules",
                                  "playwright-core")):
    npm = shutil.which("npm")
    if not npm or subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit",
                                  "--no-fund"], cwd=BROWSER_DIR).returncode:
        skip("playwright-core is not installed (npm ci in %s)" % BROWSER_DIR)

FIX = os.environ.get("FLEXQ_FIXTURES", os.path.join(HERE, "..", "fixtures"))
POOLS = """apiVersion: flexq.dev/v1alpha1
kind: NodePool
metadata: {name: default-pool}
spec: {machineType: n2-standard-16, location: us-east5-b, initialNodeCount: 1,
       autoscaling: {enabled: true, minNodeCount: 1, maxNodeCount: 3}}
---
apiVersion: flexq.dev/v1alpha1
kind: NodePool
metadata: {name: on-demand-pool}
spec: {machineType: ct6e-standard-4t, tpuTopology: 4x4, location: us-east5-b,
       reservationAffinity: none, initialNodeCount: 0,
       autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: 4}}
---
apiVersion: flexq.dev/v1alpha1
kind: NodePool
metadata: {name: dws-pool}
spec: {machineType: ct6e-standard-4t, tpuTopology: 4x4, location: us-east5-b,
       flexStart: true, queuedProvisioning: {enabled: true},
       initialNodeCount: 0,
       autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: 4}}
"""

out = os.path.abspath(os.path.join(os.environ.get("FLEXQ_BUILD_DIR", "build"),
                                   "screenshots"))
os.makedirs(out, exist_ok=True)
profile = tempfile.mkdtemp(prefix="flexq-chromium-")
d = Daemon(time_scale=200, extra=["--provider", "sim", "--seed", "1"]).start()
try:
    rc, o, e = d.cli("apply", "-f", "-", stdin=POOLS)
    check(rc == 0, "apply pools: %s" % e)
    rc, o, e = d.cli("apply", "-f",
                     os.path.join(FIX, "valid", "dws-tpu-queue.yaml"))
    check(rc == 0, "apply queues: %s" % e)
    train = os.path.join(HERE, "..", "..", "examples", "train.py")
    rc, o, e = d.cli("create", "configmap", "jax-train-script",
                     "--from-file=" + train)
    check(rc == 0, "configmap: %s" % e)
    job = open(os.path.join(FIX, "valid", "rayjob-tpu-v6e-dws.yaml")).read()
    for i in (1, 2):
        rc, o, e = d.cli("apply", "-f", "-", stdin=job.replace(
            "rayjob-tpu-v6e-dws-1", "rayjob-tpu-v6e-dws-%d" % i))
        check(rc == 0, "rayjob %d: %s" % (i, e))
    p = subprocess.run([node, os.path.join(BROWSER_DIR, "dashboard.mjs"),
                        d.url, out, profile], cwd=BROWSER_DIR, timeout=280,
                       preexec_fn=_die_with_parent)  # no orphaned browser
    if not check(p.returncode == 0, "browser checks (see above)"):
        for what in ("rayjobs,workloads", "pods", "provreq"):
            print(d.cli("get", what, "-A")[1], file=sys.stderr)
finally:
    d.stop()
    d.cleanup()
    shutil.rmtree(profile, ignore_errors=True)
print("screenshots:", out)
finish()
