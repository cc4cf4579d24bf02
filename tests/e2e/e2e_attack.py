"""A developer of team-a attacks team-b (a fresh review of issue 17).

API part (any user): what a create takes from its body. A developer may
create Workloads and Jobs in its namespace; the body must not decide what
the API server owns. A Workload created with `status.admission` and an
Admitted condition, a Job created Complete, an object dated 2001 (the
ClusterQueue's FIFO orders by creation time) or carrying another object's
uid: each is stored with an empty status, a fresh uid and the time of the
create, by POST, by server-side apply and by dryRun alike.

Pod part (root only, as e2e_sandbox.py): all pods run as one user
(flexq-pod), so whatever they share is shared between namespaces. A
team-b pod writes a secret to /tmp, /var/tmp and /dev/shm and creates a
System V shared memory segment (and /run/lock, world-writable too); a
team-a pod then looks for each, and
plants a file in /tmp for the next pod of team-b. Each pod must have its
own /tmp, /var/tmp, /dev/shm and IPC namespace, as a Kubernetes pod does.
A hostPath of the host's /proc (or of a directory that holds it, such as
/) is refused: through it team-b's pod, same user, would show its
environment and its whole file system (/proc/PID/environ, /root).

Links (root only): flexqd, root, writes a pod's Secret volume again when
the pod restarts and binds its volumes' subPaths. A pod that leaves a
symbolic link in its Secret volume (to a directory or file only root may
touch) or in its emptyDir (where a subPath is) must not get root to
write, chmod or bind through it.

Waits are `flexq wait` or polls with a deadline; nothing sleeps to wait.
"""
import base64
import os
import random
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

ADMIN = "admin-token-attack-0123"
DEV = "dev-token-attack-abcdef"
KQ = "/apis/kueue.x-k8s.io/v1beta1"
OLD = "2001-01-01T00:00:00Z"


