"""Pods read Secrets as Kubernetes' kubelet gives them (runner/podspec.c).

A Job (--provider local) whose pod mounts a Secret volume (an item with
its own path and mode, defaultMode for the rest) and reads it through
env[].valueFrom.secretKeyRef and envFrom[].secretRef is created before the
Secret exists: the pod stays Pending, its container waiting
ContainerCreating with the kubelet's FailedMount message. Once the Secret
is stored (data base64 and stringData), the pod runs and its log shows the
decoded values, the file modes and the env. A pod whose env names a
missing Secret waits with CreateContainerConfigError; an optional one
runs without the variable. The stored Secret never shows stringData."""
import base64
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

NS = "default"
SECRETS = "/api/v1/namespaces/%s/secrets" % NS
JOBS = "/apis/batch/v1/namespaces/%s/jobs" % NS


def job(name, ctr_extra, volumes=None, cmd="true"):
    ctr = {"name": "main", "image": "busybox",
           "command": ["sh", "-c", cmd]}
    ctr.update(ctr_extra)
    spec = {"restartPolicy": "Never", "containers": [ctr]}
    if volumes:
        spec["volumes"] = volumes
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"backoffLimit": 0, "template": {"spec": spec}}}


def pod_of(d, jobname):
    st, body, _ = d.request(
        "GET", "/api/v1/namespaces/%s/pods?labelSelector="
        "batch.kubernetes.io/job-name%%3D%s" % (NS, jobname))
    items = body.get("items", []) if st == 200 and isinstance(body, dict) \
        else []
    return items[0] if items else None


def wait_pod(d, jobname, pred, secs=60):
    deadline = time.monotonic() + secs
    pod = None
    while time.monotonic() < deadline:
        pod = pod_of(d, jobname)
        if pod and pred(pod):
            return pod
        time.sleep(0.1)  # the poll interval
    return pod


def waiting(pod):
    cs = (pod.get("status", {}).get("containerStatuses") or [{}])[0]
    return cs.get("state", {}).get("waiting", {})


def phase(pod):
    return pod.get("status", {}).get("phase", "") if pod else ""


def log_of(d, pod):
    st, body, _ = d.request("GET", "/api/v1/namespaces/%s/pods/%s/log" % (
        NS, pod["metadata"]["name"]))
    return body if isinstance(body, str) else ""


