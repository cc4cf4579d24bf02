"""Issue 20 item 1 through the real daemon, runtime and processes: a
JobSet and a PyTorchJob with the queue-name label wait suspended for
their Workloads, run once admitted, and their pods see the env the JobSet
and the Kubeflow training operator give them: JOB_COMPLETION_INDEX, the
JobSet labels and the headless-service names (`<jobset>-<rjob>-<j>-<p>.
<subdomain>`, resolved in the pod) for the JobSet; MASTER_ADDR,
MASTER_PORT, WORLD_SIZE, RANK and PET_* for the PyTorchJob, whose workers
really connect to the master at MASTER_ADDR:MASTER_PORT. Both finish and
their Workloads are Finished. Then a TrainJob (torch runtime: PET_NODE_RANK
from the completion index, PET_MASTER_ADDR resolving) completes, a
LeaderWorkerSet group runs with LWS_LEADER_ADDRESS resolving in its
worker, and an MPIJob's launcher reads the hostfile at /etc/mpi and
reaches its worker by the name written there."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu]
      flavors: [{name: default, resources: [{name: cpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: lq}
spec: {clusterQueue: cq}
"""

# Each JobSet pod prints what it saw and resolves a peer's name.
JS_SCRIPT = r"""
import os, socket
for k in ("JOB_COMPLETION_INDEX", "JOBSET_NAME", "JOB_INDEX", "RJOB"):
    print("env %s=%s" % (k, os.environ.get(k, "")))
peer = "js-workers-1-1.js"
try:
    print("resolve %s %s" % (peer, socket.gethostbyname(peer)))
except OSError as e:
    print("resolve %s ERR %s" % (peer, e))
"""

JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  replicatedJobs:
    - name: workers
      replicas: 2
      template:
        spec:
          parallelism: 2
          completions: 2
          completionMode: Indexed
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: c
                  image: python
                  command: ["python3", "-c", %s]
                  resources: {requests: {cpu: "1"}}
                  env:
                    - name: JOBSET_NAME
                      valueFrom: {fieldRef: {fieldPath: "metadata.labels['jobset.sigs.k8s.io/jobset-name']"}}
                    - name: JOB_INDEX
                      valueFrom: {fieldRef: {fieldPath: "metadata.annotations['jobset.sigs.k8s.io/job-index']"}}
                    - name: RJOB
                      valueFrom: {fieldRef: {fieldPath: "metadata.labels['jobset.sigs.k8s.io/replicatedjob-name']"}}
"""

# The master accepts WORLD_SIZE - 1 workers; each worker sends its rank.
PT_SCRIPT = r"""
import os, socket, time
keys = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "PET_NNODES",
        "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_NPROC_PER_NODE")
for k in keys:
    print("env %s=%s" % (k, os.environ.get(k, "")), flush=True)
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
world, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
if rank == 0:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(8)
    got = []
    for _ in range(world - 1):
        c, _ = s.accept()
        got.append(int(c.recv(16).decode()))
        c.close()
    print("master got ranks %s" % sorted(got), flush=True)
else:
    for _ in range(600):
        try:
            c = socket.create_connection((addr, port), timeout=2)
            break
        except OSError:
            time.sleep(0.1)
    c.sendall(str(rank).encode())
    c.close()
    print("worker %d connected" % rank, flush=True)
"""

PYTORCHJOB = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pt
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
            - {name: pytorch, image: python, command: ["python3", "-c", %s], resources: {requests: {cpu: "1"}}}
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        spec:
          containers:
            - {name: pytorch, image: python, command: ["python3", "-c", %s], resources: {requests: {cpu: "1"}}}
"""

TJ_SCRIPT = r"""
import os, socket
for k in ("PET_NNODES", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT",
          "PET_NPROC_PER_NODE", "EPOCHS"):
    print("env %s=%s" % (k, os.environ.get(k, "")))
try:
    print("resolve master %s" % socket.gethostbyname(os.environ["PET_MASTER_ADDR"]))
except OSError as e:
    print("resolve master ERR %s" % e)
"""

TRAINJOB = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tj
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    image: python
    command: ["python3", "-c", %s]
    numNodes: 2
    resourcesPerNode: {requests: {cpu: "1"}}
    env: [{name: EPOCHS, value: "3"}]
