"""The real kubectl against flexqd, for every kubectl of the Cloud SDK
(kubectl and kubectl.1.27 ... kubectl.1.33 beside gcloud, or on PATH):
version and discovery, namespaces, plain `apply -f` and `create -f` with
client-side validation on (OpenAPI), `create configmap --from-file`,
`create secret generic` and `get secret` (data base64, type Opaque),
`run --restart=Never` and `create job` (protobuf bodies from 1.32),
`create deployment` answered 404 (not served), server-side Tables (columns, -o wide,
get -w), the three patch types, --dry-run=server and diff writing
nothing, explain, get all, NotFound naming the group, and `logs job/NAME`
picking the job's own pod. Each check reads the store back over HTTP.

Skips (exit 77, with a line saying so) when no kubectl is installed."""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

VERSIONS = ["", ".1.27", ".1.28", ".1.29", ".1.30", ".1.31", ".1.32", ".1.33"]


def kubectl_dir():
    g = shutil.which("gcloud")
    if g:
        d = os.path.dirname(os.path.realpath(g))
        if os.path.exists(os.path.join(d, "kubectl")):
            return d
    k = shutil.which("kubectl")
    return os.path.dirname(os.path.realpath(k)) if k else None


KDIR = kubectl_dir()
if not KDIR:
    print("SKIP: kubectl is not installed (neither beside gcloud nor on "
          "PATH)")
    sys.exit(77)
BINS = [os.path.join(KDIR, "kubectl" + v) for v in VERSIONS
        if os.access(os.path.join(KDIR, "kubectl" + v), os.X_OK)]

tmp = tempfile.mkdtemp(prefix="flexq-kubectl-")
d = Daemon(time_scale=100).start()


def kubeconfig():
    path = os.path.join(tmp, "kubeconfig")
    with open(path, "w") as f:
        f.write("""apiVersion: v1
kind: Config
clusters:
- cluster: {server: "%s"}
  name: flexq
contexts:
- context: {cluster: flexq, user: me}
  name: flexq
current-context: flexq
users:
- name: me
  user: {}
""" % d.url)
    return path


KUBECONFIG = kubeconfig()


def run(kbin, *args, stdin=None, ns=None):
    cache = os.path.join(tmp, "cache-" + os.path.basename(kbin))
    cmd = [kbin, "--kubeconfig", KUBECONFIG, "--cache-dir", cache]
    if ns:
        cmd += ["-n", ns]
    p = subprocess.run(cmd + list(args), input=stdin, capture_output=True,
                       text=True, timeout=60, cwd=tmp)
    return p.returncode, p.stdout, p.stderr


def get(path):
    st, body, _ = d.request("GET", path)
    return body if st == 200 else None


def cm_path(ns, name=""):
    return "/api/v1/namespaces/%s/configmaps%s" % (
        ns, "/" + name if name else "")


def header(out):
    return out.splitlines()[0].split() if out.strip() else []


