"""flexqd --config: a FlexqdConfig document sets engine options and the
other documents are applied at start (again at every start, unchanged);
an invalid config stops flexqd with the file's error."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from harness import FLEXQD, Daemon, check, finish  # noqa: E402

cfg = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
cfg.write("""apiVersion: flexq.dev/v1alpha1
kind: FlexqdConfig
spec:
  seed: 7
  policy:
    kueueExact: true
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: from-config
spec:
  nodeLabels:
    cloud.google.com/gke-nodepool: default-pool
""")
cfg.close()

d = Daemon(extra=["--config", cfg.name]).start()
try:
    st, body, _ = d.request(
        "GET", "/apis/kueue.x-k8s.io/v1beta1/resourceflavors/from-config")
    check(st == 200, "the config's flavor exists: %s" % st)
    check(d.stop() == 0, "clean stop")
    d.start()
    st, body, _ = d.request(
        "GET", "/apis/kueue.x-k8s.io/v1beta1/resourceflavors/from-config")
    check(st == 200, "still there after a restart")
    check(d.stop() == 0, "clean stop 2")
finally:
    d.cleanup()

with open(cfg.name, "w") as f:
    f.write("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
            "metadata:\n  name: Bad_Name\n")
tmp = tempfile.mkdtemp(prefix="flexq-e2e-")
p = subprocess.run([FLEXQD, "--listen", "127.0.0.1:0", "--data-dir", tmp,
                    "--config", cfg.name], capture_output=True, text=True,
                   timeout=60)
check(p.returncode == 1 and "--config" in p.stderr,
      "invalid config refused: %s" % p.stderr)
# The policy's durations: each named when wrong, and a number JSON cannot
# carry refused at its line and column before any is read.
for key, val, want in (
        ("starvedAfterSeconds", '"soon"', "policy.starvedAfterSeconds: "
         "seconds from 0 to"),
        ("pendingMessageRefreshSeconds", "90000",
         "policy.pendingMessageRefreshSeconds: seconds from 0 to 86400"),
        ("preemptionGraceSeconds", "-1", "policy.preemptionGraceSeconds"),
        ("starvedAfterSeconds", ".nan", ":5:26: .nan is not a number")):
    with open(cfg.name, "w") as f:
        f.write("apiVersion: flexq.dev/v1alpha1\nkind: FlexqdConfig\n"
                "spec:\n  policy:\n    %s: %s\n" % (key, val))
    p = subprocess.run([FLEXQD, "--listen", "127.0.0.1:0", "--data-dir", tmp,
                        "--config", cfg.name], capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 1 and want in p.stderr,
          "%s: %s refused: %s" % (key, val, p.stderr))
p = subprocess.run([FLEXQD, "--listen", "127.0.0.1:0", "--data-dir", tmp,
                    "--config", "/nonexistent.yaml"], capture_output=True,
                   text=True, timeout=60)
check(p.returncode == 1 and "cannot read" in p.stderr,
      "missing config: %s" % p.stderr)
p = subprocess.run([FLEXQD, "--listen", "nonsense", "--data-dir", tmp],
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 1 and "HOST:PORT" in p.stderr, "bad --listen: %s" %
      p.stderr)
p = subprocess.run([FLEXQD, "--bogus"], capture_output=True, text=True,
                   timeout=60)
check(p.returncode == 1 and "Usage" in p.stderr, "unknown flag")
import shutil  # noqa: E402
shutil.rmtree(tmp, ignore_errors=True)
os.unlink(cfg.name)
finish()
