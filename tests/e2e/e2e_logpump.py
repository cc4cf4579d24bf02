"""One log pump serves every pod of a flexqd (runner/logpump.c).

Three pods that run at the same time have their output pumped by one
flexq-logpump process (the only one holding descriptors into this
daemon's data directory), each into its own log, complete when the pod
is reported Succeeded. A pump that is gone (killed here) is started again
for the next pod. When flexqd itself is killed, the pump writes what the
pod had written and lets go of the pod once its tree has ended (the pod
dies with flexqd), leaving nothing behind that holds the data directory."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402


def create_job(d, name, cmd):
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": name, "namespace": "default"},
           "spec": {"backoffLimit": 0, "template": {"spec": {
               "restartPolicy": "Never",
               "containers": [{"name": "main", "image": "busybox",
                               "command": ["sh", "-c", cmd]}]}}}}
    st, body, _ = d.request("POST", "/apis/batch/v1/namespaces/default/jobs",
                            body=job)
    check(st == 201, "Job %s is created (%r %r)" % (name, st, body))


def pod_of(d, job):
    st, body, _ = d.request(
        "GET", "/api/v1/namespaces/default/pods?labelSelector="
        "batch.kubernetes.io/job-name%%3D%s" % job)
    items = body.get("items", []) if st == 200 and isinstance(body, dict) \
        else []
    return items[0] if items else None


def pod_dir(d, pod):
    return os.path.join(d.data_dir, "pods", "default",
                        pod["metadata"]["name"])


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def wait_for(what, cond, seconds=30):
    """Polls cond() (every 20 ms) until it returns something true."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.02)  # the poll interval
    check(False, "timed out waiting for " + what)
    return None


def pumps_of(d):
    """Pids of flexq-logpump processes holding a descriptor into d's data
    directory (other daemons' pumps on the machine hold none)."""
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % p) as f:
                if f.read().strip() != "flexq-logpump":
                    continue
            for fd in os.listdir("/proc/%s/fd" % p):
                if os.readlink("/proc/%s/fd/%s" % (p, fd)).startswith(
                        d.data_dir + "/"):
                    found.append(int(p))
                    break
        except OSError:
            pass
    return found


def pod_with_line(d, job, line):
    """The job's pod once its log holds line, else None."""
    pod = pod_of(d, job)
    return pod if pod and line in read(pod_dir(d, pod) + "/log") else None


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def phase_of(d, job):
    pod = pod_of(d, job)
    return pod.get("status", {}).get("phase", "") if pod else ""


def main():
    d = Daemon(extra=["--provider", "local"]).start()
    try:
        names = ["pa", "pb", "pc"]
        for n in names:
            # each waits for a file the test puts in its own directory
            create_job(d, n, "echo start-%s; while [ ! -e go ]; do sleep "
                       "0.02; done; echo end-%s" % (n, n))
        pods = {}
        for n in names:
            pods[n] = wait_for("pod %s's first line" % n,
                               lambda n=n: pod_with_line(
                                   d, n, b"start-%s\n" % n.encode()))
        running = pumps_of(d)
        check(len(running) == 1,
              "one pump serves the three running pods (%r)" % running)
        for n in names:
            if pods[n]:
                open(pod_dir(d, pods[n]) + "/go", "w").close()
        for n in names:
            wait_for("pod %s to succeed" % n,
                     lambda n=n: phase_of(d, n) == "Succeeded")
            log = read(pod_dir(d, pods[n]) + "/log") if pods[n] else b""
            check(log.endswith(b"end-%s\n" % n.encode()),
                  "pod %s's log is complete when it has succeeded (%r)"
                  % (n, log[-80:]))
            others = [o for o in names if o != n and
                      (b"-%s\n" % o.encode()) in log]
            check(not others, "pod %s's log holds only its own output (%r)"
                  % (n, others))

        # A pump that is gone is started again for the next pod.
        if len(running) == 1 and alive(running[0]):
            os.kill(running[0], signal.SIGKILL)
            wait_for("the killed pump to be gone",
                     lambda: not alive(running[0]))
        create_job(d, "pd", "echo hello-pd")
        wait_for("pod pd to succeed", lambda: phase_of(d, "pd") == "Succeeded")
        pod = pod_of(d, "pd")
        log = read(pod_dir(d, pod) + "/log") if pod else b""
        check(log.endswith(b"hello-pd\n"),
              "after the pump was killed the next pod's output still "
              "reaches its log (%r)" % log[-80:])

        # flexqd killed while a pod runs: the pump has written the pod's
        # output and lets go once the pod's tree is gone.
        create_job(d, "pe", "echo start-pe; sleep 60")
        pod = wait_for("pod pe's first line",
                       lambda: pod_with_line(d, "pe", b"start-pe\n"))
        d.kill()
        gone = wait_for("no pump to hold the data directory after flexqd "
                        "was killed", lambda: not pumps_of(d))
        check(gone, "the pump let go of the pods after flexqd was killed "
              "(%r)" % pumps_of(d))
        if pod:
            check(b"start-pe\n" in read(pod_dir(d, pod) + "/log"),
                  "pod pe's log kept its output across flexqd's death")
    finally:
        d.cleanup()
    finish()


if __name__ == "__main__":
    main()