def one_version(kbin):
    v = os.path.basename(kbin).replace("kubectl", "") or "default"
    ns = "ns-" + (v.strip(".").replace(".", "-") or "default")
    tag = "[%s] " % os.path.basename(kbin)

    rc, out, err = run(kbin, "version", "-o", "json")
    sv = json.loads(out).get("serverVersion", {}) if rc == 0 else {}
    check(sv.get("major") == "1" and sv.get("minor") == "32" and
          sv.get("gitVersion", "").startswith("v1.32."),
          tag + "server version in Kubernetes' shape: %s %s" % (sv, err))

    # namespaces (a protobuf body from 1.32 on)
    rc, out, err = run(kbin, "create", "namespace", ns)
    check(rc == 0 and get("/api/v1/namespaces/" + ns) is not None,
          tag + "create namespace: %s %s" % (out, err))

    # plain apply -f with validation on (OpenAPI v2 protobuf or v3)
    manifest = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n"
                "data: {a: \"1\"}\n")
    rc, out, err = run(kbin, "apply", "-f", "-", stdin=manifest, ns=ns)
    stored = get(cm_path(ns, "app")) or {}
    check(rc == 0 and "configmap/app created" in out and
          stored.get("data") == {"a": "1"},
          tag + "apply -f: %s %s %s" % (out, err, stored))
    rc, out, err = run(kbin, "create", "-f", "-", ns=ns,
                       stdin=manifest.replace("app", "app2"))
    check(rc == 0 and get(cm_path(ns, "app2")) is not None,
          tag + "create -f: %s %s" % (out, err))

    # create configmap --from-file (protobuf from 1.32)
    script = os.path.join(tmp, "train.py")
    rc, out, err = run(kbin, "create", "configmap", "script",
                       "--from-file=" + script, "--from-literal=k=v", ns=ns)
    stored = get(cm_path(ns, "script")) or {}
    check(rc == 0 and stored.get("data") == {
        "train.py": open(script).read(), "k": "v"},
        tag + "create configmap --from-file: %s %s %s" % (out, err, stored))

    # create secret generic (protobuf from 1.32): data stored base64, the
    # type defaulted, the Table as kubectl prints it, -o jsonpath reads back
    rc, out, err = run(kbin, "create", "secret", "generic", "creds",
                       "--from-literal=user=admin",
                       "--from-literal=pass=s3cr=t!", ns=ns)
    stored = get("/api/v1/namespaces/%s/secrets/creds" % ns) or {}
    check(rc == 0 and "secret/creds created" in out and
          stored.get("type") == "Opaque" and
          stored.get("data") == {"user": base64.b64encode(b"admin").decode(),
                                 "pass": base64.b64encode(
                                     b"s3cr=t!").decode()},
          tag + "create secret generic: %s %s %s" % (out, err, stored))
    rc, out, err = run(kbin, "get", "secret", "creds", ns=ns)
    check(rc == 0 and header(out) == ["NAME", "TYPE", "DATA", "AGE"] and
          out.splitlines()[1].split()[:3] == ["creds", "Opaque", "2"],
          tag + "get secret table: %r %s" % (out, err))
    rc, out, err = run(kbin, "get", "secret", "creds", "-o",
                       "jsonpath={.data.pass}", ns=ns)
    check(rc == 0 and base64.b64decode(out) == b"s3cr=t!",
          tag + "get secret -o jsonpath: %r %s" % (out, err))
    # stringData (apply) is merged into data and never stored as such
    rc, out, err = run(kbin, "apply", "-f", "-", ns=ns, stdin=(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: tls}\n"
        "type: kubernetes.io/basic-auth\nstringData: {username: u}\n"))
    stored = get("/api/v1/namespaces/%s/secrets/tls" % ns) or {}
    check(rc == 0 and stored.get("data") == {"username": "dQ=="} and
          "stringData" not in stored and
          stored.get("type") == "kubernetes.io/basic-auth",
          tag + "apply stringData: %s %s %s" % (out, err, stored))
    # bad base64 is refused, nothing stored
    rc, out, err = run(kbin, "apply", "-f", "-", ns=ns, stdin=(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: bad}\n"
        "data: {k: \"no*t\"}\n"))
    check(rc != 0 and get("/api/v1/namespaces/%s/secrets/bad" % ns) is None,
          tag + "bad base64 refused: %s %s" % (out, err))
    # Secret is not in category all (as in Kubernetes)
    rc, out, err = run(kbin, "get", "all", ns=ns)
    check(rc == 0 and "secret/" not in out,
          tag + "get all has no secrets: %r %s" % (out, err))

    # run (a Pod) and create job (protobuf bodies from 1.32)
    rc, out, err = run(kbin, "run", "runner", "--image=busybox",
                       "--restart=Never", "--labels=app=r,tier=t",
                       "--env=GREETING=hi", "--port=8080", "--command", "--",
                       "sh", "-c", "echo run", ns=ns)
    pod = get("/api/v1/namespaces/%s/pods/runner" % ns) or {}
    ctr = (pod.get("spec", {}).get("containers") or [{}])[0]
    check(rc == 0 and pod.get("metadata", {}).get("labels") ==
          {"app": "r", "tier": "t"} and ctr.get("image") == "busybox" and
          ctr.get("command") == ["sh", "-c", "echo run"] and
          ctr.get("env") == [{"name": "GREETING", "value": "hi"}] and
          ctr.get("ports") == [{"containerPort": 8080}] and
          pod["spec"].get("restartPolicy") == "Never",
          tag + "run --restart=Never stores the pod: %s %s %s" %
          (out, err, pod.get("spec")))
    rc, out, err = run(kbin, "create", "job", "once", "--image=busybox",
                       "--", "sh", "-c", "echo once", ns=ns)
    job = get("/apis/batch/v1/namespaces/%s/jobs/once" % ns) or {}
    tspec = job.get("spec", {}).get("template", {}).get("spec", {})
    ctr = (tspec.get("containers") or [{}])[0]
    check(rc == 0 and ctr.get("name") == "once" and
          ctr.get("image") == "busybox" and
          ctr.get("command") == ["sh", "-c", "echo once"] and
          tspec.get("restartPolicy") == "Never" and
          "batch.kubernetes.io/controller-uid" in job["spec"].get(
              "selector", {}).get("matchLabels", {}),
          tag + "create job stores the job: %s %s %s" % (out, err, job))
    # a kind flexq does not serve: a clear NotFound, nothing stored
    rc, out, err = run(kbin, "create", "deployment", "web",
                       "--image=busybox", ns=ns)
    check(rc != 0 and "could not find the requested resource" in err,
          tag + "create deployment is a clear 404: %s %s" % (out, err))

    # server-side Tables
    rc, out, err = run(kbin, "get", "configmaps", ns=ns)
    check(rc == 0 and header(out) == ["NAME", "DATA", "AGE"] and
          any(l.split()[:2] == ["script", "2"] for l in out.splitlines()),
          tag + "get configmaps table: %r %s" % (out, err))
    rc, out, err = run(kbin, "get", "clusterqueues", "-o", "wide")
    check(rc == 0 and header(out)[:3] == ["NAME", "COHORT", "STRATEGY"],
          tag + "get cq -o wide shows priority-1 columns: %r %s" % (out, err))
    rc, out, err = run(kbin, "get", "cq")
    check(rc == 0 and "STRATEGY" not in out and "PENDING" in out,
          tag + "get cq without wide hides them: %r" % out)

    # patches: json, merge, strategic; strategic on a CRD is 415
    rc, out, err = run(kbin, "patch", "configmap", "app", "--type=json",
                       "-p", '[{"op":"add","path":"/data/b","value":"2"},'
                       '{"op":"test","path":"/data/a","value":"1"}]', ns=ns)
    check(rc == 0 and (get(cm_path(ns, "app")) or {}).get("data") ==
          {"a": "1", "b": "2"}, tag + "json patch: %s %s" % (out, err))
    rc, out, err = run(kbin, "patch", "configmap", "app", "--type=json",
                       "-p", '[{"op":"test","path":"/data/a","value":"9"},'
                       '{"op":"remove","path":"/data/a"}]', ns=ns)
    check(rc != 0 and (get(cm_path(ns, "app")) or {}).get("data") ==
          {"a": "1", "b": "2"}, tag + "failed json patch changes nothing")
    rc, out, err = run(kbin, "patch", "configmap", "app", "--type=merge",
                       "-p", '{"data":{"b":null,"c":"3"}}', ns=ns)
    check(rc == 0 and (get(cm_path(ns, "app")) or {}).get("data") ==
          {"a": "1", "c": "3"}, tag + "merge patch: %s %s" % (out, err))
    rc, out, err = run(kbin, "patch", "configmap", "app",
                       "-p", '{"metadata":{"labels":{"x":"y"}}}', ns=ns)
    check(rc == 0 and (get(cm_path(ns, "app")) or {}).get(
        "metadata", {}).get("labels") == {"x": "y"},
        tag + "strategic merge patch: %s %s" % (out, err))
    rc, out, err = run(kbin, "patch", "localqueue", "user-queue",
                       "-p", '{"spec":{"clusterQueue":"other"}}',
                       ns="default")
    lq = get("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/localqueues/"
             "user-queue") or {}
    check(rc != 0 and "in an unknown format" in err and
          lq.get("spec", {}).get("clusterQueue") == "cluster-queue",
          tag + "strategic merge on a CRD: %s %s" % (out, err))

    # dry runs write nothing
    rc, out, err = run(kbin, "create", "configmap", "dry", "--from-literal=a=b",
                       "--dry-run=server", ns=ns)
    check(rc == 0 and "server dry run" in out and
          get(cm_path(ns, "dry")) is None,
          tag + "create --dry-run=server stores nothing: %s %s" % (out, err))
    rc, out, err = run(kbin, "delete", "configmap", "app2",
                       "--dry-run=server", ns=ns)
    check(rc == 0 and get(cm_path(ns, "app2")) is not None,
          tag + "delete --dry-run=server keeps it: %s %s" % (out, err))
    rc, out, err = run(kbin, "label", "configmap", "app2", "l=v",
                       "--dry-run=server", ns=ns)
    check(rc == 0 and not (get(cm_path(ns, "app2")) or {}).get(
        "metadata", {}).get("labels"), tag + "label --dry-run=server")
    before = get(cm_path(ns, "app"))
    rc, out, err = run(kbin, "diff", "-f", "-", ns=ns,
                       stdin=manifest.replace('"1"', '"5"'))
    after = get(cm_path(ns, "app"))
    check(rc == 1 and '+  a: "5"' in out and '-  a: "1"' in out and
          before == after, tag + "diff shows the change and writes "
          "nothing: rc=%d %s %s" % (rc, out, err))

    # server-side apply: managers keep their fields, conflicts, force
    ssa = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\n"
           "data: %s\n")
    rc, out, err = run(kbin, "apply", "--server-side", "-f", "-", ns=ns,
                       stdin=ssa % '{a: "1", b: "2"}')
    obj = get(cm_path(ns, "ssa")) or {}
    mf = obj.get("metadata", {}).get("managedFields", [])
    check(rc == 0 and "serverside-applied" in out and
          [(m["manager"], m["operation"]) for m in mf] ==
          [("kubectl", "Apply")] and
          set(mf[0]["fieldsV1"]["f:data"]) == {"f:a", "f:b"},
          tag + "apply --server-side records managedFields: %s %s %s" %
          (out, err, mf))
    rc, out, err = run(kbin, "apply", "--server-side", "--field-manager=other",
                       "-f", "-", ns=ns, stdin=ssa % '{c: "3"}')
    check(rc == 0 and (get(cm_path(ns, "ssa")) or {}).get("data") ==
          {"a": "1", "b": "2", "c": "3"},
          tag + "a second manager's apply keeps the first's fields: %s" % err)
    before = get(cm_path(ns, "ssa"))
    rc, out, err = run(kbin, "apply", "--server-side", "--field-manager=other",
                       "-f", "-", ns=ns, stdin=ssa % '{a: "9", c: "3"}')
    check(rc != 0 and 'conflict with "kubectl"' in err and ".data.a" in err
          and get(cm_path(ns, "ssa")) == before,
          tag + "conflict names manager and field, changes nothing: %s" % err)
    rc, out, err = run(kbin, "apply", "--server-side", "--field-manager=other",
                       "--force-conflicts", "-f", "-", ns=ns,
                       stdin=ssa % '{a: "9", c: "3"}')
    check(rc == 0 and (get(cm_path(ns, "ssa")) or {}).get("data") ==
          {"a": "9", "b": "2", "c": "3"}, tag + "--force-conflicts: %s" % err)

    # explain, get all, NotFound
    rc, out, err = run(kbin, "explain", "rayjob.spec")
    check(rc == 0 and "entrypoint" in out and "RayJob" in out,
          tag + "explain rayjob.spec: %s %s" % (out[:300], err))
    rc, out, err = run(kbin, "get", "all", ns=ns)
    check(rc == 0, tag + "get all: %s" % err)
    rc, out, err = run(kbin, "get", "rayjob", "nope", ns=ns)
    check(rc != 0 and 'rayjobs.ray.io "nope" not found' in err,
          tag + "NotFound names the group: %s" % err)

    # get -w: a Table row per change
    cache = os.path.join(tmp, "cache-" + os.path.basename(kbin))
    w = subprocess.Popen([kbin, "--kubeconfig", KUBECONFIG, "--cache-dir",
                          cache, "-n", ns, "get", "configmaps", "-w"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        first = w.stdout.readline()
        d.request("POST", cm_path(ns), {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "watched"}, "data": {"a": "b", "c": "d"}})
        seen = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = w.stdout.readline()
            if not line:
                break
            if line.split()[:1] == ["watched"]:
                seen = line
                break
        check(first.split()[:2] == ["NAME", "DATA"] and seen and
              seen.split()[1] == "2",
              tag + "get -w prints Table rows: %r %r" % (first, seen))
    finally:
        w.kill()
        w.wait()


d2 = None
try:
    with open(os.path.join(tmp, "train.py"), "w") as f:
        f.write("print('hello from train.py')\n")
    # a ClusterQueue and LocalQueue to read and patch
    for obj in [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
         "metadata": {"name": "f"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
         "metadata": {"name": "cluster-queue"},
         "spec": {"namespaceSelector": {}, "queueingStrategy": "StrictFIFO",
                  "resourceGroups": [{"coveredResources": ["cpu"],
                                      "flavors": [{"name": "f", "resources": [
                                          {"name": "cpu",
                                           "nominalQuota": 8}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
         "metadata": {"name": "user-queue", "namespace": "default"},
         "spec": {"clusterQueue": "cluster-queue"}}]:
        st, body, _ = d.request("PATCH", "/apis/kueue.x-k8s.io/v1beta1/%s%s/%s"
                                % ("namespaces/default/" if obj["kind"] ==
                                   "LocalQueue" else "",
                                   obj["kind"].lower() + "s" if obj["kind"] !=
                                   "ClusterQueue" else "clusterqueues",
                                   obj["metadata"]["name"]),
                                obj, ctype="application/apply-patch+yaml")
        check(st in (200, 201), "setup %s: %s %s" % (obj["kind"], st, body))

    ns_list = get("/api/v1/namespaces") or {}
    names = {n["metadata"]["name"] for n in ns_list.get("items", [])}
    check({"default", "kube-system"} <= names,
          "default and kube-system exist: %s" % names)

    for kbin in BINS:
        one_version(kbin)

    # logs job/NAME picks the job's own pod (spec.selector), once
    k = BINS[0]
    job = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: %s}\nspec:\n"
           "  template:\n    spec:\n      restartPolicy: Never\n"
           "      containers:\n      - name: c\n        image: busybox\n"
           "        command: [sh, -c, 'echo %s']\n")
    for name in ("first", "second"):
        rc, out, err = run(k, "create", "-f", "-", stdin=job % (name, name))
        check(rc == 0, "create job %s: %s" % (name, err))
    sel = (get("/apis/batch/v1/namespaces/default/jobs/second") or {}).get(
        "spec", {}).get("selector", {}).get("matchLabels", {})
    check("batch.kubernetes.io/controller-uid" in sel,
          "the job has spec.selector: %s" % sel)
    deadline = time.monotonic() + 60
    out = ""
    while time.monotonic() < deadline:
        j = get("/apis/batch/v1/namespaces/default/jobs/second") or {}
        if j.get("status", {}).get("succeeded"):
            rc, out, err = run(k, "logs", "job/second")
            break
        time.sleep(0.2)
    check(out.strip() == "second", "logs job/second: %r" % out)

    # the core kinds' printer columns, as kubectl prints them
    for kind, want in [
            ("pods", ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]),
            ("jobs", ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]),
            ("nodes", ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]),
            ("namespaces", ["NAME", "STATUS", "AGE"]),
            ("events", ["LAST", "SEEN", "TYPE", "REASON", "OBJECT",
                        "MESSAGE"]),
            ("clusterqueues", ["NAME", "COHORT", "PENDING", "WORKLOADS",
                               "ADMITTED", "WORKLOADS"]),
            ("localqueues", ["NAME", "CLUSTERQUEUE", "PENDING", "WORKLOADS",
                             "ADMITTED", "WORKLOADS"])]:
        rc, out, err = run(k, "get", kind, "-A" if kind == "events" else
                           "-n", *([] if kind == "events" else ["default"]))
        got = header(out)
        if kind == "events":
            got = got[1:]  # -A adds NAMESPACE
        check(rc == 0 and got == want,
              "get %s columns: %r %s" % (kind, out[:200], err))
    rc, out, err = run(k, "get", "pods", "-n", "default")
    check(any(l.split()[2:3] == ["Completed"] for l in out.splitlines()),
          "a finished pod's STATUS is Completed: %r" % out)
finally:
    d.cleanup()
    shutil.rmtree(tmp, ignore_errors=True)
finish()
