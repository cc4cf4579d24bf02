"""A developer's job is contained (issue 17, items 1 and 2).

With --tokens and --provider local, a developer of team-a runs a Job that
tries, one by one, to read the tokens file, the database, a pod log and a
ConfigMap directory of team-b, flexqd's /proc/PID/environ, and to signal
flexqd; the job's own log must say DENIED for each, and that it ran as an
unprivileged user with no capabilities, no_new_privs, a seccomp filter and
none of flexqd's environment. A hostPath onto the data directory is
refused. A job whose child called setsid is killed whole when the job is
deleted. Then flexqd is killed with -9 while a restartPolicy Never pod
runs; after the restart the pod is Failed (ControlPlaneRestarted) and ran
exactly once (it appends a line to a file in its own directory).

Waits are `flexq wait` or polls with a deadline; nothing sleeps to wait.
"""
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

if os.geteuid() != 0:
    print("SKIP: flexqd is not root here, so pods run as its own user "
          "(docs/runtime.md); this test needs root")
    sys.exit(0)

ADMIN = "admin-token-sandbox-0123"
DEV = "dev-token-sandbox-abcdef"
SECRET = "flexqd-env-secret-%d" % random.randrange(10**9)
os.environ["FLEXQ_SANDBOX_SECRET"] = SECRET  # flexqd inherits it

DATA = None  # set below


def job(name, ns, command, env=None, policy="Never", volumes=None,
        mounts=None):
    ctr = {"name": "main", "image": "python:3", "command": command,
           "env": [{"name": k, "value": v} for k, v in (env or {}).items()]}
    if mounts:
        ctr["volumeMounts"] = mounts
    spec = {"restartPolicy": policy, "containers": [ctr]}
    if volumes:
        spec["volumes"] = volumes
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"backoffLimit": 0, "template": {"spec": spec}}}


def until(what, fn, timeout=60):
    """Polls fn (it asks flexqd or /proc) every 50 ms until it returns
    something truthy, or records a failure at the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.05)  # the poll interval
    check(False, "timed out: " + what)
    return None


def pods_of(d, ns, jobname, token=ADMIN):
    st, body, _ = d.request(
        "GET", "/api/v1/namespaces/%s/pods?labelSelector="
        "batch.kubernetes.io/job-name%%3D%s" % (ns, jobname), token=token)
    return body.get("items", []) if st == 200 and isinstance(body, dict) \
        else []


def host_procs(marker):
    """Host pids whose command line holds marker."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if marker.encode() in f.read():
                    out.append(int(p))
        except OSError:
            pass
    return out


ATTACK = r"""
import os, signal
E = os.environ
def attempt(what, fn):
    try:
        r = fn()
        if r in ("", b""):  # /dev/null where the file was
            print("DENIED", what, "empty", flush=True)
        else:
            print("LEAK", what, repr(r)[:60], flush=True)
    except Exception as e:
        print("DENIED", what, type(e).__name__, flush=True)
attempt("tokens", lambda: open(E["T_TOKENS"]).read())
attempt("database", lambda: open(E["T_DB"], "rb").read(16))
attempt("other-log", lambda: open(E["T_OTHER_LOG"]).read())
attempt("other-configmap", lambda: os.listdir(E["T_OTHER_CM"]))
attempt("flexqd-environ",
        lambda: open("/proc/%s/environ" % E["T_PID"], "rb").read())
attempt("signal-flexqd", lambda: (os.kill(int(E["T_PID"]), 0), "sent")[1])
attempt("sigterm-flexqd",
        lambda: (os.kill(int(E["T_PID"]), signal.SIGTERM), "sent")[1])
print("UID", os.getuid(), "GID", os.getgid(), flush=True)
print("ENV", "LEAK" if any("sandbox-secret" in v for v in E.values())
      else "CLEAN", flush=True)
for line in open("/proc/self/status"):
    if line.split(":")[0] in ("CapEff", "CapBnd", "NoNewPrivs", "Seccomp"):
        print(line.strip().replace(":\t", " "), flush=True)
open(os.path.join(E["FLEXQ_POD_DIR"], "mine"), "w").write("ok")
print("OWN-DIR writable", flush=True)
"""

SETSID = r"""
import os, sys, time
if os.fork() == 0:
    os.setsid()
    os.execvp("sleep", ["sleep", sys.argv[1]])
print("started", flush=True)
time.sleep(600)
"""

