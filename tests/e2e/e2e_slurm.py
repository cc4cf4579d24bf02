"""The tutorial on a real Slurm cluster: flexqd --executor slurm runs each
admitted gang as one Slurm job, on a private tutorial-shaped cluster of
Debian's own munged, slurmctld and slurmd (tests/e2e/slurm/cluster.sh: a
CPU node c1, a 4-host on-demand slice t[1-4], a 4-host flex pool d[1-4] of
State=CLOUD nodes). Nodes come from scripts/flexq-slurm-provider (--provider
exec). Job 1 runs on the on-demand slice, job 2 on the flex pool once Slurm
powered its nodes up; squeue shows each worker gang as one job on the 4
distinct nodes the pods' spec.nodeName name; no pod process is a child of
flexqd; `flexq logs` ends with the success banner; the flex pool powers
down afterwards. Then: flexqd killed mid-run adopts its job and resubmits
nothing; slurmctld down for a while blocks nothing and the job completes;
`flexq delete` cancels the Slurm job, and the pods' directories go with the
pods; pools backed by partitions of other names (`flexq nodepool create
--slurm-partition`, flexqd's `--slurm-partition POOL=PARTITION`) run their
jobs there; a node lost mid-run (marked down in Slurm, its slurmd, steps
and tasks killed, as a machine loss leaves it) fails its pods with
NodeLost, Slurm ends the job NODE_FAIL and does not requeue it, and flexq
evicts and requeues the workload.

Runs only with FLEXQ_WITH_SLURM=1 (.ci/run sets it), so that `make test`
and `make asan` stay as they were; skips (77) when Slurm's daemons are not
installed
(FLEXQ_WITH_SLURM=1 scripts/install-deps.sh installs them). Waits are
`flexq wait` or polls with deadlines; nothing sleeps to wait for a state."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import (Daemon, check, finish, failures,  # noqa: E402
                     QUEUES, RAYJOBS, TRAIN, POOL)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLUSTER = os.path.join(ROOT, "tests", "e2e", "slurm", "cluster.sh")
NEED = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol",
        "sinfo", "scancel", "srun"]
missing = [b for b in NEED if not shutil.which(b, path=os.environ.get(
    "PATH", "") + ":/usr/sbin:/sbin")]
if os.environ.get("FLEXQ_WITH_SLURM") != "1":
    print("SKIP: the Slurm tutorial runs with FLEXQ_WITH_SLURM=1 (.ci/run)")
    sys.exit(77)
if missing or os.geteuid() != 0:
    print("SKIP: needs root and Slurm (%s missing); run "
          "FLEXQ_WITH_SLURM=1 scripts/install-deps.sh" %
          (", ".join(missing) or "not root"))
    sys.exit(77)
os.environ["PATH"] = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"


def free_base(n=12):
    """A run of n free TCP ports on 127.0.0.1."""
    for base in range(28100, 40000, 97):
        ok = True
        for p in range(base, base + n):
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                ok = False
            finally:
                s.close()
            if not ok:
                break
        if ok:
            return base
    raise RuntimeError("no free ports")


run_dir = tempfile.mkdtemp(prefix="flexq-slurm-")
base = free_base()
CENV = dict(os.environ, RUN=os.path.join(run_dir, "cluster"),
            CTLD_PORT=str(base), PBASE=str(base + 1))
SLURM_CONF = os.path.join(CENV["RUN"], "etc", "slurm.conf")
os.environ["SLURM_CONF"] = SLURM_CONF
os.environ["FLEXQ_EXEC_PROVIDER"] = os.path.join(ROOT, "scripts",
                                                 "flexq-slurm-provider")
os.environ["FLEXQ_EXEC_SYNC_S"] = "2"
os.environ["FLEXQ_EXEC_TIMEOUT_S"] = "60"


def cluster(what):
    p = subprocess.run([CLUSTER] + what.split(), env=CENV, capture_output=True,
                       text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("cluster.sh %s: %s %s" % (what, p.stdout,
                                                      p.stderr))


def slurm(*argv):
    return subprocess.run(list(argv), capture_output=True, text=True,
                          timeout=60).stdout


def jobs():
    """Slurm's view: [(id, name, state, nodelist, comment)]."""
    out = []
    for line in slurm("squeue", "-h", "-t", "all", "-o",
                      "%i|%j|%T|%N|%k").splitlines():
        p = line.split("|")
        if len(p) == 5:
            out.append(tuple(x.strip() for x in p))
    return out