def until(what, fn, timeout=60):
    """Polls fn every 50 ms until it returns something truthy, or records
    a failure at the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.05)  # the poll interval
    check(False, "timed out: " + what)
    return None


def forged_workload(name):
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": name, "namespace": "team-a",
                         "creationTimestamp": OLD, "generation": 7},
            "spec": {"queueName": "lq", "podSets": [{
                "name": "main", "count": 1, "template": {"spec": {
                    "containers": [{"name": "c", "image": "x", "resources": {
                        "requests": {"cpu": "1"}}}]}}}]},
            "status": {"admission": {
                "clusterQueue": "cq", "podSetAssignments": [{
                    "name": "main", "count": 1,
                    "flavors": {"cpu": "default-flavor"}}]},
                "conditions": [
                    {"type": t, "status": "True", "reason": t,
                     "message": "forged", "lastTransitionTime": OLD}
                    for t in ("QuotaReserved", "Admitted")]}}


def job(name, ns, script, policy="Never"):
    ctr = {"name": "main", "image": "python:3",
           "command": ["python3", "-c", script]}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"backoffLimit": 0, "template": {"spec": {
                "restartPolicy": policy, "containers": [ctr]}}}}


def api_part(d):
    st, victim = d.request("POST", "/api/v1/namespaces/team-b/configmaps",
                           {"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "victim"}}, token=ADMIN)[:2]
    check(st == 201, "team-b's configmap: %s" % victim)
    vuid = victim.get("metadata", {}).get("uid", "none")

    # POST, dryRun and server-side apply of a Workload "already admitted"
    for how, method, path, ctype in (
            ("dryRun", "POST", KQ + "/namespaces/team-a/workloads?dryRun=All",
             "application/json"),
            ("POST", "POST", KQ + "/namespaces/team-a/workloads",
             "application/json"),
            ("apply", "PATCH", KQ + "/namespaces/team-a/workloads/w-apply"
             "?fieldManager=attack", "application/apply-patch+yaml")):
        wl = forged_workload("w-apply" if how == "apply" else "w-post")
        wl["metadata"]["uid"] = vuid
        st, body, _ = d.request(method, path, wl, ctype=ctype, token=DEV)
        check(st in (200, 201), "%s: the developer's workload: %s" %
              (how, body))
        md = body.get("metadata", {}) if isinstance(body, dict) else {}
        status = body.get("status", {}) if isinstance(body, dict) else {}
        check("admission" not in status and not status.get("conditions"),
              "%s: the body's status is not taken: %s" % (how, status))
        check(md.get("uid") != vuid,
              "%s: team-b's uid is not taken: %s" % (how, md))
        check(md.get("creationTimestamp", OLD) != OLD,
              "%s: the creation time is the server's: %s" % (how, md))
        check(md.get("generation") in (None, 1),
              "%s: generation starts at 1: %s" % (how, md))
    for name in ("w-post", "w-apply"):
        st, body, _ = d.request("GET", KQ + "/namespaces/team-a/workloads/" +
                                name, token=DEV)
        check(st == 200 and "admission" not in body.get("status", {}),
              "stored %s is not admitted: %s" % (name, body))

    # A Workload's priority: a developer gets its class's value, never a
    # number of its own (2^31 would preempt every other namespace)
    st, body, _ = d.request("POST", KQ + "/workloadpriorityclasses", {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "WorkloadPriorityClass", "metadata": {"name": "mid"},
        "value": 100}, token=ADMIN)
    check(st == 201, "the admin's class: %s" % body)
    for name, cls, want in (("p-none", None, 0), ("p-mid", "mid", 100)):
        wl = forged_workload(name)
        del wl["status"]
        wl["spec"]["priority"] = 2147483647
        if cls:
            wl["spec"]["priorityClassName"] = cls
            wl["spec"]["priorityClassSource"] = \
                "kueue.x-k8s.io/workloadpriorityclass"
        st, body, _ = d.request("POST", KQ + "/namespaces/team-a/workloads",
                                wl, token=DEV)
        check(st == 201 and body["spec"].get("priority") == want,
              "a developer's Workload %s has priority %d: %s" %
              (name, want, body.get("spec", {}).get("priority")))
        st, body, _ = d.request(
            "PATCH", KQ + "/namespaces/team-a/workloads/" + name,
            {"spec": {"priority": 2147483647}},
            ctype="application/merge-patch+json", token=DEV)
        check(st == 200 and body["spec"].get("priority") == want,
              "nor by a patch: %s" % body.get("spec", {}).get("priority"))
    wl = forged_workload("p-admin")
    del wl["status"]
    wl["spec"]["priority"] = 5
    st, body, _ = d.request("POST", KQ + "/namespaces/team-a/workloads", wl,
                            token=ADMIN)
    check(st == 201 and body["spec"].get("priority") == 5,
          "an admin sets a number: %s" % body.get("spec", {}).get("priority"))

    # A Job created "Complete" with 5 succeeded pods
    j = job("done", "team-a", "pass")
    j["spec"]["suspend"] = True
    j["status"] = {"succeeded": 5, "conditions": [
        {"type": "Complete", "status": "True"}]}
    st, body, _ = d.request("POST", "/apis/batch/v1/namespaces/team-a/jobs",
                            j, token=DEV)
    check(st == 201 and not body.get("status", {}).get("succeeded") and
          not body.get("status", {}).get("conditions"),
          "a Job's status comes from its controller, not its body: %s" %
          body.get("status"))

    # The GKE emulation's operations name the clusters and pools an admin
    # changed: a developer reads them no more than the pools themselves
    gke = "/v1/projects/flexq-local/locations/us-central1"
    st, op, _ = d.request("POST", gke + "/clusters",
                          {"cluster": {"name": "c1"}}, token=ADMIN)
    check(st == 200 and op.get("name"), "the admin's cluster: %s" % op)
    for path in ("/operations", "/operations/%s" % op.get("name"),
                 "/clusters/c1"):
        st, body, _ = d.request("GET", gke + path, token=DEV)
        check(st == 403 and "c1" not in str(body),
              "a developer cannot read %s: %s %s" % (path, st, body))
    st, body, _ = d.request("POST", gke + "/operations/%s:wait" %
                            op.get("name"), {}, token=DEV)
    check(st == 403, "nor wait on it: %s %s" % (st, body))

    # An admin's Node keeps its status, as in Kubernetes
    st, body, _ = d.request("POST", "/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n-attack"},
        "status": {"capacity": {"cpu": "4"}}}, token=ADMIN)
    check(st == 201 and body.get("status", {}).get("capacity", {})
          .get("cpu") == "4", "a Node keeps its status: %s" % body)


VICTIM = r"""
import ctypes, os, sys, time
S = os.environ["T_SECRET"]
DIRS = [d for d in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
        if os.path.isdir(d)]
