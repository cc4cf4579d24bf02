"""The slurm executor's cost, on a private Slurm cluster: bench/slurm_executor.c
runs this (python3, standard library) with the paths of flexqd and flexq.

Phases, on one private tutorial-shaped cluster (tests/e2e/slurm/cluster.sh):

  straight  N one-task jobs (1 cpu, 100 MiB, `true`), one at a time:
            `sbatch --parsable`, then squeue until COMPLETED; end-to-end
            time per job, submit to seen completed
  flexq     the same N jobs as batch/v1 Jobs through flexqd --executor
            slurm: `flexq apply`, then `flexq wait --for=condition=Complete`;
            end-to-end time per job, as a user sees it
  gang      the tutorial's RayJob on the 4-host on-demand slice: from the
            moment a client polling the API every 10 ms sees the Workload
            Admitted to the first and the last worker task's start (the
            mtime of the task.json each task writes when its pod starts)

Prints the figures, the ratio flexq / straight of the median per-job time
(target: at most 1.10) and the gang's start after admission (target: at
most 1 s), then one JSON object as the last line. Needs root and Slurm
(FLEXQ_WITH_SLURM=1 scripts/install-deps.sh); exits 77 without them.
"""
import datetime
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FLEXQD, FLEXQ = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 20
SEED = os.path.join(ROOT, "..", "shared", "seed")
FIX = os.path.join(ROOT, "tests", "fixtures", "valid")

os.environ["PATH"] = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
if os.geteuid() != 0 or not all(shutil.which(b) for b in (
        "slurmctld", "slurmd", "munged", "sbatch")):
    print("slurm_executor: needs root and Slurm "
          "(FLEXQ_WITH_SLURM=1 scripts/install-deps.sh)")
    sys.exit(77)


def free_base(n=12):
    for base in range(31100, 40000, 89):
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


tmp = tempfile.mkdtemp(prefix="flexq-bench-slurm-")
base = free_base()
CENV = dict(os.environ, RUN=os.path.join(tmp, "cluster"),
            CTLD_PORT=str(base), PBASE=str(base + 1))
os.environ["SLURM_CONF"] = os.path.join(CENV["RUN"], "etc", "slurm.conf")
os.environ["FLEXQ_EXEC_PROVIDER"] = os.path.join(ROOT, "scripts",
                                                 "flexq-slurm-provider")
os.environ["FLEXQ_EXEC_SYNC_S"] = "5"
CLUSTER = os.path.join(ROOT, "tests", "e2e", "slurm", "cluster.sh")


def sh(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True,
                          timeout=120, **kw)


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return 0.0
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def straight():
    out = []
    for i in range(N):
        t0 = time.monotonic()
        p = sh(["sbatch", "--parsable", "-J", "straight-%d" % i, "-p",
                "default-pool", "-w", "c1", "-c", "1", "--mem=100M",
                "-o", "/dev/null", "--wrap", "true"])
        jid = p.stdout.strip().split(";")[0]
        while True:
            st = sh(["squeue", "-h", "-t", "all", "-j", jid,
                     "-o", "%T"]).stdout.strip()
            if st in ("COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL"):
                break
            time.sleep(0.01)
        out.append(time.monotonic() - t0)
    return out


JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: bench-%d
  labels: {kueue.x-k8s.io/queue-name: q}
spec:
  suspend: true
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          command: ["true"]
          resources:
            requests: {cpu: "1", memory: 100Mi}