"""

# LWS pods restart Always: print, then stay up until the LWS goes.
LWS_SCRIPT = r"""
import os, socket, time
for k in ("LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX"):
    print("env %s=%s" % (k, os.environ.get(k, "")), flush=True)
try:
    print("resolve leader %s" % socket.gethostbyname(
        os.environ["LWS_LEADER_ADDRESS"]), flush=True)
except OSError as e:
    print("resolve leader ERR %s" % e, flush=True)
time.sleep(600)
"""

LWS = """
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: lw
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
          - {name: c, image: python, command: ["python3", "-c", %s], resources: {requests: {cpu: "1"}}}
"""

# The launcher reads the hostfile where OMPI_MCA_orte_default_hostfile says
# (as mpirun does; /etc/mpi, or the volume's host path when the runner
# rewrites paths) and reaches every worker by its name there (no sshd in
# the runtime: a TCP hello instead).
MPI_LAUNCHER = r"""
import os, socket, time
hf = os.environ.get("OMPI_MCA_orte_default_hostfile", "")
print("env OMPI_MCA_orte_default_hostfile=%s" % hf, flush=True)
hosts = [l.split()[0] for l in open(hf) if l.strip()]
print("hosts %s" % ",".join(hosts), flush=True)
for h in hosts:
    for _ in range(600):
        try:
            c = socket.create_connection((h, int(os.environ["HELLO_PORT"])), timeout=2)
            break
        except OSError:
            time.sleep(0.1)
    print("hello %s %s" % (h, c.recv(64).decode()), flush=True)
    c.close()
"""

MPI_WORKER = r"""
import os, socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(os.environ["HELLO_PORT"]) + int(os.environ["IDX"])))
s.listen(1)
c, _ = s.accept()
c.sendall(os.environ["K_MPI_JOB_ROLE"].encode())
c.close()
"""

MPIJOB = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  slotsPerWorker: 1
  runPolicy: {cleanPodPolicy: Running}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - name: launcher
              image: python
              command: ["python3", "-c", %s]
              env: [{name: HELLO_PORT, value: "%d"}]
              resources: {requests: {cpu: "1"}}
    Worker:
      replicas: 1
      template:
        spec:
          containers:
            - name: worker
              image: python
              command: ["python3", "-c", %s]
              env:
                - {name: HELLO_PORT, value: "%d"}
                - name: IDX
                  valueFrom: {fieldRef: {fieldPath: "metadata.labels['training.kubeflow.org/replica-index']"}}
              resources: {requests: {cpu: "1"}}
"""

NS = "/api/v1/namespaces/default"