for d in DIRS:
    p = os.path.join(d, "flexq-attack-" + S)
    with open(p, "w") as f:
        f.write("SECRET-B")
    os.chmod(p, 0o600)
libc = ctypes.CDLL(None, use_errno=True)
shm = libc.shmget(int(os.environ["T_KEY"]), 4096, 0o1600)  # IPC_CREAT|0600
print("SHM", shm, flush=True)
print("PLANTED", flush=True)
time.sleep(600)
"""

ATTACKER = r"""
import ctypes, os
S = os.environ["T_SECRET"]
DIRS = [d for d in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
        if os.path.isdir(d)]
def attempt(what, fn):
    try:
        r = fn()
        print("LEAK" if r else "DENIED", what, repr(r)[:60], flush=True)
    except Exception as e:
        print("DENIED", what, type(e).__name__, flush=True)
for d in DIRS:
    p = os.path.join(d, "flexq-attack-" + S)
    attempt(d, lambda: open(p).read())
    attempt(d + "-listing", lambda: [n for n in os.listdir(d)
                                     if n.startswith("flexq-attack-")])
libc = ctypes.CDLL(None, use_errno=True)
attempt("sysv-shm", lambda: libc.shmget(int(os.environ["T_KEY"]), 0, 0)
        >= 0 and "found")
attempt("sysv-list", lambda: [l for l in open("/proc/sysvipc/shm")][1:])
open("/tmp/flexq-attack-plant-" + S, "w").write("PLANT")
print("DONE", flush=True)
"""

HOSTPROC = r"""
import os
S = os.environ["T_SECRET"]
for base in ("/hp", "/hp/proc"):
    for p in os.listdir(base) if os.path.isdir(base) else []:
        try:
            if S.encode() in open("%s/%s/environ" % (base, p), "rb").read():
                print("HOSTPROC environ", p, flush=True)
            if os.listdir("%s/%s/root/tmp" % (base, p)):
                print("HOSTPROC root", p, flush=True)
        except OSError:
            pass