def job_info(jid):
    info = {}
    for w in slurm("scontrol", "show", "job", "-o", jid).split():
        k, _, v = w.partition("=")
        info[k] = v
    return info


def hostnames(nodelist):
    return slurm("scontrol", "show", "hostnames", nodelist).split()


def until(what, fn, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.2)
    check(False, "timed out waiting for " + what)
    return None


def pods(d):
    st, body, _ = d.request("GET", "/api/v1/namespaces/default/pods")
    return body.get("items", []) if st == 200 else []


def descendants(pid):
    """pids of every process under pid (by /proc)."""
    kids = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(p))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def sweep():
    """SIGKILLs, by pid, any process left with this test's cluster or data
    directory in its environment (a task whose node was crashed)."""
    marks = (("SLURM_CONF=" + SLURM_CONF).encode(),
             ("FLEXQ_DATA_DIR=" + os.path.join(run_dir, "data")).encode())
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % p, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if any(m in env for m in marks):
            try:
                os.kill(int(p), signal.SIGKILL)
            except OSError:
                pass


def wait(d, *args, timeout=240):
    """flexq wait, in rounds the harness's CLI timeout allows."""
    deadline = time.monotonic() + timeout
    while True:
        rc, out, err = d.cli("wait", *args, "--timeout=90s")
        if rc == 0 or time.monotonic() > deadline:
            return rc, out, err


def crash(node):
    """A machine loss, deterministically: slurmctld is told the node is
    down first (what it concludes by itself SlurmdTimeout after a machine
    stops answering: the job ends NODE_FAIL at once, before srun or a task
    can end it otherwise), then the node's slurmd and every slurmstepd that
    holds a socket in the node's spool directory are SIGKILLed with their
    children (the tasks), as the machine's end would leave them."""
    slurm("scontrol", "update", "nodename=" + node, "state=down",
          "reason=flexq e2e: machine lost")
    spool = os.path.join(CENV["RUN"], "spool", node) + "/"
    inodes = set()
    with open("/proc/net/unix") as f:
        for line in f.readlines()[1:]:
            parts = line.split()
            if len(parts) >= 8 and parts[7].startswith(spool):
                inodes.add(parts[6])
    pids = set()
    with open(os.path.join(CENV["RUN"], "pids",
                           "slurmd-%s.D.pid" % node)) as f:
        pids.add(int(f.read().strip()))
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            for fd in os.listdir("/proc/%s/fd" % p):
                link = os.readlink("/proc/%s/fd/%s" % (p, fd))
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    pids.add(int(p))
                    break
        except OSError:
            continue
    for p in list(pids):
        pids.update(descendants(p))
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def setup(d):
    rc, out, err = d.cli("nodepool", "create", "default-pool",
                         "--machine-type=n2-standard-16", "--num-nodes=1",
                         "--enable-autoscaling", "--min-nodes=1",
                         "--max-nodes=1")
    check(rc == 0, "default pool: %s %s" % (out, err))
    rc, out, err = d.cli("nodepool", "create", "on-demand-pool",
                         "--reservation-affinity=none", *POOL)
    check(rc == 0, "on-demand pool: %s %s" % (out, err))
    rc, out, err = d.cli("nodepool", "create", "dws-pool", *POOL,
                         "--flex-start", "--enable-queued-provisioning")
    check(rc == 0, "dws pool: %s %s" % (out, err))
    rc, out, err = d.cli("apply", "-f", "-", stdin=QUEUES)
    check(rc == 0, "queues: %s" % err)
    rc, out, err = d.cli("create", "configmap", "jax-train-script",
                         "--from-file=" + TRAIN)
    check(rc == 0, "configmap: %s" % err)


