"""Kubernetes protobuf bodies (application/vnd.kubernetes.protobuf, the
"k8s\\0" envelope around runtime.Unknown) over plain HTTP, as kubectl 1.32+
and client-go send them: a batch/v1 Job and a v1 Pod are stored with the
fields a JSON body would give (pointer zeros such as backoffLimit: 0 and
suspend: false kept, unknown fields skipped); the answer is JSON when the
client accepts it and 406 NotAcceptable, with nothing stored, when it
accepts protobuf only; a kind flexq cannot read as protobuf is 415 and a
truncated body 400, both as a Status.

The bodies are encoded here with the field numbers of Kubernetes'
generated.proto (k8s.io/api core/v1 and batch/v1, apimachinery meta/v1)."""
import http.client
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402


def varint(v):
    v &= (1 << 64) - 1
    out = b""
    while True:
        c = v & 0x7f
        v >>= 7
        if v:
            out += bytes([c | 0x80])
        else:
            return out + bytes([c])


def msg(field, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(field << 3 | 2) + varint(len(data)) + data


def num(field, v):
    return varint(field << 3) + varint(v)


def entry(k, v):
    return msg(1, k) + msg(2, v)


def envelope(api_version, kind, raw):
    return b"k8s\0" + msg(1, msg(1, api_version) + msg(2, kind)) + msg(2, raw)


def meta(name, labels=None):
    m = msg(1, name)
    for k, v in (labels or {}).items():
        m += msg(11, entry(k, v))
    return m


CONTAINER = (msg(1, "main") + msg(2, "busybox") + msg(3, "sh") + msg(3, "-c")
             + msg(3, "echo from-protobuf")
             + msg(7, msg(1, "MODE") + msg(2, "pb"))          # env
             + msg(8, msg(2, entry("cpu", msg(1, "250m"))))   # requests
             + num(16, 0)                                     # stdin: false
             + msg(999, "a field from a newer Kubernetes"))   # unknown
POD_SPEC = (msg(2, CONTAINER) + msg(3, "Never")
            + msg(22, msg(1, "team") + msg(2, "Exists")))     # toleration
JOB = envelope("batch/v1", "Job",
               msg(1, meta("pb-job", {"app": "pb"}))
               + msg(2, num(1, 1) + num(7, 0) + num(10, 0)   # parallelism,
                                                             # backoffLimit,
                                                             # suspend
                     + msg(6, msg(2, POD_SPEC)))             # template
               + msg(3, b""))                                # status: {}
POD = envelope("v1", "Pod", msg(1, meta("pb-pod")) + msg(2, POD_SPEC))


def post(d, path, body, accept):
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    headers = {"Content-Type": "application/vnd.kubernetes.protobuf"}
    if accept:
        headers["Accept"] = accept
    conn.request("POST", path, body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    try:
        return resp.status, resp.getheader("Content-Type"), json.loads(data)
    except ValueError:
        return resp.status, resp.getheader("Content-Type"), data


JOBS = "/apis/batch/v1/namespaces/default/jobs"
PODS = "/api/v1/namespaces/default/pods"
BOTH = "application/vnd.kubernetes.protobuf,application/json"

d = Daemon(time_scale=100).start()
try:
    # protobuf only: 406, nothing stored
    st, ct, body = post(d, JOBS, JOB, "application/vnd.kubernetes.protobuf")
    check(st == 406 and body.get("reason") == "NotAcceptable",
          "protobuf-only Accept: 406 %s %s" % (st, body))
    st, _, _ = d.request("GET", JOBS + "/pb-job")
    check(st == 404, "nothing stored after the 406: %s" % st)

    # kubectl's Accept: created, answered in JSON
    st, ct, body = post(d, JOBS, JOB, BOTH)
    check(st == 201 and ct.startswith("application/json") and
          body.get("kind") == "Job", "Job created: %s %s %s" % (st, ct, body))
    st, job, _ = d.request("GET", JOBS + "/pb-job")
    spec = job.get("spec", {}) if st == 200 else {}
    ctr = (spec.get("template", {}).get("spec", {}).get("containers")
           or [{}])[0]
    check(job["metadata"].get("labels") == {"app": "pb"} and
          spec.get("parallelism") == 1 and spec.get("backoffLimit") == 0 and
          spec.get("suspend") is False and
          ctr.get("command") == ["sh", "-c", "echo from-protobuf"] and
          ctr.get("env") == [{"name": "MODE", "value": "pb"}] and
          ctr.get("resources") == {"requests": {"cpu": "250m"}} and
          "stdin" not in ctr and
          spec["template"]["spec"].get("tolerations") ==
          [{"key": "team", "operator": "Exists"}],
          "the stored Job has the body's fields: %s" % job)

    st, ct, body = post(d, PODS, POD, None)
    check(st == 201, "Pod created without Accept: %s %s" % (st, body))
    st, pod, _ = d.request("GET", PODS + "/pb-pod")
    check(st == 200 and pod["spec"].get("restartPolicy") == "Never" and
          pod["spec"]["containers"][0].get("image") == "busybox",
          "the stored Pod: %s" % pod)

    # a kind flexq does not read as protobuf, a truncated body
    dep = envelope("apps/v1", "Deployment", msg(1, meta("web")))
    st, ct, body = post(d, JOBS, dep, BOTH)
    check(st == 415 and body.get("kind") == "Status",
          "other kinds: 415 %s %s" % (st, body))
    st, ct, body = post(d, JOBS, JOB[:-7], BOTH)
    check(st == 400 and "protobuf body" in body.get("message", ""),
          "a truncated body: 400 %s %s" % (st, body))
finally:
    d.cleanup()
finish()