"""

READER = r"""
import os
p = "/tmp/flexq-attack-plant-" + os.environ["T_SECRET"]
print("PLANT-SEEN" if os.path.exists(p) else "PLANT-ABSENT", flush=True)
"""


def pod_part(d):
    secret = "%d" % random.randrange(10**12)
    key = str(random.randrange(1 << 20, 1 << 30))
    env = [{"name": "T_SECRET", "value": secret},
           {"name": "T_KEY", "value": key}]

    def with_env(j):
        j["spec"]["template"]["spec"]["containers"][0]["env"] = env
        return j

    st, body, _ = d.request("POST", "/apis/batch/v1/namespaces/team-b/jobs",
                            with_env(job("victim", "team-b", VICTIM)),
                            token=ADMIN)
    check(st == 201, "team-b's job: %s" % body)
    until("team-b's pod planted its secrets", lambda: "PLANTED" in
          d.cli("logs", "job/victim", "-n", "team-b", token=ADMIN)[1])
    dirs = [p for p in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
            if os.path.isdir(p)]
    host = [p for p in dirs
            if os.path.exists(os.path.join(p, "flexq-attack-" + secret))]
    check(not host, "team-b's /tmp files are its own, not the host's: %s" %
          host)
    st, body, _ = d.request("POST", "/apis/batch/v1/namespaces/team-a/jobs",
                            with_env(job("attack", "team-a", ATTACKER)),
                            token=DEV)
    check(st == 201, "the developer's job: %s" % body)
    rc, out, err = d.cli("wait", "job/attack", "-n", "team-a",
                         "--for=condition=Complete", "--timeout=60s",
                         token=DEV)
    check(rc == 0, "the attack job completes: %s %s" % (out, err))
    log = d.cli("logs", "job/attack", "-n", "team-a", token=DEV)[1]
    print("the attack job's log:\n" + log)
    for what in dirs + [p + "-listing" for p in dirs] + ["sysv-shm",
                                                         "sysv-list"]:
        check("DENIED %s " % what in log, "%s denied; log:\n%s" % (what, log))
    check("LEAK" not in log and "SECRET-B" not in log and "DONE" in log,
          "nothing of team-b's leaked:\n%s" % log)
    # The host's /proc (or / that holds it) as a hostPath: team-b's pod
    # runs as the same user, so its /proc/PID/environ and /proc/PID/root
    # (its private /tmp, its volumes) would be open to team-a's pod
    for name, path in (("hp-proc", "/proc"), ("hp-root", "/"),
                       ("hp-self", "/proc/self/root/proc")):
        j = with_env(job(name, "team-a", HOSTPROC))
        j["spec"]["template"]["spec"]["volumes"] = [
            {"name": "hp", "hostPath": {"path": path}}]
        j["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [
            {"name": "hp", "mountPath": "/hp"}]
        st, body, _ = d.request("POST",
                                "/apis/batch/v1/namespaces/team-a/jobs", j,
                                token=DEV)
        check(st == 201, "the developer's %s job: %s" % (name, body))

        def ended(name=name):
            st, pods, _ = d.request(
                "GET", "/api/v1/namespaces/team-a/pods?labelSelector="
                "batch.kubernetes.io/job-name%%3D%s" % name, token=DEV)
            return [p for p in pods.get("items", []) if st == 200 and
                    p.get("status", {}).get("phase") in ("Failed",
                                                         "Succeeded")]
        pods = until("the %s pod ends" % name, ended) or [{}]
        log = d.cli("logs", "job/" + name, "-n", "team-a", token=DEV)[1]
        cs = pods[0].get("status", {}).get("containerStatuses", [{}])[0]
        term = cs.get("state", {}).get("terminated", {})
        check(term.get("reason") == "ContainerCannotRun" and
              "hostPath" in term.get("message", ""),
              "hostPath %s is refused: %s" % (path, term))
        check("HOSTPROC" not in log and secret not in log,
              "hostPath %s shows nothing of team-b: %s" % (path, log))

    st, body, _ = d.request("POST", "/apis/batch/v1/namespaces/team-b/jobs",
                            with_env(job("reader", "team-b", READER)),
                            token=ADMIN)
    rc, out, err = d.cli("wait", "job/reader", "-n", "team-b",
                         "--for=condition=Complete", "--timeout=60s",
                         token=ADMIN)
    log = d.cli("logs", "job/reader", "-n", "team-b", token=ADMIN)[1]
    check("PLANT-ABSENT" in log,
          "team-a's file planted in /tmp is not in team-b's /tmp: %s" % log)


LINKS = r"""
import os, shutil, sys
pod = os.environ["FLEXQ_POD_DIR"]
mark = os.path.join(pod, "first-run")
if os.path.exists(mark):
    print("SECOND-RUN", sorted(os.listdir("/x")), flush=True)
    sys.exit(0)
open(mark, "w").write("1")
def plant(what, fn):
    try:
        fn()
        print("PLANTED", what, flush=True)
    except OSError as e:
        print("REFUSED", what, type(e).__name__, flush=True)
sec = os.path.join(pod, "volumes", "sec")
plant("secret-dir", lambda: (shutil.rmtree(sec + "/sub"),
                             os.symlink(os.environ["T_DIR"], sec + "/sub")))
plant("secret-file", lambda: (os.unlink(sec + "/k"),
                              os.symlink(os.environ["T_FILE"], sec + "/k")))
plant("subpath", lambda: (os.rmdir("/e/x"),
                          os.symlink(os.environ["T_DIR"], "/e/x")))
