"""A RayJob's driver paused while its workers finish: every line the
workers wrote must still reach the job's log (`flexq logs job/NAME`, the
submitter pod's log that kubectl logs and the dashboard show).

The defect this pins (found by e2e.seed, whose paused driver resumed
late): under flexqd's runner a pod's stdout is a pipe to the log pump, so
the training helper's workers reported log offset 0 (a pipe's size) when
they finished, and a driver that read a worker's end in the same turn as
its last lines forwarded none of them: "Training Complete!" was missing.

Deterministic, without sleeps: the workers' training loop blocks SIGUSR1,
says so in its log and waits for it before its last lines; the test stops
the driver (SIGSTOP), then lets the workers go (SIGUSR1 once both have
said it), polls until both worker pods have Succeeded, and only then continues
the driver (SIGCONT). The driver cannot have read the last lines before it
was stopped, since they were written after. Skips (77) when the test
cannot signal the pods' processes (another user's, or no /proc)."""
import os
import re
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

NAME = "rj-paused"

TRAIN = r'''
import signal
from flexq import train
from flexq.train import JaxTrainer, ScalingConfig


def loop():
    rank = train.get_context().get_world_rank()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    for epoch in range(3):
        train.report({"epoch": epoch, "loss": 1.0 / (epoch + 1)})
        print("Epoch %d: rank %d" % (epoch, rank), flush=True)
    print("rank %d waits for SIGUSR1" % rank, flush=True)
    signal.sigwait({signal.SIGUSR1})
    for i in range(400):  # more than a pipe holds (88 KB)
        print("rank %d last part %03d %s" % (rank, i, "x" * 200))
    print("Training Complete!", flush=True)


res = JaxTrainer(train_loop_per_worker=loop,
                 scaling_config=ScalingConfig(num_workers=2)).fit()
print("Run Result: %s" % (res.metrics,))
'''

RAYJOB = """apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: %s
spec:
  shutdownAfterJobFinishes: true
  entrypoint: python /app/train_paused.py
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
              configMap: {name: paused-train-script}
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
                configMap: {name: paused-train-script}
""" % NAME

def procs_with(*want):
    """Pids of this machine's processes whose environment holds every
    entry of `want` (bytes); pods are processes here (local provider)."""
    pids = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % p, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if all(w in env for w in want):
            pids.append(int(p))
    return pids


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read()
    except OSError:
        return b""


def poll(what, fn, seconds=240):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    check(False, "timed out waiting for " + what)
    return None


if not os.path.isdir("/proc/self"):
    print("SKIP: no /proc to find the pods' processes in")
    sys.exit(77)

work = tempfile.mkdtemp(prefix="flexq-raylog-")
script = os.path.join(work, "train_paused.py")
with open(script, "w") as f:
    f.write(TRAIN)

d = Daemon(extra=["--provider", "local"]).start()
stopped = []
try:
    rc, out, err = d.cli("create", "configmap", "paused-train-script",
                         "--from-file=" + script)
    check(rc == 0, "create configmap: %s %s" % (out, err))
    rc, out, err = d.cli("apply", "-f", "-", stdin=RAYJOB)
    check(rc == 0, "apply rayjob: %s %s" % (out, err))

    driver_env = (b"FLEXQ_RAYJOB=" + NAME.encode(), b"FLEXQ_RAY_ROLE=driver")

    def stop_driver():
        """Stops the submitter pod's processes (the submitter and the
        driver it runs) once the driver itself has started."""
        pids = procs_with(*driver_env)
        if not any(b"train_paused.py" in cmdline(p) for p in pids):
            return None
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
            except PermissionError:
                print("SKIP: cannot signal the pods' processes (another "
                      "user's)")
                sys.exit(77)
            except OSError:
                pass
        return stopped

    poll("the driver of %s to start" % NAME, stop_driver)

    def worker_pods():
        st, pods, _ = d.request(
            "GET", "/api/v1/namespaces/default/pods?labelSelector="
            "ray.io/node-type%3Dworker")
        return (pods or {}).get("items", []) if st == 200 else []

    def pod_log(name):
        st, text, _ = d.request(
            "GET", "/api/v1/namespaces/default/pods/%s/log" % name)
        return text if st == 200 and isinstance(text, str) else ""

    def waiting_workers():
        """The workers' training processes (not their pod's init), once
        each has said it blocks SIGUSR1 and waits for it."""
        pods = [p["metadata"]["name"] for p in worker_pods()]
        if len(pods) != 2 or not all("waits for SIGUSR1" in pod_log(n)
                                     for n in pods):
            return None
        pids = [p for p in procs_with(b"FLEXQ_RAY_ROLE=worker")
                if os.path.basename(cmdline(p).split(b"\0")[0])
                .startswith(b"python") and b"train_paused.py" in cmdline(p)]
        return pids if len(pids) == 2 else None

    workers = poll("both workers to wait for SIGUSR1", waiting_workers)
    for pid in workers or []:
        os.kill(pid, signal.SIGUSR1)

    def worker_phases():
        return sorted(p.get("status", {}).get("phase")
                      for p in worker_pods())

    poll("both worker pods to succeed while the driver is stopped",
         lambda: worker_phases() == ["Succeeded", "Succeeded"])
    check(all(os.path.exists("/proc/%d" % p) for p in stopped),
          "the driver was still stopped when the workers ended")
    for pid in stopped:
        try:
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass
    stopped = []

    rc, out, err = d.cli("wait", "rayjob/" + NAME,
                         "--for=jsonpath={.status.jobDeploymentStatus}="
                         "Complete", "--timeout=240s")
    check(rc == 0, "the rayjob completes: %s %s" % (out, err))
    rc, log, err = d.cli("logs", "job/" + NAME)
    check(rc == 0, "logs job/%s: %s" % (NAME, err))
    for rank in (0, 1):
        check(re.search(r"^\(RayTrainWorker pid=\d+, ip=[0-9.]+\) rank %d "
                        r"last part 399 x+$" % rank, log, re.M) is not None,
              "rank %d's last part reached the job's log" % rank)
        got = len(re.findall(r"\) rank %d last part \d{3} " % rank, log))
        check(got == 400, "all 400 of rank %d's last lines, got %d"
              % (rank, got))
    check(re.search(r"^\(RayTrainWorker pid=\d+, ip=[0-9.]+\) Training "
                    r"Complete!$", log, re.M) is not None,
          "a worker's Training Complete! line: %s" % log[-600:])
    check(re.search(r"Training Complete! \[repeated 1x across cluster\]$",
                    log, re.M) is not None,
          "the other worker's Training Complete! folded: %s" % log[-600:])
    check("Run Result: {'epoch': 2" in log, "the driver's result line")
    check(d.stop() == 0, "flexqd stops cleanly")
finally:
    for pid in stopped:
        try:
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass
    d.cleanup()
    shutil.rmtree(work, ignore_errors=True)
finish()