"""

QUEUE = """apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-cpu}
spec:
  nodeLabels: {cloud.google.com/gke-nodepool: default-pool}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-cpu
      resources: [{name: cpu, nominalQuota: 16}, {name: memory, nominalQuota: 32Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: q}
spec: {clusterQueue: cq}
"""


class Flexqd:
    def __init__(self):
        self.data = os.path.join(tmp, "data")
        self.p = subprocess.Popen(
            [FLEXQD, "--listen", "127.0.0.1:0", "--data-dir", self.data,
             "--provider", "exec", "--executor", "slurm", "--sync",
             "normal"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
            text=True)
        self.log = []
        for line in self.p.stderr:
            if 'msg="listening" port=' in line:
                self.port = int(line.split("port=")[1].split()[0])
                break
        threading.Thread(target=lambda: [self.log.append(ln)
                                         for ln in self.p.stderr],
                         daemon=True).start()
        self.env = dict(os.environ,
                        FLEXQ_SERVER="http://127.0.0.1:%d" % self.port)

    def cli(self, *args, stdin=None):
        return subprocess.run([FLEXQ] + list(args), input=stdin,
                              capture_output=True, text=True, env=self.env,
                              timeout=300)

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=30)


def logfmt(line):
    """time and key=value pairs of one flexqd log line."""
    kv = {}
    for w in line.split():
        k, sep, v = w.partition("=")
        if sep:
            kv[k] = v.strip('"')
    t = kv.get("time")
    if t:
        try:
            kv["t"] = datetime.datetime.strptime(
                t, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                    tzinfo=datetime.timezone.utc).timestamp()
        except ValueError:
            pass
    return kv


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


# where each flexq job's time goes, from the client's clock, flexqd's log
# (the submit's own timing), and the task's files (all on one clock here)
STAGES = [
    ("apply -> executor submit (admission, pods, binding)", "apply", "launch"),
    ("submit child -> helper running (exec, python)", "launch",
     "helper_start"),
    ("helper -> sbatch (table, script)", "helper_start", "sbatch_start"),
    ("sbatch", "sbatch_start", "sbatch_end"),
    ("sbatch -> task process (Slurm start)", "sbatch_end", "proc_start"),
    ("task process -> pod started (task.json)", "proc_start", "started"),
    ("pod runs (true)", "started", "ended"),
    ("pod ended -> flexqd reports it", "ended", "reported"),
    ("reported -> flexq wait returns", "reported", "done"),
]


def breakdown(d, marks):
    """Fills each job's marks from the log and the task files."""
    subs, reps = {}, {}
    for line in list(d.log):
        if 'msg="slurm gang submitted"' in line:
            kv = logfmt(line)
            subs[kv.get("gang", "").split("/")[-1]] = kv
        elif 'msg="slurm pod"' in line and "phase=Succeeded" in line:
            kv = logfmt(line)
            reps[kv.get("pod", "").split("/")[-1]] = kv.get("t")
    for i, m in enumerate(marks):
        pod = next((g for g in subs if g.startswith("bench-%d-" % i)), None)
        if not pod:
            continue
        kv = subs[pod]
        m["launch"] = int(kv.get("launch_ms", 0)) / 1000.0
        for k in ("helper_start", "sbatch_start", "sbatch_end"):
            m[k] = float(kv.get(k, 0))
        pdir = os.path.join(d.data, "pods", "default", pod)
        tj = read_json(os.path.join(pdir, "task.json"))
        sj = read_json(os.path.join(pdir, "status.json"))
        m["proc_start"] = tj.get("procStart")
        m["started"] = tj.get("started")
        m["ended"] = sj.get("ended")
        m["reported"] = reps.get(pod)
    rows = []
    for label, a, b in STAGES:
        xs = [m[b] - m[a] for m in marks if m.get(a) and m.get(b)]
        rows.append((label, statistics.median(xs) if xs else None))
    return rows


def through_flexq(d, marks):
    d.cli("nodepool", "create", "default-pool",
          "--machine-type=n2-standard-16", "--num-nodes=1",
          "--enable-autoscaling", "--min-nodes=1", "--max-nodes=1")
    d.cli("apply", "-f", "-", stdin=QUEUE)
    d.cli("wait", "nodepool/default-pool",
          "--for=jsonpath={.status.readyNodeCount}=1", "--timeout=120s")
    out = []
    for i in range(N):
        t0, w0 = time.monotonic(), time.time()
        d.cli("apply", "-f", "-", stdin=JOB % i)
        r = d.cli("wait", "job/bench-%d" % i, "--for=condition=Complete",
                  "--timeout=120s")
        if r.returncode != 0:
            print("flexq job %d: %s" % (i, r.stderr.strip()))
        out.append(time.monotonic() - t0)
        marks.append({"apply": w0, "done": time.time()})
    return out


def gang(d):
    env = dict(os.environ, ONDEMAND_NODEPOOL="on-demand-pool",
               DWS_NODEPOOL="dws-pool", JOB_ID="1")

    def subst(path):
        return subprocess.run(["envsubst"], stdin=open(path), env=env,
                              capture_output=True, text=True).stdout
    if os.path.isdir(SEED):
        queues = subst(os.path.join(SEED, "dws-tpu-queue.yaml"))
        rayjob = subst(os.path.join(SEED, "rayjob-tpu-v6e-dws.yaml"))
    else:
        queues = open(os.path.join(FIX, "dws-tpu-queue.yaml")).read()
        rayjob = open(os.path.join(FIX, "rayjob-tpu-v6e-dws.yaml")).read()
    d.cli("nodepool", "create", "on-demand-pool",
          "--reservation-affinity=none", "--machine-type=ct6e-standard-4t",
          "--tpu-topology=4x4", "--enable-autoscaling", "--num-nodes=4",
          "--min-nodes=4", "--max-nodes=4")
    d.cli("apply", "-f", "-", stdin=queues)
    d.cli("create", "configmap", "jax-train-script",
          "--from-file=" + os.path.join(ROOT, "examples", "train.py"))
    d.cli("wait", "nodepool/on-demand-pool",
          "--for=jsonpath={.status.readyNodeCount}=4", "--timeout=120s")
    admitted = {}
    done = threading.Event()

    def watch():  # polls the API every 10 ms for the Admitted condition
        import urllib.request
        url = "http://127.0.0.1:%d/apis/kueue.x-k8s.io/v1beta1/" \
              "workloads" % d.port
        while not done.is_set() and "t" not in admitted:
            try:
                body = json.load(urllib.request.urlopen(url, timeout=5))
            except OSError:
                body = {}
            for o in body.get("items", []):
                conds = o.get("status", {}).get("conditions", [])
                if any(c["type"] == "Admitted" and c["status"] == "True"
                       for c in conds):
                    admitted["t"] = time.time()
            time.sleep(0.01)
    threading.Thread(target=watch, daemon=True).start()
    d.cli("apply", "-f", "-", stdin=rayjob)
    d.cli("wait", "rayjob/rayjob-tpu-v6e-dws-1",
          "--for=jsonpath={.status.jobDeploymentStatus}=Complete",
          "--timeout=240s")
    done.set()
    starts, procs = [], []
    root = os.path.join(d.data, "pods", "default")
    for n in os.listdir(root):
        tj = os.path.join(root, n, "task.json")
        if "tpu-group" in n and os.path.exists(tj):
            starts.append(os.stat(tj).st_mtime)
            procs.append(read_json(tj).get("procStart") or 0)
    if "t" not in admitted or len(starts) != 4:
        return None, None, []
    # the gang's own stages, from the worker gang's submit line
    sub = next((logfmt(ln) for ln in d.log
                if 'msg="slurm gang submitted"' in ln and "tpu-group" in ln),
               {})
    a = admitted["t"]
    marks = [("admitted", a),
             ("executor submit", int(sub.get("launch_ms", 0)) / 1000.0),
             ("sbatch starts", float(sub.get("sbatch_start", 0))),
             ("sbatch returns", float(sub.get("sbatch_end", 0))),
             ("first task process", min(procs)),
             ("first task started", min(starts))]
    stages = [("%s -> %s" % (marks[i][0], marks[i + 1][0]),
               marks[i + 1][1] - marks[i][1]) for i in range(len(marks) - 1)
              if marks[i][1] and marks[i + 1][1]]
    return min(starts) - a, max(starts) - a, stages


result = {}
d = None
try:
    p = sh([CLUSTER, "start"], env=CENV)
    if p.returncode != 0:
        print("cluster: %s %s" % (p.stdout, p.stderr))
        sys.exit(1)
    s = straight()
    d = Flexqd()
    marks = []
    f = through_flexq(d, marks)
    rows = breakdown(d, marks)
    g_first, g_last, g_stages = gang(d)
    ratio = statistics.median(f) / statistics.median(s)
    print("per-job end to end, %d jobs one at a time (s):" % N)
    print("  %-22s p50 %6.3f  p90 %6.3f  mean %6.3f" %
          ("sbatch + squeue", pct(s, .5), pct(s, .9), statistics.mean(s)))
    print("  %-22s p50 %6.3f  p90 %6.3f  mean %6.3f" %
          ("flexq (slurm executor)", pct(f, .5), pct(f, .9),
           statistics.mean(f)))
    print("  ratio flexq / straight (p50): %.3f (target <= 1.10)" % ratio)
    print("where a flexq job's time goes (median per stage, s):")
    for label, v in rows:
        print("  %-54s %s" % (label, "   -" if v is None else "%6.3f" % v))
    with open("/proc/loadavg") as lf:
        load = lf.read().split()[0]
    print("load average (1 min) at the end: %s" % load)
    if g_first is not None:
        print("4-host gang after admission: first task %.3f s, last %.3f s "
              "(target <= 1 s)" % (g_first, g_last))
        for label, v in g_stages:
            print("  %-54s %6.3f" % (label, v))
    result = {"bench": "slurm_executor", "n": N,
              "straight_p50_s": round(pct(s, .5), 4),
              "straight_mean_s": round(statistics.mean(s), 4),
              "flexq_p50_s": round(pct(f, .5), 4),
              "flexq_mean_s": round(statistics.mean(f), 4),
              "ratio_p50": round(ratio, 4),
              "stages_p50_s": {lbl.split(" (")[0]: None if v is None else
                               round(v, 4) for lbl, v in rows},
              "load1": float(load),
              "gang_first_start_s": None if g_first is None else
              round(g_first, 4),
              "gang_last_start_s": None if g_last is None else
              round(g_last, 4),
              "gang_stages_s": {lbl: round(v, 4) for lbl, v in g_stages}}
finally:
    if d:
        d.stop()
    sh([CLUSTER, "stop"], env=CENV)
    shutil.rmtree(tmp, ignore_errors=True)
print(json.dumps(result))