PART_QUEUES = "".join("""---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: flavor-%(q)s}
spec:
  nodeLabels: {cloud.google.com/gke-nodepool: cpu-%(q)s}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq-%(q)s}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: flavor-%(q)s
      resources: [{name: cpu, nominalQuota: 16}, {name: memory, nominalQuota: 32Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: lq-%(q)s}
spec: {clusterQueue: cq-%(q)s}
""" % {"q": q} for q in ("a", "b"))

PART_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: part-%s
  labels: {kueue.x-k8s.io/queue-name: lq-%s}
spec:
  suspend: true
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          command: ["sh", "-c", "echo partition-ok"]
          resources:
            requests: {cpu: "1", memory: 100Mi}
"""


def gang_jobs(rayjob):
    return [j for j in jobs() if j[1].startswith("flexq/default/" + rayjob)
            and "tpu-group" in j[1]]


d = None
try:
    cluster("start")
    d = Daemon(data_dir=os.path.join(run_dir, "data"),
               extra=["--provider", "exec", "--executor", "slurm",
                      "--slurm-partition", "cpu-b=batch-b"],
               time_scale=100).start()
    setup(d)
    # the workers' bindings, seen while they exist (a finished RayJob's
    # pods are deleted, and their directories with them): uid -> node
    bound, watching = {}, threading.Event()

    def watch_bindings():
        while not watching.is_set():
            try:
                for p in pods(d):
                    if "tpu-group" in p["metadata"]["name"] and \
                            p["spec"].get("nodeName"):
                        bound[p["metadata"]["uid"]] = p["spec"]["nodeName"]
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.2)
    threading.Thread(target=watch_bindings, daemon=True).start()
    # both at once, so that job 2 meets job 1 holding the on-demand quota
    # (on a loaded machine job 1 could end before a second apply)
    rc, out, err = d.cli("apply", "-f", "-",
                         stdin=RAYJOBS[0] + "\n---\n" + RAYJOBS[1])
    check(rc == 0, "both jobs: %s" % err)

    # --- the tutorial: both jobs run to success through Slurm ----------
    rc, out, err = wait(d, "rayjob/rayjob-tpu-v6e-dws-1",
                        "rayjob/rayjob-tpu-v6e-dws-2",
                        "--for=jsonpath={.status.jobDeploymentStatus}="
                        "Complete")
    check(rc == 0, "both jobs complete: %s %s" % (out, err))
    watching.set()
    rc, out, err = d.cli("get", "rayjobs")
    check(out.count("SUCCEEDED") == 2, "both SUCCEEDED:\n%s" % out)

    # each worker gang ran as one Slurm job on 4 distinct nodes, the ones
    # its pods were bound to
    st, wls, _ = d.request("GET", "/apis/kueue.x-k8s.io/v1beta1/workloads")
    flavors = {}
    for w in wls.get("items", []):
        for a in w.get("status", {}).get("admission", {}).get(
                "podSetAssignments", []):
            if a["name"] == "tpu-group":
                flavors[w["metadata"]["name"]] = a["flavors"].get(
                    "google.com/tpu")
    check(sorted(flavors.values()) == ["dws", "on-demand"],
          "one job per plan: %s" % flavors)
    for rj, prefix in (("rayjob-tpu-v6e-dws-1", "t"),
                       ("rayjob-tpu-v6e-dws-2", "d")):
        gj = gang_jobs(rj)
        check(len(gj) == 1, "%s: one Slurm job for its worker gang: %s" %
              (rj, jobs()))
        if not gj:
            continue
        jid, name, state, nodelist, comment = gj[0]
        hosts = hostnames(nodelist)
        check(state == "COMPLETED", "%s: job %s COMPLETED: %s" %
              (rj, jid, state))
        check(len(set(hosts)) == 4 and all(h.startswith(prefix)
                                           for h in hosts),
              "%s: 4 distinct %s* nodes: %s" % (rj, prefix, hosts))
        info = job_info(jid)
        check(info.get("Requeue") == "0" and info.get("Restarts") == "0",
              "%s: --no-requeue, never requeued: %s" % (rj, info))
        check(info.get("Reservation", "").startswith("flexq-"),
              "%s: inside flexq's reservation: %s" % (rj,
                                                     info.get("Reservation")))
        check(comment.startswith("flexq:uids="), "comment: %s" % comment)
        # the job's 4 nodes are the ones its pods' spec.nodeName named
        # (the comment names the pods by uid)
        named = [bound.get(u) for u in comment[len("flexq:uids="):].split(",")]
        check(len(named) == 4 and None not in named and
              sorted(named) == sorted(hosts),
              "%s: job %s ran on its pods' nodes: pods %s, Slurm %s" %
              (rj, jid, named, hosts))

    rc, out, err = d.cli("logs", "job/rayjob-tpu-v6e-dws-1")
    check("Epoch 40: Loss" in out, "Epoch 40 in the log: %s" % out[-800:])
    done = [ln for ln in out.splitlines() if "Training Complete!" in ln]
    check(any("[repeated 3x across cluster]" in ln for ln in done) or
          len(done) == 4, "Training Complete! from four workers: %s" % done)
    tail = [ln for ln in out.splitlines() if ln.strip()][-2:]
    check(any(ln.rstrip().endswith("succeeded") and
              "Job 'rayjob-tpu-v6e-dws-1-" in ln for ln in tail),
          "ends with the success banner: %s" % out[-500:])

    # the flex pool powers down after the unneeded time
    rc, out, err = wait(d, "nodepool/dws-pool",
                        "--for=jsonpath={.status.nodeCount}=0")
    check(rc == 0, "dws pool back at zero nodes: %s %s" % (out, err))

    def powered_down():
        s = slurm("sinfo", "-h", "-N", "-n", "d[1-4]", "-o", "%N %T")
        return all(ln.split()[1] in ("idle~", "idle%")
                   for ln in s.splitlines()) and s
    check(until("d[1-4] powered down", powered_down, 60),
          "the flex pool's nodes power down")

    # --- a running job: not flexqd's children; flexqd restart ----------
    # a slower training (the same script after a pause), from its own
    # ConfigMap, so that it is caught running
    for cm, secs in (("slow-train-script", 25), ("slower-train-script", 120)):
        slow = os.path.join(run_dir, cm, "train.py")
        os.makedirs(os.path.dirname(slow), exist_ok=True)
        with open(slow, "w") as f:
            f.write("import time\ntime.sleep(%d)\n" % secs +
                    open(TRAIN).read())
        rc, out, err = d.cli("create", "configmap", cm,
                             "--from-file=train.py=" + slow)
        check(rc == 0, "%s: %s" % (cm, err))

    def slow_job(name, cm="slow-train-script"):
        return RAYJOBS[0].replace("rayjob-tpu-v6e-dws-1", name).replace(
            "jax-train-script", cm)
    rc, out, err = d.cli("apply", "-f", "-", stdin=slow_job("rj-long"))
    check(rc == 0, "long job: %s" % err)

    def running_gang():
        g = [j for j in gang_jobs("rj-long") if j[2] == "RUNNING"]
        return g[0] if g else None
    g = until("rj-long's gang running in Slurm", running_gang, 90)
    if g:
        kids = descendants(d.proc.pid)
        check(not [k for k in kids if "train.py" in cmdline(k) or
                   "flexq.node" in cmdline(k)],
              "no pod process is a child of flexqd: %s" %
              [cmdline(k) for k in kids])
        d.kill()
        d.start()
        rc, out, err = wait(d, "rayjob/rj-long",
                            "--for=jsonpath={.status.jobDeploymentStatus}="
                            "Complete")
        check(rc == 0, "rj-long completes after flexqd's restart: %s %s" %
              (out, err))
        check(len(gang_jobs("rj-long")) == 1,
              "adopted, nothing resubmitted: %s" % gang_jobs("rj-long"))
        check(any("adopted" in ln for ln in d.log),
              "flexqd says it adopted the job")

    # --- slurmctld down: flexqd's loop never waits for it ----------------
    rc, out, err = d.cli("apply", "-f", "-", stdin=slow_job("rj-ctld"))
    check(rc == 0, "rj-ctld: %s" % err)
    if until("rj-ctld's gang running", lambda: [
            j for j in gang_jobs("rj-ctld") if j[2] == "RUNNING"], 90):
        cluster("ctld-stop")
        slowest, t_end = 0.0, time.monotonic() + 12
        while time.monotonic() < t_end:  # the API answers all along
            t0 = time.monotonic()
            st, _, _ = d.request("GET", "/api/v1/namespaces/default/pods")
            slowest = max(slowest, time.monotonic() - t0)
            check(st == 200, "API answers while slurmctld is down")
            time.sleep(0.5)
        check(slowest < 3, "no API call waited on Slurm: slowest %.1f s" %
              slowest)
        cluster("ctld-start")
        rc, out, err = wait(d, "rayjob/rj-ctld",
                            "--for=jsonpath={.status.jobDeploymentStatus}="
                            "Complete")
        check(rc == 0, "rj-ctld completes after slurmctld's restart: %s" %
              err)
        rc, out, err = d.cli("get", "rayjob", "rj-ctld")
        check("SUCCEEDED" in out, "rj-ctld SUCCEEDED: %s" % out)

    # --- flexq delete cancels the Slurm job --------------------------------
    rc, out, err = d.cli("apply", "-f", "-", stdin=slow_job("rj-cancel"))
    check(rc == 0, "rj-cancel: %s" % err)
    if until("rj-cancel's gang running", lambda: [
            j for j in gang_jobs("rj-cancel") if j[2] == "RUNNING"], 90):
        pdir = os.path.join(d.data_dir, "pods", "default")

        def cancel_dirs():
            return [n for n in os.listdir(pdir) if n.startswith("rj-cancel")]
        # its running workers have theirs (the submitter may not yet)
        check(len([n for n in cancel_dirs() if "tpu-group" in n]) == 4,
              "rj-cancel's workers have directories: %s" % cancel_dirs())
        rc, out, err = d.cli("delete", "rayjob", "rj-cancel")
        check(rc == 0, "delete rj-cancel: %s" % err)
        check(until("rj-cancel's job CANCELLED", lambda: [
            j for j in gang_jobs("rj-cancel") if j[2] == "CANCELLED"], 60),
            "the Slurm job is CANCELLED: %s" % gang_jobs("rj-cancel"))
        # the pods' files go with the pods (once their jobs are over)
        check(until("rj-cancel's pod directories removed",
                    lambda: not cancel_dirs(), 60),
              "deleted pods' directories removed: %s" % cancel_dirs())

    # --- pools backed by partitions of other names ---------------------------
    rc, out, err = d.cli("nodepool", "create", "cpu-x",
                         "--machine-type=n2-standard-16", "--num-nodes=1",
                         "--slurm-partition=no such")
    check(rc != 0 and "partition" in err,
          "a bad partition name is refused: %s %s" % (out, err))
    rc, out, err = d.cli("nodepool", "create", "cpu-a",
                         "--machine-type=n2-standard-16", "--num-nodes=1",
                         "--slurm-partition=batch-a")
    check(rc == 0, "cpu-a on partition batch-a: %s %s" % (out, err))
    rc, out, err = d.cli("nodepool", "create", "cpu-b",
                         "--machine-type=n2-standard-16", "--num-nodes=1")
    check(rc == 0, "cpu-b (flexqd --slurm-partition cpu-b=batch-b): %s %s" %
          (out, err))
    for pool, node, part in (("cpu-a", "c2", "batch-a"),
                             ("cpu-b", "c3", "batch-b")):
        rc, out, err = wait(d, "nodepool/" + pool,
                            "--for=jsonpath={.status.readyNodeCount}=1")
        check(rc == 0, "%s has its node: %s %s" % (pool, out, err))
        st, node_obj, _ = d.request("GET", "/api/v1/nodes/" + node)
        labels = node_obj.get("metadata", {}).get("labels", {}) \
            if st == 200 else {}
        check(labels.get("cloud.google.com/gke-nodepool") == pool and
              labels.get("flexq.dev/slurm-partition") == part,
              "node %s is %s's, from partition %s: %s" %
              (node, pool, part, labels))
        addrs = node_obj.get("status", {}).get("addresses", []) \
            if st == 200 else []
        check({"type": "InternalIP", "address": "127.0.0.1"} in addrs,
              "node %s's address is Slurm's NodeAddr: %s" % (node, addrs))
    rc, out, err = d.cli("apply", "-f", "-", stdin=PART_QUEUES)
    check(rc == 0, "partition queues: %s" % err)
    for q in ("a", "b"):
        rc, out, err = d.cli("apply", "-f", "-", stdin=PART_JOB % (q, q))
        check(rc == 0, "job on cpu-%s: %s" % (q, err))
    for q, node, part in (("a", "c2", "batch-a"), ("b", "c3", "batch-b")):
        rc, out, err = wait(d, "job/part-" + q, "--for=condition=Complete")
        check(rc == 0, "job part-%s completes: %s %s" % (q, out, err))
        sj = [j for j in jobs() if j[1].startswith("flexq/default/part-" + q)]
        check(len(sj) == 1 and sj[0][3] == node and
              slurm("squeue", "-h", "-t", "all", "-j", sj[0][0], "-o",
                    "%P").strip() == part,
              "part-%s ran in partition %s on %s: %s" % (q, part, node, sj))
        rc, out, err = d.cli("logs", "job/part-" + q)
        check("partition-ok" in out, "part-%s's log: %s %s" % (q, out, err))

    # --- a node lost mid-run: NodeLost, evicted, requeued ------------------
    rc, out, err = d.cli("apply", "-f", "-",
                         stdin=slow_job("rj-lost", "slower-train-script"))
    check(rc == 0, "rj-lost: %s" % err)
    g = until("rj-lost's gang running", lambda: [
        j for j in gang_jobs("rj-lost") if j[2] == "RUNNING"], 180)
    if g:
        victim = hostnames(g[0][3])[1]
        crash(victim)
        check(until("rj-lost's job ended NODE_FAIL", lambda: [
            j for j in gang_jobs("rj-lost")
            if j[0] == g[0][0] and j[2] == "NODE_FAIL"], 60),
            "Slurm ended the job for the node: %s" % gang_jobs("rj-lost"))
        info = job_info(g[0][0])
        check(info.get("Restarts") == "0" and info.get("Requeue") == "0",
              "no Slurm-side requeue: Restarts=%s Requeue=%s" %
              (info.get("Restarts"), info.get("Requeue")))

        def node_lost():
            rc, out, err = d.cli("get", "events")
            return [ln for ln in out.splitlines() if "NodeLost" in ln and
                    "pod/rj-lost" in ln]
        check(until("a pod Failed with NodeLost", node_lost, 60),
              "a worker pod failed with NodeLost")

        def requeued():
            st, body, _ = d.request(
                "GET", "/apis/kueue.x-k8s.io/v1beta1/workloads")
            for w in body.get("items", []):
                if "rj-lost" not in w["metadata"]["name"]:
                    continue
                for c in w.get("status", {}).get("conditions", []):
                    if c["type"] in ("Evicted", "Requeued") and \
                            c.get("reason") == "NodeLost":
                        return c
            return None
        check(until("rj-lost's workload evicted and requeued", requeued, 60),
              "the workload is evicted and requeued (NodeLost)")
        cluster("node-start " + victim)

    if failures:  # what flexqd and Slurm said, for the failed checks
        print("".join(d.log[-120:]), file=sys.stderr)
        print(slurm("squeue", "-t", "all", "-o", "%i %j %T %r %N"),
              file=sys.stderr)
    check(d.stop() == 0, "clean shutdown")
    d = None
except Exception:
    if d:
        print("".join(d.log[-80:]), file=sys.stderr)
        for p in pods(d):
            print(p["metadata"]["name"], p["spec"].get("nodeName"),
                  json.dumps(p.get("status", {}))[:300], file=sys.stderr)
    raise
finally:
    if d:
        d.cleanup()
    try:
        cluster("stop")
    except Exception as e:  # noqa: BLE001
        print("cluster stop: %s" % e, file=sys.stderr)
    sweep()
    if not os.environ.get("FLEXQ_KEEP"):
        shutil.rmtree(run_dir, ignore_errors=True)
finish()
