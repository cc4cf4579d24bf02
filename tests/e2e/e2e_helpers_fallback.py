"""flexqd without its two helpers beside it (flexq-pod-init and
flexq-logpump are looked up in flexqd's own folder) runs them from its own
binary: a pod still runs, its output still reaches its log through one
pump, and that pump is flexqd's binary run under the pump's name (the
constructor in runner/logpump.c). The build puts the helpers beside every
binary that runs pods, so only this test takes the fallback."""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402
from harness import Daemon, check, finish  # noqa: E402


def pod_of(d, job):
    st, body, _ = d.request(
        "GET", "/api/v1/namespaces/default/pods?labelSelector="
        "batch.kubernetes.io/job-name%%3D%s" % job)
    items = body.get("items", []) if st == 200 and isinstance(body, dict) \
        else []
    return items[0] if items else None


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def inits_from(exe):
    """Pids of flexq-pod-init processes running the binary exe."""
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % p) as f:
                if f.read().strip() != "flexq-pod-init":
                    continue
            if os.readlink("/proc/%s/exe" % p) == exe:
                found.append(int(p))
        except OSError:
            pass
    return found


def pump_exes(data_dir):
    """Executables of the flexq-logpump processes holding a descriptor
    into data_dir."""
    exes = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % p) as f:
                if f.read().strip() != "flexq-logpump":
                    continue
            if any(os.readlink("/proc/%s/fd/%s" % (p, fd)).startswith(
                    data_dir + "/") for fd in os.listdir("/proc/%s/fd" % p)):
                exes.append(os.readlink("/proc/%s/exe" % p))
        except OSError:
            pass
    return exes


def main():
    alone = tempfile.mkdtemp(prefix="flexq-alone-")
    copy = os.path.join(alone, "flexqd")
    shutil.copy2(harness.FLEXQD, copy)
    harness.FLEXQD = copy
    d = Daemon(extra=["--provider", "local"]).start()
    try:
        job = {"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "alone", "namespace": "default"},
               "spec": {"backoffLimit": 0, "template": {"spec": {
                   "restartPolicy": "Never",
                   "containers": [{"name": "main", "image": "busybox",
                                   "command": ["sh", "-c",
                                               "echo hello-alone; while [ ! "
                                               "-e go ]; do sleep 0.02; "
                                               "done; echo bye-alone"]}]}}}}
        st, body, _ = d.request(
            "POST", "/apis/batch/v1/namespaces/default/jobs", body=job)
        check(st == 201, "the Job is created (%r %r)" % (st, body))
        deadline = time.monotonic() + 30
        pdir = None
        while time.monotonic() < deadline:
            pod = pod_of(d, "alone")
            if pod:
                pdir = os.path.join(d.data_dir, "pods", "default",
                                    pod["metadata"]["name"])
                if b"hello-alone\n" in read(pdir + "/log"):
                    break
            time.sleep(0.02)  # the poll interval
        check(pdir and b"hello-alone\n" in read(pdir + "/log"),
              "the pod's first line reached its log")
        exes = pump_exes(d.data_dir)
        check(exes == [copy],
              "one pump, run from flexqd's own binary (%r)" % exes)
        if any("with a pid namespace per pod" in line for line in d.log):
            check(inits_from(copy),
                  "the pod's pid 1 is flexqd's own binary as flexq-pod-init")
        else:
            print("no pid namespace per pod here: the pod init's fallback "
                  "is not exercised")
        if pdir:
            open(pdir + "/go", "w").close()
        phase = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and phase != "Succeeded":
            pod = pod_of(d, "alone")
            phase = pod.get("status", {}).get("phase", "") if pod else ""
            time.sleep(0.02)  # the poll interval
        check(phase == "Succeeded", "the pod succeeded (%s)" % phase)
        check(pdir and read(pdir + "/log").endswith(b"bye-alone\n"),
              "its log is complete (%r)"
              % (read(pdir + "/log")[-80:] if pdir else b""))
    finally:
        d.cleanup()
        shutil.rmtree(alone, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
