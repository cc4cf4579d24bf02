"""A pod's log stays under its cap on the write path (runner/logpump.c).

A Job (--provider local) writes 200 MiB to stdout as fast as `tr` can
(about 20 times the 10 MiB cap), then a line holding a NUL byte. While it
writes, and after, the log file never holds more than the cap and log.1
never more than the cap (the guarantee in docs/runtime.md: at most 2 x cap
on disk per pod, no slack); the new log begins with the rotation note; and
?format=json returns the last line whole, NUL included (as \\u0000), so a
NUL does not cut the output; `flexq logs` prints it with U+FFFD."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

CAP = 10 << 20
TOTAL = 200 << 20


def pods_of(d, ns, jobname):
    st, body, _ = d.request(
        "GET", "/api/v1/namespaces/%s/pods?labelSelector="
        "batch.kubernetes.io/job-name%%3D%s" % (ns, jobname))
    return body.get("items", []) if st == 200 and isinstance(body, dict) \
        else []


def size(path):
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def main():
    d = Daemon(extra=["--provider", "local"]).start()
    try:
        cmd = ("head -c %d /dev/zero | tr '\\0' a; printf '\\nend\\0mid\\n'"
               % TOTAL)
        job = {"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "flood", "namespace": "default"},
               "spec": {"backoffLimit": 0, "template": {"spec": {
                   "restartPolicy": "Never",
                   "containers": [{"name": "main", "image": "busybox",
                                   "command": ["sh", "-c", cmd]}]}}}}
        st, body, _ = d.request("POST",
                                "/apis/batch/v1/namespaces/default/jobs",
                                body=job)
        check(st == 201, "the Job is created (%r %r)" % (st, body))
        deadline = time.monotonic() + 120
        pod = None
        biggest = 0
        phase = ""
        while time.monotonic() < deadline:
            pods = pods_of(d, "default", "flood")
            if pods:
                pod = pods[0]
                phase = pod.get("status", {}).get("phase", "")
                pdir = os.path.join(d.data_dir, "pods", "default",
                                    pod["metadata"]["name"])
                biggest = max(biggest, size(pdir + "/log"),
                              size(pdir + "/log.1"))
                if phase in ("Succeeded", "Failed"):
                    break
            time.sleep(0.02)  # the sampling interval
        check(phase == "Succeeded", "the writer finished (%s)" % phase)
        if not pod:
            return
        name = pod["metadata"]["name"]
        pdir = os.path.join(d.data_dir, "pods", "default", name)
        # The pump writes the tail after the process exits: wait for it.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(pdir + "/log", "rb") as f:
                f.seek(max(0, size(pdir + "/log") - 64))
                if f.read().endswith(b"end\0mid\n"):
                    break
            time.sleep(0.05)  # the poll interval
        log, old = size(pdir + "/log"), size(pdir + "/log.1")
        check(biggest <= CAP and log <= CAP and old <= CAP,
              "log and log.1 never passed the cap (largest seen %d, now %d "
              "and %d)" % (biggest, log, old))
        check(old > CAP // 2, "log.1 holds a full earlier part (%d)" % old)
        with open(pdir + "/log", "rb") as f:
            head = f.read(80)
        check(head.startswith(b"flexq: log rotated at"),
              "the current part begins with the rotation note (%r)" % head)
        st, body, _ = d.request(
            "GET", "/api/v1/namespaces/default/pods/%s/log?format=json"
            "&tailLines=1" % name)
        text = body.get("log", "") if isinstance(body, dict) else ""
        check(st == 200 and text == "end\0mid\n",
              "format=json keeps the NUL and what follows (%r)"
              % (text[-40:],))
        st, raw, _ = d.request(
            "GET", "/api/v1/namespaces/default/pods/%s/log?tailLines=1"
            % name)
        check(st == 200 and raw == "end\0mid\n",
              "the plain log has the NUL line whole (%r)" % (raw,))
        rc, out, errs = d.cli("logs", "pod/" + name, "--tail", "1")
        check(rc == 0 and out == "end\ufffdmid\n",
              "flexq logs shows the line whole, the NUL as U+FFFD (%r %r)"
              % (out, errs))
    finally:
        d.cleanup()
    finish()


if __name__ == "__main__":
    main()