sys.exit(1)  # restart: flexqd writes the volumes again
"""


def links_part(d):
    """flexqd (root) writes a pod's Secret volume again when the pod
    restarts, and binds its volumes' subPaths: a link the pod left in
    either must not be followed out of the pod's directory."""
    top = tempfile.mkdtemp(prefix="flexq-attack-root-")
    os.chmod(top, 0o700)  # root's alone
    victim = os.path.join(top, "victim")
    with open(victim, "w") as f:
        f.write("root")
    os.chmod(victim, 0o600)
    try:
        st, body, _ = d.request("POST", "/api/v1/namespaces/team-a/secrets", {
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"k": base64.b64encode(b"PWNED").decode()}}, token=DEV)
        check(st == 201, "the developer's secret: %s" % body)
        j = job("links", "team-a", LINKS, policy="OnFailure")
        j["spec"]["backoffLimit"] = 2
        spec = j["spec"]["template"]["spec"]
        spec["volumes"] = [
            {"name": "sec", "secret": {"secretName": "s", "defaultMode": 0o777,
                                       "items": [{"key": "k", "path": "k"},
                                                 {"key": "k",
                                                  "path": "sub/pwned"}]}},
            {"name": "e", "emptyDir": {}}]
        ctr = spec["containers"][0]
        ctr["volumeMounts"] = [{"name": "sec", "mountPath": "/sec"},
                               {"name": "e", "mountPath": "/e"},
                               {"name": "e", "mountPath": "/x",
                                "subPath": "x"}]
        ctr["env"] = [{"name": "T_DIR", "value": top},
                      {"name": "T_FILE", "value": victim}]
        st, body, _ = d.request("POST",
                                "/apis/batch/v1/namespaces/team-a/jobs", j,
                                token=DEV)
        check(st == 201, "the developer's job: %s" % body)

        def restarted():
            """The pod once its second start was tried: it ran again (the
            log says so) or it ended."""
            st, pods, _ = d.request(
                "GET", "/api/v1/namespaces/team-a/pods?labelSelector="
                "batch.kubernetes.io/job-name%3Dlinks", token=DEV)
            for p in pods.get("items", []) if st == 200 else []:
                if p.get("status", {}).get("phase") in ("Failed",
                                                        "Succeeded"):
                    return p
            if "SECOND-RUN" in d.cli("logs", "job/links", "-n", "team-a",
                                     token=DEV)[1]:
                return pods["items"][0]
            return None
        pod = until("the links pod restarted and ended", restarted)
        log = d.cli("logs", "job/links", "-n", "team-a", token=DEV)[1]
        print("the links job's log:\n%s\npod status: %s" %
              (log, pod and pod.get("status")))
        check(sorted(os.listdir(top)) == ["victim"],
              "nothing written into root's directory: %s" % os.listdir(top))
        check(os.stat(victim).st_mode & 0o777 == 0o600,
              "root's file keeps its mode: %o" % os.stat(victim).st_mode)
        check("REFUSED secret-dir" in log and "REFUSED secret-file" in log,
              "the pod cannot rearrange its Secret volume: %s" % log)
        check("SECOND-RUN" not in log,
              "a subPath through a link is not bound: %s" % log)
        check("symbolic link" in str(pod),
              "the pod says why it cannot run: %s" % (pod or {}).get(
                  "status"))
    finally:
        shutil.rmtree(top, ignore_errors=True)


tokens = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                      "flexq-attack-%d.tokens" % os.getpid())
with open(tokens, "w") as f:
    f.write("%s admin alice\n%s developer bob team-a\n" % (ADMIN, DEV))
os.chmod(tokens, 0o600)
d = Daemon(extra=["--provider", "local", "--tokens", tokens]).start()
try:
    api_part(d)
    if os.geteuid() == 0:
        pod_part(d)
        links_part(d)
    else:
        print("SKIP (pod part): flexqd is not root here, so pods run as "
              "its own user (docs/runtime.md)")
    check(d.proc.poll() is None, "flexqd still runs")
finally:
    d.stop()
    d.cleanup()
    os.unlink(tokens)
finish()