# Not under /tmp: every pod has a /tmp of its own, which would hide the
# file anyway; /run (root's, seen by pods) shows that the mount hides it.
tokens = os.path.join("/run" if os.access("/run", os.W_OK) else
                      os.environ.get("TMPDIR", "/tmp"),
                      "flexq-sandbox-%d.tokens" % os.getpid())
with open(tokens, "w") as f:
    f.write("# token role user namespaces\n%s admin alice\n"
            "%s developer bob team-a\n" % (ADMIN, DEV))
os.chmod(tokens, 0o644)  # readable by anyone on the host: the mount hides it

d = Daemon(extra=["--provider", "local", "--tokens", tokens]).start()
DATA = os.path.realpath(d.data_dir)
d2 = None
try:
    lines = "".join(d.log)
    check('msg="pods"' in lines and "sandbox:" in lines,
          "flexqd logs the isolation in force at start: %s" % lines[-600:])

    # --- team-b: a pod with a ConfigMap volume and a log line -----------
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "b-secret", "namespace": "team-b"},
          "data": {"key": "SECRET-B-CONFIG"}}
    st, body, _ = d.request("POST", "/api/v1/namespaces/team-b/configmaps",
                            cm, token=ADMIN)
    check(st == 201, "team-b configmap: %s" % body)
    victim = job("victim", "team-b",
                 ["sh", "-c", "echo SECRET-B-LOG; exec sleep 300"],
                 volumes=[{"name": "cfg", "configMap": {"name": "b-secret"}}],
                 mounts=[{"name": "cfg", "mountPath": "/cfg"}])
    st, body, _ = d.request("POST", "/apis/batch/v1/namespaces/team-b/jobs",
                            victim, token=ADMIN)
    check(st == 201, "team-b job: %s" % body)
    vpod = until("team-b's pod runs", lambda: [
        p for p in pods_of(d, "team-b", "victim")
        if p.get("status", {}).get("phase") == "Running"])
    vname = vpod[0]["metadata"]["name"] if vpod else "none"
    vdir = os.path.join(DATA, "pods", "team-b", vname)
    until("team-b's log line", lambda: os.path.exists(vdir + "/log") and
          "SECRET-B-LOG" in open(vdir + "/log").read())
    check(os.path.isdir(vdir + "/volumes/cfg"), "team-b's ConfigMap dir")

    # --- team-a: the developer's job tries each ------------------------
    env = {"T_TOKENS": os.path.realpath(tokens),
           "T_DB": os.path.join(DATA, "flexq.db"),
           "T_OTHER_LOG": vdir + "/log",
           "T_OTHER_CM": vdir + "/volumes/cfg",
           "T_PID": str(d.proc.pid)}
    check(os.path.exists(env["T_DB"]), "the database is at %s" % env["T_DB"])
    st, body, _ = d.request("POST", "/apis/batch/v1/namespaces/team-a/jobs",
                            job("attack", "team-a",
                                ["python3", "-c", ATTACK], env), token=DEV)
    check(st == 201, "developer creates the job: %s" % body)
    rc, out, err = d.cli("wait", "job/attack", "-n", "team-a",
                         "--for=condition=Complete", "--timeout=60s",
                         token=DEV)
    check(rc == 0, "the attack job completes: %s %s" % (out, err))
    rc, log, err = d.cli("logs", "job/attack", "-n", "team-a", token=DEV)
    check(rc == 0, "developer reads the job's log: %s" % err)
    print("the attack job's log:\n" + log)
    for what in ("tokens", "database", "other-log", "other-configmap",
                 "flexqd-environ", "signal-flexqd", "sigterm-flexqd"):
        check("DENIED " + what in log, "%s denied; log:\n%s" % (what, log))
    check("LEAK" not in log, "nothing leaked; log:\n%s" % log)
    check("SECRET-B" not in log and SECRET not in log and ADMIN not in log
          and DEV not in log, "no secret in the log:\n%s" % log)
    uid = [ln.split() for ln in log.splitlines() if ln.startswith("UID ")]
    check(uid and uid[0][1] != "0" and uid[0][3] != "0",
          "runs as an unprivileged uid and gid: %s" % uid)
    check("ENV CLEAN" in log, "none of flexqd's environment: %s" % log)
    check("CapEff 0000000000000000" in log and
          "CapBnd 0000000000000000" in log, "no capabilities: %s" % log)
    check("NoNewPrivs 1" in log, "no_new_privs: %s" % log)
    check("Seccomp 2" in log, "a seccomp filter: %s" % log)
    check("OWN-DIR writable" in log, "its own directory is writable")
    check(d.proc.poll() is None, "flexqd still runs")

    # --- a hostPath onto the data directory is refused -----------------
    hp = job("peek", "team-a", ["ls", "/d"],
             volumes=[{"name": "d", "hostPath": {"path": DATA}}],
             mounts=[{"name": "d", "mountPath": "/d"}])
    st, body, _ = d.request("POST", "/apis/batch/v1/namespaces/team-a/jobs",
                            hp, token=DEV)
    rc, out, err = d.cli("wait", "job/peek", "-n", "team-a",
                         "--for=condition=Failed", "--timeout=60s", token=DEV)
    check(rc == 0, "a hostPath onto the data dir fails the job")
    pp = pods_of(d, "team-a", "peek")
    term = (pp[0]["status"].get("containerStatuses") or [{}])[0].get(
        "state", {}).get("terminated", {}) if pp else {}
    check(term.get("reason") == "ContainerCannotRun" and
          "refused" in term.get("message", ""), "refused: %s" % term)

    # --- delete kills the whole tree, setsid children included ----------
    marker = "900.%06d" % random.randrange(10**6)
    st, body, _ = d.request("POST", "/apis/batch/v1/namespaces/team-a/jobs",
                            job("tree", "team-a",
                                ["python3", "-c", SETSID, marker]),
                            token=DEV)
    check(st == 201, "setsid job: %s" % body)
    until("the setsid child runs", lambda: host_procs("sleep\0" + marker))
    st, body, _ = d.request(
        "DELETE", "/apis/batch/v1/namespaces/team-a/jobs/tree"
        "?propagationPolicy=Background", token=DEV)
    check(st in (200, 202), "delete the job: %s %s" % (st, body))
    until("the setsid child is gone after delete",
          lambda: not host_procs("sleep\0" + marker), timeout=45)

    # --- kill -9 flexqd while a Never pod runs: it runs once -------------
    once = "601.%06d" % random.randrange(10**6)
    st, body, _ = d.request(
        "POST", "/apis/batch/v1/namespaces/team-a/jobs",
        job("once", "team-a",
            ["sh", "-c", 'echo run >> "$FLEXQ_POD_DIR/runs"; echo started; '
             'exec sleep ' + once]), token=DEV)
    check(st == 201, "once job: %s" % body)
    opod = until("the Never pod runs", lambda: [
        p for p in pods_of(d, "team-a", "once")
        if p.get("status", {}).get("phase") == "Running"])
    oname = opod[0]["metadata"]["name"] if opod else "none"
    runs = os.path.join(DATA, "pods", "team-a", oname, "runs")
    until("the pod wrote its line", lambda: os.path.exists(runs))
    until("its process is visible", lambda: host_procs("sleep\0" + once))
    d.kill()  # SIGKILL
    until("the pod's process died with flexqd",
          lambda: not host_procs("sleep\0" + once), timeout=30)
    d2 = Daemon(data_dir=d.data_dir,
                extra=["--provider", "local", "--tokens", tokens]).start()

    def failed():
        st, p, _ = d2.request("GET", "/api/v1/namespaces/team-a/pods/" + oname,
                              token=ADMIN)
        return p if st == 200 and p.get("status", {}).get("phase") == \
            "Failed" else None
    p = until("the lost Never pod is Failed", failed)
    cs = ((p or {}).get("status", {}).get("containerStatuses") or [{}])[0]
    term = cs.get("state", {}).get("terminated", {})
    check(term.get("reason") == "ControlPlaneRestarted",
          "reason says the control plane restarted: %s" % term)
    check(cs.get("containerID", "").startswith("flexq://"),
          "the process was recorded: %s" % cs.get("containerID"))
    rc, out, err = d2.cli("wait", "job/once", "-n", "team-a",
                          "--for=condition=Failed", "--timeout=60s",
                          token=ADMIN)
    check(rc == 0, "the job fails (backoffLimit 0): %s %s" % (out, err))
    check(not host_procs("sleep\0" + once), "not started again")
    with open(runs) as f:
        n = len(f.read().splitlines())
    check(n == 1, "the Never pod ran exactly once (%d runs)" % n)
finally:
    if d2:
        d2.cleanup()
    d.cleanup()
    os.unlink(tokens)
finish()