def main():
    d = Daemon(extra=["--provider", "local"]).start()
    try:
        reader = job(
            "reader",
            {"env": [{"name": "PW", "valueFrom": {"secretKeyRef": {
                "name": "creds", "key": "pw"}}}],
             "envFrom": [{"prefix": "S_", "secretRef": {"name": "creds"}}],
             "volumeMounts": [{"name": "sec", "mountPath": "/secrets"}]},
            volumes=[{"name": "sec", "secret": {
                "secretName": "creds", "defaultMode": 0o440,
                "items": [{"key": "user", "path": "u/name"},
                          {"key": "pw", "path": "pw", "mode": 0o400}]}}],
            cmd='cat "$1"; echo; cat "$2"; echo; stat -c %a "$1" "$2"; '
                'echo "PW=$PW S_user=$S_user S_pw=$S_pw"')
        reader["spec"]["template"]["spec"]["containers"][0]["args"] = [
            "sh", "/secrets/u/name", "/secrets/pw"]
        st, body, _ = d.request("POST", JOBS, body=reader)
        check(st == 201, "the reader Job is created (%r %r)" % (st, body))
        pod = wait_pod(d, "reader",
                       lambda p: waiting(p).get("reason") ==
                       "ContainerCreating")
        w = waiting(pod) if pod else {}
        check(phase(pod) == "Pending" and 'secret "creds" not found' in
              w.get("message", ""),
              "without its Secret the pod waits, FailedMount's message: %s"
              % (pod or {}).get("status"))
        st, evs, _ = d.request("GET", "/api/v1/namespaces/%s/events" % NS)
        check(any(e.get("reason") == "FailedMount" for e in
                  (evs or {}).get("items", [])),
              "a FailedMount event is recorded")

        secret = {"apiVersion": "v1", "kind": "Secret",
                  "metadata": {"name": "creds", "namespace": NS},
                  "data": {"user": base64.b64encode(b"alice").decode()},
                  "stringData": {"pw": "p@ss w0rd"}}
        st, body, _ = d.request("POST", SECRETS, body=secret)
        check(st == 201 and body.get("type") == "Opaque" and
              "stringData" not in body and
              body.get("data", {}).get("pw") ==
              base64.b64encode(b"p@ss w0rd").decode(),
              "the Secret is stored with stringData merged (%r %r)"
              % (st, body))
        pod = wait_pod(d, "reader",
                       lambda p: phase(p) in ("Succeeded", "Failed"))
        check(phase(pod) == "Succeeded",
              "with its Secret the pod runs: %s" % (pod or {}).get("status"))
        out = log_of(d, pod) if pod else ""
        lines = out.splitlines()
        check(lines[:4] == ["alice", "p@ss w0rd", "440", "400"] and
              "PW=p@ss w0rd S_user=alice S_pw=p@ss w0rd" in out,
              "the pod read the volume (paths, modes) and the env: %r" % out)

        # an env reference to a missing Secret: CreateContainerConfigError
        envonly = job("envonly", {"env": [{"name": "X", "valueFrom": {
            "secretKeyRef": {"name": "nope", "key": "k"}}}]})
        st, _, _ = d.request("POST", JOBS, body=envonly)
        pod = wait_pod(d, "envonly",
                       lambda p: waiting(p).get("reason") ==
                       "CreateContainerConfigError")
        check(pod is not None and phase(pod) == "Pending" and
              waiting(pod).get("message") == 'secret "nope" not found',
              "a missing env Secret: CreateContainerConfigError (%s)"
              % (pod or {}).get("status"))
        # a key the Secret lacks
        keyless = job("keyless", {"env": [{"name": "X", "valueFrom": {
            "secretKeyRef": {"name": "creds", "key": "absent"}}}]})
        d.request("POST", JOBS, body=keyless)
        pod = wait_pod(d, "keyless",
                       lambda p: waiting(p).get("reason") ==
                       "CreateContainerConfigError")
        check(pod is not None and waiting(pod).get("message") ==
              "couldn't find key absent in Secret default/creds",
              "a missing key names it: %s" % (pod or {}).get("status"))
        # optional references run without the variable
        opt = job("optional", {"env": [{"name": "X", "valueFrom": {
            "secretKeyRef": {"name": "nope", "key": "k",
                             "optional": True}}}],
            "envFrom": [{"secretRef": {"name": "nope2", "optional": True}}]},
            cmd='echo "X=${X-unset}"')
        d.request("POST", JOBS, body=opt)
        pod = wait_pod(d, "optional",
                       lambda p: phase(p) in ("Succeeded", "Failed"))
        check(phase(pod) == "Succeeded" and
              log_of(d, pod).strip() == "X=unset",
              "optional references: the pod runs (%s)" % phase(pod))

        # an immutable Secret keeps its data
        d.request("PATCH", SECRETS + "/creds", body={"immutable": True},
                  ctype="application/merge-patch+json")
        st, body, _ = d.request("PATCH", SECRETS + "/creds",
                                body={"stringData": {"user": "mallory"}},
                                ctype="application/merge-patch+json")
        st2, cur, _ = d.request("GET", SECRETS + "/creds")
        check(st == 422 and cur.get("data", {}).get("user") ==
              base64.b64encode(b"alice").decode(),
              "an immutable Secret refuses a data change (%r %r)"
              % (st, body))
    finally:
        d.stop()
    finish()


if __name__ == "__main__":
    main()