def yq(s):
    """A YAML double-quoted scalar of s."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace(
        "\n", "\\n") + '"'


def poll(what, fn, timeout=120):
    deadline = time.time() + timeout
    v = fn()
    while not v and time.time() < deadline:
        time.sleep(0.1)
        v = fn()
    check(v, what)
    return v


def get(d, path):
    st, obj, _ = d.request("GET", path)
    return obj if st == 200 else None


def cond(obj, t):
    for c in ((obj or {}).get("status") or {}).get("conditions", []):
        if c.get("type") == t:
            return c
    return {}


def workload_of(d, prefix):
    st, lst, _ = d.request(
        "GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads")
    for w in (lst or {}).get("items", []):
        if w["metadata"]["name"].startswith(prefix):
            return w
    return None


def pods(d, prefix):
    st, lst, _ = d.request("GET", NS + "/pods")
    return sorted(p["metadata"]["name"] for p in (lst or {}).get("items", [])
                  if p["metadata"]["name"].startswith(prefix))


def env_of(log):
    out = {}
    for line in log.splitlines():
        if line.startswith("env "):
            k, _, v = line[4:].partition("=")
            out[k] = v
    return out


d = Daemon(time_scale=100).start()
try:
    rc, out, err = d.cli("apply", "-f", "-", stdin=QUEUE)
    check(rc == 0, "apply queue: %s" % err)

    # The JobSet takes all 4 CPUs; the PyTorchJob (3) waits suspended.
    rc, out, err = d.cli("apply", "-f", "-", stdin=JOBSET % yq(JS_SCRIPT))
    check(rc == 0, "apply jobset: %s" % err)
    poll("jobset Workload admitted",
         lambda: cond(workload_of(d, "jobset-js-"), "Admitted").get(
             "status") == "True")
    rc, out, err = d.cli("apply", "-f", "-",
                         stdin=PYTORCHJOB % (yq(PT_SCRIPT), yq(PT_SCRIPT)))
    check(rc == 0, "apply pytorchjob: %s" % err)
    w = poll("pytorchjob Workload", lambda: workload_of(d, "pytorchjob-pt-"))
    check([(p["name"], p["count"]) for p in w["spec"]["podSets"]] ==
          [("master", 1), ("worker", 2)], "podsets: %s" % w["spec"])

    js_path = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/js"
    poll("jobset Completed",
         lambda: cond(get(d, js_path), "Completed").get("status") == "True")
    names = pods(d, "js-workers-")
    check(len(names) == 4, "4 jobset pods: %s" % names)
    mounts = "\n".join(d.log)
    resolves = "mounts: rewrite fallback" not in mounts
    seen = set()
    for n in names:
        rc, log, err = d.cli("logs", n)
        check(rc == 0, "logs %s: %s" % (n, err))
        env = env_of(log)
        job = n.split("-")[2]
        idx = n.split("-")[3]
        check(env.get("JOBSET_NAME") == "js" and env.get("RJOB") == "workers"
              and env.get("JOB_INDEX") == job, "%s labels: %s" % (n, env))
        check(env.get("JOB_COMPLETION_INDEX") == idx,
              "%s JOB_COMPLETION_INDEX: %s" % (n, env))
        seen.add((job, idx))
        if resolves:
            check("resolve js-workers-1-1.js 127.0.0.1" in log,
                  "%s resolves its peer's headless name: %s" % (n, log))
    check(seen == {("0", "0"), ("0", "1"), ("1", "0"), ("1", "1")},
          "every job and completion index: %s" % seen)
    if not resolves:
        print("NOTE: runner in rewrite fallback; name resolution not checked")
    poll("jobset Workload Finished",
         lambda: cond(workload_of(d, "jobset-js-"), "Finished").get(
             "reason") == "Succeeded")

    pt_path = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/pt"
    poll("pytorchjob Succeeded",
         lambda: cond(get(d, pt_path), "Succeeded").get("status") == "True")
    rc, log, err = d.cli("logs", "pt-master-0")
    env = env_of(log)
    check(env.get("MASTER_ADDR") == "pt-master-0" and
          env.get("PET_MASTER_ADDR") == "pt-master-0" and
          env.get("WORLD_SIZE") == "3" and env.get("RANK") == "0" and
          env.get("PET_NNODES") == "3" and
          env.get("PET_NPROC_PER_NODE") == "auto" and
          env.get("MASTER_PORT", "").isdigit(), "master env: %s" % env)
    check("master got ranks [1, 2]" in log, "rendezvous: %s" % log)
    for i in (0, 1):
        rc, log, err = d.cli("logs", "pt-worker-%d" % i)
        env = env_of(log)
        check(env.get("RANK") == str(i + 1) and
              env.get("PET_NODE_RANK") == str(i + 1) and
              env.get("WORLD_SIZE") == "3", "worker %d env: %s" % (i, env))
        check("worker %d connected" % (i + 1) in log,
              "worker %d connected: %s" % (i, log))
    poll("pytorchjob Workload Finished",
         lambda: cond(workload_of(d, "pytorchjob-pt-"), "Finished").get(
             "reason") == "Succeeded")
    rc, out, err = d.cli("get", "pytorchjobs")
    check(rc == 0 and "Succeeded" in out, "get pytorchjobs: %r" % out)
    rc, out, err = d.cli("get", "jobsets")
    check(rc == 0 and "Completed" in out, "get jobsets: %r" % out)

    # TrainJob: the torch runtime's env, the rank from the index.
    rc, out, err = d.cli("apply", "-f", "-", stdin=TRAINJOB % yq(TJ_SCRIPT))
    check(rc == 0, "apply trainjob: %s" % err)
    tj_path = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/" \
        "trainjobs/tj"
    poll("trainjob Complete",
         lambda: cond(get(d, tj_path), "Complete").get("status") == "True")
    names = pods(d, "tj-node-0-")
    check(len(names) == 2, "2 trainjob pods: %s" % names)
    ranks = set()
    for n in names:
        rc, log, err = d.cli("logs", n)
        env = env_of(log)
        check(env.get("PET_NNODES") == "2" and
              env.get("PET_MASTER_ADDR") == "tj-node-0-0.tj" and
              env.get("PET_MASTER_PORT") == "29500" and
              env.get("PET_NPROC_PER_NODE") == "auto" and
              env.get("EPOCHS") == "3", "%s env: %s" % (n, env))
        check(env.get("PET_NODE_RANK") == n.split("-")[3],
              "%s PET_NODE_RANK: %s" % (n, env))
        ranks.add(env.get("PET_NODE_RANK"))
        if resolves:
            check("resolve master 127.0.0.1" in log,
                  "%s resolves the master: %s" % (n, log))
    check(ranks == {"0", "1"}, "ranks: %s" % ranks)
    rc, out, err = d.cli("get", "trainjobs")
    check(rc == 0 and out.splitlines()[1].split()[:2] == ["tj", "Complete"],
          "get trainjobs: %r" % out)
    poll("trainjob Workload Finished",
         lambda: cond(workload_of(d, "trainjob-tj-"), "Finished").get(
             "reason") == "Succeeded")

    # LeaderWorkerSet: the group is admitted and runs; the worker resolves
    # its leader's address.
    rc, out, err = d.cli("apply", "-f", "-", stdin=LWS % yq(LWS_SCRIPT))
    check(rc == 0, "apply lws: %s" % err)
    poll("lws group Workload admitted",
         lambda: cond(workload_of(d, "leaderworkerset-lw-0-"),
                      "Admitted").get("status") == "True")

    def worker_log():
        rc, log, err = d.cli("logs", "lw-0-1")
        return log if rc == 0 and "resolve leader" in log else None
    log = poll("lws worker printed", worker_log)
    env = env_of(log)
    check(env.get("LWS_LEADER_ADDRESS") == "lw-0.lw.default" and
          env.get("LWS_GROUP_SIZE") == "2" and
          env.get("LWS_WORKER_INDEX") == "1", "lws worker env: %s" % env)
    if resolves:
        check("resolve leader 127.0.0.1" in log,
              "worker resolves its leader: %s" % log)
    # MPIJob: the launcher finds the hostfile at /etc/mpi, names the
    # worker by its Service name, and reaches it.
    import socket as _s
    probe = _s.socket()
    probe.bind(("127.0.0.1", 0))
    hello = probe.getsockname()[1]
    probe.close()
    rc, out, err = d.cli("apply", "-f", "-", stdin=MPIJOB % (
        yq(MPI_LAUNCHER), hello, yq(MPI_WORKER), hello))
    check(rc == 0, "apply mpijob: %s" % err)
    mpi_path = "/apis/kubeflow.org/v2beta1/namespaces/default/mpijobs/pi"
    poll("mpijob Succeeded",
         lambda: cond(get(d, mpi_path), "Succeeded").get("status") == "True")
    names = pods(d, "pi-launcher-")
    check(len(names) == 1, "one launcher pod: %s" % names)
    rc, log, err = d.cli("logs", names[0])
    hf = env_of(log).get("OMPI_MCA_orte_default_hostfile", "")
    check(hf == "/etc/mpi/hostfile" or
          (hf.endswith("/mpi-job-config/hostfile") and
           "FLEXQ_VOLUME_REWRITE" in log),
          "launcher's hostfile at /etc/mpi (or rewritten): %s" % log)
    check("hosts pi-worker-0.pi.default.svc" in log,
          "the hostfile names the worker: %s" % log)
    if resolves:
        check("hello pi-worker-0.pi.default.svc worker" in log,
              "launcher reached the worker by name: %s" % log)
    poll("mpijob Workload Finished",
         lambda: cond(workload_of(d, "mpijob-pi-"), "Finished").get(
             "reason") == "Succeeded")

    rc, out, err = d.cli("delete", "leaderworkerset", "lw")
    check(rc == 0, "delete lws: %s" % err)
    poll("lws Workload gone",
         lambda: workload_of(d, "leaderworkerset-lw-") is None)
finally:
    d.stop()
    d.cleanup()
finish()
